/*
 * test_qconfig.c - queue config parsing, validation, PATCH and rendering.
 *
 * Expectations are written by hand from docs/API.md ("Queue config"); the
 * error cases assert the exact field path and that *out is untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/qconfig.h"

static json_t *load(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!j)
        fail_msg("bad test JSON: %s (%s)", text, jerr.text);
    return j;
}

/* Parses text as a PUT; asserts success. */
static wr_queue_config_t parse_ok(const char *text)
{
    json_t *j = load(text);
    wr_queue_config_t c;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    wr_err_t err = wr_qconfig_parse(j, &c, field, sizeof(field), msg, sizeof(msg));
    if (err != WR_OK)
        fail_msg("parse failed for %s: field '%s': %s", text, field, msg);
    json_decref(j);
    return c;
}

static void assert_cfg_eq(const wr_queue_config_t *a, const wr_queue_config_t *b)
{
    assert_int_equal(a->enabled, b->enabled);
    assert_int_equal(a->paused, b->paused);
    assert_true(a->admit_per_second == b->admit_per_second);
    assert_int_equal(a->has_capacity, b->has_capacity);
    if (a->has_capacity) {
        assert_int_equal(a->cap_connections, b->cap_connections);
        assert_int_equal(a->cap_service_ms, b->cap_service_ms);
        assert_true(a->cap_safety == b->cap_safety);
    }
    assert_int_equal(a->tick_ms, b->tick_ms);
    assert_int_equal(a->max_active, b->max_active);
    assert_int_equal(a->max_queue_size, b->max_queue_size);
    assert_int_equal(a->token_ttl_seconds, b->token_ttl_seconds);
    assert_int_equal(a->n_poll_bands, b->n_poll_bands);
    for (size_t i = 0; i < a->n_poll_bands; i++) {
        assert_int_equal(a->poll_bands[i].up_to, b->poll_bands[i].up_to);
        assert_int_equal(a->poll_bands[i].ms, b->poll_bands[i].ms);
    }
    assert_true(a->poll_jitter == b->poll_jitter);
    assert_int_equal(a->fail_policy, b->fail_policy);
    assert_true(a->fail_open_per_second == b->fail_open_per_second);
    assert_string_equal(a->target_url, b->target_url);
}

static void test_defaults(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 175}");
    assert_true(c.enabled);
    assert_false(c.paused);
    assert_true(c.admit_per_second == 175.0);
    assert_false(c.has_capacity);
    assert_int_equal(c.tick_ms, 100);
    assert_int_equal(c.max_active, 0);
    assert_int_equal(c.max_queue_size, 100000);
    assert_int_equal(c.token_ttl_seconds, 300);
    assert_int_equal(c.n_poll_bands, 3);
    assert_int_equal(c.poll_bands[0].up_to, 100);
    assert_int_equal(c.poll_bands[0].ms, 1000);
    assert_int_equal(c.poll_bands[1].up_to, 1000);
    assert_int_equal(c.poll_bands[1].ms, 3000);
    assert_int_equal(c.poll_bands[2].up_to, 0);
    assert_int_equal(c.poll_bands[2].ms, 5000);
    assert_true(c.poll_jitter == 0.1);
    assert_int_equal(c.fail_policy, WR_FAIL_LIMITED);
    assert_true(c.fail_open_per_second == 175.0);
    assert_string_equal(c.target_url, "");

    wr_queue_config_t d;
    wr_qconfig_defaults(&d);
    assert_true(d.admit_per_second == 0);
    assert_true(d.enabled);
    assert_int_equal(d.n_poll_bands, 3);
}

static void test_full_config(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok(
        "{\"enabled\": false, \"paused\": true, \"admitPerSecond\": 33.3,"
        " \"capacity\": {\"connections\": 10, \"serviceMs\": 500},"
        " \"tickMs\": 250, \"maxActive\": 12, \"maxQueueSize\": 0, \"tokenTtlSeconds\": 86400,"
        " \"pollBands\": [{\"upTo\": 5, \"ms\": 250}, {\"upTo\": 50, \"ms\": 600000}],"
        " \"pollJitter\": 0.5, \"failPolicy\": \"closed\", \"failOpenPerSecond\": 0,"
        " \"targetUrl\": \"/checkout?x=1\"}");
    assert_false(c.enabled);
    assert_true(c.paused);
    assert_true(c.admit_per_second == 33.3); /* given rate wins over capacity */
    assert_true(c.has_capacity);
    assert_int_equal(c.cap_connections, 10);
    assert_int_equal(c.cap_service_ms, 500);
    assert_true(c.cap_safety == 0.875);
    assert_int_equal(c.tick_ms, 250);
    assert_int_equal(c.max_active, 12);
    assert_int_equal(c.max_queue_size, 0);
    assert_int_equal(c.token_ttl_seconds, 86400);
    assert_int_equal(c.n_poll_bands, 2);
    assert_int_equal(c.poll_bands[1].up_to, 50);
    assert_int_equal(c.poll_bands[1].ms, 600000);
    assert_true(c.poll_jitter == 0.5);
    assert_int_equal(c.fail_policy, WR_FAIL_CLOSED);
    assert_true(c.fail_open_per_second == 0.0);
    assert_string_equal(c.target_url, "/checkout?x=1");
}

