/*
 * memq_admit.c - the admission tick of the embedded store's queue model
 * (memq.h wr_memq_admit; the Redis store's admit.lua).
 *
 * One tick: the expiry and away sweeps, a step of the sale opening, the
 * budget (core/queue.h) advanced to the tick, capped by maxActive and the
 * stock; then the held returns first (back, in return order), then each
 * line's share of the rest - the standard line alone without groups, else
 * core/groups.h's split (the groups in order, the standard line's share
 * kept exactly with a carried fraction) - each line taken from its front,
 * passing over pending page joins and holding away people (pick_line).
 * Every allocation (tokens, heap and hash room) happens before anyone
 * leaves a line, so a tick that fails changes nothing but its sweeps.
 * The model's invariants are described at the top of memq.c.
 */
#include "store/memory/memq.h"
#include "store/memory/memq_internal.h"

#include <stdlib.h>
#include <string.h>

static wr_err_t heap_reserve(wr_memq_t *q, size_t extra)
{
    return wr_memq__heap_reserve_in(&q->heap, q->heap_n, &q->heap_cap, extra);
}

static void heap_push(wr_memq_t *q, wr_memq_token_t *t)
{
    wr_memq__heap_push_in(q->heap, &q->heap_n, t);
}

typedef struct {
    wr_memq_t *q;
    wr_memq_token_t **toks;
    uint64_t i;
} admit_ctx_t;

/* Moves node's user to tokens with c's next token (capacity reserved). */
static void admit_one(const wr_zsl_node_t *node, void *arg)
{
    admit_ctx_t *c = arg;
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    wr_idhash_del(c->q->waiting, id, len);
    wr_memq_token_t *t = c->toks[c->i++];
    /* Cannot fail: capacity reserved and the key is new. */
    (void)wr_idhash_put(c->q->tokens, t);
    heap_push(c->q, t);
}

/* The picks of one line in an admission (admit_first), made in up to
 * two passes (its share, then what other lines left). */
typedef struct {
    wr_zsl_t *set;
    int slot;            /* -1 the standard line */
    int64_t limit;       /* no score >= limit is looked at */
    wr_zsl_node_t *next; /* where the next pass goes on (NULL: the front, or the end) */
    bool started;        /* a pass looked at it */
    bool more;           /* its last pass stopped only because it had its quota */
    uint64_t passed;     /* people passed over so far */
    uint64_t start;      /* its first pick in picked (once the picks are sorted by line) */
    uint64_t n;          /* its picks */
    bool prefix;         /* they are the first n of set */
} line_picks_t;

/* Picks up to quota more people of lp->set, going on where its last pass
 * stopped, into picked (at *npicked on, each pick's line li in pline),
 * passing over pending users (they keep their place), removing idle
 * pending ones met on the way (abandoned) and holding away ones (their
 * turn came: held); at most WR_STORE_ADMIT_SCAN_MAX passed over in all,
 * none with a score >= lp->limit looked at; stops at the first user
 * still within the admission delay (queue.h). Returns how many it picked. */
static uint64_t pick_line(wr_memq_t *q, line_picks_t *lp, uint8_t li, uint64_t quota,
                          int64_t now_us, wr_zsl_node_t **picked, uint8_t *pline, uint64_t *npicked,
                          bool *dirty)
{
    uint64_t got = 0;
    wr_zsl_node_t *x = lp->started ? lp->next : wr_zsl_first(lp->set);
    lp->started = true;
    lp->more = false;
    while (x && wr_zsl_node_score(x) < lp->limit && lp->passed < WR_STORE_ADMIT_SCAN_MAX) {
        if (got == quota) {
            lp->more = true; /* someone is left to look at */
            break;
        }
        wr_zsl_node_t *next = wr_zsl_next(x);
        if (wr_queue_admit_due_us(wr_zsl_node_score(x), now_us) > 0)
            break; /* the admission delay (queue.h): nor anyone behind */
        bool pending = wr_zsl_node_flags(x) & WR_MEMQ_PENDING;
        if (wr_memq_idle(q, x, now_us)) {
            /* both leave the front: the prefix holds */
            if (pending)
                wr_memq__abandon(q, x, dirty); /* a page join that never asked again */
            else
                wr_memq__hold(q, x, now_us, dirty); /* their turn came while away */
            lp->passed++;
        } else if (pending) {
            lp->prefix = false;
            lp->passed++;
        } else {
            pline[*npicked] = li;
            picked[(*npicked)++] = x;
            lp->n++;
            got++;
        }
        x = next;
    }
    lp->next = x;
    return got;
}

