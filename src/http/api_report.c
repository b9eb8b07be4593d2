/*
 * api_report.c - the sale's report (docs/API.md 1.3, "The sale's report"):
 * GET /v1/admin/queues/{queue}/report[?from=MS&to=MS][&format=csv] and
 * GET /v1/admin/reports. Part of the api module (api_internal.h).
 *
 * A report is read in steps, each a store call: this instance's counts
 * not sent yet are sent first (same connection, so the reads see them);
 * the registry (INDEX: the report's first minute, deleted or not); every
 * day's map the range touches (READ, in parallel); then the queue's stats
 * (queue_get: the live state of the current minute; WR_ENOTFOUND: the
 * queue was deleted, its last sample ends the report). The stats are
 * read last, so no sample read is newer than them. core/report.c builds
 * the answer.
 *
 * The public log's fairness statement (docs/API.md 1.3, "The report,
 * precisely"): for a queue with publicLog (or a deleted queue whose log is
 * still kept), after the stats: the log's head (store.h log_head; with no
 * checkpoint yet one is signed on the spot, as the checkpoint route does),
 * then the leaves up to the checkpoint's size read 1,000 at a time and
 * replayed (core/logreplay.h): "fairness":{"checkpoint","size","overtakes"}.
 * O(leaves) per report read: an admin route, read the day after. A log
 * that cannot be read leaves "fairness" out (the report still answers).
 */
#include <ctype.h>
#include <errno.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/logreplay.h"
#include "core/report.h"
#include "http/api_internal.h"
#include "http/api_routes.h"
#include "runtime/logsign.h"
#include "runtime/reporter.h"
#include "runtime/scheduler.h"

#define DAYS_MAX 33 /* days one answer reads: WR_REPORT_MINUTE_MAX plus the edges */

typedef struct {
    wr_api__ctx_t *c;
    bool csv;
    int64_t from, to; /* asked, -1 = default */
    int64_t now;      /* store clock, epoch ms */
    int64_t first;    /* the registry's first minute, -1 none */
    bool listed;      /* the registry has the queue */
    wr_report_t *rep;
    int64_t day0;
    size_t days, answered;
    wr_err_t err;
    /* fairness (the public log) */
    wr_logreplay_t *replay;
    char *checkpoint; /* the checkpoint's text (owned) */
    uint64_t cp_size, read_to;
    wr_log_read_t rd;
} rctx_t;

static void rctx_free(rctx_t *r)
{
    wr_api__ctx_free(r->c);
    wr_report_free(r->rep);
    wr_logreplay_free(r->replay);
    free(r->checkpoint);
    free(r);
}

/* "FIRST,DELETED" of the registry. */
static bool parse_entry(const char *v, long long *first, long long *deleted)
{
    return sscanf(v, "%lld,%lld", first, deleted) == 2;
}

/* ?NAME=epoch ms: -1 when absent; false when present but not digits. */
static bool query_ms(struct evkeyvalq *params, const char *name, int64_t *out)
{
    const char *v = evhttp_find_header(params, name);
    *out = -1;
    if (!v)
        return true;
    char *end = NULL;
    errno = 0;
    long long ms = strtoll(v, &end, 10);
    if (!isdigit((unsigned char)v[0]) || *end || errno == ERANGE || ms > 32503680000000LL)
        return false;
    *out = ms;
    return true;
}

/* The first minute kept now (the retention's start). */
static int64_t kept_start(const wr_api_t *a, int64_t now)
{
    uint32_t days = wr_reporter_keep_days(wr_scheduler_reporter(a->sched));
    return wr_report_floor_minute(now - (int64_t)days * WR_REPORT_DAY_MS);
}

static void reply_done(rctx_t *r)
{
    wr_api__ctx_t *c = r->c;
    if (r->csv) {
        size_t len = 0;
        char *csv = wr_report_csv(r->rep, &len);
        char name[WR_QUEUE_NAME_MAX + 16];
        snprintf(name, sizeof name, "%s-report.csv", c->queue);
        if (csv)
            wr_api__reply_csv(c->api, c->req, c->route, name, csv, len);
        else
            wr_api__reply_oom(c->api, c->req, c->route);
        free(csv);
    } else {
        json_t *o = wr_report_json(r->rep);
        if (o && r->checkpoint && r->replay && r->read_to == r->cp_size)
            json_object_set_new(o, "fairness",
                                json_pack("{s:s,s:I,s:I}", "checkpoint", r->checkpoint, "size",
                                          (json_int_t)r->cp_size, "overtakes",
                                          (json_int_t)wr_logreplay_stats(r->replay)->overtakes));
        wr_api__reply_jansson(c->api, c->req, c->route, 200, o);
    }
    rctx_free(r);
}

