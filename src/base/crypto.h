/*
 * crypto.h - the cryptographic primitives of waitroom, over OpenSSL's
 * libcrypto: HMAC-SHA256, random bytes, a constant-time comparison, the
 * wiping of secrets, the derivation of the visitor cookie key, and the
 * digests (SHA-256 for snapshot checksums, SHA-1 for Redis script names),
 * Ed25519 (keys, PEM, signing and verifying: the public log's
 * checkpoints, base/note.h), and for Web Push P-256 (keys, PEM,
 * ECDH, ES256 signatures), HKDF-SHA-256 and AES-128-GCM.
 * Tokens and invites (token.c, invite.c), visitor cookies (identity.c),
 * the admin key check and the secrets (api, main), the snapshot
 * (mem_snapshot.c) and the Redis scripts (redis_conn.c) all go through
 * these; no other file calls libcrypto (redis_io.c uses OpenSSL for TLS
 * only, through libssl).
 *
 * Pure and stateless (OpenSSL keeps its own thread-safe random state); no
 * allocation visible to the caller, who owns every buffer.
 */
#ifndef WR_CRYPTO_H
#define WR_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_CRYPTO_MAC_LEN    32 /* bytes of an HMAC-SHA256 */
#define WR_CRYPTO_KEY_LEN    32 /* bytes of a derived key (wr_crypto_cookie_key) */
#define WR_CRYPTO_SHA256_LEN 32 /* bytes of a SHA-256 digest */
#define WR_CRYPTO_SHA1_HEX   40 /* chars of a SHA-1 digest in hex */

/*
 * HMAC-SHA256 of data (len bytes) under key (key_len bytes; an empty key
 * is a valid HMAC key), written to mac. Returns WR_OK, or WR_EINVAL for a
 * NULL pointer with a non-zero length or a key longer than INT_MAX.
 */
wr_err_t wr_crypto_hmac_sha256(const uint8_t *key, size_t key_len, const void *data, size_t len,
                               uint8_t mac[WR_CRYPTO_MAC_LEN]);

/* Fills buf with n cryptographically random bytes (OpenSSL RAND_bytes).
 * Returns WR_OK, WR_EINVAL (buf NULL, n > INT_MAX) or WR_EIO (no entropy). */
wr_err_t wr_crypto_random(void *buf, size_t n);

/* True if the n bytes at a and b are equal; the time taken depends on n
 * only, never on where they differ (CRYPTO_memcmp). */
bool wr_crypto_equal(const void *a, const void *b, size_t n);

/* Overwrites the n bytes at p with zeros in a way the compiler may not
 * remove (OPENSSL_cleanse): for secrets and keys about to be freed. */
void wr_crypto_wipe(void *p, size_t n);

/*
 * The key of the visitor cookie (identity.h) from a secret (len bytes):
 * HMAC-SHA256(secret, "waitroom cookie v1"). The secret is the configured
 * cookie secret, or the token secret when none is configured; the same for
 * the previous secrets of a rotation. The one place this key is derived.
 * Returns WR_OK, or WR_EINVAL for no secret (NULL or empty).
 */
wr_err_t wr_crypto_cookie_key(const uint8_t *secret, size_t len, uint8_t key[WR_CRYPTO_KEY_LEN]);

/*
 * A key derived from a secret (len bytes) for one purpose named by label
 * (a NUL-terminated string): HMAC-SHA256(secret, label). The cookie key
 * above is this with "waitroom cookie v1"; join challenges (challenge.h)
 * use their own label. Returns WR_OK, or WR_EINVAL for no secret (NULL or
 * empty) or no label.
 */
wr_err_t wr_crypto_derive_key(const uint8_t *secret, size_t len, const char *label,
                              uint8_t key[WR_CRYPTO_KEY_LEN]);

/*
 * A keyed HMAC-SHA256 for a hot path: the key's inner and outer pads are
 * hashed once, when it is made, and each MAC then costs two SHA-256
 * compressions of the data and of the inner hash (about 0.3 us for 100
 * bytes against about 2 us for wr_crypto_hmac_sha256, which sets OpenSSL's
 * HMAC up again on every call). The same MAC as wr_crypto_hmac_sha256 with
 * the same key. It holds a working context: one thread at a time.
 */
