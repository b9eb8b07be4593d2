/*
 * api.c - the front of the api module: dispatch, lifecycle, secrets.
 *
 * Flow of a request: handle() routes it (router.c) to its row of
 * routes.def, checks the row's flags the same way for every route (with a
 * separate admin listener, the public one does not know the admin API, the
 * dashboard or the metrics; the admin key; the {queue} segment validated;
 * the body against the route's limit; HEAD of the queue page; the token
 * secret; router.h has the list) and calls the row's handler (the table
 * below, built from routes.def; their declarations: api_routes.h). The
 * route families resolve the identity (cookie or header, api_request.c),
 * make one store call and reply:
 *   api_entries.c  join / status / leave and the join's gates, with the
 *                  abuse controls (join limit per address, poll pacing)
 *   api_page.c     the queue page, which joins through api_entries.c
 *   api_tokens.c   consume / verify / release and the fail policy
 *   api_admin.c    the admin API, history, readyz, metrics
 *   api_challenge.c  the challenge route (api_gates.h)
 * The routes that need no store (healthz, the dashboard, static assets)
 * are answered here. Contexts, replies and the one table from store errors
 * to HTTP answers are in api_reply.c; api_internal.h draws the layers.
 * Nothing changes state before all validation has passed, so an error
 * never changes state. The series the module describes are its rows of
 * the metric table (base/metric_defs.c, WR_METRICS_GROUP_API).
 *
 * Keys: tokens are signed with the current secret and its kid, verified
 * against current + previous (rotation); visitor cookies likewise. The
 * cookie key is derived from the cookie secret when one is configured,
 * else from the token secret.
 */
#include "http/api.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/api_client.h"
#include "http/api_routes.h"
#include "http/api_gates.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/metric_defs.h"
#include "http/http.h"
#include "base/ids.h"
#include "http/page.h"
#include "base/version.h"

/* ---------- the handlers answered here ---------- */

static void handle_healthz(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    static const char body[] = "{\"status\":\"ok\"}";
    wr_api__reply_json(a, req, call->route, 200, body, sizeof(body) - 1, 0);
}

static void handle_dashboard(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    size_t len = 0;
    char *html = wr_page_render_dashboard(a->web, &len);
    wr_api__reply_html(a, req, call->route, 200, html, len);
}

/* GET /static/{file}: an embedded asset (the {file} as in the path). */
static void handle_static(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    char file[128];
    size_t len = 0;
    const char *ctype = NULL;
    const unsigned char *data = NULL;
    if (call->param_len < sizeof(file)) {
        memcpy(file, call->param, call->param_len);
        file[call->param_len] = 0;
        data = wr_page_asset(a->web, file, &len, &ctype);
    }
    if (!data) {
        wr_api__reply_error(a, req, call->route, 404, "NOT_FOUND", "no such asset", NULL, NULL, 0);
        return;
    }
    wr_http_req_add_header(req, "Content-Type", ctype);
    wr_http_req_add_header(req, "Cache-Control", "public, max-age=300");
    wr_http_req_add_header(req, "X-Content-Type-Options", "nosniff");
    /* Web Push: the queue pages' service worker may control /q/ (push.js) */
    if (strcmp(file, "push-sw.js") == 0)
        wr_http_req_add_header(req, "Service-Worker-Allowed", "/q/");
    wr_api__count_request(a, req, call->route, 200, len);
    wr_http_send(req, 200, data, len, true);
}

/* ---------- dispatch ---------- */

/* Every route's handler, indexed by route: the HANDLER column of
 * routes.def, so a route cannot be without one (a row names it, or the
 * build fails). */
static wr_api__handler_fn *const handlers[WR_ROUTE_COUNT] = {
#define WR_ROUTE(id, name, method, pattern, flags, handler) [WR_ROUTE_##id] = handler,
#include "http/routes.def"
#undef WR_ROUTE
};

static wr_method_t method_of(const wr_http_req_t *req)
{
    switch (wr_http_req_method(req)) {
    case WR_HTTP_M_GET:
        return WR_METHOD_GET;
    case WR_HTTP_M_POST:
        return WR_METHOD_POST;
    case WR_HTTP_M_PUT:
        return WR_METHOD_PUT;
    case WR_HTTP_M_PATCH:
        return WR_METHOD_PATCH;
    case WR_HTTP_M_DELETE:
        return WR_METHOD_DELETE;
    case WR_HTTP_M_HEAD:
        return WR_METHOD_HEAD;
    default:
        return WR_METHOD_OTHER;
    }
}

