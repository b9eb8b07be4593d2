/*
 * http.c - the server: the listener, the connection cap, accept errors and
 * the sweep of deadlines. Each accepted socket goes to the connection
 * layer (http_conn.c) with this server's environment (handler, limits,
 * free lists, counters).
 *
 * The event base is the caller's (created with
 * EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST by main).
 *
 * Connection cap: the layer calls conn_gone after each close; at the cap
 * the listener is disabled, so excess clients wait in the kernel's
 * backlog, and it is enabled again below the cap.
 *
 * Out of descriptors (accept fails with EMFILE, ENFILE, ENOBUFS or
 * ENOMEM): libevent would call accept again at once, spinning while the
 * pending connection stays in the backlog. The listener's error callback
 * pauses it for BACKOFF_MS instead and logs at most one line a second
 * (with the number of failures since the last line); the pause ends by a
 * timer, and the listener is enabled again unless the cap holds it.
 *
 * Deadlines: one timer every SWEEP_MS runs wr_http_env_sweep (408, idle
 * and stalled connections, the grace after an error).
 *
 * Shared port (opts->reuse_port, --reuse-port): the listener is bound with
 * LEV_OPT_REUSEABLE_PORT (SO_REUSEPORT), so several waitroomd processes
 * on one Redis bind one address and the kernel spreads new connections
 * among them (by a hash of the connection's addresses); each process keeps
 * its own connection cap on its own listener.
 */
#include "http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "base/log.h"

#define SWEEP_MS       100
#define BACKOFF_MS     100     /* listener pause after accept ran out of descriptors */
#define BACKOFF_LOG_US 1000000 /* at most one log line per second about it */

struct wr_http {
    wr_http_env_t env;
    struct evconnlistener *listener;
    size_t max_conns;
    struct event *sweep;
    bool paused;
    bool stopped;
    struct event *backoff_ev;  /* ends an accept backoff */
    bool backoff;              /* the listener is paused after an accept error */
    int64_t backoff_log_us;    /* last log line about accept errors */
    uint64_t backoff_unlogged; /* accept errors since that line */
};

static void set_paused(wr_http_t *h, bool pause)
{
    if (!h->listener || h->paused == pause)
        return;
    if (pause) {
        evconnlistener_disable(h->listener);
        h->env.counters.cap_pauses++;
        wr_warn("connection cap reached (%zu); pausing accept", h->max_conns);
    } else if (!h->backoff) {
        evconnlistener_enable(h->listener);
    }
    h->paused = pause;
}

static void conn_gone(void *owner)
{
    wr_http_t *h = owner;
    if (!h->stopped && h->env.n_conns < h->max_conns)
        set_paused(h, false);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    (void)l;
    wr_http_t *h = arg;
    if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    wr_http_conn_open(&h->env, fd, sa, (socklen_t)salen);
    if (h->env.n_conns >= h->max_conns)
        set_paused(h, true);
}

/* ---- accept errors: back off ---- */

static void backoff_end_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_http_t *h = arg;
    h->backoff = false;
    if (h->listener && !h->paused && !h->stopped)
        evconnlistener_enable(h->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *ctx)
{
    int err = EVUTIL_SOCKET_ERROR();
    wr_http_t *h = ctx;
    if (h->stopped)
        return;
    h->env.counters.accept_errors++;
    h->backoff_unlogged++;
    evconnlistener_disable(l);
    h->backoff = true;
    struct timeval tv = {0, BACKOFF_MS * 1000};
    evtimer_add(h->backoff_ev, &tv);
    int64_t now = wr_clock_mono_us();
    if (h->backoff_log_us == 0 || now - h->backoff_log_us >= BACKOFF_LOG_US) {
        wr_warn("accept failed: %s (%llu time%s since the last such line); pausing accept for "
                "%d ms",
                evutil_socket_error_to_string(err), (unsigned long long)h->backoff_unlogged,
                h->backoff_unlogged == 1 ? "" : "s", BACKOFF_MS);
        h->backoff_log_us = now;
        h->backoff_unlogged = 0;
    }
}

static void sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_http_t *h = arg;
    wr_http_env_sweep(&h->env, wr_clock_mono_us());
}

static wr_err_t split_addr(const char *listen, char *host, size_t hcap, uint16_t *port)
{
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen)
        return WR_EINVAL;
    const char *hs = listen;
    size_t hl = (size_t)(colon - listen);
    if (hs[0] == '[') {
        if (hl < 2 || hs[hl - 1] != ']')
            return WR_EINVAL;
        hs++;
        hl -= 2;
    }
    if (hl == 0 || hl >= hcap)
        return WR_EINVAL;
    memcpy(host, hs, hl);
    host[hl] = 0;
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || p < 0 || p > 65535)
        return WR_EINVAL;
    *port = (uint16_t)p;
    return WR_OK;
}

