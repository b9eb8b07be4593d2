/*
 * api_captcha.c - the CAPTCHA hook over HTTP (docs/API.md 1.2, "A place
 * costs work", the captcha field): the widget response a join brings, its
 * server-side verification with the provider's siteverify, the fallback
 * proof of work when the provider does not answer, and the 403
 * CHALLENGE_REQUIRED that refuses a join for it.
 *
 * The join side: api_entries.c's join_gate runs the proof of work, then
 * hands a join of a queue with a captcha to wr_api__captcha_gate here,
 * with the steps it goes on with (the store's join, a join's answer, the
 * refusal). A join that would add a person needs a valid widget response
 * ("captchaResponse" in the body); with challengeBits > 0 also a solved
 * challenge, checked first (it is free; the provider's call is not, and a
 * response is good for one verification only). People already in line or
 * holding a live pass need neither.
 *
 * A response is sent to the provider only when it has to be (API 1.3,
 * K38): the verdict on it is looked up first in the queue's spent set
 * (store.h burn, check only) under an id of caller, account and response
 * (wr_api__captcha_verdict_id): accepted within WR_API__CAPTCHA_VERDICT_MS,
 * the join goes on without the provider, so a retry after a refused join
 * needs no new puzzle. Else the person's status (someone there is
 * answered, nothing verified), then, with a maxQueueSize, the line (full,
 * closed, sold out: answered as the join would be); a store that does not
 * answer under failPolicy closed, or under a brake of the known config,
 * is answered at once. Only then the provider; its acceptance is
 * remembered (fire and forget) and the join goes on.
 *
 * The provider's answer must be this queue's widget's (K39): hCaptcha is
 * sent the site key (its secret is the account's); an answer that names
 * another site key, or another host name than captcha.hostname when set,
 * is a refusal (core/captcha.c wr_captcha_verdict).
 *
 * Verification: one form POST per join to the queue's verify URL through
 * libevent's HTTP client, on a connection of its own ("Connection: close":
 * one request each, no pool), TLS through bufferevent_openssl with the
 * peer's certificate and name checked (https://), plain only to a loopback
 * stand-in (core/captcha.c refuses anything else); host names go through
 * evdns, so nothing blocks the loop. Every verification has one event of
 * its own, `ev`: a timer set to WR_API__CAPTCHA_TIMEOUT_MS, made active at
 * once by the HTTP client's callback; its callback (deliver) answers the
 * caller - exactly once, from the loop, never inside wr_api__captcha_verify
 * (libevent calls the request's callback inside evhttp_make_request when a
 * connect fails at once) - and frees the connection: on the deadline the
 * pending request is dropped with it (evhttp_connection_free frees it
 * without calling back). At most WR_API__CAPTCHA_IN_FLIGHT_MAX
 * verifications are in flight; beyond that a join counts as one the
 * provider did not answer (outcome "busy").
 *
 * The provider does not answer (timeout, no connection, a 5xx, an answer
 * that is not its JSON, an oversized one): the queue's captcha.fallback
 * decides. "challenge": a join that already brought a challengeBits
 * solution goes in; otherwise the 403 (captchaUnavailable) carries a fresh
 * fallback challenge at captcha.fallbackBits, signed under a key of its
 * own (derived from the token secret under "waitroom captcha fallback
 * v1"), so it is issued only when the provider was silent, and a solved
 * one then joins without a widget response. "refuse": 403
 * captchaUnavailable, nothing else.
 *
 * Metrics: waitroom_captcha_verifications_total{queue,outcome} (passed,
 * refused, timeout, error, badAnswer, busy); refusals are counted with the
 * challenges' in waitroom_challenges_refused_total{queue,reason}, by the
 * one 403 of both gates (api_challenge.c wr_api__gate_refuse).
 */
#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/log.h"
#include "base/version.h"
#include "core/captcha.h"
#include "core/challenge.h"
#include "core/queue.h"
#include "http/api_client.h"
#include "http/api_gates.h"
#include "http/http.h"

#define FALLBACK_LABEL "waitroom captcha fallback v1"

/* The siteverify client of one api: made at the first verification. */

