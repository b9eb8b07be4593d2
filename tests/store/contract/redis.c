/*
 * redis.c - the store contract, Redis only: K01 score precision, K02 NOSCRIPT, K03 hash slots,
 * command timeouts, hung and killed servers, corrupt state, bad replies, URLs and databases. Run by
 * runner.c against every backend of the store registry (tests listed in WR_CONTRACT_GROUP at the
 * end; *_redis_only groups run against Redis alone).
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

/* ------------------------------------------------------------ Redis only */

/* One command (fmt and its arguments) on the private server: answered,
 * not with an error. */
static void redis_do(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *x = sh_redis_vcmd(sh_redis_ctx(), fmt, ap);
    va_end(ap);
    assert_non_null(x);
    assert_int_not_equal(x->type, REDIS_REPLY_ERROR);
    freeReplyObject(x);
}

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
    put_ok(s, "k01", plain_cfg());
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

/* K02: after SCRIPT FLUSH everything works, with one EVAL per request. */
static void r_k02_noscript(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "k02", plain_cfg());
    join_and_admit(s, "k02", 1, 1, NULL);
    redis_do("SCRIPT FLUSH");
    redis_do("CONFIG RESETSTAT");
    assert_int_equal(sh_join(s, "k02", "u2", &r), WR_OK); /* entry.lua reloaded */
    assert_int_equal(r.entry.position, 1);
    char jti[WR_JTI_LEN + 1];
    pass_of(s, "k02", "u1", jti);                                 /* same script: EVALSHA */
    assert_int_equal(sh_consume(s, "k02", "u1", jti, &r), WR_OK); /* token.lua reloaded */
    assert_int_equal(sh_consume(s, "k02", "u1", jti, &r), WR_ETOKEN);
    /* 4 operations = 4 EVALSHA (two answered NOSCRIPT) + exactly 2 EVAL */
    assert_int_equal(cmdstat("eval"), 2);
    assert_int_equal(cmdstat("evalsha"), 4);
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
    wr_queue_config_t c = plain_cfg();
    c.session_seconds = 60;
    put_ok(s, "k03", c);
    join_n(s, "k03", 1, 7);
    assert_int_equal(sh_join_page(s, "k03", "u8", &r), WR_OK);  /* pending */
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US); /* all due (queue.h) */
    assert_int_equal(sh_admit(s, "k03", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 5); /* 3 stay in line: every key exists */
    char jti[WR_JTI_LEN + 1];
    pass_of(s, "k03", "u1", jti);
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
    put_ok(s, "slow", plain_cfg());
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
    put_ok(s, "hung", plain_cfg());
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
    put_ok(s, "cit", plain_cfg());
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
    put_ok(s, "kill", plain_cfg());
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
    put_ok(s, "kill", plain_cfg());
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
    put_ok(s, "bad", plain_cfg());
    put_ok(s, "good", plain_cfg());
    redis_do("SADD wr:queues ghost"); /* a name without config */
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.names[0], "bad");
    assert_string_equal(r.names[1], "good");
    /* a token entry that does not parse is no token */
    redis_do("HSET wr:{bad}:tokens u1 garbage");
    assert_int_equal(sh_status(s, "bad", "u1", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_consume(s, "bad", "u1", "garbage", &r), WR_ETOKEN);
    /* a config JSON that does not parse (new version) */
    redis_do("HSET wr:{bad}:config json {nope version 12345");
    assert_int_equal(sh_join(s, "bad", "u2", &r), WR_EPROTO);
    assert_int_equal(sh_get(s, "bad", &r), WR_EPROTO);
    assert_int_equal(sh_admit(s, "bad", &r), WR_EPROTO);
    assert_int_equal(sh_join(s, "good", "u2", &r), WR_OK);
    /* a key of the wrong type makes the script fail: an error, no crash;
     * WR_EDATA (Redis's WRONGTYPE), which the breaker ignores */
    redis_do("SET wr:{good}:waiting notazset");
    assert_int_equal(sh_join(s, "good", "u3", &r), WR_EDATA);
    assert_int_equal(sh_ping(s), WR_OK);
}

