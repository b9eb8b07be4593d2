/*
 * memq.c - the queue model of the embedded store: the structures behind
 * one queue and the set of queues, and the operations on them, without
 * I/O, clocks or libevent.
 *
 * Structure. A queue holds:
 *  - cfg: a reference-counted, immutable config (a config_put swaps in a
 *    new one), plus a version counter;
 *  - line: an order-statistic skiplist (zsl.h) of (arrival score, user id)
 *    and waiting: an id hash (idhash.h) from user id to line node;
 *  - tokens: an id hash from user id to token (jti, iat, exp) and heap: a
 *    binary min-heap of the same tokens by expiry, each token knowing its
 *    heap index. The active count is the number of tokens: exact.
 *  - last_score, the admission budget (queue.h), the counters.
 * The db holds the queues in an array sorted by name (binary search; few
 * queues) and the signing secret.
 *
 * Invariants. A user is in at most one of line and tokens. Every token is
 * in both tokens and heap. The waiting hash and the line hold the same
 * users. Every function keeps them; one that fails changes nothing but
 * the sweep it may have run first: admission allocates every token and
 * reserves room in the heap and the hash before the first user leaves the
 * line.
 *
 * Operations. entry (join/status), leave, admit and token_use are the
 * memory store's versions of the Redis scripts, with the same answers:
 * expiry sweeps (tokens with exp <= now removed, counted in expired_total)
 * run exactly where the scripts run theirs - join/status, admit, leave of
 * a user not in line (queue_get/list sweep in store_memory.c). token_use
 * looks only at the user's own token: EXPIRED while not yet swept; consume
 * then removes it, counted as expired.
 *
 * Degraded mode. burned is the set of spent fail-open passes (jti ->
 * expiry), an id hash plus a min-heap by expiry like the tokens, created
 * at the first burn; expired burns are dropped by every burn and every
 * admission tick (burn.lua drops them on each burn).
 *
 * People who stop asking (idleTimeoutSeconds). Each line node carries
 * its user's last join or poll; entry removes a user already idle, admit
 * first runs a bounded clock sweep (memq_idle.c).
 *
 * The opening (docs/API.md, "Sale opening"). Before the config's opensAt a
 * new user goes to pre, a second skiplist keyed by a random 62-bit number
 * from the CSPRNG (preQueueShuffle: i.i.d. keys, no ties - a taken key is
 * drawn again - so the key order is a uniformly random permutation) or by
 * the arrival score. The opening begins at the first join, status or admit
 * at or after opensAt (at once when opensAt is null) that finds people in
 * pre: it reserves the line scores last_score + 1 .. + |pre| and as many
 * of the line's rank numbers (zsl.h), so later arrivals (appended with
 * higher scores) line up behind the whole pre-queue. Then every admit call
 * moves the next WR_MEMQ_OPEN_CHUNK of pre, in key order, into those
 * scores (open_step); the line's rank index stays on. While people are
 * still to move they count in waiting, a later arrival's position counts
 * them, a pre member's position is what the move will give it, and
 * admission takes only people below the moved part. The opening ends when
 * pre is empty (a leave may empty it too). Joins during the opening go to
 * the line (a new opensAt set meanwhile takes effect after it).
 *
 * Stock (docs/API.md 1.2, "The end of a sale"). stock_left is what is
 * left (-1: no stock). admit takes at most stock_left and subtracts what
 * it admitted; a token leaves tokens in exactly one of four ways - expiry
 * (wr_memq_sweep, or consume of an expired one), leave, consume - and the
 * first two add one back, at that one place, so a unit returns at most
 * once and a consumed pass keeps it: 0 <= stock_left <= set + returns.
 * Sold out: stock_left 0 and no token (an expired one returns first:
 * every caller sweeps before asking); closed or sold out, entry answers
 * CLOSED (a live pass still ADMITTED; a newcomer is not added) and admit
 * accrues nothing.
 *
 * Unseen passes (docs/API.md 1.3). A token is seen once an entry answer
 * carried it (ADMITTED); one that expires unseen (token_expire, the one
 * step where that happens) sends its holder back to held, held from its
 * expiry (memq_idle.c); its unit and active slot return as for any.
 *
 * Files. This file holds tokens and their heap, the line, entry and
 * leave; the admission tick is in memq_admit.c, priority groups and
 * presale codes in memq_group.c; the opening and the pre-queue are in memq_open.c,
 * sessions and the burned set in memq_session.c, people who stop asking
 * (the idle check, removal and sweep, the held people, the unseen expiry)
 * in memq_idle.c, configs, the db of queues and stats in memq_db.c;
 * what they share is in memq_internal.h (wr_memq__*).
 *
 * Ownership. A queue owns its nodes (through the skiplist), its tokens and
 * one reference to its config; the db owns its queues. Ids passed in are
 * copied into nodes and tokens.
 */
