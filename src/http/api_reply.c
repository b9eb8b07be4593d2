/*
 * api_reply.c - the request contexts and the replies of the api module.
 *
 * Contexts: a store-backed request allocates one wr_api__ctx_t, freed right
 * after its reply. The store calls back exactly once (store.h contract), so
 * every ctx is freed exactly once; in_flight counts them for graceful
 * shutdown. Freed contexts go to a free list (base/freelist.h, at most WR_API_FREE_CTX_MAX), so the
 * hot path (status polls) does no malloc. If the client went away
 * meanwhile, the connection layer frees the request when we reply (an
 * orphan: http_conn.h), so late replies are safe (case K07).
 *
 * Replies: the wr_api__reply_* helpers count each answer in
 * waitroom_http_requests_total (label strings built once per route and
 * status) before sending it (http.h); the routes that send raw bytes
 * (metrics, static assets) count through wr_api__count_request.
 * observe() records each store operation's latency and its failures, and
 * counts accepted joins (waitroom_joins_total{queue}).
 *
 * Request records: each answer's duration (waitroom_http_request_duration_
 * seconds{route}, from dispatch in handle() to the reply) and its
 * access-log line (client after trusted proxies, method, route name,
 * queue, status, duration, body bytes: never the path, a token or a
 * cookie). What comes from the request is read before the send, which may
 * free it. A reply sent while handle() dispatches is written at once; one
 * sent from a store callback is kept in a->pending until its context is
 * freed right after, which knows the start and the queue.
 *
 * Errors: one table tells every store error to the client. The store's
 * domain answers (no such queue, not in line, line full, token not live,
 * a presale code refused)
 * each have a row - status, JSON code and message, Retry-After, and the
 * queue page's state; everything else is a failure of the store, 503
 * STORE_UNAVAILABLE. Each caller names the domain answers its route tells
 * (WR_API__TELLS_*, api_internal.h): e.g. a leave tells NOT_IN_QUEUE, the
 * queue page does not, and consume/verify hand other errors to the fail
 * policy instead of answering 503. observe() counts as store errors
 * exactly the errors without a row. A 503's Retry-After is drawn from
 * 1-3 s per answer (wr_api__retry_after_unavailable), so turned-away
 * clients spread out (K13). Every error on the queue page's route
 * (GET/HEAD /q/{queue}) is rendered as the page itself, the JSON code in
 * data-error (reply_page_error): a browser never gets JSON there.
 */
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "http/api_internal.h"
#include "core/origin.h"
#include "base/clock.h"
#include "http/http.h"
#include "base/log.h"
#include "http/page.h"
#include "core/queue.h"

/* Label strings of the request counter, built once per (route, status):
 * the hot path does no formatting. Statuses outside the table are
 * formatted on the spot. */
static const int label_statuses[WR_API__N_LABEL_STATUSES] = {200, 204, 400, 401, 403, 404,
                                                             405, 408, 413, 429, 500, 503};

/* Counts the answer in waitroom_http_requests_total. */
static void count(wr_api_t *a, wr_route_t route, int status)
{
    if (!a->metrics)
        return;
    char l[96];
    size_t i = 0;
    while (i < WR_API__N_LABEL_STATUSES && label_statuses[i] != status)
        i++;
    if ((unsigned)route < WR_ROUTE_COUNT && i < WR_API__N_LABEL_STATUSES) {
        char *slot = a->request_labels[route][i];
        if (!slot[0])
            snprintf(slot, sizeof(a->request_labels[0][0]), "route=\"%s\",status=\"%d\"",
                     wr_router_route_name(route), status);
        wr_metrics_inc_ref(a->metrics, &a->request_refs[route][i], "waitroom_http_requests_total",
                           slot, 1);
        return;
    }
    snprintf(l, sizeof(l), "route=\"%s\",status=\"%d\"", wr_router_route_name(route), status);
    wr_metrics_inc(a->metrics, "waitroom_http_requests_total", l, 1);
}

