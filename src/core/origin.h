/*
 * origin.h - web origins and the queue page's `return` URL: the check that
 * keeps ?return= from being an open redirect, and the token handoff in a
 * query string. Pure string functions: no I/O, no allocation, no HTTP.
 *
 * An origin here is "scheme://host[:port]" (RFC 6454) in its canonical
 * spelling: scheme "http" or "https", host in lower case (a DNS name of
 * letters, digits, '-' and '.', or a bracketed IPv6 literal), the port
 * only when it is not the scheme's default (80 / 443).
 */
#ifndef WR_ORIGIN_H
#define WR_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>

/* "https://" + a 253-byte host + ":65535", rounded up. */
#define WR_ORIGIN_MAX 272

/*
 * Reads an origin as configured (returnOrigins): exactly
 * scheme://host[:port], nothing after it (no path, not even "/"), no
 * userinfo. Scheme and host are case-insensitive; the port is 1..65535.
 * Writes the canonical origin to out (NUL-terminated) and returns true;
 * false when s (len bytes) is not an origin (out is then "").
 */
bool wr_origin_parse(const char *s, size_t len, char out[WR_ORIGIN_MAX + 1]);

/*
 * The canonical origin of an absolute http(s) URL (NUL-terminated): the
 * authority must be a host with an optional port, followed by the end, '/',
 * '?' or '#'. Refused (false, out ""): userinfo ('@'), backslashes, any
 * byte <= 0x20, 0x7f or >= 0x80, percent-escapes or other bytes in the
 * host, an empty or out-of-range port, a host ending in '.', and every
 * other scheme or spelling ("//host", "https:host", "javascript:").
 */
bool wr_origin_of_url(const char *url, char out[WR_ORIGIN_MAX + 1]);

/*
 * Whether the queue page may send an admitted person to `ret` (the value of
 * ?return=, already percent-decoded once): true when
 *   - ret is an absolute http(s) URL (wr_origin_of_url) whose origin is the
 *     origin of target_url or one of the n origins (canonical, as
 *     wr_origin_parse writes them), or
 *   - ret is a path ("/" followed by anything but '/' or '\') and
 *     target_url is a path too: both are on the queue page's own origin.
 * Every byte of ret must be printable ASCII other than '\', '"', '<', '>'
 * (browsers drop tabs and newlines from URLs and read '\' as '/', which
 * would turn "/\t/evil" or "/\evil" into "//evil"), and ret at most max_len
 * bytes. Anything else is false: the page then uses targetUrl.
 */
bool wr_origin_return_ok(const char *ret, size_t max_len, const char *target_url,
                         const char (*origins)[WR_ORIGIN_MAX + 1], size_t n);

/*
 * Appends the query parameter "name=value" to url (value must need no
 * escaping, e.g. a JWT): before the fragment, after the existing query
 * with '&' (or '?' when there is none; no separator is doubled when the
 * query ends in '?' or '&'). Writes out (cap bytes with NUL) and returns
 * true, or false when it does not fit.
 */
bool wr_origin_add_param(const char *url, const char *name, const char *value, char *out,
                         size_t cap);

#endif
