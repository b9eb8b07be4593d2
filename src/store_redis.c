/*
 * store_redis.c - the Redis backend of the store interface (store.h).
 *
 * Structure
 *   One hiredis async connection (redisAsyncContext) attached to the
 *   caller's libevent base. Every domain operation is ONE Lua script call
 *   (src/scripts/ *.lua, embedded at build time; lib.lua is prepended to the
 *   queue scripts so each text is self-contained). Scripts are sent with
 *   EVALSHA (SHA1 computed here with OpenSSL); a NOSCRIPT error is answered
 *   by exactly one EVAL of the same request, which also reloads the cache.
 *   Every key of queue q carries the hash tag {q} and is passed in KEYS.
 *
 * Requests
 *   Each command in flight is a `struct req`: its callback, a copy of its
 *   arguments (for the EVAL retry), a libevent timer, and - for operations
 *   that answer a config - the cached config it announced as "known" to the
 *   script. Live requests are kept in s->pending in send order (FIFO, as
 *   Redis answers them).
 *     The timer is a struct event inside the req, on the base's common
 *     timeout for cmd_timeout_ms (see submit).
 *   - Reply (hiredis callback, privdata = req): unlink, parse, call the user
 *     callback (always the last thing done with the store), free the req.
 *   - Timeout (hiredis 0.14 has none): the timer fires after
 *     command_timeout_ms: the user callback runs once with WR_ETIMEOUT, the
 *     req is marked `abandoned` and stays linked until hiredis answers it.
 *     The timer is re-armed for 2x the timeout; if it fires again the
 *     connection is hung (oldest command overdue by more than 2x the
 *     timeout): the connection is dropped and re-established.
 *   - Disconnect: hiredis calls every pending callback with a NULL reply;
 *     live reqs answer WR_EUNAVAILABLE (abandoned ones are just freed).
 *   - close(): every linked req is unlinked and orphaned (req->s = NULL)
 *     after its callback got WR_ECANCELED; hiredis frees orphans when it
 *     calls them back (at once inside redisAsyncFree, or later if close was
 *     called from inside a hiredis callback, where hiredis defers the free).
 *   - Durability mode (wait_replicas > 0): the reply of a consume or an
 *     admission script is deep-copied into the req (`held`), WAIT N T is
 *     sent with the same req as privdata, and the req stays linked; the
 *     WAIT answer (or NULL on disconnect) then answers the held reply. A
 *     WAIT shortfall does not change the answer (the write stands on the
 *     primary); it is counted and logged.
 *   Invariant: a user callback is called at most once (the `abandoned`
 *   flag), and never from inside an operation call.
 *   Reentrancy: a user callback may start new operations and may call
 *   close(); after calling a user callback this file touches neither the
 *   store nor the hiredis context (only the req, which it owns).
 *
 * Connection
 *   States DISCONNECTED -> CONNECTING -> CONNECTED. CONNECTING covers the
 *   socket connect and a handshake (SELECT db, or PING) bounded by
 *   connect_timeout_ms; operations issued outside CONNECTED return
 *   WR_EUNAVAILABLE at once. A failed connect, a failed handshake or a
 *   disconnect schedules a reconnect after a backoff of 100 ms doubling up
 *   to reconnect_max_ms, +/-20% jitter; a completed handshake resets it.
 *   ac->data points to the store while the store owns the context; it is set
 *   to NULL before the store lets go of it (drop, close), so late hiredis
 *   connect/disconnect callbacks are ignored.
 *
 * Config cache
 *   A bounded table (CACHE_MAX queues) name -> {version, parsed config}.
 *   Scripts get the known version and return the JSON only when it differs;
 *   an uncached queue sends "0" and always gets the JSON. A req holds a
 *   reference to the immutable snapshot {version, config} it announced, so
 *   a reply without JSON is always resolved against exactly that version. Versions start at the
 * creation time in us (config_put.lua), so a re-created queue never matches an old cached version.
 *
 * Ownership: the store owns its scripts, cache, timers, pending reqs and the
 *   hiredis context; results handed to callbacks live on the stack or in the
 *   req and are borrowed until the callback returns.
 */
#include "store_redis.h"

#include <event2/event.h>
#include <event2/event_struct.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <openssl/sha.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "embed.h"
#include "log.h"

#define HOST_MAX       255
#define PATH_MAX_LEN   1023
#define MAX_ARGS       20
#define CACHE_BUCKETS  1024
#define CACHE_MAX      10000
#define LIST_MAX       100000
#define BACKOFF_MIN_MS 100
#define JSON_MAX       (64 * 1024)
#define PENDING_MAX    65536 /* commands in flight on the connection */

enum script_id {
    SC_ENTRY,
    SC_LEAVE,
    SC_TOKEN,
    SC_ADMIT,
    SC_GET,
    SC_DELETE,
    SC_PUT,
    SC_SECRET,
    SC_COUNT,
};

static const struct {
    const char *file;
    bool with_lib;
} script_files[SC_COUNT] = {
    [SC_ENTRY] = {"scripts/entry.lua", true},    [SC_LEAVE] = {"scripts/leave.lua", true},
    [SC_TOKEN] = {"scripts/token.lua", true},    [SC_ADMIT] = {"scripts/admit.lua", true},
    [SC_GET] = {"scripts/queue_get.lua", true},  [SC_DELETE] = {"scripts/queue_delete.lua", true},
    [SC_PUT] = {"scripts/config_put.lua", true}, [SC_SECRET] = {"scripts/secret.lua", false},
};

typedef struct {
    char *text;
    size_t len;
    char sha[41];
} script_t;

typedef enum {
    OP_JOIN,
    OP_STATUS,
    OP_LEAVE,
    OP_ADMIT,
    OP_CONSUME,
    OP_VERIFY,
    OP_PUT,
    OP_GET,
    OP_DELETE,
    OP_SECRET,
    OP_PING,
    OP_NAMES,
} op_t;

typedef enum {
    ST_DISCONNECTED,
    ST_CONNECTING,
    ST_CONNECTED,
    ST_CLOSED,
} conn_state_t;

struct rstore;

/* Internal callback of the SMEMBERS step of queue_list. */
typedef void (*names_cb)(struct rstore *s, wr_err_t err, const redisReply *reply, void *arg);

struct req {
    struct req *prev, *next;
    struct rstore *s; /* NULL once orphaned by close() */
    op_t op;
    int script;          /* enum script_id, or -1 for a plain command */
    bool abandoned;      /* user callback already called */
    bool retried;        /* the one EVAL after NOSCRIPT was sent */
    bool waiting;        /* WAIT sent; `held` is the script's answer */
    redisReply *held;    /* deep copy of the script reply while WAIT runs; owned */
    struct event *timer; /* &timer_ev while armed or pending, else NULL */
    struct event timer_ev;
    union {
        wr_store_entry_cb entry;
        wr_store_done_cb done;
        wr_store_admit_cb admit;
        wr_store_token_cb token;
        wr_store_info_cb info;
        wr_store_secret_cb secret;
        names_cb names;
    } cb;
    void *arg;
    char queue[WR_QUEUE_NAME_MAX + 1];
    struct csnap *snap; /* the config announced to the script (a reference); NULL = none */
    int argc;
    const char *argv[MAX_ARGS];
    size_t argvlen[MAX_ARGS];
    char *buf; /* owns the argument bytes argv points into */
    size_t buf_used, buf_cap;
};