/* The client address (api_internal.h): moved here from api_entries.c so
 * the access log shares it with the join limit. */
void wr_api__client_addr(wr_api_t *a, wr_http_req_t *req, char *out, size_t cap)
{
    const char *peer = wr_http_req_peer(req, NULL);
    /* Several X-Forwarded-For lines are one list, in order (RFC 9110 5.3):
     * a proxy that appends its own line leaves the address it saw in the
     * last one, so the first line alone would be the client's own claim.
     * The lines fit the 8 KiB header limit; if not, the last line is used. */
    char xff[8192];
    size_t used = 0;
    const char *last = NULL;
    bool fits = true;
    size_t it = 0;
    for (const char *v; (v = wr_http_req_header_next(req, "X-Forwarded-For", &it));) {
        last = v;
        size_t n = strlen(v);
        if (used + n + 3 > sizeof(xff)) {
            fits = false;
            continue;
        }
        if (used) {
            memcpy(xff + used, ", ", 2);
            used += 2;
        }
        memcpy(xff + used, v, n);
        used += n;
    }
    xff[used] = '\0';
    wr_ratelimit_client_addr(peer,
                             !last  ? NULL
                             : fits ? xff
                                    : last,
                             a->cfg->trusted_proxies, a->cfg->n_trusted_proxies, out, cap);
}

/* ---------- request records: duration and access log ---------- */

static const char *method_name(wr_http_req_t *req)
{
    return wr_http_req_method(req) == WR_HTTP_M_OTHER ? "OTHER" : wr_http_req_method_name(req);
}

/* Observes the duration and writes the access-log line of rec, which
 * started at start_us, for queue ("" = none). */
static void record_write(wr_api_t *a, const wr_api__record_t *rec, int64_t start_us,
                         const char *queue)
{
    int64_t us = rec->done_us - start_us;
    if (us < 0)
        us = 0;
    if (a->metrics && (unsigned)rec->route < WR_ROUTE_COUNT) {
        char *l = a->duration_labels[rec->route];
        if (!l[0])
            snprintf(l, sizeof(a->duration_labels[0]), "route=\"%s\"",
                     wr_router_route_name(rec->route));
        wr_metrics_observe_ref(a->metrics, &a->duration_refs[rec->route],
                               "waitroom_http_request_duration_seconds", l, (double)us / 1e6);
    }
    if (!wr_log_access_enabled())
        return;
    wr_log_field_t f[] = {
        WR_LOG_S("client", rec->client),
        WR_LOG_S("method", rec->method),
        WR_LOG_S("route", wr_router_route_name(rec->route)),
        WR_LOG_S("queue", queue && queue[0] ? queue : NULL),
        WR_LOG_I("status", rec->status),
        WR_LOG_I("duration_us", us),
        WR_LOG_I("bytes", rec->bytes),
    };
    wr_log_access(f, sizeof(f) / sizeof(f[0]));
}

/* Before sending: what the record needs from req (which may be freed by
 * the send). */
static void record_begin(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                         wr_api__record_t *rec)
{
    count(a, route, status);
    rec->req = req;
    rec->route = route;
    rec->status = status;
    rec->bytes = 0;
    wr_api__copy(rec->method, sizeof(rec->method), method_name(req));
    rec->client[0] = '\0';
    if (wr_log_access_enabled())
        wr_api__client_addr(a, req, rec->client, sizeof(rec->client));
}

/* After sending bytes of body: the record is written now when handle() is
 * still dispatching the request, else kept until the request's context is
 * freed (wr_api__ctx_free, right after a reply from a store callback),
 * which knows when the request started and its queue. req is only
 * compared, never used: the send may have freed it. */
static void record_end(wr_api_t *a, wr_api__record_t *rec, size_t bytes)
{
    rec->bytes = strcmp(rec->method, "HEAD") == 0 ? 0 : bytes;
    rec->done_us = wr_clock_wall_us();
    if (rec->req == a->cur_req) {
        record_write(a, rec, a->cur_start_us, a->cur_queue);
        return;
    }
    if (a->pending.req) /* never: a reply from a callback is followed by its ctx_free */
        record_write(a, &a->pending, a->pending.done_us, NULL);
    a->pending = *rec;
}