typedef struct wr_crypto_hmac wr_crypto_hmac_t;

/* A keyed HMAC over key (key_len bytes; longer than 64 is hashed first,
 * as RFC 2104 says), or NULL on ENOMEM, a NULL key with a non-zero length,
 * or an OpenSSL failure. The key is not kept. Free with wr_crypto_hmac_free. */
wr_crypto_hmac_t *wr_crypto_hmac_new(const uint8_t *key, size_t key_len);

/* The MAC of data (len bytes) into mac. WR_OK, WR_EINVAL (NULL pointers)
 * or WR_EIO (OpenSSL failed). */
wr_err_t wr_crypto_hmac_mac(wr_crypto_hmac_t *h, const void *data, size_t len,
                            uint8_t mac[WR_CRYPTO_MAC_LEN]);

/* Frees h (its pads wiped); NULL is a no-op. */
void wr_crypto_hmac_free(wr_crypto_hmac_t *h);

/* The SHA-1 of data (len bytes) as 40 lowercase hex digits and a NUL: the
 * name Redis gives a script (EVALSHA). Not for security. WR_OK, or
 * WR_EINVAL for NULL pointers. */
wr_err_t wr_crypto_sha1_hex(const void *data, size_t len, char out[WR_CRYPTO_SHA1_HEX + 1]);

/*
 * SHA-256 over data given in pieces (the snapshot checksum). The context
 * is ready when wr_crypto_sha256_new returns (the algorithm is fetched
 * there), so a forked child can update and finish one made before the
 * fork without touching OpenSSL's global state.
 */
typedef struct wr_crypto_sha256 wr_crypto_sha256_t;

/* A fresh context, or NULL on ENOMEM. Free with wr_crypto_sha256_free. */
wr_crypto_sha256_t *wr_crypto_sha256_new(void);

/* Adds len bytes of data. WR_OK, or WR_EIO when OpenSSL fails. */
wr_err_t wr_crypto_sha256_update(wr_crypto_sha256_t *h, const void *data, size_t len);

/* Writes the digest of everything added; the context is used up (only
 * wr_crypto_sha256_free may follow). WR_OK or WR_EIO. */
wr_err_t wr_crypto_sha256_final(wr_crypto_sha256_t *h, uint8_t out[WR_CRYPTO_SHA256_LEN]);

/* The digest of data (len bytes) alone, in one call, with h started
 * afresh: for many short digests through one context (join challenges'
 * proofs of work), without fetching the algorithm each time. h stays
 * usable for another wr_crypto_sha256_digest. WR_OK, WR_EINVAL or WR_EIO. */
wr_err_t wr_crypto_sha256_digest(wr_crypto_sha256_t *h, const void *data, size_t len,
                                 uint8_t out[WR_CRYPTO_SHA256_LEN]);

/* Starts h afresh (also after wr_crypto_sha256_final), for a digest of
 * several pieces through one context (the public log's leaf and node
 * hashes: a prefix byte, then the data). WR_OK, WR_EINVAL or WR_EIO. */
wr_err_t wr_crypto_sha256_reset(wr_crypto_sha256_t *h);

/* Frees h; NULL is a no-op. */
void wr_crypto_sha256_free(wr_crypto_sha256_t *h);

/* ---------- Ed25519 (RFC 8032): the public log's checkpoint signatures */

#define WR_CRYPTO_ED25519_SEED 32  /* bytes of a private key (its seed) */
#define WR_CRYPTO_ED25519_PUB  32  /* bytes of a public key */
#define WR_CRYPTO_ED25519_SIG  64  /* bytes of a signature */
#define WR_CRYPTO_PEM_MAX      512 /* bytes of an Ed25519 private key in PEM, and more */

/* A fresh private key (32 random bytes, its seed) in seed and its public
 * key in pub. WR_OK, WR_EINVAL (NULL) or WR_EIO (no entropy, OpenSSL). */
wr_err_t wr_crypto_ed25519_keygen(uint8_t seed[WR_CRYPTO_ED25519_SEED],
                                  uint8_t pub[WR_CRYPTO_ED25519_PUB]);

/* The public key of a private key. WR_OK, WR_EINVAL or WR_EIO. */
wr_err_t wr_crypto_ed25519_public(const uint8_t seed[WR_CRYPTO_ED25519_SEED],
                                  uint8_t pub[WR_CRYPTO_ED25519_PUB]);

