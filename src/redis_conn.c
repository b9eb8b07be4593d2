/*
 * redis_conn.c - one Redis connection on a libevent loop (redis_conn.h):
 * the layer below store_redis, modelled on h2o's lib/common/redis.c.
 *
 * Connection
 *   One hiredis async context (redisAsyncContext) attached to the caller's
 *   libevent base. States DISCONNECTED -> CONNECTING -> CONNECTED, and
 *   CLOSED once wr_redis_conn_close() began. CONNECTING covers the socket
 *   connect and a handshake (SELECT db, or PING) bounded by
 *   connect_timeout_ms; commands submitted outside CONNECTED return
 *   WR_EUNAVAILABLE at once. A failed connect, a failed handshake or a
 *   disconnect schedules a reconnect after a backoff of 100 ms doubling up
 *   to reconnect_max_ms, +/-20% jitter; a completed handshake resets it.
 *   ac->data points to the connection while it owns the context; it is set
 *   to NULL before the connection lets go of it (drop, close), so late
 *   hiredis connect/disconnect callbacks are ignored.
 *
 * Commands
 *   Each command in flight is a `struct wr_redis_conn_cmd`: its callback,
 *   its arguments (kept for the EVAL retry) in one allocation, and a
 *   libevent timer. Live commands are kept in c->head..tail in send order
 *   (FIFO, as Redis answers them).
 *     The timer is a struct event inside the command, on the base's common
 *     timeout for command_timeout_ms (see submit).
 *   - Scripts: sent with EVALSHA (SHA1 computed at open with OpenSSL); a
 *     NOSCRIPT error is answered by exactly one EVAL of the same command,
 *     which also reloads the script cache of Redis.
 *   - Reply (hiredis callback, privdata = cmd): unlink, call the user
 *     callback (always the last thing done with the connection), free.
 *   - Timeout (hiredis 0.14 has none): the timer fires after
 *     command_timeout_ms: the user callback runs once with WR_ETIMEOUT, the
 *     command is marked `abandoned` and stays linked until hiredis answers
 *     it. The timer is re-armed for 2x the timeout; if it fires again the
 *     connection is hung (oldest command overdue by more than 2x the
 *     timeout): the connection is dropped and re-established.
 *   - Disconnect: hiredis calls every pending callback with a NULL reply;
 *     live commands answer WR_EUNAVAILABLE (abandoned ones are just freed).
 *   - close(): every linked command is unlinked and orphaned (cmd->c = NULL)
 *     after its callback got WR_ECANCELED; hiredis frees orphans when it
 *     calls them back (at once inside redisAsyncFree, or later if close was
 *     called from inside a hiredis callback, where hiredis defers the free).
 *   - Durability mode (wait_replicas > 0): a reply the command's wait_fn
 *     accepts is deep-copied into the command (`held`), WAIT N T is sent
 *     with the same command as privdata, and the command stays linked; the
 *     WAIT answer (or NULL on disconnect) then answers the held reply. A
 *     WAIT shortfall does not change the answer (the write stands on the
 *     primary); it is counted and logged.
 *   Invariant: a user callback is called at most once (the `abandoned`
 *   flag), and never from inside a submit.
 *   Reentrancy: a user callback may submit commands and may call close();
 *   after calling a user callback this file touches neither the connection
 *   nor the hiredis context (only the command, which it owns).
 *
 * Flush: hiredis queues a command in its output buffer and asks libevent
 *   to wait for the socket to become writable, so commands would leave only
 *   after the next epoll_wait. The first command of a loop iteration instead
 *   makes flush_ev active (see on_flush).
 *
 * Ownership: the connection owns its scripts, timers, pending commands and
 *   the hiredis context; a reply handed to a callback is borrowed until the
 *   callback returns.
 */
#include "redis_conn.h"

#include <event2/event_struct.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <openssl/sha.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "embed.h"
#include "log.h"
#include "redis_url.h"

#define BACKOFF_MIN_MS 100
#define PENDING_MAX    65536 /* commands in flight on the connection */

typedef enum {
    ST_DISCONNECTED,
    ST_CONNECTING,
    ST_CONNECTED,
    ST_CLOSED,
} conn_state_t;

