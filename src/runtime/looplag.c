/*
 * looplag.c - stalls of the event loop (looplag.h for why and the rules).
 *
 * Structure: the tick's due time, a ring of the last WR_LOOPLAG_KEEP
 * stalls [from, to) in ms, a count, and the timer (one-shot, re-armed by
 * each tick for WR_LOOPLAG_PERIOD_MS: a persistent timer would be re-armed
 * from its old due time, and a stall would be followed by a burst of
 * catch-up ticks).
 *
 * Invariants: the ring holds n <= WR_LOOPLAG_KEEP stalls, oldest at
 * (head - n) mod KEEP; each has from < to; stalls do not overlap (each
 * starts at a due time set after the previous one ended).
 *
 * Cost: 20 wakes a second; a query (the breaker's, only for a store call
 * at or over its slow-call threshold) walks the kept stalls newest first
 * and stops at the first that ended before the call began.
 */
#include "runtime/looplag.h"

#include <stdbool.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/metric_defs.h"

struct wr_looplag {
    int64_t due_ms;
    struct {
        int64_t from, to;
    } stall[WR_LOOPLAG_KEEP];
    unsigned head, n;
    uint64_t stalls;
    bool live; /* started, or ticked by hand: due_ms is a tick's due time */
    wr_metrics_t *metrics;
    struct event *timer; /* NULL without a base */
};

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_looplag_t *l = arg;
    wr_looplag_tick(l, wr_clock_mono_ms());
    struct timeval tv = wr_clock_tv_ms(WR_LOOPLAG_PERIOD_MS);
    evtimer_add(l->timer, &tv);
}

wr_err_t wr_looplag_new(wr_metrics_t *metrics, int64_t now_ms, wr_looplag_t **out)
{
    wr_looplag_t *l = calloc(1, sizeof *l);
    if (!l)
        return WR_ENOMEM;
    l->due_ms = now_ms + WR_LOOPLAG_PERIOD_MS;
    l->metrics = metrics;
    if (metrics) {
        wr_metric_defs_describe(metrics, WR_METRICS_GROUP_LOOP);
        wr_metrics_inc(metrics, "waitroom_event_loop_stalls_total", NULL, 0);
        wr_metrics_set(metrics, "waitroom_event_loop_last_stall_seconds", NULL, 0);
    }
    *out = l;
    return WR_OK;
}

wr_err_t wr_looplag_start(wr_looplag_t *l, struct event_base *base, int64_t now_ms)
{
    if (l->timer)
        return WR_EINVAL;
    l->timer = evtimer_new(base, timer_cb, l);
    if (!l->timer)
        return WR_ENOMEM;
    l->due_ms = now_ms + WR_LOOPLAG_PERIOD_MS;
    l->live = true;
    struct timeval tv = wr_clock_tv_ms(WR_LOOPLAG_PERIOD_MS);
    if (evtimer_add(l->timer, &tv) != 0) {
        event_free(l->timer);
        l->timer = NULL;
        return WR_ENOMEM;
    }
    return WR_OK;
}

void wr_looplag_free(wr_looplag_t *l)
{
    if (!l)
        return;
    if (l->timer)
        event_free(l->timer);
    free(l);
}

void wr_looplag_tick(wr_looplag_t *l, int64_t now_ms)
{
    int64_t late = now_ms - l->due_ms;
    if (late > (int64_t)WR_LOOPLAG_MIN_MS) {
        l->stall[l->head].from = l->due_ms;
        l->stall[l->head].to = now_ms;
        l->head = (l->head + 1) % WR_LOOPLAG_KEEP;
        if (l->n < WR_LOOPLAG_KEEP)
            l->n++;
        l->stalls++;
        if (l->metrics) {
            wr_metrics_inc(l->metrics, "waitroom_event_loop_stalls_total", NULL, 1);
            wr_metrics_set(l->metrics, "waitroom_event_loop_last_stall_seconds", NULL,
                           (double)late / 1000.0);
        }
        if (late >= (int64_t)WR_LOOPLAG_WARN_MS) {
            /* its length as a field of its own too, for log queries */
            wr_log_field_t f[] = {WR_LOG_I("stall_ms", late)};
            wr_log_fields(WR_LOG_WARN,
                          "event loop stalled (the process paused or starved of CPU): store "
                          "calls answered meanwhile are not counted slow by the breaker",
                          f, 1);
        }
    }
    l->due_ms = now_ms + WR_LOOPLAG_PERIOD_MS;
    l->live = true;
}

/* Overlap of [a, b) and [c, d), >= 0. */
static int64_t overlap(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t lo = a > c ? a : c, hi = b < d ? b : d;
    return hi > lo ? hi - lo : 0;
}

uint32_t wr_looplag_stalled_ms(const wr_looplag_t *l, int64_t since_ms, int64_t now_ms)
{
    if (!l || since_ms >= now_ms)
        return 0;
    int64_t sum = 0;
    for (unsigned i = 0; i < l->n; i++) {
        unsigned k = (l->head + WR_LOOPLAG_KEEP - 1 - i) % WR_LOOPLAG_KEEP;
        if (l->stall[k].to <= since_ms)
            break; /* older ones end earlier still */
        sum += overlap(since_ms, now_ms, l->stall[k].from, l->stall[k].to);
    }
    if (l->live && now_ms - l->due_ms > (int64_t)WR_LOOPLAG_MIN_MS)
        sum += overlap(since_ms, now_ms, l->due_ms, now_ms);
    return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

uint64_t wr_looplag_stalls(const wr_looplag_t *l)
{
    return l ? l->stalls : 0;
}
