/*
 * api_entries.c - the routes of a person in line: join, status, leave
 * (POST / GET / DELETE /v1/queues/{queue}/entries/me), and the join's
 * gates they share with the queue page (api_page.c, GET /q/{queue}, which
 * joins through wr_api__join_start with its own answers: the gates call
 * the route's wr_api__join_answers_t, never the page file).
 *
 * Identity (wr_api__resolve_user, api_request.c): the user is the
 * configured identity header, or the signed wr_vid visitor cookie
 * (identity.h). Only a join mints a visitor; status
 * and leave without a valid cookie answer 404 (NOT_IN_QUEUE, or
 * QUEUE_NOT_FOUND when the queue does not exist either). A cookie signed
 * with the previous key still counts, and a join re-issues it.
 *
 * Answers: one store call (join, status or leave). The entry it returns
 * is turned once into an entry view (wr_api__entry_view_t, api_view.c:
 * state, position, ETA, retry, token...), which is then told as JSON or as
 * the queue page. A waiting entry is told its position, ETA and when to
 * come back (jittered poll band, queue.h); an admitted one gets its JWT,
 * signed in api_view.c from the store's jti, issue time and expiry (the
 * same on every instance). Errors are told as the error table says
 * (api_reply.c).
 *
 * Invites (docs/API.md, "Invite-only queues"): a join of a queue with an
 * inviteKey first passes the invite gate, with the queue's config (this
 * instance's copy, else one store read). The invite comes as
 * "Authorization: Bearer" on POST entries, or as ?invite= on the queue
 * page; a bad or missing one is 403 INVITE_REQUIRED with its reason, and
 * nothing is joined or minted. The invite's sub is the user: in header mode
 * it must be the header's user id (else wrongUser); in cookie mode the
 * user in line is the invited account, sub itself (so the entry token's
 * sub, and consume's userId, is the account), and the reply sets the
 * wr_vid cookie of that account (identity.h, the account form), so every
 * browser holding the invite shares one place and later polls find it by
 * that cookie alone.
 *
 * The pass: an admitted answer (JSON or page) also sets the cookie
 * wr_token_{queue} (wr_api__set_token_cookie, api_request.c: HttpOnly,
 * SameSite=Lax, Path=/; Secure when the request came over TLS, i.e.
 * X-Forwarded-Proto: https from a trusted proxy, or when cookie_secure is
 * configured).
 *
 * Sale opening (docs/API.md, "Sale opening"): a PREQUEUE entry (before
 * the queue's opensAt) is told {"status":"prequeue","opensAt","retryAfterMs"},
 * the retry landing in the person's own slot of the first second after
 * opensAt (wr_queue_prequeue_retry_ms, a hash of the user id) or in about
 * 5 s, whichever is sooner; the page gets state "prequeue" with the same
 * retry.
 *
 * Abuse controls (docs/SECURITY.md): joins are limited per client address
 * (token bucket; X-Forwarded-For counts only from trusted proxies), and
 * status polls per identity (queue + user) are paced: a poll sooner than
 * poll_min_fraction x the retryAfterMs we gave spends an "early" credit,
 * and with none left is 429 RATE_LIMITED. Both run before anything else of
 * the request, so a refused request costs no store call and mints no
 * visitor.
 *
 * Degraded mode (docs/API.md 1.1): when the store cannot be reached, a
 * join, status or page join of a queue whose config this instance has is
 * answered without it (wr_api__degraded_view, api_view.c): "closed" as
 * before (503), "limited" hands out a fail-open pass (a token with the "fo" claim
 * and a fresh jti the store never saw) while the queue's per-instance
 * budget lasts (wr_scheduler_queue_take_fail_open), "open" always; the others are
 * told to wait, with no position ("degraded": true) - but no pass while
 * the known config holds a brake (an opensAt ahead: the pre-queue answer;
 * paused: told to wait). People in line keep their place in the store. A
 * join refused for a late replica (WR_EREPLICA, durability mode) is not
 * degraded: 503, the visitor cookie kept (the entry stands).
 *
 * Hot path (status polls): one store round trip, no malloc (contexts come
 * from a free list), no printf (names copied, the reply's integers written
 * by hand: only integers and fixed strings, no escaping needed), no JSON
 * library.
 */
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/api_routes.h"
#include "http/api_gates.h"
#include "http/api_view.h"
#include "base/clock.h"
#include "base/strbuf.h"
#include "runtime/reporter.h"
#include "runtime/scheduler.h"
#include "http/http.h"
#include "base/ids.h"
#include "core/invite.h"
#include "core/origin.h"
#include "http/page.h"
#include "core/queue.h"

