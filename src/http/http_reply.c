/*
 * http_reply.c - writing replies: reason phrases, the Date and
 * Content-Length fields, JSON bodies and JSON errors (moved from http.c).
 *
 * Replies: every JSON reply carries Content-Type application/json and
 * Cache-Control no-store. Replying to a request whose client has gone is
 * safe in libevent 2.1.12 (evhttp_send frees a request that lost its
 * connection), which is what lets handlers finish store calls after a
 * disconnect (case K07).
 *
 * Date and Content-Length: evhttp would add both to every HTTP/1.1 reply,
 * formatting each per reply; add_date and add_content_length put them in
 * first (the Date text formatted once a second), so evhttp finds them and
 * adds none of its own.
 *
 * Writing a reply now (send_reply): evhttp 2.1 puts a reply into the
 * connection's bufferevent and enables its write event; the bytes leave
 * only after the next epoll_wait reports the socket writable, and the
 * write callback then disables the event again: two epoll_ctl calls and a
 * loop iteration per reply, on top of the read and the write. send_reply
 * makes the bufferevent's own write event active right away (struct
 * bufferevent is public in event2/bufferevent_struct.h), so libevent runs
 * its usual write callback in this loop iteration: the reply is written
 * now, and the enable and disable of the write event meet in the epoll
 * changelist (EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST) and cancel out before
 * they reach the kernel. Nothing else changes: a partial write leaves the
 * event enabled, and evhttp's write-done callback runs as before. Measured
 * with strace -c on the embedded store: 5 system calls per keep-alive poll
 * before, 4 after (FIONREAD, readv, writev, and the epoll_ctl of evhttp's
 * own read disable/enable around each request; nginx makes 2).
 */
#include "http/http_reply.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/http_struct.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *wr_http_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Payload Too Large";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}

static void common_headers(struct evhttp_request *req, int retry_after_s)
{
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Cache-Control", "no-store");
    if (retry_after_s > 0) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%d", retry_after_s);
        evhttp_add_header(oh, "Retry-After", ra);
    }
}

/* True when output headers oh hold a field named name (ASCII, any case). */
static bool has_field(const struct evkeyvalq *oh, const char *name)
{
    for (const struct evkeyval *kv = oh->tqh_first; kv; kv = kv->next.tqe_next)
        if (evutil_ascii_strcasecmp(kv->key, name) == 0)
            return true;
    return false;
}

/* The Date field evhttp adds to an HTTP/1.1 reply that has none, added
 * first by us, where evhttp would put it (after every field of ours), from
 * a text formatted once a second with evhttp's own evutil_date_rfc1123:
 * evhttp then finds it and skips its gmtime and printf per reply. */
static void add_date(struct evhttp_request *req)
{
    static time_t at = (time_t)-1;
    static char date[64];
    if (req->major != 1 || req->minor < 1)
        return; /* evhttp adds none (HTTP/1.0) */
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    if (has_field(oh, "Date"))
        return;
    time_t now = time(NULL);
    if (now != at) {
        struct tm tm;
        if (!gmtime_r(&now, &tm) || evutil_date_rfc1123(date, sizeof(date), &tm) <= 0)
            return; /* evhttp formats its own */
        at = now;
    }
    evhttp_add_header(oh, "Date", date);
}

/* The Content-Length field evhttp adds after Date to an HTTP/1.1 reply
 * with a body (not HEAD, 1xx, 204 or 304) that has neither Content-Length
 * nor Transfer-Encoding, written without evhttp's printf. HTTP/1.0 replies
 * are left to evhttp (it adds one there only on keep-alive). */
static void add_content_length(struct evhttp_request *req, int status)
{
    if (req->major != 1 || req->minor < 1 || evhttp_request_get_command(req) == EVHTTP_REQ_HEAD ||
        status == 204 || status == 304 || (status >= 100 && status < 200))
        return;
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    if (has_field(oh, "Content-Length") || has_field(oh, "Transfer-Encoding"))
        return;
    size_t v = evbuffer_get_length(evhttp_request_get_output_buffer(req));
    char d[24], text[24];
    int n = 0, i = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0)
        text[i++] = d[--n];
    text[i] = '\0';
    evhttp_add_header(oh, "Content-Length", text);
}

/* evhttp_send_reply, then the write in this loop iteration (see the top). */
static void send_reply(struct evhttp_request *req, int status)
{
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    add_date(req);
    add_content_length(req, status);
    evhttp_send_reply(req, status, wr_http_reason(status), NULL);
    /* evhttp_send_reply never frees a connection it has (only a request
     * without one), so bev is still valid here. */
    if (bev && (bufferevent_get_enabled(bev) & EV_WRITE) &&
        evbuffer_get_length(bufferevent_get_output(bev)) > 0)
        event_active(&bev->ev_write, EV_WRITE, 1);
}

void wr_http_send(struct evhttp_request *req, int status, const void *body, size_t len,
                  bool is_static)
{
    if (evhttp_request_get_command(req) != EVHTTP_REQ_HEAD && len > 0) {
        struct evbuffer *buf = evhttp_request_get_output_buffer(req);
        if (is_static)
            evbuffer_add_reference(buf, body, len, NULL, NULL);
        else
            evbuffer_add(buf, body, len);
    }
    send_reply(req, status);
}

void wr_http_reply_json(struct evhttp_request *req, int status, const char *body, size_t len,
                        int retry_after_s)
{
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_remove_header(oh, "Content-Type");
    evhttp_add_header(oh, "Content-Type", "application/json");
    common_headers(req, retry_after_s);
    wr_http_send(req, status, body, len, false);
}

size_t wr_http_reply_error(struct evhttp_request *req, int status, const char *code,
                           const char *message, const char *field, const char *reason,
                           int retry_after_s)
{
    size_t len;
    json_t *o = json_object();
    char *s = NULL;
    if (o) {
        json_object_set_new(o, "error", json_string(code));
        json_object_set_new(o, "message", json_string(message ? message : ""));
        if (field)
            json_object_set_new(o, "field", json_string(field));
        if (reason)
            json_object_set_new(o, "reason", json_string(reason));
        s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    if (s) {
        len = strlen(s);
        wr_http_reply_json(req, status, s, len, retry_after_s);
        free(s);
    } else {
        static const char fallback[] = "{\"error\":\"INTERNAL\",\"message\":\"out of memory\"}";
        len = sizeof(fallback) - 1;
        wr_http_reply_json(req, 500, fallback, len, 0);
    }
    return len;
}

void wr_http_reply_empty(struct evhttp_request *req, int status)
{
    common_headers(req, 0);
    send_reply(req, status);
}
