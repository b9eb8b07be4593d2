/*
 * http_conn.c - connections: reading, dispatching in order, answering with
 * one writev, closing; the request objects and their free list.
 *
 * A connection is one struct (from env's free list, with its input buffer)
 * holding two events assigned in place (no malloc): a persistent,
 * edge-triggered read event, added once, and a write event added only
 * while an answer could not be written whole. A read event does one
 * recv into the connection's buffer (ibuf: IBUF_MIN bytes, grown up to
 * IBUF_MAX only for a long head), then http_parse.c reads requests off it
 * one by one; each complete request is queued and handed to the handler
 * at once (pipelining: up to WR_HTTP_MAX_PIPELINE in flight; beyond, the
 * read event is removed until answers have left). A handler answers at
 * once or later (a store call): wr_http_req_respond formats the status
 * line and the last fields into the request's own line buffer, the body
 * is copied into its output arena or referenced, and the answer waits in
 * the queue until those before it are done. Answers made during a read
 * callback leave together in one writev at its end; later ones leave at
 * once. So a keep-alive poll costs one recv and one write; epoll_wait
 * runs only when no connection has bytes ready. A write of at most
 * ONE_SEND_MAX bytes (a poll's answer, about 240 bytes in four pieces) is
 * copied into one buffer and made with send(2), else with sendmsg(2) and
 * the pieces. A partial write adds the write event until the rest is out.
 *
 * Edge-triggered (EPOLLET, as nginx): a level-triggered fd that epoll_wait
 * reported is polled again (tcp_poll) by the next epoll_wait, ready or
 * not; an edge-triggered one only when new bytes arrive. The price is
 * that a recv that filled all the room it was given may have left bytes in
 * the socket that no new edge will announce: rd_more says so, and the
 * read event is then made active by hand (read_again) once there is room.
 * A recv that returns less than its room has drained the socket: bytes
 * arriving after it raise a new edge; but a FIN that came with the last
 * bytes has had its edge, so the event also asks for EPOLLRDHUP
 * (EV_CLOSED), and once it is seen (rdhup, kept: a read made active by
 * hand does not carry it) every read reads again until the EOF. A reset
 * that came with the last bytes is reported as EPOLLERR, which libevent
 * passes on as a plain EV_READ: so a request still incomplete after a
 * short read gets one more recv (probed), which finds the error (or
 * EAGAIN); a poll comes whole and never pays it.
 *
 * The request type's accessors and response fields are in http_req.c.
 *
 * recv, send and sendmsg are made through syscall(2): waitroomd has
 * threads, so libc's wrappers would switch thread cancellation on and off
 * (two atomic operations) around each, and no thread of ours is ever
 * cancelled.
 *
 * Requests come from env->free_reqs and go back there once written, their
 * arenas (input: target, fields, body; output: fields, copied body) kept
 * up to WR_HTTP_ARENA_KEEP bytes, their field arrays up to
 * WR_HTTP_FIELDS_KEEP entries: a warm keep-alive connection allocates
 * nothing per request. A request whose connection closes while a handler
 * holds it becomes an orphan (conn NULL): its answer is dropped and frees it, so a
 * handler may answer after a disconnect.
 *
 * Errors the layer finds (http_parse.c: 400, 408, 413, 414, 417, 431, 501,
 * 505) are answered in order after what is queued, as the JSON error form
 * with Connection: close; then the write side is shut, what the client
 * still sends is read and discarded, and the socket is closed at its EOF
 * or after CLOSE_GRACE_US (so a client still sending reads the answer
 * instead of a reset). A normal close (Connection: close, HTTP/1.0 without
 * keep-alive, max_conn_requests) ends the same way.
 *
 * Deadlines (wr_http_env_sweep, every 100 ms from http.c): a request whose
 * head and body are not in request_timeout_us after its first byte gets
 * 408; a connection idle (nothing queued) or stalled on a write for
 * io_timeout_us is closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"
#include "http/http_conn_internal.h"

#define IBUF_MIN       4096
#define IBUF_MAX       (WR_HTTP_MAX_HEADERS + WR_HTTP_MAX_TARGET + 1024)
#define FREE_REQS_MAX  4096
#define FREE_CONNS_MAX 1024
#define CLOSE_GRACE_US 1000000
#define IOV_BATCH      64
#define ONE_SEND_MAX   1024 /* answers up to this many bytes leave in one send(2) */

