/*
 * test_bypass.c - bypass rules (core/bypass.h): the config value's parsing
 * (every refusal names the field "bypass" and its message the member), the
 * write-only secret ("set" kept from the current rule of that name), the
 * rendering, and matching: paths (exact, prefix, and the unsafe forms that
 * never match), IPv4 and IPv6 prefixes, header secrets (exact only), the
 * rules' order and path rules only where paths apply. The qconfig row is
 * tests/unit/core/test_qconfig.c's table tests (the example).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/bypass.h"
#include "unit_main.h"

#define SECRET "0123456789abcdef0123456789abcdef" /* 32 bytes */

static wr_err_t parse(const char *text, wr_bypass_config_t *c, char *msg, size_t msg_len)
{
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (!j)
        fail_msg("bad JSON in test: %s: %s", text, jerr.text);
    char field[64] = "";
    char m[256] = "";
    wr_err_t err = wr_bypass_parse(j, c, field, sizeof field, m, sizeof m);
    json_decref(j);
    if (err != WR_OK)
        assert_string_equal(field, "bypass");
    if (msg)
        snprintf(msg, msg_len, "%s", m);
    return err;
}

static wr_bypass_config_t parse_ok(const char *text)
{
    wr_bypass_config_t c;
    memset(&c, 0, sizeof c);
    char msg[256];
    if (parse(text, &c, msg, sizeof msg) != WR_OK)
        fail_msg("%s: %s", text, msg);
    return c;
}

static void test_parse_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *json, *member; /* the member the message names */
    } bad[] = {
        {"true", "bypass must be"},
        {"{}", "bypass must be"},
        {"[1]", "bypass[0] must be an object"},
        {"[{\"name\":\"a\"}]", "bypass[0] must have exactly one"},
        {"[{\"name\":\"a\",\"cidr\":\"10.0.0.0/8\",\"path\":\"/x\"}]", "bypass[0] must have"},
        {"[{\"name\":\"a\",\"header\":\"X-A\",\"secret\":\"" SECRET "\",\"path\":\"/x\"}]",
         "bypass[0] must have"},
        {"[{\"name\":\"A\",\"path\":\"/x\"}]", "bypass[0].name"},
        {"[{\"name\":\"\",\"path\":\"/x\"}]", "bypass[0].name"},
        {"[{\"name\":\"a_b\",\"path\":\"/x\"}]", "bypass[0].name"},
        {"[{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"path\":\"/x\"}]", "bypass[0].name"},
        {"[{\"path\":\"/x\"}]", "bypass[0].name"},
        {"[{\"name\":\"a\",\"path\":\"/x\",\"other\":1}]", "bypass[0] may have only"},
        {"[{\"name\":\"a\",\"path\":\"/x\"},{\"name\":\"a\",\"path\":\"/y\"}]", "bypass[1].name"},
        /* header + secret */
        {"[{\"name\":\"a\",\"header\":\"X-A\"}]", "bypass[0].secret is required"},
        {"[{\"name\":\"a\",\"secret\":\"" SECRET "\"}]", "bypass[0].header is required"},
        {"[{\"name\":\"a\",\"header\":\"X-A\",\"secret\":\"0123456789abcdef0123456789abcde\"}]",
         "bypass[0].secret"},
        {"[{\"name\":\"a\",\"header\":\"X-A\",\"secret\":5}]", "bypass[0].secret"},
        {"[{\"name\":\"a\",\"header\":\"X-A\",\"secret\":\"0123456789abcdef 123456789abcdef0\"}]",
         "bypass[0].secret"},
        {"[{\"name\":\"a\",\"header\":\"X A\",\"secret\":\"" SECRET "\"}]", "bypass[0].header"},
        {"[{\"name\":\"a\",\"header\":\"\",\"secret\":\"" SECRET "\"}]", "bypass[0].header"},
        {"[{\"name\":\"a\",\"header\":\"X:A\",\"secret\":\"" SECRET "\"}]", "bypass[0].header"},
        {"[{\"name\":\"a\",\"header\":\"X-A\",\"secret\":\"set\"}]", "bypass[0].secret is \"set\""},
        /* cidr */
        {"[{\"name\":\"a\",\"cidr\":\"10.0.0.0/33\"}]", "bypass[0].cidr"},
        {"[{\"name\":\"a\",\"cidr\":\"10.0.0/8\"}]", "bypass[0].cidr"},
        {"[{\"name\":\"a\",\"cidr\":\"10.0.0.0/8,11.0.0.0/8\"}]", "bypass[0].cidr"},
        {"[{\"name\":\"a\",\"cidr\":\" 10.0.0.0/8\"}]", "bypass[0].cidr"},
        {"[{\"name\":\"a\",\"cidr\":\"::1/129\"}]", "bypass[0].cidr"},
        {"[{\"name\":\"a\",\"cidr\":\"\"}]", "bypass[0].cidr"},
        {"[{\"name\":\"a\",\"cidr\":\"shop.example\"}]", "bypass[0].cidr"},
        /* path */
        {"[{\"name\":\"a\",\"path\":\"x\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a/../b\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a//b\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a/./b\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a%2Fb\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a%zz\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a*\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a/*/b\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a?x=1\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a\\\\b\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":\"/a b\"}]", "bypass[0].path"},
        {"[{\"name\":\"a\",\"path\":5}]", "bypass[0].path"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wr_bypass_config_t c = parse_ok("[{\"name\":\"keep\",\"path\":\"/k\"}]");
        wr_bypass_config_t before = c;
        char msg[256];
        if (parse(bad[i].json, &c, msg, sizeof msg) != WR_EINVAL)
            fail_msg("accepted: %s", bad[i].json);
        if (!strstr(msg, bad[i].member))
            fail_msg("%s: message %s does not name %s", bad[i].json, msg, bad[i].member);
        assert_memory_equal(&c, &before, sizeof c); /* refused: untouched */
    }
    /* 33 rules is one too many; 32 is fine */
    char text[32 * 48 + 16] = "[";
    for (int i = 0; i < 33; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "%s{\"name\":\"r%d\",\"path\":\"/x\"}", i ? "," : "", i);
    char last[48];
    snprintf(last, sizeof last, ",{\"name\":\"r32\",\"path\":\"/x\"}");
    wr_bypass_config_t c;
    memset(&c, 0, sizeof c);
    strcat(text, "]");
    assert_int_equal(parse(text, &c, NULL, 0), WR_EINVAL);
    *strstr(text, last) = '\0';
    strcat(text, "]");
    c = parse_ok(text);
    assert_int_equal(c.n, 32);
}

