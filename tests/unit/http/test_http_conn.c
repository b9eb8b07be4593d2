/*
 * test_http_conn.c - the connection layer fed byte streams over a
 * socketpair: keep-alive, pipelining (16 in flight, answers in order,
 * reading stopped beyond), split points, HEAD, HTTP/1.0, chunked bodies
 * and their limit, 100-continue, absolute-form, and every item of the
 * smuggling and malformed set refused with 400 (or 413, 414, 417, 431,
 * 501, 505) as JSON and a closed connection; the 408 deadline; no
 * allocation on a warm keep-alive connection (the free lists).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "http/http_conn.h"
#include "unit_main.h"

/* http_conn_internal.h (which needs llhttp.h, not on this test's path) */
bool wr_http__parse_simd(bool on);

static struct event_base *base;
static wr_http_env_t env;
static int cfd;                 /* the client's end */
static wr_http_req_t *held[64]; /* async: requests to /async wait here */
static int n_held;
static int handled;

static size_t body_limit(const wr_http_req_t *r, void *arg)
{
    (void)arg;
    const char *p = wr_http_req_path(r, NULL);
    return strncmp(p, "/admin", 6) == 0 ? WR_HTTP_MAX_BODY_ADMIN : WR_HTTP_MAX_BODY_USER;
}

/* Answers {"m":METHOD,"p":PATH,"q":QUERY,"b":BODY-LENGTH,"h":X-TEST}. */
static void answer(wr_http_req_t *r)
{
    char out[512];
    size_t bl;
    wr_http_req_body(r, &bl);
    const char *q = wr_http_req_query(r), *h = wr_http_req_header(r, "x-test");
    int n = snprintf(
        out, sizeof(out), "{\"m\":\"%s\",\"p\":\"%s\",\"q\":\"%s\",\"b\":%zu,\"h\":\"%s\"}",
        wr_http_req_method_name(r), wr_http_req_path(r, NULL), q ? q : "", bl, h ? h : "");
    if (n >= (int)sizeof(out))
        n = (int)sizeof(out) - 1; /* a long path: cut */
    wr_http_req_add_header(r, "Content-Type", "application/json");
    if (strcmp(wr_http_req_path(r, NULL), "/async-close") == 0)
        wr_http_req_add_header(r, "Connection", "close");
    if (strcmp(wr_http_req_path(r, NULL), "/empty") == 0) { /* as HEAD /q/{queue}: no body */
        wr_http_req_respond(r, 200, "", 0, false);
        return;
    }
    if (strcmp(wr_http_req_path(r, NULL), "/own-length") == 0)
        wr_http_req_add_header(r, "content-length", "999"); /* ignored: the layer's */
    wr_http_req_respond(r, 200, out, (size_t)n, false);
}

static void handler(wr_http_req_t *r, void *arg)
{
    (void)arg;
    handled++;
    if (strncmp(wr_http_req_path(r, NULL), "/async", 6) == 0 && n_held < 64) {
        held[n_held++] = r;
        return;
    }
    answer(r);
}

static int setup(void **state)
{
    (void)state;
    /* as main.c makes it: epoll with the changelist */
    struct event_config *ec = event_config_new();
    event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    base = event_base_new_with_config(ec);
    event_config_free(ec);
    memset(&env, 0, sizeof(env));
    env.base = base;
    env.handler = handler;
    env.body_limit = body_limit;
    env.request_timeout_us = 2000000;
    env.io_timeout_us = 5000000;
    wr_http_env_init(&env);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    cfd = sv[1];
    assert_int_equal(wr_http_conn_open(&env, sv[0], NULL, 0), WR_OK);
    n_held = handled = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    wr_http_env_clear(&env);
    for (int i = 0; i < n_held; i++)
        wr_http_req_respond(held[i], 200, "", 0, false); /* orphans: freed */
    close(cfd);
    event_base_free(base);
    return 0;
}

static void run(void)
{
    for (int i = 0; i < 8; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
}

static void sendb(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(cfd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EAGAIN) {
            run();
            continue;
        }
        assert_true(w > 0);
        p += w;
        n -= (size_t)w;
        run();
    }
}

static void sends(const char *s)
{
    sendb(s, strlen(s));
}

/* What the server wrote so far; *closed when it shut its side. */
static char outbuf[1 << 20];
static const char *recv_all(bool *closed)
{
    size_t len = 0;
    *closed = false;
    run();
    for (;;) {
        ssize_t n = recv(cfd, outbuf + len, sizeof(outbuf) - 1 - len, 0);
        if (n > 0) {
            len += (size_t)n;
            continue;
        }
        if (n == 0)
            *closed = true;
        break;
    }
    outbuf[len] = '\0';
    return outbuf;
}

