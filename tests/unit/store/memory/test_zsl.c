/*
 * test_zsl.c - the order-statistic skiplist: ranks, deletes and pops
 * against hand-computed expectations, then a long random run against a
 * sorted array.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store/memory/zsl.h"
#include "unit_main.h"

static wr_zsl_node_t *ins(wr_zsl_t *z, int64_t score, const char *id)
{
    wr_zsl_node_t *n = NULL;
    assert_int_equal(wr_zsl_insert(z, score, id, strlen(id), &n), WR_OK);
    assert_non_null(n);
    return n;
}

static void test_empty(void **state)
{
    wr_zsl_t *z = wr_zsl_new(1);
    assert_non_null(z);
    assert_int_equal(wr_zsl_length(z), 0);
    assert_null(wr_zsl_first(z));
    assert_null(wr_zsl_by_rank(z, 0));
    assert_null(wr_zsl_by_rank(z, 1));
    assert_int_equal(wr_zsl_pop_first(z, 5, NULL, NULL), 0);
    wr_zsl_free(z);
    wr_zsl_free(NULL);
}

static void test_rank_out_of_order_inserts(void **state)
{
    wr_zsl_t *z = wr_zsl_new(7);
    wr_zsl_node_t *c = ins(z, 30, "carol");
    wr_zsl_node_t *a = ins(z, 10, "alice");
    wr_zsl_node_t *b = ins(z, 20, "bob");
    wr_zsl_node_t *d = ins(z, 40, "dave");
    assert_int_equal(wr_zsl_length(z), 4);
    assert_int_equal(wr_zsl_rank(z, a), 1);
    assert_int_equal(wr_zsl_rank(z, b), 2);
    assert_int_equal(wr_zsl_rank(z, c), 3);
    assert_int_equal(wr_zsl_rank(z, d), 4);
    assert_ptr_equal(wr_zsl_by_rank(z, 3), c);
    assert_null(wr_zsl_by_rank(z, 5));
    size_t len;
    assert_string_equal(wr_zsl_node_id(b, &len), "bob");
    assert_int_equal(len, 3);
    assert_int_equal(wr_zsl_node_score(c), 30);
    assert_ptr_equal(wr_zsl_first(z), a);
    assert_ptr_equal(wr_zsl_next(a), b);

    /* delete the second: carol becomes 2, dave 3 */
    wr_zsl_delete(z, b);
    assert_int_equal(wr_zsl_length(z), 3);
    assert_int_equal(wr_zsl_rank(z, c), 2);
    assert_int_equal(wr_zsl_rank(z, d), 3);
    wr_zsl_free(z);
}

static void test_bad_inserts(void **state)
{
    wr_zsl_t *z = wr_zsl_new(3);
    wr_zsl_node_t *n = NULL;
    ins(z, 5, "x");
    assert_int_equal(wr_zsl_insert(z, 5, "y", 1, &n), WR_EINVAL); /* duplicate score */
    assert_int_equal(wr_zsl_insert(z, 6, "y", 0, &n), WR_EINVAL);
    char big[300];
    memset(big, 'a', sizeof big);
    assert_int_equal(wr_zsl_insert(z, 6, big, 256, &n), WR_EINVAL);
    assert_int_equal(wr_zsl_insert(z, 6, big, 255, &n), WR_OK);
    size_t len;
    wr_zsl_node_id(n, &len);
    assert_int_equal(len, 255);
    assert_int_equal(wr_zsl_length(z), 2);
    wr_zsl_free(z);
}

typedef struct {
    char ids[16][8];
    int n;
} popped_t;

static void on_pop(const wr_zsl_node_t *node, void *arg)
{
    popped_t *p = arg;
    snprintf(p->ids[p->n++], sizeof p->ids[0], "%s", wr_zsl_node_id(node, NULL));
}

