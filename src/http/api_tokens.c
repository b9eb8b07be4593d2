/*
 * api_tokens.c - the token routes: consume (POST .../tokens/consume, the
 * protected site's backend spends the token once), verify (GET
 * .../tokens/verify, a reverse proxy's auth_request: 204 or 401/403) and
 * release (POST .../tokens/release, sessions: the protected service ends
 * the visit the consume opened; 204, or 403 reason noSession).
 *
 * Tokens: the store keeps the token's jti, issue time and expiry; the JWT is
 * signed by api_view.c, deterministically, by whichever instance answers
 * (same claims + same secret = same token). consume/verify check the
 * signature (constant time, current and previous key) before the store is
 * touched; the store then checks that the jti is the user's live token and
 * (consume) deletes it atomically.
 *
 * Where the token comes from: consume and release take the Bearer header,
 * else the JSON body's "token" (a body "userId", when given, must be the
 * token's user); verify takes Bearer, X-Waitroom-Token, or the
 * wr_token_{queue} cookie.
 *
 * Sessions outlive the token's exp: for verify and release, a token whose
 * signature, issuer and queue check out but whose exp has passed still
 * goes to the store (its session may be open); only when the store has
 * nothing for it is the answer "expired". consume refuses it before the
 * store, as always. release always answers 503 when the store is
 * unreachable (the session lapses by itself).
 *
 * A queue this instance does not know yet is read once from the store
 * first (it may not exist, or be disabled: passthrough); when that read
 * fails, a missing or invalid token is still 403, a valid one 503.
 *
 * Degraded mode (docs/API.md 1.1; failopen.h): a fail-open pass ("fo"
 * claim, handed out by api_view.c while the store was unreachable) is
 * checked against the store's burned set (wr_store_burn: consume burns it,
 * verify only looks), never against the live tokens. Every token is
 * refused (403 consumed) when this instance's spent set has it: spent here
 * during an outage, or spent / answered "consumed" by the store here
 * (note_spent, K33: verify and consume keep agreeing when the store is
 * unreachable again). When the
 * store is unreachable (token_degraded): "closed" answers 503; otherwise
 * verify answers 204, and consume spends the pass on this instance
 * (failopen.h: once here, its burn written to the store when it answers
 * again) and answers 200 {"valid":true,"userId":...,"failOpen":true} - an
 * ordinary token first takes one from the queue's fail-open budget under
 * "limited" (429 FAIL_OPEN_LIMITED beyond), a fail-open pass took its
 * budget when it was handed out.
 */
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http/api_routes.h"
#include "http/api_gates.h"
#include "base/clock.h"
#include "http/http.h"

/* A consume answered without the store's live tokens: 200 {"valid":true,
 * "userId":...}, with "failOpen":true (counted) when fail_open (a fail-open
 * pass, or any token spent here while the store is unreachable), and
 * "bypass":"<rule>" for a bypass pass. */
static void reply_off_store(wr_api__ctx_t *c, bool fail_open)
{
    json_t *o = json_pack("{s:b,s:s}", "valid", 1, "userId", c->claims.user);
    if (o && fail_open) {
        wr_api__count_fail_open(c->api, "waitroom_fail_open_consumed_total", c->queue);
        json_object_set_new(o, "failOpen", json_true());
    }
    if (o && c->claims.bypass[0])
        json_object_set_new(o, "bypass", json_string(c->claims.bypass));
    wr_api__reply_jansson(c->api, c->req, c->route, 200, o);
}

/* Degraded mode: the store could not be reached for c's token (claims
 * verified, not spent here). */
static void token_degraded(wr_api__ctx_t *c, wr_err_t err)
{
    wr_api_t *a = c->api;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    wr_fail_policy_t p = cfg ? cfg->fail_policy : WR_FAIL_CLOSED;
    /* release always answers 503: the session lapses by itself */
    if (!wr_api__store_unreachable(err) || p == WR_FAIL_CLOSED || c->route == WR_ROUTE_RELEASE) {
        wr_api__reply_unavailable(a, c->req, c->route, err);
        return;
    }
    if (c->route == WR_ROUTE_VERIFY) {
        wr_api__reply_empty(a, c->req, c->route, 204);
        return;
    }
    int64_t now_s = (int64_t)time(NULL);
    if (wr_failopen_spent(a->failopen, &c->claims, now_s)) {
        wr_api__reply_answer(a, c->req, c->route, WR_ETOKEN, WR_API__TELLS_TOKEN,
                             wr_token_reason_name(WR_TOKEN_CONSUMED), 0);
        return;
    }
    if (!wr_token_off_store(&c->claims) && p == WR_FAIL_LIMITED &&
        !wr_scheduler_queue_take_fail_open(wr_api__held(c, NULL), wr_clock_mono_ms())) {
        wr_api__reply_error(a, c->req, c->route, 429, "FAIL_OPEN_LIMITED",
                            "store unavailable and the fail-open budget is spent", NULL, NULL, 1);
        return;
    }
    wr_err_t serr = wr_failopen_spend(a->failopen, &c->claims, now_s);
    if (serr == WR_ETOKEN) {
        wr_api__reply_answer(a, c->req, c->route, WR_ETOKEN, WR_API__TELLS_TOKEN,
                             wr_token_reason_name(WR_TOKEN_CONSUMED), 0);
        return;
    }
    if (serr != WR_OK) {
        wr_api__reply_unavailable(a, c->req, c->route, err);
        return;
    }
    reply_off_store(c, true);
}

