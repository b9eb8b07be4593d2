/*
 * test_names.c - wr_names_get: in range, gaps, out of range, negative.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/names.h"
#include "unit_main.h"

typedef enum { A_OK = 0, A_GAP = 1, A_LAST = 2 } abc_t;

static void test_names(void **state)
{
    (void)state;
    static const char *const names[] = {[A_OK] = "ok", [A_LAST] = "last"};
    assert_string_equal(WR_NAMES_GET(names, A_OK, "?"), "ok");
    assert_string_equal(WR_NAMES_GET(names, A_LAST, "?"), "last");
    assert_string_equal(WR_NAMES_GET(names, A_GAP, "?"), "?"); /* no name given */
    assert_string_equal(WR_NAMES_GET(names, 3, "?"), "?");
    assert_string_equal(WR_NAMES_GET(names, -1, "?"), "?");
    assert_string_equal(wr_names_get(names, 1, A_LAST, "x"), "x"); /* n bounds it */
    assert_null(wr_names_get(names, 3, 7, NULL));
}

#define TESTS(X) X(test_names)
WR_UNIT_MAIN(NULL, NULL, TESTS)