/* The Ed25519 signature of msg (len bytes) under the private key seed
 * (deterministic: the same inputs give the same signature). WR_OK,
 * WR_EINVAL (NULL pointers) or WR_EIO. */
wr_err_t wr_crypto_ed25519_sign(const uint8_t seed[WR_CRYPTO_ED25519_SEED], const void *msg,
                                size_t len, uint8_t sig[WR_CRYPTO_ED25519_SIG]);

/* True when sig is a valid Ed25519 signature of msg (len bytes) under the
 * public key pub (OpenSSL's strict checks: a non-canonical point or S is
 * refused). False for NULL pointers. */
bool wr_crypto_ed25519_verify(const uint8_t pub[WR_CRYPTO_ED25519_PUB], const void *msg, size_t len,
                              const uint8_t sig[WR_CRYPTO_ED25519_SIG]);

/*
 * The private key of a PEM text (len bytes; "-----BEGIN PRIVATE KEY-----",
 * PKCS#8, as `openssl genpkey -algorithm ed25519` writes it) into seed.
 * WR_OK, or WR_EINVAL when it is not PEM, not PKCS#8, encrypted (no pass
 * phrase is ever asked for) or not an Ed25519 key (an RSA or P-256 key is
 * refused, not converted).
 */
wr_err_t wr_crypto_ed25519_from_pem(const char *pem, size_t len,
                                    uint8_t seed[WR_CRYPTO_ED25519_SEED]);

/* The PEM text (PKCS#8) of the private key seed, NUL-terminated, into out
 * (cap bytes; WR_CRYPTO_PEM_MAX is enough), its length without the NUL in
 * *out_len. WR_OK, WR_EINVAL, WR_ELIMIT (cap too small) or WR_EIO. */
wr_err_t wr_crypto_ed25519_to_pem(const uint8_t seed[WR_CRYPTO_ED25519_SEED], char *out, size_t cap,
                                  size_t *out_len);

/* ---------- P-256 (Web Push: RFC 8291 message encryption, RFC 8292 VAPID)
 *
 * Keys cross this interface as raw bytes: a private key is its 32-byte
 * big-endian scalar, a public key the 65-byte uncompressed point
 * (0x04 || X || Y), as the Push API's p256dh and the VAPID k= carry them. */

#define WR_CRYPTO_P256_PRIV   32 /* bytes of a private key (the scalar) */
#define WR_CRYPTO_P256_PUB    65 /* bytes of an uncompressed public point */
#define WR_CRYPTO_P256_SECRET 32 /* bytes of an ECDH shared secret (X) */
#define WR_CRYPTO_P256_SIG    64 /* bytes of an ES256 signature (r || s) */
#define WR_CRYPTO_AES128_KEY  16 /* bytes of an AES-128 key */
#define WR_CRYPTO_GCM_NONCE   12 /* bytes of an AES-GCM nonce */
#define WR_CRYPTO_GCM_TAG     16 /* bytes of an AES-GCM tag */

/* A fresh P-256 key pair: priv (a uniformly random scalar in [1, n-1])
 * and its public point pub. WR_OK, WR_EINVAL (NULL) or WR_EIO. */
wr_err_t wr_crypto_p256_keygen(uint8_t priv[WR_CRYPTO_P256_PRIV], uint8_t pub[WR_CRYPTO_P256_PUB]);

/* The public point of the private key priv. WR_OK, WR_EINVAL (NULL, or a
 * scalar that is 0 or not below the group order) or WR_EIO. */
wr_err_t wr_crypto_p256_public(const uint8_t priv[WR_CRYPTO_P256_PRIV],
                               uint8_t pub[WR_CRYPTO_P256_PUB]);

/* True when pub (len bytes) is an uncompressed P-256 point on the curve:
 * exactly 65 bytes, 0x04 first, X and Y below p, y^2 = x^3 - 3x + b (so
 * never the point at infinity). The check of a subscription's p256dh. */
bool wr_crypto_p256_point_valid(const uint8_t *pub, size_t len);

