/*
 * test_store_contract.c - the store contract (store.h), run through the
 * vtable against the backend named by argv[1]: "redis" or "memory".
 *
 * Every test opens a fresh store on one libevent base and drives it with
 * the blocking helpers of store_harness.h: each helper calls one operation,
 * checks that it returned WR_OK, marks "returned", then runs the loop until
 * the callback fired (bounded). The callback checks that it did not run
 * inside the call and counts its calls: every helper asserts exactly one.
 *
 * For "redis" the suite starts its own redis-server (store_harness.h: on a
 * unix socket in a mkdtemp directory, --port 0, no persistence) and kills
 * it at the end; each test starts from FLUSHALL. A Redis-only section (K01 score
 * precision, K02 NOSCRIPT, K03 hash slots, command timeout, kill and
 * restart) runs after the common tests.
 *
 * Time: admission counts depend on the store's tick, so the tests use the
 * store's own clock (wr_admit_t.now_us) to compute the exact expectation
 * of each call (same tick: 0; next ticks: the hand-computed budget).
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

#include "base/embed.h"
#include "fake_redis.h"
#include "core/queue.h"
#include "store/store.h"
#include "store_harness.h"
#include "store/redis/store_redis.h"
#include "runtime/store_registry.h"

static bool g_redis;

/* ------------------------------------------------------------ helpers */

static wr_queue_config_t mkcfg(double rate, uint32_t tick_ms, uint64_t max_active,
                               uint64_t max_queue, uint32_t ttl_s)
{
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    c.admit_per_second = rate;
    c.fail_open_per_second = rate;
    c.tick_ms = tick_ms;
    c.max_active = max_active;
    c.max_queue_size = max_queue;
    c.token_ttl_seconds = ttl_s;
    return c;
}

static void put_ok(wr_store_t *s, const char *q, wr_queue_config_t c)
{
    assert_int_equal(sh_put(s, q, &c), WR_OK);
}

