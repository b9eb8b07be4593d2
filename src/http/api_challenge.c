/*
 * api_challenge.c - join challenges over HTTP (docs/API.md 1.2, "A place
 * costs work"): GET /v1/queues/{queue}/challenge, the solution a join
 * brings, and the 403 CHALLENGE_REQUIRED that refuses one (with a fresh
 * challenge inline, so the client needs no extra round trip).
 *
 * The work is core/challenge.h's: stateless, signed under a key derived
 * from the shared token secret (every instance has it, so any instance
 * checks any other's challenge), bound to the caller as this route sees
 * it (the cookie visitor, minted here when there is none, or the header's
 * user id), to the queue and to expiresAt. Issuing and checking read and
 * write nothing in the store; the route reads the queue's config only when
 * this instance does not know the queue yet (for its bits, and a 404).
 *
 * The join side (api_entries.c, join_gate) asks wr_api__challenge_check;
 * when it refuses, and the person is not already in line nor holding a
 * live pass (one store status read, which changes nothing for someone who
 * is not there), wr_api__challenge_refuse answers.
 *
 * One place, once (API 1.3, K37): a valid solution's challenge is spent
 * in the queue's spent set (store.h burn) right before the join, under
 * wr_challenge_spent_id of the challenge, until it expires; every
 * instance computes the same id, so the record holds across instances.
 * Spent before, whatever account the join is for (an invite): the
 * account's place when it has one, else 403 reason "used" with a fresh
 * challenge. A CAPTCHA fallback challenge is spent the same way.
 *
 * wr_api__solution_check reads a solution for both gates (the fallback
 * challenge under its own keys) and wr_api__gate_refuse is their one 403.
 *
 * Metrics: waitroom_challenges_issued_total{queue} (route and inline),
 * waitroom_challenges_solved_total{queue} (joins that brought a valid
 * solution), waitroom_challenges_refused_total{queue,reason}.
 */
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "base/clock.h"
#include "runtime/reporter.h"
#include "runtime/scheduler.h"
#include "core/challenge.h"
#include "http/api_gates.h"
#include "http/http.h"

static int64_t now_ms(void)
{
    return wr_clock_wall_us() / 1000;
}

static void count(wr_api_t *a, const char *name, const char *queue, const char *reason)
{
    if (!a->metrics)
        return;
    char l[WR_QUEUE_NAME_MAX + 48];
    if (reason)
        snprintf(l, sizeof l, "queue=\"%s\",reason=\"%s\"", queue, reason);
    else
        snprintf(l, sizeof l, "queue=\"%s\"", queue);
    wr_metrics_inc(a->metrics, name, l, 1);
}

bool wr_api__challenge_required(const wr_queue_config_t *cfg)
{
    /* A closed or sold-out queue (as the last tick said) asks for no work:
     * a newcomer's join can only be told "closed"/"soldOut", so the store
     * answers it; a phone must not spend seconds of CPU to read that the
     * sale has ended. While stock is 0 but passes are still live a join
     * still adds a person to the line (API 1.2): it needs a solution. */
    return cfg && cfg->enabled && cfg->challenge_bits > 0 && !cfg->closed && !cfg->sold_out;
}

/* A fresh challenge of queue for caller under key at bits, as the JSON
 * members "challenge":...,"bits":N,"expiresAt":... into out (counted as
 * issued); false on failure. */
static bool fresh(wr_api_t *a, wr_challenge_key_t *key, unsigned bits, const char *queue,
                  const char *caller, char *out, size_t cap)
{
    char c[WR_CHALLENGE_MAX + 1];
    int64_t exp = now_ms() + WR_CHALLENGE_TTL_MS;
    if (!key || wr_challenge_issue(key, queue, caller, bits, exp, c) != WR_OK)
        return false;
    int n = snprintf(out, cap, "\"challenge\":\"%s\",\"bits\":%u,\"expiresAt\":%lld", c, bits,
                     (long long)exp);
    if (n <= 0 || (size_t)n >= cap)
        return false;
    count(a, "waitroom_challenges_issued_total", queue, NULL);
    return true;
}

