/*
 * test_crypto.c - the primitives over libcrypto: HMAC-SHA256 against
 * RFC 4231, SHA-256 and SHA-1 against FIPS 180-2, random bytes, the
 * constant-time comparison, wiping, and the cookie-key derivation against
 * a value computed independently (Python: hmac.new(secret,
 * b"waitroom cookie v1", sha256)).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/crypto.h"
#include "unit_main.h"

/* RFC 4231 test case 2. */
static void test_hmac_rfc4231(void **state)
{
    (void)state;
    static const uint8_t want[32] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e,
                                     0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
                                     0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
                                     0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
    const char *data = "what do ya want for nothing?";
    uint8_t mac[WR_CRYPTO_MAC_LEN];

    assert_int_equal(wr_crypto_hmac_sha256((const uint8_t *)"Jefe", 4, data, strlen(data), mac),
                     WR_OK);
    assert_memory_equal(mac, want, 32);
    assert_int_equal(wr_crypto_hmac_sha256(NULL, 4, data, 1, mac), WR_EINVAL);
    /* An empty key and empty data are valid HMAC inputs. */
    assert_int_equal(wr_crypto_hmac_sha256(NULL, 0, NULL, 0, mac), WR_OK);
}

static void test_random(void **state)
{
    (void)state;
    uint8_t a[32], b[32], zero[32] = {0};

    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    assert_int_equal(wr_crypto_random(a, sizeof a), WR_OK);
    assert_int_equal(wr_crypto_random(b, sizeof b), WR_OK);
    assert_memory_not_equal(a, b, 32);
    assert_memory_not_equal(a, zero, 32);
    assert_int_equal(wr_crypto_random(a, 0), WR_OK);
    assert_int_equal(wr_crypto_random(NULL, 4), WR_EINVAL);
}

static void test_equal_and_wipe(void **state)
{
    (void)state;
    uint8_t a[16], b[16];
    memset(a, 7, sizeof a);
    memset(b, 7, sizeof b);
    assert_true(wr_crypto_equal(a, b, sizeof a));
    b[15] = 8;
    assert_false(wr_crypto_equal(a, b, sizeof a));
    assert_true(wr_crypto_equal(a, b, 15));
    assert_true(wr_crypto_equal(a, b, 0));
    wr_crypto_wipe(a, sizeof a);
    for (size_t i = 0; i < sizeof a; i++)
        assert_int_equal(a[i], 0);
    wr_crypto_wipe(NULL, 0);
}

static void test_cookie_key(void **state)
{
    (void)state;
    static const uint8_t want[32] = {0x1e, 0x1f, 0x10, 0xc3, 0xa9, 0x4c, 0x38, 0xfe,
                                     0xc7, 0x6a, 0xd5, 0xa7, 0x1d, 0x20, 0xf7, 0x05,
                                     0xe9, 0xba, 0xdb, 0x69, 0x1a, 0x4f, 0x57, 0x0e,
                                     0x8c, 0x25, 0xf4, 0x0c, 0x56, 0xad, 0xad, 0xe4};
    const char *secret = "0123456789abcdef0123456789abcdef";
    uint8_t key[WR_CRYPTO_KEY_LEN];
    assert_int_equal(wr_crypto_cookie_key((const uint8_t *)secret, strlen(secret), key), WR_OK);
    assert_memory_equal(key, want, sizeof want);
    assert_int_equal(wr_crypto_cookie_key(NULL, 4, key), WR_EINVAL);
    assert_int_equal(wr_crypto_cookie_key(NULL, 0, key), WR_EINVAL);
    assert_int_equal(wr_crypto_cookie_key((const uint8_t *)secret, 0, key), WR_EINVAL);
    /* A second pair, computed independently as well. */
    static const uint8_t want2[32] = {0x75, 0x0c, 0x7a, 0x67, 0x57, 0x9e, 0x25, 0x0d,
                                      0x1b, 0x5a, 0x68, 0x78, 0x8e, 0x8c, 0x92, 0x62,
                                      0xc9, 0x7d, 0x6a, 0xb0, 0xaa, 0xc5, 0xc2, 0x39,
                                      0x15, 0x9d, 0x4f, 0x06, 0x58, 0x13, 0xbc, 0xe1};
    assert_int_equal(wr_crypto_cookie_key((const uint8_t *)"secret", 6, key), WR_OK);
    assert_memory_equal(key, want2, sizeof want2);
}

