/*
 * report.c - terminal summaries and the SVG chart of the sale-day scenario.
 *
 * The SVG is written by hand (no library): a 2 x 3 grid of small charts,
 * the run without the line in the left column and with it in the right,
 * rows: people in line, let through per second (admissions with the line,
 * arrivals at the shop without), orders in flight at the shop (the peak of
 * each 100 ms, from the shop's inFlightPeak) with the pool size as a dashed
 * line. A run with sleepers or a stock adds a fourth row, the line's only:
 * phones asleep, held and returned over time (left), stock left with the
 * sold-out moment (right). A subtitle says which admission mode and poll
 * timing ran. Both columns share the time axis
 * so the two runs compare at a glance; each panel has its own y axis, labelled.
 *
 * Numbers come from the run objects (borrowed); missing fields read as 0
 * or "n/a". Nothing here allocates beyond jansson lookups.
 */
#include "report.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static bool has_num(const json_t *o, const char *k)
{
    return json_is_number(json_object_get(o, k));
}

static void fmt(char *buf, size_t cap, const json_t *o, const char *k, int decimals)
{
    if (has_num(o, k))
        snprintf(buf, cap, "%.*f", decimals, num(o, k));
    else
        snprintf(buf, cap, "n/a");
}

typedef struct {
    const char *label, *key;
    int decimals;
} row_t;

static const row_t ROWS[] = {
    {"users", "users", 0},
    {"users lost", "usersLost", 0},
    {"users left (quitters)", "usersLeft", 0},
    {"orders ok", "ordersOk", 0},
    {"orders failed (503)", "ordersFailed", 0},
    {"orders refused (403)", "ordersRefused", 0},
    {"shop pool", "shopPool", 0},
    {"shop max in flight", "shopMaxInFlight", 0},
    {"shop pool waits", "shopPoolWaits", 0},
    {"shop pool timeouts", "shopPoolTimeouts", 0},
    {"sessions released (204)", "shopReleasesOk", 0},
    {"releases, no session (403)", "shopReleasesRefused", 0},
    {"releases, no route (404)", "shopReleasesUnsupported", 0},
    {"let through /s (steady)", "admitRatePerSecond", 2},
    {"configured rate /s", "admitRateConfigured", 2},
    {"ticks that admitted nobody", "admitTicksEmpty", 0},
    {"Kendall tau (FIFO = 1)", "kendallTau", 6},
    {"admitted ahead of earlier", "usersAdmittedAheadOfEarlierJoiner", 0},
    {"wait in line p50 ms", "waitP50Ms", 0},
    {"wait in line p95 ms", "waitP95Ms", 0},
    {"wait in line p99 ms", "waitP99Ms", 0},
    {"wait in line max ms", "waitMaxMs", 0},
    {"order latency p50 ms", "orderLatencyP50Ms", 0},
    {"order latency p99 ms", "orderLatencyP99Ms", 0},
    {"ETA |error| p50 s", "etaAbsErrorP50Seconds", 1},
    {"ETA |error| p95 s", "etaAbsErrorP95Seconds", 1},
    {"ETA mean error s (+ optimistic)", "etaMeanErrorSeconds", 1},
    {"ETA null at join (users)", "etaNullAtJoin", 0},
    {"ETA 1st poll |error| p50 s", "etaFirstPollAbsErrorP50Seconds", 1},
    {"ETA 1st poll |error| p95 s", "etaFirstPollAbsErrorP95Seconds", 1},
    {"ETA 1st poll mean err s (+ opt.)", "etaFirstPollMeanErrorSeconds", 1},
    {"waitroomd req/s mean", "waitroomRequestsPerSecondMean", 0},
    {"waitroomd req/s peak", "waitroomRequestsPerSecondPeak", 0},
    {"bypass attempts", "bypassAttempts", 0},
    {"bypass accepted", "bypassAccepted", 0},
    {"token replays", "replayAttempts", 0},
    {"token replays accepted", "replayAccepted", 0},
    {"duration ms", "durationMs", 0},
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))

/* A run with a sale opening (--opens-in) adds these. */
static const row_t OPENING_ROWS[] = {
    {"pre-queue (joined before)", "prequeueUsers", 0},
    {"pre-queue, server's peak", "prequeuePeakServer", 0},
    {"opening, ms after start", "opensAtMs", 0},
    {"1st admission after it ms", "firstAdmissionAfterOpeningMs", 0},
    {"Kendall tau pre-queue (~0)", "kendallTauPrequeue", 6},
    {"later arrivals", "laterArrivals", 0},
    {"Kendall tau later (FIFO=1)", "kendallTauAfterOpening", 6},
    {"later admitted before pre-q", "laterAdmittedBeforePrequeue", 0},
};
#define NOPENING (sizeof(OPENING_ROWS) / sizeof(OPENING_ROWS[0]))

