/*
 * test_breaker.c - the circuit breaker state machine with an injected clock:
 * every transition, the half-open probe limit, the backoff of the open
 * wait, the sliding-window arithmetic, stale permits and option parsing.
 * Every expected value is worked out by hand in the comment beside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/breaker.h"
#include "unit_main.h"

/* Transition log filled by the callback. */
typedef struct {
    int n;
    wr_breaker_state_t from[32], to[32];
    wr_breaker_why_t why[32];
    uint32_t wait[32];
} log_t;

static void on_tr(wr_breaker_state_t from, wr_breaker_state_t to, wr_breaker_why_t why,
                  uint32_t wait_ms, void *arg)
{
    log_t *l = arg;
    if (l->n < 32) {
        l->from[l->n] = from;
        l->to[l->n] = to;
        l->why[l->n] = why;
        l->wait[l->n] = wait_ms;
    }
    l->n++;
}

/* window 10, min 5, failure rate 0.5, 3 consecutive, slow >= 100 ms at 0.6,
 * wait 1000 doubling to 4000, 2 probes. */
static wr_breaker_t *mk(log_t *l)
{
    wr_breaker_opts_t o;
    wr_breaker_opts_default(&o);
    o.window_size = 10;
    o.min_calls = 5;
    o.failure_rate = 0.5;
    o.consecutive_failures = 3;
    o.slow_call_ms = 100;
    o.slow_call_rate = 0.6;
    o.open_wait_ms = 1000;
    o.open_wait_max_ms = 4000;
    o.half_open_probes = 2;
    o.on_transition = on_tr;
    o.arg = l;
    wr_breaker_t *b = NULL;
    assert_int_equal(wr_breaker_new(&o, &b), WR_OK);
    return b;
}

/* One call at time t: allowed? then recorded with (failed, latency). */
static bool call(wr_breaker_t *b, int64_t t, bool failed, uint32_t lat)
{
    wr_breaker_permit_t p = wr_breaker_allow(b, t);
    if (p.allowed)
        wr_breaker_record(b, p, failed, lat, t + lat);
    return p.allowed;
}

/* Calls at t0, t0 + 1, ...: 'F' fails, 'S' succeeds, each taking lat ms;
 * each must be let through. */
static void run(wr_breaker_t *b, int64_t t0, const char *pattern, uint32_t lat)
{
    for (size_t i = 0; pattern[i]; i++)
        assert_true(call(b, t0 + (int64_t)i, pattern[i] == 'F', lat));
}

/* b is open, opened once (its only transition), for why. */
static void assert_opened_once(wr_breaker_t *b, const log_t *l, wr_breaker_why_t why)
{
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
    assert_int_equal(l->n, 1);
    assert_int_equal(l->why[0], why);
}

/* mk, then three failures at t = 0: open from t = 0 for 1000 ms. */
static wr_breaker_t *mk_open(log_t *l)
{
    wr_breaker_t *b = mk(l);
    for (int i = 0; i < 3; i++)
        call(b, 0, true, 0);
    return b;
}

/* o's numbers are want's (the callback and its argument aside). */
static void assert_opts_eq(const wr_breaker_opts_t *o, const wr_breaker_opts_t *want)
{
    assert_int_equal(o->window_size, want->window_size);
    assert_int_equal(o->min_calls, want->min_calls);
    assert_true(o->failure_rate == want->failure_rate);
    assert_int_equal(o->consecutive_failures, want->consecutive_failures);
    assert_int_equal(o->slow_call_ms, want->slow_call_ms);
    assert_true(o->slow_call_rate == want->slow_call_rate);
    assert_int_equal(o->open_wait_ms, want->open_wait_ms);
    assert_int_equal(o->open_wait_max_ms, want->open_wait_max_ms);
    assert_int_equal(o->half_open_probes, want->half_open_probes);
}