/* ---------- security: rate limits (docs/SECURITY.md) ---------- */

static void reply_rate_limited(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *kind,
                               uint32_t retry_ms)
{
    if (a->metrics) {
        char l[32];
        snprintf(l, sizeof(l), "kind=\"%s\"", kind);
        wr_metrics_inc(a->metrics, "waitroom_rate_limited_total", l, 1);
    }
    int ra = (int)((retry_ms + 999) / 1000);
    wr_api__reply_error(a, req, route, 429, "RATE_LIMITED",
                        strcmp(kind, "join") == 0  ? "too many joins from this address"
                        : strcmp(kind, "log") == 0 ? "too many requests from this address"
                                                   : "polling faster than retryAfterMs",
                        NULL, NULL, ra < 1 ? 1 : ra);
}

/* Join limit: returns true when req was refused (answered 429). */
bool wr_api__join_limited(wr_api_t *a, wr_http_req_t *req, wr_route_t route)
{
    if (!wr_ratelimit_enabled(a->join_rl))
        return false;
    char addr[64];
    uint32_t ms = 0;
    wr_api__client_addr(a, req, addr, sizeof(addr));
    if (wr_ratelimit_take(a->join_rl, addr, strlen(addr), &ms))
        return false;
    /* the public log's routes share the joins' limit per address */
    reply_rate_limited(a, req, route, wr_api__log_route(route) ? "log" : "join", ms);
    return true;
}

