/*
 * api_push.c - Web Push in the API (docs/API.md 1.3, "Your turn, off the
 * page"): the key and subscription routes, and the pushes of the
 * admissions this instance's ticks made.
 *
 * Routes (routes.def): GET .../push/key answers the VAPID public key; PUT
 * and DELETE .../entries/me/push set and remove the person's subscription
 * through the store's push_sub (store.h). All three answer 404
 * PUSH_NOT_ENABLED while the queue's push is off; the queue's config is
 * the one this instance holds, else one store read. A PUT's body is
 * checked by core/pushsub (400 INVALID_SUBSCRIPTION with its reason)
 * before the store is asked.
 *
 * The key: --push-key's (read at start by wr_api_push_init), else derived
 * from the token secret (kept in the store, shared by every instance)
 * under its own label, so every instance signs with the same key and the
 * store keeps nothing more; derived once per secret (kept with the secret
 * it came from), again after a rotation, when the sender is made again too
 * (subscriptions made before then fail at their push service: API.md).
 * A derived scalar that is not a valid P-256 key (probability about
 * 2^-32) is derived again under a numbered label.
 *
 * Sending: the scheduler hands every admit answer of this instance's
 * ticks that claimed subscriptions to wr_api_push_admitted (the store
 * claims each one once: exactly one push per admission, whichever
 * instance ticked). Each becomes one message on the http/pushsend sender
 * (made at the first push): the payload of core/pushmsg in the
 * subscriber's language (else the page's, else English), the Topic of
 * core/pushsub, the deadline and TTL from the pass's expiry, Urgency
 * high. The answer counts waitroom_push_total{queue,outcome} (read back
 * by the admin JSON's stats push, wr_api__push_counts_json); the
 * subscription was deleted by its claim, whatever the outcome. The
 * closing push (the store hands a copy of every subscription once per
 * closing, the subscriptions staying): "status":"closed" with the reason,
 * TTL 3600, tried for 10 minutes at most.
 * Endpoints are capabilities: never logged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "base/crypto.h"
#include "base/clock.h"
#include "base/log.h"
#include "core/pushmsg.h"
#include "core/pushsub.h"
#include "core/vapid.h"
#include "http/api_internal.h"
#include "http/api_routes.h"
#include "http/pushsend.h"
#include "store/store_breaker.h"

#define KEY_LABEL      "waitroom push vapid key v1"
#define CLOSING_TTL_S  3600         /* the closing push's TTL */
#define CLOSING_TRY_MS (10 * 60000) /* ... and how long it is tried */

struct wr_api__push {
    wr_pushsend_t *ps;      /* made at the first push with the key of generation ps_gen */
    wr_pushsend_t *retired; /* the one before a key change: finishes what it holds */
    unsigned gen, ps_gen;   /* the key's generation (0: none yet), the sender's */
    uint8_t priv[WR_CRYPTO_P256_PRIV], pub[WR_CRYPTO_P256_PUB]; /* the key */
    uint8_t of[WR_SECRET_MAX]; /* the token secret it was derived from */
    size_t of_len;
    bool from_file; /* --push-key (priv read at start, never derived) */
};

/* One message in flight: what its answer is counted under. */
typedef struct {
    wr_api_t *api;
    char queue[WR_QUEUE_NAME_MAX + 1];
} sent_t;

wr_err_t wr_api_push_init(wr_api_t *a, char *why, size_t cap)
{
    a->push = calloc(1, sizeof(*a->push));
    if (!a->push)
        return WR_ENOMEM;
    if (!a->cfg->push_key[0])
        return WR_OK;
    FILE *f = fopen(a->cfg->push_key, "rb");
    char pem[8192];
    size_t n = f ? fread(pem, 1, sizeof(pem), f) : 0;
    if (f)
        fclose(f);
    wr_err_t err =
        n > 0 && n < sizeof(pem) ? wr_crypto_p256_from_pem(pem, n, a->push->priv) : WR_EIO;
    wr_crypto_wipe(pem, sizeof(pem));
    if (err == WR_OK)
        err = wr_crypto_p256_public(a->push->priv, a->push->pub);
    if (err != WR_OK) {
        snprintf(why, cap, "--push-key %s: not a readable P-256 private key (PEM)",
                 a->cfg->push_key);
        return WR_EINVAL;
    }
    a->push->from_file = true;
    a->push->gen = 1;
    return WR_OK;
}

