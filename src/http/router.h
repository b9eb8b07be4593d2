/*
 * router.h - maps an HTTP method and path to a route of the API, pure (no
 * libevent), so it is unit-tested on its own.
 *
 * The routes are the rows of routes.def, one row per route: its name, its
 * method and path pattern, and its flags (what api.c checks before the
 * route's handler runs). The router reads every column but the handler.
 *
 * The path is the request path without the query string. The {queue}
 * segment (and a second parameter, .../codes/{code}) is returned as a
 * slice of the path (not decoded, not validated):
 * api.c validates it (400 INVALID_QUEUE_NAME) when the row says
 * WR_ROUTE_F_QUEUE.
 */
#ifndef WR_ROUTER_H
#define WR_ROUTER_H

#include <stddef.h>

typedef enum {
    WR_ROUTE_NONE = 0, /* no such path: 404 NOT_FOUND; label "none" */
#define WR_ROUTE(id, name, method, pattern, flags, handler) WR_ROUTE_##id,
#include "http/routes.def"
#undef WR_ROUTE
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

/*
 * A route's flags (the FLAGS column of routes.def). api.c's handle()
 * checks them in this order, after the 404/405 of an unknown path or method
 * and the same for every route:
 *   ADMIN_LISTENER  with a separate admin listener (--admin-listen), the
 *                   public one answers 404 NOT_FOUND (case K23)
 *   (header identity mode: the identity header sent twice is 400, K17)
 *   ADMIN_KEY       the admin key (Bearer) is required: 401 UNAUTHORIZED,
 *                   before anything else of the request is looked at
 *   QUEUE           the parameter is a {queue}: percent-decoded and
 *                   validated (400 INVALID_QUEUE_NAME)
 *   ADMIN_BODY      the body may be up to 64 KiB (WR_HTTP_MAX_BODY_ADMIN),
 *                   else 4 KiB (WR_HTTP_MAX_BODY_USER): 413 beyond
 *   HEAD_HTML       a HEAD is answered 200 text/html, headers only, without
 *                   the handler (its GET joins the line; a HEAD must not)
 *   SECRET          needs the token secret: 503 STORE_UNAVAILABLE until it
 *                   is loaded from the store
 */
enum {
    WR_ROUTE_F_QUEUE = 1u << 0,
    WR_ROUTE_F_ADMIN_KEY = 1u << 1,
    WR_ROUTE_F_ADMIN_LISTENER = 1u << 2,
    WR_ROUTE_F_ADMIN_BODY = 1u << 3,
    WR_ROUTE_F_HEAD_HTML = 1u << 4,
    WR_ROUTE_F_SECRET = 1u << 5,
};

/* A route's row (routes.def), without its handler. */
typedef struct {
    const char *name;    /* metrics and access-log label ("join", ...) */
    wr_method_t method;  /* one of GET, POST, PUT, PATCH, DELETE */
    const char *pattern; /* "/v1/queues/<*>/entries"; "*" = the parameter */
    unsigned flags;      /* WR_ROUTE_F_* */
} wr_route_row_t;

typedef struct {
    wr_route_t route;  /* WR_ROUTE_NONE when the path is unknown or the
                          method is not allowed on it */
    unsigned allowed;  /* methods the path accepts (wr_method_t bits);
                          0 = unknown path (404), else 405 when route is NONE */
    const char *param; /* the {queue} (or {file}) segment, a slice of path; NULL if none */
    size_t param_len;
    const char *param2; /* a second "*" segment (the {code} of DELETE .../codes/{code}), a
                           slice of path; NULL if none */
    size_t param2_len;
} wr_route_match_t;

/* Matches method + path (len bytes, no query string) against the rows.
 * Never fails: an unknown path gives route NONE and allowed 0. Empty
 * segments ("//") and trailing slashes do not match; each parameter is one
 * segment of at least one byte. */
wr_route_match_t wr_router_match(wr_method_t method, const char *path, size_t len);

/* The last match of one caller (wr_router_match_memo), owned by it (e.g.
 * its api state); zeroed = empty. Paths longer than path[] are never
 * kept. */
#define WR_ROUTER_MEMO_PATH 128
typedef struct {
    wr_method_t method;
    size_t len; /* 0: empty */
    char path[WR_ROUTER_MEMO_PATH];
    wr_route_match_t m; /* its parameters point into path[] */
} wr_router_memo_t;

/* wr_router_match, remembering the last answer in *memo: a poll's path
 * repeats (the same queue), so one comparison of len bytes replaces the
 * walk of every row. The answer is the same as wr_router_match's, its
 * parameters slices of path (never of the memo). Not for two threads at
 * once on one memo. */
wr_route_match_t wr_router_match_memo(wr_router_memo_t *memo, wr_method_t method, const char *path,
                                      size_t len);

/* The row of route r; WR_ROUTE_NONE and values out of range give the row
 * of NONE (name "none", no pattern, method 0, flags 0). Static. */
const wr_route_row_t *wr_router_row(wr_route_t r);

/* A stable, low-cardinality label for metrics ("join", "admin_get", ...,
 * "none"): wr_router_row(r)->name. Static string. */
const char *wr_router_route_name(wr_route_t r);

/* "GET, POST" style text of an allowed-methods mask into buf (cap bytes). */
void wr_router_allow_header(unsigned allowed, char *buf, size_t cap);

#endif