/* A run with sleepers (--sleepers) adds these. */
static const row_t SLEEPER_ROWS[] = {
    {"sleepers (phones that slept)", "sleepers", 0},
    {"sleepers lost their place", "sleepersLost", 0},
    {"sleepers held (turn came)", "sleepersHeld", 0},
    {"held, admitted on return", "sleepersReturned", 0},
    {"back before their turn", "sleepersBackInLine", 0},
    {"pass waited for them", "sleepersPassWaited", 0},
    {"server returnedTotal", "serverReturnedTotal", 0},
    {"idleTimeoutSeconds", "idleTimeoutSeconds", 0},
};
#define NSLEEPER (sizeof(SLEEPER_ROWS) / sizeof(SLEEPER_ROWS[0]))

/* A run with subscribed sleepers (--subscribed) adds these. */
static const row_t PUSH_ROWS[] = {
    {"subscribed (Web Push)", "subscribed", 0},
    {"subscribed, lost their place", "subscribedLost", 0},
    {"pushes delivered, decrypted", "pushesDelivered", 0},
    {"pushes refused by checks", "pushesRejected", 0},
    {"pushes missed (still silent)", "pushesMissed", 0},
    {"push after admission p50 ms", "pushLatencyP50Ms", 0},
    {"push after admission p99 ms", "pushLatencyP99Ms", 0},
    {"back p50 ms after turn, push", "subscribedBackAfterAdmissionP50Ms", 0},
    {"back p50 ms after turn, none", "sleepersBackAfterAdmissionP50Ms", 0},
    {"polls/person, subscribed", "pollsPerSubscribedSleeper", 2},
    {"polls/person, sleepers", "pollsPerSleeper", 2},
    {"polls/person, others", "pollsPerOtherUser", 2},
};
#define NPUSH (sizeof(PUSH_ROWS) / sizeof(PUSH_ROWS[0]))

/* A run with a slowdown (--slowdown-at: demo.sh --shop-slowdown) adds
 * these: how the line settled after it, and its ETA from then on. */
static const row_t SETTLE_ROWS[] = {
    {"settled, s after slowdown", "settleSeconds", 1},
    {"shop max in flight, settled", "shopMaxInFlightAfterSettle", 0},
    {"ETA settled, |err|/wait p50", "etaAfterSettleRelErrorP50", 3},
    {"ETA settled, |err|/wait p95", "etaAfterSettleRelErrorP95", 3},
    {"ETA settled, share in 10%", "etaAfterSettleWithin10Pct", 3},
    {"ETA settled, people (>=10 s)", "etaAfterSettleSamples", 0},
};
#define NSETTLE (sizeof(SETTLE_ROWS) / sizeof(SETTLE_ROWS[0]))

/* A run with a stock (--stock) adds these. */
static const row_t STOCK_ROWS[] = {
    {"stock", "stock", 0},
    {"admitted", "usersAdmitted", 0},
    {"passes expired (unit back)", "passesExpired", 0},
    {"admitted beyond the stock", "admittedBeyondStock", 0},
    {"told \"sold out\"", "usersToldSoldOut", 0},
    {"stock left at the end", "stockLeftAtEnd", 0},
    {"sold out, ms after start", "soldOutAtMs", 0},
};
#define NSTOCK (sizeof(STOCK_ROWS) / sizeof(STOCK_ROWS[0]))

static bool has_sleepers(const json_t *run)
{
    return num(run, "sleepersPlanned") > 0;
}

static bool has_stock(const json_t *run)
{
    return has_num(run, "stock");
}

/* rows[0..n) of run, one per line (prefix "  "). */
static void print_rows(FILE *f, const json_t *run, const row_t *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char v[64];
        fmt(v, sizeof(v), run, rows[i].key, rows[i].decimals);
        fprintf(f, "  %-28s %s\n", rows[i].label, v);
    }
}