/* Calls of EVALSHA and EVAL Redis has run so far (INFO commandstats). */
static long long script_calls(void)
{
    return cmdstat("evalsha") + cmdstat("eval");
}

/* The joins and statuses of one queue in one iteration are one script
 * call; a request that raises an error inside it (damaged state) answers
 * WR_EPROTO alone (WR_EDATA for a key of the wrong type), the others their
 * own answers. */
static void r_iteration_errors(void **state)
{
    wr_store_t *s = *state;
    put_ok(s, "be", plain_cfg());
    join_n(s, "be", 1, 2);
    long long before = script_calls();
    const step_t one_call[] = {
        STEP_WAITS('s', "be", "u1", 1, 2),           STEP_WAITS('j', "be", "u3", 3, 3),
        STEP_FAILS('s', "be", "u9", WR_ENOTINQUEUE), STEP_WAITS('s', "be", "u2", 2, 3),
        STEP_WAITS('j', "be", "u2", 2, 3),
    };
    run_steps(s, one_call, sizeof one_call / sizeof one_call[0]);
    assert_int_equal(script_calls() - before, 1);

    /* a join of a newcomer now fails inside the script (lastScore is not a
     * number); polls of people in line do not touch it */
    redis_do("HSET wr:{be}:state lastScore garbage");
    const step_t middle[] = {
        STEP_WAITS('s', "be", "u1", 1, 3),           STEP_FAILS('j', "be", "u4", WR_EPROTO),
        STEP_WAITS('s', "be", "u3", 3, 3),           STEP_FAILS('j', "be", "u5", WR_EPROTO),
        STEP_FAILS('s', "be", "u4", WR_ENOTINQUEUE), STEP_WAITS('j', "be", "u1", 1, 3),
    };
    run_steps(s, middle, sizeof middle / sizeof middle[0]);
    /* the same request alone (entry.lua) fails the same way */
    sh_res_t r;
    assert_int_equal(sh_join(s, "be", "u4", &r), WR_EPROTO);
    assert_int_equal(sh_status(s, "be", "u2", &r), WR_OK);
    assert_int_equal(r.entry.position, 2);

    /* a key of the wrong type under every request: each gets the error,
     * WR_EDATA (Redis's WRONGTYPE) */
    redis_do("SET wr:{be}:waiting notazset");
    const step_t all_fail[] = {
        STEP_FAILS('s', "be", "u1", WR_EDATA),
        STEP_FAILS('j', "be", "u6", WR_EDATA),
        STEP_FAILS('s', "be", "u2", WR_EDATA),
    };
    run_steps(s, all_fail, sizeof all_fail / sizeof all_fail[0]);
    /* the config itself unreadable: the whole call fails, each once */
    redis_do("DEL wr:{be}:config");
    redis_do("SET wr:{be}:config x");
    run_steps(s, all_fail, sizeof all_fail / sizeof all_fail[0]);
    assert_int_equal(sh_ping(s), WR_OK);
}

