/*
 * looplag.h - when this process's event loop did not run: paused
 * (SIGSTOP, a VM's stolen time), descheduled on a starved machine, or
 * held up by one long iteration of its own.
 *
 * Why: a store call's latency is measured on the loop. A call answered in
 * 1 ms by Redis but read 300 ms later because the process was not running
 * looks 300 ms slow; enough of them and the store's circuit breaker opens
 * (the slow-call rule) on a store that is fine, turning answers into 503s
 * and degraded passes. The breaker asks this module how much of a call's
 * time the loop itself was stalled and leaves that out
 * (store_breaker.h, stalled_ms).
 *
 * How: a timer every WR_LOOPLAG_PERIOD_MS notes how late it ran. A tick
 * more than WR_LOOPLAG_MIN_MS late is a stall from its due time to the
 * moment it ran; the last WR_LOOPLAG_KEEP stalls are kept. A stall still
 * going on (the tick is overdue while other callbacks run: the I/O of a
 * loop iteration runs before its timers) counts up to now. A stall is
 * seen from the tick's due time, so up to one period of its start is
 * missed: what is left out is never more than what happened.
 *
 * Metrics (group LOOP): waitroom_event_loop_stalls_total,
 * waitroom_event_loop_last_stall_seconds. A stall of 250 ms or more (the
 * default store timeout) is logged at warn.
 *
 * Clock: wr_clock_mono_ms (CLOCK_MONOTONIC, ms), the breaker's.
 * One per process, on the loop's thread.
 */
#ifndef WR_LOOPLAG_H
#define WR_LOOPLAG_H

#include <event2/event.h>
#include <stdint.h>

#include "base/error.h"
#include "base/metrics.h"

#define WR_LOOPLAG_PERIOD_MS 50u
#define WR_LOOPLAG_MIN_MS    50u /* lateness beyond this is a stall */
#define WR_LOOPLAG_KEEP      16u
#define WR_LOOPLAG_WARN_MS   250u

typedef struct wr_looplag wr_looplag_t;

/* A watcher from now_ms (wr_clock_mono_ms), not ticking yet; metrics
 * may be NULL (borrowed; must outlive it). WR_OK and *out (free with
 * wr_looplag_free), or WR_ENOMEM. Without wr_looplag_start, tests drive
 * it with wr_looplag_tick. */
wr_err_t wr_looplag_new(wr_metrics_t *metrics, int64_t now_ms, wr_looplag_t **out);

/* Starts the timer on base, the first tick due WR_LOOPLAG_PERIOD_MS after
 * now_ms: call it just before the loop runs for good, so the start-up's
 * own work (a snapshot loaded, the store waited for) is no stall. WR_OK,
 * WR_ENOMEM; WR_EINVAL when already started. */
wr_err_t wr_looplag_start(wr_looplag_t *l, struct event_base *base, int64_t now_ms);

/* Stops the timer and frees l. NULL: no-op. */
void wr_looplag_free(wr_looplag_t *l);

/* The tick ran at now_ms (ms, monotonic): notes a stall when it is more
 * than WR_LOOPLAG_MIN_MS past its due time; the next one is due
 * WR_LOOPLAG_PERIOD_MS from now_ms. The timer calls it; public for tests. */
void wr_looplag_tick(wr_looplag_t *l, int64_t now_ms);

/* Milliseconds of [since_ms, now_ms] in which the loop did not run: the
 * kept stalls' overlap with it, plus the tick's overdue time beyond its
 * due time when it is more than WR_LOOPLAG_MIN_MS late now (once started,
 * or ticked). 0 when l is
 * NULL or since_ms >= now_ms. Saturates at UINT32_MAX. */
uint32_t wr_looplag_stalled_ms(const wr_looplag_t *l, int64_t since_ms, int64_t now_ms);

/* Stalls noted since l was made. */
uint64_t wr_looplag_stalls(const wr_looplag_t *l);

#endif
