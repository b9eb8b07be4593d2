/*
 * api_internal.h - what every file of the api module shares, and nothing
 * else includes: the handler state (struct wr_api), the routed call and
 * the request context, the bottom two layers (api_reply.c: contexts,
 * replies, the error table; api_request.c: the shared readers and the
 * cookies), the queue page of a view (api_view.c) and the preview.
 *
 * The api module is one module in several files, in layers; a file calls
 * only into files below it (the one mutual pair: the gates):
 *   api.c                        dispatch (the route's row: its flags
 *                                checked, its handler called), lifecycle,
 *                                secrets                  (api_routes.h)
 *   api_page.c                   the queue page route
 *   api_entries.c  api_tokens.c  api_admin.c  api_preview.c
 *                                the route families       (api_routes.h)
 *   api_challenge.c ~ api_captcha.c
 *                                the join's gates         (api_gates.h)
 *   api_view.c                   the entry view (and the degraded one)
 *                                those routes tell        (api_view.h)
 *   api_request.c                the shared readers, the cookies
 *   api_reply.c                  contexts, replies, metrics of requests,
 *                                the error table          (this header)
 * Each file includes this header and the ones of the layers it calls.
 * Names shared between these files are wr_api__*; file statics are
 * unprefixed (STYLE.md).
 */
#ifndef WR_API_INTERNAL_H
#define WR_API_INTERNAL_H

#include <event2/http.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/api.h"
#include "base/crypto.h"
#include "base/freelist.h"
#include "runtime/failopen.h"
#include "http/page.h"
#include "core/challenge.h"
#include "core/identity.h"
#include "core/invite.h"
#include "core/qconfig.h"
#include "core/ratelimit.h"
#include "base/rng.h"
#include "http/router.h"
#include "core/seencache.h"
#include "core/token.h"

/* True when the len bytes at p are none or only white space (SP, HTAB,
 * CR, LF): a body that counts as no body (a join's, consume's, release's). */
static inline bool wr_api__blank(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
            return false;
    return true;
}

/* Copies the string src into dst (cap bytes with the NUL), truncated like
 * snprintf(dst, cap, "%s", src) but without its formatting: the request
 * path copies a queue name and a user id several times per poll. */
static inline void wr_api__copy(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    while (n + 1 < cap && src[n])
        n++;
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
    dst[n] = '\0';
}

/* A routed request, as handle() (api.c) hands it to its route's handler
 * once the checks of the route's flags (router.h) have passed. */
typedef struct {
    wr_route_t route;
    const char *queue; /* WR_ROUTE_F_QUEUE: the {queue}, percent-decoded and
                          validated; else "". Lives until the handler returns */
    const char *param; /* the parameter segment as in the path (not decoded,
                          not NUL-terminated; /static's {file}); NULL = none */
    size_t param_len;
    const char *param2; /* a second one, as param (.../codes/{code}); NULL = none */
    size_t param2_len;
    bool admin_listener; /* it came to the separate admin listener (--admin-listen) */
} wr_api__call_t;

/* A route's handler: the HANDLER column of routes.def. Answers req exactly
 * once (now, or from a store callback). */
typedef void wr_api__handler_fn(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call);

/* Retry-After (whole seconds, as HTTP requires) of a 503 STORE_UNAVAILABLE:
 * drawn uniformly in [MIN, MAX] per answer (wr_api__retry_after_unavailable),
 * so the clients an outage turned away do not all come back in the same
 * second (case K13). */
#define WR_API__RETRY_AFTER_UNAVAILABLE_MIN_S 1
#define WR_API__RETRY_AFTER_UNAVAILABLE_MAX_S 3

/* Statuses whose request-counter labels are built once (api_reply.c). */
#define WR_API__N_LABEL_STATUSES 12

/* A request's record for the access log and the duration histogram,
 * taken when its reply is sent (api_reply.c). */