/* Sorts picked[from..n) by line (pline), keeping each line's order, and
 * sets each line's start. tmp: room for n pointers. */
static void sort_picks(wr_zsl_node_t **picked, const uint8_t *pline, uint64_t from, uint64_t n,
                       wr_zsl_node_t **tmp, line_picks_t *lp, size_t nlines)
{
    uint64_t at = from;
    for (size_t l = 0; l < nlines; l++) {
        lp[l].start = at;
        for (uint64_t i = from; i < n; i++)
            if (pline[i] == l)
                tmp[at++] = picked[i];
    }
    memcpy(picked + from, tmp + from, (n - from) * sizeof *picked);
}

/* How many of each line the tick admits when n in all may go and nback
 * held returns (picked[0..nback)) go first (core/groups.h wr_groups_split;
 * without groups the standard line takes the rest). limit: the standard
 * line's moved part during an opening. */
static void split_tick(wr_memq_t *q, uint64_t n, int64_t limit, wr_zsl_node_t **picked,
                       uint64_t nback, uint64_t quota[WR_GROUPS_MAX + 1])
{
    quota[0] = n - nback;
    if (q->n_grp == 0)
        return;
    wr_groups_line_t lines[WR_GROUPS_MAX + 1];
    memset(lines, 0, sizeof lines);
    for (uint64_t i = 0; i < nback; i++)
        lines[wr_memq__line_of_slot(q, wr_memq_node_slot(picked[i]))].held++;
    uint64_t std = limit == INT64_MAX ? wr_zsl_length(q->line) : wr_zsl_count_below(q->line, limit);
    lines[0].avail = std < n ? std : n;
    for (size_t i = 0; i < q->n_grp; i++) {
        uint64_t len = wr_zsl_length(q->grp[q->grp_order[i]]->line);
        lines[i + 1].avail = len < n ? len : n;
    }
    wr_groups_split(n, wr_groups_share_micro(q->cfg->cfg.standard_share), &q->share_carry_micro,
                    lines, 1 + q->n_grp, quota);
}

/*
 * Moves up to n users to tokens with a fresh jti, iat now_us and exp
 * now_us + ttl_us: first the returned held users (back, in return order;
 * one away again is held anew), then each line's share of the rest
 * (split_tick: the standard line alone without groups) from its front
 * (pick_line). *admitted gets the number moved (*returned those from
 * back); their waits go to *waited (malloc'd, NULL when none was moved)
 * when waited is not NULL: from the arrival score, or for a held return
 * from the return. The tokens are all or nothing: every allocation
 * happens before the first user leaves a line or back (holds and removals
 * stay on error).
 */