/* The listener on the first address host resolves to (SO_REUSEADDR,
 * SO_REUSEPORT when asked, backlog 128). NULL on failure: *bad_host set
 * when host names no address (999.1.1.1, a name that does not exist: a
 * restart cannot help), else errno set (a resolver's temporary failure is
 * EAGAIN). */
static struct evconnlistener *bind_listener(wr_http_t *h, const char *host, uint16_t port,
                                            bool reuse_port, bool *bad_host)
{
    struct evutil_addrinfo hints = {0}, *ai = NULL;
    char ports[8];
    snprintf(ports, sizeof(ports), "%u", (unsigned)port);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = EVUTIL_AI_PASSIVE | EVUTIL_AI_ADDRCONFIG;
    int gai = evutil_getaddrinfo(host, ports, &hints, &ai);
    if (gai == EVUTIL_EAI_AGAIN || gai == EVUTIL_EAI_MEMORY || gai == EVUTIL_EAI_SYSTEM) {
        errno = gai == EVUTIL_EAI_MEMORY ? ENOMEM : gai == EVUTIL_EAI_AGAIN ? EAGAIN : errno;
        return NULL;
    }
    if (gai != 0 || !ai) {
        if (ai)
            evutil_freeaddrinfo(ai);
        *bad_host = true;
        return NULL;
    }
    unsigned flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE;
    if (reuse_port)
        flags |= LEV_OPT_REUSEABLE_PORT;
    struct evconnlistener *l = evconnlistener_new_bind(h->env.base, on_accept, h, flags, 128,
                                                       ai->ai_addr, (int)ai->ai_addrlen);
    int e = errno;
    evutil_freeaddrinfo(ai);
    errno = e;
    return l;
}

static void bound_text(evutil_socket_t fd, const char *listen, char *bound, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char a[INET6_ADDRSTRLEN] = "";
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
        snprintf(bound, cap, "%s", listen);
    } else if (ss.ss_family == AF_INET) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
        snprintf(bound, cap, "%s:%u", a, (unsigned)ntohs(sin->sin_port));
    } else {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
        snprintf(bound, cap, "[%s]:%u", a, (unsigned)ntohs(sin6->sin6_port));
    }
}

static void free_parts(wr_http_t *h)
{
    if (h->sweep)
        event_free(h->sweep);
    if (h->backoff_ev)
        event_free(h->backoff_ev);
    free(h);
}

wr_err_t wr_http_open(const wr_http_opts_t *opts, wr_http_t **out, char *bound, size_t cap)
{
    char host[256];
    uint16_t port;
    if (split_addr(opts->listen, host, sizeof(host), &port) != WR_OK)
        return WR_EINVAL;
    wr_http_t *h = calloc(1, sizeof(*h));
    if (!h)
        return WR_ENOMEM;
    h->max_conns = opts->max_connections ? opts->max_connections : 10000;
    /* The whole-request deadline never exceeds the read timeout. */
    uint32_t rt = opts->request_timeout_seconds ? opts->request_timeout_seconds : 10;
    uint32_t io = opts->timeout_seconds ? opts->timeout_seconds : 30;
    h->env.base = opts->base;
    h->env.handler = opts->handler;
    h->env.handler_arg = opts->handler_arg;
    h->env.body_limit = opts->body_limit;
    h->env.max_conn_requests = opts->max_conn_requests;
    h->env.request_timeout_us = (int64_t)(rt < io ? rt : io) * 1000000;
    h->env.io_timeout_us = (int64_t)io * 1000000;
    h->env.conn_gone = conn_gone;
    h->env.owner = h;
    wr_http_env_init(&h->env);
    h->sweep = event_new(opts->base, -1, EV_PERSIST, sweep_cb, h);
    h->backoff_ev = evtimer_new(opts->base, backoff_end_cb, h);
    if (!h->sweep || !h->backoff_ev) {
        free_parts(h);
        return WR_ENOMEM;
    }
    bool bad_host = false;
    h->listener = bind_listener(h, host, port, opts->reuse_port, &bad_host);
    if (!h->listener) {
        int e = errno;
        free_parts(h);
        errno = e;
        return bad_host ? WR_EINVAL : WR_EIO;
    }
    evconnlistener_set_error_cb(h->listener, accept_error_cb);
    struct timeval stv = {0, SWEEP_MS * 1000};
    event_add(h->sweep, &stv);
    bound_text(evconnlistener_get_fd(h->listener), opts->listen, bound, cap);
    *out = h;
    return WR_OK;
}

void wr_http_stop_accepting(wr_http_t *h)
{
    if (!h || h->stopped)
        return;
    h->stopped = true;
    if (h->listener) {
        evconnlistener_free(h->listener);
        h->listener = NULL;
    }
}

size_t wr_http_connections(const wr_http_t *h)
{
    return h->env.n_conns;
}

void wr_http_get_counters(const wr_http_t *h, wr_http_counters_t *out)
{
    *out = h->env.counters;
}

void wr_http_free(wr_http_t *h)
{
    if (!h)
        return;
    wr_http_stop_accepting(h);
    wr_http_env_clear(&h->env);
    free_parts(h);
}
