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
#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/api_routes.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "core/history.h"
#include "http/http.h"
#include "base/log.h"
#include "base/procstat.h"

/* ---------- admin API ---------- */

static json_t *stats_json(wr_api_t *a, const char *queue, const wr_queue_stats_t *st)
{
    double obs = wr_scheduler_observed_rate(a->sched, queue);
    if (obs < 0)
        obs = 0;
    json_t *o = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "waiting",
        (json_int_t)st->waiting, "active", (json_int_t)st->active, "admittedTotal",
        (json_int_t)st->admitted_total, "consumedTotal", (json_int_t)st->consumed_total,
        "expiredTotal", (json_int_t)st->expired_total, "leftTotal", (json_int_t)st->left_total,
        "rejectedFullTotal", (json_int_t)st->rejected_full_total, "admitRateObserved",
        round(obs * 100) / 100,
        /* sessions (sessionSeconds): open ones are part of active */
        "sessions", (json_int_t)st->sessions, "releasedTotal", (json_int_t)st->released_total,
        "sessionsExpiredTotal", (json_int_t)st->sessions_expired_total,
        /* away, not gone (idleTimeoutSeconds, awayHoldSeconds) */
        "abandonedTotal", (json_int_t)st->abandoned_total, "away", (json_int_t)st->away, "held",
        (json_int_t)st->held, "returnedTotal", (json_int_t)st->returned_total,
        /* unseen passes: expired before any answer carried them, holders held */
        "unseenExpiredTotal", (json_int_t)st->unseen_expired_total,
        /* sale opening: people waiting for opensAt (not in waiting) */
        "prequeue", (json_int_t)st->prequeue,
        /* the end of a sale: what is left of the stock, when it sold out */
        "stockLeft", st->stock_left >= 0 ? json_integer(st->stock_left) : json_null(), "soldOutAt",
        st->sold_out_at_ms >= 0 ? json_integer(st->sold_out_at_ms) : json_null());
    /* bypass rules: every instance's bypasses (store.h bypass) */
    /* and Web Push's live subscriptions (store-wide) */
    if (o && (json_object_set_new(o, "bypassTotal", json_integer((json_int_t)st->bypass_total)) ||
              json_object_set_new(o, "subscribed", json_integer((json_int_t)st->subscribed)))) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

/* The config as GET shows it: stock is what is left now (the stats'). */
static json_t *config_json(const wr_queue_info_t *info)
{
    wr_queue_config_t *cfg = malloc(sizeof *cfg);
    if (!cfg)
        return NULL;
    *cfg = *info->config;
    cfg->stock = info->stats.stock_left;
    json_t *j = wr_qconfig_to_public_json(cfg);
    free(cfg);
    return j;
}

static json_t *info_json(wr_api_t *a, const wr_queue_info_t *info)
{
    json_t *st = stats_json(a, info->name, &info->stats);
    /* the rate in use: autotune's kept rate (clamped), else the config's */
    if (st)
        json_object_set_new(
            st, "admitRateTarget",
            wr_qconfig_number_json(wr_store_rate_in_use(info->config, info->stats.autotune_rate)));
    /* per line (API 1.3, "Priority groups and presale codes"): the groups
     * in order, then "standard" */
    if (st) {
        json_t *g = json_object();
        const wr_queue_stats_t *q = &info->stats;
        if (q->n_lines == 0) /* a store without groups: the standard line is the whole line */
            json_object_set_new(g, WR_GROUP_STANDARD,
                                json_pack("{s:I,s:I}", "waiting", (json_int_t)q->waiting,
                                          "admittedTotal", (json_int_t)q->admitted_total));
        for (size_t i = 0; i < q->n_lines && i <= WR_GROUPS_MAX; i++)
            json_object_set_new(g, q->lines[i].name,
                                json_pack("{s:I,s:I}", "waiting", (json_int_t)q->lines[i].waiting,
                                          "admittedTotal", (json_int_t)q->lines[i].admitted_total));
        json_object_set_new(st, "groups", g);
    }
    /* Web Push on: this instance's pushes by outcome (waitroom_push_total) */
    if (st && info->config->push)
        json_object_set_new(st, "push", wr_api__push_counts_json(a, info->name));
    return json_pack("{s:s,s:o,s:o}", "name", info->name, "config", config_json(info), "stats", st);
}

