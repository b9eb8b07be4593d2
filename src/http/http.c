/*
 * http.c - evhttp server setup, limits, connection cap.
 *
 * The event base is the caller's (created with
 * EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST by main).
 *
 * Connection cap: libevent 2.1 gives no hook for "this connection is gone"
 * (evhttp_set_newreqcb is 2.2), so our bevcb creates each connection's
 * socket bufferevent itself, takes a reference on it and records it in a
 * conn_t. evhttp closes the socket and clears the callbacks when it is done
 * with a connection; a sweep every SWEEP_MS finds those (fd -1 or no event
 * callback: the read callback alone is also NULL while evhttp writes a
 * reply), drops our reference (which frees the struct) and the count.
 * At the cap the listener is disabled, so excess clients wait in the
 * kernel's backlog; the sweep enables it again below the cap. (A filter
 * bufferevent with a free callback was tried first: with libevent 2.1.12
 * it lost the first request of a connection now and then.)
 *
 * Per-connection state (conn_t, one malloc per connection, freed by the
 * sweep after evhttp is done with it): requests so far, whether a request
 * is with the handler (busy, from our request callback until the reply's
 * on_complete callback), and when the first byte of the current request
 * arrived (start_us, seen by a callback on the input evbuffer, which runs
 * when bytes are added, before evhttp parses them), and the size of its
 * head so far (the header limit, below). index maps a
 * bufferevent to its conn_t (open addressing, linear probing, backward
 * shift deletion; sized 2x the table so it never fills).
 *
 * Whole-request deadline (slowloris): a connection that is not busy and
 * has had the first byte of a request for more than request_timeout gets a
 * JSON 408 written straight to the socket (only when evhttp has nothing
 * queued to write, so it cannot interleave with a reply) and shutdown for
 * writing; what it sends after that is discarded unread; one second
 * later it is shut down for reading as well, which evhttp sees as EOF and
 * frees. evhttp's own timeout (timeout_seconds) still covers idle
 * keep-alive connections and slow readers; it resets on every byte, which
 * is why it alone does not stop a trickle.
 *
 * Header limit: the request line and header lines of a request may take
 * WR_HTTP_MAX_HEADERS (32 KiB) with their line ends. evhttp 2.1 enforces
 * its own limit by answering an HTML 400 itself (evhttp_read_header ->
 * evhttp_connection_fail_ -> evhttp_send_error), with no hook to change
 * the page. So we count: the input callback sees every byte before evhttp
 * parses it, and head_scan counts lines (memchr for '\n') from the first
 * byte of a request to the empty line that ends its headers (the body is
 * not counted). Over the limit, the connection gets a JSON 431 written to
 * the socket, its write side shut, and its input discarded from then on,
 * so evhttp never reaches its own limit (set to twice ours, a backstop)
 * and memory stays bounded whatever the client sends; it is closed like a
 * timed-out one (below). The client, still sending, can read the 431: we
 * keep reading (and discarding) for the grace second before closing.
 * Requests pipelined behind one that is being answered are already in the
 * input buffer when it completes: on_complete counts them from there.
 *
 * Out of descriptors (accept fails with EMFILE, ENFILE, ENOBUFS or
 * ENOMEM): libevent would call accept again at once, spinning while the
 * pending connection stays in the backlog. Our listener error callback
 * pauses the listener for BACKOFF_MS instead and logs at most one line a
 * second (with the number of failures since the last line); the pause
 * ends by a timer, and the listener is enabled again unless the
 * connection cap holds it. libevent passes the callback its own argument
 * (the struct evhttp), so open servers are kept in a small list to find
 * ours (one loop, one or two servers).
 *
 * Body limit: a request whose Content-Length exceeds WR_HTTP_MAX_BODY_ADMIN
 * (64 KiB, the server-wide cap) would get evhttp's HTML 413 (the same
 * evhttp_send_error path as its header limit). head_scan therefore also
 * reads the Content-Length lines of the head it counts (the first
 * LINE_KEEP bytes of each line are kept); at the end of the head a value
 * over the cap gets the JSON 413 PAYLOAD_TOO_LARGE written and the
 * connection closed like a 431, before a byte of the body is read. Bodies
 * within the cap reach the route, which applies its own limit (api.c: 4 KiB
 * on user and token routes). A chunked body has no length in its head:
 * over 64 KiB it still gets evhttp's HTML 413 (README "Limits").
 *
 * Requests per connection: the request that reaches max_conn_requests is
 * answered with "Connection: close", so evhttp closes after the reply.
 *
 * Ambiguous framing (two different Content-Length values, or Content-Length
 * with Transfer-Encoding) is answered 400 BAD_REQUEST with "Connection:
 * close" before any handler runs, so bytes evhttp would read as a second
 * request on the connection are never served (request smuggling).
 *
 * Replies (reason phrases, Date and Content-Length, JSON bodies and
 * errors, the write in the same loop iteration) are in http_reply.c;
 * reading repeated request header fields (cookies) is in http_headers.c.
 *
 * Shared port (opts->reuse_port, --reuse-port): the listener is bound by
 * evconnlistener_new_bind with LEV_OPT_REUSEABLE_PORT (SO_REUSEPORT) and
 * handed to evhttp (evhttp_bind_listener), so several waitroomd processes
 * on one Redis bind one address and the kernel spreads new connections
 * among them (by a hash of the connection's addresses); each process keeps
 * its own connection cap on its own listener.
 */
