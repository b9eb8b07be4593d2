/*
 * test_queue.c - poll bands and jitter, poll timing by the ETA (with a
 * simulation of the poll-count argument), ETA, the integer admission budget
 * and the observed-rate window. Every expectation is computed by hand in the
 * comment beside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/queue.h"
#include "unit_main.h"

static wr_queue_config_t cfg_rate(double rate)
{
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    c.admit_per_second = rate;
    c.fail_open_per_second = rate;
    return c;
}

/* One expected admission: wr_queue_expected_admission_ms(c, pos, observed,
 * next_tick, head_due, own_due) is ms. A table of them is checked by
 * EXPECT_ADMISSIONS(&c, table), a failure naming the table and row. */
typedef struct {
    uint64_t pos;
    double observed;
    int64_t next_tick, head_due, own_due, ms;
} admission_t;

static void expect_admissions(const wr_queue_config_t *c, const char *table,
                              const admission_t *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const admission_t *r = &rows[i];
        int64_t got = wr_queue_expected_admission_ms(c, r->pos, r->observed, r->next_tick,
                                                     r->head_due, r->own_due);
        if (got != r->ms)
            fail_msg("%s[%zu]: position %llu, observed %g, next tick %lld, due %lld / %lld: "
                     "%lld ms, expected %lld",
                     table, i, (unsigned long long)r->pos, r->observed, (long long)r->next_tick,
                     (long long)r->head_due, (long long)r->own_due, (long long)got,
                     (long long)r->ms);
    }
}
#define EXPECT_ADMISSIONS(c, rows)                                                                 \
    expect_admissions((c), #rows, (rows), sizeof(rows) / sizeof((rows)[0]))

static void test_poll_bands(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(175);
    /* defaults: <=100 -> 1000, <=1000 -> 3000, else 5000 */
    assert_int_equal(wr_queue_poll_base_ms(&c, 1), 1000);
    assert_int_equal(wr_queue_poll_base_ms(&c, 100), 1000);
    assert_int_equal(wr_queue_poll_base_ms(&c, 101), 3000);
    assert_int_equal(wr_queue_poll_base_ms(&c, 1000), 3000);
    assert_int_equal(wr_queue_poll_base_ms(&c, 1001), 5000);
    assert_int_equal(wr_queue_poll_base_ms(&c, UINT64_MAX), 5000);

    /* the last band has an upTo: positions past it still use it */
    c.n_poll_bands = 2;
    c.poll_bands[0] = (wr_poll_band_t){.up_to = 10, .ms = 300};
    c.poll_bands[1] = (wr_poll_band_t){.up_to = 20, .ms = 700};
    assert_int_equal(wr_queue_poll_base_ms(&c, 10), 300);
    assert_int_equal(wr_queue_poll_base_ms(&c, 11), 700);
    assert_int_equal(wr_queue_poll_base_ms(&c, 20), 700);
    assert_int_equal(wr_queue_poll_base_ms(&c, 21), 700);
    assert_int_equal(wr_queue_poll_base_ms(&c, 1000000), 700);

    /* a hand-built config below the floor is clamped to 250 */
    c.n_poll_bands = 1;
    c.poll_bands[0] = (wr_poll_band_t){.up_to = 0, .ms = 100};
    assert_int_equal(wr_queue_poll_base_ms(&c, 5), 250);
}

/* The slowest band: the last one, whatever its upTo, the one a position
 * past every bound gets; the default config's without a config. */
static void test_slowest_band(void **state)
{
    (void)state;
    assert_int_equal(wr_queue_slowest_band_ms(NULL), 5000);
    wr_queue_config_t c = cfg_rate(175);
    assert_int_equal(wr_queue_slowest_band_ms(&c), 5000);
    c.n_poll_bands = 2;
    c.poll_bands[0] = (wr_poll_band_t){.up_to = 10, .ms = 9000};
    c.poll_bands[1] = (wr_poll_band_t){.up_to = 20, .ms = 700};
    /* the last band, not the longest */
    assert_int_equal(wr_queue_slowest_band_ms(&c), 700);
    assert_int_equal(wr_queue_slowest_band_ms(&c), wr_queue_poll_base_ms(&c, UINT64_MAX));
    c.n_poll_bands = 3;
    c.poll_bands[2] = (wr_poll_band_t){.up_to = 0, .ms = 12000};
    assert_int_equal(wr_queue_slowest_band_ms(&c), 12000);
    assert_int_equal(wr_queue_poll_base_ms(&c, 21), 12000);
    /* below the floor: clamped, as every band */
    c.poll_bands[2].ms = 100;
    assert_int_equal(wr_queue_slowest_band_ms(&c), 250);
    /* no bands (a hand-built config): the default config's */
    c.n_poll_bands = 0;
    assert_int_equal(wr_queue_slowest_band_ms(&c), 5000);
    assert_int_equal(wr_queue_poll_base_ms(&c, 1), 5000);
}

static void test_retry_after_jitter(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(175); /* jitter 0.1 */
    /* position 50 -> base 1000; 1000 * (1 + (2u-1) * 0.1) */
    assert_int_equal(wr_queue_retry_after_ms(&c, 50, 0.0), 900);
    assert_int_equal(wr_queue_retry_after_ms(&c, 50, 0.25), 950);
    assert_int_equal(wr_queue_retry_after_ms(&c, 50, 0.5), 1000);
    /* u -> 1: 1000 * (1 + 0.999998 * 0.1) = 1099.9998 -> 1100 */
    assert_int_equal(wr_queue_retry_after_ms(&c, 50, 0.999999), 1100);
    /* position 101 -> base 3000: 2700 .. 3300 */
    assert_int_equal(wr_queue_retry_after_ms(&c, 101, 0.0), 2700);
    assert_int_equal(wr_queue_retry_after_ms(&c, 101, 0.999999), 3300);
    /* position 1001 -> 5000: 4500 .. 5500 */
    assert_int_equal(wr_queue_retry_after_ms(&c, 1001, 0.0), 4500);
    assert_int_equal(wr_queue_retry_after_ms(&c, 1001, 0.999999), 5500);

    /* every u in [0,1) stays within base*(1 -+ j) */
    for (int i = 0; i < 1000; i++) {
        uint32_t ms = wr_queue_retry_after_ms(&c, 1001, i / 1000.0);
        assert_in_range(ms, 4500, 5500);
    }

    /* no jitter: exactly the base */
    c.poll_jitter = 0;
    assert_int_equal(wr_queue_retry_after_ms(&c, 1, 0.0), 1000);
    assert_int_equal(wr_queue_retry_after_ms(&c, 1, 0.9), 1000);

    /* base 250, jitter 0.5: 125 .. 375, but never below 250 */
    c.n_poll_bands = 1;
    c.poll_bands[0] = (wr_poll_band_t){.up_to = 0, .ms = 250};
    c.poll_jitter = 0.5;
    assert_int_equal(wr_queue_retry_after_ms(&c, 1, 0.0), 250);
    assert_int_equal(wr_queue_retry_after_ms(&c, 1, 0.5), 250);
    assert_int_equal(wr_queue_retry_after_ms(&c, 1, 0.75), 313); /* 312.5 rounds up */
    assert_int_equal(wr_queue_retry_after_ms(&c, 1, 0.999999), 375);
    for (int i = 0; i < 1000; i++)
        assert_true(wr_queue_retry_after_ms(&c, 1, i / 1000.0) >= 250);
}

static void test_eta(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(175);
    assert_int_equal(wr_queue_eta_seconds(&c, 175, -1), 1);
    assert_int_equal(wr_queue_eta_seconds(&c, 176, -1), 2);
    assert_int_equal(wr_queue_eta_seconds(&c, 1, -1), 1);
    assert_int_equal(wr_queue_eta_seconds(&c, 350, -1), 2);
    assert_int_equal(wr_queue_eta_seconds(&c, 351, -1), 3);
    assert_int_equal(wr_queue_eta_seconds(&c, 0, -1), 0);

    /* decimal rates: 21 at 0.7/s is 30 s; in binary 21 / 0.7 computes
     * 30.000000000000004, which must not make it 31 */
    c = cfg_rate(0.7);
    assert_int_equal(wr_queue_eta_seconds(&c, 21, -1), 30);
    assert_int_equal(wr_queue_eta_seconds(&c, 175, -1), 250); /* 250.00000000000003 */
    assert_int_equal(wr_queue_eta_seconds(&c, 22, -1), 32);   /* 31.43 -> 32 */
    c = cfg_rate(0.3);
    assert_int_equal(wr_queue_eta_seconds(&c, 3, -1), 10);
    assert_int_equal(wr_queue_eta_seconds(&c, 4, -1), 14); /* 13.33 -> 14 */
    c = cfg_rate(33.3);
    assert_int_equal(wr_queue_eta_seconds(&c, 333, -1), 10);
    assert_int_equal(wr_queue_eta_seconds(&c, 334, -1), 11);

    /* observed rate is ignored without maxActive */
    c = cfg_rate(175);
    assert_int_equal(wr_queue_eta_seconds(&c, 350, 10), 2);
    /* ... but with autotune it is the rate autotune set, lower or higher
     * (issue 25: the ETA follows the shop's pace); unknown: configured */
    c.has_autotune = true;
    assert_int_equal(wr_queue_eta_seconds(&c, 350, 10), 35);
    assert_int_equal(wr_queue_eta_seconds(&c, 350, 350), 1);
    assert_int_equal(wr_queue_eta_seconds(&c, 350, -1), 2);
    assert_int_equal(wr_queue_expected_admission_ms(&c, 20, 10, 40, 0, 0), 1940);
    c.has_autotune = false;
    /* with maxActive: a lower observed rate is used, a higher one is not */
    c.max_active = 50;
    assert_int_equal(wr_queue_eta_seconds(&c, 350, 10), 35);
    assert_int_equal(wr_queue_eta_seconds(&c, 351, 10), 36);
    assert_int_equal(wr_queue_eta_seconds(&c, 350, 500), 2);
    assert_int_equal(wr_queue_eta_seconds(&c, 350, 175), 2);
    assert_int_equal(wr_queue_eta_seconds(&c, 350, -1), 2); /* unknown: configured */
    /* observed 0 while maxActive holds everything: unknown */
    assert_int_equal(wr_queue_eta_seconds(&c, 350, 0), -1);

    /* paused or no rate: null */
    c = cfg_rate(175);
    c.paused = true;
    assert_int_equal(wr_queue_eta_seconds(&c, 1, -1), -1);
    c = cfg_rate(0);
    assert_int_equal(wr_queue_eta_seconds(&c, 1, -1), -1);

    /* enormous waits stay finite and positive */
    c = cfg_rate(0.001);
    assert_true(wr_queue_eta_seconds(&c, UINT64_MAX, -1) > 0);
}

static void test_budget_exact_175(void **state)
{
    (void)state;
    wr_budget_t b = {.last_tick = -1, .carry_micro = 0};
    enum { N = 10000 };
    static uint64_t got[N];
    uint64_t sum = 0;
    for (int64_t t = 0; t < N; t++) {
        got[t] = wr_budget_advance(&b, 1000 + t, 175, 100, true);
        wr_budget_settle(&b, got[t], got[t]); /* all used: the carry is kept */
        assert_true(got[t] == 17 || got[t] == 18);
        assert_in_range(b.carry_micro, 0, 999999);
        sum += got[t];
    }
    /* 17.5 per tick: first tick 17 (carry .5), then 18, 17, 18, ... */
    assert_int_equal(got[0], 17);
    assert_int_equal(got[1], 18);
    assert_int_equal(sum, 175000);
    for (int s = 0; s + 10 <= N; s++) {
        uint64_t w = 0;
        for (int k = 0; k < 10; k++)
            w += got[s + k];
        assert_int_equal(w, 175);
    }
}

static void test_budget_fractional_long_run(void **state)
{
    (void)state;
    /* 33.3/s at 100 ms = 3.33 per tick; after n ticks floor(3.33 n) */
    wr_budget_t b = {.last_tick = -1, .carry_micro = 0};
    uint64_t sum = 0;
    for (int64_t t = 1; t <= 100000; t++) {
        sum += wr_budget_advance(&b, t, 33.3, 100, true);
        double exact = 3.33 * (double)t;
        assert_true(fabs((double)sum - exact) < 1.0);
    }
    assert_int_equal(sum, 333000);

    /* 0.5/s at 1000 ms ticks: 0, 1, 0, 1 */
    b = (wr_budget_t){.last_tick = -1, .carry_micro = 0};
    assert_int_equal(wr_budget_advance(&b, 7, 0.5, 1000, true), 0);
    assert_int_equal(b.carry_micro, 500000);
    assert_int_equal(wr_budget_advance(&b, 8, 0.5, 1000, true), 1);
    assert_int_equal(b.carry_micro, 0);
    assert_int_equal(wr_budget_advance(&b, 9, 0.5, 1000, true), 0);
    assert_int_equal(wr_budget_advance(&b, 10, 0.5, 1000, true), 1);
}

static void test_budget_pause_and_catchup(void **state)
{
    (void)state;
    wr_budget_t b = {.last_tick = -1, .carry_micro = 0};
    assert_int_equal(wr_budget_advance(&b, 100, 175, 100, true), 17); /* carry .5 */
    assert_int_equal(b.carry_micro, 500000);

    /* paused for 50 ticks: nothing accrues, the carry is dropped */
    for (int64_t t = 101; t <= 150; t++) {
        assert_int_equal(wr_budget_advance(&b, t, 175, 100, false), 0);
        assert_int_equal(b.last_tick, t);
        assert_int_equal(b.carry_micro, 0);
    }
    /* unpause: one tick's worth, no burst: 17.5 -> 17 */
    assert_int_equal(wr_budget_advance(&b, 151, 175, 100, true), 17);
    assert_int_equal(b.carry_micro, 500000);

    /* gaps in the ticks, one after the other: each gives one tick's worth,
     * never a catch-up */
    static const struct {
        int64_t tick;
        uint64_t admitted;
        int64_t carry_micro;
    } gaps[] = {
        {160, 18, 0},      /* 9 ticks (an outage): .5 + 17.5 = 18 */
        {162, 17, 500000}, /* K24: 2 ticks (a late timer under load), never 35: 17.5 -> 17 */
        {165, 18, 0},      /* 3 ticks: .5 + 17.5 = 18, never 52 */
        {169, 17, 500000}, /* 4 ticks: 17.5 -> 17 */
        {269, 18, 0},      /* a 10 s Redis outage = 100 ticks: .5 + 17.5 */
    };
    for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++) {
        assert_int_equal(wr_budget_advance(&b, gaps[i].tick, 175, 100, true), gaps[i].admitted);
        assert_int_equal(b.carry_micro, gaps[i].carry_micro);
    }
    assert_int_equal(wr_budget_advance(&b, 1000000, 175, 100, true), 17);
}

