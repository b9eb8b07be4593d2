/*
 * autotune.c - the control law of `autotune` (autotune.h).
 *
 * The law (one step at most once a second, WR_AUTOTUNE_STEP_MIN_US since
 * the last change of the rate; the signal is the worst of the fresh
 * reports: the highest latency, the highest error rate):
 *   - no fresh report (none, or all older than 10 s): hold.
 *   - latency L above target T, or errorRate E above 0.05 (failing): lower
 *     multiplicatively, rate x f with f = min(0.9 T / L, 1 - E), never
 *     below 0.5 (the contract's "halving per second"), and only on a report
 *     received after the last change (a report that predates a cut cannot
 *     say whether the cut was enough: no second cut on the same evidence).
 *   - L below 0.8 T and not failing, while people are left waiting
 *     (saturated): raise by 10% of the rate per second, at least 2% and at
 *     most 5% of max (the contract allows 10% of max).
 *   - a cut remembers the latency of the report that made it; a later cut
 *     for latency alone needs a latency at least 10% above that (rising:
 *     the rate is still above what the service takes and its backlog
 *     grows). A latency that is flat or falling means the backlog is
 *     draining at the lower rate, or the service is slow at any rate (its
 *     own service time is above target): cutting further would only starve
 *     it. Hold. A service that is failing (E above 0.05) is cut on every
 *     fresh report, down to min: fast failures (a broken dependency
 *     answering 500s in milliseconds) show no rising latency, and the
 *     contract lowers the rate while reports say the service is failing.
 *   - otherwise (0.8 T <= L <= T, or nobody waiting): hold.
 * Always clamped to [min, max]. A proportional cut (0.9 T / L) lands near
 * the rate the service sustains when latency grows with load; the dead band
 * between 0.8 T and T and the slow additive raise keep it from hunting; the
 * only state is the rate itself (no integral term), so nothing winds up at
 * a bound: the first bad report after a long stretch at max lowers at once.
 * docs/DESIGN.md "Autotune" has the full argument.
 */
#include "core/autotune.h"

#include "base/names.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

double wr_autotune_start_rate(const wr_autotune_cfg_t *cfg, double rate)
{
    if (!(rate > 0) || !isfinite(rate))
        return cfg->min_per_second;
    return clamp(rate, cfg->min_per_second, cfg->max_per_second);
}

const char *wr_autotune_why_name(wr_autotune_why_t why)
{
    static const char *const names[] = {"start",   "bounds", "too-soon", "no-report", "slow",
                                        "failing", "wait",   "draining", "healthy",   "steady"};
    return WR_NAMES_GET(names, why, "?");
}

bool wr_autotune_report_valid(double latency_ms, double error_rate)
{
    return isfinite(latency_ms) && latency_ms >= 0 && latency_ms <= 3600000.0 &&
           isfinite(error_rate) && error_rate >= 0 && error_rate <= 1;
}

