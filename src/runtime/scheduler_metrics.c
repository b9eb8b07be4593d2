/*
 * scheduler_metrics.c - the scheduler's series per queue (labels
 * queue="NAME"): waitroom_queue_waiting / _active and the store's
 * cluster-wide totals as counters, the observed admission rate, the
 * config's gauges, waitroom_wait_seconds (the wait of every user this
 * instance's ticks admitted), the opening and quiet-queue gauges. Described
 * once (wr_scheduler__describe), published after every admit answer
 * (wr_scheduler__publish: a quiet queue's unchanged stats are not set again).
 */
#include <string.h>

#include "runtime/scheduler_internal.h"

void wr_scheduler__describe(wr_metrics_t *m)
{
    static const double wait_bounds[] = {1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200};
    wr_metrics_describe(m, "waitroom_queue_waiting", WR_METRIC_GAUGE,
                        "People waiting in line; store-wide (the same on every instance).");
    wr_metrics_describe(m, "waitroom_queue_active", WR_METRIC_GAUGE,
                        "Live, unconsumed entry tokens plus open sessions (exact); store-wide "
                        "(the same on every instance).");
    wr_metrics_describe(m, "waitroom_queue_admitted_total", WR_METRIC_COUNTER,
                        "Users admitted; store-wide (the same on every instance).");
    wr_metrics_describe(m, "waitroom_queue_consumed_total", WR_METRIC_COUNTER,
                        "Entry tokens consumed; store-wide (the same on every instance).");
    wr_metrics_describe(m, "waitroom_queue_expired_total", WR_METRIC_COUNTER,
                        "Entry tokens that expired unused; store-wide (the same on every "
                        "instance).");
    wr_metrics_describe(m, "waitroom_queue_left_total", WR_METRIC_COUNTER,
                        "Users who left the line or gave back a token; store-wide (the same "
                        "on every instance).");
    wr_metrics_describe(m, "waitroom_queue_rejected_full_total", WR_METRIC_COUNTER,
                        "Joins refused because the line was full; store-wide (the same on "
                        "every instance).");
    wr_metrics_describe(m, "waitroom_queue_sessions", WR_METRIC_GAUGE,
                        "Open sessions (part of active, exact); store-wide (the same on every "
                        "instance).");
    wr_metrics_describe(m, "waitroom_queue_released_total", WR_METRIC_COUNTER,
                        "Sessions ended by release or leave; store-wide (the same on every "
                        "instance).");
    wr_metrics_describe(m, "waitroom_queue_sessions_expired_total", WR_METRIC_COUNTER,
                        "Sessions that lapsed after sessionSeconds; store-wide (the same on "
                        "every instance).");
    wr_metrics_describe(m, "waitroom_queue_abandoned_total", WR_METRIC_COUNTER,
                        "Page joins that never asked again, removed idleTimeoutSeconds "
                        "after the fetch, and held people removed after awayHoldSeconds; "
                        "store-wide (the same on every instance).");
    wr_metrics_describe(m, "waitroom_queue_away", WR_METRIC_GAUGE,
                        "People in line now away (no join or poll for idleTimeoutSeconds), "
                        "held ones included; store-wide.");
    wr_metrics_describe(m, "waitroom_queue_held", WR_METRIC_GAUGE,
                        "People whose turn came while away, held out of the line until they "
                        "return; store-wide.");
    wr_metrics_describe(m, "waitroom_queue_returned_total", WR_METRIC_COUNTER,
                        "Held people admitted on their return; store-wide (the same on every "
                        "instance).");
    wr_metrics_describe(m, "waitroom_queue_stock_left", WR_METRIC_GAUGE,
                        "What is left of the queue's stock (people who may still be let in); "
                        "only for queues with a stock; store-wide.");
    wr_metrics_describe(m, "waitroom_queue_prequeue", WR_METRIC_GAUGE,
                        "People waiting for the sale opening (opensAt); store-wide.");
    wr_metrics_describe(m, "waitroom_opening_step_max_seconds", WR_METRIC_GAUGE,
                        "Last sale opening this instance took part in: its longest "
                        "synchronous store call (the embedded store's event-loop pause).");
    wr_metrics_describe(m, "waitroom_opening_seconds", WR_METRIC_GAUGE,
                        "Last sale opening this instance took part in: from its first "
                        "chunk to its last.");
    wr_metrics_describe(m, "waitroom_queue_admit_rate_observed", WR_METRIC_GAUGE,
                        "Admissions per second over the last minute, from the store-wide "
                        "admitted total (the same on every instance).");
    wr_metrics_describe(m, "waitroom_queue_admit_rate_configured", WR_METRIC_GAUGE,
                        "Configured outflow rate, users per second; store-wide (the same on "
                        "every instance).");
    wr_metrics_describe(m, "waitroom_queue_paused", WR_METRIC_GAUGE,
                        "1 while admission is paused; store-wide (the same on every "
                        "instance).");
    wr_metrics_describe(m, "waitroom_queue_enabled", WR_METRIC_GAUGE,
                        "1 while the line is on (0 = passthrough); store-wide (the same on "
                        "every instance).");
    wr_metrics_describe(m, "waitroom_queue_closed", WR_METRIC_GAUGE,
                        "1 while the sale is closed (queue config closed); store-wide.");
    wr_metrics_describe(m, "waitroom_queue_sold_out", WR_METRIC_GAUGE,
                        "1 while the queue is sold out (stock 0, no pass live: stats "
                        "soldOutAt); store-wide.");
    wr_metrics_describe(m, "waitroom_queues_quiet", WR_METRIC_GAUGE,
                        "Queues this instance calls once a second instead of every tick: "
                        "nobody waiting, nothing live (docs/DESIGN.md, quiet queues).");
    wr_metrics_set(m, "waitroom_queues_quiet", NULL, 0);
    wr_metrics_describe(m, "waitroom_admission_errors_total", WR_METRIC_COUNTER,
                        "Admission ticks of this instance that failed (store unavailable, "
                        "timeout).");
    wr_metrics_describe_histogram(
        m, "waitroom_wait_seconds",
        "Time from joining the line to admission, seconds: for each user admitted by this "
        "instance's admission tick, the store time of that tick minus the user's arrival "
        "score. Every admission is counted once, by the instance whose tick made it; sum "
        "the series of all instances for the whole queue.",
        wait_bounds, sizeof(wait_bounds) / sizeof(wait_bounds[0]));
}

