/*
 * store.h - the storage interface: one async, atomic operation per domain
 * operation, behind a vtable, with static inline wrappers.
 *
 * Backends: store_redis (hiredis async, one Lua script call per operation)
 * and store_memory (embedded, in process). Both pass one contract test
 * suite (tests/store/).
 *
 * Async contract (libuv's): an operation that returns an error never calls
 * its callback; one that returns WR_OK calls it exactly once, from the event
 * loop, never from inside the call itself - also when the connection drops
 * (err = WR_EUNAVAILABLE), the command times out (WR_ETIMEOUT) or the store
 * is closed (WR_ECANCELED). Strings passed in are copied before the call
 * returns. Results passed to callbacks are borrowed until the callback
 * returns: copy what you keep.
 *
 * Time: every time is the store's clock (Redis TIME for store_redis, the
 * wall clock made strictly increasing for store_memory), in microseconds
 * since the epoch ("_us") unless the name says otherwise.
 */
#ifndef WR_STORE_H
#define WR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "base/ids.h"
#include "core/autotune.h"
#include "core/pushsub.h"
#include "core/qconfig.h"
#include "core/report.h"
#include "core/token.h"

#include "store/store_types.h"

typedef struct wr_store wr_store_t;

typedef struct wr_store_ops {
    const char *name; /* "redis", "memory" */
    /* true: operations run inside this process (no network, no other
     * server): a slow call means this process is short of CPU, not that the
     * store is failing, so the circuit breaker does not count latency
     * (store_breaker.h). */
    bool in_process;
    /* true: status records the user's last-seen time at no cost (a field
     * of the record the answer reads anyway) and status_quiet is status:
     * a caller need not remember whom it recorded (http's seen cache) */
    bool status_records_free;

    /*
     * join: puts user at the end of the line unless already there (the first
     * arrival time is kept: score = store time in us, strictly increasing).
     * cb gets WAITING (position, waiting), ADMITTED (live token: the answer
     * carries it, so the pass is seen from then on - see admit) or
     * PASSTHROUGH (queue disabled). Sale opening: before the config's
     * opensAt a new user goes to the pre-queue instead and gets PREQUEUE
     * (so does a status of someone there); once the opening has begun a
     * pre-queue member not yet moved is WAITING at the place the move will
     * give them (see admit), and everyone in line behind the pre-queue
     * counts the not yet moved. maxQueueSize counts line and pre-queue
     * together. entry->added is true when this call placed the user (in
     * the line, a group's line or the pre-queue), false for anyone
     * already there. Errors: WR_ENOTFOUND (no queue),
     * WR_EFULL (waiting >= maxQueueSize and user not in line; entry carries
     * waiting and config), WR_EUNAVAILABLE, WR_ETIMEOUT; WR_EREPLICA (Redis
     * durability mode: applied on the primary, which answered, but no
     * replica acknowledged it within the WAIT timeout; the entry stands).
     */
    wr_err_t (*join)(wr_store_t *s, const char *queue, const char *user, wr_store_entry_cb cb,
                     void *arg);
    /* status: like join but never adds; WR_ENOTINQUEUE when the user is
     * neither waiting nor holding a live token. Queue disabled: PASSTHROUGH.
     *
     * Away, not gone (idleTimeoutSeconds > 0, "T"; docs/API.md 1.2): join,
     * join_page and status of a waiting user set their last-seen time to
     * now (store clock) and clear their pending mark (join_page). A user
     * last seen T or more ago is away: they keep their place (nothing is
     * removed on read), except a pending page join, which is removed
     * (abandoned_total) and answered as one not in line. A held user
     * (see admit) who asks again has returned: WAITING with held set,
     * position 1, admitted first at the next tick that admits anyone; one
     * held awayHoldSeconds or longer is removed first (abandoned_total)
     * and answered as one not in line. */
    wr_err_t (*status)(wr_store_t *s, const char *queue, const char *user, wr_store_entry_cb cb,
                       void *arg);
    /* leave: removes the user from the line, or revokes their live token
     * (freeing the active slot at once; both counted in left_total); and
     * ends their open session (counted in released_total). WR_OK when it
     * removed anything, WR_ENOTINQUEUE otherwise. */
    wr_err_t (*leave)(wr_store_t *s, const char *queue, const char *user, wr_store_done_cb cb,
                      void *arg);
    /*
     * admit: one admission tick. Atomically: expire tokens past their expiry
     * (an unseen one - no join, join_page or status answered it ADMITTED -
     * sends its user back to held, held from its expiry, counted in
     * unseen_expired_total; docs/API.md 1.3; every sweep of tokens does
     * this, join and status too) and sessions past their end (counted in
     * sessions_expired_total),
     * compute the tick from the store clock (floor(now / tickMs)); if this tick
     * was already run (by any instance) admit nobody; else advance the
     * fractional budget (queue.h semantics), pop up to n users in arrival
     * order (n limited by the line and by maxActive - active, where active
     * counts live tokens and open sessions), give each a
     * token (jti, expiry = now + tokenTtlSeconds) and an active-set entry.
     * Away, not gone: a clock sweep looks at about WR_STORE_IDLE_VISIT_MAX
     * users per call from where the last one stopped (a shorter line
     * whole), marks away users (stats away) and removes pending page joins
     * idle T or longer, at most WR_STORE_IDLE_SWEEP_MAX (the rest on later
     * ticks). Returned held users take the tick's n first (in return
     * order; one away again is held anew from now). Then admission takes
     * the line in order, passing over pending page joins without moving
     * them and over away users, who become held (out of the line, held
     * from now), looking at no more than WR_STORE_ADMIT_SCAN_MAX users
     * beyond those it admits. Held users who have not returned
     * awayHoldSeconds after being held are removed (abandoned_total, at
     * most WR_STORE_IDLE_SWEEP_MAX per call). Held returns count in
     * returned_total; n counts them (rate and maxActive as for anyone).
     *
     * Sale opening: before opensAt nobody is admitted (no budget accrues).
     * From opensAt on (or at once when opensAt is null) the first call
     * begins the opening - the line scores just above everyone in line are
     * reserved for the pre-queue, below every later arrival - and every call
     * moves the next chunk of the pre-queue into the line (in its random
     * key order, or arrival order without preQueueShuffle), also while
     * paused and in a tick already run; res->opening_left > 0 asks the
     * caller to call again at once. Each chunk is atomic; while people are
     * still to move, admission takes only people below the moved part.
     */
    wr_err_t (*admit)(wr_store_t *s, const char *queue, wr_store_admit_cb cb, void *arg);
    /*
     * consume: atomically checks that jti is user's live token in queue and
     * deletes it (single use). WR_OK when consumed; WR_ETOKEN with reason
     * CONSUMED (not live) or EXPIRED; WR_ENOTFOUND; passthrough when the
     * queue is disabled (WR_OK, res->passthrough).
     * Sessions: with sessionSeconds > 0 the same step opens the user's
     * session (jti kept, ends at now + sessionSeconds, store clock); it
     * counts in active until release, leave or its end. One session per
     * user: a later consume by the same user replaces it.
     */
    wr_err_t (*consume)(wr_store_t *s, const char *queue, const char *user, const char *jti,
                        wr_store_token_cb cb, void *arg);
    /* verify: the same check as consume, without consuming; also WR_OK for
     * the jti of the user's open session (end > now), even past the token's
     * expiry; a session that ended answers CONSUMED. */
    wr_err_t (*verify)(wr_store_t *s, const char *queue, const char *user, const char *jti,
                       wr_store_token_cb cb, void *arg);
    /*
     * release: ends user's open session whose jti is jti: WR_OK (counted in
     * released_total; the active slot is free at once); WR_ETOKEN with
     * reason WR_TOKEN_NO_SESSION when there is none (never opened, another
     * jti, released, lapsed - a lapsed one not yet swept is removed then,
     * counted in sessions_expired_total); a live unconsumed token is left
     * untouched. WR_ENOTFOUND; passthrough when the queue is disabled.
     */
    wr_err_t (*release)(wr_store_t *s, const char *queue, const char *user, const char *jti,
                        wr_store_token_cb cb, void *arg);

    /*
     * burn (degraded mode, docs/API.md 1.1): records the fail-open pass jti
     * (1..WR_JTI_LEN base64url chars) of queue as spent until exp_us (the
     * pass's expiry, wall-clock us), across every instance; passes whose
     * expiry has passed are swept first (Redis: wr:{q}:burned ZSET). With
     * check_only the answer is the same but nothing is recorded (verify).
     * WR_OK when not burned before (now burned); WR_ETOKEN with reason
     * CONSUMED (burned already) or EXPIRED (exp_us <= store now: nothing
     * recorded); WR_ENOTFOUND (no queue). The queue's enabled flag is not
     * looked at (the API answers a disabled queue before the store).
     * queue_delete removes the set.
     * The join gates keep their single-use records in the same set, under
     * ids of the same alphabet (challenge.h wr_challenge_spent_id, never a
     * jti we issue): a solved challenge spent by the join it bought (API
     * 1.3, one place, once) and a CAPTCHA verdict the provider gave
     * (http/api_captcha.c), each until it may go.
     */
    wr_err_t (*burn)(wr_store_t *s, const char *queue, const char *jti, int64_t exp_us,
                     bool check_only, wr_store_token_cb cb, void *arg);
    /*
     * bypass (docs/API.md 1.3, "Bypass rules"): counts n (1..2^32) requests
     * a bypass rule let past the line in queue's stats (bypass_total),
     * across every instance, so that bypasses cannot hide load. WR_OK;
     * WR_ENOTFOUND (no queue). The queue's enabled flag is not looked at.
     * Redis: field bypassTotal of wr:{q}:state.
     */
    wr_err_t (*bypass)(wr_store_t *s, const char *queue, uint64_t n, wr_store_done_cb cb,
                       void *arg);

    /* config_put: creates or replaces the queue's config; the line, tokens
     * and counters are kept. Every instance sees it on its next operation.
     * A store with groups (join_group) keeps each group's line by name:
     * groups may be reordered or added; removing one that still has people
     * (line, held, a live pass) or live codes is WR_EGROUP, nothing changed. */
    wr_err_t (*config_put)(wr_store_t *s, const char *queue, const wr_queue_config_t *cfg,
                           wr_store_done_cb cb, void *arg);
    /* queue_get: config and stats; WR_ENOTFOUND. */
    wr_err_t (*queue_get)(wr_store_t *s, const char *queue, wr_store_info_cb cb, void *arg);
    /* queue_list: every queue, sorted by name. */
    wr_err_t (*queue_list)(wr_store_t *s, wr_store_list_cb cb, void *arg);
    /* queue_names (optional, NULL = queue_list stands in): the names of the
     * queues for discovery, cheaply (Redis: one SMEMBERS instead of a
     * queue_get per queue); each info has its name, config NULL and stats
     * zero, in no particular order, and a name may be stale (a queue just
     * deleted: its admit answers WR_ENOTFOUND). */
    wr_err_t (*queue_names)(wr_store_t *s, wr_store_list_cb cb, void *arg);
    /* queue_delete: removes the queue and all its state; WR_ENOTFOUND. */
    wr_err_t (*queue_delete)(wr_store_t *s, const char *queue, wr_store_done_cb cb, void *arg);

    /* secret: returns the shared token secret, storing `proposed` (len bytes)
     * first if none is stored yet (first writer wins). */
    wr_err_t (*secret)(wr_store_t *s, const uint8_t *proposed, size_t len, wr_store_secret_cb cb,
                       void *arg);
    /*
     * secret_sync (K31, a Redis restarted empty): an instance's periodic
     * check that the store still holds what it had, one call per second
     * at most. Atomically:
     * - epoch: stores `epoch` (1..WR_STORE_EPOCH_MAX bytes of [A-Za-z0-9],
     *   the caller's random marker) if the store holds none, and answers
     *   the stored one. A stored epoch that differs from the one the caller
     *   saw before means the store lost its data (or is another store).
     * - own (own_len > 0, the token secret the caller signs with, shared
     *   through the store): stored if the store holds no secret
     *   (set-if-absent: res->secret_restored); if another secret is stored,
     *   own becomes the store's previous secret (every instance then keeps
     *   accepting passes signed with it) and res->secret is the other one,
     *   for the caller to adopt. own_len 0 (a configured secret): the
     *   secrets are not touched and res->secret is NULL.
     * - res->previous: the store's previous secret, if any.
     * Redis: wr:epoch, wr:secret, wr:secret:previous. Errors: WR_EINVAL
     * (arguments), WR_EUNAVAILABLE, WR_ETIMEOUT.
     */
    wr_err_t (*secret_sync)(wr_store_t *s, const uint8_t *own, size_t own_len, const char *epoch,
                            wr_store_sync_cb cb, void *arg);
    /* ping: WR_OK when the store answers. */
    wr_err_t (*ping)(wr_store_t *s, wr_store_done_cb cb, void *arg);
    /*
     * unreachable (may be NULL: a store of one piece, which ping covers):
     * the parts of a sharded store (Redis Cluster primaries) that cannot
     * be reached now, one per line ("127.0.0.1:7001 (slots 0-5460)\n"),
     * into out (cap bytes, NUL-terminated, cut to fit). Returns how many;
     * 0 and "" when all are reachable. Synchronous, from what the store
     * knows (its connections), no I/O.
     */
    size_t (*unreachable)(wr_store_t *s, char *out, size_t cap);

    /*
     * join_page: the join of a visitor who fetched the queue page
     * (GET /q/{queue}). Like join, but a user it adds is pending: the
     * entry keeps its place and counts in waiting, but admit passes over
     * it until the user's next join, join_page or status (a link scanner
     * that fetched once is never admitted). A pending user who never comes
     * back is removed idleTimeoutSeconds after the fetch (never held). Of a user
     * already in line: the same as join (touches, clears pending).
     */
    wr_err_t (*join_page)(wr_store_t *s, const char *queue, const char *user, wr_store_entry_cb cb,
                          void *arg);
    /*
     * status_quiet: status that may leave the user's last-seen time as it
     * is. For a caller that sent a join or status of this user (not a
     * join_page) which was answered WAITING less than
     * wr_store_seen_window_us(config) ago by its own monotonic clock,
     * measured from before that call: the store's idle rule allows that
     * much staleness (store_redis records nothing then; store_memory
     * records as status does). Same answers as status otherwise.
     */
    wr_err_t (*status_quiet)(wr_store_t *s, const char *queue, const char *user,
                             wr_store_entry_cb cb, void *arg);

    /*
     * join_group (optional, NULL = the store serves no priority groups: a
     * config with groups cannot be put; docs/API.md 1.3, "Priority groups
     * and presale codes"): join (or join_page, j->page) into a group. With
     * j->group (an invite's grp) the person joins that group; else with
     * j->code_hash the code is checked and one use spent in the same atomic
     * step as the place it buys: refused (unknown - no such code of this
     * queue, or its group is not in the config any more -, used up,
     * revoked, expired at the store's clock) the answer is WR_ECODE with
     * entry->code_reason, nothing changed. Someone who already has a place
     * (line, pre-queue, held) or a live pass gets their normal answer
     * whatever they send, in the line they have, and spends nothing. With
     * neither, the same as join / join_page. A group member is in their
     * group's line (before opensAt too: groups are ordered by arrival and
     * admitted from the opening on; the entry answers PREQUEUE until then).
     * With j->check_only nothing is added or spent: someone with a place
     * or a pass gets status's answer, anyone else WR_ECODE (the code would
     * be refused: entry->code_reason) or WR_ENOTINQUEUE (it would buy a
     * place) - the API asks before it spends a solved challenge.
     */
    wr_err_t (*join_group)(wr_store_t *s, const char *queue, const char *user,
                           const wr_store_join_t *j, wr_store_entry_cb cb, void *arg);

    /*
     * codes (optional with join_group): presale codes of queue, kept
     * hashed (the code itself is never given to the store). CREATE keeps
     * req->n new hashes for req->group, each good for req->uses joins
     * until req->expires_at_ms; LIST reads; REVOKE marks one revoked (a
     * revoked code spends no more; a second revoke is WR_OK). Every kind
     * answers the per-group counts after it. Errors: WR_ENOTFOUND (no
     * queue), WR_EINVAL (arguments; a group not in the config; a hash
     * already kept), WR_ECODE (REVOKE: no such code), WR_ENOMEM, store
     * failures.
     */
    wr_err_t (*codes)(wr_store_t *s, const char *queue, const wr_store_codes_req_t *req,
                      wr_store_codes_cb cb, void *arg);

    /*
     * autotune: the queue's autotune state, cluster-wide, in one atomic
     * step: records req's report (if any), then compare-and-sets the rate
     * in use (if req->set: only when the kept step time equals
     * expect_step_us; res->applied says whether it did), and answers the
     * state after. The admission tick of a queue whose config has autotune
     * uses the kept rate (clamped into the config's bounds), or the
     * starting rate while none is kept (wr_store_rate_in_use). A
     * config_put that changes the autotune object (or removes it) drops
     * the kept rate and step (the line starts again); queue_delete drops
     * everything. Errors: WR_EINVAL (arguments), WR_ENOTFOUND,
     * WR_EUNAVAILABLE, WR_ETIMEOUT. Redis: fields autoRate, autoStep,
     * autoCut, rep0, rep1 of wr:{q}:state.
     */
    wr_err_t (*autotune)(wr_store_t *s, const char *queue, const wr_autotune_req_t *req,
                         wr_store_autotune_cb cb, void *arg);

    /*
     * The public log (docs/API.md 1.3). All six may be NULL: a store that
     * keeps no log (publicLog is refused on it); log_beacon alone may be
     * NULL: a store that runs no opening draw (a shuffled opening with
     * publicLog is refused on it; both stores run it). A store that keeps one
     * appends each queue's leaves in the same atomic step as the change
     * they log, keeps every complete subtree's hash by (level, index)
     * (base/tlog.h) and the latest signed checkpoint, and keeps a queue's
     * log after the queue is deleted (a queue created again continues
     * it).
     * - log_key: the log's signing key (an Ed25519 seed), storing proposed
     *   first if none is kept (first writer wins); res->key.
     * - log_head: size, root, the latest checkpoint, broken/forked, enabled.
     *   WR_ENOTFOUND when there is no log to show (never had one, or the
     *   queue exists with publicLog off).
     * - log_read: req's leaves and hashes (res->leaves, res->hashes).
     *   WR_EINVAL for a range or node past the log (or end < start, more
     *   than 1,000 leaves); WR_ENOTFOUND as log_head.
     * - log_publish: keeps note (a signed checkpoint of len bytes, at most
     *   1,024) of the tree of size leaves with root root as the latest,
     *   when size is at least the kept checkpoint's, at most the log's
     *   size, and root is the root of the first size leaves: else
     *   WR_EINVAL (nothing kept). Answers the head after.
     * - log_unsigned: the names of the logs with leaves past their
     *   checkpoint, or none yet (res->names), for the signer; and the
     *   queues whose opening waits for its beacon (res->beacon_*).
     * - log_beacon: the beacon's answer for queue's opening draw: the
     *   randomness (len 1..64 bytes) of round, or error (a short text,
     *   randomness NULL): the first answer is kept, for the draw. WR_OK;
     *   WR_ENOTFOUND when no opening of queue waits for round.
     */
    wr_err_t (*log_key)(wr_store_t *s, const uint8_t proposed[32], wr_store_log_cb cb, void *arg);
    wr_err_t (*log_head)(wr_store_t *s, const char *queue, wr_store_log_cb cb, void *arg);
    wr_err_t (*log_read)(wr_store_t *s, const char *queue, const wr_log_read_t *req,
                         wr_store_log_cb cb, void *arg);
    wr_err_t (*log_publish)(wr_store_t *s, const char *queue, uint64_t size, const uint8_t root[32],
                            const char *note, size_t len, wr_store_log_cb cb, void *arg);
    wr_err_t (*log_unsigned)(wr_store_t *s, wr_store_log_cb cb, void *arg);
    wr_err_t (*log_beacon)(wr_store_t *s, const char *queue, uint64_t round,
                           const uint8_t *randomness, size_t len, const char *error,
                           wr_store_log_cb cb, void *arg);

    /*
     * push_sub (optional, NULL = the store keeps no Web Push subscription:
     * a queue's push cannot be turned on): sets (sub non-NULL, copied;
     * replacing any) or deletes (sub NULL) user's subscription in queue,
     * after a status of user (their last-seen time, as a poll). Only for a
     * person waiting, in the pre-queue or held: WR_ENOTINQUEUE otherwise
     * (admitted people too); WR_ENOTFOUND (no queue), WR_EINVAL, store
     * failures. A subscribed person is never away; leave deletes it;
     * admit claims it (wr_admit_t.pushes).
     */
    wr_err_t (*push_sub)(wr_store_t *s, const char *queue, const char *user,
                         const wr_pushsub_t *sub, wr_store_done_cb cb, void *arg);

    /*
     * report (docs/API.md 1.3, "The sale's report"; core/report.h): the
     * per-minute data of the queues' reports, kept per queue and day
     * apart from the queue's state (queue_delete leaves it; the day's
     * map goes at expire_at_ms), and the registry of queues with a
     * report. WRITE adds req->adds and sets req->sample (see
     * wr_store_report_req_t) in one atomic step and answers, with a
     * sample, the pair ("exists", "1" or "0": whether the queue exists),
     * else no pairs; READ answers the day's map; INDEX without a queue
     * answers every entry; with one, answers its entry alone (lookup) or
     * updates it (first_ms kept from the first update, deleted_ms
     * replaced) and answers no pairs. Errors: WR_EINVAL (arguments),
     * WR_EUNAVAILABLE, WR_ETIMEOUT. Redis: the hash wr:{q}:report:<day>,
     * the hash wr:reports (wr:{.global}:reports on a cluster).
     */
    wr_err_t (*report)(wr_store_t *s, const wr_store_report_req_t *req, wr_store_report_cb cb,
                       void *arg);

    /* Test hook: moves the store's clock forward by us microseconds (memory
     * store); NULL where unsupported (Redis). */
    wr_err_t (*debug_advance_time)(wr_store_t *s, int64_t us);

    /* close: calls every pending callback synchronously with WR_ECANCELED
     * (the one exception to "never from inside a call"), then frees. */
    void (*close)(wr_store_t *s);
} wr_store_ops_t;

