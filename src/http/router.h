/*
 * router.h - maps an HTTP method and path to a route of the API, pure (no
 * libevent), so it is unit-tested on its own.
 *
 * The path is the request path without the query string. The {queue}
 * segment is returned as a slice of the path (not decoded, not validated):
 * the handler validates it (400 INVALID_QUEUE_NAME).
 */
#ifndef WR_ROUTER_H
#define WR_ROUTER_H

#include <stddef.h>

typedef enum {
    WR_ROUTE_NONE = 0,     /* no such path: 404 NOT_FOUND */
    WR_ROUTE_JOIN,         /* POST   /v1/queues/{q}/entries */
    WR_ROUTE_STATUS,       /* GET    /v1/queues/{q}/entries/me */
    WR_ROUTE_LEAVE,        /* DELETE /v1/queues/{q}/entries/me */
    WR_ROUTE_CONSUME,      /* POST   /v1/queues/{q}/tokens/consume */
    WR_ROUTE_VERIFY,       /* GET    /v1/queues/{q}/tokens/verify */
    WR_ROUTE_ADMIN_PUT,    /* PUT    /v1/admin/queues/{q} */
    WR_ROUTE_ADMIN_PATCH,  /* PATCH  /v1/admin/queues/{q} */
    WR_ROUTE_ADMIN_GET,    /* GET    /v1/admin/queues/{q} */
    WR_ROUTE_ADMIN_DELETE, /* DELETE /v1/admin/queues/{q} */
    WR_ROUTE_ADMIN_LIST,   /* GET    /v1/admin/queues */
    WR_ROUTE_HEALTHZ,      /* GET    /healthz */
    WR_ROUTE_READYZ,       /* GET    /readyz */
    WR_ROUTE_METRICS,      /* GET    /metrics */
    WR_ROUTE_QUEUE_PAGE,   /* GET    /q/{q} (the queue page) */
    WR_ROUTE_DASHBOARD,    /* GET    /admin (the operator dashboard) */
    WR_ROUTE_STATIC,       /* GET    /static/{file} (embedded assets) */
    WR_ROUTE_RELEASE,      /* POST   /v1/queues/{q}/tokens/release (sessions) */
    WR_ROUTE_HISTORY,      /* GET    /v1/admin/queues/{q}/history */
    WR_ROUTE_COUNT
} wr_route_t;

typedef enum {
    WR_METHOD_GET = 1,
    WR_METHOD_POST = 2,
    WR_METHOD_PUT = 4,
    WR_METHOD_PATCH = 8,
    WR_METHOD_DELETE = 16,
    WR_METHOD_HEAD = 32,
    WR_METHOD_OTHER = 64,
} wr_method_t;

typedef struct {
    wr_route_t route;  /* WR_ROUTE_NONE when the path is unknown or the
                          method is not allowed on it */
    unsigned allowed;  /* methods the path accepts (wr_method_t bits);
                          0 = unknown path (404), else 405 when route is NONE */
    const char *param; /* the {queue} (or {file}) segment, a slice of path; NULL if none */
    size_t param_len;
} wr_route_match_t;

/* Matches method + path (len bytes, no query string). Never fails: an
 * unknown path gives route NONE and allowed 0. Empty segments ("//") and
 * trailing slashes do not match. */
wr_route_match_t wr_router_match(wr_method_t method, const char *path, size_t len);

/* A stable, low-cardinality label for metrics ("join", "admin_get", ...,
 * "none"). Static string. */
const char *wr_router_route_name(wr_route_t r);

/* "GET, POST" style text of an allowed-methods mask into buf (cap bytes). */
void wr_router_allow_header(unsigned allowed, char *buf, size_t cap);

#endif
