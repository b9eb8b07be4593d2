/*
 * scheduler.c - per-queue admission ticks and the local config cache.
 *
 * Structure: a map (qmap.h) from queue name to entry. Each entry owns a
 * one-shot timer, re-armed after every admit answer
 * for the middle of the store's next tick:
 *     delay = tickMs - (now_us/1000 mod tickMs) + tickMs/2
 * so one instance hits each store tick exactly once even though its own
 * timer drifts; with several instances, all but the first call of a tick
 * admit nobody (the store's admit is idempotent per tick).
 *
 * Lifetime: an entry with an admit in flight, or held by requests
 * (wr_scheduler_hold: refs), is not freed when forgotten (or when the
 * scheduler is freed); it is marked dead and freed by whichever comes last
 * of the admit callback (the store calls it exactly once, also on close)
 * and the last release. A dead entry reads as an unknown queue. Entries are
 * otherwise owned by the map.
 *
 * Metrics per queue (labels queue="NAME", names validated by the store):
 * waitroom_queue_waiting / _active (gauges) and the store's cluster-wide
 * totals as counters waitroom_queue_{admitted,consumed,expired,left,
 * rejected_full,abandoned}_total, plus the observed admission rate (the
 * last minute; the ETA's own copy counts only from the first tick that
 * found people in line after one that found none, so the idle time, or the
 * quiet stretch, before a crowd does not dilute the crowd's rate:
 * wr_scheduler_queue_rate); and
 * waitroom_wait_seconds, the wait of every user this instance's ticks
 * admitted (the admit answer's waited_us), so the histograms of all
 * instances add up to every admission exactly once.
 *
 * Sale opening: an admit answer with opening_left > 0 (the store still has
 * pre-queue people to move into the line) re-arms the timer at 0 ms, so
 * the chunks follow each other as fast as the store answers while the
 * loop serves requests between them (each chunk is one store call; the
 * embedded store's is synchronous and bounded by WR_MEMQ_OPEN_CHUNK). A
 * queue whose opensAt comes before its next tick is armed for opensAt.
 * When an opening this instance took part in ends, one log line tells the
 * people moved, its duration, the calls, the longest synchronous store call
 * (the embedded store's event-loop pause) and the longest admit round
 * trip; the gauges waitroom_opening_step_max_seconds{queue} and
 * waitroom_opening_seconds{queue} keep the last.
 *
 * History: each entry keeps a one-second ring of its stats (history.h),
 * fed by every admit answer, for the dashboard; allocated with the entry.
 *
 * Quiet queues (K29). An admit answer that leaves nothing to do
 * (wr_store_admit_quiet: nobody waiting or in the pre-queue, no live token,
 * no session, no opening chunk left) puts the queue to sleep: its next
 * call is QUIET_MS later instead of one tick (tickMs over QUIET_MS / 2:
 * no change), in the one of ten 100 ms slots of each QUIET_MS of store
 * time that the queue's name picks (siphash), 10 ms into it: 2,000 quiet
 * queues make ten batches of about 200 calls a second, each sent in one
 * write and answered in a few reads (one call of its own per queue cost
 * an event-loop wake, a write and a read each: about half of the CPU of
 * the quiet queues), and not on the middle of the tick where every busy
 * queue's call is aimed (a burst there made busy ticks late). Nothing is lost by skipping the
 * ticks between: with an empty line no budget accrues (queue.h), the idle sweep has nobody to look
 * at, nothing can expire. The quiet call itself keeps state lastTick fresh (so a quiet queue is no
 * outage for the idle rule: QUIET_MS + a slot < the 5 s of lib.lua's OUTAGE_US) and brings config
 * changes made elsewhere. A queue wakes (called at once, then every tick) when:
 *   - this instance serves a request of it (wr_scheduler_note: every join,
 *     poll, token and admin answer calls it; a flag test per request) or
 *     writes its config (wr_scheduler_set_config); a wake during a call in
 *     flight makes that call's quiet answer count as busy (it may predate
 *     the join);
 *   - its quiet call finds it busy: people who joined through another
 *     instance only (that instance woke it there and ticks it, and the
 *     store's budget is per tick whoever calls, so the rate is exact from
 *     the next tick as long as that instance runs; this one joins within
 *     QUIET_MS).
 * An opensAt before the next quiet call still arms the timer for opensAt.
 * Metrics of a quiet queue whose stats did not change are not set again
 * (2,000 queues x 17 series a second for nothing); the observed rate and
 * the config gauges still are.
 *
 * Autotune (docs/API.md 1.2; core/autotune.h): for a queue whose config
 * has autotune, an admit answer at least a second after the last step
 * starts one: read the store's autotune state (rate in use, step time,
 * reports), run the law (wr_autotune_step, on the store's clock), and
 * when it moves the rate, write it with a compare-and-set on the step
 * time. Every instance does this; the first write of a step wins, the
 * others' compare fails and they read the new rate on their next step, so
 * the rate moves at most once a second whatever the number of instances,
 * and every instance admits (in the store) and answers ETAs with the same
 * rate. The instance whose write won logs the change at info with its
 * reason; each sets the gauge waitroom_autotune_rate{queue} to the rate in
 * use it read. A step in flight holds a ref on the entry.
 * For the dashboard each entry also keeps the signal of its last step (the
 * worst fresh report, or none) and the last change of the rate it knows
 * of: with its reason when this instance's write made it, as a new rate at
 * a new step time otherwise (wr_scheduler_autotune); every history sample
 * of an autotuned queue carries the rate in use, that signal and targetMs.
 *
 * Discovery uses the store's queue_names (Redis: one SMEMBERS a round, not
 * a queue_get per queue, which alone cost 11 commands per queue per
 * second); a queue discovered by name gets its config from its first admit
 * answer, called at once; wr_scheduler_config is NULL until then.
 */
