/*
 * tokens.c - the store contract, tokens: single use, the consume race (K04), expiry, disabled
 * queues, and degraded mode's burned set (burn). Run by runner.c against every backend of the store
 * registry (tests listed in WR_CONTRACT_GROUP at the end; *_redis_only groups run against Redis
 * alone).
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

static void t_consume_single_use(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    char jti[WR_JTI_LEN + 1];
    put_and_admit(s, "tok", plain_cfg(), 1, jti);
    char wrong[WR_JTI_LEN + 1];
    memcpy(wrong, jti, sizeof wrong);
    wrong[0] = wrong[0] == 'A' ? 'B' : 'A';

    /* verify never consumes */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sh_verify(s, "tok", "u1", jti, &r), WR_OK);
        assert_true(r.has_tok);
        assert_false(r.tok.passthrough);
    }
    assert_int_equal(sh_verify(s, "tok", "u1", wrong, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(sh_consume(s, "tok", "u1", wrong, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(sh_consume(s, "tok", "u2", jti, &r), WR_ETOKEN); /* other user */
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);

    assert_int_equal(sh_consume(s, "tok", "u1", jti, &r), WR_OK);
    assert_false(r.tok.passthrough);
    assert_int_equal(sh_consume(s, "tok", "u1", jti, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(sh_verify(s, "tok", "u1", jti, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(sh_status(s, "tok", "u1", &r), WR_ENOTINQUEUE);
    sh_expect_queue_stats(s, "tok", SH_ST(consumed_total, 1), SH_ST(admitted_total, 1),
                          SH_ST(active, 0), SH_ST(waiting, 0));
}

/* K04: of 50 consume calls in flight at once with one token, exactly one
 * succeeds; the active count drops by exactly one. */
static void t_consume_race(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    char jti[WR_JTI_LEN + 1];
    put_and_admit(s, "race", plain_cfg(), 2, jti);
    race_one(s, wr_store_consume, "race", "u1", jti, 50, WR_TOKEN_CONSUMED);
    sh_expect_queue_stats(s, "race", SH_ST(active, 1), SH_ST(consumed_total, 1));
    assert_int_equal(sh_status(s, "race", "u1", &r), WR_ENOTINQUEUE);
    expect_admitted(s, "race", "u2");
}

static void t_token_expiry(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, u1, u2;
    put_ok(s, "exp", mkcfg(50, 100, 2, 0, 1)); /* ttl 1 s, 2 slots */
    join_and_admit(s, "exp", 4, 2, NULL);
    assert_int_equal(sh_status(s, "exp", "u1", &u1), WR_OK);
    assert_int_equal(sh_status(s, "exp", "u2", &u2), WR_OK);
    assert_int_equal(u1.entry.state, WR_ENTRY_ADMITTED);
    assert_int_equal(u1.entry.expires_at_us - u1.entry.issued_at_us, 1000000);

    pass_store_time(s, u1.entry.expires_at_us);

    /* the holder's own expired token says expired (checked before sweeping) */
    assert_int_equal(sh_verify(s, "exp", "u2", u2.entry.jti, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_EXPIRED);
    assert_int_equal(sh_verify(s, "exp", "u2", u2.entry.jti, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_EXPIRED);
    assert_int_equal(sh_consume(s, "exp", "u1", u1.entry.jti, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_EXPIRED);
    /* expiry freed both slots exactly */
    sh_expect_queue_stats(s, "exp", SH_ST(active, 0), SH_ST(expired_total, 2),
                          SH_ST(consumed_total, 0));
    assert_int_equal(sh_status(s, "exp", "u1", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_status(s, "exp", "u2", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_admit(s, "exp", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 2); /* at least one tick later */
    sh_expect_stats(&r.admit.stats, SH_ST(active, 2), SH_ST(waiting, 0));
    expect_admitted(s, "exp", "u3");
}

static void t_disabled_passthrough(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = plain_cfg();
    c.enabled = false;
    put_ok(s, "off", c);
    assert_int_equal(sh_join(s, "off", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_PASSTHROUGH);
    assert_true(r.has_cfg);
    assert_false(r.cfg.enabled);
    assert_int_equal(sh_status(s, "off", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_PASSTHROUGH);
    assert_int_equal(sh_consume(s, "off", "u1", "AAAAAAAAAAAAAAAAAAAAAA", &r), WR_OK);
    assert_true(r.tok.passthrough);
    assert_int_equal(sh_verify(s, "off", "u1", "AAAAAAAAAAAAAAAAAAAAAA", &r), WR_OK);
    assert_true(r.tok.passthrough);
    assert_int_equal(sh_get(s, "off", &r), WR_OK);
    assert_int_equal(r.stats.waiting, 0); /* passthrough joins nobody */
    /* enabling it again: a real line */
    c.enabled = true;
    put_ok(s, "off", c);
    assert_int_equal(sh_join(s, "off", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, 1);
    assert_true(r.cfg.enabled);
}

/* ------------------------------------------------------------ degraded mode: burn */

static wr_err_t burn(wr_store_t *s, const char *q, const char *jti, int64_t exp_us, bool check,
                     sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_burn(s, q, jti, exp_us, check, sh_token_cb, r));
}

/* First burn OK, then CONSUMED; check_only answers without recording;
 * an already expired pass is EXPIRED and not recorded; no queue ENOTFOUND;
 * the queue's enabled flag does not matter. */
static void t_burn_once(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    int64_t exp = wr_clock_wall_us() + 300 * 1000000LL;
    assert_int_equal(burn(s, "nosuch", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ENOTFOUND);
    put_ok(s, "bq", plain_cfg());
    assert_int_equal(burn(s, "bq", "AAAAAAAAAAAAAAAAAAAAAA", exp, true, &r), WR_OK);
    assert_int_equal(burn(s, "bq", "AAAAAAAAAAAAAAAAAAAAAA", exp, true, &r), WR_OK);
    assert_int_equal(burn(s, "bq", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_OK);
    assert_false(r.tok.passthrough);
    assert_int_equal(burn(s, "bq", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(burn(s, "bq", "AAAAAAAAAAAAAAAAAAAAAA", exp, true, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    /* another jti is its own pass */
    assert_int_equal(burn(s, "bq", "BBBBBBBBBBBBBBBBBBBBBB", exp, false, &r), WR_OK);
    /* expired: refused, and nothing recorded */
    int64_t past = wr_clock_wall_us() - 1000000;
    assert_int_equal(burn(s, "bq", "CCCCCCCCCCCCCCCCCCCCCC", past, false, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_EXPIRED);
    assert_int_equal(burn(s, "bq", "CCCCCCCCCCCCCCCCCCCCCC", exp, false, &r), WR_OK);
    /* a disabled queue still burns (the API answers it before the store) */
    wr_queue_config_t off = plain_cfg();
    off.enabled = false;
    put_ok(s, "bq", off);
    assert_int_equal(burn(s, "bq", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ETOKEN);
    assert_int_equal(burn(s, "bq", "DDDDDDDDDDDDDDDDDDDDDD", exp, false, &r), WR_OK);
    /* a burn is not a token: the line and the counters do not move */
    sh_expect_queue_stats(s, "bq", SH_ST(active, 0), SH_ST(consumed_total, 0));
}

/* Expired burns are swept: after its expiry the same jti burns again. */
static void t_burn_expiry_swept(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "bx", plain_cfg());
    int64_t soon = wr_clock_wall_us() + 300000;
    int64_t later = wr_clock_wall_us() + 300 * 1000000LL;
    assert_int_equal(burn(s, "bx", "AAAAAAAAAAAAAAAAAAAAAA", soon, false, &r), WR_OK);
    assert_int_equal(burn(s, "bx", "BBBBBBBBBBBBBBBBBBBBBB", later, false, &r), WR_OK);
    assert_int_equal(burn(s, "bx", "AAAAAAAAAAAAAAAAAAAAAA", later, false, &r), WR_ETOKEN);
    pass_store_time(s, soon);
    /* an admission tick sweeps too (memory); the burn sweeps in any case */
    assert_int_equal(sh_admit(s, "bx", &r), WR_OK);
    assert_int_equal(burn(s, "bx", "AAAAAAAAAAAAAAAAAAAAAA", later + 3600 * 1000000LL, false, &r),
                     WR_OK);
    assert_int_equal(burn(s, "bx", "BBBBBBBBBBBBBBBBBBBBBB", later + 3600 * 1000000LL, false, &r),
                     WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
}

/* Separate queues keep separate sets; a queue delete removes its set. */
static void t_burn_queues_and_delete(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    int64_t exp = wr_clock_wall_us() + 300 * 1000000LL;
    put_ok(s, "b1", plain_cfg());
    put_ok(s, "b2", plain_cfg());
    assert_int_equal(burn(s, "b1", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_OK);
    assert_int_equal(burn(s, "b2", "AAAAAAAAAAAAAAAAAAAAAA", exp, true, &r), WR_OK);
    assert_int_equal(burn(s, "b2", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_OK);
    assert_int_equal(burn(s, "b1", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ETOKEN);
    assert_int_equal(burn(s, "b2", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ETOKEN);
    assert_int_equal(sh_delete(s, "b1"), WR_OK);
    assert_int_equal(burn(s, "b1", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ENOTFOUND);
    put_ok(s, "b1", plain_cfg());
    assert_int_equal(burn(s, "b1", "AAAAAAAAAAAAAAAAAAAAAA", exp, true, &r), WR_OK);
    assert_int_equal(burn(s, "b1", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_OK);
    assert_int_equal(burn(s, "b2", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ETOKEN);
    if (g_redis) {
        /* the delete took the key with it, and a set never outlives its
         * last pass (expiry set) */
        assert_int_equal(sh_delete(s, "b2"), WR_OK);
        sh_run_for(50);
        redisReply *k = sh_redis_cmd("EXISTS wr:{b2}:burned");
        assert_non_null(k);
        assert_int_equal(k->integer, 0);
        freeReplyObject(k);
        k = sh_redis_cmd("PTTL wr:{b1}:burned");
        assert_non_null(k);
        assert_true(k->integer > 0 && k->integer <= 302 * 1000);
        freeReplyObject(k);
    }
}

/* Invalid arguments are refused at the call, never called back. */
static void t_burn_args(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    sh_begin(&r);
    int64_t exp = wr_clock_wall_us() + 1000000;
    assert_int_equal(wr_store_burn(s, "bad name", "AAAA", exp, false, sh_token_cb, &r), WR_EINVAL);
    assert_int_equal(wr_store_burn(s, "q", "", exp, false, sh_token_cb, &r), WR_EINVAL);
    assert_int_equal(wr_store_burn(s, "q", NULL, exp, false, sh_token_cb, &r), WR_EINVAL);
    assert_int_equal(
        wr_store_burn(s, "q", "AAAAAAAAAAAAAAAAAAAAAAA", exp, false, sh_token_cb, &r), /* 23 */
        WR_EINVAL);
    assert_int_equal(wr_store_burn(s, "q", "AAAA", exp, false, NULL, &r), WR_EINVAL);
    sh_run_for(20);
    assert_int_equal(r.calls, 0);
}

/* Bypass rules: bypass counts in the queue's stats (bypass_total), adds
 * up calls and n, takes no place, slot or stock, and answers ENOTFOUND
 * for no queue; a delete drops the count with the queue. */
static void t_bypass_count(void **state)
{
    wr_store_t *s = *state;
    wr_queue_config_t c = mkcfg(1, 100, 1, 10, 300);
    c.stock = 5;
    c.stock_set = true;
    put_ok(s, "q", c);
    sh_res_t r;
    assert_int_equal(sh_bypass(s, "q", 1), WR_OK);
    assert_int_equal(sh_bypass(s, "q", 41), WR_OK);
    sh_expect_queue_stats(s, "q", SH_ST(bypass_total, 42), SH_ST(waiting, 0), SH_ST(active, 0),
                          SH_ST(admitted_total, 0), SH_ST(stock_left, 5));
    /* the count survives a config_put */
    put_ok(s, "q", mkcfg(2, 100, 1, 10, 300));
    assert_int_equal(sh_get(s, "q", &r), WR_OK);
    assert_int_equal(r.stats.bypass_total, 42);
    assert_int_equal(sh_bypass(s, "nope", 1), WR_ENOTFOUND);
    assert_int_equal(sh_delete(s, "q"), WR_OK);
    put_ok(s, "q", c);
    assert_int_equal(sh_get(s, "q", &r), WR_OK);
    assert_int_equal(r.stats.bypass_total, 0);
    /* bad arguments: refused at the call, never called back */
    sh_begin(&r);
    assert_int_equal(wr_store_bypass(s, "bad name", 1, sh_done_cb, &r), WR_EINVAL);
    assert_int_equal(wr_store_bypass(s, "q", 0, sh_done_cb, &r), WR_EINVAL);
    assert_int_equal(wr_store_bypass(s, "q", 1, NULL, &r), WR_EINVAL);
    sh_run_for(20);
    assert_int_equal(r.calls, 0);
}

WR_CONTRACT_GROUP(tokens, T(t_consume_single_use), T(t_consume_race), T(t_token_expiry),
                  T(t_disabled_passthrough), T(t_burn_once), T(t_burn_expiry_swept),
                  T(t_burn_queues_and_delete), T(t_burn_args), T(t_bypass_count));
