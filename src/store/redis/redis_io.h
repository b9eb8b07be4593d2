/*
 * redis_io.h - one Redis connection on a libevent loop: a TCP socket, a
 * unix socket, or TLS over TCP (libevent's bufferevent_openssl), speaking
 * RESP2 with hiredis's protocol pieces only (redisReader for replies,
 * our own RESP formatter for commands). It is the one I/O path under the
 * Redis store, in place of hiredis async (docs/DESIGN.md, "Redis I/O").
 *
 * One object is one connection attempt and its life, as a hiredis async
 * context: wr_redis_io_connect() starts it; it becomes ready after the
 * transport is up (TLS handshake and certificate check included) and the
 * handshake has run: AUTH (ACL user or password), SELECT db, or a PING
 * when there is neither, then the caller's own checks (handshake hook).
 * Commands submitted before that are held and sent, in order, once it is
 * ready. When the connection ends by itself (connect failure, TLS refusal,
 * authentication failure, connect or hung timeout, the server closing,
 * a protocol error, a reply over the size cap) every pending command's
 * callback is called once with an error and then on_close, once, with the
 * reason. Reconnecting is the caller's business: free this one, connect a
 * new one (redis_conn does, with its backoff).
 *
 * Async contract (libuv's): a call that takes a callback and returns an
 * error never calls it; one that returns WR_OK calls it exactly once, from
 * the event loop, never from inside the call - except wr_redis_io_free(),
 * which calls every pending callback synchronously with WR_ECANCELED.
 *
 * Secrets: the password is copied into the object, wiped when it is
 * freed, and never appears in a message of this module (server error
 * texts are scrubbed of it as well). This module does not log.
 *
 * Not thread-safe: one loop, one thread.
 */
#ifndef WR_REDIS_IO_H
#define WR_REDIS_IO_H

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_REDIS_IO_MAX_REPLY_DEFAULT (64u * 1024 * 1024) /* bytes of one reply */
#define WR_REDIS_IO_MAX_PENDING       65536               /* default cap of pending commands */
#define WR_REDIS_IO_MSG_MAX           600                 /* bytes of a close message with NUL */
#define WR_REDIS_IO_NO_HUNG           UINT32_MAX          /* hung_ms: never drop */

/* ------------------------------------------------------------ TLS settings */

/* The client's TLS settings: an OpenSSL SSL_CTX built once from files and
 * shared by every connection made with it. */
typedef struct wr_redis_io_tls wr_redis_io_tls_t;

typedef struct {
    const char *ca_file;   /* PEM bundle of the CAs to trust; NULL = the system's store */
    const char *cert_file; /* PEM client certificate (chain); NULL = none */
    const char *key_file;  /* PEM private key of cert_file (unencrypted); with cert_file */
} wr_redis_io_tls_opts_t;

/*
 * Builds the TLS settings: TLS 1.2 or newer, the server's certificate
 * verified against ca_file (or the system's CAs), and the client
 * certificate when given. Returns WR_OK and *out (free with
 * wr_redis_io_tls_free); WR_EINVAL with a message in err (errlen bytes,
 * may be NULL) when a file does not load ("cannot load the CA file
 * /etc/x.pem: no such file"), cert_file and key_file are not given
 * together, or the key does not match the certificate; WR_ENOMEM.
 */
wr_err_t wr_redis_io_tls_new(const wr_redis_io_tls_opts_t *o, wr_redis_io_tls_t **out, char *err,
                             size_t errlen);

/* Frees t; connections made with it keep working (each holds its own
 * reference to the SSL_CTX). NULL is a no-op. */
void wr_redis_io_tls_free(wr_redis_io_tls_t *t);

/* ------------------------------------------------------------ connection */

typedef struct wr_redis_io wr_redis_io_t;

