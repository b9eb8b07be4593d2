/*
 * store_redis.c - the Redis backend of the store interface (store.h): the
 * queue operations, on top of one Redis connection (redis_conn.c).
 *
 * Structure
 *   Every domain operation is ONE Lua script call (src/store/redis/scripts/ *.lua,
 *   embedded at build time; lib.lua is prepended to the queue scripts so
 *   each text is self-contained), run through redis_conn as "script N with
 *   these keys and arguments, call back with the reply or an error". The
 *   connection - its states, connect and command timeouts, reconnects, the
 *   EVALSHA/NOSCRIPT retry, the WAIT of the durability mode - is all there;
 *   this file builds the arguments and turns replies into results (decoded
 *   by script_reply.c). Every key of queue q carries the hash tag {q} and
 *   is passed in KEYS.
 *
 * Requests
 *   Each operation in flight is a `struct req`: the user callback and its
 *   shape (op), the queue name, and - for operations that answer a config -
 *   the cached config it announced as "known" to the script. It builds a
 *   redis_conn command and hands it over; the command's callback (on_reply)
 *   comes exactly once, with Redis's reply or with WR_ETIMEOUT,
 *   WR_EUNAVAILABLE or WR_ECANCELED, and turns it into the user callback
 *   (always the last thing done with the store), then frees the req.
 *   - Durability mode (wait_replicas > 0): a consume that burned a token or
 *     a tick that admitted someone asks redis_conn for a WAIT before the
 *     reply comes back (wait_fn); see redis_conn.c.
 *   - close(): redis_conn_close() calls every pending command back with
 *     WR_ECANCELED, in send order, synchronously; then the store is freed.
 *   Joins and statuses are coalesced instead (below).
 *   Invariant: a user callback is called exactly once per operation that
 *   returned WR_OK, and never from inside an operation call.
 *   Reentrancy: a user callback may start new operations and may call
 *   close(); after calling a user callback this file touches only the req,
 *   which it owns (a batch: the batch, and the store through `busy`).
 *
 * Coalescing (joins and statuses)
 *   Joins and statuses are held and sent as one script call per queue and
 *   loop iteration: store_redis_batch.c.
 *
 * queue_list (the registry, then one queue_get per name): store_redis_list.c.
 * config_put, queue_get, queue_delete, secret, secret_sync (the admin
 * operations and the global keys) and autotune: store_redis_admin.c.
 * store_redis_internal.h is what the four files share.
 *
 * Config cache (cfgcache.c)
 *   Scripts get the known version and return the JSON only when it differs;
 *   an uncached queue sends "0" and always gets the JSON. A req holds a
 *   reference to the immutable snapshot {version, config} it announced, so
 *   a reply without JSON is always resolved against exactly that version.
 *   Versions start at the creation time in us (config_put.lua), so a
 *   re-created queue never matches an old cached version.
 *
 * Ownership: the store owns its connection and cache; results handed to
 *   callbacks live on the stack or in the req and are borrowed until the
 *   callback returns.
 */
#define _GNU_SOURCE /* memmem */
#include "store/redis/store_redis.h"

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "store/redis/cfgcache.h"
#include "base/crypto.h"
#include "base/ids.h"
#include "base/hex.h"
#include "base/log.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/script_reply.h"
#include "store/redis/script_rows.h"
#include "store/redis/store_redis_internal.h"

#define CACHE_MAX 10000
#define LIB_LOG   "scripts/lib_log.lua" /* the public log's leaves: before lib.lua */
#define LIB       LIB_LOG, "scripts/lib.lua", "scripts/lib_group.lua" /* groups: after lib.lua */
/* the polls of a queue cached without groups: lib_group.lua's stand-in */
#define LIB_NOGROUP LIB_LOG, "scripts/lib.lua", "scripts/lib_nogroup.lua"
#define LIB_ENTRY   "scripts/lib_entry.lua" /* after lib.lua: entry() */
/* an entry mode (scripts.def M_ENTRY) as the one character ARGV holds */
#define MODE(m) ((char)('0' + WR_ROW_VALUE(M_ENTRY, m)))
#define ROWS(s) "scripts/rows/" #s ".lua" /* its prelude (scripts.def) */

