/*
 * redis_io_cmd.c - the command queue of a Redis connection (redis_io.c):
 * formatting a command, its timer, the two FIFOs `held` and `sent`, writing
 * and answering. Part of the redis_io module; the bufferevent, the reader,
 * the states and the handshake are redis_io.c, and redis_io_internal.h is
 * what the two files share.
 *
 * Commands
 *   submit() formats a command in RESP and, unless it is one of the
 *   handshake's (F_NOW), arms its timer (the command's timeout). When the
 *   connection is READY (or F_NOW) it is formatted straight into the
 *   bufferevent's output buffer (no buffer of its own, no copy); else it
 *   is formatted into c->buf (wr_redis_io__format_resp) and held until
 *   ready() writes the held ones in order. Command records come from a
 *   bounded free list (cmd_pool). A command is
 *   unlinked and its timer stopped before its callback runs, so it is
 *   answered at most once; `npending` counts the caller's commands (not
 *   the handshake's), bounded by max_pending (WR_ELIMIT).
 *
 * Timeouts
 *   A held command that times out leaves the queue (it is never sent). A
 *   sent one that times out gets WR_ETIMEOUT, is marked timed_out and stays
 *   at its place in `sent` (its reply must still be read and dropped); its
 *   timer is re-armed for hung_ms, and if that fires too the connection is
 *   hung and is closed (WR_ETIMEOUT).
 *   A late loop is not a late server. When the process did not run for a
 *   while (stopped and continued, a VM's stolen time, a machine starved of
 *   CPU) the replies that came meanwhile wait in the socket, and the
 *   timers of their commands come due in the same loop iteration as they
 *   do, or before they are read: after SIGSTOP/SIGCONT epoll_wait returns
 *   EINTR (signal(7)), so that iteration runs the timers with no I/O at
 *   all; libevent reads at most 4 KB of a socket (one TLS record) per
 *   readable event, so the rest of a backlog is read in later iterations;
 *   a command with a timeout of its own (WAIT, a redirected resubmit) has
 *   a timer that runs before the read's deferred callback. So a timer of
 *   a sent command that finds bytes not parsed yet (in the input buffer,
 *   in the TLS layer, in the socket) waits one more iteration instead, as
 *   long as the connection keeps parsing bytes between two of its checks
 *   (LATE_STALE checks in a row without progress end it) and for at most
 *   LATE_BUDGET_MS from its first check: replies are in order, so what
 *   waits is the replies of the commands before it, then its own, which
 *   answers it and stops its timer. Only a reply that had not arrived by
 *   the deadline times out. (Without this, one pause of waitroomd longer
 *   than the store timeout timed out every command in flight, and five of
 *   them opened the store's circuit breaker: CI, stop 45.)
 *
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/queue.h>

#include <openssl/ssl.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "base/clock.h"
#include "base/freelist.h"
#include "store/redis/redis_io_internal.h"

/* Command records kept for reuse (one loop, one thread): a poll's store
 * call makes one. */
static wr_freelist_t cmd_pool = {NULL, 0, 1024, sizeof(struct cmd)};

void wr_redis_io__cmd_free(struct cmd *c)
{
    if (c->buf) {
        if (c->secret)
            explicit_bzero(c->buf, c->len);
        free(c->buf);
    }
    wr_freelist_give(&cmd_pool, c);
}

/* Unlinks c, stops its timer; the caller answers or drops it. */
void wr_redis_io__cmd_unlink(struct cmd *c)
{
    wr_redis_io_t *io = c->io;
    TAILQ_REMOVE(c->where == W_HELD ? &io->held : &io->sent, c, link);
    if (!c->internal)
        io->npending--;
    if (c->has_timer)
        event_del(&c->timer);
}

/* Answers c (unlinked) with err and frees it. */
void wr_redis_io__cmd_answer(struct cmd *c, wr_err_t err, const redisReply *reply)
{
    wr_redis_io_reply_cb cb = c->timed_out ? NULL : c->cb;
    void *arg = c->arg;
    wr_redis_io__cmd_free(c);
    if (cb)
        cb(err, reply, arg);
}

/* Answers every pending command with err, oldest first. A callback may
 * free io (then free's own pass takes what is left). */
void wr_redis_io__fail_all(wr_redis_io_t *io, wr_err_t err)
{
    struct cmd *c;
    while ((c = TAILQ_FIRST(&io->sent)) != NULL || (c = TAILQ_FIRST(&io->held)) != NULL) {
        wr_redis_io__cmd_unlink(c);
        wr_redis_io__cmd_answer(c, err, NULL);
    }
}

static void cmd_sent(wr_redis_io_t *io, struct cmd *c);

/* Writes c (its formatted c->buf: a held command) and moves it to `sent`. */
int wr_redis_io__cmd_write(wr_redis_io_t *io, struct cmd *c)
{
    if (bufferevent_write(io->bev, c->buf, c->len) != 0)
        return -1;
    if (c->secret)
        explicit_bzero(c->buf, c->len);
    free(c->buf);
    c->buf = NULL;
    cmd_sent(io, c);
    return 0;
}

