/*
 * common.c - what every topic of the store contract suite shares: the
 * queue config helper, joining and admitting helpers, checks of one
 * person's answer (waiting, held, admitted and their pass), many calls on
 * one pass in flight at once (race_one), the store's clock, and the
 * per-test setup (a fresh store of the backend under test, opened like
 * waitroomd opens it) and teardown.
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

wr_queue_config_t mkcfg(double rate, uint32_t tick_ms, uint64_t max_active, uint64_t max_queue,
                        uint32_t ttl_s)
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
wr_queue_config_t plain_cfg(void)
{
    return mkcfg(5, 1000, 0, 0, 300);
}

void put_ok(wr_store_t *s, const char *q, wr_queue_config_t c)
{
    assert_int_equal(sh_put(s, q, &c), WR_OK);
}

void put_idle_line(wr_store_t *s, const char *q, uint32_t idle_s, int users, int pages)
{
    wr_queue_config_t c = mkcfg(5, 100, 0, 0, 300);
    c.paused = true;
    c.idle_timeout_seconds = idle_s;
    put_ok(s, q, c);
    join_n(s, q, 1, users);
    if (pages > 0)
        assert_int_equal(join_page_n(s, q, 1, pages), users + pages);
}

void join_n(wr_store_t *s, const char *q, int from, int to)
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
void admit_next_tick(wr_store_t *s, const char *q, int64_t tick_us, int64_t prev_tick, sh_res_t *r)
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

uint64_t admit_until(wr_store_t *s, const char *q, int64_t tick_us, uint64_t want, int max_ticks,
                     int64_t *prev_tick, sh_res_t *r)
{
    uint64_t n = 0;
    for (int k = 0; k < max_ticks && n < want; k++) {
        admit_next_tick(s, q, tick_us, *prev_tick, r);
        *prev_tick = r->admit.now_us / tick_us;
        n += r->admit.admitted;
    }
    return n;
}

/* Moves the store's clock past t_us: debug hook where there is one, else a
 * real wait (Redis TIME is this host's clock). */
void pass_store_time(wr_store_t *s, int64_t t_us)
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
void join_due(wr_store_t *s, const char *q, int from, int to)
{
    join_n(s, q, from, to);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US);
}

/* ------------------------------------------------------------ backends */

/* The backend under test, opened like waitroomd opens it: through the
 * store registry, by URL ("memory", or unix:// of the private server). */
wr_store_t *open_store_with(uint32_t cmd_timeout_ms)
{
    wr_store_t *s = NULL;
    if (g_redis)
        return sh_open_redis(cmd_timeout_ms);
    if (g_cluster)
        return sc_open(cmd_timeout_ms);
    if (wr_store_open_url(sh_base(), "memory", NULL, &s) != WR_OK)
        return NULL;
    return s;
}

int setup(void **state)
{
    if (g_redis) {
        redisReply *r = sh_redis_cmd("FLUSHALL");
        if (!r)
            return -1;
        freeReplyObject(r);
    }
    if (g_cluster && sc_flushall() != 0)
        return -1;
    wr_store_t *s = open_store_with(g_redis || g_cluster ? 2000 : 0);
    if (!s)
        return -1;
    *state = s;
    return 0;
}

int teardown(void **state)
{
    wr_store_close(*state);
    *state = NULL;
    return 0;
}

/* ------------------------------------------------- people who stop asking */

/* Lets us of store time pass: the debug hook where there is one, else a
 * real wait (Redis TIME is this host's clock). */
void pass_us(wr_store_t *s, int64_t us)
{
    if (s->ops->debug_advance_time) {
        assert_int_equal(s->ops->debug_advance_time(s, us), WR_OK);
        return;
    }
    sh_run_for((int)(us / 1000) + 1);
}

void expect_waiting(wr_store_t *s, const char *q, const char *u, uint64_t pos, uint64_t waiting)
{
    sh_res_t r;
    assert_int_equal(sh_status(s, q, u, &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, pos);
    assert_int_equal(r.entry.waiting, waiting);
}

void expect_entry(wr_err_t err, const sh_res_t *r, wr_entry_state_t state, bool added)
{
    assert_int_equal(err, WR_OK);
    assert_int_equal(r->entry.state, state);
    assert_int_equal(r->entry.added, added);
}

void expect_held(wr_store_t *s, const char *q, const char *u, uint64_t waiting)
{
    sh_res_t r;
    assert_int_equal(sh_status(s, q, u, &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_true(r.entry.held);
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(r.entry.waiting, waiting);
}

void pass_of(wr_store_t *s, const char *q, const char *u, char jti[WR_JTI_LEN + 1])
{
    sh_res_t r;
    assert_int_equal(sh_status(s, q, u, &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    if (jti)
        memcpy(jti, r.entry.jti, WR_JTI_LEN + 1);
}

void expect_admitted(wr_store_t *s, const char *q, const char *u)
{
    pass_of(s, q, u, NULL);
}

void join_and_admit(wr_store_t *s, const char *q, int n, uint64_t admitted, sh_res_t *a)
{
    sh_res_t mine;
    if (!a)
        a = &mine;
    join_due(s, q, 1, n);
    assert_int_equal(sh_admit(s, q, a), WR_OK);
    assert_int_equal(a->admit.admitted, admitted);
}

void put_and_admit(wr_store_t *s, const char *q, wr_queue_config_t c, int n,
                   char jti[WR_JTI_LEN + 1])
{
    put_ok(s, q, c);
    join_and_admit(s, q, n, n, NULL);
    pass_of(s, q, "u1", jti);
}

uint64_t join_page_n(wr_store_t *s, const char *q, int from, int to)
{
    sh_res_t r = {0};
    char u[32];
    for (int i = from; i <= to; i++) {
        snprintf(u, sizeof u, "p%d", i);
        assert_int_equal(sh_join_page(s, q, u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
        assert_int_equal(r.entry.position, r.entry.waiting);
    }
    return r.entry.position;
}

/* ------------------------------------------------- one pass, many calls */

void race_one(wr_store_t *s, pass_call_t call, const char *q, const char *u, const char *jti, int n,
              wr_token_reason_t reason)
{
    static sh_res_t rs[64];
    assert_true(n >= 1 && n <= 64);
    for (int i = 0; i < n; i++) {
        sh_begin(&rs[i]);
        assert_int_equal(call(s, q, u, jti, sh_token_cb, &rs[i]), WR_OK);
        rs[i].returned = true;
    }
    int ok = 0, refused = 0;
    for (int i = 0; i < n; i++) {
        assert_true(sh_run_until(&rs[i].calls, 1, SH_WAIT_MS));
        assert_false(rs[i].sync_call);
        if (rs[i].err == WR_OK)
            ok++;
        else if (rs[i].err == WR_ETOKEN && rs[i].tok.reason == reason)
            refused++;
    }
    assert_int_equal(ok, 1);
    assert_int_equal(refused, n - 1);
}

/* ------------------------------------------------------------ main */

int group_setup(void **state)
{
    (void)state;
    return 0;
}
