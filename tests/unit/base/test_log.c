/*
 * test_log.c - log lines as text and JSON (escaping, fields, truncation
 * that keeps a line valid), the level filter, the access log, and reopen
 * after a rename (logrotate). The error log is pointed at a file through
 * wr_log_open, which takes over descriptor 2; the test keeps a copy of the
 * real stderr and puts it back. Last, the writer threads with an access
 * log nobody reads (K27).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "unit_main.h"

static char dir[] = "/tmp/wr-test-log-XXXXXX";
static char err_path[128], acc_path[128];
static int saved_stderr = -1;

/* The file's lines (malloc'd array of malloc'd strings, NULL-terminated). */
static char **lines_of(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    char **out = calloc(256, sizeof(char *));
    *n = 0;
    char buf[16384];
    while (f && *n < 255 && fgets(buf, sizeof(buf), f))
        out[(*n)++] = strdup(buf);
    if (f)
        fclose(f);
    return out;
}

static void free_lines(char **l)
{
    for (size_t i = 0; l[i]; i++)
        free(l[i]);
    free(l);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(err_path, sizeof(err_path), "%s/error.log", dir);
    snprintf(acc_path, sizeof(acc_path), "%s/access.log", dir);
    saved_stderr = dup(2);
    const char *what = NULL;
    return wr_log_open(err_path, acc_path, &what) == WR_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    wr_log_close();
    dup2(saved_stderr, 2);
    close(saved_stderr);
    unlink(err_path);
    unlink(acc_path);
    char old[160];
    snprintf(old, sizeof(old), "%s.1", acc_path);
    unlink(old);
    rmdir(dir);
    return 0;
}

static json_t *last_json(const char *path)
{
    size_t n;
    char **l = lines_of(path, &n);
    assert_true(n > 0);
    assert_true(strlen(l[n - 1]) > 1 && l[n - 1][strlen(l[n - 1]) - 1] == '\n');
    json_error_t e;
    json_t *o = json_loads(l[n - 1], 0, &e);
    if (!o)
        fail_msg("not JSON: %s (%s)", l[n - 1], e.text);
    free_lines(l);
    return o;
}

static void test_json_fields(void **state)
{
    (void)state;
    wr_log_setup(WR_LOG_INFO, true);
    wr_log_field_t f[] = {
        WR_LOG_S("queue", "q\"1\n"),
        WR_LOG_I("n", -42),
        WR_LOG_J("changed", "[\"a\",\"b\"]"),
        WR_LOG_S("none", NULL),
    };
    wr_log_fields(WR_LOG_INFO, "admin change", f, 4);
    json_t *o = last_json(err_path);
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "admin change");
    assert_string_equal(json_string_value(json_object_get(o, "level")), "info");
    const char *ts = json_string_value(json_object_get(o, "ts"));
    assert_non_null(ts);
    assert_int_equal(strlen(ts), 24); /* 2026-11-30T02:03:04.123Z */
    assert_int_equal(ts[10], 'T');
    assert_int_equal(ts[19], '.');
    assert_int_equal(ts[23], 'Z');
    assert_string_equal(json_string_value(json_object_get(o, "queue")), "q\"1\n");
    assert_int_equal(json_integer_value(json_object_get(o, "n")), -42);
    assert_int_equal(json_array_size(json_object_get(o, "changed")), 2);
    assert_true(json_is_null(json_object_get(o, "none")));
    json_decref(o);

    /* below the level: nothing */
    size_t before, after;
    free_lines(lines_of(err_path, &before));
    wr_debug("not shown");
    free_lines(lines_of(err_path, &after));
    assert_int_equal(before, after);

    /* a line longer than the limit stays one valid object */
    char *big = malloc(20000);
    memset(big, 'x', 19999);
    big[19999] = '\0';
    wr_log_field_t g[] = {WR_LOG_S("small", "kept"), WR_LOG_S("big", big)};
    wr_log_fields(WR_LOG_WARN, "big", g, 2);
    free(big);
    o = last_json(err_path);
    assert_string_equal(json_string_value(json_object_get(o, "small")), "kept");
    assert_null(json_object_get(o, "big"));
    assert_true(json_is_true(json_object_get(o, "truncated")));
    json_decref(o);
}

static void test_text(void **state)
{
    (void)state;
    wr_log_setup(WR_LOG_INFO, false);
    wr_log_field_t f[] = {WR_LOG_S("a", "bare"), WR_LOG_S("b", "two words"), WR_LOG_S("c", ""),
                          WR_LOG_I("d", 7), WR_LOG_S("e", NULL)};
    wr_log_fields(WR_LOG_ERROR, "hello", f, 5);
    size_t n;
    char **l = lines_of(err_path, &n);
    const char *line = l[n - 1];
    const char *rest = strstr(line, "Z level=error hello ");
    assert_non_null(rest);
    assert_string_equal(rest, "Z level=error hello a=bare b=\"two words\" c=\"\" d=7 e=-\n");
    free_lines(l);
}