#include "runtime/scheduler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "core/history.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/qmap.h"
#include "base/siphash.h"
#include "core/autotune.h"
#include "core/queue.h"

/* A quiet queue's admit call comes once per QUIET_MS (ms of store time),
 * QUIET_OFFSET_MS into one of the QUIET_MS / QUIET_SLOT_MS slots. */
#define QUIET_MS        1000
#define QUIET_SLOT_MS   100
#define QUIET_OFFSET_MS 10

typedef struct wr_scheduler_queue {
    wr_scheduler_t *sched;
    char name[WR_QUEUE_NAME_MAX + 1];
    wr_queue_config_t cfg;
    struct event *timer;
    bool in_flight;            /* an admit call is pending */
    bool dead;                 /* forgotten while in flight or held: free when neither */
    unsigned refs;             /* requests holding it (wr_scheduler_hold) */
    int64_t next_ms;           /* monotonic ms the timer is armed for (the next admit call) */
    wr_rate_window_t rate;     /* the last minute: stats, metrics */
    wr_rate_window_t eta_rate; /* the same since the line last had people: the ETA */
    double fail_tokens;        /* limited fail-open bucket */
    int64_t fail_last_ms;
    int64_t last_err_log_ms;
    wr_history_t *hist; /* NULL when it could not be allocated */
    bool has_cfg;       /* cfg is known (discovered by name: from the first admit answer) */
    bool quiet;         /* asleep (see "Quiet queues"): its timer is QUIET_MS away */
    bool woke;          /* woken while a call was in flight: its quiet answer counts as busy */
    bool published;     /* last_st holds the store stats last published */
    double away_share;  /* stats away / waiting of the last admit answer, 0 none */
    wr_queue_stats_t last_st;
    double last_rates[5]; /* the rate and config gauges last published */
    /* Sale opening (see above) */
    int64_t call_t0_us;   /* monotonic us when the admit in flight was called */
    int64_t call_sync_us; /* how long that call took before it returned */
    int64_t open_t0_us;   /* first call of the opening in progress, 0 = none */
    uint64_t open_moved, open_calls;
    int64_t open_sync_max_us, open_rtt_max_us;
    /* Autotune (see "Autotune" above) */
    bool at_busy;                   /* a step's store calls are in flight (holds a ref) */
    bool at_saturated;              /* the last admit answer left people waiting */
    int64_t at_last_ms;             /* monotonic ms of the last step started */
    double at_rate;                 /* the rate in use as last read, users/s; 0 = not known */
    double at_published;            /* the rate waitroom_autotune_rate shows, 0 = none yet */
    wr_autotune_out_t at_out;       /* the step whose write is in flight */
    wr_autotune_window_t *at_sess;  /* the session signal (allocated at its first sample) */
    double at_lat, at_err;          /* the signal of the last step, -1 = none fresh (or failed) */
    int64_t at_step_us;             /* store step time of the last change known (at_chg) */
    wr_scheduler_autotune_t at_chg; /* that change (its rate/latency members unused) */
} entry_t;

struct wr_scheduler {
    struct event_base *base;
    wr_store_t *store;
    wr_metrics_t *metrics;
    uint32_t discovery_ms;
    struct event *discovery;
    bool listing;
    bool freeing;
    struct list_req *list_pending; /* marked dead by free while a list call is pending */
    wr_qmap_t *queues;             /* name -> entry_t */
    size_t n_quiet;                /* entries with quiet set (waitroom_queues_quiet) */
};

static entry_t *find(wr_scheduler_t *s, const char *name)
{
    return wr_qmap_get(s->queues, name);
}

static void entry_free(entry_t *e)
{
    if (e->timer)
        event_free(e->timer);
    wr_history_free(e->hist);
    free(e->at_sess);
    free(e);
}

