/*
 * pushanswer.h - what a push service's answer means (docs/API.md 1.3: "2xx
 * sent; 404 or 410 the subscription is deleted; other 4xx deleted and
 * logged; 429, 5xx or no answer retried with backoff (honouring
 * Retry-After) until the pass expires, never after"; "Push, safely":
 * redirects are not followed, counted failed) and when to ask again.
 *
 * Pure: the sender (http/pushsend.c) passes the status, the header and
 * the clock.
 */
#ifndef WR_PUSHANSWER_H
#define WR_PUSHANSWER_H

#include <stdint.h>

/* The meaning of an answer. */
typedef enum {
    WR_PUSHANSWER_DELIVERED = 0, /* 2xx (RFC 8030: 201 Created) */
    WR_PUSHANSWER_GONE,          /* 404, 410: the subscription is dead */
    WR_PUSHANSWER_REDIRECT,      /* 3xx: failed, never followed */
    WR_PUSHANSWER_REFUSED,       /* another 4xx (400, 401, 403, 413, ...): failed */
    WR_PUSHANSWER_RETRY,         /* 429, 5xx, 1xx or no answer (0): try again */
} wr_pushanswer_t;

/* The meaning of HTTP status (0: no answer at all). */
wr_pushanswer_t wr_pushanswer_of(int status);

#define WR_PUSHANSWER_RETRY_AFTER_MAX_MS 86400000 /* a Retry-After counts for a day at most */

/*
 * A Retry-After value (RFC 9110 10.2.3: delta-seconds, or an IMF-fixdate
 * like "Sun, 06 Nov 1994 08:49:37 GMT") as milliseconds from now_ms
 * (epoch ms): 0 for a date already passed, at most
 * WR_PUSHANSWER_RETRY_AFTER_MAX_MS; -1 when value is NULL or malformed
 * (then the backoff applies).
 */
int64_t wr_pushanswer_retry_after_ms(const char *value, int64_t now_ms);

/* The wait before the try after `retries` earlier retries: first_ms
 * doubled per retry, at most max_ms (first_ms, 2 x first_ms, ...). */
int64_t wr_pushanswer_backoff_ms(unsigned retries, int64_t first_ms, int64_t max_ms);

#endif
