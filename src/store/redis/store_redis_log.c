/*
 * store_redis_log.c - the public log's operations of the Redis store
 * (store.h log_key, log_head, log_read, log_publish, log_unsigned;
 * docs/API.md 1.3, "A line anyone can check"). Part of the store_redis
 * module; what the files share is store_redis_internal.h.
 *
 * The leaves are appended by the queue scripts themselves, in the same
 * script as the change each records (scripts/lib_log.lua): that is what
 * makes the log's order the store's order on every instance. Lua in Redis
 * has no SHA-256, so the Merkle tree (RFC 9162, base/tlog.h) is kept here:
 *
 *   wr:{q}:log   HASH n (leaves), at, hs (leaves hashed so far), and the
 *                latest checkpoint: cp (the signed note), cps (its size),
 *                cpr (its root, 32 bytes), stop ('1': broken or forked,
 *                never signed again)
 *   wr:{q}:logl  HASH index -> leaf bytes (lib_log.lua)
 *   wr:{q}:logh  HASH "<level>:<index>" -> the hash of the complete
 *                subtree at (level, index), 32 bytes (tlog.h): a proof
 *                reads O(log n) of them
 *   wr:logs      SET the queues that ever had publicLog (config_put adds
 *                them: a deleted queue's log is still signed and read)
 *   wr:loglease  STRING the id of the instance that hashes and signs,
 *                PX LEASE_MS: one signer per cluster at a time
 *   wr:logkey, wr:logsalt  the signing key's seed and the master of the
 *                queues' log salts (first writer wins, like the token
 *                secret); on a cluster all of these carry {.global}
 *
 * Hashing is the lease holder's, once a round (log_unsigned, called by
 * the signer once a second): for each log it reads the leaves past hs and
 * the frontier at hs, hashes them (HASH_CHUNK leaves a command), stores
 * every subtree they complete and moves hs; hashes are deterministic, so
 * a second instance that did the same (a lease that changed hands
 * meanwhile) writes the same bytes. log_head answers the hashed part:
 * size hs, its root from the frontier at hs (at most 64 reads), and
 * checks the kept checkpoint against the stored hashes (forked) and the
 * leaves (broken: fewer than it covers, e.g. a failover lost writes).
 *
 * Each operation is a job of a few commands in sequence (op OP_LOG, the
 * job in the request's arg); its callback is called exactly once, after
 * the last, or never when the call returned an error.
 *
 * The log id of a person (lib_log.lua's u): the first 16 bytes of
 * HMAC-SHA-256(salt, user) with the queue's salt HMAC-SHA-256(master,
 * "waitroom log salt/" || queue): a queue created again under its name
 * goes on with the same ids, as its log goes on.
 */
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/crypto.h"
#include "base/hex.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/tlog.h"
#include "core/logleaf.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/store_redis_log_internal.h"

/* ------------------------------------------------------------ plumbing */

void wr_store_redis__lj_free(ljob_t *j)
{
    if (!j)
        return;
    free(j->leaves);
    free(j->hashes);
    free(j->names);
    free(j->ptrs);
    wr_store_redis__draw_free(j);
    free(j);
}

/* Answers j's caller (exactly once) and frees j. */
void wr_store_redis__lj_end(ljob_t *j, wr_err_t err)
{
    wr_store_log_cb cb = j->cb;
    void *arg = j->arg;
    wr_log_answer_t ans = j->ans;
    /* the answer's pointers into j stay valid through the callback */
    if (cb) /* (none: the store's own salt load) */
        cb(err, err == WR_OK || err == WR_EINVAL ? &ans : NULL, arg);
    wr_store_redis__lj_free(j);
}

/* A command of j (argc at most max_args) whose reply goes to next. */
struct req *wr_store_redis__lj_cmd(ljob_t *j, int script, int max_args, size_t extra,
                                   wr_store_redis__lj_step next)
{
    struct req *r = wr_store_redis__req_new_args(j->s, OP_LOG, script, max_args, extra, j);
    if (r) {
        j->next = next;
        snprintf(r->queue, sizeof r->queue, "%s", j->queue);
    }
    return r;
}

