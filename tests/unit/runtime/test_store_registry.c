/*
 * test_store_registry.c - the store registry (store_registry.h) and the one
 * Redis URL grammar (redis_url.h).
 *
 * The rejected URLs and their messages are those of config.c's --store
 * check (tests/unit/test_config.c), so config can be wired to
 * wr_store_check_url without a test changing; the central check is that
 * wr_store_check_url and wr_store_open_url agree on every URL of the list.
 * Opening a Redis URL only starts a connection in the background (to port
 * 1 of 127.0.0.1 or a socket that does not exist; the loop is never run),
 * and the store is closed at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <event2/event.h>
#include <string.h>

#include "store/redis/redis_url.h"
#include "runtime/store_registry.h"
#include "unit_main.h"

#define P10  "pppppppppp"
#define P100 P10 P10 P10 P10 P10 P10 P10 P10 P10 P10

static const char *const good[] = {
    "memory",
    "redis://127.0.0.1:1",
    "redis://127.0.0.1:1/2",
    "redis://127.0.0.1:01/0",
    "redis://127.0.0.1:1/65535",
    "redis://[::1]:6379",
    "rediss://127.0.0.1:1/0",
    "redis-sentinel://127.0.0.1:1,127.0.0.1:2/mymaster",
    "unix:///tmp/r.sock",
    "unix:///tmp/r.sock?db=3",
    "unix:///" P100, /* 101 bytes after unix:// */
    "redis-cluster://127.0.0.1:1",
    "redis-cluster://app:pw@127.0.0.1:1,[::1]:2,h.example:3",
    "rediss-cluster://127.0.0.1:1",
};

static const char *const bad[] = {
    "",
    "Memory",
    "memory://",
    "mysql://h:1",
    "http://127.0.0.1:6379",
    "redis://",
    "redis://127.0.0.1",
    "redis://h:0",
    "redis://:6379",
    "redis://h:+80",
    "redis://127.0.0.1:70000",
    "redis://127.0.0.1:6379x",
    "redis://h:6379/x",
    "redis://h:6379/",
    "redis://h:6379/65536",
    "unix://",
    "unix:///",
    "unix://relative",
    "redis-cluster://",
    "redis-cluster://h:1/0",
    "redis-cluster://h:1,",
    "rediss-cluster://h",
    "unix:///a b",
    "unix:///tmp/x.sock?db=",
    "unix:///tmp/x.sock?db=-1",
    "unix:///tmp/x.sock?foo=1",
    "unix:///" P100 "ppppppp", /* 108 bytes after unix://: too long for sun_path */
};

/* Each backend once, in table order; the URL schemes of one backend share
 * its name; cap bounds what is written, not the count. */
static void t_backends(void **state)
{
    (void)state;
    const char *names[8] = {0};
    assert_int_equal(wr_store_registry_backends(names, 8), 3);
    assert_string_equal(names[0], "memory");
    assert_string_equal(names[1], "redis");
    assert_string_equal(names[2], "redis-cluster");
    const char *one[1] = {0};
    assert_int_equal(wr_store_registry_backends(one, 1), 3);
    assert_string_equal(one[0], "memory");
    assert_int_equal(wr_store_registry_backends(NULL, 0), 3);
    assert_string_equal(wr_store_registry_find("rediss://h:1")->backend, "redis");
    assert_string_equal(wr_store_registry_find("unix:///x")->backend, "redis");
    assert_string_equal(wr_store_registry_find("memory")->backend, "memory");
}