void wr_scheduler__publish(entry_t *e, const wr_queue_stats_t *st, bool quiet)
{
    wr_metrics_t *m = e->sched->metrics;
    if (!m)
        return;
    char l[WR_QUEUE_NAME_MAX + 16];
    wr_scheduler__labels(e, l, sizeof(l));
    bool same = quiet && e->published && memcmp(&e->last_st, st, sizeof(*st)) == 0;
    e->last_st = *st;
    e->published = true;
    if (same)
        goto rates;
    wr_metrics_set(m, "waitroom_queue_waiting", l, (double)st->waiting);
    wr_metrics_set(m, "waitroom_queue_active", l, (double)st->active);
    /* Cluster-wide totals from the store: set, not incremented. */
    wr_metrics_set(m, "waitroom_queue_admitted_total", l, (double)st->admitted_total);
    wr_metrics_set(m, "waitroom_queue_consumed_total", l, (double)st->consumed_total);
    wr_metrics_set(m, "waitroom_queue_expired_total", l, (double)st->expired_total);
    wr_metrics_set(m, "waitroom_queue_left_total", l, (double)st->left_total);
    wr_metrics_set(m, "waitroom_queue_rejected_full_total", l, (double)st->rejected_full_total);
    wr_metrics_set(m, "waitroom_queue_sessions", l, (double)st->sessions);
    wr_metrics_set(m, "waitroom_queue_prequeue", l, (double)st->prequeue);
    wr_metrics_set(m, "waitroom_queue_released_total", l, (double)st->released_total);
    wr_metrics_set(m, "waitroom_queue_sessions_expired_total", l,
                   (double)st->sessions_expired_total);
    wr_metrics_set(m, "waitroom_queue_abandoned_total", l, (double)st->abandoned_total);
    wr_metrics_set(m, "waitroom_queue_away", l, (double)st->away);
    wr_metrics_set(m, "waitroom_queue_held", l, (double)st->held);
    wr_metrics_set(m, "waitroom_queue_returned_total", l, (double)st->returned_total);
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