/* An immutable, reference-counted config of one version: held by the cache
 * entry and by every req that announced it, freed by the last holder (which
 * may outlive the store: orphaned reqs). */
struct csnap {
    unsigned refs;
    uint64_t version;
    wr_queue_config_t cfg;
};

struct centry {
    struct centry *next;
    char name[WR_QUEUE_NAME_MAX + 1];
    struct csnap *snap;
};

struct rstore {
    wr_store_t base_; /* must be first */
    struct event_base *base;
    /* endpoint */
    bool is_unix;
    char host[HOST_MAX + 1];
    int port;
    char path[PATH_MAX_LEN + 1];
    int db; /* -1 = no SELECT */
    uint32_t cmd_timeout_ms, connect_timeout_ms, reconnect_max_ms;
    uint32_t wait_replicas, wait_timeout_ms; /* durability mode (WAIT); 0 = off */
    wr_metrics_t *metrics;
    int64_t wait_log_ms; /* last shortfall log (monotonic ms) */
    /* connection */
    conn_state_t state;
    redisAsyncContext *ac;
    struct event *conn_timer;             /* connect + handshake deadline */
    struct event *retry_timer;            /* reconnect backoff */
    struct event *flush_ev;               /* writes queued commands in this loop iteration */
    const struct timeval *cmd_timeout_tv; /* common timeout of cmd_timeout_ms (base's) */
    uint32_t backoff_ms;
    uint64_t rng;
    /* requests in flight, oldest first */
    struct req *head, *tail;
    size_t npending;
    script_t scripts[SC_COUNT];
    struct centry *cache[CACHE_BUCKETS];
    size_t ncache;
};

static const wr_store_ops_t redis_ops;

/* ---------------------------------------------------------------- utils */

static uint64_t rng_next(struct rstore *s)
{
    uint64_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->rng = x;
    return x;
}

static struct timeval ms_tv(uint64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
    return tv;
}

static bool valid_queue(const char *q)
{
    size_t n = 0;
    if (!q)
        return false;
    for (; q[n]; n++) {
        char c = q[n];
        if (n >= WR_QUEUE_NAME_MAX)
            return false;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return n > 0;
}

static bool valid_user(const char *u)
{
    size_t n = u ? strnlen(u, WR_USER_ID_MAX + 1) : 0;
    return n > 0 && n <= WR_USER_ID_MAX;
}

static uint64_t fnv1a(const char *p)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ULL;
    }
    return h;
}

/* ---------------------------------------------------------------- cache */

static void snap_release(struct csnap *c)
{
    if (c && --c->refs == 0)
        free(c);
}

static struct centry *cache_find(struct rstore *s, const char *q)
{
    for (struct centry *e = s->cache[fnv1a(q) % CACHE_BUCKETS]; e; e = e->next)
        if (strcmp(e->name, q) == 0)
            return e;
    return NULL;
}

static void cache_put(struct rstore *s, const char *q, uint64_t version,
                      const wr_queue_config_t *cfg)
{
    struct centry *e = cache_find(s, q);
    if (e && e->snap->version == version)
        return;
    struct csnap *c = malloc(sizeof *c);
    if (!c)
        return;
    c->refs = 1;
    c->version = version;
    c->cfg = *cfg;
    if (!e) {
        if (s->ncache >= CACHE_MAX) {
            free(c);
            return; /* full: this queue is served uncached (always JSON) */
        }
        e = calloc(1, sizeof *e);
        if (!e) {
            free(c);
            return;
        }
        snprintf(e->name, sizeof e->name, "%s", q);
        size_t b = fnv1a(q) % CACHE_BUCKETS;
        e->next = s->cache[b];
        s->cache[b] = e;
        s->ncache++;
    }
    snap_release(e->snap);
    e->snap = c;
}

static void cache_remove(struct rstore *s, const char *q)
{
    struct centry **pp = &s->cache[fnv1a(q) % CACHE_BUCKETS];
    for (; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->name, q) == 0) {
            struct centry *e = *pp;
            *pp = e->next;
            snap_release(e->snap);
            free(e);
            s->ncache--;
            return;
        }
    }
}

static void cache_free(struct rstore *s)
{
    for (size_t i = 0; i < CACHE_BUCKETS; i++) {
        struct centry *e = s->cache[i];
        while (e) {
            struct centry *n = e->next;
            snap_release(e->snap);
            free(e);
            e = n;
        }
        s->cache[i] = NULL;
    }
    s->ncache = 0;
}

/* ----------------------------------------------------------- requests */

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

static struct req *req_new(op_t op, int script, size_t extra)
{
    struct req *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->buf_cap = 512 + 5 * (WR_QUEUE_NAME_MAX + 16) + extra;
    r->buf = malloc(r->buf_cap);
    if (!r->buf) {
        free(r);
        return NULL;
    }
    r->op = op;
    r->script = script;
    if (script >= 0)
        r->argc = 2; /* EVALSHA sha | EVAL text: filled at send time */
    return r;
}

static void req_free(struct req *r)
{
    if (!r)
        return;
    if (r->timer)
        event_del(r->timer);
    snap_release(r->snap);
    reply_free(r->held);
    free(r->buf);
    free(r);
}

/* Appends one argument (n bytes, copied). False when out of room. */
static bool arg_bin(struct req *r, const void *p, size_t n)
{
    if (r->argc >= MAX_ARGS || r->buf_cap - r->buf_used < n + 1)
        return false;
    char *dst = r->buf + r->buf_used;
    memcpy(dst, p, n);
    dst[n] = '\0';
    r->argv[r->argc] = dst;
    r->argvlen[r->argc] = n;
    r->argc++;
    r->buf_used += n + 1;
    return true;
}

static bool arg_str(struct req *r, const char *str)
{
    return arg_bin(r, str, strlen(str));
}

