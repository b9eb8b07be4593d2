/*
 * redis_io.c - one Redis connection on libevent bufferevents (redis_io.h).
 *
 * Why not hiredis async: hiredis 0.14 (Debian 12) has no TLS, and 1.x is
 * not packaged there. libevent's bufferevent_openssl and hiredis's reader
 * and command formatter are kept libraries we link already, so every
 * connection - plain TCP, unix socket, TLS - runs through this one file.
 *
 * Structure
 *   A connection is a bufferevent (socket, or openssl over a socket) with
 *   BEV_OPT_DEFER_CALLBACKS, so libevent never calls us from inside our own
 *   bufferevent_write; a redisReader fed from its input buffer; and two
 *   FIFOs of `struct cmd`:
 *     held  submitted before the connection was ready; written, in order,
 *           when it becomes ready;
 *     sent  written, waiting for their reply. Redis answers in order, so
 *           each reply answers the head of `sent` (pub/sub messages aside).
 *   Each command is formatted (RESP, wr_redis_io__format_resp) when submitted and
 *   owns a timer from then on: the command's timeout. The FIFOs and the
 *   commands in them are redis_io_cmd.c; redis_io_internal.h is what the
 *   two files share.
 *
 * States
 *   CONNECTING  resolving is done (getaddrinfo, in connect()); the socket
 *               connects to one address after the other until one answers;
 *               for TLS the handshake and the certificate check are part
 *               of this state (redis_tls.c: the SSL object, the check, the
 *               cause of a refusal).
 *   HANDSHAKE   AUTH [user] password and/or SELECT db, or PING when there is
 *               neither (so a server that wants a password is found out
 *               now: NOAUTH), pipelined ahead of everything; then the
 *               caller's hook with its own commands (in_hook).
 *   READY       held commands written; new ones are written at once.
 *   CLOSED      the connection ended (close_with): every pending command
 *               got WR_EUNAVAILABLE, on_close was called; io stays
 *               allocated until the caller frees it.
 *   One timer (connect_timer) bounds CONNECTING + HANDSHAKE. Failures found
 *   while the caller is inside one of our functions (connect() cannot reach
 *   any address; handshake_done() with an error) are reported from the loop
 *   through fail_ev, a zero timer, so no callback ever runs inside a call.
 *
 * Timeouts: redis_io_cmd.c, with the command queue.
 *
 * Writes
 *   bufferevent_write only queues the bytes and asks the loop to wait until
 *   the socket is writable, so a command would leave after the next
 *   epoll_wait. Like store_redis's flush_ev and http.c's send_reply, each
 *   write instead makes the bufferevent's write event active (its struct is
 *   public in event2/bufferevent_struct.h): libevent's own write callback
 *   (plain, or OpenSSL's) runs later in this loop iteration and sends every
 *   command queued in it with one write. Commands are written only once
 *   the transport is up (HANDSHAKE, READY), never while connecting.
 *
 * Reply size
 *   cur_reply counts the bytes fed to the reader since the end of the last
 *   complete reply (for an array, its elements already parsed included).
 *   The input is fed in chunks of FEED_CHUNK bytes; after each, a reply
 *   still incomplete beyond max_reply_bytes closes the connection, so at
 *   most max_reply_bytes + FEED_CHUNK bytes of one reply are ever held.
 *
 * Reentrancy
 *   User callbacks may submit commands and may free io. Every entry from
 *   the loop (bufferevent and timer callbacks) and the public calls that
 *   can call back (handshake_done, free) hold io->depth; wr_redis_io_free
 *   marks io freed, fails what is pending and leaves the memory to the
 *   outermost entry. After each user callback the code re-checks `freed`
 *   and the state before touching anything else. A command is unlinked
 *   and its timer stopped before its callback runs, so it is answered at
 *   most once.
 *
 * Secrets
 *   The password lives in io (wiped at free) and goes out only in the AUTH
 *   command (whose formatted buffer is wiped after it is written). Every
 *   close message passes through scrub(), which replaces the password with
 *   *** should a server ever echo it.
 *
 * Ownership: io owns its bufferevent (and the SSL object in it), reader,
 *   timers, commands and copies of the strings of the options; it holds a
 *   reference to the SSL_CTX. Replies are freed after their callback.
 */
