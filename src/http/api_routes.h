/*
 * api_routes.h - the route handlers of the api module (the HANDLER column
 * of routes.def, called by api.c's dispatch) and what the two joining
 * routes share (api_entries.c's join, used by api_page.c). Included by
 * api.c and the files that define them.
 */
#ifndef WR_API_ROUTES_H
#define WR_API_ROUTES_H

#include "http/api_internal.h"

/* ---------- api_entries.c: join / status / leave, the join's gates ---------- */

/* POST /v1/queues/{queue}/entries, GET/DELETE .../entries/me; the queue is
 * validated and the token secret is installed. Answers req exactly once. */
wr_api__handler_fn wr_api__handle_entries;

/* How a join's route answers once the gates are done with c (each frees
 * c): POST entries' JSON (api_entries.c), or the queue page (api_page.c). */
struct wr_api__join_answers {
    wr_store_entry_cb entry; /* the store's entry of the join, or of the gates' status read */
    void (*invite_refused)(wr_api__ctx_t *c, wr_invite_reason_t r); /* 403 of the invite gate */
    void (*challenge)(wr_api__ctx_t *c); /* refused for its challenge or CAPTCHA (not in line) */
};

/* A join of queue on route (JOIN or QUEUE_PAGE): the queue's config (the
 * held one, else one store read), then the gates (body, invite, challenge,
 * CAPTCHA), then the store's join; answered through answers (static
 * storage). Answers req exactly once. */
void wr_api__join_start(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *queue,
                        const wr_api__join_answers_t *answers);

/* The join limit per client address: true when req was refused (answered
 * 429 RATE_LIMITED). */
bool wr_api__join_limited(wr_api_t *a, wr_http_req_t *req, wr_route_t route);

/* Poll pacing, after an answer: a waiting identity (queue, user) was told
 * to come back in retry_ms (0 = not waiting any more: forgotten). */
void wr_api__pace_note(wr_api_t *a, const char *queue, const char *user, uint32_t retry_ms);

/* ---------- api_page.c ---------- */

/* GET /q/{queue}: joins (like POST entries) and answers the queue page.
 * Same preconditions as wr_api__handle_entries. */
wr_api__handler_fn wr_api__handle_queue_page;

/* ---------- api_tokens.c ---------- */

/* POST .../tokens/consume, GET .../tokens/verify and POST .../tokens/release;
 * the queue is validated and the token secret is installed. Answers req
 * exactly once. */
wr_api__handler_fn wr_api__handle_tokens;

/* ---------- api_push.c ---------- */

/* GET .../push/key, PUT and DELETE .../entries/me/push (Web Push); the
 * queue is validated and the token secret is installed. Answers req
 * exactly once. */
wr_api__handler_fn wr_api__handle_push;

/* ---------- api_admin.c ---------- */

/* The admin API routes (WR_ROUTE_ADMIN_*); the queue is validated ("" for
 * the list) and the admin key was checked (WR_ROUTE_F_ADMIN_KEY). Answers
 * req exactly once. */
wr_api__handler_fn wr_api__handle_admin;

/* GET /readyz: 200 when the store answers a ping and a token secret is
 * installed, else 503. */
wr_api__handler_fn wr_api__handle_readyz;

/* GET /metrics: the Prometheus text (404 when metrics are disabled). */
wr_api__handler_fn wr_api__handle_metrics;

/* GET /v1/admin/queues/{queue}/history[?since=EPOCH_MS]: the queue's
 * one-second history kept by this instance (history.h); the admin key was
 * checked. 404 QUEUE_NOT_FOUND when this instance does not know the queue. */
wr_api__handler_fn wr_api__handle_history;
wr_api__handler_fn wr_api__handle_report;  /* api_report.c */
wr_api__handler_fn wr_api__handle_reports; /* api_report.c */
/* Presale codes (api_codes_admin.c): POST, GET /v1/admin/queues/{queue}/codes
 * and DELETE .../codes/{code}; the admin key was checked, the queue is
 * validated. Answers req exactly once. */
wr_api__handler_fn wr_api__handle_codes;
/* POST /v1/queues/{queue}/health (autotune): the service's report; 204. */
wr_api__handler_fn wr_api__handle_health;

/* ---------- api_log.c ---------- */

/* True for the public log's routes (they share the join limit per address:
 * wr_api__join_limited). */
static inline bool wr_api__log_route(wr_route_t r)
{
    return r == WR_ROUTE_LOG_KEY || r == WR_ROUTE_LOG_CHECKPOINT || r == WR_ROUTE_LOG_ENTRIES ||
           r == WR_ROUTE_LOG_INCLUSION || r == WR_ROUTE_LOG_CONSISTENCY;
}

/* The public log's routes (key, checkpoint, entries, proofs): public. */
wr_api__handler_fn wr_api__handle_log;

/* The public log's rules of a config change (PUT, PATCH) across the
 * queue's state (docs/API.md 1.3): publicLog only on a store that keeps a
 * log, switched only while line, pre-queue and held are empty; draw fixed
 * while a commit awaits its draw. old and st: the queue before (NULL for
 * a new queue). True when cfg may be written; else the 400
 * INVALID_CONFIG naming the field is sent. */
bool wr_api__log_config_check(wr_api__ctx_t *c, const wr_queue_config_t *old,
                              const wr_queue_stats_t *st, const wr_queue_config_t *cfg);

#endif
