/*
 * shop.c - waitroom-shop: a small protected order API standing in for the
 * real one in the sale-day scenario (issue 3).
 *
 * One libevent loop. The shop owns a pool of N "database connections"
 * (default 40). POST /orders is one order: it first checks the caller's
 * entry token with waitroomd (POST /v1/queues/{q}/tokens/consume, the
 * single-use check), then takes a pool connection for the service time
 * (default 200 ms with +/- jitter) and answers 200. A request that finds no
 * free connection waits up to the pool timeout (as a JDBC pool does) and
 * then fails with 503 POOL_TIMEOUT. A request without a valid token is
 * refused with 403 before any work. With --no-queue the token check is
 * skipped: that is the shop without the line.
 *
 * With --release (one in, one out: the queue has maxActive = the pool and
 * sessionSeconds), an order that passed the token check ends its session
 * when its work ends - answered, or failed on the pool timeout - with
 * POST /v1/queues/{q}/tokens/release and the same token, so the next user
 * is admitted as this one leaves. The answer is only counted: 204 ended a
 * session, 403 (noSession: sessions off, lapsed) and 404 (a waitroomd
 * without sessions has no such route) are tolerated; the order's answer
 * never waits for the release.
 *
 * Autotune (--report-health, with --admin-key): every 500 ms the shop posts
 * its health to waitroomd, POST /v1/queues/{q}/health with
 * {"latencyMs": p95, "errorRate": failed share}, over the orders answered in
 * the last 2 s (an order's latency: from the token check's answer to the
 * shop's answer, pool wait included - what its callers see); nothing when
 * none were. --slowdown T:F multiplies the service time by F from T
 * seconds after the first order on (the demo's slow database).
 *
 * GET /stats reports the counters below as JSON; the simulator samples it.
 * inFlightPeak is the highest in_flight since the previous GET /stats, so a
 * sampler every 100 ms sees every peak, not the value at the sample.
 *
 * Invariants:
 *   busy <= pool; busy < pool implies no waiters (a freed connection goes
 *   to the first waiter at once);
 *   in_flight = orders past the token check and not yet answered
 *             = busy + waiting (the concurrency the shop has to carry;
 *               max_in_flight <= pool means no order ever waited).
 *
 * Ownership: an order_t is created per POST /orders and freed when it is
 * answered (or, if the client went away, when its work ends). The incoming
 * request is borrowed from evhttp: if the client connection closes first,
 * the close callback clears o->req and the order finishes silently. The
 * waitroomd client connections are owned by the shop and freed at exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <jansson.h>

#include "base/clock.h"
#include "base/rng.h"

#define USER_MAX         129
#define TOKEN_MAX        2048
#define QUEUE_MAX        65
#define CONNS_MAX        1024
#define HEALTH_RING      16384 /* orders remembered for the health report */
#define HEALTH_WINDOW_MS 2000  /* the report's window */

typedef enum { O_CONSUMING, O_WAITING, O_SERVING } ostate_t;

struct shop;

typedef struct order {
    struct shop *shop;
    struct evhttp_request *req; /* borrowed; NULL once the client went away */
    struct event *timer;        /* pool timeout, then service time */
    struct order *prev, *next;  /* pool waiters (O_WAITING) */
    ostate_t state;
    int64_t t_wait_ms;
    int64_t t_consume_ms; /* token check sent */
    int64_t t_work_ms;    /* the work began (start_work) */
    char *token;          /* owned; kept for the release (--release), else NULL */
    bool consumed;        /* the token check passed: release when the work ends */
    char user[USER_MAX];
} order_t;