void wr_api__push_free(wr_api_t *a)
{
    if (!a->push)
        return;
    wr_pushsend_free(a->push->ps); /* answers the unsent ones CANCELED, from here */
    wr_pushsend_free(a->push->retired);
    wr_crypto_wipe(a->push, sizeof(*a->push));
    free(a->push);
    a->push = NULL;
}

/* The VAPID key (a->push->priv, pub): --push-key's, else derived from the
 * token secret in use, derived again only when that secret changed (a
 * rotation: a new generation). WR_OK, or WR_EUNAVAILABLE while no token
 * secret is installed, WR_EIO. */
static wr_err_t push_key(wr_api_t *a)
{
    struct wr_api__push *p = a->push;
    if (!p)
        return WR_EUNAVAILABLE;
    if (p->from_file)
        return WR_OK;
    if (a->secret_len == 0)
        return WR_EUNAVAILABLE;
    if (p->gen && p->of_len == a->secret_len && memcmp(p->of, a->secret, a->secret_len) == 0)
        return WR_OK;
    for (int i = 0; i < 8; i++) {
        char label[48];
        snprintf(label, sizeof label, i ? KEY_LABEL "/%d" : KEY_LABEL, i);
        wr_err_t err = wr_crypto_derive_key(a->secret, a->secret_len, label, p->priv);
        if (err != WR_OK)
            return err;
        if (wr_crypto_p256_public(p->priv, p->pub) == WR_OK) {
            memcpy(p->of, a->secret, a->secret_len);
            p->of_len = a->secret_len;
            p->gen++;
            return WR_OK;
        }
    }
    p->gen = 0;
    return WR_EIO;
}

/* ---------- the routes ---------- */

/* Answers 404 PUSH_NOT_ENABLED and returns true when cfg's push is off. */
static bool push_off(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
                     const wr_queue_config_t *cfg)
{
    if (cfg->push && wr_store_has_push(a->store) && a->cfg->push_subject[0])
        return false;
    wr_api__reply_error(a, req, route, 404, "PUSH_NOT_ENABLED", "push is off for this queue", NULL,
                        NULL, 0);
    return true;
}

static void key_reply(wr_api_t *a, wr_http_req_t *req, wr_route_t route)
{
    wr_err_t err = push_key(a);
    char b64[WR_VAPID_KEY_B64 + 1], body[WR_VAPID_KEY_B64 + 32];
    if (err == WR_OK)
        err = wr_b64url_encode(a->push->pub, WR_CRYPTO_P256_PUB, b64, sizeof b64, NULL);
    if (err != WR_OK) {
        wr_api__reply_unavailable(a, req, route, err);
        return;
    }
    int n = snprintf(body, sizeof body, "{\"publicKey\":\"%s\"}", b64);
    wr_api__reply_json(a, req, route, 200, body, (size_t)n, 0);
}

/* PUT / DELETE once the queue's push is known to be on: the person, the
 * body (PUT), the store. Frees c (answered). */
static void sub_start(wr_api__ctx_t *c, const wr_queue_config_t *cfg)
{
    wr_api_t *a = c->api;
    char cookie[WR_IDENTITY_COOKIE_MAX + 1];
    int who = wr_api__resolve_user(a, c->req, c->route, false, c->user, cookie);
    if (who == 2)
        wr_api__reply_error(a, c->req, c->route, 404, "NOT_IN_QUEUE", "no visitor cookie", NULL,
                            NULL, 0);
    if (who) {
        wr_api__ctx_free(c);
        return;
    }
    wr_pushsub_t sub, *subp = NULL;
    if (c->route == WR_ROUTE_PUSH_PUT) {
        size_t blen = 0;
        const char *data = wr_http_req_body(c->req, &blen);
        if (!blen)
            data = NULL;
        json_error_t jerr;
        json_t *body = data ? wr_api__load_body(data, blen, &jerr) : NULL;
        const char *const *langs = wr_webdir_langs(a->web);
        wr_pushsub_reason_t r =
            wr_pushsub_parse(body, &a->cfg->push_allow, langs ? langs : wr_page_langs, &sub);
        json_decref(body);
        if (r != WR_PUSHSUB_OK) {
            char msg[96];
            snprintf(msg, sizeof msg, "not a usable push subscription (%s)",
                     wr_pushsub_reason_name(r));
            wr_api__reply_error(a, c->req, c->route, 400, "INVALID_SUBSCRIPTION", msg, NULL,
                                wr_pushsub_reason_name(r), 0);
            wr_api__ctx_free(c);
            return;
        }
        if (!sub.lang[0]) /* without lang: page.lang, else en */
            wr_api__copy(sub.lang, sizeof sub.lang, cfg->page.lang[0] ? cfg->page.lang : "en");
        subp = &sub;
    }
    c->op = "push_sub";
    c->t0_us = wr_clock_wall_us();
    wr_err_t err = wr_store_push_sub(a->store, c->queue, c->user, subp, wr_api__done_cb, c);
    wr_crypto_wipe(&sub, sizeof sub);
    if (err != WR_OK) {
        wr_api__reply_unavailable(a, c->req, c->route, err);
        wr_api__ctx_free(c);
    }
}

