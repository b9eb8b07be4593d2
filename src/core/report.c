/*
 * report.c - the sale's report, its pure part (report.h).
 *
 * A report under construction holds one row per minute of its range (the
 * instances' counts and the sparse wait histogram of the people admitted
 * then) and the samples of the days read, in any order. Rendering sorts
 * the samples by time and walks them once: the change from one sample to
 * the next goes to the minute of the first (a sample is taken at the start
 * of its minute, so that is the minute the change happened in, to within
 * the few ms between the minute's start and the first instance's sample);
 * the change from the last sample to the live stats goes to the last
 * sample's minute. The first minute of a queue's report starts from zero
 * (a sample of that minute was taken after the queue began). A counter
 * that went down belongs to a queue created again: its new value counts.
 *
 * Memory: a row is 64 bytes plus 8 bytes per distinct wait bucket of its
 * minute; at most WR_REPORT_MINUTE_MAX rows. Samples: 88 bytes each, one a
 * minute (plus a deleted queue's last), bounded by the days read.
 */
#include "core/report.h"

#include "base/array.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MAX_MS (1LL << 40)

int64_t wr_report_floor_minute(int64_t ms)
{
    int64_t q = ms / WR_REPORT_MINUTE_MS;
    if (ms % WR_REPORT_MINUTE_MS < 0)
        q--;
    return q * WR_REPORT_MINUTE_MS;
}

int64_t wr_report_ceil_minute(int64_t ms)
{
    int64_t f = wr_report_floor_minute(ms);
    return f == ms ? f : f + WR_REPORT_MINUTE_MS;
}

int64_t wr_report_day(int64_t ms)
{
    int64_t q = ms / WR_REPORT_DAY_MS;
    return ms % WR_REPORT_DAY_MS < 0 ? q - 1 : q;
}

uint32_t wr_report_bucket(int64_t v)
{
    if (v < 0)
        v = 0;
    if (v > WAIT_MAX_MS)
        v = WAIT_MAX_MS;
    if (v < 128)
        return (uint32_t)v;
    int bits = 64 - __builtin_clzll((unsigned long long)v);
    int e = bits - 7;
    return (uint32_t)(64 * e + (v >> e));
}

int64_t wr_report_bucket_ms(uint32_t b)
{
    if (b < 128)
        return b;
    int e = (int)(b / 64) - 1;
    int64_t m = (int64_t)b - 64 * e;
    int64_t lo = m << e;
    return lo + ((1LL << e) - 1) / 2;
}

int64_t wr_report_percentile(const uint32_t *hist, double p)
{
    uint64_t n = 0;
    for (uint32_t b = 0; b < WR_REPORT_BUCKETS; b++)
        n += hist[b];
    if (n == 0)
        return -1;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)n);
    if (rank < 1)
        rank = 1;
    uint64_t acc = 0;
    for (uint32_t b = 0; b < WR_REPORT_BUCKETS; b++) {
        acc += hist[b];
        if (acc >= rank)
            return wr_report_bucket_ms(b);
    }
    return wr_report_bucket_ms(WR_REPORT_BUCKETS - 1);
}

char *wr_report_sample_text(const wr_report_sample_t *s, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
             ",%" PRIu64 ",%" PRIu64 ",%.17g",
             s->t_ms, s->consumed, s->expired, s->left, s->rejected_full, s->abandoned, s->returned,
             s->waiting, s->away, isfinite(s->rate) && s->rate >= 0 ? s->rate : 0.0);
    return buf;
}

bool wr_report_sample_parse(const char *text, wr_report_sample_t *out)
{
    wr_report_sample_t s;
    int used = 0;
    long long t;
    unsigned long long v[8];
    if (!text || strlen(text) >= WR_REPORT_SAMPLE_MAX)
        return false;
    if (sscanf(text, "%lld,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%lf%n", &t, &v[0], &v[1], &v[2],
               &v[3], &v[4], &v[5], &v[6], &v[7], &s.rate, &used) != 10 ||
        text[used] != '\0' || !isfinite(s.rate) || s.rate < 0)
        return false;
    s.t_ms = t;
    s.consumed = v[0], s.expired = v[1], s.left = v[2], s.rejected_full = v[3];
    s.abandoned = v[4], s.returned = v[5], s.waiting = v[6], s.away = v[7];
    *out = s;
    return true;
}