static void test_defaults(void **state)
{
    (void)state;
    wr_breaker_opts_t o;
    wr_breaker_opts_default(&o);
    static const wr_breaker_opts_t want = {.window_size = 20,
                                           .min_calls = 10,
                                           .failure_rate = 0.5,
                                           .consecutive_failures = 5,
                                           .slow_call_ms = 200,
                                           .slow_call_rate = 0.8,
                                           .open_wait_ms = 1000,
                                           .open_wait_max_ms = 5000,
                                           .half_open_probes = 3};
    assert_opts_eq(&o, &want);
    /* zero fields take the defaults */
    wr_breaker_opts_t z;
    memset(&z, 0, sizeof(z));
    wr_breaker_t *b = NULL;
    assert_int_equal(wr_breaker_new(&z, &b), WR_OK);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    assert_int_equal(wr_breaker_next_wait_ms(b), 1000);
    /* 4 failures in a row stay closed, the 5th opens (consecutive = 5) */
    for (int i = 0; i < 4; i++)
        assert_true(call(b, i, true, 1));
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    assert_true(call(b, 10, true, 1));
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
    wr_breaker_free(b);
    /* NULL opts = defaults */
    assert_int_equal(wr_breaker_new(NULL, &b), WR_OK);
    wr_breaker_free(b);
}

static void test_bad_options(void **state)
{
    (void)state;
    wr_breaker_t *b = NULL;
    wr_breaker_opts_t o;
    wr_breaker_opts_default(&o);
    o.failure_rate = 1.5;
    assert_int_equal(wr_breaker_new(&o, &b), WR_EINVAL);
    wr_breaker_opts_default(&o);
    o.window_size = WR_BREAKER_WINDOW_MAX + 1;
    assert_int_equal(wr_breaker_new(&o, &b), WR_EINVAL);
    wr_breaker_opts_default(&o);
    o.min_calls = 21; /* above the window of 20 */
    assert_int_equal(wr_breaker_new(&o, &b), WR_EINVAL);
    wr_breaker_opts_default(&o);
    o.open_wait_max_ms = 500; /* below the 1000 ms wait */
    assert_int_equal(wr_breaker_new(&o, &b), WR_EINVAL);
    wr_breaker_opts_default(&o);
    o.slow_call_rate = -0.1;
    assert_int_equal(wr_breaker_new(&o, &b), WR_EINVAL);
}

static void test_consecutive_failures_open(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk(&l);
    /* F F S F F: the success resets the run; 2 failures after it stay closed */
    run(b, 0, "FFSFF", 1);
    /* window: 5 calls, 4 failures = 0.8 >= 0.5 and 5 >= min 5: the rate rule
     * fires at the 5th call, not the consecutive rule */
    assert_opened_once(b, &l, WR_BREAKER_WHY_FAILURE_RATE);
    wr_breaker_free(b);

    /* three failures in a row before min_calls: consecutive rule */
    memset(&l, 0, sizeof(l));
    b = mk(&l);
    run(b, 0, "FF", 1);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    run(b, 2, "F", 1);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.from[0], WR_BREAKER_CLOSED);
    assert_int_equal(l.to[0], WR_BREAKER_OPEN);
    assert_int_equal(l.why[0], WR_BREAKER_WHY_CONSECUTIVE);
    assert_int_equal(l.wait[0], 1000);
    /* opened at t = 2 + 1 (the end of the third call) */
    assert_int_equal(wr_breaker_retry_in_ms(b, 3), 1000);
    assert_int_equal(wr_breaker_retry_in_ms(b, 503), 500);
    wr_breaker_free(b);
}

static void test_failure_rate_window_arithmetic(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk(&l);
    uint32_t calls, fails, slow;
    /* pattern S F S F S S F S S S (never 3 failures in a row):
     * after 5 calls: 2/5 = 0.4 < 0.5 closed; then 6: 3/7 at 7 ... */
    run(b, 0, "SFSFSSFSSS", 1);
    wr_breaker_window(b, &calls, &fails, &slow);
    assert_int_equal(calls, 10);
    assert_int_equal(fails, 3);
    assert_int_equal(slow, 0);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    /* 10 more successes push the failures out one by one: window stays 10 */
    run(b, 20, "SSSSSSSSSS", 1);
    wr_breaker_window(b, &calls, &fails, &slow);
    assert_int_equal(calls, 10);
    assert_int_equal(fails, 0);
    /* now F S F S F S F S F into a window of 10 S: after call i (0-based)
     * the window holds floor(i/2)+1 failures of 10; i = 7 gives 4/10 (closed),
     * i = 8 gives 5/10 = 0.5 >= 0.5 (open, by rate: never 3 in a row) */
    for (int i = 0; i < 8; i++) {
        assert_true(call(b, 40 + i, i % 2 == 0, 1));
        assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
        wr_breaker_window(b, &calls, &fails, &slow);
        assert_int_equal(calls, 10);
        assert_int_equal(fails, (uint32_t)(i / 2 + 1));
    }
    assert_true(call(b, 48, true, 1));
    assert_opened_once(b, &l, WR_BREAKER_WHY_FAILURE_RATE);
    wr_breaker_free(b);
}

