/*
 * queue.c - storage-independent rules of the line: poll intervals, ETA, the
 * admission budget and the observed admission rate.
 *
 * Everything here is a pure function of its arguments (the caller supplies
 * the random u for jitter and the clock for the rate window), so each rule
 * is unit-tested exactly.
 *
 * Poll timing: the band by position is an upper bound; a user due sooner
 * is told to come back just after the tick that admits them (queue.h has
 * the rule and the argument that nobody polls more often than the bands).
 * The tick is found with the budget's own integer arithmetic: with no
 * carry, k ticks admit floor(k * A / 1e6), so position p is due in tick
 * ceil(p * 1e6 / A) - exact for fractional rates, where dividing by the
 * double rate * tick / 1000 would be off by one tick (333 at 33.3/s and
 * 100 ms computes 100.00000000000001 ticks, which must be 100).
 *
 * Budget: integer micro-users (millionths of a user). Each tick accrues
 * A = llround(rate * 1000 * tick_ms) micro-users; a call that advances
 * to a later tick yields n = (carry + A) / 1e6 whole users and keeps the
 * remainder as carry, always in [0, 1e6), however many ticks were skipped
 * (case K24: a late timer under CPU load, a stall or an outage never makes
 * one tick admit more than one tick's budget, ceil(A / 1e6)). With A <=
 * 1e6 * 1e4 * 1000 = 1e13, nothing overflows int64. The Redis admission
 * script runs the same integer arithmetic, so both stores agree to the user.
 *
 * Rate window: a ring of (t_ms, admittedTotal) samples. Every sample but
 * the newest is at least window_ms / WR_RATE_SAMPLES after the one before
 * it: a new sample replaces the newest while the newest is closer than that
 * to its predecessor, else it is appended. So the newest data is always
 * used and frequent calls cannot push old samples out early. head is the
 * slot the next sample goes to. The scheduler's ETA samples restart the
 * window whenever the line is empty (wr_rate_window_add_tick), so it
 * measures how fast a line with people in it moves, not the idle time
 * before them.
 * That matters for one in, one out (maxActive), where the ETA comes from
 * the observed rate: the line moves as fast as slots free up, which only
 * observation tells.
 */
#include "core/queue.h"

#include "base/siphash.h"
#include "core/groups.h"

#include <math.h>

#define MICRO       1000000LL
#define RATE_MAX    1000000.0
#define ETA_MAX     9007199254740992.0 /* 2^53 s: beyond this the answer is meaningless */
#define POLL_MAX_MS 600000LL           /* the longest band a config may give */
#define POS_MAX     1000000000000ULL   /* 1e12: at RATE_MAX it is due after 1e6 s */

/* cfg's bands in use: at most WR_POLL_BANDS_MAX; 0 without a config. */
static size_t n_bands(const wr_queue_config_t *cfg)
{
    size_t n = cfg ? cfg->n_poll_bands : 0;
    return n > WR_POLL_BANDS_MAX ? WR_POLL_BANDS_MAX : n;
}

static uint32_t at_least_min(uint32_t ms)
{
    return ms < WR_POLL_MIN_MS ? WR_POLL_MIN_MS : ms;
}

uint32_t wr_queue_slowest_band_ms(const wr_queue_config_t *cfg)
{
    size_t n = n_bands(cfg);
    /* no bands: not reachable through wr_qconfig_parse */
    return at_least_min(n ? cfg->poll_bands[n - 1].ms : WR_POLL_LAST_BAND_MS);
}

uint32_t wr_queue_poll_base_ms(const wr_queue_config_t *cfg, uint64_t position)
{
    size_t n = n_bands(cfg);
    for (size_t i = 0; i < n; i++)
        if (cfg->poll_bands[i].up_to == 0 || position <= cfg->poll_bands[i].up_to)
            return at_least_min(cfg->poll_bands[i].ms);
    return wr_queue_slowest_band_ms(cfg); /* past every bound: the last band */
}

/* pollJitter clamped to [0, 0.5], and *u to [0, 1] (NaN: 0). */
static double jitter_of(const wr_queue_config_t *cfg, double *u)
{
    double j = cfg->poll_jitter;
    if (!(j >= 0))
        j = 0;
    if (j > 0.5)
        j = 0.5;
    if (!(*u >= 0))
        *u = 0;
    if (*u > 1)
        *u = 1;
    return j;
}