/* API 1.2: a clock that steps backwards never stops admission. A tick
 * below last_tick (an hour back, the clock of Redis's host or a snapshot
 * written under a later clock) runs as a new tick, once, and the ticks
 * after it go on at the configured rate: never a stall until the clock
 * passes the old last tick. */
static void test_budget_clock_steps_back(void **state)
{
    (void)state;
    wr_budget_t b = {.last_tick = -1, .carry_micro = 0};
    int64_t t0 = 17000000; /* a tick index of an epoch-ms clock at 100 ms ticks */
    assert_int_equal(wr_budget_advance(&b, t0, 175, 100, true), 17);
    assert_int_equal(wr_budget_advance(&b, t0 + 1, 175, 100, true), 18);
    int64_t back = t0 + 1 - 36000; /* one hour back */
    uint64_t sum = 0;
    for (int64_t t = back; t < back + 10; t++) {
        uint64_t n = wr_budget_advance(&b, t, 175, 100, true);
        assert_true(n == 17 || n == 18);
        assert_int_equal(b.last_tick, t);
        /* another instance in the same tick: nothing */
        assert_int_equal(wr_budget_advance(&b, t, 175, 100, true), 0);
        sum += n;
    }
    assert_int_equal(sum, 175); /* the configured rate, no burst, no stall */
    /* a small step back (a failover to a host a tick behind) too */
    assert_int_equal(b.last_tick, back + 9);
    assert_true(wr_budget_advance(&b, back + 8, 175, 100, true) >= 17);
    assert_int_equal(b.last_tick, back + 8);
}

