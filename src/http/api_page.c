/*
 * api_page.c - the queue page route, GET /q/{queue}: it joins like POST
 * entries (the same gates, api_entries.c: wr_api__join_start), but its
 * join is a page join (wr_store_join_page: the entry is passed over at
 * admission until the visitor's next request) and it answers HTML: the
 * page of the entry view (api_view.c, wr_api__reply_queue_page) in the
 * queue's brand. ?preview=STATE goes to api_preview.c instead.
 *
 * The gates call back into this file through page_answers: the entry
 * (page_entry_cb), the 403 page of a refused invite, and the challenge
 * page of a queue that asks for a solved challenge or a CAPTCHA (no join:
 * the page's script fetches and solves it, then joins).
 *
 * The pass: an admitted page also sets the cookie wr_token_{queue}
 * (api_request.c). The page goes to ?return= when origin.h allows it
 * (targetUrl's origin or returnOrigins), else to targetUrl, with the token
 * in the query when tokenInQuery (page.h). Errors are the page itself
 * (api_reply.c's table: the state, Retry-After); a full line retries after
 * the queue's slowest poll band, as the JSON join.
 */
#include <event2/http.h>
#include <stdio.h>
#include <string.h>

#include "http/api_routes.h"
#include "http/api_view.h"
#include "core/invite.h"
#include "core/origin.h"
#include "http/page.h"

/* Renders the queue page of view v with HTTP status in the queue's brand
 * (the config this instance holds), and frees c. */
static void send_page(wr_api__ctx_t *c, wr_page_view_t *v, int status)
{
    v->queue = c->queue;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    wr_api__reply_queue_page(c->api, c->req, c->route, status, v, cfg);
    wr_api__ctx_free(c);
}

/* Where the page sends an admitted person (v's target_url, already the
 * queue's targetUrl): ?return= when it goes to targetUrl's origin or one
 * of returnOrigins (copied to ret); and tokenInQuery. cfg NULL: unchanged. */
static void page_target(wr_api__ctx_t *c, const wr_queue_config_t *cfg,
                        char ret[WR_TARGET_URL_MAX + 1], wr_page_view_t *v)
{
    if (!cfg)
        return;
    if (wr_api__query_param(c->req, "return", ret, WR_TARGET_URL_MAX + 1) &&
        wr_origin_return_ok(ret, WR_TARGET_URL_MAX, cfg->target_url,
                            (const char(*)[WR_ORIGIN_MAX + 1]) cfg->return_origins,
                            cfg->n_return_origins))
        v->target_url = ret;
    v->token_in_query = cfg->token_in_query;
}

/* The page of a gate (state "challenge", or a join refused for its
 * invite: "invite") with status, the reason told; the queue's target
 * kept, as the page's script may still join (after the challenge, with
 * the tab's invite after a reload) and then goes there. */
static void page_gate(wr_api__ctx_t *c, const char *state, const char *reason, int status)
{
    wr_page_view_t v;
    memset(&v, 0, sizeof(v));
    v.state = state;
    v.eta_seconds = -1;
    v.target_url = "";
    v.reason = reason;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    char ret[WR_TARGET_URL_MAX + 1];
    if (cfg)
        v.target_url = cfg->target_url;
    page_target(c, cfg, ret, &v);
    send_page(c, &v, status);
}

/* The page of a join refused for its invite: 403, the reason told. */
static void page_invite_refused(wr_api__ctx_t *c, wr_invite_reason_t r)
{
    page_gate(c, "invite", wr_invite_reason_name(r), 403);
}

/* The page of a queue that asks for a solved challenge, to someone not in
 * line: no join (API 1.2); the page's script fetches a challenge, solves
 * it in a Web Worker and joins. Without JavaScript it says that it needs
 * it. The visitor cookie is set here so the script's requests share it. */
static void page_challenge(wr_api__ctx_t *c)
{
    char user[WR_USER_ID_MAX + 1], cookie[WR_IDENTITY_COOKIE_MAX + 1];
    if (c->api->cfg->identity != WR_IDENTITY_HEADER &&
        wr_api__resolve_user(c->api, c->req, c->route, true, user, cookie) != 1 && cookie[0])
        wr_api__set_visitor_cookie(c->api, c->req, cookie);
    page_gate(c, "challenge", NULL, 200);
}

