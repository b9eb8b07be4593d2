/*
 * store_redis_report.c - the report operation of the Redis store
 * (store.h report; docs/API.md 1.3, "The sale's report"). Part of the
 * store_redis module; what the files share is store_redis_internal.h.
 *
 * Keys. A queue's report lives in one hash per day, wr:{q}:report:<day>
 * (the queue's hash tag, so a WRITE is one script on the queue's slot of
 * a cluster), apart from the queue's keys: queue_delete.lua does not
 * touch it, and it goes by PEXPIREAT when its kept days are over. The
 * registry of reports is one hash, wr:reports (wr:{.global}:reports on a
 * cluster, in the global keys' home slot).
 *
 *   WRITE  report.lua (lib.lua prepended: it samples the queue's stats in
 *          the same atomic step as the adds; its arguments: A_REPORT in
 *          scripts.def)
 *   READ   HGETALL of the day's hash
 *   INDEX  report_index.lua on the registry
 * Every answer is a flat array of strings, handed to the caller as pairs.
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ids.h"
#include "core/report.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/store_redis_internal.h"

#define PAIRS_MAX 200000 /* fields in one answer, at most (a day's map is far fewer) */

wr_err_t wr_store_redis__report(wr_store_t *st, const wr_store_report_req_t *req,
                                wr_store_report_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_store_valid_report(req) || !cb || (req->queue && !wr_ids_valid_queue(req->queue)))
        return WR_EINVAL;
    if (!wr_redis_router_connected(s->conn))
        return WR_EUNAVAILABLE;
    struct req *r = NULL;
    bool ok = false;
    char day_key[WR_QUEUE_NAME_MAX + 48];
    if (req->queue)
        snprintf(day_key, sizeof day_key, "wr:{%s}:report:%lld", req->queue, (long long)req->day);
    switch (req->kind) {
    case WR_STORE_REPORT_WRITE: {
        int args = 3 + NKEYS + 4 + 2 * (int)req->n_adds;
        r = wr_store_redis__req_new_args(s, OP_REPORT, SC_REPORT, args < 32 ? 32 : args,
                                         req->n_adds * 48 + 128, arg);
        if (!r)
            return WR_ENOMEM;
        /* A_REPORT's rows (scripts.def), in order, then the adds */
        ok = wr_store_redis__arg_queue_keys(r, req->queue) &&
             wr_redis_conn_cmd_str(r->cmd, day_key) &&
             wr_redis_conn_cmd_fmt(r->cmd, "%lld", (long long)req->expire_at_ms) &&
             wr_redis_conn_cmd_str(r->cmd, req->sample ? req->sample : "") &&
             wr_redis_conn_cmd_fmt(r->cmd, "%.17g", req->sample ? req->rate : 0.0);
        for (size_t i = 0; ok && i < req->n_adds; i++)
            ok = wr_redis_conn_cmd_str(r->cmd, req->adds[i].field) &&
                 wr_redis_conn_cmd_fmt(r->cmd, "%lld", (long long)req->adds[i].n);
        break;
    }
    case WR_STORE_REPORT_READ:
        r = wr_store_redis__req_new(s, OP_REPORT, WR_REDIS_CONN_NO_SCRIPT, 0, arg);
        if (!r)
            return WR_ENOMEM;
        ok = wr_redis_conn_cmd_str(r->cmd, "HGETALL") && wr_redis_conn_cmd_str(r->cmd, day_key);
        break;
    case WR_STORE_REPORT_INDEX:
        r = wr_store_redis__req_new(s, OP_REPORT, SC_REPORT_INDEX, 0, arg);
        if (!r)
            return WR_ENOMEM;
        ok = wr_redis_conn_cmd_str(r->cmd, "1") &&
             wr_redis_conn_cmd_str(r->cmd, s->keys->reports) &&
             wr_redis_conn_cmd_str(r->cmd, req->queue ? req->queue : "") &&
             (req->queue && req->lookup
                  ? wr_redis_conn_cmd_str(r->cmd, "lookup")
                  : wr_redis_conn_cmd_fmt(r->cmd, "%lld",
                                          (long long)(req->queue ? req->first_ms : 0))) &&
             wr_redis_conn_cmd_fmt(r->cmd, "%lld", (long long)(req->queue ? req->deleted_ms : -1));
        break;
    }
    r->cb.report = cb;
    return wr_store_redis__submit(s, r, ok);
}

void wr_store_redis__report_reply(struct req *r, wr_err_t err, const redisReply *rep)
{
    if (err != WR_OK) {
        r->cb.report(err, NULL, 0, r->arg);
        return;
    }
    if (rep && rep->type == REDIS_REPLY_INTEGER) { /* WRITE */
        r->cb.report(WR_OK, NULL, 0, r->arg);
        return;
    }
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements % 2 != 0 ||
        rep->elements / 2 > PAIRS_MAX) {
        r->cb.report(rep && rep->type == REDIS_REPLY_ERROR ? WR_EUNAVAILABLE : WR_EPROTO, NULL, 0,
                     r->arg);
        return;
    }
    size_t n = rep->elements / 2;
    wr_store_report_pair_t *pairs = calloc(n ? n : 1, sizeof *pairs);
    if (!pairs) {
        r->cb.report(WR_ENOMEM, NULL, 0, r->arg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const redisReply *k = rep->element[2 * i], *v = rep->element[2 * i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) {
            free(pairs);
            r->cb.report(WR_EPROTO, NULL, 0, r->arg);
            return;
        }
        pairs[i] = (wr_store_report_pair_t){k->str, v->str};
    }
    r->cb.report(WR_OK, pairs, n, r->arg);
    free(pairs);
}
