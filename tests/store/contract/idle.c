/*
 * idle.c - the store contract, away, not gone (1.2): away people keep their place, page joins
 * that never asked again leave (K20 link scanners), the sweep, quiet status. Run by runner.c
 * against every backend of the store registry (tests listed in WR_CONTRACT_GROUP at the end;
 * *_redis_only groups run against Redis alone).
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

/* idleTimeoutSeconds (1.2, away, not gone): a waiting user whose last join
 * or poll is that old is away and keeps their place (no removal on read,
 * none by the tick while nobody is admitted); the sweep counts them in
 * away; a pending page join that never asked again leaves (abandonedTotal,
 * not leftTotal), on read or by the tick. */
static void t_idle_removed(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_idle_line(s, "idle", 1, 3, 2);
    pass_us(s, 800000);
    expect_waiting(s, "idle", "u2", 2, 5); /* a poll: seen now */
    /* 1.45 s: away on both stores (Redis: 1 s + its 250 ms slack); u2,
     * seen at 0.8 s, is not (away_setup in away.c: why not 0.55 s) */
    pass_us(s, 650000);
    /* u1 is away: keeps the place, and is seen again now */
    expect_waiting(s, "idle", "u1", 1, 5);
    /* p1 never asked again: gone on read */
    assert_int_equal(sh_status(s, "idle", "p1", &r), WR_ENOTINQUEUE);
    sh_expect_queue_stats(s, "idle", SH_ST(abandoned_total, 1), SH_ST(left_total, 0),
                          SH_ST(waiting, 4));
    /* u2 polls again just before the tick: on Redis this time is real, and
     * slow calls on a loaded machine could make u2, seen at 0.8 s, away by
     * then too (away_setup in away.c) */
    expect_waiting(s, "idle", "u2", 2, 4);
    /* the tick (paused: nobody's turn) removes p2 and marks u3 away */
    assert_int_equal(sh_admit(s, "idle", &r), WR_OK);
    sh_expect_stats(&r.admit.stats, SH_ST(abandoned_total, 2), SH_ST(waiting, 3), SH_ST(away, 1),
                    SH_ST(held, 0));
    expect_waiting(s, "idle", "u3", 3, 3); /* away, kept; seen now */
    assert_int_equal(sh_status(s, "idle", "p2", &r), WR_ENOTINQUEUE);
    /* a join of someone away is no newcomer: the same place */
    pass_us(s, 1400000);
    assert_int_equal(sh_join(s, "idle", "u2", &r), WR_OK);
    assert_int_equal(r.entry.position, 2);
    assert_int_equal(r.entry.waiting, 3);
    /* leave is still leftTotal */
    assert_int_equal(sh_leave(s, "idle", "u2"), WR_OK);
    sh_expect_queue_stats(s, "idle", SH_ST(left_total, 1), SH_ST(abandoned_total, 2),
                          SH_ST(waiting, 2));
}

/* The sweep's work per tick is bounded: at most WR_STORE_IDLE_SWEEP_MAX
 * removals of page joins that never asked again per tick, the rest on the
 * next ones (on Redis only the first admit call of a tick sweeps: every
 * instance calls admit each tick). */
static void t_idle_sweep_bounded(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    int n = WR_STORE_IDLE_SWEEP_MAX + 500;
    put_idle_line(s, "many", 1, 0, n);
    pass_us(s, 1450000);
    assert_int_equal(sh_admit(s, "many", &r), WR_OK);
    uint64_t first = r.admit.stats.abandoned_total;
    assert_true(first >= 1 && first <= WR_STORE_IDLE_SWEEP_MAX);
    assert_int_equal(r.admit.stats.waiting, (uint64_t)n - first);
    for (int i = 0; i < 10 && r.admit.stats.waiting > 0; i++) {
        pass_us(s, 100000); /* the next tick */
        assert_int_equal(sh_admit(s, "many", &r), WR_OK);
    }
    sh_expect_stats(&r.admit.stats, SH_ST(waiting, 0), SH_ST(abandoned_total, (uint64_t)n),
                    SH_ST(left_total, 0), SH_ST(away, 0)); /* page joins count in neither */
}

/* Redis: only the first admit call of a tick sweeps (every instance calls
 * admit each tick; the sweep's pace counts one sweep per tick). Ticks of
 * 1 s, and the two calls are checked to fall in one tick by their store
 * times (a pair that straddles a tick boundary is tried again). */
static void r_idle_sweep_once_per_tick(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = plain_cfg();
    c.paused = true;
    c.idle_timeout_seconds = 1;
    put_ok(s, "once", c);
    int n = 3 * WR_STORE_IDLE_SWEEP_MAX;
    join_page_n(s, "once", 1, n); /* page joins that never ask again: removed */
    pass_us(s, 1450000);
    bool checked = false;
    for (int attempt = 0; attempt < 3 && !checked; attempt++) {
        assert_int_equal(sh_admit(s, "once", &r), WR_OK);
        uint64_t after_first = r.admit.stats.abandoned_total;
        int64_t tick_first = r.admit.now_us / 1000000;
        assert_int_equal(sh_admit(s, "once", &r), WR_OK);
        if (r.admit.now_us / 1000000 != tick_first)
            continue;
        assert_int_equal(r.admit.stats.abandoned_total, after_first);
        checked = true;
    }
    assert_true(checked);
    uint64_t before = r.admit.stats.abandoned_total;
    assert_true(before >= 1 && before < (uint64_t)n);
    /* the next tick sweeps again */
    pass_us(s, 1000000);
    assert_int_equal(sh_admit(s, "once", &r), WR_OK);
    assert_true(r.admit.stats.abandoned_total > before);
}

