/*
 * queue.h - the domain rules of the line that do not depend on storage:
 * poll interval by position (bands + jitter) and by expected admission
 * (poll timing follows the ETA), ETA, the exact fractional admission
 * budget, and the observed admission rate.
 *
 * Pure functions and small value types; no I/O, no libevent, no store.
 * The same budget arithmetic is written in the Redis admission script and
 * in the embedded store; this module is its reference and is unit-tested.
 */
#ifndef WR_QUEUE_H
#define WR_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/qconfig.h"

#define WR_POLL_MIN_MS 250 /* retryAfterMs is never below this */

/*
 * The admission delay: nobody is admitted sooner than WR_ADMIT_DELAY_US
 * after they joined (the floor of retryAfterMs: nobody may come back
 * sooner, so an earlier token would only wait, and the people admitted in
 * those first 250 ms of a burst would all come back at the floor, in one
 * clump). The line is in arrival order, so the people a tick may admit
 * are a prefix of it: those with arrival score <= now - WR_ADMIT_DELAY_US.
 * Both stores apply it in their admission tick with the same rule, on the
 * clock of their scores (Redis TIME; the embedded store's tick clock
 * against its wall-clock scores).
 * Clock steps: a score more than WR_ADMIT_SLACK_US ahead of now can only
 * come from a clock that stepped back (or, embedded, a wall clock that
 * stepped ahead of the tick clock); such a user counts as due at once, so
 * a step never stalls the line for longer than the slack plus the delay.
 */
#define WR_ADMIT_DELAY_US 250000LL
#define WR_ADMIT_SLACK_US 1000000LL

/*
 * Microseconds from now_us until a user with arrival score score_us may be
 * admitted (the admission delay above): 0 when they may be now, at most
 * WR_ADMIT_DELAY_US + WR_ADMIT_SLACK_US.
 */
int64_t wr_queue_admit_due_us(int64_t score_us, int64_t now_us);

/*
 * Base poll interval (ms) for a 1-based position from cfg->poll_bands: the
 * first band whose up_to >= position (up_to 0 = no bound). Never below
 * WR_POLL_MIN_MS.
 */
uint32_t wr_queue_poll_base_ms(const wr_queue_config_t *cfg, uint64_t position);

/*
 * The slowest poll band (ms): cfg's last band, the one a position past every
 * upTo gets (wr_queue_poll_base_ms(cfg, UINT64_MAX)), never below
 * WR_POLL_MIN_MS. cfg NULL (no config known) or without bands: the default
 * config's, WR_POLL_LAST_BAND_MS (5000). The one place that says
 * which band is the slowest: the Retry-After of a full line (its seconds,
 * rounded up), the wait told without a config or without the store.
 */
uint32_t wr_queue_slowest_band_ms(const wr_queue_config_t *cfg);

/*
 * retryAfterMs for a position: the band's interval spread by
 * (2*u - 1) * pollJitter, u uniform in [0,1) supplied by the caller (so the
 * function is deterministic and testable), rounded, clamped to
 * >= WR_POLL_MIN_MS.
 */
uint32_t wr_queue_retry_after_ms(const wr_queue_config_t *cfg, uint64_t position, double u);

