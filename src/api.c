/*
 * api.c - the route handlers of waitroomd (contexts and replies: api_reply.c).
 *
 * Flow of a request: route (router.c) -> validate the queue name -> check
 * the body against the route's limit -> identity (cookie or header) -> one
 * store operation -> reply. Nothing changes state before all validation has
 * passed, so an error never changes state.
 *
 * Route families: join/status/leave and the queue page, with the abuse
 * controls (join limit, poll pacing), in api_entries.c; consume and verify
 * in api_tokens.c. A separate admin listener, when configured, is the only
 * one that serves the admin API.
 *
 * Keys: tokens are signed with the current secret and its kid, verified
 * against current + previous (rotation); visitor cookies likewise.
 */
#include "api.h"

#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <math.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "http.h"
#include "identity.h"
#include "log.h"
#include "page.h"
#include "queue.h"
#include "ratelimit.h"
#include "router.h"
#include "token.h"

#include "api_internal.h"

/* ---------- admin ---------- */

static bool admin_ok(wr_api_t *a, struct evhttp_request *req)
{
    if (!a->admin_enabled)
        return false;
    const char *tok;
    size_t len;
    if (!wr_api__bearer(evhttp_request_get_input_headers(req), &tok, &len))
        return false;
    uint8_t mac[32];
    if (wr_token_hmac_sha256(a->admin_mac_key, sizeof(a->admin_mac_key), tok, len, mac) != WR_OK)
        return false;
    return CRYPTO_memcmp(mac, a->admin_mac, 32) == 0;
}

static json_t *stats_json(wr_api_t *a, const char *queue, const wr_queue_stats_t *st)
{
    double obs = wr_scheduler_observed_rate(a->sched, queue);
    if (obs < 0)
        obs = 0;
    return json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}", "waiting", (json_int_t)st->waiting, "active",
        (json_int_t)st->active, "admittedTotal", (json_int_t)st->admitted_total, "consumedTotal",
        (json_int_t)st->consumed_total, "expiredTotal", (json_int_t)st->expired_total, "leftTotal",
        (json_int_t)st->left_total, "rejectedFullTotal", (json_int_t)st->rejected_full_total,
        "admitRateObserved", round(obs * 100) / 100);
}

static json_t *info_json(wr_api_t *a, const wr_queue_info_t *info)
{
    return json_pack("{s:s,s:o,s:o}", "name", info->name, "config",
                     wr_qconfig_to_json(info->config), "stats",
                     stats_json(a, info->name, &info->stats));
}

static void admin_get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && info) {
        wr_scheduler_note(c->api->sched, c->queue, info->config);
        wr_api__reply_jansson(c->api, c->req, c->route, 200, info_json(c->api, info));
    } else {
        wr_api__reply_store_error(c, err);
    }
    wr_api__ctx_free(c);
}

static void admin_list_cb(wr_err_t err, const wr_queue_info_t *infos, size_t n, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err != WR_OK) {
        wr_api__reply_store_error(c, err);
        wr_api__ctx_free(c);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        json_array_append_new(arr, info_json(c->api, &infos[i]));
    wr_api__reply_jansson(c->api, c->req, c->route, 200, json_pack("{s:o}", "queues", arr));
    wr_api__ctx_free(c);
}

typedef struct {
    wr_api__ctx_t *c;
    wr_queue_config_t cfg;
} put_t;

static void admin_put_cb(wr_err_t err, void *arg)
{
    put_t *p = arg;
    wr_api__ctx_t *c = p->c;
    wr_api__observe(c, err);
    if (err == WR_OK) {
        wr_scheduler_set_config(c->api->sched, c->queue, &p->cfg);
        wr_api__reply_jansson(c->api, c->req, c->route, 200, wr_qconfig_to_json(&p->cfg));
    } else {
        wr_api__reply_store_error(c, err);
    }
    wr_api__ctx_free(c);
    free(p);
}