static void test_budget_idempotent_and_settle(void **state)
{
    (void)state;
    wr_budget_t b = {.last_tick = -1, .carry_micro = 0};
    assert_int_equal(wr_budget_advance(&b, 5, 175, 100, true), 17);
    wr_budget_t saved = b;
    /* the same tick again (another instance): nothing (an older tick is a
     * clock step back: test_budget_clock_steps_back) */
    assert_int_equal(wr_budget_advance(&b, 5, 175, 100, true), 0);
    assert_int_equal(wr_budget_advance(&b, 5, 175, 100, false), 0);
    assert_memory_equal(&b, &saved, sizeof(b));

    /* settle: all used keeps the carry, fewer drops it */
    assert_int_equal(wr_budget_advance(&b, 6, 175, 100, true), 18);
    assert_int_equal(b.carry_micro, 0);
    assert_int_equal(wr_budget_advance(&b, 7, 175, 100, true), 17);
    wr_budget_settle(&b, 17, 17);
    assert_int_equal(b.carry_micro, 500000);
    wr_budget_settle(&b, 17, 3);
    assert_int_equal(b.carry_micro, 0);
    assert_int_equal(wr_budget_advance(&b, 8, 175, 100, true), 17);

    /* an empty budget is not a shortfall: 0.5/s gives 0 with carry kept */
    b = (wr_budget_t){.last_tick = -1, .carry_micro = 0};
    assert_int_equal(wr_budget_advance(&b, 1, 0.5, 1000, true), 0);
    wr_budget_settle(&b, 0, 0);
    assert_int_equal(b.carry_micro, 500000);

    /* the largest rate and tick: 1e6/s at 10 s ticks = 1e7 per tick, and
     * never more, after a gap of 3 ticks or of 100 */
    b = (wr_budget_t){.last_tick = 0, .carry_micro = 0};
    assert_int_equal(wr_budget_advance(&b, 3, 1e6, 10000, true), 10000000);
    assert_int_equal(wr_budget_advance(&b, 103, 1e6, 10000, true), 10000000);
}

/* retryAfterMs never outlasts idleTimeoutSeconds: capped at T/2, floor
 * 250 ms, unchanged when T is 0. */
static void test_retry_cap_idle(void **state)
{
    (void)state;
    wr_queue_config_t cfg = {0};
    cfg.idle_timeout_seconds = 0;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 212286, 0.5), 212286);
    cfg.idle_timeout_seconds = 120;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 212286, 0.0), 60000);
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 5000, 0.9), 5000);
    cfg.idle_timeout_seconds = 2;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 3248, 0.0), 1000);
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 700, 0.9), 700);
    cfg.idle_timeout_seconds = 1;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 5000, 0.0), 500);
    assert_int_equal(wr_queue_retry_cap_idle_ms(NULL, 5000, 0.5), 5000);
    /* a capped answer keeps the jitter, below the cap: pollJitter 0.1 */
    cfg.poll_jitter = 0.1;
    cfg.idle_timeout_seconds = 2;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 3248, 0.5), 950);
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 3248, 0.999), 900);
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 1000, 0.999), 1000); /* not capped */
    /* the pass cap (K36): tokenTtlSeconds + awayHoldSeconds when shorter,
     * so whoever comes back as told finds their pass or is held */
    wr_queue_config_t pc = {0};
    pc.idle_timeout_seconds = 120;
    pc.token_ttl_seconds = 30;
    pc.away_hold_seconds = 1800;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&pc, 60000, 0.0), 60000); /* T/2 shorter */
    pc.away_hold_seconds = 10;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&pc, 60000, 0.0), 40000);
    pc.away_hold_seconds = 0;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&pc, 60000, 0.0), 30000);
    pc.idle_timeout_seconds = 0; /* no idle cap: the pass cap alone */
    assert_int_equal(wr_queue_retry_cap_idle_ms(&pc, 600000, 0.0), 30000);
    assert_int_equal(wr_queue_retry_cap_idle_ms(&pc, 20000, 0.0), 20000);
    cfg.idle_timeout_seconds = 120;
    for (int i = 0; i < 100; i++) {
        uint32_t ms = wr_queue_retry_cap_idle_ms(&cfg, 212286, i / 100.0);
        assert_true(ms <= 60000 && ms >= 54000);
    }
    /* never below the floor */
    cfg.poll_jitter = 0.5;
    cfg.idle_timeout_seconds = 0; /* off */
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 100, 0.9), 100);
    cfg.idle_timeout_seconds = 1;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&cfg, 5000, 0.999), WR_POLL_MIN_MS);
}

/* The scheduler's samples: an empty line restarts the window, so the rate
 * of a crowd is not diluted by the idle minute before it. */
static void test_rate_window_tick_idle(void **state)
{
    (void)state;
    wr_rate_window_t w;
    wr_rate_window_init(&w, 60000);
    /* 30 s of an empty queue, one sample a tick (100 ms) */
    for (int64_t t = 0; t <= 30000; t += 100)
        wr_rate_window_add_tick(&w, t, 500, 0);
    /* a crowd: 90 admitted a second for 2 s, people waiting throughout */
    for (int64_t t = 30100, n = 509; t <= 32000; t += 100, n += 9)
        wr_rate_window_add_tick(&w, t, (uint64_t)n, 1500);
    /* 2 s at 90/s; wr_rate_window_add (no restart) would give (680 - 500) / 60 s = 3/s */
    double r = wr_rate_window_rate(&w);
    assert_true(r > 89.9 && r < 90.1);

    wr_rate_window_t old;
    wr_rate_window_init(&old, 60000);
    for (int64_t t = 0; t <= 30000; t += 100)
        wr_rate_window_add(&old, t, 500);
    for (int64_t t = 30100, n = 509; t <= 32000; t += 100, n += 9)
        wr_rate_window_add(&old, t, (uint64_t)n);
    assert_true(wr_rate_window_rate(&old) < 10);

    /* the line empties: the next crowd starts afresh, at its first tick
     * (unknown for its first second) */
    wr_rate_window_add_tick(&w, 32100, 689, 0);
    assert_true(wr_rate_window_rate(&w) == -1);
    wr_rate_window_add_tick(&w, 32600, 730, 100);
    assert_true(wr_rate_window_rate(&w) == -1);
    wr_rate_window_add_tick(&w, 33100, 760, 100);
    assert_true(wr_rate_window_rate(&w) == -1); /* 0.5 s */
    wr_rate_window_add_tick(&w, 33600, 790, 100);
    assert_true(wr_rate_window_rate(&w) == 60.0); /* (790 - 730) / 1 s */

    /* a quiet queue is not ticked: the last tick found it empty, the next
     * comes 30 s later with a crowd; the gap is not averaged in */
    wr_rate_window_add_tick(&w, 34000, 800, 0);
    wr_rate_window_add_tick(&w, 64000, 800, 2000);
    wr_rate_window_add_tick(&w, 65000, 890, 1910);
    assert_true(wr_rate_window_rate(&w) == 90.0);
}

