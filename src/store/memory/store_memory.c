/*
 * store_memory.c - the embedded store backend: every queue's state in
 * process, single-threaded on the caller's libevent loop, with the same
 * operation semantics as the Redis backend (store_redis.c and its Lua
 * scripts).
 *
 * Layers. The data and what each operation does to it - queues, lines,
 * tokens, budgets, counters, the secret; join, leave, admit, consume with
 * their expiry sweeps where the Redis scripts sweep theirs - are the queue
 * model, memq.h (pure; no libevent). The snapshot file is mem_snapshot.h
 * (file I/O; no libevent). This file is the store interface over them:
 * argument checks, clocks, deferred callbacks, open and close; the
 * snapshot timer and its forked writer are store_memory_snap.c, and what
 * the two files share is store_memory_internal.h (struct mstore,
 * wr_store_memory__*). queue_get/list sweep here; config_put sweeps
 * nothing.
 * A poll changes what a snapshot holds (the user's last-seen time), so it
 * marks the state dirty like a join.
 *
 * Time. Arrival scores come from the wall clock (clock.h) in us, made
 * strictly increasing per queue by memq. Token times and admission ticks
 * come from CLOCK_MONOTONIC plus the offset that makes it equal the wall
 * clock at open, so they are reported in wall-clock us but never jump.
 * debug_advance_time adds to both clocks; the test clock hook replaces
 * both by a fixed time that only debug_advance_time moves.
 *
 * Async. Every operation computes its whole answer at call time (it is
 * atomic: nothing else runs in between) and stores a copy of it in a
 * deferred item; items are delivered in FIFO order by one event made
 * active with event_active(), never from inside the call. Configs in
 * answers are shared by reference count, so they stay valid until the
 * callback returns even when the queue is changed or deleted meanwhile.
 * close() delivers pending items synchronously with WR_ECANCELED.
 *
 * Persistence (data_dir). A snapshot file holds everything; it is loaded
 * at open, and written atomically every snapshot_interval_ms when
 * something changed - by a forked child - and in process on close
 * (store_memory_snap.c). A corrupt or unreadable file fails open() with
 * WR_EIO and a log line naming the problem.
 *
 * Ownership. The store owns the db (queues, nodes, tokens, configs - the
 * configs shared with pending items by reference count) and the items.
 * Strings passed in are copied (into nodes and tokens) before the call
 * returns.
 */
#include "store/memory/store_memory.h"
#include "store/memory/store_memory_internal.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/ids.h"
#include "store/memory/mem_report.h"
#include "store/memory/mem_snapshot.h"
#include "store/memory/memq.h"

#define SNAP_DEFAULT_MS 2000u
#define ITEM_CACHE_MAX  256
#define MICRO           1000000LL

static const wr_store_ops_t memory_ops;

/* ---- clocks ---------------------------------------------------------- */

/* Token and tick clock: monotonic, in wall-clock microseconds. */
int64_t wr_store_memory__now_us(const mstore_t *s)
{
    if (s->test_clock_us > 0)
        return s->test_clock_us + s->debug_offset_us;
    return wr_clock_mono_us() + s->mono_offset_us + s->debug_offset_us;
}

/* Arrival clock: the wall clock. */
static int64_t wall_us(const mstore_t *s)
{
    if (s->test_clock_us > 0)
        return s->test_clock_us + s->debug_offset_us;
    return wr_clock_wall_us() + s->debug_offset_us;
}

int64_t wr_store_memory__wall_us(const mstore_t *s)
{
    return wall_us(s);
}

/* An answer of the report operation (store_memory_report.c): pairs
 * (owned; freed with the item) when err is WR_OK. */