/* Every backend's struct starts with this header. */
struct wr_store {
    const wr_store_ops_t *ops;
};

/*
 * The argument rules of the interface, the same in every backend: an
 * operation answers WR_EINVAL, before any work, when its queue name
 * (wr_ids_valid_queue), its user id (wr_ids_valid_user), its callback, or
 * one of these fails.
 */
/* A jti to look up: a string of at most WR_TOKEN_MAX chars (one of ours or
 * not: a foreign one is simply not live). */
static inline bool wr_store_valid_jti(const char *jti)
{
    return jti && strnlen(jti, WR_TOKEN_MAX + 1) <= WR_TOKEN_MAX;
}

/*
 * The quiet rule (K29): an admit answer that leaves nothing for the next
 * ticks to do - nobody waiting (line or pre-queue, an opening's people
 * included), nothing active (no live token, no open session, so nothing
 * to expire), no opening chunk left, nobody held (a held person's return
 * is admitted by a tick, and awayHoldSeconds is enforced by ticks). With
 * an empty line no budget accrues and no idle sweep has anybody to look
 * at, so skipping such a queue's ticks changes nothing until somebody
 * arrives (scheduler.c).
 */
static inline bool wr_store_admit_quiet(const wr_admit_t *res)
{
    if (!res || res->stats.active != 0 || res->stats.sessions != 0 || res->opening_left != 0)
        return false;
    /* The end of a sale: a closed or sold-out queue admits nobody and
     * accrues no budget, and with nothing live nothing can expire or come
     * back, so its line (kept as it is) is no work for the ticks until a
     * PATCH of closed or stock wakes it (wr_scheduler_set_config) or a
     * request of it does. */
    if (res->config && (res->config->closed || res->stats.stock_left == 0))
        return true;
    return res->stats.waiting == 0 && res->stats.prequeue == 0 && res->stats.held == 0;
}

