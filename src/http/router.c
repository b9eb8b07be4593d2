/*
 * router.c - path and method matching for the API's fixed route table.
 *
 * The paths are few and fixed, so matching splits the path into at most six
 * segments (bounded; longer paths are unknown) and compares them against a
 * static table of patterns in which "*" stands for the one parameter
 * segment. A path that matches a pattern with another method yields the
 * union of allowed methods, so the caller can answer 405 with Allow.
 */
#include "http/router.h"

#include <stdio.h>
#include <string.h>

#define MAX_SEGS 6

typedef struct {
    const char *segs[MAX_SEGS];
    int n;
    wr_method_t method;
    wr_route_t route;
} pattern_t;

static const pattern_t patterns[] = {
    {{"v1", "queues", "*", "entries"}, 4, WR_METHOD_POST, WR_ROUTE_JOIN},
    {{"v1", "queues", "*", "entries", "me"}, 5, WR_METHOD_GET, WR_ROUTE_STATUS},
    {{"v1", "queues", "*", "entries", "me"}, 5, WR_METHOD_DELETE, WR_ROUTE_LEAVE},
    {{"v1", "queues", "*", "tokens", "consume"}, 5, WR_METHOD_POST, WR_ROUTE_CONSUME},
    {{"v1", "queues", "*", "tokens", "verify"}, 5, WR_METHOD_GET, WR_ROUTE_VERIFY},
    {{"v1", "queues", "*", "tokens", "release"}, 5, WR_METHOD_POST, WR_ROUTE_RELEASE},
    {{"v1", "admin", "queues", "*"}, 4, WR_METHOD_PUT, WR_ROUTE_ADMIN_PUT},
    {{"v1", "admin", "queues", "*"}, 4, WR_METHOD_PATCH, WR_ROUTE_ADMIN_PATCH},
    {{"v1", "admin", "queues", "*"}, 4, WR_METHOD_GET, WR_ROUTE_ADMIN_GET},
    {{"v1", "admin", "queues", "*"}, 4, WR_METHOD_DELETE, WR_ROUTE_ADMIN_DELETE},
    {{"v1", "admin", "queues"}, 3, WR_METHOD_GET, WR_ROUTE_ADMIN_LIST},
    {{"healthz"}, 1, WR_METHOD_GET, WR_ROUTE_HEALTHZ},
    {{"readyz"}, 1, WR_METHOD_GET, WR_ROUTE_READYZ},
    {{"metrics"}, 1, WR_METHOD_GET, WR_ROUTE_METRICS},
    {{"q", "*"}, 2, WR_METHOD_GET, WR_ROUTE_QUEUE_PAGE},
    {{"admin"}, 1, WR_METHOD_GET, WR_ROUTE_DASHBOARD},
    {{"static", "*"}, 2, WR_METHOD_GET, WR_ROUTE_STATIC},
    {{"v1", "admin", "queues", "*", "history"}, 5, WR_METHOD_GET, WR_ROUTE_HISTORY},
};

static const char *names[WR_ROUTE_COUNT] = {
    [WR_ROUTE_NONE] = "none",
    [WR_ROUTE_JOIN] = "join",
    [WR_ROUTE_STATUS] = "status",
    [WR_ROUTE_LEAVE] = "leave",
    [WR_ROUTE_CONSUME] = "consume",
    [WR_ROUTE_VERIFY] = "verify",
    [WR_ROUTE_ADMIN_PUT] = "admin_put",
    [WR_ROUTE_ADMIN_PATCH] = "admin_patch",
    [WR_ROUTE_ADMIN_GET] = "admin_get",
    [WR_ROUTE_ADMIN_DELETE] = "admin_delete",
    [WR_ROUTE_ADMIN_LIST] = "admin_list",
    [WR_ROUTE_HEALTHZ] = "healthz",
    [WR_ROUTE_READYZ] = "readyz",
    [WR_ROUTE_METRICS] = "metrics",
    [WR_ROUTE_QUEUE_PAGE] = "queue_page",
    [WR_ROUTE_DASHBOARD] = "dashboard",
    [WR_ROUTE_STATIC] = "static",
    [WR_ROUTE_RELEASE] = "release",
    [WR_ROUTE_HISTORY] = "admin_history",
};

typedef struct {
    const char *p;
    size_t len;
} seg_t;

/* Splits "/a/b/c" into segments; returns -1 for empty segments, a missing
 * leading slash, or more than MAX_SEGS segments. */
static int split(const char *path, size_t len, seg_t *segs)
{
    if (len == 0 || path[0] != '/')
        return -1;
    if (len == 1)
        return 0;
    int n = 0;
    size_t i = 1;
    while (i <= len) {
        size_t start = i;
        while (i < len && path[i] != '/')
            i++;
        if (i == start)
            return -1; /* empty segment or trailing slash */
        if (n == MAX_SEGS)
            return -1;
        segs[n].p = path + start;
        segs[n].len = i - start;
        n++;
        i++; /* skip '/' (or step past the end) */
    }
    return n;
}

wr_route_match_t wr_router_match(wr_method_t method, const char *path, size_t len)
{
    wr_route_match_t m = {WR_ROUTE_NONE, 0, NULL, 0};
    seg_t segs[MAX_SEGS];
    int n = split(path, len, segs);
    if (n <= 0)
        return m;
    for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
        const pattern_t *pt = &patterns[i];
        if (pt->n != n)
            continue;
        const char *param = NULL;
        size_t param_len = 0;
        int ok = 1;
        for (int s = 0; s < n && ok; s++) {
            if (strcmp(pt->segs[s], "*") == 0) {
                param = segs[s].p;
                param_len = segs[s].len;
            } else if (strlen(pt->segs[s]) != segs[s].len ||
                       memcmp(pt->segs[s], segs[s].p, segs[s].len) != 0) {
                ok = 0;
            }
        }
        if (!ok)
            continue;
        m.allowed |= pt->method;
        if (pt->method == WR_METHOD_GET)
            m.allowed |= WR_METHOD_HEAD;
        if (pt->method == method || (method == WR_METHOD_HEAD && pt->method == WR_METHOD_GET)) {
            m.route = pt->route;
            m.param = param;
            m.param_len = param_len;
        }
    }
    return m;
}

const char *wr_router_route_name(wr_route_t r)
{
    if ((unsigned)r >= WR_ROUTE_COUNT || !names[r])
        return "none";
    return names[r];
}

void wr_router_allow_header(unsigned allowed, char *buf, size_t cap)
{
    static const struct {
        unsigned bit;
        const char *name;
    } m[] = {{WR_METHOD_GET, "GET"}, {WR_METHOD_HEAD, "HEAD"},   {WR_METHOD_POST, "POST"},
             {WR_METHOD_PUT, "PUT"}, {WR_METHOD_PATCH, "PATCH"}, {WR_METHOD_DELETE, "DELETE"}};
    size_t off = 0;
    if (cap == 0)
        return;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        if (!(allowed & m[i].bit))
            continue;
        int w = snprintf(buf + off, cap - off, "%s%s", off ? ", " : "", m[i].name);
        if (w < 0 || (size_t)w >= cap - off) {
            buf[off] = 0; /* never leave a half-written name */
            return;
        }
        off += (size_t)w;
    }
}