static void test_failure_rate_boundary(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk(&l);
    /* 5 successes then F S F S: after the 4th: 2/9 */
    run(b, 0, "SSSSSFSFS", 1);
    /* 9 calls, 2 failures */
    uint32_t calls, fails;
    wr_breaker_window(b, &calls, &fails, NULL);
    assert_int_equal(calls, 9);
    assert_int_equal(fails, 2);
    call(b, 9, true, 1);  /* 10 calls, 3 failures: 0.3 */
    call(b, 10, true, 1); /* evicts an S: 10 calls, 4 failures: 0.4 (2 in a row) */
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    call(b, 11, false, 1); /* evicts S: 4/10 */
    call(b, 12, true, 1);  /* evicts S: 5/10 = 0.5 >= 0.5: open */
    assert_opened_once(b, &l, WR_BREAKER_WHY_FAILURE_RATE);
    wr_breaker_free(b);
}

static void test_min_calls(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk(&l);
    /* F S F S: 2/4 = 0.5 but only 4 calls < min 5: closed */
    run(b, 0, "FSFS", 1);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    /* 5th: S -> 2/5 = 0.4 closed; 6th F -> 3/6 = 0.5 open */
    call(b, 4, false, 1);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    call(b, 5, true, 1);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
    wr_breaker_free(b);
}

static void test_slow_calls_open(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk(&l);
    /* successes only; slow = latency >= 100. 99 ms is not slow. */
    for (int i = 0; i < 10; i++)
        call(b, i * 1000, false, 99);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    uint32_t slow;
    wr_breaker_window(b, NULL, NULL, &slow);
    assert_int_equal(slow, 0);
    /* now slow successes: the window of 10 has k slow after k calls;
     * 0.6 * 10 = 6 -> the 6th slow call opens */
    for (int k = 1; k <= 5; k++) {
        call(b, 20000 + k * 1000, false, 100);
        assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    }
    wr_breaker_window(b, NULL, NULL, &slow);
    assert_int_equal(slow, 5);
    call(b, 30000, false, 150);
    assert_opened_once(b, &l, WR_BREAKER_WHY_SLOW_RATE);
    wr_breaker_free(b);
}

static void test_open_refuses_then_half_open(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk_open(&l); /* opens at t = 0, wait 1000 */
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
    wr_breaker_stats_t st;
    /* refused until t = 999 */
    for (int t = 0; t < 1000; t += 111)
        assert_false(wr_breaker_allow(b, t).allowed);
    assert_false(wr_breaker_allow(b, 999).allowed);
    wr_breaker_get_stats(b, &st);
    assert_int_equal(st.rejected, 11); /* t = 0,111,...,999 (10) + 999 again */
    assert_int_equal(st.allowed, 3);
    /* at t = 1000: half-open, and this call is a probe */
    wr_breaker_permit_t p1 = wr_breaker_allow(b, 1000);
    assert_true(p1.allowed);
    assert_true(p1.probe);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_HALF_OPEN);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.to[1], WR_BREAKER_HALF_OPEN);
    assert_int_equal(l.why[1], WR_BREAKER_WHY_WAIT_OVER);
    wr_breaker_free(b);
}