/* A proposed token secret: 1..WR_SECRET_MAX bytes. */
static inline bool wr_store_valid_secret(const void *secret, size_t len)
{
    return secret && len >= 1 && len <= WR_SECRET_MAX;
}

/* A config to store: a tick and a rate every reader can compute with
 * (wr_qconfig_parse checks the documented ranges, which are narrower). */
static inline bool wr_store_valid_config(const wr_queue_config_t *cfg)
{
    return cfg && cfg->tick_ms >= 1 && cfg->admit_per_second >= 0 && cfg->admit_per_second <= 1e9;
}

/* A valid autotune request (store.h autotune). */
static inline bool wr_store_valid_autotune(const wr_autotune_req_t *req)
{
    if (!req)
        return false;
    if (req->report && (req->source < 0 || req->source >= WR_AUTOTUNE_SOURCES ||
                        !wr_autotune_report_valid(req->latency_ms, req->error_rate)))
        return false;
    return !req->set || (req->rate > 0 && req->rate <= WR_AUTOTUNE_RATE_MAX &&
                         req->expect_step_us >= 0 && req->cut_latency_ms >= 0);
}

/* The admission rate in use of a queue with config cfg whose store keeps
 * rate kept (0 = none): cfg's rate without autotune; with it, kept clamped
 * into [min, max], or the starting rate (wr_autotune_start_rate of
 * admitPerSecond) while none is kept. scripts/admit.lua computes the same. */
