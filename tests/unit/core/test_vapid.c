/*
 * test_vapid.c - RFC 8292 VAPID: the example of section 2.4 (its JWT's
 * header and claims byte for byte from our encoder, its signature checked
 * with its k= key by our verifier), our own JWTs (shape, claims, signature
 * r || s verified by OpenSSL through wr_crypto_p256_verify), the header's
 * exact form, the subjects refused, and the per-origin cache.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/b64.h"
#include "core/vapid.h"
#include "unit_main.h"

#define RFC_HEADER "eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9"
#define RFC_CLAIMS                                                                                 \
    "eyJhdWQiOiJodHRwczovL3B1c2guZXhhbXBsZS5uZXQiLCJleHAiOjE0NTM1MjM3NjgsInN1YiI6Im1haWx0bzpwdXNo" \
    "QGV4YW1wbGUuY29tIn0"
#define RFC_SIG                                                                                    \
    "i3CYb7t4xfxCDquptFOepC9GAu_HLGkMlMuCGSK2rpiUfnK9ojFwDXb1JrErtmysazNjjvW2L9OkSSHzvoD1oA"
#define RFC_K                                                                                      \
    "BA1Hxzyi1RUM1b5wjxsn7nGxAszw2u61m164i3MrAIxHF6YK5h4SDYic-dRuU_RCPCfA5aq9ojSwk5Y2EmClBPs"

static size_t dec(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    assert_int_equal(wr_b64url_decode(s, strlen(s), out, cap, &n), WR_OK);
    return n;
}

/* Splits jwt into its three parts (pointers into a copy in buf). */
static void split(const char *jwt, char *buf, char **h, char **c, char **s)
{
    strcpy(buf, jwt);
    *h = buf;
    *c = strchr(buf, '.');
    assert_non_null(*c);
    *(*c)++ = '\0';
    *s = strchr(*c, '.');
    assert_non_null(*s);
    *(*s)++ = '\0';
    assert_null(strchr(*s, '.'));
}

static void test_rfc8292_example(void **state)
{
    (void)state;
    uint8_t priv[32], pub[65], k[65], sig[64];
    assert_int_equal(wr_crypto_p256_keygen(priv, pub), WR_OK);
    char jwt[WR_VAPID_JWT_MAX + 1], buf[WR_VAPID_JWT_MAX + 1], *h, *c, *s;
    size_t n = 0;
    /* our encoding of the example's claims is the example's, byte for byte */
    assert_int_equal(wr_vapid_jwt(priv, "https://push.example.net", 1453523768,
                                  "mailto:push@example.com", jwt, sizeof jwt, &n),
                     WR_OK);
    assert_int_equal(strlen(jwt), n);
    split(jwt, buf, &h, &c, &s);
    assert_string_equal(h, RFC_HEADER);
    assert_string_equal(c, RFC_CLAIMS);
    assert_int_equal(strlen(s), 86); /* 64 bytes */
    /* the example's own signature verifies under its k= with our verifier */
    assert_int_equal(dec(RFC_K, k, sizeof k), 65);
    assert_true(wr_crypto_p256_point_valid(k, 65));
    assert_int_equal(dec(RFC_SIG, sig, sizeof sig), 64);
    const char *signed_part = RFC_HEADER "." RFC_CLAIMS;
    assert_true(wr_crypto_p256_verify(k, signed_part, strlen(signed_part), sig));
    sig[0] ^= 1;
    assert_false(wr_crypto_p256_verify(k, signed_part, strlen(signed_part), sig));
}

static void test_jwt_and_header(void **state)
{
    (void)state;
    uint8_t priv[32], pub[65], sig[64];
    assert_int_equal(wr_crypto_p256_keygen(priv, pub), WR_OK);
    char v[WR_VAPID_AUTH_MAX + 1], buf[WR_VAPID_AUTH_MAX + 1], *h, *c, *s;
    size_t n = 0;
    assert_int_equal(wr_vapid_authorization(priv, pub, "https://fcm.googleapis.com", 1800000000,
                                            "mailto:ops@shop.example", v, sizeof v, &n),
                     WR_OK);
    assert_int_equal(strlen(v), n);
    /* "vapid t=<jwt>, k=<87 chars>" */
    assert_memory_equal(v, "vapid t=", 8);
    char *k = strstr(v, ", k=");
    assert_non_null(k);
    char kb64[100];
    size_t kl = 0;
    assert_int_equal(wr_b64url_encode(pub, 65, kb64, sizeof kb64, &kl), WR_OK);
    assert_int_equal(kl, WR_VAPID_KEY_B64);
    assert_string_equal(k + 4, kb64);
    *k = '\0';
    split(v + 8, buf, &h, &c, &s);
    assert_string_equal(h, RFC_HEADER);
    char claims[300];
    uint8_t raw[300];
    size_t cl = dec(c, raw, sizeof raw);
    memcpy(claims, raw, cl);
    claims[cl] = '\0';
    assert_string_equal(claims, "{\"aud\":\"https://fcm.googleapis.com\",\"exp\":1800000000,"
                                "\"sub\":\"mailto:ops@shop.example\"}");
    assert_int_equal(dec(s, sig, sizeof sig), 64);
    char signed_part[WR_VAPID_JWT_MAX];
    snprintf(signed_part, sizeof signed_part, "%s.%s", h, c);
    assert_true(wr_crypto_p256_verify(pub, signed_part, strlen(signed_part), sig));
    signed_part[5] ^= 1;
    assert_false(wr_crypto_p256_verify(pub, signed_part, strlen(signed_part), sig));

    /* too small buffers and bad arguments */
    assert_int_equal(
        wr_vapid_authorization(priv, pub, "https://a.example", 1, "mailto:a@b.example", v, 100, &n),
        WR_ELIMIT);
    assert_int_equal(wr_vapid_jwt(priv, "", 1, "mailto:a@b.example", v, sizeof v, &n), WR_EINVAL);
    assert_int_equal(wr_vapid_jwt(priv, "https://a.example", 1, "", v, sizeof v, &n), WR_EINVAL);
}

