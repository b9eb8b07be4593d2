/*
 * http_reply.h - writing replies to evhttp requests: a body as is, JSON,
 * JSON errors, empty replies, and the reason phrase of a status. Each
 * function taking req sends its reply (evhttp_send_reply). Included by
 * http.h.
 */
#ifndef WR_HTTP_REPLY_H
#define WR_HTTP_REPLY_H

#include <event2/http.h>
#include <stdbool.h>
#include <stddef.h>

/* Sends a reply with status and body (len bytes; copied, or referenced
 * when static is true: the bytes must then outlive the reply). A HEAD
 * request gets the headers only: the body is left out, so a keep-alive
 * connection stays in step. The caller has set the headers. */
void wr_http_send(struct evhttp_request *req, int status, const void *body, size_t len,
                  bool is_static);

/* Sends a JSON reply: status, body (len bytes, copied), with Content-Type
 * application/json and Cache-Control no-store. retry_after_s > 0 adds
 * Retry-After. */
void wr_http_reply_json(struct evhttp_request *req, int status, const char *body, size_t len,
                        int retry_after_s);

/*
 * Sends {"error":code,"message":message} (plus "field" when field is not
 * NULL, "reason" when reason is not NULL), JSON-escaped with jansson.
 * Returns the bytes of the body.
 */
size_t wr_http_reply_error(struct evhttp_request *req, int status, const char *code,
                           const char *message, const char *field, const char *reason,
                           int retry_after_s);

/* Sends a reply with no body (204, 401 for verify, ...) and no-store. */
void wr_http_reply_empty(struct evhttp_request *req, int status);

/* Standard reason phrase for a status code ("OK", "Too Many Requests"). */
const char *wr_http_reason(int status);

#endif
