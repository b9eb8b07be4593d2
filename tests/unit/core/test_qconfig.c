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

#include "base/embed.h"
#include "core/qconfig.h"
#include "unit_main.h"

static json_t *load(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!j)
        fail_msg("bad test JSON: %s (%s)", text, jerr.text);
    return j;
}

/* The notice's text as a visitor without a language reads it; "" for none. */
static const char *notice_of(const wr_queue_config_t *c)
{
    const char *s = wr_notice_pick(&c->notice, NULL);
    return s ? s : "";
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

/* The text of key's value in o, as the stores would keep it (compact, in
 * the order rendered); "(left out)" when o has no key. Caller frees. */
static char *member_text(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("(left out)");
    assert_non_null(s);
    return s;
}

/* The fields of a and b as wr_qconfig_to_json renders them (secrets and
 * all), row by row: equal texts, else a failure naming the field. */
static void assert_rendered_eq(const wr_queue_config_t *a, const wr_queue_config_t *b,
                               const char *what)
{
    json_t *ja = wr_qconfig_to_json(a), *jb = wr_qconfig_to_json(b);
    assert_non_null(ja);
    assert_non_null(jb);
    for (size_t i = 0; i < wr_qconfig_n_fields; i++) {
        const char *key = wr_qconfig_fields[i].key;
        char *sa = member_text(ja, key), *sb = member_text(jb, key);
        if (strcmp(sa, sb) != 0)
            fail_msg("%s%s: %s != %s", what, key, sa, sb);
        free(sa);
        free(sb);
    }
    json_decref(ja);
    json_decref(jb);
}

/*
 * a and b hold the same config: every row of wr_qconfig_fields renders
 * alike (wr_qconfig_to_json: inviteKey, captcha's and bypass's secrets
 * included; objects in their order, so a notice's languages too), and the
 * members of the rows that are not CUSTOM or STRING have the same bytes
 * (a STRING's bytes past its NUL are not the value; its rendering is).
 * What the rendering leaves out is compared too: the members of page,
 * captcha, autotune, draw and bypass while they are null (rendered as if
 * set: a null leaves them zero), and the unused group names (all zeros,
 * qconfig.h). Not compared: the capacity members without capacity, bands
 * past n_poll_bands, and what is not a field (stock_set, sold_out,
 * bypass.any_secret).
 */
static void assert_cfg_eq(const wr_queue_config_t *a, const wr_queue_config_t *b)
{
    assert_rendered_eq(a, b, "");
    for (size_t i = 0; i < wr_qconfig_n_fields; i++) {
        const wr_qfield_t *f = &wr_qconfig_fields[i];
        if (f->kind != WR_QF_CUSTOM && f->kind != WR_QF_STRING &&
            memcmp((const char *)a + f->off, (const char *)b + f->off, f->size) != 0)
            fail_msg("%s: the members' bytes differ", f->key);
    }
    wr_queue_config_t sa = *a, sb = *b;
    sa.page.set = sa.captcha.set = sa.has_autotune = sa.draw.set = sa.bypass.set = true;
    sb.page.set = sb.captcha.set = sb.has_autotune = sb.draw.set = sb.bypass.set = true;
    assert_rendered_eq(&sa, &sb, "(the null objects set) ");
    assert_memory_equal(a->groups, b->groups, sizeof(a->groups));
}

/* The documented defaults (docs/API.md, "Queue config"), written by hand:
 * every member the table does not leave zero, unused bytes zero. */
static wr_queue_config_t documented_defaults(void)
{
    wr_queue_config_t fresh;
    memset(&fresh, 0, sizeof(fresh));
    fresh.enabled = true;
    fresh.cap_safety = 0.875;
    fresh.tick_ms = 100;
    fresh.max_queue_size = 100000;
    fresh.token_ttl_seconds = 300;
    fresh.poll_bands[0] = (wr_poll_band_t){.up_to = 100, .ms = 1000};
    fresh.poll_bands[1] = (wr_poll_band_t){.up_to = 1000, .ms = 3000};
    fresh.poll_bands[2] = (wr_poll_band_t){.up_to = 0, .ms = 5000};
    fresh.n_poll_bands = 3;
    fresh.poll_jitter = 0.1;
    fresh.fail_policy = WR_FAIL_LIMITED;
    fresh.idle_timeout_seconds = 120;
    fresh.away_hold_seconds = 1800;
    fresh.poll_max_ms = 60000;
    fresh.opens_at_ms = WR_OPENS_AT_NONE;
    fresh.pre_queue_shuffle = true;
    fresh.stock = WR_STOCK_NONE;
    fresh.standard_share = 0.2;
    return fresh;
}

static void test_defaults(void **state)
{
    (void)state;
    /* a PUT of the rate alone: the documented defaults, the rate, and
     * failOpenPerSecond following it */
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 175}");
    wr_queue_config_t want = documented_defaults();
    want.admit_per_second = 175.0;
    want.fail_open_per_second = 175.0;
    assert_cfg_eq(&c, &want);
    assert_false(c.has_capacity);
    assert_string_equal(c.target_url, "");

    wr_queue_config_t d;
    wr_qconfig_defaults(&d);
    assert_true(d.admit_per_second == 0);
    assert_true(d.enabled);
    assert_int_equal(d.n_poll_bands, 3);
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

/* A PUT of {"admitPerSecond": 1, "<member>": value} that must fail
 * naming field (expect_put_error). */
static void member_bad(const char *member, const char *value, const char *field)
{
    char text[8400]; /* the callers' values: up to 8200 bytes */
    snprintf(text, sizeof(text), "{\"admitPerSecond\": 1, \"%s\": %s}", member, value);
    expect_put_error(text, field);
}

/* The field a config with this captcha object names (and that the parse
 * fails). */
static void captcha_bad(const char *captcha, const char *field)
{
    member_bad("captcha", captcha, field);
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

/* A PATCH of {"<member>": value} for each of values (NULL-terminated) is
 * refused naming member, and changes nothing (expect_patch_error). */
static void patch_refused(const wr_queue_config_t *base, const char *member,
                          const char *const *values)
{
    char text[256];
    for (size_t i = 0; values[i]; i++) {
        snprintf(text, sizeof text, "{\"%s\": %s}", member, values[i]);
        expect_patch_error(base, text, member);
    }
}

/* text, a PATCH body, passes the field check made before the store is
 * read. */
static void fields_ok(const char *text)
{
    json_t *j = load(text);
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    if (wr_qconfig_check_fields(j, field, sizeof field, msg, sizeof msg) != WR_OK)
        fail_msg("field check of %s failed: %s %s", text, field, msg);
    json_decref(j);
}

/* Parses text as a store's copy (wr_qconfig_parse_stored); asserts
 * success. */
static wr_queue_config_t stored_ok(const char *text)
{
    json_t *j = load(text);
    wr_queue_config_t c;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    if (wr_qconfig_parse_stored(j, &c, field, sizeof field, msg, sizeof msg) != WR_OK)
        fail_msg("stored parse failed for %s: field '%s': %s", text, field, msg);
    json_decref(j);
    return c;
}

/* The integer member key of c's stored form (wr_qconfig_to_json). */
static json_int_t stored_int(const wr_queue_config_t *c, const char *key)
{
    json_t *j = wr_qconfig_to_json(c);
    assert_non_null(j);
    json_t *v = json_object_get(j, key);
    assert_true(json_is_integer(v));
    json_int_t n = json_integer_value(v);
    json_decref(j);
    return n;
}

/* c's public rendering (caller frees), asserted not to hold secret
 * anywhere in its text. */
static json_t *public_without(const wr_queue_config_t *c, const char *secret)
{
    json_t *pub = wr_qconfig_to_public_json(c);
    char *text = json_dumps(pub, JSON_COMPACT);
    assert_null(strstr(text, secret));
    free(text);
    return pub;
}

/* c's stored form (the stores' JSON) reads back to c, secrets and all. */
static void assert_stored_round_trip(const wr_queue_config_t *c)
{
    json_t *priv = wr_qconfig_to_json(c);
    wr_queue_config_t back;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    assert_int_equal(wr_qconfig_parse_stored(priv, &back, field, sizeof field, msg, sizeof msg),
                     WR_OK);
    assert_cfg_eq(c, &back);
    json_decref(priv);
}

/* publicLog and draw (API 1.3, the public log and the opening draw): off
 * and null by default; draw needs an https:// beacon URL (http:// only to
 * a loopback host) and a round >= 1; errors name draw.<member>. */
static void test_public_log_and_draw(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_false(c.public_log);
    assert_false(c.draw.set);
    c = parse_ok("{\"admitPerSecond\": 1, \"publicLog\": true, \"draw\": "
                 "{\"beaconUrl\": \"http://127.0.0.1:8080/b\", \"round\": 7}}");
    assert_true(c.public_log);
    assert_true(c.draw.set);
    assert_string_equal(c.draw.beacon_url, "http://127.0.0.1:8080/b");
    assert_int_equal(c.draw.round, 7);
    member_bad("publicLog", "1", "publicLog");
    member_bad("draw", "true", "draw");
    member_bad("draw", "{\"beaconUrl\": \"http://beacon.example\", \"round\": 1}",
               "draw.beaconUrl");
    member_bad("draw", "{\"round\": 1}", "draw.beaconUrl");
    member_bad("draw", "{\"beaconUrl\": \"https://api.drand.sh\"}", "draw.round");
    member_bad("draw", "{\"beaconUrl\": \"https://api.drand.sh\", \"round\": 0}", "draw.round");
    member_bad("draw", "{\"beaconUrl\": \"https://api.drand.sh\", \"round\": 1, \"x\": 1}",
               "draw.x");
    /* a PATCH to null removes it */
    wr_queue_config_t out = patch_ok(&c, "{\"draw\": null}");
    assert_false(out.draw.set);
    assert_true(out.public_log);
}

/* bypass (API 1.3, "Bypass rules"): null by default; each rule's secret
 * never in the public rendering, "set" keeps it in a PATCH (and passes the
 * field check before the store is read), is refused in a PUT; errors name
 * the field "bypass". */
static void test_bypass(void **state)
{
    (void)state;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_false(c.bypass.set);
    c = parse_ok("{\"admitPerSecond\": 1, \"bypass\": [{\"name\": \"staff\", \"header\": "
                 "\"X-Staff\", \"secret\": \"0123456789abcdef0123456789abcdef\"}, "
                 "{\"name\": \"office\", \"cidr\": \"10.0.0.0/8\"}]}");
    assert_true(c.bypass.set);
    assert_int_equal(c.bypass.n, 2);
    json_t *pub = public_without(&c, "0123456789abcdef");
    json_t *rule = json_array_get(json_object_get(pub, "bypass"), 0);
    assert_string_equal(json_string_value(json_object_get(rule, "secret")), "set");
    json_decref(pub);
    assert_stored_round_trip(&c);
    /* what GET shows, sent back in a PATCH, keeps the secret */
    const char *keep = "{\"bypass\": [{\"name\": \"staff\", \"header\": "
                       "\"X-Staff\", \"secret\": \"set\"}]}";
    fields_ok(keep);
    wr_queue_config_t d = patch_ok(&c, keep);
    assert_int_equal(d.bypass.n, 1);
    assert_string_equal(d.bypass.rules[0].value, "0123456789abcdef0123456789abcdef");
    assert_false(d.bypass.any_secret);
    /* in a PUT there is nothing to keep */
    json_t *p = load(keep);
    assert_int_equal(wr_qconfig_parse(p, &d, field, sizeof field, msg, sizeof msg), WR_EINVAL);
    json_decref(p);
    p = load("{\"admitPerSecond\": 1, \"bypass\": [{\"name\": \"x\", \"cidr\": "
             "\"10.0.0.0/99\"}]}");
    assert_int_equal(wr_qconfig_parse(p, &d, field, sizeof field, msg, sizeof msg), WR_EINVAL);
    assert_string_equal(field, "bypass");
    assert_non_null(strstr(msg, "bypass[0].cidr"));
    json_decref(p);
}

/* captcha (API 1.2, the CAPTCHA hook): null by default; provider, siteKey
 * and secret required; the provider's verify URL by default; http:// only
 * to loopback hosts; errors naming captcha.<member>; the secret never in
 * the public rendering, "set" keeps it in a PATCH and is refused in a PUT;
 * a PATCH replaces the whole object. */
static void test_captcha(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_false(c.captcha.set);
    c = parse_ok("{\"admitPerSecond\": 1, \"captcha\": null}");
    assert_false(c.captcha.set);
    c = parse_ok("{\"admitPerSecond\": 1, \"captcha\": {\"provider\": \"turnstile\", "
                 "\"siteKey\": \"1x00000000000000000000AA\", \"secret\": "
                 "\"1x0000000000000000000000000000000AA\"}}");
    assert_true(c.captcha.set);
    assert_int_equal(c.captcha.provider, WR_CAPTCHA_TURNSTILE);
    assert_string_equal(c.captcha.site_key, "1x00000000000000000000AA");
    assert_string_equal(c.captcha.secret, "1x0000000000000000000000000000000AA");
    assert_string_equal(c.captcha.verify_url,
                        "https://challenges.cloudflare.com/turnstile/v0/siteverify");
    assert_int_equal(c.captcha.fallback, WR_CAPTCHA_FALLBACK_CHALLENGE);
    assert_int_equal(c.captcha.fallback_bits, 18);

    /* the public rendering never holds the secret; the stores' form does */
    json_t *pub = public_without(&c, "1x0000000000000000000000000000000AA");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(pub, "captcha"), "secret")), "set");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(pub, "captcha"), "siteKey")),
        "1x00000000000000000000AA");
    json_decref(pub);
    json_t *priv = wr_qconfig_to_json(&c);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(priv, "captcha"), "secret")),
        "1x0000000000000000000000000000000AA");
    json_decref(priv);
    /* the stores' form reads back to the same config */
    assert_stored_round_trip(&c);

    /* hCaptcha, a loopback stand-in, refuse, bits */
    c = parse_ok("{\"admitPerSecond\": 1, \"captcha\": {\"provider\": \"hcaptcha\", "
                 "\"siteKey\": \"k\", \"secret\": \"s\", \"verifyUrl\": "
                 "\"http://127.0.0.1:8123/siteverify\", \"fallback\": \"refuse\", "
                 "\"fallbackBits\": 12}}");
    assert_int_equal(c.captcha.provider, WR_CAPTCHA_HCAPTCHA);
    assert_string_equal(c.captcha.verify_url, "http://127.0.0.1:8123/siteverify");
    assert_int_equal(c.captcha.fallback, WR_CAPTCHA_FALLBACK_REFUSE);
    assert_int_equal(c.captcha.fallback_bits, 12);

    /* a PATCH with "secret": "set" keeps the secret, and replaces the rest */
    const char *keep = "{\"captcha\": {\"provider\": \"turnstile\", \"siteKey\": "
                       "\"k2\", \"secret\": \"set\"}}";
    wr_queue_config_t d = patch_ok(&c, keep);
    assert_string_equal(d.captcha.secret, "s");
    assert_string_equal(d.captcha.site_key, "k2");
    assert_int_equal(d.captcha.provider, WR_CAPTCHA_TURNSTILE);
    assert_string_equal(d.captcha.verify_url,
                        "https://challenges.cloudflare.com/turnstile/v0/siteverify");
    assert_int_equal(d.captcha.fallback, WR_CAPTCHA_FALLBACK_CHALLENGE);
    /* the same body passes the field check before the store is read */
    fields_ok(keep);
    /* "set" in a PUT: nothing to keep */
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": \"set\"}",
                "captcha.secret");
    /* a refused PATCH changes nothing */
    expect_patch_error(&c,
                       "{\"captcha\": {\"provider\": \"turnstile\", \"siteKey\": \"k 2\", "
                       "\"secret\": \"x\"}}",
                       "captcha.siteKey");
    /* null removes it */
    assert_false(patch_ok(&c, "{\"captcha\": null}").captcha.set);

    /* errors name the member */
    captcha_bad("true", "captcha");
    captcha_bad("[]", "captcha");
    captcha_bad("{\"siteKey\": \"k\", \"secret\": \"s\"}", "captcha.provider");
    captcha_bad("{\"provider\": \"recaptcha\", \"siteKey\": \"k\", \"secret\": \"s\"}",
                "captcha.provider");
    captcha_bad("{\"provider\": \"turnstile\", \"secret\": \"s\"}", "captcha.siteKey");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"\", \"secret\": \"s\"}",
                "captcha.siteKey");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": 5, \"secret\": \"s\"}",
                "captcha.siteKey");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"a\\\"b\", "
                "\"secret\": \"s\"}",
                "captcha.siteKey");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\"}", "captcha.secret");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": null}",
                "captcha.secret");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": \"s\", "
                "\"verifyUrl\": \"http://captcha.example/siteverify\"}",
                "captcha.verifyUrl");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": \"s\", "
                "\"verifyUrl\": \"ftp://127.0.0.1/x\"}",
                "captcha.verifyUrl");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": \"s\", "
                "\"verifyUrl\": \"https://user@captcha.example/x\"}",
                "captcha.verifyUrl");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": \"s\", "
                "\"fallback\": \"admit\"}",
                "captcha.fallback");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": \"s\", "
                "\"fallbackBits\": 0}",
                "captcha.fallbackBits");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": \"s\", "
                "\"fallbackBits\": 33}",
                "captcha.fallbackBits");
    captcha_bad("{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": \"s\", "
                "\"extra\": 1}",
                "captcha.extra");
    char big[600];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char body[900];
    snprintf(body, sizeof body,
             "{\"provider\": \"turnstile\", \"siteKey\": \"k\", \"secret\": "
             "\"%.201s\"}",
             big);
    captcha_bad(body, "captcha.secret");
    snprintf(body, sizeof body,
             "{\"provider\": \"turnstile\", \"siteKey\": \"%.101s\", \"secret\": "
             "\"s\"}",
             big);
    captcha_bad(body, "captcha.siteKey");
}