/* Decimal digits of v (no division: a poll's lengths are short). */
static size_t ndigits(uint64_t v)
{
    size_t n = 1;
    for (uint64_t p = 10; n < 20 && v >= p; p *= 10)
        n++;
    return n;
}

/* The bytes of a command in RESP; 0 when it would overflow. */
static size_t resp_size(int argc, const size_t *lens)
{
    size_t total = 1 + ndigits((uint64_t)argc) + 2;
    for (int i = 0; i < argc; i++) {
        if (lens[i] > SIZE_MAX / 2 - total)
            return 0;
        total += 1 + ndigits(lens[i]) + 2 + lens[i] + 2;
    }
    return total;
}

/* Writes v in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
    char *e = p + ndigits(v);
    char *q = e;
    do {
        *--q = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return e;
}

/* Writes the command at p (resp_size bytes). The lengths and CRLFs are
 * stored byte by byte: a libc memcpy call per piece was most of a poll's
 * formatting (about 40 arguments, three pieces each). */
static void resp_put(char *p, int argc, const char *const *argv, const size_t *lens)
{
    *p++ = '*';
    p = put_u64(p, (uint64_t)argc);
    *p++ = '\r';
    *p++ = '\n';
    for (int i = 0; i < argc; i++) {
        *p++ = '$';
        p = put_u64(p, lens[i]);
        *p++ = '\r';
        *p++ = '\n';
        memcpy(p, argv[i], lens[i]);
        p += lens[i];
        *p++ = '\r';
        *p++ = '\n';
    }
}

/* (redis_io_internal.h) Written here, not by hiredis's
 * redisFormat*CommandArgv, for speed: those print every length with
 * sprintf or sdscatfmt, about 250-350 instructions an argument, and a
 * poll's script call has about 40 (a quarter of a poll on Redis). hiredis
 * still reads every reply. */
char *wr_redis_io__format_resp(int argc, const char *const *argv, const size_t *lens, size_t *len)
{
    size_t total = resp_size(argc, lens);
    char *buf = total ? malloc(total) : NULL;
    if (!buf)
        return NULL;
    resp_put(buf, argc, argv, lens);
    *len = total;
    return buf;
}

/* Makes a command for io, not formatted yet; NULL when out of memory. */
static struct cmd *cmd_new(wr_redis_io_t *io, int argc, const char *const *argv, const size_t *lens,
                           wr_redis_io_reply_cb cb, void *arg)
{
    struct cmd *c = wr_freelist_take(&cmd_pool); /* zeroed */
    if (!c)
        return NULL;
    c->subscribe = argc > 0 && ((lens[0] == 9 && strncasecmp(argv[0], "SUBSCRIBE", 9) == 0) ||
                                (lens[0] == 10 && strncasecmp(argv[0], "PSUBSCRIBE", 10) == 0));
    c->io = io;
    c->cb = cb;
    c->arg = arg;
    return c;
}

/* Moves c, written, to `sent`; the write event made active at once (see
 * "Writes" at the top). */
static void cmd_sent(wr_redis_io_t *io, struct cmd *c)
{
    if (bufferevent_get_enabled(io->bev) & EV_WRITE)
        event_active(&io->bev->ev_write, EV_WRITE, 1);
    if (c->subscribe)
        io->subscribed = true;
    c->where = W_SENT;
    TAILQ_INSERT_TAIL(&io->sent, c, link);
}

/* Formats c's command straight into the connection's output buffer (no
 * copy of its own: what bufferevent_write would have copied it into) and
 * moves c to `sent`. -1 when out of memory. */
static int cmd_write_args(wr_redis_io_t *io, struct cmd *c, int argc, const char *const *argv,
                          const size_t *lens)
{
    size_t total = resp_size(argc, lens);
    if (!total || total > (size_t)EV_SSIZE_MAX)
        return -1;
    struct evbuffer *out = bufferevent_get_output(io->bev);
    struct evbuffer_iovec v;
    if (evbuffer_reserve_space(out, (ev_ssize_t)total, &v, 1) != 1 || v.iov_len < total)
        return -1;
    resp_put(v.iov_base, argc, argv, lens);
    v.iov_len = total;
    if (evbuffer_commit_space(out, &v, 1) != 0)
        return -1;
    cmd_sent(io, c);
    return 0;
}

static void cmd_timer_cb(evutil_socket_t fd, short what, void *arg);

/* Submits a command: with F_NOW written at once, else held or written
 * depending on the state, with its timer. */