/* The next 1,000 leaves of the log (or the answer when all are read). */
static void read_leaves(rctx_t *r);

static void leaves_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    rctx_t *r = arg;
    if (err != WR_OK || !res) {
        reply_done(r); /* no fairness: the report still answers */
        return;
    }
    const char *p = res->leaves, *end = res->leaves + res->leaves_len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        (void)wr_logreplay_feed(r->replay, p, len); /* a bad leaf is counted as a problem */
        p += len + 1;
    }
    r->read_to = r->rd.end;
    read_leaves(r);
}

static void read_leaves(rctx_t *r)
{
    if (r->read_to >= r->cp_size) {
        reply_done(r);
        return;
    }
    r->rd.start = r->read_to;
    r->rd.end = r->cp_size - r->read_to > 1000 ? r->read_to + 1000 : r->cp_size;
    r->rd.n_nodes = 0;
    r->c->op = "log_read";
    if (wr_store_log_read(r->c->api->store, r->c->queue, &r->rd, leaves_cb, r) != WR_OK)
        reply_done(r);
}

/* The log's head (or a checkpoint just signed): replay up to it. */
static void head_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    rctx_t *r = arg;
    wr_api_t *a = r->c->api;
    if (err == WR_OK && res && !res->broken && !res->checkpoint && a->logsign && !r->checkpoint) {
        r->checkpoint = strdup(""); /* marks the one signing asked */
        if (r->checkpoint && wr_logsign_queue(a->logsign, r->c->queue, head_cb, r) == WR_OK)
            return;
    }
    free(r->checkpoint);
    r->checkpoint = NULL;
    if (err != WR_OK || !res || res->broken || !res->checkpoint) {
        reply_done(r);
        return;
    }
    r->checkpoint = strndup(res->checkpoint, res->checkpoint_len);
    r->cp_size = res->checkpoint_size;
    r->replay = wr_logreplay_new();
    if (!r->checkpoint || !r->replay) {
        reply_done(r);
        return;
    }
    read_leaves(r);
}

/* After the stats: the fairness statement when the queue's log is kept. */
static void fairness(rctx_t *r, bool log_on)
{
    wr_api_t *a = r->c->api;
    if (r->csv || !log_on || !wr_store_has_log(a->store) || !a->logsign ||
        !wr_logsign_ready(a->logsign)) {
        reply_done(r);
        return;
    }
    r->c->op = "log_head";
    if (wr_store_log_head(a->store, r->c->queue, head_cb, r) != WR_OK)
        reply_done(r);
}

static void get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    rctx_t *r = arg;
    wr_api__ctx_t *c = r->c;
    if (err == WR_OK) {
        wr_report_sample_t live = wr_store_report_sample(
            &info->stats, r->now, wr_store_rate_in_use(info->config, info->stats.autotune_rate));
        wr_report_set_live(r->rep, &live);
    } else if (err == WR_ENOTFOUND && !r->listed) {
        wr_api__reply_error(c->api, c->req, c->route, 404, "QUEUE_NOT_FOUND", "no such queue", NULL,
                            NULL, 0);
        rctx_free(r);
        return;
    } else if (err == WR_ENOTFOUND) {
        wr_report_set_live(r->rep, NULL); /* deleted: its last sample ends it */
    } else {
        wr_api__reply_store_error(c, err, WR_API__TELLS_NONE);
        rctx_free(r);
        return;
    }
    /* a deleted queue's log stays readable as long as its report */
    fairness(r, err == WR_OK ? info->config->public_log : true);
}

