/*
 * http.c - evhttp server setup, limits, connection cap, JSON replies.
 *
 * The event base is the caller's (created with
 * EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST by main).
 *
 * Connection cap: libevent 2.1 gives no hook for "this connection is gone"
 * (evhttp_set_newreqcb is 2.2), so our bevcb creates each connection's
 * socket bufferevent itself, takes a reference on it and records it in a
 * table. evhttp closes the socket and clears the callbacks when it is done
 * with a connection; a sweep every SWEEP_MS finds those (fd -1 or no read
 * callback), drops our reference (which frees the struct) and the count.
 * At the cap the listener is disabled, so excess clients wait in the
 * kernel's backlog; the sweep enables it again below the cap. (A filter
 * bufferevent with a free callback was tried first: with libevent 2.1.12
 * it lost the first request of a connection now and then.)
 *
 * Replies: every JSON reply carries Content-Type application/json and
 * Cache-Control no-store. Replying to a request whose client has gone is
 * safe in libevent 2.1.12 (evhttp_send frees a request that lost its
 * connection), which is what lets handlers finish store calls after a
 * disconnect (case K07).
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"

#define SWEEP_MS 100

struct wr_http {
    struct event_base *base;
    struct evhttp *http;
    struct evhttp_bound_socket *sock;
    struct bufferevent **conns; /* tracked connections, each holding our reference */
    size_t n_conns;
    size_t max_conns;
    struct event *sweep;
    bool paused;
    bool stopped;
};

static void set_paused(wr_http_t *h, bool pause)
{
    if (!h->sock || h->paused == pause)
        return;
    struct evconnlistener *l = evhttp_bound_socket_get_listener(h->sock);
    if (pause) {
        evconnlistener_disable(l);
        wr_warn("connection cap reached (%zu); pausing accept", h->max_conns);
    } else {
        evconnlistener_enable(l);
    }
    h->paused = pause;
}

static void sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_http_t *h = arg;
    size_t j = 0;
    for (size_t i = 0; i < h->n_conns; i++) {
        struct bufferevent *bev = h->conns[i];
        bufferevent_data_cb rcb = NULL;
        bufferevent_getcb(bev, &rcb, NULL, NULL, NULL);
        if (rcb == NULL || bufferevent_getfd(bev) < 0)
            bufferevent_decref(bev); /* evhttp is done with it */
        else
            h->conns[j++] = bev;
    }
    h->n_conns = j;
    if (!h->stopped && h->n_conns < h->max_conns)
        set_paused(h, false);
}

static struct bufferevent *bevcb(struct event_base *base, void *arg)
{
    wr_http_t *h = arg;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!bev)
        return NULL;
    if (h->n_conns < h->max_conns + 64) { /* the table is sized with headroom */
        bufferevent_incref(bev);
        h->conns[h->n_conns++] = bev;
    }
    if (h->n_conns >= h->max_conns)
        set_paused(h, true);
    return bev;
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
    h->conns = calloc(h->max_conns + 64, sizeof(*h->conns));
    h->http = evhttp_new(opts->base);
    h->sweep = event_new(opts->base, -1, EV_PERSIST, sweep_cb, h);
    if (!h->http || !h->conns || !h->sweep) {
        if (h->http)
            evhttp_free(h->http);
        if (h->sweep)
            event_free(h->sweep);
        free(h->conns);
        free(h);
        return WR_ENOMEM;
    }
    struct timeval stv = {0, SWEEP_MS * 1000};
    event_add(h->sweep, &stv);
    evhttp_set_max_headers_size(h->http, WR_HTTP_MAX_HEADERS);
    evhttp_set_max_body_size(h->http, WR_HTTP_MAX_BODY_ADMIN);
    evhttp_set_timeout(h->http, (int)(opts->timeout_seconds ? opts->timeout_seconds : 30));
    evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                            EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE |
                                            EVHTTP_REQ_HEAD | EVHTTP_REQ_OPTIONS);
    evhttp_set_bevcb(h->http, bevcb, h);
    evhttp_set_gencb(h->http, opts->handler, opts->handler_arg);
    h->sock = evhttp_bind_socket_with_handle(h->http, host, port);
    if (!h->sock) {
        int e = errno;
        evhttp_free(h->http);
        event_free(h->sweep);
        free(h->conns);
        free(h);
        errno = e;
        return WR_EIO;
    }
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
    evhttp_free(h->http); /* frees every connection; our references remain */
    for (size_t i = 0; i < h->n_conns; i++)
        bufferevent_decref(h->conns[i]);
    event_free(h->sweep);
    free(h->conns);
    free(h);
}

const char *wr_http_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Payload Too Large";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

static void common_headers(struct evhttp_request *req, int retry_after_s)
{
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Cache-Control", "no-store");
    if (retry_after_s > 0) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%d", retry_after_s);
        evhttp_add_header(oh, "Retry-After", ra);
    }
}

void wr_http_reply_json(struct evhttp_request *req, int status, const char *body, size_t len,
                        int retry_after_s)
{
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_remove_header(oh, "Content-Type");
    evhttp_add_header(oh, "Content-Type", "application/json");
    common_headers(req, retry_after_s);
    struct evbuffer *buf = evhttp_request_get_output_buffer(req);
    evbuffer_add(buf, body, len);
    evhttp_send_reply(req, status, wr_http_reason(status), NULL);
}

void wr_http_reply_error(struct evhttp_request *req, int status, const char *code,
                         const char *message, const char *field, const char *reason,
                         int retry_after_s)
{
    json_t *o = json_object();
    char *s = NULL;
    if (o) {
        json_object_set_new(o, "error", json_string(code));
        json_object_set_new(o, "message", json_string(message ? message : ""));
        if (field)
            json_object_set_new(o, "field", json_string(field));
        if (reason)
            json_object_set_new(o, "reason", json_string(reason));
        s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    if (s) {
        wr_http_reply_json(req, status, s, strlen(s), retry_after_s);
        free(s);
    } else {
        static const char fallback[] = "{\"error\":\"INTERNAL\",\"message\":\"out of memory\"}";
        wr_http_reply_json(req, 500, fallback, sizeof(fallback) - 1, 0);
    }
}

void wr_http_reply_empty(struct evhttp_request *req, int status)
{
    common_headers(req, 0);
    evhttp_send_reply(req, status, wr_http_reason(status), NULL);
}
