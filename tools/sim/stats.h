/*
 * stats.h - the statistics of the sale-day scenario (tools/sim): Kendall's
 * tau between join order and admission order, nearest-rank percentiles,
 * the count of users admitted ahead of an earlier joiner, and bucketing of
 * event times into a time series.
 *
 * Pure functions of their arguments: no I/O, no clock, no libevent. Arrays
 * are borrowed for the duration of the call and never kept.
 */
#ifndef WR_STATS_H
#define WR_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/*
 * Kendall's tau-b between the paired samples (x[i], y[i]), i in [0, n):
 *   tau_b = (C - D) / sqrt((n0 - n1) * (n0 - n2))
 * with C / D the concordant / discordant pairs, n0 = n(n-1)/2, n1 the pairs
 * tied in x and n2 the pairs tied in y. Without ties this is tau-a,
 * (C - D) / n0: 1.0 when y orders the samples exactly as x does (perfect
 * FIFO when x is join order and y admission order), -1.0 when reversed.
 * O(n log n) time (Knight's merge-sort algorithm), O(n) extra memory.
 *
 * Returns WR_OK with *out in [-1, 1]; WR_EINVAL when n < 2, a value is NaN,
 * or x or y is constant (tau is undefined: a zero denominator); WR_ENOMEM.
 * *out is untouched on error.
 */
wr_err_t wr_stats_kendall_tau(const double *x, const double *y, size_t n, double *out);

/* Sorts v[0..n) ascending in place. NaN must not occur. */
void wr_stats_sort(double *v, size_t n);

/*
 * Nearest-rank percentile of ascending data sorted[0..n): the smallest value
 * such that at least p percent of the values are <= it, i.e. the value of
 * rank ceil(p / 100 * n) (1-based), clamped to [1, n]; so p = 0 gives the
 * minimum and p = 100 the maximum. Always one of the data values, never an
 * interpolation. Returns WR_OK; WR_EINVAL when n == 0 or p is outside
 * [0, 100] or NaN.
 */
wr_err_t wr_stats_percentile(const double *sorted, size_t n, double p, double *out);

/*
 * Users admitted ahead of someone who joined earlier: the number of i for
 * which some j has join[j] < join[i] and admit[j] > admit[i] (someone who
 * joined strictly earlier was admitted strictly later than i). 0 for a
 * FIFO admission. O(n log n). Returns WR_OK (n == 0 gives 0), WR_ENOMEM.
 */
wr_err_t wr_stats_overtakes(const double *join, const double *admit, size_t n, size_t *out);

/*
 * Counts event times t[0..n) into nb buckets of width w starting at t0:
 * bucket k holds the events with t0 + k*w <= t < t0 + (k+1)*w. Events
 * outside [t0, t0 + nb*w) are ignored. counts[] is zeroed first. Units are
 * the caller's (e.g. ms). Returns the number of events counted; 0 when
 * w <= 0.
 */
size_t wr_stats_bucket(const double *t, size_t n, double t0, double w, uint32_t *counts, size_t nb);

#endif