/* idleTimeoutSeconds 0: nobody is ever removed for being quiet. */
static void t_idle_zero_never(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_idle_line(s, "quiet", 0, 2, 1);
    /* memory: 3 days of store time; Redis: a real 1.2 s */
    pass_us(s, s->ops->debug_advance_time ? 3 * 86400 * 1000000LL : 1200000);
    assert_int_equal(sh_admit(s, "quiet", &r), WR_OK);
    sh_expect_stats(&r.admit.stats, SH_ST(waiting, 3), SH_ST(abandoned_total, 0));
    expect_waiting(s, "quiet", "u1", 1, 3);
    /* the default is 120 s */
    wr_queue_config_t d;
    wr_qconfig_defaults(&d);
    assert_int_equal(d.idle_timeout_seconds, 120);
}

/* Page joins (join_page): the entry keeps its place and counts in waiting,
 * but admission passes over it until the user's next join, join_page or
 * status. API joins count at once. */
static void t_page_join_pending(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    put_ok(s, "page", mkcfg(50, 100, 0, 0, 300)); /* 5 per 100 ms tick */
    assert_int_equal(sh_join_page(s, "page", "p1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(sh_join_page(s, "page", "p2", &r), WR_OK);
    assert_int_equal(sh_join(s, "page", "u1", &r), WR_OK);
    assert_int_equal(sh_join_page(s, "page", "p3", &r), WR_OK);
    assert_int_equal(r.entry.position, 4);
    assert_int_equal(r.entry.waiting, 4);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US); /* all due (queue.h) */
    assert_int_equal(sh_admit(s, "page", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1); /* u1 only */
    assert_int_equal(a.admit.stats.waiting, 3);
    expect_admitted(s, "page", "u1");
    /* p2 asks again (the page's poll): admitted on the next tick, in its
     * place; p1 and p3 stay, skipped */
    expect_waiting(s, "page", "p2", 2, 3);
    admit_next_tick(s, "page", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(a.admit.stats.waiting, 2);
    expect_admitted(s, "page", "p2");
    /* p1 refreshes the page: a join_page of someone in line un-skips them */
    assert_int_equal(sh_join_page(s, "page", "p1", &r), WR_OK);
    assert_int_equal(r.entry.position, 1);
    admit_next_tick(s, "page", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    expect_admitted(s, "page", "p1");
    /* p3 never came back: still in line, never admitted */
    admit_next_tick(s, "page", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 0);
    sh_expect_stats(&a.admit.stats, SH_ST(waiting, 1), SH_ST(active, 3), SH_ST(abandoned_total, 0));
    /* a pending user who leaves is a leave */
    assert_int_equal(sh_leave(s, "page", "p3"), WR_OK);
    sh_expect_queue_stats(s, "page", SH_ST(waiting, 0), SH_ST(left_total, 1));
}

/* status_quiet answers as status does (it may only skip recording the
 * last-seen time of a user the caller saw recorded within the window). */
static void t_status_quiet(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    put_ok(s, "quiet", mkcfg(1, 1000, 0, 0, 300)); /* 1 per 1 s tick */
    join_due(s, "quiet", 1, 2);
    assert_int_equal(sh_status_quiet(s, "quiet", "u2", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, 2);
    assert_int_equal(r.entry.waiting, 2);
    assert_true(r.has_cfg);
    assert_int_equal(sh_status_quiet(s, "quiet", "nobody", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_admit(s, "quiet", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(sh_status_quiet(s, "quiet", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    /* the window: a quarter of the idle timeout, 30 s without one */
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    assert_int_equal(wr_store_seen_window_us(&c), 30000000);
    c.idle_timeout_seconds = 0;
    assert_int_equal(wr_store_seen_window_us(&c), 30000000);
    c.idle_timeout_seconds = 2;
    assert_int_equal(wr_store_seen_window_us(&c), 500000);
}

/* K20: maxActive 5, a high rate; five page joins with no later request,
 * then a person who joins and polls: admitted on the first tick after the
 * admission delay (queue.h); none of the five is admitted or holds a slot. */
static void t_k20_link_scanners(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    put_ok(s, "k20", mkcfg(1000, 100, 5, 0, 300));
    join_page_n(s, "k20", 1, 5); /* five scanners */
    assert_int_equal(sh_admit(s, "k20", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 0);
    assert_int_equal(sh_join(s, "k20", "person", &r), WR_OK);
    assert_int_equal(r.entry.position, 6);
    expect_waiting(s, "k20", "person", 6, 6);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US);
    admit_next_tick(s, "k20", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    sh_expect_stats(&a.admit.stats, SH_ST(active, 1), SH_ST(waiting, 5));
    expect_admitted(s, "k20", "person");
}

WR_CONTRACT_GROUP(idle, T(t_idle_removed), T(t_idle_sweep_bounded), T(t_idle_zero_never),
                  T(t_page_join_pending), T(t_status_quiet), T(t_k20_link_scanners));

WR_CONTRACT_GROUP(idle_redis_only, T(r_idle_sweep_once_per_tick));