static void do_put(wr_api__ctx_t *c, const wr_queue_config_t *cfg)
{
    put_t *p = calloc(1, sizeof(*p));
    if (!p) {
        wr_api__reply_error(c->api, c->req, c->route, 500, "INTERNAL", "out of memory", NULL, NULL,
                            0);
        wr_api__ctx_free(c);
        return;
    }
    p->c = c;
    p->cfg = *cfg;
    c->op = "config_put";
    c->t0_us = wr_api__now_us();
    wr_err_t err = wr_store_config_put(c->api->store, c->queue, &p->cfg, admin_put_cb, p);
    if (err != WR_OK) {
        wr_api__reply_unavailable(c->api, c->req, c->route, err);
        wr_api__ctx_free(c);
        free(p);
    }
}

static void admin_patch_get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err != WR_OK || !info) {
        wr_api__reply_store_error(c, err);
        wr_api__ctx_free(c);
        return;
    }
    wr_queue_config_t cfg;
    char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
    if (wr_qconfig_patch(info->config, c->body, &cfg, field, sizeof(field), msg, sizeof(msg)) !=
        WR_OK) {
        wr_api__reply_error(c->api, c->req, c->route, 400, "INVALID_CONFIG", msg, field, NULL, 0);
        wr_api__ctx_free(c);
        return;
    }
    do_put(c, &cfg);
}

static void handle_admin(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                         const char *queue)
{
    if (!admin_ok(a, req)) {
        wr_api__reply_error(a, req, route, 401, "UNAUTHORIZED", "admin key required (Bearer)", NULL,
                            NULL, 0);
        return;
    }
    json_t *body = NULL;
    if (route == WR_ROUTE_ADMIN_PUT || route == WR_ROUTE_ADMIN_PATCH) {
        struct evbuffer *in = evhttp_request_get_input_buffer(req);
        size_t blen = evbuffer_get_length(in);
        const char *data = blen ? (const char *)evbuffer_pullup(in, -1) : NULL;
        json_error_t jerr;
        body = data ? json_loadb(data, blen, 0, &jerr) : NULL;
        if (!json_is_object(body)) {
            json_decref(body);
            wr_api__reply_error(a, req, route, 400, "BAD_REQUEST", "body must be a JSON object",
                                NULL, NULL, 0);
            return;
        }
    }
    if (route == WR_ROUTE_ADMIN_PUT) {
        wr_queue_config_t cfg;
        char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
        wr_err_t err = wr_qconfig_parse(body, &cfg, field, sizeof(field), msg, sizeof(msg));
        json_decref(body);
        if (err != WR_OK) {
            wr_api__reply_error(a, req, route, 400, "INVALID_CONFIG", msg, field, NULL, 0);
            return;
        }
        wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
        if (!c) {
            wr_api__reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
            return;
        }
        do_put(c, &cfg);
        return;
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c) {
        json_decref(body);
        wr_api__reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    c->body = body;
    wr_err_t err;
    switch (route) {
    case WR_ROUTE_ADMIN_PATCH:
        c->op = "queue_get";
        err = wr_store_queue_get(a->store, queue, admin_patch_get_cb, c);
        break;
    case WR_ROUTE_ADMIN_GET:
        c->op = "queue_get";
        err = wr_store_queue_get(a->store, queue, admin_get_cb, c);
        break;
    case WR_ROUTE_ADMIN_DELETE:
        c->op = "queue_delete";
        err = wr_store_queue_delete(a->store, queue, wr_api__done_cb, c);
        if (err == WR_OK)
            wr_scheduler_forget(a->sched, queue);
        break;
    case WR_ROUTE_ADMIN_LIST:
    default:
        c->op = "queue_list";
        err = wr_store_queue_list(a->store, admin_list_cb, c);
        break;
    }
    if (err != WR_OK) {
        wr_api__reply_unavailable(a, req, route, err);
        wr_api__ctx_free(c);
    }
}

/* ---------- operations ---------- */

static void ready_cb(wr_err_t err, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && wr_api_has_secret(c->api)) {
        static const char body[] = "{\"status\":\"ready\"}";
        wr_api__reply_json(c->api, c->req, c->route, 200, body, sizeof(body) - 1, 0);
    } else {
        wr_api__reply_unavailable(c->api, c->req, c->route, err == WR_OK ? WR_EUNAVAILABLE : err);
    }
    wr_api__ctx_free(c);
}

