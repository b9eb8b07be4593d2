/*
 * memq_internal.h - what the files of the memq module share, and nothing
 * else includes.
 *
 * The memq module (the embedded store's queue model) is in these files:
 *   memq.c          tokens and their heap, the line, entry, leave
 *   memq_admit.c    the admission tick (held returns, each line's share)
 *   memq_group.c    priority groups (a line per group) and presale codes
 *   memq_db.c       configs, a queue's creation and freeing, the db of
 *                   queues, stats, autotune
 *   memq_open.c     the sale opening: the pre-queue and its move into
 *                   the line
 *   memq_session.c  sessions (sessionSeconds) and the burned set of
 *                   spent fail-open passes
 *   memq_idle.c     away, not gone (idleTimeoutSeconds, awayHoldSeconds):
 *                   the away check, the sweep, the held people, the
 *                   unseen expiry
 * Names shared between these files are wr_memq__*; file statics are
 * unprefixed (STYLE.md). None of them does I/O or reads a clock.
 */
#ifndef WR_MEMQ_INTERNAL_H
#define WR_MEMQ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/logleaf.h"
#include "store/memory/memq.h"

/* Microseconds in a second. */
#define MICRO 1000000LL

/* Inserts user at score into set and its id hash (seq: a reserved rank
 * number of set, or UINT64_MAX for none); *out the node (owned by set).
 * All or nothing: WR_ENOMEM leaves set and ids unchanged. (memq.c) */
wr_err_t wr_memq__set_add(wr_zsl_t *set, wr_idhash_t *ids, const char *user, size_t ulen,
                          int64_t score, uint64_t seq, wr_zsl_node_t **out);

/* The token min-heaps by exp_us (tokens and sessions; each token keeps
 * its heap_idx). h: the heap array, n: its length, *capp: its capacity.
 * (memq.c) */
void wr_memq__heap_up(wr_memq_token_t **h, size_t i);
void wr_memq__heap_down(wr_memq_token_t **h, size_t n, size_t i);
/* Grows *h so that n + extra fit; WR_ENOMEM leaves it unchanged. */
wr_err_t wr_memq__heap_reserve_in(wr_memq_token_t ***h, size_t n, size_t *capp, size_t extra);
/* Pushes t (room reserved first) and increments *n. */
void wr_memq__heap_push_in(wr_memq_token_t **h, size_t *n, wr_memq_token_t *t);
/* Removes t (in the heap) and decrements *n; t is not freed. */
void wr_memq__heap_remove_in(wr_memq_token_t **h, size_t *n, wr_memq_token_t *t);

/* Removes node (in the line) and its user from waiting; node is freed.
 * (memq.c) */
void wr_memq__line_remove(wr_memq_t *q, wr_zsl_node_t *node);

/* ---- memq_open.c ---- */

/* True before opensAt with no opening in progress: joins go to the
 * pre-queue and nobody is admitted. now_us: store clock, microseconds. */
bool wr_memq__gate_closed(const wr_memq_t *q, int64_t now_us);

/* The opening is due: people in pre, none moving yet, opensAt null or
 * passed. */
bool wr_memq__open_due(const wr_memq_t *q, int64_t now_us);

/* Begins the opening at now_us: the public log's draw (memq_log.c), then reserves the line scores
 * last_score + 1 .. + |pre| and as many rank numbers of the line; sets *dirty. */
void wr_memq__open_begin(wr_memq_t *q, int64_t now_us, bool *dirty);

/* Ends the opening once nobody is left to move in pre. */
void wr_memq__open_settle(wr_memq_t *q);

/* Removes node (in pre) and its user from pre_ids, the node freed, and
 * ends an opening that this leaves with nobody to move (leave, and the
 * idle removal). */
void wr_memq__pre_remove(wr_memq_t *q, wr_zsl_node_t *node);

/* People not yet moved from pre: they count in waiting while the opening
 * runs; 0 when no opening is in progress. */
uint64_t wr_memq__pending(const wr_memq_t *q);

/* The 1-based position of line node n: its rank, plus the pre-queue not
 * yet moved when n came after the opening began. */
uint64_t wr_memq__line_position(const wr_memq_t *q, const wr_zsl_node_t *n);

/* ---- memq_session.c ---- */

/* Drops the sessions ended at now_us (exp_us <= now_us); sets *dirty when
 * one was dropped. */
void wr_memq__session_sweep(wr_memq_t *q, int64_t now_us, bool *dirty);

/* Opens (or replaces) the session of token t's user, before t is dropped:
 * same jti, ending now_us + sessionSeconds. WR_OK or WR_ENOMEM (q
 * unchanged); t stays the caller's. */
wr_err_t wr_memq__session_open(wr_memq_t *q, wr_memq_token_t *t, int64_t now_us, bool *dirty);

/* Ends user's session if it is open at now_us (released_total); true if
 * it did. A lapsed one is left to the sweep. */
bool wr_memq__session_end(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us, bool *dirty);

/* Frees the burned set (hash and heap) of q. */
void wr_memq__burned_free(wr_memq_t *q);

