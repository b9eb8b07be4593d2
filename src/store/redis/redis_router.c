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
 *   every address the map or a redirection ever named, each with its
 *   redis_conn once it was a primary. The map is asked with CLUSTER SLOTS
 *   (Redis 3+; CLUSTER SHARDS is 7.0+ only) on a connection of its own
 *   (redis_io, the same AUTH/TLS), made to the connected primaries first,
 *   then the URL's seeds, then the other known nodes, one after the other
 *   until one answers. An empty host in the answer means the node asked.
 *   Refresh: request_refresh() arms refresh_ev for now, or for
 *   last + REFRESH_MIN_MS; while a question is out (mio) nothing more
 *   is asked. So a MOVED storm after a reshard (every queue of the moved
 *   slots answering MOVED once) costs one CLUSTER SLOTS per
 *   WR_REDIS_ROUTER_REFRESH_MIN_MS, and every MOVED also sets its slot's
 *   owner at once, so the next command of that queue goes straight there.
 *   tick_ev (every TICK_MS) asks again while a primary of the map is not
 *   connected or slots have no owner: a failover is noticed without a
 *   command having to fail first.
 *
 *   Nodes that stop being primaries keep their connection (commands are
 *   no longer routed to them; a demoted one answers MOVED); it is closed
 *   with the router. A node killed for good keeps reconnecting with the
 *   connection's backoff (logged at most every 30 s).
 *
 * Redirections (the connection hands them to redirect(), before any
 *   callback): MOVED and ASK are followed while the command has been
 *   redirected fewer than REDIRECTS_MAX times (a MOVED then an ASK during a
 *   migration is two); beyond that, or when the target is not connected,
 *   the command fails WR_EUNAVAILABLE (degraded mode, failPolicy).
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "base/clock.h"
#include "base/log.h"
#include "store/redis/redis_io.h"
#include "store/redis/redis_url.h"

#define NONE          0xff
#define TICK_MS       1000
#define RETRY_MS      50
#define REDIRECTS_MAX 3
#define MSG_MAX       512

_Static_assert(WR_REDIS_ROUTER_NODES_MAX < NONE, "node indexes fit in a byte");

typedef struct {
    char host[WR_REDIS_URL_HOST_MAX + 1];
    int port;
    wr_redis_conn_t *conn; /* once it was a primary of the map */
    bool primary;          /* owns slots in the current map */
    bool first_done;       /* its connection's first attempt ended */
    struct wr_redis_router *r;
} node_t;

struct retry {
    TAILQ_ENTRY(retry) link;
    struct wr_redis_router *r;
    wr_redis_conn_cmd_t *cmd;
    struct event *ev;
};

struct wr_redis_router {
    struct event_base *base;
    bool cluster;
    wr_redis_conn_t *single; /* not a cluster */
    /* cluster */
    wr_redis_conn_opts_t copts; /* for the nodes' connections (strings copied below) */
    char *tls_ca, *tls_cert, *tls_key;
    wr_redis_url_t ep;      /* seeds and credentials (the env password applied) */
    wr_redis_io_tls_t *tls; /* the map's connection, rediss-cluster:// */
    node_t nodes[WR_REDIS_ROUTER_NODES_MAX];
    size_t nnodes;
    uint8_t slot[WR_REDIS_ROUTER_SLOTS];
    uint8_t next[WR_REDIS_ROUTER_SLOTS]; /* the map being read */
    bool have_map;
    size_t unowned; /* slots nobody owns in the map */
    /* the slot-map question */
    wr_redis_io_t *mio;
    wr_redis_url_addr_t cand[WR_REDIS_ROUTER_NODES_MAX + WR_REDIS_URL_SEEDS_MAX];
    size_t ncand, mtry;
    int64_t last_refresh_ms;
    struct event *refresh_ev, *tick_ev;
    char last_msg[MSG_MAX];
    /* the first attempt */
    bool map_first_done, started;
    wr_redis_conn_started_cb on_started;
    void *started_arg;
    TAILQ_HEAD(, retry) retries;
};

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