/* Durability mode: joins are WAITed for (strict), statuses never; a
 * status made in the same iteration as joins is answered as without
 * them. Here no replica exists, so every WAIT falls short: each join
 * answers WR_EREPLICA (K26: it stands on the primary, which answered; not
 * WR_EUNAVAILABLE, the store is reachable), each status its place. */
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
    put_ok(s, "bd", plain_cfg());
    sh_res_t r;
    assert_int_equal(sh_join(s, "bd", "u1", &r), WR_EREPLICA); /* applied on the primary */
    const step_t steps[] = {
        STEP_WAITS('s', "bd", "u1", 1, 1),        STEP_FAILS('j', "bd", "u2", WR_EREPLICA),
        STEP_WAITS('s', "bd", "u1", 1, 2),        STEP_WAITS('s', "bd", "u2", 2, 2),
        STEP_FAILS('j', "bd", "u3", WR_EREPLICA), STEP_FAILS('j', "bd", "u1", WR_EREPLICA),
        STEP_WAITS('s', "bd", "u3", 3, 3),
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

/* A batch reply (at most cap bytes into out) of three WAITING answers (1
 * of 3), the i-th followed by a B_RECEIPT of index i whose U, HASH and
 * LEAF are rc[i] (RESP bulk strings); out. */
static const char *receipts3(char *out, size_t cap, const char *const rc[3])
{
    size_t n = (size_t)snprintf(out, cap, "*39\r\n:9\r\n$0\r\n\r\n:-1\r\n");
    for (int i = 0; i < 3 && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n,
                              ":1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n:7\r\n:%d\r\n%s", i,
                              rc[i]);
    assert_true(n < cap);
    return out;
}

/* Batch replies Redis would never send, an error answer in the middle,
 * and the connection lost with a batch in flight. */
static void r_iteration_bad_replies(void **state)
{
    (void)state;
    fake_redis_t *f;
    wr_store_t *s = open_fake(&f);
    wr_queue_config_t c = plain_cfg();
    json_t *j = wr_qconfig_to_json(&c);
    char *json = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    assert_non_null(json);
    char ok3[2048];
    /* {version, json, WAITING 1 of 3, an error, NOT IN QUEUE} */
    snprintf(ok3, sizeof ok3,
             "*12\r\n:9\r\n$%zu\r\n%s\r\n:-1\r\n:1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n-ERR "
             "boom\r\n:-3\r\n",
             strlen(json), json);
    const step_t three_mid[] = {
        STEP_WAITS('s', "q", "u1", 1, 3),
        STEP_FAILS('j', "q", "u2", WR_EPROTO),
        STEP_FAILS('s', "q", "u3", WR_ENOTINQUEUE),
    };
    fake_steps(f, s, ok3, three_mid, 3);
    /* the version this client now knows, JSON omitted: WAITING 2 of 3,
     * ADMITTED, FULL at 7 */
    const char known3[] =
        "*17\r\n:9\r\n$0\r\n\r\n:-1\r\n:1\r\n:2\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n"
        ":2\r\n$22\r\nAAAAAAAAAAAAAAAAAAAAAA\r\n:1\r\n:2\r\n:-2\r\n:7\r\n:0\r\n";
    const step_t three_known[] = {
        STEP_WAITS('s', "q", "u1", 2, 3),
        STEP_ADMITTED('s', "q", "u2"),
        STEP_FULL('j', "q", "u3", 7),
    };
    fake_steps(f, s, known3, three_known, 3);
    /* PASSTHROUGH, then not in queue twice */
    const char pass3[] = "*6\r\n:9\r\n$0\r\n\r\n:-1\r\n:3\r\n:-3\r\n:-3\r\n";
    const step_t three_pass[] = {
        STEP_PASSES('j', "q", "u1"),
        STEP_FAILS('s', "q", "u2", WR_ENOTINQUEUE),
        STEP_FAILS('s', "q", "u3", WR_ENOTINQUEUE),
    };
    fake_steps(f, s, pass3, three_pass, 3);
    /* shapes that are not a batch answer of three: each request WR_EPROTO */
    const char *bad[] = {
        "+OK\r\n",
        "-ERR boom\r\n",
        "*0\r\n",
        ":1\r\n",
        /* two answers for three requests */
        "*17\r\n:9\r\n$0\r\n\r\n:-1\r\n:1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n:1\r\n:2\r\n:"
        "3\r\n"
        ":-1\r\n:-1\r\n:-1\r\n:0\r\n",
        /* four answers for three requests */
        "*7\r\n:9\r\n$0\r\n\r\n:-1\r\n:-3\r\n:-3\r\n:-3\r\n:-3\r\n",
        /* the last answer cut short (one literal: clang's -Wstring-concatenation) */
        ("*19\r\n:9\r\n$0\r\n\r\n:-1\r\n:1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n:1\r\n:2\r\n"
         ":3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n:1\r\n:3\r\n"),
        /* an unknown kind, a kind 0, a jti where a number goes */
        "*6\r\n:9\r\n$0\r\n\r\n:-1\r\n:-3\r\n:42\r\n:-3\r\n",
        "*6\r\n:9\r\n$0\r\n\r\n:-1\r\n:-3\r\n:0\r\n:-3\r\n",
        "*8\r\n:9\r\n$0\r\n\r\n:-1\r\n:-3\r\n:1\r\n$1\r\n1\r\n:3\r\n:-3\r\n",
        /* a nested answer (not the flat form) */
        "*6\r\n:9\r\n$0\r\n\r\n:-1\r\n*1\r\n:-3\r\n:-3\r\n:-3\r\n",
        /* the version and JSON of the wrong types */
        "*5\r\n$1\r\n9\r\n$0\r\n\r\n:-3\r\n:-3\r\n:-3\r\n",
        "*5\r\n:9\r\n:0\r\n:-3\r\n:-3\r\n:-3\r\n",
        /* entry.lua's reply (for one request) */
        "*8\r\n:1\r\n:9\r\n$0\r\n\r\n:1\r\n:3\r\n$0\r\n\r\n:0\r\n:0\r\n",
    };
    const step_t three_bad[] = {
        STEP_FAILS('s', "q", "u1", WR_EPROTO),
        STEP_FAILS('j', "q", "u2", WR_EPROTO),
        STEP_FAILS('s', "q", "u3", WR_EPROTO),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        fake_steps(f, s, bad[i], three_bad, 3);
    /* decodable answers with bad values: that answer WR_EPROTO alone */
    const char vals[] =
        "*21\r\n:9\r\n$0\r\n\r\n:-1\r\n:1\r\n:0\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n"
        ":1\r\n:4\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n:2\r\n$0\r\n\r\n:1\r\n:2\r\n";
    const step_t three_vals[] = {
        STEP_FAILS('s', "q", "u1", WR_EPROTO), /* position 0 */
        STEP_FAILS('s', "q", "u2", WR_EPROTO), /* position above the line */
        STEP_FAILS('s', "q", "u3", WR_EPROTO), /* empty jti */
    };
    fake_steps(f, s, vals, three_vals, 3);
    /* people ahead counted: more than are ahead, or beyond the scan */
    const char passed[] =
        "*24\r\n:9\r\n$0\r\n\r\n:-1\r\n:1\r\n:3\r\n:5\r\n:-1\r\n:-1\r\n:3\r\n:0\r\n"
        ":1\r\n:300\r\n:400\r\n:-1\r\n:-1\r\n:0\r\n:0\r\n"
        ":1\r\n:3\r\n:5\r\n:-1\r\n:-1\r\n:2\r\n:0\r\n";
    const step_t three_passed[] = {
        STEP_FAILS('s', "q", "u1", WR_EPROTO), /* 3 passed over of 2 ahead */
        STEP_FAILS('s', "q", "u2", WR_EPROTO), /* 299 ahead: never counted */
        STEP_WAITS('s', "q", "u3", 3, 5),      /* 2 of 2: fine */
    };
    fake_steps(f, s, passed, three_passed, 3);
    /* receipts (B_RECEIPT after a WAITING answer, lib_log.lua
     * log_receipt): a hash of 31 bytes, a hash and a leaf, a log id that is
     * not 32 lowercase hex, a leaf of another log id: WR_EPROTO; the
     * stored hash alone, and a leaf of that log id alone, are receipts */
#define U_OK "$32\r\n0123456789abcdef0123456789abcdef\r\n"
#define HASH "$32\r\nHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH\r\n"
#define LEAF                                                                                       \
    "$64\r\n{\"e\":\"join\",\"at\":1,\"u\":\"0123456789abcdef0123456789abcdef\",\"t\":1}\r\n"
#define EMPTY "$0\r\n\r\n"
    char rc3[2048];
    const char *const bad_rc[] = {U_OK "$31\r\nHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH\r\n" EMPTY,
                                  U_OK HASH LEAF,
                                  "$32\r\n0123456789ABCDEF0123456789abcdef\r\n" HASH EMPTY};
    const step_t three_rc[] = {
        STEP_FAILS('s', "q", "u1", WR_EPROTO),
        STEP_FAILS('s', "q", "u2", WR_EPROTO),
        STEP_FAILS('s', "q", "u3", WR_EPROTO),
    };
    fake_steps(f, s, receipts3(rc3, sizeof rc3, bad_rc), three_rc, 3);
    const char *const ok_rc[] = {"$32\r\nffffffffffffffffffffffffffffffff\r\n" EMPTY LEAF,
                                 U_OK HASH EMPTY, U_OK EMPTY LEAF};
    const step_t three_rc_ok[] = {
        STEP_FAILS('s', "q", "u1", WR_EPROTO), /* the leaf is another's */
        STEP_WAITS('s', "q", "u2", 1, 3),
        STEP_WAITS('s', "q", "u3", 1, 3),
    };
    fake_steps(f, s, receipts3(rc3, sizeof rc3, ok_rc), three_rc_ok, 3);
#undef U_OK
#undef HASH
#undef LEAF
#undef EMPTY
    /* a version this client never saw, JSON omitted: the config part does
     * not resolve, for the waiting answer; "no queue" needs none */
    const char unknown[] =
        "*11\r\n:10\r\n$0\r\n\r\n:-1\r\n:1\r\n:1\r\n:3\r\n:-1\r\n:-1\r\n:-1\r\n:0\r\n:-1\r\n";
    const step_t two_unknown[] = {
        STEP_FAILS('s', "q", "u1", WR_EPROTO),
        STEP_FAILS('j', "q", "u2", WR_ENOTFOUND),
    };
    fake_steps(f, s, unknown, two_unknown, 2);

    /* the connection lost with a batch in flight (its reply cut off):
     * every request WR_EUNAVAILABLE, once; then the store reconnects */
    const char cut[] = "*10\r\n:9\r\n$0\r\n\r\n:-1\r\n:1\r\n";
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
    put_ok(s, "db3", plain_cfg());
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
    OP_PUSH,
    OP_LIST,
    OP_N
};
static const char *const op_names[OP_N] = {"join",  "status", "admit", "consume", "verify", "get",
                                           "leave", "delete", "put",   "secret",  "push",   "list"};

static wr_err_t run_op(wr_store_t *s, int op)
{
    sh_res_t r;
    wr_queue_config_t c = plain_cfg();
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
    case OP_PUSH:
        sh_begin(&r);
        return sh_settle(&r, wr_store_push_sub(s, "q", "u1", NULL, sh_done_cb, &r));
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

/* ------------------------------------------------- K29: a quiet admit's cost */

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
    long long evals = script_calls();
    long long before = cmdstat_all();
    assert_int_equal(sh_admit(s, "qc", &r), WR_OK);
    long long used = cmdstat_all() - before - 1; /* the first INFO */
    assert_true(wr_store_admit_quiet(&r.admit));
    assert_int_equal(script_calls() - evals, 1);
    if (used > 6)
        fail_msg("a quiet admit used %lld commands", used);
    redisReply *rep = sh_redis_cmd("HGET wr:{qc}:state lastTick");
    assert_non_null(rep);
    assert_int_equal(rep->type, REDIS_REPLY_STRING);
    assert_int_equal(atoll(rep->str), r.admit.now_us / 100000);
    freeReplyObject(rep);
}

WR_CONTRACT_GROUP(redis_redis_only, T(r_k01_score_precision), T(r_k02_noscript), T(r_k03_one_slot),
                  T(r_corrupt_state), T(r_url_and_db), T(r_bad_replies), T(r_command_timeout),
                  T(r_hung_many), T(r_iteration_errors), T(r_iteration_durability),
                  T(r_iteration_bad_replies), T(r_close_in_timeout), T(r_k29_quiet_admit_cost),
                  T(r_kill_and_restart) /* last: restarts Redis */);