uint64_t wr_http__allocs;

/* recv(2) and sendmsg(2) without libc's cancellation wrappers (the design
 * comment above says why); errno is set as by the wrappers. */
static ssize_t sys_recv(int fd, void *buf, size_t len)
{
    return syscall(SYS_recvfrom, fd, buf, len, 0, NULL, NULL);
}

static ssize_t sys_sendmsg(int fd, const struct msghdr *mh, int flags)
{
    return syscall(SYS_sendmsg, fd, mh, flags);
}

static ssize_t sys_send(int fd, const void *buf, size_t len, int flags)
{
    return syscall(SYS_sendto, fd, buf, len, flags, NULL, 0);
}

/* Edge-triggered: the socket may still hold bytes that no edge will
 * announce, so the read callback is run again from the loop. */
static void read_again(wr_http_conn_t *c)
{
    event_active(&c->rev, EV_READ, 1);
}

uint64_t wr_http_conn_allocs(void)
{
    return wr_http__allocs;
}

size_t wr_http_env_kept_bytes(const wr_http_env_t *env)
{
    size_t n = 0;
    const wr_http_req_t *r;
    STAILQ_FOREACH(r, &env->free_reqs, link)
    {
        n += (size_t)r->in.cap + r->out.cap + r->fields_cap * sizeof(*r->fields);
    }
    const wr_http_conn_t *c;
    TAILQ_FOREACH(c, &env->free_conns, link)
    {
        n += c->icap;
    }
    return n;
}

/* ---- arenas ---- */

bool wr_http__arena_add(wr_http_arena_t *a, const void *p, size_t n)
{
    if ((size_t)a->len + n > UINT32_MAX / 2)
        return false;
    if (a->len + n > a->cap) {
        uint32_t cap = a->cap ? a->cap : 512;
        while (cap < a->len + n)
            cap *= 2;
        char *np = realloc(a->p, cap);
        wr_http__allocs++;
        if (!np)
            return false;
        a->p = np;
        a->cap = cap;
    }
    if (p)
        memcpy(a->p + a->len, p, n);
    a->len += (uint32_t)n;
    return true;
}

static void arena_reset(wr_http_arena_t *a)
{
    a->len = 0;
    if (a->cap > WR_HTTP_ARENA_KEEP) {
        free(a->p);
        a->p = NULL;
        a->cap = 0;
    }
}

/* ---- requests ---- */

wr_http_req_t *wr_http__req_get(wr_http_conn_t *c)
{
    wr_http_env_t *env = c->env;
    wr_http_req_t *r = STAILQ_FIRST(&env->free_reqs);
    if (r) {
        STAILQ_REMOVE_HEAD(&env->free_reqs, link);
        env->n_free_reqs--;
    } else {
        r = calloc(1, sizeof(*r));
        wr_http__allocs++;
        if (!r)
            return NULL;
    }
    wr_http_arena_t in = r->in, out = r->out;
    wr_http_field_t *fields = r->fields;
    uint32_t fcap = r->fields_cap;
    memset(r, 0, offsetof(wr_http_req_t, iov));
    r->in = in;
    r->out = out;
    r->fields = fields;
    r->fields_cap = fcap;
    r->n_iov = 0;
    r->done = r->close = false;
    r->conn = c;
    memcpy(r->peer, c->peer, sizeof(r->peer));
    r->peer_port = c->peer_port;
    return r;
}

static void req_free(wr_http_req_t *r)
{
    free(r->in.p);
    free(r->out.p);
    free(r->fields);
    free(r);
}

static void req_put(wr_http_env_t *env, wr_http_req_t *r)
{
    arena_reset(&r->in);
    arena_reset(&r->out);
    if (r->fields_cap > WR_HTTP_FIELDS_KEEP) { /* a head of thousands of short fields */
        free(r->fields);
        r->fields = NULL;
        r->fields_cap = 0;
    }
    if (env && env->n_free_reqs < FREE_REQS_MAX) {
        STAILQ_INSERT_HEAD(&env->free_reqs, r, link);
        env->n_free_reqs++;
        return;
    }
    req_free(r);
}