void wr_report_describe_mode(char *buf, size_t cap, const json_t *run)
{
    const char *mode = json_string_value(json_object_get(run, "admissionMode"));
    double rate = num(run, "admitRateConfigured");
    if (!mode) { /* a run written before the mode was recorded */
        const char *m = json_string_value(json_object_get(run, "mode"));
        mode = m && !strcmp(m, "queue") ? "rate" : "noQueue";
    }
    if (!strcmp(mode, "noQueue"))
        snprintf(buf, cap, "no line: everybody goes straight to the shop");
    else if (!strcmp(mode, "oneInOneOut") &&
             json_is_true(json_object_get(run, "sessionsRefusedByServer")))
        snprintf(buf, cap,
                 "one in, one out asked: %g/s, maxActive %.0f; this waitroomd refused "
                 "sessionSeconds (no sessions), so a slot frees at consume, not at release",
                 rate, num(run, "maxActive"));
    else if (!strcmp(mode, "oneInOneOut"))
        snprintf(buf, cap,
                 "one in, one out: %g/s, maxActive %.0f, sessionSeconds %.0f, the shop releases "
                 "each session",
                 rate, num(run, "maxActive"), num(run, "sessionSeconds"));
    else if (!strcmp(mode, "maxActive"))
        snprintf(buf, cap, "rate %g/s, maxActive %.0f", rate, num(run, "maxActive"));
    else
        snprintf(buf, cap, "rate only: %g/s, no maxActive", rate);
}

void wr_report_describe_polls(char *buf, size_t cap, const json_t *run)
{
    const json_t *bands = json_object_get(run, "pollBands");
    char *b = bands ? json_dumps(bands, JSON_COMPACT) : NULL;
    if (!json_is_number(json_object_get(run, "pollJitter")))
        snprintf(buf, cap, "poll timing: n/a");
    else if (json_is_true(json_object_get(run, "pollBandsDefault")))
        snprintf(buf, cap, "poll timing: the server's default bands, jitter %g",
                 num(run, "pollJitter"));
    else
        snprintf(buf, cap, "poll timing: bands %s, jitter %g", b ? b : "?", num(run, "pollJitter"));
    free(b);
}

void wr_report_describe_opening(char *buf, size_t cap, const json_t *run)
{
    if (!has_num(run, "opensAt")) {
        snprintf(buf, cap, "no sale opening");
        return;
    }
    char at[40] = "?";
    time_t t = (time_t)(num(run, "opensAt") / 1000);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(at, sizeof(at), "%Y-%m-%d %H:%M:%S UTC", &tm);
    if (!has_num(run, "prequeueUsers")) /* without the line */
        snprintf(buf, cap,
                 "sale opening at %s (%.1f s after the first arrival): no pre-queue, whoever "
                 "came early reaches the shop at the opening",
                 at, num(run, "opensAtMs") / 1000.0);
    else
        snprintf(buf, cap,
                 "sale opening at %s (%.1f s after the first arrival): pre-queue of %.0f, "
                 "%.0f later arrivals",
                 at, num(run, "opensAtMs") / 1000.0, num(run, "prequeueUsers"),
                 num(run, "laterArrivals"));
}

void wr_report_add_log(json_t *with, json_t *verify)
{
    json_t *draws = json_object_get(verify, "draws");
    json_object_set(with, "logEvents", json_object_get(verify, "size"));
    json_object_set(with, "overtakes", json_object_get(verify, "overtakes"));
    json_object_set_new(with, "drawChecked",
                        json_integer_value(draws) > 0 ||
                                json_is_true(json_object_get(verify, "drawPending"))
                            ? json_boolean(json_is_true(json_object_get(verify, "drawChecked")) &&
                                           json_integer_value(draws) > 0)
                            : json_null());
    json_object_set(with, "logVerify", verify);
}

void wr_report_describe_log(char *buf, size_t cap, const json_t *run)
{
    static const char *const verdicts[] = {"fair", "NOT FAIR", "BROKEN (the log does not check)",
                                           "DRAW NOT CHECKED"};
    const json_t *v = json_object_get(run, "logVerify");
    const json_t *left = json_object_get(v, "left");
    const json_t *dc = json_object_get(run, "drawChecked");
    json_int_t code = json_integer_value(json_object_get(v, "exit"));
    if (!json_is_object(v)) {
        snprintf(buf, cap, "no public log");
        return;
    }
    snprintf(buf, cap,
             "public log (waitroom-verify): %s, %.0f overtakes, draw %s; %.0f events, signature "
             "and root %s; joined %.0f, admitted %.0f (%.0f held returns), left %.0f",
             code >= 0 && code <= 3 ? verdicts[code] : "?", num(v, "overtakes"),
             json_is_null(dc)                                      ? "none"
             : !json_is_true(dc)                                   ? "NOT checked"
             : json_is_true(json_object_get(v, "drawIndependent")) ? "checked (beacon)"
                                                                   : "checked (no beacon)",
             num(v, "size"), json_is_true(json_object_get(v, "rootChecked")) ? "ok" : "FAILED",
             num(v, "joined"), num(v, "admitted"), num(v, "heldReturns"),
             num(left, "left") + num(left, "abandoned") + num(left, "pending") +
                 num(left, "removed"));
}