/* "queue\0user": the pacing key of an identity in a queue. */
static size_t pace_key(const char *queue, const char *user, char *key, size_t cap)
{
    int n = snprintf(key, cap, "%s%c%s", queue, 0, user);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* Poll pacing: returns true when req was refused (answered 429). */
static bool poll_limited(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *queue,
                         const char *user)
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
void wr_api__pace_note(wr_api_t *a, const char *queue, const char *user, uint32_t retry_ms)
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

/* The view v (err: its signing error) as JSON (docs/API.md): appended
 * (strbuf.h) or one snprintf, no JSON library (but for the notice's
 * escaping, wr_api__view_add_notice). */
static void reply_view(wr_api__ctx_t *c, const wr_api__entry_view_t *v, wr_err_t err)
{
    wr_api_t *a = c->api;
    /* a group member's group (API 1.3; a group name needs no escaping) */
    char grp[WR_GROUP_NAME_MAX + 16] = "";
    /* a notice of 500 code points escapes to at most 6 bytes each */
    char buf[WR_TOKEN_MAX + 256 + 6 * WR_NOTICE_MAX_CP + 16 + sizeof(grp)];
    int n = 0, retry_s = 0;
    if (v->group && v->group[0])
        snprintf(grp, sizeof(grp), ",\"group\":\"%s\"", v->group);
    switch (v->state) {
    case WR_ENTRY_WAITING: {
        /* No config to draw from: the default slowest band. */
        uint32_t retry = v->retry_after_ms ? v->retry_after_ms : wr_queue_slowest_band_ms(NULL);
        wr_api__pace_note(a, c->queue, c->user, retry);
        if (v->degraded) {
            n = snprintf(buf, sizeof(buf),
                         "{\"status\":\"waiting\",\"degraded\":true,\"position\":null,"
                         "\"ahead\":null,\"waiting\":null,\"etaSeconds\":null,"
                         "\"retryAfterMs\":%u}",
                         retry);
            break;
        }
        /* the hot answer: appended, not printf'd (strbuf.h) */
        wr_strbuf_t b = wr_strbuf_init(buf, sizeof(buf));
        wr_strbuf_str(&b, "{\"status\":\"waiting\",\"position\":");
        wr_strbuf_u64(&b, v->position);
        wr_strbuf_str(&b, ",\"ahead\":");
        wr_strbuf_u64(&b, v->ahead);
        wr_strbuf_str(&b, ",\"waiting\":");
        wr_strbuf_u64(&b, v->waiting);
        wr_strbuf_str(&b, ",\"etaSeconds\":");
        if (v->eta_seconds < 0)
            wr_strbuf_str(&b, "null");
        else
            wr_strbuf_i64(&b, v->eta_seconds);
        wr_strbuf_str(&b, ",\"retryAfterMs\":");
        wr_strbuf_u64(&b, retry);
        if (v->held)
            wr_strbuf_str(&b, ",\"held\":true");
        if (v->stock_left >= 0) { /* while a stock is set: what is left now */
            wr_strbuf_str(&b, ",\"stockLeft\":");
            wr_strbuf_i64(&b, v->stock_left);
        }
        if (v->waiting_for)
            wr_strbuf_str(&b, ",\"waitingFor\":\"stock\"");
        wr_strbuf_str(&b, grp);
        wr_strbuf_str(&b, v->receipt);
        wr_strbuf_str(&b, "}");
        n = wr_strbuf_ok(&b) ? (int)b.n : -1;
        break;
    }
    case WR_ENTRY_CLOSED:
        /* the sale is over or sold out: the contract's body as it is, the
         * slow re-check in the Retry-After header (seconds, rounded up) */
        retry_s = (int)((v->retry_after_ms + 999) / 1000);
        wr_api__pace_note(a, c->queue, c->user, (uint32_t)retry_s * 1000u);
        n = snprintf(buf, sizeof(buf), "{\"status\":\"closed\",\"reason\":\"%s\"}",
                     v->closed_reason == WR_CLOSE_SOLD_OUT ? "soldOut" : "closed");
        break;
    case WR_ENTRY_PREQUEUE:
        wr_api__pace_note(a, c->queue, c->user, v->retry_after_ms);
        n = snprintf(buf, sizeof(buf),
                     "{\"status\":\"prequeue\",\"opensAt\":%lld,\"retryAfterMs\":%u%s%s}",
                     (long long)v->opens_at_ms, v->retry_after_ms, grp, v->receipt);
        break;
    case WR_ENTRY_ADMITTED:
        wr_api__pace_note(a, c->queue, c->user, 0);
        if (err != WR_OK) {
            wr_api__reply_error(a, c->req, c->route, 500, "INTERNAL", "could not sign the token",
                                NULL, NULL, 0);
            return;
        }
        n = snprintf(buf, sizeof(buf),
                     "{\"status\":\"admitted\",\"token\":\"%s\",\"expiresAt\":%lld%s%s}", v->token,
                     (long long)v->expires_at_ms, v->fail_open ? ",\"failOpen\":true" : "", grp);
        wr_api__set_token_cookie(c, v->token, v->expires_at_ms);
        break;
    case WR_ENTRY_PASSTHROUGH:
    default:
        n = snprintf(buf, sizeof(buf), "{\"status\":\"passthrough\"}");
        break;
    }
    if (n > 0 && (size_t)n < sizeof(buf) && v->notice && v->notice[0] &&
        v->state != WR_ENTRY_PASSTHROUGH)
        n = wr_api__view_add_notice(buf, n, sizeof(buf), v->notice);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        wr_api__reply_error(a, c->req, c->route, 500, "INTERNAL", "reply too large", NULL, NULL, 0);
        return;
    }
    wr_api__reply_json(a, c->req, c->route, 200, buf, (size_t)n, retry_s);
}

/* The entry as JSON. */
static void reply_entry(wr_api__ctx_t *c, const wr_entry_t *e)
{
    wr_api__entry_view_t v;
    wr_err_t err = wr_api__entry_view(c, e, &v);
    reply_view(c, &v, err);
}

/* After a join or status answer: a recording request answered WAITING is
 * noted in the seen cache (the next polls within the window go quiet); any
 * answer but WAITING forgets the user. */