wr_err_t wr_redis_io__submit(wr_redis_io_t *io, int flags, int argc, const char *const *argv,
                             const size_t *argvlen, uint32_t timeout_ms, wr_redis_io_reply_cb cb,
                             void *arg)
{
    bool now = flags & F_NOW;
    if (io->freed || io->st == ST_CLOSED)
        return WR_EUNAVAILABLE;
    if (argc < 1 || !argv)
        return WR_EINVAL;
    if (!(flags & F_INTERNAL) && io->npending >= io->max_pending)
        return WR_ELIMIT;
    size_t lens_here[64];
    size_t *heap = NULL;
    const size_t *lens = argvlen;
    if (!lens) {
        size_t *l = (size_t)argc <= sizeof lens_here / sizeof lens_here[0] ? lens_here : NULL;
        if (!l && !(l = heap = malloc((size_t)argc * sizeof *heap)))
            return WR_ENOMEM;
        for (int i = 0; i < argc; i++)
            l[i] = strlen(argv[i]);
        lens = l;
    }
    struct cmd *c = cmd_new(io, argc, argv, lens, cb, arg);
    if (!c) {
        free(heap);
        return WR_ENOMEM;
    }
    c->secret = flags & F_SECRET;
    c->internal = flags & F_INTERNAL;
    int rc = 0;
    if (now || io->st == ST_READY) {
        rc = cmd_write_args(io, c, argc, argv, lens);
    } else if ((c->buf = wr_redis_io__format_resp(argc, argv, lens, &c->len)) != NULL) {
        c->where = W_HELD; /* written, from c->buf, when the connection is ready */
        TAILQ_INSERT_TAIL(&io->held, c, link);
    } else {
        rc = -1;
    }
    free(heap);
    if (rc != 0) {
        wr_redis_io__cmd_free(c);
        return WR_ENOMEM;
    }
    if (!c->internal)
        io->npending++;
    if (!now) {
        evtimer_assign(&c->timer, io->base, cmd_timer_cb, c);
        c->has_timer = true;
        if (timeout_ms == 0 || timeout_ms == io->command_timeout_ms) {
            evtimer_add(&c->timer, io->common_tv);
        } else {
            struct timeval tv = wr_clock_tv_ms(timeout_ms);
            evtimer_add(&c->timer, &tv);
        }
    }
    return WR_OK;
}

/* A late timer's re-checks (see "Timeouts"): given up after LATE_STALE in
 * a row with no byte parsed between them, or LATE_BUDGET_MS after the
 * first (a whole backlog is parsed in far less: it only waits for loop
 * iterations, not for the server). */
#define LATE_STALE     4
#define LATE_BUDGET_MS 1000

/* True when io has bytes its reader has not seen: read into the input
 * buffer (its deferred callback not run yet), decrypted inside the TLS
 * layer, or waiting in the socket. */
static bool bytes_unparsed(wr_redis_io_t *io)
{
    if (!io->bev || (io->st != ST_HANDSHAKE && io->st != ST_READY))
        return false;
    if (evbuffer_get_length(bufferevent_get_input(io->bev)) > 0)
        return true;
    if (io->ssl && SSL_pending(io->ssl) > 0)
        return true;
    evutil_socket_t fd = bufferevent_getfd(io->bev);
    int n = 0;
    return fd >= 0 && ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* True when c's timer should wait one more iteration: bytes not parsed
 * yet, and the connection still parsing within the budget. */
static bool late_recheck(wr_redis_io_t *io, struct cmd *c)
{
    if (!bytes_unparsed(io))
        return false;
    int64_t now = wr_clock_mono_ms();
    if (!c->late_since_ms) { /* the first check of this deadline */
        c->late_since_ms = now ? now : 1;
        c->late_fed = io->fed_total;
        c->late_stale = 0;
        return true;
    }
    if (now - c->late_since_ms > LATE_BUDGET_MS)
        return false;
    c->late_stale = io->fed_total == c->late_fed ? (uint8_t)(c->late_stale + 1) : 0;
    c->late_fed = io->fed_total;
    return c->late_stale < LATE_STALE;
}

static void cmd_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    struct cmd *c = arg;
    wr_redis_io_t *io = c->io;
    wr_redis_io__enter(io);
    if (c->where == W_SENT && late_recheck(io, c)) {
        /* the loop is late, not the server: parse what came first */
        static const struct timeval now = {0, 0};
        evtimer_add(&c->timer, &now);
    } else if (c->where == W_HELD) {
        wr_redis_io__cmd_unlink(c);
        wr_redis_io__cmd_answer(c, WR_ETIMEOUT, NULL);
    } else if (!c->timed_out) {
        wr_redis_io_reply_cb cb = c->cb;
        void *cbarg = c->arg;
        c->timed_out = true;
        c->late_since_ms = 0; /* the hung check gets its own re-checks */
        if (io->hung_ms != WR_REDIS_IO_NO_HUNG) {
            struct timeval tv = wr_clock_tv_ms(io->hung_ms);
            evtimer_add(&c->timer, &tv);
        }
        if (cb)
            cb(WR_ETIMEOUT, NULL, cbarg); /* c may be gone after this */
    } else {
        wr_redis_io__close_with(io, WR_ETIMEOUT,
                                "a command unanswered %u ms after its timeout: hung", io->hung_ms);
    }
    wr_redis_io__leave(io);
}