/* The presale line and the server report's line of run, when it has them. */
static void print_sale_lines(FILE *f, const json_t *run, const char *prefix)
{
    char d[600];
    if (json_is_string(json_object_get(run, "presaleGroup"))) {
        wr_report_describe_presale(d, sizeof(d), run);
        fprintf(f, "  %s%s\n", prefix, d);
    }
    if (json_is_object(json_object_get(run, "serverReport"))) {
        wr_report_describe_server_report(d, sizeof(d), run);
        fprintf(f, "  %s%s\n", prefix, d);
    }
}

void wr_report_print_run(FILE *f, const json_t *run)
{
    const char *mode = json_string_value(json_object_get(run, "mode"));
    char d[512];
    fprintf(f, "== %s ==\n",
            mode && !strcmp(mode, "noQueue") ? "without the line" : "with the line");
    wr_report_describe_mode(d, sizeof(d), run);
    fprintf(f, "  admission: %s\n", d);
    if (!(mode && !strcmp(mode, "noQueue"))) {
        wr_report_describe_polls(d, sizeof(d), run);
        fprintf(f, "  %s\n", d);
    }
    for (size_t i = 0; i < NROWS; i++) {
        char v[64];
        fmt(v, sizeof(v), run, ROWS[i].key, ROWS[i].decimals);
        fprintf(f, "  %-28s %s\n", ROWS[i].label, v);
    }
    if (has_num(run, "opensAt")) {
        wr_report_describe_opening(d, sizeof(d), run);
        fprintf(f, "  %s\n", d);
        print_rows(f, run, OPENING_ROWS, NOPENING);
    }
    if (has_num(run, "settleSeconds"))
        print_rows(f, run, SETTLE_ROWS, NSETTLE);
    if (has_sleepers(run))
        print_rows(f, run, SLEEPER_ROWS, NSLEEPER);
    if (has_num(run, "subscribed"))
        print_rows(f, run, PUSH_ROWS, NPUSH);
    if (has_stock(run))
        print_rows(f, run, STOCK_ROWS, NSTOCK);
    print_sale_lines(f, run, "");
}

void wr_report_print_compare(FILE *f, const json_t *without, const json_t *with)
{
    char d[512];
    wr_report_describe_mode(d, sizeof(d), with);
    fprintf(f, "  with the line, admission: %s\n", d);
    wr_report_describe_polls(d, sizeof(d), with);
    fprintf(f, "  with the line, %s\n", d);
    fprintf(f, "  %-28s %16s %16s\n", "", "without line", "with line");
    for (size_t i = 0; i < NROWS; i++) {
        char a[64], b[64];
        fmt(a, sizeof(a), without, ROWS[i].key, ROWS[i].decimals);
        fmt(b, sizeof(b), with, ROWS[i].key, ROWS[i].decimals);
        fprintf(f, "  %-28s %16s %16s\n", ROWS[i].label, a, b);
    }
    if (has_num(with, "opensAt")) {
        wr_report_describe_opening(d, sizeof(d), with);
        fprintf(f, "  with the line, %s\n", d);
        for (size_t i = 0; i < NOPENING; i++) {
            char a[64], b[64];
            fmt(a, sizeof(a), without, OPENING_ROWS[i].key, OPENING_ROWS[i].decimals);
            fmt(b, sizeof(b), with, OPENING_ROWS[i].key, OPENING_ROWS[i].decimals);
            fprintf(f, "  %-28s %16s %16s\n", OPENING_ROWS[i].label, a, b);
        }
    }
    if (has_num(with, "settleSeconds")) {
        fprintf(f, "  after the shop slowed down:\n");
        for (size_t i = 0; i < NSETTLE; i++) {
            char a[64], b[64];
            fmt(a, sizeof(a), without, SETTLE_ROWS[i].key, SETTLE_ROWS[i].decimals);
            fmt(b, sizeof(b), with, SETTLE_ROWS[i].key, SETTLE_ROWS[i].decimals);
            fprintf(f, "  %-28s %16s %16s\n", SETTLE_ROWS[i].label, a, b);
        }
    }
    /* sleepers and stock concern the line only: its column alone */
    if (has_sleepers(with)) {
        fprintf(f, "  with the line, phones that slept:\n");
        print_rows(f, with, SLEEPER_ROWS, NSLEEPER);
    }
    if (has_num(with, "subscribed")) {
        fprintf(f, "  with the line, sleepers subscribed to Web Push:\n");
        print_rows(f, with, PUSH_ROWS, NPUSH);
    }
    if (has_stock(with)) {
        fprintf(f, "  with the line, a stock:\n");
        print_rows(f, with, STOCK_ROWS, NSTOCK);
    }
    if (json_object_get(with, "logVerify")) {
        wr_report_describe_log(d, sizeof(d), with);
        fprintf(f, "  with the line, %s\n", d);
    }
    print_sale_lines(f, with, "with the line, ");
}

