/*
 * stock.c - the store contract, the end of a sale (1.2): `closed` (nobody
 * joins or is admitted, places and live passes kept), the stock (taken by
 * every admission, held returns included; given back exactly once by a
 * pass that expires unconsumed or is given back; kept by a consumed one;
 * never below zero), sold out and its moment, a restock, and consume,
 * leave and expiry racing for the same passes. Run by runner.c against
 * every backend of the store registry (tests listed in WR_CONTRACT_GROUP at
 * the end).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/clock.h"
#include "contract.h"

/* A config with a stock of n (set: a PUT). */
static wr_queue_config_t stock_cfg(double rate, uint32_t ttl_s, int64_t n)
{
    wr_queue_config_t c = mkcfg(rate, 100, 0, 0, ttl_s);
    c.stock = n;
    c.stock_set = true;
    return c;
}

/* u's status must be the closed answer with reason why. */
static void expect_closed(wr_store_t *s, const char *q, const char *u, wr_close_reason_t why)
{
    sh_res_t r;
    assert_int_equal(sh_status(s, q, u, &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_CLOSED);
    assert_int_equal(r.entry.closed_reason, why);
}

static sh_res_t stats_of(wr_store_t *s, const char *q)
{
    sh_res_t r;
    assert_int_equal(sh_get(s, q, &r), WR_OK);
    return r;
}

/* closed: joins and statuses answer CLOSED, a newcomer is not added and a
 * stranger's status is not in queue; nobody is admitted though the budget
 * allows; a live pass still answers ADMITTED and is consumed; reopening
 * admits the line in order. */
static void t_stock_closed(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    wr_queue_config_t c = mkcfg(1000, 100, 0, 0, 300);
    put_ok(s, "cl", c);
    join_and_admit(s, "cl", 1, 1, &a);
    join_due(s, "cl", 2, 4);
    c.closed = true;
    put_ok(s, "cl", c);
    for (int i = 2; i <= 4; i++) {
        char u[8];
        snprintf(u, sizeof u, "u%d", i);
        expect_closed(s, "cl", u, WR_CLOSE_CLOSED);
        assert_int_equal(sh_join(s, "cl", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_CLOSED);
    }
    assert_int_equal(sh_join(s, "cl", "new", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_CLOSED);
    assert_int_equal(r.entry.closed_reason, WR_CLOSE_CLOSED);
    assert_int_equal(sh_status(s, "cl", "new", &r), WR_ENOTINQUEUE);
    admit_next_tick(s, "cl", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 0);
    assert_int_equal(a.admit.stats.waiting, 3); /* places kept, the newcomer not added */
    char jti[WR_JTI_LEN + 1];
    pass_of(s, "cl", "u1", jti);
    assert_int_equal(sh_join(s, "cl", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    assert_int_equal(sh_consume(s, "cl", "u1", jti, &r), WR_OK);
    c.closed = false;
    put_ok(s, "cl", c);
    expect_waiting(s, "cl", "u2", 1, 3);
    admit_next_tick(s, "cl", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 3);
    pass_of(s, "cl", "u2", jti);
}

/* The stock: admission takes at most what is left; stockLeft 0 with live
 * passes keeps people waiting (not sold out); a pass given back returns
 * one, a consumed one keeps it; the last consume sells out (the moment
 * recorded), people in line and newcomers answer CLOSED soldOut, nobody is
 * added; a restock clears the moment and resumes in order. */
static void t_stock_take_return_sell_out(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    wr_queue_config_t c = stock_cfg(1000, 300, 2);
    put_ok(s, "st", c);
    join_due(s, "st", 1, 5);
    assert_int_equal(sh_status(s, "st", "u3", &r), WR_OK);
    assert_int_equal(r.entry.stock_left, 2);
    assert_int_equal(sh_admit(s, "st", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 2);
    sh_expect_stats(&a.admit.stats, SH_ST(stock_left, 0),
                    SH_ST(sold_out_at_ms, -1)); /* passes live */
    admit_next_tick(s, "st", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 0); /* never below zero */
    assert_int_equal(sh_status(s, "st", "u3", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.stock_left, 0);
    /* given back: one returns, the next in line gets it */
    assert_int_equal(sh_leave(s, "st", "u2"), WR_OK);
    assert_int_equal(stats_of(s, "st").stats.stock_left, 1);
    admit_next_tick(s, "st", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(a.admit.stats.stock_left, 0);
    /* consumed passes keep their unit; the last one sells out */
    char j1[WR_JTI_LEN + 1], j3[WR_JTI_LEN + 1];
    pass_of(s, "st", "u1", j1);
    pass_of(s, "st", "u3", j3);
    int64_t before_ms = wr_clock_wall_us() / 1000 - 5000;
    assert_int_equal(sh_consume(s, "st", "u1", j1, &r), WR_OK);
    assert_int_equal(stats_of(s, "st").stats.sold_out_at_ms, -1);
    expect_waiting(s, "st", "u4", 1, 2);
    assert_int_equal(sh_consume(s, "st", "u3", j3, &r), WR_OK);
    r = stats_of(s, "st");
    assert_int_equal(r.stats.stock_left, 0);
    int64_t sold = r.stats.sold_out_at_ms;
    assert_true(sold >= before_ms);
    expect_closed(s, "st", "u4", WR_CLOSE_SOLD_OUT);
    expect_closed(s, "st", "u5", WR_CLOSE_SOLD_OUT);
    assert_int_equal(sh_join(s, "st", "late", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_CLOSED);
    assert_int_equal(r.entry.closed_reason, WR_CLOSE_SOLD_OUT);
    assert_int_equal(sh_status(s, "st", "late", &r), WR_ENOTINQUEUE);
    assert_int_equal(stats_of(s, "st").stats.sold_out_at_ms, sold); /* the moment, kept */
    /* a config change that does not set the stock keeps what is left */
    c.stock_set = false;
    c.stock = 7;
    put_ok(s, "st", c);
    r = stats_of(s, "st");
    sh_expect_stats(&r.stats, SH_ST(stock_left, 0), SH_ST(sold_out_at_ms, sold));
    /* a restock of one: not sold out, u4 (first in line) admitted, u5 not */
    c = stock_cfg(1000, 300, 1);
    put_ok(s, "st", c);
    r = stats_of(s, "st");
    sh_expect_stats(&r.stats, SH_ST(stock_left, 1), SH_ST(sold_out_at_ms, -1));
    admit_next_tick(s, "st", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    pass_of(s, "st", "u4", j1);
    expect_waiting(s, "st", "u5", 1, 1);
    assert_int_equal(a.admit.stats.admitted_total, 4);
    /* no stock any more: no limit, no stockLeft */
    c = stock_cfg(1000, 300, WR_STOCK_NONE);
    put_ok(s, "st", c);
    admit_next_tick(s, "st", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    sh_expect_stats(&a.admit.stats, SH_ST(stock_left, -1), SH_ST(sold_out_at_ms, -1));
}

/* An expired pass returns its unit exactly once, whoever removes it (the
 * sweep, a late consume, a late leave), and before the queue can count as
 * sold out. */
static void t_stock_expiry_returns_once(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    put_ok(s, "ex", stock_cfg(1000, 1, 2));
    join_and_admit(s, "ex", 3, 2, &a);
    char j1[WR_JTI_LEN + 1], j2[WR_JTI_LEN + 1];
    pass_of(s, "ex", "u1", j1);
    pass_of(s, "ex", "u2", j2);
    assert_int_equal(sh_status(s, "ex", "u1", &r), WR_OK);
    pass_store_time(s, r.entry.expires_at_us);
    /* u1's pass removed by a late consume (EXPIRED): one back */
    assert_int_equal(sh_consume(s, "ex", "u1", j1, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_EXPIRED);
    /* u2's by the sweep (queue_get sweeps): one back; then a late consume
     * and a late leave return nothing more */
    r = stats_of(s, "ex");
    sh_expect_stats(&r.stats, SH_ST(stock_left, 2), SH_ST(expired_total, 2),
                    SH_ST(sold_out_at_ms, -1));
    assert_int_equal(sh_consume(s, "ex", "u2", j2, &r), WR_ETOKEN);
    assert_int_equal(sh_leave(s, "ex", "u2"), WR_ENOTINQUEUE);
    assert_int_equal(sh_consume(s, "ex", "u1", j1, &r), WR_ETOKEN);
    r = stats_of(s, "ex");
    sh_expect_stats(&r.stats, SH_ST(stock_left, 2), SH_ST(expired_total, 2));
    /* stock 0 with an expired pass not yet swept is not sold out: the
     * status sweeps it first, u3 still waits */
    admit_next_tick(s, "ex", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1); /* u3 */
    wr_queue_config_t c = stock_cfg(1000, 1, 0);
    put_ok(s, "ex", c); /* nothing left, u3's pass live */
    join_due(s, "ex", 4, 4);
    assert_int_equal(sh_status(s, "ex", "u3", &r), WR_OK);
    pass_store_time(s, r.entry.expires_at_us);
    expect_waiting(s, "ex", "u4", 1, 1); /* u3's unit came back: 1 left */
    assert_int_equal(stats_of(s, "ex").stats.stock_left, 1);
}

/* A value of how many of the in-flight calls r[0..n) answered err. */
static int count_err(const sh_res_t *r, int n, wr_err_t err)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += r[i].err == err;
    return k;
}

/* Consume, leave and a second consume of the same passes in flight
 * together (sent before any answer), and expiry racing late calls: every
 * pass's unit comes back at most once and only when it was not consumed -
 * stockLeft is exactly the number of passes given back or expired. */
static void t_stock_concurrent_consume_leave_expiry(void **state)
{
    wr_store_t *s = *state;
    enum { N = 12 };
    sh_res_t a;
    put_ok(s, "cc", stock_cfg(1000, 1, N));
    join_and_admit(s, "cc", N + 2, N, &a);
    assert_int_equal(a.admit.stats.stock_left, 0);
    char jti[N][WR_JTI_LEN + 1];
    char users[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(users[i], sizeof users[i], "u%d", i + 1);
        pass_of(s, "cc", users[i], jti[i]);
    }
    /* u1..u4: consume and leave in flight; u5..u8: leave then consume;
     * u9..u10: two consumes; u11..u12: left to expire */
    sh_res_t c1[10], c2[10];
    int done = 0;
    for (int i = 0; i < 10; i++) {
        sh_begin(&c1[i]);
        sh_begin(&c2[i]);
    }
    for (int i = 0; i < 10; i++) {
        wr_err_t e1, e2;
        if (i < 4) {
            e1 = wr_store_consume(s, "cc", users[i], jti[i], sh_token_cb, &c1[i]);
            e2 = wr_store_leave(s, "cc", users[i], sh_done_cb, &c2[i]);
        } else if (i < 8) {
            e1 = wr_store_leave(s, "cc", users[i], sh_done_cb, &c1[i]);
            e2 = wr_store_consume(s, "cc", users[i], jti[i], sh_token_cb, &c2[i]);
        } else {
            e1 = wr_store_consume(s, "cc", users[i], jti[i], sh_token_cb, &c1[i]);
            e2 = wr_store_consume(s, "cc", users[i], jti[i], sh_token_cb, &c2[i]);
        }
        assert_int_equal(e1, WR_OK);
        assert_int_equal(e2, WR_OK);
    }
    for (int i = 0; i < 10; i++) {
        for (int k = 0; k < 200 && (c1[i].calls == 0 || c2[i].calls == 0); k++)
            sh_run_for(5);
        assert_int_equal(c1[i].calls, 1);
        assert_int_equal(c2[i].calls, 1);
        done++;
    }
    assert_int_equal(done, 10);
    /* each pass was used once: consumed or given back, never both */
    int consumed = 0, given = 0;
    for (int i = 0; i < 10; i++) {
        bool c_ok = i < 4 ? c1[i].err == WR_OK : c2[i].err == WR_OK;
        bool l_ok = i < 4 ? c2[i].err == WR_OK : i < 8 ? c1[i].err == WR_OK : false;
        if (i >= 8)
            c_ok = c1[i].err == WR_OK || c2[i].err == WR_OK;
        assert_true(c_ok != l_ok);
        consumed += c_ok;
        given += l_ok;
    }
    assert_int_equal(count_err(c1 + 8, 2, WR_OK) + count_err(c2 + 8, 2, WR_OK), 2);
    sh_res_t r = stats_of(s, "cc");
    sh_expect_stats(&r.stats, SH_ST(stock_left, given), SH_ST(consumed_total, (uint64_t)consumed));
    /* u11, u12 expire; a late consume and a late leave race the sweep */
    sh_res_t st;
    assert_int_equal(sh_status(s, "cc", "u11", &st), WR_OK);
    pass_store_time(s, st.entry.expires_at_us);
    sh_res_t x1, x2, x3;
    sh_begin(&x1);
    sh_begin(&x2);
    sh_begin(&x3);
    assert_int_equal(wr_store_consume(s, "cc", "u11", jti[10], sh_token_cb, &x1), WR_OK);
    assert_int_equal(wr_store_leave(s, "cc", "u12", sh_done_cb, &x2), WR_OK);
    assert_int_equal(wr_store_admit(s, "cc", sh_admit_cb, &x3), WR_OK);
    for (int k = 0; k < 200 && (x1.calls == 0 || x2.calls == 0 || x3.calls == 0); k++)
        sh_run_for(5);
    assert_int_equal(x1.err, WR_ETOKEN);
    assert_int_equal(x2.err, WR_ENOTINQUEUE);
    r = stats_of(s, "cc");
    /* the two expired ones returned one each, minus whatever the tick
     * admitted from them (u13, u14 in line) */
    assert_int_equal(r.stats.stock_left + (int64_t)(r.stats.admitted_total - N), given + 2);
    assert_true(r.stats.stock_left >= 0);
    assert_int_equal(r.stats.expired_total, 2);
}

/* Held returns take the stock like anyone: with nothing left a returned
 * held person waits (held answer); a unit given back admits them first. */
static void t_stock_held_returns(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a;
    wr_queue_config_t c = stock_cfg(1000, 300, 1);
    c.idle_timeout_seconds = 1;
    c.paused = true;
    put_ok(s, "sh", c);
    join_n(s, "sh", 1, 2);
    pass_us(s, 1450000); /* u1 away; u2 polls just before the tick (away_setup in away.c) */
    expect_waiting(s, "sh", "u2", 2, 2);
    c.paused = false;
    c.stock_set = false; /* keep what is left */
    put_ok(s, "sh", c);
    assert_int_equal(sh_admit(s, "sh", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1); /* u2; u1 was away: held */
    sh_expect_stats(&a.admit.stats, SH_ST(held, 1), SH_ST(stock_left, 0));
    expect_held(s, "sh", "u1", 0); /* returns */
    admit_next_tick(s, "sh", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 0); /* nothing left */
    expect_held(s, "sh", "u1", 0);
    assert_int_equal(sh_leave(s, "sh", "u2"), WR_OK); /* one back */
    admit_next_tick(s, "sh", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    sh_expect_stats(&a.admit.stats, SH_ST(returned_total, 1), SH_ST(stock_left, 0));
    expect_admitted(s, "sh", "u1");
}

/* The quiet rule (K29) and the end of a sale: a closed queue with people
 * in line and nothing live is quiet; so is a sold-out one; a live pass
 * (it may come back) keeps it busy. */
static void t_stock_quiet_rule(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a;
    wr_queue_config_t c = mkcfg(1000, 100, 0, 0, 300);
    c.paused = true;
    put_ok(s, "qs", c);
    join_due(s, "qs", 1, 2);
    assert_int_equal(sh_admit(s, "qs", &a), WR_OK);
    a.admit.config = &a.cfg;
    assert_false(wr_store_admit_quiet(&a.admit)); /* paused: people in line are work */
    c.paused = false;
    c.closed = true;
    put_ok(s, "qs", c);
    assert_int_equal(sh_admit(s, "qs", &a), WR_OK);
    a.admit.config = &a.cfg; /* (the harness keeps the config apart) */
    assert_int_equal(a.admit.stats.waiting, 2);
    assert_true(wr_store_admit_quiet(&a.admit));
    c = stock_cfg(1000, 300, 1);
    put_ok(s, "qs", c);
    admit_next_tick(s, "qs", 100000, a.admit.now_us / 100000, &a);
    a.admit.config = &a.cfg;
    assert_int_equal(a.admit.admitted, 1);
    assert_false(wr_store_admit_quiet(&a.admit)); /* u1's pass is live */
    char jti[WR_JTI_LEN + 1];
    sh_res_t r;
    pass_of(s, "qs", "u1", jti);
    assert_int_equal(sh_consume(s, "qs", "u1", jti, &r), WR_OK);
    admit_next_tick(s, "qs", 100000, a.admit.now_us / 100000, &a);
    a.admit.config = &a.cfg;
    assert_int_equal(a.admit.stats.waiting, 1);
    assert_true(a.admit.stats.sold_out_at_ms > 0);
    assert_true(wr_store_admit_quiet(&a.admit));
}

WR_CONTRACT_GROUP(stock, T(t_stock_closed), T(t_stock_take_return_sell_out),
                  T(t_stock_expiry_returns_once), T(t_stock_concurrent_consume_leave_expiry),
                  T(t_stock_held_returns), T(t_stock_quiet_rule));