/*
 * retryAfterMs by the 1.1 rule "poll timing follows the ETA": the band of
 * wr_queue_retry_after_ms is an upper bound; a user expected to be admitted
 * sooner is told to come back just after that admission.
 *
 *   band     = wr_queue_poll_base_ms(cfg, position)
 *   E        = wr_queue_expected_admission_ms(...) (below), the latest time,
 *              from now, at which this position is due at the rate in use
 *              (after a join: from the time the line's first and the user
 *              are past the admission delay)
 *   half     = tickMs / 2
 *   E >= 0 and E + half < band:
 *            answer = ceil(E + s), with the spread s = m + u * (half - m),
 *            m = tickMs / 20 (at least 1 ms), so s is in [m, half): the
 *            users admitted by one tick come back spread over half a tick,
 *            never before E (m absorbs a timer that fires a few ms late
 *            and the admit round trip) - unless that is below the floor
 *            (below):
 *   the jittered edge, E + half >= band but ceil(E + s) <= Bmax, the
 *            band's longest answer floor(band x (1 + pollJitter)) (3300 at
 *            3 s, jitter 0.1): answer = ceil(E + s), as above. The band's
 *            answer B (band +/- pollJitter) would bring a user with E
 *            beyond the band back after their admission, late by up to
 *            pollJitter x band, or, when B comes less than 250 ms before
 *            E, late by the floor below: on top of the people due then
 *            (the demo's peak 3 to 4 s after a burst). The answer is never
 *            longer than the band rule's longest (the band with its
 *            jitter stays the upper bound).
 *   the floor, E + s < WR_POLL_MIN_MS: the user is admitted before the
 *            floor lets them back: answer = WR_POLL_MIN_MS + u * half,
 *            back as soon as allowed, spread over half a tick. A join
 *            never gets here: its E counts the admission delay (nobody is
 *            admitted sooner than 250 ms after joining, the floor itself),
 *            which is what spreads the head of a crowd that joins
 *            together (about rate x 250 ms people due before the floor)
 *            over the ticks after 250 ms instead of one clump at 250 ms.
 *            A poll gets here when it comes within 250 ms of the user's
 *            admission (a band answer that ended just before it, a client
 *            that does not wait as told).
 *   the idle cap: an ETA answer (either above) longer than the cap of
 *            wr_queue_retry_cap_idle_ms (half of idleTimeoutSeconds, or
 *            the pass cap when shorter) is
 *            cut into n = ceil(answer / cap) equal steps and the first
 *            step is the answer: the user comes back within the cap and,
 *            as the steps repeat, lands at E + s. Capping it instead
 *            would bring the user back just before E, then 250 ms (the
 *            floor) late, on top of the people due then (a sale whose
 *            cap is 1 s: the shop's in-flight peak 1.5x its pool).
 *   else:    answer = B (the band, spread by +/- pollJitter, as in v1),
 *            or, far back (wr_queue_poll_far_ms > 0: a tenth of the
 *            expected wait is longer than the band), that tenth up to
 *            pollMaxMs, spread by +/- pollJitter (1.2)
 * Paused, a rate in use of 0 or unknown (etaSeconds null): the band.
 *
 * Why no one polls more often than the bands let them (the argument):
 * 1. The ETA answer is given only to a user who is due before the band's
 *    interval ends (E + half < band, or E + s <= Bmax: before the band's
 *    longest answer), and it comes after E.
 * 2. E is the LATEST admission of this position while admission runs at
 *    the rate in use: it assumes no carried fraction (the store's carry is
 *    in [0, 1) user, so the real tick is the same or one earlier), counts
 *    every user ahead (people who leave or are skipped only make it
 *    earlier), and counts ticks from the next one, whose time the caller
 *    knows (a full tick when it does not). So a user who polls at E + s
 *    is already admitted: the ETA answer is the user's LAST poll.
 * 3. Every poll before it was answered by the bands, exactly as in v1.
 *    So a user's sequence of polls is v1's sequence cut short: the same
 *    band intervals, then one interval ending after admission (where v1's
 *    next band poll might find the user still waiting and poll again). In
 *    total no more polls than v1; in any window (a minute) at most one
 *    more than the bands give: the poll just after admission. (This holds
 *    for the floor's answers too: they come after E, so they are last
 *    polls as well.)
 * (wr_queue_retry_after_plan_ms takes away from position the people ahead
 * expected to be passed over as away: an estimate erring low keeps E the
 * latest admission with high odds; when it is too high anyway, the poll at
 * E + s finds the user waiting and gets the floor's short answer, one more
 * poll, as in the stall below.)
 * The premise of 2 is that admission keeps the rate in use. When it falls
 * below it for a while - maxActive full with tokens nobody consumes while
 * the observed rate (a one-minute average) still shows the old rate, a
 * rate lowered by the admin between two polls, a store outage (then polls
 * fail anyway) - a user at the head of the line may find itself still
 * waiting at E + s and gets another short answer (>= 250 ms) for as long
 * as the stall lasts: at most ~rate x band users (those due within one
 * band), until the observed rate drops (it reaches 0, the band, within a
 * minute of a full stall). A stateless rule cannot tell a second short
 * answer from a first: bounding this too needs a per-user memory (e.g.
 * "told an ETA already: the band next").
 *
 * The admission delay adds a second way for the premise to fail, in the
 * first 250 ms of a line: E starts the ticks at the head's due time and
 * ends them no sooner than the user's own, but a user between the two who
 * joined later than the head and is not yet due when their tick comes
 * leaves that tick short. This needs joins slower than the rate into a
 * line whose head is younger than 250 ms (a burst joins faster than the
 * rate, and an older head means everyone ahead of the user is due); the
 * late user then gets one more short answer.
 *
 * observed_rate: as for wr_queue_eta_seconds (< 0 unknown).
 * next_tick_ms: ms until the next admission tick runs (the scheduler's next
 *   admit call; 0 while one is in flight); < 0 when unknown: a full tick is
 *   assumed (the latest it comes on a running scheduler), never earlier.
 * head_due_ms, own_due_ms: ms until the first of the line, and this user,
 *   may be admitted (the admission delay: wr_entry_t's head_due_us and
 *   own_due_us, rounded up), as the store reports them after a join; <= 0
 *   when due already or not reported (a poll: by then both are due, unless
 *   the client polls sooner than told).
 * u: uniform in [0,1), supplied by the caller (deterministic tests).
 * Returns ms, >= WR_POLL_MIN_MS.
 */
