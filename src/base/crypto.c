/*
 * crypto.c - HMAC-SHA256, random bytes, constant-time comparison and the
 * cookie-key derivation (crypto.h), each a thin, checked call into
 * libcrypto: sizes are checked against OpenSSL's int parameters before the
 * call, and an OpenSSL failure becomes a wr_err_t, never a partial output
 * the caller could mistake for a result.
 */
#include "base/crypto.h"

#include <limits.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
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

wr_err_t wr_crypto_cookie_key(const uint8_t *secret, size_t len, uint8_t key[WR_CRYPTO_KEY_LEN])
{
    if (!secret || len == 0 || !key)
        return WR_EINVAL;
    return wr_crypto_hmac_sha256(secret, len, COOKIE_KEY_LABEL, sizeof COOKIE_KEY_LABEL - 1, key);
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

void wr_crypto_sha256_free(wr_crypto_sha256_t *h)
{
    EVP_MD_CTX_free(md_of(h));
}