/* One verification in flight. */
typedef struct {
    wr_api_t *api;
    struct event *ev; /* the deadline, made active when the answer is in */
    struct evhttp_connection *evcon;
    wr_api__verify_cb cb;
    void *arg;
    bool done;                        /* the HTTP client answered */
    wr_api__verify_outcome_t outcome; /* when done */
    enum evhttp_request_error http_error;
    bool has_error;
    char queue[WR_QUEUE_NAME_MAX + 1];
    /* whose answer it must be (K39): the queue's site key and hostname */
    char site_key[WR_CAPTCHA_SITE_KEY_MAX + 1];
    char hostname[WR_CAPTCHA_HOSTNAME_MAX + 1];
} verify_t;

static const char *const outcome_names[] = {
    [WR_API__VERIFY_PASSED] = "passed",        [WR_API__VERIFY_REFUSED] = "refused",
    [WR_API__VERIFY_TIMEOUT] = "timeout",      [WR_API__VERIFY_ERROR] = "error",
    [WR_API__VERIFY_BAD_ANSWER] = "badAnswer", [WR_API__VERIFY_BUSY] = "busy",
};

const char *wr_api__captcha_reason_name(wr_api__captcha_reason_t r)
{
    switch (r) {
    case WR_API__CAPTCHA_MISSING:
        return "captchaMissing";
    case WR_API__CAPTCHA_INVALID:
        return "captchaInvalid";
    case WR_API__CAPTCHA_UNAVAILABLE:
        return "captchaUnavailable";
    default:
        return "ok";
    }
}

static int64_t now_ms(void)
{
    return wr_clock_wall_us() / 1000;
}

void wr_api__captcha_count(wr_api_t *a, const char *queue, wr_api__verify_outcome_t outcome)
{
    if (!a->metrics)
        return;
    char l[WR_QUEUE_NAME_MAX + 48];
    snprintf(l, sizeof l, "queue=\"%s\",outcome=\"%s\"", queue,
             (unsigned)outcome <= WR_API__VERIFY_BUSY ? outcome_names[outcome] : "error");
    wr_metrics_inc(a->metrics, "waitroom_captcha_verifications_total", l, 1);
}

bool wr_api__captcha_required(const wr_queue_config_t *cfg)
{
    /* as challenges: a closed or sold-out queue asks for nothing, its
     * answer to a newcomer is "closed" */
    return cfg && cfg->enabled && cfg->captcha.set && !cfg->closed && !cfg->sold_out;
}

/* ---------- keys ---------- */

void wr_api__captcha_set_key(wr_api_t *a, int i, const uint8_t *secret, size_t len)
{
    wr_challenge_key_free(a->captcha_keys[i]);
    a->captcha_keys[i] = NULL;
    uint8_t k[WR_CRYPTO_KEY_LEN];
    if (len > 0 && wr_crypto_derive_key(secret, len, FALLBACK_LABEL, k) == WR_OK)
        a->captcha_keys[i] = wr_challenge_key_new(k, sizeof k);
    wr_crypto_wipe(k, sizeof k);
}

void wr_api__captcha_free(wr_api_t *a)
{
    wr_challenge_key_free(a->captcha_keys[0]);
    wr_challenge_key_free(a->captcha_keys[1]);
    a->captcha_keys[0] = a->captcha_keys[1] = NULL;
}

/* ---------- the join's body ---------- */

int wr_api__captcha_read(wr_http_req_t *req, char out[WR_CAPTCHA_RESPONSE_MAX + 1])
{
    out[0] = '\0';
    json_t *body = NULL;
    wr_api__join_body(req, &body);
    json_t *r = json_is_object(body) ? json_object_get(body, "captchaResponse") : NULL;
    int got = 0;
    if (r && !json_is_null(r)) {
        const char *s = json_string_value(r);
        size_t len = s ? json_string_length(r) : 0;
        if (s && wr_captcha_response_ok(s, len) && !memchr(s, '\0', len)) {
            memcpy(out, s, len);
            out[len] = '\0';
            got = 1;
        } else {
            got = -1;
        }
    }
    json_decref(body);
    return got;
}

wr_challenge_reason_t wr_api__captcha_fallback_check(wr_api_t *a, wr_http_req_t *req,
                                                     const wr_queue_config_t *cfg,
                                                     const char *queue, const char *caller,
                                                     char spend_id[WR_CHALLENGE_ID_LEN + 1],
                                                     int64_t *spend_exp_ms)
{
    return wr_api__solution_check(a, req, a->captcha_keys, cfg->captcha.fallback_bits, queue,
                                  caller, spend_id, spend_exp_ms);
}

/* ---------- the verdict kept, the place known first (API 1.3) ---------- */

