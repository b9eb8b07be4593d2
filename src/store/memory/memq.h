/*
 * memq.h - the queue model of the embedded store (store_memory.c): one
 * queue's state - its config, the waiting line, the admitted users' tokens
 * with their expiry heap, the admission budget and the counters - with the
 * per-queue operations on it (join/status, leave, admission tick,
 * consume/verify), and the set of queues with the signing secret
 * (wr_memq_db_t: everything a snapshot holds, mem_snapshot.h).
 *
 * memq is to store_memory.c what the Lua scripts are to store_redis.c: the
 * state and each operation's effect on it and answer, computed at once.
 * store_memory.c adds the argument checks, the clocks, the deferred
 * callbacks and the snapshot timers. Pure: no I/O, no clock (callers pass
 * times in), no libevent, not thread-safe.
 *
 * Times are wall-clock microseconds since the epoch, chosen by the caller.
 * Operations that change what a snapshot holds set *dirty to true (they
 * never clear it), so the caller knows when a snapshot is due.
 */
#ifndef WR_MEMQ_H
#define WR_MEMQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/idhash.h"
#include "core/pushsub.h"
#include "core/qconfig.h"
#include "core/queue.h"
#include "base/rng.h"
#include "store/store.h"
#include "core/token.h"
#include "store/memory/zsl.h"

/* A queue's config, immutable and shared by reference count: a queue holds
 * one reference; a pending answer that points at the config holds another,
 * so the config outlives a config_put or a delete of its queue. */
typedef struct {
    unsigned refs;
    wr_queue_config_t cfg;
} wr_memq_cfg_t;

/* Adds a reference to c and returns c. */
wr_memq_cfg_t *wr_memq_cfg_ref(wr_memq_cfg_t *c);

/* Drops a reference; the last one frees c. NULL is ok. */
void wr_memq_cfg_unref(wr_memq_cfg_t *c);

/* The live token of an admitted user. Held by its queue (tokens and heap). */
typedef struct {
    int64_t iat_us; /* issued at */
    int64_t exp_us; /* expires at; the token is dead from exp_us on */
    size_t heap_idx;
    char jti[WR_JTI_LEN + 1];
    uint8_t idlen;
    bool seen;          /* a pass: an answer carried it to its holder (entry ADMITTED);
                           false from its admission until then (wr_memq_sweep) */
    uint64_t log_index; /* the public log: the holder's join leaf (an unseen expiry
                           puts them back in the log's line), UINT64_MAX none */
    int8_t slot;        /* the holder's priority group (memq_group.c), -1 the standard line */
    char id[];          /* the user id, NUL-terminated */
} wr_memq_token_t;

/* A priority group of a queue (config groups; memq_group.c), in a slot of
 * the queue that stays the group's while its name is in the config. */
typedef struct {
    char name[WR_GROUP_NAME_MAX + 1];
    wr_zsl_t *line;      /* (arrival score, user id) of the group's people, in line order */
    int64_t idle_cursor; /* the away sweep's place in line (a score) */
    uint64_t admitted_total;
    uint64_t codes_issued, codes_spent, codes_revoked; /* its presale codes (GET .../codes) */
} wr_memq_group_t;

/* A presale code, kept by its hash (memq_group.c): codes. */
typedef struct {
    int64_t expires_ms; /* epoch ms (store clock), -1 never */
    uint32_t uses, spent;
    int8_t slot; /* its group's slot */
    bool revoked;
    uint8_t idlen;                 /* WR_CODE_HASH_HEX */
    char id[WR_CODE_HASH_HEX + 1]; /* the hash, lowercase hex, NUL-terminated */
} wr_memq_code_t;

/* Seconds of admissions per line kept for the ETA rate (groups). */
#define WR_MEMQ_RATE_SECONDS 60

/*
 * One queue. Callers read every field; they may write the counters,
 * version, last_score and budget (a snapshot load restores them), never
 * line, waiting, tokens or heap, which only the functions below change.
 *
 * Invariants: a user is in at most one of line and tokens; waiting indexes
 * exactly the nodes of line; every token is in both tokens and heap; the
 * active count is heap_n; last_score >= every score in line.
 */