static void admin_get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && info) {
        wr_api__held(c, info->config);
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

static void health_cb(wr_err_t err, const wr_autotune_state_rec_t *res, void *arg)
{
    (void)res;
    wr_api__done_cb(err, arg); /* 204, or the store's error (404 no queue) */
}

/* ---------- the audit log ---------- */

/* Fields that hold a write-only secret (inviteKey, captcha's secret):
 * never logged, only that they were set; given in a body, they count as
 * changed even when equal (a rotation shows). */
static const char *const secret_fields[] = {"inviteKey", "captcha", NULL};

static bool is_secret_field(const char *k)
{
    for (size_t i = 0; secret_fields[i]; i++)
        if (strcmp(secret_fields[i], k) == 0)
            return true;
    return false;
}

/* Adds field k of one side (o: its public rendering, secrets as "set",
 * or NULL) to out. */
static void add_value(json_t *out, const char *k, const json_t *o)
{
    json_t *v = o ? json_object_get(o, k) : NULL;
    json_object_set(out, k, v ? v : json_null());
}

/*
 * Logs one admin change (info, msg "admin change"): the queue, the action
 * (put, patch, delete), the client, the fields whose values differ between
 * old and new (NULL = the queue did not exist / no longer exists) and
 * their old and new values; a secret field given in the request's body
 * counts as changed and shows as "set". Called before the reply, while
 * req is valid.
 */
static void audit(wr_api_t *a, wr_http_req_t *req, const char *action, const char *queue,
                  const wr_queue_config_t *old, const wr_queue_config_t *nw, const json_t *body)
{
    /* compared with the secrets (a new secret is a change), logged without */
    json_t *oj = old ? wr_qconfig_to_json(old) : NULL;
    json_t *nj = nw ? wr_qconfig_to_json(nw) : NULL;
    json_t *op = old ? wr_qconfig_to_public_json(old) : NULL;
    json_t *np = nw ? wr_qconfig_to_public_json(nw) : NULL;
    json_t *changed = json_array(), *ov = json_object(), *nv = json_object();
    char *cs = NULL, *os = NULL, *ns = NULL;
    if (!changed || !ov || !nv || (old && (!oj || !op)) || (nw && (!nj || !np)))
        goto out;
    const json_t *sides[2] = {oj, nj};
    for (int side = 0; side < 2; side++) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)sides[side], k, v)
        {
            if (json_object_get(ov, k))
                continue; /* seen */
            json_t *other = side == 0 ? (nj ? json_object_get(nj, k) : NULL)
                                      : (oj ? json_object_get(oj, k) : NULL);
            bool differs = !other || !json_equal(v, other);
            if (!differs && !(is_secret_field(k) && body && json_object_get(body, k)))
                continue;
            json_array_append_new(changed, json_string(k));
            add_value(ov, k, op);
            add_value(nv, k, np);
        }
    }
    cs = json_dumps(changed, JSON_COMPACT);
    os = old ? json_dumps(ov, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    ns = nw ? json_dumps(nv, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    char client[64] = "";
    wr_api__client_addr(a, req, client, sizeof(client));
    wr_log_field_t f[] = {
        WR_LOG_S("queue", queue), WR_LOG_S("action", action), WR_LOG_S("client", client),
        WR_LOG_J("changed", cs),  WR_LOG_J("old", os),        WR_LOG_J("new", ns),
    };
    wr_log_fields(WR_LOG_INFO, "admin change", f, sizeof(f) / sizeof(f[0]));
out:
    free(cs);
    free(os);
    free(ns);
    json_decref(changed);
    json_decref(ov);
    json_decref(nv);
    json_decref(oj);
    json_decref(nj);
    json_decref(op);
    json_decref(np);
}

/* ---------- PUT / PATCH / DELETE: read the old config, write, audit ---------- */

typedef struct {
    wr_api__ctx_t *c;
    wr_queue_config_t cfg; /* the new config (PUT, PATCH) */
    wr_queue_config_t old; /* the config before (when has_old) */
    bool has_old;
} put_t;

static void admin_put_cb(wr_err_t err, void *arg)
{
    put_t *p = arg;
    wr_api__ctx_t *c = p->c;
    wr_api__observe(c, err);
    if (err == WR_OK) {
        audit(c->api, c->req, c->route == WR_ROUTE_ADMIN_PATCH ? "patch" : "put", c->queue,
              p->has_old ? &p->old : NULL, &p->cfg, c->body);
        wr_scheduler_set_config(c->api->sched, c->queue, &p->cfg);
        if (!p->has_old) /* created (again): its report lives (the registry) */
            wr_reporter_created(wr_scheduler_reporter(c->api->sched), c->queue);
        wr_api__reply_jansson(c->api, c->req, c->route, 200, wr_qconfig_to_public_json(&p->cfg));
    } else if (err == WR_EGROUP) { /* a group with people or live codes leaves the config */
        wr_api__reply_error(c->api, c->req, c->route, 400, "INVALID_CONFIG",
                            WR_GROUPS_REMOVE_REFUSED, "groups", NULL, 0);
    } else {
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
    }
    wr_api__ctx_free(c);
    free(p);
}

/* Writes p->cfg (p owns nothing but itself; c is p->c). */
static void do_put(put_t *p)
{
    wr_api__ctx_t *c = p->c;
    c->op = "config_put";
    c->t0_us = wr_clock_wall_us();
    wr_err_t err = wr_store_config_put(c->api->store, c->queue, &p->cfg, admin_put_cb, p);
    if (err != WR_OK) {
        wr_api__reply_unavailable(c->api, c->req, c->route, err);
        wr_api__ctx_free(c);
        free(p);
    }
}

static void admin_delete_cb(wr_err_t err, void *arg)
{
    put_t *p = arg;
    wr_api__ctx_t *c = p->c;
    wr_api__observe(c, err);
    if (err == WR_OK) {
        audit(c->api, c->req, "delete", c->queue, p->has_old ? &p->old : NULL, NULL, NULL);
        /* the report outlives the queue: marked deleted in the registry */
        wr_reporter_deleted(wr_scheduler_reporter(c->api->sched), c->queue);
        wr_api__reply_empty(c->api, c->req, c->route, 204);
    } else {
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
    }
    wr_api__ctx_free(c);
    free(p);
}

/* The config before the change: then PUT writes, PATCH merges and writes,
 * DELETE deletes. A queue that does not exist is fine for PUT only; one
 * that cannot be read for its keys' types (WR_EDATA) for DELETE only. */
static void admin_change_get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    put_t *p = arg;
    wr_api__ctx_t *c = p->c;
    wr_api__observe(c, err);
    if (err == WR_OK && info) {
        p->old = *info->config;
        p->old.stock = info->stats.stock_left; /* what is left now: a PATCH keeps it */
        p->has_old = true;
    } else if (!(err == WR_ENOTFOUND && c->route == WR_ROUTE_ADMIN_PUT) &&
               !(err == WR_EDATA && c->route == WR_ROUTE_ADMIN_DELETE)) {
        /* (a queue whose keys hold the wrong type cannot be read, but it
         * can be deleted: the way out for its operator) */
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
        goto fail;
    }
    if (c->route == WR_ROUTE_ADMIN_PATCH) {
        char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
        if (wr_qconfig_patch(&p->old, c->body, &p->cfg, field, sizeof(field), msg, sizeof(msg)) !=
                WR_OK ||
            wr_qconfig_check_available(&p->cfg, field, sizeof(field), msg, sizeof(msg)) != WR_OK) {
            wr_api__reply_error(c->api, c->req, c->route, 400, "INVALID_CONFIG", msg, field, NULL,
                                0);
            goto fail;
        }
    }
    if (c->route != WR_ROUTE_ADMIN_DELETE && p->cfg.n_groups > 0 &&
        !wr_store_has_groups(c->api->store)) {
        wr_api__reply_error(c->api, c->req, c->route, 400, "INVALID_CONFIG", WR_GROUPS_STORE_ONLY,
                            "groups", NULL, 0);
        goto fail;
    }
    if (c->route != WR_ROUTE_ADMIN_DELETE) {
        if (wr_api__log_config_check(c, p->has_old ? &p->old : NULL, info ? &info->stats : NULL,
                                     &p->cfg))
            do_put(p);
        else
            goto fail;
        return;
    }
    c->op = "queue_delete";
    c->t0_us = wr_clock_wall_us();
    /* the report's last counts and sample go first (same connection) */
    wr_reporter_before_delete(wr_scheduler_reporter(c->api->sched), c->queue,
                              p->has_old ? p->old.admit_per_second : 0);
    err = wr_store_queue_delete(c->api->store, c->queue, admin_delete_cb, p);
    if (err == WR_OK) {
        wr_scheduler_forget(c->api->sched, c->queue);
        return;
    }
    wr_api__reply_unavailable(c->api, c->req, c->route, err);
fail:
    wr_api__ctx_free(c);
    free(p);
}

