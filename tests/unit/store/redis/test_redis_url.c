/*
 * test_redis_url.c - the Redis URL grammar (redis_url.h): every form with
 * real values, the usual mistakes, and the rule that no message ever holds
 * the password (every refused URL below carries one, raw or encoded).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "store/redis/redis_url.h"
#include "unit_main.h"

static wr_redis_url_t parse_ok(const char *url)
{
    wr_redis_url_t u;
    char err[256] = "";
    if (wr_redis_url_parse(url, &u, err, sizeof err) != WR_OK)
        fail_msg("%s: %s", url, err);
    assert_string_equal(err, "");
    return u;
}

/* url is refused with a message that says says. */
static void expect_refused(const char *url, const char *says)
{
    wr_redis_url_t u;
    char err[1024] = "";
    if (wr_redis_url_parse(url, &u, err, sizeof err) != WR_EINVAL)
        fail_msg("accepted: %s", url);
    if (!strstr(err, says))
        fail_msg("%s: message \"%s\" lacks \"%s\"", url, err, says);
}

/* a is host:port. */
static void assert_addr(const wr_redis_url_addr_t *a, const char *host, int port)
{
    assert_string_equal(a->host, host);
    assert_int_equal(a->port, port);
}

static void t_tcp(void **state)
{
    (void)state;
    wr_redis_url_t u = parse_ok("redis://127.0.0.1:6379");
    assert_int_equal(u.kind, WR_REDIS_URL_TCP);
    assert_false(u.is_unix);
    assert_false(u.tls);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 6379);
    assert_int_equal(u.db, -1);
    assert_false(u.has_user);
    assert_false(u.has_password);

    u = parse_ok("redis://redis-1.internal.example.com:6380/15");
    assert_string_equal(u.host, "redis-1.internal.example.com");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 15);

    u = parse_ok("redis://h_x.y-Z9:65535/0");
    assert_int_equal(u.port, 65535);
    assert_int_equal(u.db, 0);
    u = parse_ok("redis://h:01/65535");
    assert_int_equal(u.port, 1);
    assert_int_equal(u.db, 65535);

    u = parse_ok("rediss://cache.example.net:6380/2");
    assert_int_equal(u.kind, WR_REDIS_URL_TLS);
    assert_true(u.tls);
    assert_string_equal(u.host, "cache.example.net");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 2);
}

static void t_credentials(void **state)
{
    (void)state;
    wr_redis_url_t u = parse_ok("redis://:s3cret@10.0.0.5:6379");
    assert_false(u.has_user);
    assert_true(u.has_password);
    assert_string_equal(u.password, "s3cret");
    assert_string_equal(u.host, "10.0.0.5");

    u = parse_ok("redis://alice:wonder land@10.0.0.5:6379/0");
    assert_true(u.has_user);
    assert_string_equal(u.user, "alice");
    assert_string_equal(u.password, "wonder land");
    assert_int_equal(u.db, 0);

    /* percent-encoded '@', ':', '/', '%' and a UTF-8 letter */
    u = parse_ok("rediss://app%2Dwriter:p%40ss%3Aw%2Fd%25%C3%A9@h:6380");
    assert_string_equal(u.user, "app-writer");
    assert_string_equal(u.password, "p@ss:w/d%\xc3\xa9");

    /* a raw '@' (and ':' and '/') in the password: the last '@' ends it */
    u = parse_ok("redis://bob:p@ss:w/rd@h:1/3");
    assert_string_equal(u.user, "bob");
    assert_string_equal(u.password, "p@ss:w/rd");
    assert_string_equal(u.host, "h");
    assert_int_equal(u.db, 3);

    /* an empty password is no password; an empty user is the default user */
    u = parse_ok("redis://:@h:1");
    assert_false(u.has_user);
    assert_false(u.has_password);
    u = parse_ok("redis://carol:@h:1");
    assert_true(u.has_user);
    assert_false(u.has_password);
}

static void t_ipv6(void **state)
{
    (void)state;
    wr_redis_url_t u = parse_ok("redis://[::1]:6379");
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 6379);
    u = parse_ok("redis://:pw@[2001:db8::10]:6380/4");
    assert_string_equal(u.host, "2001:db8::10");
    assert_int_equal(u.db, 4);
    assert_string_equal(u.password, "pw");
    u = parse_ok("redis://[::ffff:192.0.2.1]:1");
    assert_string_equal(u.host, "::ffff:192.0.2.1");
    u = parse_ok("rediss://[fe80::1%25eth0]:6379");
    assert_string_equal(u.host, "fe80::1%eth0");

    char b[64];
    assert_string_equal(wr_redis_url_addr_format("::1", 6379, b, sizeof b), "[::1]:6379");
    assert_string_equal(wr_redis_url_addr_format("10.0.0.1", 1, b, sizeof b), "10.0.0.1:1");
    assert_string_equal(wr_redis_url_addr_format("::1", 6379, b, 5), "[::1");
}

