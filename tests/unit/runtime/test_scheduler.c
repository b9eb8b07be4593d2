/*
 * test_scheduler.c - the admission tick (scheduler.c) on a real libevent
 * base, against a fake store (its vtable: admit and queue_list only) whose
 * clock the test sets.
 *
 * Checked: after every admit answer the next call is armed for the middle
 * of the store's next tick, from the store's clock (tickMs - phase +
 * tickMs/2, phase = store ms mod tickMs), not from this host's; an opensAt
 * before that is met exactly; run for a while on a store clock offset from
 * the host's, no two calls fall in one store tick and they land in the
 * middle of it; after the loop stalls for several ticks the scheduler makes
 * one call, not one per missed tick (no catch-up from the scheduler: the
 * store's admit gives at most one tick's budget, K24), and is aligned again
 * from the next one.
 *
 * The fake answers from the loop (never inside the call), like a real
 * store.
 *
 * Also the held queues (wr_scheduler_hold), against a second fake whose
 * admit calls the test answers by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "core/qconfig.h"
#include "runtime/scheduler.h"
#include "fake_store.h"
#include "store/store.h"
#include "unit_cfg.h"
#include "unit_main.h"

/* ---------------------------------------------------------- fake store */

/* admit (answered from the loop, on the store clock the test sets) and
 * queue_list (refused at once: discovery finds nothing) */
static fake_store_t g_fake;

static struct event_base *g_loop;
static wr_scheduler_t *g_sched;

static int setup(void **state)
{
    (void)state;
    g_loop = fs_init_loop(&g_fake, FS_ADMIT | FS_QUEUE_LIST);
    if (!g_loop)
        return -1;
    /* a busy queue: ticked every tick (a quiet one once a second, K29) */
    g_fake.admit.stats.waiting = 1;
    wr_scheduler_opts_t o = {.base = g_loop, .store = &g_fake.base, .discovery_ms = 3600000};
    return wr_scheduler_new(&o, &g_sched) == WR_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    wr_scheduler_free(g_sched);
    /* an answer still queued frees its (dead) entry when it runs */
    fs_free_loop(&g_fake);
    return 0;
}

/* Runs the loop until `answered` reaches n (bounded by 5 s). */
static void run_until_answered(int n)
{
    assert_true(fs_run_until_answered(&g_fake, n, 5000));
}

static void run_for_ms(int ms)
{
    struct timeval tv = wr_clock_tv_ms((uint64_t)ms);
    event_base_loopexit(g_loop, &tv);
    event_base_dispatch(g_loop);
}

/* wr_scheduler_queue_next_tick_ms of the queue named name (held, read,
 * given back): -1 when unknown. */
static int64_t next_tick_ms(const char *name)
{
    wr_scheduler_queue_t *q = NULL;
    wr_scheduler_hold(g_sched, &q, name, NULL);
    int64_t ms = wr_scheduler_queue_next_tick_ms(q);
    wr_scheduler_release(q);
    return ms;
}

static wr_queue_config_t cfg_tick(uint32_t tick_ms)
{
    wr_queue_config_t c = cfg_rate(10);
    c.tick_ms = tick_ms;
    return c;
}

/* ------------------------------------------------------------- tests */

/* The delay after an answer is tick - phase + tick/2 of the STORE's clock:
 * the store says 1,000,000 ticks + phase ms, whatever this host's time. */
