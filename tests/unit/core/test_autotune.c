/*
 * test_autotune.c - the autotune control law against a simulated service,
 * and its rules one by one.
 *
 * The simulated service (sim_t): a pool that serves `capacity` users a
 * second, each in service_ms when nobody waits; users beyond what it can
 * serve queue inside it, so its latency is service_ms plus the backlog's
 * wait (backlog / capacity). It reports its latency every 500 ms (store
 * time of the report = the simulated time); the law steps every 100 ms
 * (it takes a step at most once a second itself), the line always has
 * people waiting (saturated). Times are simulated, nothing sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/autotune.h"
#include "unit_main.h"

#define S_US 1000000LL

typedef struct {
    double capacity;   /* users/s the service sustains now */
    double service_ms; /* latency with no backlog */
    double backlog;    /* users queued inside the service */
    wr_autotune_cfg_t cfg;
    wr_autotune_state_t st;
    wr_autotune_report_t rep;
    int64_t now_us;
    double max_rate, min_rate; /* seen over the run */
    double max_down, max_up;   /* the largest change in one step: factor down, +users/s up */
    int changes;
} sim_t;

static void sim_init(sim_t *s, double capacity, double start)
{
    memset(s, 0, sizeof *s);
    s->capacity = capacity;
    s->service_ms = 200;
    s->cfg = (wr_autotune_cfg_t){.min_per_second = 10, .max_per_second = 350, .target_ms = 400};
    s->st.start_rate = start;
    s->st.saturated = true;
    s->now_us = 1000 * S_US;
    s->min_rate = 1e9;
    s->max_down = 1.0;
}

static double sim_latency(const sim_t *s)
{
    return s->service_ms + s->backlog / s->capacity * 1000.0;
}

/* Runs the sim for seconds, reporting when report is true. */
static void sim_run(sim_t *s, double seconds, bool report)
{
    int steps = (int)(seconds * 10);
    for (int i = 0; i < steps; i++) {
        s->now_us += S_US / 10;
        double rate = s->st.rate > 0 ? s->st.rate : s->st.start_rate;
        s->backlog += (rate - s->capacity) * 0.1;
        if (s->backlog < 0)
            s->backlog = 0;
        if (report && i % 5 == 4)
            s->rep = (wr_autotune_report_t){sim_latency(s), 0.0, s->now_us};
        wr_autotune_out_t out;
        wr_autotune_step(&s->cfg, &s->st, &s->rep, 1, s->now_us, &out);
        assert_true(out.rate >= s->cfg.min_per_second && out.rate <= s->cfg.max_per_second);
        if (out.changed) {
            if (s->st.rate > 0 && out.why != WR_AUTOTUNE_BOUNDS) {
                double dt = (double)(s->now_us - s->st.step_us) / 1e6;
                assert_true(dt >= 1.0); /* at most one step a second */
                if (out.rate < s->st.rate && out.rate / s->st.rate < s->max_down)
                    s->max_down = out.rate / s->st.rate;
                if (out.rate - s->st.rate > s->max_up)
                    s->max_up = out.rate - s->st.rate;
            }
            s->st.rate = out.rate;
            s->st.step_us = s->now_us;
            s->changes++;
        }
        s->st.cut_latency_ms = out.cut_latency_ms;
        if (s->st.rate > s->max_rate)
            s->max_rate = s->st.rate;
        if (s->st.rate < s->min_rate)
            s->min_rate = s->st.rate;
    }
}

/* The service's capacity drops from 175/s to a third (58.3/s) while the
 * line runs at 175/s and more (its backlog grows 120 users a second until
 * a report says so): within 3 s the rate is at most 0.9 x the new
 * capacity, it never falls below 0.7 x it (one cut, then it holds while
 * the backlog drains), the latency is back under the target within 25 s
 * (the backlog of the first seconds drains at the margin below capacity),
 * and from then on the rate stays within [0.8, 1.25] x capacity (no
 * hunting beyond the dead band's probe). */
