/*
 * metrics.c - a registry of counters, gauges and histograms, rendered as
 * Prometheus text format 0.0.4.
 *
 * Structure: one calloc'd struct wr_metrics holding
 *   - families[]: name (copied), type, help (borrowed static string), and
 *     the head/tail of a singly linked list of its series in creation
 *     order. Families render in declaration order; a name used before it
 *     is described gets a family of the call's type, with the # HELP text
 *     (and the type and buckets) of its row in the table (metric_defs.h).
 *   - series[cap]: slots, grown by doubling (from SERIES_INITIAL) when all
 *     are in use; free slots are chained through `next` on a free list. A
 *     series holds its label string (copied, bounded) and its value: a
 *     uint64 counter, a double gauge, or a histogram's per-bucket counts,
 *     sum and count (cumulated on render). About 420 bytes a series
 *     (docs/BENCHMARKS.md, the memory of /metrics).
 *   - index[2 * cap]: open-addressing hash (linear probing) of
 *     (family name, labels) -> series slot, -1 = empty; twice the slots, so
 *     probes stay short and a free entry always exists. Growth and removal
 *     rebuild it (removal is rare: a queue deleted), so there are no
 *     tombstones.
 * Invariants: every live series is in exactly one family list and in the
 * index; n_series counts live series <= cap.
 * The number of series is not capped (K44: a fixed cap of 4096 listed 215
 * of 600 queues): callers create series only for label values they
 * control (routes, statuses, reasons, queues the admin API created), so it
 * follows the number of queues. An update that cannot be recorded (the
 * family table full, a label string too long, the type not matching its
 * family, out of memory) is dropped, counted in
 * waitroom_metrics_dropped_series_total (always rendered last) and logged
 * (warn) at the 1st, 2nd, 4th, 8th... drop, naming the family and why.
 * Refs (wr_metrics_ref_t): a series' slot number kept by a hot caller;
 * slot numbers survive growth (realloc moves the memory, not the
 * numbers), and slots are freed only by a removal, which bumps `epoch`:
 * a ref taken at an older epoch looks its series up again.
 * Not thread-safe: one registry per event loop, or a lock around it.
 */
#include "base/metrics.h"

#include "base/log.h"
#include "base/metric_defs.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAMILIES_MAX   128
#define NAME_MAX_LEN   127
#define SERIES_INITIAL 256                  /* slots at first; doubled when full */
#define N_BUCKETS      13                   /* 12 bounds + +Inf */
#define RENDER_MAX     (256u * 1024 * 1024) /* hard cap of the rendered text */

static const double bucket_bounds[N_BUCKETS - 1] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                    0.05,   0.1,   0.25,   0.5,   1,    2.5};

typedef struct {
    char name[NAME_MAX_LEN + 1];
    wr_metric_type_t type;
    const char *help;     /* borrowed; NULL = no # HELP line */
    int head, tail;       /* series list in creation order, -1 = empty */
    const double *bounds; /* histogram bucket bounds (borrowed), ascending */
    int n_bounds;         /* 1..N_BUCKETS - 1 */
} family_t;

typedef struct {
    int fam;  /* family index; -1 = free slot */
    int next; /* next series of the family, or next free slot */
    uint32_t hash;
    char labels[WR_METRICS_LABELS_MAX + 1]; /* "" = no labels */
    uint64_t counter;
    double gauge;                /* a gauge's value; a counter's too, when real */
    bool real;                   /* a counter set to a fractional value (CPU seconds) */
    uint64_t buckets[N_BUCKETS]; /* per bucket, not cumulative */
    double sum;
    uint64_t count;
} series_t;

struct wr_metrics {
    family_t families[FAMILIES_MAX];
    int n_families;
    series_t *series; /* cap slots */
    int cap;
    int n_series;
    int free_head;
    int *index; /* 2 * cap entries (a power of two) */
    uint64_t dropped;
    uint32_t epoch; /* +1 at every removal: the refs taken before are stale */
};

