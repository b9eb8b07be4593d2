/*
 * test_reporter.c - the instance's reporter (reporter.c) on a real
 * libevent base, against the fake store with a report operation of this
 * file's own (it records each call and keeps its callback, answered by
 * the test).
 *
 * Checked, the store calls the reporter makes: counts (joins) wait for
 * the 200 ms batch, ten of one minute in one WRITE of one field; the
 * waits of an admitting tick are sent at once, in a WRITE of their own
 * (a report read on another instance cannot flush this one's counts: it
 * must find them in the store); a flush (the report's GET) sends what is
 * held; with nothing held no call is made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <event2/event.h>
#include <string.h>

#include "fake_store.h"
#include "runtime/reporter.h"
#include "store/store.h"
#include "unit_main.h"

#define CALLS_MAX 16

typedef struct {
    wr_store_report_kind_t kind;
    size_t n_adds;
    int64_t added; /* the sum of its adds */
    wr_store_report_cb cb;
    void *arg;
} rcall_t;

static fake_store_t g_fake;
static rcall_t g_calls[CALLS_MAX];
static int g_n;

static wr_err_t f_report(wr_store_t *s, const wr_store_report_req_t *req, wr_store_report_cb cb,
                         void *arg)
{
    (void)s;
    assert_true(g_n < CALLS_MAX);
    rcall_t *c = &g_calls[g_n++];
    c->kind = req->kind;
    c->n_adds = req->n_adds;
    c->added = 0;
    for (size_t i = 0; i < req->n_adds; i++)
        c->added += req->adds[i].n;
    c->cb = cb;
    c->arg = arg;
    return WR_OK;
}

/* Answers every call still unanswered (WR_OK, no pairs). */
static void answer_all(void)
{
    for (int i = 0; i < g_n; i++) {
        if (g_calls[i].cb) {
            wr_store_report_cb cb = g_calls[i].cb;
            g_calls[i].cb = NULL;
            cb(WR_OK, NULL, 0, g_calls[i].arg);
        }
    }
}

static void run_ms(struct event_base *loop, long ms)
{
    struct timeval tv = {0, ms * 1000};
    event_base_loopexit(loop, &tv);
    event_base_dispatch(loop);
}

/* 2026-01-01 12:00:30 UTC: the middle of a minute of a day */
#define T0_US ((int64_t)1767268830 * 1000000)

static void t_counts_batched_waits_at_once(void **state)
{
    (void)state;
    struct event_base *loop = event_base_new();
    assert_non_null(loop);
    fs_init(&g_fake, 0, NULL);
    g_fake.ops.report = f_report;
    g_n = 0;
    wr_reporter_t *r = wr_reporter_new(loop, &g_fake.base, 1);
    assert_non_null(r);
    /* the store's clock: the middle of a minute (the counts' minute) */
    wr_reporter_admitted(r, "q1", T0_US, NULL, 0, -1);
    assert_int_equal(g_n, 0); /* nobody admitted: nothing to send */

    /* ten joins: held for the batch, one field */
    for (int i = 0; i < 10; i++)
        wr_reporter_count(r, "q1", WR_REPORT_JOINED, 1);
    assert_int_equal(g_n, 0);
    run_ms(loop, 350); /* the 200 ms batch */
    assert_int_equal(g_n, 1);
    assert_int_equal(g_calls[0].kind, WR_STORE_REPORT_WRITE);
    assert_int_equal(g_calls[0].n_adds, 1);
    assert_int_equal(g_calls[0].added, 10);
    assert_int_equal(wr_reporter_in_flight(r), 1);
    answer_all();
    assert_int_equal(wr_reporter_in_flight(r), 0);

    /* an admitting tick: its waits (one bucket) sent at once */
    const int64_t waited[2] = {5000000, 5000000};
    wr_reporter_admitted(r, "q1", T0_US + 10000, waited, 2, -1);
    assert_int_equal(g_n, 2);
    assert_int_equal(g_calls[1].n_adds, 1);
    assert_int_equal(g_calls[1].added, 2);
    answer_all();

    /* a flush sends what is held at once */
    wr_reporter_count(r, "q1", WR_REPORT_JOINED, 3);
    wr_reporter_flush(r, "q1");
    assert_int_equal(g_n, 3);
    assert_int_equal(g_calls[2].added, 3);
    answer_all();

    run_ms(loop, 250); /* nothing left: no call */
    assert_int_equal(g_n, 3);
    wr_reporter_free(r);
    event_base_free(loop);
}

#define TESTS(X) X(t_counts_batched_waits_at_once)
WR_UNIT_MAIN(NULL, NULL, TESTS)
