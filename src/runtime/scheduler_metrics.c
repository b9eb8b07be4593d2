/*
 * scheduler_metrics.c - the scheduler's series per queue (labels
 * queue="NAME"): waitroom_queue_waiting / _active and the store's
 * cluster-wide totals as counters, the observed admission rate, the
 * config's gauges, waitroom_wait_seconds (the wait of every user this
 * instance's ticks admitted), the opening and quiet-queue gauges, and the
 * series per line of a queue with priority groups (labels queue, group). Described
 * once from the metric table (wr_scheduler__describe: base/metric_defs.c,
 * WR_METRICS_GROUP_SCHEDULER), published after every admit answer
 * (wr_scheduler__publish: a quiet queue's unchanged stats are not set again).
 */
#include <string.h>

#include "base/metric_defs.h"
#include "runtime/scheduler_internal.h"

void wr_scheduler__describe(wr_metrics_t *m)
{
    wr_metric_defs_describe(m, WR_METRICS_GROUP_SCHEDULER);
    wr_metrics_set(m, "waitroom_queues_quiet", NULL, 0);
}

/* True when line name is one of st's lines (a queue with groups). */
static bool has_line(const wr_queue_stats_t *st, const char *name)
{
    for (size_t i = 0; st->n_lines > 1 && i < st->n_lines && i <= WR_GROUPS_MAX; i++)
        if (strcmp(st->lines[i].name, name) == 0)
            return true;
    return false;
}

/* The series per line of a queue with groups (st->n_lines > 1: the
 * standard line, then each group; ql its queue label), and the removal of
 * those of lines in old (the stats published before; NULL none) that st
 * does not have: a group that left the config, or every line when the
 * groups went. */
static void publish_lines(wr_metrics_t *m, const char *ql, const wr_queue_stats_t *old,
                          const wr_queue_stats_t *st)
{
    char l[WR_QUEUE_NAME_MAX + WR_GROUP_NAME_MAX + 32];
    for (size_t i = 0; st->n_lines > 1 && i < st->n_lines && i <= WR_GROUPS_MAX; i++) {
        snprintf(l, sizeof(l), "%s,group=\"%s\"", ql, st->lines[i].name);
        wr_metrics_set(m, "waitroom_queue_group_waiting", l, (double)st->lines[i].waiting);
        wr_metrics_set(m, "waitroom_queue_group_admitted_total", l,
                       (double)st->lines[i].admitted_total);
    }
    for (size_t i = 0; old && old->n_lines > 1 && i < old->n_lines && i <= WR_GROUPS_MAX; i++) {
        if (has_line(st, old->lines[i].name))
            continue;
        snprintf(l, sizeof(l), "%s,group=\"%s\"", ql, old->lines[i].name);
        wr_metrics_remove(m, "waitroom_queue_group_waiting", l);
        wr_metrics_remove(m, "waitroom_queue_group_admitted_total", l);
    }
}

void wr_scheduler__publish(entry_t *e, const wr_queue_stats_t *st, bool quiet)
{
    wr_metrics_t *m = e->sched->metrics;
    if (!m)
        return;
    char l[WR_QUEUE_NAME_MAX + 16];
    wr_scheduler__labels(e, l, sizeof(l));
    bool same = quiet && e->published && memcmp(&e->last_st, st, sizeof(*st)) == 0;
    if (!same) /* priority groups: the lines' series */
        publish_lines(m, l, e->published ? &e->last_st : NULL, st);
    e->last_st = *st;
    e->published = true;
    /* the stats' series, the store's cluster-wide totals among them: set,
     * not incremented */
    if (same)
        goto rates;
#define WR_SCHED_STAT(field, name) wr_metrics_set(m, name, l, (double)st->field);
#include "runtime/scheduler_series.def"
#undef WR_SCHED_STAT
    if (st->stock_left >= 0) /* only for queues with a stock */
        wr_metrics_set(m, "waitroom_queue_stock_left", l, (double)st->stock_left);
    else
        wr_metrics_remove(m, "waitroom_queue_stock_left", l);
    wr_metrics_set(m, "waitroom_queue_sold_out", l, st->sold_out_at_ms >= 0 ? 1 : 0);
rates:;
    double r = wr_rate_window_rate(&e->rate);
    double v[5] = {r < 0 ? 0 : r, e->cfg.admit_per_second, e->cfg.paused ? 1 : 0,
                   e->cfg.enabled ? 1 : 0, e->cfg.closed ? 1 : 0};
    if (same && memcmp(v, e->last_rates, sizeof(v)) == 0)
        return;
    memcpy(e->last_rates, v, sizeof(v));
    wr_metrics_set(m, "waitroom_queue_admit_rate_observed", l, v[0]);
    wr_metrics_set(m, "waitroom_queue_admit_rate_configured", l, v[1]);
    wr_metrics_set(m, "waitroom_queue_paused", l, v[2]);
    wr_metrics_set(m, "waitroom_queue_enabled", l, v[3]);
    wr_metrics_set(m, "waitroom_queue_closed", l, v[4]);
}
