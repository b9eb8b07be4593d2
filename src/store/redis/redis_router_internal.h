/*
 * redis_router_internal.h - what the files of the redis_router module
 * share: redis_router.c (the slot map, routing, redirections, the node
 * table), redis_router_health.c (whether each primary can serve, and the
 * text /readyz shows) and redis_router_oneway.c (one-way commands, held
 * while their primary is down). Not for other modules.
 *
 * Names shared between the files are wr_redis_router__*.
 */
#ifndef WR_REDIS_ROUTER_INTERNAL_H
#define WR_REDIS_ROUTER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "store/redis/redis_io.h"
#include "store/redis/redis_router.h"
#include "store/redis/redis_url.h"

#define NONE           0xff
#define TICK_MS        1000
#define MAP_MAX_AGE_MS 10000 /* the map is asked again at least this often */
#define RETRY_MS       50
#define REDIRECTS_MAX  3
#define MSG_MAX        512

_Static_assert(WR_REDIS_ROUTER_NODES_MAX < NONE, "node indexes fit in a byte");

typedef struct {
    char host[WR_REDIS_URL_HOST_MAX + 1];
    int port;
    wr_redis_conn_t *conn; /* once it was a primary of the map */
    bool primary;          /* owns slots in the current map */
    bool first_done;       /* its connection's first attempt ended */
    bool stale;            /* the last map did not name it: dropped once idle */
    /* health (probe()): what its last answers said */
    int probing;          /* probe commands in flight */
    bool cluster_fail;    /* CLUSTER INFO: cluster_state is not ok */
    bool repl_known;      /* INFO replication answered since it connected */
    unsigned repl_online; /* its replicas in state=online */
    struct wr_redis_router *r;
} node_t; /* port 0: a free entry */

struct retry {
    TAILQ_ENTRY(retry) link;
    struct wr_redis_router *r;
    wr_redis_conn_cmd_t *cmd;
    node_t *to; /* MOVED/ASK to a node not connected yet: waits for it; NULL: route again */
    bool ask;
    struct event *ev;
};

/* A one-way command whose primary was unreachable: sent again, as a
 * command with a callback, until its slot's primary acknowledges it
 * (wr_redis_router_send_oneway). */
struct held {
    TAILQ_ENTRY(held) link;
    struct wr_redis_router *r;
    const char *what; /* static */
    unsigned slot;
    bool inflight; /* sent as a command (on_held answers it) */
    int argc;
    char *argv[WR_REDIS_ROUTER_ONEWAY_ARGS];
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
    TAILQ_HEAD(, held) held;
    size_t nheld;
};

/* True when n's connection is established. n may be NULL. */
bool wr_redis_router__node_up(const node_t *n);

/* What wr_redis_router__node_why() says of a node. */
enum {
    WR_REDIS_ROUTER__SERVES,
    WR_REDIS_ROUTER__NOT_PRIMARY,
    WR_REDIS_ROUTER__UNREACHABLE,
    WR_REDIS_ROUTER__CANNOT_SERVE
};

/* Whether n serves its slots now: SERVES, or why not (CANNOT_SERVE: what
 * its last probe answers said, into why, cap bytes, NUL-terminated; why
 * may be NULL with cap 0). */
int wr_redis_router__node_why(const wr_redis_router_t *r, const node_t *n, char *why, size_t cap);

/* Asks connected primary n, at most one round in flight, what /readyz must
 * know: CLUSTER INFO (a failing cluster answers CLUSTERDOWN to every key)
 * and, in durability mode, INFO replication (fewer replicas online than
 * --redis-wait-replicas: every join is refused). The answers set n's
 * health fields; a close answers them WR_ECANCELED while n still exists. */
void wr_redis_router__probe(node_t *n);

/* Asks for the slot map soon: now, or WR_REDIS_ROUTER_REFRESH_MIN_MS after
 * the last question; never while one is out, never twice. */
void wr_redis_router__request_refresh(wr_redis_router_t *r);

/* Sends the first held one-way command of each slot (the next goes once
 * it is answered: the order of a slot's commands is kept). */
void wr_redis_router__held_flush(wr_redis_router_t *r);

/* Unlinks and frees h (held by r). */
void wr_redis_router__held_free(wr_redis_router_t *r, struct held *h);

#endif
