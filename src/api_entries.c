/*
 * api_entries.c - the routes of a person in line: join, status, leave
 * (POST / GET / DELETE /v1/queues/{queue}/entries/me) and the queue page
 * (GET /q/{queue}, which joins like POST entries and answers HTML).
 *
 * Identity: the user is the configured identity header, or the signed
 * wr_vid visitor cookie (identity.h). Only a join mints a visitor; status
 * and leave without a valid cookie answer 404 (NOT_IN_QUEUE, or
 * QUEUE_NOT_FOUND when the queue does not exist either). A cookie signed
 * with the previous key still counts, and a join re-issues it.
 *
 * Answers: one store call (join, status or leave). The entry it returns
 * is turned once into an entry view (entry_view_t: state, position, ETA,
 * retry, token...), which is then told as JSON or as the queue page. A
 * waiting entry is told its position, ETA and when to come back (jittered
 * poll band, queue.h); an admitted one gets its JWT, signed here from the
 * store's jti, issue time and expiry (the same on every instance). Errors
 * are told as the error table says (api_reply.c).
 *
 * Abuse controls (docs/SECURITY.md): joins are limited per client address
 * (token bucket; X-Forwarded-For counts only from trusted proxies), and
 * status polls per identity (queue + user) are paced: a poll sooner than
 * poll_min_fraction x the retryAfterMs we gave spends an "early" credit,
 * and with none left is 429 RATE_LIMITED. Both run before anything else of
 * the request, so a refused request costs no store call and mints no
 * visitor.
 *
 * Hot path (status polls): one store round trip, no malloc (contexts come
 * from a free list), the reply written with snprintf (only integers and
 * fixed strings: no escaping needed), no JSON library.
 */
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_internal.h"
#include "page.h"
#include "queue.h"

/* ---------- small helpers ---------- */

/* A uniform draw in [0, 1) for the poll jitter. */
static double rand01(wr_api_t *a)
{
    /* xorshift64*: jitter needs spread, not secrecy. */
    a->rng ^= a->rng >> 12;
    a->rng ^= a->rng << 25;
    a->rng ^= a->rng >> 27;
    uint64_t r = a->rng * 2685821657736338717ULL;
    return (double)(r >> 11) / 9007199254740992.0;
}