static void seen_after(wr_api__ctx_t *c, wr_err_t err, const wr_entry_t *e)
{
    wr_seencache_t *sc = c->api->seen;
    if (!sc)
        return;
    if (err == WR_OK && e && e->state == WR_ENTRY_WAITING) {
        if (c->seen_us > 0)
            wr_seencache_note(sc, c->queue, c->user, c->seen_us);
    } else {
        wr_seencache_forget(sc, c->queue, c->user);
    }
}

static void entry_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    seen_after(c, err, e);
    if (c->cookie[0] && wr_api__visitor_kept(err))
        wr_api__set_visitor_cookie(c->api, c->req, c->cookie);
    wr_api__entry_view_t dv;
    if (err == WR_OK && e) {
        reply_entry(c, e);
    } else if (wr_api__degraded_view(c, err, &dv)) {
        reply_view(c, &dv, WR_OK);
    } else {
        /* A full line: come back after the queue's slowest poll band. */
        int ra = err == WR_EFULL ? wr_api__full_retry_after_s(e ? e->config : NULL) : 0;
        wr_api__reply_answer(c->api, c->req, c->route, err, WR_API__TELLS_ENTRY,
                             wr_api__code_reason(err, e), ra);
    }
    wr_api__ctx_free(c);
}

/* Leave: the identity is not waiting any more, so it is not paced. */
static void leave_cb(wr_err_t err, void *arg)
{
    wr_api__ctx_t *c = arg;
    if (c->user[0])
        wr_api__pace_note(c->api, c->queue, c->user, 0);
    wr_api__done_cb(err, arg);
}

/* GET/DELETE entries/me without a valid visitor cookie: 404 NOT_IN_QUEUE,
 * or 404 QUEUE_NOT_FOUND when the queue does not exist either (one store
 * read when this instance does not know the queue). Sets no cookie. */
static void no_visitor_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && info) {
        wr_api__held(c, info->config);
        wr_api__reply_error(c->api, c->req, c->route, 404, "NOT_IN_QUEUE", "no visitor cookie",
                            NULL, NULL, 0);
    } else {
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
    }
    wr_api__ctx_free(c);
}

static void no_visitor(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *queue)
{
    if (wr_scheduler_config(a->sched, queue)) {
        wr_api__reply_error(a, req, route, 404, "NOT_IN_QUEUE", "no visitor cookie", NULL, NULL, 0);
        return;
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c)
        return;
    c->op = "queue_get";
    if (wr_store_queue_get(a->store, queue, no_visitor_cb, c) != WR_OK) {
        wr_api__reply_unavailable(a, req, route, WR_EUNAVAILABLE);
        wr_api__ctx_free(c);
    }
}

static void join_store(wr_api__ctx_t *c);

/* ---------- joins: the challenge gate ---------- */

/* A join refused for its challenge (c->challenge_reason): the route's
 * answer (the page shows the challenge). Frees c. */
static void challenge_refused(wr_api__ctx_t *c)
{
    c->join->challenge(c);
}

/* POST entries refused for its challenge or CAPTCHA: 403
 * CHALLENGE_REQUIRED. Frees c. */
static void json_challenge_refused(wr_api__ctx_t *c)
{
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    if (c->captcha_reason != WR_API__CAPTCHA_OK)
        wr_api__captcha_refuse(c->api, c->req, c->route, cfg, c->queue,
                               (wr_api__captcha_reason_t)c->captcha_reason);
    else
        wr_api__challenge_refuse(c->api, c->req, c->route, cfg, c->queue,
                                 (wr_challenge_reason_t)c->challenge_reason);
    wr_api__ctx_free(c);
}

/* The store's answer for a join without a valid solution: a person in
 * line, in the pre-queue or holding a live pass is answered as a join
 * answers them (no work asked twice: reloads, other tabs); anyone else is
 * refused (403 CHALLENGE_REQUIRED; the queue page shows the challenge). */
static void challenge_status_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    if (err == WR_OK && e && e->state != WR_ENTRY_PASSTHROUGH) {
        c->join->entry(err, e, c);
        return;
    }
    wr_api__observe(c, err);
    challenge_refused(c);
}

