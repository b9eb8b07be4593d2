/*
 * redis_url.c - the URL grammar of the Redis store (redis_url.h).
 *
 * One pass from left to right over a URL of at most WR_REDIS_URL_MAX
 * bytes, into a local wr_redis_url_t that is copied to *out only when the
 * whole URL parsed (a caller never sees half an endpoint).
 *
 *   scheme "://" [credentials "@"] rest
 *
 * The credentials end at the LAST '@' of the URL: nothing after them
 * (host, port, DB, master name) may hold an '@'; a URL whose authority is
 * empty ("unix:///PATH") has none, so a socket path may hold one. So a
 * password with a raw '@' still parses the way the user meant, and wr_redis_url_redact() (which
 * uses the same rule on any string) hides exactly what the parser would take as the password. The
 * credentials are USER ':' PASSWORD, each percent-decoded; "%00" and a '%' without two hex digits
 * are refused (AUTH takes C strings here). Credentials without a ':' are refused rather than
 * guessed at (they may be a password given without the ':' in front).
 *
 * Hosts: [A-Za-z0-9._-]{1,255}, or '[' IPv6 ']' where the address passes
 * inet_pton(AF_INET6) and an optional zone "%25" ZONE is kept as
 * "addr%ZONE" (the form getaddrinfo takes). The port is required (the
 * --store check always required it), decimal digits, 1..65535.
 *
 * Messages never hold the password: they quote the redacted URL, and the
 * errors about the credentials say what is wrong without quoting them.
 */
#include "store/redis/redis_url.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TCP_FORM      "HOST:PORT[/DB] (port 1..65535)"
#define SENTINEL_FORM "redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER[/DB]"
#define CLUSTER_FORM  "HOST:PORT[,HOST:PORT...] (port 1..65535, no DB)"

/* A failed parse: where, what, and the URL (redacted) for messages. */
typedef struct {
    const char *url;
    char *err;
    size_t errlen;
} ctx_t;

static wr_err_t fail(const ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static wr_err_t fail(const ctx_t *c, const char *fmt, ...)
{
    if (c->err && c->errlen) {
        char red[WR_REDIS_URL_MAX + 16];
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        wr_redis_url_redact(c->url, red, sizeof red);
        /* "%q" in a message is where the quoted URL goes (at most once). */
        char *q = strstr(msg, "%q");
        if (q) {
            *q = '\0';
            snprintf(c->err, c->errlen, "%s'%s'%s", msg, red, q + 2);
        } else {
            snprintf(c->err, c->errlen, "%s", msg);
        }
    }
    return WR_EINVAL;
}

/* s[0..n) is 1..19 decimal digits with a value in [min, max]. */
static bool number(const char *s, size_t n, long min, long max, int *out)
{
    long v = 0;
    if (n == 0 || n > 19)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        if (v <= max)
            v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max)
        return false;
    *out = (int)v;
    return true;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into out (cap bytes with the NUL). 0, or -1 for
 * a bad escape or %00, -2 when it does not fit. */
static int pct_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '%') {
            if (i + 2 >= n)
                return -1;
            int a = hexval(s[i + 1]), b = hexval(s[i + 2]);
            if (a < 0 || b < 0 || (a == 0 && b == 0))
                return -1;
            ch = (char)(a * 16 + b);
            i += 2;
        }
        if (o + 1 >= cap)
            return -2;
        out[o++] = ch;
    }
    out[o] = '\0';
    return 0;
}

/* The credentials s[0..n) (between "://" and the last '@'). */
static wr_err_t parse_credentials(const ctx_t *c, const char *s, size_t n, wr_redis_url_t *u)
{
    const char *colon = memchr(s, ':', n);
    if (!colon)
        return fail(c, "%%q: the credentials must be USER:PASSWORD@ or :PASSWORD@ "
                       "(percent-encode ':', '@' and '/' in them)");
    size_t un = (size_t)(colon - s);
    int r = pct_decode(s, un, u->user, sizeof u->user);
    if (r == -1)
        return fail(c, "%%q: bad percent-encoding in the user name");
    if (r == -2)
        return fail(c, "%%q: the user name is longer than %d bytes", WR_REDIS_URL_USER_MAX);
    r = pct_decode(colon + 1, n - un - 1, u->password, sizeof u->password);
    if (r == -1)
        return fail(c, "%%q: bad percent-encoding in the password (%%XX with two hex "
                       "digits, not %%00)");
    if (r == -2)
        return fail(c, "%%q: the password is longer than %d bytes", WR_REDIS_URL_PASSWORD_MAX);
    u->has_user = u->user[0] != '\0';
    u->has_password = u->password[0] != '\0';
    return WR_OK;
}

