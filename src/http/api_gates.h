/*
 * api_gates.h - the join's gates of the api module (api_internal.h has
 * the layers): bypass rules (api_bypass.c, the gate's too), join
 * challenges (api_challenge.c) and the CAPTCHA hook (api_captcha.c),
 * presale codes (api_codes.c), what the join (api_entries.c) asks of them
 * and the steps it hands the CAPTCHA gate to go on with
 * (wr_api__join_steps_t: called back, never included upward), one 403 for
 * both gates, and the keys api.c installs. Included by those files only.
 */
#ifndef WR_API_GATES_H
#define WR_API_GATES_H

#include "http/api_internal.h"
#include "core/captcha.h"

/* ---------- api_codes.c ---------- */

/*
 * The presale code gate of a join (API 1.3, "Priority groups and presale
 * codes"), run right before the store's join (after the invite, challenge
 * and CAPTCHA gates, before a solved challenge is spent; and again before
 * it is spent): the code is POST entries' body "code" (a string; another
 * type is 400 BAD_REQUEST, field code) or the queue page's ?code=.
 *   - On a store with groups (wr_store_has_groups) a code of a code's
 *     spelling is hashed into c->code_hash for the store's join_group
 *     (refused there: WR_ECODE to entry), unless the invite's grp
 *     (c->group) wins; when a solved challenge is to be spent
 *     (c->spend_id), the store's verdict is asked first (check_only): a
 *     refused code goes to entry as WR_ECODE, anything else calls go(c),
 *     the join again (the gate lets it through then).
 *   - Anything else with a code (no store groups, not a code's spelling)
 *     asks the store for the person's place: one in line, in the
 *     pre-queue, held or holding a pass gets the answer a join gives them
 *     (entry with the status read's result, also its error); anyone else
 *     entry(WR_ECODE, NULL): 403 CODE_INVALID reason unknown, nothing
 *     changed.
 * entry: the route's answer of a store entry. Returns true when it took c
 * (answered, or asked the store: c answered and freed later, or go called),
 * false when the join goes on now (no code, null, another route, a code
 * for join_group).
 */
bool wr_api__code_gate(wr_api__ctx_t *c, wr_store_entry_cb entry, void (*go)(wr_api__ctx_t *c));

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
bool wr_api__join_body(wr_http_req_t *req, json_t **out);

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
wr_challenge_reason_t wr_api__solution_check(wr_api_t *a, wr_http_req_t *req,
                                             wr_challenge_key_t *const *keys, unsigned bits,
                                             const char *queue, const char *caller,
                                             char spend_id[WR_CHALLENGE_ID_LEN + 1],
                                             int64_t *spend_exp_ms);

/* wr_api__solution_check under the challenge keys at cfg's current bits;
 * WR_CHALLENGE_OK (spend_id "") when cfg needs none
 * (wr_api__challenge_required). */
wr_challenge_reason_t wr_api__challenge_check(wr_api_t *a, wr_http_req_t *req,
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
void wr_api__gate_refuse(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
                         const wr_queue_config_t *cfg, const char *queue, const char *reason,
                         const char *message, bool challenge, wr_challenge_key_t *key,
                         unsigned bits, bool fallback, int retry_s);

/* Answers req 403 CHALLENGE_REQUIRED with reason r and a fresh challenge
 * (challenge, bits, expiresAt) bound to the caller as the challenge route
 * sees it (wr_api__gate_refuse). */
void wr_api__challenge_refuse(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
                              const wr_queue_config_t *cfg, const char *queue,
                              wr_challenge_reason_t r);

/* ---------- api_bypass.c ---------- */

/* The first bypass rule of cfg (NULL, or a queue that is off: none) that
 * req matches: header fields, the client address through trusted
 * proxies, and with gate (GET tokens/verify) X-Original-URI from a trusted
 * proxy. NULL when none does. */
const wr_bypass_rule_t *wr_api__bypass_match(wr_api_t *a, wr_http_req_t *req,
                                             const wr_queue_config_t *cfg, bool gate);

/* The gate's bypass by rule: counted (this instance's metric, the
 * store's count), then 204 with X-Waitroom-Bypass: <name>. */
void wr_api__bypass_gate(wr_api_t *a, wr_http_req_t *req, const char *queue,
                         const wr_bypass_rule_t *rule);

/* A join (POST entries) of queue with config cfg: when a header or cidr
 * rule matches req, counts it, answers 200 {"status":"passthrough",
 * "bypass":"<name>","token":"<pass>"} (the pass's sub: the caller as a
 * join resolves it; in header mode "bypass:<name>" without a valid
 * identity header) and returns true; false (nothing answered) otherwise. */
bool wr_api__bypass_join(wr_api_t *a, wr_http_req_t *req, const char *queue,
                         const wr_queue_config_t *cfg);

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
int wr_api__captcha_read(wr_http_req_t *req, char out[WR_CAPTCHA_RESPONSE_MAX + 1]);

/* A solved fallback challenge in the join's body ({"challenge","nonce"}
 * issued by a 403 captchaUnavailable) for caller in queue at cfg's
 * captcha.fallbackBits: wr_api__solution_check under the fallback keys. */
wr_challenge_reason_t wr_api__captcha_fallback_check(wr_api_t *a, wr_http_req_t *req,
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
void wr_api__captcha_refuse(wr_api_t *a, wr_http_req_t *req, wr_route_t route,
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

/* Frees the fallback keys (wr_api_free). */
void wr_api__captcha_free(wr_api_t *a);

#endif
