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
#include <stddef.h>

#include "sim.h"

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

static void on_final(op_t *op, int code, json_t *body);

static void report_again(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    sale_report_fetch(arg, on_final);
}

/* The report's totals for what the simulator counted itself (joined,
 * admitted, left) are behind its counts: a count the server sent after the
 * read (its counts are batched, FLUSH_MS). */
static bool report_behind(const sim_t *s, json_t *body)
{
    json_t *t = json_object_get(body, "totals");
    return json_integer_value(json_object_get(t, "joined")) < s->placed ||
           json_integer_value(json_object_get(t, "admitted")) < s->admitted ||
           json_integer_value(json_object_get(t, "left")) < s->left;
}

static void on_final(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    if (code == 200 && body) {
        if (json_object_get(body, "pool")) {
            s->shop_final = json_incref(body);
        } else if (json_object_get(body, "minutes")) {
            /* read again (up to 10 times, 300 ms apart) while it is behind:
             * the report is eventually the run's, and a late count is not a
             * disagreement */
            if (report_behind(s, body) && s->report_reads < 10) {
                s->report_reads++;
                struct timeval tv = {0, 300000};
                event_base_once(s->base, -1, EV_TIMEOUT, report_again, s, &tv);
                return;
            }
            s->report_final = json_incref(body);
        } else {
            s->queue_final = json_incref(body);
        }
    }
    if (--s->final_pending == 0) {
        write_results(s);
        s->finished = true;
        event_base_loopexit(s->base, NULL);
    }
}

void finish(sim_t *s)
{
    if (s->finishing)
        return;
    s->finishing = true;
    s->end_ms = now_ms();
    s->final_pending = 1;
    pool_submit(&s->shopstat, op_new(EVHTTP_REQ_GET, "/stats", NULL, on_final, s));
    if (!s->no_queue) {
        op_t *op = admin_op(s, EVHTTP_REQ_GET, on_final);
        s->final_pending += 2;
        pool_submit(&s->statp, op);
        sale_report_fetch(s, on_final); /* after the stats, on the same connection */
    }
}

static void deadline(evutil_socket_t fd, short what, void *arg)
{
    sim_t *s = arg;
    fprintf(stderr, "\nwaitroom-sim: deadline of %u s reached; %u users not done\n", s->max_seconds,
            s->n_users - s->done);
    finish(s);
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
            "         [--verify V.json]  (waitroom-verify --json on the run's log)\n"
            "         [--server-report R.json]  (the server's report of the run, linked)\n"
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
            "  --subscribed F  that fraction of the sleepers subscribes to Web Push right\n"
            "    after joining (the queue gets push: true) and polls no more until its push\n"
            "    comes to the stand-in push service on 127.0.0.1:--push-port P (waitroomd\n"
            "    --push-allow-host 127.0.0.1:P), which checks VAPID and decrypts each one\n"
            "  --idle-timeout S   the queue's idleTimeoutSeconds (away after S s of silence)\n"
            "  --stock N   the queue's stock: N passes, then sold out\n"
            "  --presale F  that fraction of the ordinary users joins with a presale code\n"
            "    (one use each, made with POST .../codes) into the queue's first group\n"
            "    (--queue-config '{\"groups\":[{\"name\":\"presale\"}]}'); the results add\n"
            "    the standard line's lowest share of a second and each line's p50 wait\n"
            "  --rate-tolerance PCT   --assert's bound on the admission rate's error (2)\n"
            "  --users-csv FILE (one row per user)\n"
            "  --out FILE.json  --assert (check the CI invariants, exit 1 if one fails)\n");
}

