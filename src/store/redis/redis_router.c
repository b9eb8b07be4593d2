/*
 * redis_router.c - where each command of the Redis store goes
 * (redis_router.h): the one connection, or the primary of its slot in a
 * Redis Cluster.
 *
 * Why here: Debian 12 has no maintained cluster client (hiredis-cluster
 * needs hiredis >= 1.0, libvalkey is not packaged), and redis_conn already
 * owns the sockets, timeouts, AUTH, TLS, script loading and connect checks:
 * a cluster is one redis_conn per primary plus this table.
 *
 * Slot map
 *   slot[16384] holds a node index (NONE: nobody owns it); nodes[] holds
 *   the addresses the last map or a later redirection named, each with its
 *   redis_conn once it was a primary or a redirection's target (a free
 *   entry, port 0, is used again). The map is asked with CLUSTER SLOTS
 *   (Redis 3+; CLUSTER SHARDS is 7.0+ only) on a connection of its own
 *   (redis_io, the same AUTH/TLS), made to the connected primaries first,
 *   then the URL's seeds, then the other known nodes, one after the other
 *   until one answers. The endpoint types (ip, hostname, unknown-endpoint:
 *   NULL, "" or "?" mean the node asked) are redis_endpoint.c's.
 *   Refresh: wr_redis_router__request_refresh() arms refresh_ev for now, or for
 *   last + REFRESH_MIN_MS; while a question is out (mio) nothing more
 *   is asked. So a MOVED storm after a reshard (every queue of the moved
 *   slots answering MOVED once) costs one CLUSTER SLOTS per
 *   WR_REDIS_ROUTER_REFRESH_MIN_MS, and every MOVED also sets its slot's
 *   owner at once, so the next command of that queue goes straight there.
 *   tick_ev (every TICK_MS) asks again while a primary of the map is not
 *   connected or slots have no owner (a failover is noticed without a
 *   command having to fail first), and when the map is MAP_MAX_AGE_MS old
 *   (a node only an ASK named, or one removed without a MOVED, is noticed).
 *
 *   Nodes that stop being primaries but are still in the map (replicas)
 *   keep their connection (commands are no longer routed to them; a
 *   demoted one answers MOVED). A node the map no longer names (removed
 *   from the cluster, or a primary left without slots) is dropped by
 *   reap() after that map and on every tick, once idle: nothing pending on
 *   its connection and no command waiting for it, so closing it calls no
 *   callback and none is lost. A node killed for good that is still in the
 *   map keeps reconnecting with the connection's backoff (logged at most
 *   every 30 s).
 *
 * Health (redis_router_health.c): every tick each connected primary is
 *   asked CLUSTER INFO (and INFO replication in durability mode), so
 *   /readyz can name a primary that is connected but cannot serve.
 *
 * One-way commands (redis_router_oneway.c): sent at once, or held while
 *   their slot's primary is down and sent again from the tick (and when a
 *   node connects) until answered, in order per slot.
 *
 * Redirections (the connection hands them to redirect(), before any
 *   callback): MOVED and ASK are followed while the command has been
 *   redirected fewer than REDIRECTS_MAX times (a MOVED then an ASK during a
 *   migration is two); beyond that the command fails WR_EUNAVAILABLE
 *   (degraded mode, failPolicy). A target not connected (a node new to the
 *   router, or one reconnecting) is connected first: the command waits
 *   (struct retry with `to`) until node_started() wakes it or every
 *   RETRY_MS, and fails only when the command timeout has passed.
 *   TRYAGAIN and CLUSTERDOWN wait RETRY_MS on a timer of their own (struct
 *   retry, listed for close) and go again to the slot's owner, until the
 *   command timeout has passed since the first send.
 *
 * Reentrancy: a command's callback may close the router (the store's
 *   close). So every path that may answer a command (cmd_fail, the
 *   started callback) does it last and touches nothing of the router after.
 *   Closing from inside redis_conn's callbacks is allowed by redis_conn.
 */
#include "store/redis/redis_router.h"
#include "store/redis/redis_router_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "base/clock.h"
#include "base/log.h"
#include "store/redis/redis_endpoint.h"
#include "store/redis/redis_io.h"
#include "store/redis/redis_url.h"