typedef struct shop {
    struct event_base *base;
    struct evhttp *http;
    /* config */
    uint32_t pool, service_ms, pool_timeout_ms;
    double jitter;
    bool no_queue, release;
    char queue[QUEUE_MAX];
    char wr_host[64];
    uint16_t wr_port;
    struct evhttp_connection *conns[CONNS_MAX];
    size_t n_conns, rr;
    /* pool */
    uint32_t busy, waiting;
    order_t *wait_head, *wait_tail;
    /* counters */
    uint64_t in_flight, max_in_flight, max_waiting, max_busy, peak_since_stats;
    uint64_t requests, orders_ok, orders_failed, pool_waits, pool_timeouts, refused, consume_errors,
        abandoned;
    int64_t pool_wait_ms_max;
    int64_t consume_ms_max, consume_ms_sum; /* token check round trips */
    uint64_t consumes;
    uint64_t releases, releases_ok, releases_refused, releases_unsupported, release_errors;
    wr_rng_t rng;
    /* --slowdown T:F, --report-health (see the top) */
    uint32_t slow_at_s;
    double slow_factor;     /* 1 = none */
    int64_t first_order_ms; /* 0 = none yet */
    bool report_health;
    char admin_key[256];
    struct event *ev_health;
    struct {
        int64_t end_ms;
        uint32_t ms;
        bool failed;
    } recent[HEALTH_RING];
    size_t recent_next;
    uint64_t health_posts, health_errors;
} shop_t;

static int64_t now_ms(void)
{
    return wr_clock_mono_ms();
}

static double rand01(shop_t *s)
{
    return wr_rng_unit(&s->rng);
}

static void reply(order_t *o, int code, const char *reason, const char *json)
{
    if (!o->req)
        return;
    struct evhttp_request *req = o->req;
    o->req = NULL;
    struct evhttp_connection *ec = evhttp_request_get_connection(req);
    if (ec)
        evhttp_connection_set_closecb(ec, NULL, NULL);
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Content-Type", "application/json");
    evhttp_add_header(oh, "Cache-Control", "no-store");
    struct evbuffer *b = evbuffer_new();
    if (b)
        evbuffer_add(b, json, strlen(json));
    evhttp_send_reply(req, code, reason, b);
    if (b)
        evbuffer_free(b);
}

static void order_free(order_t *o)
{
    free(o->token);
    if (o->timer)
        event_free(o->timer);
    if (o->req) {
        struct evhttp_connection *ec = evhttp_request_get_connection(o->req);
        if (ec)
            evhttp_connection_set_closecb(ec, NULL, NULL);
    }
    free(o);
}

static void client_closed(struct evhttp_connection *ec, void *arg)
{
    order_t *o = arg;
    o->req = NULL;
    o->shop->abandoned++;
}

static void serve(order_t *o);

/* An order was answered: remembered for the health report. */
static void note_answer(order_t *o, bool failed)
{
    shop_t *s = o->shop;
    int64_t now = now_ms();
    s->recent[s->recent_next].end_ms = now;
    s->recent[s->recent_next].ms = (uint32_t)(now - o->t_work_ms);
    s->recent[s->recent_next].failed = failed;
    s->recent_next = (s->recent_next + 1) % HEALTH_RING;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void health_done(struct evhttp_request *resp, void *arg)
{
    shop_t *s = arg;
    if (!resp || evhttp_request_get_response_code(resp) != 204)
        s->health_errors++;
}

/* Every 500 ms: the p95 and the error rate of the last 2 s, posted. */
static void health_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    shop_t *s = arg;
    static uint32_t ms[HEALTH_RING];
    size_t n = 0, failed = 0;
    int64_t since = now_ms() - HEALTH_WINDOW_MS;
    for (size_t i = 0; i < HEALTH_RING; i++)
        if (s->recent[i].end_ms > 0 && s->recent[i].end_ms >= since) {
            ms[n++] = s->recent[i].ms;
            failed += s->recent[i].failed;
        }
    if (n == 0)
        return; /* nothing to say: the line holds its rate */
    qsort(ms, n, sizeof ms[0], cmp_u32);
    char body[128], auth[300], path[QUEUE_MAX + 48];
    snprintf(body, sizeof body, "{\"latencyMs\":%u,\"errorRate\":%.4f}",
             ms[(n * 95 + 99) / 100 - 1], (double)failed / (double)n);
    snprintf(auth, sizeof auth, "Bearer %s", s->admin_key);
    snprintf(path, sizeof path, "/v1/queues/%s/health", s->queue);
    struct evhttp_request *r = evhttp_request_new(health_done, s);
    if (!r)
        return;
    struct evkeyvalq *oh = evhttp_request_get_output_headers(r);
    evhttp_add_header(oh, "Host", s->wr_host);
    evhttp_add_header(oh, "Authorization", auth);
    evhttp_add_header(oh, "Content-Type", "application/json");
    evbuffer_add(evhttp_request_get_output_buffer(r), body, strlen(body));
    s->health_posts++;
    if (evhttp_make_request(s->conns[s->rr++ % s->n_conns], r, EVHTTP_REQ_POST, path) != 0)
        s->health_errors++;
}