/* A decimal number, the whole of v (strtod: "" reads as 0). */
static bool parse_double(const char *v, double *out)
{
    char *end;
    *out = strtod(v, &end);
    return !*end;
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

/* The arrays of series_t, each of ser.cap samples. */
#define SERIES_ARRAYS(X)                                                                           \
    X(waiting);                                                                                    \
    X(admitted_total);                                                                             \
    X(shop_in_flight);                                                                             \
    X(shop_in_flight_peak);                                                                        \
    X(shop_busy);                                                                                  \
    X(shop_waiting);                                                                               \
    X(wr_requests);                                                                                \
    X(asleep);                                                                                     \
    X(held);                                                                                       \
    X(returned);                                                                                   \
    X(stock_left);                                                                                 \
    X(rate_target)

/* Allocates every array of ser, cap zeroed samples each; false when out
 * of memory (series_free() frees what was allocated). */
static bool series_alloc(series_t *ser, size_t cap)
{
    bool ok = true;
    ser->cap = cap;
#define ALLOC(f) ok = (ser->f = calloc(cap, sizeof *ser->f)) != NULL && ok
    SERIES_ARRAYS(ALLOC);
#undef ALLOC
    return ok;
}

static void series_free(series_t *ser)
{
#define FREE(f) free(ser->f)
    SERIES_ARRAYS(FREE);
#undef FREE
}

/* The options that set one field of sim_t: a text (kept as given) or a
 * whole number in [min, max]. */
typedef struct {
    const char *name;
    size_t off; /* offsetof(sim_t, the field) */
    bool text;  /* a const char * field; else a uint32_t one */
    uint32_t min, max;
} field_opt_t;

#define TEXT_OPT(NAME, FIELD)                                                                      \
    {                                                                                              \
        NAME, offsetof(sim_t, FIELD), true, 0, 0                                                   \
    }
#define U32_OPT(NAME, FIELD, MIN, MAX)                                                             \
    {                                                                                              \
        NAME, offsetof(sim_t, FIELD), false, MIN, MAX                                              \
    }
static const field_opt_t FIELD_OPTS[] = {
    TEXT_OPT("--server", server),
    TEXT_OPT("--shop", shop),
    TEXT_OPT("--admin-key", admin_key),
    TEXT_OPT("--queue", queue),
    TEXT_OPT("--out", out_path),
    TEXT_OPT("--label", label),
    TEXT_OPT("--users-csv", users_csv),
    U32_OPT("--users", users, 1, MAX_USERS),
    U32_OPT("--bypass", bypass, 0, MAX_USERS),
    U32_OPT("--replay", replay, 0, MAX_USERS),
    U32_OPT("--greedy", greedy, 0, MAX_USERS),
    U32_OPT("--quitters", quitters, 0, MAX_USERS),
    U32_OPT("--conns", conns, 1, MAX_CONNS),
    U32_OPT("--join-conns", join_conns, 1, 64),
    U32_OPT("--tick-ms", tick_ms, 1, 60000),
    U32_OPT("--ttl", ttl_s, 1, 86400),
    U32_OPT("--max-active", max_active, 0, UINT32_MAX),
    U32_OPT("--session-seconds", session_s, 0, 86400),
    U32_OPT("--opens-in", opens_in_s, 1, MAX_SECONDS),
    U32_OPT("--late", late, 0, MAX_USERS),
    U32_OPT("--greedy-poll-ms", greedy_poll_ms, 1, 60000),
    U32_OPT("--max-seconds", max_seconds, 1, MAX_SECONDS),
    U32_OPT("--sample-ms", sample_ms, 10, 10000),
    U32_OPT("--push-port", push_port, 1, 65535),
};

#undef TEXT_OPT
#undef U32_OPT

/* Sets the field of option a to its value v: 1 set, 0 a bad value, -1 not
 * an option of FIELD_OPTS. */
static int set_field_opt(sim_t *s, const char *a, const char *v)
{
    for (size_t k = 0; k < sizeof FIELD_OPTS / sizeof FIELD_OPTS[0]; k++) {
        const field_opt_t *o = &FIELD_OPTS[k];
        if (strcmp(a, o->name) != 0)
            continue;
        void *field = (char *)s + o->off;
        if (!o->text)
            return parse_u32(v, field, o->min, o->max);
        *(const char **)field = v;
        return 1;
    }
    return -1;
}

static int cmd_report(int argc, char **argv)
{
    const char *with = NULL, *without = NULL, *jout = NULL, *svg = NULL, *verify = NULL,
               *srep = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--with"))
            with = argv[i + 1];
        else if (!strcmp(argv[i], "--without"))
            without = argv[i + 1];
        else if (!strcmp(argv[i], "--json"))
            jout = argv[i + 1];
        else if (!strcmp(argv[i], "--svg"))
            svg = argv[i + 1];
        else if (!strcmp(argv[i], "--verify"))
            verify = argv[i + 1];
        else if (!strcmp(argv[i], "--server-report"))
            srep = argv[i + 1];
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
    json_t *v = verify ? json_load_file(verify, 0, &e) : NULL;
    if (verify && !json_is_object(v)) { /* the verifier printed no statement */
        fprintf(stderr, "waitroom-sim: --verify %s: %s\n", verify, v ? "not an object" : e.text);
        rc = 1;
    } else if (v)
        wr_report_add_log(w, v);
    json_decref(v);
    if (srep && wr_report_link_server_report(w, srep) != 0)
        rc = 1;
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
        int set = set_field_opt(s, a, v);
        bool ok = set != 0;
        uint32_t x = 0;
        if (set >= 0) {
            /* done: one of FIELD_OPTS */
        } else if (!strcmp(a, "--slowdown-at"))
            ok = parse_double(v, &s->slowdown_at_s) && s->slowdown_at_s >= 0;
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
        } else if (!strcmp(a, "--shop-conns"))
            ok = parse_u32(v, &shop_conns_set, 1, MAX_CONNS);
        else if (!strcmp(a, "--seed")) {
            ok = parse_u32(v, &x, 0, UINT32_MAX);
            s->seed = x;
        } else if (!strcmp(a, "--rate"))
            ok = parse_double(v, &s->rate) && s->rate > 0 && s->rate <= 1e6;
        else if (!strcmp(a, "--sleepers"))
            ok = parse_double(v, &s->sleepers_frac) && s->sleepers_frac >= 0 &&
                 s->sleepers_frac <= 1;
        else if (!strcmp(a, "--presale"))
            ok = parse_double(v, &s->presale_frac) && s->presale_frac >= 0 && s->presale_frac <= 1;
        else if (!strcmp(a, "--subscribed"))
            ok = parse_double(v, &s->subscribed_frac) && s->subscribed_frac >= 0 &&
                 s->subscribed_frac <= 1;
        else if (!strcmp(a, "--sleep-range")) {
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
        } else if (!strcmp(a, "--rate-tolerance"))
            ok = parse_double(v, &s->rate_tol_pct) && s->rate_tol_pct > 0 && s->rate_tol_pct <= 100;
        else if (!strcmp(a, "--ramp-seconds"))
            ok = parse_double(v, &s->ramp_seconds) && s->ramp_seconds > 0 &&
                 s->ramp_seconds <= MAX_SECONDS;
        else {
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
    if (s->subscribed_frac > 0 && (s->sleepers_frac <= 0 || !s->push_port || s->no_queue)) {
        fprintf(stderr, "waitroom-sim: --subscribed needs --sleepers and --push-port, and the "
                        "line\n");
        return 2;
    }
    if (s->presale_frac > 0 && (s->no_queue || s->opens_in_s > 0)) {
        fprintf(stderr, "waitroom-sim: --presale needs the line, and no --opens-in\n");
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
    if (!s->u || !series_alloc(&s->ser, (size_t)s->max_seconds * 1000 / BUCKET_MS + 600)) {
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
    if (s->presale_frac > 0)
        presale_pick(s); /* after the sleepers: none of them */
    if (s->subscribed_frac > 0 && !push_listen(s))
        return 2;

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
        op_t *op = admin_op(s, s->fresh ? EVHTTP_REQ_DELETE : EVHTTP_REQ_GET, on_delete);
        pool_submit(&s->statp, op);
    }
    event_base_dispatch(s->base);
    if (!s->finished && s->exit_code == 0)
        s->exit_code = 1;

    push_free(s);
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
    json_decref(s->report_final);
    json_decref(s->presale_codes);
    series_free(&s->ser);
    event_base_free(s->base);
    return s->exit_code;
}
