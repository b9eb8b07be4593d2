/*
 * redis_conn.h - one Redis connection on a libevent loop, below the Redis
 * store: connect and reconnect, connect and command timeouts, Lua scripts
 * run by number (EVALSHA, one EVAL on NOSCRIPT), the WAIT of the durability
 * mode. The URL grammar is redis_url.h.
 *
 * Its user (store_redis) builds a command - script N of the table given at
 * open, or a plain command - with its arguments, submits it with a callback,
 * and gets that callback exactly once with Redis's reply or an error.
 * Everything about the connection (state, AUTH, TLS, Sentinel discovery and
 * failover, the safe-settings check, timeouts, the disconnect path) stays
 * behind this interface; the I/O is redis_io.h.
 *
 * Async contract (libuv's): a submit that returns an error never calls the
 * callback; one that returns WR_OK calls it exactly once, from the event
 * loop, never from inside the call - except wr_redis_conn_close(), which
 * calls every pending callback synchronously with WR_ECANCELED.
 */
#ifndef WR_REDIS_CONN_H
#define WR_REDIS_CONN_H

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/metrics.h"
#include "store/redis/redis_url.h"

/* Arguments of a command of wr_redis_conn_cmd_new, EVALSHA and the SHA included. */
#define WR_REDIS_CONN_MAX_ARGS     32
#define WR_REDIS_CONN_MAX_ARGS_CAP 1024 /* the most cmd_new_args takes */
#define WR_REDIS_CONN_NO_SCRIPT    (-1) /* a plain command: argv[0] is its name */

/* One Lua script: the embedded file `file` (wr_embed_find), after the
 * embedded files of `prefix` (in order, each followed by a newline; NULL
 * entries skipped): the script's rows as comments (scripts.def),
 * lib_log.lua, lib.lua, ... */
#define WR_REDIS_CONN_SCRIPT_PREFIX 6
typedef struct {
    const char *prefix[WR_REDIS_CONN_SCRIPT_PREFIX];
    const char *file;
} wr_redis_conn_script_t;

/* The text of script def as it is sent (its prefix files, then file), malloc'd and
 * NUL-terminated, its length in *len; NULL when a file is not embedded or
 * out of memory. */
char *wr_redis_conn_script_text(const wr_redis_conn_script_t *def, size_t *len);

/*
 * The end of the first attempt to reach Redis, called once from the loop:
 *   WR_OK        connected (handshake and checks passed);
 *   WR_EINVAL    Redis is set up so that the store must not run on it
 *                (keys can be evicted: maxmemory-policy allkeys-*, without
 *                allow_eviction; SELECT refused): msg says why and what to
 *                change; the caller refuses to start;
 *   other        not reached this time (WR_EUNAVAILABLE, WR_ETIMEOUT,
 *                WR_EAUTH, ...): the connection keeps retrying; msg (one
 *                line, no password) says why.
 * msg is borrowed until the callback returns; NULL with WR_OK.
 */
typedef void (*wr_redis_conn_started_cb)(wr_err_t err, const char *msg, void *arg);

typedef struct wr_redis_conn wr_redis_conn_t;
typedef struct wr_redis_conn_cmd wr_redis_conn_cmd_t;

/*
 * Redis Cluster (redis_router.h): an error reply MOVED, ASK, TRYAGAIN or
 * CLUSTERDOWN to cmd, before its callback. Returns true when it took cmd
 * (it then resubmits it with wr_redis_conn_resubmit() or answers it with
 * wr_redis_conn_cmd_fail(): the callback is still called exactly once);
 * false: the reply is answered as any error reply. reply is borrowed.
 */
typedef bool (*wr_redis_conn_redirect_fn)(void *arg, wr_redis_conn_cmd_t *cmd,
                                          const redisReply *reply);

typedef struct {
    const char *url; /* redis_url.h: redis://, rediss://, redis-sentinel://, unix:// */
    const wr_redis_url_t *endpoint; /* not NULL: used (copied) instead of url: a cluster
                                       node (redis_router.c); kind TCP or TLS */
    const char *log_name;           /* prefix of the log lines ("store_redis"); a static string;
                                       NULL = "redis_conn" */
    const wr_redis_conn_script_t *scripts; /* script N of a command; the texts are loaded
                                              and their SHA1 computed at open */
    size_t nscripts;
    uint32_t command_timeout_ms; /* 0 = 250 */
    uint32_t connect_timeout_ms; /* connect + handshake; 0 = 1000 */
    uint32_t reconnect_max_ms;   /* reconnect backoff cap; 0 = 2000, at least 100 */
    uint32_t wait_replicas;      /* durability mode: WAIT wait_replicas wait_timeout_ms after
                                    a reply its command's wait_fn accepts; 0 = off */
    uint32_t wait_timeout_ms;    /* 0 = 100 */
    wr_metrics_t *metrics;       /* borrowed, may be NULL: waitroom_redis_wait_total */
    /* rediss:// only (ignored otherwise): PEM files, read once at open. */
    const char *tls_ca_file;            /* CAs to trust; NULL = the system's */
    const char *tls_cert_file;          /* client certificate; NULL = none */
    const char *tls_key_file;           /* its private key; with tls_cert_file */
    const char *env_password;           /* WAITROOM_REDIS_PASSWORD's value: replaces the URL's
                                           password; NULL or "" = the URL's */
    bool allow_eviction;                /* start even when maxmemory-policy is allkeys-* */
    wr_redis_conn_redirect_fn redirect; /* may be NULL: cluster redirections */
    void *redirect_arg;
    wr_redis_conn_started_cb on_started; /* may be NULL */
    void *started_arg;
} wr_redis_conn_opts_t;