#include "http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "base/log.h"

#define SWEEP_MS       100
#define CLOSE_GRACE_US 1000000
#define BACKOFF_MS     100     /* listener pause after accept ran out of descriptors */
#define BACKOFF_LOG_US 1000000 /* at most one log line per second about it */
#define LINE_KEEP      48      /* bytes kept of each header line (Content-Length) */

typedef struct {
    struct bufferevent *bev; /* holds our reference */
    wr_http_t *h;
    int64_t start_us;   /* first byte of the current request; 0 = none yet */
    int64_t closing_us; /* error (408, 413, 431) sent and write side shut at; 0 = not */
    int closing_status; /* that error's status */
    uint32_t requests;
    bool busy;
    /* Header size of the current request (see "Header limit" above). */
    size_t head_bytes;    /* its complete lines, line ends included */
    size_t head_line;     /* bytes of its unfinished line */
    bool head_cr;         /* the unfinished line is a lone CR (may be the empty line) */
    bool head_done;       /* the empty line that ends its headers has been seen */
    bool body_over;       /* a Content-Length over WR_HTTP_MAX_BODY_ADMIN was seen */
    char line[LINE_KEEP]; /* the first bytes of the unfinished line */
} conn_t;

struct wr_http {
    struct event_base *base;
    struct evhttp *http;
    struct evhttp_bound_socket *sock;
    conn_t **conns; /* tracked connections */
    size_t n_conns;
    size_t max_conns;
    size_t table_cap; /* max_conns + 64 */
    conn_t **index;   /* bev -> conn, open addressing; index_cap slots */
    size_t index_cap; /* power of two >= 2 * table_cap */
    struct event *sweep;
    void (*handler)(struct evhttp_request *req, void *arg);
    void *handler_arg;
    uint32_t max_conn_requests;
    int64_t request_timeout_us;
    wr_http_counters_t counters;
    bool paused;
    bool stopped;
    struct wr_http *next_server; /* the list of open servers */
    struct event *backoff_ev;    /* ends an accept backoff */
    bool backoff;                /* the listener is paused after an accept error */
    int64_t backoff_log_us;      /* last log line about accept errors */
    uint64_t backoff_unlogged;   /* accept errors since that line */
};

static wr_http_t *servers; /* open servers (accept errors find theirs here) */

/* ---- bev -> conn index ---- */

static size_t slot_of(const wr_http_t *h, const struct bufferevent *bev)
{
    uint64_t x = (uint64_t)(uintptr_t)bev;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (h->index_cap - 1);
}

static void index_put(wr_http_t *h, conn_t *c)
{
    size_t i = slot_of(h, c->bev);
    while (h->index[i])
        i = (i + 1) & (h->index_cap - 1);
    h->index[i] = c;
}

static conn_t *index_get(const wr_http_t *h, const struct bufferevent *bev)
{
    for (size_t i = slot_of(h, bev); h->index[i]; i = (i + 1) & (h->index_cap - 1))
        if (h->index[i]->bev == bev)
            return h->index[i];
    return NULL;
}