/* ---------- SVG ---------- */

#define W       1200
#define PW      500 /* panel width */
#define PH      170 /* panel height */
#define COL0    80
#define COL1    680
#define ROW0    95
#define ROWSTEP 235

/* A "nice" step (1, 2 or 5 times a power of ten) giving about 4 ticks. */
static double nice_step(double max)
{
    if (max <= 0)
        return 1;
    double raw = max / 4;
    double p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static double series_max(const json_t *arr, double scale)
{
    double m = 0;
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        double x = json_number_value(v) * scale;
        if (x > m)
            m = x;
    }
    return m;
}

typedef struct {
    FILE *f;
    double x0, y0; /* panel top-left */
    double tmax_s; /* x axis: 0..tmax_s */
    double ymax;   /* y axis: 0..ymax */
} panel_t;

static double px(const panel_t *p, double t_s)
{
    return p->x0 + t_s / p->tmax_s * PW;
}

static double py(const panel_t *p, double y)
{
    if (y > p->ymax)
        y = p->ymax;
    return p->y0 + PH - y / p->ymax * PH;
}

static void panel_frame(panel_t *p, const char *title, double ymax_data)
{
    FILE *f = p->f;
    double step = nice_step(ymax_data);
    p->ymax = ceil((ymax_data > 0 ? ymax_data : 1) / step) * step;
    if (p->ymax < step)
        p->ymax = step;
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"pt\">%s</text>\n", p->x0, p->y0 - 8, title);
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
            "stroke=\"#999\"/>\n",
            p->x0, p->y0, PW, PH);
    for (double y = 0; y <= p->ymax + step / 2; y += step) {
        double yy = py(p, y);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e2e2e2\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" class=\"yl\">%g</text>\n",
                p->x0, yy, p->x0 + PW, yy, p->x0 - 6, yy + 4, y);
    }
    double xs = nice_step(p->tmax_s);
    for (double t = 0; t <= p->tmax_s + xs / 2; t += xs) {
        double xx = px(p, t);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" class=\"xl\">%gs</text>\n",
                xx, p->y0 + PH, xx, p->y0 + PH + 4, xx, p->y0 + PH + 17, t);
    }
}

/* Draws arr (one value per step_ms) as a line; scale multiplies values. */
static void panel_line(panel_t *p, const json_t *arr, double step_ms, double scale,
                       const char *color, bool steps)
{
    FILE *f = p->f;
    size_t n = json_array_size(arr);
    if (n == 0)
        return;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", color);
    for (size_t i = 0; i < n; i++) {
        double t0 = (double)i * step_ms / 1000.0;
        if (t0 > p->tmax_s)
            break;
        double y = json_number_value(json_array_get(arr, i)) * scale;
        if (steps) {
            double t1 = (double)(i + 1) * step_ms / 1000.0;
            if (t1 > p->tmax_s)
                t1 = p->tmax_s;
            fprintf(f, "%.1f,%.1f %.1f,%.1f ", px(p, t0), py(p, y), px(p, t1), py(p, y));
        } else {
            /* the inner points of a flat run draw nothing: left out (a
             * run of minutes would otherwise be thousands of them) */
            double prev = i > 0 ? json_number_value(json_array_get(arr, i - 1)) * scale : NAN;
            double next = i + 1 < n ? json_number_value(json_array_get(arr, i + 1)) * scale : NAN;
            double t_next = (double)(i + 1) * step_ms / 1000.0;
            if (y == prev && y == next && t_next <= p->tmax_s)
                continue;
            fprintf(f, "%.1f,%.1f ", px(p, t0), py(p, y));
        }
    }
    fprintf(f, "\"/>\n");
}

static void hline(panel_t *p, double y, const char *color, const char *label)
{
    double yy = py(p, y);
    fprintf(p->f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-dasharray=\"6 4\" stroke-width=\"1.4\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"hl\" fill=\"%s\">%s</text>\n",
            p->x0, yy, p->x0 + PW, yy, color, p->x0 + PW - 4, yy - 4, color, label);
}

static void vline(panel_t *p, double t_s, const char *color, const char *label)
{
    double xx = px(p, t_s);
    fprintf(p->f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-dasharray=\"6 4\" stroke-width=\"1.4\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"sm\" fill=\"%s\">%s</text>\n",
            xx, p->y0, xx, p->y0 + PH, color, xx + 4, p->y0 + 14, color, label);
}

