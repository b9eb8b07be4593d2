/*
 * router.c - path and method matching against the rows of routes.def.
 *
 * The routes are few and fixed, so matching walks every row's pattern
 * along the path, byte by byte (no copy, no split, bounded by the path's
 * length): a literal byte must be equal, "*" takes one segment of at least
 * one byte (a pattern has at most two: the first is the parameter, a
 * second - the {code} of .../codes/{code} - param2). Every row whose
 * pattern matches adds its method to the allowed
 * set (a GET row adds HEAD), so the caller can answer 405 with Allow; the
 * row whose method is the request's (HEAD: the GET row) is the route.
 *
 * wr_router_match_memo keeps the last answer of one caller (api.c's, per
 * process): polls of one queue repeat one path, and a comparison of its
 * bytes costs less than the walk (the walk was about 4% of a poll's CPU).
 *
 * The rows are indexed by wr_route_t (routes.def expanded with the
 * designated index WR_ROUTE_<ID>), so a route's flags and name are one
 * array read away.
 */
#include "http/router.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const wr_route_row_t rows[WR_ROUTE_COUNT] = {
    [WR_ROUTE_NONE] = {"none", 0, NULL, 0},
#define WR_ROUTE(id, name, method, pattern, flags, handler)                                        \
    [WR_ROUTE_##id] = {name, WR_METHOD_##method, pattern, flags},
#include "http/routes.def"
#undef WR_ROUTE
};

/* Whether path (len bytes) is pattern: the same bytes, with each "*"
 * taking one segment of at least one byte, returned in params[0] (the
 * first), params[1] (a second) and their lengths. */
static bool match_pattern(const char *pat, const char *path, size_t len, const char *params[2],
                          size_t lens[2])
{
    size_t i = 0, k = 0;
    for (; *pat; pat++) {
        if (*pat == '*') {
            size_t start = i;
            while (i < len && path[i] != '/')
                i++;
            if (i == start || k == 2)
                return false; /* an empty segment (k == 2: never, routes.def has two at most) */
            params[k] = path + start;
            lens[k++] = i - start;
        } else if (i >= len || path[i] != *pat) {
            return false;
        } else {
            i++;
        }
    }
    return i == len; /* a trailing slash or more segments do not match */
}

wr_route_match_t wr_router_match(wr_method_t method, const char *path, size_t len)
{
    wr_route_match_t m = {WR_ROUTE_NONE, 0, NULL, 0, NULL, 0};
    for (int r = WR_ROUTE_NONE + 1; r < WR_ROUTE_COUNT; r++) {
        const wr_route_row_t *row = &rows[r];
        const char *params[2] = {NULL, NULL};
        size_t lens[2] = {0, 0};
        if (!match_pattern(row->pattern, path, len, params, lens))
            continue;
        m.allowed |= row->method;
        if (row->method == WR_METHOD_GET)
            m.allowed |= WR_METHOD_HEAD;
        if (row->method == method || (method == WR_METHOD_HEAD && row->method == WR_METHOD_GET)) {
            m.route = (wr_route_t)r;
            m.param = params[0];
            m.param_len = lens[0];
            m.param2 = params[1];
            m.param2_len = lens[1];
        }
    }
    return m;
}

/* m with its parameters moved from slices of from to the same places in to. */
static wr_route_match_t rebase(wr_route_match_t m, const char *from, const char *to)
{
    if (m.param)
        m.param = to + (m.param - from);
    if (m.param2)
        m.param2 = to + (m.param2 - from);
    return m;
}

wr_route_match_t wr_router_match_memo(wr_router_memo_t *memo, wr_method_t method, const char *path,
                                      size_t len)
{
    if (memo->len == len && len > 0 && memo->method == method && memcmp(memo->path, path, len) == 0)
        return rebase(memo->m, memo->path, path);
    wr_route_match_t m = wr_router_match(method, path, len);
    if (len > 0 && len <= sizeof memo->path) {
        memcpy(memo->path, path, len);
        memo->len = len;
        memo->method = method;
        memo->m = rebase(m, path, memo->path);
    }
    return m;
}

const wr_route_row_t *wr_router_row(wr_route_t r)
{
    return &rows[(unsigned)r < WR_ROUTE_COUNT ? r : WR_ROUTE_NONE];
}

const char *wr_router_route_name(wr_route_t r)
{
    return wr_router_row(r)->name;
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