bool wr_api__captcha_verdict_id(wr_api_t *a, const char *caller, const char *user,
                                const char *response, char out[WR_CHALLENGE_ID_LEN + 1])
{
    const char *parts[] = {caller, user, response};
    size_t lens[] = {strlen(caller), strlen(user), strlen(response)};
    out[0] = '\0';
    wr_challenge_key_t *k = a->captcha_keys[0] ? a->captcha_keys[0] : a->challenge_keys[0];
    return k && wr_challenge_spent_id(k, "captcha verdict v1", parts, lens, 3, out) == WR_OK;
}

static void remembered_cb(wr_err_t err, const wr_token_check_t *res, void *arg)
{
    (void)res;
    (void)arg;
    if (err != WR_OK && err != WR_ETOKEN && err != WR_ECANCELED)
        wr_log(WR_LOG_DEBUG, "captcha: a verdict was not remembered (%s)", wr_strerror(err));
}

void wr_api__captcha_remember(wr_api_t *a, const char *queue, const char *id)
{
    if (id && id[0])
        (void)wr_store_burn(a->store, queue, id, (now_ms() + WR_API__CAPTCHA_VERDICT_MS) * 1000,
                            false, remembered_cb, NULL);
}

bool wr_api__captcha_no_place(const wr_queue_info_t *info, wr_entry_t *e, wr_err_t *err)
{
    const wr_queue_config_t *cfg = info ? info->config : NULL;
    if (!cfg || !cfg->enabled)
        return false;
    memset(e, 0, sizeof *e);
    e->config = cfg;
    e->stock_left = info->stats.stock_left;
    e->waiting = info->stats.waiting;
    *err = WR_OK;
    if (cfg->closed || info->stats.sold_out_at_ms >= 0) {
        e->state = WR_ENTRY_CLOSED;
        e->closed_reason = cfg->closed ? WR_CLOSE_CLOSED : WR_CLOSE_SOLD_OUT;
        return true;
    }
    uint64_t max = cfg->max_queue_size;
    if (max > 0 && info->stats.waiting + info->stats.prequeue >= max) {
        *err = WR_EFULL;
        return true;
    }
    return false;
}

/* ---------- verification ---------- */

/* Answers the caller once and frees v: from the loop, when the HTTP
 * client answered (ev made active) or at the deadline (ev's timer). */
static void deliver(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    verify_t *v = arg;
    wr_api__verify_outcome_t outcome = v->done ? v->outcome : WR_API__VERIFY_TIMEOUT;
    event_free(v->ev);
    if (v->evcon) /* a pending request goes with it, without a callback */
        evhttp_connection_free(v->evcon);
    if (v->api->client && v->api->client->in_flight > 0)
        v->api->client->in_flight--;
    wr_api__captcha_count(v->api, v->queue, outcome);
    /* a provider down during a sale fails every join: one line in 10 s */
    static int64_t last_warn_ms;
    static uint64_t quiet;
    if (outcome != WR_API__VERIFY_PASSED && outcome != WR_API__VERIFY_REFUSED) {
        int64_t now = now_ms();
        if (now - last_warn_ms >= 10000) {
            wr_log(WR_LOG_WARN,
                   "captcha: queue %s: the provider did not answer (%s); %llu more since the "
                   "last line",
                   v->queue, outcome_names[outcome], (unsigned long long)quiet);
            last_warn_ms = now;
            quiet = 0;
        } else {
            quiet++;
        }
    }
    wr_api__verify_cb cb = v->cb;
    void *cb_arg = v->arg;
    free(v);
    cb(outcome, cb_arg);
}

static void http_error_cb(enum evhttp_request_error e, void *arg)
{
    verify_t *v = arg;
    v->http_error = e;
    v->has_error = true;
}

/* The HTTP client's answer (req NULL: it failed; then http_error_cb has
 * said why). May run inside evhttp_make_request: only records, and makes
 * ev active; deliver answers. req is libevent's, freed after this. */
