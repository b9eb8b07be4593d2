/*
 * metric_defs.h - the table of every metric family waitroomd exports: one
 * row per family (name, type, label names, # HELP text, histogram bounds)
 * and the component that registers it. The rows are metric_defs.def's: the
 * one place a metric is named and described (docs/DESIGN.md, "Where to
 * change what": add a metric).
 *
 * A component registers its rows once, when it gets its registry
 * (wr_metric_defs_describe(m, its group)); a family updated without that
 * call still gets its # HELP and # TYPE from its row (metrics.c looks the
 * row up when a name is first used), so no exported family lacks HELP.
 */
#ifndef WR_METRIC_DEFS_H
#define WR_METRIC_DEFS_H

#include <stddef.h>

#include "base/metrics.h"

/* Who registers a row: the API (http/api.c), the admission scheduler
 * (runtime/scheduler.c), the Redis store (store/redis/redis_conn.c), the
 * store's circuit breaker (store/store_breaker.c). */
typedef enum {
    WR_METRICS_GROUP_API = 0,
    WR_METRICS_GROUP_SCHEDULER = 1,
    WR_METRICS_GROUP_REDIS = 2,
    WR_METRICS_GROUP_BREAKER = 3,
    WR_METRICS_GROUP_LOG = 4,  /* the public log's signer (runtime/logsign.c) */
    WR_METRICS_GROUP_LOOP = 5, /* the event loop's stalls (runtime/looplag.c) */
} wr_metric_group_t;

typedef struct {
    wr_metric_group_t group;
    const char *name; /* the family, e.g. "waitroom_queue_waiting" */
    wr_metric_type_t type;
    const char *labels;   /* the label names its series carry, comma-separated; "" = none */
    const char *help;     /* the # HELP text, never NULL nor empty */
    const double *bounds; /* a histogram's own bucket bounds (seconds); NULL = the default */
    size_t n_bounds;
} wr_metric_def_t;

/* The rows, in the order /metrics lists them within a group; n in *n. */
const wr_metric_def_t *wr_metric_defs(size_t *n);

/* The row of family name, or NULL. */
const wr_metric_def_t *wr_metric_defs_find(const char *name);

/* Declares every family of group on m (# HELP, # TYPE, bucket bounds), in
 * table order; a family already declared is left as it is. m NULL: no-op. */
void wr_metric_defs_describe(wr_metrics_t *m, wr_metric_group_t group);

#endif
