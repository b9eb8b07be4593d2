/*
 * clock.c - the clocks (clock.h), each one clock_gettime. Seconds and
 * nanoseconds are combined in 64-bit integers: microseconds since the
 * epoch are about 1.8e15, far below 2^63. wr_clock_tv_ms converts a
 * duration for libevent's timers.
 */
#include "base/clock.h"

#include <time.h>

static struct timespec read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts;
}

int64_t wr_clock_mono_ms(void)
{
    struct timespec ts = read_clock(CLOCK_MONOTONIC);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t wr_clock_coarse_mono_ms(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts = read_clock(CLOCK_MONOTONIC_COARSE);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
#else
    return wr_clock_mono_ms();
#endif
}

int64_t wr_clock_mono_us(void)
{
    struct timespec ts = read_clock(CLOCK_MONOTONIC);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t wr_clock_wall_us(void)
{
    struct timespec ts = read_clock(CLOCK_REALTIME);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct timeval wr_clock_tv_ms(uint64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
    return tv;
}