static inline double wr_store_rate_in_use(const wr_queue_config_t *cfg, double kept)
{
    if (!cfg->has_autotune)
        return cfg->admit_per_second;
    wr_autotune_cfg_t a = {cfg->autotune_min, cfg->autotune_max, cfg->autotune_target_ms};
    return wr_autotune_start_rate(&a, kept > 0 ? kept : cfg->admit_per_second);
}

/* The report's sample of a queue with stats st (core/report.h), taken at
 * t_ms (epoch ms), the admission rate in use rate. */
static inline wr_report_sample_t wr_store_report_sample(const wr_queue_stats_t *st, int64_t t_ms,
                                                        double rate)
{
    return (wr_report_sample_t){t_ms,
                                st->consumed_total,
                                st->expired_total,
                                st->left_total,
                                st->rejected_full_total,
                                st->abandoned_total,
                                st->returned_total,
                                st->waiting,
                                st->away,
                                rate};
}

/* A valid report request (store.h report). */
static inline bool wr_store_valid_report(const wr_store_report_req_t *req)
{
    if (!req)
        return false;
    switch (req->kind) {
    case WR_STORE_REPORT_WRITE:
        if (req->n_adds > WR_STORE_REPORT_ADDS_MAX || (req->n_adds && !req->adds))
            return false;
        for (size_t i = 0; i < req->n_adds; i++)
            if (!req->adds[i].field || strnlen(req->adds[i].field, 24) >= 24)
                return false;
        if (req->sample &&
            (strnlen(req->sample, 24) >= 24 || (req->sample[0] != 's' && req->sample[0] != 'e') ||
             !(req->rate >= 0 && req->rate <= 1e9)))
            return false;
        /* fall through */
    case WR_STORE_REPORT_READ:
        return req->queue && req->day >= 0;
    case WR_STORE_REPORT_INDEX:
        return !req->queue || req->lookup || req->first_ms >= 0;
    }
    return false;
}

