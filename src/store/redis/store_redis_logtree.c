/*
 * store_redis_logtree.c - the Merkle tree of the Redis store's public log
 * and the signer's round (store.h log_unsigned; the module's design is at
 * the top of store_redis_log.c). Part of the store_redis module.
 *
 * Hashing: the leaves past hs, HASH_CHUNK at a time (an HMGET of logl),
 * each appended to the frontier at hs (read once, an HMGET of logh), every
 * subtree it completes stored with hs moved in one log_hashed.lua: a
 * crash between chunks leaves hs at a chunk's end and the hashes before it
 * stored; hashes are deterministic, so two instances hashing the same
 * leaves write the same bytes. A leaf missing below n (a failover lost
 * it) stops the hashing there: the head answers what is hashed, and the
 * checkpoint can never pass it.
 *
 * The round (log_unsigned, once a second from the signer): the registry
 * (wr:logs, a plain SMEMBERS) first; when it names any log, the lease
 * (log_lease.lua: one instance at a time, LEASE_MS), then every log hashed,
 * and the names of those with leaves past their checkpoint (or none yet)
 * answered. A store without logs runs no script for it.
 */
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/crypto.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/tlog.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/store_redis_log_internal.h"

typedef struct {
    wr_redis_conn_cmd_t *cmd;
    bool ok;
    size_t nodes;
} nodes_t;

/* log_hashed.lua's arguments for k leaves: EVALSHA, the SHA, numkeys, two
 * keys, FROM, TO, then a name and a hash per subtree the k appends
 * complete: k leaves and at most k + WR_TLOG_LEVELS nodes above them (each
 * level gains at most k / 2^level + 1). */
#define HASHED_ARGS(k) (7 + 2 * (2 * (k) + WR_TLOG_LEVELS))
_Static_assert(HASHED_ARGS(HASH_CHUNK) <= WR_REDIS_CONN_MAX_ARGS_CAP,
               "a chunk's subtrees fit one command");

static void on_node(void *ctx, unsigned level, uint64_t index, const uint8_t hash[WR_TLOG_HASH])
{
    nodes_t *n = ctx;
    n->ok = n->ok && wr_store_redis__lj_node(n->cmd, level, index) &&
            wr_redis_conn_cmd_arg(n->cmd, (const char *)hash, WR_TLOG_HASH);
    n->nodes++;
}

static void hash_stored(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    (void)rep;
    if (err != WR_OK) {
        wr_store_redis__lj_end(j, err);
        return;
    }
    wr_store_redis__lj_hash(j);
}

/* The leaves [hs, hs + k) read: hashed, their subtrees stored, hs moved
 * (log_hashed.lua: only forward). */
static void hash_leaves(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK && (rep->type != REDIS_REPLY_ARRAY || rep->elements == 0))
        err = WR_EPROTO;
    if (err != WR_OK) {
        wr_store_redis__lj_end(j, err);
        return;
    }
    size_t k = rep->elements;
    struct req *r = wr_store_redis__lj_cmd(j, SC_LOG_HASHED, HASHED_ARGS((int)k),
                                           k * (WR_TLOG_HASH + 48), hash_stored);
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    nodes_t n = {r ? r->cmd : NULL, r != NULL && h != NULL, 0};
    uint64_t from = j->fr.size;
    n.ok = n.ok && wr_redis_conn_cmd_str(r->cmd, "2") &&
           wr_store_redis__lj_key(r->cmd, j->queue, "logh") &&
           wr_store_redis__lj_key(r->cmd, j->queue, "log") &&
           wr_redis_conn_cmd_fmt(r->cmd, "%" PRIu64, from) &&
           wr_redis_conn_cmd_fmt(r->cmd, "%" PRIu64, from + k);
    for (size_t i = 0; n.ok && i < k; i++) {
        const redisReply *e = rep->element[i];
        uint8_t lh[WR_TLOG_HASH];
        if (e->type != REDIS_REPLY_STRING) {
            /* a leaf is missing (lost in a failover): hashing stops here */
            wr_error("store_redis: public log of %s: leaf %" PRIu64 " is missing", j->queue,
                     from + i);
            n.ok = false;
            err = WR_EIO;
            break;
        }
        n.ok = wr_tlog_leaf_hash(h, e->str, e->len, lh) == WR_OK &&
               wr_tlog_frontier_append(h, &j->fr, lh, on_node, &n) == WR_OK && n.ok;
    }
    wr_crypto_sha256_free(h);
    if (!n.ok) {
        if (err == WR_OK)
            wr_error("store_redis: public log of %s: leaves %" PRIu64 "..%" PRIu64
                     " cannot be hashed (%s)",
                     j->queue, from, from + k - 1,
                     r && h ? "the command is too long" : "no memory");
        wr_store_redis__req_free(r);
        /* this log is left for now; the others of the round go on */
        j->fr.size = from;
        j->rounds = HASH_ROUNDS; /* the head answers what is hashed */
        wr_store_redis__lj_hash(j);
        return;
    }
    j->m.hs = from + k;
    wr_store_redis__lj_send(j, r, true);
}

static void hash_frontier(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK)
        err = wr_store_redis__lj_frontier_of(rep, j->m.hs, &j->fr);
    if (err != WR_OK) {
        wr_warn("store_redis: public log of %s: the tree's frontier at %" PRIu64
                " cannot be read (%s)",
                j->queue, j->m.hs, wr_strerror(err));
        j->rounds = HASH_ROUNDS;
        wr_store_redis__lj_hash(j);
        return;
    }
    wr_store_redis__lj_hash(j);
}

