/*
 * memq_idle.c - away, not gone (idleTimeoutSeconds, awayHoldSeconds;
 * docs/API.md 1.2) in the embedded store's queue model: the away check,
 * the clock sweep, and the held people.
 *
 * Each line node carries its user's last join or poll (aux word,
 * centiseconds of the store clock modulo 2^32), WR_MEMQ_PENDING (flags)
 * for a page join not yet followed by a request, and WR_MEMQ_AWAY for a
 * user the sweep found away (counted in away_n, for stats). A user last
 * seen idleTimeoutSeconds ago or more is away (wr_memq_idle): they keep
 * their place. Only a pending page join that is idle leaves (abandoned),
 * on read (wr_memq_entry), in the sweep or when admission meets it.
 *
 * wr_memq_idle_sweep (first in every admit) is a clock hand: at most
 * WR_MEMQ_IDLE_VISIT_MAX nodes from idle_cursor on, wrapping, so a short
 * line is seen whole every tick; it marks and unmarks away users and
 * removes idle pending ones. The pre-queue is swept the same way
 * (removals only). Then the held expiry.
 *
 * Held. When admission (memq.c, admit_first) reaches a user who is away,
 * their turn has come: they leave the line for held, keyed by the time
 * they were held (wr_memq__hold). When they ask again they move to back
 * (wr_memq__return), which the next tick admits first; one who is away
 * again by then is held anew (wr_memq__rehold). A held user not back
 * awayHoldSeconds after being held leaves (abandoned_total). Held and
 * back keys are strictly increasing (max(now, held_last + 1)), so both
 * sets are in time order. The Redis scripts keep the same sets (lib.lua).
 * The full model and its invariants are described at the top of memq.c.
 * No I/O, no clocks.
 */
#include "store/memory/memq.h"
#include "store/memory/memq_internal.h"

bool wr_memq_idle(const wr_memq_t *q, const wr_zsl_node_t *node, int64_t now_us)
{
    uint32_t t = q->cfg->cfg.idle_timeout_seconds;
    if (t == 0 || wr_memq_seen_age_cs(node, now_us) < t * 100u)
        return false;
    size_t len; /* a live Web Push subscription: present without polling */
    const char *id = wr_zsl_node_id(node, &len);
    return !wr_memq_push_has(q, id, len);
}

uint64_t wr_memq__passed_ahead(const wr_memq_t *q, const wr_zsl_node_t *n, int64_t now_us,
                               uint64_t *scanned)
{
    int64_t idle_us = (int64_t)q->cfg->cfg.idle_timeout_seconds * 1000000;
    double rate = q->cfg->cfg.admit_per_second;
    uint64_t looked = 0, taken = 0, passed = 0;
    for (const wr_zsl_node_t *x = wr_zsl_first(wr_memq__line_of(q, n));
         x && x != n && looked < WR_STORE_AHEAD_SCAN; x = wr_zsl_next(x), looked++) {
        int64_t silent = (int64_t)wr_memq_seen_age_cs(x, now_us) * 10000;
        int64_t reach = rate > 0 ? (int64_t)((double)taken * 1e6 / rate) : 0;
        bool pending = wr_zsl_node_flags(x) & WR_MEMQ_PENDING;
        bool over = wr_queue_passed_over(silent, reach, idle_us, 0, pending);
        if (over && !pending) {
            /* subscribed (Web Push): never idle, so never overdue either
             * (looked up only for someone the rule would pass over) */
            size_t len;
            const char *id = wr_zsl_node_id(x, &len);
            over = !wr_memq_push_has(q, id, len);
        }
        if (over)
            passed++;
        else
            taken++;
    }
    *scanned = looked;
    return passed;
}

void wr_memq__unmark(wr_memq_t *q, wr_zsl_node_t *node)
{
    uint8_t f = wr_zsl_node_flags(node);
    if (f & WR_MEMQ_AWAY) {
        wr_zsl_node_set_flags(node, f & (uint8_t)~WR_MEMQ_AWAY);
        q->away_n--;
    }
}

void wr_memq__seen(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us)
{
    wr_memq__log_counted(q, node, now_us); /* a pending page join starts to count */
    wr_memq__unmark(q, node);
    wr_memq_seen_set(node, now_us, 0);
    wr_zsl_node_set_flags(node, wr_zsl_node_flags(node) & (uint8_t)~WR_MEMQ_MARKS); /* slot kept */
}

/* Removes node's user from the line as idle (abandoned_total). */
void wr_memq__abandon(wr_memq_t *q, wr_zsl_node_t *node, bool *dirty)
{
    wr_memq__line_remove(q, node);
    q->abandoned_total++;
    *dirty = true;
}

