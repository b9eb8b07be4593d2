/*
 * breaker.h - a circuit breaker state machine (closed / open / half-open)
 * with an injected clock. Pure: no I/O, no libevent, no allocation after
 * wr_breaker_new. The caller asks before each call (wr_breaker_allow) and
 * reports how the call went (wr_breaker_record) with the permit it got.
 *
 * closed    every call passes. Each result goes into a sliding window of
 *           the last window_size calls. The breaker opens when
 *           - consecutive_failures failures come in a row, or
 *           - the window holds >= min_calls calls and failures/calls >=
 *             failure_rate, or
 *           - the window holds >= min_calls calls and slow/calls >=
 *             slow_call_rate (slow: latency >= slow_call_ms, failed or not).
 * open      every call is refused (fail fast) until the wait has passed;
 *           the first wr_breaker_allow after that moves to half-open.
 * half-open half_open_probes calls pass (probes); the rest are refused. One
 *           probe that fails or is slow opens the breaker again with the
 *           wait doubled (capped at open_wait_max_ms); when every probe has
 *           succeeded the breaker closes with an empty window, and the wait
 *           goes back to open_wait_ms.
 *
 * Permits carry the breaker's generation (bumped at every transition): a
 * result that comes back after the state changed (a call let through
 * while closed that answers after the breaker opened) is ignored, so only
 * calls of the current state count. Times are milliseconds of any clock
 * that never goes backwards (the caller's monotonic clock).
 */
#ifndef WR_BREAKER_H
#define WR_BREAKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_BREAKER_WINDOW_MAX 1024 /* largest window_size */

typedef enum {
    WR_BREAKER_CLOSED = 0,
    WR_BREAKER_OPEN = 1,
    WR_BREAKER_HALF_OPEN = 2,
} wr_breaker_state_t;

/* Why the breaker moved (argument of the transition callback). */
typedef enum {
    WR_BREAKER_WHY_FAILURE_RATE = 0, /* closed -> open */
    WR_BREAKER_WHY_CONSECUTIVE = 1,  /* closed -> open */
    WR_BREAKER_WHY_SLOW_RATE = 2,    /* closed -> open */
    WR_BREAKER_WHY_WAIT_OVER = 3,    /* open -> half-open */
    WR_BREAKER_WHY_PROBE_FAILED = 4, /* half-open -> open (failed or slow probe) */
    WR_BREAKER_WHY_PROBES_OK = 5,    /* half-open -> closed */
} wr_breaker_why_t;

typedef struct wr_breaker wr_breaker_t;

/* Called synchronously from allow/record at every transition; wait_ms is
 * the open wait when `to` is OPEN (else 0). */
typedef void (*wr_breaker_transition_cb)(wr_breaker_state_t from, wr_breaker_state_t to,
                                         wr_breaker_why_t why, uint32_t wait_ms, void *arg);

/*
 * Parameters. A field left 0 takes its default (wr_breaker_opts_default):
 *   window_size          20 calls (1..WR_BREAKER_WINDOW_MAX)
 *   min_calls            10 calls in the window before the rates count
 *   failure_rate         0.5 (0 < x <= 1)
 *   consecutive_failures 5 (UINT32_MAX = never on this rule)
 *   slow_call_ms         200 ms
 *   slow_call_rate       0.8 (0 < x <= 1)
 *   open_wait_ms         1000 ms, first wait in open
 *   open_wait_max_ms     5000 ms, cap of the doubling wait (a returning store
 *                        is used again within 5 s)
 *   half_open_probes     3 probe calls in half-open
 */
typedef struct {
    uint32_t window_size;
    uint32_t min_calls;
    double failure_rate;
    uint32_t consecutive_failures;
    uint32_t slow_call_ms;
    double slow_call_rate;
    uint32_t open_wait_ms;
    uint32_t open_wait_max_ms;
    uint32_t half_open_probes;
    wr_breaker_transition_cb on_transition; /* NULL = none */
    void *arg;                              /* passed to on_transition */
} wr_breaker_opts_t;