static void handle_metrics(wr_api_t *a, struct evhttp_request *req)
{
    if (!a->metrics) {
        wr_api__reply_error(a, req, WR_ROUTE_METRICS, 404, "NOT_FOUND", "metrics disabled", NULL,
                            NULL, 0);
        return;
    }
    wr_metrics_set(a->metrics, "waitroom_http_in_flight", NULL, (double)a->in_flight);
    wr_metrics_set(a->metrics, "waitroom_rate_limit_tracked", "kind=\"join\"",
                   (double)wr_ratelimit_size(a->join_rl));
    wr_metrics_set(a->metrics, "waitroom_rate_limit_tracked", "kind=\"poll\"",
                   (double)wr_ratelimit_size(a->poll_rl));
    wr_metrics_set(a->metrics, "waitroom_rate_limit_evictions_total", "kind=\"join\"",
                   (double)wr_ratelimit_evictions(a->join_rl));
    wr_metrics_set(a->metrics, "waitroom_rate_limit_evictions_total", "kind=\"poll\"",
                   (double)wr_ratelimit_evictions(a->poll_rl));
    wr_api__count_request(a, WR_ROUTE_METRICS, 200);
    size_t len = 0;
    char *text = wr_metrics_render(a->metrics, &len);
    if (!text) {
        wr_http_reply_error(req, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    evhttp_add_header(oh, "Cache-Control", "no-store");
    wr_http_send(req, 200, text, len, false);
    free(text);
}

/* ---------- static assets ---------- */

static void handle_static(wr_api_t *a, struct evhttp_request *req, const char *name,
                          size_t name_len)
{
    char file[128];
    size_t len = 0;
    const char *ctype = NULL;
    const unsigned char *data = NULL;
    if (name_len < sizeof(file)) {
        memcpy(file, name, name_len);
        file[name_len] = 0;
        data = wr_page_asset(file, &len, &ctype);
    }
    if (!data) {
        wr_api__reply_error(a, req, WR_ROUTE_STATIC, 404, "NOT_FOUND", "no such asset", NULL, NULL,
                            0);
        return;
    }
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Content-Type", ctype);
    evhttp_add_header(oh, "Cache-Control", "public, max-age=300");
    evhttp_add_header(oh, "X-Content-Type-Options", "nosniff");
    wr_api__count_request(a, WR_ROUTE_STATIC, 200);
    wr_http_send(req, 200, data, len, true);
}

/* ---------- dispatch ---------- */

static wr_method_t method_of(struct evhttp_request *req)
{
    switch (evhttp_request_get_command(req)) {
    case EVHTTP_REQ_GET:
        return WR_METHOD_GET;
    case EVHTTP_REQ_POST:
        return WR_METHOD_POST;
    case EVHTTP_REQ_PUT:
        return WR_METHOD_PUT;
    case EVHTTP_REQ_PATCH:
        return WR_METHOD_PATCH;
    case EVHTTP_REQ_DELETE:
        return WR_METHOD_DELETE;
    case EVHTTP_REQ_HEAD:
        return WR_METHOD_HEAD;
    default:
        return WR_METHOD_OTHER;
    }
}

static bool is_admin_route(wr_route_t r)
{
    return r == WR_ROUTE_ADMIN_PUT || r == WR_ROUTE_ADMIN_PATCH || r == WR_ROUTE_ADMIN_GET ||
           r == WR_ROUTE_ADMIN_DELETE || r == WR_ROUTE_ADMIN_LIST;
}

static void handle(wr_api_t *a, struct evhttp_request *req, bool admin_listener);

void wr_api_handle(struct evhttp_request *req, void *arg)
{
    handle(arg, req, false);
}

void wr_api_handle_admin(struct evhttp_request *req, void *arg)
{
    handle(arg, req, true);
}

static void handle(wr_api_t *a, struct evhttp_request *req, bool admin_listener)
{
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    if (!path) {
        wr_api__reply_error(a, req, WR_ROUTE_NONE, 400, "BAD_REQUEST", "bad request line", NULL,
                            NULL, 0);
        return;
    }
    wr_route_match_t m = wr_router_match(method_of(req), path, strlen(path));
    if (m.route == WR_ROUTE_NONE) {
        if (m.allowed) {
            char allow[64];
            wr_router_allow_header(m.allowed, allow, sizeof(allow));
            evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
            wr_api__reply_error(a, req, WR_ROUTE_NONE, 405, "METHOD_NOT_ALLOWED",
                                "method not allowed on this path", NULL, NULL, 0);
        } else {
            wr_api__reply_error(a, req, WR_ROUTE_NONE, 404, "NOT_FOUND", "no such route", NULL,
                                NULL, 0);
        }
        return;
    }
    wr_route_t route = m.route;

    /* With a separate admin listener, the public one does not know the
     * admin API or the dashboard. */
    if (a->admin_separate && !admin_listener &&
        (is_admin_route(route) || route == WR_ROUTE_DASHBOARD)) {
        wr_api__reply_error(a, req, WR_ROUTE_NONE, 404, "NOT_FOUND", "no such route", NULL, NULL,
                            0);
        return;
    }

    /* The {queue} segment: percent-decoded, then validated. */
    char queue[WR_QUEUE_NAME_MAX + 1] = "";
    bool has_queue = m.param && route != WR_ROUTE_STATIC;
    if (has_queue) {
        bool ok = m.param_len <= 3 * WR_QUEUE_NAME_MAX;
        char raw[3 * WR_QUEUE_NAME_MAX + 1];
        if (ok) {
            memcpy(raw, m.param, m.param_len);
            raw[m.param_len] = 0;
            size_t dlen = 0;
            char *dec = evhttp_uridecode(raw, 0, &dlen);
            ok = dec && dlen == strlen(dec) && dlen <= WR_QUEUE_NAME_MAX &&
                 wr_qconfig_valid_queue_name(dec);
            if (ok)
                snprintf(queue, sizeof(queue), "%s", dec);
            free(dec);
        }
        if (!ok) {
            wr_api__reply_error(a, req, route, 400, "INVALID_QUEUE_NAME",
                                "queue names match [A-Za-z0-9_-]{1,64}", NULL, NULL, 0);
            return;
        }
    }

    /* Body limits: 4 KiB on user and token routes, 64 KiB on admin routes
     * (the server-wide cap). */
    size_t blen = evbuffer_get_length(evhttp_request_get_input_buffer(req));
    size_t limit = is_admin_route(route) ? WR_HTTP_MAX_BODY_ADMIN : WR_HTTP_MAX_BODY_USER;
    if (blen > limit) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
        wr_api__reply_error(a, req, route, 413, "PAYLOAD_TOO_LARGE", "request body too large", NULL,
                            NULL, 0);
        return;
    }

    switch (route) {
    case WR_ROUTE_JOIN:
    case WR_ROUTE_STATUS:
    case WR_ROUTE_LEAVE:
    case WR_ROUTE_CONSUME:
    case WR_ROUTE_VERIFY:
        if (!wr_api_has_secret(a)) {
            wr_api__reply_error(a, req, route, 503, "STORE_UNAVAILABLE",
                                "the token secret is not loaded from the store yet", NULL, NULL,
                                WR_API__RETRY_AFTER_UNAVAILABLE_S);
            return;
        }
        if (route == WR_ROUTE_CONSUME || route == WR_ROUTE_VERIFY)
            wr_api__handle_tokens(a, req, route, queue);
        else
            wr_api__handle_entries(a, req, route, queue);
        return;
    case WR_ROUTE_ADMIN_PUT:
    case WR_ROUTE_ADMIN_PATCH:
    case WR_ROUTE_ADMIN_GET:
    case WR_ROUTE_ADMIN_DELETE:
    case WR_ROUTE_ADMIN_LIST:
        handle_admin(a, req, route, queue);
        return;
    case WR_ROUTE_HEALTHZ: {
        static const char body[] = "{\"status\":\"ok\"}";
        wr_api__reply_json(a, req, route, 200, body, sizeof(body) - 1, 0);
        return;
    }
    case WR_ROUTE_READYZ: {
        wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, NULL);
        if (!c) {
            wr_api__reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
            return;
        }
        c->op = "ping";
        wr_err_t err = wr_store_ping(a->store, ready_cb, c);
        if (err != WR_OK) {
            wr_api__reply_unavailable(a, req, route, err);
            wr_api__ctx_free(c);
        }
        return;
    }
    case WR_ROUTE_METRICS:
        handle_metrics(a, req);
        return;
    case WR_ROUTE_QUEUE_PAGE:
        if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
            /* HEAD must not join the line: headers only, no side effect. */
            evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                              "text/html; charset=utf-8");
            wr_api__reply_empty(a, req, route, 200);
            return;
        }
        if (!wr_api_has_secret(a)) {
            wr_api__reply_error(a, req, route, 503, "STORE_UNAVAILABLE",
                                "the token secret is not loaded from the store yet", NULL, NULL,
                                WR_API__RETRY_AFTER_UNAVAILABLE_S);
            return;
        }
        wr_api__handle_queue_page(a, req, queue);
        return;
    case WR_ROUTE_DASHBOARD: {
        size_t len = 0;
        char *html = wr_page_render_dashboard(&len);
        wr_api__reply_html(a, req, route, 200, html, len);
        return;
    }
    case WR_ROUTE_STATIC:
        handle_static(a, req, m.param, m.param_len);
        return;
    default:
        wr_api__reply_error(a, req, route, 404, "NOT_FOUND", "no such route", NULL, NULL, 0);
        return;
    }
}

