/*
 * config.c - server configuration from defaults, flags and the environment;
 * config_file.c reads the INI file.
 *
 * One table (settings[], after Redis's static_configs[]) has a row per
 * server setting: its flag, [server] INI key, secret environment variable,
 * kind (bool, integer or number with a range, string with an optional
 * check, secret bytes, a name from a list, or a special parse function for
 * the odd ones), the field it fills (offsetof, type-checked by the row
 * macros), its default as text, and its --help line. Defaults, flags, INI
 * keys (wr_config_set), the environment, range checks and the usage text
 * all walk that table, so a setting means the same wherever it comes from,
 * and adding one is a field in wr_config_t plus a row here. Errors are
 * written to the caller's buffer prefixed with where the value came from:
 * "FILE:LINE: ...", "--flag: ..." or "WAITROOM_...: ...".
 *
 * wr_config_load makes two passes over argv: the first finds --config,
 * --help and --version (so the file is loaded first wherever --config
 * appears), the second applies the other flags in order (the last
 * occurrence wins). The secret environment variables are applied last; an
 * empty variable counts as unset. Config loading runs once at start,
 * before any thread exists (the usage text, too, is built once, into a
 * static buffer).
 */
#include "runtime/config.h"

#include "core/breaker.h"
#include "base/ids.h"
#include "runtime/store_registry.h"
#include "base/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <math.h>

#define USAGE_COL   27   /* --help: column of the descriptions */
#define USAGE_WIDTH 92   /* --help: wrap descriptions at this column */
#define USAGE_MAX   6144 /* --help: bytes of the whole text */
#define STR_(x)     #x
#define STR(x)      STR_(x)

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
    return parse_uint(port, port_min, 65535, &p);
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
static wr_err_t set_identity(wr_config_t *cfg, const char *v, char *err, size_t errlen)
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
        bool ok = len >= 1 && len <= WR_HEADER_NAME_MAX;
        for (size_t i = 0; ok && i < len; i++)
            ok = token_char(name[i]);
        if (!ok)
            return wr_einval(err, errlen,
                             "'%s': the header name must be an HTTP token of 1..%d characters", v,
                             WR_HEADER_NAME_MAX);
        cfg->identity = WR_IDENTITY_HEADER;
        memcpy(cfg->identity_header, name, len + 1);
        return WR_OK;
    }
    return wr_einval(err, errlen, "'%s' must be cookie, header or header:NAME", v);
}

static wr_err_t set_trusted_proxies(wr_config_t *cfg, const char *v, char *err, size_t errlen)
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

/* ---- the settings table ---- */

typedef enum {
    K_HEADING, /* not a setting: a heading line in the usage text */
    K_CONFIG,  /* --config FILE, read by wr_config_load itself */
    K_HELP,    /* --help */
    K_VERSION, /* --version */
    K_BOOL,    /* bool; the flag alone means true, --flag=VALUE takes a bool word */
    K_UINT,    /* uint32_t in [min, max] */
    K_DOUBLE,  /* double in [min, max] */
    K_ENUM,    /* int-sized enum: the index of the value in names */
    K_STRING,  /* char[size], at most size - 1 bytes, after check */
    K_SECRET,  /* uint8_t[size] of raw bytes with a size_t length at len_off */
    K_SPECIAL, /* parsed and stored by set */
} kind_t;

typedef wr_err_t (*check_fn)(const char *v, char *err, size_t errlen);
typedef wr_err_t (*special_fn)(wr_config_t *cfg, const char *v, char *err, size_t errlen);