/* Removes pre-queue node as idle (abandoned_total). */
void wr_memq__abandon_pre(wr_memq_t *q, wr_zsl_node_t *node, bool *dirty)
{
    wr_memq__pre_remove(q, node);
    q->abandoned_total++;
    *dirty = true;
}

/* ---- held people --------------------------------------------------- */

/* The next hold or return key: now, or just above the last one given. */
static int64_t held_key(const wr_memq_t *q, int64_t now_us)
{
    return now_us > q->held_last ? now_us : q->held_last + 1;
}

wr_err_t wr_memq_held_add(wr_memq_t *q, const char *user, size_t ulen, int64_t key, bool back,
                          int64_t now_us, uint32_t age_cs)
{
    return wr_memq__held_add_slot(q, user, ulen, key, back, now_us, age_cs, -1);
}

wr_err_t wr_memq__held_add_slot(wr_memq_t *q, const char *user, size_t ulen, int64_t key, bool back,
                                int64_t now_us, uint32_t age_cs, int slot)
{
    wr_zsl_node_t *n;
    wr_err_t err = wr_memq__set_add(back ? q->back : q->held, back ? q->back_ids : q->held_ids,
                                    user, ulen, key, UINT64_MAX, &n);
    if (err != WR_OK)
        return err;
    wr_memq_seen_set(n, now_us, age_cs);
    wr_zsl_node_set_flags(n, 0);
    wr_memq_node_set_slot(n, wr_memq__slot_valid(q, slot));
    if (key > q->held_last)
        q->held_last = key;
    return WR_OK;
}

wr_zsl_node_t *wr_memq_held(const wr_memq_t *q, const char *user, size_t ulen, bool *back)
{
    wr_zsl_node_t *n = wr_idhash_get(q->held_ids, user, ulen);
    *back = false;
    if (!n && (n = wr_idhash_get(q->back_ids, user, ulen)) != NULL)
        *back = true;
    return n;
}

void wr_memq__held_remove(wr_memq_t *q, wr_zsl_node_t *node, bool back)
{
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    wr_idhash_del(back ? q->back_ids : q->held_ids, id, len);
    wr_zsl_delete(back ? q->back : q->held, node);
}

bool wr_memq__hold_over(const wr_memq_t *q, const wr_zsl_node_t *node, int64_t now_us)
{
    return wr_zsl_node_score(node) + (int64_t)q->cfg->cfg.away_hold_seconds * MICRO <= now_us;
}

/* Moves node of set from (line, or back) into held at now_us: added first
 * (its id lives in node), then removed from where it was. */
static void hold_from(wr_memq_t *q, wr_zsl_node_t *node, bool from_back, int64_t now_us,
                      bool *dirty)
{
    *dirty = true;
    if (!from_back) {
        size_t alen;
        const char *aid = wr_zsl_node_id(node, &alen);
        wr_memq__log_away(q, aid, alen, now_us); /* passed over while away */
    }
    if (q->cfg->cfg.away_hold_seconds == 0) {
        /* held people leave at once */
        wr_memq__log_leave_node(q, node, WR_LOGLEAF_ABANDONED, now_us);
        if (from_back)
            wr_memq__held_remove(q, node, true);
        else
            wr_memq__line_remove(q, node);
        q->abandoned_total++;
        return;
    }
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    uint32_t age = wr_memq_seen_age_cs(node, now_us);
    if (wr_memq__held_add_slot(q, id, len, held_key(q, now_us), false, now_us, age,
                               wr_memq_node_slot(node)) != WR_OK)
        return; /* out of memory: stays where it is, passed over */
    if (from_back)
        wr_memq__held_remove(q, node, true);
    else
        wr_memq__line_remove(q, node);
}

void wr_memq__hold(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us, bool *dirty)
{
    hold_from(q, node, false, now_us, dirty);
}

void wr_memq__rehold(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us, bool *dirty)
{
    hold_from(q, node, true, now_us, dirty);
}

wr_err_t wr_memq__return(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us, bool *dirty)
{
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    wr_err_t err = wr_memq__held_add_slot(q, id, len, held_key(q, now_us), true, now_us, 0,
                                          wr_memq_node_slot(node));
    if (err != WR_OK)
        return err;
    wr_memq__held_remove(q, node, false);
    *dirty = true;
    return WR_OK;
}