/* ---------- GET /v1/queues/{queue}/challenge ---------- */

static void issue_reply(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
                        const wr_queue_config_t *cfg, const char *queue)
{
    char user[WR_USER_ID_MAX + 1], cookie[WR_IDENTITY_COOKIE_MAX + 1];
    if (wr_api__resolve_user(a, req, route, true, user, cookie) == 1)
        return; /* answered (400) */
    char body[WR_CHALLENGE_MAX + 96];
    body[0] = '{';
    if (!fresh(a, a->challenge_keys[0], cfg ? cfg->challenge_bits : 0, queue, user, body + 1,
               sizeof body - 2)) {
        wr_api__reply_error(a, req, route, 500, "INTERNAL", "could not sign a challenge", NULL,
                            NULL, 0);
        return;
    }
    strcat(body, "}");
    if (cookie[0])
        wr_api__set_visitor_cookie(a, req, cookie);
    wr_api__reply_json(a, req, route, 200, body, strlen(body), 0);
}

static void challenge_config_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && info) {
        wr_scheduler_note(c->api->sched, c->queue, info->config);
        issue_reply(c->api, c->req, c->route, info->config, c->queue);
    } else {
        wr_api__reply_store_error(c, err, WR_API__TELLS_QUEUE);
    }
    wr_api__ctx_free(c);
}

void wr_api__handle_challenge(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    const wr_queue_config_t *cfg = wr_scheduler_config(a->sched, call->queue);
    if (cfg) {
        issue_reply(a, req, call->route, cfg, call->queue);
        return;
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, call->route, call->queue);
    if (!c)
        return;
    c->op = "queue_get";
    if (wr_store_queue_get(a->store, call->queue, challenge_config_cb, c) != WR_OK) {
        wr_api__reply_unavailable(a, req, call->route, WR_EUNAVAILABLE);
        wr_api__ctx_free(c);
    }
}

/* ---------- the join's solution ---------- */

bool wr_api__join_body(wr_http_req_t *req, json_t **out)
{
    *out = NULL;
    if (wr_http_req_method(req) != WR_HTTP_M_POST)
        return false;
    size_t blen;
    const char *body_data = wr_http_req_body(req, &blen);
    if (blen == 0)
        return false;
    const char *data = body_data;
    json_error_t jerr;
    *out = data ? wr_api__load_body(data, blen, &jerr) : NULL;
    return true;
}

wr_challenge_reason_t wr_api__solution_check(wr_api_t *a, wr_http_req_t *req,
                                             wr_challenge_key_t *const *keys, unsigned bits,
                                             const char *queue, const char *caller,
                                             char spend_id[WR_CHALLENGE_ID_LEN + 1],
                                             int64_t *spend_exp_ms)
{
    spend_id[0] = '\0';
    *spend_exp_ms = 0;
    json_t *body = NULL;
    if (!wr_api__join_body(req, &body))
        return WR_CHALLENGE_MISSING; /* the queue page's GET brings none */
    wr_challenge_reason_t r;
    json_t *jc = json_object_get(body, "challenge"), *jn = json_object_get(body, "nonce");
    const char *ch = json_string_value(jc);
    size_t clen = ch ? json_string_length(jc) : 0;
    if (!json_is_object(body))
        r = WR_CHALLENGE_MALFORMED;
    else if (!jc || json_is_null(jc))
        r = WR_CHALLENGE_MISSING;
    else if (!ch || (jn && !json_is_string(jn)))
        r = WR_CHALLENGE_MALFORMED;
    else
        r = wr_challenge_check(keys, 2, queue, caller, ch, clen, jn ? json_string_value(jn) : NULL,
                               jn ? json_string_length(jn) : 0, bits, now_ms());
    /* what the join spends: one place, once (API 1.3) */
    if (r == WR_CHALLENGE_OK && wr_challenge_spent_id(keys[0] ? keys[0] : keys[1], "challenge v1",
                                                      &ch, &clen, 1, spend_id) == WR_OK)
        *spend_exp_ms = wr_challenge_expires_at(ch, clen);
    json_decref(body);
    if (r == WR_CHALLENGE_OK)
        count(a, "waitroom_challenges_solved_total", queue, NULL);
    return r;
}