static void index_del(wr_http_t *h, const conn_t *c)
{
    size_t mask = h->index_cap - 1, i = slot_of(h, c->bev);
    while (h->index[i] && h->index[i] != c)
        i = (i + 1) & mask;
    if (!h->index[i])
        return;
    h->index[i] = NULL;
    /* Backward shift: re-place the rest of the cluster. */
    for (size_t j = (i + 1) & mask; h->index[j]; j = (j + 1) & mask) {
        conn_t *m = h->index[j];
        h->index[j] = NULL;
        index_put(h, m);
    }
}

/* ---- connections ---- */

static void set_paused(wr_http_t *h, bool pause)
{
    if (!h->sock || h->paused == pause)
        return;
    struct evconnlistener *l = evhttp_bound_socket_get_listener(h->sock);
    if (pause) {
        evconnlistener_disable(l);
        h->counters.cap_pauses++;
        wr_warn("connection cap reached (%zu); pausing accept", h->max_conns);
    } else if (!h->backoff) {
        evconnlistener_enable(l);
    }
    h->paused = pause;
}

/* ---- accept errors: back off ---- */

static void backoff_end_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_http_t *h = arg;
    h->backoff = false;
    if (h->sock && !h->paused && !h->stopped)
        evconnlistener_enable(evhttp_bound_socket_get_listener(h->sock));
}

static void accept_error_cb(struct evconnlistener *l, void *ctx)
{
    int err = EVUTIL_SOCKET_ERROR();
    wr_http_t *h = servers;
    while (h && (void *)h->http != ctx)
        h = h->next_server;
    if (!h || h->stopped)
        return;
    h->counters.accept_errors++;
    h->backoff_unlogged++;
    evconnlistener_disable(l);
    h->backoff = true;
    struct timeval tv = {0, BACKOFF_MS * 1000};
    evtimer_add(h->backoff_ev, &tv);
    int64_t now = wr_clock_mono_us();
    if (h->backoff_log_us == 0 || now - h->backoff_log_us >= BACKOFF_LOG_US) {
        wr_warn("accept failed: %s (%llu time%s since the last such line); pausing accept for "
                "%d ms",
                evutil_socket_error_to_string(err), (unsigned long long)h->backoff_unlogged,
                h->backoff_unlogged == 1 ? "" : "s", BACKOFF_MS);
        h->backoff_log_us = now;
        h->backoff_unlogged = 0;
    }
}

static void conn_release(wr_http_t *h, conn_t *c)
{
    index_del(h, c);
    bufferevent_decref(c->bev);
    free(c);
}

/* The JSON error of a status we answer before (or instead of) evhttp. */
static void closing_error(int status, const char **code, const char **message)
{
    if (status == 431) {
        *code = "HEADERS_TOO_LARGE";
        *message = "the request line and headers exceed 32 KiB";
    } else if (status == 413) {
        *code = "PAYLOAD_TOO_LARGE";
        *message = "request body too large (the server takes at most 64 KiB)";
    } else {
        *code = "REQUEST_TIMEOUT";
        *message = "the request did not arrive in time";
    }
}

/* Writes a JSON error (408, 413 or 431) straight to the socket, shuts its write
 * side and discards what is still in the input buffer: evhttp never sees
 * the rest of this request. */
static void send_error_and_close(wr_http_t *h, conn_t *c, int status)
{
    evutil_socket_t fd = bufferevent_getfd(c->bev);
    const char *code, *message;
    char body[160], buf[512];
    closing_error(status, &code, &message);
    int bn = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"message\":\"%s\"}", code, message);
    int n = snprintf(buf, sizeof(buf),
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\nContent-Length: %d\r\n"
                     "\r\n%s",
                     status, wr_http_reason(status), bn, body);
    /* Only when evhttp has nothing queued: the error must not split a reply. */
    if (fd >= 0 && n > 0 && (size_t)n < sizeof(buf) &&
        evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
        ssize_t w = send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)w; /* best effort: a client that does not read gets the close only */
    }
    if (fd >= 0)
        shutdown(fd, SHUT_WR);
    c->closing_us = wr_clock_mono_us();
    c->closing_status = status;
    struct evbuffer *in = bufferevent_get_input(c->bev);
    evbuffer_drain(in, evbuffer_get_length(in));
    if (status == 431)
        h->counters.headers_too_large++;
    else if (status == 413)
        h->counters.body_too_large++;
    else
        h->counters.timed_out++;
}

