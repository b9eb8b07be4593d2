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
 * Before the store and the listeners: the log files are opened
 * (--error-log, --access-log) and the soft RLIMIT_NOFILE is raised to what
 * --max-connections needs (connections + FD_MARGIN for the store, the
 * listeners, log and snapshot files); when the hard limit cannot cover it,
 * the start fails with a message naming both numbers (exit 1). Once the
 * listeners are open, --pid-file is written (removed at exit).
 *
 * Stop (SIGTERM/SIGINT): stop accepting, wait up to 5 s for requests in
 * flight, close the store (pending callbacks answer with WR_ECANCELED, so
 * every open request gets a reply), free everything, exit 0.
 *
 * SIGHUP: reload. The config is loaded again from the same flags, file and
 * environment into a fresh wr_config_t; if it or one of its queue
 * declarations does not load, that is logged (error) and nothing changes.
 * Else: the log level and format, the admin key and the secrets are
 * applied (wr_config_reload; settings that need a restart are named in a
 * warning), the log files are reopened, and the declared queues are
 * synced: a queue whose [queue] section changed (or is new) is written
 * with the declaration (PUT: fields the section leaves out take their
 * defaults), an unchanged one is created only if absent, as at start, so
 * runtime changes to it survive. Declarations in flight from before the
 * reload finish first (a generation number tells their callbacks apart).
 * SIGUSR1 and SIGUSR2 are logged (warn) and otherwise ignored.
 */
#include <errno.h>
#include <event2/event.h>
#include <event2/http.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "http/api.h"
#include "base/clock.h"
#include "runtime/config.h"
#include "base/crypto.h"
#include "http/http.h"
#include "base/log.h"
#include "base/metrics.h"
#include "store/redis/redis_url.h"
#include "runtime/scheduler.h"
#include "store/store.h"
#include "store/store_breaker.h"
#include "runtime/store_registry.h"
#include "core/token.h"

#define FD_MARGIN 64 /* descriptors besides connections: store, listeners, files */

typedef enum {
    DECL_CREATE = 0,  /* create the queue if it does not exist (start, unchanged) */
    DECL_REPLACE = 1, /* write the declaration (its section changed on reload) */
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
    wr_http_t *http;
    wr_http_t *admin_http; /* --admin-listen; NULL = admin API on http */
    struct event *sig_term, *sig_int, *sig_hup, *sig_usr1, *sig_usr2;
    struct event *secret_timer, *stop_timer, *queues_timer;
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
    decl_mode_t declared_mode[WR_CONFIG_QUEUES_MAX];
    size_t declared_pending;
    unsigned decl_gen; /* +1 per reload that changed the declarations */
    bool pid_written;
} app_t;

static void retry_secret(app_t *app)
{
    uint32_t ms = app->secret_retry_ms ? app->secret_retry_ms : 100;
    struct timeval tv = wr_clock_tv_ms(ms);
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
    unsigned gen; /* app->decl_gen when sent: an older answer is not for cfg.queues[i] */
} decl_t;

static void decl_put_cb(wr_err_t err, void *arg)
{
    decl_t *d = arg;
    app_t *app = d->app;
    if (err == WR_OK && d->gen == app->decl_gen) {
        app->declared_done[d->i] = true;
        wr_info("queue %s %s from the config file", app->cfg.queues[d->i].name,
                app->declared_mode[d->i] == DECL_REPLACE ? "written" : "created");
        wr_scheduler_set_config(app->sched, app->cfg.queues[d->i].name, &app->declared[d->i]);
    }
    app->declared_pending--;
    free(d);
}

static void decl_get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    decl_t *d = arg;
    app_t *app = d->app;
    if (d->gen != app->decl_gen) {
        /* declarations changed meanwhile: the next round asks again */
    } else if (err == WR_OK) {
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
            d->gen = app->decl_gen;
            wr_err_t e =
                app->declared_mode[i] == DECL_REPLACE
                    ? wr_store_config_put(app->store, app->cfg.queues[i].name, &app->declared[i],
                                          decl_put_cb, d)
                    : wr_store_queue_get(app->store, app->cfg.queues[i].name, decl_get_cb, d);
            if (e == WR_OK)
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

/* Parses the queue declarations of cfg into out; false (logged as error
 * with the prefix `when`) on the first that does not parse. */
static bool parse_declared(const wr_config_t *cfg, wr_queue_config_t *out, const char *when)
{
    for (size_t i = 0; i < cfg->n_queues; i++) {
        char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
        if (wr_qconfig_parse(cfg->queues[i].fields, &out[i], field, sizeof(field), msg,
                             sizeof(msg)) != WR_OK) {
            if (when)
                wr_error("%s: queue %s in the config file: %s: %s", when, cfg->queues[i].name,
                         field, msg);
            else
                fprintf(stderr, "waitroomd: queue %s in the config file: %s: %s\n",
                        cfg->queues[i].name, field, msg);
            return false;
        }
    }
    return true;
}

/* The declaration of queue name in cfg, or NULL. */
static const wr_config_queue_t *find_declared(const wr_config_t *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n_queues; i++)
        if (strcmp(cfg->queues[i].name, name) == 0)
            return &cfg->queues[i];
    return NULL;
}

