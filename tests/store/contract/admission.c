/*
 * admission.c - the store contract, the admission tick: counts and order, no catch-up after a gap
 * (K24), the admission delay, fractional rates, tickMs changes, paused, maxActive. Run by runner.c
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

static void t_admit_counts_and_order(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a1, a2;
    put_ok(s, "adm", plain_cfg());        /* 5 users per 1 s tick */
    join_and_admit(s, "adm", 12, 5, &a1); /* first tick ever: one tick's worth */
    sh_expect_stats(&a1.admit.stats, SH_ST(waiting, 7), SH_ST(active, 5), SH_ST(admitted_total, 5));
    /* each admitted user's wait, oldest arrival first */
    assert_int_equal(a1.admit.n_waited, 5);
    assert_true(a1.waited_last_us >= 0);
    assert_true(a1.waited_first_us >= a1.waited_last_us);
    assert_true(a1.waited_first_us < 60 * 1000000LL);
    assert_true(a1.has_cfg);
    assert_int_equal(a1.cfg.tick_ms, 1000);
    int64_t t1 = a1.admit.now_us / 1000000;

    /* idempotent per tick: same tick admits nobody; the next one admits 5 */
    assert_int_equal(sh_admit(s, "adm", &a2), WR_OK);
    int64_t t2 = a2.admit.now_us / 1000000;
    assert_true(t2 >= t1);
    uint64_t expect2 = t2 == t1 ? 0 : 5;
    assert_int_equal(a2.admit.admitted, expect2);
    assert_int_equal(a2.admit.stats.admitted_total, 5 + expect2);

    /* arrival order: u1..u5 hold tokens, u6 is first in line */
    char jtis[5][WR_JTI_LEN + 1];
    for (int i = 1; i <= 5; i++) {
        char u[8];
        snprintf(u, sizeof u, "u%d", i);
        assert_int_equal(sh_status(s, "adm", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
        assert_int_equal(strlen(r.entry.jti), WR_JTI_LEN);
        assert_int_equal(strspn(r.entry.jti, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                             "0123456789-_"),
                         WR_JTI_LEN);
        assert_int_equal(r.entry.issued_at_us, a1.admit.now_us);
        assert_int_equal(r.entry.expires_at_us, a1.admit.now_us + 300 * 1000000LL);
        memcpy(jtis[i - 1], r.entry.jti, sizeof jtis[0]);
        for (int j = 0; j < i - 1; j++)
            assert_string_not_equal(jtis[j], r.entry.jti);
        /* joining again while admitted answers the same token */
        assert_int_equal(sh_join(s, "adm", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
        assert_string_equal(r.entry.jti, jtis[i - 1]);
    }
    if (expect2 == 0) {
        assert_int_equal(sh_status(s, "adm", "u6", &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
        assert_int_equal(r.entry.position, 1);
        assert_int_equal(r.entry.waiting, 7);
    }
}

/* K24: after ticks that nobody ran (a late timer under load, a stall), the
 * next tick admits one tick's budget, never the missed ones at once. */
static void t_admit_no_catchup_after_gap(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a1, a2;
    put_ok(s, "gap", mkcfg(50, 100, 0, 0, 300)); /* 5 per tick */
    join_and_admit(s, "gap", 100, 5, &a1);
    /* let 3 to 4 ticks pass unrun */
    pass_store_time(s, a1.admit.now_us + 300000);
    assert_int_equal(sh_admit(s, "gap", &a2), WR_OK);
    assert_true(a2.admit.now_us / 100000 - a1.admit.now_us / 100000 >= 3);
    assert_int_equal(a2.admit.admitted, 5);
    sh_expect_stats(&a2.admit.stats, SH_ST(admitted_total, 10), SH_ST(waiting, 90));
}

/* The admission delay (queue.h): nobody is admitted sooner than 250 ms
 * after joining; the ticks before it admit nobody and carry nothing (K24:
 * the first tick after it admits one tick's budget); a join reports when
 * the first of the line and the joiner become due, a status does not. */
static void t_admit_delay(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a1, a2;
    put_ok(s, "dl", mkcfg(50, 100, 0, 0, 300)); /* 5 per tick */
    /* The embedded store's scores are wall clock, its ticks monotonic with
     * the offset read at open: they may differ by a few us. */
    const int64_t max_due = WR_ADMIT_DELAY_US + 1000;
    int64_t t0 = wr_clock_wall_us();
    assert_int_equal(sh_join(s, "dl", "u1", &r), WR_OK);
    assert_true(r.entry.own_due_us > 0 && r.entry.own_due_us <= max_due);
    assert_true(r.entry.head_due_us == r.entry.own_due_us);
    join_n(s, "dl", 2, 9);
    assert_int_equal(sh_join(s, "dl", "u10", &r), WR_OK);
    assert_int_equal(r.entry.position, 10);
    assert_true(r.entry.head_due_us > 0 && r.entry.head_due_us <= r.entry.own_due_us);
    assert_true(r.entry.own_due_us <= max_due);
    /* every join answered by now: the delay of the last one is counted
     * from here (on a loaded host the ten joins may take longer than it) */
    int64_t t_joined = wr_clock_wall_us();
    assert_int_equal(sh_status(s, "dl", "u10", &r), WR_OK);
    assert_int_equal(r.entry.head_due_us, -1);
    assert_int_equal(r.entry.own_due_us, -1);
    /* before the delay: ticks run, nobody admitted */
    assert_int_equal(sh_admit(s, "dl", &a1), WR_OK);
    if (a1.admit.now_us < t0 + WR_ADMIT_DELAY_US)
        assert_int_equal(a1.admit.admitted, 0);
    else /* a host stalled for (part of) the delay: those due, one tick's budget at most */
        assert_in_range(a1.admit.admitted, 0, 5);
    /* after it, several ticks later: one tick's budget, 5 (ten are due) */
    pass_store_time(s, t_joined + WR_ADMIT_DELAY_US);
    admit_next_tick(s, "dl", 100000, a1.admit.now_us / 100000, &a2);
    assert_int_equal(a2.admit.admitted, 5);
    assert_int_equal(a2.admit.stats.admitted_total, a1.admit.admitted + 5);
    /* in arrival order */
    expect_admitted(s, "dl", "u5");
    if (a1.admit.admitted == 0) {
        assert_int_equal(sh_status(s, "dl", "u6", &r), WR_OK);
        assert_int_equal(r.entry.position, 1);
    }
}

static void t_admit_fractional_rate(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a1, a2;
    /* 25/s at 100 ms ticks = 2.5 users per tick, kept exactly. */
    put_ok(s, "frac", mkcfg(25, 100, 0, 0, 300));
    join_and_admit(s, "frac", 40, 2, &a1); /* 2.5 -> 2, carry 0.5 */
    int64_t t1 = a1.admit.now_us / 100000;
    admit_next_tick(s, "frac", 100000, t1, &a2);
    assert_true(a2.admit.now_us / 100000 > t1);
    /* 0.5 + 2.5 = 3, whatever the gap (no catch-up, K24) */
    assert_int_equal(a2.admit.admitted, 3);
    sh_expect_stats(&a2.admit.stats, SH_ST(admitted_total, 2 + 3), SH_ST(waiting, 40 - 2 - 3));
}

/* Changing tickMs must not stop admission: the last tick run is counted in
 * the old tick length (100 ms ticks number ~10x more than 1 s ticks), so a
 * store that kept it would see every new tick as "already run". */
static void t_tick_change_keeps_admitting(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a2;
    put_ok(s, "tk", mkcfg(10, 100, 0, 0, 300)); /* 1 user per 100 ms tick */
    join_and_admit(s, "tk", 30, 1, NULL);
    put_ok(s, "tk", mkcfg(10, 1000, 0, 0, 300)); /* now 10 users per 1 s tick */
    assert_int_equal(sh_admit(s, "tk", &a2), WR_OK);
    /* The first tick after the change counts as a first tick: one tick's worth. */
    assert_int_equal(a2.admit.admitted, 10);
    sh_expect_stats(&a2.admit.stats, SH_ST(admitted_total, 11), SH_ST(waiting, 19));
}

static void t_paused_admits_nobody(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a, a2;
    wr_queue_config_t c = mkcfg(50, 100, 0, 0, 300);
    c.paused = true;
    put_ok(s, "pz", c);
    join_and_admit(s, "pz", 3, 0, &a);
    assert_true(a.cfg.paused);
    admit_next_tick(s, "pz", 100000, a.admit.now_us / 100000, &a2);
    assert_int_equal(a2.admit.admitted, 0);
    assert_int_equal(a2.admit.stats.waiting, 3);
}

static void t_max_active_and_leave_admitted(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    /* 5 allowed per tick, but at most 3 live tokens */
    put_ok(s, "cap", mkcfg(50, 100, 3, 0, 300));
    join_and_admit(s, "cap", 10, 3, &a);
    sh_expect_stats(&a.admit.stats, SH_ST(active, 3), SH_ST(waiting, 7));
    /* full: later ticks admit nobody */
    admit_next_tick(s, "cap", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 0);
    assert_int_equal(a.admit.stats.active, 3);

    /* consuming one frees exactly one slot */
    char jti[WR_JTI_LEN + 1];
    pass_of(s, "cap", "u1", jti);
    assert_int_equal(sh_consume(s, "cap", "u1", jti, &r), WR_OK);
    admit_next_tick(s, "cap", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    sh_expect_stats(&a.admit.stats, SH_ST(active, 3), SH_ST(waiting, 6));
    expect_admitted(s, "cap", "u4");

    /* leaving while admitted revokes the token and frees the slot at once */
    pass_of(s, "cap", "u2", jti);
    assert_int_equal(sh_leave(s, "cap", "u2"), WR_OK);
    sh_expect_queue_stats(s, "cap", SH_ST(active, 2), SH_ST(left_total, 1));
    assert_int_equal(sh_leave(s, "cap", "u2"), WR_ENOTINQUEUE);
    assert_int_equal(sh_consume(s, "cap", "u2", jti, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    admit_next_tick(s, "cap", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    sh_expect_stats(&a.admit.stats, SH_ST(active, 3), SH_ST(waiting, 5), SH_ST(admitted_total, 5),
                    SH_ST(consumed_total, 1));
}

/* ------------------------------------------------- K29: quiet queues */

/* The quiet rule (store.h wr_store_admit_quiet) on the store's answers:
 * quiet while nothing is waiting or live, busy from a join (line or
 * pre-queue) until the last token or session is gone; the quiet answer
 * still carries the queue's totals and config. */
static void t_k29_quiet_rule(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, u;
    put_ok(s, "qt", mkcfg(50, 100, 0, 0, 1)); /* ttl 1 s */
    assert_int_equal(sh_admit(s, "qt", &r), WR_OK);
    assert_true(wr_store_admit_quiet(&r.admit));
    assert_true(r.has_cfg);
    assert_int_equal(r.cfg.tick_ms, 100);
    /* a join: busy */
    join_n(s, "qt", 1, 1);
    assert_int_equal(sh_admit(s, "qt", &r), WR_OK);
    assert_false(wr_store_admit_quiet(&r.admit));
    assert_int_equal(r.admit.stats.waiting, 1);
    /* admitted, the token live: still busy */
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US);
    admit_next_tick(s, "qt", 100000, r.admit.now_us / 100000, &r);
    assert_int_equal(r.admit.admitted, 1);
    assert_false(wr_store_admit_quiet(&r.admit));
    assert_int_equal(sh_status(s, "qt", "u1", &u), WR_OK);
    assert_int_equal(u.entry.state, WR_ENTRY_ADMITTED);
    /* the token expired: quiet again, the totals carried */
    pass_store_time(s, u.entry.expires_at_us);
    assert_int_equal(sh_admit(s, "qt", &r), WR_OK);
    assert_true(wr_store_admit_quiet(&r.admit));
    sh_expect_stats(&r.admit.stats, SH_ST(admitted_total, 1), SH_ST(expired_total, 1));
    /* a join and a leave: quiet, counted */
    join_n(s, "qt", 2, 2);
    assert_int_equal(sh_leave(s, "qt", "u2"), WR_OK);
    assert_int_equal(sh_admit(s, "qt", &r), WR_OK);
    assert_true(wr_store_admit_quiet(&r.admit));
    assert_int_equal(r.admit.stats.left_total, 1);
    /* a pre-queue (opensAt ahead): busy */
    wr_queue_config_t c = mkcfg(50, 100, 0, 0, 1);
    c.opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, "qt", c);
    assert_int_equal(sh_admit(s, "qt", &r), WR_OK);
    assert_true(wr_store_admit_quiet(&r.admit));
    assert_int_equal(r.cfg.opens_at_ms, c.opens_at_ms);
    assert_int_equal(sh_join(s, "qt", "p1", &u), WR_OK);
    assert_int_equal(u.entry.state, WR_ENTRY_PREQUEUE);
    assert_int_equal(sh_admit(s, "qt", &r), WR_OK);
    assert_false(wr_store_admit_quiet(&r.admit));
    assert_int_equal(r.admit.stats.prequeue, 1);
}

WR_CONTRACT_GROUP(admission, T(t_admit_counts_and_order), T(t_admit_no_catchup_after_gap),
                  T(t_admit_delay), T(t_admit_fractional_rate), T(t_tick_change_keeps_admitting),
                  T(t_paused_admits_nobody), T(t_max_active_and_leave_admitted),
                  T(t_k29_quiet_rule));