static const char counted_letter[WR_REPORT_COUNTED_N] = {'j', 'c', 'f', 'b', 'p'};

static int minute_index(int64_t ms)
{
    return (int)((wr_report_floor_minute(ms) - wr_report_day(ms) * WR_REPORT_DAY_MS) /
                 WR_REPORT_MINUTE_MS);
}

char *wr_report_field_sample(char *buf, int64_t minute_ms, bool end)
{
    snprintf(buf, WR_REPORT_FIELD_MAX, "%c%d", end ? 'e' : 's', minute_index(minute_ms));
    return buf;
}

char *wr_report_field_counted(char *buf, int64_t minute_ms, wr_report_counted_t c)
{
    snprintf(buf, WR_REPORT_FIELD_MAX, "%d:%c", minute_index(minute_ms),
             counted_letter[c < WR_REPORT_COUNTED_N ? c : 0]);
    return buf;
}

char *wr_report_field_wait(char *buf, int64_t minute_ms, uint32_t bucket)
{
    snprintf(buf, WR_REPORT_FIELD_MAX, "%d:w%u", minute_index(minute_ms), bucket);
    return buf;
}

/* ---- the report being built ---- */

enum { C_CONSUMED, C_EXPIRED, C_LEFT, C_REJECTED, C_ABANDONED, C_RETURNED, C_N };

typedef struct {
    uint32_t bucket, count;
} hbin_t;

typedef struct {
    uint64_t counted[WR_REPORT_COUNTED_N];
    uint64_t c[C_N];
    uint64_t admitted;
    hbin_t *bins; /* sparse wait histogram */
    uint32_t nbins, capbins;
    bool has_gauges;
    uint64_t waiting, away;
    double rate;
} row_t;

typedef struct {
    wr_report_sample_t s;
    bool end;
} samp_t;

struct wr_report {
    char queue[128];
    int64_t from, to, first;
    size_t n;
    row_t *rows;
    samp_t *samples;
    size_t ns, caps;
    bool has_live, done;
    wr_report_sample_t live;
};

wr_report_t *wr_report_new(const char *queue, int64_t from_ms, int64_t to_ms, int64_t first_ms)
{
    if (!queue || from_ms > to_ms || from_ms % WR_REPORT_MINUTE_MS != 0 ||
        to_ms % WR_REPORT_MINUTE_MS != 0 ||
        (to_ms - from_ms) / WR_REPORT_MINUTE_MS > WR_REPORT_MINUTE_MAX)
        return NULL;
    wr_report_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    snprintf(r->queue, sizeof r->queue, "%s", queue);
    r->from = from_ms;
    r->to = to_ms;
    r->first = first_ms >= 0 ? wr_report_floor_minute(first_ms) : -1;
    r->n = (size_t)((to_ms - from_ms) / WR_REPORT_MINUTE_MS);
    r->rows = calloc(r->n ? r->n : 1, sizeof *r->rows);
    if (!r->rows) {
        free(r);
        return NULL;
    }
    return r;
}

void wr_report_free(wr_report_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->rows[i].bins);
    free(r->rows);
    free(r->samples);
    free(r);
}

/* The row of minute start ms, or NULL outside the range. */
static row_t *row_at(wr_report_t *r, int64_t ms)
{
    if (ms < r->from || ms >= r->to)
        return NULL;
    return &r->rows[(ms - r->from) / WR_REPORT_MINUTE_MS];
}

static void add_bin(row_t *row, uint32_t bucket, uint64_t count)
{
    if (count > UINT32_MAX)
        count = UINT32_MAX;
    for (uint32_t i = 0; i < row->nbins; i++)
        if (row->bins[i].bucket == bucket) {
            row->bins[i].count += (uint32_t)count;
            row->admitted += count;
            return;
        }
    size_t cap = row->capbins;
    hbin_t *b = wr_array_grow(row->bins, &cap, (size_t)row->nbins + 1, sizeof *b, 8, false);
    if (!b)
        return;
    row->bins = b;
    row->capbins = (uint32_t)cap;
    row->bins[row->nbins++] = (hbin_t){bucket, (uint32_t)count};
    row->admitted += count;
}

