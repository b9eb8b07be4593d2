/*
 * api.c - the route handlers of waitroomd.
 *
 * Flow of a request: route (router.c) -> validate the queue name -> check
 * the body against the route's limit -> identity (cookie or header) -> one
 * store operation -> reply. Nothing changes state before all validation has
 * passed, so an error never changes state.
 *
 * Contexts: a store-backed request allocates one ctx_t, freed right after
 * its reply. The store calls back exactly once (store.h contract), so every
 * ctx is freed exactly once; in_flight counts them for graceful shutdown.
 * If the client went away meanwhile, evhttp frees the request when we reply
 * (libevent 2.1.12 evhttp_send), so late replies are safe (case K07).
 *
 * Tokens: the store keeps the token's jti, issue time and expiry; the JWT is
 * signed here, deterministically, by whichever instance answers (same
 * claims + same secret = same token). consume/verify check the signature
 * (constant time) before the store is touched; the store then checks that
 * the jti is the user's live token and (consume) deletes it atomically.
 *
 * Abuse controls (security section below, docs/SECURITY.md): joins are
 * limited per client address (token bucket; X-Forwarded-For counts only
 * from trusted proxies), and status polls per identity (queue + user) are
 * paced: a poll sooner than poll_min_fraction x the retryAfterMs we gave
 * spends an "early" credit, and with none left is 429 RATE_LIMITED. Both
 * run before anything else of the request, so a refused request costs no
 * store call and mints no visitor. A separate admin listener, when
 * configured, is the only one that serves the admin API.
 *
 * Keys: tokens are signed with the current secret and its kid, verified
 * against current + previous (rotation); visitor cookies likewise.
 *
 * Hot path (status polls): one store round trip, no malloc (contexts come from a free list), the
 * reply written with snprintf (only integers and fixed strings: no
 * escaping needed), no JSON library.
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

#define RETRY_AFTER_UNAVAILABLE_S 2

#define N_LABEL_STATUSES 12 /* label_statuses[] in count_request */

struct wr_api {
    struct event_base *base;
    wr_store_t *store;
    wr_scheduler_t *sched;
    wr_metrics_t *metrics;
    const wr_config_t *cfg;
    uint8_t secret[WR_SECRET_MAX];
    size_t secret_len;
    uint8_t cookie_key[32];
    size_t cookie_key_len;
    /* Rotation: the previous token secret and cookie key, still accepted. */
    wr_token_key_t keys[2]; /* [0] current (signs), [1] previous; n_keys used */
    size_t n_keys;
    uint8_t prev_secret[WR_SECRET_MAX];
    size_t prev_secret_len;
    uint8_t prev_cookie_key[32];
    bool has_prev_cookie_key;
    wr_ratelimit_t *join_rl;   /* per client address */
    wr_ratelimit_t *poll_rl;   /* per queue + user: pacing */
    bool admin_separate;       /* admin API only on the admin listener */
    uint8_t admin_mac_key[32]; /* random per process: admin key compare */
    uint8_t admin_mac[32];     /* HMAC(admin_mac_key, configured admin key) */
    bool admin_enabled;
    size_t in_flight;
    char request_labels[WR_ROUTE_COUNT][N_LABEL_STATUSES][64]; /* see count_request */
    struct ctx *free_ctx; /* recycled request contexts (no malloc per poll) */
    unsigned n_free_ctx;
    uint64_t rng;
};

typedef struct ctx {
    struct ctx *next_free;
    wr_api_t *api;
    struct evhttp_request *req;
    wr_route_t route;
    const char *op; /* store op label for metrics */
    int64_t t0_us;
    char queue[WR_QUEUE_NAME_MAX + 1];
    char user[WR_USER_ID_MAX + 1];
    char cookie[WR_VID_COOKIE_LEN + 1]; /* set on the reply when a visitor was created */
    wr_token_claims_t claims;
    json_t *body; /* admin PATCH body, owned */
} ctx_t;

/* ---------- small helpers ---------- */

static int64_t now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static double rand01(wr_api_t *a)
{
    /* xorshift64*: jitter needs spread, not secrecy. */
    a->rng ^= a->rng >> 12;
    a->rng ^= a->rng << 25;
    a->rng ^= a->rng >> 27;
    uint64_t r = a->rng * 2685821657736338717ULL;
    return (double)(r >> 11) / 9007199254740992.0;
}

/* Label strings of the request counter, built once per (route, status):
 * the hot path does no formatting. Statuses outside the table are
 * formatted on the spot. */
static const int label_statuses[N_LABEL_STATUSES] = {200, 204, 400, 401, 403, 404,
                                                     405, 408, 413, 429, 500, 503};

static void count_request(wr_api_t *a, wr_route_t route, int status)
{
    if (!a->metrics)
        return;
    char l[96];
    const char *labels = l;
    size_t i = 0;
    while (i < N_LABEL_STATUSES && label_statuses[i] != status)
        i++;
    if ((unsigned)route < WR_ROUTE_COUNT && i < N_LABEL_STATUSES) {
        char *slot = a->request_labels[route][i];
        if (!slot[0])
            snprintf(slot, sizeof(a->request_labels[0][0]), "route=\"%s\",status=\"%d\"",
                     wr_router_route_name(route), status);
        labels = slot;
    } else {
        snprintf(l, sizeof(l), "route=\"%s\",status=\"%d\"", wr_router_route_name(route), status);
    }
    wr_metrics_inc(a->metrics, "waitroom_http_requests_total", labels, 1);
}

static void reply_json(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                       const char *body, size_t len, int retry_after)
{
    count_request(a, route, status);
    wr_http_reply_json(req, status, body, len, retry_after);
}

static void reply_error(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                        const char *code, const char *message, const char *field,
                        const char *reason, int retry_after)
{
    count_request(a, route, status);
    wr_http_reply_error(req, status, code, message, field, reason, retry_after);
}

static void reply_empty(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status)
{
    count_request(a, route, status);
    wr_http_reply_empty(req, status);
}

