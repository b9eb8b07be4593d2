/*
 * autotune.h - the control law of queue config `autotune` (docs/API.md 1.2,
 * "The line follows the shop"): from the protected service's reports
 * (p95 latency, error rate) it moves the admission rate between
 * minPerSecond and maxPerSecond so that the latency stays near targetMs.
 *
 * Pure: no I/O, no clock, no store. The caller (runtime/scheduler.c) reads
 * the rate in use and the reports from the store, calls wr_autotune_step
 * with the store's time, and writes the answer back with a compare-and-set
 * on the step time, so every instance uses the same rate and two instances
 * never both take the same step. The law, and why it is stable, is in
 * autotune.c's top comment and docs/DESIGN.md ("Autotune").
 *
 * Also here: the session signal's sliding window (p95 of the time from
 * consume to release over the last WR_AUTOTUNE_REPORT_MAX_AGE_US).
 */
#ifndef WR_AUTOTUNE_H
#define WR_AUTOTUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WR_AUTOTUNE_REPORT_MAX_AGE_US 10000000LL /* a report older than 10 s is ignored */
#define WR_AUTOTUNE_STEP_MIN_US       1000000LL  /* at most one step a second */
#define WR_AUTOTUNE_FAILING           0.05       /* errorRate above it counts as failing */
#define WR_AUTOTUNE_RAISE_BELOW       0.8        /* raise while latency < 0.8 x target */
#define WR_AUTOTUNE_RAISE_PER_S       0.05       /* raise by at most 5% of max per second */
#define WR_AUTOTUNE_RAISE_MIN_PER_S   0.02       /* ... at least 2% of max, else 10% of the rate */
#define WR_AUTOTUNE_AIM               0.9        /* a cut aims at 0.9 x target */
#define WR_AUTOTUNE_RISING            1.1 /* a second cut needs 1.1 x the last cut's latency */
#define WR_AUTOTUNE_RATE_MAX          1000000.0 /* maxPerSecond's upper bound */
#define WR_AUTOTUNE_TARGET_MAX_MS     60000     /* targetMs's upper bound */

/* The queue's autotune config (qconfig `autotune`): 0 < min <= max <= 1e6,
 * 1 <= target_ms <= 60000. */
typedef struct {
    double min_per_second;
    double max_per_second;
    uint32_t target_ms;
} wr_autotune_cfg_t;

/* One report as the store keeps it: latency_ms >= 0 (p95, ms), error_rate
 * in [0, 1], at_us the store time it was received (0 = none). */
typedef struct {
    double latency_ms;
    double error_rate;
    int64_t at_us;
} wr_autotune_report_t;

/* Why a step chose its rate (the log line's reason). */
typedef enum {
    WR_AUTOTUNE_START = 0, /* no rate in use yet: the starting rate */
    WR_AUTOTUNE_BOUNDS,    /* the bounds changed: clamped into them */
    WR_AUTOTUNE_TOO_SOON,  /* under WR_AUTOTUNE_STEP_MIN_US since the last change: hold */
    WR_AUTOTUNE_NO_REPORT, /* no fresh report: hold */
    WR_AUTOTUNE_SLOW,      /* latency above target: lowered */
    WR_AUTOTUNE_ERRORS,    /* errorRate above WR_AUTOTUNE_FAILING: lowered */
    WR_AUTOTUNE_WAIT,      /* over target, but no report since the last change: hold */
    WR_AUTOTUNE_DRAINING,  /* over target but not rising since the last cut: hold */
    WR_AUTOTUNE_HEALTHY,   /* latency well within target and people waiting: raised */
    WR_AUTOTUNE_STEADY,    /* within the dead band, or nobody waiting, or at a bound: hold */
} wr_autotune_why_t;

/* The input of one step. */
typedef struct {
    double rate;           /* the rate in use, users/s; <= 0 (or not finite): none yet */
    int64_t step_us;       /* store time of the last change of the rate; 0 = none */
    double start_rate;     /* what the rate starts from (wr_autotune_start_rate) */
    bool saturated;        /* people were left waiting by the last admission tick: the rate,
                              not the demand, limits admission (a raise is only earned then) */
    double cut_latency_ms; /* the latency (>= 0.001) of the report that made the last change
                              when it was a cut; 0 otherwise (kept in the store with it) */
} wr_autotune_state_t;

typedef struct {
    double rate;  /* the rate to use, in [min, max] */
    bool changed; /* rate differs from the input (write it back, log it) */
    wr_autotune_why_t why;
    double cut_latency_ms; /* the state's next cut_latency_ms (keep with the rate) */
    double latency_ms;     /* the signal (worst fresh report at now_us), set whatever the
                              step decides (holds, start and bounds too); -1 when none */
    double error_rate;     /* idem; -1 when none */
} wr_autotune_out_t;

/* The rate the line starts from: rate (admitPerSecond, given or derived
 * from capacity; <= 0 = neither given) clamped to [min, max], else min. */
double wr_autotune_start_rate(const wr_autotune_cfg_t *cfg, double rate);

/*
 * One step of the law at store time now_us, from the reports (n of them,
 * e.g. the shop's and the session signal's; a report with at_us 0, older
 * than WR_AUTOTUNE_REPORT_MAX_AGE_US or more than that in the future is
 * ignored). Never leaves [min, max]; never lowers faster than halving per
 * second nor raises faster than 10% of max per second (it raises by
 * WR_AUTOTUNE_RAISE_PER_S). Deterministic. cfg, st, out must not be NULL.
 */
void wr_autotune_step(const wr_autotune_cfg_t *cfg, const wr_autotune_state_t *st,
                      const wr_autotune_report_t *reports, size_t n, int64_t now_us,
                      wr_autotune_out_t *out);

/* The reason as a word for the log ("slow", "failing", ...). */
const char *wr_autotune_why_name(wr_autotune_why_t why);

/* A valid report body: latency_ms >= 0 and finite (at most 3,600,000 ms),
 * 0 <= error_rate <= 1. */
bool wr_autotune_report_valid(double latency_ms, double error_rate);

/*
 * The session signal: the durations (ms) of the last WR_AUTOTUNE_WINDOW_N
 * sessions ended by release, with their end times (monotonic us, the
 * caller's clock). Plain value; zero-initialised is empty.
 */
#define WR_AUTOTUNE_WINDOW_N 512
typedef struct {
    double ms[WR_AUTOTUNE_WINDOW_N];
    int64_t at_us[WR_AUTOTUNE_WINDOW_N];
    size_t next;  /* ring position of the next sample */
    size_t count; /* samples held, <= WR_AUTOTUNE_WINDOW_N */
} wr_autotune_window_t;

/* Adds one duration (ms >= 0) ended at at_us. */
void wr_autotune_window_add(wr_autotune_window_t *w, double ms, int64_t at_us);

/* The p95 (nearest rank) of the samples ended within the last
 * WR_AUTOTUNE_REPORT_MAX_AGE_US before now_us; -1 when there are none. */
double wr_autotune_window_p95(const wr_autotune_window_t *w, int64_t now_us);

#endif
