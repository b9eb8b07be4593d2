/*
 * test_pushcrypt.c - RFC 8291 message encryption: Appendix A's example
 * byte for byte (its keys, salt and auth secret give exactly its body),
 * the decryption of that body, a fresh message decrypted by the receiver's
 * side, the limits, and refusals (a bad point, a changed byte, a wrong
 * auth secret).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/b64.h"
#include "core/pushcrypt.h"
#include "unit_main.h"

/* RFC 8291 Appendix A (and section 5) */
#define PLAINTEXT  "When I grow up, I want to be a watermelon"
#define AS_PRIVATE "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
#define AS_PUBLIC                                                                                  \
    "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
#define UA_PRIVATE "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
#define UA_PUBLIC                                                                                  \
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
#define SALT "DGv6ra1nlYgDCS1FRnbzlw"
#define AUTH "BTBZMqHH6r4Tts7J_aSIgg"
#define BODY                                                                                       \
    "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_"                                               \
    "c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6"                                              \
    "TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_"    \
    "Qulcy4a-fN"

static size_t dec(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    assert_int_equal(wr_b64url_decode(s, strlen(s), out, cap, &n), WR_OK);
    return n;
}

static void test_rfc8291_vector(void **state)
{
    (void)state;
    uint8_t as_priv[32], as_pub[65], ua_pub[65], salt[16], auth[16], want[200], body[200];
    assert_int_equal(dec(AS_PRIVATE, as_priv, sizeof as_priv), 32);
    assert_int_equal(dec(AS_PUBLIC, as_pub, sizeof as_pub), 65);
    assert_int_equal(dec(UA_PUBLIC, ua_pub, sizeof ua_pub), 65);
    assert_int_equal(dec(SALT, salt, sizeof salt), 16);
    assert_int_equal(dec(AUTH, auth, sizeof auth), 16);
    size_t want_len = dec(BODY, want, sizeof want);
    assert_int_equal(want_len, 144);

    /* the key pair of the example is consistent with our derivation */
    uint8_t pub[65];
    assert_int_equal(wr_crypto_p256_public(as_priv, pub), WR_OK);
    assert_memory_equal(pub, as_pub, 65);

    size_t n = 0;
    assert_int_equal(wr_pushcrypt_encrypt_with(as_priv, salt, ua_pub, auth,
                                               (const uint8_t *)PLAINTEXT, strlen(PLAINTEXT), body,
                                               sizeof body, &n),
                     WR_OK);
    assert_int_equal(n, want_len);
    assert_int_equal(n, WR_PUSHCRYPT_BODY_LEN(strlen(PLAINTEXT)));
    assert_memory_equal(body, want, n);
    /* the header: salt, rs 4096, idlen 65, keyid = the server's point */
    assert_memory_equal(body, salt, 16);
    assert_int_equal(body[16], 0);
    assert_int_equal(body[17], 0);
    assert_int_equal(body[18], 0x10);
    assert_int_equal(body[19], 0);
    assert_int_equal(body[20], 65);
    assert_memory_equal(body + 21, as_pub, 65);

    /* the receiver reads it */
    uint8_t ua_priv[32], pt[100];
    dec(UA_PRIVATE, ua_priv, sizeof ua_priv);
    size_t m = 0;
    assert_int_equal(wr_pushcrypt_decrypt(ua_priv, auth, want, want_len, pt, sizeof pt, &m), WR_OK);
    assert_int_equal(m, strlen(PLAINTEXT));
    assert_memory_equal(pt, PLAINTEXT, m);
}