/* The node at host:port (added when new); NULL when the table is full. */
static node_t *node_find(wr_redis_router_t *r, const char *host, int port, bool add)
{
    for (size_t i = 0; i < r->nnodes; i++)
        if (r->nodes[i].port == port && strcmp(r->nodes[i].host, host) == 0)
            return &r->nodes[i];
    if (!add || r->nnodes == WR_REDIS_ROUTER_NODES_MAX || strlen(host) > WR_REDIS_URL_HOST_MAX)
        return NULL;
    node_t *n = &r->nodes[r->nnodes++];
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
    wr_err_t err = wr_redis_conn_open(r->base, &o, &n->conn);
    wr_redis_url_wipe(&ep);
    if (err != WR_OK) {
        n->conn = NULL;
        n->first_done = true;
        wr_warn("%s: cannot open a connection to cluster node %s:%d: %s", r->copts.log_name,
                n->host, n->port, wr_strerror(err));
    }
}

static bool node_up(const node_t *n)
{
    return n && n->conn && wr_redis_conn_connected(n->conn);
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
    (void)err;
    (void)msg; /* the connection logged it */
    node_t *n = arg;
    n->first_done = true;
    check_started(n->r);
}

/* -------------------------------------------------------------- the map */

static void try_next(wr_redis_router_t *r);

/* "127.0.0.1:7000" of a CLUSTER SLOTS node entry; false when malformed. */
static bool entry_addr(const redisReply *e, const char *asked, char *host, size_t cap, int *port)
{
    if (!e || e->type != REDIS_REPLY_ARRAY || e->elements < 2 ||
        e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_INTEGER)
        return false;
    const char *h = e->element[0]->str;
    if (h[0] == '\0' || strcmp(h, "?") == 0)
        h = asked;
    if (strlen(h) >= cap || e->element[1]->integer < 1 || e->element[1]->integer > 65535)
        return false;
    memcpy(host, h, strlen(h) + 1);
    *port = (int)e->element[1]->integer;
    return true;
}

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
            !entry_addr(e->element[2], asked, host, sizeof host, &port))
            return false;
        long long a = e->element[0]->integer, b = e->element[1]->integer;
        if (a < 0 || b < a || b >= WR_REDIS_ROUTER_SLOTS)
            return false;
        node_t *n = node_find(r, host, port, true);
        if (!n)
            return false;
        memset(next + a, (int)(n - r->nodes), (size_t)(b - a + 1));
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
        if (r->nodes[i].primary && node_up(&r->nodes[i]))
            add_cand(r, r->nodes[i].host, r->nodes[i].port);
    for (size_t i = 0; i < r->ep.nseeds; i++)
        add_cand(r, r->ep.seeds[i].host, r->ep.seeds[i].port);
    for (size_t i = 0; i < r->nnodes; i++)
        add_cand(r, r->nodes[i].host, r->nodes[i].port);
    r->last_msg[0] = '\0';
    try_next(r);
}

/* Asks for the map soon: now, or REFRESH_MIN_MS after the last question;
 * never while one is out, never twice. */
static void request_refresh(wr_redis_router_t *r)
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
    bool want = !r->have_map || r->unowned > 0;
    for (size_t i = 0; !want && i < r->nnodes; i++)
        want = r->nodes[i].primary && !node_up(&r->nodes[i]);
    if (want)
        request_refresh(r);
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
    if (!key) {
        for (size_t i = 0; i < r->nnodes; i++)
            if (r->nodes[i].primary && node_up(&r->nodes[i]))
                return r->nodes[i].conn;
        return NULL;
    }
    uint8_t k = r->slot[wr_redis_router_keyslot(key, len)];
    return k == NONE || !node_up(&r->nodes[k]) ? NULL : r->nodes[k].conn;
}

static void retry_free(struct retry *t)
{
    TAILQ_REMOVE(&t->r->retries, t, link);
    event_free(t->ev);
    free(t);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct retry *t = arg;
    wr_redis_router_t *r = t->r;
    wr_redis_conn_cmd_t *cmd = t->cmd;
    retry_free(t);
    wr_redis_conn_t *c = route(r, cmd);
    if (!c || wr_redis_conn_resubmit(c, cmd, false) != WR_OK) {
        request_refresh(r);
        wr_redis_conn_cmd_fail(cmd, WR_EUNAVAILABLE); /* last */
    }
}