/* FIPS 180-2 example "abc", given in two pieces. */
static void test_sha256(void **state)
{
    (void)state;
    static const uint8_t want[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                     0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                     0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                     0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    uint8_t got[WR_CRYPTO_SHA256_LEN];
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    assert_non_null(h);
    assert_int_equal(wr_crypto_sha256_update(h, "a", 1), WR_OK);
    assert_int_equal(wr_crypto_sha256_update(h, NULL, 0), WR_OK);
    assert_int_equal(wr_crypto_sha256_update(h, "bc", 2), WR_OK);
    assert_int_equal(wr_crypto_sha256_final(h, got), WR_OK);
    assert_memory_equal(got, want, sizeof want);
    wr_crypto_sha256_free(h);
    wr_crypto_sha256_free(NULL);
}

static void test_sha1_hex(void **state)
{
    (void)state;
    char out[WR_CRYPTO_SHA1_HEX + 1];
    assert_int_equal(wr_crypto_sha1_hex("abc", 3, out), WR_OK);
    assert_string_equal(out, "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert_int_equal(wr_crypto_sha1_hex(NULL, 0, out), WR_OK);
    assert_string_equal(out, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    assert_int_equal(wr_crypto_sha1_hex(NULL, 1, out), WR_EINVAL);
}

/* RFC 8032 section 7.1, TEST 1 (empty message) and TEST 2 (one byte). */
static void test_ed25519_rfc8032(void **state)
{
    (void)state;
    static const uint8_t seed1[32] = {0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60,
                                      0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
                                      0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19,
                                      0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60};
    static const uint8_t pub1[32] = {0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7,
                                     0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a,
                                     0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25,
                                     0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a};
    static const uint8_t sig1[64] = {
        0xe5, 0x56, 0x43, 0x00, 0xc3, 0x60, 0xac, 0x72, 0x90, 0x86, 0xe2, 0xcc, 0x80,
        0x6e, 0x82, 0x8a, 0x84, 0x87, 0x7f, 0x1e, 0xb8, 0xe5, 0xd9, 0x74, 0xd8, 0x73,
        0xe0, 0x65, 0x22, 0x49, 0x01, 0x55, 0x5f, 0xb8, 0x82, 0x15, 0x90, 0xa3, 0x3b,
        0xac, 0xc6, 0x1e, 0x39, 0x70, 0x1c, 0xf9, 0xb4, 0x6b, 0xd2, 0x5b, 0xf5, 0xf0,
        0x59, 0x5b, 0xbe, 0x24, 0x65, 0x51, 0x41, 0x43, 0x8e, 0x7a, 0x10, 0x0b};
    uint8_t pub[32], sig[64];
    assert_int_equal(wr_crypto_ed25519_public(seed1, pub), WR_OK);
    assert_memory_equal(pub, pub1, 32);
    assert_int_equal(wr_crypto_ed25519_sign(seed1, NULL, 0, sig), WR_OK);
    assert_memory_equal(sig, sig1, 64);
    assert_true(wr_crypto_ed25519_verify(pub1, NULL, 0, sig1));
    assert_false(wr_crypto_ed25519_verify(pub1, "x", 1, sig1));
    sig[0] ^= 1;
    assert_false(wr_crypto_ed25519_verify(pub1, NULL, 0, sig));
    assert_false(wr_crypto_ed25519_verify(NULL, NULL, 0, sig1));

    /* a fresh key signs and verifies; another key does not */
    uint8_t s2[32], p2[32], p3[32];
    assert_int_equal(wr_crypto_ed25519_keygen(s2, p2), WR_OK);
    assert_int_equal(wr_crypto_ed25519_public(s2, p3), WR_OK);
    assert_memory_equal(p2, p3, 32);
    assert_int_equal(wr_crypto_ed25519_sign(s2, "hello", 5, sig), WR_OK);
    assert_true(wr_crypto_ed25519_verify(p2, "hello", 5, sig));
    assert_false(wr_crypto_ed25519_verify(pub1, "hello", 5, sig));
}

static void test_ed25519_pem(void **state)
{
    (void)state;
    uint8_t seed[32], pub[32], back[32];
    char pem[WR_CRYPTO_PEM_MAX];
    size_t len = 0;
    assert_int_equal(wr_crypto_ed25519_keygen(seed, pub), WR_OK);
    assert_int_equal(wr_crypto_ed25519_to_pem(seed, pem, sizeof pem, &len), WR_OK);
    assert_int_equal(strlen(pem), len);
    assert_non_null(strstr(pem, "-----BEGIN PRIVATE KEY-----\n"));
    assert_int_equal(wr_crypto_ed25519_from_pem(pem, len, back), WR_OK);
    assert_memory_equal(seed, back, 32);
    assert_int_equal(wr_crypto_ed25519_to_pem(seed, pem, 20, &len), WR_ELIMIT);
    /* RFC 8410 section 10.3's example key: PKCS#8, as openssl genpkey writes */
    static const char rfc8410[] =
        "-----BEGIN PRIVATE KEY-----\n"
        "MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n"
        "-----END PRIVATE KEY-----\n";
    static const uint8_t want[32] = {0xd4, 0xee, 0x72, 0xdb, 0xf9, 0x13, 0x58, 0x4a,
                                     0xd5, 0xb6, 0xd8, 0xf1, 0xf7, 0x69, 0xf8, 0xad,
                                     0x3a, 0xfe, 0x7c, 0x28, 0xcb, 0xf1, 0xd4, 0xfb,
                                     0xe0, 0x97, 0xa8, 0x8f, 0x44, 0x75, 0x58, 0x42};
    assert_int_equal(wr_crypto_ed25519_from_pem(rfc8410, sizeof rfc8410 - 1, back), WR_OK);
    assert_memory_equal(back, want, 32);
    assert_int_equal(wr_crypto_ed25519_from_pem("not a key", 9, back), WR_EINVAL);
    /* a key of another type is refused, not converted */
    static const char p256[] = "-----BEGIN PRIVATE KEY-----\n"
                               "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvfynuBlMmozDEQfc\n"
                               "JzL4YWa5F6Xqn5P3Ck0RbmdNxNShRANCAASFIGjQKDGLehyx5/dmVzu6EHl1xtHK\n"
                               "cgX6AnuODBRAQNghxqVhrcCWafOi34QgUA8o4sdKrT+Yo3PwSMf7DNuF\n"
                               "-----END PRIVATE KEY-----\n";
    assert_int_equal(wr_crypto_ed25519_from_pem(p256, sizeof p256 - 1, back), WR_EINVAL);
}

/* RFC 5869 Appendix A.1 (test case 1) and A.3 (no salt, no info). */
static void test_hkdf_rfc5869(void **state)
{
    (void)state;
    uint8_t ikm[22], salt[13], info[10], okm[42];
    memset(ikm, 0x0b, sizeof ikm);
    for (int i = 0; i < 13; i++)
        salt[i] = (uint8_t)i;
    for (int i = 0; i < 10; i++)
        info[i] = (uint8_t)(0xf0 + i);
    static const uint8_t want[42] = {
        0x3c, 0xb2, 0x5f, 0x25, 0xfa, 0xac, 0xd5, 0x7a, 0x90, 0x43, 0x4f, 0x64, 0xd0, 0x36,
        0x2f, 0x2a, 0x2d, 0x2d, 0x0a, 0x90, 0xcf, 0x1a, 0x5a, 0x4c, 0x5d, 0xb0, 0x2d, 0x56,
        0xec, 0xc4, 0xc5, 0xbf, 0x34, 0x00, 0x72, 0x08, 0xd5, 0xb8, 0x87, 0x18, 0x58, 0x65};
    assert_int_equal(wr_crypto_hkdf_sha256(salt, sizeof salt, ikm, sizeof ikm, info, sizeof info,
                                           okm, sizeof okm),
                     WR_OK);
    assert_memory_equal(okm, want, 42);
    static const uint8_t want3[8] = {0x8d, 0xa4, 0xe7, 0x75, 0xa5, 0x63, 0xc1, 0x8f};
    assert_int_equal(wr_crypto_hkdf_sha256(NULL, 0, ikm, sizeof ikm, NULL, 0, okm, 8), WR_OK);
    assert_memory_equal(okm, want3, 8);
    assert_int_equal(wr_crypto_hkdf_sha256(NULL, 0, ikm, sizeof ikm, NULL, 0, okm, 0), WR_EINVAL);
    assert_int_equal(wr_crypto_hkdf_sha256(NULL, 0, ikm, sizeof ikm, NULL, 0, okm, 255 * 32 + 1),
                     WR_EINVAL);
}

/* The GCM specification's test case 2 (AES-128, zero key and nonce, one
 * zero block), then tampering. */
static void test_aes128gcm(void **state)
{
    (void)state;
    uint8_t key[16] = {0}, nonce[12] = {0}, pt[16] = {0}, ct[32], back[16];
    static const uint8_t want[32] = {0x03, 0x88, 0xda, 0xce, 0x60, 0xb6, 0xa3, 0x92,
                                     0xf3, 0x28, 0xc2, 0xb9, 0x71, 0xb2, 0xfe, 0x78,
                                     0xab, 0x6e, 0x47, 0xd4, 0x2c, 0xec, 0x13, 0xbd,
                                     0xf5, 0x3a, 0x67, 0xb2, 0x12, 0x57, 0xbd, 0xdf};
    assert_int_equal(wr_crypto_aes128gcm_seal(key, nonce, pt, 16, ct), WR_OK);
    assert_memory_equal(ct, want, 32);
    memset(back, 0x55, sizeof back);
    assert_int_equal(wr_crypto_aes128gcm_open(key, nonce, ct, 32, back), WR_OK);
    assert_memory_equal(back, pt, 16);
    ct[31] ^= 1;
    assert_int_equal(wr_crypto_aes128gcm_open(key, nonce, ct, 32, back), WR_EINVAL);
    assert_memory_equal(back, pt, 16); /* wiped: zeros */
    assert_int_equal(wr_crypto_aes128gcm_open(key, nonce, ct, 15, back), WR_EINVAL);
}

/* A SEC 1 key made by `openssl ecparam -genkey -name prime256v1`. */
#define SEC1_PEM                                                                                   \
    "-----BEGIN EC PRIVATE KEY-----\n"                                                             \
    "MHcCAQEEIF9wE7i+J7e6izMgiOHk2lS8emPE041vGaZfgb3YHEeHoAoGCCqGSM49\n"                           \
    "AwEHoUQDQgAEs+nQVc87F+ZUbtx6dPWnRa/Nzmmw7PWqIS1ssR5uEKc6aaem/6mT\n"                           \
    "tzgjKrCA5C2X5z6JkBoeHKh+egSA+xCajg==\n"                                                       \
    "-----END EC PRIVATE KEY-----\n"

static void test_p256(void **state)
{
    (void)state;
    uint8_t a[32], apub[65], b[32], bpub[65], s1[32], s2[32], sig[64], sig2[64];
    assert_int_equal(wr_crypto_p256_keygen(a, apub), WR_OK);
    assert_int_equal(wr_crypto_p256_keygen(b, bpub), WR_OK);
    assert_int_equal(apub[0], 0x04);
    assert_true(wr_crypto_p256_point_valid(apub, 65));
    assert_false(wr_crypto_p256_point_valid(apub, 64));
    uint8_t bad[65];
    memcpy(bad, apub, 65);
    bad[64] ^= 1; /* off the curve */
    assert_false(wr_crypto_p256_point_valid(bad, 65));
    bad[64] ^= 1;
    bad[0] = 0x02;
    assert_false(wr_crypto_p256_point_valid(bad, 65));
    memset(bad, 0xff, 65); /* coordinates >= p */
    bad[0] = 0x04;
    assert_false(wr_crypto_p256_point_valid(bad, 65));

    /* ECDH agrees both ways */
    assert_int_equal(wr_crypto_p256_ecdh(a, bpub, s1), WR_OK);
    assert_int_equal(wr_crypto_p256_ecdh(b, apub, s2), WR_OK);
    assert_memory_equal(s1, s2, 32);
    memcpy(bad, bpub, 65);
    bad[40] ^= 1;
    assert_int_equal(wr_crypto_p256_ecdh(a, bad, s1), WR_EINVAL);

    /* ES256: r || s, randomized, verified; a changed message or byte fails */
    assert_int_equal(wr_crypto_p256_sign(a, "hello", 5, sig), WR_OK);
    assert_int_equal(wr_crypto_p256_sign(a, "hello", 5, sig2), WR_OK);
    assert_memory_not_equal(sig, sig2, 64);
    assert_true(wr_crypto_p256_verify(apub, "hello", 5, sig));
    assert_true(wr_crypto_p256_verify(apub, "hello", 5, sig2));
    assert_false(wr_crypto_p256_verify(apub, "hellp", 5, sig));
    assert_false(wr_crypto_p256_verify(bpub, "hello", 5, sig));
    sig[10] ^= 1;
    assert_false(wr_crypto_p256_verify(apub, "hello", 5, sig));

    /* scalars 0 and >= n are not keys */
    uint8_t zero[32] = {0}, big[32];
    memset(big, 0xff, sizeof big);
    assert_int_equal(wr_crypto_p256_public(zero, bad), WR_EINVAL);
    assert_int_equal(wr_crypto_p256_public(big, bad), WR_EINVAL);
}

static void test_p256_pem(void **state)
{
    (void)state;
    uint8_t k[32], pub[65], back[32];
    char pem[WR_CRYPTO_PEM_MAX];
    size_t n = 0;
    assert_int_equal(wr_crypto_p256_keygen(k, pub), WR_OK);
    assert_int_equal(wr_crypto_p256_to_pem(k, pem, sizeof pem, &n), WR_OK);
    assert_int_equal(strlen(pem), n);
    assert_non_null(strstr(pem, "-----BEGIN PRIVATE KEY-----"));
    assert_int_equal(wr_crypto_p256_from_pem(pem, n, back), WR_OK);
    assert_memory_equal(back, k, 32);
    assert_int_equal(wr_crypto_p256_to_pem(k, pem, 20, &n), WR_ELIMIT);

    /* openssl's SEC 1 form, and its private scalar (openssl ec -text) */
    static const uint8_t want[32] = {0x5f, 0x70, 0x13, 0xb8, 0xbe, 0x27, 0xb7, 0xba,
                                     0x8b, 0x33, 0x20, 0x88, 0xe1, 0xe4, 0xda, 0x54,
                                     0xbc, 0x7a, 0x63, 0xc4, 0xd3, 0x8d, 0x6f, 0x19,
                                     0xa6, 0x5f, 0x81, 0xbd, 0xd8, 0x1c, 0x47, 0x87};
    assert_int_equal(wr_crypto_p256_from_pem(SEC1_PEM, strlen(SEC1_PEM), back), WR_OK);
    assert_memory_equal(back, want, 32);

    /* an Ed25519 key is not a P-256 key, nor the other way round */
    uint8_t seed[32], edpub[32];
    assert_int_equal(wr_crypto_ed25519_keygen(seed, edpub), WR_OK);
    assert_int_equal(wr_crypto_ed25519_to_pem(seed, pem, sizeof pem, &n), WR_OK);
    assert_int_equal(wr_crypto_p256_from_pem(pem, n, back), WR_EINVAL);
    assert_int_equal(wr_crypto_ed25519_from_pem(SEC1_PEM, strlen(SEC1_PEM), seed), WR_EINVAL);
    assert_int_equal(wr_crypto_p256_from_pem("not pem", 7, back), WR_EINVAL);
}

WR_UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_hmac_rfc4231), cmocka_unit_test(test_random),
             cmocka_unit_test(test_equal_and_wipe), cmocka_unit_test(test_cookie_key),
             cmocka_unit_test(test_sha256), cmocka_unit_test(test_sha1_hex),
             cmocka_unit_test(test_ed25519_rfc8032), cmocka_unit_test(test_ed25519_pem),
             cmocka_unit_test(test_hkdf_rfc5869), cmocka_unit_test(test_aes128gcm),
             cmocka_unit_test(test_p256), cmocka_unit_test(test_p256_pem))
