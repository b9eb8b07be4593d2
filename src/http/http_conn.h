/*
 * http_conn.h - our HTTP/1.1 connection layer on libevent core with llhttp
 * as the parser: one request type the routes use (wr_http_req_t), the
 * connections that read, parse, dispatch and answer them in order
 * (keep-alive, pipelining), and the environment they share (limits,
 * handler, free lists, counters). http.c owns the listener and one
 * environment per server; this layer owns each accepted socket.
 *
 * Limits (API.md "HTTP, precisely"): the target at most WR_HTTP_MAX_TARGET
 * bytes (414), the request line and header lines WR_HTTP_MAX_HEADERS (431;
 * 414 is checked first), the body the route's limit (env->body_limit; 413,
 * chunked bodies as soon as they pass it), at most WR_HTTP_MAX_PIPELINE
 * requests in flight per connection (reading stops beyond), a request's
 * head and body within request_timeout_us of its first byte (408), an idle
 * or stalled connection closed after io_timeout_us.
 */
#ifndef WR_HTTP_CONN_H
#define WR_HTTP_CONN_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "base/error.h"

/* Bytes of the request line and header lines, line ends included (not the
 * empty line that ends them); over it: JSON 431 HEADERS_TOO_LARGE. */
#define WR_HTTP_MAX_HEADERS    32768
#define WR_HTTP_MAX_TARGET     8192  /* the request target (path and query); 414 beyond */
#define WR_HTTP_MAX_BODY_USER  4096  /* user and token routes */
#define WR_HTTP_MAX_BODY_ADMIN 65536 /* admin routes (and the server-wide cap) */
#define WR_HTTP_MAX_PIPELINE   16    /* requests in flight per connection */
/* What a request object on the free list keeps for the next request: up
 * to WR_HTTP_ARENA_KEEP bytes in each of its two arenas (input, output)
 * and WR_HTTP_FIELDS_KEEP field entries; more is freed as it goes back. */
#define WR_HTTP_ARENA_KEEP  8192
#define WR_HTTP_FIELDS_KEEP 64

typedef struct wr_http_req wr_http_req_t;
typedef struct wr_http_conn wr_http_conn_t;

/* Request methods. OTHER never reaches a handler (501 first). */
typedef enum {
    WR_HTTP_M_GET,
    WR_HTTP_M_HEAD,
    WR_HTTP_M_POST,
    WR_HTTP_M_PUT,
    WR_HTTP_M_PATCH,
    WR_HTTP_M_DELETE,
    WR_HTTP_M_OPTIONS,
    WR_HTTP_M_TRACE,
    WR_HTTP_M_CONNECT,
    WR_HTTP_M_OTHER
} wr_http_method_t;

/* Counters since the environment was set up. */
typedef struct {
    uint64_t accepted;          /* connections accepted */
    uint64_t timed_out;         /* connections closed by the request deadline (408) */
    uint64_t headers_too_large; /* connections closed by the header limit (431) */
    uint64_t body_too_large;    /* connections closed by a body over the route's limit (413) */
    uint64_t conn_limit_closes; /* connections closed after max_conn_requests */
    uint64_t cap_pauses;        /* times the listener paused at the connection cap */
    uint64_t accept_errors;     /* accepts that failed (out of descriptors): 100 ms pauses */
    uint64_t bad_requests;      /* connections closed by a malformed request (400, 414, 501, 505) */
} wr_http_counters_t;

/* What the connections of one server share. Set the first block, then
 * wr_http_env_init; the rest is the layer's. */
typedef struct wr_http_env {
    struct event_base *base;                        /* borrowed */
    void (*handler)(wr_http_req_t *req, void *arg); /* every complete request */
    void *handler_arg;
    /* The body limit of req's route (bytes), asked once its head is
     * parsed; NULL = WR_HTTP_MAX_BODY_ADMIN. */
    size_t (*body_limit)(const wr_http_req_t *req, void *arg);
    uint32_t max_conn_requests;     /* requests per connection; 0 = no limit */
    int64_t request_timeout_us;     /* head and body within this of the first byte (408) */
    int64_t io_timeout_us;          /* idle keep-alive / stalled reader */
    void (*conn_gone)(void *owner); /* after a connection closed (the cap) */
    void *owner;
    /* the layer's */
    TAILQ_HEAD(wr_http_conn_list, wr_http_conn) conns; /* open connections */
    size_t n_conns;
    STAILQ_HEAD(wr_http_req_list, wr_http_req) free_reqs; /* request objects kept warm */
    size_t n_free_reqs;
    struct wr_http_conn_list free_conns; /* connection objects (with their buffers) kept warm */
    size_t n_free_conns;
    wr_http_counters_t counters;
} wr_http_env_t;

