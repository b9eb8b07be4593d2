/*
 * store_redis_batch.c - the coalescing of joins and statuses of the Redis
 * store (store_redis.c): they are held per queue and sent as one script call
 * at the end of the loop iteration. Part of the store_redis module; what the
 * two files share is store_redis_internal.h.
 *
 * Coalescing (joins and statuses)
 *   A join or status is not sent at once: it is held in a `struct batch`
 *   of its queue (up to BATCH_MAX requests: user, join or status, callback)
 *   and the store's flush_ev is made active. libevent runs that event after
 *   every event already ready in this loop iteration (the HTTP requests
 *   read in it), so flush_ev sends every held batch at the end of the
 *   iteration - one script call per batch: entry.lua for a batch of one
 *   (the command sent before coalescing), entry_batch.lua for more - and
 *   redis_io writes them all later in the same iteration. So a request
 *   waits for no other iteration, and the polls one epoll_wait brought in
 *   cost Redis one script call.
 *   - Order: any other command (admit, consume, leave, config_put, the
 *     registry commands...) first sends the batches held (submit,
 *     send_plain), so commands reach Redis in the order of the calls, as
 *     before - except that the batches of two queues held in one iteration
 *     may pass each other's requests, which nothing can tell: their keys
 *     are disjoint (the hash tag {q}). Within a batch the requests run in
 *     arrival order, one after the other, inside one script: each is atomic
 *     and sees the writes of those before it, as when they were n commands
 *     back to back on this connection, where nothing else could run
 *     between them either (see entry_batch.lua). The per-request rules are
 *     lib.lua's entry(), one copy for both scripts.
 *   - A new batch starts when the queue's last held batch is full, and in
 *     durability mode when the kind changes (joins are WAITed for, strict;
 *     statuses never), so a status's answer never waits for or fails on a
 *     WAIT it did not need.
 *   - Answers (answer_batch): each request's callback exactly once, in
 *     order; from its own answer of the reply (a request that raised an
 *     error in the script: WR_EPROTO alone), or the command's error for
 *     all (WR_ETIMEOUT, WR_EUNAVAILABLE, WR_ECANCELED, a script error,
 *     a reply of the wrong shape: WR_EPROTO). A batch whose submit fails
 *     waits in `failed` and is answered by flush_ev from the loop (the
 *     send may run inside another operation's call).
 *   - close(): everything not answered gets WR_ECANCELED, synchronously,
 *     in send order: the rest of the batch being answered, the commands
 *     in redis_conn, the failed batches, the held ones. `busy` counts the
 *     loop entries of ours on the stack (a batch's answers, flush_ev), and
 *     the store is freed by the outermost one when close() ran inside.
 */
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/redis/cfgcache.h"
#include "store/redis/script_rows.h"
#include "base/crypto.h"
#include "base/hex.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/script_reply.h"
#include "store/redis/store_redis_internal.h"

#define BATCH_MAX 64 /* joins and statuses in one entry_batch.lua call */
#define HELD_MAX  64 /* batches held in one loop iteration; one more sends them all */

/* A batch holding a join: WAIT after every answer of the entry scripts (a
 * join of someone already in line is rare); a WAIT no replica acknowledged
 * answers WR_EUNAVAILABLE (strict): the client retries the idempotent join
 * rather than hold a place a failover may undo. In durability mode a batch
 * holds joins or statuses, never both (batch_for), so a status is never
 * WAITed for, as before coalescing. */
static bool wait_after_join(const redisReply *rep)
{
    return rep->type == REDIS_REPLY_ARRAY;
}

static void blist_push(struct blist *l, struct batch *b)
{
    STAILQ_INSERT_TAIL(&l->q, b, link);
    l->n++;
}

struct batch *wr_store_redis__blist_pop(struct blist *l)
{
    struct batch *b = STAILQ_FIRST(&l->q);
    if (!b)
        return NULL;
    STAILQ_REMOVE_HEAD(&l->q, link);
    l->n--;
    return b;
}

/* Freed batches kept for reuse with their request arrays (one loop, one
 * thread, as the store): with few requests in flight each poll is a batch
 * of its own, and its two allocations were most of what a poll on Redis
 * still allocated. */
#define KEEP_BATCHES 16
#define KEEP_SUB_CAP 16
static struct batch *kept_batches[KEEP_BATCHES];
static int n_kept_batches;