typedef struct {
    char *text;
    size_t len;
    char sha[41];
} script_t;

struct wr_redis_conn_cmd {
    struct wr_redis_conn_cmd *prev, *next;
    wr_redis_conn_t *c; /* set when sent; NULL once orphaned by close() */
    int script;         /* index into c->scripts, or WR_REDIS_CONN_NO_SCRIPT */
    bool abandoned;     /* user callback already called */
    bool retried;       /* the one EVAL after NOSCRIPT was sent */
    bool waiting;       /* WAIT sent; `held` is the command's answer */
    redisReply *held;   /* deep copy of the reply while WAIT runs; owned */
    wr_redis_conn_wait_fn wait_fn;
    wr_redis_conn_reply_cb cb;
    void *arg;
    struct event *timer; /* &timer_ev while armed or pending, else NULL */
    struct event timer_ev;
    int argc;
    const char *argv[WR_REDIS_CONN_MAX_ARGS];
    size_t argvlen[WR_REDIS_CONN_MAX_ARGS];
    size_t buf_used, buf_cap;
    char buf[]; /* the argument bytes argv points into */
};

struct wr_redis_conn {
    struct event_base *base;
    const char *name; /* log prefix */
    wr_redis_url_t ep;
    uint32_t cmd_timeout_ms, connect_timeout_ms, reconnect_max_ms;
    uint32_t wait_replicas, wait_timeout_ms; /* durability mode (WAIT); 0 = off */
    wr_metrics_t *metrics;
    int64_t wait_log_ms; /* last shortfall log (monotonic ms) */
    conn_state_t state;
    redisAsyncContext *ac;
    struct event *conn_timer;             /* connect + handshake deadline */
    struct event *retry_timer;            /* reconnect backoff */
    struct event *flush_ev;               /* writes queued commands in this loop iteration */
    const struct timeval *cmd_timeout_tv; /* common timeout of cmd_timeout_ms (base's) */
    uint32_t backoff_ms;
    uint64_t rng;
    /* commands in flight, oldest first */
    wr_redis_conn_cmd_t *head, *tail;
    size_t npending;
    script_t *scripts;
    size_t nscripts;
};

/* ---------------------------------------------------------------- utils */

static uint64_t rng_next(wr_redis_conn_t *c)
{
    uint64_t x = c->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c->rng = x;
    return x;
}

static struct timeval ms_tv(uint64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
    return tv;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Frees a reply built by reply_copy (not by hiredis). */
static void reply_free(redisReply *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->elements && r->element; i++)
        reply_free(r->element[i]);
    free(r->element);
    free(r->str);
    free(r);
}

/* Deep copy of a hiredis reply (type, integer, string, elements), or NULL
 * on allocation failure or nesting deeper than 4 (our scripts answer flat
 * arrays). */
static redisReply *reply_copy(const redisReply *src, int depth)
{
    if (!src || depth > 4)
        return NULL;
    redisReply *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->type = src->type;
    r->integer = src->integer;
    if (src->str) {
        r->str = malloc(src->len + 1);
        if (!r->str)
            goto fail;
        memcpy(r->str, src->str, src->len);
        r->str[src->len] = '\0';
        r->len = src->len;
    }
    if (src->type == REDIS_REPLY_ARRAY && src->elements > 0) {
        r->element = calloc(src->elements, sizeof *r->element);
        if (!r->element)
            goto fail;
        r->elements = src->elements;
        for (size_t i = 0; i < src->elements; i++) {
            if (src->element[i] && !(r->element[i] = reply_copy(src->element[i], depth + 1)))
                goto fail;
        }
    }
    return r;
fail:
    reply_free(r);
    return NULL;
}

/* ------------------------------------------------------------- commands */

wr_redis_conn_cmd_t *wr_redis_conn_cmd_new(int script, size_t cap)
{
    wr_redis_conn_cmd_t *cmd = calloc(1, sizeof *cmd + cap);
    if (!cmd)
        return NULL;
    cmd->buf_cap = cap;
    cmd->script = script;
    if (script != WR_REDIS_CONN_NO_SCRIPT)
        cmd->argc = 2; /* EVALSHA sha | EVAL text: filled at send time */
    return cmd;
}

