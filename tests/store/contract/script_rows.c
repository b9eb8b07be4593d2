/*
 * script_rows.c - the contract, Redis only: every script's reply has the
 * shape its rows in scripts.def declare (script_rows.h). Each script with
 * rows (entry, entry_batch, entry_group, admit, queue_get, autotune,
 * codes) runs on a real
 * redis-server, as the store sends it (its generated prelude, lib.lua and
 * the script: wr_redis_conn_script_text), with the store's keys and the
 * arguments of its A_ rows, in the states that take each of its return
 * paths (no queue, a quiet queue, people in line, admitted, full, not in
 * line, Web Push claims and a closing push); each reply is checked element by element: its length
 * and each element's type against the rows. A script changed without its rows (or rows without
 * their script) fails here with the element that differs.
 */
#include <hiredis/hiredis.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/clock.h"
#include "base/crypto.h"
#include "contract.h"
#include "store/redis/script_rows.h"
#include "store/redis/store_redis_internal.h"

#define MAXARGS 64

/* Runs script sc on queue q with the store's keys and args (n of them,
 * every one given: a row an initializer left out is NULL and fails here),
 * by EVAL: the reply, an error reply too (caller frees). */
static redisReply *run_any(int sc, const char *q, const char *const *args, size_t n)
{
    size_t len = 0;
    char *text = wr_redis_conn_script_text(&wr_store_redis__scripts[sc], &len);
    assert_non_null(text);
    const char *const *suffix = wr_store_redis__key_suffix;
    char keys[NKEYS][WR_QUEUE_NAME_MAX + 32], nkeys[8];
    const char *argv[MAXARGS];
    size_t argl[MAXARGS], at = 0;
    assert_true(3 + NKEYS + n <= MAXARGS);
    snprintf(nkeys, sizeof nkeys, "%d", NKEYS);
    argv[at++] = "EVAL";
    argv[at++] = text;
    argv[at++] = nkeys;
    for (int i = 0; i < NKEYS; i++) {
        snprintf(keys[i], sizeof keys[i], "wr:{%s}:%s", q, suffix[i]);
        argv[at++] = keys[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (!args[i])
            fail_msg("%s: argument %zu not given", wr_store_redis__scripts[sc].file, i);
        argv[at++] = args[i];
    }
    for (size_t i = 0; i < at; i++)
        argl[i] = i == 1 ? len : strlen(argv[i]);
    redisContext *c = sh_redis_ctx();
    assert_non_null(c);
    redisReply *rep = redisCommandArgv(c, (int)at, argv, argl);
    redisFree(c);
    free(text);
    assert_non_null(rep);
    return rep;
}

/* run_any that fails the test on an error reply. */
static redisReply *run(int sc, const char *q, const char *const *args, size_t n)
{
    redisReply *rep = run_any(sc, q, args, n);
    if (rep->type == REDIS_REPLY_ERROR)
        fail_msg("%s on %s: %s", wr_store_redis__scripts[sc].file, q, rep->str);
    return rep;
}

/* rep has exactly the rows of table t; frees it. */
static void expect_rows(redisReply *rep, wr_script_row_t t)
{
    char why[200];
    if (!wr_script_rows_check(rep, t, why, sizeof why)) {
        freeReplyObject(rep);
        fail_msg("%s", why);
    }
    freeReplyObject(rep);
}

/* The integer element i of rep. */
static long long int_at(const redisReply *rep, size_t i)
{
    assert_true(rep->type == REDIS_REPLY_ARRAY && i < rep->elements);
    assert_int_equal(rep->element[i]->type, REDIS_REPLY_INTEGER);
    return rep->element[i]->integer;
}

/* run(sc, q, args, n), its reply checked against table t: its integer
 * element at. */
static long long run_rows(int sc, const char *q, const char *const *args, size_t n,
                          wr_script_row_t t, size_t at)
{
    redisReply *rep = run(sc, q, args, n);
    long long v = int_at(rep, at);
    expect_rows(rep, t);
    return v;
}

static char mode_s[4][2];

static const char *mode(int m)
{
    mode_s[m][0] = (char)('0' + m);
    mode_s[m][1] = '\0';
    return mode_s[m];
}

/* entry.lua with A_ENTRY: user, version '0', mode, key '0'; checked
 * against R_ENTRY; the kind. */
static long long entry(const char *q, const char *u, int m)
{
    const char *a[WR_ROWS_LEN(A_ENTRY)] = {
        [WR_ROW(A_ENTRY, USER)] = u,         [WR_ROW(A_ENTRY, VERSION)] = "0",
        [WR_ROW(A_ENTRY, MODE)] = mode(m),   [WR_ROW(A_ENTRY, PREQ_KEY)] = "0",
        [WR_ROW(A_ENTRY, LOG_ID)] = "",      [WR_ROW(A_ENTRY, COMMIT_SEED)] = "",
        [WR_ROW(A_ENTRY, COMMIT_HASH)] = "",
    };
    return run_rows(SC_ENTRY, q, a, WR_ROWS_LEN(A_ENTRY), WR_ROWS_TABLE(R_ENTRY),
                    WR_ROW(R_ENTRY, KIND));
}

static void s_entry(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    assert_int_equal(entry("rows_none", "u1", WR_ROW_VALUE(M_ENTRY, JOIN)),
                     WR_ROW_VALUE(K_ENTRY, NO_QUEUE));
    put_ok(s, "rows_e", mkcfg(50, 100, 0, 1, 300));
    assert_int_equal(entry("rows_e", "u1", WR_ROW_VALUE(M_ENTRY, JOIN)),
                     WR_ROW_VALUE(K_ENTRY, WAITING));
    assert_int_equal(entry("rows_e", "u1", WR_ROW_VALUE(M_ENTRY, STATUS_QUIET)),
                     WR_ROW_VALUE(K_ENTRY, WAITING));
    assert_int_equal(entry("rows_e", "u2", WR_ROW_VALUE(M_ENTRY, JOIN_PAGE)),
                     WR_ROW_VALUE(K_ENTRY, FULL));
    assert_int_equal(entry("rows_e", "u3", WR_ROW_VALUE(M_ENTRY, STATUS)),
                     WR_ROW_VALUE(K_ENTRY, NOT_IN_QUEUE));
    pass_us(s, WR_ADMIT_DELAY_US + 1000);
    assert_int_equal(sh_admit(s, "rows_e", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 1);
    assert_int_equal(entry("rows_e", "u1", WR_ROW_VALUE(M_ENTRY, STATUS)),
                     WR_ROW_VALUE(K_ENTRY, ADMITTED));
}

/* entry_batch.lua with n requests (users[i], modes[i]): the R_ENTRY_BATCH
 * header, then each answer against the B_ table of its kind, nothing
 * after; kinds[i] gets the kind of answer i. */
static void batch(const char *q, size_t n, const char *const *users, const int *modes,
                  long long *kinds)
{
    const char *a[MAXARGS];
    size_t na = WR_ROWS_LEN(A_ENTRY_BATCH);
    a[WR_ROW(A_ENTRY_BATCH, VERSION)] = "0";
    a[WR_ROW(A_ENTRY_BATCH, COMMIT_SEED)] = a[WR_ROW(A_ENTRY_BATCH, COMMIT_HASH)] = "";
    for (size_t i = 0; i < n; i++, na += WR_ROWS_LEN(A_BATCH_REQ)) {
        a[na + WR_ROW(A_BATCH_REQ, USER)] = users[i];
        a[na + WR_ROW(A_BATCH_REQ, MODE)] = mode(modes[i]);
        a[na + WR_ROW(A_BATCH_REQ, PREQ_KEY)] = "0";
        a[na + WR_ROW(A_BATCH_REQ, LOG_ID)] = "";
    }
    redisReply *rep = run(SC_ENTRY_BATCH, q, a, na);
    char why[200];
    assert_int_equal(rep->type, REDIS_REPLY_ARRAY);
    size_t at = WR_ROWS_LEN(R_ENTRY_BATCH);
    assert_true(rep->elements >= at);
    if (!wr_script_rows_match(rep->element, at, WR_ROWS_TABLE(R_ENTRY_BATCH), why, sizeof why))
        fail_msg("%s", why);
    for (size_t i = 0; i < n; i++) {
        wr_script_row_t t;
        kinds[i] = int_at(rep, at);
        if (!wr_script_rows_batch_table(kinds[i], &t))
            fail_msg("answer %zu: kind %lld has no B_ table", i, kinds[i]);
        size_t len = wr_script_rows_len(t);
        if (rep->elements - at < len)
            fail_msg("answer %zu: cut off", i);
        if (!wr_script_rows_match(rep->element + at, len, t, why, sizeof why))
            fail_msg("answer %zu: %s", i, why);
        at += len;
    }
    if (at != rep->elements)
        fail_msg("%zu elements after the last answer", rep->elements - at);
    freeReplyObject(rep);
}

static void s_entry_batch(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    const char *users[] = {"u1", "u2", "u3", "u4"};
    const int modes[] = {WR_ROW_VALUE(M_ENTRY, JOIN), WR_ROW_VALUE(M_ENTRY, JOIN),
                         WR_ROW_VALUE(M_ENTRY, STATUS), WR_ROW_VALUE(M_ENTRY, JOIN_PAGE)};
    long long k[4];
    batch("rows_none", 2, users, modes, k);
    assert_int_equal(k[0], WR_ROW_VALUE(K_ENTRY, NO_QUEUE));
    assert_int_equal(k[1], WR_ROW_VALUE(K_ENTRY, NO_QUEUE));
    put_ok(s, "rows_b", mkcfg(50, 100, 0, 2, 300));
    batch("rows_b", 1, users, modes, k);
    pass_us(s, WR_ADMIT_DELAY_US + 1000);
    assert_int_equal(sh_admit(s, "rows_b", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 1);
    /* u1 admitted, u2 waiting, u3 not in line, then the line is full */
    const char *users2[] = {"u1", "u2", "u3", "u9", "u10"};
    const int modes2[] = {WR_ROW_VALUE(M_ENTRY, STATUS), WR_ROW_VALUE(M_ENTRY, JOIN),
                          WR_ROW_VALUE(M_ENTRY, STATUS), WR_ROW_VALUE(M_ENTRY, JOIN_PAGE),
                          WR_ROW_VALUE(M_ENTRY, JOIN)};
    long long k2[5];
    batch("rows_b", 5, users2, modes2, k2);
    assert_int_equal(k2[0], WR_ROW_VALUE(K_ENTRY, ADMITTED));
    assert_int_equal(k2[1], WR_ROW_VALUE(K_ENTRY, WAITING));
    assert_int_equal(k2[2], WR_ROW_VALUE(K_ENTRY, NOT_IN_QUEUE));
    assert_int_equal(k2[3], WR_ROW_VALUE(K_ENTRY, WAITING));
    assert_int_equal(k2[4], WR_ROW_VALUE(K_ENTRY, FULL));
}

/* admit.lua's A_ADMIT. */
static const char *const *admit_args(void)
{
    static const char *const a[WR_ROWS_LEN(A_ADMIT)] = {
        [WR_ROW(A_ADMIT, SEED)] = "0123456789abcdef", [WR_ROW(A_ADMIT, VERSION)] = "0",
        [WR_ROW(A_ADMIT, SWEEP_MAX)] = "64",          [WR_ROW(A_ADMIT, SCAN_MAX)] = "64",
        [WR_ROW(A_ADMIT, VISIT_MAX)] = "64",          [WR_ROW(A_ADMIT, PUSH)] = "1",
    };
    return a;
}

/* admit.lua with A_ADMIT; checked against R_ADMIT; admitted (ADMITTED). */
static long long admit(const char *q)
{
    return run_rows(SC_ADMIT, q, admit_args(), WR_ROWS_LEN(A_ADMIT), WR_ROWS_TABLE(R_ADMIT),
                    WR_ROW(R_ADMIT, ADMITTED));
}

static void s_admit(void **state)
{
    wr_store_t *s = *state;
    admit("rows_none"); /* no queue */
    put_ok(s, "rows_a", mkcfg(50, 100, 0, 0, 300));
    assert_int_equal(admit("rows_a"), 0); /* quiet queue: the short path */
    join_due(s, "rows_a", 1, 3);
    pass_us(s, 200 * 1000);           /* a new tick */
    assert_true(admit("rows_a") > 0); /* the full path, WAITS filled */
    /* Web Push: an admission's claim (PUSHES), then the closing push
     * (CLOSING_PUSHES) */
    wr_queue_config_t c = mkcfg(10, 100, 0, 0, 300);
    c.push = true; /* (a config with push off drops the subscriptions) */
    put_ok(s, "rows_p", c);
    join_due(s, "rows_p", 1, 3);
    wr_pushsub_t sub;
    uint8_t priv[WR_CRYPTO_P256_PRIV];
    memset(&sub, 0, sizeof sub);
    assert_int_equal(wr_crypto_p256_keygen(priv, sub.p256dh), WR_OK);
    snprintf(sub.endpoint, sizeof sub.endpoint, "https://push.example/x");
    for (int i = 1; i <= 3; i++) {
        sh_res_t r;
        char u[8];
        snprintf(u, sizeof u, "u%d", i);
        sh_begin(&r);
        assert_int_equal(sh_settle(&r, wr_store_push_sub(s, "rows_p", u, &sub, sh_done_cb, &r)),
                         WR_OK);
    }
    pass_us(s, 200 * 1000);
    redisReply *rep = run(SC_ADMIT, "rows_p", admit_args(), WR_ROWS_LEN(A_ADMIT));
    assert_int_equal(int_at(rep, WR_ROW(R_ADMIT, ADMITTED)), 1);
    assert_int_equal(rep->element[WR_ROW(R_ADMIT, PUSHES)]->elements, 3);
    expect_rows(rep, WR_ROWS_TABLE(R_ADMIT));
    c.closed = true;
    put_ok(s, "rows_p", c);
    rep = run(SC_ADMIT, "rows_p", admit_args(), WR_ROWS_LEN(A_ADMIT));
    assert_int_equal(int_at(rep, WR_ROW(R_ADMIT, CLOSING)), 1);
    assert_int_equal(rep->element[WR_ROW(R_ADMIT, CLOSING_PUSHES)]->elements, 4);
    expect_rows(rep, WR_ROWS_TABLE(R_ADMIT));
}

static void s_queue_get_and_autotune(void **state)
{
    wr_store_t *s = *state;
    const char *const g[WR_ROWS_LEN(A_QUEUE_GET)] = {[WR_ROW(A_QUEUE_GET, VERSION)] = "0"};
    const char *const t[WR_ROWS_LEN(A_AUTOTUNE)] = {
        [WR_ROW(A_AUTOTUNE, REPORT)] = "1",
        [WR_ROW(A_AUTOTUNE, SOURCE)] = "0",
        [WR_ROW(A_AUTOTUNE, LATENCY_MS)] = "120.5",
        [WR_ROW(A_AUTOTUNE, ERROR_RATE)] = "0.01",
        [WR_ROW(A_AUTOTUNE, SET)] = "1",
        [WR_ROW(A_AUTOTUNE, STEP_US)] = "0",
        [WR_ROW(A_AUTOTUNE, RATE)] = "7",
        [WR_ROW(A_AUTOTUNE, CUT_MS)] = "0",
    };
    for (int pass = 0; pass < 2; pass++) { /* no queue, then a queue with people */
        const char *q = pass ? "rows_g" : "rows_none";
        if (pass) {
            put_ok(s, q, mkcfg(5, 100, 0, 0, 300));
            join_n(s, q, 1, 2);
        }
        expect_rows(run(SC_GET, q, g, WR_ROWS_LEN(A_QUEUE_GET)), WR_ROWS_TABLE(R_QUEUE_GET));
        expect_rows(run(SC_AUTOTUNE, q, t, WR_ROWS_LEN(A_AUTOTUNE)), WR_ROWS_TABLE(R_AUTOTUNE));
    }
}

/* A pre-queue join of a logged shuffled opening without the commit's
 * seed (a caller whose config predates the opening) is refused (WRLOGID)
 * with nothing written: no place, no leaf; with one, the commit leaf
 * precedes the join's, and the next join needs no seed. */
static void s_commit_needs_seed(void **state)
{
    wr_store_t *s = *state;
    wr_queue_config_t c = mkcfg(5, 100, 0, 0, 300);
    c.public_log = true;
    c.pre_queue_shuffle = true;
    c.opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, "rows_c", c);
    static const char seed[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    static const char hash[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
    const char *a[WR_ROWS_LEN(A_ENTRY)] = {
        [WR_ROW(A_ENTRY, USER)] = "u1",
        [WR_ROW(A_ENTRY, VERSION)] = "0",
        [WR_ROW(A_ENTRY, MODE)] = mode(WR_ROW_VALUE(M_ENTRY, JOIN)),
        [WR_ROW(A_ENTRY, PREQ_KEY)] = "7",
        [WR_ROW(A_ENTRY, LOG_ID)] = "0123456789abcdef0123456789abcdef",
        [WR_ROW(A_ENTRY, COMMIT_SEED)] = "",
        [WR_ROW(A_ENTRY, COMMIT_HASH)] = "",
    };
    redisReply *rep = run_any(SC_ENTRY, "rows_c", a, WR_ROWS_LEN(A_ENTRY));
    assert_int_equal(rep->type, REDIS_REPLY_ERROR);
    assert_non_null(strstr(rep->str, "WRLOGID"));
    freeReplyObject(rep);
    rep = sh_redis_cmd("ZCARD wr:{rows_c}:pre");
    assert_int_equal(rep->integer, 0);
    freeReplyObject(rep);
    rep = sh_redis_cmd("HLEN wr:{rows_c}:logl");
    assert_int_equal(rep->integer, 0);
    freeReplyObject(rep);
    a[WR_ROW(A_ENTRY, COMMIT_SEED)] = seed;
    a[WR_ROW(A_ENTRY, COMMIT_HASH)] = hash;
    assert_int_equal(run_rows(SC_ENTRY, "rows_c", a, WR_ROWS_LEN(A_ENTRY), WR_ROWS_TABLE(R_ENTRY),
                              WR_ROW(R_ENTRY, KIND)),
                     WR_ROW_VALUE(K_ENTRY, PREQUEUE_NEW)); /* placed */
    a[WR_ROW(A_ENTRY, USER)] = "u2";
    a[WR_ROW(A_ENTRY, LOG_ID)] = "1123456789abcdef0123456789abcdef";
    a[WR_ROW(A_ENTRY, COMMIT_SEED)] = a[WR_ROW(A_ENTRY, COMMIT_HASH)] = "";
    assert_int_equal(run_rows(SC_ENTRY, "rows_c", a, WR_ROWS_LEN(A_ENTRY), WR_ROWS_TABLE(R_ENTRY),
                              WR_ROW(R_ENTRY, KIND)),
                     WR_ROW_VALUE(K_ENTRY, PREQUEUE_NEW));
    ;
    rep = sh_redis_cmd("HMGET wr:{rows_c}:logl 0 1 2");
    assert_int_equal(rep->elements, 3);
    assert_non_null(strstr(rep->element[0]->str, "\"e\":\"commit\""));
    assert_non_null(strstr(rep->element[0]->str, hash));
    assert_non_null(strstr(rep->element[1]->str, "\"u\":\"0123456789abcdef0123456789abcdef\""));
    assert_non_null(strstr(rep->element[2]->str, "\"pre\":true"));
    freeReplyObject(rep);
    rep = sh_redis_cmd("HGET wr:{rows_c}:log dseed");
    assert_string_equal(rep->str, seed);
    freeReplyObject(rep);
}

/* entry_group.lua with A_ENTRY_GROUP (user, a join, group or code hash);
 * checked against R_ENTRY; the reply (caller frees). */
static redisReply *entry_group(const char *q, const char *u, const char *group, const char *code)
{
    const char *a[WR_ROWS_LEN(A_ENTRY_GROUP)] = {
        [WR_ROW(A_ENTRY_GROUP, USER)] = u,
        [WR_ROW(A_ENTRY_GROUP, VERSION)] = "0",
        [WR_ROW(A_ENTRY_GROUP, MODE)] = mode(WR_ROW_VALUE(M_ENTRY, JOIN)),
        [WR_ROW(A_ENTRY_GROUP, PREQ_KEY)] = "0",
        [WR_ROW(A_ENTRY_GROUP, LOG_ID)] = "",
        [WR_ROW(A_ENTRY_GROUP, COMMIT_SEED)] = "",
        [WR_ROW(A_ENTRY_GROUP, COMMIT_HASH)] = "",
        [WR_ROW(A_ENTRY_GROUP, GROUP)] = group,
        [WR_ROW(A_ENTRY_GROUP, CODE)] = code,
    };
    redisReply *rep = run(SC_ENTRY_GROUP, q, a, WR_ROWS_LEN(A_ENTRY_GROUP));
    char why[200];
    if (!wr_script_rows_check(rep, WR_ROWS_TABLE(R_ENTRY), why, sizeof why))
        fail_msg("%s", why);
    return rep;
}

/* codes.lua with A_CODES; checked against R_CODES; CODE. */
static long long codes_run(const char *q, const char *kind, const char *group, const char *hashes)
{
    const char *const a[WR_ROWS_LEN(A_CODES)] = {
        [WR_ROW(A_CODES, KIND)] = kind,     [WR_ROW(A_CODES, GROUP)] = group,
        [WR_ROW(A_CODES, USES)] = "1",      [WR_ROW(A_CODES, EXPIRES_MS)] = "-1",
        [WR_ROW(A_CODES, HASHES)] = hashes,
    };
    return run_rows(SC_CODES, q, a, WR_ROWS_LEN(A_CODES), WR_ROWS_TABLE(R_CODES),
                    WR_ROW(R_CODES, CODE));
}

/* Priority groups: entry_group.lua's answers (with the group part, and a
 * refused code), codes.lua's, entry_batch.lua's answers each followed by
 * its B_GROUP, admit.lua's and queue_get.lua's LINES. */
static void s_groups(void **state)
{
    wr_store_t *s = *state;
    wr_queue_config_t c = mkcfg(50, 100, 0, 0, 300);
    c.n_groups = 1;
    snprintf(c.groups[0], sizeof c.groups[0], "fanclub");
    put_ok(s, "rows_gr", c);
    char h[WR_CODE_HASH_HEX + 1];
    memset(h, 'a', WR_CODE_HASH_HEX);
    h[WR_CODE_HASH_HEX] = '\0';
    assert_int_equal(codes_run("rows_none", "l", "", ""), -1);
    assert_int_equal(codes_run("rows_gr", "c", "fanclub", h), 0);
    assert_int_equal(codes_run("rows_gr", "c", "fanclub", h), -3); /* kept already */
    assert_int_equal(codes_run("rows_gr", "c", "nope", h), -2);
    assert_int_equal(codes_run("rows_gr", "l", "", ""), 0);
    redisReply *rep = entry_group("rows_gr", "f1", "", h);
    assert_int_equal(int_at(rep, WR_ROW(R_ENTRY, KIND)), WR_ROW_VALUE(K_ENTRY, WAITING));
    assert_int_equal(int_at(rep, WR_ROW(R_ENTRY, GROUP_KIND)), WR_ROW_VALUE(K_ENTRY, GROUP));
    assert_int_equal(int_at(rep, WR_ROW(R_ENTRY, GROUP_LINE)), 1);
    freeReplyObject(rep);
    rep = entry_group("rows_gr", "f2", "", h); /* its one use spent */
    assert_int_equal(int_at(rep, WR_ROW(R_ENTRY, KIND)), WR_ROW_VALUE(K_ENTRY, CODE));
    assert_int_equal(int_at(rep, WR_ROW(R_ENTRY, POSITION)), WR_CODE_USED_UP);
    assert_int_equal(int_at(rep, WR_ROW(R_ENTRY, GROUP_KIND)), 0);
    freeReplyObject(rep);
    assert_int_equal(codes_run("rows_gr", "r", "", h), 0);
    assert_int_equal(codes_run("rows_gr", "r", "", "b"), -4);
    /* a batch: each answer followed by its group part */
    const char *a[MAXARGS];
    const char *users[] = {"f1", "s1", "nobody"};
    const int modes[] = {WR_ROW_VALUE(M_ENTRY, STATUS), WR_ROW_VALUE(M_ENTRY, JOIN),
                         WR_ROW_VALUE(M_ENTRY, STATUS)};
    size_t na = WR_ROWS_LEN(A_ENTRY_BATCH);
    a[WR_ROW(A_ENTRY_BATCH, VERSION)] = "0";
    a[WR_ROW(A_ENTRY_BATCH, COMMIT_SEED)] = a[WR_ROW(A_ENTRY_BATCH, COMMIT_HASH)] = "";
    for (size_t i = 0; i < 3; i++, na += WR_ROWS_LEN(A_BATCH_REQ)) {
        a[na + WR_ROW(A_BATCH_REQ, USER)] = users[i];
        a[na + WR_ROW(A_BATCH_REQ, MODE)] = mode(modes[i]);
        a[na + WR_ROW(A_BATCH_REQ, PREQ_KEY)] = "0";
        a[na + WR_ROW(A_BATCH_REQ, LOG_ID)] = "";
    }
    /* the polls' scripts of a queue cached without groups: refused, nothing written */
    rep = run_any(SC_ENTRY_BATCH, "rows_gr", a, na);
    assert_int_equal(rep->type, REDIS_REPLY_ERROR);
    assert_memory_equal(rep->str, "WRGROUPS", 8);
    freeReplyObject(rep);
    rep = run(SC_ENTRY_BATCH_G, "rows_gr", a, na);
    const wr_script_row_t want[] = {WR_ROWS_TABLE(B_WAITING), WR_ROWS_TABLE(B_GROUP),
                                    WR_ROWS_TABLE(B_WAITING), WR_ROWS_TABLE(B_GROUP),
                                    WR_ROWS_TABLE(B_KIND)};
    size_t at = WR_ROWS_LEN(R_ENTRY_BATCH);
    char why[200];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t len = wr_script_rows_len(want[i]);
        if (rep->elements < at + len ||
            !wr_script_rows_match(rep->element + at, len, want[i], why, sizeof why))
            fail_msg("batch element %zu: %s", at, why);
        at += len;
    }
    assert_int_equal(at, rep->elements);
    freeReplyObject(rep);
    pass_us(s, WR_ADMIT_DELAY_US + 1000);
    rep = run(SC_ADMIT, "rows_gr", admit_args(), WR_ROWS_LEN(A_ADMIT));
    assert_int_equal(rep->element[WR_ROW(R_ADMIT, LINES)]->elements, 4);
    expect_rows(rep, WR_ROWS_TABLE(R_ADMIT));
    const char *const gq[WR_ROWS_LEN(A_QUEUE_GET)] = {[WR_ROW(A_QUEUE_GET, VERSION)] = "0"};
    rep = run(SC_GET, "rows_gr", gq, WR_ROWS_LEN(A_QUEUE_GET));
    assert_int_equal(rep->element[WR_ROW(R_QUEUE_GET, LINES)]->elements, 4);
    expect_rows(rep, WR_ROWS_TABLE(R_QUEUE_GET));
}

WR_CONTRACT_GROUP(script_rows_redis_only, T(s_entry), T(s_entry_batch), T(s_admit),
                  T(s_queue_get_and_autotune), T(s_commit_needs_seed), T(s_groups));
