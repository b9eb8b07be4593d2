/*
 * test_metrics.c - Prometheus rendering (hand-written expected text),
 * histogram buckets, series without a cap (K44), remove_matching and remove.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "unit_main.h"

#define DROPPED_TAIL(n)                                                                            \
    "# HELP waitroom_metrics_dropped_series_total Metric updates dropped (a label string too "     \
    "long, an update of another type, out of memory; each logged).\n"                              \
    "# TYPE waitroom_metrics_dropped_series_total counter\n"                                       \
    "waitroom_metrics_dropped_series_total " #n "\n"

static void assert_render(const wr_metrics_t *m, const char *expect)
{
    size_t len = 0;
    char *s = wr_metrics_render(m, &len);
    assert_non_null(s);
    assert_int_equal(len, strlen(s));
    assert_string_equal(s, expect);
    free(s);
}

static void test_render_exact(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    assert_non_null(m);
    wr_metrics_describe(m, "wr_requests_total", WR_METRIC_COUNTER, "HTTP requests.");
    wr_metrics_describe(m, "wr_waiting", WR_METRIC_GAUGE, "Users in line.");
    wr_metrics_describe(m, "wr_store_seconds", WR_METRIC_HISTOGRAM, "Store latency.");
    wr_metrics_describe(m, "wr_requests_total", WR_METRIC_GAUGE, "again"); /* no-op */

    /* updates in an order different from the declarations */
    wr_metrics_set(m, "wr_waiting", "queue=\"shop\"", 12);
    wr_metrics_inc(m, "wr_requests_total", "route=\"join\",status=\"200\"", 2);
    wr_metrics_inc(m, "wr_requests_total", "route=\"status\",status=\"200\"", 1);
    wr_metrics_inc(m, "wr_requests_total", "route=\"join\",status=\"200\"", 1);
    wr_metrics_set(m, "wr_waiting", "queue=\"b\"", 2.5);
    wr_metrics_set(m, "wr_waiting", "queue=\"c\"", 0.1);
    wr_metrics_set(m, "wr_waiting", "queue=\"c\"", -3);
    /* exact binary fractions: 2^-12, 2^-8, 0.25 (a bound: le is inclusive), 4 */
    wr_metrics_observe(m, "wr_store_seconds", "op=\"join\"", 0.000244140625);
    wr_metrics_observe(m, "wr_store_seconds", "op=\"join\"", 0.00390625);
    wr_metrics_observe(m, "wr_store_seconds", "op=\"join\"", 0.25);
    wr_metrics_observe(m, "wr_store_seconds", "op=\"join\"", 4);
    wr_metrics_observe(m, "wr_store_seconds", NULL, 0.001);

    assert_render(m, "# HELP wr_requests_total HTTP requests.\n"
                     "# TYPE wr_requests_total counter\n"
                     "wr_requests_total{route=\"join\",status=\"200\"} 3\n"
                     "wr_requests_total{route=\"status\",status=\"200\"} 1\n"
                     "# HELP wr_waiting Users in line.\n"
                     "# TYPE wr_waiting gauge\n"
                     "wr_waiting{queue=\"shop\"} 12\n"
                     "wr_waiting{queue=\"b\"} 2.5\n"
                     "wr_waiting{queue=\"c\"} -3\n"
                     "# HELP wr_store_seconds Store latency.\n"
                     "# TYPE wr_store_seconds histogram\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.0005\"} 1\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.001\"} 1\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.0025\"} 1\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.005\"} 2\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.01\"} 2\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.025\"} 2\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.05\"} 2\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.1\"} 2\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.25\"} 3\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"0.5\"} 3\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"1\"} 3\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"2.5\"} 3\n"
                     "wr_store_seconds_bucket{op=\"join\",le=\"+Inf\"} 4\n"
                     "wr_store_seconds_sum{op=\"join\"} 4.254150390625\n"
                     "wr_store_seconds_count{op=\"join\"} 4\n"
                     "wr_store_seconds_bucket{le=\"0.0005\"} 0\n"
                     "wr_store_seconds_bucket{le=\"0.001\"} 1\n"
                     "wr_store_seconds_bucket{le=\"0.0025\"} 1\n"
                     "wr_store_seconds_bucket{le=\"0.005\"} 1\n"
                     "wr_store_seconds_bucket{le=\"0.01\"} 1\n"
                     "wr_store_seconds_bucket{le=\"0.025\"} 1\n"
                     "wr_store_seconds_bucket{le=\"0.05\"} 1\n"
                     "wr_store_seconds_bucket{le=\"0.1\"} 1\n"
                     "wr_store_seconds_bucket{le=\"0.25\"} 1\n"
                     "wr_store_seconds_bucket{le=\"0.5\"} 1\n"
                     "wr_store_seconds_bucket{le=\"1\"} 1\n"
                     "wr_store_seconds_bucket{le=\"2.5\"} 1\n"
                     "wr_store_seconds_bucket{le=\"+Inf\"} 1\n"
                     "wr_store_seconds_sum 0.001\n"
                     "wr_store_seconds_count 1\n" DROPPED_TAIL(0));

    assert_true(wr_metrics_get(m, "wr_requests_total", "route=\"join\",status=\"200\"") == 3);
    assert_true(wr_metrics_get(m, "wr_waiting", "queue=\"b\"") == 2.5);
    assert_true(wr_metrics_get(m, "wr_waiting", "queue=\"zzz\"") == 0);
    assert_true(wr_metrics_get(m, "nope", NULL) == 0);
    wr_metrics_free(m);
}

