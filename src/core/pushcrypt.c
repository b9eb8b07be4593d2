/*
 * pushcrypt.c - RFC 8291 message encryption (pushcrypt.h).
 *
 * The keys, as RFC 8291 section 3.3 and 3.4 derive them:
 *
 *   ecdh_secret = ECDH(as_private, ua_public)                 (32 bytes)
 *   key_info    = "WebPush: info" || 0x00 || ua_public || as_public
 *   IKM         = HKDF(salt = auth_secret, ikm = ecdh_secret,
 *                      info = key_info, L = 32)
 *   CEK         = HKDF(salt, IKM, "Content-Encoding: aes128gcm" || 0x00, 16)
 *   NONCE       = HKDF(salt, IKM, "Content-Encoding: nonce" || 0x00, 12)
 *
 * One record (sequence number 0, so the nonce is NONCE itself), sealed
 * with AES-128-GCM: plaintext || 0x02. All the libcrypto work is
 * base/crypto.c's; this file only lays the bytes out. The derived keys
 * and the shared secret live on the stack and are wiped before return.
 */
#include "core/pushcrypt.h"

#include <string.h>

#define KEY_INFO   "WebPush: info"               /* + NUL in the info */
#define CEK_INFO   "Content-Encoding: aes128gcm" /* + NUL */
#define NONCE_INFO "Content-Encoding: nonce"     /* + NUL */

/* The secrets of one message, wiped together. */
struct keys {
    uint8_t ecdh[WR_CRYPTO_P256_SECRET];
    uint8_t ikm[32];
    uint8_t cek[WR_CRYPTO_AES128_KEY];
    uint8_t nonce[WR_CRYPTO_GCM_NONCE];
};

/* CEK and NONCE from the ECDH secret already in k->ecdh, the two public
 * points and the auth secret and salt. */
static wr_err_t derive(struct keys *k, const uint8_t *ua_pub, const uint8_t *as_pub,
                       const uint8_t *auth, const uint8_t *salt)
{
    uint8_t info[sizeof KEY_INFO + 2 * WR_CRYPTO_P256_PUB];
    memcpy(info, KEY_INFO, sizeof KEY_INFO); /* with its NUL */
    memcpy(info + sizeof KEY_INFO, ua_pub, WR_CRYPTO_P256_PUB);
    memcpy(info + sizeof KEY_INFO + WR_CRYPTO_P256_PUB, as_pub, WR_CRYPTO_P256_PUB);
    wr_err_t err = wr_crypto_hkdf_sha256(auth, WR_PUSHCRYPT_AUTH, k->ecdh, sizeof k->ecdh, info,
                                         sizeof info, k->ikm, sizeof k->ikm);
    if (err == WR_OK)
        err = wr_crypto_hkdf_sha256(salt, WR_PUSHCRYPT_SALT, k->ikm, sizeof k->ikm,
                                    (const uint8_t *)CEK_INFO, sizeof CEK_INFO, k->cek,
                                    sizeof k->cek);
    if (err == WR_OK)
        err = wr_crypto_hkdf_sha256(salt, WR_PUSHCRYPT_SALT, k->ikm, sizeof k->ikm,
                                    (const uint8_t *)NONCE_INFO, sizeof NONCE_INFO, k->nonce,
                                    sizeof k->nonce);
    return err;
}

wr_err_t wr_pushcrypt_encrypt_with(const uint8_t as_priv[WR_CRYPTO_P256_PRIV],
                                   const uint8_t salt[WR_PUSHCRYPT_SALT],
                                   const uint8_t ua_pub[WR_CRYPTO_P256_PUB],
                                   const uint8_t auth[WR_PUSHCRYPT_AUTH], const uint8_t *pt,
                                   size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
    if (!as_priv || !salt || !ua_pub || !auth || (!pt && len) || !out || !out_len)
        return WR_EINVAL;
    if (len > WR_PUSHCRYPT_PLAIN_MAX || cap < WR_PUSHCRYPT_BODY_LEN(len))
        return WR_ELIMIT;
    struct keys k;
    uint8_t as_pub[WR_CRYPTO_P256_PUB];
    wr_err_t err = wr_crypto_p256_public(as_priv, as_pub);
    if (err == WR_OK)
        err = wr_crypto_p256_ecdh(as_priv, ua_pub, k.ecdh);
    if (err == WR_OK)
        err = derive(&k, ua_pub, as_pub, auth, salt);
    if (err != WR_OK)
        goto out;
    /* the header: salt || rs || idlen || keyid */
    uint8_t *p = out;
    memcpy(p, salt, WR_PUSHCRYPT_SALT);
    p += WR_PUSHCRYPT_SALT;
    *p++ = (uint8_t)(WR_PUSHCRYPT_RS >> 24);
    *p++ = (uint8_t)(WR_PUSHCRYPT_RS >> 16);
    *p++ = (uint8_t)(WR_PUSHCRYPT_RS >> 8);
    *p++ = (uint8_t)WR_PUSHCRYPT_RS;
    *p++ = WR_CRYPTO_P256_PUB;
    memcpy(p, as_pub, WR_CRYPTO_P256_PUB);
    p += WR_CRYPTO_P256_PUB;
    /* the record: plaintext || 0x02 (the last record), sealed after the header */
    uint8_t rec[WR_PUSHCRYPT_PLAIN_MAX + 1];
    if (len)
        memcpy(rec, pt, len);
    rec[len] = 0x02;
    err = wr_crypto_aes128gcm_seal(k.cek, k.nonce, rec, len + 1, p);
    wr_crypto_wipe(rec, len + 1);
    if (err == WR_OK)
        *out_len = WR_PUSHCRYPT_BODY_LEN(len);
out:
    wr_crypto_wipe(&k, sizeof k);
    return err;
}

