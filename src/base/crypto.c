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
 *
 * P-256 keys (Web Push) cross it the same way: the 32-byte scalar and the
 * 65-byte uncompressed point. A private EVP_PKEY is built from both (the
 * point computed with EC_POINT_mul: OpenSSL 3.0's fromdata does not derive
 * it), a peer's from its point, which EC_POINT_oct2point checks is on the
 * curve before any use. ECDSA signatures leave OpenSSL as DER and are
 * turned into JWS's fixed r || s here (and back, to verify).
 */
#include "base/crypto.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "base/hex.h"

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
    unsigned char md[SHA_DIGEST_LENGTH];

    if ((!data && len > 0) || !out)
        return WR_EINVAL;
    SHA1(len ? data : (const void *)"", len, md);
    wr_hex_encode(md, SHA_DIGEST_LENGTH, out); /* 40 digits and the NUL */
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

/* The PEM (PKCS#8) of k into out: the one writer of both key kinds. */
static wr_err_t pem_of(EVP_PKEY *k, char *out, size_t cap, size_t *out_len)
{
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
    return err;
}

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

/* The pass phrase callback of a PEM read: none. An encrypted key is then
 * refused, where OpenSSL's default callback would prompt on the terminal
 * (or, without one, read stdin) and block the daemon reading its key. */
static int no_pass_phrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* The private key of a PEM text (len bytes): *k the key, NULL when the
 * text holds none or an encrypted one (WR_OK either way); WR_EINVAL for a
 * text too long for a memory BIO, WR_ENOMEM. The caller frees *k. */
static wr_err_t read_pem_key(const char *pem, size_t len, EVP_PKEY **k)
{
    *k = NULL;
    if (len == 0 || len > INT_MAX)
        return WR_EINVAL;
    BIO *b = BIO_new_mem_buf(pem, (int)len);
    if (!b)
        return WR_ENOMEM;
    *k = PEM_read_bio_PrivateKey(b, NULL, no_pass_phrase, NULL);
    BIO_free(b);
    return WR_OK;
}

wr_err_t wr_crypto_ed25519_from_pem(const char *pem, size_t len,
                                    uint8_t seed[WR_CRYPTO_ED25519_SEED])
{
    EVP_PKEY *k = NULL;
    wr_err_t err = !pem || !seed ? WR_EINVAL : read_pem_key(pem, len, &k);
    if (err)
        return err;
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
    wr_err_t err = pem_of(k, out, cap, out_len);
    EVP_PKEY_free(k);
    return err;
}

/* ---------- P-256 */

/* The curve, or NULL (ENOMEM). Caller frees. */
static EC_GROUP *p256_group(void)
{
    return EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
}

/* The scalar priv as a BIGNUM when it is in [1, n-1], else NULL. */
static BIGNUM *p256_scalar(const EC_GROUP *g, const uint8_t *priv)
{
    BIGNUM *d = BN_bin2bn(priv, WR_CRYPTO_P256_PRIV, NULL);
    if (d && (BN_is_zero(d) || BN_cmp(d, EC_GROUP_get0_order(g)) >= 0)) {
        BN_clear_free(d);
        d = NULL;
    }
    return d;
}

bool wr_crypto_p256_point_valid(const uint8_t *pub, size_t len)
{
    if (!pub || len != WR_CRYPTO_P256_PUB || pub[0] != 0x04)
        return false;
    EC_GROUP *g = p256_group();
    EC_POINT *pt = g ? EC_POINT_new(g) : NULL;
    /* oct2point refuses coordinates >= p and points off the curve */
    bool ok =
        pt && EC_POINT_oct2point(g, pt, pub, len, NULL) == 1 && !EC_POINT_is_at_infinity(g, pt);
    EC_POINT_free(pt);
    EC_GROUP_free(g);
    return ok;
}

wr_err_t wr_crypto_p256_public(const uint8_t priv[WR_CRYPTO_P256_PRIV],
                               uint8_t pub[WR_CRYPTO_P256_PUB])
{
    if (!priv || !pub)
        return WR_EINVAL;
    wr_err_t err = WR_EIO;
    EC_GROUP *g = p256_group();
    BIGNUM *d = g ? p256_scalar(g, priv) : NULL;
    EC_POINT *pt = g ? EC_POINT_new(g) : NULL;
    if (g && !d) {
        err = WR_EINVAL;
        goto out;
    }
    if (!pt || EC_POINT_mul(g, pt, d, NULL, NULL, NULL) != 1 ||
        EC_POINT_point2oct(g, pt, POINT_CONVERSION_UNCOMPRESSED, pub, WR_CRYPTO_P256_PUB, NULL) !=
            WR_CRYPTO_P256_PUB)
        goto out;
    err = WR_OK;
out:
    EC_POINT_free(pt);
    BN_clear_free(d);
    EC_GROUP_free(g);
    return err;
}