/* ---------- lifecycle ---------- */

wr_err_t wr_api_new(const wr_api_opts_t *opts, wr_api_t **out)
{
    wr_api_t *a = calloc(1, sizeof(*a));
    if (!a)
        return WR_ENOMEM;
    a->base = opts->base;
    a->store = opts->store;
    a->sched = opts->sched;
    a->metrics = opts->metrics;
    a->cfg = opts->cfg;
    if (wr_token_random((uint8_t *)&a->rng, sizeof(a->rng)) != WR_OK || a->rng == 0)
        a->rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)wr_api__now_us();
    if (wr_token_random(a->admin_mac_key, sizeof(a->admin_mac_key)) != WR_OK) {
        free(a);
        return WR_EIO;
    }
    a->n_keys = 1; /* keys[0].len stays 0 until a secret is installed */
    a->keys[0].secret = a->secret;
    a->admin_separate = a->cfg->admin_listen[0] != '\0';
    double join_rate = a->cfg->join_rate;
    if (join_rate < 0)
        join_rate = 0;
    wr_ratelimit_opts_t jo = {join_rate, a->cfg->join_burst, a->cfg->rate_limit_keys, NULL, NULL};
    wr_ratelimit_opts_t po = {a->cfg->poll_min_fraction > 0 ? 1.0 : 0.0, a->cfg->poll_allowance,
                              a->cfg->rate_limit_keys, NULL, NULL};
    if (wr_ratelimit_new(&jo, &a->join_rl) != WR_OK ||
        wr_ratelimit_new(&po, &a->poll_rl) != WR_OK) {
        wr_ratelimit_free(a->join_rl);
        free(a);
        return WR_ENOMEM;
    }
    size_t klen = strlen(a->cfg->admin_key);
    if (klen > 0) {
        a->admin_enabled = true;
        wr_token_hmac_sha256(a->admin_mac_key, sizeof(a->admin_mac_key), a->cfg->admin_key, klen,
                             a->admin_mac);
    }
    if (a->metrics) {
        wr_metrics_describe(a->metrics, "waitroom_http_requests_total", WR_METRIC_COUNTER,
                            "HTTP requests answered, by route and status.");
        wr_metrics_describe(a->metrics, "waitroom_store_latency_seconds", WR_METRIC_HISTOGRAM,
                            "Store operation latency as seen by the API, by operation.");
        wr_metrics_describe(a->metrics, "waitroom_store_errors_total", WR_METRIC_COUNTER,
                            "Store operations that failed (unavailable, timeout), by operation.");
        wr_metrics_describe(a->metrics, "waitroom_tokens_rejected_total", WR_METRIC_COUNTER,
                            "Tokens refused before the store was touched, by reason.");
        wr_metrics_describe(a->metrics, "waitroom_fail_open_passthrough_total", WR_METRIC_COUNTER,
                            "Consumes let through without a store check (fail-open policy).");
        wr_metrics_describe(a->metrics, "waitroom_http_in_flight", WR_METRIC_GAUGE,
                            "Requests waiting for a store answer.");
        wr_metrics_describe(a->metrics, "waitroom_rate_limited_total", WR_METRIC_COUNTER,
                            "Requests refused 429 RATE_LIMITED, by kind (join per address, "
                            "poll per identity).");
        wr_metrics_describe(a->metrics, "waitroom_rate_limit_tracked", WR_METRIC_GAUGE,
                            "Addresses (join) and identities (poll) the limiters track now.");
        wr_metrics_describe(a->metrics, "waitroom_rate_limit_evictions_total", WR_METRIC_COUNTER,
                            "Limiter entries evicted because the table was full.");
    }
    *out = a;
    return WR_OK;
}

