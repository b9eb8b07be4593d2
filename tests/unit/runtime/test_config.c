/*
 * test_config.c - flags, INI files, environment secrets and their
 * precedence; every error names its flag, key or file:line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "runtime/config.h"
#include "base/version.h"
#include "unit_main.h"

/* Writes text to a new temp file; returns its path (static per slot). */
static const char *temp_ini(const char *text)
{
    static char paths[8][64];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, 64, "/tmp/wr_test_config_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

/* text, written to a temp file, loads into *c (from the defaults); asserts
 * success. The file is gone after; the caller frees *c. */
static void load_ini_ok(wr_config_t *c, const char *text)
{
    const char *path = temp_ini(text);
    wr_config_defaults(c);
    char err[512] = "";
    if (wr_config_load_file(c, path, err, sizeof(err)) != WR_OK)
        fail_msg("%s", err);
    unlink(path);
}

static void clear_env(void)
{
    unsetenv("WAITROOM_ADMIN_KEY");
    unsetenv("WAITROOM_TOKEN_SECRET");
    unsetenv("WAITROOM_COOKIE_SECRET");
}

#define ARGV(...) ((char **)(const char *[]){"waitroomd", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((const char *[]){"waitroomd", __VA_ARGS__}) / sizeof(char *)))

/* Loads argv; asserts success and the action want (wr_config_action_t). */
#define LOAD_ACTION(cfg, want, ...)                                                                \
    do {                                                                                           \
        wr_config_action_t act_ = (wr_config_action_t)-1;                                          \
        char err_[512] = "";                                                                       \
        wr_err_t rc_ =                                                                             \
            wr_config_load(cfg, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), &act_, err_, sizeof(err_));  \
        if (rc_ != WR_OK)                                                                          \
            fail_msg("load failed: %s", err_);                                                     \
        assert_int_equal(act_, want);                                                              \
    } while (0)

/* Loads argv; asserts success (the action: run). */
#define LOAD_OK(cfg, ...) LOAD_ACTION(cfg, WR_CONFIG_RUN, __VA_ARGS__)

/* Loads argv into a config of its own, freed after; asserts success and
 * the action want. */
#define EXPECT_ACTION(want, ...)                                                                   \
    do {                                                                                           \
        wr_config_t ca_;                                                                           \
        LOAD_ACTION(&ca_, want, __VA_ARGS__);                                                      \
        wr_config_free(&ca_);                                                                      \
    } while (0)

/* Loads argv; asserts WR_EINVAL with exactly the message `expect`. */
#define LOAD_ERR(expect, ...)                                                                      \
    do {                                                                                           \
        wr_config_t c_;                                                                            \
        wr_config_action_t act_;                                                                   \
        char err_[512] = "";                                                                       \
        wr_err_t rc_ =                                                                             \
            wr_config_load(&c_, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), &act_, err_, sizeof(err_));  \
        wr_config_free(&c_);                                                                       \
        if (rc_ != WR_EINVAL || strcmp(err_, expect) != 0)                                         \
            fail_msg("expected '%s', got rc %d '%s'", expect, (int)rc_, err_);                     \
    } while (0)

static void test_defaults(void **state)
{
    (void)state;
    clear_env();
    wr_config_t c;
    char err[256];
    wr_config_action_t act = WR_CONFIG_HELP;
    char *argv[] = {"waitroomd", NULL};
    assert_int_equal(wr_config_load(&c, 1, argv, &act, err, sizeof(err)), WR_OK);
    assert_int_equal(act, WR_CONFIG_RUN);
    assert_string_equal(c.listen, "127.0.0.1:8080");
    assert_string_equal(c.store, "memory");
    assert_string_equal(c.admin_key, "");
    assert_int_equal(c.identity, WR_IDENTITY_COOKIE);
    assert_string_equal(c.identity_header, "X-User-Id");
    assert_int_equal(c.token_secret_len, 0);
    assert_int_equal(c.cookie_secret_len, 0);
    assert_int_equal(c.log_level, WR_LOG_INFO);
    assert_false(c.cookie_secure);
    assert_int_equal(c.max_connections, 0); /* auto */
    assert_int_equal(c.timeout_seconds, 30);
    assert_int_equal(c.store_timeout_ms, 250);
    assert_string_equal(c.data_dir, "");
    assert_string_equal(c.web_dir, "");
    assert_int_equal(c.n_queues, 0);
    wr_config_free(&c);
    assert_non_null(wr_config_usage());
    assert_non_null(strstr(wr_config_usage(), "--store"));
}

/* The usage text is built from the settings table: every flag, its default,
 * lines of at most 92 columns, and nothing cut off at the end. */
