/*
 * qmap.h - a hash map from queue name to a pointer: the one map keyed by
 * queue name (the scheduler's queue entries, the Redis store's config
 * cache). Names are checked (ids.h) and copied; values are borrowed - the
 * map never frees them. Chained buckets, SipHash-1-3 under a random key
 * per map, grown x2 when the entries outnumber the buckets, so lookups
 * stay O(1) whatever names an admin creates.
 *
 * Not thread-safe; no I/O.
 */
#ifndef WR_QMAP_H
#define WR_QMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef struct wr_qmap wr_qmap_t;

/* An empty map, or NULL on ENOMEM. */
wr_qmap_t *wr_qmap_new(void);

/* Frees the map and its copies of the names, not the values. NULL is ok. */
void wr_qmap_free(wr_qmap_t *m);

/* The value of name, or NULL when absent (or name is not a queue name). */
void *wr_qmap_get(const wr_qmap_t *m, const char *name);

/*
 * Sets the value of name (NUL-terminated queue name, copied) to value
 * (non-NULL, borrowed), replacing any value it had. Returns WR_OK,
 * WR_EINVAL (not a queue name, or value NULL) or WR_ENOMEM; on error the
 * map is unchanged.
 */
wr_err_t wr_qmap_put(wr_qmap_t *m, const char *name, void *value);

/* Removes name and returns its value, or NULL when absent. */
void *wr_qmap_remove(wr_qmap_t *m, const char *name);

/* Number of names in the map. */
size_t wr_qmap_count(const wr_qmap_t *m);

/*
 * Iteration, in no particular order:
 *     wr_qmap_iter_t it = WR_QMAP_ITER_INIT;
 *     const char *name; void *value;
 *     while (wr_qmap_next(m, &it, &name, &value)) ...
 * The loop may remove the name it was just given (wr_qmap_remove), and
 * nothing else: no put, no other remove. name is valid until removed.
 */
typedef struct {
    size_t bucket;
    void *node;
} wr_qmap_iter_t;

#define WR_QMAP_ITER_INIT                                                                          \
    {                                                                                              \
        0, NULL                                                                                    \
    }

/* The next entry: true and *name, *value set; false when there is none. */
bool wr_qmap_next(const wr_qmap_t *m, wr_qmap_iter_t *it, const char **name, void **value);

#endif
