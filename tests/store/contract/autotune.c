/*
 * autotune.c - the store contract of autotune (store.h autotune): reports
 * kept with the store's time, the compare-and-set of the rate in use on
 * its step time, the kept rate read back (also in queue_get's stats), the
 * admission tick computing its exact fractional budget from the kept rate
 * clamped into the config's bounds, and a changed autotune object starting
 * the rate again. Run by runner.c against every backend.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "contract.h"

typedef struct {
    sh_res_t r;
    wr_autotune_state_rec_t st;
} at_res_t;

static void at_cb(wr_err_t err, const wr_autotune_state_rec_t *st, void *arg)
{
    at_res_t *a = arg;
    sh_note(&a->r, err);
    if (st)
        a->st = *st;
}

static wr_err_t at_call(wr_store_t *s, const char *q, const wr_autotune_req_t *req, at_res_t *a)
{
    memset(a, 0, sizeof *a);
    sh_begin(&a->r);
    sh_settle(&a->r, wr_store_autotune(s, q, req, at_cb, a));
    sh_wait_one(&a->r);
    return a->r.err;
}

static wr_queue_config_t mkauto(double rate, uint32_t tick_ms, double lo, double hi)
{
    wr_queue_config_t c = mkcfg(rate, tick_ms, 0, 0, 300);
    c.has_autotune = true;
    c.autotune_min = lo;
    c.autotune_max = hi;
    c.autotune_target_ms = 400;
    return c;
}

static void t_autotune_state(void **state)
{
    wr_store_t *s = *state;
    at_res_t a;
    wr_autotune_req_t read = {0};
    assert_int_equal(at_call(s, "none", &read, &a), WR_ENOTFOUND);
    put_ok(s, "at", mkauto(100, 100, 10, 200));
    assert_int_equal(at_call(s, "at", &read, &a), WR_OK);
    assert_true(a.st.rate == 0);
    assert_int_equal(a.st.step_us, 0);
    assert_int_equal(a.st.reports[0].at_us, 0);
    assert_int_equal(a.st.reports[1].at_us, 0);
    assert_false(a.st.applied);
    assert_true(a.st.now_us > 0);
    /* a report: kept with the store's time of the call */
    wr_autotune_req_t rep = {.report = true, .source = 0, .latency_ms = 250.5, .error_rate = 0.02};
    assert_int_equal(at_call(s, "at", &rep, &a), WR_OK);
    assert_true(a.st.reports[0].latency_ms == 250.5);
    assert_true(a.st.reports[0].error_rate == 0.02);
    assert_int_equal(a.st.reports[0].at_us, a.st.now_us);
    assert_int_equal(a.st.reports[1].at_us, 0);
    rep.source = 1;
    rep.latency_ms = 9;
    rep.error_rate = 0;
    assert_int_equal(at_call(s, "at", &rep, &a), WR_OK);
    assert_true(a.st.reports[1].latency_ms == 9);
    assert_true(a.st.reports[0].latency_ms == 250.5); /* the other slot kept */
    /* compare-and-set on the step time: the first of two wins */
    wr_autotune_req_t set = {
        .set = true, .expect_step_us = 0, .rate = 37.5, .cut_latency_ms = 250.5};
    assert_int_equal(at_call(s, "at", &set, &a), WR_OK);
    assert_true(a.st.applied);
    assert_true(a.st.rate == 37.5);
    assert_true(a.st.cut_latency_ms == 250.5);
    assert_int_equal(a.st.step_us, a.st.now_us);
    int64_t step = a.st.step_us;
    set.rate = 12;
    assert_int_equal(at_call(s, "at", &set, &a), WR_OK); /* expects 0: lost */
    assert_false(a.st.applied);
    assert_true(a.st.rate == 37.5);
    assert_int_equal(a.st.step_us, step);
    set.expect_step_us = step;
    set.rate = 1.0 / 3; /* kept to the last bit */
    set.cut_latency_ms = 0;
    assert_int_equal(at_call(s, "at", &set, &a), WR_OK);
    assert_true(a.st.applied);
    assert_true(a.st.rate == 1.0 / 3);
    sh_res_t g;
    assert_int_equal(sh_get(s, "at", &g), WR_OK);
    assert_true(g.stats.autotune_rate == 1.0 / 3);
    /* arguments */
    wr_autotune_req_t bad = {.report = true, .source = WR_AUTOTUNE_SOURCES, .latency_ms = 1};
    assert_int_equal(wr_store_autotune(s, "at", &bad, at_cb, &a), WR_EINVAL);
    bad = (wr_autotune_req_t){.report = true, .latency_ms = -1};
    assert_int_equal(wr_store_autotune(s, "at", &bad, at_cb, &a), WR_EINVAL);
    bad = (wr_autotune_req_t){.report = true, .latency_ms = 1, .error_rate = 1.5};
    assert_int_equal(wr_store_autotune(s, "at", &bad, at_cb, &a), WR_EINVAL);
    bad = (wr_autotune_req_t){.set = true, .rate = 0};
    assert_int_equal(wr_store_autotune(s, "at", &bad, at_cb, &a), WR_EINVAL);
    assert_int_equal(wr_store_autotune(s, "at", NULL, at_cb, &a), WR_EINVAL);
    assert_int_equal(wr_store_autotune(s, "bad name!", &read, at_cb, &a), WR_EINVAL);
    assert_int_equal(wr_store_autotune(s, "at", &read, NULL, &a), WR_EINVAL);
}