/* Out of the map (forgotten, or the scheduler freed): freed now, or marked
 * dead for the admit callback or the last release to free. */
static void entry_drop(entry_t *e)
{
    evtimer_del(e->timer);
    if (e->in_flight || e->refs > 0)
        e->dead = true;
    else
        entry_free(e);
}

static void arm(entry_t *e, uint32_t delay_ms)
{
    struct timeval tv = wr_clock_tv_ms(delay_ms);
    evtimer_add(e->timer, &tv);
    e->next_ms = wr_clock_mono_ms() + delay_ms;
}

static void labels_for(const entry_t *e, char *buf, size_t cap)
{
    snprintf(buf, cap, "queue=\"%s\"", e->name);
}

/* Sets the queue's series; the store's stats only when they changed or the
 * queue is busy (see "Quiet queues"). */
static void publish(entry_t *e, const wr_queue_stats_t *st, bool quiet)
{
    wr_metrics_t *m = e->sched->metrics;
    if (!m)
        return;
    char l[WR_QUEUE_NAME_MAX + 16];
    labels_for(e, l, sizeof(l));
    bool same = quiet && e->published && memcmp(&e->last_st, st, sizeof(*st)) == 0;
    e->last_st = *st;
    e->published = true;
    if (same)
        goto rates;
    wr_metrics_set(m, "waitroom_queue_waiting", l, (double)st->waiting);
    wr_metrics_set(m, "waitroom_queue_active", l, (double)st->active);
    /* Cluster-wide totals from the store: set, not incremented. */
    wr_metrics_set(m, "waitroom_queue_admitted_total", l, (double)st->admitted_total);
    wr_metrics_set(m, "waitroom_queue_consumed_total", l, (double)st->consumed_total);
    wr_metrics_set(m, "waitroom_queue_expired_total", l, (double)st->expired_total);
    wr_metrics_set(m, "waitroom_queue_left_total", l, (double)st->left_total);
    wr_metrics_set(m, "waitroom_queue_rejected_full_total", l, (double)st->rejected_full_total);
    wr_metrics_set(m, "waitroom_queue_sessions", l, (double)st->sessions);
    wr_metrics_set(m, "waitroom_queue_prequeue", l, (double)st->prequeue);
    wr_metrics_set(m, "waitroom_queue_released_total", l, (double)st->released_total);
    wr_metrics_set(m, "waitroom_queue_sessions_expired_total", l,
                   (double)st->sessions_expired_total);
    wr_metrics_set(m, "waitroom_queue_abandoned_total", l, (double)st->abandoned_total);
    wr_metrics_set(m, "waitroom_queue_away", l, (double)st->away);
    wr_metrics_set(m, "waitroom_queue_held", l, (double)st->held);
    wr_metrics_set(m, "waitroom_queue_returned_total", l, (double)st->returned_total);
    if (st->stock_left >= 0) /* only for queues with a stock */
        wr_metrics_set(m, "waitroom_queue_stock_left", l, (double)st->stock_left);
    else
        wr_metrics_remove(m, "waitroom_queue_stock_left", l);
    wr_metrics_set(m, "waitroom_queue_sold_out", l, st->sold_out_at_ms >= 0 ? 1 : 0);
rates:;
    double r = wr_rate_window_rate(&e->rate);
    double v[5] = {r < 0 ? 0 : r, e->cfg.admit_per_second, e->cfg.paused ? 1 : 0,
                   e->cfg.enabled ? 1 : 0, e->cfg.closed ? 1 : 0};
    if (same && memcmp(v, e->last_rates, sizeof(v)) == 0)
        return;
    memcpy(e->last_rates, v, sizeof(v));
    wr_metrics_set(m, "waitroom_queue_admit_rate_observed", l, v[0]);
    wr_metrics_set(m, "waitroom_queue_admit_rate_configured", l, v[1]);
    wr_metrics_set(m, "waitroom_queue_paused", l, v[2]);
    wr_metrics_set(m, "waitroom_queue_enabled", l, v[3]);
    wr_metrics_set(m, "waitroom_queue_closed", l, v[4]);
}

static void tick_cb(evutil_socket_t fd, short what, void *arg);
static void at_maybe_step(entry_t *e, const wr_queue_stats_t *st);

/* ms from the store time now_ms to a quiet queue's next call: QUIET_OFFSET_MS
 * into the slot of QUIET_SLOT_MS its name picks (siphash) in the next
 * QUIET_MS of store time (see "Quiet queues"); 0 when tick is over
 * QUIET_MS / 2 (call every tick). */
static uint32_t quiet_delay(const entry_t *e, int64_t now_ms, uint32_t tick)
{
    if (tick > QUIET_MS / 2)
        return 0;
    uint64_t slot = wr_siphash13(0, 0, e->name, strlen(e->name)) % (QUIET_MS / QUIET_SLOT_MS);
    int64_t at =
        (now_ms / QUIET_MS + 1) * QUIET_MS + (int64_t)slot * QUIET_SLOT_MS + QUIET_OFFSET_MS;
    return (uint32_t)(at - now_ms);
}