static void reply_jansson(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                          json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(o);
    if (!s) {
        reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    reply_json(a, req, route, status, s, strlen(s), 0);
    free(s);
}

static void reply_unavailable(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                              wr_err_t err)
{
    reply_error(a, req, route, 503, "STORE_UNAVAILABLE", wr_strerror(err), NULL, NULL,
                RETRY_AFTER_UNAVAILABLE_S);
}

static ctx_t *ctx_new(wr_api_t *a, struct evhttp_request *req, wr_route_t route, const char *queue)
{
    ctx_t *c = a->free_ctx;
    if (c) {
        a->free_ctx = c->next_free;
        a->n_free_ctx--;
        memset(c, 0, sizeof(*c));
    } else if (!(c = calloc(1, sizeof(*c)))) {
        return NULL;
    }
    c->api = a;
    c->req = req;
    c->route = route;
    c->op = wr_router_route_name(route);
    if (queue)
        snprintf(c->queue, sizeof(c->queue), "%s", queue);
    c->t0_us = now_us();
    a->in_flight++;
    return c;
}

#define FREE_CTX_MAX 1024

static void ctx_free(ctx_t *c)
{
    wr_api_t *a = c->api;
    a->in_flight--;
    json_decref(c->body);
    if (a->n_free_ctx < FREE_CTX_MAX) {
        c->next_free = a->free_ctx;
        a->free_ctx = c;
        a->n_free_ctx++;
    } else {
        free(c);
    }
}

/* Records the store latency of c's operation. */
static void observe(ctx_t *c, wr_err_t err)
{
    wr_api_t *a = c->api;
    if (!a->metrics)
        return;
    char l[64];
    snprintf(l, sizeof(l), "op=\"%s\"", c->op);
    wr_metrics_observe(a->metrics, "waitroom_store_latency_seconds", l,
                       (double)(now_us() - c->t0_us) / 1e6);
    if (err != WR_OK && err != WR_ENOTFOUND && err != WR_ENOTINQUEUE && err != WR_EFULL &&
        err != WR_ETOKEN) {
        snprintf(l, sizeof(l), "op=\"%s\",error=\"%s\"", c->op, wr_errname(err));
        wr_metrics_inc(a->metrics, "waitroom_store_errors_total", l, 1);
    }
}

/* Maps a store error that is not a domain answer to a reply. */
static void reply_store_error(ctx_t *c, wr_err_t err)
{
    wr_api_t *a = c->api;
    switch (err) {
    case WR_ENOTFOUND:
        reply_error(a, c->req, c->route, 404, "QUEUE_NOT_FOUND", "no such queue", NULL, NULL, 0);
        break;
    case WR_ENOTINQUEUE:
        reply_error(a, c->req, c->route, 404, "NOT_IN_QUEUE",
                    "not waiting and holding no live token", NULL, NULL, 0);
        break;
    default:
        reply_unavailable(a, c->req, c->route, err);
        break;
    }
}

static void set_visitor_cookie(wr_api_t *a, struct evhttp_request *req, const char *value)
{
    char hdr[256];
    snprintf(hdr, sizeof(hdr), "%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Lax%s",
             WR_VID_COOKIE_NAME, value, WR_VID_COOKIE_MAX_AGE,
             a->cfg->cookie_secure ? "; Secure" : "");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie", hdr);
}

/* Whether a join answered err hands out the visitor cookie it minted: on
 * success, and on a store timeout or outage (the join may have been applied,
 * and the retry must come back as the same visitor). Not on a refusal
 * (unknown queue, full line): an error creates no visitor. */
static bool visitor_kept(wr_err_t err)
{
    return err == WR_OK || err == WR_ETIMEOUT || err == WR_EUNAVAILABLE;
}

static int retry_after_full(const wr_queue_config_t *cfg)
{
    uint32_t ms = cfg && cfg->n_poll_bands ? cfg->poll_bands[cfg->n_poll_bands - 1].ms : 5000;
    int s = (int)((ms + 999) / 1000);
    return s < 1 ? 1 : s;
}

/* ---------- security: rate limits (docs/SECURITY.md) ---------- */

/* The client address of req: the peer, or X-Forwarded-For's client when
 * the peer is a trusted proxy. */
static void client_addr(wr_api_t *a, struct evhttp_request *req, char *out, size_t cap)
{
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    char *peer = NULL;
    ev_uint16_t port = 0;
    if (evcon)
        evhttp_connection_get_peer(evcon, &peer, &port);
    /* Several X-Forwarded-For lines are one list, in order (RFC 9110 5.3):
     * a proxy that appends its own line leaves the address it saw in the
     * last one, so the first line alone would be the client's own claim.
     * The lines fit the 8 KiB header limit; if not, the last line is used. */
    char xff[8192];
    size_t used = 0;
    const char *last = NULL;
    bool fits = true;
    const struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
    for (const struct evkeyval *kv = ih->tqh_first; kv; kv = kv->next.tqe_next) {
        if (evutil_ascii_strcasecmp(kv->key, "X-Forwarded-For") != 0)
            continue;
        last = kv->value;
        size_t n = strlen(kv->value);
        if (used + n + 3 > sizeof(xff)) {
            fits = false;
            continue;
        }
        if (used) {
            memcpy(xff + used, ", ", 2);
            used += 2;
        }
        memcpy(xff + used, kv->value, n);
        used += n;
    }
    xff[used] = '\0';
    wr_ratelimit_client_addr(peer ? peer : "",
                             !last  ? NULL
                             : fits ? xff
                                    : last,
                             a->cfg->trusted_proxies, a->cfg->n_trusted_proxies, out, cap);
}

static void reply_rate_limited(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                               const char *kind, uint32_t retry_ms)
{
    if (a->metrics) {
        char l[32];
        snprintf(l, sizeof(l), "kind=\"%s\"", kind);
        wr_metrics_inc(a->metrics, "waitroom_rate_limited_total", l, 1);
    }
    int ra = (int)((retry_ms + 999) / 1000);
    reply_error(a, req, route, 429, "RATE_LIMITED",
                strcmp(kind, "join") == 0 ? "too many joins from this address"
                                          : "polling faster than retryAfterMs",
                NULL, NULL, ra < 1 ? 1 : ra);
}

/* Join limit: returns true when req was refused (answered 429). */
static bool join_limited(wr_api_t *a, struct evhttp_request *req, wr_route_t route)
{
    if (!wr_ratelimit_enabled(a->join_rl))
        return false;
    char addr[64];
    uint32_t ms = 0;
    client_addr(a, req, addr, sizeof(addr));
    if (wr_ratelimit_take(a->join_rl, addr, strlen(addr), &ms))
        return false;
    reply_rate_limited(a, req, route, "join", ms);
    return true;
}

/* "queue\0user": the pacing key of an identity in a queue. */
static size_t pace_key(const char *queue, const char *user, char *key, size_t cap)
{
    int n = snprintf(key, cap, "%s%c%s", queue, 0, user);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* Poll pacing: returns true when req was refused (answered 429). */
static bool poll_limited(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                         const char *queue, const char *user)
{
    if (!wr_ratelimit_enabled(a->poll_rl))
        return false;
    char key[WR_QUEUE_NAME_MAX + WR_USER_ID_MAX + 2];
    uint32_t ms = 0;
    if (wr_ratelimit_pace_check(a->poll_rl, key, pace_key(queue, user, key, sizeof(key)), &ms))
        return false;
    reply_rate_limited(a, req, route, "poll", ms);
    return true;
}

/* After an answer: a waiting identity was told to come back in retry_ms
 * (retry_ms 0 = not waiting any more: forget it). */
static void pace_note(wr_api_t *a, const char *queue, const char *user, uint32_t retry_ms)
{
    if (!wr_ratelimit_enabled(a->poll_rl))
        return;
    char key[WR_QUEUE_NAME_MAX + WR_USER_ID_MAX + 2];
    size_t n = pace_key(queue, user, key, sizeof(key));
    if (retry_ms == 0)
        wr_ratelimit_forget(a->poll_rl, key, n);
    else
        wr_ratelimit_pace_note(a->poll_rl, key, n,
                               (uint32_t)((double)retry_ms * a->cfg->poll_min_fraction));
}

/* ---------- join / status / leave ---------- */

/* Signs the entry token of an admitted entry (the store keeps jti, issue
 * time and expiry; the JWT is made here, the same on every instance). */
static wr_err_t sign_entry_token(wr_api_t *a, const ctx_t *c, const wr_entry_t *e, char *tok,
                                 size_t cap)
{
    wr_token_claims_t cl;
    memset(&cl, 0, sizeof(cl));
    snprintf(cl.queue, sizeof(cl.queue), "%s", c->queue);
    snprintf(cl.user, sizeof(cl.user), "%s", c->user);
    snprintf(cl.jti, sizeof(cl.jti), "%s", e->jti);
    cl.iat = e->issued_at_us / 1000000;
    cl.exp = e->expires_at_us / 1000000;
    return wr_token_sign_key(&cl, &a->keys[0], tok, cap);
}

static void reply_entry(ctx_t *c, const wr_entry_t *e)
{
    wr_api_t *a = c->api;
    char buf[WR_TOKEN_MAX + 256];
    int n = 0;
    if (e->config)
        wr_scheduler_note(a->sched, c->queue, e->config);
    switch (e->state) {
    case WR_ENTRY_WAITING: {
        const wr_queue_config_t *cfg = e->config;
        double observed = wr_scheduler_observed_rate(a->sched, c->queue);
        int64_t eta = cfg ? wr_queue_eta_seconds(cfg, e->position, observed) : -1;
        uint32_t retry = cfg ? wr_queue_retry_after_ms(cfg, e->position, rand01(a)) : 5000;
        pace_note(a, c->queue, c->user, retry);
        char etas[24];
        if (eta < 0)
            snprintf(etas, sizeof(etas), "null");
        else
            snprintf(etas, sizeof(etas), "%lld", (long long)eta);
        n = snprintf(buf, sizeof(buf),
                     "{\"status\":\"waiting\",\"position\":%llu,\"ahead\":%llu,\"waiting\":%llu,"
                     "\"etaSeconds\":%s,\"retryAfterMs\":%u}",
                     (unsigned long long)e->position,
                     (unsigned long long)(e->position ? e->position - 1 : 0),
                     (unsigned long long)e->waiting, etas, retry);
        break;
    }
    case WR_ENTRY_ADMITTED: {
        pace_note(a, c->queue, c->user, 0);
        char tok[WR_TOKEN_MAX + 1];
        if (sign_entry_token(a, c, e, tok, sizeof(tok)) != WR_OK) {
            reply_error(a, c->req, c->route, 500, "INTERNAL", "could not sign the token", NULL,
                        NULL, 0);
            return;
        }
        n = snprintf(buf, sizeof(buf),
                     "{\"status\":\"admitted\",\"token\":\"%s\",\"expiresAt\":%lld}", tok,
                     (long long)(e->expires_at_us / 1000));
        break;
    }
    case WR_ENTRY_PASSTHROUGH:
    default:
        n = snprintf(buf, sizeof(buf), "{\"status\":\"passthrough\"}");
        break;
    }
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        reply_error(a, c->req, c->route, 500, "INTERNAL", "reply too large", NULL, NULL, 0);
        return;
    }
    reply_json(a, c->req, c->route, 200, buf, (size_t)n, 0);
}

static void entry_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    ctx_t *c = arg;
    observe(c, err);
    if (c->cookie[0] && visitor_kept(err))
        set_visitor_cookie(c->api, c->req, c->cookie);
    if (err == WR_OK && e) {
        reply_entry(c, e);
    } else if (err == WR_EFULL) {
        const wr_queue_config_t *cfg = e ? e->config : NULL;
        reply_error(c->api, c->req, c->route, 429, "QUEUE_FULL", "the line is full", NULL, NULL,
                    retry_after_full(cfg));
    } else {
        reply_store_error(c, err);
    }
    ctx_free(c);
}

