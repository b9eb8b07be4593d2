/*
 * reporter.c - this instance's part of the sale's report (reporter.h).
 *
 * Per queue it holds the minute it last sampled and the counts not sent
 * yet: (minute, key, n) rows, key = a wr_report_counted_t or
 * KEY_WAIT + a wait bucket, merged on equal (minute, key); at most
 * PENDING_MAX rows a queue (more are dropped and logged: a store down for
 * a long time). A flush takes a queue's rows into one WRITE per day (at
 * most WR_STORE_REPORT_ADDS_MAX rows each); a failed WRITE puts its rows
 * back. The store's clock: the offset of the last admit answer's time to
 * the wall clock, so minutes are the store's on every instance.
 *
 * Samples: before the first admission tick of each minute (store clock),
 * a WRITE with the sample field "s<mi>" (set if absent: the earliest
 * instance wins); its answer says whether the queue exists, and then the
 * registry entry is touched (first minute, not deleted), once per queue
 * (again after this instance deleted it, or forgot it as gone).
 */
#include "runtime/reporter.h"

#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/qmap.h"

#define FLUSH_MS    200
#define PENDING_MAX 20000
#define KEY_WAIT    100

typedef struct {
    int64_t minute; /* minute start, epoch ms */
    uint32_t key;
    uint64_t n;
} prow_t;

typedef struct rq {
    char name[WR_QUEUE_NAME_MAX + 1];
    int64_t sampled; /* minute start last sampled, -1 none */
    bool registered; /* the registry entry was touched by this instance */
    prow_t *rows;
    size_t n, cap;
    bool dropped_logged;
} rq_t;

struct wr_reporter {
    struct event_base *base;
    wr_store_t *store;
    uint32_t days;
    wr_qmap_t *queues;
    struct event *timer;
    bool have_offset;
    int64_t offset_ms; /* store clock - wall clock */
    size_t in_flight;
    bool freeing;
};

/* A WRITE in flight. */
typedef struct {
    wr_reporter_t *r;
    char queue[WR_QUEUE_NAME_MAX + 1];
    prow_t *rows; /* owned: put back on failure */
    size_t n;
    int64_t sample_minute; /* -1: no sample */
    bool touch;            /* the registry entry is touched when the queue exists */
} wctx_t;

static void flush_cb(evutil_socket_t fd, short what, void *arg);

wr_reporter_t *wr_reporter_new(struct event_base *base, wr_store_t *store, uint32_t keep_days)
{
    wr_reporter_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->base = base;
    r->store = store;
    r->days = keep_days >= 1 && keep_days <= WR_REPORT_DAYS_MAX ? keep_days : 30;
    r->queues = wr_qmap_new();
    r->timer = event_new(base, -1, EV_PERSIST, flush_cb, r);
    if (!r->queues || !r->timer) {
        wr_reporter_free(r);
        return NULL;
    }
    struct timeval tv = {0, FLUSH_MS * 1000};
    evtimer_add(r->timer, &tv);
    return r;
}

void wr_reporter_free(wr_reporter_t *r)
{
    if (!r)
        return;
    if (r->timer)
        event_free(r->timer);
    if (r->queues) {
        wr_qmap_iter_t it = WR_QMAP_ITER_INIT;
        const char *name;
        void *v;
        while (wr_qmap_next(r->queues, &it, &name, &v)) {
            rq_t *q = wr_qmap_remove(r->queues, name);
            free(q->rows);
            free(q);
        }
        wr_qmap_free(r->queues);
    }
    free(r);
}

uint32_t wr_reporter_keep_days(const wr_reporter_t *r)
{
    return r ? r->days : 30;
}

int64_t wr_reporter_now_ms(const wr_reporter_t *r)
{
    int64_t wall = wr_clock_wall_us() / 1000;
    return r && r->have_offset ? wall + r->offset_ms : wall;
}

static rq_t *queue_of(wr_reporter_t *r, const char *name)
{
    rq_t *q = wr_qmap_get(r->queues, name);
    if (q || !wr_ids_valid_queue(name))
        return q;
    q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    snprintf(q->name, sizeof q->name, "%s", name);
    q->sampled = -1;
    if (wr_qmap_put(r->queues, q->name, q) != WR_OK) {
        free(q);
        return NULL;
    }
    return q;
}

static void add_row(rq_t *q, int64_t minute, uint32_t key, uint64_t n)
{
    for (size_t i = q->n; i-- > 0;) {
        if (q->rows[i].minute == minute && q->rows[i].key == key) {
            q->rows[i].n += n;
            return;
        }
        if (q->n - i > 64)
            break; /* the recent rows only: merging is an optimisation */
    }
    if (q->n >= PENDING_MAX) {
        if (!q->dropped_logged)
            wr_warn("report of %s: too many counts not sent (store unreachable?); dropping",
                    q->name);
        q->dropped_logged = true;
        return;
    }
    prow_t *a = wr_array_grow(q->rows, &q->cap, q->n + 1, sizeof *a, 16, false);
    if (!a)
        return;
    q->rows = a;
    q->rows[q->n++] = (prow_t){minute, key, n};
}

