/*
 * opening.c - the store contract, the sale opening: the pre-queue, arrival order, chunked moves.
 * Run by runner.c against every backend of the store registry (tests
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

/* ------------------------------------------------------------ sale opening */

/* Puts q with config c, opening in ten minutes (sets c->opens_at_ms), then
 * joins <prefix>0..<prefix>(n-1): each answered PREQUEUE with that
 * opensAt, a join that placed them (added). */
static void prequeue_n(wr_store_t *s, const char *q, wr_queue_config_t *c, const char *prefix,
                       int n)
{
    sh_res_t r;
    char u[32];
    c->opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, q, *c);
    for (int i = 0; i < n; i++) {
        snprintf(u, sizeof u, "%s%d", prefix, i);
        assert_int_equal(sh_join(s, q, u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
        assert_true(r.entry.added);
        assert_int_equal(r.cfg.opens_at_ms, c->opens_at_ms);
    }
}

/* Before opensAt: joins go to the pre-queue (PREQUEUE), counted in
 * prequeue, not waiting; nobody is admitted; leave works. opensAt null
 * opens at once: the first join after it begins the opening and lines up
 * behind the whole pre-queue; admit moves it (also while paused). */
static void t_open_prequeue(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    char u[32];
    wr_queue_config_t c = mkcfg(1000, 100, 0, 0, 300);
    prequeue_n(s, "op", &c, "p", 50);
    for (int i = 0; i < 50; i++) { /* again: still there */
        snprintf(u, sizeof u, "p%d", i);
        assert_int_equal(sh_join(s, "op", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    }
    assert_int_equal(sh_status(s, "op", "p7", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    assert_int_equal(sh_status(s, "op", "nobody", &r), WR_ENOTINQUEUE);
    sh_expect_queue_stats(s, "op", SH_ST(prequeue, 50), SH_ST(waiting, 0));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sh_admit(s, "op", &r), WR_OK);
        assert_int_equal(r.admit.admitted, 0);
        assert_int_equal(r.admit.opening_moved, 0);
        assert_int_equal(r.admit.stats.prequeue, 50);
        sh_run_for(110);
    }
    assert_int_equal(sh_leave(s, "op", "p0"), WR_OK);
    assert_int_equal(sh_status(s, "op", "p0", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_leave(s, "op", "p0"), WR_ENOTINQUEUE);
    sh_expect_queue_stats(s, "op", SH_ST(prequeue, 49), SH_ST(left_total, 1));

    /* null: opens at once (paused: the pre-queue still enters the line) */
    c.opens_at_ms = WR_OPENS_AT_NONE;
    c.paused = true;
    put_ok(s, "op", c);
    assert_int_equal(sh_join(s, "op", "late1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, 50);
    assert_int_equal(r.entry.waiting, 50);
    assert_int_equal(sh_status(s, "op", "p5", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_true(r.entry.position >= 1 && r.entry.position <= 49);
    sh_expect_queue_stats(s, "op", SH_ST(prequeue, 0), SH_ST(waiting, 50));
    assert_int_equal(sh_admit(s, "op", &r), WR_OK);
    assert_int_equal(r.admit.opening_moved, 49);
    assert_int_equal(r.admit.opening_left, 0);
    assert_int_equal(r.admit.admitted, 0);
    bool seen[50] = {false};
    for (int i = 1; i < 50; i++) {
        snprintf(u, sizeof u, "p%d", i);
        assert_int_equal(sh_status(s, "op", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
        assert_true(r.entry.position >= 1 && r.entry.position <= 49);
        assert_false(seen[r.entry.position]);
        seen[r.entry.position] = true;
    }
    assert_int_equal(sh_status(s, "op", "late1", &r), WR_OK);
    assert_int_equal(r.entry.position, 50);
    /* after the opening, joins line up as before */
    assert_int_equal(sh_join(s, "op", "late2", &r), WR_OK);
    assert_int_equal(r.entry.position, 51);
    assert_int_equal(sh_leave(s, "op", "p3"), WR_OK);
    assert_int_equal(sh_status(s, "op", "late2", &r), WR_OK);
    assert_int_equal(r.entry.position, 50);
}

/* preQueueShuffle false: arrival order; a past opensAt opens at once. */
static void t_open_arrival_order(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    char u[32];
    wr_queue_config_t c = mkcfg(1000, 100, 0, 0, 300);
    c.paused = true;
    c.pre_queue_shuffle = false;
    prequeue_n(s, "ar", &c, "a", 20);
    c.opens_at_ms = wr_clock_wall_us() / 1000 - 1000;
    put_ok(s, "ar", c);
    assert_int_equal(sh_admit(s, "ar", &r), WR_OK);
    assert_int_equal(r.admit.opening_moved, 20);
    for (int i = 0; i < 20; i++) {
        snprintf(u, sizeof u, "a%d", i);
        assert_int_equal(sh_status(s, "ar", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
        assert_int_equal(r.entry.position, i + 1);
    }
}

/* A pre-queue larger than one chunk: while it moves, positions are a
 * permutation with later arrivals behind everyone of the pre-queue, and
 * admission takes only people below the moved part. */
static void t_open_chunked(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    char u[32];
    enum { N = 10000, LATE = 3 };
    wr_queue_config_t c = mkcfg(1000000, 100, 0, 0, 300);
    c.paused = true;
    prequeue_n(s, "ch", &c, "c", N);
    c.opens_at_ms = WR_OPENS_AT_NONE;
    put_ok(s, "ch", c);
    for (int i = 0; i < LATE; i++) {
        snprintf(u, sizeof u, "late%d", i);
        assert_int_equal(sh_join(s, "ch", u, &r), WR_OK);
        assert_int_equal(r.entry.position, N + i + 1);
    }
    assert_int_equal(sh_admit(s, "ch", &r), WR_OK);
    uint64_t moved = r.admit.opening_moved;
    assert_true(moved > 0 && moved < N);
    assert_int_equal(r.admit.opening_left, N - moved);
    assert_int_equal(r.admit.stats.waiting, N + LATE);
    unsigned char *seen = calloc(N + LATE + 1, 1);
    assert_non_null(seen);
    for (int i = 0; i < N + LATE; i++) {
        if (i < N)
            snprintf(u, sizeof u, "c%d", i);
        else
            snprintf(u, sizeof u, "late%d", i - N);
        assert_int_equal(sh_status(s, "ch", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
        assert_int_equal(r.entry.waiting, N + LATE);
        uint64_t p = r.entry.position;
        assert_true(p >= 1 && p <= N + LATE);
        assert_false(seen[p]);
        seen[p] = 1;
        if (i >= N)
            assert_int_equal(p, i + 1);
    }
    free(seen);
    /* admission while people are left to move: only the moved ones */
    c.paused = false;
    put_ok(s, "ch", c);
    uint64_t admitted = 0, left = N - moved;
    for (int k = 0; k < 50 && left > 0; k++) {
        sh_run_for(110);
        assert_int_equal(sh_admit(s, "ch", &r), WR_OK);
        moved += r.admit.opening_moved;
        admitted += r.admit.admitted;
        left = r.admit.opening_left;
        if (left > 0) /* nobody behind the part not yet moved */
            assert_true(admitted <= moved);
    }
    assert_int_equal(left, 0);
    assert_int_equal(moved, N);
    assert_int_equal(sh_get(s, "ch", &r), WR_OK);
    assert_int_equal(r.stats.prequeue, 0);
    assert_int_equal(r.stats.waiting + r.stats.admitted_total, N + LATE);
}

/* A join says whether it placed the person (entry.added: what the sale's
 * report counts as joined, at the join): a first join into the pre-queue
 * (API or page, and again after leaving it) or the line; never a repeat,
 * a status, the join of a pre-queue member the opening is moving or has
 * moved, nor of someone holding a pass. */
static void t_open_added(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    const wr_entry_state_t PRE = WR_ENTRY_PREQUEUE, IN = WR_ENTRY_WAITING;
    wr_queue_config_t c = mkcfg(1000, 100, 0, 0, 300);
    c.paused = true;
    prequeue_n(s, "ad", &c, "p", 2); /* each added */
    expect_entry(sh_join(s, "ad", "p0", &r), &r, PRE, false);
    expect_entry(sh_status(s, "ad", "p1", &r), &r, PRE, false);
    expect_entry(sh_join_page(s, "ad", "g1", &r), &r, PRE, true);
    expect_entry(sh_join_page(s, "ad", "g1", &r), &r, PRE, false);
    /* left before the opening: that place was a join; a new one is another */
    assert_int_equal(sh_leave(s, "ad", "p1"), WR_OK);
    expect_entry(sh_join(s, "ad", "p1", &r), &r, PRE, true);
    /* the opening: a newcomer lines up (added), the pre-queue's joins are
     * no new places, before their move and after it */
    c.opens_at_ms = WR_OPENS_AT_NONE;
    put_ok(s, "ad", c);
    expect_entry(sh_join(s, "ad", "late", &r), &r, IN, true);
    expect_entry(sh_join(s, "ad", "p0", &r), &r, IN, false);
    assert_int_equal(sh_admit(s, "ad", &r), WR_OK);
    assert_int_equal(r.admit.opening_moved, 3);
    expect_entry(sh_join(s, "ad", "p0", &r), &r, IN, false);
    expect_entry(sh_join(s, "ad", "late", &r), &r, IN, false);
    /* a pass: its holder's join carries it, no place */
    put_ok(s, "adl", mkcfg(1000, 100, 0, 0, 300));
    join_and_admit(s, "adl", 1, 1, NULL);
    expect_entry(sh_join(s, "adl", "u1", &r), &r, WR_ENTRY_ADMITTED, false);
}

WR_CONTRACT_GROUP(opening, T(t_open_prequeue), T(t_open_arrival_order), T(t_open_chunked),
                  T(t_open_added));