#include "store/memory/memq.h"
#include "store/memory/memq_internal.h"

#include "base/array.h"
#include "base/crypto.h"

#include <stdlib.h>
#include <string.h>

/* ---- tokens and the expiry heap ------------------------------------- */

wr_memq_token_t *wr_memq_token_new(const char *id, size_t idlen)
{
    wr_memq_token_t *t = malloc(sizeof *t + idlen + 1);
    if (!t)
        return NULL;
    memcpy(t->id, id, idlen);
    t->id[idlen] = '\0';
    t->idlen = (uint8_t)idlen;
    t->seen = false;
    t->log_index = UINT64_MAX;
    t->slot = -1;
    return t;
}

/* The expiry heaps (tokens by exp_us, sessions by their end in exp_us):
 * binary min-heaps of token pointers, each item knowing its index. */
static void heap_set(wr_memq_token_t **h, size_t i, wr_memq_token_t *t)
{
    h[i] = t;
    t->heap_idx = i;
}

/* Heap order: by exp_us, then by user id, so that passes expiring at the
 * same time leave (and their unseen holders are held) in one order, the
 * Redis sweep's (ZRANGEBYSCORE: score, then member). */
static bool heap_before(const wr_memq_token_t *a, const wr_memq_token_t *b)
{
    if (a->exp_us != b->exp_us)
        return a->exp_us < b->exp_us;
    return strcmp(a->id, b->id) < 0;
}

void wr_memq__heap_up(wr_memq_token_t **h, size_t i)
{
    wr_memq_token_t *t = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_before(t, h[p]))
            break;
        heap_set(h, i, h[p]);
        i = p;
    }
    heap_set(h, i, t);
}

void wr_memq__heap_down(wr_memq_token_t **h, size_t n, size_t i)
{
    wr_memq_token_t *t = h[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        const wr_memq_token_t *best = t;
        if (l < n && heap_before(h[l], best)) {
            m = l;
            best = h[l];
        }
        if (l + 1 < n && heap_before(h[l + 1], best))
            m = l + 1;
        if (m == i)
            break;
        heap_set(h, i, h[m]);
        i = m;
    }
    heap_set(h, i, t);
}

wr_err_t wr_memq__heap_reserve_in(wr_memq_token_t ***h, size_t n, size_t *capp, size_t extra)
{
    wr_memq_token_t **a = wr_array_grow(*h, capp, n + extra, sizeof *a, 16, false);
    if (!a)
        return WR_ENOMEM;
    *h = a;
    return WR_OK;
}

static wr_err_t heap_reserve(wr_memq_t *q, size_t extra)
{
    return wr_memq__heap_reserve_in(&q->heap, q->heap_n, &q->heap_cap, extra);
}

/* Pushes t; room must have been reserved. */
void wr_memq__heap_push_in(wr_memq_token_t **h, size_t *n, wr_memq_token_t *t)
{
    heap_set(h, (*n)++, t);
    wr_memq__heap_up(h, *n - 1);
}

static void heap_push(wr_memq_t *q, wr_memq_token_t *t)
{
    wr_memq__heap_push_in(q->heap, &q->heap_n, t);
}

