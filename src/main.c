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
 * listeners, log and snapshot files). Its default (auto) is 10000, or what
 * the hard limit leaves room for, with a warning; an explicit value the
 * hard limit cannot cover fails the start with a message naming both
 * numbers. Once the listeners are open, --pid-file is written (removed at
 * exit). A start that fails exits EXIT_CONFIG (2) when the configuration
 * cannot work as written, EXIT_START (1) when a restart may cure it.
 *
 * Stop (SIGTERM/SIGINT): stop accepting, wait up to 5 s for requests in
 * flight, close the store (pending callbacks answer with WR_ECANCELED, so
 * every open request gets a reply), free everything, exit 0.
 *
 * SIGHUP: reload (app_reload.c): the config is loaded again and what can
 * change without a restart is applied; SIGUSR1 and SIGUSR2 are logged
 * (warn) and otherwise ignored. The queues the config file declares are
 * created at start, synced on reload and written back when the store lost
 * its data (app_declare.c); the token secret is loaded from (or created
 * in) the store and kept in step with it (app_secret.c, K31).
 *
 * Signals during the start (K43): every signal above is blocked from the
 * program's first instruction (block_handled_signals) until its handler is
 * installed, so none takes its default action; those that came meanwhile
 * are handled before listening: SIGTERM/SIGINT stop the start (exit 0,
 * nothing listened), a SIGHUP is applied once the start is over (a reload
 * right after "listening on"), SIGUSR1/2 are logged.
 */
#include <errno.h>
#include <limits.h>
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
#include "runtime/scheduler.h"
#include "store/store.h"
#include "store/store_breaker.h"
#include "runtime/store_registry.h"
#include "core/token.h"

#include "app.h"
#include "app_declare.h"
#include "app_notify.h"
#include "app_reload.h"
#include "app_log.h"
#include "runtime/logsign.h"
#include "app_secret.h"

/* The signals the server handles (see the top of the file). */
static const int handled_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

/* The set of handled_signals. */
static void handled_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < sizeof(handled_signals) / sizeof(handled_signals[0]); i++)
        sigaddset(set, handled_signals[i]);
}

/* K43: blocks the signals the server handles before anything else runs:
 * from .preinit_array, which the dynamic loader runs before every
 * constructor and before main (only the loader and a sanitizer's runtime
 * run before it). main unblocks them once their handlers are installed;
 * one sent meanwhile waits, pending, instead of taking its default action
 * (SIGHUP, SIGUSR1/2 and SIGTERM would end the process), and threads
 * started meanwhile (the log writer) inherit the mask and never take one. */
static void block_handled_signals(void)
{
    sigset_t set;
    handled_set(&set);
    sigprocmask(SIG_BLOCK, &set, NULL);
}
__attribute__((section(".preinit_array"),
               used)) static void (*const preinit_block)(void) = block_handled_signals;

#define FD_MARGIN 64 /* descriptors besides connections: store, listeners, files */

/* Exit statuses (docs/waitroomd.8, EXIT STATUS): 0 after a graceful stop,
 * --help or --version; EXIT_CONFIG when the configuration cannot work as
 * written, so restarting cannot help (systemd: RestartPreventExitStatus=2);
 * EXIT_START when starting failed for a reason a restart may cure (the
 * port is still in use, out of memory). */
#define EXIT_CONFIG 2
#define EXIT_START  1

static void stop_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    app_t *app = arg;
    /* the report's counts are sent before the store closes (reporter.h) */
    if (app->stop_waits == 0)
        wr_reporter_flush(wr_scheduler_reporter(app->sched), NULL);
    if ((wr_api_in_flight(app->api) == 0 &&
         wr_reporter_in_flight(wr_scheduler_reporter(app->sched)) == 0) ||
        ++app->stop_waits > 100) {
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
    wr_app_notify("STOPPING=1");
    wr_info("signal %d: stopping (answering %zu requests in flight)", (int)sig,
            wr_api_in_flight(app->api));
    wr_http_stop_accepting(app->http);
    wr_http_stop_accepting(app->admin_http);
    stop_timer_cb(-1, 0, app);
}

