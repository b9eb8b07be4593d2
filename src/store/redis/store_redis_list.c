/*
 * store_redis_list.c - queue_list of the Redis store (store_redis.c):
 * SMEMBERS wr:queues (the registry), then one queue_get per name,
 * pipelined on the one connection; names without a config (a stale
 * registry entry) are skipped, and the answer is sorted by name. Part of
 * the store_redis module; what the files share is store_redis_internal.h.
 *
 * Ownership: a struct list_ctx holds the names and the results until every
 * sub-operation answered (list_finish), then calls the user once and frees
 * everything; the infos handed to the callback are borrowed until it
 * returns.
 */
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/store_redis_internal.h"

#define LIST_MAX 100000

/* queue_list: SMEMBERS wr:queues, then one queue_get per name (pipelined);
 * names without a config are skipped; the answer is sorted by name.
 * queue_names (the scheduler's discovery, K29): the SMEMBERS alone, one
 * command whatever the number of queues; config NULL, stats zero. */
struct list_full {
    wr_queue_config_t cfg; /* 28 KB */
    wr_queue_stats_t stats;
};

/* One name; its config and stats in ctx->full (queue_list only): with
 * the configs inline, the scheduler's queue_names once a second for 2,000
 * queues was 59 MB allocated, page-faulted and moved by qsort, 24% of a
 * core in the release build in one piece each second (under ASan on a
 * loaded machine, loop stalls of 0.3-0.9 s). */
struct list_item {
    struct list_ctx *ctx;
    struct list_full *full; /* NULL for queue_names */
    bool ok;
    char name[WR_QUEUE_NAME_MAX + 1];
};

struct list_ctx {
    wr_store_list_cb cb;
    void *arg;
    wr_err_t err;
    bool names_only; /* queue_names: no queue_get */
    size_t n, outstanding;
    struct list_item *items;
    struct list_full *full; /* n of them; NULL for queue_names */
};

static int cmp_item(const void *a, const void *b)
{
    const struct list_item *x = a, *y = b;
    if (x->ok != y->ok)
        return x->ok ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* All sub-operations answered: call the user once and free. */
static void list_finish(struct list_ctx *ctx)
{
    wr_queue_info_t *infos = NULL;
    size_t k = 0;
    wr_err_t err = ctx->err;
    if (err == WR_OK && ctx->n > 0) {
        qsort(ctx->items, ctx->n, sizeof ctx->items[0], cmp_item);
        infos = calloc(ctx->n, sizeof *infos);
        if (!infos)
            err = WR_ENOMEM;
        for (size_t i = 0; infos && i < ctx->n && ctx->items[i].ok; i++, k++) {
            const struct list_item *it = &ctx->items[i];
            infos[k].name = it->name;
            infos[k].config = it->full ? &it->full->cfg : NULL;
            if (it->full)
                infos[k].stats = it->full->stats;
        }
    }
    if (err == WR_OK)
        ctx->cb(WR_OK, infos, k, ctx->arg);
    else
        ctx->cb(err, NULL, 0, ctx->arg);
    free(infos);
    free(ctx->items);
    free(ctx->full);
    free(ctx);
}

static void on_list_item(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    struct list_item *it = arg;
    struct list_ctx *ctx = it->ctx;
    if (err == WR_OK) {
        it->ok = true;
        it->full->cfg = *info->config;
        it->full->stats = info->stats;
    } else if (err != WR_ENOTFOUND && err != WR_ESHARD && ctx->err == WR_OK) {
        ctx->err = err; /* WR_ESHARD (a Redis Cluster shard down): that queue is
                           left out, the others listed (API.md, "Operations") */
    }
    if (--ctx->outstanding == 0)
        list_finish(ctx);
}

static void on_list_names(struct rstore *s, wr_err_t err, const redisReply *rep, void *arg)
{
    struct list_ctx *ctx = arg;
    if (err != WR_OK) {
        ctx->err = err;
        list_finish(ctx);
        return;
    }
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        ctx->err = WR_EPROTO;
        list_finish(ctx);
        return;
    }
    if (rep->elements > LIST_MAX) {
        ctx->err = WR_ELIMIT;
        list_finish(ctx);
        return;
    }
    if (rep->elements > 0) {
        ctx->items = calloc(rep->elements, sizeof *ctx->items);
        if (!ctx->names_only)
            ctx->full = calloc(rep->elements, sizeof *ctx->full);
        if (!ctx->items || (!ctx->names_only && !ctx->full)) {
            ctx->err = WR_ENOMEM;
            list_finish(ctx);
            return;
        }
    }
    ctx->n = rep->elements;
    ctx->outstanding = 1; /* held by this function until the loop ends */
    for (size_t i = 0; i < rep->elements; i++) {
        const redisReply *e = rep->element[i];
        struct list_item *it = &ctx->items[i];
        it->ctx = ctx;
        it->full = ctx->full ? &ctx->full[i] : NULL;
        if (!e || e->type != REDIS_REPLY_STRING) {
            if (ctx->err == WR_OK)
                ctx->err = WR_EPROTO;
            continue;
        }
        if (!wr_ids_valid_queue_n(e->str, e->len))
            continue; /* not a queue name of ours */
        memcpy(it->name, e->str, e->len);
        it->name[e->len] = '\0';
        if (ctx->names_only) {
            it->ok = true;
            continue;
        }
        wr_err_t e2 = wr_store_redis__queue_get(&s->base_, it->name, on_list_item, it);
        if (e2 == WR_OK)
            ctx->outstanding++;
        else if (e2 != WR_ESHARD && ctx->err == WR_OK)
            ctx->err = e2;
    }
    if (--ctx->outstanding == 0)
        list_finish(ctx);
}

static wr_err_t list_start(wr_store_t *st, bool names_only, wr_store_list_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!cb)
        return WR_EINVAL;
    if (!wr_redis_router_connected(s->conn))
        return WR_EUNAVAILABLE;
    struct list_ctx *ctx = calloc(1, sizeof *ctx);
    struct req *r = wr_store_redis__req_new(s, OP_NAMES, WR_REDIS_CONN_NO_SCRIPT, 0, ctx);
    if (!ctx || !r) {
        free(ctx);
        wr_store_redis__req_free(r);
        return WR_ENOMEM;
    }
    ctx->cb = cb;
    ctx->arg = arg;
    ctx->names_only = names_only;
    r->names = on_list_names;
    wr_err_t err = wr_store_redis__submit(s, r,
                                          wr_redis_conn_cmd_str(r->cmd, "SMEMBERS") &&
                                              wr_redis_conn_cmd_str(r->cmd, s->keys->queues));
    if (err != WR_OK)
        free(ctx);
    return err;
}

wr_err_t wr_store_redis__queue_list(wr_store_t *st, wr_store_list_cb cb, void *arg)
{
    return list_start(st, false, cb, arg);
}

wr_err_t wr_store_redis__queue_names(wr_store_t *st, wr_store_list_cb cb, void *arg)
{
    return list_start(st, true, cb, arg);
}