static void t_find(void **state)
{
    (void)state;
    assert_string_equal(wr_store_registry_find("memory")->scheme, "memory");
    assert_string_equal(wr_store_registry_find("memory")->title, "memory (embedded)");
    assert_string_equal(wr_store_registry_find("redis://h:1")->scheme, "redis://");
    assert_null(wr_store_registry_find("redis://h:1")->title);
    assert_string_equal(wr_store_registry_find("unix:///x")->scheme, "unix://");
    assert_null(wr_store_registry_find("memory://"));
    assert_null(wr_store_registry_find("Memory"));
    assert_string_equal(wr_store_registry_find("rediss://h:1")->scheme, "rediss://");
    assert_string_equal(wr_store_registry_find("redis-sentinel://h:1/m")->scheme,
                        "redis-sentinel://");
    assert_null(wr_store_registry_find("redisx://h:1"));
    assert_string_equal(wr_store_registry_find("redis-cluster://h:1")->scheme, "redis-cluster://");
    assert_string_equal(wr_store_registry_find("redis-cluster://h:1")->backend, "redis-cluster");
    assert_string_equal(wr_store_registry_find("rediss-cluster://h:1")->scheme,
                        "rediss-cluster://");
    assert_string_equal(wr_store_registry_find("rediss-cluster://h:1")->backend, "redis-cluster");
    assert_null(wr_store_registry_find(""));
    assert_null(wr_store_registry_find(NULL));
}

static void t_check_messages(void **state)
{
    (void)state;
    char err[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        strcpy(err, "x");
        if (wr_store_check_url(good[i], err, sizeof err) != WR_OK)
            fail_msg("%s: %s", good[i], err);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(wr_store_check_url(bad[i], err, sizeof err), WR_EINVAL);
        if (err[0] != '\'' && strcmp(err, "unix socket path is longer than 107 bytes") != 0)
            fail_msg("%s: %s", bad[i], err);
    }
    assert_int_equal(wr_store_check_url("redis://h_x.y-Z9:65535/0", err, sizeof err), WR_OK);
    wr_store_check_url("redis://h", err, sizeof err);
    assert_string_equal(err, "'redis://h' must be redis://HOST:PORT[/DB] (port 1..65535)");
    wr_store_check_url("redis://h:1/65536", err, sizeof err);
    assert_string_equal(err, "'redis://h:1/65536': the database must be a number 0..65535");
    wr_store_check_url("unix://x", err, sizeof err);
    assert_string_equal(err, "'unix://x' must be unix:///ABSOLUTE/PATH");
    wr_store_check_url("mysql://h:1", err, sizeof err);
    assert_string_equal(
        err, "'mysql://h:1' must be memory, redis://HOST:PORT[/DB], rediss://HOST:PORT[/DB], "
             "redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER[/DB], unix:///PATH, "
             "redis-cluster://HOST:PORT[,HOST:PORT...] or "
             "rediss-cluster://HOST:PORT[,HOST:PORT...]");
    wr_store_check_url("redis-cluster://h:1/0", err, sizeof err);
    assert_string_equal(err, "'redis-cluster://h:1/0' must be redis-cluster://HOST:PORT[,HOST:"
                             "PORT...] (port 1..65535, no DB)");
    /* a URL no row serves is quoted without its password */
    wr_store_check_url("mysql://app:s3cret@h:1", err, sizeof err);
    assert_string_equal(
        err,
        "'mysql://app:***@h:1' must be memory, redis://HOST:PORT[/DB], rediss://HOST:PORT[/DB], "
        "redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER[/DB], unix:///PATH, "
        "redis-cluster://HOST:PORT[,HOST:PORT...] or rediss-cluster://HOST:PORT[,HOST:PORT...]");
    /* a short buffer is cut, not overrun; NULL is allowed */
    char small[8];
    assert_int_equal(wr_store_check_url("mysql://h:1", small, sizeof small), WR_EINVAL);
    assert_string_equal(small, "'mysql:");
    assert_int_equal(wr_store_check_url("mysql://h:1", NULL, 0), WR_EINVAL);
    assert_int_equal(wr_store_check_url(NULL, NULL, 0), WR_EINVAL);
}