void wr_redis_conn_cmd_free(wr_redis_conn_cmd_t *cmd)
{
    if (!cmd)
        return;
    if (cmd->timer)
        event_del(cmd->timer);
    reply_free(cmd->held);
    free(cmd);
}

bool wr_redis_conn_cmd_arg(wr_redis_conn_cmd_t *cmd, const void *p, size_t n)
{
    if (cmd->argc >= WR_REDIS_CONN_MAX_ARGS || cmd->buf_cap - cmd->buf_used < n + 1)
        return false;
    char *dst = cmd->buf + cmd->buf_used;
    memcpy(dst, p, n);
    dst[n] = '\0';
    cmd->argv[cmd->argc] = dst;
    cmd->argvlen[cmd->argc] = n;
    cmd->argc++;
    cmd->buf_used += n + 1;
    return true;
}

bool wr_redis_conn_cmd_str(wr_redis_conn_cmd_t *cmd, const char *s)
{
    return wr_redis_conn_cmd_arg(cmd, s, strlen(s));
}

bool wr_redis_conn_cmd_fmt(wr_redis_conn_cmd_t *cmd, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return false;
    return wr_redis_conn_cmd_arg(cmd, tmp, (size_t)n);
}

static void link_cmd(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd)
{
    cmd->prev = c->tail;
    cmd->next = NULL;
    if (c->tail)
        c->tail->next = cmd;
    else
        c->head = cmd;
    c->tail = cmd;
    c->npending++;
}

static void unlink_cmd(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd)
{
    if (cmd->prev)
        cmd->prev->next = cmd->next;
    else
        c->head = cmd->next;
    if (cmd->next)
        cmd->next->prev = cmd->prev;
    else
        c->tail = cmd->prev;
    cmd->prev = cmd->next = NULL;
    c->npending--;
}

/* Calls cmd's callback once with err and no reply. Nothing may follow
 * that uses the connection: the callback may close it. */
static void call_err(wr_redis_conn_cmd_t *cmd, wr_err_t err)
{
    cmd->abandoned = true;
    cmd->cb(err, NULL, cmd->arg);
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata);
static void on_timeout(evutil_socket_t fd, short what, void *arg);
static void drop_connection(wr_redis_conn_t *c, const char *why);

/* Flush: the first command of a loop iteration makes flush_ev active: it
 * runs after the events already active in this iteration (the HTTP
 * requests read together), and writes all their commands in one write(2)
 * now: one batch per iteration, one epoll round trip less per batch, and
 * the watch and unwatch cancel in the epoll changelist. */
static void on_flush(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_redis_conn_t *c = arg;
    if (c->ac && c->state == ST_CONNECTED && (c->ac->c.flags & REDIS_CONNECTED))
        redisAsyncHandleWrite(c->ac); /* on a write error hiredis disconnects:
                                         on_disconnect as from its own event */
}

static void schedule_flush(wr_redis_conn_t *c)
{
    if (c->flush_ev && !event_pending(c->flush_ev, EV_READ, NULL))
        event_active(c->flush_ev, EV_READ, 0);
}

static int send_cmd(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd)
{
    if (cmd->script != WR_REDIS_CONN_NO_SCRIPT) {
        const script_t *sc = &c->scripts[cmd->script];
        if (cmd->retried) {
            cmd->argv[0] = "EVAL";
            cmd->argvlen[0] = 4;
            cmd->argv[1] = sc->text;
            cmd->argvlen[1] = sc->len;
        } else {
            cmd->argv[0] = "EVALSHA";
            cmd->argvlen[0] = 7;
            cmd->argv[1] = sc->sha;
            cmd->argvlen[1] = 40;
        }
    }
    return redisAsyncCommandArgv(c->ac, on_reply, cmd, cmd->argc, cmd->argv, cmd->argvlen);
}

