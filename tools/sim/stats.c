/*
 * stats.c - statistics for the sale-day scenario (tools/sim).
 *
 * Kendall's tau-b uses Knight's algorithm (1966): sort the pairs by (x, y);
 * the pairs tied in x (n1) and tied in both (n3) are counted from runs of
 * that order. A stable merge sort of the y column in that order then counts
 * the swaps it makes (each swap is one pair with x_i < x_j and y_i > y_j,
 * i.e. one discordant pair; equal y are never swapped), and the pairs tied
 * in y (n2) are counted from runs of the sorted y. Then
 *   C - D = n0 - n1 - n2 + n3 - 2 * swaps.
 * Counts are int64 (n up to 2^31 keeps n0 below 2^62).
 *
 * overtakes: sort indices by join; walk them in join order, group by equal
 * join; a user is overtaken-ahead-of if its admission is below the maximum
 * admission of every strictly earlier joiner.
 *
 * Memory: every function allocates its scratch arrays and frees them before
 * returning; inputs are only read.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double x, y;
} pair_t;

static int cmp_pair(const void *a, const void *b)
{
    const pair_t *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double p = *(const double *)a, q = *(const double *)b;
    return p < q ? -1 : p > q ? 1 : 0;
}

/* Sorts v[0..n) by merge sort using tmp[0..n); returns the number of swaps
 * (inversions v[i] > v[j], i < j). Equal values keep their order. */
static int64_t merge_count(double *v, double *tmp, size_t n)
{
    int64_t swaps = 0;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (v[j] < v[i]) {
                    swaps += (int64_t)(mid - i);
                    tmp[k++] = v[j++];
                } else {
                    tmp[k++] = v[i++];
                }
            }
            while (i < mid)
                tmp[k++] = v[i++];
            while (j < hi)
                tmp[k++] = v[j++];
        }
        memcpy(v, tmp, n * sizeof *v);
    }
    return swaps;
}

/* Sum over runs of equal values in sorted v of t(t-1)/2. */
static int64_t tied_pairs(const double *v, size_t n)
{
    int64_t sum = 0;
    size_t run = 1;
    for (size_t i = 1; i <= n; i++) {
        if (i < n && v[i] == v[i - 1]) {
            run++;
        } else {
            sum += (int64_t)run * (int64_t)(run - 1) / 2;
            run = 1;
        }
    }
    return sum;
}

wr_err_t wr_stats_kendall_tau(const double *x, const double *y, size_t n, double *out)
{
    wr_err_t err = WR_OK;
    pair_t *p = NULL;
    double *ys = NULL, *tmp = NULL;
    if (n < 2 || n > ((size_t)1 << 31))
        return WR_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i]) || isnan(y[i]))
            return WR_EINVAL;
    p = malloc(n * sizeof *p);
    ys = malloc(n * sizeof *ys);
    tmp = malloc(n * sizeof *tmp);
    if (!p || !ys || !tmp) {
        err = WR_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (pair_t){x[i], y[i]};
    qsort(p, n, sizeof *p, cmp_pair);

    int64_t n0 = (int64_t)n * (int64_t)(n - 1) / 2;
    int64_t n1 = 0, n3 = 0;
    size_t run_x = 1, run_xy = 1;
    for (size_t i = 1; i <= n; i++) {
        int same_x = i < n && p[i].x == p[i - 1].x;
        int same_xy = same_x && p[i].y == p[i - 1].y;
        if (same_x) {
            run_x++;
        } else {
            n1 += (int64_t)run_x * (int64_t)(run_x - 1) / 2;
            run_x = 1;
        }
        if (same_xy) {
            run_xy++;
        } else {
            n3 += (int64_t)run_xy * (int64_t)(run_xy - 1) / 2;
            run_xy = 1;
        }
    }
    for (size_t i = 0; i < n; i++)
        ys[i] = p[i].y;
    int64_t swaps = merge_count(ys, tmp, n);
    int64_t n2 = tied_pairs(ys, n);

    if (n1 == n0 || n2 == n0) {
        err = WR_EINVAL; /* x or y constant: tau undefined */
        goto out;
    }
    double s = (double)(n0 - n1 - n2 + n3 - 2 * swaps);
    double tau = s / sqrt((double)(n0 - n1) * (double)(n0 - n2));
    if (tau > 1.0)
        tau = 1.0;
    if (tau < -1.0)
        tau = -1.0;
    *out = tau;
out:
    free(p);
    free(ys);
    free(tmp);
    return err;
}

void wr_stats_sort(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_double);
}

wr_err_t wr_stats_percentile(const double *sorted, size_t n, double p, double *out)
{
    if (n == 0 || isnan(p) || p < 0.0 || p > 100.0)
        return WR_EINVAL;
    double r = ceil(p * (double)n / 100.0); /* p*n first: exact for whole p */
    size_t rank = r < 1.0 ? 1 : (size_t)r;
    if (rank > n)
        rank = n;
    *out = sorted[rank - 1];
    return WR_OK;
}

typedef struct {
    double join, admit;
} ja_t;

static int cmp_join(const void *a, const void *b)
{
    const ja_t *p = a, *q = b;
    return p->join < q->join ? -1 : p->join > q->join ? 1 : 0;
}

wr_err_t wr_stats_overtakes(const double *join, const double *admit, size_t n, size_t *out)
{
    if (n == 0) {
        *out = 0;
        return WR_OK;
    }
    ja_t *v = malloc(n * sizeof *v);
    if (!v)
        return WR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = (ja_t){join[i], admit[i]};
    qsort(v, n, sizeof *v, cmp_join);

    size_t count = 0;
    double max_before = -INFINITY; /* max admit of strictly earlier joiners */
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        double group_max = -INFINITY;
        while (j < n && v[j].join == v[i].join) {
            if (v[j].admit < max_before)
                count++;
            if (v[j].admit > group_max)
                group_max = v[j].admit;
            j++;
        }
        if (group_max > max_before)
            max_before = group_max;
        i = j;
    }
    free(v);
    *out = count;
    return WR_OK;
}

size_t wr_stats_bucket(const double *t, size_t n, double t0, double w, uint32_t *counts, size_t nb)
{
    if (nb > 0)
        memset(counts, 0, nb * sizeof *counts);
    if (!(w > 0.0))
        return 0;
    size_t counted = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] >= t0))
            continue;
        double k = floor((t[i] - t0) / w);
        if (k >= (double)nb)
            continue;
        counts[(size_t)k]++;
        counted++;
    }
    return counted;
}
