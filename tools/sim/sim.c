/*
 * sim.c - waitroom-sim: the sale-day load simulator (issue 3).
 *
 * One process, one libevent loop, many simulated users. Each user is a small
 * state machine (user_t) driven by one timer and by HTTP answers:
 *
 *   PENDING --arrival--> JOINING --200--> WAITING --poll...--> (admitted)
 *     --> ORDERING --shop answer--> DONE
 *   WAITING --DELETE (quitter)--> LEFT;  WAITING --404 on poll--> LOST
 *   --no-queue: PENDING --arrival--> ORDERING --> DONE
 *   bypass users: PENDING --arrival--> shop without a valid token --> DONE
 *
 * HTTP goes through pools (pool_t) of keep-alive evhttp client connections
 * with at most one request in flight per connection; requests beyond that
 * wait in the pool's FIFO. So the number of sockets is bounded (--conns,
 * --shop-conns) whatever the number of users, and users are multiplexed on
 * them. Joins go through their own pool ("join lane", --join-conns, default
 * 1): with one connection the server receives the joins in exactly the
 * order the simulator numbers them, so join order is known exactly, not
 * guessed from timestamps of concurrent requests.
 *
 * Admission order: waitroomd gives every user admitted in one tick a token
 * expiring at tick time + tokenTtlSeconds, so expiresAt - TTL is the
 * admission tick. Users admitted in the same tick are admitted at the same
 * instant; the admission key is (tick, join order), so a pair within one
 * tick never counts as an overtake, and any user admitted in a later tick
 * than someone who joined after them makes tau < 1.
 *
 * A sale opening (--opens-in S, scripts/demo.sh --opens-in): once the
 * connections are open, the queue's opensAt is set S seconds ahead
 * (PATCH) and the crowd arrives by its profile, before the opening; the
 * last --late N users arrive in the second after it. A join answered
 * "prequeue" marks its user as one of the pre-queue, who polls at the
 * answer's retryAfterMs until the line opens. Fairness is then measured
 * apart: Kendall's tau-b between join order and admission tick for the
 * pre-queue (ties within a tick are ties; a uniform shuffle gives about
 * 0), the usual FIFO tau for later arrivals (1.0), and the later arrivals
 * admitted in a tick before the last pre-queue admission (0: the whole
 * pre-queue goes first). Without the line (--no-queue), users who arrive
 * before the opening reach the shop at the opening instant: everybody
 * reloads at the announced time.
 *
 * Admission modes: by default the line admits at --rate only. With
 * --max-active N --session-seconds S (scripts/demo.sh --one-in-one-out)
 * the queue also caps live tokens and open sessions at N, and the shop
 * ends each session when the order is done (waitroom-shop --release): one
 * in, one out. A waitroomd without sessions refuses sessionSeconds (400
 * INVALID_CONFIG); the queue is then created without it and the run
 * records that only maxActive was in force (a slot frees at consume).
 *
 * Ownership: the sim owns users, pools, connections and ops. An op is
 * owned by its pool while queued or in flight and freed after its callback
 * returns. JSON bodies passed to callbacks are borrowed for the call.
 * Everything is freed before exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "base/b64.h"
#include "base/clock.h"
#include "base/rng.h"
#include "report.h"
#include "stats.h"

#define BUCKET_MS     100
#define MAX_USERS     1000000
#define MAX_CONNS     8000
#define MAX_SECONDS   3600
#define WARM_PARALLEL 64
#define UID_MAX       48

typedef struct sim sim_t;
typedef struct pool pool_t;
typedef struct op op_t;
typedef struct conn conn_t;

/* code: HTTP status, 0 on a connection error or timeout. body: the parsed
 * JSON answer or NULL (borrowed). */
typedef void (*op_cb)(op_t *op, int code, json_t *body);

struct op {
    op_t *next;
    pool_t *pool;
    enum evhttp_cmd_type method;
    char path[192];
    char user[UID_MAX];
    char *auth; /* "Bearer ..." or NULL; owned */
    char *body; /* owned or NULL */
    op_cb cb;
    void *arg;
    int retries; /* left, on connection errors */
};

struct conn {
    pool_t *pool;
    struct evhttp_connection *ec;
    conn_t *next_idle;
    op_t *op; /* in flight or NULL */
};

struct pool {
    sim_t *sim;
    const char *name;
    char host[64];
    uint16_t port;
    conn_t *conns;
    size_t n;
    conn_t *idle;
    op_t *qh, *qt;
    bool count_load; /* user traffic to waitroomd: counted as poll load */
    uint64_t sent, errors;
};

typedef enum { K_NORMAL, K_BYPASS, K_REPLAY, K_GREEDY, K_QUITTER } kind_t;
typedef enum {
    S_PENDING,
    S_JOINING,
    S_WAITING,
    S_ORDERING,
    S_DONE,
    S_LEFT,
    S_LOST,
    S_ERROR,
    S_CLOSED /* told "closed" (sold out or the sale ended): no place, done */
} ustate_t;

/* etaSeconds of one waiting answer (join or poll), for the ETA after the
 * rate settled (autotune_figures); appended in answer order. */
typedef struct {
    uint32_t idx;  /* user index */
    int32_t eta_s; /* etaSeconds (non-null answers only) */
    int64_t ms;    /* when the answer came, epoch ms */
} eta_sample_t;

typedef struct user {
    sim_t *sim;
    uint32_t idx;
    kind_t kind;
    ustate_t st;
    struct event *ev;
    char uid[UID_MAX];
    int64_t arrive_ms; /* scheduled arrival, epoch ms */
    int64_t join_ms;   /* join answered */
    int64_t join_seq;  /* 0-based order of join answers on the join lane */
    int64_t eta_s;     /* etaSeconds at join; -1 = null */
    int64_t eta1_s;    /* etaSeconds at the first poll after the join; -1 = null or none */
    int64_t eta1_ms;   /* when that answer came; 0 = none yet */
    int64_t pos_join;
    int64_t admit_seen_ms; /* the poll that saw "admitted" answered */
    int64_t admit_tick_ms; /* expiresAt - TTL: the admission tick */
    int64_t order_sent_ms, order_done_ms;
    int order_code;
    int64_t quit_at_ms;
    bool prequeue;          /* the join answered "prequeue": joined before the opening */
    bool sleeper;           /* --sleepers: this user's phone sleeps once mid-wait */
    bool slept;             /* ... and it did (silent sleep_ms after a request) */
    bool asleep;            /* silent now: the next request is the return */
    bool held;              /* an answer said "held":true (their turn came while away) */
    double sleep_at;        /* when in the first quarter of the wait it sleeps (0..1, seeded) */
    int64_t sleep_onset_ms; /* epoch ms: no poll is sent after it until the sleep is over */
    int64_t sleep_ms;       /* how long the phone sleeps (seeded, --sleep-range) */
    int64_t sleep_from_ms;  /* the last request before the sleep answered; 0 = never */
    int64_t wake_ms;        /* the first request after it was sent; 0 = never */
    bool waking;            /* that request has not been answered yet */
    uint32_t errors;
    char *token;
} user_t;

typedef struct {
    size_t cap;
    int32_t *waiting, *admitted_total, *shop_in_flight, *shop_in_flight_peak, *shop_busy,
        *shop_waiting;
    uint32_t *wr_requests;
    int32_t *asleep, *held, *returned, *stock_left; /* -1 = no sample (stock: none set) */
    double *rate_target; /* autotune: stats admitRateTarget, the rate in use (-1 = no sample) */
} series_t;

struct sim {
    struct event_base *base;
    /* options */
    bool no_queue, assert_mode, fresh;
    const char *server, *shop, *queue, *admin_key, *out_path, *profile, *csv_path, *label;
    double slowdown_at_s;  /* --slowdown-at: the shop slows down this long after t0; -1 = no */
    const char *users_csv; /* --users-csv: one row per user */
    double *csv;           /* --profile csv:FILE: arrival offsets, ms; one user each */
    uint32_t ncsv;
    json_t *queue_extra; /* --queue-config: more fields of the queue's config */
    json_t *poll_bands;  /* --poll-bands: the queue's pollBands, or NULL for the default */
    uint32_t users, bypass, replay, greedy, quitters;
    uint32_t conns, join_conns, shop_conns;
    double rate, ramp_seconds;
    uint32_t tick_ms, ttl_s, greedy_poll_ms, max_seconds, sample_ms;
    uint32_t max_active, session_s;    /* --max-active, --session-seconds (0 = off) */
    uint32_t opens_in_s, late;         /* --opens-in (0 = no opening), --late */
    int64_t opens_at_ms;               /* the opening set on the queue, epoch ms; 0 = none */
    int64_t prequeue_peak;             /* highest stats.prequeue sampled; -1 = never seen */
    uint32_t prequeue_joined;          /* joins answered "prequeue" */
    bool sessions_refused;             /* the server refused sessionSeconds */
    double sleepers_frac;              /* --sleepers F: that fraction of the normal crowd sleeps */
    uint32_t sleep_min_s, sleep_max_s; /* --sleep-range A:B, seconds */
    uint32_t idle_timeout_s; /* --idle-timeout: the queue's idleTimeoutSeconds (0 = its default) */
    bool idle_timeout_set;
    int64_t stock;          /* --stock N: the queue's stock; -1 = none */
    int64_t sold_out_at_ms; /* stats.soldOutAt first seen (epoch ms); 0 = never */
    double rate_tol_pct;    /* --rate-tolerance: --assert's bound on the rate error, % */
    json_t *queue_config;   /* the config the server answered the PUT with */
    uint64_t seed;
    /* runtime */
    pool_t wr, join, shopp, statp, shopstat; /* statp: admin API; shopstat: shop /stats */
    user_t *u;
    uint32_t n_users;   /* users + bypass */
    int64_t t0_ms;      /* start of arrivals, epoch ms */
    eta_sample_t *etas; /* every waiting answer's etaSeconds (grown, freed at exit) */
    size_t n_etas, cap_etas;
    int64_t end_ms;
    int64_t join_seq;
    wr_rng_t rng; /* seeded from --seed: the same run for the same seed */
    struct event *ev_sample, *ev_progress, *ev_deadline;
    bool sample_wr_busy, sample_shop_busy, finishing, finished;
    int final_pending;
    int exit_code;
    /* warm-up */
    size_t warm_next, warm_total, warm_done, warm_inflight, warm_errors;
    /* counters */
    uint32_t joined, admitted, left, lost, done, still_waiting, errors;
    uint32_t orders_ok, orders_failed, orders_refused;
    uint32_t sleepers_planned, sleepers, asleep_now, sleepers_lost, sleepers_held,
        sleepers_returned, sleepers_pass_waited, sleepers_woke_in_line, users_held, users_returned;
    uint32_t told_sold_out, told_closed;
    uint32_t bypass_attempts, bypass_accepted, replay_attempts, replay_accepted;
    uint64_t polls, greedy_polls, wr_requests;
    /* final stats from the shop and waitroomd */
    json_t *shop_final, *queue_final;
    series_t ser;
};

/* ---------- small helpers ---------- */

/* Wall-clock ms: the report's time axis is wall time (base/clock.h). */
static int64_t now_ms(void)
{
    return wr_clock_wall_us() / 1000;
}

static double rnd(sim_t *s)
{
    return wr_rng_unit(&s->rng);
}

static void timer_ms(struct event *ev, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    event_add(ev, &tv);
}

static bool parse_url(const char *url, char *host, size_t cap, uint16_t *port)
{
    if (!url || strncmp(url, "http://", 7) != 0)
        return false;
    const char *h = url + 7;
    const char *c = strchr(h, ':');
    if (!c || (size_t)(c - h) >= cap)
        return false;
    memcpy(host, h, (size_t)(c - h));
    host[c - h] = '\0';
    char *end;
    long p = strtol(c + 1, &end, 10);
    if ((*end && *end != '/') || p <= 0 || p > 65535)
        return false;
    *port = (uint16_t)p;
    return true;
}

static int64_t series_index(sim_t *s, int64_t t)
{
    int64_t k = (t - s->t0_ms) / BUCKET_MS;
    if (k < 0 || (size_t)k >= s->ser.cap)
        return -1;
    return k;
}

/* ---------- HTTP pools ---------- */

static void pool_submit(pool_t *p, op_t *op);

static void op_free(op_t *op)
{
    free(op->auth);
    free(op->body);
    free(op);
}

static void conn_release(conn_t *c);

static void req_done(struct evhttp_request *resp, void *arg)
{
    conn_t *c = arg;
    pool_t *p = c->pool;
    op_t *op = c->op;
    c->op = NULL;
    int code = resp ? evhttp_request_get_response_code(resp) : 0;
    json_t *body = NULL;
    if (resp && code > 0) {
        struct evbuffer *in = evhttp_request_get_input_buffer(resp);
        size_t len = in ? evbuffer_get_length(in) : 0;
        if (len > 0 && len < 65536) {
            const char *data = (const char *)evbuffer_pullup(in, (ssize_t)len);
            if (data)
                body = json_loadb(data, len, 0, NULL);
        }
    }
    p->sent++;
    if (code == 0)
        p->errors++;
    conn_release(c);
    if (code == 0 && op->retries > 0) {
        op->retries--;
        pool_submit(p, op); /* the connection reconnects on the next request */
        return;
    }
    op->cb(op, code, body);
    json_decref(body);
    op_free(op);
}