wr_err_t wr_crypto_p256_keygen(uint8_t priv[WR_CRYPTO_P256_PRIV], uint8_t pub[WR_CRYPTO_P256_PUB])
{
    if (!priv || !pub)
        return WR_EINVAL;
    /* Rejection sampling: a random 256-bit value is below the order
     * (about 2^256 - 2^224) but for a chance of about 2^-32 per draw. */
    for (int i = 0; i < 64; i++) {
        wr_err_t err = wr_crypto_random(priv, WR_CRYPTO_P256_PRIV);
        if (err != WR_OK)
            return err;
        err = wr_crypto_p256_public(priv, pub);
        if (err != WR_EINVAL)
            return err;
    }
    return WR_EIO;
}

/* An EVP_PKEY of a P-256 key: the key pair of priv (with its point pub)
 * when priv is set, else the public key pub alone. NULL on failure. */
static EVP_PKEY *p256_pkey(const uint8_t *priv, const uint8_t *pub)
{
    EVP_PKEY *k = NULL;
    BIGNUM *d = priv ? BN_secure_new() : NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (!bld || !ctx || (priv && (!d || !BN_bin2bn(priv, WR_CRYPTO_P256_PRIV, d))))
        goto out;
    if (OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, WR_CRYPTO_P256_PUB) !=
            1 ||
        (priv && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d) != 1))
        goto out;
    params = OSSL_PARAM_BLD_to_param(bld);
    if (!params || EVP_PKEY_fromdata_init(ctx) != 1 ||
        EVP_PKEY_fromdata(ctx, &k, priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) != 1)
        k = NULL;
out:
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    BN_clear_free(d);
    return k;
}

/* The key pair of priv (its point computed), or NULL; *err says why. */
static EVP_PKEY *p256_private(const uint8_t *priv, wr_err_t *err)
{
    uint8_t pub[WR_CRYPTO_P256_PUB];
    *err = wr_crypto_p256_public(priv, pub);
    if (*err != WR_OK)
        return NULL;
    EVP_PKEY *k = p256_pkey(priv, pub);
    if (!k)
        *err = WR_EIO;
    return k;
}

wr_err_t wr_crypto_p256_ecdh(const uint8_t priv[WR_CRYPTO_P256_PRIV],
                             const uint8_t peer[WR_CRYPTO_P256_PUB],
                             uint8_t secret[WR_CRYPTO_P256_SECRET])
{
    if (!priv || !peer || !secret || !wr_crypto_p256_point_valid(peer, WR_CRYPTO_P256_PUB))
        return WR_EINVAL;
    wr_err_t err;
    EVP_PKEY *k = p256_private(priv, &err);
    EVP_PKEY *p = k ? p256_pkey(NULL, peer) : NULL;
    EVP_PKEY_CTX *ctx = p ? EVP_PKEY_CTX_new(k, NULL) : NULL;
    size_t n = WR_CRYPTO_P256_SECRET;
    if (k) {
        bool ok = ctx && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, p) == 1 &&
                  EVP_PKEY_derive(ctx, secret, &n) == 1 && n == WR_CRYPTO_P256_SECRET;
        err = ok ? WR_OK : WR_EIO;
    }
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(p);
    EVP_PKEY_free(k);
    return err;
}

wr_err_t wr_crypto_p256_sign(const uint8_t priv[WR_CRYPTO_P256_PRIV], const void *msg, size_t len,
                             uint8_t sig[WR_CRYPTO_P256_SIG])
{
    static const uint8_t empty = 0;
    if (!priv || (!msg && len > 0) || !sig)
        return WR_EINVAL;
    wr_err_t err;
    EVP_PKEY *k = p256_private(priv, &err);
    if (!k)
        return err;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    uint8_t der[80]; /* at most 72 bytes for P-256 */
    size_t n = sizeof der;
    ECDSA_SIG *es = NULL;
    err = WR_EIO;
    if (!ctx || EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, k) != 1 ||
        EVP_DigestSign(ctx, der, &n, len ? msg : (const void *)&empty, len) != 1)
        goto out;
    const unsigned char *pd = der;
    es = d2i_ECDSA_SIG(NULL, &pd, (long)n);
    if (!es || BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, 32) != 32 ||
        BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + 32, 32) != 32)
        goto out;
    err = WR_OK;
out:
    ECDSA_SIG_free(es);
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(k);
    return err;
}

bool wr_crypto_p256_verify(const uint8_t pub[WR_CRYPTO_P256_PUB], const void *msg, size_t len,
                           const uint8_t sig[WR_CRYPTO_P256_SIG])
{
    static const uint8_t empty = 0;
    if (!pub || (!msg && len > 0) || !sig || !wr_crypto_p256_point_valid(pub, WR_CRYPTO_P256_PUB))
        return false;
    bool ok = false;
    EVP_PKEY *k = p256_pkey(NULL, pub);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
    unsigned char *der = NULL;
    int n;
    if (!k || !ctx || !es || !r || !s || ECDSA_SIG_set0(es, r, s) != 1)
        goto out;
    r = s = NULL; /* es owns them */
    n = i2d_ECDSA_SIG(es, &der);
    ok = n > 0 && EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k) == 1 &&
         EVP_DigestVerify(ctx, der, (size_t)n, len ? msg : (const void *)&empty, len) == 1;