/*
 * The answer of one command, called exactly once:
 *   WR_OK            reply is Redis's answer, borrowed until the callback
 *                    returns; it may be an error reply (REDIS_REPLY_ERROR).
 *                    A NOSCRIPT was answered by one EVAL already; with WAIT,
 *                    it is the command's own reply, after WAIT returned.
 *   WR_ETIMEOUT      no answer within command_timeout_ms (plus
 *                    wait_timeout_ms once WAIT was sent); reply NULL
 *   WR_EUNAVAILABLE  the connection dropped first, or the EVAL after
 *                    NOSCRIPT could not be sent, or Redis answered
 *                    READONLY, LOADING or MASTERDOWN (the connection is
 *                    then dropped and re-established); reply NULL
 *   WR_EREPLICA      a strict command (wr_redis_conn_cmd_wait_strict) whose
 *                    WAIT no replica acknowledged; reply NULL
 *   WR_ECANCELED     wr_redis_conn_close(); reply NULL
 * The callback may submit commands and may close the connection.
 */
typedef void (*wr_redis_conn_reply_cb)(wr_err_t err, const redisReply *reply, void *arg);

/* Durability mode: true when reply (never NULL) reports a write that a
 * failover must not undo, so WAIT is sent before the reply is answered. */
typedef bool (*wr_redis_conn_wait_fn)(const redisReply *reply);

/*
 * Opens a connection on base (borrowed; must outlive it) and starts to
 * connect in the background: for redis-sentinel:// it first asks the
 * sentinels for the primary. Every connection runs AUTH (when the URL or
 * env_password has credentials) and SELECT, then checks ROLE is master
 * and the settings (CONFIG GET maxmemory-policy, appendonly, save; warns
 * when CONFIG is refused or nothing is persisted) and loads the scripts.
 * It reconnects by itself after a failed connect, a failed handshake
 * (AUTH refused included), a connect timeout, a disconnect, a hung command
 * (unanswered twice the command timeout after its timeout), a READONLY,
 * LOADING or MASTERDOWN reply, or a sentinel's +switch-master: after 100
 * ms doubling up to reconnect_max_ms, +/-20% jitter (at once for a
 * +switch-master). Returns WR_OK and *out; WR_EINVAL for a bad URL,
 * password or TLS file (logged), or a script not embedded; WR_ENOMEM.
 */
wr_err_t wr_redis_conn_open(struct event_base *base, const wr_redis_conn_opts_t *opts,
                            wr_redis_conn_t **out);

/* True while the connection is established (handshake and checks done). */
bool wr_redis_conn_connected(const wr_redis_conn_t *c);

/* Commands sent and not answered yet on c's sockets (handshake and WAIT
 * included): 0 means a close now calls no callback. NULL: 0. */
size_t wr_redis_conn_pending(const wr_redis_conn_t *c);

/*
 * Calls every pending callback synchronously with WR_ECANCELED, in the order
 * the commands were submitted, then frees c. From inside one of those
 * callbacks, wr_redis_conn_connected() is false, submits return
 * WR_EUNAVAILABLE and a second close is a no-op. May be called from inside
 * a callback of c. NULL is a no-op.
 */
void wr_redis_conn_close(wr_redis_conn_t *c);

/*
 * A new command: script number `script` of the open table (EVALSHA SHA
 * is put in front of its arguments when sent), or WR_REDIS_CONN_NO_SCRIPT.
 * Its arguments take at most cap bytes, plus one per argument. NULL when
 * out of memory. The caller frees it with wr_redis_conn_cmd_free() unless
 * it is submitted.
 */
wr_redis_conn_cmd_t *wr_redis_conn_cmd_new(int script, size_t cap);

/* The same with room for max_args arguments (3 .. WR_REDIS_CONN_MAX_ARGS_CAP,
 * EVALSHA and the SHA included) instead of WR_REDIS_CONN_MAX_ARGS; NULL when
 * out of memory or max_args is out of range. */
wr_redis_conn_cmd_t *wr_redis_conn_cmd_new_args(int script, int max_args, size_t cap);

