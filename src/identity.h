/*
 * identity.h - who the user is: the signed visitor cookie of cookie mode.
 *
 * The cookie value is "<vid>.<mac>": vid is 128 random bits in base64url
 * (22 chars), mac is base64url(HMAC-SHA256(key, vid)) (43 chars). A value
 * whose MAC does not verify (constant-time compare) is ignored. Knows
 * nothing of HTTP; the http module reads and sets the header.
 */
#ifndef WR_IDENTITY_H
#define WR_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define WR_VID_LEN         22            /* visitor id, base64url of 16 bytes */
#define WR_VID_COOKIE_LEN  (22 + 1 + 43) /* "<vid>.<mac>" */
#define WR_VID_COOKIE_NAME "wr_vid"

/*
 * Creates a new visitor: a random vid and its signed cookie value.
 * vid gets WR_VID_LEN + NUL; cookie gets WR_VID_COOKIE_LEN + NUL.
 */
wr_err_t wr_identity_new_visitor(const uint8_t *key, size_t key_len, char vid[WR_VID_LEN + 1],
                                 char cookie[WR_VID_COOKIE_LEN + 1]);

/*
 * Signs an existing visitor id (WR_VID_LEN base64url chars) into a cookie
 * value (WR_VID_COOKIE_LEN + NUL): re-issues a cookie under a new key after
 * a rotation. Returns WR_OK or WR_EINVAL (bad key or vid).
 */
wr_err_t wr_identity_sign_vid(const uint8_t *key, size_t key_len, const char *vid,
                              char cookie[WR_VID_COOKIE_LEN + 1]);

/*
 * Checks a cookie value (len bytes, not necessarily NUL-terminated).
 * Returns true and writes the vid (NUL-terminated) if the MAC verifies.
 */
bool wr_identity_verify_cookie(const uint8_t *key, size_t key_len, const char *value, size_t len,
                               char vid[WR_VID_LEN + 1]);

/*
 * Finds cookie `name` in a Cookie header value (RFC 6265 "a=b; c=d").
 * Returns a pointer into header and sets *len, or NULL if absent.
 */
const char *wr_identity_find_cookie(const char *header, const char *name, size_t *len);

#endif