static uint32_t hash_key(const char *name, const char *labels)
{
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ 0xffu) * 16777619u; /* separator: no byte of a C string */
    for (const char *p = labels; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

static uint32_t index_mask(const wr_metrics_t *m)
{
    return (uint32_t)(2 * m->cap) - 1;
}

static void index_insert(wr_metrics_t *m, int s)
{
    uint32_t i = m->series[s].hash & index_mask(m);
    while (m->index[i] >= 0)
        i = (i + 1) & index_mask(m);
    m->index[i] = s;
}

static void index_rebuild(wr_metrics_t *m)
{
    for (int i = 0; i < 2 * m->cap; i++)
        m->index[i] = -1;
    for (int s = 0; s < m->cap; s++)
        if (m->series[s].fam >= 0)
            index_insert(m, s);
}

/* Grows the slots to cap (more than now): the new ones go on the free
 * list, the index is rebuilt at twice the size. false (nothing changed)
 * when memory runs out. */
static bool grow(wr_metrics_t *m, int cap)
{
    if (cap > (1 << 28))
        return false;
    series_t *series = realloc(m->series, (size_t)cap * sizeof(*series));
    if (!series)
        return false;
    m->series = series;
    int *index = malloc(2 * (size_t)cap * sizeof(*index));
    if (!index)
        return false; /* the larger slot array is kept, unused */
    for (int s = m->cap; s < cap; s++) {
        series[s].fam = -1;
        series[s].next = s + 1 < cap ? s + 1 : m->free_head;
    }
    m->free_head = m->cap;
    m->cap = cap;
    free(m->index);
    m->index = index;
    index_rebuild(m);
    return true;
}

wr_metrics_t *wr_metrics_new(void)
{
    wr_metrics_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->free_head = -1;
    if (!grow(m, SERIES_INITIAL)) {
        wr_metrics_free(m);
        return NULL;
    }
    return m;
}

void wr_metrics_free(wr_metrics_t *m)
{
    if (!m)
        return;
    free(m->series);
    free(m->index);
    free(m);
}

/* An update of family name that cannot be recorded: counted, and logged
 * at the 1st, 2nd, 4th, 8th... drop so it is never silent nor a flood. */
static void drop(wr_metrics_t *m, const char *name, const char *why)
{
    m->dropped++;
    if ((m->dropped & (m->dropped - 1)) == 0)
        wr_warn("metrics: an update of %s was dropped (%s); %llu dropped so far "
                "(waitroom_metrics_dropped_series_total)",
                name, why, (unsigned long long)m->dropped);
}

static int find_family(const wr_metrics_t *m, const char *name)
{
    for (int f = 0; f < m->n_families; f++)
        if (strcmp(m->families[f].name, name) == 0)
            return f;
    return -1;
}

static int add_family(wr_metrics_t *m, const char *name, wr_metric_type_t type, const char *help)
{
    if (!name || !name[0] || strlen(name) > NAME_MAX_LEN || m->n_families >= FAMILIES_MAX)
        return -1;
    family_t *f = &m->families[m->n_families];
    snprintf(f->name, sizeof(f->name), "%s", name);
    f->type = type;
    f->help = help;
    f->head = f->tail = -1;
    f->bounds = bucket_bounds;
    f->n_bounds = N_BUCKETS - 1;
    const wr_metric_def_t *row = help ? NULL : wr_metric_defs_find(name);
    if (row && row->type == type) { /* used before described: its row's help */
        f->help = row->help;
        if (row->bounds && row->n_bounds <= N_BUCKETS - 1) {
            f->bounds = row->bounds;
            f->n_bounds = (int)row->n_bounds;
        }
    }
    return m->n_families++;
}

void wr_metrics_describe(wr_metrics_t *m, const char *name, wr_metric_type_t type, const char *help)
{
    if (!m || !name)
        return;
    int f = find_family(m, name);
    if (f >= 0) {
        /* A family created implicitly by an update gets its help now. */
        if (!m->families[f].help && m->families[f].type == type)
            m->families[f].help = help;
        return;
    }
    if (add_family(m, name, type, help) < 0)
        drop(m, name, "too many families, or a bad name");
}

void wr_metrics_describe_histogram(wr_metrics_t *m, const char *name, const char *help,
                                   const double *bounds, size_t n)
{
    if (!m || !name || !bounds || n == 0 || n > N_BUCKETS - 1)
        return;
    wr_metrics_describe(m, name, WR_METRIC_HISTOGRAM, help);
    int f = find_family(m, name);
    if (f < 0 || m->families[f].type != WR_METRIC_HISTOGRAM || m->families[f].head >= 0)
        return; /* not a histogram, or it has observations in the default buckets */
    m->families[f].bounds = bounds;
    m->families[f].n_bounds = (int)n;
}

static const series_t *lookup(const wr_metrics_t *m, const char *name, const char *labels,
                              uint32_t h)
{
    uint32_t i = h & index_mask(m);
    while (m->index[i] >= 0) {
        const series_t *s = &m->series[m->index[i]];
        if (s->hash == h && strcmp(s->labels, labels) == 0 &&
            strcmp(m->families[s->fam].name, name) == 0)
            return s;
        i = (i + 1) & index_mask(m);
    }
    return NULL;
}

/* An operation of type `op` may update a family of type `fam`: the same
 * type, inc on a gauge, or set on a counter (a total mirrored from the
 * store, which only the store can increment). */
static bool compatible(wr_metric_type_t op, wr_metric_type_t fam)
{
    return op == fam || (op == WR_METRIC_COUNTER && fam == WR_METRIC_GAUGE) ||
           (op == WR_METRIC_GAUGE && fam == WR_METRIC_COUNTER);
}

/* The series (name, labels) of the given type, created if new; NULL when
 * it cannot be recorded (counted as dropped). */
static series_t *get_series(wr_metrics_t *m, const char *name, const char *labels,
                            wr_metric_type_t type)
{
    if (!m || !name)
        return NULL;
    if (!labels)
        labels = "";
    uint32_t h = hash_key(name, labels);
    series_t *s = (series_t *)lookup(m, name, labels, h);
    if (s) {
        if (compatible(type, m->families[s->fam].type))
            return s;
        drop(m, name, "an update of another type");
        return NULL;
    }
    int f = find_family(m, name);
    if (f < 0)
        f = add_family(m, name, type, NULL);
    const char *why = f < 0                                    ? "too many families, or a bad name"
                      : strlen(labels) > WR_METRICS_LABELS_MAX ? "labels too long"
                      : !compatible(type, m->families[f].type) ? "an update of another type"
                      : m->free_head < 0 && !grow(m, 2 * m->cap) ? "out of memory"
                                                                 : NULL;
    if (why) {
        drop(m, name, why);
        return NULL;
    }
    int idx = m->free_head;
    s = &m->series[idx];
    m->free_head = s->next;
    memset(s, 0, sizeof(*s));
    s->fam = f;
    s->next = -1;
    s->hash = h;
    memcpy(s->labels, labels, strlen(labels) + 1);
    family_t *fam = &m->families[f];
    if (fam->tail >= 0)
        m->series[fam->tail].next = idx;
    else
        fam->head = idx;
    fam->tail = idx;
    index_insert(m, idx);
    m->n_series++;
    return s;
}

/* The series of ref when it is fresh, else get_series's (remembered in
 * ref when there is one). */
static series_t *ref_series(wr_metrics_t *m, wr_metrics_ref_t *ref, const char *name,
                            const char *labels, wr_metric_type_t type)
{
    if (m && ref->slot1 > 0 && ref->epoch == m->epoch)
        return &m->series[ref->slot1 - 1];
    series_t *s = get_series(m, name, labels, type);
    if (s) {
        ref->slot1 = (int32_t)(s - m->series) + 1;
        ref->epoch = m->epoch;
    }
    return s;
}

static void inc(wr_metrics_t *m, series_t *s, uint64_t delta)
{
    if (!s)
        return;
    if (m->families[s->fam].type == WR_METRIC_GAUGE) {
        s->gauge += (double)delta;
    } else {
        s->counter += delta;
        s->gauge += (double)delta;
    }
}

void wr_metrics_inc(wr_metrics_t *m, const char *name, const char *labels, uint64_t delta)
{
    inc(m, get_series(m, name, labels, WR_METRIC_COUNTER), delta);
}

void wr_metrics_inc_ref(wr_metrics_t *m, wr_metrics_ref_t *ref, const char *name,
                        const char *labels, uint64_t delta)
{
    inc(m, ref_series(m, ref, name, labels, WR_METRIC_COUNTER), delta);
}

void wr_metrics_set(wr_metrics_t *m, const char *name, const char *labels, double value)
{
    series_t *s = get_series(m, name, labels, WR_METRIC_GAUGE);
    if (!s)
        return;
    if (m->families[s->fam].type == WR_METRIC_COUNTER) {
        s->counter = value > 0 ? (uint64_t)value : 0;
        s->gauge = value > 0 ? value : 0;
        s->real = s->real || s->gauge != (double)s->counter;
    } else {
        s->gauge = value;
    }
}

static void observe(wr_metrics_t *m, series_t *s, double seconds)
{
    if (!s)
        return;
    const family_t *f = &m->families[s->fam];
    int b = f->n_bounds;
    for (int i = 0; i < f->n_bounds; i++) {
        if (seconds <= f->bounds[i]) {
            b = i;
            break;
        }
    }
    s->buckets[b]++;
    s->sum += seconds;
    s->count++;
}

void wr_metrics_observe(wr_metrics_t *m, const char *name, const char *labels, double seconds)
{
    observe(m, get_series(m, name, labels, WR_METRIC_HISTOGRAM), seconds);
}

void wr_metrics_observe_ref(wr_metrics_t *m, wr_metrics_ref_t *ref, const char *name,
                            const char *labels, double seconds)
{
    observe(m, ref_series(m, ref, name, labels, WR_METRIC_HISTOGRAM), seconds);
}

/* Removes the series of family `only` (-1: every family) whose labels
 * contain needle (exact: equal to it). */
static void remove_series(wr_metrics_t *m, int only, const char *needle, bool exact)
{
    bool removed = false;
    for (int f = 0; f < m->n_families; f++) {
        if (only >= 0 && f != only)
            continue;
        family_t *fam = &m->families[f];
        int prev = -1;
        for (int s = fam->head; s >= 0;) {
            series_t *se = &m->series[s];
            int next = se->next;
            if (exact ? strcmp(se->labels, needle) == 0 : strstr(se->labels, needle) != NULL) {
                if (prev >= 0)
                    m->series[prev].next = next;
                else
                    fam->head = next;
                if (fam->tail == s)
                    fam->tail = prev;
                se->fam = -1;
                se->next = m->free_head;
                m->free_head = s;
                m->n_series--;
                removed = true;
            } else {
                prev = s;
            }
            s = next;
        }
    }
    if (removed) {
        index_rebuild(m);
        m->epoch++;
    }
}

void wr_metrics_remove_matching(wr_metrics_t *m, const char *needle)
{
    if (!m || !needle || !needle[0])
        return;
    remove_series(m, -1, needle, false);
}

void wr_metrics_remove(wr_metrics_t *m, const char *name, const char *labels)
{
    if (!m || !name)
        return;
    int f = find_family(m, name);
    if (f >= 0)
        remove_series(m, f, labels ? labels : "", true);
}

double wr_metrics_get(const wr_metrics_t *m, const char *name, const char *labels)
{
    if (!m || !name)
        return 0;
    if (!labels)
        labels = "";
    const series_t *s = lookup(m, name, labels, hash_key(name, labels));
    if (!s)
        return 0;
    switch (m->families[s->fam].type) {
    case WR_METRIC_COUNTER:
        return s->real ? s->gauge : (double)s->counter;
    case WR_METRIC_GAUGE:
        return s->gauge;
    case WR_METRIC_HISTOGRAM:
        return (double)s->count;
    }
    return 0;
}

/* ---- rendering ---- */

typedef struct {
    char *buf;
    size_t len, cap;
    bool failed; /* allocation failed or RENDER_MAX reached */
} sbuf_t;

__attribute__((format(printf, 2, 3))) static void put(sbuf_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t need = b->len + (size_t)n + 1;
        size_t cap = b->cap * 2;
        while (cap < need)
            cap *= 2;
        if (cap > RENDER_MAX)
            cap = RENDER_MAX;
        if (need > cap) {
            b->failed = true;
            return;
        }
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->failed = true;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
}

/* A sample value: an integer when integral, else the shortest of %.15g /
 * %.17g that reads back exactly; NaN and infinities as Prometheus spells them. */
static void fmt_value(char out[40], double v)
{
    if (isnan(v))
        snprintf(out, 40, "NaN");
    else if (isinf(v))
        snprintf(out, 40, v > 0 ? "+Inf" : "-Inf");
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)
        snprintf(out, 40, "%.0f", v);
    else {
        snprintf(out, 40, "%.15g", v);
        if (strtod(out, NULL) != v)
            snprintf(out, 40, "%.17g", v);
    }
}

