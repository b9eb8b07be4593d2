/*
 * metric_defs.c - the table of every metric family (metric_defs.h).
 *
 * The rows are metric_defs.def's (add a metric there: one row, then update
 * it where it is measured; docs/API.md lists the families for operators).
 * The unit test checks that every row has a help text and renders # HELP
 * and # TYPE.
 */
#include "base/metric_defs.h"

#include <string.h>

/* waitroom_wait_seconds: waits are seconds to hours. */
static const double wait_bounds[] = {1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200};

/* The rows of metric_defs.def. */
static const wr_metric_def_t rows[] = {
#define WR_METRIC(G, NAME, T, LABELS, HELP)                                                        \
    {WR_METRICS_GROUP_##G, NAME, WR_METRIC_##T, LABELS, HELP, NULL, 0},
#define WR_METRIC_BOUNDED(G, NAME, T, LABELS, HELP, B)                                             \
    {WR_METRICS_GROUP_##G, NAME, WR_METRIC_##T, LABELS, HELP, B, sizeof(B) / sizeof(B[0])},
#include "base/metric_defs.def"
#undef WR_METRIC
#undef WR_METRIC_BOUNDED
};

const wr_metric_def_t *wr_metric_defs(size_t *n)
{
    if (n)
        *n = sizeof(rows) / sizeof(rows[0]);
    return rows;
}

const wr_metric_def_t *wr_metric_defs_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(rows) / sizeof(rows[0]); i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    return NULL;
}

void wr_metric_defs_describe(wr_metrics_t *m, wr_metric_group_t group)
{
    for (size_t i = 0; m && i < sizeof(rows) / sizeof(rows[0]); i++) {
        const wr_metric_def_t *r = &rows[i];
        if (r->group != group)
            continue;
        if (r->bounds)
            wr_metrics_describe_histogram(m, r->name, r->help, r->bounds, r->n_bounds);
        else
            wr_metrics_describe(m, r->name, r->type, r->help);
    }
}