out:
    OPENSSL_free(der);
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(es);
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(k);
    return ok;
}

wr_err_t wr_crypto_p256_from_pem(const char *pem, size_t len, uint8_t priv[WR_CRYPTO_P256_PRIV])
{
    EVP_PKEY *k = NULL;
    wr_err_t err = !pem || !priv ? WR_EINVAL : read_pem_key(pem, len, &k);
    if (err)
        return err;
    char group[32] = "";
    BIGNUM *d = NULL;
    bool ok = k && EVP_PKEY_get_base_id(k) == EVP_PKEY_EC &&
              EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                             NULL) == 1 &&
              strcmp(group, "prime256v1") == 0 &&
              EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_PRIV_KEY, &d) == 1 &&
              BN_bn2binpad(d, priv, WR_CRYPTO_P256_PRIV) == WR_CRYPTO_P256_PRIV;
    BN_clear_free(d);
    EVP_PKEY_free(k);
    if (!ok)
        OPENSSL_cleanse(priv, WR_CRYPTO_P256_PRIV);
    return ok ? WR_OK : WR_EINVAL;
}

wr_err_t wr_crypto_p256_to_pem(const uint8_t priv[WR_CRYPTO_P256_PRIV], char *out, size_t cap,
                               size_t *out_len)
{
    if (!priv || !out)
        return WR_EINVAL;
    wr_err_t err;
    EVP_PKEY *k = p256_private(priv, &err);
    if (!k)
        return err;
    err = pem_of(k, out, cap, out_len);
    EVP_PKEY_free(k);
    return err;
}

/* ---------- HKDF, AES-128-GCM */

wr_err_t wr_crypto_hkdf_sha256(const uint8_t *salt, size_t salt_len, const uint8_t *ikm,
                               size_t ikm_len, const uint8_t *info, size_t info_len, uint8_t *out,
                               size_t out_len)
{
    static uint8_t empty = 0;
    if ((!salt && salt_len) || (!ikm && ikm_len) || (!info && info_len) || !out || out_len == 0 ||
        out_len > 255 * 32)
        return WR_EINVAL;
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    OSSL_PARAM p[5];
    p[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, ikm_len ? (void *)ikm : &empty,
                                             ikm_len);
    p[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt_len ? (void *)salt : &empty,
                                             salt_len);
    p[3] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info_len ? (void *)info : &empty,
                                             info_len);
    p[4] = OSSL_PARAM_construct_end();
    bool ok = ctx && EVP_KDF_derive(ctx, out, out_len, p) == 1;
    EVP_KDF_CTX_free(ctx);
    EVP_KDF_free(kdf);
    return ok ? WR_OK : WR_EIO;
}

/* One AES-128-GCM pass: encrypt (enc 1, the tag written after the output)
 * or decrypt (enc 0, the tag read after the input and checked). */
static bool gcm(int enc, const uint8_t *key, const uint8_t *nonce, const uint8_t *in, size_t len,
                uint8_t *out, uint8_t *tag)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0, m = 0;
    bool ok =
        ctx && len <= INT_MAX &&
        EVP_CipherInit_ex(ctx, EVP_aes_128_gcm(), NULL, NULL, NULL, enc) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, WR_CRYPTO_GCM_NONCE, NULL) == 1 &&
        EVP_CipherInit_ex(ctx, NULL, NULL, key, nonce, enc) == 1 &&
        (len == 0 || EVP_CipherUpdate(ctx, out, &n, in, (int)len) == 1) &&
        (enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, WR_CRYPTO_GCM_TAG, tag) == 1) &&
        EVP_CipherFinal_ex(ctx, out + n, &m) == 1 &&
        (!enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, WR_CRYPTO_GCM_TAG, tag) == 1);
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

wr_err_t wr_crypto_aes128gcm_seal(const uint8_t key[WR_CRYPTO_AES128_KEY],
                                  const uint8_t nonce[WR_CRYPTO_GCM_NONCE], const uint8_t *pt,
                                  size_t len, uint8_t *out)
{
    if (!key || !nonce || (!pt && len) || !out || len > INT_MAX - WR_CRYPTO_GCM_TAG)
        return WR_EINVAL;
    return gcm(1, key, nonce, pt, len, out, out + len) ? WR_OK : WR_EIO;
}

wr_err_t wr_crypto_aes128gcm_open(const uint8_t key[WR_CRYPTO_AES128_KEY],
                                  const uint8_t nonce[WR_CRYPTO_GCM_NONCE], const uint8_t *ct,
                                  size_t len, uint8_t *out)
{
    if (!key || !nonce || !ct || (!out && len > WR_CRYPTO_GCM_TAG) || len < WR_CRYPTO_GCM_TAG ||
        len > INT_MAX)
        return WR_EINVAL;
    size_t n = len - WR_CRYPTO_GCM_TAG;
    uint8_t tag[WR_CRYPTO_GCM_TAG];
    memcpy(tag, ct + n, sizeof tag);
    if (!gcm(0, key, nonce, ct, n, out, tag)) {
        if (n)
            OPENSSL_cleanse(out, n);
        return WR_EINVAL;
    }
    return WR_OK;
}