/* Sets e->quiet, keeping the count and its gauge. */
static void set_quiet(entry_t *e, bool quiet)
{
    wr_scheduler_t *s = e->sched;
    if (e->quiet == quiet)
        return;
    e->quiet = quiet;
    s->n_quiet = quiet ? s->n_quiet + 1 : s->n_quiet - 1;
    if (s->metrics)
        wr_metrics_set(s->metrics, "waitroom_queues_quiet", NULL, (double)s->n_quiet);
}

/* Wakes a quiet queue: its admit call at once, then every tick. */
static void wake(entry_t *e)
{
    if (e->in_flight) {
        e->woke = true;
    } else if (e->quiet) {
        set_quiet(e, false);
        evtimer_del(e->timer);
        arm(e, 0);
    }
}

/* Sale opening: records the chunk of res; true while people are left to
 * move (call again at once). Logs the opening when it ends here. */
static bool opening_progress(entry_t *e, const wr_admit_t *res)
{
    if (res->opening_moved == 0 && res->opening_left == 0 && e->open_t0_us == 0)
        return false;
    int64_t now = wr_clock_mono_us();
    if (e->open_t0_us == 0)
        e->open_t0_us = e->call_t0_us;
    e->open_moved += res->opening_moved;
    e->open_calls++;
    if (e->call_sync_us > e->open_sync_max_us)
        e->open_sync_max_us = e->call_sync_us;
    if (now - e->call_t0_us > e->open_rtt_max_us)
        e->open_rtt_max_us = now - e->call_t0_us;
    if (res->opening_left > 0)
        return true;
    double total_s = (double)(now - e->open_t0_us) / 1e6;
    wr_info("queue %s: opening: moved %llu people into the line in %.1f ms (%llu calls); "
            "longest store call on the event loop %.2f ms, longest admit round trip %.2f ms",
            e->name, (unsigned long long)e->open_moved, total_s * 1000,
            (unsigned long long)e->open_calls, (double)e->open_sync_max_us / 1000,
            (double)e->open_rtt_max_us / 1000);
    if (e->sched->metrics) {
        char l[WR_QUEUE_NAME_MAX + 16];
        labels_for(e, l, sizeof(l));
        wr_metrics_set(e->sched->metrics, "waitroom_opening_step_max_seconds", l,
                       (double)e->open_sync_max_us / 1e6);
        wr_metrics_set(e->sched->metrics, "waitroom_opening_seconds", l, total_s);
    }
    e->open_t0_us = 0;
    e->open_moved = e->open_calls = 0;
    e->open_sync_max_us = e->open_rtt_max_us = 0;
    return false;
}