/* The script table of the connection, by enum script_id. */
const wr_redis_conn_script_t wr_store_redis__scripts[SC_COUNT] = {
    [SC_ENTRY] = {{ROWS(entry), LIB_NOGROUP, LIB_ENTRY}, "scripts/entry.lua"},
    [SC_ENTRY_BATCH] = {{ROWS(entry_batch), LIB_NOGROUP, LIB_ENTRY}, "scripts/entry_batch.lua"},
    [SC_ENTRY_G] = {{ROWS(entry), LIB, LIB_ENTRY}, "scripts/entry.lua"},
    [SC_ENTRY_BATCH_G] = {{ROWS(entry_batch), LIB, LIB_ENTRY}, "scripts/entry_batch.lua"},
    [SC_LEAVE] = {{ROWS(leave), LIB}, "scripts/leave.lua"},
    [SC_TOKEN] = {{ROWS(token), LIB}, "scripts/token.lua"},
    [SC_ADMIT] = {{ROWS(admit), LIB}, "scripts/admit.lua"},
    [SC_GET] = {{ROWS(queue_get), LIB}, "scripts/queue_get.lua"},
    [SC_DELETE] = {{ROWS(queue_delete), LIB}, "scripts/queue_delete.lua"},
    [SC_PUT] = {{ROWS(config_put), LIB}, "scripts/config_put.lua"},
    [SC_SECRET] = {{NULL}, "scripts/secret.lua"},
    [SC_RELEASE] = {{ROWS(release), LIB}, "scripts/release.lua"},
    [SC_BURN] = {{NULL}, "scripts/burn.lua"},
    [SC_SECRET_SYNC] = {{NULL}, "scripts/secret_sync.lua"},
    [SC_AUTOTUNE] = {{ROWS(autotune), LIB}, "scripts/autotune.lua"},
    [SC_BYPASS] = {{ROWS(bypass), LIB}, "scripts/bypass.lua"},
    [SC_REPORT] = {{ROWS(report), LIB}, "scripts/report.lua"},
    [SC_REPORT_INDEX] = {{ROWS(report_index)}, "scripts/report_index.lua"},
    [SC_LOG_KEY] = {{NULL}, "scripts/log_key.lua"},
    [SC_LOG_HEAD] = {{NULL}, "scripts/log_head.lua"},
    [SC_LOG_HASHED] = {{NULL}, "scripts/log_hashed.lua"},
    [SC_LOG_PUBLISH] = {{NULL}, "scripts/log_publish.lua"},
    [SC_LOG_READ] = {{NULL}, "scripts/log_read.lua"},
    [SC_LOG_LEASE] = {{NULL}, "scripts/log_lease.lua"},
    [SC_PUSH] = {{ROWS(push), LIB, LIB_ENTRY}, "scripts/push.lua"},
    [SC_DRAW] = {{ROWS(draw), LIB}, "scripts/draw.lua"},
    /* entry.lua, made a join into a group by its prelude entry_group.lua */
    [SC_ENTRY_GROUP] = {{ROWS(entry_group), LIB, LIB_ENTRY, "scripts/entry_group.lua"},
                        "scripts/entry.lua"},
    [SC_CODES] = {{ROWS(codes), LIB}, "scripts/codes.lua"},
};

static const wr_store_ops_t redis_ops;

/* The global keys (store_redis_internal.h): their names on one Redis, and
 * in the home slot of a cluster (the slot of "{.global}"). */
static const struct gkeys single_keys = {"wr:queues", "wr:secret",  "wr:secret:previous",
                                         "wr:epoch",  "wr:reports", "wr:logs",
                                         "wr:logkey", "wr:logsalt", "wr:loglease"};
static const struct gkeys cluster_keys = {
    "wr:{.global}:queues", "wr:{.global}:secret",  "wr:{.global}:secret:previous",
    "wr:{.global}:epoch",  "wr:{.global}:reports", "wr:{.global}:logs",
    "wr:{.global}:logkey", "wr:{.global}:logsalt", "wr:{.global}:loglease"};

/* ----------------------------------------------------------- requests */

/* A request whose command takes max_args arguments (EVALSHA, the SHA and
 * numkeys included) and extra bytes beyond the keys and a few numbers. */
struct req *wr_store_redis__req_new_args(struct rstore *s, op_t op, int script, int max_args,
                                         size_t extra, void *arg)
{
    struct req *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->cmd = wr_redis_conn_cmd_new_args(script, max_args,
                                        512 + (NKEYS + 4) * (WR_QUEUE_NAME_MAX + 16) + extra);
    if (!r->cmd) {
        free(r);
        return NULL;
    }
    r->s = s;
    r->op = op;
    r->script = script;
    r->arg = arg;
    return r;
}

struct req *wr_store_redis__req_new(struct rstore *s, op_t op, int script, size_t extra, void *arg)
{
    /* EVALSHA, the SHA, numkeys, the keys and up to 16 more */
    return wr_store_redis__req_new_args(s, op, script, 3 + NKEYS + 16, extra, arg);
}

