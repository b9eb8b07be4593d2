/*
 * test_looplag.c - the event loop's stalls (runtime/looplag.c): ticks on
 * a hand-driven clock, then the timer on a real loop that the test itself
 * holds up.
 *
 * Checked: a tick up to WR_LOOPLAG_MIN_MS late is no stall, one later is
 * a stall from its due time to when it ran; the time stalled within an
 * interval is the overlap with every kept stall (partial at both ends,
 * none outside), plus the overdue time of a tick not run yet; only the
 * last WR_LOOPLAG_KEEP stalls are kept; the metrics count them. On a real
 * loop held up 300 ms, the stall is seen both while the tick is overdue
 * (what the breaker asks while the late replies are read) and after.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <event2/event.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/metrics.h"
#include "runtime/looplag.h"
#include "unit_main.h"

#define P  WR_LOOPLAG_PERIOD_MS
#define T0 1000000

static void test_ticks_on_time_are_no_stall(void **state)
{
    (void)state;
    wr_looplag_t *l = NULL;
    assert_int_equal(wr_looplag_new(NULL, T0, &l), WR_OK);
    int64_t t = T0;
    for (int i = 0; i < 100; i++) {
        t += P + WR_LOOPLAG_MIN_MS; /* late by exactly the allowance */
        wr_looplag_tick(l, t);
    }
    assert_int_equal(wr_looplag_stalls(l), 0);
    assert_int_equal(wr_looplag_stalled_ms(l, T0, t), 0);
    assert_int_equal(wr_looplag_stalled_ms(l, t, t), 0);
    assert_int_equal(wr_looplag_stalled_ms(l, t + 5, t), 0); /* an empty interval */
    assert_int_equal(wr_looplag_stalled_ms(NULL, T0, t), 0);
    wr_looplag_free(l);
}

static void test_stalls_and_their_overlap(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    assert_non_null(m);
    wr_looplag_t *l = NULL;
    assert_int_equal(wr_looplag_new(m, T0, &l), WR_OK);
    assert_true(wr_metrics_get(m, "waitroom_event_loop_stalls_total", NULL) == 0);
    /* due at T0 + P; runs 300 ms after: stalled [T0+P, T0+P+300) */
    int64_t due = T0 + P, ran = due + 300;
    wr_looplag_tick(l, ran);
    assert_int_equal(wr_looplag_stalls(l), 1);
    assert_true(wr_metrics_get(m, "waitroom_event_loop_stalls_total", NULL) == 1);
    assert_true(wr_metrics_get(m, "waitroom_event_loop_last_stall_seconds", NULL) == 0.3);
    assert_int_equal(wr_looplag_stalled_ms(l, T0, ran), 300);        /* all of it */
    assert_int_equal(wr_looplag_stalled_ms(l, due + 100, ran), 200); /* a call begun inside */
    assert_int_equal(wr_looplag_stalled_ms(l, T0, due + 120), 120);  /* one ended inside */
    assert_int_equal(wr_looplag_stalled_ms(l, ran, ran + P), 0);     /* after it */
    assert_int_equal(wr_looplag_stalled_ms(l, T0, due), 0);          /* before it */
    /* the next tick, due ran + P, is overdue by 80 ms at ran + P + 80 (not
     * run yet): counted up to now; by 40 ms (within the allowance): not */
    int64_t due2 = ran + P;
    assert_int_equal(wr_looplag_stalled_ms(l, T0, due2 + 80), 300 + 80);
    assert_int_equal(wr_looplag_stalled_ms(l, due2 + 10, due2 + 80), 70);
    assert_int_equal(wr_looplag_stalled_ms(l, T0, due2 + 40), 300);
    wr_looplag_tick(l, due2 + 80);
    assert_int_equal(wr_looplag_stalls(l), 2);
    assert_int_equal(wr_looplag_stalled_ms(l, T0, due2 + 80 + P), 380);
    wr_looplag_free(l);
    wr_metrics_free(m);
}

static void test_only_the_last_stalls_are_kept(void **state)
{
    (void)state;
    wr_looplag_t *l = NULL;
    assert_int_equal(wr_looplag_new(NULL, T0, &l), WR_OK);
    int64_t t = T0, first_end = 0;
    for (unsigned i = 0; i < WR_LOOPLAG_KEEP + 4; i++) {
        t += P + 100; /* each tick 100 ms late */
        wr_looplag_tick(l, t);
        if (i == 3)
            first_end = t; /* the end of the 4th: the ones up to it are forgotten */
    }
    assert_int_equal(wr_looplag_stalls(l), WR_LOOPLAG_KEEP + 4);
    assert_int_equal(wr_looplag_stalled_ms(l, T0, t), WR_LOOPLAG_KEEP * 100);
    assert_int_equal(wr_looplag_stalled_ms(l, first_end, t), WR_LOOPLAG_KEEP * 100);
    wr_looplag_free(l);
}

/* The timer on a real loop: held up 300 ms by the test (usleep outside the
 * loop, as a stopped process), the stall is seen while the tick is still
 * overdue and after it ran. */
static void test_on_a_real_loop(void **state)
{
    (void)state;
    struct event_base *base = event_base_new();
    assert_non_null(base);
    wr_looplag_t *l = NULL;
    int64_t t0 = wr_clock_mono_ms();
    assert_int_equal(wr_looplag_new(NULL, t0, &l), WR_OK);
    usleep(150 * 1000); /* before the start: not a stall */
    assert_int_equal(wr_looplag_stalled_ms(l, t0, wr_clock_mono_ms()), 0);
    assert_int_equal(wr_looplag_start(l, base, wr_clock_mono_ms()), WR_OK);
    assert_int_equal(wr_looplag_start(l, base, wr_clock_mono_ms()), WR_EINVAL);
    struct timeval tv = wr_clock_tv_ms(3 * P);
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);              /* ticks on time (a loaded machine may be late once) */
    uint64_t before = wr_looplag_stalls(l); /* 0, unless the machine held the loop up */
    int64_t t1 = wr_clock_mono_ms();
    usleep(300 * 1000);
    int64_t t2 = wr_clock_mono_ms();
    uint32_t overdue = wr_looplag_stalled_ms(l, t1, t2);
    assert_true(overdue >= 300 - P - WR_LOOPLAG_MIN_MS && overdue <= t2 - t1);
    event_base_loop(base, EVLOOP_ONCE); /* the tick runs, late */
    assert_int_equal(wr_looplag_stalls(l), before + 1);
    int64_t t3 = wr_clock_mono_ms();
    uint32_t seen = wr_looplag_stalled_ms(l, t1, t3);
    assert_true(seen >= 300 - P && seen <= t3 - t1);
    wr_looplag_free(l);
    event_base_free(base);
}

#define TESTS(X)                                                                                   \
    X(test_ticks_on_time_are_no_stall)                                                             \
    X(test_stalls_and_their_overlap)                                                               \
    X(test_only_the_last_stalls_are_kept)                                                          \
    X(test_on_a_real_loop)
WR_UNIT_MAIN(NULL, NULL, TESTS)