/* PUT, PATCH, DELETE: reads the current config first (for PATCH's merge
 * and the audit log). Takes c. */
static void start_change(wr_api__ctx_t *c, const wr_queue_config_t *cfg)
{
    put_t *p = calloc(1, sizeof(*p));
    if (!p) {
        wr_api__reply_oom(c->api, c->req, c->route);
        wr_api__ctx_free(c);
        return;
    }
    p->c = c;
    if (cfg)
        p->cfg = *cfg;
    c->op = "queue_get";
    wr_err_t err = wr_store_queue_get(c->api->store, c->queue, admin_change_get_cb, p);
    if (err != WR_OK) {
        wr_api__reply_unavailable(c->api, c->req, c->route, err);
        wr_api__ctx_free(c);
        free(p);
    }
}

void wr_api__handle_admin(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    const char *queue = call->queue;
    /* the admin key was checked in api.c's dispatch, before anything else */
    json_t *body = NULL;
    if (route == WR_ROUTE_ADMIN_PUT || route == WR_ROUTE_ADMIN_PATCH) {
        size_t blen;
        const char *body_data = wr_http_req_body(req, &blen);
        const char *data = blen ? body_data : NULL;
        json_error_t jerr;
        body = data ? wr_api__load_body(data, blen, &jerr) : NULL;
        char field[WR_FIELD_MAX + 1] = "";
        if (!body && data && wr_api__body_number_field(data, blen, &jerr, field, sizeof(field))) {
            char msg[256];
            snprintf(msg, sizeof(msg), "%s is out of range (%s)", field, jerr.text);
            wr_api__reply_error(a, req, route, 400, "INVALID_CONFIG", msg, field, NULL, 0);
            return;
        }
        if (!json_is_object(body)) {
            char msg[256] = "body must be a JSON object";
            if (data && !body) /* not JSON at all: say where it broke */
                snprintf(msg, sizeof(msg), "body is not valid JSON: %s", jerr.text);
            json_decref(body);
            wr_api__reply_error(a, req, route, 400, "BAD_REQUEST", msg, NULL, NULL, 0);
            return;
        }
    }
    /* Each field's own rule before the store is read: bad input is 400
     * even while the store is unreachable (then 503 only for a good one).
     * PUT parses the whole config; PATCH checks the fields it gives. */
    wr_queue_config_t cfg;
    char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
    if ((route == WR_ROUTE_ADMIN_PUT &&
         (wr_qconfig_parse(body, &cfg, field, sizeof(field), msg, sizeof(msg)) != WR_OK ||
          wr_qconfig_check_available(&cfg, field, sizeof(field), msg, sizeof(msg)) != WR_OK)) ||
        (route == WR_ROUTE_ADMIN_PATCH &&
         wr_qconfig_check_fields(body, field, sizeof(field), msg, sizeof(msg)) != WR_OK)) {
        json_decref(body);
        wr_api__reply_error(a, req, route, 400, "INVALID_CONFIG", msg, field, NULL, 0);
        return;
    }
    if (wr_api__push_config_refused(a, body, msg, sizeof(msg))) {
        json_decref(body);
        wr_api__reply_error(a, req, route, 400, "INVALID_CONFIG", msg, "push", NULL, 0);
        return;
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c) {
        json_decref(body);
        return;
    }
    c->body = body; /* the audit log sees which fields were given */
    if (route == WR_ROUTE_ADMIN_PUT) {
        start_change(c, &cfg);
        return;
    }
    wr_err_t err;
    switch (route) {
    case WR_ROUTE_ADMIN_PATCH:
    case WR_ROUTE_ADMIN_DELETE:
        start_change(c, NULL);
        return;
    case WR_ROUTE_ADMIN_GET:
        c->op = "queue_get";
        err = wr_store_queue_get(a->store, queue, admin_get_cb, c);
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

/* {"status":...} plus "unreachableShards" when the store names parts of
 * it that cannot serve (Redis Cluster: one string per shard, address,
 * slots and why). j: taken and returned (NULL stays NULL). */
static json_t *ready_shards(wr_api_t *a, json_t *j)
{
    char parts[2048];
    if (!j || wr_store_unreachable(a->store, parts, sizeof parts) == 0)
        return j;
    json_t *arr = json_array();
    for (char *line = parts, *nl; arr && *line && (nl = strchr(line, '\n')); line = nl + 1)
        json_array_append_new(arr, json_stringn(line, (size_t)(nl - line)));
    json_object_set_new(j, "unreachableShards", arr);
    return j;
}

/* 503: the store's usual answer, or, when it names shards that cannot
 * serve (a Redis Cluster none of whose shards can), those names. */
static void ready_unavailable(wr_api_t *a, wr_http_req_t *req, wr_route_t route, wr_err_t err)
{
    json_t *j = ready_shards(a, json_pack("{s:s, s:s}", "error", "STORE_UNAVAILABLE", "message",
                                          "the store cannot serve"));
    if (j && json_object_get(j, "unreachableShards")) {
        wr_api__reply_jansson(a, req, route, 503, j);
    } else {
        json_decref(j);
        wr_api__reply_unavailable(a, req, route, err);
    }
}

static void ready_cb(wr_err_t err, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && wr_api_has_secret(c->api)) {
        /* Redis Cluster with a shard that cannot serve: the queues of the
         * other shards work, so the instance stays ready; the body names
         * the shards */
        wr_api__reply_jansson(c->api, c->req, c->route, 200,
                              ready_shards(c->api, json_pack("{s:s}", "status", "ready")));
    } else {
        ready_unavailable(c->api, c->req, c->route, err == WR_OK ? WR_EUNAVAILABLE : err);
    }
    wr_api__ctx_free(c);
}

void wr_api__handle_readyz(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, NULL);
    if (!c)
        return;
    c->op = "ping";
    wr_err_t err = wr_store_ping(a->store, ready_cb, c);
    if (err != WR_OK) {
        ready_unavailable(a, req, route, err);
        wr_api__ctx_free(c);
    }
}

