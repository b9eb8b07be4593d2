/*
 * clock.h - the process's clocks, read in one place.
 *
 * Monotonic time (CLOCK_MONOTONIC) measures intervals: timeouts, rate
 * limiter refills, breaker windows, token expiry in the embedded store. It
 * never steps, but its zero is arbitrary (boot). Wall time (the realtime
 * clock, microseconds since the Unix epoch) is for what must be comparable
 * across processes or restarts: arrival scores, timestamps in logs and
 * snapshots. The two must not be mixed in one subtraction.
 *
 * Each call reads the clock (vDSO, no system call on Linux); nothing is
 * cached. Pure: no state. The coarse monotonic clock is the monotonic
 * clock as of the last tick: it may be subtracted from the fine one with
 * an error under one tick.
 */
#ifndef WR_CLOCK_H
#define WR_CLOCK_H

#include <stdint.h>
#include <sys/time.h>

/* Monotonic time in milliseconds. */
int64_t wr_clock_mono_ms(void);

/* Monotonic time in microseconds. */
int64_t wr_clock_mono_us(void);

/* Monotonic time in milliseconds read from CLOCK_MONOTONIC_COARSE: the
 * same clock as wr_clock_mono_ms as of the kernel's last tick (behind it
 * by less than one tick, 1-10 ms; never ahead), at a fraction of the cost
 * (no counter read). For what a tick's error cannot change: the breaker's
 * windows and latencies (store_breaker.c). */
int64_t wr_clock_coarse_mono_ms(void);

/* Wall-clock time in microseconds since the Unix epoch. */
int64_t wr_clock_wall_us(void);

/* A duration of ms milliseconds as a struct timeval (libevent timers). */
struct timeval wr_clock_tv_ms(uint64_t ms);

#endif
