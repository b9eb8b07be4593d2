/*
 * test_pushsub.c - the subscription's checks, table-driven (each reason
 * of INVALID_SUBSCRIPTION and where it starts: 1,024 vs 1,025 bytes,
 * padding, a point off the curve, 15/16/17-byte auth secrets, languages),
 * the Topic (its length and alphabet, stable per person and queue,
 * different across people, queues and secrets, never the user id), and
 * the packed form a store keeps (wr_pushsub_pack / unpack).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/pushsub.h"
#include "unit_main.h"

/* RFC 8291's user agent key and auth secret: a real browser's shapes */
#define P256DH                                                                                     \
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
/* the same X with the last byte of Y changed: not on the curve */
#define P256DH_OFF                                                                                 \
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw8"
#define AUTH "BTBZMqHH6r4Tts7J_aSIgg"

static const char *const langs[] = {"en", "ko", "zh-Hant", NULL};

static wr_pushsub_reason_t parse_text(const char *text, const wr_pushaddr_allow_t *al,
                                      wr_pushsub_t *s)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (!j)
        fail_msg("bad test JSON %s: %s", text, e.text);
    wr_pushsub_reason_t r = wr_pushsub_parse(j, al, langs, s);
    json_decref(j);
    return r;
}

static void test_reasons(void **state)
{
    (void)state;
    wr_pushaddr_allow_t al;
    memset(&al, 0, sizeof al);
    assert_int_equal(wr_pushaddr_allow_add(&al, "127.0.0.1:9000"), WR_OK);
#define SUB(ep, keys, rest) "{\"endpoint\":" ep ",\"keys\":" keys rest "}"
#define KEYS(p, a)          "{\"p256dh\":\"" p "\",\"auth\":\"" a "\"}"
    static const struct {
        const char *body;
        wr_pushsub_reason_t want;
    } rows[] = {
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ""), WR_PUSHSUB_OK},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ",\"lang\":\"ko\""),
         WR_PUSHSUB_OK},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ",\"lang\":null"),
         WR_PUSHSUB_OK},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ",\"expirationTime\":null"),
         WR_PUSHSUB_OK},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH),
             ",\"expirationTime\":1800000000000"),
         WR_PUSHSUB_OK},
        {SUB("\"http://127.0.0.1:9000/x\"", KEYS(P256DH, AUTH), ""), WR_PUSHSUB_OK},
        /* endpoint */
        {SUB("\"http://push.example.net/x\"", KEYS(P256DH, AUTH), ""), WR_PUSHSUB_ENDPOINT},
        {SUB("\"http://127.0.0.1:9001/x\"", KEYS(P256DH, AUTH), ""), WR_PUSHSUB_ENDPOINT},
        {SUB("\"ftp://push.example.net/x\"", KEYS(P256DH, AUTH), ""), WR_PUSHSUB_ENDPOINT},
        {SUB("\"push.example.net/x\"", KEYS(P256DH, AUTH), ""), WR_PUSHSUB_ENDPOINT},
        {SUB("\"\"", KEYS(P256DH, AUTH), ""), WR_PUSHSUB_ENDPOINT},
        {SUB("42", KEYS(P256DH, AUTH), ""), WR_PUSHSUB_ENDPOINT},
        {SUB("\"https://push.example.net/x\\u0000y\"", KEYS(P256DH, AUTH), ""),
         WR_PUSHSUB_ENDPOINT},
        {"{\"keys\":" KEYS(P256DH, AUTH) "}", WR_PUSHSUB_ENDPOINT},
        {"[]", WR_PUSHSUB_ENDPOINT},
        {"\"https://push.example.net/x\"", WR_PUSHSUB_ENDPOINT},
        /* p256dh */
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH_OFF, AUTH), ""), WR_PUSHSUB_P256DH},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH "=", AUTH), ""), WR_PUSHSUB_P256DH},
        {SUB("\"https://push.example.net/x\"", KEYS("BCVxsr7N", AUTH), ""), WR_PUSHSUB_P256DH},
        {SUB("\"https://push.example.net/x\"",
             KEYS("BCVxsr7N+eNgVRqvHtD0zTZsEc6/"
                  "VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
                  AUTH),
             ""),
         WR_PUSHSUB_P256DH},
        {SUB("\"https://push.example.net/x\"", "{\"auth\":\"" AUTH "\"}", ""), WR_PUSHSUB_P256DH},
        {SUB("\"https://push.example.net/x\"", "null", ""), WR_PUSHSUB_P256DH},
        {"{\"endpoint\":\"https://push.example.net/x\"}", WR_PUSHSUB_P256DH},
        /* auth */
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, "BTBZMqHH6r4Tts7J_aSIgg=="), ""),
         WR_PUSHSUB_AUTH},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, "BTBZMqHH6r4Tts7J_aSI"), ""),
         WR_PUSHSUB_AUTH}, /* 15 bytes */
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, "BTBZMqHH6r4Tts7J_aSIgggg"), ""),
         WR_PUSHSUB_AUTH}, /* 18 bytes */
        {SUB("\"https://push.example.net/x\"", "{\"p256dh\":\"" P256DH "\",\"auth\":16}", ""),
         WR_PUSHSUB_AUTH},
        /* lang */
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ",\"lang\":\"xx\""),
         WR_PUSHSUB_LANG},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ",\"lang\":\"\""),
         WR_PUSHSUB_LANG},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ",\"lang\":7"), WR_PUSHSUB_LANG},
        {SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ",\"lang\":\"zh\""),
         WR_PUSHSUB_LANG},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        wr_pushsub_t s;
        wr_pushsub_reason_t r = parse_text(rows[i].body, &al, &s);
        if (r != rows[i].want)
            fail_msg("row %zu %s: got %s, want %s", i, rows[i].body, wr_pushsub_reason_name(r),
                     wr_pushsub_reason_name(rows[i].want));
        if (r != WR_PUSHSUB_OK) {
            assert_int_equal(s.endpoint[0], 0); /* zeroed */
            assert_int_equal(s.p256dh[0], 0);
        }
    }
    /* the fields of a good one; a lang takes the offered code's spelling */
    wr_pushsub_t s;
    assert_int_equal(parse_text(SUB("\"https://push.example.net/x?y=1\"", KEYS(P256DH, AUTH),
                                    ",\"lang\":\"ZH-hant\""),
                                &al, &s),
                     WR_PUSHSUB_OK);
    assert_string_equal(s.endpoint, "https://push.example.net/x?y=1");
    assert_int_equal(s.p256dh[0], 0x04);
    assert_int_equal(s.p256dh[1], 0x25);
    assert_int_equal(s.auth[0], 0x05);
    assert_int_equal(s.auth[15], 0x82);
    assert_string_equal(s.lang, "zh-Hant");
    assert_int_equal(
        parse_text(SUB("\"https://push.example.net/x\"", KEYS(P256DH, AUTH), ""), NULL, &s),
        WR_PUSHSUB_OK);
    assert_string_equal(s.lang, "");

    /* 1,024 bytes of endpoint pass, 1,025 do not */
    char ep[WR_PUSHADDR_ENDPOINT_MAX + 2], body[2000];
    memset(ep, 'a', sizeof ep);
    memcpy(ep, "https://p.example/", 18);
    ep[WR_PUSHADDR_ENDPOINT_MAX] = '\0';
    snprintf(body, sizeof body, SUB("\"%s\"", KEYS(P256DH, AUTH), ""), ep);
    assert_int_equal(parse_text(body, &al, &s), WR_PUSHSUB_OK);
    ep[WR_PUSHADDR_ENDPOINT_MAX] = 'a';
    ep[WR_PUSHADDR_ENDPOINT_MAX + 1] = '\0';
    snprintf(body, sizeof body, SUB("\"%s\"", KEYS(P256DH, AUTH), ""), ep);
    assert_int_equal(parse_text(body, &al, &s), WR_PUSHSUB_ENDPOINT);
    assert_int_equal(wr_pushsub_parse(NULL, NULL, langs, &s), WR_PUSHSUB_ENDPOINT);
    assert_string_equal(wr_pushsub_reason_name(WR_PUSHSUB_P256DH), "p256dh");
}