void wr_api_set_http(wr_api_t *a, const struct wr_http *http, const struct wr_http *admin)
{
    a->http[0] = http;
    a->http[1] = admin;
}

/* The connection layer's counters, both listeners summed (wr_api_set_http). */
static void metrics_http(wr_api_t *a)
{
    wr_http_counters_t sum = {0};
    size_t open = 0;
    for (size_t i = 0; i < 2; i++) {
        if (!a->http[i])
            continue;
        wr_http_counters_t c;
        wr_http_get_counters(a->http[i], &c);
        open += wr_http_connections(a->http[i]);
        sum.accepted += c.accepted;
        sum.bad_requests += c.bad_requests;
        sum.timed_out += c.timed_out;
        sum.headers_too_large += c.headers_too_large;
        sum.body_too_large += c.body_too_large;
        sum.cap_pauses += c.cap_pauses;
        sum.accept_errors += c.accept_errors;
    }
    if (!a->http[0] && !a->http[1])
        return;
    wr_metrics_t *m = a->metrics;
    wr_metrics_set(m, "waitroom_http_connections", NULL, (double)open);
    wr_metrics_set(m, "waitroom_http_connections_accepted_total", NULL, (double)sum.accepted);
    wr_metrics_set(m, "waitroom_http_refused_total", "reason=\"bad_request\"",
                   (double)sum.bad_requests);
    wr_metrics_set(m, "waitroom_http_refused_total", "reason=\"timeout\"", (double)sum.timed_out);
    wr_metrics_set(m, "waitroom_http_refused_total", "reason=\"headers_too_large\"",
                   (double)sum.headers_too_large);
    wr_metrics_set(m, "waitroom_http_refused_total", "reason=\"body_too_large\"",
                   (double)sum.body_too_large);
    wr_metrics_set(m, "waitroom_http_accept_pauses_total", "reason=\"cap\"",
                   (double)sum.cap_pauses);
    wr_metrics_set(m, "waitroom_http_accept_pauses_total", "reason=\"error\"",
                   (double)sum.accept_errors);
}