/* The previous cookie key: from the previous cookie secret, or - when the
 * cookie key is derived from the token secret - from the previous token
 * secret, so rotating the token secret does not lose anyone's place. */
static void set_previous_cookie_key(wr_api_t *a)
{
    a->has_prev_cookie_key = false;
    if (a->cfg->cookie_secret_previous_len > 0) {
        wr_token_hmac_sha256(a->cfg->cookie_secret_previous, a->cfg->cookie_secret_previous_len,
                             "waitroom cookie v1", 18, a->prev_cookie_key);
        a->has_prev_cookie_key = true;
    } else if (a->cfg->cookie_secret_len == 0 && a->prev_secret_len > 0) {
        wr_token_hmac_sha256(a->prev_secret, a->prev_secret_len, "waitroom cookie v1", 18,
                             a->prev_cookie_key);
        a->has_prev_cookie_key = true;
    }
}

void wr_api_set_secret(wr_api_t *a, const uint8_t *secret, size_t len)
{
    if (len > sizeof(a->secret))
        len = sizeof(a->secret);
    memcpy(a->secret, secret, len);
    a->secret_len = len;
    if (a->cfg->cookie_secret_len > 0) {
        size_t cl = a->cfg->cookie_secret_len;
        /* Keys longer than the block are hashed by HMAC anyway; keep 32. */
        wr_token_hmac_sha256(a->cfg->cookie_secret, cl, "waitroom cookie v1", 18, a->cookie_key);
    } else {
        wr_token_hmac_sha256(a->secret, a->secret_len, "waitroom cookie v1", 18, a->cookie_key);
    }
    a->cookie_key_len = 32;
    a->keys[0].secret = a->secret;
    a->keys[0].len = a->secret_len;
    if (wr_token_kid(a->secret, a->secret_len, a->keys[0].kid) != WR_OK)
        a->keys[0].kid[0] = '\0';
    set_previous_cookie_key(a);
}

