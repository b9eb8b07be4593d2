/*
 * redis_checks.h - the connect-time checks of a Redis connection (part of
 * the redis_conn module; its user is redis_conn.c only): ROLE is master,
 * CONFIG GET maxmemory-policy / appendonly / save, SCRIPT LOAD of the
 * connection's scripts. Design: redis_checks.c.
 */
#ifndef WR_REDIS_CHECKS_H
#define WR_REDIS_CHECKS_H

#include "store/redis/redis_io.h"

/*
 * redis_io's on_handshake callback of a primary connection; arg is the
 * wr_redis_conn_t. Ignores an io that is no longer c->io. Queues the checks
 * on io (handshake commands, bounded by the connect timeout) and ends the
 * handshake with wr_redis_io_handshake_done(): WR_OK (warnings logged once
 * per connection object), WR_EUNAVAILABLE (a replica, or the checks could
 * not be sent: retried) or WR_EINVAL (allkeys-* eviction without
 * allow_eviction: the first attempt refuses to start). msg is one line.
 */
void wr_redis_checks_on_handshake(wr_redis_io_t *io, void *arg);

#endif