/* ---- connections: closing ---- */

static void conn_flush(wr_http_conn_t *c);

static void conn_free(wr_http_conn_t *c)
{
    wr_http_env_t *env = c->env;
    event_del(&c->rev);
    event_del(&c->wev);
    close(c->fd);
    /* Answered requests go back; those still with a handler are orphans. */
    for (wr_http_req_t *r; (r = STAILQ_FIRST(&c->q)) != NULL;) {
        STAILQ_REMOVE_HEAD(&c->q, link);
        if (r->done)
            req_put(env, r);
        else
            r->conn = NULL;
    }
    if (c->cur && !c->msg_done)
        req_put(env, c->cur); /* being parsed: not queued */
    TAILQ_REMOVE(&env->conns, c, link);
    env->n_conns--;
    if (env->n_free_conns < FREE_CONNS_MAX && c->icap <= IBUF_MIN) {
        TAILQ_INSERT_HEAD(&env->free_conns, c, link);
        env->n_free_conns++;
    } else {
        free(c->ibuf);
        free(c);
    }
    if (env->conn_gone)
        env->conn_gone(env->owner);
}

/* After the last answer: shut the write side, discard input until EOF or
 * the grace. */
static void conn_shut(wr_http_conn_t *c, int64_t now)
{
    if (c->shut)
        return;
    c->shut = true;
    shutdown(c->fd, SHUT_WR);
    c->close_at_us = now + CLOSE_GRACE_US;
    c->ilen = c->ipos = 0;
    if (c->eof) {
        conn_free(c);
        return;
    }
    if (c->read_off) {
        event_add(&c->rev, NULL);
        c->read_off = false;
    }
    read_again(c); /* discard what waits until EOF: no edge may come for it */
}

/* ---- answers ---- */

static void fmt_uint(char **p, size_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0)
        *(*p)++ = d[--n];
}

static void put(char **p, const char *s, size_t n)
{
    memcpy(*p, s, n);
    *p += n;
}