static void handle(wr_api_t *a, wr_http_req_t *req, bool admin_listener,
                   char queue[WR_QUEUE_NAME_MAX + 1]);

static size_t body_limit_of(unsigned flags)
{
    return flags & WR_ROUTE_F_ADMIN_BODY ? WR_HTTP_MAX_BODY_ADMIN : WR_HTTP_MAX_BODY_USER;
}

size_t wr_api_body_limit(const wr_http_req_t *req, void *arg)
{
    wr_api_t *a = arg;
    size_t len;
    const char *path = wr_http_req_path(req, &len);
    wr_route_match_t m = wr_router_match_memo(&a->route_memo, method_of(req), path, len);
    return m.route == WR_ROUTE_NONE ? WR_HTTP_MAX_BODY_ADMIN
                                    : body_limit_of(wr_router_row(m.route)->flags);
}

/* Every request: notes it as the one being dispatched (its reply, if sent
 * before handle returns, is recorded with this start and queue). */
static void dispatch(wr_api_t *a, wr_http_req_t *req, bool admin_listener)
{
    char queue[WR_QUEUE_NAME_MAX + 1] = "";
    a->cur_req = req;
    a->cur_start_us = wr_clock_wall_us();
    a->cur_queue = queue;
    handle(a, req, admin_listener, queue);
    a->cur_req = NULL;
    a->cur_queue = "";
}

void wr_api_handle(wr_http_req_t *req, void *arg)
{
    dispatch(arg, req, false);
}

void wr_api_handle_admin(wr_http_req_t *req, void *arg)
{
    dispatch(arg, req, true);
}

/* The {queue} segment (len bytes at p): percent-decoded, then validated,
 * into queue. False when it is not a valid queue name. */
static bool decode_queue(const char *p, size_t len, char queue[WR_QUEUE_NAME_MAX + 1])
{
    if (len > 3 * WR_QUEUE_NAME_MAX)
        return false;
    char raw[3 * WR_QUEUE_NAME_MAX + 1];
    memcpy(raw, p, len);
    raw[len] = 0;
    /* Without a '%' there is nothing to decode (and no malloc). */
    size_t dlen = len;
    bool escaped = memchr(raw, '%', len) != NULL;
    char *dec = escaped ? evhttp_uridecode(raw, 0, &dlen) : raw;
    bool ok = dec && wr_ids_valid_queue_n(dec, dlen); /* no NUL inside, either */
    if (ok)
        wr_api__copy(queue, WR_QUEUE_NAME_MAX + 1, dec);
    if (escaped)
        free(dec);
    return ok;
}

/* Routes req, checks its route's flags (router.h says what each means, in
 * this order), then calls the route's handler. */