struct req *wr_store_redis__req_start(struct rstore *s, op_t op, int script, size_t extra,
                                      void *arg, wr_err_t *err)
{
    if (!wr_redis_router_connected(s->conn)) {
        *err = WR_EUNAVAILABLE;
        return NULL;
    }
    struct req *r = wr_store_redis__req_new(s, op, script, extra, arg);
    if (!r)
        *err = WR_ENOMEM;
    return r;
}

void wr_store_redis__req_free(struct req *r)
{
    if (!r)
        return;
    wr_redis_conn_cmd_free(r->cmd);
    wr_cfgcache_release(r->snap);
    free(r);
}

/* numkeys and the keys of queue q, in the order of lib.lua (the priority
 * groups' after NKEYS_BASE: lib_group.lua). */
/* clang-format off */
#define KEY_SUFFIXES(X)                                                                  \
    X(config) X(waiting) X(active) X(tokens) X(state) X(sessions) X(sessjti) X(seen)     \
    X(pre) X(held) X(back) X(away) X(log) X(logl) X(logm) X(logh) X(push) X(pushdue)     \
    X(g1) X(g2) X(g3) X(g4) X(g5) X(g6) X(g7) X(g8) X(gm) X(codes) X(gstat)
/* clang-format on */
#define KEY_NAME(k) #k,
#define KEY_LEN(k)  (uint8_t)(sizeof(#k) - 1),
const char *const wr_store_redis__key_suffix[NKEYS] = {KEY_SUFFIXES(KEY_NAME)};
/* their lengths */
static const uint8_t key_suffix_len[NKEYS] = {KEY_SUFFIXES(KEY_LEN)};

/* The last queue's keys, "wr:{" q "}:" suffix each, laid end to end with
 * their NULs as a command holds them: a burst of polls of one queue copies
 * them in one memcpy (content-addressed by the name, so any store of the
 * process may share it; the loop's thread only). */
static struct {
    char q[WR_QUEUE_NAME_MAX + 1];
    char bytes[NKEYS * (WR_QUEUE_NAME_MAX + 16)];
    size_t lens[NKEYS];
} keys_memo;

bool wr_store_redis__queue_keys(wr_redis_conn_cmd_t *cmd, const char *q, int n)
{
    if (n < 0 || !wr_redis_conn_cmd_u64(cmd, (uint64_t)n))
        return false;
    size_t ql = strnlen(q, WR_QUEUE_NAME_MAX + 1);
    if (ql > WR_QUEUE_NAME_MAX)
        return false;
    if (strcmp(keys_memo.q, q) != 0 || !keys_memo.q[0]) {
        char *p = keys_memo.bytes;
        for (int i = 0; i < NKEYS; i++) {
            memcpy(p, "wr:{", 4);
            memcpy(p + 4, q, ql);
            memcpy(p + 4 + ql, "}:", 2);
            memcpy(p + 6 + ql, wr_store_redis__key_suffix[i], key_suffix_len[i] + 1u);
            keys_memo.lens[i] = 6 + ql + key_suffix_len[i];
            p += keys_memo.lens[i] + 1;
        }
        memcpy(keys_memo.q, q, ql + 1);
    }
    return wr_redis_conn_cmd_block(cmd, keys_memo.bytes, keys_memo.lens, n < NKEYS ? n : NKEYS);
}

bool wr_store_redis__arg_queue_keys_n(struct req *r, const char *q, int n)
{
    snprintf(r->queue, sizeof r->queue, "%s", q);
    return wr_store_redis__queue_keys(r->cmd, q, n);
}

bool wr_store_redis__arg_queue_keys(struct req *r, const char *q)
{
    return wr_store_redis__arg_queue_keys_n(r, q, NKEYS);
}

bool wr_store_redis__arg_known_version(struct rstore *s, struct req *r)
{
    r->snap = wr_cfgcache_get(s->cache, r->queue);
    return wr_redis_conn_cmd_u64(r->cmd, r->snap ? (uint64_t)r->snap->version : 0);
}

/* Calls r's callback with err and no result. The caller is about to free
 * r; nothing may follow that uses s (the callback may close the store). */