/* ---------------------------------------------------------------- slots */

static uint16_t crc16(const unsigned char *p, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

unsigned wr_redis_router_keyslot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (open) {
        size_t rest = len - (size_t)(open - key) - 1;
        const char *close = memchr(open + 1, '}', rest);
        if (close && close > open + 1)
            return crc16((const unsigned char *)open + 1, (size_t)(close - open - 1)) &
                   (WR_REDIS_ROUTER_SLOTS - 1);
    }
    return crc16((const unsigned char *)key, len) & (WR_REDIS_ROUTER_SLOTS - 1);
}

/* ---------------------------------------------------------------- nodes */

static void node_started(wr_err_t err, const char *msg, void *arg);

/* The node at host:port (added when new, in a free entry first); NULL
 * when the table is full. */
static node_t *node_find(wr_redis_router_t *r, const char *host, int port, bool add)
{
    node_t *n = NULL;
    for (size_t i = 0; i < r->nnodes; i++) {
        if (r->nodes[i].port == port && strcmp(r->nodes[i].host, host) == 0)
            return &r->nodes[i];
        if (!n && r->nodes[i].port == 0)
            n = &r->nodes[i];
    }
    if (!add || (!n && r->nnodes == WR_REDIS_ROUTER_NODES_MAX) ||
        strlen(host) > WR_REDIS_URL_HOST_MAX)
        return NULL;
    if (!n)
        n = &r->nodes[r->nnodes++];
    memset(n, 0, sizeof *n);
    memcpy(n->host, host, strlen(host) + 1);
    n->port = port;
    n->r = r;
    return n;
}

/* Opens n's connection (the store's options, n's address). */
static void node_open(wr_redis_router_t *r, node_t *n)
{
    if (n->conn)
        return;
    wr_redis_url_t ep = r->ep;
    ep.kind = r->ep.tls ? WR_REDIS_URL_TLS : WR_REDIS_URL_TCP;
    memcpy(ep.host, n->host, sizeof ep.host);
    ep.port = n->port;
    ep.db = -1;
    ep.nseeds = 0;
    wr_redis_conn_opts_t o = r->copts;
    o.url = NULL;
    o.endpoint = &ep;
    o.env_password = NULL; /* applied to r->ep already */
    o.on_started = node_started;
    o.started_arg = n;
    o.redirect_arg = n; /* a redirect names its endpoint relative to n */
    wr_err_t err = wr_redis_conn_open(r->base, &o, &n->conn);
    wr_redis_url_wipe(&ep);
    if (err != WR_OK) {
        n->conn = NULL;
        n->first_done = true;
        wr_warn("%s: cannot open a connection to cluster node %s:%d: %s", r->copts.log_name,
                n->host, n->port, wr_strerror(err));
    }
}

bool wr_redis_router__node_up(const node_t *n)
{
    return n && n->conn && wr_redis_conn_connected(n->conn);
}

/* Drops the nodes the last map did not name once nothing of theirs is in
 * flight (no command pending on the connection, none waiting for it): the
 * connection closed (idle: no callback runs), the entry free again. */
static void reap(wr_redis_router_t *r)
{
    for (size_t i = 0; i < r->nnodes; i++) {
        node_t *n = &r->nodes[i];
        bool awaited = false;
        struct retry *t;
        TAILQ_FOREACH(t, &r->retries, link)
        awaited = awaited || t->to == n;
        if (!n->stale || n->primary || awaited || (n->conn && wr_redis_conn_pending(n->conn)))
            continue;
        if (n->conn)
            wr_info("%s: cluster node %s:%d left the slot map: its connection is closed",
                    r->copts.log_name, n->host, n->port);
        wr_redis_conn_t *c = n->conn;
        memset(n, 0, sizeof *n);
        wr_redis_conn_close(c);
    }
    while (r->nnodes > 0 && r->nodes[r->nnodes - 1].port == 0)
        r->nnodes--;
}

/* ---------------------------------------------------------- first attempt */

/* Calls on_started once the map's question ended and every primary it
 * named had its first attempt. Last: the callback may close r. */
