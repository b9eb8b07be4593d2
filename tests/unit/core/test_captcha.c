/*
 * test_captcha.c - the CAPTCHA hook's pure part (core/captcha.h): verify
 * URLs (https anywhere, http only to loopback hosts), the widget script
 * and the CSP sources per provider and for a loopback stand-in, the
 * siteverify form, the reading of answers, the rendering (secret only in
 * the stores' form). The config field's parsing through the qconfig table
 * is tests/unit/core/test_qconfig.c (test_captcha).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/captcha.h"
#include "unit_main.h"

static wr_captcha_config_t parse_ok(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j)
        fail_msg("bad JSON in test: %s", jerr.text);
    wr_captcha_config_t c;
    memset(&c, 0, sizeof c);
    char field[64] = "", msg[256] = "";
    if (wr_captcha_parse(j, &c, field, sizeof field, msg, sizeof msg) != WR_OK)
        fail_msg("%s: %s %s", text, field, msg);
    json_decref(j);
    return c;
}

static void test_url_parse(void **state)
{
    (void)state;
    wr_captcha_url_t u;
    /* accepted, and what each parses to (NULL, -1: not looked at) */
    static const struct {
        const char *url;
        int https;
        const char *host;
        int port;
        const char *path, *origin;
        int loopback;
    } ok[] = {
        {"https://api.hcaptcha.com/siteverify", 1, "api.hcaptcha.com", 443, "/siteverify",
         "https://api.hcaptcha.com", 0},
        {"http://127.0.0.1:8123/sv?x=1", 0, "127.0.0.1", 8123, "/sv?x=1", "http://127.0.0.1:8123",
         1},
        {"http://[::1]:9/", -1, "::1", 9, NULL, NULL, -1},
        {"http://localhost", -1, NULL, 80, "/", NULL, -1},
        {"http://127.9.8.7:80/x", -1, NULL, -1, NULL, NULL, -1},
        {"https://HOST.example:8443", -1, "host.example", 8443, NULL, NULL, -1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (!wr_captcha_url_parse(ok[i].url, &u))
            fail_msg("refused: %s", ok[i].url);
        if (ok[i].https >= 0)
            assert_int_equal(u.https, ok[i].https);
        if (ok[i].host)
            assert_string_equal(u.host, ok[i].host);
        if (ok[i].port >= 0)
            assert_int_equal(u.port, ok[i].port);
        if (ok[i].path)
            assert_string_equal(u.path, ok[i].path);
        if (ok[i].origin)
            assert_string_equal(u.origin, ok[i].origin);
        if (ok[i].loopback >= 0)
            assert_int_equal(u.loopback, ok[i].loopback);
    }

    static const char *const bad[] = {
        /* the secret never goes in the clear to anything but loopback */
        "http://captcha.example/sv",
        "http://128.0.0.1/sv",
        "http://127.0.0.1.evil.example/sv",
        "http://10.0.0.1/sv",
        /* other schemes and spellings */
        "ftp://127.0.0.1/sv",
        "//127.0.0.1/sv",
        "https://user@host.example/sv",
        "https://host.example/a b",
        "https://host.example/a\"b",
        "https://host.example/a#b",
        "https://host.example:0/",
        "https://host.example:65536/",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (wr_captcha_url_parse(bad[i], &u))
            fail_msg("accepted: %s", bad[i]);
    assert_false(wr_captcha_url_parse(NULL, &u));
}

static void test_script_and_csp(void **state)
{
    (void)state;
    char buf[WR_CAPTCHA_SCRIPT_MAX + 1];
    unsigned dirs = 99;
    wr_captcha_config_t t =
        parse_ok("{\"provider\":\"turnstile\",\"siteKey\":\"k\",\"secret\":\"s\"}");
    assert_true(wr_captcha_script_url(&t, buf, sizeof buf) > 0);
    assert_string_equal(buf, "https://challenges.cloudflare.com/turnstile/v0/api.js");
    assert_true(wr_captcha_csp_sources(&t, buf, sizeof buf, &dirs) > 0);
    assert_string_equal(buf, "https://challenges.cloudflare.com");
    assert_int_equal(dirs, 0);

    wr_captcha_config_t h =
        parse_ok("{\"provider\":\"hcaptcha\",\"siteKey\":\"k\",\"secret\":\"s\"}");
    assert_string_equal(h.verify_url, "https://api.hcaptcha.com/siteverify");
    assert_true(wr_captcha_script_url(&h, buf, sizeof buf) > 0);
    assert_string_equal(buf, "https://js.hcaptcha.com/1/api.js");
    assert_true(wr_captcha_csp_sources(&h, buf, sizeof buf, &dirs) > 0);
    assert_string_equal(buf, "https://hcaptcha.com https://*.hcaptcha.com");
    assert_int_equal(dirs, WR_CAPTCHA_CSP_STYLE | WR_CAPTCHA_CSP_CONNECT);

    /* a shop's own https verify URL (a proxy) keeps the provider's script */
    wr_captcha_config_t p = parse_ok("{\"provider\":\"hcaptcha\",\"siteKey\":\"k\",\"secret\":"
                                     "\"s\",\"verifyUrl\":\"https://proxy.shop.example/sv\"}");
    assert_true(wr_captcha_script_url(&p, buf, sizeof buf) > 0);
    assert_string_equal(buf, "https://js.hcaptcha.com/1/api.js");

    /* a loopback stand-in serves the script too; the CSP names only it */
    wr_captcha_config_t s = parse_ok("{\"provider\":\"turnstile\",\"siteKey\":\"k\",\"secret\":"
                                     "\"s\",\"verifyUrl\":\"http://127.0.0.1:8123/siteverify\"}");
    assert_true(wr_captcha_script_url(&s, buf, sizeof buf) > 0);
    assert_string_equal(buf, "http://127.0.0.1:8123/turnstile/v0/api.js");
    assert_true(wr_captcha_csp_sources(&s, buf, sizeof buf, &dirs) > 0);
    assert_string_equal(buf, "http://127.0.0.1:8123");
    assert_int_equal(dirs, WR_CAPTCHA_CSP_CONNECT);

    /* not set, or no room */
    wr_captcha_config_t none;
    memset(&none, 0, sizeof none);
    assert_int_equal(wr_captcha_script_url(&none, buf, sizeof buf), -1);
    assert_int_equal(wr_captcha_csp_sources(&none, buf, sizeof buf, &dirs), -1);
    assert_int_equal(wr_captcha_script_url(&t, buf, 10), -1);
}

static void test_render(void **state)
{
    (void)state;
    wr_captcha_config_t c = parse_ok("{\"provider\":\"hcaptcha\",\"siteKey\":\"site-1\",\"secret\":"
                                     "\"0xSECRET\",\"fallback\":\"refuse\"}");
    json_t *pub = wr_captcha_to_json(&c, false);
    char *s = json_dumps(pub, JSON_COMPACT);
    assert_string_equal(s, "{\"provider\":\"hcaptcha\",\"siteKey\":\"site-1\",\"secret\":\"set\","
                           "\"verifyUrl\":\"https://api.hcaptcha.com/siteverify\",\"fallback\":"
                           "\"refuse\",\"fallbackBits\":18,\"hostname\":null}");
    assert_null(strstr(s, "0xSECRET"));
    free(s);
    json_decref(pub);
    json_t *priv = wr_captcha_to_json(&c, true);
    assert_string_equal(json_string_value(json_object_get(priv, "secret")), "0xSECRET");
    /* and back */
    wr_captcha_config_t d;
    memset(&d, 0, sizeof d);
    char field[64], msg[256];
    assert_int_equal(wr_captcha_parse(priv, &d, field, sizeof field, msg, sizeof msg), WR_OK);
    assert_memory_equal(&c, &d, sizeof c);
    json_decref(priv);
    wr_captcha_config_t none;
    memset(&none, 0, sizeof none);
    json_t *n = wr_captcha_to_json(&none, true);
    assert_true(json_is_null(n));
    json_decref(n);
    /* a refused object leaves the config as it was */
    json_error_t jerr;
    json_t *bad = json_loads("{\"provider\":\"turnstile\",\"siteKey\":\"k\",\"secret\":\"s\","
                             "\"fallbackBits\":99}",
                             0, &jerr);
    wr_captcha_config_t keep = c;
    assert_int_equal(wr_captcha_parse(bad, &keep, field, sizeof field, msg, sizeof msg), WR_EINVAL);
    assert_string_equal(field, "captcha.fallbackBits");
    assert_memory_equal(&keep, &c, sizeof c);
    json_decref(bad);
    /* hostname (K39): kept in lower case, rendered, parsed back; bad ones named */
    wr_captcha_config_t h = parse_ok("{\"provider\":\"turnstile\",\"siteKey\":\"k\",\"secret\":"
                                     "\"s\",\"hostname\":\"Shop.Example\"}");
    assert_string_equal(h.hostname, "shop.example");
    json_t *hj = wr_captcha_to_json(&h, true);
    assert_string_equal(json_string_value(json_object_get(hj, "hostname")), "shop.example");
    memset(&d, 0, sizeof d);
    assert_int_equal(wr_captcha_parse(hj, &d, field, sizeof field, msg, sizeof msg), WR_OK);
    assert_memory_equal(&h, &d, sizeof h);
    json_decref(hj);
    const char *bads[] = {"\"\"", "\"a b\"", "\"shop.example:443\"", "\"https://shop.example\"",
                          "5"};
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        char txt[256];
        snprintf(txt, sizeof txt,
                 "{\"provider\":\"turnstile\",\"siteKey\":\"k\",\"secret\":\"s\",\"hostname\":%s}",
                 bads[i]);
        bad = json_loads(txt, 0, &jerr);
        assert_non_null(bad);
        keep = h;
        assert_int_equal(wr_captcha_parse(bad, &keep, field, sizeof field, msg, sizeof msg),
                         WR_EINVAL);
        assert_string_equal(field, "captcha.hostname");
        assert_memory_equal(&keep, &h, sizeof h);
        json_decref(bad);
    }
}

