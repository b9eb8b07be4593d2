/*
 * redis_url.c - the URL grammar of the Redis store (redis_url.h).
 *
 * The grammar is the set of URLs that both the old --store check of
 * config.c and the old parser of store_redis accepted: a port is required
 * (config), the host is a name or IPv4 address (the connection never took
 * "[IPv6]"), numbers are decimal digits only, a database is 0..65535, and
 * a unix socket path fits sun_path. One pass from left to right; *out is
 * written only when the whole URL parsed, so a caller never sees half an
 * endpoint.
 */
#include "redis_url.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
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

static wr_err_t fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static wr_err_t fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return WR_EINVAL;
}

/* redis://HOST:PORT[/DB] */
static wr_err_t parse_tcp(const char *url, wr_redis_url_t *ep, char *err, size_t errlen)
{
    const char *h = url + 8;
    size_t hn = strcspn(h, ":/");
    const char *p = h + hn;
    size_t pn = *p == ':' ? strcspn(p + 1, "/") : 0;
    bool ok = hn >= 1 && hn <= WR_REDIS_URL_HOST_MAX && *p == ':' &&
              number(p + 1, pn, 1, 65535, &ep->port);
    for (size_t i = 0; ok && i < hn; i++)
        ok = host_char(h[i]);
    if (!ok)
        return fail(err, errlen, "'%s' must be redis://HOST:PORT[/DB] (port 1..65535)", url);
    memcpy(ep->host, h, hn);
    ep->host[hn] = '\0';
    const char *db = p + 1 + pn;
    if (*db == '/' && !number(db + 1, strlen(db + 1), 0, WR_REDIS_URL_DB_MAX, &ep->db))
        return fail(err, errlen, "'%s': the database must be a number 0..%d", url,
                    WR_REDIS_URL_DB_MAX);
    return WR_OK;
}

/* unix:///PATH[?db=DB] */
static wr_err_t parse_unix(const char *url, wr_redis_url_t *ep, char *err, size_t errlen)
{
    const char *rest = url + 7;
    size_t n = strlen(rest);
    bool ok = rest[0] == '/' && n >= 2;
    for (size_t i = 0; ok && i < n; i++)
        ok = (unsigned char)rest[i] > 0x20 && rest[i] != 0x7f;
    if (!ok)
        return fail(err, errlen, "'%s' must be unix:///ABSOLUTE/PATH", url);
    if (n > WR_REDIS_URL_PATH_MAX)
        return fail(err, errlen, "unix socket path is longer than %d bytes", WR_REDIS_URL_PATH_MAX);
    size_t pn = strcspn(rest, "?");
    if (rest[pn] && (strncmp(rest + pn, "?db=", 4) != 0 ||
                     !number(rest + pn + 4, n - pn - 4, 0, WR_REDIS_URL_DB_MAX, &ep->db)))
        return fail(err, errlen, "'%s': the only option is ?db=N (N 0..%d)", url,
                    WR_REDIS_URL_DB_MAX);
    memcpy(ep->path, rest, pn);
    ep->path[pn] = '\0';
    ep->is_unix = true;
    return WR_OK;
}

wr_err_t wr_redis_url_parse(const char *url, wr_redis_url_t *out, char *err, size_t errlen)
{
    wr_redis_url_t ep;
    wr_err_t e;
    memset(&ep, 0, sizeof ep);
    ep.db = -1;
    if (err && errlen)
        err[0] = '\0';
    if (url && strncmp(url, "redis://", 8) == 0)
        e = parse_tcp(url, &ep, err, errlen);
    else if (url && strncmp(url, "unix://", 7) == 0)
        e = parse_unix(url, &ep, err, errlen);
    else
        e = fail(err, errlen, "'%s' must be redis://HOST:PORT[/DB] or unix:///PATH",
                 url ? url : "");
    if (e == WR_OK && out)
        *out = ep;
    return e;
}
