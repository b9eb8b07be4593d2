/*
 * unseen.c - the store contract, an unseen pass is not a lost place (1.3,
 * cases K35, K36): a pass that expires before any join, status or page
 * join answered it ADMITTED sends its holder back to held - held from the
 * expiry, admitted first at the next tick once they ask again, gone after
 * awayHoldSeconds (at once with 0) - and its stock unit and active slot
 * come back as for any expired pass (stats unseen_expired_total); a pass
 * an answer carried is gone at its expiry, as ever. Run by runner.c
 * against every backend of the store registry (tests listed in
 * WR_CONTRACT_GROUP at the end). On Redis the time is real: a pass of 1 s
 * is waited out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "contract.h"

/* Ticks of 100 ms at one admission per tick, passes of 1 s, stock 5 (set
 * by the first put only: a put that does not set it keeps what is left),
 * a hold of hold seconds; paused as given. */
static wr_queue_config_t unseen_cfg(uint32_t hold, bool paused)
{
    wr_queue_config_t c = mkcfg(10, 100, 0, 0, 1);
    c.stock = 5;
    c.stock_set = !paused;
    c.away_hold_seconds = hold;
    c.paused = paused;
    return c;
}

/* Ticks until one admits someone (bounded); a: the admitting call. */
static void admit_one(wr_store_t *s, const char *q, sh_res_t *a)
{
    assert_int_equal(sh_admit(s, q, a), WR_OK);
    for (int i = 0; i < 20 && a->admit.admitted == 0; i++)
        admit_next_tick(s, q, 100000, a->admit.now_us / 100000, a);
    assert_int_equal(a->admit.admitted, 1);
}

/* u1 joins and polls (WAITING), then is admitted by a tick and never asks
 * again: no answer carries the pass. u2, u3 join after; the queue pauses. */
static void unseen_setup(wr_store_t *s, const char *q, uint32_t hold)
{
    sh_res_t a;
    put_ok(s, q, unseen_cfg(hold, false));
    join_due(s, q, 1, 1);
    expect_waiting(s, q, "u1", 1, 1);
    admit_one(s, q, &a);
    sh_expect_stats(&a.admit.stats, SH_ST(active, 1), SH_ST(stock_left, 4));
    put_ok(s, q, unseen_cfg(hold, true));
    join_n(s, q, 2, 3);
}

/* A tick of q (paused: it admits nobody) after the passes expired: the
 * counts it reports, every pass gone (active 0) and every unit back (stock
 * 5). */
static void expect_expired(wr_store_t *s, const char *q, uint64_t expired, uint64_t unseen,
                           uint64_t held, uint64_t abandoned)
{
    sh_res_t a;
    assert_int_equal(sh_admit(s, q, &a), WR_OK);
    assert_int_equal(a.admit.admitted, 0);
    sh_expect_stats(&a.admit.stats, SH_ST(expired_total, expired),
                    SH_ST(unseen_expired_total, unseen), SH_ST(held, held),
                    SH_ST(abandoned_total, abandoned), SH_ST(active, 0), SH_ST(stock_left, 5));
}

/* The passes expire (1.1 s: their 1 s and a tick): the tick's counts, as
 * expect_expired checks them, and u1 is gone (not held). */
static void expect_u1_gone(wr_store_t *s, const char *q, uint64_t expired, uint64_t unseen,
                           uint64_t held, uint64_t abandoned)
{
    sh_res_t r;
    pass_us(s, 1100000);
    expect_expired(s, q, expired, unseen, held, abandoned);
    assert_int_equal(sh_status(s, q, "u1", &r), WR_ENOTINQUEUE);
}

/* K35: the pass expires unseen - its holder is held (out of every count of
 * the line), its unit and slot are back; their next poll is the held
 * answer and the next tick admits them first, ahead of u2 and u3 who
 * joined later. Then that new pass is seen (a poll answered it) and lets
 * expire: gone, as ever (not held again, not counted unseen). */
static void t_unseen_expiry_holds(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a;
    unseen_setup(s, "un", 1800);
    pass_us(s, 1100000);
    expect_expired(s, "un", 1, 1, 1, 0); /* held; the unit and the slot came back */
    /* u1 wakes: held, first */
    expect_held(s, "un", "u1", 2);
    expect_waiting(s, "un", "u2", 1, 2); /* the held are not in the line */
    wr_queue_config_t c = unseen_cfg(1800, false);
    c.stock_set = false;
    put_ok(s, "un", c);
    admit_one(s, "un", &a);
    sh_expect_stats(&a.admit.stats, SH_ST(returned_total, 1), SH_ST(held, 0), SH_ST(waiting, 2),
                    SH_ST(stock_left, 4));
    expect_admitted(s, "un", "u1"); /* this answer carries it */
    expect_waiting(s, "un", "u2", 1, 2);
    /* a seen pass that expires: gone */
    put_ok(s, "un", unseen_cfg(1800, true));
    expect_u1_gone(s, "un", 2, 1, 0, 0);
}

/* The unseen expiry happens wherever passes are swept: a poll that comes
 * before any tick swept the pass finds its holder held at once (the held
 * answer, not "not in queue"). A join is answered the same. */
static void t_unseen_expiry_on_poll(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    unseen_setup(s, "unp", 1800);
    pass_us(s, 1100000);
    expect_held(s, "unp", "u1", 2); /* u2 and u3 wait */
    assert_int_equal(sh_join(s, "unp", "u1", &r), WR_OK);
    assert_true(r.entry.held);
    sh_expect_queue_stats(s, "unp", SH_ST(unseen_expired_total, 1), SH_ST(held, 1),
                          SH_ST(stock_left, 5));
}

/* awayHoldSeconds counts from the expiry: 1 s after it, a holder who has
 * not asked is gone (abandonedTotal); with 0 they are gone at once. Both
 * still count as unseen expiries. */
static void t_unseen_hold_runs_out(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    unseen_setup(s, "unh", 1);
    pass_us(s, 2300000); /* expired 1.3 s ago: held 1 s is over */
    assert_int_equal(sh_status(s, "unh", "u1", &r), WR_ENOTINQUEUE);
    expect_expired(s, "unh", 1, 1, 0, 1);

    unseen_setup(s, "un0", 0);
    expect_u1_gone(s, "un0", 1, 1, 0, 1);
}

/* Every answer that carries the pass makes it seen: a page join's too
 * (the queue page renders the admitted state with the token), and that
 * pass, expired, is gone, not held (presented later, it is refused). */
static void t_unseen_page_join_sees(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    unseen_setup(s, "unc", 1800);
    assert_int_equal(sh_join_page(s, "unc", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    char jti[WR_JTI_LEN + 1];
    memcpy(jti, r.entry.jti, sizeof jti);
    expect_u1_gone(s, "unc", 1, 0, 0, 0);
    assert_int_equal(sh_consume(s, "unc", "u1", jti, &r), WR_ETOKEN);
}

WR_CONTRACT_GROUP(unseen, T(t_unseen_expiry_holds), T(t_unseen_expiry_on_poll),
                  T(t_unseen_hold_runs_out), T(t_unseen_page_join_sees));