/* The check and the open give the same verdict on every URL. */
static void t_check_and_open_agree(void **state)
{
    (void)state;
    struct event_base *base = event_base_new();
    assert_non_null(base);
    const char *const *lists[2] = {good, bad};
    size_t lens[2] = {sizeof good / sizeof good[0], sizeof bad / sizeof bad[0]};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lens[l]; i++) {
            const char *url = lists[l][i];
            wr_store_t *s = NULL;
            wr_err_t check = wr_store_check_url(url, NULL, 0);
            wr_err_t open = wr_store_open_url(base, url, NULL, &s);
            if ((check == WR_OK) != (open == WR_OK) || (check == WR_OK) != (l == 0))
                fail_msg("%s: check %s, open %s", url, wr_errname(check), wr_errname(open));
            if (open == WR_OK)
                assert_non_null(s);
            else
                assert_int_equal(open, WR_EINVAL);
            wr_store_close(s);
        }
    }
    event_base_free(base);
}

static void t_redis_url_endpoint(void **state)
{
    (void)state;
    wr_redis_url_t ep;
    assert_int_equal(wr_redis_url_parse("redis://10.0.0.5:6380/2", &ep, NULL, 0), WR_OK);
    assert_false(ep.is_unix);
    assert_string_equal(ep.host, "10.0.0.5");
    assert_int_equal(ep.port, 6380);
    assert_int_equal(ep.db, 2);
    assert_int_equal(wr_redis_url_parse("redis://h:1", &ep, NULL, 0), WR_OK);
    assert_int_equal(ep.db, -1);
    assert_int_equal(wr_redis_url_parse("unix:///run/r.sock?db=7", &ep, NULL, 0), WR_OK);
    assert_true(ep.is_unix);
    assert_string_equal(ep.path, "/run/r.sock");
    assert_int_equal(ep.db, 7);
    assert_int_equal(wr_redis_url_parse("unix:///run/r.sock", &ep, NULL, 0), WR_OK);
    assert_int_equal(ep.db, -1);
    /* a refused URL leaves *out alone */
    memset(&ep, 0x5a, sizeof ep);
    assert_int_equal(wr_redis_url_parse("redis://h:1/x", &ep, NULL, 0), WR_EINVAL);
    assert_int_equal(ep.port, 0x5a5a5a5a);
    /* not a Redis URL at all */
    char err[256];
    assert_int_equal(wr_redis_url_parse("memory", &ep, err, sizeof err), WR_EINVAL);
    assert_string_equal(err, "'memory' must be redis://HOST:PORT[/DB], rediss://HOST:PORT[/DB], "
                             "redis-sentinel://HOST:PORT[,...]/MASTER[/DB], unix:///PATH or "
                             "redis-cluster://HOST:PORT[,...]");
}

/* Issue 36: how a --store value is shown (main.c names no backend): the
 * row's redact column, the generic rule for a URL no row serves. */
static void t_url_shown(void **state)
{
    (void)state;
    char out[WR_STORE_URL_SHOWN_MAX];
    assert_string_equal(wr_store_url_shown("memory", out, sizeof out), "memory");
    assert_string_equal(wr_store_url_shown("redis://alice:secret@h:6379/2", out, sizeof out),
                        "redis://alice:***@h:6379/2");
    assert_string_equal(wr_store_url_shown("rediss-cluster://:pw@h:1,h:2", out, sizeof out),
                        "rediss-cluster://:***@h:1,h:2");
    assert_string_equal(wr_store_url_shown("redis://h:6379", out, sizeof out), "redis://h:6379");
    /* no row: a typo in the scheme never prints the password */
    assert_null(strstr(wr_store_url_shown("rdis://bob:hunter2@h:1", out, sizeof out), "hunter2"));
    assert_non_null(strstr(out, "h:1"));
    char small[8];
    assert_int_equal(strlen(wr_store_url_shown("redis://a:b@host:1", small, sizeof small)), 7);
    assert_non_null(wr_store_registry_find("memory"));
    assert_null(wr_store_registry_find("memory")->redact);
    assert_non_null(wr_store_registry_find("redis://h:1")->redact);
}

#define TESTS(X)                                                                                   \
    X(t_find)                                                                                      \
    X(t_url_shown)                                                                                 \
    X(t_backends)                                                                                  \
    X(t_check_messages)                                                                            \
    X(t_check_and_open_agree)                                                                      \
    X(t_redis_url_endpoint)
WR_UNIT_MAIN(NULL, NULL, TESTS)
