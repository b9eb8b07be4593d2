/*
 * pushsend.h - the Web Push sender (docs/API.md 1.3, "Your turn, off the
 * page: Web Push"; "Push, safely"): one RFC 8030 POST per message to a
 * subscription's endpoint, encrypted (core/pushcrypt), signed (core/vapid),
 * sent only to a checked address (core/pushaddr), retried with backoff
 * until its deadline and answered to the caller exactly once.
 *
 * A message's life:
 *   queued  -> the FIFO behind at most max_in_flight tries at once;
 *   try     -> the URL checks (scheme, port, an IP literal's address);
 *              the host resolved once (evdns, never blocking the loop);
 *              every resolved address checked - one refused address
 *              refuses the message; the connection to a checked address
 *              itself (a numeric host: no second lookup; IPv4 ones first,
 *              a retry takes the next); TLS
 *              verified against the system CAs with SNI and the host name
 *              checked; the POST; at most try_timeout_ms for all of it;
 *   answer  -> 2xx delivered; 404/410 gone; 3xx (never followed) and
 *              other 4xx failed; 429, 5xx, no answer, a resolver or
 *              connection failure: tried again after Retry-After (seconds
 *              or an HTTP date) or the backoff (backoff_first_ms doubling
 *              up to backoff_max_ms), unless that is at or past the
 *              deadline: expired. No try starts at or past the deadline.
 *
 * Contract (libuv's): wr_pushsend_push either returns an error and never
 * calls cb, or returns WR_OK and calls cb exactly once, always from the
 * loop (never inside wr_pushsend_push), or from wr_pushsend_free with
 * WR_PUSHSEND_CANCELED. Metrics are the caller's: count
 * waitroom_push_total{queue,outcome} from the result (`retried` by its
 * retries). Endpoints are capabilities: never logged (only the push
 * service's origin is, at debug level).
 */
#ifndef WR_PUSHSEND_H
#define WR_PUSHSEND_H

#include <event2/dns.h>
#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"
#include "core/pushaddr.h"
#include "core/pushsub.h"

#define WR_PUSHSEND_IN_FLIGHT   16     /* default max_in_flight */
#define WR_PUSHSEND_QUEUED_MAX  100000 /* default max_queued */
#define WR_PUSHSEND_TRY_MS      10000  /* default try_timeout_ms: "each try times out after 10 s" */
#define WR_PUSHSEND_BACKOFF_MS  1000   /* default backoff_first_ms */
#define WR_PUSHSEND_BACKOFF_MAX 60000  /* default backoff_max_ms */
#define WR_PUSHSEND_ANSWER_MAX  4096   /* bytes of a push service's answer body read at most */

/* The sender's settings; zero fields take the defaults above. */
typedef struct wr_pushsend_config {
    struct event_base *base;          /* the loop (required) */
    const uint8_t *vapid_key;         /* the P-256 private key, 32 bytes (copied; required) */
    const char *subject;              /* --push-subject (copied; wr_vapid_subject_ok) */
    const wr_pushaddr_allow_t *allow; /* --push-allow-host (copied; NULL: none) */
    size_t max_in_flight;             /* tries at once */
    size_t max_queued;                /* messages not answered yet (queued, trying or
                                         waiting out a backoff), at most */
    int64_t try_timeout_ms;           /* resolve + connect + TLS + answer, per try */
    int64_t backoff_first_ms, backoff_max_ms;
    struct evdns_base *dns; /* borrowed resolver (tests: a hosts file); NULL:
                               the sender makes one from /etc/resolv.conf */
    const char *ca_file;    /* PEM CA bundle instead of the system's (tests);
                               NULL: OpenSSL's default paths (SSL_CERT_FILE) */
} wr_pushsend_config_t;

typedef struct wr_pushsend wr_pushsend_t;

/* How a message ended. */
typedef enum {
    WR_PUSHSEND_DELIVERED = 0, /* a 2xx answer */
    WR_PUSHSEND_GONE,          /* 404 or 410: the subscription is dead (delete it) */
    WR_PUSHSEND_FAILED,        /* refused here (scheme, port, address) or a 3xx / other 4xx
                                  (delete the subscription, log it) */
    WR_PUSHSEND_EXPIRED,       /* still not delivered when the deadline came */
    WR_PUSHSEND_CANCELED,      /* the sender was freed first */
} wr_pushsend_outcome_t;

/* "delivered", "gone", "failed", "expired", "canceled". */
const char *wr_pushsend_outcome_name(wr_pushsend_outcome_t o);

/* The result handed to the callback (borrowed for the call). */
typedef struct wr_pushsend_result {
    wr_pushsend_outcome_t outcome;
    int status;       /* the last answer's HTTP status; 0 when none */
    unsigned tries;   /* connections attempted (0: refused before any) */
    unsigned retries; /* tries scheduled again after a 429 / 5xx / no answer */
    const char *why;  /* static detail: "ok", "status", "redirect", "scheme", "port",
                         "address", "resolve", "connect", "timeout", "deadline", "shutdown" */
} wr_pushsend_result_t;

typedef void (*wr_pushsend_cb)(const wr_pushsend_result_t *r, void *arg);

/* One message. */
typedef struct wr_pushsend_msg {
    const wr_pushsub_t *sub; /* where and for whom (copied) */
    const char *payload;     /* the plaintext (core/pushmsg), len bytes (copied, encrypted) */
    size_t len;              /* at most WR_PUSHCRYPT_PLAIN_MAX */
    const char *topic;       /* Topic header (wr_pushsub_topic), or NULL */
    const char *urgency;     /* Urgency header; NULL: "high" */
    int64_t deadline_ms;     /* epoch ms (wall clock): no try starts at or after it */
    int64_t ttl_s;           /* TTL header; < 0: the seconds left until deadline_ms at
                                each try (the admission push: until the pass expires) */
} wr_pushsend_msg_t;

/* A sender, or NULL (*err: WR_EINVAL for bad settings, WR_ENOMEM). */
wr_pushsend_t *wr_pushsend_new(const wr_pushsend_config_t *cfg, wr_err_t *err);

/*
 * Queues m; cb(result, arg) follows exactly once. WR_OK; WR_EINVAL (NULL,
 * an endpoint that does not parse, a payload too long, a bad subscription
 * key), WR_ELIMIT (max_queued messages not answered yet) or WR_ECANCELED (called
 * from a callback of wr_pushsend_free) - then cb is never called.
 */
wr_err_t wr_pushsend_push(wr_pushsend_t *ps, const wr_pushsend_msg_t *m, wr_pushsend_cb cb,
                          void *arg);

/* Messages trying now, and waiting for a slot. */
size_t wr_pushsend_in_flight(const wr_pushsend_t *ps);
size_t wr_pushsend_queued(const wr_pushsend_t *ps);

/* Frees ps: every message not yet answered is answered CANCELED, from
 * here, before it returns. NULL is a no-op. */
void wr_pushsend_free(wr_pushsend_t *ps);

#endif
