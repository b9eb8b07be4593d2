/*
 * store_memory_log.c - the public log's operations of the embedded store
 * (store.h log_key, log_head, log_read, log_publish, log_unsigned) on the
 * logs the db keeps (memq_log.c, memlog.h). Each computes its answer at
 * once and defers it like every other operation (the async contract).
 *
 * A log is shown while its queue exists with publicLog on, or when its
 * queue is gone (a deleted queue's log stays readable); a queue that
 * exists with publicLog off shows none (WR_ENOTFOUND).
 */
#include <stdlib.h>
#include <string.h>

#include "base/ids.h"
#include "store/memory/memlog.h"
#include "store/memory/store_memory_internal.h"

void wr_store_memory__log_res_free(wr_store_memory__log_res_t *r)
{
    if (!r)
        return;
    free(r->leaves);
    free(r->hashes);
    free(r->names);
    free(r->name_ptrs);
    free(r->bq);
    free(r->burl);
    free(r->bq_ptrs);
    free(r->burl_ptrs);
    free(r->brounds);
    free(r);
}

/* The start of a log operation: op_begin's checks (closing, cb, args_ok),
 * before any work, then its answer's record (*r, with want_res). WR_OK,
 * or the error with nothing begun. */
static wr_err_t begin(mstore_t *s, wr_store_log_cb cb, void *arg, bool args_ok, bool want_res,
                      item_t **it, wr_store_memory__log_res_t **r)
{
    wr_err_t err =
        wr_store_memory__op_begin(s, (wr_store_cb_t){.log = cb}, args_ok, D_LOG, arg, it);
    if (err != WR_OK)
        return err;
    *r = want_res ? calloc(1, sizeof **r) : NULL;
    if (want_res && !*r) {
        wr_store_memory__item_release(s, *it);
        return WR_ENOMEM;
    }
    return WR_OK;
}

wr_err_t wr_store_memory__log_key(wr_store_t *base, const uint8_t proposed[32], wr_store_log_cb cb,
                                  void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_store_memory__log_res_t *r;
    wr_err_t err = begin(s, cb, arg, proposed != NULL, true, &it, &r);
    if (err != WR_OK)
        return err;
    if (!s->db.has_log_key) {
        memcpy(s->db.log_key, proposed, 32);
        s->db.has_log_key = true;
        s->dirty = true;
    }
    memcpy(r->ans.key, s->db.log_key, 32);
    wr_store_memory__log_answer(s, it, WR_OK, r);
    return WR_OK;
}

/* The log of queue to show, or NULL (WR_ENOTFOUND); *enabled: its queue
 * exists with publicLog on. */
static wr_memlog_t *shown(mstore_t *s, const char *queue, bool *enabled)
{
    wr_memlog_t *l = wr_memq_db_log(&s->db, queue);
    wr_memq_t *q = wr_memq_db_find(&s->db, queue);
    *enabled = q && q->log;
    if (q && !q->log)
        return NULL;
    return l;
}

/* Fills the head of l into r. */
static void head(wr_memlog_t *l, bool enabled, wr_store_memory__log_res_t *r)
{
    wr_log_answer_t *a = &r->ans;
    a->size = wr_memlog_size(l);
    a->enabled = enabled;
    (void)wr_memlog_root(l, a->root);
    if (l->cp_len > 0) {
        memcpy(r->cp, l->cp, l->cp_len);
        a->checkpoint = r->cp;
        a->checkpoint_len = l->cp_len;
    }
    a->checkpoint_size = l->cp_size;
    a->broken = l->cp_size > a->size;
    if (!a->broken && l->cp_len > 0) {
        uint8_t root[32];
        wr_tlog_reader_t rd = wr_memlog_reader(l);
        a->forked = wr_tlog_root_at(l->h, &rd, l->cp_size, root) != WR_OK ||
                    memcmp(root, l->cp_root, 32) != 0;
    }
    if (a->broken || a->forked)
        l->stopped = true; /* never signed again: log_unsigned leaves it out */
}

