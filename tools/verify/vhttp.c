/*
 * vhttp.c - waitroom-verify's blocking HTTP GETs (vhttp.h).
 *
 * Each GET makes its own evhttp connection ("Connection: close"), runs
 * the loop until the answer, the error callback or the request's deadline,
 * and frees it: no state survives between requests, so a server that
 * closes, a TLS session that ends, or a reconnect never leaves the client
 * in a half state (libevent cannot reconnect a bufferevent_openssl). A log
 * of 1,000,000 leaves is 1,000 requests: the handshakes cost little next
 * to the bodies.
 *
 * The deadline is a timer on the loop, not evhttp's timeout alone: that
 * one is an idle timeout (it restarts with every byte read), so a server
 * sending a header line every few seconds would hold a request for ever.
 * When the timer fires the loop stops and the connection is freed with its
 * request (evhttp_connection_free calls no callback).
 */
#include "vhttp.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/ssl.h>

#include "base/names.h"
#include "base/version.h"

struct vhttp {
    struct event_base *base;
    SSL_CTX *tls; /* https only */
    char host[256];
    int port;
    char authority[300]; /* the Host header */
    char prefix[512];    /* the URL's path, no trailing '/' */
    int timeout_s;       /* the deadline of one GET */
};

void vhttp_close(vhttp_t *h)
{
    if (!h)
        return;
    if (h->tls)
        SSL_CTX_free(h->tls);
    if (h->base)
        event_base_free(h->base);
    free(h);
}

vhttp_t *vhttp_open(const char *url, int timeout_s, char *err, size_t errlen)
{
    struct evhttp_uri *u = evhttp_uri_parse(url);
    vhttp_t *h = calloc(1, sizeof(*h));
    const char *scheme = u ? evhttp_uri_get_scheme(u) : NULL;
    const char *host = u ? evhttp_uri_get_host(u) : NULL;
    bool tls = scheme && strcmp(scheme, "https") == 0;
    if (!h || !u || !scheme || !host || !host[0] || (!tls && strcmp(scheme, "http") != 0) ||
        evhttp_uri_get_query(u) || evhttp_uri_get_userinfo(u) || strlen(host) >= sizeof h->host) {
        snprintf(err, errlen, "%s: not an http:// or https:// URL of a server", url);
        goto fail;
    }
    h->timeout_s = timeout_s > 0 ? timeout_s : VHTTP_TIMEOUT_S;
    snprintf(h->host, sizeof h->host, "%s", host);
    h->port = evhttp_uri_get_port(u);
    bool dflt = h->port < 0;
    if (dflt)
        h->port = tls ? 443 : 80;
    bool v6 = strchr(host, ':') != NULL;
    if (dflt)
        snprintf(h->authority, sizeof h->authority, v6 ? "[%s]" : "%s", host);
    else
        snprintf(h->authority, sizeof h->authority, v6 ? "[%s]:%d" : "%s:%d", host, h->port);
    const char *path = evhttp_uri_get_path(u);
    snprintf(h->prefix, sizeof h->prefix, "%s", path ? path : "");
    size_t n = strlen(h->prefix);
    while (n > 0 && h->prefix[n - 1] == '/')
        h->prefix[--n] = '\0';
    h->base = event_base_new();
    if (!h->base) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (tls) {
        h->tls = SSL_CTX_new(TLS_client_method());
        if (!h->tls || SSL_CTX_set_default_verify_paths(h->tls) != 1) {
            snprintf(err, errlen, "TLS: cannot load the system's CAs");
            goto fail;
        }
        SSL_CTX_set_min_proto_version(h->tls, TLS1_2_VERSION);
        SSL_CTX_set_verify(h->tls, SSL_VERIFY_PEER, NULL);
    }
    evhttp_uri_free(u);
    return h;
fail:
    if (u)
        evhttp_uri_free(u);
    vhttp_close(h);
    return NULL;
}

typedef struct {
    struct event_base *base;
    int timeout_s;
    bool done, failed;
    int status;
    char *body;
    size_t len, max;
    char why[160];
} call_t;

