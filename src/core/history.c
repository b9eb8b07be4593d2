/*
 * history.c - a fixed ring of one-second samples of a queue (history.h).
 *
 * The ring is allocated whole at creation (WR_HISTORY_SECONDS samples of
 * 56 bytes: about 53 KiB a queue) and never grows. head is the slot of the
 * oldest sample, len the number held; the newest is at (head + len - 1)
 * mod N. Adding a new second writes after the newest and, when full,
 * drops the oldest. Times only go forward: a sample for the newest second
 * replaces it, an older one is ignored.
 *
 * Rates are derived when rendering, from consecutive samples: totals are
 * store-wide counters, so the same on every instance. A gap longer than
 * MAX_GAP_S (the store was unreachable, the instance stopped) or a total
 * that went down (the queue was deleted and created again) gives null
 * instead of a misleading average.
 *
 * Autotune's part of a sample (the rate in use, the latency seen, the
 * target) fits in 16 bytes: the rate as a double, the latency in whole
 * microseconds in a uint32_t (a valid report is at most 3,600,000 ms =
 * 3.6e9 us < UINT32_MAX, which means "none"), the target in ms (0 = no
 * autotune). Microseconds, not a float of ms: 812.3 ms comes back as
 * 812.3, not 812.29998779.
 */
#include "core/history.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define MAX_GAP_S 5
#define NO_LAT    UINT32_MAX /* lat_us: no fresh report */

typedef struct {
    int64_t t; /* Unix seconds */
    uint64_t waiting, active, admitted, consumed;
    double rate;        /* autotune: the rate in use; 0 = not known */
    uint32_t lat_us;    /* autotune: the latency seen, us; NO_LAT = none */
    uint32_t target_ms; /* autotune: targetMs; 0 = no autotune */
} sample_t;

struct wr_history {
    size_t head, len;
    sample_t s[WR_HISTORY_SECONDS];
};

wr_history_t *wr_history_new(void)
{
    return calloc(1, sizeof(wr_history_t));
}

void wr_history_free(wr_history_t *h)
{
    free(h);
}

static sample_t *at(wr_history_t *h, size_t i)
{
    return &h->s[(h->head + i) % WR_HISTORY_SECONDS];
}

static const sample_t *cat(const wr_history_t *h, size_t i)
{
    return &h->s[(h->head + i) % WR_HISTORY_SECONDS];
}

void wr_history_add(wr_history_t *h, int64_t t, uint64_t waiting, uint64_t active,
                    uint64_t admitted_total, uint64_t consumed_total)
{
    wr_history_add_tuned(h, t, waiting, active, admitted_total, consumed_total, NULL);
}

void wr_history_add_tuned(wr_history_t *h, int64_t t, uint64_t waiting, uint64_t active,
                          uint64_t admitted_total, uint64_t consumed_total,
                          const wr_history_tune_t *tune)
{
    sample_t *s;
    if (h->len > 0 && at(h, h->len - 1)->t >= t) {
        s = at(h, h->len - 1);
        if (s->t > t)
            return; /* the clock stepped back */
    } else if (h->len < WR_HISTORY_SECONDS) {
        s = at(h, h->len++);
    } else {
        h->head = (h->head + 1) % WR_HISTORY_SECONDS;
        s = at(h, h->len - 1);
    }
    *s = (sample_t){t, waiting, active, admitted_total, consumed_total, 0, NO_LAT, 0};
    if (tune && tune->target_ms > 0) {
        s->target_ms = tune->target_ms;
        s->rate = tune->rate > 0 && isfinite(tune->rate) ? tune->rate : 0;
        double us = tune->latency_ms * 1000.0;
        if (us >= 0 && isfinite(us))
            s->lat_us = us < (double)(NO_LAT - 1) ? (uint32_t)llround(us) : NO_LAT - 1;
    }
}

size_t wr_history_len(const wr_history_t *h)
{
    return h->len;
}

/* The rate between two samples: null when it would mislead. */
static json_t *rate(const sample_t *prev, const sample_t *cur, uint64_t a, uint64_t b)
{
    int64_t dt = cur->t - prev->t;
    if (dt <= 0 || dt > MAX_GAP_S || b < a)
        return json_null();
    return json_real((double)(b - a) / (double)dt);
}

/* A number: an integer when whole (250, not 250.0). */
static json_t *num(double d)
{
    if (d == floor(d) && fabs(d) <= 9007199254740992.0)
        return json_integer((json_int_t)d);
    return json_real(d);
}

json_t *wr_history_json(const wr_history_t *h, int64_t since)
{
    json_t *o = json_object();
    json_t *t = json_array(), *w = json_array(), *act = json_array();
    json_t *ad = json_array(), *co = json_array();
    json_t *ru = json_array(), *lat = json_array(), *tg = json_array();
    bool ok = o && t && w && act && ad && co && ru && lat && tg;
    bool tuned = false; /* a sample answered has autotune: its columns go out */
    for (size_t i = 0; ok && i < h->len; i++) {
        const sample_t *s = cat(h, i);
        if (s->t <= since)
            continue;
        const sample_t *p = i > 0 ? cat(h, i - 1) : NULL;
        bool has = s->target_ms > 0; /* this sample's */
        tuned = tuned || has;
        ok = json_array_append_new(t, json_integer((json_int_t)s->t * 1000)) == 0 &&
             json_array_append_new(w, json_integer((json_int_t)s->waiting)) == 0 &&
             json_array_append_new(act, json_integer((json_int_t)s->active)) == 0 &&
             json_array_append_new(ad, p ? rate(p, s, p->admitted, s->admitted) : json_null()) ==
                 0 &&
             json_array_append_new(co, p ? rate(p, s, p->consumed, s->consumed) : json_null()) ==
                 0 &&
             json_array_append_new(ru, has && s->rate > 0 ? num(s->rate) : json_null()) == 0 &&
             json_array_append_new(lat, has && s->lat_us != NO_LAT ? num((double)s->lat_us / 1000.0)
                                                                   : json_null()) == 0 &&
             json_array_append_new(tg, has ? json_integer(s->target_ms) : json_null()) == 0;
    }
    if (ok)
        ok = json_object_set_new(o, "intervalSeconds", json_integer(1)) == 0 &&
             json_object_set(o, "t", t) == 0 && json_object_set(o, "waiting", w) == 0 &&
             json_object_set(o, "active", act) == 0 &&
             json_object_set(o, "admittedPerSecond", ad) == 0 &&
             json_object_set(o, "consumedPerSecond", co) == 0;
    if (ok && tuned)
        ok = json_object_set(o, "rateInUse", ru) == 0 &&
             json_object_set(o, "latencyMs", lat) == 0 && json_object_set(o, "targetMs", tg) == 0;
    json_decref(t);
    json_decref(w);
    json_decref(act);
    json_decref(ad);
    json_decref(co);
    json_decref(ru);
    json_decref(lat);
    json_decref(tg);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}