wr_err_t wr_store_memory__log_head(wr_store_t *base, const char *queue, wr_store_log_cb cb,
                                   void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_store_memory__log_res_t *r;
    wr_err_t err = begin(s, cb, arg, wr_ids_valid_queue(queue), true, &it, &r);
    if (err != WR_OK)
        return err;
    bool enabled;
    wr_memlog_t *l = shown(s, queue, &enabled);
    if (l) {
        head(l, enabled, r);
    } else {
        wr_store_memory__log_res_free(r);
        r = NULL;
    }
    wr_store_memory__log_answer(s, it, l ? WR_OK : WR_ENOTFOUND, r);
    return WR_OK;
}

/* Copies req's leaves and hashes of l into r: WR_OK, WR_EINVAL (past the
 * log), WR_ENOMEM. */
static wr_err_t read_into(wr_memlog_t *l, const wr_log_read_t *req, wr_store_memory__log_res_t *r)
{
    uint64_t n = wr_memlog_size(l);
    if (req->end < req->start || req->end > n || req->end - req->start > 1000 ||
        req->n_nodes > WR_LOG_NODES_MAX)
        return WR_EINVAL;
    size_t total = 0, len;
    for (uint64_t i = req->start; i < req->end; i++) {
        (void)wr_memlog_leaf(l, i, &len);
        total += len + 1;
    }
    r->leaves = malloc(total + 1);
    r->hashes = malloc((req->n_nodes + 1) * sizeof *r->hashes);
    if (!r->leaves || !r->hashes)
        return WR_ENOMEM;
    size_t at = 0;
    for (uint64_t i = req->start; i < req->end; i++) {
        const char *leaf = wr_memlog_leaf(l, i, &len);
        memcpy(r->leaves + at, leaf, len);
        at += len;
        r->leaves[at++] = '\n';
    }
    r->ans.leaves = r->leaves;
    r->ans.leaves_len = at;
    wr_tlog_reader_t rd = wr_memlog_reader(l);
    for (size_t i = 0; i < req->n_nodes; i++)
        if (rd.read(rd.ctx, req->level[i], req->index[i], r->hashes[i]) != WR_OK)
            return WR_EINVAL;
    r->ans.hashes = (const uint8_t(*)[32])r->hashes;
    r->ans.n_hashes = req->n_nodes;
    return WR_OK;
}

wr_err_t wr_store_memory__log_read(wr_store_t *base, const char *queue, const wr_log_read_t *req,
                                   wr_store_log_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_store_memory__log_res_t *r;
    wr_err_t err = begin(s, cb, arg, wr_ids_valid_queue(queue) && req, true, &it, &r);
    if (err != WR_OK)
        return err;
    bool enabled;
    wr_memlog_t *l = shown(s, queue, &enabled);
    err = WR_ENOTFOUND;
    if (l) {
        head(l, enabled, r);
        err = read_into(l, req, r);
    }
    if (err != WR_OK) {
        wr_store_memory__log_res_free(r);
        r = NULL;
    }
    wr_store_memory__log_answer(s, it, err, r);
    return WR_OK;
}

wr_err_t wr_store_memory__log_publish(wr_store_t *base, const char *queue, uint64_t size,
                                      const uint8_t root[32], const char *note, size_t len,
                                      wr_store_log_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_store_memory__log_res_t *r;
    bool ok = wr_ids_valid_queue(queue) && root && note && len > 0 && len < WR_MEMLOG_CP_MAX;
    wr_err_t err = begin(s, cb, arg, ok, true, &it, &r);
    if (err != WR_OK)
        return err;
    wr_memlog_t *l = wr_memq_db_log(&s->db, queue);
    err = WR_ENOTFOUND;
    if (l) {
        uint8_t have[32];
        wr_tlog_reader_t rd = wr_memlog_reader(l);
        err = WR_EINVAL;
        if (size >= l->cp_size && size <= wr_memlog_size(l) && !l->stopped &&
            wr_tlog_root_at(l->h, &rd, size, have) == WR_OK && memcmp(have, root, 32) == 0) {
            memcpy(l->cp, note, len);
            l->cp_len = len;
            l->cp_size = size;
            memcpy(l->cp_root, root, 32);
            s->dirty = true;
            err = WR_OK;
        }
        wr_memq_t *q = wr_memq_db_find(&s->db, queue);
        head(l, q && q->log, r);
    } else {
        wr_store_memory__log_res_free(r);
        r = NULL;
    }
    wr_store_memory__log_answer(s, it, err, r);
    return WR_OK;
}