static void test_derived_rate(void **state)
{
    (void)state;
    wr_queue_config_t c =
        parse_ok("{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"safety\": 0.875}}");
    assert_true(c.admit_per_second == 175.0); /* exact, not 174.99999 */
    assert_true(c.fail_open_per_second == 175.0);
    /* default safety 0.875: 8 / 0.1 * 0.875 = 70 */
    c = parse_ok("{\"capacity\": {\"connections\": 8, \"serviceMs\": 100}}");
    assert_true(c.admit_per_second == 70.0);
    assert_true(c.cap_safety == 0.875);
    /* 1 / 3 s * 1 = 0.333.. */
    c = parse_ok("{\"capacity\": {\"connections\": 1, \"serviceMs\": 3000, \"safety\": 1}}");
    assert_true(c.admit_per_second == 1.0 / 3.0);
}

/* Runs a PUT that must fail, checks the field and that *out is untouched. */
static void expect_put_error(const char *text, const char *field_expected)
{
    json_t *j = load(text);
    wr_queue_config_t out, before;
    memset(&out, 0xA5, sizeof(out));
    memcpy(&before, &out, sizeof(out));
    char field[WR_FIELD_MAX] = "sentinel", msg[256] = "";
    wr_err_t err = wr_qconfig_parse(j, &out, field, sizeof(field), msg, sizeof(msg));
    if (err != WR_EINVAL || strcmp(field, field_expected) != 0)
        fail_msg("%s: expected field '%s', got err %d field '%s' msg '%s'", text, field_expected,
                 (int)err, field, msg);
    assert_true(msg[0] != '\0');
    assert_memory_equal(&out, &before, sizeof(out));
    json_decref(j);
}