uint32_t wr_queue_retry_after_ms(const wr_queue_config_t *cfg, uint64_t position, double u)
{
    double base = wr_queue_poll_base_ms(cfg, position);
    double j = jitter_of(cfg, &u);
    long long ms = llround(base * (1.0 + (2.0 * u - 1.0) * j));
    return ms < WR_POLL_MIN_MS ? WR_POLL_MIN_MS : (uint32_t)ms;
}

/* The cap of retryAfterMs, ms (queue.h wr_queue_retry_cap_idle_ms): the
 * shorter of the idle cap, half of idleTimeoutSeconds (none when it is
 * 0), and the pass cap, tokenTtlSeconds + awayHoldSeconds (none without a
 * token lifetime); at least WR_POLL_MIN_MS; 0 when there is neither. */
static double idle_cap_ms(const wr_queue_config_t *cfg)
{
    if (!cfg)
        return 0;
    double cap = 0;
    if (cfg->idle_timeout_seconds > 0)
        cap = (double)cfg->idle_timeout_seconds * 1000.0 / 2.0;
    if (cfg->token_ttl_seconds > 0) {
        double pass = ((double)cfg->token_ttl_seconds + cfg->away_hold_seconds) * 1000.0;
        if (cap == 0 || pass < cap)
            cap = pass;
    }
    if (cap == 0)
        return 0;
    return cap < WR_POLL_MIN_MS ? WR_POLL_MIN_MS : cap;
}

uint32_t wr_queue_retry_cap_idle_ms(const wr_queue_config_t *cfg, uint32_t retry_ms, double u)
{
    if (idle_cap_ms(cfg) == 0)
        return retry_ms;
    uint64_t cap = (uint64_t)idle_cap_ms(cfg);
    if (retry_ms <= cap)
        return retry_ms;
    /* Capped answers keep the jitter (below the cap): a cap that told
     * everyone far back exactly T/2 would keep a burst of joins together
     * as a wave of polls every T/2, forever. */
    double j = jitter_of(cfg, &u);
    long long ms = llround((double)cap * (1.0 - u * j));
    return ms < WR_POLL_MIN_MS ? WR_POLL_MIN_MS : (uint32_t)ms;
}

uint32_t wr_queue_closed_retry_ms(const wr_queue_config_t *cfg, double u)
{
    wr_queue_config_t d = {.poll_jitter = 0.1, .idle_timeout_seconds = 120};
    if (!cfg)
        cfg = &d;
    double j = jitter_of(cfg, &u);
    long long ms = llround(WR_CLOSED_POLL_MS * (1.0 - u * j));
    if (ms < WR_POLL_MIN_MS)
        ms = WR_POLL_MIN_MS;
    return wr_queue_retry_cap_idle_ms(cfg, (uint32_t)ms, u);
}

uint32_t wr_queue_prequeue_retry_ms(const wr_queue_config_t *cfg, int64_t opens_at_ms,
                                    int64_t now_ms, uint32_t slot_ms, double u)
{
    double j = jitter_of(cfg, &u);
    int64_t ms = llround(WR_PREQUEUE_POLL_MS * (1.0 - u * j));
    int64_t to_slot = opens_at_ms + (int64_t)(slot_ms % 1000) - now_ms;
    if (to_slot < ms)
        ms = to_slot;
    return ms < WR_POLL_MIN_MS ? WR_POLL_MIN_MS : (uint32_t)ms;
}

uint32_t wr_queue_prequeue_slot_ms(const char *user, size_t len)
{
    return (uint32_t)(wr_siphash13(0x77726f6f6d736c74ULL, 0x6f70656e696e6731ULL, user, len) % 1000);
}

wr_queue_brake_t wr_queue_degraded_brake(const wr_queue_config_t *cfg, int64_t now_ms)
{
    if (!cfg)
        return WR_BRAKE_NONE;
    /* first: a closed sale says so even before its opening */
    if (cfg->closed)
        return WR_BRAKE_CLOSED;
    if (cfg->stock == 0)
        return WR_BRAKE_SOLD_OUT;
    if (cfg->opens_at_ms != WR_OPENS_AT_NONE && now_ms < cfg->opens_at_ms)
        return WR_BRAKE_PREQUEUE;
    if (cfg->paused)
        return WR_BRAKE_PAUSED;
    return WR_BRAKE_NONE;
}

/* The admission rate in use, users per second: admitPerSecond, or the
 * observed rate when maxActive holds admission below it, or with autotune
 * the rate autotune set (observed_rate is then that rate, given by the
 * scheduler; unknown: admitPerSecond); 0 when there is
 * none (paused, rate 0, NaN). The one rule behind etaSeconds and the
 * expected admission time of poll timing. */
