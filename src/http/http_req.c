/*
 * http_req.c - the request type the routes use (http_conn.h): what a
 * request says (method, target, fields, body, peer) and the fields its
 * answer carries, all in the request's arenas (http_conn.c owns the
 * request objects, their free list and the answer's writing).
 *
 * Fields are found by a scan of the request's field array, comparing the
 * length first (most names differ there); a response field is appended to
 * the output arena as its line ("Name: value\r\n"), Connection and
 * Content-Length never (the layer writes both: a handler's Connection:
 * close only marks the request).
 */
#include <string.h>
#include <strings.h>

#include "http/http_conn_internal.h"

/* ---- accessors ---- */

wr_http_method_t wr_http_req_method(const wr_http_req_t *r)
{
    return (wr_http_method_t)r->method;
}

const char *wr_http_req_method_name(const wr_http_req_t *r)
{
    return r->method_name;
}

const char *wr_http_req_path(const wr_http_req_t *r, size_t *len)
{
    if (len)
        *len = r->path_len;
    return r->in.p + r->path;
}

const char *wr_http_req_query(const wr_http_req_t *r)
{
    return r->query ? r->in.p + r->query : NULL;
}

const char *wr_http_req_target(const wr_http_req_t *r)
{
    return r->in.p + r->target;
}

const char *wr_http_req_header_next(const wr_http_req_t *r, const char *name, size_t *it)
{
    size_t nl = strlen(name); /* the length first: most fields differ there */
    for (size_t i = *it; i < r->n_fields; i++) {
        if (r->fields[i].name_len == nl &&
            strncasecmp(r->in.p + r->fields[i].name, name, nl) == 0) {
            *it = i + 1;
            return r->in.p + r->fields[i].value;
        }
    }
    *it = r->n_fields;
    return NULL;
}

const char *wr_http_req_header(const wr_http_req_t *r, const char *name)
{
    size_t it = 0;
    return wr_http_req_header_next(r, name, &it);
}

const char *wr_http_req_body(const wr_http_req_t *r, size_t *len)
{
    *len = r->body_len;
    return r->body_len ? r->in.p + r->body : "";
}

const char *wr_http_req_peer(const wr_http_req_t *r, uint16_t *port)
{
    if (port)
        *port = r->peer_port;
    return r->peer;
}

int wr_http_req_minor(const wr_http_req_t *r)
{
    return r->minor;
}

/* ---- response fields ---- */

void wr_http_req_add_header(wr_http_req_t *r, const char *name, const char *value)
{
    if ((name[0] | 0x20) == 'c') {
        if (strcasecmp(name, "Connection") == 0) {
            if (strcasecmp(value, "close") == 0)
                r->close = true;
            return; /* the layer writes Connection itself */
        }
        if (strcasecmp(name, "Content-Length") == 0)
            return; /* and the body's length (wr_http_req_respond) */
    }
    size_t nl = strlen(name), vl = strlen(value);
    uint32_t at = r->out.len;
    if (!wr_http__arena_add(&r->out, NULL, nl + vl + 4))
        return;
    char *p = r->out.p + at;
    memcpy(p, name, nl);
    memcpy(p + nl, ": ", 2);
    memcpy(p + nl + 2, value, vl);
    memcpy(p + nl + 2 + vl, "\r\n", 2);
    r->hdrs_len = r->out.len;
}

void wr_http_req_add_header_lines(wr_http_req_t *r, const char *lines, size_t len)
{
    uint32_t at = r->out.len;
    if (!wr_http__arena_add(&r->out, NULL, len))
        return;
    memcpy(r->out.p + at, lines, len);
    r->hdrs_len = r->out.len;
}

/* The start of the next field line named name at or after from, or -1. */
static long find_field(const wr_http_req_t *r, const char *name, uint32_t from)
{
    size_t nl = strlen(name);
    for (uint32_t i = from; i < r->hdrs_len;) {
        const char *e = memchr(r->out.p + i, '\n', r->hdrs_len - i);
        uint32_t next = e ? (uint32_t)(e - r->out.p) + 1 : r->hdrs_len;
        if (next - i > nl && r->out.p[i + nl] == ':' && strncasecmp(r->out.p + i, name, nl) == 0)
            return (long)i;
        i = next;
    }
    return -1;
}

void wr_http_req_remove_header(wr_http_req_t *r, const char *name)
{
    long i;
    if (r->hdrs_len == 0)
        return; /* none added: the usual case */
    while ((i = find_field(r, name, 0)) >= 0) {
        const char *e = memchr(r->out.p + i, '\n', r->hdrs_len - (uint32_t)i);
        uint32_t next = (uint32_t)(e - r->out.p) + 1;
        memmove(r->out.p + i, r->out.p + next, r->out.len - next);
        r->out.len -= next - (uint32_t)i;
        r->hdrs_len -= next - (uint32_t)i;
    }
}
