/*
 * test_queue.c - poll bands and jitter, ETA, the integer admission budget and
 * the observed-rate window. Every expectation is computed by hand in the
 * comment beside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "queue.h"

static wr_queue_config_t cfg_rate(double rate)
{
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    c.admit_per_second = rate;
    c.fail_open_per_second = rate;
    return c;
}

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

    /* a gap of 9 ticks (an outage): one tick's worth, no catch-up:
     * .5 + 17.5 = 18 */
    assert_int_equal(wr_budget_advance(&b, 160, 175, 100, true), 18);
    assert_int_equal(b.carry_micro, 0);
    /* K24: a gap of 2 ticks (a late timer under load) is one tick's worth
     * too, never 35 at once: 17.5 -> 17, carry .5 */
    assert_int_equal(wr_budget_advance(&b, 162, 175, 100, true), 17);
    assert_int_equal(b.carry_micro, 500000);
    /* a gap of 3 ticks: .5 + 17.5 = 18, never 52 */
    assert_int_equal(wr_budget_advance(&b, 165, 175, 100, true), 18);
    assert_int_equal(b.carry_micro, 0);
    /* a gap of 4 ticks: 17.5 -> 17 */
    assert_int_equal(wr_budget_advance(&b, 169, 175, 100, true), 17);
    assert_int_equal(b.carry_micro, 500000);
    /* a huge gap (a 10 s Redis outage = 100 ticks) gives one tick: .5 + 17.5 */
    assert_int_equal(wr_budget_advance(&b, 269, 175, 100, true), 18);
    assert_int_equal(b.carry_micro, 0);
    assert_int_equal(wr_budget_advance(&b, 1000000, 175, 100, true), 17);
}

static void test_budget_idempotent_and_settle(void **state)
{
    (void)state;
    wr_budget_t b = {.last_tick = -1, .carry_micro = 0};
    assert_int_equal(wr_budget_advance(&b, 5, 175, 100, true), 17);
    wr_budget_t saved = b;
    /* the same tick again (another instance) and an older tick: nothing */
    assert_int_equal(wr_budget_advance(&b, 5, 175, 100, true), 0);
    assert_int_equal(wr_budget_advance(&b, 4, 175, 100, true), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poll_bands),
        cmocka_unit_test(test_retry_after_jitter),
        cmocka_unit_test(test_eta),
        cmocka_unit_test(test_budget_exact_175),
        cmocka_unit_test(test_budget_fractional_long_run),
        cmocka_unit_test(test_budget_pause_and_catchup),
        cmocka_unit_test(test_budget_idempotent_and_settle),
        cmocka_unit_test(test_rate_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