typedef struct {
    char name[WR_QUEUE_NAME_MAX + 1];
    wr_memq_cfg_t *cfg;     /* one reference held */
    uint64_t version;       /* config version, +1 per config_put */
    wr_zsl_t *line;         /* (arrival score, user id), in line order */
    wr_idhash_t *waiting;   /* user id -> wr_zsl_node_t in line */
    wr_idhash_t *tokens;    /* user id -> wr_memq_token_t */
    wr_memq_token_t **heap; /* min-heap of the tokens by exp_us */
    size_t heap_n, heap_cap;
    int64_t last_score; /* highest arrival score ever given out */
    wr_budget_t budget;
    uint64_t admitted_total, consumed_total, expired_total, left_total, rejected_full_total;
    /* Sessions (sessionSeconds; see wr_memq_release): user id -> session,
     * a wr_memq_token_t with the consumed jti and exp_us = its end, and a
     * min-heap of the same by end. Independent of line and tokens; the
     * active count is heap_n + sess_n. */
    wr_idhash_t *sessions;
    wr_memq_token_t **sess_heap;
    size_t sess_n, sess_cap;
    uint64_t released_total, sessions_expired_total;

    /* Sale opening (docs/API.md, "Sale opening"; memq.c, "The opening").
     * pre: the pre-queue, (key, user) in the order it enters the line:
     * key = a random 62-bit number (preQueueShuffle) or the arrival score;
     * pre_ids: user id -> node in pre. A user is in at most one of line,
     * pre and tokens. While opening: the line scores open_base ..
     * open_base + open_total - 1 and the line's rank numbers open_seq ..
     * are reserved for the pre-queue, which enters below every later
     * arrival; open_moved of them have moved (the next one takes
     * open_base + open_moved). */
    wr_zsl_t *pre;
    wr_idhash_t *pre_ids;
    bool opening;
    int64_t open_base;
    uint64_t open_total, open_moved, open_seq;
    int64_t pre_idle_cursor; /* the idle sweep's place in pre (a key) */

    /* Degraded mode: the burned fail-open passes (wr_memq_burn below). */
    wr_idhash_t *burned;         /* jti -> wr_memq_burn_t; NULL until the first burn */
    struct wr_memq_burn **bheap; /* min-heap of the burns by exp_us */
    size_t bheap_n, bheap_cap;

    /* People who stop asking (idleTimeoutSeconds; see wr_memq_idle_sweep).
     * Each line node carries its user's last-seen time in its aux word
     * (wr_memq_cs of the store clock) and WR_MEMQ_PENDING in its flags;
     * idle_cursor is the score where the next sweep starts. */
    uint64_t abandoned_total;
    int64_t idle_cursor;

    /* Away, not gone (awayHoldSeconds; memq_idle.c). held: people whose
     * turn came while they were away, (hold key, user), the key about the
     * store time they were held (strictly increasing, held_last the last
     * given), each node's aux their last-seen time; back: held people who
     * asked again, (return key, user), admitted first by the next tick.
     * held_ids, back_ids: user id -> node. A user is in at most one of
     * line, pre, held, back and tokens. away_n: line nodes marked
     * WR_MEMQ_AWAY. */
    wr_zsl_t *held, *back;
    wr_idhash_t *held_ids, *back_ids;
    int64_t held_last;
    uint64_t away_n;
    uint64_t returned_total;
    /* passes that expired unseen, their holders held (wr_memq_sweep) */
    uint64_t unseen_expired_total;
    uint64_t bypass_total; /* requests a bypass rule let past the line (store.h bypass) */

    /* The end of a sale (config stock; memq.c, "Stock"). stock_left: what
     * is left, -1 without a stock (set by a config_put whose config has
     * stock_set); every admission takes one, a token that expires
     * unconsumed or is given back (leave) returns one. sold_out_us: the
     * store time the queue became sold out (stock_left 0, no token), -1
     * while it is not (wr_memq_stock_note). */
    int64_t stock_left;
    int64_t sold_out_us;
    /* Autotune (store.h autotune): the rate in use (0 = none), the store
     * time of its last change, the latency of the last cut, the reports.
     * Not in a snapshot: a restarted embedded store starts the rate anew. */
    double auto_rate;
    int64_t auto_step_us;
    double auto_cut_ms;
    wr_autotune_report_t auto_rep[WR_AUTOTUNE_SOURCES];
    /* The public log (config publicLog; memq_log.c): the queue's log,
     * borrowed from the db (which keeps it by name, also after a delete),
     * or NULL while publicLog is off. */
    struct wr_memlog *log;
    uint64_t log_faults; /* appends that failed (out of memory): counted, not undone */

    /* Web Push (memq_push.c): user id -> wr_memq_push_t, the live
     * subscriptions (NULL until the first); push_due: the subscriptions
     * admission claimed (their users admitted), handed to the caller by
     * wr_memq_push_take. The snapshot keeps push and push_closed
     * (mem_snapshot_push.c), not push_due (handed over within its tick). */
    wr_idhash_t *push;
    struct wr_memq_push **push_due;
    size_t push_due_n, push_due_cap;
    wr_close_reason_t push_closed; /* the closing the closing push went out for (NONE:
                                      not halted, or not sent yet) */

    /* Priority groups (config groups; memq_group.c). grp: the slots (NULL
     * free), each group in one while its name is in the config; grp_order
     * the slots in the config's order (n_grp of them). A group member's
     * node (line, held, back) carries slot + 1 in its flags' top four bits
     * (wr_memq_node_slot), their pass in its slot. std_admitted_total: the
     * standard line's admissions. share_carry_micro: the standard line's
     * carried share (core/groups.h wr_groups_split). rate_*: admissions per
     * second of the last WR_MEMQ_RATE_SECONDS, per line (0 the standard
     * line, slot + 1 a group), rate_sec the second of the newest count.
     * codes: the presale codes by hash (NULL until the first). */
    wr_memq_group_t *grp[WR_GROUPS_MAX];
    uint8_t grp_order[WR_GROUPS_MAX];
    size_t n_grp;
    int64_t share_carry_micro;
    uint64_t removed_admitted; /* admissions of groups since removed from the config (not
                                  the standard line's) */
    int64_t rate_sec;
    uint32_t rate_n[WR_GROUPS_MAX + 1][WR_MEMQ_RATE_SECONDS];
    wr_idhash_t *codes;
    /* The line node (q->line or a group's) the last wr_memq_entry_group
     * answered from (a person in line: WAITING, or a group's PREQUEUE), or NULL: the caller's to
     * read right after (the poll's receipt, wr_memq_log_receipt_at), stale after any other call. */
    wr_zsl_node_t *entry_node;
} wr_memq_t;