static void sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_http_t *h = arg;
    int64_t now = wr_clock_mono_us();
    size_t j = 0;
    for (size_t i = 0; i < h->n_conns; i++) {
        conn_t *c = h->conns[i];
        bufferevent_event_cb ecb = NULL;
        bufferevent_getcb(c->bev, NULL, NULL, &ecb, NULL);
        evutil_socket_t cfd = bufferevent_getfd(c->bev);
        /* evhttp keeps its error callback while it owns the connection (the
         * read callback is NULL while a reply is written); bufferevent_free
         * clears every callback. */
        if (ecb == NULL || cfd < 0) {
            conn_release(h, c); /* evhttp is done with it */
            continue;
        }
        h->conns[j++] = c;
        if (c->closing_us) {
            if (now - c->closing_us > CLOSE_GRACE_US) {
                shutdown(cfd, SHUT_RDWR); /* evhttp reads EOF and frees it */
                c->closing_us = now;      /* again in a second if it lingers */
            }
        } else if (!c->busy && c->start_us && now - c->start_us > h->request_timeout_us) {
            send_error_and_close(h, c, 408);
        }
    }
    h->n_conns = j;
    if (!h->stopped && h->n_conns < h->max_conns)
        set_paused(h, false);
}

/* ---- header limit ---- */

static void head_reset(conn_t *c)
{
    c->head_bytes = 0;
    c->head_line = 0;
    c->head_cr = false;
    c->head_done = false;
    c->body_over = false;
}

/* True when header line l (its first n bytes, at most LINE_KEEP) is a
 * Content-Length over WR_HTTP_MAX_BODY_ADMIN (an optional '+', as evhttp
 * reads it).
 * Digits cut off by LINE_KEEP count only when those kept are already over
 * (leading zeros are not); anything else that is not a number is left to
 * evhttp (400). */
static bool content_length_over(const char *l, size_t n)
{
    static const char name[] = "content-length:";
    size_t k = sizeof(name) - 1;
    if (n < k || evutil_ascii_strncasecmp(l, name, k) != 0)
        return false;
    while (k < n && (l[k] == ' ' || l[k] == '\t' || l[k] == '\v' || l[k] == '\f'))
        k++;
    if (k < n && l[k] == '+')
        k++; /* evhttp's strtoll takes a sign: so do we */
    uint64_t v = 0;
    size_t digits = 0;
    for (; k < n && l[k] >= '0' && l[k] <= '9'; k++, digits++) {
        if (v > WR_HTTP_MAX_BODY_ADMIN)
            return true; /* already over: no overflow */
        v = v * 10 + (uint64_t)(l[k] - '0');
    }
    return digits > 0 && v > WR_HTTP_MAX_BODY_ADMIN;
}

/* Counts n more bytes of the current request's head; returns true once the
 * request line and header lines exceed WR_HTTP_MAX_HEADERS. Stops at the
 * empty line that ends the headers (the body is not counted). */
static bool head_scan(conn_t *c, const char *p, size_t n)
{
    while (n > 0 && !c->head_done) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (take > 0) {
            c->head_cr = c->head_line == 0 && take == 1 && p[0] == '\r';
            if (c->head_line < LINE_KEEP) {
                size_t keep = LINE_KEEP - c->head_line < take ? LINE_KEEP - c->head_line : take;
                memcpy(c->line + c->head_line, p, keep);
            }
            c->head_line += take;
        }
        if (!nl)
            break;
        if (c->head_line == 0 || c->head_cr) {
            /* An empty line: the end of the headers, or one before the
             * request line (RFC 9112 2.2 lets a server skip those). */
            if (c->head_bytes > 0)
                c->head_done = true;
        } else {
            c->head_bytes += c->head_line + 1;
            size_t kept = c->head_line < LINE_KEEP ? c->head_line : LINE_KEEP;
            if (content_length_over(c->line, kept))
                c->body_over = true;
        }
        c->head_line = 0;
        c->head_cr = false;
        p += take + 1;
        n -= take + 1;
    }
    return c->head_bytes + (c->head_cr ? 0 : c->head_line) > WR_HTTP_MAX_HEADERS;
}