wr_err_t wr_redis_conn_submit(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd,
                              wr_redis_conn_wait_fn wait_fn, wr_redis_conn_reply_cb cb, void *arg)
{
    wr_err_t err = WR_OK;
    if (!cmd || !cb ||
        (cmd->script != WR_REDIS_CONN_NO_SCRIPT &&
         (cmd->script < 0 || (size_t)cmd->script >= c->nscripts))) {
        err = WR_EINVAL;
        goto out;
    }
    if (c->state != ST_CONNECTED || !c->ac) {
        err = WR_EUNAVAILABLE;
        goto out;
    }
    if (c->npending >= PENDING_MAX) {
        err = WR_ELIMIT;
        goto out;
    }
    /* The timer lives in the command (no allocation per command); its
     * timeout is the base's common timeout for cmd_timeout_ms, a FIFO
     * queue instead of the heap, as every command has the same one. */
    if (evtimer_assign(&cmd->timer_ev, c->base, on_timeout, cmd) != 0) {
        err = WR_ENOMEM;
        goto out;
    }
    cmd->timer = &cmd->timer_ev;
    cmd->wait_fn = wait_fn;
    cmd->cb = cb;
    cmd->arg = arg;
    if (send_cmd(c, cmd) != REDIS_OK) {
        err = WR_EUNAVAILABLE;
        goto out;
    }
    schedule_flush(c);
    cmd->c = c;
    link_cmd(c, cmd);
    struct timeval tv = ms_tv(c->cmd_timeout_ms);
    evtimer_add(cmd->timer, c->cmd_timeout_tv ? c->cmd_timeout_tv : &tv);
    return WR_OK;
out:
    wr_redis_conn_cmd_free(cmd);
    return err;
}

static void on_ignore(redisAsyncContext *ac, void *reply, void *privdata)
{
    const char *what = privdata;
    wr_redis_conn_t *c = ac->data;
    redisReply *rep = reply;
    if (rep && rep->type == REDIS_REPLY_ERROR)
        wr_warn("%s: %s command failed: %s", c ? c->name : "redis_conn", what, rep->str);
}

wr_err_t wr_redis_conn_send_oneway(wr_redis_conn_t *c, const char *what, int argc,
                                   const char *const *argv)
{
    if (c->state != ST_CONNECTED || !c->ac)
        return WR_EUNAVAILABLE;
    if (redisAsyncCommandArgv(c->ac, on_ignore, (void *)what, argc, (const char **)argv, NULL) !=
        REDIS_OK)
        return WR_EUNAVAILABLE;
    return WR_OK;
}

/* ------------------------------------------------------------ WAIT */

/* Durability mode: keeps a copy of the reply in cmd and sends WAIT on the
 * same connection (cmd stays linked: FIFO order holds). The command's
 * timer is re-armed for the command timeout plus the WAIT timeout.
 * Returns false (answer now, without WAIT) if that fails. */
static bool start_wait(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd, const redisReply *rep)
{
    cmd->held = reply_copy(rep, 0);
    if (!cmd->held)
        return false;
    if (redisAsyncCommand(c->ac, on_reply, cmd, "WAIT %u %u", (unsigned)c->wait_replicas,
                          (unsigned)c->wait_timeout_ms) != REDIS_OK) {
        reply_free(cmd->held);
        cmd->held = NULL;
        return false;
    }
    cmd->waiting = true;
    if (cmd->timer) {
        struct timeval tv = ms_tv((uint64_t)c->cmd_timeout_ms + c->wait_timeout_ms);
        evtimer_add(cmd->timer, &tv);
    }
    return true;
}

/* Counts and (at most every 10 s) logs the outcome of a WAIT. */
static void wait_done(wr_redis_conn_t *c, const redisReply *rep)
{
    bool ok =
        rep && rep->type == REDIS_REPLY_INTEGER && rep->integer >= (long long)c->wait_replicas;
    if (c->metrics)
        wr_metrics_inc(c->metrics, "waitroom_redis_wait_total",
                       ok ? "result=\"ok\"" : "result=\"short\"", 1);
    if (ok)
        return;
    int64_t now = mono_ms();
    if (c->wait_log_ms == 0 || now - c->wait_log_ms >= 10000) {
        c->wait_log_ms = now;
        if (rep && rep->type == REDIS_REPLY_INTEGER)
            wr_warn("%s: WAIT: %lld of %u replicas acknowledged within %u ms; the "
                    "operation stands (applied on the primary)",
                    c->name, rep->integer, (unsigned)c->wait_replicas,
                    (unsigned)c->wait_timeout_ms);
        else
            wr_warn("%s: WAIT failed (%s); the operation stands (applied on the primary)", c->name,
                    rep && rep->str ? rep->str : "disconnected");
    }
}