typedef struct {
    const char *flag; /* without "--"; NULL = no flag */
    const char *ini;  /* [server] key; NULL = not in the file */
    kind_t kind;
    size_t off, size;         /* the field in wr_config_t: offset, bytes */
    size_t len_off;           /* K_SECRET: offset of its length */
    double min, max;          /* K_UINT, K_DOUBLE: the accepted range */
    const char *zero;         /* K_UINT, K_DOUBLE: what 0 means ("off"), or NULL */
    const char *const *names; /* K_ENUM: NULL-terminated */
    check_fn check;           /* K_STRING: validates the value first; NULL = any */
    special_fn set;           /* K_SPECIAL */
    const char *env;          /* variable that overrides file and flag; NULL = none */
    const char *def;          /* default, parsed like a value; NULL = zero / empty */
    bool def_in_help;         /* help already names the default */
    const char *meta;         /* --help: the value's placeholder; NULL = none */
    const char *help;         /* --help: what it does (K_HEADING: the heading) */
    const char *doc;          /* --help: more, inside the parentheses */
    bool reload;              /* applied by SIGHUP (wr_config_reload); else needs a restart */
} setting_t;

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
static const setting_t settings[] = {
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
    {"identity", "identity", SPECIAL(set_identity, identity, wr_identity_mode_t), .def = "cookie",
     .meta = "MODE", .help = "cookie (default) | header | header:NAME (default X-User-Id)"},
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
     SPECIAL(set_trusted_proxies, trusted_proxies, wr_cidr_t *), .meta = "CIDRS",
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
    {NULL, NULL, .kind = K_HEADING, .help = "Operations (README.md, Operations):"},
    {"log-format", "log_format", ENUM_FIELD(log_format, wr_log_format_t, log_formats),
     .def = "text", .meta = "FORMAT", .reload = true},
    {"error-log", "error_log", STRING_FIELD(error_log, check_path), .meta = "FILE",
     .help = "log lines to FILE", .doc = "default standard error; reopened on SIGHUP"},
    {"access-log", "access_log", STRING_FIELD(access_log, check_path), .meta = "FILE|-",
     .help = "one line per request to FILE, or - for standard output",
     .doc = "default none; reopened on SIGHUP"},
    {"pid-file", "pid_file", STRING_FIELD(pid_file, check_path), .meta = "FILE",
     .help = "write the process id to FILE at start, remove it at exit"},
    {"help", NULL, .kind = K_HELP, .help = "print this text"},
    {"version", NULL, .kind = K_VERSION, .help = "print \"waitroomd " WR_VERSION "\" and exit"},
};
#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

/* A bounded text buffer (the usage text, an error's list of names). */
typedef struct {
    char *buf;
    size_t cap, len; /* buf holds len bytes and a NUL; what does not fit is dropped */
    size_t col;      /* characters since the last newline */
} out_t;