static void test_usage(void **state)
{
    (void)state;
    const char *u = wr_config_usage();
    assert_ptr_equal(u, wr_config_usage()); /* built once */
    assert_int_equal(strncmp(u, "usage: waitroomd [options]\n", 27), 0);
    static const char *const want[] = {
        "  --config FILE            INI file ([server] keys, [queue NAME] sections)\n",
        "  --max-connections N      connection cap (default 0 = auto; auto: 10000, or fewer when\n",
        "  --log-level LEVEL        debug | info (default) | warn | error\n",
        "  --cookie-secure          mark the visitor cookie Secure (HTTPS deployments)\n",
        "(env WAITROOM_ADMIN_KEY)",
        "(default 1000; 0 = no limit)",
        "(default 65536)",
        "\nSecurity (docs/SECURITY.md):\n  --admin-listen ADDR:PORT ",
        "\n  --help                   print this text\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!strstr(u, want[i]))
            fail_msg("usage lacks '%s':\n%s", want[i], u);
    /* every flag is listed (and the flag-less secrets are not) */
    static const char *const flags[] = {"config",
                                        "listen",
                                        "reuse-port",
                                        "store",
                                        "admin-key",
                                        "identity",
                                        "token-secret",
                                        "log-level",
                                        "data-dir",
                                        "web-dir",
                                        "cookie-secure",
                                        "max-connections",
                                        "timeout-seconds",
                                        "store-timeout-ms",
                                        "breaker",
                                        "redis-wait-replicas",
                                        "redis-wait-timeout-ms",
                                        "admin-listen",
                                        "token-secret-previous",
                                        "strict-secrets",
                                        "join-rate",
                                        "join-burst",
                                        "trusted-proxies",
                                        "poll-min-fraction",
                                        "poll-allowance",
                                        "rate-limit-keys",
                                        "max-conn-requests",
                                        "request-timeout-seconds",
                                        "help"};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        char line[64];
        snprintf(line, sizeof(line), "\n  --%s ", flags[i]);
        if (!strstr(u, line))
            fail_msg("usage lacks --%s", flags[i]);
    }
    assert_null(strstr(u, "--cookie-secret"));
    for (const char *p = u; *p;) {
        size_t n = strcspn(p, "\n");
        if (n > 92)
            fail_msg("usage line longer than 92: %.*s", (int)n, p);
        p += n + (p[n] == '\n');
    }
    size_t len = strlen(u);
    assert_true(len > 40);
    assert_string_equal(u + len - 6, "work.\n");
}

static void test_flags(void **state)
{
    (void)state;
    clear_env();
    wr_config_t c;
    LOAD_OK(&c, "--listen", "[::1]:9090", "--store=redis://127.0.0.1:6379/2", "--admin-key=k1",
            "--identity", "header:X-Auth-User", "--token-secret", "short", "--log-level=debug",
            "--data-dir", "/var/lib/wr", "--cookie-secure", "--max-connections", "50",
            "--timeout-seconds=7", "--store-timeout-ms", "1000");
    assert_string_equal(c.listen, "[::1]:9090");
    assert_string_equal(c.store, "redis://127.0.0.1:6379/2");
    assert_string_equal(c.admin_key, "k1");
    assert_int_equal(c.identity, WR_IDENTITY_HEADER);
    assert_string_equal(c.identity_header, "X-Auth-User");
    assert_int_equal(c.token_secret_len, 5); /* short secrets are accepted */
    assert_memory_equal(c.token_secret, "short", 5);
    assert_int_equal(c.log_level, WR_LOG_DEBUG);
    assert_string_equal(c.data_dir, "/var/lib/wr");
    assert_true(c.cookie_secure);
    assert_int_equal(c.max_connections, 50);
    assert_int_equal(c.timeout_seconds, 7);
    assert_int_equal(c.store_timeout_ms, 1000);
    wr_config_free(&c);

    LOAD_OK(&c, "--identity=header", "--cookie-secure=false", "--store", "unix:///tmp/r.sock",
            "--listen", "localhost:0");
    assert_int_equal(c.identity, WR_IDENTITY_HEADER);
    assert_string_equal(c.identity_header, "X-User-Id");
    assert_false(c.cookie_secure);
    assert_string_equal(c.store, "unix:///tmp/r.sock");
    assert_string_equal(c.listen, "localhost:0");
    wr_config_free(&c);

    /* --reuse-port: only with a shared store */
    LOAD_OK(&c, "--reuse-port", "--store", "redis://127.0.0.1:6379");
    assert_true(c.reuse_port);
    wr_config_free(&c);
    LOAD_ERR("--reuse-port: needs a shared store (redis://...); with the memory store every "
             "process keeps its own line",
             "--reuse-port");

    /* the last occurrence wins */
    LOAD_OK(&c, "--listen", "127.0.0.1:1", "--listen=127.0.0.1:2", "--identity", "header:A",
            "--identity", "cookie");
    assert_string_equal(c.listen, "127.0.0.1:2");
    assert_int_equal(c.identity, WR_IDENTITY_COOKIE);
    wr_config_free(&c);

    /* a 64-character header name is fine */
    char arg[128];
    snprintf(arg, sizeof(arg), "header:%064d", 0);
    LOAD_OK(&c, "--identity", arg);
    assert_int_equal(strlen(c.identity_header), 64);
    wr_config_free(&c);
}