/* ------------------------------------------------------------ replies */

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    wr_redis_conn_cmd_t *cmd = privdata;
    redisReply *rep = reply;
    wr_redis_conn_t *c = cmd->c;
    if (!c) { /* orphaned by close(): its callback already ran */
        wr_redis_conn_cmd_free(cmd);
        return;
    }
    if (rep && rep->type == REDIS_REPLY_ERROR && cmd->script != WR_REDIS_CONN_NO_SCRIPT &&
        !cmd->retried && strncmp(rep->str, "NOSCRIPT", 8) == 0) {
        /* Script cache lost (SCRIPT FLUSH, restart, failover): exactly one
         * EVAL of this command, which also reloads the script. */
        cmd->retried = true;
        if (c->ac == ac && c->state == ST_CONNECTED && send_cmd(c, cmd) == REDIS_OK)
            return;
        rep = NULL;
    }
    if (cmd->waiting) {
        /* The WAIT of the durability mode answered (or the connection
         * dropped): the write stands either way; answer the command's
         * reply, counting a shortfall. */
        wait_done(c, rep);
        rep = cmd->held;
    } else if (c->wait_replicas > 0 && rep && cmd->wait_fn && cmd->wait_fn(rep) &&
               !cmd->abandoned && c->ac == ac && c->state == ST_CONNECTED &&
               start_wait(c, cmd, rep)) {
        return; /* answered when WAIT returns */
    }
    unlink_cmd(c, cmd);
    if (cmd->timer) {
        event_del(cmd->timer);
        cmd->timer = NULL;
    }
    if (!cmd->abandoned) {
        cmd->abandoned = true;
        cmd->cb(rep ? WR_OK : WR_EUNAVAILABLE, rep, cmd->arg); /* last: may close */
    }
    wr_redis_conn_cmd_free(cmd);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_redis_conn_cmd_t *cmd = arg;
    wr_redis_conn_t *c = cmd->c;
    if (!cmd->abandoned) {
        struct timeval tv = ms_tv(2 * (uint64_t)c->cmd_timeout_ms);
        evtimer_add(cmd->timer, &tv);
        call_err(cmd, WR_ETIMEOUT); /* last: the callback may close the connection */
        return;
    }
    /* Unanswered 2x the timeout after it timed out: Redis is hung. Dropping
     * the connection answers (frees) this command and every other pending one. */
    drop_connection(c, "command overdue, connection looks hung");
}

/* ----------------------------------------------------------- connection */

static void start_connect(wr_redis_conn_t *c);

static void schedule_reconnect(wr_redis_conn_t *c)
{
    uint32_t base = c->backoff_ms;
    /* +/-20% jitter */
    int64_t span = (int64_t)base * 40 / 100;
    int64_t delay = (int64_t)base - (int64_t)base * 20 / 100;
    if (span > 0)
        delay += (int64_t)(rng_next(c) % (uint64_t)(span + 1));
    uint64_t next = (uint64_t)c->backoff_ms * 2;
    c->backoff_ms = next > c->reconnect_max_ms ? c->reconnect_max_ms : (uint32_t)next;
    struct timeval tv = ms_tv((uint64_t)delay);
    evtimer_add(c->retry_timer, &tv);
}

/* Lets go of the current context: pending commands answer WR_EUNAVAILABLE
 * (or are freed if abandoned), a reconnect is scheduled. The connection's
 * state is settled before hiredis runs any callback. */
static void drop_connection(wr_redis_conn_t *c, const char *why)
{
    redisAsyncContext *ac = c->ac;
    wr_warn("%s: dropping connection: %s", c->name, why);
    c->ac = NULL;
    c->state = ST_DISCONNECTED;
    evtimer_del(c->conn_timer);
    schedule_reconnect(c);
    if (ac) {
        ac->data = NULL;
        redisAsyncFree(ac);
    }
}

