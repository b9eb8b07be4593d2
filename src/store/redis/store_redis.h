/*
 * store_redis.h - the Redis backend of the store interface (store.h).
 *
 * redis_conn (redis_io) on the caller's libevent loop; every operation is ONE Lua
 * script call (EVALSHA, one EVAL retry on NOSCRIPT), except that the joins and
 * statuses of one queue made in one loop iteration share one call (up to 64
 * of them; sent at the end of the iteration, each still atomic and answered
 * on its own; store_redis.c, "Coalescing"); every key of a queue
 * carries the hash tag {queue} and is passed in KEYS. Arrival scores and
 * token expiries are Redis TIME in microseconds. The connection is
 * redis_conn.h, the URL grammar redis_url.h; waitroomd opens this backend
 * through store_registry.h.
 */
#ifndef WR_STORE_REDIS_H
#define WR_STORE_REDIS_H

#include <event2/event.h>
#include <stdint.h>

#include "base/metrics.h"
#include "store/store.h"

typedef struct {
    const char *url;             /* redis://, rediss://, redis-sentinel://, unix://
                                    (redis_url.h); copied */
    uint32_t command_timeout_ms; /* a command not answered in this time fails with
                                    WR_ETIMEOUT; 0 = 250 */
    uint32_t connect_timeout_ms; /* 0 = 1000 */
    uint32_t reconnect_max_ms;   /* reconnect backoff cap; 0 = 2000 */
    /* Durability mode: after a consume or an admission tick, send WAIT
     * wait_replicas wait_timeout_ms on the same connection and answer only
     * when it returns. Whatever WAIT says (fewer replicas, error,
     * disconnect), the operation stands - it is applied on the primary - and
     * is answered as it went there; a shortfall is logged (at most once per
     * 10 s) and counted in waitroom_redis_wait_total{result="short"}. The
     * command timeout of such an operation is command_timeout_ms +
     * wait_timeout_ms. 0 = off. */
    uint32_t wait_replicas;
    uint32_t wait_timeout_ms; /* 0 = 100 */
    wr_metrics_t *metrics;    /* borrowed, may be NULL; outlives the store */
    /* Production (redis_conn.h): rediss:// PEM files (NULL = system CAs, no
     * client certificate), WAITROOM_REDIS_PASSWORD's value, whether an
     * allkeys-* maxmemory-policy is accepted, and the end of the first
     * attempt to connect (WR_EINVAL: refuse to start; msg says why). */
    const char *tls_ca_file, *tls_cert_file, *tls_key_file;
    const char *env_password;
    bool allow_eviction;
    void (*on_started)(wr_err_t err, const char *msg, void *arg);
    void *started_arg;
    /* This instance sends Web Push (waitroomd --push-subject): its admission
     * ticks hand the claimed subscriptions over (wr_admit_t.pushes); an
     * instance that does not leaves them to the next tick of one that does
     * (store_redis_push.c). */
    bool push_sender;
} wr_store_redis_opts_t;

/*
 * Opens the backend on base (borrowed; must outlive the store). Connects in
 * the background and reconnects by itself; operations issued while
 * disconnected return WR_EUNAVAILABLE at once (their callback is not called).
 * Returns WR_OK and *out, WR_EINVAL for a bad URL, WR_ENOMEM.
 * The caller frees with wr_store_close(); pending callbacks are then called
 * synchronously with WR_ECANCELED. Closing from inside one of the store's
 * callbacks is allowed. At most 65536 commands may be in flight; beyond that
 * operations return WR_ELIMIT - a join or status, sent at the end of the
 * iteration, gets it (or WR_EUNAVAILABLE when the connection dropped in
 * between, WR_ENOMEM) through its callback instead.
 */
wr_err_t wr_store_redis_open(struct event_base *base, const wr_store_redis_opts_t *opts,
                             wr_store_t **out);

/* True while the backend holds an established connection. */
bool wr_store_redis_connected(wr_store_t *s);

/* True once the store holds the master of the public log's salts (the
 * app's log_key at start loads it; else the first join of a queue with
 * publicLog does, and is answered WR_EUNAVAILABLE until then); asks for it
 * when it does not. For tests that open a store and join at once. */
bool wr_store_redis_log_ready(wr_store_t *s);

#endif