/* The field an invalid page object names (and that the parse fails). */
static void page_bad(const char *page, const char *field)
{
    member_bad("page", page, field);
}

/* page (API 1.2): null by default, each member checked by its own rule,
 * lengths in code points, errors naming page.<member>. */
static void test_page(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_false(c.page.set);
    c = parse_ok("{\"admitPerSecond\": 1, \"page\": null}");
    assert_false(c.page.set);
    c = parse_ok("{\"admitPerSecond\": 1, \"page\": {}}");
    assert_true(c.page.set);
    assert_string_equal(c.page.title, "");
    c = parse_ok("{\"admitPerSecond\": 1, \"page\": {\"title\": \"Launch <b>\", "
                 "\"brand\": "
                 "\"Shop & Co\", \"logoUrl\": \"https://cdn.example/l.svg\", "
                 "\"accentColor\": "
                 "\"#ffd400\", \"lang\": \"zh-Hant\"}}");
    assert_true(c.page.set);
    assert_string_equal(c.page.title, "Launch <b>");
    assert_string_equal(c.page.brand, "Shop & Co");
    assert_string_equal(c.page.logo_url, "https://cdn.example/l.svg");
    assert_string_equal(c.page.accent, "#ffd400");
    assert_string_equal(c.page.lang, "zh-Hant");
    c = parse_ok("{\"admitPerSecond\": 1, \"page\": {\"logoUrl\": \"/logo.png\", "
                 "\"lang\": null}}");
    assert_string_equal(c.page.logo_url, "/logo.png");
    assert_string_equal(c.page.lang, "");

    /* 100 code points of three bytes each pass; 101 do not */
    char big[4000], text[8200];
    size_t o = 0;
    for (int i = 0; i < 100; i++)
        o += (size_t)snprintf(big + o, sizeof(big) - o, "\xea\xb0\x80"); /* U+AC00 */
    snprintf(text, sizeof(text),
             "{\"admitPerSecond\": 1, \"page\": {\"title\": \"%s\", \"brand\": "
             "\"%s\"}}",
             big, big);
    c = parse_ok(text);
    assert_int_equal(strlen(c.page.title), 300);
    snprintf(text, sizeof(text), "{\"title\": \"%s\xea\xb0\x80\"}", big);
    page_bad(text, "page.title");
    snprintf(text, sizeof(text), "{\"brand\": \"%sx\"}", big);
    page_bad(text, "page.brand");
    /* 2,000 characters of logoUrl pass, 2,001 do not */
    o = (size_t)snprintf(big, sizeof(big), "https://cdn.example/");
    while (o < 2000)
        big[o++] = 'a';
    big[o] = 0;
    snprintf(text, sizeof(text), "{\"admitPerSecond\": 1, \"page\": {\"logoUrl\": \"%s\"}}", big);
    c = parse_ok(text);
    assert_int_equal(strlen(c.page.logo_url), 2000);
    snprintf(text, sizeof(text), "{\"logoUrl\": \"%sa\"}", big);
    page_bad(text, "page.logoUrl");

    page_bad("1", "page");
    page_bad("\"x\"", "page");
    page_bad("[]", "page");
    page_bad("{\"colour\": \"#000000\"}", "page.colour");
    page_bad("{\"title\": 5}", "page.title");
    page_bad("{\"title\": \"a\\nb\"}", "page.title");
    page_bad("{\"title\": \"a\\u0085b\"}", "page.title"); /* C1: NEL */
    page_bad("{\"brand\": \"a\\u009fb\"}", "page.brand");
    page_bad("{\"brand\": true}", "page.brand");
    page_bad("{\"logoUrl\": \"http://cdn.example/l.png\"}", "page.logoUrl");
    page_bad("{\"logoUrl\": \"//cdn.example/l.png\"}", "page.logoUrl");
    page_bad("{\"logoUrl\": \"/\\\\cdn.example/l.png\"}", "page.logoUrl");
    page_bad("{\"logoUrl\": \"javascript:alert(1)\"}", "page.logoUrl");
    page_bad("{\"logoUrl\": \"https://\"}", "page.logoUrl");
    page_bad("{\"logoUrl\": \"https://a.example/x y\"}", "page.logoUrl");
    page_bad("{\"logoUrl\": \"https://a.example/\\\"onerror=x\"}", "page.logoUrl");
    page_bad("{\"logoUrl\": \"\"}", "page.logoUrl");
    page_bad("{\"accentColor\": \"red\"}", "page.accentColor");
    page_bad("{\"accentColor\": \"#fff\"}", "page.accentColor");
    page_bad("{\"accentColor\": \"#12345g\"}", "page.accentColor");
    page_bad("{\"accentColor\": \"#1234567\"}", "page.accentColor");
    page_bad("{\"lang\": \"EN\"}", "page.lang");
    page_bad("{\"lang\": \"zh\"}", "page.lang");
    page_bad("{\"lang\": \"zh-CN\"}", "page.lang");
    /* the order of the checks: title first */
    page_bad("{\"lang\": \"xx\", \"title\": 1}", "page.title");

    for (size_t i = 0; wr_page_langs[i]; i++) {
        snprintf(text, sizeof(text), "{\"admitPerSecond\": 1, \"page\": {\"lang\": \"%s\"}}",
                 wr_page_langs[i]);
        c = parse_ok(text);
        assert_string_equal(c.page.lang, wr_page_langs[i]);
    }

    /* a PATCH of page replaces the whole object; null removes it */
    wr_queue_config_t base = parse_ok("{\"admitPerSecond\": 1, \"page\": {\"title\": \"T\", "
                                      "\"brand\": \"B\"}}"),
                      out;
    json_t *patch = load("{\"page\": {\"brand\": \"C\"}}");
    char f[WR_FIELD_MAX] = "", msg[256] = "";
    assert_int_equal(wr_qconfig_patch(&base, patch, &out, f, sizeof(f), msg, sizeof(msg)), WR_OK);
    assert_string_equal(out.page.title, "");
    assert_string_equal(out.page.brand, "C");
    json_decref(patch);
    patch = load("{\"page\": null}");
    assert_int_equal(wr_qconfig_patch(&base, patch, &out, f, sizeof(f), msg, sizeof(msg)), WR_OK);
    assert_false(out.page.set);
    json_decref(patch);
    /* a bad PATCH changes nothing */
    patch = load("{\"page\": {\"accentColor\": \"blue\"}}");
    out = base;
    assert_int_equal(wr_qconfig_patch(&base, patch, &out, f, sizeof(f), msg, sizeof(msg)),
                     WR_EINVAL);
    assert_string_equal(f, "page.accentColor");
    assert_string_equal(out.page.title, "T");
    json_decref(patch);
}