/* Fills o with the defaults above (no callback). */
void wr_breaker_opts_default(wr_breaker_opts_t *o);

/*
 * Parses "key=value,key=value" into o (keys: window, min_calls,
 * failure_rate, consecutive, slow_ms, slow_rate, wait_ms, wait_max_ms,
 * probes) on top of what o holds. Returns WR_OK, or WR_EINVAL with a
 * message naming the key in err (errlen bytes incl. NUL; no prefix: the
 * caller names the flag). Values are plain decimal (a count: digits, 1 to
 * 4294967295; a rate: digits with an optional fraction, above 0 and at
 * most 1; no sign, exponent, hex or space), each key at most once, no
 * empty item; then range-checked like wr_breaker_new. "" sets nothing.
 */
wr_err_t wr_breaker_parse(wr_breaker_opts_t *o, const char *spec, char *err, size_t errlen);

/* What allow gives: whether the call may go ahead, and the generation it
 * belongs to (pass it back to record or cancel). */
typedef struct {
    bool allowed;
    bool probe; /* a half-open probe */
    uint64_t gen;
} wr_breaker_permit_t;

/* Counters since creation. */
typedef struct {
    uint64_t allowed;
    uint64_t rejected;
    uint64_t transitions[3]; /* by the state moved to */
} wr_breaker_stats_t;

/* Creates a closed breaker. opts NULL = defaults; zero fields take their
 * defaults. Returns WR_OK, WR_EINVAL (a value out of range: rates outside
 * (0,1], window above the max, min_calls above the window, wait_max below
 * wait), WR_ENOMEM. Free with wr_breaker_free. */
wr_err_t wr_breaker_new(const wr_breaker_opts_t *opts, wr_breaker_t **out);
void wr_breaker_free(wr_breaker_t *b);

/*
 * Asks to make one call at now_ms. Closed: allowed. Open: moves to half-open
 * when now_ms >= opened_at + wait, else refused. Half-open: allowed as a
 * probe while fewer than half_open_probes probes were let through, else
 * refused. Refusals are counted in stats.rejected.
 */
wr_breaker_permit_t wr_breaker_allow(wr_breaker_t *b, int64_t now_ms);

/*
 * Reports the result of an allowed call at now_ms (its end): failed (a
 * store failure, not a domain answer) and its latency in ms. Ignored when
 * p's generation is not the current one. May transition (see the file
 * comment); an opening is stamped now_ms.
 */
void wr_breaker_record(wr_breaker_t *b, wr_breaker_permit_t p, bool failed, uint32_t latency_ms,
                       int64_t now_ms);

/* Gives back a permit whose call was never made or whose result says
 * nothing about the store (cancelled): a half-open probe slot is freed. */
void wr_breaker_cancel(wr_breaker_t *b, wr_breaker_permit_t p);

wr_breaker_state_t wr_breaker_state(const wr_breaker_t *b);

/* Milliseconds until an open breaker lets probes through (0 when not open
 * or already due). */
uint32_t wr_breaker_retry_in_ms(const wr_breaker_t *b, int64_t now_ms);

/* The wait the breaker would use for its next opening (ms). */
uint32_t wr_breaker_next_wait_ms(const wr_breaker_t *b);

/* Calls and outcomes in the current window (closed state). */
void wr_breaker_window(const wr_breaker_t *b, uint32_t *calls, uint32_t *failures, uint32_t *slow);

void wr_breaker_get_stats(const wr_breaker_t *b, wr_breaker_stats_t *out);

/* "closed", "open", "half_open". */
const char *wr_breaker_state_name(wr_breaker_state_t s);

/* "failure_rate", "consecutive_failures", "slow_call_rate", "wait_over",
 * "probe_failed", "probes_succeeded". */
const char *wr_breaker_why_name(wr_breaker_why_t w);

#endif
