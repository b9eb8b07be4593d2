/*
 * breaker.c - circuit breaker state machine (see breaker.h for the rules).
 *
 * Structure: the options, the state, a ring of the last window_size call
 * outcomes (two bits each: failed, slow) with running counts, the current
 * open wait, and the half-open probe counters.
 *
 * Invariants
 *   - n_calls <= window_size; n_fail, n_slow <= n_calls; they equal the
 *     number of set bits among the n_calls newest ring slots.
 *   - The window and the consecutive count are only fed while closed and
 *     are cleared whenever the breaker closes or opens.
 *   - half-open: probes_ok <= probes_out <= half_open_probes.
 *   - wait_ms is in [open_wait_ms, open_wait_max_ms].
 *   - gen changes at every transition; permits of another gen are ignored.
 * Ownership: the caller owns the breaker (wr_breaker_new/free); nothing
 * else is allocated.
 */
#include "core/breaker.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "base/names.h"

#define OUT_FAIL 1u
#define OUT_SLOW 2u

struct wr_breaker {
    wr_breaker_opts_t o;
    wr_breaker_state_t state;
    uint64_t gen;
    /* closed: sliding window */
    uint8_t ring[WR_BREAKER_WINDOW_MAX];
    uint32_t head; /* next slot to write */
    uint32_t n_calls, n_fail, n_slow;
    uint32_t consecutive;
    /* open */
    int64_t opened_at_ms;
    uint32_t wait_ms;      /* wait of the current (or next) opening */
    uint32_t open_wait_ms; /* wait of the current opening, for retry_in */
    /* half-open */
    uint32_t probes_out, probes_ok;
    wr_breaker_stats_t stats;
};

void wr_breaker_opts_default(wr_breaker_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->window_size = 20;
    o->min_calls = 10;
    o->failure_rate = 0.5;
    o->consecutive_failures = 5;
    o->slow_call_ms = 200;
    o->slow_call_rate = 0.8;
    o->open_wait_ms = 1000;
    o->open_wait_max_ms = 5000;
    o->half_open_probes = 3;
}

/* Zero fields take their defaults. */
static void fill_defaults(wr_breaker_opts_t *o)
{
    wr_breaker_opts_t d;
    wr_breaker_opts_default(&d);
    if (!o->window_size)
        o->window_size = d.window_size;
    if (!o->min_calls)
        o->min_calls = o->window_size < d.min_calls ? o->window_size : d.min_calls;
    if (o->failure_rate == 0)
        o->failure_rate = d.failure_rate;
    if (!o->consecutive_failures)
        o->consecutive_failures = d.consecutive_failures;
    if (!o->slow_call_ms)
        o->slow_call_ms = d.slow_call_ms;
    if (o->slow_call_rate == 0)
        o->slow_call_rate = d.slow_call_rate;
    if (!o->open_wait_ms)
        o->open_wait_ms = d.open_wait_ms;
    if (!o->open_wait_max_ms)
        o->open_wait_max_ms =
            o->open_wait_ms > d.open_wait_max_ms ? o->open_wait_ms : d.open_wait_max_ms;
    if (!o->half_open_probes)
        o->half_open_probes = d.half_open_probes;
}

static bool rate_ok(double r)
{
    return r > 0 && r <= 1;
}

static wr_err_t check(const wr_breaker_opts_t *o, char *err, size_t errlen)
{
    const char *bad = NULL;
    if (o->window_size < 1 || o->window_size > WR_BREAKER_WINDOW_MAX)
        bad = "window";
    else if (o->min_calls < 1 || o->min_calls > o->window_size)
        bad = "min_calls";
    else if (!rate_ok(o->failure_rate))
        bad = "failure_rate";
    else if (!rate_ok(o->slow_call_rate))
        bad = "slow_rate";
    else if (o->open_wait_max_ms < o->open_wait_ms)
        bad = "wait_max_ms";
    else if (o->half_open_probes < 1 || o->half_open_probes > 1000)
        bad = "probes";
    if (!bad)
        return WR_OK;
    if (err && errlen)
        snprintf(err, errlen, "%s out of range", bad);
    return WR_EINVAL;
}

