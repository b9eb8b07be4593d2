/*
 * fuzz_http_conn.c - libFuzzer target: the connection layer (http_conn.c,
 * http_parse.c, llhttp) fed whole byte streams over a socketpair, split at
 * points the input chooses, pipelined.
 *
 * The first input byte picks the handler's mode (answer at once, hold the
 * requests and answer them after each chunk in an order the input picks,
 * or a mix), the next four seed the splits; the rest is the stream,
 * written chunk by chunk (1 to 64 bytes) with the loop run after each, so
 * every parser state meets a chunk boundary. Answers are read and each
 * must start with "HTTP/1.1 " (or "HTTP/1.1 100 Continue"). At the end the
 * client shuts its write side, the held requests are answered (half the
 * time after the client closed: orphans), and a sweep far in the future
 * must close the connection: one left open is a finding
 * (a leak or a hang). ASan and UBSan do the rest.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "http/http_conn.h"

#define HELD_MAX 64

static struct event_base *base;
static wr_http_env_t env;
static wr_http_req_t *held[HELD_MAX];
static int n_held;
static int mode;
static uint32_t rng;

static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static size_t body_limit(const wr_http_req_t *r, void *arg)
{
    (void)arg;
    return strncmp(wr_http_req_path(r, NULL), "/v1/admin", 9) == 0 ? WR_HTTP_MAX_BODY_ADMIN
                                                                   : WR_HTTP_MAX_BODY_USER;
}

static void answer(wr_http_req_t *r)
{
    size_t bl;
    const char *body = wr_http_req_body(r, &bl);
    const char *h = wr_http_req_header(r, "host");
    const char *q = wr_http_req_query(r);
    char out[128];
    int n = snprintf(out, sizeof(out), "{\"n\":%zu,\"b\":%d,\"h\":%zu,\"q\":%zu}", bl,
                     bl ? (unsigned char)body[bl - 1] : -1, h ? strlen(h) : 0, q ? strlen(q) : 0);
    wr_http_req_add_header(r, "Content-Type", "application/json");
    if (next_rand() % 8 == 0)
        wr_http_req_add_header(r, "Connection", "close");
    wr_http_req_respond(r, next_rand() % 4 == 0 ? 204 : 200, out, (size_t)n, false);
}

static void handler(wr_http_req_t *r, void *arg)
{
    (void)arg;
    if (mode == 0 || n_held == HELD_MAX || (mode == 2 && next_rand() % 2 == 0)) {
        answer(r);
        return;
    }
    held[n_held++] = r;
}

static void answer_some(bool all)
{
    while (n_held > 0) {
        int i = (int)(next_rand() % (uint32_t)n_held);
        wr_http_req_t *r = held[i];
        held[i] = held[--n_held];
        answer(r);
        if (!all && next_rand() % 2 == 0)
            break;
    }
}

static void run(void)
{
    for (int i = 0; i < 4; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
}

static char out[1 << 16];

/* Reads what the server wrote; each read must start an answer or carry on
 * one (only the first bytes after a request are checked strictly). */
static void drain(int fd, bool *first)
{
    for (;;) {
        ssize_t n = recv(fd, out, sizeof(out), 0);
        if (n <= 0)
            return;
        if (*first) {
            if (n >= 9 && memcmp(out, "HTTP/1.1 ", 9) != 0)
                abort();
            *first = false;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!base) {
        base = event_base_new();
        env.base = base;
        env.handler = handler;
        env.body_limit = body_limit;
        env.request_timeout_us = 10000000;
        env.io_timeout_us = 30000000;
        env.max_conn_requests = 100;
        wr_http_env_init(&env);
    }
    if (size < 5)
        return 0;
    mode = data[0] % 3;
    rng =
        ((uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 8 | data[4]) | 1;
    data += 5;
    size -= 5;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        abort();
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    int sndbuf = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    if (wr_http_conn_open(&env, sv[0], NULL, 0) != WR_OK)
        abort();
    bool first = true;
    size_t at = 0;
    while (at < size) {
        size_t n = 1 + next_rand() % 64;
        if (n > size - at)
            n = size - at;
        ssize_t w = send(sv[1], data + at, n, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* the server closed, or its buffer is full: the rest is not read */
        at += (size_t)w;
        run();
        answer_some(false);
        run();
        drain(sv[1], &first);
    }
    shutdown(sv[1], SHUT_WR);
    run();
    /* Half the time the client is gone before the held requests are
     * answered: the first answer's write fails, the rest are orphans. */
    bool gone = next_rand() % 2 == 0;
    if (!gone) {
        answer_some(true);
        run();
        drain(sv[1], &first);
    }
    close(sv[1]);
    run();
    if (gone) {
        answer_some(true);
        run();
    }
    /* Every connection ends: the deadlines close what the peer left. */
    for (int i = 0; i < 3 && env.n_conns > 0; i++) {
        wr_http_env_sweep(&env, wr_clock_mono_us() + 100000000LL * (i + 1));
        run();
    }
    if (env.n_conns != 0 || n_held != 0)
        abort();
    return 0;
}