static void test_empty_and_implicit(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    assert_render(m, DROPPED_TAIL(0));

    /* a family used before it is described: TYPE only, help added later */
    wr_metrics_inc(m, "up_total", NULL, 1);
    wr_metrics_inc(m, "up_total", "", 4); /* "" is the same series as NULL */
    wr_metrics_set(m, "temp", NULL, 1e20);
    wr_metrics_set(m, "frac", NULL, 1.0 / 3.0);
    assert_render(m, "# TYPE up_total counter\n"
                     "up_total 5\n"
                     "# TYPE temp gauge\n"
                     "temp 1e+20\n"
                     "# TYPE frac gauge\n"
                     "frac 0.33333333333333331\n" DROPPED_TAIL(0));
    wr_metrics_describe(m, "up_total", WR_METRIC_COUNTER, "Line one\\two\nthree.");
    assert_render(m, "# HELP up_total Line one\\\\two\\nthree.\n"
                     "# TYPE up_total counter\n"
                     "up_total 5\n"
                     "# TYPE temp gauge\n"
                     "temp 1e+20\n"
                     "# TYPE frac gauge\n"
                     "frac 0.33333333333333331\n" DROPPED_TAIL(0));
    wr_metrics_free(m);
    wr_metrics_free(NULL);
}

static void test_type_mismatch_and_labels_cap(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    wr_metrics_describe(m, "c_total", WR_METRIC_COUNTER, "c");
    wr_metrics_describe(m, "g", WR_METRIC_GAUGE, "g");
    wr_metrics_describe(m, "h", WR_METRIC_HISTOGRAM, "h");
    wr_metrics_set(m, "c_total", "t=\"1\"", 7); /* allowed: a total mirrored from the store */
    wr_metrics_observe(m, "g", NULL, 0.1);      /* dropped: observe on a gauge */
    wr_metrics_inc(m, "h", NULL, 1);            /* dropped: inc on a histogram */
    wr_metrics_inc(m, "g", "k=\"v\"", 2);       /* allowed: a gauge may go up */
    wr_metrics_inc(m, "g", "k=\"v\"", 3);
    assert_true(wr_metrics_get(m, "g", "k=\"v\"") == 5);
    assert_true(wr_metrics_get(m, "c_total", "t=\"1\"") == 7);
    wr_metrics_set(m, "c_total", "t=\"1\"", -3); /* a counter is never negative */
    assert_true(wr_metrics_get(m, "c_total", "t=\"1\"") == 0);

    char labels[WR_METRICS_LABELS_MAX + 2];
    memset(labels, 'x', sizeof(labels));
    labels[WR_METRICS_LABELS_MAX] = '\0'; /* 256 bytes: kept */
    wr_metrics_inc(m, "c_total", labels, 1);
    assert_true(wr_metrics_get(m, "c_total", labels) == 1);
    labels[WR_METRICS_LABELS_MAX] = 'x'; /* 257 bytes: dropped */
    labels[WR_METRICS_LABELS_MAX + 1] = '\0';
    wr_metrics_inc(m, "c_total", labels, 1);
    assert_true(wr_metrics_get(m, "c_total", labels) == 0);

    size_t len;
    char *s = wr_metrics_render(m, &len);
    assert_non_null(strstr(s, "\nwaitroom_metrics_dropped_series_total 3\n"));
    assert_non_null(strstr(s, "\nc_total{t=\"1\"} 0\n"));
    free(s);
    wr_metrics_free(m);
}