/* A person's Web Push subscription, held by its queue (push), then by the
 * caller once claimed (wr_memq_push_take; free() it). */
typedef struct wr_memq_push {
    wr_pushsub_t sub;
    int64_t exp_us;            /* claimed: the pass's expiry (store clock); else 0 */
    wr_close_reason_t closing; /* in push_due: NONE for an admission, else the
                                  closing push's reason */
    uint8_t idlen;
    char id[]; /* the user id, NUL-terminated */
} wr_memq_push_t;

/*
 * PUT .../entries/me/push on the embedded store: a status of user at
 * now_us (wr_memq_entry: their last-seen time and pending mark as a poll
 * would set them), then, when they are waiting, in the pre-queue or held,
 * their subscription becomes sub (copied; replacing any). WR_OK;
 * WR_ENOTINQUEUE (admitted, or not in line); WR_ENOMEM.
 */
wr_err_t wr_memq_push_set(wr_memq_t *q, const char *user, size_t ulen, const wr_pushsub_t *sub,
                          int64_t now_us, bool *dirty);

/* DELETE .../entries/me/push: the same status and states as
 * wr_memq_push_set, then the subscription (if any) is dropped. */
wr_err_t wr_memq_push_del(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us, bool *dirty);

/* The queue's config turned push off: every subscription and every
 * claimed push not sent yet dropped (no push goes out for a queue with
 * push off; its stat subscribed is 0). */
void wr_memq_push_clear(wr_memq_t *q);

/* A snapshot load: user's subscription sub (copied), no status and no
 * check (the loader checks). WR_OK, WR_ENOMEM. */
wr_err_t wr_memq_push_restore(wr_memq_t *q, const char *user, size_t ulen, const wr_pushsub_t *sub);

/* True when user has a live subscription (such a person is never away). */
bool wr_memq_push_has(const wr_memq_t *q, const char *user, size_t ulen);

/* Hands the claimed subscriptions to the caller: *out (malloc'd array of
 * malloc'd items, caller frees both; NULL when none) and *n. */
void wr_memq_push_take(wr_memq_t *q, wr_memq_push_t ***out, size_t *n);

/* The autotune operation (store.h) on q at now_us; fills *res. WR_OK. */
wr_err_t wr_memq_autotune(wr_memq_t *q, const wr_autotune_req_t *req, int64_t now_us,
                          wr_autotune_state_rec_t *res);

/* ---- priority groups and presale codes (memq_group.c) ---- */

/* The slot of the config's group name (NULL or "": none), or -1. */
int wr_memq_group_slot(const wr_memq_t *q, const char *name);

/* A snapshot load: user (ulen bytes; in no line, pre-queue, held, back or
 * tokens: the caller checks) at score, unique there, in the line of group
 * slot; the node carries the slot (wr_memq_node_slot), no mark; raises
 * last_score to score. WR_OK and *out (borrowed while in line), WR_EINVAL
 * (slot holds no group), or an error of wr_zsl_insert or wr_idhash_put
 * (WR_ENOMEM, ...) with q unchanged. */
wr_err_t wr_memq_group_line_add(wr_memq_t *q, int slot, const char *user, size_t ulen,
                                int64_t score, wr_zsl_node_t **out);