static void test_help(void **state)
{
    (void)state;
    wr_config_t c;
    EXPECT_ACTION(WR_CONFIG_HELP, "--listen", "x", "--help", "--bogus");
    /* --help is not mistaken for the value of a flag */
    LOAD_OK(&c, "--admin-key", "--help");
    assert_string_equal(c.admin_key, "--help");
    wr_config_free(&c);
    /* a NULL action is allowed */
    char err[256] = "";
    assert_int_equal(
        wr_config_load(&c, 5, ARGV("--listen", "x", "--help", "--bogus"), NULL, err, sizeof(err)),
        WR_OK);
    wr_config_free(&c);
}

/* --version: the action, and the exact line main prints */
static void test_version(void **state)
{
    (void)state;
    const char *v = wr_config_version();
    assert_string_equal(v, "waitroomd " WR_VERSION "\n");
    /* MAJOR.MINOR.PATCH */
    unsigned a, b, n;
    char end;
    assert_int_equal(sscanf(v, "waitroomd %u.%u.%u%c", &a, &b, &n, &end), 4);
    assert_int_equal(end, '\n');
    assert_non_null(strstr(wr_config_usage(),
                           "  --version                print \"waitroomd " WR_VERSION
                           "\" and exit\n"));

    EXPECT_ACTION(WR_CONFIG_VERSION, "--listen", "127.0.0.1:1", "--version", "--bogus");
    /* the first of --help and --version wins */
    EXPECT_ACTION(WR_CONFIG_VERSION, "--version", "--help");
    EXPECT_ACTION(WR_CONFIG_HELP, "--help", "--version");
    /* a mistake before it is still an error; a value is refused */
    LOAD_ERR("unknown flag '--bogus'", "--bogus", "--version");
    LOAD_ERR("--version takes no value", "--version=1");
}

static void test_flag_errors(void **state)
{
    (void)state;
    clear_env();
    LOAD_ERR("unknown flag '--bogus'", "--bogus");
    LOAD_ERR("unknown flag '--listenx'", "--listenx=1");
    LOAD_ERR("unexpected argument 'extra'", "extra");
    LOAD_ERR("unexpected argument '-l'", "-l");
    LOAD_ERR("unexpected argument '--'", "--");
    LOAD_ERR("--listen needs a value", "--listen");
    LOAD_ERR("--config needs a value", "--config");
    LOAD_ERR("--config needs a file name", "--config=");
    LOAD_ERR("--help takes no value", "--help=1");
}

static void test_cookie_secret_flag_absent(void **state)
{
    (void)state;
    /* secrets other than the token secret come from the file or env only */
    wr_config_t c;
    wr_config_action_t act;
    char err[256] = "";
    char *argv[] = {"waitroomd", "--cookie-secret", "x", NULL};
    assert_int_equal(wr_config_load(&c, 3, argv, &act, err, sizeof(err)), WR_EINVAL);
    assert_string_equal(err, "unknown flag '--cookie-secret'");
    wr_config_free(&c);
}