static void call_err(struct req *r, wr_err_t err)
{
    switch (r->op) {
    case OP_ADMIT:
        r->cb.admit(err, NULL, r->arg);
        break;
    case OP_CONSUME:
    case OP_VERIFY:
    case OP_RELEASE:
    case OP_BURN:
    case OP_BURN_CHECK:
        r->cb.token(err, NULL, r->arg);
        break;
    case OP_GET:
        r->cb.info(err, NULL, r->arg);
        break;
    case OP_SECRET:
        r->cb.secret(err, NULL, 0, r->arg);
        break;
    case OP_SYNC:
    case OP_SYNC_EPOCH:
        r->cb.sync(err, NULL, r->arg);
        break;
    case OP_NAMES:
        r->names(NULL, err, NULL, r->arg);
        break;
    case OP_AUTOTUNE:
        r->cb.autotune(err, NULL, r->arg);
        break;
    case OP_REPORT:
        wr_store_redis__report_reply(r, err, NULL);
        break;
    case OP_LOG:
        wr_store_redis__log_reply(r, err, NULL);
        break;
    case OP_CODES:
        wr_store_redis__codes_reply(r, err, NULL);
        break;
    case OP_LEAVE:
    case OP_PUT:
    case OP_DELETE:
    case OP_PING:
    case OP_BYPASS:
    case OP_PUSH:
        r->cb.done(err, r->arg);
        break;
    }
}

static void on_reply(wr_err_t err, const redisReply *rep, void *arg);

/* Durability mode: WAIT only after a write whose loss a failover must not
 * undo - a consume that burned a token (token.lua answers 0) or a tick that
 * admitted someone (admit.lua: code 0, admitted > 0). WAIT blocks this one
 * connection, so every other command queued behind it waits too: an idle
 * tick or a refused consume must not pay that. */
static bool wait_after_consume(const redisReply *rep)
{
    return rep->type == REDIS_REPLY_INTEGER && rep->integer == 0;
}

static bool wait_after_admit(const redisReply *rep)
{
    return rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2 &&
           rep->element[0]->type == REDIS_REPLY_INTEGER && rep->element[0]->integer == 0 &&
           rep->element[1]->type == REDIS_REPLY_INTEGER && rep->element[1]->integer > 0;
}

/* Hands r's command to the connection when its arguments were built
 * (args_ok; else WR_EINVAL); on error frees r. Never calls a callback.
 * The batches held so far go first, so commands reach Redis in the order
 * of the calls (see "Coalescing"). */
wr_err_t wr_store_redis__submit(struct rstore *s, struct req *r, bool args_ok)
{
    if (!args_ok) {
        wr_store_redis__req_free(r);
        return WR_EINVAL;
    }
    wr_store_redis__send_held(s);
    wr_redis_conn_wait_fn wait_fn = r->op == OP_CONSUME || r->op == OP_BURN ? wait_after_consume
                                    : r->op == OP_ADMIT                     ? wait_after_admit
                                                                            : NULL;
    wr_redis_conn_cmd_t *cmd = r->cmd;
    r->cmd = NULL; /* the connection owns it from here, also on error */
    wr_err_t err = wr_redis_router_submit(s->conn, cmd, wait_fn, on_reply, r);
    if (err != WR_OK)
        wr_store_redis__req_free(r);
    return wr_redis_router_shard_err(s->conn, err);
}

/* Sends a fire-and-forget registry command (SADD/SREM) before or after a
 * script on the same connection, so both go in one round trip. */
wr_err_t wr_store_redis__send_plain(struct rstore *s, const char *cmd, const char *key,
                                    const char *member)
{
    wr_store_redis__send_held(s);
    const char *argv[3] = {cmd, key, member};
    return wr_redis_router_send_oneway(s->conn, "registry", 3, argv);
}

/* --------------------------------------------------------- reply parsing */

static wr_err_t resolve_once(struct cfgctx *c, long long version, const redisReply *json)
{
    if (version <= 0)
        return WR_EPROTO;
    if (json->len == 0) {
        if (!c->snap || c->snap->version != (uint64_t)version)
            return WR_EPROTO;
        c->cfg = &c->snap->cfg; /* by reference: the request holds the snapshot */
        return WR_OK;
    }
    if (json->len > JSON_MAX)
        return WR_EPROTO;
    json_error_t jerr;
    json_t *j = json_loadb(json->str, json->len, 0, &jerr);
    if (!j) {
        wr_warn("store_redis: stored config of %s is not JSON: %s", c->queue, jerr.text);
        return WR_EPROTO;
    }
    char field[WR_FIELD_MAX + 1], msg[128];
    wr_queue_config_t cfg;
    wr_err_t err = wr_qconfig_parse_stored(j, &cfg, field, sizeof field, msg, sizeof msg);
    json_decref(j);
    if (err != WR_OK) {
        wr_warn("store_redis: stored config of %s does not parse: %s: %s", c->queue, field, msg);
        return WR_EPROTO;
    }
    /* a new version (rare: a config change): one copy into its snapshot */
    c->own = wr_cfgcache_put_ref(c->s->cache, c->queue, (uint64_t)version, &cfg);
    if (!c->own)
        return WR_ENOMEM;
    c->cfg = &c->own->cfg;
    return WR_OK;
}