/* Sends r (built when ok); on failure the job ends with the error. */
void wr_store_redis__lj_send(ljob_t *j, struct req *r, bool ok)
{
    wr_err_t err = r ? wr_store_redis__submit(j->s, r, ok) : WR_ENOMEM;
    if (err != WR_OK)
        wr_store_redis__lj_end(j, err);
}

void wr_store_redis__log_reply(struct req *r, wr_err_t err, const redisReply *rep)
{
    ljob_t *j = r->arg;
    if (err == WR_OK && rep && rep->type == REDIS_REPLY_ERROR) {
        wr_warn("store_redis: public log of %s: %.*s", j->queue[0] ? j->queue : "(all)",
                (int)(rep->len > 200 ? 200 : rep->len), rep->str);
        err = wr_store_redis__reply_err(rep);
    }
    j->next(j, err, err == WR_OK ? rep : NULL);
}

bool wr_store_redis__lj_key(wr_redis_conn_cmd_t *c, const char *q, const char *suffix)
{
    return wr_redis_conn_cmd_fmt(c, "wr:{%s}:%s", q, suffix);
}

bool wr_store_redis__lj_node(wr_redis_conn_cmd_t *c, unsigned level, uint64_t index)
{
    return wr_redis_conn_cmd_fmt(c, "%u:%" PRIu64, level, index);
}

static bool str_u64(const redisReply *e, uint64_t *out)
{
    if (!e || e->type != REDIS_REPLY_STRING || e->len == 0 || e->len > 20)
        return false;
    char buf[24];
    memcpy(buf, e->str, e->len);
    buf[e->len] = '\0';
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    if (*end != '\0')
        return false;
    *out = v;
    return true;
}

/* ------------------------------------------------------------ the salt */

static void key_done(ljob_t *j, wr_err_t err, const redisReply *rep);

/* The store's own load of the salt master (log_key.lua without a key),
 * asked for by wr_store_redis__log_salt_want and sent from the flush event
 * (never from inside an operation: it would send the batches held so far
 * ahead of it). The app's log_key at start does the same; this is for a
 * store that was not reachable then. */
void wr_store_redis__log_salt_want(struct rstore *s)
{
    s->salt_wanted = true;
    event_active(s->flush_ev, EV_TIMEOUT, 1);
}

/* log_key.lua with proposed (NULL: the salt master alone) and a fresh
 * salt master, answered to cb (NULL: the store's own load). WR_OK, or the
 * error with nothing sent. */
static wr_err_t key_start(struct rstore *s, const uint8_t *proposed, wr_store_log_cb cb, void *arg)
{
    ljob_t *j = wr_store_redis__lj_new(s, J_KEY, NULL, cb, arg);
    if (!j)
        return WR_ENOMEM;
    if (proposed)
        memcpy(j->proposed, proposed, 32);
    if (wr_crypto_random(j->salt, sizeof j->salt) != WR_OK) {
        wr_store_redis__lj_free(j);
        return WR_EIO;
    }
    struct req *r = wr_store_redis__lj_cmd(j, SC_LOG_KEY, 8, 256, key_done);
    bool ok = r && wr_redis_conn_cmd_str(r->cmd, "2") &&
              wr_redis_conn_cmd_str(r->cmd, s->keys->logkey) &&
              wr_redis_conn_cmd_str(r->cmd, s->keys->logsalt) &&
              (proposed ? wr_redis_conn_cmd_arg(r->cmd, (const char *)j->proposed, 32)
                        : wr_redis_conn_cmd_str(r->cmd, "")) &&
              wr_redis_conn_cmd_arg(r->cmd, (const char *)j->salt, 32);
    return wr_store_redis__lj_start(j, r, ok);
}

void wr_store_redis__log_salt_load(struct rstore *s)
{
    if (!s->salt_wanted || s->log_master || s->salt_loading || !wr_redis_router_connected(s->conn))
        return;
    s->salt_wanted = false;
    s->salt_loading = key_start(s, NULL, NULL, NULL) == WR_OK;
}

bool wr_store_redis_log_ready(wr_store_t *st)
{
    struct rstore *s = (struct rstore *)st;
    if (!s->log_master)
        wr_store_redis__log_salt_want(s);
    return s->log_master != NULL;
}

