/*
 * scenario.c - waitroom-sim: setting the scenario up: the queue (PUT, with
 * --fresh deleted first), the warm-up that opens every connection, the sale
 * opening (--opens-in), the arrival schedule by profile (burst, ramp, csv
 * file, --late), and the sleepers (--sleepers, --subscribed).
 */
#include "sim.h"

/* ---------- start: queue setup, warm-up, arrivals ---------- */

double *read_csv(const char *path, uint32_t *n_out)
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
    op_t *op = admin_op(s, EVHTTP_REQ_PATCH, on_opening);
    s->opens_at_ms = now_ms() + 250 + (int64_t)s->opens_in_s * 1000;
    json_t *b = json_pack("{s:I}", "opensAt", (json_int_t)s->opens_at_ms);
    op->body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    if (!op->body)
        die_oom();
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

void start_warm(sim_t *s)
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
        fprintf(stderr, "waitroom-sim: creating queue %s answered %d %s%s\n", s->queue, code,
                d ? d : "",
                field && !strcmp(field, "push")
                    ? " (--subscribed: this waitroomd or its store does not send pushes)"
                    : "");
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
    s->put_ms = now_ms();
    if (s->presale_planned > 0)
        presale_make_codes(s); /* then setup_next */
    else
        setup_next(s);
}

void setup_next(sim_t *s)
{
    if (s->subscribed_frac > 0)
        push_fetch_key(s); /* then start_warm */
    else
        start_warm(s);
}

/* PUT the queue: rate, tick, TTL, no size limit, fail closed; maxActive and
 * sessionSeconds when asked (sessionSeconds left out once the server has
 * refused it); --poll-bands; then --queue-config on top. */
static void put_queue(sim_t *s)
{
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
    if (cfg && s->subscribed_frac > 0)
        json_object_set_new(cfg, "push", json_true());
    if (cfg && s->queue_extra)
        json_object_update(cfg, s->queue_extra);
    op_t *put = admin_op(s, EVHTTP_REQ_PUT, on_put);
    put->body = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
    json_decref(cfg);
    if (!put->body)
        die_oom();
    pool_submit(&s->statp, put);
}

void on_delete(op_t *op, int code, json_t *body)
{
    put_queue(op->arg);
}

uint32_t pick_users(sim_t *s, double frac, bool (*fit)(const user_t *u),
                    void (*take)(user_t *u, uint32_t j, uint32_t want))
{
    uint32_t *pool = malloc((size_t)s->users * sizeof(uint32_t) + 1);
    if (!pool)
        die_oom();
    uint32_t nn = 0;
    for (uint32_t k = 0; k < s->users; k++)
        if (fit(&s->u[k]))
            pool[nn++] = k;
    uint32_t want = (uint32_t)llround(frac * (double)s->users);
    if (want > nn)
        want = nn;
    for (uint32_t j = 0; j < want; j++) { /* a partial Fisher-Yates shuffle */
        uint32_t pick = j + (uint32_t)(rnd(s) * (double)(nn - j));
        if (pick >= nn)
            pick = nn - 1;
        uint32_t tmp = pool[j];
        pool[j] = pool[pick];
        pool[pick] = tmp;
        take(&s->u[pool[j]], j, want);
    }
    free(pool);
    return want;
}

static bool is_normal(const user_t *u)
{
    return u->kind == K_NORMAL;
}

/* The j-th sleeper drawn of want: its sleep (seeded); the first
 * round(G x want) subscribe to Web Push instead (--subscribed G). */
static void take_sleeper(user_t *u, uint32_t j, uint32_t want)
{
    sim_t *s = u->sim;
    u->sleeper = true;
    u->sleep_at = rnd(s);
    u->sleep_ms = (int64_t)s->sleep_min_s * 1000 +
                  (int64_t)(rnd(s) * (double)(s->sleep_max_s - s->sleep_min_s) * 1000.0);
    if (j < (uint32_t)llround(s->subscribed_frac * (double)want)) {
        u->sleeper = false; /* subscribes instead: silent until its push */
        push_pick(u);
    }
}

/* --sleepers F: round(F x users) of the ordinary users (not the replayers,
 * greedy users or quitters), drawn with the run's seed; each sleeps for a
 * seeded time in --sleep-range, from an answer in the first quarter of
 * its expected wait (handle_status). With --subscribed G, round(G x that)
 * of them (the first drawn) subscribe to Web Push instead (push.c). */
void pick_sleepers(sim_t *s)
{
    s->sleepers_planned = pick_users(s, s->sleepers_frac, is_normal, take_sleeper);
}