static void test_full_config(void **state)
{
    (void)state;
    wr_queue_config_t c =
        parse_ok("{\"enabled\": false, \"paused\": true, \"admitPerSecond\": 33.3,"
                 " \"capacity\": {\"connections\": 10, \"serviceMs\": 500},"
                 " \"tickMs\": 250, \"maxActive\": 12, \"maxQueueSize\": 0, "
                 "\"tokenTtlSeconds\": 86400,"
                 " \"pollBands\": [{\"upTo\": 5, \"ms\": 250}, {\"upTo\": 50, \"ms\": "
                 "600000}],"
                 " \"pollJitter\": 0.5, \"failPolicy\": \"closed\", "
                 "\"failOpenPerSecond\": 0,"
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
    wr_queue_config_t c = parse_ok("{\"capacity\": {\"connections\": 40, "
                                   "\"serviceMs\": 200, \"safety\": 0.875}}");
    assert_true(c.admit_per_second == 175.0); /* exact, not 174.99999 */
    assert_true(c.fail_open_per_second == 175.0);
    /* default safety 0.875: 8 / 0.1 * 0.875 = 70 */
    c = parse_ok("{\"capacity\": {\"connections\": 8, \"serviceMs\": 100}}");
    assert_true(c.admit_per_second == 70.0);
    assert_true(c.cap_safety == 0.875);
    /* 1 / 3 s * 1 = 0.333.. */
    c = parse_ok("{\"capacity\": {\"connections\": 1, \"serviceMs\": 3000, "
                 "\"safety\": 1}}");
    assert_true(c.admit_per_second == 1.0 / 3.0);
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
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"safety\": "
         "0}}",
         "capacity.safety"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"safety\": "
         "1.01}}",
         "capacity.safety"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"safety\": "
         "\"1\"}}",
         "capacity.safety"},
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200, \"x\": 1}}", "capacity.x"},
        {"{\"capacity\": {\"connections\": 1000000, \"serviceMs\": 1, "
         "\"safety\": 1}}",
         "capacity"},
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
        {"{\"admitPerSecond\": 1, \"pollBands\": "
         "[{\"ms\":250},{\"ms\":250},{\"ms\":250},"
         "{\"ms\":250},{\"ms\":250},{\"ms\":250},{\"ms\":250},{\"ms\":250},{"
         "\"ms\":250}]}",
         "pollBands"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [5]}", "pollBands[0]"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10, \"ms\": 1000}, "
         "{\"ms\": 249}]}",
         "pollBands[1].ms"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10, \"ms\": 1000}, "
         "{\"ms\": "
         "600001}]}",
         "pollBands[1].ms"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10}]}", "pollBands[0].ms"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"ms\": 1000}, {\"ms\": "
         "2000}]}",
         "pollBands[0].upTo"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 0, \"ms\": 1000}]}",
         "pollBands[0].upTo"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10, \"ms\": 1000},"
         " {\"upTo\": 10, \"ms\": 2000}, {\"ms\": 3000}]}",
         "pollBands[1].upTo"},
        {"{\"admitPerSecond\": 1, \"pollBands\": [{\"upTo\": 10, \"ms\": 1000, "
         "\"x\": 1}]}",
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

    c = parse_ok("{\"admitPerSecond\": 1, \"targetUrl\": "
                 "\"https://shop.example/checkout\"}");
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
    roundtrip("{\"capacity\": {\"connections\": 7, \"serviceMs\": 333, "
              "\"safety\": 0.3}}");
    roundtrip("{\"enabled\": false, \"paused\": true, \"admitPerSecond\": 33.3,"
              " \"tickMs\": 10, \"maxActive\": 9007199254740993, \"maxQueueSize\": 0,"
              " \"tokenTtlSeconds\": 1,"
              " \"pollBands\": [{\"upTo\": 1, \"ms\": 250}, {\"upTo\": 2, \"ms\": 251},"
              " {\"upTo\": 3, \"ms\": 252}, {\"upTo\": 4, \"ms\": 253}, {\"upTo\": 5, "
              "\"ms\": 254},"
              " {\"upTo\": 6, \"ms\": 255}, {\"upTo\": 7, \"ms\": 256}, {\"upTo\": 8, "
              "\"ms\": 257}],"
              " \"pollJitter\": 0.123456789, \"failPolicy\": \"open\","
              " \"failOpenPerSecond\": 0.1, \"targetUrl\": "
              "\"https://a.example/b?c=d&e=%20\"}");
    roundtrip("{\"admitPerSecond\": 0.001, \"failPolicy\": \"closed\", "
              "\"pollJitter\": 0}");
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
    assert_string_equal(s,
                        "{\"enabled\":true,\"paused\":false,\"admitPerSecond\":175,\"tickMs\":"
                        "100,"
                        "\"maxActive\":0,\"maxQueueSize\":100000,\"tokenTtlSeconds\":300,"
                        "\"pollBands\":"
                        "[{\"upTo\":100,\"ms\":1000},{\"upTo\":1000,\"ms\":3000},{\"ms\":5000}],"
                        "\"pollJitter\":0.1,\"failPolicy\":\"limited\",\"failOpenPerSecond\":175,"
                        "\"targetUrl\":\"\",\"inviteKey\":null,\"returnOrigins\":[],"
                        "\"tokenInQuery\":false,\"sessionSeconds\":0,\"idleTimeoutSeconds\":120,"
                        "\"awayHoldSeconds\":1800,\"pollMaxMs\":60000,"
                        "\"opensAt\":null,\"preQueueShuffle\":true,\"closed\":false,\"stock\":"
                        "null,"
                        "\"notice\":null,\"challengeBits\":0,"
                        "\"autotune\":null,\"page\":null,\"captcha\":null,\"groups\":null,"
                        "\"standardShare\":0.2,\"publicLog\":false,\"draw\":null,\"bypass\":null,"
                        "\"push\":false}");
    free(s);
    json_decref(j);

    c = parse_ok("{\"admitPerSecond\": 2.5, \"capacity\": {\"connections\": 40, "
                 "\"serviceMs\": "
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

static void test_patch(void **state)
{
    (void)state;
    wr_queue_config_t base = parse_ok("{\"capacity\": {\"connections\": 40, "
                                      "\"serviceMs\": 200}, \"maxActive\": 7,"
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

/* A field of 0..86400 seconds (a uint32_t at offset off in the config):
 * dflt when absent, both ends parsed, a PATCH to patched keeping the rest,
 * the same name in the JSON out, and each value of bad refused on it. */
static void check_seconds_field(const char *name, size_t off, uint32_t dflt, uint32_t patched,
                                const char *const *bad)
{
    char text[160];
    uint32_t v;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    memcpy(&v, (const char *)&c + off, sizeof v);
    assert_int_equal(v, dflt);
    static const uint32_t ends[] = {86400, 0};
    for (size_t i = 0; i < 2; i++) {
        snprintf(text, sizeof text, "{\"admitPerSecond\": 1, \"%s\": %u}", name, ends[i]);
        c = parse_ok(text);
        memcpy(&v, (const char *)&c + off, sizeof v);
        assert_int_equal(v, ends[i]);
    }
    snprintf(text, sizeof text, "{\"%s\": %u}", name, patched);
    c = patch_ok(&c, text);
    memcpy(&v, (const char *)&c + off, sizeof v);
    assert_int_equal(v, patched);
    assert_int_equal(c.admit_per_second, 1);
    assert_int_equal(stored_int(&c, name), patched);
    patch_refused(&c, name, bad);
}

/* sessionSeconds: 0..86400, default 0 (off); in and out of JSON, PUT and
 * PATCH alike. */
static void test_session_seconds(void **state)
{
    (void)state;
    static const char *const bad[] = {"86401", "true", NULL};
    check_seconds_field("sessionSeconds", offsetof(wr_queue_config_t, session_seconds), 0, 900,
                        bad);
}

/* autotune: null or {minPerSecond, maxPerSecond, targetMs} with
 * 0 < min <= max <= 1e6, 1 <= targetMs <= 60000; a PUT with it needs no
 * admitPerSecond (the rate then starts from min); PATCH null removes it. */
static void test_autotune(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_false(c.has_autotune);
    c = parse_ok("{\"autotune\": {\"minPerSecond\": 10, \"maxPerSecond\": 350, "
                 "\"targetMs\": 400}}");
    assert_true(c.has_autotune);
    assert_true(c.autotune_min == 10 && c.autotune_max == 350);
    assert_int_equal(c.autotune_target_ms, 400);
    assert_true(c.admit_per_second == 10);     /* starts from min */
    assert_true(c.fail_open_per_second == 10); /* follows the rate, as ever */
    c = parse_ok("{\"autotune\": {\"minPerSecond\": 0.0001, \"maxPerSecond\": 0.0001, "
                 "\"targetMs\": 1}}");
    assert_true(c.admit_per_second == 0.001); /* the rate's own floor */
    roundtrip("{\"admitPerSecond\": 500, \"autotune\": {\"minPerSecond\": 0.5, "
              "\"maxPerSecond\": 1000000, \"targetMs\": 60000}}");
    c = parse_ok("{\"capacity\": {\"connections\": 40, \"serviceMs\": 200}, \"autotune\": "
                 "{\"minPerSecond\": 10, \"maxPerSecond\": 350, \"targetMs\": 400}}");
    assert_true(c.admit_per_second == 175); /* capacity still derives the start */
    c = patch_ok(&c, "{\"autotune\": null}");
    assert_false(c.has_autotune);
    assert_true(c.admit_per_second == 175);
    expect_put_error("{\"autotune\": {}}", "autotune.minPerSecond");
    expect_put_error("{\"autotune\": 5}", "autotune");
    expect_put_error("{\"autotune\": null}", "admitPerSecond");
    static const char *const bad[][2] = {
        {"{\"minPerSecond\": 0, \"maxPerSecond\": 5, \"targetMs\": 1}", "autotune.minPerSecond"},
        {"{\"minPerSecond\": -1, \"maxPerSecond\": 5, \"targetMs\": 1}", "autotune.minPerSecond"},
        {"{\"minPerSecond\": \"1\", \"maxPerSecond\": 5, \"targetMs\": 1}",
         "autotune.minPerSecond"},
        {"{\"minPerSecond\": 6, \"maxPerSecond\": 5, \"targetMs\": 1}", "autotune.maxPerSecond"},
        {"{\"minPerSecond\": 1, \"maxPerSecond\": 1000001, \"targetMs\": 1}",
         "autotune.maxPerSecond"},
        {"{\"minPerSecond\": 1, \"targetMs\": 1}", "autotune.maxPerSecond"},
        {"{\"minPerSecond\": 1, \"maxPerSecond\": 5, \"targetMs\": 0}", "autotune.targetMs"},
        {"{\"minPerSecond\": 1, \"maxPerSecond\": 5, \"targetMs\": 60001}", "autotune.targetMs"},
        {"{\"minPerSecond\": 1, \"maxPerSecond\": 5, \"targetMs\": 1.5}", "autotune.targetMs"},
        {"{\"minPerSecond\": 1, \"maxPerSecond\": 5}", "autotune.targetMs"},
        {"{\"minPerSecond\": 1, \"maxPerSecond\": 5, \"targetMs\": 1, \"x\": 1}", "autotune.x"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"admitPerSecond\": 1, \"autotune\": %s}", bad[i][0]);
        expect_put_error(text, bad[i][1]);
    }
}

/* idleTimeoutSeconds: 0..86400, default 120 (0 = never); in and out of
 * JSON, PUT and PATCH alike. */
static void test_idle_timeout_seconds(void **state)
{
    (void)state;
    static const char *const bad[] = {"86401", "-1", "1.5", "null", NULL};
    check_seconds_field("idleTimeoutSeconds", offsetof(wr_queue_config_t, idle_timeout_seconds),
                        120, 2, bad);
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
    assert_int_equal(stored_int(&c, "awayHoldSeconds"), 86400);
    assert_int_equal(stored_int(&c, "pollMaxMs"), 600000);
    static const char *const bad_hold[] = {"86401", "-1", "1.5", "null", "\"60\"", "true", NULL};
    static const char *const bad_poll[] = {"1",    "999",       "600001", "-1", "1500.5",
                                           "null", "\"60000\"", "false",  NULL};
    patch_refused(&c, "awayHoldSeconds", bad_hold);
    patch_refused(&c, "pollMaxMs", bad_poll);
}

/* 1.2: challengeBits 0..32 (default 0 = off), PUT and PATCH alike. */
static void test_challenge_bits(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_int_equal(c.challenge_bits, 0);
    c = parse_ok("{\"admitPerSecond\": 1, \"challengeBits\": 32}");
    assert_int_equal(c.challenge_bits, 32);
    c = patch_ok(&c, "{\"challengeBits\": 12}");
    assert_int_equal(c.challenge_bits, 12);
    assert_int_equal(stored_int(&c, "challengeBits"), 12);
    static const char *const bad[] = {"33", "-1", "1.5", "null", "\"8\"", "true", NULL};
    patch_refused(&c, "challengeBits", bad);
    c = patch_ok(&c, "{\"challengeBits\": 0}");
    assert_int_equal(c.challenge_bits, 0);
}

/* Sale opening: opensAt (epoch ms or null) and preQueueShuffle. */
static void test_opens_at(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_int_equal(c.opens_at_ms, WR_OPENS_AT_NONE);
    assert_true(c.pre_queue_shuffle);
    c = parse_ok("{\"admitPerSecond\": 1, \"opensAt\": 1764460800000, "
                 "\"preQueueShuffle\": false}");
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
    c = patch_ok(&c, "{\"opensAt\": 100000000000}"); /* the smallest accepted (1973) */
    assert_int_equal(c.opens_at_ms, 100000000000LL);
    roundtrip("{\"admitPerSecond\": 1, \"opensAt\": 1764460800123}");
    static const char *const bad_opens[] = {"-1", "1.5", "\"soon\"", NULL};
    patch_refused(&c, "opensAt", bad_opens);
    expect_patch_error(&c, "{\"preQueueShuffle\": 1}", "preQueueShuffle");
}

/* The end of a sale: closed, stock (0..2^53 or null; a PUT sets what is
 * left, a PATCH only when it names stock), notice (500 code points or
 * null; "" is none). */
static void test_sale_end_fields(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_false(c.closed);
    assert_int_equal(c.stock, WR_STOCK_NONE);
    assert_string_equal(notice_of(&c), "");
    c = parse_ok("{\"admitPerSecond\": 1, \"closed\": true, \"stock\": 9007199254740992,"
                 " \"notice\": \"Size 42 sold out\"}");
    assert_true(c.closed);
    assert_int_equal(c.stock, 9007199254740992LL);
    assert_true(c.stock_set);
    assert_string_equal(notice_of(&c), "Size 42 sold out");
    json_t *j = wr_qconfig_to_public_json(&c);
    assert_true(json_is_true(json_object_get(j, "closed")));
    assert_int_equal(json_integer_value(json_object_get(j, "stock")), 9007199254740992LL);
    assert_string_equal(json_string_value(json_object_get(j, "notice")), "Size 42 sold out");
    assert_null(json_object_get(j, "stockSet")); /* not a field */
    json_decref(j);
    wr_queue_config_t p = patch_ok(&c, "{\"paused\": true}");
    assert_false(p.stock_set); /* a PATCH that does not name stock keeps what is left */
    assert_int_equal(p.stock, 9007199254740992LL);
    p = patch_ok(&c, "{\"stock\": 0, \"notice\": null, \"closed\": false}");
    assert_true(p.stock_set);
    assert_int_equal(p.stock, 0);
    assert_string_equal(notice_of(&p), "");
    assert_false(p.closed);
    p = patch_ok(&p, "{\"stock\": null, \"notice\": null}");
    assert_int_equal(p.stock, WR_STOCK_NONE);
    j = wr_qconfig_to_public_json(&p);
    assert_true(json_is_null(json_object_get(j, "stock")));
    assert_true(json_is_null(json_object_get(j, "notice")));
    json_decref(j);
    /* 1.3: a notice that is empty or only white space (ASCII's, no-break
     * and ideographic spaces, line separators, a BOM) is refused and changes
     * nothing; null clears it */
    static const char *const blank[] = {
        "\"\"",
        "\"   \"",
        "\"\\t\\n \\r\"",
        "\"\\u00a0\"",
        "\"\\u3000\\u2028\"",
        "\"\\ufeff \\u202f\"",
        NULL,
    };
    patch_refused(&c, "notice", blank);
    p = patch_ok(&c, "{\"notice\": \" Size 42 \\u00a0sold out \"}"); /* not blank:
                                                                        kept as is */
    assert_string_equal(notice_of(&p), " Size 42 \xC2\xA0sold out ");
    /* a store's copy does not set what is left */
    p = stored_ok("{\"admitPerSecond\": 1, \"stock\": 5}");
    assert_false(p.stock_set);
    assert_int_equal(p.stock, 5);
    /* a blank notice a 1.2 server stored reads as no notice, not as an
     * unreadable config */
    p = stored_ok("{\"admitPerSecond\": 1, \"notice\": \"  \"}");
    assert_string_equal(notice_of(&p), "");
    /* 500 code points of 4 bytes each fit; 501 of 1 byte do not */
    char big[4 * 501 + 64];
    size_t o = (size_t)snprintf(big, sizeof big, "{\"notice\": \"");
    for (int i = 0; i < 500; i++)
        o += (size_t)snprintf(big + o, sizeof big - o, "\xF0\x9F\x8E\x9F");
    snprintf(big + o, sizeof big - o, "\"}");
    p = patch_ok(&c, big);
    assert_int_equal(strlen(notice_of(&p)), 2000);
    o = (size_t)snprintf(big, sizeof big, "{\"notice\": \"");
    for (int i = 0; i < 501; i++)
        big[o++] = 'x';
    snprintf(big + o, sizeof big - o, "\"}");
    expect_patch_error(&c, big, "notice");
    static const char *const bad_notice[] = {"\"a\\u0000b\"", "5", NULL};
    static const char *const bad_stock[] = {"-1", "9007199254740993", "1.5", "\"10\"", NULL};
    static const char *const bad_closed[] = {"1", "null", NULL};
    patch_refused(&c, "notice", bad_notice);
    patch_refused(&c, "stock", bad_stock);
    patch_refused(&c, "closed", bad_closed);
}

/* 1.3: a notice by language, an object of page language code to text:
 * kept in the order given, shown in the visitor's language, else en, else
 * the first; each text as the string form's rules, the keys language
 * codes (no two alike), 1..WR_NOTICE_LANGS_MAX of them, the texts together
 * at most WR_NOTICE_TEXTS_MAX bytes. */
static void test_notice_by_lang(void **state)
{
    (void)state;
    wr_queue_config_t c =
        parse_ok("{\"admitPerSecond\": 1, \"notice\": {\"ko\": \"\\ud488\\uc808\","
                 " \"en\": \"Sold out\", \"pt-BR\": \"Esgotado\"}}");
    assert_true(c.notice.by_lang);
    assert_int_equal(c.notice.n, 3);
    const char *codes[WR_NOTICE_LANGS_MAX + 1], *texts[WR_NOTICE_LANGS_MAX + 1];
    assert_int_equal(wr_notice_entries(&c.notice, codes, texts), 3);
    assert_string_equal(codes[0], "ko");
    assert_string_equal(texts[0], "\xED\x92\x88\xEC\xA0\x88"); /* 품절 */
    assert_string_equal(codes[2], "pt-BR");
    assert_string_equal(texts[2], "Esgotado");
    assert_null(codes[3]);
    assert_string_equal(wr_notice_pick(&c.notice, codes[0]), texts[0]); /* the visitor's */
    assert_string_equal(wr_notice_pick(&c.notice, codes[2]), "Esgotado");
    assert_string_equal(wr_notice_pick(&c.notice, NULL), "Sold out"); /* else en */
    /* GET shows the object, in the order given */
    json_t *j = wr_qconfig_to_public_json(&c);
    char *dumped = json_dumps(json_object_get(j, "notice"), JSON_COMPACT | JSON_ENSURE_ASCII);
    assert_string_equal(dumped,
                        "{\"ko\":\"\\uD488\\uC808\",\"en\":\"Sold out\",\"pt-BR\":\"Esgotado\"}");
    free(dumped);
    json_decref(j);
    roundtrip("{\"admitPerSecond\": 1, \"notice\": {\"ar\": \"Sale ends at "
              "18:00\", \"ja\": \"x\"}}");
    /* no en: the first key */
    wr_queue_config_t p = patch_ok(&c, "{\"notice\": {\"ja\": \"\\u58f2\\u308a\\u5207\\u308c\","
                                       " \"ko\": \"b\"}}");
    assert_string_equal(wr_notice_pick(&p.notice, NULL),
                        "\xE5\xA3\xB2\xE3\x82\x8A\xE5\x88\x87\xE3\x82\x8C");
    /* the string form again, then null: GET shows what was given */
    p = patch_ok(&p, "{\"notice\": \"One for all\"}");
    assert_false(p.notice.by_lang);
    j = wr_qconfig_to_public_json(&p);
    assert_string_equal(json_string_value(json_object_get(j, "notice")), "One for all");
    json_decref(j);
    p = patch_ok(&p, "{\"notice\": null}");
    assert_int_equal(p.notice.n, 0);
    assert_null(wr_notice_pick(&p.notice, NULL));
    /* refused, naming the field, changing nothing: an empty object, keys
     * that are no language code (9 letters, a digit in the first subtag,
     * "_"), two alike in any case,
     * texts blank or not strings */
    static const struct {
        const char *body, *field;
    } refused[] = {
        {"{\"notice\": {}}", "notice"},
        {"{\"notice\": {\"english!\": \"x\"}}", "notice"},
        {"{\"notice\": {\"e1\": \"x\"}}", "notice"},
        {"{\"notice\": {\"\": \"x\"}}", "notice"},
        {"{\"notice\": {\"abcdefghi\": \"x\"}}", "notice"},
        {"{\"notice\": {\"en_US\": \"x\"}}", "notice"},
        {"{\"notice\": {\"en\": \"x\", \"EN\": \"y\"}}", "notice.EN"},
        {"{\"notice\": {\"en\": \"x\", \"ko\": \" \\u3000\"}}", "notice.ko"},
        {"{\"notice\": {\"ko\": \"\"}}", "notice.ko"},
        {"{\"notice\": {\"ko\": 5}}", "notice.ko"},
        {"{\"notice\": {\"ko\": null}}", "notice.ko"},
        {"{\"notice\": {\"ko\": {\"en\": \"x\"}}}", "notice.ko"},
        {"{\"notice\": {\"ko\": [\"x\"]}}", "notice.ko"},
        {"{\"notice\": {\"ko\": \"a\\u0000b\"}}", "notice.ko"},
        {"{\"notice\": [\"x\"]}", "notice"},
        {"{\"notice\": true}", "notice"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
        expect_patch_error(&c, refused[k].body, refused[k].field);
    /* 500 code points in one text fit, 501 do not */
    char big[3 * 6 * 501 + 256];
    size_t o = (size_t)snprintf(big, sizeof big, "{\"notice\": {\"en\": \"ok\", \"ko\": \"");
    for (int i = 0; i < 500; i++)
        o += (size_t)snprintf(big + o, sizeof big - o, "\xEA\xB0\x80"); /* 가 */
    snprintf(big + o, sizeof big - o, "\"}}");
    p = patch_ok(&c, big);
    assert_int_equal(strlen(wr_notice_pick(&p.notice, NULL)), 2);
    memcpy(big + o, "x\"}}", 5);
    expect_patch_error(&c, big, "notice.ko");
    /* the texts together: five of 1,500 bytes fit (7,500), six do not */
    static const char *const langs[] = {"ko", "ja", "zh-Hans", "zh-Hant", "th", "vi"};
    for (size_t n = 5; n <= 6; n++) {
        o = (size_t)snprintf(big, sizeof big, "{\"notice\": {");
        for (size_t k = 0; k < n; k++) {
            o += (size_t)snprintf(big + o, sizeof big - o, "%s\"%s\": \"", k ? ", " : "", langs[k]);
            for (int i = 0; i < 500; i++)
                o += (size_t)snprintf(big + o, sizeof big - o, "\xEA\xB0\x80");
            o += (size_t)snprintf(big + o, sizeof big - o, "\"");
        }
        snprintf(big + o, sizeof big - o, "}}");
        if (n == 5) {
            p = patch_ok(&c, big);
            assert_int_equal(p.notice.n, 5);
        } else {
            expect_patch_error(&c, big, "notice");
        }
    }
    /* WR_NOTICE_LANGS_MAX languages fit, one more does not */
    o = (size_t)snprintf(big, sizeof big, "{\"notice\": {");
    for (int k = 0; k <= WR_NOTICE_LANGS_MAX; k++) {
        if (k == WR_NOTICE_LANGS_MAX) {
            snprintf(big + o, sizeof big - o, "}}");
            p = patch_ok(&c, big);
            assert_int_equal(p.notice.n, WR_NOTICE_LANGS_MAX);
            assert_string_equal(wr_notice_pick(&p.notice, NULL), "t0"); /* no en: the first */
        }
        o += (size_t)snprintf(big + o, sizeof big - o, "%s\"x-l%d\": \"t%d\"", k ? ", " : "", k, k);
    }
    snprintf(big + o, sizeof big - o, "}}");
    expect_patch_error(&c, big, "notice");
    /* a stored object reads back as it was; a stored blank string as null */
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    j = load("{\"admitPerSecond\": 1, \"notice\": {\"fr\": "
             "\"\\u00c9puis\\u00e9\", \"en\": \"Gone\"}}");
    assert_int_equal(wr_qconfig_parse_stored(j, &p, field, sizeof field, msg, sizeof msg), WR_OK);
    assert_true(p.notice.by_lang);
    assert_int_equal(p.notice.n, 2);
    assert_string_equal(wr_notice_pick(&p.notice, NULL), "Gone");
    json_decref(j);
    j = load("{\"admitPerSecond\": 1, \"notice\": \"\\u3000\"}");
    assert_int_equal(wr_qconfig_parse_stored(j, &p, field, sizeof field, msg, sizeof msg), WR_OK);
    assert_int_equal(p.notice.n, 0);
    json_decref(j);
    /* the page language rule the keys follow (lang.h's wr_lang_code_ok too) */
    assert_true(wr_page_lang_code_ok("zh-Hant", 7));
    assert_true(wr_page_lang_code_ok("es-419", 6));
    assert_false(wr_page_lang_code_ok("419", 3));
    assert_false(wr_page_lang_code_ok("en-", 3));
    assert_false(wr_page_lang_code_ok("en--us", 6));
    assert_false(wr_page_lang_code_ok("en_US", 5));
}

/* Runs a PUT or a PATCH (base non-NULL) that must fail on field with a
 * message containing want; *out untouched. */
static void expect_error_msg(const wr_queue_config_t *base, const char *text,
                             const char *field_expected, const char *want)
{
    json_t *j = load(text);
    wr_queue_config_t out;
    memset(&out, 0x5A, sizeof(out));
    wr_queue_config_t before = out;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    wr_err_t err = base ? wr_qconfig_patch(base, j, &out, field, sizeof(field), msg, sizeof(msg))
                        : wr_qconfig_parse(j, &out, field, sizeof(field), msg, sizeof(msg));
    if (err != WR_EINVAL || strcmp(field, field_expected) != 0 || !strstr(msg, want))
        fail_msg("%s: expected %s '...%s...', got err %d field '%s' msg '%s'", text, field_expected,
                 want, (int)err, field, msg);
    assert_memory_equal(&out, &before, sizeof(out));
    json_decref(j);
}

/* K34: an opensAt plausible as seconds (below 10^11 ms, 1973) is refused
 * naming opensAt and saying "epoch milliseconds"; so is every "...At"
 * field (WR_QF_EPOCH_MS rows). A store's own copy still reads. */
static void test_epoch_ms_fields(void **state)
{
    (void)state;
    const wr_qfield_t *at = wr_qconfig_field("opensAt");
    assert_non_null(at);
    assert_true(at->flags & WR_QF_EPOCH_MS);
    wr_queue_config_t base = parse_ok("{\"admitPerSecond\": 1}");
    size_t n_epoch = 0;
    for (size_t i = 0; i < wr_qconfig_n_fields; i++) {
        const wr_qfield_t *f = &wr_qconfig_fields[i];
        size_t klen = strlen(f->key);
        /* every "...At" field is epoch ms, and only those */
        assert_int_equal(!!(f->flags & WR_QF_EPOCH_MS),
                         klen > 2 && strcmp(f->key + klen - 2, "At") == 0);
        if (!(f->flags & WR_QF_EPOCH_MS))
            continue;
        n_epoch++;
        static const char *const bad[] = {"1764460800", "0",        "1",    "99999999999",    "-5",
                                          "1.5",        "\"soon\"", "true", "253402300800000"};
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
            char text[256];
            snprintf(text, sizeof(text), "{\"admitPerSecond\": 1, \"%s\": %s}", f->key, bad[k]);
            expect_error_msg(NULL, text, f->key, "epoch milliseconds");
            snprintf(text, sizeof(text), "{\"%s\": %s}", f->key, bad[k]);
            expect_error_msg(&base, text, f->key, "epoch milliseconds");
        }
        char text[256];
        snprintf(text, sizeof(text), "{\"admitPerSecond\": 1, \"%s\": 1764460800}", f->key);
        expect_error_msg(NULL, text, f->key, "epoch milliseconds, not seconds");
        snprintf(text, sizeof(text), "{\"admitPerSecond\": 1, \"%s\": 100000000000}", f->key);
        wr_queue_config_t c = parse_ok(text);
        assert_int_equal(stored_int(&c, f->key), 100000000000LL);
        /* a value stored before K34 (seconds) still reads from a store */
        snprintf(text, sizeof(text), "{\"admitPerSecond\": 1, \"%s\": 1764460800}", f->key);
        c = stored_ok(text);
        assert_int_equal(stored_int(&c, f->key), 1764460800LL);
    }
    assert_int_equal(n_epoch, 1); /* opensAt */
    /* the stored form is still checked otherwise */
    json_t *j = load("{\"admitPerSecond\": 1, \"opensAt\": -5}");
    wr_queue_config_t c;
    char field[WR_FIELD_MAX] = "", msg[256] = "";
    assert_int_equal(wr_qconfig_parse_stored(j, &c, field, sizeof(field), msg, sizeof(msg)),
                     WR_EINVAL);
    assert_string_equal(field, "opensAt");
    json_decref(j);
}

/* The table: JSON keys and store names unique, every row's kind in order. */
static void test_table_unique(void **state)
{
    (void)state;
    assert_true(wr_qconfig_n_fields >= 20);
    for (size_t i = 0; i < wr_qconfig_n_fields; i++) {
        const wr_qfield_t *a = &wr_qconfig_fields[i];
        assert_non_null(a->key);
        assert_true(strlen(a->key) < WR_FIELD_MAX);
        assert_ptr_equal(wr_qconfig_field(a->key), a);
        assert_non_null(a->example);
        if (a->store) {
            assert_true(strlen(a->store) < WR_QF_STORE_VALUE_MAX);
            /* a store field holds a short scalar (a CUSTOM row writes its own) */
            assert_true(a->kind != WR_QF_CUSTOM || a->store_value);
            assert_true(a->kind != WR_QF_STRING || a->size <= WR_QF_STORE_VALUE_MAX);
            /* the scripts keep their own fields in the same hash */
            assert_true(strcmp(a->store, "version") != 0 && strcmp(a->store, "json") != 0 &&
                        strcmp(a->store, "preq") != 0 && strcmp(a->store, "holdq") != 0);
        }
        if (a->kind == WR_QF_CUSTOM)
            assert_true(a->parse && a->render);
        if (a->kind == WR_QF_NUMBER || a->kind == WR_QF_STRING)
            assert_non_null(a->rule);
        if (a->flags & WR_QF_NULLABLE)
            assert_true(a->kind == WR_QF_INT && a->imin >= 0 && a->size == sizeof(int64_t));
        for (size_t k = i + 1; k < wr_qconfig_n_fields; k++) {
            const wr_qfield_t *b = &wr_qconfig_fields[k];
            if (strcmp(a->key, b->key) == 0)
                fail_msg("JSON key %s twice", a->key);
            if (a->store && b->store && strcmp(a->store, b->store) == 0)
                fail_msg("store field %s twice (%s, %s)", a->store, a->key, b->key);
        }
    }
    assert_null(wr_qconfig_field("bogus"));
}

/* The defaults the table gives are the documented ones, written by hand. */
static void test_table_defaults(void **state)
{
    (void)state;
    wr_queue_config_t fresh = documented_defaults();
    wr_queue_config_t d;
    memset(&d, 0xEE, sizeof(d)); /* every byte set by the defaults */
    wr_qconfig_defaults(&d);
    assert_cfg_eq(&d, &fresh);
    assert_memory_equal(&d, &fresh, sizeof(d)); /* members, unused bytes and all */
    /* a PUT of the rate alone is the defaults plus the rate */
    wr_queue_config_t p = parse_ok("{\"admitPerSecond\": 5}");
    fresh.admit_per_second = 5;
    fresh.fail_open_per_second = 5;
    assert_cfg_eq(&p, &fresh);
    assert_true(p.stock_set); /* a PUT sets what is left (here: no limit) */
}

/* Every row renders and parses back to the same value: its example (not
 * the default) goes in, renders as given, and a second parse of the
 * rendering gives the same member bytes. */
static void test_table_roundtrip(void **state)
{
    (void)state;
    wr_queue_config_t d;
    wr_qconfig_defaults(&d);
    d.admit_per_second = 1;
    d.fail_open_per_second = 1;
    json_t *dj = wr_qconfig_to_json(&d);
    for (size_t i = 0; i < wr_qconfig_n_fields; i++) {
        const wr_qfield_t *f = &wr_qconfig_fields[i];
        json_t *ex = load(f->example);
        json_t *def = json_object_get(dj, f->key);
        if (def && json_equal(def, ex))
            fail_msg("%s: the example is the default", f->key);
        json_t *in = json_pack("{s:f}", "admitPerSecond", 1.0);
        json_object_set(in, f->key, ex);
        wr_queue_config_t a, b;
        char field[WR_FIELD_MAX] = "", msg[256] = "";
        if (wr_qconfig_parse(in, &a, field, sizeof(field), msg, sizeof(msg)) != WR_OK)
            fail_msg("%s: example %s: %s %s", f->key, f->example, field, msg);
        json_t *out = wr_qconfig_to_json(&a);
        if (!json_equal(json_object_get(out, f->key), ex))
            fail_msg("%s: %s renders differently", f->key, f->example);
        char *text = json_dumps(out, JSON_COMPACT);
        json_t *back = load(text);
        assert_int_equal(wr_qconfig_parse(back, &b, field, sizeof(field), msg, sizeof(msg)), WR_OK);
        assert_cfg_eq(&a, &b);
        if (f->kind != WR_QF_CUSTOM)
            assert_memory_equal((const char *)&a + f->off, (const char *)&b + f->off, f->size);
        /* and through a PATCH on the defaults */
        wr_queue_config_t c;
        json_t *one = json_pack("{sO}", f->key, ex);
        assert_int_equal(wr_qconfig_patch(&d, one, &c, field, sizeof(field), msg, sizeof(msg)),
                         WR_OK);
        json_t *cj = wr_qconfig_to_json(&c);
        assert_true(json_equal(json_object_get(cj, f->key), ex));
        json_decref(cj);
        json_decref(one);
        free(text);
        json_decref(back);
        json_decref(out);
        json_decref(in);
        json_decref(ex);
    }
    json_decref(dj);
}

/* The store's hash values: what r_config_put wrote by hand before the
 * table, for the defaults and for a config with every store field set. */
static void test_table_store_values(void **state)
{
    (void)state;
    static const struct {
        const char *key, *store, *def, *set;
    } want[] = {
        {"enabled", "enabled", "1", "0"},
        {"paused", "paused", "0", "1"},
        {"admitPerSecond", "rate", "175", "33.299999999999997"},
        {"tickMs", "tickMs", "100", "250"},
        {"maxActive", "maxActive", "0", "9223372036854775807"},
        {"maxQueueSize", "maxQueueSize", "100000", "0"},
        {"tokenTtlSeconds", "ttlSec", "300", "86400"},
        {"sessionSeconds", "sessionSec", "0", "900"},
        {"idleTimeoutSeconds", "idleSec", "120", "0"},
        {"awayHoldSeconds", "holdSec", "1800", "0"},
        {"opensAt", "opensAt", "", "253402300799999"},
        {"preQueueShuffle", "shuffle", "1", "0"},
        {"closed", "closed", "0", "1"},
        {"autotune", "autotune", "", "10.5:350:400"},
        {"publicLog", "log", "0", "1"},
    };
    wr_queue_config_t d = parse_ok("{\"admitPerSecond\": 175}");
    wr_queue_config_t s =
        parse_ok("{\"enabled\": false, \"paused\": true, \"admitPerSecond\": 33.3, "
                 "\"tickMs\": 250,"
                 " \"maxActive\": 9223372036854775807, \"maxQueueSize\": 0, "
                 "\"tokenTtlSeconds\": 86400,"
                 " \"sessionSeconds\": 900, \"idleTimeoutSeconds\": 0, "
                 "\"awayHoldSeconds\": 0,"
                 " \"opensAt\": 253402300799999,"
                 " \"preQueueShuffle\": false, \"closed\": true, \"publicLog\": true,"
                 " \"autotune\": {\"minPerSecond\": 10.5, \"maxPerSecond\": 350, "
                 "\"targetMs\": 400}}");
    size_t n_store = 0;
    for (size_t i = 0; i < wr_qconfig_n_fields; i++)
        n_store += wr_qconfig_fields[i].store != NULL;
    assert_int_equal(n_store, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const wr_qfield_t *f = wr_qconfig_field(want[i].key);
        assert_non_null(f);
        assert_string_equal(f->store, want[i].store);
        char v[WR_QF_STORE_VALUE_MAX];
        assert_int_equal(wr_qconfig_store_value(f, &d, v, sizeof(v)), (int)strlen(want[i].def));
        assert_string_equal(v, want[i].def);
        assert_int_equal(wr_qconfig_store_value(f, &s, v, sizeof(v)), (int)strlen(want[i].set));
        assert_string_equal(v, want[i].set);
        assert_int_equal(wr_qconfig_store_value(f, &s, v, 1), -1); /* too small */
    }
    char v[WR_QF_STORE_VALUE_MAX];
    assert_int_equal(wr_qconfig_store_value(wr_qconfig_field("capacity"), &d, v, sizeof(v)), -1);
    assert_int_equal(wr_qconfig_store_value(wr_qconfig_field("pollJitter"), &d, v, sizeof(v)), -1);
}

/* Collects the quoted names in the argument list that follows at (up to
 * its closing parenthesis) into names; returns the new count. */
static size_t quoted_names(const char *at, const char *end, char names[][32], size_t n, size_t max)
{
    int depth = 1;
    for (const char *p = at; p < end && depth > 0; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        else if (*p == '\'') {
            const char *q = memchr(p + 1, '\'', (size_t)(end - p - 1));
            assert_non_null(q);
            if (n < max && q - p - 1 < 32) {
                memcpy(names[n], p + 1, (size_t)(q - p - 1));
                names[n][q - p - 1] = '\0';
                n++;
            }
            p = q;
        }
    }
    return n;
}

/* Every config hash field a script reads (HGET / HMGET / HEXISTS on
 * K_CONFIG) is a row's store field or one the scripts keep themselves, and
 * every row's store field is read by some script. */
static void test_table_scripts_read_store_fields(void **state)
{
    (void)state;
    static const char *const reads[] = {"'HGET', K_CONFIG,", "'HMGET', K_CONFIG,",
                                        "'HEXISTS', K_CONFIG,"};
    /* (grp: config_put.lua's, from the pair groups; shareMicro: a pair
     * store_redis_admin.c sends beside the rows, as stockLeft) */
    static const char *const own[] = {"version", "json", "preq", "holdq", "grp", "shareMicro"};
    char names[256][32];
    size_t n = 0, nfiles = 0;
    size_t count;
    const wr_embed_file_t *all = wr_embed_all(&count);
    for (size_t i = 0; i < count; i++) {
        if (strncmp(all[i].name, "scripts/", 8) != 0)
            continue;
        nfiles++;
        const char *text = (const char *)all[i].data, *end = text + all[i].len;
        for (size_t r = 0; r < sizeof(reads) / sizeof(reads[0]); r++)
            for (const char *p = strstr(text, reads[r]); p; p = strstr(p + 1, reads[r]))
                n = quoted_names(p + strlen(reads[r]), end, names, n, 256);
    }
    assert_true(nfiles >= 10);
    assert_true(n >= 20);
    for (size_t i = 0; i < n; i++) {
        bool ok = false;
        for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++)
            ok = ok || strcmp(names[i], own[k]) == 0;
        for (size_t k = 0; k < wr_qconfig_n_fields; k++)
            ok = ok ||
                 (wr_qconfig_fields[k].store && strcmp(names[i], wr_qconfig_fields[k].store) == 0);
        if (!ok)
            fail_msg("a script reads config hash field '%s', which no row writes", names[i]);
    }
    for (size_t k = 0; k < wr_qconfig_n_fields; k++) {
        const char *st = wr_qconfig_fields[k].store;
        bool read = !st;
        for (size_t i = 0; st && i < n; i++)
            read = read || strcmp(names[i], st) == 0;
        if (!read)
            fail_msg("no script reads store field '%s' (%s)", st, wr_qconfig_fields[k].key);
    }
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
                 " \"returnOrigins\": [\"https://shop.example\", "
                 "\"HTTP://Cart.Example:8080\","
                 " \"https://SHOP.example:443\", \"http://[::1]:3000\", "
                 "\"http://a.example:80\"]}");
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
        "{\"admitPerSecond\": 1, \"inviteKey\": "
        "\"0123456789abcdef0123456789abcde\"}",
        "{\"admitPerSecond\": 1, \"inviteKey\": \"set\"}",
        "{\"admitPerSecond\": 1, \"inviteKey\": 123456789}",
        "{\"admitPerSecond\": 1, \"inviteKey\": true}",
        "{\"admitPerSecond\": 1, \"inviteKey\": "
        "\"0123456789abcdef\\u00000123456789abcdef\"}",
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

/* wr_qconfig_check_fields: each field's own rule, before the store is read
 * (the admin API's PATCH: 400 even while the store is down). It refuses
 * what every PATCH refuses, with the same field, and passes what a PATCH
 * may accept depending on the stored config. */
static void test_check_fields(void **state)
{
    (void)state;
    static const struct {
        const char *body, *field; /* field NULL: passes */
    } cases[] = {
        {"{\"maxActive\": -1}", "maxActive"},
        {"{\"tickMs\": \"fast\"}", "tickMs"},
        {"{\"noSuchField\": 1}", "noSuchField"},
        {"{\"opensAt\": 1700000000}", "opensAt"}, /* seconds, K34 */
        {"{\"paused\": true}", NULL},
        {"{\"inviteKey\": \"set\"}", NULL}, /* the stored key decides */
        {"{\"captcha\": {\"provider\": \"x\", \"siteKey\": \"k\", \"secret\": "
         "\"s\"}}",
         "captcha.provider"},
        {"{\"captcha\": {\"provider\": \"hcaptcha\", \"siteKey\": \"k\", "
         "\"secret\": \"set\"}}",
         NULL}, /* the stored secret decides */
        {"{\"capacity\": {\"connections\": 40, \"serviceMs\": 200}}", NULL},
        {"{}", NULL},
    };
    wr_queue_config_t base, out;
    wr_qconfig_defaults(&base);
    base.admit_per_second = 10;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = load(cases[i].body);
        char field[WR_FIELD_MAX + 1] = "?", msg[256] = "";
        wr_err_t err = wr_qconfig_check_fields(j, field, sizeof(field), msg, sizeof(msg));
        if (!cases[i].field) {
            assert_int_equal(err, WR_OK);
        } else {
            assert_int_equal(err, WR_EINVAL);
            assert_string_equal(field, cases[i].field);
            /* PATCH refuses it too, naming the same field */
            char pfield[WR_FIELD_MAX + 1] = "?", pmsg[256] = "";
            assert_int_equal(
                wr_qconfig_patch(&base, j, &out, pfield, sizeof(pfield), pmsg, sizeof(pmsg)),
                WR_EINVAL);
            assert_string_equal(pfield, field);
            assert_string_equal(pmsg, msg);
        }
        json_decref(j);
    }
}

/* groups and standardShare (API 1.3, "Priority groups and presale codes") */
static void test_groups(void **state)
{
    (void)state;
    wr_queue_config_t c = parse_ok("{\"admitPerSecond\": 1}");
    assert_int_equal(c.n_groups, 0);
    assert_true(c.standard_share == 0.2);
    c = parse_ok("{\"admitPerSecond\": 1, \"groups\": [{\"name\": \"fanclub\"}, "
                 "{\"name\": "
                 "\"vip-1\"}, {\"name\": \"standard-x\"}], \"standardShare\": 0}");
    assert_int_equal(c.n_groups, 3);
    assert_string_equal(c.groups[0], "fanclub");
    assert_string_equal(c.groups[1], "vip-1");
    assert_string_equal(c.groups[2], "standard-x");
    assert_true(c.standard_share == 0);
    c = parse_ok("{\"admitPerSecond\": 1, \"groups\": [{\"name\": \"a\"}, "
                 "{\"name\": \"b\"}, "
                 "{\"name\": \"c\"}, {\"name\": \"d\"}, {\"name\": \"e\"}, "
                 "{\"name\": \"f\"}, "
                 "{\"name\": \"g\"}, {\"name\": "
                 "\"abcdefghijklmnopqrstuvwxyz012345\"}], \"standardShare\": 1}");
    assert_int_equal(c.n_groups, 8);
    assert_string_equal(c.groups[7], "abcdefghijklmnopqrstuvwxyz012345");
    member_bad("groups", "[]", "groups");
    member_bad("groups", "{}", "groups");
    member_bad("groups", "\"fanclub\"", "groups");
    member_bad("groups", "[\"fanclub\"]", "groups");
    member_bad("groups",
               "[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"},{\"name\":\"d\"},"
               "{\"name\":\"e\"},{\"name\":\"f\"},{\"name\":\"g\"},{\"name\":\"h\"},"
               "{\"name\":\"i\"}]",
               "groups");
    member_bad("groups", "[{\"name\":\"standard\"}]", "groups[0].name");
    member_bad("groups", "[{\"name\":\"a\"},{\"name\":\"Fan\"}]", "groups[1].name");
    member_bad("groups", "[{\"name\":\"\"}]", "groups[0].name");
    member_bad("groups", "[{\"name\":\"abcdefghijklmnopqrstuvwxyz0123456\"}]", "groups[0].name");
    member_bad("groups", "[{\"name\":7}]", "groups[0].name");
    member_bad("groups", "[{}]", "groups[0].name");
    member_bad("groups", "[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"a\"}]", "groups[2].name");
    member_bad("groups", "[{\"name\":\"a\",\"share\":1}]", "groups[0].share");
    member_bad("standardShare", "-0.1", "standardShare");
    member_bad("standardShare", "1.01", "standardShare");
    member_bad("standardShare", "\"0.2\"", "standardShare");
    member_bad("standardShare", "null", "standardShare");
    /* the line of a group name */
    c = parse_ok("{\"admitPerSecond\": 1, \"groups\": [{\"name\": \"fanclub\"}, "
                 "{\"name\": "
                 "\"vip\"}]}");
    assert_int_equal(wr_qconfig_group_index(&c, "", 0), 0);
    assert_int_equal(wr_qconfig_group_index(&c, "fanclub", 7), 1);
    assert_int_equal(wr_qconfig_group_index(&c, "vip", 3), 2);
    assert_int_equal(wr_qconfig_group_index(&c, "vi", 2), -1);
    assert_int_equal(wr_qconfig_group_index(&c, "vipx", 4), -1);
    assert_int_equal(wr_qconfig_group_index(&c, "standard", 8), -1);
    char field2[WR_FIELD_MAX], msg2[256];
    /* served (the embedded store keeps groups; a store without them says so) */
    assert_int_equal(wr_qconfig_check_available(&c, field2, sizeof(field2), msg2, sizeof(msg2)),
                     WR_OK);
    /* a PATCH to null removes them (the store's check that nobody is in
     * them is the store's) */
    wr_queue_config_t base = parse_ok("{\"admitPerSecond\": 1, \"groups\": [{\"name\": \"x\"}]}");
    json_t *p = load("{\"groups\": null}");
    char field[WR_FIELD_MAX], msg[256];
    assert_int_equal(wr_qconfig_patch(&base, p, &c, field, sizeof(field), msg, sizeof(msg)), WR_OK);
    assert_int_equal(c.n_groups, 0);
    assert_string_equal(c.groups[0], "");
    json_decref(p);
}

#define TESTS(X)                                                                                   \
    X(test_defaults)                                                                               \
    X(test_full_config)                                                                            \
    X(test_derived_rate)                                                                           \
    X(test_put_errors)                                                                             \
    X(test_target_url_length)                                                                      \
    X(test_unknown_field_name_truncated)                                                           \
    X(test_roundtrip)                                                                              \
    X(test_to_json_shape)                                                                          \
    X(test_autotune)                                                                               \
    X(test_patch)                                                                                  \
    X(test_fail_policy_names)                                                                      \
    X(test_invite_return_fields)                                                                   \
    X(test_session_seconds)                                                                        \
    X(test_idle_timeout_seconds)                                                                   \
    X(test_away_hold_and_poll_max)                                                                 \
    X(test_challenge_bits)                                                                         \
    X(test_opens_at)                                                                               \
    X(test_epoch_ms_fields)                                                                        \
    X(test_page)                                                                                   \
    X(test_captcha)                                                                                \
    X(test_public_log_and_draw)                                                                    \
    X(test_bypass)                                                                                 \
    X(test_table_unique)                                                                           \
    X(test_sale_end_fields)                                                                        \
    X(test_notice_by_lang)                                                                         \
    X(test_table_defaults)                                                                         \
    X(test_table_roundtrip)                                                                        \
    X(test_table_store_values)                                                                     \
    X(test_table_scripts_read_store_fields)                                                        \
    X(test_check_fields)                                                                           \
    X(test_groups)
WR_UNIT_MAIN(NULL, NULL, TESTS)