wr_err_t wr_store_redis__log_id(struct rstore *s, struct batch *b, const char *user,
                                char out[WR_LOGLEAF_U_HEX + 1])
{
    out[0] = '\0';
    if (!s->log_master)
        return WR_EUNAVAILABLE;
    if (!b->logmac) {
        uint8_t salt[WR_CRYPTO_MAC_LEN];
        char label[WR_QUEUE_NAME_MAX + 32];
        int n = snprintf(label, sizeof label, "waitroom log salt/%s", b->queue);
        wr_err_t err = wr_crypto_hmac_mac(s->log_master, label, (size_t)n, salt);
        if (err == WR_OK && !(b->logmac = wr_crypto_hmac_new(salt, sizeof salt)))
            err = WR_ENOMEM;
        wr_crypto_wipe(salt, sizeof salt);
        if (err != WR_OK)
            return err;
    }
    uint8_t mac[WR_CRYPTO_MAC_LEN];
    wr_err_t err = wr_crypto_hmac_mac(b->logmac, user, strlen(user), mac);
    if (err == WR_OK)
        wr_hex_encode(mac, WR_LOGLEAF_U_BYTES, out);
    return err;
}

/* ------------------------------------------------------------ log_key */

/* log_key.lua's answer: the key (for log_key's caller; none for the salt
 * load, whose job has no callback) and the salt master, kept. */
static void key_done(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    bool want_key = j->cb != NULL;
    if (err == WR_OK && (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
                         (want_key && (rep->element[0]->type != REDIS_REPLY_STRING ||
                                       rep->element[0]->len != 32)) ||
                         rep->element[1]->type != REDIS_REPLY_STRING || rep->element[1]->len != 32))
        err = WR_EPROTO;
    if (err == WR_OK) {
        if (want_key)
            memcpy(j->ans.key, rep->element[0]->str, 32);
        wr_crypto_hmac_t *m = wr_crypto_hmac_new((const uint8_t *)rep->element[1]->str, 32);
        if (!m) {
            err = WR_ENOMEM;
        } else {
            wr_crypto_hmac_free(j->s->log_master);
            j->s->log_master = m;
        }
    }
    if (!want_key)
        j->s->salt_loading = false;
    wr_crypto_wipe(j->proposed, sizeof j->proposed);
    wr_crypto_wipe(j->salt, sizeof j->salt);
    wr_store_redis__lj_end(j, err);
}

/* ------------------------------------------------------------ jobs */

ljob_t *wr_store_redis__lj_new(struct rstore *s, jkind_t kind, const char *queue,
                               wr_store_log_cb cb, void *arg)
{
    ljob_t *j = malloc(sizeof *j);
    if (j) {
        *j = (ljob_t){.s = s, .kind = kind, .cb = cb, .arg = arg};
        snprintf(j->queue, sizeof j->queue, "%s", queue ? queue : "");
    }
    return j;
}

/* Sends j's first command (built by build); WR_OK or the error with
 * nothing called (the async contract: the caller gets it back). */
wr_err_t wr_store_redis__lj_start(ljob_t *j, struct req *r, bool ok)
{
    if (!r) {
        wr_store_redis__lj_free(j);
        return WR_ENOMEM;
    }
    wr_err_t err = wr_store_redis__submit(j->s, r, ok);
    if (err != WR_OK)
        wr_store_redis__lj_free(j);
    return err;
}

wr_err_t wr_store_redis__log_key(wr_store_t *st, const uint8_t proposed[32], wr_store_log_cb cb,
                                 void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!proposed || !cb)
        return WR_EINVAL;
    if (!wr_redis_router_connected(s->conn))
        return WR_EUNAVAILABLE;
    return key_start(s, proposed, cb, arg);
}

/* ------------------------------------------------------------ the head */

static void head_meta(ljob_t *j, wr_err_t err, const redisReply *rep);
static void head_root(ljob_t *j, wr_err_t err, const redisReply *rep);

/* The meta of j's queue (head_meta answers). */
struct req *wr_store_redis__lj_meta_cmd(ljob_t *j)
{
    struct req *r = wr_store_redis__lj_cmd(j, SC_LOG_HEAD, 8, 256, head_meta);
    if (r && !(wr_redis_conn_cmd_str(r->cmd, "2") &&
               wr_store_redis__lj_key(r->cmd, j->queue, "config") &&
               wr_store_redis__lj_key(r->cmd, j->queue, "log"))) {
        wr_store_redis__req_free(r);
        return NULL;
    }
    return r;
}