/* A join of a queue that asks for a solved challenge, without a valid one
 * (reason r): is user (the person in line, cookie: theirs to set) there
 * already? One status read; answers and frees c. */
static void challenge_gate(wr_api__ctx_t *c, const char *user, const char *cookie,
                           wr_challenge_reason_t r)
{
    if (user != c->user)
        snprintf(c->user, sizeof(c->user), "%s", user);
    if (cookie != c->cookie)
        memcpy(c->cookie, cookie, sizeof(c->cookie));
    c->challenge_reason = (int)r;
    c->op = "status";
    c->t0_us = wr_clock_wall_us();
    c->seen_us = wr_clock_mono_us();
    if (wr_store_status(c->api->store, c->queue, c->user, challenge_status_cb, c) != WR_OK)
        challenge_status_cb(WR_EUNAVAILABLE, NULL, c);
}

/* ---------- joins: the CAPTCHA gate (api_captcha.c) ---------- */

/* A join refused for its CAPTCHA (reason r): as a refused challenge, the
 * person already in line or holding a pass is answered as a join answers
 * them (one status read; none for a visitor minted for this join), anyone
 * else gets the 403 (the queue page: its challenge state). Frees c. */
static void captcha_refused(wr_api__ctx_t *c, wr_api__captcha_reason_t r)
{
    c->captcha_reason = (int)r;
    if (c->fresh_visitor) {
        challenge_refused(c);
        return;
    }
    challenge_gate(c, c->user, c->cookie, WR_CHALLENGE_OK);
}

/* What the CAPTCHA gate (api_captcha.c) goes on with: its answers are the
 * route's (c->join). */
static void entry_answer(wr_api__ctx_t *c, wr_err_t err, const wr_entry_t *e)
{
    c->join->entry(err, e, c);
}

static const wr_api__join_steps_t join_steps = {join_store, entry_answer, captcha_refused};

/* ---------- joins: the invite gate ---------- */

/* The invite of a join: ?invite= on the queue page, else (and on POST
 * entries) Authorization: Bearer. Borrowed from req, or copied to buf. */
static const char *find_invite(wr_api__ctx_t *c, char *buf, size_t cap, size_t *len)
{
    if (c->route == WR_ROUTE_QUEUE_PAGE && wr_api__query_param(c->req, "invite", buf, cap)) {
        *len = strlen(buf);
        return buf;
    }
    const char *tok = NULL;
    if (wr_api__bearer(c->req, &tok, len))
        return tok;
    *len = 0;
    return NULL;
}

/* A join's body is optional; one that is there must be a JSON object
 * (API.md: "a body that is not the JSON the route expects is 400
 * BAD_REQUEST"); whitespace alone counts as none. Its members are read
 * where they are used (challenge, nonce, captchaResponse). On a queue that
 * asks for a proof of work or a CAPTCHA the gate answers a broken body
 * itself (403 CHALLENGE_REQUIRED with a fresh challenge: API.md 1.2, the
 * client can recover), so this is checked only on the other queues.
 * Answers 400 and returns false otherwise; nothing is joined. */
static bool join_body_ok(wr_api_t *a, wr_http_req_t *req, wr_route_t route)
{
    size_t blen;
    const char *body_data = wr_http_req_body(req, &blen);
    if (blen == 0)
        return true;
    const char *data = body_data;
    if (data && wr_api__blank(data, blen))
        return true;
    json_error_t jerr;
    json_t *body = data ? wr_api__load_body(data, blen, &jerr) : NULL;
    bool ok = json_is_object(body);
    json_decref(body);
    if (!ok)
        wr_api__reply_error(a, req, route, 400, "BAD_REQUEST",
                            "the join's body, when there is one, must be a JSON object", NULL, NULL,
                            0);
    return ok;
}

/*
 * Joins c's user (JOIN or QUEUE_PAGE) with the queue's config cfg (NULL:
 * unknown here and not readable; the store's join answers for itself).
 * With an inviteKey the invite decides who the user is; without one the
 * user is resolved as for any request. Answers and frees c.
 */