static void other_signal_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    app_t *app = arg;
    if (sig == SIGHUP) {
        if (app->stopping)
            return;
        if (!app->ready) { /* K43: applied once the start is over */
            app->reload_pending = true;
            wr_info("SIGHUP during start: the configuration is reloaded once started");
            return;
        }
        wr_app_reload(app);
        return;
    }
    wr_warn("signal %d (%s) ignored", (int)sig, sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
}

/* Fits --max-connections to the hard RLIMIT_NOFILE (auto: 10000 or what
 * the limit allows, with a warning; explicit: refused when it does not fit)
 * and raises the soft limit to max_connections + FD_MARGIN. Returns 0, or
 * the exit status (message on stderr): EXIT_CONFIG when the value does not
 * fit, EXIT_START when the soft limit cannot be raised. */
static int raise_nofile(wr_config_t *cfg)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        rl.rlim_cur = RLIM_INFINITY; /* cannot tell: let accept's backoff cope */
        rl.rlim_max = RLIM_INFINITY;
    }
    char note[512];
    unsigned long long hard = rl.rlim_max == RLIM_INFINITY ? ULLONG_MAX : rl.rlim_max;
    if (wr_config_fit_connections(cfg, hard, FD_MARGIN, note, sizeof note) != WR_OK) {
        fprintf(stderr, "waitroomd: %s\n", note);
        return EXIT_CONFIG;
    }
    if (note[0])
        wr_warn("%s", note);
    rlim_t need = (rlim_t)cfg->max_connections + FD_MARGIN;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return 0;
    rlim_t was = rl.rlim_cur;
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        fprintf(stderr, "waitroomd: cannot raise the file descriptor limit from %llu to %llu: %s\n",
                (unsigned long long)was, (unsigned long long)need, strerror(errno));
        return EXIT_START;
    }
    wr_debug("raised the soft file descriptor limit from %llu to %llu", (unsigned long long)was,
             (unsigned long long)need);
    return 0;
}

/* The exit status of a listener that could not be opened (e, errno from
 * wr_http_open): a port in use, an address not up yet or a resolver that
 * failed for now may be cured by a restart; a bad address (one that
 * resolves to nothing included) or a port the user may not bind will not. */
static int listen_exit(wr_err_t e)
{
    if (e == WR_EINVAL || (e == WR_EIO && errno == EACCES))
        return EXIT_CONFIG;
    return EXIT_START;
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
 * answered, until the token secret had its first answer and every
 * declared queue exists (found or created: a round sent before the
 * connection was up does not count), so the first request after
 * "listening on" finds them; at most
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
    /* signals that came during the start (pending until their handlers
     * were installed: K43) are handled before listening */
    event_base_loop(app->base, EVLOOP_NONBLOCK);
    while (!app->store_started && !app->start_late && !app->stopping)
        event_base_loop(app->base, EVLOOP_ONCE);
    while (app->store_started && app->store_start_err == WR_OK && !app->start_late &&
           !app->stopping &&
           ((app->cfg.token_secret_len == 0 && !app->secret_answered) ||
            !wr_app_declared_all_done(app)))
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
    p.push_sender = app->cfg.push_subject[0] != '\0';
    p.on_started = store_started_cb;
    p.started_arg = app;
    return wr_store_open_url(app->base, app->cfg.store, &p, &app->store);
}

