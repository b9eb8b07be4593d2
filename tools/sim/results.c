/*
 * results.c - waitroom-sim: the run's figures (compute): counts, the
 * admission rate over the steady middle, fairness (Kendall's tau), waits,
 * ETA accuracy, poll load, the sale opening and end, autotune settling, and
 * the series the report draws. docs/BENCHMARKS.md names every figure.
 */
#include "sim.h"

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

void put_percentiles(json_t *obj, const char *prefix, const char *suffix, double *v, size_t n)
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

json_t *compute(sim_t *s)
{
    json_t *r = json_object();
    size_t n = s->n_users;
    double *a = calloc(n + 1, sizeof(double)), *b = calloc(n + 1, sizeof(double));
    double *t = calloc(n + 1, sizeof(double));
    if (!a || !b || !t)
        die_oom();
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
    /* the shop's final /stats, as integers: {its name, the figure's} */
    static const char *const shop_keys[][2] = {{"pool", "shopPool"},
                                               {"serviceMs", "shopServiceMs"},
                                               {"maxInFlight", "shopMaxInFlight"},
                                               {"maxBusy", "shopMaxBusy"},
                                               {"poolWaits", "shopPoolWaits"},
                                               {"poolTimeouts", "shopPoolTimeouts"},
                                               {"consumeMsMax", "shopTokenCheckMsMax"},
                                               {"poolWaitMsMax", "shopPoolWaitMsMax"}};
    for (size_t i = 0; i < sizeof(shop_keys) / sizeof(shop_keys[0]); i++)
        json_object_set_new(r, shop_keys[i][1],
                            json_integer(json_integer_value(json_object_get(sh, shop_keys[i][0]))));
    json_object_set_new(r, "shopTokenCheckMsMean",
                        json_real(json_number_value(json_object_get(sh, "consumeMsMean"))));
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
     * person is admitted on return): FIFO is measured over everybody else;
     * with --presale over the standard line (FIFO holds within each line:
     * kendallTauByGroup, presale.c) */
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        user_t *u = &s->u[i];
        if (u->kind == K_BYPASS || u->admit_tick_ms <= 0 || u->join_ms <= 0 || u->slept ||
            u->held || u->grp != 0)
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
    push_figures(s, r);
    presale_figures(s, r);
    sale_report_figures(s, r);

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
