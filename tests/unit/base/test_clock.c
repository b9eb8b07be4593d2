/*
 * test_clock.c - the clocks: monotonic time never goes back and its two
 * units agree; the coarse one trails it by under a tick; wall time agrees with time(2) to the
 * second; durations convert to struct timeval.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "base/clock.h"
#include "unit_main.h"

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

/* The coarse clock is the monotonic clock as of the last tick: never
 * ahead of a fine read after it, behind one before it by under a tick
 * (10 ms at HZ=100, the coarsest; 50 ms of slack for a busy machine). */
static void test_coarse(void **state)
{
    (void)state;
    int64_t last = wr_clock_coarse_mono_ms();
    for (int i = 0; i < 10000; i++) {
        int64_t before = wr_clock_mono_ms();
        int64_t c = wr_clock_coarse_mono_ms();
        int64_t after = wr_clock_mono_ms();
        assert_true(c >= last);
        assert_true(c <= after);
        assert_true(before - c < 50);
        last = c;
    }
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

static void test_timeval(void **state)
{
    (void)state;
    struct timeval tv = wr_clock_tv_ms(0);
    assert_int_equal(tv.tv_sec, 0);
    assert_int_equal(tv.tv_usec, 0);
    tv = wr_clock_tv_ms(1999);
    assert_int_equal(tv.tv_sec, 1);
    assert_int_equal(tv.tv_usec, 999000);
    tv = wr_clock_tv_ms(86400000);
    assert_int_equal(tv.tv_sec, 86400);
    assert_int_equal(tv.tv_usec, 0);
}

#define TESTS(X)                                                                                   \
    X(test_monotonic)                                                                              \
    X(test_coarse)                                                                                 \
    X(test_wall)                                                                                   \
    X(test_timeval)
WR_UNIT_MAIN(NULL, NULL, TESTS)
