/*
 * redis_url.c - the URL grammar of the Redis store (redis_url.h).
 *
 * One function, one pass from left to right; *out is written only when the
 * whole URL parsed, so a caller never sees half an endpoint.
 */
#include "redis_url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wr_err_t wr_redis_url_parse(const char *url, wr_redis_url_t *out, char *err, size_t errlen)
{
    wr_redis_url_t ep;
    memset(&ep, 0, sizeof ep);
    ep.db = -1;
    ep.port = 6379;
    if (err && errlen)
        err[0] = '\0';
    if (!url)
        goto bad;
    if (strncmp(url, "unix://", 7) == 0) {
        const char *p = url + 7;
        const char *q = strchr(p, '?');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n == 0 || n > WR_REDIS_URL_PATH_MAX || p[0] != '/')
            goto bad;
        memcpy(ep.path, p, n);
        ep.path[n] = '\0';
        if (q) {
            char *end;
            if (strncmp(q, "?db=", 4) != 0 || !q[4])
                goto bad;
            long db = strtol(q + 4, &end, 10);
            if (*end || db < 0 || db > WR_REDIS_URL_DB_MAX)
                goto bad;
            ep.db = (int)db;
        }
        ep.is_unix = true;
        goto ok;
    }
    if (strncmp(url, "redis://", 8) != 0)
        goto bad;
    const char *h = url + 8;
    size_t hn = strcspn(h, ":/");
    if (hn == 0 || hn > WR_REDIS_URL_HOST_MAX)
        goto bad;
    memcpy(ep.host, h, hn);
    ep.host[hn] = '\0';
    const char *p = h + hn;
    char *end;
    if (*p == ':') {
        long port = strtol(p + 1, &end, 10);
        if (end == p + 1 || port < 1 || port > 65535 || (*end && *end != '/'))
            goto bad;
        ep.port = (int)port;
        p = end;
    }
    if (*p == '/') {
        if (p[1]) {
            long db = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end || db < 0 || db > WR_REDIS_URL_DB_MAX)
                goto bad;
            ep.db = (int)db;
        }
    } else if (*p) {
        goto bad;
    }
ok:
    if (out)
        *out = ep;
    return WR_OK;
bad:
    if (err && errlen)
        snprintf(err, errlen, "'%s' must be redis://HOST[:PORT][/DB] or unix:///PATH[?db=N]",
                 url ? url : "");
    return WR_EINVAL;
}
