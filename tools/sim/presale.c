/*
 * presale.c - waitroom-sim --presale F (issue 41): a fraction F of the
 * crowd joins with presale codes into the queue's first priority group
 * (docs/API.md 1.3, "Priority groups and presale codes"), and the figures
 * that show the standard line kept its share and both groups' waits.
 *
 * The people: round(F x users) of the ordinary users (not replayers,
 * greedy users or quitters, not sleepers), drawn with the run's seed. Once
 * the queue is created (its config must have groups: demo.sh --presale
 * puts {"name":"presale"} and standardShare there), the simulator makes
 * one single-use code per presale person (POST .../codes, at most
 * CODES_BATCH a request: an answer must fit the pool's 64 KiB), and each
 * joins with body {"code":...}. Each answer's "group" names the person's
 * line (absent: the standard line), kept in user_t.grp.
 *
 * The share. Each admitted person's admission tick (expiresAt - TTL: the
 * same for everyone a tick admits) and line are known. A "second" is any
 * [tick, tick + 1 s) that starts at an admitting tick (so it holds whole
 * ticks, and the seconds overlap: every run of ticks one second long is
 * looked at, not only those aligned on the start). It counts when the
 * standard line had someone to admit all through it - a standard-line
 * person (not a sleeper, never held) whose join was answered by the
 * second's start and whose admission tick is at or after its end, so every
 * tick in it found them in line and admissible - and when it admitted
 * anybody. The server keeps the share per tick with a carried fraction
 * below one person (core/groups.h, wr_groups_split), so over the ticks of
 * such a second, T admissions in all, the standard line gets at least
 * floor(standardShare x T): standardShareFloorMisses counts the seconds
 * below that (--assert: 0), standardShareMinObserved is the lowest
 * standard / T of them (so at least standardShare - 1/T), and
 * standardShareSeconds how many were looked at. admittedPerSecondByGroup
 * (for the chart) counts whole seconds from the start of arrivals.
 */
#include "sim.h"

#include "core/groups.h"

#define CODES_BATCH 2000 /* codes per POST: 2,000 x 26 bytes fits the 64 KiB answer */

static const char *first_group(const sim_t *s)
{
    json_t *g = json_array_get(json_object_get(s->queue_config, "groups"), 0);
    return json_string_value(json_object_get(g, "name"));
}

/* An ordinary user that does not sleep. */
static bool can_presale(const user_t *u)
{
    return u->kind == K_NORMAL && !u->sleeper && !u->push;
}

static void take_presale(user_t *u, uint32_t j, uint32_t want)
{
    (void)j;
    (void)want;
    u->presale = true;
}

void presale_pick(sim_t *s)
{
    s->presale_planned = pick_users(s, s->presale_frac, can_presale, take_presale);
}

/* ---------- the codes ---------- */

static void stop_setup(sim_t *s)
{
    s->exit_code = 2;
    event_base_loopexit(s->base, NULL);
}

static void post_codes(sim_t *s);

static void on_codes(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    json_t *codes = json_object_get(body, "codes");
    if (code != 201 || !json_is_array(codes) || json_array_size(codes) == 0) {
        char *d = body ? json_dumps(body, JSON_COMPACT) : NULL;
        fprintf(stderr,
                "waitroom-sim: POST /v1/admin/queues/%s/codes answered %d %s (does this "
                "waitroomd make presale codes?)\n",
                s->queue, code, d ? d : "");
        free(d);
        stop_setup(s);
        return;
    }
    json_array_extend(s->presale_codes, codes);
    post_codes(s);
}

/* The next batch of codes, or, with one per presale person, hands them
 * out in user order and goes on with the set-up. */
static void post_codes(sim_t *s)
{
    size_t have = json_array_size(s->presale_codes);
    if (have >= s->presale_planned) {
        size_t k = 0;
        for (uint32_t i = 0; i < s->users && k < s->presale_planned; i++)
            if (s->u[i].presale)
                s->u[i].code = json_string_value(json_array_get(s->presale_codes, k++));
        fprintf(stderr, "waitroom-sim: %u presale codes for group %s\n", s->presale_planned,
                first_group(s));
        setup_next(s);
        return;
    }
    size_t n = s->presale_planned - have;
    json_t *b = json_pack("{s:s,s:I,s:i}", "group", first_group(s), "count",
                          (json_int_t)(n < CODES_BATCH ? n : CODES_BATCH), "uses", 1);
    op_t *op = admin_op_at(s, EVHTTP_REQ_POST, "/codes", on_codes);
    op->body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    if (!op->body)
        die_oom();
    pool_submit(&s->statp, op);
}