static void t_step_down_converges(void **state)
{
    (void)state;
    sim_t s;
    sim_init(&s, 175, 175);
    sim_run(&s, 10, true);
    assert_true(s.st.rate >= 0.8 * 175 && s.st.rate <= 1.25 * 175); /* healthy near 175 */
    assert_true(sim_latency(&s) < 500);
    s.capacity = 175.0 / 3;
    s.min_rate = 1e9;
    sim_run(&s, 3, true);
    assert_true(s.st.rate <= 0.9 * s.capacity);
    sim_run(&s, 22, true);
    assert_true(sim_latency(&s) <= 400);
    assert_true(s.min_rate >= 0.7 * s.capacity);
    s.min_rate = 1e9;
    s.max_rate = 0;
    sim_run(&s, 60, true);
    assert_true(s.min_rate >= 0.8 * s.capacity);
    assert_true(s.max_rate <= 1.25 * s.capacity);
    assert_true(s.max_down >= 0.5);            /* never faster than halving a second */
    assert_true(s.max_up <= 0.1 * 350 + 1e-9); /* never faster than +10% of max a second */
}

/* Capacity comes back (58 -> 175/s): the rate climbs by 10% a second (at
 * least 7/s, at most 17.5/s a second) and is within 0.8 x capacity within
 * 15 s, then stays within [0.8, 1.25] x capacity. */
static void t_step_up_recovers(void **state)
{
    (void)state;
    sim_t s;
    sim_init(&s, 175.0 / 3, 40);
    sim_run(&s, 30, true);
    s.capacity = 175;
    sim_run(&s, 15, true);
    assert_true(s.st.rate >= 0.8 * 175);
    assert_true(s.max_up <= 0.1 * 350 + 1e-9);
    s.min_rate = 1e9;
    s.max_rate = 0;
    sim_run(&s, 60, true);
    assert_true(s.max_rate <= 1.25 * 175);
    assert_true(s.min_rate >= 0.8 * 175);
}

/* Never past the bounds, whatever the reports say. */
/* A service slow at any rate (its own time, 600 ms, is above the 400 ms
 * target; the demo's 3x slowdown): the rate falls below what it takes,
 * then holds there instead of sinking to min, and the backlog drains. */
static void t_slow_at_any_rate(void **state)
{
    (void)state;
    sim_t s;
    sim_init(&s, 175, 175);
    s.service_ms = 600;
    s.capacity = 175.0 / 3;
    sim_run(&s, 20, true);
    assert_true(s.st.rate <= s.capacity);
    double held = s.st.rate;
    s.min_rate = 1e9;
    sim_run(&s, 40, true);
    assert_true(s.min_rate == held); /* no further cut */
    assert_true(held >= 0.5 * s.capacity && held > s.cfg.min_per_second);
    assert_true(s.backlog == 0);
}

static void t_bounds(void **state)
{
    (void)state;
    sim_t s;
    sim_init(&s, 1e6, 100); /* a service that is never slow */
    sim_run(&s, 60, true);
    assert_true(s.st.rate == 350);
    assert_true(s.max_rate == 350);
    sim_init(&s, 1, 100); /* one that is always slow */
    sim_run(&s, 60, true);
    assert_true(s.st.rate == 10);
    assert_true(s.min_rate >= 10);
    /* the bounds move under the rate: clamped at the next step */
    s.cfg.min_per_second = 20;
    wr_autotune_out_t out;
    wr_autotune_step(&s.cfg, &s.st, NULL, 0, s.now_us, &out);
    assert_true(out.changed);
    assert_int_equal(out.why, WR_AUTOTUNE_BOUNDS);
    assert_true(out.rate == 20);
}