/* A small legend entry at (x, y): a colour swatch and its label. */
static void legend(FILE *f, double x, double y, const char *color, const char *label)
{
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"3\" fill=\"%s\"/>"
            "<text x=\"%.0f\" y=\"%.0f\" class=\"sm\">%s</text>\n",
            x, y - 4, color, x + 18, y, label);
}

/* The sale's end, row 4 (with the line only): phones asleep, held and
 * returned over time at x0 (COL0), stock left and the sold-out moment at
 * COL1. A panel the run has no data for says so. */
static void sale_row(FILE *f, double y0, const json_t *run, double tmax_s)
{
    const json_t *ser = json_object_get(run, "series");
    double step = num(ser, "stepMs");
    if (step <= 0)
        step = 100;
    char buf[300];
    panel_t p = {f, COL0, y0, tmax_s, 1};
    if (num(run, "sleepersPlanned") > 0) {
        const json_t *asleep = json_object_get(ser, "sleepersAsleep"),
                     *held = json_object_get(ser, "held"),
                     *back = json_object_get(ser, "returnedTotal");
        double m = fmax(series_max(asleep, 1), fmax(series_max(held, 1), series_max(back, 1)));
        panel_frame(&p, "With the line: phones asleep, held (turn came while away), returned", m);
        panel_line(&p, asleep, step, 1, "#9467bd", false);
        panel_line(&p, held, step, 1, "#d62728", false);
        panel_line(&p, back, step, 1, "#2ca02c", false);
        legend(f, COL0 + 8, y0 + PH + 34, "#9467bd", "asleep now");
        legend(f, COL0 + 120, y0 + PH + 34, "#d62728", "held now (server)");
        legend(f, COL0 + 270, y0 + PH + 34, "#2ca02c", "returned, total (server)");
        snprintf(buf, sizeof(buf),
                 "%.0f slept (%.0f-%.0f s; idleTimeoutSeconds %.0f): lost %.0f, held %.0f, "
                 "returned %.0f, back in line %.0f, pass waited %.0f",
                 num(run, "sleepers"),
                 json_number_value(json_array_get(json_object_get(run, "sleepRangeSeconds"), 0)),
                 json_number_value(json_array_get(json_object_get(run, "sleepRangeSeconds"), 1)),
                 num(run, "idleTimeoutSeconds"), num(run, "sleepersLost"), num(run, "sleepersHeld"),
                 num(run, "sleepersReturned"), num(run, "sleepersBackInLine"),
                 num(run, "sleepersPassWaited"));
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sm\">%s</text>\n", COL0, y0 + PH + 54, buf);
    } else {
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sm\">no sleepers in this run</text>\n", COL0,
                y0 + PH / 2.0);
    }
    p.x0 = COL1;
    if (has_num(run, "stock")) {
        const json_t *left = json_object_get(ser, "stockLeft");
        double m = fmax(series_max(left, 1), num(run, "stock"));
        panel_frame(&p, "With the line: stock left", m);
        panel_line(&p, left, step, 1, "#8c564b", false);
        if (has_num(run, "soldOutAtMs"))
            vline(&p, num(run, "soldOutAtMs") / 1000.0, "#d62728", "sold out");
        snprintf(buf, sizeof(buf),
                 "stock %.0f: admitted %.0f, beyond the stock %.0f; told \"sold out\" %.0f",
                 num(run, "stock"), num(run, "usersAdmitted"), num(run, "admittedBeyondStock"),
                 num(run, "usersToldSoldOut"));
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sm\">%s</text>\n", COL1, y0 + PH + 34, buf);
        if (has_num(run, "soldOutAtMs"))
            snprintf(buf, sizeof(buf), "sold out %.1f s after the first arrival",
                     num(run, "soldOutAtMs") / 1000.0);
        else
            snprintf(buf, sizeof(buf), "never sold out");
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sm\">%s</text>\n", COL1, y0 + PH + 54, buf);
    } else {
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" class=\"sm\">no stock in this run</text>\n", COL1,
                y0 + PH / 2.0);
    }
}

