/*
 * redis_sentinel.h - Sentinel discovery and failover of a Redis connection
 * (part of the redis_conn module; its user is redis_conn.c only): asking
 * the sentinels for the primary, the +switch-master subscription, the
 * address pinned after a failover. Design: redis_sentinel.c.
 */
#ifndef WR_REDIS_SENTINEL_H
#define WR_REDIS_SENTINEL_H

#include "store/redis/redis_conn.h"

/*
 * One connect attempt of a redis-sentinel:// connection c (state
 * DISCONNECTED, no io): connects to the address a +switch-master pinned
 * while the pin lasts (10 s), else asks the sentinels one after the other
 * (SENTINEL get-master-addr-by-name, starting with the last that answered)
 * and connects to the primary named, subscribing to the failover events.
 * No sentinel names one: logged, the first attempt ends WR_EUNAVAILABLE,
 * and a reconnect is scheduled. Runs from the loop; returns at once.
 */
void wr_redis_sentinel_attempt(wr_redis_conn_t *c);

#endif