typedef struct {
    wr_http_req_t *req; /* NULL = none */
    wr_route_t route;
    int status;
    size_t bytes;    /* body bytes sent */
    int64_t done_us; /* when the reply was sent */
    char method[8];
    char client[64]; /* after trusted proxies; "" when the access log is off */
} wr_api__record_t;

struct wr_api {
    /* the router's last match (the event loop's thread only) */
    wr_router_memo_t route_memo;
    struct event_base *base;
    wr_store_t *store;
    wr_scheduler_t *sched;
    wr_metrics_t *metrics;
    const wr_config_t *cfg;
    const wr_webdir_t *web;        /* the page files (--web-dir over the embedded ones) */
    const struct wr_http *http[2]; /* borrowed: the listeners /metrics counts (wr_api_set_http) */
    uint8_t secret[WR_SECRET_MAX];
    size_t secret_len;
    uint8_t cookie_key[WR_CRYPTO_KEY_LEN];
    size_t cookie_key_len;
    /* Rotation: the previous token secret and cookie key, still accepted. */
    wr_token_key_t keys[2]; /* [0] current (signs), [1] previous; n_keys used */
    size_t n_keys;
    uint8_t prev_secret[WR_SECRET_MAX];
    size_t prev_secret_len;
    uint8_t prev_cookie_key[WR_CRYPTO_KEY_LEN];
    bool has_prev_cookie_key;
    /* Join challenges (challenge.h): [0] from the token secret (issues and
     * checks), [1] from the previous one during a rotation (checks); NULL =
     * none. */
    wr_challenge_key_t *challenge_keys[2];
    /* The CAPTCHA hook's fallback proofs of work (api_captcha.c): keys
     * derived from the same secrets under their own label, so a fallback
     * challenge (issued only when the provider did not answer) never
     * passes for a challengeBits one, nor the other way round. */
    wr_challenge_key_t *captcha_keys[2];
    /* The outgoing HTTP client (api_client.c: CAPTCHA siteverify, the
     * draw's beacon): TLS context, resolver, verifications in flight;
     * NULL until the first request. */
    struct wr_api__client *client;
    wr_ratelimit_t *join_rl; /* per client address */
    wr_ratelimit_t *poll_rl; /* per queue + user: pacing */
    wr_seencache_t *seen;    /* recently recorded waiting users (status_quiet); NULL = none */
    bool admin_separate;     /* admin API only on the admin listener */
    uint8_t admin_mac_key[WR_CRYPTO_KEY_LEN]; /* random per process: admin key compare */
    uint8_t admin_mac[WR_CRYPTO_MAC_LEN];     /* HMAC(admin_mac_key, configured admin key) */
    bool admin_enabled;
    size_t in_flight;
    /* see count_request in api_reply.c */
    char request_labels[WR_ROUTE_COUNT][WR_API__N_LABEL_STATUSES][64];
    wr_metrics_ref_t request_refs[WR_ROUTE_COUNT][WR_API__N_LABEL_STATUSES]; /* their series */
    wr_freelist_t free_ctx; /* recycled request contexts (no malloc per poll) */
    wr_rng_t rng;           /* poll jitter */
    /* degraded mode: passes spent here while the store was unreachable,
     * and the burns owed to the store (failopen.h) */
    wr_failopen_t *failopen;
    /* The public log's signer (runtime/logsign.h): its key and name; NULL
     * = no log (the log routes answer 404 LOG_NOT_ENABLED). */
    struct wr_logsign *logsign;
    struct wr_api__push *push; /* Web Push: the key and the sender (api_push.c) */

