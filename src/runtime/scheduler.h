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

#include "core/history.h"
#include "base/metrics.h"
#include "core/qconfig.h"
#include "store/store.h"

typedef struct wr_scheduler wr_scheduler_t;

typedef struct {
    struct event_base *base; /* borrowed; outlives the scheduler */
    wr_store_t *store;       /* borrowed; outlives the scheduler */
    wr_metrics_t *metrics;   /* borrowed; NULL = no metrics */
    uint32_t discovery_ms;   /* queue discovery interval, ms; 0 = 1000 */
} wr_scheduler_opts_t;

/* Creates the scheduler and starts discovery. Returns WR_OK, WR_ENOMEM. */
wr_err_t wr_scheduler_new(const wr_scheduler_opts_t *opts, wr_scheduler_t **out);

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

/* The last known config of queue, borrowed until the next call into the
 * scheduler or the loop; NULL when the queue is unknown here. */
const wr_queue_config_t *wr_scheduler_config(wr_scheduler_t *s, const char *queue);

/* Admissions per second over the last minute, from the store's
 * admittedTotal; -1 when not known yet. */
double wr_scheduler_observed_rate(wr_scheduler_t *s, const char *queue);

/* Milliseconds until this instance next runs the queue's admit tick (its
 * timer is aimed at the middle of the store's tick, as every instance's
 * is); 0 while an admit call is in flight or the timer is due; -1 when the
 * queue is unknown here. For poll timing (wr_queue_retry_after_eta_ms). */
int64_t wr_scheduler_next_tick_ms(wr_scheduler_t *s, const char *queue);

/* Fail-open budget of the `limited` policy: takes one passthrough from the
 * queue's token bucket (failOpenPerSecond per instance, burst of one
 * second). Returns true if allowed. now_ms: monotonic ms. */
bool wr_scheduler_take_fail_open(wr_scheduler_t *s, const char *queue, int64_t now_ms);

/* The queue's one-second history (history.h), borrowed until the next
 * call into the scheduler or the loop; NULL when the queue is unknown here
 * (or its history could not be allocated). */
const wr_history_t *wr_scheduler_history(wr_scheduler_t *s, const char *queue);

/* Number of queues known. */
size_t wr_scheduler_count(wr_scheduler_t *s);

#endif