static void test_parse_render(void **state)
{
    (void)state;
    const char *text =
        "[{\"name\":\"staff\",\"header\":\"X-Staff\",\"secret\":\"" SECRET "\"},"
        "{\"name\":\"office\",\"cidr\":\"10.1.0.0/16\"},{\"name\":\"v6\",\"cidr\":\"2001:db8::/"
        "32\"},"
        "{\"name\":\"health\",\"path\":\"/healthz\"},{\"name\":\"static\",\"path\":\"/static/*\"},"
        "{\"name\":\"all\",\"path\":\"/*\"}]";
    wr_bypass_config_t c = parse_ok(text);
    assert_true(c.set);
    assert_int_equal(c.n, 6);
    assert_int_equal(c.rules[0].kind, WR_BYPASS_HEADER);
    assert_string_equal(c.rules[0].header, "X-Staff");
    assert_int_equal(c.rules[0].value_len, 32);
    assert_int_equal(c.rules[1].kind, WR_BYPASS_CIDR);
    assert_int_equal(c.rules[3].kind, WR_BYPASS_PATH);
    assert_false(c.rules[3].prefix_path);
    assert_true(c.rules[4].prefix_path);
    /* the stores' form reads back to the same rules */
    json_t *j = wr_bypass_to_json(&c, true);
    char *dump = json_dumps(j, JSON_COMPACT);
    assert_string_equal(dump, text);
    free(dump);
    json_decref(j);
    /* the API's: the secret is "set" */
    j = wr_bypass_to_json(&c, false);
    assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "secret")), "set");
    assert_string_equal(json_string_value(json_object_get(json_array_get(j, 1), "cidr")),
                        "10.1.0.0/16");
    json_decref(j);
    /* "set" sent back keeps the secret of the rule of that name */
    wr_bypass_config_t d = c;
    assert_int_equal(parse("[{\"name\":\"office\",\"cidr\":\"10.1.0.0/16\"},"
                           "{\"name\":\"staff\",\"header\":\"X-Other\",\"secret\":\"set\"}]",
                           &d, NULL, 0),
                     WR_OK);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.rules[1].value, SECRET);
    assert_string_equal(d.rules[1].header, "X-Other");
    /* ... but not for another name */
    d = c;
    assert_int_equal(
        parse("[{\"name\":\"boss\",\"header\":\"X-Staff\",\"secret\":\"set\"}]", &d, NULL, 0),
        WR_EINVAL);
    /* null removes every rule; [] is no rule */
    d = parse_ok("null");
    assert_false(d.set);
    j = wr_bypass_to_json(&d, false);
    assert_true(json_is_null(j));
    json_decref(j);
    d = parse_ok("[]");
    assert_true(d.set);
    assert_int_equal(d.n, 0);
}