/* The queues whose opening waits for its beacon now, into r. */
static bool beacon_waits(mstore_t *s, wr_store_memory__log_res_t *r)
{
    int64_t now = wr_store_memory__now_us(s);
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < s->db.nq; i++)
        cap += wr_memq_log_beacon_wait(s->db.queues[i], now);
    if (cap == 0)
        return true;
    r->bq = calloc(cap, sizeof *r->bq);
    r->burl = calloc(cap, sizeof *r->burl);
    r->bq_ptrs = calloc(cap, sizeof *r->bq_ptrs);
    r->burl_ptrs = calloc(cap, sizeof *r->burl_ptrs);
    r->brounds = calloc(cap, sizeof *r->brounds);
    if (!r->bq || !r->burl || !r->bq_ptrs || !r->burl_ptrs || !r->brounds)
        return false;
    for (size_t i = 0; i < s->db.nq && n < cap; i++) {
        const wr_memq_t *q = s->db.queues[i];
        if (!wr_memq_log_beacon_wait(q, now))
            continue;
        snprintf(r->bq[n], sizeof r->bq[n], "%s", q->name);
        snprintf(r->burl[n], sizeof r->burl[n], "%s", q->log->beacon_url);
        r->bq_ptrs[n] = r->bq[n];
        r->burl_ptrs[n] = r->burl[n];
        r->brounds[n] = q->log->round;
        n++;
    }
    r->ans.beacon_queues = r->bq_ptrs;
    r->ans.beacon_urls = r->burl_ptrs;
    r->ans.beacon_rounds = r->brounds;
    r->ans.n_beacons = n;
    return true;
}

wr_err_t wr_store_memory__log_unsigned(wr_store_t *base, wr_store_log_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_store_memory__log_res_t *r;
    wr_err_t err = begin(s, cb, arg, true, true, &it, &r);
    if (err != WR_OK)
        return err;
    size_t n = 0, cap = s->db.nlogs;
    r->names = cap ? calloc(cap, sizeof *r->names) : NULL;
    r->name_ptrs = cap ? calloc(cap, sizeof *r->name_ptrs) : NULL;
    if ((cap && (!r->names || !r->name_ptrs)) || !beacon_waits(s, r)) {
        wr_store_memory__log_res_free(r);
        wr_store_memory__item_release(s, it);
        return WR_ENOMEM;
    }
    for (size_t i = 0; i < cap; i++) {
        const wr_memlog_t *l = s->db.logs[i];
        if (l->stopped || (l->cp_len > 0 && l->cp_size == wr_memlog_size(l)))
            continue; /* stopped: the signer saw it broken or forked (log_head) */
        memcpy(r->names[n], l->name, sizeof r->names[n]);
        r->name_ptrs[n] = r->names[n];
        n++;
    }
    r->ans.names = r->name_ptrs;
    r->ans.n_names = n;
    wr_store_memory__log_answer(s, it, WR_OK, r);
    return WR_OK;
}

wr_err_t wr_store_memory__log_beacon(wr_store_t *base, const char *queue, uint64_t round,
                                     const uint8_t *randomness, size_t len, const char *error,
                                     wr_store_log_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_store_memory__log_res_t *r;
    bool ok = wr_ids_valid_queue(queue) &&
              (randomness ? len >= 1 && len <= WR_LOGLEAF_RANDOM_MAX : error != NULL);
    wr_err_t err = begin(s, cb, arg, ok, false, &it, &r);
    if (err != WR_OK)
        return err;
    wr_memq_t *q = wr_memq_db_find(&s->db, queue);
    wr_memlog_t *l = q ? q->log : NULL;
    err = WR_ENOTFOUND;
    if (l && l->committed && l->beacon && !l->beacon_done && l->round == round) {
        l->beacon_done = true;
        l->randomness_len = randomness ? len : 0;
        if (randomness)
            memcpy(l->randomness, randomness, len);
        snprintf(l->beacon_error, sizeof l->beacon_error, "%s", randomness ? "" : error);
        s->dirty = true;
        err = WR_OK;
    }
    wr_store_memory__log_answer(s, it, err, NULL);
    return WR_OK;
}
