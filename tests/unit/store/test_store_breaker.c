/*
 * test_store_breaker.c - the circuit-breaker store decorator around a fake
 * inner store whose calls the test answers by hand, with an injected clock.
 *
 * Checked: refused calls return WR_EUNAVAILABLE without reaching the inner
 * store and without a callback; what counts as a failure (timeout,
 * unavailable, proto, a synchronous WR_EUNAVAILABLE) and as a success
 * (domain answers); slow calls; only `probes` calls reach the inner store
 * in half-open; results pass through unchanged; close answers pending calls
 * with WR_ECANCELED exactly once; the metrics series. Callback results
 * are collected in store_harness.h's sh_res_t (no event loop here: the
 * test answers the fake's pending calls itself).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "store/store_breaker.h"
#include "fake_store.h"
#include "store_harness.h"
#include "unit_main.h"

/* ---------------------------------------------------------- fake store */

/* join, ping and close, answered by hand (fs_answer); a join answered
 * WR_OK is WAITING at position 7 of 9 */
static fake_store_t g_fake;
static int64_t g_now;

static int64_t fake_now(void)
{
    return g_now;
}

static void answer(int i, wr_err_t err)
{
    fs_answer(&g_fake, i, err);
}

/* What the process's own loop was stalled during a call (opts stalled_ms):
 * g_stalled ms of it, whatever the interval; the interval is checked. */
static int64_t g_stalled;
static int64_t g_stalled_since;
static bool g_stall_on; /* mk() gives the decorator fake_stalled */

static uint32_t fake_stalled(const void *arg, int64_t since_ms, int64_t now_ms)
{
    assert_ptr_equal(arg, &g_stalled);
    assert_int_equal(since_ms, g_stalled_since);
    assert_int_equal(now_ms, g_now);
    return (uint32_t)g_stalled;
}

/* window 10, min 5, rate 0.5, 3 consecutive, slow 100 ms at 0.6, wait
 * 1000 doubling to 4000, 2 probes */
static wr_store_t *mk(wr_metrics_t *m)
{
    fs_init(&g_fake, FS_JOIN | FS_PING | FS_CLOSE, NULL);
    g_fake.entry.state = WR_ENTRY_WAITING;
    g_fake.entry.position = 7;
    g_fake.entry.waiting = 9;
    g_now = 1000000;
    wr_store_breaker_opts_t o;
    memset(&o, 0, sizeof(o));
    o.breaker.window_size = 10;
    o.breaker.min_calls = 5;
    o.breaker.failure_rate = 0.5;
    o.breaker.consecutive_failures = 3;
    o.breaker.slow_call_ms = 100;
    o.breaker.slow_call_rate = 0.6;
    o.breaker.open_wait_ms = 1000;
    o.breaker.open_wait_max_ms = 4000;
    o.breaker.half_open_probes = 2;
    o.metrics = m;
    o.now_ms = fake_now;
    if (g_stall_on) {
        o.stalled_ms = fake_stalled;
        o.stalled_arg = &g_stalled;
    }
    wr_store_t *s = NULL;
    assert_int_equal(wr_store_breaker_wrap(&g_fake.base, &o, &s), WR_OK);
    return s;
}

/* One join answered with err after ms on the clock; the caller gets err
 * unchanged. */
static void join_answered_after(wr_store_t *s, int64_t ms, wr_err_t err)
{
    sh_res_t r = {0};
    assert_int_equal(wr_store_join(s, "q", "u", sh_entry_cb, &r), WR_OK);
    assert_int_equal(r.calls, 0); /* not from inside the call */
    g_now += ms;
    answer(g_fake.n - 1, err);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, err);
}

/* One join answered at once with err. */
static void join_answered(wr_store_t *s, wr_err_t err)
{
    join_answered_after(s, 0, err);
}

/* s's breaker is closed and never opened. */
static void assert_never_opened(wr_store_t *s)
{
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_CLOSED);
    wr_breaker_stats_t st;
    wr_store_breaker_stats(s, &st);
    assert_int_equal(st.transitions[WR_BREAKER_OPEN], 0);
}

/* n joins, each answered with err after ms: the callers get err, and the
 * breaker never opens (err is not a store failure, nor a slow call). */