static void test_topic(void **state)
{
    (void)state;
    const uint8_t secret[] = "0123456789abcdef0123456789abcdef";
    char a[WR_PUSHSUB_TOPIC_LEN + 1], b[WR_PUSHSUB_TOPIC_LEN + 1];
    assert_int_equal(wr_pushsub_topic(secret, 32, "sale", "u-123", a), WR_OK);
    assert_int_equal(strlen(a), WR_PUSHSUB_TOPIC_LEN);
    for (size_t i = 0; a[i]; i++)
        assert_non_null(
            strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", a[i]));
    assert_null(strstr(a, "u-123"));
    assert_int_equal(wr_pushsub_topic(secret, 32, "sale", "u-123", b), WR_OK);
    assert_string_equal(a, b); /* stable */
    assert_int_equal(wr_pushsub_topic(secret, 32, "sale", "u-124", b), WR_OK);
    assert_string_not_equal(a, b);
    assert_int_equal(wr_pushsub_topic(secret, 32, "sale2", "u-123", b), WR_OK);
    assert_string_not_equal(a, b);
    /* the split between queue and user is unambiguous */
    assert_int_equal(wr_pushsub_topic(secret, 32, "sal", "eu-123", b), WR_OK);
    assert_string_not_equal(a, b);
    assert_int_equal(wr_pushsub_topic(secret, 31, "sale", "u-123", b), WR_OK);
    assert_string_not_equal(a, b);
    assert_int_equal(wr_pushsub_topic(secret, 0, "sale", "u-123", b), WR_EINVAL);
    assert_int_equal(wr_pushsub_topic(secret, 32, "", "u-123", b), WR_EINVAL);
    assert_int_equal(wr_pushsub_topic(secret, 32, "sale", "", b), WR_EINVAL);
}

/* The packed form a store keeps: back to the same subscription, at the
 * longest endpoint and language too; anything else refused. */
static void test_pack(void **state)
{
    (void)state;
    wr_pushsub_t s, back;
    assert_int_equal(parse_text(SUB("\"https://push.example.net/x?y=1\"", KEYS(P256DH, AUTH),
                                    ",\"lang\":\"zh-Hant\""),
                                NULL, &s),
                     WR_PUSHSUB_OK);
    char out[WR_PUSHSUB_PACKED_MAX + 1];
    size_t n = 0;
    assert_int_equal(wr_pushsub_pack(&s, out, sizeof out, &n), WR_OK);
    assert_string_equal(out, P256DH " " AUTH " zh-Hant https://push.example.net/x?y=1");
    assert_int_equal(n, strlen(out));
    assert_int_equal(wr_pushsub_unpack(out, n, &back), WR_OK);
    assert_memory_equal(&back, &s, sizeof s);
    /* no language; the longest of both */
    memset(s.lang, 0, sizeof s.lang);
    assert_int_equal(wr_pushsub_pack(&s, out, sizeof out, &n), WR_OK);
    assert_string_equal(out, P256DH " " AUTH "  https://push.example.net/x?y=1");
    assert_int_equal(wr_pushsub_unpack(out, n, &back), WR_OK);
    assert_memory_equal(&back, &s, sizeof s);
    memset(s.lang, 'a', WR_PUSHSUB_LANG_MAX);
    memset(s.endpoint, 'e', WR_PUSHADDR_ENDPOINT_MAX);
    assert_int_equal(wr_pushsub_pack(&s, out, sizeof out, &n), WR_OK);
    assert_int_equal(n, WR_PUSHSUB_PACKED_MAX);
    assert_int_equal(wr_pushsub_pack(&s, out, sizeof out - 1, &n), WR_ELIMIT);
    assert_int_equal(wr_pushsub_pack(&s, out, sizeof out, &n), WR_OK);
    assert_int_equal(wr_pushsub_unpack(out, n, &back), WR_OK);
    assert_memory_equal(&back, &s, sizeof s);
    /* refused: cut short, a key of another length or off the curve, an
     * endpoint of 1,025 bytes or none, a language too long */
    static const char *const bad[] = {
        "",
        P256DH,
        P256DH " " AUTH,
        P256DH " " AUTH " en",
        P256DH " " AUTH " en ",
        P256DH_OFF " " AUTH " en https://p/x",
        P256DH " BTBZMqHH6r4Tts7J_aSI en https://p/x",
        P256DH " " AUTH " aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa https://p/x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(wr_pushsub_unpack(bad[i], strlen(bad[i]), &back), WR_EINVAL);
    char longer[WR_PUSHSUB_PACKED_MAX + 2];
    memcpy(longer, out, n);
    longer[n] = 'e';
    assert_int_equal(wr_pushsub_unpack(longer, n + 1, &back), WR_EINVAL);
    char nul[] = P256DH " " AUTH " en https://p/\0x";
    assert_int_equal(wr_pushsub_unpack(nul, sizeof nul - 1, &back), WR_EINVAL);
}

#define TESTS(X)                                                                                   \
    X(test_reasons)                                                                                \
    X(test_topic)                                                                                  \
    X(test_pack)
WR_UNIT_MAIN(NULL, NULL, TESTS)