static void join_gate(wr_api__ctx_t *c, const wr_queue_config_t *cfg)
{
    wr_api_t *a = c->api;
    char user[WR_USER_ID_MAX + 1];
    char cookie[WR_IDENTITY_COOKIE_MAX + 1];
    cookie[0] = '\0';
    bool header_mode = a->cfg->identity == WR_IDENTITY_HEADER;
    int new_visitor = 0; /* 3: a visitor minted for this join (no valid cookie came) */
    if (cfg && c->route == WR_ROUTE_JOIN && !wr_api__challenge_required(cfg) &&
        !wr_api__captcha_required(cfg) && !join_body_ok(a, c->req, c->route)) {
        wr_api__ctx_free(c);
        return;
    }
    if (!cfg || cfg->invite_key_len == 0 || header_mode) {
        new_visitor = wr_api__resolve_user(a, c->req, c->route, true, user, cookie);
        if (new_visitor == 1) {
            wr_api__ctx_free(c);
            return;
        }
    }
    if (cfg && cfg->invite_key_len > 0) {
        char buf[WR_TOKEN_MAX + 1], sub[WR_USER_ID_MAX + 1], grp[WR_GROUP_NAME_MAX + 1];
        size_t len = 0;
        const char *inv = find_invite(c, buf, sizeof(buf), &len);
        wr_invite_reason_t r =
            wr_invite_verify(inv, len, (const uint8_t *)cfg->invite_key, cfg->invite_key_len,
                             c->queue, (int64_t)time(NULL), sub, grp);
        /* an invite's group must be one of the queue's (API 1.3, "Groups,
         * precisely": an unknown grp is malformed) */
        if (r == WR_INVITE_OK && wr_qconfig_group_index(cfg, grp, strlen(grp)) < 0)
            r = WR_INVITE_MALFORMED;
        if (r == WR_INVITE_OK) /* the group the invite joins (it wins over a code) */
            wr_api__copy(c->group, sizeof(c->group), grp);
        if (r == WR_INVITE_OK && header_mode && strcmp(sub, user) != 0)
            r = WR_INVITE_WRONG_USER;
        if (r == WR_INVITE_OK && !header_mode) {
            /* cookie mode: the invited account is the user in line */
            snprintf(user, sizeof(user), "%s", sub);
            if (wr_identity_sign_account(a->cookie_key, a->cookie_key_len, sub, (int64_t)time(NULL),
                                         cookie) != WR_OK) {
                wr_api__reply_error(a, c->req, c->route, 500, "INTERNAL",
                                    "could not create a visitor", NULL, NULL, 0);
                wr_api__ctx_free(c);
                return;
            }
        }
        if (r != WR_INVITE_OK) {
            c->join->invite_refused(c, r);
            return;
        }
    }
    bool pow = wr_api__challenge_required(cfg), cap = wr_api__captcha_required(cfg);
    if (pow || cap) {
        /* The challenge is the caller's as its route saw them: with an
         * invite in cookie mode, the visitor cookie, not the account. */
        char caller[WR_USER_ID_MAX + 1], ccookie[WR_IDENTITY_COOKIE_MAX + 1];
        const char *who = user;
        if (cfg->invite_key_len > 0 && !header_mode) {
            if (wr_api__resolve_user(a, c->req, c->route, true, caller, ccookie) == 1) {
                wr_api__ctx_free(c);
                return;
            }
            who = caller;
        }
        /* A visitor minted just now cannot be in line: refused with no
         * store read (the cheap answer to a flood of fresh cookies). */
        c->fresh_visitor = new_visitor == 3 && cfg->invite_key_len == 0;
        /* the proof of work first: it is free, the provider's call is not
         * (and a widget response is good for one verification) */
        wr_challenge_reason_t r = pow ? wr_api__challenge_check(a, c->req, cfg, c->queue, who,
                                                                c->spend_id, &c->spend_exp_ms)
                                      : WR_CHALLENGE_OK;
        if (r != WR_CHALLENGE_OK) {
            if (c->fresh_visitor) {
                c->challenge_reason = (int)r;
                challenge_refused(c);
                return;
            }
            challenge_gate(c, user, cookie, r);
            return;
        }
        if (cap) {
            snprintf(c->user, sizeof(c->user), "%s", user);
            memcpy(c->cookie, cookie, sizeof(c->cookie));
            c->captcha_pow = pow;
            c->captcha_fallback_pow = cfg->captcha.fallback == WR_CAPTCHA_FALLBACK_CHALLENGE;
            wr_api__captcha_gate(c, cfg, who, &join_steps);
            return;
        }
    }
    snprintf(c->user, sizeof(c->user), "%s", user);
    memcpy(c->cookie, cookie, sizeof(c->cookie));
    join_store(c);
}

