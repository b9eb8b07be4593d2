/*
 * api_client.c - the API's outgoing HTTP client (api_client.h): one TLS
 * context and one resolver for the process, made on first use, and the
 * connection of each request through libevent's HTTP client (TLS:
 * tlsclient.h, the verifying context and a connection that checks the
 * host).
 */
#include "http/api_client.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/keyvalq_struct.h>
#include <openssl/ssl.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/version.h"
#include "http/tlsclient.h"

static bool numeric_host(const char *h)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1;
}

struct evhttp_connection *wr_api__client_connection(wr_api_t *a, const wr_captcha_url_t *u,
                                                    unsigned timeout_ms, size_t max_body)
{
    if (!a->client && !(a->client = calloc(1, sizeof *a->client)))
        return NULL;
    struct wr_api__client *cl = a->client;
    if (u->https && !cl->tls && !(cl->tls = wr_tlsclient_context(NULL)))
        return NULL;
    struct evdns_base *dns = NULL;
    if (!numeric_host(u->host)) {
        if (!cl->dns)
            cl->dns = evdns_base_new(a->base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
                                                  EVDNS_BASE_DISABLE_WHEN_INACTIVE);
        if (!cl->dns)
            return NULL;
        dns = cl->dns;
    }
    struct evhttp_connection *evcon =
        u->https ? wr_tlsclient_connection(a->base, dns, cl->tls, u->host, numeric_host(u->host),
                                           u->host, u->port)
                 : evhttp_connection_base_new(a->base, dns, u->host, u->port);
    if (!evcon)
        return NULL;
    struct timeval tv = wr_clock_tv_ms(timeout_ms);
    evhttp_connection_set_timeout_tv(evcon, &tv);
    evhttp_connection_set_retries(evcon, 0);
    evhttp_connection_set_max_body_size(evcon, (ev_ssize_t)max_body);
    evhttp_connection_set_max_headers_size(evcon, 16384);
    return evcon;
}

void wr_api__client_headers(struct evhttp_request *req, const wr_captcha_url_t *u)
{
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    /* Host: the origin's authority ("host", "host:port", "[::1]:port") */
    const char *auth = strstr(u->origin, "://");
    evhttp_add_header(oh, "Host", auth ? auth + 3 : u->host);
    evhttp_add_header(oh, "Accept", "application/json");
    evhttp_add_header(oh, "Connection", "close");
    evhttp_add_header(oh, "User-Agent", "waitroomd/" WR_VERSION);
}

ev_ssize_t wr_api__client_body(struct evhttp_request *req, char *buf, size_t cap)
{
    struct evbuffer *in = req ? evhttp_request_get_input_buffer(req) : NULL;
    size_t n = in ? evbuffer_get_length(in) : 0;
    if (n > cap)
        return -1;
    ev_ssize_t got = n ? evbuffer_copyout(in, buf, n) : 0;
    return got > 0 ? got : 0;
}

void wr_api__client_free(wr_api_t *a)
{
    struct wr_api__client *cl = a->client;
    if (!cl)
        return;
    if (cl->dns)
        evdns_base_free(cl->dns, 0);
    if (cl->tls)
        SSL_CTX_free(cl->tls);
    free(cl);
    a->client = NULL;
}