__attribute__((format(printf, 2, 3))) static void out_printf(out_t *o, const char *fmt, ...)
{
    if (o->len + 1 >= o->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t end = o->len + (size_t)n < o->cap ? o->len + (size_t)n : o->cap - 1;
    for (; o->len < end; o->len++)
        o->col = o->buf[o->len] == '\n' ? 0 : o->col + 1;
}

/* Validates v and stores it in s's field; the message says what is wrong
 * (the caller prefixes where the value came from). */
static wr_err_t set_value(wr_config_t *cfg, const setting_t *s, const char *v, char *err,
                          size_t errlen)
{
    char *field = (char *)cfg + s->off;
    char note[32] = ""; /* " (off)": what the lowest value 0 means */
    if (s->zero && s->min == 0)
        snprintf(note, sizeof(note), " (%s)", s->zero);
    switch (s->kind) {
    case K_HEADING:
    case K_CONFIG:
    case K_HELP:
    case K_VERSION:
        return WR_OK;
    case K_BOOL: {
        bool b;
        if (!parse_bool(v, &b))
            return wr_einval(err, errlen, "'%s' must be true, false, 1, 0, yes or no", v);
        memcpy(field, &b, sizeof(b));
        return WR_OK;
    }
    case K_UINT: {
        unsigned long long n, lo = (unsigned long long)s->min, hi = (unsigned long long)s->max;
        if (!parse_uint(v, lo, hi, &n))
            return wr_einval(err, errlen, "'%s' must be an integer from %llu%s to %llu", v, lo,
                             note, hi);
        uint32_t u = (uint32_t)n;
        memcpy(field, &u, sizeof(u));
        return WR_OK;
    }
    case K_DOUBLE: {
        double d;
        if (!parse_double(v, s->min, s->max, &d))
            return wr_einval(err, errlen, "'%s' must be a number from %.15g%s to %.15g", v, s->min,
                             note, s->max);
        memcpy(field, &d, sizeof(d));
        return WR_OK;
    }
    case K_ENUM: {
        char list[160] = "";
        out_t l = {.buf = list, .cap = sizeof(list)};
        for (int i = 0; s->names[i]; i++) {
            if (strcmp(v, s->names[i]) == 0) {
                memcpy(field, &i, sizeof(i));
                return WR_OK;
            }
            out_printf(&l, "%s%s", i == 0 ? "" : s->names[i + 1] ? ", " : " or ", s->names[i]);
        }
        return wr_einval(err, errlen, "'%s' must be %s", v, list);
    }
    case K_STRING:
        if (s->check && s->check(v, err, errlen) != WR_OK)
            return WR_EINVAL;
        if (strlen(v) > s->size - 1)
            return wr_einval(err, errlen, "is longer than %zu bytes", s->size - 1);
        memcpy(field, v, strlen(v) + 1);
        return WR_OK;
    case K_SECRET: {
        size_t n = strlen(v);
        if (n > s->size)
            return wr_einval(err, errlen, "is longer than %zu bytes", s->size);
        memcpy(field, v, n);
        memcpy((char *)cfg + s->len_off, &n, sizeof(n));
        return WR_OK;
    }
    case K_SPECIAL:
        return s->set(cfg, v, err, errlen);
    }
    return wr_einval(err, errlen, "unknown setting");
}

void wr_config_defaults(wr_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (settings[i].def && set_value(cfg, &settings[i], settings[i].def, NULL, 0) != WR_OK)
            abort(); /* a bad default in the table (test_config loads them all) */
}

/* ---- usage text ---- */

/* Writes text's words from the current column, wrapping before USAGE_WIDTH
 * to lines that start at column indent, and ends the line. "A = B" stays
 * on one line. */
static void out_wrapped(out_t *o, const char *text, size_t indent)
{
    bool first = true;
    for (const char *p = text + strspn(text, " "); *p; p += strspn(p, " ")) {
        size_t n = strcspn(p, " ");
        while (strncmp(p + n, " = ", 3) == 0)
            n += 3 + strcspn(p + n + 3, " ");
        if (!first && o->col + 1 + n > USAGE_WIDTH)
            out_printf(o, "\n%*s", (int)indent, "");
        else if (!first)
            out_printf(o, " ");
        out_printf(o, "%.*s", (int)n, p);
        first = false;
        p += n;
    }
    out_printf(o, "\n");
}

/* A flag's description: its help (or choices), then "(default D; 0 = Z;
 * env VAR; doc)" with the parts it has. */
static void describe(out_t *t, const setting_t *s)
{
    if (s->kind != K_ENUM)
        out_printf(t, "%s", s->help);
    for (size_t i = 0; s->kind == K_ENUM && s->names[i]; i++)
        out_printf(t, "%s%s%s", i ? " | " : "", s->names[i],
                   s->def && strcmp(s->def, s->names[i]) == 0 ? " (default)" : "");
    bool show_def = s->def && !s->def_in_help && s->kind != K_ENUM && s->kind != K_SPECIAL;
    bool zero_def = show_def && s->zero && strcmp(s->def, "0") == 0;
    char def[96] = "", zero[32] = "", env[64] = "";
    if (show_def)
        snprintf(def, sizeof(def), "default %s%s%s", s->def, zero_def ? " = " : "",
                 zero_def ? s->zero : "");
    if (s->zero && !zero_def)
        snprintf(zero, sizeof(zero), "0 = %s", s->zero);
    if (s->env)
        snprintf(env, sizeof(env), "env %s", s->env);
    const char *parts[] = {def, zero, env, s->doc ? s->doc : ""}, *sep = " (";
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        if (parts[i][0])
            out_printf(t, "%s%s", sep, parts[i]);
        sep = parts[i][0] || sep[0] == ';' ? "; " : sep;
    }
    if (sep[0] == ';')
        out_printf(t, ")");
}

const char *wr_config_version(void)
{
    return "waitroomd " WR_VERSION "\n";
}

const char *wr_config_usage(void)
{
    static char usage[USAGE_MAX];
    if (usage[0])
        return usage;
    out_t o = {.buf = usage, .cap = sizeof(usage)};
    out_printf(&o, "usage: waitroomd [options]\n");
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const setting_t *s = &settings[i];
        if (s->kind == K_HEADING)
            out_printf(&o, "%s\n", s->help);
        if (!s->flag)
            continue;
        out_printf(&o, "  --%s%s%s", s->flag, s->meta ? " " : "", s->meta ? s->meta : "");
        out_printf(&o, "%*s", o.col < USAGE_COL ? (int)(USAGE_COL - o.col) : 2, "");
        char text[512] = "";
        out_t t = {.buf = text, .cap = sizeof(text)};
        describe(&t, s);
        out_wrapped(&o, text, USAGE_COL);
    }
    char text[512] = "";
    out_t t = {.buf = text, .cap = sizeof(text)};
    out_printf(&t, "Flags override the file;");
    size_t n_env = 0, k = 0;
    for (size_t i = 0; i < N_SETTINGS; i++)
        n_env += settings[i].env != NULL;
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (settings[i].env)
            out_printf(&t, "%s%s", k++ == 0 ? " " : k == n_env ? " and " : ", ", settings[i].env);
    out_printf(&t, " override both. Both --flag VALUE and --flag=VALUE work.");
    out_wrapped(&o, text, 0);
    return usage;
}