/*
 * K33: the store spent c's pass (a consume it accepted) or answered it
 * "consumed" (consume or verify): this instance remembers it (failopen.h),
 * so that while the store is unreachable later its verify and consume
 * refuse it too, as the store does, instead of letting it through as
 * unspent (and spending it a second time). A fail-open pass always; an
 * ordinary token only when the queue has no sessions (an open session
 * makes verify accept a consumed token; failopen would refuse it).
 */
static void note_spent(wr_api__ctx_t *c)
{
    wr_api_t *a = c->api;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    if (c->route == WR_ROUTE_RELEASE || !c->claims.jti[0])
        return;
    if (!wr_token_off_store(&c->claims) && (!cfg || cfg->session_seconds > 0))
        return;
    wr_failopen_note_spent(a->failopen, &c->claims, (int64_t)time(NULL)); /* full: not noted */
}

/* A disabled queue (passthrough): verify and release answer 204, consume
 * {"valid":true,"passthrough":true}. */
static void reply_passthrough(wr_api_t *a, wr_http_req_t *req, wr_route_t route)
{
    static const char body[] = "{\"valid\":true,\"passthrough\":true}";
    if (route == WR_ROUTE_VERIFY || route == WR_ROUTE_RELEASE)
        wr_api__reply_empty(a, req, route, 204);
    else
        wr_api__reply_json(a, req, route, 200, body, sizeof(body) - 1, 0);
}

static void token_cb(wr_err_t err, const wr_token_check_t *res, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api_t *a = c->api;
    wr_api__observe(c, err);
    if (err == WR_OK && res && res->passthrough) {
        reply_passthrough(a, c->req, c->route);
    } else if (err == WR_OK) {
        if (c->route == WR_ROUTE_VERIFY || c->route == WR_ROUTE_RELEASE) {
            if (c->route == WR_ROUTE_RELEASE && res && res->session_us >= 0)
                wr_scheduler_queue_note_session(wr_api__held(c, NULL),
                                                (double)res->session_us / 1000.0);
            wr_api__reply_empty(a, c->req, c->route, 204);
        } else if (wr_token_off_store(&c->claims)) {
            /* a fail-open or bypass pass, burned now for every instance */
            note_spent(c);
            reply_off_store(c, c->claims.fail_open);
        } else {
            note_spent(c);
            json_t *o = json_pack("{s:b,s:s}", "valid", 1, "userId", c->claims.user);
            wr_api__reply_jansson(a, c->req, c->route, 200, o);
        }
    } else if (wr_api__tells(err, WR_API__TELLS_TOKEN)) {
        /* ETOKEN (with its reason) or ENOTFOUND. */
        const char *reason = NULL;
        if (err == WR_ETOKEN) {
            wr_token_reason_t r = res ? res->reason : WR_TOKEN_CONSUMED;
            /* A token past its expiry may already have been swept from the
             * store (not live = "consumed"), or (verify, release) has no
             * open session left; name the better reason. */
            if ((r == WR_TOKEN_CONSUMED || r == WR_TOKEN_NO_SESSION) &&
                c->claims.exp <= (int64_t)time(NULL))
                r = WR_TOKEN_EXPIRED;
            reason = wr_token_reason_name(r);
            if (r == WR_TOKEN_CONSUMED)
                note_spent(c);
        }
        wr_api__reply_answer(a, c->req, c->route, err, WR_API__TELLS_TOKEN, reason, 0);
    } else {
        /* The store failed: degraded mode, the queue's fail policy decides. */
        token_degraded(c, err);
    }
    wr_api__ctx_free(c);
}

/*
 * The checks of a token that need no store: signature, claims, queue,
 * userId, and (degraded mode) no grace on a fail-open pass's exp. Returns
 * WR_TOKEN_OK and fills *cl, or the reason it is refused (counted in
 * waitroom_tokens_rejected_total).
 */
