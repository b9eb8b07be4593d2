/*
 * http_headers.c - reading request header fields that may come several
 * times.
 *
 * A field may come several times (RFC 9110 5.3), and an HTTP/2 proxy in
 * front splits cookies into several Cookie fields. The request keeps each
 * field line as its own entry, in order, and wr_http_req_header sees only
 * the first; wr_http_req_header_next walks them all, matching the name in
 * any ASCII case. Cookie values are parsed by the identity module
 * (wr_identity_find_cookie, wr_identity_find_visitor); this file only
 * feeds it each Cookie field in turn.
 */
#include "http/http_headers.h"

size_t wr_http_header_count(const wr_http_req_t *req, const char *name)
{
    size_t n = 0, it = 0;
    while (wr_http_req_header_next(req, name, &it))
        n++;
    return n;
}

const char *wr_http_cookie(const wr_http_req_t *req, const char *name, size_t *len)
{
    size_t it = 0;
    for (const char *v; (v = wr_http_req_header_next(req, "Cookie", &it));) {
        const char *c = wr_identity_find_cookie(v, name, len);
        if (c)
            return c;
    }
    return NULL;
}

bool wr_http_visitor(const wr_http_req_t *req, const wr_identity_keys_t *keys,
                     wr_identity_visitor_t *out)
{
    unsigned budget = WR_VID_CANDIDATES_MAX;
    size_t it = 0;
    for (const char *v; budget > 0 && (v = wr_http_req_header_next(req, "Cookie", &it));)
        if (wr_identity_find_visitor(keys, v, &budget, out))
            return true;
    return false;
}
