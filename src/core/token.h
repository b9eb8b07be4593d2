/*
 * token.h - entry tokens: JWT (RFC 7519) signed with HS256 (OpenSSL HMAC).
 *
 * Header {"alg":"HS256","typ":"JWT"}; claims iss "waitroom", aud = queue
 * name, sub = user id, jti = 128-bit random base64url (22 chars), iat and
 * exp in seconds since the epoch, "fo":true on a fail-open pass
 * (claims.fail_open; degraded mode) and "byp":"<rule>" on a bypass pass
 * (claims.bypass). Verification pins alg to HS256 (anything
 * else, "none" included, is rejected), compares the MAC in constant time,
 * and is pure: it never touches the store. Whether the jti is still live is
 * the store's question (wr_store_consume / wr_store_verify).
 */
#ifndef WR_TOKEN_H
#define WR_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/ids.h"
#include "core/bypass.h"

/* jansson's object type, for wr_token_verify_jws (jansson.h declares it the
 * same way; token.h needs nothing else of it). */
typedef struct json_t json_t;

#define WR_TOKEN_MAX      1024 /* longest token accepted or produced, bytes */
#define WR_SECRET_MIN     32   /* token secret: at least 32 bytes */
#define WR_SECRET_MAX     256
#define WR_TOKEN_KEYS_MAX 4 /* keys a verifier tries (current + previous ones) */

/* Why a token was refused; the API's "reason" field is wr_token_reason_name(). */
typedef enum {
    WR_TOKEN_OK = 0,
    WR_TOKEN_MISSING,       /* "missing": no token given */
    WR_TOKEN_MALFORMED,     /* "malformed": not three base64url parts of JSON */
    WR_TOKEN_BAD_ALG,       /* "unsupported_alg": alg other than HS256, incl. none */
    WR_TOKEN_BAD_SIGNATURE, /* "bad_signature": MAC does not verify */
    WR_TOKEN_WRONG_QUEUE,   /* "wrong_queue": aud is another queue */
    WR_TOKEN_EXPIRED,       /* "expired": exp in the past (or store expiry passed) */
    WR_TOKEN_CONSUMED,      /* "consumed": not live in the store (used, revoked) */
    WR_TOKEN_USER_MISMATCH, /* "user_mismatch": userId given and different */
    WR_TOKEN_WRONG_ISSUER,  /* "wrong_issuer": MAC verifies but iss is not "waitroom" */
    WR_TOKEN_NO_SESSION,    /* "noSession": release found no open session */
} wr_token_reason_t;

/* The claims of a verified token; strings are NUL-terminated copies. */
typedef struct {
    char queue[WR_QUEUE_NAME_MAX + 1]; /* aud */
    char user[WR_USER_ID_MAX + 1];     /* sub */
    char jti[WR_JTI_LEN + 1];          /* jti */
    int64_t iat;                       /* seconds since the epoch */
    int64_t exp;                       /* seconds since the epoch */
    /* Degraded mode: a fail-open pass, handed out while the store was
     * unreachable ("fo":true in the JWT, absent when false). Its jti is not
     * in the store; the API spends it once (docs/API.md, 1.1). */
    bool fail_open;
    /* A bypass pass (docs/API.md 1.3, "Bypass, safely"): the name of the
     * bypass rule a join matched ("byp":"<name>" in the JWT, absent when
     * ""). Like a fail-open pass, its jti is not in the store: consume
     * spends it once through the store's burned set. */
    char bypass[WR_BYPASS_NAME_MAX + 1];
} wr_token_claims_t;

/* Whether the token is a pass the store's live tokens never held (a
 * fail-open pass or a bypass pass): spent once through the store's burned
 * set, its exp exact. */
static inline bool wr_token_off_store(const wr_token_claims_t *c)
{
    return c->fail_open || c->bypass[0] != '\0';
}