/* The route once the queue's config is known. Frees c (answered). */
static void with_config(wr_api__ctx_t *c, const wr_queue_config_t *cfg)
{
    if (push_off(c->api, c->req, c->route, cfg)) {
        wr_api__ctx_free(c);
    } else if (c->route == WR_ROUTE_PUSH_KEY) {
        key_reply(c->api, c->req, c->route);
        wr_api__ctx_free(c);
    } else {
        sub_start(c, cfg);
    }
}

static void config_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    wr_api__ctx_t *c = arg;
    wr_api__observe(c, err);
    if (err == WR_OK && info) {
        wr_scheduler_note(c->api->sched, c->queue, info->config);
        with_config(c, info->config);
        return;
    }
    wr_api__reply_store_error(c, err, WR_API__TELLS_QUEUE);
    wr_api__ctx_free(c);
}

void wr_api__handle_push(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, call->route, call->queue);
    if (!c)
        return;
    const wr_queue_config_t *cfg = wr_api__held_config(c);
    if (cfg) {
        with_config(c, cfg);
        return;
    }
    c->op = "queue_get";
    c->t0_us = wr_clock_wall_us();
    if (wr_store_queue_get(a->store, call->queue, config_cb, c) != WR_OK) {
        wr_api__reply_unavailable(a, req, call->route, WR_EUNAVAILABLE);
        wr_api__ctx_free(c);
    }
}

bool wr_api__push_config_refused(const wr_api_t *a, const json_t *body, char *msg, size_t cap)
{
    if (!json_is_true(json_object_get(body, "push")))
        return false;
    /* the backend's name, not the breaker's that wraps it */
    const wr_store_t *inner = wr_store_breaker_inner(a->store);
    if (!wr_store_has_push(a->store))
        snprintf(msg, cap, "push is not available yet on the %s store",
                 (inner ? inner : a->store)->ops->name);
    else if (!a->cfg->push_subject[0])
        snprintf(msg, cap, "push needs the server's --push-subject");
    else
        return false;
    return true;
}

/* ---------- sending ---------- */

/* The outcomes waitroom_push_total counts, in the admin JSON's order. */
static const char *const OUTCOMES[] = {"delivered", "gone", "failed", "retried"};

static void outcome_labels(char *l, size_t cap, const char *queue, const char *outcome)
{
    snprintf(l, cap, "queue=\"%s\",outcome=\"%s\"", queue, outcome);
}

static void count(wr_api_t *a, const char *queue, const char *outcome, uint64_t n)
{
    if (!a->metrics)
        return;
    char l[WR_QUEUE_NAME_MAX + 48];
    outcome_labels(l, sizeof l, queue, outcome);
    wr_metrics_inc(a->metrics, "waitroom_push_total", l, n);
}