void wr_reporter_count(wr_reporter_t *r, const char *queue, wr_report_counted_t c, uint64_t n)
{
    if (!r || !queue || c >= WR_REPORT_COUNTED_N || n == 0)
        return;
    rq_t *q = queue_of(r, queue);
    if (q)
        add_row(q, wr_report_floor_minute(wr_reporter_now_ms(r)), (uint32_t)c, n);
}

static int64_t expire_at(const wr_reporter_t *r, int64_t day)
{
    return (day + 1 + (int64_t)r->days) * WR_REPORT_DAY_MS;
}

static void touched_cb(wr_err_t err, const wr_store_report_pair_t *p, size_t n, void *arg)
{
    (void)p;
    (void)n;
    wr_reporter_t *r = arg;
    r->in_flight--;
    if (err != WR_OK && err != WR_ECANCELED)
        wr_debug("report registry: %s", wr_strerror(err));
}

static void index_update(wr_reporter_t *r, const char *queue, int64_t first, int64_t deleted)
{
    wr_store_report_req_t req = {
        .kind = WR_STORE_REPORT_INDEX, .queue = queue, .first_ms = first, .deleted_ms = deleted};
    if (wr_store_report(r->store, &req, touched_cb, r) == WR_OK)
        r->in_flight++;
}

static void write_cb(wr_err_t err, const wr_store_report_pair_t *p, size_t n, void *arg)
{
    wctx_t *w = arg;
    wr_reporter_t *r = w->r;
    r->in_flight--;
    if (err == WR_OK) {
        bool exists = n == 1 && strcmp(p[0].value, "1") == 0;
        rq_t *q = w->touch && exists ? queue_of(r, w->queue) : NULL;
        if (q && !q->registered) {
            q->registered = true;
            index_update(r, w->queue, w->sample_minute, -1);
        }
    } else if (err != WR_ECANCELED) {
        rq_t *q = queue_of(r, w->queue);
        for (size_t i = 0; q && i < w->n; i++)
            add_row(q, w->rows[i].minute, w->rows[i].key, w->rows[i].n);
        if (q && w->sample_minute >= 0 && q->sampled == w->sample_minute)
            q->sampled = -1; /* taken again at the next tick */
    }
    free(w->rows);
    free(w);
}

/* One WRITE of queue q for day: the rows of that day (moved out of q),
 * and the sample field when sample (of minute sample_minute, "e" when
 * end). */
static void send_day(wr_reporter_t *r, rq_t *q, int64_t day, const char *sample, double rate,
                     int64_t sample_minute, bool touch)
{
    wctx_t *w = calloc(1, sizeof *w);
    size_t take = 0;
    for (size_t i = 0; i < q->n; i++)
        if (wr_report_day(q->rows[i].minute) == day && take < WR_STORE_REPORT_ADDS_MAX)
            take++;
    wr_store_report_add_t *adds = calloc(take ? take : 1, sizeof *adds);
    char(*names)[WR_REPORT_FIELD_MAX] = calloc(take ? take : 1, sizeof *names);
    if (w)
        w->rows = calloc(take ? take : 1, sizeof *w->rows);
    if (!w || !adds || !names || !w->rows) {
        if (w)
            free(w->rows);
        free(w);
        free(adds);
        free(names);
        return;
    }
    size_t k = 0, keep = 0;
    for (size_t i = 0; i < q->n; i++) {
        prow_t *row = &q->rows[i];
        if (wr_report_day(row->minute) != day || k >= take) {
            q->rows[keep++] = *row;
            continue;
        }
        if (row->key >= KEY_WAIT)
            wr_report_field_wait(names[k], row->minute, row->key - KEY_WAIT);
        else
            wr_report_field_counted(names[k], row->minute, (wr_report_counted_t)row->key);
        adds[k] = (wr_store_report_add_t){names[k], (int64_t)row->n};
        w->rows[k++] = *row;
    }
    q->n = keep;
    w->r = r;
    w->n = k;
    w->sample_minute = sample ? sample_minute : -1;
    w->touch = touch;
    snprintf(w->queue, sizeof w->queue, "%s", q->name);
    wr_store_report_req_t req = {.kind = WR_STORE_REPORT_WRITE,
                                 .queue = q->name,
                                 .day = day,
                                 .expire_at_ms = expire_at(r, day),
                                 .sample = sample,
                                 .rate = rate,
                                 .adds = adds,
                                 .n_adds = k};
    wr_err_t err = wr_store_report(r->store, &req, write_cb, w);
    free(adds);
    free(names);
    if (err == WR_OK) {
        r->in_flight++;
        return;
    }
    for (size_t i = 0; i < w->n; i++)
        add_row(q, w->rows[i].minute, w->rows[i].key, w->rows[i].n);
    if (sample && !touch)
        wr_debug("report of %s: last sample not written: %s", q->name, wr_strerror(err));
    if (sample && touch)
        q->sampled = -1;
    free(w->rows);
    free(w);
}