/* Readies env (its first block set). */
void wr_http_env_init(wr_http_env_t *env);

/* Closes every connection (requests still with a handler become orphans:
 * their answer is dropped and frees them) and frees the free lists. */
void wr_http_env_clear(wr_http_env_t *env);

/* Serves accepted socket fd (non-blocking; taken over: closed on error
 * too) from peer sa. Errors: WR_ENOMEM. */
wr_err_t wr_http_conn_open(wr_http_env_t *env, int fd, const struct sockaddr *sa, socklen_t salen);

/* Deadlines of every connection at now_us (monotonic): 408s, idle and
 * stalled closes, the grace after an error. Call about every 100 ms. */
void wr_http_env_sweep(wr_http_env_t *env, int64_t now_us);

/* Allocations the layer has made in this process (request objects, their
 * arenas and field arrays, connections and their buffers): it makes none
 * per request on a warm keep-alive connection. */
uint64_t wr_http_conn_allocs(void);

/* Bytes of buffers env's free lists keep for reuse (request arenas and
 * field arrays, connection input buffers; not the objects themselves):
 * at most WR_HTTP_ARENA_KEEP twice and WR_HTTP_FIELDS_KEEP entries per
 * request object. */
size_t wr_http_env_kept_bytes(const wr_http_env_t *env);

/* ---- the request, as handlers see it ---- */

wr_http_method_t wr_http_req_method(const wr_http_req_t *r);
/* The method as sent ("GET"). */
const char *wr_http_req_method_name(const wr_http_req_t *r);
/* The path of the target, not decoded (an absolute-form target's path;
 * "/" when it has none), NUL-terminated; *len its bytes when len is set. */
const char *wr_http_req_path(const wr_http_req_t *r, size_t *len);
/* The query (after '?'), not decoded, NUL-terminated; NULL without one. */
const char *wr_http_req_query(const wr_http_req_t *r);
/* The whole target as sent. */
const char *wr_http_req_target(const wr_http_req_t *r);
/* The first request header field named name (any ASCII case), its value
 * without surrounding white space, NUL-terminated; NULL when absent.
 * Valid while the request is (until its answer is sent). */
const char *wr_http_req_header(const wr_http_req_t *r, const char *name);
/* The next field named name after position *it (start with *it = 0);
 * NULL after the last. */
const char *wr_http_req_header_next(const wr_http_req_t *r, const char *name, size_t *it);
/* The body (NUL-terminated after its len bytes; "" without one). */
const char *wr_http_req_body(const wr_http_req_t *r, size_t *len);
/* The peer's address as text ("127.0.0.1", "::1") and port. */
const char *wr_http_req_peer(const wr_http_req_t *r, uint16_t *port);
/* HTTP minor version (0 or 1; later minors are answered as 1). */
int wr_http_req_minor(const wr_http_req_t *r);

/* Adds a response header field (copied). "Connection: close" makes the
 * connection close after this answer; any other Connection, and any
 * Content-Length, is ignored: the layer writes both itself. */
void wr_http_req_add_header(wr_http_req_t *r, const char *name, const char *value);
/* Adds response header field lines already formatted ("Name: value\r\n"
 * each, len bytes, copied): one copy for a reply's fixed fields. Not for
 * Connection (the layer writes it; use wr_http_req_add_header) nor
 * Content-Length (the layer writes the body's). */
void wr_http_req_add_header_lines(wr_http_req_t *r, const char *lines, size_t len);
/* Removes every response header field named name added so far. */
void wr_http_req_remove_header(wr_http_req_t *r, const char *name);

/* Answers r: status, the fields added, Date, Content-Length (of body, also
 * for HEAD, which gets no body), Connection when needed, then body (copied,
 * or referenced when is_static: the bytes must outlive the answer). After
 * this r is the layer's again; an answer to a request whose connection is
 * gone frees it. Answers leave in request order. */
void wr_http_req_respond(wr_http_req_t *r, int status, const void *body, size_t len,
                         bool is_static);

/* Standard reason phrase of a status ("OK", "Too Many Requests"). */
const char *wr_http_reason(int status);

#endif