/*
 * The answer to one command, called exactly once:
 *   WR_OK            reply is the server's answer, borrowed until the
 *                    callback returns (freed after it; copy what you keep).
 *                    It may be an error reply (REDIS_REPLY_ERROR: WRONGTYPE,
 *                    NOSCRIPT, READONLY, LOADING...): reading those is the
 *                    caller's job.
 *   WR_ETIMEOUT      no answer within the command's timeout; reply NULL.
 *                    The command may still run on the server.
 *   WR_EUNAVAILABLE  the connection ended first (or never became ready);
 *                    reply NULL; on_close follows with the reason.
 *   WR_ECANCELED     wr_redis_io_free(); reply NULL.
 * The callback may submit commands and may free the connection.
 */
typedef void (*wr_redis_io_reply_cb)(wr_err_t err, const redisReply *reply, void *arg);

/* Called once the transport is up and AUTH / SELECT succeeded, before any
 * held command is sent: the caller's checks (ROLE, CONFIG GET, SCRIPT
 * LOAD...) go out with wr_redis_io_handshake_command(), and the caller
 * ends the handshake with wr_redis_io_handshake_done(), now or later. */
typedef void (*wr_redis_io_handshake_cb)(wr_redis_io_t *io, void *arg);

/* Called once, when the handshake is done and the held commands are sent. */
typedef void (*wr_redis_io_ready_cb)(wr_redis_io_t *io, void *arg);

/*
 * Called once when the connection ends by itself (never after
 * wr_redis_io_free), after every pending command got WR_EUNAVAILABLE.
 * err: WR_EUNAVAILABLE (refused, unreachable, TLS refused, closed by the
 * server, the server not ready: LOADING...), WR_ETIMEOUT (connect timeout,
 * or a command unanswered hung_ms after its timeout), WR_EAUTH (AUTH
 * refused, or the server wants a password and none was given), WR_EPROTO
 * (a protocol error, a reply over max_reply_bytes, a reply nobody asked
 * for), WR_EINVAL (SELECT refused), or what the handshake hook passed to
 * wr_redis_io_handshake_done(). msg: one line naming the endpoint and the
 * cause ("127.0.0.1:6390: authentication failed (user alice): WRONGPASS
 * invalid username-password pair or user is disabled."), never the
 * password; borrowed until the callback returns. The callback may free io.
 */
typedef void (*wr_redis_io_close_cb)(wr_redis_io_t *io, wr_err_t err, const char *msg, void *arg);

/* A reply that answers no command: a pub/sub message (an array "message"
 * or "pmessage" once a SUBSCRIBE or PSUBSCRIBE was sent). Borrowed until
 * the callback returns. Without on_push such a reply closes the
 * connection (WR_EPROTO). The callback may free io. */
typedef void (*wr_redis_io_push_cb)(wr_redis_io_t *io, const redisReply *reply, void *arg);

typedef struct {
    /* Where: unix_path, or host:port over TCP (TLS when tls is set). */
    const char *host;             /* a name (resolved with getaddrinfo, which blocks for
                                     names that are not literals) or an IP literal, IPv6
                                     without brackets ("::1", "fe80::1%eth0"); copied.
                                     Each address it resolves to is tried in turn. */
    int port;                     /* 1..65535 */
    const char *unix_path;        /* not NULL: a unix socket (host, port, tls unused); copied */
    const wr_redis_io_tls_t *tls; /* not NULL: TLS; io takes its own reference, so
                                     tls may be freed once connect() returned */
    const char *tls_name;         /* the name the server's certificate must carry and the
                                     SNI sent; NULL = host. An IP literal is checked against
                                     the certificate's IP addresses (no SNI). Copied. */
    /* Who: AUTH USER PASSWORD when user is set (ACL), AUTH PASSWORD when
     * only password is; both copied, wiped at free. */
    const char *user;            /* NULL or "" = the default user */
    const char *password;        /* NULL or "" = none */
    int db;                      /* SELECT db in the handshake; -1 (or any negative) = none */
    uint32_t connect_timeout_ms; /* from connect() to ready: transport, TLS,
                                    AUTH/SELECT and the hook; 0 = 1000 */
    uint32_t command_timeout_ms; /* default timeout of a command, from its
                                    submission; 0 = 250 */
    uint32_t hung_ms;            /* a command still unanswered this long after its
                                    timeout ends the connection (WR_ETIMEOUT);
                                    0 = twice command_timeout_ms;
                                    WR_REDIS_IO_NO_HUNG = never */
    size_t max_reply_bytes;      /* bytes of one reply (all its elements); 0 = 64 MiB */
    size_t max_pending;          /* commands submitted and not yet answered (timed-out
                                    ones still count until answered); 0 = 65536 */
    wr_redis_io_handshake_cb on_handshake; /* may be NULL: ready after AUTH/SELECT */
    wr_redis_io_ready_cb on_ready;         /* may be NULL */
    wr_redis_io_close_cb on_close;         /* may be NULL */
    wr_redis_io_push_cb on_push;           /* may be NULL */
    void *arg;                             /* of the four callbacks above */
} wr_redis_io_opts_t;