static void test_access_and_reopen(void **state)
{
    (void)state;
    assert_true(wr_log_access_enabled());
    wr_log_setup(WR_LOG_ERROR, true); /* the access log ignores the level */
    wr_log_field_t f[] = {WR_LOG_S("route", "join"), WR_LOG_I("status", 200)};
    wr_log_access(f, 2);
    json_t *o = last_json(acc_path);
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "request");
    assert_string_equal(json_string_value(json_object_get(o, "route")), "join");
    assert_int_equal(json_integer_value(json_object_get(o, "status")), 200);
    json_decref(o);

    char old[160];
    snprintf(old, sizeof(old), "%s.1", acc_path);
    assert_int_equal(rename(acc_path, old), 0);
    const char *what = NULL;
    assert_int_equal(wr_log_reopen(&what), WR_OK);
    wr_log_setup(WR_LOG_INFO, false);
    wr_log_access(f, 2);
    size_t n_new, n_old;
    char **ln = lines_of(acc_path, &n_new), **lo = lines_of(old, &n_old);
    assert_int_equal(n_new, 1);
    assert_int_equal(n_old, 1);
    assert_non_null(strstr(ln[0], "Z route=join status=200\n"));
    free_lines(ln);
    free_lines(lo);
}

static void test_open_fails(void **state)
{
    (void)state;
    const char *what = NULL;
    assert_int_equal(wr_log_open(NULL, "/nonexistent-dir/x.log", &what), WR_EIO);
    assert_string_equal(what, "/nonexistent-dir/x.log");
    assert_true(wr_log_access_enabled()); /* the old one stays */
}

/* K27: with the writer threads, an access log nobody reads (a FIFO whose
 * reader never reads) blocks no caller; lines that do not fit are dropped
 * and counted, the error log says so once, and lines flow again (with a
 * line giving the count) once the FIFO is read. */
static void test_async_stalled_reader(void **state)
{
    (void)state;
    char fifo[160];
    snprintf(fifo, sizeof(fifo), "%s/access.fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int rfd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rfd >= 0);
    const char *what = NULL;
    assert_int_equal(wr_log_open(err_path, fifo, &what), WR_OK);
    wr_log_setup(WR_LOG_INFO, false);
    assert_int_equal(wr_log_async_start(), WR_OK);
    uint64_t dropped0 = wr_log_dropped();
    wr_log_field_t f[] = {WR_LOG_S("route", "join"), WR_LOG_S("pad", "................"
                                                                     "................")};
    int64_t t0 = wr_clock_mono_us(), worst = 0;
    for (int i = 0; i < 20000; i++) { /* ~2.4 MB: the FIFO holds 64 KiB */
        int64_t t = wr_clock_mono_us();
        wr_log_access(f, 2);
        if (wr_clock_mono_us() - t > worst)
            worst = wr_clock_mono_us() - t;
    }
    int64_t total = wr_clock_mono_us() - t0;
    assert_true(worst < 200000); /* no call waited for the reader */
    assert_true(total < 2000000);
    uint64_t dropped = wr_log_dropped() - dropped0;
    assert_true(dropped > 0 && dropped < 20000);
    assert_false(wr_log_flush(100)); /* the access log is stalled */
    /* the error log is not: its thread writes the notice meanwhile */
    size_t n, said = 0;
    char **l;
    for (int k = 0; k < 200 && said == 0; k++) {
        usleep(10000);
        l = lines_of(err_path, &n);
        for (size_t i = 0; i < n; i++)
            said += strstr(l[i], "level=warn log: lines are not being written") != NULL;
        free_lines(l);
    }
    assert_int_equal(said, 1); /* once per stall */

    /* the reader reads again: the next line gets through, with the count */
    char buf[65536];
    bool found = false;
    int64_t deadline = wr_clock_mono_ms() + 5000;
    wr_log_field_t m[] = {WR_LOG_S("route", "marker-after")};
    bool sent = false;
    while (!found && wr_clock_mono_ms() < deadline) {
        ssize_t r = read(rfd, buf, sizeof(buf) - 1);
        if (r > 0) {
            buf[r] = '\0';
            found = sent && strstr(buf, "route=marker-after") != NULL;
            continue;
        }
        if (!sent && wr_log_flush(0)) { /* everything queued before is out */
            wr_log_access(m, 1);
            sent = true;
        }
        usleep(1000);
    }
    assert_true(found);
    assert_true(wr_log_flush(2000));
    l = lines_of(err_path, &n);
    char want[96];
    snprintf(want, sizeof(want), "written again after a stall log=\"access log\" dropped=%llu",
             (unsigned long long)dropped);
    bool counted = false;
    for (size_t i = 0; i < n; i++)
        counted = counted || strstr(l[i], want) != NULL;
    free_lines(l);
    assert_true(counted);
    assert_true(wr_log_async_stop(2000));
    wr_log_close();
    close(rfd);
    unlink(fifo);
}

#define TESTS(X)                                                                                   \
    X(test_json_fields)                                                                            \
    X(test_text)                                                                                   \
    X(test_access_and_reopen)                                                                      \
    X(test_open_fails)                                                                             \
    X(test_async_stalled_reader)
WR_UNIT_MAIN(setup, teardown, TESTS)
