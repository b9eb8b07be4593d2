/*
 * memq_db.c - the db of the embedded store's queue model: the queues' configs
 * (reference-counted and immutable: a config_put swaps in a new one and
 * bumps the queue's version), a queue's construction and destruction, and
 * the db's array of queues sorted by name (binary search; few queues).
 *
 * wr_memq_db_put_config creates a queue for a new name, with empty sets
 * and a budget that has not ticked; a config with another tick length resets the
 * budget (tick indices of another length are not comparable). Deleting a
 * queue frees everything it owns: line, pre-queue, held people, tokens,
 * sessions, burned set and its reference to the config. A queue's stats
 * (its counters as the store interface reports them) and the autotune
 * operation on its kept state are here too. The full model and its
 * invariants are described at the top of memq.c. No I/O, no clocks.
 */
#include "store/memory/memlog.h"
#include "store/memory/memq.h"

#include "base/array.h"
#include "store/memory/memq_internal.h"

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- configs ----------------------------------------------------------- */

static wr_memq_cfg_t *cfg_new(const wr_queue_config_t *cfg)
{
    wr_memq_cfg_t *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->refs = 1;
    c->cfg = *cfg;
    return c;
}

wr_memq_cfg_t *wr_memq_cfg_ref(wr_memq_cfg_t *c)
{
    c->refs++;
    return c;
}

void wr_memq_cfg_unref(wr_memq_cfg_t *c)
{
    if (c && --c->refs == 0)
        free(c);
}

/* ---- queues ---------------------------------------------------------- */

static const char *node_key(const void *item, size_t *len)
{
    return wr_zsl_node_id(item, len);
}

static const char *token_key(const void *item, size_t *len)
{
    const wr_memq_token_t *t = item;
    *len = t->idlen;
    return t->id;
}

static void queue_free(wr_memq_t *q)
{
    if (!q)
        return;
    wr_memq__burned_free(q);
    wr_memq__push_free(q);
    wr_memq__groups_free(q);
    for (size_t i = 0; i < q->heap_n; i++)
        free(q->heap[i]);
    free(q->heap);
    for (size_t i = 0; i < q->sess_n; i++)
        free(q->sess_heap[i]);
    free(q->sess_heap);
    wr_idhash_free(q->sessions);
    wr_idhash_free(q->tokens);
    wr_idhash_free(q->waiting);
    wr_zsl_free(q->line);
    wr_idhash_free(q->pre_ids);
    wr_zsl_free(q->pre);
    wr_idhash_free(q->held_ids);
    wr_zsl_free(q->held);
    wr_idhash_free(q->back_ids);
    wr_zsl_free(q->back);
    wr_memq_cfg_unref(q->cfg);
    free(q);
}

static wr_memq_t *queue_new(wr_memq_db_t *db, const char *name, wr_memq_cfg_t *cfg)
{
    wr_memq_t *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    snprintf(q->name, sizeof q->name, "%s", name);
    q->line = wr_zsl_new(wr_rng_next(&db->rng));
    q->waiting = wr_idhash_new(node_key);
    q->tokens = wr_idhash_new(token_key);
    q->sessions = wr_idhash_new(token_key);
    q->pre = wr_zsl_new(wr_rng_next(&db->rng));
    q->pre_ids = wr_idhash_new(node_key);
    q->held = wr_zsl_new(wr_rng_next(&db->rng));
    q->held_ids = wr_idhash_new(node_key);
    q->back = wr_zsl_new(wr_rng_next(&db->rng));
    q->back_ids = wr_idhash_new(node_key);
    if (!q->line || !q->waiting || !q->tokens || !q->sessions || !q->pre || !q->pre_ids ||
        !q->held || !q->held_ids || !q->back || !q->back_ids) {
        queue_free(q);
        return NULL;
    }
    q->cfg = cfg;
    q->budget.last_tick = -1;
    q->budget.carry_micro = 0;
    q->stock_left = WR_STOCK_NONE;
    q->sold_out_us = -1;
    return q;
}

