/*
 * vapid.h - Voluntary Application Server Identification for Web Push
 * (RFC 8292): the ES256 JWT that tells a push service who sends, and the
 * `Authorization: vapid t=<jwt>, k=<public key>` header that carries it,
 * with a cache of one header per push-service origin, so a burst of
 * admissions signs once per push service, not once per message.
 *
 * The JWT: header {"typ":"JWT","alg":"ES256"}, claims
 * {"aud":"<the endpoint's origin>","exp":<epoch s>,"sub":"<--push-subject>"}
 * in that order, compact JSON, each part base64url without padding, the
 * signature ECDSA P-256 / SHA-256 as the 64-byte r || s (RFC 7518 3.4).
 * exp is WR_VAPID_LIFETIME_S ahead of its signing (RFC 8292 section 2:
 * at most 24 h); a cached header is signed again once less than
 * WR_VAPID_RENEW_S of it is left, so no push ever carries a JWT that
 * expires during its 10 s try.
 *
 * Pure: the clock is the caller's (now_s), the key is raw bytes; the
 * cache is the only allocation, bounded at creation.
 */
#ifndef WR_VAPID_H
#define WR_VAPID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"

#define WR_VAPID_SUBJECT_MAX 255         /* --push-subject bytes, without NUL */
#define WR_VAPID_ORIGIN_MAX  300         /* an audience (origin) bytes, without NUL */
#define WR_VAPID_JWT_MAX     1024        /* a JWT's bytes, without NUL (ours are under 800) */
#define WR_VAPID_AUTH_MAX    1200        /* an Authorization value, without NUL */
#define WR_VAPID_KEY_B64     87          /* chars of the public key in base64url */
#define WR_VAPID_LIFETIME_S  (12 * 3600) /* exp - signing time */
#define WR_VAPID_RENEW_S     3600        /* a cached JWT with less left is signed again */

/*
 * True for a subject RFC 8292 section 2.1 accepts and the contract
 * allows: "mailto:" and an address with an "@" and a domain, or an
 * "https://" URL with a host; printable ASCII only (no spaces, quotes or
 * backslashes), at most WR_VAPID_SUBJECT_MAX bytes, and never a
 * `localhost` one (the domain or host "localhost" or a name ending in
 * ".localhost", any case): push services refuse those.
 */
bool wr_vapid_subject_ok(const char *subject);

/*
 * The JWT of aud (an origin: "https://push.example.net"), exp (epoch
 * seconds) and sub (a subject) signed with the P-256 private key priv,
 * NUL-terminated into out (cap bytes), its length to *out_len (may be
 * NULL). WR_OK, WR_EINVAL (NULL, an empty or oversized aud or sub),
 * WR_ELIMIT (cap) or WR_EIO.
 */
wr_err_t wr_vapid_jwt(const uint8_t priv[WR_CRYPTO_P256_PRIV], const char *aud, int64_t exp,
                      const char *sub, char *out, size_t cap, size_t *out_len);

/*
 * The Authorization header value "vapid t=<jwt>, k=<key>" for that JWT,
 * k being the base64url of pub (the 65-byte point of priv). Same errors.
 */
wr_err_t wr_vapid_authorization(const uint8_t priv[WR_CRYPTO_P256_PRIV],
                                const uint8_t pub[WR_CRYPTO_P256_PUB], const char *aud, int64_t exp,
                                const char *sub, char *out, size_t cap, size_t *out_len);

/* The cache: a key, a subject and at most `slots` origins' headers. */
typedef struct wr_vapid wr_vapid_t;

/*
 * A cache for the key priv (copied; wiped at free) and subject (copied;
 * must pass wr_vapid_subject_ok) holding at most slots (1..4096) origins;
 * when full, the entry signed longest ago is replaced. NULL on ENOMEM or
 * bad arguments.
 */
wr_vapid_t *wr_vapid_new(const uint8_t priv[WR_CRYPTO_P256_PRIV], const char *subject,
                         size_t slots);

/* Frees v (its key wiped); NULL is a no-op. */
void wr_vapid_free(wr_vapid_t *v);

/* The public point of v's key (65 bytes, borrowed for v's life). */
const uint8_t *wr_vapid_public(const wr_vapid_t *v);

/*
 * The Authorization value for a push to origin aud at now_s (epoch
 * seconds): the cached one while more than WR_VAPID_RENEW_S of its JWT is
 * left, else a new one (exp = now_s + WR_VAPID_LIFETIME_S). *out is
 * borrowed until the next call on v. WR_OK, WR_EINVAL (NULL, bad aud) or
 * WR_EIO.
 */
wr_err_t wr_vapid_get(wr_vapid_t *v, const char *aud, int64_t now_s, const char **out);

/* How many JWTs v has signed (for tests: the cache's effect). */
uint64_t wr_vapid_signed(const wr_vapid_t *v);

#endif
