/*
 * store_breaker.h - a store decorator (store.h vtable) that puts a circuit
 * breaker (breaker.h) in front of any inner store.
 *
 * Every operation asks the breaker first. Refused (open, or half-open with
 * every probe slot taken): the operation returns WR_EUNAVAILABLE at once and
 * its callback is never called (the async contract allows it), so nothing
 * reaches the inner store. Allowed: the call goes to the inner store with a
 * wrapped callback that records the outcome and latency, then calls the
 * caller's callback with the inner result unchanged.
 *
 * Failures for the breaker: WR_ETIMEOUT, WR_EUNAVAILABLE and WR_EPROTO
 * (from the callback, or returned by the inner call itself, e.g. Redis
 * disconnected). Domain answers (WR_ENOTFOUND, WR_EFULL, WR_ENOTINQUEUE,
 * WR_ETOKEN) are successes. WR_ECANCELED (close), argument errors
 * (WR_EINVAL, WR_ENOMEM, WR_ELIMIT) and a late replica (WR_EREPLICA,
 * durability mode: the primary answered) count as neither, nor does one
 * shard of a Redis Cluster being down (WR_ESHARD: the other shards' queues
 * keep working, so the whole store is not declared down). NOSCRIPT never
 * surfaces (store_redis retries once with EVAL inside one operation).
 *
 * Slow calls: a call at or over the slow-call threshold counts as slow
 * unless the inner store runs in this process (ops->in_process, the
 * embedded store): there latency only says the process itself is short of
 * CPU (a starved machine), and opening the breaker would turn a healthy
 * store's answers into 503s or fail-open passes without relieving
 * anything. Its failures still count. For any other store, the time the
 * process's own loop was stalled during the call (opts stalled_ms: paused,
 * starved) is left out of its latency first, for the same reason: one
 * 300 ms pause of waitroomd made every call in flight "slow" and opened
 * the breaker on a Redis that had answered each in a millisecond.
 *
 * Metrics (when given a registry): waitroom_breaker_state{state="closed|
 * open|half_open"} (gauges, exactly one is 1), waitroom_breaker_transitions_
 * total{to="..."}, waitroom_breaker_rejected_total. Each transition is
 * logged (opening at warn, the others at info).
 */
#ifndef WR_STORE_BREAKER_H
#define WR_STORE_BREAKER_H

#include "core/breaker.h"
#include "base/metrics.h"
#include "store/store.h"

typedef struct {
    wr_breaker_opts_t breaker; /* thresholds; zero fields = defaults
                                  (on_transition/arg are ignored: the decorator
                                  uses them) */
    wr_metrics_t *metrics;     /* borrowed, may be NULL; must outlive the store */
    int64_t (*now_ms)(void);   /* monotonic clock, ms; NULL = wr_clock_coarse_mono_ms (a tick
                                  of error is nothing to a window or a slow call) */
    /* ms of [since_ms, now_ms] (now_ms's clock) in which this process did
     * not run its loop (runtime/looplag.h); left out of a call's latency
     * before the slow-call rule. NULL = none. */
    uint32_t (*stalled_ms)(const void *arg, int64_t since_ms, int64_t now_ms);
    const void *stalled_arg;
} wr_store_breaker_opts_t;

/*
 * Wraps inner (ownership moves to the decorator: wr_store_close on the
 * decorator closes inner, then frees the breaker). opts NULL = defaults, no
 * metrics. Returns WR_OK and *out, WR_EINVAL (bad breaker options; inner is
 * then NOT taken and stays the caller's), WR_ENOMEM (same).
 */
wr_err_t wr_store_breaker_wrap(wr_store_t *inner, const wr_store_breaker_opts_t *opts,
                               wr_store_t **out);

/* The breaker's current state; CLOSED when s is not a decorator. */
wr_breaker_state_t wr_store_breaker_state(wr_store_t *s);

/* The wrapped store (borrowed), or NULL when s is not a decorator. */
wr_store_t *wr_store_breaker_inner(wr_store_t *s);

/* Counters of the breaker (allowed, rejected, transitions); zeros when s is
 * not a decorator. */
void wr_store_breaker_stats(wr_store_t *s, wr_breaker_stats_t *out);

#endif