/* K44: with 600 queues /metrics listed 215 (a fixed cap of 4096 series):
 * the table grows, every series is kept, nothing is dropped. */
static void test_series_grow_without_a_cap(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    wr_metrics_describe(m, "x_total", WR_METRIC_COUNTER, "x");
    char labels[64];
    enum { N = 20000 }; /* 600 queues x ~30 families */
    for (int i = 0; i < N; i++) {
        snprintf(labels, sizeof(labels), "queue=\"q%d\"", i % 2 ? i : -i);
        wr_metrics_inc(m, "x_total", labels, (uint64_t)i + 1);
    }
    for (int i = 0; i < N; i++) { /* all kept, each found again after the growths */
        snprintf(labels, sizeof(labels), "queue=\"q%d\"", i % 2 ? i : -i);
        assert_true(wr_metrics_get(m, "x_total", labels) == (double)i + 1);
    }
    snprintf(labels, sizeof(labels), "queue=\"q%d\"", N - 1);
    wr_metrics_inc(m, "x_total", labels, 1);
    assert_true(wr_metrics_get(m, "x_total", labels) == N + 1);
    /* a removal in the middle, then more series */
    wr_metrics_remove(m, "x_total", "queue=\"q1\"");
    wr_metrics_inc(m, "x_total", "queue=\"new\"", 1);
    assert_true(wr_metrics_get(m, "x_total", "queue=\"new\"") == 1);
    assert_true(wr_metrics_get(m, "x_total", "queue=\"q1\"") == 0);
    size_t len;
    char *s = wr_metrics_render(m, &len);
    assert_non_null(s);
    assert_non_null(strstr(s, "\nwaitroom_metrics_dropped_series_total 0\n"));
    snprintf(labels, sizeof(labels), "\nx_total{queue=\"q%d\"} %d\n", N - 1, N + 1);
    assert_non_null(strstr(s, labels));
    /* N sample lines + 2 header lines + the 3 dropped-counter lines */
    int lines = 0;
    for (const char *p = s; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, N + 2 + 3);
    free(s);
    wr_metrics_free(m);
}

/* remove: one series of one family, by its exact labels. */
static void test_remove_one(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    wr_metrics_describe(m, "w", WR_METRIC_GAUGE, "w");
    wr_metrics_describe(m, "v", WR_METRIC_GAUGE, "v");
    wr_metrics_set(m, "w", "queue=\"shop\"", 1);
    wr_metrics_set(m, "w", "queue=\"shop2\"", 2);
    wr_metrics_set(m, "v", "queue=\"shop\"", 3);
    wr_metrics_remove(m, "w", "queue=\"shop\"");
    wr_metrics_remove(m, "w", "queue=\"none\""); /* absent: nothing */
    wr_metrics_remove(m, "nope", "queue=\"shop\"");
    wr_metrics_remove(NULL, "w", NULL);
    assert_render(m, "# HELP w w\n"
                     "# TYPE w gauge\n"
                     "w{queue=\"shop2\"} 2\n"
                     "# HELP v v\n"
                     "# TYPE v gauge\n"
                     "v{queue=\"shop\"} 3\n" DROPPED_TAIL(0));
    wr_metrics_set(m, "w", "queue=\"shop\"", 4); /* back, at the end */
    assert_true(wr_metrics_get(m, "w", "queue=\"shop\"") == 4);
    wr_metrics_free(m);
}

