/*
 * store_harness.c - see store_harness.h.
 *
 * State: one event loop (g_base with its keepalive timer), one callback
 * sequence counter, one redis-server child (g_redis_pid, in g_dir, on
 * g_sock). The helpers run the loop with EVLOOP_ONCE until a counter is
 * reached or a monotonic deadline passed; the keepalive timer bounds each
 * pass to 5 ms, so a deadline is never overslept by more.
 *
 * The redis-server child gets PR_SET_PDEATHSIG, so a test program that
 * crashes or is killed never leaves it behind.
 */
#include "store_harness.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "store/redis/store_redis.h"
#include "runtime/store_registry.h"

static struct event_base *g_base;
static struct event *g_keepalive;
static int g_seq;
static char g_dir[256];
static char g_sock[512];
static pid_t g_redis_pid = -1;

/* ------------------------------------------------------------ loop */

static void keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

struct event_base *sh_loop_new(void)
{
    g_base = event_base_new();
    if (!g_base)
        return NULL;
    g_keepalive = event_new(g_base, -1, EV_PERSIST, keepalive_cb, NULL);
    struct timeval ka = {0, 5000};
    if (!g_keepalive || event_add(g_keepalive, &ka) != 0) {
        sh_loop_free();
        return NULL;
    }
    return g_base;
}

struct event_base *sh_base(void)
{
    return g_base;
}

void sh_loop_free(void)
{
    if (g_keepalive)
        event_free(g_keepalive);
    g_keepalive = NULL;
    if (g_base)
        event_base_free(g_base);
    g_base = NULL;
}

bool sh_run_until(const int *count, int target, int timeout_ms)
{
    int64_t deadline = wr_clock_mono_ms() + timeout_ms;
    while (*count < target && wr_clock_mono_ms() < deadline)
        event_base_loop(g_base, EVLOOP_ONCE);
    return *count >= target;
}

void sh_run_for(int ms)
{
    int never = 0;
    sh_run_until(&never, 1, ms);
}

/* ------------------------------------------------------------ results */

void sh_note(sh_res_t *r, wr_err_t err)
{
    if (!r->returned)
        r->sync_call = true;
    r->calls++;
    r->order = ++g_seq;
    r->err = err;
}

/* Keeps a copy of the config an answer borrowed (NULL: none). */
static void keep_config(sh_res_t *r, const wr_queue_config_t *c)
{
    if (c) {
        r->has_cfg = true;
        r->cfg = *c;
    }
}

void sh_entry_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    sh_res_t *r = arg;
    sh_note(r, err);
    if (e) {
        r->has_entry = true;
        r->entry = *e;
        keep_config(r, e->config);
        r->entry.config = NULL; /* borrowed: never kept */
    }
}

void sh_done_cb(wr_err_t err, void *arg)
{
    sh_note(arg, err);
}

void sh_admit_cb(wr_err_t err, const wr_admit_t *a, void *arg)
{
    sh_res_t *r = arg;
    sh_note(r, err);
    if (a) {
        r->has_admit = true;
        r->admit = *a;
        keep_config(r, a->config);
        r->admit.config = NULL;
        r->admit.waited_us = NULL; /* borrowed until the callback returned */
        if (a->n_waited > 0) {
            r->waited_first_us = a->waited_us[0];
            r->waited_last_us = a->waited_us[a->n_waited - 1];
        }
    }
}

void sh_token_cb(wr_err_t err, const wr_token_check_t *t, void *arg)
{
    sh_res_t *r = arg;
    sh_note(r, err);
    if (t) {
        r->has_tok = true;
        r->tok = *t;
    }
}

void sh_info_cb(wr_err_t err, const wr_queue_info_t *i, void *arg)
{
    sh_res_t *r = arg;
    sh_note(r, err);
    if (i) {
        r->has_info = true;
        snprintf(r->name, sizeof r->name, "%s", i->name);
        r->stats = i->stats;
        keep_config(r, i->config);
    }
}

void sh_list_cb(wr_err_t err, const wr_queue_info_t *infos, size_t n, void *arg)
{
    sh_res_t *r = arg;
    sh_note(r, err);
    r->n = n;
    for (size_t i = 0; i < n && i < 16; i++) {
        snprintf(r->names[i], sizeof r->names[i], "%s", infos[i].name);
        r->lstats[i] = infos[i].stats;
    }
}

void sh_secret_cb(wr_err_t err, const uint8_t *sec, size_t len, void *arg)
{
    sh_res_t *r = arg;
    sh_note(r, err);
    if (sec && len <= sizeof r->secret) {
        memcpy(r->secret, sec, len);
        r->secret_len = len;
    }
}

