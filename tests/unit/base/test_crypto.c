/*
 * test_crypto.c - the primitives over libcrypto: HMAC-SHA256 against
 * RFC 4231, SHA-256 and SHA-1 against FIPS 180-2, random bytes, the
 * constant-time comparison, wiping, and the cookie-key derivation against
 * a value computed independently (Python: hmac.new(secret,
 * b"waitroom cookie v1", sha256)); Ed25519 against RFC 8032 and RFC 8410's
 * key, HKDF against RFC 5869, AES-128-GCM against the GCM spec's test case
 * 2, P-256 (ECDH, ES256, PEM) by round trips and refusals; encrypted PEM
 * refused without a pass phrase prompt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>

#include "base/crypto.h"
#include "base/hex.h"
#include "unit_main.h"

/* The n bytes that the 2n hex digits hex spell, into out: the test vectors
 * as their RFCs print them. */
static void unhex(const char *hex, uint8_t *out, size_t n)
{
    assert_true(wr_hex_decode(hex, strlen(hex), out, n));
}

/* RFC 4231 test case 2. */
static void test_hmac_rfc4231(void **state)
{
    (void)state;
    uint8_t want[32];
    unhex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", want, sizeof want);
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
    uint8_t want[32];
    unhex("1e1f10c3a94c38fec76ad5a71d20f705e9badb691a4f570e8c25f40c56adade4", want, sizeof want);
    const char *secret = "0123456789abcdef0123456789abcdef";
    uint8_t key[WR_CRYPTO_KEY_LEN];
    assert_int_equal(wr_crypto_cookie_key((const uint8_t *)secret, strlen(secret), key), WR_OK);
    assert_memory_equal(key, want, sizeof want);
    assert_int_equal(wr_crypto_cookie_key(NULL, 4, key), WR_EINVAL);
    assert_int_equal(wr_crypto_cookie_key(NULL, 0, key), WR_EINVAL);
    assert_int_equal(wr_crypto_cookie_key((const uint8_t *)secret, 0, key), WR_EINVAL);
    /* A second pair, computed independently as well. */
    uint8_t want2[32];
    unhex("750c7a67579e250d1b5a68788e8c9262c97d6ab0aac5c239159d4f065813bce1", want2, sizeof want2);
    assert_int_equal(wr_crypto_cookie_key((const uint8_t *)"secret", 6, key), WR_OK);
    assert_memory_equal(key, want2, sizeof want2);
}

/* FIPS 180-2 example "abc", given in two pieces. */
static void test_sha256(void **state)
{
    (void)state;
    uint8_t want[32];
    unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", want, sizeof want);
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
    uint8_t seed1[32];
    unhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", seed1, sizeof seed1);
    uint8_t pub1[32];
    unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", pub1, sizeof pub1);
    uint8_t sig1[64];
    unhex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
          "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
          sig1, sizeof sig1);
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

    /* TEST 2: the one-byte message 0x72 */
    uint8_t seed2[32], pub2[32], sig2[64];
    unhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", seed2, sizeof seed2);
    unhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", pub2, sizeof pub2);
    unhex("92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
          "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
          sig2, sizeof sig2);
    assert_int_equal(wr_crypto_ed25519_public(seed2, pub), WR_OK);
    assert_memory_equal(pub, pub2, 32);
    assert_int_equal(wr_crypto_ed25519_sign(seed2, "\x72", 1, sig), WR_OK);
    assert_memory_equal(sig, sig2, 64);
    assert_true(wr_crypto_ed25519_verify(pub2, "\x72", 1, sig2));
    assert_false(wr_crypto_ed25519_verify(pub2, "\x73", 1, sig2));
}

/* A fresh key of one kind (keygen: its 32 private bytes and its public
 * key) goes out as a PKCS#8 PEM (to_pem) and comes back the same (from_pem);
 * 20 bytes are too few for the PEM. */
static void pem_round_trip(wr_err_t (*keygen)(uint8_t *priv, uint8_t *pub),
                           wr_err_t (*to_pem)(const uint8_t *priv, char *out, size_t cap,
                                              size_t *out_len),
                           wr_err_t (*from_pem)(const char *pem, size_t len, uint8_t *priv))
{
    uint8_t priv[32], pub[WR_CRYPTO_P256_PUB], back[32];
    char pem[WR_CRYPTO_PEM_MAX];
    size_t len = 0;
    assert_int_equal(keygen(priv, pub), WR_OK);
    assert_int_equal(to_pem(priv, pem, sizeof pem, &len), WR_OK);
    assert_int_equal(strlen(pem), len);
    assert_non_null(strstr(pem, "-----BEGIN PRIVATE KEY-----\n"));
    assert_int_equal(from_pem(pem, len, back), WR_OK);
    assert_memory_equal(priv, back, 32);
    assert_int_equal(to_pem(priv, pem, 20, &len), WR_ELIMIT);
}

