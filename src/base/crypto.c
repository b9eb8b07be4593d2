/*
 * crypto.c - HMAC-SHA256, random bytes, constant-time comparison and the
 * cookie-key derivation (crypto.h), each a thin, checked call into
 * libcrypto: sizes are checked against OpenSSL's int parameters before the
 * call, and an OpenSSL failure becomes a wr_err_t, never a partial output
 * the caller could mistake for a result.
 *
 * Ed25519 keys cross this file as raw bytes (the 32-byte seed, the 32-byte
 * public key): an EVP_PKEY is made for one call and freed in it, so no
 * OpenSSL type leaks into the header and a key is never shared between
 * threads. PEM is read and written from memory (BIO_new_mem_buf): the
 * caller does the file I/O.
 */
#include "base/crypto.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

/* The label of the cookie key: changing it logs every visitor out. */
#define COOKIE_KEY_LABEL "waitroom cookie v1"

wr_err_t wr_crypto_hmac_sha256(const uint8_t *key, size_t key_len, const void *data, size_t len,
                               uint8_t mac[WR_CRYPTO_MAC_LEN])
{
    static const uint8_t empty = 0;
    unsigned int mac_len = 0;

    if ((!key && key_len > 0) || (!data && len > 0) || !mac || key_len > INT_MAX)
        return WR_EINVAL;
    /* OpenSSL refuses a NULL key; an empty key is a valid HMAC key. */
    if (!HMAC(EVP_sha256(), key_len ? (const void *)key : (const void *)&empty, (int)key_len,
              len ? (const unsigned char *)data : &empty, len, mac, &mac_len))
        return WR_EINVAL;
    if (mac_len != WR_CRYPTO_MAC_LEN)
        return WR_EINVAL;
    return WR_OK;
}

wr_err_t wr_crypto_random(void *buf, size_t n)
{
    if (n == 0)
        return WR_OK;
    if (!buf || n > INT_MAX)
        return WR_EINVAL;
    if (RAND_bytes(buf, (int)n) != 1)
        return WR_EIO;
    return WR_OK;
}

bool wr_crypto_equal(const void *a, const void *b, size_t n)
{
    return CRYPTO_memcmp(a, b, n) == 0;
}

void wr_crypto_wipe(void *p, size_t n)
{
    if (p && n)
        OPENSSL_cleanse(p, n);
}

wr_err_t wr_crypto_derive_key(const uint8_t *secret, size_t len, const char *label,
                              uint8_t key[WR_CRYPTO_KEY_LEN])
{
    if (!secret || len == 0 || !key || !label)
        return WR_EINVAL;
    return wr_crypto_hmac_sha256(secret, len, label, strlen(label), key);
}

wr_err_t wr_crypto_cookie_key(const uint8_t *secret, size_t len, uint8_t key[WR_CRYPTO_KEY_LEN])
{
    return wr_crypto_derive_key(secret, len, COOKIE_KEY_LABEL, key);
}

/* ---------- keyed HMAC (RFC 2104 over EVP digests, pads hashed once) */

#define HMAC_BLOCK 64 /* SHA-256's block */

struct wr_crypto_hmac {
    EVP_MD *md;        /* fetched once */
    EVP_MD_CTX *inner; /* SHA-256 state after key ^ ipad */
    EVP_MD_CTX *outer; /* after key ^ opad */
    EVP_MD_CTX *work;  /* copied from inner/outer per MAC */
};

wr_crypto_hmac_t *wr_crypto_hmac_new(const uint8_t *key, size_t key_len)
{
    if (!key && key_len > 0)
        return NULL;
    wr_crypto_hmac_t *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    uint8_t k[HMAC_BLOCK] = {0}, ipad[HMAC_BLOCK], opad[HMAC_BLOCK];
    unsigned int n = 0;
    h->md = EVP_MD_fetch(NULL, "SHA256", NULL);
    h->inner = EVP_MD_CTX_new();
    h->outer = EVP_MD_CTX_new();
    h->work = EVP_MD_CTX_new();
    bool ok = h->md && h->inner && h->outer && h->work;
    if (ok && key_len > HMAC_BLOCK)
        ok = EVP_Digest(key, key_len, k, &n, h->md, NULL) == 1;
    else if (ok && key_len > 0)
        memcpy(k, key, key_len);
    for (int i = 0; i < HMAC_BLOCK; i++) {
        ipad[i] = (uint8_t)(k[i] ^ 0x36);
        opad[i] = (uint8_t)(k[i] ^ 0x5c);
    }
    ok = ok && EVP_DigestInit_ex(h->inner, h->md, NULL) == 1 &&
         EVP_DigestUpdate(h->inner, ipad, sizeof ipad) == 1 &&
         EVP_DigestInit_ex(h->outer, h->md, NULL) == 1 &&
         EVP_DigestUpdate(h->outer, opad, sizeof opad) == 1;
    OPENSSL_cleanse(k, sizeof k);
    OPENSSL_cleanse(ipad, sizeof ipad);
    OPENSSL_cleanse(opad, sizeof opad);
    if (!ok) {
        wr_crypto_hmac_free(h);
        return NULL;
    }
    return h;
}