void wr_memq__heap_remove_in(wr_memq_token_t **h, size_t *n, wr_memq_token_t *t)
{
    size_t i = t->heap_idx;
    wr_memq_token_t *last = h[--*n];
    if (i == *n)
        return;
    heap_set(h, i, last);
    wr_memq__heap_up(h, i);
    wr_memq__heap_down(h, *n, last->heap_idx);
}

static void heap_remove(wr_memq_t *q, wr_memq_token_t *t)
{
    wr_memq__heap_remove_in(q->heap, &q->heap_n, t);
}

wr_err_t wr_memq_token_add(wr_memq_t *q, wr_memq_token_t *t)
{
    if (heap_reserve(q, 1) != WR_OK)
        return WR_ENOMEM;
    wr_err_t err = wr_idhash_put(q->tokens, t);
    if (err != WR_OK)
        return err;
    heap_push(q, t);
    return WR_OK;
}

/* Removes t from tokens and heap, and frees it. */
static void token_drop(wr_memq_t *q, wr_memq_token_t *t)
{
    heap_remove(q, t);
    wr_idhash_del(q->tokens, t->id, t->idlen);
    free(t);
}

/* Drops unconsumed token t (expired or given back): its stock unit returns. */
static void token_return(wr_memq_t *q, wr_memq_token_t *t)
{
    token_drop(q, t);
    if (q->stock_left >= 0)
        q->stock_left++;
}

wr_close_reason_t wr_memq_halted(const wr_memq_t *q)
{
    if (q->cfg->cfg.closed)
        return WR_CLOSE_CLOSED;
    if (q->stock_left == 0 && q->heap_n == 0)
        return WR_CLOSE_SOLD_OUT;
    return WR_CLOSE_NONE;
}

void wr_memq_stock_note(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    bool sold = q->stock_left == 0 && q->heap_n == 0;
    if (sold == (q->sold_out_us >= 0))
        return;
    q->sold_out_us = sold ? now_us : -1;
    *dirty = true;
}

wr_memq_token_t *wr_memq_token(const wr_memq_t *q, const char *user, size_t ulen)
{
    return wr_idhash_get(q->tokens, user, ulen);
}

/* Expired unconsumed token t leaves (expired_total; its unit returns);
 * one that no answer carried is the unseen expiry: its holder is held. */
static void token_expire(wr_memq_t *q, wr_memq_token_t *t, int64_t now_us, bool *dirty)
{
    char id[WR_USER_ID_MAX + 1];
    size_t len = t->idlen;
    bool unseen = !t->seen;
    int64_t exp_us = t->exp_us;
    uint64_t log_index = t->log_index;
    int slot = t->slot;
    memcpy(id, t->id, len + 1);
    token_return(q, t);
    q->expired_total++;
    *dirty = true;
    if (unseen)
        wr_memq__unseen_expiry(q, id, len, exp_us, log_index, slot, now_us, dirty);
}

void wr_memq_sweep(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    while (q->heap_n > 0 && q->heap[0]->exp_us <= now_us)
        token_expire(q, q->heap[0], now_us, dirty);
    wr_memq__session_sweep(q, now_us, dirty);
    wr_memq_stock_note(q, now_us, dirty);
}

/* ---- the line -------------------------------------------------------- */

wr_zsl_node_t *wr_memq_waiting(const wr_memq_t *q, const char *user, size_t ulen)
{
    return wr_idhash_get(q->waiting, user, ulen);
}

/* Inserts user at score into set and its id hash (seq: a reserved rank
 * number of set, or UINT64_MAX for none); *out the node. All or nothing. */
wr_err_t wr_memq__set_add(wr_zsl_t *set, wr_idhash_t *ids, const char *user, size_t ulen,
                          int64_t score, uint64_t seq, wr_zsl_node_t **out)
{
    wr_zsl_node_t *n;
    wr_err_t err = seq == UINT64_MAX ? wr_zsl_insert(set, score, user, ulen, &n)
                                     : wr_zsl_insert_reserved(set, score, user, ulen, seq, &n);
    if (err != WR_OK)
        return err;
    err = wr_idhash_put(ids, n);
    if (err != WR_OK) {
        wr_zsl_delete(set, n);
        return err;
    }
    *out = n;
    return WR_OK;
}