/* The next chunk of j's queue, or the next step when it is hashed. */
void wr_store_redis__lj_hash(ljob_t *j)
{
    if (j->m.hs >= j->m.n || j->rounds >= HASH_ROUNDS || j->m.stop) {
        wr_store_redis__lj_hashed(j);
        return;
    }
    if (j->fr.size != j->m.hs) {
        wr_store_redis__lj_frontier(j, j->m.hs, hash_frontier);
        return;
    }
    j->rounds++;
    uint64_t k = j->m.n - j->m.hs < HASH_CHUNK ? j->m.n - j->m.hs : HASH_CHUNK;
    struct req *r =
        wr_store_redis__lj_cmd(j, WR_REDIS_CONN_NO_SCRIPT, 3 + (int)k, k * 24, hash_leaves);
    bool ok = r && wr_redis_conn_cmd_str(r->cmd, "HMGET") &&
              wr_store_redis__lj_key(r->cmd, j->queue, "logl");
    for (uint64_t i = 0; ok && i < k; i++)
        ok = wr_redis_conn_cmd_fmt(r->cmd, "%" PRIu64, j->m.hs + i);
    wr_store_redis__lj_send(j, r, ok);
}

/* ------------------------------------------------------------ unsigned */

/* The next log of the round: its meta, then its hashing. */
void wr_store_redis__lj_next_log(ljob_t *j)
{
    if (j->cur > 0 && !j->stated) {
        /* the log just hashed: signed up to its hashed part? */
        if (j->m.exists && !j->m.stop && (!j->m.has_cp || j->m.cps < j->m.hs))
            j->ptrs[j->n_out++] = j->names[j->cur - 1];
        if (j->m.committed && j->m.has_config && j->m.log_on) {
            j->stated = true; /* its opening's draw (store_redis_draw.c): then here again */
            wr_store_redis__draw_state(j);
            return;
        }
    }
    j->stated = false;
    if (j->cur >= j->n_names) {
        j->ans.names = j->ptrs;
        j->ans.n_names = j->n_out;
        wr_store_redis__lj_end(j, WR_OK);
        return;
    }
    snprintf(j->queue, sizeof j->queue, "%s", j->names[j->cur++]);
    memset(&j->m, 0, sizeof j->m);
    wr_store_redis__lj_send(j, wr_store_redis__lj_meta_cmd(j), true);
}

static void unsigned_lease(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK && rep->type != REDIS_REPLY_INTEGER)
        err = WR_EPROTO;
    if (err != WR_OK || rep->integer != 1) {
        j->n_names = 0; /* another instance holds the lease: nothing for us */
        wr_store_redis__lj_end(j, err);
        return;
    }
    wr_store_redis__lj_next_log(j);
}

/* The registry's names (SMEMBERS wr:logs); then, when there is any log,
 * the lease (log_lease.lua): a store without logs pays one plain read a
 * round, no script. */
static void unsigned_names(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK && rep->type != REDIS_REPLY_ARRAY)
        err = WR_EPROTO;
    if (err != WR_OK) {
        wr_store_redis__lj_end(j, err);
        return;
    }
    size_t n = rep->elements < NAMES_MAX ? rep->elements : NAMES_MAX;
    j->names = calloc(n ? n : 1, sizeof *j->names);
    j->ptrs = calloc(n ? n : 1, sizeof *j->ptrs);
    if (!j->names || !j->ptrs) {
        wr_store_redis__lj_end(j, WR_ENOMEM);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const redisReply *e = rep->element[i];
        if (e->type == REDIS_REPLY_STRING && e->len <= WR_QUEUE_NAME_MAX) {
            memcpy(j->names[j->n_names], e->str, e->len);
            j->names[j->n_names][e->len] = '\0';
            if (wr_ids_valid_queue(j->names[j->n_names]))
                j->n_names++;
        }
    }
    if (j->n_names == 0) {
        wr_store_redis__lj_next_log(j); /* (answers none) */
        return;
    }
    struct req *r = wr_store_redis__lj_cmd(j, SC_LOG_LEASE, 8, 256, unsigned_lease);
    wr_store_redis__lj_send(j, r,
                            r && wr_redis_conn_cmd_str(r->cmd, "1") &&
                                wr_redis_conn_cmd_str(r->cmd, j->s->keys->loglease) &&
                                wr_redis_conn_cmd_str(r->cmd, j->s->instance) &&
                                wr_redis_conn_cmd_fmt(r->cmd, "%d", LEASE_MS));
}

wr_err_t wr_store_redis__log_unsigned(wr_store_t *st, wr_store_log_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!cb)
        return WR_EINVAL;
    if (!wr_redis_router_connected(s->conn))
        return WR_EUNAVAILABLE;
    ljob_t *j = wr_store_redis__lj_new(s, J_UNSIGNED, NULL, cb, arg);
    if (!j)
        return WR_ENOMEM;
    struct req *r = wr_store_redis__lj_cmd(j, WR_REDIS_CONN_NO_SCRIPT, 4, 128, unsigned_names);
    bool ok = r && wr_redis_conn_cmd_str(r->cmd, "SMEMBERS") &&
              wr_redis_conn_cmd_str(r->cmd, s->keys->logs);
    return wr_store_redis__lj_start(j, r, ok);
}