static void test_roundtrip_fresh(void **state)
{
    (void)state;
    uint8_t ua_priv[32], ua_pub[65], auth[16], body[WR_PUSHCRYPT_RS], pt[WR_PUSHCRYPT_RS];
    assert_int_equal(wr_crypto_p256_keygen(ua_priv, ua_pub), WR_OK);
    assert_int_equal(wr_crypto_random(auth, sizeof auth), WR_OK);
    const char *msg = "{\"queue\":\"sale\",\"status\":\"admitted\"}";
    size_t n = 0, m = 0;
    assert_int_equal(wr_pushcrypt_encrypt(ua_pub, auth, (const uint8_t *)msg, strlen(msg), body,
                                          sizeof body, &n),
                     WR_OK);
    assert_int_equal(n, WR_PUSHCRYPT_BODY_LEN(strlen(msg)));
    assert_int_equal(wr_pushcrypt_decrypt(ua_priv, auth, body, n, pt, sizeof pt, &m), WR_OK);
    assert_int_equal(m, strlen(msg));
    assert_memory_equal(pt, msg, m);

    /* two messages: fresh salt and key each time */
    uint8_t body2[WR_PUSHCRYPT_RS];
    size_t n2 = 0;
    assert_int_equal(wr_pushcrypt_encrypt(ua_pub, auth, (const uint8_t *)msg, strlen(msg), body2,
                                          sizeof body2, &n2),
                     WR_OK);
    assert_int_equal(n2, n);
    assert_memory_not_equal(body, body2, 16);
    assert_memory_not_equal(body + 21, body2 + 21, 65);

    /* a changed byte anywhere after the salt, or another auth secret: refused */
    body[n - 1] ^= 1;
    assert_int_equal(wr_pushcrypt_decrypt(ua_priv, auth, body, n, pt, sizeof pt, &m), WR_EINVAL);
    body[n - 1] ^= 1;
    auth[0] ^= 1;
    assert_int_equal(wr_pushcrypt_decrypt(ua_priv, auth, body, n, pt, sizeof pt, &m), WR_EINVAL);
    auth[0] ^= 1;
    body[20] = 64;
    assert_int_equal(wr_pushcrypt_decrypt(ua_priv, auth, body, n, pt, sizeof pt, &m), WR_EINVAL);
}

static void test_limits(void **state)
{
    (void)state;
    uint8_t ua_priv[32], ua_pub[65], auth[16] = {1}, body[WR_PUSHCRYPT_RS + 1];
    static uint8_t pt[WR_PUSHCRYPT_PLAIN_MAX + 1], back[WR_PUSHCRYPT_PLAIN_MAX];
    memset(pt, 'x', sizeof pt);
    assert_int_equal(wr_crypto_p256_keygen(ua_priv, ua_pub), WR_OK);
    assert_int_equal(WR_PUSHCRYPT_PLAIN_MAX, 3993);
    size_t n = 0, m = 0;
    /* the largest plaintext makes a body of exactly 4096 bytes */
    assert_int_equal(
        wr_pushcrypt_encrypt(ua_pub, auth, pt, WR_PUSHCRYPT_PLAIN_MAX, body, sizeof body, &n),
        WR_OK);
    assert_int_equal(n, WR_PUSHCRYPT_RS);
    assert_int_equal(wr_pushcrypt_decrypt(ua_priv, auth, body, n, back, sizeof back, &m), WR_OK);
    assert_int_equal(m, WR_PUSHCRYPT_PLAIN_MAX);
    assert_int_equal(
        wr_pushcrypt_encrypt(ua_pub, auth, pt, WR_PUSHCRYPT_PLAIN_MAX + 1, body, sizeof body, &n),
        WR_ELIMIT);
    /* too small an output */
    assert_int_equal(
        wr_pushcrypt_encrypt(ua_pub, auth, pt, 10, body, WR_PUSHCRYPT_BODY_LEN(10) - 1, &n),
        WR_ELIMIT);
    /* an empty message is still one record */
    assert_int_equal(wr_pushcrypt_encrypt(ua_pub, auth, NULL, 0, body, sizeof body, &n), WR_OK);
    assert_int_equal(n, WR_PUSHCRYPT_BODY_LEN(0));
    assert_int_equal(wr_pushcrypt_decrypt(ua_priv, auth, body, n, back, sizeof back, &m), WR_OK);
    assert_int_equal(m, 0);
    /* a point off the curve */
    uint8_t bad[65];
    memcpy(bad, ua_pub, 65);
    bad[64] ^= 1;
    assert_int_equal(wr_pushcrypt_encrypt(bad, auth, pt, 10, body, sizeof body, &n), WR_EINVAL);
    assert_int_equal(wr_pushcrypt_encrypt(NULL, auth, pt, 10, body, sizeof body, &n), WR_EINVAL);
}

#define TESTS(X)                                                                                   \
    X(test_rfc8291_vector)                                                                         \
    X(test_roundtrip_fresh)                                                                        \
    X(test_limits)
WR_UNIT_MAIN(NULL, NULL, TESTS)