static double rate_in_use(const wr_queue_config_t *cfg, double observed_rate)
{
    if (cfg->paused)
        return 0;
    double rate = cfg->admit_per_second;
    if (cfg->has_autotune && observed_rate > 0)
        rate = observed_rate; /* autotune: the rate it set (the caller's) */
    else if (cfg->max_active > 0 && observed_rate >= 0 && observed_rate < rate)
        rate = observed_rate;
    if (!(rate > 0) || !isfinite(rate))
        return 0;
    return rate;
}

/* The index (0 = the next) of the first tick at or after due_ms, ticks at
 * next_ms + j * tick_ms; due_ms is at most a few seconds (queue.h). */
static int64_t first_tick_at(int64_t due_ms, int64_t next_ms, int64_t tick_ms)
{
    if (due_ms <= next_ms)
        return 0;
    return (due_ms - next_ms + tick_ms - 1) / tick_ms;
}

int64_t wr_queue_expected_admission_ms(const wr_queue_config_t *cfg, uint64_t position,
                                       double observed_rate, int64_t next_tick_ms,
                                       int64_t head_due_ms, int64_t own_due_ms)
{
    double rate = rate_in_use(cfg, observed_rate);
    if (rate <= 0)
        return -1;
    if (rate > RATE_MAX)
        rate = RATE_MAX;
    int64_t tick = cfg->tick_ms ? cfg->tick_ms : 100;
    /* the store's per-tick accrual, micro-users (wr_budget_advance) */
    int64_t accrual = (int64_t)llround(rate * 1000.0 * (double)tick);
    if (accrual <= 0)
        return -1;
    if (position == 0)
        position = 1;
    /* Beyond POS_MAX even RATE_MAX needs more than POLL_MAX_MS: the band
     * decides, and position * MICRO cannot overflow below it. */
    if (position > POS_MAX)
        return -1;
    uint64_t need = position * (uint64_t)MICRO;
    uint64_t k = (need + (uint64_t)accrual - 1) / (uint64_t)accrual; /* >= 1 */
    if (next_tick_ms < 0)
        next_tick_ms = tick;
    if (next_tick_ms > POLL_MAX_MS || k - 1 > (uint64_t)(POLL_MAX_MS / tick))
        return -1;
    /* The admission delay: no tick admits anyone before the first of the
     * line is due, and none admits this user before they are. */
    if (head_due_ms > POLL_MAX_MS || own_due_ms > POLL_MAX_MS)
        return -1;
    int64_t j0 = first_tick_at(head_due_ms, next_tick_ms, tick);
    int64_t e = next_tick_ms + (j0 + (int64_t)(k - 1)) * tick;
    int64_t own = next_tick_ms + first_tick_at(own_due_ms, next_tick_ms, tick) * tick;
    if (own > e)
        e = own;
    return e > POLL_MAX_MS ? -1 : e;
}

/* The longest answer of the band rule: band x (1 + pollJitter), rounded
 * as wr_queue_retry_after_ms rounds it (u just below 1). */
static double band_max(const wr_queue_config_t *cfg, double band)
{
    double j = cfg->poll_jitter;
    if (!(j >= 0))
        j = 0;
    if (j > 0.5)
        j = 0.5;
    return floor(band * (1.0 + j));
}

double wr_queue_poll_far_ms(const wr_queue_config_t *cfg, uint64_t position, double observed_rate)
{
    if (cfg->poll_max_ms == 0)
        return 0;
    double rate = rate_in_use(cfg, observed_rate);
    if (rate <= 0)
        return 0;
    double tenth = (double)position / rate * 1000.0 / 10.0; /* a tenth of the wait, ms */
    if (tenth > cfg->poll_max_ms)
        tenth = cfg->poll_max_ms;
    /* never more often than the band: a pollMaxMs below it leaves the band */
    return tenth > wr_queue_poll_base_ms(cfg, position) ? tenth : 0;
}

uint64_t wr_queue_away_ahead(uint64_t position, double away_share)
{
    if (position <= 1 || !(away_share > 0))
        return 0;
    if (away_share > 1)
        away_share = 1;
    double n = (double)(position - 1) * away_share;
    double est = n - 2.0 * sqrt(n); /* two standard deviations below the mean */
    return est < 1 ? 0 : (uint64_t)est;
}

