/*
 * page.h - the people-facing queue page (GET /q/{queue}) and the operator
 * dashboard (GET /admin): HTML rendered from templates embedded at build
 * time (src/http/web/), no I/O here. The api module gathers the values (it joins
 * the user, reads the store) and sends what these functions return.
 */
#ifndef WR_PAGE_H
#define WR_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/qconfig.h"
#include "http/webdir.h"

/* What the queue page shows on first render (and without JavaScript). */
typedef struct {
    const char *queue;            /* validated queue name */
    const char *lang;             /* a page language (wr_page_lang_tag); others:
                                     wr_page_lang(web, NULL, NULL), "en" */
    const wr_webdir_t *web;       /* the page files (--web-dir over the embedded
                                     ones); NULL = the embedded ones */
    const wr_page_config_t *page; /* the queue's brand (config page), or NULL */
    bool preview;                 /* GET /q/{queue}?preview=STATE: sample numbers,
                                     the script asks the API nothing */
    const char *state;            /* "waiting", "prequeue" (before the queue's
                                     opensAt), "admitted", "passthrough", "full",
                                     "unavailable", "notfound", "invite" (refused:
                                     no valid invite), "code" (1.3: a presale
                                     code refused, reason says why; nobody
                                     joined), "closed" (1.2: the sale
                                     has ended or sold out, by reason; asks
                                     again slowly), "degraded" (the store is
                                     unreachable: no position; keeps asking),
                                     "challenge" (the queue asks for a solved join
                                     challenge: the script solves one and joins;
                                     without JavaScript the text says it is needed) or
                                     "error" (any other error on the route: the
                                     code is shown; asks again only after a
                                     Retry-After, retry_after_ms) */
    uint64_t position;            /* waiting: 1-based */
    uint64_t waiting;             /* waiting: people in line */
    int64_t eta_seconds;          /* waiting: -1 = unknown (paused) */
    uint32_t retry_after_ms;      /* waiting, prequeue, degraded: next poll, ms;
                                     closed: the slow re-check, ms (0 = 60 s;
                                     never more than 60 s) */
    int64_t opens_at_ms;          /* prequeue: the opening (opensAt), ms since the
                                     epoch; shown in UTC without JavaScript, in the
                                     person's local time with it */
    const char *target_url;       /* where an admitted person goes: the allowed
                                     ?return= URL or the queue's targetUrl; "" = none */
    bool token_in_query;          /* tokenInQuery: add wr_token=<token> to an
                                     absolute target_url (another origin) */
    const char *token;            /* admitted: the entry token, else NULL; used
                                     only for the no-script redirect with tokenInQuery */
    const char *reason;           /* invite: the refusal's reason ("expired"...);
                                     code: "unknown", "usedUp", "revoked" or
                                     "expired"; closed: "closed" or "soldOut";
                                     else NULL */
    const char *group;            /* the person's priority group (1.3: "fanclub"),
                                     NULL or "" = the standard line; shown while
                                     waiting (position counts this line only) */
    bool has_groups;              /* the queue has priority groups (config
                                     groups): the page offers its code form */
    bool held;                    /* waiting: held (turn came while away, 1.2):
                                     "your place was kept", position 1 */
    bool has_stock;               /* waiting: the queue has a stock (1.2) ... */
    uint64_t stock_left;          /* ... and this is what is left (stockLeft) */
    const char *waiting_for;      /* waiting: "stock" while admission waits only
                                     on stock (1.3: no ETA), else NULL */
    const char *notice;           /* the operator's notice (1.2), shown as text;
                                     NULL or "" = none */
    const char *error;            /* an error answer: the JSON error code
                                     ("INVALID_QUEUE_NAME"...), in data-error and, in
                                     state "error", in the text; else NULL */
    /* The queue's captcha (1.2): "turnstile" or "hcaptcha", its site key
     * and widget script URL (the page shows the widget in state
     * "challenge"); NULL = none. */
    const char *captcha_provider;
    const char *captcha_site_key;
    const char *captcha_script;
} wr_page_view_t;

/*
 * The page language for an Accept-Language header value, of the languages
 * the page speaks (web's: the embedded fourteen and those --web-dir's
 * i18n.json adds; web NULL: wr_page_langs): the one with the highest q (the
 * first listed on a tie; q=0 never), each tag mapped as wr_lang_match
 * does (legacy forms "in" = "id", "iw" = "he"; regions "pt-BR" = "pt";
 * Chinese by script or region: zh-CN, zh-SG, zh-Hans, bare zh: "zh-Hans";
 * zh-TW, zh-HK, zh-MO, zh-Hant: "zh-Hant"). When it names none of them:
 * the one fallback names (the queue's page.lang), else "en". Both strings
 * may be NULL. Returns a string borrowed from web (or static).
 */
const char *wr_page_lang(const wr_webdir_t *web, const char *accept_language, const char *fallback);

/* The page language one tag names (?lang=, page.lang), mapped as above,
 * or NULL when the page does not speak it. Borrowed as above. */
const char *wr_page_lang_tag(const wr_webdir_t *web, const char *tag);

/* The colours of an accent "#RRGGBB" (NULL or malformed: the default,
 * #2d5bd7), each "#rrggbb": the accent; ink, the text on it (black or
 * white, whichever contrasts more: at least 4.58:1); on_light and on_dark,
 * the accent darkened or lightened until it reads as text at 4.6:1 on the
 * light and on the dark theme's grounds. */
typedef struct {
    char accent[8], ink[8], on_light[8], on_dark[8];
} wr_page_colors_t;
void wr_page_accent(const char *accent, wr_page_colors_t *out);

/* WCAG 2.1 contrast ratio (1..21) of two colours 0xRRGGBB. */
double wr_page_contrast(unsigned a, unsigned b);

/*
 * Renders the queue page for v. Every value is HTML-escaped. Returns a
 * malloc'd NUL-terminated HTML document (caller frees) and its length, or
 * NULL on allocation failure.
 */
char *wr_page_render_queue(const wr_page_view_t *v, size_t *len);

/* Renders the dashboard page (web: as in wr_page_view_t). Same ownership
 * as wr_page_render_queue. */
char *wr_page_render_dashboard(const wr_webdir_t *web, size_t *len);

/*
 * Finds a static asset by file name (e.g. "queue.js"; --web-dir's first,
 * web as in wr_page_view_t): returns its bytes (borrowed: static, or
 * web's) and sets *len and *content_type ("text/css; charset=utf-8"
 * ...), or NULL when there is no such asset.
 */
const unsigned char *wr_page_asset(const wr_webdir_t *web, const char *name, size_t *len,
                                   const char **content_type);

#endif