static void test_half_open_probe_limit_and_close(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk_open(&l);
    /* half-open at 1000: 2 probes pass, every other call is refused */
    wr_breaker_permit_t p1 = wr_breaker_allow(b, 1000);
    wr_breaker_permit_t p2 = wr_breaker_allow(b, 1001);
    assert_true(p1.allowed && p1.probe);
    assert_true(p2.allowed && p2.probe);
    int refused = 0;
    for (int i = 0; i < 100; i++)
        refused += !wr_breaker_allow(b, 1002 + i).allowed;
    assert_int_equal(refused, 100);
    /* one probe succeeds: still half-open, and no new probe slot */
    wr_breaker_record(b, p1, false, 5, 1010);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_HALF_OPEN);
    assert_false(wr_breaker_allow(b, 1011).allowed);
    /* the second succeeds: closed, empty window, wait back to 1000 */
    wr_breaker_record(b, p2, false, 5, 1012);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.to[2], WR_BREAKER_CLOSED);
    assert_int_equal(l.why[2], WR_BREAKER_WHY_PROBES_OK);
    uint32_t calls;
    wr_breaker_window(b, &calls, NULL, NULL);
    assert_int_equal(calls, 0);
    assert_int_equal(wr_breaker_next_wait_ms(b), 1000);
    assert_true(wr_breaker_allow(b, 1013).allowed);
    wr_breaker_stats_t st;
    wr_breaker_get_stats(b, &st);
    assert_int_equal(st.transitions[WR_BREAKER_OPEN], 1);
    assert_int_equal(st.transitions[WR_BREAKER_HALF_OPEN], 1);
    assert_int_equal(st.transitions[WR_BREAKER_CLOSED], 1);
    assert_int_equal(st.rejected, 101);
    wr_breaker_free(b);
}

static void test_backoff_doubles_caps_and_resets(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk_open(&l);
    /* waits: 1000, then each failed half-open doubles: 2000, 4000, 4000 (cap) */
    int64_t t = 0;
    const uint32_t waits[] = {1000, 2000, 4000, 4000, 4000};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(l.wait[l.n - 1], waits[k]);
        assert_int_equal(wr_breaker_retry_in_ms(b, t), waits[k]);
        assert_false(wr_breaker_allow(b, t + waits[k] - 1).allowed);
        t += waits[k];
        wr_breaker_permit_t p = wr_breaker_allow(b, t);
        assert_true(p.probe);
        /* a failed probe reopens at once, stamped t */
        wr_breaker_record(b, p, true, 0, t);
        assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
        assert_int_equal(l.why[l.n - 1], WR_BREAKER_WHY_PROBE_FAILED);
    }
    /* opened at t with 4000: now succeed both probes */
    t += 4000;
    wr_breaker_permit_t p1 = wr_breaker_allow(b, t), p2 = wr_breaker_allow(b, t);
    wr_breaker_record(b, p1, false, 1, t);
    wr_breaker_record(b, p2, false, 1, t);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    /* the next opening waits 1000 again */
    for (int i = 0; i < 3; i++)
        call(b, t, true, 0);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
    assert_int_equal(l.wait[l.n - 1], 1000);
    wr_breaker_free(b);
}

static void test_slow_probe_reopens(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk_open(&l);
    wr_breaker_permit_t p = wr_breaker_allow(b, 1000);
    wr_breaker_record(b, p, false, 100, 1100); /* success, but slow */
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
    assert_int_equal(wr_breaker_retry_in_ms(b, 1100), 2000);
    wr_breaker_free(b);
}

static void test_stale_permits_ignored(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk(&l);
    /* 5 calls let through while closed; 3 fail and open the breaker;
     * the other 2 answer late with failures: ignored, the wait is 1000 */
    wr_breaker_permit_t p[5];
    for (int i = 0; i < 5; i++)
        p[i] = wr_breaker_allow(b, 0);
    for (int i = 0; i < 3; i++)
        wr_breaker_record(b, p[i], true, 0, 10);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_OPEN);
    wr_breaker_record(b, p[3], true, 0, 20);
    wr_breaker_record(b, p[4], false, 0, 20);
    assert_int_equal(l.n, 1);
    assert_int_equal(wr_breaker_retry_in_ms(b, 10), 1000);
    /* half-open: a late closed-state result does not count as a probe */
    wr_breaker_permit_t q = wr_breaker_allow(b, 1010);
    assert_true(q.probe);
    wr_breaker_record(b, p[4], false, 0, 1011);
    wr_breaker_record(b, p[4], false, 0, 1011);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_HALF_OPEN);
    /* a refused permit recorded is ignored too */
    wr_breaker_permit_t r = wr_breaker_allow(b, 1012);
    wr_breaker_permit_t r2 = wr_breaker_allow(b, 1012); /* 3rd: refused */
    assert_true(r.allowed);
    assert_false(r2.allowed);
    wr_breaker_record(b, r2, true, 0, 1013);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_HALF_OPEN);
    wr_breaker_free(b);
}