static wr_err_t admit_first(wr_memq_t *q, uint64_t n, int64_t limit, int64_t now_us, int64_t ttl_us,
                            uint64_t *admitted, uint64_t *returned, int64_t **waited, bool *dirty)
{
    wr_memq_token_t **toks = NULL;
    wr_zsl_node_t **picked = NULL;
    int64_t *waits = NULL;
    uint64_t ntoks = 0, npicked = 0, nback = 0;
    uint8_t *pline = NULL;
    line_picks_t lp[WR_GROUPS_MAX + 1];
    wr_err_t err = WR_OK;
    *admitted = *returned = 0;
    if (n == 0)
        return WR_OK;
    toks = calloc(n, sizeof *toks);
    picked = calloc(n, sizeof *picked);
    pline = malloc(n);
    if (waited)
        waits = malloc(n * sizeof *waits);
    if (!toks || !picked || !pline || (waited && !waits)) {
        err = WR_ENOMEM;
        goto out;
    }
    /* held returns first: they take the tick's budget before the line */
    wr_zsl_node_t *x = wr_zsl_first(q->back);
    while (x && npicked < n) {
        wr_zsl_node_t *next = wr_zsl_next(x);
        if (wr_memq_idle(q, x, now_us))
            wr_memq__rehold(q, x, now_us, dirty); /* away again: not admitted */
        else
            picked[npicked++] = x;
        x = next;
    }
    nback = npicked;
    uint64_t quota[WR_GROUPS_MAX + 1] = {0};
    split_tick(q, n, limit, picked, nback, quota);
    size_t nlines = 1 + q->n_grp;
    memset(lp, 0, sizeof lp);
    for (size_t l = 0; l < nlines; l++) {
        lp[l].slot = l == 0 ? -1 : q->grp_order[l - 1];
        lp[l].set = l == 0 ? q->line : q->grp[lp[l].slot]->line;
        /* the sale opening's moved part: nobody behind people not yet moved */
        lp[l].limit = l == 0 ? limit : INT64_MAX;
        lp[l].prefix = true;
        if (quota[l] > 0)
            pick_line(q, &lp[l], (uint8_t)l, quota[l], now_us, picked, pline, &npicked, dirty);
    }
    /* what a line could not use (people passed over, the admission
     * delay) goes to the others: the groups in order, then the standard
     * line */
    for (size_t k = 1; k <= nlines && npicked < n && nlines > 1; k++) {
        size_t l = k % nlines;
        if (lp[l].more || (!lp[l].started && quota[l] == 0))
            pick_line(q, &lp[l], (uint8_t)l, n - npicked, now_us, picked, pline, &npicked, dirty);
    }
    if (nlines > 1) { /* toks, still empty, lends its room */
        sort_picks(picked, pline, nback, npicked, (wr_zsl_node_t **)toks, lp, nlines);
        memset(toks, 0, n * sizeof *toks);
    } else
        lp[0].start = nback;
    /* Everything that can fail happens before the line changes. */
    for (; ntoks < npicked; ntoks++) {
        size_t len;
        const char *id = wr_zsl_node_id(picked[ntoks], &len);
        wr_memq_token_t *t = wr_memq_token_new(id, len);
        if (!t) {
            err = WR_ENOMEM;
            goto out;
        }
        toks[ntoks] = t;
        t->slot = (int8_t)wr_memq__slot_valid(q, wr_memq_node_slot(picked[ntoks]));
        err = wr_token_new_jti(t->jti);
        if (err != WR_OK) {
            ntoks++;
            goto out;
        }
        t->iat_us = now_us;
        t->exp_us = now_us + ttl_us;
        if (waits) {
            int64_t w = now_us - wr_zsl_node_score(picked[ntoks]);
            waits[ntoks] = w > 0 ? w : 0;
        }
    }
    if (heap_reserve(q, npicked) != WR_OK || wr_idhash_reserve(q->tokens, npicked) != WR_OK) {
        err = WR_ENOMEM;
        goto out;
    }
    admit_ctx_t c = {.q = q, .toks = toks, .i = 0};
    for (uint64_t i = 0; i < nback; i++) {
        wr_memq_token_t *t = toks[c.i++];
        wr_memq__held_remove(q, picked[i], true);
        (void)wr_idhash_put(q->tokens, t); /* cannot fail: reserved, a new key */
        heap_push(q, t);
    }
    for (uint64_t i = nback; i < npicked; i++)
        wr_memq__unmark(q, picked[i]);
    for (size_t k = 0; k < nlines; k++) {
        if (lp[k].n == 0)
            continue;
        if (lp[k].prefix) {
            wr_zsl_pop_first(lp[k].set, lp[k].n, admit_one, &c);
        } else {
            for (uint64_t i = lp[k].start; i < lp[k].start + lp[k].n; i++) {
                admit_one(picked[i], &c);
                wr_zsl_delete(lp[k].set, picked[i]);
            }
        }
    }
    ntoks = 0; /* owned by the queue now */
    for (uint64_t i = 0; i < npicked; i++) {
        int slot = toks[i]->slot;
        toks[i]->log_index = wr_memq__log_admit(
            q, toks[i]->id, toks[i]->idlen, slot >= 0 ? q->grp[slot]->name : "", i < nback, now_us);
        wr_memq__push_claim(q, toks[i]); /* Web Push: one claim per admission */
        if (slot >= 0)
            q->grp[slot]->admitted_total++;
        if (q->n_grp > 0)
            wr_memq__rate_add(q, slot, 1, now_us);
    }
    q->admitted_total += npicked;
    q->returned_total += nback;
    if (npicked > 0)
        *dirty = true;
    *admitted = npicked;
    *returned = nback;
    if (waited && npicked > 0) {
        *waited = waits;
        waits = NULL;
    }
out:
    for (uint64_t i = 0; i < ntoks; i++)
        free(toks[i]);
    free(toks);
    free(picked);
    free(pline);
    free(waits);
    return err;
}