static void column(FILE *f, double x0, const json_t *run, double tmax_s, bool with)
{
    const json_t *ser = json_object_get(run, "series");
    double step = num(ser, "stepMs");
    if (step <= 0)
        step = 100;
    double pool = num(run, "shopPool");
    char buf[256];

    panel_t p = {f, x0, ROW0, tmax_s, 1};
    const json_t *line = json_object_get(ser, "lineLength");
    panel_frame(&p, "People in line", series_max(line, 1));
    panel_line(&p, line, step, 1, "#1f77b4", false);
    if (!with)
        fprintf(f,
                "<text x=\"%.0f\" y=\"%.0f\" class=\"sm\" text-anchor=\"middle\">no line: "
                "everybody goes straight to the shop</text>\n",
                x0 + PW / 2.0, ROW0 + PH / 2.0);

    p.y0 = ROW0 + ROWSTEP;
    const json_t *aps = json_object_get(run, "admittedPerSecond");
    double amax = series_max(aps, 1);
    double rate = num(run, "admitRateConfigured");
    if (with && rate > amax)
        amax = rate;
    /* autotune: the rate in use over time (stats admitRateTarget) */
    const json_t *rt = json_object_get(ser, "admitRateTarget");
    bool tuned = with && json_is_object(json_object_get(run, "autotune"));
    if (tuned && series_max(rt, 1) > amax)
        amax = series_max(rt, 1);
    panel_frame(&p, with ? "Admitted per second" : "Reaching the shop per second (no line)",
                amax * 1.1);
    panel_line(&p, aps, 1000, 1, "#2ca02c", true);
    /* --presale: each line's admissions per second under the total */
    const json_t *byg = json_object_get(run, "admittedPerSecondByGroup"), *v;
    const char *name;
    double lx = x0 + 8;
    json_object_foreach((json_t *)byg, name, v)
    {
        const char *color = !strcmp(name, "standard") ? "#1f77b4" : "#e377c2";
        panel_line(&p, v, 1000, 1, color, true);
        legend(f, lx, p.y0 + 16, color, name);
        lx += 90;
    }
    if (tuned) {
        panel_line(&p, rt, step, 1, "#9467bd", false);
        fprintf(f,
                "<text x=\"%.0f\" y=\"%.0f\" class=\"hl\" fill=\"#9467bd\">rate in use "
                "(autotune)</text>\n",
                x0 + PW - 4, p.y0 + 14);
    } else if (with && rate > 0) {
        snprintf(buf, sizeof(buf), "configured %g/s", rate);
        hline(&p, rate, "#555", buf);
    }

    p.y0 = ROW0 + 2 * ROWSTEP;
    const json_t *inf = json_object_get(ser, "shopInFlightPeak");
    if (!json_array_size(inf)) /* a run from before the shop reported peaks */
        inf = json_object_get(ser, "shopInFlight");
    double imax = series_max(inf, 1);
    if (imax < pool * 1.25)
        imax = pool * 1.25;
    panel_frame(&p, "Orders in flight at the shop, peak per 100 ms (in service or waiting)", imax);
    panel_line(&p, inf, step, 1, "#ff7f0e", false);
    snprintf(buf, sizeof(buf), "pool = %g connections", pool);
    hline(&p, pool, "#d62728", buf);

    double y = ROW0 + 2 * ROWSTEP + PH + 42;
    snprintf(buf, sizeof(buf),
             "orders ok %.0f, failed %.0f; pool timeouts %.0f; max in flight %.0f (pool %.0f)",
             num(run, "ordersOk"), num(run, "ordersFailed"), num(run, "shopPoolTimeouts"),
             num(run, "shopMaxInFlight"), pool);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"sm\">%s</text>\n", x0, y, buf);
    snprintf(buf, sizeof(buf), "order latency p50 %.0f ms, p99 %.0f ms; %.0f%% of orders failed",
             num(run, "orderLatencyP50Ms"), num(run, "orderLatencyP99Ms"),
             num(run, "users") > 0 ? num(run, "ordersFailed") * 100 / num(run, "users") : 0);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"sm\">%s</text>\n", x0, y + 18, buf);
    if (with)
        snprintf(buf, sizeof(buf),
                 "lost %.0f; Kendall tau %.4f; wait p50 %.1f s, p99 %.1f s; bypasses let in "
                 "%.0f of %.0f",
                 num(run, "usersLost"), num(run, "kendallTau"), num(run, "waitP50Ms") / 1000,
                 num(run, "waitP99Ms") / 1000, num(run, "bypassAccepted"),
                 num(run, "bypassAttempts"));
    else
        snprintf(buf, sizeof(buf), "bypasses let in %.0f of %.0f (nothing is checked)",
                 num(run, "bypassAccepted"), num(run, "bypassAttempts"));
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"sm\">%s</text>\n", x0, y + 36, buf);
}

/* <text> at (x, y): prefix then s, XML-escaped (the bands are JSON). */
static void text_line(FILE *f, int x, int y, const char *prefix, const char *s)
{
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"sm\">%s", x, y, prefix);
    for (const char *c = s; *c; c++) {
        if (*c == '<')
            fputs("&lt;", f);
        else if (*c == '>')
            fputs("&gt;", f);
        else if (*c == '&')
            fputs("&amp;", f);
        else if (*c == '"')
            fputs("&quot;", f);
        else
            fputc(*c, f);
    }
    fputs("</text>\n", f);
}

