/*
 * http_reply.h - writing replies to requests: a body as is, JSON, JSON
 * errors, empty replies, and the reason phrase of a status. Each function
 * taking req sends its reply (wr_http_req_respond). Included by http.h.
 */
#ifndef WR_HTTP_REPLY_H
#define WR_HTTP_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "http/http_conn.h"

/* Sends a reply with status and body (len bytes; copied, or referenced
 * when static is true: the bytes must then outlive the reply). A HEAD
 * request gets the headers only (with the body's Content-Length). The
 * caller has set the headers. */
void wr_http_send(wr_http_req_t *req, int status, const void *body, size_t len, bool is_static);

/* Sends a JSON reply: status, body (len bytes, copied), with Content-Type
 * application/json and Cache-Control no-store. retry_after_s > 0 adds
 * Retry-After. */
void wr_http_reply_json(wr_http_req_t *req, int status, const char *body, size_t len,
                        int retry_after_s);

/*
 * Sends {"error":code,"message":message} (plus "field" when field is not
 * NULL, "reason" when reason is not NULL), JSON-escaped with jansson.
 * Returns the bytes of the body.
 */
size_t wr_http_reply_error(wr_http_req_t *req, int status, const char *code, const char *message,
                           const char *field, const char *reason, int retry_after_s);

/* Sends a reply with no body (204, 401 for verify, ...) and no-store. */
void wr_http_reply_empty(wr_http_req_t *req, int status);

#endif