static void t_next_call_is_the_middle_of_the_store_tick(void **state)
{
    (void)state;
    static const struct {
        uint32_t tick, phase, expect;
    } cases[] = {
        {100, 0, 150}, {100, 30, 120}, {100, 50, 100}, {100, 99, 51}, {40, 7, 53}, {1000, 900, 600},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char q[16];
        snprintf(q, sizeof q, "q%zu", i);
        g_fake.fixed_us = (1000000LL * cases[i].tick + cases[i].phase) * 1000;
        wr_queue_config_t c = cfg_tick(cases[i].tick);
        int before = g_fake.answered;
        wr_scheduler_note(g_sched, q, &c); /* armed at 0: the first call at once */
        run_until_answered(before + 1);
        int64_t next = next_tick_ms(q);
        /* a few ms may pass between the answer and this line */
        if (next > cases[i].expect || next < (int64_t)cases[i].expect - 20)
            fail_msg("tick %u, store phase %u: next call in %lld ms, expected %u", cases[i].tick,
                     cases[i].phase, (long long)next, cases[i].expect);
        wr_scheduler_forget(g_sched, q);
    }
    assert_int_equal(next_tick_ms("q0"), -1);
}

/* An opensAt before the next tick is met at its millisecond. */
static void t_opens_at_before_the_next_tick(void **state)
{
    (void)state;
    int64_t now_ms = 1000000LL * 100 + 10; /* phase 10 of 100: next tick in 140 ms */
    g_fake.fixed_us = now_ms * 1000;
    wr_queue_config_t c = cfg_tick(100);
    c.opens_at_ms = now_ms + 60;
    wr_scheduler_note(g_sched, "open", &c);
    run_until_answered(1);
    int64_t next = next_tick_ms("open");
    assert_true(next <= 60 && next >= 40);
    /* opensAt after the next tick: the tick as usual */
    c.opens_at_ms = now_ms + 500;
    wr_scheduler_forget(g_sched, "open");
    wr_scheduler_note(g_sched, "open", &c);
    run_until_answered(2);
    next = next_tick_ms("open");
    assert_true(next <= 140 && next >= 120);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* On a store clock 37 ms ahead of the host's: every store tick gets at
 * most one call, and the calls land in its middle (median phase). */
static void t_one_call_per_store_tick_in_its_middle(void **state)
{
    (void)state;
    const int64_t tick = 100;
    g_fake.offset_us = 37000;
    wr_queue_config_t c = cfg_tick((uint32_t)tick);
    wr_scheduler_note(g_sched, "mid", &c);
    run_for_ms(1500);
    int n = g_fake.calls;
    assert_true(n >= 5 && n <= 16); /* 15 ticks at most (and the first call) */
    int64_t phases[FS_CALLS_MAX];
    for (int i = 1; i < n; i++) {
        int64_t prev = g_fake.call[i - 1].store_us / 1000 / tick;
        int64_t cur = g_fake.call[i].store_us / 1000 / tick;
        if (cur <= prev)
            fail_msg("calls %d and %d in the same store tick %lld", i - 1, i, (long long)cur);
        phases[i - 1] = g_fake.call[i].store_us / 1000 % tick;
    }
    qsort(phases, (size_t)(n - 1), sizeof phases[0], cmp_i64);
    int64_t median = phases[(n - 1) / 2];
    /* the middle (50), a timer late by up to 25 ms on a busy machine */
    if (median < 45 || median > 75)
        fail_msg("median store phase of the calls %lld ms of %lld", (long long)median,
                 (long long)tick);
}

static void stall_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    usleep((useconds_t)(intptr_t)arg * 1000);
}

/* The loop stalls for 4.5 ticks: one call when it wakes, not one per missed
 * tick; then the next in the middle of a later store tick. */