static void dispatch(conn_t *c, op_t *op)
{
    pool_t *p = c->pool;
    c->op = op;
    struct evhttp_request *r = evhttp_request_new(req_done, c);
    if (!r) {
        fprintf(stderr, "waitroom-sim: out of memory\n");
        exit(1);
    }
    struct evkeyvalq *h = evhttp_request_get_output_headers(r);
    char hosthdr[80];
    snprintf(hosthdr, sizeof(hosthdr), "%s:%u", p->host, p->port);
    evhttp_add_header(h, "Host", hosthdr);
    if (op->user[0])
        evhttp_add_header(h, "X-User-Id", op->user);
    if (op->auth)
        evhttp_add_header(h, "Authorization", op->auth);
    if (op->body) {
        evhttp_add_header(h, "Content-Type", "application/json");
        /* libevent adds Content-Length itself for POST and PUT only (PATCH) */
        char clen[24];
        snprintf(clen, sizeof(clen), "%zu", strlen(op->body));
        evhttp_add_header(h, "Content-Length", clen);
        evbuffer_add(evhttp_request_get_output_buffer(r), op->body, strlen(op->body));
    }
    if (p->count_load) {
        p->sim->wr_requests++;
        int64_t k = series_index(p->sim, now_ms());
        if (k >= 0)
            p->sim->ser.wr_requests[k]++;
    }
    if (evhttp_make_request(c->ec, r, op->method, op->path) != 0) {
        fprintf(stderr, "waitroom-sim: cannot send a request to %s:%u\n", p->host, p->port);
        exit(1);
    }
}

/* The connection is free: it takes the next queued op or becomes idle. */
static void conn_release(conn_t *c)
{
    pool_t *p = c->pool;
    op_t *op = p->qh;
    if (op) {
        p->qh = op->next;
        if (!p->qh)
            p->qt = NULL;
        op->next = NULL;
        dispatch(c, op);
        return;
    }
    c->next_idle = p->idle;
    p->idle = c;
}

static void pool_submit(pool_t *p, op_t *op)
{
    op->pool = p;
    conn_t *c = p->idle;
    if (c) {
        p->idle = c->next_idle;
        dispatch(c, op);
        return;
    }
    op->next = NULL;
    if (p->qt)
        p->qt->next = op;
    else
        p->qh = op;
    p->qt = op;
}

static op_t *op_new(enum evhttp_cmd_type m, const char *path, const char *user, op_cb cb, void *arg)
{
    op_t *op = calloc(1, sizeof(*op));
    if (!op) {
        fprintf(stderr, "waitroom-sim: out of memory\n");
        exit(1);
    }
    op->method = m;
    snprintf(op->path, sizeof(op->path), "%s", path);
    if (user)
        snprintf(op->user, sizeof(op->user), "%s", user);
    op->cb = cb;
    op->arg = arg;
    return op;
}

static void op_set_auth(op_t *op, const char *scheme_token)
{
    op->auth = strdup(scheme_token);
    if (!op->auth) {
        fprintf(stderr, "waitroom-sim: out of memory\n");
        exit(1);
    }
}

static bool pool_init(sim_t *s, pool_t *p, const char *name, const char *url, size_t n,
                      bool count_load)
{
    p->sim = s;
    p->name = name;
    p->count_load = count_load;
    if (!parse_url(url, p->host, sizeof(p->host), &p->port)) {
        fprintf(stderr, "waitroom-sim: bad URL for %s: %s (want http://HOST:PORT)\n", name,
                url ? url : "(none)");
        return false;
    }
    p->conns = calloc(n, sizeof(*p->conns));
    if (!p->conns)
        return false;
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        conn_t *c = &p->conns[i];
        c->pool = p;
        c->ec = evhttp_connection_base_new(s->base, NULL, p->host, p->port);
        if (!c->ec)
            return false;
        evhttp_connection_set_timeout(c->ec, 60);
        evhttp_connection_set_retries(c->ec, 3);
        c->next_idle = p->idle;
        p->idle = c;
    }
    return true;
}

static void pool_free(pool_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->conns[i].ec)
            evhttp_connection_free(p->conns[i].ec);
    free(p->conns);
    op_t *op = p->qh;
    while (op) {
        op_t *n = op->next;
        op_free(op);
        op = n;
    }
}

/* ---------- the run ---------- */

static void finish(sim_t *s);
static void user_timer(evutil_socket_t fd, short what, void *arg);

static void user_done(user_t *u, ustate_t st)
{
    sim_t *s = u->sim;
    u->st = st;
    s->done++;
    if (s->done == s->n_users)
        finish(s);
}

static void on_order(op_t *op, int code, json_t *body);
static void on_replay(op_t *op, int code, json_t *body);

static void send_order(user_t *u)
{
    sim_t *s = u->sim;
    u->st = S_ORDERING;
    u->order_sent_ms = now_ms();
    op_t *op = op_new(EVHTTP_REQ_POST, "/orders", u->uid, on_order, u);
    if (u->token) {
        char auth[2100];
        snprintf(auth, sizeof(auth), "Bearer %s", u->token);
        op_set_auth(op, auth);
    }
    pool_submit(&s->shopp, op);
}

static void on_order(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    u->order_code = code;
    u->order_done_ms = now_ms();
    if (code == 200)
        s->orders_ok++;
    else if (code == 403)
        s->orders_refused++;
    else
        s->orders_failed++;
    if (u->kind == K_REPLAY && code == 200) {
        /* replay the used token: it must be refused */
        s->replay_attempts++;
        op_t *r = op_new(EVHTTP_REQ_POST, "/orders", u->uid, on_replay, u);
        if (u->token) {
            char auth[2100];
            snprintf(auth, sizeof(auth), "Bearer %s", u->token);
            op_set_auth(r, auth);
        }
        pool_submit(&s->shopp, r);
        return;
    }
    user_done(u, S_DONE);
}

static void on_replay(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    if (code == 200)
        u->sim->replay_accepted++;
    user_done(u, S_DONE);
}

static void on_bypass(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    if (code == 200)
        u->sim->bypass_accepted++;
    user_done(u, S_DONE);
}

static void b64url(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    if (wr_b64url_encode((const uint8_t *)in, strlen(in), out, cap, &n) != WR_OK)
        out[0] = '\0';
}

/* A user who skips the line: calls the shop directly, with no token, a
 * forged HS256 token (wrong key), an alg=none token, or garbage. */
static void send_bypass(user_t *u)
{
    sim_t *s = u->sim;
    s->bypass_attempts++;
    u->st = S_ORDERING;
    u->order_sent_ms = now_ms();
    op_t *op = op_new(EVHTTP_REQ_POST, "/orders", u->uid, on_bypass, u);
    char hdr[128], pay[512], payload[512], sig[64], auth[1400];
    long long t = (long long)(now_ms() / 1000);
    snprintf(pay, sizeof(pay),
             "{\"iss\":\"waitroom\",\"aud\":\"%s\",\"sub\":\"%s\",\"jti\":\"forged%u\","
             "\"iat\":%lld,\"exp\":%lld}",
             s->queue, u->uid, u->idx, t, t + 300);
    b64url(pay, payload, sizeof(payload));
    switch (u->idx % 4) {
    case 0:
        break; /* no token at all */
    case 1: {
        char rawsig[33];
        for (int i = 0; i < 32; i++)
            rawsig[i] = (char)('A' + (int)(rnd(s) * 26));
        rawsig[32] = '\0';
        b64url("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", hdr, sizeof(hdr));
        b64url(rawsig, sig, sizeof(sig));
        snprintf(auth, sizeof(auth), "Bearer %s.%s.%s", hdr, payload, sig);
        op_set_auth(op, auth);
        break;
    }
    case 2:
        b64url("{\"alg\":\"none\",\"typ\":\"JWT\"}", hdr, sizeof(hdr));
        snprintf(auth, sizeof(auth), "Bearer %s.%s.", hdr, payload);
        op_set_auth(op, auth);
        break;
    default:
        op_set_auth(op, "Bearer not-a-token");
        break;
    }
    pool_submit(&s->shopp, op);
}

static void on_status(op_t *op, int code, json_t *body);
static void on_leave(op_t *op, int code, json_t *body);

static void path_me(sim_t *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "/v1/queues/%s/entries/me", s->queue);
}

/* Appends one waiting answer's etaSeconds to s->etas (a null ETA or no
 * memory: nothing; the figures then have fewer samples). */
static void eta_record(sim_t *s, const user_t *u, const json_t *eta, int64_t now)
{
    if (!json_is_integer(eta) || json_integer_value(eta) < 0 || json_integer_value(eta) > INT32_MAX)
        return;
    if (s->n_etas == s->cap_etas) {
        size_t cap = s->cap_etas ? s->cap_etas * 2 : 65536;
        eta_sample_t *g = realloc(s->etas, cap * sizeof(*g));
        if (!g)
            return;
        s->etas = g;
        s->cap_etas = cap;
    }
    s->etas[s->n_etas++] =
        (eta_sample_t){.idx = u->idx, .eta_s = (int32_t)json_integer_value(eta), .ms = now};
}

/* A 200 answer of join or status. */
static void handle_status(user_t *u, json_t *j, bool at_join)
{
    sim_t *s = u->sim;
    const char *st = json_string_value(json_object_get(j, "status"));
    int64_t now = now_ms();
    if (st && !strcmp(st, "prequeue")) {
        /* before the opening: no place yet; ask again when told */
        if (at_join) {
            u->prequeue = true;
            s->prequeue_joined++;
        }
        u->st = S_WAITING;
        int64_t retry = json_integer_value(json_object_get(j, "retryAfterMs"));
        if (retry <= 0 || retry > 60000)
            retry = 1000;
        timer_ms(u->ev, u->kind == K_GREEDY ? s->greedy_poll_ms : retry);
        return;
    }
    if (st && !strcmp(st, "waiting")) {
        int64_t pos = json_integer_value(json_object_get(j, "position"));
        int64_t retry = json_integer_value(json_object_get(j, "retryAfterMs"));
        if (at_join) {
            json_t *eta = json_object_get(j, "etaSeconds");
            u->eta_s = json_is_integer(eta) ? json_integer_value(eta) : -1;
            u->pos_join = pos;
            /* a sleeper's phone locks in the first quarter of its expected wait */
            if (u->sleeper)
                u->sleep_onset_ms =
                    now + (int64_t)(u->sleep_at * (double)pos / s->rate * 1000.0 / 4.0);
        } else if (u->eta1_ms == 0) {
            json_t *eta = json_object_get(j, "etaSeconds");
            u->eta1_s = json_is_integer(eta) ? json_integer_value(eta) : -1;
            u->eta1_ms = now;
        }
        eta_record(s, u, json_object_get(j, "etaSeconds"), now);
        u->st = S_WAITING;
        if (json_is_true(json_object_get(j, "held")) && !u->held) {
            u->held = true; /* away when the tick reached them: out of the order, kept */
            s->users_held++;
            if (u->sleeper)
                s->sleepers_held++;
        } else if (u->waking && !u->held) {
            s->sleepers_woke_in_line++; /* back before its turn: the same place */
        }
        if (u->kind == K_QUITTER && now >= u->quit_at_ms && pos > 50) {
            char path[192];
            path_me(s, path, sizeof(path));
            op_t *op = op_new(EVHTTP_REQ_DELETE, path, u->uid, on_leave, u);
            op->retries = 2;
            pool_submit(&s->wr, op);
            return;
        }
        int64_t delay = u->kind == K_GREEDY ? s->greedy_poll_ms : retry;
        if (delay < 0 || delay > 60000)
            delay = 1000;
        if (u->sleeper && !u->slept && now + delay >= u->sleep_onset_ms) {
            /* the phone sleeps: silent sleep_ms from this answer on */
            u->slept = u->asleep = true;
            u->sleep_from_ms = now;
            s->sleepers++;
            s->asleep_now++;
            delay = u->sleep_ms;
        }
        timer_ms(u->ev, delay);
        return;
    }
    if (st && !strcmp(st, "admitted")) {
        const char *tok = json_string_value(json_object_get(j, "token"));
        int64_t exp = json_integer_value(json_object_get(j, "expiresAt"));
        if (!tok || strlen(tok) > 2048) {
            s->errors++;
            user_done(u, S_ERROR);
            return;
        }
        free(u->token);
        u->token = strdup(tok);
        u->admit_seen_ms = now;
        u->admit_tick_ms = exp - (int64_t)s->ttl_s * 1000;
        s->admitted++;
        if (u->held) {
            s->users_returned++;
            if (u->sleeper)
                s->sleepers_returned++;
        } else if (u->waking) {
            s->sleepers_pass_waited++; /* admitted before it counted as away */
        }
        send_order(u);
        return;
    }
    if (st && !strcmp(st, "closed")) {
        /* sold out or the sale ended: no place for this user (API 1.2) */
        const char *why = json_string_value(json_object_get(j, "reason"));
        if (why && !strcmp(why, "soldOut"))
            s->told_sold_out++;
        else
            s->told_closed++;
        user_done(u, S_CLOSED);
        return;
    }
    if (st && !strcmp(st, "passthrough")) {
        u->admit_seen_ms = now;
        s->admitted++;
        send_order(u);
        return;
    }
    s->errors++;
    user_done(u, S_ERROR);
}

static void on_join(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    if (code != 200 || !body) {
        s->errors++;
        user_done(u, S_ERROR);
        return;
    }
    u->join_ms = now_ms();
    u->join_seq = s->join_seq++;
    s->joined++;
    handle_status(u, body, true);
}

static void on_status(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    if (s->finishing)
        return;
    if (code == 200 && body) {
        handle_status(u, body, false); /* reads u->waking */
        u->waking = false;
    } else if (code == 404) {
        u->waking = false;
        s->lost++; /* joined, not admitted, no longer in line */
        if (u->slept)
            s->sleepers_lost++; /* came back to NOT_IN_QUEUE: the place is gone */
        user_done(u, S_LOST);
    } else if (++u->errors < 20) {
        timer_ms(u->ev, 1000);
    } else {
        s->errors++;
        user_done(u, S_ERROR);
    }
}

static void on_leave(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    if (code == 204) {
        s->left++;
        user_done(u, S_LEFT);
    } else if (code == 404) {
        s->lost++; /* was waiting (position > 50) a moment ago */
        user_done(u, S_LOST);
    } else {
        s->errors++;
        user_done(u, S_ERROR);
    }
}