/* SIGHUP: see the top of the file. */
static void reload(app_t *app)
{
    static wr_config_t fresh; /* large; one reload at a time (the loop) */
    static wr_queue_config_t declared[WR_CONFIG_QUEUES_MAX];
    char err[512] = "";
    wr_config_action_t action;
    wr_info("SIGHUP: reloading the configuration");
    if (wr_config_load(&fresh, app->argc, app->argv, &action, err, sizeof(err)) != WR_OK) {
        wr_error("reload failed, the running configuration is kept: %s", err);
        goto out;
    }
    if (!parse_declared(&fresh, declared, "reload failed, the running configuration is kept"))
        goto out;

    const uint8_t *old_secret = app->cfg.token_secret;
    size_t old_len = app->cfg.token_secret_len;
    uint8_t before[WR_KEY_MAX];
    memcpy(before, old_secret, old_len);
    size_t before_prev = app->cfg.token_secret_previous_len;
    uint8_t prev[WR_KEY_MAX];
    memcpy(prev, app->cfg.token_secret_previous, before_prev);
    char restart[512];
    size_t changed = wr_config_reload(&app->cfg, &fresh, restart, sizeof(restart));
    wr_log_setup(app->cfg.log_level, app->cfg.log_format == WR_LOG_JSON);
    if (restart[0])
        wr_warn("reload: changed settings that need a restart to apply: %s", restart);
    if (app->cfg.token_secret_len > 0 && (app->cfg.token_secret_len != old_len ||
                                          memcmp(app->cfg.token_secret, before, old_len) != 0))
        wr_api_set_secret(app->api, app->cfg.token_secret, app->cfg.token_secret_len);
    else if (app->cfg.token_secret_len == 0 && old_len > 0)
        wr_warn("reload: the token secret is no longer configured; the running one is kept "
                "until a restart");
    if (app->cfg.token_secret_previous_len != before_prev ||
        memcmp(app->cfg.token_secret_previous, prev, before_prev) != 0)
        wr_api_set_previous_secret(app->api, app->cfg.token_secret_previous,
                                   app->cfg.token_secret_previous_len);
    wr_api_reload(app->api);
    wr_crypto_wipe(before, sizeof(before));
    wr_crypto_wipe(prev, sizeof(prev));

    /* Queues: a changed or new section is written, an unchanged one is
     * created if absent. */
    size_t n_changed = 0;
    for (size_t i = 0; i < fresh.n_queues; i++) {
        const wr_config_queue_t *old = find_declared(&app->cfg, fresh.queues[i].name);
        bool same = old && json_equal(old->fields, fresh.queues[i].fields);
        app->declared_mode[i] = same ? DECL_CREATE : DECL_REPLACE;
        app->declared_done[i] = false;
        app->declared[i] = declared[i];
        n_changed += !same;
    }
    wr_config_free(&app->cfg);
    memcpy(app->cfg.queues, fresh.queues, sizeof(fresh.queues));
    app->cfg.n_queues = fresh.n_queues;
    fresh.n_queues = 0; /* moved */
    app->decl_gen++;
    if (app->cfg.n_queues && !app->stopping) {
        struct timeval tv = {0, 0};
        evtimer_add(app->queues_timer, &tv);
    }
    const char *what = NULL;
    if (wr_log_reopen(&what) != WR_OK)
        wr_error("reload: cannot reopen %s: %s", what, strerror(errno));
    wr_info("reload done: %zu setting%s applied, %zu queue declaration%s changed", changed,
            changed == 1 ? "" : "s", n_changed, n_changed == 1 ? "" : "s");
out:
    wr_config_free(&fresh);
    memset(&fresh, 0, sizeof(fresh));
}

static void other_signal_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    app_t *app = arg;
    if (sig == SIGHUP) {
        if (!app->stopping)
            reload(app);
        return;
    }
    wr_warn("signal %d (%s) ignored", (int)sig, sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
}

/* Raises the soft RLIMIT_NOFILE to max_connections + FD_MARGIN, up to the
 * hard limit. False (message on stderr) when the hard limit is too low. */
static bool raise_nofile(uint32_t max_connections)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return true; /* cannot tell: let accept's backoff cope */
    rlim_t need = (rlim_t)max_connections + FD_MARGIN;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= need)
        return true;
    if (rl.rlim_cur == RLIM_INFINITY)
        return true;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        fprintf(stderr,
                "waitroomd: --max-connections %u needs %llu file descriptors (connections + "
                "%d), but the hard limit (ulimit -Hn) is %llu: lower --max-connections to %llu "
                "or raise the limit (systemd: LimitNOFILE=)\n",
                max_connections, (unsigned long long)need, FD_MARGIN,
                (unsigned long long)rl.rlim_max,
                rl.rlim_max > FD_MARGIN ? (unsigned long long)(rl.rlim_max - FD_MARGIN) : 0ULL);
        return false;
    }
    rlim_t was = rl.rlim_cur;
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        fprintf(stderr, "waitroomd: cannot raise the file descriptor limit from %llu to %llu: %s\n",
                (unsigned long long)was, (unsigned long long)need, strerror(errno));
        return false;
    }
    wr_debug("raised the soft file descriptor limit from %llu to %llu", (unsigned long long)was,
             (unsigned long long)need);
    return true;
}

