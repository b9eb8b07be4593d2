/*
 * cfgcache.c - the bounded, versioned config cache (cfgcache.h).
 *
 * A queue-name map (qmap.h) from name to snapshot, holding at most `max`
 * names. An entry owns one reference to its snapshot; replacing or removing the entry drops it, so
 * a snapshot lives as long as the entry or the last request that announced it, whichever is later.
 * Snapshots are never changed in place: a new version is a new snapshot.
 */
#include "store/redis/cfgcache.h"

#include <stdlib.h>

#include "base/qmap.h"

struct wr_cfgcache {
    wr_qmap_t *map; /* queue name -> wr_cfgcache_snap_t (one reference) */
    size_t max;
};

wr_cfgcache_t *wr_cfgcache_new(size_t max)
{
    wr_cfgcache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->map = wr_qmap_new();
    if (!c->map) {
        free(c);
        return NULL;
    }
    c->max = max;
    return c;
}

void wr_cfgcache_release(wr_cfgcache_snap_t *snap)
{
    if (snap && --snap->refs == 0)
        free(snap);
}

wr_cfgcache_snap_t *wr_cfgcache_get(wr_cfgcache_t *c, const char *queue)
{
    wr_cfgcache_snap_t *snap = wr_qmap_get(c->map, queue);
    if (snap)
        snap->refs++;
    return snap;
}

wr_cfgcache_snap_t *wr_cfgcache_put_ref(wr_cfgcache_t *c, const char *q, uint64_t version,
                                        const wr_queue_config_t *cfg)
{
    wr_cfgcache_snap_t *old = wr_qmap_get(c->map, q);
    if (old && old->version == version) {
        old->refs++;
        return old;
    }
    wr_cfgcache_snap_t *snap = malloc(sizeof *snap);
    if (!snap)
        return NULL;
    snap->refs = 1; /* the caller's */
    snap->version = version;
    snap->cfg = *cfg;
    if (!old && wr_qmap_count(c->map) >= c->max)
        return snap; /* full: this queue is served uncached (always JSON) */
    if (wr_qmap_put(c->map, q, snap) == WR_OK) {
        snap->refs++; /* the entry's */
        wr_cfgcache_release(old);
    }
    return snap;
}

void wr_cfgcache_remove(wr_cfgcache_t *c, const char *q)
{
    wr_cfgcache_release(wr_qmap_remove(c->map, q));
}

void wr_cfgcache_free(wr_cfgcache_t *c)
{
    if (!c)
        return;
    wr_qmap_iter_t it = WR_QMAP_ITER_INIT;
    const char *name;
    void *snap;
    while (wr_qmap_next(c->map, &it, &name, &snap))
        wr_cfgcache_release(snap);
    wr_qmap_free(c->map);
    free(c);
}