static void test_put_errors(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *field;
    } cases[] = {
        {"[]", ""},
        {"\"x\"", ""},
        {"null", ""},
        {"{}", "admitPerSecond"},
        {"{\"enabled\": true}", "admitPerSecond"},
        {"{\"admitPerSecond\": 0}", "admitPerSecond"},
        {"{\"admitPerSecond\": -1}", "admitPerSecond"},
        {"{\"admitPerSecond\": 1000000.5}", "admitPerSecond"},
        {"{\"admitPerSecond\": \"175\"}", "admitPerSecond"},
        {"{\"admitPerSecond\": null}", "admitPerSecond"},
        {"{\"admitPerSecond\": 10, \"bogus\": 1}", "bogus"},
        {"{\"admitPerSecond\": 10, \"enabled\": 1}", "enabled"},
        {"{\"admitPerSecond\": 10, \"enabled\": \"true\"}", "enabled"},
        {"{\"admitPerSecond\": 10, \"paused\": 0}", "paused"},
        {"{\"capacity\": 5}", "capacity"},
        {"{\"capacity\": {\"serviceMs\": 200}}", "capacity.connections"},
        {"{\"capacity\": {\"connections\": 40}}", "capacity.serviceMs"},
        {"{\"capacity\": {\"connections\": 0, \"serviceMs\": 200}}", "capacity.connections"},
        {"{\"capacity\": {\"connections\": 1000001, \"serviceMs\": 200}}", "capacity.connections"},
        {"{\"capacity\": {\"connections\": 40.0, \"serviceMs\": 200}}", "capacity.connections"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 0}}", "capacity.serviceMs"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 3600001}}", "capacity.serviceMs"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"safety\": 0}}",
         "capacity.safety"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"safety\": 1.01}}",
         "capacity.safety"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"safety\": \"1\"}}",
         "capacity.safety"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"x\": 1}}", "capacity.x"},
        {"{\"capacity\": {\"connections\": 1000000, \"serviceMs\": 1, \"safety\": 1}}", "capacity"},
        {"{\"capacity\": null}", "admitPerSecond"},
        {"{\"admitPerSecond\": 1, \"tickMs\": 9}", "tickMs"},
        {"{\"admitPerSecond\": 1, \"tickMs\": 10001}", "tickMs"},
        {"{\"admitPerSecond\": 1, \"tickMs\": 100.0}", "tickMs"},
        {"{\"admitPerSecond\": 1, \"maxActive\": -1}", "maxActive"},
        {"{\"admitPerSecond\": 1, \"maxActive\": 1.5}", "maxActive"},
        {"{\"admitPerSecond\": 1, \"maxQueueSize\": -1}", "maxQueueSize"},
        {"{\"admitPerSecond\": 1, \"tokenTtlSeconds\": 0}", "tokenTtlSeconds"},
        {"{\"admitPerSecond\": 1, \"tokenTtlSeconds\": 86401}", "tokenTtlSeconds"},
        {"{\"admitPerSecond\": 1, \"pollBands\": []}", "pollBands"},
        {"{\"admitPerSecond\": 1, \"pollBands\": {}}", "pollBands"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"ms\":250},{\"ms\":250},{\"ms\":250},"
         "{\"ms\":250},{\"ms\":250},{\"ms\":250},{\"ms\":250},{\"ms\":250},{\"ms\":250}]}",
         "pollBands"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [5]}", "pollBands[0]"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10, \"ms\": 1000}, {\"ms\": 249}]}",
         "pollBands[1].ms"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10, \"ms\": 1000}, {\"ms\": "
         "600001}]}",
         "pollBands[1].ms"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10}]}", "pollBands[0].ms"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"ms\": 1000}, {\"ms\": 2000}]}",
         "pollBands[0].upTo"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 0, \"ms\": 1000}]}",
         "pollBands[0].upTo"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10, \"ms\": 1000},"
         " {\"upTo\": 10, \"ms\": 2000}, {\"ms\": 3000}]}",
         "pollBands[1].upTo"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10, \"ms\": 1000, \"x\": 1}]}",
         "pollBands[0].x"},
        {"{\"admitPerSecond\": 1, \"pollJitter\": -0.01}", "pollJitter"},
        {"{\"admitPerSecond\": 1, \"pollJitter\": 0.51}", "pollJitter"},
        {"{\"admitPerSecond\": 1, \"failPolicy\": \"Open\"}", "failPolicy"},
        {"{\"admitPerSecond\": 1, \"failPolicy\": 1}", "failPolicy"},
        {"{\"admitPerSecond\": 1, \"failOpenPerSecond\": -1}", "failOpenPerSecond"},
        {"{\"admitPerSecond\": 1, \"sessionSeconds\": -1}", "sessionSeconds"},
        {"{\"admitPerSecond\": 1, \"sessionSeconds\": 86401}", "sessionSeconds"},
        {"{\"admitPerSecond\": 1, \"sessionSeconds\": 1.5}", "sessionSeconds"},
        {"{\"admitPerSecond\": 1, \"sessionSeconds\": \"60\"}", "sessionSeconds"},
        {"{\"admitPerSecond\": 1, \"sessionSeconds\": null}", "sessionSeconds"},
        {"{\"admitPerSecond\": 1, \"failOpenPerSecond\": 1000001}", "failOpenPerSecond"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": 5}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"//evil.example/\"}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"/\\\\evil.example/\"}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"javascript:alert(1)\"}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"ftp://x\"}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"https://\"}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"/a b\"}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"/a\\nb\"}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"/a\\u0000b\"}", "targetUrl"},
        {"{\"admitPerSecond\": 1, \"targetUrl\": \"relative/path\"}", "targetUrl"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_put_error(cases[i].json, cases[i].field);
}

static void test_target_url_length(void **state)
{
    (void)state;
    char url[WR_TARGET_URL_MAX + 2];
    memset(url, 'a', sizeof(url));
    url[0] = '/';
    url[WR_TARGET_URL_MAX] = '\0'; /* 2048 bytes: accepted */
    json_t *j = json_pack("{s:i,s:s}", "admitPerSecond", 1, "targetUrl", url);
    wr_queue_config_t c;
    char field[WR_FIELD_MAX], msg[128];
    assert_int_equal(wr_qconfig_parse(j, &c, field, sizeof(field), msg, sizeof(msg)), WR_OK);
    assert_int_equal(strlen(c.target_url), WR_TARGET_URL_MAX);
    json_decref(j);
    url[WR_TARGET_URL_MAX] = 'a'; /* 2049 bytes: rejected */
    url[WR_TARGET_URL_MAX + 1] = '\0';
    j = json_pack("{s:i,s:s}", "admitPerSecond", 1, "targetUrl", url);
    assert_int_equal(wr_qconfig_parse(j, &c, field, sizeof(field), msg, sizeof(msg)), WR_EINVAL);
    assert_string_equal(field, "targetUrl");
    json_decref(j);

    c = parse_ok("{\"admitPerSecond\": 1, \"targetUrl\": \"https://shop.example/checkout\"}");
    assert_string_equal(c.target_url, "https://shop.example/checkout");
    c = parse_ok("{\"admitPerSecond\": 1, \"targetUrl\": \"http://h\"}");
    assert_string_equal(c.target_url, "http://h");
    c = parse_ok("{\"admitPerSecond\": 1, \"targetUrl\": \"/\"}");
    assert_string_equal(c.target_url, "/");
}

static void test_unknown_field_name_truncated(void **state)
{
    (void)state;
    char key[300];
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    json_t *j = json_pack("{s:i,s:i}", "admitPerSecond", 1, key, 1);
    wr_queue_config_t c;
    char field[WR_FIELD_MAX], msg[8]; /* a tiny msg buffer must not overflow */
    assert_int_equal(wr_qconfig_parse(j, &c, field, sizeof(field), msg, sizeof(msg)), WR_EINVAL);
    assert_int_equal(strlen(field), WR_FIELD_MAX - 1);
    assert_int_equal(strlen(msg), sizeof(msg) - 1);
    assert_int_equal(strspn(field, "k"), WR_FIELD_MAX - 1);
    json_decref(j);
}

static void roundtrip(const char *text)
{
    wr_queue_config_t a = parse_ok(text);
    json_t *j = wr_qconfig_to_json(&a);
    assert_non_null(j);
    wr_queue_config_t b;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    if (wr_qconfig_parse(j, &b, field, sizeof(field), msg, sizeof(msg)) != WR_OK)
        fail_msg("re-parse of %s failed: %s %s", text, field, msg);
    assert_cfg_eq(&a, &b);
    /* and through text, as a store or an HTTP reply would carry it */
    char *s = json_dumps(j, JSON_COMPACT);
    assert_non_null(s);
    json_t *j2 = load(s);
    wr_queue_config_t c;
    assert_int_equal(wr_qconfig_parse(j2, &c, field, sizeof(field), msg, sizeof(msg)), WR_OK);
    assert_cfg_eq(&a, &c);
    free(s);
    json_decref(j2);
    json_decref(j);
}

static void test_roundtrip(void **state)
{
    (void)state;
    roundtrip("{\"admitPerSecond\": 175}");
    roundtrip("{\"capacity\": {\"connections\": 40, \"serviceMs\": 200}}");
    roundtrip("{\"capacity\": {\"connections\": 7, \"serviceMs\": 333, \"safety\": 0.3}}");
    roundtrip(
        "{\"enabled\": false, \"paused\": true, \"admitPerSecond\": 33.3,"
        " \"tickMs\": 10, \"maxActive\": 9007199254740993, \"maxQueueSize\": 0,"
        " \"tokenTtlSeconds\": 1,"
        " \"pollBands\": [{\"upTo\": 1, \"ms\": 250}, {\"upTo\": 2, \"ms\": 251},"
        " {\"upTo\": 3, \"ms\": 252}, {\"upTo\": 4, \"ms\": 253}, {\"upTo\": 5, \"ms\": 254},"
        " {\"upTo\": 6, \"ms\": 255}, {\"upTo\": 7, \"ms\": 256}, {\"upTo\": 8, \"ms\": 257}],"
        " \"pollJitter\": 0.123456789, \"failPolicy\": \"open\","
        " \"failOpenPerSecond\": 0.1, \"targetUrl\": \"https://a.example/b?c=d&e=%20\"}");
    roundtrip("{\"admitPerSecond\": 0.001, \"failPolicy\": \"closed\", \"pollJitter\": 0}");
}

static void test_to_json_shape(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 175}");
    json_t *j = wr_qconfig_to_json(&c);
    assert_non_null(j);
    /* default precision (17) prints 0.1 as 0.10000000000000001; an HTTP
     * reply would use JSON_REAL_PRECISION(15) or so */
    char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(15));
    assert_string_equal(
        s, "{\"enabled\":true,\"paused\":false,\"admitPerSecond\":175,\"tickMs\":100,"
           "\"maxActive\":0,\"maxQueueSize\":100000,\"tokenTtlSeconds\":300,\"pollBands\":"
           "[{\"upTo\":100,\"ms\":1000},{\"upTo\":1000,\"ms\":3000},{\"ms\":5000}],"
           "\"pollJitter\":0.1,\"failPolicy\":\"limited\",\"failOpenPerSecond\":175,"
           "\"targetUrl\":\"\",\"inviteKey\":null,\"returnOrigins\":[],"
           "\"tokenInQuery\":false,\"sessionSeconds\":0,\"idleTimeoutSeconds\":120,"
           "\"awayHoldSeconds\":1800,\"pollMaxMs\":60000,"
           "\"opensAt\":null,\"preQueueShuffle\":true}");
    free(s);
    json_decref(j);

    c = parse_ok("{\"admitPerSecond\": 2.5, \"capacity\": {\"connections\": 40, \"serviceMs\": "
                 "200, \"safety\": 1}}");
    j = wr_qconfig_to_json(&c);
    assert_true(json_is_real(json_object_get(j, "admitPerSecond")));
    assert_true(json_real_value(json_object_get(j, "admitPerSecond")) == 2.5);
    json_t *cap = json_object_get(j, "capacity");
    assert_int_equal(json_integer_value(json_object_get(cap, "connections")), 40);
    assert_int_equal(json_integer_value(json_object_get(cap, "serviceMs")), 200);
    assert_true(json_is_integer(json_object_get(cap, "safety")));
    assert_int_equal(json_integer_value(json_object_get(cap, "safety")), 1);
    json_decref(j);
}