wr_err_t wr_config_set(wr_config_t *cfg, const char *key, const char *value, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < N_SETTINGS; i++) {
        if (settings[i].ini && strcmp(settings[i].ini, key) == 0) {
            char why[384];
            if (set_value(cfg, &settings[i], value, why, sizeof(why)) == WR_OK)
                return WR_OK;
            return wr_einval(err, errlen, "%s: %s", key, why);
        }
    }
    return wr_einval(err, errlen, "unknown key '%.100s' in [server]", key);
}

/* ---- flags ---- */

/*
 * Reads the flag at argv[*i]: sets *s and *value (NULL when the flag has
 * none) and advances *i past a separate value.
 */
static wr_err_t next_flag(int argc, char **argv, int *i, const setting_t **s, const char **value,
                          char *err, size_t errlen)
{
    const char *a = argv[*i];
    if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
        return wr_einval(err, errlen, "unexpected argument '%.200s'", a);
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t k = 0; k < N_SETTINGS; k++) {
        const setting_t *o = &settings[k];
        if (!o->flag || strlen(o->flag) != name_len || strncmp(o->flag, name, name_len) != 0)
            continue;
        *s = o;
        bool no_value = o->kind == K_HELP || o->kind == K_VERSION;
        if (no_value && eq)
            return wr_einval(err, errlen, "--%s takes no value", o->flag);
        if (eq) {
            *value = eq + 1;
        } else if (!no_value && o->kind != K_BOOL) {
            if (*i + 1 >= argc)
                return wr_einval(err, errlen, "--%s needs a value", o->flag);
            *value = argv[++*i];
        } else {
            *value = NULL;
        }
        return WR_OK;
    }
    return wr_einval(err, errlen, "unknown flag '--%.*s'", (int)(name_len > 200 ? 200 : name_len),
                     name);
}

wr_err_t wr_config_load(wr_config_t *cfg, int argc, char **argv, wr_config_action_t *action,
                        char *err, size_t errlen)
{
    wr_err_t rc;
    const char *config_path = NULL;
    wr_config_action_t act = WR_CONFIG_RUN;
    if (action)
        *action = WR_CONFIG_RUN;
    wr_config_defaults(cfg);

    /* Pass 1: --help, --version and --config. */
    for (int i = 1; i < argc; i++) {
        const setting_t *s = NULL;
        const char *value = NULL;
        if ((rc = next_flag(argc, argv, &i, &s, &value, err, errlen))) {
            if (act != WR_CONFIG_RUN)
                break; /* --help or --version wins over a later mistake */
            return rc;
        }
        if (act == WR_CONFIG_RUN && (s->kind == K_HELP || s->kind == K_VERSION))
            act = s->kind == K_HELP ? WR_CONFIG_HELP : WR_CONFIG_VERSION;
        else if (s->kind == K_CONFIG)
            config_path = value;
    }
    if (act != WR_CONFIG_RUN) {
        if (action)
            *action = act;
        return WR_OK;
    }
    if (config_path) {
        if (config_path[0] == '\0')
            return wr_einval(err, errlen, "--config needs a file name");
        if ((rc = wr_config_load_file(cfg, config_path, err, errlen)))
            return rc;
    }

    /* Pass 2: every other flag, in order; a bool flag alone means true. */
    for (int i = 1; i < argc; i++) {
        const setting_t *s = NULL;
        const char *value = NULL;
        if ((rc = next_flag(argc, argv, &i, &s, &value, err, errlen)))
            return rc;
        if (s->kind == K_CONFIG)
            continue;
        char why[384];
        if (set_value(cfg, s, value ? value : "true", why, sizeof(why)))
            return wr_einval(err, errlen, "--%s: %s", s->flag, why);
    }

    /* Environment: secrets override both. */
    for (size_t k = 0; k < N_SETTINGS; k++) {
        const char *v = settings[k].env ? getenv(settings[k].env) : NULL;
        if (!v || v[0] == '\0')
            continue;
        char why[384];
        if (set_value(cfg, &settings[k], v, why, sizeof(why)))
            return wr_einval(err, errlen, "%s: %s", settings[k].env, why);
    }

    /* --reuse-port shares a port between processes: with the memory store
     * each would keep its own line, and a person's place would depend on
     * the connection the kernel picked. */
    if (cfg->reuse_port && strcmp(cfg->store, "memory") == 0)
        return wr_einval(err, errlen,
                         "--reuse-port: needs a shared store (redis://...); with the memory store "
                         "every process keeps its own line");

    /* --strict-secrets: every configured secret has at least 32 bytes. */
    if (cfg->strict_secrets) {
        static const char *const names[] = {"token secret", "previous token secret",
                                            "cookie secret", "previous cookie secret"};
        const size_t lens[] = {cfg->token_secret_len, cfg->token_secret_previous_len,
                               cfg->cookie_secret_len, cfg->cookie_secret_previous_len};
        for (size_t k = 0; k < 4; k++)
            if (lens[k] > 0 && lens[k] < WR_CONFIG_SECRET_MIN)
                return wr_einval(err, errlen,
                                 "--strict-secrets: the %s is %zu bytes; at least %d are required",
                                 names[k], lens[k], WR_CONFIG_SECRET_MIN);
    }
    return WR_OK;
}