void wr_store_redis__batch_free(struct batch *b)
{
    if (!b)
        return;
    wr_cfgcache_release(b->snap);
    wr_crypto_hmac_free(b->logmac);
    if (n_kept_batches < KEEP_BATCHES && b->cap <= KEEP_SUB_CAP) {
        kept_batches[n_kept_batches++] = b;
        return;
    }
    free(b->sub);
    free(b);
}

/* A zeroed batch with room for at least 4 requests: a kept one, else a
 * new one; NULL when out of memory. */
static struct batch *batch_new(void)
{
    if (n_kept_batches > 0) {
        struct batch *b = kept_batches[--n_kept_batches];
        struct sub *sub = b->sub;
        size_t cap = b->cap;
        memset(b, 0, sizeof *b);
        b->sub = sub;
        b->cap = cap;
        return b;
    }
    struct batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->cap = 4;
    b->sub = malloc(b->cap * sizeof *b->sub);
    if (!b->sub) {
        free(b);
        return NULL;
    }
    return b;
}

/* The error of an error reply to entry.lua or one request of
 * entry_batch.lua: WR_EUNAVAILABLE for lib_entry.lua's WRLOGID (a join on
 * a queue that turned publicLog on after this instance cached its config,
 * sent without a log id: nothing changed, the caller may ask again; the
 * reply's config part updates the cache meanwhile... or the next tick's),
 * else wr_store_redis__reply_err's (WR_EDATA for WRONGTYPE, or WR_EPROTO). */
static wr_err_t log_stale(const redisReply *rep)
{
    return rep->len >= 7 && memcmp(rep->str, "WRLOGID", 7) == 0 ? WR_EUNAVAILABLE
                                                                : wr_store_redis__reply_err(rep);
}

static void send_batch(struct rstore *s, struct batch *b);

/* True when rep is lib_group.lua's WRGROUPS: the script found priority
 * groups in the config and came without their keys (this instance's
 * cached config has no groups), before it wrote anything. The queue's
 * cache entry goes and b is sent again, once, with them: its callbacks
 * wait for that answer. */
static bool resent_with_groups(struct rstore *s, struct batch *b, const redisReply *rep)
{
    if (b->resent || b->groups || b->answered > 0 || rep->len < 8 ||
        memcmp(rep->str, "WRGROUPS", 8) != 0)
        return false;
    wr_cfgcache_remove(s->cache, b->queue);
    wr_cfgcache_release(b->snap);
    b->snap = NULL; /* (the next answer sends the config) */
    b->resent = true;
    send_batch(s, b);
    return true;
}

/* Calls the callback of every request of b not answered yet, in order:
 * with err when it is not WR_OK, else with its answer in rep (entry.lua's
 * reply when b->n == 1, else entry_batch.lua's). A callback that closes
 * the store has the rest answered WR_ECANCELED by close() (s->answering).
 * Frees b. */
void wr_store_redis__answer_batch(struct rstore *s, struct batch *b, wr_err_t err,
                                  const redisReply *rep)
{
    const char *file = wr_store_redis__scripts[b->solo     ? SC_ENTRY_GROUP
                                               : b->n == 1 ? SC_ENTRY
                                                           : SC_ENTRY_BATCH]
                           .file;
    if (err == WR_OK && rep->type == REDIS_REPLY_ERROR && resent_with_groups(s, b, rep))
        return;
    struct cfgctx cc = {.s = s, .queue = b->queue, .snap = b->snap};
    if (err == WR_OK && rep->type == REDIS_REPLY_ERROR) {
        err = log_stale(rep);
        if (err != WR_EUNAVAILABLE)
            wr_warn("store_redis: %s on %s failed: %.*s", file, b->queue,
                    (int)(rep->len > 200 ? 200 : rep->len), rep->str);
    }
    wr_script_reply_batch_t it = {0};
    if (err == WR_OK && b->n > 1 && wr_script_reply_batch_begin(&it, rep, b->n) != WR_OK) {
        wr_warn("store_redis: %s on %s: a reply that is not %zu answers", file, b->queue, b->n);
        err = WR_EPROTO;
    }
    s->busy++;
    struct batch *outer = s->answering;
    s->answering = b;
    while (b->answered < b->n) {
        struct sub *x = &b->sub[b->answered++];
        wr_entry_t entry;
        wr_err_t e = err;
        if (e == WR_OK && b->n == 1) {
            e = wr_script_reply_entry(rep, wr_store_redis__resolve_config, &cc, &entry);
        } else if (e == WR_OK) {
            const redisReply *a;
            e = wr_script_reply_batch_next(&it, &a, wr_store_redis__resolve_config, &cc, &entry);
            if (a && (e = log_stale(a)) != WR_EUNAVAILABLE)
                wr_warn("store_redis: %s on %s failed for one request: %.*s", file, b->queue,
                        (int)(a->len > 200 ? 200 : a->len), a->str);
        }
        x->cb(e, (e == WR_OK || e == WR_EFULL || e == WR_ECODE) ? &entry : NULL, x->arg);
    }
    s->answering = outer;
    wr_store_redis__cfgctx_done(&cc);
    wr_store_redis__batch_free(b);
    wr_store_redis__unbusy(s);
}