/* An HMGET of logh for the frontier of a tree of size leaves (one node a
 * set bit), whose reply goes to next. */
static struct req *frontier_cmd(ljob_t *j, uint64_t size, wr_store_redis__lj_step next)
{
    struct req *r =
        wr_store_redis__lj_cmd(j, WR_REDIS_CONN_NO_SCRIPT, 3 + WR_TLOG_LEVELS, 64 * 24, next);
    bool ok = r && wr_redis_conn_cmd_str(r->cmd, "HMGET") &&
              wr_store_redis__lj_key(r->cmd, j->queue, "logh");
    for (unsigned l = 0; ok && l < WR_TLOG_LEVELS; l++)
        if (size >> l & 1)
            ok = wr_store_redis__lj_node(r->cmd, l, (size >> l) - 1);
    if (r && !ok) {
        wr_store_redis__req_free(r);
        return NULL;
    }
    return r;
}

/* Asks for the frontier of size leaves, answered to next; the empty tree
 * needs no command (next gets no reply). */
void wr_store_redis__lj_frontier(ljob_t *j, uint64_t size, wr_store_redis__lj_step next)
{
    if (size == 0) {
        next(j, WR_OK, NULL);
        return;
    }
    wr_store_redis__lj_send(j, frontier_cmd(j, size, next), true);
}

/* The frontier of size leaves from frontier_cmd's reply (NULL: size 0). */
wr_err_t wr_store_redis__lj_frontier_of(const redisReply *rep, uint64_t size, wr_tlog_frontier_t *f)
{
    wr_tlog_frontier_init(f);
    f->size = size;
    size_t k = 0;
    if (size == 0)
        return WR_OK;
    if (!rep || rep->type != REDIS_REPLY_ARRAY)
        return WR_EPROTO;
    for (unsigned l = 0; l < WR_TLOG_LEVELS; l++) {
        if (!(size >> l & 1))
            continue;
        const redisReply *e = k < rep->elements ? rep->element[k] : NULL;
        k++;
        if (!e || e->type != REDIS_REPLY_STRING || e->len != WR_TLOG_HASH)
            return WR_ENOTFOUND; /* a hash the log lacks */
        memcpy(f->hash[l], e->str, WR_TLOG_HASH);
    }
    return k == rep->elements ? WR_OK : WR_EPROTO;
}

static wr_err_t root_of(const wr_tlog_frontier_t *f, uint8_t out[WR_TLOG_HASH])
{
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    if (!h)
        return WR_ENOMEM;
    wr_err_t err = wr_tlog_frontier_root(h, f, out);
    wr_crypto_sha256_free(h);
    return err;
}

/* Reads log_head.lua's reply into j->m: config exists, log flag, n, hs,
 * cp, cps, cpr, stop, committed. */
static wr_err_t meta_of(const redisReply *rep, meta_t *m)
{
    memset(m, 0, sizeof *m);
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 9)
        return WR_EPROTO;
    redisReply *const *e = rep->element;
    m->has_config = e[0]->type == REDIS_REPLY_INTEGER && e[0]->integer == 1;
    m->log_on = e[1]->type == REDIS_REPLY_STRING && e[1]->len == 1 && e[1]->str[0] == '1';
    m->exists = str_u64(e[2], &m->n) || (m->has_config && m->log_on);
    if (!str_u64(e[3], &m->hs))
        m->hs = 0;
    if (e[4]->type == REDIS_REPLY_STRING && e[4]->len > 0 && e[4]->len < CP_MAX &&
        str_u64(e[5], &m->cps) && e[6]->type == REDIS_REPLY_STRING && e[6]->len == WR_TLOG_HASH) {
        m->has_cp = true;
        memcpy(m->cp, e[4]->str, e[4]->len);
        m->cp_len = e[4]->len;
        memcpy(m->cpr, e[6]->str, WR_TLOG_HASH);
        m->exists = true;
    }
    m->stop = e[7]->type == REDIS_REPLY_STRING && e[7]->len == 1 && e[7]->str[0] == '1';
    m->committed = e[8]->type == REDIS_REPLY_INTEGER && e[8]->integer == 1;
    if (m->hs > m->n)
        m->hs = m->n; /* leaves lost after they were hashed: what is left */
    return WR_OK;
}

