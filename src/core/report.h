/*
 * report.h - the sale's report (docs/API.md 1.3, "The sale's report"):
 * the pure part. Minute rounding, the wait histogram's buckets and
 * nearest-rank percentiles, the names and values of what the store keeps
 * per queue per day, and the answer (JSON and CSV) built from them. Pure
 * (jansson only); one thread.
 *
 * What the store keeps (one map per queue per day; Redis: the hash
 * wr:{q}:report:<day>, day = floor(epoch ms / 86,400,000)); each field is
 * keyed by the minute's index in its day (0..1439), "mi":
 *   "s<mi>"       a sample of the queue's store-wide counters and gauges,
 *                 taken at the start of the minute (the first instance to
 *                 write it wins: one report per queue, whatever the number
 *                 of instances): wr_report_sample_t as text
 *   "e<mi>"       the last sample of a deleted queue (taken just before
 *                 its delete, in minute mi)
 *   "<mi>:<c>"    a count the instances add to (wr_report_counted_t, the
 *                 letter of wr_report_counted_letter)
 *   "<mi>:w<b>"   people admitted in minute mi whose wait fell in bucket b
 *                 (wr_report_bucket)
 * A minute's counters are the change of the samples from the minute's
 * sample to the next one (samples are kept in time order; a counter that
 * went down is a queue created again: the new value counts); the gauges
 * (waiting, away, admitRate) at the minute's end are the next minute's
 * sample's, else the last sample's before (a quiet queue is not sampled:
 * nothing moves); the current minute's come from the live stats. admitted is the sum of
 * the wait histogram (exact per minute, and null percentiles exactly when
 * nobody was admitted).
 */
#ifndef WR_REPORT_H
#define WR_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WR_REPORT_MINUTE_MS  60000LL
#define WR_REPORT_DAY_MS     86400000LL
#define WR_REPORT_DAYS_MAX   3650
#define WR_REPORT_MINUTE_MAX 44640 /* minutes in one answer, at most: 31 days */
#define WR_REPORT_FIELD_MAX  24    /* bytes of a field name, NUL included */
#define WR_REPORT_SAMPLE_MAX 256   /* bytes of a sample's text, NUL included */

/* Epoch ms rounded down / up to a minute's start. */
int64_t wr_report_floor_minute(int64_t ms);
int64_t wr_report_ceil_minute(int64_t ms);
/* The day of epoch ms (floor(ms / WR_REPORT_DAY_MS)). */
int64_t wr_report_day(int64_t ms);

/* Counts the instances add to the store (they happen on an instance, not in
 * a store operation), in the order of the answer. */
typedef enum {
    WR_REPORT_JOINED = 0,       /* a join that got a place (not a repeat, not a refusal) */
    WR_REPORT_CHALLENGE_FAILED, /* a join refused for a missing or wrong challenge */
    WR_REPORT_FAIL_OPEN,        /* a fail-open pass given while the store was unreachable */
    WR_REPORT_BYPASS,           /* a request let through by a bypass rule */
    WR_REPORT_PUSH_DELIVERED,   /* a Web Push delivered */
    WR_REPORT_COUNTED_N
} wr_report_counted_t;

/* The wait histogram: bucket b holds waits (ms) in [lo(b), hi(b)]. Exact
 * below 128 ms; above, 64 buckets per power of two (a bucket is at most
 * 1/64 of its values wide), and its value is its middle: within 0.8%.
 * Waits below 0 count as 0; above 2^40 ms as 2^40. At most
 * WR_REPORT_BUCKETS buckets. */
#define WR_REPORT_BUCKETS 2304
uint32_t wr_report_bucket(int64_t wait_ms);
int64_t wr_report_bucket_ms(uint32_t b); /* the bucket's value (its middle) */

/* Nearest rank: the value of the ceil(p / 100 * N)-th smallest of the N
 * waits counted in hist (hist[b] = how many fell in bucket b, b <
 * WR_REPORT_BUCKETS); -1 when N is 0. p in (0, 100]. */
int64_t wr_report_percentile(const uint32_t *hist, double p);

/* The store's sample of a queue (see above). */
typedef struct {
    int64_t t_ms; /* when it was taken (store clock, epoch ms) */
    uint64_t consumed, expired, left, rejected_full, abandoned, returned;
    uint64_t waiting, away;
    double rate; /* the admission rate in use, users/s */
} wr_report_sample_t;

/* Writes s as text into buf (cap >= WR_REPORT_SAMPLE_MAX): the numbers in
 * the order of the struct, comma-separated. Returns buf. */
char *wr_report_sample_text(const wr_report_sample_t *s, char *buf, size_t cap);
/* Parses a sample's text; false when it is not one. */
bool wr_report_sample_parse(const char *text, wr_report_sample_t *out);

/* The field names of minute minute_ms (any ms in it) in its day's map;
 * buf of WR_REPORT_FIELD_MAX bytes. Return buf. */
char *wr_report_field_sample(char *buf, int64_t minute_ms, bool end);
char *wr_report_field_counted(char *buf, int64_t minute_ms, wr_report_counted_t c);
char *wr_report_field_wait(char *buf, int64_t minute_ms, uint32_t bucket);

/* The answer being built for a range [from_ms, to_ms) of minute starts
 * (from < to... from == to gives no minute; at most WR_REPORT_MINUTE_MAX
 * minutes). */
typedef struct wr_report wr_report_t;

/* A new report of queue (copied) over [from_ms, to_ms) (minute starts);
 * first_ms: the first minute of the queue's report (its counters started
 * at 0 then), -1 unknown. NULL when out of memory or the range is bad. */
wr_report_t *wr_report_new(const char *queue, int64_t from_ms, int64_t to_ms, int64_t first_ms);
void wr_report_free(wr_report_t *r);

/* Feeds one field of the map of day `day` (its name and value as the store
 * keeps them); fields that are not the report's, or out of the range, are
 * ignored. */
void wr_report_feed(wr_report_t *r, int64_t day, const char *key, const char *value);

/* The live state of a queue that exists (its stats now, the store's time
 * in t_ms), or NULL: a deleted queue (its "e" sample ends it). Call after
 * the feeds, before rendering. */
void wr_report_set_live(wr_report_t *r, const wr_report_sample_t *live);

/* The answer: {"queue","from","to","minutes":[{...}],"totals":{...}}
 * (docs/API.md). New reference (caller decrefs) or NULL when out of
 * memory. */
json_t *wr_report_json(wr_report_t *r);

/* The CSV: a header row, then one row a minute, the columns of
 * wr_report_json's minutes in order, an empty cell for null; "\r\n"
 * line ends. Caller frees; *len its length. NULL when out of memory. */
char *wr_report_csv(wr_report_t *r, size_t *len);

#endif