void sh_codes_cb(wr_err_t err, const wr_store_codes_t *c, void *arg)
{
    sh_res_t *r = arg;
    sh_note(r, err);
    if (c) {
        r->has_codes = true;
        r->codes = *c;
    }
}

/* ------------------------------------------------------------ one call, waited for */

void sh_begin(sh_res_t *r)
{
    memset(r, 0, sizeof *r);
}

void sh_wait_one(sh_res_t *r)
{
    assert_true(sh_run_until(&r->calls, 1, SH_WAIT_MS));
    assert_int_equal(r->calls, 1);
}

wr_err_t sh_settle_ms(sh_res_t *r, wr_err_t rc, int wait_ms)
{
    assert_int_equal(rc, WR_OK);
    r->returned = true;
    assert_true(sh_run_until(&r->calls, 1, wait_ms));
    assert_int_equal(r->calls, 1);
    assert_false(r->sync_call);
    return r->err;
}

wr_err_t sh_settle(sh_res_t *r, wr_err_t rc)
{
    return sh_settle_ms(r, rc, SH_WAIT_MS);
}

wr_err_t sh_join(wr_store_t *s, const char *q, const char *u, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_join(s, q, u, sh_entry_cb, r));
}

wr_err_t sh_join_page(wr_store_t *s, const char *q, const char *u, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_join_page(s, q, u, sh_entry_cb, r));
}

wr_err_t sh_status_quiet(wr_store_t *s, const char *q, const char *u, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_status_quiet(s, q, u, sh_entry_cb, r));
}

wr_err_t sh_status(wr_store_t *s, const char *q, const char *u, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_status(s, q, u, sh_entry_cb, r));
}

wr_err_t sh_leave(wr_store_t *s, const char *q, const char *u)
{
    sh_res_t r;
    sh_begin(&r);
    return sh_settle(&r, wr_store_leave(s, q, u, sh_done_cb, &r));
}

wr_err_t sh_bypass(wr_store_t *s, const char *q, uint64_t n)
{
    sh_res_t r;
    sh_begin(&r);
    return sh_settle(&r, wr_store_bypass(s, q, n, sh_done_cb, &r));
}

wr_err_t sh_admit(wr_store_t *s, const char *q, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_admit(s, q, sh_admit_cb, r));
}

wr_err_t sh_consume(wr_store_t *s, const char *q, const char *u, const char *jti, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_consume(s, q, u, jti, sh_token_cb, r));
}

wr_err_t sh_verify(wr_store_t *s, const char *q, const char *u, const char *jti, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_verify(s, q, u, jti, sh_token_cb, r));
}

wr_err_t sh_release(wr_store_t *s, const char *q, const char *u, const char *jti, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_release(s, q, u, jti, sh_token_cb, r));
}

wr_err_t sh_put(wr_store_t *s, const char *q, const wr_queue_config_t *cfg)
{
    sh_res_t r;
    sh_begin(&r);
    return sh_settle(&r, wr_store_config_put(s, q, cfg, sh_done_cb, &r));
}

wr_err_t sh_get(wr_store_t *s, const char *q, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_queue_get(s, q, sh_info_cb, r));
}

void sh_expect_stats_at(const wr_queue_stats_t *st, const sh_stat_t *want, const char *file,
                        int line)
{
    for (; want->name; want++) {
        int64_t got;
        memcpy(&got, (const char *)st + want->off, sizeof got);
        if (got != want->want) {
            print_error("stats.%s is %lld, want %lld\n", want->name, (long long)got,
                        (long long)want->want);
            _fail(file, line);
        }
    }
}

void sh_expect_queue_stats_at(wr_store_t *s, const char *q, const sh_stat_t *want, const char *file,
                              int line)
{
    sh_res_t r;
    wr_err_t err = sh_get(s, q, &r);
    if (err != WR_OK) {
        print_error("queue_get(%s) answered %d, want WR_OK\n", q, (int)err);
        _fail(file, line);
    }
    sh_expect_stats_at(&r.stats, want, file, line);
}

wr_err_t sh_delete(wr_store_t *s, const char *q)
{
    sh_res_t r;
    sh_begin(&r);
    return sh_settle(&r, wr_store_queue_delete(s, q, sh_done_cb, &r));
}

wr_err_t sh_list(wr_store_t *s, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_queue_list(s, sh_list_cb, r));
}

wr_err_t sh_secret(wr_store_t *s, const uint8_t *proposed, size_t n, sh_res_t *r)
{
    sh_begin(r);
    return sh_settle(r, wr_store_secret(s, proposed, n, sh_secret_cb, r));
}