#include "store/redis/redis_io.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event_struct.h>
#include <hiredis/read.h>

#include "base/clock.h"
#include "store/redis/redis_io_internal.h"
#include "store/redis/redis_reply.h"
#include "store/redis/redis_tls.h"

#define FEED_CHUNK         16384 /* bytes fed to the reader between size checks */
#define CONNECT_TIMEOUT_MS 1000
#define COMMAND_TIMEOUT_MS 250
#define SERVER_TEXT_MAX    160 /* bytes of a server error quoted in a message */
#define HOST_MAX           255 /* bytes of a host name */

/* ------------------------------------------------------------ small helpers */

static char *dupstr(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Replaces every occurrence of secret in buf with "***". */
static void scrub(char *buf, size_t cap, const char *secret)
{
    size_t sn = strlen(secret);
    if (sn == 0)
        return;
    char *p;
    while ((p = strstr(buf, secret)) != NULL) {
        size_t tail = strlen(p + sn);
        if (sn >= 3) {
            memcpy(p, "***", 3);
            memmove(p + 3, p + sn, tail + 1);
        } else if ((size_t)(p - buf) + 3 + tail < cap) {
            memmove(p + 3, p + sn, tail + 1);
            memcpy(p, "***", 3);
        } else {
            memmove(p, p + sn, tail + 1);
        }
    }
}

/* A server's error text, cut, for a message. */
static const char *server_text(const redisReply *r)
{
    static char b[SERVER_TEXT_MAX + 1];
    if (!r)
        return "no reply";
    if (r->type != REDIS_REPLY_ERROR && r->type != REDIS_REPLY_STATUS &&
        r->type != REDIS_REPLY_STRING)
        return "an unexpected reply";
    snprintf(b, sizeof b, "%.*s", (int)(r->len < SERVER_TEXT_MAX ? r->len : SERVER_TEXT_MAX),
             r->str);
    for (char *p = b; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    return b;
}

static bool error_starts(const redisReply *r, const char *prefix)
{
    size_t n = strlen(prefix);
    return r && r->type == REDIS_REPLY_ERROR && r->len >= n && memcmp(r->str, prefix, n) == 0;
}

void wr_redis_io__enter(wr_redis_io_t *io)
{
    io->depth++;
}

static void destroy(wr_redis_io_t *io);

void wr_redis_io__leave(wr_redis_io_t *io)
{
    if (--io->depth == 0 && io->freed)
        destroy(io);
}

/* ------------------------------------------------------------ closing */

static void drop_transport(wr_redis_io_t *io)
{
    if (io->bev) {
        bufferevent_free(io->bev); /* clears our callbacks first; closes fd and SSL */
        io->bev = NULL;
        io->ssl = NULL;
    }
    if (io->ai) {
        freeaddrinfo(io->ai);
        io->ai = NULL;
        io->ai_next = NULL;
    }
    event_del(&io->connect_timer);
    event_del(&io->fail_ev);
}

/* Ends the connection: pending commands get WR_EUNAVAILABLE, then
 * on_close(err, "ENDPOINT: cause"). Only from inside an entry (depth > 0). */
void wr_redis_io__close_with(wr_redis_io_t *io, wr_err_t err, const char *fmt, ...)
{
    if (io->st == ST_CLOSED || io->freed)
        return;
    io->st = ST_CLOSED;
    io->in_hook = false;
    drop_transport(io);
    char cause[CAUSE_MAX];
    char msg[WR_REDIS_IO_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s: %s", io->endpoint, cause);
    scrub(msg, sizeof msg, io->password);
    wr_redis_io__fail_all(io, WR_EUNAVAILABLE);
    if (!io->freed && io->on_close)
        io->on_close(io, err, msg, io->arg);
}

static void fail_ev_cb(evutil_socket_t fd, short what, void *arg)
{
    wr_redis_io_t *io = arg;
    wr_redis_io__enter(io);
    wr_redis_io__close_with(io, io->fail_err, "%s", io->fail_msg);
    wr_redis_io__leave(io);
}

/* Reports err from the loop, soon (for failures found inside a call). */
static void fail_soon(wr_redis_io_t *io, wr_err_t err, const char *msg)
{
    static const struct timeval zero = {0, 0};
    io->fail_err = err;
    snprintf(io->fail_msg, sizeof io->fail_msg, "%s", msg);
    evtimer_add(&io->fail_ev, &zero);
}

static void connect_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    wr_redis_io_t *io = arg;
    wr_redis_io__enter(io);
    const char *phase = io->st == ST_CONNECTING
                            ? (io->ssl_ctx ? "TCP connect or TLS handshake" : "connect")
                        : io->in_hook ? "handshake checks"
                                      : "AUTH/SELECT";
    wr_redis_io__close_with(io, WR_ETIMEOUT, "not ready within %u ms (%s)", io->connect_timeout_ms,
                            phase);
    wr_redis_io__leave(io);
}

/* ------------------------------------------------------------ replies */

static bool is_push(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 || !r->element[0] ||
        r->element[0]->type != REDIS_REPLY_STRING)
        return false;
    const char *k = r->element[0]->str;
    return strcmp(k, "message") == 0 || strcmp(k, "pmessage") == 0;
}

static void on_reply(wr_redis_io_t *io, const redisReply *r)
{
    struct cmd *c = TAILQ_FIRST(&io->sent);
    if ((io->subscribed && is_push(r)) || !c) {
        if (io->on_push)
            io->on_push(io, r, io->arg);
        else
            wr_redis_io__close_with(io, WR_EPROTO, "a reply that answers no command");
        return;
    }
    wr_redis_io__cmd_unlink(c);
    wr_redis_io__cmd_answer(c, WR_OK, r);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    wr_redis_io_t *io = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    wr_redis_io__enter(io);
    while (io->st != ST_CLOSED && !io->freed && evbuffer_get_length(in) > 0) {
        struct evbuffer_iovec v[4];
        int n = evbuffer_peek(in, FEED_CHUNK, NULL, v, 4);
        size_t fed = 0;
        for (int i = 0; i < n && i < 4 && fed < FEED_CHUNK; i++) {
            size_t take = v[i].iov_len;
            if (take > FEED_CHUNK - fed)
                take = FEED_CHUNK - fed;
            if (redisReaderFeed(io->reader, v[i].iov_base, take) != REDIS_OK) {
                wr_redis_io__close_with(io, WR_ENOMEM, "out of memory reading a reply");
                goto out;
            }
            fed += take;
        }
        evbuffer_drain(in, fed);
        io->cur_reply += fed;
        io->fed_total += fed;
        for (;;) {
            void *rep = NULL;
            if (redisReaderGetReply(io->reader, &rep) != REDIS_OK) {
                wr_redis_io__close_with(io, WR_EPROTO, "protocol error: %s", io->reader->errstr);
                goto out;
            }
            if (!rep)
                break;
            io->cur_reply = io->reader->len - io->reader->pos; /* the next reply's bytes */
            on_reply(io, rep);
            wr_redis_reply_free(rep);
            if (io->st == ST_CLOSED || io->freed)
                goto out;
        }
        if (io->cur_reply > io->max_reply) {
            wr_redis_io__close_with(io, WR_EPROTO, "a reply larger than %zu bytes: refused",
                                    io->max_reply);
            goto out;
        }
    }
out:
    wr_redis_io__leave(io);
}

/* ------------------------------------------------------------ handshake */

static void ready(wr_redis_io_t *io)
{
    io->st = ST_READY;
    io->in_hook = false;
    event_del(&io->connect_timer);
    struct cmd *c;
    while ((c = TAILQ_FIRST(&io->held)) != NULL) {
        TAILQ_REMOVE(&io->held, c, link);
        if (wr_redis_io__cmd_write(io, c) != 0) {
            TAILQ_INSERT_HEAD(&io->held, c, link);
            wr_redis_io__close_with(io, WR_ENOMEM, "out of memory writing a command");
            return;
        }
    }
    if (io->on_ready)
        io->on_ready(io, io->arg);
}

static void run_hook(wr_redis_io_t *io)
{
    if (!io->on_handshake) {
        ready(io);
        return;
    }
    io->in_hook = true;
    io->on_handshake(io, io->arg);
}

/* A handshake reply that is an error: what it means. */
static void handshake_refused(wr_redis_io_t *io, const char *step, const redisReply *r)
{
    const char *text = server_text(r);
    if (error_starts(r, "LOADING") || error_starts(r, "BUSY") || error_starts(r, "MASTERDOWN") ||
        error_starts(r, "TRYAGAIN"))
        wr_redis_io__close_with(io, WR_EUNAVAILABLE, "the server is not ready (%s)", text);
    else if (strcmp(step, "AUTH") == 0)
        wr_redis_io__close_with(io, WR_EAUTH, "authentication failed%s%s%s: %s",
                                io->user[0] ? " (user " : "", io->user, io->user[0] ? ")" : "",
                                text);
    else if (error_starts(r, "NOAUTH") || error_starts(r, "WRONGPASS"))
        wr_redis_io__close_with(io, WR_EAUTH,
                                "the server requires authentication and no password was given (%s)",
                                text);
    else if (strcmp(step, "SELECT") == 0)
        wr_redis_io__close_with(io, WR_EINVAL, "SELECT %d refused: %s", io->db, text);
    else
        wr_redis_io__close_with(io, WR_EPROTO, "%s refused: %s", step, text);
}

static void handshake_step(wr_redis_io_t *io, const char *step, wr_err_t err, const redisReply *r)
{
    if (err != WR_OK || io->st != ST_HANDSHAKE)
        return; /* the connection is ending; close_with says why */
    bool ok = strcmp(step, "PING") == 0
                  ? r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0
                  : r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
    if (!ok) {
        handshake_refused(io, step, r);
        return;
    }
    if (--io->hs_left == 0)
        run_hook(io);
}

static void hs_auth_cb(wr_err_t err, const redisReply *r, void *arg)
{
    handshake_step(arg, "AUTH", err, r);
}

static void hs_select_cb(wr_err_t err, const redisReply *r, void *arg)
{
    handshake_step(arg, "SELECT", err, r);
}

static void hs_ping_cb(wr_err_t err, const redisReply *r, void *arg)
{
    handshake_step(arg, "PING", err, r);
}

static void transport_up(wr_redis_io_t *io)
{
    char cause[CAUSE_MAX];
    if (io->ssl && !wr_redis_tls_peer_ok(io->ssl, cause, sizeof cause)) {
        wr_redis_io__close_with(io, WR_EUNAVAILABLE, "%s", cause);
        return;
    }
    if (!io->unix_path) {
        evutil_socket_t fd = bufferevent_getfd(io->bev);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    }
    if (io->ai) {
        freeaddrinfo(io->ai);
        io->ai = NULL;
        io->ai_next = NULL;
    }
    io->st = ST_HANDSHAKE;
    bufferevent_enable(io->bev, EV_READ | EV_WRITE);
    /* AUTH and SELECT (or PING) pipelined, ahead of every held command */
    wr_err_t e = WR_OK;
    io->hs_left = 0;
    if (io->user[0] || io->password[0]) {
        const char *a[3] = {"AUTH", io->user, io->password};
        const char *const *argv = io->user[0] ? a : (const char *const[]){"AUTH", io->password};
        e = wr_redis_io__submit(io, F_NOW | F_INTERNAL | F_SECRET, io->user[0] ? 3 : 2, argv, NULL,
                                0, hs_auth_cb, io);
        io->hs_left++;
    }
    if (e == WR_OK && io->db >= 0) {
        char db[16];
        snprintf(db, sizeof db, "%d", io->db);
        e = wr_redis_io__submit(io, F_NOW | F_INTERNAL, 2, (const char *const[]){"SELECT", db},
                                NULL, 0, hs_select_cb, io);
        io->hs_left++;
    }
    if (e == WR_OK && io->hs_left == 0) {
        e = wr_redis_io__submit(io, F_NOW | F_INTERNAL, 1, (const char *const[]){"PING"}, NULL, 0,
                                hs_ping_cb, io);
        io->hs_left++;
    }
    if (e != WR_OK)
        wr_redis_io__close_with(io, e, "cannot send the handshake: %s", wr_strerror(e));
}

/* ------------------------------------------------------------ connecting */

static void event_cb(struct bufferevent *bev, short what, void *arg);

/* The cause of a failed connect or TLS handshake, into io->last_cause;
 * true when it is a TLS failure (no point trying another address). */
static bool connect_cause(wr_redis_io_t *io, short what, int err)
{
    char *b = io->last_cause;
    size_t cap = sizeof io->last_cause;
    if (io->ssl && wr_redis_tls_connect_cause(io->bev, io->ssl, io->tls_name, b, cap))
        return true;
    if (err)
        snprintf(b, cap, "connect failed (%s)", strerror(err));
    else if (what & BEV_EVENT_EOF)
        snprintf(b, cap, "%s", io->ssl ? "closed during the TLS handshake" : "closed at once");
    else
        snprintf(b, cap, "connect failed");
    return io->ssl && (what & BEV_EVENT_EOF);
}

/* Opens the transport to the next address (or the unix socket). Returns 0
 * when a connect is under way; -1 when none could be started (cause in
 * io->last_cause). */
static int start_connect(wr_redis_io_t *io)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl;
        if (io->unix_path) {
            struct sockaddr_un *su = (struct sockaddr_un *)&ss;
            memset(su, 0, sizeof *su);
            su->sun_family = AF_UNIX;
            memcpy(su->sun_path, io->unix_path, strlen(io->unix_path) + 1);
            sl = sizeof *su;
        } else {
            if (!io->ai_next)
                return -1;
            memcpy(&ss, io->ai_next->ai_addr, io->ai_next->ai_addrlen);
            sl = io->ai_next->ai_addrlen;
            io->ai_next = io->ai_next->ai_next;
        }
        int opts = BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS;
        if (io->ssl_ctx && !io->unix_path) {
            io->bev = wr_redis_tls_bev_new(io->base, io->ssl_ctx, io->tls_name, opts, &io->ssl,
                                           io->last_cause, sizeof io->last_cause);
            if (!io->bev)
                return -1;
        } else {
            io->bev = bufferevent_socket_new(io->base, -1, opts);
            if (!io->bev) {
                snprintf(io->last_cause, sizeof io->last_cause, "out of memory");
                return -1;
            }
        }
        bufferevent_setcb(io->bev, read_cb, NULL, event_cb, io);
        errno = 0;
        if (bufferevent_socket_connect(io->bev, (struct sockaddr *)&ss, (int)sl) == 0)
            return 0;
        snprintf(io->last_cause, sizeof io->last_cause, "connect failed (%s)",
                 strerror(errno ? errno : EIO));
        bufferevent_free(io->bev);
        io->bev = NULL;
        io->ssl = NULL;
        if (io->unix_path)
            return -1;
    }
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    wr_redis_io_t *io = arg;
    int err = EVUTIL_SOCKET_ERROR();
    wr_redis_io__enter(io);
    if (what & BEV_EVENT_CONNECTED) {
        if (io->st == ST_CONNECTING)
            transport_up(io);
    } else if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) {
        if (io->st == ST_CONNECTING) {
            bool tls = connect_cause(io, what, (what & BEV_EVENT_ERROR) ? err : 0);
            if (!tls && io->ai_next) {
                bufferevent_free(io->bev);
                io->bev = NULL;
                io->ssl = NULL;
                if (start_connect(io) == 0)
                    goto out;
            }
            wr_redis_io__close_with(io, WR_EUNAVAILABLE, "%s", io->last_cause);
        } else if (what & BEV_EVENT_EOF) {
            wr_redis_io__close_with(io, WR_EUNAVAILABLE, "the server closed the connection");
        } else if (io->ssl && !err) {
            connect_cause(io, what, 0);
            wr_redis_io__close_with(io, WR_EUNAVAILABLE, "connection lost: %s", io->last_cause);
        } else {
            wr_redis_io__close_with(io, WR_EUNAVAILABLE, "connection lost: %s",
                                    strerror(err ? err : EIO));
        }
    }