static void check_started(wr_redis_router_t *r)
{
    if (r->started || !r->map_first_done)
        return;
    for (size_t i = 0; i < r->nnodes; i++)
        if (r->nodes[i].primary && r->nodes[i].conn && !r->nodes[i].first_done)
            return;
    r->started = true;
    if (r->on_started)
        r->on_started(WR_OK, NULL, r->started_arg);
}

static void node_started(wr_err_t err, const char *msg, void *arg)
{
    (void)msg; /* the connection logged it */
    node_t *n = arg;
    n->first_done = true;
    if (err == WR_OK) {
        wr_redis_router__probe(n);
        wr_redis_router__held_flush(n->r);
    }
    /* commands redirected to n while it connected go now (on_retry) */
    struct retry *t;
    TAILQ_FOREACH(t, &n->r->retries, link)
    if (t->to == n)
        event_active(t->ev, EV_TIMEOUT, 1);
    check_started(n->r); /* last */
}

/* -------------------------------------------------------------- the map */

static void try_next(wr_redis_router_t *r);

/* Applies a CLUSTER SLOTS answer; false when it does not parse (nothing
 * changed). */
static bool apply_map(wr_redis_router_t *r, const redisReply *rep, const char *asked)
{
    uint8_t *next = r->next;
    if (rep->type != REDIS_REPLY_ARRAY)
        return false;
    memset(next, NONE, sizeof r->next);
    for (size_t i = 0; i < rep->elements; i++) {
        const redisReply *e = rep->element[i];
        char host[WR_REDIS_URL_HOST_MAX + 1];
        int port;
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[0]->type != REDIS_REPLY_INTEGER ||
            e->element[1]->type != REDIS_REPLY_INTEGER ||
            !wr_redis_endpoint_entry(e->element[2], asked, host, sizeof host, &port))
            return false;
        long long a = e->element[0]->integer, b = e->element[1]->integer;
        if (a < 0 || b < a || b >= WR_REDIS_ROUTER_SLOTS)
            return false;
        node_t *n = node_find(r, host, port, true);
        if (!n)
            return false;
        memset(next + a, (int)(n - r->nodes), (size_t)(b - a + 1));
    }
    /* the nodes it names (primaries and replicas) stay; the others are
     * dropped once idle (reap) */
    for (size_t i = 0; i < r->nnodes; i++)
        r->nodes[i].stale = r->nodes[i].port != 0;
    for (size_t i = 0; i < rep->elements; i++) {
        const redisReply *e = rep->element[i];
        for (size_t j = 2; j < e->elements; j++) {
            char host[WR_REDIS_URL_HOST_MAX + 1];
            int port;
            node_t *n = NULL;
            if (wr_redis_endpoint_entry(e->element[j], asked, host, sizeof host, &port) &&
                (n = node_find(r, host, port, false)) != NULL)
                n->stale = false;
        }
    }
    memcpy(r->slot, next, sizeof r->slot);
    r->unowned = 0;
    for (size_t i = 0; i < r->nnodes; i++)
        r->nodes[i].primary = false;
    for (size_t s = 0; s < WR_REDIS_ROUTER_SLOTS; s++) {
        if (r->slot[s] == NONE)
            r->unowned++;
        else
            r->nodes[r->slot[s]].primary = true;
    }
    r->have_map = true;
    for (size_t i = 0; i < r->nnodes; i++)
        if (r->nodes[i].primary)
            node_open(r, &r->nodes[i]);
    reap(r);
    return true;
}

static void map_done(wr_redis_router_t *r)
{
    r->last_refresh_ms = wr_clock_mono_ms();
    if (!r->map_first_done) {
        r->map_first_done = true;
        check_started(r); /* last */
    }
}

static void on_slots(wr_err_t err, const redisReply *rep, void *arg)
{
    wr_redis_router_t *r = arg;
    wr_redis_io_t *io = r->mio;
    const wr_redis_url_addr_t *a = &r->cand[r->mtry - 1];
    if (err == WR_OK && apply_map(r, rep, a->host)) {
        r->mio = NULL;
        wr_redis_io_free(io);
        r->last_msg[0] = '\0';
        map_done(r);
        return;
    }
    char ad[WR_REDIS_URL_HOST_MAX + 16];
    wr_redis_url_addr_format(a->host, a->port, ad, sizeof ad);
    snprintf(r->last_msg, sizeof r->last_msg, "%s: CLUSTER SLOTS: %s", ad,
             err != WR_OK                     ? wr_strerror(err)
             : rep->type == REDIS_REPLY_ERROR ? rep->str
                                              : "an answer that does not parse");
    r->mio = NULL;
    wr_redis_io_free(io);
    try_next(r);
}