/* The keys of a --breaker spec and the option each sets: a rate (double)
 * or a count of calls or milliseconds (uint32_t, at least 1). */
typedef struct {
    const char *key;
    size_t off;
    bool rate;
} breaker_key_t;
#define BREAKER_KEY(k, m, T, rate_)                                                                \
    {                                                                                              \
        k, _Generic(((wr_breaker_opts_t *)0)->m, T : offsetof(wr_breaker_opts_t, m)), rate_        \
    }
static const breaker_key_t breaker_keys[] = {
    BREAKER_KEY("failure_rate", failure_rate, double, true),
    BREAKER_KEY("slow_rate", slow_call_rate, double, true),
    BREAKER_KEY("window", window_size, uint32_t, false),
    BREAKER_KEY("min_calls", min_calls, uint32_t, false),
    BREAKER_KEY("consecutive", consecutive_failures, uint32_t, false),
    BREAKER_KEY("slow_ms", slow_call_ms, uint32_t, false),
    BREAKER_KEY("wait_ms", open_wait_ms, uint32_t, false),
    BREAKER_KEY("wait_max_ms", open_wait_max_ms, uint32_t, false),
    BREAKER_KEY("probes", half_open_probes, uint32_t, false),
};

/* True when v is written as the spec wants it: decimal digits (at most
 * 10), and for a rate one '.' with digits after it allowed; no sign,
 * exponent, hex or space. */
static bool plain_decimal(const char *v, bool rate)
{
    size_t digits = 0;
    const char *p = v;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (digits == 0 || digits > 10)
        return false;
    if (rate && *p == '.') {
        const char *f = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == f)
            return false;
    }
    return *p == '\0';
}

wr_err_t wr_breaker_parse(wr_breaker_opts_t *o, const char *spec, char *err, size_t errlen)
{
    char buf[512];
    if (!spec || strlen(spec) >= sizeof(buf)) {
        snprintf(err, errlen, "spec too long (at most %zu bytes)", sizeof(buf) - 1);
        return WR_EINVAL;
    }
    size_t n = strlen(spec);
    if (n && (spec[0] == ',' || spec[n - 1] == ',' || strstr(spec, ",,"))) {
        snprintf(err, errlen, "an empty item in '%.40s'", spec);
        return WR_EINVAL;
    }
    snprintf(buf, sizeof(buf), "%s", spec);
    unsigned given = 0; /* bit i: breaker_keys[i] already set by this spec */
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        while (*kv == ' ')
            kv++;
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(err, errlen, "expected key=value, got '%.40s'", kv);
            return WR_EINVAL;
        }
        *eq = '\0';
        const char *key = kv, *val = eq + 1;
        size_t i = 0;
        while (i < sizeof(breaker_keys) / sizeof(breaker_keys[0]) &&
               strcmp(key, breaker_keys[i].key) != 0)
            i++;
        if (i == sizeof(breaker_keys) / sizeof(breaker_keys[0])) {
            snprintf(err, errlen, "unknown key '%.40s'", key);
            return WR_EINVAL;
        }
        const breaker_key_t *k = &breaker_keys[i];
        if (given & (1u << i)) {
            snprintf(err, errlen, "%s given twice", key);
            return WR_EINVAL;
        }
        given |= 1u << i;
        double v = plain_decimal(val, k->rate) ? strtod(val, NULL) : -1;
        if (k->rate) {
            /* 0 would read as "the default" inside the options struct */
            if (!rate_ok(v)) {
                snprintf(err, errlen, "%s: '%.40s' is not a rate above 0 and at most 1", key, val);
                return WR_EINVAL;
            }
            *(double *)((char *)o + k->off) = v;
        } else {
            /* 0 means "the default" inside the options struct; written out
             * it would silently become 5 or 1000, so it is refused. */
            if (v < 1 || v > UINT32_MAX) {
                snprintf(err, errlen, "%s: '%.40s' is not an integer from 1 to %u", key, val,
                         (unsigned)UINT32_MAX);
                return WR_EINVAL;
            }
            *(uint32_t *)((char *)o + k->off) = (uint32_t)v;
        }
    }
    wr_breaker_opts_t t = *o;
    fill_defaults(&t);
    return check(&t, err, errlen);
}

