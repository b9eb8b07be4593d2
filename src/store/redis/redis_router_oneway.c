/*
 * redis_router_oneway.c - the one-way commands of a Redis Cluster
 * (wr_redis_router_send_oneway, redis_router.h): sent at once to the
 * slot's primary, or held while it cannot be reached and sent again until
 * it answers (issue 37: with the {.global} shard down, the registry's
 * SADD of a PUT made every PUT and PATCH fail). The shared struct is
 * redis_router_internal.h.
 *
 * A held command goes as a command with a reply (wr_redis_router_submit:
 * MOVED, ASK, TRYAGAIN and CLUSTERDOWN are handled as for any command), one
 * per slot at a time so the order of a slot's commands (a DELETE's SREM
 * after a PUT's SADD) is kept; an unanswered one goes again at the next
 * tick. A restarted node answers CLUSTERDOWN until it has rejoined: a
 * fire-and-forget send would be lost there, a command is retried.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "store/redis/redis_router_internal.h"

void wr_redis_router__held_free(wr_redis_router_t *r, struct held *h)
{
    TAILQ_REMOVE(&r->held, h, link);
    r->nheld--;
    for (int i = 0; i < h->argc; i++)
        free(h->argv[i]);
    free(h);
}

static void on_held(wr_err_t err, const redisReply *rep, void *arg)
{
    struct held *h = arg;
    wr_redis_router_t *r = h->r;
    h->inflight = false;
    if (err == WR_ECANCELED)
        return; /* the router closes: router_free frees h */
    if (err != WR_OK)
        return; /* again at the next tick */
    if (rep->type == REDIS_REPLY_ERROR)
        wr_warn("%s: %s command failed: %s", r->copts.log_name, h->what, rep->str);
    wr_redis_router__held_free(r, h);
    if (r->nheld == 0)
        wr_info("%s: the held one-way commands were sent", r->copts.log_name);
    wr_redis_router__held_flush(r); /* the slot's next one */
}

void wr_redis_router__held_flush(wr_redis_router_t *r)
{
    struct held *h, *p;
    TAILQ_FOREACH(h, &r->held, link)
    {
        bool first = !h->inflight;
        for (p = TAILQ_FIRST(&r->held); first && p != h; p = TAILQ_NEXT(p, link))
            first = p->slot != h->slot;
        if (!first)
            continue;
        wr_redis_conn_cmd_t *cmd = wr_redis_conn_cmd_new(WR_REDIS_CONN_NO_SCRIPT, 4 * 1024);
        bool ok = cmd != NULL;
        for (int i = 0; ok && i < h->argc; i++)
            ok = wr_redis_conn_cmd_str(cmd, h->argv[i]);
        if (!ok) {
            wr_redis_conn_cmd_free(cmd);
            return;
        }
        if (wr_redis_router_submit(r, cmd, NULL, on_held, h) == WR_OK) /* takes cmd */
            h->inflight = true;
    }
}

wr_err_t wr_redis_router_send_oneway(wr_redis_router_t *r, const char *what, int argc,
                                     const char *const *argv)
{
    if (!r->cluster)
        return wr_redis_conn_send_oneway(r->single, what, argc, argv);
    if (argc < 2 || argc > WR_REDIS_ROUTER_ONEWAY_ARGS)
        return WR_EINVAL;
    unsigned slot = wr_redis_router_keyslot(argv[1], strlen(argv[1]));
    uint8_t k = r->have_map ? r->slot[slot] : NONE;
    bool behind = false; /* the slot's earlier commands are held: keep the order */
    struct held *h;
    TAILQ_FOREACH(h, &r->held, link)
    behind = behind || h->slot == slot;
    if (!behind && k != NONE && wr_redis_router__node_up(&r->nodes[k]))
        return wr_redis_conn_send_oneway(r->nodes[k].conn, what, argc, argv);
    wr_redis_router__request_refresh(r);
    if (r->nheld >= WR_REDIS_ROUTER_HELD_MAX)
        return WR_EUNAVAILABLE;
    if (!(h = calloc(1, sizeof *h)))
        return WR_ENOMEM;
    h->r = r;
    h->what = what;
    h->slot = slot;
    TAILQ_INSERT_TAIL(&r->held, h, link);
    r->nheld++;
    for (; h->argc < argc; h->argc++)
        if (!(h->argv[h->argc] = strdup(argv[h->argc]))) {
            wr_redis_router__held_free(r, h);
            return WR_ENOMEM;
        }
    if (r->nheld == 1)
        wr_warn("%s: the primary of slot %u is unreachable: %s command held until it is back",
                r->copts.log_name, slot, what);
    return WR_OK;
}
