/*
 * redis_conn.c - one Redis connection on a libevent loop (redis_conn.h):
 * the layer below store_redis, modelled on h2o's lib/common/redis.c, on
 * top of redis_io (bufferevents; TCP, unix socket or TLS).
 *
 * Connection
 *   One wr_redis_io_t at a time (c->io). States DISCONNECTED -> CONNECTING
 *   -> CONNECTED, and CLOSED once wr_redis_conn_close() began. CONNECTING
 *   covers asking the sentinels (redis-sentinel://), the transport, AUTH
 *   and SELECT (redis_io's handshake) and our hook (below), all bounded by
 *   connect_timeout_ms per connection; commands submitted outside
 *   CONNECTED return WR_EUNAVAILABLE at once (fail fast: the API's
 *   degraded mode and the breaker answer them). The io ending by itself
 *   (on_close: refused, AUTH refused, TLS refused, hung, closed) frees it
 *   and schedules a reconnect after a backoff of 100 ms doubling up to
 *   reconnect_max_ms, +/-20% jitter; a completed handshake resets it.
 *   on_close's message is logged (an identical one at most every 30 s);
 *   it never holds the password (redis_io scrubs it).
 *
 * Handshake hook (each connection, before any command of ours)
 *   ROLE, CONFIG GET and SCRIPT LOAD: redis_checks.c.
 *
 * Sentinel (redis-sentinel://H1:P1,.../MASTER)
 *   Asking the sentinels for the primary, the +switch-master subscription
 *   and the address pinned after a failover: redis_sentinel.c. What these
 *   files share with this one is redis_conn_internal.h.
 *
 * Failover signals on the primary connection
 *   A READONLY, LOADING or MASTERDOWN reply (a demoted primary, a stable
 *   DNS name now pointing at a replica, a restart loading its data)
 *   answers that command WR_EUNAVAILABLE, sets DISCONNECTED at once (new
 *   commands fail fast), and drops the connection from the loop (drop_ev:
 *   never from inside a callback chain), then reconnects/rediscovers.
 *
 * Commands
 *   Each command is a `struct wr_redis_conn_cmd`: its callback and its
 *   arguments (kept for the EVAL retry; the argument arrays sized by the
 *   caller, e.g. for a batch of joins and polls) in one allocation. redis_io keeps
 *   the order, the timeout (WR_ETIMEOUT), the hung detection (a command
 *   unanswered 2x its timeout after it drops the connection) and calls
 *   on_reply exactly once per submission.
 *   - Scripts: sent with EVALSHA (SHA1 computed at open, crypto.h); a
 *     NOSCRIPT error is answered by exactly one EVAL of the same command,
 *     which also reloads the script cache of Redis.
 *   - Durability mode (wait_replicas > 0): a reply the command's wait_fn
 *     accepts is deep-copied into the command (`held`) and WAIT N T is
 *     submitted with the same command, with the command timeout plus the
 *     WAIT timeout; its answer (or a dropped connection) answers the held
 *     reply. A WAIT shortfall does not change the answer (the write stands
 *     on the primary); it is counted and logged - except for a strict
 *     command (a join), which a shortfall answers WR_EREPLICA (WAIT
 *     answered) or WR_EUNAVAILABLE (it did not).
 *   - Disconnect: redis_io answers every pending command (WR_EUNAVAILABLE);
 *     a connection we free ourselves answers WR_ECANCELED, which on_reply
 *     turns into WR_EUNAVAILABLE unless the connection is being closed.
 *   Reentrancy: user callbacks may submit and may close the connection;
 *   while this file frees an io itself (drop, close) `busy` is held, and a
 *   close from inside a callback only marks CLOSED: the memory goes when
 *   the outermost call returns.
 *
 * Ownership: the connection owns its scripts, timers, ios, TLS settings
 *   and pending commands; a reply handed to a callback is borrowed until
 *   the callback returns.
 */
#include "store/redis/redis_conn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/embed.h"
#include "base/log.h"
#include "store/redis/redis_checks.h"
#include "store/redis/redis_conn_internal.h"
#include "store/redis/redis_io.h"
#include "store/redis/redis_sentinel.h"
#include "store/redis/redis_url.h"
#include "base/rng.h"

#define LOG_REPEAT_MS 30000 /* an identical connection message is logged at most this often */

/* ------------------------------------------------------------ logging */

/* Logs a connection message at level, an identical one at most every
 * LOG_REPEAT_MS (a server that keeps refusing us is one line per 30 s). */