static void test_pop_first(void **state)
{
    wr_zsl_t *z = wr_zsl_new(11);
    ins(z, 103, "u3");
    ins(z, 101, "u1");
    ins(z, 105, "u5");
    ins(z, 102, "u2");
    wr_zsl_node_t *u4 = ins(z, 104, "u4");
    popped_t p = {0};
    assert_int_equal(wr_zsl_pop_first(z, 2, on_pop, &p), 2);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.ids[0], "u1");
    assert_string_equal(p.ids[1], "u2");
    assert_int_equal(wr_zsl_length(z), 3);
    assert_int_equal(wr_zsl_rank(z, u4), 2);
    /* asking for more than there are pops what is there */
    assert_int_equal(wr_zsl_pop_first(z, 10, on_pop, &p), 3);
    assert_int_equal(p.n, 5);
    assert_string_equal(p.ids[2], "u3");
    assert_string_equal(p.ids[4], "u5");
    assert_int_equal(wr_zsl_length(z), 0);
    /* reuse after emptying */
    wr_zsl_node_t *n = ins(z, 200, "again");
    assert_int_equal(wr_zsl_rank(z, n), 1);
    wr_zsl_free(z);
}

/* Model: sorted array of scores; node pointers beside them. */
#define MODEL_MAX 4096
static int64_t m_score[MODEL_MAX];
static wr_zsl_node_t *m_node[MODEL_MAX];
static size_t m_n;

static size_t m_find(int64_t score)
{
    size_t i = 0;
    while (i < m_n && m_score[i] < score)
        i++;
    return i;
}

static void test_random_against_sorted_array(void **state)
{
    wr_zsl_t *z = wr_zsl_new(12345);
    srand(42);
    m_n = 0;
    size_t before = wr_zsl_bytes(z);
    for (int step = 0; step < 40000; step++) {
        int op = rand() % 10;
        if ((op < 5 && m_n < MODEL_MAX) || m_n == 0) {
            int64_t score = rand() % 100000;
            size_t i = m_find(score);
            char id[32];
            snprintf(id, sizeof id, "user-%lld", (long long)score);
            wr_zsl_node_t *n = NULL;
            wr_err_t err = wr_zsl_insert(z, score, id, strlen(id), &n);
            if (i < m_n && m_score[i] == score) {
                assert_int_equal(err, WR_EINVAL);
                continue;
            }
            assert_int_equal(err, WR_OK);
            memmove(&m_score[i + 1], &m_score[i], (m_n - i) * sizeof m_score[0]);
            memmove(&m_node[i + 1], &m_node[i], (m_n - i) * sizeof m_node[0]);
            m_score[i] = score;
            m_node[i] = n;
            m_n++;
        } else if (op < 7) {
            size_t i = (size_t)rand() % m_n;
            wr_zsl_delete(z, m_node[i]);
            memmove(&m_score[i], &m_score[i + 1], (m_n - i - 1) * sizeof m_score[0]);
            memmove(&m_node[i], &m_node[i + 1], (m_n - i - 1) * sizeof m_node[0]);
            m_n--;
        } else if (op < 8) {
            size_t k = (size_t)rand() % 4;
            size_t want = k < m_n ? k : m_n;
            assert_int_equal(wr_zsl_pop_first(z, k, NULL, NULL), want);
            memmove(&m_score[0], &m_score[want], (m_n - want) * sizeof m_score[0]);
            memmove(&m_node[0], &m_node[want], (m_n - want) * sizeof m_node[0]);
            m_n -= want;
        } else {
            size_t i = (size_t)rand() % m_n;
            assert_int_equal(wr_zsl_rank(z, m_node[i]), i + 1);
            assert_ptr_equal(wr_zsl_by_rank(z, i + 1), m_node[i]);
            char id[32];
            snprintf(id, sizeof id, "user-%lld", (long long)m_score[i]);
            assert_string_equal(wr_zsl_node_id(m_node[i], NULL), id);
        }
        assert_int_equal(wr_zsl_length(z), m_n);
    }
    /* full walk in order */
    size_t i = 0;
    for (wr_zsl_node_t *x = wr_zsl_first(z); x; x = wr_zsl_next(x), i++) {
        assert_ptr_equal(x, m_node[i]);
        assert_int_equal(wr_zsl_rank(z, x), i + 1);
    }
    assert_int_equal(i, m_n);
    assert_true(wr_zsl_bytes(z) > before);
    wr_zsl_free(z);
}

