/*
 * identity.h - who the user is: the signed visitor cookie of cookie mode.
 *
 * The cookie value is "<vid>.<issued>.<mac>": vid is 128 random bits in
 * base64url (22 chars), issued the Unix time in seconds when the value was
 * signed (decimal, 1-12 digits, no leading zero), mac the base64url of
 * HMAC-SHA256(key, "<vid>.<issued>") (43 chars). Values of the first format,
 * "<vid>.<mac>" with mac = HMAC-SHA256(key, vid), still verify; their issue
 * time is unknown (0), so they count as old and are renewed. A value whose
 * MAC does not verify (constant-time compare) is ignored.
 *
 * An invited account (an invite's sub, cookie mode) has a cookie of its
 * own form, "~<acct>.<issued>.<mac>": acct is the base64url of the user id
 * (1..WR_USER_ID_MAX bytes), mac the HMAC of "~<acct>.<issued>". The '~' is
 * not base64url, so it is never a vid, and the MAC inputs of the forms
 * cannot be confused. Its user in line is the account itself.
 *
 * Knows nothing of HTTP: the http module reads the Cookie fields
 * (wr_http_visitor, wr_http_cookie) and the api sets the header.
 */
#ifndef WR_IDENTITY_H
#define WR_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"
#include "base/ids.h"

#define WR_IDENTITY_KEY_LEN WR_CRYPTO_KEY_LEN /* bytes of a cookie key (wr_crypto_cookie_key) */
#define WR_VID_LEN          22                /* visitor id, base64url of 16 bytes */
/* Longest cookie value, "<vid>.<issued>.<mac>" with a 12-digit time: the
 * size (+ NUL) of every buffer that holds one. Values are shorter. */
#define WR_VID_COOKIE_LEN (22 + 1 + 12 + 1 + 43)
/* Longest account cookie value, "~<acct>.<issued>.<mac>" (acct: base64url
 * of WR_USER_ID_MAX bytes, 171 chars), and so the size (+ NUL) of a buffer
 * that holds either form. */
#define WR_IDENTITY_COOKIE_MAX (1 + (WR_USER_ID_MAX * 4 + 2) / 3 + 1 + 12 + 1 + 43)
#define WR_VID_COOKIE_NAME     "wr_vid"
/* Max-Age of the visitor cookie, seconds. It is renewed on every join and,
 * once less than half of it is left, on a poll (wr_identity_should_renew),
 * so it outlives any wait during which the page keeps asking. */
#define WR_VID_COOKIE_MAX_AGE 86400
/* wr_vid values checked per request (a browser sends one, or two when a
 * sibling deployment on a parent domain sets its own): bounds the HMACs a
 * request full of wr_vid cookies can cost. */
#define WR_VID_CANDIDATES_MAX 8

/* The keys a visitor cookie may be signed with. */
typedef struct {
    const uint8_t *key; /* current: signs and verifies; key_len bytes */
    size_t key_len;
    const uint8_t *prev_key; /* previous (rotation): verifies only; NULL = none */
    size_t prev_key_len;
} wr_identity_keys_t;

/* A visitor read from a verified cookie. */
typedef struct {
    char user[WR_USER_ID_MAX + 1]; /* the user in line: the vid, or the account */
    bool account;                  /* an account cookie (user is the account, vid "") */
    char vid[WR_VID_LEN + 1];      /* NUL-terminated; "" for an account */
    int64_t issued_s; /* Unix seconds the value was signed; 0 = first format (unknown) */
    bool prev_key;    /* verified with the previous key */
} wr_identity_visitor_t;

/*
 * Creates a new visitor: a random vid and its cookie value issued at now_s
 * (Unix seconds). vid gets WR_VID_LEN + NUL; cookie at most
 * WR_VID_COOKIE_LEN + NUL. Returns WR_OK or WR_EINVAL.
 */
wr_err_t wr_identity_mint(const uint8_t *key, size_t key_len, int64_t now_s,
                          char vid[WR_VID_LEN + 1], char cookie[WR_VID_COOKIE_LEN + 1]);

/*
 * Signs an existing vid (WR_VID_LEN base64url chars) into a cookie value
 * issued at issued_s (1 .. 10^12 - 1 Unix seconds): renewal, and re-issuing
 * under a new key after a rotation. Returns WR_OK or WR_EINVAL (bad key,
 * vid or time).
 */
wr_err_t wr_identity_sign(const uint8_t *key, size_t key_len, const char *vid, int64_t issued_s,
                          char cookie[WR_VID_COOKIE_LEN + 1]);

/*
 * Signs the cookie value of an invited account: user (a valid user id, the
 * invite's sub) issued at issued_s (as wr_identity_sign). cookie gets at
 * most WR_IDENTITY_COOKIE_MAX + NUL. Returns WR_OK or WR_EINVAL.
 */
wr_err_t wr_identity_sign_account(const uint8_t *key, size_t key_len, const char *user,
                                  int64_t issued_s, char cookie[WR_IDENTITY_COOKIE_MAX + 1]);

/*
 * The value that renews v's cookie at now_s under key: the same form (vid
 * or account) with a new issue time. Returns WR_OK or WR_EINVAL.
 */
wr_err_t wr_identity_resign(const uint8_t *key, size_t key_len, const wr_identity_visitor_t *v,
                            int64_t now_s, char cookie[WR_IDENTITY_COOKIE_MAX + 1]);

/*
 * Checks one cookie value (len bytes, not necessarily NUL-terminated) of
 * any format (vid, first format, account) against key. Returns true and fills out (prev_key false)
 * if the MAC verifies; out is untouched otherwise.
 */
bool wr_identity_verify(const uint8_t *key, size_t key_len, const char *value, size_t len,
                        wr_identity_visitor_t *out);

/*
 * The visitor of one Cookie header value (RFC 6265 "a=b; c=d"): the first
 * wr_vid cookie, in order, that verifies under keys->key or keys->prev_key.
 * *budget is the number of wr_vid values that may still be checked; each
 * one checked spends one (share it across the Cookie fields of a request,
 * starting at WR_VID_CANDIDATES_MAX). Returns true and fills out if found.
 */
bool wr_identity_find_visitor(const wr_identity_keys_t *keys, const char *header, unsigned *budget,
                              wr_identity_visitor_t *out);

/*
 * Whether a poll should renew the visitor's cookie (a join always does):
 * less than half of WR_VID_COOKIE_MAX_AGE is left (a first-format value
 * always), or it was signed with the previous key.
 */
bool wr_identity_should_renew(const wr_identity_visitor_t *v, int64_t now_s);

/*
 * Finds cookie `name` in a Cookie header value (RFC 6265 "a=b; c=d"),
 * starting at byte *pos (0 for the first); advances *pos past it, so calling
 * again finds the next one. Returns a pointer into header and sets *len, or
 * NULL when there is no further one. Scans at most the first 32 KiB.
 */
const char *wr_identity_next_cookie(const char *header, const char *name, size_t *pos, size_t *len);

/* The first cookie `name` in header (wr_identity_next_cookie from 0). */
const char *wr_identity_find_cookie(const char *header, const char *name, size_t *len);

#endif
