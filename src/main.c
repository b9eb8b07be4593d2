/*
 * main.c - waitroomd: flags and config, wiring, signals, graceful stop.
 *
 * Start: load the config (flags > INI file > defaults; env for secrets),
 * open the store (embedded memory store by default, or Redis), create the
 * metrics registry, the scheduler and the API, install the token secret
 * (configured, or fetched from / created in the store so every instance
 * shares it; retried every second until the store answers), create the
 * queues the config file declares (only if absent: a restart never undoes
 * a runtime change), wait for the first attempt to reach the store to end
 * (wait_store_start: refuse to start if the store must not be used), then
 * bind and print "listening on ADDR:PORT" as the first line on stdout.
 *
 * Stop (SIGTERM/SIGINT): stop accepting, wait up to 5 s for requests in
 * flight, close the store (pending callbacks answer with WR_ECANCELED, so
 * every open request gets a reply), free everything, exit 0.
 */
#include <errno.h>
#include <event2/event.h>
#include <event2/http.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "config.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "redis_url.h"
#include "scheduler.h"
#include "store.h"
#include "store_breaker.h"
#include "store_registry.h"
#include "token.h"

typedef struct {
    wr_config_t cfg;
    struct event_base *base;
    wr_store_t *store;
    wr_metrics_t *metrics;
    wr_scheduler_t *sched;
    wr_api_t *api;
    wr_http_t *http;
    wr_http_t *admin_http; /* --admin-listen; NULL = admin API on http */
    struct event *sig_term, *sig_int, *secret_timer, *stop_timer, *queues_timer;
    uint8_t proposed_secret[32];
    int stop_waits;
    uint32_t secret_retry_ms; /* 100 ms doubling to 1 s while the store is not answering */
    bool stopping;
    bool secret_pending;
    /* ready at start (K25): see wait_store_start */
    bool store_started, secret_answered, queues_ran, start_late;
    wr_err_t store_start_err;
    char store_start_msg[640];
    wr_queue_config_t declared[WR_CONFIG_QUEUES_MAX];
    bool declared_done[WR_CONFIG_QUEUES_MAX];
    size_t declared_pending;
} app_t;

static void retry_secret(app_t *app)
{
    uint32_t ms = app->secret_retry_ms ? app->secret_retry_ms : 100;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(app->secret_timer, &tv);
    app->secret_retry_ms = ms * 2 > 1000 ? 1000 : ms * 2;
}

static void secret_cb(wr_err_t err, const uint8_t *secret, size_t len, void *arg)
{
    app_t *app = arg;
    app->secret_pending = false;
    app->secret_answered = true;
    if (err == WR_OK && len > 0) {
        wr_api_set_secret(app->api, secret, len);
        wr_info("token secret loaded from the store (%zu bytes)", len);
        return;
    }
    if (err != WR_ECANCELED && !app->stopping) {
        wr_warn("could not load the token secret from the store (%s); retrying", wr_strerror(err));
        retry_secret(app);
    }
}

static void secret_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    app_t *app = arg;
    if (app->secret_pending || app->stopping)
        return;
    if (wr_store_secret(app->store, app->proposed_secret, sizeof(app->proposed_secret), secret_cb,
                        app) == WR_OK)
        app->secret_pending = true;
    else
        retry_secret(app); /* e.g. the Redis connection is still being set up */
}

/* Declared queues: created when absent. */
typedef struct {
    app_t *app;
    size_t i;
} decl_t;

static void decl_put_cb(wr_err_t err, void *arg)
{
    decl_t *d = arg;
    app_t *app = d->app;
    if (err == WR_OK) {
        app->declared_done[d->i] = true;
        wr_info("queue %s created from the config file", app->cfg.queues[d->i].name);
        wr_scheduler_note(app->sched, app->cfg.queues[d->i].name, &app->declared[d->i]);
    }
    app->declared_pending--;
    free(d);
}

static void decl_get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    decl_t *d = arg;
    app_t *app = d->app;
    if (err == WR_OK) {
        app->declared_done[d->i] = true; /* exists: keep its (maybe changed) config */
        wr_scheduler_note(app->sched, app->cfg.queues[d->i].name, info->config);
    } else if (err == WR_ENOTFOUND && !app->stopping) {
        if (wr_store_config_put(app->store, app->cfg.queues[d->i].name, &app->declared[d->i],
                                decl_put_cb, d) == WR_OK)
            return;
    }
    app->declared_pending--;
    free(d);
}