/* The rank index of append-only lists: a FIFO line of 300,000 appends
 * (more than one superblock of 64 x 4096 sequence numbers) with random
 * deletes, pops from the front and more appends; every checked rank is the
 * position in a plain array, and equals the span walk's. Then the front
 * superblocks are dropped as the line moves on, and the index stays exact. */
#define FIFO_N 300000
static wr_zsl_node_t *f_node[FIFO_N + 200000];

static void check_fifo_ranks(wr_zsl_t *z, size_t head, size_t n, unsigned stride)
{
    uint64_t pos = 0;
    for (size_t i = head; i < n; i++) {
        if (!f_node[i])
            continue;
        pos++;
        if ((i % stride) == 0 || i + 1 == n) {
            assert_int_equal(wr_zsl_rank(z, f_node[i]), pos);
            assert_int_equal(wr_zsl_rank_walk(z, f_node[i]), pos);
        }
    }
    assert_int_equal(wr_zsl_length(z), pos);
}

static void test_rank_index_fifo(void **state)
{
    (void)state;
    wr_zsl_t *z = wr_zsl_new(7);
    srand(7);
    size_t n = 0, head = 0;
    char id[32];
    for (; n < FIFO_N; n++) {
        snprintf(id, sizeof id, "u%zu", n);
        f_node[n] = ins(z, (int64_t)n * 3 + 1000, id);
    }
    assert_true(wr_zsl_rank_indexed(z));
    /* a third of the users leave, anywhere in the line */
    for (int k = 0; k < FIFO_N / 3; k++) {
        size_t i = (size_t)rand() % FIFO_N;
        if (f_node[i]) {
            wr_zsl_delete(z, f_node[i]);
            f_node[i] = NULL;
        }
    }
    check_fifo_ranks(z, head, n, 97);
    /* admission takes 200,000 users (about 300,000 sequence numbers, so the
     * first superblock of 262,144 dies and is dropped) from the front,
     * while 200,000 more arrive */
    for (int round = 0; round < 100; round++) {
        uint64_t want = 2000;
        uint64_t popped = wr_zsl_pop_first(z, want, NULL, NULL);
        for (uint64_t p = 0; p < popped; head++) {
            if (f_node[head]) {
                f_node[head] = NULL;
                p++;
            }
        }
        for (int a = 0; a < 2000; a++, n++) {
            snprintf(id, sizeof id, "u%zu", n);
            f_node[n] = ins(z, (int64_t)n * 3 + 1000, id);
        }
        if (round % 25 == 0)
            check_fifo_ranks(z, head, n, 389);
    }
    assert_true(wr_zsl_rank_indexed(z));
    assert_true(head > 262144);
    check_fifo_ranks(z, head, n, 1);
    wr_zsl_free(z);
}

/* An insert that is not an append turns the index off; ranks stay exact by
 * the span walk; an emptied list turns it back on. */