static bool arg_fmt(struct req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool arg_fmt(struct req *r, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return false;
    return arg_bin(r, tmp, (size_t)n);
}

/* numkeys and the five keys of queue q, in the order of lib.lua. */
static bool arg_queue_keys(struct req *r, const char *q)
{
    static const char *const suffix[5] = {"config", "waiting", "active", "tokens", "state"};
    if (!arg_str(r, "5"))
        return false;
    for (int i = 0; i < 5; i++)
        if (!arg_fmt(r, "wr:{%s}:%s", q, suffix[i]))
            return false;
    snprintf(r->queue, sizeof r->queue, "%s", q);
    return true;
}

/* Announces the cached config version of r->queue (or "0") to the script. */
static bool arg_known_version(struct rstore *s, struct req *r)
{
    struct centry *e = cache_find(s, r->queue);
    if (e) {
        r->snap = e->snap;
        r->snap->refs++;
    }
    return arg_fmt(r, "%llu", r->snap ? (unsigned long long)r->snap->version : 0ULL);
}

static void link_req(struct rstore *s, struct req *r)
{
    r->prev = s->tail;
    r->next = NULL;
    if (s->tail)
        s->tail->next = r;
    else
        s->head = r;
    s->tail = r;
    s->npending++;
}

static void unlink_req(struct rstore *s, struct req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        s->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        s->tail = r->prev;
    r->prev = r->next = NULL;
    s->npending--;
}

/* Calls r's callback with err and no result. The caller has marked r
 * abandoned (or is about to free it); nothing may follow that uses s. */
static void call_err(struct req *r, wr_err_t err)
{
    switch (r->op) {
    case OP_JOIN:
    case OP_STATUS:
        r->cb.entry(err, NULL, r->arg);
        break;
    case OP_ADMIT:
        r->cb.admit(err, NULL, r->arg);
        break;
    case OP_CONSUME:
    case OP_VERIFY:
        r->cb.token(err, NULL, r->arg);
        break;
    case OP_GET:
        r->cb.info(err, NULL, r->arg);
        break;
    case OP_SECRET:
        r->cb.secret(err, NULL, 0, r->arg);
        break;
    case OP_NAMES:
        r->cb.names(NULL, err, NULL, r->arg);
        break;
    case OP_LEAVE:
    case OP_PUT:
    case OP_DELETE:
    case OP_PING:
        r->cb.done(err, r->arg);
        break;
    }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata);
static void on_timeout(evutil_socket_t fd, short what, void *arg);
static void drop_connection(struct rstore *s, const char *why);

/* Flush: hiredis queues a command in its output buffer and asks libevent
 * to wait for the socket to become writable, so commands would leave only
 * after the next epoll_wait (plus an epoll_ctl to watch for writability
 * and one to stop). The first command of a loop iteration instead makes
 * flush_ev active: it runs after the events already active in this
 * iteration (the HTTP requests read together), and writes all their
 * commands in one write(2) now: one batch per iteration, as before, one
 * epoll round trip less per batch, and the watch and unwatch cancel in the
 * epoll changelist. */
static void on_flush(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct rstore *s = arg;
    if (s->ac && s->state == ST_CONNECTED && (s->ac->c.flags & REDIS_CONNECTED))
        redisAsyncHandleWrite(s->ac); /* on a write error hiredis disconnects:
                                         on_disconnect as from its own event */
}

static void schedule_flush(struct rstore *s)
{
    if (s->flush_ev && !event_pending(s->flush_ev, EV_READ, NULL))
        event_active(s->flush_ev, EV_READ, 0);
}

static int send_req(struct rstore *s, struct req *r)
{
    if (r->script >= 0) {
        const script_t *sc = &s->scripts[r->script];
        if (r->retried) {
            r->argv[0] = "EVAL";
            r->argvlen[0] = 4;
            r->argv[1] = sc->text;
            r->argvlen[1] = sc->len;
        } else {
            r->argv[0] = "EVALSHA";
            r->argvlen[0] = 7;
            r->argv[1] = sc->sha;
            r->argvlen[1] = 40;
        }
    }
    return redisAsyncCommandArgv(s->ac, on_reply, r, r->argc, r->argv, r->argvlen);
}

/* Sends r and links it; on error frees r. Never calls a callback. */
static wr_err_t submit(struct rstore *s, struct req *r)
{
    wr_err_t err = WR_OK;
    if (s->state != ST_CONNECTED || !s->ac) {
        err = WR_EUNAVAILABLE;
        goto out;
    }
    if (s->npending >= PENDING_MAX) {
        err = WR_ELIMIT;
        goto out;
    }
    /* The timer lives in the req (no allocation per command); its
     * timeout is the base's common timeout for cmd_timeout_ms, a FIFO
     * queue instead of the heap, as every command has the same one. */
    if (evtimer_assign(&r->timer_ev, s->base, on_timeout, r) != 0) {
        err = WR_ENOMEM;
        goto out;
    }
    r->timer = &r->timer_ev;
    if (send_req(s, r) != REDIS_OK) {
        err = WR_EUNAVAILABLE;
        goto out;
    }
    schedule_flush(s);
    r->s = s;
    link_req(s, r);
    struct timeval tv = ms_tv(s->cmd_timeout_ms);
    evtimer_add(r->timer, s->cmd_timeout_tv ? s->cmd_timeout_tv : &tv);
    return WR_OK;
out:
    req_free(r);
    return err;
}

static void on_ignore(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)ac;
    (void)privdata;
    redisReply *rep = reply;
    if (rep && rep->type == REDIS_REPLY_ERROR)
        wr_warn("store_redis: registry command failed: %s", rep->str);
}

/* Sends a fire-and-forget command (registry SADD/SREM) before or after a
 * script on the same connection, so both go in one round trip. */
static wr_err_t send_plain(struct rstore *s, const char *cmd, const char *key, const char *member)
{
    if (s->state != ST_CONNECTED || !s->ac)
        return WR_EUNAVAILABLE;
    if (redisAsyncCommand(s->ac, on_ignore, NULL, "%s %s %s", cmd, key, member) != REDIS_OK)
        return WR_EUNAVAILABLE;
    return WR_OK;
}

/* --------------------------------------------------------- reply parsing */

static bool is_int(const redisReply *e)
{
    return e && e->type == REDIS_REPLY_INTEGER;
}

static bool is_str(const redisReply *e)
{
    return e && e->type == REDIS_REPLY_STRING;
}

/* Checks that reply is an array of n elements of the given types
 * ('i' integer, 's' bulk string). */
static bool shape(const redisReply *reply, const char *types)
{
    size_t n = strlen(types);
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const redisReply *e = reply->element[i];
        bool ok = types[i] == 'i'   ? is_int(e)
                  : types[i] == 'a' ? e && e->type == REDIS_REPLY_ARRAY
                                    : is_str(e);
        if (!ok)
            return false;
    }
    return true;
}

/* The config of a reply: the JSON when the script sent one (parsed and
 * cached), else the req's snapshot of the version it announced. */
static wr_err_t resolve_config(struct rstore *s, struct req *r, long long version,
                               const redisReply *json, wr_queue_config_t *out)
{
    if (version <= 0)
        return WR_EPROTO;
    if (json->len == 0) {
        if (!r->snap || r->snap->version != (uint64_t)version)
            return WR_EPROTO;
        *out = r->snap->cfg;
        return WR_OK;
    }
    if (json->len > JSON_MAX)
        return WR_EPROTO;
    json_error_t jerr;
    json_t *j = json_loadb(json->str, json->len, 0, &jerr);
    if (!j) {
        wr_warn("store_redis: stored config of %s is not JSON: %s", r->queue, jerr.text);
        return WR_EPROTO;
    }
    char field[WR_FIELD_MAX + 1], msg[128];
    wr_err_t err = wr_qconfig_parse(j, out, field, sizeof field, msg, sizeof msg);
    json_decref(j);
    if (err != WR_OK) {
        wr_warn("store_redis: stored config of %s does not parse: %s: %s", r->queue, field, msg);
        return WR_EPROTO;
    }
    cache_put(s, r->queue, (uint64_t)version, out);
    return WR_OK;
}

static uint64_t u64(const redisReply *e)
{
    return e->integer < 0 ? 0 : (uint64_t)e->integer;
}