wr_err_t wr_memq_line_add(wr_memq_t *q, const char *user, size_t ulen, int64_t score,
                          wr_zsl_node_t **out)
{
    wr_zsl_node_t *n;
    wr_err_t err = wr_memq__set_add(q->line, q->waiting, user, ulen, score, UINT64_MAX, &n);
    if (err != WR_OK)
        return err;
    if (score > q->last_score)
        q->last_score = score;
    *out = n;
    return WR_OK;
}

wr_err_t wr_memq_line_reserve(wr_memq_t *q, size_t n)
{
    return wr_idhash_reserve(q->waiting, n);
}

/* Removes node from the line and the waiting hash; node is freed. */
void wr_memq__line_remove(wr_memq_t *q, wr_zsl_node_t *node)
{
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    wr_memq__unmark(q, node);
    wr_idhash_del(q->waiting, id, len);
    wr_zsl_delete(wr_memq__line_of(q, node), node);
}

/* ---- operations ------------------------------------------------------ */

/* The ADMITTED answer of user's live token t: it carries the pass to its
 * holder, so t is seen from now on. */
static wr_err_t entry_admitted(wr_memq_token_t *t, wr_entry_t *e, bool *dirty)
{
    if (!t->seen) {
        t->seen = true;
        *dirty = true;
    }
    e->state = WR_ENTRY_ADMITTED;
    memcpy(e->jti, t->jti, sizeof e->jti);
    e->issued_at_us = t->iat_us;
    e->expires_at_us = t->exp_us;
    return WR_OK;
}

/* The answer of entry while q is closed or sold out (e->closed_reason
 * set): a live pass is still ADMITTED; anyone in line, the pre-queue or
 * held keeps their place (seen now) and gets CLOSED, as does a newcomer's
 * join (not added); a status of anyone else is WR_ENOTINQUEUE. n: user's
 * line node (or NULL). */
static wr_err_t entry_halted(wr_memq_t *q, wr_zsl_node_t *n, const char *user, size_t ulen,
                             bool add, int64_t now_us, wr_entry_t *e, bool *dirty)
{
    wr_memq_token_t *t = wr_memq_token(q, user, ulen);
    if (t)
        return entry_admitted(t, e, dirty);
    bool back;
    if (!n)
        n = wr_memq_held(q, user, ulen, &back);
    if (!n)
        n = wr_memq_prequeued(q, user, ulen);
    if (n) {
        wr_memq__seen(q, n, now_us); /* asking while closed is not being away */
        *dirty = true;
    } else if (!add) {
        return WR_ENOTINQUEUE;
    }
    e->state = WR_ENTRY_CLOSED;
    e->waiting = wr_memq__waiting_all(q);
    return WR_OK;
}

wr_err_t wr_memq_entry(wr_memq_t *q, const char *user, size_t ulen, bool add, bool page,
                       int64_t now_us, int64_t wall_us, wr_entry_t *e, bool *dirty)
{
    return wr_memq_entry_group(q, user, ulen, add, page, NULL, now_us, wall_us, e, dirty);
}

/* A newcomer's place in group slot at now_us (wr_memq_entry_group): their
 * group's line at the next arrival score, WAITING (PREQUEUE before
 * opensAt: nobody is admitted until the opening). */
