/*
 * iteration.c - the store contract, calls made in one loop iteration (batched by store_redis): each
 * answered once, in call order. Run by runner.c against every backend of the store registry (tests
 * listed in WR_CONTRACT_GROUP at the end; *_redis_only groups run
 * against Redis alone).
 */
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "contract.h"

/* ------------------------------------------------------------ one loop iteration */

static wr_err_t step_call(wr_store_t *s, const step_t *st, sh_res_t *r)
{
    switch (st->op) {
    case 'j':
        return wr_store_join(s, st->q, st->u, sh_entry_cb, r);
    case 's':
        return wr_store_status(s, st->q, st->u, sh_entry_cb, r);
    case 'p':
        return wr_store_join_page(s, st->q, st->u, sh_entry_cb, r);
    case 'q':
        return wr_store_status_quiet(s, st->q, st->u, sh_entry_cb, r);
    case 'l':
        return wr_store_leave(s, st->q, st->u, sh_done_cb, r);
    case 'a':
        return wr_store_admit(s, st->q, sh_admit_cb, r);
    default:
        return wr_store_queue_delete(s, st->q, sh_done_cb, r);
    }
}

/* Callbacks of one queue come in call order (run_steps checks); not in
 * durability mode, where a join's answer waits for its WAIT and a status
 * sent after it is not held back. */
bool g_in_order = true;

/* Makes every call of steps in one go (no loop run in between), then runs
 * the loop until each answered, and checks each answer. */
void run_steps(wr_store_t *s, const step_t *steps, size_t n)
{
    sh_res_t *r = calloc(n, sizeof *r);
    assert_non_null(r);
    int want_calls = 0;
    for (size_t i = 0; i < n; i++) {
        sh_begin(&r[i]);
        wr_err_t rc = step_call(s, &steps[i], &r[i]);
        r[i].returned = true;
        if (rc != steps[i].rc)
            fail_msg("step %zu (%c %s %s): returned %s, want %s", i, steps[i].op, steps[i].q,
                     steps[i].u ? steps[i].u : "-", wr_errname(rc), wr_errname(steps[i].rc));
        assert_int_equal(r[i].calls, 0);
        want_calls += rc == WR_OK;
    }
    int64_t deadline = wr_clock_mono_ms() + SH_WAIT_MS;
    for (;;) {
        int calls = 0;
        for (size_t i = 0; i < n; i++)
            calls += r[i].calls;
        if (calls >= want_calls || wr_clock_mono_ms() > deadline)
            break;
        sh_run_for(5);
    }
    sh_run_for(20); /* nothing is answered twice */
    for (size_t i = 0; i < n; i++) {
        const step_t *st = &steps[i];
        if (st->rc != WR_OK) {
            assert_int_equal(r[i].calls, 0);
            continue;
        }
        if (r[i].calls != 1 || r[i].sync_call)
            fail_msg("step %zu (%c %s %s): %d callbacks%s", i, st->op, st->q, st->u ? st->u : "-",
                     r[i].calls, r[i].sync_call ? ", from inside the call" : "");
        if (r[i].err != st->want)
            fail_msg("step %zu (%c %s %s): %s, want %s", i, st->op, st->q, st->u ? st->u : "-",
                     wr_errname(r[i].err), wr_errname(st->want));
        if (st->want == WR_OK && strchr("jspq", st->op)) {
            assert_true(r[i].has_entry && r[i].has_cfg);
            if (st->pos > 0) {
                if (r[i].entry.state != WR_ENTRY_WAITING || (int)r[i].entry.position != st->pos ||
                    (int)r[i].entry.waiting != st->waiting)
                    fail_msg("step %zu (%c %s %s): state %d position %d of %d, want %d of %d", i,
                             st->op, st->q, st->u, r[i].entry.state, (int)r[i].entry.position,
                             (int)r[i].entry.waiting, st->pos, st->waiting);
            } else if (st->pos == -1) {
                assert_int_equal(r[i].entry.state, WR_ENTRY_ADMITTED);
            } else if (st->pos == -2) {
                assert_int_equal(r[i].entry.state, WR_ENTRY_PASSTHROUGH);
            }
            bool added = st->added > 0 && strchr("jp", st->op);
            if ((st->added != 0 || strchr("sq", st->op)) && r[i].entry.added != added)
                fail_msg("step %zu (%c %s %s): added %d, want %d", i, st->op, st->q, st->u,
                         r[i].entry.added, added);
        }
        if (st->want == WR_EFULL)
            assert_int_equal((int)r[i].entry.waiting, st->waiting);
        /* callbacks of one queue in call order */
        for (size_t k = 0; g_in_order && k < i; k++)
            if (steps[k].rc == WR_OK && strcmp(steps[k].q, st->q) == 0 && r[k].order > r[i].order)
                fail_msg("step %zu (%s) answered before step %zu", i, st->q, k);
    }
    free(r);
}