static void flush_queue(wr_reporter_t *r, rq_t *q)
{
    for (int guard = 0; q->n > 0 && guard < 64; guard++) {
        size_t before = q->n;
        send_day(r, q, wr_report_day(q->rows[0].minute), NULL, 0, -1, false);
        if (q->n >= before)
            break; /* not sent (store unreachable): kept for the next flush */
    }
}

void wr_reporter_flush(wr_reporter_t *r, const char *queue)
{
    if (!r)
        return;
    if (queue) {
        rq_t *q = wr_qmap_get(r->queues, queue);
        if (q)
            flush_queue(r, q);
        return;
    }
    wr_qmap_iter_t it = WR_QMAP_ITER_INIT;
    const char *name;
    void *v;
    while (wr_qmap_next(r->queues, &it, &name, &v))
        flush_queue(r, v);
}

size_t wr_reporter_in_flight(const wr_reporter_t *r)
{
    return r ? r->in_flight : 0;
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_reporter_flush(arg, NULL);
}

void wr_reporter_before_tick(wr_reporter_t *r, const char *queue, double rate)
{
    if (!r)
        return;
    rq_t *q = queue_of(r, queue);
    if (!q)
        return;
    int64_t minute = wr_report_floor_minute(wr_reporter_now_ms(r));
    if (q->sampled >= minute)
        return;
    q->sampled = minute;
    char field[WR_REPORT_FIELD_MAX];
    wr_report_field_sample(field, minute, false);
    /* the registry is touched once (and again after a delete), not every minute */
    send_day(r, q, wr_report_day(minute), field, rate, minute, !q->registered);
}

void wr_reporter_admitted(wr_reporter_t *r, const char *queue, int64_t now_us,
                          const int64_t *waited_us, size_t n, int64_t opens_at_ms)
{
    if (!r)
        return;
    int64_t now_ms = now_us / 1000;
    r->offset_ms = now_ms - wr_clock_wall_us() / 1000;
    r->have_offset = true;
    if (n == 0 || !waited_us)
        return;
    rq_t *q = queue_of(r, queue);
    if (!q)
        return;
    int64_t minute = wr_report_floor_minute(now_ms);
    for (size_t i = 0; i < n; i++) {
        int64_t w = waited_us[i] / 1000;
        if (opens_at_ms >= 0 && now_ms - opens_at_ms < w)
            w = now_ms - opens_at_ms; /* the wait starts at the opening */
        add_row(q, minute, KEY_WAIT + wr_report_bucket(w), 1);
    }
    /* at once, not with the batch: a report read on another instance
     * flushes only that one's counts, and reads right after admission
     * (test_report.py's minute boundary: two instances tick the queue) */
    flush_queue(r, q);
}

void wr_reporter_before_delete(wr_reporter_t *r, const char *queue, double rate)
{
    if (!r)
        return;
    rq_t *q = queue_of(r, queue);
    if (!q)
        return;
    flush_queue(r, q);
    int64_t now = wr_reporter_now_ms(r);
    char field[WR_REPORT_FIELD_MAX];
    wr_report_field_sample(field, now, true);
    send_day(r, q, wr_report_day(now), field, rate, wr_report_floor_minute(now), false);
}

void wr_reporter_deleted(wr_reporter_t *r, const char *queue)
{
    if (!r)
        return;
    rq_t *q = wr_qmap_get(r->queues, queue);
    if (q) {
        q->sampled = -1; /* a queue created again is sampled (and registered) afresh */
        q->registered = false;
    }
    index_update(r, queue, wr_report_floor_minute(wr_reporter_now_ms(r)), wr_reporter_now_ms(r));
}

void wr_reporter_forget(wr_reporter_t *r, const char *queue)
{
    rq_t *q = r ? wr_qmap_get(r->queues, queue) : NULL;
    if (!q || q->n > 0)
        return;
    wr_qmap_remove(r->queues, queue);
    free(q->rows);
    free(q);
}

void wr_reporter_created(wr_reporter_t *r, const char *queue)
{
    if (!r)
        return;
    rq_t *q = queue_of(r, queue);
    if (q)
        q->registered = true;
    index_update(r, queue, wr_report_floor_minute(wr_reporter_now_ms(r)), -1);
}