void wr_redis_conn__log(wr_redis_conn_t *c, wr_log_level_t level, const char *msg)
{
    int64_t now = wr_clock_mono_ms();
    if (strcmp(msg, c->last_msg) == 0 && now - c->last_msg_ms < LOG_REPEAT_MS) {
        wr_debug("%s: %s", c->name, msg);
        return;
    }
    snprintf(c->last_msg, sizeof c->last_msg, "%s", msg);
    c->last_msg_ms = now;
    wr_log(level, "%s: %s", c->name, msg);
}

/* The end of the first attempt (once). */
void wr_redis_conn__first_done(wr_redis_conn_t *c, wr_err_t err, const char *msg)
{
    if (c->started)
        return;
    c->started = true;
    if (c->on_started)
        c->on_started(err, msg, c->started_arg);
}

/* ------------------------------------------------------------ commands */

static void on_reply(wr_err_t err, const redisReply *rep, void *arg);

/* Sends cmd on c with timeout_ms (0: c's command timeout). */
static wr_err_t send_cmd_within(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd, uint32_t timeout_ms)
{
    if (cmd->script != WR_REDIS_CONN_NO_SCRIPT) {
        const wr_redis_conn__script_t *sc = &c->scripts[cmd->script];
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
    return wr_redis_io_command(c->io, cmd->argc, cmd->argv, cmd->argvlen,
                               timeout_ms ? timeout_ms : c->cmd_timeout_ms, on_reply, cmd);
}

static wr_err_t send_cmd(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd)
{
    return send_cmd_within(c, cmd, 0);
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
    if (c->state != WR_REDIS_CONN__CONNECTED || !c->io) {
        err = WR_EUNAVAILABLE;
        goto out;
    }
    cmd->c = c;
    cmd->wait_fn = wait_fn;
    cmd->cb = cb;
    cmd->arg = arg;
    cmd->born_ms = wr_clock_mono_ms();
    err = send_cmd(c, cmd);
    if (err == WR_OK)
        return WR_OK;
out:
    wr_redis_conn_cmd_free(cmd);
    return err;
}

wr_err_t wr_redis_conn_resubmit(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd, bool asking)
{
    if (c->state != WR_REDIS_CONN__CONNECTED || !c->io)
        return WR_EUNAVAILABLE;
    /* a redirected command keeps the deadline of its first send: every
     * answer within the store timeout, however many hops it took */
    int64_t left = (int64_t)c->cmd_timeout_ms - (wr_clock_mono_ms() - cmd->born_ms);
    if (c->cmd_timeout_ms && left <= 0)
        return WR_ETIMEOUT;
    if (asking) {
        static const char *const argv[] = {"ASKING"};
        wr_err_t err = wr_redis_io_command(c->io, 1, argv, NULL, 0, NULL, NULL);
        if (err != WR_OK)
            return err;
    }
    wr_redis_conn_t *was = cmd->c;
    bool retried = cmd->retried;
    cmd->c = c;
    cmd->retried = false; /* one EVAL after NOSCRIPT per server */
    cmd->redirects++;
    wr_err_t err = send_cmd_within(c, cmd, c->cmd_timeout_ms ? (uint32_t)left : 0);
    if (err != WR_OK) {
        cmd->c = was;
        cmd->retried = retried;
        cmd->redirects--;
    }
    return err;
}

void wr_redis_conn_cmd_fail(wr_redis_conn_cmd_t *cmd, wr_err_t err)
{
    cmd->cb(err, NULL, cmd->arg);
    wr_redis_conn_cmd_free(cmd);
}

/* A cluster's redirection or retry-later reply (redis_router.c). */
static bool cluster_reply(const redisReply *rep)
{
    if (!rep || rep->type != REDIS_REPLY_ERROR || !rep->str)
        return false;
    return strncmp(rep->str, "MOVED ", 6) == 0 || strncmp(rep->str, "ASK ", 4) == 0 ||
           strncmp(rep->str, "TRYAGAIN", 8) == 0 || strncmp(rep->str, "CLUSTERDOWN", 11) == 0;
}

/* A reply that means this server is no longer (or not yet) the primary we
 * can write to: a demoted primary (READONLY), one loading its data
 * (LOADING), a replica cut off from its primary (MASTERDOWN). */
static bool failover_reply(const redisReply *rep)
{
    if (!rep || rep->type != REDIS_REPLY_ERROR || !rep->str)
        return false;
    return strncmp(rep->str, "READONLY", 8) == 0 || strncmp(rep->str, "LOADING", 7) == 0 ||
           strncmp(rep->str, "MASTERDOWN", 10) == 0;
}

/* Fails fast from now on and drops the connection from the loop. */
static void schedule_drop(wr_redis_conn_t *c, const char *why)
{
    if (c->state == WR_REDIS_CONN__CLOSED)
        return;
    if (c->state == WR_REDIS_CONN__CONNECTED || c->state == WR_REDIS_CONN__CONNECTING) {
        snprintf(c->drop_why, sizeof c->drop_why, "%s", why);
        c->state = WR_REDIS_CONN__DISCONNECTED;
        event_active(c->drop_ev, EV_TIMEOUT, 0);
    }
}

typedef struct {
    wr_redis_conn_t *c;
    const char *what;
} oneway_t;

static void on_oneway(wr_err_t err, const redisReply *rep, void *arg)
{
    oneway_t *o = arg;
    if (err == WR_OK && rep->type == REDIS_REPLY_ERROR) {
        wr_warn("%s: %s command failed: %s", o->c->name, o->what, rep->str);
        if (failover_reply(rep))
            schedule_drop(o->c, rep->str);
    }
    free(o);
}

wr_err_t wr_redis_conn_send_oneway(wr_redis_conn_t *c, const char *what, int argc,
                                   const char *const *argv)
{
    if (c->state != WR_REDIS_CONN__CONNECTED || !c->io)
        return WR_EUNAVAILABLE;
    oneway_t *o = malloc(sizeof *o);
    if (!o)
        return WR_EUNAVAILABLE;
    o->c = c;
    o->what = what;
    if (wr_redis_io_command(c->io, argc, argv, NULL, 0, on_oneway, o) != WR_OK) {
        free(o);
        return WR_EUNAVAILABLE;
    }
    return WR_OK;
}

/* ------------------------------------------------------------ WAIT */

/* Durability mode: keeps a copy of the reply in cmd and sends WAIT on the
 * same connection, in order behind the command. Returns false (answer now,
 * without WAIT) if that fails. */
static bool start_wait(wr_redis_conn_t *c, wr_redis_conn_cmd_t *cmd, const redisReply *rep)
{
    cmd->held = wr_redis_conn__reply_copy(rep, 0);
    if (!cmd->held)
        return false;
    char n[16], t[16];
    snprintf(n, sizeof n, "%u", (unsigned)c->wait_replicas);
    snprintf(t, sizeof t, "%u", (unsigned)c->wait_timeout_ms);
    const char *argv[] = {"WAIT", n, t};
    cmd->waiting = true;
    if (wr_redis_io_command(c->io, 3, argv, NULL, c->cmd_timeout_ms + c->wait_timeout_ms, on_reply,
                            cmd) != WR_OK) {
        cmd->waiting = false;
        wr_redis_conn__reply_free(cmd->held);
        cmd->held = NULL;
        return false;
    }
    return true;
}

void wr_redis_conn_cmd_wait_strict(wr_redis_conn_cmd_t *cmd)
{
    cmd->strict = true;
}

/* Counts and (at most every 10 s) logs the outcome of a WAIT; true when
 * enough replicas acknowledged. */
static bool wait_done(wr_redis_conn_t *c, const redisReply *rep)
{
    bool ok =
        rep && rep->type == REDIS_REPLY_INTEGER && rep->integer >= (long long)c->wait_replicas;
    if (c->metrics)
        wr_metrics_inc(c->metrics, "waitroom_redis_wait_total",
                       ok ? "result=\"ok\"" : "result=\"short\"", 1);
    if (ok)
        return true;
    int64_t now = wr_clock_mono_ms();
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
    return false;
}

/* ------------------------------------------------------------ replies */

static void on_reply(wr_err_t err, const redisReply *rep, void *arg)
{
    wr_redis_conn_cmd_t *cmd = arg;
    wr_redis_conn_t *c = cmd->c;
    if (err == WR_ECANCELED && c->state != WR_REDIS_CONN__CLOSED)
        err = WR_EUNAVAILABLE; /* we dropped the connection, not the caller */
    if (err != WR_OK)
        rep = NULL;
    if (cmd->waiting) {
        /* The WAIT of the durability mode answered (or the connection
         * dropped): the write stands either way; answer the command's
         * reply, counting a shortfall. */
        bool acked = wait_done(c, rep) || (rep && rep->type == REDIS_REPLY_INTEGER &&
                                           rep->integer > 0); /* on some replica */
        if (!acked && cmd->strict && err != WR_ECANCELED) {
            /* maybe not on a replica: the caller retries. WAIT answered
             * (a late replica, the primary healthy): WR_EREPLICA, not a
             * store failure; no answer at all: the store failed. */
            err = err == WR_OK ? WR_EREPLICA : WR_EUNAVAILABLE;
            rep = NULL;
        } else if (err != WR_ECANCELED && err != WR_ETIMEOUT) {
            err = WR_OK;
            rep = cmd->held;
        }
    } else if (rep && rep->type == REDIS_REPLY_ERROR && cmd->script != WR_REDIS_CONN_NO_SCRIPT &&
               !cmd->retried && strncmp(rep->str, "NOSCRIPT", 8) == 0) {
        /* Script cache lost (SCRIPT FLUSH, restart, failover): exactly one
         * EVAL of this command, which also reloads the script. */
        cmd->retried = true;
        if (c->state == WR_REDIS_CONN__CONNECTED && c->io && send_cmd(c, cmd) == WR_OK)
            return;
        err = WR_EUNAVAILABLE;
        rep = NULL;
    } else if (c->redirect && !cmd->waiting && cluster_reply(rep) &&
               c->redirect(c->redirect_arg, cmd, rep)) {
        return; /* the router resubmits or answers it */
    } else if (failover_reply(rep)) {
        /* Not the primary (any more): never retried on this socket. */
        wr_redis_conn__log(c, WR_LOG_WARN, rep->str);
        schedule_drop(c, rep->str);
        err = WR_EUNAVAILABLE;
        rep = NULL;
    } else if (c->wait_replicas > 0 && rep && cmd->wait_fn && cmd->wait_fn(rep) &&
               c->state == WR_REDIS_CONN__CONNECTED && c->io && start_wait(c, cmd, rep)) {
        return; /* answered when WAIT returns */
    }
    cmd->cb(err, rep, cmd->arg); /* last: may close */
    wr_redis_conn_cmd_free(cmd);
}

/* ----------------------------------------------------------- connection */

static void start_attempt(wr_redis_conn_t *c);

void wr_redis_conn__schedule_reconnect(wr_redis_conn_t *c)
{
    if (c->state == WR_REDIS_CONN__CLOSED)
        return;
    uint32_t base = c->backoff_ms;
    /* +/-20% jitter */
    int64_t span = (int64_t)base * 40 / 100;
    int64_t delay = (int64_t)base - (int64_t)base * 20 / 100;
    if (span > 0)
        delay += (int64_t)(wr_rng_next(&c->rng) % (uint64_t)(span + 1));
    uint64_t next = (uint64_t)c->backoff_ms * 2;
    c->backoff_ms = next > c->reconnect_max_ms ? c->reconnect_max_ms : (uint32_t)next;
    struct timeval tv = wr_clock_tv_ms((uint64_t)delay);
    evtimer_add(c->retry_timer, &tv);
}

/* Frees an io of ours; callbacks it runs may close c (see `busy`).
 * Returns false when c was closed meanwhile (the caller returns at once;
 * c is freed by whoever holds `busy` outermost). */
static void conn_free(wr_redis_conn_t *c);
bool wr_redis_conn__free_io(wr_redis_conn_t *c, wr_redis_io_t *io)
{
    if (!io)
        return true;
    c->busy++;
    wr_redis_io_free(io);
    c->busy--;
    if (c->state == WR_REDIS_CONN__CLOSED) {
        if (c->busy == 0)
            conn_free(c);
        return false;
    }
    return true;
}

/* Lets go of the primary connection now: pending commands answer
 * WR_EUNAVAILABLE; then reconnect (at once when `now`). */
static void drop_connection(wr_redis_conn_t *c, const char *why, bool now)
{
    wr_redis_io_t *io = c->io;
    c->io = NULL;
    c->state = WR_REDIS_CONN__DISCONNECTED;
    if (io) {
        char msg[300];
        snprintf(msg, sizeof msg, "dropping the connection to %s: %s", wr_redis_io_endpoint(io),
                 why);
        wr_redis_conn__log(c, WR_LOG_WARN, msg);
    }
    if (!wr_redis_conn__free_io(c, io))
        return;
    if (c->state != WR_REDIS_CONN__DISCONNECTED || c->io)
        return; /* a callback reconnected meanwhile */
    if (now) {
        evtimer_del(c->retry_timer);
        start_attempt(c);
    } else {
        wr_redis_conn__schedule_reconnect(c);
    }
}

static void on_drop(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_redis_conn_t *c = arg;
    if (c->io && c->state == WR_REDIS_CONN__DISCONNECTED)
        drop_connection(c, c->drop_why, false);
}

/* The io ended by itself: every pending command got WR_EUNAVAILABLE. */
static void on_io_close(wr_redis_io_t *io, wr_err_t err, const char *msg, void *arg)
{
    wr_redis_conn_t *c = arg;
    if (io != c->io)
        return;
    bool was_connected = c->state == WR_REDIS_CONN__CONNECTED;
    c->io = NULL;
    c->state = WR_REDIS_CONN__DISCONNECTED;
    if (!wr_redis_conn__free_io(c, io))
        return;
    wr_redis_conn__log(c, err == WR_EAUTH || err == WR_EINVAL ? WR_LOG_ERROR : WR_LOG_WARN, msg);
    wr_redis_conn__first_done(c, err, msg);
    if (c->state != WR_REDIS_CONN__DISCONNECTED || c->io)
        return;
    if (was_connected)
        c->backoff_ms = WR_REDIS_CONN__BACKOFF_MIN_MS;
    wr_redis_conn__schedule_reconnect(c);
}

static void on_io_ready(wr_redis_io_t *io, void *arg)
{
    wr_redis_conn_t *c = arg;
    if (io != c->io)
        return;
    c->state = WR_REDIS_CONN__CONNECTED;
    c->backoff_ms = WR_REDIS_CONN__BACKOFF_MIN_MS;
    c->pin_port = 0;
    c->last_msg[0] = '\0';
    wr_info("%s: connected to %s%s", c->name, wr_redis_io_endpoint(io),
            c->ever_connected ? " again" : "");
    c->ever_connected = true;
    wr_redis_conn__first_done(c, WR_OK, NULL);
}

/* Connects to the server (host:port, or the URL's unix socket). */
void wr_redis_conn__connect_server(wr_redis_conn_t *c, const char *host, int port)
{
    wr_redis_io_opts_t o = {0};
    if (c->ep.is_unix) {
        o.unix_path = c->ep.path;
    } else {
        snprintf(c->host, sizeof c->host, "%s", host);
        c->port = port;
        o.host = c->host;
        o.port = port;
        o.tls = c->ep.tls ? c->tls : NULL;
    }
    o.user = c->ep.has_user ? c->ep.user : NULL;
    o.password = c->ep.has_password ? c->ep.password : NULL;
    o.db = c->ep.db;
    o.connect_timeout_ms = c->connect_timeout_ms;
    o.command_timeout_ms = c->cmd_timeout_ms;
    o.on_handshake = wr_redis_checks_on_handshake;
    o.on_ready = on_io_ready;
    o.on_close = on_io_close;
    o.arg = c;
    c->state = WR_REDIS_CONN__CONNECTING;
    wr_err_t err = wr_redis_io_connect(c->base, &o, &c->io);
    if (err != WR_OK) {
        c->io = NULL;
        c->state = WR_REDIS_CONN__DISCONNECTED;
        char msg[120];
        snprintf(msg, sizeof msg, "cannot connect: %s", wr_strerror(err));
        wr_redis_conn__log(c, WR_LOG_WARN, msg);
        wr_redis_conn__first_done(c, err, msg);
        wr_redis_conn__schedule_reconnect(c);
    }
}

/* One attempt: ask the sentinels, or connect to the URL's server. */
static void start_attempt(wr_redis_conn_t *c)
{
    if (c->state == WR_REDIS_CONN__CLOSED || c->io || c->sq_io)
        return;
    if (c->ep.kind == WR_REDIS_URL_SENTINEL) {
        wr_redis_sentinel_attempt(c);
    } else {
        wr_redis_conn__connect_server(c, c->ep.host, c->ep.port);
    }
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    start_attempt(arg);
}

bool wr_redis_conn_connected(const wr_redis_conn_t *c)
{
    return c && c->state == WR_REDIS_CONN__CONNECTED && c->io && wr_redis_io_ready(c->io);
}

size_t wr_redis_conn_pending(const wr_redis_conn_t *c)
{
    return c ? wr_redis_io_pending(c->io) + wr_redis_io_pending(c->sq_io) +
                   wr_redis_io_pending(c->sub_io)
             : 0;
}

/* ------------------------------------------------------------ open/close */

static wr_err_t load_scripts(wr_redis_conn_t *c, const wr_redis_conn_script_t *defs, size_t n)
{
    c->scripts = calloc(n ? n : 1, sizeof *c->scripts);
    if (!c->scripts)
        return WR_ENOMEM;
    c->nscripts = n;
    for (size_t i = 0; i < n; i++) {
        wr_redis_conn__script_t *sc = &c->scripts[i];
        if (!defs[i].file)
            return WR_EINVAL;
        sc->text = wr_redis_conn_script_text(&defs[i], &sc->len);
        if (!sc->text) /* a file not embedded, or out of memory */
            return wr_embed_find(defs[i].file) ? WR_ENOMEM : WR_EINVAL;
        wr_crypto_sha1_hex(sc->text, sc->len, sc->sha);
    }
    return WR_OK;
}

static void conn_free(wr_redis_conn_t *c)
{
    for (size_t i = 0; c->scripts && i < c->nscripts; i++)
        free(c->scripts[i].text);
    free(c->scripts);
    if (c->retry_timer)
        event_free(c->retry_timer);
    if (c->drop_ev)
        event_free(c->drop_ev);
    wr_redis_io_tls_free(c->tls);
    wr_redis_url_wipe(&c->ep);
    free(c);
}

/* TLS settings for rediss:// from the files (logged refusal: WR_EINVAL). */
static wr_err_t open_tls(wr_redis_conn_t *c, const wr_redis_conn_opts_t *opts)
{
    if (!c->ep.tls)
        return WR_OK;
    wr_redis_io_tls_opts_t t = {opts->tls_ca_file, opts->tls_cert_file, opts->tls_key_file};
    char msg[400] = "";
    wr_err_t err = wr_redis_io_tls_new(&t, &c->tls, msg, sizeof msg);
    if (err == WR_EINVAL)
        wr_error("%s: TLS: %s", c->name, msg);
    return err;
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
    char msg[300] = "";
    if (opts->endpoint) {
        c->ep = *opts->endpoint;
        err = WR_OK;
    } else {
        err = wr_redis_url_parse(opts->url, &c->ep, NULL, 0);
    }
    if (err == WR_OK)
        err = wr_redis_url_set_env_password(&c->ep, opts->env_password, msg, sizeof msg);
    if (err != WR_OK) {
        if (msg[0])
            wr_error("%s: %s", c->name, msg);
        goto out;
    }
    c->cmd_timeout_ms = opts->command_timeout_ms ? opts->command_timeout_ms : 250;
    c->connect_timeout_ms = opts->connect_timeout_ms ? opts->connect_timeout_ms : 1000;
    c->reconnect_max_ms = opts->reconnect_max_ms ? opts->reconnect_max_ms : 2000;
    /* the durability mode: WAIT after a write, its results counted */
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
    c->allow_eviction = opts->allow_eviction;
    c->redirect = opts->redirect;
    c->redirect_arg = opts->redirect_arg;
    c->on_started = opts->on_started;
    c->started_arg = opts->started_arg;
    if (c->reconnect_max_ms < WR_REDIS_CONN__BACKOFF_MIN_MS)
        c->reconnect_max_ms = WR_REDIS_CONN__BACKOFF_MIN_MS;
    c->backoff_ms = WR_REDIS_CONN__BACKOFF_MIN_MS;
    wr_rng_seed_random(&c->rng);
    err = load_scripts(c, opts->scripts, opts->nscripts);
    if (err == WR_OK)
        err = open_tls(c, opts);
    if (err != WR_OK)
        goto out;
    c->retry_timer = evtimer_new(base, on_retry, c);
    c->drop_ev = evtimer_new(base, on_drop, c);
    if (!c->retry_timer || !c->drop_ev) {
        err = WR_ENOMEM;
        goto out;
    }
    c->state = WR_REDIS_CONN__DISCONNECTED;
    start_attempt(c);
    *out = c;
    return WR_OK;
out:
    conn_free(c);
    return err;
}

void wr_redis_conn_close(wr_redis_conn_t *c)
{
    if (!c || c->state == WR_REDIS_CONN__CLOSED)
        return; /* a second close (from a callback run by close) is a no-op */
    c->state = WR_REDIS_CONN__CLOSED;
    evtimer_del(c->retry_timer);
    event_del(c->drop_ev);
    wr_redis_io_t *ios[3] = {c->io, c->sq_io, c->sub_io};
    c->io = c->sq_io = c->sub_io = NULL;
    c->busy++;
    for (int i = 0; i < 3; i++)
        wr_redis_io_free(ios[i]); /* pending callbacks: WR_ECANCELED, in send order */
    c->busy--;
    if (c->busy == 0)
        conn_free(c);
}