wr_challenge_reason_t wr_api__challenge_check(wr_api_t *a, wr_http_req_t *req,
                                              const wr_queue_config_t *cfg, const char *queue,
                                              const char *caller,
                                              char spend_id[WR_CHALLENGE_ID_LEN + 1],
                                              int64_t *spend_exp_ms)
{
    spend_id[0] = '\0';
    *spend_exp_ms = 0;
    if (!wr_api__challenge_required(cfg))
        return WR_CHALLENGE_OK;
    return wr_api__solution_check(a, req, a->challenge_keys, cfg->challenge_bits, queue, caller,
                                  spend_id, spend_exp_ms);
}

/* ---------- the join gates' 403 ---------- */

void wr_api__gate_refuse(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
                         const wr_queue_config_t *cfg, const char *queue, const char *reason,
                         const char *message, bool challenge, wr_challenge_key_t *key,
                         unsigned bits, bool fallback, int retry_s)
{
    char user[WR_USER_ID_MAX + 1], cookie[WR_IDENTITY_COOKIE_MAX + 1];
    if (wr_api__resolve_user(a, req, route, true, user, cookie) == 1)
        return; /* answered (400) */
    count(a, "waitroom_challenges_refused_total", queue, reason);
    if (strcmp(reason, "missing") != 0) /* the sale's report: a solution that failed */
        wr_reporter_count(wr_scheduler_reporter(a->sched), queue, WR_REPORT_CHALLENGE_FAILED, 1);
    /* a queue with a captcha: what the client needs to show its widget
     * (api_captcha.c) */
    char fr[WR_CHALLENGE_MAX + 96] = "", cm[WR_CAPTCHA_SCRIPT_MAX + WR_CAPTCHA_SITE_KEY_MAX + 96];
    char body[sizeof fr + sizeof cm + 256];
    if ((challenge && !fresh(a, key, bits, queue, user, fr + 1, sizeof fr - 1)) ||
        wr_api__captcha_member(cfg, cm, sizeof cm) < 0) {
        wr_api__reply_error(a, req, route, 500, "INTERNAL", "could not sign a challenge", NULL,
                            NULL, 0);
        return;
    }
    if (challenge)
        fr[0] = ',';
    int n =
        snprintf(body, sizeof body,
                 "{\"error\":\"CHALLENGE_REQUIRED\",\"message\":\"%s\",\"reason\":\"%s\"%s%s%s}",
                 message, reason, fr, cm, fallback ? ",\"fallback\":true" : "");
    if (n <= 0 || (size_t)n >= sizeof body) {
        wr_api__reply_error(a, req, route, 500, "INTERNAL", "reply too large", NULL, NULL, 0);
        return;
    }
    if (cookie[0])
        wr_api__set_visitor_cookie(a, req, cookie);
    wr_api__reply_json(a, req, route, 403, body, (size_t)n, retry_s);
}

void wr_api__challenge_refuse(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
                              const wr_queue_config_t *cfg, const char *queue,
                              wr_challenge_reason_t r)
{
    const char *msg = r == WR_CHALLENGE_MISSING ? "this queue needs a solved challenge to join"
                      : r == WR_CHALLENGE_USED
                          ? "this challenge has bought its place already: solve a fresh one"
                          : "the challenge's solution is not valid here";
    wr_api__gate_refuse(a, req, route, cfg, queue, wr_challenge_reason_name(r), msg, true,
                        a->challenge_keys[0], cfg ? cfg->challenge_bits : 0, false, 0);
}
