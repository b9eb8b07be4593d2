/*
 * test_metric_defs.c - the table of metric families: every row is well
 * formed (a name, a help text, label names, bounds ascending), names are
 * unique, and every family renders with # HELP and # TYPE, whether it was
 * registered by its group or first used by an update (K44: a family had no
 * # HELP line).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metric_defs.h"
#include "unit_main.h"

static const char *type_name(wr_metric_type_t t)
{
    return t == WR_METRIC_COUNTER ? "counter" : t == WR_METRIC_GAUGE ? "gauge" : "histogram";
}

static void test_rows_well_formed(void **state)
{
    (void)state;
    size_t n = 0;
    const wr_metric_def_t *rows = wr_metric_defs(&n);
    assert_true(n >= 50);
    for (size_t i = 0; i < n; i++) {
        const wr_metric_def_t *r = &rows[i];
        assert_non_null(r->name);
        assert_true(strncmp(r->name, "waitroom_", 9) == 0 || strncmp(r->name, "process_", 8) == 0);
        assert_non_null(r->help);
        assert_true(strlen(r->help) > 10);
        assert_non_null(r->labels);
        assert_true(r->group <= WR_METRICS_GROUP_LOOP);
        if (r->type == WR_METRIC_COUNTER)
            assert_non_null(strstr(r->name, "_total"));
        if (r->bounds) {
            assert_int_equal(r->type, WR_METRIC_HISTOGRAM);
            assert_true(r->n_bounds >= 1 && r->n_bounds <= 12);
            for (size_t b = 1; b < r->n_bounds; b++)
                assert_true(r->bounds[b - 1] < r->bounds[b]);
        }
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(rows[j].name, r->name);
        assert_ptr_equal(wr_metric_defs_find(r->name), r);
    }
    assert_null(wr_metric_defs_find("waitroom_no_such_metric"));
    assert_null(wr_metric_defs_find(NULL));
}

/* Every family of the rendered text has # HELP and # TYPE lines, in that
 * order, with the type of its row. */
static void assert_every_family_described(const char *text)
{
    size_t n = 0;
    const wr_metric_def_t *rows = wr_metric_defs(&n);
    for (size_t i = 0; i < n; i++) {
        char help[160], type[160];
        snprintf(help, sizeof help, "# HELP %s %s", rows[i].name, rows[i].help);
        snprintf(type, sizeof type, "# TYPE %s %s\n", rows[i].name, type_name(rows[i].type));
        const char *h = strstr(text, help);
        const char *t = strstr(text, type);
        if (!h || !t)
            fail_msg("%s: %s", rows[i].name, !h ? "no # HELP line" : "no # TYPE line");
        assert_true(h < t);
    }
    /* and no family of the text lacks its # HELP line */
    for (const char *p = strstr(text, "# TYPE "); p; p = strstr(p + 1, "\n# TYPE ")) {
        const char *name = p[0] == '\n' ? p + 8 : p + 7;
        char want[200];
        int len = (int)strcspn(name, " ");
        snprintf(want, sizeof want, "# HELP %.*s ", len, name);
        if (!strstr(text, want))
            fail_msg("family %.*s has no # HELP line", len, name);
    }
}

static void test_registered_by_group(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    for (int g = WR_METRICS_GROUP_API; g <= WR_METRICS_GROUP_LOOP; g++)
        wr_metric_defs_describe(m, (wr_metric_group_t)g);
    wr_metric_defs_describe(m, WR_METRICS_GROUP_API); /* again: a no-op */
    wr_metric_defs_describe(NULL, WR_METRICS_GROUP_API);
    char *s = wr_metrics_render(m, NULL);
    assert_non_null(s);
    assert_every_family_described(s);
    free(s);
    wr_metrics_free(m);
}

/* K44: a family updated by a component that never described it (the
 * autotune rate gauge) still gets its row's # HELP (and a histogram its
 * row's buckets). */
static void test_used_before_described(void **state)
{
    (void)state;
    wr_metrics_t *m = wr_metrics_new();
    size_t n = 0;
    const wr_metric_def_t *rows = wr_metric_defs(&n);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].type == WR_METRIC_COUNTER)
            wr_metrics_inc(m, rows[i].name, "queue=\"a\"", 1);
        else if (rows[i].type == WR_METRIC_GAUGE)
            wr_metrics_set(m, rows[i].name, "queue=\"a\"", 2);
        else
            wr_metrics_observe(m, rows[i].name, "queue=\"a\"", 3);
    }
    char *s = wr_metrics_render(m, NULL);
    assert_non_null(s);
    assert_every_family_described(s);
    assert_non_null(strstr(s, "# HELP waitroom_autotune_rate "));
    assert_non_null(strstr(s, "waitroom_wait_seconds_bucket{queue=\"a\",le=\"5\"} 1\n"));
    assert_non_null(strstr(s, "\nwaitroom_metrics_dropped_series_total 0\n"));
    free(s);
    wr_metrics_free(m);
}

#define TESTS(X)                                                                                   \
    X(test_rows_well_formed)                                                                       \
    X(test_registered_by_group)                                                                    \
    X(test_used_before_described)
WR_UNIT_MAIN(NULL, NULL, TESTS)
