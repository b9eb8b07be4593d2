/*
 * api_bypass.c - bypass rules at the gate and the join (docs/API.md 1.3,
 * "Bypass rules", "Bypass, safely"; the rules themselves are core/bypass.c).
 *
 * What a request shows the rules: its header fields (a header rule), the
 * client address through trusted proxies (wr_api__client_addr: the peer,
 * or the rightmost X-Forwarded-For entry that is not a trusted proxy when
 * the peer is one), and, at the gate only, X-Original-URI when the peer is
 * a trusted proxy (from any other peer it is ignored, as X-Forwarded-*).
 *
 * Rules are checked right after `enabled`, before every other check (the
 * token at the gate; the join's rate limit, invite, challenge, CAPTCHA,
 * closed, stock, full line and pre-queue): a queue that is off answers
 * passthrough as ever, one that is on asks its rules first.
 *
 * A bypass takes nothing from the line: no place, no active slot, no
 * stock. It is counted twice, so it cannot hide load: this instance's
 * waitroom_bypass_total{queue,rule}, and the store's bypass_total (stats
 * bypassTotal, every instance's bypasses added up: store.h bypass). The
 * answer waits for the store's count (so stats read after it include it),
 * but does not depend on it: a store that fails or is unreachable is
 * counted (waitroom_store_errors_total{op="bypass"}, a debug line) and the
 * bypass answered all the same (the rule is the operator's word, not the
 * store's).
 *
 * The answers: the gate (GET tokens/verify) 204 with X-Waitroom-Bypass:
 * <name>; the join (POST entries, header and cidr rules) 200
 * {"status":"passthrough","bypass":"<name>","token":"<pass>"}, the pass a
 * JWT with "byp":"<name>" whose jti the store never saw (its sub is the
 * caller as any join resolves it: the identity header, "bypass:<name>"
 * when that is missing or not a user id, or the visitor cookie, minted if
 * needed; the wr_token_{queue} cookie is set as for an admitted join), which consume accepts once
 * through the store's burned set (api_tokens.c), as degraded mode's fail-open passes.
 */
#include <event2/http.h>
#include <stdio.h>
#include <string.h>

#include "http/api_gates.h"
#include "http/api_view.h"
#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"
#include "http/http.h"

static const char *find_header(void *ctx, const char *name)
{
    return wr_http_req_header(ctx, name);
}

const wr_bypass_rule_t *wr_api__bypass_match(wr_api_t *a, wr_http_req_t *req,
                                             const wr_queue_config_t *cfg, bool gate)
{
    if (!cfg || !cfg->enabled || !cfg->bypass.set || cfg->bypass.n == 0)
        return NULL;
    char client[64];
    wr_api__client_addr(a, req, client, sizeof client);
    const char *uri =
        gate && wr_api__peer_trusted(a, req) ? wr_http_req_header(req, "X-Original-URI") : NULL;
    wr_bypass_request_t r = {find_header, req, client[0] ? client : NULL, uri, gate};
    return wr_bypass_match(&cfg->bypass, &r);
}

/* The store counted c's bypass (or could not): the answer. Frees c. */
static void counted_cb(wr_err_t err, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api_t *a = c->api;
    wr_api__observe(c, err);
    if (err != WR_OK)
        wr_debug("bypass: queue %s rule %s answered, but the store did not count it: %s", c->queue,
                 c->claims.bypass, wr_errname(err));
    else /* the sale's report counts what the stats count (bypassTotal) */
        wr_reporter_count(wr_scheduler_reporter(a->sched), c->queue, WR_REPORT_BYPASS, 1);
    /* both answers name the rule in X-Waitroom-Bypass */
    wr_http_req_add_header(c->req, "X-Waitroom-Bypass", c->claims.bypass);
    if (c->route == WR_ROUTE_VERIFY) {
        wr_api__reply_empty(a, c->req, c->route, 204);
        wr_api__ctx_free(c);
        return;
    }
    /* the join: the pass of the claims made with the request's answer */
    char tok[WR_TOKEN_MAX + 1], buf[WR_TOKEN_MAX + 128];
    int n = -1;
    if (wr_token_sign_key(&c->claims, &a->keys[0], tok, sizeof tok) == WR_OK)
        n = snprintf(buf, sizeof buf,
                     "{\"status\":\"passthrough\",\"bypass\":\"%s\",\"token\":\"%s\"}",
                     c->claims.bypass, tok);
    if (n < 0 || (size_t)n >= sizeof buf) {
        wr_api__reply_error(a, c->req, c->route, 500, "INTERNAL", "could not sign the pass", NULL,
                            NULL, 0);
    } else {
        if (c->cookie[0])
            wr_api__set_visitor_cookie(a, c->req, c->cookie);
        wr_api__set_token_cookie(c, tok, c->claims.exp * 1000);
        wr_api__reply_json(a, c->req, c->route, 200, buf, (size_t)n, 0);
    }
    wr_api__ctx_free(c);
}

/* Counts c's bypass (c->claims.bypass, the rule) here and in the store,
 * then answers. */
static void count(wr_api__ctx_t *c)
{
    wr_api_t *a = c->api;
    if (a->metrics) {
        char l[WR_QUEUE_NAME_MAX + WR_BYPASS_NAME_MAX + 32];
        snprintf(l, sizeof l, "queue=\"%s\",rule=\"%s\"", c->queue, c->claims.bypass);
        wr_metrics_inc(a->metrics, "waitroom_bypass_total", l, 1);
    }
    c->op = "bypass";
    c->t0_us = wr_clock_wall_us();
    wr_err_t err = wr_store_bypass(a->store, c->queue, 1, counted_cb, c);
    if (err != WR_OK)
        counted_cb(err, c);
}

void wr_api__bypass_gate(wr_api_t *a, wr_http_req_t *req, const char *queue,
                         const wr_bypass_rule_t *rule)
{
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, WR_ROUTE_VERIFY, queue);
    if (!c)
        return;
    snprintf(c->claims.bypass, sizeof c->claims.bypass, "%s", rule->name);
    count(c);
}

bool wr_api__bypass_join(wr_api_t *a, wr_http_req_t *req, const char *queue,
                         const wr_queue_config_t *cfg)
{
    const wr_bypass_rule_t *rule = wr_api__bypass_match(a, req, cfg, false);
    if (!rule)
        return false;
    char user[WR_USER_ID_MAX + 1], cookie[WR_IDENTITY_COOKIE_MAX + 1] = "";
    if (a->cfg->identity == WR_IDENTITY_HEADER) {
        /* no identity check comes before the rules: without a valid id
         * the pass is the rule's own */
        const char *v = wr_http_req_header(req, a->cfg->identity_header);
        if (v && wr_ids_valid_user(v))
            wr_api__copy(user, sizeof user, v);
        else
            snprintf(user, sizeof user, "bypass:%s", rule->name);
    } else if (wr_api__resolve_user(a, req, WR_ROUTE_JOIN, true, user, cookie) == 1) {
        return true; /* answered: 500, no visitor could be made */
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, WR_ROUTE_JOIN, queue);
    if (!c)
        return true;
    memcpy(c->cookie, cookie, sizeof c->cookie);
    /* the pass's claims now; it is signed once, with the answer (counted_cb) */
    if (wr_api__sign_pass(a, queue, user, cfg->token_ttl_seconds, false, rule->name, &c->claims,
                          NULL, 0) != WR_OK) {
        wr_api__reply_error(a, req, WR_ROUTE_JOIN, 500, "INTERNAL", "could not make the pass", NULL,
                            NULL, 0);
        wr_api__ctx_free(c);
        return true;
    }
    count(c);
    return true;
}
