/*
 * test_clock.c - the clocks: monotonic time never goes back and its two
 * units agree; wall time agrees with time(2) to the second.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

static void test_monotonic(void **state)
{
    (void)state;
    int64_t last = wr_clock_mono_us();
    for (int i = 0; i < 100000; i++) {
        int64_t now = wr_clock_mono_us();
        assert_true(now >= last);
        last = now;
    }
    int64_t ms = wr_clock_mono_ms(), us = wr_clock_mono_us();
    assert_true(us / 1000 >= ms);
    assert_true(us / 1000 - ms < 1000);
}

static void test_wall(void **state)
{
    (void)state;
    int64_t before = (int64_t)time(NULL);
    int64_t us = wr_clock_wall_us();
    int64_t after = (int64_t)time(NULL);
    /* time(2) may read a coarse clock that lags by a tick: one second of
     * slack either side. */
    assert_true(us / 1000000 >= before - 1);
    assert_true(us / 1000000 <= after + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monotonic),
        cmocka_unit_test(test_wall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
