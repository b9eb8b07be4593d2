/*
 * test_history.c - the one-second ring of a queue's history: one sample a
 * second (the last of the second wins), the ring's wrap, rates from the
 * totals (null at the start, after a gap and when a total goes down), the
 * since filter, and autotune's columns (rate in use, latency, target).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "core/history.h"
#include "unit_main.h"

static void test_samples_and_rates(void **state)
{
    (void)state;
    wr_history_t *h = wr_history_new();
    assert_non_null(h);
    wr_history_add(h, 100, 5, 0, 0, 0);
    wr_history_add(h, 100, 6, 1, 1, 0); /* same second: replaces */
    wr_history_add(h, 101, 4, 2, 3, 1);
    wr_history_add(h, 99, 9, 9, 9, 9);   /* clock stepped back: ignored */
    wr_history_add(h, 110, 4, 2, 13, 1); /* a 9 s gap */
    wr_history_add(h, 111, 0, 0, 0, 0);  /* totals went down: queue recreated */
    wr_history_add(h, 113, 0, 0, 4, 2);
    assert_int_equal(wr_history_len(h), 5);
    json_t *o = wr_history_json(h, 0);
    assert_non_null(o);
    char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, "{\"active\":[1,2,2,0,0],"
                           "\"admittedPerSecond\":[null,2.0,null,null,2.0],"
                           "\"consumedPerSecond\":[null,1.0,null,null,1.0],"
                           "\"intervalSeconds\":1,"
                           "\"t\":[100000,101000,110000,111000,113000],"
                           "\"waiting\":[6,4,4,0,0]}");
    free(s);
    json_decref(o);

    o = wr_history_json(h, 110); /* after second 110 only; rates still use the one before */
    s = json_dumps(json_object_get(o, "t"), JSON_COMPACT);
    assert_string_equal(s, "[111000,113000]");
    free(s);
    s = json_dumps(json_object_get(o, "admittedPerSecond"), JSON_COMPACT);
    assert_string_equal(s, "[null,2.0]");
    free(s);
    json_decref(o);
    wr_history_free(h);
}

static void test_ring_wraps(void **state)
{
    (void)state;
    wr_history_t *h = wr_history_new();
    for (int64_t t = 1; t <= WR_HISTORY_SECONDS + 10; t++)
        wr_history_add(h, t, (uint64_t)t, 0, (uint64_t)t, 0);
    assert_int_equal(wr_history_len(h), WR_HISTORY_SECONDS);
    json_t *o = wr_history_json(h, 0);
    json_t *t = json_object_get(o, "t");
    assert_int_equal(json_array_size(t), WR_HISTORY_SECONDS);
    assert_int_equal(json_integer_value(json_array_get(t, 0)), 11 * 1000);
    assert_int_equal(json_integer_value(json_array_get(t, WR_HISTORY_SECONDS - 1)),
                     (WR_HISTORY_SECONDS + 10) * 1000);
    /* the oldest held sample has none before it */
    assert_true(json_is_null(json_array_get(json_object_get(o, "admittedPerSecond"), 0)));
    assert_true(json_real_value(json_array_get(json_object_get(o, "admittedPerSecond"), 1)) == 1.0);
    assert_true(WR_HISTORY_SECONDS >= 15 * 60);
    json_decref(o);
    wr_history_free(h);
}

/* Autotune's columns: present only when a sample answered has autotune;
 * null where a sample has none, the rate is not known or no report is
 * fresh; the latency kept to the microsecond. */
static void test_autotune_columns(void **state)
{
    (void)state;
    wr_history_t *h = wr_history_new();
    assert_non_null(h);
    wr_history_add(h, 100, 5, 0, 0, 0);
    wr_history_add_tuned(h, 101, 5, 0, 0, 0, &(wr_history_tune_t){40, 450, 500});
    wr_history_add_tuned(h, 102, 5, 0, 0, 0, &(wr_history_tune_t){20, -1, 500});
    wr_history_add_tuned(h, 103, 5, 0, 0, 0, &(wr_history_tune_t){0, 812.3, 500});
    wr_history_add_tuned(h, 104, 5, 0, 0, 0, &(wr_history_tune_t){37.5, 3600000, 400});
    wr_history_add_tuned(h, 105, 5, 0, 0, 0, &(wr_history_tune_t){9, 1, 0}); /* no autotune */
    wr_history_add_tuned(h, 106, 5, 0, 0, 0, &(wr_history_tune_t){9, 1, 300});
    wr_history_add(h, 106, 5, 0, 0, 0); /* the same second without: replaced whole */
    assert_int_equal(wr_history_len(h), 7);
    json_t *o = wr_history_json(h, 0);
    assert_non_null(o);
    char *s = json_dumps(json_object_get(o, "rateInUse"), JSON_COMPACT);
    assert_string_equal(s, "[null,40,20,null,37.5,null,null]");
    free(s);
    s = json_dumps(json_object_get(o, "targetMs"), JSON_COMPACT);
    assert_string_equal(s, "[null,500,500,500,400,null,null]");
    free(s);
    json_t *lat = json_object_get(o, "latencyMs");
    assert_int_equal(json_array_size(lat), 7);
    assert_true(json_is_null(json_array_get(lat, 0)));
    assert_int_equal(json_integer_value(json_array_get(lat, 1)), 450);
    assert_true(json_is_null(json_array_get(lat, 2))); /* none fresh */
    assert_true(json_real_value(json_array_get(lat, 3)) == 812.3);
    assert_int_equal(json_integer_value(json_array_get(lat, 4)), 3600000);
    assert_true(json_is_null(json_array_get(lat, 5)));
    assert_true(json_is_null(json_array_get(lat, 6)));
    assert_int_equal(json_array_size(json_object_get(o, "t")), 7);
    json_decref(o);

    /* only samples without autotune answered: the columns are left out */
    o = wr_history_json(h, 104);
    assert_int_equal(json_array_size(json_object_get(o, "t")), 2);
    assert_null(json_object_get(o, "rateInUse"));
    assert_null(json_object_get(o, "latencyMs"));
    assert_null(json_object_get(o, "targetMs"));
    json_decref(o);
    o = wr_history_json(h, 103);
    s = json_dumps(json_object_get(o, "rateInUse"), JSON_COMPACT);
    assert_string_equal(s, "[37.5,null,null]");
    free(s);
    json_decref(o);

    /* the ring keeps them through its wrap, in its fixed allocation */
    for (int64_t t = 200; t < 200 + WR_HISTORY_SECONDS + 5; t++)
        wr_history_add_tuned(h, t, 0, 0, 0, 0, &(wr_history_tune_t){(double)t, (double)t, 100});
    assert_int_equal(wr_history_len(h), WR_HISTORY_SECONDS);
    o = wr_history_json(h, 0);
    json_t *ru = json_object_get(o, "rateInUse");
    assert_int_equal(json_array_size(ru), WR_HISTORY_SECONDS);
    assert_int_equal(json_integer_value(json_array_get(ru, 0)), 205);
    assert_int_equal(
        json_integer_value(json_array_get(json_object_get(o, "latencyMs"), WR_HISTORY_SECONDS - 1)),
        200 + WR_HISTORY_SECONDS + 4);
    json_decref(o);
    wr_history_free(h);
}

#define TESTS(X)                                                                                   \
    X(test_samples_and_rates)                                                                      \
    X(test_ring_wraps)                                                                             \
    X(test_autotune_columns)
WR_UNIT_MAIN(NULL, NULL, TESTS)
