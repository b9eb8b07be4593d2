/*
 * api_admin.c - the operator's routes: the admin API (PUT / PATCH / GET /
 * DELETE /v1/admin/queues/{queue}, GET /v1/admin/queues) and the
 * operations routes (GET /readyz, GET /metrics).
 *
 * Admin API: every request carries the admin key as a Bearer token,
 * compared in constant time through an HMAC under a per-process random key
 * (no admin key configured = every admin request is 401). With
 * --admin-listen the admin API is served on that listener only (api.c).
 * PUT parses a whole config, PATCH reads the current one from the store
 * and merges the body into it (qconfig.h); both then write it with one
 * config_put and install it in the local scheduler cache at once, so this
 * instance applies it without waiting for a tick. GET and list answer the
 * config with the queue's stats (stats_json, info_json).
 *
 * Operations: readyz pings the store and is ready only with a token secret
 * installed; metrics refreshes the api's own gauges (in flight, rate
 * limiter sizes and evictions) before rendering the registry.
 */
#include <event2/buffer.h>
#include <event2/http.h>
#include <math.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "http.h"

/* ---------- admin API ---------- */

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
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I}", "waiting", (json_int_t)st->waiting,
        "active", (json_int_t)st->active, "admittedTotal", (json_int_t)st->admitted_total,
        "consumedTotal", (json_int_t)st->consumed_total, "expiredTotal",
        (json_int_t)st->expired_total, "leftTotal", (json_int_t)st->left_total, "rejectedFullTotal",
        (json_int_t)st->rejected_full_total, "admitRateObserved", round(obs * 100) / 100,
        /* sessions (sessionSeconds): open ones are part of active */
        "sessions", (json_int_t)st->sessions, "releasedTotal", (json_int_t)st->released_total,
        "sessionsExpiredTotal", (json_int_t)st->sessions_expired_total,
        /* people who stop asking (idleTimeoutSeconds) */
        "abandonedTotal", (json_int_t)st->abandoned_total);
}

static json_t *info_json(wr_api_t *a, const wr_queue_info_t *info)
{
    return json_pack("{s:s,s:o,s:o}", "name", info->name, "config",
                     wr_qconfig_to_public_json(info->config), "stats",
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
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
    }
    wr_api__ctx_free(c);
}

static void admin_list_cb(wr_err_t err, const wr_queue_info_t *infos, size_t n, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err != WR_OK) {
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
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
        wr_api__reply_jansson(c->api, c->req, c->route, 200, wr_qconfig_to_public_json(&p->cfg));
    } else {
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
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
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
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

void wr_api__handle_admin(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
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

/* ---------- operations: readyz, metrics ---------- */

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

void wr_api__handle_readyz(wr_api_t *a, struct evhttp_request *req)
{
    wr_route_t route = WR_ROUTE_READYZ;
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
}

void wr_api__handle_metrics(wr_api_t *a, struct evhttp_request *req)
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
