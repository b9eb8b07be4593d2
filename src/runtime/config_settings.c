/*
 * config_settings.c - the settings table of the server configuration
 * (config.c: defaults, flags, INI keys, the environment and the usage text
 * all walk it): a row per setting with its flag, [server] key, kind,
 * range, default and --help text, and the checks of the values that are
 * more than a range (addresses, the store URL, the admin key, paths, the
 * breaker, identity, trusted proxies).
 */
#include "runtime/config_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/ids.h"
#include "base/version.h"
#include "core/breaker.h"
#include "core/vapid.h"
#include "runtime/store_registry.h"

#define STR_(x) #x
#define STR(x)  STR_(x)

/* Digits only (no sign, space or junk), value in [min, max]. */
bool wr_config__parse_uint(const char *s, unsigned long long min, unsigned long long max,
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
    } else if (!wr_ids_valid_host_n(s, host_len)) {
        return false;
    }
    char port[8];
    size_t port_len = s_len - host_len - 1;
    if (port_len == 0 || port_len >= sizeof(port))
        return false;
    memcpy(port, colon + 1, port_len);
    port[port_len] = '\0';
    unsigned long long p;
    return wr_config__parse_uint(port, port_min, 65535, &p);
}

/* A finite decimal number in [min, max] ("10", "0.5", "1e3"). */
bool wr_config__parse_double(const char *s, double min, double max, double *out)
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

bool wr_config__parse_bool(const char *v, bool *out)
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

/* ---- checks and parsers of the special settings ---- */

static wr_err_t check_addr(const char *v, char *err, size_t errlen)
{
    if (strlen(v) > WR_ADDR_MAX || !valid_hostport(v, strlen(v), 0))
        return wr_einval(err, errlen, "'%s' must be HOST:PORT or [IPv6]:PORT, port 0..65535", v);
    return WR_OK;
}

static wr_err_t check_store_url(const char *v, char *err, size_t errlen)
{
    if (strlen(v) > WR_URL_MAX)
        return wr_einval(err, errlen, "is longer than %d bytes", WR_URL_MAX);
    return wr_store_check_url(v, err, errlen); /* the registry: the same parser as the open */
}

static wr_err_t check_admin_key(const char *v, char *err, size_t errlen)
{
    if (!printable_no_space(v, strlen(v)))
        return wr_einval(err, errlen, "must not contain spaces or control characters");
    return WR_OK;
}

static wr_err_t check_data_dir(const char *v, char *err, size_t errlen)
{
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return wr_einval(err, errlen, "must not contain control characters");
    return WR_OK;
}

/* A file name: not empty, no control characters. */
static wr_err_t check_path(const char *v, char *err, size_t errlen)
{
    if (!v[0])
        return wr_einval(err, errlen, "needs a file name");
    return check_data_dir(v, err, errlen);
}

/* --log-name: [a-z0-9.-]{1,64} (docs/API.md 1.3: the key's and the
 * origin's name). */
static wr_err_t check_log_name(const char *v, char *err, size_t errlen)
{
    size_t n = strlen(v);
    bool ok = n >= 1 && n <= 64;
    for (size_t i = 0; ok && i < n; i++)
        ok = (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '.' ||
             v[i] == '-';
    return ok ? WR_OK : wr_einval(err, errlen, "must be 1 to 64 of a-z, 0-9, '.' and '-'");
}

static wr_err_t check_breaker(const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "off") == 0)
        return WR_OK;
    wr_breaker_opts_t bo;
    wr_breaker_opts_default(&bo);
    char berr[160];
    if (wr_breaker_parse(&bo, v, berr, sizeof(berr)) != WR_OK)
        return wr_einval(err, errlen, "%s", berr);
    return WR_OK;
}

/* cookie | header | header:NAME: sets identity and, for header modes,
 * identity_header (cookie leaves the header name as it was). */