static void fill_stats(wr_queue_stats_t *st, redisReply *const *e)
{
    st->waiting = u64(e[0]);
    st->active = u64(e[1]);
    st->admitted_total = u64(e[2]);
    st->consumed_total = u64(e[3]);
    st->expired_total = u64(e[4]);
    st->left_total = u64(e[5]);
    st->rejected_full_total = u64(e[6]);
}

static void finish_entry(struct rstore *s, struct req *r, const redisReply *rep)
{
    wr_entry_t entry;
    wr_queue_config_t cfg;
    wr_err_t err = WR_EPROTO;
    memset(&entry, 0, sizeof entry);
    if (!shape(rep, "iisiisii"))
        goto out;
    redisReply *const *e = rep->element;
    long long kind = e[0]->integer;
    if (kind == -1) {
        err = WR_ENOTFOUND;
        goto out;
    }
    err = resolve_config(s, r, e[1]->integer, e[2], &cfg);
    if (err != WR_OK)
        goto out;
    entry.config = &cfg;
    err = WR_EPROTO;
    switch (kind) {
    case 1:
        if (e[3]->integer < 1 || e[4]->integer < e[3]->integer)
            goto out;
        entry.state = WR_ENTRY_WAITING;
        entry.position = u64(e[3]);
        entry.waiting = u64(e[4]);
        err = WR_OK;
        break;
    case 2:
        if (e[5]->len == 0 || e[5]->len > WR_JTI_LEN)
            goto out;
        entry.state = WR_ENTRY_ADMITTED;
        memcpy(entry.jti, e[5]->str, e[5]->len);
        entry.jti[e[5]->len] = '\0';
        entry.issued_at_us = e[6]->integer;
        entry.expires_at_us = e[7]->integer;
        err = WR_OK;
        break;
    case 3:
        entry.state = WR_ENTRY_PASSTHROUGH;
        err = WR_OK;
        break;
    case -2:
        entry.waiting = u64(e[4]);
        err = WR_EFULL;
        break;
    case -3:
        err = WR_ENOTINQUEUE;
        break;
    default:
        break;
    }
out:
    r->cb.entry(err, (err == WR_OK || err == WR_EFULL) ? &entry : NULL, r->arg);
}

static void finish_admit(struct rstore *s, struct req *r, const redisReply *rep)
{
    wr_admit_t res;
    wr_queue_config_t cfg;
    wr_err_t err = WR_EPROTO;
    int64_t *waits = NULL;
    memset(&res, 0, sizeof res);
    if (!shape(rep, "iiiisiiiiiiia"))
        goto out;
    redisReply *const *e = rep->element;
    if (e[0]->integer == -1) {
        err = WR_ENOTFOUND;
        goto out;
    }
    if (e[0]->integer != 0 || e[1]->integer < 0)
        goto out;
    err = resolve_config(s, r, e[3]->integer, e[4], &cfg);
    if (err != WR_OK)
        goto out;
    res.admitted = u64(e[1]);
    res.now_us = e[2]->integer;
    fill_stats(&res.stats, e + 5);
    res.config = &cfg;
    /* The waits of the admitted users (admit.lua's 13th element). */
    size_t nw = e[12]->elements;
    if (nw > 0 && nw == res.admitted && (waits = malloc(nw * sizeof *waits)) != NULL) {
        for (size_t i = 0; i < nw; i++) {
            const redisReply *w = e[12]->element[i];
            waits[i] = is_int(w) && w->integer > 0 ? w->integer : 0;
        }
        res.waited_us = waits;
        res.n_waited = nw;
    }
out:
    r->cb.admit(err, err == WR_OK ? &res : NULL, r->arg);
    free(waits);
}

static void finish_token(struct req *r, const redisReply *rep)
{
    wr_token_check_t res = {.passthrough = false, .reason = WR_TOKEN_OK};
    wr_err_t err = WR_EPROTO;
    if (!is_int(rep))
        goto out;
    switch (rep->integer) {
    case 0:
        err = WR_OK;
        break;
    case 1:
        res.passthrough = true;
        err = WR_OK;
        break;
    case -1:
        err = WR_ENOTFOUND;
        break;
    case -2:
        res.reason = WR_TOKEN_CONSUMED;
        err = WR_ETOKEN;
        break;
    case -3:
        res.reason = WR_TOKEN_EXPIRED;
        err = WR_ETOKEN;
        break;
    default:
        break;
    }
out:
    r->cb.token(err, (err == WR_OK || err == WR_ETOKEN) ? &res : NULL, r->arg);
}

static void finish_get(struct rstore *s, struct req *r, const redisReply *rep)
{
    wr_queue_info_t info;
    wr_queue_config_t cfg;
    wr_err_t err = WR_EPROTO;
    memset(&info, 0, sizeof info);
    if (!shape(rep, "iisiiiiiii"))
        goto out;
    redisReply *const *e = rep->element;
    if (e[0]->integer == -1) {
        err = WR_ENOTFOUND;
        goto out;
    }
    if (e[0]->integer != 0)
        goto out;
    err = resolve_config(s, r, e[1]->integer, e[2], &cfg);
    if (err != WR_OK)
        goto out;
    info.name = r->queue;
    info.config = &cfg;
    fill_stats(&info.stats, e + 3);
out:
    r->cb.info(err, err == WR_OK ? &info : NULL, r->arg);
}

/* -1 no queue, -3 not in queue, 0 ok (leave, delete). */
static void finish_done_code(struct rstore *s, struct req *r, const redisReply *rep)
{
    wr_err_t err = WR_EPROTO;
    if (is_int(rep)) {
        if (rep->integer == 0)
            err = WR_OK;
        else if (rep->integer == -1)
            err = WR_ENOTFOUND;
        else if (rep->integer == -3 && r->op == OP_LEAVE)
            err = WR_ENOTINQUEUE;
    }
    if (r->op == OP_DELETE && (err == WR_OK || err == WR_ENOTFOUND))
        cache_remove(s, r->queue);
    r->cb.done(err, r->arg);
}