static void queues_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    app_t *app = arg;
    if (app->stopping)
        return;
    size_t left = 0;
    for (size_t i = 0; i < app->cfg.n_queues; i++)
        left += !app->declared_done[i];
    if (left == 0)
        return; /* every declared queue exists */
    app->queues_ran = true;
    if (app->declared_pending == 0) {
        for (size_t i = 0; i < app->cfg.n_queues; i++) {
            if (app->declared_done[i])
                continue;
            decl_t *d = calloc(1, sizeof(*d));
            if (!d)
                break;
            d->app = app;
            d->i = i;
            if (wr_store_queue_get(app->store, app->cfg.queues[i].name, decl_get_cb, d) == WR_OK)
                app->declared_pending++;
            else
                free(d);
        }
    }
    struct timeval tv = {0, 500000}; /* until the store answers for each */
    evtimer_add(app->queues_timer, &tv);
}

static void stop_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    app_t *app = arg;
    if (wr_api_in_flight(app->api) == 0 || ++app->stop_waits > 100) {
        event_base_loopbreak(app->base);
        return;
    }
    struct timeval tv = {0, 50000};
    evtimer_add(app->stop_timer, &tv);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    app_t *app = arg;
    if (app->stopping) {
        event_base_loopbreak(app->base);
        return;
    }
    app->stopping = true;
    wr_info("signal %d: stopping (answering %zu requests in flight)", (int)sig,
            wr_api_in_flight(app->api));
    wr_http_stop_accepting(app->http);
    wr_http_stop_accepting(app->admin_http);
    stop_timer_cb(-1, 0, app);
}

/* The first attempt to reach the store is over (store_registry.h). */
static void store_started_cb(wr_err_t err, const char *msg, void *arg)
{
    app_t *app = arg;
    app->store_started = true;
    app->store_start_err = err;
    snprintf(app->store_start_msg, sizeof app->store_start_msg, "%s", msg ? msg : "");
}

static void start_late_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    ((app_t *)arg)->start_late = true;
}

/*
 * Ready at start (K25): runs the loop until the first attempt to reach the
 * store is over (answered, refused or timed out) and, when the store
 * answered, until the token secret and the declared queues had their first
 * answer, so the first request after "listening on" finds them; at most
 * 10 s. A store down at start still lets the server start (/readyz 503
 * until it is back). WR_EINVAL: the store must not be used as it is set up
 * (e.g. keys can be evicted); the reason is printed.
 */
static wr_err_t wait_store_start(app_t *app)
{
    struct event *late = evtimer_new(app->base, start_late_cb, app);
    if (!late)
        return WR_ENOMEM;
    struct timeval tv = {10, 0};
    evtimer_add(late, &tv);
    while (!app->store_started && !app->start_late)
        event_base_loop(app->base, EVLOOP_ONCE);
    while (app->store_started && app->store_start_err == WR_OK && !app->start_late &&
           ((app->cfg.token_secret_len == 0 && !app->secret_answered) ||
            (app->cfg.n_queues > 0 && (!app->queues_ran || app->declared_pending > 0))))
        event_base_loop(app->base, EVLOOP_ONCE);
    event_free(late);
    if (app->store_started && app->store_start_err == WR_EINVAL) {
        fprintf(stderr, "waitroomd: refusing to start: %s\n", app->store_start_msg);
        return WR_EINVAL;
    }
    if (app->store_started && app->store_start_err != WR_OK)
        wr_warn("starting without the store (%s); /readyz answers 503 until it is reached",
                app->store_start_msg[0] ? app->store_start_msg : wr_strerror(app->store_start_err));
    return WR_OK;
}

/* Opens the store --store names, through the store registry. */
static wr_err_t open_store(app_t *app)
{
    wr_store_params_t p = {0};
    p.data_dir = app->cfg.data_dir;
    p.command_timeout_ms = app->cfg.store_timeout_ms;
    p.wait_replicas = app->cfg.redis_wait_replicas;
    p.wait_timeout_ms = app->cfg.redis_wait_timeout_ms;
    p.metrics = app->metrics;
    p.redis_ca = app->cfg.redis_ca;
    p.redis_cert = app->cfg.redis_cert;
    p.redis_key = app->cfg.redis_key;
    p.redis_password = app->cfg.redis_password;
    p.redis_allow_eviction = app->cfg.redis_allow_eviction;
    p.on_started = store_started_cb;
    p.started_arg = app;
    return wr_store_open_url(app->base, app->cfg.store, &p, &app->store);
}