static void test_value_errors(void **state)
{
    (void)state;
    clear_env();
    static const char *bad_listen[] = {
        "127.0.0.1",  ":8080",     "127.0.0.1:65536", "127.0.0.1:80x", "127.0.0.1:-1",
        "::1:8080",   "[::1]8080", "[]:80",           "h:+80",         "127.0.0.1: 80",
        "127.0.0.1:", "a b:80",    "[::1:80",         "[x::1]:80",     "h:123456",
    };
    for (size_t i = 0; i < sizeof(bad_listen) / sizeof(bad_listen[0]); i++) {
        char expect[256];
        snprintf(expect, sizeof(expect),
                 "--listen: '%s' must be HOST:PORT or [IPv6]:PORT, port 0..65535", bad_listen[i]);
        LOAD_ERR(expect, "--listen", bad_listen[i]);
    }
    static const char *bad_store[] = {"redis://127.0.0.1",
                                      "redis://h:0",
                                      "redis://:6379",
                                      "redis://h:6379/x",
                                      "redis://h:6379/",
                                      "redis://h:6379/65536",
                                      "unix://relative",
                                      "unix:///",
                                      "mysql://h:1",
                                      "",
                                      "Memory",
                                      "unix:///a b"};
    for (size_t i = 0; i < sizeof(bad_store) / sizeof(bad_store[0]); i++) {
        wr_config_t c;
        wr_config_action_t act;
        char err[512] = "";
        char *argv[] = {"waitroomd", "--store", (char *)bad_store[i], NULL};
        assert_int_equal(wr_config_load(&c, 3, argv, &act, err, sizeof(err)), WR_EINVAL);
        if (strncmp(err, "--store: '", 10) != 0)
            fail_msg("store '%s': %s", bad_store[i], err);
        wr_config_free(&c);
    }
    char longpath[200] = "unix:///";
    memset(longpath + 8, 'p', 100);
    longpath[108] = '\0'; /* path of 101 bytes: fine */
    wr_config_t c;
    LOAD_OK(&c, "--store", longpath);
    wr_config_free(&c);
    memset(longpath + 8, 'p', 107);
    longpath[115] = '\0'; /* 108 bytes: too long for sun_path */
    LOAD_ERR("--store: unix socket path is longer than 107 bytes", "--store", longpath);

    LOAD_ERR("--identity: 'headers' must be cookie, header or header:NAME", "--identity",
             "headers");
    LOAD_ERR("--identity: 'header:': the header name must be an HTTP token of 1..64 characters",
             "--identity", "header:");
    LOAD_ERR("--identity: 'header:X User': the header name must be an HTTP token of 1..64 "
             "characters",
             "--identity", "header:X User");
    LOAD_ERR("--identity: 'header:X:Y': the header name must be an HTTP token of 1..64 "
             "characters",
             "--identity", "header:X:Y");
    char arg[128];
    snprintf(arg, sizeof(arg), "header:%065d", 0);
    char expect[256];
    snprintf(expect, sizeof(expect),
             "--identity: '%s': the header name must be an HTTP token of 1..64 characters", arg);
    LOAD_ERR(expect, "--identity", arg);

    LOAD_ERR("--log-level: 'verbose' must be debug, info, warn or error", "--log-level", "verbose");
    LOAD_ERR("--cookie-secure: 'maybe' must be true, false, 1, 0, yes or no",
             "--cookie-secure=maybe");
    LOAD_ERR("--max-connections: '-1' must be an integer from 0 (auto) to 1000000",
             "--max-connections", "-1");
    LOAD_ERR("--max-connections: '1000001' must be an integer from 0 (auto) to 1000000",
             "--max-connections", "1000001");
    LOAD_ERR("--max-connections: '10x' must be an integer from 0 (auto) to 1000000",
             "--max-connections", "10x");
    LOAD_ERR("--max-connections: '+5' must be an integer from 0 (auto) to 1000000",
             "--max-connections", "+5");
    LOAD_ERR("--max-connections: ' 5' must be an integer from 0 (auto) to 1000000",
             "--max-connections", " 5");
    LOAD_ERR("--max-connections: '' must be an integer from 0 (auto) to 1000000",
             "--max-connections", "");
    LOAD_ERR(
        "--max-connections: '99999999999999999999999' must be an integer from 0 (auto) to 1000000",
        "--max-connections", "99999999999999999999999");
    LOAD_ERR("--timeout-seconds: '3601' must be an integer from 1 to 3600", "--timeout-seconds",
             "3601");
    LOAD_ERR("--store-timeout-ms: '0' must be an integer from 1 to 60000", "--store-timeout-ms",
             "0");
    LOAD_ERR("--admin-key: must not contain spaces or control characters", "--admin-key", "a b");
    LOAD_ERR("--data-dir: must not contain control characters", "--data-dir", "a\nb");

    char secret[300];
    memset(secret, 's', sizeof(secret) - 1);
    secret[257] = '\0';
    LOAD_ERR("--token-secret: is longer than 256 bytes", "--token-secret", secret);
    secret[256] = '\0';
    LOAD_OK(&c, "--token-secret", secret);
    assert_int_equal(c.token_secret_len, 256);
    wr_config_free(&c);
}