/* "Date: <IMF-fixdate>\r\n", formatted once a second. */
static const char *date_line(size_t *len)
{
    static time_t at = (time_t)-1;
    static char line[64];
    static size_t n;
    time_t now = time(NULL);
    if (now != at) {
        struct tm tm;
        gmtime_r(&now, &tm);
        n = strftime(line, sizeof(line), "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
        at = now;
    }
    *len = n;
    return line;
}

void wr_http_req_respond(wr_http_req_t *r, int status, const void *body, size_t len, bool is_static)
{
    wr_http_conn_t *c = r->conn;
    if (!c) {
        req_put(NULL, r); /* an orphan: nobody to answer */
        return;
    }
    bool has_body = !(status == 204 || status == 304 || (status >= 100 && status < 200));
    bool send_body = has_body && r->method != WR_HTTP_M_HEAD && len > 0;
    if (send_body && !is_static) {
        uint32_t at = r->out.len;
        if (wr_http__arena_add(&r->out, body, len)) {
            body = r->out.p + at;
        } else {
            send_body = false;
            r->close = true; /* out of memory: the length would lie */
        }
    }
    /* iov: the status line, the handler's fields (at the start of out),
     * ours (Date, Content-Length, Connection, the empty line); the body
     * goes after them (body_ref). */
    char *p = r->line;
    if (status == 200) { /* a poll's */
        put(&p, "HTTP/1.1 200 OK\r\n", 17);
    } else {
        const char *reason = wr_http_reason(status);
        size_t rl = strlen(reason);
        put(&p, "HTTP/1.1 ", 9);
        fmt_uint(&p, (size_t)(status % 1000));
        *p++ = ' ';
        put(&p, reason, rl < 64 ? rl : 64);
        put(&p, "\r\n", 2);
    }
    char *ours = p;
    size_t dl;
    const char *date = date_line(&dl);
    put(&p, date, dl);
    /* never a handler's (wr_http_req_add_header); none on a HEAD answer
     * whose handler gave no body (HEAD /q/{queue}): RFC 9110 8.6 allows a
     * Content-Length there only if it equals GET's */
    if (has_body && !(r->method == WR_HTTP_M_HEAD && len == 0)) {
        put(&p, "Content-Length: ", 16);
        fmt_uint(&p, len);
        put(&p, "\r\n", 2);
    }
    if (r->close)
        put(&p, "Connection: close\r\n", 19);
    else if (r->minor == 0)
        put(&p, "Connection: keep-alive\r\n", 24);
    put(&p, "\r\n", 2);
    r->n_iov = 0;
    r->iov[r->n_iov++] = (struct iovec){r->line, (size_t)(ours - r->line)};
    if (r->hdrs_len)
        r->iov[r->n_iov++] = (struct iovec){r->out.p, r->hdrs_len};
    r->iov[r->n_iov++] = (struct iovec){ours, (size_t)(p - ours)};
    r->body_ref = send_body ? body : NULL;
    r->body_ref_len = send_body ? len : 0;
    r->done = true;
    if (r->close)
        c->closing = true;
    if (!c->in_read)
        conn_flush(c);
}

/* The JSON error form of a status the layer answers itself. */
static void respond_error(wr_http_req_t *r, int status, const char *code, const char *msg)
{
    char body[256], text[160];
    size_t t = 0;
    /* The message is ours or llhttp's reason: kept a plain JSON string. */
    for (; msg[t] && t < sizeof(text) - 1; t++)
        text[t] = msg[t] == '"' || msg[t] == '\\' || (unsigned char)msg[t] < 0x20 ? '\'' : msg[t];
    text[t] = '\0';
    int n = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"message\":\"%s\"}", code, text);
    if (n < 0 || (size_t)n >= sizeof(body))
        n = 0;
    r->close = true;
    r->hdrs_len = r->out.len = 0;
    wr_http_req_add_header(r, "Content-Type", "application/json");
    wr_http_req_add_header(r, "Cache-Control", "no-store");
    wr_http_req_respond(r, status, body, (size_t)n, false);
}