/* The context is gone (hiredis frees it after its callback returns). */
static void lost(wr_redis_conn_t *c, redisAsyncContext *ac)
{
    ac->data = NULL;
    c->ac = NULL;
    c->state = ST_DISCONNECTED;
    evtimer_del(c->conn_timer);
    schedule_reconnect(c);
}

static void on_handshake(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)privdata;
    wr_redis_conn_t *c = ac->data;
    redisReply *rep = reply;
    if (!c || !rep || c->ac != ac)
        return; /* dropped or disconnecting: handled elsewhere */
    if (rep->type == REDIS_REPLY_ERROR) {
        wr_error("%s: handshake failed: %s", c->name, rep->str);
        drop_connection(c, "handshake failed");
        return;
    }
    evtimer_del(c->conn_timer);
    c->state = ST_CONNECTED;
    c->backoff_ms = BACKOFF_MIN_MS;
    wr_info("%s: connected", c->name);
}

static void on_connect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    wr_redis_conn_t *c = ac->data;
    if (!c || status == REDIS_OK)
        return;
    wr_warn("%s: connect failed: %s", c->name, ac->errstr);
    lost(c, ac);
}

static void on_disconnect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    wr_redis_conn_t *c = ac->data;
    if (!c)
        return;
    wr_warn("%s: disconnected: %s", c->name, status == REDIS_OK ? "closed" : ac->errstr);
    lost(c, ac);
}

static void on_conn_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drop_connection(arg, "connect timeout");
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    start_connect(arg);
}

