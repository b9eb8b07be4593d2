/*
 * test_array.c - wr_array_grow: doubling from first, zeroing, no change
 * when big enough, refusal of sizes that overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "unit_main.h"

static void test_grow(void **state)
{
    (void)state;
    size_t cap = 0;
    int *a = wr_array_grow(NULL, &cap, 1, sizeof *a, 8, true);
    assert_non_null(a);
    assert_int_equal(cap, 8);
    for (size_t i = 0; i < cap; i++)
        assert_int_equal(a[i], 0);
    a[7] = 7;
    assert_ptr_equal(wr_array_grow(a, &cap, 8, sizeof *a, 8, true), a); /* fits: unchanged */
    assert_int_equal(cap, 8);
    a = wr_array_grow(a, &cap, 33, sizeof *a, 8, true); /* 8 -> 16 -> 32 -> 64 */
    assert_non_null(a);
    assert_int_equal(cap, 64);
    assert_int_equal(a[7], 7);
    for (size_t i = 8; i < cap; i++)
        assert_int_equal(a[i], 0);
    size_t before = cap;
    assert_null(wr_array_grow(a, &cap, SIZE_MAX / 2, sizeof *a, 8, false)); /* overflows */
    assert_int_equal(cap, before);
    assert_int_equal(a[7], 7); /* still the caller's */
    free(a);
    size_t c2 = 0;
    char *b = wr_array_grow(NULL, &c2, 3, 1, 0, false); /* first 0: from 1 */
    assert_non_null(b);
    assert_int_equal(c2, 4);
    free(b);
    size_t c3 = 0; /* nothing needed yet: still an array, never NULL */
    int *z = wr_array_grow(NULL, &c3, 0, sizeof *z, 16, false);
    assert_non_null(z);
    assert_int_equal(c3, 16);
    free(z);
}

#define TESTS(X) X(test_grow)
WR_UNIT_MAIN(NULL, NULL, TESTS)