/* The config of a reply (wr_script_reply_config_fn, ctx = a struct
 * cfgctx): the JSON when the script sent one (parsed into a snapshot,
 * cached), else the snapshot of the version announced, by reference.
 * Worked out on the first call; later calls (the other answers of a
 * batch: one config part) repeat it. */
wr_err_t wr_store_redis__resolve_config(void *ctx, long long version, const redisReply *json,
                                        const wr_queue_config_t **out)
{
    struct cfgctx *c = ctx;
    if (!c->done) {
        c->err = resolve_once(c, version, json);
        c->done = true;
    }
    *out = c->err == WR_OK ? c->cfg : NULL;
    return c->err;
}

void wr_store_redis__cfgctx_done(struct cfgctx *c)
{
    wr_cfgcache_release(c->own);
    c->own = NULL;
    c->cfg = NULL;
}

wr_err_t wr_store_redis__reply_err(const redisReply *rep)
{
    /* (bounded: an error reply's text is Redis's, a line) */
    size_t n = rep->len > 512 ? 512 : rep->len;
    return rep->str && memmem(rep->str, n, "WRONGTYPE", 9) ? WR_EDATA : WR_EPROTO;
}

/* Decodes Redis's reply to r (script_reply.c) and calls the user callback,
 * last. */
static void finish(struct rstore *s, struct req *r, const redisReply *rep)
{
    struct cfgctx cc = {.s = s, .queue = r->queue, .snap = r->snap};
    wr_err_t err;
    if (rep->type == REDIS_REPLY_ERROR && r->op != OP_LOG &&
        r->op != OP_CODES) { /* (a log job, a codes job reads its own) */
        wr_warn("store_redis: %s on %s failed: %.*s",
                r->script >= 0 ? wr_store_redis__scripts[r->script].file : "command", r->queue,
                (int)(rep->len > 200 ? 200 : rep->len), rep->str);
        call_err(r, wr_store_redis__reply_err(rep));
        return;
    }
    switch (r->op) {
    case OP_ADMIT: {
        wr_admit_t res;
        err = wr_script_reply_admit(rep, wr_store_redis__resolve_config, &cc, &res);
        if (err == WR_OK && rep->element[WR_ROW(R_ADMIT, DRAW)]->integer == 1)
            wr_store_redis__draw_due(s, r->queue); /* the opening waits for it */
        r->cb.admit(err, err == WR_OK ? &res : NULL, r->arg);
        wr_store_redis__cfgctx_done(&cc);
        if (err == WR_OK) {
            free((void *)res.waited_us);
            free((void *)res.pushes);
        }
        break;
    }
    case OP_CONSUME:
    case OP_VERIFY:
    case OP_RELEASE:
    case OP_BURN:
    case OP_BURN_CHECK: {
        wr_token_check_t res;
        err = wr_script_reply_token(rep, &res);
        r->cb.token(err, (err == WR_OK || err == WR_ETOKEN) ? &res : NULL, r->arg);
        break;
    }
    case OP_GET: {
        wr_queue_info_t info;
        err = wr_script_reply_get(rep, wr_store_redis__resolve_config, &cc, &info);
        info.name = r->queue;
        r->cb.info(err, err == WR_OK ? &info : NULL, r->arg);
        wr_store_redis__cfgctx_done(&cc);
        break;
    }
    case OP_LEAVE:
    case OP_DELETE:
    case OP_PUSH:
        err = wr_script_reply_code(rep, r->op != OP_DELETE);
        if (r->op == OP_DELETE && (err == WR_OK || err == WR_ENOTFOUND))
            wr_cfgcache_remove(s->cache, r->queue);
        r->cb.done(err, r->arg);
        break;
    case OP_PUT:
        r->cb.done(wr_script_reply_put(rep), r->arg);
        break;
    case OP_PING:
        r->cb.done(rep->type == REDIS_REPLY_STATUS ? WR_OK : WR_EPROTO, r->arg);
        break;
    case OP_BYPASS:
        r->cb.done(wr_script_reply_code(rep, false), r->arg);
        break;
    case OP_SECRET: {
        const uint8_t *secret = NULL;
        size_t len = 0;
        err = wr_script_reply_secret(rep, &secret, &len);
        r->cb.secret(err, secret, len, r->arg);
        break;
    }
    case OP_SYNC:
    case OP_SYNC_EPOCH: {
        wr_store_sync_t res;
        err = wr_script_reply_sync(rep, r->op == OP_SYNC, &res);
        r->cb.sync(err, err == WR_OK ? &res : NULL, r->arg);
        break;
    }
    case OP_NAMES:
        r->names(s, WR_OK, rep, r->arg);
        break;
    case OP_AUTOTUNE: {
        wr_autotune_state_rec_t res;
        err = wr_script_reply_autotune(rep, &res);
        r->cb.autotune(err, err == WR_OK ? &res : NULL, r->arg);
        break;
    }
    case OP_REPORT:
        wr_store_redis__report_reply(r, WR_OK, rep);
        break;
    case OP_LOG:
        wr_store_redis__log_reply(r, WR_OK, rep);
        break;
    case OP_CODES:
        wr_store_redis__codes_reply(r, WR_OK, rep);
        break;
    }
}