static void done_cb(wr_err_t err, void *arg)
{
    ctx_t *c = arg;
    observe(c, err);
    if (c->route == WR_ROUTE_LEAVE && c->user[0])
        pace_note(c->api, c->queue, c->user, 0);
    if (err == WR_OK)
        reply_empty(c->api, c->req, c->route, 204);
    else
        reply_store_error(c, err);
    ctx_free(c);
}

/*
 * Finds the user for a request. Returns 0 and fills user; 1 when the
 * request has been answered (400); 2 in cookie mode when there is no valid
 * visitor cookie and `create` is false (the caller answers). With `create`
 * (join), a missing or unverifiable cookie mints a new visitor. cookie_out
 * gets the cookie value to set: on every join, and on a poll when the
 * cookie is due for renewal (wr_identity_should_renew).
 */
static int resolve_user(wr_api_t *a, struct evhttp_request *req, wr_route_t route, bool create,
                        char user[WR_USER_ID_MAX + 1], char cookie_out[WR_VID_COOKIE_LEN + 1])
{
    struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
    cookie_out[0] = 0;
    if (a->cfg->identity == WR_IDENTITY_HEADER) {
        const char *v = evhttp_find_header(ih, a->cfg->identity_header);
        if (!v || !*v || !wr_qconfig_valid_user_id(v)) {
            reply_error(a, req, route, 400, "INVALID_USER_ID",
                        !v || !*v ? "missing identity header" : "invalid user id", NULL, NULL, 0);
            return 1;
        }
        snprintf(user, WR_USER_ID_MAX + 1, "%s", v);
        return 0;
    }
    /* Every Cookie field, every wr_vid in it: the first that verifies under
     * the current or the previous key (rotation) is the visitor. */
    wr_identity_keys_t keys = {a->cookie_key, a->cookie_key_len,
                               a->has_prev_cookie_key ? a->prev_cookie_key : NULL,
                               sizeof(a->prev_cookie_key)};
    wr_identity_visitor_t vis;
    int64_t now_s = (int64_t)time(NULL);
    if (wr_http_visitor(req, &keys, &vis)) {
        snprintf(user, WR_USER_ID_MAX + 1, "%s", vis.vid);
        if (create || (route == WR_ROUTE_STATUS && wr_identity_should_renew(&vis, now_s)))
            wr_identity_sign(a->cookie_key, a->cookie_key_len, vis.vid, now_s, cookie_out);
        return 0;
    }
    if (!create)
        return 2; /* no visitor: the caller answers (the queue may not exist either) */
    char vid[WR_VID_LEN + 1];
    if (wr_identity_mint(a->cookie_key, a->cookie_key_len, now_s, vid, cookie_out) != WR_OK) {
        reply_error(a, req, route, 500, "INTERNAL", "could not create a visitor", NULL, NULL, 0);
        return 1;
    }
    snprintf(user, WR_USER_ID_MAX + 1, "%s", vid);
    return 0;
}