/* head_scan over the input buffer from byte `from` to its end. */
static bool head_scan_buffer(conn_t *c, struct evbuffer *buf, size_t from)
{
    size_t len = evbuffer_get_length(buf);
    while (from < len && !c->head_done) {
        struct evbuffer_ptr ptr;
        struct evbuffer_iovec v[4];
        if (evbuffer_ptr_set(buf, &ptr, from, EVBUFFER_PTR_SET) != 0)
            break;
        int n = evbuffer_peek(buf, (ev_ssize_t)(len - from), &ptr, v, 4);
        if (n <= 0)
            break;
        for (int i = 0; i < n && i < 4 && from < len && !c->head_done; i++) {
            size_t l = v[i].iov_len < len - from ? v[i].iov_len : len - from;
            if (head_scan(c, v[i].iov_base, l))
                return true;
            from += l;
        }
    }
    return false;
}

/* Input evbuffer callback (bytes are added, evhttp has not parsed them
 * yet): notes the first byte of a request, counts its head, and answers
 * 431 when the head is over the limit, 413 when its Content-Length is. A connection already
 * answered with an error discards what it reads until it is closed. */
static void input_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    conn_t *c = arg;
    if (info->n_added == 0)
        return;
    if (c->closing_us) {
        evbuffer_drain(buf, evbuffer_get_length(buf));
        return;
    }
    if (!c->busy && c->start_us == 0)
        c->start_us = wr_clock_mono_us();
    if (!c->head_done) {
        size_t len = evbuffer_get_length(buf);
        size_t from = len > info->n_added ? len - info->n_added : 0;
        if (head_scan_buffer(c, buf, from))
            send_error_and_close(c->h, c, 431);
        else if (c->head_done && c->body_over)
            send_error_and_close(c->h, c, 413);
    }
}

static struct bufferevent *bevcb(struct event_base *base, void *arg)
{
    wr_http_t *h = arg;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!bev)
        return NULL;
    h->counters.accepted++;
    if (h->n_conns < h->table_cap) {
        conn_t *c = calloc(1, sizeof(*c));
        if (c) {
            c->bev = bev;
            c->h = h;
            if (evbuffer_add_cb(bufferevent_get_input(bev), input_cb, c) == NULL) {
                free(c);
            } else {
                bufferevent_incref(bev);
                h->conns[h->n_conns++] = c;
                index_put(h, c);
            }
        }
    }
    if (h->n_conns >= h->max_conns)
        set_paused(h, true);
    return bev;
}

static void on_complete(struct evhttp_request *req, void *arg)
{
    (void)req;
    conn_t *c = arg;
    struct evbuffer *in = bufferevent_get_input(c->bev);
    c->busy = false;
    c->start_us = evbuffer_get_length(in) > 0 ? wr_clock_mono_us() : 0;
    /* What is already read is the start of the next request (pipelined):
     * its head counts from here. */
    head_reset(c);
    if (!c->closing_us && head_scan_buffer(c, in, 0))
        send_error_and_close(c->h, c, 431);
    else if (!c->closing_us && c->head_done && c->body_over)
        send_error_and_close(c->h, c, 413);
}

/* True when the request's message framing is ambiguous: Content-Length
 * given twice with different values, or together with Transfer-Encoding.
 * evhttp 2.1 takes the first Content-Length (or chunked) and reads what
 * follows as the next request; a proxy in front may split the same bytes
 * differently (request smuggling). RFC 9112 6.3: reject, then close. */
static bool ambiguous_framing(struct evhttp_request *req)
{
    const struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
    const char *cl = NULL;
    bool te = false;
    for (const struct evkeyval *kv = ih ? ih->tqh_first : NULL; kv; kv = kv->next.tqe_next) {
        if (evutil_ascii_strcasecmp(kv->key, "Content-Length") == 0) {
            if (cl && strcmp(cl, kv->value) != 0)
                return true;
            cl = kv->value;
        } else if (evutil_ascii_strcasecmp(kv->key, "Transfer-Encoding") == 0) {
            te = true;
        }
    }
    return cl && te;
}