static void answers_are_neutral(wr_store_t *s, int n, int64_t ms, wr_err_t err)
{
    for (int i = 0; i < n; i++)
        join_answered_after(s, ms, err);
    assert_never_opened(s);
}

static double metric(wr_metrics_t *m, const char *name, const char *labels)
{
    return wr_metrics_get(m, name, labels);
}

static void test_passthrough_and_domain_answers(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    wr_store_t *s = mk(m);
    assert_string_equal(s->ops->name, "breaker");
    assert_ptr_equal(wr_store_breaker_inner(s), &g_fake.base);
    /* results pass through unchanged */
    sh_res_t r = {0};
    assert_int_equal(wr_store_join(s, "q", "u", sh_entry_cb, &r), WR_OK);
    answer(0, WR_OK);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WR_OK);
    assert_int_equal(r.entry.position, 7);
    /* 20 domain answers never open it */
    const wr_err_t dom[4] = {WR_ENOTFOUND, WR_EFULL, WR_ENOTINQUEUE, WR_ETOKEN};
    for (int i = 0; i < 20; i++)
        join_answered(s, dom[i % 4]);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_CLOSED);
    assert_int_equal(fs_reached(&g_fake), 21);
    assert_true(metric(m, "waitroom_breaker_state", "state=\"closed\"") == 1);
    assert_true(metric(m, "waitroom_breaker_state", "state=\"open\"") == 0);
    /* no callback argument: refused, nothing reaches the inner store */
    assert_int_equal(wr_store_join(s, "q", "u", NULL, NULL), WR_EINVAL);
    assert_int_equal(fs_reached(&g_fake), 21);
    wr_store_close(s);
    assert_true(g_fake.closed);
    wr_metrics_free(m);
}

static void test_failures_open_and_fail_fast(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    wr_store_t *s = mk(m);
    join_answered(s, WR_ETIMEOUT);
    join_answered(s, WR_EPROTO);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_CLOSED);
    join_answered(s, WR_EUNAVAILABLE); /* third in a row */
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    assert_true(metric(m, "waitroom_breaker_state", "state=\"open\"") == 1);
    assert_true(metric(m, "waitroom_breaker_state", "state=\"closed\"") == 0);
    assert_true(metric(m, "waitroom_breaker_transitions_total", "to=\"open\"") == 1);
    /* open: 50 calls refused at once, none reaches the inner store, no
     * callback */
    sh_res_t r = {0};
    for (int i = 0; i < 50; i++) {
        g_now += 10;
        assert_int_equal(wr_store_join(s, "q", "u", sh_entry_cb, &r), WR_EUNAVAILABLE);
    }
    assert_int_equal(r.calls, 0);
    assert_int_equal(fs_reached(&g_fake), 3);
    assert_true(metric(m, "waitroom_breaker_rejected_total", NULL) == 50);
    wr_breaker_stats_t st;
    wr_store_breaker_stats(s, &st);
    assert_int_equal(st.rejected, 50);
    wr_store_close(s);
    wr_metrics_free(m);
}

static void test_sync_unavailable_counts(void **state)
{
    (void)state;
    wr_store_t *s = mk(NULL);
    /* Redis disconnected: the inner call itself returns WR_EUNAVAILABLE */
    g_fake.sync_err = WR_EUNAVAILABLE;
    sh_res_t r = {0};
    for (int i = 0; i < 3; i++)
        assert_int_equal(wr_store_join(s, "q", "u", sh_entry_cb, &r), WR_EUNAVAILABLE);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    assert_int_equal(fs_reached(&g_fake), 3);
    /* argument errors are neutral: WR_EINVAL x 10 do not open a new breaker */
    wr_store_close(s);
    s = mk(NULL);
    g_fake.sync_err = WR_EINVAL;
    for (int i = 0; i < 10; i++)
        assert_int_equal(wr_store_join(s, "q", "u", sh_entry_cb, &r), WR_EINVAL);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_CLOSED);
    assert_int_equal(r.calls, 0);
    wr_store_close(s);
}