static void test_rate_window(void **state)
{
    (void)state;
    wr_rate_window_t w;
    wr_rate_window_init(&w, 60000);
    assert_true(wr_rate_window_rate(&w) == -1);
    wr_rate_window_add(&w, 10000, 100);
    assert_true(wr_rate_window_rate(&w) == -1);
    wr_rate_window_add(&w, 10500, 105); /* spans only 0.5 s */
    assert_true(wr_rate_window_rate(&w) == -1);
    /* spacing is 60000 / 64 = 937 ms; the newest (10500) is 500 ms after
     * its predecessor, so (11000,110) replaces it */
    wr_rate_window_add(&w, 11000, 110);
    assert_int_equal(w.count, 2);
    assert_true(wr_rate_window_rate(&w) == 10.0); /* (110-100) / 1 s */

    /* coalescing: within 937 ms of the predecessor the newest is replaced */
    wr_rate_window_init(&w, 60000);
    wr_rate_window_add(&w, 0, 0);
    wr_rate_window_add(&w, 1000, 10);
    wr_rate_window_add(&w, 1100, 12); /* newest 1000 - 0 >= 937: appended */
    assert_int_equal(w.count, 3);
    wr_rate_window_add(&w, 1200, 13); /* newest 1100 - 1000 < 937: replaced */
    assert_int_equal(w.count, 3);
    wr_rate_window_add(&w, 1936, 20); /* 1200 - 1000 < 937: replaced */
    assert_int_equal(w.count, 3);
    assert_true(wr_rate_window_rate(&w) == 20.0 * 1000.0 / 1936.0);
    wr_rate_window_add(&w, 1937, 21); /* 1936 - 1000 = 936 < 937: replaced */
    assert_int_equal(w.count, 3);
    /* 1937 - 1000 = 937: the next one is appended (count 4); then the
     * newest is replaced until it reaches 1937 + 937 = 2874, the sample at
     * 2875 is appended (count 5) and the rest replace it, up to 2937.
     * Many frequent samples never push history out. */
    for (int i = 1; i <= 1000; i++) {
        wr_rate_window_add(&w, 1937 + i, 21 + (uint64_t)i);
        if (i == 1)
            assert_int_equal(w.count, 4);
        if (i == 937)
            assert_int_equal(w.count, 4);
        if (i == 938)
            assert_int_equal(w.count, 5);
    }
    assert_int_equal(w.count, 5);
    assert_true(wr_rate_window_rate(&w) == 1021.0 * 1000.0 / 2937.0);

    /* the window: 60 s at 10/s, then 61 s at 2/s; the last 60 s say 2/s */
    wr_rate_window_init(&w, 60000);
    for (int64_t s = 0; s <= 121; s++) {
        uint64_t total = s <= 60 ? (uint64_t)(10 * s) : (uint64_t)(600 + 2 * (s - 60));
        wr_rate_window_add(&w, s * 1000, total);
    }
    assert_int_equal(w.count, WR_RATE_SAMPLES); /* wrapped */
    assert_true(wr_rate_window_rate(&w) == 2.0);
    /* mid-way: at 90 s the window [30, 90] holds 300 + 60 = 360 over 60 s */
    wr_rate_window_init(&w, 60000);
    for (int64_t s = 0; s <= 90; s++) {
        uint64_t total = s <= 60 ? (uint64_t)(10 * s) : (uint64_t)(600 + 2 * (s - 60));
        wr_rate_window_add(&w, s * 1000, total);
    }
    assert_true(wr_rate_window_rate(&w) == 6.0);

    /* a counter that goes back (queue re-created) restarts the history */
    wr_rate_window_add(&w, 91000, 5);
    assert_int_equal(w.count, 1);
    assert_true(wr_rate_window_rate(&w) == -1);
    /* a sample from the past is ignored */
    wr_rate_window_add(&w, 80000, 50);
    assert_int_equal(w.count, 1);
    wr_rate_window_add(&w, 93000, 9);
    assert_true(wr_rate_window_rate(&w) == 2.0);

    /* nothing admitted: rate 0, not unknown */
    wr_rate_window_init(&w, 0); /* 0 means the default 60 s */
    assert_int_equal(w.window_ms, 60000);
    wr_rate_window_add(&w, 0, 7);
    wr_rate_window_add(&w, 5000, 7);
    assert_true(wr_rate_window_rate(&w) == 0.0);
}

/* The admission delay: nobody is due sooner than 250 ms after joining; a
 * score beyond the 1 s slack ahead of now (a clock step) is due at once. */
static void test_admission_delay(void **state)
{
    (void)state;
    const int64_t t = 1750000000000000LL;
    assert_int_equal(wr_queue_admit_due_us(t, t), 250000);
    assert_int_equal(wr_queue_admit_due_us(t - 100000, t), 150000);
    assert_int_equal(wr_queue_admit_due_us(t - 249999, t), 1);
    assert_int_equal(wr_queue_admit_due_us(t - 250000, t), 0);
    assert_int_equal(wr_queue_admit_due_us(t - 3600000000LL, t), 0);
    assert_int_equal(wr_queue_admit_due_us(t + 1000000, t), 1250000); /* within the slack */
    assert_int_equal(wr_queue_admit_due_us(t + 1000001, t), 0);       /* a clock step */

    /* Expected admission with it, 175/s (17.5 per tick), next tick in 40 ms:
     * ticks at 40, 140, 240, 340, ...; due at 250 -> the tick at 340. */
    wr_queue_config_t c = cfg_rate(175);
    static const admission_t delayed[] = {
        /* pos, observed, next tick, head due, own due: ms */
        {1, -1, 40, 250, 250, 340},
        {17, -1, 40, 250, 250, 340},
        {18, -1, 40, 250, 250, 440},
        {175, -1, 40, 250, 250, 1240},
        /* the head is due already: the rate decides, not before the user's own */
        {1, -1, 40, 0, 250, 340},
        {175, -1, 40, 0, 250, 940},
        /* a head due exactly at the next tick: no tick lost; 1 ms after: one */
        {18, -1, 40, 40, 40, 140},
        {18, -1, 40, 41, 41, 240},
        /* next tick unknown: a full tick (100), then 200, 300 */
        {1, -1, -1, 250, 250, 300},
        /* a due beyond the longest band: the band decides */
        {1, -1, 40, 600001, 0, -1},
    };
    EXPECT_ADMISSIONS(&c, delayed);

    /* retryAfterMs for a join into an empty line: just after the tick at
     * 340 (+5 + u * 45), not the floor's spread (which would come back
     * within 250..1000 ms, on top of those due then) */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 250, 250, 0.0), 345);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 250, 250, 0.999), 390);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 18, -1, 40, 250, 250, 0.0), 445);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100, -1, 40, 250, 250, 0.0), 845);
    /* E + half beyond the band (1000 ms up to 100): the ETA while E + s is
     * within the band's longest answer (1100 ms at jitter 0.1), else the
     * band (E 1040 and 1140) */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100, -1, 40, 450, 450, 0.5), 1068);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100, -1, 40, 550, 550, 0.5), 1000);
    c.max_active = 40; /* the same with maxActive */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 250, 250, 0.0), 345);
}

/* Away people ahead take no slot (1.2: their turn makes them held): the
 * retry is planned on the position less an estimate of them that errs low
 * (the mean less two standard deviations). */
/* The people ahead, counted (queue.h wr_queue_passed_over): a pending page
 * join always; without a timeout nobody else; the idle (with the store's
 * staleness added); the overdue only when they are idle by the time
 * admission reaches them. */