wr_err_t sh_join_group(wr_store_t *s, const char *q, const char *u, const char *group,
                       const char *hash, sh_res_t *r)
{
    wr_store_join_t j = {.page = false, .group = group, .code_hash = hash};
    sh_begin(r);
    return sh_settle(r, wr_store_join_group(s, q, u, &j, sh_entry_cb, r));
}

wr_err_t sh_codes(wr_store_t *s, const char *q, const wr_store_codes_req_t *req, sh_res_t *r)
{
    sh_begin(r);
    wr_err_t rc = wr_store_codes(s, q, req, sh_codes_cb, r);
    if (rc != WR_OK)
        return rc; /* refused at the call: no callback */
    return sh_settle(r, rc);
}

wr_err_t sh_ping(wr_store_t *s)
{
    sh_res_t r;
    sh_begin(&r);
    return sh_settle(&r, wr_store_ping(s, sh_done_cb, &r));
}

/* ------------------------------------------------------------ a private redis-server */

redisContext *sh_redis_ctx(void)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectUnixWithTimeout(g_sock, tv);
    if (c && c->err) {
        redisFree(c);
        return NULL;
    }
    return c;
}

redisReply *sh_redis_vcmd(redisContext *c, const char *fmt, va_list ap)
{
    if (!c)
        return NULL;
    redisReply *r = redisvCommand(c, fmt, ap);
    redisFree(c);
    return r;
}

redisReply *sh_redis_cmd(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = sh_redis_vcmd(sh_redis_ctx(), fmt, ap);
    va_end(ap);
    return r;
}

static bool redis_ping(void)
{
    redisReply *r = sh_redis_cmd("PING");
    bool ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
    if (r)
        freeReplyObject(r);
    return ok;
}

int sh_redis_start(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a crashed suite */
        char log[600];
        snprintf(log, sizeof log, "%s/redis.log", g_dir);
        execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", g_sock,
               "--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--dir", g_dir,
               "--logfile", log, "--enable-debug-command", "yes", (char *)NULL);
        _exit(127);
    }
    g_redis_pid = pid;
    int64_t deadline = wr_clock_mono_ms() + 5000;
    while (wr_clock_mono_ms() < deadline) {
        if (redis_ping())
            return 0;
        usleep(20000);
    }
    return -1;
}

void sh_redis_stop(int sig)
{
    if (g_redis_pid > 0) {
        kill(g_redis_pid, sig);
        waitpid(g_redis_pid, NULL, 0);
        g_redis_pid = -1;
    }
}

int sh_redis_setup(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/wr-store-test-XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(g_sock, sizeof g_sock, "%s/redis.sock", g_dir);
    if (sh_redis_start() != 0) {
        fprintf(stderr, "cannot start redis-server\n");
        sh_redis_stop(SIGKILL);
        return -1;
    }
    return 0;
}

void sh_redis_teardown(void)
{
    sh_redis_stop(SIGTERM);
    char p[600];
    snprintf(p, sizeof p, "%s/redis.log", g_dir);
    unlink(p);
    unlink(g_sock);
    rmdir(g_dir);
}

pid_t sh_redis_pid(void)
{
    return g_redis_pid;
}

const char *sh_redis_sock(void)
{
    return g_sock;
}

const char *sh_redis_dir(void)
{
    return g_dir;
}

wr_store_t *sh_open_redis(uint32_t cmd_timeout_ms)
{
    wr_store_t *s = NULL;
    char url[600];
    snprintf(url, sizeof url, "unix://%s", g_sock);
    wr_store_params_t p = {.command_timeout_ms = cmd_timeout_ms,
                           .connect_timeout_ms = 1000,
                           .reconnect_max_ms = 400,
                           .push_sender = true};
    if (wr_store_open_url(g_base, url, &p, &s) != WR_OK)
        return NULL;
    int64_t deadline = wr_clock_mono_ms() + SH_WAIT_MS;
    /* connected, and the public log's salt master loaded (the app loads it
     * at start: store_redis.h wr_store_redis_log_ready) */
    while (!(wr_store_redis_connected(s) && wr_store_redis_log_ready(s)) &&
           wr_clock_mono_ms() < deadline)
        sh_run_for(5);
    if (!wr_store_redis_connected(s)) {
        wr_store_close(s);
        return NULL;
    }
    return s;
}

void sh_wait_connected(wr_store_t *s, int timeout_ms)
{
    int64_t deadline = wr_clock_mono_ms() + timeout_ms;
    while (!wr_store_redis_connected(s) && wr_clock_mono_ms() < deadline)
        sh_run_for(10);
    assert_true(wr_store_redis_connected(s));
}