/* A join into a group (wr_memq_entry_group): slot, the group of an
 * invite's grp (wr_memq_group_slot), -1 none; code_hash, a presale code's
 * hash (64 hex), NULL none, not looked at with a slot. */
typedef struct {
    int slot;
    const char *code_hash;
} wr_memq_join_t;

/*
 * wr_memq_entry with a group (store.h join_group): someone with a place or
 * a pass gets wr_memq_entry's answer whatever j holds (nothing spent); a
 * newcomer with j->slot joins that group's line; with j->code_hash the
 * code is checked at now_us (WR_ECODE, e->code_reason, nothing changed)
 * and one use spent when they get a place. A group member's answer:
 * position in their group's line, WAITING (PREQUEUE before opensAt), and
 * e's group fields (every answer of someone in line has them).
 */
wr_err_t wr_memq_entry_group(wr_memq_t *q, const char *user, size_t ulen, bool add, bool page,
                             const wr_memq_join_t *j, int64_t now_us, int64_t wall_us,
                             wr_entry_t *e, bool *dirty);

/* The verdict on the code whose hash is hash at now_us, nothing spent
 * (store.h join_group's check_only): WR_CODE_OK when a join with it would
 * get a place in its group. */
wr_code_reason_t wr_memq_code_verdict(const wr_memq_t *q, const char *hash, int64_t now_us);

/* Presale codes of q (store.h codes). create: n hashes for group (a group
 * of the config), each good for uses joins until expires_ms (-1 never):
 * WR_OK, WR_EINVAL (an unknown group, a hash that is not WR_CODE_HASH_HEX
 * lowercase hex digits or is taken, counts out of range; nothing kept),
 * WR_ENOMEM. revoke: WR_OK (also again), WR_ECODE
 * (no such code of a group in the config). counts: per group of the
 * config, in order. */
wr_err_t wr_memq_codes_create(wr_memq_t *q, const char *group,
                              const char (*hashes)[WR_CODE_HASH_HEX + 1], size_t n, uint32_t uses,
                              int64_t expires_ms, bool *dirty);
wr_err_t wr_memq_code_revoke(wr_memq_t *q, const char *hash, bool *dirty);
void wr_memq_codes_counts(const wr_memq_t *q, wr_store_codes_t *out);

/* A snapshot load: one code as kept (slot a group's slot), counted in its
 * group's issued, spent and revoked. WR_OK, WR_EINVAL (a bad hash as for
 * create, a hash kept already, no such slot, uses 0, spent > uses),
 * WR_ENOMEM. */
wr_err_t wr_memq_code_add(wr_memq_t *q, const char *hash, int slot, uint32_t uses, uint32_t spent,
                          int64_t expires_ms, bool revoked);

/* Fills st's lines (the standard line, then the groups in order). */
void wr_memq_groups_stats(const wr_memq_t *q, wr_queue_stats_t *st);

/* Line, held and back node flags: the top four bits carry a group
 * member's slot + 1 (0: the standard line); WR_MEMQ_MARKS the others. */
#define WR_MEMQ_SLOT_SHIFT 4
#define WR_MEMQ_MARKS      0x0fu

/* The group slot of node (line, held, back), -1 for the standard line. */
static inline int wr_memq_node_slot(const wr_zsl_node_t *node)
{
    return (int)(wr_zsl_node_flags(node) >> WR_MEMQ_SLOT_SHIFT) - 1;
}

/* Sets node's group slot (-1 the standard line), keeping its marks. */
static inline void wr_memq_node_set_slot(wr_zsl_node_t *node, int slot)
{
    wr_zsl_node_set_flags(node, (uint8_t)((wr_zsl_node_flags(node) & WR_MEMQ_MARKS) |
                                          (unsigned)(slot + 1) << WR_MEMQ_SLOT_SHIFT));
}

/* Line node flag: a page join (wr_memq_entry with page) not yet followed
 * by the user's next join or status; admission passes over it. */
#define WR_MEMQ_PENDING 0x01u
/* Line node flag: the away sweep found the user away (counted in away_n);
 * cleared when they ask again or leave the line. Never in a snapshot. */
#define WR_MEMQ_AWAY 0x02u

/* Visits of one idle sweep, at most (a tick's bounded work). */
#define WR_MEMQ_IDLE_VISIT_MAX WR_STORE_IDLE_VISIT_MAX

/* The last-seen clock of line nodes: centiseconds of a store time in us,
 * modulo 2^32. Ages are differences modulo 2^32 (valid up to 248 days,
 * far beyond the longest idle timeout, 1 day). */
