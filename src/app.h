/*
 * app.h - the state of one waitroomd process (app_t), shared by main.c
 * and the files split from it: app_declare.c (the queues the config file
 * declares), app_reload.c (SIGHUP), app_secret.c (the token secret kept in
 * the store). One app_t per process, used on the event loop only.
 */
#ifndef WR_APP_H
#define WR_APP_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/metrics.h"
#include "core/qconfig.h"
#include "http/api.h"
#include "http/http.h"
#include "runtime/config.h"
#include "runtime/looplag.h"
#include "runtime/scheduler.h"
#include "store/store.h"

typedef enum {
    DECL_CREATE = 0, /* create the queue if it does not exist (start, unchanged) */
    DECL_PATCH = 1,  /* its section changed on reload: write the fields it names */
} decl_mode_t;

typedef struct {
    wr_config_t cfg;
    int argc; /* for SIGHUP: the config is loaded again from these */
    char **argv;
    struct event_base *base;
    wr_store_t *store;
    wr_metrics_t *metrics;
    wr_scheduler_t *sched;
    wr_api_t *api;
    wr_webdir_t *web; /* the page files (--web-dir) */
    wr_http_t *http;
    wr_http_t *admin_http; /* --admin-listen; NULL = admin API on http */
    struct event *sig_term, *sig_int, *sig_hup, *sig_usr1, *sig_usr2;
    struct event *secret_timer, *stop_timer, *queues_timer, *sync_timer;
    uint8_t proposed_secret[32];
    /* K31 (a store that lost its data): the shared token secret this
     * instance signs with (from the store; len 0 with a configured secret
     * or before it is loaded), the previous secret learned from the store,
     * this instance's epoch marker and the one the store answered last. */
    uint8_t store_secret[WR_SECRET_MAX];
    size_t store_secret_len;
    uint8_t store_prev[WR_SECRET_MAX];
    size_t store_prev_len;
    char epoch[33]; /* proposed: fresh random hex at each call */
    char seen_epoch[WR_STORE_EPOCH_MAX + 1];
    bool sync_pending;
    int stop_waits;
    uint32_t secret_retry_ms; /* 100 ms doubling to 1 s while the store is not answering */
    bool stopping;
    bool secret_pending;
    /* ready at start (K25): see wait_store_start */
    bool store_started, secret_answered, start_late;
    wr_err_t store_start_err;
    char store_start_msg[640];
    wr_queue_config_t declared[WR_CONFIG_QUEUES_MAX];
    bool declared_done[WR_CONFIG_QUEUES_MAX];
    decl_mode_t declared_mode[WR_CONFIG_QUEUES_MAX];
    size_t declared_pending;
    unsigned decl_gen; /* +1 per reload that changed the declarations */
    bool pid_written;
    bool max_connections_auto;  /* --max-connections not given: SIGHUP's auto is ours */
    bool ready;                 /* start over ("listening on" printed): a SIGHUP reloads now */
    bool reload_pending;        /* a SIGHUP came before ready: reloaded once ready (K43) */
    struct wr_logsign *logsign; /* the public log's signer (app_log.c); NULL = no log */
    wr_looplag_t *looplag;      /* the loop's stalls, for the breaker's slow calls */
} app_t;

#endif