/* The one answer of a batch's command (redis_conn). */
static void on_batch_reply(wr_err_t err, const redisReply *rep, void *arg)
{
    struct batch *b = arg;
    if (err == WR_EUNAVAILABLE)
        err = wr_redis_router_shard_err(b->s->conn, err);
    wr_store_redis__answer_batch(b->s, b, err, err == WR_OK ? rep : NULL);
}

/* the arguments below, in the order of their rows (scripts.def) */
WR_ROWS_ORDER(A_ENTRY, USER, VERSION, MODE, PREQ_KEY, LOG_ID, COMMIT_SEED, COMMIT_HASH);
WR_ROWS_ORDER(A_ENTRY_BATCH, VERSION, COMMIT_SEED, COMMIT_HASH);
WR_ROWS_ORDER(A_BATCH_REQ, USER, MODE, PREQ_KEY, LOG_ID);
/* entry_group.lua's: A_ENTRY's in their places (entry.lua reads them), then
 * GROUP and CODE */
#define SAME_ROW(NAME) (WR_ROW(A_ENTRY_GROUP, NAME) == WR_ROW(A_ENTRY, NAME))
_Static_assert(SAME_ROW(USER) && SAME_ROW(VERSION) && SAME_ROW(MODE) && SAME_ROW(PREQ_KEY) &&
                   SAME_ROW(LOG_ID) && SAME_ROW(COMMIT_SEED) && SAME_ROW(COMMIT_HASH) &&
                   WR_ROW(A_ENTRY_GROUP, GROUP) == WR_ROWS_LEN(A_ENTRY) &&
                   WR_ROW(A_ENTRY_GROUP, CODE) == WR_ROWS_LEN(A_ENTRY) + 1 &&
                   WR_ROWS_LEN(A_ENTRY_GROUP) == WR_ROWS_LEN(A_ENTRY) + 2,
               "A_ENTRY_GROUP: A_ENTRY's rows, then GROUP and CODE");

/* Sends b as one script call: entry.lua for one request (the same command
 * as before coalescing), entry_batch.lua for more, entry_group.lua for a
 * join into a group (solo). The group keys and lib_group.lua go along
 * unless the queue's cached config has no groups (b->snap; none cached:
 * they go): a poll of a queue without groups costs Redis nothing more for
 * them (its scripts carry lib_nogroup.lua instead). When that
 * fails, b waits in s->failed for flush_ev to answer it from the loop
 * (this may run inside an operation call). */