static void on_map_ready(wr_redis_io_t *io, void *arg)
{
    wr_redis_router_t *r = arg;
    static const char *const argv[] = {"CLUSTER", "SLOTS"};
    if (wr_redis_io_command(io, 2, argv, NULL, 0, on_slots, r) != WR_OK) {
        r->mio = NULL;
        wr_redis_io_free(io);
        try_next(r);
    }
}

static void on_map_close(wr_redis_io_t *io, wr_err_t err, const char *msg, void *arg)
{
    (void)err;
    wr_redis_router_t *r = arg;
    if (io != r->mio)
        return;
    snprintf(r->last_msg, sizeof r->last_msg, "%s", msg);
    r->mio = NULL;
    wr_redis_io_free(io);
    try_next(r);
}

/* Asks the next candidate; when none is left, the question ended without
 * a map (the tick asks again). */
static void try_next(wr_redis_router_t *r)
{
    while (r->mtry < r->ncand) {
        const wr_redis_url_addr_t *a = &r->cand[r->mtry++];
        wr_redis_io_opts_t o = {0};
        o.host = a->host;
        o.port = a->port;
        o.tls = r->ep.tls ? r->tls : NULL;
        o.user = r->ep.has_user ? r->ep.user : NULL;
        o.password = r->ep.has_password ? r->ep.password : NULL;
        o.db = -1;
        o.connect_timeout_ms = r->copts.connect_timeout_ms;
        o.command_timeout_ms = r->copts.connect_timeout_ms;
        o.on_ready = on_map_ready;
        o.on_close = on_map_close;
        o.arg = r;
        if (wr_redis_io_connect(r->base, &o, &r->mio) == WR_OK)
            return;
        r->mio = NULL;
    }
    wr_warn("%s: no cluster node answered CLUSTER SLOTS (last: %s)", r->copts.log_name,
            r->last_msg[0] ? r->last_msg : "none tried");
    r->last_refresh_ms = wr_clock_mono_ms();
    if (!r->map_first_done) {
        r->map_first_done = true;
        if (!r->started) {
            r->started = true;
            if (r->on_started)
                r->on_started(WR_EUNAVAILABLE, r->last_msg, r->started_arg); /* last */
        }
    }
}

static void add_cand(wr_redis_router_t *r, const char *host, int port)
{
    for (size_t i = 0; i < r->ncand; i++)
        if (r->cand[i].port == port && strcmp(r->cand[i].host, host) == 0)
            return;
    if (r->ncand == sizeof r->cand / sizeof r->cand[0])
        return;
    memcpy(r->cand[r->ncand].host, host, strlen(host) + 1);
    r->cand[r->ncand++].port = port;
}

static void on_refresh(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_redis_router_t *r = arg;
    if (r->mio)
        return;
    r->ncand = r->mtry = 0;
    for (size_t i = 0; i < r->nnodes; i++)
        if (r->nodes[i].primary && wr_redis_router__node_up(&r->nodes[i]))
            add_cand(r, r->nodes[i].host, r->nodes[i].port);
    for (size_t i = 0; i < r->ep.nseeds; i++)
        add_cand(r, r->ep.seeds[i].host, r->ep.seeds[i].port);
    for (size_t i = 0; i < r->nnodes; i++)
        if (r->nodes[i].port)
            add_cand(r, r->nodes[i].host, r->nodes[i].port);
    r->last_msg[0] = '\0';
    try_next(r);
}