/* Writes the answers that are done at the head of the queue (one writev). */
static void conn_flush(wr_http_conn_t *c)
{
    wr_http_env_t *env = c->env;
    while (!STAILQ_EMPTY(&c->q) && STAILQ_FIRST(&c->q)->done) {
        struct iovec iov[IOV_BATCH];
        int n = 0;
        uint32_t skip = c->wr_off;
        /* up to the first answer that closes: nothing after it leaves */
        for (wr_http_req_t *r = STAILQ_FIRST(&c->q); r && r->done && n + 4 <= IOV_BATCH;
             r = r->close ? NULL : STAILQ_NEXT(r, link)) {
            for (int i = 0; i < r->n_iov + 1; i++) {
                struct iovec v =
                    i < r->n_iov ? r->iov[i] : (struct iovec){(void *)r->body_ref, r->body_ref_len};
                if (v.iov_len == 0)
                    continue;
                if (skip >= v.iov_len) {
                    skip -= (uint32_t)v.iov_len;
                    continue;
                }
                iov[n].iov_base = (char *)v.iov_base + skip;
                iov[n].iov_len = v.iov_len - skip;
                skip = 0;
                n++;
            }
        }
        /* A short answer (a poll's is about 240 bytes in four pieces) is
         * copied into one buffer and sent with send(2): the kernel then
         * takes one user buffer instead of copying in a msghdr and an
         * iovec array and walking the pieces. */
        size_t bytes = 0;
        for (int i = 0; i < n && bytes <= ONE_SEND_MAX; i++)
            bytes += iov[i].iov_len;
        ssize_t w;
        if (n > 1 && bytes <= ONE_SEND_MAX) {
            char one[ONE_SEND_MAX];
            size_t at = 0;
            for (int i = 0; i < n; i++) {
                memcpy(one + at, iov[i].iov_base, iov[i].iov_len);
                at += iov[i].iov_len;
            }
            w = sys_send(c->fd, one, at, MSG_NOSIGNAL); /* without SIGPIPE */
        } else {
            struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
            w = sys_sendmsg(c->fd, &mh, MSG_NOSIGNAL); /* writev without SIGPIPE */
        }
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                break;
            conn_free(c); /* the peer is gone */
            return;
        }
        size_t left = (size_t)w + c->wr_off;
        c->wr_off = 0;
        bool closing = false;
        for (wr_http_req_t *r; (r = STAILQ_FIRST(&c->q)) != NULL && r->done;) {
            size_t total = r->body_ref_len;
            for (int i = 0; i < r->n_iov; i++)
                total += r->iov[i].iov_len;
            if (left < total) {
                c->wr_off = (uint32_t)left;
                break;
            }
            left -= total;
            STAILQ_REMOVE_HEAD(&c->q, link);
            c->nq--;
            closing = r->close;
            req_put(env, r);
            if (closing)
                break;
        }
        if (closing) {
            conn_shut(c, c->last_us);
            return;
        }
        if (c->wr_off > 0)
            break;
    }
    bool pending = !STAILQ_EMPTY(&c->q) && STAILQ_FIRST(&c->q)->done;
    if (pending && !c->wev_on) {
        event_add(&c->wev, NULL);
        c->wev_on = true;
    } else if (!pending && c->wev_on) {
        event_del(&c->wev);
        c->wev_on = false;
    }
    if (STAILQ_EMPTY(&c->q) && c->eof && !c->parse_blocked) {
        conn_free(c);
        return;
    }
    if ((c->read_off || c->parse_blocked) && c->nq < WR_HTTP_MAX_PIPELINE && !c->closing) {
        /* The pipeline has room again: read on, and parse what is buffered. */
        if (c->read_off)
            event_add(&c->rev, NULL);
        c->read_off = false;
        /* EV_READ reads what the socket may hold too; EV_TIMEOUT parses only */
        event_active(&c->rev, c->rd_more ? EV_READ : EV_TIMEOUT, 1);
    }
}

/* ---- reading ---- */

/* Appends r to the connection's queue of requests in order. */
static void enqueue(wr_http_conn_t *c, wr_http_req_t *r)
{
    STAILQ_INSERT_TAIL(&c->q, r, link);
    c->nq++;
}

/* Answers the layer's own error after what is queued and stops reading
 * requests. */
/* True when the unparsed bytes start a HEAD request (empty lines before
 * it skipped): the head scan refuses before the request exists. */
static bool head_request_at(const wr_http_conn_t *c)
{
    const char *p = c->ibuf + c->ipos, *e = c->ibuf + c->ilen;
    while (p < e && (*p == '\r' || *p == '\n'))
        p++;
    return e - p >= 5 && memcmp(p, "HEAD ", 5) == 0;
}

static void conn_error(wr_http_conn_t *c)
{
    wr_http_env_t *env = c->env;
    bool fresh = !(c->cur && !c->msg_done);
    wr_http_req_t *r = fresh ? wr_http__req_get(c) : c->cur;
    c->cur = NULL;
    c->msg_done = false;
    if (!r) { /* no memory to answer: close as at EOF (our callers go on with c) */
        c->closing = c->eof = true;
        return;
    }
    if (fresh && head_request_at(c))
        r->method = WR_HTTP_M_HEAD; /* its error has no body either (RFC 9110 9.3.2) */
    switch (c->err_status) {
    case 408:
        env->counters.timed_out++;
        break;
    case 413:
        env->counters.body_too_large++;
        break;
    case 431:
        env->counters.headers_too_large++;
        break;
    default:
        env->counters.bad_requests++;
    }
    enqueue(c, r);
    c->closing = true;
    c->start_us = 0;
    respond_error(r, c->err_status, c->err_code, c->err_msg);
}

/* Reads requests off the buffer and dispatches them, while the pipeline
 * has room. */
