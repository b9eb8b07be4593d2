/*
 * cfgcache.h - a bounded cache of queue configs by name, each an immutable,
 * reference-counted snapshot of one version. store_redis announces the
 * cached version to its scripts, which send the config JSON only when it
 * changed; a request keeps a reference to the snapshot it announced, so a
 * reply without JSON is resolved against exactly that version even if the
 * cache moved on (or was freed) meanwhile. Pure: no libevent, no hiredis.
 */
#ifndef WR_CFGCACHE_H
#define WR_CFGCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/qconfig.h"

/* One version of one queue's config. Immutable once in the cache; freed
 * by the last holder (the cache entry, or a request that took a
 * reference with wr_cfgcache_get). */
typedef struct {
    unsigned refs;
    uint64_t version; /* config_put.lua's version: > 0, creation time in us, then +1 */
    wr_queue_config_t cfg;
} wr_cfgcache_snap_t;

typedef struct wr_cfgcache wr_cfgcache_t;

/* A cache of at most max queues (beyond that, a new queue is not cached:
 * its scripts always send the JSON). NULL when out of memory. */
wr_cfgcache_t *wr_cfgcache_new(size_t max);

/* Frees the cache; snapshots still referenced elsewhere stay valid until
 * released. NULL is a no-op. */
void wr_cfgcache_free(wr_cfgcache_t *c);

/* The cached snapshot of queue, as a new reference the caller releases with
 * wr_cfgcache_release(); NULL when the queue is not cached. */
wr_cfgcache_snap_t *wr_cfgcache_get(wr_cfgcache_t *c, const char *queue);

/* Caches (a copy of) cfg as the config of queue at version, unless that
 * version is cached already (a full cache takes no new queue: it is served
 * uncached), and returns a new reference to the snapshot that holds
 * version, for the caller to read the config through (release it with
 * wr_cfgcache_release): the cached one when that version was cached
 * already (cfg is then not copied), else the one just made - cached, or
 * only the caller's when the cache is full. NULL when out of memory
 * (nothing cached). */
wr_cfgcache_snap_t *wr_cfgcache_put_ref(wr_cfgcache_t *c, const char *queue, uint64_t version,
                                        const wr_queue_config_t *cfg);

/* Forgets queue (deleted). A queue not cached is a no-op. */
void wr_cfgcache_remove(wr_cfgcache_t *c, const char *queue);

/* Drops one reference; the last one frees the snapshot. NULL is a no-op. */
void wr_cfgcache_release(wr_cfgcache_snap_t *snap);

#endif