static void release_done(struct evhttp_request *resp, void *arg)
{
    shop_t *s = arg;
    int code = resp ? evhttp_request_get_response_code(resp) : 0;
    if (code == 204)
        s->releases_ok++;
    else if (code == 403)
        s->releases_refused++;
    else if (code == 404)
        s->releases_unsupported++;
    else
        s->release_errors++;
}

/* The order's work has ended: with --release, end the user's session
 * (fire and forget; the answer is counted by release_done). */
static void release_session(order_t *o)
{
    shop_t *s = o->shop;
    if (!s->release || !o->consumed || !o->token)
        return;
    s->releases++;
    char auth[TOKEN_MAX + 8];
    snprintf(auth, sizeof(auth), "Bearer %s", o->token);
    struct evhttp_request *r = evhttp_request_new(release_done, s);
    if (!r) {
        s->release_errors++;
        return;
    }
    struct evkeyvalq *oh = evhttp_request_get_output_headers(r);
    evhttp_add_header(oh, "Host", s->wr_host);
    evhttp_add_header(oh, "Authorization", auth);
    char path[QUEUE_MAX + 48];
    snprintf(path, sizeof(path), "/v1/queues/%s/tokens/release", s->queue);
    struct evhttp_connection *c = s->conns[s->rr++ % s->n_conns];
    if (evhttp_make_request(c, r, EVHTTP_REQ_POST, path) != 0)
        s->release_errors++;
}

/* Releases a pool connection: the first waiter (if any) takes it. */
static void pool_release(shop_t *s)
{
    order_t *w = s->wait_head;
    if (!w) {
        s->busy--;
        return;
    }
    s->wait_head = w->next;
    if (s->wait_head)
        s->wait_head->prev = NULL;
    else
        s->wait_tail = NULL;
    s->waiting--;
    event_del(w->timer);
    int64_t waited = now_ms() - w->t_wait_ms;
    if (waited > s->pool_wait_ms_max)
        s->pool_wait_ms_max = waited;
    serve(w); /* keeps the connection: busy unchanged */
}

static void service_done(evutil_socket_t fd, short what, void *arg)
{
    order_t *o = arg;
    shop_t *s = o->shop;
    s->in_flight--;
    s->orders_ok++;
    note_answer(o, false);
    char body[USER_MAX + 96];
    snprintf(body, sizeof(body), "{\"ok\":true,\"orderId\":%" PRIu64 ",\"userId\":\"%s\"}",
             s->orders_ok, o->user);
    reply(o, 200, "OK", body);
    release_session(o);
    order_free(o);
    pool_release(s);
}

static void serve(order_t *o)
{
    shop_t *s = o->shop;
    o->state = O_SERVING;
    double f = 1.0 + s->jitter * (2.0 * rand01(s) - 1.0);
    if (s->slow_factor != 1.0 && s->first_order_ms > 0 &&
        now_ms() - s->first_order_ms >= (int64_t)s->slow_at_s * 1000)
        f *= s->slow_factor; /* --slowdown */
    int64_t ms = (int64_t)((double)s->service_ms * f + 0.5);
    if (ms < 0)
        ms = 0;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    event_assign(o->timer, s->base, -1, 0, service_done, o);
    event_add(o->timer, &tv);
}