wr_err_t wr_memq_admit(wr_memq_t *q, int64_t now_us, uint64_t *admitted, int64_t **waited,
                       uint64_t *open_moved, uint64_t *open_left, bool *dirty)
{
    if (waited)
        *waited = NULL;
    wr_memq_sweep(q, now_us, dirty);
    wr_memq_idle_sweep(q, now_us, dirty);
    wr_err_t err = wr_memq_open_step(q, now_us, WR_MEMQ_OPEN_CHUNK, open_moved, open_left, dirty);
    if (err != WR_OK)
        return err;
    const wr_queue_config_t *cfg = &q->cfg->cfg;
    /* while people are still to move, only those below the moved part */
    uint64_t waiting = q->opening
                           ? wr_zsl_count_below(q->line, q->open_base + (int64_t)q->open_moved)
                           : wr_zsl_length(q->line);
    waiting += wr_zsl_length(q->back); /* held returns are admitted first */
    for (size_t i = 0; i < q->n_grp; i++)
        waiting += wr_zsl_length(q->grp[q->grp_order[i]]->line);
    int64_t tick = now_us / ((int64_t)cfg->tick_ms * 1000);
    /* closed or sold out (or stock 0 with passes still live): no budget */
    bool accrue = cfg->enabled && !cfg->paused && !wr_memq__gate_closed(q, now_us) && waiting > 0 &&
                  !cfg->closed && q->stock_left != 0;
    wr_budget_t b = q->budget;
    uint64_t allowed =
        wr_budget_advance(&b, tick, wr_store_rate_in_use(cfg, q->auto_rate), cfg->tick_ms, accrue);
    uint64_t n = allowed < waiting ? allowed : waiting;
    if (cfg->max_active > 0) {
        uint64_t active = q->heap_n + q->sess_n; /* live tokens and open sessions */
        uint64_t room = cfg->max_active > active ? cfg->max_active - active : 0;
        if (n > room)
            n = room;
    }
    if (q->stock_left >= 0 && n > (uint64_t)q->stock_left)
        n = (uint64_t)q->stock_left; /* never more than is left */
    int64_t limit = q->opening ? q->open_base + (int64_t)q->open_moved : INT64_MAX;
    uint64_t returned;
    err = admit_first(q, n, limit, now_us, (int64_t)cfg->token_ttl_seconds * MICRO, &n, &returned,
                      waited, dirty);
    if (err != WR_OK)
        return err;
    if (q->stock_left >= 0)
        q->stock_left -= (int64_t)n;
    wr_memq_stock_note(q, now_us, dirty);
    wr_memq__push_closing(q, dirty);  /* Web Push: the closing push, once per closing */
    wr_budget_settle(&b, allowed, n); /* n: admitted (pending users passed over) */
    /* A tick alone (last_tick moving on) is not worth a snapshot: an idle
     * server would rewrite its file every round. After a restart an unsaved
     * last_tick costs nothing: any gap accrues one tick (queue.h). */
    if (n > 0 || b.carry_micro != q->budget.carry_micro)
        *dirty = true;
    q->budget = b;
    *admitted = n;
    return WR_OK;
}