int wr_report_write_svg(const char *path, const json_t *without, const json_t *with)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const char *am = json_string_value(json_object_get(with, "admissionMode"));
    const char *mode_short = "";
    if (am && !strcmp(am, "oneInOneOut"))
        mode_short = json_is_true(json_object_get(with, "sessionsRefusedByServer"))
                         ? ", maxActive only: no sessions"
                         : ", one in, one out";
    else if (am && !strcmp(am, "maxActive"))
        mode_short = ", maxActive";
    double tmax = num(with, "durationMs");
    if (num(without, "durationMs") > tmax)
        tmax = num(without, "durationMs");
    tmax /= 1000.0;
    if (tmax < 1)
        tmax = 1;
    double xs = nice_step(tmax);
    tmax = ceil(tmax / xs) * xs;
    bool sale = num(with, "sleepersPlanned") > 0 || has_num(with, "stock");
    int sale_y = ROW0 + 3 * ROWSTEP + 60; /* below the third row's text */
    bool log = json_object_get(with, "logVerify") != NULL;
    bool presale = json_is_string(json_object_get(with, "presaleGroup"));
    const json_t *srep = json_object_get(with, "serverReport");
    int h = ROW0 + 2 * ROWSTEP + PH + 100 + 40 + (sale ? ROWSTEP + 40 : 0) + (log ? 18 : 0) +
            (presale ? 18 : 0) + (json_is_object(srep) ? 18 : 0);
    fprintf(
        f,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\">\n"
        "<style>.pt{font-size:13px;fill:#222}.yl{font-size:11px;fill:#555;"
        "text-anchor:end}.xl{font-size:11px;fill:#555;text-anchor:middle}"
        ".hl{font-size:11px;text-anchor:end}.sm{font-size:12px;fill:#333}"
        ".h{font-size:18px;font-weight:bold}a .sm{fill:#1a5fb4;text-decoration:underline}</style>\n"
        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
        W, h, W, h);
    fprintf(f,
            "<text x=\"%d\" y=\"28\" class=\"h\">Sale day: %.0f users arrive within 1 s; shop "
            "pool %.0f connections x %.0f ms per order</text>\n",
            COL0, num(with, "users"), num(with, "shopPool"), num(with, "shopServiceMs"));
    const char *l0 = json_string_value(json_object_get(without, "label"));
    const char *l1 = json_string_value(json_object_get(with, "label"));
    bool left_queue = num(without, "admitRateConfigured") > 0;
    if (l0 && l1 && left_queue) /* two runs with the line (demo.sh --autotune): their labels */
        fprintf(f,
                "<text x=\"%d\" y=\"62\" class=\"h\" fill=\"#d62728\">%s</text>\n"
                "<text x=\"%d\" y=\"62\" class=\"h\" fill=\"#2ca02c\">%s</text>\n",
                COL0, l0, COL1, l1);
    else
        fprintf(f,
                "<text x=\"%d\" y=\"62\" class=\"h\" fill=\"#d62728\">Without the line</text>\n"
                "<text x=\"%d\" y=\"62\" class=\"h\" fill=\"#2ca02c\">With the line "
                "(%.0f/s%s)</text>\n",
                COL0, COL1, num(with, "admitRateConfigured"), mode_short);
    column(f, COL0, without, tmax, left_queue);
    column(f, COL1, with, tmax, true);
    if (sale)
        sale_row(f, sale_y, with, tmax);
    char line[600];
    wr_report_describe_mode(line, sizeof(line), with);
    text_line(f, COL0, h - 34, "With the line, admission: ", line);
    wr_report_describe_polls(line, sizeof(line), with);
    text_line(f, COL0, h - 16, "With the line, ", line);
    int y = h - 52;
    if (log) {
        wr_report_describe_log(line, sizeof(line), with);
        line[0] = (char)(line[0] - 'a' + 'A'); /* "Public log ..." */
        text_line(f, COL0, y, "", line);
        y -= 18;
    }
    if (presale) {
        wr_report_describe_presale(line, sizeof(line), with);
        text_line(f, COL0, y, "With the line, ", line);
        y -= 18;
    }
    if (json_is_object(srep)) { /* a link to the saved report, when demo.sh saved it */
        const char *file = json_string_value(json_object_get(srep, "file"));
        wr_report_describe_server_report(line, sizeof(line), with);
        if (file)
            fprintf(f, "<a href=\"%s\">", file);
        text_line(f, COL0, y, "With the line, ", line);
        if (file)
            fprintf(f, "</a>\n");
    }
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