/* GET/DELETE entries/me without a valid visitor cookie: 404 NOT_IN_QUEUE,
 * or 404 QUEUE_NOT_FOUND when the queue does not exist either (one store
 * read when this instance does not know the queue). Sets no cookie. */
static void no_visitor_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    ctx_t *c = arg;
    observe(c, err);
    if (err == WR_OK && info) {
        wr_scheduler_note(c->api->sched, c->queue, info->config);
        reply_error(c->api, c->req, c->route, 404, "NOT_IN_QUEUE", "no visitor cookie", NULL, NULL,
                    0);
    } else {
        reply_store_error(c, err);
    }
    ctx_free(c);
}

static void no_visitor(wr_api_t *a, struct evhttp_request *req, wr_route_t route, const char *queue)
{
    if (wr_scheduler_config(a->sched, queue)) {
        reply_error(a, req, route, 404, "NOT_IN_QUEUE", "no visitor cookie", NULL, NULL, 0);
        return;
    }
    ctx_t *c = ctx_new(a, req, route, queue);
    if (!c) {
        reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    c->op = "queue_get";
    if (wr_store_queue_get(a->store, queue, no_visitor_cb, c) != WR_OK) {
        reply_unavailable(a, req, route, WR_EUNAVAILABLE);
        ctx_free(c);
    }
}

static void handle_entries(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                           const char *queue)
{
    char user[WR_USER_ID_MAX + 1];
    char cookie[WR_VID_COOKIE_LEN + 1];
    if (route == WR_ROUTE_JOIN && join_limited(a, req, route))
        return;
    int who = resolve_user(a, req, route, route == WR_ROUTE_JOIN, user, cookie);
    if (who == 2) {
        no_visitor(a, req, route, queue);
        return;
    }
    if (who)
        return;
    if (route == WR_ROUTE_STATUS && poll_limited(a, req, route, queue, user))
        return;
    ctx_t *c = ctx_new(a, req, route, queue);
    if (!c) {
        reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    snprintf(c->user, sizeof(c->user), "%s", user);
    memcpy(c->cookie, cookie, sizeof(c->cookie));
    wr_err_t err;
    if (route == WR_ROUTE_JOIN)
        err = wr_store_join(a->store, queue, user, entry_cb, c);
    else if (route == WR_ROUTE_STATUS)
        err = wr_store_status(a->store, queue, user, entry_cb, c);
    else
        err = wr_store_leave(a->store, queue, user, done_cb, c);
    if (err != WR_OK) {
        if (c->cookie[0] && visitor_kept(err))
            set_visitor_cookie(a, req, c->cookie);
        reply_unavailable(a, req, route, err);
        ctx_free(c);
    }
}

/* ---------- tokens: consume / verify ---------- */

/* Extracts "Bearer X" into tok (cap bytes). Returns true if present. */
static bool bearer(struct evkeyvalq *ih, const char **tok, size_t *len)
{
    const char *v = evhttp_find_header(ih, "Authorization");
    if (!v)
        return false;
    if (strncasecmp(v, "Bearer ", 7) != 0)
        return false;
    v += 7;
    while (*v == ' ')
        v++;
    *tok = v;
    *len = strlen(v);
    return *len > 0;
}

static void token_fail_policy(ctx_t *c, wr_err_t err)
{
    wr_api_t *a = c->api;
    const wr_queue_config_t *cfg = wr_scheduler_config(a->sched, c->queue);
    wr_fail_policy_t p = cfg ? cfg->fail_policy : WR_FAIL_LIMITED;
    if (c->route == WR_ROUTE_VERIFY || p == WR_FAIL_CLOSED) {
        reply_unavailable(a, c->req, c->route, err);
        return;
    }
    if (p == WR_FAIL_LIMITED &&
        !wr_scheduler_take_fail_open(a->sched, c->queue, wr_scheduler_now_ms())) {
        reply_error(a, c->req, c->route, 429, "FAIL_OPEN_LIMITED",
                    "store unavailable and the fail-open budget is spent", NULL, NULL, 1);
        return;
    }
    if (a->metrics) {
        char l[WR_QUEUE_NAME_MAX + 16];
        snprintf(l, sizeof(l), "queue=\"%s\"", c->queue);
        wr_metrics_inc(a->metrics, "waitroom_fail_open_passthrough_total", l, 1);
    }
    static const char body[] = "{\"valid\":true,\"passthrough\":true,\"failOpen\":true}";
    reply_json(a, c->req, c->route, 200, body, sizeof(body) - 1, 0);
}

/* A disabled queue (passthrough): verify answers 204, consume
 * {"valid":true,"passthrough":true}. */
static void reply_passthrough(wr_api_t *a, struct evhttp_request *req, wr_route_t route)
{
    static const char body[] = "{\"valid\":true,\"passthrough\":true}";
    if (route == WR_ROUTE_VERIFY)
        reply_empty(a, req, route, 204);
    else
        reply_json(a, req, route, 200, body, sizeof(body) - 1, 0);
}

static void token_cb(wr_err_t err, const wr_token_check_t *res, void *arg)
{
    ctx_t *c = arg;
    wr_api_t *a = c->api;
    observe(c, err);
    if (err == WR_OK && res && res->passthrough) {
        reply_passthrough(a, c->req, c->route);
    } else if (err == WR_OK) {
        if (c->route == WR_ROUTE_VERIFY) {
            reply_empty(a, c->req, c->route, 204);
        } else {
            json_t *o = json_pack("{s:b,s:s}", "valid", 1, "userId", c->claims.user);
            reply_jansson(a, c->req, c->route, 200, o);
        }
    } else if (err == WR_ETOKEN) {
        wr_token_reason_t r = res ? res->reason : WR_TOKEN_CONSUMED;
        /* A token past its expiry may already have been swept from the
         * store (not live = "consumed"); name the better reason. */
        if (r == WR_TOKEN_CONSUMED && c->claims.exp <= (int64_t)time(NULL))
            r = WR_TOKEN_EXPIRED;
        reply_error(a, c->req, c->route, 403, "INVALID_TOKEN", "the token is not valid", NULL,
                    wr_token_reason_name(r), 0);
    } else if (err == WR_ENOTFOUND) {
        reply_store_error(c, err);
    } else {
        token_fail_policy(c, err);
    }
    ctx_free(c);
}

/* After the queue is known to exist (or the cache says so): check the
 * token and call the store. */
static void token_check(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                        const char *queue, const char *tok, size_t tok_len, const char *want_user)
{
    if (!tok || tok_len == 0) {
        if (route == WR_ROUTE_VERIFY)
            reply_error(a, req, route, 401, "UNAUTHORIZED", "no token", NULL, "missing", 0);
        else
            reply_error(a, req, route, 403, "INVALID_TOKEN", "no token given", NULL, "missing", 0);
        return;
    }
    wr_token_claims_t cl;
    /* The JWT's exp is the store's expiry rounded down to the second; one
     * second of grace here means the signature check never refuses a token
     * the store still holds live: the store's microsecond expiry decides. */
    wr_token_reason_t r =
        wr_token_verify_keys(tok, tok_len, a->keys, a->n_keys, (int64_t)time(NULL) - 1, &cl);
    if (r == WR_TOKEN_OK && strcmp(cl.queue, queue) != 0)
        r = WR_TOKEN_WRONG_QUEUE;
    if (r == WR_TOKEN_OK && want_user && strcmp(want_user, cl.user) != 0)
        r = WR_TOKEN_USER_MISMATCH;
    if (r != WR_TOKEN_OK) {
        if (a->metrics) {
            char l[64];
            snprintf(l, sizeof(l), "reason=\"%s\"", wr_token_reason_name(r));
            wr_metrics_inc(a->metrics, "waitroom_tokens_rejected_total", l, 1);
        }
        reply_error(a, req, route, 403, "INVALID_TOKEN", "the token is not valid", NULL,
                    wr_token_reason_name(r), 0);
        return;
    }
    ctx_t *c = ctx_new(a, req, route, queue);
    if (!c) {
        reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    c->claims = cl;
    wr_err_t err = route == WR_ROUTE_CONSUME
                       ? wr_store_consume(a->store, queue, cl.user, cl.jti, token_cb, c)
                       : wr_store_verify(a->store, queue, cl.user, cl.jti, token_cb, c);
    if (err != WR_OK) {
        token_fail_policy(c, err);
        ctx_free(c);
    }
}

/* A request for a queue this instance does not know yet: ask the store
 * whether it exists (and cache its config), then continue. */
typedef struct {
    ctx_t *c;
    char tok[WR_TOKEN_MAX + 1];
    size_t tok_len;
    bool has_user;
    char want_user[WR_USER_ID_MAX + 1];
} pending_token_t;

static void token_queue_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    pending_token_t *p = arg;
    ctx_t *c = p->c;
    wr_api_t *a = c->api;
    observe(c, err);
    if (err == WR_OK && info && info->config) {
        wr_scheduler_note(a->sched, c->queue, info->config);
        if (!info->config->enabled) {
            reply_passthrough(a, c->req, c->route);
        } else {
            token_check(a, c->req, c->route, c->queue, p->tok, p->tok_len,
                        p->has_user ? p->want_user : NULL);
        }
    } else if (err == WR_ENOTFOUND) {
        reply_store_error(c, err);
    } else {
        reply_unavailable(a, c->req, c->route, err);
    }
    ctx_free(c);
    free(p);
}

static void handle_tokens(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                          const char *queue)
{
    struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
    const char *tok = NULL;
    size_t tok_len = 0;
    const char *want_user = NULL;
    json_t *body = NULL;
    char cookie_tok_name[WR_QUEUE_NAME_MAX + 16];

    if (route == WR_ROUTE_CONSUME) {
        struct evbuffer *in = evhttp_request_get_input_buffer(req);
        size_t blen = evbuffer_get_length(in);
        if (blen > 0) {
            const char *data = (const char *)evbuffer_pullup(in, -1);
            json_error_t jerr;
            body = data ? json_loadb(data, blen, 0, &jerr) : NULL;
            if (!json_is_object(body)) {
                json_decref(body);
                reply_error(a, req, route, 400, "BAD_REQUEST",
                            "body must be a JSON object {\"token\":...,\"userId\":...}", NULL, NULL,
                            0);
                return;
            }
            json_t *jt = json_object_get(body, "token");
            json_t *ju = json_object_get(body, "userId");
            if ((jt && !json_is_string(jt) && !json_is_null(jt)) ||
                (ju && !json_is_string(ju) && !json_is_null(ju))) {
                json_decref(body);
                reply_error(a, req, route, 400, "BAD_REQUEST", "token and userId must be strings",
                            NULL, NULL, 0);
                return;
            }
            if (json_is_string(ju))
                want_user = json_string_value(ju);
            if (json_is_string(jt)) {
                tok = json_string_value(jt);
                tok_len = json_string_length(jt);
            }
        }
        const char *bt;
        size_t bl;
        if (bearer(ih, &bt, &bl)) {
            tok = bt;
            tok_len = bl;
        }
    } else {
        const char *bt;
        size_t bl;
        if (bearer(ih, &bt, &bl)) {
            tok = bt;
            tok_len = bl;
        } else if ((bt = evhttp_find_header(ih, "X-Waitroom-Token")) != NULL && *bt) {
            tok = bt;
            tok_len = strlen(bt);
        } else {
            snprintf(cookie_tok_name, sizeof(cookie_tok_name), "wr_token_%s", queue);
            tok = wr_http_cookie(req, cookie_tok_name, &tok_len);
        }
    }

    const wr_queue_config_t *cfg = wr_scheduler_config(a->sched, queue);
    if (cfg) {
        if (!cfg->enabled) {
            reply_passthrough(a, req, route);
        } else {
            token_check(a, req, route, queue, tok, tok_len, want_user);
        }
        json_decref(body);
        return;
    }
    /* Unknown here: one read to learn whether the queue exists. */
    pending_token_t *p = calloc(1, sizeof(*p));
    ctx_t *c = p ? ctx_new(a, req, route, queue) : NULL;
    if (!c) {
        free(p);
        json_decref(body);
        reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    c->op = "queue_get";
    p->c = c;
    if (tok && tok_len <= WR_TOKEN_MAX) {
        memcpy(p->tok, tok, tok_len);
        p->tok_len = tok_len;
    } else if (tok) {
        /* Too long to be ours: keep a marker that fails as malformed. */
        memcpy(p->tok, "x", 1);
        p->tok_len = 1;
    }
    if (want_user) {
        p->has_user = true;
        /* A userId too long to be a user id matches no token: kept as "",
         * which no token's subject equals (never cut to the buffer). */
        if (strlen(want_user) <= WR_USER_ID_MAX)
            snprintf(p->want_user, sizeof(p->want_user), "%s", want_user);
        else
            p->want_user[0] = '\0';
    }
    json_decref(body);
    if (wr_store_queue_get(a->store, queue, token_queue_cb, p) != WR_OK) {
        reply_unavailable(a, req, route, WR_EUNAVAILABLE);
        ctx_free(c);
        free(p);
    }
}

/* ---------- admin ---------- */

static bool admin_ok(wr_api_t *a, struct evhttp_request *req)
{
    if (!a->admin_enabled)
        return false;
    const char *tok;
    size_t len;
    if (!bearer(evhttp_request_get_input_headers(req), &tok, &len))
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
    ctx_t *c = arg;
    observe(c, err);
    if (err == WR_OK && info) {
        wr_scheduler_note(c->api->sched, c->queue, info->config);
        reply_jansson(c->api, c->req, c->route, 200, info_json(c->api, info));
    } else {
        reply_store_error(c, err);
    }
    ctx_free(c);
}

static void admin_list_cb(wr_err_t err, const wr_queue_info_t *infos, size_t n, void *arg)
{
    ctx_t *c = arg;
    observe(c, err);
    if (err != WR_OK) {
        reply_store_error(c, err);
        ctx_free(c);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        json_array_append_new(arr, info_json(c->api, &infos[i]));
    reply_jansson(c->api, c->req, c->route, 200, json_pack("{s:o}", "queues", arr));
    ctx_free(c);
}

typedef struct {
    ctx_t *c;
    wr_queue_config_t cfg;
} put_t;

static void admin_put_cb(wr_err_t err, void *arg)
{
    put_t *p = arg;
    ctx_t *c = p->c;
    observe(c, err);
    if (err == WR_OK) {
        wr_scheduler_set_config(c->api->sched, c->queue, &p->cfg);
        reply_jansson(c->api, c->req, c->route, 200, wr_qconfig_to_json(&p->cfg));
    } else {
        reply_store_error(c, err);
    }
    ctx_free(c);
    free(p);
}

static void do_put(ctx_t *c, const wr_queue_config_t *cfg)
{
    put_t *p = calloc(1, sizeof(*p));
    if (!p) {
        reply_error(c->api, c->req, c->route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        ctx_free(c);
        return;
    }
    p->c = c;
    p->cfg = *cfg;
    c->op = "config_put";
    c->t0_us = now_us();
    wr_err_t err = wr_store_config_put(c->api->store, c->queue, &p->cfg, admin_put_cb, p);
    if (err != WR_OK) {
        reply_unavailable(c->api, c->req, c->route, err);
        ctx_free(c);
        free(p);
    }
}

static void admin_patch_get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    ctx_t *c = arg;
    observe(c, err);
    if (err != WR_OK || !info) {
        reply_store_error(c, err);
        ctx_free(c);
        return;
    }
    wr_queue_config_t cfg;
    char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
    if (wr_qconfig_patch(info->config, c->body, &cfg, field, sizeof(field), msg, sizeof(msg)) !=
        WR_OK) {
        reply_error(c->api, c->req, c->route, 400, "INVALID_CONFIG", msg, field, NULL, 0);
        ctx_free(c);
        return;
    }
    do_put(c, &cfg);
}

static void handle_admin(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                         const char *queue)
{
    if (!admin_ok(a, req)) {
        reply_error(a, req, route, 401, "UNAUTHORIZED", "admin key required (Bearer)", NULL, NULL,
                    0);
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
            reply_error(a, req, route, 400, "BAD_REQUEST", "body must be a JSON object", NULL, NULL,
                        0);
            return;
        }
    }
    if (route == WR_ROUTE_ADMIN_PUT) {
        wr_queue_config_t cfg;
        char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
        wr_err_t err = wr_qconfig_parse(body, &cfg, field, sizeof(field), msg, sizeof(msg));
        json_decref(body);
        if (err != WR_OK) {
            reply_error(a, req, route, 400, "INVALID_CONFIG", msg, field, NULL, 0);
            return;
        }
        ctx_t *c = ctx_new(a, req, route, queue);
        if (!c) {
            reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
            return;
        }
        do_put(c, &cfg);
        return;
    }
    ctx_t *c = ctx_new(a, req, route, queue);
    if (!c) {
        json_decref(body);
        reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
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
        err = wr_store_queue_delete(a->store, queue, done_cb, c);
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
        reply_unavailable(a, req, route, err);
        ctx_free(c);
    }
}

/* ---------- operations ---------- */

static void ready_cb(wr_err_t err, void *arg)
{
    ctx_t *c = arg;
    observe(c, err);
    if (err == WR_OK && wr_api_has_secret(c->api)) {
        static const char body[] = "{\"status\":\"ready\"}";
        reply_json(c->api, c->req, c->route, 200, body, sizeof(body) - 1, 0);
    } else {
        reply_unavailable(c->api, c->req, c->route, err == WR_OK ? WR_EUNAVAILABLE : err);
    }
    ctx_free(c);
}

static void handle_metrics(wr_api_t *a, struct evhttp_request *req)
{
    if (!a->metrics) {
        reply_error(a, req, WR_ROUTE_METRICS, 404, "NOT_FOUND", "metrics disabled", NULL, NULL, 0);
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
    count_request(a, WR_ROUTE_METRICS, 200);
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

/* ---------- pages: the queue page, the dashboard, static assets ---------- */

static void reply_html(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                       char *html, size_t len)
{
    if (!html) {
        reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Content-Type", "text/html; charset=utf-8");
    evhttp_add_header(oh, "Cache-Control", "no-store");
    evhttp_add_header(oh, "X-Content-Type-Options", "nosniff");
    evhttp_add_header(oh, "Content-Security-Policy",
                      "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                      "script-src 'self'; connect-src 'self'; frame-ancestors 'none'");
    count_request(a, route, status);
    wr_http_send(req, status, html, len, false);
    free(html);
}

static void page_entry_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    ctx_t *c = arg;
    wr_api_t *a = c->api;
    observe(c, err);
    const char *al =
        evhttp_find_header(evhttp_request_get_input_headers(c->req), "Accept-Language");
    wr_page_view_t v;
    memset(&v, 0, sizeof(v));
    v.queue = c->queue;
    v.lang = wr_page_lang(al);
    v.eta_seconds = -1;
    v.target_url = "";
    int status = 200;
    if (c->cookie[0] && visitor_kept(err))
        set_visitor_cookie(a, c->req, c->cookie);
    if (err == WR_OK && e) {
        const wr_queue_config_t *cfg = e->config;
        if (cfg) {
            wr_scheduler_note(a->sched, c->queue, cfg);
            v.target_url = cfg->target_url;
        }
        if (e->state == WR_ENTRY_WAITING) {
            v.state = "waiting";
            v.position = e->position;
            v.waiting = e->waiting;
            if (cfg) {
                v.eta_seconds = wr_queue_eta_seconds(
                    cfg, e->position, wr_scheduler_observed_rate(a->sched, c->queue));
                v.retry_after_ms = wr_queue_retry_after_ms(cfg, e->position, rand01(a));
                pace_note(a, c->queue, c->user, v.retry_after_ms);
            }
        } else if (e->state == WR_ENTRY_ADMITTED) {
            v.state = "admitted";
            char tok[WR_TOKEN_MAX + 1];
            if (sign_entry_token(a, c, e, tok, sizeof(tok)) == WR_OK) {
                char hdr[WR_TOKEN_MAX + 160];
                long long max_age = (long long)(e->expires_at_us / 1000000 - (int64_t)time(NULL));
                snprintf(hdr, sizeof(hdr), "wr_token_%s=%s; Path=/; Max-Age=%lld; SameSite=Lax%s",
                         c->queue, tok, max_age > 0 ? max_age : 1,
                         a->cfg->cookie_secure ? "; Secure" : "");
                evhttp_add_header(evhttp_request_get_output_headers(c->req), "Set-Cookie", hdr);
            }
        } else {
            v.state = "passthrough";
        }
    } else if (err == WR_EFULL) {
        v.state = "full";
        status = 429;
        evhttp_add_header(evhttp_request_get_output_headers(c->req), "Retry-After", "5");
    } else if (err == WR_ENOTFOUND) {
        v.state = "notfound";
        status = 404;
    } else {
        v.state = "unavailable";
        status = 503;
        evhttp_add_header(evhttp_request_get_output_headers(c->req), "Retry-After", "2");
    }
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    reply_html(a, c->req, c->route, status, html, len);
    ctx_free(c);
}

static void handle_queue_page(wr_api_t *a, struct evhttp_request *req, const char *queue)
{
    char user[WR_USER_ID_MAX + 1];
    char cookie[WR_VID_COOKIE_LEN + 1];
    if (join_limited(a, req, WR_ROUTE_QUEUE_PAGE))
        return;
    if (resolve_user(a, req, WR_ROUTE_QUEUE_PAGE, true, user, cookie))
        return;
    ctx_t *c = ctx_new(a, req, WR_ROUTE_QUEUE_PAGE, queue);
    if (!c) {
        reply_error(a, req, WR_ROUTE_QUEUE_PAGE, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    c->op = "join";
    snprintf(c->user, sizeof(c->user), "%s", user);
    memcpy(c->cookie, cookie, sizeof(c->cookie));
    if (wr_store_join(a->store, queue, user, page_entry_cb, c) != WR_OK)
        page_entry_cb(WR_EUNAVAILABLE, NULL, c);
}

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
        reply_error(a, req, WR_ROUTE_STATIC, 404, "NOT_FOUND", "no such asset", NULL, NULL, 0);
        return;
    }
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Content-Type", ctype);
    evhttp_add_header(oh, "Cache-Control", "public, max-age=300");
    evhttp_add_header(oh, "X-Content-Type-Options", "nosniff");
    count_request(a, WR_ROUTE_STATIC, 200);
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
        reply_error(a, req, WR_ROUTE_NONE, 400, "BAD_REQUEST", "bad request line", NULL, NULL, 0);
        return;
    }
    wr_route_match_t m = wr_router_match(method_of(req), path, strlen(path));
    if (m.route == WR_ROUTE_NONE) {
        if (m.allowed) {
            char allow[64];
            wr_router_allow_header(m.allowed, allow, sizeof(allow));
            evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
            reply_error(a, req, WR_ROUTE_NONE, 405, "METHOD_NOT_ALLOWED",
                        "method not allowed on this path", NULL, NULL, 0);
        } else {
            reply_error(a, req, WR_ROUTE_NONE, 404, "NOT_FOUND", "no such route", NULL, NULL, 0);
        }
        return;
    }
    wr_route_t route = m.route;

    /* With a separate admin listener, the public one does not know the
     * admin API or the dashboard. */
    if (a->admin_separate && !admin_listener &&
        (is_admin_route(route) || route == WR_ROUTE_DASHBOARD)) {
        reply_error(a, req, WR_ROUTE_NONE, 404, "NOT_FOUND", "no such route", NULL, NULL, 0);
        return;
    }

    /* Header identity mode: the identity header sent more than once is
     * refused on every route, before anything else: a client's own copy
     * must never win over the gateway's (case K17). */
    if (a->cfg->identity == WR_IDENTITY_HEADER &&
        wr_http_header_count(req, a->cfg->identity_header) > 1) {
        reply_error(a, req, route, 400, "INVALID_USER_ID", "identity header sent more than once",
                    NULL, NULL, 0);
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
            reply_error(a, req, route, 400, "INVALID_QUEUE_NAME",
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
        reply_error(a, req, route, 413, "PAYLOAD_TOO_LARGE", "request body too large", NULL, NULL,
                    0);
        return;
    }

    switch (route) {
    case WR_ROUTE_JOIN:
    case WR_ROUTE_STATUS:
    case WR_ROUTE_LEAVE:
    case WR_ROUTE_CONSUME:
    case WR_ROUTE_VERIFY:
        if (!wr_api_has_secret(a)) {
            reply_error(a, req, route, 503, "STORE_UNAVAILABLE",
                        "the token secret is not loaded from the store yet", NULL, NULL,
                        RETRY_AFTER_UNAVAILABLE_S);
            return;
        }
        if (route == WR_ROUTE_CONSUME || route == WR_ROUTE_VERIFY)
            handle_tokens(a, req, route, queue);
        else
            handle_entries(a, req, route, queue);
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
        reply_json(a, req, route, 200, body, sizeof(body) - 1, 0);
        return;
    }
    case WR_ROUTE_READYZ: {
        ctx_t *c = ctx_new(a, req, route, NULL);
        if (!c) {
            reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
            return;
        }
        c->op = "ping";
        wr_err_t err = wr_store_ping(a->store, ready_cb, c);
        if (err != WR_OK) {
            reply_unavailable(a, req, route, err);
            ctx_free(c);
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
            reply_empty(a, req, route, 200);
            return;
        }
        if (!wr_api_has_secret(a)) {
            reply_error(a, req, route, 503, "STORE_UNAVAILABLE",
                        "the token secret is not loaded from the store yet", NULL, NULL,
                        RETRY_AFTER_UNAVAILABLE_S);
            return;
        }
        handle_queue_page(a, req, queue);
        return;
    case WR_ROUTE_DASHBOARD: {
        size_t len = 0;
        char *html = wr_page_render_dashboard(&len);
        reply_html(a, req, route, 200, html, len);
        return;
    }
    case WR_ROUTE_STATIC:
        handle_static(a, req, m.param, m.param_len);
        return;
    default:
        reply_error(a, req, route, 404, "NOT_FOUND", "no such route", NULL, NULL, 0);
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
        a->rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)now_us();
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
        wr_identity_derive_key(a->cfg->cookie_secret_previous, a->cfg->cookie_secret_previous_len,
                               a->prev_cookie_key);
        a->has_prev_cookie_key = true;
    } else if (a->cfg->cookie_secret_len == 0 && a->prev_secret_len > 0) {
        wr_identity_derive_key(a->prev_secret, a->prev_secret_len, a->prev_cookie_key);
        a->has_prev_cookie_key = true;
    }
}

void wr_api_set_secret(wr_api_t *a, const uint8_t *secret, size_t len)
{
    if (len > sizeof(a->secret))
        len = sizeof(a->secret);
    memcpy(a->secret, secret, len);
    a->secret_len = len;
    if (a->cfg->cookie_secret_len > 0)
        wr_identity_derive_key(a->cfg->cookie_secret, a->cfg->cookie_secret_len, a->cookie_key);
    else
        wr_identity_derive_key(a->secret, a->secret_len, a->cookie_key);
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
        ctx_t *c = a->free_ctx;
        a->free_ctx = c->next_free;
        free(c);
    }
    free(a);
}