static void t_late_tick_makes_one_call(void **state)
{
    (void)state;
    const int64_t tick = 50;
    wr_queue_config_t c = cfg_tick((uint32_t)tick);
    wr_scheduler_note(g_sched, "late", &c);
    run_until_answered(1);
    struct timeval zero = {0, 0};
    event_base_once(g_loop, -1, EV_TIMEOUT, stall_cb, (void *)(intptr_t)(4 * tick + tick / 2),
                    &zero);
    int64_t t0 = wr_clock_mono_ms();
    run_until_answered(2); /* the stall, then the late call */
    int64_t woke = wr_clock_mono_ms();
    assert_true(woke - t0 >= 4 * tick);
    int after_stall = g_fake.calls;
    assert_int_equal(after_stall, 2); /* one late call for the 4 missed ticks */
    /* the next call is aimed at the middle of the store's next tick, not
     * made at once: a later store tick, and a gap of about tick/2 (a late
     * call at the very end of its tick) to 1.5 ticks. The bound is tick/4:
     * on a busy machine the timer and the two clock readings move it by a
     * few ms (a loaded run saw 22 ms of 50, in the next tick); "at once" is
     * 0-2 ms. */
    run_until_answered(3);
    int64_t gap = g_fake.call[2].mono_ms - g_fake.call[1].mono_ms;
    int64_t t1 = g_fake.call[1].store_us / 1000 / tick, t2 = g_fake.call[2].store_us / 1000 / tick;
    if (t2 <= t1 || gap < tick / 4)
        fail_msg("after the late call the next came %lld ms later (store ticks %lld, %lld)",
                 (long long)gap, (long long)t1, (long long)t2);
}

/* Discovery: every listed name gets an entry (no config yet: from its
 * first admit answer), an entry the next list leaves out is forgotten,
 * and one listed again is kept (the same entry: not added twice). Its own
 * scheduler, listing every 20 ms. */
static void t_discovery_adds_and_forgets(void **state)
{
    (void)state;
    wr_scheduler_opts_t o = {.base = g_loop, .store = &g_fake.base, .discovery_ms = 20};
    wr_scheduler_t *s = NULL;
    g_fake.list_err = WR_OK;
    g_fake.list_names[0] = "alpha";
    g_fake.list_names[1] = "beta";
    g_fake.list_names[2] = "gamma";
    g_fake.list_n = 3;
    assert_int_equal(wr_scheduler_new(&o, &s), WR_OK);
    int64_t deadline = wr_clock_mono_ms() + 5000;
    while (g_fake.lists < 2 && wr_clock_mono_ms() < deadline)
        event_base_loop(g_loop, EVLOOP_ONCE);
    assert_true(g_fake.lists >= 2);
    assert_int_equal(wr_scheduler_count(s), 3);
    wr_scheduler_queue_t *beta = NULL;
    wr_scheduler_hold(s, &beta, "beta", NULL);
    assert_non_null(beta);
    /* alpha and gamma gone from the store */
    g_fake.list_names[0] = "beta";
    g_fake.list_n = 1;
    int lists = g_fake.lists;
    while (g_fake.lists < lists + 2 && wr_clock_mono_ms() < deadline)
        event_base_loop(g_loop, EVLOOP_ONCE);
    assert_true(g_fake.lists >= lists + 2);
    assert_int_equal(wr_scheduler_count(s), 1);
    wr_scheduler_queue_t *again = NULL;
    wr_scheduler_hold(s, &again, "beta", NULL);
    assert_ptr_equal(again, beta); /* kept, not made anew */
    wr_scheduler_hold(s, &again, "alpha", NULL);
    assert_null(again);
    wr_scheduler_release(beta);
    /* an empty list forgets the last */
    g_fake.list_n = 0;
    lists = g_fake.lists;
    while (g_fake.lists < lists + 2 && wr_clock_mono_ms() < deadline)
        event_base_loop(g_loop, EVLOOP_ONCE);
    assert_int_equal(wr_scheduler_count(s), 0);
    wr_scheduler_free(s);
    g_fake.list_err = WR_EUNAVAILABLE;
}

/* ======== held queues (wr_scheduler_hold) ========
 * One lookup, then reads without one; a queue forgotten while held reads as
 * unknown and is freed by whichever comes last of the last release and its
 * admit answer, also after the scheduler is freed (ASan: no leak, no use
 * after free). A second fake store whose admit calls the test answers by
 * hand, so "in flight" is a state the test holds. */

/* ---- the fake store: admit waits for the test (fs_answer), discovery
 * fails ---- */

/* Answers the oldest pending admit call with err. */
static void h_answer_admit(fake_store_t *f, wr_err_t err)
{
    assert_true(f->n > 0);
    fs_answer(f, 0, err);
}

