/*
 * store_redis_push.c - Web Push subscriptions on the Redis store (store.h
 * push_sub; docs/API.md 1.3, "Your turn, off the page"). Part of the
 * store_redis module; what the files share is store_redis_internal.h.
 *
 * A queue's subscriptions are one hash, wr:{q}:push (lib.lua KEYS[17]: the
 * queue's hash tag, so every script touching it is one script on the
 * queue's slot of a cluster), user -> the subscription packed into one
 * string here (core/pushsub.h wr_pushsub_pack; the scripts store and hand
 * it back as it is, never read it). The rules are the embedded store's
 * (memq_push.c), kept by the scripts:
 *   push.lua     sets or deletes one, after a status of the person (only
 *                someone waiting, in the pre-queue or held);
 *   leave.lua    deletes it;
 *   admit.lua    claims the admitted people's (taken out of the hash in the
 *                tick's own script: exactly one admit call - one instance -
 *                sends each admission's push) and hands every subscription
 *                over once per closing (state pushClosed); script_reply.c
 *                unpacks them into wr_admit_t.pushes;
 *   lib.lua      a subscribed person is never away (L.away), nor counted as
 *                passed over (lib_entry.lua entry_passed); entry answers
 *                carry `subscribed` (entry_subscribed);
 *   queue_delete.lua deletes the hash.
 */
#include <string.h>

#include "base/ids.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/script_rows.h"
#include "store/redis/store_redis_internal.h"

WR_ROWS_ORDER(A_PUSH, USER, SUB); /* push_sub's */

wr_err_t wr_store_redis__push_sub(wr_store_t *st, const char *q, const char *u,
                                  const wr_pushsub_t *sub, wr_store_done_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    char packed[WR_PUSHSUB_PACKED_MAX + 1] = "";
    size_t len = 0;
    if (!wr_ids_valid_queue(q) || !wr_ids_valid_user(u) || !cb ||
        (sub && wr_pushsub_pack(sub, packed, sizeof packed, &len) != WR_OK))
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_PUSH, SC_PUSH, strlen(u) + len, arg, &err);
    if (!r)
        return err;
    r->cb.done = cb;
    return wr_store_redis__submit(s, r,
                                  wr_store_redis__arg_queue_keys(r, q) &&
                                      wr_redis_conn_cmd_str(r->cmd, u) &&
                                      wr_redis_conn_cmd_str(r->cmd, packed));
}