/* ---- memq_idle.c ---- */

/* Removes line node as idle: out of the line, counted in abandoned_total;
 * sets *dirty. */
void wr_memq__abandon(wr_memq_t *q, wr_zsl_node_t *node, bool *dirty);

/* node (line, pre, held or back) was seen at now_us: last-seen now, the
 * pending mark cleared, the away mark cleared (away_n). */
void wr_memq__seen(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us);

/* Clears line node's away mark (away_n) before it leaves the line. */
void wr_memq__unmark(wr_memq_t *q, wr_zsl_node_t *node);

/* Line node's turn came while its user is away, at now_us: out of the
 * line into held (held from now; its last-seen time kept), or, with
 * awayHoldSeconds 0, removed (abandoned_total). Out of memory: left in
 * line (passed over). Sets *dirty. */
void wr_memq__hold(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us, bool *dirty);

/* Back node's user is away again when their admission comes: back into
 * held, held anew from now_us (or removed with awayHoldSeconds 0). */
void wr_memq__rehold(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us, bool *dirty);

/* Held node's user asked again at now_us: into back (returned), seen now.
 * Out of memory: WR_ENOMEM, q unchanged. */
wr_err_t wr_memq__return(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us, bool *dirty);

/* The people ahead of line node n, counted for the retry plan (store.h
 * passed_ahead): of the first min(position - 1, WR_STORE_AHEAD_SCAN) nodes of
 * the line, how many admission will pass over (wr_queue_passed_over at
 * now_us, store clock us; reach times from the configured rate). Sets
 * *scanned to how many it looked at. Reads only. */
uint64_t wr_memq__passed_ahead(const wr_memq_t *q, const wr_zsl_node_t *n, int64_t now_us,
                               uint64_t *scanned);

/* True when held node (not back) has been held awayHoldSeconds at now_us. */
bool wr_memq__hold_over(const wr_memq_t *q, const wr_zsl_node_t *node, int64_t now_us);

/* Removes node of held (back = false) or back and its id, node freed. */
void wr_memq__held_remove(wr_memq_t *q, wr_zsl_node_t *node, bool back);

/* The unseen expiry (an unseen pass is not a lost place, docs/API.md
 * 1.3): user's pass (already dropped) expired at exp_us before any answer
 * carried it; they go back to held, held from exp_us (or, with
 * awayHoldSeconds 0, leave at once: abandoned_total); counted in
 * unseen_expired_total; sets *dirty. Out of memory: gone, as any expired
 * pass. The one step where an unseen expiry happens (memq.c's sweep).
 * The public log: with their join leaf (log_index, UINT64_MAX none) the
 * away leaf with unseen, back in the log's line (wr_memq__log_unseen). */
void wr_memq__unseen_expiry(wr_memq_t *q, const char *user, size_t ulen, int64_t exp_us,
                            uint64_t log_index, int slot, int64_t now_us, bool *dirty);

/* wr_memq_held_add with the person's group slot (-1 the standard line). */
wr_err_t wr_memq__held_add_slot(wr_memq_t *q, const char *user, size_t ulen, int64_t key, bool back,
                                int64_t now_us, uint32_t age_cs, int slot);

/* Removes pre-queue node as idle (abandoned_total), ending an opening
 * that it leaves with nobody to move; sets *dirty. */
void wr_memq__abandon_pre(wr_memq_t *q, wr_zsl_node_t *node, bool *dirty);

/* ---- memq_db.c: the db's arrays sorted by name ---- */

/* The index of name in items (n pointers to structs whose name, a
 * NUL-terminated string, is at name_off), or where it would go; *found. */
size_t wr_memq__by_name(void *const *items, size_t n, size_t name_off, const char *name,
                        bool *found);

/* Inserts item at i of *items (*n of them, room for *cap; grown by
 * doubling). WR_OK or WR_ENOMEM (nothing changed). */
wr_err_t wr_memq__insert_at(void ***items, size_t *n, size_t *cap, size_t i, void *item);

/* ---- memq_log.c: the public log's leaves (no-ops without a log) ---- */

/* user got a place: a join leaf (line: t = their score; pre: t the next
 * order key, and the opening's commit first with preQueueShuffle), unless
 * they are in the log's line already. */
void wr_memq__log_join(wr_memq_t *q, const char *user, size_t ulen, int64_t score, bool pre,
                       int64_t now_us);

/* The same with the person's group (grp, NULL or "" the standard line). */
void wr_memq__log_join_grp(wr_memq_t *q, const char *user, size_t ulen, int64_t score, bool pre,
                           const char *grp, int64_t now_us);

/* A join placed node (line or pre) at now_us: seen now, pending when by
 * the page, else its join leaf (shuffled: a pre-queue key that is not an
 * arrival time). */
void wr_memq__placed(wr_memq_t *q, wr_zsl_node_t *node, bool page, bool shuffled, int64_t now_us);

/* Node (line or pre) was a pending page join and now counts: its join
 * leaf, with its original score (line). */