static void test_precedence(void **state)
{
    (void)state;
    clear_env();
    const char *path = temp_ini("[server]\n"
                                "listen = 127.0.0.1:7000\n"
                                "admin_key = from-file\n"
                                "token_secret = file-secret\n"
                                "cookie_secret = file-cookie\n"
                                "log_level = warn\n"
                                "max_connections = 77\n");
    wr_config_t c;
    /* file only */
    LOAD_OK(&c, "--config", path);
    assert_string_equal(c.listen, "127.0.0.1:7000");
    assert_string_equal(c.admin_key, "from-file");
    assert_int_equal(c.token_secret_len, 11);
    assert_memory_equal(c.token_secret, "file-secret", 11);
    assert_int_equal(c.cookie_secret_len, 11);
    assert_int_equal(c.log_level, WR_LOG_WARN);
    assert_int_equal(c.max_connections, 77);
    wr_config_free(&c);

    /* flags override the file, wherever --config stands */
    LOAD_OK(&c, "--listen", "127.0.0.1:9000", "--admin-key", "from-flag", "--config", path);
    assert_string_equal(c.listen, "127.0.0.1:9000");
    assert_string_equal(c.admin_key, "from-flag");
    assert_int_equal(c.log_level, WR_LOG_WARN); /* not overridden: from the file */
    wr_config_free(&c);
    LOAD_OK(&c,
            "--config="
            "/dev/null",
            "--token-secret", "flag-secret");
    assert_memory_equal(c.token_secret, "flag-secret", 11);
    wr_config_free(&c);

    /* env overrides both for secrets */
    setenv("WAITROOM_ADMIN_KEY", "from-env", 1);
    setenv("WAITROOM_TOKEN_SECRET", "env-secret-xyz", 1);
    setenv("WAITROOM_COOKIE_SECRET", "env-cookie", 1);
    LOAD_OK(&c, "--admin-key", "from-flag", "--config", path, "--token-secret", "flag-secret");
    assert_string_equal(c.admin_key, "from-env");
    assert_int_equal(c.token_secret_len, 14);
    assert_memory_equal(c.token_secret, "env-secret-xyz", 14);
    assert_int_equal(c.cookie_secret_len, 10);
    assert_memory_equal(c.cookie_secret, "env-cookie", 10);
    wr_config_free(&c);

    /* an empty variable counts as unset */
    setenv("WAITROOM_ADMIN_KEY", "", 1);
    LOAD_OK(&c, "--admin-key", "from-flag");
    assert_string_equal(c.admin_key, "from-flag");
    wr_config_free(&c);

    /* a bad env value is named */
    setenv("WAITROOM_ADMIN_KEY", "has space", 1);
    LOAD_ERR("WAITROOM_ADMIN_KEY: must not contain spaces or control characters", "--listen",
             "127.0.0.1:1");
    clear_env();
    unlink(path);
}

static void test_ini_full(void **state)
{
    (void)state;
    clear_env();
    wr_config_t c;
    load_ini_ok(&c, "; a comment\n"
                    "# another\n"
                    "[server]\n"
                    "listen = [::1]:8081\n"
                    "store = redis://127.0.0.1:6380\n"
                    "admin_key = change-me\n"
                    "identity = header:X-Gateway-User\n"
                    "log_level = error\n"
                    "cookie_secure = yes\n"
                    "timeout_seconds = 12\n"
                    "store_timeout_ms = 100\n"
                    "data_dir = /tmp/wr-data\n"
                    "\n"
                    "[queue demo]\n"
                    "admitPerSecond = 175\n"
                    "pollBands = [{\"upTo\":100,\"ms\":1000},{\"ms\":5000}]\n"
                    "targetUrl = https://shop.example/checkout\n"
                    "enabled = false\n"
                    "pollJitter = 0.25\n"
                    "paused = true\n"
                    "[queue other_2]\n"
                    "capacity = {\"connections\": 40, \"serviceMs\": 200}\n"
                    "failPolicy = closed\n");
    assert_string_equal(c.listen, "[::1]:8081");
    assert_string_equal(c.store, "redis://127.0.0.1:6380");
    assert_string_equal(c.admin_key, "change-me");
    assert_int_equal(c.identity, WR_IDENTITY_HEADER);
    assert_string_equal(c.identity_header, "X-Gateway-User");
    assert_int_equal(c.log_level, WR_LOG_ERROR);
    assert_true(c.cookie_secure);
    assert_int_equal(c.timeout_seconds, 12);
    assert_int_equal(c.store_timeout_ms, 100);
    assert_string_equal(c.data_dir, "/tmp/wr-data");

    assert_int_equal(c.n_queues, 2);
    assert_string_equal(c.queues[0].name, "demo");
    char *s = json_dumps(c.queues[0].fields, JSON_COMPACT);
    assert_string_equal(s, "{\"admitPerSecond\":175,\"pollBands\":[{\"upTo\":100,\"ms\":1000},"
                           "{\"ms\":5000}],\"targetUrl\":\"https://shop.example/checkout\","
                           "\"enabled\":false,\"pollJitter\":0.25,\"paused\":true}");
    free(s);
    assert_string_equal(c.queues[1].name, "other_2");
    s = json_dumps(c.queues[1].fields, JSON_COMPACT);
    assert_string_equal(s, "{\"capacity\":{\"connections\":40,\"serviceMs\":200},"
                           "\"failPolicy\":\"closed\"}");
    free(s);

    /* the declarations parse as full queue configs */
    wr_queue_config_t q;
    char field[WR_FIELD_MAX], msg[256];
    assert_int_equal(
        wr_qconfig_parse(c.queues[0].fields, &q, field, sizeof(field), msg, sizeof(msg)), WR_OK);
    assert_true(q.admit_per_second == 175);
    assert_false(q.enabled);
    assert_true(q.paused);
    assert_int_equal(q.n_poll_bands, 2);
    assert_string_equal(q.target_url, "https://shop.example/checkout");
    wr_config_free(&c);
    assert_int_equal(c.n_queues, 0);
    wr_config_free(&c); /* twice is harmless */
}

