/*
 * config.c - server configuration from defaults, flags and the environment;
 * config_file.c reads the INI file.
 *
 * One table (opts) lists every server setting with its flag name and INI
 * key; set_option() validates a value and stores it, so a setting means
 * the same whether it comes from the file (through wr_config_set) or the
 * command line. Errors are written to the caller's buffer prefixed with
 * where the value came from: "FILE:LINE: ...", "--flag: ..." or
 * "WAITROOM_...: ...".
 *
 * wr_config_load makes two passes over argv: the first finds --config and
 * --help (so the file is loaded first wherever --config appears), the
 * second applies the other flags in order (the last occurrence wins). The
 * secret environment variables are applied last; an empty variable counts
 * as unset.
 */
#include "config.h"

#include "breaker.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <math.h>

#define UNIX_PATH_MAX 107 /* sun_path without the NUL */

typedef enum {
    OPT_CONFIG,
    OPT_HELP,
    OPT_LISTEN,
    OPT_STORE,
    OPT_ADMIN_KEY,
    OPT_IDENTITY,
    OPT_TOKEN_SECRET,
    OPT_COOKIE_SECRET,
    OPT_LOG_LEVEL,
    OPT_COOKIE_SECURE,
    OPT_MAX_CONNECTIONS,
    OPT_TIMEOUT_SECONDS,
    OPT_STORE_TIMEOUT_MS,
    OPT_DATA_DIR,
    OPT_BREAKER,
    OPT_REDIS_WAIT_REPLICAS,
    OPT_REDIS_WAIT_TIMEOUT_MS,
    OPT_ADMIN_LISTEN,
    OPT_TOKEN_SECRET_PREVIOUS,
    OPT_COOKIE_SECRET_PREVIOUS,
    OPT_STRICT_SECRETS,
    OPT_JOIN_RATE,
    OPT_JOIN_BURST,
    OPT_TRUSTED_PROXIES,
    OPT_POLL_MIN_FRACTION,
    OPT_POLL_ALLOWANCE,
    OPT_RATE_LIMIT_KEYS,
    OPT_MAX_CONN_REQUESTS,
    OPT_REQUEST_TIMEOUT_SECONDS,
} opt_id_t;

typedef struct {
    opt_id_t id;
    const char *flag; /* without "--"; NULL = no flag */
    const char *ini;  /* [server] key; NULL = not in the file */
    int arg;          /* 1 = needs a value, 0 = none, 2 = optional "=value" */
} opt_t;

