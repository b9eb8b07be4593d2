/*
 * check.c - waitroom-sim --assert: the invariants of the short CI scenario
 * (demo_short, demo_sale_end), checked on the figures compute() made.
 */
#include "sim.h"

/* Invariants of the short CI scenario; prints each and "N passed, N failed". */
int check(sim_t *s, json_t *r)
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
    if (s->subscribed_planned > 0) {
        /* subscribed sleepers: one decrypted push each within 1 s of the
         * admission, and back on it, never by hand */
        json_t *p99 = json_object_get(r, "pushLatencyP99Ms");
        CHECK(s->subscribed == s->subscribed_planned && s->subscribed_lost == 0,
              "every subscribed sleeper subscribed and kept its place",
              "subscribed=%u (of %u) subscribeFailed=%u subscribedLost=%u", s->subscribed,
              s->subscribed_planned, s->subscribe_failed, s->subscribed_lost);
        CHECK(s->pushes_delivered == s->subscribed && s->pushes_rejected == 0 &&
                  s->pushes_duplicate == 0 && s->pushes_missed == 0,
              "one valid push per subscribed sleeper",
              "delivered=%u rejected=%u duplicate=%u missed=%u subscribed=%u", s->pushes_delivered,
              s->pushes_rejected, s->pushes_duplicate, s->pushes_missed, s->subscribed);
        CHECK(json_is_integer(p99) && json_integer_value(p99) <= 1000,
              "push p99 within 1 s of admission", "pushLatencyP99Ms=%lld",
              (long long)json_integer_value(p99));
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
    if (s->presale_planned > 0) {
        /* the priority group (presale.c): everyone with a code in it, the
         * standard line's floor of floor(standardShare x T) in every second
         * of T admissions it had someone to admit all through, FIFO within
         * each line, and the presale people ahead at the median */
        const char *g = json_string_value(json_object_get(r, "presaleGroup"));
        json_t *w = json_object_get(r, "waitP50MsByGroup");
        json_t *wg = json_object_get(w, g ? g : ""), *ws = json_object_get(w, "standard");
        json_t *tg = json_object_get(json_object_get(r, "kendallTauByGroup"), g ? g : "");
        json_int_t secs = json_integer_value(json_object_get(r, "standardShareSeconds"));
        CHECK(json_integer_value(json_object_get(r, "presaleJoinedInGroup")) == s->presale_planned,
              "every presale person joined its group", "in group %s: %lld of %u", g ? g : "?",
              (long long)json_integer_value(json_object_get(r, "presaleJoinedInGroup")),
              s->presale_planned);
        CHECK(secs > 0 && json_integer_value(json_object_get(r, "standardShareFloorMisses")) == 0,
              "the standard line kept its share every second",
              "standardShareMinObserved=%.4f standardShare=%g; seconds below floor(share x "
              "admissions): %lld of %lld",
              json_number_value(json_object_get(r, "standardShareMinObserved")),
              json_number_value(json_object_get(r, "standardShare")),
              (long long)json_integer_value(json_object_get(r, "standardShareFloorMisses")),
              (long long)secs);
        CHECK(json_is_number(wg) && json_is_number(ws) &&
                  json_number_value(wg) < json_number_value(ws),
              "presale people waited less at p50", "waitP50Ms %s %.0f, standard %.0f", g ? g : "?",
              json_number_value(wg), json_number_value(ws));
        CHECK(json_is_number(tg) && json_number_value(tg) >= 1.0 - 1e-12,
              "the presale group FIFO (tau = 1.0)", "kendallTauByGroup.%s=%.9f", g ? g : "?",
              json_number_value(tg));
    }
    /* the server's own report of the run (sale_report.c) */
    char line[600];
    wr_report_describe_server_report(line, sizeof(line), r);
    CHECK(json_is_true(json_object_get(json_object_get(r, "serverReport"), "agrees")),
          "the server's report agrees with the run", "%s", line);
    CHECK(json_is_integer(jsrv) && json_integer_value(jsrv) == (json_int_t)s->admitted,
          "every admission reached its user", "server admittedTotal=%lld, users admitted=%u",
          (long long)json_integer_value(jsrv), s->admitted);
#undef CHECK
    printf("%d passed, %d failed\n", pass, fail);
    return fail == 0 ? 0 : 1;
}