static void user_timer(evutil_socket_t fd, short what, void *arg)
{
    user_t *u = arg;
    sim_t *s = u->sim;
    if (s->finishing)
        return;
    if (u->st == S_PENDING) {
        if (u->kind == K_BYPASS) {
            send_bypass(u);
        } else if (s->no_queue) {
            s->joined++; /* "joins" the shop directly */
            u->join_ms = now_ms();
            u->admit_seen_ms = u->join_ms;
            send_order(u);
        } else {
            u->st = S_JOINING;
            char path[192];
            snprintf(path, sizeof(path), "/v1/queues/%s/entries", s->queue);
            op_t *op = op_new(EVHTTP_REQ_POST, path, u->uid, on_join, u);
            op->retries = 3; /* joining again never moves a user */
            pool_submit(&s->join, op);
        }
        return;
    }
    if (u->st == S_WAITING) {
        if (u->asleep) { /* the phone wakes: this poll is the return */
            u->asleep = false;
            u->waking = true;
            u->wake_ms = now_ms();
            s->asleep_now--;
        }
        char path[192];
        path_me(s, path, sizeof(path));
        s->polls++;
        if (u->kind == K_GREEDY)
            s->greedy_polls++;
        op_t *op = op_new(EVHTTP_REQ_GET, path, u->uid, on_status, u);
        op->retries = 2;
        pool_submit(&s->wr, op);
    }
}

/* ---------- sampling and progress ---------- */

static void on_sample_wr(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    s->sample_wr_busy = false;
    json_t *st = json_object_get(body, "stats");
    int64_t k = series_index(s, now_ms());
    if (code == 200 && st && k >= 0) {
        s->ser.waiting[k] = (int32_t)json_integer_value(json_object_get(st, "waiting"));
        s->ser.admitted_total[k] =
            (int32_t)json_integer_value(json_object_get(st, "admittedTotal"));
        s->ser.held[k] = (int32_t)json_integer_value(json_object_get(st, "held"));
        s->ser.returned[k] = (int32_t)json_integer_value(json_object_get(st, "returnedTotal"));
        json_t *sl = json_object_get(st, "stockLeft");
        if (json_is_integer(sl))
            s->ser.stock_left[k] = (int32_t)json_integer_value(sl);
        json_t *rt = json_object_get(st, "admitRateTarget");
        if (json_is_number(rt))
            s->ser.rate_target[k] = json_number_value(rt);
    }
    json_t *so = json_object_get(st, "soldOutAt");
    if (code == 200 && json_is_integer(so) && !s->sold_out_at_ms)
        s->sold_out_at_ms = json_integer_value(so);
    json_t *pq = json_object_get(st, "prequeue");
    if (code == 200 && json_is_integer(pq) && json_integer_value(pq) > s->prequeue_peak)
        s->prequeue_peak = json_integer_value(pq);
}

static void on_sample_shop(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    s->sample_shop_busy = false;
    int64_t k = series_index(s, now_ms());
    if (code == 200 && body && k >= 0) {
        s->ser.shop_in_flight[k] = (int32_t)json_integer_value(json_object_get(body, "inFlight"));
        /* the shop's peak since its previous /stats: the highest of the
         * samples that land in this bucket */
        json_t *pk = json_object_get(body, "inFlightPeak");
        int32_t peak =
            json_is_integer(pk) ? (int32_t)json_integer_value(pk) : s->ser.shop_in_flight[k];
        if (peak > s->ser.shop_in_flight_peak[k])
            s->ser.shop_in_flight_peak[k] = peak;
        s->ser.shop_busy[k] = (int32_t)json_integer_value(json_object_get(body, "busy"));
        s->ser.shop_waiting[k] = (int32_t)json_integer_value(json_object_get(body, "waiting"));
    }
}

static void sample_tick(evutil_socket_t fd, short what, void *arg)
{
    sim_t *s = arg;
    if (s->finishing)
        return;
    int64_t k = series_index(s, now_ms());
    if (k >= 0)
        s->ser.asleep[k] = (int32_t)s->asleep_now;
    if (!s->no_queue && !s->sample_wr_busy) {
        char path[192], auth[300];
        snprintf(path, sizeof(path), "/v1/admin/queues/%s", s->queue);
        snprintf(auth, sizeof(auth), "Bearer %s", s->admin_key);
        op_t *op = op_new(EVHTTP_REQ_GET, path, NULL, on_sample_wr, s);
        op_set_auth(op, auth);
        s->sample_wr_busy = true;
        pool_submit(&s->statp, op);
    }
    if (!s->sample_shop_busy) {
        s->sample_shop_busy = true;
        pool_submit(&s->shopstat, op_new(EVHTTP_REQ_GET, "/stats", NULL, on_sample_shop, s));
    }
}

static void progress_tick(evutil_socket_t fd, short what, void *arg)
{
    sim_t *s = arg;
    static int64_t last_line;
    bool tty = isatty(2);
    int64_t now = now_ms();
    if (!tty && now - last_line < 5000)
        return;
    last_line = now;
    double frac = s->n_users ? (double)s->done / s->n_users : 1;
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    uint32_t waiting =
        s->joined - s->admitted - s->left - s->lost - s->told_sold_out - s->told_closed;
    if (s->no_queue)
        waiting = 0;
    char extra[96] = "";
    if (s->sleepers_planned > 0 || s->stock >= 0)
        snprintf(extra, sizeof(extra), " asleep %u held %u sold out %u", s->asleep_now,
                 s->users_held, s->told_sold_out);
    fprintf(stderr, "%s[%s] %3.0f%% %5.1fs joined %u waiting %u admitted %u ok %u failed %u%s%s",
            tty ? "\r" : "", bar, frac * 100, (double)(now - s->t0_ms) / 1000.0, s->joined, waiting,
            s->admitted, s->orders_ok, s->orders_failed + s->orders_refused, extra,
            tty ? "   " : "\n");
}

/* ---------- results ---------- */

static json_t *jnum_or_null(double v, bool ok)
{
    return ok ? json_real(v) : json_null();
}

static json_t *autotune_figures(sim_t *s, json_t *r, size_t nb);