static void test_form(void **state)
{
    (void)state;
    char buf[WR_CAPTCHA_FORM_MAX];
    int n = wr_captcha_form(buf, sizeof buf, "0x4AAA+/=", "tok.en_-~ &x", "2001:db8::1", NULL);
    assert_true(n > 0);
    assert_string_equal(
        buf, "secret=0x4AAA%2B%2F%3D&response=tok.en_-~%20%26x&remoteip=2001%3Adb8%3A%3A1");
    assert_int_equal((size_t)n, strlen(buf));
    n = wr_captcha_form(buf, sizeof buf, "s", "r", NULL, NULL);
    assert_string_equal(buf, "secret=s&response=r");
    n = wr_captcha_form(buf, sizeof buf, "s", "r", "", "");
    assert_string_equal(buf, "secret=s&response=r");
    /* bounded: never past cap */
    assert_int_equal(wr_captcha_form(buf, 12, "secret", "response", NULL, NULL), -1);
    /* the largest valid values fit WR_CAPTCHA_FORM_MAX */
    char secret[WR_CAPTCHA_SECRET_MAX + 1], resp[WR_CAPTCHA_RESPONSE_MAX + 1];
    memset(secret, '/', WR_CAPTCHA_SECRET_MAX);
    secret[WR_CAPTCHA_SECRET_MAX] = '\0';
    memset(resp, '+', WR_CAPTCHA_RESPONSE_MAX);
    resp[WR_CAPTCHA_RESPONSE_MAX] = '\0';
    char key[WR_CAPTCHA_SITE_KEY_MAX + 1];
    memset(key, '!', WR_CAPTCHA_SITE_KEY_MAX);
    key[WR_CAPTCHA_SITE_KEY_MAX] = '\0';
    assert_true(wr_captcha_form(buf, sizeof buf, secret, resp,
                                "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", key) > 0);
    /* hCaptcha's site key (K39) */
    n = wr_captcha_form(buf, sizeof buf, "s", "r", "10.0.0.1",
                        "10000000-ffff-ffff-ffff-000000000001");
    assert_string_equal(
        buf, "secret=s&response=r&remoteip=10.0.0.1&sitekey=10000000-ffff-ffff-ffff-000000000001");
}

