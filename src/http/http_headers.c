/*
 * http_headers.c - reading request header fields that may come several
 * times (moved from http.c).
 *
 * A field may come several times (RFC 9110 5.3), and an HTTP/2 proxy in
 * front splits cookies into several Cookie fields. evhttp keeps each
 * header line as its own entry of the request's input headers, in order,
 * and evhttp_find_header sees only the first; next_field walks them all,
 * matching the name in any ASCII case. Cookie values are parsed by the
 * identity module (wr_identity_find_cookie, wr_identity_find_visitor);
 * this file only feeds it each Cookie field in turn.
 */
#include "http/http_headers.h"

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>

/* The next request header field named name after kv (NULL: the first). */
static const struct evkeyval *next_field(struct evhttp_request *req, const struct evkeyval *kv,
                                         const char *name)
{
    const struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
    kv = kv ? kv->next.tqe_next : ih ? ih->tqh_first : NULL;
    while (kv && evutil_ascii_strcasecmp(kv->key, name) != 0)
        kv = kv->next.tqe_next;
    return kv;
}

size_t wr_http_header_count(struct evhttp_request *req, const char *name)
{
    size_t n = 0;
    for (const struct evkeyval *kv = next_field(req, NULL, name); kv;
         kv = next_field(req, kv, name))
        n++;
    return n;
}

const char *wr_http_cookie(struct evhttp_request *req, const char *name, size_t *len)
{
    for (const struct evkeyval *kv = next_field(req, NULL, "Cookie"); kv;
         kv = next_field(req, kv, "Cookie")) {
        const char *v = wr_identity_find_cookie(kv->value, name, len);
        if (v)
            return v;
    }
    return NULL;
}

bool wr_http_visitor(struct evhttp_request *req, const wr_identity_keys_t *keys,
                     wr_identity_visitor_t *out)
{
    unsigned budget = WR_VID_CANDIDATES_MAX;
    for (const struct evkeyval *kv = next_field(req, NULL, "Cookie"); kv && budget > 0;
         kv = next_field(req, kv, "Cookie"))
        if (wr_identity_find_visitor(keys, kv->value, &budget, out))
            return true;
    return false;
}