/* The store's word on the solved challenge the join spends: a solved
 * challenge buys one place, once (API 1.3). Spent before: the account's
 * place when it has one (status), else 403 "used". */
static void spent_cb(wr_err_t err, const wr_token_check_t *res, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    c->spend_id[0] = '\0';
    if (err == WR_ETOKEN && res)
        challenge_gate(c, c->user, c->cookie,
                       res->reason == WR_TOKEN_EXPIRED ? WR_CHALLENGE_EXPIRED : WR_CHALLENGE_USED);
    else
        join_store(c); /* spent now; or a store that did not answer: the join meets it */
}

/* The store's answer of a join (API or page): the sale's report counts a
 * join that got a place (the answer of a join that added the person, to
 * the line, a group's line or the pre-queue: e->added; never a repeat, a
 * held return, a refusal), at once, then the route's answer. */
static void joined_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    if (err == WR_OK && e && e->added)
        wr_reporter_count(wr_scheduler_reporter(c->api->sched), c->queue, WR_REPORT_JOINED, 1);
    c->join->entry(err, e, c);
}

/* The store's join of c's user (c->user, c->cookie set), once the gates
 * have let it through (a presale code looked at, a solved challenge spent
 * first); into a group (join_group) with an invite's grp or a code.
 * Answers and frees c. */
static void join_store(wr_api__ctx_t *c)
{
    wr_api_t *a = c->api;
    if (wr_api__code_gate(c, c->join->entry, join_store))
        return;
    if (c->spend_id[0]) {
        c->op = "burn";
        c->t0_us = wr_clock_wall_us();
        if (wr_store_burn(a->store, c->queue, c->spend_id, c->spend_exp_ms * 1000, false, spent_cb,
                          c) == WR_OK)
            return;
        c->spend_id[0] = '\0'; /* not even asked: the join meets the store as it is */
    }
    c->op = "join";
    c->t0_us = wr_clock_wall_us();
    /* A page join counts only from the visitor's next request (API 1.1,
     * people who stop asking): a link scanner that fetched once is never
     * admitted. An API join counts at once. A page join may leave a
     * pending newcomer, so the seen cache forgets the user (their next
     * poll must reach the store's record). */
    if (c->route == WR_ROUTE_QUEUE_PAGE) {
        if (a->seen)
            wr_seencache_forget(a->seen, c->queue, c->user);
    } else {
        c->seen_us = wr_clock_mono_us();
    }
    bool page = c->route == WR_ROUTE_QUEUE_PAGE;
    wr_err_t err;
    if ((c->group[0] || c->code_hash[0]) && wr_store_has_groups(a->store)) {
        wr_store_join_t j = {.page = page,
                             .group = c->group[0] ? c->group : NULL,
                             .code_hash = c->code_hash[0] ? c->code_hash : NULL};
        err = wr_store_join_group(a->store, c->queue, c->user, &j, joined_cb, c);
    } else {
        err = page ? wr_store_join_page(a->store, c->queue, c->user, joined_cb, c)
                   : wr_store_join(a->store, c->queue, c->user, joined_cb, c);
    }
    if (err == WR_OK)
        return;
    /* degraded mode, or 503 (the page: as unavailable); frees c */
    c->join->entry(c->route == WR_ROUTE_QUEUE_PAGE ? WR_EUNAVAILABLE : err, NULL, c);
}

/* The queue's config read for the gate. An unknown queue leaves the answer
 * to the join itself (404). Any other failure never lets the join past the
 * gates unchecked: with the config this instance came to hold meanwhile the
 * gates run on it (then the join, or degraded mode, as for any join);
 * without one the answer is the store's error (503), since an invite or a
 * challenge the gate could not see must not be skipped by a store that
 * answers the join a moment later. */