/* ---- file descriptors ---- */

wr_err_t wr_config_fit_connections(wr_config_t *cfg, unsigned long long hard_limit, unsigned margin,
                                   char *note, size_t notelen)
{
    if (note && notelen)
        note[0] = '\0';
    unsigned long long room = hard_limit > margin ? hard_limit - margin : 0;
    if (cfg->max_connections > 0) { /* explicit: it fits or the start fails */
        if ((unsigned long long)cfg->max_connections <= room)
            return WR_OK;
        if (room == 0)
            return wr_einval(note, notelen,
                             "--max-connections %u needs %llu file descriptors (connections + %u), "
                             "but the hard limit (ulimit -Hn) is %llu: raise the limit (systemd: "
                             "LimitNOFILE=)",
                             cfg->max_connections,
                             (unsigned long long)cfg->max_connections + margin, margin, hard_limit);
        return wr_einval(note, notelen,
                         "--max-connections %u needs %llu file descriptors (connections + %u), "
                         "but the hard limit (ulimit -Hn) is %llu: lower --max-connections to "
                         "%llu or raise the limit (systemd: LimitNOFILE=)",
                         cfg->max_connections, (unsigned long long)cfg->max_connections + margin,
                         margin, hard_limit, room);
    }
    if (room >= WR_CONFIG_CONNECTIONS_DEFAULT) {
        cfg->max_connections = WR_CONFIG_CONNECTIONS_DEFAULT;
        return WR_OK;
    }
    if (room == 0)
        return wr_einval(note, notelen,
                         "the hard limit on open files (ulimit -Hn) is %llu: at least %u are "
                         "needed (raise the limit; systemd: LimitNOFILE=)",
                         hard_limit, margin + 1);
    cfg->max_connections = (uint32_t)room;
    if (note && notelen)
        snprintf(note, notelen,
                 "the hard limit on open files (ulimit -Hn) is %llu: --max-connections is %llu "
                 "instead of %d (raise the limit, e.g. systemd LimitNOFILE=, for more)",
                 hard_limit, room, WR_CONFIG_CONNECTIONS_DEFAULT);
    return WR_OK;
}

/* ---- SIGHUP ---- */

/* Whether setting s has the same value in a and b. */
static bool same_value(const setting_t *s, const wr_config_t *a, const wr_config_t *b)
{
    if (memcmp((const char *)a + s->off, (const char *)b + s->off, s->size) != 0)
        return false;
    if (s->kind == K_SECRET)
        return memcmp((const char *)a + s->len_off, (const char *)b + s->len_off, sizeof(size_t)) ==
               0;
    if (s->set == set_trusted_proxies)
        return a->n_trusted_proxies == b->n_trusted_proxies;
    if (s->set == set_identity)
        return strcmp(a->identity_header, b->identity_header) == 0;
    return true;
}

size_t wr_config_reload(wr_config_t *running, const wr_config_t *fresh, char *restart, size_t cap)
{
    size_t changed = 0;
    out_t r = {.buf = restart, .cap = cap};
    if (cap > 0)
        restart[0] = '\0';
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const setting_t *s = &settings[i];
        /* Rows without a name (identity_header) are compared with their
         * named row (identity). */
        if (s->size == 0 || (!s->ini && !s->flag) || same_value(s, running, fresh))
            continue;
        if (!s->reload) {
            out_printf(&r, "%s%s", r.len ? ", " : "", s->ini ? s->ini : s->flag);
            continue;
        }
        memcpy((char *)running + s->off, (const char *)fresh + s->off, s->size);
        if (s->kind == K_SECRET)
            memcpy((char *)running + s->len_off, (const char *)fresh + s->len_off, sizeof(size_t));
        changed++;
    }
    return changed;
}