static void pool_timeout(evutil_socket_t fd, short what, void *arg)
{
    order_t *o = arg;
    shop_t *s = o->shop;
    if (o->prev)
        o->prev->next = o->next;
    else
        s->wait_head = o->next;
    if (o->next)
        o->next->prev = o->prev;
    else
        s->wait_tail = o->prev;
    s->waiting--;
    s->in_flight--;
    s->pool_timeouts++;
    s->orders_failed++;
    note_answer(o, true);
    int64_t waited = now_ms() - o->t_wait_ms;
    if (waited > s->pool_wait_ms_max)
        s->pool_wait_ms_max = waited;
    reply(o, 503, "Service Unavailable",
          "{\"error\":\"POOL_TIMEOUT\",\"message\":\"no database connection became free in "
          "time\"}");
    release_session(o);
    order_free(o);
}

/* The token is good (or not checked): do the work. */
static void start_work(order_t *o)
{
    shop_t *s = o->shop;
    o->t_work_ms = now_ms();
    if (s->first_order_ms == 0)
        s->first_order_ms = o->t_work_ms;
    s->in_flight++;
    if (s->in_flight > s->max_in_flight)
        s->max_in_flight = s->in_flight;
    if (s->in_flight > s->peak_since_stats)
        s->peak_since_stats = s->in_flight;
    if (s->busy < s->pool) {
        s->busy++;
        if (s->busy > s->max_busy)
            s->max_busy = s->busy;
        serve(o);
        return;
    }
    o->state = O_WAITING;
    o->t_wait_ms = now_ms();
    o->prev = s->wait_tail;
    o->next = NULL;
    if (s->wait_tail)
        s->wait_tail->next = o;
    else
        s->wait_head = o;
    s->wait_tail = o;
    s->waiting++;
    s->pool_waits++;
    if (s->waiting > s->max_waiting)
        s->max_waiting = s->waiting;
    struct timeval tv = {(time_t)(s->pool_timeout_ms / 1000),
                         (suseconds_t)(s->pool_timeout_ms % 1000) * 1000};
    event_assign(o->timer, s->base, -1, 0, pool_timeout, o);
    event_add(o->timer, &tv);
}

static void consume_done(struct evhttp_request *resp, void *arg)
{
    order_t *o = arg;
    shop_t *s = o->shop;
    int code = resp ? evhttp_request_get_response_code(resp) : 0;
    int64_t took = now_ms() - o->t_consume_ms;
    s->consumes++;
    s->consume_ms_sum += took;
    if (took > s->consume_ms_max)
        s->consume_ms_max = took;
    if (code == 200) {
        o->consumed = true;
        start_work(o);
        return;
    }
    if (code == 403) {
        char body[512] = "{\"error\":\"INVALID_TOKEN\"}";
        struct evbuffer *in = evhttp_request_get_input_buffer(resp);
        size_t len = in ? evbuffer_get_length(in) : 0;
        if (len > 0 && len < sizeof(body)) {
            evbuffer_copyout(in, body, len);
            body[len] = '\0';
        }
        s->refused++;
        reply(o, 403, "Forbidden", body);
    } else {
        s->consume_errors++;
        s->orders_failed++;
        char body[128];
        snprintf(body, sizeof(body),
                 "{\"error\":\"WAITROOM_UNAVAILABLE\",\"message\":\"token check answered %d\"}",
                 code);
        reply(o, 503, "Service Unavailable", body);
    }
    order_free(o);
}

static bool bearer(struct evhttp_request *req, char *tok, size_t cap)
{
    const char *v = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    if (!v || strncasecmp(v, "Bearer ", 7) != 0)
        return false;
    v += 7;
    while (*v == ' ')
        v++;
    size_t n = strlen(v);
    if (n == 0 || n >= cap)
        return false;
    memcpy(tok, v, n + 1);
    return true;
}