static void admit_cb(wr_err_t err, const wr_admit_t *res, void *arg)
{
    entry_t *e = arg;
    wr_scheduler_t *s = e->sched;
    e->in_flight = false;
    if (e->dead) {
        if (e->refs == 0)
            entry_free(e);
        return;
    }
    uint32_t tick = e->cfg.tick_ms ? e->cfg.tick_ms : 100;
    if (err == WR_ENOTFOUND && !e->has_cfg) {
        /* a name discovery found without a config (a stale registry entry,
         * or a queue being created): asked again once a quiet period later,
         * quietly; discovery forgets it when the name goes */
        arm(e, QUIET_MS);
        return;
    }
    if (err == WR_ENOTFOUND) {
        wr_info("queue %s no longer exists; stopping its admission", e->name);
        wr_scheduler_forget(s, e->name);
        return;
    }
    if (err != WR_OK) {
        int64_t now = wr_clock_mono_ms();
        if (now - e->last_err_log_ms > 5000) {
            wr_warn("admission tick for queue %s failed: %s", e->name, wr_strerror(err));
            e->last_err_log_ms = now;
        }
        set_quiet(e, false);
        e->woke = false;
        if (s->metrics && err != WR_ECANCELED)
            wr_metrics_inc(s->metrics, "waitroom_admission_errors_total", NULL, 1);
        if (err != WR_ECANCELED && !s->freeing)
            arm(e, tick);
        return;
    }
    if (res->config) {
        if (!e->has_cfg)
            e->fail_tokens = res->config->fail_open_per_second;
        e->cfg = *res->config;
        e->has_cfg = true;
    }
    /* the known config's stock is what was left at the last tick (degraded
     * mode's sold-out brake, wr_queue_degraded_brake) */
    e->cfg.stock = res->stats.stock_left;
    e->cfg.sold_out = res->stats.sold_out_at_ms >= 0;
    tick = e->cfg.tick_ms ? e->cfg.tick_ms : 100;
    /* a wake while the call was in flight: its answer may predate the join */
    set_quiet(e, wr_store_admit_quiet(res) && !e->woke);
    e->woke = false;
    int64_t mono_ms = wr_clock_mono_ms();
    wr_rate_window_add(&e->rate, mono_ms, res->stats.admitted_total);
    /* stats away counts the held too, who are out of the line */
    uint64_t away_in_line =
        res->stats.away > res->stats.held ? res->stats.away - res->stats.held : 0;
    e->away_share = res->stats.waiting > 0 && away_in_line <= res->stats.waiting
                        ? (double)away_in_line / (double)res->stats.waiting
                        : 0;
    wr_rate_window_add_tick(&e->eta_rate, mono_ms, res->stats.admitted_total, res->stats.waiting);
    if (res->admitted > 0)
        wr_debug("queue %s: admitted %llu", e->name, (unsigned long long)res->admitted);
    publish(e, &res->stats, e->quiet);
    at_maybe_step(e, &res->stats);
    if (e->hist) {
        wr_history_tune_t tune = {0}; /* target_ms 0: no autotune */
        if (e->cfg.has_autotune)
            tune =
                (wr_history_tune_t){e->at_rate > 0 ? wr_store_rate_in_use(&e->cfg, e->at_rate) : 0,
                                    e->at_lat, e->cfg.autotune_target_ms};
        wr_history_add_tuned(e->hist, res->now_us / 1000000, res->stats.waiting, res->stats.active,
                             res->stats.admitted_total, res->stats.consumed_total, &tune);
    }
    if (s->metrics && res->n_waited > 0) {
        char l[WR_QUEUE_NAME_MAX + 16];
        labels_for(e, l, sizeof(l));
        for (size_t i = 0; i < res->n_waited; i++)
            wr_metrics_observe(s->metrics, "waitroom_wait_seconds", l,
                               (double)res->waited_us[i] / 1e6);
    }
    if (opening_progress(e, res)) {
        arm(e, 0); /* the next chunk at once */
        return;
    }
    int64_t now_ms = res->now_us / 1000;
    uint32_t delay = e->quiet ? quiet_delay(e, now_ms, tick) : 0;
    if (!delay) {
        uint32_t phase = (uint32_t)(now_ms % tick);
        delay = tick - phase + tick / 2;
        if (delay > tick + tick / 2)
            delay = tick;
    }
    /* an opening before the next tick: be there at opensAt */
    int64_t at = e->cfg.opens_at_ms;
    if (at >= 0 && at >= now_ms && at - now_ms < (int64_t)delay)
        delay = (uint32_t)(at - now_ms);
    arm(e, delay);
}

/* ---- autotune (see "Autotune" above) */