/* No reports: the rate holds, forever; a report older than 10 s is none. */
static void t_holds_without_reports(void **state)
{
    (void)state;
    sim_t s;
    sim_init(&s, 10, 175); /* a slow service that does not report */
    sim_run(&s, 1, false);
    assert_true(s.st.rate == 175); /* start, then hold */
    int changes = s.changes;
    sim_run(&s, 120, false);
    assert_int_equal(s.changes, changes);
    /* one slow report, then silence: it lowers once per fresh report
     * evidence, and holds once the report is 10 s old */
    s.rep = (wr_autotune_report_t){4000, 0, s.now_us};
    s.now_us += S_US;
    wr_autotune_out_t out;
    wr_autotune_step(&s.cfg, &s.st, &s.rep, 1, s.now_us, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_SLOW);
    assert_true(out.rate == 175 * 0.5); /* 0.9 x 400 / 4000 < 0.5: halved, no more */
    s.st.rate = out.rate;
    s.st.step_us = s.now_us;
    s.now_us += 2 * S_US;
    wr_autotune_step(&s.cfg, &s.st, &s.rep, 1, s.now_us, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_WAIT); /* the same report: no second cut */
    assert_false(out.changed);
    s.now_us = s.rep.at_us + WR_AUTOTUNE_REPORT_MAX_AGE_US + 1;
    wr_autotune_step(&s.cfg, &s.st, &s.rep, 1, s.now_us, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_NO_REPORT);
    assert_false(out.changed);
    assert_true(out.latency_ms == -1); /* none fresh: no signal */
    assert_true(out.error_rate == -1);
}

/* The rules one by one, with hand-worked values (min 10, max 350, T 400). */
static void t_rules(void **state)
{
    (void)state;
    wr_autotune_cfg_t cfg = {10, 350, 400};
    wr_autotune_out_t out;
    int64_t now = 100 * S_US;
    wr_autotune_state_t st = {.rate = 0, .step_us = 0, .start_rate = 500, .saturated = true};
    /* start: admitPerSecond clamped; none given: min */
    wr_autotune_step(&cfg, &st, NULL, 0, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_START);
    assert_true(out.rate == 350);
    assert_true(out.latency_ms == -1);
    wr_autotune_report_t first = {250, 0.01, now - S_US};
    wr_autotune_step(&cfg, &st, &first, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_START);
    assert_true(out.latency_ms == 250); /* the start step answers the signal too */
    assert_true(out.error_rate == 0.01);
    assert_true(wr_autotune_start_rate(&cfg, 0) == 10);
    assert_true(wr_autotune_start_rate(&cfg, 5) == 10);
    assert_true(wr_autotune_start_rate(&cfg, 100) == 100);
    st.rate = 100;
    st.step_us = now - 2 * S_US;
    /* slow: 500 ms -> x 0.9 * 400 / 500 = 0.72; the cut remembers 500 */
    wr_autotune_report_t r = {500, 0, now - S_US};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_SLOW);
    assert_true(fabs(out.rate - 72) < 1e-9);
    assert_true(out.cut_latency_ms == 500);
    /* after it, 450 ms (over target, lower than at the cut): draining, hold */
    st.cut_latency_ms = 500;
    r = (wr_autotune_report_t){450, 0, now - S_US};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_DRAINING);
    assert_false(out.changed);
    /* 540 ms: higher, but not 10% higher (flat: a service slow at any
     * rate, or a backlog draining): hold */
    r = (wr_autotune_report_t){540, 0, now - S_US};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_DRAINING);
    /* 600 ms (rising): the cut was not enough, x 0.6 */
    r = (wr_autotune_report_t){600, 0, now - S_US};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_SLOW);
    assert_true(fabs(out.rate - 60) < 1e-9);
    st.cut_latency_ms = 0;
    /* failing: errorRate 0.2 -> x 0.8 */
    r = (wr_autotune_report_t){100, 0.2, now - S_US};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_ERRORS);
    assert_true(fabs(out.rate - 80) < 1e-9);
    assert_true(out.cut_latency_ms == 100);
    /* the same failures after the cut, latency not rising (fast 500s):
     * still failing, so cut again (x 0.8 of the rate in use), down to min;
     * only a cut for latency alone waits for a rising latency */
    st.cut_latency_ms = 100;
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_ERRORS);
    assert_true(out.changed);
    assert_true(fabs(out.rate - 80) < 1e-9);
    st.rate = 11; /* min is 10: never below it */
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_true(fabs(out.rate - 10) < 1e-9);
    st.rate = 100;
    st.cut_latency_ms = 0;
    /* 0.05 itself is not failing: 100 ms is healthy, +10% (10 is within
     * 2%..5% of max: 7..17.5) */
    r = (wr_autotune_report_t){100, 0.05, now - S_US};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_HEALTHY);
    assert_true(fabs(out.rate - 110) < 1e-9);
    st.rate = 20; /* 10% of 20 is 2: at least 2% of max, +7 */
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_true(fabs(out.rate - 27) < 1e-9);
    st.rate = 300; /* 10% of 300 is 30: at most 5% of max, +17.5 */
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_true(fabs(out.rate - 317.5) < 1e-9);
    st.rate = 100;
    /* nobody waiting: a healthy report earns no raise */
    st.saturated = false;
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_STEADY);
    assert_false(out.changed);
    st.saturated = true;
    /* dead band 320..400 ms: hold */
    r = (wr_autotune_report_t){350, 0, now - S_US};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_STEADY);
    assert_false(out.changed);
    /* under a second since the last change: hold */
    st.step_us = now - S_US / 2;
    r = (wr_autotune_report_t){4000, 1, now - S_US / 4};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_TOO_SOON);
    assert_false(out.changed);
    /* the signal is answered on a hold too (the dashboard's history) */
    assert_true(out.latency_ms == 4000);
    assert_true(out.error_rate == 1);
    /* the worst of two reports: the session's 1000 ms beats the shop's 100 */
    st.step_us = now - 2 * S_US;
    wr_autotune_report_t two[2] = {{100, 0, now - S_US}, {1000, 0, now - 2 * S_US}};
    wr_autotune_step(&cfg, &st, two, 2, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_SLOW);
    assert_true(fabs(out.rate - 50) < 1e-9); /* 0.36 -> floor 0.5 */
    assert_true(out.latency_ms == 1000);
    /* a clock that stepped back does not stop the law */
    st.step_us = now + 5 * S_US;
    r = (wr_autotune_report_t){100, 0, now - S_US};
    wr_autotune_step(&cfg, &st, &r, 1, now, &out);
    assert_int_equal(out.why, WR_AUTOTUNE_HEALTHY);
    /* a report storm adds no speed: the step is per second, not per report */
    st.step_us = now - S_US;
    wr_autotune_report_t storm[64];
    for (int i = 0; i < 64; i++)
        storm[i] = (wr_autotune_report_t){100000, 1, now - i * 1000};
    wr_autotune_step(&cfg, &st, storm, 64, now, &out);
    assert_true(out.rate == 50);
    assert_string_equal(wr_autotune_why_name(WR_AUTOTUNE_SLOW), "slow");
    assert_true(wr_autotune_report_valid(0, 0));
    assert_true(wr_autotune_report_valid(250.5, 1));
    assert_false(wr_autotune_report_valid(-1, 0));
    assert_false(wr_autotune_report_valid(1, 1.01));
    assert_false(wr_autotune_report_valid(NAN, 0));
}