static void expect_patch_error(const wr_queue_config_t *base, const char *text,
                               const char *field_expected)
{
    json_t *j = load(text);
    wr_queue_config_t out = *base;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    assert_int_equal(wr_qconfig_patch(base, j, &out, field, sizeof(field), msg, sizeof(msg)),
                     WR_EINVAL);
    assert_string_equal(field, field_expected);
    assert_memory_equal(&out, base, sizeof(out));
    json_decref(j);
}

static wr_queue_config_t patch_ok(const wr_queue_config_t *base, const char *text)
{
    json_t *j = load(text);
    wr_queue_config_t out;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    if (wr_qconfig_patch(base, j, &out, field, sizeof(field), msg, sizeof(msg)) != WR_OK)
        fail_msg("patch %s failed: %s %s", text, field, msg);
    json_decref(j);
    return out;
}

static void test_patch(void **state)
{
    (void)state;
    wr_queue_config_t base =
        parse_ok("{\"capacity\": {\"connections\": 40, \"serviceMs\": 200}, \"maxActive\": 7,"
                 " \"targetUrl\": \"/x\"}");
    assert_true(base.admit_per_second == 175.0);

    wr_queue_config_t p = patch_ok(&base, "{\"enabled\": false}");
    assert_false(p.enabled);
    wr_queue_config_t expect = base;
    expect.enabled = false;
    assert_cfg_eq(&p, &expect);

    p = patch_ok(&base, "{}");
    assert_cfg_eq(&p, &base);

    p = patch_ok(&base, "{\"admitPerSecond\": 50}");
    assert_true(p.admit_per_second == 50.0);
    assert_true(p.has_capacity); /* capacity kept, rate given wins */
    assert_int_equal(p.max_active, 7);
    /* failOpenPerSecond was following the rate (175 = 175): it follows it */
    assert_true(p.fail_open_per_second == 50.0);
    /* ...but a value set on its own is kept */
    wr_queue_config_t own = patch_ok(&base, "{\"failOpenPerSecond\": 30}");
    assert_true(own.fail_open_per_second == 30.0);
    p = patch_ok(&own, "{\"admitPerSecond\": 60}");
    assert_true(p.fail_open_per_second == 30.0);
    /* a rate below 0.001/s is refused (ETAs would be absurd) */
    char tfield[WR_FIELD_MAX + 1], tmsg[256];
    json_t *tiny = json_loads("{\"admitPerSecond\": 1e-300}", 0, NULL);
    assert_int_equal(wr_qconfig_patch(&base, tiny, &p, tfield, sizeof(tfield), tmsg, sizeof(tmsg)),
                     WR_EINVAL);
    assert_string_equal(tfield, "admitPerSecond");
    json_decref(tiny);

    /* capacity without rate re-derives: 10 / 0.1 * 0.5 = 50 */
    p = patch_ok(&base, "{\"capacity\": {\"connections\": 10, \"serviceMs\": 100, \"safety\": "
                        "0.5}}");
    assert_true(p.admit_per_second == 50.0);
    assert_int_equal(p.cap_connections, 10);

    /* capacity with rate: rate as given */
    p = patch_ok(&base, "{\"admitPerSecond\": 3, \"capacity\": {\"connections\": 10, "
                        "\"serviceMs\": 100}}");
    assert_true(p.admit_per_second == 3.0);

    /* capacity null removes it, rate stays */
    p = patch_ok(&base, "{\"capacity\": null}");
    assert_false(p.has_capacity);
    assert_true(p.admit_per_second == 175.0);
    json_t *j = wr_qconfig_to_json(&p);
    assert_null(json_object_get(j, "capacity"));
    json_decref(j);

    /* pollBands replaced as a whole */
    p = patch_ok(&base, "{\"pollBands\": [{\"ms\": 700}]}");
    assert_int_equal(p.n_poll_bands, 1);
    assert_int_equal(p.poll_bands[0].ms, 700);
    assert_int_equal(p.poll_bands[0].up_to, 0);

    /* out may equal base */
    wr_queue_config_t same = base;
    j = load("{\"paused\": true, \"tickMs\": 50}");
    char field[WR_FIELD_MAX], msg[128];
    assert_int_equal(wr_qconfig_patch(&same, j, &same, field, sizeof(field), msg, sizeof(msg)),
                     WR_OK);
    assert_true(same.paused);
    assert_int_equal(same.tick_ms, 50);
    assert_true(same.admit_per_second == 175.0);
    json_decref(j);

    expect_patch_error(&base, "[1]", "");
    expect_patch_error(&base, "{\"paused\": \"yes\"}", "paused");
    expect_patch_error(&base, "{\"enabled\": false, \"nope\": 1}", "nope");
    expect_patch_error(&base, "{\"enabled\": false, \"tickMs\": 5}", "tickMs");
    expect_patch_error(&base, "{\"capacity\": {\"connections\": 1000000, \"serviceMs\": 1}}",
                       "capacity");
    expect_patch_error(&base, "{\"admitPerSecond\": 0}", "admitPerSecond");
    /* a patch on a base without a rate (defaults) must supply one */
    wr_queue_config_t empty;
    wr_qconfig_defaults(&empty);
    expect_patch_error(&empty, "{\"paused\": true}", "admitPerSecond");
}

