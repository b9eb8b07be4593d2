/*
 * api_view.c - the entry view of the api module: a user's place, computed
 * once from the store's entry (wr_api__entry_view) or, when the store
 * cannot be reached, from this instance's copy of the queue's config
 * (wr_api__degraded_view), and then told as JSON or as the queue page by
 * api_entries.c.
 *
 * A waiting entry gets its position, ETA and when to come back (jittered
 * poll band, queue.h, never later than half of idleTimeoutSeconds); a
 * waiting entry of a queue whose stock is 0 (yet not sold out: passes are
 * live) no ETA and waitingFor "stock" (1.3); a
 * PREQUEUE entry the retry into its own slot of the first second after
 * opensAt; an admitted one its JWT, signed here from the store's jti,
 * issue time and expiry (the same on every instance). Pacing the next poll
 * is the caller's.
 *
 * Degraded mode (docs/API.md 1.1): "closed" leaves the store's error to
 * the caller; "limited" hands out a fail-open pass (a token with the "fo"
 * claim and a fresh jti the store never saw) while the queue's
 * per-instance budget lasts (wr_scheduler_queue_take_fail_open), "open" always;
 * the others are told to wait, with no position ("degraded": true). The
 * brakes of the known config come first (1.2 "Clarifications",
 * wr_queue_degraded_brake): `closed` or a known stock of 0 answers the
 * `closed` form with its reason, an opensAt still ahead the pre-queue
 * form, `paused` the degraded waiting form, and none takes budget.
 *
 * The queue page of a view (wr_api__reply_queue_page, for the queue page
 * route and the preview): the queue's brand, its CAPTCHA widget with the
 * Content-Security-Policy widened for the provider on that page only, the
 * language from ?lang= or Accept-Language.
 *
 * The operator's notice is added to an answer's JSON here
 * (wr_api__view_add_notice, escaped by jansson).
 */
#include <event2/http.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/b64.h"
#include "http/api_view.h"
#include "base/clock.h"
#include "base/strbuf.h"
#include "runtime/reporter.h"
#include "runtime/scheduler.h"
#include "core/origin.h"
#include "core/queue.h"
#include "http/lang.h"
#include "http/page.h"

/* The notice (api_view.h). */
const char *wr_api__notice_text(const wr_queue_config_t *cfg, const char *lang)
{
    const char *codes[WR_NOTICE_LANGS_MAX + 1], *texts[WR_NOTICE_LANGS_MAX + 1];
    if (!cfg || wr_notice_entries(&cfg->notice, codes, texts) == 0)
        return NULL;
    const char *chosen =
        cfg->notice.by_lang && lang ? wr_lang_match(codes, lang, strlen(lang)) : NULL;
    if (!chosen && cfg->notice.by_lang) /* "en", as the region forms name it too */
        chosen = wr_lang_match(codes, "en", 2);
    return wr_notice_pick(&cfg->notice, chosen);
}

/* The notice of cfg as c's visitor reads it in JSON: in the page language
 * their Accept-Language asks for (the one the queue page would show them
 * without ?lang=, page.lang the fallback). */
static const char *visitor_notice(const wr_api__ctx_t *c, const wr_queue_config_t *cfg)
{
    if (!cfg || cfg->notice.n == 0)
        return NULL;
    if (!cfg->notice.by_lang)
        return wr_notice_pick(&cfg->notice, NULL);
    const char *al = c->req ? wr_http_req_header(c->req, "Accept-Language") : NULL;
    const char *fallback = cfg->page.set && cfg->page.lang[0] ? cfg->page.lang : NULL;
    return wr_api__notice_text(cfg, wr_page_lang(c->api->web, al, fallback));
}

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

/* A store's due time (us, < 0 not reported) in whole ms, rounded up. */
static int64_t due_ms(int64_t us)
{
    return us > 0 ? (us + 999) / 1000 : 0;
}

/* The PREQUEUE view of c's user under cfg (NULL: no config): the next poll
 * lands in this person's slot of the first second after opensAt, or in
 * about 5 s, whichever is sooner. The store's pre-queue answer and
 * degraded mode's (the known opensAt still ahead) alike. */