/* "MOVED 3999 127.0.0.1:6381" -> slot, host, port (the last ':' ends the
 * host: an IPv6 host comes without brackets). */
static bool parse_redirect(const char *s, unsigned *slot, char *host, size_t cap, int *port)
{
    const char *sp = strchr(s, ' ');
    if (!sp)
        return false;
    char *end;
    unsigned long v = strtoul(sp + 1, &end, 10);
    if (end == sp + 1 || *end != ' ' || v >= WR_REDIS_ROUTER_SLOTS)
        return false;
    const char *addr = end + 1;
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || (size_t)(colon - addr) >= cap)
        return false;
    long p = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || (*end != '\0' && *end != ' ') || p < 1 || p > 65535)
        return false;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    *slot = (unsigned)v;
    *port = (int)p;
    return true;
}

static bool on_redirect(void *arg, wr_redis_conn_cmd_t *cmd, const redisReply *rep)
{
    wr_redis_router_t *r = arg;
    const char *s = rep->str;
    bool moved = strncmp(s, "MOVED ", 6) == 0, ask = strncmp(s, "ASK ", 4) == 0;
    if (moved || ask) {
        unsigned slot;
        char host[WR_REDIS_URL_HOST_MAX + 1];
        int port;
        node_t *n = NULL;
        if (wr_redis_conn_cmd_redirects(cmd) < REDIRECTS_MAX &&
            parse_redirect(s, &slot, host, sizeof host, &port))
            n = node_find(r, host, port, true);
        if (n && moved) {
            /* the owner is known now: the queue's next command goes there */
            r->slot[slot] = (uint8_t)(n - r->nodes);
            if (!n->primary) {
                n->primary = true;
                node_open(r, n);
            }
            request_refresh(r);
        }
        if (!node_up(n) || wr_redis_conn_resubmit(n->conn, cmd, ask) != WR_OK)
            wr_redis_conn_cmd_fail(cmd, WR_EUNAVAILABLE); /* last */
        return true;
    }
    /* TRYAGAIN (a migration in progress), CLUSTERDOWN (no owner, the
     * cluster failing): again in RETRY_MS, within the command timeout */
    if (strncmp(s, "CLUSTERDOWN", 11) == 0)
        request_refresh(r);
    uint32_t timeout = r->copts.command_timeout_ms ? r->copts.command_timeout_ms : 250;
    struct retry *t = NULL;
    if (wr_clock_mono_ms() + RETRY_MS < wr_redis_conn_cmd_born_ms(cmd) + timeout &&
        (t = calloc(1, sizeof *t)) != NULL && (t->ev = evtimer_new(r->base, on_retry, t)) != NULL) {
        t->r = r;
        t->cmd = cmd;
        TAILQ_INSERT_TAIL(&r->retries, t, link);
        struct timeval tv = wr_clock_tv_ms(RETRY_MS);
        evtimer_add(t->ev, &tv);
        return true;
    }
    free(t);
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
        if (r->nodes[i].primary && node_up(&r->nodes[i]))
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
        request_refresh(r);
        return WR_EUNAVAILABLE;
    }
    return wr_redis_conn_submit(c, cmd, wait_fn, cb, arg);
}

wr_err_t wr_redis_router_send_oneway(wr_redis_router_t *r, const char *what, int argc,
                                     const char *const *argv)
{
    if (!r->cluster)
        return wr_redis_conn_send_oneway(r->single, what, argc, argv);
    if (argc < 2 || !r->have_map)
        return WR_EUNAVAILABLE;
    uint8_t k = r->slot[wr_redis_router_keyslot(argv[1], strlen(argv[1]))];
    if (k == NONE || !node_up(&r->nodes[k])) {
        request_refresh(r);
        return WR_EUNAVAILABLE;
    }
    return wr_redis_conn_send_oneway(r->nodes[k].conn, what, argc, argv);
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
        if (!x->primary || node_up(x))
            continue;
        char ad[WR_REDIS_URL_HOST_MAX + 16];
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s (slots ",
                 wr_redis_url_addr_format(x->host, x->port, ad, sizeof ad));
        ranges(r, (uint8_t)i, out, cap);
        used = strlen(out);
        snprintf(out + used, cap - used, ")\n");
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

static void router_free(wr_redis_router_t *r)
{
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