/* Every request passes here first: per-connection bookkeeping. */
static void on_request(struct evhttp_request *req, void *arg)
{
    wr_http_t *h = arg;
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    conn_t *c = bev ? index_get(h, bev) : NULL;
    if (c) {
        c->requests++;
        c->busy = true;
        c->start_us = 0;
        c->head_done = true; /* until on_complete starts the next request */
        evhttp_request_set_on_complete_cb(req, on_complete, c);
        if (h->max_conn_requests && c->requests >= h->max_conn_requests) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
            h->counters.conn_limit_closes++;
        }
    }
    if (c && c->closing_us) {
        /* Its error (408, 413, 431) is already out, and the input is discarded
         * since, so this can only be a request evhttp had parsed before.
         * Never dispatch it (a leave or a consume would change state after
         * an error); the reply only meets the shut write side, and evhttp
         * frees the connection on the error. */
        const char *code, *message;
        closing_error(c->closing_status, &code, &message);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
        wr_http_reply_error(req, c->closing_status, code, message, NULL, NULL, 0);
        return;
    }
    if (ambiguous_framing(req)) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
        wr_http_reply_error(req, 400, "BAD_REQUEST",
                            "conflicting Content-Length / Transfer-Encoding headers", NULL, NULL,
                            0);
        return;
    }
    h->handler(req, h->handler_arg);
}

static wr_err_t split_addr(const char *listen, char *host, size_t hcap, uint16_t *port)
{
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen)
        return WR_EINVAL;
    const char *hs = listen;
    size_t hl = (size_t)(colon - listen);
    if (hs[0] == '[') {
        if (hl < 2 || hs[hl - 1] != ']')
            return WR_EINVAL;
        hs++;
        hl -= 2;
    }
    if (hl == 0 || hl >= hcap)
        return WR_EINVAL;
    memcpy(host, hs, hl);
    host[hl] = 0;
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || p < 0 || p > 65535)
        return WR_EINVAL;
    *port = (uint16_t)p;
    return WR_OK;
}

/* As evhttp_bind_socket_with_handle (the first address host resolves to,
 * SO_REUSEADDR, backlog 128), with SO_REUSEPORT as well: every process
 * that binds the address so shares it, and the kernel spreads new
 * connections among them. NULL with errno set on failure. */
static struct evhttp_bound_socket *bind_reuse_port(struct evhttp *http, struct event_base *base,
                                                   const char *host, uint16_t port)
{
    struct evutil_addrinfo hints = {0}, *ai = NULL;
    char ports[8];
    snprintf(ports, sizeof(ports), "%u", (unsigned)port);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = EVUTIL_AI_PASSIVE | EVUTIL_AI_ADDRCONFIG;
    if (evutil_getaddrinfo(host, ports, &hints, &ai) != 0 || !ai) {
        errno = EADDRNOTAVAIL;
        return NULL;
    }
    struct evconnlistener *l = evconnlistener_new_bind(
        base, NULL, NULL,
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT,
        128, ai->ai_addr, (int)ai->ai_addrlen);
    int e = errno;
    evutil_freeaddrinfo(ai);
    if (!l) {
        errno = e;
        return NULL;
    }
    struct evhttp_bound_socket *s = evhttp_bind_listener(http, l);
    if (!s) {
        evconnlistener_free(l);
        errno = ENOMEM;
    }
    return s;
}