uint32_t wr_queue_retry_after_eta_ms(const wr_queue_config_t *cfg, uint64_t position,
                                     double observed_rate, int64_t next_tick_ms,
                                     int64_t head_due_ms, int64_t own_due_ms, double u);

/*
 * wr_queue_retry_after_eta_ms for a user with passed_over of the people
 * ahead expected to be passed over by admission (away: their turn makes
 * them held, they take no slot): E is that of position - passed_over (at
 * least 1); the band, the far rule and everything else still use position.
 * passed_over must be an estimate that errs low (wr_queue_away_ahead): too
 * high, and the user comes back before their admission and then waits the
 * 250 ms floor; too low costs only its share of a tick. 0 is
 * wr_queue_retry_after_eta_ms. Returns ms, >= WR_POLL_MIN_MS.
 */
uint32_t wr_queue_retry_after_plan_ms(const wr_queue_config_t *cfg, uint64_t position,
                                      uint64_t passed_over, double observed_rate,
                                      int64_t next_tick_ms, int64_t head_due_ms, int64_t own_due_ms,
                                      double u);

/*
 * How many of the position - 1 people ahead admission is expected to pass
 * over as away, erring low: with a share away_share (in [0, 1]: the
 * queue's stats away / waiting at its last tick, 0 unknown) of the line
 * away, the mean n = (position - 1) x away_share less two standard
 * deviations of a count of n (2 sqrt(n)), floored; 0 below 1. Sleepers are
 * spread through a line, and the people near its front have waited
 * longest, so the line's share is, if anything, below the front's: the
 * estimate errs low there too. (1,000 ahead at 20% away: 171.)
 */
uint64_t wr_queue_away_ahead(uint64_t position, double away_share);

/* A poll answered WR_QUEUE_OVERDUE_US (us) past the longest retry a person
 * may be told (half of idleTimeoutSeconds, the idle cap) is late: the
 * person missed it (a phone asleep), not the network. */
#define WR_QUEUE_OVERDUE_US 250000LL

/*
 * The people ahead, counted (the store looks at the first of the line;
 * docs/API.md "Away people ahead"): will admission pass over this person
 * ahead, who has not asked for silent_us (us since their last join or
 * poll as the store recorded it) and whom admission is expected to reach
 * in reach_us (us from now, erring early: the people taken before them
 * over the configured rate)? idle_us: idleTimeoutSeconds in us (<= 0:
 * none, then only pending page joins are passed over); stale_us: how old
 * a recorded last-seen time may be for someone who asks as told (0 on the
 * embedded store, which records every poll; on Redis the slack of its
 * quiet polls, lib.lua L.slack), which its idle rule adds to idle_us.
 * True for a page join not yet followed (pending), for someone idle now
 * (silent_us >= idle_us + stale_us), and for someone overdue (silent_us >=
 * idle_us / 2 + stale_us + WR_QUEUE_OVERDUE_US: past the longest answer
 * they can have been given, so asleep) who will be idle when reached
 * (silent_us + reach_us >= idle_us + stale_us). Admission itself passes
 * over exactly the idle at its tick (memq.c, admit.lua); an overdue person
 * who asks again before their turn is taken after all, so the count errs
 * high only by people who wake within seconds of it. The Redis scripts
 * keep the same rule (lib.lua, passed_ahead).
 */
bool wr_queue_passed_over(int64_t silent_us, int64_t reach_us, int64_t idle_us, int64_t stale_us,
                          bool pending);

/*
 * Fewer polls from far back (docs/API.md 1.2, pollMaxMs): a tenth of the
 * expected wait of position, position / rate in ms (the rate in use, as
 * for wr_queue_eta_seconds), bounded by cfg->poll_max_ms, when it is
 * longer than the band's interval (wr_queue_poll_base_ms); 0 when the band
 * decides: pollMaxMs 0, no rate in use (paused, 0), or a tenth (bounded)
 * no longer than the band (so a pollMaxMs below the band never shortens
 * it). Before jitter. (100,000 at 175/s: 57142.9 ms.)
 */
double wr_queue_poll_far_ms(const wr_queue_config_t *cfg, uint64_t position, double observed_rate);