static inline wr_err_t wr_store_report(wr_store_t *s, const wr_store_report_req_t *req,
                                       wr_store_report_cb cb, void *arg)
{
    if (!s->ops->report)
        return WR_EINVAL;
    return s->ops->report(s, req, cb, arg);
}

static inline wr_err_t wr_store_autotune(wr_store_t *s, const char *q, const wr_autotune_req_t *req,
                                         wr_store_autotune_cb cb, void *arg)
{
    return s->ops->autotune(s, q, req, cb, arg);
}

static inline wr_err_t wr_store_join(wr_store_t *s, const char *q, const char *u,
                                     wr_store_entry_cb cb, void *arg)
{
    return s->ops->join(s, q, u, cb, arg);
}
static inline wr_err_t wr_store_join_page(wr_store_t *s, const char *q, const char *u,
                                          wr_store_entry_cb cb, void *arg)
{
    return s->ops->join_page(s, q, u, cb, arg);
}
static inline wr_err_t wr_store_status_quiet(wr_store_t *s, const char *q, const char *u,
                                             wr_store_entry_cb cb, void *arg)
{
    return s->ops->status_quiet(s, q, u, cb, arg);
}
/* Whether s's status_quiet saves anything (ops->status_records_free
 * false): a caller keeps its seen cache only then. */