static wr_token_reason_t token_claims(wr_api_t *a, wr_route_t route, const char *queue,
                                      const char *tok, size_t tok_len, const char *want_user,
                                      wr_token_claims_t *cl)
{
    if (!tok || tok_len == 0)
        return WR_TOKEN_MISSING;
    /* The JWT's exp is the store's expiry rounded down to the second; one
     * second of grace here means the signature check never refuses a token
     * the store still holds live: the store's microsecond expiry decides.
     * verify and release check exp here only to name the reason: a session
     * outlives the token, so a past exp still goes to the store. */
    int64_t now_s = (int64_t)time(NULL);
    bool session_route = route == WR_ROUTE_VERIFY || route == WR_ROUTE_RELEASE;
    wr_token_reason_t r = wr_token_verify_keys(tok, tok_len, a->keys, a->n_keys,
                                               session_route ? INT64_MIN : now_s - 1, cl);
    bool past_exp = r == WR_TOKEN_OK && cl->exp <= now_s - 1;
    if (r == WR_TOKEN_OK && strcmp(cl->queue, queue) != 0)
        r = past_exp ? WR_TOKEN_EXPIRED : WR_TOKEN_WRONG_QUEUE;
    if (r == WR_TOKEN_OK && want_user && strcmp(want_user, cl->user) != 0)
        r = past_exp ? WR_TOKEN_EXPIRED : WR_TOKEN_USER_MISMATCH;
    /* A fail-open or bypass pass has no store expiry: its exp is exact. */
    if (r == WR_TOKEN_OK && wr_token_off_store(cl) && cl->exp <= now_s)
        r = WR_TOKEN_EXPIRED;
    if (r != WR_TOKEN_OK && r != WR_TOKEN_MISSING && a->metrics) {
        char l[64];
        snprintf(l, sizeof(l), "reason=\"%s\"", wr_token_reason_name(r));
        wr_metrics_inc(a->metrics, "waitroom_tokens_rejected_total", l, 1);
    }
    return r;
}

/* Answers a token refused by token_claims: 401 (verify) or 403 without a
 * token, 403 INVALID_TOKEN with the reason otherwise. */
static void reply_refused(wr_api_t *a, wr_http_req_t *req, wr_route_t route, wr_token_reason_t r)
{
    if (r == WR_TOKEN_MISSING) {
        if (route == WR_ROUTE_VERIFY)
            wr_api__reply_error(a, req, route, 401, "UNAUTHORIZED", "no token", NULL, "missing", 0);
        else
            wr_api__reply_error(a, req, route, 403, "INVALID_TOKEN", "no token given", NULL,
                                "missing", 0);
        return;
    }
    /* Refused before the store: the same answer as the store's ETOKEN. */
    wr_api__reply_answer(a, req, route, WR_ETOKEN, WR_API__TELLS_TOKEN, wr_token_reason_name(r), 0);
}

/* After the queue is known to exist (or the cache says so): check the
 * token and call the store. */
static void token_check(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *queue,
                        const char *tok, size_t tok_len, const char *want_user)
{
    wr_token_claims_t cl;
    wr_token_reason_t r = token_claims(a, route, queue, tok, tok_len, want_user, &cl);
    /* degraded mode: spent on this instance (store unreachable at the time) */
    if (r == WR_TOKEN_OK && route != WR_ROUTE_RELEASE &&
        wr_failopen_spent(a->failopen, &cl, (int64_t)time(NULL)))
        r = WR_TOKEN_CONSUMED;
    if (r != WR_TOKEN_OK) {
        reply_refused(a, req, route, r);
        return;
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c)
        return;
    c->claims = cl;
    wr_err_t err;
    if (route == WR_ROUTE_RELEASE) {
        /* a fail-open pass never opens a session: the store says noSession */
        err = wr_store_release(a->store, queue, cl.user, cl.jti, token_cb, c);
    } else if (wr_token_off_store(&cl)) {
        /* a fail-open pass (degraded mode) or a bypass pass lives in the
         * burned set only */
        c->op = "burn";
        err = wr_store_burn(a->store, queue, cl.jti, cl.exp * 1000000, route != WR_ROUTE_CONSUME,
                            token_cb, c);
    } else {
        err = route == WR_ROUTE_CONSUME
                  ? wr_store_consume(a->store, queue, cl.user, cl.jti, token_cb, c)
                  : wr_store_verify(a->store, queue, cl.user, cl.jti, token_cb, c);
    }
    if (err != WR_OK) {
        token_degraded(c, err);
        wr_api__ctx_free(c);
    }
}

/* A request for a queue this instance does not know yet: ask the store
 * whether it exists (and cache its config), then continue. */
typedef struct {
    wr_api__ctx_t *c;
    char tok[WR_TOKEN_MAX + 1];
    size_t tok_len;
    bool has_user;
    char want_user[WR_USER_ID_MAX + 1];
} pending_token_t;