/* Loads text as the --config file; asserts the error is "<path>:<suffix>". */
static void expect_ini_error(const char *text, const char *suffix)
{
    const char *path = temp_ini(text);
    wr_config_t c;
    wr_config_defaults(&c);
    char err[512] = "";
    wr_err_t rc = wr_config_load_file(&c, path, err, sizeof(err));
    wr_config_free(&c);
    char expect[600];
    snprintf(expect, sizeof(expect), "%s:%s", path, suffix);
    if (rc != WR_EINVAL || strcmp(err, expect) != 0)
        fail_msg("expected '%s', got rc %d '%s'", expect, (int)rc, err);
    unlink(path);
}

static void test_ini_errors(void **state)
{
    (void)state;
    expect_ini_error("[server]\nlisten = 127.0.0.1:1\nbogus = 1\n",
                     "3: unknown key 'bogus' in [server]");
    expect_ini_error("listen = 127.0.0.1:1\n", "1: key 'listen' outside a section");
    expect_ini_error("[server]\n[nope]\n",
                     "2: unknown section [nope] (expected [server] or [queue NAME])");
    expect_ini_error("[server]\n\n[queue bad.name]\nadmitPerSecond = 1\n",
                     "3: [queue bad.name]: the queue name must match [A-Za-z0-9_-]{1,64}");
    expect_ini_error("[queue]\n", "1: [queue]: the queue name must match [A-Za-z0-9_-]{1,64}");
    expect_ini_error("[server]\nthis is not ini\n",
                     "2: syntax error (expected [section] or key = value)");
    expect_ini_error("[server]\nlisten = 127.0.0.1\n",
                     "2: listen: '127.0.0.1' must be HOST:PORT or [IPv6]:PORT, port 0..65535");
    expect_ini_error("[server]\nstore = redis://h\n",
                     "2: store: 'redis://h' must be redis://HOST:PORT[/DB] (port 1..65535)");
    expect_ini_error("[server]\ncookie_secure = maybe\n",
                     "2: cookie_secure: 'maybe' must be true, false, 1, 0, yes or no");
    expect_ini_error("[server]\nmax_connections = 5 apples\n",
                     "2: max_connections: '5 apples' must be an integer from 0 (auto) to 1000000");
    expect_ini_error("[queue q]\nadmitPerSecond = 10\nspeed = 3\n",
                     "3: [queue q]: unknown key 'speed'");
    expect_ini_error("[queue q]\ntickMs = 5\n",
                     "2: [queue q]: tickMs must be an integer from 10 to 10000");
    expect_ini_error("[queue q]\nfailOpenPerSecond = \"0\"\n",
                     "2: [queue q]: failOpenPerSecond must be a number >= 0 and <= 1000000");
    expect_ini_error("[queue q]\ntargetUrl = evil.example\n",
                     "2: [queue q]: targetUrl must be \"\", an absolute http(s):// URL or a path "
                     "starting with one \"/\", without spaces or control characters");
    expect_ini_error("[queue q]\npollBands = [{\"upTo\":10,\"ms\":1000},{\"ms\":10}]\n",
                     "2: [queue q]: pollBands[1].ms must be an integer from 250 to 600000");
    expect_ini_error("[queue q]\nstandardShare = 2\n",
                     "2: [queue q]: standardShare must be a number from 0 to 1");
    expect_ini_error("[queue q]\ngroups = [{\"name\":\"standard\"}]\n",
                     "2: [queue q]: groups[0].name must be [a-z0-9-]{1,32} and not \"standard\"");

    /* a continuation line is not a multi-line value */
    expect_ini_error("[server]\nadmin_key = a\n  b\n",
                     "3: syntax error (expected [section] or key = value)");

    /* a long line: up to 8189 bytes are read whole, longer ones refused */
    char *text = malloc(9000);
    int n = snprintf(text, 9000, "[queue q]\ntargetUrl = /");
    memset(text + n, 'a', 2000);
    strcpy(text + n + 2000, "\n");
    wr_config_t c;
    load_ini_ok(&c, text);
    assert_int_equal(strlen(json_string_value(json_object_get(c.queues[0].fields, "targetUrl"))),
                     2001);
    wr_config_free(&c);
    memset(text + n, 'a', 8500);
    strcpy(text + n + 8500, "\n");
    expect_ini_error(text, "2: line longer than 8189 bytes");
    free(text);

    /* too many queues */
    size_t cap = 70 * 40;
    text = malloc(cap);
    size_t off = 0;
    for (int i = 0; i < WR_CONFIG_QUEUES_MAX + 1; i++)
        off += (size_t)snprintf(text + off, cap - off, "[queue q%d]\nadmitPerSecond = 1\n", i);
    char suffix[64];
    /* reported at the 65th section header (line 2*64 + 1) */
    snprintf(suffix, sizeof(suffix), "%d: more than %d [queue] sections",
             2 * WR_CONFIG_QUEUES_MAX + 1, WR_CONFIG_QUEUES_MAX);
    expect_ini_error(text, suffix);
    free(text);

    /* an empty [queue NAME] section still declares the queue (libinih never
     * reports it), so its missing rate is an error at start, not a skip */
    load_ini_ok(&c, "[server]\nadmin_key = k\n[queue empty]\n[queue full]\nadmitPerSecond = 3\n");
    assert_int_equal(c.n_queues, 2);
    assert_string_equal(c.queues[0].name, "empty");
    assert_int_equal(json_object_size(c.queues[0].fields), 0);
    assert_string_equal(c.queues[1].name, "full");
    assert_int_equal(json_integer_value(json_object_get(c.queues[1].fields, "admitPerSecond")), 3);
    wr_config_free(&c);

    /* a missing file, through --config */
    clear_env();
    LOAD_ERR("/nonexistent/wr.ini: cannot open the config file", "--config", "/nonexistent/wr.ini");
}

