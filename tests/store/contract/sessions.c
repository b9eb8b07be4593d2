/*
 * sessions.c - the store contract, sessions: release, the release race, lapse, leave, maxActive
 * against a model. Run by runner.c against every backend of the store registry (tests listed in
 * WR_CONTRACT_GROUP at the end; *_redis_only groups run against Redis alone).
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

/* ------------------------------------------------------------ sessions */

/* A queue with sessions: rate 5/s on 1 s ticks, ttl ttl_s, sessions of
 * sess_s seconds, at most max_active active. */
static wr_queue_config_t sess_cfg(uint64_t max_active, uint32_t ttl_s, uint32_t sess_s)
{
    wr_queue_config_t c = mkcfg(5, 1000, max_active, 0, ttl_s);
    c.session_seconds = sess_s;
    return c;
}

/* Queue q with sessions of 60 s (TTL 300 s), u1 and u2 admitted in one
 * tick: their jtis. */
static void two_sessions_due(wr_store_t *s, const char *q, char j1[WR_JTI_LEN + 1],
                             char j2[WR_JTI_LEN + 1])
{
    put_and_admit(s, q, sess_cfg(0, 300, 60), 2, j1);
    pass_of(s, q, "u2", j2);
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
    sh_res_t r;
    char j1[WR_JTI_LEN + 1], j2[WR_JTI_LEN + 1];
    two_sessions_due(s, "ses", j1, j2);

    /* never consumed: no session, and the token stays live */
    expect_no_session(s, "ses", "u2", j2);
    assert_int_equal(sh_verify(s, "ses", "u2", j2, &r), WR_OK);

    assert_int_equal(sh_consume(s, "ses", "u1", j1, &r), WR_OK);
    sh_expect_queue_stats(s, "ses", SH_ST(active, 2), SH_ST(sessions, 1), SH_ST(consumed_total, 1));
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
    sh_expect_queue_stats(s, "ses", SH_ST(active, 1), SH_ST(sessions, 0), SH_ST(released_total, 1),
                          SH_ST(sessions_expired_total, 0));

    /* u2's token, released before, still consumes */
    assert_int_equal(sh_consume(s, "ses", "u2", j2, &r), WR_OK);
    sh_expect_queue_stats(s, "ses", SH_ST(active, 1), SH_ST(sessions, 1));

    /* sessionSeconds 0: a consume opens nothing */
    put_and_admit(s, "nos", sess_cfg(0, 300, 0), 1, j1);
    assert_int_equal(sh_consume(s, "nos", "u1", j1, &r), WR_OK);
    expect_no_session(s, "nos", "u1", j1);
    assert_int_equal(sh_verify(s, "nos", "u1", j1, &r), WR_ETOKEN);
    sh_expect_queue_stats(s, "nos", SH_ST(active, 0), SH_ST(sessions, 0));

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
    sh_res_t r;
    char j1[WR_JTI_LEN + 1];
    put_and_admit(s, "rr", sess_cfg(0, 300, 60), 1, j1);
    assert_int_equal(sh_consume(s, "rr", "u1", j1, &r), WR_OK);
    race_one(s, wr_store_release, "rr", "u1", j1, 50, WR_TOKEN_NO_SESSION);
    sh_expect_queue_stats(s, "rr", SH_ST(active, 0), SH_ST(released_total, 1));
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
    join_and_admit(s, "lap", 3, 1, &a);
    pass_of(s, "lap", "u1", j1);
    assert_int_equal(sh_status(s, "lap", "u1", &c1), WR_OK);
    assert_int_equal(sh_consume(s, "lap", "u1", j1, &r), WR_OK);
    int64_t consumed_at = wr_clock_wall_us();

    /* the slot stays held: the next ticks admit nobody */
    admit_next_tick(s, "lap", 1000000, a.admit.now_us / 1000000, &a);
    assert_int_equal(a.admit.admitted, 0);
    sh_expect_stats(&a.admit.stats, SH_ST(active, 1), SH_ST(sessions, 1));

    /* past the token's expiry, inside the session: verify still passes */
    pass_store_time(s, c1.entry.expires_at_us);
    assert_int_equal(sh_verify(s, "lap", "u1", j1, &r), WR_OK);
    sh_expect_queue_stats(s, "lap", SH_ST(active, 1), SH_ST(expired_total, 0));

    /* past the session's end */
    pass_store_time(s, consumed_at + 2000000);
    assert_int_equal(sh_verify(s, "lap", "u1", j1, &r), WR_ETOKEN);
    assert_int_equal(r.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(sh_admit(s, "lap", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1); /* the lapse freed the slot in this tick */
    sh_expect_stats(&a.admit.stats, SH_ST(sessions, 0), SH_ST(sessions_expired_total, 1),
                    SH_ST(released_total, 0), SH_ST(active, 1));
    expect_no_session(s, "lap", "u1", j1);

    /* a lapsed session not yet swept: release removes it, counted as lapsed */
    pass_of(s, "lap", "u2", j2);
    assert_int_equal(sh_consume(s, "lap", "u2", j2, &r), WR_OK);
    consumed_at = wr_clock_wall_us();
    pass_store_time(s, consumed_at + 2000000);
    expect_no_session(s, "lap", "u2", j2);
    sh_expect_queue_stats(s, "lap", SH_ST(sessions, 0), SH_ST(active, 0),
                          SH_ST(sessions_expired_total, 2), SH_ST(released_total, 0));
}

/* leave ends the open session (releasedTotal, not leftTotal), also for a
 * user who joined the line again meanwhile. */
static void t_session_leave(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    char j1[WR_JTI_LEN + 1], j2[WR_JTI_LEN + 1];
    two_sessions_due(s, "lv", j1, j2);
    assert_int_equal(sh_consume(s, "lv", "u1", j1, &r), WR_OK);
    assert_int_equal(sh_consume(s, "lv", "u2", j2, &r), WR_OK);

    assert_int_equal(sh_leave(s, "lv", "u1"), WR_OK);
    sh_expect_queue_stats(s, "lv", SH_ST(active, 1), SH_ST(sessions, 1), SH_ST(released_total, 1),
                          SH_ST(left_total, 0));
    assert_int_equal(sh_leave(s, "lv", "u1"), WR_ENOTINQUEUE);
    expect_no_session(s, "lv", "u1", j1);
    assert_int_equal(sh_verify(s, "lv", "u1", j1, &r), WR_ETOKEN);

    /* u2 joins again while the session is open: leave ends both */
    assert_int_equal(sh_join(s, "lv", "u2", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(sh_verify(s, "lv", "u2", j2, &r), WR_OK);
    assert_int_equal(sh_leave(s, "lv", "u2"), WR_OK);
    sh_expect_queue_stats(s, "lv", SH_ST(active, 0), SH_ST(waiting, 0), SH_ST(sessions, 0),
                          SH_ST(released_total, 2), SH_ST(left_total, 1));
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
                pass_of(s, "mm", vn, tok[v]);
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
            sh_expect_queue_stats(s, "mm", SH_ST(active, active), SH_ST(sessions, nsess),
                                  SH_ST(waiting, (uint64_t)nline), SH_ST(released_total, released),
                                  SH_ST(consumed_total, consumed), SH_ST(left_total, left));
            assert_true(active <= max_active);
        }
    }
    assert_true(released > 5);
    assert_true(consumed > 5);
}

WR_CONTRACT_GROUP(sessions, T(t_session_release), T(t_session_release_race), T(t_session_lapse),
                  T(t_session_leave), T(t_session_max_active_model));
