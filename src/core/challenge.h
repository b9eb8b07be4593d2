/*
 * challenge.h - join challenges (docs/API.md 1.2, "A place costs work"):
 * a proof of work a client must show to take a place in a queue with
 * challengeBits > 0. Stateless: a challenge is signed by the server and
 * bound to the caller (cookie visitor or header user), the queue and its
 * expiry, so any instance that has the token secret can check any other's
 * with no store read or write. A solution is a nonce such that SHA-256 of
 * the bytes `challenge ":" nonce` begins with at least the queue's current
 * challengeBits zero bits (most significant bit of the first byte first).
 *
 * Pure: no I/O and no clock (the caller gives now). A key holds OpenSSL
 * contexts it reuses: one thread at a time per key.
 */
#ifndef WR_CHALLENGE_H
#define WR_CHALLENGE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_CHALLENGE_MAX       256    /* chars of a challenge (API: at most 256), without NUL */
#define WR_CHALLENGE_NONCE_MAX 64     /* chars of a nonce, [A-Za-z0-9]{1,64} */
#define WR_CHALLENGE_BITS_MAX  32     /* challengeBits' range is 0..32 */
#define WR_CHALLENGE_TTL_MS    300000 /* a challenge's life from its issue, ms (API: >= 120 s) */

/* Why a solution was refused; the API's "reason" is wr_challenge_reason_name(). */
typedef enum {
    WR_CHALLENGE_OK = 0,
    WR_CHALLENGE_MISSING,      /* "missing": no challenge given */
    WR_CHALLENGE_MALFORMED,    /* "malformed": not of the format, not signed by any key given,
                                  or a nonce outside [A-Za-z0-9]{1,64} */
    WR_CHALLENGE_EXPIRED,      /* "expired": its expiresAt <= now */
    WR_CHALLENGE_WRONG_USER,   /* "wrongUser": issued to another caller or another queue */
    WR_CHALLENGE_INSUFFICIENT, /* "insufficient": fewer zero bits than the queue's setting */
    WR_CHALLENGE_USED,         /* "used": valid, but it bought a place already (API 1.3) */
} wr_challenge_reason_t;

#define WR_CHALLENGE_N_REASONS 7

/* "ok", "missing", "malformed", "expired", "wrongUser", "insufficient",
 * "used". */
const char *wr_challenge_reason_name(wr_challenge_reason_t r);

/* The signing state of one secret. */
typedef struct wr_challenge_key wr_challenge_key_t;

/*
 * A key from the shared token secret (len bytes; every instance has it):
 * the MAC key is derived from it under the label "waitroom challenge v1",
 * so a challenge MAC can never pass for a token or cookie MAC. NULL for no
 * secret (NULL or empty) or out of memory. Free with wr_challenge_key_free.
 */
wr_challenge_key_t *wr_challenge_key_new(const uint8_t *secret, size_t len);

/* Frees k; NULL is a no-op. */
void wr_challenge_key_free(wr_challenge_key_t *k);

/*
 * Issues a challenge of queue for user (both valid ids, ids.h) asking for
 * bits (0..32) zero bits, good until expires_at_ms (epoch ms, > 0):
 * "1.<bits>.<expiresAt>.<tag>.<bind>", <tag> (16 chars, base64url) the
 * first 12 bytes of HMAC(key, "t" bits expiresAt) - issued by us - and
 * <bind> (22 chars) the first 16 bytes of HMAC(key, "b" bits expiresAt
 * queue user) - for whom. out gets at most WR_CHALLENGE_MAX chars and a
 * NUL. Returns WR_OK, WR_EINVAL (bad arguments) or WR_EIO (OpenSSL).
 */
wr_err_t wr_challenge_issue(wr_challenge_key_t *k, const char *queue, const char *user,
                            unsigned bits, int64_t expires_at_ms, char out[WR_CHALLENGE_MAX + 1]);

/*
 * Checks a solution: challenge (clen bytes; NULL or empty is missing) and
 * nonce (nlen bytes) of caller user in queue, against the queue's current
 * required bits at now_ms (epoch ms). keys: n_keys keys tried in order (the
 * current secret's, then the previous one's during a rotation; NULL
 * entries skipped). In order: the format (malformed), the tag under some
 * key (malformed: none of ours), the expiry (expired), the binding under
 * that key (wrongUser), the nonce's format (malformed), then the digest's
 * zero bits >= required (insufficient): a solution counts by its own zero
 * bits, whatever bits the challenge was issued with. MACs are compared in
 * constant time. No allocation.
 */
wr_challenge_reason_t wr_challenge_check(wr_challenge_key_t *const *keys, size_t n_keys,
                                         const char *queue, const char *user, const char *challenge,
                                         size_t clen, const char *nonce, size_t nlen,
                                         unsigned required, int64_t now_ms);

/*
 * The id under which a join gate remembers something spent (a used
 * challenge, a verified CAPTCHA response) in the store's spent set
 * (store.h burn): base64url of the first 16 bytes of SHA-256 of kind and
 * the n parts (each parts[i], lens[i] bytes), NUL-separated, so no two
 * lists give one id; 22 chars and a NUL into out, of a jti's alphabet and
 * length (ids.h), and never a jti we issue (those are random). Unkeyed:
 * every instance computes the same id whatever its secrets. k lends its
 * digest context (one thread at a time). Returns WR_OK, WR_EINVAL (bad
 * arguments, over WR_CHALLENGE_ID_INPUT_MAX bytes in all) or WR_EIO.
 */
#define WR_CHALLENGE_ID_LEN       22
#define WR_CHALLENGE_ID_INPUT_MAX 8192
wr_err_t wr_challenge_spent_id(wr_challenge_key_t *k, const char *kind, const char *const *parts,
                               const size_t *lens, size_t n, char out[WR_CHALLENGE_ID_LEN + 1]);

/* The expiresAt (epoch ms) a challenge says, or -1 when it is not of the
 * format (not checked against any key). */
int64_t wr_challenge_expires_at(const char *challenge, size_t clen);

/* The number of leading zero bits of the n bytes at digest, most
 * significant bit of the first byte first (0..8n). */
unsigned wr_challenge_zero_bits(const uint8_t *digest, size_t n);

/*
 * The proof of work itself, for tools and tests (the page's solver is
 * web/challenge.js): the first nonce (decimal digits from 0 up) whose
 * digest has at least bits zero bits, into nonce (NUL-terminated).
 * Returns the number of digests tried (>= 1), or 0 when none was found
 * within max_tries or on bad arguments.
 */
uint64_t wr_challenge_solve(const char *challenge, unsigned bits, uint64_t max_tries,
                            char nonce[WR_CHALLENGE_NONCE_MAX + 1]);

#endif