/* HELP text escaping: backslash and newline. */
static void put_help(sbuf_t *b, const char *name, const char *help)
{
    put(b, "# HELP %s ", name);
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            put(b, "\\\\");
        else if (*p == '\n')
            put(b, "\\n");
        else
            put(b, "%c", *p);
    }
    put(b, "\n");
}

static const char *type_name(wr_metric_type_t t)
{
    switch (t) {
    case WR_METRIC_COUNTER:
        return "counter";
    case WR_METRIC_GAUGE:
        return "gauge";
    case WR_METRIC_HISTOGRAM:
        return "histogram";
    }
    return "untyped";
}

/* "name{labels} value" or "name value". */
static void put_sample(sbuf_t *b, const char *name, const char *suffix, const char *labels,
                       const char *value)
{
    if (labels[0])
        put(b, "%s%s{%s} %s\n", name, suffix, labels, value);
    else
        put(b, "%s%s %s\n", name, suffix, value);
}

static void put_histogram(sbuf_t *b, const family_t *f, const series_t *s)
{
    const char *name = f->name;
    uint64_t cum = 0;
    for (int i = 0; i <= f->n_bounds; i++) {
        char le[40];
        if (i < f->n_bounds)
            fmt_value(le, f->bounds[i]);
        else
            snprintf(le, sizeof(le), "+Inf");
        cum += s->buckets[i];
        if (s->labels[0])
            put(b, "%s_bucket{%s,le=\"%s\"} %llu\n", name, s->labels, le, (unsigned long long)cum);
        else
            put(b, "%s_bucket{le=\"%s\"} %llu\n", name, le, (unsigned long long)cum);
    }
    char v[40];
    fmt_value(v, s->sum);
    put_sample(b, name, "_sum", s->labels, v);
    snprintf(v, sizeof(v), "%llu", (unsigned long long)s->count);
    put_sample(b, name, "_count", s->labels, v);
}