void wr_api__handle_metrics(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    if (!a->metrics) {
        wr_api__reply_error(a, req, route, 404, "NOT_FOUND", "metrics disabled", NULL, NULL, 0);
        return;
    }
    wr_metrics_set(a->metrics, "waitroom_http_in_flight", NULL, (double)a->in_flight);
    metrics_http(a);
    wr_metrics_set(a->metrics, "waitroom_rate_limit_tracked", "kind=\"join\"",
                   (double)wr_ratelimit_size(a->join_rl));
    wr_metrics_set(a->metrics, "waitroom_rate_limit_tracked", "kind=\"poll\"",
                   (double)wr_ratelimit_size(a->poll_rl));
    wr_metrics_set(a->metrics, "waitroom_rate_limit_evictions_total", "kind=\"join\"",
                   (double)wr_ratelimit_evictions(a->join_rl));
    wr_metrics_set(a->metrics, "waitroom_rate_limit_evictions_total", "kind=\"poll\"",
                   (double)wr_ratelimit_evictions(a->poll_rl));
    wr_metrics_set(a->metrics, "waitroom_log_lines_dropped_total", NULL, (double)wr_log_dropped());
    wr_procstat_t ps;
    wr_procstat_read(&ps); /* what could not be read stays 0 */
    wr_metrics_set(a->metrics, "process_cpu_seconds_total", NULL, ps.cpu_seconds);
    wr_metrics_set(a->metrics, "process_resident_memory_bytes", NULL, ps.resident_bytes);
    wr_metrics_set(a->metrics, "process_open_fds", NULL, ps.open_fds);
    wr_metrics_set(a->metrics, "process_max_fds", NULL, ps.max_fds);
    wr_metrics_set(a->metrics, "process_start_time_seconds", NULL, ps.start_time_seconds);
    size_t len = 0;
    char *text = wr_metrics_render(a->metrics, &len);
    if (!text) {
        wr_api__reply_oom(a, req, route);
        return;
    }
    wr_api__count_request(a, req, route, 200, len);
    wr_http_req_add_header(req, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    wr_http_req_add_header(req, "Cache-Control", "no-store");
    wr_http_send(req, 200, text, len, false);
    free(text);
}

/* ---------- the queue's history (dashboard) ---------- */

/* POST /v1/queues/{queue}/health (autotune, docs/API.md 1.2): the
 * protected service's report, {"latencyMs": L >= 0, "errorRate": 0..1},
 * both required, nothing else; kept in the store (report slot 0) for the
 * law's next step on whichever instance. 204; 400 BAD_REQUEST names the
 * field; 404 no queue. */
void wr_api__handle_health(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    size_t blen;
    const char *body_data = wr_http_req_body(req, &blen);
    const char *data = blen ? body_data : NULL;
    json_error_t jerr;
    json_t *body = data ? wr_api__load_body(data, blen, &jerr) : NULL;
    const char *bad = NULL, *why = NULL;
    const json_t *l = json_object_get(body, "latencyMs"), *e = json_object_get(body, "errorRate");
    if (!json_is_object(body)) {
        why = "body must be a JSON object {\"latencyMs\": L, \"errorRate\": E}";
    } else if (json_object_size(body) != (size_t)(!!l + !!e)) {
        why = "body takes only latencyMs and errorRate";
    } else if (!json_is_number(l) || !wr_autotune_report_valid(json_number_value(l), 0)) {
        bad = "latencyMs";
        why = "latencyMs must be a number of ms >= 0 (at most 3600000)";
    } else if (!json_is_number(e) || !wr_autotune_report_valid(0, json_number_value(e))) {
        bad = "errorRate";
        why = "errorRate must be a number from 0 to 1";
    }
    if (why) {
        json_decref(body);
        wr_api__reply_error(a, req, route, 400, "BAD_REQUEST", why, bad, NULL, 0);
        return;
    }
    wr_autotune_req_t r = {.report = true,
                           .source = 0,
                           .latency_ms = json_number_value(l),
                           .error_rate = json_number_value(e)};
    json_decref(body);
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, call->queue);
    if (!c)
        return;
    c->op = "autotune";
    wr_err_t err = wr_store_autotune(a->store, call->queue, &r, health_cb, c);
    if (err != WR_OK) {
        wr_api__reply_unavailable(a, req, route, err);
        wr_api__ctx_free(c);
    }
}