static void test_passed_over_rule(void **state)
{
    (void)state;
    const int64_t s = 1000000; /* 1 s in us */
    /* pending page joins: passed over, timeout or not */
    assert_true(wr_queue_passed_over(0, 0, 0, 0, true));
    assert_true(wr_queue_passed_over(0, 0, 2 * s, 0, true));
    /* no timeout: nobody is ever idle */
    assert_false(wr_queue_passed_over(100 * s, 100 * s, 0, 0, false));
    /* idle now (2 s, exact store): at any reach */
    assert_true(wr_queue_passed_over(2 * s, 0, 2 * s, 0, false));
    assert_false(wr_queue_passed_over(2 * s - 1, 0, 2 * s, 0, false));
    /* overdue from idle / 2 + 250 ms = 1.25 s; counted when silent +
     * reach reaches the timeout */
    assert_false(wr_queue_passed_over(1249999, 10 * s, 2 * s, 0, false)); /* not overdue */
    assert_true(wr_queue_passed_over(1250000, 750000, 2 * s, 0, false));
    assert_false(wr_queue_passed_over(1250000, 749999, 2 * s, 0, false)); /* reached before */
    /* a store whose record may be 500 ms old (Redis's slack at 2 s):
     * idle from 2.5 s, overdue from 1.75 s */
    assert_false(wr_queue_passed_over(2499999, 0, 2 * s, 500000, false));
    assert_true(wr_queue_passed_over(2500000, 0, 2 * s, 500000, false));
    assert_false(wr_queue_passed_over(1749999, 10 * s, 2 * s, 500000, false));
    assert_true(wr_queue_passed_over(1750000, 750000, 2 * s, 500000, false));
    assert_false(wr_queue_passed_over(1750000, 749999, 2 * s, 500000, false));
    /* a negative staleness counts as 0 */
    assert_true(wr_queue_passed_over(2 * s, 0, 2 * s, -5, false));
}

static void test_retry_plan_passes_over_away(void **state)
{
    (void)state;
    assert_int_equal(wr_queue_away_ahead(1001, 0.2), 171); /* 200 - 2 sqrt(200) */
    assert_int_equal(wr_queue_away_ahead(101, 0.2), 11);   /* 20 - 8.94 */
    assert_int_equal(wr_queue_away_ahead(5, 0.2), 0);      /* 0.8: below one */
    assert_int_equal(wr_queue_away_ahead(1, 0.5), 0);      /* nobody ahead */
    assert_int_equal(wr_queue_away_ahead(0, 0.5), 0);
    assert_int_equal(wr_queue_away_ahead(1001, 0), 0);
    assert_int_equal(wr_queue_away_ahead(1001, -0.5), 0);
    assert_int_equal(wr_queue_away_ahead(1001, NAN), 0);
    assert_int_equal(wr_queue_away_ahead(11, 2.0), 3); /* share clamped to 1: 10 - 6.32 */

    /* 175/s, next tick in 40 ms, due: position 100 is the 6th tick (540
     * ms, back at 545); 35 of them passed over leave 65 ahead of it: the
     * 4th (340, back at 345) */
    wr_queue_config_t c = cfg_rate(175);
    assert_int_equal(wr_queue_retry_after_plan_ms(&c, 100, 0, -1, 40, 0, 0, 0.0), 545);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100, -1, 40, 0, 0, 0.0), 545);
    assert_int_equal(wr_queue_retry_after_plan_ms(&c, 100, 35, -1, 40, 0, 0, 0.0), 345);
    /* everyone ahead passed over: position 1, due at the next tick (40),
     * before the floor lets anyone back: the floor */
    assert_int_equal(wr_queue_retry_after_plan_ms(&c, 100, 100, -1, 40, 0, 0, 0.0), 250);
    assert_int_equal(wr_queue_retry_after_plan_ms(&c, 100, 5000, -1, 40, 0, 0, 0.0), 250);
    /* the band still follows the position: 2,000 is beyond the ETA rule
     * (E about 11.4 s > its 3 s band) whatever is passed over short of
     * bringing it within the band */
    assert_int_equal(wr_queue_retry_after_plan_ms(&c, 2000, 400, -1, 40, 0, 0, 0.5),
                     wr_queue_retry_after_eta_ms(&c, 2000, -1, 40, 0, 0, 0.5));
    /* paused (no rate in use): the band, as without */
    c.paused = true;
    assert_int_equal(wr_queue_retry_after_plan_ms(&c, 100, 35, -1, 40, 0, 0, 0.5),
                     wr_queue_retry_after_ms(&c, 100, 0.5));
}

/* An ETA answer beyond the idle cap (half of idleTimeoutSeconds) comes in
 * equal steps within the cap that end just after E, never at the cap just
 * before E (then 250 ms late). */
static void test_retry_after_eta_idle_cap(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(175);
    /* position 175 after a join: E = 1240 (test_retry_after_eta), answer
     * 1245 (band 3000 at 175); idleTimeoutSeconds 120: under the cap */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 175, -1, 40, 250, 250, 0.0), 1245);
    c.idle_timeout_seconds = 2; /* cap 1000: two steps of 623 */
    uint32_t first = wr_queue_retry_after_eta_ms(&c, 175, -1, 40, 250, 250, 0.0);
    assert_int_equal(first, 623);
    assert_int_equal(wr_queue_retry_cap_idle_ms(&c, first, 0.5), 623); /* the cap keeps it */
    /* the second poll 623 ms later: ticks at 340, 440, 540 have admitted
     * 54 of those ahead (17.5 a tick), so position 121, the next tick 17 ms
     * away: E = 17 + 6 x 100 = 617 = 1240 - 623, and the answer ends just
     * after it, within the cap */
    assert_int_equal(wr_queue_expected_admission_ms(&c, 121, -1, 17, 0, 0), 617);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 121, -1, 17, 0, 0, 0.0), 622);
    /* three steps when the answer is beyond twice the cap */
    c.idle_timeout_seconds = 1; /* cap 500 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 175, -1, 40, 250, 250, 0.0), 415);
    /* every answer, as the API caps it, within the cap and never below
     * the floor, at every u (band answers are capped by the caller) */
    for (int p = 1; p <= 1000; p += 37)
        for (int i = 0; i < 10; i++) {
            uint32_t ms = wr_queue_retry_after_eta_ms(&c, (uint64_t)p, -1, 40, 250, 250, i / 10.0);
            ms = wr_queue_retry_cap_idle_ms(&c, ms, i / 10.0);
            assert_true(ms >= WR_POLL_MIN_MS && ms <= 500);
        }
}

/* Expected admission: the latest tick that admits the position, counted
 * from the next tick (ttn ms away), with the store's integer budget. */