/*
 * One HOST:PORT at s, ending at the first byte of `stops` (or the end).
 * Sets *next to that byte. form: the expected shape for the message.
 */
static wr_err_t parse_addr(const ctx_t *c, const char *s, const char *stops, const char *form,
                           wr_redis_url_addr_t *a, const char **next)
{
    const char *p = s;
    char host[WR_REDIS_URL_HOST_MAX + 1];
    if (*p == '[') {
        const char *close = strchr(p, ']');
        size_t span = strcspn(p, stops);
        if (!close || (size_t)(close - p) > span)
            return fail(c, "%%q: IPv6 address without a closing ']'");
        const char *in = p + 1;
        size_t n = (size_t)(close - in);
        const char *zone = NULL;
        for (size_t i = 0; i + 2 < n; i++) {
            if (in[i] == '%' && in[i + 1] == '2' && in[i + 2] == '5') {
                zone = in + i;
                break;
            }
        }
        size_t an = zone ? (size_t)(zone - in) : n;
        char addr[INET6_ADDRSTRLEN + 1];
        struct in6_addr bin;
        if (an == 0 || an >= sizeof addr)
            return fail(c, "%%q: '[...]' must hold an IPv6 address");
        memcpy(addr, in, an);
        addr[an] = '\0';
        if (inet_pton(AF_INET6, addr, &bin) != 1)
            return fail(c, "%%q: '%s' is not an IPv6 address", addr);
        size_t zn = zone ? n - an - 3 : 0;
        if (zone) {
            bool ok = zn >= 1;
            for (size_t i = 0; ok && i < zn; i++)
                ok = wr_ids_host_char(zone[3 + i]);
            if (!ok)
                return fail(c, "%%q: bad IPv6 zone (write it as [ADDR%%25ZONE])");
        }
        if (an + (zone ? 1 + zn : 0) > WR_REDIS_URL_HOST_MAX)
            return fail(c, "%%q: the host is longer than %d bytes", WR_REDIS_URL_HOST_MAX);
        memcpy(host, addr, an);
        if (zone) {
            host[an] = '%';
            memcpy(host + an + 1, zone + 3, zn);
        }
        host[an + (zone ? 1 + zn : 0)] = '\0';
        p = close + 1;
    } else {
        size_t hn = strcspn(p, ":/,?");
        if (hn == 0)
            return fail(c, "%%q: empty host; must be %s", form);
        if (hn > WR_REDIS_URL_HOST_MAX)
            return fail(c, "%%q: the host is longer than %d bytes", WR_REDIS_URL_HOST_MAX);
        if (!wr_ids_valid_host_n(p, hn))
            return fail(c, "%%q must be %s", form);
        memcpy(host, p, hn);
        host[hn] = '\0';
        p += hn;
    }
    if (*p != ':')
        return fail(c, "%%q must be %s", form);
    p++;
    size_t pn = strcspn(p, stops);
    int port;
    if (!number(p, pn, 1, 65535, &port))
        return fail(c, "%%q must be %s", form);
    memcpy(a->host, host, strlen(host) + 1);
    a->port = port;
    *next = p + pn;
    return WR_OK;
}

/* "" or "/DB" at s. */
static wr_err_t parse_db(const ctx_t *c, const char *s, wr_redis_url_t *u)
{
    if (*s == '\0')
        return WR_OK;
    if (*s != '/' || !number(s + 1, strlen(s + 1), 0, WR_REDIS_URL_DB_MAX, &u->db))
        return fail(c, "%%q: the database must be a number 0..%d", WR_REDIS_URL_DB_MAX);
    return WR_OK;
}

/* redis:// and rediss:// after the credentials. */
static wr_err_t parse_tcp(const ctx_t *c, const char *s, const char *form, wr_redis_url_t *u)
{
    wr_redis_url_addr_t a;
    const char *next;
    wr_err_t e = parse_addr(c, s, "/", form, &a, &next);
    if (e != WR_OK)
        return e;
    memcpy(u->host, a.host, sizeof u->host);
    u->port = a.port;
    return parse_db(c, next, u);
}

/* HOST:PORT[,HOST:PORT...] at s, at most max of them (what: "sentinels",
 * "seeds", for the message), into a[] and *n; *next is the byte after the
 * last one. */