static wr_err_t group_join(wr_memq_t *q, const char *user, size_t ulen, int slot, bool page,
                           int64_t now_us, int64_t wall_us, wr_entry_t *e, bool *dirty)
{
    wr_zsl_t *line = q->grp[slot]->line;
    int64_t score = wr_memq__next_score(q, wall_us);
    wr_zsl_node_t *n;
    wr_err_t err = wr_memq__set_add(line, q->waiting, user, ulen, score, UINT64_MAX, &n);
    if (err != WR_OK)
        return err;
    q->last_score = score;
    wr_zsl_node_set_flags(n, 0);
    wr_memq_node_set_slot(n, slot);
    wr_memq__placed(q, n, page, false, now_us);
    *dirty = true;
    e->state = wr_memq__gate_closed(q, now_us) ? WR_ENTRY_PREQUEUE : WR_ENTRY_WAITING;
    e->position = wr_zsl_rank(line, n);
    e->waiting = wr_memq__waiting_all(q);
    e->head_due_us = wr_queue_admit_due_us(wr_zsl_node_score(wr_zsl_first(line)), now_us);
    e->own_due_us = wr_queue_admit_due_us(score, now_us);
    e->added = true;
    wr_memq__group_answer(q, slot, now_us, e);
    return WR_OK;
}