/* The admission tick uses the kept rate with the same exact fractional
 * budget as a configured one: 25/s at 100 ms ticks admits 2, then 3. */
static void t_autotune_admits_at_kept_rate(void **state)
{
    wr_store_t *s = *state;
    at_res_t a;
    sh_res_t a1, a2;
    put_ok(s, "atr", mkauto(1000, 100, 1, 1000)); /* would start at 1000 */
    wr_autotune_req_t set = {.set = true, .rate = 25};
    assert_int_equal(at_call(s, "atr", &set, &a), WR_OK);
    assert_true(a.st.applied);
    join_and_admit(s, "atr", 40, 2, &a1); /* 2.5 -> 2, carry 0.5 */
    int64_t t1 = a1.admit.now_us / 100000;
    admit_next_tick(s, "atr", 100000, t1, &a2);
    assert_int_equal(a2.admit.admitted, 3); /* 0.5 + 2.5 */
    /* a kept rate outside new bounds is clamped: min 50 -> 5 a tick */
    wr_queue_config_t c = mkauto(1000, 100, 50, 1000);
    c.autotune_target_ms = 400;
    put_ok(s, "atr", c); /* another autotune object: the kept rate is dropped... */
    assert_int_equal(at_call(s, "atr", &(wr_autotune_req_t){0}, &a), WR_OK);
    assert_true(a.st.rate == 0);
    assert_int_equal(a.st.step_us, 0);
    set.rate = 25; /* ...so keep 25 again, below the new min */
    assert_int_equal(at_call(s, "atr", &set, &a), WR_OK);
    assert_true(a.st.applied);
    sh_res_t a3;
    admit_next_tick(s, "atr", 100000, a2.admit.now_us / 100000, &a3);
    assert_int_equal(a3.admit.admitted, 5); /* 50/s: 5 a tick (carry 0.5 + 5) */
}

/* Another autotune object starts the rate again; the same one (or another
 * field changed) keeps it; no autotune: the configured rate. */
static void t_autotune_config_change(void **state)
{
    wr_store_t *s = *state;
    at_res_t a;
    sh_res_t g;
    wr_queue_config_t c = mkauto(100, 100, 10, 200);
    put_ok(s, "atc", c);
    wr_autotune_req_t set = {.set = true, .rate = 42};
    assert_int_equal(at_call(s, "atc", &set, &a), WR_OK);
    c.paused = true;
    put_ok(s, "atc", c); /* a PATCH of paused: kept */
    assert_int_equal(at_call(s, "atc", &(wr_autotune_req_t){0}, &a), WR_OK);
    assert_true(a.st.rate == 42);
    assert_int_equal(sh_get(s, "atc", &g), WR_OK);
    assert_true(g.stats.autotune_rate == 42);
    assert_true(wr_store_rate_in_use(&g.cfg, g.stats.autotune_rate) == 42);
    c.autotune_target_ms = 500;
    put_ok(s, "atc", c);
    assert_int_equal(at_call(s, "atc", &(wr_autotune_req_t){0}, &a), WR_OK);
    assert_true(a.st.rate == 0);
    assert_int_equal(sh_get(s, "atc", &g), WR_OK);
    assert_true(wr_store_rate_in_use(&g.cfg, g.stats.autotune_rate) == 100); /* the start */
    c.has_autotune = false;
    put_ok(s, "atc", c);
    assert_int_equal(sh_get(s, "atc", &g), WR_OK);
    assert_true(g.stats.autotune_rate == 0);
}

WR_CONTRACT_GROUP(autotune, T(t_autotune_state), T(t_autotune_admits_at_kept_rate),
                  T(t_autotune_config_change));