/* The one answer of r's command: the user callback, then r is freed. */
static void on_reply(wr_err_t err, const redisReply *rep, void *arg)
{
    struct req *r = arg;
    if (err != WR_OK)
        call_err(r, err == WR_EUNAVAILABLE ? wr_redis_router_shard_err(r->s->conn, err) : err);
    else
        finish(r->s, r, rep); /* calls the user callback last */
    wr_store_redis__req_free(r);
}

static void rstore_free(struct rstore *s);

/* Leaves a loop entry of ours (busy); the store goes with the outermost
 * one once close() ran inside. */
void wr_store_redis__unbusy(struct rstore *s)
{
    if (--s->busy == 0 && s->closing)
        rstore_free(s);
}

/* ------------------------------------------------------------ open/close */

static void rstore_free(struct rstore *s)
{
    struct batch *b;
    while ((b = wr_store_redis__blist_pop(&s->held)) != NULL)
        wr_store_redis__batch_free(b);
    while ((b = wr_store_redis__blist_pop(&s->failed)) != NULL)
        wr_store_redis__batch_free(b);
    wr_crypto_hmac_free(s->log_master);
    if (s->flush_ev)
        event_free(s->flush_ev);
    wr_cfgcache_free(s->cache);
    free(s);
}

wr_err_t wr_store_redis_open(struct event_base *base, const wr_store_redis_opts_t *opts,
                             wr_store_t **out)
{
    if (!base || !opts || !out)
        return WR_EINVAL;
    struct rstore *s = calloc(1, sizeof *s);
    if (!s)
        return WR_ENOMEM;
    STAILQ_INIT(&s->held.q);
    STAILQ_INIT(&s->failed.q);
    s->base_.ops = &redis_ops;
    s->wait_replicas = opts->wait_replicas;
    s->push_sender = opts->push_sender;
    s->flush_ev = event_new(base, -1, 0, wr_store_redis__on_flush, s);
    uint8_t id[16]; /* the signer's lease names its holder by it */
    wr_err_t err = !s->flush_ev ? WR_ENOMEM : wr_crypto_random(id, sizeof id);
    if (err != WR_OK) {
        rstore_free(s);
        return err;
    }
    wr_hex_encode(id, sizeof id, s->instance);
    wr_redis_conn_opts_t co = {
        .url = opts->url,
        .log_name = "store_redis",
        .scripts = wr_store_redis__scripts,
        .nscripts = SC_COUNT,
        .command_timeout_ms = opts->command_timeout_ms,
        .connect_timeout_ms = opts->connect_timeout_ms,
        .reconnect_max_ms = opts->reconnect_max_ms,
        .wait_replicas = opts->wait_replicas,
        .wait_timeout_ms = opts->wait_timeout_ms,
        .metrics = opts->metrics,
        /* production: TLS, the env password, the settings check, start */
        .tls_ca_file = opts->tls_ca_file,
        .tls_cert_file = opts->tls_cert_file,
        .tls_key_file = opts->tls_key_file,
        .env_password = opts->env_password,
        .allow_eviction = opts->allow_eviction,
        .on_started = opts->on_started,
        .started_arg = opts->started_arg,
    };
    err = wr_redis_router_open(base, &co, &s->conn);
    if (err == WR_OK)
        s->keys = wr_redis_router_is_cluster(s->conn) ? &cluster_keys : &single_keys;
    if (err == WR_OK && !(s->cache = wr_cfgcache_new(CACHE_MAX))) {
        wr_redis_router_close(s->conn);
        err = WR_ENOMEM;
    }
    if (err != WR_OK) {
        rstore_free(s);
        return err;
    }
    *out = &s->base_;
    return WR_OK;
}

bool wr_store_redis_connected(wr_store_t *st)
{
    struct rstore *s = (struct rstore *)st;
    return s && st->ops == &redis_ops && wr_redis_router_connected(s->conn);
}

