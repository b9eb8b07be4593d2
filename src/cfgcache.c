/*
 * cfgcache.c - the bounded, versioned config cache (cfgcache.h).
 *
 * A chained hash table of CACHE_BUCKETS buckets (FNV-1a of the queue name),
 * holding at most `max` entries {name, snap}. An entry owns one reference
 * to its snapshot; replacing or removing the entry drops it, so a snapshot
 * lives as long as the entry or the last request that announced it,
 * whichever is later. Snapshots are never changed in place: a new version
 * is a new snapshot.
 */
#include "cfgcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_BUCKETS 1024

struct centry {
    struct centry *next;
    char name[WR_QUEUE_NAME_MAX + 1];
    wr_cfgcache_snap_t *snap;
};

struct wr_cfgcache {
    struct centry *buckets[CACHE_BUCKETS];
    size_t n, max;
};

static uint64_t fnv1a(const char *p)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ULL;
    }
    return h;
}

wr_cfgcache_t *wr_cfgcache_new(size_t max)
{
    wr_cfgcache_t *c = calloc(1, sizeof *c);
    if (c)
        c->max = max;
    return c;
}

void wr_cfgcache_release(wr_cfgcache_snap_t *snap)
{
    if (snap && --snap->refs == 0)
        free(snap);
}

static struct centry *find(wr_cfgcache_t *c, const char *q)
{
    for (struct centry *e = c->buckets[fnv1a(q) % CACHE_BUCKETS]; e; e = e->next)
        if (strcmp(e->name, q) == 0)
            return e;
    return NULL;
}

wr_cfgcache_snap_t *wr_cfgcache_get(wr_cfgcache_t *c, const char *queue)
{
    struct centry *e = find(c, queue);
    if (!e)
        return NULL;
    e->snap->refs++;
    return e->snap;
}

void wr_cfgcache_put(wr_cfgcache_t *c, const char *q, uint64_t version,
                     const wr_queue_config_t *cfg)
{
    struct centry *e = find(c, q);
    if (e && e->snap->version == version)
        return;
    wr_cfgcache_snap_t *snap = malloc(sizeof *snap);
    if (!snap)
        return;
    snap->refs = 1;
    snap->version = version;
    snap->cfg = *cfg;
    if (!e) {
        if (c->n >= c->max) {
            free(snap);
            return; /* full: this queue is served uncached (always JSON) */
        }
        e = calloc(1, sizeof *e);
        if (!e) {
            free(snap);
            return;
        }
        snprintf(e->name, sizeof e->name, "%s", q);
        size_t b = fnv1a(q) % CACHE_BUCKETS;
        e->next = c->buckets[b];
        c->buckets[b] = e;
        c->n++;
    }
    wr_cfgcache_release(e->snap);
    e->snap = snap;
}

void wr_cfgcache_remove(wr_cfgcache_t *c, const char *q)
{
    struct centry **pp = &c->buckets[fnv1a(q) % CACHE_BUCKETS];
    for (; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->name, q) == 0) {
            struct centry *e = *pp;
            *pp = e->next;
            wr_cfgcache_release(e->snap);
            free(e);
            c->n--;
            return;
        }
    }
}

void wr_cfgcache_free(wr_cfgcache_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < CACHE_BUCKETS; i++) {
        struct centry *e = c->buckets[i];
        while (e) {
            struct centry *n = e->next;
            wr_cfgcache_release(e->snap);
            free(e);
            e = n;
        }
    }
    free(c);
}
