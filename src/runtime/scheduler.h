/*
 * scheduler.h - the admission tick per queue, and this instance's view of
 * every queue's current config.
 *
 * For each known queue the scheduler calls the store's admit operation once
 * per tick (tickMs), aligned to the middle of the store's tick so that calls
 * neither double up nor skip a tick. The admit operation is idempotent per
 * tick in the store, so any number of instances together admit the
 * configured rate. Queues are discovered from the store (queue_list) every
 * discovery interval and from API answers (wr_scheduler_note), so a queue
 * created or changed on another instance is seen within one tick (changes
 * arrive with each admit answer) or one discovery interval (new queues).
 *
 * A quiet queue (store.h wr_store_admit_quiet: nobody waiting, nothing
 * live) is called once per second instead of every tick, and woken by
 * the first request of it this instance serves (wr_scheduler_note) or by
 * a quiet call that finds people (joined elsewhere); scheduler.c, "Quiet
 * queues" (K29).
 */
#ifndef WR_SCHEDULER_H
#define WR_SCHEDULER_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/metrics.h"
#include "core/autotune.h"
#include "core/history.h"
#include "core/qconfig.h"
#include "runtime/reporter.h"
#include "store/store.h"

typedef struct wr_scheduler wr_scheduler_t;

typedef struct {
    struct event_base *base; /* borrowed; outlives the scheduler */
    wr_store_t *store;       /* borrowed; outlives the scheduler */
    wr_metrics_t *metrics;   /* borrowed; NULL = no metrics */
    uint32_t discovery_ms;   /* queue discovery interval, ms; 0 = 1000 */
    uint32_t report_days;    /* --report-days: days the report keeps; 0 = 30 */
} wr_scheduler_opts_t;

/* Web Push: called with every admit answer of this instance's ticks that
 * claimed subscriptions (res->n_pushes > 0), right after the scheduler
 * took it in; res is borrowed for the call. The sender of the pushes. */
typedef void (*wr_scheduler_push_fn)(const char *queue, const wr_admit_t *res, void *arg);

/* Creates the scheduler and starts discovery. Returns WR_OK, WR_ENOMEM. */
wr_err_t wr_scheduler_new(const wr_scheduler_opts_t *opts, wr_scheduler_t **out);

/* Installs the push callback (NULL: none). */
void wr_scheduler_set_push(wr_scheduler_t *s, wr_scheduler_push_fn fn, void *arg);

/* The sale's report: this instance's reporter (runtime/reporter.h; owned
 * by the scheduler), or NULL for a NULL scheduler. */
wr_reporter_t *wr_scheduler_reporter(wr_scheduler_t *s);

/* Stops every timer and frees. Pending store callbacks must have been
 * cancelled first (close the store before freeing the scheduler, or free the
 * scheduler after the store has called back): a pending admit keeps its
 * queue entry alive until its callback runs. */
void wr_scheduler_free(wr_scheduler_t *s);

/* Starts the tick of queue with cfg (copied) if the queue is new to this
 * instance; a known queue keeps its config (refreshed by the answer of
 * every admit tick, so this costs nothing on the poll path) and is woken
 * if quiet: its admit call comes at once, then every tick. Call it with
 * every answer about the queue (join, poll, token, admin). */
void wr_scheduler_note(wr_scheduler_t *s, const char *queue, const wr_queue_config_t *cfg);

/* Replaces this instance's config of queue with cfg (copied) at once, or
 * starts its tick as wr_scheduler_note does: for a config this instance
 * has just written (admin PUT/PATCH), so it applies before the next tick. */
void wr_scheduler_set_config(wr_scheduler_t *s, const char *queue, const wr_queue_config_t *cfg);

/* Forgets a queue (deleted): stops its tick, removes its metrics. */
void wr_scheduler_forget(wr_scheduler_t *s, const char *queue);

/*
 * A queue as this instance knows it (its config, observed rate, tick,
 * fail-open bucket), looked up by name once and held by a request across
 * its store call, so that a poll validates and hashes its queue's name once
 * (not once per question). A held queue stays valid until it is released,
 * also when the scheduler forgets it meanwhile (it then reads as unknown:
 * no config, rate -1, next tick -1, no fail-open pass) or is freed.
 */
typedef struct wr_scheduler_queue wr_scheduler_queue_t;

/*
 * Makes *q the held queue named queue: when *q already holds that queue and
 * it is still known, no lookup is made (with cfg, the queue is noted as
 * wr_scheduler_note does). Otherwise releases *q, looks the name up and,
 * since a request of the queue is being served, notes it as
 * wr_scheduler_note does: a quiet queue is woken, its config taken from
 * cfg when it has none yet, an unknown one added when cfg is given; holds
 * what it finds (NULL: unknown here).
 * Returns *q. *q starts NULL; every non-NULL *q is given back with
 * wr_scheduler_release, before or after wr_scheduler_free.
 */