/* SIGHUP: reloadable settings move over, the others are named. */
static void test_reload(void **state)
{
    (void)state;
    clear_env();
    static wr_config_t run, fresh;
    char restart[256];
    LOAD_OK(&run, "--log-level", "info", "--admin-key", "a1", "--listen", "127.0.0.1:1",
            "--log-format", "text", "--identity", "header:A", "--trusted-proxies", "10.0.0.1");
    LOAD_OK(&fresh, "--log-level", "info", "--admin-key", "a1", "--listen", "127.0.0.1:1",
            "--log-format", "text", "--identity", "header:A", "--trusted-proxies", "10.0.0.1");
    assert_int_equal(wr_config_reload(&run, &fresh, restart, sizeof(restart)), 0);
    assert_string_equal(restart, "");

    LOAD_OK(&fresh, "--log-level", "debug", "--admin-key", "a2", "--listen", "127.0.0.1:2",
            "--log-format", "json", "--identity", "header:B", "--trusted-proxies", "10.0.0.2",
            "--token-secret", "s3cret", "--access-log", "/tmp/x.log");
    assert_int_equal(wr_config_reload(&run, &fresh, restart, sizeof(restart)), 4);
    assert_int_equal(run.log_level, WR_LOG_DEBUG);
    assert_int_equal(run.log_format, WR_LOG_JSON);
    assert_string_equal(run.admin_key, "a2");
    assert_int_equal(run.token_secret_len, 6);
    assert_memory_equal(run.token_secret, "s3cret", 6);
    /* not applied, named */
    assert_string_equal(run.listen, "127.0.0.1:1");
    assert_string_equal(run.identity_header, "A");
    assert_string_equal(restart, "listen, identity, trusted_proxies, access_log");
    wr_config_free(&run);
    wr_config_free(&fresh);
}

/* Web Push: the subject's rule, the allow list (repeatable), and a queue
 * with push refused at start without --push-subject. */
static void test_push_flags(void **state)
{
    (void)state;
    clear_env();
    static wr_config_t c;
    LOAD_OK(&c, "--push-subject", "mailto:ops@shop.example", "--push-key", "/etc/vapid.pem",
            "--push-allow-host", "127.0.0.1:8443", "--push-allow-host", "push.test");
    assert_string_equal(c.push_subject, "mailto:ops@shop.example");
    assert_string_equal(c.push_key, "/etc/vapid.pem");
    assert_int_equal(c.push_allow.n, 2);
    assert_string_equal(c.push_allow.e[0].host, "127.0.0.1");
    assert_int_equal(c.push_allow.e[0].port, 8443);
    assert_string_equal(c.push_allow.e[1].host, "push.test");
    assert_int_equal(c.push_allow.e[1].port, 0);
    wr_config_free(&c);
    LOAD_ERR("--push-subject: 'mailto:a@localhost' must be mailto:ADDRESS or an https:// URL, "
             "not a localhost one",
             "--push-subject", "mailto:a@localhost");
    LOAD_ERR("--push-allow-host: 'a:0' must be HOST or HOST:PORT", "--push-allow-host", "a:0");
    const char *ini = temp_ini("[queue sale]\nadmitPerSecond = 1\npush = true\n");
    LOAD_ERR("queue sale: push needs --push-subject", "--config", ini);
    LOAD_OK(&c, "--config", ini, "--push-subject", "https://shop.example/contact");
    wr_config_free(&c);
}