/* sessionSeconds: 0..86400, default 0 (off); in and out of JSON, PUT and
 * PATCH alike. */
static void test_session_seconds(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_int_equal(c.session_seconds, 0);
    c = parse_ok("{\"admitPerSecond\": 1, \"sessionSeconds\": 86400}");
    assert_int_equal(c.session_seconds, 86400);
    c = parse_ok("{\"admitPerSecond\": 1, \"sessionSeconds\": 0}");
    assert_int_equal(c.session_seconds, 0);
    c = patch_ok(&c, "{\"sessionSeconds\": 900}");
    assert_int_equal(c.session_seconds, 900);
    assert_int_equal(c.admit_per_second, 1);
    json_t *j = wr_qconfig_to_json(&c);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "sessionSeconds")), 900);
    json_decref(j);
    expect_patch_error(&c, "{\"sessionSeconds\": 86401}", "sessionSeconds");
    expect_patch_error(&c, "{\"sessionSeconds\": true}", "sessionSeconds");
}

/* idleTimeoutSeconds: 0..86400, default 120 (0 = never); in and out of
 * JSON, PUT and PATCH alike. */
static void test_idle_timeout_seconds(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_int_equal(c.idle_timeout_seconds, 120);
    c = parse_ok("{\"admitPerSecond\": 1, \"idleTimeoutSeconds\": 86400}");
    assert_int_equal(c.idle_timeout_seconds, 86400);
    c = parse_ok("{\"admitPerSecond\": 1, \"idleTimeoutSeconds\": 0}");
    assert_int_equal(c.idle_timeout_seconds, 0);
    c = patch_ok(&c, "{\"idleTimeoutSeconds\": 2}");
    assert_int_equal(c.idle_timeout_seconds, 2);
    json_t *j = wr_qconfig_to_json(&c);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "idleTimeoutSeconds")), 2);
    json_decref(j);
    expect_patch_error(&c, "{\"idleTimeoutSeconds\": 86401}", "idleTimeoutSeconds");
    expect_patch_error(&c, "{\"idleTimeoutSeconds\": -1}", "idleTimeoutSeconds");
    expect_patch_error(&c, "{\"idleTimeoutSeconds\": 1.5}", "idleTimeoutSeconds");
    expect_patch_error(&c, "{\"idleTimeoutSeconds\": null}", "idleTimeoutSeconds");
}