static void read_cb(wr_err_t err, const wr_store_report_pair_t *p, size_t n, void *arg)
{
    rctx_t *r = arg;
    size_t day_i = r->answered++;
    (void)day_i;
    if (err != WR_OK && r->err == WR_OK)
        r->err = err;
    /* the day is in the pairs' keys' context: READs answer in order */
    for (size_t i = 0; err == WR_OK && i < n; i++)
        wr_report_feed(r->rep, r->day0 + (int64_t)day_i, p[i].key, p[i].value);
    if (r->answered < r->days)
        return;
    wr_api__ctx_t *c = r->c;
    if (r->err != WR_OK) {
        wr_api__reply_store_error(c, r->err, WR_API__TELLS_NONE);
        rctx_free(r);
        return;
    }
    c->op = "queue_get";
    err = wr_store_queue_get(c->api->store, c->queue, get_cb, r);
    if (err != WR_OK) {
        wr_api__reply_unavailable(c->api, c->req, c->route, err);
        rctx_free(r);
    }
}

/* The registry's entry of the queue (or none) answered: the range, then
 * the days' maps. */
static void index_cb(wr_err_t err, const wr_store_report_pair_t *p, size_t n, void *arg)
{
    rctx_t *r = arg;
    wr_api__ctx_t *c = r->c;
    wr_api_t *a = c->api;
    if (err != WR_OK) {
        wr_api__reply_store_error(c, err, WR_API__TELLS_NONE);
        rctx_free(r);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        long long first, deleted;
        if (strcmp(p[i].key, c->queue) == 0 && parse_entry(p[i].value, &first, &deleted)) {
            r->listed = true;
            r->first = first;
        }
    }
    /* a queue the registry does not know yet (created this minute) has a
     * report from now; the existence is checked by the stats read */
    int64_t kept = kept_start(a, r->now);
    int64_t first_kept = r->first >= 0 && r->first > kept ? r->first : kept;
    if (!r->listed)
        first_kept = wr_report_floor_minute(r->now);
    int64_t from = r->from >= 0 ? wr_report_floor_minute(r->from) : first_kept;
    int64_t to = r->to >= 0 ? wr_report_ceil_minute(r->to)
                            : wr_report_floor_minute(r->now) + WR_REPORT_MINUTE_MS;
    if (r->from < 0 && from > to)
        from = to;
    /* the asked values first: from=10&to=5 is refused although both
     * round to the same minute */
    if (from > to || (r->from >= 0 && r->to >= 0 && r->from > r->to)) {
        wr_api__reply_error(a, c->req, c->route, 400, "BAD_REQUEST", "from is after to", NULL, NULL,
                            0);
        rctx_free(r);
        return;
    }
    if ((to - from) / WR_REPORT_MINUTE_MS > WR_REPORT_MINUTE_MAX) {
        wr_api__reply_error(a, c->req, c->route, 400, "BAD_REQUEST",
                            "the range is over 31 days: ask for it in parts", NULL, NULL, 0);
        rctx_free(r);
        return;
    }
    r->rep = wr_report_new(c->queue, from, to, r->listed ? r->first : -1);
    if (!r->rep) {
        wr_api__reply_oom(a, c->req, c->route);
        rctx_free(r);
        return;
    }
    /* the days of [from, to] (the sample at `to` ends the last minute),
     * clipped to what is kept */
    int64_t d0 = wr_report_day(from > kept ? from : kept), d1 = wr_report_day(to);
    if (d0 > d1)
        d0 = d1;
    r->day0 = d0;
    r->days = (size_t)(d1 - d0 + 1);
    if (r->days > DAYS_MAX)
        r->days = DAYS_MAX;
    c->op = "report_read";
    size_t sent = 0;
    for (size_t i = 0; i < r->days; i++) {
        wr_store_report_req_t req = {
            .kind = WR_STORE_REPORT_READ, .queue = c->queue, .day = d0 + (int64_t)i};
        err = wr_store_report(a->store, &req, read_cb, r);
        if (err != WR_OK)
            break;
        sent++;
    }
    if (sent == r->days)
        return;
    /* some READs could not be sent: the rest answer into r, then fail */
    r->err = err;
    r->days = sent;
    if (sent == 0) {
        wr_api__reply_unavailable(a, c->req, c->route, err);
        rctx_free(r);
    }
}