static inline uint32_t wr_memq_cs(int64_t us)
{
    return (uint32_t)(uint64_t)(us / 10000);
}

/* Centiseconds since node's user was last seen, at now_us. */
static inline uint32_t wr_memq_seen_age_cs(const wr_zsl_node_t *node, int64_t now_us)
{
    return wr_memq_cs(now_us) - wr_zsl_node_aux(node);
}

/* Sets node's last-seen time to age_cs centiseconds before now_us. */
static inline void wr_memq_seen_set(wr_zsl_node_t *node, int64_t now_us, uint32_t age_cs)
{
    wr_zsl_node_set_aux(node, wr_memq_cs(now_us) - age_cs);
}

/* True when node's user is idle at now_us under q's idleTimeoutSeconds: a
 * timeout is set and their last join or poll is that long ago or more. */
bool wr_memq_idle(const wr_memq_t *q, const wr_zsl_node_t *node, int64_t now_us);

/* Puts user (in none of line, pre, held, back, tokens) in held (back =
 * false) or back (back = true) at key (unique there; a snapshot load
 * restores keys), with last-seen age age_cs at now_us; raises held_last
 * to key. WR_OK, WR_EINVAL (key taken) or WR_ENOMEM, q unchanged. */
wr_err_t wr_memq_held_add(wr_memq_t *q, const char *user, size_t ulen, int64_t key, bool back,
                          int64_t now_us, uint32_t age_cs);

/* The user's node in held or back (borrowed), or NULL; *back tells which. */
wr_zsl_node_t *wr_memq_held(const wr_memq_t *q, const char *user, size_t ulen, bool *back);

/* The user's node in the line (borrowed while it is in the line), or NULL. */
wr_zsl_node_t *wr_memq_waiting(const wr_memq_t *q, const char *user, size_t ulen);

/* The user's node in the pre-queue (borrowed while there), or NULL. */
wr_zsl_node_t *wr_memq_prequeued(const wr_memq_t *q, const char *user, size_t ulen);

/* Puts user (ulen bytes; in none of line, pre, tokens) in the pre-queue
 * with key (unique in pre; a snapshot load restores keys). WR_OK,
 * WR_EINVAL (key taken) or WR_ENOMEM, q unchanged. */
wr_err_t wr_memq_pre_add(wr_memq_t *q, const char *user, size_t ulen, int64_t key);

/* Restores an opening in progress (snapshot load): called while loading
 * the line in order, after the people with scores below base + total and
 * before those above (the later arrivals): reserves the rank numbers of
 * the total - moved people still to move. */
void wr_memq_open_restore(wr_memq_t *q, int64_t base, uint64_t total, uint64_t moved);

/* Chunk of the opening per admit call: moves this many at most (about
 * 2-4 ms of event loop on the embedded store; docs/BENCHMARKS.md). */
#define WR_MEMQ_OPEN_CHUNK 8192

/* The user's token (borrowed while it is live), or NULL. */
wr_memq_token_t *wr_memq_token(const wr_memq_t *q, const char *user, size_t ulen);

/*
 * Puts user (ulen bytes, 1..WR_USER_ID_MAX, copied) at score, which must be
 * unique in the line; raises last_score to score. The caller checks that
 * the user is in neither line nor tokens. Returns WR_OK and *out (the node,
 * borrowed while it is in the line), or an error of wr_zsl_insert or
 * wr_idhash_put (WR_ENOMEM, ...) with q unchanged.
 */
wr_err_t wr_memq_line_add(wr_memq_t *q, const char *user, size_t ulen, int64_t score,
                          wr_zsl_node_t **out);

/* Grows the waiting hash so that the next n wr_memq_line_add calls never
 * rehash it (a snapshot load knows its count). WR_OK or WR_ENOMEM. */
wr_err_t wr_memq_line_reserve(wr_memq_t *q, size_t n);

/* A token for user (idlen bytes, 1..WR_USER_ID_MAX, copied), not seen;
 * the caller fills jti and times, then adds it with wr_memq_token_add or
 * frees it with free(). NULL on ENOMEM. */
wr_memq_token_t *wr_memq_token_new(const char *id, size_t idlen);

/* Adds t (whose user must be in neither line nor tokens) to tokens and
 * heap; takes ownership on WR_OK. WR_ENOMEM (or WR_EINVAL from
 * wr_idhash_put): q unchanged, the caller still owns t. */
wr_err_t wr_memq_token_add(wr_memq_t *q, wr_memq_token_t *t);

/* Removes every token with exp_us <= now_us, counting each in
 * expired_total, and every session ending <= now_us, counting each in
 * sessions_expired_total. O(k log N) for k removed. An unseen pass is not
 * a lost place (docs/API.md 1.3): the holder of a token that expires
 * unseen (no entry answered it ADMITTED) goes back to held, held from
 * exp_us, counted in unseen_expired_total (memq_idle.c,
 * wr_memq__unseen_expiry). */