    /* The request handle() is dispatching now (its reply, if sent before
     * handle returns, is recorded at once), and a reply sent later from a
     * store callback, recorded when its context is freed (right after). */
    wr_http_req_t *cur_req;
    int64_t cur_start_us;
    const char *cur_queue; /* "" = none; handle()'s buffer */
    wr_api__record_t pending;
    char duration_labels[WR_ROUTE_COUNT][40]; /* route="..." of the duration histogram */
    wr_metrics_ref_t duration_refs[WR_ROUTE_COUNT];
    /* the store latency's series of the last ops (api_reply.c,
     * wr_api__observe): op as the string literal's address */
    struct {
        const char *op;
        char label[40]; /* op="OP" */
        wr_metrics_ref_t ref;
    } latency_refs[8];
    unsigned latency_next; /* the entry the next new op takes */
};

/* Request contexts kept for reuse at most (api_reply.c). */
#define WR_API_FREE_CTX_MAX 1024

/* One store-backed request, from the store call to its reply. */
typedef struct wr_api__ctx {
    wr_api_t *api;
    wr_http_req_t *req;
    wr_route_t route;
    const char *op;   /* store op label for metrics */
    int64_t t0_us;    /* the store call's start (store latency) */
    int64_t start_us; /* the request's dispatch (request duration) */
    int64_t seen_us;  /* join/status that records last-seen: sent at (monotonic us); 0 = not */
    char queue[WR_QUEUE_NAME_MAX + 1];
    char user[WR_USER_ID_MAX + 1];
    char cookie[WR_IDENTITY_COOKIE_MAX + 1]; /* set on the reply when a visitor was created */
    /* The queue as the scheduler knows it, looked up once for the request
     * (wr_scheduler_hold on c->queue) and released with the context; NULL =
     * not looked up, or unknown here. */
    wr_scheduler_queue_t *sq;
    wr_token_claims_t claims;
    json_t *body;         /* admin PATCH body, owned */
    int challenge_reason; /* a join refused for its challenge (wr_challenge_reason_t), while the
                             store says whether the person is in line already */
    int captcha_reason;   /* a join refused for its CAPTCHA (wr_api__captcha_reason_t; 0 = none:
                             challenge_reason tells) */
    bool captcha_pow;     /* the join brought a valid challengeBits solution (the provider's
                             silence then lets it in with fallback "challenge") */
    bool captcha_fallback_pow;   /* the queue's captcha.fallback is "challenge" */
    bool fresh_visitor;          /* the join's visitor was minted for it (no invite): a refusal
                                    needs no status read */
    bool code_checked;           /* the join's presale code (body "code", ?code=) was looked at */
    bool code_verdict;           /* ... and the store's verdict on it asked (api_codes.c) */
    wr_store_entry_cb code_next; /* the code gate's answer for someone with a place (api_codes.c) */
    void (*code_go)(struct wr_api__ctx *c); /* the join, once the verdict lets it go on */
    /* Priority groups (API 1.3): the group the join asks for - an invite's
     * grp (wins over a code) - and the hash of the join's presale code
     * (wr_groups_code_hash); "" = none. */
    char group[WR_GROUP_NAME_MAX + 1];
    char code_hash[WR_CODE_HASH_HEX + 1];
    /* The join gates' records in the store's spent set (wr_store_burn):
     * the solved challenge this join spends right before it joins ("" =
     * none) and until when (its expiresAt, epoch ms); the id of the join's
     * CAPTCHA verdict ("" = none), remembered once the provider accepts. */
    char spend_id[WR_CHALLENGE_ID_LEN + 1];
    int64_t spend_exp_ms;
    char verdict_id[WR_CHALLENGE_ID_LEN + 1];
    /* The join's steps after the CAPTCHA gate (api_entries.c). */
    const struct wr_api__join_steps *steps;
    const struct wr_api__join_answers *join; /* a join: its route's answers (api_entries.c) */
} wr_api__ctx_t;

typedef struct wr_api__join_answers wr_api__join_answers_t;

/* ---------- api_reply.c: contexts, replies ---------- */

/*
 * Takes a context from the pool (or allocates one), zeroed, for req on
 * route; queue may be NULL. Counts it in in_flight and starts its latency
 * clock; op defaults to the route name. Out of memory, it answers the
 * request 500 INTERNAL itself and returns NULL: the caller just returns.
 */