wr_err_t wr_http_open(const wr_http_opts_t *opts, wr_http_t **out, char *bound, size_t cap)
{
    char host[256];
    uint16_t port;
    if (split_addr(opts->listen, host, sizeof(host), &port) != WR_OK)
        return WR_EINVAL;
    wr_http_t *h = calloc(1, sizeof(*h));
    if (!h)
        return WR_ENOMEM;
    h->base = opts->base;
    h->max_conns = opts->max_connections ? opts->max_connections : 10000;
    h->table_cap = h->max_conns + 64; /* headroom: accepts already in flight at the cap */
    h->index_cap = 1;
    while (h->index_cap < 2 * h->table_cap)
        h->index_cap <<= 1;
    h->handler = opts->handler;
    h->handler_arg = opts->handler_arg;
    h->max_conn_requests = opts->max_conn_requests;
    /* The whole-request deadline never exceeds the read timeout. */
    uint32_t rt = opts->request_timeout_seconds ? opts->request_timeout_seconds : 10;
    uint32_t io = opts->timeout_seconds ? opts->timeout_seconds : 30;
    h->request_timeout_us = (int64_t)(rt < io ? rt : io) * 1000000;
    h->conns = calloc(h->table_cap, sizeof(*h->conns));
    h->index = calloc(h->index_cap, sizeof(*h->index));
    h->http = evhttp_new(opts->base);
    h->sweep = event_new(opts->base, -1, EV_PERSIST, sweep_cb, h);
    h->backoff_ev = evtimer_new(opts->base, backoff_end_cb, h);
    if (!h->http || !h->conns || !h->index || !h->sweep || !h->backoff_ev) {
        if (h->http)
            evhttp_free(h->http);
        if (h->sweep)
            event_free(h->sweep);
        if (h->backoff_ev)
            event_free(h->backoff_ev);
        free(h->conns);
        free(h->index);
        free(h);
        return WR_ENOMEM;
    }
    struct timeval stv = {0, SWEEP_MS * 1000};
    event_add(h->sweep, &stv);
    /* Our own count answers 431 first (see "Header limit" above); evhttp's
     * limit, with its HTML 400, is only a backstop. */
    evhttp_set_max_headers_size(h->http, WR_HTTP_EVHTTP_MAX_HEADERS);
    evhttp_set_max_body_size(h->http, WR_HTTP_MAX_BODY_ADMIN);
    evhttp_set_timeout(h->http, (int)(opts->timeout_seconds ? opts->timeout_seconds : 30));
    evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                            EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
                                            EVHTTP_REQ_OPTIONS);
    evhttp_set_bevcb(h->http, bevcb, h);
    evhttp_set_gencb(h->http, on_request, h);
    h->sock = opts->reuse_port ? bind_reuse_port(h->http, opts->base, host, port)
                               : evhttp_bind_socket_with_handle(h->http, host, port);
    if (!h->sock) {
        int e = errno;
        evhttp_free(h->http);
        event_free(h->sweep);
        event_free(h->backoff_ev);
        free(h->conns);
        free(h->index);
        free(h);
        errno = e;
        return WR_EIO;
    }
    evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(h->sock), accept_error_cb);
    h->next_server = servers;
    servers = h;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    evutil_socket_t fd = evhttp_bound_socket_get_fd(h->sock);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        char a[INET6_ADDRSTRLEN] = "";
        unsigned p = 0;
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
            p = ntohs(sin->sin_port);
            snprintf(bound, cap, "%s:%u", a, p);
        } else {
            struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
            p = ntohs(sin6->sin6_port);
            snprintf(bound, cap, "[%s]:%u", a, p);
        }
    } else {
        snprintf(bound, cap, "%s", opts->listen);
    }
    *out = h;
    return WR_OK;
}

void wr_http_stop_accepting(wr_http_t *h)
{
    if (!h || h->stopped)
        return;
    h->stopped = true;
    if (h->sock) {
        evhttp_del_accept_socket(h->http, h->sock);
        h->sock = NULL;
    }
}

size_t wr_http_connections(const wr_http_t *h)
{
    return h->n_conns;
}

void wr_http_free(wr_http_t *h)
{
    if (!h)
        return;
    h->stopped = true;
    h->sock = NULL;
    for (wr_http_t **pp = &servers; *pp; pp = &(*pp)->next_server) {
        if (*pp == h) {
            *pp = h->next_server;
            break;
        }
    }
    evhttp_free(h->http); /* frees every connection; our references remain */
    for (size_t i = 0; i < h->n_conns; i++) {
        bufferevent_decref(h->conns[i]->bev);
        free(h->conns[i]);
    }
    event_free(h->sweep);
    event_free(h->backoff_ev);
    free(h->conns);
    free(h->index);
    free(h);
}

void wr_http_get_counters(const wr_http_t *h, wr_http_counters_t *out)
{
    *out = h->counters;
}