static void r_close(wr_store_t *st)
{
    struct rstore *s = (struct rstore *)st;
    if (!s || s->closing)
        return; /* a second close (from a callback run by close) is a no-op */
    s->closing = true;
    s->busy++;
    event_del(s->flush_ev);
    /* Every request not answered gets WR_ECANCELED, in the order they went
     * (or would have gone) to Redis: the rest of the batch being answered
     * (close() called from one of its callbacks), the commands sent, the
     * batches whose send failed, the batches held. */
    struct batch *b = s->answering;
    while (b && b->answered < b->n) {
        struct sub *x = &b->sub[b->answered++];
        x->cb(WR_ECANCELED, NULL, x->arg);
    }
    wr_redis_router_close(s->conn); /* pending callbacks: WR_ECANCELED, in send order */
    s->conn = NULL;                 /* operations from the callbacks below: WR_EUNAVAILABLE */
    while ((b = wr_store_redis__blist_pop(&s->failed)) != NULL ||
           (b = wr_store_redis__blist_pop(&s->held)) != NULL)
        wr_store_redis__answer_batch(s, b, WR_ECANCELED, NULL);
    wr_store_redis__unbusy(s); /* frees s, unless a loop entry of ours called close() */
}

/* ------------------------------------------------------------ operations */

static wr_err_t r_join(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                       void *arg)
{
    return wr_store_redis__entry(st, q, u, MODE(JOIN), NULL, cb, arg);
}

static wr_err_t r_join_page(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                            void *arg)
{
    return wr_store_redis__entry(st, q, u, MODE(JOIN_PAGE), NULL, cb, arg);
}

static wr_err_t r_status(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                         void *arg)
{
    return wr_store_redis__entry(st, q, u, MODE(STATUS), NULL, cb, arg);
}

static wr_err_t r_status_quiet(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                               void *arg)
{
    return wr_store_redis__entry(st, q, u, MODE(STATUS_QUIET), NULL, cb, arg);
}

static wr_err_t r_leave(wr_store_t *st, const char *q, const char *u, wr_store_done_cb cb,
                        void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(q) || !wr_ids_valid_user(u) || !cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_LEAVE, SC_LEAVE, strlen(u), arg, &err);
    if (!r)
        return err;
    r->cb.done = cb;
    return wr_store_redis__submit(
        s, r, wr_store_redis__arg_queue_keys(r, q) && wr_redis_conn_cmd_str(r->cmd, u));
}

WR_ROWS_ORDER(A_ADMIT, SEED, VERSION, SWEEP_MAX, SCAN_MAX, VISIT_MAX, PUSH); /* r_admit's */

static wr_err_t r_admit(wr_store_t *st, const char *q, wr_store_admit_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(q) || !cb)
        return WR_EINVAL;
    uint8_t seed[16];
    char hex[33];
    if (wr_crypto_random(seed, sizeof seed) != WR_OK)
        return WR_EIO;
    wr_hex_encode(seed, sizeof seed, hex);
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_ADMIT, SC_ADMIT, 0, arg, &err);
    if (!r)
        return err;
    r->cb.admit = cb;
    return wr_store_redis__submit(
        s, r,
        wr_store_redis__arg_queue_keys(r, q) && wr_redis_conn_cmd_str(r->cmd, hex) &&
            wr_store_redis__arg_known_version(s, r) &&
            wr_redis_conn_cmd_fmt(r->cmd, "%d", WR_STORE_IDLE_SWEEP_MAX) &&
            wr_redis_conn_cmd_fmt(r->cmd, "%d", WR_STORE_ADMIT_SCAN_MAX) &&
            wr_redis_conn_cmd_fmt(r->cmd, "%d", WR_STORE_IDLE_VISIT_MAX) &&
            wr_redis_conn_cmd_str(r->cmd, s->push_sender ? "1" : "0"));
}

/* consume and verify (token.lua) and release (release.lua, sessions). */
static wr_err_t r_token(wr_store_t *st, const char *q, const char *u, const char *jti, op_t op,
                        wr_store_token_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(q) || !wr_ids_valid_user(u) || !wr_store_valid_jti(jti) || !cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, op, op == OP_RELEASE ? SC_RELEASE : SC_TOKEN,
                                              strlen(u) + strlen(jti), arg, &err);
    if (!r)
        return err;
    r->cb.token = cb;
    /* (verify and release never read the group keys: a consume drops the
     * member's group, lib_group.lua) */
    bool ok = wr_store_redis__arg_queue_keys_n(r, q, op == OP_CONSUME ? NKEYS : NKEYS_BASE) &&
              wr_redis_conn_cmd_str(r->cmd, u) && wr_redis_conn_cmd_str(r->cmd, jti);
    if (op != OP_RELEASE)
        ok = ok && wr_redis_conn_cmd_str(r->cmd, op == OP_CONSUME ? "1" : "0");
    return wr_store_redis__submit(s, r, ok);
}

