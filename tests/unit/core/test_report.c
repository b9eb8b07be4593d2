/*
 * test_report.c - the sale's report, its pure part (core/report.h):
 * minute rounding, the wait buckets and nearest-rank percentiles, the
 * answer built from a day's fields (counters from samples, gauges, zeros),
 * and the CSV's shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unit_main.h"

#include "core/report.h"

#define MIN WR_REPORT_MINUTE_MS

static void test_minute_rounding(void **state)
{
    (void)state;
    assert_int_equal(wr_report_floor_minute(120000), 120000);
    assert_int_equal(wr_report_floor_minute(179999), 120000);
    assert_int_equal(wr_report_ceil_minute(120000), 120000);
    assert_int_equal(wr_report_ceil_minute(120001), 180000);
    assert_int_equal(wr_report_day(WR_REPORT_DAY_MS - 1), 0);
    assert_int_equal(wr_report_day(WR_REPORT_DAY_MS), 1);
}

static void test_buckets_and_percentiles(void **state)
{
    (void)state;
    for (int64_t v = 0; v < 128; v++)
        assert_int_equal(wr_report_bucket_ms(wr_report_bucket(v)), v); /* exact below 128 ms */
    for (int64_t v = 128; v < 100000000; v = v * 3 / 2 + 7) {
        int64_t got = wr_report_bucket_ms(wr_report_bucket(v));
        assert_true(llabs(got - v) * 128 <= v); /* within 1/128 */
        assert_true(wr_report_bucket(v) < WR_REPORT_BUCKETS);
    }
    uint32_t *h = calloc(WR_REPORT_BUCKETS, sizeof *h);
    assert_int_equal(wr_report_percentile(h, 50), -1);
    /* 1..10 ms: p50 = the 5th, p90 = the 9th, p99 = the 10th */
    for (int v = 1; v <= 10; v++)
        h[wr_report_bucket(v)]++;
    assert_int_equal(wr_report_percentile(h, 50), 5);
    assert_int_equal(wr_report_percentile(h, 90), 9);
    assert_int_equal(wr_report_percentile(h, 99), 10);
    free(h);
}

static void test_answer_from_fields(void **state)
{
    (void)state;
    int64_t day = 20000, t0 = day * WR_REPORT_DAY_MS;
    wr_report_t *r = wr_report_new("q", t0, t0 + 3 * MIN, t0);
    assert_non_null(r);
    char f[WR_REPORT_FIELD_MAX], v[WR_REPORT_SAMPLE_MAX];
    wr_report_sample_t s0 = {t0 + 5, 1, 0, 2, 1, 0, 0, 4, 1, 2.5};
    wr_report_feed(r, day, wr_report_field_sample(f, t0, false),
                   wr_report_sample_text(&s0, v, sizeof v));
    wr_report_feed(r, day, wr_report_field_counted(f, t0, WR_REPORT_JOINED), "7");
    wr_report_feed(r, day, wr_report_field_wait(f, t0, wr_report_bucket(40)), "2");
    wr_report_sample_t live = {t0 + 2 * MIN + 10, 3, 1, 2, 1, 0, 0, 0, 0, 2.5};
    wr_report_set_live(r, &live);
    json_t *o = wr_report_json(r);
    assert_non_null(o);
    json_t *m = json_object_get(o, "minutes");
    assert_int_equal(json_array_size(m), 3);
    json_t *m0 = json_array_get(m, 0);
    assert_int_equal(json_integer_value(json_object_get(m0, "joined")), 7);
    assert_int_equal(json_integer_value(json_object_get(m0, "admitted")), 2);
    assert_int_equal(json_integer_value(json_object_get(m0, "waitP50Ms")), 40);
    /* first minute starts from zero: left 2, rejectedFull 1; consumed 3 (to live) */
    assert_int_equal(json_integer_value(json_object_get(m0, "left")), 2);
    assert_int_equal(json_integer_value(json_object_get(m0, "consumed")), 3);
    assert_int_equal(json_integer_value(json_object_get(m0, "expired")), 1);
    json_t *m1 = json_array_get(m, 1);
    assert_int_equal(json_integer_value(json_object_get(m1, "joined")), 0);
    assert_true(json_is_null(json_object_get(m1, "waitP99Ms")));
    json_t *t = json_object_get(o, "totals");
    assert_int_equal(json_integer_value(json_object_get(t, "noShows")), 1);
    assert_int_equal(json_integer_value(json_object_get(t, "joined")), 7);
    json_decref(o);
    size_t len = 0;
    char *csv = wr_report_csv(r, &len);
    assert_non_null(csv);
    assert_int_equal(strncmp(csv,
                             "at,joined,admitted,consumed,expired,left,abandoned,returned,"
                             "rejectedFull,challengeFailed,failOpen,bypass,pushDelivered,"
                             "waiting,away,admitRate,waitP50Ms,waitP90Ms,waitP99Ms\r\n",
                             172),
                     0);
    int rows = 0;
    for (size_t i = 0; i < len; i++)
        rows += csv[i] == '\n';
    assert_int_equal(rows, 4);
    assert_non_null(strstr(csv, ",2.5,,,\r\n")); /* a minute without admissions: empty cells */
    free(csv);
    wr_report_free(r);
    assert_null(wr_report_new("q", t0 + 1, t0 + MIN, -1)); /* not minute starts */
}

#define TESTS(X)                                                                                   \
    X(test_minute_rounding)                                                                        \
    X(test_buckets_and_percentiles)                                                                \
    X(test_answer_from_fields)
WR_UNIT_MAIN(NULL, NULL, TESTS)
