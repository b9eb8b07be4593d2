/*
 * scheduler_internal.h - what the files of the scheduler module share, and
 * nothing else includes: a queue's entry (entry_t, the wr_scheduler_queue_t
 * of scheduler.h) and the scheduler's state.
 *
 * The scheduler is one module in three files:
 *   scheduler.c           the entries, their admit ticks (quiet queues, sale
 *                         openings), discovery, the held-queue API
 *   scheduler_autotune.c  autotune's step after an admit answer, the session
 *                         signal, what the dashboard shows of it
 *   scheduler_metrics.c   the per-queue series: described once, published
 *                         after every admit answer
 * scheduler.c calls down into the other two; they call nothing of it but
 * the inline helpers below and the public wr_scheduler_release.
 */
#ifndef WR_SCHEDULER_INTERNAL_H
#define WR_SCHEDULER_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "base/qmap.h"
#include "core/autotune.h"
#include "core/history.h"
#include "core/queue.h"
#include "runtime/reporter.h"
#include "runtime/scheduler.h"

typedef struct wr_scheduler_queue {
    wr_scheduler_t *sched;
    char name[WR_QUEUE_NAME_MAX + 1];
    wr_queue_config_t cfg;
    struct event *timer;
    bool in_flight;            /* an admit call is pending */
    bool dead;                 /* forgotten while in flight or held: free when neither */
    unsigned refs;             /* requests holding it (wr_scheduler_hold) */
    int64_t next_ms;           /* monotonic ms the timer is armed for (the next admit call) */
    wr_rate_window_t rate;     /* the last minute: stats, metrics */
    wr_rate_window_t eta_rate; /* the same since the line last had people: the ETA */
    double fail_tokens;        /* limited fail-open bucket */
    int64_t fail_last_ms;
    int64_t last_err_log_ms;
    wr_history_t *hist; /* NULL when it could not be allocated */
    bool has_cfg;       /* cfg is known (discovered by name: from the first admit answer) */
    bool quiet;         /* asleep (see "Quiet queues"): its timer is QUIET_MS away */
    bool woke;          /* woken while a call was in flight: its quiet answer counts as busy */
    bool published;     /* last_st holds the store stats last published */
    double away_share;  /* stats away / waiting of the last admit answer, 0 none */
    /* the last discovery round that listed it (wr_scheduler.list_round) */
    uint64_t seen_round;
    wr_queue_stats_t last_st;
    double last_rates[5]; /* the rate and config gauges last published */
    /* Sale opening (see above) */
    int64_t call_t0_us;   /* monotonic us when the admit in flight was called */
    int64_t call_sync_us; /* how long that call took before it returned */
    int64_t open_t0_us;   /* first call of the opening in progress, 0 = none */
    uint64_t open_moved, open_calls;
    int64_t open_sync_max_us, open_rtt_max_us;
    /* Autotune (see "Autotune" above) */
    bool at_busy;                   /* a step's store calls are in flight (holds a ref) */
    bool at_saturated;              /* the last admit answer left people waiting */
    int64_t at_last_ms;             /* monotonic ms of the last step started */
    double at_rate;                 /* the rate in use as last read, users/s; 0 = not known */
    double at_published;            /* the rate waitroom_autotune_rate shows, 0 = none yet */
    wr_autotune_out_t at_out;       /* the step whose write is in flight */
    wr_autotune_window_t *at_sess;  /* the session signal (allocated at its first sample) */
    double at_lat, at_err;          /* the signal of the last step, -1 = none fresh (or failed) */
    int64_t at_step_us;             /* store step time of the last change known (at_chg) */
    wr_scheduler_autotune_t at_chg; /* that change (its rate/latency members unused) */
} entry_t;

struct wr_scheduler {
    struct event_base *base;
    wr_store_t *store;
    wr_metrics_t *metrics;
    uint32_t discovery_ms;
    struct event *discovery;
    bool listing;
    bool freeing;
    struct list_req *list_pending; /* marked dead by free while a list call is pending */
    wr_qmap_t *queues;             /* name -> entry_t */
    entry_t *memo;                 /* wr_scheduler__find's last hit (in queues), or NULL */
    wr_reporter_t *reporter;       /* the sale's report: this instance's part (owned) */
    size_t n_quiet;                /* entries with quiet set (waitroom_queues_quiet) */
    uint64_t list_round;           /* discovery rounds answered (entry_t.seen_round) */
    wr_scheduler_push_fn push_fn;  /* Web Push: the admit answers' claimed subscriptions */
    void *push_arg;
};

/* The entry of queue name, or NULL. The last one found is remembered (a
 * burst of polls asks for one queue: one strcmp instead of a SipHash and
 * the name's check); entry_drop forgets it when it leaves the map. */
static inline entry_t *wr_scheduler__find(wr_scheduler_t *s, const char *name)
{
    if (s->memo && strcmp(s->memo->name, name) == 0)
        return s->memo;
    entry_t *e = wr_qmap_get(s->queues, name);
    if (e)
        s->memo = e;
    return e;
}

/* q when it is a queue this instance still knows, else NULL. */
static inline const entry_t *wr_scheduler__live(const wr_scheduler_queue_t *q)
{
    return q && !q->dead ? q : NULL;
}

/* queue="NAME", the labels of e's series (names are validated). */
static inline void wr_scheduler__labels(const entry_t *e, char *buf, size_t cap)
{
    snprintf(buf, cap, "queue=\"%s\"", e->name);
}

/* ---------- scheduler_metrics.c ---------- */

/* Describes every family of the scheduler in m (its rows of the metric
 * table, base/metric_defs.c; once, at wr_scheduler_new). */
void wr_scheduler__describe(wr_metrics_t *m);

/* Sets e's series after an admit answer with stats st; the store's stats
 * only when they changed or the queue is busy (quiet false; see "Quiet
 * queues" in scheduler.c). No metrics: nothing. */
void wr_scheduler__publish(entry_t *e, const wr_queue_stats_t *st, bool quiet);

/* ---------- scheduler_autotune.c ---------- */

/* After an admit answer with stats st: starts a step of e's autotune when
 * its config has autotune and a second has passed since the last (the step
 * holds a ref on e until its store calls are answered). */
void wr_scheduler__autotune_step(entry_t *e, const wr_queue_stats_t *st);

#endif