/* Sends req and reads the answers to it (recv_all). */
static const char *exchange(const char *req, bool *closed)
{
    sends(req);
    return recv_all(closed);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* o holds n answers 200 to /r0 .. /r(n-1), in that order. */
static void answered_in_order(const char *o, int n)
{
    assert_int_equal(count(o, "HTTP/1.1 200 OK"), n);
    const char *at = o;
    for (int i = 0; i < n; i++) {
        char want[32];
        snprintf(want, sizeof(want), "\"p\":\"/r%d\"", i);
        at = strstr(at, want);
        assert_non_null(at);
    }
}

static void test_keep_alive(void **state)
{
    (void)state;
    bool closed;
    const char *o = exchange("GET /a?x=1 HTTP/1.1\r\nHost: h\r\nX-Test:  v1 \r\n\r\n", &closed);
    assert_false(closed);
    assert_true(strncmp(o, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: ", 55) == 0);
    assert_non_null(
        strstr(o, "\r\nContent-Length: 45\r\n\r\n{\"m\":\"GET\",\"p\":\"/a\",\"q\":\"x=1\""));
    assert_non_null(strstr(o, "\"h\":\"v1\"}"));
    assert_null(strstr(o, "Connection"));
    o = exchange("POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc", &closed);
    assert_false(closed);
    assert_non_null(strstr(o, "{\"m\":\"POST\",\"p\":\"/b\",\"q\":\"\",\"b\":3,"));
    /* a handler's Content-Length is not written: one, the body's */
    o = exchange("GET /own-length HTTP/1.1\r\nHost: h\r\n\r\n", &closed);
    assert_false(closed);
    assert_non_null(strstr(o, "\r\nContent-Length: 49\r\n\r\n{"));
    assert_null(strstr(o, "999"));
    assert_null(strcasestr(strstr(o, "Content-Length") + 1, "content-length"));
}

static void test_pipelining(void **state)
{
    (void)state;
    char req[16 * 64] = "";
    for (int i = 0; i < 16; i++) {
        char one[64];
        snprintf(one, sizeof(one), "GET /r%d HTTP/1.1\r\nHost: h\r\n\r\n", i);
        strcat(req, one);
    }
    sends(req);
    bool closed;
    const char *o = recv_all(&closed);
    answered_in_order(o, 16);
}

/* 20 pipelined requests held by the handler: 16 dispatched, reading stops;
 * answered in reverse, they still leave in order, then the last 4 come. */
static void test_pipeline_limit(void **state)
{
    (void)state;
    char req[20 * 64] = "";
    for (int i = 0; i < 20; i++)
        strcat(req, "GET /async HTTP/1.1\r\nHost: h\r\n\r\n");
    sends(req);
    assert_int_equal(n_held, 16);
    bool closed;
    for (int i = 15; i > 0; i--)
        answer(held[i]);
    assert_int_equal(count(recv_all(&closed), "HTTP/1.1"), 0); /* the first is not answered */
    answer(held[0]);
    run();
    assert_int_equal(count(recv_all(&closed), "HTTP/1.1 200"), 16);
    assert_int_equal(n_held, 20);
    for (int i = 16; i < 20; i++)
        answer(held[i]);
    n_held = 0;
    assert_int_equal(count(recv_all(&closed), "HTTP/1.1 200"), 4);
    assert_false(closed);
}

/* A request split at every byte gives the same answer. */
static void test_split_every_byte(void **state)
{
    (void)state;
    const char *req = "POST /p?q HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n";
    for (size_t i = 0; req[i]; i++)
        sendb(req + i, 1);
    bool closed;
    const char *o = recv_all(&closed);
    assert_non_null(strstr(o, "{\"m\":\"POST\",\"p\":\"/p\",\"q\":\"q\",\"b\":5,\"h\":\"\"}"));
    assert_false(closed);
}

static void test_head_and_http10(void **state)
{
    (void)state;
    bool closed;
    const char *o = exchange("HEAD /h HTTP/1.1\r\nHost: h\r\n\r\n", &closed);
    assert_non_null(strstr(o, "Content-Length: 41\r\n\r\n"));
    assert_true(o[strlen(o) - 1] == '\n'); /* no body */
    o = exchange("GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &closed);
    assert_non_null(strstr(o, "Connection: keep-alive\r\n"));
    assert_false(closed);
    /* a HEAD whose handler gave no body: no Content-Length (it would be
     * 0, not GET's length: RFC 9110 8.6); GET's own says 0 */
    o = exchange("HEAD /empty HTTP/1.1\r\nHost: h\r\n\r\n", &closed);
    assert_true(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0);
    assert_null(strstr(o, "Content-Length"));
    assert_true(o[strlen(o) - 1] == '\n');
    assert_false(closed);
    o = exchange("GET /empty HTTP/1.1\r\nHost: h\r\n\r\n", &closed);
    assert_non_null(strstr(o, "Content-Length: 0\r\n\r\n"));
    o = exchange("GET /c HTTP/1.0\r\n\r\n", &closed);
    assert_true(strncmp(o, "HTTP/1.1 200 OK", 15) == 0);
    assert_non_null(strstr(o, "Connection: close\r\n"));
    assert_true(closed);
}

/* The layer's own error to a HEAD request has no body either, also when
 * the head scan refuses before the request exists (431, 414, a bare LF,
 * an obs-fold), after empty lines too; a GET's has its JSON. */
static void test_head_errors_have_no_body(void **state)
{
    (void)state;
    static char big[40000];
    int n = snprintf(big, sizeof big, "HEAD /h HTTP/1.1\r\nHost: h\r\nX-Big: ");
    memset(big + n, 'a', sizeof big - (size_t)n - 5);
    memcpy(big + sizeof big - 5, "\r\n\r\n", 5);
    static char target[9100];
    n = snprintf(target, sizeof target, "\r\nHEAD /");
    memset(target + n, 't', sizeof target - (size_t)n - 1);
    const char *reqs[] = {big, target, "HEAD /h HTTP/1.1\r\nHost: h\r\nX: a\nb\r\n\r\n",
                          "HEAD /h HTTP/1.1\r\nHost: h\r\n x\r\n\r\n"};
    const int status[] = {431, 414, 400, 400};
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        bool closed;
        const char *o = exchange(reqs[i], &closed);
        char want[16];
        snprintf(want, sizeof want, "HTTP/1.1 %d ", status[i]);
        assert_true(strncmp(o, want, 13) == 0);
        assert_non_null(strstr(o, "Content-Length: "));
        assert_true(strcmp(o + strlen(o) - 4, "\r\n\r\n") == 0); /* no body */
        assert_true(closed);
        teardown(NULL);
        setup(NULL);
    }
    bool closed;
    const char *o = exchange("GET /h HTTP/1.1\r\nHost: h\r\n x\r\n\r\n", &closed);
    assert_true(strncmp(o, "HTTP/1.1 400 ", 13) == 0);
    assert_non_null(strstr(o, "\r\n\r\n{\"error\":\"BAD_REQUEST\""));
}

/* API.md: "CONNECT and an Upgrade request are answered, then the
 * connection is closed" (a fresh user found Upgrade kept open and served
 * the next request). */
static void test_upgrade_answered_then_closed(void **state)
{
    (void)state;
    static const char *const reqs[] = {
        "GET /u HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        "GET /next HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /u HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: h2c\r\n"
        "HTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        bool closed;
        const char *o = exchange(reqs[i], &closed);
        assert_int_equal(count(o, "HTTP/1.1 200 OK"), 1);
        assert_non_null(strstr(o, "\"p\":\"/u\""));
        assert_null(strstr(o, "/next"));
        assert_non_null(strstr(o, "Connection: close\r\n"));
        assert_true(closed);
        teardown(NULL);
        setup(NULL);
    }
    /* an Upgrade header alone (no Connection: upgrade) is informational */
    bool closed;
    const char *o = exchange("GET /u HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n", &closed);
    assert_int_equal(count(o, "HTTP/1.1 200 OK"), 1);
    assert_false(closed);
}

static void test_versions_and_forms(void **state)
{
    (void)state;
    bool closed;
    const char *o = exchange(
        "GET /v HTTP/1.2\r\nHost: h\r\n\r\nGET http://h:80/abs?z=1 HTTP/1.1\r\nHost: h\r\n\r\n"
        "GET https://h HTTP/1.1\r\nHost: h\r\n\r\n",
        &closed);
    assert_int_equal(count(o, "HTTP/1.1 200 OK"), 3);
    assert_non_null(strstr(o, "\"p\":\"/v\""));
    assert_non_null(strstr(o, "\"p\":\"/abs\",\"q\":\"z=1\""));
    assert_non_null(strstr(o, "\"p\":\"/\",\"q\":\"\""));
    assert_false(closed);
}

static void test_expect(void **state)
{
    (void)state;
    bool closed;
    const char *o =
        exchange("POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n",
                 &closed);
    assert_string_equal(o, "HTTP/1.1 100 Continue\r\n\r\n");
    o = exchange("ok", &closed);
    assert_non_null(strstr(o, "\"b\":2"));
    o = exchange(
        "POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n",
        &closed);
    assert_true(strncmp(o, "HTTP/1.1 413 Payload Too Large\r\n", 32) == 0);
    assert_non_null(strstr(o, "{\"error\":\"PAYLOAD_TOO_LARGE\""));
    assert_true(closed);
}

/* One refused request: its status line and error code, and the close. */
static void refused(const char *req, size_t len, const char *status, const char *code)
{
    setup(NULL);
    bool closed;
    sendb(req, len);
    const char *o = recv_all(&closed);
    if (strncmp(o, status, strlen(status)) != 0 || !strstr(o, code) || !closed ||
        !strstr(o, "Connection: close\r\n") || !strstr(o, "Content-Type: application/json")) {
        fprintf(stderr, "request %.*s\nanswer %s (closed %d)\n", (int)len, req, o, closed);
        fail();
    }
    assert_int_equal(handled, 0);
    teardown(NULL);
}

#define REFUSED(req, status, code) refused(req, sizeof(req) - 1, status, code)
#define BAD(req)                   REFUSED(req, "HTTP/1.1 400 Bad Request\r\n", "\"BAD_REQUEST\"")

static void test_smuggling_set(void **state)
{
    (void)state;
    teardown(NULL);
    /* framing */
    BAD("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: "
        "chunked\r\n\r\n0\r\n\r\n");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\nGET / HTTP/1.1\r\n\r\n");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
        "chunked\r\n\r\n0\r\n\r\n");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n");
    BAD("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\nab\r\n0\r\n\r\n");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +3\r\n\r\nabc");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3x\r\n\r\nabc");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775808\r\n\r\n");
    BAD("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n");
    /* field lines */
    BAD("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tb\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost : h\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost\t: h\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: h\r\nX: a\nb\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n");
    BAD("GET / HTTP/1.1\nHost: h\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: h\n\n");
    BAD("GET / HTTP/1.1\r\nHost: h\r\n\rX: y\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n"); /* an empty field name */
    BAD("GET / HTTP/1.1\r\nHost: h\r\n:\r\n\r\n");
    BAD("GET / HTTP/1.1\r\n:Host: a\r\nHost: h\r\n\r\n");
    /* request line */
    BAD("GET  / HTTP/1.1\r\nHost: h\r\n\r\n");
    BAD("GET / HTTP/1.1 \r\nHost: h\r\n\r\n");
    BAD("GET /a b HTTP/1.1\r\nHost: h\r\n\r\n");
    BAD("GET / HTTP/11\r\nHost: h\r\n\r\n");
    BAD("GET / FTP/1.1\r\nHost: h\r\n\r\n");
    BAD("GET /\r\n\r\n");
    BAD("GET x HTTP/1.1\r\nHost: h\r\n\r\n");
    /* Host */
    BAD("GET / HTTP/1.1\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: a b\r\n\r\n");
    BAD("GET / HTTP/1.1\r\nHost: \r\n\r\n");
    /* other statuses */
    REFUSED("GET / HTTP/2.0\r\nHost: h\r\n\r\n", "HTTP/1.1 505 ", "\"HTTP_VERSION_NOT_SUPPORTED\"");
    REFUSED("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/1.1 505 ", "\"HTTP_VERSION_NOT_SUPPORTED\"");
    REFUSED("FOO / HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 501 ", "\"NOT_IMPLEMENTED\"");
    REFUSED("PROPFIND / HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 501 ", "\"NOT_IMPLEMENTED\"");
    /* a method is a token of any length (16 letters was the cap of a known one) */
    REFUSED("ABCDEFGHIJKLMNOPQ / HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 501 ",
            "\"NOT_IMPLEMENTED\"");
    REFUSED("GETGETGETGETGETGETGETGETGETGETGETGETGET / HTTP/1.1\r\nHost: h\r\n\r\n",
            "HTTP/1.1 501 ", "\"NOT_IMPLEMENTED\"");
    REFUSED("POST / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx",
            "HTTP/1.1 417 ", "\"EXPECTATION_FAILED\"");
    REFUSED("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4097\r\n\r\n", "HTTP/1.1 413 ",
            "\"PAYLOAD_TOO_LARGE\"");
    /* a chunk size over the limit: 413 before its bytes come */
    REFUSED("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1001\r\nab",
            "HTTP/1.1 413 ", "\"PAYLOAD_TOO_LARGE\"");
    REFUSED("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            "ffffffffffffffff\r\n",
            "HTTP/1.1 413 ", "\"PAYLOAD_TOO_LARGE\"");
    setup(NULL);
}

static void test_limits(void **state)
{
    (void)state;
    teardown(NULL);
    static char req[80000];
    /* target: 8192 served, 8193 is 414 (also while the line is coming) */
    for (int over = 0; over < 2; over++) {
        setup(NULL);
        int n = sprintf(req, "GET /");
        memset(req + n, 'a', 8191 + over);
        n += 8191 + over;
        n += sprintf(req + n, " HTTP/1.1\r\nHost: h\r\n\r\n");
        sendb(req, over ? 8300 : (size_t)n);
        bool closed;
        const char *o = recv_all(&closed);
        assert_true(strncmp(o, over ? "HTTP/1.1 414 " : "HTTP/1.1 200 ", 13) == 0);
        assert_true(!over || strstr(o, "\"URI_TOO_LONG\""));
        teardown(NULL);
    }
    /* head: 32768 bytes served, 32769 is 431 */
    for (int over = 0; over < 2; over++) {
        setup(NULL);
        int n = sprintf(req, "GET / HTTP/1.1\r\nHost: h\r\nX: ");
        int fill = 32768 - n - 2 + over;
        memset(req + n, 'x', (size_t)fill);
        n += fill;
        n += sprintf(req + n, "\r\n\r\n");
        sendb(req, (size_t)n);
        bool closed;
        const char *o = recv_all(&closed);
        assert_true(strncmp(o, over ? "HTTP/1.1 431 " : "HTTP/1.1 200 ", 13) == 0);
        assert_true(!over || (strstr(o, "\"HEADERS_TOO_LARGE\"") && closed));
        teardown(NULL);
    }
    /* 414 before 431: a long target in a long head */
    setup(NULL);
    int n = sprintf(req, "GET /");
    memset(req + n, 'a', 9000);
    n += 9000;
    n += sprintf(req + n, " HTTP/1.1\r\nHost: h\r\nX: ");
    memset(req + n, 'x', 30000);
    n += 30000;
    n += sprintf(req + n, "\r\n\r\n");
    send(cfd, req, (size_t)n, MSG_NOSIGNAL);
    bool closed;
    assert_true(strncmp(recv_all(&closed), "HTTP/1.1 414 ", 13) == 0);
    teardown(NULL);
    /* chunked over the route's limit: 413 as soon as it passes it */
    setup(NULL);
    sends("POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 4; i++)
        sends("400\r\n"), sendb(req, 1024), sends("\r\n");
    assert_int_equal(strlen(recv_all(&closed)), 0);
    const char *o = exchange("1\r\nx", &closed);
    assert_true(strncmp(o, "HTTP/1.1 413 ", 13) == 0);
    assert_true(closed);
    teardown(NULL);
    /* admin routes take 64 KiB */
    setup(NULL);
    n = sprintf(req, "PUT /admin HTTP/1.1\r\nHost: h\r\nContent-Length: 65536\r\n\r\n");
    memset(req + n, 'z', 65536);
    sendb(req, (size_t)n + 65536);
    assert_non_null(strstr(recv_all(&closed), "\"b\":65536"));
}

static void test_request_timeout(void **state)
{
    (void)state;
    sends("GET / HTTP/1.1\r\nHo");
    bool closed;
    wr_http_env_sweep(&env, wr_clock_mono_us() + 1000000);
    assert_int_equal(strlen(recv_all(&closed)), 0);
    wr_http_env_sweep(&env, wr_clock_mono_us() + 2100000);
    const char *o = recv_all(&closed);
    assert_true(strncmp(o, "HTTP/1.1 408 Request Timeout\r\n", 30) == 0);
    assert_non_null(strstr(o, "{\"error\":\"REQUEST_TIMEOUT\""));
    assert_true(closed);
}

/* Answers after pipelined errors keep their order: good, good, bad. */
static void test_error_after_pipelined(void **state)
{
    (void)state;
    sends("GET /async HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"
          "GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: x\r\n\r\n");
    bool closed;
    assert_int_equal(strlen(recv_all(&closed)), 0);
    answer(held[0]);
    n_held = 0;
    const char *o = recv_all(&closed);
    assert_int_equal(count(o, "HTTP/1.1 200"), 2);
    assert_non_null(strstr(o, "HTTP/1.1 400"));
    assert_true(strstr(o, "/async") < strstr(o, "/b") &&
                strstr(o, "/b") < strstr(o, "HTTP/1.1 400"));
    assert_true(closed);
}

/* A handler that closes after a request while later ones were already
 * dispatched and answered: nothing after the closing answer is written. */
static void test_close_answer_is_the_last(void **state)
{
    (void)state;
    sends("GET /async-close HTTP/1.1\r\nHost: h\r\n\r\nGET /async HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_int_equal(n_held, 2);
    answer(held[1]);
    answer(held[0]);
    n_held = 0;
    bool closed;
    const char *o = recv_all(&closed);
    assert_int_equal(count(o, "HTTP/1.1 200"), 1);
    assert_non_null(strstr(o, "Connection: close\r\n"));
    assert_non_null(strstr(o, "\"p\":\"/async-close\""));
    assert_true(closed);
}

/* The same Content-Length twice is one field; 100 keep-alive requests on a
 * warm connection allocate nothing in the layer. */
static void test_repeated_length_and_no_allocation(void **state)
{
    (void)state;
    bool closed;
    const char *o =
        exchange("POST /d HTTP/1.1\r\nHost: h\r\nX-Empty:\r\nContent-Length: 2\r\nX-Test: t\r\n"
                 "content-length:  2 \r\n\r\nok",
                 &closed);
    assert_non_null(strstr(o, "\"b\":2,\"h\":\"t\""));
    assert_false(closed);
    const char *poll = "GET /v1/queues/q/entries/me HTTP/1.1\r\nHost: h\r\nX-Test: 1\r\n"
                       "Cookie: wr_vid=abc\r\nAccept: */*\r\n\r\n";
    sends(poll);
    recv_all(&closed);
    uint64_t before = wr_http_conn_allocs();
    for (int i = 0; i < 100; i++) {
        sends(poll);
        assert_int_equal(count(recv_all(&closed), "HTTP/1.1 200 OK"), 1);
    }
    assert_int_equal(wr_http_conn_allocs() - before, 0);
}

/* A head of thousands of short fields is served; its request object goes
 * back to the free list keeping no more than the bounds (it kept a field
 * array of 8192 entries, 128 KiB, for every object so used). */
static void test_free_list_keeps_bounded(void **state)
{
    (void)state;
    static char req[WR_HTTP_MAX_HEADERS + 64];
    int n = sprintf(req, "GET /f HTTP/1.1\r\nHost: h\r\n");
    while (n < WR_HTTP_MAX_HEADERS - 8)
        n += sprintf(req + n, "A:\r\n");
    n += sprintf(req + n, "\r\n");
    sendb(req, (size_t)n);
    bool closed;
    assert_int_equal(count(recv_all(&closed), "HTTP/1.1 200 OK"), 1);
    assert_false(closed);
    assert_int_equal(env.n_free_reqs, 1);
    /* two arenas and 64 fields of 16 bytes */
    assert_true(wr_http_env_kept_bytes(&env) <= 2 * WR_HTTP_ARENA_KEEP + WR_HTTP_FIELDS_KEEP * 16);
}

/* Fields lie in the request's copy of its head, NUL-terminated in place:
 * an empty value (llhttp reports it as an empty span at the next line)
 * leaves the next field whole; an empty last value is "". */
static void test_empty_values_in_place(void **state)
{
    (void)state;
    bool closed;
    const char *o =
        exchange("GET /e HTTP/1.1\r\nHost: h\r\nX-Empty: \r\nX-Test: after\r\n\r\n", &closed);
    assert_non_null(strstr(o, "\"p\":\"/e\",\"q\":\"\",\"b\":0,\"h\":\"after\"}"));
    o = exchange("GET /e?x HTTP/1.1\r\nX-Empty:\r\nX-Test:\t v \t\r\nHost: h\r\n\r\n", &closed);
    assert_non_null(strstr(o, "\"q\":\"x\",\"b\":0,\"h\":\"v\"}"));
    o = exchange("GET /e HTTP/1.1\r\nHost: h\r\nX-Test:\r\n\r\n", &closed);
    assert_non_null(strstr(o, "\"h\":\"\"}"));
    assert_false(closed);
}

/* A request and the client's FIN in the socket before the server reads:
 * one edge for both (the read event is edge-triggered), so the FIN is
 * seen by EPOLLRDHUP: answered, then closed at the EOF. */
static void test_request_and_fin_together(void **state)
{
    (void)state;
    const char *req = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
    assert_int_equal(send(cfd, req, strlen(req), 0), (ssize_t)strlen(req));
    assert_int_equal(shutdown(cfd, SHUT_WR), 0);
    bool closed;
    const char *o = recv_all(&closed);
    assert_int_equal(count(o, "HTTP/1.1 200 OK"), 1);
    assert_non_null(strstr(o, "\"p\":\"/a\""));
    assert_true(closed);
    assert_int_equal(env.n_conns, 0);
}

/* The same with more than the buffer (4 KiB) before the FIN: the read that
 * saw EPOLLRDHUP is followed by reads made active by hand, which do not
 * carry it; the FIN is still read (a fresh user found the connection held
 * open until the idle sweep). */
static void test_request_past_the_buffer_and_fin(void **state)
{
    (void)state;
    static char req[8192];
    int n = sprintf(req, "GET /big HTTP/1.1\r\nHost: h\r\nX-Pad: %06000d\r\n\r\nGET /next", 0);
    assert_int_equal(send(cfd, req, (size_t)n, 0), n);
    assert_int_equal(shutdown(cfd, SHUT_WR), 0);
    bool closed;
    const char *o = recv_all(&closed);
    assert_int_equal(count(o, "HTTP/1.1 200 OK"), 1);
    assert_non_null(strstr(o, "\"p\":\"/big\""));
    assert_null(strstr(o, "408"));
    assert_true(closed);
    assert_int_equal(env.n_conns, 0);
}

/* 30 requests of about 240 bytes in the socket at once, more than the
 * input buffer (4 KiB) and than the pipeline (16): a read that fills the
 * buffer reads again, though no new edge announces the rest. All 30 are
 * answered, in order. */
static void test_more_than_the_buffer_at_once(void **state)
{
    (void)state;
    static char req[30 * 256];
    size_t n = 0;
    for (int i = 0; i < 30; i++)
        n +=
            (size_t)sprintf(req + n, "GET /r%d HTTP/1.1\r\nHost: h\r\nX-Pad: %0200d\r\n\r\n", i, 0);
    assert_true(n > 4096 * 1.5);
    assert_int_equal(send(cfd, req, n, 0), (ssize_t)n);
    bool closed;
    const char *o = recv_all(&closed);
    answered_in_order(o, 30);
    assert_false(closed);
}

/* The same with handlers that answer later: 40 requests (9.6 KB) in the
 * socket; 16 are dispatched, reading stops; each time their answers have
 * left, reading goes on from the socket (not only from the buffer). */
static void test_pipeline_limit_past_the_buffer(void **state)
{
    (void)state;
    static char req[40 * 256];
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)sprintf(req + n, "GET /async%d HTTP/1.1\r\nHost: h\r\nX-Pad: %0200d\r\n\r\n",
                             i, 0);
    assert_int_equal(send(cfd, req, n, 0), (ssize_t)n);
    run();
    int answered = 0, got = 0;
    bool closed;
    for (int round = 0; round < 10 && got < 40; round++) {
        assert_true(n_held - answered <= WR_HTTP_MAX_PIPELINE);
        while (answered < n_held)
            answer(held[answered++]);
        const char *o = recv_all(&closed);
        for (const char *at = o; (at = strstr(at, "\"p\":\"/async")) != NULL; at++) {
            assert_int_equal(atoi(at + 11), got); /* in order */
            got++;
        }
    }
    assert_int_equal(got, 40);
    assert_int_equal(n_held, 40);
    n_held = 0;
    assert_false(closed);
}

/* Handlers that answer after the client left: the first answer's write
 * fails and closes the connection, the second request is then an orphan
 * (its connection gone) and its answer frees it (ASan sees a leak or a
 * use after free otherwise). */
static void test_orphan(void **state)
{
    (void)state;
    sends("GET /async HTTP/1.1\r\nHost: h\r\n\r\nGET /async HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_int_equal(n_held, 2);
    close(cfd);
    cfd = -1;
    run();
    assert_int_equal(env.n_conns, 1); /* it waits for its answers */
    answer(held[0]);                  /* the write fails: the connection goes */
    assert_int_equal(env.n_conns, 0);
    answer(held[1]);          /* an orphan */
    held[0] = held[1] = NULL; /* so LSan sees a request nobody freed */
    n_held = 0;
    run();
    assert_int_equal(env.n_free_reqs, 1); /* the first; the orphan was freed */
}

/* The head scan's byte searches go 16 bytes at a time (SSE2) and the rest
 * one by one: a NUL, a bare LF or a byte no target may hold is refused at
 * every offset around those steps, and every length of a clean line and of
 * a clean target is served whole. */
static void test_control_bytes_at_every_offset(void **state)
{
    (void)state;
    teardown(NULL);
    char req[256], line[64];
    for (int k = 0; k < 40; k++) {
        /* in a field value, k bytes after its start */
        memset(line, 'a', 40);
        line[40] = '\0';
        line[k] = '\0';
        int n = snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: ");
        memcpy(req + n, line, 40);
        n += 40;
        n += snprintf(req + n, sizeof req - (size_t)n, "\r\n\r\n");
        refused(req, (size_t)n, "HTTP/1.1 400 ", "NUL in the request head");
        line[k] = '\n';
        n = snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: %s\r\n\r\n", line);
        refused(req, (size_t)n, "HTTP/1.1 400 ", "bare LF in the request head");
        /* in the target, k bytes after its slash */
        memset(line, 'b', 40);
        for (int bad = 0; bad < 3; bad++) {
            line[k] = bad == 0 ? '\x7f' : bad == 1 ? '\x01' : '\t';
            n = snprintf(req, sizeof req, "GET /%s HTTP/1.1\r\nHost: h\r\n\r\n", line);
            refused(req, (size_t)n, "HTTP/1.1 400 ", "\"BAD_REQUEST\"");
            line[k] = 'b';
        }
    }
    setup(NULL);
    for (int len = 0; len < 40; len++) {
        memset(line, 'c', (size_t)len);
        line[len] = '\0';
        snprintf(req, sizeof req, "GET /%s HTTP/1.1\r\nHost: h\r\nX-Test: %s\r\n\r\n", line, line);
        bool closed;
        const char *o = exchange(req, &closed);
        char want[256];
        snprintf(want, sizeof want, "\"p\":\"/%s\",\"q\":\"\",\"b\":0,\"h\":\"%s\"}", line, line);
        assert_false(closed);
        assert_true(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0);
        assert_non_null(strstr(o, want));
    }
}

/* A control byte (TAB aside) or DEL is refused as soon as it arrives, the
 * head not yet complete (no 408 ten seconds later); TAB in a value waits
 * for the rest. A request line over 32 KiB is 431 however it comes (414
 * first for its target), and chunk extensions are bounded. */
static void test_early_refusals(void **state)
{
    (void)state;
    teardown(NULL);
    refused("G\x01", 2, "HTTP/1.1 400 ", "a control character in the request head");
    refused("\x7f", 1, "HTTP/1.1 400 ", "a control character in the request head");
    refused("GET /a\x1b", 7, "HTTP/1.1 400 ", "a control character in the request head");
    REFUSED("GET / HTTP/1.1\r\nHost: h\r\nX-A: \x01", "HTTP/1.1 400 ",
            "a control character in the request head");
    REFUSED("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x7f", "HTTP/1.1 400 ",
            "a control character in the request head");
    static char req[40100];
    /* a 40,000-byte method, the line whole in one send: 431, not 501 */
    memset(req, 'X', 40000);
    int n = 40000 + sprintf(req + 40000, " / HTTP/1.1\r\nHost: h\r\n\r\n");
    refused(req, (size_t)n, "HTTP/1.1 431 ", "\"HEADERS_TOO_LARGE\"");
    /* 32,769 bytes of a line that has no end yet: 431 */
    refused(req, 32769, "HTTP/1.1 431 ", "\"HEADERS_TOO_LARGE\"");
    /* a line of exactly 32,766 bytes and its CRLF is the whole limit: the
     * method decides (501); one byte more is 431 */
    for (int over = 0; over < 2; over++) {
        n = 32766 + over - (int)strlen(" / HTTP/1.1");
        memset(req, 'X', (size_t)n);
        n += sprintf(req + n, " / HTTP/1.1\r\nHost: h\r\n\r\n");
        refused(req, (size_t)n, over ? "HTTP/1.1 431 " : "HTTP/1.1 501 ",
                over ? "\"HEADERS_TOO_LARGE\"" : "\"NOT_IMPLEMENTED\"");
    }
    /* a line over 32 KiB whose target is over 8 KiB: 414 first */
    n = sprintf(req, "GET /");
    memset(req + n, 'a', 33000);
    n += 33000 + sprintf(req + n + 33000, " HTTP/1.1\r\nHost: h\r\n\r\n");
    refused(req, (size_t)n, "HTTP/1.1 414 ", "\"URI_TOO_LONG\"");
    /* chunk extensions: 32 KiB in all, then 400 */
    n = sprintf(req, "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2;");
    memset(req + n, 'e', 33000);
    n += 33000;
    refused(req, (size_t)n, "HTTP/1.1 400 ", "the chunk extensions exceed 32 KiB");
    setup(NULL);
    /* TAB in a value: the head waits for its end, then is served */
    sends("GET /t HTTP/1.1\r\nHost: h\r\nX-Test: a\tb");
    bool closed;
    assert_int_equal(strlen(recv_all(&closed)), 0);
    assert_false(closed);
    const char *o = exchange("\r\n\r\n", &closed);
    assert_true(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0);
    assert_non_null(strstr(o, "\"h\":\"a\tb\""));
    /* small extensions are read and ignored */
    o = exchange("POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "2;a=b\r\nxy\r\n0\r\n\r\n",
                 &closed);
    assert_non_null(strstr(o, "\"b\":2,"));
    assert_false(closed);
}

#define TESTS(X)                                                                                   \
    X(test_keep_alive)                                                                             \
    X(test_pipelining)                                                                             \
    X(test_pipeline_limit)                                                                         \
    X(test_split_every_byte)                                                                       \
    X(test_head_and_http10)                                                                        \
    X(test_head_errors_have_no_body)                                                               \
    X(test_upgrade_answered_then_closed)                                                           \
    X(test_versions_and_forms)                                                                     \
    X(test_expect)                                                                                 \
    X(test_smuggling_set)                                                                          \
    X(test_limits)                                                                                 \
    X(test_request_timeout)                                                                        \
    X(test_error_after_pipelined)                                                                  \
    X(test_repeated_length_and_no_allocation)                                                      \
    X(test_close_answer_is_the_last)                                                               \
    X(test_free_list_keeps_bounded)                                                                \
    X(test_orphan)                                                                                 \
    X(test_empty_values_in_place)                                                                  \
    X(test_request_and_fin_together)                                                               \
    X(test_request_past_the_buffer_and_fin)                                                        \
    X(test_more_than_the_buffer_at_once)                                                           \
    X(test_pipeline_limit_past_the_buffer)                                                         \
    X(test_control_bytes_at_every_offset)                                                          \
    X(test_early_refusals)
/* Every test twice: with llhttp's baseline copy, then with its SSE4.2 copy
 * when it was built and this CPU has SSE4.2 (http_parse.c): the same
 * answers, refusals and offsets from both. */
int main(void)
{
    struct CMUnitTest tests[] = {TESTS(WR_UNIT_TEST)};
    size_t n = sizeof(tests) / sizeof(tests[0]);
    for (size_t i = 0; i < n; i++) {
        tests[i].setup_func = setup;
        tests[i].teardown_func = teardown;
    }
    assert_false(wr_http__parse_simd(false));
    int failed = _cmocka_run_group_tests("llhttp baseline", tests, n, NULL, NULL);
    if (wr_http__parse_simd(true))
        failed += _cmocka_run_group_tests("llhttp SSE4.2", tests, n, NULL, NULL);
    else
        print_message("llhttp SSE4.2: not built or not on this CPU, not run\n");
    return failed;
}
