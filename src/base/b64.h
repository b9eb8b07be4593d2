/*
 * b64.h - base64url without padding (RFC 4648 section 5), as JWTs and
 * cookies use it, and standard base64 with padding (section 4), as the
 * public log's hashes, keys and signed notes use it. Bounded: callers pass
 * the output capacity.
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

/* Encoded length (without NUL) of n input bytes in standard base64 with
 * padding: 4 * ceil(n / 3). */
size_t wr_b64_encoded_len(size_t n);

/* Standard base64 with '=' padding of n bytes of in into out (cap bytes,
 * including room for NUL). WR_OK (*out_len without NUL), WR_EINVAL or
 * WR_ELIMIT, as wr_b64url_encode. */
wr_err_t wr_b64_encode(const uint8_t *in, size_t n, char *out, size_t cap, size_t *out_len);

/* Decodes n characters of standard base64 with padding (a multiple of 4,
 * exactly the '=' the length needs, zero unused bits, no whitespace) into
 * out (cap bytes). WR_OK and *out_len, WR_EINVAL or WR_ELIMIT. */
wr_err_t wr_b64_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *out_len);

#endif