static void test_expected_admission(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(175); /* 17.5 per 100 ms tick */
    static const admission_t at175[] = {
        /* pos, observed, next tick, head due, own due: ms */
        /* no carry: tick 1 admits 17, tick 2 18 more (35), ... tick 10 175 */
        {1, -1, 40, 0, 0, 40},
        {17, -1, 40, 0, 0, 40},
        {18, -1, 40, 0, 0, 140},
        {35, -1, 40, 0, 0, 140},
        {36, -1, 40, 0, 0, 240},
        {175, -1, 40, 0, 0, 940},
        {176, -1, 40, 0, 0, 1040},
        /* 1000 / 17.5 = 57.14 -> tick 58; 5000 / 17.5 = 285.7 -> tick 286 */
        {1000, -1, 40, 0, 0, 5740},
        {5000, -1, 40, 0, 0, 28540},
        /* position 0 (not in a real answer) counts as 1 */
        {0, -1, 40, 0, 0, 40},
        /* a tick in flight: 0 ms away; unknown: a full tick (the latest) */
        {175, -1, 0, 0, 0, 900},
        {175, -1, -1, 0, 0, 1000},
        {1, -1, -1, 0, 0, 100},
    };
    EXPECT_ADMISSIONS(&c, at175);

    /* fractional rates, exact where double division is not:
     * 33.3/s = 3.33 per tick: 333 users take exactly 100 ticks
     * (333 / 3.33 computes 100.00000000000001 in binary) */
    c = cfg_rate(33.3);
    static const admission_t at33_3[] = {
        {3, -1, 10, 0, 0, 10},
        {4, -1, 10, 0, 0, 110},
        {333, -1, 10, 0, 0, 10 + 99 * 100},
        {334, -1, 10, 0, 0, 10 + 100 * 100},
    };
    EXPECT_ADMISSIONS(&c, at33_3);
    /* 2.3/s = 0.23 per tick: 1 -> tick 5 (1.15), 23 -> tick 100 exactly */
    c = cfg_rate(2.3);
    static const admission_t at2_3[] = {{1, -1, 40, 0, 0, 440}, {23, -1, 40, 0, 0, 9940}};
    EXPECT_ADMISSIONS(&c, at2_3);
    /* 0.5/s = 0.05 per tick: the first user in tick 20 */
    c = cfg_rate(0.5);
    assert_int_equal(wr_queue_expected_admission_ms(&c, 1, -1, 40, 0, 0), 1940);
    /* 175/s at 1000 ms ticks: 175 per tick */
    c = cfg_rate(175);
    c.tick_ms = 1000;
    assert_int_equal(wr_queue_expected_admission_ms(&c, 175, -1, 300, 0, 0), 300);
    assert_int_equal(wr_queue_expected_admission_ms(&c, 176, -1, 300, 0, 0), 1300);

    /* the rate in use is etaSeconds' rate: with maxActive a lower observed
     * rate (87.5/s = 8.75 per tick: 175 -> tick 20), not a higher one */
    c = cfg_rate(175);
    c.max_active = 40;
    static const admission_t observed[] = {
        {175, 87.5, 40, 0, 0, 1940},
        {175, 500, 40, 0, 0, 940},
        {175, -1, 40, 0, 0, 940},
        {175, 0, 40, 0, 0, -1},
    };
    EXPECT_ADMISSIONS(&c, observed);
    c.max_active = 0; /* without maxActive the observed rate is ignored */
    assert_int_equal(wr_queue_expected_admission_ms(&c, 175, 87.5, 40, 0, 0), 940);

    /* no rate in use: paused, 0 */
    c = cfg_rate(175);
    c.paused = true;
    assert_int_equal(wr_queue_expected_admission_ms(&c, 1, -1, 40, 0, 0), -1);
    c = cfg_rate(0);
    assert_int_equal(wr_queue_expected_admission_ms(&c, 1, -1, 40, 0, 0), -1);
    /* beyond the longest band (600 s): the band decides */
    c = cfg_rate(175);
    static const admission_t far175[] = {
        {105000, -1, 0, 0, 0, 599900},
        {105017, -1, 0, 0, 0, 600000}, /* tick 6001 */
        {105018, -1, 0, 0, 0, -1},     /* tick 6002 */
        {UINT64_MAX, -1, 0, 0, 0, -1},
    };
    EXPECT_ADMISSIONS(&c, far175);
    c = cfg_rate(0.001);
    assert_int_equal(wr_queue_expected_admission_ms(&c, 1, -1, 0, 0, 0), -1);
    /* the largest rate, 1e6/s: 1e5 per tick, no overflow near POS_MAX */
    c = cfg_rate(1000000);
    static const admission_t at1e6[] = {
        {100000, -1, 0, 0, 0, 0},
        {100001, -1, 0, 0, 0, 100},
        {600000000, -1, 0, 0, 0, 599900},
        {1000000000000ULL, -1, 0, 0, 0, -1},
        {1000000000001ULL, -1, 0, 0, 0, -1},
    };
    EXPECT_ADMISSIONS(&c, at1e6);
}

/* retryAfterMs follows the ETA below the band: 175/s, 100 ms tick, next
 * tick 40 ms away, default bands, jitter 0.1. The spread is
 * ceil(E + 5 + u * 45) (m = 5 ms, half a tick = 50 ms). */
static void test_retry_after_eta(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(175);
    /* 1, 17 (tick 1, E 40) and 18 (tick 2, E 140): due before the 250 ms
     * floor (a poll: a join's E counts the admission delay): back as soon
     * as allowed, 250 + u * 50, with or without maxActive */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.0), 250);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.5), 275);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.999), 299);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 17, -1, 40, 0, 0, 0.999), 299);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 18, -1, 40, 0, 0, 0.25), 262);
    /* 36: tick 3, E 240: 245 (below the floor: 250 + 0) at u = 0;
     * 240 + 5 + 0.999 * 45 = 289.955 -> 290 at 0.999 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 36, -1, 40, 0, 0, 0.0), 250);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 36, -1, 40, 0, 0, 0.999), 290);
    /* the floor's spread: never before 250, within half a tick, evenly */
    unsigned first_half = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t ms = wr_queue_retry_after_eta_ms(&c, 17, -1, 40, 0, 0, i / 1000.0);
        assert_in_range(ms, 250, 299);
        first_half += ms < 275;
    }
    assert_int_equal(first_half, 500); /* u < 0.5 */
    /* the same with maxActive */
    c.max_active = 40;
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.0), 250);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.999), 299);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 36, -1, 40, 0, 0, 0.0), 250);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 36, -1, 40, 0, 0, 0.999), 290);
    c.max_active = 0;
    /* 100: tick 6, E 540 (band 1000) */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100, -1, 40, 0, 0, 0.0), 545);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100, -1, 40, 0, 0, 0.5), 568); /* 567.5 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100, -1, 40, 0, 0, 0.999), 590);
    /* 175: tick 10, E 940 (band 3000) */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 175, -1, 40, 0, 0, 0.0), 945);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 175, -1, 40, 0, 0, 0.999), 990);
    /* 525: tick 30, E 2940 + 50 < 3000: the ETA */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 525, -1, 40, 0, 0, 0.0), 2945);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 525, -1, 40, 0, 0, 0.999), 2990);
    /* the boundary: E + half a tick below the band ... */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 525, -1, 49, 0, 0, 0.999), 2999);
    /* ... or E + s within the band's longest answer, 3000 x 1.1 = 3300 (the
     * jittered edge: a band answer would come back after the admission) */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 525, -1, 50, 0, 0, 0.0), 2955);
    /* 526: tick 31, E 3040 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 526, -1, 40, 0, 0, 0.0), 3045);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 526, -1, 40, 0, 0, 0.999), 3090);
    /* 577: tick 33, E 3240: 3245 at u = 0, 3290 at 0.999 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 577, -1, 40, 0, 0, 0.0), 3245);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 577, -1, 40, 0, 0, 0.999), 3290);
    /* 580: tick 34, E 3340 > 3300: the band, +/- 10% */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 580, -1, 40, 0, 0, 0.0), 2700);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 580, -1, 40, 0, 0, 0.5), 3000);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 580, -1, 40, 0, 0, 0.999), 3299);
    /* 1000 (E 5740) and 5000 (E 28540): the band */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1000, -1, 40, 0, 0, 0.0), 2700);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1000, -1, 40, 0, 0, 0.999), 3299);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 5000, -1, 40, 0, 0, 0.0), 4500);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 5000, -1, 40, 0, 0, 0.999), 5499);
    /* next tick unknown: a full tick (175: E 1000) */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 175, -1, -1, 0, 0, 0.0), 1005);
    /* a tick in flight (0 ms): 175 -> E 900 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 175, -1, 0, 0, 0, 0.0), 905);

    /* never before E, never more than half a tick after it, and spread:
     * the users of one tick do not all come back at the same ms */
    uint32_t lo = UINT32_MAX, hi = 0;
    unsigned distinct = 0;
    uint32_t prev = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t ms = wr_queue_retry_after_eta_ms(&c, 175, -1, 40, 0, 0, i / 1000.0);
        assert_in_range(ms, 940 + 1, 940 + 50);
        lo = ms < lo ? ms : lo;
        hi = ms > hi ? ms : hi;
        distinct += ms != prev;
        prev = ms;
    }
    assert_int_equal(lo, 945);
    assert_int_equal(hi, 990);
    assert_true(distinct >= 40);
    /* jitter 0 does not make the ETA answer exact: the spread is the
     * tick's, not pollJitter's */
    c.poll_jitter = 0;
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 175, -1, 40, 0, 0, 0.999), 990);
    c.poll_jitter = 0.1;

    /* paused, rate 0, observed 0 under maxActive: the band as in v1 */
    c.paused = true;
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.0), 900);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.999), 1100);
    c = cfg_rate(0);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.5), 1000);
    c = cfg_rate(175);
    c.max_active = 40;
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, 0, 40, 0, 0, 0.5), 1000);
    /* maxActive holds admission at 87.5/s: 175 -> tick 20, E 1940 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 175, 87.5, 40, 0, 0, 0.0), 1945);

    /* fractional rates: 2.3/s: 1 -> E 440, 2 -> tick 9 (2 / 0.23 = 8.7),
     * E 840; 3 -> tick 14, E 1340 > 1000: the band */
    c = cfg_rate(2.3);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.0), 445);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 2, -1, 40, 0, 0, 0.999), 890);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 3, -1, 40, 0, 0, 0.0), 900);
    /* 0.5/s: the first user is due after 1940 ms: the 1000 ms band */
    c = cfg_rate(0.5);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1, -1, 40, 0, 0, 0.5), 1000);
    /* 33.3/s, 40 ms ticks (1.332 per tick), custom bands: 400 at
     * <= 10, 2000 beyond; 10 -> tick 8 (7.5), E 7 * 40 + 15 = 295; half a
     * tick 20, m 2: 297 .. 315 */
    c = cfg_rate(33.3);
    c.tick_ms = 40;
    c.n_poll_bands = 2;
    c.poll_bands[0] = (wr_poll_band_t){.up_to = 10, .ms = 400};
    c.poll_bands[1] = (wr_poll_band_t){.up_to = 0, .ms = 2000};
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 10, -1, 15, 0, 0, 0.0), 297);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 10, -1, 15, 0, 0, 0.999), 315);
    /* 11 -> tick 9 (8.26), E 335 + 20 < 2000 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 11, -1, 15, 0, 0, 0.0), 337);
}

/* ---- the poll-count argument of queue.h, checked by simulation ---- */