wr_err_t wr_breaker_new(const wr_breaker_opts_t *opts, wr_breaker_t **out)
{
    wr_breaker_opts_t o;
    if (opts)
        o = *opts;
    else
        wr_breaker_opts_default(&o);
    fill_defaults(&o);
    if (check(&o, NULL, 0) != WR_OK)
        return WR_EINVAL;
    wr_breaker_t *b = calloc(1, sizeof(*b));
    if (!b)
        return WR_ENOMEM;
    b->o = o;
    b->state = WR_BREAKER_CLOSED;
    b->wait_ms = o.open_wait_ms;
    *out = b;
    return WR_OK;
}

void wr_breaker_free(wr_breaker_t *b)
{
    free(b);
}

static void clear_window(wr_breaker_t *b)
{
    memset(b->ring, 0, sizeof(b->ring));
    b->head = 0;
    b->n_calls = b->n_fail = b->n_slow = 0;
    b->consecutive = 0;
}

static void move_to(wr_breaker_t *b, wr_breaker_state_t to, wr_breaker_why_t why, int64_t now)
{
    wr_breaker_state_t from = b->state;
    uint32_t wait = 0;
    b->state = to;
    b->gen++;
    b->stats.transitions[to]++;
    b->probes_out = b->probes_ok = 0;
    clear_window(b);
    if (to == WR_BREAKER_OPEN) {
        wait = b->wait_ms;
        b->open_wait_ms = wait;
        b->opened_at_ms = now;
        /* the next opening (a failed half-open) waits twice as long */
        uint64_t next = (uint64_t)b->wait_ms * 2;
        b->wait_ms = next > b->o.open_wait_max_ms ? b->o.open_wait_max_ms : (uint32_t)next;
    } else if (to == WR_BREAKER_CLOSED) {
        b->wait_ms = b->o.open_wait_ms;
    }
    if (b->o.on_transition)
        b->o.on_transition(from, to, why, wait, b->o.arg);
}

wr_breaker_permit_t wr_breaker_allow(wr_breaker_t *b, int64_t now_ms)
{
    wr_breaker_permit_t p = {false, false, 0};
    if (b->state == WR_BREAKER_OPEN && now_ms - b->opened_at_ms >= (int64_t)b->open_wait_ms)
        move_to(b, WR_BREAKER_HALF_OPEN, WR_BREAKER_WHY_WAIT_OVER, now_ms);
    p.gen = b->gen;
    switch (b->state) {
    case WR_BREAKER_CLOSED:
        p.allowed = true;
        break;
    case WR_BREAKER_HALF_OPEN:
        if (b->probes_out < b->o.half_open_probes) {
            b->probes_out++;
            p.allowed = true;
            p.probe = true;
        }
        break;
    case WR_BREAKER_OPEN:
        break;
    }
    if (p.allowed)
        b->stats.allowed++;
    else
        b->stats.rejected++;
    return p;
}

/* Pushes one outcome into the window, evicting the oldest when full. */
static void push(wr_breaker_t *b, uint8_t out)
{
    uint32_t n = b->o.window_size;
    if (b->n_calls == n) {
        uint8_t old = b->ring[b->head];
        b->n_fail -= (old & OUT_FAIL) ? 1 : 0;
        b->n_slow -= (old & OUT_SLOW) ? 1 : 0;
    } else {
        b->n_calls++;
    }
    b->ring[b->head] = out;
    b->n_fail += (out & OUT_FAIL) ? 1 : 0;
    b->n_slow += (out & OUT_SLOW) ? 1 : 0;
    b->head = (b->head + 1) % n;
}