void wr_autotune_step(const wr_autotune_cfg_t *cfg, const wr_autotune_state_t *st,
                      const wr_autotune_report_t *reports, size_t n, int64_t now_us,
                      wr_autotune_out_t *out)
{
    double lo = cfg->min_per_second, hi = cfg->max_per_second;
    memset(out, 0, sizeof *out);
    out->cut_latency_ms = st->cut_latency_ms;
    /* the signal first, whatever the step decides: the worst fresh report
     * (the dashboard's history shows it every second, holds included) */
    double lat = -1, err = -1;
    int64_t newest = 0;
    for (size_t i = 0; i < n; i++) {
        const wr_autotune_report_t *p = &reports[i];
        if (p->at_us <= 0 || now_us - p->at_us > WR_AUTOTUNE_REPORT_MAX_AGE_US ||
            p->at_us - now_us > WR_AUTOTUNE_REPORT_MAX_AGE_US)
            continue;
        if (p->latency_ms > lat)
            lat = p->latency_ms;
        if (p->error_rate > err)
            err = p->error_rate;
        if (p->at_us > newest)
            newest = p->at_us;
    }
    out->latency_ms = lat;
    out->error_rate = err;
    if (!(st->rate > 0) || !isfinite(st->rate)) {
        out->rate = wr_autotune_start_rate(cfg, st->start_rate);
        out->changed = true;
        out->why = WR_AUTOTUNE_START;
        return;
    }
    double r = clamp(st->rate, lo, hi);
    out->rate = r;
    if (r != st->rate) {
        out->changed = true;
        out->why = WR_AUTOTUNE_BOUNDS;
        return;
    }
    /* a clock that stepped back (now before the last change) counts as a
     * second since it: the law goes on */
    int64_t dt_us = now_us >= st->step_us ? now_us - st->step_us : WR_AUTOTUNE_STEP_MIN_US;
    if (st->step_us > 0 && dt_us < WR_AUTOTUNE_STEP_MIN_US) {
        out->why = WR_AUTOTUNE_TOO_SOON;
        return;
    }
    double dt_s =
        st->step_us > 0 && dt_us < 2 * WR_AUTOTUNE_STEP_MIN_US ? (double)dt_us / 1e6 : 1.0;
    if (dt_s > 1.0)
        dt_s = 1.0; /* a long gap (a restart, no steps) earns no bigger move */

    if (newest == 0) {
        out->why = WR_AUTOTUNE_NO_REPORT;
        return;
    }
    double target = (double)cfg->target_ms;
    bool slow = lat > target, failing = err > WR_AUTOTUNE_FAILING;
    if (slow || failing) {
        if (newest <= st->step_us) {
            out->why = WR_AUTOTUNE_WAIT;
            return;
        }
        if (!failing && st->cut_latency_ms > 0 && lat < WR_AUTOTUNE_RISING * st->cut_latency_ms) {
            out->why = WR_AUTOTUNE_DRAINING; /* the last cut is working: the backlog drains */
            return;
        }
        double f = 1.0;
        if (slow)
            f = WR_AUTOTUNE_AIM * target / lat;
        if (failing && 1.0 - err < f)
            f = 1.0 - err;
        if (f < 0.5)
            f = 0.5;
        double next = clamp(r * f, lo, hi);
        out->why = slow && (!failing || WR_AUTOTUNE_AIM * target / lat <= 1.0 - err)
                       ? WR_AUTOTUNE_SLOW
                       : WR_AUTOTUNE_ERRORS;
        if (next < r) {
            out->rate = next;
            out->changed = true;
            out->cut_latency_ms = lat > 0.001 ? lat : 0.001; /* > 0: the last change was a cut */
        } else {
            out->why = WR_AUTOTUNE_STEADY; /* at min already */
        }
        return;
    }
    if (lat < WR_AUTOTUNE_RAISE_BELOW * target && st->saturated && r < hi) {
        double up = clamp(0.1 * r, WR_AUTOTUNE_RAISE_MIN_PER_S * hi, WR_AUTOTUNE_RAISE_PER_S * hi);
        out->rate = clamp(r + up * dt_s, lo, hi);
        out->changed = out->rate != r;
        out->cut_latency_ms = 0;
        out->why = WR_AUTOTUNE_HEALTHY;
        return;
    }
    out->why = WR_AUTOTUNE_STEADY;
}

void wr_autotune_window_add(wr_autotune_window_t *w, double ms, int64_t at_us)
{
    if (!(ms >= 0) || !isfinite(ms))
        return;
    w->ms[w->next] = ms;
    w->at_us[w->next] = at_us;
    w->next = (w->next + 1) % WR_AUTOTUNE_WINDOW_N;
    if (w->count < WR_AUTOTUNE_WINDOW_N)
        w->count++;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double wr_autotune_window_p95(const wr_autotune_window_t *w, int64_t now_us)
{
    double v[WR_AUTOTUNE_WINDOW_N];
    size_t n = 0;
    for (size_t i = 0; i < w->count; i++)
        if (now_us - w->at_us[i] <= WR_AUTOTUNE_REPORT_MAX_AGE_US)
            v[n++] = w->ms[i];
    if (n == 0)
        return -1;
    qsort(v, n, sizeof v[0], cmp_double);
    size_t rank = (size_t)ceil(0.95 * (double)n); /* nearest rank, 1-based */
    return v[rank - 1];
}