static void conn_parse(wr_http_conn_t *c)
{
    while (!c->closing && c->nq < WR_HTTP_MAX_PIPELINE && c->ipos < c->ilen) {
        if (c->start_us == 0)
            c->start_us = c->last_us;
        c->err_status = 0;
        int r = wr_http__parse(c);
        if (r < 0) {
            conn_error(c);
            return;
        }
        if (r == 0)
            break;
        wr_http_req_t *req = c->cur;
        c->cur = NULL;
        c->msg_done = false;
        c->start_us = 0;
        c->requests++;
        if (c->env->max_conn_requests && c->requests >= c->env->max_conn_requests && !req->close) {
            req->close = true; /* the last one: answered with Connection: close */
            c->env->counters.conn_limit_closes++;
        }
        enqueue(c, req);
        if (req->close)
            c->closing = true; /* nothing after it is read */
        c->env->handler(req, c->env->handler_arg);
    }
    c->parse_blocked = !c->closing && c->nq >= WR_HTTP_MAX_PIPELINE && c->ipos < c->ilen;
    /* Keep the unparsed bytes at the start of the buffer. */
    if (c->ipos == c->ilen) {
        c->ipos = c->ilen = 0;
    } else if (c->ipos > 0 && (c->state == WR_CONN_HEAD || c->ilen == c->icap)) {
        memmove(c->ibuf, c->ibuf + c->ipos, c->ilen - c->ipos);
        c->ilen -= c->ipos;
        c->ipos = 0;
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    wr_http_conn_t *c = arg;
    if (what & EV_CLOSED)
        c->rdhup = true; /* kept: a read made active by hand does not carry it again */
    if (what & (EV_READ | EV_CLOSED)) {
        if (c->ilen == c->icap && c->icap < IBUF_MAX && c->state == WR_CONN_HEAD) {
            uint32_t cap = c->icap * 2 > IBUF_MAX ? IBUF_MAX : c->icap * 2;
            char *nb = realloc(c->ibuf, cap);
            wr_http__allocs++;
            if (nb) {
                c->ibuf = nb;
                c->icap = cap;
            }
        }
        if (c->ilen == c->icap && !c->shut) {
            c->rd_more = true; /* not read: the socket may hold more */
            if (!c->parse_blocked) {
                event_del(&c->rev); /* full: wait for answers to leave */
                c->read_off = true;
                return;
            }
        } else if (!c->eof) {
            size_t room = c->icap - c->ilen;
            ssize_t n = sys_recv(fd, c->ibuf + c->ilen, room);
            c->rd_more = false;
            if (n == 0) {
                if (c->shut) {
                    conn_free(c);
                    return;
                }
                c->eof = true; /* answer what came, then close */
                c->read_off = false;
                event_del(&c->rev);
            } else if (n < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    conn_free(c);
                    return;
                }
                c->rd_more = errno == EINTR; /* EAGAIN: drained; parse what is buffered */
                c->probed = !c->rd_more;
            } else {
                c->last_us = wr_clock_mono_us();
                c->probed = false;
                /* A full read may have left bytes; a FIN that came with the
                 * bytes raises no edge of its own (EV_CLOSED: EPOLLRDHUP). */
                c->rd_more = (size_t)n == room || c->rdhup;
                if (c->shut) {
                    c->ilen = 0; /* discarded */
                    if (c->rd_more)
                        read_again(c);
                    return;
                }
                c->ilen += (uint32_t)n;
            }
        }
    }
    c->in_read = true;
    conn_parse(c);
    c->in_read = false;
    if (c->nq >= WR_HTTP_MAX_PIPELINE && !c->read_off && !c->eof) {
        event_del(&c->rev);
        c->read_off = true;
    } else if (c->rd_more && !c->read_off && !c->eof) {
        read_again(c); /* after the others ready now: one recv each per turn */
    } else if (c->start_us != 0 && !c->probed && !c->read_off && !c->eof && !c->closing) {
        /* A request is still incomplete after a short read: one more recv
         * (EAGAIN, more bytes, or the error). A reset that came with the
         * bytes raises no edge of its own, and libevent reports
         * EPOLLERR as a plain EV_READ (no EV_CLOSED): without this the
         * connection would keep its slot until the request deadline.
         * A poll comes whole, so it never pays this recv. */
        c->probed = true;
        read_again(c);
    }
    conn_flush(c);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_http_conn_t *c = arg;
    c->last_us = wr_clock_mono_us(); /* a slow reader making progress is not stalled */
    conn_flush(c);
}