static uint32_t loop_stalled_ms(const void *looplag, int64_t since_ms, int64_t now_ms)
{
    return wr_looplag_stalled_ms(looplag, since_ms, now_ms);
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
    bo.stalled_ms = loop_stalled_ms;
    bo.stalled_arg = app->looplag;
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
    int rc = EXIT_START;

    sigset_t handled; /* blocked since .preinit_array (K43), unblocked below */
    handled_set(&handled);
    sigprocmask(SIG_BLOCK, &handled, NULL);
    signal(SIGPIPE, SIG_IGN);
    wr_config_defaults(&app.cfg);
    if (wr_config_load(&app.cfg, argc, argv, &action, err, sizeof(err)) != WR_OK) {
        /* one line: what is wrong and where; the usage is one flag away */
        fprintf(stderr, "waitroomd: %s; see waitroomd --help\n", err);
        wr_config_free(&app.cfg);
        return EXIT_CONFIG;
    }
    if (action != WR_CONFIG_RUN) { /* --help, --version */
        fputs(action == WR_CONFIG_HELP ? wr_config_usage() : wr_config_version(), stdout);
        wr_config_free(&app.cfg);
        return 0;
    }
    app.argc = argc;
    app.argv = argv;
    wr_log_setup(app.cfg.log_level, app.cfg.log_format == WR_LOG_JSON);

    if (!wr_app_parse_declared(&app.cfg, app.declared, NULL)) {
        wr_config_free(&app.cfg);
        return EXIT_CONFIG;
    }
    const char *what = NULL;
    if (wr_log_open(app.cfg.error_log, app.cfg.access_log, &what) != WR_OK) {
        fprintf(stderr, "waitroomd: cannot open the log file %s: %s\n", what, strerror(errno));
        wr_config_free(&app.cfg);
        return EXIT_CONFIG;
    }
    /* from here on no log line is written on the loop (K27) */
    if (wr_log_async_start() != WR_OK)
        wr_warn("log: no writer thread; lines are written by the event loop");
    app.max_connections_auto = app.cfg.max_connections == 0;
    if ((rc = raise_nofile(&app.cfg)) != 0)
        goto out;
    rc = EXIT_START;
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
    if (wr_looplag_new(app.metrics, wr_clock_mono_ms(), &app.looplag) != WR_OK)
        goto out;
    wr_err_t e = open_store(&app);
    if (e != WR_OK) {
        char shown[WR_STORE_URL_SHOWN_MAX]; /* the URL without its password */
        fprintf(stderr, "waitroomd: cannot open store %s: %s\n",
                wr_store_url_shown(app.cfg.store, shown, sizeof shown), wr_strerror(e));
        /* a data dir that cannot be used, a TLS file that cannot be read:
         * the configuration's; only memory may come back on a restart */
        rc = e == WR_ENOMEM ? EXIT_START : EXIT_CONFIG;
        goto out;
    }
    if (wrap_breaker(&app) != WR_OK) {
        rc = EXIT_CONFIG;
        goto out;
    }
    wr_scheduler_opts_t so = {app.base, app.store, app.metrics, 1000, app.cfg.report_days};
    if (wr_scheduler_new(&so, &app.sched) != WR_OK)
        goto out;
    {
        char why[512];
        wr_err_t we = wr_webdir_load(app.cfg.web_dir, &app.web, why, sizeof why);
        if (we != WR_OK) {
            fprintf(stderr, "waitroomd: %s\n", why[0] ? why : wr_strerror(we));
            rc = we == WR_ENOMEM ? EXIT_START : EXIT_CONFIG;
            goto out;
        }
        if (app.cfg.web_dir[0])
            wr_log(WR_LOG_INFO, "queue page: %zu file(s) from --web-dir %s",
                   wr_webdir_count(app.web), app.cfg.web_dir);
    }
    wr_api_opts_t ao = {app.base, app.store, app.sched, app.metrics, &app.cfg, app.web};
    if (wr_api_new(&ao, &app.api) != WR_OK)
        goto out;
    {
        char why[512] = "";
        wr_err_t pe = wr_api_push_init(app.api, why, sizeof why);
        if (pe != WR_OK) {
            fprintf(stderr, "waitroomd: %s\n", why[0] ? why : wr_strerror(pe));
            rc = pe == WR_ENOMEM ? EXIT_START : EXIT_CONFIG;
            goto out;
        }
        wr_scheduler_set_push(app.sched, wr_api_push_admitted, app.api);
    }

    app.secret_timer = evtimer_new(app.base, wr_app_secret_timer_cb, &app);
    app.stop_timer = evtimer_new(app.base, stop_timer_cb, &app);
    app.queues_timer = evtimer_new(app.base, wr_app_queues_timer_cb, &app);
    app.sync_timer = evtimer_new(app.base, wr_app_sync_timer_cb, &app);
    if (!app.secret_timer || !app.stop_timer || !app.queues_timer || !app.sync_timer)
        goto out;
    {
        struct timeval tv = {0, 0};
        evtimer_add(app.sync_timer, &tv);
    }
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
    /* handlers in place: what came meanwhile is delivered now (K43) */
    sigprocmask(SIG_UNBLOCK, &handled, NULL);

    if ((e = wait_store_start(&app)) != WR_OK) {
        rc = e == WR_EINVAL ? EXIT_CONFIG : EXIT_START; /* the store refused as set up */
        goto out;
    }
    if ((e = wr_app_log_start(&app)) != WR_OK) {
        rc = e == WR_EINVAL ? EXIT_CONFIG : EXIT_START; /* a --log-key the store does not hold */
        goto out;
    }
    if (app.stopping) { /* SIGTERM/SIGINT during the start: a clean stop */
        rc = 0;
        wr_info("stopped before listening");
        goto out;
    }

    wr_http_opts_t ho = {.base = app.base,
                         .listen = app.cfg.listen,
                         .max_connections = app.cfg.max_connections,
                         .timeout_seconds = app.cfg.timeout_seconds,
                         .handler = wr_api_handle,
                         .body_limit = wr_api_body_limit,
                         .handler_arg = app.api};
    ho.max_conn_requests = app.cfg.max_conn_requests; /* security limits */
    ho.request_timeout_seconds = app.cfg.request_timeout_seconds;
    if (app.cfg.timeout_seconds && app.cfg.request_timeout_seconds > app.cfg.timeout_seconds)
        wr_warn("--request-timeout-seconds %u is above --timeout-seconds %u: a request's head "
                "and body get %u s (the connection's idle limit)",
                (unsigned)app.cfg.request_timeout_seconds, (unsigned)app.cfg.timeout_seconds,
                (unsigned)app.cfg.timeout_seconds);
    ho.reuse_port = app.cfg.reuse_port; /* N processes on one port (one Redis) */
    char bound[300];
    e = wr_http_open(&ho, &app.http, bound, sizeof(bound));
    if (e != WR_OK) {
        fprintf(stderr, "waitroomd: cannot listen on %s: %s%s%s\n", app.cfg.listen,
                e == WR_EINVAL ? "the host resolves to no address" : wr_strerror(e),
                e == WR_EIO ? ": " : "", e == WR_EIO ? strerror(errno) : "");
        rc = listen_exit(e);
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
                    app.cfg.admin_listen,
                    e == WR_EINVAL ? "the host resolves to no address" : wr_strerror(e),
                    e == WR_EIO ? ": " : "", e == WR_EIO ? strerror(errno) : "");
            rc = listen_exit(e);
            goto out;
        }
        printf("admin listening on %s\n", abound);
    }
    wr_api_set_http(app.api, app.http, app.admin_http); /* /metrics: the connection counters */
    if (app.cfg.pid_file[0] && !write_pid_file(&app)) {
        rc = EXIT_CONFIG;
        goto out;
    }
    fflush(stdout);
    const wr_store_backend_t *backend = wr_store_registry_find(app.cfg.store);
    char shown[WR_STORE_URL_SHOWN_MAX]; /* the URL without its password */
    wr_info("waitroomd listening on %s, store %s, identity %s", bound,
            backend && backend->title ? backend->title
                                      : wr_store_url_shown(app.cfg.store, shown, sizeof shown),
            app.cfg.identity == WR_IDENTITY_COOKIE ? "cookie" : app.cfg.identity_header);

    app.ready = true;
    wr_app_notify("READY=1"); /* Type=notify: systemctl reload waits for this */
    if (app.reload_pending) { /* a SIGHUP came during the start (K43) */
        app.reload_pending = false;
        wr_app_reload(&app);
    }
    /* the loop's stalls counted from now: the start's own work is none */
    if (wr_looplag_start(app.looplag, app.base, wr_clock_mono_ms()) != WR_OK)
        goto out;
    event_base_dispatch(app.base);
    rc = 0;
    wr_info("stopped");

out:
    app.stopping = true;
    /* The store first: its pending callbacks reply to open requests while
     * the HTTP server still exists. */
    wr_store_close(app.store);
    wr_logsign_free(app.logsign); /* after the store: its signs in flight are cancelled */
    wr_scheduler_free(app.sched);
    if (app.api)
        wr_api_set_http(app.api, NULL, NULL);
    if (app.http)
        wr_http_free(app.http);
    if (app.admin_http)
        wr_http_free(app.admin_http);
    wr_api_free(app.api);
    wr_webdir_free(app.web);
    wr_looplag_free(app.looplag);
    wr_metrics_free(app.metrics);
    struct event *events[] = {app.sig_term,   app.sig_int,      app.sig_hup,
                              app.sig_usr1,   app.sig_usr2,     app.secret_timer,
                              app.stop_timer, app.queues_timer, app.sync_timer};
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
        if (events[i])
            event_free(events[i]);
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