static void done_cb(struct evhttp_request *req, void *arg)
{
    call_t *c = arg;
    c->done = true;
    event_base_loopexit(c->base, NULL);
    if (!req || evhttp_request_get_response_code(req) == 0) {
        c->failed = true;
        if (!c->why[0])
            snprintf(c->why, sizeof c->why, "no answer");
        return;
    }
    c->status = evhttp_request_get_response_code(req);
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    if (n > c->max || !(c->body = malloc(n + 1))) {
        c->failed = true;
        snprintf(c->why, sizeof c->why, "an answer over %zu bytes", c->max);
        return;
    }
    evbuffer_remove(in, c->body, n);
    c->body[n] = '\0';
    c->len = n;
}

static void error_cb(enum evhttp_request_error e, void *arg)
{
    call_t *c = arg;
    /* by the enum's names: its order is libevent's, not ours to guess */
    static const char *const names[] = {
        [EVREQ_HTTP_TIMEOUT] = "timeout",
        [EVREQ_HTTP_EOF] = "connection closed",
        [EVREQ_HTTP_INVALID_HEADER] = "an invalid or too large header",
        [EVREQ_HTTP_BUFFER_ERROR] = "connection error",
        [EVREQ_HTTP_REQUEST_CANCEL] = "the request was cancelled",
        [EVREQ_HTTP_DATA_TOO_LONG] = "an answer too large",
    };
    snprintf(c->why, sizeof c->why, "%s", WR_NAMES_GET(names, e, "error"));
}

/* The request's deadline passed: it fails, whatever came so far. */
static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    call_t *c = arg;
    c->done = c->failed = true;
    snprintf(c->why, sizeof c->why, "no whole answer within %d s", c->timeout_s);
    event_base_loopexit(c->base, NULL);
}

static bool numeric_host(const char *h)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1;
}

int vhttp_get(vhttp_t *h, const char *path, size_t max_body, int *status, char **body, size_t *len,
              char *err, size_t errlen)
{
    call_t c = {.base = h->base, .timeout_s = h->timeout_s, .max = max_body};
    struct evhttp_connection *conn = NULL;
    if (h->tls) {
        SSL *ssl = SSL_new(h->tls);
        struct bufferevent *bev = NULL;
        if (ssl) {
            if (numeric_host(h->host)) {
                X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), h->host);
            } else {
                SSL_set_tlsext_host_name(ssl, h->host);
                SSL_set1_host(ssl, h->host);
            }
            bev = bufferevent_openssl_socket_new(h->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
                                                 BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
            if (!bev)
                SSL_free(ssl);
        }
        if (bev) {
            bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
            conn = evhttp_connection_base_bufferevent_new(h->base, NULL, bev, h->host,
                                                          (unsigned short)h->port);
            if (!conn)
                bufferevent_free(bev);
        }
    } else {
        conn = evhttp_connection_base_new(h->base, NULL, h->host, (unsigned short)h->port);
    }
    struct evhttp_request *req = conn ? evhttp_request_new(done_cb, &c) : NULL;
    if (!req) {
        if (conn)
            evhttp_connection_free(conn);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    evhttp_connection_set_timeout(conn, h->timeout_s);
    evhttp_connection_set_retries(conn, 0);
    evhttp_connection_set_max_body_size(conn, (ev_ssize_t)max_body);
    evhttp_connection_set_max_headers_size(conn, 65536);
    evhttp_request_set_error_cb(req, error_cb);
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Host", h->authority);
    evhttp_add_header(oh, "Connection", "close");
    evhttp_add_header(oh, "User-Agent", "waitroom-verify/" WR_VERSION);
    char target[1200];
    snprintf(target, sizeof target, "%s%s", h->prefix, path);
    struct event *deadline = evtimer_new(h->base, deadline_cb, &c);
    struct timeval tv = {.tv_sec = h->timeout_s};
    if (!deadline || evtimer_add(deadline, &tv) != 0) {
        if (deadline)
            event_free(deadline);
        evhttp_request_free(req); /* not the connection's yet */
        evhttp_connection_free(conn);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (evhttp_make_request(conn, req, EVHTTP_REQ_GET, target) != 0) {
        event_free(deadline); /* the request was freed by the failed call */
        evhttp_connection_free(conn);
        snprintf(err, errlen, "cannot send the request");
        return -1;
    }
    while (!c.done && event_base_dispatch(h->base) == 0)
        ;
    event_free(deadline);
    evhttp_connection_free(conn);
    if (!c.done || c.failed) {
        free(c.body);
        snprintf(err, errlen, "GET %s%s: %s", h->authority, target, c.why[0] ? c.why : "failed");
        return -1;
    }
    *status = c.status;
    *body = c.body;
    *len = c.len;
    return 0;
}
