/*
 * memq_open.c - the sale opening of the embedded store's queue model: the
 * pre-queue (pre, pre_ids) and the move of its people into the line.
 *
 * Before opensAt a new user goes to pre (wr_memq_pre_add, called by
 * wr_memq_entry in memq.c while wr_memq__gate_closed holds). The opening
 * begins at the first join, status or admit at or after opensAt that finds
 * people in pre (wr_memq__open_due/wr_memq__open_begin): it reserves the line scores
 * last_score + 1 .. + |pre| and as many rank numbers. wr_memq_open_step
 * then moves pre, in key order, into those scores a chunk at a time;
 * wr_memq__open_settle ends the opening once pre is empty. While people
 * are still to move, wr_memq__pending counts them in waiting and
 * wr_memq__line_position counts them ahead of later arrivals. The full
 * model and its invariants are described at the top of memq.c. No I/O,
 * no clocks.
 */
#include "store/memory/memq.h"
#include "store/memory/memq_internal.h"

#include <stdint.h>

wr_zsl_node_t *wr_memq_prequeued(const wr_memq_t *q, const char *user, size_t ulen)
{
    return wr_idhash_get(q->pre_ids, user, ulen);
}

wr_err_t wr_memq_pre_add(wr_memq_t *q, const char *user, size_t ulen, int64_t key)
{
    wr_zsl_node_t *n;
    return wr_memq__set_add(q->pre, q->pre_ids, user, ulen, key, UINT64_MAX, &n);
}

/* Before opensAt, with no opening in progress: joins go to the pre-queue
 * and nobody is admitted. */
bool wr_memq__gate_closed(const wr_memq_t *q, int64_t now_us)
{
    int64_t at = q->cfg->cfg.opens_at_ms;
    return !q->opening && at >= 0 && (now_us < at * 1000 || wr_memq_log_beacon_wait(q, now_us));
}

/* The opening is due: people in pre, none moving yet, opensAt null or
 * passed. */
bool wr_memq__open_due(const wr_memq_t *q, int64_t now_us)
{
    int64_t at = q->cfg->cfg.opens_at_ms;
    return !q->opening && wr_zsl_length(q->pre) > 0 && (at < 0 || now_us >= at * 1000) &&
           !wr_memq_log_beacon_wait(q, now_us);
}

void wr_memq__open_begin(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    wr_memq__log_draw(q, now_us); /* the public log's draw orders pre first */
    q->open_total = wr_zsl_length(q->pre);
    q->open_base = q->last_score + 1;
    q->last_score = q->open_base + (int64_t)q->open_total - 1;
    q->open_moved = 0;
    q->open_seq = wr_zsl_reserve(q->line, q->open_total);
    q->opening = true;
    *dirty = true;
}

/* Ends the opening once nobody is left to move. */
void wr_memq__open_settle(wr_memq_t *q)
{
    if (q->opening && wr_zsl_length(q->pre) == 0) {
        q->opening = false;
        wr_zsl_unreserve(q->line);
    }
}

void wr_memq__pre_remove(wr_memq_t *q, wr_zsl_node_t *node)
{
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    wr_idhash_del(q->pre_ids, id, len);
    wr_zsl_delete(q->pre, node);
    wr_memq__open_settle(q);
}

void wr_memq_open_restore(wr_memq_t *q, int64_t base, uint64_t total, uint64_t moved)
{
    q->open_base = base;
    q->open_total = total;
    q->open_moved = moved;
    q->open_seq = wr_zsl_reserve(q->line, total - moved) - moved;
    q->opening = true;
}

/* Moves the first of pre to the line at the next reserved score. */
static wr_err_t move_one(wr_memq_t *q)
{
    wr_zsl_node_t *p = wr_zsl_first(q->pre), *n;
    size_t len;
    const char *id = wr_zsl_node_id(p, &len);
    wr_err_t err =
        wr_memq__set_add(q->line, q->waiting, id, len, q->open_base + (int64_t)q->open_moved,
                         q->open_seq + q->open_moved, &n);
    if (err != WR_OK)
        return err;
    /* the last-seen time and the pending mark go along */
    wr_zsl_node_set_aux(n, wr_zsl_node_aux(p));
    wr_zsl_node_set_flags(n, wr_zsl_node_flags(p));
    wr_idhash_del(q->pre_ids, id, len);
    wr_zsl_pop_first(q->pre, 1, NULL, NULL);
    q->open_moved++;
    return WR_OK;
}

wr_err_t wr_memq_open_step(wr_memq_t *q, int64_t now_us, uint64_t max, uint64_t *moved,
                           uint64_t *left, bool *dirty)
{
    wr_err_t err = WR_OK;
    uint64_t k = 0;
    if (wr_memq__open_due(q, now_us))
        wr_memq__open_begin(q, now_us, dirty);
    while (q->opening && k < max && wr_zsl_length(q->pre) > 0) {
        if ((err = move_one(q)) != WR_OK)
            break;
        k++;
    }
    if (k > 0)
        *dirty = true;
    wr_memq__open_settle(q);
    *moved = k;
    *left = q->opening ? wr_zsl_length(q->pre) : 0;
    return err;
}

/* People not yet moved: they count in waiting while the opening runs. */
uint64_t wr_memq__pending(const wr_memq_t *q)
{
    return q->opening ? wr_zsl_length(q->pre) : 0;
}

/* The 1-based position of line node n: its rank, plus the pre-queue not
 * yet moved when n came after the opening began. */
uint64_t wr_memq__line_position(const wr_memq_t *q, const wr_zsl_node_t *n)
{
    if (wr_memq__slot_valid(q, wr_memq_node_slot(n)) >= 0)
        return wr_zsl_rank(wr_memq__line_of(q, n), n); /* a group's line: no pre-queue */
    uint64_t r = wr_zsl_rank(q->line, n);
    if (q->opening && wr_zsl_node_score(n) >= q->open_base + (int64_t)q->open_total)
        r += wr_zsl_length(q->pre);
    return r;
}
