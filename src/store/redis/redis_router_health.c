/*
 * redis_router_health.c - whether each primary of a Redis Cluster can
 * serve its slots, and the text /readyz shows (redis_router.h,
 * wr_redis_router_unreachable; the shared struct is
 * redis_router_internal.h).
 *
 * A primary cannot serve when its connection is down, when its node says
 * cluster_state:fail (every key answers CLUSTERDOWN: a node cut off from
 * the majority of primaries, issue 37), or, in durability mode, when
 * fewer of its replicas are online than --redis-wait-replicas (WAIT
 * cannot be acknowledged: every join is refused). The router asks each
 * connected primary every tick (wr_redis_router__probe) and once when it
 * connects; a CLUSTERDOWN "The cluster is down" reply to a command marks
 * the node at once. /readyz answers 503 when no primary can serve (the
 * keyless PING goes only to one that can), else 200 naming the others.
 */
#include <stdio.h>
#include <string.h>

#include "store/redis/redis_router_internal.h"

int wr_redis_router__node_why(const wr_redis_router_t *r, const node_t *n, char *why, size_t cap)
{
    unsigned want = r->copts.wait_replicas;
    if (!n->primary)
        return WR_REDIS_ROUTER__NOT_PRIMARY;
    if (!wr_redis_router__node_up(n))
        return WR_REDIS_ROUTER__UNREACHABLE;
    if (n->cluster_fail) {
        if (why)
            snprintf(why, cap, "cluster down: CLUSTERDOWN, cluster_state:fail");
        return WR_REDIS_ROUTER__CANNOT_SERVE;
    }
    if (want && n->repl_known && n->repl_online < want) {
        if (why)
            snprintf(why, cap, "%u of %u replicas online: joins refused (--redis-wait-replicas)",
                     n->repl_online, want);
        return WR_REDIS_ROUTER__CANNOT_SERVE;
    }
    return WR_REDIS_ROUTER__SERVES;
}

static void on_probe_state(wr_err_t err, const redisReply *rep, void *arg)
{
    node_t *n = arg; /* alive: a close or a reap answers before n goes */
    n->probing--;
    if (err == WR_OK && rep->type == REDIS_REPLY_STRING) {
        const char *st = strstr(rep->str, "cluster_state:");
        n->cluster_fail = st && strncmp(st + 14, "ok", 2) != 0;
    }
}

static void on_probe_repl(wr_err_t err, const redisReply *rep, void *arg)
{
    node_t *n = arg;
    n->probing--;
    if (err == WR_OK && rep->type == REDIS_REPLY_STRING) {
        unsigned k = 0;
        for (const char *p = rep->str; (p = strstr(p, "state=online")) != NULL; p++)
            k++;
        n->repl_online = k;
        n->repl_known = true;
    }
}

static void probe_send(node_t *n, const char *a, const char *b, wr_redis_conn_reply_cb cb)
{
    wr_redis_conn_cmd_t *cmd = wr_redis_conn_cmd_new(WR_REDIS_CONN_NO_SCRIPT, 32);
    if (!cmd || !wr_redis_conn_cmd_str(cmd, a) || !wr_redis_conn_cmd_str(cmd, b)) {
        wr_redis_conn_cmd_free(cmd);
        return;
    }
    if (wr_redis_conn_submit(n->conn, cmd, NULL, cb, n) == WR_OK) /* takes cmd */
        n->probing++;
}

void wr_redis_router__probe(node_t *n)
{
    if (n->probing || !wr_redis_router__node_up(n))
        return;
    probe_send(n, "CLUSTER", "INFO", on_probe_state);
    if (n->r->copts.wait_replicas)
        probe_send(n, "INFO", "replication", on_probe_repl);
}

/* Appends " SEP a-b" ranges of the slots owned by k (NONE: unowned). */
static void ranges(const wr_redis_router_t *r, uint8_t k, char *out, size_t cap)
{
    size_t used = strlen(out);
    const char *sep = "";
    for (size_t s = 0; s < WR_REDIS_ROUTER_SLOTS; s++) {
        if (r->slot[s] != k)
            continue;
        size_t e = s;
        while (e + 1 < WR_REDIS_ROUTER_SLOTS && r->slot[e + 1] == k)
            e++;
        int n = e > s ? snprintf(out + used, cap - used, "%s%zu-%zu", sep, s, e)
                      : snprintf(out + used, cap - used, "%s%zu", sep, s);
        if (n < 0 || (size_t)n >= cap - used)
            return;
        used += (size_t)n;
        sep = ",";
        s = e;
    }
}

size_t wr_redis_router_unreachable(const wr_redis_router_t *r, char *out, size_t cap)
{
    if (!out || cap == 0)
        return 0;
    out[0] = '\0';
    if (!r || !r->cluster)
        return 0;
    if (!r->have_map) {
        snprintf(out, cap, "no cluster node answered (slot map unknown)\n");
        return 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        const node_t *x = &r->nodes[i];
        char why[128] = "";
        int st = wr_redis_router__node_why(r, x, why, sizeof why);
        if (st == WR_REDIS_ROUTER__SERVES || st == WR_REDIS_ROUTER__NOT_PRIMARY)
            continue;
        char ad[WR_REDIS_URL_HOST_MAX + 16];
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s (slots ",
                 wr_redis_url_addr_format(x->host, x->port, ad, sizeof ad));
        ranges(r, (uint8_t)i, out, cap);
        used = strlen(out);
        snprintf(out + used, cap - used, ")%s%s\n", why[0] ? ": " : "", why);
        n++;
    }
    if (r->unowned) {
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "slots ");
        ranges(r, NONE, out, cap);
        used = strlen(out);
        snprintf(out + used, cap - used, " unowned\n");
        n++;
    }
    return n;
}