char *wr_metrics_render(const wr_metrics_t *m, size_t *len)
{
    sbuf_t b = {.buf = malloc(4096), .len = 0, .cap = 4096, .failed = false};
    if (!b.buf)
        return NULL;
    b.buf[0] = '\0';
    for (int f = 0; m && f < m->n_families; f++) {
        const family_t *fam = &m->families[f];
        if (fam->help)
            put_help(&b, fam->name, fam->help);
        put(&b, "# TYPE %s %s\n", fam->name, type_name(fam->type));
        for (int i = fam->head; i >= 0; i = m->series[i].next) {
            const series_t *s = &m->series[i];
            char v[40];
            switch (fam->type) {
            case WR_METRIC_COUNTER:
                if (s->real)
                    fmt_value(v, s->gauge);
                else
                    snprintf(v, sizeof(v), "%llu", (unsigned long long)s->counter);
                put_sample(&b, fam->name, "", s->labels, v);
                break;
            case WR_METRIC_GAUGE:
                fmt_value(v, s->gauge);
                put_sample(&b, fam->name, "", s->labels, v);
                break;
            case WR_METRIC_HISTOGRAM:
                put_histogram(&b, fam, s);
                break;
            }
        }
    }
    put(&b,
        "# HELP waitroom_metrics_dropped_series_total Metric updates dropped (a label string "
        "too long, an update of another type, out of memory; each logged).\n"
        "# TYPE waitroom_metrics_dropped_series_total counter\n"
        "waitroom_metrics_dropped_series_total %llu\n",
        (unsigned long long)(m ? m->dropped : 0));
    if (b.failed) {
        free(b.buf);
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.buf;
}