static json_t *int_array(const int32_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *u32_array(const uint32_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

/* p50/p95/p99/max of v[0..n) (sorted in place) into obj as <prefix>P50<suffix>... */
static void put_percentiles(json_t *obj, const char *prefix, const char *suffix, double *v,
                            size_t n)
{
    static const double ps[] = {50, 95, 99, 100};
    static const char *names[] = {"P50", "P95", "P99", "Max"};
    wr_stats_sort(v, n);
    for (int i = 0; i < 4; i++) {
        char key[64];
        snprintf(key, sizeof(key), "%s%s%s", prefix, names[i], suffix);
        double x = 0;
        bool ok = wr_stats_percentile(v, n, ps[i], &x) == WR_OK;
        json_object_set_new(obj, key, ok ? json_integer((json_int_t)llround(x)) : json_null());
    }
}

static json_t *null_int(json_int_t v)
{
    (void)v;
    return json_null();
}

/*
 * The sale opening's figures into r (docs/BENCHMARKS.md): the pre-queue's
 * size, the opening, Kendall's tau-b between join order and admission tick
 * for the pre-queue (ties within a tick; ~0 for a shuffle), the FIFO tau
 * of the later arrivals (admission key (tick, join order) as for
 * kendallTau: 1.0), and the later arrivals admitted in a tick before the
 * last pre-queue admission. a and b are scratch arrays of n_users + 1.
 */
static void put_opening(sim_t *s, json_t *r, double *a, double *b, int64_t min_tick)
{
    size_t n = s->n_users, np = 0, nl = 0, later_first = 0;
    int64_t pq_last = 0, pq_first = 0;
    for (size_t i = 0; i < n; i++) {
        user_t *u = &s->u[i];
        if (u->kind == K_BYPASS || u->admit_tick_ms <= 0 || u->join_ms <= 0 || !u->prequeue)
            continue;
        a[np] = (double)u->join_seq;
        b[np] = (double)u->admit_tick_ms;
        np++;
        if (u->admit_tick_ms > pq_last)
            pq_last = u->admit_tick_ms;
        if (!pq_first || u->admit_tick_ms < pq_first)
            pq_first = u->admit_tick_ms;
    }
    double tau_p = 0;
    bool tau_p_ok = wr_stats_kendall_tau(a, b, np, &tau_p) == WR_OK;
    for (size_t i = 0; i < n; i++) {
        user_t *u = &s->u[i];
        if (u->kind == K_BYPASS || u->admit_tick_ms <= 0 || u->join_ms <= 0 || u->prequeue)
            continue;
        a[nl] = (double)u->join_seq;
        b[nl] =
            (double)(u->admit_tick_ms - min_tick) * (double)(s->join_seq + 1) + (double)u->join_seq;
        nl++;
        if (u->admit_tick_ms < pq_last)
            later_first++;
    }
    double tau_l = 0;
    bool tau_l_ok = wr_stats_kendall_tau(a, b, nl, &tau_l) == WR_OK;
    json_object_set_new(r, "opensInSeconds", json_integer(s->opens_in_s));
    json_object_set_new(r, "opensAt", json_integer(s->opens_at_ms));
    json_object_set_new(r, "opensAtMs", json_integer(s->opens_at_ms - s->t0_ms));
    /* without the line there is no pre-queue: its figures are null */
    json_t *(*q_or_null)(json_int_t) = s->no_queue ? null_int : json_integer;
    json_object_set_new(r, "prequeueUsers", q_or_null(s->prequeue_joined));
    json_object_set_new(r, "prequeueAdmitted", q_or_null((json_int_t)np));
    json_object_set_new(r, "prequeuePeakServer",
                        s->prequeue_peak >= 0 ? json_integer(s->prequeue_peak) : json_null());
    json_object_set_new(r, "firstAdmissionAfterOpeningMs",
                        pq_first ? json_integer(pq_first - s->opens_at_ms) : json_null());
    json_object_set_new(r, "laterArrivals",
                        q_or_null((json_int_t)(s->joined - s->prequeue_joined)));
    json_object_set_new(r, "kendallTauPrequeue", jnum_or_null(tau_p, tau_p_ok));
    json_object_set_new(r, "kendallTauAfterOpening", jnum_or_null(tau_l, tau_l_ok));
    json_object_set_new(r, "laterAdmittedBeforePrequeue", q_or_null((json_int_t)later_first));
}

/*
 * The end-of-sale figures into r (docs/BENCHMARKS.md, "Sleepers and
 * stock"). Sleepers (--sleepers): sleepers (users whose phone slept),
 * sleepersLost (came back to 404 NOT_IN_QUEUE: the place was gone; the
 * simulator never rejoins), sleepersHeld (an answer said "held": their turn
 * came while they were away), sleepersReturned (held, then admitted on
 * return), sleepersPassWaited (admitted before they counted as away: the
 * pass waited for them), sleepersBackInLine (back before their turn came:
 * the same place). Stock (--stock): stock (as set; null without),
 * usersToldSoldOut / usersToldClosed (answers "closed" with reason soldOut /
 * closed), passesKeepingStock (admitted and not expired unconsumed: an
 * expired pass gives its unit back, so usersAdmitted may pass the stock),
 * passesExpired, admittedBeyondStock (how far passesKeepingStock exceeds
 * the stock: 0), stockLeftAtEnd and soldOutAtMs (the
 * server's soldOutAt, ms after the start of arrivals) from the server's
 * stats qs (borrowed; may be NULL).
 */
static void put_sale_end(sim_t *s, json_t *r, json_t *qs)
{
    json_t *(*q_or_null)(json_int_t) = s->no_queue ? null_int : json_integer;
    const struct {
        const char *key;
        uint32_t v;
    } counts[] = {{"sleepersPlanned", s->sleepers_planned},
                  {"sleepers", s->sleepers},
                  {"sleepersLost", s->sleepers_lost},
                  {"sleepersHeld", s->sleepers_held},
                  {"sleepersReturned", s->sleepers_returned},
                  {"sleepersPassWaited", s->sleepers_pass_waited},
                  {"sleepersBackInLine", s->sleepers_woke_in_line},
                  {"sleepersStillAsleep", s->asleep_now},
                  {"usersToldSoldOut", s->told_sold_out},
                  {"usersToldClosed", s->told_closed}};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        json_object_set_new(r, counts[i].key, json_integer(counts[i].v));
    json_t *range = s->sleepers_planned > 0
                        ? json_pack("[I,I]", (json_int_t)s->sleep_min_s, (json_int_t)s->sleep_max_s)
                        : json_null();
    json_object_set_new(r, "sleepRangeSeconds", range ? range : json_null());
    json_object_set_new(r, "usersHeld", q_or_null(s->users_held));
    json_object_set_new(r, "usersReturned", q_or_null(s->users_returned));
    json_t *it = json_object_get(s->queue_config, "idleTimeoutSeconds");
    json_object_set_new(r, "idleTimeoutSeconds",
                        json_is_integer(it) ? json_incref(it) : json_null());
    json_t *ret = json_object_get(qs, "returnedTotal");
    json_object_set_new(r, "serverReturnedTotal",
                        json_is_integer(ret) ? json_incref(ret) : json_null());

    json_object_set_new(r, "stock", s->stock >= 0 ? json_integer(s->stock) : json_null());
    /* a pass that expires unconsumed gives its unit back (API 1.2), and
     * the simulator never gives one back itself: the passes that kept a
     * unit are the server's admittedTotal - expiredTotal (the users'
     * count when the server's is missing) */
    json_t *adm = json_object_get(qs, "admittedTotal"), *exp = json_object_get(qs, "expiredTotal");
    int64_t kept = json_is_integer(adm) ? json_integer_value(adm) - json_integer_value(exp)
                                        : (int64_t)s->admitted;
    json_int_t beyond = s->stock >= 0 && kept > s->stock ? (json_int_t)(kept - s->stock) : 0;
    json_object_set_new(r, "passesKeepingStock", s->stock >= 0 ? json_integer(kept) : json_null());
    json_object_set_new(r, "passesExpired", json_is_integer(exp) ? json_incref(exp) : json_null());
    json_object_set_new(r, "admittedBeyondStock",
                        s->stock >= 0 ? json_integer(beyond) : json_null());
    json_t *sl = json_object_get(qs, "stockLeft");
    json_object_set_new(r, "stockLeftAtEnd", json_is_integer(sl) ? json_incref(sl) : json_null());
    json_t *so = json_object_get(qs, "soldOutAt");
    int64_t sold = json_is_integer(so) ? json_integer_value(so) : s->sold_out_at_ms;
    json_object_set_new(r, "soldOutAt", sold > 0 ? json_integer(sold) : json_null());
    json_object_set_new(r, "soldOutAtMs", sold > 0 ? json_integer(sold - s->t0_ms) : json_null());
}

static json_t *compute(sim_t *s)
{
    json_t *r = json_object();
    size_t n = s->n_users;
    double *a = calloc(n + 1, sizeof(double)), *b = calloc(n + 1, sizeof(double));
    double *t = calloc(n + 1, sizeof(double));
    if (!a || !b || !t) {
        fprintf(stderr, "waitroom-sim: out of memory\n");
        exit(1);
    }
    int64_t end = s->end_ms;
    size_t nb = (size_t)((end - s->t0_ms) / BUCKET_MS + 1);
    if (nb > s->ser.cap)
        nb = s->ser.cap;

    json_object_set_new(r, "mode", json_string(s->no_queue ? "noQueue" : "queue"));
    if (s->label)
        json_object_set_new(r, "label", json_string(s->label));
    json_object_set_new(r, "profile", json_string(s->profile));
    json_object_set_new(r, "users", json_integer(s->users));
    json_object_set_new(r, "usersJoined", json_integer(s->joined));
    json_object_set_new(r, "usersAdmitted", json_integer(s->admitted));
    json_object_set_new(r, "usersLeft", json_integer(s->left));
    json_object_set_new(r, "usersLost", json_integer(s->lost));
    uint32_t still = 0;
    for (size_t i = 0; i < n; i++)
        if (s->u[i].st == S_WAITING || s->u[i].st == S_JOINING)
            still++;
    s->still_waiting = still;
    json_object_set_new(r, "usersStillWaiting", json_integer(still));
    json_object_set_new(r, "userErrors", json_integer(s->errors));
    json_object_set_new(r, "ordersOk", json_integer(s->orders_ok));
    json_object_set_new(r, "ordersFailed", json_integer(s->orders_failed));
    json_object_set_new(r, "ordersRefused", json_integer(s->orders_refused));

    /* shop */
    json_t *sh = s->shop_final;
    json_object_set_new(r, "shopPool",
                        json_integer(json_integer_value(json_object_get(sh, "pool"))));
    json_object_set_new(r, "shopServiceMs",
                        json_integer(json_integer_value(json_object_get(sh, "serviceMs"))));
    json_object_set_new(r, "shopMaxInFlight",
                        json_integer(json_integer_value(json_object_get(sh, "maxInFlight"))));
    json_object_set_new(r, "shopMaxBusy",
                        json_integer(json_integer_value(json_object_get(sh, "maxBusy"))));
    json_object_set_new(r, "shopPoolWaits",
                        json_integer(json_integer_value(json_object_get(sh, "poolWaits"))));
    json_object_set_new(r, "shopPoolTimeouts",
                        json_integer(json_integer_value(json_object_get(sh, "poolTimeouts"))));
    json_object_set_new(r, "shopTokenCheckMsMax",
                        json_integer(json_integer_value(json_object_get(sh, "consumeMsMax"))));
    json_object_set_new(r, "shopTokenCheckMsMean",
                        json_real(json_number_value(json_object_get(sh, "consumeMsMean"))));
    json_object_set_new(r, "shopPoolWaitMsMax",
                        json_integer(json_integer_value(json_object_get(sh, "poolWaitMsMax"))));
    /* session releases by the shop (--release): null when it does not release */
    static const char *const rel_keys[][2] = {{"releases", "shopReleases"},
                                              {"releasesOk", "shopReleasesOk"},
                                              {"releasesRefused", "shopReleasesRefused"},
                                              {"releasesUnsupported", "shopReleasesUnsupported"},
                                              {"releaseErrors", "shopReleaseErrors"}};
    bool releasing = json_is_true(json_object_get(sh, "release"));
    for (size_t i = 0; i < sizeof(rel_keys) / sizeof(rel_keys[0]); i++)
        json_object_set_new(
            r, rel_keys[i][1],
            releasing ? json_integer(json_integer_value(json_object_get(sh, rel_keys[i][0])))
                      : json_null());

    /* what ran: admission mode and poll timing, from the config the server
     * answered the PUT with (the truth, not what was asked) */
    json_t *qc = s->queue_config;
    json_int_t ma = json_integer_value(json_object_get(qc, "maxActive"));
    json_int_t ss = json_integer_value(json_object_get(qc, "sessionSeconds"));
    const char *mode = "rate";
    if (s->no_queue)
        mode = "noQueue";
    else if (s->max_active > 0 && s->session_s > 0)
        mode = "oneInOneOut";
    else if (ma > 0)
        mode = "maxActive";
    json_object_set_new(r, "admissionMode", json_string(mode));
    json_object_set_new(r, "maxActive", s->no_queue ? json_null() : json_integer(ma));
    json_object_set_new(r, "sessionSeconds", s->no_queue ? json_null() : json_integer(ss));
    json_object_set_new(r, "sessionSecondsAsked", json_integer(s->session_s));
    json_object_set_new(r, "sessionsRefusedByServer", json_boolean(s->sessions_refused));
    json_object_set_new(r, "pollBandsDefault", json_boolean(s->poll_bands == NULL));
    json_t *pb = json_object_get(qc, "pollBands"), *pj = json_object_get(qc, "pollJitter");
    json_object_set_new(r, "pollBands", pb ? json_incref(pb) : json_null());
    json_object_set_new(r, "pollJitter", pj ? json_incref(pj) : json_null());

    /* admissions: tick of each admitted user (queue) or the time they reached
     * the shop (no queue: everybody is let through at once) */
    size_t na = 0;
    int64_t min_tick = INT64_MAX;
    double line_last = -1; /* the last admission from the line (held returns excluded) */
    for (size_t i = 0; i < n; i++) {
        user_t *u = &s->u[i];
        if (u->kind == K_BYPASS)
            continue;
        int64_t at = s->no_queue ? u->order_sent_ms : u->admit_tick_ms;
        if (at <= 0)
            continue;
        t[na++] = (double)(at - s->t0_ms);
        if (at < min_tick)
            min_tick = at;
        if (!u->held && (double)(at - s->t0_ms) > line_last)
            line_last = (double)(at - s->t0_ms);
    }
    uint32_t *c100 = calloc(nb + 1, sizeof(uint32_t));
    size_t nsec = nb / 10 + 1;
    uint32_t *c1s = calloc(nsec, sizeof(uint32_t));
    if (!c100 || !c1s)
        exit(1);
    wr_stats_bucket(t, na, 0, BUCKET_MS, c100, nb);
    wr_stats_bucket(t, na, 0, 1000, c1s, nsec);

    /* rate over the steady middle: ticks strictly after the first and before
     * the last distinct admission time (the first may find the line still
     * filling, the last may find it nearly empty). The last is the last
     * admission from the line: held people who return after the line has
     * drained (--sleepers) are admitted one by one as they come back, which
     * is no measure of the rate; those who return while it drains count
     * (they take the tick's budget first). */
    double rate = -1;
    double window_ms = 0;
    json_int_t ticks_window = 0, ticks_empty = 0;
    if (na > 0) {
        memcpy(b, t, na * sizeof(double));
        wr_stats_sort(b, na);
        double first = b[0], last = line_last >= 0 ? line_last : b[na - 1], second = -1;
        for (size_t i = 0; i < na; i++)
            if (b[i] > first) {
                second = b[i];
                break;
            }
        if (s->no_queue) {
            window_ms = last - first;
            rate = window_ms > 0 ? (double)na * 1000.0 / window_ms : -1;
        } else if (second > 0 && last > second) {
            size_t cnt = 0;
            for (size_t i = 0; i < na; i++)
                if (b[i] >= second && b[i] < last)
                    cnt++;
            window_ms = last - second;
            rate = (double)cnt * 1000.0 / window_ms;
            /* tick slots of the window in which nobody was admitted: on a
             * starved machine a timer more than a tick late loses its tick
             * (K24: no catch-up), which the rate above counts against the
             * line; a tick only late leaves its slot empty and the next
             * one double */
            size_t slots = (size_t)(window_ms / s->tick_ms), prev = SIZE_MAX;
            ticks_window = (json_int_t)slots;
            ticks_empty = (json_int_t)slots;
            for (size_t i = 0; i < na; i++) {
                if (b[i] < second || b[i] >= last)
                    continue;
                size_t k = (size_t)((b[i] - second) / s->tick_ms);
                if (k < slots && k != prev)
                    ticks_empty--;
                prev = k;
            }
        }
    }
    json_object_set_new(r, "admitTicksInWindow", json_integer(ticks_window));
    json_object_set_new(r, "admitTicksEmpty", json_integer(ticks_empty));
    json_object_set_new(r, "admitRateConfigured", s->no_queue ? json_null() : json_real(s->rate));
    json_t *at = s->queue_extra ? json_object_get(s->queue_extra, "autotune") : NULL;
    json_object_set_new(r, "autotune", at && !s->no_queue ? json_deep_copy(at) : json_null());
    json_object_set_new(r, "admitRatePerSecond", jnum_or_null(rate, rate >= 0));
    json_object_set_new(r, "admitRateWindowMs", json_integer((json_int_t)window_ms));

    /* fairness */
    /* sleepers and held people are out of the order by design (a held
     * person is admitted on return): FIFO is measured over everybody else */
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        user_t *u = &s->u[i];
        if (u->kind == K_BYPASS || u->admit_tick_ms <= 0 || u->join_ms <= 0 || u->slept || u->held)
            continue;
        a[nf] = (double)u->join_seq;
        /* admission key (tick, join order): exact below 2^53 */
        b[nf] =
            (double)(u->admit_tick_ms - min_tick) * (double)(s->join_seq + 1) + (double)u->join_seq;
        t[nf] = (double)u->admit_tick_ms;
        nf++;
    }
    double tau = 0;
    bool tau_ok = !s->no_queue && wr_stats_kendall_tau(a, b, nf, &tau) == WR_OK;
    size_t over = 0;
    bool over_ok = !s->no_queue && wr_stats_overtakes(a, t, nf, &over) == WR_OK;
    json_object_set_new(r, "kendallTau", jnum_or_null(tau, tau_ok));
    json_object_set_new(r, "usersAdmittedAheadOfEarlierJoiner",
                        over_ok ? json_integer((json_int_t)over) : json_null());
    if (s->opens_at_ms > 0)
        put_opening(s, r, a, b, min_tick);

    /* waits in line (observed: join answered -> poll saw "admitted") */
    size_t nw = 0, ne = 0, enull = 0, ne1 = 0;
    double esum = 0, esum1 = 0;
    double *b1 = calloc(n ? n : 1, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        user_t *u = &s->u[i];
        if (s->no_queue || u->kind == K_BYPASS || u->admit_seen_ms <= 0 || u->join_ms <= 0 ||
            u->slept || u->held) /* a sleeper's wait is its sleep */
            continue;
        a[nw++] = (double)(u->admit_seen_ms - u->join_ms);
        if (u->eta_s >= 0 && u->admit_tick_ms > 0) {
            double err = (double)(u->admit_tick_ms - u->join_ms) / 1000.0 - (double)u->eta_s;
            esum += err;
            b[ne++] = fabs(err);
        } else if (u->eta_s < 0 && u->admit_tick_ms > 0) {
            enull++; /* etaSeconds null at join: not in the error figures */
        }
        if (b1 && u->eta1_ms > 0 && u->eta1_s >= 0 && u->admit_tick_ms > 0) {
            double err = (double)(u->admit_tick_ms - u->eta1_ms) / 1000.0 - (double)u->eta1_s;
            esum1 += err;
            b1[ne1++] = fabs(err);
        }
    }
    if (s->no_queue) {
        json_object_set_new(r, "waitP50Ms", json_null());
        json_object_set_new(r, "waitP95Ms", json_null());
        json_object_set_new(r, "waitP99Ms", json_null());
        json_object_set_new(r, "waitMaxMs", json_null());
    } else {
        put_percentiles(r, "wait", "Ms", a, nw);
    }
    /* ETA accuracy: |real admission delay - etaSeconds at join|, seconds */
    wr_stats_sort(b, ne);
    double e50 = 0, e95 = 0;
    bool eok = wr_stats_percentile(b, ne, 50, &e50) == WR_OK &&
               wr_stats_percentile(b, ne, 95, &e95) == WR_OK;
    json_object_set_new(r, "etaAbsErrorP50Seconds", jnum_or_null(e50, eok));
    json_object_set_new(r, "etaAbsErrorP95Seconds", jnum_or_null(e95, eok));
    json_object_set_new(r, "etaMeanErrorSeconds", jnum_or_null(ne ? esum / ne : 0, ne > 0));
    json_object_set_new(r, "etaNullAtJoin", json_integer((json_int_t)enull));
    /* the same for the ETA of the first poll after the join (the one a
     * person sees next: after a burst, the join's ETA is a guess made
     * before any admission was seen) */
    e50 = e95 = 0;
    eok = false;
    if (b1) {
        wr_stats_sort(b1, ne1);
        eok = wr_stats_percentile(b1, ne1, 50, &e50) == WR_OK &&
              wr_stats_percentile(b1, ne1, 95, &e95) == WR_OK;
    }
    json_object_set_new(r, "etaFirstPollAbsErrorP50Seconds", jnum_or_null(e50, eok));
    json_object_set_new(r, "etaFirstPollAbsErrorP95Seconds", jnum_or_null(e95, eok));
    json_object_set_new(r, "etaFirstPollMeanErrorSeconds",
                        jnum_or_null(ne1 ? esum1 / ne1 : 0, ne1 > 0));
    free(b1);

    /* order latency at the shop (request sent -> answer) */
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        user_t *u = &s->u[i];
        if (u->kind != K_BYPASS && u->order_done_ms > 0)
            a[nl++] = (double)(u->order_done_ms - u->order_sent_ms);
    }
    put_percentiles(r, "orderLatency", "Ms", a, nl);

    /* poll load */
    double dur_s = (double)(end - s->t0_ms) / 1000.0;
    uint32_t peak = 0;
    for (size_t k = 0; k + 10 <= nb; k += 10) {
        uint32_t sum = 0;
        for (size_t j = k; j < k + 10; j++)
            sum += s->ser.wr_requests[j];
        if (sum > peak)
            peak = sum;
    }
    json_object_set_new(r, "waitroomRequests", json_integer((json_int_t)s->wr_requests));
    json_object_set_new(r, "waitroomRequestsPerSecondMean",
                        json_real(dur_s > 0 ? (double)s->wr_requests / dur_s : 0));
    json_object_set_new(r, "waitroomRequestsPerSecondPeak", json_integer(peak));
    json_object_set_new(r, "polls", json_integer((json_int_t)s->polls));
    json_object_set_new(r, "greedyUsers", json_integer(s->greedy));
    json_object_set_new(r, "greedyPolls", json_integer((json_int_t)s->greedy_polls));
    json_object_set_new(r, "quitters", json_integer(s->quitters));
    json_object_set_new(r, "bypassAttempts", json_integer(s->bypass_attempts));
    json_object_set_new(r, "bypassAccepted", json_integer(s->bypass_accepted));
    json_object_set_new(r, "replayAttempts", json_integer(s->replay_attempts));
    json_object_set_new(r, "replayAccepted", json_integer(s->replay_accepted));
    json_object_set_new(r, "durationMs", json_integer(end - s->t0_ms));
    int64_t last_join = 0;
    for (size_t i = 0; i < n; i++)
        if (s->u[i].join_ms > last_join)
            last_join = s->u[i].join_ms;
    json_object_set_new(r, "joinSpanMs", json_integer(last_join ? last_join - s->t0_ms : 0));
    json_t *qs = json_object_get(s->queue_final, "stats");
    json_object_set_new(r, "serverAdmittedTotal",
                        qs ? json_integer(json_integer_value(json_object_get(qs, "admittedTotal")))
                           : json_null());
    put_sale_end(s, r, qs);

    /* series: carry the last sample forward over buckets without one */
    for (size_t k = 1; k < nb; k++) {
        if (s->ser.waiting[k] < 0)
            s->ser.waiting[k] = s->ser.waiting[k - 1];
        if (s->ser.held[k] < 0) {
            s->ser.held[k] = s->ser.held[k - 1];
            s->ser.returned[k] = s->ser.returned[k - 1];
        }
        if (s->ser.stock_left[k] < 0)
            s->ser.stock_left[k] = s->ser.stock_left[k - 1];
        if (s->ser.asleep[k] < 0)
            s->ser.asleep[k] = s->ser.asleep[k - 1];
        if (s->ser.shop_in_flight[k] < 0) {
            s->ser.shop_in_flight[k] = s->ser.shop_in_flight[k - 1];
            s->ser.shop_busy[k] = s->ser.shop_busy[k - 1];
            s->ser.shop_waiting[k] = s->ser.shop_waiting[k - 1];
        }
    }
    for (size_t k = 0; k < nb; k++) {
        if (s->ser.waiting[k] < 0)
            s->ser.waiting[k] = 0;
        if (s->ser.held[k] < 0)
            s->ser.held[k] = s->ser.returned[k] = 0;
        if (s->ser.asleep[k] < 0)
            s->ser.asleep[k] = 0;
        if (s->ser.stock_left[k] < 0 && s->stock >= 0)
            s->ser.stock_left[k] = (int32_t)(s->stock < INT32_MAX ? s->stock : INT32_MAX);
        if (s->ser.shop_in_flight[k] < 0)
            s->ser.shop_in_flight[k] = s->ser.shop_busy[k] = s->ser.shop_waiting[k] = 0;
        /* a bucket without a sample: the level carried into it */
        if (s->ser.shop_in_flight_peak[k] < s->ser.shop_in_flight[k])
            s->ser.shop_in_flight_peak[k] = s->ser.shop_in_flight[k];
    }
    json_t *ser = json_object();
    json_object_set_new(ser, "stepMs", json_integer(BUCKET_MS));
    json_object_set_new(ser, "lineLength", int_array(s->ser.waiting, nb));
    json_object_set_new(ser, "admittedPer100ms", u32_array(c100, nb));
    json_object_set_new(ser, "shopInFlight", int_array(s->ser.shop_in_flight, nb));
    json_object_set_new(ser, "shopInFlightPeak", int_array(s->ser.shop_in_flight_peak, nb));
    json_object_set_new(ser, "shopBusy", int_array(s->ser.shop_busy, nb));
    json_object_set_new(ser, "shopPoolWaiting", int_array(s->ser.shop_waiting, nb));
    json_object_set_new(ser, "waitroomRequestsPer100ms", u32_array(s->ser.wr_requests, nb));
    if (s->sleepers_planned > 0) {
        json_object_set_new(ser, "sleepersAsleep", int_array(s->ser.asleep, nb));
        json_object_set_new(ser, "held", int_array(s->ser.held, nb));
        json_object_set_new(ser, "returnedTotal", int_array(s->ser.returned, nb));
    }
    if (s->stock >= 0)
        json_object_set_new(ser, "stockLeft", int_array(s->ser.stock_left, nb));
    json_object_set_new(ser, "admitRateTarget", autotune_figures(s, r, nb));
    json_object_set_new(r, "series", ser);
    json_object_set_new(r, "admittedPerSecond", u32_array(c1s, nsec));
    free(c100);
    free(c1s);
    free(a);
    free(b);
    free(t);
    return r;
}

