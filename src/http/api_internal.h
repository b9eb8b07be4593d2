/*
 * api_internal.h - what the files of the api module share, and nothing
 * else includes: the handler state (struct wr_api), the request context
 * and its pool, the reply helpers, and the route families' entry points.
 *
 * The api module is one module in several files, split by route family:
 *   api.c          dispatch (the route's row: its flags checked, its handler
 *                  called), lifecycle, secrets
 *   api_reply.c    context pool, replies, metrics of requests, error table
 *   api_entries.c  join / status / leave, the queue page, abuse limits
 *   api_view.c     the entry view (and the degraded one) those routes tell
 *   api_tokens.c   consume / verify, the fail policy
 *   api_admin.c    admin API (and its audit log), queue history, readyz, metrics
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
    bool admin_listener; /* it came to the separate admin listener (--admin-listen) */
} wr_api__call_t;

/* A route's handler: the HANDLER column of routes.def. Answers req exactly
 * once (now, or from a store callback). */
typedef void wr_api__handler_fn(wr_api_t *a, struct evhttp_request *req,
                                const wr_api__call_t *call);

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
    struct evhttp_request *req; /* NULL = none */
    wr_route_t route;
    int status;
    size_t bytes;    /* body bytes sent */
    int64_t done_us; /* when the reply was sent */
    char method[8];
    char client[64]; /* after trusted proxies; "" when the access log is off */
} wr_api__record_t;

struct wr_api {
    struct event_base *base;
    wr_store_t *store;
    wr_scheduler_t *sched;
    wr_metrics_t *metrics;
    const wr_config_t *cfg;
    const wr_webdir_t *web; /* the page files (--web-dir over the embedded ones) */
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
    /* The siteverify client: TLS context, resolver, verifications in
     * flight; NULL until the first verification. */
    struct wr_api__captcha_client *captcha;
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
    wr_freelist_t free_ctx; /* recycled request contexts (no malloc per poll) */
    wr_rng_t rng;           /* poll jitter */
    /* degraded mode: passes spent here while the store was unreachable,
     * and the burns owed to the store (failopen.h) */
    wr_failopen_t *failopen;

    /* The request handle() is dispatching now (its reply, if sent before
     * handle returns, is recorded at once), and a reply sent later from a
     * store callback, recorded when its context is freed (right after). */
    struct evhttp_request *cur_req;
    int64_t cur_start_us;
    const char *cur_queue; /* "" = none; handle()'s buffer */
    wr_api__record_t pending;
    char duration_labels[WR_ROUTE_COUNT][40]; /* route="..." of the duration histogram */
};

/* Request contexts kept for reuse at most (api_reply.c). */
#define WR_API_FREE_CTX_MAX 1024

