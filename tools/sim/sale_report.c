/*
 * sale_report.c - the server's own report of the run (docs/API.md 1.3,
 * "The sale's report"), held against the simulator's counts, and the
 * report's lines on the presale run and on that report (report.h).
 *
 * At the end of a run with the line the simulator reads GET
 * /v1/admin/queues/Q/report?from=<the queue's creation> after the final
 * stats (the route first sends the instance's unsent counts; a count a
 * late answer made after that read - the server batches them, 200 ms - is
 * caught by reading again, up to 10 times 300 ms apart, while the totals
 * are below the simulator's: sim.c on_final). Its totals must equal what the run saw (serverReport,
 * --assert): joined = the joins that got a place (waiting, prequeue or
 * admitted: a join told "closed" is not counted by the server either),
 * admitted = the admissions the users saw, consumed = the passes the shop
 * consumed (waitroom-shop checks the pass first, then waits for a pool
 * connection: its ordersOk + poolTimeouts), left = the quitters' leaves
 * answered 204. The comparison
 * assumes the queue's report began with this run (the demo's server is
 * new; a report kept from an earlier run of the same queue in the same
 * minute would add to it).
 *
 * demo.sh saves the same report as OUT/server-report.json and .csv;
 * `waitroom-sim report --server-report FILE` names them in the run with
 * the line (serverReport.file, .csv), and the SVG links them.
 */
#include "sim.h"

#include <libgen.h>
#include <sys/stat.h>

#include "report.h"

void sale_report_fetch(sim_t *s, op_cb cb)
{
    char tail[64];
    snprintf(tail, sizeof(tail), "/report?from=%lld",
             (long long)(s->put_ms > 0 ? s->put_ms : s->t0_ms));
    pool_submit(&s->statp, admin_op_at(s, EVHTTP_REQ_GET, tail, cb));
}

void sale_report_figures(sim_t *s, json_t *r)
{
    json_t *rep = s->report_final, *tot = json_object_get(rep, "totals");
    if (s->no_queue || !json_is_object(tot)) {
        json_object_set_new(r, "serverReport", json_null());
        return;
    }
    json_t *sh = s->shop_final;
    json_int_t consumed = json_integer_value(json_object_get(sh, "ordersOk")) +
                          json_integer_value(json_object_get(sh, "poolTimeouts"));
    const struct {
        const char *key;
        json_int_t v;
    } mine[] = {{"joined", s->placed},
                {"admitted", s->admitted},
                {"consumed", consumed},
                {"left", s->left}};
    json_t *diff = json_array(), *sim = json_object();
    for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
        json_t *v = json_object_get(tot, mine[i].key);
        json_object_set_new(sim, mine[i].key, json_integer(mine[i].v));
        if (!json_is_integer(v) || json_integer_value(v) != mine[i].v)
            json_array_append_new(diff, json_string(mine[i].key));
    }
    json_t *o =
        json_pack("{s:O,s:O,s:O,s:I,s:O,s:o,s:b,s:o}", "queue", json_object_get(rep, "queue"),
                  "from", json_object_get(rep, "from"), "to", json_object_get(rep, "to"), "minutes",
                  (json_int_t)json_array_size(json_object_get(rep, "minutes")), "totals", tot,
                  "simulator", sim, "agrees", json_array_size(diff) == 0, "disagreements", diff);
    if (!o)
        die_oom();
    json_object_set_new(r, "serverReport", o);
}

/* ---------- the report's side (report.h) ---------- */

/* A file name safe in an SVG attribute without escaping. */
static bool plain_name(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '-' || *s == '_'))
            return false;
    return true;
}

int wr_report_link_server_report(json_t *with, const char *path)
{
    json_t *sr = json_object_get(with, "serverReport");
    json_error_t e;
    json_t *saved = json_load_file(path, 0, &e);
    int rc = 0;
    if (!json_is_object(json_object_get(saved, "totals"))) {
        fprintf(stderr, "waitroom-sim: --server-report %s: %s\n", path,
                saved ? "not a report (no totals)" : e.text);
        rc = -1;
    } else if (!json_is_object(sr)) {
        fprintf(stderr, "waitroom-sim: --server-report: the run has no serverReport\n");
        rc = -1;
    } else {
        char *dup = strdup(path), csv[4096];
        const char *base = dup ? basename(dup) : NULL;
        if (base && plain_name(base))
            json_object_set_new(sr, "file", json_string(base));
        size_t n = strlen(path);
        struct stat st;
        if (n > 5 && n < sizeof(csv) && !strcmp(path + n - 5, ".json")) {
            snprintf(csv, sizeof(csv), "%.*s.csv", (int)(n - 5), path);
            free(dup);
            dup = strdup(csv);
            base = dup ? basename(dup) : NULL;
            if (base && plain_name(base) && stat(csv, &st) == 0)
                json_object_set_new(sr, "csv", json_string(base));
        }
        free(dup);
        /* the saved file was read after the run: the same totals */
        json_object_set_new(sr, "fileAgrees",
                            json_boolean(json_equal(json_object_get(saved, "totals"),
                                                    json_object_get(sr, "totals"))));
    }
    json_decref(saved);
    return rc;
}

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

void wr_report_describe_server_report(char *buf, size_t cap, const json_t *run)
{
    const json_t *sr = json_object_get(run, "serverReport"), *t = json_object_get(sr, "totals");
    if (!json_is_object(sr)) {
        snprintf(buf, cap, "no server report");
        return;
    }
    char files[200] = "";
    if (json_is_string(json_object_get(sr, "file")))
        snprintf(files, sizeof(files), " (%s%s%s)", json_string_value(json_object_get(sr, "file")),
                 json_object_get(sr, "csv") ? ", " : "",
                 json_object_get(sr, "csv") ? json_string_value(json_object_get(sr, "csv")) : "");
    char *d = json_dumps(json_object_get(sr, "disagreements"), JSON_COMPACT);
    snprintf(buf, cap,
             "the server's own report%s, %.0f minutes: joined %.0f, admitted %.0f, consumed "
             "%.0f, left %.0f, no-shows %.0f: %s%s",
             files, num(sr, "minutes"), num(t, "joined"), num(t, "admitted"), num(t, "consumed"),
             num(t, "left"), num(t, "noShows"),
             json_is_true(json_object_get(sr, "agrees")) ? "the simulator's counts agree"
                                                         : "DISAGREES with the simulator on ",
             json_is_true(json_object_get(sr, "agrees")) ? "" : (d ? d : "?"));
    free(d);
}

void wr_report_describe_presale(char *buf, size_t cap, const json_t *run)
{
    const char *g = json_string_value(json_object_get(run, "presaleGroup"));
    const json_t *w = json_object_get(run, "waitP50MsByGroup");
    if (!g) {
        snprintf(buf, cap, "no presale");
        return;
    }
    snprintf(buf, cap,
             "presale: %.0f with codes (%.0f in %s); the standard line's lowest share of a "
             "second %.3f (standardShare %g; below the floor in %.0f of %.0f); wait p50 %s %.1f "
             "s, standard %.1f s",
             num(run, "presaleUsers"), num(run, "presaleJoinedInGroup"), g,
             num(run, "standardShareMinObserved"), num(run, "standardShare"),
             num(run, "standardShareFloorMisses"), num(run, "standardShareSeconds"), g,
             num(w, g) / 1000, num(w, "standard") / 1000);
}