/*
 * The rate in use over the run (stats admitRateTarget, sampled with the
 * line; carried forward over buckets without a sample): returns the series
 * per bucket and adds to r "autotuneRates" (the rate at the end of each
 * second) and, with --slowdown-at T, "settleSeconds" and
 * "shopMaxInFlightAfterSettle": the rate has settled at the first bucket
 * t >= T from which every later bucket while people wait is within +/-25%
 * of the median of those buckets (a fixed rate settles at T at once), and
 * the shop's in flight has come back within its pool since (the backlog of
 * the rate before has drained); the figure is the shop's peak in flight
 * from then to the end.
 */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * The ETA once the rate has settled (issue 25: "the ETA error stays within
 * 10% of the real wait"): for each person admitted by the line (not a
 * sleeper, not held: their wait is their sleep), the first waiting answer
 * at or after settle_ms (epoch ms), its etaSeconds against the real rest
 * of the wait (admission tick - answer), relative to that rest. Only
 * rests of 10 s or more count: etaSeconds is whole seconds, so a shorter
 * rest's rounding alone can pass 10%. Adds etaAfterSettleSamples,
 * etaAfterSettleRelErrorP50/P95 (fractions) and etaAfterSettleWithin10Pct
 * (the share of samples within 10%); null without samples.
 */
static void eta_after_settle(sim_t *s, json_t *r, int64_t settle_ms)
{
    size_t n = s->n_users, k = 0;
    bool *seen = calloc(n ? n : 1, sizeof(bool));
    double *e = calloc(n ? n : 1, sizeof(double));
    size_t within = 0;
    for (size_t i = 0; seen && e && i < s->n_etas; i++) {
        const eta_sample_t *x = &s->etas[i];
        if (x->ms < settle_ms || x->idx >= n || seen[x->idx])
            continue;
        seen[x->idx] = true;
        const user_t *u = &s->u[x->idx];
        if (u->kind == K_BYPASS || u->slept || u->held || u->admit_tick_ms <= x->ms)
            continue;
        double rest = (double)(u->admit_tick_ms - x->ms) / 1000.0;
        if (rest < 10.0)
            continue;
        e[k] = fabs(rest - (double)x->eta_s) / rest;
        if (e[k] <= 0.10)
            within++;
        k++;
    }
    double p50 = 0, p95 = 0;
    bool ok = false;
    if (k) {
        wr_stats_sort(e, k);
        ok = wr_stats_percentile(e, k, 50, &p50) == WR_OK &&
             wr_stats_percentile(e, k, 95, &p95) == WR_OK;
    }
    json_object_set_new(r, "etaAfterSettleSamples", json_integer((json_int_t)k));
    json_object_set_new(r, "etaAfterSettleRelErrorP50", jnum_or_null(p50, ok));
    json_object_set_new(r, "etaAfterSettleRelErrorP95", jnum_or_null(p95, ok));
    json_object_set_new(r, "etaAfterSettleWithin10Pct",
                        jnum_or_null(k ? (double)within / (double)k : 0, k > 0));
    free(seen);
    free(e);
}

static json_t *autotune_figures(sim_t *s, json_t *r, size_t nb)
{
    double *rt = s->ser.rate_target;
    for (size_t k = 1; k < nb; k++)
        if (rt[k] < 0)
            rt[k] = rt[k - 1];
    json_t *arr = json_array(), *per_s = json_array();
    for (size_t k = 0; k < nb; k++) {
        json_array_append_new(arr, rt[k] < 0 ? json_null() : json_real(round(rt[k] * 100) / 100));
        if ((k + 1) % (1000 / BUCKET_MS) == 0 || k + 1 == nb)
            json_array_append_new(per_s,
                                  rt[k] < 0 ? json_null() : json_real(round(rt[k] * 100) / 100));
    }
    json_object_set_new(r, "autotuneRates", per_s);
    if (s->slowdown_at_s < 0 || s->no_queue || s->slowdown_at_s * 1000 / BUCKET_MS >= nb) {
        json_object_set_new(r, "settleSeconds", json_null());
        json_object_set_new(r, "shopMaxInFlightAfterSettle", json_null());
        return arr;
    }
    size_t t = (size_t)(s->slowdown_at_s * 1000 / BUCKET_MS), last = t;
    for (size_t k = t; k < nb; k++)
        if (s->ser.waiting[k] > 0)
            last = k; /* the line's last bucket with people */
    size_t n = last >= t ? last - t + 1 : 0, settle = t;
    double *v = n ? malloc(n * sizeof(double)) : NULL;
    if (v) {
        for (size_t k = 0; k < n; k++)
            v[k] = rt[t + k];
        qsort(v, n, sizeof v[0], cmp_double);
        double med = v[n / 2];
        free(v);
        for (size_t k = last + 1; k-- > t;)
            if (rt[k] < 0.75 * med || rt[k] > 1.25 * med) {
                settle = k + 1;
                break;
            }
    }
    /* ...and the backlog the rate before it left has drained: the shop's
     * in flight is back within its pool */
    json_int_t pool = json_integer_value(json_object_get(r, "shopPool"));
    while (pool > 0 && settle < nb && s->ser.shop_in_flight_peak[settle] > pool)
        settle++;
    int32_t peak = 0;
    for (size_t k = settle; k < nb; k++)
        if (s->ser.shop_in_flight_peak[k] > peak)
            peak = s->ser.shop_in_flight_peak[k];
    json_object_set_new(r, "settleSeconds", json_real((double)(settle - t) * BUCKET_MS / 1000.0));
    json_object_set_new(r, "shopMaxInFlightAfterSettle", json_integer(peak));
    eta_after_settle(s, r, s->t0_ms + (int64_t)settle * BUCKET_MS);
    return arr;
}