static void join_n(wr_store_t *s, const char *q, int from, int to)
{
    sh_res_t r;
    char u[32];
    for (int i = from; i <= to; i++) {
        snprintf(u, sizeof u, "u%d", i);
        assert_int_equal(sh_join(s, q, u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    }
}

/* Admits until the store reports a tick other than prev_tick (bounded),
 * checking that every same-tick call admitted 0. Returns the result of
 * the first call in a new tick. */
static void admit_next_tick(wr_store_t *s, const char *q, int64_t tick_us, int64_t prev_tick,
                            sh_res_t *r)
{
    for (int i = 0; i < 100; i++) {
        assert_int_equal(sh_admit(s, q, r), WR_OK);
        if (r->admit.now_us / tick_us != prev_tick)
            return;
        assert_int_equal(r->admit.admitted, 0);
        sh_run_for((int)(tick_us / 1000 / 4) + 1);
    }
    fail_msg("the store's tick never advanced");
}

/* Moves the store's clock past t_us: debug hook where there is one, else a
 * real wait (Redis TIME is this host's clock). */
static void pass_store_time(wr_store_t *s, int64_t t_us)
{
    if (s->ops->debug_advance_time) {
        int64_t d = t_us - wr_clock_wall_us() + 100000;
        assert_int_equal(s->ops->debug_advance_time(s, d > 100000 ? d : 100000), WR_OK);
        return;
    }
    int64_t deadline = wr_clock_mono_ms() + 5000;
    while (wr_clock_wall_us() <= t_us + 30000 && wr_clock_mono_ms() < deadline)
        sh_run_for(20);
    assert_true(wr_clock_wall_us() > t_us + 30000);
}

/* join_n, then lets the admission delay pass (queue.h: nobody is admitted
 * sooner than WR_ADMIT_DELAY_US after joining), so that the next admission
 * tick may admit every one of them. */
static void join_due(wr_store_t *s, const char *q, int from, int to)
{
    join_n(s, q, from, to);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US);
}

/* ------------------------------------------------------------ backends */

/* The backend under test, opened like waitroomd opens it: through the
 * store registry, by URL ("memory", or unix:// of the private server). */
static wr_store_t *open_store_with(uint32_t cmd_timeout_ms)
{
    wr_store_t *s = NULL;
    if (g_redis)
        return sh_open_redis(cmd_timeout_ms);
    if (wr_store_open_url(sh_base(), "memory", NULL, &s) != WR_OK)
        return NULL;
    return s;
}

static int setup(void **state)
{
    if (g_redis) {
        redisReply *r = sh_redis_cmd("FLUSHALL");
        if (!r)
            return -1;
        freeReplyObject(r);
    }
    wr_store_t *s = open_store_with(g_redis ? 2000 : 0);
    if (!s)
        return -1;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    wr_store_close(*state);
    *state = NULL;
    return 0;
}

/* ------------------------------------------------------------ contract */

static void t_ping_and_unknown_queue(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    assert_int_equal(sh_ping(s), WR_OK);
    assert_int_equal(sh_join(s, "nosuch", "u1", &r), WR_ENOTFOUND);
    assert_int_equal(sh_status(s, "nosuch", "u1", &r), WR_ENOTFOUND);
    assert_int_equal(sh_admit(s, "nosuch", &r), WR_ENOTFOUND);
    assert_int_equal(sh_consume(s, "nosuch", "u1", "AAAAAAAAAAAAAAAAAAAAAA", &r), WR_ENOTFOUND);
    assert_int_equal(sh_verify(s, "nosuch", "u1", "AAAAAAAAAAAAAAAAAAAAAA", &r), WR_ENOTFOUND);
    assert_int_equal(sh_get(s, "nosuch", &r), WR_ENOTFOUND);
    assert_int_equal(sh_delete(s, "nosuch"), WR_ENOTFOUND);
}

static void t_join_positions(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "pos", mkcfg(5, 1000, 0, 0, 300));
    const char *users[5] = {"u1", "u2", "u3", "u4", "u5"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(sh_join(s, "pos", users[i], &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
        assert_int_equal(r.entry.position, i + 1);
        assert_int_equal(r.entry.waiting, i + 1);
        assert_true(r.has_cfg);
        assert_true(r.cfg.admit_per_second == 5.0);
        assert_int_equal(r.cfg.tick_ms, 1000);
    }
    /* rejoin keeps the place */
    assert_int_equal(sh_join(s, "pos", "u3", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, 3);
    assert_int_equal(r.entry.waiting, 5);
    assert_int_equal(sh_status(s, "pos", "u4", &r), WR_OK);
    assert_int_equal(r.entry.position, 4);
    assert_int_equal(r.entry.waiting, 5);
    assert_int_equal(sh_status(s, "pos", "ghost", &r), WR_ENOTINQUEUE);
    assert_false(r.has_entry && r.entry.position > 0);

    /* leave from the line moves the others up; twice -> not in queue */
    assert_int_equal(sh_leave(s, "pos", "u2"), WR_OK);
    assert_int_equal(sh_status(s, "pos", "u4", &r), WR_OK);
    assert_int_equal(r.entry.position, 3);
    assert_int_equal(r.entry.waiting, 4);
    assert_int_equal(sh_leave(s, "pos", "u2"), WR_ENOTINQUEUE);
    assert_int_equal(sh_status(s, "pos", "u2", &r), WR_ENOTINQUEUE);
    /* joining again goes to the end */
    assert_int_equal(sh_join(s, "pos", "u2", &r), WR_OK);
    assert_int_equal(r.entry.position, 5);
    assert_int_equal(sh_get(s, "pos", &r), WR_OK);
    assert_int_equal(r.stats.waiting, 5);
    assert_int_equal(r.stats.left_total, 1);
    assert_int_equal(r.stats.active, 0);
}

static void t_admit_counts_and_order(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a1, a2;
    put_ok(s, "adm", mkcfg(5, 1000, 0, 0, 300)); /* 5 users per 1 s tick */
    join_due(s, "adm", 1, 12);
    assert_int_equal(sh_admit(s, "adm", &a1), WR_OK);
    assert_int_equal(a1.admit.admitted, 5); /* first tick ever: one tick's worth */
    assert_int_equal(a1.admit.stats.waiting, 7);
    assert_int_equal(a1.admit.stats.active, 5);
    assert_int_equal(a1.admit.stats.admitted_total, 5);
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
    join_due(s, "gap", 1, 100);
    assert_int_equal(sh_admit(s, "gap", &a1), WR_OK);
    assert_int_equal(a1.admit.admitted, 5);
    /* let 3 to 4 ticks pass unrun */
    pass_store_time(s, a1.admit.now_us + 300000);
    assert_int_equal(sh_admit(s, "gap", &a2), WR_OK);
    assert_true(a2.admit.now_us / 100000 - a1.admit.now_us / 100000 >= 3);
    assert_int_equal(a2.admit.admitted, 5);
    assert_int_equal(a2.admit.stats.admitted_total, 10);
    assert_int_equal(a2.admit.stats.waiting, 90);
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
    assert_int_equal(sh_status(s, "dl", "u10", &r), WR_OK);
    assert_int_equal(r.entry.head_due_us, -1);
    assert_int_equal(r.entry.own_due_us, -1);
    /* before the delay: ticks run, nobody admitted */
    assert_int_equal(sh_admit(s, "dl", &a1), WR_OK);
    if (a1.admit.now_us < t0 + WR_ADMIT_DELAY_US)
        assert_int_equal(a1.admit.admitted, 0);
    else /* a host stalled for the whole delay */
        assert_int_equal(a1.admit.admitted, 5);
    /* after it, several ticks later: one tick's budget, 5 */
    pass_store_time(s, t0 + WR_ADMIT_DELAY_US);
    admit_next_tick(s, "dl", 100000, a1.admit.now_us / 100000, &a2);
    assert_int_equal(a2.admit.admitted, 5);
    assert_int_equal(a2.admit.stats.admitted_total, a1.admit.admitted + 5);
    /* in arrival order */
    assert_int_equal(sh_status(s, "dl", "u5", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
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
    join_due(s, "frac", 1, 40);
    assert_int_equal(sh_admit(s, "frac", &a1), WR_OK);
    assert_int_equal(a1.admit.admitted, 2); /* 2.5 -> 2, carry 0.5 */
    int64_t t1 = a1.admit.now_us / 100000;
    admit_next_tick(s, "frac", 100000, t1, &a2);
    assert_true(a2.admit.now_us / 100000 > t1);
    /* 0.5 + 2.5 = 3, whatever the gap (no catch-up, K24) */
    assert_int_equal(a2.admit.admitted, 3);
    assert_int_equal(a2.admit.stats.admitted_total, 2 + 3);
    assert_int_equal(a2.admit.stats.waiting, 40 - 2 - 3);
}

/* Changing tickMs must not stop admission: the last tick run is counted in
 * the old tick length (100 ms ticks number ~10x more than 1 s ticks), so a
 * store that kept it would see every new tick as "already run". */
static void t_tick_change_keeps_admitting(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a1, a2;
    put_ok(s, "tk", mkcfg(10, 100, 0, 0, 300)); /* 1 user per 100 ms tick */
    join_due(s, "tk", 1, 30);
    assert_int_equal(sh_admit(s, "tk", &a1), WR_OK);
    assert_int_equal(a1.admit.admitted, 1);
    put_ok(s, "tk", mkcfg(10, 1000, 0, 0, 300)); /* now 10 users per 1 s tick */
    assert_int_equal(sh_admit(s, "tk", &a2), WR_OK);
    /* The first tick after the change counts as a first tick: one tick's worth. */
    assert_int_equal(a2.admit.admitted, 10);
    assert_int_equal(a2.admit.stats.admitted_total, 11);
    assert_int_equal(a2.admit.stats.waiting, 19);
}

static void t_paused_admits_nobody(void **state)
{
    wr_store_t *s = *state;
    sh_res_t a, a2;
    wr_queue_config_t c = mkcfg(50, 100, 0, 0, 300);
    c.paused = true;
    put_ok(s, "pz", c);
    join_due(s, "pz", 1, 3);
    assert_int_equal(sh_admit(s, "pz", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 0);
    assert_true(a.cfg.paused);
    admit_next_tick(s, "pz", 100000, a.admit.now_us / 100000, &a2);
    assert_int_equal(a2.admit.admitted, 0);
    assert_int_equal(a2.admit.stats.waiting, 3);
}

static void t_max_queue_size(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "full", mkcfg(5, 1000, 0, 3, 300));
    join_n(s, "full", 1, 3);
    assert_int_equal(sh_join(s, "full", "u4", &r), WR_EFULL);
    assert_true(r.has_entry);
    assert_int_equal(r.entry.waiting, 3);
    assert_true(r.has_cfg);
    assert_int_equal(r.cfg.max_queue_size, 3);
    /* already in line: not refused */
    assert_int_equal(sh_join(s, "full", "u1", &r), WR_OK);
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(sh_status(s, "full", "u4", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_get(s, "full", &r), WR_OK);
    assert_int_equal(r.stats.rejected_full_total, 1);
    assert_int_equal(r.stats.waiting, 3);
    /* a place frees up */
    assert_int_equal(sh_leave(s, "full", "u2"), WR_OK);
    assert_int_equal(sh_join(s, "full", "u4", &r), WR_OK);
    assert_int_equal(r.entry.position, 3);
}

static void t_max_active_and_leave_admitted(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    /* 5 allowed per tick, but at most 3 live tokens */
    put_ok(s, "cap", mkcfg(50, 100, 3, 0, 300));
    join_due(s, "cap", 1, 10);
    assert_int_equal(sh_admit(s, "cap", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 3);
    assert_int_equal(a.admit.stats.active, 3);
    assert_int_equal(a.admit.stats.waiting, 7);
    /* full: later ticks admit nobody */
    admit_next_tick(s, "cap", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 0);
    assert_int_equal(a.admit.stats.active, 3);

    /* consuming one frees exactly one slot */
    assert_int_equal(sh_status(s, "cap", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    char jti[WR_JTI_LEN + 1];
    memcpy(jti, r.entry.jti, sizeof jti);
    assert_int_equal(sh_consume(s, "cap", "u1", jti, &r), WR_OK);
    admit_next_tick(s, "cap", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(a.admit.stats.active, 3);
    assert_int_equal(a.admit.stats.waiting, 6);
    assert_int_equal(sh_status(s, "cap", "u4", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);

    /* leaving while admitted revokes the token and frees the slot at once */
    assert_int_equal(sh_status(s, "cap", "u2", &r), WR_OK);
    memcpy(jti, r.entry.jti, sizeof jti);
    assert_int_equal(sh_leave(s, "cap", "u2"), WR_OK);
    assert_int_equal(sh_get(s, "cap", &r), WR_OK);
    assert_int_equal(r.stats.active, 2);
    assert_int_equal(r.stats.left_total, 1);
    assert_int_equal(sh_leave(s, "cap", "u2"), WR_ENOTINQUEUE);
    assert_int_equal(sh_consume(s, "cap", "u2", jti, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    admit_next_tick(s, "cap", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(a.admit.stats.active, 3);
    assert_int_equal(a.admit.stats.waiting, 5);
    assert_int_equal(a.admit.stats.admitted_total, 5);
    assert_int_equal(a.admit.stats.consumed_total, 1);
}

static void t_consume_single_use(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    put_ok(s, "tok", mkcfg(5, 1000, 0, 0, 300));
    join_due(s, "tok", 1, 1);
    assert_int_equal(sh_admit(s, "tok", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(sh_status(s, "tok", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    char jti[WR_JTI_LEN + 1];
    memcpy(jti, r.entry.jti, sizeof jti);
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
    assert_int_equal(sh_get(s, "tok", &r), WR_OK);
    assert_int_equal(r.stats.consumed_total, 1);
    assert_int_equal(r.stats.admitted_total, 1);
    assert_int_equal(r.stats.active, 0);
    assert_int_equal(r.stats.waiting, 0);
}

/* K04: of 50 consume calls in flight at once with one token, exactly one
 * succeeds; the active count drops by exactly one. */
static void t_consume_race(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    static sh_res_t rs[50];
    put_ok(s, "race", mkcfg(5, 1000, 0, 0, 300));
    join_due(s, "race", 1, 2);
    assert_int_equal(sh_admit(s, "race", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 2);
    assert_int_equal(sh_status(s, "race", "u1", &r), WR_OK);
    char jti[WR_JTI_LEN + 1];
    memcpy(jti, r.entry.jti, sizeof jti);
    for (int i = 0; i < 50; i++) {
        sh_begin(&rs[i]);
        assert_int_equal(wr_store_consume(s, "race", "u1", jti, sh_token_cb, &rs[i]), WR_OK);
        rs[i].returned = true;
    }
    int ok = 0, consumed = 0;
    for (int i = 0; i < 50; i++) {
        assert_true(sh_run_until(&rs[i].calls, 1, SH_WAIT_MS));
        assert_false(rs[i].sync_call);
        if (rs[i].err == WR_OK)
            ok++;
        else if (rs[i].err == WR_ETOKEN && rs[i].tok.reason == WR_TOKEN_CONSUMED)
            consumed++;
    }
    assert_int_equal(ok, 1);
    assert_int_equal(consumed, 49);
    assert_int_equal(sh_get(s, "race", &r), WR_OK);
    assert_int_equal(r.stats.active, 1);
    assert_int_equal(r.stats.consumed_total, 1);
    assert_int_equal(sh_status(s, "race", "u1", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_status(s, "race", "u2", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
}

static void t_token_expiry(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a, u1, u2;
    put_ok(s, "exp", mkcfg(50, 100, 2, 0, 1)); /* ttl 1 s, 2 slots */
    join_due(s, "exp", 1, 4);
    assert_int_equal(sh_admit(s, "exp", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 2);
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
    assert_int_equal(sh_get(s, "exp", &r), WR_OK);
    assert_int_equal(r.stats.active, 0);
    assert_int_equal(r.stats.expired_total, 2);
    assert_int_equal(r.stats.consumed_total, 0);
    assert_int_equal(sh_status(s, "exp", "u1", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_status(s, "exp", "u2", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_admit(s, "exp", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 2); /* at least one tick later */
    assert_int_equal(r.admit.stats.active, 2);
    assert_int_equal(r.admit.stats.waiting, 0);
    assert_int_equal(sh_status(s, "exp", "u3", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
}

static void t_disabled_passthrough(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = mkcfg(5, 1000, 0, 0, 300);
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

static void t_config_roundtrip_and_version(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = mkcfg(5, 1000, 7, 99, 60);
    snprintf(c.target_url, sizeof c.target_url, "https://shop.example/checkout");
    put_ok(s, "cfg", c);
    assert_int_equal(sh_get(s, "cfg", &r), WR_OK);
    assert_string_equal(r.name, "cfg");
    assert_true(r.cfg.admit_per_second == 5.0);
    assert_int_equal(r.cfg.tick_ms, 1000);
    assert_int_equal(r.cfg.max_active, 7);
    assert_int_equal(r.cfg.max_queue_size, 99);
    assert_int_equal(r.cfg.token_ttl_seconds, 60);
    assert_string_equal(r.cfg.target_url, "https://shop.example/checkout");
    assert_int_equal(r.stats.waiting, 0);
    assert_int_equal(r.stats.admitted_total, 0);
    /* twice, so a caching backend answers from its cache the second time */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sh_join(s, "cfg", i ? "u2" : "u1", &r), WR_OK);
        assert_true(r.has_cfg);
        assert_true(r.cfg.admit_per_second == 5.0);
        assert_int_equal(r.cfg.max_queue_size, 99);
    }
    /* replace: the line is kept, every operation sees the new config */
    c = mkcfg(7.25, 200, 0, 50, 120);
    put_ok(s, "cfg", c);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US); /* u1, u2 due */
    assert_int_equal(sh_status(s, "cfg", "u1", &r), WR_OK);
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(r.entry.waiting, 2);
    assert_true(r.cfg.admit_per_second == 7.25);
    assert_int_equal(r.cfg.tick_ms, 200);
    assert_int_equal(r.cfg.max_queue_size, 50);
    assert_int_equal(r.cfg.target_url[0], '\0');
    assert_int_equal(sh_admit(s, "cfg", &r), WR_OK);
    assert_int_equal(r.cfg.tick_ms, 200);
    assert_int_equal(r.cfg.token_ttl_seconds, 120);
    /* 7.25/s * 0.2 s = 1.45 -> 1 admitted on the first tick */
    assert_int_equal(r.admit.admitted, 1);
    assert_int_equal(sh_get(s, "cfg", &r), WR_OK);
    assert_true(r.cfg.admit_per_second == 7.25);
    assert_int_equal(r.stats.waiting, 1);
}

static void t_queue_delete(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "del", mkcfg(5, 1000, 0, 0, 300));
    join_due(s, "del", 1, 6);
    assert_int_equal(sh_admit(s, "del", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 5);
    assert_int_equal(sh_delete(s, "del"), WR_OK);
    assert_int_equal(sh_get(s, "del", &r), WR_ENOTFOUND);
    assert_int_equal(sh_join(s, "del", "u1", &r), WR_ENOTFOUND);
    assert_int_equal(sh_status(s, "del", "u6", &r), WR_ENOTFOUND);
    assert_int_equal(sh_delete(s, "del"), WR_ENOTFOUND);
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 0);
    /* created again: nothing of the old state survives */
    put_ok(s, "del", mkcfg(3, 500, 0, 0, 300));
    assert_int_equal(sh_get(s, "del", &r), WR_OK);
    assert_true(r.cfg.admit_per_second == 3.0);
    assert_int_equal(r.stats.waiting, 0);
    assert_int_equal(r.stats.active, 0);
    assert_int_equal(r.stats.admitted_total, 0);
    assert_int_equal(sh_status(s, "del", "u1", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_status(s, "del", "u6", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_join(s, "del", "u6", &r), WR_OK);
    assert_int_equal(r.entry.position, 1);
    assert_true(r.cfg.admit_per_second == 3.0);
}

static void t_queue_list_sorted(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 0);
    put_ok(s, "qc", mkcfg(1, 1000, 0, 0, 300));
    put_ok(s, "qa", mkcfg(2, 1000, 0, 0, 300));
    put_ok(s, "qb", mkcfg(3, 1000, 0, 0, 300));
    put_ok(s, "qb", mkcfg(4, 1000, 0, 0, 300)); /* a put of a known queue adds no entry */
    join_n(s, "qb", 1, 2);
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.names[0], "qa");
    assert_string_equal(r.names[1], "qb");
    assert_string_equal(r.names[2], "qc");
    assert_int_equal(r.lstats[0].waiting, 0);
    assert_int_equal(r.lstats[1].waiting, 2);
    assert_int_equal(sh_delete(s, "qa"), WR_OK);
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.names[0], "qb");
    assert_string_equal(r.names[1], "qc");
}

static void t_secret_first_writer_wins(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    uint8_t a[32], b[40];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = (uint8_t)(i * 7 + 1); /* binary, with no NUL */
    memset(b, 'b', sizeof b);
    assert_int_equal(sh_secret(s, a, sizeof a, &r), WR_OK);
    assert_int_equal(r.secret_len, sizeof a);
    assert_memory_equal(r.secret, a, sizeof a);
    assert_int_equal(sh_secret(s, b, sizeof b, &r), WR_OK);
    assert_int_equal(r.secret_len, sizeof a);
    assert_memory_equal(r.secret, a, sizeof a);
    if (g_redis) { /* shared by every instance */
        wr_store_t *s2 = open_store_with(2000);
        assert_non_null(s2);
        assert_int_equal(sh_secret(s2, b, sizeof b, &r), WR_OK);
        assert_int_equal(r.secret_len, sizeof a);
        assert_memory_equal(r.secret, a, sizeof a);
        wr_store_close(s2);
    }
}

static void t_close_cancels_pending(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r[6];
    put_ok(s, "cl", mkcfg(5, 1000, 0, 0, 300));
    for (int i = 0; i < 6; i++) {
        char u[8];
        snprintf(u, sizeof u, "u%d", i);
        sh_begin(&r[i]);
        wr_err_t rc = i < 5 ? wr_store_join(s, "cl", u, sh_entry_cb, &r[i])
                            : wr_store_admit(s, "cl", sh_admit_cb, &r[i]);
        assert_int_equal(rc, WR_OK);
        r[i].returned = true;
        assert_int_equal(r[i].calls, 0);
    }
    wr_store_close(s);
    *state = NULL;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].err, WR_ECANCELED);
    }
    sh_run_for(50); /* nothing more arrives after close */
    for (int i = 0; i < 6; i++)
        assert_int_equal(r[i].calls, 1);
}

typedef struct {
    wr_store_t *s;
    sh_res_t r[3];
} close_in_cb_t;

static close_in_cb_t *g_cic;

static void close_in_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    sh_entry_cb(err, e, arg);
    if (arg == &g_cic->r[0]) {
        wr_store_close(g_cic->s); /* the others are cancelled right here */
        g_cic->s = NULL;
        assert_int_equal(g_cic->r[1].calls, 1);
        assert_int_equal(g_cic->r[2].calls, 1);
    }
}

/* close() from inside a callback is safe: pending callbacks get
 * WR_ECANCELED once, nothing runs after, nothing leaks (ASan). */
static void t_close_inside_callback(void **state)
{
    close_in_cb_t c;
    memset(&c, 0, sizeof c);
    c.s = *state;
    g_cic = &c;
    put_ok(c.s, "cic", mkcfg(5, 1000, 0, 0, 300));
    for (int i = 0; i < 3; i++) {
        char u[8];
        snprintf(u, sizeof u, "u%d", i);
        assert_int_equal(wr_store_join(c.s, "cic", u, close_in_cb, &c.r[i]), WR_OK);
        c.r[i].returned = true;
    }
    *state = NULL; /* closed by the first callback */
    assert_true(sh_run_until(&c.r[0].calls, 1, SH_WAIT_MS));
    assert_null(c.s);
    assert_int_equal(c.r[0].err, WR_OK);
    assert_int_equal(c.r[1].err, WR_ECANCELED);
    assert_int_equal(c.r[2].err, WR_ECANCELED);
    sh_run_for(50);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c.r[i].calls, 1);
        assert_false(c.r[i].sync_call);
    }
    g_cic = NULL;
}

/* ------------------------------------------------------------ one loop iteration */

/* Joins and statuses made in one loop iteration (store_redis sends those
 * of one queue as one script call): each answers exactly once, never from
 * inside the call, with the answer it gets when the calls run one after
 * the other; an argument refused at the call (WR_EINVAL) is never called
 * back and does not disturb the others; within a queue the callbacks come
 * in call order. */
typedef struct {
    char op; /* 'j' join, 's' status, 'p' join_page, 'q' status_quiet, 'l' leave,
                'd' delete, 'a' admit */
    const char *q, *u;
    wr_err_t rc;   /* what the call returns */
    wr_err_t want; /* what the callback gets (rc == WR_OK) */
    int pos;       /* WAITING: position (0 = any state), or -1 ADMITTED, -2 PASSTHROUGH */
    int waiting;   /* WAITING or EFULL: waiting */
} step_t;

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
static bool g_in_order = true;

/* Makes every call of steps in one go (no loop run in between), then runs
 * the loop until each answered, and checks each answer. */
static void run_steps(wr_store_t *s, const step_t *steps, size_t n)
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
    put_ok(s, "bm2", mkcfg(5, 1000, 0, 0, 300));
    wr_queue_config_t off = mkcfg(5, 1000, 0, 0, 300);
    off.enabled = false;
    put_ok(s, "boff", off);
    join_n(s, "bm", 1, 2);
    const step_t steps[] = {
        {'s', "bm", "u1", WR_OK, WR_OK, 1, 2},
        {'j', "bm", "u3", WR_OK, WR_OK, 3, 3},
        {'s', "bm", "u3", WR_OK, WR_OK, 3, 3},
        {'j', "bm2", "u1", WR_OK, WR_OK, 1, 1},
        {'j', "bm", "u1", WR_OK, WR_OK, 1, 3}, /* already in line: keeps the place */
        {'s', "bm", "ux", WR_OK, WR_ENOTINQUEUE, 0, 0},
        {'s', "bm", "bad user", WR_EINVAL, WR_OK, 0, 0},
        {'j', "nosuch", "u1", WR_OK, WR_ENOTFOUND, 0, 0},
        {'j', "bm", "u4", WR_OK, WR_OK, 4, 4},
        {'j', "bm", "u5", WR_OK, WR_OK, 5, 5},
        {'j', "bm", "u6", WR_OK, WR_EFULL, 0, 5}, /* maxQueueSize 5 */
        {'s', "bm", "u6", WR_OK, WR_ENOTINQUEUE, 0, 0},
        {'j', "boff", "u1", WR_OK, WR_OK, -2, 0},
        {'s', "bm2", "u1", WR_OK, WR_OK, 1, 1},
        {'j', "bm2", "u2", WR_OK, WR_OK, 2, 2},
        {'s', "bm", "u2", WR_OK, WR_OK, 2, 5},
        {'j', "bm", "", WR_EINVAL, WR_OK, 0, 0},
        {'s', "bm", "u5", WR_OK, WR_OK, 5, 5},
    };
    run_steps(s, steps, sizeof steps / sizeof steps[0]);
    sh_res_t r;
    assert_int_equal(sh_get(s, "bm", &r), WR_OK);
    assert_int_equal(r.stats.waiting, 5);
    assert_int_equal(r.stats.rejected_full_total, 1);
}

/* Other operations between the joins and statuses of one iteration keep
 * their place: a leave, an admission tick, a delete in the middle. */
static void t_iteration_ordered(void **state)
{
    wr_store_t *s = *state;
    put_ok(s, "bo", mkcfg(5, 1000, 0, 0, 300));
    join_n(s, "bo", 1, 2);
    const step_t steps[] = {
        {'s', "bo", "u1", WR_OK, WR_OK, 1, 2},
        {'j', "bo", "u3", WR_OK, WR_OK, 3, 3},
        {'l', "bo", "u1", WR_OK, WR_OK, 0, 0},
        {'s', "bo", "u1", WR_OK, WR_ENOTINQUEUE, 0, 0},
        {'s', "bo", "u3", WR_OK, WR_OK, 2, 2},
        {'j', "bo", "u1", WR_OK, WR_OK, 3, 3}, /* back at the end */
        {'d', "bo", NULL, WR_OK, WR_OK, 0, 0},
        {'s', "bo", "u2", WR_OK, WR_ENOTFOUND, 0, 0},
        {'j', "bo", "u4", WR_OK, WR_ENOTFOUND, 0, 0},
    };
    run_steps(s, steps, sizeof steps / sizeof steps[0]);
}

/* More joins and statuses in one iteration than one script call takes
 * (store_redis: 64): every one in order, positions exact. */
static void t_iteration_many(void **state)
{
    enum { N = 150 };
    wr_store_t *s = *state;
    put_ok(s, "bmany", mkcfg(5, 1000, 0, 0, 300));
    static step_t steps[2 * N];
    static char users[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(users[i], sizeof users[i], "u%d", i + 1);
        steps[2 * i] = (step_t){'j', "bmany", users[i], WR_OK, WR_OK, i + 1, i + 1};
        /* the status of the one before: the line has grown since */
        steps[2 * i + 1] =
            (step_t){'s', "bmany", users[i > 0 ? i - 1 : 0], WR_OK, WR_OK, i > 0 ? i : 1, i + 1};
    }
    run_steps(s, steps, 2 * N);
}

/* close() with joins and statuses of this iteration not yet sent: each
 * gets WR_ECANCELED once, synchronously. */
static void t_iteration_close(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r[4];
    put_ok(s, "bcl", mkcfg(5, 1000, 0, 0, 300));
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

/* ------------------------------------------------------------ sessions */

/* A queue with sessions: rate 5/s on 1 s ticks, ttl ttl_s, sessions of
 * sess_s seconds, at most max_active active. */
static wr_queue_config_t sess_cfg(uint64_t max_active, uint32_t ttl_s, uint32_t sess_s)
{
    wr_queue_config_t c = mkcfg(5, 1000, max_active, 0, ttl_s);
    c.session_seconds = sess_s;
    return c;
}

/* Admits the line's first users (one tick) and returns user's jti. */
static void admitted_jti(wr_store_t *s, const char *q, const char *u, char jti[WR_JTI_LEN + 1])
{
    sh_res_t r;
    assert_int_equal(sh_status(s, q, u, &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    memcpy(jti, r.entry.jti, WR_JTI_LEN + 1);
}

static void expect_no_session(wr_store_t *s, const char *q, const char *u, const char *jti)
{
    sh_res_t r;
    assert_int_equal(sh_release(s, q, u, jti, &r), WR_ETOKEN);
    assert_true(r.has_tok);
    assert_int_equal(r.tok.reason, WR_TOKEN_NO_SESSION);
}

/* consume opens a session (counted in active and sessions); verify passes
 * during it; a second consume is refused; release ends it once; release
 * of a never-consumed token leaves the token usable. */
static void t_session_release(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    char j1[WR_JTI_LEN + 1], j2[WR_JTI_LEN + 1];
    put_ok(s, "ses", sess_cfg(0, 300, 60));
    join_due(s, "ses", 1, 2);
    assert_int_equal(sh_admit(s, "ses", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 2);
    admitted_jti(s, "ses", "u1", j1);
    admitted_jti(s, "ses", "u2", j2);

    /* never consumed: no session, and the token stays live */
    expect_no_session(s, "ses", "u2", j2);
    assert_int_equal(sh_verify(s, "ses", "u2", j2, &r), WR_OK);

    assert_int_equal(sh_consume(s, "ses", "u1", j1, &r), WR_OK);
    assert_int_equal(sh_get(s, "ses", &r), WR_OK);
    assert_int_equal(r.stats.active, 2);
    assert_int_equal(r.stats.sessions, 1);
    assert_int_equal(r.stats.consumed_total, 1);
    for (int i = 0; i < 2; i++)
        assert_int_equal(sh_verify(s, "ses", "u1", j1, &r), WR_OK);
    assert_int_equal(sh_consume(s, "ses", "u1", j1, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    /* another jti or another user ends nothing */
    expect_no_session(s, "ses", "u1", j2);
    expect_no_session(s, "ses", "u2", j1);
    assert_int_equal(sh_status(s, "ses", "u1", &r), WR_ENOTINQUEUE);

    assert_int_equal(sh_release(s, "ses", "u1", j1, &r), WR_OK);
    assert_false(r.tok.passthrough);
    expect_no_session(s, "ses", "u1", j1);
    assert_int_equal(sh_verify(s, "ses", "u1", j1, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(sh_get(s, "ses", &r), WR_OK);
    assert_int_equal(r.stats.active, 1);
    assert_int_equal(r.stats.sessions, 0);
    assert_int_equal(r.stats.released_total, 1);
    assert_int_equal(r.stats.sessions_expired_total, 0);

    /* u2's token, released before, still consumes */
    assert_int_equal(sh_consume(s, "ses", "u2", j2, &r), WR_OK);
    assert_int_equal(sh_get(s, "ses", &r), WR_OK);
    assert_int_equal(r.stats.active, 1);
    assert_int_equal(r.stats.sessions, 1);

    /* sessionSeconds 0: a consume opens nothing */
    put_ok(s, "nos", sess_cfg(0, 300, 0));
    join_due(s, "nos", 1, 1);
    assert_int_equal(sh_admit(s, "nos", &a), WR_OK);
    admitted_jti(s, "nos", "u1", j1);
    assert_int_equal(sh_consume(s, "nos", "u1", j1, &r), WR_OK);
    expect_no_session(s, "nos", "u1", j1);
    assert_int_equal(sh_verify(s, "nos", "u1", j1, &r), WR_ETOKEN);
    assert_int_equal(sh_get(s, "nos", &r), WR_OK);
    assert_int_equal(r.stats.active, 0);
    assert_int_equal(r.stats.sessions, 0);

    /* no queue; disabled queue: passthrough */
    assert_int_equal(sh_release(s, "nosuch", "u1", j1, &r), WR_ENOTFOUND);
    wr_queue_config_t off = sess_cfg(0, 300, 60);
    off.enabled = false;
    put_ok(s, "ses", off);
    assert_int_equal(sh_release(s, "ses", "u2", j2, &r), WR_OK);
    assert_true(r.tok.passthrough);
    put_ok(s, "ses", sess_cfg(0, 300, 60));
    assert_int_equal(sh_release(s, "ses", "u2", j2, &r), WR_OK); /* kept while disabled */
    assert_false(r.tok.passthrough);
}

/* Of 50 releases of one session in flight at once, exactly one ends it. */
static void t_session_release_race(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    static sh_res_t rs[50];
    char j1[WR_JTI_LEN + 1];
    put_ok(s, "rr", sess_cfg(0, 300, 60));
    join_due(s, "rr", 1, 1);
    assert_int_equal(sh_admit(s, "rr", &a), WR_OK);
    admitted_jti(s, "rr", "u1", j1);
    assert_int_equal(sh_consume(s, "rr", "u1", j1, &r), WR_OK);
    for (int i = 0; i < 50; i++) {
        sh_begin(&rs[i]);
        assert_int_equal(wr_store_release(s, "rr", "u1", j1, sh_token_cb, &rs[i]), WR_OK);
        rs[i].returned = true;
    }
    int ok = 0, none = 0;
    for (int i = 0; i < 50; i++) {
        assert_true(sh_run_until(&rs[i].calls, 1, SH_WAIT_MS));
        assert_false(rs[i].sync_call);
        if (rs[i].err == WR_OK)
            ok++;
        else if (rs[i].err == WR_ETOKEN && rs[i].tok.reason == WR_TOKEN_NO_SESSION)
            none++;
    }
    assert_int_equal(ok, 1);
    assert_int_equal(none, 49);
    assert_int_equal(sh_get(s, "rr", &r), WR_OK);
    assert_int_equal(r.stats.active, 0);
    assert_int_equal(r.stats.released_total, 1);
}

/* A session lapses sessionSeconds after the consume: the next sweep (a
 * tick, a get) frees its slot, counted in sessionsExpiredTotal; verify
 * refuses it, release finds none. It outlives the token's own expiry. */
static void t_session_lapse(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a, c1;
    char j1[WR_JTI_LEN + 1], j2[WR_JTI_LEN + 1];
    /* tokens live 1 s, sessions 2 s; one active slot */
    put_ok(s, "lap", sess_cfg(1, 1, 2));
    join_due(s, "lap", 1, 3);
    assert_int_equal(sh_admit(s, "lap", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1);
    admitted_jti(s, "lap", "u1", j1);
    assert_int_equal(sh_status(s, "lap", "u1", &c1), WR_OK);
    assert_int_equal(sh_consume(s, "lap", "u1", j1, &r), WR_OK);
    int64_t consumed_at = wr_clock_wall_us();

    /* the slot stays held: the next ticks admit nobody */
    admit_next_tick(s, "lap", 1000000, a.admit.now_us / 1000000, &a);
    assert_int_equal(a.admit.admitted, 0);
    assert_int_equal(a.admit.stats.active, 1);
    assert_int_equal(a.admit.stats.sessions, 1);

    /* past the token's expiry, inside the session: verify still passes */
    pass_store_time(s, c1.entry.expires_at_us);
    assert_int_equal(sh_verify(s, "lap", "u1", j1, &r), WR_OK);
    assert_int_equal(sh_get(s, "lap", &r), WR_OK);
    assert_int_equal(r.stats.active, 1);
    assert_int_equal(r.stats.expired_total, 0);

    /* past the session's end */
    pass_store_time(s, consumed_at + 2000000);
    assert_int_equal(sh_verify(s, "lap", "u1", j1, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(sh_admit(s, "lap", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1); /* the lapse freed the slot in this tick */
    assert_int_equal(a.admit.stats.sessions, 0);
    assert_int_equal(a.admit.stats.sessions_expired_total, 1);
    assert_int_equal(a.admit.stats.released_total, 0);
    assert_int_equal(a.admit.stats.active, 1);
    expect_no_session(s, "lap", "u1", j1);

    /* a lapsed session not yet swept: release removes it, counted as lapsed */
    admitted_jti(s, "lap", "u2", j2);
    assert_int_equal(sh_consume(s, "lap", "u2", j2, &r), WR_OK);
    consumed_at = wr_clock_wall_us();
    pass_store_time(s, consumed_at + 2000000);
    expect_no_session(s, "lap", "u2", j2);
    assert_int_equal(sh_get(s, "lap", &r), WR_OK);
    assert_int_equal(r.stats.sessions, 0);
    assert_int_equal(r.stats.active, 0);
    assert_int_equal(r.stats.sessions_expired_total, 2);
    assert_int_equal(r.stats.released_total, 0);
}

/* leave ends the open session (releasedTotal, not leftTotal), also for a
 * user who joined the line again meanwhile. */
static void t_session_leave(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    char j1[WR_JTI_LEN + 1], j2[WR_JTI_LEN + 1];
    put_ok(s, "lv", sess_cfg(0, 300, 60));
    join_due(s, "lv", 1, 2);
    assert_int_equal(sh_admit(s, "lv", &a), WR_OK);
    admitted_jti(s, "lv", "u1", j1);
    admitted_jti(s, "lv", "u2", j2);
    assert_int_equal(sh_consume(s, "lv", "u1", j1, &r), WR_OK);
    assert_int_equal(sh_consume(s, "lv", "u2", j2, &r), WR_OK);

    assert_int_equal(sh_leave(s, "lv", "u1"), WR_OK);
    assert_int_equal(sh_get(s, "lv", &r), WR_OK);
    assert_int_equal(r.stats.active, 1);
    assert_int_equal(r.stats.sessions, 1);
    assert_int_equal(r.stats.released_total, 1);
    assert_int_equal(r.stats.left_total, 0);
    assert_int_equal(sh_leave(s, "lv", "u1"), WR_ENOTINQUEUE);
    expect_no_session(s, "lv", "u1", j1);
    assert_int_equal(sh_verify(s, "lv", "u1", j1, &r), WR_ETOKEN);

    /* u2 joins again while the session is open: leave ends both */
    assert_int_equal(sh_join(s, "lv", "u2", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(sh_verify(s, "lv", "u2", j2, &r), WR_OK);
    assert_int_equal(sh_leave(s, "lv", "u2"), WR_OK);
    assert_int_equal(sh_get(s, "lv", &r), WR_OK);
    assert_int_equal(r.stats.active, 0);
    assert_int_equal(r.stats.waiting, 0);
    assert_int_equal(r.stats.sessions, 0);
    assert_int_equal(r.stats.released_total, 2);
    assert_int_equal(r.stats.left_total, 1);
}

/* maxActive counts live tokens plus open sessions, exactly, under 200
 * random interleaved joins, admissions, consumes, releases and leaves,
 * compared with a model. */
#define SM_U 24
static void t_session_max_active_model(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    enum { NONE, WAITING, TOKEN } st[SM_U + 1] = {NONE};
    bool sess[SM_U + 1] = {false};
    char tok[SM_U + 1][WR_JTI_LEN + 1], sjti[SM_U + 1][WR_JTI_LEN + 1];
    int line[SM_U + 1], nline = 0;
    /* the admission delay: jgen[u] = gen when u joined; the model lets the
     * delay pass (gen + 1) before a tick that would admit someone who
     * joined since the last pass, so every tick may admit the whole n */
    int jgen[SM_U + 1] = {0}, gen = 0;
    uint64_t released = 0, consumed = 0, left = 0;
    const uint64_t max_active = 5;
    wr_queue_config_t c = mkcfg(1000, 10, max_active, 0, 300); /* 10 per 10 ms tick */
    c.session_seconds = 300;
    put_ok(s, "mm", c);
    srand(12345);
    int64_t prev_tick = -1;
    for (int op = 0; op < 200; op++) {
        int u = 1 + rand() % SM_U;
        char un[16];
        snprintf(un, sizeof un, "u%d", u);
        int k = rand() % 100;
        /* consume and release mostly by the users who can */
        int pick[SM_U], np = 0;
        for (int i = 1; i <= SM_U; i++)
            if ((k >= 50 && k < 70 && st[i] == TOKEN) || (k >= 70 && k < 88 && sess[i]))
                pick[np++] = i;
        if (np > 0 && rand() % 4 != 0) {
            u = pick[rand() % np];
            snprintf(un, sizeof un, "u%d", u);
        }
        if (k < 30) { /* join */
            assert_int_equal(sh_join(s, "mm", un, &r), WR_OK);
            if (st[u] == NONE) {
                st[u] = WAITING;
                jgen[u] = gen;
                line[nline++] = u;
            }
            assert_int_equal(r.entry.state, st[u] == TOKEN ? WR_ENTRY_ADMITTED : WR_ENTRY_WAITING);
        } else if (k < 50) { /* one admission tick */
            uint64_t active = 0;
            for (int i = 1; i <= SM_U; i++)
                active += (st[i] == TOKEN) + sess[i];
            uint64_t n = 10;
            if (n > (uint64_t)nline)
                n = (uint64_t)nline;
            uint64_t room = max_active > active ? max_active - active : 0;
            if (n > room)
                n = room;
            bool fresh = false;
            for (uint64_t i = 0; i < n; i++)
                fresh = fresh || jgen[line[i]] == gen;
            if (fresh) {
                pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US);
                gen++;
            }
            admit_next_tick(s, "mm", 10000, prev_tick, &a);
            prev_tick = a.admit.now_us / 10000;
            assert_int_equal(a.admit.admitted, n);
            for (uint64_t i = 0; i < n; i++) {
                int v = line[i];
                char vn[16];
                snprintf(vn, sizeof vn, "u%d", v);
                st[v] = TOKEN;
                admitted_jti(s, "mm", vn, tok[v]);
            }
            memmove(line, line + n, (size_t)(nline - (int)n) * sizeof line[0]);
            nline -= (int)n;
            assert_int_equal(a.admit.stats.active, active + n);
            assert_true(a.admit.stats.active <= max_active);
        } else if (k < 70) { /* consume: the token holder's own token */
            const char *j = st[u] == TOKEN ? tok[u] : "AAAAAAAAAAAAAAAAAAAAAA";
            wr_err_t e = sh_consume(s, "mm", un, j, &r);
            if (st[u] == TOKEN) {
                assert_int_equal(e, WR_OK);
                st[u] = NONE;
                sess[u] = true;
                memcpy(sjti[u], tok[u], sizeof sjti[u]);
                consumed++;
            } else {
                assert_int_equal(e, WR_ETOKEN);
            }
        } else if (k < 88) { /* release */
            const char *j =
                sess[u] ? sjti[u] : (st[u] == TOKEN ? tok[u] : "AAAAAAAAAAAAAAAAAAAAAA");
            wr_err_t e = sh_release(s, "mm", un, j, &r);
            if (sess[u]) {
                assert_int_equal(e, WR_OK);
                sess[u] = false;
                released++;
            } else {
                assert_int_equal(e, WR_ETOKEN);
                assert_int_equal(r.tok.reason, WR_TOKEN_NO_SESSION);
            }
        } else { /* leave */
            wr_err_t e = sh_leave(s, "mm", un);
            bool any = st[u] != NONE || sess[u];
            assert_int_equal(e, any ? WR_OK : WR_ENOTINQUEUE);
            if (st[u] == WAITING) {
                int i = 0;
                while (line[i] != u)
                    i++;
                memmove(line + i, line + i + 1, (size_t)(nline - i - 1) * sizeof line[0]);
                nline--;
            }
            if (st[u] != NONE)
                left++;
            if (sess[u])
                released++;
            st[u] = NONE;
            sess[u] = false;
        }
        if (op % 10 == 9 || op == 199) {
            uint64_t active = 0, nsess = 0;
            for (int i = 1; i <= SM_U; i++) {
                active += (st[i] == TOKEN) + sess[i];
                nsess += sess[i];
            }
            assert_int_equal(sh_get(s, "mm", &r), WR_OK);
            assert_int_equal(r.stats.active, active);
            assert_int_equal(r.stats.sessions, nsess);
            assert_int_equal(r.stats.waiting, (uint64_t)nline);
            assert_int_equal(r.stats.released_total, released);
            assert_int_equal(r.stats.consumed_total, consumed);
            assert_int_equal(r.stats.left_total, left);
            assert_true(active <= max_active);
        }
    }
    assert_true(released > 5);
    assert_true(consumed > 5);
}

/* ------------------------------------------------------------ Redis only */

static long long redis_time_us(void)
{
    redisReply *r = sh_redis_cmd("TIME");
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    long long us = atoll(r->element[0]->str) * 1000000LL + atoll(r->element[1]->str);
    freeReplyObject(r);
    return us;
}

/* K01: the arrival score is the exact 16-digit integer of Redis TIME. */
static void r_k01_score_precision(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "k01", mkcfg(5, 1000, 0, 0, 300));
    long long before = redis_time_us();
    assert_int_equal(sh_join(s, "k01", "u1", &r), WR_OK);
    long long after = redis_time_us();
    redisReply *z = sh_redis_cmd("ZSCORE wr:{k01}:waiting u1");
    assert_non_null(z);
    assert_int_equal(z->type, REDIS_REPLY_STRING);
    assert_int_equal(z->len, 16);
    assert_int_equal(strspn(z->str, "0123456789"), 16); /* no '.', no 'e' */
    long long score = atoll(z->str);
    freeReplyObject(z);
    assert_true(score >= before && score <= after);
    /* strictly increasing, even within one microsecond */
    assert_int_equal(sh_join(s, "k01", "u2", &r), WR_OK);
    z = sh_redis_cmd("ZSCORE wr:{k01}:waiting u2");
    assert_non_null(z);
    assert_int_equal(strspn(z->str, "0123456789"), z->len);
    assert_true(atoll(z->str) > score);
    freeReplyObject(z);
    /* token times come back as exact integers too */
    pass_store_time(s, after + WR_ADMIT_DELAY_US); /* u1 due (queue.h) */
    assert_int_equal(sh_admit(s, "k01", &r), WR_OK);
    assert_true(r.admit.now_us >= after);
    z = sh_redis_cmd("ZSCORE wr:{k01}:active u1");
    assert_non_null(z);
    assert_int_equal(z->len, 16);
    assert_int_equal(atoll(z->str), r.admit.now_us + 300 * 1000000LL);
    freeReplyObject(z);
}

static long long cmdstat_calls(const char *cmd)
{
    redisReply *r = sh_redis_cmd("INFO commandstats");
    assert_non_null(r);
    char key[64];
    snprintf(key, sizeof key, "cmdstat_%s:calls=", cmd);
    const char *p = strstr(r->str, key);
    long long n = p ? atoll(p + strlen(key)) : 0;
    freeReplyObject(r);
    return n;
}

/* K02: after SCRIPT FLUSH everything works, with one EVAL per request. */
static void r_k02_noscript(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r, a;
    put_ok(s, "k02", mkcfg(5, 1000, 0, 0, 300));
    join_due(s, "k02", 1, 1);
    assert_int_equal(sh_admit(s, "k02", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1);
    redisReply *x = sh_redis_cmd("SCRIPT FLUSH");
    assert_non_null(x);
    freeReplyObject(x);
    x = sh_redis_cmd("CONFIG RESETSTAT");
    assert_non_null(x);
    freeReplyObject(x);
    assert_int_equal(sh_join(s, "k02", "u2", &r), WR_OK); /* entry.lua reloaded */
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(sh_status(s, "k02", "u1", &r), WR_OK); /* same script: EVALSHA */
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    char jti[WR_JTI_LEN + 1];
    memcpy(jti, r.entry.jti, sizeof jti);
    assert_int_equal(sh_consume(s, "k02", "u1", jti, &r), WR_OK); /* token.lua reloaded */
    assert_int_equal(sh_consume(s, "k02", "u1", jti, &r), WR_ETOKEN);
    /* 4 operations = 4 EVALSHA (two answered NOSCRIPT) + exactly 2 EVAL */
    assert_int_equal(cmdstat_calls("eval"), 2);
    assert_int_equal(cmdstat_calls("evalsha"), 4);
}

/* CRC16/XMODEM, as Redis Cluster's key slot. */
static unsigned crc16(const char *p, size_t n)
{
    unsigned crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (unsigned)(unsigned char)p[i] << 8;
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    return crc;
}

static unsigned key_slot(const char *key)
{
    size_t n = strlen(key);
    const char *o = strchr(key, '{');
    if (o) {
        const char *c = strchr(o + 1, '}');
        if (c && c > o + 1)
            return crc16(o + 1, (size_t)(c - o - 1)) % 16384;
    }
    return crc16(key, n) % 16384;
}

/* K03: every key of one queue lives in one cluster slot. */
static void r_k03_one_slot(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    /* scripts never build key names: no key literal in any script text */
    size_t nf = 0;
    const wr_embed_file_t *f = wr_embed_all(&nf);
    int nscripts = 0;
    for (size_t i = 0; i < nf; i++) {
        if (strncmp(f[i].name, "scripts/", 8) != 0)
            continue;
        nscripts++;
        assert_null(strstr((const char *)f[i].data, "'wr:"));
        assert_null(strstr((const char *)f[i].data, "\"wr:"));
        assert_null(strstr((const char *)f[i].data, "[[wr:"));
    }
    assert_true(nscripts >= 8);
    assert_int_equal(crc16("123456789", 9), 0x31C3); /* reference vector */
    assert_int_equal(key_slot("foo"), 12182);        /* CLUSTER KEYSLOT foo */
    wr_queue_config_t c = mkcfg(5, 1000, 0, 0, 300);
    c.session_seconds = 60;
    put_ok(s, "k03", c);
    join_n(s, "k03", 1, 7);
    assert_int_equal(sh_join_page(s, "k03", "u8", &r), WR_OK);  /* pending */
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US); /* all due (queue.h) */
    assert_int_equal(sh_admit(s, "k03", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 5); /* 3 stay in line: every key exists */
    assert_int_equal(sh_status(s, "k03", "u1", &r), WR_OK);
    char jti[WR_JTI_LEN + 1];
    memcpy(jti, r.entry.jti, sizeof jti);
    assert_int_equal(sh_consume(s, "k03", "u1", jti, &r), WR_OK); /* opens a session */
    sh_begin(&r); /* degraded mode: the burned set */
    assert_int_equal(
        sh_settle(&r, wr_store_burn(s, "k03", "AAAAAAAAAAAAAAAAAAAAAA",
                                    wr_clock_wall_us() + 60000000, false, sh_token_cb, &r)),
        WR_OK);
    redisReply *k = sh_redis_cmd("KEYS *k03*");
    assert_non_null(k);
    assert_int_equal(k->type, REDIS_REPLY_ARRAY);
    /* config, waiting, active, tokens, state, sessions, sessjti, seen,
     * burned */
    assert_int_equal(k->elements, 9);
    unsigned slot = crc16("k03", 3) % 16384;
    for (size_t i = 0; i < k->elements; i++) {
        assert_non_null(strstr(k->element[i]->str, "{k03}"));
        assert_int_equal(key_slot(k->element[i]->str), slot);
    }
    freeReplyObject(k);
    /* queue_delete removes every one of them, the session keys too */
    assert_int_equal(sh_delete(s, "k03"), WR_OK);
    k = sh_redis_cmd("KEYS *k03*");
    assert_non_null(k);
    assert_int_equal(k->elements, 0);
    freeReplyObject(k);
}

/* A hung Redis: the command fails with WR_ETIMEOUT in time, the hung
 * connection is dropped, and the store serves again afterwards. */
static void r_command_timeout(void **state)
{
    sh_res_t r;
    wr_store_close(*state);
    wr_store_t *s = open_store_with(250);
    *state = s;
    assert_non_null(s);
    put_ok(s, "slow", mkcfg(5, 1000, 0, 0, 300));
    /* DEBUG SLEEP on another connection, sent but not awaited */
    redisContext *c = sh_redis_ctx();
    assert_non_null(c);
    assert_int_equal(redisAppendCommand(c, "DEBUG SLEEP 1.2"), REDIS_OK);
    int done = 0;
    while (!done)
        assert_int_equal(redisBufferWrite(c, &done), REDIS_OK);
    usleep(100000); /* let Redis pick it up before our command arrives */
    int64_t t0 = wr_clock_mono_ms();
    sh_begin(&r);
    assert_int_equal(wr_store_join(s, "slow", "u1", sh_entry_cb, &r), WR_OK);
    r.returned = true;
    assert_true(sh_run_until(&r.calls, 1, 2000));
    int64_t took = wr_clock_mono_ms() - t0;
    assert_int_equal(r.err, WR_ETIMEOUT);
    assert_false(r.sync_call);
    /* 250 ms timeout: never early; the upper bound leaves room for a loaded
     * machine (ASan, ctest -j) */
    assert_true(took >= 240 && took <= 1750);
    /* the overdue command makes the store drop the hung connection */
    int64_t deadline = wr_clock_mono_ms() + 1500;
    bool dropped = false;
    while (wr_clock_mono_ms() < deadline && !dropped) {
        sh_run_for(10);
        dropped = !wr_store_redis_connected(s);
    }
    assert_true(dropped);
    redisReply *x = NULL;
    assert_int_equal(redisGetReply(c, (void **)&x), REDIS_OK); /* the sleep is over */
    freeReplyObject(x);
    redisFree(c);
    sh_wait_connected(s, 5000);
    assert_int_equal(sh_join(s, "slow", "u2", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    sh_run_for(100);
    assert_int_equal(r.calls, 1);
}

/* K06: Redis stopped (SIGSTOP) with 200 commands in flight: every callback
 * runs exactly once with WR_ETIMEOUT within the timeout plus a margin, and
 * the store serves again by itself after SIGCONT. */
static void r_hung_many(void **state)
{
    static sh_res_t rs[200];
    sh_res_t r;
    wr_store_close(*state);
    wr_store_t *s = open_store_with(250);
    *state = s;
    assert_non_null(s);
    put_ok(s, "hung", mkcfg(5, 1000, 0, 0, 300));
    kill(sh_redis_pid(), SIGSTOP);
    int64_t t0 = wr_clock_mono_ms();
    for (int i = 0; i < 200; i++) {
        char u[16];
        snprintf(u, sizeof u, "u%d", i);
        sh_begin(&rs[i]);
        assert_int_equal(wr_store_join(s, "hung", u, sh_entry_cb, &rs[i]), WR_OK);
        rs[i].returned = true;
    }
    for (int i = 0; i < 200; i++)
        assert_true(sh_run_until(&rs[i].calls, 1, 2000));
    int64_t took = wr_clock_mono_ms() - t0;
    assert_true(took >= 240 && took <= 1750);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(rs[i].calls, 1);
        assert_int_equal(rs[i].err, WR_ETIMEOUT);
        assert_false(rs[i].sync_call);
    }
    sh_run_for(1000); /* the hung connection is dropped; no second callback */
    kill(sh_redis_pid(), SIGCONT);
    for (int i = 0; i < 200; i++)
        assert_int_equal(rs[i].calls, 1);
    sh_wait_connected(s, 5000);
    assert_int_equal(sh_join(s, "hung", "late", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
}

static wr_store_t *g_close_me;

static void close_on_timeout_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    sh_entry_cb(err, e, arg);
    if (g_close_me) {
        wr_store_close(g_close_me);
        g_close_me = NULL;
    }
}

/* close() from inside a WR_ETIMEOUT callback (a timer, not a hiredis
 * callback): the other pending command is cancelled once; ASan-clean. */
static void r_close_in_timeout(void **state)
{
    sh_res_t r1, r2;
    wr_store_close(*state);
    wr_store_t *s = open_store_with(250);
    *state = NULL;
    assert_non_null(s);
    put_ok(s, "cit", mkcfg(5, 1000, 0, 0, 300));
    kill(sh_redis_pid(), SIGSTOP);
    sh_begin(&r1);
    sh_begin(&r2);
    g_close_me = s;
    assert_int_equal(wr_store_join(s, "cit", "u1", close_on_timeout_cb, &r1), WR_OK);
    r1.returned = true;
    sh_run_for(50); /* u2's deadline comes clearly after u1's */
    assert_int_equal(wr_store_join(s, "cit", "u2", sh_entry_cb, &r2), WR_OK);
    r2.returned = true;
    bool ok = sh_run_until(&r1.calls, 1, 2000);
    kill(sh_redis_pid(), SIGCONT);
    assert_true(ok);
    assert_null(g_close_me);
    assert_int_equal(r1.err, WR_ETIMEOUT);
    assert_int_equal(r2.calls, 1);
    assert_int_equal(r2.err, WR_ECANCELED);
    sh_run_for(200);
    assert_int_equal(r1.calls, 1);
    assert_int_equal(r2.calls, 1);
}

/* Redis dies with commands in flight: each callback gets an error exactly
 * once, calls fail at once while down, and the store reconnects by itself
 * when Redis is back on the same socket. */
static void r_kill_and_restart(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r[10], one;
    put_ok(s, "kill", mkcfg(5, 1000, 0, 0, 300));
    kill(sh_redis_pid(), SIGSTOP);
    for (int i = 0; i < 10; i++) { /* one batch of joins and statuses */
        char u[8];
        snprintf(u, sizeof u, "u%d", i / 2);
        sh_begin(&r[i]);
        assert_int_equal(i % 2 ? wr_store_status(s, "kill", u, sh_entry_cb, &r[i])
                               : wr_store_join(s, "kill", u, sh_entry_cb, &r[i]),
                         WR_OK);
        r[i].returned = true;
    }
    sh_run_for(50);
    for (int i = 0; i < 10; i++)
        assert_int_equal(r[i].calls, 0); /* stalled, not failed */
    sh_redis_stop(SIGKILL);
    int64_t deadline = wr_clock_mono_ms() + 1500; /* well below the 2 s command timeout */
    for (int i = 0; i < 10; i++) {
        assert_true(sh_run_until(&r[i].calls, 1, (int)(deadline - wr_clock_mono_ms())));
    }
    for (int i = 0; i < 10; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].err, WR_EUNAVAILABLE);
        assert_false(r[i].sync_call);
    }
    assert_false(wr_store_redis_connected(s));
    sh_begin(&one);
    assert_int_equal(wr_store_join(s, "kill", "x", sh_entry_cb, &one), WR_EUNAVAILABLE);
    assert_int_equal(wr_store_ping(s, sh_done_cb, &one), WR_EUNAVAILABLE);
    sh_run_for(300);
    assert_int_equal(one.calls, 0);

    assert_int_equal(sh_redis_start(), 0);
    sh_wait_connected(s, 5000);
    assert_int_equal(sh_ping(s), WR_OK);
    assert_int_equal(sh_join(s, "kill", "u1", &one), WR_ENOTFOUND); /* no persistence */
    put_ok(s, "kill", mkcfg(5, 1000, 0, 0, 300));
    assert_int_equal(sh_join(s, "kill", "u1", &one), WR_OK);
    assert_int_equal(one.entry.position, 1);
    for (int i = 0; i < 10; i++)
        assert_int_equal(r[i].calls, 1);
}

/* Damaged or foreign state in Redis: clear errors, never a crash. */
static void r_corrupt_state(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "bad", mkcfg(5, 1000, 0, 0, 300));
    put_ok(s, "good", mkcfg(5, 1000, 0, 0, 300));
    redisReply *x = sh_redis_cmd("SADD wr:queues ghost"); /* a name without config */
    assert_non_null(x);
    freeReplyObject(x);
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.names[0], "bad");
    assert_string_equal(r.names[1], "good");
    /* a token entry that does not parse is no token */
    x = sh_redis_cmd("HSET wr:{bad}:tokens u1 garbage");
    assert_non_null(x);
    freeReplyObject(x);
    assert_int_equal(sh_status(s, "bad", "u1", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_consume(s, "bad", "u1", "garbage", &r), WR_ETOKEN);
    /* a config JSON that does not parse (new version) */
    x = sh_redis_cmd("HSET wr:{bad}:config json {nope version 12345");
    assert_non_null(x);
    freeReplyObject(x);
    assert_int_equal(sh_join(s, "bad", "u2", &r), WR_EPROTO);
    assert_int_equal(sh_get(s, "bad", &r), WR_EPROTO);
    assert_int_equal(sh_admit(s, "bad", &r), WR_EPROTO);
    assert_int_equal(sh_join(s, "good", "u2", &r), WR_OK);
    /* a key of the wrong type makes the script fail: an error, no crash */
    x = sh_redis_cmd("SET wr:{good}:waiting notazset");
    assert_non_null(x);
    freeReplyObject(x);
    assert_int_equal(sh_join(s, "good", "u3", &r), WR_EPROTO);
    assert_int_equal(sh_ping(s), WR_OK);
}

/* Calls of EVALSHA and EVAL Redis has run so far (INFO commandstats). */
static long long script_calls(void)
{
    redisReply *x = sh_redis_cmd("INFO commandstats");
    assert_non_null(x);
    assert_int_equal(x->type, REDIS_REPLY_STRING);
    long long n = 0;
    const char *names[] = {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="};
    for (int i = 0; i < 2; i++) {
        const char *p = strstr(x->str, names[i]);
        if (p)
            n += atoll(p + strlen(names[i]));
    }
    freeReplyObject(x);
    return n;
}

/* The joins and statuses of one queue in one iteration are one script
 * call; a request that raises an error inside it (damaged state) answers
 * WR_EPROTO alone, the others their own answers. */
static void r_iteration_errors(void **state)
{
    wr_store_t *s = *state;
    put_ok(s, "be", mkcfg(5, 1000, 0, 0, 300));
    join_n(s, "be", 1, 2);
    long long before = script_calls();
    const step_t one_call[] = {
        {'s', "be", "u1", WR_OK, WR_OK, 1, 2},          {'j', "be", "u3", WR_OK, WR_OK, 3, 3},
        {'s', "be", "u9", WR_OK, WR_ENOTINQUEUE, 0, 0}, {'s', "be", "u2", WR_OK, WR_OK, 2, 3},
        {'j', "be", "u2", WR_OK, WR_OK, 2, 3},
    };
    run_steps(s, one_call, sizeof one_call / sizeof one_call[0]);
    assert_int_equal(script_calls() - before, 1);

    /* a join of a newcomer now fails inside the script (lastScore is not a
     * number); polls of people in line do not touch it */
    redisReply *x = sh_redis_cmd("HSET wr:{be}:state lastScore garbage");
    assert_non_null(x);
    freeReplyObject(x);
    const step_t middle[] = {
        {'s', "be", "u1", WR_OK, WR_OK, 1, 3},          {'j', "be", "u4", WR_OK, WR_EPROTO, 0, 0},
        {'s', "be", "u3", WR_OK, WR_OK, 3, 3},          {'j', "be", "u5", WR_OK, WR_EPROTO, 0, 0},
        {'s', "be", "u4", WR_OK, WR_ENOTINQUEUE, 0, 0}, {'j', "be", "u1", WR_OK, WR_OK, 1, 3},
    };
    run_steps(s, middle, sizeof middle / sizeof middle[0]);
    /* the same request alone (entry.lua) fails the same way */
    sh_res_t r;
    assert_int_equal(sh_join(s, "be", "u4", &r), WR_EPROTO);
    assert_int_equal(sh_status(s, "be", "u2", &r), WR_OK);
    assert_int_equal(r.entry.position, 2);

    /* a key of the wrong type under every request: each gets the error */
    x = sh_redis_cmd("SET wr:{be}:waiting notazset");
    assert_non_null(x);
    freeReplyObject(x);
    const step_t all_fail[] = {
        {'s', "be", "u1", WR_OK, WR_EPROTO, 0, 0},
        {'j', "be", "u6", WR_OK, WR_EPROTO, 0, 0},
        {'s', "be", "u2", WR_OK, WR_EPROTO, 0, 0},
    };
    run_steps(s, all_fail, sizeof all_fail / sizeof all_fail[0]);
    /* the config itself unreadable: the whole call fails, each once */
    x = sh_redis_cmd("DEL wr:{be}:config");
    assert_non_null(x);
    freeReplyObject(x);
    x = sh_redis_cmd("SET wr:{be}:config x");
    assert_non_null(x);
    freeReplyObject(x);
    run_steps(s, all_fail, sizeof all_fail / sizeof all_fail[0]);
    assert_int_equal(sh_ping(s), WR_OK);
}

/* Durability mode: joins are WAITed for (strict), statuses never; a
 * status made in the same iteration as joins is answered as without
 * them. Here no replica exists, so every WAIT falls short: each join
 * answers WR_EUNAVAILABLE (it stands on the primary), each status its
 * place. */
static void r_iteration_durability(void **state)
{
    (void)state;
    char url[600];
    snprintf(url, sizeof url, "unix://%s", sh_redis_sock());
    wr_store_redis_opts_t o = {
        .url = url, .command_timeout_ms = 2000, .wait_replicas = 1, .wait_timeout_ms = 20};
    wr_store_t *s = NULL;
    assert_int_equal(wr_store_redis_open(sh_base(), &o, &s), WR_OK);
    sh_wait_connected(s, SH_WAIT_MS);
    put_ok(s, "bd", mkcfg(5, 1000, 0, 0, 300));
    sh_res_t r;
    assert_int_equal(sh_join(s, "bd", "u1", &r), WR_EUNAVAILABLE); /* applied on the primary */
    const step_t steps[] = {
        {'s', "bd", "u1", WR_OK, WR_OK, 1, 1},
        {'j', "bd", "u2", WR_OK, WR_EUNAVAILABLE, 0, 0},
        {'s', "bd", "u1", WR_OK, WR_OK, 1, 2},
        {'s', "bd", "u2", WR_OK, WR_OK, 2, 2},
        {'j', "bd", "u3", WR_OK, WR_EUNAVAILABLE, 0, 0},
        {'j', "bd", "u1", WR_OK, WR_EUNAVAILABLE, 0, 0},
        {'s', "bd", "u3", WR_OK, WR_OK, 3, 3},
    };
    g_in_order = false;
    run_steps(s, steps, sizeof steps / sizeof steps[0]);
    g_in_order = true;
    wr_store_close(s);
}

/* The fake server (fake_redis.h) on DIR/fake.sock, and store_redis
 * connected to it (2 s command timeout, quick reconnects). */
static wr_store_t *open_fake(fake_redis_t **f)
{
    char path[600];
    snprintf(path, sizeof path, "%s/fake.sock", sh_redis_dir());
    *f = fake_redis_start(path);
    assert_non_null(*f);
    char url[700];
    snprintf(url, sizeof url, "unix://%s", path);
    wr_store_redis_opts_t o = {.url = url, .command_timeout_ms = 2000, .reconnect_max_ms = 200};
    wr_store_t *s = NULL;
    assert_int_equal(wr_store_redis_open(sh_base(), &o, &s), WR_OK);
    sh_wait_connected(s, SH_WAIT_MS);
    return s;
}

/* A one-shot raw reply and a batch of joins and statuses against the
 * fake server: each request answered exactly once, with its own answer
 * or the batch's error. */
static void fake_steps(fake_redis_t *f, wr_store_t *s, const char *raw, const step_t *steps,
                       size_t n)
{
    fake_redis_reply(f, raw, strlen(raw));
    run_steps(s, steps, n);
}

/* Batch replies Redis would never send, an error answer in the middle,
 * and the connection lost with a batch in flight. */
static void r_iteration_bad_replies(void **state)
{
    (void)state;
    fake_redis_t *f;
    wr_store_t *s = open_fake(&f);
    wr_queue_config_t c = mkcfg(5, 1000, 0, 0, 300);
    json_t *j = wr_qconfig_to_json(&c);
    char *json = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    assert_non_null(json);
    char ok3[2048];
    /* {version, json, WAITING 1 of 3, an error, NOT IN QUEUE} */
    snprintf(ok3, sizeof ok3,
             "*9\r\n:9\r\n$%zu\r\n%s\r\n:1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n-ERR boom\r\n:-3\r\n",
             strlen(json), json);
    const step_t three_mid[] = {
        {'s', "q", "u1", WR_OK, WR_OK, 1, 3},
        {'j', "q", "u2", WR_OK, WR_EPROTO, 0, 0},
        {'s', "q", "u3", WR_OK, WR_ENOTINQUEUE, 0, 0},
    };
    fake_steps(f, s, ok3, three_mid, 3);
    /* the version this client now knows, JSON omitted: WAITING 2 of 3,
     * ADMITTED, FULL at 7 */
    const char known3[] = "*13\r\n:9\r\n$0\r\n\r\n:1\r\n:2\r\n:3\r\n:-1\r\n:-1\r\n"
                          ":2\r\n$22\r\nAAAAAAAAAAAAAAAAAAAAAA\r\n:1\r\n:2\r\n:-2\r\n:7\r\n";
    const step_t three_known[] = {
        {'s', "q", "u1", WR_OK, WR_OK, 2, 3},
        {'s', "q", "u2", WR_OK, WR_OK, -1, 0},
        {'j', "q", "u3", WR_OK, WR_EFULL, 0, 7},
    };
    fake_steps(f, s, known3, three_known, 3);
    /* PASSTHROUGH, then not in queue twice */
    const char pass3[] = "*5\r\n:9\r\n$0\r\n\r\n:3\r\n:-3\r\n:-3\r\n";
    const step_t three_pass[] = {
        {'j', "q", "u1", WR_OK, WR_OK, -2, 0},
        {'s', "q", "u2", WR_OK, WR_ENOTINQUEUE, 0, 0},
        {'s', "q", "u3", WR_OK, WR_ENOTINQUEUE, 0, 0},
    };
    fake_steps(f, s, pass3, three_pass, 3);
    /* shapes that are not a batch answer of three: each request WR_EPROTO */
    const char *bad[] = {
        "+OK\r\n",
        "-ERR boom\r\n",
        "*0\r\n",
        ":1\r\n",
        /* two answers for three requests */
        "*12\r\n:9\r\n$0\r\n\r\n:1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n:1\r\n:2\r\n:3\r\n:-1\r\n:-1\r\n",
        /* four answers for three requests */
        "*6\r\n:9\r\n$0\r\n\r\n:-3\r\n:-3\r\n:-3\r\n:-3\r\n",
        /* the last answer cut short */
        "*14\r\n:9\r\n$0\r\n\r\n:1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n:1\r\n:2\r\n:3\r\n:-1\r\n:-1\r\n:"
        "1\r\n:3\r\n",
        /* an unknown kind, a kind 0, a jti where a number goes */
        "*5\r\n:9\r\n$0\r\n\r\n:-3\r\n:42\r\n:-3\r\n",
        "*5\r\n:9\r\n$0\r\n\r\n:-3\r\n:0\r\n:-3\r\n",
        "*7\r\n:9\r\n$0\r\n\r\n:-3\r\n:1\r\n$1\r\n1\r\n:3\r\n:-3\r\n",
        /* a nested answer (not the flat form) */
        "*5\r\n:9\r\n$0\r\n\r\n*1\r\n:-3\r\n:-3\r\n:-3\r\n",
        /* the version and JSON of the wrong types */
        "*5\r\n$1\r\n9\r\n$0\r\n\r\n:-3\r\n:-3\r\n:-3\r\n",
        "*5\r\n:9\r\n:0\r\n:-3\r\n:-3\r\n:-3\r\n",
        /* entry.lua's reply (for one request) */
        "*8\r\n:1\r\n:9\r\n$0\r\n\r\n:1\r\n:3\r\n$0\r\n\r\n:0\r\n:0\r\n",
    };
    const step_t three_bad[] = {
        {'s', "q", "u1", WR_OK, WR_EPROTO, 0, 0},
        {'j', "q", "u2", WR_OK, WR_EPROTO, 0, 0},
        {'s', "q", "u3", WR_OK, WR_EPROTO, 0, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        fake_steps(f, s, bad[i], three_bad, 3);
    /* decodable answers with bad values: that answer WR_EPROTO alone */
    const char vals[] = "*16\r\n:9\r\n$0\r\n\r\n:1\r\n:0\r\n:3\r\n:-1\r\n:-1\r\n"
                        ":1\r\n:4\r\n:3\r\n:-1\r\n:-1\r\n:2\r\n$0\r\n\r\n:1\r\n:2\r\n";
    const step_t three_vals[] = {
        {'s', "q", "u1", WR_OK, WR_EPROTO, 0, 0}, /* position 0 */
        {'s', "q", "u2", WR_OK, WR_EPROTO, 0, 0}, /* position above the line */
        {'s', "q", "u3", WR_OK, WR_EPROTO, 0, 0}, /* empty jti */
    };
    fake_steps(f, s, vals, three_vals, 3);
    /* a version this client never saw, JSON omitted: the config part does
     * not resolve, for the waiting answer; "no queue" needs none */
    const char unknown[] = "*8\r\n:10\r\n$0\r\n\r\n:1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n";
    const step_t two_unknown[] = {
        {'s', "q", "u1", WR_OK, WR_EPROTO, 0, 0},
        {'j', "q", "u2", WR_OK, WR_ENOTFOUND, 0, 0},
    };
    fake_steps(f, s, unknown, two_unknown, 2);

    /* the connection lost with a batch in flight (its reply cut off):
     * every request WR_EUNAVAILABLE, once; then the store reconnects */
    const char cut[] = "*9\r\n:9\r\n$0\r\n\r\n:1\r\n";
    fake_redis_reply(f, cut, strlen(cut));
    sh_res_t r[4];
    for (int i = 0; i < 4; i++) {
        sh_begin(&r[i]);
        wr_err_t rc = i % 2 ? wr_store_join(s, "q", "u1", sh_entry_cb, &r[i])
                            : wr_store_status(s, "q", "u2", sh_entry_cb, &r[i]);
        assert_int_equal(rc, WR_OK);
        r[i].returned = true;
    }
    sh_run_for(100);
    for (int i = 0; i < 4; i++)
        assert_int_equal(r[i].calls, 0);
    fake_redis_drop(f);
    for (int i = 0; i < 4; i++)
        assert_true(sh_run_until(&r[i].calls, 1, SH_WAIT_MS));
    sh_run_for(50);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].err, WR_EUNAVAILABLE);
        assert_false(r[i].sync_call);
    }
    sh_wait_connected(s, SH_WAIT_MS);
    fake_steps(f, s, known3, three_known, 3);
    wr_store_close(s);
    fake_redis_stop(f);
    free(json);
}

static void r_url_and_db(void **state)
{
    (void)state;
    wr_store_t *s = NULL;
    const char *bad[] = {"",
                         "http://127.0.0.1:6379",
                         "redis://",
                         "redis://:6379",
                         "redis://127.0.0.1:0",
                         "redis://127.0.0.1:70000",
                         "redis://127.0.0.1:6379x",
                         "redis://127.0.0.1:6379/x",
                         "unix://",
                         "unix://relative/path",
                         "unix:///tmp/x.sock?db=",
                         "unix:///tmp/x.sock?db=-1",
                         "unix:///tmp/x.sock?foo=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wr_store_redis_opts_t o = {.url = bad[i]};
        assert_int_equal(wr_store_redis_open(sh_base(), &o, &s), WR_EINVAL);
    }
    /* well-formed TCP URL to a closed port: opens, stays disconnected */
    wr_store_redis_opts_t tcp = {.url = "redis://127.0.0.1:1/2", .reconnect_max_ms = 200};
    assert_int_equal(wr_store_redis_open(sh_base(), &tcp, &s), WR_OK);
    sh_run_for(100);
    assert_false(wr_store_redis_connected(s));
    sh_res_t r;
    sh_begin(&r);
    assert_int_equal(wr_store_ping(s, sh_done_cb, &r), WR_EUNAVAILABLE);
    wr_store_close(s);
    assert_int_equal(r.calls, 0);

    /* ?db=N selects the database */
    char url[600];
    snprintf(url, sizeof url, "unix://%s?db=3", sh_redis_sock());
    wr_store_redis_opts_t o = {.url = url};
    assert_int_equal(wr_store_redis_open(sh_base(), &o, &s), WR_OK);
    sh_wait_connected(s, SH_WAIT_MS);
    put_ok(s, "db3", mkcfg(5, 1000, 0, 0, 300));
    wr_store_close(s);
    redisContext *c = sh_redis_ctx();
    assert_non_null(c);
    redisReply *x = redisCommand(c, "EXISTS wr:{db3}:config");
    assert_non_null(x);
    assert_int_equal(x->integer, 0); /* not in db 0 */
    freeReplyObject(x);
    x = redisCommand(c, "SELECT 3");
    freeReplyObject(x);
    x = redisCommand(c, "EXISTS wr:{db3}:config");
    assert_non_null(x);
    assert_int_equal(x->integer, 1);
    freeReplyObject(x);
    redisFree(c);
}

enum {
    OP_JOIN,
    OP_STATUS,
    OP_ADMIT,
    OP_CONSUME,
    OP_VERIFY,
    OP_GET,
    OP_LEAVE,
    OP_DELETE,
    OP_PUT,
    OP_SECRET,
    OP_LIST,
    OP_N
};
static const char *const op_names[OP_N] = {"join",  "status", "admit", "consume", "verify", "get",
                                           "leave", "delete", "put",   "secret",  "list"};

static wr_err_t run_op(wr_store_t *s, int op)
{
    sh_res_t r;
    wr_queue_config_t c = mkcfg(5, 1000, 0, 0, 300);
    switch (op) {
    case OP_JOIN:
        return sh_join(s, "q", "u1", &r);
    case OP_STATUS:
        return sh_status(s, "q", "u1", &r);
    case OP_ADMIT:
        return sh_admit(s, "q", &r);
    case OP_CONSUME:
        return sh_consume(s, "q", "u1", "AAAAAAAAAAAAAAAAAAAAAA", &r);
    case OP_VERIFY:
        return sh_verify(s, "q", "u1", "AAAAAAAAAAAAAAAAAAAAAA", &r);
    case OP_GET:
        return sh_get(s, "q", &r);
    case OP_LEAVE:
        return sh_leave(s, "q", "u1");
    case OP_DELETE:
        return sh_delete(s, "q");
    case OP_PUT:
        return sh_put(s, "q", &c);
    case OP_SECRET:
        return sh_secret(s, (const uint8_t *)"0123456789abcdef0123456789abcdef", 32, &r);
    default:
        return sh_list(s, &r);
    }
}

/* Replies Redis would never send: every operation answers WR_EPROTO (or a
 * value the reply really means), exactly once, never crashes. */
static void r_bad_replies(void **state)
{
    (void)state;
    fake_redis_t *f;
    wr_store_t *s = open_fake(&f);

    char jti30[] = "*8\r\n:2\r\n:9\r\n$20\r\n{\"admitPerSecond\":5}\r\n:0\r\n:0\r\n"
                   "$30\r\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n:1\r\n:2\r\n";
    char big[400];
    int bn = snprintf(big, sizeof big, "$300\r\n%0300d\r\n", 0);
    const struct {
        const char *raw;
        size_t len;     /* 0 = strlen */
        const char *ok; /* ops for which the reply is a valid answer */
    } cases[] = {
        {"+OK\r\n", 0, ""},
        {"$3\r\nabc\r\n", 0, "secret"},
        {":99\r\n", 0, "put"},
        {"*0\r\n", 0, "list"},
        {"-ERR boom\r\n", 0, ""},
        {"$-1\r\n", 0, ""},
        {"*-1\r\n", 0, ""},
        {"*1\r\n*1\r\n*0\r\n", 0, ""},
        /* entry shape, JSON omitted for a version this client never saw */
        {"*8\r\n:1\r\n:5\r\n$0\r\n\r\n:1\r\n:1\r\n$0\r\n\r\n:0\r\n:0\r\n", 0, ""},
        /* entry shape, config JSON that does not parse */
        {"*8\r\n:1\r\n:7\r\n$4\r\n{bad\r\n:1\r\n:1\r\n$0\r\n\r\n:0\r\n:0\r\n", 0, ""},
        /* entry shape with wrong element types */
        {"*8\r\n:1\r\n:1\r\n:0\r\n:1\r\n:1\r\n:0\r\n:0\r\n:0\r\n", 0, ""},
        /* waiting at position 0 */
        {"*8\r\n:1\r\n:9\r\n$20\r\n{\"admitPerSecond\":5}\r\n:0\r\n:3\r\n$0\r\n\r\n:0\r\n:0\r\n", 0,
         ""},
        /* unknown kind */
        {"*8\r\n:42\r\n:9\r\n$20\r\n{\"admitPerSecond\":5}\r\n:1\r\n:3\r\n$0\r\n\r\n:0\r\n:0\r\n",
         0, ""},
        /* admitted with a jti longer than a jti */
        {jti30, 0, ""},
        /* admit shape with the JSON slot an integer, and with admitted < 0 */
        {"*12\r\n:0\r\n:1\r\n:5\r\n:9\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n", 0, ""},
        {"*12\r\n:0\r\n:-1\r\n:5\r\n:9\r\n$20\r\n{\"admitPerSecond\":5}\r\n:0\r\n:0\r\n:0\r\n:0\r\n"
         ":0\r\n:0\r\n:0\r\n",
         0, ""},
        /* a secret longer than any secret */
        {big, (size_t)bn, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_redis_reply(f, cases[i].raw, cases[i].len ? cases[i].len : strlen(cases[i].raw));
        for (int op = 0; op < OP_N; op++) {
            wr_err_t want = strstr(cases[i].ok, op_names[op]) ? WR_OK : WR_EPROTO;
            wr_err_t got = run_op(s, op);
            if (got != want)
                fail_msg("case %zu op %s: %s, want %s", i, op_names[op], wr_errname(got),
                         wr_errname(want));
        }
    }

    /* NOSCRIPT twice: exactly one EVAL per script operation, then EPROTO */
    const char ns[] = "-NOSCRIPT No matching script. Please use EVAL.\r\n";
    fake_redis_reply(f, ns, strlen(ns));
    int evals = fake_redis_count(f, "EVAL");
    for (int op = 0; op < OP_N; op++)
        assert_int_equal(run_op(s, op), WR_EPROTO);
    assert_int_equal(fake_redis_count(f, "EVAL") - evals, OP_N - 1); /* list: no script */

    /* a reply cut off by a disconnect: one WR_EUNAVAILABLE, then reconnects */
    const char cut[] = "*8\r\n:1\r\n";
    fake_redis_reply(f, cut, strlen(cut));
    sh_res_t r;
    sh_begin(&r);
    assert_int_equal(wr_store_join(s, "q", "u1", sh_entry_cb, &r), WR_OK);
    r.returned = true;
    sh_run_for(100);
    assert_int_equal(r.calls, 0);
    fake_redis_drop(f);
    assert_true(sh_run_until(&r.calls, 1, SH_WAIT_MS));
    assert_int_equal(r.err, WR_EUNAVAILABLE);
    sh_wait_connected(s, SH_WAIT_MS);
    fake_redis_reply(f, "+OK\r\n", 5);
    assert_int_equal(run_op(s, OP_JOIN), WR_EPROTO);
    assert_int_equal(r.calls, 1);
    wr_store_close(s);
    fake_redis_stop(f);
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
    put_ok(s, "bq", mkcfg(5, 1000, 0, 0, 300));
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
    wr_queue_config_t off = mkcfg(5, 1000, 0, 0, 300);
    off.enabled = false;
    put_ok(s, "bq", off);
    assert_int_equal(burn(s, "bq", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ETOKEN);
    assert_int_equal(burn(s, "bq", "DDDDDDDDDDDDDDDDDDDDDD", exp, false, &r), WR_OK);
    /* a burn is not a token: the line and the counters do not move */
    assert_int_equal(sh_get(s, "bq", &r), WR_OK);
    assert_int_equal(r.stats.active, 0);
    assert_int_equal(r.stats.consumed_total, 0);
}

/* Expired burns are swept: after its expiry the same jti burns again. */
static void t_burn_expiry_swept(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "bx", mkcfg(5, 1000, 0, 0, 300));
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
    put_ok(s, "b1", mkcfg(5, 1000, 0, 0, 300));
    put_ok(s, "b2", mkcfg(5, 1000, 0, 0, 300));
    assert_int_equal(burn(s, "b1", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_OK);
    assert_int_equal(burn(s, "b2", "AAAAAAAAAAAAAAAAAAAAAA", exp, true, &r), WR_OK);
    assert_int_equal(burn(s, "b2", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_OK);
    assert_int_equal(burn(s, "b1", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ETOKEN);
    assert_int_equal(burn(s, "b2", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ETOKEN);
    assert_int_equal(sh_delete(s, "b1"), WR_OK);
    assert_int_equal(burn(s, "b1", "AAAAAAAAAAAAAAAAAAAAAA", exp, false, &r), WR_ENOTFOUND);
    put_ok(s, "b1", mkcfg(5, 1000, 0, 0, 300));
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

/* ------------------------------------------------- people who stop asking */

/* Lets us of store time pass: the debug hook where there is one, else a
 * real wait (Redis TIME is this host's clock). */
static void pass_us(wr_store_t *s, int64_t us)
{
    if (s->ops->debug_advance_time) {
        assert_int_equal(s->ops->debug_advance_time(s, us), WR_OK);
        return;
    }
    sh_run_for((int)(us / 1000) + 1);
}

static void expect_waiting(wr_store_t *s, const char *q, const char *u, uint64_t pos,
                           uint64_t waiting)
{
    sh_res_t r;
    assert_int_equal(sh_status(s, q, u, &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, pos);
    assert_int_equal(r.entry.waiting, waiting);
}

/* idleTimeoutSeconds: a waiting user whose last join or poll is that old
 * leaves the line (abandonedTotal, not leftTotal); asking late is
 * NOT_IN_QUEUE (checked on read, before any sweep); a poll keeps one in
 * line; the admission tick removes the others; joining again is a new
 * place at the end. A pending page join that never comes back goes too. */
static void t_idle_removed(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = mkcfg(5, 100, 0, 0, 300);
    c.paused = true;
    c.idle_timeout_seconds = 1;
    put_ok(s, "idle", c);
    join_n(s, "idle", 1, 3);
    assert_int_equal(sh_join_page(s, "idle", "p1", &r), WR_OK);
    assert_int_equal(r.entry.position, 4);
    pass_us(s, 550000);
    expect_waiting(s, "idle", "u2", 2, 4); /* a poll: seen now */
    /* 1.45 s: idle on both stores (Redis: 1 s + its 250 ms slack); u2,
     * seen at 0.55 s, is not */
    pass_us(s, 900000);
    /* u1, u3 and p1 are idle; nothing swept them yet */
    assert_int_equal(sh_status(s, "idle", "u1", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_get(s, "idle", &r), WR_OK);
    assert_int_equal(r.stats.abandoned_total, 1);
    assert_int_equal(r.stats.left_total, 0);
    assert_int_equal(r.stats.waiting, 3);
    expect_waiting(s, "idle", "u2", 1, 3); /* u1's place no longer counts */
    /* the tick removes the rest */
    assert_int_equal(sh_admit(s, "idle", &r), WR_OK);
    assert_int_equal(r.admit.stats.abandoned_total, 3);
    assert_int_equal(r.admit.stats.waiting, 1);
    assert_int_equal(r.admit.stats.left_total, 0);
    assert_int_equal(sh_status(s, "idle", "u3", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_status(s, "idle", "p1", &r), WR_ENOTINQUEUE);
    /* a join after removal is a newcomer at the end */
    assert_int_equal(sh_join(s, "idle", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, 2);
    assert_int_equal(r.entry.waiting, 2);
    /* a late join is not a revival either: counted, then a new place */
    pass_us(s, 1400000);
    assert_int_equal(sh_join(s, "idle", "u2", &r), WR_OK);
    assert_int_equal(r.entry.position, 2); /* u1 (idle, unswept) is still ahead */
    assert_int_equal(sh_get(s, "idle", &r), WR_OK);
    assert_int_equal(r.stats.abandoned_total, 4);
    /* leave is still leftTotal */
    assert_int_equal(sh_leave(s, "idle", "u2"), WR_OK);
    assert_int_equal(sh_get(s, "idle", &r), WR_OK);
    assert_int_equal(r.stats.left_total, 1);
    assert_int_equal(r.stats.abandoned_total, 4);
}

/* The sweep's work per tick is bounded: at most WR_STORE_IDLE_SWEEP_MAX
 * removals per tick, the rest on the next ones (on Redis only the first
 * admit call of a tick sweeps: every instance calls admit each tick). */
static void t_idle_sweep_bounded(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = mkcfg(5, 100, 0, 0, 300);
    c.paused = true;
    c.idle_timeout_seconds = 1;
    put_ok(s, "many", c);
    int n = WR_STORE_IDLE_SWEEP_MAX + 500;
    join_n(s, "many", 1, n);
    pass_us(s, 1450000);
    assert_int_equal(sh_admit(s, "many", &r), WR_OK);
    uint64_t first = r.admit.stats.abandoned_total;
    assert_true(first >= 1 && first <= WR_STORE_IDLE_SWEEP_MAX);
    assert_int_equal(r.admit.stats.waiting, (uint64_t)n - first);
    for (int i = 0; i < 10 && r.admit.stats.waiting > 0; i++) {
        pass_us(s, 100000); /* the next tick */
        assert_int_equal(sh_admit(s, "many", &r), WR_OK);
    }
    assert_int_equal(r.admit.stats.waiting, 0);
    assert_int_equal(r.admit.stats.abandoned_total, (uint64_t)n);
    assert_int_equal(r.admit.stats.left_total, 0);
}

/* Redis: only the first admit call of a tick sweeps (every instance calls
 * admit each tick; the sweep's pace counts one sweep per tick). Ticks of
 * 1 s, and the two calls are checked to fall in one tick by their store
 * times (a pair that straddles a tick boundary is tried again). */
static void r_idle_sweep_once_per_tick(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = mkcfg(5, 1000, 0, 0, 300);
    c.paused = true;
    c.idle_timeout_seconds = 1;
    put_ok(s, "once", c);
    int n = 3 * WR_STORE_IDLE_SWEEP_MAX;
    join_n(s, "once", 1, n);
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
    wr_queue_config_t c = mkcfg(5, 100, 0, 0, 300);
    c.paused = true;
    c.idle_timeout_seconds = 0;
    put_ok(s, "quiet", c);
    join_n(s, "quiet", 1, 2);
    assert_int_equal(sh_join_page(s, "quiet", "p1", &r), WR_OK);
    /* memory: 3 days of store time; Redis: a real 1.2 s */
    pass_us(s, s->ops->debug_advance_time ? 3 * 86400 * 1000000LL : 1200000);
    assert_int_equal(sh_admit(s, "quiet", &r), WR_OK);
    assert_int_equal(r.admit.stats.waiting, 3);
    assert_int_equal(r.admit.stats.abandoned_total, 0);
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
    assert_int_equal(sh_status(s, "page", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    /* p2 asks again (the page's poll): admitted on the next tick, in its
     * place; p1 and p3 stay, skipped */
    expect_waiting(s, "page", "p2", 2, 3);
    admit_next_tick(s, "page", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(a.admit.stats.waiting, 2);
    assert_int_equal(sh_status(s, "page", "p2", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    /* p1 refreshes the page: a join_page of someone in line un-skips them */
    assert_int_equal(sh_join_page(s, "page", "p1", &r), WR_OK);
    assert_int_equal(r.entry.position, 1);
    admit_next_tick(s, "page", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(sh_status(s, "page", "p1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    /* p3 never came back: still in line, never admitted */
    admit_next_tick(s, "page", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 0);
    assert_int_equal(a.admit.stats.waiting, 1);
    assert_int_equal(a.admit.stats.active, 3);
    assert_int_equal(a.admit.stats.abandoned_total, 0);
    /* a pending user who leaves is a leave */
    assert_int_equal(sh_leave(s, "page", "p3"), WR_OK);
    assert_int_equal(sh_get(s, "page", &r), WR_OK);
    assert_int_equal(r.stats.waiting, 0);
    assert_int_equal(r.stats.left_total, 1);
}

/* People who stop asking, in one iteration: page joins, quiet and plain
 * statuses and joins of idle and active users, each with the answer it
 * gets when the calls run one after the other. */
static void t_iteration_idle(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = mkcfg(5, 100, 0, 0, 300);
    c.paused = true;
    c.idle_timeout_seconds = 1;
    put_ok(s, "bidle", c);
    join_n(s, "bidle", 1, 3);
    assert_int_equal(sh_join_page(s, "bidle", "p1", &r), WR_OK);
    assert_int_equal(sh_join_page(s, "bidle", "p2", &r), WR_OK);
    pass_us(s, 550000);
    const step_t seen[] = {
        {'s', "bidle", "u2", WR_OK, WR_OK, 2, 5},
        {'p', "bidle", "p2", WR_OK, WR_OK, 5, 5}, /* in line: seen, no longer pending */
    };
    run_steps(s, seen, sizeof seen / sizeof seen[0]);
    /* 1.45 s: u1, u3 and p1 are idle (Redis: 1 s + its 250 ms slack); u2
     * and p2, seen at 0.55 s, are not */
    pass_us(s, 900000);
    const step_t steps[] = {
        {'q', "bidle", "u2", WR_OK, WR_OK, 2, 5},
        {'s', "bidle", "u1", WR_OK, WR_ENOTINQUEUE, 0, 0}, /* idle: removed */
        {'s', "bidle", "u2", WR_OK, WR_OK, 1, 4},
        {'j', "bidle", "u3", WR_OK, WR_OK, 4, 4}, /* idle: removed, then a newcomer */
        {'s', "bidle", "p1", WR_OK, WR_ENOTINQUEUE, 0, 0},
        {'p', "bidle", "p3", WR_OK, WR_OK, 4, 4},
        {'q', "bidle", "p2", WR_OK, WR_OK, 2, 4},
        {'j', "bidle", "u2", WR_OK, WR_OK, 1, 4},
    };
    run_steps(s, steps, sizeof steps / sizeof steps[0]);
    assert_int_equal(sh_get(s, "bidle", &r), WR_OK);
    assert_int_equal(r.stats.waiting, 4);
    assert_int_equal(r.stats.abandoned_total, 3);
    assert_int_equal(r.stats.left_total, 0);
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
    for (int i = 1; i <= 5; i++) {
        char u[16];
        snprintf(u, sizeof u, "scan%d", i);
        assert_int_equal(sh_join_page(s, "k20", u, &r), WR_OK);
    }
    assert_int_equal(sh_admit(s, "k20", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 0);
    assert_int_equal(sh_join(s, "k20", "person", &r), WR_OK);
    assert_int_equal(r.entry.position, 6);
    expect_waiting(s, "k20", "person", 6, 6);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US);
    admit_next_tick(s, "k20", 100000, a.admit.now_us / 100000, &a);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(a.admit.stats.active, 1);
    assert_int_equal(a.admit.stats.waiting, 5);
    assert_int_equal(sh_status(s, "k20", "person", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
}

/* ------------------------------------------------------------ main */

static int group_setup(void **state)
{
    (void)state;
    return 0;
}

/* ------------------------------------------------------------ sale opening */

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
    c.opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, "op", c);
    for (int i = 0; i < 50; i++) {
        snprintf(u, sizeof u, "p%d", i);
        assert_int_equal(sh_join(s, "op", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
        assert_int_equal(r.cfg.opens_at_ms, c.opens_at_ms);
        assert_int_equal(sh_join(s, "op", u, &r), WR_OK); /* again: still there */
        assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    }
    assert_int_equal(sh_status(s, "op", "p7", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    assert_int_equal(sh_status(s, "op", "nobody", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_get(s, "op", &r), WR_OK);
    assert_int_equal(r.stats.prequeue, 50);
    assert_int_equal(r.stats.waiting, 0);
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
    assert_int_equal(sh_get(s, "op", &r), WR_OK);
    assert_int_equal(r.stats.prequeue, 49);
    assert_int_equal(r.stats.left_total, 1);

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
    assert_int_equal(sh_get(s, "op", &r), WR_OK);
    assert_int_equal(r.stats.prequeue, 0);
    assert_int_equal(r.stats.waiting, 50);
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
    c.opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, "ar", c);
    for (int i = 0; i < 20; i++) {
        snprintf(u, sizeof u, "a%d", i);
        assert_int_equal(sh_join(s, "ar", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    }
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
    c.opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, "ch", c);
    for (int i = 0; i < N; i++) {
        snprintf(u, sizeof u, "c%d", i);
        assert_int_equal(sh_join(s, "ch", u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    }
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
    assert_int_equal(r.admit.stats.admitted_total, 1);
    assert_int_equal(r.admit.stats.expired_total, 1);
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

/* Calls of command name (e.g. "hset") in Redis's INFO commandstats. */
static long long cmdstat(const char *name)
{
    redisReply *rep = sh_redis_cmd("INFO commandstats");
    assert_non_null(rep);
    char key[64];
    snprintf(key, sizeof key, "cmdstat_%s:calls=", name);
    const char *p = rep->type == REDIS_REPLY_STRING || rep->type == REDIS_REPLY_STATUS
                        ? strstr(rep->str, key)
                        : NULL;
    long long n = p ? atoll(p + strlen(key)) : 0;
    freeReplyObject(rep);
    return n;
}

/* All commands of INFO commandstats (the INFO itself counts one). */
static long long cmdstat_all(void)
{
    redisReply *rep = sh_redis_cmd("INFO commandstats");
    assert_non_null(rep);
    long long n = 0;
    for (const char *p = rep->str; (p = strstr(p, ":calls=")) != NULL; p += 7)
        n += atoll(p + 7);
    freeReplyObject(rep);
    return n;
}

/* K29 on Redis: a quiet queue's admit costs the script and 5 commands
 * (admit.lua's quiet path), not the full tick's ~17, and still records
 * the tick (state lastTick: a quiet queue is no outage for the idle rule). */
static void r_k29_quiet_admit_cost(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "qc", mkcfg(50, 100, 0, 0, 300));
    assert_int_equal(sh_admit(s, "qc", &r), WR_OK);
    assert_true(wr_store_admit_quiet(&r.admit));
    sh_run_for(110);
    long long evals = cmdstat("evalsha") + cmdstat("eval");
    long long before = cmdstat_all();
    assert_int_equal(sh_admit(s, "qc", &r), WR_OK);
    long long used = cmdstat_all() - before - 1; /* the first INFO */
    assert_true(wr_store_admit_quiet(&r.admit));
    assert_int_equal(cmdstat("evalsha") + cmdstat("eval") - evals, 1);
    if (used > 6)
        fail_msg("a quiet admit used %lld commands", used);
    redisReply *rep = sh_redis_cmd("HGET wr:{qc}:state lastTick");
    assert_non_null(rep);
    assert_int_equal(rep->type, REDIS_REPLY_STRING);
    assert_int_equal(atoll(rep->str), r.admit.now_us / 100000);
    freeReplyObject(rep);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "redis") != 0 && strcmp(argv[1], "memory") != 0)) {
        fprintf(stderr, "usage: %s redis|memory\n", argv[0]);
        return 2;
    }
    g_redis = strcmp(argv[1], "redis") == 0;
    signal(SIGPIPE, SIG_IGN);
    if (!sh_loop_new())
        return 1;
    if (g_redis && sh_redis_setup() != 0)
        return 1;
    const struct CMUnitTest common[] = {
        T(t_ping_and_unknown_queue),
        T(t_join_positions),
        T(t_admit_counts_and_order),
        T(t_admit_fractional_rate),
        T(t_admit_delay),
        T(t_admit_no_catchup_after_gap),
        T(t_tick_change_keeps_admitting),
        T(t_paused_admits_nobody),
        T(t_max_queue_size),
        T(t_max_active_and_leave_admitted),
        T(t_consume_single_use),
        T(t_consume_race),
        T(t_token_expiry),
        T(t_disabled_passthrough),
        T(t_config_roundtrip_and_version),
        T(t_queue_delete),
        T(t_queue_list_sorted),
        T(t_secret_first_writer_wins),
        T(t_close_cancels_pending),
        T(t_close_inside_callback),
        T(t_iteration_mixed),
        T(t_iteration_ordered),
        T(t_iteration_many),
        T(t_iteration_close),
        T(t_iteration_idle),
        T(t_session_release),
        T(t_session_release_race),
        T(t_session_lapse),
        T(t_session_leave),
        T(t_session_max_active_model),
        /* degraded mode */
        T(t_burn_once),
        T(t_burn_expiry_swept),
        T(t_burn_queues_and_delete),
        T(t_burn_args),
        /* people who stop asking */
        T(t_idle_removed),
        T(t_idle_zero_never),
        T(t_idle_sweep_bounded),
        T(t_page_join_pending),
        T(t_k20_link_scanners),
        T(t_status_quiet),
        /* sale opening */
        T(t_open_prequeue),
        T(t_open_arrival_order),
        T(t_open_chunked),
        /* K29: quiet queues */
        T(t_k29_quiet_rule),
    };
    const struct CMUnitTest redis_only[] = {
        T(r_k01_score_precision),  T(r_k02_noscript),
        T(r_k03_one_slot),         T(r_corrupt_state),
        T(r_url_and_db),           T(r_bad_replies),
        T(r_command_timeout),      T(r_hung_many),
        T(r_iteration_errors),     T(r_idle_sweep_once_per_tick),
        T(r_iteration_durability), T(r_iteration_bad_replies),
        T(r_close_in_timeout),     T(r_k29_quiet_admit_cost),
        T(r_kill_and_restart), /* last: restarts Redis */
    };
    int failed = cmocka_run_group_tests_name(argv[1], common, group_setup, NULL);
    if (g_redis)
        failed += cmocka_run_group_tests_name("redis-only", redis_only, group_setup, NULL);
    if (g_redis)
        sh_redis_teardown();
    sh_loop_free();
    return failed ? 1 : 0;
}