static void finish(struct rstore *s, struct req *r, const redisReply *rep)
{
    if (!rep) {
        call_err(r, WR_EUNAVAILABLE);
        return;
    }
    if (rep->type == REDIS_REPLY_ERROR) {
        wr_warn("store_redis: %s on %s failed: %.*s",
                r->script >= 0 ? script_files[r->script].file : "command", r->queue,
                (int)(rep->len > 200 ? 200 : rep->len), rep->str);
        call_err(r, WR_EPROTO);
        return;
    }
    switch (r->op) {
    case OP_JOIN:
    case OP_STATUS:
        finish_entry(s, r, rep);
        break;
    case OP_ADMIT:
        finish_admit(s, r, rep);
        break;
    case OP_CONSUME:
    case OP_VERIFY:
        finish_token(r, rep);
        break;
    case OP_GET:
        finish_get(s, r, rep);
        break;
    case OP_LEAVE:
    case OP_DELETE:
        finish_done_code(s, r, rep);
        break;
    case OP_PUT:
        r->cb.done(is_int(rep) && rep->integer > 0 ? WR_OK : WR_EPROTO, r->arg);
        break;
    case OP_PING:
        r->cb.done(rep->type == REDIS_REPLY_STATUS ? WR_OK : WR_EPROTO, r->arg);
        break;
    case OP_SECRET:
        if (is_str(rep) && rep->len > 0 && rep->len <= WR_SECRET_MAX)
            r->cb.secret(WR_OK, (const uint8_t *)rep->str, rep->len, r->arg);
        else
            r->cb.secret(WR_EPROTO, NULL, 0, r->arg);
        break;
    case OP_NAMES:
        r->cb.names(s, WR_OK, rep, r->arg);
        break;
    }
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Durability mode: keeps a copy of the script's reply in r and sends
 * WAIT on the same connection (r stays linked: FIFO order holds). The
 * request's timer is re-armed for the command timeout plus the WAIT
 * timeout. Returns false (answer now, without WAIT) if that fails. */
static bool start_wait(struct rstore *s, struct req *r, const redisReply *rep)
{
    r->held = reply_copy(rep, 0);
    if (!r->held)
        return false;
    if (redisAsyncCommand(s->ac, on_reply, r, "WAIT %u %u", (unsigned)s->wait_replicas,
                          (unsigned)s->wait_timeout_ms) != REDIS_OK) {
        reply_free(r->held);
        r->held = NULL;
        return false;
    }
    r->waiting = true;
    if (r->timer) {
        struct timeval tv = ms_tv((uint64_t)s->cmd_timeout_ms + s->wait_timeout_ms);
        evtimer_add(r->timer, &tv);
    }
    return true;
}

/* Durability mode: WAIT only after a write whose loss a failover must not
 * undo - a consume that burned a token (token.lua answers 0) or a tick that
 * admitted someone (admit.lua: code 0, admitted > 0). WAIT blocks this one
 * connection, so every other command queued behind it waits too: an idle
 * tick or a refused consume must not pay that. */
static bool wants_wait(const struct req *r, const redisReply *rep)
{
    if (!rep)
        return false;
    if (r->op == OP_CONSUME)
        return rep->type == REDIS_REPLY_INTEGER && rep->integer == 0;
    if (r->op == OP_ADMIT)
        return rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2 &&
               rep->element[0]->type == REDIS_REPLY_INTEGER && rep->element[0]->integer == 0 &&
               rep->element[1]->type == REDIS_REPLY_INTEGER && rep->element[1]->integer > 0;
    return false;
}

/* Counts and (at most every 10 s) logs the outcome of a WAIT. */
static void wait_done(struct rstore *s, const redisReply *rep)
{
    bool ok =
        rep && rep->type == REDIS_REPLY_INTEGER && rep->integer >= (long long)s->wait_replicas;
    if (s->metrics)
        wr_metrics_inc(s->metrics, "waitroom_redis_wait_total",
                       ok ? "result=\"ok\"" : "result=\"short\"", 1);
    if (ok)
        return;
    int64_t now = mono_ms();
    if (s->wait_log_ms == 0 || now - s->wait_log_ms >= 10000) {
        s->wait_log_ms = now;
        if (rep && rep->type == REDIS_REPLY_INTEGER)
            wr_warn("store_redis: WAIT: %lld of %u replicas acknowledged within %u ms; the "
                    "operation stands (applied on the primary)",
                    rep->integer, (unsigned)s->wait_replicas, (unsigned)s->wait_timeout_ms);
        else
            wr_warn("store_redis: WAIT failed (%s); the operation stands (applied on the primary)",
                    rep && rep->str ? rep->str : "disconnected");
    }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct req *r = privdata;
    redisReply *rep = reply;
    struct rstore *s = r->s;
    if (!s) { /* orphaned by close(): its callback already ran */
        req_free(r);
        return;
    }
    if (rep && rep->type == REDIS_REPLY_ERROR && r->script >= 0 && !r->retried &&
        strncmp(rep->str, "NOSCRIPT", 8) == 0) {
        /* Script cache lost (SCRIPT FLUSH, restart, failover): exactly one
         * EVAL of this request, which also reloads the script. */
        r->retried = true;
        if (s->ac == ac && s->state == ST_CONNECTED && send_req(s, r) == REDIS_OK)
            return;
        rep = NULL;
    }
    if (r->waiting) {
        /* The WAIT of the durability mode answered (or the connection
         * dropped): the operation stands either way; answer the script's
         * reply, counting a shortfall. */
        wait_done(s, rep);
        rep = r->held;
    } else if (s->wait_replicas > 0 && wants_wait(r, rep) && !r->abandoned && s->ac == ac &&
               s->state == ST_CONNECTED && start_wait(s, r, rep)) {
        return; /* answered when WAIT returns */
    }
    unlink_req(s, r);
    if (r->timer) {
        event_del(r->timer);
        r->timer = NULL;
    }
    if (!r->abandoned) {
        r->abandoned = true;
        finish(s, r, rep); /* calls the user callback last */
    }
    req_free(r);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct req *r = arg;
    struct rstore *s = r->s;
    if (!r->abandoned) {
        r->abandoned = true;
        struct timeval tv = ms_tv(2 * (uint64_t)s->cmd_timeout_ms);
        evtimer_add(r->timer, &tv);
        call_err(r, WR_ETIMEOUT); /* last: the callback may close the store */
        return;
    }
    /* Unanswered 2x the timeout after it timed out: Redis is hung. Dropping
     * the connection answers (frees) this req and every other pending one. */
    drop_connection(s, "command overdue, connection looks hung");
}

/* ----------------------------------------------------------- connection */

static void start_connect(struct rstore *s);

static void schedule_reconnect(struct rstore *s)
{
    uint32_t base = s->backoff_ms;
    /* +/-20% jitter */
    int64_t span = (int64_t)base * 40 / 100;
    int64_t delay = (int64_t)base - (int64_t)base * 20 / 100;
    if (span > 0)
        delay += (int64_t)(rng_next(s) % (uint64_t)(span + 1));
    uint64_t next = (uint64_t)s->backoff_ms * 2;
    s->backoff_ms = next > s->reconnect_max_ms ? s->reconnect_max_ms : (uint32_t)next;
    struct timeval tv = ms_tv((uint64_t)delay);
    evtimer_add(s->retry_timer, &tv);
}

/* Lets go of the current context: pending reqs answer WR_EUNAVAILABLE (or
 * are freed if abandoned), a reconnect is scheduled. The store's state is
 * settled before hiredis runs any callback. */
static void drop_connection(struct rstore *s, const char *why)
{
    redisAsyncContext *ac = s->ac;
    wr_warn("store_redis: dropping connection: %s", why);
    s->ac = NULL;
    s->state = ST_DISCONNECTED;
    evtimer_del(s->conn_timer);
    schedule_reconnect(s);
    if (ac) {
        ac->data = NULL;
        redisAsyncFree(ac);
    }
}

static void on_handshake(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)privdata;
    struct rstore *s = ac->data;
    redisReply *rep = reply;
    if (!s || !rep || s->ac != ac)
        return; /* dropped or disconnecting: handled elsewhere */
    if (rep->type == REDIS_REPLY_ERROR) {
        wr_error("store_redis: handshake failed: %s", rep->str);
        drop_connection(s, "handshake failed");
        return;
    }
    evtimer_del(s->conn_timer);
    s->state = ST_CONNECTED;
    s->backoff_ms = BACKOFF_MIN_MS;
    wr_info("store_redis: connected");
}