static void page_entry_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api_t *a = c->api;
    wr_api__observe(c, err);
    wr_page_view_t v;
    memset(&v, 0, sizeof(v));
    v.eta_seconds = -1;
    v.target_url = "";
    char ret[WR_TARGET_URL_MAX + 1];
    int status = 200;
    if (c->cookie[0] && wr_api__visitor_kept(err))
        wr_api__set_visitor_cookie(a, c->req, c->cookie);
    wr_api__entry_view_t ev;
    bool have = false;
    if (err == WR_OK && e) {
        wr_api__entry_view(c, e, &ev); /* signing failed: admitted, without the cookie */
        have = true;
    } else {
        have = wr_api__degraded_view(c, err, &ev);
    }
    if (have) {
        v.target_url = ev.target_url;
        v.notice = ev.notice; /* every state; borrowed from the config */
        v.group = ev.group;   /* a group member's group (borrowed from the entry) */
        /* degraded mode: no entry, the config this instance holds */
        const wr_queue_config_t *cfg = e ? e->config : wr_api__held_config(c);
        page_target(c, cfg, ret, &v);
        switch (ev.state) {
        case WR_ENTRY_PREQUEUE:
            /* sale opening: the page's countdown (opens_at_ms) is the
             * queue page's; until then it keeps asking at retry */
            v.state = "prequeue";
            v.opens_at_ms = ev.opens_at_ms;
            v.retry_after_ms = ev.retry_after_ms;
            wr_api__pace_note(a, c->queue, c->user, ev.retry_after_ms);
            break;
        case WR_ENTRY_WAITING:
            if (ev.degraded) { /* degraded mode: no place to show */
                v.state = "degraded";
                v.retry_after_ms = ev.retry_after_ms;
                wr_api__pace_note(a, c->queue, c->user, ev.retry_after_ms);
                break;
            }
            v.state = "waiting";
            v.position = ev.position;
            v.waiting = ev.waiting;
            v.eta_seconds = ev.eta_seconds;
            v.retry_after_ms = ev.retry_after_ms;
            v.held = ev.held;                 /* "your place was kept" */
            v.has_stock = ev.stock_left >= 0; /* the odds */
            v.stock_left = ev.stock_left >= 0 ? (uint64_t)ev.stock_left : 0;
            v.waiting_for = ev.waiting_for; /* "stock": says what it waits for */
            if (ev.retry_after_ms)          /* 0: no config, nothing to pace by */
                wr_api__pace_note(a, c->queue, c->user, ev.retry_after_ms);
            break;
        case WR_ENTRY_CLOSED:
            /* the sale is over or sold out: the page says so and re-checks
             * slowly (the queue page's own rendering of it: page.c) */
            v.state = "closed";
            v.reason = ev.closed_reason == WR_CLOSE_SOLD_OUT ? "soldOut" : "closed";
            v.retry_after_ms = ev.retry_after_ms;
            wr_api__pace_note(a, c->queue, c->user, ev.retry_after_ms);
            break;
        case WR_ENTRY_ADMITTED:
            v.state = "admitted";
            if (ev.token[0]) {
                wr_api__set_token_cookie(c, ev.token, ev.expires_at_ms);
                v.token = ev.token;
            }
            send_page(c, &v, status); /* ev (the token) lives until here */
            return;
        case WR_ENTRY_PASSTHROUGH:
        default:
            v.state = "passthrough";
            break;
        }
    } else {
        const wr_api__answer_t *ans = wr_api__answer(err, WR_API__TELLS_PAGE);
        v.state = ans->page_state;
        v.error = ans->code;
        v.reason = wr_api__code_reason(err, e); /* a refused code: why */
        status = ans->status;
        if (err == WR_ECODE) { /* state "code": a corrected code may join, then go there */
            const wr_queue_config_t *cfg = wr_api__held_config(c);
            if (cfg)
                v.target_url = cfg->target_url;
            page_target(c, cfg, ret, &v);
        }
        /* a full line: the queue's slowest poll band, as the JSON join */
        int ra_s = wr_api__answer_retry_s(a, ans);
        if (err == WR_EFULL)
            ra_s = wr_api__full_retry_after_s(e ? e->config : wr_api__held_config(c));
        if (ra_s > 0) { /* the page retries when the header says */
            char ra[16];
            snprintf(ra, sizeof(ra), "%d", ra_s);
            wr_http_req_add_header(c->req, "Retry-After", ra);
            v.retry_after_ms = (uint32_t)ra_s * 1000u;
        }
    }
    send_page(c, &v, status);
}

static const wr_api__join_answers_t page_answers = {page_entry_cb, page_invite_refused,
                                                    page_challenge};

void wr_api__handle_queue_page(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    char preview[32] = "";
    const char *q = wr_http_req_query(req);
    if (wr_api__query_param(req, "preview", preview, sizeof(preview)) ||
        wr_api__query_names(q, "preview")) {
        wr_api__handle_preview(a, req, call, preview);
        return;
    }
    if (!wr_api__join_limited(a, req, call->route))
        wr_api__join_start(a, req, call->route, call->queue, &page_answers);
}