bool wr_queue_passed_over(int64_t silent_us, int64_t reach_us, int64_t idle_us, int64_t stale_us,
                          bool pending)
{
    if (pending)
        return true; /* a page join not yet followed: never taken */
    if (idle_us <= 0)
        return false;
    if (stale_us < 0)
        stale_us = 0;
    if (silent_us >= idle_us + stale_us)
        return true;
    return silent_us >= idle_us / 2 + stale_us + WR_QUEUE_OVERDUE_US &&
           silent_us + reach_us >= idle_us + stale_us;
}

uint32_t wr_queue_retry_after_eta_ms(const wr_queue_config_t *cfg, uint64_t position,
                                     double observed_rate, int64_t next_tick_ms,
                                     int64_t head_due_ms, int64_t own_due_ms, double u)
{
    return wr_queue_retry_after_plan_ms(cfg, position, 0, observed_rate, next_tick_ms, head_due_ms,
                                        own_due_ms, u);
}

uint32_t wr_queue_retry_after_plan_ms(const wr_queue_config_t *cfg, uint64_t position,
                                      uint64_t passed_over, double observed_rate,
                                      int64_t next_tick_ms, int64_t head_due_ms, int64_t own_due_ms,
                                      double u)
{
    /* E of the people who will take a slot before this user: those ahead
     * but the ones admission will pass over (never below position 1) */
    uint64_t plan = passed_over < position ? position - passed_over : 1;
    int64_t e = wr_queue_expected_admission_ms(cfg, plan, observed_rate, next_tick_ms, head_due_ms,
                                               own_due_ms);
    double band = wr_queue_poll_base_ms(cfg, position);
    double tick = cfg->tick_ms ? cfg->tick_ms : 100;
    double half = tick / 2;
    uint32_t by_band = wr_queue_retry_after_ms(cfg, position, u);
    double far = wr_queue_poll_far_ms(cfg, position, observed_rate);
    if (far > 0) {
        /* far back: a tenth of the expected wait (pollMaxMs), then jitter */
        double fu = u;
        double j = jitter_of(cfg, &fu);
        long long ms = llround(far * (1.0 + (2.0 * fu - 1.0) * j));
        by_band = ms < WR_POLL_MIN_MS ? WR_POLL_MIN_MS
                  : ms > UINT32_MAX   ? UINT32_MAX
                                      : (uint32_t)ms;
    }
    if (e < 0)
        return by_band;
    if (!(u >= 0))
        u = 0;
    if (u >= 1)
        u = 0.999999;
    double m = tick / 20 < 1 ? 1 : tick / 20; /* <= half: tickMs >= 10 in a parsed config */
    if (m > half)
        m = half;
    double ms = ceil((double)e + m + u * (half - m));
    /* Due within the band, or before the band's longest jittered answer
     * (queue.h: "the jittered edge"); else the band's answer. */
    if (!((double)e + half < band) && !(ms <= band_max(cfg, band)))
        return by_band;
    if (ms < WR_POLL_MIN_MS) {
        /* Due before the floor lets the user back (queue.h: "the floor"):
         * back as soon as allowed, spread over half a tick. */
        ms = floor(WR_POLL_MIN_MS + u * half);
    }
    double cap = idle_cap_ms(cfg);
    if (cap > 0 && ms > cap) {
        /* Due beyond the idle cap (queue.h: "the idle cap"): n equal steps
         * of at most the cap that end at E + s, not the cap itself, which
         * would bring the user back just before E and then 250 ms late. */
        double n = ceil(ms / cap);
        ms = ceil(ms / n);
    }
    return ms < WR_POLL_MIN_MS ? WR_POLL_MIN_MS : (uint32_t)ms;
}

int64_t wr_queue_admit_due_us(int64_t score_us, int64_t now_us)
{
    if (score_us > now_us && score_us - now_us > WR_ADMIT_SLACK_US)
        return 0; /* a clock step: due at once */
    int64_t due = score_us + WR_ADMIT_DELAY_US - now_us;
    return due > 0 ? due : 0;
}

/* ceil(position / rate) seconds; -1 for no rate (rate <= 0). */
static int64_t eta_at(uint64_t position, double rate)
{
    if (!(rate > 0))
        return -1;
    double q = (double)position / rate;
    if (q >= ETA_MAX)
        return (int64_t)ETA_MAX;
    /* A relative 1e-12 absorbs binary rounding of decimal rates (3 at 0.3/s
     * computes 10.000000000000002 and must be 10), far below any real
     * fraction of a second at a position below 2^53. */
    return (int64_t)ceil(q * (1.0 - 1e-12));
}

int64_t wr_queue_eta_seconds(const wr_queue_config_t *cfg, uint64_t position, double observed_rate)
{
    return eta_at(position, rate_in_use(cfg, observed_rate));
}