static void token_queue_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    pending_token_t *p = arg;
    wr_api__ctx_t *c = p->c;
    wr_api_t *a = c->api;
    wr_api__observe(c, err);
    if (err == WR_OK && info && info->config) {
        wr_api__held(c, info->config);
        const wr_bypass_rule_t *rule = c->route == WR_ROUTE_VERIFY
                                           ? wr_api__bypass_match(a, c->req, info->config, true)
                                           : NULL;
        if (!info->config->enabled) {
            reply_passthrough(a, c->req, c->route);
        } else if (rule) {
            wr_api__bypass_gate(a, c->req, c->queue, rule);
        } else {
            token_check(a, c->req, c->route, c->queue, p->tok, p->tok_len,
                        p->has_user ? p->want_user : NULL);
        }
    } else {
        /* Degraded mode: a missing or invalid token is refused whatever
         * the store's state; a valid one needs the queue's config. */
        wr_token_claims_t cl;
        wr_token_reason_t r = err == WR_ENOTFOUND
                                  ? WR_TOKEN_OK
                                  : token_claims(a, c->route, c->queue, p->tok, p->tok_len,
                                                 p->has_user ? p->want_user : NULL, &cl);
        if (r != WR_TOKEN_OK)
            reply_refused(a, c->req, c->route, r);
        else
            wr_api__reply_store_error(c, err, WR_API__TELLS_QUEUE);
    }
    wr_api__ctx_free(c);
    free(p);
}

void wr_api__handle_tokens(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    const char *queue = call->queue;
    const char *tok = NULL;
    size_t tok_len = 0;
    const char *want_user = NULL;
    json_t *body = NULL;
    char cookie_tok_name[WR_QUEUE_NAME_MAX + 16];

    if (route == WR_ROUTE_CONSUME || route == WR_ROUTE_RELEASE) {
        size_t blen;
        const char *body_data = wr_http_req_body(req, &blen);
        /* white space alone is no body, as a join's */
        if (blen > 0 && !wr_api__blank(body_data, blen)) {
            const char *data = body_data;
            json_error_t jerr;
            body = data ? wr_api__load_body(data, blen, &jerr) : NULL;
            if (!json_is_object(body)) {
                json_decref(body);
                wr_api__reply_error(a, req, route, 400, "BAD_REQUEST",
                                    "body must be a JSON object {\"token\":...,\"userId\":...}",
                                    NULL, NULL, 0);
                return;
            }
            json_t *jt = json_object_get(body, "token");
            json_t *ju = json_object_get(body, "userId");
            if ((jt && !json_is_string(jt) && !json_is_null(jt)) ||
                (ju && !json_is_string(ju) && !json_is_null(ju))) {
                json_decref(body);
                wr_api__reply_error(a, req, route, 400, "BAD_REQUEST",
                                    "token and userId must be strings", NULL, NULL, 0);
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
        if (wr_api__bearer(req, &bt, &bl)) {
            tok = bt;
            tok_len = bl;
        }
    } else {
        const char *bt;
        size_t bl;
        if (wr_api__bearer(req, &bt, &bl)) {
            tok = bt;
            tok_len = bl;
        } else if ((bt = wr_http_req_header(req, "X-Waitroom-Token")) != NULL && *bt) {
            tok = bt;
            tok_len = strlen(bt);
        } else {
            snprintf(cookie_tok_name, sizeof(cookie_tok_name), "wr_token_%s", queue);
            tok = wr_http_cookie(req, cookie_tok_name, &tok_len);
        }
    }

    const wr_queue_config_t *cfg = wr_scheduler_config(a->sched, queue);
    if (cfg) {
        const wr_bypass_rule_t *rule =
            route == WR_ROUTE_VERIFY ? wr_api__bypass_match(a, req, cfg, true) : NULL;
        if (!cfg->enabled) {
            reply_passthrough(a, req, route);
        } else if (rule) {
            wr_api__bypass_gate(a, req, queue, rule);
        } else {
            token_check(a, req, route, queue, tok, tok_len, want_user);
        }
        json_decref(body);
        return;
    }
    /* Unknown here: one read to learn whether the queue exists. */
    pending_token_t *p = calloc(1, sizeof(*p));
    if (!p) {
        json_decref(body);
        wr_api__reply_oom(a, req, route);
        return;
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, route, queue);
    if (!c) {
        free(p);
        json_decref(body);
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
    wr_err_t qerr = wr_store_queue_get(a->store, queue, token_queue_cb, p);
    if (qerr != WR_OK)
        token_queue_cb(qerr, NULL, p); /* answers (degraded mode: 403 or 503) and frees */
}