void presale_make_codes(sim_t *s)
{
    if (!first_group(s)) {
        fprintf(stderr, "waitroom-sim: --presale needs a queue with groups (--queue-config "
                        "'{\"groups\":[{\"name\":\"presale\"}]}'); the server's config has none\n");
        stop_setup(s);
        return;
    }
    json_decref(s->presale_codes);
    s->presale_codes = json_array();
    if (!s->presale_codes)
        die_oom();
    post_codes(s);
}

/* ---------- joins and answers ---------- */

void presale_join_body(user_t *u, op_t *op)
{
    if (!u->code)
        return;
    json_t *b = json_pack("{s:s}", "code", u->code);
    op->body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    if (!op->body)
        die_oom();
}

void presale_answer(user_t *u, const json_t *j)
{
    const char *g = json_string_value(json_object_get(j, "group"));
    json_t *groups = json_object_get(u->sim->queue_config, "groups");
    for (size_t i = 0; g && i < json_array_size(groups) && i < UINT8_MAX; i++) {
        const char *name = json_string_value(json_object_get(json_array_get(groups, i), "name"));
        if (name && !strcmp(g, name))
            u->grp = (uint8_t)(i + 1);
    }
}

/* ---------- figures ---------- */

/* The user counts in the per-line figures: admitted by the line, not a
 * sleeper (their wait is their sleep), never held, not a bypasser. */
static bool line_user(const user_t *u)
{
    return u->kind != K_BYPASS && u->admit_tick_ms > 0 && u->join_ms > 0 && !u->slept && !u->held &&
           !u->push;
}

/* {"<group>":p50 of line 1, "standard":p50 of line 0} of a[] by line:
 * waits (join answered -> admission seen) or, with tau, Kendall's tau
 * between join order and admission (tick, join order) within the line. */
static json_t *by_line(sim_t *s, const char *group, double *a, double *b, bool tau)
{
    json_t *o = json_object();
    for (uint8_t line = 0; line < 2; line++) {
        size_t n = 0;
        for (uint32_t i = 0; i < s->n_users; i++) {
            const user_t *u = &s->u[i];
            if (!line_user(u) || u->grp != line || u->admit_seen_ms <= 0)
                continue;
            a[n] = tau ? (double)u->join_seq : (double)(u->admit_seen_ms - u->join_ms);
            b[n] = (double)(u->admit_tick_ms - s->t0_ms) * (double)(s->join_seq + 1) +
                   (double)u->join_seq;
            n++;
        }
        double x = 0;
        bool ok;
        if (tau) {
            ok = wr_stats_kendall_tau(a, b, n, &x) == WR_OK;
        } else {
            wr_stats_sort(a, n);
            ok = wr_stats_percentile(a, n, 50, &x) == WR_OK;
            x = round(x);
        }
        json_object_set_new(o, line ? group : WR_GROUP_STANDARD, ok ? json_real(x) : json_null());
    }
    return o;
}

typedef struct {
    int64_t a, b;
} pair_t;

static int cmp_pair(const void *x, const void *y)
{
    const pair_t *p = x, *q = y;
    return p->a != q->a ? (p->a > q->a) - (p->a < q->a) : (p->b > q->b) - (p->b < q->b);
}

typedef struct {
    size_t windows, misses; /* the seconds counted; those below the floor */
    double min_share;       /* the lowest standard / all of them (2: none) */
} share_t;

/*
 * The standard line's share over every second that starts at an admitting
 * tick, [tick, tick + 1 s), in which it had someone to admit all through:
 * a standard-line person (line_user) whose join was answered by the tick's
 * time and whose admission tick is at or after the second's end. Those
 * people, sorted by join, give for each start the latest admission of
 * anyone joined by then: the second counts when it is at or after its end
 * (and the second admitted anybody).
 */
