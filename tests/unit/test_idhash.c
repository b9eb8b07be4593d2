/*
 * test_idhash.c - the user-id hash: get/put/del, growth and shrink, and a
 * long random run against a plain array (deletion by backward shift must
 * keep every remaining key reachable).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idhash.h"

typedef struct {
    char id[24];
    int alive;
} item_t;

static const char *key_of(const void *p, size_t *len)
{
    const item_t *it = p;
    *len = strlen(it->id);
    return it->id;
}

static void test_basic(void **state)
{
    wr_idhash_t *h = wr_idhash_new(key_of);
    item_t a = {"alice", 1}, b = {"bob", 1}, b2 = {"bo", 1};
    assert_null(wr_idhash_get(h, "alice", 5));
    assert_int_equal(wr_idhash_put(h, &a), WR_OK);
    assert_int_equal(wr_idhash_put(h, &b), WR_OK);
    assert_int_equal(wr_idhash_count(h), 2);
    assert_ptr_equal(wr_idhash_get(h, "alice", 5), &a);
    assert_ptr_equal(wr_idhash_get(h, "bob", 3), &b);
    assert_null(wr_idhash_get(h, "bo", 2)); /* prefix is another key */
    assert_int_equal(wr_idhash_put(h, &b2), WR_OK);
    assert_ptr_equal(wr_idhash_get(h, "bo", 2), &b2);
    assert_ptr_equal(wr_idhash_del(h, "bob", 3), &b);
    assert_null(wr_idhash_del(h, "bob", 3));
    assert_null(wr_idhash_get(h, "bob", 3));
    assert_ptr_equal(wr_idhash_get(h, "bo", 2), &b2);
    assert_int_equal(wr_idhash_count(h), 2);
    assert_int_equal(wr_idhash_put(h, NULL), WR_EINVAL);
    wr_idhash_free(h);
    wr_idhash_free(NULL);
}

#define N 5000
static item_t items[N];

static void count_cb(void *item, void *arg)
{
    item_t *it = item;
    assert_int_equal(it->alive, 1);
    (*(size_t *)arg)++;
}

static void test_random_against_array(void **state)
{
    wr_idhash_t *h = wr_idhash_new(key_of);
    srand(7);
    for (int i = 0; i < N; i++) {
        snprintf(items[i].id, sizeof items[i].id, "u%07d", i);
        items[i].alive = 0;
    }
    size_t alive = 0, max_bytes = 0;
    for (int step = 0; step < 200000; step++) {
        int i = rand() % N;
        item_t *it = &items[i];
        int op = rand() % 3;
        /* grow phase, then shrink phase */
        if (step > 120000)
            op = op == 0 ? 1 : 2;
        if (op == 0) {
            if (!it->alive) {
                assert_null(wr_idhash_get(h, it->id, strlen(it->id)));
                assert_int_equal(wr_idhash_put(h, it), WR_OK);
                it->alive = 1;
                alive++;
            }
        } else if (op == 1) {
            void *got = wr_idhash_del(h, it->id, strlen(it->id));
            if (it->alive) {
                assert_ptr_equal(got, it);
                it->alive = 0;
                alive--;
            } else {
                assert_null(got);
            }
        } else {
            void *got = wr_idhash_get(h, it->id, strlen(it->id));
            assert_ptr_equal(got, it->alive ? it : NULL);
        }
        assert_int_equal(wr_idhash_count(h), alive);
        if (wr_idhash_bytes(h) > max_bytes)
            max_bytes = wr_idhash_bytes(h);
    }
    for (int i = 0; i < N; i++)
        assert_ptr_equal(wr_idhash_get(h, items[i].id, strlen(items[i].id)),
                         items[i].alive ? &items[i] : NULL);
    size_t seen = 0;
    wr_idhash_foreach(h, count_cb, &seen);
    assert_int_equal(seen, alive);
    /* 8 bytes a slot, load <= 0.8: the peak holds at most 2 * N / 0.8 slots */
    assert_true(max_bytes <= 8 * (size_t)(2 * N / 0.8) + 256);
    /* after the delete-heavy phase the table shrank */
    assert_true(wr_idhash_bytes(h) < max_bytes);
    wr_idhash_free(h);
}

static void test_reserve(void **state)
{
    wr_idhash_t *h = wr_idhash_new(key_of);
    assert_int_equal(wr_idhash_reserve(h, 1000), WR_OK);
    size_t b = wr_idhash_bytes(h);
    assert_true(b >= 8 * 1250);
    for (int i = 0; i < 1000; i++) {
        snprintf(items[i].id, sizeof items[i].id, "r%d", i);
        assert_int_equal(wr_idhash_put(h, &items[i]), WR_OK);
    }
    assert_int_equal(wr_idhash_bytes(h), b); /* no resize after reserve */
    wr_idhash_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_random_against_array),
        cmocka_unit_test(test_reserve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