wr_err_t wr_config__set_identity(wr_config_t *cfg, const char *v, char *err, size_t errlen)
{
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
        if (!wr_ids_valid_token_n(name, len, WR_HEADER_NAME_MAX))
            return wr_einval(err, errlen,
                             "'%s': the header name must be an HTTP token of 1..%d characters", v,
                             WR_HEADER_NAME_MAX);
        cfg->identity = WR_IDENTITY_HEADER;
        memcpy(cfg->identity_header, name, len + 1);
        return WR_OK;
    }
    return wr_einval(err, errlen, "'%s' must be cookie, header or header:NAME", v);
}

wr_err_t wr_config__set_trusted_proxies(wr_config_t *cfg, const char *v, char *err, size_t errlen)
{
    char bad[64] = "";
    wr_err_t e = wr_ratelimit_cidrs_parse(v, cfg->trusted_proxies, WR_RATELIMIT_CIDRS_MAX,
                                          &cfg->n_trusted_proxies, bad, sizeof(bad));
    if (e == WR_ELIMIT)
        return wr_einval(err, errlen, "more than %d networks", WR_RATELIMIT_CIDRS_MAX);
    if (e != WR_OK)
        return wr_einval(err, errlen, "'%s' is not an address or ADDR/PREFIX network", bad);
    return WR_OK;
}

/* --push-subject: what RFC 8292 and push services accept (no localhost). */
static wr_err_t check_push_subject(const char *v, char *err, size_t errlen)
{
    if (!wr_vapid_subject_ok(v))
        return wr_einval(err, errlen,
                         "'%s' must be mailto:ADDRESS or an https:// URL, not a localhost one", v);
    return WR_OK;
}

/* --push-allow-host HOST[:PORT]: repeatable, each adds (an INI value may
 * list several, separated by commas or spaces). */
wr_err_t wr_config__set_push_allow(wr_config_t *cfg, const char *v, char *err, size_t errlen)
{
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ", ");
        if (n > 0) {
            char one[WR_PUSHADDR_HOST_MAX + 16];
            if (n >= sizeof(one))
                return wr_einval(err, errlen, "'%.*s' is too long", (int)n, p);
            memcpy(one, p, n);
            one[n] = '\0';
            wr_err_t e = wr_pushaddr_allow_add(&cfg->push_allow, one);
            if (e == WR_ELIMIT)
                return wr_einval(err, errlen, "more than %d hosts", WR_PUSHADDR_ALLOW_MAX);
            if (e != WR_OK)
                return wr_einval(err, errlen, "'%s' must be HOST or HOST:PORT", one);
        }
        p += n;
        p += strspn(p, ", ");
    }
    return WR_OK;
}

/* The row macros name a field and its C type: a row whose kind does not
 * match its field's type does not compile. */
#define FIELD(f, T)                                                                                \
    .off = _Generic(((wr_config_t *)0)->f, T                                                       \
                    : offsetof(wr_config_t, f)),                                                   \
    .size = sizeof(((wr_config_t *)0)->f)
