/*
 * http_reply.c - writing replies: reason phrases, JSON bodies and JSON
 * errors over the connection layer's wr_http_req_respond (which adds Date,
 * Content-Length and Connection, and writes answers in request order).
 *
 * Replies: every JSON reply carries Content-Type application/json and
 * Cache-Control no-store. Replying to a request whose client has gone is
 * safe: the layer frees the request (an orphan), which is what lets
 * handlers finish store calls after a disconnect (case K07).
 */
#include "http/http_reply.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wr_http_reason(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 304:
        return "Not Modified";
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
    case 409:
        return "Conflict";
    case 413:
        return "Payload Too Large";
    case 414:
        return "URI Too Long";
    case 417:
        return "Expectation Failed";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

static void common_headers(wr_http_req_t *req, int retry_after_s)
{
    wr_http_req_add_header(req, "Cache-Control", "no-store");
    if (retry_after_s > 0) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%d", retry_after_s);
        wr_http_req_add_header(req, "Retry-After", ra);
    }
}

void wr_http_send(wr_http_req_t *req, int status, const void *body, size_t len, bool is_static)
{
    wr_http_req_respond(req, status, body, len, is_static);
}

void wr_http_reply_json(wr_http_req_t *req, int status, const char *body, size_t len,
                        int retry_after_s)
{
    static const char fixed[] = "Content-Type: application/json\r\nCache-Control: no-store\r\n";
    wr_http_req_remove_header(req, "Content-Type");
    if (retry_after_s > 0) {
        wr_http_req_add_header(req, "Content-Type", "application/json");
        common_headers(req, retry_after_s);
    } else { /* a poll's reply: its two fixed fields in one copy */
        wr_http_req_add_header_lines(req, fixed, sizeof(fixed) - 1);
    }
    wr_http_send(req, status, body, len, false);
}

size_t wr_http_reply_error(wr_http_req_t *req, int status, const char *code, const char *message,
                           const char *field, const char *reason, int retry_after_s)
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

void wr_http_reply_empty(wr_http_req_t *req, int status)
{
    common_headers(req, 0);
    wr_http_req_respond(req, status, NULL, 0, false);
}