static void at_done(entry_t *e, double rate_in_use)
{
    wr_metrics_t *m = e->sched->metrics;
    if (rate_in_use > 0 && rate_in_use != e->at_published && m && !e->dead) {
        char l[WR_QUEUE_NAME_MAX + 16];
        labels_for(e, l, sizeof(l));
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

/* Starts a step of q's autotune when it is due (after an admit answer). */
static void at_maybe_step(entry_t *e, const wr_queue_stats_t *st)
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

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    entry_t *e = arg;
    if (e->in_flight)
        return;
    e->call_t0_us = wr_clock_mono_us();
    wr_err_t err = wr_store_admit(e->sched->store, e->name, admit_cb, e);
    e->call_sync_us = wr_clock_mono_us() - e->call_t0_us;
    if (err == WR_OK) {
        e->in_flight = true;
    } else {
        arm(e, e->cfg.tick_ms ? e->cfg.tick_ms : 100);
    }
}

/* A new entry for queue, its tick started at once; cfg NULL = not known
 * yet (from the first admit answer). */
static void entry_add(wr_scheduler_t *s, const char *queue, const wr_queue_config_t *cfg)
{
    entry_t *e = calloc(1, sizeof(*e));
    if (!e)
        return;
    e->sched = s;
    snprintf(e->name, sizeof(e->name), "%s", queue);
    if (cfg) {
        e->cfg = *cfg;
        e->has_cfg = true;
        e->fail_tokens = cfg->fail_open_per_second;
    }
    e->timer = evtimer_new(s->base, tick_cb, e);
    if (!e->timer) {
        free(e);
        return;
    }
    e->hist = wr_history_new(); /* the dashboard's history; NULL = none */
    e->at_lat = e->at_err = -1;
    wr_rate_window_init(&e->rate, 60000);
    wr_rate_window_init(&e->eta_rate, 60000);
    e->fail_last_ms = wr_clock_mono_ms();
    if (wr_qmap_put(s->queues, queue, e) != WR_OK) {
        entry_free(e);
        return;
    }
    arm(e, 0);
}

/* A request of known queue e is served (cfg: its answer's config, or
 * NULL): the config is taken when e has none yet (otherwise every admit
 * tick refreshes it: no copy per poll), and e is woken if quiet. */
static void noted(entry_t *e, const wr_queue_config_t *cfg)
{
    if (cfg && !e->has_cfg) {
        e->cfg = *cfg;
        e->has_cfg = true;
    }
    wake(e);
}

void wr_scheduler_note(wr_scheduler_t *s, const char *queue, const wr_queue_config_t *cfg)
{
    if (!cfg || !wr_ids_valid_queue(queue))
        return;
    entry_t *e = find(s, queue);
    if (!e) {
        entry_add(s, queue, cfg);
        return;
    }
    noted(e, cfg);
}

void wr_scheduler_set_config(wr_scheduler_t *s, const char *queue, const wr_queue_config_t *cfg)
{
    entry_t *e = cfg ? find(s, queue) : NULL;
    if (e) {
        int64_t left = e->cfg.stock;
        bool sold_out = e->cfg.sold_out;
        e->cfg = *cfg;
        if (!cfg->stock_set && e->has_cfg) {
            e->cfg.stock = left; /* what is left, as the last tick said */
            e->cfg.sold_out = sold_out;
        }
        e->has_cfg = true;
        wake(e);
    } else {
        wr_scheduler_note(s, queue, cfg);
    }
}

void wr_scheduler_forget(wr_scheduler_t *s, const char *queue)
{
    entry_t *e = wr_qmap_remove(s->queues, queue);
    if (!e)
        return;
    if (s->metrics) {
        char l[WR_QUEUE_NAME_MAX + 16];
        labels_for(e, l, sizeof(l));
        wr_metrics_remove_matching(s->metrics, l);
    }
    set_quiet(e, false);
    entry_drop(e);
}

wr_scheduler_queue_t *wr_scheduler_hold(wr_scheduler_t *s, wr_scheduler_queue_t **q,
                                        const char *queue, const wr_queue_config_t *cfg)
{
    entry_t *e = *q;
    if (e && !e->dead && strcmp(e->name, queue) == 0) {
        if (cfg)
            noted(e, cfg); /* an answer about it, as wr_scheduler_note */
        return e;
    }
    wr_scheduler_release(e);
    e = find(s, queue);
    if (!e && cfg) {
        wr_scheduler_note(s, queue, cfg);
        e = find(s, queue);
    } else if (e) {
        /* serving a request of it, as wr_scheduler_note: a join must not
         * wait for a quiet queue's next call (up to QUIET_MS) */
        noted(e, cfg);
    }
    if (e)
        e->refs++;
    *q = e;
    return e;
}

void wr_scheduler_release(wr_scheduler_queue_t *q)
{
    if (q && --q->refs == 0 && q->dead && !q->in_flight)
        entry_free(q);
}

/* q when it is a queue this instance still knows, else NULL. */
static const entry_t *live(const wr_scheduler_queue_t *q)
{
    return q && !q->dead ? q : NULL;
}

const wr_queue_config_t *wr_scheduler_queue_config(const wr_scheduler_queue_t *q)
{
    return live(q) && q->has_cfg ? &q->cfg : NULL;
}

double wr_scheduler_queue_rate(const wr_scheduler_queue_t *q)
{
    if (live(q) && q->has_cfg && q->cfg.has_autotune && q->at_rate > 0)
        return q->at_rate; /* autotune: the rate in use, so ETAs follow the shop's pace */
    return live(q) ? wr_rate_window_rate(&q->eta_rate) : -1;
}

double wr_scheduler_queue_away_share(const wr_scheduler_queue_t *q)
{
    return live(q) ? q->away_share : 0;
}

int64_t wr_scheduler_queue_next_tick_ms(const wr_scheduler_queue_t *q)
{
    if (!live(q))
        return -1;
    int64_t d = q->in_flight ? 0 : q->next_ms - wr_clock_mono_ms();
    return d < 0 ? 0 : d;
}

void wr_scheduler_queue_note_session(wr_scheduler_queue_t *q, double ms)
{
    entry_t *e = q;
    if (!live(e) || !e->cfg.has_autotune || e->cfg.session_seconds == 0)
        return;
    if (!e->at_sess && !(e->at_sess = calloc(1, sizeof *e->at_sess)))
        return;
    wr_autotune_window_add(e->at_sess, ms, wr_clock_mono_us());
}

const wr_queue_config_t *wr_scheduler_config(wr_scheduler_t *s, const char *queue)
{
    return wr_scheduler_queue_config(find(s, queue));
}

double wr_scheduler_observed_rate(wr_scheduler_t *s, const char *queue)
{
    entry_t *e = find(s, queue);
    return live(e) ? wr_rate_window_rate(&e->rate) : -1;
}

bool wr_scheduler_queue_take_fail_open(wr_scheduler_queue_t *q, int64_t now_ms)
{
    entry_t *e = q;
    if (!live(e))
        return false;
    double rate = e->cfg.fail_open_per_second;
    double cap = rate < 1 ? 1 : rate;
    if (now_ms > e->fail_last_ms) {
        e->fail_tokens += rate * (double)(now_ms - e->fail_last_ms) / 1000.0;
        if (e->fail_tokens > cap)
            e->fail_tokens = cap;
        e->fail_last_ms = now_ms;
    }
    if (e->fail_tokens >= 1.0) {
        e->fail_tokens -= 1.0;
        return true;
    }
    return false;
}

bool wr_scheduler_autotune(wr_scheduler_t *s, const char *queue, wr_scheduler_autotune_t *out)
{
    const entry_t *e = live(find(s, queue));
    if (!e || !e->has_cfg || !e->cfg.has_autotune)
        return false;
    *out = e->at_chg;
    out->rate = e->at_rate > 0 ? wr_store_rate_in_use(&e->cfg, e->at_rate) : 0;
    out->latency_ms = e->at_lat;
    out->error_rate = e->at_err;
    return true;
}

const wr_history_t *wr_scheduler_history(wr_scheduler_t *s, const char *queue)
{
    entry_t *e = find(s, queue);
    return e ? e->hist : NULL;
}

size_t wr_scheduler_count(wr_scheduler_t *s)
{
    return wr_qmap_count(s->queues);
}

/* Discovery: every queue in the store gets an entry; entries whose queue is
 * gone are forgotten. */
struct list_req {
    bool dead;
    wr_scheduler_t *s;
};

static void list_cb(wr_err_t err, const wr_queue_info_t *infos, size_t n, void *arg)
{
    struct list_req *lr = arg;
    wr_scheduler_t *s = lr->s;
    bool dead = lr->dead;
    free(lr);
    if (dead)
        return;
    s->listing = false;
    s->list_pending = NULL;
    if (err != WR_OK)
        return;
    for (size_t i = 0; i < n; i++)
        if (!find(s, infos[i].name) && wr_ids_valid_queue(infos[i].name))
            entry_add(s, infos[i].name, infos[i].config);
    /* Forget entries not listed (removing the one just visited is safe). */
    wr_qmap_iter_t it = WR_QMAP_ITER_INIT;
    const char *name;
    void *v;
    while (wr_qmap_next(s->queues, &it, &name, &v)) {
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strcmp(infos[i].name, name) == 0;
        if (!seen)
            wr_scheduler_forget(s, ((entry_t *)v)->name);
    }
}

static void discovery_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_scheduler_t *s = arg;
    if (s->listing)
        return;
    /* The request outlives a free of the scheduler: an answer arriving
     * after free finds it marked dead. */
    struct list_req *lr = calloc(1, sizeof(*lr));
    if (!lr)
        return;
    lr->s = s;
    if (wr_store_queue_names(s->store, list_cb, lr) == WR_OK) {
        s->listing = true;
        s->list_pending = lr;
    } else {
        free(lr);
    }
}