void wr_memq_sweep(wr_memq_t *q, int64_t now_us, bool *dirty);

/* The queue's counters as the store interface reports them. */
void wr_memq_stats(const wr_memq_t *q, wr_queue_stats_t *st);

/* The end of a sale: why q admits nobody and answers "closed" now
 * (WR_CLOSE_CLOSED: config closed; WR_CLOSE_SOLD_OUT: stock_left 0 and no
 * unconsumed token live, none can come back), or WR_CLOSE_NONE. Call
 * after the expiry sweep (an expired token returns its unit first). */
wr_close_reason_t wr_memq_halted(const wr_memq_t *q);

/* Records the sold-out moment: sold_out_us = now_us when q just became
 * sold out, -1 when it no longer is (a restock); sets *dirty on a change.
 * Every operation that can change it calls this (the sweep, consume,
 * config_put). */
void wr_memq_stock_note(wr_memq_t *q, int64_t now_us, bool *dirty);

/*
 * Operations. entry and token_use are for an enabled queue (the caller
 * answers passthrough for a disabled one); leave and admit take any queue.
 * Each sweeps exactly where the Redis scripts sweep, so both stores give
 * the same answers: entry, leave of a user not in line, admit. token_use
 * looks only at the user's own token.
 */

/*
 * join (add = true) or status of user (ulen bytes, 1..WR_USER_ID_MAX) after
 * a sweep at now_us. page (with add): a join by the queue page, whose
 * newcomer is WR_MEMQ_PENDING. A pending page join idle at now_us
 * (wr_memq_idle) is removed first (abandoned_total) and answered as one
 * not in line; any other waiting user's last-seen time becomes now_us and
 * their pending and away marks are cleared (away people keep their
 * place). A held user returns (moves to back; one held awayHoldSeconds or
 * longer is removed first, abandoned_total, and answered as one not in
 * line): WAITING with e->held, position 1. Fills e (not e->config): WAITING with position and
 * waiting, or ADMITTED with jti, issued_at_us and expires_at_us (the
 * pass is seen from then on: its expiry no longer holds them). A join of
 * a user in neither line nor tokens appends them at arrival score
 * max(wall_us, last_score + 1) - strictly increasing, so a clock stepping
 * back never puts a newcomer ahead; wall_us is unused by status.
 * Returns WR_OK; WR_ENOTINQUEUE (status: the user is in neither);
 * WR_EFULL (join: the line holds max_queue_size or more; e->waiting set,
 * counted in rejected_full_total); WR_ENOMEM or another error of
 * wr_memq_line_add (the user is not added).
 */
wr_err_t wr_memq_entry(wr_memq_t *q, const char *user, size_t ulen, bool add, bool page,
                       int64_t now_us, int64_t wall_us, wr_entry_t *e, bool *dirty);

/*
 * The away sweep at now_us: a clock sweep that visits at most
 * WR_MEMQ_IDLE_VISIT_MAX users of the line from idle_cursor on, wrapping
 * to the front, marks those away (WR_MEMQ_AWAY, away_n) and unmarks those
 * no longer away, and removes pending page joins idle at now_us (counted
 * in abandoned_total), at most WR_STORE_IDLE_SWEEP_MAX; the cursor stays
 * where it stopped. A line no longer than the visit bound is swept whole.
 * The pre-queue likewise (removals only). Then held people held
 * awayHoldSeconds or longer leave (abandoned_total, at most
 * WR_STORE_IDLE_SWEEP_MAX). Without a timeout: the held expiry only.
 */
void wr_memq_idle_sweep(wr_memq_t *q, int64_t now_us, bool *dirty);

/* Removes user from the line or, after a sweep at now_us (a user not in
 * line: an unseen pass expiring then holds its holder first), from the
 * pre-queue, held or back, or revokes their token (counts left_total);
 * and ends their session open at now_us (counts released_total). WR_OK,
 * or WR_ENOTINQUEUE (none of these). */
wr_err_t wr_memq_leave(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us, bool *dirty);