/* The steps after the head (by kind), with j->ans filled. */
static void after_head(ljob_t *j);

/* Marks j's log stopped (broken or forked), then goes on. */
static void stopped(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    (void)err;
    (void)rep;
    after_head(j);
}

static void head_fill(ljob_t *j)
{
    wr_log_answer_t *a = &j->ans;
    a->size = j->m.hs;
    a->enabled = j->m.has_config && j->m.log_on;
    memcpy(a->root, j->root, WR_TLOG_HASH);
    if (j->m.has_cp) {
        a->checkpoint = j->m.cp;
        a->checkpoint_len = j->m.cp_len;
        a->checkpoint_size = j->m.cps;
    }
    a->broken = j->m.has_cp && j->m.cps > j->m.n;
}

/* The head is known (root and forked); a log seen broken or forked is
 * marked so that it is never signed again. */
static void head_done(ljob_t *j)
{
    head_fill(j);
    if ((j->ans.broken || j->ans.forked) && !j->m.stop) {
        j->m.stop = true;
        struct req *r = wr_store_redis__lj_cmd(j, WR_REDIS_CONN_NO_SCRIPT, 8, 128, stopped);
        wr_store_redis__lj_send(j, r,
                                r && wr_redis_conn_cmd_str(r->cmd, "HSET") &&
                                    wr_store_redis__lj_key(r->cmd, j->queue, "log") &&
                                    wr_redis_conn_cmd_str(r->cmd, "stop") &&
                                    wr_redis_conn_cmd_str(r->cmd, "1"));
        return;
    }
    after_head(j);
}

/* The root at the checkpoint's size, against the one it signed. */
static void head_forked(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    wr_tlog_frontier_t f;
    uint8_t root[WR_TLOG_HASH];
    if (err == WR_OK)
        err = wr_store_redis__lj_frontier_of(rep, j->m.cps, &f);
    if (err == WR_OK)
        err = root_of(&f, root);
    if (err == WR_ENOTFOUND) {
        j->ans.forked = true; /* its subtrees are gone */
    } else if (err != WR_OK) {
        wr_store_redis__lj_end(j, err);
        return;
    } else {
        j->ans.forked = memcmp(root, j->m.cpr, WR_TLOG_HASH) != 0;
    }
    head_done(j);
}

static void head_root(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK)
        err = wr_store_redis__lj_frontier_of(rep, j->m.hs, &j->fr);
    if (err == WR_OK)
        err = root_of(&j->fr, j->root);
    if (err != WR_OK) {
        wr_store_redis__lj_end(j, err);
        return;
    }
    if (j->m.has_cp && j->m.cps < j->m.hs) {
        wr_store_redis__lj_frontier(j, j->m.cps, head_forked);
        return;
    }
    if (j->m.has_cp && j->m.cps == j->m.hs)
        j->ans.forked = memcmp(j->root, j->m.cpr, WR_TLOG_HASH) != 0;
    head_done(j);
}

static void publish_root(ljob_t *j, wr_err_t err, const redisReply *rep);

/* The leaves are hashed (as far as one call goes): what j's kind does
 * with the head. */
void wr_store_redis__lj_hashed(ljob_t *j)
{
    switch (j->kind) {
    case J_UNSIGNED:
        wr_store_redis__lj_next_log(j);
        return;
    case J_READ: /* the bounds need the size alone */
        head_fill(j);
        after_head(j);
        return;
    case J_PUBLISH:
        head_fill(j);
        if (j->p_size < (j->m.has_cp ? j->m.cps : 0) || j->p_size > j->m.hs || j->m.stop) {
            wr_store_redis__lj_end(j, WR_EINVAL); /* refused: the head as it is */
            return;
        }
        wr_store_redis__lj_frontier(j, j->p_size, publish_root);
        return;
    default:
        break;
    }
    if (j->m.has_cp && j->m.cps == j->m.hs) {
        memcpy(j->root, j->m.cpr, WR_TLOG_HASH); /* signed already: its root */
        head_done(j);
        return;
    }
    wr_store_redis__lj_frontier(j, j->m.hs, head_root);
}