wr_api__ctx_t *wr_api__ctx_new(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
                               const char *queue);

/* Gives c back to the pool (frees its body); call right after its reply. */
void wr_api__ctx_free(wr_api__ctx_t *c);

/* Records the store latency of c's operation, and err unless it is a
 * domain answer (a row of the error table). */
void wr_api__observe(wr_api__ctx_t *c, wr_err_t err);

/*
 * Accounts for one answer about to be sent (bytes of body): counts it in
 * waitroom_http_requests_total and, for a request in handle() or with a
 * live context, observes its duration and writes its access-log line
 * (never a token or a cookie: the route name, not the path). Call it right
 * before sending; req must still be valid.
 */
void wr_api__count_request(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                           size_t bytes);

/* The client address of req: the peer, or X-Forwarded-For's client when
 * the peer is a trusted proxy (--trusted-proxies). "" without a peer. */
void wr_api__client_addr(wr_api_t *a, wr_http_req_t *req, char *out, size_t cap);

/* Answers 500 INTERNAL "out of memory". */
void wr_api__reply_oom(wr_api_t *a, wr_http_req_t *req, wr_route_t route);

/*
 * Parses a request body (len bytes at data, not NUL-terminated) as JSON for
 * the admin and token routes: NULL when it is not valid JSON, holds a NUL
 * byte (jansson would skip one after a number), or gives a key twice (which
 * one won would be a guess); err->text then says why. The caller owns the
 * result (json_decref).
 */
json_t *wr_api__load_body(const char *data, size_t len, json_error_t *err);

/*
 * For a body wr_api__load_body refused (err its error): true when its one
 * fault is numbers jansson cannot hold (an integer beyond int64, a real
 * beyond double), with the dotted path of the object key the first such
 * number is the value of in field (cap bytes, NUL-terminated: "count",
 * "autotune.minPerSecond"): a value out of range, which names its field
 * (API.md 1.2). False, field "", for any other fault (not JSON, not an
 * object, a number outside any member). Bounded: keys cut at WR_FIELD_MAX
 * bytes, nesting past 8 levels ignored, at most 16 such numbers.
 */
bool wr_api__body_number_field(const char *data, size_t len, const json_error_t *err, char *field,
                               size_t cap);

/* The reply helpers: each counts the request, then sends through http.h
 * (same arguments as wr_http_reply_*). */
void wr_api__reply_json(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                        const char *body, size_t len, int retry_after);
void wr_api__reply_error(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                         const char *code, const char *message, const char *field,
                         const char *reason, int retry_after);
void wr_api__reply_empty(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status);

/* Sends o (takes ownership; NULL = out of memory: 500) as compact JSON. */
/* A 200 CSV answer (text/csv, as a download named filename; the sale's
 * report), body of len bytes (copied). */
void wr_api__reply_csv(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *filename,
                       const char *body, size_t len);
void wr_api__reply_jansson(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                           json_t *o);

/* The queue c's request is about, as the scheduler knows it: held once per
 * request in c->sq (wr_scheduler_hold on c->queue; cfg non-NULL: an
 * answer's config, noted as wr_scheduler_note does) and released with the
 * context. NULL: unknown here. Every scheduler call of a request goes
 * through this handle, not the queue's name. */
wr_scheduler_queue_t *wr_api__held(wr_api__ctx_t *c, const wr_queue_config_t *cfg);

/* The held config: the config this instance holds for c's queue
 * (wr_scheduler_queue_config of wr_api__held(c, NULL)); NULL = none. */
const wr_queue_config_t *wr_api__held_config(wr_api__ctx_t *c);

/* The Retry-After (seconds) of 429 QUEUE_FULL: the slowest poll band of
 * cfg (wr_queue_slowest_band_ms; NULL = the default config's), rounded up,
 * at least 1. */