static void http_done_cb(struct evhttp_request *req, void *arg)
{
    verify_t *v = arg;
    if (v->done)
        return;
    v->done = true;
    int status = req ? evhttp_request_get_response_code(req) : 0;
    if (!req || status == 0) {
        v->outcome = v->has_error && v->http_error == EVREQ_HTTP_TIMEOUT ? WR_API__VERIFY_TIMEOUT
                     : v->has_error && v->http_error == EVREQ_HTTP_DATA_TOO_LONG
                         ? WR_API__VERIFY_BAD_ANSWER
                         : WR_API__VERIFY_ERROR;
    } else {
        char body[WR_CAPTCHA_ANSWER_MAX];
        char codes[WR_CAPTCHA_ERROR_CODES_MAX + 1];
        ev_ssize_t got = wr_api__client_body(req, body, sizeof body);
        if (got < 0) {
            v->outcome = WR_API__VERIFY_BAD_ANSWER;
        } else {
            wr_captcha_config_t expect;
            memset(&expect, 0, sizeof expect);
            memcpy(expect.site_key, v->site_key, sizeof expect.site_key);
            memcpy(expect.hostname, v->hostname, sizeof expect.hostname);
            wr_captcha_verdict_t vd =
                wr_captcha_verdict(status, body, (size_t)got, &expect, codes, sizeof codes);
            v->outcome = vd == WR_CAPTCHA_PASSED    ? WR_API__VERIFY_PASSED
                         : vd == WR_CAPTCHA_REFUSED ? WR_API__VERIFY_REFUSED
                         : status >= 500            ? WR_API__VERIFY_ERROR
                                                    : WR_API__VERIFY_BAD_ANSWER;
            if (vd == WR_CAPTCHA_REFUSED)
                wr_log(WR_LOG_DEBUG, "captcha: queue %s: refused (%s)", v->queue,
                       codes[0] ? codes : "no error codes");
        }
    }
    event_active(v->ev, EV_TIMEOUT, 1);
}

wr_err_t wr_api__captcha_verify(wr_api_t *a, const wr_queue_config_t *cfg, const char *queue,
                                const char *response, const char *remoteip, wr_api__verify_cb cb,
                                void *arg)
{
    wr_captcha_url_t u;
    if (!cfg || !cfg->captcha.set || !cb || !response ||
        !wr_captcha_response_ok(response, strlen(response)) ||
        !wr_captcha_url_parse(cfg->captcha.verify_url, &u))
        return WR_EINVAL;
    if (!a->client && !(a->client = calloc(1, sizeof *a->client)))
        return WR_ENOMEM;
    if (a->client->in_flight >= WR_API__CAPTCHA_IN_FLIGHT_MAX)
        return WR_ELIMIT;
    char form[WR_CAPTCHA_FORM_MAX];
    /* hCaptcha's secret is the account's: it is told the site key (K39) */
    int flen = wr_captcha_form(form, sizeof form, cfg->captcha.secret, response, remoteip,
                               cfg->captcha.provider == WR_CAPTCHA_HCAPTCHA ? cfg->captcha.site_key
                                                                            : NULL);
    if (flen < 0)
        return WR_EINVAL;

    verify_t *v = calloc(1, sizeof *v);
    if (!v)
        return WR_ENOMEM;
    v->api = a;
    v->cb = cb;
    v->arg = arg;
    snprintf(v->queue, sizeof v->queue, "%s", queue);
    snprintf(v->site_key, sizeof v->site_key, "%s", cfg->captcha.site_key);
    snprintf(v->hostname, sizeof v->hostname, "%s", cfg->captcha.hostname);
    v->ev = evtimer_new(a->base, deliver, v);
    if (!v->ev) {
        free(v);
        return WR_ENOMEM;
    }
    v->evcon = wr_api__client_connection(a, &u, WR_API__CAPTCHA_TIMEOUT_MS, WR_CAPTCHA_ANSWER_MAX);
    struct evhttp_request *req = v->evcon ? evhttp_request_new(http_done_cb, v) : NULL;
    if (!req) {
        if (v->evcon)
            evhttp_connection_free(v->evcon);
        event_free(v->ev);
        free(v);
        return WR_ENOMEM;
    }
    struct timeval tv = wr_clock_tv_ms(WR_API__CAPTCHA_TIMEOUT_MS);
    evhttp_request_set_error_cb(req, http_error_cb);
    wr_api__client_headers(req, &u);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "application/x-www-form-urlencoded");
    evbuffer_add(evhttp_request_get_output_buffer(req), form, (size_t)flen);
    wr_crypto_wipe(form, sizeof form); /* the secret */
    a->client->in_flight++;
    evtimer_add(v->ev, &tv);
    if (evhttp_make_request(v->evcon, req, EVHTTP_REQ_POST, u.path) != 0 && !v->done) {
        /* could not even start (the request is libevent's to free) */
        v->done = true;
        v->outcome = WR_API__VERIFY_ERROR;
        event_active(v->ev, EV_TIMEOUT, 1);
    }
    return WR_OK;
}