static const opt_t opts[] = {
    {OPT_CONFIG, "config", NULL, 1},
    {OPT_HELP, "help", NULL, 0},
    {OPT_LISTEN, "listen", "listen", 1},
    {OPT_STORE, "store", "store", 1},
    {OPT_ADMIN_KEY, "admin-key", "admin_key", 1},
    {OPT_IDENTITY, "identity", "identity", 1},
    {OPT_TOKEN_SECRET, "token-secret", "token_secret", 1},
    {OPT_COOKIE_SECRET, NULL, "cookie_secret", 1},
    {OPT_LOG_LEVEL, "log-level", "log_level", 1},
    {OPT_COOKIE_SECURE, "cookie-secure", "cookie_secure", 2},
    {OPT_MAX_CONNECTIONS, "max-connections", "max_connections", 1},
    {OPT_TIMEOUT_SECONDS, "timeout-seconds", "timeout_seconds", 1},
    {OPT_STORE_TIMEOUT_MS, "store-timeout-ms", "store_timeout_ms", 1},
    {OPT_DATA_DIR, "data-dir", "data_dir", 1},
    {OPT_BREAKER, "breaker", "breaker", 1},
    {OPT_REDIS_WAIT_REPLICAS, "redis-wait-replicas", "redis_wait_replicas", 1},
    {OPT_REDIS_WAIT_TIMEOUT_MS, "redis-wait-timeout-ms", "redis_wait_timeout_ms", 1},
    {OPT_ADMIN_LISTEN, "admin-listen", "admin_listen", 1},
    {OPT_TOKEN_SECRET_PREVIOUS, "token-secret-previous", "token_secret_previous", 1},
    {OPT_COOKIE_SECRET_PREVIOUS, NULL, "cookie_secret_previous", 1},
    {OPT_STRICT_SECRETS, "strict-secrets", "strict_secrets", 2},
    {OPT_JOIN_RATE, "join-rate", "join_rate", 1},
    {OPT_JOIN_BURST, "join-burst", "join_burst", 1},
    {OPT_TRUSTED_PROXIES, "trusted-proxies", "trusted_proxies", 1},
    {OPT_POLL_MIN_FRACTION, "poll-min-fraction", "poll_min_fraction", 1},
    {OPT_POLL_ALLOWANCE, "poll-allowance", "poll_allowance", 1},
    {OPT_RATE_LIMIT_KEYS, "rate-limit-keys", "rate_limit_keys", 1},
    {OPT_MAX_CONN_REQUESTS, "max-conn-requests", "max_conn_requests", 1},
    {OPT_REQUEST_TIMEOUT_SECONDS, "request-timeout-seconds", "request_timeout_seconds", 1},
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

static const char usage[] =
    "usage: waitroomd [options]\n"
    "  --config FILE            INI file ([server] keys, [queue NAME] sections)\n"
    "  --listen ADDR:PORT       listen address (default 127.0.0.1:8080; [::1]:8080 for IPv6;\n"
    "                           port 0 picks a free port)\n"
    "  --store URL              memory (default) | redis://HOST:PORT[/DB] |\n"
    "                           unix:///PATH/redis.sock\n"
    "  --admin-key KEY          bearer key of the admin API (env WAITROOM_ADMIN_KEY)\n"
    "  --identity MODE          cookie (default) | header | header:NAME (default X-User-Id)\n"
    "  --token-secret SECRET    entry-token HMAC secret (env WAITROOM_TOKEN_SECRET);\n"
    "                           default: one shared secret kept in the store\n"
    "  --log-level LEVEL        debug | info (default) | warn | error\n"
    "  --data-dir DIR           memory store snapshots (default none)\n"
    "  --cookie-secure          mark the visitor cookie Secure (HTTPS deployments)\n"
    "  --max-connections N      connection cap (default 10000)\n"
    "  --timeout-seconds N      HTTP read/write timeout (default 30)\n"
    "  --store-timeout-ms N     store command timeout (default 250)\n"
    "  --breaker SPEC           store circuit breaker: off, or key=value,... (window,\n"
    "                           min_calls, failure_rate, consecutive, slow_ms, slow_rate,\n"
    "                           wait_ms, wait_max_ms, probes); default: built-in values\n"
    "  --redis-wait-replicas N  after consume and admission, WAIT for N replicas\n"
    "                           (default 0 = off; see docs/RELIABILITY.md)\n"
    "  --redis-wait-timeout-ms N  timeout of that WAIT (default 100)\n"
    "Security (docs/SECURITY.md):\n"
    "  --admin-listen ADDR:PORT serve the admin API only there (404 on --listen)\n"
    "  --token-secret-previous SECRET  the secret before a rotation: tokens signed\n"
    "                           with it still verify (env WAITROOM_TOKEN_SECRET_PREVIOUS)\n"
    "  --strict-secrets         refuse configured secrets shorter than 32 bytes\n"
    "  --join-rate N            joins per second per client address (default 0 = off;\n"
    "                           e.g. 10 when clients do not share addresses)\n"
    "  --join-burst N           join burst per client address (default 20)\n"
    "  --trusted-proxies CIDRS  peers whose X-Forwarded-For names the client\n"
    "                           (comma-separated, e.g. 10.0.0.0/8,127.0.0.1; default none)\n"
    "  --poll-min-fraction F    a poll sooner than F x the last retryAfterMs is early\n"
    "                           (default 0 = off; e.g. 0.5)\n"
    "  --poll-allowance N       early polls allowed per identity, refilled 1/s (default 20)\n"
    "  --rate-limit-keys N      addresses / identities tracked per limiter (default 65536)\n"
    "  --max-conn-requests N    requests per keep-alive connection (default 1000; 0 = no limit)\n"
    "  --request-timeout-seconds N  time to send a whole request (default 10; at most\n"
    "                           --timeout-seconds)\n"
    "  --help                   print this text\n"
    "Flags override the file; WAITROOM_ADMIN_KEY, WAITROOM_TOKEN_SECRET,\n"
    "WAITROOM_TOKEN_SECRET_PREVIOUS, WAITROOM_COOKIE_SECRET and\n"
    "WAITROOM_COOKIE_SECRET_PREVIOUS override both. Both --flag VALUE and --flag=VALUE work.\n";

const char *wr_config_usage(void)
{
    return usage;
}

void wr_config_defaults(wr_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1:8080");
    snprintf(cfg->store, sizeof(cfg->store), "memory");
    cfg->identity = WR_IDENTITY_COOKIE;
    snprintf(cfg->identity_header, sizeof(cfg->identity_header), "X-User-Id");
    cfg->log_level = WR_LOG_INFO;
    cfg->cookie_secure = false;
    cfg->max_connections = 10000;
    cfg->timeout_seconds = 30;
    cfg->store_timeout_ms = 250;
    cfg->redis_wait_replicas = 0;
    cfg->redis_wait_timeout_ms = 100;
    cfg->join_rate = 0; /* off: people behind one carrier NAT share an address */
    cfg->join_burst = 20;
    cfg->poll_min_fraction = 0; /* off: the contract lets clients poll as they like */
    cfg->poll_allowance = 20;
    cfg->rate_limit_keys = WR_RATELIMIT_KEYS_DEFAULT;
    cfg->max_conn_requests = 1000;
    cfg->request_timeout_seconds = 10;
}

__attribute__((format(printf, 3, 4))) static wr_err_t fail(char *err, size_t errlen,
                                                           const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return WR_EINVAL;
}

/* Digits only (no sign, space or junk), value in [min, max]. */
static bool parse_uint(const char *s, unsigned long long min, unsigned long long max,
                       unsigned long long *out)
{
    unsigned long long v = 0;
    size_t n = 0;
    for (; s[n]; n++) {
        if (s[n] < '0' || s[n] > '9' || n >= 19)
            return false;
        v = v * 10 + (unsigned long long)(s[n] - '0');
    }
    if (n == 0 || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* No byte <= 0x20 (controls, space) and no DEL. */
static bool printable_no_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == 0x7f)
            return false;
    }
    return true;
}

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
}