void wr_api__count_request(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                           size_t bytes)
{
    wr_api__record_t rec;
    record_begin(a, req, route, status, &rec);
    record_end(a, &rec, bytes);
}

void wr_api__reply_json(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                        const char *body, size_t len, int retry_after)
{
    wr_api__record_t rec;
    record_begin(a, req, route, status, &rec);
    wr_http_reply_json(req, status, body, len, retry_after);
    record_end(a, &rec, len);
}

void wr_api__reply_csv(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *filename,
                       const char *body, size_t len)
{
    wr_api__record_t rec;
    record_begin(a, req, route, 200, &rec);
    char cd[160];
    snprintf(cd, sizeof cd, "attachment; filename=\"%s\"", filename);
    wr_http_req_add_header(req, "Content-Type", "text/csv; charset=utf-8");
    wr_http_req_add_header(req, "Content-Disposition", cd);
    wr_http_req_add_header(req, "Cache-Control", "no-store");
    wr_http_send(req, 200, body, len, false);
    record_end(a, &rec, len);
}

/* The queue page's state for an error answered on its route (page.h). */
static const char *page_state_of(const char *code)
{
    static const struct {
        const char *code, *state;
    } map[] = {{"STORE_UNAVAILABLE", "unavailable"},
               {"QUEUE_FULL", "full"},
               {"QUEUE_NOT_FOUND", "notfound"},
               {"INVITE_REQUIRED", "invite"},
               {"CODE_INVALID", "code"}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(code, map[i].code) == 0)
            return map[i].state;
    return "error";
}

/* An error on the queue page's route (GET/HEAD /q/{queue}): the HTML page
 * with the JSON error code in it (data-error, and the status sentence),
 * Retry-After as the JSON answer would have it. A browser never sees JSON
 * there; the /v1 routes stay JSON. */
static void reply_page_error(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                             const char *code, const char *reason, int retry_after)
{
    wr_page_view_t v;
    memset(&v, 0, sizeof(v));
    v.state = page_state_of(code);
    v.error = code;
    v.reason = reason;
    v.eta_seconds = -1;
    v.target_url = "";
    v.retry_after_ms = retry_after > 0 ? (uint32_t)retry_after * 1000u : 0;
    v.queue = req == a->cur_req ? a->cur_queue : "";
    v.web = a->web;
    v.lang = wr_page_lang(a->web, wr_http_req_header(req, "Accept-Language"), NULL);
    if (retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%d", retry_after);
        wr_http_req_add_header(req, "Retry-After", ra);
    }
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    if (!html) { /* no memory for the page: the JSON answer, as before */
        wr_api__record_t rec;
        record_begin(a, req, route, 500, &rec);
        record_end(a, &rec,
                   wr_http_reply_error(req, 500, "INTERNAL", "out of memory", NULL, NULL, 0));
        return;
    }
    wr_api__reply_html(a, req, route, status, html, len);
}

void wr_api__reply_error(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                         const char *code, const char *message, const char *field,
                         const char *reason, int retry_after)
{
    if (route == WR_ROUTE_QUEUE_PAGE) {
        reply_page_error(a, req, route, status, code, reason, retry_after);
        return;
    }
    wr_api__record_t rec;
    record_begin(a, req, route, status, &rec);
    size_t n = wr_http_reply_error(req, status, code, message, field, reason, retry_after);
    record_end(a, &rec, n);
}

void wr_api__reply_empty(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status)
{
    wr_api__record_t rec;
    record_begin(a, req, route, status, &rec);
    wr_http_reply_empty(req, status);
    record_end(a, &rec, 0);
}

void wr_api__reply_jansson(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status, json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(o);
    if (!s) {
        wr_api__reply_oom(a, req, route);
        return;
    }
    wr_api__reply_json(a, req, route, status, s, strlen(s), 0);
    free(s);
}