/* ---------- the join's gate ---------- */

/* The provider's word on the join's widget response. */
static void captcha_verified(wr_api__verify_outcome_t outcome, void *arg)
{
    wr_api__ctx_t *c = arg;
    switch (outcome) {
    case WR_API__VERIFY_PASSED:
        /* good for this caller, account and queue for a while (API 1.3):
         * a retry after a refused join needs no new puzzle */
        wr_api__captcha_remember(c->api, c->queue, c->verdict_id);
        c->steps->join(c);
        return;
    case WR_API__VERIFY_REFUSED:
        c->steps->refused(c, WR_API__CAPTCHA_INVALID);
        return;
    default:
        /* the provider did not answer: the queue's fallback policy; with
         * "challenge", a join that solved the challengeBits proof of work
         * goes in, any other gets a fallback challenge in its 403 */
        if (c->captcha_pow && c->captcha_fallback_pow)
            c->steps->join(c);
        else
            c->steps->refused(c, WR_API__CAPTCHA_UNAVAILABLE);
        return;
    }
}

/* Sends the join's widget response to the provider (the loop goes on
 * meanwhile). Answers and frees c. */
static void captcha_send(wr_api__ctx_t *c)
{
    wr_api_t *a = c->api;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    char resp[WR_CAPTCHA_RESPONSE_MAX + 1];
    char addr[64];
    wr_api__client_addr(a, c->req, addr, sizeof(addr));
    c->op = "captcha";
    wr_err_t err = cfg && wr_api__captcha_read(c->req, resp) == 1
                       ? wr_api__captcha_verify(a, cfg, c->queue, resp, addr, captcha_verified, c)
                       : WR_EINVAL;
    if (err != WR_OK) {
        wr_api__verify_outcome_t o = err == WR_ELIMIT ? WR_API__VERIFY_BUSY : WR_API__VERIFY_ERROR;
        wr_api__captcha_count(a, c->queue, o);
        captcha_verified(o, c);
    }
}

/* Before the provider, a store that does not answer (err): a join that
 * gets no place anyway (failPolicy closed, a brake of the known config)
 * is answered now, and its response is not spent; otherwise the provider
 * decides and the join goes on in degraded mode. False when err is not
 * the store's silence (nothing done). */
static bool captcha_unreachable(wr_api__ctx_t *c, wr_err_t err)
{
    if (!wr_api__store_unreachable(err))
        return false;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    if (cfg && cfg->fail_policy != WR_FAIL_CLOSED &&
        wr_queue_degraded_brake(cfg, wr_clock_wall_us() / 1000) == WR_BRAKE_NONE)
        captcha_send(c);
    else
        c->steps->answer(c, err, NULL);
    return true;
}

/* A newcomer's join, before the provider: will it get a place? A full,
 * closed or sold-out line is answered now (API 1.3). */
static void captcha_place_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    wr_entry_t e;
    wr_err_t why;
    if (err == WR_OK && wr_api__captcha_no_place(info, &e, &why))
        c->steps->answer(c, why, &e);
    else if (!captcha_unreachable(c, err))
        captcha_send(c);
}

/* Is the person there already (in line, pre-queue, a live pass)? Then the
 * join is answered with no verification; a newcomer's line is looked at
 * when it has a maxQueueSize (closed and sold out are known here). */
static void captcha_status_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    if (err == WR_OK && e) {
        c->steps->answer(c, err, e);
        return;
    }
    wr_api__observe(c, err);
    if (captcha_unreachable(c, err))
        return;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    if (!cfg || cfg->max_queue_size == 0) {
        captcha_send(c);
        return;
    }
    c->op = "queue_get";
    c->t0_us = wr_clock_wall_us();
    if (wr_store_queue_get(c->api->store, c->queue, captcha_place_cb, c) != WR_OK)
        captcha_place_cb(WR_EUNAVAILABLE, NULL, c);
}

/* Is the person there? One status read (captcha_status_cb). */
static void captcha_ask_status(wr_api__ctx_t *c)
{
    c->op = "status";
    c->t0_us = wr_clock_wall_us();
    c->seen_us = wr_clock_mono_us();
    if (wr_store_status(c->api->store, c->queue, c->user, captcha_status_cb, c) != WR_OK)
        captcha_status_cb(WR_EUNAVAILABLE, NULL, c);
}

