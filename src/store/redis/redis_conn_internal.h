/*
 * redis_conn_internal.h - what the files of the redis_conn module share,
 * and nothing else includes: the connection (struct wr_redis_conn), its
 * states, and the few connection functions the checks and Sentinel need.
 *
 * The redis_conn module is one connection in three files:
 *   redis_conn.c      connection lifecycle, reconnect and backoff, commands
 *                     (EVALSHA/NOSCRIPT, WAIT), failover replies, open/close
 *   redis_checks.c    the handshake hook: ROLE, CONFIG GET, SCRIPT LOAD
 *   redis_sentinel.c  asking the sentinels, the +switch-master subscription,
 *                     the address pinned after a failover
 * Names shared between these files are wr_redis_conn__*; file statics are
 * unprefixed (STYLE.md). Everything here runs on the connection's loop.
 */
#ifndef WR_REDIS_CONN_INTERNAL_H
#define WR_REDIS_CONN_INTERNAL_H

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/log.h"
#include "base/metrics.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_io.h"
#include "store/redis/redis_url.h"
#include "base/rng.h"

#define WR_REDIS_CONN__BACKOFF_MIN_MS 100
#define WR_REDIS_CONN__MSG_MAX        WR_REDIS_IO_MSG_MAX

typedef enum {
    WR_REDIS_CONN__DISCONNECTED,
    WR_REDIS_CONN__CONNECTING,
    WR_REDIS_CONN__CONNECTED,
    WR_REDIS_CONN__CLOSED,
} wr_redis_conn__state_t;

typedef struct {
    char *text;
    size_t len;
    char sha[WR_CRYPTO_SHA1_HEX + 1];
} wr_redis_conn__script_t;
/* What the handshake hook learned about the server being connected. */
typedef struct {
    bool not_master;     /* ROLE answered something else than master */
    char role[32];       /* ROLE's first element */
    bool role_refused;   /* ROLE answered an error */
    bool config_refused; /* a CONFIG GET answered an error */
    char policy[64];     /* maxmemory-policy; "" = unknown */
    char appendonly[16]; /* "" = unknown */
    char save[128];      /* save; "?" = unknown */
} wr_redis_conn__hook_t;

struct wr_redis_conn {
    struct event_base *base;
    const char *name; /* log prefix */
    wr_redis_url_t ep;
    wr_redis_io_tls_t *tls; /* rediss:// */
    uint32_t cmd_timeout_ms, connect_timeout_ms, reconnect_max_ms;
    uint32_t wait_replicas, wait_timeout_ms; /* durability mode (WAIT); 0 = off */
    bool allow_eviction;
    wr_redis_conn_redirect_fn redirect; /* cluster: MOVED/ASK/TRYAGAIN/CLUSTERDOWN */
    void *redirect_arg;
    wr_metrics_t *metrics;
    int64_t wait_log_ms; /* last shortfall log (monotonic ms) */
    wr_redis_conn__state_t state;
    int busy;                  /* > 0 while this file frees an io (close then defers the free) */
    wr_redis_io_t *io;         /* the primary (or the one server) */
    struct event *retry_timer; /* reconnect backoff */
    struct event *drop_ev;     /* drops io from the loop after a failover reply */
    char drop_why[WR_REDIS_CONN__MSG_MAX];
    uint32_t backoff_ms;
    wr_rng_t rng; /* reconnect jitter */
    /* the server being connected */
    char host[WR_REDIS_URL_HOST_MAX + 1];
    int port;
    wr_redis_conn__hook_t hook;
    bool warned_config, warned_persist, warned_role, warned_volatile;
    /* sentinel */
    wr_redis_io_t *sq_io;  /* asking one sentinel for the primary */
    wr_redis_io_t *sub_io; /* subscribed to +switch-master */
    size_t sentinel;       /* the sentinel asked now / that answered last */
    size_t sentinel_tries; /* sentinels asked in this round */
    char sentinel_last[700];
    char pin_host[WR_REDIS_URL_HOST_MAX + 1]; /* a replica being promoted: connect there */
    int pin_port;
    int64_t pin_until_ms; /* ... until then (or until connected) */
    /* logging */
    char last_msg[WR_REDIS_CONN__MSG_MAX];
    int64_t last_msg_ms;
    bool ever_connected;
    /* the first attempt */
    wr_redis_conn_started_cb on_started;
    void *started_arg;
    bool started;
    wr_redis_conn__script_t *scripts;
    size_t nscripts;
};

/* r's text when it is a string or status reply, else NULL; borrowed. */
static inline const char *wr_redis_conn__reply_str(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) && r->str ? r->str
                                                                                           : NULL;
}

/* Logs msg (one line, no password) at level with c's log prefix; an
 * identical message at most every 30 s (debug in between). */
void wr_redis_conn__log(wr_redis_conn_t *c, wr_log_level_t level, const char *msg);

/* The end of the first attempt: calls opts.on_started(err, msg) once per
 * connection object; later calls do nothing. msg may be NULL with WR_OK. */
void wr_redis_conn__first_done(wr_redis_conn_t *c, wr_err_t err, const char *msg);

/* Arms the reconnect timer with the current backoff (+/-20% jitter) and
 * doubles the backoff up to reconnect_max_ms. Nothing once CLOSED. */
void wr_redis_conn__schedule_reconnect(wr_redis_conn_t *c);

/* Frees io (NULL is a no-op), which answers its pending commands; their
 * callbacks may close c. Returns false when c was closed meanwhile: the
 * caller must return at once without touching c. */
bool wr_redis_conn__free_io(wr_redis_conn_t *c, wr_redis_io_t *io);

/* Starts connecting c->io to host:port (borrowed; copied), or to the
 * URL's unix socket, with the URL's credentials and DB: state CONNECTING.
 * When the io cannot even start: logged, first_done, reconnect scheduled. */
void wr_redis_conn__connect_server(wr_redis_conn_t *c, const char *host, int port);

/* A command (redis_conn_cmd.c builds it, redis_conn.c sends it). */
struct wr_redis_conn_cmd {
    wr_redis_conn_t *c; /* set when submitted */
    int script;         /* index into c->scripts, or WR_REDIS_CONN_NO_SCRIPT */
    bool retried;       /* the one EVAL after NOSCRIPT was sent */
    bool waiting;       /* WAIT sent; `held` is the command's answer */
    bool strict;        /* a WAIT no replica acknowledged answers WR_EREPLICA */
    int redirects;      /* cluster: redirections followed (wr_redis_conn_resubmit) */
    int64_t born_ms;    /* monotonic ms of the first submission */
    redisReply *held;   /* deep copy of the reply while WAIT runs; owned */
    wr_redis_conn_wait_fn wait_fn;
    wr_redis_conn_reply_cb cb;
    void *arg;
    int argc, max_args;
    const char **argv; /* max_args entries, in the same allocation */
    size_t *argvlen;   /* max_args entries, in the same allocation */
    size_t buf_used, buf_cap;
    char *buf;    /* the argument bytes argv points into, in the same allocation */
    size_t alloc; /* bytes of that allocation (kept for reuse: redis_conn_cmd.c) */
};

/* A deep copy of src (depth: 0 for a top-level reply), freed with
 * wr_redis_conn__reply_free; NULL when out of memory or nested too deep. */
redisReply *wr_redis_conn__reply_copy(const redisReply *src, int depth);

/* Frees a reply built by wr_redis_conn__reply_copy (not by hiredis). */
void wr_redis_conn__reply_free(redisReply *r);

#endif