static wr_err_t parse_addr_list(const ctx_t *c, const char *s, const char *form,
                                wr_redis_url_addr_t *a, size_t max, const char *what, size_t *n,
                                const char **next)
{
    const char *p = s;
    for (;;) {
        if (*n == max)
            return fail(c, "%%q: more than %zu %s", max, what);
        wr_err_t e = parse_addr(c, p, ",/", form, &a[*n], &p);
        if (e != WR_OK)
            return e;
        (*n)++;
        if (*p != ',')
            break;
        p++;
    }
    *next = p;
    return WR_OK;
}

/* redis-sentinel:// after the credentials. */
static wr_err_t parse_sentinel(const ctx_t *c, const char *s, wr_redis_url_t *u)
{
    const char *p = s;
    wr_err_t e = parse_addr_list(c, s, SENTINEL_FORM, u->sentinels, WR_REDIS_URL_SENTINELS_MAX,
                                 "sentinels", &u->nsentinels, &p);
    if (e != WR_OK)
        return e;
    if (*p != '/' || p[1] == '\0' || p[1] == '/')
        return fail(c, "%%q names no master: must be " SENTINEL_FORM);
    p++;
    size_t mn = strcspn(p, "/");
    if (mn > WR_REDIS_URL_MASTER_MAX)
        return fail(c, "%%q: the master name is longer than %d bytes", WR_REDIS_URL_MASTER_MAX);
    for (size_t i = 0; i < mn; i++)
        if (!wr_ids_host_char(p[i]))
            return fail(c, "%%q: the master name must be [A-Za-z0-9._-]");
    memcpy(u->master, p, mn);
    u->master[mn] = '\0';
    return parse_db(c, p + mn, u);
}

/* redis-cluster:// and rediss-cluster:// after the credentials: the seeds,
 * nothing after them (a cluster has only DB 0). */
static wr_err_t parse_cluster(const ctx_t *c, const char *s, const char *form, wr_redis_url_t *u)
{
    const char *p = s;
    wr_err_t e =
        parse_addr_list(c, s, form, u->seeds, WR_REDIS_URL_SEEDS_MAX, "seeds", &u->nseeds, &p);
    if (e != WR_OK)
        return e;
    if (*p != '\0')
        return fail(c, "%%q must be %s", form);
    memcpy(u->host, u->seeds[0].host, sizeof u->host);
    u->port = u->seeds[0].port;
    return WR_OK;
}

/* unix:// after the credentials: /PATH[?db=DB] */
static wr_err_t parse_unix(const ctx_t *c, const char *rest, wr_redis_url_t *u)
{
    size_t n = strlen(rest);
    bool ok = rest[0] == '/' && n >= 2;
    for (size_t i = 0; ok && i < n; i++)
        ok = (unsigned char)rest[i] > 0x20 && rest[i] != 0x7f;
    if (!ok)
        return fail(c, "%%q must be unix:///ABSOLUTE/PATH");
    if (n > WR_REDIS_URL_PATH_MAX)
        return fail(c, "unix socket path is longer than %d bytes", WR_REDIS_URL_PATH_MAX);
    size_t pn = strcspn(rest, "?");
    if (rest[pn] && (strncmp(rest + pn, "?db=", 4) != 0 ||
                     !number(rest + pn + 4, n - pn - 4, 0, WR_REDIS_URL_DB_MAX, &u->db)))
        return fail(c, "%%q: the only option is ?db=N (N 0..%d)", WR_REDIS_URL_DB_MAX);
    memcpy(u->path, rest, pn);
    u->path[pn] = '\0';
    return WR_OK;
}

static const struct {
    const char *prefix;
    wr_redis_url_kind_t kind;
} schemes[] = {
    {"redis://", WR_REDIS_URL_TCP},
    {"rediss://", WR_REDIS_URL_TLS},
    {"redis-sentinel://", WR_REDIS_URL_SENTINEL},
    {"unix://", WR_REDIS_URL_UNIX},
    {"redis-cluster://", WR_REDIS_URL_CLUSTER},
    {"rediss-cluster://", WR_REDIS_URL_CLUSTER},
};