/* Issue 22: a key twice in a section, or a section twice, is an error
 * naming the line (libinih alone keeps the last silently). */
static void test_ini_duplicates(void **state)
{
    (void)state;
    expect_ini_error("[server]\nlog_level = info\nlog_level = debug\n",
                     "3: [server]: key 'log_level' set again (each key at most once per section)");
    expect_ini_error("[server]\nlog_level = info\n\n[server]\nadmin_key = k\n",
                     "4: [server] appears again (first at line 1; one section each)");
    expect_ini_error("[queue a]\nadmitPerSecond = 1\n[queue   a]\nmaxQueueSize = 3\n",
                     "3: [queue a] appears again (first at line 1; one section each)");
    expect_ini_error("[queue a]\nadmitPerSecond = 1\nadmitPerSecond = 2\n",
                     "3: [queue a]: key 'admitPerSecond' set again (each key at most once per "
                     "section)");
    /* the same key in different sections, and different queues, are fine */
    wr_config_t c;
    load_ini_ok(&c, "[server]\nlog_level = warn\n[queue a]\nadmitPerSecond = 1\n"
                    "[queue b]\nadmitPerSecond = 2\n");
    assert_int_equal(c.n_queues, 2);
    assert_int_equal(c.log_level, WR_LOG_WARN);
    wr_config_free(&c);
}

/* Issue 22: --max-connections auto fits the hard limit on open files; an
 * explicit value that does not fit is refused. */
static void test_fit_connections(void **state)
{
    (void)state;
    wr_config_t c;
    char note[512];
    wr_config_defaults(&c);
    assert_int_equal(c.max_connections, 0); /* auto */
    assert_int_equal(wr_config_fit_connections(&c, ULLONG_MAX, 64, note, sizeof note), WR_OK);
    assert_int_equal(c.max_connections, 10000);
    assert_string_equal(note, "");
    c.max_connections = 0;
    assert_int_equal(wr_config_fit_connections(&c, 10064, 64, note, sizeof note), WR_OK);
    assert_int_equal(c.max_connections, 10000);
    assert_string_equal(note, "");
    c.max_connections = 0;
    assert_int_equal(wr_config_fit_connections(&c, 2048, 64, note, sizeof note), WR_OK);
    assert_int_equal(c.max_connections, 1984);
    assert_string_equal(note, "the hard limit on open files (ulimit -Hn) is 2048: "
                              "--max-connections is 1984 instead of 10000 (raise the limit, e.g. "
                              "systemd LimitNOFILE=, for more)");
    c.max_connections = 0;
    assert_int_equal(wr_config_fit_connections(&c, 64, 64, note, sizeof note), WR_EINVAL);
    assert_non_null(strstr(note, "is 64: at least 65 are needed"));
    /* explicit */
    c.max_connections = 1984;
    assert_int_equal(wr_config_fit_connections(&c, 2048, 64, note, sizeof note), WR_OK);
    assert_int_equal(c.max_connections, 1984);
    c.max_connections = 3000;
    assert_int_equal(wr_config_fit_connections(&c, 2048, 64, note, sizeof note), WR_EINVAL);
    assert_int_equal(c.max_connections, 3000);
    assert_string_equal(note, "--max-connections 3000 needs 3064 file descriptors (connections "
                              "+ 64), but the hard limit (ulimit -Hn) is 2048: lower "
                              "--max-connections to 1984 or raise the limit (systemd: "
                              "LimitNOFILE=)");
    c.max_connections = 1000;
    assert_int_equal(wr_config_fit_connections(&c, 64, 64, note, sizeof note), WR_EINVAL);
    assert_string_equal(note, "--max-connections 1000 needs 1064 file descriptors (connections + "
                              "64), but the hard limit (ulimit -Hn) is 64: raise the limit "
                              "(systemd: LimitNOFILE=)");
    c.max_connections = 500000;
    assert_int_equal(wr_config_fit_connections(&c, ULLONG_MAX, 64, note, sizeof note), WR_OK);
    assert_int_equal(c.max_connections, 500000);
}

#define TESTS(X)                                                                                   \
    X(test_reload)                                                                                 \
    X(test_defaults)                                                                               \
    X(test_flags)                                                                                  \
    X(test_help)                                                                                   \
    X(test_usage)                                                                                  \
    X(test_version)                                                                                \
    X(test_flag_errors)                                                                            \
    X(test_cookie_secret_flag_absent)                                                              \
    X(test_value_errors)                                                                           \
    X(test_precedence)                                                                             \
    X(test_ini_full)                                                                               \
    X(test_ini_errors)                                                                             \
    X(test_ini_duplicates)                                                                         \
    X(test_fit_connections)                                                                        \
    X(test_push_flags)
WR_UNIT_MAIN(NULL, NULL, TESTS)
