/*
 * test_origin.c - origins and the ?return= check (origin.h): the usual
 * open-redirect tricks must all fail, the allowed spellings pass.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/origin.h"
#include "core/qconfig.h"
#include "unit_main.h"

static void expect_origin(const char *in, const char *want)
{
    char out[WR_ORIGIN_MAX + 1];
    bool ok = wr_origin_parse(in, strlen(in), out);
    if (want == NULL) {
        if (ok)
            fail_msg("'%s' parsed as an origin: '%s'", in, out);
        assert_string_equal(out, "");
    } else {
        if (!ok)
            fail_msg("'%s' is not an origin", in);
        assert_string_equal(out, want);
    }
}

static void test_parse(void **state)
{
    (void)state;
    expect_origin("https://shop.example", "https://shop.example");
    expect_origin("HTTPS://SHOP.EXAMPLE", "https://shop.example");
    expect_origin("https://shop.example:443", "https://shop.example");
    expect_origin("http://shop.example:80", "http://shop.example");
    expect_origin("http://shop.example:443", "http://shop.example:443");
    expect_origin("https://shop.example:8443", "https://shop.example:8443");
    expect_origin("http://127.0.0.1:3000", "http://127.0.0.1:3000");
    expect_origin("http://[::1]:3000", "http://[::1]:3000");
    expect_origin("https://a-b.c-d.example", "https://a-b.c-d.example");
    expect_origin("http://localhost", "http://localhost");

    expect_origin("https://shop.example/", NULL);
    expect_origin("https://shop.example/x", NULL);
    expect_origin("https://shop.example?x=1", NULL);
    expect_origin("https://shop.example#x", NULL);
    expect_origin("https://shop.example.", NULL);
    expect_origin("https://.shop.example", NULL);
    expect_origin("https://shop..example", NULL);
    expect_origin("https://", NULL);
    expect_origin("https://:443", NULL);
    expect_origin("https://shop.example:", NULL);
    expect_origin("https://shop.example:0", NULL);
    expect_origin("https://shop.example:65536", NULL);
    expect_origin("https://shop.example:123456", NULL);
    expect_origin("https://shop.example:8a", NULL);
    expect_origin("https://user@shop.example", NULL);
    expect_origin("https://user:pw@shop.example", NULL);
    expect_origin("https://shop.example\\", NULL);
    expect_origin("https://shop%2Eexample", NULL);
    expect_origin("https://shop_example", NULL);
    expect_origin("https:shop.example", NULL);
    expect_origin("//shop.example", NULL);
    expect_origin("shop.example", NULL);
    expect_origin("ftp://shop.example", NULL);
    expect_origin("javascript:alert(1)", NULL);
    expect_origin("http://[::1", NULL);
    expect_origin("http://[::1]x", NULL);
    expect_origin("http://[zz::1]", NULL);
    expect_origin("", NULL);

    char out[WR_ORIGIN_MAX + 1];
    assert_false(wr_origin_parse("https://a.example\0.evil", 23, out)); /* embedded NUL */
}

static void test_of_url(void **state)
{
    (void)state;
    char o[WR_ORIGIN_MAX + 1];
    assert_true(wr_origin_of_url("https://shop.example/a/b?c#d", o));
    assert_string_equal(o, "https://shop.example");
    assert_true(wr_origin_of_url("HTTPS://Shop.Example:443?x", o));
    assert_string_equal(o, "https://shop.example");
    assert_true(wr_origin_of_url("http://127.0.0.1:8080#f", o));
    assert_string_equal(o, "http://127.0.0.1:8080");
    assert_false(wr_origin_of_url("https://shop.example@evil.com/", o));
    assert_string_equal(o, "");
    assert_false(wr_origin_of_url("https://shop.example\\@evil.com/", o));
    assert_false(wr_origin_of_url("https://shop.example /", o));
    assert_false(wr_origin_of_url("https://shop.example\t/", o));
    assert_false(wr_origin_of_url("/path", o));
}

static const char origins[][WR_ORIGIN_MAX + 1] = {"https://cart.example", "http://127.0.0.1:9000"};

static bool ok_abs(const char *ret)
{
    return wr_origin_return_ok(ret, WR_TARGET_URL_MAX, "https://shop.example/checkout", origins, 2);
}