static void t_sentinel(void **state)
{
    (void)state;
    wr_redis_url_t u =
        parse_ok("redis-sentinel://s1.example:26379,[::1]:26380,10.0.0.3:26381/mymaster/3");
    assert_int_equal(u.kind, WR_REDIS_URL_SENTINEL);
    assert_int_equal(u.nsentinels, 3);
    assert_addr(&u.sentinels[0], "s1.example", 26379);
    assert_addr(&u.sentinels[1], "::1", 26380);
    assert_addr(&u.sentinels[2], "10.0.0.3", 26381);
    assert_string_equal(u.master, "mymaster");
    assert_int_equal(u.db, 3);
    assert_string_equal(u.host, "");

    u = parse_ok("redis-sentinel://app:pw%2C1@s1:26379/prod-main.1");
    assert_int_equal(u.nsentinels, 1);
    assert_string_equal(u.user, "app");
    assert_string_equal(u.password, "pw,1");
    assert_string_equal(u.master, "prod-main.1");
    assert_int_equal(u.db, -1);

    /* 16 sentinels is the most */
    char url[1024] = "redis-sentinel://";
    for (int i = 0; i < WR_REDIS_URL_SENTINELS_MAX; i++)
        snprintf(url + strlen(url), sizeof url - strlen(url), "%ss%d:%d", i ? "," : "", i,
                 26379 + i);
    strcat(url, "/m");
    u = parse_ok(url);
    assert_int_equal(u.nsentinels, WR_REDIS_URL_SENTINELS_MAX);
    assert_addr(&u.sentinels[15], "s15", 26394);
    url[strlen(url) - 2] = '\0';
    strcat(url, ",s16:1/m");
    expect_refused(url, "more than 16 sentinels");
}

static void t_cluster(void **state)
{
    (void)state;
    wr_redis_url_t u = parse_ok("redis-cluster://n1.example:7000,[::1]:7001,10.0.0.3:7002");
    assert_int_equal(u.kind, WR_REDIS_URL_CLUSTER);
    assert_false(u.tls);
    assert_int_equal(u.nseeds, 3);
    assert_addr(&u.seeds[0], "n1.example", 7000);
    assert_addr(&u.seeds[1], "::1", 7001);
    assert_addr(&u.seeds[2], "10.0.0.3", 7002);
    assert_string_equal(u.host, "n1.example"); /* the first seed */
    assert_int_equal(u.port, 7000);
    assert_int_equal(u.db, -1);
    assert_false(u.has_password);

    u = parse_ok("rediss-cluster://app:p%40ss@[fe80::1%25eth0]:7000");
    assert_int_equal(u.kind, WR_REDIS_URL_CLUSTER);
    assert_true(u.tls);
    assert_int_equal(u.nseeds, 1);
    assert_string_equal(u.seeds[0].host, "fe80::1%eth0");
    assert_string_equal(u.user, "app");
    assert_string_equal(u.password, "p@ss");

    char url[1024] = "redis-cluster://";
    for (int i = 0; i < WR_REDIS_URL_SEEDS_MAX; i++)
        snprintf(url + strlen(url), sizeof url - strlen(url), "%sn%d:%d", i ? "," : "", i,
                 7000 + i);
    u = parse_ok(url);
    assert_int_equal(u.nseeds, WR_REDIS_URL_SEEDS_MAX);
    strcat(url, ",n16:1");
    expect_refused(url, "more than 16 seeds");
}

static void t_unix(void **state)
{
    (void)state;
    wr_redis_url_t u = parse_ok("unix:///run/redis/redis.sock");
    assert_int_equal(u.kind, WR_REDIS_URL_UNIX);
    assert_true(u.is_unix);
    assert_string_equal(u.path, "/run/redis/redis.sock");
    assert_int_equal(u.db, -1);
    u = parse_ok("unix:///run/r.sock?db=7");
    assert_string_equal(u.path, "/run/r.sock");
    assert_int_equal(u.db, 7);
    u = parse_ok("unix://:pw%40x@/run/r.sock");
    assert_string_equal(u.password, "pw@x");
    assert_string_equal(u.path, "/run/r.sock");
    u = parse_ok("unix:///tmp/a@b.sock"); /* no authority: the '@' is the path's */
    assert_false(u.has_password);
    assert_string_equal(u.path, "/tmp/a@b.sock");
}