static void t_window_p95(void **state)
{
    (void)state;
    wr_autotune_window_t w;
    memset(&w, 0, sizeof w);
    assert_true(wr_autotune_window_p95(&w, S_US) == -1);
    for (int i = 1; i <= 100; i++)
        wr_autotune_window_add(&w, i, 10 * S_US);
    assert_true(wr_autotune_window_p95(&w, 10 * S_US) == 95); /* rank ceil(95) */
    assert_true(wr_autotune_window_p95(&w, 21 * S_US) == -1); /* all older than 10 s */
    /* the ring keeps the last WR_AUTOTUNE_WINDOW_N */
    for (int i = 0; i < WR_AUTOTUNE_WINDOW_N; i++)
        wr_autotune_window_add(&w, 7, 30 * S_US);
    assert_true(wr_autotune_window_p95(&w, 30 * S_US) == 7);
    wr_autotune_window_add(&w, -1, 30 * S_US); /* ignored */
    assert_int_equal(w.count, WR_AUTOTUNE_WINDOW_N);
}

#define TESTS(X)                                                                                   \
    X(t_step_down_converges)                                                                       \
    X(t_step_up_recovers)                                                                          \
    X(t_bounds)                                                                                    \
    X(t_holds_without_reports)                                                                     \
    X(t_rules)                                                                                     \
    X(t_slow_at_any_rate)                                                                          \
    X(t_window_p95)
WR_UNIT_MAIN(NULL, NULL, TESTS)