wr_err_t wr_store_memory__report_answer(mstore_t *s, wr_store_report_cb cb, void *arg, bool args_ok,
                                        wr_err_t err, wr_store_report_pair_t *pairs, size_t n)
{
    item_t *it;
    wr_err_t e =
        wr_store_memory__op_begin(s, (wr_store_cb_t){.report = cb}, args_ok, D_REPORT, arg, &it);
    if (e != WR_OK) {
        free(pairs);
        return e;
    }
    it->err = err;
    it->res.report.pairs = pairs;
    it->res.report.n = n;
    it->has_res = err == WR_OK;
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

/* The answer of a log operation (store_memory_log.c) begun with op_begin:
 * err, res (owned; may be NULL) queued for its callback. */
void wr_store_memory__log_answer(mstore_t *s, item_t *it, wr_err_t err,
                                 wr_store_memory__log_res_t *res)
{
    it->err = err;
    it->res.log = res;
    it->has_res = res != NULL;
    wr_store_memory__item_enqueue(s, it);
}

/* ---- operations ------------------------------------------------------ */

/* The opening of an operation on queue (base, queue, cb and arg in
 * scope): s, it (answering cb, member F of wr_store_cb_t, kind K) and q
 * (NULL: no such queue, it->err WR_ENOTFOUND), or the refusal returned
 * (wr_store_memory__op_begin; OK: the rules of the arguments other than
 * the queue name). */
#define QUEUE_OP(F, K, OK)                                                                         \
    mstore_t *s = (mstore_t *)base;                                                                \
    item_t *it;                                                                                    \
    wr_err_t err = wr_store_memory__op_begin(s, (wr_store_cb_t){.F = cb},                          \
                                             wr_ids_valid_queue(queue) && (OK), K, arg, &it);      \
    if (err != WR_OK)                                                                              \
        return err;                                                                                \
    wr_memq_t *q = wr_store_memory__op_queue(s, it, queue)

/* join (add = true; page: by the queue page; j: into a group, or NULL)
 * and status. */
static wr_err_t entry_op(wr_store_t *base, const char *queue, const char *user,
                         wr_store_entry_cb cb, void *arg, bool add, bool page,
                         const wr_store_join_t *j)
{
    QUEUE_OP(entry, D_ENTRY,
             wr_ids_valid_user(user) &&
                 (!j || !j->code_hash ||
                  strnlen(j->code_hash, WR_CODE_HASH_HEX + 1) == WR_CODE_HASH_HEX));
    if (!q)
        goto out;
    wr_entry_t *e = &it->res.entry;
    it->cfg = wr_memq_cfg_ref(q->cfg);
    e->config = &it->cfg->cfg;
    e->head_due_us = e->own_due_us = -1;
    e->added = false;
    e->passed_ahead = -1;
    e->passed_scan = 0;
    e->stock_left = q->stock_left;
    if (!q->cfg->cfg.enabled) {
        e->state = WR_ENTRY_PASSTHROUGH;
        it->has_res = true;
        goto out;
    }
    int64_t now = wr_store_memory__now_us(s);
    wr_memq_join_t mj = {.slot = -1, .code_hash = NULL};
    if (j) {
        mj.slot = wr_memq_group_slot(q, j->group);
        mj.code_hash = j->code_hash; /* a grp the config no longer has: the standard line */
    }
    it->err = wr_memq_entry_group(q, user, strlen(user), add, page, j ? &mj : NULL, now,
                                  add ? wall_us(s) : 0, e, &s->dirty);
    if (j && j->check_only && it->err == WR_ENOTINQUEUE && mj.slot < 0 && mj.code_hash) {
        /* no place: what the code would get (store.h join_group) */
        e->code_reason = wr_memq_code_verdict(q, mj.code_hash, now);
        if (e->code_reason != WR_CODE_OK)
            it->err = WR_ECODE;
    }
    e->stock_left = q->stock_left; /* after the sweep's returns */
    e->subscribed = wr_memq_push_has(q, user, strlen(user));
    it->has_res = it->err == WR_OK || it->err == WR_EFULL || it->err == WR_ECODE;
    if (it->err == WR_OK && (e->state == WR_ENTRY_WAITING || e->state == WR_ENTRY_PREQUEUE))
        e->has_receipt = wr_memq_log_receipt_at(q, q->entry_node, user, strlen(user), e->receipt_u,
                                                &e->receipt_index, e->receipt_leaf_hash);
out:
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_join(wr_store_t *base, const char *queue, const char *user,
                         wr_store_entry_cb cb, void *arg)
{
    return entry_op(base, queue, user, cb, arg, true, false, NULL);
}

static wr_err_t mem_join_page(wr_store_t *base, const char *queue, const char *user,
                              wr_store_entry_cb cb, void *arg)
{
    return entry_op(base, queue, user, cb, arg, true, true, NULL);
}

static wr_err_t mem_status(wr_store_t *base, const char *queue, const char *user,
                           wr_store_entry_cb cb, void *arg)
{
    return entry_op(base, queue, user, cb, arg, false, false, NULL);
}

static wr_err_t mem_join_group(wr_store_t *base, const char *queue, const char *user,
                               const wr_store_join_t *j, wr_store_entry_cb cb, void *arg)
{
    if (!j)
        return WR_EINVAL;
    return entry_op(base, queue, user, cb, arg, !j->check_only, j->page, j);
}

/* Presale codes (store.h codes). */
static wr_err_t mem_codes(wr_store_t *base, const char *queue, const wr_store_codes_req_t *req,
                          wr_store_codes_cb cb, void *arg)
{
    bool ok =
        req && (req->kind == WR_CODES_LIST ||
                (req->kind == WR_CODES_REVOKE && req->hashes && req->n == 1) ||
                (req->kind == WR_CODES_CREATE && req->hashes && req->group && req->n >= 1 &&
                 req->n <= WR_CODES_COUNT_MAX && req->uses >= 1 && req->uses <= WR_CODES_USES_MAX));
    QUEUE_OP(codes, D_CODES, ok);
    if (!q)
        goto out;
    if (req->kind == WR_CODES_CREATE)
        it->err = wr_memq_codes_create(q, req->group, req->hashes, req->n, req->uses,
                                       req->expires_at_ms, &s->dirty);
    else if (req->kind == WR_CODES_REVOKE)
        it->err = wr_memq_code_revoke(q, req->hashes[0], &s->dirty);
    if (it->err == WR_OK) {
        it->res.codes = malloc(sizeof *it->res.codes);
        if (!it->res.codes) {
            it->err = WR_ENOMEM;
        } else {
            wr_memq_codes_counts(q, it->res.codes);
            it->has_res = true;
        }
    }
out:
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_leave(wr_store_t *base, const char *queue, const char *user,
                          wr_store_done_cb cb, void *arg)
{
    QUEUE_OP(done, D_DONE, wr_ids_valid_user(user));
    if (q)
        it->err = wr_memq_leave(q, user, strlen(user), wr_store_memory__now_us(s), &s->dirty);
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_admit(wr_store_t *base, const char *queue, wr_store_admit_cb cb, void *arg)
{
    QUEUE_OP(admit, D_ADMIT, true);
    if (!q)
        goto out;
    int64_t now = wr_store_memory__now_us(s);
    it->err = wr_memq_admit(q, now, &it->res.admit.admitted, &it->waits,
                            &it->res.admit.opening_moved, &it->res.admit.opening_left, &s->dirty);
    wr_memq_burn_sweep(q, now, &s->dirty); /* degraded mode: expired burns */
    if (it->err != WR_OK)
        goto out;
    wr_memq_push_take(q, &it->pushes, &it->n_pushes);
    if (it->n_pushes && (it->push_view = calloc(it->n_pushes, sizeof(*it->push_view)))) {
        for (size_t i = 0; i < it->n_pushes; i++)
            it->push_view[i] = (wr_store_push_t){.user = it->pushes[i]->id,
                                                 .sub = &it->pushes[i]->sub,
                                                 .expires_at_us = it->pushes[i]->exp_us,
                                                 .closing = it->pushes[i]->closing};
        it->res.admit.pushes = it->push_view;
        it->res.admit.n_pushes = it->n_pushes;
    }
    it->res.admit.waited_us = it->waits;
    it->res.admit.n_waited = it->waits ? (size_t)it->res.admit.admitted : 0;
    it->res.admit.now_us = now;
    wr_memq_stats(q, &it->res.admit.stats);
    it->cfg = wr_memq_cfg_ref(q->cfg);
    it->res.admit.config = &it->cfg->cfg;
    it->has_res = true;
out:
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

/* push_sub (store.h): set or delete a Web Push subscription (memq_push.c). */
static wr_err_t mem_push_sub(wr_store_t *base, const char *queue, const char *user,
                             const wr_pushsub_t *sub, wr_store_done_cb cb, void *arg)
{
    QUEUE_OP(done, D_DONE, wr_ids_valid_user(user));
    int64_t now = wr_store_memory__now_us(s);
    if (q && sub)
        it->err = wr_memq_push_set(q, user, strlen(user), sub, now, &s->dirty);
    else if (q)
        it->err = wr_memq_push_del(q, user, strlen(user), now, &s->dirty);
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

typedef enum { T_VERIFY, T_CONSUME, T_RELEASE } token_mode_t;

/* consume, verify and release (sessions): the same checks and answer. */
static wr_err_t token_op(wr_store_t *base, const char *queue, const char *user, const char *jti,
                         wr_store_token_cb cb, void *arg, token_mode_t mode)
{
    QUEUE_OP(token, D_TOKEN, wr_ids_valid_user(user) && wr_store_valid_jti(jti));
    if (!q)
        goto out;
    it->has_res = true;
    it->res.token.session_us = -1;
    if (!q->cfg->cfg.enabled)
        it->res.token.passthrough = true;
    else if (mode == T_RELEASE)
        it->err = wr_memq_release(q, user, strlen(user), jti, wr_store_memory__now_us(s),
                                  &it->res.token.reason, &it->res.token.session_us, &s->dirty);
    else
        it->err = wr_memq_token_use(q, user, strlen(user), jti, mode == T_CONSUME,
                                    wr_store_memory__now_us(s), &it->res.token.reason, &s->dirty);
out:
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_consume(wr_store_t *base, const char *queue, const char *user, const char *jti,
                            wr_store_token_cb cb, void *arg)
{
    return token_op(base, queue, user, jti, cb, arg, T_CONSUME);
}

static wr_err_t mem_verify(wr_store_t *base, const char *queue, const char *user, const char *jti,
                           wr_store_token_cb cb, void *arg)
{
    return token_op(base, queue, user, jti, cb, arg, T_VERIFY);
}

static wr_err_t mem_release(wr_store_t *base, const char *queue, const char *user, const char *jti,
                            wr_store_token_cb cb, void *arg)
{
    return token_op(base, queue, user, jti, cb, arg, T_RELEASE);
}

/* Degraded mode: burn (store.h), memq's burned set. */
static wr_err_t mem_burn(wr_store_t *base, const char *queue, const char *jti, int64_t exp_us,
                         bool check_only, wr_store_token_cb cb, void *arg)
{
    QUEUE_OP(token, D_TOKEN, wr_ids_valid_jti(jti));
    if (!q)
        goto out;
    it->has_res = true;
    it->err = wr_memq_burn(q, jti, strlen(jti), exp_us, check_only, wr_store_memory__now_us(s),
                           &it->res.token.reason, &s->dirty);
out:
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

/* Bypass rules: bypass (store.h), the queue's counter. */
static wr_err_t mem_bypass(wr_store_t *base, const char *queue, uint64_t n, wr_store_done_cb cb,
                           void *arg)
{
    QUEUE_OP(done, D_DONE, wr_store_valid_bypass(n));
    if (q) {
        q->bypass_total += n;
        s->dirty = true;
    }
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_config_put(wr_store_t *base, const char *queue, const wr_queue_config_t *cfg,
                               wr_store_done_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    bool ok = wr_ids_valid_queue(queue) && wr_store_valid_config(cfg);
    wr_err_t err = wr_store_memory__op_begin(s, (wr_store_cb_t){.done = cb}, ok, D_DONE, arg, &it);
    if (err != WR_OK)
        return err;
    wr_memq_t *q = NULL;
    it->err = wr_memq_db_put_config_at(&s->db, queue, cfg, wr_store_memory__now_us(s), &q);
    if (it->err == WR_OK)
        it->err = wr_memq_log_attach(&s->db, q); /* publicLog: the queue's log */
    if (it->err == WR_OK) {
        s->dirty = true;
        wr_memq_stock_note(q, wr_store_memory__now_us(s), &s->dirty); /* a restock, or stock 0 */
        if (!cfg->push)
            wr_memq_push_clear(q); /* push off: nobody is pushed to (docs/API.md) */
    }
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_queue_get(wr_store_t *base, const char *queue, wr_store_info_cb cb, void *arg)
{
    QUEUE_OP(info, D_INFO, true);
    if (q) {
        wr_memq_sweep(q, wr_store_memory__now_us(s), &s->dirty);
        memcpy(it->name, q->name, sizeof it->name);
        it->cfg = wr_memq_cfg_ref(q->cfg);
        it->res.info.name = it->name;
        it->res.info.config = &it->cfg->cfg;
        wr_memq_stats(q, &it->res.info.stats);
        it->has_res = true;
    }
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

/* Autotune (store.h): memq's autotune state, on the tick clock. */
static wr_err_t mem_autotune(wr_store_t *base, const char *queue, const wr_autotune_req_t *req,
                             wr_store_autotune_cb cb, void *arg)
{
    QUEUE_OP(autotune, D_AUTOTUNE, wr_store_valid_autotune(req));
    if (q) {
        it->err = wr_memq_autotune(q, req, wr_store_memory__now_us(s), &it->res.autotune);
        it->has_res = true;
    }
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_queue_list(wr_store_t *base, wr_store_list_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_err_t err =
        wr_store_memory__op_begin(s, (wr_store_cb_t){.list = cb}, true, D_LIST, arg, &it);
    if (err != WR_OK)
        return err;
    list_res_t *l = &it->res.list;
    size_t n = s->db.nq ? s->db.nq : 1;
    l->infos = calloc(n, sizeof *l->infos);
    l->cfgs = calloc(n, sizeof *l->cfgs);
    l->names = calloc(n, sizeof *l->names);
    if (!l->infos || !l->cfgs || !l->names) {
        free(l->infos);
        free(l->cfgs);
        free(l->names);
        wr_store_memory__item_release(s, it);
        return WR_ENOMEM;
    }
    int64_t now = wr_store_memory__now_us(s);
    for (size_t i = 0; i < s->db.nq; i++) {
        wr_memq_t *q = s->db.queues[i];
        wr_memq_sweep(q, now, &s->dirty);
        memcpy(l->names[i], q->name, sizeof l->names[i]);
        l->cfgs[i] = wr_memq_cfg_ref(q->cfg);
        l->infos[i].name = l->names[i];
        l->infos[i].config = &l->cfgs[i]->cfg;
        wr_memq_stats(q, &l->infos[i].stats);
    }
    l->n = s->db.nq;
    it->has_res = true;
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_queue_delete(wr_store_t *base, const char *queue, wr_store_done_cb cb,
                                 void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_err_t err = wr_store_memory__op_begin(s, (wr_store_cb_t){.done = cb},
                                             wr_ids_valid_queue(queue), D_DONE, arg, &it);
    if (err != WR_OK)
        return err;
    wr_memq_t *q = wr_memq_db_find(&s->db, queue);
    if (q) /* everyone still in the log's line leaves it: removed */
        wr_memq_log_removed(q, wr_store_memory__now_us(s));
    it->err = wr_memq_db_delete(&s->db, queue);
    if (it->err == WR_OK)
        s->dirty = true;
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

/* secret_sync (store.h): the same steps as secret_sync.lua. */
static wr_err_t mem_secret_sync(wr_store_t *base, const uint8_t *own, size_t own_len,
                                const char *epoch, wr_store_sync_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    bool valid =
        (own_len == 0 || wr_store_valid_secret(own, own_len)) && wr_store_valid_epoch(epoch);
    struct sync_res *sr = valid && cb ? calloc(1, sizeof *sr) : NULL;
    if (valid && cb && !sr)
        return WR_ENOMEM;
    wr_err_t err =
        wr_store_memory__op_begin(s, (wr_store_cb_t){.sync = cb}, valid, D_SYNC, arg, &it);
    if (err != WR_OK) {
        free(sr);
        return err;
    }
    it->res.sync = sr;
    if (!s->epoch[0])
        snprintf(s->epoch, sizeof s->epoch, "%s", epoch);
    wr_store_sync_t *res = &sr->sync;
    if (own_len > 0) {
        if (s->db.secret_len == 0) {
            memcpy(s->db.secret, own, own_len);
            s->db.secret_len = own_len;
            s->dirty = true;
            res->secret_restored = true;
        } else if (s->db.secret_len != own_len || memcmp(s->db.secret, own, own_len) != 0) {
            memcpy(s->prev_secret, own, own_len);
            s->prev_secret_len = own_len;
        }
        memcpy(sr->secret, s->db.secret, s->db.secret_len);
        res->secret = sr->secret;
        res->secret_len = s->db.secret_len;
    }
    if (s->prev_secret_len > 0) {
        memcpy(sr->previous, s->prev_secret, s->prev_secret_len);
        res->previous = sr->previous;
        res->previous_len = s->prev_secret_len;
    }
    snprintf(sr->epoch, sizeof sr->epoch, "%s", s->epoch);
    res->epoch = sr->epoch;
    it->has_res = true;
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_secret(wr_store_t *base, const uint8_t *proposed, size_t len,
                           wr_store_secret_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_err_t err = wr_store_memory__op_begin(
        s, (wr_store_cb_t){.secret = cb}, wr_store_valid_secret(proposed, len), D_SECRET, arg, &it);
    if (err != WR_OK)
        return err;
    if (s->db.secret_len == 0) {
        memcpy(s->db.secret, proposed, len);
        s->db.secret_len = len;
        s->dirty = true;
    }
    memcpy(it->res.secret.buf, s->db.secret, s->db.secret_len);
    it->res.secret.len = s->db.secret_len;
    it->has_res = true;
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_ping(wr_store_t *base, wr_store_done_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    item_t *it;
    wr_err_t err =
        wr_store_memory__op_begin(s, (wr_store_cb_t){.done = cb}, true, D_DONE, arg, &it);
    if (err != WR_OK)
        return err;
    wr_store_memory__item_enqueue(s, it);
    return WR_OK;
}

static wr_err_t mem_debug_advance_time(wr_store_t *base, int64_t us)
{
    mstore_t *s = (mstore_t *)base;
    if (us < 0)
        return WR_EINVAL;
    s->debug_offset_us += us;
    return WR_OK;
}

/* ---- open / close ---------------------------------------------------- */

void wr_store_memory__free(mstore_t *s)
{
    wr_memq_db_clear(&s->db);
    wr_mem_report_free(s->reports); /* writes what changed */
    wr_freelist_clear(&s->cache);
    if (s->ev_defer)
        event_free(s->ev_defer);
    wr_store_memory__snap_free(s);
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* releases the flock */
    free(s->data_dir);
    free(s);
}

static void mem_close(wr_store_t *base)
{
    mstore_t *s = (mstore_t *)base;
    if (s->closing)
        return;
    s->closing = true;
    wr_store_memory__snap_close(s);
    item_t *it;
    while ((it = STAILQ_FIRST(&s->items)) != NULL) {
        STAILQ_REMOVE_HEAD(&s->items, link);
        s->pending--;
        wr_store_memory__item_fire(it, WR_ECANCELED);
        wr_store_memory__item_release(s, it);
    }
    if (s->draining)
        s->free_after_drain = true; /* wr_store_memory__on_defer frees when the callback returns */
    else
        wr_store_memory__free(s);
}

static const wr_store_ops_t memory_ops = {
    .name = "memory",
    .in_process = true,
    .status_records_free = true, /* the node's aux word, beside what the answer reads */
    .join = mem_join,
    .status = mem_status,
    .join_page = mem_join_page,
    .join_group = mem_join_group,
    .codes = mem_codes,
    .status_quiet = mem_status, /* recording costs nothing here: exact */
    .push_sub = mem_push_sub,
    .leave = mem_leave,
    .admit = mem_admit,
    .consume = mem_consume,
    .verify = mem_verify,
    .release = mem_release,

    /* degraded mode */
    .burn = mem_burn,
    .bypass = mem_bypass,
    .config_put = mem_config_put,
    .queue_get = mem_queue_get,
    .queue_list = mem_queue_list,
    .queue_delete = mem_queue_delete,
    .secret = mem_secret,
    .secret_sync = mem_secret_sync,
    .ping = mem_ping,
    .autotune = mem_autotune,
    .report = wr_store_memory__report,
    .debug_advance_time = mem_debug_advance_time,
    .log_key = wr_store_memory__log_key,
    .log_head = wr_store_memory__log_head,
    .log_read = wr_store_memory__log_read,
    .log_publish = wr_store_memory__log_publish,
    .log_unsigned = wr_store_memory__log_unsigned,
    .log_beacon = wr_store_memory__log_beacon,
    .close = mem_close,
};

wr_err_t wr_store_memory_open(struct event_base *base, const wr_store_memory_opts_t *opts,
                              wr_store_t **out)
{
    wr_err_t err = WR_ENOMEM;
    if (!base || !out)
        return WR_EINVAL;
    mstore_t *s = calloc(1, sizeof *s);
    if (!s)
        return WR_ENOMEM;
    STAILQ_INIT(&s->items);
    wr_freelist_init(&s->cache, sizeof(item_t), ITEM_CACHE_MAX);
    s->base.ops = &memory_ops;
    s->evbase = base;
    s->lock_fd = -1;
    s->mono_offset_us = wr_clock_wall_us() - wr_clock_mono_us();
    wr_rng_seed_random(&s->db.rng);
    if (opts) {
        s->test_clock_us = opts->test_clock_start_us > 0 ? opts->test_clock_start_us : 0;
        s->snap_ms = opts->snapshot_interval_ms;
    }
    if (!s->snap_ms)
        s->snap_ms = SNAP_DEFAULT_MS;
    s->ev_defer = event_new(base, -1, 0, wr_store_memory__on_defer, s);
    if (!s->ev_defer)
        goto out;
    if (opts && opts->data_dir) {
        s->data_dir = strdup(opts->data_dir);
        if (!s->data_dir)
            goto out;
        err = wr_mem_snapshot_lock_dir(s->data_dir, &s->lock_fd);
        if (err != WR_OK)
            goto out;
        err = wr_mem_snapshot_load(&s->db, s->data_dir, wr_store_memory__now_us(s));
        if (err != WR_OK)
            goto out;
        err = wr_store_memory__snap_start(s);
        if (err != WR_OK)
            goto out;
    }
    err = WR_ENOMEM;
    s->reports = wr_mem_report_new(s->data_dir, wall_us(s) / 1000);
    if (!s->reports)
        goto out;
    *out = &s->base;
    return WR_OK;
out:
    s->closing = true;
    wr_store_memory__free(s);
    return err;
}

wr_err_t wr_store_memory_snapshot(wr_store_t *base)
{
    if (!base || base->ops != &memory_ops)
        return WR_EINVAL;
    return wr_store_memory__snap_now((mstore_t *)base);
}