/* ---- matching ---- */

typedef struct {
    const char *name, *value;
} hdr_t;

static const char *lookup(void *ctx, const char *name)
{
    for (const hdr_t *h = ctx; h && h->name; h++)
        if (strcasecmp(h->name, name) == 0)
            return h->value;
    return NULL;
}

static const char *match_name(const wr_bypass_config_t *c, const hdr_t *hdrs, const char *client,
                              const char *uri, bool paths)
{
    wr_bypass_request_t req = {lookup, (void *)hdrs, client, uri, paths};
    const wr_bypass_rule_t *r = wr_bypass_match(c, &req);
    return r ? r->name : "";
}

static void test_paths(void **state)
{
    (void)state;
    static const struct {
        const char *rule, *uri;
        bool match;
    } rows[] = {
        {"/healthz", "/healthz", true},
        {"/healthz", "/healthz?x=1", true},
        {"/healthz", "/healthz#f", true},
        {"/healthz", "/healthz/", false},
        {"/healthz", "/healthz2", false},
        {"/healthz", "/Healthz", false},
        {"/healthz", "/HEALTHZ", false},
        {"/healthz", "healthz", false},
        {"/healthz", "", false},
        {"/healthz", "http://shop.example/healthz", false},
        {"/p/*", "/p/", true},
        {"/p/*", "/p/a", true},
        {"/p/*", "/p/a/b?c=d", true},
        {"/p/*", "/p", false},
        {"/p/*", "/p?x=/p/", false},
        {"/p/*", "/pa/", false},
        {"/p/*", "/P/a", false},
        /* unsafe forms never match */
        {"/p/*", "/p/../admin", false},
        {"/p/*", "/p/./a", false},
        {"/p/*", "/p/a/..", false},
        {"/p/*", "/p/a/.", false},
        {"/p/*", "/p//a", false},
        {"/p/*", "//p/a", false},
        {"/p/*", "/p/%2e%2e/admin", false},
        {"/p/*", "/p/%2E%2E/admin", false},
        {"/p/*", "/p/a%2Fb", false},
        {"/p/*", "/p/a%2fb", false},
        {"/p/*", "/p/a%5Cb", false},
        {"/p/*", "/p/a%5cb", false},
        {"/p/*", "/p/a%00", false},
        {"/p/*", "/p/a\\b", false},
        {"/p/*", "/p/a b", false},
        {"/p/*", "/p/\x01", false},
        {"/p/*", "/p/..;/admin", true}, /* "..;" is a segment name, not ".." */
        {"/p/*", "/p/.well-known", true},
        {"/p/*", "/p/a%41", true}, /* other escapes are bytes compared as they are */
        {"/a%41", "/aA", false},
        {"/a%41", "/a%41", true},
        {"/*", "/anything/at/all", true},
        {"/*", "/", true},
        {"/*", "/../x", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "[{\"name\":\"p\",\"path\":\"%s\"}]", rows[i].rule);
        wr_bypass_config_t c = parse_ok(text);
        if (wr_bypass_path_matches(&c.rules[0], rows[i].uri) != rows[i].match)
            fail_msg("rule %s, uri %s: expected %s", rows[i].rule, rows[i].uri,
                     rows[i].match ? "a match" : "no match");
        /* through wr_bypass_match: only where paths apply */
        assert_string_equal(match_name(&c, NULL, NULL, rows[i].uri, true),
                            rows[i].match ? "p" : "");
        assert_string_equal(match_name(&c, NULL, NULL, rows[i].uri, false), "");
    }
    wr_bypass_config_t c = parse_ok("[{\"name\":\"p\",\"path\":\"/p/*\"}]");
    assert_false(wr_bypass_path_matches(&c.rules[0], NULL));
    assert_string_equal(match_name(&c, NULL, NULL, NULL, true), "");
}