int wr_api__full_retry_after_s(const wr_queue_config_t *cfg);

/* ---------- api_reply.c: the error table ---------- */

/*
 * How a store error is told to the client: one row per domain answer of
 * the store (ENOTFOUND, ENOTINQUEUE, EFULL, ETOKEN, ECODE); every other error is a
 * failure of the store, told by the STORE_UNAVAILABLE row (503).
 */
typedef struct {
    wr_err_t err;           /* WR_OK in the STORE_UNAVAILABLE row */
    int status;             /* HTTP status */
    const char *code;       /* JSON "error" */
    const char *message;    /* JSON "message"; NULL = wr_strerror(err) */
    int retry_after_s;      /* Retry-After, seconds; 0 = none */
    const char *page_state; /* the queue page's state (page.h); NULL = not on the page */
} wr_api__answer_t;

/* A set of domain answers: one bit per wr_err_t value. */
#define WR_API__TELL(e) (1u << (e))

/*
 * The domain answers each caller tells as themselves; any other error, or
 * a domain answer outside the caller's set, is told as STORE_UNAVAILABLE.
 */
/* leave, the admin API, status/leave without a visitor cookie */
#define WR_API__TELLS_STORE (WR_API__TELL(WR_ENOTFOUND) | WR_API__TELL(WR_ENOTINQUEUE))
/* join, status (JSON): a full line is 429 with the queue's Retry-After; a
 * presale code refused 403 CODE_INVALID (its reason the entry's) */
#define WR_API__TELLS_ENTRY (WR_API__TELLS_STORE | WR_API__TELL(WR_EFULL) | WR_API__TELL(WR_ECODE))
/* the queue page (join): a full line, no such queue or a refused code, no
 * NOT_IN_QUEUE */
#define WR_API__TELLS_PAGE                                                                         \
    (WR_API__TELL(WR_ENOTFOUND) | WR_API__TELL(WR_EFULL) | WR_API__TELL(WR_ECODE))
/* consume, verify: any other error goes to the queue's fail policy */
#define WR_API__TELLS_TOKEN (WR_API__TELL(WR_ENOTFOUND) | WR_API__TELL(WR_ETOKEN))
/* the queue lookup before a token check */
#define WR_API__TELLS_QUEUE WR_API__TELL(WR_ENOTFOUND)
/* readyz, and a store call that could not start */
#define WR_API__TELLS_NONE 0u

/* True when err is a domain answer in the set tells. */
bool wr_api__tells(wr_err_t err, unsigned tells);

/* The row that tells err to a caller telling the set tells: err's row when
 * wr_api__tells(err, tells), else the STORE_UNAVAILABLE row. Never NULL. */
const wr_api__answer_t *wr_api__answer(wr_err_t err, unsigned tells);

/* A 503's Retry-After, seconds: uniform in [WR_API__RETRY_AFTER_UNAVAILABLE_MIN_S,
 * WR_API__RETRY_AFTER_UNAVAILABLE_MAX_S], from a's rng. */
int wr_api__retry_after_unavailable(wr_api_t *a);

/* The Retry-After of answer ans, seconds (0 = none): the row's, jittered
 * for STORE_UNAVAILABLE (wr_api__retry_after_unavailable). */
int wr_api__answer_retry_s(wr_api_t *a, const wr_api__answer_t *ans);

/* The HEAD of an HTML page (GET /q/{queue}): status with exactly the
 * headers wr_api__reply_html sends, no body and no side effect. */
void wr_api__reply_html_head(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status);

/* Replies err as a JSON error, as wr_api__answer(err, tells) says; reason
 * is the JSON "reason" (NULL = none), retry_after_s > 0 replaces the
 * row's Retry-After. */
void wr_api__reply_answer(wr_api_t *a, wr_http_req_t *req, wr_route_t route, wr_err_t err,
                          unsigned tells, const char *reason, int retry_after_s);