static void test_remove_matching(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    wr_metrics_describe(m, "w", WR_METRIC_GAUGE, "w");
    wr_metrics_describe(m, "h", WR_METRIC_HISTOGRAM, "h");
    wr_metrics_set(m, "w", "queue=\"shop\"", 1);
    wr_metrics_set(m, "w", "queue=\"a\"", 2);
    wr_metrics_set(m, "w", "queue=\"shop\",x=\"1\"", 3);
    wr_metrics_set(m, "w", "queue=\"b\"", 4);
    wr_metrics_observe(m, "h", "queue=\"shop\"", 0.01);
    wr_metrics_remove_matching(m, "queue=\"shop\"");
    assert_true(wr_metrics_get(m, "w", "queue=\"shop\"") == 0);
    assert_true(wr_metrics_get(m, "w", "queue=\"a\"") == 2);
    assert_true(wr_metrics_get(m, "w", "queue=\"b\"") == 4);
    /* the tail was removed: a new series appends after the survivors */
    wr_metrics_set(m, "w", "queue=\"c\"", 5);
    /* re-creating a removed series starts from zero, at the end */
    wr_metrics_set(m, "w", "queue=\"shop\"", 9);
    assert_render(m, "# HELP w w\n"
                     "# TYPE w gauge\n"
                     "w{queue=\"a\"} 2\n"
                     "w{queue=\"b\"} 4\n"
                     "w{queue=\"c\"} 5\n"
                     "w{queue=\"shop\"} 9\n"
                     "# HELP h h\n"
                     "# TYPE h histogram\n" DROPPED_TAIL(0));
    /* removing the head and everything */
    wr_metrics_remove_matching(m, "queue=\"a\"");
    wr_metrics_remove_matching(m, "queue=");
    wr_metrics_remove_matching(m, "");   /* matches nothing, by design */
    wr_metrics_remove_matching(m, NULL); /* harmless */
    assert_render(m, "# HELP w w\n"
                     "# TYPE w gauge\n"
                     "# HELP h h\n"
                     "# TYPE h histogram\n" DROPPED_TAIL(0));
    wr_metrics_set(m, "w", "queue=\"z\"", 1);
    assert_render(m, "# HELP w w\n"
                     "# TYPE w gauge\n"
                     "w{queue=\"z\"} 1\n"
                     "# HELP h h\n"
                     "# TYPE h histogram\n" DROPPED_TAIL(0));
    wr_metrics_free(m);
}

static void test_histogram_buckets(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    wr_metrics_describe(m, "lat", WR_METRIC_HISTOGRAM, "l");
    /* one observation exactly on each bound, and one above all */
    static const double bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                    0.05,   0.1,   0.25,   0.5,   1,    2.5};
    for (size_t i = 0; i < 12; i++)
        wr_metrics_observe(m, "lat", NULL, bounds[i]);
    wr_metrics_observe(m, "lat", NULL, 2.5000001);
    wr_metrics_observe(m, "lat", NULL, 0); /* first bucket */
    assert_true(wr_metrics_get(m, "lat", NULL) == 14);
    size_t len;
    char *s = wr_metrics_render(m, &len);
    /* cumulative: bucket i holds the zero plus bounds 0..i */
    static const char *const le[] = {"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
                                     "0.05",   "0.1",   "0.25",   "0.5",   "1",    "2.5"};
    for (int i = 0; i < 12; i++) {
        char line[80];
        snprintf(line, sizeof(line), "\nlat_bucket{le=\"%s\"} %d\n", le[i], i + 2);
        if (!strstr(s, line))
            fail_msg("missing %s in %s", line, s);
    }
    assert_non_null(strstr(s, "\nlat_bucket{le=\"+Inf\"} 14\n"));
    assert_non_null(strstr(s, "\nlat_count 14\n"));
    free(s);
    wr_metrics_free(m);
}