typedef struct {
    struct event_base *base;
    fake_store_t store;
    wr_scheduler_t *sched;
    wr_queue_config_t cfg;
} hfx_t;

static int h_setup(void **state)
{
    static hfx_t fx;
    memset(&fx, 0, sizeof(fx));
    fx.base = event_base_new();
    assert_non_null(fx.base);
    fs_init(&fx.store, FS_ADMIT | FS_QUEUE_LIST, NULL);
    wr_scheduler_opts_t o = {fx.base, &fx.store.base, NULL, 60000, 0};
    assert_int_equal(wr_scheduler_new(&o, &fx.sched), WR_OK);
    fx.cfg = cfg_rate(10);
    fx.cfg.fail_open_per_second = 5;
    *state = &fx;
    return 0;
}

static int h_teardown(void **state)
{
    hfx_t *fx = *state;
    wr_scheduler_free(fx->sched); /* NULL when the test freed it */
    while (fx->store.n > 0)       /* as a store's close: ECANCELED */
        h_answer_admit(&fx->store, WR_ECANCELED);
    event_base_free(fx->base);
    return 0;
}

/* Runs the loop until the queue's first tick (armed at 0 ms) has called
 * admit. */
static void h_until_admit_called(hfx_t *fx)
{
    for (int i = 0; i < 100 && fx->store.n == 0; i++)
        event_base_loop(fx->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_int_equal(fx->store.n, 1);
}

/* Holds queue "a" (noted with the fixture's config) and runs the loop
 * until its first tick's admit is in flight; the queue. */
static wr_scheduler_queue_t *h_hold_in_flight(hfx_t *fx)
{
    wr_scheduler_queue_t *q = NULL;
    assert_non_null(wr_scheduler_hold(fx->sched, &q, "a", &fx->cfg));
    h_until_admit_called(fx);
    return q;
}

/* q, a held queue the scheduler does not know (now), reads as unknown:
 * no config, no rate, no tick, no fail-open pass to take at now_ms. */
static void assert_reads_unknown(wr_scheduler_queue_t *q, int64_t now_ms)
{
    assert_null(wr_scheduler_queue_config(q));
    assert_true(wr_scheduler_queue_rate(q) == -1);
    assert_int_equal(wr_scheduler_queue_next_tick_ms(q), -1);
    assert_false(wr_scheduler_queue_take_fail_open(q, now_ms));
}

static void test_hold_once_then_reads(void **state)
{
    hfx_t *fx = *state;
    wr_scheduler_queue_t *q = NULL;
    /* unknown, no config to note: NULL, reads as unknown */
    assert_null(wr_scheduler_hold(fx->sched, &q, "a", NULL));
    assert_reads_unknown(q, 0);
    /* with a config: noted and held */
    wr_scheduler_queue_t *h = wr_scheduler_hold(fx->sched, &q, "a", &fx->cfg);
    assert_non_null(h);
    assert_ptr_equal(h, q);
    assert_int_equal(wr_scheduler_count(fx->sched), 1);
    assert_ptr_equal(wr_scheduler_queue_config(q), wr_scheduler_config(fx->sched, "a"));
    assert_true(wr_scheduler_queue_config(q)->admit_per_second == 10);
    assert_true(wr_scheduler_queue_rate(q) == -1); /* no admit answer yet */
    assert_true(wr_scheduler_queue_next_tick_ms(q) >= 0);
    assert_true(wr_scheduler_queue_take_fail_open(q, 1000));
    /* held and known: the same entry, nothing noted again */
    assert_ptr_equal(wr_scheduler_hold(fx->sched, &q, "a", NULL), h);
    /* a second holder; holding another name releases it and looks the
     * name up */
    wr_scheduler_queue_t *b = NULL;
    assert_ptr_equal(wr_scheduler_hold(fx->sched, &b, "a", NULL), h);
    assert_null(wr_scheduler_hold(fx->sched, &b, "b", NULL));
    assert_null(b);
    wr_scheduler_release(q);
    wr_scheduler_release(NULL);
}

static void test_forgotten_while_held(void **state)
{
    hfx_t *fx = *state;
    wr_scheduler_queue_t *q = NULL, *q2 = NULL;
    wr_scheduler_queue_t *h = wr_scheduler_hold(fx->sched, &q, "a", &fx->cfg);
    assert_non_null(h);
    assert_non_null(wr_scheduler_hold(fx->sched, &q2, "a", NULL)); /* two holders */
    wr_scheduler_forget(fx->sched, "a");
    assert_int_equal(wr_scheduler_count(fx->sched), 0);
    /* still valid memory, read as unknown */
    assert_reads_unknown(q, 1000);
    /* holding again finds the queue anew (noted again with a config) */
    assert_null(wr_scheduler_hold(fx->sched, &q2, "a", NULL));
    assert_non_null(wr_scheduler_hold(fx->sched, &q2, "a", &fx->cfg));
    assert_ptr_not_equal(q2, h);
    assert_non_null(wr_scheduler_queue_config(q2));
    wr_scheduler_release(q); /* the last holder of the forgotten one frees it */
    wr_scheduler_release(q2);
}

/* Forgotten with its admit in flight and held: the answer keeps it for
 * the holder, the release frees it. */
static void test_admit_in_flight_then_release(void **state)
{
    hfx_t *fx = *state;
    wr_scheduler_queue_t *q = h_hold_in_flight(fx);
    assert_int_equal(wr_scheduler_queue_next_tick_ms(q), 0); /* in flight */
    wr_scheduler_forget(fx->sched, "a");
    h_answer_admit(&fx->store, WR_EUNAVAILABLE);
    assert_null(wr_scheduler_queue_config(q));
    wr_scheduler_release(q);
}

/* Released before its admit answer: the answer frees it. */
static void test_release_then_admit_answer(void **state)
{
    hfx_t *fx = *state;
    wr_scheduler_queue_t *q = h_hold_in_flight(fx);
    wr_scheduler_forget(fx->sched, "a");
    wr_scheduler_release(q);
    h_answer_admit(&fx->store, WR_EUNAVAILABLE);
}

/* main's order: the store closed (admit answered ECANCELED), the
 * scheduler freed, and only then the requests' contexts give their queues
 * back. */
static void test_held_past_scheduler_free(void **state)
{
    hfx_t *fx = *state;
    wr_scheduler_queue_t *q = h_hold_in_flight(fx), *idle = NULL;
    assert_non_null(wr_scheduler_hold(fx->sched, &idle, "b", &fx->cfg)); /* not in flight */
    h_answer_admit(&fx->store, WR_ECANCELED);
    wr_scheduler_free(fx->sched);
    fx->sched = NULL;
    assert_null(wr_scheduler_queue_config(q));
    assert_null(wr_scheduler_queue_config(idle));
    wr_scheduler_release(q);
    wr_scheduler_release(idle);
}

#define TESTS(X)                                                                                   \
    X(t_next_call_is_the_middle_of_the_store_tick, setup, teardown)                                \
    X(t_opens_at_before_the_next_tick, setup, teardown)                                            \
    X(t_one_call_per_store_tick_in_its_middle, setup, teardown)                                    \
    X(t_late_tick_makes_one_call, setup, teardown)                                                 \
    X(t_discovery_adds_and_forgets, setup, teardown)                                               \
    X(test_hold_once_then_reads, h_setup, h_teardown)                                              \
    X(test_forgotten_while_held, h_setup, h_teardown)                                              \
    X(test_admit_in_flight_then_release, h_setup, h_teardown)                                      \
    X(test_release_then_admit_answer, h_setup, h_teardown)                                         \
    X(test_held_past_scheduler_free, h_setup, h_teardown)
WR_UNIT_MAIN(NULL, NULL, TESTS)