static void on_connect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    struct rstore *s = ac->data;
    if (!s)
        return;
    if (status != REDIS_OK) {
        /* hiredis frees the context after this returns */
        wr_warn("store_redis: connect failed: %s", ac->errstr);
        ac->data = NULL;
        s->ac = NULL;
        s->state = ST_DISCONNECTED;
        evtimer_del(s->conn_timer);
        schedule_reconnect(s);
    }
}

static void on_disconnect(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    struct rstore *s = ac->data;
    if (!s)
        return;
    /* hiredis frees the context after this returns */
    wr_warn("store_redis: disconnected: %s", status == REDIS_OK ? "closed" : ac->errstr);
    ac->data = NULL;
    s->ac = NULL;
    s->state = ST_DISCONNECTED;
    evtimer_del(s->conn_timer);
    schedule_reconnect(s);
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

static void start_connect(struct rstore *s)
{
    redisAsyncContext *ac =
        s->is_unix ? redisAsyncConnectUnix(s->path) : redisAsyncConnect(s->host, s->port);
    if (!ac || ac->err) {
        wr_warn("store_redis: connect failed: %s", ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        schedule_reconnect(s);
        return;
    }
    if (redisLibeventAttach(ac, s->base) != REDIS_OK) {
        redisAsyncFree(ac);
        schedule_reconnect(s);
        return;
    }
    ac->data = s;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    s->ac = ac;
    s->state = ST_CONNECTING;
    int rc = s->db >= 0 ? redisAsyncCommand(ac, on_handshake, NULL, "SELECT %d", s->db)
                        : redisAsyncCommand(ac, on_handshake, NULL, "PING");
    if (rc != REDIS_OK) {
        drop_connection(s, "handshake not sent");
        return;
    }
    struct timeval tv = ms_tv(s->connect_timeout_ms);
    evtimer_add(s->conn_timer, &tv);
}

/* redis://HOST[:PORT][/DB] or unix:///PATH[?db=N] */
static wr_err_t parse_url(struct rstore *s, const char *url)
{
    s->db = -1;
    s->port = 6379;
    if (!url)
        return WR_EINVAL;
    if (strncmp(url, "unix://", 7) == 0) {
        const char *p = url + 7;
        const char *q = strchr(p, '?');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n == 0 || n > PATH_MAX_LEN || p[0] != '/')
            return WR_EINVAL;
        memcpy(s->path, p, n);
        s->path[n] = '\0';
        if (q) {
            char *end;
            if (strncmp(q, "?db=", 4) != 0 || !q[4])
                return WR_EINVAL;
            long db = strtol(q + 4, &end, 10);
            if (*end || db < 0 || db > 100000)
                return WR_EINVAL;
            s->db = (int)db;
        }
        s->is_unix = true;
        return WR_OK;
    }
    if (strncmp(url, "redis://", 8) != 0)
        return WR_EINVAL;
    const char *h = url + 8;
    size_t hn = strcspn(h, ":/");
    if (hn == 0 || hn > HOST_MAX)
        return WR_EINVAL;
    memcpy(s->host, h, hn);
    s->host[hn] = '\0';
    const char *p = h + hn;
    char *end;
    if (*p == ':') {
        long port = strtol(p + 1, &end, 10);
        if (end == p + 1 || port < 1 || port > 65535 || (*end && *end != '/'))
            return WR_EINVAL;
        s->port = (int)port;
        p = end;
    }
    if (*p == '/') {
        if (p[1]) {
            long db = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end || db < 0 || db > 100000)
                return WR_EINVAL;
            s->db = (int)db;
        }
    } else if (*p) {
        return WR_EINVAL;
    }
    return WR_OK;
}