/*
 * retry_ms (a retryAfterMs from the bands, the ETA or the pre-queue
 * countdown) capped so that a person who follows it is never away and
 * never loses anything: at most half of cfg's idleTimeoutSeconds (in ms;
 * no such cap when it is 0) and at most tokenTtlSeconds +
 * awayHoldSeconds (the pass cap, K36: admitted at once after the answer,
 * they come back before their pass expires or while its unseen expiry
 * holds them, docs/API.md 1.3), never below WR_POLL_MIN_MS; unchanged
 * without either. Half of T, because a poll within a quarter of T of a
 * recorded one records nothing (status_quiet), so polls T/2 apart leave
 * at most 3T/4 unrecorded. A capped answer is jittered below the cap,
 * cap x (1 - u x pollJitter), u uniform in [0, 1), so that people told
 * the cap do not poll in waves.
 */
uint32_t wr_queue_retry_cap_idle_ms(const wr_queue_config_t *cfg, uint32_t retry_ms, double u);

/*
 * retryAfterMs of a person in the pre-queue (sale opening, docs/API.md
 * 1.1): the shorter of about 5 s - WR_PREQUEUE_POLL_MS shortened by up to
 * pollJitter (u uniform in [0,1)), so never more than 5 s - and the time
 * until that person's slot in the first second after opensAt,
 * opens_at_ms + slot_ms - now_ms; never below WR_POLL_MIN_MS. slot_ms in
 * [0, 1000) is the caller's per-person spread (a hash of the user id, see
 * wr_queue_prequeue_slot_ms), so the polls of a pre-queue of any size are
 * spread evenly over that second instead of landing in its first
 * millisecond. Times in ms (epoch or any one clock).
 */
#define WR_PREQUEUE_POLL_MS 5000

/*
 * When a `closed` answer (the sale is over or sold out, docs/API.md 1.2)
 * asks again - its Retry-After header, rounded up to seconds, and the queue
 * page's data-retry-ms: the slow re-check, WR_CLOSED_POLL_MS shortened by up
 * to pollJitter (so it is never above 60 s: a reopened sale or a restock
 * reaches everyone within a minute, spread over the jitter), then capped
 * at half of idleTimeoutSeconds (wr_queue_retry_cap_idle_ms: people who
 * keep the page open never count as away). u uniform in [0, 1). cfg NULL
 * reads as the defaults. Returns ms, >= WR_POLL_MIN_MS.
 */
#define WR_CLOSED_POLL_MS 60000
uint32_t wr_queue_closed_retry_ms(const wr_queue_config_t *cfg, double u);
uint32_t wr_queue_prequeue_retry_ms(const wr_queue_config_t *cfg, int64_t opens_at_ms,
                                    int64_t now_ms, uint32_t slot_ms, double u);

/* A person's slot in the first second after the opening: their user id
 * (len bytes) hashed (SipHash under a fixed key: the same on every
 * instance) to [0, 1000) ms. */
uint32_t wr_queue_prequeue_slot_ms(const char *user, size_t len);

/*
 * The latest time (ms from now) at which the user at 1-based `position` is
 * admitted while admission runs at the rate in use (the rate of
 * wr_queue_eta_seconds). Ticks are discrete: each accrues the store's
 * integer budget A = llround(rate * 1000 * tickMs) millionths of a user,
 * so with no carried fraction the first k ticks admit floor(k * A / 1e6)
 * users, and position p is admitted in tick k = ceil(p * 1e6 / A) counted
 * from the next tick (k = 1 is the next tick), at
 *     E = next_tick_ms + (k - 1) * tickMs
 * (175/s at 100 ms: A = 17.5 users; p 1..17 -> k 1, 18..35 -> k 2, 175 ->
 * k 10; 0.5/s at 100 ms: A = 0.05, p 1 -> k 20). next_tick_ms < 0 counts
 * as one tick (the latest), a position of 0 as 1.
 * The admission delay (wr_queue_admit_due_us): ticks before the first of
 * the line is due admit nobody, so counting starts at the first tick at or
 * after head_due_ms, j0 = ceil((head_due_ms - next_tick_ms) / tickMs)
 * ticks later (0 when it is due by the next tick), and the user is not
 * admitted before the first tick at or after own_due_ms:
 *     E = max(next_tick_ms + (j0 + k - 1) * tickMs,
 *             next_tick_ms + ceil((own_due_ms - next_tick_ms) / tickMs) * tickMs)
 * (a join into an empty line at next_tick_ms 40: head and own due 250 ->
 * E = 340 for p 1, 440 for p 18). head_due_ms, own_due_ms <= 0: due.
 * Returns E in ms; -1 when there is no rate in use (paused, rate 0 or
 * unknown) or when E exceeds 600000 ms (the longest band: the band
 * decides).
 */