static void prequeue_view(wr_api__ctx_t *c, const wr_queue_config_t *cfg, wr_api__entry_view_t *v)
{
    wr_api_t *a = c->api;
    v->state = WR_ENTRY_PREQUEUE;
    v->opens_at_ms = cfg && cfg->opens_at_ms >= 0 ? cfg->opens_at_ms : 0;
    v->retry_after_ms = wr_queue_prequeue_retry_ms(
        cfg ? cfg : &(wr_queue_config_t){.poll_jitter = 0.1}, v->opens_at_ms,
        wr_clock_wall_us() / 1000, wr_queue_prequeue_slot_ms(c->user, strlen(c->user)),
        wr_rng_unit(&a->rng));
    v->retry_after_ms = wr_queue_retry_cap_idle_ms(cfg, v->retry_after_ms, wr_rng_unit(&a->rng));
}

/* The CLOSED view (the sale is over, or sold out) of c's user under cfg
 * (NULL: no config): the slow re-check. The store's answer and degraded
 * mode's (the known config closed or with stock 0) alike. */
static void closed_view(wr_api__ctx_t *c, const wr_queue_config_t *cfg, wr_close_reason_t why,
                        wr_api__entry_view_t *v)
{
    v->state = WR_ENTRY_CLOSED;
    v->closed_reason = why == WR_CLOSE_SOLD_OUT ? WR_CLOSE_SOLD_OUT : WR_CLOSE_CLOSED;
    v->retry_after_ms = wr_queue_closed_retry_ms(cfg, wr_rng_unit(&c->api->rng));
}

/* The receipt of e (docs/API.md 1.3: a person in line, pre-queue or held,
 * while publicLog is on): their log id, join leaf index and leaf hash. */
static void receipt_of(const wr_entry_t *e, wr_api__entry_view_t *v)
{
    char hash[48];
    size_t hl = 0;
    v->receipt[0] = '\0';
    if (!e->has_receipt || wr_b64_encode(e->receipt_leaf_hash, 32, hash, sizeof hash, &hl) != WR_OK)
        return;
    wr_strbuf_t b = wr_strbuf_init(v->receipt, sizeof v->receipt);
    wr_strbuf_str(&b, ",\"receipt\":{\"u\":\"");
    wr_strbuf_str(&b, e->receipt_u);
    wr_strbuf_str(&b, "\",\"index\":");
    wr_strbuf_u64(&b, e->receipt_index);
    wr_strbuf_str(&b, ",\"leafHash\":\"");
    wr_strbuf_put(&b, hash, hl);
    wr_strbuf_str(&b, "\"}");
    if (!wr_strbuf_ok(&b))
        v->receipt[0] = '\0'; /* never: 128 bytes hold the longest */
}

/*
 * Fills v from e for c's queue and user: notes the queue's config with the
 * scheduler, draws the jittered retry of a waiting entry, signs the token
 * of an admitted one. Pacing is left to the caller. Returns WR_OK, or the
 * signing error (v->token is then "").
 */