/*
 * Starts connecting on base (borrowed; must outlive io). Returns WR_OK and
 * *out: then exactly one of on_close (failure) or on_ready (followed later
 * by on_close when the connection ends) is called from the loop, unless io
 * is freed first. Errors found later (the name does not resolve, refused,
 * TLS) come through on_close, never from here. Returns WR_EINVAL (no
 * endpoint, host longer than 255 bytes, port out of 1..65535, unix path
 * longer than sun_path, user or password longer than 511 bytes) or
 * WR_ENOMEM, with nothing started.
 */
wr_err_t wr_redis_io_connect(struct event_base *base, const wr_redis_io_opts_t *opts,
                             wr_redis_io_t **out);

/*
 * Submits one command: argc arguments argv[i] of argvlen[i] bytes
 * (argvlen NULL: NUL-terminated strings); copied at once. timeout_ms 0 =
 * the connection's command_timeout_ms; counted from now, also while the
 * command is held before the connection is ready. cb may be NULL (the
 * reply is dropped). Returns WR_OK and calls cb exactly once later; or,
 * without calling cb: WR_EUNAVAILABLE (the connection has ended),
 * WR_ELIMIT (max_pending commands pending), WR_EINVAL (argc < 1),
 * WR_ENOMEM.
 *
 * A SUBSCRIBE or PSUBSCRIBE takes one channel per command (its one
 * confirmation answers it); messages then go to on_push.
 */
wr_err_t wr_redis_io_command(wr_redis_io_t *io, int argc, const char *const *argv,
                             const size_t *argvlen, uint32_t timeout_ms, wr_redis_io_reply_cb cb,
                             void *arg);

/*
 * During the handshake hook (from on_handshake until
 * wr_redis_io_handshake_done): sends a command at once, ahead of every
 * held command; bounded by the connect timeout. Same contract as
 * wr_redis_io_command(); WR_EINVAL outside the hook's time.
 */
wr_err_t wr_redis_io_handshake_command(wr_redis_io_t *io, int argc, const char *const *argv,
                                       const size_t *argvlen, wr_redis_io_reply_cb cb, void *arg);

/*
 * Ends the handshake. WR_OK: the held commands are sent and on_ready is
 * called (from inside this call). Any other err: the connection ends with
 * err and msg (copied; must not hold a secret) - from the loop, soon after
 * this call returns. A call outside the hook's time is ignored.
 */
void wr_redis_io_handshake_done(wr_redis_io_t *io, wr_err_t err, const char *msg);

/* True from on_ready until the connection ends. */
bool wr_redis_io_ready(const wr_redis_io_t *io);

/* Commands submitted and not yet answered, timed-out ones included. */
size_t wr_redis_io_pending(const wr_redis_io_t *io);

/* "127.0.0.1:6379", "[::1]:6379" or "unix:/run/redis.sock" (borrowed,
 * lives as long as io); with "tls " in front for TLS. */
const char *wr_redis_io_endpoint(const wr_redis_io_t *io);

/*
 * Closes the connection and frees io: every pending callback is called
 * synchronously with WR_ECANCELED, in submission order; on_close is not
 * called. Inside those callbacks commands return WR_EUNAVAILABLE and a
 * second free is a no-op. May be called from inside any callback of io
 * (the memory goes when the callback returns). NULL is a no-op.
 */
void wr_redis_io_free(wr_redis_io_t *io);

#endif
