/*
 * test_qmap.c - the queue-name map: put, replace, get, remove, refused
 * names and values, growth past many bucket doublings, and iteration that
 * visits every entry once, also while removing each entry it visits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/qmap.h"
#include "unit_main.h"

static void test_basic(void **state)
{
    (void)state;
    int a = 1, b = 2;
    wr_qmap_t *m = wr_qmap_new();
    assert_non_null(m);
    assert_null(wr_qmap_get(m, "shop"));
    assert_int_equal(wr_qmap_put(m, "shop", &a), WR_OK);
    assert_int_equal(wr_qmap_put(m, "sho", &b), WR_OK);
    assert_ptr_equal(wr_qmap_get(m, "shop"), &a);
    assert_ptr_equal(wr_qmap_get(m, "sho"), &b);
    assert_null(wr_qmap_get(m, "shops"));
    assert_int_equal(wr_qmap_count(m), 2);
    assert_int_equal(wr_qmap_put(m, "shop", &b), WR_OK); /* replace */
    assert_ptr_equal(wr_qmap_get(m, "shop"), &b);
    assert_int_equal(wr_qmap_count(m), 2);
    assert_ptr_equal(wr_qmap_remove(m, "shop"), &b);
    assert_null(wr_qmap_remove(m, "shop"));
    assert_null(wr_qmap_get(m, "shop"));
    assert_int_equal(wr_qmap_count(m), 1);
    wr_qmap_free(m);
    wr_qmap_free(NULL);
}

static void test_refused(void **state)
{
    (void)state;
    int a = 1;
    char long_name[80];
    memset(long_name, 'q', sizeof long_name);
    long_name[65] = '\0';
    wr_qmap_t *m = wr_qmap_new();
    assert_int_equal(wr_qmap_put(m, "a b", &a), WR_EINVAL);
    assert_int_equal(wr_qmap_put(m, "", &a), WR_EINVAL);
    assert_int_equal(wr_qmap_put(m, NULL, &a), WR_EINVAL);
    assert_int_equal(wr_qmap_put(m, long_name, &a), WR_EINVAL);
    assert_int_equal(wr_qmap_put(m, "ok", NULL), WR_EINVAL);
    assert_null(wr_qmap_get(m, NULL));
    assert_null(wr_qmap_remove(m, "a b"));
    long_name[64] = '\0';
    assert_int_equal(wr_qmap_put(m, long_name, &a), WR_OK);
    assert_ptr_equal(wr_qmap_get(m, long_name), &a);
    assert_int_equal(wr_qmap_count(m), 1);
    wr_qmap_free(m);
}

#define N 3000
static int vals[N];

static void test_many_and_iteration(void **state)
{
    (void)state;
    char name[32];
    wr_qmap_t *m = wr_qmap_new();
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "q%d", i);
        vals[i] = i;
        assert_int_equal(wr_qmap_put(m, name, &vals[i]), WR_OK);
    }
    assert_int_equal(wr_qmap_count(m), N);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "q%d", i);
        assert_ptr_equal(wr_qmap_get(m, name), &vals[i]);
    }

    static unsigned char seen[N];
    memset(seen, 0, sizeof seen);
    wr_qmap_iter_t it = WR_QMAP_ITER_INIT;
    const char *k;
    void *v;
    size_t visits = 0;
    while (wr_qmap_next(m, &it, &k, &v)) {
        int i = *(int *)v;
        snprintf(name, sizeof name, "q%d", i);
        assert_string_equal(k, name);
        assert_int_equal(seen[i], 0);
        seen[i] = 1;
        visits++;
    }
    assert_int_equal(visits, N);

    /* Removing every other entry as it is visited. */
    memset(seen, 0, sizeof seen);
    it = (wr_qmap_iter_t)WR_QMAP_ITER_INIT;
    visits = 0;
    while (wr_qmap_next(m, &it, &k, &v)) {
        int i = *(int *)v;
        seen[i]++;
        visits++;
        if (i % 2 == 0)
            assert_ptr_equal(wr_qmap_remove(m, k), v);
    }
    assert_int_equal(visits, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(wr_qmap_count(m), N / 2);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "q%d", i);
        if (i % 2 == 0)
            assert_null(wr_qmap_get(m, name));
        else
            assert_ptr_equal(wr_qmap_get(m, name), &vals[i]);
    }
    wr_qmap_free(m);
}

#define TESTS(X)                                                                                   \
    X(test_basic)                                                                                  \
    X(test_refused)                                                                                \
    X(test_many_and_iteration)
WR_UNIT_MAIN(NULL, NULL, TESTS)