static void set_visitor_cookie(wr_api_t *a, struct evhttp_request *req, const char *value)
{
    char hdr[256];
    snprintf(hdr, sizeof(hdr), "%s=%s; Path=/; Max-Age=86400; HttpOnly; SameSite=Lax%s",
             WR_VID_COOKIE_NAME, value, a->cfg->cookie_secure ? "; Secure" : "");
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

static void reply_rate_limited(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                               const char *kind, uint32_t retry_ms)
{
    if (a->metrics) {
        char l[32];
        snprintf(l, sizeof(l), "kind=\"%s\"", kind);
        wr_metrics_inc(a->metrics, "waitroom_rate_limited_total", l, 1);
    }
    int ra = (int)((retry_ms + 999) / 1000);
    wr_api__reply_error(a, req, route, 429, "RATE_LIMITED",
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
    wr_api__client_addr(a, req, addr, sizeof(addr));
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
static wr_err_t sign_entry_token(wr_api_t *a, const wr_api__ctx_t *c, const wr_entry_t *e,
                                 char *tok, size_t cap)
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

/* A user's place, computed once from the store's entry and told either as
 * JSON (reply_entry) or as the queue page (page_entry_cb). */
typedef struct {
    wr_entry_state_t state; /* WAITING, ADMITTED or PASSTHROUGH */
    /* WAITING */
    uint64_t position;       /* 1-based rank in line */
    uint64_t ahead;          /* people ahead: position - 1 */
    uint64_t waiting;        /* people in line */
    int64_t eta_seconds;     /* -1 = unknown (paused, or no config) */
    uint32_t retry_after_ms; /* next poll, jittered band; 0 = no config */
    /* ADMITTED */
    char token[WR_TOKEN_MAX + 1]; /* the signed JWT; "" when signing failed */
    int64_t expires_at_ms;        /* token expiry, ms since the epoch */
    /* any state */
    const char *target_url; /* the queue's targetUrl (borrowed from the entry), "" unset */
} entry_view_t;

/*
 * Fills v from e for c's queue and user: notes the queue's config with the
 * scheduler, draws the jittered retry of a waiting entry, signs the token
 * of an admitted one. Pacing is left to the caller. Returns WR_OK, or the
 * signing error (v->token is then "").
 */
static wr_err_t entry_view(wr_api__ctx_t *c, const wr_entry_t *e, entry_view_t *v)
{
    wr_api_t *a = c->api;
    const wr_queue_config_t *cfg = e->config;
    v->position = v->ahead = v->waiting = 0;
    v->eta_seconds = -1;
    v->retry_after_ms = 0;
    v->token[0] = '\0';
    v->expires_at_ms = 0;
    v->target_url = cfg ? cfg->target_url : "";
    if (cfg)
        wr_scheduler_note(a->sched, c->queue, cfg);
    switch (e->state) {
    case WR_ENTRY_WAITING:
        v->state = WR_ENTRY_WAITING;
        v->position = e->position;
        v->ahead = e->position ? e->position - 1 : 0;
        v->waiting = e->waiting;
        if (cfg) {
            v->eta_seconds = wr_queue_eta_seconds(cfg, e->position,
                                                  wr_scheduler_observed_rate(a->sched, c->queue));
            v->retry_after_ms = wr_queue_retry_after_ms(cfg, e->position, rand01(a));
        }
        return WR_OK;
    case WR_ENTRY_ADMITTED: {
        v->state = WR_ENTRY_ADMITTED;
        v->expires_at_ms = e->expires_at_us / 1000;
        wr_err_t err = sign_entry_token(a, c, e, v->token, sizeof(v->token));
        if (err != WR_OK)
            v->token[0] = '\0';
        return err;
    }
    case WR_ENTRY_PASSTHROUGH:
    default:
        v->state = WR_ENTRY_PASSTHROUGH;
        return WR_OK;
    }
}

/* The entry as JSON (docs/API.md): one snprintf, no JSON library. */
static void reply_entry(wr_api__ctx_t *c, const wr_entry_t *e)
{
    wr_api_t *a = c->api;
    entry_view_t v;
    wr_err_t err = entry_view(c, e, &v);
    char buf[WR_TOKEN_MAX + 256];
    int n = 0;
    switch (v.state) {
    case WR_ENTRY_WAITING: {
        /* No config to draw from: the default slowest band. */
        uint32_t retry = v.retry_after_ms ? v.retry_after_ms : 5000;
        pace_note(a, c->queue, c->user, retry);
        char etas[24];
        if (v.eta_seconds < 0)
            snprintf(etas, sizeof(etas), "null");
        else
            snprintf(etas, sizeof(etas), "%lld", (long long)v.eta_seconds);
        n = snprintf(buf, sizeof(buf),
                     "{\"status\":\"waiting\",\"position\":%llu,\"ahead\":%llu,\"waiting\":%llu,"
                     "\"etaSeconds\":%s,\"retryAfterMs\":%u}",
                     (unsigned long long)v.position, (unsigned long long)v.ahead,
                     (unsigned long long)v.waiting, etas, retry);
        break;
    }
    case WR_ENTRY_ADMITTED:
        pace_note(a, c->queue, c->user, 0);
        if (err != WR_OK) {
            wr_api__reply_error(a, c->req, c->route, 500, "INTERNAL", "could not sign the token",
                                NULL, NULL, 0);
            return;
        }
        n = snprintf(buf, sizeof(buf),
                     "{\"status\":\"admitted\",\"token\":\"%s\",\"expiresAt\":%lld}", v.token,
                     (long long)v.expires_at_ms);
        break;
    case WR_ENTRY_PASSTHROUGH:
    default:
        n = snprintf(buf, sizeof(buf), "{\"status\":\"passthrough\"}");
        break;
    }
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        wr_api__reply_error(a, c->req, c->route, 500, "INTERNAL", "reply too large", NULL, NULL, 0);
        return;
    }
    wr_api__reply_json(a, c->req, c->route, 200, buf, (size_t)n, 0);
}

static void entry_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (c->cookie[0] && visitor_kept(err))
        set_visitor_cookie(c->api, c->req, c->cookie);
    if (err == WR_OK && e) {
        reply_entry(c, e);
    } else {
        /* A full line: come back after the queue's slowest poll band. */
        int ra = err == WR_EFULL ? retry_after_full(e ? e->config : NULL) : 0;
        wr_api__reply_answer(c->api, c->req, c->route, err, WR_API__TELLS_ENTRY, NULL, ra);
    }
    wr_api__ctx_free(c);
}

/* Leave: the identity is not waiting any more, so it is not paced. */
static void leave_cb(wr_err_t err, void *arg)
{
    wr_api__ctx_t *c = arg;
    if (c->user[0])
        pace_note(c->api, c->queue, c->user, 0);
    wr_api__done_cb(err, arg);
}

/*
 * Finds the user for a request. Returns 0 and fills user; 1 when the
 * request has been answered (400); 2 in cookie mode when there is no valid
 * visitor cookie and `create` is false (the caller answers). With `create`
 * (join), a missing or unverifiable cookie mints a new visitor.
 */
static int resolve_user(wr_api_t *a, struct evhttp_request *req, wr_route_t route, bool create,
                        char user[WR_USER_ID_MAX + 1], char cookie_out[WR_VID_COOKIE_LEN + 1])
{
    struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
    cookie_out[0] = 0;
    if (a->cfg->identity == WR_IDENTITY_HEADER) {
        const char *v = evhttp_find_header(ih, a->cfg->identity_header);
        if (!v || !*v || !wr_qconfig_valid_user_id(v)) {
            wr_api__reply_error(a, req, route, 400, "INVALID_USER_ID",
                                !v || !*v ? "missing identity header" : "invalid user id", NULL,
                                NULL, 0);
            return 1;
        }
        snprintf(user, WR_USER_ID_MAX + 1, "%s", v);
        return 0;
    }
    const char *ch = evhttp_find_header(ih, "Cookie");
    if (ch) {
        size_t len = 0;
        const char *v = wr_identity_find_cookie(ch, WR_VID_COOKIE_NAME, &len);
        char vid[WR_VID_LEN + 1];
        if (v && wr_identity_verify_cookie(a->cookie_key, a->cookie_key_len, v, len, vid)) {
            snprintf(user, WR_USER_ID_MAX + 1, "%s", vid);
            return 0;
        }
        /* Signed with the previous cookie key (rotation): same visitor;
         * a join re-issues the cookie under the current key. */
        if (v && a->has_prev_cookie_key &&
            wr_identity_verify_cookie(a->prev_cookie_key, 32, v, len, vid)) {
            snprintf(user, WR_USER_ID_MAX + 1, "%s", vid);
            if (create)
                wr_identity_sign_vid(a->cookie_key, a->cookie_key_len, vid, cookie_out);
            return 0;
        }
    }
    if (!create)
        return 2; /* no visitor: the caller answers (the queue may not exist either) */
    char vid[WR_VID_LEN + 1];
    if (wr_identity_new_visitor(a->cookie_key, a->cookie_key_len, vid, cookie_out) != WR_OK) {
        wr_api__reply_error(a, req, route, 500, "INTERNAL", "could not create a visitor", NULL,
                            NULL, 0);
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
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && info) {
        wr_scheduler_note(c->api->sched, c->queue, info->config);
        wr_api__reply_error(c->api, c->req, c->route, 404, "NOT_IN_QUEUE", "no visitor cookie",
                            NULL, NULL, 0);
    } else {
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
    }
    wr_api__ctx_free(c);
}

static void no_visitor(wr_api_t *a, struct evhttp_request *req, wr_route_t route, const char *queue)
{
    if (wr_scheduler_config(a->sched, queue)) {
        wr_api__reply_error(a, req, route, 404, "NOT_IN_QUEUE", "no visitor cookie", NULL, NULL, 0);
        return;
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c) {
        wr_api__reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
        return;
    }
    c->op = "queue_get";
    if (wr_store_queue_get(a->store, queue, no_visitor_cb, c) != WR_OK) {
        wr_api__reply_unavailable(a, req, route, WR_EUNAVAILABLE);
        wr_api__ctx_free(c);
    }
}

void wr_api__handle_entries(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
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
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c) {
        wr_api__reply_error(a, req, route, 500, "INTERNAL", "out of memory", NULL, NULL, 0);
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
        err = wr_store_leave(a->store, queue, user, leave_cb, c);
    if (err != WR_OK) {
        if (c->cookie[0] && visitor_kept(err))
            set_visitor_cookie(a, req, c->cookie);
        wr_api__reply_unavailable(a, req, route, err);
        wr_api__ctx_free(c);
    }
}

/* ---------- the queue page ---------- */

static void page_entry_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api_t *a = c->api;
    wr_api__observe(c, err);
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
        entry_view_t ev;
        entry_view(c, e, &ev); /* signing failed: admitted, without the cookie */
        v.target_url = ev.target_url;
        switch (ev.state) {
        case WR_ENTRY_WAITING:
            v.state = "waiting";
            v.position = ev.position;
            v.waiting = ev.waiting;
            v.eta_seconds = ev.eta_seconds;
            v.retry_after_ms = ev.retry_after_ms;
            if (ev.retry_after_ms) /* 0: no config, nothing to pace by */
                pace_note(a, c->queue, c->user, ev.retry_after_ms);
            break;
        case WR_ENTRY_ADMITTED:
            v.state = "admitted";
            if (ev.token[0]) {
                char hdr[WR_TOKEN_MAX + 160];
                long long max_age = (long long)(ev.expires_at_ms / 1000 - (int64_t)time(NULL));
                snprintf(hdr, sizeof(hdr), "wr_token_%s=%s; Path=/; Max-Age=%lld; SameSite=Lax%s",
                         c->queue, ev.token, max_age > 0 ? max_age : 1,
                         a->cfg->cookie_secure ? "; Secure" : "");
                evhttp_add_header(evhttp_request_get_output_headers(c->req), "Set-Cookie", hdr);
            }
            break;
        case WR_ENTRY_PASSTHROUGH:
        default:
            v.state = "passthrough";
            break;
        }
    } else {
        const wr_api__answer_t *ans = wr_api__answer(err, WR_API__TELLS_PAGE);
        v.state = ans->page_state;
        status = ans->status;
        if (ans->retry_after_s > 0) {
            char ra[16];
            snprintf(ra, sizeof(ra), "%d", ans->retry_after_s);
            evhttp_add_header(evhttp_request_get_output_headers(c->req), "Retry-After", ra);
        }
    }
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    wr_api__reply_html(a, c->req, c->route, status, html, len);
    wr_api__ctx_free(c);
}

void wr_api__handle_queue_page(wr_api_t *a, struct evhttp_request *req, const char *queue)
{
    char user[WR_USER_ID_MAX + 1];
    char cookie[WR_VID_COOKIE_LEN + 1];
    if (join_limited(a, req, WR_ROUTE_QUEUE_PAGE))
        return;
    if (resolve_user(a, req, WR_ROUTE_QUEUE_PAGE, true, user, cookie))
        return;
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, WR_ROUTE_QUEUE_PAGE, queue);
    if (!c) {
        wr_api__reply_error(a, req, WR_ROUTE_QUEUE_PAGE, 500, "INTERNAL", "out of memory", NULL,
                            NULL, 0);
        return;
    }
    c->op = "join";
    snprintf(c->user, sizeof(c->user), "%s", user);
    memcpy(c->cookie, cookie, sizeof(c->cookie));
    if (wr_store_join(a->store, queue, user, page_entry_cb, c) != WR_OK)
        page_entry_cb(WR_EUNAVAILABLE, NULL, c);
}
