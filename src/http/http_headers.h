/*
 * http_headers.h - reading request header fields that may come several
 * times (RFC 9110 5.3): the request keeps each field line as its own entry,
 * and wr_http_req_header sees only the first. Included by http.h.
 */
#ifndef WR_HTTP_HEADERS_H
#define WR_HTTP_HEADERS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/identity.h"
#include "http/http_conn.h"

/* Number of request header fields named name (case-insensitive). */
size_t wr_http_header_count(const wr_http_req_t *req, const char *name);

/*
 * Cookie `name` of req, reading every Cookie field in order as one list
 * (HTTP/2 proxies split cookies into several fields): the first one found.
 * Returns a pointer into the request's headers (valid while req is) and
 * sets *len, or NULL if absent.
 */
const char *wr_http_cookie(const wr_http_req_t *req, const char *name, size_t *len);

/*
 * The visitor of req in cookie mode: of every wr_vid cookie, across the
 * Cookie fields in order, the first whose signature verifies under keys
 * (at most WR_VID_CANDIDATES_MAX values are checked). Returns true and
 * fills out if there is one.
 */
bool wr_http_visitor(const wr_http_req_t *req, const wr_identity_keys_t *keys,
                     wr_identity_visitor_t *out);

#endif
