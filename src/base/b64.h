/*
 * b64.h - base64url without padding (RFC 4648 section 5), as JWTs and
 * cookies use it. Bounded: callers pass the output capacity.
 */
#ifndef WR_B64_H
#define WR_B64_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Encoded length (without NUL) of n input bytes. */
size_t wr_b64url_encoded_len(size_t n);

/*
 * Encodes n bytes of in into out (cap bytes, including room for NUL).
 * Returns WR_OK and sets *out_len (without NUL), or WR_ELIMIT if cap is too
 * small (out untouched beyond cap).
 */
wr_err_t wr_b64url_encode(const uint8_t *in, size_t n, char *out, size_t cap, size_t *out_len);

/*
 * Decodes n characters of base64url (no padding, no whitespace) into out
 * (cap bytes). Returns WR_OK and sets *out_len, WR_EINVAL on a character
 * outside the alphabet, an impossible length (n % 4 == 1) or non-zero
 * trailing bits, WR_ELIMIT if cap is too small.
 */
wr_err_t wr_b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *out_len);

#endif
