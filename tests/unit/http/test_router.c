/* Unit tests for the router: every route of the API, 404 vs 405, paths
 * that must not match, and the rows of routes.def: every route matches its
 * own pattern, has a name, the flags api.c checks, and a handler. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/router.h"
#include "unit_main.h"

/* The match of every case, checked against the memo (api.c's way): the
 * same answer on a miss and on a hit, with the parameters slices of the
 * path asked (a copy at another address for the hit), never of the memo. */
static wr_router_memo_t memo;

static void assert_same(wr_route_match_t a, wr_route_match_t b, const char *pa, const char *pb)
{
    assert_int_equal(a.route, b.route);
    assert_int_equal(a.allowed, b.allowed);
    assert_int_equal(a.param_len, b.param_len);
    assert_int_equal(a.param2_len, b.param2_len);
    assert_true(a.param ? b.param && a.param - pa == b.param - pb : !b.param);
    assert_true(a.param2 ? b.param2 && a.param2 - pa == b.param2 - pb : !b.param2);
}

static wr_route_match_t m(wr_method_t meth, const char *path)
{
    size_t len = strlen(path);
    wr_route_match_t plain = wr_router_match(meth, path, len);
    char copy[256];
    assert_true(len < sizeof copy);
    memcpy(copy, path, len + 1);
    assert_same(plain, wr_router_match_memo(&memo, meth, path, len), path, path);
    assert_same(plain, wr_router_match_memo(&memo, meth, copy, len), path, copy);
    return plain;
}

static void assert_param(wr_route_match_t r, const char *want)
{
    assert_non_null(r.param);
    assert_int_equal(r.param_len, strlen(want));
    assert_memory_equal(r.param, want, r.param_len);
}

/* A request line and the route it must match. */
typedef struct {
    wr_method_t method;
    const char *path;
    wr_route_t route;
} route_case_t;

static void assert_routes(const route_case_t *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        wr_route_t got = m(cases[i].method, cases[i].path).route;
        if (got != cases[i].route)
            fail_msg("%s (method %d): route %d, expected %d", cases[i].path, (int)cases[i].method,
                     (int)got, (int)cases[i].route);
    }
}

static void test_user_routes(void **state)
{
    (void)state;
    wr_route_match_t r = m(WR_METHOD_POST, "/v1/queues/shop/entries");
    assert_int_equal(r.route, WR_ROUTE_JOIN);
    assert_param(r, "shop");
    r = m(WR_METHOD_GET, "/v1/queues/a-b_c/entries/me");
    assert_int_equal(r.route, WR_ROUTE_STATUS);
    assert_param(r, "a-b_c");
    static const route_case_t cases[] = {
        {WR_METHOD_DELETE, "/v1/queues/q/entries/me", WR_ROUTE_LEAVE},
        {WR_METHOD_POST, "/v1/queues/q/tokens/consume", WR_ROUTE_CONSUME},
        {WR_METHOD_GET, "/v1/queues/q/tokens/verify", WR_ROUTE_VERIFY},
        {WR_METHOD_POST, "/v1/queues/q/tokens/release", WR_ROUTE_RELEASE},
    };
    assert_routes(cases, sizeof cases / sizeof cases[0]);
    assert_int_equal(m(WR_METHOD_GET, "/v1/queues/q/tokens/release").allowed, WR_METHOD_POST);
}