wr_err_t wr_memq_entry_group(wr_memq_t *q, const char *user, size_t ulen, bool add, bool page,
                             const wr_memq_join_t *j, int64_t now_us, int64_t wall_us,
                             wr_entry_t *e, bool *dirty)
{
    e->group[0] = '\0';
    e->group_line = e->group_first_waiting = 0;
    e->group_admitted_60s = 0;
    e->code_reason = WR_CODE_OK;
    q->entry_node = NULL;
    wr_memq_sweep(q, now_us, dirty);
    if (wr_memq__open_due(q, now_us))
        wr_memq__open_begin(q, now_us, dirty);
    wr_zsl_node_t *n = wr_memq_waiting(q, user, ulen);
    if (n && (wr_zsl_node_flags(n) & WR_MEMQ_PENDING) && wr_memq_idle(q, n, now_us)) {
        /* a page join that never asked again: checked on read, asking
         * late does not revive (away people keep their place) */
        wr_memq__abandon(q, n, dirty);
        n = NULL;
    }
    e->head_due_us = e->own_due_us = -1;
    e->added = false;
    e->passed_ahead = -1;
    e->passed_scan = 0;
    e->held = false;
    e->closed_reason = wr_memq_halted(q);
    if (e->closed_reason != WR_CLOSE_NONE)
        return entry_halted(q, n, user, ulen, add, now_us, e, dirty);
    if (n) {
        /* Seen now: a change a snapshot keeps (restarts do not count
         * against people in line, mem_snapshot.c). */
        wr_memq__seen(q, n, now_us);
        *dirty = true;
        e->state = WR_ENTRY_WAITING;
        q->entry_node = n;
        e->position = wr_memq__line_position(q, n);
        e->waiting = wr_memq__waiting_all(q);
        int slot = wr_memq__slot_valid(q, wr_memq_node_slot(n));
        if (q->n_grp > 0)
            wr_memq__group_answer(q, slot, now_us, e);
        if (slot >= 0 && wr_memq__gate_closed(q, now_us)) {
            e->state = WR_ENTRY_PREQUEUE; /* a group waits for the opening in its line */
            return WR_OK;
        }
        /* the people ahead counted for the retry plan: the first of the
         * line only, as on Redis (lib.lua entry_passed), and not during an
         * opening (the pre-queue still to move is ahead too) */
        if ((slot >= 0 || !q->opening) && e->position - 1 <= WR_STORE_AHEAD_SCAN)
            e->passed_ahead = (int64_t)wr_memq__passed_ahead(q, n, now_us, &e->passed_scan);
        return WR_OK;
    }
    bool back;
    wr_zsl_node_t *h = wr_memq_held(q, user, ulen, &back);
    if (h && !back && wr_memq__hold_over(q, h, now_us)) {
        wr_memq__log_leave_node(q, h, WR_LOGLEAF_ABANDONED, now_us);
        wr_memq__held_remove(q, h, false); /* held too long: gone, as if swept */
        q->abandoned_total++;
        *dirty = true;
        h = NULL;
    }
    if (h) {
        /* held: this request is their return; admitted first next tick */
        wr_err_t err = back ? WR_OK : wr_memq__return(q, h, now_us, dirty);
        if (err != WR_OK)
            return err;
        if (back)
            wr_memq__seen(q, h, now_us);
        *dirty = true;
        e->state = WR_ENTRY_WAITING;
        e->held = true;
        e->position = 1;
        e->waiting = wr_memq__waiting_all(q);
        if (q->n_grp > 0) {
            bool b2;
            const wr_zsl_node_t *h2 = wr_memq_held(q, user, ulen, &b2);
            wr_memq__group_answer(q, h2 ? wr_memq_node_slot(h2) : -1, now_us, e);
        }
        return WR_OK;
    }
    wr_zsl_node_t *p = wr_memq_prequeued(q, user, ulen);
    if (p && (wr_zsl_node_flags(p) & WR_MEMQ_PENDING) && wr_memq_idle(q, p, now_us)) {
        wr_memq__abandon_pre(q, p, dirty); /* a scanner in the pre-queue */
        p = NULL;
    }
    if (p) {
        wr_memq__seen(q, p, now_us);
        *dirty = true;
        if (!q->opening) {
            e->state = WR_ENTRY_PREQUEUE;
            return WR_OK;
        }
        /* not moved yet: the place the move gives */
        e->state = WR_ENTRY_WAITING;
        e->position = wr_zsl_count_below(q->line, q->open_base + (int64_t)q->open_moved) +
                      wr_zsl_rank(q->pre, p);
        e->waiting = wr_memq__waiting_all(q);
        return WR_OK;
    }
    wr_memq_token_t *t = wr_memq_token(q, user, ulen);
    if (t) {
        if (q->n_grp > 0)
            wr_memq__group_answer(q, t->slot, now_us, e);
        return entry_admitted(t, e, dirty);
    }
    if (!add)
        return WR_ENOTINQUEUE;
    /* a newcomer's group: an invite's grp, else a presale code's */
    int slot = j ? wr_memq__slot_valid(q, j->slot) : -1;
    if (j && slot < 0 && j->code_hash) {
        e->code_reason = wr_memq__code_check(q, j->code_hash, now_us, &slot);
        if (e->code_reason != WR_CODE_OK)
            return WR_ECODE; /* nothing changed */
    }
    uint64_t max = q->cfg->cfg.max_queue_size;
    uint64_t total = wr_zsl_length(q->line) + wr_zsl_length(q->pre);
    for (size_t i = 0; i < q->n_grp; i++)
        total += wr_zsl_length(q->grp[q->grp_order[i]]->line);
    if (max > 0 && total >= max) {
        q->rejected_full_total++;
        *dirty = true;
        e->waiting = wr_memq__waiting_all(q);
        return WR_EFULL;
    }
    wr_err_t err;
    if (slot >= 0) {
        if ((err = group_join(q, user, ulen, slot, page, now_us, wall_us, e, dirty)) != WR_OK)
            return err;
        if (!(j->slot >= 0) && j->code_hash)
            wr_memq__code_spend(q, j->code_hash); /* the place it bought */
        return WR_OK;
    }
    if (wr_memq__gate_closed(q, now_us)) {
        bool late = wr_memq_log_beacon_wait(q, now_us); /* after opensAt: not drawn */
        bool shuffled = q->cfg->cfg.pre_queue_shuffle && !late;
        if (shuffled) {
            /* a random key; a taken one (about n / 2^62) is drawn again */
            err = WR_EINVAL;
            for (int i = 0; i < 8 && err == WR_EINVAL; i++) {
                uint64_t r;
                if ((err = wr_crypto_random(&r, sizeof r)) != WR_OK)
                    return err;
                err = wr_memq_pre_add(q, user, ulen, (int64_t)(r >> 2));
            }
        } else {
            int64_t key = wr_memq__next_score(q, wall_us);
            if ((err = wr_memq_pre_add(q, user, ulen, late ? WR_MEMQ_LATE_KEY + key : key)) ==
                WR_OK)
                q->last_score = key;
        }
        if (err != WR_OK)
            return err;
        wr_memq__placed(q, wr_memq_prequeued(q, user, ulen), page, shuffled, now_us);
        *dirty = true;
        e->state = WR_ENTRY_PREQUEUE;
        e->added = true;
        return WR_OK;
    }
    err = wr_memq_line_add(q, user, ulen, wr_memq__next_score(q, wall_us), &n);
    if (err != WR_OK)
        return err;
    wr_memq__placed(q, n, page, false, now_us);
    *dirty = true;
    e->state = WR_ENTRY_WAITING;
    e->position = wr_memq__line_position(q, n);
    e->waiting = wr_memq__waiting_all(q);
    e->head_due_us = wr_queue_admit_due_us(wr_zsl_node_score(wr_zsl_first(q->line)), now_us);
    e->own_due_us = wr_queue_admit_due_us(wr_zsl_node_score(n), now_us);
    e->added = true;
    if (q->n_grp > 0)
        wr_memq__group_answer(q, -1, now_us, e);
    return WR_OK;
}