/* Invariants of the short CI scenario; prints each and "N passed, N failed". */
static int check(sim_t *s, json_t *r)
{
    int pass = 0, fail = 0;
#define CHECK(cond, name, ...)                                                                     \
    do {                                                                                           \
        bool ok_ = (cond);                                                                         \
        printf("%s %s: ", ok_ ? "PASS" : "FAIL", name);                                            \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        if (ok_)                                                                                   \
            pass++;                                                                                \
        else                                                                                       \
            fail++;                                                                                \
    } while (0)
    json_int_t lost = json_integer_value(json_object_get(r, "usersLost"));
    json_int_t still = json_integer_value(json_object_get(r, "usersStillWaiting"));
    json_int_t pool = json_integer_value(json_object_get(r, "shopPool"));
    json_int_t maxf = json_integer_value(json_object_get(r, "shopMaxInFlight"));
    json_t *jtau = json_object_get(r, "kendallTau");
    json_int_t over = json_integer_value(json_object_get(r, "usersAdmittedAheadOfEarlierJoiner"));
    json_t *jrate = json_object_get(r, "admitRatePerSecond");
    double rate = json_number_value(jrate);
    json_t *jsrv = json_object_get(r, "serverAdmittedTotal");

    CHECK(lost == 0 && still == 0, "no user lost", "usersLost=%lld stillWaiting=%lld",
          (long long)lost, (long long)still);
    CHECK(s->joined == s->users - 0 && s->errors == 0, "every user joined",
          "joined=%u of %u, errors=%u", s->joined, s->users, s->errors);
    if (s->stock < 0)
        CHECK(s->admitted + s->left + s->told_closed + s->told_sold_out == s->joined,
              "every user admitted or left", "admitted=%u left=%u closed=%u joined=%u", s->admitted,
              s->left, s->told_closed + s->told_sold_out, s->joined);
    else
        CHECK(s->admitted + s->left + s->told_closed + s->told_sold_out == s->joined,
              "every user admitted, left or told sold out",
              "admitted=%u left=%u toldSoldOut=%u toldClosed=%u joined=%u", s->admitted, s->left,
              s->told_sold_out, s->told_closed, s->joined);
    CHECK(s->orders_ok == s->admitted && s->orders_failed == 0 && s->orders_refused == 0,
          "every admitted user ordered", "ok=%u failed=%u refused=%u admitted=%u", s->orders_ok,
          s->orders_failed, s->orders_refused, s->admitted);
    CHECK(pool > 0 && maxf <= pool, "shop in-flight never above the pool",
          "maxInFlight=%lld pool=%lld", (long long)maxf, (long long)pool);
    if (s->opens_at_ms > 0) {
        /* a sale opening: the pre-queue shuffled (tau about 0: within 5
         * standard deviations of tau under independence, at least 0.05),
         * everybody in it ahead of the later arrivals, who are FIFO */
        json_t *jp = json_object_get(r, "kendallTauPrequeue");
        json_t *jl = json_object_get(r, "kendallTauAfterOpening");
        json_int_t np = json_integer_value(json_object_get(r, "prequeueAdmitted"));
        json_int_t before = json_integer_value(json_object_get(r, "laterAdmittedBeforePrequeue"));
        double nn = (double)np;
        double sd = np > 1 ? sqrt(2.0 * (2.0 * nn + 5.0) / (9.0 * nn * (nn - 1.0))) : 1.0;
        double bound = fmax(0.05, 5.0 * sd);
        bool shuffled = !json_is_false(json_object_get(s->queue_config, "preQueueShuffle"));
        if (shuffled)
            CHECK(json_is_number(jp) && fabs(json_number_value(jp)) <= bound,
                  "pre-queue shuffled (|tau| small)", "kendallTauPrequeue=%.6f bound %.4f, n=%lld",
                  json_number_value(jp), bound, (long long)np);
        else
            CHECK(json_is_number(jp) && json_number_value(jp) > 0.9,
                  "pre-queue in arrival order (preQueueShuffle false)", "kendallTauPrequeue=%.6f",
                  json_number_value(jp));
        CHECK(before == 0, "the pre-queue ahead of later arrivals",
              "laterAdmittedBeforePrequeue=%lld", (long long)before);
        CHECK(!json_is_number(jl) || json_number_value(jl) >= 1.0 - 1e-12,
              "later arrivals FIFO (tau = 1.0)", "kendallTauAfterOpening=%.9f",
              json_number_value(jl));
    } else {
        CHECK(json_is_number(jtau) && json_number_value(jtau) >= 1.0 - 1e-12 && over == 0,
              "FIFO (tau = 1.0)", "kendallTau=%.9f admittedAheadOfEarlierJoiner=%lld",
              json_number_value(jtau), (long long)over);
    }
    CHECK(s->bypass_attempts == s->bypass && s->bypass_accepted == 0, "every bypass refused",
          "bypassAttempts=%u (of %u) bypassAccepted=%u", s->bypass_attempts, s->bypass,
          s->bypass_accepted);
    /* a replayer replays once its order went through (with a stock, those
     * told "sold out" never had a token to replay) */
    uint32_t replayers_ordered = 0;
    for (uint32_t i = 0; i < s->n_users; i++)
        if (s->u[i].kind == K_REPLAY && s->u[i].order_code == 200)
            replayers_ordered++;
    CHECK(s->replay_attempts == replayers_ordered &&
              (s->stock >= 0 || replayers_ordered == s->replay) && s->replay_accepted == 0,
          "every token replay refused", "replayAttempts=%u (of %u, %u ordered) replayAccepted=%u",
          s->replay_attempts, s->replay, replayers_ordered, s->replay_accepted);
    double tol = s->rate_tol_pct / 100.0;
    if (s->max_active == 0)
        CHECK(json_is_number(jrate) && fabs(rate - s->rate) <= tol * s->rate,
              "admission rate within the tolerance",
              "measured %.2f/s, configured %.2f/s (%+.2f%%, bound %g%%)", rate, s->rate,
              (rate - s->rate) / s->rate * 100, s->rate_tol_pct);
    else /* maxActive may hold admission below the rate, never above it */
        CHECK(json_is_number(jrate) && rate <= (1 + tol) * s->rate,
              "admission rate at most the configured (+ the tolerance)",
              "measured %.2f/s, configured %.2f/s, maxActive %u, bound %g%%", rate, s->rate,
              s->max_active, s->rate_tol_pct);
    if (s->sleepers_planned > 0) {
        /* phones that slept kept their place: held while away, admitted on return */
        CHECK(s->sleepers > 0 && s->sleepers_lost == 0, "no sleeper lost their place",
              "sleepers=%u (of %u planned) sleepersLost=%u", s->sleepers, s->sleepers_planned,
              s->sleepers_lost);
        CHECK(s->sleepers_held > 0 && s->sleepers_returned == s->sleepers_held,
              "every held sleeper admitted on return", "sleepersHeld=%u sleepersReturned=%u",
              s->sleepers_held, s->sleepers_returned);
        CHECK(s->sleepers_returned + s->sleepers_pass_waited + s->sleepers_woke_in_line ==
                  s->sleepers,
              "every sleeper came back to its place",
              "returned (held) %u + pass waited %u + back in line %u = %u sleepers",
              s->sleepers_returned, s->sleepers_pass_waited, s->sleepers_woke_in_line, s->sleepers);
    }
    if (s->stock >= 0) {
        json_t *so = json_object_get(r, "soldOutAt");
        json_int_t kept = json_integer_value(json_object_get(r, "passesKeepingStock"));
        CHECK(json_integer_value(json_object_get(r, "admittedBeyondStock")) == 0 &&
                  kept <= s->stock,
              "nobody admitted beyond the stock",
              "admitted=%u server admittedTotal=%lld, expired unconsumed %lld, kept %lld, "
              "stock=%lld",
              s->admitted, (long long)json_integer_value(jsrv),
              (long long)json_integer_value(json_object_get(r, "passesExpired")), (long long)kept,
              (long long)s->stock);
        if ((int64_t)s->joined > s->stock + (int64_t)s->left)
            CHECK(kept == s->stock && json_is_integer(so) && s->told_sold_out > 0,
                  "the stock sold, then sold out",
                  "passes kept=%lld stock=%lld soldOutAt %s, told "
                  "sold out %u",
                  (long long)kept, (long long)s->stock, json_is_integer(so) ? "set" : "null",
                  s->told_sold_out);
    }
    CHECK(json_is_integer(jsrv) && json_integer_value(jsrv) == (json_int_t)s->admitted,
          "every admission reached its user", "server admittedTotal=%lld, users admitted=%u",
          (long long)json_integer_value(jsrv), s->admitted);
#undef CHECK
    printf("%d passed, %d failed\n", pass, fail);
    return fail == 0 ? 0 : 1;
}

static const char *KIND_NAMES[] = {"normal", "bypass", "replay", "greedy", "quitter"};
static const char *STATE_NAMES[] = {"pending", "joining", "waiting", "ordering", "done",
                                    "left",    "lost",    "error",   "closed"};

/* One row per user, times in ms after the start of arrivals (-1 = never). */
static void write_users_csv(sim_t *s)
{
    FILE *f = fopen(s->users_csv, "w");
    if (!f) {
        fprintf(stderr, "waitroom-sim: cannot write %s: %s\n", s->users_csv, strerror(errno));
        s->exit_code = 1;
        return;
    }
    fprintf(f,
            "user,kind,state,joinSeq,arriveMs,joinMs,positionAtJoin,etaSeconds,admitTickMs,"
            "admitSeenMs,orderSentMs,orderDoneMs,orderStatus,prequeue,sleepFromMs,wakeMs,held\n");
#define REL(x) ((x) > 0 ? (long long)((x)-s->t0_ms) : -1LL)
    for (uint32_t i = 0; i < s->n_users; i++) {
        user_t *u = &s->u[i];
        fprintf(f, "%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d,%lld,%lld,%d\n",
                u->uid, KIND_NAMES[u->kind], STATE_NAMES[u->st], (long long)u->join_seq,
                REL(u->arrive_ms), REL(u->join_ms), (long long)u->pos_join, (long long)u->eta_s,
                REL(u->admit_tick_ms), REL(u->admit_seen_ms), REL(u->order_sent_ms),
                REL(u->order_done_ms), u->order_code, u->prequeue ? 1 : 0, REL(u->sleep_from_ms),
                REL(u->wake_ms), u->held ? 1 : 0);
    }
#undef REL
    if (fclose(f) != 0)
        s->exit_code = 1;
}

static void write_results(sim_t *s)
{
    if (s->users_csv)
        write_users_csv(s);
    json_t *r = compute(s);
    if (isatty(2))
        fprintf(stderr, "\n");
    wr_report_print_run(stdout, r);
    if (s->out_path && json_dump_file(r, s->out_path, JSON_INDENT(1) | JSON_SORT_KEYS) != 0) {
        fprintf(stderr, "waitroom-sim: cannot write %s\n", s->out_path);
        s->exit_code = 1;
    }
    if (s->assert_mode && !s->no_queue && check(s, r) != 0)
        s->exit_code = 1;
    json_decref(r);
}

static void on_final(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    if (code == 200 && body) {
        if (json_object_get(body, "pool"))
            s->shop_final = json_incref(body);
        else
            s->queue_final = json_incref(body);
    }
    if (--s->final_pending == 0) {
        write_results(s);
        s->finished = true;
        event_base_loopexit(s->base, NULL);
    }
}

static void finish(sim_t *s)
{
    if (s->finishing)
        return;
    s->finishing = true;
    s->end_ms = now_ms();
    s->final_pending = 1;
    pool_submit(&s->shopstat, op_new(EVHTTP_REQ_GET, "/stats", NULL, on_final, s));
    if (!s->no_queue) {
        char path[192], auth[300];
        snprintf(path, sizeof(path), "/v1/admin/queues/%s", s->queue);
        snprintf(auth, sizeof(auth), "Bearer %s", s->admin_key);
        op_t *op = op_new(EVHTTP_REQ_GET, path, NULL, on_final, s);
        op_set_auth(op, auth);
        s->final_pending++;
        pool_submit(&s->statp, op);
    }
}

static void deadline(evutil_socket_t fd, short what, void *arg)
{
    sim_t *s = arg;
    fprintf(stderr, "\nwaitroom-sim: deadline of %u s reached; %u users not done\n", s->max_seconds,
            s->n_users - s->done);
    finish(s);
}

/* ---------- start: queue setup, warm-up, arrivals ---------- */