static void head_meta(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK)
        err = meta_of(rep, &j->m);
    /* no log to show: never had one, or the queue exists with publicLog off */
    bool none = err == WR_OK && (!j->m.exists || (j->m.has_config && !j->m.log_on));
    if (j->kind == J_UNSIGNED && (err != WR_OK || none)) {
        wr_store_redis__lj_next_log(
            j); /* (a log that cannot be read now waits for the next round) */
        return;
    }
    if (none)
        err = WR_ENOTFOUND;
    if (err != WR_OK) {
        wr_store_redis__lj_end(j, err);
        return;
    }
    wr_tlog_frontier_init(&j->fr);
    j->fr.size = UINT64_MAX; /* not loaded */
    j->rounds = 0;
    wr_store_redis__lj_hash(j); /* the leaves not hashed yet first */
}

/* ------------------------------------------------------------ head, read, publish */

static void read_done(ljob_t *j, wr_err_t err, const redisReply *rep);
static void after_head(ljob_t *j);

/* The checkpoint kept (log_publish.lua: 1) or refused (0, another one
 * is newer or the log is stopped): then the head after, as the answer. */
static void publish_done(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK && rep->type != REDIS_REPLY_INTEGER)
        err = WR_EPROTO;
    if (err != WR_OK) {
        wr_store_redis__lj_end(j, err);
        return;
    }
    j->refused = rep->integer != 1;
    j->kind = J_HEAD;
    j->ans = (wr_log_answer_t){0};
    wr_store_redis__lj_send(j, wr_store_redis__lj_meta_cmd(j), true);
}

/* The root of the first p_size leaves, against the one to publish. */
static void publish_root(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    wr_tlog_frontier_t f;
    uint8_t root[WR_TLOG_HASH];
    if (err == WR_OK)
        err = wr_store_redis__lj_frontier_of(rep, j->p_size, &f);
    if (err == WR_OK)
        err = root_of(&f, root);
    if (err == WR_ENOTFOUND || (err == WR_OK && memcmp(root, j->p_root, WR_TLOG_HASH) != 0)) {
        wr_store_redis__lj_end(j, WR_EINVAL); /* not the root of those leaves: the head as it is */
        return;
    }
    if (err != WR_OK) {
        wr_store_redis__lj_end(j, err);
        return;
    }
    struct req *r = wr_store_redis__lj_cmd(j, SC_LOG_PUBLISH, 8, j->note_len + 128, publish_done);
    wr_store_redis__lj_send(
        j, r,
        r && wr_redis_conn_cmd_str(r->cmd, "1") &&
            wr_store_redis__lj_key(r->cmd, j->queue, "log") &&
            wr_redis_conn_cmd_fmt(r->cmd, "%" PRIu64, j->p_size) &&
            wr_redis_conn_cmd_arg(r->cmd, j->note, j->note_len) &&
            wr_redis_conn_cmd_arg(r->cmd, (const char *)j->p_root, WR_TLOG_HASH));
}

static void after_head(ljob_t *j)
{
    if (j->kind != J_READ) {
        wr_store_redis__lj_end(j,
                               j->refused ? WR_EINVAL : WR_OK); /* J_HEAD (also after a publish) */
        return;
    }
    const wr_log_read_t *q = &j->rd;
    if (q->end < q->start || q->end > j->m.hs || q->end - q->start > 1000 ||
        q->n_nodes > WR_LOG_NODES_MAX) {
        wr_store_redis__lj_end(j, WR_EINVAL);
        return;
    }
    size_t nl = (size_t)(q->end - q->start);
    if (nl + q->n_nodes == 0) {
        read_done(j, WR_OK, NULL);
        return;
    }
    struct req *r = wr_store_redis__lj_cmd(j, SC_LOG_READ, 8 + (int)(nl + q->n_nodes),
                                           (nl + q->n_nodes) * 32 + 256, read_done);
    bool ok = r && wr_redis_conn_cmd_str(r->cmd, "2") &&
              wr_store_redis__lj_key(r->cmd, j->queue, "logl") &&
              wr_store_redis__lj_key(r->cmd, j->queue, "logh") &&
              wr_redis_conn_cmd_fmt(r->cmd, "%zu", nl);
    for (uint64_t i = q->start; ok && i < q->end; i++)
        ok = wr_redis_conn_cmd_fmt(r->cmd, "%" PRIu64, i);
    for (size_t i = 0; ok && i < q->n_nodes; i++)
        ok = q->level[i] < WR_TLOG_LEVELS && (j->m.hs >> q->level[i]) > q->index[i] &&
             wr_store_redis__lj_node(r->cmd, q->level[i], q->index[i]);
    if (!ok) {
        wr_store_redis__req_free(r);
        wr_store_redis__lj_end(j, r ? WR_EINVAL : WR_ENOMEM);
        return;
    }
    wr_store_redis__lj_send(j, r, true);
}

