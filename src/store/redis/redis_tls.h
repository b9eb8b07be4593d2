/*
 * redis_tls.h - the TLS pieces of the Redis connection (redis_io.c): the
 * client settings (an SSL_CTX), the TLS bufferevent of one connect, the
 * certificate check once it is up, and the cause of a failed handshake.
 *
 * The public TLS settings keep their names and their declarations in
 * redis_io.h (wr_redis_io_tls_new / wr_redis_io_tls_free, built by
 * redis_conn and the tests, passed in wr_redis_io_opts_t.tls); this file
 * implements them. The wr_redis_tls_* functions below are redis_io.c's
 * only: every libssl and bufferevent_openssl call lives in redis_tls.c.
 *
 * Not thread-safe: one loop, one thread.
 */
#ifndef WR_REDIS_TLS_H
#define WR_REDIS_TLS_H

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "store/redis/redis_io.h"

/* A new reference to t's SSL_CTX, for one connection; release it with
 * wr_redis_tls_ctx_unref. t must not be NULL. */
SSL_CTX *wr_redis_tls_ctx_ref(const wr_redis_io_tls_t *t);

/* Releases a reference from wr_redis_tls_ctx_ref. NULL is a no-op. */
void wr_redis_tls_ctx_unref(SSL_CTX *ctx);

/*
 * A bufferevent for a TLS connect on base (fd -1: bufferevent_socket_connect
 * follows): a new SSL object from ctx that checks the server's certificate
 * against name (a host name, also sent as SNI; or an IP literal, "%zone"
 * ignored, checked against the certificate's IP addresses, no SNI); dirty
 * shutdowns allowed. opts: BEV_OPT_* flags. Returns the bufferevent (it
 * owns the SSL object, borrowed in *ssl); NULL when out of memory, with the
 * cause ("TLS: out of memory" or "out of memory") in cause (cap bytes).
 */
struct bufferevent *wr_redis_tls_bev_new(struct event_base *base, SSL_CTX *ctx, const char *name,
                                         int opts, SSL **ssl, char *cause, size_t cap);

/* Once the handshake is done: true when the server sent a certificate and
 * it verified; else false with "TLS: the server's certificate was refused
 * (REASON)" in cause (cap bytes). */
bool wr_redis_tls_peer_ok(SSL *ssl, char *cause, size_t cap);

/*
 * After a failed connect of bev (a TLS bufferevent with ssl inside): when
 * the failure is TLS's (a certificate not for name, not trusted, or an
 * OpenSSL error in the handshake), true with the cause in b (cap bytes);
 * else false and b untouched. Drains the OpenSSL errors either way.
 */
bool wr_redis_tls_connect_cause(struct bufferevent *bev, SSL *ssl, const char *name, char *b,
                                size_t cap);

#endif