static void add_sample(wr_report_t *r, const wr_report_sample_t *s, bool end)
{
    samp_t *a = wr_array_grow(r->samples, &r->caps, r->ns + 1, sizeof *a, 64, false);
    if (!a)
        return;
    r->samples = a;
    r->samples[r->ns++] = (samp_t){*s, end};
}

void wr_report_feed(wr_report_t *r, int64_t day, const char *key, const char *value)
{
    if (!r || !key || !value || r->done)
        return;
    char *end = NULL;
    if (key[0] == 's' || key[0] == 'e') {
        long mi = strtol(key + 1, &end, 10);
        wr_report_sample_t s;
        if (*end != '\0' || mi < 0 || mi >= 1440 || !wr_report_sample_parse(value, &s))
            return;
        add_sample(r, &s, key[0] == 'e');
        return;
    }
    long mi = strtol(key, &end, 10);
    if (end == key || *end != ':' || mi < 0 || mi >= 1440)
        return;
    row_t *row = row_at(r, day * WR_REPORT_DAY_MS + mi * WR_REPORT_MINUTE_MS);
    char *vend = NULL;
    long long v = strtoll(value, &vend, 10);
    if (!row || vend == value || *vend != '\0' || v <= 0)
        return;
    const char *f = end + 1;
    if (f[0] == 'w') {
        char *bend = NULL;
        unsigned long b = strtoul(f + 1, &bend, 10);
        if (bend != f + 1 && *bend == '\0' && b < WR_REPORT_BUCKETS)
            add_bin(row, (uint32_t)b, (uint64_t)v);
        return;
    }
    for (int c = 0; c < WR_REPORT_COUNTED_N; c++)
        if (f[0] == counted_letter[c] && f[1] == '\0')
            row->counted[c] += (uint64_t)v;
}

void wr_report_set_live(wr_report_t *r, const wr_report_sample_t *live)
{
    if (!r)
        return;
    r->has_live = live != NULL;
    if (live)
        r->live = *live;
}

static int cmp_samp(const void *a, const void *b)
{
    const samp_t *x = a, *y = b;
    if (x->s.t_ms != y->s.t_ms)
        return x->s.t_ms < y->s.t_ms ? -1 : 1;
    return (int)x->end - (int)y->end;
}

static void counters_of(const wr_report_sample_t *s, uint64_t out[C_N])
{
    out[C_CONSUMED] = s->consumed, out[C_EXPIRED] = s->expired, out[C_LEFT] = s->left;
    out[C_REJECTED] = s->rejected_full, out[C_ABANDONED] = s->abandoned;
    out[C_RETURNED] = s->returned;
}

/* The change from a to b into the row of a's minute. */
static void add_change(wr_report_t *r, const wr_report_sample_t *a, const wr_report_sample_t *b)
{
    row_t *row = row_at(r, wr_report_floor_minute(a->t_ms));
    if (!row)
        return;
    uint64_t x[C_N], y[C_N];
    counters_of(a, x);
    counters_of(b, y);
    for (int c = 0; c < C_N; c++)
        row->c[c] += y[c] >= x[c] ? y[c] - x[c] : y[c];
}

