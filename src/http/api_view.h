/*
 * api_view.h - the entry view of the api module (api_view.c): a user's
 * place, computed once and told as JSON (api_entries.c) or as the queue
 * page (api_page.c), and the passes the store never saw (degraded mode's,
 * the bypass rules'). Included by those files and api_bypass.c only.
 */
#ifndef WR_API_VIEW_H
#define WR_API_VIEW_H

#include "http/api_internal.h"

/* ---------- api_view.c ---------- */

/* A user's place, computed once from the store's entry and told either as
 * JSON (reply_entry) or as the queue page (page_entry_cb), api_entries.c. */
typedef struct {
    wr_entry_state_t state; /* WAITING, ADMITTED or PASSTHROUGH */
    /* WAITING */
    uint64_t position;       /* 1-based rank in line */
    uint64_t ahead;          /* people ahead: position - 1 */
    uint64_t waiting;        /* people in line */
    int64_t eta_seconds;     /* -1 = unknown (paused, or no config) */
    uint32_t retry_after_ms; /* next poll, jittered band; 0 = no config */
    bool held;               /* held (turn came while away): position 1, admitted next tick */
    const char *waiting_for; /* "stock" while admission waits only on stock (1.3: stock 0
                                with passes live; etaSeconds null), else NULL */
    /* ADMITTED */
    char token[WR_TOKEN_MAX + 1]; /* the signed JWT; "" when signing failed */
    int64_t expires_at_ms;        /* token expiry, ms since the epoch */
    /* any state */
    const char *target_url; /* the queue's targetUrl (borrowed from the entry), "" unset */
    /* degraded mode */
    bool degraded;  /* WAITING without the store: no position */
    bool fail_open; /* ADMITTED with a fail-open pass */
    /* PREQUEUE (sale opening): opensAt, epoch ms; retry_after_ms is the
     * countdown poll (wr_queue_prequeue_retry_ms) */
    int64_t opens_at_ms;
    /* The end of a sale (docs/API.md 1.2): CLOSED's reason (retry_after_ms
     * the slow re-check, wr_queue_closed_retry_ms); WAITING's stockLeft
     * (-1: no stock, left out); the operator's notice on every answer
     * (borrowed from the config, NULL = none; by language, the text for
     * the page language the request's Accept-Language picks). */
    wr_close_reason_t closed_reason;
    int64_t stock_left;
    const char *notice;
    /* The public log's receipt (WAITING, PREQUEUE, held): ",\"receipt\":{...}"
     * ready to splice into the answer, "" = none (docs/API.md 1.3). */
    char receipt[128];
    /* Priority groups (docs/API.md 1.3): the person's group (WAITING,
     * PREQUEUE, ADMITTED; borrowed from the entry), NULL for the standard
     * line. */
    const char *group;
} wr_api__entry_view_t;

/*
 * Fills v from e for c's queue and user: notes the queue's config with the
 * scheduler, draws the jittered retry of a waiting entry, signs the token
 * of an admitted one. Pacing is left to the caller. Returns WR_OK, or the
 * signing error (v->token is then "").
 */
wr_err_t wr_api__entry_view(wr_api__ctx_t *c, const wr_entry_t *e, wr_api__entry_view_t *v);

/*
 * The answer to a join / status / page join of c's user whose store call
 * failed with err, when the queue's fail policy lets this instance answer
 * alone: fills v (PASSTHROUGH for a disabled queue; PREQUEUE while the
 * known opensAt is ahead; WAITING degraded while paused; else ADMITTED with
 * a fail-open pass within the budget, WAITING degraded beyond it) and
 * returns true. Returns false when the caller answers err as before.
 */
bool wr_api__degraded_view(wr_api__ctx_t *c, wr_err_t err, wr_api__entry_view_t *v);

/*
 * A pass the store never saw, for user in queue, valid ttl_s seconds from
 * now: a fail-open pass (fail_open, degraded mode) or a bypass pass
 * (bypass: the rule's name, "" for none). Fills *cl (a fresh jti) and
 * signs it with the current key into out (cap bytes; out NULL: the claims
 * only, for a caller that signs them later). Returns WR_OK or
 * the error of the jti or the signing. Spent once through the store's
 * burned set (api_tokens.c).
 */
wr_err_t wr_api__sign_pass(wr_api_t *a, const char *queue, const char *user, uint32_t ttl_s,
                           bool fail_open, const char *bypass, wr_token_claims_t *cl, char *out,
                           size_t cap);

/* Appends `,"notice":"..."` (the operator's notice, JSON-escaped by
 * jansson) to the JSON object of n bytes in buf (cap bytes), before its
 * closing brace. Returns the new length, or -1 when it does not fit. */
int wr_api__view_add_notice(char *buf, int n, size_t cap, const char *notice);

#endif