void wr_memq__unseen_expiry(wr_memq_t *q, const char *user, size_t ulen, int64_t exp_us,
                            uint64_t log_index, int slot, int64_t now_us, bool *dirty)
{
    q->unseen_expired_total++;
    *dirty = true;
    wr_memq__log_unseen(q, user, ulen, log_index, now_us);
    if (q->cfg->cfg.away_hold_seconds == 0) {
        wr_memq__log_leave(q, user, ulen, WR_LOGLEAF_ABANDONED, now_us);
        q->abandoned_total++; /* held people leave at once */
        return;
    }
    /* last seen: as far as the store knows, when the pass expired */
    int64_t age_us = now_us - exp_us;
    uint32_t age_cs = age_us > 0 && age_us / 10000 < INT32_MAX ? (uint32_t)(age_us / 10000) : 0;
    (void)wr_memq__held_add_slot(q, user, ulen, held_key(q, exp_us), false, now_us, age_cs, slot);
}

/* Held people held awayHoldSeconds or longer leave (oldest first). */
static void held_expire(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    uint64_t k = 0;
    wr_zsl_node_t *x;
    while (k < WR_STORE_IDLE_SWEEP_MAX && (x = wr_zsl_first(q->held)) != NULL &&
           wr_memq__hold_over(q, x, now_us)) {
        wr_memq__log_leave_node(q, x, WR_LOGLEAF_ABANDONED, now_us);
        wr_memq__held_remove(q, x, false);
        q->abandoned_total++;
        *dirty = true;
        k++;
    }
}

/* ---- the sweep ------------------------------------------------------ */

/* Looks at line node x at now_us: removes an idle pending page join
 * (true), else marks or unmarks it away. */
static bool sweep_line_node(wr_memq_t *q, wr_zsl_node_t *x, int64_t now_us, bool *dirty)
{
    bool idle = wr_memq_idle(q, x, now_us);
    uint8_t f = wr_zsl_node_flags(x);
    if (idle && (f & WR_MEMQ_PENDING)) {
        wr_memq__abandon(q, x, dirty);
        return true;
    }
    if (idle && !(f & WR_MEMQ_AWAY)) {
        wr_zsl_node_set_flags(x, f | WR_MEMQ_AWAY);
        q->away_n++;
    } else if (!idle) {
        wr_memq__unmark(q, x);
    }
    return false;
}

/* Looks at pre-queue node x: removes an idle pending page join. */
static bool sweep_pre_node(wr_memq_t *q, wr_zsl_node_t *x, int64_t now_us, bool *dirty)
{
    if ((wr_zsl_node_flags(x) & WR_MEMQ_PENDING) && wr_memq_idle(q, x, now_us)) {
        wr_memq__abandon_pre(q, x, dirty);
        return true;
    }
    return false;
}

/* The clock sweep over one set (the line, or the pre-queue): at most
 * WR_MEMQ_IDLE_VISIT_MAX nodes from *cursor on, wrapping; look() returns
 * true when it removed the node. */
static void sweep_set(wr_memq_t *q, wr_zsl_t *set, int64_t *cursor, int64_t now_us,
                      bool (*look)(wr_memq_t *, wr_zsl_node_t *, int64_t, bool *), bool *dirty)
{
    uint64_t len = wr_zsl_length(set);
    uint64_t visits = len < WR_MEMQ_IDLE_VISIT_MAX ? len : WR_MEMQ_IDLE_VISIT_MAX;
    uint64_t removed = 0;
    wr_zsl_node_t *x = wr_zsl_first_ge(set, *cursor);
    if (!x)
        x = wr_zsl_first(set);
    for (uint64_t i = 0; x && i < visits && removed < WR_STORE_IDLE_SWEEP_MAX; i++) {
        wr_zsl_node_t *next = wr_zsl_next(x);
        if (look(q, x, now_us, dirty))
            removed++;
        x = next ? next : wr_zsl_first(set); /* wrap to the front */
    }
    *cursor = x ? wr_zsl_node_score(x) : 0;
}

void wr_memq_idle_sweep(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    held_expire(q, now_us, dirty);
    if (q->cfg->cfg.idle_timeout_seconds == 0 && q->away_n == 0)
        return; /* nobody is away, nobody marked */
    sweep_set(q, q->line, &q->idle_cursor, now_us, sweep_line_node, dirty);
    for (size_t i = 0; i < q->n_grp; i++) { /* each group's line likewise */
        wr_memq_group_t *g = q->grp[q->grp_order[i]];
        if (wr_zsl_length(g->line) > 0)
            sweep_set(q, g->line, &g->idle_cursor, now_us, sweep_line_node, dirty);
    }
    if (q->cfg->cfg.idle_timeout_seconds == 0)
        return;
    /* the pre-queue: people away keep their place; scanners leave */
    if (wr_zsl_length(q->pre) > 0)
        sweep_set(q, q->pre, &q->pre_idle_cursor, now_us, sweep_pre_node, dirty);
}