/* The store's word on the join's widget response: accepted already (a
 * verdict stays good for WR_API__CAPTCHA_VERDICT_MS) joins with no
 * provider; else the person's status first. */
static void captcha_kept_cb(wr_err_t err, const wr_token_check_t *res, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_ETOKEN && res && res->reason == WR_TOKEN_CONSUMED) {
        c->verdict_id[0] = '\0';
        c->steps->join(c);
        return;
    }
    if (!captcha_unreachable(c, err))
        captcha_ask_status(c);
}

void wr_api__captcha_gate(wr_api__ctx_t *c, const wr_queue_config_t *cfg, const char *caller,
                          const wr_api__join_steps_t *steps)
{
    wr_api_t *a = c->api;
    c->steps = steps;
    char resp[WR_CAPTCHA_RESPONSE_MAX + 1];
    int got = wr_api__captcha_read(c->req, resp);
    if (got == 0 && !c->captcha_pow && c->captcha_fallback_pow &&
        wr_api__captcha_fallback_check(a, c->req, cfg, c->queue, caller, c->spend_id,
                                       &c->spend_exp_ms) == WR_CHALLENGE_OK) {
        c->steps->join(c);
        return;
    }
    if (got <= 0) {
        c->steps->refused(c, got == 0 ? WR_API__CAPTCHA_MISSING : WR_API__CAPTCHA_INVALID);
        return;
    }
    if (!wr_api__captcha_verdict_id(a, caller, c->user, resp, c->verdict_id)) {
        captcha_ask_status(c); /* no key to name it by: nothing to look up */
        return;
    }
    c->op = "burn";
    c->t0_us = wr_clock_wall_us();
    int64_t until_us = (wr_clock_wall_us() / 1000 + WR_API__CAPTCHA_VERDICT_MS) * 1000;
    if (wr_store_burn(a->store, c->queue, c->verdict_id, until_us, true, captcha_kept_cb, c) !=
        WR_OK)
        captcha_kept_cb(WR_EUNAVAILABLE, NULL, c);
}

/* ---------- the 403 ---------- */

int wr_api__captcha_member(const wr_queue_config_t *cfg, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return -1;
    buf[0] = '\0';
    if (!cfg || !cfg->captcha.set)
        return 0;
    char script[WR_CAPTCHA_SCRIPT_MAX + 1];
    if (wr_captcha_script_url(&cfg->captcha, script, sizeof script) < 0)
        return -1;
    /* site key and script URL are plain ASCII without quotes or
     * backslashes (core/captcha.c): no escaping needed */
    int n = snprintf(
        buf, cap, ",\"captcha\":{\"provider\":\"%s\",\"siteKey\":\"%s\",\"scriptUrl\":\"%s\"}",
        wr_captcha_provider_name(cfg->captcha.provider), cfg->captcha.site_key, script);
    return n >= 0 && (size_t)n < cap ? n : -1;
}

void wr_api__captcha_refuse(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
                            const wr_queue_config_t *cfg, const char *queue,
                            wr_api__captcha_reason_t r)
{
    /* the proof of work's challenge when the queue asks for one too; a
     * fallback challenge for a silent provider under "challenge" */
    wr_challenge_key_t *key = NULL;
    unsigned bits = 0;
    bool fallback = false, challenge = false;
    if (cfg && wr_api__challenge_required(cfg)) {
        challenge = true;
        key = a->challenge_keys[0];
        bits = cfg->challenge_bits;
    } else if (cfg && r == WR_API__CAPTCHA_UNAVAILABLE &&
               cfg->captcha.fallback == WR_CAPTCHA_FALLBACK_CHALLENGE) {
        key = a->captcha_keys[0];
        bits = cfg->captcha.fallback_bits;
        fallback = true;
    }
    const char *msg = r == WR_API__CAPTCHA_MISSING   ? "this queue needs a verified CAPTCHA to join"
                      : r == WR_API__CAPTCHA_INVALID ? "the CAPTCHA response was not accepted"
                      : fallback ? "the CAPTCHA provider did not answer: solve the challenge "
                                   "instead"
                                 : "the CAPTCHA provider did not answer: try again later";
    /* a refusal for a silent provider: come back in a moment */
    wr_api__gate_refuse(a, req, route, cfg, queue, wr_api__captcha_reason_name(r), msg,
                        challenge || fallback, key, bits, fallback,
                        r == WR_API__CAPTCHA_UNAVAILABLE && !fallback ? 2 : 0);
}
