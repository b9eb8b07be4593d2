/*
 * redis_router.h - the connection(s) of the Redis store: where each command
 * goes. For redis://, rediss://, redis-sentinel:// and unix:// that is the
 * one connection (redis_conn.h) and this layer only passes through. For
 * redis-cluster:// and rediss-cluster:// it is the primary that owns the
 * slot of the command's first key (every key of a queue carries the hash
 * tag {queue}, so a queue's commands all go to one primary):
 *
 *   - the slot map comes from CLUSTER SLOTS of a seed (or of a known node),
 *     asked again after a MOVED, while a primary of the map is unreachable,
 *     or while slots have no owner: at most one question in flight and at
 *     most one every WR_REDIS_ROUTER_REFRESH_MIN_MS (never a storm);
 *   - one connection (redis_conn) per primary of the map, opened when the
 *     map first names it, with the store's timeouts, AUTH, TLS, scripts
 *     and connect checks (ROLE, eviction policy, persistence);
 *   - MOVED is followed once (the slot's owner updated at once, the map
 *     refreshed in the background); ASK is followed once with ASKING; a
 *     target not connected yet is connected first, within the command
 *     timeout; every endpoint type (ip, hostname, unknown-endpoint) is
 *     understood (redis_endpoint.h);
 *   - nodes the slot map no longer names are dropped (their connection
 *     closed once nothing is pending on it);
 *   - each connected primary is asked every second whether it can serve
 *     (CLUSTER INFO; INFO replication in durability mode): see
 *     wr_redis_router_unreachable();
 *   - a one-way command whose primary is down is held and sent when it is
 *     back (wr_redis_router_send_oneway);
 *     TRYAGAIN and CLUSTERDOWN are retried every 50 ms until the command
 *     timeout has passed since the command was first sent (then
 *     WR_EUNAVAILABLE).
 *
 * The same async contract as redis_conn.h: a submit that returns an error
 * never calls the callback; one that returns WR_OK calls it exactly once,
 * from the loop; close() answers everything pending with WR_ECANCELED.
 */
#ifndef WR_REDIS_ROUTER_H
#define WR_REDIS_ROUTER_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "store/redis/redis_conn.h"

#define WR_REDIS_ROUTER_SLOTS          16384
#define WR_REDIS_ROUTER_NODES_MAX      128  /* nodes a cluster map may name */
#define WR_REDIS_ROUTER_REFRESH_MIN_MS 500  /* between two slot-map questions */
#define WR_REDIS_ROUTER_HELD_MAX       1024 /* one-way commands held for a shard down */
#define WR_REDIS_ROUTER_ONEWAY_ARGS    3    /* the most arguments of a one-way command */

typedef struct wr_redis_router wr_redis_router_t;

/* The cluster slot of a key: CRC16 (XMODEM) of the key, or of the part
 * between the first '{' and the next '}' when that part is not empty,
 * modulo 16384 - Redis Cluster's rule. */
unsigned wr_redis_router_keyslot(const char *key, size_t len);

/*
 * Opens the connection(s) for opts->url, as wr_redis_conn_open() does (the
 * same options; redirect and endpoint must be unset). For a cluster URL,
 * on_started is called once the first slot-map question ended and every
 * primary it named had its first attempt: WR_OK when the map was learned
 * (primaries that were not reached or refused are logged and their queues
 * fail until they are back), else the seeds' last error. WR_OK and *out;
 * WR_EINVAL (bad URL, TLS file, script), WR_ENOMEM.
 */
wr_err_t wr_redis_router_open(struct event_base *base, const wr_redis_conn_opts_t *opts,
                              wr_redis_router_t **out);

/* True for redis-cluster:// and rediss-cluster://. */
bool wr_redis_router_is_cluster(const wr_redis_router_t *r);

/* Single: the connection is established. Cluster: the slot map is known
 * and at least one of its primaries is connected. */
bool wr_redis_router_connected(const wr_redis_router_t *r);

/*
 * Sends cmd (ownership taken in every case) to the connection of its first
 * key's slot (a command without a key: the first connected primary), as
 * wr_redis_conn_submit(). WR_EUNAVAILABLE at once when that primary is not
 * connected (or the slot has no owner): then a map refresh is asked for.
 */
wr_err_t wr_redis_router_submit(wr_redis_router_t *r, wr_redis_conn_cmd_t *cmd,
                                wr_redis_conn_wait_fn wait_fn, wr_redis_conn_reply_cb cb,
                                void *arg);

/*
 * wr_redis_conn_send_oneway() (argc 2..WR_REDIS_ROUTER_ONEWAY_ARGS) to the
 * primary of argv[1]'s slot. Cluster: when that primary is not connected
 * (or one-way commands of the same slot are already held), the command is
 * copied and held, in order, and sent again (as a command with a reply,
 * one per slot at a time, with the redirections and CLUSTERDOWN retries
 * of any command) every tick and when a node connects, until its primary
 * answers it (an error reply other than those is logged and dropped):
 * the registry's SADD/SREM
 * of a PUT or DELETE does not make the queue's own write fail while the
 * {.global} shard is down. Held commands are lost with the process (a
 * later PUT or PATCH of the queue writes its registry entry again).
 * WR_OK (sent or held); WR_EINVAL (argc); WR_EUNAVAILABLE (single server
 * not connected, or WR_REDIS_ROUTER_HELD_MAX commands held already),
 * WR_ENOMEM.
 */
wr_err_t wr_redis_router_send_oneway(wr_redis_router_t *r, const char *what, int argc,
                                     const char *const *argv);

/*
 * Cluster: the primaries of the map that cannot serve now, and the slot
 * ranges nobody owns, one per line, into out (cap bytes, NUL-terminated,
 * cut to fit): "127.0.0.1:7001 (slots 5461-10922)\n" (not connected),
 * "127.0.0.1:7002 (slots 0-5460): cluster down: CLUSTERDOWN,
 * cluster_state:fail\n", "127.0.0.1:7003 (slots 10923-16383): 0 of 1
 * replicas online: joins refused (--redis-wait-replicas)\n",
 * "slots 0-99 unowned\n".
 * Returns how many shards cannot serve (ranges without owner count as
 * one); 0 (and out "") when all can, or for a single server. A keyless
 * command (PING, /readyz) goes only to a primary that can serve, so it
 * fails when none can.
 */
size_t wr_redis_router_unreachable(const wr_redis_router_t *r, char *out, size_t cap);

/* err, or WR_ESHARD for a WR_EUNAVAILABLE of a cluster of which some
 * primary is connected: only the part of the store holding that slot is
 * down (error.h). r may be NULL. */
wr_err_t wr_redis_router_shard_err(const wr_redis_router_t *r, wr_err_t err);

/* Closes every connection: pending callbacks get WR_ECANCELED, in send
 * order per connection. NULL is a no-op. */
void wr_redis_router_close(wr_redis_router_t *r);

#endif