static void test_half_open_lets_only_probes_through(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    wr_store_t *s = mk(m);
    for (int i = 0; i < 3; i++)
        join_answered(s, WR_ETIMEOUT);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    int before = fs_reached(&g_fake);
    g_now += 1000; /* the wait is over */
    /* 100 requests arrive: exactly 2 reach the inner store */
    sh_res_t r[100];
    memset(r, 0, sizeof(r));
    int ok = 0, refused = 0;
    for (int i = 0; i < 100; i++) {
        wr_err_t e = wr_store_join(s, "q", "u", sh_entry_cb, &r[i]);
        if (e == WR_OK)
            ok++;
        else if (e == WR_EUNAVAILABLE)
            refused++;
    }
    assert_int_equal(ok, 2);
    assert_int_equal(refused, 98);
    assert_int_equal(fs_reached(&g_fake) - before, 2);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_HALF_OPEN);
    assert_true(metric(m, "waitroom_breaker_state", "state=\"half_open\"") == 1);
    /* both probes succeed (fast): closed again */
    g_now += 5;
    answer(1, WR_OK);
    answer(0, WR_ENOTINQUEUE); /* a domain answer is a success */
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_CLOSED);
    assert_true(metric(m, "waitroom_breaker_state", "state=\"closed\"") == 1);
    assert_true(metric(m, "waitroom_breaker_transitions_total", "to=\"closed\"") == 1);
    assert_true(metric(m, "waitroom_breaker_transitions_total", "to=\"half_open\"") == 1);
    assert_int_equal(r[0].calls + r[1].calls, 2);
    wr_store_close(s);
    wr_metrics_free(m);
}

static void test_failed_probe_reopens_with_longer_wait(void **state)
{
    (void)state;
    wr_store_t *s = mk(NULL);
    for (int i = 0; i < 3; i++)
        join_answered(s, WR_ETIMEOUT);
    g_now += 1000;
    join_answered(s, WR_EUNAVAILABLE); /* the probe fails: open for 2000 */
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    sh_res_t r = {0};
    g_now += 1999;
    assert_int_equal(wr_store_join(s, "q", "u", sh_entry_cb, &r), WR_EUNAVAILABLE);
    g_now += 1;
    assert_int_equal(wr_store_join(s, "q", "u", sh_entry_cb, &r), WR_OK);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_HALF_OPEN);
    /* close answers the pending probe with WR_ECANCELED, once */
    wr_store_close(s);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WR_ECANCELED);
}

static void test_slow_calls_open(void **state)
{
    (void)state;
    wr_store_t *s = mk(NULL);
    /* 6 slow successes of 10 (0.6): open by slow rate */
    for (int i = 0; i < 10; i++) {
        join_answered_after(s, i < 4 ? 10 : 150, WR_OK); /* calls 5..10 take 150 ms */
        if (i < 9)
            assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_CLOSED);
    }
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    wr_store_close(s);
}

/* An in-process store (the embedded one): its calls are slow only when this
 * process is starved of CPU, so slowness never opens the breaker; its
 * failures still do. */
static void test_in_process_store_slowness_never_opens(void **state)
{
    (void)state;
    wr_store_t *s = mk(NULL);
    g_fake.ops.in_process = true;
    for (int i = 0; i < 30; i++) {
        join_answered_after(s, 5000, WR_OK); /* every call takes 5 s */
        assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_CLOSED);
    }
    for (int i = 0; i < 3; i++) /* 3 consecutive failures still open it */
        join_answered(s, WR_ETIMEOUT);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    g_fake.ops.in_process = false;
    wr_store_close(s);
}

/* A call as slow as its latency minus the process's own stall in it: 150 ms
 * answers while the loop was stalled 60 ms of each (90 ms left, under the
 * 100 ms threshold) never open the breaker; with 40 ms of stall (110 ms
 * left) six of ten do, as test_slow_calls_open; a stall longer than the
 * call leaves 0 ms, not a negative. */