void wr_redis_router__request_refresh(wr_redis_router_t *r)
{
    if (!r->cluster || r->mio || evtimer_pending(r->refresh_ev, NULL))
        return;
    int64_t wait = r->last_refresh_ms + WR_REDIS_ROUTER_REFRESH_MIN_MS - wr_clock_mono_ms();
    struct timeval tv = wr_clock_tv_ms(wait > 0 ? (uint64_t)wait : 0);
    evtimer_add(r->refresh_ev, &tv);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_redis_router_t *r = arg;
    bool want =
        !r->have_map || r->unowned > 0 || wr_clock_mono_ms() - r->last_refresh_ms >= MAP_MAX_AGE_MS;
    for (size_t i = 0; i < r->nnodes; i++) {
        node_t *n = &r->nodes[i];
        want = want || (n->primary && !wr_redis_router__node_up(n));
        if (wr_redis_router__node_up(n) && n->primary)
            wr_redis_router__probe(n);
        else
            n->cluster_fail = n->repl_known = false; /* asked again once it is back */
    }
    reap(r);
    wr_redis_router__held_flush(r);
    if (want)
        wr_redis_router__request_refresh(r);
}

/* --------------------------------------------------------------- routing */

/* The connection of cmd's slot (or, without a key, the first primary
 * connected); NULL when none. */
static wr_redis_conn_t *route(wr_redis_router_t *r, const wr_redis_conn_cmd_t *cmd)
{
    size_t len;
    const char *key = wr_redis_conn_cmd_key(cmd, &len);
    if (!r->have_map)
        return NULL;
    if (!key) { /* PING (/readyz): a primary that can serve */
        for (size_t i = 0; i < r->nnodes; i++)
            if (wr_redis_router__node_why(r, &r->nodes[i], NULL, 0) == WR_REDIS_ROUTER__SERVES)
                return r->nodes[i].conn;
        return NULL;
    }
    uint8_t k = r->slot[wr_redis_router_keyslot(key, len)];
    return k == NONE || !wr_redis_router__node_up(&r->nodes[k]) ? NULL : r->nodes[k].conn;
}

static void retry_free(struct retry *t)
{
    TAILQ_REMOVE(&t->r->retries, t, link);
    event_free(t->ev);
    free(t);
}

static void on_retry(evutil_socket_t fd, short what, void *arg);

/* Holds cmd for on_retry: in RETRY_MS, or (to: waiting for to's
 * connection) at the latest then; false when the command timeout since
 * its first send would pass first (or out of memory): cmd is the
 * caller's. */
static bool retry_arm(wr_redis_router_t *r, wr_redis_conn_cmd_t *cmd, node_t *to, bool ask)
{
    int64_t left =
        wr_redis_conn_cmd_born_ms(cmd) + r->copts.command_timeout_ms - wr_clock_mono_ms();
    if (to ? left <= 0 : left <= RETRY_MS)
        return false;
    struct retry *t = calloc(1, sizeof *t);
    if (!t || !(t->ev = evtimer_new(r->base, on_retry, t))) {
        free(t);
        return false;
    }
    t->r = r;
    t->cmd = cmd;
    t->to = to;
    t->ask = ask;
    TAILQ_INSERT_TAIL(&r->retries, t, link);
    struct timeval tv = wr_clock_tv_ms(left < RETRY_MS ? (uint64_t)left : RETRY_MS);
    evtimer_add(t->ev, &tv);
    return true;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct retry *t = arg;
    wr_redis_router_t *r = t->r;
    wr_redis_conn_cmd_t *cmd = t->cmd;
    node_t *to = t->to;
    bool ask = t->ask;
    retry_free(t);
    if (to && !wr_redis_router__node_up(to) && retry_arm(r, cmd, to, ask))
        return; /* still connecting, time left */
    wr_redis_conn_t *c = to ? (wr_redis_router__node_up(to) ? to->conn : NULL) : route(r, cmd);
    if (!c || wr_redis_conn_resubmit(c, cmd, ask) != WR_OK) {
        wr_redis_router__request_refresh(r);
        wr_redis_conn_cmd_fail(cmd, WR_EUNAVAILABLE); /* last */
    }
}

