/*
 * redis_io_internal.h - what the files of the redis_io module share, and
 * nothing else includes: the connection (struct wr_redis_io), its states,
 * the commands (struct cmd) and the few functions each file calls in the
 * other.
 *
 * The redis_io module is one connection in two files:
 *   redis_io.c      the bufferevent, connecting, TLS, the reader and the
 *                   replies, the handshake, closing, the public calls
 *   redis_io_cmd.c  the command queue: formatting, timers, held/sent,
 *                   writing, answering
 * Names shared between these files are wr_redis_io__*; file statics are
 * unprefixed (STYLE.md). Everything here runs on the connection's loop.
 */
#ifndef WR_REDIS_IO_INTERNAL_H
#define WR_REDIS_IO_INTERNAL_H

#include <netdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <event2/bufferevent.h>
#include <event2/event_struct.h>
#include <hiredis/read.h>

#include "store/redis/redis_io.h"
#include "store/redis/redis_tls.h"

#define SECRET_MAX   511 /* bytes of a user name or password */
#define ENDPOINT_MAX 300 /* "tls [IPv6%zone]:port" or "unix:" + sun_path */
#define CAUSE_MAX    256 /* bytes of the cause part of a close message */

enum state { ST_CONNECTING, ST_HANDSHAKE, ST_READY, ST_CLOSED };
enum where { W_HELD, W_SENT };

struct cmd {
    TAILQ_ENTRY(cmd) link;
    wr_redis_io_t *io;
    wr_redis_io_reply_cb cb;
    void *arg;
    char *buf; /* the formatted command until it is written */
    size_t len;
    struct event timer;
    bool has_timer;
    bool timed_out; /* the caller got WR_ETIMEOUT; the reply is dropped */
    bool secret;    /* buf holds the password: wipe it */
    bool internal;  /* AUTH/SELECT/PING of the handshake: not in npending */
    bool subscribe; /* SUBSCRIBE / PSUBSCRIBE */
    /* a late timer's re-checks (redis_io_cmd.c, "Timeouts"): the first
     * one's time (0 = none yet), the connection's fed_total at the last,
     * and how many in a row found no progress */
    int64_t late_since_ms;
    uint64_t late_fed;
    uint8_t late_stale;
    enum where where;
};
TAILQ_HEAD(cmdq, cmd);

struct wr_redis_io {
    struct event_base *base;
    /* options (strings copied) */
    char *host;
    int port;
    char *unix_path;
    char *tls_name;
    SSL_CTX *ssl_ctx; /* a reference; NULL = no TLS */
    char user[SECRET_MAX + 1];
    char password[SECRET_MAX + 1];
    int db;
    uint32_t connect_timeout_ms, command_timeout_ms, hung_ms;
    size_t max_reply, max_pending;
    wr_redis_io_handshake_cb on_handshake;
    wr_redis_io_ready_cb on_ready;
    wr_redis_io_close_cb on_close;
    wr_redis_io_push_cb on_push;
    void *arg;
    char endpoint[ENDPOINT_MAX];
    /* connection */
    enum state st;
    struct bufferevent *bev;
    SSL *ssl;                 /* inside bev (borrowed) */
    struct addrinfo *ai;      /* TCP: every address of host */
    struct addrinfo *ai_next; /* the next one to try */
    char last_cause[CAUSE_MAX];
    redisReader *reader;
    size_t cur_reply;
    uint64_t fed_total; /* bytes fed to the reader since connect (late timers' progress) */
    struct cmdq sent, held;
    size_t npending;
    struct event connect_timer;
    struct event fail_ev;
    wr_err_t fail_err;
    char fail_msg[CAUSE_MAX];
    const struct timeval *common_tv; /* the default command timeout, common */
    int hs_left;                     /* AUTH/SELECT/PING replies still due */
    bool in_hook;
    bool subscribed;
    int depth;
    bool freed;
};

/* The flags of wr_redis_io__submit. */
enum {
    F_NOW = 1,      /* the handshake's: written at once, no timer of its own */
    F_INTERNAL = 2, /* AUTH/SELECT/PING: not counted as pending */
    F_SECRET = 4,   /* holds the password */
};

/* redis_io.c */

/* Enters / leaves a loop entry or a call that can call back (io->depth);
 * the outermost leave frees io once wr_redis_io_free marked it freed. */
void wr_redis_io__enter(wr_redis_io_t *io);
void wr_redis_io__leave(wr_redis_io_t *io);

/* Ends the connection: pending commands get WR_EUNAVAILABLE, then
 * on_close(err, "ENDPOINT: cause"). Only from inside an entry (depth > 0). */
void wr_redis_io__close_with(wr_redis_io_t *io, wr_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* redis_io_cmd.c */

/* Frees c (its formatted buffer wiped when it holds a secret). */
void wr_redis_io__cmd_free(struct cmd *c);

/* Unlinks c from held or sent, stops its timer; the caller answers or
 * drops it. */
void wr_redis_io__cmd_unlink(struct cmd *c);

/* Answers c (unlinked) with err and reply (borrowed), unless it timed out,
 * and frees it. */
void wr_redis_io__cmd_answer(struct cmd *c, wr_err_t err, const redisReply *reply);

/* Answers every pending command with err, oldest first. A callback may
 * free io (then free's own pass takes what is left). */
void wr_redis_io__fail_all(wr_redis_io_t *io, wr_err_t err);

/* The RESP form of a command (an array of bulk strings: "*N\r\n" then
 * "$LEN\r\n" DATA "\r\n" for each of the argc arguments, lens[i] bytes at
 * argv[i]) in one malloc'd buffer of *len bytes, which the caller frees;
 * NULL when out of memory. Byte for byte what hiredis's
 * redisFormatCommandArgv writes (tests/store/test_redis_io.c). */
char *wr_redis_io__format_resp(int argc, const char *const *argv, const size_t *lens, size_t *len);

/* Writes c to the bufferevent and moves it to `sent`; -1 when the write
 * could not be queued (c unchanged). */
int wr_redis_io__cmd_write(wr_redis_io_t *io, struct cmd *c);

/* Submits a command (flags: F_*): with F_NOW written at once, else held or
 * written depending on the state, with its timer (timeout_ms, 0 = the
 * default). WR_EUNAVAILABLE (closed), WR_EINVAL, WR_ELIMIT (max_pending),
 * WR_ENOMEM. cb is called once, later, unless it returns an error. */
wr_err_t wr_redis_io__submit(wr_redis_io_t *io, int flags, int argc, const char *const *argv,
                             const size_t *argvlen, uint32_t timeout_ms, wr_redis_io_reply_cb cb,
                             void *arg);

#endif