size_t wr_memq__by_name(void *const *items, size_t n, size_t name_off, const char *name,
                        bool *found)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp((const char *)items[mid] + name_off, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

wr_err_t wr_memq__insert_at(void ***items, size_t *n, size_t *cap, size_t i, void *item)
{
    void **a = wr_array_grow(*items, cap, *n + 1, sizeof *a, 8, false);
    if (!a)
        return WR_ENOMEM;
    *items = a;
    memmove(&(*items)[i + 1], &(*items)[i], (*n - i) * sizeof **items);
    (*items)[i] = item;
    (*n)++;
    return WR_OK;
}

/* Index where name is or would be inserted; *found set. */
static size_t queue_index(const wr_memq_db_t *db, const char *name, bool *found)
{
    return wr_memq__by_name((void *const *)db->queues, db->nq, offsetof(wr_memq_t, name), name,
                            found);
}

wr_memq_t *wr_memq_db_find(const wr_memq_db_t *db, const char *name)
{
    bool found;
    size_t i = queue_index(db, name, &found);
    return found ? db->queues[i] : NULL;
}

static wr_err_t queue_insert(wr_memq_db_t *db, wr_memq_t *q)
{
    bool found;
    size_t i = queue_index(db, q->name, &found);
    return found ? WR_EINVAL : wr_memq__insert_at((void ***)&db->queues, &db->nq, &db->capq, i, q);
}

wr_err_t wr_memq_db_put_config(wr_memq_db_t *db, const char *name, const wr_queue_config_t *cfg,
                               wr_memq_t **out)
{
    return wr_memq_db_put_config_at(db, name, cfg, INT64_MIN, out);
}

wr_err_t wr_memq_db_put_config_at(wr_memq_db_t *db, const char *name, const wr_queue_config_t *cfg,
                                  int64_t now_us, wr_memq_t **out)
{
    wr_memq_cfg_t *c = cfg_new(cfg);
    if (!c)
        return WR_ENOMEM;
    wr_memq_t *q = wr_memq_db_find(db, name);
    if (q) {
        /* the groups' lines first: the one step that may refuse */
        wr_err_t gerr = wr_memq__groups_sync(q, cfg, &db->rng, now_us);
        if (gerr != WR_OK) {
            wr_memq_cfg_unref(c);
            return gerr;
        }
        /* Tick indices of another tick length are not comparable. */
        if (q->cfg->cfg.tick_ms != cfg->tick_ms) {
            q->budget.last_tick = -1;
            q->budget.carry_micro = 0;
        }
        /* Another autotune object (or none): the rate starts again. */
        const wr_queue_config_t *o = &q->cfg->cfg;
        if (o->has_autotune != cfg->has_autotune || o->autotune_min != cfg->autotune_min ||
            o->autotune_max != cfg->autotune_max ||
            o->autotune_target_ms != cfg->autotune_target_ms) {
            q->auto_rate = 0;
            q->auto_step_us = 0;
            q->auto_cut_ms = 0;
        }
        wr_memq_cfg_unref(q->cfg);
        q->cfg = c;
    } else {
        q = queue_new(db, name, c);
        if (!q) {
            wr_memq_cfg_unref(c);
            return WR_ENOMEM;
        }
        wr_err_t err = wr_memq__groups_sync(q, cfg, &db->rng, now_us);
        if (err == WR_OK)
            err = queue_insert(db, q);
        if (err != WR_OK) {
            queue_free(q);
            return err;
        }
    }
    if (cfg->stock_set) /* a PUT, or a PATCH naming stock: what is left now */
        q->stock_left = cfg->stock >= 0 ? cfg->stock : WR_STOCK_NONE;
    wr_memq__log_hints(q, cfg->public_log); /* room for receipts, the groups' new lines too */
    q->version++;
    if (out)
        *out = q;
    return WR_OK;
}

wr_err_t wr_memq_db_delete(wr_memq_db_t *db, const char *name)
{
    bool found;
    size_t i = queue_index(db, name, &found);
    if (!found)
        return WR_ENOTFOUND;
    queue_free(db->queues[i]);
    memmove(&db->queues[i], &db->queues[i + 1], (db->nq - i - 1) * sizeof *db->queues);
    db->nq--;
    return WR_OK;
}

void wr_memq_db_clear(wr_memq_db_t *db)
{
    for (size_t i = 0; i < db->nq; i++)
        queue_free(db->queues[i]);
    free(db->queues);
    db->queues = NULL;
    db->nq = db->capq = 0;
    for (size_t i = 0; i < db->nlogs; i++)
        wr_memlog_free(db->logs[i]);
    free(db->logs);
    db->logs = NULL;
    db->nlogs = db->caplogs = 0;
}

/* ---- a queue's stats and autotune state ------------------------------- */

void wr_memq_stats(const wr_memq_t *q, wr_queue_stats_t *st)
{
    uint64_t held = wr_zsl_length(q->held) + wr_zsl_length(q->back);
    bool sold = q->stock_left == 0 && q->heap_n == 0 && q->sold_out_us >= 0;
    *st = (wr_queue_stats_t){
        .waiting = wr_zsl_length(q->line) + wr_memq__pending(q),
        .prequeue = q->opening ? 0 : wr_zsl_length(q->pre),
        .log_committed = wr_memq_log_committed(q),
        .active = q->heap_n + q->sess_n,
        .admitted_total = q->admitted_total,
        .consumed_total = q->consumed_total,
        .expired_total = q->expired_total,
        .left_total = q->left_total,
        .rejected_full_total = q->rejected_full_total,
        .sessions = q->sess_n,
        .released_total = q->released_total,
        .sessions_expired_total = q->sessions_expired_total,
        .abandoned_total = q->abandoned_total,
        .held = held,
        .away = q->away_n + held,
        .returned_total = q->returned_total,
        .bypass_total = q->bypass_total,
        .subscribed = q->push ? wr_idhash_count(q->push) : 0,
        .unseen_expired_total = q->unseen_expired_total,
        .stock_left = q->stock_left,
        .sold_out_at_ms = sold ? q->sold_out_us / 1000 : -1,
        .autotune_rate = q->cfg->cfg.has_autotune ? q->auto_rate : 0,
    };
    st->waiting = wr_memq__waiting_all(q); /* every line */
    wr_memq_groups_stats(q, st);
}

wr_err_t wr_memq_autotune(wr_memq_t *q, const wr_autotune_req_t *req, int64_t now_us,
                          wr_autotune_state_rec_t *res)
{
    memset(res, 0, sizeof *res);
    if (req->report)
        q->auto_rep[req->source] = (wr_autotune_report_t){req->latency_ms, req->error_rate, now_us};
    if (req->set && req->expect_step_us == q->auto_step_us) {
        q->auto_rate = req->rate;
        q->auto_step_us = now_us;
        q->auto_cut_ms = req->cut_latency_ms;
        res->applied = true;
    }
    res->rate = q->auto_rate;
    res->step_us = q->auto_step_us;
    res->cut_latency_ms = q->auto_cut_ms;
    memcpy(res->reports, q->auto_rep, sizeof res->reports);
    res->now_us = now_us;
    return WR_OK;
}