/* Appends one argument (n bytes, copied); for a script: numkeys, the keys,
 * then ARGV. False when the command has no room left (arguments or bytes). */
bool wr_redis_conn_cmd_arg(wr_redis_conn_cmd_t *cmd, const void *p, size_t n);
bool wr_redis_conn_cmd_str(wr_redis_conn_cmd_t *cmd, const char *s);
/* v in decimal (no printf: a poll's batch writes a few). */
bool wr_redis_conn_cmd_u64(wr_redis_conn_cmd_t *cmd, uint64_t v);
/* a, b and c (NULL: none) as one argument, at most 255 bytes: a key
 * such as "wr:{" queue "}:line" (no printf). */
bool wr_redis_conn_cmd_cat(wr_redis_conn_cmd_t *cmd, const char *a, const char *b, const char *c);
/* n arguments laid end to end at bytes, each of lens[i] bytes followed by
 * a NUL (one copy for them all: a queue's keys, built once). False when
 * they do not all fit (nothing is appended). */
bool wr_redis_conn_cmd_block(wr_redis_conn_cmd_t *cmd, const char *bytes, const size_t *lens,
                             int n);
/* printf-formatted, at most 127 bytes. */
bool wr_redis_conn_cmd_fmt(wr_redis_conn_cmd_t *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Durability mode: a WAIT that no replica acknowledged answers this
 * command WR_EREPLICA instead of its reply (WAIT answered 0 or an error:
 * the primary is healthy, a replica is late); a WAIT with no answer (the
 * connection dropped, or it timed out) answers WR_EUNAVAILABLE. Either way
 * the write is only on the primary, and a failover (a replica promoted)
 * would undo it; for an idempotent write the caller would rather have
 * retried (join). One replica of several acknowledging is enough. */
void wr_redis_conn_cmd_wait_strict(wr_redis_conn_cmd_t *cmd);

/*
 * Redis Cluster: the first key of cmd (a script's KEYS[1], a plain
 * command's first argument), borrowed while cmd lives; NULL (and *len 0)
 * when it has none (PING).
 */
const char *wr_redis_conn_cmd_key(const wr_redis_conn_cmd_t *cmd, size_t *len);

/* Monotonic ms of cmd's first submission (0 before it); the router's
 * TRYAGAIN retries end at this plus the command timeout. */
int64_t wr_redis_conn_cmd_born_ms(const wr_redis_conn_cmd_t *cmd);

/* Redirections followed so far (wr_redis_conn_resubmit counts them). */
int wr_redis_conn_cmd_redirects(const wr_redis_conn_cmd_t *cmd);

/*
 * A command taken by a redirect_fn, sent again on c (the owner of its
 * slot, or the ASK target with asking: ASKING is sent right before it on
 * the same connection), with the callback, wait_fn and strictness it was
 * submitted with; counts one redirection. It keeps the deadline of its
 * first submission (born_ms + c's command timeout): WR_ETIMEOUT when that
 * has passed. WR_OK: its callback comes later, once. Any error: cmd is
 * untouched and still the caller's (answer it with wr_redis_conn_cmd_fail).
 */
wr_err_t wr_redis_conn_resubmit(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd, bool asking);

/* Answers a command taken by a redirect_fn with err (its callback, reply
 * NULL) and frees it. */
void wr_redis_conn_cmd_fail(wr_redis_conn_cmd_t *cmd, wr_err_t err);

/* Frees a command that was not submitted. NULL is a no-op. Up to 16
 * commands of at most 16 KiB are kept for reuse by the next
 * wr_redis_conn_cmd_new* (no malloc per poll); not thread-safe. */
void wr_redis_conn_cmd_free(wr_redis_conn_cmd_t *cmd);

/* Commands kept for reuse now (for tests). */
size_t wr_redis_conn_cmd_kept(void);

/* Frees the kept commands. */
void wr_redis_conn_cmd_clear_kept(void);

/*
 * Sends cmd (takes ownership in every case) and arms its command timeout.
 * wait_fn (may be NULL) decides, in durability mode, whether its reply is
 * held until a WAIT returns. Returns WR_OK and calls cb exactly once later;
 * or WR_EUNAVAILABLE (not connected), WR_ELIMIT
 * (65536 commands in flight), WR_EINVAL (no such script), WR_ENOMEM, and
 * never calls cb.
 */
wr_err_t wr_redis_conn_submit(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd,
                              wr_redis_conn_wait_fn wait_fn, wr_redis_conn_reply_cb cb, void *arg);

/*
 * Sends a fire-and-forget command of argc NUL-terminated strings on the same
 * connection, in order with the submitted ones (no callback, no timeout); an
 * error reply is logged as "<log_name>: <what> command failed: ...", what a
 * static string. WR_OK or WR_EUNAVAILABLE.
 */
wr_err_t wr_redis_conn_send_oneway(wr_redis_conn_t *c, const char *what, int argc,
                                   const char *const *argv);

#endif