static wr_err_t load_scripts(struct rstore *s)
{
    const wr_embed_file_t *lib = wr_embed_find("scripts/lib.lua");
    if (!lib)
        return WR_EINVAL;
    for (int i = 0; i < SC_COUNT; i++) {
        const wr_embed_file_t *f = wr_embed_find(script_files[i].file);
        if (!f)
            return WR_EINVAL;
        size_t prefix = script_files[i].with_lib ? lib->len + 1 : 0;
        script_t *sc = &s->scripts[i];
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

static void rstore_free(struct rstore *s)
{
    for (int i = 0; i < SC_COUNT; i++)
        free(s->scripts[i].text);
    cache_free(s);
    if (s->conn_timer)
        event_free(s->conn_timer);
    if (s->retry_timer)
        event_free(s->retry_timer);
    if (s->flush_ev)
        event_free(s->flush_ev);
    free(s);
}

wr_err_t wr_store_redis_open(struct event_base *base, const wr_store_redis_opts_t *opts,
                             wr_store_t **out)
{
    wr_err_t err;
    if (!base || !opts || !out)
        return WR_EINVAL;
    struct rstore *s = calloc(1, sizeof *s);
    if (!s)
        return WR_ENOMEM;
    s->base_.ops = &redis_ops;
    s->base = base;
    err = parse_url(s, opts->url);
    if (err != WR_OK)
        goto out;
    s->cmd_timeout_ms = opts->command_timeout_ms ? opts->command_timeout_ms : 250;
    s->connect_timeout_ms = opts->connect_timeout_ms ? opts->connect_timeout_ms : 1000;
    s->reconnect_max_ms = opts->reconnect_max_ms ? opts->reconnect_max_ms : 2000;
    s->wait_replicas = opts->wait_replicas;
    s->wait_timeout_ms = opts->wait_timeout_ms ? opts->wait_timeout_ms : 100;
    s->metrics = opts->metrics;
    if (s->metrics && s->wait_replicas > 0) {
        wr_metrics_describe(s->metrics, "waitroom_redis_wait_total", WR_METRIC_COUNTER,
                            "WAIT after consume/admission, by result (ok; short: fewer "
                            "replicas acknowledged, the operation stands).");
        wr_metrics_inc(s->metrics, "waitroom_redis_wait_total", "result=\"ok\"", 0);
        wr_metrics_inc(s->metrics, "waitroom_redis_wait_total", "result=\"short\"", 0);
    }
    if (s->reconnect_max_ms < BACKOFF_MIN_MS)
        s->reconnect_max_ms = BACKOFF_MIN_MS;
    s->backoff_ms = BACKOFF_MIN_MS;
    struct timeval now;
    gettimeofday(&now, NULL);
    s->rng = ((uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_usec) ^ (uintptr_t)s;
    if (!s->rng)
        s->rng = 88172645463325252ULL;
    err = load_scripts(s);
    if (err != WR_OK)
        goto out;
    s->conn_timer = evtimer_new(base, on_conn_timeout, s);
    s->retry_timer = evtimer_new(base, on_retry, s);
    s->flush_ev = event_new(base, -1, 0, on_flush, s);
    {
        struct timeval tv = ms_tv(s->cmd_timeout_ms);
        s->cmd_timeout_tv = event_base_init_common_timeout(base, &tv); /* NULL: plain timeouts */
    }
    if (!s->conn_timer || !s->retry_timer || !s->flush_ev) {
        err = WR_ENOMEM;
        goto out;
    }
    s->state = ST_DISCONNECTED;
    start_connect(s);
    *out = &s->base_;
    return WR_OK;
out:
    rstore_free(s);
    return err;
}

bool wr_store_redis_connected(wr_store_t *st)
{
    struct rstore *s = (struct rstore *)st;
    return s && st->ops == &redis_ops && s->state == ST_CONNECTED;
}

static void r_close(wr_store_t *st)
{
    struct rstore *s = (struct rstore *)st;
    if (!s || s->state == ST_CLOSED)
        return; /* a second close (from a callback run by close) is a no-op */
    s->state = ST_CLOSED;
    evtimer_del(s->conn_timer);
    evtimer_del(s->retry_timer);
    /* Cancel in send order; each req stays allocated (orphaned) until
     * hiredis calls it back below. */
    while (s->head) {
        struct req *r = s->head;
        unlink_req(s, r);
        r->s = NULL;
        if (r->timer) {
            event_del(r->timer);
            r->timer = NULL;
        }
        if (!r->abandoned) {
            r->abandoned = true;
            call_err(r, WR_ECANCELED);
        }
    }
    redisAsyncContext *ac = s->ac;
    s->ac = NULL;
    if (ac) {
        ac->data = NULL;
        redisAsyncFree(ac); /* deferred by hiredis when inside its callback */
    }
    rstore_free(s);
}

/* ------------------------------------------------------------ operations */

static wr_err_t r_entry(wr_store_t *st, const char *q, const char *u, bool join,
                        wr_store_entry_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!valid_queue(q) || !valid_user(u) || !cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    struct req *r = req_new(join ? OP_JOIN : OP_STATUS, SC_ENTRY, strlen(u));
    if (!r)
        return WR_ENOMEM;
    r->cb.entry = cb;
    r->arg = arg;
    if (!arg_queue_keys(r, q) || !arg_str(r, u) || !arg_known_version(s, r) ||
        !arg_str(r, join ? "1" : "0")) {
        req_free(r);
        return WR_EINVAL;
    }
    return submit(s, r);
}

static wr_err_t r_join(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                       void *arg)
{
    return r_entry(st, q, u, true, cb, arg);
}

static wr_err_t r_status(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                         void *arg)
{
    return r_entry(st, q, u, false, cb, arg);
}

static wr_err_t r_leave(wr_store_t *st, const char *q, const char *u, wr_store_done_cb cb,
                        void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!valid_queue(q) || !valid_user(u) || !cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    struct req *r = req_new(OP_LEAVE, SC_LEAVE, strlen(u));
    if (!r)
        return WR_ENOMEM;
    r->cb.done = cb;
    r->arg = arg;
    if (!arg_queue_keys(r, q) || !arg_str(r, u)) {
        req_free(r);
        return WR_EINVAL;
    }
    return submit(s, r);
}

static wr_err_t r_admit(wr_store_t *st, const char *q, wr_store_admit_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!valid_queue(q) || !cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    uint8_t seed[16];
    char hex[33];
    if (wr_token_random(seed, sizeof seed) != WR_OK)
        return WR_EIO;
    for (size_t i = 0; i < sizeof seed; i++)
        snprintf(hex + 2 * i, 3, "%02x", seed[i]);
    struct req *r = req_new(OP_ADMIT, SC_ADMIT, 0);
    if (!r)
        return WR_ENOMEM;
    r->cb.admit = cb;
    r->arg = arg;
    if (!arg_queue_keys(r, q) || !arg_str(r, hex) || !arg_known_version(s, r)) {
        req_free(r);
        return WR_EINVAL;
    }
    return submit(s, r);
}

static wr_err_t r_token(wr_store_t *st, const char *q, const char *u, const char *jti, bool consume,
                        wr_store_token_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!valid_queue(q) || !valid_user(u) || !jti ||
        strnlen(jti, WR_TOKEN_MAX + 1) > WR_TOKEN_MAX || !cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    struct req *r = req_new(consume ? OP_CONSUME : OP_VERIFY, SC_TOKEN, strlen(u) + strlen(jti));
    if (!r)
        return WR_ENOMEM;
    r->cb.token = cb;
    r->arg = arg;
    if (!arg_queue_keys(r, q) || !arg_str(r, u) || !arg_str(r, jti) ||
        !arg_str(r, consume ? "1" : "0")) {
        req_free(r);
        return WR_EINVAL;
    }
    return submit(s, r);
}

static wr_err_t r_consume(wr_store_t *st, const char *q, const char *u, const char *jti,
                          wr_store_token_cb cb, void *arg)
{
    return r_token(st, q, u, jti, true, cb, arg);
}

static wr_err_t r_verify(wr_store_t *st, const char *q, const char *u, const char *jti,
                         wr_store_token_cb cb, void *arg)
{
    return r_token(st, q, u, jti, false, cb, arg);
}

static wr_err_t r_config_put(wr_store_t *st, const char *q, const wr_queue_config_t *cfg,
                             wr_store_done_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    wr_err_t err = WR_OK;
    char *json = NULL;
    struct req *r = NULL;
    if (!valid_queue(q) || !cfg || !cb || cfg->tick_ms < 1 || !(cfg->admit_per_second >= 0) ||
        cfg->admit_per_second > 1e9)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    json_t *j = wr_qconfig_to_json(cfg);
    if (!j)
        return WR_ENOMEM;
    /* Store only what reads back: every reader parses this JSON. */
    wr_queue_config_t check;
    char field[WR_FIELD_MAX + 1], msg[128];
    if (wr_qconfig_parse(j, &check, field, sizeof field, msg, sizeof msg) != WR_OK) {
        json_decref(j);
        return WR_EINVAL;
    }
    json = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!json)
        return WR_ENOMEM;
    size_t jlen = strlen(json);
    if (jlen > JSON_MAX) {
        err = WR_ELIMIT;
        goto out;
    }
    r = req_new(OP_PUT, SC_PUT, jlen);
    if (!r) {
        err = WR_ENOMEM;
        goto out;
    }
    r->cb.done = cb;
    r->arg = arg;
    if (!arg_queue_keys(r, q) || !arg_bin(r, json, jlen) || !arg_str(r, cfg->enabled ? "1" : "0") ||
        !arg_str(r, cfg->paused ? "1" : "0") || !arg_fmt(r, "%.17g", cfg->admit_per_second) ||
        !arg_fmt(r, "%u", (unsigned)cfg->tick_ms) ||
        !arg_fmt(r, "%llu", (unsigned long long)cfg->max_active) ||
        !arg_fmt(r, "%llu", (unsigned long long)cfg->max_queue_size) ||
        !arg_fmt(r, "%u", (unsigned)cfg->token_ttl_seconds)) {
        err = WR_EINVAL;
        goto out;
    }
    /* Registry first: a crash between the two leaves a name whose config
     * does not exist, which queue_list filters out. */
    err = send_plain(s, "SADD", "wr:queues", q);
    if (err != WR_OK)
        goto out;
    err = submit(s, r);
    r = NULL; /* submit owns it */
out:
    req_free(r);
    free(json);
    return err;
}

static wr_err_t r_queue_get(wr_store_t *st, const char *q, wr_store_info_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!valid_queue(q) || !cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    struct req *r = req_new(OP_GET, SC_GET, 0);
    if (!r)
        return WR_ENOMEM;
    r->cb.info = cb;
    r->arg = arg;
    if (!arg_queue_keys(r, q) || !arg_known_version(s, r)) {
        req_free(r);
        return WR_EINVAL;
    }
    return submit(s, r);
}

static wr_err_t r_queue_delete(wr_store_t *st, const char *q, wr_store_done_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!valid_queue(q) || !cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    struct req *r = req_new(OP_DELETE, SC_DELETE, 0);
    if (!r)
        return WR_ENOMEM;
    r->cb.done = cb;
    r->arg = arg;
    if (!arg_queue_keys(r, q)) {
        req_free(r);
        return WR_EINVAL;
    }
    wr_err_t err = submit(s, r);
    if (err != WR_OK)
        return err;
    /* After the script, on the same connection. If this is lost, the
     * stale name is filtered by queue_list. */
    (void)send_plain(s, "SREM", "wr:queues", q);
    return WR_OK;
}

/* queue_list: SMEMBERS wr:queues, then one queue_get per name (pipelined);
 * names without a config are skipped; the answer is sorted by name. */
struct list_item {
    struct list_ctx *ctx;
    bool ok;
    char name[WR_QUEUE_NAME_MAX + 1];
    wr_queue_config_t cfg;
    wr_queue_stats_t stats;
};

struct list_ctx {
    wr_store_list_cb cb;
    void *arg;
    wr_err_t err;
    size_t n, outstanding;
    struct list_item *items;
};

static int cmp_item(const void *a, const void *b)
{
    const struct list_item *x = a, *y = b;
    if (x->ok != y->ok)
        return x->ok ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* All sub-operations answered: call the user once and free. */
static void list_finish(struct list_ctx *ctx)
{
    wr_queue_info_t *infos = NULL;
    size_t k = 0;
    wr_err_t err = ctx->err;
    if (err == WR_OK && ctx->n > 0) {
        qsort(ctx->items, ctx->n, sizeof ctx->items[0], cmp_item);
        infos = calloc(ctx->n, sizeof *infos);
        if (!infos)
            err = WR_ENOMEM;
        for (size_t i = 0; infos && i < ctx->n && ctx->items[i].ok; i++, k++) {
            infos[k].name = ctx->items[i].name;
            infos[k].config = &ctx->items[i].cfg;
            infos[k].stats = ctx->items[i].stats;
        }
    }
    if (err == WR_OK)
        ctx->cb(WR_OK, infos, k, ctx->arg);
    else
        ctx->cb(err, NULL, 0, ctx->arg);
    free(infos);
    free(ctx->items);
    free(ctx);
}

static void on_list_item(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    struct list_item *it = arg;
    struct list_ctx *ctx = it->ctx;
    if (err == WR_OK) {
        it->ok = true;
        it->cfg = *info->config;
        it->stats = info->stats;
    } else if (err != WR_ENOTFOUND && ctx->err == WR_OK) {
        ctx->err = err;
    }
    if (--ctx->outstanding == 0)
        list_finish(ctx);
}

static void on_list_names(struct rstore *s, wr_err_t err, const redisReply *rep, void *arg)
{
    struct list_ctx *ctx = arg;
    if (err != WR_OK) {
        ctx->err = err;
        list_finish(ctx);
        return;
    }
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        ctx->err = WR_EPROTO;
        list_finish(ctx);
        return;
    }
    if (rep->elements > LIST_MAX) {
        ctx->err = WR_ELIMIT;
        list_finish(ctx);
        return;
    }
    if (rep->elements > 0) {
        ctx->items = calloc(rep->elements, sizeof *ctx->items);
        if (!ctx->items) {
            ctx->err = WR_ENOMEM;
            list_finish(ctx);
            return;
        }
    }
    ctx->n = rep->elements;
    ctx->outstanding = 1; /* held by this function until the loop ends */
    for (size_t i = 0; i < rep->elements; i++) {
        const redisReply *e = rep->element[i];
        struct list_item *it = &ctx->items[i];
        it->ctx = ctx;
        if (!is_str(e)) {
            if (ctx->err == WR_OK)
                ctx->err = WR_EPROTO;
            continue;
        }
        if (e->len > WR_QUEUE_NAME_MAX)
            continue; /* not a queue name of ours */
        memcpy(it->name, e->str, e->len);
        it->name[e->len] = '\0';
        if (!valid_queue(it->name))
            continue;
        wr_err_t e2 = r_queue_get(&s->base_, it->name, on_list_item, it);
        if (e2 == WR_OK)
            ctx->outstanding++;
        else if (ctx->err == WR_OK)
            ctx->err = e2;
    }
    if (--ctx->outstanding == 0)
        list_finish(ctx);
}

static wr_err_t r_queue_list(wr_store_t *st, wr_store_list_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    struct list_ctx *ctx = calloc(1, sizeof *ctx);
    struct req *r = req_new(OP_NAMES, -1, 0);
    if (!ctx || !r) {
        free(ctx);
        req_free(r);
        return WR_ENOMEM;
    }
    ctx->cb = cb;
    ctx->arg = arg;
    r->cb.names = on_list_names;
    r->arg = ctx;
    if (!arg_str(r, "SMEMBERS") || !arg_str(r, "wr:queues")) {
        free(ctx);
        req_free(r);
        return WR_EINVAL;
    }
    wr_err_t err = submit(s, r);
    if (err != WR_OK)
        free(ctx);
    return err;
}

static wr_err_t r_secret(wr_store_t *st, const uint8_t *proposed, size_t len, wr_store_secret_cb cb,
                         void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!proposed || len == 0 || len > WR_SECRET_MAX || !cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    struct req *r = req_new(OP_SECRET, SC_SECRET, len);
    if (!r)
        return WR_ENOMEM;
    r->cb.secret = cb;
    r->arg = arg;
    if (!arg_str(r, "1") || !arg_str(r, "wr:secret") || !arg_bin(r, proposed, len)) {
        req_free(r);
        return WR_EINVAL;
    }
    return submit(s, r);
}

static wr_err_t r_ping(wr_store_t *st, wr_store_done_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!cb)
        return WR_EINVAL;
    if (s->state != ST_CONNECTED)
        return WR_EUNAVAILABLE;
    struct req *r = req_new(OP_PING, -1, 0);
    if (!r)
        return WR_ENOMEM;
    r->cb.done = cb;
    r->arg = arg;
    if (!arg_str(r, "PING")) {
        req_free(r);
        return WR_EINVAL;
    }
    return submit(s, r);
}

static const wr_store_ops_t redis_ops = {
    .name = "redis",
    .join = r_join,
    .status = r_status,
    .leave = r_leave,
    .admit = r_admit,
    .consume = r_consume,
    .verify = r_verify,
    .config_put = r_config_put,
    .queue_get = r_queue_get,
    .queue_list = r_queue_list,
    .queue_delete = r_queue_delete,
    .secret = r_secret,
    .ping = r_ping,
    .debug_advance_time = NULL,
    .close = r_close,
};