void wr_api_set_previous_secret(wr_api_t *a, const uint8_t *secret, size_t len)
{
    if (len > sizeof(a->prev_secret))
        len = sizeof(a->prev_secret);
    memcpy(a->prev_secret, secret, len);
    a->prev_secret_len = len;
    a->keys[1].secret = a->prev_secret;
    a->keys[1].len = len;
    a->n_keys = len > 0 ? 2 : 1;
    if (len == 0 || wr_token_kid(a->prev_secret, len, a->keys[1].kid) != WR_OK)
        a->keys[1].kid[0] = '\0';
    set_previous_cookie_key(a);
}

bool wr_api_has_secret(const wr_api_t *a)
{
    return a->secret_len > 0;
}

size_t wr_api_in_flight(const wr_api_t *a)
{
    return a->in_flight;
}

void wr_api_free(wr_api_t *a)
{
    if (!a)
        return;
    OPENSSL_cleanse(a->secret, sizeof(a->secret));
    OPENSSL_cleanse(a->cookie_key, sizeof(a->cookie_key));
    OPENSSL_cleanse(a->prev_secret, sizeof(a->prev_secret));
    OPENSSL_cleanse(a->prev_cookie_key, sizeof(a->prev_cookie_key));
    wr_ratelimit_free(a->join_rl);
    wr_ratelimit_free(a->poll_rl);
    while (a->free_ctx) {
        wr_api__ctx_t *c = a->free_ctx;
        a->free_ctx = c->next_free;
        free(c);
    }
    free(a);
}