static void test_response_ok(void **state)
{
    (void)state;
    assert_true(wr_captcha_response_ok("XXXX.DUMMY.TOKEN.XXXX", 21));
    assert_false(wr_captcha_response_ok("", 0));
    assert_false(wr_captcha_response_ok(NULL, 3));
    assert_false(wr_captcha_response_ok("a b", 3));
    assert_false(wr_captcha_response_ok("a\nb", 3));
    assert_false(wr_captcha_response_ok("a\0b", 3));
    assert_false(wr_captcha_response_ok("\xc3\xa9", 2));
    static char big[WR_CAPTCHA_RESPONSE_MAX + 2];
    memset(big, 'a', sizeof big);
    assert_true(wr_captcha_response_ok(big, WR_CAPTCHA_RESPONSE_MAX));
    assert_false(wr_captcha_response_ok(big, WR_CAPTCHA_RESPONSE_MAX + 1));
}

static void test_verdict(void **state)
{
    (void)state;
    char codes[WR_CAPTCHA_ERROR_CODES_MAX + 1];
#define V(status, body) wr_captcha_verdict(status, body, strlen(body), NULL, codes, sizeof codes)
    assert_int_equal(V(200, "{\"success\":true,\"error-codes\":[]}"), WR_CAPTCHA_PASSED);
    assert_string_equal(codes, "");
    assert_int_equal(V(200, "{\"success\":false,\"error-codes\":[\"invalid-input-response\","
                            "\"timeout-or-duplicate\"]}"),
                     WR_CAPTCHA_REFUSED);
    assert_string_equal(codes, "invalid-input-response,timeout-or-duplicate");
    /* a 4xx with the provider's JSON is its verdict (a bad secret, say) */
    assert_int_equal(V(400, "{\"success\":false,\"error-codes\":[\"invalid-input-secret\"]}"),
                     WR_CAPTCHA_REFUSED);
    /* not the provider answering */
    assert_int_equal(V(500, "{\"success\":true}"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(503, "<html>down</html>"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(302, "{\"success\":true}"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(0, "{\"success\":true}"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(200, "not json"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(200, "{\"success\":\"true\"}"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(200, "{\"success\":1}"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(200, "[true]"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(200, "{\"success\":true"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(200, "{\"success\":true,\"success\":false}"), WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(V(200, ""), WR_CAPTCHA_BAD_ANSWER);
    /* odd error codes are skipped; a long list is cut, never overflowed */
    assert_int_equal(V(200, "{\"success\":false,\"error-codes\":[1,\"a b\",\"ok-code\"]}"),
                     WR_CAPTCHA_REFUSED);
    assert_string_equal(codes, "ok-code");
    char small[8];
    const char *many = "{\"success\":false,\"error-codes\":[\"aaaa\",\"bbbb\",\"cccc\"]}";
    assert_int_equal(wr_captcha_verdict(200, many, strlen(many), NULL, small, sizeof small),
                     WR_CAPTCHA_REFUSED);
    assert_string_equal(small, "aaaa");
    /* bounded input */
    static char big[WR_CAPTCHA_ANSWER_MAX + 10];
    memset(big, ' ', sizeof big);
    memcpy(big, "{\"success\":true}", 16);
    assert_int_equal(wr_captcha_verdict(200, big, sizeof big, NULL, NULL, 0),
                     WR_CAPTCHA_BAD_ANSWER);
    assert_int_equal(wr_captcha_verdict(200, big, WR_CAPTCHA_ANSWER_MAX, NULL, NULL, 0),
                     WR_CAPTCHA_PASSED);
#undef V
}

/* K39: a success for another widget (site key) or another site is a
 * refusal; the answers as the providers give them */
static void test_verdict_is_for_this_widget(void **state)
{
    (void)state;
    char codes[WR_CAPTCHA_ERROR_CODES_MAX + 1];
    wr_captcha_config_t c;
    memset(&c, 0, sizeof c);
    snprintf(c.site_key, sizeof c.site_key, "%s", "10000000-ffff-ffff-ffff-000000000001");
#define V(body) wr_captcha_verdict(200, body, strlen(body), &c, codes, sizeof codes)
    const char *hc = "{\"success\":true,\"challenge_ts\":\"2026-12-06T12:00:00Z\","
                     "\"hostname\":\"Shop.Example\",\"credit\":false,\"error-codes\":[],"
                     "\"sitekey\":\"10000000-ffff-ffff-ffff-000000000001\"}";
    assert_int_equal(V(hc), WR_CAPTCHA_PASSED);
    const char *other = "{\"success\":true,\"hostname\":\"shop.example\","
                        "\"sitekey\":\"20000000-ffff-ffff-ffff-000000000002\"}";
    assert_int_equal(V(other), WR_CAPTCHA_REFUSED);
    assert_string_equal(codes, "sitekey-mismatch");
    /* Turnstile names no site key: the host name, when one is expected */
    const char *ts = "{\"success\":true,\"error-codes\":[],\"challenge_ts\":"
                     "\"2026-12-06T12:00:00.000Z\",\"hostname\":\"shop.example\",\"action\":\"\","
                     "\"cdata\":\"\",\"metadata\":{\"interactive\":false}}";
    assert_int_equal(V(ts), WR_CAPTCHA_PASSED);
    snprintf(c.hostname, sizeof c.hostname, "%s", "shop.example");
    assert_int_equal(V(ts), WR_CAPTCHA_PASSED);
    assert_int_equal(V(hc), WR_CAPTCHA_PASSED); /* any case */
    const char *elsewhere = "{\"success\":true,\"hostname\":\"evil.example\"}";
    assert_int_equal(V(elsewhere), WR_CAPTCHA_REFUSED);
    assert_string_equal(codes, "hostname-mismatch");
    assert_int_equal(V("{\"success\":true}"), WR_CAPTCHA_REFUSED); /* no hostname given */
    assert_int_equal(V("{\"success\":true,\"hostname\":7}"), WR_CAPTCHA_REFUSED);
    /* a refusal stays the provider's, with its codes */
    assert_int_equal(V("{\"success\":false,\"error-codes\":[\"invalid-input-response\"]}"),
                     WR_CAPTCHA_REFUSED);
    assert_string_equal(codes, "invalid-input-response");
#undef V
}

#define TESTS(X)                                                                                   \
    X(test_url_parse)                                                                              \
    X(test_script_and_csp)                                                                         \
    X(test_render)                                                                                 \
    X(test_form)                                                                                   \
    X(test_response_ok)                                                                            \
    X(test_verdict)                                                                                \
    X(test_verdict_is_for_this_widget)
WR_UNIT_MAIN(NULL, NULL, TESTS)