static void test_admin_routes(void **state)
{
    (void)state;
    static const route_case_t cases[] = {
        {WR_METHOD_PUT, "/v1/admin/queues/q", WR_ROUTE_ADMIN_PUT},
        {WR_METHOD_PATCH, "/v1/admin/queues/q", WR_ROUTE_ADMIN_PATCH},
        {WR_METHOD_GET, "/v1/admin/queues/q", WR_ROUTE_ADMIN_GET},
        {WR_METHOD_DELETE, "/v1/admin/queues/q", WR_ROUTE_ADMIN_DELETE},
        {WR_METHOD_GET, "/healthz", WR_ROUTE_HEALTHZ},
        {WR_METHOD_GET, "/readyz", WR_ROUTE_READYZ},
        {WR_METHOD_GET, "/metrics", WR_ROUTE_METRICS},
        {WR_METHOD_HEAD, "/healthz", WR_ROUTE_HEALTHZ},
    };
    assert_routes(cases, sizeof cases / sizeof cases[0]);
    wr_route_match_t r = m(WR_METHOD_GET, "/v1/admin/queues");
    assert_int_equal(r.route, WR_ROUTE_ADMIN_LIST);
    assert_null(r.param);
    /* presale codes: the queue is the parameter, the code the second one */
    r = m(WR_METHOD_POST, "/v1/admin/queues/sale/codes");
    assert_int_equal(r.route, WR_ROUTE_CODES_CREATE);
    assert_param(r, "sale");
    assert_null(r.param2);
    assert_int_equal(r.allowed, WR_METHOD_POST | WR_METHOD_GET | WR_METHOD_HEAD);
    assert_int_equal(m(WR_METHOD_GET, "/v1/admin/queues/sale/codes").route, WR_ROUTE_CODES_LIST);
    r = m(WR_METHOD_DELETE, "/v1/admin/queues/sale/codes/7K2QD-M9XWA");
    assert_int_equal(r.route, WR_ROUTE_CODES_REVOKE);
    assert_param(r, "sale");
    assert_int_equal(r.param2_len, 11);
    assert_memory_equal(r.param2, "7K2QD-M9XWA", 11);
    assert_int_equal(m(WR_METHOD_GET, "/v1/admin/queues/sale/codes/X").allowed, WR_METHOD_DELETE);
    assert_int_equal(m(WR_METHOD_DELETE, "/v1/admin/queues/sale/codes/").route, WR_ROUTE_NONE);
    assert_int_equal(m(WR_METHOD_DELETE, "/v1/admin/queues/sale/codes/a/b").allowed, 0);
}

static void test_method_not_allowed(void **state)
{
    (void)state;
    wr_route_match_t r = m(WR_METHOD_GET, "/v1/queues/q/entries");
    assert_int_equal(r.route, WR_ROUTE_NONE);
    assert_int_equal(r.allowed, WR_METHOD_POST);
    r = m(WR_METHOD_POST, "/v1/queues/q/entries/me");
    assert_int_equal(r.route, WR_ROUTE_NONE);
    assert_int_equal(r.allowed, WR_METHOD_GET | WR_METHOD_HEAD | WR_METHOD_DELETE);
    char allow[64];
    wr_router_allow_header(r.allowed, allow, sizeof(allow));
    assert_string_equal(allow, "GET, HEAD, DELETE");
    r = m(WR_METHOD_POST, "/v1/admin/queues/q");
    assert_int_equal(r.allowed, WR_METHOD_PUT | WR_METHOD_PATCH | WR_METHOD_GET | WR_METHOD_HEAD |
                                    WR_METHOD_DELETE);
}

static void test_unknown_paths(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "/",
                         "v1/queues/q/entries",
                         "/v1/queues//entries",
                         "/v1/queues/q/entries/",
                         "/v1/queues/q/entries/me/x",
                         "/v1/queue/q/entries",
                         "/v1/queues/q/entriesx",
                         "/v2/queues/q/entries",
                         "/a/b/c/d/e/f/g/h",
                         "/healthz/",
                         "/HEALTHZ"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        wr_route_match_t r = m(WR_METHOD_POST, bad[i]);
        assert_int_equal(r.route, WR_ROUTE_NONE);
        assert_int_equal(r.allowed, 0);
    }
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(wr_router_route_name(WR_ROUTE_JOIN), "join");
    assert_string_equal(wr_router_route_name(WR_ROUTE_ADMIN_LIST), "admin_list");
    assert_string_equal(wr_router_route_name((wr_route_t)999), "none");
    char small[5];
    wr_router_allow_header(WR_METHOD_GET | WR_METHOD_POST, small, sizeof(small));
    assert_string_equal(small, "GET");
}