/* Derives the counters and gauges from the samples (once). */
static void finish(wr_report_t *r)
{
    if (r->done)
        return;
    r->done = true;
    if (r->ns > 1)
        qsort(r->samples, r->ns, sizeof *r->samples, cmp_samp);
    /* the queue's first sample starts from zero when the range reaches
     * back to the queue's first minute (so the first sample read is its
     * first ever: a queue is sampled once busy, and a quiet one changes
     * nothing of the sampled counters) */
    if (r->ns > 0 && r->first >= 0 && r->from <= r->first) {
        wr_report_sample_t zero = {0};
        zero.t_ms = r->first;
        add_change(r, &zero, &r->samples[0].s);
    }
    for (size_t i = 0; i + 1 < r->ns; i++)
        add_change(r, &r->samples[i].s, &r->samples[i + 1].s);
    if (r->ns > 0 && r->has_live)
        add_change(r, &r->samples[r->ns - 1].s, &r->live);
    else if (r->ns == 0 && r->has_live && r->first >= 0) {
        wr_report_sample_t zero = {0};
        zero.t_ms = r->first;
        add_change(r, &zero, &r->live);
    }
    /* the gauges at each minute's end E: the current minute's are now's;
     * else the sample taken at the next minute's start (t in [E, E + 1
     * min)); else the last one before E (no sample since: the queue was
     * quiet, nothing moved); else, never sampled, now's; zero before the
     * queue's first minute */
    size_t j = 0;
    for (size_t i = 0; i < r->n; i++) {
        int64_t end = r->from + (int64_t)(i + 1) * WR_REPORT_MINUTE_MS;
        while (j < r->ns && r->samples[j].s.t_ms < end)
            j++;
        row_t *row = &r->rows[i];
        const wr_report_sample_t *g = NULL;
        if (r->first >= 0 ? end <= r->first : (r->ns == 0 || r->samples[0].s.t_ms >= end))
            continue; /* before the queue's report began */
        if (r->has_live && end > r->live.t_ms)
            g = &r->live; /* the current minute (or later): now */
        else if (j < r->ns && r->samples[j].s.t_ms < end + WR_REPORT_MINUTE_MS)
            g = &r->samples[j].s;
        else if (j > 0)
            g = &r->samples[j - 1].s;
        else if (r->has_live)
            g = &r->live;
        else if (r->ns > 0)
            g = &r->samples[0].s;
        if (!g)
            continue;
        row->has_gauges = true;
        row->waiting = g->waiting;
        row->away = g->away;
        row->rate = g->rate;
    }
}

/* Percentile p of row's histogram, -1 when empty. */
static int64_t row_pct(const row_t *row, double p)
{
    if (row->admitted == 0)
        return -1;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)row->admitted);
    if (rank < 1)
        rank = 1;
    /* the bins in bucket order: few per minute, a selection walk */
    uint64_t acc = 0;
    uint32_t last = 0;
    bool have = false;
    while (acc < rank) {
        uint32_t best = UINT32_MAX;
        uint64_t cnt = 0;
        for (uint32_t i = 0; i < row->nbins; i++) {
            uint32_t b = row->bins[i].bucket;
            if ((!have || b > last) && (best == UINT32_MAX || b < best)) {
                best = b;
                cnt = row->bins[i].count;
            }
        }
        if (best == UINT32_MAX)
            break;
        acc += cnt;
        last = best;
        have = true;
    }
    return have ? wr_report_bucket_ms(last) : -1;
}

/* The columns, in the answer's order. */
enum {
    K_AT,
    K_JOINED,
    K_ADMITTED,
    K_CONSUMED,
    K_EXPIRED,
    K_LEFT,
    K_ABANDONED,
    K_RETURNED,
    K_REJECTED,
    K_CHALLENGE,
    K_FAILOPEN,
    K_BYPASS,
    K_PUSH,
    K_WAITING,
    K_AWAY,
    K_RATE,
    K_P50,
    K_P90,
    K_P99,
    K_N
};
static const char *const col_name[K_N] = {
    "at",        "joined",    "admitted",      "consumed",     "expired",
    "left",      "abandoned", "returned",      "rejectedFull", "challengeFailed",
    "failOpen",  "bypass",    "pushDelivered", "waiting",      "away",
    "admitRate", "waitP50Ms", "waitP90Ms",     "waitP99Ms"};
#define K_FIRST_COUNTER K_JOINED
#define K_LAST_COUNTER  K_PUSH