static void read_done(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    const wr_log_read_t *q = &j->rd;
    size_t nl = (size_t)(q->end - q->start);
    if (err == WR_OK && nl + q->n_nodes > 0 &&
        (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != nl + q->n_nodes))
        err = WR_EPROTO;
    size_t total = 1;
    for (size_t i = 0; err == WR_OK && i < nl; i++) {
        const redisReply *e = rep->element[i];
        if (e->type != REDIS_REPLY_STRING)
            err = WR_EIO; /* a leaf below the hashed size is gone */
        else
            total += e->len + 1;
    }
    if (err == WR_OK &&
        (!(j->leaves = malloc(total)) || !(j->hashes = calloc(q->n_nodes + 1, sizeof *j->hashes))))
        err = WR_ENOMEM;
    size_t at = 0;
    for (size_t i = 0; err == WR_OK && i < nl; i++) {
        const redisReply *e = rep->element[i];
        memcpy(j->leaves + at, e->str, e->len);
        at += e->len;
        j->leaves[at++] = '\n';
    }
    for (size_t i = 0; err == WR_OK && i < q->n_nodes; i++) {
        const redisReply *e = rep->element[nl + i];
        if (e->type != REDIS_REPLY_STRING || e->len != WR_TLOG_HASH)
            err = WR_EINVAL;
        else
            memcpy(j->hashes[i], e->str, WR_TLOG_HASH);
    }
    if (err == WR_OK) {
        j->ans.leaves = j->leaves;
        j->ans.leaves_len = at;
        j->ans.hashes = (const uint8_t(*)[32])j->hashes;
        j->ans.n_hashes = q->n_nodes;
    }
    wr_store_redis__lj_end(j, err);
}

static wr_err_t start_head(struct rstore *s, ljob_t *j)
{
    if (!wr_redis_router_connected(s->conn)) {
        wr_store_redis__lj_free(j);
        return WR_EUNAVAILABLE;
    }
    return wr_store_redis__lj_start(j, wr_store_redis__lj_meta_cmd(j), true);
}

wr_err_t wr_store_redis__log_head(wr_store_t *st, const char *queue, wr_store_log_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(queue) || !cb)
        return WR_EINVAL;
    ljob_t *j = wr_store_redis__lj_new(s, J_HEAD, queue, cb, arg);
    return j ? start_head(s, j) : WR_ENOMEM;
}

wr_err_t wr_store_redis__log_read(wr_store_t *st, const char *queue, const wr_log_read_t *req,
                                  wr_store_log_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(queue) || !req || !cb)
        return WR_EINVAL;
    ljob_t *j = wr_store_redis__lj_new(s, J_READ, queue, cb, arg);
    if (!j)
        return WR_ENOMEM;
    j->rd = *req;
    return start_head(s, j);
}

wr_err_t wr_store_redis__log_publish(wr_store_t *st, const char *queue, uint64_t size,
                                     const uint8_t root[32], const char *note, size_t len,
                                     wr_store_log_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(queue) || !root || !note || len == 0 || len >= CP_MAX || !cb)
        return WR_EINVAL;
    ljob_t *j = wr_store_redis__lj_new(s, J_PUBLISH, queue, cb, arg);
    if (!j)
        return WR_ENOMEM;
    j->p_size = size;
    memcpy(j->p_root, root, WR_TLOG_HASH);
    memcpy(j->note, note, len);
    j->note_len = len;
    return start_head(s, j);
}