/* The "reason" of a join answered err with entry e: the refused presale
 * code's (wr_groups_code_reason_name of e->code_reason) for WR_ECODE
 * ("unknown" without an entry), else NULL. Static. */
const char *wr_api__code_reason(wr_err_t err, const wr_entry_t *e);

/* wr_api__reply_answer for c's request, no reason, the row's Retry-After. */
void wr_api__reply_store_error(wr_api__ctx_t *c, wr_err_t err, unsigned tells);

/* err told as a store failure: 503 STORE_UNAVAILABLE with wr_strerror(err)
 * and a Retry-After (wr_api__reply_answer with WR_API__TELLS_NONE). */
void wr_api__reply_unavailable(wr_api_t *a, wr_http_req_t *req, wr_route_t route, wr_err_t err);

/* ---------- api_reply.c: more replies ---------- */

/* Sends an HTML page (takes ownership of html; NULL = out of memory: 500)
 * with no-store and the page's Content-Security-Policy. */
void wr_api__reply_html(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status, char *html,
                        size_t len);

/* wr_api__reply_html whose Content-Security-Policy also lets images come
 * from img_origin (a canonical origin, origin.h; NULL or "" = none) and
 * scripts and frames from captcha (the sources of the queue's CAPTCHA
 * provider, core/captcha.h; as dirs says also styles and connections;
 * NULL or "" = none). */
void wr_api__reply_page(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status, char *html,
                        size_t len, const char *img_origin, const char *captcha, unsigned dirs);

/* The store callback (wr_store_done_cb) of an operation answered 204 on
 * success (leave, admin delete): observes, replies (errors as
 * WR_API__TELLS_STORE) and frees the context given as arg. */
void wr_api__done_cb(wr_err_t err, void *arg);

/* ---------- api_push.c ---------- */

/* Frees the push state (the sender answers its unsent messages CANCELED). */
void wr_api__push_free(wr_api_t *a);

/* A PUT or PATCH body turning push on where it cannot work: no store
 * support (msg "not available yet") or no --push-subject. True with msg
 * set (400 INVALID_CONFIG naming push). */
bool wr_api__push_config_refused(const wr_api_t *a, const json_t *body, char *msg, size_t cap);

/* This instance's pushes of queue since it started (or since the queue's
 * series were last removed, at its delete), by outcome, read from
 * waitroom_push_total{queue,outcome}: a new object {"delivered","gone",
 * "failed","retried"} of counts (0 without metrics), caller owns it; NULL
 * out of memory. The admin JSON's stats "push" (docs/API.md). */
json_t *wr_api__push_counts_json(const wr_api_t *a, const char *queue);

/* ---------- api_request.c: the shared readers, the cookies ---------- */

/* Whether req's peer is a trusted proxy (--trusted-proxies): only then do
 * its X-Forwarded-* and X-Original-URI fields count. */
bool wr_api__peer_trusted(wr_api_t *a, wr_http_req_t *req);

/*
 * Finds the user for a request. Returns 0 and fills user; 1 when the
 * request has been answered (400); 2 in cookie mode when there is no valid
 * visitor cookie and `create` is false (the caller answers). With `create`
 * (join, a join challenge), a missing or unverifiable cookie mints a new
 * visitor, and the return is 3 (user filled: a visitor nobody has seen). cookie_out gets the cookie
 * value to set: on every join, and on a poll when the cookie is due for renewal
 * (wr_identity_should_renew).
 */
int wr_api__resolve_user(wr_api_t *a, wr_http_req_t *req, wr_route_t route, bool create,
                         char user[WR_USER_ID_MAX + 1],
                         char cookie_out[WR_IDENTITY_COOKIE_MAX + 1]);

/* Sets the visitor cookie wr_vid=value (HttpOnly, SameSite=Lax, Path=/,
 * Secure when configured) on req's answer. */
