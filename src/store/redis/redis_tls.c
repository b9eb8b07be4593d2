/*
 * redis_tls.c - TLS to Redis (redis_tls.h): the one file with libssl and
 * libevent's bufferevent_openssl; redis_io.c, the connection, calls it.
 *
 * Settings
 *   wr_redis_io_tls_new builds one SSL_CTX (TLS 1.2 or newer,
 *   SSL_VERIFY_PEER, the CAs and the client certificate) for every
 *   connection made with it. Each connection takes its own reference to
 *   the SSL_CTX (wr_redis_tls_ctx_ref), so the settings may be freed while
 *   connections made with them live on.
 *
 * Connecting
 *   One SSL object per connect, inside a bufferevent_openssl in the
 *   CONNECTING state: bufferevent_openssl reports CONNECTED only after the
 *   handshake, and SSL_VERIFY_PEER with the host name (SSL_set1_host, no
 *   partial wildcards; also the SNI) or the IP address (an IP literal: no
 *   SNI) set on the SSL object makes OpenSSL refuse a wrong certificate
 *   during it. Once up, redis_io checks again that a certificate was sent
 *   and verified (wr_redis_tls_peer_ok). When the connect fails,
 *   wr_redis_tls_connect_cause tells a TLS refusal (no point trying the
 *   host's next address) from a transport failure. Dirty shutdowns are
 *   allowed: Redis closes without close_notify.
 *
 * Ownership: the bufferevent owns the SSL object (freed with it); the
 * settings own their SSL_CTX reference. No secret passes through here.
 */
#include "store/redis/redis_tls.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct wr_redis_io_tls {
    SSL_CTX *ctx;
};

static bool ip_literal(const char *name)
{
    char a[INET6_ADDRSTRLEN + 1];
    unsigned char bin[sizeof(struct in6_addr)];
    size_t n = strcspn(name, "%");
    if (n >= sizeof a)
        return false;
    memcpy(a, name, n);
    a[n] = '\0';
    return inet_pton(AF_INET, a, bin) == 1 || inet_pton(AF_INET6, a, bin) == 1;
}

/* ------------------------------------------------------------ connecting */

SSL_CTX *wr_redis_tls_ctx_ref(const wr_redis_io_tls_t *t)
{
    SSL_CTX_up_ref(t->ctx);
    return t->ctx;
}

void wr_redis_tls_ctx_unref(SSL_CTX *ctx)
{
    if (ctx)
        SSL_CTX_free(ctx);
}

struct bufferevent *wr_redis_tls_bev_new(struct event_base *base, SSL_CTX *ctx, const char *name,
                                         int opts, SSL **ssl_out, char *cause, size_t cap)
{
    SSL *ssl = SSL_new(ctx);
    if (!ssl) {
        snprintf(cause, cap, "TLS: out of memory");
        return NULL;
    }
    if (ip_literal(name)) {
        char a[INET6_ADDRSTRLEN + 1];
        snprintf(a, sizeof a, "%.*s", (int)strcspn(name, "%"), name);
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), a);
    } else {
        SSL_set_tlsext_host_name(ssl, name);
        SSL_set1_host(ssl, name);
        SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    }
    struct bufferevent *bev =
        bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_CONNECTING, opts);
    if (!bev) {
        SSL_free(ssl);
        snprintf(cause, cap, "out of memory");
        return NULL;
    }
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    *ssl_out = ssl;
    return bev;
}

bool wr_redis_tls_peer_ok(SSL *ssl, char *cause, size_t cap)
{
    X509 *peer = SSL_get1_peer_certificate(ssl);
    long vr = SSL_get_verify_result(ssl);
    X509_free(peer);
    if (!peer || vr != X509_V_OK) {
        snprintf(cause, cap, "TLS: the server's certificate was refused (%s)",
                 peer ? X509_verify_cert_error_string(vr) : "none sent");
        return false;
    }
    return true;
}

bool wr_redis_tls_connect_cause(struct bufferevent *bev, SSL *ssl, const char *name, char *b,
                                size_t cap)
{
    long vr = SSL_get_verify_result(ssl);
    unsigned long e, first = 0;
    while ((e = bufferevent_get_openssl_error(bev)) != 0)
        if (!first)
            first = e;
    ERR_clear_error();
    if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        snprintf(b, cap, "TLS: the server's certificate is not for '%s' (%s)", name,
                 X509_verify_cert_error_string(vr));
        return true;
    }
    if (vr != X509_V_OK) {
        snprintf(b, cap, "TLS: the server's certificate is not trusted (%s)",
                 X509_verify_cert_error_string(vr));
        return true;
    }
    if (first) {
        char es[160];
        ERR_error_string_n(first, es, sizeof es);
        snprintf(b, cap, "TLS handshake failed (%s)", es);
        return true;
    }
    return false;
}

/* ------------------------------------------------------------ settings */

/* The first OpenSSL error's reason, for a message. */
static const char *ssl_reason(void)
{
    static char b[160];
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    snprintf(b, sizeof b, "%s", r ? r : "unknown error");
    ERR_clear_error();
    return b;
}

static wr_err_t tls_fail(char *err, size_t errlen, const char *what, const char *file)
{
    const char *why = ssl_reason();
    if (err && errlen)
        snprintf(err, errlen, "cannot load the %s %s: %s", what, file, why);
    return WR_EINVAL;
}

wr_err_t wr_redis_io_tls_new(const wr_redis_io_tls_opts_t *o, wr_redis_io_tls_t **out, char *err,
                             size_t errlen)
{
    wr_err_t e = WR_EINVAL;
    SSL_CTX *ctx = NULL;
    wr_redis_io_tls_t *t = NULL;
    if (err && errlen)
        err[0] = '\0';
    if (!o || !out)
        goto out;
    if (!o->cert_file != !o->key_file) {
        if (err && errlen)
            snprintf(err, errlen, "a client certificate needs both the certificate and its key");
        goto out;
    }
    ERR_clear_error();
    e = WR_ENOMEM;
    ctx = SSL_CTX_new(TLS_client_method());
    t = calloc(1, sizeof *t);
    if (!ctx || !t)
        goto out;
    e = WR_EINVAL;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    if (o->ca_file) {
        if (SSL_CTX_load_verify_locations(ctx, o->ca_file, NULL) != 1) {
            e = tls_fail(err, errlen, "CA file", o->ca_file);
            goto out;
        }
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        e = tls_fail(err, errlen, "system's CAs from", X509_get_default_cert_file());
        goto out;
    }
    if (o->cert_file) {
        if (SSL_CTX_use_certificate_chain_file(ctx, o->cert_file) != 1) {
            e = tls_fail(err, errlen, "client certificate", o->cert_file);
            goto out;
        }
        if (SSL_CTX_use_PrivateKey_file(ctx, o->key_file, SSL_FILETYPE_PEM) != 1) {
            e = tls_fail(err, errlen, "client key", o->key_file);
            goto out;
        }
        if (SSL_CTX_check_private_key(ctx) != 1) {
            ERR_clear_error();
            if (err && errlen)
                snprintf(err, errlen, "the client key %s does not match the certificate %s",
                         o->key_file, o->cert_file);
            goto out;
        }
    }
    t->ctx = ctx;
    *out = t;
    return WR_OK;
out:
    SSL_CTX_free(ctx);
    free(t);
    return e;
}

void wr_redis_io_tls_free(wr_redis_io_tls_t *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    free(t);
}