void wr_breaker_record(wr_breaker_t *b, wr_breaker_permit_t p, bool failed, uint32_t latency_ms,
                       int64_t now_ms)
{
    if (!p.allowed || p.gen != b->gen)
        return; /* a call of an earlier state: says nothing about this one */
    bool slow = latency_ms >= b->o.slow_call_ms;
    if (b->state == WR_BREAKER_HALF_OPEN) {
        if (!p.probe)
            return;
        if (failed || slow) {
            move_to(b, WR_BREAKER_OPEN, WR_BREAKER_WHY_PROBE_FAILED, now_ms);
            return;
        }
        if (++b->probes_ok >= b->o.half_open_probes)
            move_to(b, WR_BREAKER_CLOSED, WR_BREAKER_WHY_PROBES_OK, now_ms);
        return;
    }
    if (b->state != WR_BREAKER_CLOSED)
        return;
    push(b, (uint8_t)((failed ? OUT_FAIL : 0) | (slow ? OUT_SLOW : 0)));
    b->consecutive = failed ? b->consecutive + 1 : 0;
    if (b->consecutive >= b->o.consecutive_failures) {
        move_to(b, WR_BREAKER_OPEN, WR_BREAKER_WHY_CONSECUTIVE, now_ms);
        return;
    }
    if (b->n_calls < b->o.min_calls)
        return;
    /* count / calls >= rate, as count >= rate * calls; the 1e-9 absorbs the
     * binary rounding of decimal rates (0.3 * 10 = 3.0000000000000004) */
    if ((double)b->n_fail >= b->o.failure_rate * (double)b->n_calls - 1e-9)
        move_to(b, WR_BREAKER_OPEN, WR_BREAKER_WHY_FAILURE_RATE, now_ms);
    else if ((double)b->n_slow >= b->o.slow_call_rate * (double)b->n_calls - 1e-9)
        move_to(b, WR_BREAKER_OPEN, WR_BREAKER_WHY_SLOW_RATE, now_ms);
}

void wr_breaker_cancel(wr_breaker_t *b, wr_breaker_permit_t p)
{
    if (p.allowed && p.probe && p.gen == b->gen && b->state == WR_BREAKER_HALF_OPEN &&
        b->probes_out > b->probes_ok)
        b->probes_out--;
}

wr_breaker_state_t wr_breaker_state(const wr_breaker_t *b)
{
    return b->state;
}

uint32_t wr_breaker_retry_in_ms(const wr_breaker_t *b, int64_t now_ms)
{
    if (b->state != WR_BREAKER_OPEN)
        return 0;
    int64_t left = b->opened_at_ms + (int64_t)b->open_wait_ms - now_ms;
    return left > 0 ? (uint32_t)left : 0;
}

uint32_t wr_breaker_next_wait_ms(const wr_breaker_t *b)
{
    return b->wait_ms;
}

void wr_breaker_window(const wr_breaker_t *b, uint32_t *calls, uint32_t *failures, uint32_t *slow)
{
    if (calls)
        *calls = b->n_calls;
    if (failures)
        *failures = b->n_fail;
    if (slow)
        *slow = b->n_slow;
}

void wr_breaker_get_stats(const wr_breaker_t *b, wr_breaker_stats_t *out)
{
    *out = b->stats;
}

static const char *const state_names[] = {
    [WR_BREAKER_CLOSED] = "closed",
    [WR_BREAKER_OPEN] = "open",
    [WR_BREAKER_HALF_OPEN] = "half_open",
};

const char *wr_breaker_state_name(wr_breaker_state_t s)
{
    return WR_NAMES_GET(state_names, s, "unknown");
}

static const char *const why_names[] = {
    [WR_BREAKER_WHY_FAILURE_RATE] = "failure_rate",
    [WR_BREAKER_WHY_CONSECUTIVE] = "consecutive_failures",
    [WR_BREAKER_WHY_SLOW_RATE] = "slow_call_rate",
    [WR_BREAKER_WHY_WAIT_OVER] = "wait_over",
    [WR_BREAKER_WHY_PROBE_FAILED] = "probe_failed",
    [WR_BREAKER_WHY_PROBES_OK] = "probes_succeeded",
};

const char *wr_breaker_why_name(wr_breaker_why_t w)
{
    return WR_NAMES_GET(why_names, w, "unknown");
}