static void test_rank_index_off_and_on(void **state)
{
    (void)state;
    wr_zsl_t *z = wr_zsl_new(3);
    wr_zsl_node_t *a = ins(z, 10, "a"), *c = ins(z, 30, "c");
    assert_true(wr_zsl_rank_indexed(z));
    wr_zsl_node_t *b = ins(z, 20, "b"); /* before c: not an append */
    assert_false(wr_zsl_rank_indexed(z));
    assert_int_equal(wr_zsl_rank(z, a), 1);
    assert_int_equal(wr_zsl_rank(z, b), 2);
    assert_int_equal(wr_zsl_rank(z, c), 3);
    wr_zsl_delete(z, b);
    assert_int_equal(wr_zsl_rank(z, c), 2);
    assert_int_equal(wr_zsl_pop_first(z, 5, NULL, NULL), 2);
    assert_true(wr_zsl_rank_indexed(z));
    wr_zsl_node_t *d = ins(z, 5, "d"), *e = ins(z, 6, "e");
    assert_true(wr_zsl_rank_indexed(z));
    assert_int_equal(wr_zsl_rank(z, d), 1);
    assert_int_equal(wr_zsl_rank(z, e), 2);
    wr_zsl_delete(z, d);
    assert_int_equal(wr_zsl_rank(z, e), 1);
    wr_zsl_free(z);
}

/* Freed nodes are reused: churn at a constant size does not keep growing
 * the pool (without reuse, 50,000 more nodes would need 1.6 MB). Levels are
 * random, so per-size-class counts drift a little: allow 4x. */
/* The sale opening's pattern: a line, a reservation of n numbers, later
 * arrivals appended while the reserved elements come in below them in
 * chunks, with pops from the front and an emptied line in between: the
 * index stays on and every rank agrees with the walk. */
static void test_rank_index_reserved(void **state)
{
    (void)state;
    wr_zsl_t *z = wr_zsl_new(7);
    enum { OLD = 5000, N = 20000, LATE = 3000 };
    char id[32];
    int64_t score = 1000;
    for (int i = 0; i < OLD; i++) {
        snprintf(id, sizeof id, "o%d", i);
        ins(z, score++, id);
    }
    int64_t base = score;
    uint64_t seq = wr_zsl_reserve(z, N);
    score += N;
    int moved = 0, late = 0;
    while (moved < N) {
        for (int k = 0; k < 97 && late < LATE; k++, late++) {
            snprintf(id, sizeof id, "l%d", late);
            ins(z, score++, id);
        }
        for (int k = 0; k < 1500 && moved < N; k++, moved++) {
            wr_zsl_node_t *n = NULL;
            snprintf(id, sizeof id, "p%d", moved);
            assert_int_equal(
                wr_zsl_insert_reserved(z, base + moved, id, strlen(id), seq + moved, &n), WR_OK);
        }
        /* admission takes only what is below the moved part */
        uint64_t below = wr_zsl_count_below(z, base + moved);
        wr_zsl_pop_first(z, below > 4000 ? 4000 : below, NULL, NULL);
        assert_true(wr_zsl_rank_indexed(z));
        for (wr_zsl_node_t *x = wr_zsl_first(z); x; x = wr_zsl_next(x))
            assert_int_equal(wr_zsl_rank(z, x), wr_zsl_rank_walk(z, x));
    }
    wr_zsl_unreserve(z);
    assert_int_equal(wr_zsl_count_below(z, INT64_MAX), wr_zsl_length(z));
    /* a reserved number out of order turns the index off, rank stays exact */
    uint64_t s2 = wr_zsl_reserve(z, 2);
    wr_zsl_node_t *n = NULL;
    assert_int_equal(wr_zsl_insert_reserved(z, score + 10, "x", 1, s2 + 1, &n), WR_OK);
    assert_int_equal(wr_zsl_insert_reserved(z, score + 20, "y", 1, s2, &n), WR_OK);
    assert_false(wr_zsl_rank_indexed(z));
    assert_int_equal(wr_zsl_rank(z, n), wr_zsl_length(z));
    wr_zsl_free(z);
}

