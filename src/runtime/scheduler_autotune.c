/*
 * scheduler_autotune.c - the scheduler's part of autotune (docs/API.md 1.2;
 * core/autotune.h): for a queue whose config has autotune, an admit answer
 * at least a second after the last step starts one (wr_scheduler__autotune_step):
 * read the store's autotune state (rate in use, step time, reports), run
 * the law (wr_autotune_step, on the store's clock) and, when it moves the
 * rate, write it with a compare-and-set on the step time. The first write
 * of a step wins on every instance; the others read the new rate at their
 * next step. The instance whose write won logs the change with its reason;
 * each sets waitroom_autotune_rate{queue} to the rate in use it read. A
 * step in flight holds a ref on the entry. Also here: the session signal
 * (wr_scheduler_queue_note_session, the p95 reported with the next step)
 * and what the dashboard shows (wr_scheduler_autotune). scheduler.c,
 * "Autotune", has the whole story.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/log.h"
#include "runtime/scheduler_internal.h"

static void at_done(entry_t *e, double rate_in_use)
{
    wr_metrics_t *m = e->sched->metrics;
    if (rate_in_use > 0 && rate_in_use != e->at_published && m && !e->dead) {
        char l[WR_QUEUE_NAME_MAX + 16];
        wr_scheduler__labels(e, l, sizeof(l));
        wr_metrics_set(m, "waitroom_autotune_rate", l, rate_in_use);
        e->at_published = rate_in_use; /* set only when it changes, published at least once */
    }
    if (rate_in_use > 0)
        e->at_rate = rate_in_use;
    e->at_busy = false;
    wr_scheduler_release(e);
}

/* A change of the rate made elsewhere (another instance, or before this
 * one started) seen as a new step time: its reason is not known here. */
static void at_seen(entry_t *e, int64_t step_us, double rate_now)
{
    if (step_us <= 0 || step_us == e->at_step_us)
        return;
    e->at_step_us = step_us;
    e->at_chg = (wr_scheduler_autotune_t){.changed_at_ms = step_us / 1000,
                                          .from = e->at_rate,
                                          .to = rate_now,
                                          .why_known = false,
                                          .why_latency_ms = -1,
                                          .why_error_rate = -1};
}

static void at_set_cb(wr_err_t err, const wr_autotune_state_rec_t *res, void *arg)
{
    entry_t *e = arg;
    if (err != WR_OK || e->dead) {
        at_done(e, 0);
        return;
    }
    double before = e->at_rate;
    double now = wr_store_rate_in_use(&e->cfg, res->rate);
    if (!res->applied) {
        at_seen(e, res->step_us, now); /* another instance's write won */
    } else {
        e->at_step_us = res->step_us;
        e->at_chg = (wr_scheduler_autotune_t){.changed_at_ms = res->step_us / 1000,
                                              .from = before,
                                              .to = now,
                                              .why_known = true,
                                              .why = e->at_out.why,
                                              .why_latency_ms = e->at_out.latency_ms,
                                              .why_error_rate = e->at_out.error_rate};
    }
    if (res->applied) {
        /* each signal when known: none before the first health report */
        char lat[32] = "latency unknown", er[32] = "errorRate unknown";
        if (e->at_out.latency_ms >= 0)
            snprintf(lat, sizeof(lat), "latency %.0f ms", e->at_out.latency_ms);
        if (e->at_out.error_rate >= 0)
            snprintf(er, sizeof(er), "errorRate %.3f", e->at_out.error_rate);
        wr_info("queue %s: autotune rate %.3f -> %.3f per second (%s: %s, %s, targetMs %u)",
                e->name, before, now, wr_autotune_why_name(e->at_out.why), lat, er,
                e->cfg.autotune_target_ms);
    }
    at_done(e, now);
}

static void at_read_cb(wr_err_t err, const wr_autotune_state_rec_t *res, void *arg)
{
    entry_t *e = arg;
    if (err != WR_OK || e->dead || !e->cfg.has_autotune) {
        e->at_lat = e->at_err = -1; /* no step: no signal to show */
        at_done(e, 0);
        return;
    }
    at_seen(e, res->step_us, wr_store_rate_in_use(&e->cfg, res->rate));
    wr_autotune_cfg_t cfg = {e->cfg.autotune_min, e->cfg.autotune_max, e->cfg.autotune_target_ms};
    wr_autotune_state_t st = {.rate = res->rate,
                              .step_us = res->step_us,
                              .start_rate = e->cfg.admit_per_second,
                              .saturated = e->at_saturated,
                              .cut_latency_ms = res->cut_latency_ms};
    wr_autotune_step(&cfg, &st, res->reports, WR_AUTOTUNE_SOURCES, res->now_us, &e->at_out);
    e->at_lat = e->at_out.latency_ms;
    e->at_err = e->at_out.error_rate;
    if (e->at_rate <= 0)
        e->at_rate = wr_store_rate_in_use(&e->cfg, res->rate);
    if (!e->at_out.changed) {
        at_done(e, wr_store_rate_in_use(&e->cfg, res->rate));
        return;
    }
    wr_autotune_req_t req = {.set = true,
                             .expect_step_us = res->step_us,
                             .rate = e->at_out.rate,
                             .cut_latency_ms = e->at_out.cut_latency_ms};
    if (wr_store_autotune(e->sched->store, e->name, &req, at_set_cb, e) != WR_OK)
        at_done(e, 0);
}

void wr_scheduler__autotune_step(entry_t *e, const wr_queue_stats_t *st)
{
    if (!e->cfg.has_autotune || e->at_busy || e->dead)
        return;
    int64_t now = wr_clock_mono_ms();
    if (now - e->at_last_ms < WR_AUTOTUNE_STEP_MIN_US / 1000)
        return;
    e->at_last_ms = now;
    e->at_saturated = st->waiting > 0;
    wr_autotune_req_t req = {0};
    double p95 = e->at_sess && e->cfg.session_seconds > 0
                     ? wr_autotune_window_p95(e->at_sess, now * 1000)
                     : -1;
    if (p95 >= 0 && wr_autotune_report_valid(p95, 0)) {
        req.report = true; /* the session signal: p95 of consume to release */
        req.source = 1;
        req.latency_ms = p95;
    }
    e->refs++;
    e->at_busy = true;
    if (wr_store_autotune(e->sched->store, e->name, &req, at_read_cb, e) != WR_OK) {
        e->at_busy = false;
        e->refs--;
        e->at_lat = e->at_err = -1;
    }
}

void wr_scheduler_queue_note_session(wr_scheduler_queue_t *q, double ms)
{
    entry_t *e = q;
    if (!wr_scheduler__live(e) || !e->cfg.has_autotune || e->cfg.session_seconds == 0)
        return;
    if (!e->at_sess && !(e->at_sess = calloc(1, sizeof *e->at_sess)))
        return;
    wr_autotune_window_add(e->at_sess, ms, wr_clock_mono_us());
}

bool wr_scheduler_autotune(wr_scheduler_t *s, const char *queue, wr_scheduler_autotune_t *out)
{
    const entry_t *e = wr_scheduler__live(wr_scheduler__find(s, queue));
    if (!e || !e->has_cfg || !e->cfg.has_autotune)
        return false;
    *out = e->at_chg;
    out->rate = e->at_rate > 0 ? wr_store_rate_in_use(&e->cfg, e->at_rate) : 0;
    out->latency_ms = e->at_lat;
    out->error_rate = e->at_err;
    return true;
}