static void handle(wr_api_t *a, wr_http_req_t *req, bool admin_listener,
                   char queue[WR_QUEUE_NAME_MAX + 1])
{
    size_t path_len;
    const char *path = wr_http_req_path(req, &path_len);
    wr_route_match_t m = wr_router_match_memo(&a->route_memo, method_of(req), path, path_len);
    if (m.route == WR_ROUTE_NONE) {
        if (m.allowed) {
            char allow[64];
            wr_router_allow_header(m.allowed, allow, sizeof(allow));
            wr_http_req_add_header(req, "Allow", allow);
            wr_api__reply_error(a, req, WR_ROUTE_NONE, 405, "METHOD_NOT_ALLOWED",
                                "method not allowed on this path", NULL, NULL, 0);
        } else {
            wr_api__reply_error(a, req, WR_ROUTE_NONE, 404, "NOT_FOUND", "no such route", NULL,
                                NULL, 0);
        }
        return;
    }
    wr_route_t route = m.route;
    unsigned flags = wr_router_row(route)->flags;

    /* With a separate admin listener, the public one does not know the
     * admin API, the dashboard or the metrics. */
    if ((flags & WR_ROUTE_F_ADMIN_LISTENER) && a->admin_separate && !admin_listener) {
        wr_api__reply_error(a, req, WR_ROUTE_NONE, 404, "NOT_FOUND", "no such route", NULL, NULL,
                            0);
        return;
    }

    /* Header identity mode: the identity header sent more than once is
     * refused on every route, before anything else: a client's own copy
     * must never win over the gateway's (case K17). */
    if (a->cfg->identity == WR_IDENTITY_HEADER &&
        wr_http_header_count(req, a->cfg->identity_header) > 1) {
        wr_api__reply_error(a, req, route, 400, "INVALID_USER_ID",
                            "identity header sent more than once", NULL, NULL, 0);
        return;
    }

    /* The admin key before anything about the request is looked at (a bad
     * queue name too is 401 without the key). */
    if ((flags & WR_ROUTE_F_ADMIN_KEY) && !wr_api__admin_ok(a, req)) {
        wr_api__reply_error(a, req, route, 401, "UNAUTHORIZED", "admin key required (Bearer)", NULL,
                            NULL, 0);
        return;
    }

    /* The {queue} segment, into the caller's buffer (the request record
     * reads it). */
    if ((flags & WR_ROUTE_F_QUEUE) && m.param && !decode_queue(m.param, m.param_len, queue)) {
        wr_api__reply_error(a, req, route, 400, "INVALID_QUEUE_NAME",
                            "queue names match " WR_QUEUE_NAME_RULE, NULL, NULL, 0);
        return;
    }

    size_t blen;
    wr_http_req_body(req, &blen);
    if (blen > body_limit_of(flags)) { /* the layer answers 413 first: a backstop */
        wr_http_req_add_header(req, "Connection", "close");
        wr_api__reply_error(a, req, route, 413, "PAYLOAD_TOO_LARGE", "request body too large", NULL,
                            NULL, 0);
        return;
    }

    if ((flags & WR_ROUTE_F_HEAD_HTML) && wr_http_req_method(req) == WR_HTTP_M_HEAD) {
        /* HEAD must not join the line: GET's headers, no side effect. */
        wr_api__reply_html_head(a, req, route, 200);
        return;
    }

    if ((flags & WR_ROUTE_F_SECRET) && !wr_api_has_secret(a)) {
        wr_api__reply_error(a, req, route, 503, "STORE_UNAVAILABLE",
                            "the token secret is not loaded from the store yet", NULL, NULL,
                            wr_api__retry_after_unavailable(a));
        return;
    }

    wr_api__call_t call = {route,    queue,        m.param,       m.param_len,
                           m.param2, m.param2_len, admin_listener};
    handlers[route](a, req, &call);
}

/* ---------- lifecycle ---------- */

/* The admin key's MAC (compared in constant time by api_admin.c) from
 * cfg->admin_key; no key = the admin API refuses everything. */
static void set_admin_key(wr_api_t *a)
{
    size_t klen = strlen(a->cfg->admin_key);
    a->admin_enabled = klen > 0;
    if (klen > 0)
        wr_crypto_hmac_sha256(a->admin_mac_key, sizeof(a->admin_mac_key), a->cfg->admin_key, klen,
                              a->admin_mac);
    else
        wr_crypto_wipe(a->admin_mac, sizeof(a->admin_mac));
}

wr_err_t wr_api_new(const wr_api_opts_t *opts, wr_api_t **out)
{
    wr_api_t *a = calloc(1, sizeof(*a));
    if (!a)
        return WR_ENOMEM;
    wr_freelist_init(&a->free_ctx, sizeof(wr_api__ctx_t), WR_API_FREE_CTX_MAX);
    a->base = opts->base;
    a->store = opts->store;
    a->sched = opts->sched;
    a->metrics = opts->metrics;
    a->cfg = opts->cfg;
    a->web = opts->web;
    wr_rng_seed_random(&a->rng);
    if (wr_crypto_random(a->admin_mac_key, sizeof(a->admin_mac_key)) != WR_OK) {
        free(a);
        return WR_EIO;
    }
    a->n_keys = 1; /* keys[0].len stays 0 until a secret is installed */
    a->keys[0].secret = a->secret;
    a->admin_separate = a->cfg->admin_listen[0] != '\0';
    a->cur_queue = "";
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
    /* degraded mode */
    if (wr_failopen_new(a->base, a->store, &a->failopen) != WR_OK) {
        wr_ratelimit_free(a->join_rl);
        wr_ratelimit_free(a->poll_rl);
        free(a);
        return WR_ENOMEM;
    }
    /* Without it every poll records last-seen: slower on Redis, still
     * right. A store whose recording is free (the embedded one) needs none:
     * the cache's lookup would cost a poll more than it saves. */
    if (!wr_store_quiet_saves(a->store) || wr_seencache_new(0, &a->seen) != WR_OK)
        a->seen = NULL;
    set_admin_key(a);
    if (a->metrics) {
        wr_metric_defs_describe(a->metrics, WR_METRICS_GROUP_API);
        wr_metrics_set(a->metrics, "waitroom_build_info", "version=\"" WR_VERSION "\"", 1);
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
        wr_crypto_cookie_key(a->cfg->cookie_secret_previous, a->cfg->cookie_secret_previous_len,
                             a->prev_cookie_key);
        a->has_prev_cookie_key = true;
    } else if (a->cfg->cookie_secret_len == 0 && a->prev_secret_len > 0) {
        wr_crypto_cookie_key(a->prev_secret, a->prev_secret_len, a->prev_cookie_key);
        a->has_prev_cookie_key = true;
    }
}

