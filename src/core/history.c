/*
 * history.c - a fixed ring of one-second samples of a queue (history.h).
 *
 * The ring is allocated whole at creation (WR_HISTORY_SECONDS samples of
 * 40 bytes: about 38 KiB a queue) and never grows. head is the slot of the
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
 */
#include "core/history.h"

#include <stdbool.h>
#include <stdlib.h>

#define MAX_GAP_S 5

typedef struct {
    int64_t t; /* Unix seconds */
    uint64_t waiting, active, admitted, consumed;
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
    *s = (sample_t){t, waiting, active, admitted_total, consumed_total};
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

json_t *wr_history_json(const wr_history_t *h, int64_t since)
{
    json_t *o = json_object();
    json_t *t = json_array(), *w = json_array(), *act = json_array();
    json_t *ad = json_array(), *co = json_array();
    bool ok = o && t && w && act && ad && co;
    for (size_t i = 0; ok && i < h->len; i++) {
        const sample_t *s = cat(h, i);
        if (s->t <= since)
            continue;
        const sample_t *p = i > 0 ? cat(h, i - 1) : NULL;
        ok = json_array_append_new(t, json_integer((json_int_t)s->t * 1000)) == 0 &&
             json_array_append_new(w, json_integer((json_int_t)s->waiting)) == 0 &&
             json_array_append_new(act, json_integer((json_int_t)s->active)) == 0 &&
             json_array_append_new(ad, p ? rate(p, s, p->admitted, s->admitted) : json_null()) ==
                 0 &&
             json_array_append_new(co, p ? rate(p, s, p->consumed, s->consumed) : json_null()) == 0;
    }
    if (ok)
        ok = json_object_set_new(o, "intervalSeconds", json_integer(1)) == 0 &&
             json_object_set(o, "t", t) == 0 && json_object_set(o, "waiting", w) == 0 &&
             json_object_set(o, "active", act) == 0 &&
             json_object_set(o, "admittedPerSecond", ad) == 0 &&
             json_object_set(o, "consumedPerSecond", co) == 0;
    json_decref(t);
    json_decref(w);
    json_decref(act);
    json_decref(ad);
    json_decref(co);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}