wr_err_t wr_http_conn_open(wr_http_env_t *env, int fd, const struct sockaddr *sa, socklen_t salen)
{
    wr_http_conn_t *c = TAILQ_FIRST(&env->free_conns);
    if (c) {
        TAILQ_REMOVE(&env->free_conns, c, link);
        env->n_free_conns--;
        char *ibuf = c->ibuf;
        uint32_t icap = c->icap;
        memset(c, 0, sizeof(*c));
        c->ibuf = ibuf;
        c->icap = icap;
    } else {
        c = calloc(1, sizeof(*c));
        wr_http__allocs += 2;
        if (c) {
            c->ibuf = malloc(IBUF_MIN);
            c->icap = IBUF_MIN;
        }
        if (!c || !c->ibuf) {
            free(c);
            close(fd);
            return WR_ENOMEM;
        }
    }
    c->env = env;
    c->fd = fd;
    STAILQ_INIT(&c->q);
    if (sa && sa->sa_family == AF_INET && salen >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s4->sin_addr, c->peer, sizeof(c->peer));
        c->peer_port = ntohs(s4->sin_port);
    } else if (sa && sa->sa_family == AF_INET6 && salen >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, c->peer, sizeof(c->peer));
        c->peer_port = ntohs(s6->sin6_port);
    }
    wr_http__parse_init(c);
    event_assign(&c->rev, env->base, fd, EV_READ | EV_CLOSED | EV_PERSIST | EV_ET, on_read, c);
    event_assign(&c->wev, env->base, fd, EV_WRITE | EV_PERSIST, on_write, c);
    c->last_us = wr_clock_mono_us();
    TAILQ_INSERT_HEAD(&env->conns, c, link);
    env->n_conns++;
    env->counters.accepted++;
    event_add(&c->rev, NULL);
    return WR_OK;
}

void wr_http_env_init(wr_http_env_t *env)
{
    TAILQ_INIT(&env->conns);
    env->n_conns = 0;
    STAILQ_INIT(&env->free_reqs);
    env->n_free_reqs = 0;
    TAILQ_INIT(&env->free_conns);
    env->n_free_conns = 0;
    memset(&env->counters, 0, sizeof(env->counters));
}

void wr_http_env_sweep(wr_http_env_t *env, int64_t now)
{
    for (wr_http_conn_t *c = TAILQ_FIRST(&env->conns), *nx; c; c = nx) {
        nx = TAILQ_NEXT(c, link);
        if (c->shut) {
            if (now >= c->close_at_us)
                conn_free(c);
        } else if (c->start_us && !c->closing && now - c->start_us > env->request_timeout_us) {
            c->err_status = 408;
            c->err_code = "REQUEST_TIMEOUT";
            c->err_msg = "the request did not arrive in time";
            c->in_read = true;
            conn_error(c);
            c->in_read = false;
            conn_flush(c);
        } else if (now - c->last_us > env->io_timeout_us &&
                   (STAILQ_EMPTY(&c->q) || (STAILQ_FIRST(&c->q)->done && c->wev_on))) {
            conn_free(c); /* idle keep-alive, or a reader that stopped reading */
        }
    }
}

void wr_http_env_clear(wr_http_env_t *env)
{
    void (*gone)(void *) = env->conn_gone;
    env->conn_gone = NULL;
    while (!TAILQ_EMPTY(&env->conns))
        conn_free(TAILQ_FIRST(&env->conns));
    env->conn_gone = gone;
    for (wr_http_req_t *r; (r = STAILQ_FIRST(&env->free_reqs)) != NULL;) {
        STAILQ_REMOVE_HEAD(&env->free_reqs, link);
        req_free(r);
    }
    env->n_free_reqs = 0;
    for (wr_http_conn_t *c; (c = TAILQ_FIRST(&env->free_conns)) != NULL;) {
        TAILQ_REMOVE(&env->free_conns, c, link);
        free(c->ibuf);
        free(c);
    }
    env->n_free_conns = 0;
}