/* Mixed joins and statuses of two queues and an unknown one, a full line,
 * a rejoin, an unknown user, a refused user id, all in one iteration. */
static void t_iteration_mixed(void **state)
{
    wr_store_t *s = *state;
    put_ok(s, "bm", mkcfg(5, 1000, 0, 5, 300));
    put_ok(s, "bm2", plain_cfg());
    wr_queue_config_t off = plain_cfg();
    off.enabled = false;
    put_ok(s, "boff", off);
    join_n(s, "bm", 1, 2);
    const step_t steps[] = {
        STEP_WAITS('s', "bm", "u1", 1, 2),
        STEP_WAITS('j', "bm", "u3", 3, 3),
        STEP_WAITS('s', "bm", "u3", 3, 3),
        STEP_WAITS('j', "bm2", "u1", 1, 1),
        STEP_WAITS('j', "bm", "u1", 1, 3), /* already in line: keeps the place */
        STEP_FAILS('s', "bm", "ux", WR_ENOTINQUEUE),
        STEP_REFUSED('s', "bm", "bad user"),
        STEP_FAILS('j', "nosuch", "u1", WR_ENOTFOUND),
        STEP_WAITS('j', "bm", "u4", 4, 4),
        STEP_WAITS('j', "bm", "u5", 5, 5),
        STEP_FULL('j', "bm", "u6", 5), /* maxQueueSize 5 */
        STEP_FAILS('s', "bm", "u6", WR_ENOTINQUEUE),
        STEP_PASSES('j', "boff", "u1"),
        STEP_WAITS('s', "bm2", "u1", 1, 1),
        STEP_WAITS('j', "bm2", "u2", 2, 2),
        STEP_WAITS('s', "bm", "u2", 2, 5),
        STEP_REFUSED('j', "bm", ""),
        STEP_WAITS('s', "bm", "u5", 5, 5),
    };
    run_steps(s, steps, sizeof steps / sizeof steps[0]);
    sh_expect_queue_stats(s, "bm", SH_ST(waiting, 5), SH_ST(rejected_full_total, 1));
}

/* Other operations between the joins and statuses of one iteration keep
 * their place: a leave, an admission tick, a delete in the middle. */
static void t_iteration_ordered(void **state)
{
    wr_store_t *s = *state;
    put_ok(s, "bo", plain_cfg());
    join_n(s, "bo", 1, 2);
    const step_t steps[] = {
        STEP_WAITS('s', "bo", "u1", 1, 2),
        STEP_WAITS('j', "bo", "u3", 3, 3),
        STEP_DONE('l', "bo", "u1"),
        STEP_FAILS('s', "bo", "u1", WR_ENOTINQUEUE),
        STEP_WAITS('s', "bo", "u3", 2, 2),
        STEP_WAITS('j', "bo", "u1", 3, 3), /* back at the end */
        STEP_DONE('d', "bo", NULL),
        STEP_FAILS('s', "bo", "u2", WR_ENOTFOUND),
        STEP_FAILS('j', "bo", "u4", WR_ENOTFOUND),
    };
    run_steps(s, steps, sizeof steps / sizeof steps[0]);
}

/* More joins and statuses in one iteration than one script call takes
 * (store_redis: 64): every one in order, positions exact. */
static void t_iteration_many(void **state)
{
    enum { N = 150 };
    wr_store_t *s = *state;
    put_ok(s, "bmany", plain_cfg());
    static step_t steps[2 * N];
    static char users[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(users[i], sizeof users[i], "u%d", i + 1);
        steps[2 * i] = STEP_WAITS('j', "bmany", users[i], i + 1, i + 1);
        /* the status of the one before: the line has grown since */
        steps[2 * i + 1] = STEP_WAITS('s', "bmany", users[i > 0 ? i - 1 : 0], i > 0 ? i : 1, i + 1);
    }
    run_steps(s, steps, 2 * N);
}

/* close() with joins and statuses of this iteration not yet sent: each
 * gets WR_ECANCELED once, synchronously. */