static void send_batch(struct rstore *s, struct batch *b)
{
    wr_err_t err = WR_ENOMEM;
    size_t bytes = 512 + 2 * 64 + (NKEYS + 1) * (WR_QUEUE_NAME_MAX + 16);
    /* the opening's commit, for a call that may need it (store_redis_draw.c) */
    char seed[65] = "", hash[65] = "";
    if (b->joins && !wr_store_redis__commit_seed(b->snap, seed, hash)) {
        err = WR_EIO;
        goto fail;
    }
    for (size_t i = 0; i < b->n; i++)
        bytes += strlen(b->sub[i].user) + 4 + 24 + 33 + (b->solo ? 2 * 66 : 0);
    bool one = b->n == 1;
    b->groups = b->solo || !b->snap || b->snap->cfg.n_groups > 0;
    int nkeys = b->groups ? NKEYS : NKEYS_BASE;
    int script = b->solo ? SC_ENTRY_GROUP
                 : one   ? (b->groups ? SC_ENTRY_G : SC_ENTRY)
                         : (b->groups ? SC_ENTRY_BATCH_G : SC_ENTRY_BATCH);
    wr_redis_conn_cmd_t *cmd =
        wr_redis_conn_cmd_new_args(script, 2 + 1 + nkeys + 3 + 2 + 4 * (int)b->n + 1, bytes);
    if (!cmd)
        goto fail;
    unsigned long long known = b->snap ? (unsigned long long)b->snap->version : 0ULL;
    bool ok = wr_store_redis__queue_keys(cmd, b->queue, nkeys);
    if (one)
        ok = ok && wr_redis_conn_cmd_str(cmd, b->sub[0].user) &&
             wr_redis_conn_cmd_u64(cmd, known) && wr_redis_conn_cmd_arg(cmd, &b->sub[0].mode, 1) &&
             wr_redis_conn_cmd_u64(cmd, b->sub[0].key) &&
             wr_redis_conn_cmd_str(cmd, b->sub[0].logid) && wr_redis_conn_cmd_str(cmd, seed) &&
             wr_redis_conn_cmd_str(cmd, hash);
    else
        ok = ok && wr_redis_conn_cmd_u64(cmd, known) && wr_redis_conn_cmd_str(cmd, seed) &&
             wr_redis_conn_cmd_str(cmd, hash);
    if (b->solo) /* (one request: entry.lua's arguments, then these) */
        ok = ok && wr_redis_conn_cmd_str(cmd, b->sub[0].group) &&
             wr_redis_conn_cmd_str(cmd, b->sub[0].code);
    for (size_t i = 0; !one && ok && i < b->n; i++)
        ok = wr_redis_conn_cmd_str(cmd, b->sub[i].user) &&
             wr_redis_conn_cmd_arg(cmd, &b->sub[i].mode, 1) &&
             wr_redis_conn_cmd_u64(cmd, b->sub[i].key) &&
             wr_redis_conn_cmd_str(cmd, b->sub[i].logid);
    if (!ok) {
        wr_redis_conn_cmd_free(cmd);
        err = WR_EINVAL; /* cannot happen: sized above */
        goto fail;
    }
    if (b->joins)
        wr_redis_conn_cmd_wait_strict(cmd);
    err =
        wr_redis_router_submit(s->conn, cmd, b->joins ? wait_after_join : NULL, on_batch_reply, b);
    if (err == WR_OK)
        return;
fail:
    b->err = wr_redis_router_shard_err(s->conn, err);
    blist_push(&s->failed, b);
    event_active(s->flush_ev, EV_TIMEOUT, 1);
}

/* Sends every held batch, in arrival order. */
void wr_store_redis__send_held(struct rstore *s)
{
    struct batch *b;
    while ((b = wr_store_redis__blist_pop(&s->held)) != NULL)
        send_batch(s, b);
}

/* flush_ev: the end of the loop iteration in which batches were held (it
 * was made active after the events already ready in this iteration, and
 * the writes it causes are made active after it, so they leave in this
 * iteration too; see redis_io.c, "Writes"). Also answers the batches whose
 * send failed. */
void wr_store_redis__on_flush(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct rstore *s = arg;
    s->busy++;
    wr_store_redis__send_held(s);
    wr_store_redis__log_salt_load(s);
    struct batch *b;
    while (!s->closing && (b = wr_store_redis__blist_pop(&s->failed)) != NULL)
        wr_store_redis__answer_batch(s, b, b->err, NULL);
    wr_store_redis__unbusy(s);
}

/* The batch a join (join) or status of queue q joins: the last one held
 * for q when it has room (and, in durability mode, holds the same kind),
 * else a new one; a new one alone when solo (a join into a group), which
 * no later request shares. NULL when out of memory. */