static void handle_order(shop_t *s, struct evhttp_request *req)
{
    s->requests++;
    const char *user = evhttp_find_header(evhttp_request_get_input_headers(req), "X-User-Id");
    if (!user || !*user || strlen(user) >= USER_MAX) {
        evhttp_send_error(req, 400, "X-User-Id header required");
        return;
    }
    order_t *o = calloc(1, sizeof(*o));
    if (o)
        o->timer = event_new(s->base, -1, 0, service_done, o);
    if (!o || !o->timer) {
        free(o);
        evhttp_send_error(req, 500, "out of memory");
        return;
    }
    o->shop = s;
    o->req = req;
    o->state = O_CONSUMING;
    snprintf(o->user, sizeof(o->user), "%s", user);
    struct evhttp_connection *ec = evhttp_request_get_connection(req);
    if (ec)
        evhttp_connection_set_closecb(ec, client_closed, o);

    if (s->no_queue) {
        start_work(o);
        return;
    }
    char tok[TOKEN_MAX];
    if (!bearer(req, tok, sizeof(tok))) {
        s->refused++;
        reply(o, 403, "Forbidden",
              "{\"error\":\"INVALID_TOKEN\",\"reason\":\"missing\",\"message\":\"an entry token "
              "from the waiting room is required\"}");
        order_free(o);
        return;
    }
    if (s->release && !(o->token = strdup(tok))) {
        reply(o, 500, "Internal Server Error", "{\"error\":\"OUT_OF_MEMORY\"}");
        order_free(o);
        return;
    }
    json_t *j = json_pack("{s:s,s:s}", "token", tok, "userId", o->user);
    char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    struct evhttp_request *r = body ? evhttp_request_new(consume_done, o) : NULL;
    if (!r) {
        free(body);
        s->consume_errors++;
        s->orders_failed++;
        reply(o, 503, "Service Unavailable", "{\"error\":\"WAITROOM_UNAVAILABLE\"}");
        order_free(o);
        return;
    }
    struct evkeyvalq *oh = evhttp_request_get_output_headers(r);
    evhttp_add_header(oh, "Host", s->wr_host);
    evhttp_add_header(oh, "Content-Type", "application/json");
    evbuffer_add(evhttp_request_get_output_buffer(r), body, strlen(body));
    free(body);
    char path[QUEUE_MAX + 48];
    snprintf(path, sizeof(path), "/v1/queues/%s/tokens/consume", s->queue);
    struct evhttp_connection *c = s->conns[s->rr++ % s->n_conns];
    o->t_consume_ms = now_ms();
    if (evhttp_make_request(c, r, EVHTTP_REQ_POST, path) != 0) {
        s->consume_errors++;
        s->orders_failed++;
        reply(o, 503, "Service Unavailable", "{\"error\":\"WAITROOM_UNAVAILABLE\"}");
        order_free(o);
    }
}