/* 1.2: awayHoldSeconds 0..86400 (default 1800) and pollMaxMs 0 or
 * 1000..600000 (default 60000); in and out of JSON, PUT and PATCH alike. */
static void test_away_hold_and_poll_max(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_int_equal(c.away_hold_seconds, 1800);
    assert_int_equal(c.poll_max_ms, 60000);
    c = parse_ok("{\"admitPerSecond\": 1, \"awayHoldSeconds\": 0, \"pollMaxMs\": 0}");
    assert_int_equal(c.away_hold_seconds, 0);
    assert_int_equal(c.poll_max_ms, 0);
    c = patch_ok(&c, "{\"awayHoldSeconds\": 86400, \"pollMaxMs\": 1000}");
    assert_int_equal(c.away_hold_seconds, 86400);
    assert_int_equal(c.poll_max_ms, 1000);
    c = patch_ok(&c, "{\"pollMaxMs\": 600000}");
    assert_int_equal(c.poll_max_ms, 600000);
    json_t *j = wr_qconfig_to_json(&c);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "awayHoldSeconds")), 86400);
    assert_int_equal(json_integer_value(json_object_get(j, "pollMaxMs")), 600000);
    json_decref(j);
    static const char *const bad_hold[] = {"86401", "-1", "1.5", "null", "\"60\"", "true"};
    static const char *const bad_poll[] = {"1",      "999",  "600001",    "-1",
                                           "1500.5", "null", "\"60000\"", "false"};
    char b[96];
    for (size_t i = 0; i < sizeof bad_hold / sizeof bad_hold[0]; i++) {
        snprintf(b, sizeof b, "{\"awayHoldSeconds\": %s}", bad_hold[i]);
        expect_patch_error(&c, b, "awayHoldSeconds");
    }
    for (size_t i = 0; i < sizeof bad_poll / sizeof bad_poll[0]; i++) {
        snprintf(b, sizeof b, "{\"pollMaxMs\": %s}", bad_poll[i]);
        expect_patch_error(&c, b, "pollMaxMs");
    }
}

