/*
 * store_memory_defer.c - the embedded store's deferred answers: the async
 * contract of store.h (a callback is called exactly once, from the event
 * loop, never inside the call) for a store whose work is done inside the
 * call.
 *
 * Every operation takes an item (wr_store_memory__op_begin: from a free
 * list, so a warm store allocates nothing per call), fills its answer and
 * queues it (item_enqueue); one libevent event delivers the queued items
 * in call order on the next round of the loop (on_defer) and gives them
 * back. An item owns what its answer points into (config references,
 * waits, claimed subscriptions, log and report answers) until its callback
 * returns. Items queued by callbacks wait for the next round, so a caller
 * that answers with another call cannot starve the loop.
 */
#include <stdlib.h>

#include <event2/event.h>

#include "store/memory/store_memory_internal.h"

/* ---- deferred items -------------------------------------------------- */

item_t *wr_store_memory__item_new(mstore_t *s, dkind_t kind, void *arg)
{
    item_t *it = wr_freelist_take(&s->cache);
    if (!it)
        return NULL;
    it->kind = kind;
    it->arg = arg;
    return it;
}

void wr_store_memory__item_release(mstore_t *s, item_t *it)
{
    wr_memq_cfg_unref(it->cfg);
    if (it->waits || it->pushes || it->push_view) { /* (a poll has none: no free calls) */
        free(it->waits);
        for (size_t i = 0; i < it->n_pushes; i++)
            free(it->pushes[i]);
        free(it->pushes);
        free(it->push_view);
    }
    if (it->kind == D_SYNC)
        free(it->res.sync);
    if (it->kind == D_LOG)
        wr_store_memory__log_res_free(it->res.log);
    if (it->kind == D_REPORT)
        free(it->res.report.pairs);
    if (it->kind == D_CODES)
        free(it->res.codes);
    if (it->kind == D_LIST && it->has_res) {
        for (size_t i = 0; i < it->res.list.n; i++)
            wr_memq_cfg_unref(it->res.list.cfgs[i]);
        free(it->res.list.infos);
        free(it->res.list.cfgs);
        free(it->res.list.names);
    }
    if (!s->closing) {
        wr_freelist_give(&s->cache, it);
    } else {
        free(it);
    }
}

/* Calls the item's callback with err (its own or an override). */
void wr_store_memory__item_fire(item_t *it, wr_err_t err)
{
    bool res = it->has_res && err == it->err;
    switch (it->kind) {
    case D_ENTRY:
        it->cb.entry(err, res ? &it->res.entry : NULL, it->arg);
        break;
    case D_DONE:
        it->cb.done(err, it->arg);
        break;
    case D_ADMIT:
        it->cb.admit(err, res ? &it->res.admit : NULL, it->arg);
        break;
    case D_TOKEN:
        it->cb.token(err, res ? &it->res.token : NULL, it->arg);
        break;
    case D_INFO:
        it->cb.info(err, res ? &it->res.info : NULL, it->arg);
        break;
    case D_LIST:
        it->cb.list(err, res ? it->res.list.infos : NULL, res ? it->res.list.n : 0, it->arg);
        break;
    case D_SECRET:
        it->cb.secret(err, res ? it->res.secret.buf : NULL, res ? it->res.secret.len : 0, it->arg);
        break;
    case D_SYNC:
        it->cb.sync(err, res ? &it->res.sync->sync : NULL, it->arg);
        break;
    case D_AUTOTUNE:
        it->cb.autotune(err, res ? &it->res.autotune : NULL, it->arg);
        break;
    case D_LOG:
        it->cb.log(err, res ? &it->res.log->ans : NULL, it->arg);
        break;
    case D_REPORT:
        it->cb.report(err, res ? it->res.report.pairs : NULL, res ? it->res.report.n : 0, it->arg);
        break;
    case D_CODES:
        it->cb.codes(err, res ? it->res.codes : NULL, it->arg);
        break;
    }
}

void wr_store_memory__item_enqueue(mstore_t *s, item_t *it)
{
    STAILQ_INSERT_TAIL(&s->items, it, link);
    s->pending++;
    event_active(s->ev_defer, EV_READ, 0);
}

/* Delivers the items pending when the event fired; later ones (queued by
 * the callbacks) wait for the next round of the loop. */
void wr_store_memory__on_defer(evutil_socket_t fd, short what, void *arg)
{
    mstore_t *s = arg;
    size_t n = s->pending;
    s->draining = true;
    item_t *it;
    while (n-- > 0 && (it = STAILQ_FIRST(&s->items)) != NULL && !s->closing) {
        STAILQ_REMOVE_HEAD(&s->items, link);
        s->pending--;
        wr_store_memory__item_fire(it, it->err);
        wr_store_memory__item_release(s, it);
    }
    s->draining = false;
    if (s->free_after_drain) {
        wr_store_memory__free(s);
        return;
    }
    if (!STAILQ_EMPTY(&s->items))
        event_active(s->ev_defer, EV_READ, 0);
}

/* ---- argument checks ---------------------------------------------------- */

/* The start of every operation: WR_ECANCELED once closing, WR_EINVAL
 * without a callback or when !args_ok (the operation's arguments, by the
 * rules of store.h), WR_ENOMEM; else WR_OK and a new item of kind for arg
 * that answers cb (the member of the operation's kind). */
wr_err_t wr_store_memory__op_begin(mstore_t *s, wr_store_cb_t cb, bool args_ok, dkind_t kind,
                                   void *arg, item_t **out)
{
    if (s->closing)
        return WR_ECANCELED;
    if (!cb.done || !args_ok) /* every member is a function pointer: one test for all */
        return WR_EINVAL;
    *out = wr_store_memory__item_new(s, kind, arg);
    if (*out)
        (*out)->cb = cb;
    return *out ? WR_OK : WR_ENOMEM;
}

/* The queue named queue, or NULL with it->err = WR_ENOTFOUND (the answer
 * of every operation on a queue that does not exist). */
wr_memq_t *wr_store_memory__op_queue(mstore_t *s, item_t *it, const char *queue)
{
    wr_memq_t *q = wr_memq_db_find(&s->db, queue);
    if (!q)
        it->err = WR_ENOTFOUND;
    return q;
}