/* A concrete path of a pattern: "*" replaced by "x-1". */
static void concrete(const char *pattern, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + 4 < cap; p++) {
        if (*p == '*') {
            memcpy(out + o, "x-1", 3);
            o += 3;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

/* Every row: a name of its own, a pattern from "/", one method; its path
 * routes to it with its method (and HEAD for GET), with the parameter. */
static void test_every_row(void **state)
{
    (void)state;
    assert_string_equal(wr_router_row(WR_ROUTE_NONE)->name, "none");
    assert_int_equal(wr_router_row(WR_ROUTE_NONE)->flags, 0);
    assert_ptr_equal(wr_router_row((wr_route_t)999), wr_router_row(WR_ROUTE_NONE));
    for (int r = 1; r < WR_ROUTE_COUNT; r++) {
        const wr_route_row_t *row = wr_router_row((wr_route_t)r);
        assert_non_null(row->name);
        assert_true(row->name[0] != 0);
        assert_string_equal(wr_router_route_name((wr_route_t)r), row->name);
        for (int o = 1; o < r; o++)
            assert_string_not_equal(wr_router_row((wr_route_t)o)->name, row->name);
        assert_non_null(row->pattern);
        assert_int_equal(row->pattern[0], '/');
        unsigned mth = row->method;
        assert_true(mth == WR_METHOD_GET || mth == WR_METHOD_POST || mth == WR_METHOD_PUT ||
                    mth == WR_METHOD_PATCH || mth == WR_METHOD_DELETE);
        char path[128];
        concrete(row->pattern, path, sizeof(path));
        wr_route_match_t mt = m(row->method, path);
        assert_int_equal(mt.route, r);
        assert_true(mt.allowed & row->method);
        if (strchr(row->pattern, '*'))
            assert_param(mt, "x-1");
        else
            assert_null(mt.param);
        if (strchr(row->pattern, '*') != strrchr(row->pattern, '*')) { /* .../codes/{code} */
            assert_non_null(mt.param2);
            assert_int_equal(mt.param2_len, 3);
            assert_memory_equal(mt.param2, "x-1", 3);
        } else {
            assert_null(mt.param2);
        }
        if (row->method == WR_METHOD_GET)
            assert_int_equal(m(WR_METHOD_HEAD, path).route, r);
        assert_int_equal(m(WR_METHOD_OTHER, path).route, WR_ROUTE_NONE);
    }
}

/* What api.c's handle() decided per route before the flags (its
 * predicates and its switch), which the rows' flags must say exactly. */
static bool old_is_admin(wr_route_t r)
{
    return r == WR_ROUTE_ADMIN_PUT || r == WR_ROUTE_ADMIN_PATCH || r == WR_ROUTE_ADMIN_GET ||
           r == WR_ROUTE_ADMIN_DELETE || r == WR_ROUTE_ADMIN_LIST || r == WR_ROUTE_HISTORY ||
           r == WR_ROUTE_REPORT || r == WR_ROUTE_REPORTS || r == WR_ROUTE_CODES_CREATE ||
           r == WR_ROUTE_CODES_LIST || r == WR_ROUTE_CODES_REVOKE ||
           r == WR_ROUTE_HEALTH; /* autotune's reports: admin key, like the others */
}

static unsigned old_flags(wr_route_t r)
{
    unsigned f = 0;
    if (old_is_admin(r))
        f |= WR_ROUTE_F_ADMIN_KEY | WR_ROUTE_F_ADMIN_BODY | WR_ROUTE_F_ADMIN_LISTENER;
    if (r == WR_ROUTE_DASHBOARD || r == WR_ROUTE_METRICS)
        f |= WR_ROUTE_F_ADMIN_LISTENER;
    switch (r) {
    case WR_ROUTE_JOIN:
    case WR_ROUTE_STATUS:
    case WR_ROUTE_LEAVE:
    case WR_ROUTE_CONSUME:
    case WR_ROUTE_VERIFY:
    case WR_ROUTE_RELEASE:
    case WR_ROUTE_CHALLENGE: /* signs with a key from the token secret */
    case WR_ROUTE_PUSH_KEY:  /* the VAPID key may be derived from it */
    case WR_ROUTE_PUSH_PUT:
    case WR_ROUTE_PUSH_DELETE:
        f |= WR_ROUTE_F_SECRET;
        break;
    case WR_ROUTE_QUEUE_PAGE:
        f |= WR_ROUTE_F_SECRET | WR_ROUTE_F_HEAD_HTML;
        break;
    default:
        break;
    }
    /* a parameter that is not /static's {file} is a {queue} */
    const char *pattern = wr_router_row(r)->pattern;
    if (r != WR_ROUTE_STATIC && strchr(pattern, '*'))
        f |= WR_ROUTE_F_QUEUE;
    return f;
}

static void test_flags(void **state)
{
    (void)state;
    for (int r = 1; r < WR_ROUTE_COUNT; r++) {
        const wr_route_row_t *row = wr_router_row((wr_route_t)r);
        if (row->flags != old_flags((wr_route_t)r))
            fail_msg("route %s: flags 0x%x, want 0x%x", row->name, row->flags,
                     old_flags((wr_route_t)r));
    }
    /* a few spelled out */
    assert_int_equal(wr_router_row(WR_ROUTE_STATUS)->flags, WR_ROUTE_F_QUEUE | WR_ROUTE_F_SECRET);
    assert_int_equal(wr_router_row(WR_ROUTE_ADMIN_LIST)->flags,
                     WR_ROUTE_F_ADMIN_KEY | WR_ROUTE_F_ADMIN_LISTENER | WR_ROUTE_F_ADMIN_BODY);
    assert_int_equal(wr_router_row(WR_ROUTE_METRICS)->flags, WR_ROUTE_F_ADMIN_LISTENER);
    assert_int_equal(wr_router_row(WR_ROUTE_HEALTHZ)->flags, 0);
    assert_int_equal(wr_router_row(WR_ROUTE_STATIC)->flags, 0);
}

/* Every route has a handler: routes.def walked the way api.c builds its
 * handler table (api.c's table is indexed by route and each row names its
 * handler, so a row without one does not build). */
static void test_every_route_has_a_handler(void **state)
{
    (void)state;
    static const struct {
        wr_route_t route;
        const char *handler;
    } h[] = {
#define WR_ROUTE(id, name, method, pattern, flags, handler) {WR_ROUTE_##id, #handler},
#include "http/routes.def"
#undef WR_ROUTE
    };
    int seen[WR_ROUTE_COUNT] = {0};
    assert_int_equal(sizeof(h) / sizeof(h[0]), WR_ROUTE_COUNT - 1);
    for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
        assert_true(h[i].route > WR_ROUTE_NONE && h[i].route < WR_ROUTE_COUNT);
        assert_true(strlen(h[i].handler) > 0);
        seen[h[i].route]++;
    }
    for (int r = 1; r < WR_ROUTE_COUNT; r++)
        assert_int_equal(seen[r], 1);
}

/* The memo's own cases: a path of the same length with other bytes, the
 * same path with another method, a path too long to keep. */
static void test_memo(void **state)
{
    (void)state;
    wr_router_memo_t mm;
    memset(&mm, 0, sizeof mm);
    const char *a = "/v1/queues/aaaa/entries/me", *b = "/v1/queues/bbbb/entries/me";
    wr_route_match_t r = wr_router_match_memo(&mm, WR_METHOD_GET, a, strlen(a));
    assert_int_equal(r.route, WR_ROUTE_STATUS);
    assert_param(r, "aaaa");
    r = wr_router_match_memo(&mm, WR_METHOD_GET, b, strlen(b));
    assert_int_equal(r.route, WR_ROUTE_STATUS);
    assert_param(r, "bbbb");
    r = wr_router_match_memo(&mm, WR_METHOD_DELETE, b, strlen(b));
    assert_int_equal(r.route, WR_ROUTE_LEAVE);
    r = wr_router_match_memo(&mm, WR_METHOD_PUT, b, strlen(b));
    assert_int_equal(r.route, WR_ROUTE_NONE);
    assert_true(r.allowed & WR_METHOD_GET);
    char big[300] = "/v1/queues/";
    memset(big + 11, 'q', 200);
    memcpy(big + 211, "/entries", 9);
    for (int i = 0; i < 2; i++) {
        r = wr_router_match_memo(&mm, WR_METHOD_POST, big, strlen(big));
        assert_int_equal(r.route, WR_ROUTE_JOIN);
        assert_int_equal(r.param_len, 200);
        assert_ptr_equal(r.param, big + 11);
    }
    assert_int_equal(mm.len, strlen(b)); /* the long one was not kept */
}

#define TESTS(X)                                                                                   \
    X(test_memo)                                                                                   \
    X(test_user_routes)                                                                            \
    X(test_admin_routes)                                                                           \
    X(test_method_not_allowed)                                                                     \
    X(test_unknown_paths)                                                                          \
    X(test_names)                                                                                  \
    X(test_every_row)                                                                              \
    X(test_flags)                                                                                  \
    X(test_every_route_has_a_handler)
WR_UNIT_MAIN(NULL, NULL, TESTS)