static bool hex6_char(char c)
{
    return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' ||
           c == '.';
}

/* "HOST:PORT" with HOST a name or IPv4 address, or "[IPv6]:PORT"; the port
 * in [port_min, 65535]. s is s_len bytes (not necessarily NUL-terminated). */
static bool valid_hostport(const char *s, size_t s_len, unsigned port_min)
{
    const char *colon = NULL;
    for (size_t i = s_len; i > 0; i--) {
        if (s[i - 1] == ':') {
            colon = s + i - 1;
            break;
        }
    }
    if (!colon || colon == s)
        return false;
    size_t host_len = (size_t)(colon - s);
    if (s[0] == '[') {
        if (host_len < 3 || s[host_len - 1] != ']')
            return false;
        for (size_t i = 1; i + 1 < host_len; i++)
            if (!hex6_char(s[i]))
                return false;
    } else {
        for (size_t i = 0; i < host_len; i++)
            if (!host_char(s[i]))
                return false;
    }
    char port[8];
    size_t port_len = s_len - host_len - 1;
    if (port_len == 0 || port_len >= sizeof(port))
        return false;
    memcpy(port, colon + 1, port_len);
    port[port_len] = '\0';
    unsigned long long p;
    return parse_uint(port, port_min, 65535, &p);
}