/* Puts the circuit breaker in front of the store (docs/RELIABILITY.md);
 * --breaker off leaves the store bare. */
static wr_err_t wrap_breaker(app_t *app)
{
    if (strcmp(app->cfg.breaker, "off") == 0) {
        wr_warn("store circuit breaker disabled (--breaker off)");
        return WR_OK;
    }
    wr_store_breaker_opts_t bo = {0};
    wr_breaker_opts_default(&bo.breaker);
    char err[160] = "";
    if (app->cfg.breaker[0] &&
        wr_breaker_parse(&bo.breaker, app->cfg.breaker, err, sizeof(err)) != WR_OK) {
        fprintf(stderr, "waitroomd: --breaker: %s\n", err);
        return WR_EINVAL;
    }
    bo.metrics = app->metrics;
    wr_store_t *wrapped = NULL;
    wr_err_t e = wr_store_breaker_wrap(app->store, &bo, &wrapped);
    if (e == WR_OK)
        app->store = wrapped;
    return e;
}

int main(int argc, char **argv)
{
    static app_t app;
    char err[512] = "";
    wr_config_action_t action = WR_CONFIG_RUN;
    int rc = 1;

    signal(SIGPIPE, SIG_IGN);
    wr_config_defaults(&app.cfg);
    if (wr_config_load(&app.cfg, argc, argv, &action, err, sizeof(err)) != WR_OK) {
        fprintf(stderr, "waitroomd: %s\n%s", err, wr_config_usage());
        wr_config_free(&app.cfg);
        return 2;
    }
    if (action != WR_CONFIG_RUN) { /* --help, --version */
        fputs(action == WR_CONFIG_HELP ? wr_config_usage() : wr_config_version(), stdout);
        wr_config_free(&app.cfg);
        return 0;
    }
    wr_log_setup(app.cfg.log_level, false);

    for (size_t i = 0; i < app.cfg.n_queues; i++) {
        char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
        if (wr_qconfig_parse(app.cfg.queues[i].fields, &app.declared[i], field, sizeof(field), msg,
                             sizeof(msg)) != WR_OK) {
            fprintf(stderr, "waitroomd: queue %s in the config file: %s: %s\n",
                    app.cfg.queues[i].name, field, msg);
            wr_config_free(&app.cfg);
            return 2;
        }
    }
    if (app.cfg.token_secret_len > 0 && app.cfg.token_secret_len < WR_SECRET_MIN)
        wr_warn("the token secret is %zu bytes; use at least %d random bytes "
                "(--strict-secrets refuses shorter ones)",
                app.cfg.token_secret_len, WR_SECRET_MIN);
    if (app.cfg.cookie_secret_len > 0 && app.cfg.cookie_secret_len < WR_SECRET_MIN)
        wr_warn("the cookie secret is %zu bytes; use at least %d random bytes",
                app.cfg.cookie_secret_len, WR_SECRET_MIN);
    if (!app.cfg.admin_key[0])
        wr_warn("no admin key configured: the admin API answers 401 to everything");

    struct event_config *ec = event_config_new();
    if (!ec)
        goto out;
    if (!getenv("WR_NO_CHANGELIST"))
        event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    app.base = event_base_new_with_config(ec);
    event_config_free(ec);
    if (!app.base) {
        fprintf(stderr, "waitroomd: could not create the event loop\n");
        goto out;
    }

    app.metrics = wr_metrics_new();
    if (!app.metrics)
        goto out;
    wr_err_t e = open_store(&app);
    if (e != WR_OK) {
        char shown[WR_REDIS_URL_MAX + 16]; /* the URL without its password */
        fprintf(stderr, "waitroomd: cannot open store %s: %s\n",
                wr_redis_url_redact(app.cfg.store, shown, sizeof shown), wr_strerror(e));
        goto out;
    }
    if (wrap_breaker(&app) != WR_OK)
        goto out;
    wr_scheduler_opts_t so = {app.base, app.store, app.metrics, 1000};
    if (wr_scheduler_new(&so, &app.sched) != WR_OK)
        goto out;
    wr_api_opts_t ao = {app.base, app.store, app.sched, app.metrics, &app.cfg};
    if (wr_api_new(&ao, &app.api) != WR_OK)
        goto out;

    app.secret_timer = evtimer_new(app.base, secret_timer_cb, &app);
    app.stop_timer = evtimer_new(app.base, stop_timer_cb, &app);
    app.queues_timer = evtimer_new(app.base, queues_timer_cb, &app);
    if (!app.secret_timer || !app.stop_timer || !app.queues_timer)
        goto out;
    if (app.cfg.token_secret_previous_len > 0)
        wr_api_set_previous_secret(app.api, app.cfg.token_secret_previous,
                                   app.cfg.token_secret_previous_len);
    if (app.cfg.token_secret_len > 0) {
        wr_api_set_secret(app.api, app.cfg.token_secret, app.cfg.token_secret_len);
    } else {
        if (wr_token_random(app.proposed_secret, sizeof(app.proposed_secret)) != WR_OK)
            goto out;
        struct timeval tv = {0, 0};
        evtimer_add(app.secret_timer, &tv);
    }
    if (app.cfg.n_queues) {
        struct timeval tv = {0, 0};
        evtimer_add(app.queues_timer, &tv);
    }

    if (wait_store_start(&app) != WR_OK)
        goto out;

    wr_http_opts_t ho = {.base = app.base,
                         .listen = app.cfg.listen,
                         .max_connections = app.cfg.max_connections,
                         .timeout_seconds = app.cfg.timeout_seconds,
                         .handler = wr_api_handle,
                         .handler_arg = app.api};
    ho.max_conn_requests = app.cfg.max_conn_requests; /* security limits */
    ho.request_timeout_seconds = app.cfg.request_timeout_seconds;
    char bound[300];
    e = wr_http_open(&ho, &app.http, bound, sizeof(bound));
    if (e != WR_OK) {
        fprintf(stderr, "waitroomd: cannot listen on %s: %s%s%s\n", app.cfg.listen, wr_strerror(e),
                e == WR_EIO ? ": " : "", e == WR_EIO ? strerror(errno) : "");
        goto out;
    }
    printf("listening on %s\n", bound);
    if (app.cfg.admin_listen[0]) { /* security: the admin API on its own listener */
        wr_http_opts_t ao2 = ho;
        ao2.listen = app.cfg.admin_listen;
        ao2.handler = wr_api_handle_admin;
        char abound[300];
        e = wr_http_open(&ao2, &app.admin_http, abound, sizeof(abound));
        if (e != WR_OK) {
            fprintf(stderr, "waitroomd: cannot listen on %s (--admin-listen): %s%s%s\n",
                    app.cfg.admin_listen, wr_strerror(e), e == WR_EIO ? ": " : "",
                    e == WR_EIO ? strerror(errno) : "");
            goto out;
        }
        printf("admin listening on %s\n", abound);
    }
    fflush(stdout);
    const wr_store_backend_t *backend = wr_store_registry_find(app.cfg.store);
    char shown[WR_REDIS_URL_MAX + 16]; /* the URL without its password */
    wr_info("waitroomd listening on %s, store %s, identity %s", bound,
            backend && backend->title ? backend->title
                                      : wr_redis_url_redact(app.cfg.store, shown, sizeof shown),
            app.cfg.identity == WR_IDENTITY_COOKIE ? "cookie" : app.cfg.identity_header);

    app.sig_term = evsignal_new(app.base, SIGTERM, signal_cb, &app);
    app.sig_int = evsignal_new(app.base, SIGINT, signal_cb, &app);
    if (!app.sig_term || !app.sig_int)
        goto out;
    evsignal_add(app.sig_term, NULL);
    evsignal_add(app.sig_int, NULL);

    event_base_dispatch(app.base);
    rc = 0;
    wr_info("stopped");

out:
    app.stopping = true;
    /* The store first: its pending callbacks reply to open requests while
     * the HTTP server still exists. */
    wr_store_close(app.store);
    wr_scheduler_free(app.sched);
    if (app.http)
        wr_http_free(app.http);
    if (app.admin_http)
        wr_http_free(app.admin_http);
    wr_api_free(app.api);
    wr_metrics_free(app.metrics);
    if (app.sig_term)
        event_free(app.sig_term);
    if (app.sig_int)
        event_free(app.sig_int);
    if (app.secret_timer)
        event_free(app.secret_timer);
    if (app.stop_timer)
        event_free(app.stop_timer);
    if (app.queues_timer)
        event_free(app.queues_timer);
    if (app.base)
        event_base_free(app.base);
    wr_config_free(&app.cfg);
    return rc;
}
