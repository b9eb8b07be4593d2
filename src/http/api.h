/*
 * api.h - the route handlers: HTTP requests in, store operations, HTTP
 * replies out (docs/API.md is the contract).
 *
 * One handler (wr_api_handle) is given to the server for every request. Each
 * store-backed request allocates a small context that lives until its reply
 * is sent; the store calls back exactly once, so each request is answered
 * exactly once, also when its client has gone (K07) or the store fails.
 */
#ifndef WR_API_H
#define WR_API_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/config.h"
#include "base/metrics.h"
#include "runtime/scheduler.h"
#include "store/store.h"
#include "http/http_conn.h"
#include "http/webdir.h"

typedef struct wr_api wr_api_t;

typedef struct {
    struct event_base *base; /* borrowed */
    wr_store_t *store;       /* borrowed */
    wr_scheduler_t *sched;   /* borrowed */
    wr_metrics_t *metrics;   /* borrowed */
    const wr_config_t *cfg;  /* borrowed; outlives the api */
    const wr_webdir_t *web;  /* borrowed, outlives the api: the page files
                                (wr_webdir_load of cfg->web_dir); NULL = the
                                embedded ones */
} wr_api_opts_t;

/* Creates the handler state. Returns WR_OK, WR_ENOMEM. */
wr_err_t wr_api_new(const wr_api_opts_t *opts, wr_api_t **out);

/* The request callback (wr_http_opts_t.handler); arg is the wr_api_t. With cfg->admin_listen
 * set, this (public) handler answers the admin API, the dashboard and
 * /metrics 404. */
void wr_api_handle(wr_http_req_t *req, void *arg);

/* The callback of the admin listener (--admin-listen): every route. */
void wr_api_handle_admin(wr_http_req_t *req, void *arg);

/* The body limit of req's route (wr_http_opts_t.body_limit; arg is the
 * wr_api_t): WR_HTTP_MAX_BODY_ADMIN on admin routes and on paths no route
 * takes (answered 404/405), else WR_HTTP_MAX_BODY_USER. */
size_t wr_api_body_limit(const wr_http_req_t *req, void *arg);

/*
 * Installs the token secret (len bytes, copied; from the config or the
 * store). Until a secret is installed, the user and token routes answer
 * 503 STORE_UNAVAILABLE. The cookie key is the configured cookie secret, or
 * HMAC-SHA256(token secret, "waitroom cookie v1").
 */
void wr_api_set_secret(wr_api_t *a, const uint8_t *secret, size_t len);

/* The HTTP servers whose connection counters /metrics reports
 * (waitroom_http_connections, _accepted_total, _refused_total,
 * _accept_pauses_total: the sum of both): http, the API's listener;
 * admin, --admin-listen's or NULL. Borrowed: they outlive the api, or
 * are unset first (wr_api_set_http(a, NULL, NULL)). */
struct wr_http;
void wr_api_set_http(wr_api_t *a, const struct wr_http *http, const struct wr_http *admin);

/* The public log's signer (borrowed; NULL = none): the log routes serve
 * its key and sign a log that has no checkpoint yet. */
struct wr_logsign;
void wr_api_set_logsign(wr_api_t *a, struct wr_logsign *ls);

/* Asks the drand-compatible beacon at url for round (GET
 * {url}/public/{round}) for queue's opening draw, and hands a good answer
 * to the store (log_beacon); nothing else (the signer asks again each
 * second while the opening waits). api: the wr_api_t (a logsign beacon
 * hook). (api_beacon.c) */
void wr_api_beacon_fetch(void *api, const char *queue, const char *url, uint64_t round);

/*
 * Installs the previous token secret (rotation; len bytes, copied; len 0
 * removes it): tokens signed with it still verify until they expire, and,
 * when no cookie secret is configured, visitor cookies signed with the key
 * derived from it are still accepted (and re-issued on the next join).
 * New tokens are always signed with the current secret and its kid.
 */
void wr_api_set_previous_secret(wr_api_t *a, const uint8_t *secret, size_t len);

/* SIGHUP: re-reads the admin key and the cookie secrets from the config
 * (after wr_config_reload changed it); the token secrets are installed with
 * the two functions above. */
void wr_api_reload(wr_api_t *a);

/* True once a token secret is installed. */
bool wr_api_has_secret(const wr_api_t *a);

/* Requests waiting for a store answer right now. */
size_t wr_api_in_flight(const wr_api_t *a);

/* Frees the state. Every request must have been answered (in_flight 0). */
void wr_api_free(wr_api_t *a);

/* Web Push (api_push.c): reads --push-key (when set) after wr_api_new.
 * WR_OK; WR_EINVAL with why set (an unreadable or wrong key); WR_ENOMEM. */
wr_err_t wr_api_push_init(wr_api_t *a, char *why, size_t cap);

/* The scheduler's push callback (wr_scheduler_set_push, arg the api):
 * sends one push per claimed subscription of res. */
void wr_api_push_admitted(const char *queue, const wr_admit_t *res, void *arg);

#endif