static wr_err_t r_consume(wr_store_t *st, const char *q, const char *u, const char *jti,
                          wr_store_token_cb cb, void *arg)
{
    return r_token(st, q, u, jti, OP_CONSUME, cb, arg);
}

static wr_err_t r_verify(wr_store_t *st, const char *q, const char *u, const char *jti,
                         wr_store_token_cb cb, void *arg)
{
    return r_token(st, q, u, jti, OP_VERIFY, cb, arg);
}

static wr_err_t r_release(wr_store_t *st, const char *q, const char *u, const char *jti,
                          wr_store_token_cb cb, void *arg)
{
    return r_token(st, q, u, jti, OP_RELEASE, cb, arg);
}

/* Degraded mode: burn (store.h), burn.lua on wr:{q}:config and
 * wr:{q}:burned. A burn that recorded the pass is WAITed for in durability
 * mode, like a consume. */
static wr_err_t r_burn(wr_store_t *st, const char *q, const char *jti, int64_t exp_us,
                       bool check_only, wr_store_token_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(q) || !wr_ids_valid_jti(jti) || !cb)
        return WR_EINVAL;
    size_t jlen = strlen(jti);
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, check_only ? OP_BURN_CHECK : OP_BURN, SC_BURN,
                                              jlen, arg, &err);
    if (!r)
        return err;
    r->cb.token = cb;
    snprintf(r->queue, sizeof r->queue, "%s", q);
    return wr_store_redis__submit(s, r,
                                  wr_redis_conn_cmd_str(r->cmd, "2") &&
                                      wr_redis_conn_cmd_fmt(r->cmd, "wr:{%s}:config", q) &&
                                      wr_redis_conn_cmd_fmt(r->cmd, "wr:{%s}:burned", q) &&
                                      wr_redis_conn_cmd_str(r->cmd, jti) &&
                                      wr_redis_conn_cmd_fmt(r->cmd, "%lld", (long long)exp_us) &&
                                      wr_redis_conn_cmd_str(r->cmd, check_only ? "1" : "0"));
}

static wr_err_t r_ping(wr_store_t *st, wr_store_done_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_PING, WR_REDIS_CONN_NO_SCRIPT, 0, arg, &err);
    if (!r)
        return err;
    r->cb.done = cb;
    return wr_store_redis__submit(s, r, wr_redis_conn_cmd_str(r->cmd, "PING"));
}

/* Redis Cluster: the primaries not connected now (redis_router.h). */
static size_t r_unreachable(wr_store_t *st, char *out, size_t cap)
{
    struct rstore *s = (struct rstore *)st;
    return s->conn ? wr_redis_router_unreachable(s->conn, out, cap) : 0;
}

static const wr_store_ops_t redis_ops = {
    .name = "redis",
    .join = r_join,
    .status = r_status,
    .join_page = r_join_page,
    .status_quiet = r_status_quiet,
    .leave = r_leave,
    .admit = r_admit,
    .consume = r_consume,
    .verify = r_verify,
    .release = r_release,
    /* degraded mode */
    .burn = r_burn,
    .bypass = wr_store_redis__bypass,
    .config_put = wr_store_redis__config_put,
    .queue_get = wr_store_redis__queue_get,
    .queue_list = wr_store_redis__queue_list,
    .queue_names = wr_store_redis__queue_names,
    .queue_delete = wr_store_redis__queue_delete,
    .secret = wr_store_redis__secret,
    .secret_sync = wr_store_redis__secret_sync,
    .ping = r_ping,
    .autotune = wr_store_redis__autotune,
    .report = wr_store_redis__report,
    .log_key = wr_store_redis__log_key,
    .log_head = wr_store_redis__log_head,
    .log_read = wr_store_redis__log_read,
    .log_publish = wr_store_redis__log_publish,
    .log_unsigned = wr_store_redis__log_unsigned,
    .log_beacon = wr_store_redis__log_beacon,
    .push_sub = wr_store_redis__push_sub,
    .join_group = wr_store_redis__join_group, /* priority groups (store_redis_group.c) */
    .codes = wr_store_redis__codes,
    .unreachable = r_unreachable,
    .debug_advance_time = NULL,
    .close = r_close,
};