static void test_own_stall_is_not_store_slowness(void **state)
{
    (void)state;
    g_stall_on = true;
    wr_store_t *s = mk(NULL);
    g_stall_on = false;
    g_stalled = 60;
    for (int i = 0; i < 30; i++) {
        g_stalled_since = g_now;
        join_answered_after(s, 150, WR_OK);
    }
    assert_never_opened(s);
    g_stalled = 5000;
    for (int i = 0; i < 10; i++) {
        g_stalled_since = g_now;
        join_answered_after(s, 150, WR_OK);
    }
    assert_never_opened(s);
    g_stalled = 40;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_CLOSED);
        g_stalled_since = g_now;
        join_answered_after(s, 150, WR_OK);
    }
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    wr_store_close(s);
}

static void test_cancelled_is_neutral_and_ping_counts(void **state)
{
    (void)state;
    wr_store_t *s = mk(NULL);
    /* 10 cancelled answers: neutral */
    answers_are_neutral(s, 10, 0, WR_ECANCELED);
    /* ping goes through the breaker too */
    sh_res_t r = {0};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(wr_store_ping(s, sh_done_cb, &r), WR_OK);
        answer(0, WR_ETIMEOUT);
    }
    assert_int_equal(r.calls, 3);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    assert_int_equal(wr_store_ping(s, sh_done_cb, &r), WR_EUNAVAILABLE);
    assert_int_equal(r.calls, 3);
    wr_store_close(s);
}

/* K26: a late replica (WR_EREPLICA, durability mode) is not a store
 * failure, nor a slow call: 10 of them, each 150 ms (above the 100 ms slow
 * threshold), leave the breaker closed, and the caller still gets the
 * error unchanged. */
static void test_late_replica_is_neutral(void **state)
{
    (void)state;
    wr_store_t *s = mk(NULL);
    answers_are_neutral(s, 10, 150, WR_EREPLICA);
    /* the same answers as WR_EUNAVAILABLE open it (the rule it is exempt from) */
    for (int i = 0; i < 3; i++)
        join_answered(s, WR_EUNAVAILABLE);
    assert_int_equal(wr_store_breaker_state(s), WR_BREAKER_OPEN);
    assert_string_equal(wr_errname(WR_EREPLICA), "WR_EREPLICA");
    wr_store_close(s);
}

/* Redis Cluster: one shard down (WR_ESHARD) is not a store failure: 20 of
 * them in a row leave the breaker closed (the other shards' queues keep
 * the store), and the caller gets the error unchanged. */
static void test_shard_down_is_neutral(void **state)
{
    (void)state;
    wr_store_t *s = mk(NULL);
    answers_are_neutral(s, 20, 0, WR_ESHARD);
    assert_string_equal(wr_errname(WR_ESHARD), "WR_ESHARD");
    wr_store_close(s);
}

/* A callback that closes the store from inside (allowed by store.h). */
static wr_store_t *g_closing;
static int g_closed_cb;
static void close_in_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    (void)e;
    (void)arg;
    g_closed_cb++;
    if (err == WR_OK)
        wr_store_close(g_closing);
}

static void test_close_from_callback(void **state)
{
    (void)state;
    g_closing = mk(NULL);
    g_closed_cb = 0;
    assert_int_equal(wr_store_join(g_closing, "q", "u", close_in_cb, NULL), WR_OK);
    assert_int_equal(wr_store_join(g_closing, "q", "u", close_in_cb, NULL), WR_OK);
    answer(0, WR_OK); /* closes: the other pending one gets WR_ECANCELED */
    assert_int_equal(g_closed_cb, 2);
    assert_true(g_fake.closed);
}

#define TESTS(X)                                                                                   \
    X(test_passthrough_and_domain_answers)                                                         \
    X(test_failures_open_and_fail_fast)                                                            \
    X(test_sync_unavailable_counts)                                                                \
    X(test_half_open_lets_only_probes_through)                                                     \
    X(test_failed_probe_reopens_with_longer_wait)                                                  \
    X(test_slow_calls_open)                                                                        \
    X(test_in_process_store_slowness_never_opens)                                                  \
    X(test_own_stall_is_not_store_slowness)                                                        \
    X(test_cancelled_is_neutral_and_ping_counts)                                                   \
    X(test_late_replica_is_neutral)                                                                \
    X(test_shard_down_is_neutral)                                                                  \
    X(test_close_from_callback)
WR_UNIT_MAIN(NULL, NULL, TESTS)