#define BOOL_FIELD(f)           .kind = K_BOOL, FIELD(f, bool)
#define UINT_FIELD(f, lo, hi)   .kind = K_UINT, FIELD(f, uint32_t), .min = (lo), .max = (hi)
#define DOUBLE_FIELD(f, lo, hi) .kind = K_DOUBLE, FIELD(f, double), .min = (lo), .max = (hi)
#define ENUM_FIELD(f, T, list)  .kind = K_ENUM, FIELD(f, T), .names = (list)
#define STRING_FIELD(f, check_) .kind = K_STRING, FIELD(f, char *), .check = (check_)
#define SECRET_FIELD(f)                                                                            \
    .kind = K_SECRET, FIELD(f, uint8_t *), .len_off = offsetof(wr_config_t, f##_len)
#define SPECIAL(fn, f, T) .kind = K_SPECIAL, .set = (fn), FIELD(f, T)

static const char *const log_levels[] = {"debug", "info", "warn", "error", NULL};
static const char *const log_formats[] = {"text", "json", NULL};
_Static_assert(sizeof(wr_log_level_t) == sizeof(int), "K_ENUM fields are int-sized");
_Static_assert(sizeof(wr_log_format_t) == sizeof(int), "K_ENUM fields are int-sized");

/* In --help order. */
const setting_t wr_config__settings[] = {
    {"config", NULL, .kind = K_CONFIG, .meta = "FILE", .help = "INI file",
     .doc = "[server] keys, [queue NAME] sections"},
    {"listen", "listen", STRING_FIELD(listen, check_addr), .def = "127.0.0.1:8080",
     .meta = "ADDR:PORT", .help = "listen address",
     .doc = "[::1]:8080 for IPv6; port 0 picks a free port"},
    {"reuse-port", "reuse_port", BOOL_FIELD(reuse_port),
     .help = "share the listen port with other waitroomd processes",
     .doc = "SO_REUSEPORT; all on one Redis store"},
    {"store", "store", STRING_FIELD(store, check_store_url), .def = "memory", .def_in_help = true,
     .meta = "URL",
     .help = "memory (default) | redis://[USER:PASSWORD@]HOST:PORT[/DB] | rediss://... (TLS) | "
             "redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER[/DB] | unix:///PATH/redis.sock | "
             "redis-cluster://HOST:PORT[,HOST:PORT...] | rediss-cluster://... (TLS)",
     .doc = "docs/RELIABILITY.md"},
    {NULL, NULL, STRING_FIELD(redis_password, NULL), .env = "WAITROOM_REDIS_PASSWORD"},
    {"admin-key", "admin_key", STRING_FIELD(admin_key, check_admin_key),
     .env = "WAITROOM_ADMIN_KEY", .meta = "KEY", .help = "bearer key of the admin API",
     .reload = true},
    {"identity", "identity", SPECIAL(wr_config__set_identity, identity, wr_identity_mode_t),
     .def = "cookie", .meta = "MODE",
     .help = "cookie (default) | header | header:NAME (default X-User-Id)"},
    {NULL, NULL, STRING_FIELD(identity_header, NULL), .def = "X-User-Id"}, /* set by identity */
    {"token-secret", "token_secret", SECRET_FIELD(token_secret), .env = "WAITROOM_TOKEN_SECRET",
     .meta = "SECRET", .help = "entry-token HMAC secret",
     .doc = "default: one shared secret kept in the store", .reload = true},
    {NULL, "cookie_secret", SECRET_FIELD(cookie_secret), .env = "WAITROOM_COOKIE_SECRET",
     .reload = true},
    {"log-level", "log_level", ENUM_FIELD(log_level, wr_log_level_t, log_levels), .def = "info",
     .meta = "LEVEL", .reload = true},
    {"data-dir", "data_dir", STRING_FIELD(data_dir, check_data_dir), .meta = "DIR",
     .help = "memory store snapshots", .doc = "default none"},
    {"log-key", "log_key", STRING_FIELD(log_key_file, check_path), .meta = "FILE",
     .help = "the public log's signing key (Ed25519, PKCS#8 PEM)",
     .doc = "default: one key created once and kept in the store"},
    {"log-name", "log_name", STRING_FIELD(log_name, check_log_name), .def = "waitroom",
     .meta = "NAME", .help = "the public log's key and origin name ([a-z0-9.-]{1,64})",
     .doc = "use the shop's host name"},
    {"web-dir", "web_dir", STRING_FIELD(web_dir, check_data_dir), .meta = "DIR",
     .help = "queue page files replacing the embedded ones by name (queue.html, style.css, "
             "i18n.json, ...)",
     .doc = "default none; read at start"},
    {"cookie-secure", "cookie_secure", BOOL_FIELD(cookie_secure),
     .help = "mark the visitor cookie Secure", .doc = "HTTPS deployments"},
    {"max-connections", "max_connections", UINT_FIELD(max_connections, 0, 1000000), .zero = "auto",
     .def = "0", .meta = "N", .help = "connection cap",
     .doc = "auto: " STR(WR_CONFIG_CONNECTIONS_DEFAULT) ", or fewer when ulimit -Hn is lower"},
    {"timeout-seconds", "timeout_seconds", UINT_FIELD(timeout_seconds, 1, 3600), .def = "30",
     .meta = "N", .help = "HTTP read/write timeout"},
    {"store-timeout-ms", "store_timeout_ms", UINT_FIELD(store_timeout_ms, 1, 60000), .def = "250",
     .meta = "N", .help = "store command timeout"},
    {"breaker", "breaker", STRING_FIELD(breaker, check_breaker), .meta = "SPEC",
     .help = "store circuit breaker: off, or key=value,... with the keys window, min_calls, "
             "failure_rate, consecutive, slow_ms, slow_rate, wait_ms, wait_max_ms, probes",
     .doc = "default: built-in values"},
    {"redis-wait-replicas", "redis_wait_replicas", UINT_FIELD(redis_wait_replicas, 0, 100),
     .zero = "off", .def = "0", .meta = "N",
     .help = "after consume and admission, WAIT for N replicas", .doc = "see docs/RELIABILITY.md"},
    {"redis-wait-timeout-ms", "redis_wait_timeout_ms", UINT_FIELD(redis_wait_timeout_ms, 1, 60000),
     .def = "100", .meta = "N", .help = "timeout of that WAIT"},
    {"redis-ca", "redis_ca", STRING_FIELD(redis_ca, NULL), .meta = "FILE",
     .help = "rediss://: CA certificates (PEM) to verify Redis with",
     .doc = "default: the system's"},
    {"redis-cert", "redis_cert", STRING_FIELD(redis_cert, NULL), .meta = "FILE",
     .help = "rediss://: client certificate (PEM)", .doc = "with --redis-key"},
    {"redis-key", "redis_key", STRING_FIELD(redis_key, NULL), .meta = "FILE",
     .help = "rediss://: private key of --redis-cert (PEM)"},
    {"redis-allow-eviction", "redis_allow_eviction", BOOL_FIELD(redis_allow_eviction),
     .help = "start even if Redis may evict keys (maxmemory-policy allkeys-*)",
     .doc = "users would lose their place"},
    {NULL, NULL, .kind = K_HEADING, .help = "Security (docs/SECURITY.md):"},
    {"admin-listen", "admin_listen", STRING_FIELD(admin_listen, check_addr), .meta = "ADDR:PORT",
     .help = "serve the admin API only there", .doc = "404 on --listen"},
    {"token-secret-previous", "token_secret_previous", SECRET_FIELD(token_secret_previous),
     .env = "WAITROOM_TOKEN_SECRET_PREVIOUS", .meta = "SECRET",
     .help = "the secret before a rotation: tokens signed with it still verify", .reload = true},
    {NULL, "cookie_secret_previous", SECRET_FIELD(cookie_secret_previous),
     .env = "WAITROOM_COOKIE_SECRET_PREVIOUS", .reload = true},
    {"strict-secrets", "strict_secrets", BOOL_FIELD(strict_secrets),
     .help = "refuse configured secrets shorter than " STR(WR_CONFIG_SECRET_MIN) " bytes"},
    {"join-rate", "join_rate", DOUBLE_FIELD(join_rate, 0, 1e6), .zero = "off", .def = "0",
     .meta = "N", .help = "joins per second per client address",
     .doc = "e.g. 10 when clients do not share addresses"},
    {"join-burst", "join_burst", DOUBLE_FIELD(join_burst, 1, 1e6), .def = "20", .meta = "N",
     .help = "join burst per client address"},
    {"trusted-proxies", "trusted_proxies",
     SPECIAL(wr_config__set_trusted_proxies, trusted_proxies, wr_cidr_t *), .meta = "CIDRS",
     .help = "peers whose X-Forwarded-For names the client",
     .doc = "comma-separated, e.g. 10.0.0.0/8,127.0.0.1; default none"},
    {"poll-min-fraction", "poll_min_fraction", DOUBLE_FIELD(poll_min_fraction, 0, 1), .zero = "off",
     .def = "0", .meta = "F", .help = "a poll sooner than F x the last retryAfterMs is early",
     .doc = "e.g. 0.5"},
    {"poll-allowance", "poll_allowance", DOUBLE_FIELD(poll_allowance, 1, 1e6), .def = "20",
     .meta = "N", .help = "early polls allowed per identity, refilled 1/s"},
    {"rate-limit-keys", "rate_limit_keys", UINT_FIELD(rate_limit_keys, 16, WR_RATELIMIT_KEYS_MAX),
     .def = STR(WR_RATELIMIT_KEYS_DEFAULT), .meta = "N",
     .help = "addresses / identities tracked per limiter"},
    {"max-conn-requests", "max_conn_requests", UINT_FIELD(max_conn_requests, 0, 100000000),
     .zero = "no limit", .def = "1000", .meta = "N", .help = "requests per keep-alive connection"},
    {"request-timeout-seconds", "request_timeout_seconds",
     UINT_FIELD(request_timeout_seconds, 1, 3600), .def = "10", .meta = "N",
     .help = "time to send a whole request", .doc = "at most --timeout-seconds"},
    {NULL, NULL, .kind = K_HEADING, .help = "Web Push (README.md, Notify me):"},
    {"push-subject", "push_subject", STRING_FIELD(push_subject, check_push_subject),
     .meta = "mailto:ADDRESS|https://URL",
     .help = "who sends the pushes (VAPID sub); required by a queue with push",
     .doc = "default none: push off"},
    {"push-key", "push_key", STRING_FIELD(push_key, check_path), .meta = "FILE",
     .help = "the VAPID private key (P-256, PEM)",
     .doc = "default: derived from the token secret kept in the store"},
    {"push-allow-host", "push_allow_host",
     SPECIAL(wr_config__set_push_allow, push_allow, wr_pushaddr_allow_t), .meta = "HOST[:PORT]",
     .help = "a push service host exempt from the address rule (may be http://); repeatable",
     .doc = "tests and private push services; default none"},
    {NULL, NULL, .kind = K_HEADING, .help = "Operations (README.md, Operations):"},
    {"log-format", "log_format", ENUM_FIELD(log_format, wr_log_format_t, log_formats),
     .def = "text", .meta = "FORMAT", .reload = true},
    {"error-log", "error_log", STRING_FIELD(error_log, check_path), .meta = "FILE",
     .help = "log lines to FILE", .doc = "default standard error; reopened on SIGHUP"},
    {"access-log", "access_log", STRING_FIELD(access_log, check_path), .meta = "FILE|-",
     .help = "one line per request to FILE, or - for standard output",
     .doc = "default none; reopened on SIGHUP"},
    {"report-days", "report_days", UINT_FIELD(report_days, 1, 3650), .def = "30", .meta = "N",
     .help = "days each queue's report is kept (GET /v1/admin/queues/{queue}/report)",
     .doc = "in the store, also after the queue is deleted"},
    {"pid-file", "pid_file", STRING_FIELD(pid_file, check_path), .meta = "FILE",
     .help = "write the process id to FILE at start, remove it at exit"},
    {"help", NULL, .kind = K_HELP, .help = "print this text"},
    {"version", NULL, .kind = K_VERSION, .help = "print \"waitroomd " WR_VERSION "\" and exit"},
};
const size_t wr_config__n_settings = sizeof(wr_config__settings) / sizeof(wr_config__settings[0]);