/*
 * A signing key: the secret (borrowed) and its key id. Rotation: tokens are
 * signed with the current key and carry its kid in the JOSE header
 * ({"alg":"HS256","typ":"JWT","kid":"..."}); a verifier holds the current
 * and previous keys, so tokens signed before a rotation stay valid until
 * they expire.
 */
typedef struct {
    const uint8_t *secret;
    size_t len;
    char kid[WR_KID_LEN + 1]; /* wr_token_kid(secret), or "" for a token without kid */
} wr_token_key_t;

/* "missing", "malformed", ... as listed above; "ok" for WR_TOKEN_OK. */
const char *wr_token_reason_name(wr_token_reason_t r);

/*
 * Signs claims with HS256 under secret (secret_len bytes) into out (cap
 * bytes incl. NUL). The same claims and secret always give the same token.
 * Returns WR_OK, WR_ELIMIT if out is too small, WR_EINVAL on bad claims.
 */
wr_err_t wr_token_sign(const wr_token_claims_t *claims, const uint8_t *secret, size_t secret_len,
                       char *out, size_t cap);

/*
 * Verifies token (len bytes, need not be NUL-terminated) against secret:
 * structure, alg == HS256, MAC (constant time, before any claim is
 * trusted), iss == "waitroom", and exp > now_s (seconds since the epoch).
 * Returns WR_TOKEN_OK and fills *claims, or the first reason that fails.
 * Does not check aud against a queue; see wr_token_check_queue.
 */
wr_token_reason_t wr_token_verify(const char *token, size_t len, const uint8_t *secret,
                                  size_t secret_len, int64_t now_s, wr_token_claims_t *claims);

/*
 * The key id of a secret: the first WR_KID_LEN characters of
 * base64url(HMAC-SHA256(secret, "waitroom kid v1")). Deterministic, so
 * every instance with the same secret names it alike; reveals nothing
 * about the secret. Returns WR_OK or WR_EINVAL (empty secret).
 */
wr_err_t wr_token_kid(const uint8_t *secret, size_t len, char kid[WR_KID_LEN + 1]);

/* wr_token_sign with key->secret, writing key->kid (when not empty) into
 * the JOSE header. Same errors. */
wr_err_t wr_token_sign_key(const wr_token_claims_t *claims, const wr_token_key_t *key, char *out,
                           size_t cap);

/*
 * wr_token_verify against a keyring of n keys (n <= WR_TOKEN_KEYS_MAX):
 * a token whose header names a kid is checked with that key only (an
 * unknown kid is bad_signature); a token without kid is tried against
 * every key. Each MAC comparison is constant time.
 */
wr_token_reason_t wr_token_verify_keys(const char *token, size_t len, const wr_token_key_t *keys,
                                       size_t n, int64_t now_s, wr_token_claims_t *claims);

/*
 * Signs an arbitrary claims object (len bytes of JSON text, borrowed) as a
 * JWT with the header {"alg":"HS256","typ":"JWT"} under secret. Used for
 * invites (invite.h). Returns WR_OK, WR_ELIMIT (out too small or claims
 * too long for WR_TOKEN_MAX), WR_EINVAL.
 */
wr_err_t wr_token_sign_json(const char *claims, size_t len, const uint8_t *secret,
                            size_t secret_len, char *out, size_t cap);

/*
 * Steps 1-3 of verification (structure, alg == HS256, no crit, kid, MAC in
 * constant time against the n keys) and the decoding of the claims part;
 * no claim is checked. Returns WR_TOKEN_OK and, when payload is not NULL,
 * a new reference to the claims object in *payload (caller json_decref's
 * it); else MISSING, MALFORMED (also: claims not a JSON object), BAD_ALG or
 * BAD_SIGNATURE, and *payload is untouched.
 */
wr_token_reason_t wr_token_verify_jws(const char *token, size_t len, const wr_token_key_t *keys,
                                      size_t n, json_t **payload);

/* Writes a fresh jti (22 base64url chars + NUL) to out (>= WR_JTI_LEN + 1). */
wr_err_t wr_token_new_jti(char out[WR_JTI_LEN + 1]);

#endif