wr_err_t wr_memq_leave(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us, bool *dirty)
{
    wr_memq__push_drop(q, user, ulen);
    wr_zsl_node_t *n = wr_memq_waiting(q, user, ulen);
    if (!n) /* first: an unseen pass expiring now holds its holder, who is leaving */
        wr_memq_sweep(q, now_us, dirty);
    bool back;
    wr_memq__log_leave(q, user, ulen, WR_LOGLEAF_LEFT, now_us); /* a member: in line */
    wr_zsl_node_t *h = n ? NULL : wr_memq_held(q, user, ulen, &back);
    if (h)
        wr_memq__held_remove(q, h, back);
    wr_zsl_node_t *p = h ? NULL : wr_memq_prequeued(q, user, ulen);
    if (h || p) {
        if (p)
            wr_memq__pre_remove(q, p);
        (void)wr_memq__session_end(q, user, ulen, now_us, dirty);
        q->left_total++;
        *dirty = true;
        return WR_OK;
    }
    wr_memq_token_t *t = n ? NULL : wr_memq_token(q, user, ulen);
    bool ended = wr_memq__session_end(q, user, ulen, now_us, dirty);
    if (n)
        wr_memq__line_remove(q, n);
    else if (t)
        token_return(q, t); /* given back: its unit returns */
    else
        return ended ? WR_OK : WR_ENOTINQUEUE;
    q->left_total++;
    *dirty = true;
    return WR_OK;
}

wr_err_t wr_memq_token_use(wr_memq_t *q, const char *user, size_t ulen, const char *jti,
                           bool consume, int64_t now_us, wr_token_reason_t *reason, bool *dirty)
{
    wr_memq_token_t *t = wr_memq_token(q, user, ulen);
    if (!t || strcmp(t->jti, jti) != 0) {
        /* verify: the jti of an open session passes (past the token's exp) */
        wr_memq_token_t *ss = consume ? NULL : wr_memq_session(q, user, ulen);
        if (ss && ss->exp_us > now_us && strcmp(ss->jti, jti) == 0)
            return WR_OK;
        *reason = WR_TOKEN_CONSUMED;
        return WR_ETOKEN;
    }
    if (t->exp_us <= now_us) {
        if (consume) {
            t->seen = true;                    /* presented: its holder had it (no hold) */
            token_expire(q, t, now_us, dirty); /* expired unconsumed */
            wr_memq_stock_note(q, now_us, dirty);
        }
        *reason = WR_TOKEN_EXPIRED;
        return WR_ETOKEN;
    }
    if (consume && q->cfg->cfg.session_seconds > 0) {
        wr_err_t err = wr_memq__session_open(q, t, now_us, dirty);
        if (err != WR_OK)
            return err;
    }
    if (consume) {
        token_drop(q, t); /* consumed: it keeps its unit */
        q->consumed_total++;
        wr_memq_stock_note(q, now_us, dirty); /* the last live pass: sold out now */
        *dirty = true;
    }
    return WR_OK;
}