static inline bool wr_store_quiet_saves(const wr_store_t *s)
{
    return s && !s->ops->status_records_free;
}

/* The staleness a store's last-seen time may have (see status_quiet), us:
 * a quarter of idleTimeoutSeconds, or 30 s when it is 0 (src/store/redis/scripts/lib.lua
 * computes the same). */
static inline int64_t wr_store_seen_window_us(const wr_queue_config_t *cfg)
{
    return cfg->idle_timeout_seconds > 0 ? (int64_t)cfg->idle_timeout_seconds * 250000 : 30000000;
}

static inline wr_err_t wr_store_status(wr_store_t *s, const char *q, const char *u,
                                       wr_store_entry_cb cb, void *arg)
{
    return s->ops->status(s, q, u, cb, arg);
}
static inline wr_err_t wr_store_leave(wr_store_t *s, const char *q, const char *u,
                                      wr_store_done_cb cb, void *arg)
{
    return s->ops->leave(s, q, u, cb, arg);
}
static inline wr_err_t wr_store_admit(wr_store_t *s, const char *q, wr_store_admit_cb cb, void *arg)
{
    return s->ops->admit(s, q, cb, arg);
}
static inline wr_err_t wr_store_consume(wr_store_t *s, const char *q, const char *u,
                                        const char *jti, wr_store_token_cb cb, void *arg)
{
    return s->ops->consume(s, q, u, jti, cb, arg);
}
static inline wr_err_t wr_store_verify(wr_store_t *s, const char *q, const char *u, const char *jti,
                                       wr_store_token_cb cb, void *arg)
{
    return s->ops->verify(s, q, u, jti, cb, arg);
}
static inline wr_err_t wr_store_release(wr_store_t *s, const char *q, const char *u,
                                        const char *jti, wr_store_token_cb cb, void *arg)
{
    return s->ops->release(s, q, u, jti, cb, arg);
}