out:
    wr_redis_io__leave(io);
}

/* ------------------------------------------------------------ public */

wr_err_t wr_redis_io_connect(struct event_base *base, const wr_redis_io_opts_t *o,
                             wr_redis_io_t **out)
{
    wr_err_t e = WR_EINVAL;
    wr_redis_io_t *io = NULL;
    if (!base || !o || !out)
        goto out;
    if (o->unix_path ? strlen(o->unix_path) >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
                           !o->unix_path[0]
                     : !o->host || !o->host[0] || strlen(o->host) > HOST_MAX || o->port < 1 ||
                           o->port > 65535)
        goto out;
    if ((o->user && strlen(o->user) > SECRET_MAX) ||
        (o->password && strlen(o->password) > SECRET_MAX))
        goto out;
    e = WR_ENOMEM;
    io = calloc(1, sizeof *io);
    if (!io)
        goto out;
    io->base = base;
    TAILQ_INIT(&io->sent);
    TAILQ_INIT(&io->held);
    io->st = ST_CONNECTING;
    io->port = o->port;
    io->db = o->db < 0 ? -1 : o->db;
    io->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms : CONNECT_TIMEOUT_MS;
    io->command_timeout_ms = o->command_timeout_ms ? o->command_timeout_ms : COMMAND_TIMEOUT_MS;
    io->hung_ms = o->hung_ms ? o->hung_ms : 2 * io->command_timeout_ms;
    io->max_reply = o->max_reply_bytes ? o->max_reply_bytes : WR_REDIS_IO_MAX_REPLY_DEFAULT;
    io->max_pending = o->max_pending ? o->max_pending : WR_REDIS_IO_MAX_PENDING;
    io->on_handshake = o->on_handshake;
    io->on_ready = o->on_ready;
    io->on_close = o->on_close;
    io->on_push = o->on_push;
    io->arg = o->arg;
    if (o->user)
        memcpy(io->user, o->user, strlen(o->user) + 1);
    if (o->password)
        memcpy(io->password, o->password, strlen(o->password) + 1);
    evtimer_assign(&io->connect_timer, base, connect_timer_cb, io);
    evtimer_assign(&io->fail_ev, base, fail_ev_cb, io);
    io->reader = redisReaderCreateWithFunctions(&wr_redis_reply_fns); /* redis_reply.h */
    if (!io->reader)
        goto out;
    struct timeval ctv = wr_clock_tv_ms(io->command_timeout_ms);
    io->common_tv = event_base_init_common_timeout(base, &ctv);
    if (!io->common_tv)
        goto out;
    if (o->unix_path) {
        if (!(io->unix_path = dupstr(o->unix_path)))
            goto out;
        snprintf(io->endpoint, sizeof io->endpoint, "unix:%s", io->unix_path);
    } else {
        if (!(io->host = dupstr(o->host)) ||
            !(io->tls_name = dupstr(o->tls_name ? o->tls_name : o->host)))
            goto out;
        char hp[ENDPOINT_MAX - 8];
        if (strchr(io->host, ':'))
            snprintf(hp, sizeof hp, "[%s]:%d", io->host, io->port);
        else
            snprintf(hp, sizeof hp, "%s:%d", io->host, io->port);
        snprintf(io->endpoint, sizeof io->endpoint, "%s%s", o->tls ? "tls " : "", hp);
        if (o->tls) {
            io->ssl_ctx = wr_redis_tls_ctx_ref(o->tls);
        }
    }
    struct timeval tv = wr_clock_tv_ms(io->connect_timeout_ms);
    evtimer_add(&io->connect_timer, &tv);
    if (!io->unix_path) {
        struct addrinfo hints, *ai = NULL;
        char port[8];
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV;
        snprintf(port, sizeof port, "%d", io->port);
        int g = getaddrinfo(io->host, port, &hints, &ai);
        if (g != 0) {
            snprintf(io->last_cause, sizeof io->last_cause, "cannot resolve '%s' (%s)", io->host,
                     g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
            fail_soon(io, WR_EUNAVAILABLE, io->last_cause);
            goto started;
        }
        io->ai = io->ai_next = ai;
    }
    if (start_connect(io) != 0)
        fail_soon(io, WR_EUNAVAILABLE, io->last_cause);
started:
    *out = io;
    return WR_OK;
out:
    if (io)
        destroy(io);
    return e;
}

wr_err_t wr_redis_io_command(wr_redis_io_t *io, int argc, const char *const *argv,
                             const size_t *argvlen, uint32_t timeout_ms, wr_redis_io_reply_cb cb,
                             void *arg)
{
    if (!io)
        return WR_EINVAL;
    return wr_redis_io__submit(io, 0, argc, argv, argvlen, timeout_ms, cb, arg);
}

wr_err_t wr_redis_io_handshake_command(wr_redis_io_t *io, int argc, const char *const *argv,
                                       const size_t *argvlen, wr_redis_io_reply_cb cb, void *arg)
{
    if (!io)
        return WR_EINVAL;
    if (io->freed || io->st == ST_CLOSED)
        return WR_EUNAVAILABLE;
    if (!io->in_hook)
        return WR_EINVAL;
    return wr_redis_io__submit(io, F_NOW, argc, argv, argvlen, 0, cb, arg);
}

void wr_redis_io_handshake_done(wr_redis_io_t *io, wr_err_t err, const char *msg)
{
    if (!io || io->freed || io->st != ST_HANDSHAKE || !io->in_hook)
        return;
    io->in_hook = false;
    wr_redis_io__enter(io);
    if (err == WR_OK)
        ready(io);
    else
        fail_soon(io, err, msg ? msg : wr_strerror(err));
    wr_redis_io__leave(io);
}

bool wr_redis_io_ready(const wr_redis_io_t *io)
{
    return io && !io->freed && io->st == ST_READY;
}

size_t wr_redis_io_pending(const wr_redis_io_t *io)
{
    return io ? io->npending : 0;
}

const char *wr_redis_io_endpoint(const wr_redis_io_t *io)
{
    return io ? io->endpoint : "";
}

static void destroy(wr_redis_io_t *io)
{
    drop_transport(io);
    if (io->reader)
        redisReaderFree(io->reader);
    wr_redis_tls_ctx_unref(io->ssl_ctx);
    explicit_bzero(io->user, sizeof io->user);
    explicit_bzero(io->password, sizeof io->password);
    free(io->host);
    free(io->unix_path);
    free(io->tls_name);
    free(io);
}

void wr_redis_io_free(wr_redis_io_t *io)
{
    if (!io || io->freed)
        return;
    io->freed = true;
    wr_redis_io__enter(io);
    io->st = ST_CLOSED;
    io->in_hook = false;
    drop_transport(io);
    wr_redis_io__fail_all(io, WR_ECANCELED);
    wr_redis_io__leave(io);
}