static void start_connect(wr_redis_conn_t *c)
{
    redisAsyncContext *ac = c->ep.is_unix ? redisAsyncConnectUnix(c->ep.path)
                                          : redisAsyncConnect(c->ep.host, c->ep.port);
    if (!ac || ac->err) {
        wr_warn("%s: connect failed: %s", c->name, ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        schedule_reconnect(c);
        return;
    }
    if (redisLibeventAttach(ac, c->base) != REDIS_OK) {
        redisAsyncFree(ac);
        schedule_reconnect(c);
        return;
    }
    ac->data = c;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    c->ac = ac;
    c->state = ST_CONNECTING;
    int rc = c->ep.db >= 0 ? redisAsyncCommand(ac, on_handshake, NULL, "SELECT %d", c->ep.db)
                           : redisAsyncCommand(ac, on_handshake, NULL, "PING");
    if (rc != REDIS_OK) {
        drop_connection(c, "handshake not sent");
        return;
    }
    struct timeval tv = ms_tv(c->connect_timeout_ms);
    evtimer_add(c->conn_timer, &tv);
}

bool wr_redis_conn_connected(const wr_redis_conn_t *c)
{
    return c && c->state == ST_CONNECTED;
}

/* ------------------------------------------------------------ open/close */

static wr_err_t load_scripts(wr_redis_conn_t *c, const wr_redis_conn_script_t *defs, size_t n)
{
    c->scripts = calloc(n ? n : 1, sizeof *c->scripts);
    if (!c->scripts)
        return WR_ENOMEM;
    c->nscripts = n;
    for (size_t i = 0; i < n; i++) {
        const wr_embed_file_t *lib = defs[i].lib ? wr_embed_find(defs[i].lib) : NULL;
        const wr_embed_file_t *f = wr_embed_find(defs[i].file);
        if (!f || (defs[i].lib && !lib))
            return WR_EINVAL;
        size_t prefix = lib ? lib->len + 1 : 0;
        script_t *sc = &c->scripts[i];
        sc->len = prefix + f->len;
        sc->text = malloc(sc->len + 1);
        if (!sc->text)
            return WR_ENOMEM;
        if (prefix) {
            memcpy(sc->text, lib->data, lib->len);
            sc->text[lib->len] = '\n';
        }
        memcpy(sc->text + prefix, f->data, f->len);
        sc->text[sc->len] = '\0';
        unsigned char md[SHA_DIGEST_LENGTH];
        SHA1((const unsigned char *)sc->text, sc->len, md);
        for (int j = 0; j < SHA_DIGEST_LENGTH; j++)
            snprintf(sc->sha + 2 * j, 3, "%02x", md[j]);
    }
    return WR_OK;
}

static void conn_free(wr_redis_conn_t *c)
{
    for (size_t i = 0; c->scripts && i < c->nscripts; i++)
        free(c->scripts[i].text);
    free(c->scripts);
    if (c->conn_timer)
        event_free(c->conn_timer);
    if (c->retry_timer)
        event_free(c->retry_timer);
    if (c->flush_ev)
        event_free(c->flush_ev);
    free(c);
}

wr_err_t wr_redis_conn_open(struct event_base *base, const wr_redis_conn_opts_t *opts,
                            wr_redis_conn_t **out)
{
    wr_err_t err;
    if (!base || !opts || !out)
        return WR_EINVAL;
    wr_redis_conn_t *c = calloc(1, sizeof *c);
    if (!c)
        return WR_ENOMEM;
    c->base = base;
    c->name = opts->log_name ? opts->log_name : "redis_conn";
    err = wr_redis_url_parse(opts->url, &c->ep, NULL, 0);
    if (err != WR_OK)
        goto out;
    c->cmd_timeout_ms = opts->command_timeout_ms ? opts->command_timeout_ms : 250;
    c->connect_timeout_ms = opts->connect_timeout_ms ? opts->connect_timeout_ms : 1000;
    c->reconnect_max_ms = opts->reconnect_max_ms ? opts->reconnect_max_ms : 2000;
    c->wait_replicas = opts->wait_replicas;
    c->wait_timeout_ms = opts->wait_timeout_ms ? opts->wait_timeout_ms : 100;
    c->metrics = opts->metrics;
    if (c->metrics && c->wait_replicas > 0) {
        wr_metrics_describe(c->metrics, "waitroom_redis_wait_total", WR_METRIC_COUNTER,
                            "WAIT after consume/admission, by result (ok; short: fewer "
                            "replicas acknowledged, the operation stands).");
        wr_metrics_inc(c->metrics, "waitroom_redis_wait_total", "result=\"ok\"", 0);
        wr_metrics_inc(c->metrics, "waitroom_redis_wait_total", "result=\"short\"", 0);
    }
    if (c->reconnect_max_ms < BACKOFF_MIN_MS)
        c->reconnect_max_ms = BACKOFF_MIN_MS;
    c->backoff_ms = BACKOFF_MIN_MS;
    struct timeval now;
    gettimeofday(&now, NULL);
    c->rng = ((uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_usec) ^ (uintptr_t)c;
    if (!c->rng)
        c->rng = 88172645463325252ULL;
    err = load_scripts(c, opts->scripts, opts->nscripts);
    if (err != WR_OK)
        goto out;
    c->conn_timer = evtimer_new(base, on_conn_timeout, c);
    c->retry_timer = evtimer_new(base, on_retry, c);
    c->flush_ev = event_new(base, -1, 0, on_flush, c);
    {
        struct timeval tv = ms_tv(c->cmd_timeout_ms);
        c->cmd_timeout_tv = event_base_init_common_timeout(base, &tv); /* NULL: plain timeouts */
    }
    if (!c->conn_timer || !c->retry_timer || !c->flush_ev) {
        err = WR_ENOMEM;
        goto out;
    }
    c->state = ST_DISCONNECTED;
    start_connect(c);
    *out = c;
    return WR_OK;
out:
    conn_free(c);
    return err;
}

void wr_redis_conn_close(wr_redis_conn_t *c)
{
    if (!c || c->state == ST_CLOSED)
        return; /* a second close (from a callback run by close) is a no-op */
    c->state = ST_CLOSED;
    evtimer_del(c->conn_timer);
    evtimer_del(c->retry_timer);
    /* Cancel in send order; each command stays allocated (orphaned) until
     * hiredis calls it back below. */
    while (c->head) {
        wr_redis_conn_cmd_t *cmd = c->head;
        unlink_cmd(c, cmd);
        cmd->c = NULL;
        if (cmd->timer) {
            event_del(cmd->timer);
            cmd->timer = NULL;
        }
        if (!cmd->abandoned)
            call_err(cmd, WR_ECANCELED);
    }
    redisAsyncContext *ac = c->ac;
    c->ac = NULL;
    if (ac) {
        ac->data = NULL;
        redisAsyncFree(ac); /* deferred by hiredis when inside its callback */
    }
    conn_free(c);
}