void wr_api__reply_oom(wr_api_t *a, wr_http_req_t *req, wr_route_t route)
{
    wr_api__reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
}

wr_api__ctx_t *wr_api__ctx_new(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *queue)
{
    wr_api__ctx_t *c = wr_freelist_take(&a->free_ctx);
    if (!c) {
        wr_api__reply_oom(a, req, route);
        return NULL;
    }
    c->api = a;
    c->req = req;
    c->route = route;
    c->op = wr_router_route_name(route);
    if (queue)
        wr_api__copy(c->queue, sizeof(c->queue), queue);
    /* made while its request is dispatched (nearly always): the
     * dispatch's start is the store call's start too, microseconds apart */
    c->t0_us = req == a->cur_req ? a->cur_start_us : wr_clock_wall_us();
    c->start_us = c->t0_us;
    a->in_flight++;
    return c;
}

void wr_api__ctx_free(wr_api__ctx_t *c)
{
    wr_api_t *a = c->api;
    if (a->pending.req && a->pending.req == c->req) {
        record_write(a, &a->pending, c->start_us, c->queue);
        a->pending.req = NULL;
    }
    a->in_flight--;
    json_decref(c->body);
    wr_scheduler_release(c->sq);
    wr_freelist_give(&a->free_ctx, c);
}

wr_scheduler_queue_t *wr_api__held(wr_api__ctx_t *c, const wr_queue_config_t *cfg)
{
    return wr_scheduler_hold(c->api->sched, &c->sq, c->queue, cfg);
}

const wr_queue_config_t *wr_api__held_config(wr_api__ctx_t *c)
{
    return wr_scheduler_queue_config(wr_api__held(c, NULL));
}

/* ---------- the error table ---------- */

/* The domain answers of the store, told as themselves where a caller tells
 * them (WR_API__TELLS_* in api_internal.h), with the page state the queue
 * page shows. A full line's Retry-After is the queue's own slowest poll
 * band, which the callers give (wr_api__full_retry_after_s). */
static const wr_api__answer_t answers[] = {
    {WR_ENOTFOUND, 404, "QUEUE_NOT_FOUND", "no such queue", 0, "notfound"},
    {WR_ENOTINQUEUE, 404, "NOT_IN_QUEUE", "not waiting and holding no live token", 0, NULL},
    {WR_EFULL, 429, "QUEUE_FULL", "the line is full", 0, "full"},
    {WR_ETOKEN, 403, "INVALID_TOKEN", "the token is not valid", 0, NULL},
    /* a presale code refused (API 1.3): the reason is the entry's */
    {WR_ECODE, 403, "CODE_INVALID", "the code is not valid for this queue", 0, "code"},
};

/* Everything else: the store failed (or did not answer in time). */
static const wr_api__answer_t unavailable = {
    WR_OK, 503, "STORE_UNAVAILABLE", NULL, WR_API__RETRY_AFTER_UNAVAILABLE_MIN_S, "unavailable"};

int wr_api__retry_after_unavailable(wr_api_t *a)
{
    const int span = WR_API__RETRY_AFTER_UNAVAILABLE_MAX_S - WR_API__RETRY_AFTER_UNAVAILABLE_MIN_S;
    return WR_API__RETRY_AFTER_UNAVAILABLE_MIN_S + (int)(wr_rng_next(&a->rng) % (span + 1));
}

int wr_api__answer_retry_s(wr_api_t *a, const wr_api__answer_t *ans)
{
    return ans == &unavailable ? wr_api__retry_after_unavailable(a) : ans->retry_after_s;
}

static const wr_api__answer_t *find_answer(wr_err_t err)
{
    for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++)
        if (answers[i].err == err)
            return &answers[i];
    return NULL;
}

bool wr_api__tells(wr_err_t err, unsigned tells)
{
    return (unsigned)err < 32 && (tells & WR_API__TELL(err)) && find_answer(err);
}

