/*
 * sim.h - waitroom-sim's shared types (sim_t, user_t, pools and ops) and
 * the functions its files share (sim.c: the CLI and the run; pool.c: HTTP
 * pools; user.c: the users; sample.c: sampling; scenario.c: the set-up;
 * results.c: the figures; check.c: --assert). Internal to tools/sim.
 */
#ifndef WR_SIM_H
#define WR_SIM_H

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
#include "base/crypto.h"
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

/* A subscribed sleeper's browser side (--subscribed, push.c): its
 * PushSubscription's keys and where its push stands. */
typedef struct push_user {
    uint8_t priv[WR_CRYPTO_P256_PRIV]; /* the subscription's private key */
    uint8_t pub[WR_CRYPTO_P256_PUB];   /* its p256dh */
    uint8_t auth[16];                  /* its auth secret */
    bool silent;                       /* subscribed: no poll until the push */
    bool pushed;                       /* a valid push arrived */
    int64_t latency_ms;                /* its arrival minus the admission tick; -1 = none */
} push_user_t;

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
    uint32_t polls;    /* GETs of entries/me sent */
    push_user_t *push; /* --subscribed: this sleeper subscribed instead (owned); NULL = not */
    bool presale;      /* --presale: joins with a presale code (presale.c) */
    const char *code;  /* that code (borrowed from sim.presale_codes); NULL = none yet */
    uint8_t grp;       /* the line its answers named: 0 standard, k the queue's k-th group */
    bool placed;       /* its join got a place (waiting, prequeue or admitted) */
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
    /* --subscribed F, --push-port P (push.c): that fraction of the sleepers
     * subscribes to Web Push, received on 127.0.0.1:P */
    double subscribed_frac;
    uint32_t push_port;
    struct evhttp *push_http;
    uint8_t push_key[WR_CRYPTO_P256_PUB]; /* the queue's VAPID key (GET push/key) */
    uint32_t subscribed_planned, subscribed, subscribe_failed, subscribed_lost;
    uint32_t pushes_delivered, pushes_rejected, pushes_duplicate, pushes_missed;
    /* --presale F (presale.c): that fraction of the ordinary users joins
     * with a presale code (one use each) into the queue's first group */
    double presale_frac;
    uint32_t presale_planned;
    json_t *presale_codes; /* the codes POST .../codes answered, in order */
    int64_t put_ms;        /* the queue was created (PUT answered): the server report's from */
    json_t *report_final;  /* GET .../report at the end (sale_report.c), or NULL */
    unsigned report_reads; /* reads of it again while its totals were behind (sim.c) */
    json_t *queue_config;  /* the config the server answered the PUT with */
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
    uint32_t placed; /* joins that got a place (the server report's joined) */
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

/* ---- pool.c: clock, randomness, HTTP pools ---- */

/* Wall-clock ms since the epoch: the report's time axis (base/clock.h). */
int64_t now_ms(void);
/* A uniform double in [0, 1) from the run's seeded generator (--seed). */
double rnd(sim_t *s);
/* Arms ev to fire in ms milliseconds (negative: at once). */
void timer_ms(struct event *ev, int64_t ms);
/* The series bucket (BUCKET_MS wide, from t0_ms) of epoch ms t; -1 when
 * outside the series. */
int64_t series_index(sim_t *s, int64_t t);
/* Prints "waitroom-sim: out of memory" and exits 1. */
void die_oom(void);
/* A new op (method, path, X-User-Id user or NULL, callback and its arg);
 * exits on out of memory. Owned by the caller until pool_submit. */
op_t *op_new(enum evhttp_cmd_type m, const char *path, const char *user, op_cb cb, void *arg);
/* Sets the Authorization header ("Bearer ..."), copied. */
void op_set_auth(op_t *op, const char *scheme_token);
/* An op on the admin API for the run's queue (/v1/admin/queues/QUEUE with
 * the admin key), arg = s. */
op_t *admin_op(sim_t *s, enum evhttp_cmd_type m, op_cb cb);
/* The same for /v1/admin/queues/QUEUE<tail> (tail: "/codes", "/report?...";
 * the path is cut at op.path's size). */
op_t *admin_op_at(sim_t *s, enum evhttp_cmd_type m, const char *tail, op_cb cb);
/* Sends op on an idle connection of p or queues it (FIFO); p owns it. */
void pool_submit(pool_t *p, op_t *op);
/* Sends op on connection c now (c must not be idle-listed). */
void dispatch(conn_t *c, op_t *op);
/* n keep-alive connections to url (http://HOST:PORT); count_load: its
 * requests count as load on waitroomd. false on a bad URL or no memory. */
bool pool_init(sim_t *s, pool_t *p, const char *name, const char *url, size_t n, bool count_load);
/* Frees p's connections and the ops still queued (without callbacks). */
void pool_free(pool_t *p);