/* Degraded mode: see burn above. */
static inline wr_err_t wr_store_burn(wr_store_t *s, const char *q, const char *jti, int64_t exp_us,
                                     bool check_only, wr_store_token_cb cb, void *arg)
{
    return s->ops->burn(s, q, jti, exp_us, check_only, cb, arg);
}
/* Bypass rules: see bypass above. */
static inline wr_err_t wr_store_bypass(wr_store_t *s, const char *q, uint64_t n,
                                       wr_store_done_cb cb, void *arg)
{
    return s->ops->bypass(s, q, n, cb, arg);
}
/* A bypass count: 1..WR_STORE_BYPASS_MAX. */
#define WR_STORE_BYPASS_MAX UINT64_C(4294967296)
static inline bool wr_store_valid_bypass(uint64_t n)
{
    return n >= 1 && n <= WR_STORE_BYPASS_MAX;
}
static inline wr_err_t wr_store_config_put(wr_store_t *s, const char *q,
                                           const wr_queue_config_t *cfg, wr_store_done_cb cb,
                                           void *arg)
{
    return s->ops->config_put(s, q, cfg, cb, arg);
}
static inline wr_err_t wr_store_queue_get(wr_store_t *s, const char *q, wr_store_info_cb cb,
                                          void *arg)
{
    return s->ops->queue_get(s, q, cb, arg);
}
static inline wr_err_t wr_store_queue_list(wr_store_t *s, wr_store_list_cb cb, void *arg)
{
    return s->ops->queue_list(s, cb, arg);
}
/* queue_names, or queue_list when the store has no cheaper list. */
static inline wr_err_t wr_store_queue_names(wr_store_t *s, wr_store_list_cb cb, void *arg)
{
    return s->ops->queue_names ? s->ops->queue_names(s, cb, arg) : s->ops->queue_list(s, cb, arg);
}
static inline wr_err_t wr_store_queue_delete(wr_store_t *s, const char *q, wr_store_done_cb cb,
                                             void *arg)
{
    return s->ops->queue_delete(s, q, cb, arg);
}
static inline wr_err_t wr_store_secret(wr_store_t *s, const uint8_t *proposed, size_t len,
                                       wr_store_secret_cb cb, void *arg)
{
    return s->ops->secret(s, proposed, len, cb, arg);
}
/* A valid epoch marker for secret_sync: 1..WR_STORE_EPOCH_MAX letters and digits. */
static inline bool wr_store_valid_epoch(const char *epoch)
{
    size_t n = epoch ? strnlen(epoch, WR_STORE_EPOCH_MAX + 1) : 0;
    return wr_ids_valid_alnum_n(epoch, n, WR_STORE_EPOCH_MAX);
}
static inline wr_err_t wr_store_secret_sync(wr_store_t *s, const uint8_t *own, size_t own_len,
                                            const char *epoch, wr_store_sync_cb cb, void *arg)
{
    return s->ops->secret_sync(s, own, own_len, epoch, cb, arg);
}
/* The public log (see the ops): WR_ENOTFOUND (no callback) when the store keeps none. */
static inline bool wr_store_has_log(const wr_store_t *s)
{
    return s && s->ops->log_head != NULL;
}