/* Refused URLs, each with the password SECRETPW (raw or encoded), and a
 * piece the message must contain. */
static const struct {
    const char *url;
    const char *says;
} bad[] = {
    {"", "must be redis://"},
    {"memory", "'memory' must be redis://HOST:PORT[/DB], rediss://"},
    {"http://:SECRETPW@h:1", "'http://:***@h:1' must be redis://"},
    {"redis://:SECRETPW@h", "'redis://:***@h' must be redis://HOST:PORT[/DB] (port 1..65535)"},
    {"redis://:SECRETPW@h:", "must be redis://HOST:PORT"},
    {"redis://:SECRETPW@h:0", "must be redis://HOST:PORT"},
    {"redis://:SECRETPW@h:65536", "must be redis://HOST:PORT"},
    {"redis://:SECRETPW@h:+80", "must be redis://HOST:PORT"},
    {"redis://:SECRETPW@h:6379x", "must be redis://HOST:PORT"},
    {"redis://:SECRETPW@h:99999999999999999999", "must be redis://HOST:PORT"},
    {"rediss://u:SECRETPW@h", "'rediss://u:***@h' must be rediss://HOST:PORT"},
    {"redis://:SECRETPW@h!:1", "must be redis://HOST:PORT"},
    {"redis://:SECRETPW@:6379", "'redis://:***@:6379': empty host"},
    {"redis://:6379", "empty host"},
    {"redis://", "empty host"},
    {"redis://:SECRETPW@[::1:6379", "IPv6 address without a closing ']'"},
    {"redis://:SECRETPW@[::1", "IPv6 address without a closing ']'"},
    {"redis://:SECRETPW@[::1]6379", "must be redis://HOST:PORT"},
    {"redis://:SECRETPW@[]:1", "'[...]' must hold an IPv6 address"},
    {"redis://:SECRETPW@[zz::1]:1", "'zz::1' is not an IPv6 address"},
    {"redis://:SECRETPW@[127.0.0.1]:1", "is not an IPv6 address"},
    {"redis://:SECRETPW@[fe80::1%25]:1", "bad IPv6 zone"},
    {"redis://:SECRETPW@h:1/", "the database must be a number 0..65535"},
    {"redis://:SECRETPW@h:1/x", "the database must be a number 0..65535"},
    {"redis://:SECRETPW@h:1/-1", "the database must be a number 0..65535"},
    {"redis://:SECRETPW@h:1/65536", "'redis://:***@h:1/65536': the database must be"},
    {"redis://:SECRETPW@h:1/0?x=1", "the database must be a number"},
    {"redis://SECRETPW@h:1", "'redis://***@h:1': the credentials must be USER:PASSWORD@"},
    {"redis://:SECRET%4PW@h:1", "bad percent-encoding in the password"},
    {"redis://:SECRET%GGPW@h:1", "bad percent-encoding in the password"},
    {"redis://:SECRETPW%00@h:1", "bad percent-encoding in the password"},
    {"redis://:SECRETPW%@h:1", "bad percent-encoding in the password"},
    {"redis://a%zz:SECRETPW@h:1", "bad percent-encoding in the user name"},
    {"redis-sentinel://:SECRETPW@s1:26379", "names no master"},
    {"redis-sentinel://:SECRETPW@s1:26379/", "names no master"},
    {"redis-sentinel://:SECRETPW@s1:26379//0", "names no master"},
    {"redis-sentinel://:SECRETPW@s1:26379,/m", "empty host"},
    {"redis-sentinel://:SECRETPW@s1/m", "must be redis-sentinel://HOST:PORT"},
    {"redis-sentinel://:SECRETPW@s1:1/my master", "the master name must be"},
    {"redis-sentinel://:SECRETPW@s1:1/m/16x", "the database must be"},
    {"redis-cluster://:SECRETPW@h:1/0", "'redis-cluster://:***@h:1/0' must be redis-cluster://"},
    {"redis-cluster://:SECRETPW@h:1,", "empty host"},
    {"redis-cluster://:SECRETPW@h", "must be redis-cluster://HOST:PORT[,HOST:PORT...]"},
    {"rediss-cluster://:SECRETPW@h:1?x", "must be rediss-cluster://HOST:PORT"},
    {"unix://", "must be unix:///ABSOLUTE/PATH"},
    {"unix:///", "must be unix:///ABSOLUTE/PATH"},
    {"unix://relative", "must be unix:///ABSOLUTE/PATH"},
    {"unix:///a b", "must be unix:///ABSOLUTE/PATH"},
    {"unix://:SECRETPW@relative", "'unix://:***@relative' must be unix:///ABSOLUTE/PATH"},
    {"unix:///tmp/x.sock?db=", "the only option is ?db=N"},
    {"unix:///tmp/x.sock?foo=1", "the only option is ?db=N"},
};