/* Sale opening: opensAt (epoch ms or null) and preQueueShuffle. */
static void test_opens_at(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_int_equal(c.opens_at_ms, WR_OPENS_AT_NONE);
    assert_true(c.pre_queue_shuffle);
    c = parse_ok("{\"admitPerSecond\": 1, \"opensAt\": 1764460800000, \"preQueueShuffle\": false}");
    assert_int_equal(c.opens_at_ms, 1764460800000LL);
    assert_false(c.pre_queue_shuffle);
    json_t *j = wr_qconfig_to_json(&c);
    assert_int_equal(json_integer_value(json_object_get(j, "opensAt")), 1764460800000LL);
    assert_true(json_is_false(json_object_get(j, "preQueueShuffle")));
    json_decref(j);
    c = patch_ok(&c, "{\"opensAt\": null}");
    assert_int_equal(c.opens_at_ms, WR_OPENS_AT_NONE);
    assert_false(c.pre_queue_shuffle);
    j = wr_qconfig_to_json(&c);
    assert_true(json_is_null(json_object_get(j, "opensAt")));
    json_decref(j);
    c = patch_ok(&c, "{\"opensAt\": 0}");
    assert_int_equal(c.opens_at_ms, 0);
    roundtrip("{\"admitPerSecond\": 1, \"opensAt\": 1764460800123}");
    expect_patch_error(&c, "{\"opensAt\": -1}", "opensAt");
    expect_patch_error(&c, "{\"opensAt\": 1.5}", "opensAt");
    expect_patch_error(&c, "{\"opensAt\": \"soon\"}", "opensAt");
    expect_patch_error(&c, "{\"preQueueShuffle\": 1}", "preQueueShuffle");
}

static void test_fail_policy_names(void **state)
{
    (void)state;
    assert_string_equal(wr_qconfig_fail_policy_name(WR_FAIL_CLOSED), "closed");
    assert_string_equal(wr_qconfig_fail_policy_name(WR_FAIL_OPEN), "open");
    assert_string_equal(wr_qconfig_fail_policy_name(WR_FAIL_LIMITED), "limited");
}

#define KEY32 "0123456789abcdef0123456789abcdef"