typedef struct {
    unsigned polls;       /* polls up to and including the one that found the user admitted */
    unsigned eta_answers; /* answers from the ETA rule */
    unsigned early;       /* ETA answers after which the user was still waiting */
} poll_run_t;

static double draw(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return (double)((*x * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/*
 * One user at position p0 at t = 0 in a long line admitted by the store's
 * budget (wr_budget_advance) at c's rate: ticks at t1, t1 + tick, ...,
 * carry0 millionths of a user carried in. The user polls as told, by the
 * 1.1 rule (eta) or the v1 band rule, with the draws of `seed`; the answer
 * at time t knows the time to the next tick exactly.
 */
static poll_run_t run_user(const wr_queue_config_t *c, int64_t t1, int64_t carry0, uint64_t p0,
                           bool eta, uint64_t seed)
{
    poll_run_t r = {0, 0, 0};
    wr_budget_t b = {.last_tick = -1, .carry_micro = carry0};
    int64_t tick = c->tick_ms, next = t1, t = 0, j = 0;
    uint64_t cum = 0, x = seed;
    bool last_eta = false;
    for (;;) {
        while (next <= t) { /* the ticks at or before t have run */
            uint64_t n = wr_budget_advance(&b, j++, c->admit_per_second, (uint32_t)tick, true);
            wr_budget_settle(&b, n, n);
            cum += n;
            next += tick;
        }
        if (t > 0) {
            r.polls++;
            if (cum >= p0)
                return r;
            r.early += last_eta;
        }
        uint64_t pos = p0 - cum;
        double u = draw(&x);
        int64_t e = wr_queue_expected_admission_ms(c, pos, -1, next - t, 0, 0);
        uint32_t band = wr_queue_retry_after_ms(c, pos, u);
        bool in_band = e >= 0 && (double)e + c->tick_ms / 2.0 < wr_queue_poll_base_ms(c, pos);
        uint32_t ms = eta ? wr_queue_retry_after_eta_ms(c, pos, -1, next - t, 0, 0, u) : band;
        /* the ETA answer: due within the band, or before the band's
         * longest answer (band x (1 + jitter)) */
        last_eta = in_band || (e >= 0 && ms != band);
        if (eta && last_eta) {
            r.eta_answers++;
            /* after E; within half a tick of it, or the floor's spread */
            assert_true((int64_t)ms > e);
            assert_true((double)ms <= (double)e + c->tick_ms / 2.0 + 1 ||
                        ms < wr_queue_poll_base_ms(c, pos));
            if (!in_band)
                assert_true(ms <= floor(wr_queue_poll_base_ms(c, pos) * (1 + c->poll_jitter)));
        } else if (eta) {
            assert_int_equal(ms, band);
        }
        last_eta = eta && last_eta;
        t += ms;
        assert_true(r.polls < 100000);
    }
}

static void test_retry_after_eta_poll_count(void **state)
{
    (void)state;
    static const double rates[] = {175, 33.3, 2.3, 0.5, 1000};
    static const uint32_t ticks[] = {100, 100, 100, 100, 50};
    static const uint64_t positions[] = {1, 17, 18, 35, 100, 175, 500, 1000, 5000, 20000};
    static const int64_t phases[] = {0, 1, 37, 99};
    static const int64_t carries[] = {0, 499999, 999999};
    unsigned runs = 0, with_eta = 0;
    for (uint64_t ma = 0; ma <= 40; ma += 40) { /* maxActive off / on (the floor differs) */
        for (size_t ri = 0; ri < sizeof(rates) / sizeof(rates[0]); ri++) {
            wr_queue_config_t c = cfg_rate(rates[ri]);
            c.tick_ms = ticks[ri];
            c.max_active = ma;
            c.poll_max_ms = 0; /* the 1.1 argument: bands and ETA (far polls: below) */
            for (size_t pi = 0; pi < sizeof(positions) / sizeof(positions[0]); pi++) {
                if (positions[pi] / rates[ri] > 200)
                    continue; /* keep the run short */
                for (size_t fi = 0; fi < 4; fi++) {
                    for (size_t ci = 0; ci < 3; ci++) {
                        for (uint64_t seed = 1; seed <= 5; seed++) {
                            uint64_t sd = seed * 0x9e3779b97f4a7c15ULL;
                            int64_t t1 = phases[fi] % c.tick_ms;
                            poll_run_t a = run_user(&c, t1, carries[ci], positions[pi], true, sd);
                            poll_run_t v1 = run_user(&c, t1, carries[ci], positions[pi], false, sd);
                            /* an ETA answer is always the last poll ... */
                            assert_int_equal(a.early, 0);
                            /* ... so no more polls than the bands give */
                            assert_true(a.polls <= v1.polls);
                            runs++;
                            with_eta += a.eta_answers > 0;
                        }
                    }
                }
            }
        }
    }
    assert_true(runs > 1000);
    assert_true(with_eta > runs / 2); /* the ETA rule was exercised */
}

/* K28: degraded mode's brakes over the known config. */
static void test_degraded_brake(void **state)
{
    (void)state;
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    c.admit_per_second = 10;
    const int64_t now = INT64_C(1796000000000);
    assert_int_equal(wr_queue_degraded_brake(NULL, now), WR_BRAKE_NONE);
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_NONE);
    c.paused = true;
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_PAUSED);
    /* opensAt ahead: the pre-queue form, paused or not */
    c.opens_at_ms = now + 3600000;
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_PREQUEUE);
    c.paused = false;
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_PREQUEUE);
    assert_int_equal(wr_queue_degraded_brake(&c, now + 3599999), WR_BRAKE_PREQUEUE);
    /* at opensAt the sale has begun */
    assert_int_equal(wr_queue_degraded_brake(&c, now + 3600000), WR_BRAKE_NONE);
    c.paused = true;
    assert_int_equal(wr_queue_degraded_brake(&c, now + 3600000), WR_BRAKE_PAUSED);
    c.opens_at_ms = WR_OPENS_AT_NONE;
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_PAUSED);
    /* the end of a sale comes first: closed, then sold out (stock 0) */
    c.stock = 0;
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_SOLD_OUT);
    c.opens_at_ms = now + 3600000;
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_SOLD_OUT);
    c.closed = true;
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_CLOSED);
    c.closed = false;
    c.opens_at_ms = WR_OPENS_AT_NONE;
    c.paused = false;
    c.stock = 1; /* something left: no brake */
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_NONE);
    c.stock = WR_STOCK_NONE;
    assert_int_equal(wr_queue_degraded_brake(&c, now), WR_BRAKE_NONE);
}