wr_err_t wr_pushcrypt_encrypt(const uint8_t ua_pub[WR_CRYPTO_P256_PUB],
                              const uint8_t auth[WR_PUSHCRYPT_AUTH], const uint8_t *pt, size_t len,
                              uint8_t *out, size_t cap, size_t *out_len)
{
    uint8_t as_priv[WR_CRYPTO_P256_PRIV], as_pub[WR_CRYPTO_P256_PUB], salt[WR_PUSHCRYPT_SALT];
    if (!ua_pub || !auth || (!pt && len) || !out || !out_len)
        return WR_EINVAL;
    wr_err_t err = wr_crypto_p256_keygen(as_priv, as_pub);
    if (err == WR_OK)
        err = wr_crypto_random(salt, sizeof salt);
    if (err == WR_OK)
        err = wr_pushcrypt_encrypt_with(as_priv, salt, ua_pub, auth, pt, len, out, cap, out_len);
    wr_crypto_wipe(as_priv, sizeof as_priv);
    return err;
}

wr_err_t wr_pushcrypt_decrypt(const uint8_t ua_priv[WR_CRYPTO_P256_PRIV],
                              const uint8_t auth[WR_PUSHCRYPT_AUTH], const uint8_t *body,
                              size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
    if (!ua_priv || !auth || !body || !out_len)
        return WR_EINVAL;
    if (len < WR_PUSHCRYPT_BODY_LEN(0) || len > WR_PUSHCRYPT_RS)
        return WR_EINVAL;
    const uint8_t *salt = body, *as_pub = body + WR_PUSHCRYPT_SALT + 5;
    uint32_t rs =
        (uint32_t)body[16] << 24 | (uint32_t)body[17] << 16 | (uint32_t)body[18] << 8 | body[19];
    /* one record: the whole rest of the body fits in rs */
    if (body[20] != WR_CRYPTO_P256_PUB || rs < 18 || len - WR_PUSHCRYPT_HEADER > rs)
        return WR_EINVAL;
    struct keys k;
    uint8_t ua_pub[WR_CRYPTO_P256_PUB], rec[WR_PUSHCRYPT_RS];
    size_t n = len - WR_PUSHCRYPT_HEADER - WR_CRYPTO_GCM_TAG;
    wr_err_t err = wr_crypto_p256_public(ua_priv, ua_pub);
    if (err == WR_OK)
        err = wr_crypto_p256_ecdh(ua_priv, as_pub, k.ecdh);
    if (err == WR_OK)
        err = derive(&k, ua_pub, as_pub, auth, salt);
    if (err == WR_OK)
        err = wr_crypto_aes128gcm_open(k.cek, k.nonce, body + WR_PUSHCRYPT_HEADER,
                                       len - WR_PUSHCRYPT_HEADER, rec);
    if (err != WR_OK)
        goto out;
    /* padding: zeros after the delimiter, which is 0x02 for the last record */
    while (n > 0 && rec[n - 1] == 0)
        n--;
    if (n == 0 || rec[n - 1] != 0x02) {
        err = WR_EINVAL;
        goto out;
    }
    n--;
    if (n > cap || (!out && n)) {
        err = WR_ELIMIT;
        goto out;
    }
    if (n)
        memcpy(out, rec, n);
    *out_len = n;
out:
    wr_crypto_wipe(rec, sizeof rec);
    wr_crypto_wipe(&k, sizeof k);
    return err;
}