static void handle_stats(shop_t *s, struct evhttp_request *req)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"pool\":%u,\"noQueue\":%s,\"serviceMs\":%u,\"poolTimeoutMs\":%u,"
             "\"inFlight\":%" PRIu64 ",\"busy\":%u,\"waiting\":%u,\"maxInFlight\":%" PRIu64
             ",\"maxBusy\":%" PRIu64 ",\"maxWaiting\":%" PRIu64 ",\"requests\":%" PRIu64
             ",\"ordersOk\":%" PRIu64 ",\"ordersFailed\":%" PRIu64 ",\"poolWaits\":%" PRIu64
             ",\"poolTimeouts\":%" PRIu64 ",\"poolWaitMsMax\":%" PRId64 ",\"refused\":%" PRIu64
             ",\"consumeErrors\":%" PRIu64 ",\"abandoned\":%" PRIu64 ",\"consumeMsMax\":%" PRId64
             ",\"consumeMsMean\":%.1f,\"inFlightPeak\":%" PRIu64
             ",\"release\":%s,\"releases\":%" PRIu64 ",\"releasesOk\":%" PRIu64
             ",\"releasesRefused\":%" PRIu64 ",\"releasesUnsupported\":%" PRIu64
             ",\"releaseErrors\":%" PRIu64 "}",
             s->pool, s->no_queue ? "true" : "false", s->service_ms, s->pool_timeout_ms,
             s->in_flight, s->busy, s->waiting, s->max_in_flight, s->max_busy, s->max_waiting,
             s->requests, s->orders_ok, s->orders_failed, s->pool_waits, s->pool_timeouts,
             s->pool_wait_ms_max, s->refused, s->consume_errors, s->abandoned, s->consume_ms_max,
             s->consumes ? (double)s->consume_ms_sum / (double)s->consumes : 0.0,
             s->peak_since_stats, s->release ? "true" : "false", s->releases, s->releases_ok,
             s->releases_refused, s->releases_unsupported, s->release_errors);
    s->peak_since_stats = s->in_flight; /* the next sample's peak starts here */
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Content-Type", "application/json");
    evhttp_add_header(oh, "Cache-Control", "no-store");
    struct evbuffer *b = evbuffer_new();
    if (b)
        evbuffer_add(b, body, strlen(body));
    evhttp_send_reply(req, 200, "OK", b);
    if (b)
        evbuffer_free(b);
}

static void route(struct evhttp_request *req, void *arg)
{
    shop_t *s = arg;
    const char *uri = evhttp_request_get_uri(req);
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    size_t plen = strcspn(uri, "?");
    if (plen == 7 && strncmp(uri, "/orders", 7) == 0) {
        if (m != EVHTTP_REQ_POST) {
            evhttp_send_error(req, 405, "POST only");
            return;
        }
        handle_order(s, req);
    } else if (plen == 6 && strncmp(uri, "/stats", 6) == 0 && m == EVHTTP_REQ_GET) {
        handle_stats(s, req);
    } else if (plen == 8 && strncmp(uri, "/healthz", 8) == 0) {
        evhttp_send_reply(req, 200, "OK", NULL);
    } else {
        evhttp_send_error(req, 404, "not found");
    }
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    event_base_loopexit(arg, NULL);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: waitroom-shop [--listen 127.0.0.1:0] [--waitroom http://127.0.0.1:PORT]\n"
            "         [--queue NAME] [--pool 40] [--service-ms 200] [--jitter 0.1]\n"
            "         [--pool-timeout-ms 2000] [--consume-conns 32] [--no-queue] [--release]\n"
            "         [--report-health --admin-key KEY] [--slowdown T:F]\n"
            "POST /orders (Authorization: Bearer <entry token>, X-User-Id: <user>);\n"
            "--release: end the user's session (tokens/release) when the order's work ends;\n"
            "--report-health: post p95 latency and error rate (last 2 s) to .../health every\n"
            "500 ms (autotune); --slowdown T:F: service time x F from T s after the first order;\n"
            "GET /stats; GET /healthz. Prints 'listening on ADDR:PORT' first.\n");
}

static bool parse_hostport(const char *s, char *host, size_t cap, uint16_t *port)
{
    const char *c = strrchr(s, ':');
    if (!c || (size_t)(c - s) >= cap)
        return false;
    memcpy(host, s, (size_t)(c - s));
    host[c - s] = '\0';
    char *end;
    long p = strtol(c + 1, &end, 10);
    if (*end || p < 0 || p > 65535)
        return false;
    *port = (uint16_t)p;
    return true;
}

