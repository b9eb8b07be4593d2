/*
 * api_preview.c - GET /q/{queue}?preview=STATE: the queue page in one of
 * its states with sample numbers, dressed in the queue's brand, so an
 * operator checks a template (--web-dir) and the wording of every state
 * before the sale (docs/API.md, "The queue page carries the shop").
 *
 * Who may see it: on the separate admin listener (--admin-listen) anyone
 * who reaches it; without a separate one, only with the admin key; on the
 * public listener when there is a separate one, nobody (404, as the admin
 * API). The queue's config comes from the store (queue_get), so a preview
 * shows what the queue says now on any instance; nobody joins, no cookie
 * is set, and the page's script asks the server nothing (data-preview).
 * A ?lang= that names no language of the page is 400 BAD_REQUEST (field
 * lang), like an unknown STATE: a preview never falls back silently.
 */
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/api_internal.h"
#include "base/clock.h"

/* The preview states, in the order the dashboard links them. */
static const char *const states[] = {"waiting",  "held",   "presale", "prequeue",     "challenge",
                                     "admitted", "closed", "soldout", "reconnecting", "full",
                                     "error",    "code",   NULL};

typedef struct {
    wr_api__ctx_t *c;
    int state; /* index in states */
} preview_t;

/* The sample view of state i (numbers a real line could show). */
static void sample(wr_page_view_t *v, int i, const wr_queue_config_t *cfg)
{
    const char *s = states[i];
    v->eta_seconds = -1;
    v->target_url = "";
    v->preview = true;
    v->notice = wr_api__notice_text(cfg, NULL); /* every state shows it (in the page's language) */
    if (strcmp(s, "waiting") == 0 || strcmp(s, "held") == 0) {
        bool held = strcmp(s, "held") == 0;
        v->state = "waiting";
        v->position = held ? 1 : 1234;
        v->waiting = 5678;
        v->eta_seconds = held ? 1 : 420;
        v->retry_after_ms = 5000;
        v->held = held;
        if (cfg->stock != WR_STOCK_NONE) { /* the odds line, as a stock shows it */
            v->has_stock = true;
            v->stock_left = 300;
        }
    } else if (strcmp(s, "presale") == 0) { /* 1.3: a priority group's line */
        v->state = "waiting";
        v->group = cfg->n_groups > 0 ? cfg->groups[0] : "fanclub";
        v->position = 12;
        v->waiting = 5678; /* the whole line */
        v->eta_seconds = 90;
        v->retry_after_ms = 5000;
    } else if (strcmp(s, "code") == 0) { /* 1.3: a presale code refused */
        v->state = "code";
        v->reason = "unknown";
    } else if (strcmp(s, "prequeue") == 0) {
        v->state = "prequeue";
        v->opens_at_ms = wr_clock_wall_us() / 1000 + 2 * 3600 * 1000 + 15 * 60 * 1000;
        v->retry_after_ms = 5000;
    } else if (strcmp(s, "admitted") == 0) {
        v->state = "admitted";
        v->target_url = cfg->target_url;
    } else if (strcmp(s, "closed") == 0 || strcmp(s, "soldout") == 0) {
        v->state = "closed";
        v->reason = strcmp(s, "soldout") == 0 ? "soldOut" : "closed";
        v->target_url = cfg->target_url; /* the way back to the shop */
    } else if (strcmp(s, "reconnecting") == 0) {
        v->state = "degraded";
        v->retry_after_ms = 2000;
    } else if (strcmp(s, "full") == 0) {
        v->state = "full";
        v->error = "QUEUE_FULL";
        v->retry_after_ms = 5000;
    } else if (strcmp(s, "error") == 0) {
        v->state = "error";
        v->error = "INTERNAL";
    } else {
        v->state = s; /* challenge */
    }
}

static void preview_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    preview_t *p = arg;
    wr_api__ctx_t *c = p->c;
    wr_api_t *a = c->api;
    wr_api__observe(c, err);
    if (err != WR_OK || !info || !info->config) {
        wr_api__reply_store_error(c, err == WR_OK ? WR_ENOTFOUND : err, WR_API__TELLS_QUEUE);
    } else {
        wr_page_view_t v;
        memset(&v, 0, sizeof(v));
        v.queue = c->queue;
        sample(&v, p->state, info->config);
        wr_api__reply_queue_page(a, c->req, c->route, 200, &v, info->config);
    }
    wr_api__ctx_free(c);
    free(p);
}

void wr_api__handle_preview(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call,
                            const char *state)
{
    if (a->admin_separate && !call->admin_listener) {
        wr_api__reply_error(a, req, call->route, 404, "NOT_FOUND", "no such route", NULL, NULL, 0);
        return;
    }
    if (!call->admin_listener && !wr_api__admin_ok(a, req)) {
        wr_api__reply_error(a, req, call->route, 401, "UNAUTHORIZED",
                            "a preview needs the admin key (Bearer)", NULL, NULL, 0);
        return;
    }
    int i = 0;
    while (states[i] && strcmp(states[i], state) != 0)
        i++;
    if (!states[i]) {
        wr_api__reply_error(a, req, call->route, 400, "BAD_REQUEST",
                            "preview is one of waiting, held, presale, prequeue, challenge, "
                            "admitted, closed, soldout, reconnecting, full, error, code",
                            "preview", NULL, 0);
        return;
    }
    /* ?lang= naming no language of the page would show English without
     * saying so: refused, as an unknown STATE */
    char want[256];
    if (wr_api__query_param(req, "lang", want, sizeof(want)) && !wr_page_lang_tag(a->web, want)) {
        wr_api__reply_error(a, req, call->route, 400, "BAD_REQUEST",
                            "lang names no language of the page (GET /static/i18n.json lists them)",
                            "lang", NULL, 0);
        return;
    }
    wr_api__ctx_t *c = wr_api__ctx_new(a, req, call->route, call->queue);
    if (!c)
        return;
    preview_t *p = malloc(sizeof(*p));
    if (!p) {
        wr_api__reply_oom(a, req, call->route);
        wr_api__ctx_free(c);
        return;
    }
    p->c = c;
    p->state = i;
    c->op = "queue_get";
    wr_err_t err = wr_store_queue_get(a->store, c->queue, preview_cb, p);
    if (err != WR_OK) {
        wr_api__reply_unavailable(a, req, call->route, err);
        wr_api__ctx_free(c);
        free(p);
    }
}