int64_t wr_queue_eta_seconds_line(const wr_queue_config_t *cfg, uint64_t position,
                                  double observed_rate, size_t line, uint64_t admitted_60s,
                                  size_t first_waiting)
{
    if (cfg->n_groups == 0)
        return wr_queue_eta_seconds(cfg, position, observed_rate);
    double rate = rate_in_use(cfg, observed_rate);
    if (!(rate > 0))
        return -1; /* paused, or no rate: whatever the last minute admitted */
    return eta_at(position,
                  wr_groups_eta_rate(line, admitted_60s, cfg->standard_share, rate, first_waiting));
}

uint64_t wr_budget_advance(wr_budget_t *b, int64_t tick, double admit_per_second, uint32_t tick_ms,
                           bool accrue)
{
    if (tick == b->last_tick)
        return 0; /* run already (by any instance) */
    /* tick < last_tick: the clock stepped back (NTP, a restored VM, a
     * snapshot written under a later clock): this is a new tick, run from
     * here on, never a stall until the clock passes last_tick again. */
    if (!accrue) {
        b->last_tick = tick;
        b->carry_micro = 0;
        return 0;
    }
    double rate = admit_per_second;
    if (!(rate > 0))
        rate = 0; /* also NaN */
    if (rate > RATE_MAX)
        rate = RATE_MAX;
    int64_t accrual = (int64_t)llround(rate * 1000.0 * (double)tick_ms);
    int64_t carry = b->carry_micro;
    if (carry < 0 || carry >= MICRO)
        carry = 0;
    int64_t total = carry + accrual; /* one tick's worth, whatever the gap */
    b->last_tick = tick;
    b->carry_micro = total % MICRO;
    return (uint64_t)(total / MICRO);
}

void wr_budget_settle(wr_budget_t *b, uint64_t allowed, uint64_t admitted)
{
    if (admitted < allowed)
        b->carry_micro = 0;
}

void wr_rate_window_init(wr_rate_window_t *w, int64_t window_ms)
{
    for (unsigned i = 0; i < WR_RATE_SAMPLES; i++) {
        w->t_ms[i] = 0;
        w->total[i] = 0;
    }
    w->head = 0;
    w->count = 0;
    w->window_ms = window_ms > 0 ? window_ms : 60000;
}

/* Slot of the i-th newest sample (0 = newest); i < count. */
static unsigned slot(const wr_rate_window_t *w, unsigned i)
{
    return (w->head + WR_RATE_SAMPLES - 1 - i) % WR_RATE_SAMPLES;
}

void wr_rate_window_add(wr_rate_window_t *w, int64_t now_ms, uint64_t admitted_total)
{
    if (w->count > 0) {
        unsigned newest = slot(w, 0);
        if (now_ms < w->t_ms[newest])
            return; /* the clock is monotonic; ignore a sample from the past */
        if (admitted_total < w->total[newest]) {
            /* the counter restarted (queue re-created): forget the history */
            wr_rate_window_init(w, w->window_ms);
        }
    }
    int64_t spacing = w->window_ms / WR_RATE_SAMPLES;
    if (w->count >= 2 && w->t_ms[slot(w, 0)] - w->t_ms[slot(w, 1)] < spacing) {
        unsigned newest = slot(w, 0);
        w->t_ms[newest] = now_ms;
        w->total[newest] = admitted_total;
        return;
    }
    w->t_ms[w->head] = now_ms;
    w->total[w->head] = admitted_total;
    w->head = (w->head + 1) % WR_RATE_SAMPLES;
    if (w->count < WR_RATE_SAMPLES)
        w->count++;
}

void wr_rate_window_add_tick(wr_rate_window_t *w, int64_t now_ms, uint64_t admitted_total,
                             uint64_t waiting)
{
    if (waiting == 0) {
        wr_rate_window_init(w, w->window_ms);
        return;
    }
    wr_rate_window_add(w, now_ms, admitted_total);
}

double wr_rate_window_rate(const wr_rate_window_t *w)
{
    if (w->count < 2)
        return -1;
    unsigned newest = slot(w, 0);
    unsigned oldest = newest;
    for (unsigned i = 1; i < w->count; i++) {
        unsigned s = slot(w, i);
        if (w->t_ms[newest] - w->t_ms[s] > w->window_ms)
            break;
        oldest = s;
    }
    int64_t span = w->t_ms[newest] - w->t_ms[oldest];
    if (span < 1000)
        return -1;
    return (double)(w->total[newest] - w->total[oldest]) * 1000.0 / (double)span;
}