/* One store-backed request, from the store call to its reply. */
typedef struct wr_api__ctx {
    wr_api_t *api;
    struct evhttp_request *req;
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
    bool captcha_fallback_pow; /* the queue's captcha.fallback is "challenge" */
    bool fresh_visitor;        /* the join's visitor was minted for it (no invite): a refusal
                                  needs no status read */
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
wr_api__ctx_t *wr_api__ctx_new(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
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
void wr_api__count_request(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                           size_t bytes);

/* The client address of req: the peer, or X-Forwarded-For's client when
 * the peer is a trusted proxy (--trusted-proxies). "" without a peer. */
void wr_api__client_addr(wr_api_t *a, struct evhttp_request *req, char *out, size_t cap);

/* Answers 500 INTERNAL "out of memory". */
void wr_api__reply_oom(wr_api_t *a, struct evhttp_request *req, wr_route_t route);

/*
 * Parses a request body (len bytes at data, not NUL-terminated) as JSON for
 * the admin and token routes: NULL when it is not valid JSON, holds a NUL
 * byte (jansson would skip one after a number), or gives a key twice (which
 * one won would be a guess); err->text then says why. The caller owns the
 * result (json_decref).
 */
json_t *wr_api__load_body(const char *data, size_t len, json_error_t *err);

/* The reply helpers: each counts the request, then sends through http.h
 * (same arguments as wr_http_reply_*). */
void wr_api__reply_json(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                        const char *body, size_t len, int retry_after);
void wr_api__reply_error(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                         const char *code, const char *message, const char *field,
                         const char *reason, int retry_after);
void wr_api__reply_empty(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status);

/* Sends o (takes ownership; NULL = out of memory: 500) as compact JSON. */
void wr_api__reply_jansson(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
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
 * the store (ENOTFOUND, ENOTINQUEUE, EFULL, ETOKEN); every other error is a
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
/* join, status (JSON): a full line is 429 with the queue's Retry-After */
#define WR_API__TELLS_ENTRY (WR_API__TELLS_STORE | WR_API__TELL(WR_EFULL))
/* the queue page (join): a full line or no such queue, no NOT_IN_QUEUE */
#define WR_API__TELLS_PAGE (WR_API__TELL(WR_ENOTFOUND) | WR_API__TELL(WR_EFULL))
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
void wr_api__reply_html_head(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status);

/* Replies err as a JSON error, as wr_api__answer(err, tells) says; reason
 * is the JSON "reason" (NULL = none), retry_after_s > 0 replaces the
 * row's Retry-After. */
void wr_api__reply_answer(wr_api_t *a, struct evhttp_request *req, wr_route_t route, wr_err_t err,
                          unsigned tells, const char *reason, int retry_after_s);

/* wr_api__reply_answer for c's request, no reason, the row's Retry-After. */
void wr_api__reply_store_error(wr_api__ctx_t *c, wr_err_t err, unsigned tells);

/* err told as a store failure: 503 STORE_UNAVAILABLE with wr_strerror(err)
 * and a Retry-After (wr_api__reply_answer with WR_API__TELLS_NONE). */
void wr_api__reply_unavailable(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                               wr_err_t err);

/* ---------- api_reply.c: more replies ---------- */

/* Sends an HTML page (takes ownership of html; NULL = out of memory: 500)
 * with no-store and the page's Content-Security-Policy. */
void wr_api__reply_html(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                        char *html, size_t len);

/* wr_api__reply_html whose Content-Security-Policy also lets images come
 * from img_origin (a canonical origin, origin.h; NULL or "" = none) and
 * scripts and frames from captcha (the sources of the queue's CAPTCHA
 * provider, core/captcha.h; as dirs says also styles and connections;
 * NULL or "" = none). */
void wr_api__reply_page(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                        char *html, size_t len, const char *img_origin, const char *captcha,
                        unsigned dirs);

/* The store callback (wr_store_done_cb) of an operation answered 204 on
 * success (leave, admin delete): observes, replies (errors as
 * WR_API__TELLS_STORE) and frees the context given as arg. */
void wr_api__done_cb(wr_err_t err, void *arg);

/* ---------- api_request.c: the shared readers, the cookies ---------- */

/*
 * Finds the user for a request. Returns 0 and fills user; 1 when the
 * request has been answered (400); 2 in cookie mode when there is no valid
 * visitor cookie and `create` is false (the caller answers). With `create`
 * (join, a join challenge), a missing or unverifiable cookie mints a new
 * visitor, and the return is 3 (user filled: a visitor nobody has seen). cookie_out gets the cookie
 * value to set: on every join, and on a poll when the cookie is due for renewal
 * (wr_identity_should_renew).
 */
int wr_api__resolve_user(wr_api_t *a, struct evhttp_request *req, wr_route_t route, bool create,
                         char user[WR_USER_ID_MAX + 1],
                         char cookie_out[WR_IDENTITY_COOKIE_MAX + 1]);

/* Sets the visitor cookie wr_vid=value (HttpOnly, SameSite=Lax, Path=/,
 * Secure when configured) on req's answer. */
void wr_api__set_visitor_cookie(wr_api_t *a, struct evhttp_request *req, const char *value);

/* The value of query parameter name of req (decoded) into out (cap
 * bytes); false when absent, empty, too long, or the query holds a %00. */
bool wr_api__query_param(struct evhttp_request *req, const char *name, char *out, size_t cap);

/* Finds "Authorization: Bearer X" in ih: sets *tok (borrowed from ih) and
 * *len, and returns true when present and not empty. */
bool wr_api__bearer(struct evkeyvalq *ih, const char **tok, size_t *len);

/* True when req carries the admin key (Authorization: Bearer, compared as
 * HMACs in constant time); false when no admin key is configured. */
bool wr_api__admin_ok(wr_api_t *a, struct evhttp_request *req);

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

/* ---------- api_entries.c: join / status / leave, the join's gates ---------- */

/* POST /v1/queues/{queue}/entries, GET/DELETE .../entries/me; the queue is
 * validated and the token secret is installed. Answers req exactly once. */
wr_api__handler_fn wr_api__handle_entries;

/* How a join's route answers once the gates are done with c (each frees
 * c): POST entries' JSON (api_entries.c), or the queue page (api_page.c). */
struct wr_api__join_answers {
    wr_store_entry_cb entry; /* the store's entry of the join, or of the gates' status read */
    void (*invite_refused)(wr_api__ctx_t *c, wr_invite_reason_t r); /* 403 of the invite gate */
    void (*challenge)(wr_api__ctx_t *c); /* refused for its challenge or CAPTCHA (not in line) */
};

/* A join of queue on route (JOIN or QUEUE_PAGE): the queue's config (the
 * held one, else one store read), then the gates (body, invite, challenge,
 * CAPTCHA), then the store's join; answered through answers (static
 * storage). Answers req exactly once. */
void wr_api__join_start(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                        const char *queue, const wr_api__join_answers_t *answers);

/* The join limit per client address: true when req was refused (answered
 * 429 RATE_LIMITED). */
bool wr_api__join_limited(wr_api_t *a, struct evhttp_request *req, wr_route_t route);

/* Poll pacing, after an answer: a waiting identity (queue, user) was told
 * to come back in retry_ms (0 = not waiting any more: forgotten). */
void wr_api__pace_note(wr_api_t *a, const char *queue, const char *user, uint32_t retry_ms);

/* ---------- api_page.c ---------- */

/* GET /q/{queue}: joins (like POST entries) and answers the queue page.
 * Same preconditions as wr_api__handle_entries. */
wr_api__handler_fn wr_api__handle_queue_page;

/* ---------- api_preview.c ---------- */

/* GET /q/{queue}?preview=STATE (the queue page with sample numbers, for
 * operators): on the separate admin listener, or with the admin key when
 * there is no separate one (404 on the public listener when there is;
 * 401 UNAUTHORIZED without the key). 400 BAD_REQUEST for an unknown
 * STATE, 404 QUEUE_NOT_FOUND for an unknown queue. Joins nobody. */
void wr_api__handle_preview(wr_api_t *a, struct evhttp_request *req, const wr_api__call_t *call,
                            const char *state);
/* ---------- api_challenge.c ---------- */

/* GET /v1/queues/{queue}/challenge: a fresh challenge for the caller (the
 * cookie visitor, minted when there is none, or the header's user id).
 * The queue is validated and the token secret installed. */
wr_api__handler_fn wr_api__handle_challenge;

/* Whether a join of a queue of config cfg needs a solved challenge: the
 * queue is on (enabled) with challengeBits > 0, not closed and not out of
 * stock (cfg->stock 0: what the last tick left). False for NULL. */
bool wr_api__challenge_required(const wr_queue_config_t *cfg);

/* The join's body (POST entries) for the gates: false when there is none
 * (a GET, no bytes); true with *out the parsed JSON (owned; NULL when it
 * is not JSON, maybe not an object). */
bool wr_api__join_body(struct evhttp_request *req, json_t **out);

/*
 * The solution in a join's body ({"challenge":"...","nonce":"..."}) for
 * caller in queue, checked under keys (2: current, previous; a->
 * challenge_keys or a->captcha_keys) against bits: WR_CHALLENGE_OK
 * (counted as solved) with spend_id and *spend_exp_ms set to what the
 * join spends (wr_challenge_spent_id of the challenge, its expiresAt),
 * else the reason (an empty body, a GET, or no "challenge": missing; a
 * body that is not such an object: malformed). Reads req's body; answers
 * nothing.
 */
wr_challenge_reason_t wr_api__solution_check(wr_api_t *a, struct evhttp_request *req,
                                             wr_challenge_key_t *const *keys, unsigned bits,
                                             const char *queue, const char *caller,
                                             char spend_id[WR_CHALLENGE_ID_LEN + 1],
                                             int64_t *spend_exp_ms);

/* wr_api__solution_check under the challenge keys at cfg's current bits;
 * WR_CHALLENGE_OK (spend_id "") when cfg needs none
 * (wr_api__challenge_required). */
wr_challenge_reason_t wr_api__challenge_check(wr_api_t *a, struct evhttp_request *req,
                                              const wr_queue_config_t *cfg, const char *queue,
                                              const char *caller,
                                              char spend_id[WR_CHALLENGE_ID_LEN + 1],
                                              int64_t *spend_exp_ms);

/*
 * The join gates' one refusal: answers req 403 CHALLENGE_REQUIRED
 * {"error","message","reason"[,"challenge","bits","expiresAt"]
 * [,"captcha":{...}][,"fallback":true]} for the caller as the challenge
 * route sees it (a new visitor cookie set when there is none), with a
 * fresh challenge under key at bits when challenge (500 INTERNAL when it
 * cannot be signed: no key), the captcha
 * member when cfg has a captcha, and Retry-After retry_s when > 0. Counts
 * reason in waitroom_challenges_refused_total{queue,reason}.
 */
void wr_api__gate_refuse(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                         const wr_queue_config_t *cfg, const char *queue, const char *reason,
                         const char *message, bool challenge, wr_challenge_key_t *key,
                         unsigned bits, bool fallback, int retry_s);

/* Answers req 403 CHALLENGE_REQUIRED with reason r and a fresh challenge
 * (challenge, bits, expiresAt) bound to the caller as the challenge route
 * sees it (wr_api__gate_refuse). */
void wr_api__challenge_refuse(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                              const wr_queue_config_t *cfg, const char *queue,
                              wr_challenge_reason_t r);

/* ---------- api_captcha.c ---------- */

/* Why a join of a queue with a captcha was refused (the 403's "reason"). */
typedef enum {
    WR_API__CAPTCHA_OK = 0,
    WR_API__CAPTCHA_MISSING,     /* "captchaMissing": no captchaResponse (nor a solved fallback
                                    challenge) */
    WR_API__CAPTCHA_INVALID,     /* "captchaInvalid": the provider said no, or the response is
                                    not one (too long, not printable ASCII, not a string) */
    WR_API__CAPTCHA_UNAVAILABLE, /* "captchaUnavailable": the provider did not answer; with
                                    fallback "challenge" the 403 carries a fallback challenge */
} wr_api__captcha_reason_t;

/* What one siteverify exchange came to (the metric's outcome label). */
typedef enum {
    WR_API__VERIFY_PASSED = 0, /* "passed": success true */
    WR_API__VERIFY_REFUSED,    /* "refused": success false */
    WR_API__VERIFY_TIMEOUT,    /* "timeout": no answer within WR_API__CAPTCHA_TIMEOUT_MS */
    WR_API__VERIFY_ERROR,      /* "error": no connection, TLS refused, reset, a 5xx */
    WR_API__VERIFY_BAD_ANSWER, /* "badAnswer": not the provider's JSON, or over
                                  WR_CAPTCHA_ANSWER_MAX bytes */
    WR_API__VERIFY_BUSY,       /* "busy": WR_API__CAPTCHA_IN_FLIGHT_MAX already in flight */
} wr_api__verify_outcome_t;

#define WR_API__CAPTCHA_TIMEOUT_MS    3000 /* one verification, connect to answer, at most */
#define WR_API__CAPTCHA_IN_FLIGHT_MAX 1024 /* verifications in flight per instance, at most */

/* Whether a join of a queue of config cfg needs the CAPTCHA: cfg has a
 * captcha, is enabled, not closed and not sold out (as
 * wr_api__challenge_required). False for NULL. */
bool wr_api__captcha_required(const wr_queue_config_t *cfg);

/* The widget response of a join (POST entries, body member
 * "captchaResponse") into out: 1 when there is one of the right shape
 * (wr_captcha_response_ok), 0 when none (no body, a GET, no member or
 * null), -1 when the member is not one (not a string, too long...). */
int wr_api__captcha_read(struct evhttp_request *req, char out[WR_CAPTCHA_RESPONSE_MAX + 1]);

/* A solved fallback challenge in the join's body ({"challenge","nonce"}
 * issued by a 403 captchaUnavailable) for caller in queue at cfg's
 * captcha.fallbackBits: wr_api__solution_check under the fallback keys. */
wr_challenge_reason_t wr_api__captcha_fallback_check(wr_api_t *a, struct evhttp_request *req,
                                                     const wr_queue_config_t *cfg,
                                                     const char *queue, const char *caller,
                                                     char spend_id[WR_CHALLENGE_ID_LEN + 1],
                                                     int64_t *spend_exp_ms);

#define WR_API__CAPTCHA_VERDICT_MS 300000 /* a verified response stays good this long (API 1.3) */

/* The id under which the verdict on response (NUL-terminated) of caller
 * for the account user is remembered (wr_challenge_spent_id, kind
 * "captcha verdict v1"); false when there is no key to hash with. */
bool wr_api__captcha_verdict_id(wr_api_t *a, const char *caller, const char *user,
                                const char *response, char out[WR_CHALLENGE_ID_LEN + 1]);

/* Remembers for WR_API__CAPTCHA_VERDICT_MS, in queue's spent set, that the
 * provider accepted the response of verdict id (fire and forget: a store
 * that does not answer only costs a retry its verification). */
void wr_api__captcha_remember(wr_api_t *a, const char *queue, const char *id);

/* What the CAPTCHA gate goes on with (api_entries.c gives them): the
 * store's join once the gate lets the join through, the answer a join
 * gives (err and entry, as the store's join answers), the refusal with its
 * reason (the place of someone already there, else the 403). Each answers
 * and frees c. */
typedef struct wr_api__join_steps {
    void (*join)(wr_api__ctx_t *c);
    void (*answer)(wr_api__ctx_t *c, wr_err_t err, const wr_entry_t *e);
    void (*refused)(wr_api__ctx_t *c, wr_api__captcha_reason_t r);
} wr_api__join_steps_t;

/*
 * The CAPTCHA gate of a join of a queue with a captcha (c->user and
 * c->cookie set; caller: whom a fallback challenge is bound to): a solved
 * fallback challenge joins at once (steps->join, spending it); a widget
 * response goes to the provider only when no verdict on it is remembered
 * (WR_API__CAPTCHA_VERDICT_MS) and the join would get a place (API 1.3):
 * the person's status first (someone there is answered, nothing
 * verified), then the line when the queue has a maxQueueSize (full,
 * closed or sold out: answered); a store that does not answer is answered
 * before the provider under failPolicy closed or a brake of the known
 * config. None, or one of the wrong shape, is refused. Answers and frees
 * c, through steps.
 */
void wr_api__captcha_gate(wr_api__ctx_t *c, const wr_queue_config_t *cfg, const char *caller,
                          const wr_api__join_steps_t *steps);

/* Whether a join of a newcomer to the queue info describes will not get a
 * place (full, closed, sold out): fills *e (its answer) and *err (WR_OK,
 * or WR_EFULL) and returns true; false when it may. The CAPTCHA gate asks
 * before the provider (API 1.3). */
bool wr_api__captcha_no_place(const wr_queue_info_t *info, wr_entry_t *e, wr_err_t *err);

/* The answer of one verification: exactly once, from the event loop. */
typedef void (*wr_api__verify_cb)(wr_api__verify_outcome_t outcome, void *arg);

/*
 * Verifies a widget response (NUL-terminated, wr_captcha_response_ok) with
 * cfg's provider: one form POST of the secret, the response and remoteip
 * (the client's address; NULL or "" = none) to cfg's verify URL through
 * libevent's HTTP client (TLS for https://), never blocking the loop (host
 * names through evdns), within WR_API__CAPTCHA_TIMEOUT_MS, reading at most
 * WR_CAPTCHA_ANSWER_MAX bytes of answer. Counts the outcome in
 * waitroom_captcha_verifications_total{queue,outcome}. Returns WR_OK and
 * calls cb exactly once later (never inside this call), or WR_ELIMIT (too
 * many in flight), WR_EINVAL (a verify URL or response that is not one)
 * or WR_ENOMEM, and never calls cb. Everything it needs is copied.
 */
wr_err_t wr_api__captcha_verify(wr_api_t *a, const wr_queue_config_t *cfg, const char *queue,
                                const char *response, const char *remoteip, wr_api__verify_cb cb,
                                void *arg);

/* Counts an outcome that never reached the provider (busy) in
 * waitroom_captcha_verifications_total. */
void wr_api__captcha_count(wr_api_t *a, const char *queue, wr_api__verify_outcome_t outcome);

/*
 * Answers req 403 CHALLENGE_REQUIRED for a captcha refusal r of caller in
 * queue of config cfg: {"error","message","reason":"captcha...",
 * "captcha":{"provider","siteKey","scriptUrl"}} plus a fresh challenge
 * ("challenge","bits","expiresAt") when challengeBits > 0, or a fresh
 * fallback challenge (and "fallback":true) for captchaUnavailable under
 * fallback "challenge" with challengeBits 0. Sets the visitor cookie when
 * a new one was minted; counts the refusal.
 */
void wr_api__captcha_refuse(wr_api_t *a, struct evhttp_request *req, wr_route_t route,
                            const wr_queue_config_t *cfg, const char *queue,
                            wr_api__captcha_reason_t r);

/* `,"captcha":{"provider":...,"siteKey":...,"scriptUrl":...}` for cfg
 * with a captcha ("" without) into buf (cap bytes): what a 403 carries so
 * the client can show the widget. Returns the length, or -1. */
int wr_api__captcha_member(const wr_queue_config_t *cfg, char *buf, size_t cap);

/* "captchaMissing", "captchaInvalid", "captchaUnavailable" ("ok" for 0). */
const char *wr_api__captcha_reason_name(wr_api__captcha_reason_t r);

/* Derives the fallback challenge key of slot i (0 current, 1 previous)
 * from secret (len bytes, 0 = none). */
void wr_api__captcha_set_key(wr_api_t *a, int i, const uint8_t *secret, size_t len);

/* Frees the siteverify client and the fallback keys (wr_api_free). */
void wr_api__captcha_free(wr_api_t *a);

/* ---------- api_view.c ---------- */

/* A user's place, computed once from the store's entry and told either as
 * JSON (reply_entry) or as the queue page (page_entry_cb), api_entries.c. */
typedef struct {
    wr_entry_state_t state; /* WAITING, ADMITTED or PASSTHROUGH */
    /* WAITING */
    uint64_t position;       /* 1-based rank in line */
    uint64_t ahead;          /* people ahead: position - 1 */
    uint64_t waiting;        /* people in line */
    int64_t eta_seconds;     /* -1 = unknown (paused, or no config) */
    uint32_t retry_after_ms; /* next poll, jittered band; 0 = no config */
    bool held;               /* held (turn came while away): position 1, admitted next tick */
    const char *waiting_for; /* "stock" while admission waits only on stock (1.3: stock 0
                                with passes live; etaSeconds null), else NULL */
    /* ADMITTED */
    char token[WR_TOKEN_MAX + 1]; /* the signed JWT; "" when signing failed */
    int64_t expires_at_ms;        /* token expiry, ms since the epoch */
    /* any state */
    const char *target_url; /* the queue's targetUrl (borrowed from the entry), "" unset */
    /* degraded mode */
    bool degraded;  /* WAITING without the store: no position */
    bool fail_open; /* ADMITTED with a fail-open pass */
    /* PREQUEUE (sale opening): opensAt, epoch ms; retry_after_ms is the
     * countdown poll (wr_queue_prequeue_retry_ms) */
    int64_t opens_at_ms;
    /* The end of a sale (docs/API.md 1.2): CLOSED's reason (retry_after_ms
     * the slow re-check, wr_queue_closed_retry_ms); WAITING's stockLeft
     * (-1: no stock, left out); the operator's notice on every answer
     * (borrowed from the config, "" or NULL = none). */
    wr_close_reason_t closed_reason;
    int64_t stock_left;
    const char *notice;
} wr_api__entry_view_t;

/*
 * Fills v from e for c's queue and user: notes the queue's config with the
 * scheduler, draws the jittered retry of a waiting entry, signs the token
 * of an admitted one. Pacing is left to the caller. Returns WR_OK, or the
 * signing error (v->token is then "").
 */
wr_err_t wr_api__entry_view(wr_api__ctx_t *c, const wr_entry_t *e, wr_api__entry_view_t *v);

/*
 * The answer to a join / status / page join of c's user whose store call
 * failed with err, when the queue's fail policy lets this instance answer
 * alone: fills v (PASSTHROUGH for a disabled queue; PREQUEUE while the
 * known opensAt is ahead; WAITING degraded while paused; else ADMITTED with
 * a fail-open pass within the budget, WAITING degraded beyond it) and
 * returns true. Returns false when the caller answers err as before.
 */
bool wr_api__degraded_view(wr_api__ctx_t *c, wr_err_t err, wr_api__entry_view_t *v);

/* Renders the queue page of view v for req with status, dressed in cfg's
 * page (brand, logo, accent, default language; cfg NULL = none): v's web,
 * page and lang are set here (lang from ?lang= when it names one of the
 * page's languages, else Accept-Language with cfg's page.lang as the
 * fallback), and the Content-Security-Policy lets images come from the
 * logo's origin. */
void wr_api__reply_queue_page(wr_api_t *a, struct evhttp_request *req, wr_route_t route, int status,
                              wr_page_view_t *v, const wr_queue_config_t *cfg);

/* ---------- api_tokens.c ---------- */

/* POST .../tokens/consume, GET .../tokens/verify and POST .../tokens/release;
 * the queue is validated and the token secret is installed. Answers req
 * exactly once. */
wr_api__handler_fn wr_api__handle_tokens;

/* ---------- api_admin.c ---------- */

/* The admin API routes (WR_ROUTE_ADMIN_*); the queue is validated ("" for
 * the list) and the admin key was checked (WR_ROUTE_F_ADMIN_KEY). Answers
 * req exactly once. */
wr_api__handler_fn wr_api__handle_admin;

/* GET /readyz: 200 when the store answers a ping and a token secret is
 * installed, else 503. */
wr_api__handler_fn wr_api__handle_readyz;

/* GET /metrics: the Prometheus text (404 when metrics are disabled). */
wr_api__handler_fn wr_api__handle_metrics;

/* ---------- degraded mode (docs/API.md 1.1) ---------- */

/* True when err means the store could not be reached (WR_EUNAVAILABLE,
 * breaker open included, or WR_ETIMEOUT): the queue's failPolicy decides. */
bool wr_api__store_unreachable(wr_err_t err);

/* Counts one fail-open event of queue: name is
 * "waitroom_fail_open_admitted_total" or "waitroom_fail_open_consumed_total". */
void wr_api__count_fail_open(wr_api_t *a, const char *name, const char *queue);

/* GET /v1/admin/queues/{queue}/history[?since=EPOCH_MS]: the queue's
 * one-second history kept by this instance (history.h); the admin key was
 * checked. 404 QUEUE_NOT_FOUND when this instance does not know the queue. */
wr_api__handler_fn wr_api__handle_history;
/* POST /v1/queues/{queue}/health (autotune): the service's report; 204. */
wr_api__handler_fn wr_api__handle_health;

#endif
