/*
 * http.h - the HTTP server on libevent's evhttp: listening, limits and the
 * connection cap. The reply helpers (http_reply.h) and the readers of
 * repeated request header fields (http_headers.h) are included here, so a
 * user of http.h gets every wr_http_ name.
 *
 * Limits (explicit, never libevent's unlimited defaults): request line and
 * headers 32 KiB (JSON 431 HEADERS_TOO_LARGE beyond, then close), request
 * body 64 KiB at the server (each route enforces its own,
 * smaller limit: 4 KiB on user and token routes), a read/write timeout
 * (also the idle keep-alive timeout), a whole-request deadline (request
 * line, headers and body must arrive within request_timeout_seconds of
 * their first byte, else 408 and close: slowloris), a number of requests
 * per connection (the last one is answered with Connection: close), and a
 * cap on open connections (the listener pauses at the cap and resumes
 * below it, so excess clients wait in the kernel's backlog). When accept
 * runs out of file descriptors the listener pauses for 100 ms instead of
 * spinning, and says so at most once a second.
 *
 * Several servers may share one event base (e.g. a public and an admin
 * listener); each has its own handler, which is how a handler knows which
 * listener a request came from.
 */
#ifndef WR_HTTP_H
#define WR_HTTP_H

#include <event2/event.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "http/http_headers.h"
#include "http/http_reply.h"

/* Bytes of the request line and header lines, line ends included (not the
 * empty line that ends them); over it: JSON 431 HEADERS_TOO_LARGE. */
#define WR_HTTP_MAX_HEADERS 32768
/* evhttp's own limit (its HTML 400), never reached on a tracked
 * connection: ours answers first and discards the rest. */
#define WR_HTTP_EVHTTP_MAX_HEADERS (2 * WR_HTTP_MAX_HEADERS)
#define WR_HTTP_MAX_BODY_USER      4096  /* user and token routes */
#define WR_HTTP_MAX_BODY_ADMIN     65536 /* admin routes (and the server-wide cap) */

typedef struct wr_http wr_http_t;

typedef struct {
    struct event_base *base;  /* borrowed */
    const char *listen;       /* "HOST:PORT" or "[V6]:PORT"; port 0 = pick a free one */
    uint32_t max_connections; /* 0 = 10000 */
    uint32_t timeout_seconds; /* read/write timeout; 0 = 30 */
    void (*handler)(struct evhttp_request *req, void *arg); /* every request */
    void *handler_arg;
    uint32_t max_conn_requests;       /* requests per connection; 0 = no limit */
    uint32_t request_timeout_seconds; /* whole-request deadline; 0 = 10; at most
                                         timeout_seconds */
    bool reuse_port; /* SO_REUSEPORT: other processes may bind the same address and the
                        kernel spreads new connections among them */
} wr_http_opts_t;

/* Counters since wr_http_open. */
typedef struct {
    uint64_t accepted;          /* connections accepted */
    uint64_t timed_out;         /* connections closed by the request deadline (408) */
    uint64_t headers_too_large; /* connections closed by the header limit (431) */
    uint64_t body_too_large;    /* connections closed by a Content-Length over 64 KiB (413) */
    uint64_t conn_limit_closes; /* connections closed after max_conn_requests */
    uint64_t cap_pauses;        /* times the listener paused at the connection cap */
    uint64_t accept_errors;     /* accepts that failed (out of descriptors): 100 ms pauses */
} wr_http_counters_t;

/*
 * Binds and starts serving. On success *out is set and bound (cap bytes)
 * receives the bound address "ADDR:PORT". Errors: WR_EINVAL (bad address),
 * WR_EIO (bind failed; errno is preserved), WR_ENOMEM.
 */
wr_err_t wr_http_open(const wr_http_opts_t *opts, wr_http_t **out, char *bound, size_t cap);

/* Stops accepting new connections (graceful stop); open ones are served. */
void wr_http_stop_accepting(wr_http_t *h);

/* Open connections right now. */
size_t wr_http_connections(const wr_http_t *h);

/* The counters above. */
void wr_http_get_counters(const wr_http_t *h, wr_http_counters_t *out);

/* Frees the server and closes every connection. */
void wr_http_free(wr_http_t *h);

#endif
