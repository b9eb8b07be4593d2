/*
 * test_procstat.c - this process's numbers from /proc/self are there and
 * sane: CPU time grows with work, memory and descriptors are counted, the
 * start time is in the recent past, the descriptor limit is the soft one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/procstat.h"
#include "unit_main.h"

static void test_read(void **state)
{
    (void)state;
    wr_procstat_t a, b;
    assert_int_equal(wr_procstat_read(&a), WR_OK);
    assert_true(a.resident_bytes > 100 * 1024);
    assert_true(a.open_fds >= 3);
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_true(a.max_fds == (rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur));
    double now = (double)time(NULL);
    assert_true(a.start_time_seconds > now - 3600 && a.start_time_seconds <= now + 1);

    int fd = open("/dev/null", O_RDONLY);
    assert_true(fd >= 0);
    volatile double x = 0;
    clock_t end = clock() + CLOCKS_PER_SEC / 20; /* 50 ms of CPU */
    while (clock() < end)
        x += 1;
    assert_true(x > 0); /* used: clang's -Wunused-but-set-variable (Release build) */
    assert_int_equal(wr_procstat_read(&b), WR_OK);
    close(fd);
    assert_true(b.open_fds == a.open_fds + 1);
    assert_true(b.cpu_seconds >= a.cpu_seconds + 0.02);
    assert_true(b.start_time_seconds == a.start_time_seconds);
}

#define TESTS(X) X(test_read)
WR_UNIT_MAIN(NULL, NULL, TESTS)