static void test_pool_reuse(void **state)
{
    wr_zsl_t *z = wr_zsl_new(99);
    int64_t score = 0;
    for (int i = 0; i < 1000; i++)
        ins(z, ++score, "abcdefghijkl");
    for (int i = 0; i < 2000; i++) {
        wr_zsl_pop_first(z, 1, NULL, NULL);
        ins(z, ++score, "abcdefghijkl");
    }
    size_t steady = wr_zsl_bytes(z);
    for (int i = 0; i < 50000; i++) {
        wr_zsl_pop_first(z, 1, NULL, NULL);
        ins(z, ++score, "abcdefghijkl");
    }
    assert_true(wr_zsl_bytes(z) <= 4 * steady);
    assert_int_equal(wr_zsl_length(z), 1000);
    /* compact: about 37 bytes per 12-byte-id node, pool within 64 B/node */
    assert_true(steady < 1000 * 64 + 8192);
    wr_zsl_free(z);
}

/* The extra bytes: only nodes inserted while they are on carry them
 * (zeroed at insert); both kinds live in one list, keep their ids, scores
 * and ranks, and go back to the pool at their own sizes (ASan checks every
 * byte written). */
static void test_extra_bytes(void **state)
{
    (void)state;
    wr_zsl_t *z = wr_zsl_new(5);
    wr_zsl_node_t *n[64];
    char id[WR_ZSL_ID_MAX + 1];
    static const unsigned char zero[WR_ZSL_EXTRA];
    for (int i = 0; i < 64; i++) {
        wr_zsl_set_extra(z, i % 2 == 1);
        size_t len = (size_t)(i % 3 == 0 ? WR_ZSL_ID_MAX : 1 + i); /* every rounding */
        memset(id, 'a' + i % 26, len);
        assert_int_equal(wr_zsl_insert(z, 10 + i, id, len, &n[i]), WR_OK);
    }
    for (int i = 0; i < 64; i++) {
        unsigned char *x = wr_zsl_node_extra(n[i]);
        if (i % 2 == 0) {
            assert_null(x);
        } else {
            assert_non_null(x);
            assert_memory_equal(x, zero, WR_ZSL_EXTRA);
            memset(x, 0xA0 + i, WR_ZSL_EXTRA);
        }
    }
    for (int i = 0; i < 64; i++) {
        size_t len;
        const char *got = wr_zsl_node_id(n[i], &len);
        assert_int_equal(len, (size_t)(i % 3 == 0 ? WR_ZSL_ID_MAX : 1 + i));
        for (size_t k = 0; k < len; k++)
            assert_int_equal(got[k], 'a' + i % 26);
        assert_int_equal(got[len], '\0');
        assert_int_equal(wr_zsl_node_score(n[i]), 10 + i);
        assert_int_equal(wr_zsl_rank(z, n[i]), (uint64_t)i + 1);
        unsigned char *x = wr_zsl_node_extra(n[i]);
        if (i % 2 == 1) {
            assert_int_equal(x[0], 0xA0 + i);
            assert_int_equal(x[WR_ZSL_EXTRA - 1], 0xA0 + i);
        }
    }
    /* popped and inserted again: the pool hands back each size, a reused
     * node's bytes are zero again */
    wr_zsl_pop_first(z, 64, NULL, NULL);
    wr_zsl_set_extra(z, true);
    for (int i = 0; i < 64; i++) {
        assert_int_equal(wr_zsl_insert(z, 1000 + i, "x", 1, &n[i]), WR_OK);
        assert_non_null(wr_zsl_node_extra(n[i]));
        assert_memory_equal(wr_zsl_node_extra(n[i]), zero, WR_ZSL_EXTRA);
    }
    assert_int_equal(wr_zsl_length(z), 64);
    wr_zsl_free(z);
}

#define TESTS(X)                                                                                   \
    X(test_empty)                                                                                  \
    X(test_rank_out_of_order_inserts)                                                              \
    X(test_bad_inserts)                                                                            \
    X(test_pop_first)                                                                              \
    X(test_random_against_sorted_array)                                                            \
    X(test_pool_reuse)                                                                             \
    X(test_extra_bytes)                                                                            \
    X(test_rank_index_fifo)                                                                        \
    X(test_rank_index_off_and_on)                                                                  \
    X(test_rank_index_reserved)
WR_UNIT_MAIN(NULL, NULL, TESTS)