wr_err_t wr_scheduler_new(const wr_scheduler_opts_t *opts, wr_scheduler_t **out)
{
    wr_scheduler_t *s = calloc(1, sizeof(*s));
    if (!s)
        return WR_ENOMEM;
    s->base = opts->base;
    s->store = opts->store;
    s->metrics = opts->metrics;
    s->discovery_ms = opts->discovery_ms ? opts->discovery_ms : 1000;
    s->queues = wr_qmap_new();
    s->discovery = s->queues ? event_new(s->base, -1, EV_PERSIST, discovery_cb, s) : NULL;
    if (!s->discovery) {
        wr_qmap_free(s->queues);
        free(s);
        return WR_ENOMEM;
    }
    struct timeval tv = wr_clock_tv_ms(s->discovery_ms);
    event_add(s->discovery, &tv);
    if (s->metrics) {
        static const double wait_bounds[] = {1,   5,   15,   30,   60,   120,
                                             300, 600, 1200, 1800, 3600, 7200};
        wr_metrics_describe(s->metrics, "waitroom_queue_waiting", WR_METRIC_GAUGE,
                            "People waiting in line; store-wide (the same on every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_active", WR_METRIC_GAUGE,
                            "Live, unconsumed entry tokens plus open sessions (exact); store-wide "
                            "(the same on every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_admitted_total", WR_METRIC_COUNTER,
                            "Users admitted; store-wide (the same on every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_consumed_total", WR_METRIC_COUNTER,
                            "Entry tokens consumed; store-wide (the same on every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_expired_total", WR_METRIC_COUNTER,
                            "Entry tokens that expired unused; store-wide (the same on every "
                            "instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_left_total", WR_METRIC_COUNTER,
                            "Users who left the line or gave back a token; store-wide (the same "
                            "on every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_rejected_full_total", WR_METRIC_COUNTER,
                            "Joins refused because the line was full; store-wide (the same on "
                            "every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_sessions", WR_METRIC_GAUGE,
                            "Open sessions (part of active, exact); store-wide (the same on every "
                            "instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_released_total", WR_METRIC_COUNTER,
                            "Sessions ended by release or leave; store-wide (the same on every "
                            "instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_sessions_expired_total", WR_METRIC_COUNTER,
                            "Sessions that lapsed after sessionSeconds; store-wide (the same on "
                            "every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_abandoned_total", WR_METRIC_COUNTER,
                            "Page joins that never asked again, removed idleTimeoutSeconds "
                            "after the fetch, and held people removed after awayHoldSeconds; "
                            "store-wide (the same on every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_away", WR_METRIC_GAUGE,
                            "People in line now away (no join or poll for idleTimeoutSeconds), "
                            "held ones included; store-wide.");
        wr_metrics_describe(s->metrics, "waitroom_queue_held", WR_METRIC_GAUGE,
                            "People whose turn came while away, held out of the line until they "
                            "return; store-wide.");
        wr_metrics_describe(s->metrics, "waitroom_queue_returned_total", WR_METRIC_COUNTER,
                            "Held people admitted on their return; store-wide (the same on every "
                            "instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_stock_left", WR_METRIC_GAUGE,
                            "What is left of the queue's stock (people who may still be let in); "
                            "only for queues with a stock; store-wide.");
        wr_metrics_describe(s->metrics, "waitroom_queue_prequeue", WR_METRIC_GAUGE,
                            "People waiting for the sale opening (opensAt); store-wide.");
        wr_metrics_describe(s->metrics, "waitroom_opening_step_max_seconds", WR_METRIC_GAUGE,
                            "Last sale opening this instance took part in: its longest "
                            "synchronous store call (the embedded store's event-loop pause).");
        wr_metrics_describe(s->metrics, "waitroom_opening_seconds", WR_METRIC_GAUGE,
                            "Last sale opening this instance took part in: from its first "
                            "chunk to its last.");
        wr_metrics_describe(s->metrics, "waitroom_queue_admit_rate_observed", WR_METRIC_GAUGE,
                            "Admissions per second over the last minute, from the store-wide "
                            "admitted total (the same on every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_admit_rate_configured", WR_METRIC_GAUGE,
                            "Configured outflow rate, users per second; store-wide (the same on "
                            "every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_paused", WR_METRIC_GAUGE,
                            "1 while admission is paused; store-wide (the same on every "
                            "instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_enabled", WR_METRIC_GAUGE,
                            "1 while the line is on (0 = passthrough); store-wide (the same on "
                            "every instance).");
        wr_metrics_describe(s->metrics, "waitroom_queue_closed", WR_METRIC_GAUGE,
                            "1 while the sale is closed (queue config closed); store-wide.");
        wr_metrics_describe(s->metrics, "waitroom_queue_sold_out", WR_METRIC_GAUGE,
                            "1 while the queue is sold out (stock 0, no pass live: stats "
                            "soldOutAt); store-wide.");
        wr_metrics_describe(s->metrics, "waitroom_queues_quiet", WR_METRIC_GAUGE,
                            "Queues this instance calls once a second instead of every tick: "
                            "nobody waiting, nothing live (docs/DESIGN.md, quiet queues).");
        wr_metrics_set(s->metrics, "waitroom_queues_quiet", NULL, 0);
        wr_metrics_describe(s->metrics, "waitroom_admission_errors_total", WR_METRIC_COUNTER,
                            "Admission ticks of this instance that failed (store unavailable, "
                            "timeout).");
        wr_metrics_describe_histogram(
            s->metrics, "waitroom_wait_seconds",
            "Time from joining the line to admission, seconds: for each user admitted by this "
            "instance's admission tick, the store time of that tick minus the user's arrival "
            "score. Every admission is counted once, by the instance whose tick made it; sum "
            "the series of all instances for the whole queue.",
            wait_bounds, sizeof(wait_bounds) / sizeof(wait_bounds[0]));
    }
    discovery_cb(-1, 0, s);
    *out = s;
    return WR_OK;
}

void wr_scheduler_free(wr_scheduler_t *s)
{
    if (!s)
        return;
    s->freeing = true;
    if (s->list_pending)
        s->list_pending->dead = true; /* the list callback frees it */
    event_free(s->discovery);
    wr_qmap_iter_t it = WR_QMAP_ITER_INIT;
    const char *name;
    void *v;
    while (wr_qmap_next(s->queues, &it, &name, &v)) {
        entry_drop(v);
    }
    wr_qmap_free(s->queues);
    free(s);
}