static struct batch *batch_for(struct rstore *s, const char *q, bool join, bool solo)
{
    struct batch *last = NULL;
    struct batch *it;
    STAILQ_FOREACH(it, &s->held.q, link)
    {
        if (strcmp(it->queue, q) == 0)
            last = it;
    }
    bool same_kind = s->wait_replicas == 0 || !last || (join ? !last->statuses : !last->joins);
    if (last && last->n < BATCH_MAX && same_kind && !last->solo && !solo) {
        if (last->n == last->cap) {
            size_t cap = last->cap * 2 > BATCH_MAX ? BATCH_MAX : last->cap * 2;
            struct sub *sub = realloc(last->sub, cap * sizeof *sub);
            if (!sub)
                return NULL;
            last->sub = sub;
            last->cap = cap;
        }
        return last;
    }
    if (s->held.n >= HELD_MAX)
        wr_store_redis__send_held(s);
    struct batch *b = batch_new();
    if (!b)
        return NULL;
    b->s = s;
    b->solo = solo;
    wr_strbuf_copy(b->queue, sizeof b->queue, q);
    b->snap = wr_cfgcache_get(s->cache, q);
    blist_push(&s->held, b);
    return b;
}

/* True when h is a presale code's hash as the store keeps it: 64
 * lowercase hex (core/groups.h wr_groups_code_hash). */
static bool code_hash_ok(const char *h)
{
    uint8_t bytes[WR_CODE_HASH_HEX / 2];
    return wr_hex_decode(h, strnlen(h, WR_CODE_HASH_HEX + 1), bytes, sizeof bytes);
}

/* join ("1"), status ("0"), join_page ("2") and status_quiet ("3"),
 * entry.lua's ARGV[3]: held in a batch of queue q, sent at the end of this
 * loop iteration (see "Coalescing"); with j, a join into a group, alone
 * in its batch. */
wr_err_t wr_store_redis__entry(wr_store_t *st, const char *q, const char *u, char mode,
                               const wr_store_join_t *j, wr_store_entry_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    const char *group = j && j->group ? j->group : "",
               *code = j && j->code_hash ? j->code_hash : "";
    if (!wr_ids_valid_queue(q) || !wr_ids_valid_user(u) || !cb ||
        (group[0] && !wr_groups_name_ok(group, strnlen(group, WR_GROUP_NAME_MAX + 1))) ||
        (code[0] && !code_hash_ok(code)))
        return WR_EINVAL;
    if (!wr_redis_router_connected(s->conn))
        return WR_EUNAVAILABLE;
    bool join =
        mode == '0' + WR_ROW_VALUE(M_ENTRY, JOIN) || mode == '0' + WR_ROW_VALUE(M_ENTRY, JOIN_PAGE);
    /* A join carries the pre-queue key it would get in a shuffled
     * pre-queue: below 2^52 (exact in a Redis score), from the CSPRNG. */
    uint64_t key = 0;
    if (join && wr_crypto_random(&key, sizeof key) != WR_OK)
        return WR_EIO;
    /* A join on a queue with publicLog before the store holds the log
     * salts' master (log_key did not answer at start): asked for now, the
     * join answered WR_EUNAVAILABLE meanwhile (store_redis_log.c). */
    if (join && !s->log_master) {
        wr_cfgcache_snap_t *snap = wr_cfgcache_get(s->cache, q);
        bool logged = snap && snap->cfg.public_log;
        wr_cfgcache_release(snap);
        if (logged) {
            wr_store_redis__log_salt_want(s);
            return WR_EUNAVAILABLE;
        }
    }
    struct batch *b = batch_for(s, q, join, j != NULL);
    if (!b)
        return WR_ENOMEM;
    /* the log id of a join on a queue with publicLog, or one not cached
     * yet when the master is there (without it such a join goes without:
     * lib_entry.lua refuses it, WRLOGID, only when the queue keeps a log) */
    char logid[33] = "";
    if (join && s->log_master && (!b->snap || b->snap->cfg.public_log) &&
        wr_store_redis__log_id(s, b, u, logid) != WR_OK)
        return WR_ENOMEM; /* (a new batch stays held, empty: sent as no request) */
    struct sub *x = &b->sub[b->n++];
    x->cb = cb;
    x->arg = arg;
    x->mode = mode;
    x->key = (unsigned long long)(key >> 12);
    wr_strbuf_copy(x->user, sizeof x->user, u);
    memcpy(x->logid, logid, sizeof x->logid);
    wr_strbuf_copy(x->group, sizeof x->group, group);
    wr_strbuf_copy(x->code, sizeof x->code, code);
    if (join)
        b->joins = true;
    else
        b->statuses = true;
    event_active(s->flush_ev, EV_TIMEOUT, 1);
    return WR_OK;
}
