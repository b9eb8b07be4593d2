/*
 * tlsclient.c - client TLS for libevent's HTTP client (tlsclient.h).
 *
 * The host name check is OpenSSL's (SSL_set1_host: the certificate's
 * subjectAltName DNS entries, wildcards in the leftmost label only; an IP
 * through X509_VERIFY_PARAM_set1_ip_asc), done during the handshake, so a
 * request is never written to a peer that failed it. A dirty shutdown
 * (no close_notify) is allowed: the HTTP framing says where the answer
 * ends, and many servers close without one.
 */
#include "http/tlsclient.h"

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/x509v3.h>

SSL_CTX *wr_tlsclient_context(const char *ca_file)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx)
        return NULL;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    int ok = ca_file ? SSL_CTX_load_verify_locations(ctx, ca_file, NULL)
                     : SSL_CTX_set_default_verify_paths(ctx);
    if (ok != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

struct evhttp_connection *wr_tlsclient_connection(struct event_base *base, struct evdns_base *dns,
                                                  SSL_CTX *ctx, const char *name, bool name_is_ip,
                                                  const char *connect_host, uint16_t port)
{
    SSL *ssl = ctx ? SSL_new(ctx) : NULL;
    if (!ssl)
        return NULL;
    if (name_is_ip) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name);
    } else {
        SSL_set_tlsext_host_name(ssl, name);
        SSL_set1_host(ssl, name);
    }
    struct bufferevent *bev = bufferevent_openssl_socket_new(
        base, -1, ssl, BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    if (!bev) {
        SSL_free(ssl);
        return NULL;
    }
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    struct evhttp_connection *c =
        evhttp_connection_base_bufferevent_new(base, dns, bev, connect_host, port);
    if (!c)
        bufferevent_free(bev);
    return c;
}
