/*
 * scheduler.c - per-queue admission ticks and the local config cache.
 *
 * The module's files (scheduler_internal.h): this one has the entries,
 * their ticks, discovery and the held-queue API; autotune's step is in
 * scheduler_autotune.c, the per-queue series in scheduler_metrics.c.
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
 * answer, called at once; wr_scheduler_config is NULL until then. A
 * round marks each listed entry with its number and forgets the entries
 * not marked: one map lookup per name, O(n) for n queues (the store's list
 * of names is slim too: store_redis_list.c).
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
#include "runtime/scheduler_internal.h"

/* A quiet queue's admit call comes once per QUIET_MS (ms of store time),
 * QUIET_OFFSET_MS into one of the QUIET_MS / QUIET_SLOT_MS slots. */
#define QUIET_MS        1000
#define QUIET_SLOT_MS   100
#define QUIET_OFFSET_MS 10

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
    if (e->sched->memo == e)
        e->sched->memo = NULL;
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

static void tick_cb(evutil_socket_t fd, short what, void *arg);

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
        wr_scheduler__labels(e, l, sizeof(l));
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
    if (res->n_pushes > 0 && s->push_fn)
        s->push_fn(e->name, res, s->push_arg);
    if (res->admitted > 0)
        wr_debug("queue %s: admitted %llu", e->name, (unsigned long long)res->admitted);
    wr_scheduler__publish(e, &res->stats, e->quiet);
    wr_scheduler__autotune_step(e, &res->stats);
    if (e->hist) {
        wr_history_tune_t tune = {0}; /* target_ms 0: no autotune */
        if (e->cfg.has_autotune)
            tune =
                (wr_history_tune_t){e->at_rate > 0 ? wr_store_rate_in_use(&e->cfg, e->at_rate) : 0,
                                    e->at_lat, e->cfg.autotune_target_ms};
        wr_history_add_tuned(e->hist, res->now_us / 1000000, res->stats.waiting, res->stats.active,
                             res->stats.admitted_total, res->stats.consumed_total, &tune);
    }
    wr_reporter_admitted(s->reporter, e->name, res->now_us, res->waited_us, res->n_waited,
                         e->cfg.opens_at_ms);
    if (s->metrics && res->n_waited > 0) {
        char l[WR_QUEUE_NAME_MAX + 16];
        wr_scheduler__labels(e, l, sizeof(l));
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

/* e's admit call, unless one is in flight (the timer's, or a wake's). */
static void admit_call(entry_t *e)
{
    if (e->in_flight)
        return;
    e->call_t0_us = wr_clock_mono_us();
    /* the minute's report sample goes first (reporter.h) */
    if (e->has_cfg && !e->quiet) /* a quiet queue changes nothing: no sample (reporter.h) */
        wr_reporter_before_tick(e->sched->reporter, e->name,
                                wr_store_rate_in_use(&e->cfg, e->at_rate));
    wr_err_t err = wr_store_admit(e->sched->store, e->name, admit_cb, e);
    e->call_sync_us = wr_clock_mono_us() - e->call_t0_us;
    if (err == WR_OK) {
        e->in_flight = true;
    } else {
        arm(e, e->cfg.tick_ms ? e->cfg.tick_ms : 100);
    }
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    admit_call(arg);
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
    entry_t *e = wr_scheduler__find(s, queue);
    if (!e) {
        entry_add(s, queue, cfg);
        return;
    }
    noted(e, cfg);
}

void wr_scheduler_set_config(wr_scheduler_t *s, const char *queue, const wr_queue_config_t *cfg)
{
    entry_t *e = cfg ? wr_scheduler__find(s, queue) : NULL;
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
    wr_reporter_forget(s->reporter, queue);
    if (s->metrics) {
        char l[WR_QUEUE_NAME_MAX + 16];
        wr_scheduler__labels(e, l, sizeof(l));
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
    e = wr_scheduler__find(s, queue);
    if (!e && cfg) {
        wr_scheduler_note(s, queue, cfg);
        e = wr_scheduler__find(s, queue);
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

const wr_queue_config_t *wr_scheduler_queue_config(const wr_scheduler_queue_t *q)
{
    return wr_scheduler__live(q) && q->has_cfg ? &q->cfg : NULL;
}

double wr_scheduler_queue_rate(const wr_scheduler_queue_t *q)
{
    if (wr_scheduler__live(q) && q->has_cfg && q->cfg.has_autotune && q->at_rate > 0)
        return q->at_rate; /* autotune: the rate in use, so ETAs follow the shop's pace */
    return wr_scheduler__live(q) ? wr_rate_window_rate(&q->eta_rate) : -1;
}

double wr_scheduler_queue_away_share(const wr_scheduler_queue_t *q)
{
    return wr_scheduler__live(q) ? q->away_share : 0;
}

int64_t wr_scheduler_queue_next_tick_ms(const wr_scheduler_queue_t *q)
{
    if (!wr_scheduler__live(q))
        return -1;
    int64_t d = q->in_flight ? 0 : q->next_ms - wr_clock_mono_ms();
    return d < 0 ? 0 : d;
}

const wr_queue_config_t *wr_scheduler_config(wr_scheduler_t *s, const char *queue)
{
    return wr_scheduler_queue_config(wr_scheduler__find(s, queue));
}

double wr_scheduler_observed_rate(wr_scheduler_t *s, const char *queue)
{
    entry_t *e = wr_scheduler__find(s, queue);
    return wr_scheduler__live(e) ? wr_rate_window_rate(&e->rate) : -1;
}

bool wr_scheduler_queue_take_fail_open(wr_scheduler_queue_t *q, int64_t now_ms)
{
    entry_t *e = q;
    if (!wr_scheduler__live(e))
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

const wr_history_t *wr_scheduler_history(wr_scheduler_t *s, const char *queue)
{
    entry_t *e = wr_scheduler__find(s, queue);
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
    /* Each listed entry is marked with this round (added when new); then
     * the entries not marked are forgotten: one lookup per name (a
     * comparison of every entry with every name was 2 million strcmp a
     * second for 2,000 queues) */
    uint64_t round = ++s->list_round;
    for (size_t i = 0; i < n; i++) {
        if (!wr_ids_valid_queue(infos[i].name))
            continue;
        entry_t *e = wr_scheduler__find(s, infos[i].name);
        if (!e) {
            entry_add(s, infos[i].name, infos[i].config);
            e = wr_scheduler__find(s, infos[i].name);
        }
        if (e)
            e->seen_round = round;
    }
    /* (removing the one just visited is safe) */
    wr_qmap_iter_t it = WR_QMAP_ITER_INIT;
    const char *name;
    void *v;
    while (wr_qmap_next(s->queues, &it, &name, &v)) {
        entry_t *e = v;
        if (e->seen_round != round)
            wr_scheduler_forget(s, e->name);
    }
}

/* One discovery round (queue_names), unless one is pending. */
static void discover(wr_scheduler_t *s)
{
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

static void discovery_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    discover(arg);
}

void wr_scheduler_set_push(wr_scheduler_t *s, wr_scheduler_push_fn fn, void *arg)
{
    s->push_fn = fn;
    s->push_arg = arg;
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
    s->reporter = wr_reporter_new(s->base, s->store, opts->report_days);
    s->discovery =
        s->queues && s->reporter ? event_new(s->base, -1, EV_PERSIST, discovery_cb, s) : NULL;
    if (!s->discovery) {
        wr_reporter_free(s->reporter);
        wr_qmap_free(s->queues);
        free(s);
        return WR_ENOMEM;
    }
    struct timeval tv = wr_clock_tv_ms(s->discovery_ms);
    event_add(s->discovery, &tv);
    if (s->metrics)
        wr_scheduler__describe(s->metrics);
    discover(s);
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
    wr_reporter_free(s->reporter);
    free(s);
}

wr_reporter_t *wr_scheduler_reporter(wr_scheduler_t *s)
{
    return s ? s->reporter : NULL;
}