/* A number, or null when below 0 (none). */
static json_t *num_or_null(double d)
{
    return d >= 0 && isfinite(d) ? wr_qconfig_number_json(d) : json_null();
}

/* The history answer's "autotune": what this instance's autotune steps saw
 * last (scheduler.h wr_scheduler_autotune_t), with the bounds and target. */
static json_t *autotune_json(const wr_queue_config_t *cfg, const wr_scheduler_autotune_t *at)
{
    json_t *chg = json_null();
    if (at->changed_at_ms > 0)
        chg = json_pack("{s:I,s:o,s:o,s:o,s:o,s:o}", "at", (json_int_t)at->changed_at_ms, "from",
                        at->from > 0 ? wr_qconfig_number_json(at->from) : json_null(), "to",
                        wr_qconfig_number_json(at->to), "reason",
                        at->why_known ? json_string(wr_autotune_why_name(at->why)) : json_null(),
                        "latencyMs", at->why_known ? num_or_null(at->why_latency_ms) : json_null(),
                        "errorRate", at->why_known ? num_or_null(at->why_error_rate) : json_null());
    return json_pack("{s:o,s:o,s:o,s:I,s:o,s:o,s:o}", "rateInUse",
                     at->rate > 0 ? wr_qconfig_number_json(at->rate) : json_null(), "latencyMs",
                     num_or_null(at->latency_ms), "errorRate", num_or_null(at->error_rate),
                     "targetMs", (json_int_t)cfg->autotune_target_ms, "minPerSecond",
                     wr_qconfig_number_json(cfg->autotune_min), "maxPerSecond",
                     wr_qconfig_number_json(cfg->autotune_max), "lastChange", chg);
}