/* A family with its own buckets; a counter set to a fractional value. */
static void test_custom_buckets_and_real_counter(void **state)
{
    (void)state;
    static const double b[] = {1, 60};
    wr_metrics_t *m = wr_metrics_new();
    assert_non_null(m);
    wr_metrics_describe_histogram(m, "w_seconds", "Waits.", b, 2);
    wr_metrics_observe(m, "w_seconds", "queue=\"q\"", 0.5);
    wr_metrics_observe(m, "w_seconds", "queue=\"q\"", 30);
    wr_metrics_observe(m, "w_seconds", "queue=\"q\"", 90);
    /* too late: the family has observations in its buckets */
    wr_metrics_describe_histogram(m, "w_seconds", "Waits.", b, 1);
    wr_metrics_describe(m, "cpu_seconds_total", WR_METRIC_COUNTER, "CPU.");
    wr_metrics_set(m, "cpu_seconds_total", NULL, 1.25);
    assert_true(wr_metrics_get(m, "cpu_seconds_total", NULL) == 1.25);
    assert_render(m, "# HELP w_seconds Waits.\n"
                     "# TYPE w_seconds histogram\n"
                     "w_seconds_bucket{queue=\"q\",le=\"1\"} 1\n"
                     "w_seconds_bucket{queue=\"q\",le=\"60\"} 2\n"
                     "w_seconds_bucket{queue=\"q\",le=\"+Inf\"} 3\n"
                     "w_seconds_sum{queue=\"q\"} 120.5\n"
                     "w_seconds_count{queue=\"q\"} 3\n"
                     "# HELP cpu_seconds_total CPU.\n"
                     "# TYPE cpu_seconds_total counter\n"
                     "cpu_seconds_total 1.25\n" DROPPED_TAIL(0));
    wr_metrics_free(m);
}

/* A ref goes straight to its series after the first update; a removal of
 * any series makes it look the series up again: a removed series comes
 * back from 0, one that stayed keeps its value, and a slot freed and taken
 * by another series is never updated through an old ref. */
static void test_refs(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    assert_non_null(m);
    wr_metrics_ref_t a = {0}, b = {0}, h = {0};
    for (int i = 0; i < 5; i++) {
        wr_metrics_inc_ref(m, &a, "t_total", "k=\"a\"", 2);
        wr_metrics_inc_ref(m, &b, "t_total", "k=\"b\"", 1);
        wr_metrics_observe_ref(m, &h, "t_seconds", "op=\"x\"", 0.002);
    }
    wr_metrics_inc(m, "t_total", "k=\"a\"", 1); /* by name: the same series */
    assert_true(wr_metrics_get(m, "t_total", "k=\"a\"") == 11);
    assert_true(wr_metrics_get(m, "t_total", "k=\"b\"") == 5);
    char *text = wr_metrics_render(m, NULL);
    assert_non_null(strstr(text, "t_seconds_count{op=\"x\"} 5\n"));
    free(text);

    /* b's series removed, its slot taken by c: a and b look theirs up again */
    wr_metrics_remove(m, "t_total", "k=\"b\"");
    wr_metrics_inc(m, "t_total", "k=\"c\"", 7);
    wr_metrics_inc_ref(m, &a, "t_total", "k=\"a\"", 1);
    wr_metrics_inc_ref(m, &b, "t_total", "k=\"b\"", 1);
    assert_true(wr_metrics_get(m, "t_total", "k=\"a\"") == 12);
    assert_true(wr_metrics_get(m, "t_total", "k=\"b\"") == 1);
    assert_true(wr_metrics_get(m, "t_total", "k=\"c\"") == 7);

    /* growth moves the slots' memory, not their numbers */
    char l[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(l, sizeof l, "n=\"%d\"", i);
        wr_metrics_inc(m, "grow_total", l, 1);
    }
    wr_metrics_inc_ref(m, &a, "t_total", "k=\"a\"", 1);
    assert_true(wr_metrics_get(m, "t_total", "k=\"a\"") == 13);
    /* NULL registry: nothing, no crash */
    wr_metrics_inc_ref(NULL, &a, "t_total", "k=\"a\"", 1);
    wr_metrics_observe_ref(NULL, &h, "t_seconds", "op=\"x\"", 1);
    wr_metrics_free(m);
}

#define TESTS(X)                                                                                   \
    X(test_refs)                                                                                   \
    X(test_custom_buckets_and_real_counter)                                                        \
    X(test_render_exact)                                                                           \
    X(test_empty_and_implicit)                                                                     \
    X(test_type_mismatch_and_labels_cap)                                                           \
    X(test_series_grow_without_a_cap)                                                              \
    X(test_remove_matching)                                                                        \
    X(test_remove_one)                                                                             \
    X(test_histogram_buckets)
WR_UNIT_MAIN(NULL, NULL, TESTS)