wr_err_t wr_api__entry_view(wr_api__ctx_t *c, const wr_entry_t *e, wr_api__entry_view_t *v)
{
    wr_api_t *a = c->api;
    const wr_queue_config_t *cfg = e->config;
    v->position = v->ahead = v->waiting = 0;
    v->eta_seconds = -1;
    v->retry_after_ms = 0;
    v->token[0] = '\0';
    v->expires_at_ms = 0;
    v->target_url = cfg ? cfg->target_url : "";
    v->degraded = v->fail_open = v->held = false;
    v->waiting_for = NULL;
    v->opens_at_ms = -1;
    v->closed_reason = WR_CLOSE_NONE;
    v->stock_left = e->stock_left;
    v->notice = visitor_notice(c, cfg);
    v->group = e->group[0] ? e->group : NULL;
    receipt_of(e, v);
    /* the queue as the scheduler knows it: held since the request (no
     * lookup), or noted now when it was unknown */
    wr_scheduler_queue_t *sq = cfg ? wr_api__held(c, cfg) : NULL;
    switch (e->state) {
    case WR_ENTRY_PREQUEUE:
        prequeue_view(c, cfg, v);
        return WR_OK;
    case WR_ENTRY_WAITING:
        v->state = WR_ENTRY_WAITING;
        v->position = e->position;
        v->ahead = e->position ? e->position - 1 : 0;
        v->waiting = e->waiting;
        v->held = e->held; /* position 1: the retry lands just after the next tick */
        if (cfg) {
            double observed = wr_scheduler_queue_rate(sq);
            /* with groups: the rate the person's own line gets (API 1.3) */
            v->eta_seconds =
                wr_queue_eta_seconds_line(cfg, e->position, observed, e->group_line,
                                          e->group_admitted_60s, e->group_first_waiting);
            /* away people ahead take no slot: the retry lands after the
             * admission that comes sooner for them. The store counted the
             * first of the line (passed_ahead); the rest, or everyone when
             * it did not count, is an estimate erring low. */
            double share = wr_scheduler_queue_away_share(sq);
            uint64_t over = wr_queue_away_ahead(e->position, share);
            if (e->passed_ahead >= 0 && e->passed_scan < e->position) {
                uint64_t rest = e->position - e->passed_scan; /* rest - 1 not looked at */
                over = (uint64_t)e->passed_ahead + wr_queue_away_ahead(rest, share);
            }
            v->retry_after_ms = wr_queue_retry_after_plan_ms(
                cfg, e->position, over, observed, wr_scheduler_queue_next_tick_ms(sq),
                due_ms(e->head_due_us), due_ms(e->own_due_us), wr_rng_unit(&a->rng));
            /* following it never makes a person idle (a subscribed one
             * is present without polling: no cap, docs/API.md 1.3) */
            if (!e->subscribed)
                v->retry_after_ms =
                    wr_queue_retry_cap_idle_ms(cfg, v->retry_after_ms, wr_rng_unit(&a->rng));
        }
        if (e->stock_left == 0) {
            /* stock 0 yet not sold out: passes are live, and nobody moves
             * until one is used or expires (1.3): no ETA to give */
            v->eta_seconds = -1;
            v->waiting_for = "stock";
        }
        return WR_OK;
    case WR_ENTRY_CLOSED:
        closed_view(c, cfg, e->closed_reason, v);
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

/* ---------- degraded mode: the store is unreachable ---------- */

/*
 * The answer to a join / status / page join of c's user whose store call
 * failed with err, when the queue's fail policy lets this instance answer
 * alone: fills v (PASSTHROUGH for a disabled queue; PREQUEUE while the
 * known opensAt is ahead; WAITING degraded while paused; else ADMITTED with
 * a fail-open pass within the budget, WAITING degraded beyond it) and
 * returns true. Returns false when the caller answers err as before: the store is
 * not unreachable, the queue's config is not known here, its policy is
 * "closed", or the pass could not be signed.
 */
bool wr_api__degraded_view(wr_api__ctx_t *c, wr_err_t err, wr_api__entry_view_t *v)
{
    wr_api_t *a = c->api;
    if (!wr_api__store_unreachable(err))
        return false;
    wr_scheduler_queue_t *sq = wr_api__held(c, NULL);
    const wr_queue_config_t *cfg = wr_scheduler_queue_config(sq);
    if (!cfg)
        return false;
    memset(v, 0, sizeof(*v));
    v->eta_seconds = -1;
    v->target_url = cfg->target_url;
    v->stock_left = -1; /* not known without the store */
    v->notice = visitor_notice(c, cfg);
    if (!cfg->enabled) {
        v->state = WR_ENTRY_PASSTHROUGH;
        return true;
    }
    if (cfg->fail_policy == WR_FAIL_CLOSED)
        return false;
    /* the brakes of the known config first: they take no budget */
    wr_queue_brake_t brake = wr_queue_degraded_brake(cfg, wr_clock_wall_us() / 1000);
    if (brake == WR_BRAKE_PREQUEUE) {
        prequeue_view(c, cfg, v);
        return true;
    }
    if (brake == WR_BRAKE_CLOSED || brake == WR_BRAKE_SOLD_OUT) {
        closed_view(c, cfg, brake == WR_BRAKE_SOLD_OUT ? WR_CLOSE_SOLD_OUT : WR_CLOSE_CLOSED, v);
        return true;
    }
    bool pass =
        brake == WR_BRAKE_NONE && (cfg->fail_policy == WR_FAIL_OPEN ||
                                   wr_scheduler_queue_take_fail_open(sq, wr_clock_mono_ms()));
    if (!pass) {
        v->state = WR_ENTRY_WAITING;
        v->degraded = true;
        /* the slowest band (wr_queue_slowest_band_ms), jittered: nobody
         * knows the place */
        v->retry_after_ms = wr_queue_retry_after_ms(cfg, UINT64_MAX, wr_rng_unit(&a->rng));
        v->retry_after_ms =
            wr_queue_retry_cap_idle_ms(cfg, v->retry_after_ms, wr_rng_unit(&a->rng));
        return true;
    }
    wr_token_claims_t cl;
    if (wr_api__sign_pass(a, c->queue, c->user, cfg->token_ttl_seconds, true, "", &cl, v->token,
                          sizeof(v->token)) != WR_OK)
        return false;
    v->state = WR_ENTRY_ADMITTED;
    v->fail_open = true;
    v->expires_at_ms = cl.exp * 1000;
    wr_api__count_fail_open(a, "waitroom_fail_open_admitted_total", c->queue);
    wr_reporter_count(wr_scheduler_reporter(a->sched), c->queue, WR_REPORT_FAIL_OPEN, 1);
    return true;
}

wr_err_t wr_api__sign_pass(wr_api_t *a, const char *queue, const char *user, uint32_t ttl_s,
                           bool fail_open, const char *bypass, wr_token_claims_t *cl, char *out,
                           size_t cap)
{
    memset(cl, 0, sizeof(*cl));
    snprintf(cl->queue, sizeof(cl->queue), "%s", queue);
    snprintf(cl->user, sizeof(cl->user), "%s", user);
    snprintf(cl->bypass, sizeof(cl->bypass), "%s", bypass);
    cl->iat = (int64_t)time(NULL);
    cl->exp = cl->iat + (int64_t)ttl_s;
    cl->fail_open = fail_open;
    wr_err_t err = wr_token_new_jti(cl->jti);
    if (err != WR_OK || !out)
        return err;
    return wr_token_sign_key(cl, &a->keys[0], out, cap);
}

/* ---------- the queue page of a view ---------- */

/* The queue page (api_internal.h): dressed in the queue's page and its
 * CAPTCHA widget, in the language ?lang= or Accept-Language asks for. */
void wr_api__reply_queue_page(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                              wr_page_view_t *v, const wr_queue_config_t *cfg)
{
    const wr_page_config_t *pg = cfg && cfg->page.set ? &cfg->page : NULL;
    char want[40]; /* a language tag (lang.h: at most 35 bytes) */
    v->web = a->web;
    v->page = pg;
    v->has_groups = cfg && cfg->n_groups > 0; /* the page offers its code form (1.3) */
    v->lang =
        wr_page_lang(a->web, wr_http_req_header(req, "Accept-Language"), pg ? pg->lang : NULL);
    const char *named = wr_api__query_param(req, "lang", want, sizeof(want))
                            ? wr_page_lang_tag(a->web, want)
                            : NULL;
    if (named) /* ?lang= naming one of ours (in its legacy or region forms too) */
        v->lang = named;
    if (v->notice && cfg) /* the state shows the notice: in the page's language */
        v->notice = wr_api__notice_text(cfg, v->lang);
    /* the logo's origin may serve images (only images) */
    char origin[WR_ORIGIN_MAX + 1] = "";
    if (pg && strncasecmp(pg->logo_url, "https://", 8) == 0 &&
        !wr_origin_of_url(pg->logo_url, origin))
        origin[0] = '\0';
    /* the queue's captcha: its widget, and the CSP widened for its
     * provider's origins on this page only (core/captcha.h) */
    char script[WR_CAPTCHA_SCRIPT_MAX + 1], csp[WR_CAPTCHA_CSP_MAX + 1];
    unsigned dirs = 0;
    const wr_captcha_config_t *cap = cfg && cfg->captcha.set ? &cfg->captcha : NULL;
    if (cap && wr_captcha_script_url(cap, script, sizeof script) > 0 &&
        wr_captcha_csp_sources(cap, csp, sizeof csp, &dirs) > 0) {
        v->captcha_provider = wr_captcha_provider_name(cap->provider);
        v->captcha_site_key = cap->site_key;
        v->captcha_script = script;
    } else {
        csp[0] = '\0';
    }
    size_t len = 0;
    char *html = wr_page_render_queue(v, &len);
    wr_api__reply_page(a, req, route, status, html, len, origin, csp, dirs);
}

int wr_api__view_add_notice(char *buf, int n, size_t cap, const char *notice)
{
    if (n < 2 || (size_t)n >= cap || buf[n - 1] != '}')
        return -1;
    json_t *s = json_string(notice);
    if (!s)
        return -1;
    int at = n - 1 + (int)(sizeof(",\"notice\":") - 1);
    if ((size_t)at + 2 >= cap) {
        json_decref(s);
        return -1;
    }
    size_t room = cap - (size_t)at - 2; /* the closing brace and NUL */
    memcpy(buf + n - 1, ",\"notice\":", sizeof(",\"notice\":") - 1);
    size_t w = json_dumpb(s, buf + at, room, JSON_ENCODE_ANY);
    json_decref(s);
    if (w == 0 || w > room)
        return -1;
    buf[at + (int)w] = '}';
    buf[at + (int)w + 1] = '\0';
    return at + (int)w + 1;
}