/*
 * One admission tick at now_us: sweeps (tokens, then idle users), advances
 * the budget (queue.h) to
 * the tick of now_us (no accrual while disabled, paused or with an empty
 * line) and moves the allowed number of users - at most the line, and at
 * most max_active minus the active tokens when max_active is set - from
 * the front of the line, passing over pending users (and removing idle
 * ones it meets, abandoned_total), looking at no more than
 * WR_STORE_ADMIT_SCAN_MAX of those, to tokens with a fresh jti and a lifetime of
 * token_ttl_seconds; adds them to admitted_total. Returns WR_OK and
 * *admitted, and in *waited (when waited is not NULL) a malloc'd array of
 * the admitted users' waits, now_us - arrival score in us (caller frees;
 * NULL when nobody was admitted), or WR_ENOMEM or an error of wr_token_new_jti with line, tokens
 * and budget unchanged (the sweep stays). Sets *dirty for a sweep that
 * removed tokens, admissions or a changed carry, not for a tick alone.
 * Sale opening (store.h admit): first wr_memq_open_step; *open_moved and
 * *open_left tell its progress. Before opensAt nobody is admitted.
 */
wr_err_t wr_memq_admit(wr_memq_t *q, int64_t now_us, uint64_t *admitted, int64_t **waited,
                       uint64_t *open_moved, uint64_t *open_left, bool *dirty);

/* The sale opening's part of admit (store.h): begins the opening when it
 * is due at now_us, then moves up to max people of the pre-queue into the
 * line; *moved and *left (still to move) are set. wr_memq_admit calls it
 * with WR_MEMQ_OPEN_CHUNK. WR_OK, or WR_ENOMEM after moving *moved. */
wr_err_t wr_memq_open_step(wr_memq_t *q, int64_t now_us, uint64_t max, uint64_t *moved,
                           uint64_t *left, bool *dirty);

/*
 * consume (consume = true) or verify of user's token jti (NUL-terminated)
 * at now_us, looking only at that token (no sweep, as token.lua). Returns
 * WR_OK (live; consume removes it, counted in consumed_total), or WR_ETOKEN
 * with *reason WR_TOKEN_CONSUMED (no token, or another jti) or
 * WR_TOKEN_EXPIRED (exp_us <= now_us; consume removes it, counted in
 * expired_total; verify leaves it). *reason is untouched on WR_OK.
 * Sessions: a consume with session_seconds > 0 opens (or replaces) the
 * user's session with that jti, ending now_us + session_seconds (WR_ENOMEM
 * with q unchanged when it cannot); verify of a jti that is not the live
 * token's answers WR_OK when it is the jti of the user's session open at
 * now_us.
 */
wr_err_t wr_memq_token_use(wr_memq_t *q, const char *user, size_t ulen, const char *jti,
                           bool consume, int64_t now_us, wr_token_reason_t *reason, bool *dirty);

/* The user's session (borrowed while it is open), or NULL. */
wr_memq_token_t *wr_memq_session(const wr_memq_t *q, const char *user, size_t ulen);

/* Adds session t (a wr_memq_token_new whose exp_us is the end; the user
 * has no session) to sessions and its heap; takes ownership on WR_OK.
 * WR_ENOMEM (or WR_EINVAL): q unchanged, the caller still owns t. */
wr_err_t wr_memq_session_add(wr_memq_t *q, wr_memq_token_t *t);

/*
 * release of user's session jti at now_us, looking only at that session
 * (no sweep, as release.lua): WR_OK when it was open (removed, counted in
 * released_total); else WR_ETOKEN with *reason WR_TOKEN_NO_SESSION - a
 * lapsed one with that jti is removed then, counted in
 * sessions_expired_total. *session_us: on WR_OK, how long it lasted (now
 * minus the consume time), else -1.
 */
wr_err_t wr_memq_release(wr_memq_t *q, const char *user, size_t ulen, const char *jti,
                         int64_t now_us, wr_token_reason_t *reason, int64_t *session_us,
                         bool *dirty);

/*
 * The embedded store's data: the queues, sorted by name (binary search;
 * few queues), and the token signing secret. Zero-initialise, seed rng,
 * free with wr_memq_db_clear. The db owns its queues.
 */
typedef struct {
    wr_memq_t **queues;
    size_t nq, capq;
    uint8_t secret[WR_SECRET_MAX];
    size_t secret_len; /* 0 = none yet */
    wr_rng_t rng;      /* draws each new queue's skiplist seed; seed it first */
    /* The public logs by queue name (memq_log.c), also of deleted queues,
     * and the log's signing key (an Ed25519 seed; store.h log_key). */
    struct wr_memlog **logs;
    size_t nlogs, caplogs;
    uint8_t log_key[32];
    bool has_log_key;
} wr_memq_db_t;

/* The queue named name, or NULL. */
wr_memq_t *wr_memq_db_find(const wr_memq_db_t *db, const char *name);

/*
 * Installs a copy of cfg as the config of queue name, creating an empty
 * queue when there is none; increments its version. A new tick_ms resets
 * the admission budget (tick indices of another tick length are not
 * comparable). Returns WR_OK and *out (may be NULL; the queue, borrowed
 * from db), or WR_ENOMEM with db unchanged.
 */