wr_err_t wr_crypto_hmac_mac(wr_crypto_hmac_t *h, const void *data, size_t len,
                            uint8_t mac[WR_CRYPTO_MAC_LEN])
{
    uint8_t in[WR_CRYPTO_MAC_LEN];
    unsigned int n = 0;
    if (!h || (!data && len > 0) || !mac)
        return WR_EINVAL;
    bool ok = EVP_MD_CTX_copy_ex(h->work, h->inner) == 1 &&
              EVP_DigestUpdate(h->work, data, len) == 1 &&
              EVP_DigestFinal_ex(h->work, in, &n) == 1 && n == sizeof in &&
              EVP_MD_CTX_copy_ex(h->work, h->outer) == 1 &&
              EVP_DigestUpdate(h->work, in, sizeof in) == 1 &&
              EVP_DigestFinal_ex(h->work, mac, &n) == 1 && n == WR_CRYPTO_MAC_LEN;
    return ok ? WR_OK : WR_EIO;
}

void wr_crypto_hmac_free(wr_crypto_hmac_t *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->inner); /* OpenSSL cleanses a freed digest context */
    EVP_MD_CTX_free(h->outer);
    EVP_MD_CTX_free(h->work);
    EVP_MD_free(h->md);
    free(h);
}

wr_err_t wr_crypto_sha1_hex(const void *data, size_t len, char out[WR_CRYPTO_SHA1_HEX + 1])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA_DIGEST_LENGTH];

    if ((!data && len > 0) || !out)
        return WR_EINVAL;
    SHA1(len ? data : (const void *)"", len, md);
    for (int i = 0; i < SHA_DIGEST_LENGTH; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[WR_CRYPTO_SHA1_HEX] = '\0';
    return WR_OK;
}

/* The context is OpenSSL's EVP_MD_CTX under an opaque name. */
static EVP_MD_CTX *md_of(wr_crypto_sha256_t *h)
{
    return (EVP_MD_CTX *)h;
}

wr_crypto_sha256_t *wr_crypto_sha256_new(void)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        md = NULL;
    }
    return (wr_crypto_sha256_t *)md;
}

wr_err_t wr_crypto_sha256_update(wr_crypto_sha256_t *h, const void *data, size_t len)
{
    if (!h || (!data && len > 0))
        return WR_EINVAL;
    return EVP_DigestUpdate(md_of(h), data, len) == 1 ? WR_OK : WR_EIO;
}

wr_err_t wr_crypto_sha256_final(wr_crypto_sha256_t *h, uint8_t out[WR_CRYPTO_SHA256_LEN])
{
    unsigned int n = 0;
    if (!h || !out)
        return WR_EINVAL;
    if (EVP_DigestFinal_ex(md_of(h), out, &n) != 1 || n != WR_CRYPTO_SHA256_LEN)
        return WR_EIO;
    return WR_OK;
}

wr_err_t wr_crypto_sha256_digest(wr_crypto_sha256_t *h, const void *data, size_t len,
                                 uint8_t out[WR_CRYPTO_SHA256_LEN])
{
    unsigned int n = 0;
    if (!h || (!data && len > 0) || !out)
        return WR_EINVAL;
    /* a NULL type restarts with the context's own, already fetched */
    bool ok = EVP_DigestInit_ex(md_of(h), NULL, NULL) == 1 &&
              EVP_DigestUpdate(md_of(h), data, len) == 1 &&
              EVP_DigestFinal_ex(md_of(h), out, &n) == 1 && n == WR_CRYPTO_SHA256_LEN;
    return ok ? WR_OK : WR_EIO;
}

wr_err_t wr_crypto_sha256_reset(wr_crypto_sha256_t *h)
{
    if (!h)
        return WR_EINVAL;
    return EVP_DigestInit_ex(md_of(h), NULL, NULL) == 1 ? WR_OK : WR_EIO;
}

void wr_crypto_sha256_free(wr_crypto_sha256_t *h)
{
    EVP_MD_CTX_free(md_of(h));
}

/* ---------- Ed25519 */