json_t *wr_api__push_counts_json(const wr_api_t *a, const char *queue)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < sizeof OUTCOMES / sizeof *OUTCOMES; i++) {
        char l[WR_QUEUE_NAME_MAX + 48];
        outcome_labels(l, sizeof l, queue, OUTCOMES[i]);
        double v = wr_metrics_get(a->metrics, "waitroom_push_total", l);
        if (json_object_set_new(o, OUTCOMES[i], json_integer((json_int_t)v))) {
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

static void sent_cb(const wr_pushsend_result_t *r, void *arg)
{
    sent_t *s = arg;
    if (r->outcome != WR_PUSHSEND_CANCELED) {
        const char *o = r->outcome == WR_PUSHSEND_DELIVERED ? "delivered"
                        : r->outcome == WR_PUSHSEND_GONE    ? "gone"
                                                            : "failed";
        count(s->api, s->queue, o, 1);
        if (r->retries)
            count(s->api, s->queue, "retried", r->retries);
        if (r->outcome != WR_PUSHSEND_DELIVERED)
            wr_info("push for queue %s not delivered: %s (%s, status %d, %u tries)", s->queue,
                    wr_pushsend_outcome_name(r->outcome), r->why, r->status, r->tries);
    }
    free(s);
}

/* The sender of the key in use, made at the first push and again after
 * the key changed (the one before finishes what it holds). NULL when it
 * cannot be. */
static wr_pushsend_t *sender(wr_api_t *a)
{
    struct wr_api__push *p = a->push;
    if (push_key(a) != WR_OK)
        return NULL;
    if (p->ps && p->ps_gen == p->gen)
        return p->ps;
    if (p->ps) {
        wr_pushsend_free(p->retired); /* two rotations within one push's tries */
        p->retired = p->ps;
        p->ps = NULL;
    }
    wr_pushsend_config_t pc = {.base = a->base,
                               .vapid_key = p->priv,
                               .subject = a->cfg->push_subject,
                               .allow = &a->cfg->push_allow,
                               .ca_file = getenv("WR_PUSH_CA_FILE")};
    wr_err_t err;
    p->ps = wr_pushsend_new(&pc, &err);
    p->ps_gen = p->gen;
    if (!p->ps)
        wr_warn("could not start the push sender: %s", wr_strerror(err));
    return p->ps;
}

/* One admission's push. */
static void push_one(wr_api_t *a, const char *queue, const wr_queue_config_t *cfg,
                     const wr_store_push_t *p)
{
    wr_pushsend_t *ps = sender(a);
    char text[WR_PUSHCRYPT_PLAIN_MAX + 1], topic[WR_PUSHSUB_TOPIC_LEN + 1];
    size_t len = 0;
    bool closing = p->closing != WR_CLOSE_NONE;
    wr_pushmsg_kind_t kind = !closing                          ? WR_PUSHMSG_ADMITTED
                             : p->closing == WR_CLOSE_SOLD_OUT ? WR_PUSHMSG_SOLD_OUT
                                                               : WR_PUSHMSG_CLOSED;
    /* the closing push: TTL 3600, tried for 10 minutes at most */
    int64_t exp_ms = closing ? wr_clock_wall_us() / 1000 + CLOSING_TRY_MS : p->expires_at_us / 1000;
    const char *lang = p->sub->lang[0]            ? p->sub->lang
                       : cfg && cfg->page.lang[0] ? cfg->page.lang
                                                  : "en";
    sent_t *s = ps ? calloc(1, sizeof(*s)) : NULL;
    if (!s ||
        wr_pushmsg_build(wr_webdir_i18n(a->web), lang, kind, queue, exp_ms, text, sizeof text,
                         &len) != WR_OK ||
        wr_pushsub_topic(a->secret, a->secret_len, queue, p->user, topic) != WR_OK) {
        free(s);
        count(a, queue, "failed", 1);
        return;
    }
    s->api = a;
    wr_api__copy(s->queue, sizeof s->queue, queue);
    wr_pushsend_msg_t m = {.sub = p->sub,
                           .payload = text,
                           .len = len,
                           .topic = topic,
                           .urgency = "high",
                           .deadline_ms = exp_ms,
                           .ttl_s = closing ? CLOSING_TTL_S : -1};
    if (wr_pushsend_push(ps, &m, sent_cb, s) != WR_OK) {
        free(s);
        count(a, queue, "failed", 1);
    }
}

void wr_api_push_admitted(const char *queue, const wr_admit_t *res, void *arg)
{
    wr_api_t *a = arg;
    if (!a->push)
        return;
    for (size_t i = 0; i < res->n_pushes; i++)
        push_one(a, queue, res->config, &res->pushes[i]);
}
