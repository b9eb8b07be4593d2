/*
 * pushcrypt.h - Web Push message encryption (RFC 8291 over RFC 8188's
 * aes128gcm content coding): one record, the header carrying the
 * server's ephemeral public key as its key id, so the browser that holds
 * the subscription's private key and auth secret can read it and nobody
 * on the way (the push service included) can.
 *
 * The body is: salt (16 random bytes) || rs (4 bytes, big-endian, 4096)
 * || idlen (1 byte, 65) || keyid (the ephemeral public point, 65 bytes)
 * || the one record: AES-128-GCM of plaintext || 0x02 (the last record's
 * padding delimiter, no further padding), with its 16-byte tag.
 *
 * Pure (no I/O, no clock, no allocation); the caller owns every buffer.
 */
#ifndef WR_PUSHCRYPT_H
#define WR_PUSHCRYPT_H

#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"

#define WR_PUSHCRYPT_SALT   16   /* bytes of the salt */
#define WR_PUSHCRYPT_AUTH   16   /* bytes of a subscription's auth secret */
#define WR_PUSHCRYPT_RS     4096 /* the record size written in the header */
#define WR_PUSHCRYPT_HEADER (WR_PUSHCRYPT_SALT + 4 + 1 + WR_CRYPTO_P256_PUB) /* 86 bytes */
/* The most plaintext one record holds (RFC 8291 section 4: 3993 bytes),
 * so a body is at most WR_PUSHCRYPT_RS bytes. */
#define WR_PUSHCRYPT_PLAIN_MAX (WR_PUSHCRYPT_RS - WR_PUSHCRYPT_HEADER - WR_CRYPTO_GCM_TAG - 1)
/* Bytes of the body of len bytes of plaintext. */
#define WR_PUSHCRYPT_BODY_LEN(len) (WR_PUSHCRYPT_HEADER + (len) + 1 + WR_CRYPTO_GCM_TAG)

/*
 * Encrypts pt (len bytes, at most WR_PUSHCRYPT_PLAIN_MAX) for the
 * subscription whose public point is ua_pub (its p256dh, decoded) and
 * auth secret auth, under a fresh ephemeral key pair and a random salt.
 * The body goes to out (cap bytes; WR_PUSHCRYPT_BODY_LEN(len) needed), its
 * length to *out_len. WR_OK, WR_EINVAL (NULL pointers, ua_pub not a valid
 * P-256 point), WR_ELIMIT (len too long, cap too small) or WR_EIO.
 */
wr_err_t wr_pushcrypt_encrypt(const uint8_t ua_pub[WR_CRYPTO_P256_PUB],
                              const uint8_t auth[WR_PUSHCRYPT_AUTH], const uint8_t *pt, size_t len,
                              uint8_t *out, size_t cap, size_t *out_len);

/*
 * The same with the ephemeral private key as_priv and the salt given:
 * deterministic, for the RFC 8291 Appendix A test vector. Same errors.
 * Never reuse a (key, salt) pair for two messages outside tests.
 */
wr_err_t wr_pushcrypt_encrypt_with(const uint8_t as_priv[WR_CRYPTO_P256_PRIV],
                                   const uint8_t salt[WR_PUSHCRYPT_SALT],
                                   const uint8_t ua_pub[WR_CRYPTO_P256_PUB],
                                   const uint8_t auth[WR_PUSHCRYPT_AUTH], const uint8_t *pt,
                                   size_t len, uint8_t *out, size_t cap, size_t *out_len);

/*
 * The receiver's side (the browser's; for tests and tools): decrypts a
 * one-record body (len bytes) with the subscription's private key ua_priv
 * and auth secret, the plaintext (padding removed) into out (cap bytes),
 * its length into *out_len. WR_OK, WR_EINVAL (a malformed header, a bad
 * key id, a tag that does not match, no 0x02 delimiter) or WR_ELIMIT.
 */
wr_err_t wr_pushcrypt_decrypt(const uint8_t ua_priv[WR_CRYPTO_P256_PRIV],
                              const uint8_t auth[WR_PUSHCRYPT_AUTH], const uint8_t *body,
                              size_t len, uint8_t *out, size_t cap, size_t *out_len);

#endif