wr_scheduler_queue_t *wr_scheduler_hold(wr_scheduler_t *s, wr_scheduler_queue_t **q,
                                        const char *queue, const wr_queue_config_t *cfg);

/* Gives back a queue held with wr_scheduler_hold; NULL: nothing. */
void wr_scheduler_release(wr_scheduler_queue_t *q);

/* The last known config of q, borrowed until the next call into the
 * scheduler or the loop; NULL when q is NULL or forgotten. */
const wr_queue_config_t *wr_scheduler_queue_config(const wr_scheduler_queue_t *q);

/* The rate the ETA and poll timing use (wr_queue_eta_seconds). With
 * autotune: the rate in use, as this instance's last autotune step read
 * it from the store (at most a second old). Otherwise the observed rate:
 * admissions per second over the last minute, from the store's
 * admittedTotal, counted only since the line last had people after being
 * empty (wr_rate_window_add_tick), so the idle time before a crowd does not
 * dilute it; -1 when not known yet (under a second of it), or q is NULL or
 * forgotten. */
double wr_scheduler_queue_rate(const wr_scheduler_queue_t *q);

/* The share of q's line that is away, in [0, 1]: stats away / waiting as
 * the store answered this instance's last admit call (store-wide, at most
 * a tick old; away as the away sweep last saw it, less the held, who are
 * out of the line); 0 when nobody waits, or
 * q is NULL or forgotten. For poll timing (wr_queue_away_ahead). */
double wr_scheduler_queue_away_share(const wr_scheduler_queue_t *q);

/* Milliseconds until this instance next runs q's admit tick (its timer is
 * aimed at the middle of the store's tick, as every instance's is); 0
 * while an admit call is in flight or the timer is due; -1 when q is NULL
 * or forgotten. For poll timing (wr_queue_retry_after_eta_ms). */
int64_t wr_scheduler_queue_next_tick_ms(const wr_scheduler_queue_t *q);

/* Fail-open budget of the `limited` policy: takes one passthrough from q's
 * token bucket (failOpenPerSecond per instance, burst of one second).
 * Returns true if allowed; false too when q is NULL or forgotten. now_ms:
 * monotonic ms. */
bool wr_scheduler_queue_take_fail_open(wr_scheduler_queue_t *q, int64_t now_ms);

/* Two of them by name (one lookup each), for callers that hold no queue
 * (a request holds its queue: wr_scheduler_hold). wr_scheduler_observed_rate
 * is the plain last minute's rate (stats' admitRateObserved, the metric),
 * idle time included; -1 when not known. */
const wr_queue_config_t *wr_scheduler_config(wr_scheduler_t *s, const char *queue);
double wr_scheduler_observed_rate(wr_scheduler_t *s, const char *queue);

/* The queue's one-second history (history.h), borrowed until the next
 * call into the scheduler or the loop; NULL when the queue is unknown here
 * (or its history could not be allocated). */
const wr_history_t *wr_scheduler_history(wr_scheduler_t *s, const char *queue);

/* Autotune as this instance saw it last (the dashboard's text line; the
 * per-second values are in the history). Times are store time, epoch ms. */
typedef struct {
    double rate;       /* the rate in use as last read, users/s; 0 = not known yet */
    double latency_ms; /* the worst fresh report at the last step, ms; -1 = none fresh */
    double error_rate; /* idem; -1 = none fresh */
    /* The last change of the rate this instance knows of (changed_at_ms 0 =
     * none seen since it started). Its reason is known when this instance
     * made it (why_known): another instance's change, or one made before
     * this instance started, is seen only as a new rate at a new step time
     * (that instance's log has the reason). */
    int64_t changed_at_ms;
    double from; /* the rate before it, users/s; 0 = not known */
    double to;   /* the rate it set, users/s */
    bool why_known;
    wr_autotune_why_t why; /* START, BOUNDS, SLOW, ERRORS or HEALTHY when why_known */
    double why_latency_ms; /* the signal that made it (-1 = none) */
    double why_error_rate; /* idem */
} wr_scheduler_autotune_t;

/* Fills *out for queue when this instance knows it and its config has
 * autotune; false otherwise (*out untouched). */
bool wr_scheduler_autotune(wr_scheduler_t *s, const char *queue, wr_scheduler_autotune_t *out);

/* Autotune's session signal: a session of held queue q ended by release
 * after ms (consume to release). Kept in the queue's window (the last
 * WR_AUTOTUNE_WINDOW_N, 10 s; core/autotune.h) while its config has
 * autotune and sessionSeconds; the p95 goes to the store as a report (slot
 * 1) with the queue's next autotune step. q NULL or forgotten: nothing. */
void wr_scheduler_queue_note_session(wr_scheduler_queue_t *q, double ms);

/* Number of queues known. */
size_t wr_scheduler_count(wr_scheduler_t *s);

#endif