void wr_api__handle_history(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    const char *queue = call->queue;
    /* the admin key was checked in api.c's dispatch, before anything else */
    /* ?since=EPOCH_MS: only the samples after it (the dashboard's refresh) */
    int64_t since_s = 0;
    const char *qs = wr_http_req_query(req);
    struct evkeyvalq params = {0};
    bool parsed = !qs || !*qs || evhttp_parse_query_str(qs, &params) == 0;
    if (qs && *qs) { /* a query that is not name=value parts: no since to trust */
        const char *v = parsed ? evhttp_find_header(&params, "since") : "";
        char *end = NULL;
        errno = 0;
        long long ms = v ? strtoll(v, &end, 10) : 0;
        /* digits only: no sign, no space, nothing beyond int64 */
        if (v && (!isdigit((unsigned char)v[0]) || end == v || *end || ms < 0 || errno == ERANGE)) {
            evhttp_clear_headers(&params);
            wr_api__reply_error(a, req, route, 400, "BAD_REQUEST",
                                "since must be a time in epoch milliseconds", NULL, NULL, 0);
            return;
        }
        since_s = ms / 1000;
    }
    evhttp_clear_headers(&params);
    const wr_history_t *h = wr_scheduler_history(a->sched, queue);
    const wr_queue_config_t *cfg = wr_scheduler_config(a->sched, queue);
    if (!h || !cfg) {
        wr_api__reply_error(a, req, route, 404, "QUEUE_NOT_FOUND", "no such queue", NULL, NULL, 0);
        return;
    }
    json_t *o = wr_history_json(h, since_s);
    wr_scheduler_autotune_t at;
    bool tuned = wr_scheduler_autotune(a->sched, queue, &at);
    if (o) {
        json_object_set_new(o, "name", json_string(queue));
        json_object_set_new(o, "admitPerSecond", json_real(cfg->admit_per_second));
        json_object_set_new(o, "paused", json_boolean(cfg->paused));
        json_object_set_new(o, "enabled", json_boolean(cfg->enabled));
        json_object_set_new(o, "autotune", tuned ? autotune_json(cfg, &at) : json_null());
        /* time to clear: the line now / the rate it drains at (the
         * configured one, autotune's rate in use, or the observed one while
         * maxActive holds it lower); null while nobody is admitted */
        json_t *w = json_object_get(o, "waiting");
        size_t n = json_array_size(w);
        double waiting = n ? (double)json_integer_value(json_array_get(w, n - 1)) : 0;
        double rate = tuned && at.rate > 0 ? at.rate : cfg->admit_per_second;
        double obs = wr_scheduler_observed_rate(a->sched, queue);
        if (cfg->max_active > 0 && obs >= 0 && obs < rate)
            rate = obs;
        bool draining = cfg->enabled && !cfg->paused && rate > 0;
        json_object_set_new(o, "timeToClearSeconds",
                            !n             ? json_null()
                            : waiting == 0 ? json_integer(0)
                            : draining     ? json_integer((json_int_t)ceil(waiting / rate))
                                           : json_null());
    }
    wr_api__reply_jansson(a, req, route, 200, o);
}
