/*
 * crypto.h - the cryptographic primitives of waitroom, over OpenSSL's
 * libcrypto: HMAC-SHA256, random bytes, a constant-time comparison, the
 * wiping of secrets, the derivation of the visitor cookie key, and the
 * digests (SHA-256 for snapshot checksums, SHA-1 for Redis script names).
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

/* Frees h; NULL is a no-op. */
void wr_crypto_sha256_free(wr_crypto_sha256_t *h);

#endif
