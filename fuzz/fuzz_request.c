/*
 * fuzz_request.c - libFuzzer target: the whole request path in process.
 *
 * One event base runs the real HTTP server (wr_http: our connection layer with its
 * limits), the real handlers (wr_api: router, JSON bodies, identity,
 * tokens, admin) and the memory store, with two listeners on loopback: a
 * cookie-mode API and a header-mode API (X-User-Id). The first input byte
 * picks the listener; the rest is written to a fresh TCP connection, whose
 * write side is then shut. The loop runs until the server closes the
 * connection (every request answered) or a bound
 * of wall time (beyond every server timeout) is hit, which is a finding (a
 * hang). The queue "q" exists from the start (FAST,
 * created by an admin PUT); the seed corpus carries the admin key.
 * Every RESET_EVERY inputs the whole server is rebuilt so state (queues,
 * users) stays bounded.
 */
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http/api.h"
#include "base/clock.h"
#include "runtime/config.h"
#include "http/http.h"
#include "base/log.h"
#include "base/metrics.h"
#include "runtime/scheduler.h"
#include "store/memory/store_memory.h"

#define RESET_EVERY 2000
#define MAX_WAIT_US 15000000 /* a connection not finished in 15 s is a hang */

typedef struct {
    struct event_base *base;
    wr_store_t *store;
    wr_metrics_t *metrics;
    wr_scheduler_t *sched;
    wr_config_t cfg[2];
    wr_api_t *api[2];
    wr_http_t *http[2];
    uint16_t port[2];
} server_t;

static server_t S;
static unsigned long n_inputs;

static void server_free(void)
{
    wr_store_close(S.store);
    wr_scheduler_free(S.sched);
    for (int i = 0; i < 2; i++) {
        if (S.http[i])
            wr_http_free(S.http[i]);
        wr_api_free(S.api[i]);
        wr_config_free(&S.cfg[i]);
    }
    wr_metrics_free(S.metrics);
    event_base_free(S.base);
    memset(&S, 0, sizeof(S));
}

/* Sends data to listener i and runs the loop until the server closes. */
static int exchange(int i, const uint8_t *data, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(S.port[i])};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    size_t off = 0;
    bool shut = false;
    char buf[65536];
    int64_t t0 = wr_clock_mono_us();
    for (;;) {
        if (wr_clock_mono_us() - t0 > MAX_WAIT_US)
            break;
        if (off < size) {
            ssize_t w = send(fd, data + off, size - off, MSG_NOSIGNAL);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != ENOTCONN)
                off = size; /* the server closed: stop sending */
        }
        if (off >= size && !shut) {
            shutdown(fd, SHUT_WR);
            shut = true;
        }
        event_base_loop(S.base, EVLOOP_NONBLOCK);
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != ENOTCONN)) {
            close(fd);
            return 0;
        }
    }
    fprintf(stderr, "fuzz_request: the server did not finish the connection\n");
    abort();
}

static void server_new(void)
{
    static const char put[] = "PUT /v1/admin/queues/q HTTP/1.1\r\nHost: f\r\n"
                              "Authorization: Bearer fuzz-admin-key\r\nContent-Length: 40\r\n\r\n"
                              "{\"admitPerSecond\":1000,\"tickMs\":10,\"x\":1}";
    static const char put_ok[] = "PUT /v1/admin/queues/q HTTP/1.1\r\nHost: f\r\n"
                                 "Authorization: Bearer fuzz-admin-key\r\nContent-Length: 36\r\n"
                                 "\r\n{\"admitPerSecond\":1000,\"tickMs\":10}";
    S.base = event_base_new();
    wr_store_memory_opts_t mo = {0};
    if (!S.base || wr_store_memory_open(S.base, &mo, &S.store) != WR_OK)
        abort();
    S.metrics = wr_metrics_new();
    wr_scheduler_opts_t so = {S.base, S.store, S.metrics, 1000, 0};
    if (!S.metrics || wr_scheduler_new(&so, &S.sched) != WR_OK)
        abort();
    for (int i = 0; i < 2; i++) {
        wr_config_t *c = &S.cfg[i];
        wr_config_defaults(c);
        snprintf(c->admin_key, sizeof(c->admin_key), "fuzz-admin-key");
        c->identity = i == 0 ? WR_IDENTITY_COOKIE : WR_IDENTITY_HEADER;
        c->join_rate = 0; /* limits would make coverage depend on history */
        c->poll_min_fraction = 0;
        wr_api_opts_t ao = {.base = S.base,
                            .store = S.store,
                            .sched = S.sched,
                            .metrics = S.metrics,
                            .cfg = c,
                            .web = NULL};
        if (wr_api_new(&ao, &S.api[i]) != WR_OK)
            abort();
        static const uint8_t secret[] = "fuzz-token-secret-0123456789abcdef";
        wr_api_set_secret(S.api[i], secret, sizeof(secret) - 1);
        wr_http_opts_t ho = {.base = S.base,
                             .listen = "127.0.0.1:0",
                             .max_connections = 10000,
                             .timeout_seconds = 5,
                             .handler = wr_api_handle,
                             .body_limit = wr_api_body_limit,
                             .handler_arg = S.api[i],
                             .max_conn_requests = 100,
                             .request_timeout_seconds = 5};
        char bound[64];
        if (wr_http_open(&ho, &S.http[i], bound, sizeof(bound)) != WR_OK)
            abort();
        S.port[i] = (uint16_t)atoi(strrchr(bound, ':') + 1);
    }
    exchange(1, (const uint8_t *)put, sizeof(put) - 1); /* 400 INVALID_CONFIG */
    exchange(1, (const uint8_t *)put_ok, sizeof(put_ok) - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!S.base) {
        wr_log_setup(WR_LOG_ERROR, false);
        server_new();
    }
    if (size == 0)
        return 0;
    exchange(data[0] & 1, data + 1, size - 1);
    if (++n_inputs % RESET_EVERY == 0) {
        server_free();
        server_new();
    }
    return 0;
}