/* An EVP_PKEY of the private key seed, or NULL. */
static EVP_PKEY *ed_private(const uint8_t *seed)
{
    return EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, WR_CRYPTO_ED25519_SEED);
}

/* The raw public key of k into pub. */
static bool ed_raw_public(EVP_PKEY *k, uint8_t *pub)
{
    size_t n = WR_CRYPTO_ED25519_PUB;
    return EVP_PKEY_get_raw_public_key(k, pub, &n) == 1 && n == WR_CRYPTO_ED25519_PUB;
}

wr_err_t wr_crypto_ed25519_keygen(uint8_t seed[WR_CRYPTO_ED25519_SEED],
                                  uint8_t pub[WR_CRYPTO_ED25519_PUB])
{
    if (!seed || !pub)
        return WR_EINVAL;
    wr_err_t err = wr_crypto_random(seed, WR_CRYPTO_ED25519_SEED);
    if (err != WR_OK)
        return err;
    return wr_crypto_ed25519_public(seed, pub);
}

wr_err_t wr_crypto_ed25519_public(const uint8_t seed[WR_CRYPTO_ED25519_SEED],
                                  uint8_t pub[WR_CRYPTO_ED25519_PUB])
{
    if (!seed || !pub)
        return WR_EINVAL;
    EVP_PKEY *k = ed_private(seed);
    bool ok = k && ed_raw_public(k, pub);
    EVP_PKEY_free(k);
    return ok ? WR_OK : WR_EIO;
}

wr_err_t wr_crypto_ed25519_sign(const uint8_t seed[WR_CRYPTO_ED25519_SEED], const void *msg,
                                size_t len, uint8_t sig[WR_CRYPTO_ED25519_SIG])
{
    static const uint8_t empty = 0;
    if (!seed || (!msg && len > 0) || !sig)
        return WR_EINVAL;
    EVP_PKEY *k = ed_private(seed);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t n = WR_CRYPTO_ED25519_SIG;
    /* Ed25519 is one-shot: no digest (NULL), the whole message at once */
    bool ok = k && ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) == 1 &&
              EVP_DigestSign(ctx, sig, &n, len ? msg : (const void *)&empty, len) == 1 &&
              n == WR_CRYPTO_ED25519_SIG;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(k);
    return ok ? WR_OK : WR_EIO;
}

bool wr_crypto_ed25519_verify(const uint8_t pub[WR_CRYPTO_ED25519_PUB], const void *msg, size_t len,
                              const uint8_t sig[WR_CRYPTO_ED25519_SIG])
{
    static const uint8_t empty = 0;
    if (!pub || (!msg && len > 0) || !sig)
        return false;
    EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, WR_CRYPTO_ED25519_PUB);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = k && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1 &&
              EVP_DigestVerify(ctx, sig, WR_CRYPTO_ED25519_SIG, len ? msg : (const void *)&empty,
                               len) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(k);
    return ok;
}

wr_err_t wr_crypto_ed25519_from_pem(const char *pem, size_t len,
                                    uint8_t seed[WR_CRYPTO_ED25519_SEED])
{
    if (!pem || !seed || len == 0 || len > INT_MAX)
        return WR_EINVAL;
    BIO *b = BIO_new_mem_buf(pem, (int)len);
    if (!b)
        return WR_ENOMEM;
    EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    size_t n = WR_CRYPTO_ED25519_SEED;
    bool ok = k && EVP_PKEY_get_id(k) == EVP_PKEY_ED25519 &&
              EVP_PKEY_get_raw_private_key(k, seed, &n) == 1 && n == WR_CRYPTO_ED25519_SEED;
    EVP_PKEY_free(k);
    return ok ? WR_OK : WR_EINVAL;
}

wr_err_t wr_crypto_ed25519_to_pem(const uint8_t seed[WR_CRYPTO_ED25519_SEED], char *out, size_t cap,
                                  size_t *out_len)
{
    if (!seed || !out)
        return WR_EINVAL;
    EVP_PKEY *k = ed_private(seed);
    BIO *b = BIO_new(BIO_s_mem());
    bool ok = k && b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1;
    char *data = NULL;
    long n = ok ? BIO_get_mem_data(b, &data) : 0;
    wr_err_t err = ok && n > 0 ? WR_OK : WR_EIO;
    if (err == WR_OK && (size_t)n + 1 > cap)
        err = WR_ELIMIT;
    if (err == WR_OK) {
        memcpy(out, data, (size_t)n);
        out[n] = '\0';
        if (out_len)
            *out_len = (size_t)n;
    }
    if (data && n > 0)
        OPENSSL_cleanse(data, (size_t)n);
    BIO_free(b);
    EVP_PKEY_free(k);
    return err;
}