static share_t share_windows(sim_t *s, uint64_t share_micro)
{
    share_t out = {0, 0, 2};
    pair_t *tk = calloc(s->n_users + 1, sizeof(pair_t)),
           *wt = calloc(s->n_users + 1, sizeof(pair_t));
    if (!tk || !wt)
        die_oom();
    size_t nt = 0, nw = 0;
    for (uint32_t i = 0; i < s->n_users; i++) {
        const user_t *u = &s->u[i];
        if (u->kind == K_BYPASS || u->admit_tick_ms <= 0)
            continue;
        tk[nt++] = (pair_t){u->admit_tick_ms, u->grp != 0};
        if (line_user(u) && u->grp == 0)
            wt[nw++] = (pair_t){u->join_ms, u->admit_tick_ms};
    }
    qsort(tk, nt, sizeof(pair_t), cmp_pair);
    qsort(wt, nw, sizeof(pair_t), cmp_pair);
    /* the admissions in tk[i..j) of the second from tk[i].a: b = 0 standard */
    size_t j = 0, w = 0;
    uint64_t std = 0, tot = 0;
    int64_t latest = 0;
    for (size_t i = 0; i < nt;) {
        int64_t t = tk[i].a, end = t + 1000;
        for (; j < nt && tk[j].a < end; j++) {
            std += tk[j].b == 0;
            tot++;
        }
        for (; w < nw && wt[w].a <= t; w++)
            if (wt[w].b > latest)
                latest = wt[w].b;
        if (latest >= end && tot > 0) {
            out.windows++;
            if (std < share_micro * tot / 1000000)
                out.misses++;
            if ((double)std / (double)tot < out.min_share)
                out.min_share = (double)std / (double)tot;
        }
        for (; i < nt && tk[i].a == t; i++) { /* this tick leaves the next second */
            std -= tk[i].b == 0;
            tot--;
        }
    }
    free(tk);
    free(wt);
    return out;
}

void presale_figures(sim_t *s, json_t *r)
{
    static const char *const keys[] = {"presaleGroup",
                                       "presaleUsers",
                                       "presaleJoinedInGroup",
                                       "standardShare",
                                       "standardShareSeconds",
                                       "standardShareMinObserved",
                                       "standardShareFloorMisses",
                                       "waitP50MsByGroup",
                                       "kendallTauByGroup",
                                       "admittedPerSecondByGroup"};
    const char *group = first_group(s);
    if (s->presale_planned == 0 || !group || s->no_queue) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            json_object_set_new(r, keys[i], json_null());
        return;
    }
    uint32_t in_group = 0;
    for (uint32_t i = 0; i < s->n_users; i++)
        if (s->u[i].presale && s->u[i].placed && s->u[i].grp == 1)
            in_group++;
    json_t *sh = json_object_get(s->queue_config, "standardShare");
    double share = json_is_number(sh) ? json_number_value(sh) : 0.2;
    uint64_t share_micro = (uint64_t)llround(share * 1e6);

    share_t sw = share_windows(s, share_micro);
    /* admissions per second by line (seconds from the start of arrivals) */
    size_t nsec = (size_t)((s->end_ms - s->t0_ms) / 1000 + 1);
    uint32_t *adm[2] = {calloc(nsec, sizeof(uint32_t)), calloc(nsec, sizeof(uint32_t))};
    double *a = calloc(s->n_users + 1, sizeof(double)), *b = calloc(s->n_users + 1, sizeof(double));
    if (!adm[0] || !adm[1] || !a || !b)
        die_oom();
    for (uint32_t i = 0; i < s->n_users; i++) {
        const user_t *u = &s->u[i];
        int64_t k = (u->admit_tick_ms - s->t0_ms) / 1000;
        if (u->kind != K_BYPASS && u->admit_tick_ms >= s->t0_ms && k < (int64_t)nsec && u->grp < 2)
            adm[u->grp][k]++;
    }
    json_object_set_new(r, "presaleGroup", json_string(group));
    json_object_set_new(r, "presaleUsers", json_integer(s->presale_planned));
    json_object_set_new(r, "presaleJoinedInGroup", json_integer(in_group));
    json_object_set_new(r, "standardShare", json_real(share));
    json_object_set_new(r, "standardShareSeconds", json_integer((json_int_t)sw.windows));
    json_object_set_new(r, "standardShareMinObserved",
                        sw.windows ? json_real(sw.min_share) : json_null());
    json_object_set_new(r, "standardShareFloorMisses", json_integer((json_int_t)sw.misses));
    json_object_set_new(r, "waitP50MsByGroup", by_line(s, group, a, b, false));
    json_object_set_new(r, "kendallTauByGroup", by_line(s, group, a, b, true));
    json_t *per_s = json_object();
    for (uint8_t line = 0; line < 2; line++) {
        json_t *arr = json_array();
        for (size_t k = 0; k < nsec; k++)
            json_array_append_new(arr, json_integer(adm[line][k]));
        json_object_set_new(per_s, line ? group : WR_GROUP_STANDARD, arr);
    }
    json_object_set_new(r, "admittedPerSecondByGroup", per_s);
    free(adm[0]);
    free(adm[1]);
    free(a);
    free(b);
}