void wr_api__handle_report(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    const char *qs = wr_http_req_query(req);
    struct evkeyvalq params = {0};
    int64_t from = -1, to = -1;
    bool csv = false, ok = true;
    /* a query that is not name=value parts is refused, not dropped */
    if (qs && *qs && evhttp_parse_query_str(qs, &params) != 0) {
        ok = false;
    } else if (qs) {
        ok = query_ms(&params, "from", &from) && query_ms(&params, "to", &to);
        const char *f = evhttp_find_header(&params, "format");
        if (f && strcmp(f, "csv") == 0)
            csv = true;
        else if (f && strcmp(f, "json") != 0)
            ok = false;
    }
    evhttp_clear_headers(&params);
    if (!ok) {
        wr_api__reply_error(a, req, call->route, 400, "BAD_REQUEST",
                            "from and to are epoch milliseconds; format is json or csv", NULL, NULL,
                            0);
        return;
    }
    if (from >= 0 && to >= 0 && wr_report_floor_minute(from) > wr_report_ceil_minute(to)) {
        wr_api__reply_error(a, req, call->route, 400, "BAD_REQUEST", "from is after to", NULL, NULL,
                            0);
        return;
    }
    rctx_t *r = calloc(1, sizeof *r);
    wr_api__ctx_t *c = r ? wr_api__ctx_new(a, req, call->route, call->queue) : NULL;
    if (!c) { /* ctx_new answered */
        if (!r)
            wr_api__reply_oom(a, req, call->route);
        free(r);
        return;
    }
    r->c = c;
    r->csv = csv;
    r->from = from;
    r->to = to;
    r->first = -1;
    wr_reporter_t *rep = wr_scheduler_reporter(a->sched);
    r->now = wr_reporter_now_ms(rep);
    wr_reporter_flush(rep, c->queue); /* this instance's counts first (same connection) */
    c->op = "report_index";
    wr_store_report_req_t ireq = {.kind = WR_STORE_REPORT_INDEX, .queue = c->queue, .lookup = true};
    wr_err_t err = wr_store_report(a->store, &ireq, index_cb, r);
    if (err != WR_OK) {
        wr_api__reply_unavailable(a, req, call->route, err);
        rctx_free(r);
    }
}

/* ---- GET /v1/admin/reports ---- */

static int cmp_name(const void *x, const void *y)
{
    const wr_store_report_pair_t *p = x, *q = y;
    return strcmp(p->key, q->key);
}

static void list_cb(wr_err_t err, const wr_store_report_pair_t *p, size_t n, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api_t *a = c->api;
    if (err != WR_OK) {
        wr_api__reply_store_error(c, err, WR_API__TELLS_NONE);
        wr_api__ctx_free(c);
        return;
    }
    wr_store_report_pair_t *sorted = calloc(n ? n : 1, sizeof *sorted);
    json_t *list = json_array();
    if (!sorted || !list) {
        free(sorted);
        json_decref(list);
        wr_api__reply_oom(a, c->req, c->route);
        wr_api__ctx_free(c);
        return;
    }
    memcpy(sorted, p, n * sizeof *p);
    qsort(sorted, n, sizeof *sorted, cmp_name);
    int64_t now = wr_reporter_now_ms(wr_scheduler_reporter(a->sched));
    int64_t kept = kept_start(a, now);
    for (size_t i = 0; i < n; i++) {
        long long first, deleted;
        if (!parse_entry(sorted[i].value, &first, &deleted))
            continue;
        int64_t to = deleted >= 0 ? wr_report_floor_minute(deleted) + WR_REPORT_MINUTE_MS
                                  : wr_report_floor_minute(now) + WR_REPORT_MINUTE_MS;
        if (to <= kept)
            continue; /* nothing of it is kept any more */
        int64_t from = first > kept ? wr_report_floor_minute(first) : kept;
        json_array_append_new(list, json_pack("{s:s,s:I,s:I,s:b}", "queue", sorted[i].key, "from",
                                              (json_int_t)from, "to", (json_int_t)to, "deleted",
                                              deleted >= 0));
    }
    free(sorted);
    wr_api__reply_jansson(a, c->req, c->route, 200, json_pack("{s:o}", "reports", list));
    wr_api__ctx_free(c);
}

void wr_api__handle_reports(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, call->route, "");
    if (!c) /* ctx_new answered */
        return;
    c->op = "report_index";
    wr_store_report_req_t ireq = {.kind = WR_STORE_REPORT_INDEX};
    wr_err_t err = wr_store_report(a->store, &ireq, list_cb, c);
    if (err != WR_OK) {
        wr_api__reply_unavailable(a, req, call->route, err);
        wr_api__ctx_free(c);
    }
}