static bool on_redirect(void *arg, wr_redis_conn_cmd_t *cmd, const redisReply *rep)
{
    node_t *from = arg;
    wr_redis_router_t *r = from->r;
    const char *s = rep->str;
    bool moved = strncmp(s, "MOVED ", 6) == 0, ask = strncmp(s, "ASK ", 4) == 0;
    if (moved || ask) {
        unsigned slot;
        char host[WR_REDIS_URL_HOST_MAX + 1];
        int port;
        node_t *n = NULL;
        if (wr_redis_conn_cmd_redirects(cmd) < REDIRECTS_MAX &&
            wr_redis_endpoint_redirect(s, from->host, &slot, host, sizeof host, &port))
            n = node_find(r, host, port, true);
        if (n)
            n->stale = false;
        if (n && moved) {
            /* the owner is known now: the queue's next command goes there */
            r->slot[slot] = (uint8_t)(n - r->nodes);
            n->primary = true;
            wr_redis_router__request_refresh(r);
        }
        if (n && !wr_redis_router__node_up(n)) {
            /* a node not connected (yet): connect, then send, within the
             * command timeout (node_started wakes the wait up) */
            node_open(r, n);
            if (retry_arm(r, cmd, n, ask))
                return true;
        } else if (n && wr_redis_conn_resubmit(n->conn, cmd, ask) == WR_OK) {
            return true;
        }
        wr_redis_conn_cmd_fail(cmd, WR_EUNAVAILABLE); /* last */
        return true;
    }
    /* TRYAGAIN (a migration in progress), CLUSTERDOWN (no owner, the
     * cluster failing): again in RETRY_MS, within the command timeout */
    if (strncmp(s, "CLUSTERDOWN", 11) == 0) {
        if (strncmp(s, "CLUSTERDOWN The cluster is down", 31) == 0)
            from->cluster_fail = true; /* until its next CLUSTER INFO says ok */
        wr_redis_router__request_refresh(r);
    }
    if (!retry_arm(r, cmd, NULL, false))
        wr_redis_conn_cmd_fail(cmd, WR_EUNAVAILABLE); /* last */
    return true;
}

/* ---------------------------------------------------------------- public */

wr_err_t wr_redis_router_shard_err(const wr_redis_router_t *r, wr_err_t err)
{
    return r && r->cluster && err == WR_EUNAVAILABLE && wr_redis_router_connected(r) ? WR_ESHARD
                                                                                     : err;
}

bool wr_redis_router_is_cluster(const wr_redis_router_t *r)
{
    return r && r->cluster;
}

bool wr_redis_router_connected(const wr_redis_router_t *r)
{
    if (!r)
        return false;
    if (!r->cluster)
        return wr_redis_conn_connected(r->single);
    for (size_t i = 0; r->have_map && i < r->nnodes; i++)
        if (r->nodes[i].primary && wr_redis_router__node_up(&r->nodes[i]))
            return true;
    return false;
}

wr_err_t wr_redis_router_submit(wr_redis_router_t *r, wr_redis_conn_cmd_t *cmd,
                                wr_redis_conn_wait_fn wait_fn, wr_redis_conn_reply_cb cb, void *arg)
{
    if (!r->cluster)
        return wr_redis_conn_submit(r->single, cmd, wait_fn, cb, arg);
    if (!cmd)
        return WR_EINVAL;
    wr_redis_conn_t *c = route(r, cmd);
    if (!c) {
        wr_redis_conn_cmd_free(cmd);
        wr_redis_router__request_refresh(r);
        return WR_EUNAVAILABLE;
    }
    return wr_redis_conn_submit(c, cmd, wait_fn, cb, arg);
}

static void router_free(wr_redis_router_t *r)
{
    if (r->nheld)
        wr_warn("%s: %zu held one-way commands not sent (the store closes)", r->copts.log_name,
                r->nheld);
    while (!TAILQ_EMPTY(&r->held))
        wr_redis_router__held_free(r, TAILQ_FIRST(&r->held));
    if (r->refresh_ev)
        event_free(r->refresh_ev);
    if (r->tick_ev)
        event_free(r->tick_ev);
    wr_redis_io_tls_free(r->tls);
    wr_redis_url_wipe(&r->ep);
    free(r->tls_ca);
    free(r->tls_cert);
    free(r->tls_key);
    free(r);
}