/* Row i as numbers: v[k] (integers), rate, and which are null. */
static void row_values(const wr_report_t *r, size_t i, int64_t v[K_N], double *rate, bool null[K_N])
{
    const row_t *row = &r->rows[i];
    memset(null, 0, K_N * sizeof *null);
    v[K_AT] = r->from + (int64_t)i * WR_REPORT_MINUTE_MS;
    v[K_JOINED] = (int64_t)row->counted[WR_REPORT_JOINED];
    v[K_ADMITTED] = (int64_t)row->admitted;
    v[K_CONSUMED] = (int64_t)row->c[C_CONSUMED];
    v[K_EXPIRED] = (int64_t)row->c[C_EXPIRED];
    v[K_LEFT] = (int64_t)row->c[C_LEFT];
    v[K_ABANDONED] = (int64_t)row->c[C_ABANDONED];
    v[K_RETURNED] = (int64_t)row->c[C_RETURNED];
    v[K_REJECTED] = (int64_t)row->c[C_REJECTED];
    v[K_CHALLENGE] = (int64_t)row->counted[WR_REPORT_CHALLENGE_FAILED];
    v[K_FAILOPEN] = (int64_t)row->counted[WR_REPORT_FAIL_OPEN];
    v[K_BYPASS] = (int64_t)row->counted[WR_REPORT_BYPASS];
    v[K_PUSH] = (int64_t)row->counted[WR_REPORT_PUSH_DELIVERED];
    v[K_WAITING] = row->has_gauges ? (int64_t)row->waiting : 0;
    v[K_AWAY] = row->has_gauges ? (int64_t)row->away : 0;
    *rate = row->has_gauges ? row->rate : 0;
    v[K_RATE] = 0;
    static const double pct[3] = {50, 90, 99};
    for (int k = 0; k < 3; k++) {
        v[K_P50 + k] = row_pct(row, pct[k]);
        null[K_P50 + k] = v[K_P50 + k] < 0;
    }
}

static json_t *rate_json(double rate)
{
    if (rate == floor(rate) && fabs(rate) < 9e15)
        return json_integer((json_int_t)rate);
    return json_real(rate);
}

json_t *wr_report_json(wr_report_t *r)
{
    if (!r)
        return NULL;
    finish(r);
    json_t *minutes = json_array();
    json_t *totals = json_object();
    json_t *out = json_object();
    if (!minutes || !totals || !out)
        goto fail;
    int64_t sum[K_N] = {0};
    for (size_t i = 0; i < r->n; i++) {
        int64_t v[K_N];
        double rate;
        bool null[K_N];
        row_values(r, i, v, &rate, null);
        json_t *m = json_object();
        if (!m || json_array_append_new(minutes, m) != 0)
            goto fail;
        for (int k = 0; k < K_N; k++) {
            json_t *x = k == K_RATE ? rate_json(rate)
                        : null[k]   ? json_null()
                                    : json_integer((json_int_t)v[k]);
            if (json_object_set_new(m, col_name[k], x) != 0)
                goto fail;
            if (k >= K_FIRST_COUNTER && k <= K_LAST_COUNTER)
                sum[k] += v[k];
        }
    }
    for (int k = K_FIRST_COUNTER; k <= K_LAST_COUNTER; k++)
        json_object_set_new(totals, col_name[k], json_integer((json_int_t)sum[k]));
    json_object_set_new(totals, "noShows", json_integer((json_int_t)sum[K_EXPIRED]));
    json_object_set_new(out, "queue", json_string(r->queue));
    json_object_set_new(out, "from", json_integer((json_int_t)r->from));
    json_object_set_new(out, "to", json_integer((json_int_t)r->to));
    json_object_set_new(out, "minutes", minutes);
    json_object_set_new(out, "totals", totals);
    return out;
fail:
    json_decref(minutes);
    json_decref(totals);
    json_decref(out);
    return NULL;
}

char *wr_report_csv(wr_report_t *r, size_t *len)
{
    if (!r || !len)
        return NULL;
    finish(r);
    size_t cap = 256 + r->n * (K_N * 21 + 32);
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    size_t o = 0;
    for (int k = 0; k < K_N; k++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", k ? "," : "", col_name[k]);
    o += (size_t)snprintf(buf + o, cap - o, "\r\n");
    for (size_t i = 0; i < r->n; i++) {
        int64_t v[K_N];
        double rate;
        bool null[K_N];
        row_values(r, i, v, &rate, null);
        for (int k = 0; k < K_N; k++) {
            const char *sep = k ? "," : "";
            if (k == K_RATE)
                o += (size_t)snprintf(buf + o, cap - o, "%s%.10g", sep, rate);
            else if (null[k])
                o += (size_t)snprintf(buf + o, cap - o, "%s", sep);
            else
                o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, sep, v[k]);
        }
        o += (size_t)snprintf(buf + o, cap - o, "\r\n");
    }
    *len = o;
    return buf;
}