static void join_config_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && info) {
        wr_api__held(c, info->config);
        if (c->route == WR_ROUTE_JOIN &&
            wr_api__bypass_join(c->api, c->req, c->queue, info->config)) {
            wr_api__ctx_free(c);
            return;
        }
        join_gate(c, info->config);
        return;
    }
    if (err == WR_ENOTFOUND || (err == WR_OK && !info)) {
        join_gate(c, NULL);
        return;
    }
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    if (cfg) {
        join_gate(c, cfg);
        return;
    }
    wr_api__reply_store_error(c, err, WR_API__TELLS_NONE);
    wr_api__ctx_free(c);
}

/* POST entries' JSON answers of a join (api_internal.h). */
static void json_invite_refused(wr_api__ctx_t *c, wr_invite_reason_t r)
{
    wr_api__reply_error(c->api, c->req, c->route, 403, "INVITE_REQUIRED",
                        r == WR_INVITE_MISSING ? "this queue needs an invite"
                                               : "the invite is not valid here",
                        NULL, wr_invite_reason_name(r), 0);
    wr_api__ctx_free(c);
}

static const wr_api__join_answers_t json_answers = {entry_cb, json_invite_refused,
                                                    json_challenge_refused};

/* POST entries and GET /q/{queue}: the config, then the gate. */
void wr_api__join_start(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *queue,
                        const wr_api__join_answers_t *answers)
{
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c)
        return;
    c->join = answers;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    if (cfg) {
        join_gate(c, cfg);
        return;
    }
    c->op = "queue_get";
    wr_err_t err = wr_store_queue_get(a->store, queue, join_config_cb, c);
    if (err != WR_OK)
        join_config_cb(err, NULL, c); /* the same rules as a failed read */
}

void wr_api__handle_entries(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    const char *queue = call->queue;
    char user[WR_USER_ID_MAX + 1];
    char cookie[WR_IDENTITY_COOKIE_MAX + 1];
    if (route == WR_ROUTE_JOIN) {
        /* bypass rules first (a queue this instance does not know yet:
         * once its config is read, join_config_cb) */
        if (wr_api__bypass_join(a, req, queue, wr_scheduler_config(a->sched, queue)))
            return;
        if (!wr_api__join_limited(a, req, route))
            wr_api__join_start(a, req, route, queue, &json_answers);
        return;
    }
    int who = wr_api__resolve_user(a, req, route, false, user, cookie);
    if (who == 2) {
        no_visitor(a, req, route, queue);
        return;
    }
    if (who)
        return;
    if (route == WR_ROUTE_STATUS && poll_limited(a, req, route, queue, user))
        return;
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c)
        return;
    wr_api__copy(c->user, sizeof(c->user), user);
    memcpy(c->cookie, cookie, sizeof(c->cookie));
    wr_err_t err;
    if (route == WR_ROUTE_STATUS) {
        /* Within the store's last-seen window after a recorded join or
         * status, the poll need not record again (store.h status_quiet).
         * Without a seen cache (a store whose recording is free) every poll
         * is a status: no clock read, no lookup. */
        const wr_queue_config_t *cfg = a->seen ? wr_api__held_config(c) : NULL;
        int64_t now = a->seen ? wr_clock_mono_us() : 0;
        if (cfg && wr_seencache_fresh(a->seen, queue, user, now, wr_store_seen_window_us(cfg))) {
            err = wr_store_status_quiet(a->store, queue, user, entry_cb, c);
        } else {
            c->seen_us = now;
            err = wr_store_status(a->store, queue, user, entry_cb, c);
        }
    } else {
        if (a->seen)
            wr_seencache_forget(a->seen, queue, user);
        err = wr_store_leave(a->store, queue, user, leave_cb, c);
    }
    if (err != WR_OK) {
        if (route != WR_ROUTE_LEAVE) {
            entry_cb(err, NULL, c); /* degraded mode, or 503; frees c */
            return;
        }
        wr_api__reply_unavailable(a, req, route, err);
        wr_api__ctx_free(c);
    }
}