void wr_api__set_visitor_cookie(wr_api_t *a, wr_http_req_t *req, const char *value);

/* The value of query parameter name of req (decoded) into out (cap
 * bytes); false when absent, empty, too long, or the query holds a %00. */
bool wr_api__query_param(wr_http_req_t *req, const char *name, char *out, size_t cap);

/* True when the raw query q (NULL: none) names the parameter key (key=...
 * as one of its &-separated parts, whatever its value: too long or empty
 * included), so that ?return=https://shop/p?preview=1 or ?xpreview= does
 * not name preview. */
bool wr_api__query_names(const char *q, const char *key);

/* Finds "Authorization: Bearer X" in ih: sets *tok (borrowed from ih) and
 * *len, and returns true when present and not empty. */
bool wr_api__bearer(const wr_http_req_t *req, const char **tok, size_t *len);

/* True when req carries the admin key (Authorization: Bearer, compared as
 * HMACs in constant time); false when no admin key is configured. */
bool wr_api__admin_ok(wr_api_t *a, wr_http_req_t *req);

/* Whether a join answered err hands out the visitor cookie it minted: on
 * success, on a store timeout or outage, on a late replica or shard (the
 * join may have been applied, and the retry must come back as the same
 * visitor). Not on a refusal (unknown queue, full line). */
bool wr_api__visitor_kept(wr_err_t err);

/* Sets the pass of an admitted user, cookie wr_token_{c->queue}=token
 * (HttpOnly, SameSite=Lax, Path=/, Max-Age until expires_at_ms, epoch ms;
 * Secure when the request came over TLS: cookie_secure, or a trusted
 * proxy's X-Forwarded-Proto: https), on c's answer. */
void wr_api__set_token_cookie(wr_api__ctx_t *c, const char *token, int64_t expires_at_ms);

/* ---------- api_view.c: the queue page of a view ---------- */

/*
 * The text of cfg's notice (borrowed from it; NULL: none) to show in page
 * language lang (NULL: none asked): the string form as it is; by language,
 * the key lang.h's wr_lang_match finds for lang (pt-BR's text for a page
 * in pt), else the one for "en" (or en-*), else the first key's.
 */
const char *wr_api__notice_text(const wr_queue_config_t *cfg, const char *lang);

/* Renders the queue page of view v for req with status, dressed in cfg's
 * page (brand, logo, accent, default language; cfg NULL = none): v's web,
 * page and lang are set here (lang from ?lang= when it names one of the
 * page's languages, else Accept-Language with cfg's page.lang as the
 * fallback), and the Content-Security-Policy lets images come from the
 * logo's origin. A v->notice set (the state shows the notice) becomes
 * cfg's notice in that language (wr_api__notice_text). */
void wr_api__reply_queue_page(wr_api_t *a, wr_http_req_t *req, wr_route_t route, int status,
                              wr_page_view_t *v, const wr_queue_config_t *cfg);

/* ---------- api_preview.c ---------- */

/* GET /q/{queue}?preview=STATE (the queue page with sample numbers, for
 * operators): on the separate admin listener, or with the admin key when
 * there is no separate one (404 on the public listener when there is;
 * 401 UNAUTHORIZED without the key). 400 BAD_REQUEST for an unknown
 * STATE, 404 QUEUE_NOT_FOUND for an unknown queue. Joins nobody. */
void wr_api__handle_preview(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call,
                            const char *state);
/* ---------- degraded mode (docs/API.md 1.1) ---------- */

/* True when err means the store could not be reached (WR_EUNAVAILABLE,
 * breaker open included, or WR_ETIMEOUT): the queue's failPolicy decides. */
bool wr_api__store_unreachable(wr_err_t err);

/* Counts one fail-open event of queue: name is
 * "waitroom_fail_open_admitted_total" or "waitroom_fail_open_consumed_total". */
void wr_api__count_fail_open(wr_api_t *a, const char *name, const char *queue);

#endif