/* The ECDH shared secret (the X coordinate of priv * peer, 32 bytes, as
 * RFC 8291 section 3.1 uses it) into secret. WR_OK, or WR_EINVAL for NULL
 * pointers, a bad scalar or a peer that is not a valid point (checked as
 * wr_crypto_p256_point_valid), WR_EIO when OpenSSL fails. */
wr_err_t wr_crypto_p256_ecdh(const uint8_t priv[WR_CRYPTO_P256_PRIV],
                             const uint8_t peer[WR_CRYPTO_P256_PUB],
                             uint8_t secret[WR_CRYPTO_P256_SECRET]);

/* The ECDSA P-256 / SHA-256 signature of msg (len bytes) under priv, as
 * JWS ES256 writes it (RFC 7518 section 3.4): r and s, each 32 bytes
 * big-endian, concatenated (not DER). Randomized (OpenSSL's nonce): two
 * calls give different signatures, both valid. WR_OK, WR_EINVAL or WR_EIO. */
wr_err_t wr_crypto_p256_sign(const uint8_t priv[WR_CRYPTO_P256_PRIV], const void *msg, size_t len,
                             uint8_t sig[WR_CRYPTO_P256_SIG]);

/* True when sig (r || s) is a valid ES256 signature of msg (len bytes)
 * under the public point pub. False for NULL pointers or a bad point. */
bool wr_crypto_p256_verify(const uint8_t pub[WR_CRYPTO_P256_PUB], const void *msg, size_t len,
                           const uint8_t sig[WR_CRYPTO_P256_SIG]);

/* The private key of a PEM text (len bytes): PKCS#8 ("BEGIN PRIVATE
 * KEY", `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`)
 * or SEC 1 ("BEGIN EC PRIVATE KEY", `openssl ecparam -genkey -name
 * prime256v1`), into priv. WR_OK, or WR_EINVAL when it is not PEM,
 * encrypted (no pass phrase is ever asked for) or not a P-256 key (an
 * Ed25519, RSA or P-384 key is refused). */
wr_err_t wr_crypto_p256_from_pem(const char *pem, size_t len, uint8_t priv[WR_CRYPTO_P256_PRIV]);

/* The PEM text (PKCS#8) of priv, NUL-terminated, into out (cap bytes;
 * WR_CRYPTO_PEM_MAX is enough), its length without the NUL in *out_len
 * (may be NULL). WR_OK, WR_EINVAL, WR_ELIMIT (cap too small) or WR_EIO. */
wr_err_t wr_crypto_p256_to_pem(const uint8_t priv[WR_CRYPTO_P256_PRIV], char *out, size_t cap,
                               size_t *out_len);

/* HKDF-SHA-256 (RFC 5869), extract then expand: out_len bytes (1..8160)
 * of key material from ikm under salt (may be empty) and info (may be
 * empty), into out. WR_OK, WR_EINVAL (NULL with a length, out_len out of
 * range) or WR_EIO. */
wr_err_t wr_crypto_hkdf_sha256(const uint8_t *salt, size_t salt_len, const uint8_t *ikm,
                               size_t ikm_len, const uint8_t *info, size_t info_len, uint8_t *out,
                               size_t out_len);

/* AES-128-GCM encryption of pt (len bytes, no additional data) under key
 * and nonce: the ciphertext (len bytes) then the 16-byte tag into out
 * (len + WR_CRYPTO_GCM_TAG bytes; may not overlap pt). WR_OK, WR_EINVAL
 * or WR_EIO. */
wr_err_t wr_crypto_aes128gcm_seal(const uint8_t key[WR_CRYPTO_AES128_KEY],
                                  const uint8_t nonce[WR_CRYPTO_GCM_NONCE], const uint8_t *pt,
                                  size_t len, uint8_t *out);

/* The inverse: ct is len bytes of ciphertext followed by the tag (len >=
 * WR_CRYPTO_GCM_TAG); the plaintext (len - WR_CRYPTO_GCM_TAG bytes) into
 * out. WR_OK, WR_EINVAL (bad arguments, or the tag does not match: out
 * is then wiped) or WR_EIO. */
wr_err_t wr_crypto_aes128gcm_open(const uint8_t key[WR_CRYPTO_AES128_KEY],
                                  const uint8_t nonce[WR_CRYPTO_GCM_NONCE], const uint8_t *ct,
                                  size_t len, uint8_t *out);

#endif