const wr_api__answer_t *wr_api__answer(wr_err_t err, unsigned tells)
{
    return wr_api__tells(err, tells) ? find_answer(err) : &unavailable;
}

void wr_api__reply_answer(wr_api_t *a, wr_http_req_t *req, wr_route_t route, wr_err_t err,
                          unsigned tells, const char *reason, int retry_after_s)
{
    const wr_api__answer_t *ans = wr_api__answer(err, tells);
    wr_api__reply_error(a, req, route, ans->status, ans->code,
                        ans->message ? ans->message : wr_strerror(err), NULL, reason,
                        retry_after_s > 0 ? retry_after_s : wr_api__answer_retry_s(a, ans));
}

const char *wr_api__code_reason(wr_err_t err, const wr_entry_t *e)
{
    if (err != WR_ECODE)
        return NULL;
    return wr_groups_code_reason_name(e ? e->code_reason : WR_CODE_UNKNOWN);
}

void wr_api__reply_store_error(wr_api__ctx_t *c, wr_err_t err, unsigned tells)
{
    wr_api__reply_answer(c->api, c->req, c->route, err, tells, NULL, 0);
}

void wr_api__reply_unavailable(wr_api_t *a, wr_http_req_t *req, wr_route_t route, wr_err_t err)
{
    wr_api__reply_answer(a, req, route, err, WR_API__TELLS_NONE, NULL, 0);
}

/* ---------- store latency and errors ---------- */

/* Records the store latency of c's operation. */
void wr_api__observe(wr_api__ctx_t *c, wr_err_t err)
{
    wr_api_t *a = c->api;
    if (!a->metrics)
        return;
    /* the op's label and remembered series (a literal's address names it) */
    const size_t n_refs = sizeof(a->latency_refs) / sizeof(a->latency_refs[0]);
    size_t k = 0;
    while (k < n_refs && a->latency_refs[k].op != c->op)
        k++;
    if (k == n_refs) {
        k = a->latency_next++ % n_refs;
        a->latency_refs[k].op = c->op;
        memset(&a->latency_refs[k].ref, 0, sizeof(a->latency_refs[k].ref));
        char *l = a->latency_refs[k].label;
        memcpy(l, "op=\"", 4);
        wr_api__copy(l + 4, sizeof(a->latency_refs[k].label) - 5, c->op);
        strcat(l, "\"");
    }
    wr_metrics_observe_ref(a->metrics, &a->latency_refs[k].ref, "waitroom_store_latency_seconds",
                           a->latency_refs[k].label, (double)(wr_clock_wall_us() - c->t0_us) / 1e6);
    if (err != WR_OK && !find_answer(err)) {
        char l[64];
        snprintf(l, sizeof(l), "op=\"%s\",error=\"%s\"", c->op, wr_errname(err));
        wr_metrics_inc(a->metrics, "waitroom_store_errors_total", l, 1);
    }
    if (err == WR_OK && c->queue[0] && strcmp(c->op, "join") == 0) {
        char q[WR_QUEUE_NAME_MAX + 16];
        snprintf(q, sizeof(q), "queue=\"%s\"", c->queue);
        wr_metrics_inc(a->metrics, "waitroom_joins_total", q, 1);
    }
}

/* The headers of every HTML page (GET and HEAD alike). img_origin: an
 * origin images may also come from (the queue's page.logoUrl's), or NULL;
 * it is canonical (origin.h), so it holds no ';', space or quote.
 * captcha: the sources of the queue's CAPTCHA provider (core/captcha.h,
 * plain origins), added to script-src and frame-src and, as dirs says, to
 * style-src and connect-src; NULL or "" = none. */
