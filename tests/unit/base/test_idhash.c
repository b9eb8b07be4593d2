/*
 * test_idhash.c - the user-id hash: get/put/del, growth and shrink, and a
 * long random run against a plain array (deletion by backward shift must
 * keep every remaining key reachable); incremental resizing: a random model
 * run checked in full at random moments (mid-migration included), deletion
 * and reserve while a migration runs, and the work one put may do (key
 * calls, i.e. item dereferences, and old slots migrated).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/idhash.h"
#include "unit_main.h"

typedef struct {
    char id[24];
    int alive;
} item_t;

static size_t key_calls; /* item dereferences by the table */

static const char *key_of(const void *p, size_t *len)
{
    const item_t *it = p;
    key_calls++;
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
    /* 8 bytes a slot, load <= 0.8: at most 8192 slots for N items, plus the
     * 4096 old ones while the last growth migrates */
    assert_true(max_bytes <= 8 * (size_t)(8192 + 4096) + 256);
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

/* ---- incremental resizing ---- */

#define STEP WR_IDHASH_MIGRATE_STEP
#define M    20000
static item_t mitems[M];
static unsigned char visits[M];

static void init_items(item_t *arr, int n, const char *prefix)
{
    for (int i = 0; i < n; i++) {
        snprintf(arr[i].id, sizeof arr[i].id, "%s%d", prefix, i);
        arr[i].alive = 0;
    }
}

/* The struct's bytes: wr_idhash_bytes less the slot arrays. */
static size_t struct_bytes(void)
{
    wr_idhash_t *h = wr_idhash_new(key_of);
    size_t b = wr_idhash_bytes(h) - 16 * sizeof(uint64_t); /* 16: the initial slots */
    wr_idhash_free(h);
    return b;
}

static void visit_cb(void *item, void *arg)
{
    item_t *it = item;
    ptrdiff_t i = it - mitems;
    assert_true(i >= 0 && i < M);
    assert_int_equal(it->alive, 1);
    visits[i]++;
    (*(size_t *)arg)++;
}

/* Checks h against the alive flags of mitems[0..n): the count, a get of
 * every key, and foreach visiting every live item exactly once. */
static void check_all(const wr_idhash_t *h, int n, size_t alive)
{
    assert_int_equal(wr_idhash_count(h), alive);
    for (int i = 0; i < n; i++)
        assert_ptr_equal(wr_idhash_get(h, mitems[i].id, strlen(mitems[i].id)),
                         mitems[i].alive ? &mitems[i] : NULL);
    memset(visits, 0, sizeof visits);
    size_t seen = 0;
    wr_idhash_foreach(h, visit_cb, &seen);
    assert_int_equal(seen, alive);
    for (int i = 0; i < n; i++)
        assert_int_equal(visits[i], mitems[i].alive ? 1 : 0);
}

typedef struct {
    size_t growths, shrinks; /* resizes started (an allocation seen) */
    size_t mid;              /* full checks made while a migration ran */
} stats_t;

/* One put or del may move at most STEP old slots: the pending count drops
 * by at most STEP (or to 0: no item left in the old array), or it rises
 * from 0 when this very call started a resize. */
static void check_step(size_t before, size_t after)
{
    if (after > before)
        assert_int_equal(before, 0);
    else
        assert_true(after == 0 || before - after <= STEP);
}

static void put_checked(wr_idhash_t *h, item_t *it, stats_t *st)
{
    size_t pend = wr_idhash__pending(h), bytes = wr_idhash_bytes(h), calls = key_calls;
    assert_null(wr_idhash_get(h, it->id, strlen(it->id)));
    calls = key_calls;
    assert_int_equal(wr_idhash_put(h, it), WR_OK);
    /* one dereference for the item itself, one per migrated item: never a
     * rehash of the whole table */
    assert_true(key_calls - calls <= 1 + STEP);
    check_step(pend, wr_idhash__pending(h));
    if (st && wr_idhash_bytes(h) > bytes)
        st->growths++;
    it->alive = 1;
}

static void del_checked(wr_idhash_t *h, item_t *it, stats_t *st)
{
    size_t pend = wr_idhash__pending(h), bytes = wr_idhash_bytes(h);
    assert_ptr_equal(wr_idhash_del(h, it->id, strlen(it->id)), it->alive ? it : NULL);
    check_step(pend, wr_idhash__pending(h));
    if (st && wr_idhash_bytes(h) > bytes)
        st->shrinks++;
    it->alive = 0;
}

/* Thousands of mixed puts, gets and dels over several growths and shrinks,
 * checked in full at random moments, mid-migration included. */
static void test_model_random(void **state)
{
    wr_idhash_t *h = wr_idhash_new(key_of);
    const int n = 12000;
    init_items(mitems, n, "m");
    srand(11);
    stats_t st = {0};
    size_t alive = 0;
    for (int cycle = 0; cycle < 3; cycle++) {
        for (int grow = 1; grow >= 0; grow--) {
            /* grow: puts 60%, dels 25% (1 in 10 of a random key, live or
             * not), gets 15% up to 0.8 n live items; shrink: puts 25%, dels
             * 60% down to 40 */
            while (grow ? alive < (size_t)n * 8 / 10 : alive > 40) {
                int r = rand() % 100;
                item_t *it = &mitems[rand() % n];
                if (r < (grow ? 60 : 25)) { /* put: the next dead item */
                    while (it->alive)
                        it = it == &mitems[n - 1] ? mitems : it + 1;
                    put_checked(h, it, &st);
                    alive++;
                } else if (r < 85) { /* del: mostly the next live one */
                    while (!it->alive && r % 10 != 0)
                        it = it == &mitems[n - 1] ? mitems : it + 1;
                    alive -= it->alive;
                    del_checked(h, it, &st);
                } else {
                    assert_ptr_equal(wr_idhash_get(h, it->id, strlen(it->id)),
                                     it->alive ? it : NULL);
                }
                assert_int_equal(wr_idhash_count(h), alive);
                bool mid = wr_idhash__pending(h) > 0;
                if (rand() % (mid ? 40 : 1500) == 0) {
                    check_all(h, n, alive);
                    st.mid += mid;
                }
            }
            check_all(h, n, alive);
        }
    }
    /* 16 -> 16384 slots: 10 growths the first time; shrinks back to 64 */
    assert_true(st.growths >= 10);
    assert_true(st.shrinks >= 6);
    assert_true(st.mid >= 20);
    wr_idhash_free(h);
}

/* Fills h with mitems from *next on until a put starts a migration of more
 * than min_pending old slots. */
static void fill_to_migration(wr_idhash_t *h, int *next, size_t min_pending)
{
    while (wr_idhash__pending(h) <= min_pending) {
        assert_true(*next < M);
        put_checked(h, &mitems[(*next)++], NULL);
    }
}

/* Deletions (old and new array) and re-insertions while a migration runs
 * keep every other item reachable and counted once. */
static void test_delete_during_migration(void **state)
{
    wr_idhash_t *h = wr_idhash_new(key_of);
    init_items(mitems, M, "d");
    int n = 0;
    fill_to_migration(h, &n, 8192); /* 13108 items: 16384 old slots to migrate */
    assert_int_equal(n, 13108);
    assert_int_equal(wr_idhash__pending(h), 16384 - STEP);
    size_t alive = (size_t)n;
    srand(5);
    int dels = 0;
    /* right after the start nearly every item is still in the old array */
    while (wr_idhash__pending(h) > 0) {
        item_t *it = &mitems[rand() % n];
        if (it->alive) {
            del_checked(h, it, NULL);
            alive--;
            dels++;
            if (dels % 7 == 0) { /* the same key again: into the new array */
                put_checked(h, it, NULL);
                alive++;
            }
        }
        if (dels % 50 == 0)
            check_all(h, n, alive);
    }
    assert_true(dels >= 400); /* 16384 / STEP ops, ~6/7 of them dels */
    check_all(h, n, alive);
    /* after the migration: dels by backward shift, a shrink, all still there */
    for (int i = 0; i < n; i++)
        if (mitems[i].alive && rand() % 10 != 0) {
            del_checked(h, &mitems[i], NULL);
            alive--;
        }
    check_all(h, n, alive);
    wr_idhash_free(h);
}

/* reserve mid-migration keeps its promise: the puts it covers neither fail
 * nor allocate (bytes never rise), whether the running migration suffices
 * or reserve has to finish it and start a larger one. */
static void test_reserve_mid_migration(void **state)
{
    size_t base = struct_bytes();
    wr_idhash_t *h = wr_idhash_new(key_of);
    init_items(mitems, M, "v");
    int n = 0;
    fill_to_migration(h, &n, 512); /* 820 items: 1024 -> 2048 slots */
    assert_int_equal(n, 820);
    assert_int_equal(wr_idhash_bytes(h), base + (2048 + 1024) * 8);
    /* fits in the new array: nothing to do */
    assert_int_equal(wr_idhash_reserve(h, 100), WR_OK);
    assert_int_equal(wr_idhash_bytes(h), base + (2048 + 1024) * 8);
    assert_int_equal(wr_idhash__pending(h), 1024 - STEP);
    for (int i = 0; i < 100; i++) {
        size_t b = wr_idhash_bytes(h);
        put_checked(h, &mitems[n++], NULL);
        assert_true(wr_idhash_bytes(h) <= b); /* only the old array freed */
    }
    assert_int_equal(wr_idhash__pending(h), 0); /* 1024 / STEP puts */
    assert_int_equal(wr_idhash_bytes(h), base + 2048 * 8);
    check_all(h, n, (size_t)n);

    /* more than the new array holds: the running migration is finished
     * and a larger one starts */
    fill_to_migration(h, &n, 1024); /* 1639 items: 2048 -> 4096 slots */
    assert_int_equal(n, 1639);
    assert_int_equal(wr_idhash_reserve(h, 3000), WR_OK); /* 4639 items: 8192 slots */
    assert_int_equal(wr_idhash_bytes(h), base + (8192 + 4096) * 8);
    assert_int_equal(wr_idhash__pending(h), 4096);
    check_all(h, n, (size_t)n);
    for (int i = 0; i < 3000; i++) {
        size_t b = wr_idhash_bytes(h);
        put_checked(h, &mitems[n++], NULL);
        assert_true(wr_idhash_bytes(h) <= b);
    }
    assert_int_equal(wr_idhash_bytes(h), base + 8192 * 8);
    check_all(h, n, (size_t)n);
    wr_idhash_free(h);
}

/* A growth of a large table costs the put that starts it at most STEP
 * rehashes, and the migration ends long before the next growth. */
static void test_put_work_bound(void **state)
{
    size_t base = struct_bytes();
    const int n = 220000;
    item_t *big = calloc(n, sizeof *big);
    assert_non_null(big);
    init_items(big, n, "w");
    wr_idhash_t *h = wr_idhash_new(key_of);
    int i = 0;
    while (wr_idhash__pending(h) < 200000) { /* the growth 262144 -> 524288 slots */
        size_t calls = key_calls;
        assert_int_equal(wr_idhash_put(h, &big[i++]), WR_OK);
        assert_true(key_calls - calls <= 1 + STEP);
    }
    assert_int_equal(i, 209716); /* the put past 0.8 * 262144 */
    assert_int_equal(wr_idhash__pending(h), 262144 - STEP);
    assert_int_equal(wr_idhash_bytes(h), base + (524288 + 262144) * 8);
    size_t pend = wr_idhash__pending(h);
    size_t calls = key_calls;
    assert_non_null(wr_idhash_get(h, big[5].id, strlen(big[5].id)));
    assert_int_equal(wr_idhash__pending(h), pend); /* get never migrates */
    assert_true(key_calls - calls <= 2);
    int puts = 0;
    while (wr_idhash__pending(h) > 0) {
        assert_true(i < n);
        calls = key_calls;
        pend = wr_idhash__pending(h);
        assert_int_equal(wr_idhash_put(h, &big[i++]), WR_OK);
        assert_true(key_calls - calls <= 1 + STEP);
        check_step(pend, wr_idhash__pending(h));
        puts++;
    }
    assert_true(puts <= 262144 / STEP);
    assert_int_equal(wr_idhash_bytes(h), base + 524288 * 8);
    for (int j = 0; j < i; j++)
        assert_ptr_equal(wr_idhash_get(h, big[j].id, strlen(big[j].id)), &big[j]);
    wr_idhash_free(h);
    free(big);
}

#define TESTS(X)                                                                                   \
    X(test_basic)                                                                                  \
    X(test_random_against_array)                                                                   \
    X(test_reserve)                                                                                \
    X(test_model_random)                                                                           \
    X(test_delete_during_migration)                                                                \
    X(test_reserve_mid_migration)                                                                  \
    X(test_put_work_bound)
WR_UNIT_MAIN(NULL, NULL, TESTS)