static void t_refused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wr_redis_url_t u;
        char err[512];
        memset(&u, 0x5a, sizeof u);
        err[0] = 'x';
        if (wr_redis_url_parse(bad[i].url, &u, err, sizeof err) != WR_EINVAL)
            fail_msg("accepted: %s", bad[i].url);
        if (!strstr(err, bad[i].says))
            fail_msg("%s: message \"%s\" lacks \"%s\"", bad[i].url, err, bad[i].says);
        if (strstr(err, "SECRET") || strstr(err, "PW@"))
            fail_msg("%s: the message shows the password: %s", bad[i].url, err);
        assert_int_equal(u.port, 0x5a5a5a5a); /* a refused URL leaves *out alone */
        /* no out, no err */
        assert_int_equal(wr_redis_url_parse(bad[i].url, NULL, NULL, 0), WR_EINVAL);
    }
    assert_int_equal(wr_redis_url_parse(NULL, NULL, NULL, 0), WR_EINVAL);
    /* a short buffer is cut, not overrun */
    char small[8];
    assert_int_equal(wr_redis_url_parse("redis://h", NULL, small, sizeof small), WR_EINVAL);
    assert_string_equal(small, "'redis:");
    /* messages of the old grammar's check kept word for word */
    char err[256];
    wr_redis_url_parse("redis://h", NULL, err, sizeof err);
    assert_string_equal(err, "'redis://h' must be redis://HOST:PORT[/DB] (port 1..65535)");
    wr_redis_url_parse("redis://h:1/65536", NULL, err, sizeof err);
    assert_string_equal(err, "'redis://h:1/65536': the database must be a number 0..65535");
    wr_redis_url_parse("unix://x", NULL, err, sizeof err);
    assert_string_equal(err, "'unix://x' must be unix:///ABSOLUTE/PATH");
}