static void test_return_allowed(void **state)
{
    (void)state;
    assert_true(ok_abs("https://shop.example/item/7?size=m#top"));
    assert_true(ok_abs("https://shop.example"));
    assert_true(ok_abs("HTTPS://SHOP.EXAMPLE/x"));
    assert_true(ok_abs("https://SHOP.example:443/x"));
    assert_true(ok_abs("https://cart.example/c"));
    assert_true(ok_abs("http://127.0.0.1:9000/back"));
    /* a path is on the page's origin: allowed only with a path targetUrl */
    assert_false(ok_abs("/checkout/item/7"));
    assert_true(wr_origin_return_ok("/checkout/item/7?size=m", 2048, "/checkout/", NULL, 0));
    assert_true(wr_origin_return_ok("/", 2048, "/checkout/", NULL, 0));
    /* no targetUrl: only the listed origins */
    assert_true(wr_origin_return_ok("https://cart.example/", 2048, "", origins, 2));
    assert_false(wr_origin_return_ok("https://shop.example/", 2048, "", origins, 2));
    assert_false(wr_origin_return_ok("/x", 2048, "", origins, 2));
}

static void test_return_tricks(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "//evil.com",
        "//evil.com/checkout",
        "///evil.com",
        "https:evil.com",
        "https:/evil.com",
        "http:evil.com",
        "\\\\evil.com",
        "/\\evil.com",
        "\\/evil.com",
        "/\t/evil.com",
        "/\n/evil.com",
        " /evil",
        "https://shop.example@evil.com",
        "https://shop.example:pw@evil.com/",
        "https://evil.com\\@shop.example",
        "https://evil.com#@shop.example",
        "https://evil.com?@shop.example",
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "%2F%2Fevil.com",
        "/%2F%2Fevil.com\\",
        "https%3A%2F%2Fevil.com",
        "https://shop.example.evil.com/",
        "https://evil-shop.example/",
        "https://shop.example./",
        "https://shop.example:8443/",
        "http://shop.example/",
        "https://cart.example:444/",
        "http://127.0.0.1:9001/",
        "http://127.0.0.1/",
        "https://xn--shop-9oa.example/",
        "https://shop.exämple/",
        "evil.com",
        "shop.example/x",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (ok_abs(bad[i]))
            fail_msg("absolute targetUrl: return '%s' allowed", bad[i]);
        if (wr_origin_return_ok(bad[i], 2048, "/checkout/", origins, 2))
            fail_msg("path targetUrl: return '%s' allowed", bad[i]);
    }
    /* "/%2F%2Fevil.com" is a plain path on our own origin: fine */
    assert_true(wr_origin_return_ok("/%2F%2Fevil.com", 2048, "/checkout/", NULL, 0));
    /* too long */
    char longurl[3000];
    memset(longurl, 'a', sizeof(longurl) - 1);
    longurl[0] = '/';
    longurl[sizeof(longurl) - 1] = 0;
    assert_false(wr_origin_return_ok(longurl, 2048, "/checkout/", NULL, 0));
    assert_false(wr_origin_return_ok(NULL, 2048, "/checkout/", NULL, 0));
}

static void test_add_param(void **state)
{
    (void)state;
    char out[256];
    assert_true(wr_origin_add_param("https://a.example/x", "wr_token", "T", out, sizeof(out)));
    assert_string_equal(out, "https://a.example/x?wr_token=T");
    assert_true(wr_origin_add_param("https://a.example/x?a=1", "wr_token", "T", out, sizeof(out)));
    assert_string_equal(out, "https://a.example/x?a=1&wr_token=T");
    assert_true(
        wr_origin_add_param("https://a.example/x?a=1#frag?b", "wr_token", "T", out, sizeof(out)));
    assert_string_equal(out, "https://a.example/x?a=1&wr_token=T#frag?b");
    assert_true(wr_origin_add_param("https://a.example/x#f", "wr_token", "T", out, sizeof(out)));
    assert_string_equal(out, "https://a.example/x?wr_token=T#f");
    assert_true(wr_origin_add_param("https://a.example/x?", "wr_token", "T", out, sizeof(out)));
    assert_string_equal(out, "https://a.example/x?wr_token=T");
    assert_true(wr_origin_add_param("https://a.example/x?a=1&", "wr_token", "T", out, sizeof(out)));
    assert_string_equal(out, "https://a.example/x?a=1&wr_token=T");
    assert_false(wr_origin_add_param("https://a.example/x", "wr_token", "T", out, 10));
}

#define TESTS(X)                                                                                   \
    X(test_parse)                                                                                  \
    X(test_of_url)                                                                                 \
    X(test_return_allowed)                                                                         \
    X(test_return_tricks)                                                                          \
    X(test_add_param)
WR_UNIT_MAIN(NULL, NULL, TESTS)