static double *read_csv(const char *path, uint32_t *n_out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "waitroom-sim: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1024, n = 0;
    double *v = malloc(cap * sizeof(double));
    char line[512];
    while (v && fgets(line, sizeof(line), f) && n < MAX_USERS) {
        char *end;
        double x = strtod(line, &end);
        if (end == line || isnan(x))
            continue; /* header or blank line */
        if (n == cap) {
            double *nv = realloc(v, (cap *= 2) * sizeof(double));
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        v[n++] = x;
    }
    fclose(f);
    if (!v || n == 0) {
        fprintf(stderr, "waitroom-sim: %s has no arrival times\n", path);
        free(v);
        return NULL;
    }
    /* epoch milliseconds (> 1e11) or seconds; relative to the earliest */
    double min = v[0];
    for (size_t i = 0; i < n; i++)
        if (v[i] < min)
            min = v[i];
    for (size_t i = 0; i < n; i++)
        v[i] = (v[i] - min) * (min > 1e11 ? 1.0 : 1000.0);
    *n_out = (uint32_t)n;
    return v;
}

static void start_arrivals(sim_t *s)
{
    s->t0_ms = now_ms() + 200;
    if (s->opens_in_s > 0 && s->no_queue) /* no queue to tell: the same schedule */
        s->opens_at_ms = s->t0_ms + (int64_t)s->opens_in_s * 1000;
    double *csv = s->csv;
    uint32_t ncsv = s->ncsv;
    for (uint32_t i = 0; i < s->n_users; i++) {
        user_t *u = &s->u[i];
        double off; /* ms after t0 */
        if (csv)
            off = csv[i % ncsv];
        else if (!strcmp(s->profile, "ramp"))
            off = s->ramp_seconds * 1000.0 * sqrt(rnd(s)); /* arrival rate rises linearly */
        else
            off = rnd(s) * 1000.0; /* burst: all within 1 s */
        if (s->opens_at_ms > 0 && i >= s->users - s->late && i < s->users)
            off = (double)(s->opens_at_ms - s->t0_ms) + 300.0 + rnd(s) * 1000.0; /* late */
        u->arrive_ms = s->t0_ms + (int64_t)off;
        /* without the line, whoever comes early reloads at the opening */
        if (s->no_queue && s->opens_at_ms > u->arrive_ms && u->kind != K_BYPASS)
            u->arrive_ms = s->opens_at_ms;
        u->quit_at_ms = u->arrive_ms + 1000 + (int64_t)(rnd(s) * 4000); /* patience 1-5 s */
        timer_ms(u->ev, u->arrive_ms - now_ms());
    }
    struct timeval tv = {(time_t)(s->sample_ms / 1000), (suseconds_t)(s->sample_ms % 1000) * 1000};
    event_add(s->ev_sample, &tv);
    struct timeval pv = {0, 250000};
    event_add(s->ev_progress, &pv);
    struct timeval dv = {(time_t)s->max_seconds, 0};
    event_add(s->ev_deadline, &dv);
    fprintf(stderr,
            "waitroom-sim: %u users (%s), %u bypass, %u replay, %u greedy, %u quitters, "
            "%s\n",
            s->users, s->profile, s->bypass, s->replay, s->greedy, s->quitters,
            s->no_queue ? "straight to the shop (no line)" : "through the line");
}

static void warm_next(sim_t *s);

static void on_opening(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    json_t *cfg = json_object_get(body, "config");
    json_t *at = json_object_get(cfg ? cfg : body, "opensAt");
    if (code != 200) {
        char *d = body ? json_dumps(body, JSON_COMPACT) : NULL;
        fprintf(stderr,
                "waitroom-sim: setting opensAt answered %d %s (does this waitroomd have "
                "the sale opening?)\n",
                code, d ? d : "");
        free(d);
        s->exit_code = 2;
        event_base_loopexit(s->base, NULL);
        return;
    }
    if (json_is_integer(at)) /* else the value sent */
        s->opens_at_ms = json_integer_value(at);
    if (json_is_object(cfg ? cfg : body)) {
        json_decref(s->queue_config);
        s->queue_config = json_incref(cfg ? cfg : body);
    }
    start_arrivals(s);
}

/* --opens-in: the opening, set now that the connections are open, so that
 * the whole countdown is spent arriving (PATCH opensAt). */
static void set_opening(sim_t *s)
{
    char path[192], auth[300];
    snprintf(path, sizeof(path), "/v1/admin/queues/%s", s->queue);
    snprintf(auth, sizeof(auth), "Bearer %s", s->admin_key);
    op_t *op = op_new(EVHTTP_REQ_PATCH, path, NULL, on_opening, s);
    op_set_auth(op, auth);
    s->opens_at_ms = now_ms() + 250 + (int64_t)s->opens_in_s * 1000;
    json_t *b = json_pack("{s:I}", "opensAt", (json_int_t)s->opens_at_ms);
    op->body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    if (!op->body) {
        fprintf(stderr, "waitroom-sim: out of memory\n");
        exit(1);
    }
    pool_submit(&s->statp, op);
}

static void on_warm(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    s->warm_inflight--;
    s->warm_done++;
    if (code == 0)
        s->warm_errors++;
    if (s->warm_done == s->warm_total) {
        if (s->warm_errors > 0) {
            fprintf(stderr, "waitroom-sim: %zu of %zu connections failed to open\n", s->warm_errors,
                    s->warm_total);
            s->exit_code = 2;
            event_base_loopexit(s->base, NULL);
            return;
        }
        if (s->opens_in_s > 0 && !s->no_queue)
            set_opening(s);
        else
            start_arrivals(s);
        return;
    }
    warm_next(s);
}

/* Opens every connection (GET /healthz on each), WARM_PARALLEL at a time, so
 * the burst does not start with thousands of simultaneous connects. */
static void warm_next(sim_t *s)
{
    pool_t *pools[] = {&s->join, &s->wr, &s->shopp, &s->statp, &s->shopstat};
    while (s->warm_inflight < WARM_PARALLEL && s->warm_next < s->warm_total) {
        size_t k = s->warm_next++;
        for (size_t p = 0; p < 5; p++) {
            if (k < pools[p]->n) {
                pool_t *pl = pools[p];
                /* take that connection out of the idle list */
                conn_t *c = &pl->conns[k];
                conn_t **pp = &pl->idle;
                while (*pp && *pp != c)
                    pp = &(*pp)->next_idle;
                if (*pp)
                    *pp = c->next_idle;
                op_t *op = op_new(EVHTTP_REQ_GET, "/healthz", NULL, on_warm, s);
                op->pool = pl;
                op->retries = 0;
                s->warm_inflight++;
                dispatch(c, op);
                break;
            }
            k -= pools[p]->n;
        }
    }
}

static void start_warm(sim_t *s)
{
    pool_t *pools[] = {&s->join, &s->wr, &s->shopp, &s->statp, &s->shopstat};
    for (size_t p = 0; p < 5; p++)
        s->warm_total += pools[p]->n;
    fprintf(stderr, "waitroom-sim: opening %zu connections\n", s->warm_total);
    warm_next(s);
}

static void put_queue(sim_t *s);

static void on_put(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    const char *field = json_string_value(json_object_get(body, "field"));
    if (code == 400 && field && !strcmp(field, "sessionSeconds") && s->session_s > 0 &&
        !s->sessions_refused) {
        fprintf(stderr,
                "waitroom-sim: this waitroomd has no sessions (sessionSeconds refused): one in, "
                "one out runs with maxActive %u only (a slot frees at consume, not at release)\n",
                s->max_active);
        s->sessions_refused = true;
        put_queue(s);
        return;
    }
    if (code != 200) {
        char *d = body ? json_dumps(body, JSON_COMPACT) : NULL;
        fprintf(stderr, "waitroom-sim: creating queue %s answered %d %s\n", s->queue, code,
                d ? d : "");
        free(d);
        s->exit_code = 2;
        event_base_loopexit(s->base, NULL);
        return;
    }
    json_t *cfg = json_object_get(body, "config");
    if (!cfg)
        cfg = body;
    json_decref(s->queue_config);
    s->queue_config = json_incref(cfg);
    json_t *ttl = json_object_get(cfg, "tokenTtlSeconds");
    if (json_is_integer(ttl))
        s->ttl_s = (uint32_t)json_integer_value(ttl);
    start_warm(s);
}

/* PUT the queue: rate, tick, TTL, no size limit, fail closed; maxActive and
 * sessionSeconds when asked (sessionSeconds left out once the server has
 * refused it); --poll-bands; then --queue-config on top. */
static void put_queue(sim_t *s)
{
    char path[192], auth[300];
    snprintf(path, sizeof(path), "/v1/admin/queues/%s", s->queue);
    snprintf(auth, sizeof(auth), "Bearer %s", s->admin_key);
    json_t *cfg = json_pack("{s:f,s:I,s:I,s:i,s:s}", "admitPerSecond", s->rate, "tickMs",
                            (json_int_t)s->tick_ms, "tokenTtlSeconds", (json_int_t)s->ttl_s,
                            "maxQueueSize", 0, "failPolicy", "closed");
    if (cfg && s->max_active > 0)
        json_object_set_new(cfg, "maxActive", json_integer(s->max_active));
    if (cfg && s->session_s > 0 && !s->sessions_refused)
        json_object_set_new(cfg, "sessionSeconds", json_integer(s->session_s));
    if (cfg && s->poll_bands)
        json_object_set(cfg, "pollBands", s->poll_bands);
    if (cfg && s->idle_timeout_set)
        json_object_set_new(cfg, "idleTimeoutSeconds", json_integer(s->idle_timeout_s));
    if (cfg && s->stock >= 0)
        json_object_set_new(cfg, "stock", json_integer(s->stock));
    if (cfg && s->queue_extra)
        json_object_update(cfg, s->queue_extra);
    op_t *put = op_new(EVHTTP_REQ_PUT, path, NULL, on_put, s);
    op_set_auth(put, auth);
    put->body = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
    json_decref(cfg);
    if (!put->body) {
        fprintf(stderr, "waitroom-sim: out of memory\n");
        exit(1);
    }
    pool_submit(&s->statp, put);
}

static void on_delete(op_t *op, int code, json_t *body)
{
    put_queue(op->arg);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    sim_t *s = arg;
    fprintf(stderr, "\nwaitroom-sim: interrupted\n");
    s->exit_code = 130;
    event_base_loopexit(s->base, NULL);
}

/* ---------- main ---------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: waitroom-sim [run] [options]      simulate a sale\n"
            "       waitroom-sim report --with W.json --without N.json [--json OUT] [--svg OUT]\n"
            "run options:\n"
            "  --server http://127.0.0.1:PORT   waitroomd (header identity X-User-Id)\n"
            "  --admin-key KEY                  creates the queue (deleted first with --fresh)\n"
            "  --shop http://127.0.0.1:PORT     waitroom-shop\n"
            "  --no-queue                       users go straight to the shop (shop --no-queue)\n"
            "  --queue NAME (sale)  --rate R (175)  --tick-ms MS (100)  --ttl S (60)\n"
            "  --users N (10000)  --profile burst|ramp|csv:FILE  --ramp-seconds S (30)\n"
            "    burst: all arrive within 1 s; ramp: arrival rate rising linearly over S;\n"
            "    csv: one user per line, first column the arrival time in seconds (or epoch\n"
            "    ms if > 1e11), relative to the earliest; other lines are skipped\n"
            "  --bypass N  --replay N  --greedy N  --quitters N   (mixed-in behaviours)\n"
            "  --greedy-poll-ms MS (100)  --conns N (256)  --join-conns N (1)  --shop-conns N\n"
            "  --poll-bands JSON   the queue's pollBands, e.g. "
            "'[{\"upTo\":600,\"ms\":1000},{\"ms\":5000}]'\n"
            "  --max-seconds S  --sample-ms MS (100)  --seed N  --label TEXT\n"
            "  --slowdown-at S  the shop slows down S s after the start: report settleSeconds\n"
            "                   and shopMaxInFlightAfterSettle (autotune)\n"
            "  --queue-config JSON   more queue config fields, e.g. '{\"pollJitter\":0.5}'\n"
            "  --max-active N  --session-seconds S   one in, one out: maxActive = the shop's\n"
            "    pool, sessions ended by the shop (waitroom-shop --release); a server without\n"
            "    sessions gets maxActive only (the run records it)\n"
            "  --opens-in S  a sale opening: opensAt S s after the connections are open; the\n"
            "    crowd arrives before it (the pre-queue), --late N of the users in the\n"
            "    second after it; the report adds the pre-queue's Kendall tau (shuffle: ~0)\n"
            "    and the later arrivals' (FIFO: 1); --no-queue: early users reach the shop\n"
            "    at the opening\n"
            "  --sleepers F  that fraction of the ordinary users stops polling once, from an\n"
            "    answer in the first quarter of its expected wait, for --sleep-range A:B\n"
            "    seconds (180:360; seeded per sleeper), then polls as told again\n"
            "  --idle-timeout S   the queue's idleTimeoutSeconds (away after S s of silence)\n"
            "  --stock N   the queue's stock: N passes, then sold out\n"
            "  --rate-tolerance PCT   --assert's bound on the admission rate's error (2)\n"
            "  --users-csv FILE (one row per user)\n"
            "  --out FILE.json  --assert (check the CI invariants, exit 1 if one fails)\n");
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

/* --sleepers F: round(F x users) of the ordinary users (not the replayers,
 * greedy users or quitters), drawn with the run's seed; each sleeps for a
 * seeded time in --sleep-range, from an answer in the first quarter of
 * its expected wait (handle_status). */
static void pick_sleepers(sim_t *s)
{
    uint32_t *normal = malloc((size_t)s->users * sizeof(uint32_t));
    if (!normal) {
        fprintf(stderr, "waitroom-sim: out of memory\n");
        exit(1);
    }
    uint32_t nn = 0;
    for (uint32_t k = 0; k < s->users; k++)
        if (s->u[k].kind == K_NORMAL)
            normal[nn++] = k;
    uint32_t want = (uint32_t)llround(s->sleepers_frac * (double)s->users);
    if (want > nn)
        want = nn;
    for (uint32_t j = 0; j < want; j++) { /* a partial Fisher-Yates shuffle */
        uint32_t pick = j + (uint32_t)(rnd(s) * (double)(nn - j));
        if (pick >= nn)
            pick = nn - 1;
        uint32_t tmp = normal[j];
        normal[j] = normal[pick];
        normal[pick] = tmp;
        user_t *u = &s->u[normal[j]];
        u->sleeper = true;
        u->sleep_at = rnd(s);
        u->sleep_ms = (int64_t)s->sleep_min_s * 1000 +
                      (int64_t)(rnd(s) * (double)(s->sleep_max_s - s->sleep_min_s) * 1000.0);
    }
    s->sleepers_planned = want;
    free(normal);
}

static int cmd_report(int argc, char **argv)
{
    const char *with = NULL, *without = NULL, *jout = NULL, *svg = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--with"))
            with = argv[i + 1];
        else if (!strcmp(argv[i], "--without"))
            without = argv[i + 1];
        else if (!strcmp(argv[i], "--json"))
            jout = argv[i + 1];
        else if (!strcmp(argv[i], "--svg"))
            svg = argv[i + 1];
        else {
            usage();
            return 2;
        }
    }
    if (!with || !without) {
        usage();
        return 2;
    }
    json_error_t e;
    json_t *w = json_load_file(with, 0, &e);
    json_t *wo = w ? json_load_file(without, 0, &e) : NULL;
    if (!w || !wo) {
        fprintf(stderr, "waitroom-sim: %s: %s\n", e.source, e.text);
        json_decref(w);
        return 1;
    }
    int rc = 0;
    wr_report_print_compare(stdout, wo, w);
    if (jout) {
        json_t *r = json_pack("{s:O,s:O}", "withQueue", w, "withoutQueue", wo);
        if (!r || json_dump_file(r, jout, JSON_INDENT(1) | JSON_SORT_KEYS) != 0) {
            fprintf(stderr, "waitroom-sim: cannot write %s\n", jout);
            rc = 1;
        }
        json_decref(r);
    }
    if (svg && wr_report_write_svg(svg, wo, w) != 0) {
        fprintf(stderr, "waitroom-sim: cannot write %s\n", svg);
        rc = 1;
    }
    json_decref(w);
    json_decref(wo);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "report"))
        return cmd_report(argc, argv);
    static sim_t sim;
    sim_t *s = &sim;
    s->queue = "sale";
    s->profile = "burst";
    s->users = 10000;
    s->rate = 175;
    s->slowdown_at_s = -1;
    s->tick_ms = 100;
    s->ttl_s = 60;
    s->conns = 256;
    s->join_conns = 1;
    s->shop_conns = 0;
    s->greedy_poll_ms = 100;
    s->sample_ms = 100;
    s->ramp_seconds = 30;
    s->fresh = true;
    s->prequeue_peak = -1;
    s->stock = -1;
    s->sleep_min_s = 180;
    s->sleep_max_s = 360;
    s->rate_tol_pct = 2;
    s->seed = (uint64_t)time(NULL);
    uint32_t shop_conns_set = 0;

    int i = 1;
    if (argc > 1 && !strcmp(argv[1], "run"))
        i = 2;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--no-queue")) {
            s->no_queue = true;
            continue;
        }
        if (!strcmp(a, "--assert")) {
            s->assert_mode = true;
            continue;
        }
        if (!strcmp(a, "--keep-queue")) {
            s->fresh = false;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "waitroom-sim: %s needs a value\n", a);
            return 2;
        }
        const char *v = argv[++i];
        bool ok = true;
        uint32_t x = 0;
        if (!strcmp(a, "--server"))
            s->server = v;
        else if (!strcmp(a, "--shop"))
            s->shop = v;
        else if (!strcmp(a, "--admin-key"))
            s->admin_key = v;
        else if (!strcmp(a, "--queue"))
            s->queue = v;
        else if (!strcmp(a, "--out"))
            s->out_path = v;
        else if (!strcmp(a, "--label"))
            s->label = v;
        else if (!strcmp(a, "--slowdown-at")) {
            char *end;
            s->slowdown_at_s = strtod(v, &end);
            ok = !*end && s->slowdown_at_s >= 0;
        } else if (!strcmp(a, "--users-csv"))
            s->users_csv = v;
        else if (!strcmp(a, "--queue-config")) {
            json_decref(s->queue_extra);
            s->queue_extra = json_loads(v, 0, NULL);
            ok = json_is_object(s->queue_extra);
        } else if (!strcmp(a, "--poll-bands")) {
            json_decref(s->poll_bands);
            s->poll_bands = json_loads(v, 0, NULL);
            ok = json_is_array(s->poll_bands);
        } else if (!strcmp(a, "--profile")) {
            if (!strncmp(v, "csv:", 4)) {
                s->csv_path = v + 4;
                s->profile = "csv";
            } else if (!strcmp(v, "burst") || !strcmp(v, "ramp")) {
                s->profile = v;
            } else {
                ok = false;
            }
        } else if (!strcmp(a, "--users"))
            ok = parse_u32(v, &s->users, 1, MAX_USERS);
        else if (!strcmp(a, "--bypass"))
            ok = parse_u32(v, &s->bypass, 0, MAX_USERS);
        else if (!strcmp(a, "--replay"))
            ok = parse_u32(v, &s->replay, 0, MAX_USERS);
        else if (!strcmp(a, "--greedy"))
            ok = parse_u32(v, &s->greedy, 0, MAX_USERS);
        else if (!strcmp(a, "--quitters"))
            ok = parse_u32(v, &s->quitters, 0, MAX_USERS);
        else if (!strcmp(a, "--conns"))
            ok = parse_u32(v, &s->conns, 1, MAX_CONNS);
        else if (!strcmp(a, "--join-conns"))
            ok = parse_u32(v, &s->join_conns, 1, 64);
        else if (!strcmp(a, "--shop-conns"))
            ok = parse_u32(v, &shop_conns_set, 1, MAX_CONNS);
        else if (!strcmp(a, "--tick-ms"))
            ok = parse_u32(v, &s->tick_ms, 1, 60000);
        else if (!strcmp(a, "--ttl"))
            ok = parse_u32(v, &s->ttl_s, 1, 86400);
        else if (!strcmp(a, "--max-active"))
            ok = parse_u32(v, &s->max_active, 0, UINT32_MAX);
        else if (!strcmp(a, "--session-seconds"))
            ok = parse_u32(v, &s->session_s, 0, 86400);
        else if (!strcmp(a, "--opens-in"))
            ok = parse_u32(v, &s->opens_in_s, 1, MAX_SECONDS);
        else if (!strcmp(a, "--late"))
            ok = parse_u32(v, &s->late, 0, MAX_USERS);
        else if (!strcmp(a, "--greedy-poll-ms"))
            ok = parse_u32(v, &s->greedy_poll_ms, 1, 60000);
        else if (!strcmp(a, "--max-seconds"))
            ok = parse_u32(v, &s->max_seconds, 1, MAX_SECONDS);
        else if (!strcmp(a, "--sample-ms"))
            ok = parse_u32(v, &s->sample_ms, 10, 10000);
        else if (!strcmp(a, "--seed")) {
            ok = parse_u32(v, &x, 0, UINT32_MAX);
            s->seed = x;
        } else if (!strcmp(a, "--rate")) {
            char *end;
            s->rate = strtod(v, &end);
            ok = !*end && s->rate > 0 && s->rate <= 1e6;
        } else if (!strcmp(a, "--sleepers")) {
            char *end;
            s->sleepers_frac = strtod(v, &end);
            ok = !*end && s->sleepers_frac >= 0 && s->sleepers_frac <= 1;
        } else if (!strcmp(a, "--sleep-range")) {
            unsigned lo = 0, hi = 0;
            char tail = 0;
            ok = sscanf(v, "%u:%u%c", &lo, &hi, &tail) == 2 && lo >= 1 && lo <= hi &&
                 hi <= MAX_SECONDS;
            s->sleep_min_s = lo;
            s->sleep_max_s = hi;
        } else if (!strcmp(a, "--idle-timeout")) {
            ok = parse_u32(v, &s->idle_timeout_s, 0, 86400);
            s->idle_timeout_set = true;
        } else if (!strcmp(a, "--stock")) {
            char *end;
            errno = 0;
            long long st = strtoll(v, &end, 10);
            ok = !errno && !*end && *v && st >= 0 && st <= (1LL << 53);
            s->stock = st;
        } else if (!strcmp(a, "--rate-tolerance")) {
            char *end;
            s->rate_tol_pct = strtod(v, &end);
            ok = !*end && s->rate_tol_pct > 0 && s->rate_tol_pct <= 100;
        } else if (!strcmp(a, "--ramp-seconds")) {
            char *end;
            s->ramp_seconds = strtod(v, &end);
            ok = !*end && s->ramp_seconds > 0 && s->ramp_seconds <= MAX_SECONDS;
        } else {
            fprintf(stderr, "waitroom-sim: unknown option %s\n", a);
            usage();
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "waitroom-sim: bad value for %s: %s\n", a, v);
            return 2;
        }
    }
    if (!s->shop || (!s->no_queue && (!s->server || !s->admin_key))) {
        fprintf(stderr, "waitroom-sim: --shop is required, and --server and --admin-key "
                        "unless --no-queue\n");
        usage();
        return 2;
    }
    if (s->csv_path) {
        /* the CSV decides the crowd: one user per arrival time */
        s->csv = read_csv(s->csv_path, &s->ncsv);
        if (!s->csv)
            return 2;
        s->users = s->ncsv;
    }
    if (s->late > s->users || (s->late > 0 && s->opens_in_s == 0)) {
        fprintf(stderr, "waitroom-sim: --late needs --opens-in and at most --users\n");
        return 2;
    }
    if (s->replay + s->greedy + s->quitters > s->users) {
        fprintf(stderr, "waitroom-sim: --replay + --greedy + --quitters exceed --users\n");
        return 2;
    }
    /* without the line every user is at the shop at once: one connection
     * each (up to 10000); with it, a pool is plenty */
    s->shop_conns = shop_conns_set ? shop_conns_set : (s->no_queue ? 10000 : 256);
    if (s->shop_conns > s->users + s->bypass)
        s->shop_conns = s->users + s->bypass;
    if (s->no_queue) {
        s->conns = 0;
        s->join_conns = 0;
    }
    if (!s->max_seconds) {
        double need = s->no_queue ? 60 : (double)s->users / s->rate * 1.5 + 60;
        if (!strcmp(s->profile, "ramp"))
            need += s->ramp_seconds;
        need += s->opens_in_s;
        if (s->sleepers_frac > 0)
            need += s->sleep_max_s; /* the last sleeper comes back */
        s->max_seconds = need > MAX_SECONDS ? MAX_SECONDS : (uint32_t)need;
    }
    wr_rng_seed(&s->rng, s->seed * 2654435761ULL + 0x9e3779b97f4a7c15ULL);

    struct rlimit rl;
    size_t need_fds = (size_t)s->conns + s->join_conns + s->shop_conns + 2 + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        size_t other = need_fds - s->shop_conns;
        if (!shop_conns_set && rl.rlim_cur < need_fds && rl.rlim_cur > other + 16) {
            /* the default shop connection count shrinks to fit the limit
             * (the shop needs as many descriptors: fit both) */
            s->shop_conns = (uint32_t)(rl.rlim_cur - other);
            need_fds = other + s->shop_conns;
            fprintf(stderr, "waitroom-sim: %u shop connections (file descriptor limit %llu)\n",
                    s->shop_conns, (unsigned long long)rl.rlim_cur);
        }
        if (rl.rlim_cur < need_fds) {
            fprintf(stderr, "waitroom-sim: need %zu file descriptors, limit is %llu\n", need_fds,
                    (unsigned long long)rl.rlim_cur);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);

    s->base = event_base_new();
    if (!s->base)
        return 1;
    if (!pool_init(s, &s->shopp, "shop", s->shop, s->shop_conns, false) ||
        !pool_init(s, &s->shopstat, "shop-stats", s->shop, 1, false))
        return 2;
    if (!s->no_queue) {
        if (!pool_init(s, &s->wr, "waitroomd", s->server, s->conns, true) ||
            !pool_init(s, &s->join, "join", s->server, s->join_conns, true) ||
            !pool_init(s, &s->statp, "admin", s->server, 1, false))
            return 2;
    }

    s->n_users = s->users + s->bypass;
    s->u = calloc(s->n_users, sizeof(user_t));
    s->ser.cap = (size_t)s->max_seconds * 1000 / BUCKET_MS + 600;
    s->ser.waiting = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.admitted_total = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.shop_in_flight = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.shop_in_flight_peak = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.shop_busy = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.shop_waiting = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.wr_requests = calloc(s->ser.cap, sizeof(uint32_t));
    s->ser.asleep = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.held = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.returned = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.stock_left = malloc(s->ser.cap * sizeof(int32_t));
    s->ser.rate_target = malloc(s->ser.cap * sizeof(double));
    if (!s->u || !s->ser.waiting || !s->ser.admitted_total || !s->ser.shop_in_flight ||
        !s->ser.shop_in_flight_peak || !s->ser.shop_busy || !s->ser.shop_waiting ||
        !s->ser.wr_requests || !s->ser.asleep || !s->ser.held || !s->ser.returned ||
        !s->ser.stock_left || !s->ser.rate_target) {
        fprintf(stderr, "waitroom-sim: out of memory\n");
        return 1;
    }
    for (size_t k = 0; k < s->ser.cap; k++)
        s->ser.rate_target[k] = -1;
    for (size_t k = 0; k < s->ser.cap; k++)
        s->ser.waiting[k] = s->ser.admitted_total[k] = s->ser.shop_in_flight[k] =
            s->ser.shop_in_flight_peak[k] = s->ser.shop_busy[k] = s->ser.shop_waiting[k] =
                s->ser.asleep[k] = s->ser.held[k] = s->ser.returned[k] = s->ser.stock_left[k] = -1;

    /* kinds: every k-th user of the line is a replayer / greedy / quitter */
    for (uint32_t k = 0; k < s->n_users; k++) {
        user_t *u = &s->u[k];
        u->sim = s;
        u->idx = k;
        u->eta_s = -1;
        u->eta1_s = -1;
        u->eta1_ms = 0;
        u->join_seq = -1;
        u->kind = k >= s->users ? K_BYPASS : K_NORMAL;
        snprintf(u->uid, sizeof(u->uid), "%s%06u", u->kind == K_BYPASS ? "bypass-" : "user-", k);
        u->ev = event_new(s->base, -1, 0, user_timer, u);
        if (!u->ev)
            return 1;
    }
    uint32_t special = s->replay + s->greedy + s->quitters;
    if (special > 0) {
        uint32_t step = s->users / special;
        uint32_t k = 0;
        for (uint32_t j = 0; j < s->replay; j++, k++)
            s->u[k * step + step / 2].kind = K_REPLAY;
        for (uint32_t j = 0; j < s->greedy; j++, k++)
            s->u[k * step + step / 2].kind = K_GREEDY;
        for (uint32_t j = 0; j < s->quitters; j++, k++)
            s->u[k * step + step / 2].kind = K_QUITTER;
    }
    if (s->sleepers_frac > 0 && !s->no_queue)
        pick_sleepers(s);

    s->ev_sample = event_new(s->base, -1, EV_PERSIST, sample_tick, s);
    s->ev_progress = event_new(s->base, -1, EV_PERSIST, progress_tick, s);
    s->ev_deadline = event_new(s->base, -1, 0, deadline, s);
    struct event *sigint = evsignal_new(s->base, SIGINT, on_signal, s);
    struct event *sigterm = evsignal_new(s->base, SIGTERM, on_signal, s);
    if (!s->ev_sample || !s->ev_progress || !s->ev_deadline || !sigint || !sigterm)
        return 1;
    event_add(sigint, NULL);
    event_add(sigterm, NULL);

    if (s->no_queue) {
        start_warm(s);
    } else {
        char path[192], auth[300];
        snprintf(path, sizeof(path), "/v1/admin/queues/%s", s->queue);
        snprintf(auth, sizeof(auth), "Bearer %s", s->admin_key);
        op_t *op = op_new(s->fresh ? EVHTTP_REQ_DELETE : EVHTTP_REQ_GET, path, NULL, on_delete, s);
        op_set_auth(op, auth);
        pool_submit(&s->statp, op);
    }
    event_base_dispatch(s->base);
    if (!s->finished && s->exit_code == 0)
        s->exit_code = 1;

    for (uint32_t k = 0; k < s->n_users; k++) {
        event_free(s->u[k].ev);
        free(s->u[k].token);
    }
    free(s->u);
    free(s->etas);
    event_free(s->ev_sample);
    event_free(s->ev_progress);
    event_free(s->ev_deadline);
    event_free(sigint);
    event_free(sigterm);
    pool_free(&s->wr);
    pool_free(&s->join);
    pool_free(&s->shopp);
    pool_free(&s->statp);
    pool_free(&s->shopstat);
    free(s->csv);
    json_decref(s->poll_bands);
    json_decref(s->queue_extra);
    json_decref(s->queue_config);
    json_decref(s->shop_final);
    json_decref(s->queue_final);
    free(s->ser.waiting);
    free(s->ser.admitted_total);
    free(s->ser.shop_in_flight);
    free(s->ser.shop_in_flight_peak);
    free(s->ser.shop_busy);
    free(s->ser.shop_waiting);
    free(s->ser.wr_requests);
    free(s->ser.asleep);
    free(s->ser.held);
    free(s->ser.returned);
    free(s->ser.stock_left);
    free(s->ser.rate_target);
    event_base_free(s->base);
    return s->exit_code;
}