/* The closed answer's slow re-check: 60 s shortened by up to pollJitter,
 * never above 60 s, capped at half of idleTimeoutSeconds. */
static void test_closed_retry(void **state)
{
    (void)state;
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    c.admit_per_second = 10;
    assert_int_equal(wr_queue_closed_retry_ms(&c, 0.0), 60000);
    assert_int_equal(wr_queue_closed_retry_ms(&c, 0.5), 57000);
    assert_int_equal(wr_queue_closed_retry_ms(&c, 0.999999), 54000);
    assert_int_equal(wr_queue_closed_retry_ms(NULL, 0.0), 60000);
    c.poll_jitter = 0.5;
    assert_int_equal(wr_queue_closed_retry_ms(&c, 1.0), 30000);
    c.poll_jitter = 0;
    c.idle_timeout_seconds = 30; /* half: 15 s */
    assert_int_equal(wr_queue_closed_retry_ms(&c, 0.3), 15000);
    c.idle_timeout_seconds = 0; /* never away: the full minute */
    assert_int_equal(wr_queue_closed_retry_ms(&c, 0.3), 60000);
}

/* Fewer polls from far back (1.2, pollMaxMs): a tenth of the expected
 * wait (position / rate) when longer than the band, up to pollMaxMs, then
 * jitter; 0 = bands only; the ETA pacing of people due sooner is kept. */
static void test_poll_far(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(175);
    assert_int_equal(c.poll_max_ms, 60000); /* the default */
    /* the brief's example: 100,000 at 175/s waits 571.4 s: 57142.857 ms */
    assert_true(fabs(wr_queue_poll_far_ms(&c, 100000, -1) - 100000.0 / 175 * 100) < 1e-6);
    /* u = 0.5: no jitter; 0 and 1: -/+ 10 % */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100000, -1, 50, 0, 0, 0.5), 57143);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100000, -1, 50, 0, 0, 0.0), 51429);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100000, -1, 50, 0, 0, 0.999999), 62857);
    /* capped at pollMaxMs before the jitter: 1,000,000 -> 60 s +/- 10 % */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1000000, -1, 50, 0, 0, 0.5), 60000);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1000000, -1, 50, 0, 0, 0.0), 54000);
    c.poll_max_ms = 1000; /* below the band: the band wins */
    assert_true(wr_queue_poll_far_ms(&c, 1000000, -1) == 0);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 1000000, -1, 50, 0, 0, 0.5), 5000);
    c.poll_max_ms = 60000;
    /* a tenth no longer than the band: the band (5000 at 8750 = 5 s * 1750) */
    assert_true(wr_queue_poll_far_ms(&c, 8750, -1) == 0);
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 8750, -1, 50, 0, 0, 0.5), 5000);
    assert_true(wr_queue_poll_far_ms(&c, 8751, -1) > 5000);
    /* 0 = bands only, as in 1.1 */
    c.poll_max_ms = 0;
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100000, -1, 50, 0, 0, 0.5), 5000);
    c.poll_max_ms = 60000;
    /* the rate in use: paused (no rate) -> the band; maxActive with a
     * lower observed rate -> that rate (10/s: 10,000 waits 1000 s) */
    c.paused = true;
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100000, -1, 50, 0, 0, 0.5), 5000);
    c.paused = false;
    c.max_active = 100;
    assert_true(fabs(wr_queue_poll_far_ms(&c, 10000, 10) - 60000) < 1e-9);
    assert_true(fabs(wr_queue_poll_far_ms(&c, 1000, 10) - 10000) < 1e-9);
    c.max_active = 0;
    /* people due soon keep the ETA pacing: position 100 at 175/s is due
     * in tick 6 (17.5 a tick), E = 50 + 5 * 100 = 550, back at 555 */
    assert_int_equal(wr_queue_retry_after_eta_ms(&c, 100, -1, 50, 0, 0, 0.0), 555);
    /* and the cap at half of idleTimeoutSeconds still applies after it */
    assert_int_equal(wr_queue_retry_cap_idle_ms(&c, 57143, 0.0), 57143); /* T = 120 s: cap 60 s */
    c.idle_timeout_seconds = 60;
    assert_int_equal(wr_queue_retry_cap_idle_ms(&c, 57143, 0.0), 30000);
}

/* etaSeconds per line of a queue with priority groups (API 1.3, "Groups,
 * precisely"): a line's rate over the last minute; with none, the
 * standard line's share or the first waiting group's rest of the rate in
 * use; any other group null; paused null whatever the last minute did. */
static void test_eta_line(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(10);
    /* no groups: the whole rate, whatever the line fields say */
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 0, 0, 0), 3);
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 0, 600, 1), 3);
    c.n_groups = 2;
    snprintf(c.groups[0], sizeof c.groups[0], "fanclub");
    snprintf(c.groups[1], sizeof c.groups[1], "vip");
    c.standard_share = 0.2;
    /* nothing admitted in the last minute: standard 0.2 x 10 = 2/s, the
     * first waiting group 8/s, a later one null */
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 0, 0, 1), 15);
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 1, 0, 1), 4); /* 3.75 */
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 2, 0, 1), -1);
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 2, 0, 2), 4);
    /* no group waiting: a group member (held) gets nothing but its minute */
    assert_int_equal(wr_queue_eta_seconds_line(&c, 1, -1, 1, 0, 0), -1);
    /* admitted in the last minute: that rate (120 / 60 = 2/s) */
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 2, 120, 1), 15);
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 0, 60, 1), 30);
    /* paused, or no rate: null even with a last minute */
    c.paused = true;
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 0, 60, 1), -1);
    c.paused = false;
    c.admit_per_second = 0;
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 1, 60, 1), -1);
    /* share 0: the standard line gets no rate of its own until admitted */
    c.admit_per_second = 10;
    c.standard_share = 0;
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 0, 0, 1), -1);
    assert_int_equal(wr_queue_eta_seconds_line(&c, 30, -1, 1, 0, 1), 3);
}

#define TESTS(X)                                                                                   \
    X(test_poll_bands)                                                                             \
    X(test_slowest_band)                                                                           \
    X(test_retry_after_jitter)                                                                     \
    X(test_eta)                                                                                    \
    X(test_eta_line)                                                                               \
    X(test_admission_delay)                                                                        \
    X(test_expected_admission)                                                                     \
    X(test_retry_after_eta)                                                                        \
    X(test_retry_after_eta_poll_count)                                                             \
    X(test_retry_after_eta_idle_cap)                                                               \
    X(test_budget_exact_175)                                                                       \
    X(test_budget_fractional_long_run)                                                             \
    X(test_budget_pause_and_catchup)                                                               \
    X(test_budget_idempotent_and_settle)                                                           \
    X(test_budget_clock_steps_back)                                                                \
    X(test_rate_window)                                                                            \
    X(test_rate_window_tick_idle)                                                                  \
    X(test_retry_cap_idle)                                                                         \
    X(test_degraded_brake)                                                                         \
    X(test_closed_retry)                                                                           \
    X(test_poll_far)                                                                               \
    X(test_retry_plan_passes_over_away)                                                            \
    X(test_passed_over_rule)
WR_UNIT_MAIN(NULL, NULL, TESTS)