/* ---- user.c ---- */

/* A user's timer (arrival, next poll, quitting, waking): the event arg is
 * the user_t. */
void user_timer(evutil_socket_t fd, short what, void *arg);

/* ---- sample.c ---- */

/* EV_PERSIST timers, arg = sim_t: sample the queue's and the shop's stats
 * into the series; print the progress line on stderr. */
void sample_tick(evutil_socket_t fd, short what, void *arg);
void progress_tick(evutil_socket_t fd, short what, void *arg);

/* ---- scenario.c ---- */

/* --profile csv:FILE: arrival offsets in ms (relative to the earliest);
 * *n_out of them, malloc'd. NULL (message printed) on error. */
double *read_csv(const char *path, uint32_t *n_out);
/* The DELETE (--fresh) or GET of the queue answered: PUT it (arg = sim_t). */
void on_delete(op_t *op, int code, json_t *body);
/* Opens every connection, then sets the opening or starts the arrivals. */
void start_warm(sim_t *s);
/* Draws round(frac x users) of the users u (of the first users, not the
 * bypassers) with fit(u), with the run's seed (a partial Fisher-Yates
 * shuffle), and calls take(u, j, want) on the j-th drawn of want (it may
 * draw more numbers). Returns want. */
uint32_t pick_users(sim_t *s, double frac, bool (*fit)(const user_t *u),
                    void (*take)(user_t *u, uint32_t j, uint32_t want));
/* --sleepers: marks round(F x users) ordinary users as sleepers (seeded). */
void pick_sleepers(sim_t *s);
/* The queue is set up (and its codes made, --presale): fetches the push
 * key (--subscribed), then opens the connections (start_warm). */
void setup_next(sim_t *s);

/* ---- presale.c: --presale, the priority group's people and figures ---- */

/* Marks round(F x users) of the ordinary users that do not sleep as
 * presale people (seeded). */
void presale_pick(sim_t *s);
/* POSTs .../codes for the queue's first group (one use per code, in
 * batches) until every presale person has one, then setup_next(); exit 2
 * when the queue has no group or the server makes no codes. */
void presale_make_codes(sim_t *s);
/* A 200 answer of u's join or poll: u->grp from its "group" (kept when
 * the answer names none). */
void presale_answer(user_t *u, const json_t *j);
/* The join's body: {"code":...} for a presale person, else none. */
void presale_join_body(user_t *u, op_t *op);
/* The groups' figures into r (docs/BENCHMARKS.md, "Presale demo"): null
 * without --presale. */
void presale_figures(sim_t *s, json_t *r);

/* ---- sale_report.c: the server's own report of the run ---- */

/* The GET of the queue's report at the end (from the PUT's minute), its
 * answer kept in s->report_final by the callback (counts in final_pending). */
void sale_report_fetch(sim_t *s, op_cb cb);
/* "serverReport" into r: the report's span and totals, and whether they
 * agree with the run's own counts (null when the server gave none). */
void sale_report_figures(sim_t *s, json_t *r);

/* ---- push.c: subscribed sleepers and the stand-in push service ---- */

/* Makes u a subscribed sleeper: a fresh P-256 key pair and auth secret
 * (exits when out of memory or OpenSSL fails). */
void push_pick(user_t *u);
/* Starts the stand-in push service on 127.0.0.1:push_port. false (message
 * printed) when it cannot listen. */
bool push_listen(sim_t *s);
/* GETs the queue's push key, then start_warm(); exit 2 when it fails. */
void push_fetch_key(sim_t *s);
/* After the join: PUTs u's subscription; on 204 u stops polling until its
 * push arrives (a failed PUT: it polls as an ordinary user). */
void push_subscribe(user_t *u);
/* The push figures into r (docs/BENCHMARKS.md), pushes_missed counted
 * here (subscribed people still silent); nothing without --subscribed. */
void push_figures(sim_t *s, json_t *r);
/* Stops the service and frees every push_user_t. */
void push_free(sim_t *s);

/* ---- sim.c ---- */

/* Every user is done or the deadline passed: fetch the final stats, write
 * the results, leave the loop. Idempotent. */
void finish(sim_t *s);

/* ---- results.c, check.c ---- */

/* p50/p95/p99/max of v[0..n) (sorted in place) into obj as
 * <prefix>P50<suffix>, ... (null when n is 0). */
void put_percentiles(json_t *obj, const char *prefix, const char *suffix, double *v, size_t n);
/* The run's figures and series (docs/BENCHMARKS.md); the caller owns it. */
json_t *compute(sim_t *s);
/* --assert: prints each invariant and "N passed, N failed"; 0 when all pass. */
int check(sim_t *s, json_t *r);

#endif