static void t_lengths(void **state)
{
    (void)state;
    char err[1024]; /* the quoted URL holds the 256-byte user and host */
    static char url[WR_REDIS_URL_MAX + 64];
    static char pw[WR_REDIS_URL_PASSWORD_MAX + 2];
    wr_redis_url_t u;

    /* over-long input: refused before anything is read, not quoted */
    memset(url, 0, sizeof url);
    strcpy(url, "redis://:");
    memset(url + strlen(url), 'S', WR_REDIS_URL_MAX);
    assert_int_equal(wr_redis_url_parse(url, &u, err, sizeof err), WR_EINVAL);
    assert_string_equal(err, "the Redis URL is longer than 4096 bytes");

    /* a 511-byte password is the most */
    memset(pw, 'S', WR_REDIS_URL_PASSWORD_MAX);
    pw[WR_REDIS_URL_PASSWORD_MAX] = '\0';
    snprintf(url, sizeof url, "redis://:%s@h:1", pw);
    u = parse_ok(url);
    assert_int_equal(strlen(u.password), WR_REDIS_URL_PASSWORD_MAX);
    snprintf(url, sizeof url, "redis://:%sS@h:1", pw);
    assert_int_equal(wr_redis_url_parse(url, &u, err, sizeof err), WR_EINVAL);
    assert_non_null(strstr(err, "the password is longer than 511 bytes"));
    assert_null(strstr(err, "SSS"));
    /* encoded, 511 decoded bytes fit: "%41" x 511 */
    strcpy(url, "redis://:");
    for (int i = 0; i < WR_REDIS_URL_PASSWORD_MAX; i++)
        strcat(url, "%41");
    strcat(url, "@h:1");
    u = parse_ok(url);
    assert_int_equal(strlen(u.password), WR_REDIS_URL_PASSWORD_MAX);
    assert_int_equal(u.password[0], 'A');

    /* a field of its maximum length passes; one byte more is refused */
    static const struct {
        const char *pre, *post; /* the URL around the field */
        size_t max;
        const char *says;
        size_t off; /* the parsed field, as an offset in wr_redis_url_t */
    } fields[] = {
        {"redis://", ":pw@h:1", WR_REDIS_URL_USER_MAX, "the user name is longer than 255 bytes",
         offsetof(wr_redis_url_t, user)},
        {"redis://", ":1", WR_REDIS_URL_HOST_MAX, "the host is longer than 255 bytes",
         offsetof(wr_redis_url_t, host)},
        {"unix:///", "", WR_REDIS_URL_PATH_MAX - 1, "unix socket path is longer than 107 bytes",
         offsetof(wr_redis_url_t, path)},
        {"redis-sentinel://s:1/", "", WR_REDIS_URL_MASTER_MAX,
         "the master name is longer than 255 bytes", offsetof(wr_redis_url_t, master)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        char field[WR_REDIS_URL_HOST_MAX + 2];
        memset(field, 'f', fields[i].max + 1);
        field[fields[i].max + 1] = '\0';
        snprintf(url, sizeof url, "%s%s%s", fields[i].pre, field, fields[i].post);
        expect_refused(url, fields[i].says);
        field[fields[i].max] = '\0';
        snprintf(url, sizeof url, "%s%s%s", fields[i].pre, field, fields[i].post);
        u = parse_ok(url);
        const char *got = (const char *)&u + fields[i].off;
        assert_int_equal(strlen(got) - (got[0] == '/'), fields[i].max);
    }
}

static void t_env_password(void **state)
{
    (void)state;
    char err[128];
    wr_redis_url_t u = parse_ok("redis://alice:fromurl@h:1");
    assert_int_equal(wr_redis_url_set_env_password(&u, NULL, err, sizeof err), WR_OK);
    assert_string_equal(u.password, "fromurl");
    assert_int_equal(wr_redis_url_set_env_password(&u, "", err, sizeof err), WR_OK);
    assert_string_equal(u.password, "fromurl");
    /* the environment wins, taken as is (no percent-decoding); the user stays */
    assert_int_equal(wr_redis_url_set_env_password(&u, "env%40pw", err, sizeof err), WR_OK);
    assert_string_equal(u.password, "env%40pw");
    assert_true(u.has_password);
    assert_string_equal(u.user, "alice");

    u = parse_ok("unix:///run/r.sock");
    assert_false(u.has_password);
    assert_int_equal(wr_redis_url_set_env_password(&u, "p w", NULL, 0), WR_OK);
    assert_true(u.has_password);
    assert_string_equal(u.password, "p w");

    char big[WR_REDIS_URL_PASSWORD_MAX + 2];
    memset(big, 'S', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(wr_redis_url_set_env_password(&u, big, err, sizeof err), WR_EINVAL);
    assert_string_equal(err, "WAITROOM_REDIS_PASSWORD is longer than 511 bytes");
    assert_string_equal(u.password, "p w");
    big[WR_REDIS_URL_PASSWORD_MAX] = '\0';
    assert_int_equal(wr_redis_url_set_env_password(&u, big, err, sizeof err), WR_OK);
    assert_string_equal(u.password, big);

    wr_redis_url_wipe(&u);
    assert_false(u.has_password);
    assert_false(u.has_user);
    assert_string_equal(u.password, "");
    assert_string_equal(u.path, "/run/r.sock");
    wr_redis_url_wipe(NULL);
}

static void t_redact(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"redis://alice:s3cret@h:1/0", "redis://alice:***@h:1/0"},
        {"redis://:s3cret@h:1", "redis://:***@h:1"},
        {"redis://s3cret@h:1", "redis://***@h:1"},
        {"redis://bob:p@ss:w/rd@h:1", "redis://bob:***@h:1"},
        {"rediss://u:p%40@[::1]:6380", "rediss://u:***@[::1]:6380"},
        {"redis-sentinel://:pw@s1:1,s2:2/m", "redis-sentinel://:***@s1:1,s2:2/m"},
        {"unix://:pw@/run/r.sock", "unix://:***@/run/r.sock"},
        {"unix:///tmp/a@b.sock", "unix:///tmp/a@b.sock"},
        {"redis://h:1", "redis://h:1"},
        {"memory", "memory"},
        {"user:pw@host", "user:***@host"},
        {"", ""},
    };
    char out[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(wr_redis_url_redact(cases[i].in, out, sizeof out), cases[i].out);
    assert_string_equal(wr_redis_url_redact(NULL, out, sizeof out), "");
    /* cut to fit, never overrun */
    char small[12];
    assert_string_equal(wr_redis_url_redact("redis://alice:s3cret@h:1", small, sizeof small),
                        "redis://ali");
    assert_null(wr_redis_url_redact("x", NULL, 0));
}

#define TESTS(X)                                                                                   \
    X(t_tcp)                                                                                       \
    X(t_credentials)                                                                               \
    X(t_ipv6)                                                                                      \
    X(t_sentinel)                                                                                  \
    X(t_cluster)                                                                                   \
    X(t_unix)                                                                                      \
    X(t_refused)                                                                                   \
    X(t_lengths)                                                                                   \
    X(t_env_password)                                                                              \
    X(t_redact)
WR_UNIT_MAIN(NULL, NULL, TESTS)