static void html_headers(wr_http_req_t *req, const char *img_origin, const char *captcha,
                         unsigned dirs)
{
    wr_http_req_add_header(req, "Content-Type", "text/html; charset=utf-8");
    wr_http_req_add_header(req, "Cache-Control", "no-store");
    wr_http_req_add_header(req, "X-Content-Type-Options", "nosniff");
    /* the page's address may carry ?invite= or ?code= (API 1.3, "Groups,
     * precisely"): never sent on to the logo's or a provider's origin */
    wr_http_req_add_header(req, "Referrer-Policy", "no-referrer");
    char csp[WR_ORIGIN_MAX + 4 * WR_CAPTCHA_CSP_MAX + 256];
    const char *cs = captcha && captcha[0] ? captcha : NULL;
    const char *sp = cs ? " " : "";
    const char *c = cs ? cs : "";
    bool style = cs && (dirs & WR_CAPTCHA_CSP_STYLE), conn = cs && (dirs & WR_CAPTCHA_CSP_CONNECT);
    char frame[WR_CAPTCHA_CSP_MAX + 32] = "";
    if (cs)
        snprintf(frame, sizeof(frame), "; frame-src 'self' %s", cs);
    snprintf(csp, sizeof(csp),
             "default-src 'self'; img-src 'self' data:%s%s; style-src 'self'%s%s; "
             "script-src 'self'%s%s; connect-src 'self'%s%s%s; frame-ancestors 'none'",
             img_origin && img_origin[0] ? " " : "", img_origin ? img_origin : "", style ? " " : "",
             style ? c : "", sp, c, conn ? " " : "", conn ? c : "", frame);
    wr_http_req_add_header(req, "Content-Security-Policy", csp);
}

void wr_api__reply_html_head(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status)
{
    html_headers(req, NULL, NULL, 0);
    wr_api__record_t rec;
    record_begin(a, req, route, status, &rec);
    wr_http_send(req, status, NULL, 0, false);
    record_end(a, &rec, 0);
}

void wr_api__reply_page(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status, char *html,
                        size_t len, const char *img_origin, const char *captcha, unsigned dirs)
{
    if (!html) {
        wr_api__reply_oom(a, req, route);
        return;
    }
    html_headers(req, img_origin, captcha, dirs);
    wr_api__record_t rec;
    record_begin(a, req, route, status, &rec);
    wr_http_send(req, status, html, len, false);
    record_end(a, &rec, len);
    free(html);
}

void wr_api__reply_html(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status, char *html,
                        size_t len)
{
    wr_api__reply_page(a, req, route, status, html, len, NULL, NULL, 0);
}

int wr_api__full_retry_after_s(const wr_queue_config_t *cfg)
{
    int s = (int)((wr_queue_slowest_band_ms(cfg) + 999) / 1000);
    return s < 1 ? 1 : s;
}

void wr_api__done_cb(wr_err_t err, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK)
        wr_api__reply_empty(c->api, c->req, c->route, 204);
    else
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
    wr_api__ctx_free(c);
}

/* ---------- degraded mode ---------- */

bool wr_api__store_unreachable(wr_err_t err)
{
    return err == WR_EUNAVAILABLE || err == WR_ETIMEOUT || err == WR_ESHARD;
}

void wr_api__count_fail_open(wr_api_t *a, const char *name, const char *queue)
{
    if (!a->metrics)
        return;
    char l[WR_QUEUE_NAME_MAX + 16];
    snprintf(l, sizeof(l), "queue=\"%s\"", queue);
    wr_metrics_inc(a->metrics, name, l, 1);
}

/* The dotted path of the object keys ("stock", "autotune.minPerSecond")
 * around byte pos of the JSON text d (n bytes), for a number jansson
 * refuses to hold (an integer beyond int64, a real beyond double): that is
 * a value out of range, which names its field (API.md 1.2), not a body
 * that is not JSON. Writes "" when pos is in no object member. Bounded:
 * keys past WR_FIELD_MAX bytes are cut, nesting past 8 levels ignored. */