static bool parse_u32(const char *v, uint32_t *out, uint32_t min, uint32_t max)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || *end || !*v || x < min || x > max)
        return false;
    *out = (uint32_t)x;
    return true;
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int main(int argc, char **argv)
{
    static shop_t shop;
    shop_t *s = &shop;
    int rc = 1;
    struct evconnlistener *lst = NULL;
    struct event *sigint = NULL, *sigterm = NULL;
    char listen_host[64] = "127.0.0.1";
    uint16_t listen_port = 0;
    const char *waitroom = NULL;
    uint32_t consume_conns = 32;

    s->pool = 40;
    s->service_ms = 200;
    s->jitter = 0.1;
    s->pool_timeout_ms = 2000;
    s->slow_factor = 1.0;
    snprintf(s->queue, sizeof(s->queue), "sale");
    wr_rng_seed_random(&s->rng);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (!strcmp(a, "--no-queue")) {
            s->no_queue = true;
            continue;
        } else if (!strcmp(a, "--release")) {
            s->release = true;
            continue;
        } else if (!strcmp(a, "--report-health")) {
            s->report_health = true;
            continue;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        }
        if (!v) {
            fprintf(stderr, "waitroom-shop: %s needs a value\n", a);
            usage();
            return 2;
        }
        i++;
        if (!strcmp(a, "--listen"))
            ok = parse_hostport(v, listen_host, sizeof(listen_host), &listen_port);
        else if (!strcmp(a, "--waitroom"))
            waitroom = v;
        else if (!strcmp(a, "--queue"))
            ok = strlen(v) > 0 && strlen(v) < sizeof(s->queue) &&
                 strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") ==
                     strlen(v) &&
                 snprintf(s->queue, sizeof(s->queue), "%s", v) > 0;
        else if (!strcmp(a, "--pool"))
            ok = parse_u32(v, &s->pool, 1, 100000);
        else if (!strcmp(a, "--service-ms"))
            ok = parse_u32(v, &s->service_ms, 0, 600000);
        else if (!strcmp(a, "--pool-timeout-ms"))
            ok = parse_u32(v, &s->pool_timeout_ms, 0, 600000);
        else if (!strcmp(a, "--consume-conns"))
            ok = parse_u32(v, &consume_conns, 1, CONNS_MAX);
        else if (!strcmp(a, "--admin-key"))
            ok = strlen(v) > 0 &&
                 snprintf(s->admin_key, sizeof s->admin_key, "%s", v) < (int)sizeof s->admin_key;
        else if (!strcmp(a, "--slowdown")) {
            char *end;
            unsigned long t = strtoul(v, &end, 10);
            ok = *end == ':' && t <= 86400;
            if (ok) {
                s->slow_at_s = (uint32_t)t;
                s->slow_factor = strtod(end + 1, &end);
                ok = !*end && s->slow_factor > 0 && s->slow_factor <= 1000;
            }
        } else if (!strcmp(a, "--jitter")) {
            char *end;
            s->jitter = strtod(v, &end);
            ok = !*end && s->jitter >= 0 && s->jitter < 1;
        } else {
            fprintf(stderr, "waitroom-shop: unknown option %s\n", a);
            usage();
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "waitroom-shop: bad value for %s: %s\n", a, v);
            return 2;
        }
    }
    if (s->no_queue)
        s->release = s->report_health = false; /* no token, no session, no line to tell */
    if (s->report_health && !s->admin_key[0]) {
        fprintf(stderr, "waitroom-shop: --report-health needs --admin-key\n");
        return 2;
    }
    if (!s->no_queue) {
        if (!waitroom || strncmp(waitroom, "http://", 7) != 0 ||
            !parse_hostport(waitroom + 7, s->wr_host, sizeof(s->wr_host), &s->wr_port)) {
            fprintf(stderr, "waitroom-shop: --waitroom http://HOST:PORT is required "
                            "(or --no-queue)\n");
            return 2;
        }
    }
    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);

    s->base = event_base_new();
    s->http = s->base ? evhttp_new(s->base) : NULL;
    if (!s->http) {
        fprintf(stderr, "waitroom-shop: out of memory\n");
        goto out;
    }
    evhttp_set_timeout(s->http, 120);
    evhttp_set_max_headers_size(s->http, 16384);
    evhttp_set_max_body_size(s->http, 4096);
    evhttp_set_gencb(s->http, route, s);

    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(listen_port)};
    if (inet_pton(AF_INET, listen_host, &sin.sin_addr) != 1) {
        fprintf(stderr, "waitroom-shop: --listen needs an IPv4 address: %s\n", listen_host);
        goto out;
    }
    /* backlog -1: the kernel's maximum (somaxconn), so a burst of connects
     * from the no-queue run is not dropped at the accept queue */
    lst = evconnlistener_new_bind(s->base, NULL, NULL, LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE,
                                  -1, (struct sockaddr *)&sin, sizeof(sin));
    if (!lst || !evhttp_bind_listener(s->http, lst)) {
        fprintf(stderr, "waitroom-shop: cannot listen on %s:%u: %s\n", listen_host, listen_port,
                strerror(errno));
        if (lst)
            evconnlistener_free(lst);
        goto out;
    }
    struct sockaddr_in bound;
    socklen_t blen = sizeof(bound);
    getsockname(evconnlistener_get_fd(lst), (struct sockaddr *)&bound, &blen);
    printf("listening on %s:%u\n", listen_host, ntohs(bound.sin_port));
    fflush(stdout);

    if (!s->no_queue) {
        s->n_conns = consume_conns;
        for (size_t i = 0; i < s->n_conns; i++) {
            s->conns[i] = evhttp_connection_base_new(s->base, NULL, s->wr_host, s->wr_port);
            if (!s->conns[i]) {
                fprintf(stderr, "waitroom-shop: out of memory\n");
                goto out;
            }
            evhttp_connection_set_timeout(s->conns[i], 30);
        }
    }
    fprintf(stderr, "waitroom-shop: pool %u, service %u ms +/-%.0f%%, pool timeout %u ms, %s%s\n",
            s->pool, s->service_ms, s->jitter * 100, s->pool_timeout_ms,
            s->no_queue ? "NO token check (--no-queue)" : "token checked with waitroomd",
            s->release ? ", session released after each order" : "");

    if (s->report_health) {
        s->ev_health = event_new(s->base, -1, EV_PERSIST, health_tick, s);
        struct timeval hv = {0, 500000};
        if (!s->ev_health || event_add(s->ev_health, &hv))
            goto out;
    }
    sigint = evsignal_new(s->base, SIGINT, on_signal, s->base);
    sigterm = evsignal_new(s->base, SIGTERM, on_signal, s->base);
    if (!sigint || !sigterm || event_add(sigint, NULL) || event_add(sigterm, NULL))
        goto out;
    event_base_dispatch(s->base);
    fprintf(stderr,
            "waitroom-shop: requests %" PRIu64 ", ok %" PRIu64 ", failed %" PRIu64
            ", refused %" PRIu64 ", max in flight %" PRIu64 " (pool %u), pool waits %" PRIu64
            ", pool timeouts %" PRIu64 "\n",
            s->requests, s->orders_ok, s->orders_failed, s->refused, s->max_in_flight, s->pool,
            s->pool_waits, s->pool_timeouts);
    if (s->release)
        fprintf(stderr,
                "waitroom-shop: releases %" PRIu64 ": ended %" PRIu64 ", no session (403) %" PRIu64
                ", no such route (404: a waitroomd without sessions) %" PRIu64 ", errors %" PRIu64
                "\n",
                s->releases, s->releases_ok, s->releases_refused, s->releases_unsupported,
                s->release_errors);
    if (s->report_health)
        fprintf(stderr, "waitroom-shop: health reports %" PRIu64 ", errors %" PRIu64 "\n",
                s->health_posts, s->health_errors);
    rc = 0;
out:
    if (s->ev_health)
        event_free(s->ev_health);
    if (sigint)
        event_free(sigint);
    if (sigterm)
        event_free(sigterm);
    /* Orders still pending at exit (none in a finished run) are left to the
     * OS together with their timers. */
    if (s->http)
        evhttp_free(s->http); /* frees the bound listener too */
    for (size_t i = 0; i < s->n_conns; i++)
        if (s->conns[i])
            evhttp_connection_free(s->conns[i]);
    if (s->base)
        event_base_free(s->base);
    return rc;
}