void wr_memq__log_counted(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us);

/* The line nodes (q->line, the groups' lines) made from now on carry room
 * for a copy of their person's receipt (zsl.h extra bytes,
 * wr_memq_log_receipt_at) when on: 64 bytes more a person in line, nothing
 * without a log. Set by every config put from publicLog (so that a
 * snapshot's people, loaded before their log is attached, have it too) and
 * by wr_memq_log_attach. */
void wr_memq__log_hints(wr_memq_t *q, bool on);

/* admit, away, leave leaves of a member of the log's line (else nothing).
 * admit returns the member's join leaf index (UINT64_MAX: not a member). */
uint64_t wr_memq__log_admit(wr_memq_t *q, const char *user, size_t ulen, const char *grp, bool held,
                            int64_t now_us);
/* An unseen pass expired (docs/API.md 1.3, second reading): the away leaf
 * with unseen, and user (whose join leaf is join_index) is back in the
 * log's line, away. Nothing without a log or a join leaf. */
void wr_memq__log_unseen(wr_memq_t *q, const char *user, size_t ulen, uint64_t join_index,
                         int64_t now_us);
void wr_memq__log_away(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us);
void wr_memq__log_leave(wr_memq_t *q, const char *user, size_t ulen, int why, int64_t now_us);
/* The same for a node (its id). */
void wr_memq__log_leave_node(wr_memq_t *q, const wr_zsl_node_t *node, int why, int64_t now_us);

/* The pre-queue key of a join made while the opening waits for its
 * beacon (after opensAt): above every drawn rank, in arrival order. */
#define WR_MEMQ_LATE_KEY (INT64_C(1) << 62)

#define WR_MEMQ_BEACON_WAIT_US (60 * MICRO) /* wr_memq_log_beacon_wait */

/* A new arrival's score: max(wall_us, last_score + 1), strictly
 * increasing, so a clock stepping back never puts a newcomer ahead. */
static inline int64_t wr_memq__next_score(const wr_memq_t *q, int64_t wall_us)
{
    return wall_us > q->last_score ? wall_us : q->last_score + 1;
}

/* The opening begins: with a commit awaiting, the draw: the pre-queue is
 * ordered by rank (its keys replaced) and the draw leaf written. */
void wr_memq__log_draw(wr_memq_t *q, int64_t now_us);

/* ---- memq_group.c: priority groups ---- */

/* The line node is in: its group's line, or the standard line. */
wr_zsl_t *wr_memq__line_of(const wr_memq_t *q, const wr_zsl_node_t *node);
/* slot when it holds a group, else -1. */
int wr_memq__slot_valid(const wr_memq_t *q, int slot);
/* The 1-based line of slot in the config's order, as the split and the
 * answers number lines (0: the standard line, or a slot no longer in the
 * config). */
uint32_t wr_memq__line_of_slot(const wr_memq_t *q, int slot);
/* People in every line (the answers' waiting): the standard line with its
 * pre-queue still to move, and every group's line. */
uint64_t wr_memq__waiting_all(const wr_memq_t *q);
/* n admissions from slot's line (-1 the standard line) at now_us. */
void wr_memq__rate_add(wr_memq_t *q, int slot, uint64_t n, int64_t now_us);
/* e's group fields for someone of slot (-1 the standard line) at now_us. */
void wr_memq__group_answer(const wr_memq_t *q, int slot, int64_t now_us, wr_entry_t *e);
/* Before a config_put swaps cfg in: the groups' slots made to match it
 * (rng seeds new lines). WR_OK, WR_EGROUP (a group leaving has people or
 * live codes at now_us), WR_ENOMEM; nothing changed on error. */
wr_err_t wr_memq__groups_sync(wr_memq_t *q, const wr_queue_config_t *cfg, wr_rng_t *rng,
                              int64_t now_us);
/* Frees every group and code of q. */
void wr_memq__groups_free(wr_memq_t *q);
/* The verdict on the code whose hash is hash at now_us; *slot its group
 * when WR_CODE_OK (else -1). */
wr_code_reason_t wr_memq__code_check(const wr_memq_t *q, const char *hash, int64_t now_us,
                                     int *slot);
/* One use of a checked code spent. */
void wr_memq__code_spend(wr_memq_t *q, const char *hash);

/* Web Push (memq_push.c): admission of t's user claims their
 * subscription (moved to push_due with the pass's expiry); leave drops
 * it; the queue's free frees them all. */
void wr_memq__push_claim(wr_memq_t *q, const wr_memq_token_t *t);
void wr_memq__push_drop(wr_memq_t *q, const char *user, size_t ulen);
void wr_memq__push_free(wr_memq_t *q);
/* The closing push (after an admission tick): when q has just become
 * halted (wr_memq_halted: closed or sold out), a copy of every live
 * subscription goes to push_due with the reason (the subscriptions stay);
 * once per closing: a reopening (not halted any more) arms it again. */
void wr_memq__push_closing(wr_memq_t *q, bool *dirty);

#endif