wr_err_t wr_redis_router_open(struct event_base *base, const wr_redis_conn_opts_t *opts,
                              wr_redis_router_t **out)
{
    if (!base || !opts || !out || opts->redirect || opts->endpoint)
        return WR_EINVAL;
    wr_redis_router_t *r = calloc(1, sizeof *r);
    if (!r)
        return WR_ENOMEM;
    r->base = base;
    TAILQ_INIT(&r->retries);
    TAILQ_INIT(&r->held);
    char msg[300] = "";
    const char *name = opts->log_name ? opts->log_name : "redis_conn";
    wr_err_t err = wr_redis_url_parse(opts->url, &r->ep, NULL, 0);
    if (err != WR_OK || r->ep.kind != WR_REDIS_URL_CLUSTER) {
        wr_redis_url_wipe(&r->ep);
        err = wr_redis_conn_open(base, opts, &r->single);
        if (err != WR_OK) {
            free(r);
            return err;
        }
        *out = r;
        return WR_OK;
    }
    r->cluster = true;
    err = wr_redis_url_set_env_password(&r->ep, opts->env_password, msg, sizeof msg);
    if (err != WR_OK) {
        wr_error("%s: %s", name, msg);
        goto fail;
    }
    r->copts = *opts;
    r->copts.log_name = name;
    r->copts.redirect = on_redirect;
    r->copts.redirect_arg = r;
    if ((opts->tls_ca_file && !(r->tls_ca = strdup(opts->tls_ca_file))) ||
        (opts->tls_cert_file && !(r->tls_cert = strdup(opts->tls_cert_file))) ||
        (opts->tls_key_file && !(r->tls_key = strdup(opts->tls_key_file)))) {
        err = WR_ENOMEM;
        goto fail;
    }
    r->copts.tls_ca_file = r->tls_ca;
    r->copts.tls_cert_file = r->tls_cert;
    r->copts.tls_key_file = r->tls_key;
    r->copts.url = NULL;
    if (!r->copts.connect_timeout_ms)
        r->copts.connect_timeout_ms = 1000;
    if (!r->copts.command_timeout_ms)
        r->copts.command_timeout_ms = 250;
    r->on_started = opts->on_started;
    r->started_arg = opts->started_arg;
    if (r->ep.tls) {
        wr_redis_io_tls_opts_t t = {r->tls_ca, r->tls_cert, r->tls_key};
        err = wr_redis_io_tls_new(&t, &r->tls, msg, sizeof msg);
        if (err != WR_OK) {
            if (err == WR_EINVAL)
                wr_error("%s: TLS: %s", name, msg);
            goto fail;
        }
    }
    memset(r->slot, NONE, sizeof r->slot);
    r->refresh_ev = evtimer_new(base, on_refresh, r);
    r->tick_ev = event_new(base, -1, EV_PERSIST, on_tick, r);
    if (!r->refresh_ev || !r->tick_ev) {
        err = WR_ENOMEM;
        goto fail;
    }
    struct timeval tv = wr_clock_tv_ms(TICK_MS);
    evtimer_add(r->tick_ev, &tv);
    struct timeval zero = {0, 0};
    evtimer_add(r->refresh_ev, &zero); /* the first question, from the loop */
    *out = r;
    return WR_OK;
fail:
    router_free(r);
    return err;
}

void wr_redis_router_close(wr_redis_router_t *r)
{
    if (!r)
        return;
    if (!r->cluster) {
        wr_redis_conn_close(r->single);
        free(r);
        return;
    }
    evtimer_del(r->refresh_ev);
    evtimer_del(r->tick_ev);
    wr_redis_io_t *io = r->mio;
    r->mio = NULL;
    wr_redis_io_free(io);
    /* callbacks run below may not reach r: the store marks itself closing */
    struct retry *t;
    while ((t = TAILQ_FIRST(&r->retries)) != NULL) {
        wr_redis_conn_cmd_t *cmd = t->cmd;
        retry_free(t);
        wr_redis_conn_cmd_fail(cmd, WR_ECANCELED);
    }
    for (size_t i = 0; i < r->nnodes; i++) {
        wr_redis_conn_t *c = r->nodes[i].conn;
        r->nodes[i].conn = NULL;
        wr_redis_conn_close(c);
    }
    router_free(r);
}