static void test_ed25519_pem(void **state)
{
    (void)state;
    uint8_t back[32];
    pem_round_trip(wr_crypto_ed25519_keygen, wr_crypto_ed25519_to_pem, wr_crypto_ed25519_from_pem);
    /* RFC 8410 section 10.3's example key: PKCS#8, as openssl genpkey writes */
    static const char rfc8410[] =
        "-----BEGIN PRIVATE KEY-----\n"
        "MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n"
        "-----END PRIVATE KEY-----\n";
    uint8_t want[32];
    unhex("d4ee72dbf913584ad5b6d8f1f769f8ad3afe7c28cbf1d4fbe097a88f44755842", want, sizeof want);
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
    uint8_t want[42];
    unhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
          "34007208d5b887185865",
          want, sizeof want);
    assert_int_equal(wr_crypto_hkdf_sha256(salt, sizeof salt, ikm, sizeof ikm, info, sizeof info,
                                           okm, sizeof okm),
                     WR_OK);
    assert_memory_equal(okm, want, 42);
    uint8_t want3[8];
    unhex("8da4e775a563c18f", want3, sizeof want3);
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
    uint8_t want[32];
    unhex("0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf", want, sizeof want);
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
    uint8_t back[32];
    pem_round_trip(wr_crypto_p256_keygen, wr_crypto_p256_to_pem, wr_crypto_p256_from_pem);

    /* openssl's SEC 1 form, and its private scalar (openssl ec -text) */
    uint8_t want[32];
    unhex("5f7013b8be27b7ba8b332088e1e4da54bc7a63c4d38d6f19a65f81bdd81c4787", want, sizeof want);
    assert_int_equal(wr_crypto_p256_from_pem(SEC1_PEM, strlen(SEC1_PEM), back), WR_OK);
    assert_memory_equal(back, want, 32);

    /* an Ed25519 key is not a P-256 key, nor the other way round */
    uint8_t seed[32], edpub[32];
    char pem[WR_CRYPTO_PEM_MAX];
    size_t n = 0;
    assert_int_equal(wr_crypto_ed25519_keygen(seed, edpub), WR_OK);
    assert_int_equal(wr_crypto_ed25519_to_pem(seed, pem, sizeof pem, &n), WR_OK);
    assert_int_equal(wr_crypto_p256_from_pem(pem, n, back), WR_EINVAL);
    assert_int_equal(wr_crypto_ed25519_from_pem(SEC1_PEM, strlen(SEC1_PEM), seed), WR_EINVAL);
    assert_int_equal(wr_crypto_p256_from_pem("not pem", 7, back), WR_EINVAL);
}

/* Encrypted PKCS#8 keys (`openssl pkcs8 -topk8 -v2 aes-256-cbc -passout
 * pass:pass`, an Ed25519 and a P-256 key): refused, and no pass phrase is
 * asked for. OpenSSL's default would prompt on the terminal, or without one
 * read stdin: a daemon reading --log-key or --push-key would block there or
 * take its stdin as the phrase. Here stdin holds the right phrase. */
static void test_encrypted_pem_refused(void **state)
{
    (void)state;
    static const char ed[] = "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
                             "MIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAgeQQPLJkqmUAICCAAw\n"
                             "DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEFiWDTZxwTVGLdx5TbnBnB8EQFN9\n"
                             "vyaqMyD4CyTbU0nBUt5yvhJtvcqgL0V0EP1rihz+0lbpGZ87QB9mxh+ZVyo+uLo8\n"
                             "gTxYP93tGJ23UFD4Xzo=\n"
                             "-----END ENCRYPTED PRIVATE KEY-----\n";
    static const char p256[] = "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
                               "MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAiOfM7TpvQg0wICCAAw\n"
                               "DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEENDfljuhDtJl8Ww4VUduEGIEgZAo\n"
                               "mML7+qVBMevyKtehCiRCgdS+B4jZ6YfiPUlRtr00OUMvLG04H466Fmzn+nX6s1Ts\n"
                               "3Udy3HVlGxcpl2GPK7lguex/umrDR5+n35fWG/arh0yPUUOSZFXR2rQV5oMfv1BR\n"
                               "DeeM+UdvAZSIh3ckORQXBKAuSOTneqZPUpTEx//gYmpDt1bmOHXsCitDInlOR9g=\n"
                               "-----END ENCRYPTED PRIVATE KEY-----\n";
    int fds[2], saved = dup(0);
    assert_true(saved >= 0 && pipe(fds) == 0);
    assert_int_equal(write(fds[1], "pass\npass\n", 10), 10);
    close(fds[1]);
    assert_int_equal(dup2(fds[0], 0), 0);
    close(fds[0]);
    uint8_t key[32];
    wr_err_t e1 = wr_crypto_ed25519_from_pem(ed, sizeof ed - 1, key);
    wr_err_t e2 = wr_crypto_p256_from_pem(p256, sizeof p256 - 1, key);
    char left[16] = "";
    ssize_t n = read(0, left, sizeof left - 1);
    assert_int_equal(dup2(saved, 0), 0);
    close(saved);
    assert_int_equal(e1, WR_EINVAL);
    assert_int_equal(e2, WR_EINVAL);
    assert_int_equal(n, 10); /* stdin untouched */
}

#define TESTS(X)                                                                                   \
    X(test_encrypted_pem_refused)                                                                  \
    X(test_hmac_rfc4231)                                                                           \
    X(test_random)                                                                                 \
    X(test_equal_and_wipe)                                                                         \
    X(test_cookie_key)                                                                             \
    X(test_sha256)                                                                                 \
    X(test_sha1_hex)                                                                               \
    X(test_ed25519_rfc8032)                                                                        \
    X(test_ed25519_pem)                                                                            \
    X(test_hkdf_rfc5869)                                                                           \
    X(test_aes128gcm)                                                                              \
    X(test_p256)                                                                                   \
    X(test_p256_pem)
WR_UNIT_MAIN(NULL, NULL, TESTS)