wr_err_t wr_redis_url_parse(const char *url, wr_redis_url_t *out, char *err, size_t errlen)
{
    wr_redis_url_t u;
    ctx_t c = {url ? url : "", err, errlen};
    wr_err_t e = WR_EINVAL;
    memset(&u, 0, sizeof u);
    u.db = -1;
    if (err && errlen)
        err[0] = '\0';
    if (strnlen(c.url, WR_REDIS_URL_MAX + 1) > WR_REDIS_URL_MAX) {
        c.url = "";
        e = fail(&c, "the Redis URL is longer than %d bytes", WR_REDIS_URL_MAX);
        goto out;
    }
    size_t k;
    for (k = 0; k < sizeof schemes / sizeof schemes[0]; k++)
        if (strncmp(c.url, schemes[k].prefix, strlen(schemes[k].prefix)) == 0)
            break;
    if (k == sizeof schemes / sizeof schemes[0]) {
        e = fail(&c, "%%q must be redis://HOST:PORT[/DB], rediss://HOST:PORT[/DB], "
                     "redis-sentinel://HOST:PORT[,...]/MASTER[/DB], unix:///PATH or "
                     "redis-cluster://HOST:PORT[,...]");
        goto out;
    }
    u.kind = schemes[k].kind;
    u.is_unix = u.kind == WR_REDIS_URL_UNIX;
    u.tls = u.kind == WR_REDIS_URL_TLS || strncmp(c.url, "rediss-cluster://", 17) == 0;
    const char *rest = c.url + strlen(schemes[k].prefix);
    const char *at = strrchr(rest, '@');
    if (rest[0] == '/')
        at = NULL; /* unix:///PATH: an '@' is part of the path */
    if (at) {
        e = parse_credentials(&c, rest, (size_t)(at - rest), &u);
        if (e != WR_OK)
            goto out;
        rest = at + 1;
    }
    switch (u.kind) {
    case WR_REDIS_URL_TCP:
        e = parse_tcp(&c, rest, "redis://" TCP_FORM, &u);
        break;
    case WR_REDIS_URL_TLS:
        e = parse_tcp(&c, rest, "rediss://" TCP_FORM, &u);
        break;
    case WR_REDIS_URL_SENTINEL:
        e = parse_sentinel(&c, rest, &u);
        break;
    case WR_REDIS_URL_UNIX:
        e = parse_unix(&c, rest, &u);
        break;
    case WR_REDIS_URL_CLUSTER:
        e = parse_cluster(
            &c, rest, u.tls ? "rediss-cluster://" CLUSTER_FORM : "redis-cluster://" CLUSTER_FORM,
            &u);
        break;
    }
out:
    if (e == WR_OK && out)
        *out = u;
    wr_redis_url_wipe(&u);
    return e;
}

wr_err_t wr_redis_url_set_env_password(wr_redis_url_t *u, const char *env_value, char *err,
                                       size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!env_value || !env_value[0])
        return WR_OK;
    size_t n = strnlen(env_value, WR_REDIS_URL_PASSWORD_MAX + 1);
    if (n > WR_REDIS_URL_PASSWORD_MAX) {
        if (err && errlen)
            snprintf(err, errlen, "WAITROOM_REDIS_PASSWORD is longer than %d bytes",
                     WR_REDIS_URL_PASSWORD_MAX);
        return WR_EINVAL;
    }
    explicit_bzero(u->password, sizeof u->password);
    memcpy(u->password, env_value, n + 1);
    u->has_password = true;
    return WR_OK;
}

char *wr_redis_url_redact(const char *url, char *out, size_t cap)
{
    if (!out || cap == 0)
        return out;
    if (!url)
        url = "";
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    const char *at = *auth == '/' ? NULL : strrchr(auth, '@');
    if (!at) {
        snprintf(out, cap, "%s", url);
        return out;
    }
    const char *colon = memchr(auth, ':', (size_t)(at - auth));
    int keep = (int)((colon ? colon : auth) - url); /* scheme:// and the user */
    snprintf(out, cap, "%.*s%s%s", keep, url, colon ? ":***" : "***", at);
    return out;
}

char *wr_redis_url_addr_format(const char *host, int port, char *out, size_t cap)
{
    if (!out || cap == 0)
        return out;
    if (strchr(host, ':'))
        snprintf(out, cap, "[%s]:%d", host, port);
    else
        snprintf(out, cap, "%s:%d", host, port);
    return out;
}

void wr_redis_url_wipe(wr_redis_url_t *u)
{
    if (!u)
        return;
    explicit_bzero(u->user, sizeof u->user);
    explicit_bzero(u->password, sizeof u->password);
    u->has_user = false;
    u->has_password = false;
}