int64_t wr_queue_expected_admission_ms(const wr_queue_config_t *cfg, uint64_t position,
                                       double observed_rate, int64_t next_tick_ms,
                                       int64_t head_due_ms, int64_t own_due_ms);

/*
 * etaSeconds = ceil(position / rate). rate is admitPerSecond, or the
 * observed rate when maxActive is set and the observed rate is lower
 * (observed_rate < 0 means "unknown", use the configured rate), or, with
 * autotune (cfg->has_autotune), observed_rate itself when > 0: the caller
 * passes the rate autotune set (wr_scheduler_queue_rate).
 * Returns -1 (JSON null) when paused or the rate is 0.
 */
int64_t wr_queue_eta_seconds(const wr_queue_config_t *cfg, uint64_t position, double observed_rate);

/*
 * etaSeconds of a person at position in their own line of a queue with
 * priority groups (docs/API.md 1.3, "Groups, precisely"): line 0 the
 * standard line, 1..n the groups in order; admitted_60s that line's
 * admissions over the last 60 s, first_waiting the first group with people
 * waiting (1-based, 0 none) - wr_entry_t's group fields. The rate is
 * wr_groups_eta_rate's of the rate in use (as wr_queue_eta_seconds finds
 * it); -1 (null) when paused, with no rate in use, or when the line gets no
 * rate (a group behind the first one waiting that admitted nobody in the
 * last minute). Without groups (cfg->n_groups 0): wr_queue_eta_seconds.
 */
int64_t wr_queue_eta_seconds_line(const wr_queue_config_t *cfg, uint64_t position,
                                  double observed_rate, size_t line, uint64_t admitted_60s,
                                  size_t first_waiting);

/*
 * Degraded mode's brakes (docs/API.md 1.2 "Clarifications"): while the
 * store is unreachable an instance answers joins and polls from its last
 * known config of the queue, and a fail-open pass is handed out only when
 * no brake holds. What the config cfg says at now_ms (epoch ms):
 *   WR_BRAKE_CLOSED    closed: the `closed` form, reason "closed"
 *   WR_BRAKE_SOLD_OUT  stock 0 (the known config's stock is what was left at
 *                      the last tick the instance saw, scheduler.c): the
 *                      `closed` form, reason "soldOut"
 *   WR_BRAKE_PREQUEUE  opensAt still ahead: the `prequeue` form (computed
 *                      from the known opensAt), for newcomers too
 *   WR_BRAKE_PAUSED    paused: the degraded waiting form (position null)
 *   WR_BRAKE_NONE      no brake: the failPolicy decides
 * A disabled queue (passthrough) and failPolicy "closed" are the caller's,
 * before this. Pure; cfg NULL is WR_BRAKE_NONE.
 */
typedef enum {
    WR_BRAKE_NONE = 0,
    WR_BRAKE_PREQUEUE = 1,
    WR_BRAKE_PAUSED = 2,
    WR_BRAKE_CLOSED = 3,
    WR_BRAKE_SOLD_OUT = 4,
} wr_queue_brake_t;

wr_queue_brake_t wr_queue_degraded_brake(const wr_queue_config_t *cfg, int64_t now_ms);

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
 * tick: tick == last_tick returns 0 and changes nothing. A tick below
 * last_tick comes from a clock that stepped back (API 1.2: it never stops
 * admission): it runs as a new tick (one tick's budget) and becomes
 * last_tick, so admission goes on at the configured rate. Any gap since
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

/* An admission tick's sample (the scheduler's): as wr_rate_window_add, but
 * when nobody was waiting after the tick (`waiting` 0) the window forgets
 * its history and keeps no sample, so it starts again at the first tick
 * that finds people in line (however long after: a quiet queue is not
 * ticked). A line with nobody in it admits nobody for lack of people,
 * which says nothing about how fast it moves once people come: averaged
 * in, 30 s of idle before a crowd made the crowd's observed rate, and so
 * its ETAs, 20 minutes off at the median in the one-in-one-out demo
 * (docs/BENCHMARKS.md). */
void wr_rate_window_add_tick(wr_rate_window_t *w, int64_t now_ms, uint64_t admitted_total,
                             uint64_t waiting);

/* Admissions per second over the window ending at the newest sample;
 * -1 when fewer than two samples span at least one second. */
double wr_rate_window_rate(const wr_rate_window_t *w);

#endif