wr_err_t wr_memq_db_put_config(wr_memq_db_t *db, const char *name, const wr_queue_config_t *cfg,
                               wr_memq_t **out);

/* The same at now_us (store clock): the config's groups applied first
 * (memq_group.c): a group that leaves the config with people (line, held,
 * a live pass) or live codes at now_us is WR_EGROUP, db unchanged.
 * wr_memq_db_put_config is this at the dawn of time (every code with an
 * expiry counts as live). */
wr_err_t wr_memq_db_put_config_at(wr_memq_db_t *db, const char *name, const wr_queue_config_t *cfg,
                                  int64_t now_us, wr_memq_t **out);

/* Deletes and frees queue name: WR_OK, or WR_ENOTFOUND. Configs held by
 * others stay valid (reference counted). */
wr_err_t wr_memq_db_delete(wr_memq_db_t *db, const char *name);

/* Frees every queue and the queue array, and every log; keeps secret,
 * log key and seed. */
void wr_memq_db_clear(wr_memq_db_t *db);

/* ---- the public log (memq_log.c) ---------------------------------------- */

/* The log kept under name, or NULL. */
struct wr_memlog *wr_memq_db_log(const wr_memq_db_t *db, const char *name);

/* Adds log l (a snapshot's; the db owns it on WR_OK). WR_EINVAL for a
 * name already there, WR_ENOMEM. */
wr_err_t wr_memq_db_log_add(wr_memq_db_t *db, struct wr_memlog *l);

/* After a config_put or a load: q->log is the queue's log when its config
 * has publicLog (created on first use, kept by the db), else NULL; the
 * line's scores continue above the log's last t. WR_OK or WR_ENOMEM. */
wr_err_t wr_memq_log_attach(wr_memq_db_t *db, wr_memq_t *q);

/* queue_delete's leaves: a `removed` leave for everyone in the log's line,
 * at now_us, before the queue goes. */
void wr_memq_log_removed(wr_memq_t *q, int64_t now_us);

/* A receipt: the log id and join leaf index of user while they are in the
 * log's line; false when the queue has no log or they are not in it. */
bool wr_memq_log_receipt(const wr_memq_t *q, const char *user, size_t ulen, char *u,
                         uint64_t *index, uint8_t leaf_hash[32]);

/* The same through node (user's line node, or NULL): the copy of the
 * receipt node keeps (zsl.h extra bytes) while its hint is live (memlog.h
 * wr_memlog_hint_live), with no lookup; else the lookup by id, whose
 * receipt node then keeps (a node made while the queue had no log keeps
 * none). */
bool wr_memq_log_receipt_at(wr_memq_t *q, wr_zsl_node_t *node, const char *user, size_t ulen,
                            char *u, uint64_t *index, uint8_t leaf_hash[32]);

/* True while the opening waits for the beacon (docs/API.md 1.3: a commit
 * with a beacon, opensAt passed, no answer yet, less than 60 s after
 * opensAt): joins still go to the pre-queue (after the drawn, not drawn),
 * nobody is admitted. now_us: store clock. */
bool wr_memq_log_beacon_wait(const wr_memq_t *q, int64_t now_us);

/* True while a commit awaits its draw (draw cannot change). */
bool wr_memq_log_committed(const wr_memq_t *q);

/* ---- degraded mode: the burned set of fail-open passes ----------------- */

/* One burned fail-open pass: its jti, kept until exp_us. Held by its queue
 * (burned and bheap). */
typedef struct wr_memq_burn {
    int64_t exp_us;
    size_t heap_idx;
    uint8_t jlen;
    char jti[WR_JTI_LEN + 1];
} wr_memq_burn_t;

/*
 * burn (store.h): after dropping every burn with exp_us <= now_us, records
 * jti (jlen bytes, 1..WR_JTI_LEN) as spent until exp_us, unless check_only.
 * Returns WR_OK (not burned before: now burned, or with check_only would
 * be), WR_ETOKEN with *reason WR_TOKEN_CONSUMED (burned already) or
 * WR_TOKEN_EXPIRED (exp_us <= now_us; nothing recorded), or WR_ENOMEM
 * (nothing recorded). Sets *dirty when the set changed.
 */
wr_err_t wr_memq_burn(wr_memq_t *q, const char *jti, size_t jlen, int64_t exp_us, bool check_only,
                      int64_t now_us, wr_token_reason_t *reason, bool *dirty);

/* Drops every burn with exp_us <= now_us (admission ticks call it). */
void wr_memq_burn_sweep(wr_memq_t *q, int64_t now_us, bool *dirty);

#endif
