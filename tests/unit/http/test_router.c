/* Unit tests for the router: every route of the API, 404 vs 405, and
 * paths that must not match. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/router.h"

static wr_route_match_t m(wr_method_t meth, const char *path)
{
    return wr_router_match(meth, path, strlen(path));
}

static void assert_param(wr_route_match_t r, const char *want)
{
    assert_non_null(r.param);
    assert_int_equal(r.param_len, strlen(want));
    assert_memory_equal(r.param, want, r.param_len);
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
    assert_int_equal(m(WR_METHOD_DELETE, "/v1/queues/q/entries/me").route, WR_ROUTE_LEAVE);
    assert_int_equal(m(WR_METHOD_POST, "/v1/queues/q/tokens/consume").route, WR_ROUTE_CONSUME);
    assert_int_equal(m(WR_METHOD_GET, "/v1/queues/q/tokens/verify").route, WR_ROUTE_VERIFY);
    assert_int_equal(m(WR_METHOD_POST, "/v1/queues/q/tokens/release").route, WR_ROUTE_RELEASE);
    assert_int_equal(m(WR_METHOD_GET, "/v1/queues/q/tokens/release").allowed, WR_METHOD_POST);
}

static void test_admin_routes(void **state)
{
    (void)state;
    assert_int_equal(m(WR_METHOD_PUT, "/v1/admin/queues/q").route, WR_ROUTE_ADMIN_PUT);
    assert_int_equal(m(WR_METHOD_PATCH, "/v1/admin/queues/q").route, WR_ROUTE_ADMIN_PATCH);
    assert_int_equal(m(WR_METHOD_GET, "/v1/admin/queues/q").route, WR_ROUTE_ADMIN_GET);
    assert_int_equal(m(WR_METHOD_DELETE, "/v1/admin/queues/q").route, WR_ROUTE_ADMIN_DELETE);
    wr_route_match_t r = m(WR_METHOD_GET, "/v1/admin/queues");
    assert_int_equal(r.route, WR_ROUTE_ADMIN_LIST);
    assert_null(r.param);
    assert_int_equal(m(WR_METHOD_GET, "/healthz").route, WR_ROUTE_HEALTHZ);
    assert_int_equal(m(WR_METHOD_GET, "/readyz").route, WR_ROUTE_READYZ);
    assert_int_equal(m(WR_METHOD_GET, "/metrics").route, WR_ROUTE_METRICS);
    assert_int_equal(m(WR_METHOD_HEAD, "/healthz").route, WR_ROUTE_HEALTHZ);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_routes),
        cmocka_unit_test(test_admin_routes),
        cmocka_unit_test(test_method_not_allowed),
        cmocka_unit_test(test_unknown_paths),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
