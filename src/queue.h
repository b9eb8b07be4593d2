/*
 * queue.h - the domain rules of the line that do not depend on storage:
 * poll interval by position (bands + jitter), ETA, the exact fractional
 * admission budget, and the observed admission rate.
 *
 * Pure functions and small value types; no I/O, no libevent, no store.
 * The same budget arithmetic is written in the Redis admission script and
 * in the embedded store; this module is its reference and is unit-tested.
 */
#ifndef WR_QUEUE_H
#define WR_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "qconfig.h"

#define WR_POLL_MIN_MS 250 /* retryAfterMs is never below this */

/*
 * Base poll interval (ms) for a 1-based position from cfg->poll_bands: the
 * first band whose up_to >= position (up_to 0 = no bound). Never below
 * WR_POLL_MIN_MS.
 */
uint32_t wr_queue_poll_base_ms(const wr_queue_config_t *cfg, uint64_t position);

/*
 * retryAfterMs for a position: the band's interval spread by
 * (2*u - 1) * pollJitter, u uniform in [0,1) supplied by the caller (so the
 * function is deterministic and testable), rounded, clamped to
 * >= WR_POLL_MIN_MS.
 */
uint32_t wr_queue_retry_after_ms(const wr_queue_config_t *cfg, uint64_t position, double u);

/*
 * etaSeconds = ceil(position / rate). rate is admitPerSecond, or the
 * observed rate when maxActive is set and the observed rate is lower
 * (observed_rate < 0 means "unknown", use the configured rate).
 * Returns -1 (JSON null) when paused or the rate is 0.
 */
int64_t wr_queue_eta_seconds(const wr_queue_config_t *cfg, uint64_t position, double observed_rate);

/* The per-queue admission budget: carry is the fractional part kept
 * between ticks; last_tick is the last tick index admitted. */
typedef struct {
    int64_t last_tick;   /* floor(now_us / (tick_ms*1000)) of the last tick run; -1 = never */
    int64_t carry_micro; /* fractional admissions carried over, in millionths of a user,
                            [0, 1000000) */
} wr_budget_t;

/*
 * Advances the budget to tick `tick` and returns how many users may be
 * admitted now (before the waiting / maxActive limits, which the caller
 * applies). Arithmetic is integer, in millionths of a user: each tick
 * accrues llround(admit_per_second * 1000 * tick_ms) micro-users (the Redis
 * script does the same, so both stores agree to the user). Idempotent per
 * tick: a tick <= last_tick returns 0 and changes nothing. Any gap since
 * the last tick run (a late timer under CPU load, a stall, the store
 * unreachable, every instance down) accrues ONE tick: no tick ever admits
 * more than one tick's budget, ceil(rate * tick_ms / 1000) (case K24), so
 * admission resumes at the configured rate with no catch-up burst. The
 * price: a tick that no instance runs is lost, so the long-run rate is
 * exact only while ticks run on time (the scheduler fires mid-tick, so a
 * timer up to half a tick late still runs its tick). When
 * `accrue` is false (paused, disabled, empty line), the budget is advanced
 * with no accrual and the carry is dropped, so no burst builds up.
 * Fractional rates are exact in the long run: at 175/s and 100 ms ticks,
 * any 10 consecutive ticks admit 175 (17 or 18 each).
 */
uint64_t wr_budget_advance(wr_budget_t *b, int64_t tick, double admit_per_second, uint32_t tick_ms,
                           bool accrue);

/*
 * After admitting `admitted` of the `allowed` returned by
 * wr_budget_advance (fewer when the line or maxActive ran short), drops
 * the unused whole admissions so they never accumulate into a burst.
 * The fractional carry is kept only when all allowed were used.
 */
void wr_budget_settle(wr_budget_t *b, uint64_t allowed, uint64_t admitted);

/* Observed admission rate over a sliding window (default 60 s), from
 * samples of the store's admittedTotal counter. Fixed-size ring buffer. */
#define WR_RATE_SAMPLES 64
typedef struct {
    int64_t t_ms[WR_RATE_SAMPLES];
    uint64_t total[WR_RATE_SAMPLES];
    unsigned head, count;
    int64_t window_ms;
} wr_rate_window_t;

/* Initialises the window; window_ms is the span averaged over (60000). */
void wr_rate_window_init(wr_rate_window_t *w, int64_t window_ms);

/* Records admittedTotal at now_ms (monotonic, ms). Samples closer than
 * window_ms / WR_RATE_SAMPLES to the previous one are coalesced. */
void wr_rate_window_add(wr_rate_window_t *w, int64_t now_ms, uint64_t admitted_total);

/* Admissions per second over the window ending at the newest sample;
 * -1 when fewer than two samples span at least one second. */
double wr_rate_window_rate(const wr_rate_window_t *w);

#endif