/* The store serves priority groups and presale codes (join_group, codes). */
static inline bool wr_store_has_groups(const wr_store_t *s)
{
    return s && s->ops->join_group != NULL && s->ops->codes != NULL;
}
static inline wr_err_t wr_store_join_group(wr_store_t *s, const char *q, const char *u,
                                           const wr_store_join_t *j, wr_store_entry_cb cb,
                                           void *arg)
{
    return s->ops->join_group ? s->ops->join_group(s, q, u, j, cb, arg) : WR_EINVAL;
}
static inline wr_err_t wr_store_codes(wr_store_t *s, const char *q, const wr_store_codes_req_t *req,
                                      wr_store_codes_cb cb, void *arg)
{
    return s->ops->codes ? s->ops->codes(s, q, req, cb, arg) : WR_EINVAL;
}

/* The store runs the opening draw of a public log (log_beacon; both
 * stores): without it a shuffled opening cannot be logged. */
static inline bool wr_store_has_draw(const wr_store_t *s)
{
    return s && s->ops->log_beacon != NULL;
}
static inline wr_err_t wr_store_log_key(wr_store_t *s, const uint8_t proposed[32],
                                        wr_store_log_cb cb, void *arg)
{
    return s->ops->log_key ? s->ops->log_key(s, proposed, cb, arg) : WR_ENOTFOUND;
}
static inline wr_err_t wr_store_log_head(wr_store_t *s, const char *q, wr_store_log_cb cb,
                                         void *arg)
{
    return s->ops->log_head ? s->ops->log_head(s, q, cb, arg) : WR_ENOTFOUND;
}
static inline wr_err_t wr_store_log_read(wr_store_t *s, const char *q, const wr_log_read_t *req,
                                         wr_store_log_cb cb, void *arg)
{
    return s->ops->log_read ? s->ops->log_read(s, q, req, cb, arg) : WR_ENOTFOUND;
}
static inline wr_err_t wr_store_log_publish(wr_store_t *s, const char *q, uint64_t size,
                                            const uint8_t root[32], const char *note, size_t len,
                                            wr_store_log_cb cb, void *arg)
{
    return s->ops->log_publish ? s->ops->log_publish(s, q, size, root, note, len, cb, arg)
                               : WR_ENOTFOUND;
}
static inline wr_err_t wr_store_log_unsigned(wr_store_t *s, wr_store_log_cb cb, void *arg)
{
    return s->ops->log_unsigned ? s->ops->log_unsigned(s, cb, arg) : WR_ENOTFOUND;
}
static inline wr_err_t wr_store_log_beacon(wr_store_t *s, const char *q, uint64_t round,
                                           const uint8_t *randomness, size_t len, const char *error,
                                           wr_store_log_cb cb, void *arg)
{
    return s->ops->log_beacon ? s->ops->log_beacon(s, q, round, randomness, len, error, cb, arg)
                              : WR_ENOTFOUND;
}
static inline wr_err_t wr_store_ping(wr_store_t *s, wr_store_done_cb cb, void *arg)
{
    return s->ops->ping(s, cb, arg);
}
static inline size_t wr_store_unreachable(wr_store_t *s, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    return s->ops->unreachable ? s->ops->unreachable(s, out, cap) : 0;
}
/* True when the store keeps Web Push subscriptions (push_sub). */
static inline bool wr_store_has_push(const wr_store_t *s)
{
    return s->ops->push_sub != NULL;
}
static inline wr_err_t wr_store_push_sub(wr_store_t *s, const char *q, const char *u,
                                         const wr_pushsub_t *sub, wr_store_done_cb cb, void *arg)
{
    return s->ops->push_sub ? s->ops->push_sub(s, q, u, sub, cb, arg) : WR_EINVAL;
}
static inline void wr_store_close(wr_store_t *s)
{
    if (s)
        s->ops->close(s);
}

#endif