static void key_path_at(const char *d, size_t n, size_t pos, char *out, size_t cap)
{
    enum { DEPTH = 8 };
    char keys[DEPTH][WR_FIELD_MAX + 1];
    bool obj[DEPTH];
    size_t depth = 0;
    char last[WR_FIELD_MAX + 1] = "";
    for (size_t i = 0; i < n && i < pos; i++) {
        char ch = d[i];
        if (ch == '"') {
            size_t k = 0;
            for (i++; i < n && d[i] != '"'; i++) {
                if (d[i] == '\\' && i + 1 < n)
                    i++;
                if (k < WR_FIELD_MAX)
                    last[k++] = d[i];
            }
            last[k] = '\0';
            size_t j = i + 1;
            while (j < n && (d[j] == ' ' || d[j] == '\t' || d[j] == '\r' || d[j] == '\n'))
                j++;
            if (j < n && d[j] == ':' && depth > 0 && depth <= DEPTH && obj[depth - 1])
                memcpy(keys[depth - 1], last, sizeof(last));
        } else if (ch == '{' || ch == '[') {
            if (depth < DEPTH) {
                obj[depth] = ch == '{';
                keys[depth][0] = '\0';
            }
            depth++;
        } else if ((ch == '}' || ch == ']') && depth > 0) {
            depth--;
        }
    }
    size_t at = 0;
    out[0] = '\0';
    for (size_t l = 0; l < depth && l < DEPTH; l++) {
        if (!obj[l] || !keys[l][0])
            continue;
        int w = snprintf(out + at, cap - at, "%s%s", at ? "." : "", keys[l]);
        if (w < 0 || (size_t)w >= cap - at) {
            out[at] = '\0';
            return;
        }
        at += (size_t)w;
    }
}

/* True for jansson's errors of a number it cannot hold. */
static bool too_big_number(const json_error_t *e)
{
    return strncmp(e->text, "too big integer", 15) == 0 ||
           strncmp(e->text, "too big negative integer", 24) == 0 ||
           strncmp(e->text, "real number overflow", 20) == 0;
}

static bool number_char(char ch)
{
    return (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' || ch == 'e' ||
           ch == 'E';
}

/* True when the JSON text d (n bytes) is an object once every number
 * jansson cannot hold is read as 0 (at most 16 of them): such a body is
 * JSON with a value out of range (INVALID_CONFIG), any other fault makes
 * it a body that is not JSON (BAD_REQUEST). Works on a copy. */
static bool json_but_for_numbers(const char *d, size_t n)
{
    char *t = malloc(n ? n : 1);
    if (!t)
        return false;
    memcpy(t, d, n);
    bool ok = false;
    for (int round = 0; round < 16; round++) {
        json_error_t e;
        json_t *j = wr_api__load_body(t, n, &e);
        if (j) {
            ok = json_is_object(j);
            json_decref(j);
            break;
        }
        if (!too_big_number(&e))
            break;
        /* the number token at (or just before) the error's position */
        size_t pos = (size_t)e.position < n ? (size_t)e.position : n;
        size_t start = pos;
        while (start > 0 && number_char(t[start - 1]))
            start--;
        size_t end = start;
        while (end < n && number_char(t[end]))
            end++;
        if (end == start)
            break;
        t[start] = '0';
        memset(t + start + 1, ' ', end - start - 1);
    }
    free(t);
    return ok;
}

bool wr_api__body_number_field(const char *data, size_t len, const json_error_t *err, char *field,
                               size_t cap)
{
    field[0] = '\0';
    if (!data || !too_big_number(err) || !json_but_for_numbers(data, len))
        return false;
    key_path_at(data, len, (size_t)err->position, field, cap);
    return field[0] != '\0';
}

json_t *wr_api__load_body(const char *data, size_t len, json_error_t *err)
{
    if (!data || memchr(data, '\0', len)) {
        snprintf(err->text, sizeof(err->text), "a NUL byte in the body");
        return NULL;
    }
    json_t *j = json_loadb(data, len, JSON_REJECT_DUPLICATES, err);
    if (!j && strstr(err->text, "JSON_ALLOW_NUL")) /* jansson's flag is not the client's word */
        snprintf(err->text, sizeof(err->text), "\\u0000 (a NUL character) in a string");
    return j;
}