static void test_cancel_frees_probe_slot(void **state)
{
    (void)state;
    log_t l = {0};
    wr_breaker_t *b = mk_open(&l);
    wr_breaker_permit_t p1 = wr_breaker_allow(b, 1000);
    wr_breaker_permit_t p2 = wr_breaker_allow(b, 1000);
    assert_false(wr_breaker_allow(b, 1000).allowed);
    wr_breaker_cancel(b, p2); /* never made: its slot is free again */
    wr_breaker_permit_t p3 = wr_breaker_allow(b, 1001);
    assert_true(p3.allowed && p3.probe);
    assert_false(wr_breaker_allow(b, 1001).allowed);
    wr_breaker_record(b, p1, false, 1, 1002);
    wr_breaker_record(b, p3, false, 1, 1002);
    assert_int_equal(wr_breaker_state(b), WR_BREAKER_CLOSED);
    /* cancel while closed changes nothing */
    wr_breaker_permit_t c = wr_breaker_allow(b, 1003);
    wr_breaker_cancel(b, c);
    uint32_t calls;
    wr_breaker_window(b, &calls, NULL, NULL);
    assert_int_equal(calls, 0);
    wr_breaker_free(b);
}

static void test_parse(void **state)
{
    (void)state;
    char err[128];
    wr_breaker_opts_t o;
    wr_breaker_opts_default(&o);
    assert_int_equal(wr_breaker_parse(&o,
                                      "window=50,min_calls=20,failure_rate=0.25,consecutive=7,"
                                      "slow_ms=300,slow_rate=0.9,wait_ms=500,wait_max_ms=8000,"
                                      "probes=4",
                                      err, sizeof(err)),
                     WR_OK);
    static const wr_breaker_opts_t want = {.window_size = 50,
                                           .min_calls = 20,
                                           .failure_rate = 0.25,
                                           .consecutive_failures = 7,
                                           .slow_call_ms = 300,
                                           .slow_call_rate = 0.9,
                                           .open_wait_ms = 500,
                                           .open_wait_max_ms = 8000,
                                           .half_open_probes = 4};
    assert_opts_eq(&o, &want);
    assert_int_equal(wr_breaker_parse(&o, "bogus=1", err, sizeof(err)), WR_EINVAL);
    assert_non_null(strstr(err, "bogus"));
    assert_int_equal(wr_breaker_parse(&o, "window=abc", err, sizeof(err)), WR_EINVAL);
    assert_non_null(strstr(err, "window"));
    assert_int_equal(wr_breaker_parse(&o, "window=2.5", err, sizeof(err)), WR_EINVAL);
    assert_int_equal(wr_breaker_parse(&o, "failure_rate=2", err, sizeof(err)), WR_EINVAL);
    assert_non_null(strstr(err, "failure_rate"));
    assert_int_equal(wr_breaker_parse(&o, "nokey", err, sizeof(err)), WR_EINVAL);
    /* an explicit 0 is refused, not turned into the default */
    assert_int_equal(wr_breaker_parse(&o, "consecutive=0", err, sizeof(err)), WR_EINVAL);
    assert_non_null(strstr(err, "consecutive"));
    assert_int_equal(wr_breaker_parse(&o, "probes=0", err, sizeof(err)), WR_EINVAL);
    /* a rate of 0 likewise (it would read as the default), and every value
     * only in plain decimal: no sign, exponent, hex, space or second
     * spelling of a key; no empty item; messages without a prefix (the
     * caller names the flag) */
    static const struct {
        const char *spec, *said;
    } bad[] = {
        {"failure_rate=0", "failure_rate: '0' is not a rate above 0 and at most 1"},
        {"slow_rate=0.0", "slow_rate: '0.0' is not a rate"},
        {"failure_rate=-0.1", "failure_rate: '-0.1' is not a rate"},
        {"failure_rate=.5", "not a rate"},
        {"failure_rate=0.", "not a rate"},
        {"failure_rate=5e-1", "not a rate"},
        {"slow_ms=-1", "slow_ms: '-1' is not an integer from 1 to 4294967295"},
        {"slow_ms=4294967296", "slow_ms: '4294967296' is not an integer"},
        {"slow_ms=1e3", "not an integer"},
        {"slow_ms=0x10", "not an integer"},
        {"slow_ms=+5", "not an integer"},
        {"slow_ms= 7", "not an integer"},
        {"slow_ms=", "not an integer"},
        {"slow_ms=200,slow_ms=300", "slow_ms given twice"},
        {",", "an empty item"},
        {"slow_ms=5,", "an empty item"},
        {"slow_ms=5,,probes=2", "an empty item"},
        {"=5", "unknown key ''"},
        {"wait_ms=2000,wait_max_ms=1000", "wait_max_ms out of range"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        wr_breaker_opts_default(&o);
        err[0] = '\0';
        if (wr_breaker_parse(&o, bad[i].spec, err, sizeof(err)) != WR_EINVAL ||
            !strstr(err, bad[i].said) || strstr(err, "breaker:"))
            fail_msg("'%s': got '%s', want '%s'", bad[i].spec, err, bad[i].said);
    }
    /* the largest count, a rate of 1, spaces after a comma, an empty spec */
    wr_breaker_opts_default(&o);
    assert_int_equal(
        wr_breaker_parse(&o, "wait_max_ms=4294967295, failure_rate=1", err, sizeof(err)), WR_OK);
    assert_int_equal(o.open_wait_max_ms, UINT32_MAX);
    assert_true(o.failure_rate == 1.0);
    assert_int_equal(wr_breaker_parse(&o, "", err, sizeof(err)), WR_OK);
}

static void test_names(void **state)
{
    (void)state;
    /* every state and every reason by the name breaker.h gives it; any
     * other value is "unknown" */
    static const struct {
        wr_breaker_state_t state;
        const char *name;
    } states[] = {{WR_BREAKER_CLOSED, "closed"},
                  {WR_BREAKER_OPEN, "open"},
                  {WR_BREAKER_HALF_OPEN, "half_open"}};
    static const struct {
        wr_breaker_why_t why;
        const char *name;
    } whys[] = {{WR_BREAKER_WHY_FAILURE_RATE, "failure_rate"},
                {WR_BREAKER_WHY_CONSECUTIVE, "consecutive_failures"},
                {WR_BREAKER_WHY_SLOW_RATE, "slow_call_rate"},
                {WR_BREAKER_WHY_WAIT_OVER, "wait_over"},
                {WR_BREAKER_WHY_PROBE_FAILED, "probe_failed"},
                {WR_BREAKER_WHY_PROBES_OK, "probes_succeeded"}};
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
        assert_string_equal(wr_breaker_state_name(states[i].state), states[i].name);
    for (size_t i = 0; i < sizeof whys / sizeof whys[0]; i++)
        assert_string_equal(wr_breaker_why_name(whys[i].why), whys[i].name);
    assert_string_equal(wr_breaker_state_name((wr_breaker_state_t)3), "unknown");
    assert_string_equal(wr_breaker_why_name((wr_breaker_why_t)6), "unknown");
}

#define TESTS(X)                                                                                   \
    X(test_defaults)                                                                               \
    X(test_bad_options)                                                                            \
    X(test_consecutive_failures_open)                                                              \
    X(test_failure_rate_window_arithmetic)                                                         \
    X(test_failure_rate_boundary)                                                                  \
    X(test_min_calls)                                                                              \
    X(test_slow_calls_open)                                                                        \
    X(test_open_refuses_then_half_open)                                                            \
    X(test_half_open_probe_limit_and_close)                                                        \
    X(test_backoff_doubles_caps_and_resets)                                                        \
    X(test_slow_probe_reopens)                                                                     \
    X(test_stale_permits_ignored)                                                                  \
    X(test_cancel_frees_probe_slot)                                                                \
    X(test_parse)                                                                                  \
    X(test_names)
WR_UNIT_MAIN(NULL, NULL, TESTS)
