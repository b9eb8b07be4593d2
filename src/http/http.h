/*
 * http.h - the HTTP server: listening, the connection cap, accept errors,
 * and the deadlines' sweep. Connections and requests are our own layer
 * (http_conn.h: wr_http_req_t and its accessors, the limits); the reply
 * helpers (http_reply.h) and the readers of repeated request header
 * fields (http_headers.h) are included here, so a user of http.h gets
 * every wr_http_ name.
 *
 * Limits (explicit): request line and headers 32 KiB (JSON 431), target
 * 8 KiB (JSON 414), request body the route's limit (opts->body_limit; JSON
 * 413), a read/write timeout (also the idle keep-alive timeout), a
 * whole-request deadline (request line, headers and body must arrive
 * within request_timeout_seconds of their first byte, else 408 and close:
 * slowloris), a number of requests per connection (the last one is
 * answered with Connection: close), and a cap on open connections (the
 * listener pauses at the cap and resumes below it, so excess clients wait
 * in the kernel's backlog). When accept runs out of file descriptors the
 * listener pauses for 100 ms instead of spinning, and says so at most
 * once a second.
 *
 * Several servers may share one event base (e.g. a public and an admin
 * listener); each has its own handler, which is how a handler knows which
 * listener a request came from.
 */
#ifndef WR_HTTP_H
#define WR_HTTP_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "http/http_conn.h"
#include "http/http_headers.h"
#include "http/http_reply.h"

typedef struct wr_http wr_http_t;

typedef struct {
    struct event_base *base;  /* borrowed */
    const char *listen;       /* "HOST:PORT" or "[V6]:PORT"; port 0 = pick a free one */
    uint32_t max_connections; /* 0 = 10000 */
    uint32_t timeout_seconds; /* read/write timeout; 0 = 30 */
    void (*handler)(wr_http_req_t *req, void *arg); /* every request */
    void *handler_arg;
    /* The body limit of a request's route, asked once its head is read
     * (with handler_arg); NULL = WR_HTTP_MAX_BODY_ADMIN. */
    size_t (*body_limit)(const wr_http_req_t *req, void *arg);
    uint32_t max_conn_requests;       /* requests per connection; 0 = no limit */
    uint32_t request_timeout_seconds; /* whole-request deadline; 0 = 10; at most
                                         timeout_seconds */
    bool reuse_port; /* SO_REUSEPORT: other processes may bind the same address and the
                        kernel spreads new connections among them */
} wr_http_opts_t;

/*
 * Binds and starts serving. On success *out is set and bound (cap bytes)
 * receives the bound address "ADDR:PORT". Errors: WR_EINVAL (bad address:
 * not HOST:PORT, or a host that resolves to no address), WR_EIO (bind
 * failed, or the resolver failed for now: errno is preserved, EAGAIN for
 * the resolver), WR_ENOMEM.
 */
wr_err_t wr_http_open(const wr_http_opts_t *opts, wr_http_t **out, char *bound, size_t cap);

/* Stops accepting new connections (graceful stop); open ones are served. */
void wr_http_stop_accepting(wr_http_t *h);

/* Open connections right now. */
size_t wr_http_connections(const wr_http_t *h);

/* The counters (http_conn.h). */
void wr_http_get_counters(const wr_http_t *h, wr_http_counters_t *out);

/* Frees the server and closes every connection (requests still with a
 * handler are answered into the void: see wr_http_req_respond). */
void wr_http_free(wr_http_t *h);

#endif