static void test_cidrs(void **state)
{
    (void)state;
    static const struct {
        const char *cidr, *client;
        bool match;
    } rows[] = {
        {"10.1.0.0/16", "10.1.2.3", true},
        {"10.1.0.0/16", "10.2.0.1", false},
        {"10.1.0.0/16", "::ffff:10.1.2.3", true},
        {"10.1.0.0/16", "not an address", false},
        {"10.1.0.0/16", "", false},
        {"192.0.2.7", "192.0.2.7", true},
        {"192.0.2.7", "192.0.2.8", false},
        {"192.0.2.7/32", "192.0.2.7", true},
        {"0.0.0.0/0", "203.0.113.9", true},
        {"2001:db8::/32", "2001:db8:1::5", true},
        {"2001:db8::/32", "2001:db9::5", false},
        {"2001:db8::/32", "10.1.2.3", false},
        {"::1/128", "::1", true},
        {"::1", "::2", false},
        {"fe80::/10", "febf::1", true},
        {"fe80::/10", "fec0::1", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "[{\"name\":\"c\",\"cidr\":\"%s\"}]", rows[i].cidr);
        wr_bypass_config_t c = parse_ok(text);
        if (strcmp(match_name(&c, NULL, rows[i].client, NULL, false), rows[i].match ? "c" : ""))
            fail_msg("cidr %s, client %s: expected %s", rows[i].cidr, rows[i].client,
                     rows[i].match ? "a match" : "no match");
    }
    wr_bypass_config_t c = parse_ok("[{\"name\":\"c\",\"cidr\":\"10.0.0.0/8\"}]");
    assert_string_equal(match_name(&c, NULL, NULL, NULL, true), ""); /* no client address */
}

static void test_headers(void **state)
{
    (void)state;
    wr_bypass_config_t c =
        parse_ok("[{\"name\":\"staff\",\"header\":\"X-Staff\",\"secret\":\"" SECRET "\"}]");
    static const struct {
        const char *name, *value;
        bool match;
    } rows[] = {
        {"X-Staff", SECRET, true},
        {"x-staff", SECRET, true}, /* field names have no case */
        {"X-Staff", "0123456789ABCDEF0123456789abcdef", false},
        {"X-Staff", "0123456789abcdef0123456789abcde", false},   /* a prefix */
        {"X-Staff", "0123456789abcdef0123456789abcdef0", false}, /* longer */
        {"X-Staff", "", false},
        {"X-Staff", "set", false},
        {"X-Other", SECRET, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        hdr_t h[] = {{rows[i].name, rows[i].value}, {NULL, NULL}};
        if (strcmp(match_name(&c, h, "10.0.0.1", "/x", true), rows[i].match ? "staff" : ""))
            fail_msg("%s: %s: expected %s", rows[i].name, rows[i].value,
                     rows[i].match ? "a match" : "no match");
    }
    assert_string_equal(match_name(&c, NULL, "10.0.0.1", "/x", true), "");
}

static void test_order(void **state)
{
    (void)state;
    wr_bypass_config_t c =
        parse_ok("[{\"name\":\"health\",\"path\":\"/"
                 "healthz\"},{\"name\":\"office\",\"cidr\":\"10.0.0.0/8\"},"
                 "{\"name\":\"staff\",\"header\":\"X-Staff\",\"secret\":\"" SECRET "\"}]");
    hdr_t h[] = {{"X-Staff", SECRET}, {NULL, NULL}};
    assert_string_equal(match_name(&c, h, "10.0.0.1", "/healthz", true), "health");
    assert_string_equal(match_name(&c, h, "10.0.0.1", "/healthz", false), "office");
    assert_string_equal(match_name(&c, h, "192.0.2.1", "/healthz", false), "staff");
    assert_string_equal(match_name(&c, NULL, "192.0.2.1", "/x", true), "");
    wr_bypass_config_t none;
    memset(&none, 0, sizeof none);
    assert_string_equal(match_name(&none, h, "10.0.0.1", "/healthz", true), "");
    assert_null(wr_bypass_match(NULL, NULL));
}

static void test_names(void **state)
{
    (void)state;
    assert_true(wr_bypass_valid_name("a", 1));
    assert_true(wr_bypass_valid_name("staff-2", 7));
    assert_true(wr_bypass_valid_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 32));
    assert_false(wr_bypass_valid_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 33));
    assert_false(wr_bypass_valid_name("", 0));
    assert_false(wr_bypass_valid_name("Staff", 5));
    assert_false(wr_bypass_valid_name("a b", 3));
    assert_false(wr_bypass_valid_name("a\0b", 3));
    assert_false(wr_bypass_valid_name(NULL, 0));
}

#define TESTS(X)                                                                                   \
    X(test_parse_refusals)                                                                         \
    X(test_parse_render)                                                                           \
    X(test_paths)                                                                                  \
    X(test_cidrs)                                                                                  \
    X(test_headers)                                                                                \
    X(test_order)                                                                                  \
    X(test_names)
WR_UNIT_MAIN(NULL, NULL, TESTS)