/* Version 1.1: inviteKey (write-only), returnOrigins, tokenInQuery. */
static void test_invite_return_fields(void **state)
{
    (void)state;
    wr_queue_config_t d = parse_ok("{\"admitPerSecond\": 1}");
    assert_int_equal(d.invite_key_len, 0);
    assert_int_equal(d.n_return_origins, 0);
    assert_false(d.token_in_query);

    wr_queue_config_t c =
        parse_ok("{\"admitPerSecond\": 1, \"inviteKey\": \"" KEY32 "\", \"tokenInQuery\": true,"
                 " \"returnOrigins\": [\"https://shop.example\", \"HTTP://Cart.Example:8080\","
                 " \"https://SHOP.example:443\", \"http://[::1]:3000\", \"http://a.example:80\"]}");
    assert_int_equal(c.invite_key_len, 32);
    assert_memory_equal(c.invite_key, KEY32, 32);
    assert_true(c.token_in_query);
    assert_int_equal(c.n_return_origins, 5);
    assert_string_equal(c.return_origins[0], "https://shop.example");
    assert_string_equal(c.return_origins[1], "http://cart.example:8080");
    assert_string_equal(c.return_origins[2], "https://shop.example");
    assert_string_equal(c.return_origins[3], "http://[::1]:3000");
    assert_string_equal(c.return_origins[4], "http://a.example");

    /* write-only: the public rendering says "set", the stored one keeps it */
    json_t *pub = wr_qconfig_to_public_json(&c);
    assert_string_equal(json_string_value(json_object_get(pub, "inviteKey")), "set");
    assert_true(json_is_true(json_object_get(pub, "tokenInQuery")));
    assert_int_equal(json_array_size(json_object_get(pub, "returnOrigins")), 5);
    char *dump = json_dumps(pub, JSON_COMPACT);
    assert_null(strstr(dump, KEY32));
    free(dump);
    json_decref(pub);
    json_t *full = wr_qconfig_to_json(&c);
    assert_string_equal(json_string_value(json_object_get(full, "inviteKey")), KEY32);
    json_decref(full);
    pub = wr_qconfig_to_public_json(&d);
    assert_true(json_is_null(json_object_get(pub, "inviteKey")));
    json_decref(pub);
    roundtrip("{\"admitPerSecond\": 1, \"inviteKey\": \"" KEY32 "x\", \"tokenInQuery\": true,"
              " \"returnOrigins\": [\"https://shop.example\"]}");

    /* PATCH: "set" keeps the key, null removes it, a new key replaces it */
    wr_queue_config_t p = patch_ok(&c, "{\"inviteKey\": \"set\", \"paused\": true}");
    assert_int_equal(p.invite_key_len, 32);
    p = patch_ok(&c, "{\"inviteKey\": null, \"returnOrigins\": []}");
    assert_int_equal(p.invite_key_len, 0);
    assert_int_equal(p.n_return_origins, 0);
    p = patch_ok(&d, "{\"inviteKey\": \"" KEY32 "KEY\"}");
    assert_int_equal(p.invite_key_len, 35);
    expect_patch_error(&d, "{\"inviteKey\": \"set\"}", "inviteKey");

    static const char *const bad_key[] = {
        "{\"admitPerSecond\": 1, \"inviteKey\": \"short\"}",
        "{\"admitPerSecond\": 1, \"inviteKey\": \"0123456789abcdef0123456789abcde\"}",
        "{\"admitPerSecond\": 1, \"inviteKey\": \"set\"}",
        "{\"admitPerSecond\": 1, \"inviteKey\": 123456789}",
        "{\"admitPerSecond\": 1, \"inviteKey\": true}",
        "{\"admitPerSecond\": 1, \"inviteKey\": \"0123456789abcdef\\u00000123456789abcdef\"}",
    };
    for (size_t i = 0; i < sizeof(bad_key) / sizeof(bad_key[0]); i++)
        expect_put_error(bad_key[i], "inviteKey");
    char big[400];
    snprintf(big, sizeof(big), "{\"admitPerSecond\": 1, \"inviteKey\": \"%0257d\"}", 0);
    expect_put_error(big, "inviteKey");

    static const char *const bad_origins[] = {
        "\"https://shop.example\"",
        "[\"https://shop.example/\"]",
        "[\"https://shop.example/path\"]",
        "[\"https://shop.example?x\"]",
        "[\"shop.example\"]",
        "[\"//shop.example\"]",
        "[\"ftp://shop.example\"]",
        "[\"javascript://shop.example\"]",
        "[\"https://user@shop.example\"]",
        "[\"https://shop.example:0\"]",
        "[\"https://shop.example:65536\"]",
        "[\"https://shop.example:\"]",
        "[\"https://shop.example.\"]",
        "[\"https://\"]",
        "[\"https://sh op.example\"]",
        "[\"https://shop%2eexample\"]",
        "[\"https://shop.example\\\\\"]",
        "[1]",
        "[null]",
        "null",
    };
    for (size_t i = 0; i < sizeof(bad_origins) / sizeof(bad_origins[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text), "{\"admitPerSecond\": 1, \"returnOrigins\": %s}",
                 bad_origins[i]);
        expect_put_error(text, "returnOrigins");
    }
    char many[2048] = "{\"admitPerSecond\": 1, \"returnOrigins\": [";
    for (int i = 0; i <= WR_RETURN_ORIGINS_MAX; i++) {
        char one[64];
        snprintf(one, sizeof(one), "%s\"https://s%d.example\"", i ? "," : "", i);
        strcat(many, one);
    }
    strcat(many, "]}");
    expect_put_error(many, "returnOrigins");
    expect_put_error("{\"admitPerSecond\": 1, \"tokenInQuery\": \"yes\"}", "tokenInQuery");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_full_config),
        cmocka_unit_test(test_derived_rate),
        cmocka_unit_test(test_put_errors),
        cmocka_unit_test(test_target_url_length),
        cmocka_unit_test(test_unknown_field_name_truncated),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_to_json_shape),
        cmocka_unit_test(test_patch),
        cmocka_unit_test(test_fail_policy_names),
        cmocka_unit_test(test_invite_return_fields),
        cmocka_unit_test(test_session_seconds),
        cmocka_unit_test(test_idle_timeout_seconds),
        cmocka_unit_test(test_away_hold_and_poll_max),
        cmocka_unit_test(test_opens_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
