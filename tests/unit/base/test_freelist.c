/*
 * test_freelist.c - the bounded free list (freelist.h): blocks come back
 * zeroed, reused last-in first-out, at most max are kept (the rest are
 * freed: under ASan/LSan a block kept past the bound or freed twice
 * shows), and clear frees every kept one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/freelist.h"
#include "unit_main.h"

typedef struct {
    char bytes[40];
} block_t;

static void t_take_give_reuse_zeroed(void **state)
{
    (void)state;
    wr_freelist_t fl;
    wr_freelist_init(&fl, sizeof(block_t), 2);
    block_t *a = wr_freelist_take(&fl); /* empty: a new one */
    assert_non_null(a);
    for (size_t i = 0; i < sizeof a->bytes; i++)
        assert_int_equal(a->bytes[i], 0);
    memset(a, 0x5a, sizeof *a);
    wr_freelist_give(&fl, a);
    assert_int_equal(fl.n, 1);
    block_t *b = wr_freelist_take(&fl); /* the same block, zeroed again */
    assert_ptr_equal(b, a);
    assert_int_equal(fl.n, 0);
    for (size_t i = 0; i < sizeof b->bytes; i++)
        assert_int_equal(b->bytes[i], 0);
    wr_freelist_give(&fl, b);
    wr_freelist_give(&fl, NULL); /* no-op */
    assert_int_equal(fl.n, 1);
    wr_freelist_clear(&fl);
    assert_int_equal(fl.n, 0);
    assert_null(fl.head);
}

static void t_bounded(void **state)
{
    (void)state;
    wr_freelist_t fl;
    wr_freelist_init(&fl, sizeof(block_t), 2);
    void *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = wr_freelist_take(&fl);
    for (int i = 0; i < 5; i++)
        wr_freelist_give(&fl, p[i]); /* the last three are freed */
    assert_int_equal(fl.n, 2);
    /* last in, first out: p[1], then p[0] */
    void *x = wr_freelist_take(&fl), *y = wr_freelist_take(&fl);
    assert_ptr_equal(x, p[1]);
    assert_ptr_equal(y, p[0]);
    assert_int_equal(fl.n, 0);
    wr_freelist_give(&fl, x);
    wr_freelist_give(&fl, y);
    wr_freelist_clear(&fl);
    /* a block smaller than a pointer is raised to one */
    wr_freelist_init(&fl, 1, 4);
    assert_int_equal(fl.size, sizeof(void *));
    wr_freelist_give(&fl, wr_freelist_take(&fl));
    wr_freelist_clear(&fl);
}

#define TESTS(X)                                                                                   \
    X(t_take_give_reuse_zeroed)                                                                    \
    X(t_bounded)
WR_UNIT_MAIN(NULL, NULL, TESTS)
