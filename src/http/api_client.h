/*
 * api_client.h - the API's outgoing HTTP client (api_client.c): the
 * CAPTCHA provider's siteverify (api_captcha.c) and the opening draw's
 * beacon (api_beacon.c) go through it.
 */
#ifndef WR_API_CLIENT_H
#define WR_API_CLIENT_H

#include <event2/http.h>
#include <stddef.h>

#include "core/captcha.h"
#include "http/api_internal.h"

/* What the client keeps: made on the first request, freed with the API. */
struct wr_api__client {
    struct ssl_ctx_st *tls; /* NULL until the first https:// request */
    struct evdns_base *dns; /* NULL until the first host name */
    size_t in_flight;       /* CAPTCHA verifications in flight */
};

/*
 * A new connection to u's host and port: https:// through tlsclient.h
 * (TLS 1.2 or later, the peer's certificate checked against the system's
 * trusted CAs - OpenSSL's default paths: SSL_CERT_FILE works - and
 * against u's host: its IP address, or its DNS name, sent as SNI too); http:// in the
 * clear (wr_captcha_url_parse allows it only to a loopback host). No
 * retries, timeout_ms for each step, bodies of at most max_body bytes.
 * NULL when out of memory (or no TLS context). The caller frees it.
 */
struct evhttp_connection *wr_api__client_connection(wr_api_t *a, const wr_captcha_url_t *u,
                                                    unsigned timeout_ms, size_t max_body);

/* The headers every request of ours carries: Host (u's authority),
 * Accept: application/json, Connection: close, User-Agent. */
void wr_api__client_headers(struct evhttp_request *req, const wr_captcha_url_t *u);

/* Copies the body of the answer req into buf (cap bytes, no NUL added):
 * its length, 0 when there is none (or req is NULL), -1 when it is longer
 * than cap (nothing copied). req is borrowed (libevent's). */
ev_ssize_t wr_api__client_body(struct evhttp_request *req, char *buf, size_t cap);

/* Frees the client (wr_api_free); NULL client is fine. */
void wr_api__client_free(wr_api_t *a);

#endif
