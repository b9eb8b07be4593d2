/*
 * memq_idle.c - people who stop asking (idleTimeoutSeconds) in the
 * embedded store's queue model: the idle check, the removal of an idle
 * user from the line or the pre-queue, and the clock sweep.
 *
 * Each line node carries its user's last join or poll (aux word,
 * centiseconds of the store clock modulo 2^32) and WR_MEMQ_PENDING (flags)
 * for a page join not yet followed by a request. wr_memq_entry (memq.c)
 * updates both in place and removes a user already idle (checked on read,
 * wr_memq__abandon); wr_memq_admit first runs a clock sweep
 * (wr_memq_idle_sweep) - at most WR_MEMQ_IDLE_VISIT_MAX nodes from
 * idle_cursor on, wrapping, so a short line is swept whole every tick -
 * and then takes the first users that are neither pending nor idle.
 * Removals count in abandoned_total. The pre-queue is swept the same way
 * from pre_idle_cursor. The Redis scripts sweep the same way (HSCAN of a
 * last-seen hash from a cursor); both remove every idle user of a line
 * shorter than the bounds. The full model and its invariants are
 * described at the top of memq.c. No I/O, no clocks.
 */
#include "store/memory/memq.h"
#include "store/memory/memq_internal.h"

bool wr_memq_idle(const wr_memq_t *q, const wr_zsl_node_t *node, int64_t now_us)
{
    uint32_t t = q->cfg->cfg.idle_timeout_seconds;
    return t > 0 && wr_memq_seen_age_cs(node, now_us) >= t * 100u;
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

/* The clock sweep over one set (the line, or the pre-queue): at most
 * WR_MEMQ_IDLE_VISIT_MAX nodes from *cursor on, wrapping; remove() takes
 * an idle node out. */
static void sweep_set(wr_memq_t *q, wr_zsl_t *set, int64_t *cursor, int64_t now_us,
                      void (*remove)(wr_memq_t *, wr_zsl_node_t *, bool *), bool *dirty)
{
    uint64_t len = wr_zsl_length(set);
    uint64_t visits = len < WR_MEMQ_IDLE_VISIT_MAX ? len : WR_MEMQ_IDLE_VISIT_MAX;
    uint64_t removed = 0;
    wr_zsl_node_t *x = wr_zsl_first_ge(set, *cursor);
    if (!x)
        x = wr_zsl_first(set);
    for (uint64_t i = 0; x && i < visits && removed < WR_STORE_IDLE_SWEEP_MAX; i++) {
        wr_zsl_node_t *next = wr_zsl_next(x);
        if (wr_memq_idle(q, x, now_us)) {
            remove(q, x, dirty);
            removed++;
        }
        x = next ? next : wr_zsl_first(set); /* wrap to the front */
    }
    *cursor = x ? wr_zsl_node_score(x) : 0;
}

void wr_memq_idle_sweep(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    if (q->cfg->cfg.idle_timeout_seconds == 0)
        return;
    sweep_set(q, q->line, &q->idle_cursor, now_us, wr_memq__abandon, dirty);
    /* idleTimeoutSeconds applies in the pre-queue too */
    if (wr_zsl_length(q->pre) > 0)
        sweep_set(q, q->pre, &q->pre_idle_cursor, now_us, wr_memq__abandon_pre, dirty);
}