static void t_iteration_close(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r[4];
    put_ok(s, "bcl", plain_cfg());
    join_n(s, "bcl", 1, 1);
    for (int i = 0; i < 4; i++) {
        sh_begin(&r[i]);
        wr_err_t rc = i % 2 ? wr_store_status(s, "bcl", "u1", sh_entry_cb, &r[i])
                            : wr_store_join(s, "bcl", i ? "u2" : "u3", sh_entry_cb, &r[i]);
        assert_int_equal(rc, WR_OK);
        r[i].returned = true;
    }
    wr_store_close(s);
    *state = NULL;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].err, WR_ECANCELED);
    }
    sh_run_for(50);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r[i].calls, 1);
        if (i > 0)
            assert_true(r[i].order > r[i - 1].order);
    }
}

/* Away, not gone, in one iteration: page joins, quiet and plain statuses
 * and joins of away and active users, each with the answer it gets when
 * the calls run one after the other. */
static void t_iteration_idle(void **state)
{
    wr_store_t *s = *state;
    put_idle_line(s, "bidle", 1, 3, 2);
    pass_us(s, 800000);
    const step_t seen[] = {
        STEP_WAITS('s', "bidle", "u2", 2, 5),
        STEP_WAITS('p', "bidle", "p2", 5, 5), /* in line: seen, no longer pending */
    };
    run_steps(s, seen, sizeof seen / sizeof seen[0]);
    /* 1.45 s: u1, u3 and p1 are away (Redis: 1 s + its 250 ms slack); u2
     * and p2, seen at 0.8 s, are not (away_setup in away.c: why not 0.55 s) */
    pass_us(s, 650000);
    const step_t steps[] = {
        STEP_WAITS('q', "bidle", "u2", 2, 5),
        STEP_WAITS('s', "bidle", "u1", 1, 5), /* away: keeps the place */
        STEP_WAITS('s', "bidle", "u2", 2, 5),
        STEP_WAITS('j', "bidle", "u3", 3, 5),           /* away: the same place */
        STEP_FAILS('s', "bidle", "p1", WR_ENOTINQUEUE), /* a scanner: removed */
        STEP_WAITS('p', "bidle", "p3", 5, 5),           /* a newcomer */
        STEP_WAITS('q', "bidle", "p2", 4, 5),
        STEP_WAITS('j', "bidle", "u2", 2, 5),
    };
    run_steps(s, steps, sizeof steps / sizeof steps[0]);
    sh_expect_queue_stats(s, "bidle", SH_ST(waiting, 5), SH_ST(abandoned_total, 1),
                          SH_ST(left_total, 0));
}

/* Whether each call placed its user (entry.added, what the sale's report
 * counts as joined), in one iteration: first joins and page joins into
 * the pre-queue and the line are places; repeated joins, statuses and
 * the join of someone holding a pass are not. */
static void t_iteration_added(void **state)
{
    wr_store_t *s = *state;
    wr_queue_config_t pre = mkcfg(1000, 100, 0, 0, 300);
    pre.opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, "bpre", pre);
    put_ok(s, "bline", mkcfg(1000, 100, 0, 0, 300));
    join_and_admit(s, "bline", 1, 1, NULL); /* u1 holds a pass */
    const step_t steps[] = {
        STEP_ADDED('j', "bpre", "p1"),  STEP_KEPT('j', "bpre", "p1"),
        STEP_KEPT('s', "bpre", "p1"),   STEP_ADDED('p', "bpre", "p2"),
        STEP_KEPT('p', "bpre", "p2"),   STEP_KEPT('q', "bpre", "p2"),
        STEP_ADDED('j', "bline", "u2"), STEP_KEPT('j', "bline", "u2"),
        STEP_ADDED('p', "bline", "u3"), STEP_KEPT('j', "bline", "u3"),
        STEP_KEPT('s', "bline", "u2"),  STEP_ADMITTED('j', "bline", "u1"),
        STEP_KEPT('j', "bline", "u1"),
    };
    run_steps(s, steps, sizeof steps / sizeof steps[0]);
    sh_expect_queue_stats(s, "bpre", SH_ST(prequeue, 2), SH_ST(waiting, 0));
}

WR_CONTRACT_GROUP(iteration, T(t_iteration_mixed), T(t_iteration_ordered), T(t_iteration_many),
                  T(t_iteration_close), T(t_iteration_idle), T(t_iteration_added));