static void test_subjects(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        bool ok;
    } rows[] = {
        {"mailto:ops@shop.example", true},
        {"mailto:push@example.com", true},
        {"https://shop.example/contact", true},
        {"https://shop.example", true},
        {"https://[2001:db8::1]/", true},
        {"mailto:ops@localhost", false},
        {"mailto:ops@LOCALHOST.", false},
        {"mailto:ops@shop.localhost", false},
        {"mailto:ops@notlocalhost.example", true},
        {"https://localhost/", false},
        {"https://localhost:8443/x", false},
        {"https://a.localhost", false},
        {"mailto:", false},
        {"mailto:@shop.example", false},
        {"mailto:ops@", false},
        {"mailto:ops", false},
        {"http://shop.example", false},
        {"https://", false},
        {"ops@shop.example", false},
        {"mailto:o ps@shop.example", false},
        {"mailto:o\"ps@shop.example", false},
        {"", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (wr_vapid_subject_ok(rows[i].s) != rows[i].ok)
            fail_msg("subject %s: want %d", rows[i].s, rows[i].ok);
    }
    char longs[WR_VAPID_SUBJECT_MAX + 2];
    memset(longs, 'a', sizeof longs);
    memcpy(longs, "mailto:a@", 9);
    longs[WR_VAPID_SUBJECT_MAX] = '\0';
    assert_true(wr_vapid_subject_ok(longs));
    longs[WR_VAPID_SUBJECT_MAX] = 'a';
    longs[WR_VAPID_SUBJECT_MAX + 1] = '\0';
    assert_false(wr_vapid_subject_ok(longs));
    assert_false(wr_vapid_subject_ok(NULL));
}

static void test_cache(void **state)
{
    (void)state;
    uint8_t priv[32], pub[65];
    assert_int_equal(wr_crypto_p256_keygen(priv, pub), WR_OK);
    assert_null(wr_vapid_new(priv, "mailto:ops@localhost", 4));
    assert_null(wr_vapid_new(priv, "mailto:ops@shop.example", 0));
    wr_vapid_t *v = wr_vapid_new(priv, "mailto:ops@shop.example", 2);
    assert_non_null(v);
    assert_memory_equal(wr_vapid_public(v), pub, 65);
    const char *a = NULL, *b = NULL;
    char first[WR_VAPID_AUTH_MAX + 1];
    int64_t t0 = 1800000000;
    assert_int_equal(wr_vapid_get(v, "https://push.a.example", t0, &a), WR_OK);
    strcpy(first, a);
    assert_int_equal(wr_vapid_signed(v), 1);
    /* the same origin: the same header until less than an hour is left */
    assert_int_equal(wr_vapid_get(v, "https://push.a.example", t0 + 3600, &a), WR_OK);
    assert_string_equal(a, first);
    assert_int_equal(wr_vapid_get(v, "https://push.a.example",
                                  t0 + WR_VAPID_LIFETIME_S - WR_VAPID_RENEW_S - 1, &a),
                     WR_OK);
    assert_string_equal(a, first);
    assert_int_equal(wr_vapid_signed(v), 1);
    /* another origin: its own (its aud) */
    assert_int_equal(wr_vapid_get(v, "https://push.b.example", t0, &b), WR_OK);
    assert_int_equal(wr_vapid_signed(v), 2);
    assert_string_not_equal(b, first);
    /* near expiry: signed again, exp moved */
    assert_int_equal(
        wr_vapid_get(v, "https://push.a.example", t0 + WR_VAPID_LIFETIME_S - WR_VAPID_RENEW_S, &a),
        WR_OK);
    assert_int_equal(wr_vapid_signed(v), 3);
    assert_string_not_equal(a, first);
    /* a third origin in two slots replaces the one signed longest ago (b) */
    assert_int_equal(wr_vapid_get(v, "https://push.c.example", t0 + 10, &a), WR_OK);
    assert_int_equal(wr_vapid_signed(v), 4);
    assert_int_equal(wr_vapid_get(v, "https://push.b.example", t0 + 11, &b), WR_OK);
    assert_int_equal(wr_vapid_signed(v), 5);
    assert_int_equal(wr_vapid_get(v, "", t0, &a), WR_EINVAL);
    wr_vapid_free(v);
    wr_vapid_free(NULL);
}

#define TESTS(X)                                                                                   \
    X(test_rfc8292_example)                                                                        \
    X(test_jwt_and_header)                                                                         \
    X(test_subjects)                                                                               \
    X(test_cache)
WR_UNIT_MAIN(NULL, NULL, TESTS)