/* The cookie keys, from the configured cookie secrets or the token
 * secrets. */
static void derive_cookie_keys(wr_api_t *a)
{
    if (a->cfg->cookie_secret_len > 0)
        wr_crypto_cookie_key(a->cfg->cookie_secret, a->cfg->cookie_secret_len, a->cookie_key);
    else
        wr_crypto_cookie_key(a->secret, a->secret_len, a->cookie_key);
    a->cookie_key_len = sizeof a->cookie_key;
    set_previous_cookie_key(a);
}

/* Copies secret (len bytes, cut to cap; it may be buf itself) to buf and
 * makes key the signing key over it, named by its kid ("" for an empty
 * secret). Returns the length kept. */
static size_t install_key(wr_token_key_t *key, uint8_t *buf, size_t cap, const uint8_t *secret,
                          size_t len)
{
    if (len > cap)
        len = cap;
    memmove(buf, secret, len);
    key->secret = buf;
    key->len = len;
    if (wr_token_kid(buf, len, key->kid) != WR_OK)
        key->kid[0] = '\0';
    return len;
}

/* The join challenge key of slot i (0 current, 1 previous) from secret
 * (len bytes; 0 = none). */
static void set_challenge_key(wr_api_t *a, int i, const uint8_t *secret, size_t len)
{
    wr_challenge_key_free(a->challenge_keys[i]);
    a->challenge_keys[i] = len > 0 ? wr_challenge_key_new(secret, len) : NULL;
    wr_api__captcha_set_key(a, i, secret, len); /* the CAPTCHA hook's fallback */
}

void wr_api_set_logsign(wr_api_t *a, struct wr_logsign *ls)
{
    a->logsign = ls;
}

void wr_api_set_secret(wr_api_t *a, const uint8_t *secret, size_t len)
{
    a->secret_len = install_key(&a->keys[0], a->secret, sizeof a->secret, secret, len);
    derive_cookie_keys(a);
    set_challenge_key(a, 0, a->secret, a->secret_len);
}

void wr_api_reload(wr_api_t *a)
{
    set_admin_key(a);
    if (a->secret_len > 0)
        derive_cookie_keys(a);
}

void wr_api_set_previous_secret(wr_api_t *a, const uint8_t *secret, size_t len)
{
    a->prev_secret_len =
        install_key(&a->keys[1], a->prev_secret, sizeof a->prev_secret, secret, len);
    a->n_keys = a->prev_secret_len > 0 ? 2 : 1;
    set_previous_cookie_key(a);
    set_challenge_key(a, 1, a->prev_secret, a->prev_secret_len);
}

size_t wr_api_in_flight(const wr_api_t *a)
{
    return a->in_flight;
}

void wr_api_free(wr_api_t *a)
{
    if (!a)
        return;
    wr_crypto_wipe(a->secret, sizeof(a->secret));
    wr_crypto_wipe(a->cookie_key, sizeof(a->cookie_key));
    wr_crypto_wipe(a->prev_secret, sizeof(a->prev_secret));
    wr_crypto_wipe(a->prev_cookie_key, sizeof(a->prev_cookie_key));
    wr_challenge_key_free(a->challenge_keys[0]);
    wr_challenge_key_free(a->challenge_keys[1]);
    wr_api__captcha_free(a);
    wr_api__client_free(a);
    wr_api__push_free(a);
    wr_ratelimit_free(a->join_rl);
    wr_ratelimit_free(a->poll_rl);
    wr_failopen_free(a->failopen); /* degraded mode */
    wr_seencache_free(a->seen);
    wr_freelist_clear(&a->free_ctx);
    free(a);
}