static wr_err_t check_store(const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "memory") == 0)
        return WR_OK;
    if (strncmp(v, "redis://", 8) == 0) {
        const char *hp = v + 8;
        const char *slash = strchr(hp, '/');
        size_t hp_len = slash ? (size_t)(slash - hp) : strlen(hp);
        if (!valid_hostport(hp, hp_len, 1))
            return fail(err, errlen, "'%s' must be redis://HOST:PORT[/DB] (port 1..65535)", v);
        unsigned long long db;
        if (slash && !parse_uint(slash + 1, 0, 65535, &db))
            return fail(err, errlen, "'%s': the database must be a number 0..65535", v);
        return WR_OK;
    }
    if (strncmp(v, "unix://", 7) == 0) {
        const char *path = v + 7;
        size_t n = strlen(path);
        if (path[0] != '/' || n < 2 || !printable_no_space(path, n))
            return fail(err, errlen, "'%s' must be unix:///ABSOLUTE/PATH", v);
        if (n > UNIX_PATH_MAX)
            return fail(err, errlen, "unix socket path is longer than %d bytes", UNIX_PATH_MAX);
        return WR_OK;
    }
    return fail(err, errlen, "'%s' must be memory, redis://HOST:PORT[/DB] or unix:///PATH", v);
}

/* RFC 9110 tchar. */
static bool token_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A finite decimal number in [min, max] ("10", "0.5", "1e3"). */
static bool parse_double(const char *s, double min, double max, double *out)
{
    char *end = NULL;
    if (!*s || *s == ' ' || *s == '\t')
        return false;
    double v = strtod(s, &end);
    if (!end || *end || !isfinite(v) || v < min || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_bool(const char *v, bool *out)
{
    static const char *const t[] = {"true", "1", "yes", "on"};
    static const char *const f[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, t[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(v, f[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* Copies a string setting of at most max bytes. */
static wr_err_t set_string(char *dst, size_t max, const char *v, char *err, size_t errlen)
{
    size_t n = strlen(v);
    if (n > max)
        return fail(err, errlen, "is longer than %zu bytes", max);
    memcpy(dst, v, n + 1);
    return WR_OK;
}

static wr_err_t set_secret(uint8_t *dst, size_t *dst_len, const char *v, char *err, size_t errlen)
{
    size_t n = strlen(v);
    if (n > WR_KEY_MAX)
        return fail(err, errlen, "is longer than %d bytes", WR_KEY_MAX);
    memcpy(dst, v, n);
    *dst_len = n;
    return WR_OK;
}

/* Validates value and stores it in cfg; the message says what is wrong
 * (the caller prefixes where the value came from). */
static wr_err_t set_option(wr_config_t *cfg, opt_id_t id, const char *v, char *err, size_t errlen)
{
    unsigned long long n;
    switch (id) {
    case OPT_CONFIG:
    case OPT_HELP:
        return WR_OK;
    case OPT_LISTEN:
        if (strlen(v) > WR_ADDR_MAX || !valid_hostport(v, strlen(v), 0))
            return fail(err, errlen, "'%s' must be HOST:PORT or [IPv6]:PORT, port 0..65535", v);
        return set_string(cfg->listen, WR_ADDR_MAX, v, err, errlen);
    case OPT_STORE:
        if (strlen(v) > WR_URL_MAX)
            return fail(err, errlen, "is longer than %d bytes", WR_URL_MAX);
        if (check_store(v, err, errlen))
            return WR_EINVAL;
        return set_string(cfg->store, WR_URL_MAX, v, err, errlen);
    case OPT_ADMIN_KEY:
        if (!printable_no_space(v, strlen(v)))
            return fail(err, errlen, "must not contain spaces or control characters");
        return set_string(cfg->admin_key, WR_KEY_MAX, v, err, errlen);
    case OPT_IDENTITY:
        if (strcmp(v, "cookie") == 0) {
            cfg->identity = WR_IDENTITY_COOKIE;
            return WR_OK;
        }
        if (strcmp(v, "header") == 0) {
            cfg->identity = WR_IDENTITY_HEADER;
            snprintf(cfg->identity_header, sizeof(cfg->identity_header), "X-User-Id");
            return WR_OK;
        }
        if (strncmp(v, "header:", 7) == 0) {
            const char *name = v + 7;
            size_t len = strlen(name);
            bool ok = len >= 1 && len <= WR_HEADER_NAME_MAX;
            for (size_t i = 0; ok && i < len; i++)
                ok = token_char(name[i]);
            if (!ok)
                return fail(err, errlen,
                            "'%s': the header name must be an HTTP token of 1..%d characters", v,
                            WR_HEADER_NAME_MAX);
            cfg->identity = WR_IDENTITY_HEADER;
            memcpy(cfg->identity_header, name, len + 1);
            return WR_OK;
        }
        return fail(err, errlen, "'%s' must be cookie, header or header:NAME", v);
    case OPT_TOKEN_SECRET:
        return set_secret(cfg->token_secret, &cfg->token_secret_len, v, err, errlen);
    case OPT_COOKIE_SECRET:
        return set_secret(cfg->cookie_secret, &cfg->cookie_secret_len, v, err, errlen);
    case OPT_LOG_LEVEL:
        if (!wr_log_parse_level(v, &cfg->log_level))
            return fail(err, errlen, "'%s' must be debug, info, warn or error", v);
        return WR_OK;
    case OPT_COOKIE_SECURE:
        if (!parse_bool(v, &cfg->cookie_secure))
            return fail(err, errlen, "'%s' must be true, false, 1, 0, yes or no", v);
        return WR_OK;
    case OPT_MAX_CONNECTIONS:
        if (!parse_uint(v, 1, 1000000, &n))
            return fail(err, errlen, "'%s' must be an integer from 1 to 1000000", v);
        cfg->max_connections = (uint32_t)n;
        return WR_OK;
    case OPT_TIMEOUT_SECONDS:
        if (!parse_uint(v, 1, 3600, &n))
            return fail(err, errlen, "'%s' must be an integer from 1 to 3600", v);
        cfg->timeout_seconds = (uint32_t)n;
        return WR_OK;
    case OPT_STORE_TIMEOUT_MS:
        if (!parse_uint(v, 1, 60000, &n))
            return fail(err, errlen, "'%s' must be an integer from 1 to 60000", v);
        cfg->store_timeout_ms = (uint32_t)n;
        return WR_OK;
    case OPT_BREAKER:
        if (strcmp(v, "off") != 0) {
            wr_breaker_opts_t bo;
            wr_breaker_opts_default(&bo);
            char berr[160];
            if (wr_breaker_parse(&bo, v, berr, sizeof(berr)) != WR_OK)
                return fail(err, errlen, "%s", berr);
        }
        return set_string(cfg->breaker, WR_BREAKER_SPEC_MAX, v, err, errlen);
    case OPT_REDIS_WAIT_REPLICAS:
        if (!parse_uint(v, 0, 100, &n))
            return fail(err, errlen, "'%s' must be an integer from 0 to 100", v);
        cfg->redis_wait_replicas = (uint32_t)n;
        return WR_OK;
    case OPT_REDIS_WAIT_TIMEOUT_MS:
        if (!parse_uint(v, 1, 60000, &n))
            return fail(err, errlen, "'%s' must be an integer from 1 to 60000", v);
        cfg->redis_wait_timeout_ms = (uint32_t)n;
        return WR_OK;
    case OPT_ADMIN_LISTEN:
        if (strlen(v) > WR_ADDR_MAX || !valid_hostport(v, strlen(v), 0))
            return fail(err, errlen, "'%s' must be HOST:PORT or [IPv6]:PORT, port 0..65535", v);
        return set_string(cfg->admin_listen, WR_ADDR_MAX, v, err, errlen);
    case OPT_TOKEN_SECRET_PREVIOUS:
        return set_secret(cfg->token_secret_previous, &cfg->token_secret_previous_len, v, err,
                          errlen);
    case OPT_COOKIE_SECRET_PREVIOUS:
        return set_secret(cfg->cookie_secret_previous, &cfg->cookie_secret_previous_len, v, err,
                          errlen);
    case OPT_STRICT_SECRETS:
        if (!parse_bool(v, &cfg->strict_secrets))
            return fail(err, errlen, "'%s' must be true, false, 1, 0, yes or no", v);
        return WR_OK;
    case OPT_JOIN_RATE:
        if (!parse_double(v, 0, 1e6, &cfg->join_rate))
            return fail(err, errlen, "'%s' must be a number from 0 (off) to 1000000", v);
        return WR_OK;
    case OPT_JOIN_BURST:
        if (!parse_double(v, 1, 1e6, &cfg->join_burst))
            return fail(err, errlen, "'%s' must be a number from 1 to 1000000", v);
        return WR_OK;
    case OPT_TRUSTED_PROXIES: {
        char bad[64] = "";
        wr_err_t e = wr_ratelimit_cidrs_parse(v, cfg->trusted_proxies, WR_RATELIMIT_CIDRS_MAX,
                                              &cfg->n_trusted_proxies, bad, sizeof(bad));
        if (e == WR_ELIMIT)
            return fail(err, errlen, "more than %d networks", WR_RATELIMIT_CIDRS_MAX);
        if (e != WR_OK)
            return fail(err, errlen, "'%s' is not an address or ADDR/PREFIX network", bad);
        return WR_OK;
    }
    case OPT_POLL_MIN_FRACTION:
        if (!parse_double(v, 0, 1, &cfg->poll_min_fraction))
            return fail(err, errlen, "'%s' must be a number from 0 (off) to 1", v);
        return WR_OK;
    case OPT_POLL_ALLOWANCE:
        if (!parse_double(v, 1, 1e6, &cfg->poll_allowance))
            return fail(err, errlen, "'%s' must be a number from 1 to 1000000", v);
        return WR_OK;
    case OPT_RATE_LIMIT_KEYS:
        if (!parse_uint(v, 16, WR_RATELIMIT_KEYS_MAX, &n))
            return fail(err, errlen, "'%s' must be an integer from 16 to %u", v,
                        (unsigned)WR_RATELIMIT_KEYS_MAX);
        cfg->rate_limit_keys = (uint32_t)n;
        return WR_OK;
    case OPT_MAX_CONN_REQUESTS:
        if (!parse_uint(v, 0, 100000000, &n))
            return fail(err, errlen, "'%s' must be an integer from 0 (no limit) to 100000000", v);
        cfg->max_conn_requests = (uint32_t)n;
        return WR_OK;
    case OPT_REQUEST_TIMEOUT_SECONDS:
        if (!parse_uint(v, 1, 3600, &n))
            return fail(err, errlen, "'%s' must be an integer from 1 to 3600", v);
        cfg->request_timeout_seconds = (uint32_t)n;
        return WR_OK;
    case OPT_DATA_DIR:
        for (const char *p = v; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return fail(err, errlen, "must not contain control characters");
        return set_string(cfg->data_dir, WR_URL_MAX, v, err, errlen);
    }
    return fail(err, errlen, "unknown option");
}

wr_err_t wr_config_set(wr_config_t *cfg, const char *key, const char *value, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        if (opts[i].ini && strcmp(opts[i].ini, key) == 0) {
            char why[384];
            if (set_option(cfg, opts[i].id, value, why, sizeof(why)) == WR_OK)
                return WR_OK;
            return fail(err, errlen, "%s: %s", key, why);
        }
    }
    return fail(err, errlen, "unknown key '%.100s' in [server]", key);
}

/* ---- flags ---- */

/*
 * Reads the flag at argv[*i]: sets *opt and *value (NULL when the flag has
 * none) and advances *i past a separate value.
 */
static wr_err_t next_flag(int argc, char **argv, int *i, const opt_t **opt, const char **value,
                          char *err, size_t errlen)
{
    const char *a = argv[*i];
    if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
        return fail(err, errlen, "unexpected argument '%.200s' (see --help)", a);
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t k = 0; k < N_OPTS; k++) {
        if (!opts[k].flag || strlen(opts[k].flag) != name_len ||
            strncmp(opts[k].flag, name, name_len) != 0)
            continue;
        *opt = &opts[k];
        if (opts[k].arg == 0 && eq)
            return fail(err, errlen, "--%s takes no value", opts[k].flag);
        if (eq) {
            *value = eq + 1;
        } else if (opts[k].arg == 1) {
            if (*i + 1 >= argc)
                return fail(err, errlen, "--%s needs a value", opts[k].flag);
            *value = argv[++*i];
        } else {
            *value = NULL;
        }
        return WR_OK;
    }
    return fail(err, errlen, "unknown flag '--%.*s' (see --help)",
                (int)(name_len > 200 ? 200 : name_len), name);
}

static const struct {
    const char *var;
    opt_id_t id;
} envs[] = {
    {"WAITROOM_ADMIN_KEY", OPT_ADMIN_KEY},
    {"WAITROOM_TOKEN_SECRET", OPT_TOKEN_SECRET},
    {"WAITROOM_COOKIE_SECRET", OPT_COOKIE_SECRET},
    {"WAITROOM_TOKEN_SECRET_PREVIOUS", OPT_TOKEN_SECRET_PREVIOUS},
    {"WAITROOM_COOKIE_SECRET_PREVIOUS", OPT_COOKIE_SECRET_PREVIOUS},
};

wr_err_t wr_config_load(wr_config_t *cfg, int argc, char **argv, bool *help, char *err,
                        size_t errlen)
{
    wr_err_t rc;
    const char *config_path = NULL;
    bool want_help = false;
    if (help)
        *help = false;
    wr_config_defaults(cfg);

    /* Pass 1: --help and --config. */
    for (int i = 1; i < argc; i++) {
        const opt_t *opt = NULL;
        const char *value = NULL;
        if ((rc = next_flag(argc, argv, &i, &opt, &value, err, errlen))) {
            if (want_help)
                break; /* --help wins over a later mistake */
            return rc;
        }
        if (opt->id == OPT_HELP)
            want_help = true;
        else if (opt->id == OPT_CONFIG)
            config_path = value;
    }
    if (want_help) {
        if (help)
            *help = true;
        return WR_OK;
    }
    if (config_path) {
        if (config_path[0] == '\0')
            return fail(err, errlen, "--config needs a file name");
        if ((rc = wr_config_load_file(cfg, config_path, err, errlen)))
            return rc;
    }

    /* Pass 2: every other flag, in order. */
    for (int i = 1; i < argc; i++) {
        const opt_t *opt = NULL;
        const char *value = NULL;
        if ((rc = next_flag(argc, argv, &i, &opt, &value, err, errlen)))
            return rc;
        if (opt->id == OPT_CONFIG)
            continue;
        char why[384];
        if (opt->id == OPT_COOKIE_SECURE && !value) {
            cfg->cookie_secure = true;
            continue;
        }
        if (opt->id == OPT_STRICT_SECRETS && !value) {
            cfg->strict_secrets = true;
            continue;
        }
        if (set_option(cfg, opt->id, value, why, sizeof(why)))
            return fail(err, errlen, "--%s: %s", opt->flag, why);
    }

    /* Environment: secrets override both. */
    for (size_t k = 0; k < sizeof(envs) / sizeof(envs[0]); k++) {
        const char *v = getenv(envs[k].var);
        if (!v || v[0] == '\0')
            continue;
        char why[384];
        if (set_option(cfg, envs[k].id, v, why, sizeof(why)))
            return fail(err, errlen, "%s: %s", envs[k].var, why);
    }

    /* --strict-secrets: every configured secret has at least 32 bytes. */
    if (cfg->strict_secrets) {
        static const char *const names[] = {"token secret", "previous token secret",
                                            "cookie secret", "previous cookie secret"};
        const size_t lens[] = {cfg->token_secret_len, cfg->token_secret_previous_len,
                               cfg->cookie_secret_len, cfg->cookie_secret_previous_len};
        for (size_t k = 0; k < 4; k++)
            if (lens[k] > 0 && lens[k] < WR_CONFIG_SECRET_MIN)
                return fail(err, errlen,
                            "--strict-secrets: the %s is %zu bytes; at least %d are required",
                            names[k], lens[k], WR_CONFIG_SECRET_MIN);
    }
    return WR_OK;
}