/* Writes the pid file (a new file, or one left by a previous run). */
static bool write_pid_file(app_t *app)
{
    const char *path = app->cfg.pid_file;
    FILE *f = fopen(path, "we");
    bool ok = f && fprintf(f, "%ld\n", (long)getpid()) > 0;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "waitroomd: cannot write the pid file %s: %s\n", path, strerror(errno));
        return false;
    }
    app->pid_written = true;
    return true;
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
    app.argc = argc;
    app.argv = argv;
    wr_log_setup(app.cfg.log_level, app.cfg.log_format == WR_LOG_JSON);

    if (!parse_declared(&app.cfg, app.declared, NULL)) {
        wr_config_free(&app.cfg);
        return 2;
    }
    const char *what = NULL;
    if (wr_log_open(app.cfg.error_log, app.cfg.access_log, &what) != WR_OK) {
        fprintf(stderr, "waitroomd: cannot open the log file %s: %s\n", what, strerror(errno));
        wr_config_free(&app.cfg);
        return 1;
    }
    /* from here on no log line is written on the loop (K27) */
    if (wr_log_async_start() != WR_OK)
        wr_warn("log: no writer thread; lines are written by the event loop");
    if (!raise_nofile(app.cfg.max_connections))
        goto out;
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
        if (wr_crypto_random(app.proposed_secret, sizeof(app.proposed_secret)) != WR_OK)
            goto out;
        struct timeval tv = {0, 0};
        evtimer_add(app.secret_timer, &tv);
    }
    if (app.cfg.n_queues) {
        struct timeval tv = {0, 0};
        evtimer_add(app.queues_timer, &tv);
    }

    /* Signals before the listener: a signal right after "listening on"
     * is handled, never the default action (SIGHUP would stop us). */
    app.sig_term = evsignal_new(app.base, SIGTERM, signal_cb, &app);
    app.sig_int = evsignal_new(app.base, SIGINT, signal_cb, &app);
    app.sig_hup = evsignal_new(app.base, SIGHUP, other_signal_cb, &app);
    app.sig_usr1 = evsignal_new(app.base, SIGUSR1, other_signal_cb, &app);
    app.sig_usr2 = evsignal_new(app.base, SIGUSR2, other_signal_cb, &app);
    if (!app.sig_term || !app.sig_int || !app.sig_hup || !app.sig_usr1 || !app.sig_usr2)
        goto out;
    evsignal_add(app.sig_term, NULL);
    evsignal_add(app.sig_int, NULL);
    evsignal_add(app.sig_hup, NULL);
    evsignal_add(app.sig_usr1, NULL);
    evsignal_add(app.sig_usr2, NULL);

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
    ho.reuse_port = app.cfg.reuse_port; /* N processes on one port (one Redis) */
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
    if (app.cfg.pid_file[0] && !write_pid_file(&app))
        goto out;
    fflush(stdout);
    const wr_store_backend_t *backend = wr_store_registry_find(app.cfg.store);
    char shown[WR_REDIS_URL_MAX + 16]; /* the URL without its password */
    wr_info("waitroomd listening on %s, store %s, identity %s", bound,
            backend && backend->title ? backend->title
                                      : wr_redis_url_redact(app.cfg.store, shown, sizeof shown),
            app.cfg.identity == WR_IDENTITY_COOKIE ? "cookie" : app.cfg.identity_header);

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
    struct event *others[] = {app.sig_hup, app.sig_usr1, app.sig_usr2};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        if (others[i])
            event_free(others[i]);
    if (app.secret_timer)
        event_free(app.secret_timer);
    if (app.stop_timer)
        event_free(app.stop_timer);
    if (app.queues_timer)
        event_free(app.queues_timer);
    /* A deferred bufferevent callback still queued (a Redis reply that
     * arrived as the store closed: the connection uses
     * BEV_OPT_DEFER_CALLBACKS) holds a reference to its bufferevent, and
     * event_base_free drops it without running it, so that bufferevent was
     * never freed (LeakSanitizer at SIGTERM, 1 run in 4 of the integration
     * suite). One pass of the loop runs them; every event and callback of
     * ours is gone by now, so they find nothing else to call. */
    if (app.base)
        event_base_loop(app.base, EVLOOP_NONBLOCK);
    if (app.base)
        event_base_free(app.base);
    if (app.pid_written)
        unlink(app.cfg.pid_file);
    /* at most 1 s for what is queued: a stalled destination must not hold
     * up the exit (what it could not take is lost) */
    (void)wr_log_async_stop(1000);
    wr_log_close();
    wr_config_free(&app.cfg);
    return rc;
}
