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
 * Ownership. A queue owns its nodes (through the skiplist), its tokens and
 * one reference to its config; the db owns its queues. Ids passed in are
 * copied into nodes and tokens.
 */
#include "memq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MICRO 1000000LL

/* ---- configs ----------------------------------------------------------- */

static wr_memq_cfg_t *cfg_new(const wr_queue_config_t *cfg)
{
    wr_memq_cfg_t *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->refs = 1;
    c->cfg = *cfg;
    return c;
}

wr_memq_cfg_t *wr_memq_cfg_ref(wr_memq_cfg_t *c)
{
    c->refs++;
    return c;
}

void wr_memq_cfg_unref(wr_memq_cfg_t *c)
{
    if (c && --c->refs == 0)
        free(c);
}

/* ---- tokens and the expiry heap ------------------------------------- */

static const char *node_key(const void *item, size_t *len)
{
    return wr_zsl_node_id(item, len);
}

static const char *token_key(const void *item, size_t *len)
{
    const wr_memq_token_t *t = item;
    *len = t->idlen;
    return t->id;
}

wr_memq_token_t *wr_memq_token_new(const char *id, size_t idlen)
{
    wr_memq_token_t *t = malloc(sizeof *t + idlen + 1);
    if (!t)
        return NULL;
    memcpy(t->id, id, idlen);
    t->id[idlen] = '\0';
    t->idlen = (uint8_t)idlen;
    return t;
}

static void heap_set(wr_memq_t *q, size_t i, wr_memq_token_t *t)
{
    q->heap[i] = t;
    t->heap_idx = i;
}

static void heap_up(wr_memq_t *q, size_t i)
{
    wr_memq_token_t *t = q->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (q->heap[p]->exp_us <= t->exp_us)
            break;
        heap_set(q, i, q->heap[p]);
        i = p;
    }
    heap_set(q, i, t);
}

static void heap_down(wr_memq_t *q, size_t i)
{
    wr_memq_token_t *t = q->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        int64_t best = t->exp_us;
        if (l < q->heap_n && q->heap[l]->exp_us < best) {
            m = l;
            best = q->heap[l]->exp_us;
        }
        if (l + 1 < q->heap_n && q->heap[l + 1]->exp_us < best)
            m = l + 1;
        if (m == i)
            break;
        heap_set(q, i, q->heap[m]);
        i = m;
    }
    heap_set(q, i, t);
}

static wr_err_t heap_reserve(wr_memq_t *q, size_t extra)
{
    if (q->heap_n + extra <= q->heap_cap)
        return WR_OK;
    size_t cap = q->heap_cap ? q->heap_cap : 16;
    while (cap < q->heap_n + extra)
        cap *= 2;
    wr_memq_token_t **h = realloc(q->heap, cap * sizeof *h);
    if (!h)
        return WR_ENOMEM;
    q->heap = h;
    q->heap_cap = cap;
    return WR_OK;
}

/* Pushes t; heap_reserve(q, 1) must have succeeded. */
static void heap_push(wr_memq_t *q, wr_memq_token_t *t)
{
    heap_set(q, q->heap_n++, t);
    heap_up(q, q->heap_n - 1);
}

static void heap_remove(wr_memq_t *q, wr_memq_token_t *t)
{
    size_t i = t->heap_idx;
    wr_memq_token_t *last = q->heap[--q->heap_n];
    if (i == q->heap_n)
        return;
    heap_set(q, i, last);
    heap_up(q, i);
    heap_down(q, last->heap_idx);
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

wr_memq_token_t *wr_memq_token(const wr_memq_t *q, const char *user, size_t ulen)
{
    return wr_idhash_get(q->tokens, user, ulen);
}

void wr_memq_sweep(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    while (q->heap_n > 0 && q->heap[0]->exp_us <= now_us) {
        token_drop(q, q->heap[0]);
        q->expired_total++;
        *dirty = true;
    }
}

/* ---- the line -------------------------------------------------------- */

wr_zsl_node_t *wr_memq_waiting(const wr_memq_t *q, const char *user, size_t ulen)
{
    return wr_idhash_get(q->waiting, user, ulen);
}

wr_err_t wr_memq_line_add(wr_memq_t *q, const char *user, size_t ulen, int64_t score,
                          wr_zsl_node_t **out)
{
    wr_zsl_node_t *n;
    wr_err_t err = wr_zsl_insert(q->line, score, user, ulen, &n);
    if (err != WR_OK)
        return err;
    err = wr_idhash_put(q->waiting, n);
    if (err != WR_OK) {
        wr_zsl_delete(q->line, n);
        return err;
    }
    if (score > q->last_score)
        q->last_score = score;
    *out = n;
    return WR_OK;
}

wr_err_t wr_memq_line_reserve(wr_memq_t *q, size_t n)
{
    return wr_idhash_reserve(q->waiting, n);
}

static void line_remove(wr_memq_t *q, wr_zsl_node_t *node)
{
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    wr_idhash_del(q->waiting, id, len);
    wr_zsl_delete(q->line, node);
}

typedef struct {
    wr_memq_t *q;
    wr_memq_token_t **toks;
    uint64_t i;
} admit_ctx_t;

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

/* Moves the first n users of the line (n <= its length) to tokens with a
 * fresh jti, iat now_us and exp now_us + ttl_us; their waits go to
 * *waited (malloc'd) when waited is not NULL. All or nothing. */
static wr_err_t admit_first(wr_memq_t *q, uint64_t n, int64_t now_us, int64_t ttl_us,
                            int64_t **waited)
{
    wr_memq_token_t **toks = NULL;
    int64_t *waits = NULL;
    uint64_t ntoks = 0;
    wr_err_t err = WR_OK;
    if (n == 0)
        return WR_OK;
    /* Everything that can fail happens before the line changes. */
    toks = calloc(n, sizeof *toks);
    if (waited)
        waits = malloc(n * sizeof *waits);
    if (!toks || (waited && !waits)) {
        free(toks);
        free(waits);
        return WR_ENOMEM;
    }
    const wr_zsl_node_t *x = wr_zsl_first(q->line);
    for (; ntoks < n; ntoks++, x = wr_zsl_next(x)) {
        size_t len;
        const char *id = wr_zsl_node_id(x, &len);
        wr_memq_token_t *t = wr_memq_token_new(id, len);
        if (!t) {
            err = WR_ENOMEM;
            goto out;
        }
        toks[ntoks] = t;
        err = wr_token_new_jti(t->jti);
        if (err != WR_OK) {
            ntoks++;
            goto out;
        }
        t->iat_us = now_us;
        t->exp_us = now_us + ttl_us;
        if (waits) {
            int64_t w = now_us - wr_zsl_node_score(x);
            waits[ntoks] = w > 0 ? w : 0;
        }
    }
    if (heap_reserve(q, n) != WR_OK || wr_idhash_reserve(q->tokens, n) != WR_OK) {
        err = WR_ENOMEM;
        goto out;
    }
    admit_ctx_t c = {.q = q, .toks = toks, .i = 0};
    wr_zsl_pop_first(q->line, n, admit_one, &c);
    ntoks = 0; /* owned by the queue now */
    q->admitted_total += n;
    if (waited) {
        *waited = waits;
        waits = NULL;
    }
out:
    for (uint64_t i = 0; i < ntoks; i++)
        free(toks[i]);
    free(toks);
    free(waits);
    return err;
}

/* ---- operations ------------------------------------------------------ */

wr_err_t wr_memq_entry(wr_memq_t *q, const char *user, size_t ulen, bool add, int64_t now_us,
                       int64_t wall_us, wr_entry_t *e, bool *dirty)
{
    wr_memq_sweep(q, now_us, dirty);
    wr_zsl_node_t *n = wr_memq_waiting(q, user, ulen);
    if (n) {
        e->state = WR_ENTRY_WAITING;
        e->position = wr_zsl_rank(q->line, n);
        e->waiting = wr_zsl_length(q->line);
        return WR_OK;
    }
    wr_memq_token_t *t = wr_memq_token(q, user, ulen);
    if (t) {
        e->state = WR_ENTRY_ADMITTED;
        memcpy(e->jti, t->jti, sizeof e->jti);
        e->issued_at_us = t->iat_us;
        e->expires_at_us = t->exp_us;
        return WR_OK;
    }
    if (!add)
        return WR_ENOTINQUEUE;
    uint64_t max = q->cfg->cfg.max_queue_size;
    if (max > 0 && wr_zsl_length(q->line) >= max) {
        q->rejected_full_total++;
        *dirty = true;
        e->waiting = wr_zsl_length(q->line);
        return WR_EFULL;
    }
    int64_t score = wall_us;
    if (score <= q->last_score)
        score = q->last_score + 1;
    wr_err_t err = wr_memq_line_add(q, user, ulen, score, &n);
    if (err != WR_OK)
        return err;
    *dirty = true;
    e->state = WR_ENTRY_WAITING;
    e->position = wr_zsl_rank(q->line, n);
    e->waiting = wr_zsl_length(q->line);
    return WR_OK;
}

wr_err_t wr_memq_leave(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us, bool *dirty)
{
    wr_zsl_node_t *n = wr_memq_waiting(q, user, ulen);
    wr_memq_token_t *t = NULL;
    if (!n) {
        wr_memq_sweep(q, now_us, dirty);
        t = wr_memq_token(q, user, ulen);
    }
    if (n)
        line_remove(q, n);
    else if (t)
        token_drop(q, t);
    else
        return WR_ENOTINQUEUE;
    q->left_total++;
    *dirty = true;
    return WR_OK;
}

wr_err_t wr_memq_admit(wr_memq_t *q, int64_t now_us, uint64_t *admitted, int64_t **waited,
                       bool *dirty)
{
    if (waited)
        *waited = NULL;
    wr_memq_sweep(q, now_us, dirty);
    const wr_queue_config_t *cfg = &q->cfg->cfg;
    uint64_t waiting = wr_zsl_length(q->line);
    int64_t tick = now_us / ((int64_t)cfg->tick_ms * 1000);
    bool accrue = cfg->enabled && !cfg->paused && waiting > 0;
    wr_budget_t b = q->budget;
    uint64_t allowed = wr_budget_advance(&b, tick, cfg->admit_per_second, cfg->tick_ms, accrue);
    uint64_t n = allowed < waiting ? allowed : waiting;
    if (cfg->max_active > 0) {
        uint64_t room = cfg->max_active > q->heap_n ? cfg->max_active - q->heap_n : 0;
        if (n > room)
            n = room;
    }
    wr_budget_settle(&b, allowed, n);
    wr_err_t err = admit_first(q, n, now_us, (int64_t)cfg->token_ttl_seconds * MICRO, waited);
    if (err != WR_OK)
        return err;
    /* A tick alone (last_tick moving on) is not worth a snapshot: an idle
     * server would rewrite its file every round. After a restart an unsaved
     * last_tick costs nothing: any gap accrues one tick (queue.h). */
    if (n > 0 || b.carry_micro != q->budget.carry_micro)
        *dirty = true;
    q->budget = b;
    *admitted = n;
    return WR_OK;
}

wr_err_t wr_memq_token_use(wr_memq_t *q, const char *user, size_t ulen, const char *jti,
                           bool consume, int64_t now_us, wr_token_reason_t *reason, bool *dirty)
{
    wr_memq_token_t *t = wr_memq_token(q, user, ulen);
    if (!t || strcmp(t->jti, jti) != 0) {
        *reason = WR_TOKEN_CONSUMED;
        return WR_ETOKEN;
    }
    if (t->exp_us <= now_us) {
        if (consume) {
            token_drop(q, t);
            q->expired_total++;
            *dirty = true;
        }
        *reason = WR_TOKEN_EXPIRED;
        return WR_ETOKEN;
    }
    if (consume) {
        token_drop(q, t);
        q->consumed_total++;
        *dirty = true;
    }
    return WR_OK;
}

/* ---- queues ---------------------------------------------------------- */

void wr_memq_stats(const wr_memq_t *q, wr_queue_stats_t *st)
{
    st->waiting = wr_zsl_length(q->line);
    st->active = q->heap_n;
    st->admitted_total = q->admitted_total;
    st->consumed_total = q->consumed_total;
    st->expired_total = q->expired_total;
    st->left_total = q->left_total;
    st->rejected_full_total = q->rejected_full_total;
}

static void queue_free(wr_memq_t *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->heap_n; i++)
        free(q->heap[i]);
    free(q->heap);
    wr_idhash_free(q->tokens);
    wr_idhash_free(q->waiting);
    wr_zsl_free(q->line);
    wr_memq_cfg_unref(q->cfg);
    free(q);
}

static wr_memq_t *queue_new(wr_memq_db_t *db, const char *name, wr_memq_cfg_t *cfg)
{
    wr_memq_t *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    snprintf(q->name, sizeof q->name, "%s", name);
    db->seed = db->seed * 6364136223846793005ULL + 1442695040888963407ULL;
    q->line = wr_zsl_new(db->seed);
    q->waiting = wr_idhash_new(node_key);
    q->tokens = wr_idhash_new(token_key);
    if (!q->line || !q->waiting || !q->tokens) {
        queue_free(q);
        return NULL;
    }
    q->cfg = cfg;
    q->budget.last_tick = -1;
    q->budget.carry_micro = 0;
    return q;
}

/* Index where name is or would be inserted; *found set. */
static size_t queue_index(const wr_memq_db_t *db, const char *name, bool *found)
{
    size_t lo = 0, hi = db->nq;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(db->queues[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

wr_memq_t *wr_memq_db_find(const wr_memq_db_t *db, const char *name)
{
    bool found;
    size_t i = queue_index(db, name, &found);
    return found ? db->queues[i] : NULL;
}

static wr_err_t queue_insert(wr_memq_db_t *db, wr_memq_t *q)
{
    bool found;
    size_t i = queue_index(db, q->name, &found);
    if (found)
        return WR_EINVAL;
    if (db->nq == db->capq) {
        size_t cap = db->capq ? db->capq * 2 : 8;
        wr_memq_t **a = realloc(db->queues, cap * sizeof *a);
        if (!a)
            return WR_ENOMEM;
        db->queues = a;
        db->capq = cap;
    }
    memmove(&db->queues[i + 1], &db->queues[i], (db->nq - i) * sizeof *db->queues);
    db->queues[i] = q;
    db->nq++;
    return WR_OK;
}

wr_err_t wr_memq_db_put_config(wr_memq_db_t *db, const char *name, const wr_queue_config_t *cfg,
                               wr_memq_t **out)
{
    wr_memq_cfg_t *c = cfg_new(cfg);
    if (!c)
        return WR_ENOMEM;
    wr_memq_t *q = wr_memq_db_find(db, name);
    if (q) {
        /* Tick indices of another tick length are not comparable. */
        if (q->cfg->cfg.tick_ms != cfg->tick_ms) {
            q->budget.last_tick = -1;
            q->budget.carry_micro = 0;
        }
        wr_memq_cfg_unref(q->cfg);
        q->cfg = c;
    } else {
        q = queue_new(db, name, c);
        if (!q) {
            wr_memq_cfg_unref(c);
            return WR_ENOMEM;
        }
        wr_err_t err = queue_insert(db, q);
        if (err != WR_OK) {
            queue_free(q);
            return err;
        }
    }
    q->version++;
    if (out)
        *out = q;
    return WR_OK;
}

wr_err_t wr_memq_db_delete(wr_memq_db_t *db, const char *name)
{
    bool found;
    size_t i = queue_index(db, name, &found);
    if (!found)
        return WR_ENOTFOUND;
    queue_free(db->queues[i]);
    memmove(&db->queues[i], &db->queues[i + 1], (db->nq - i - 1) * sizeof *db->queues);
    db->nq--;
    return WR_OK;
}

void wr_memq_db_clear(wr_memq_db_t *db)
{
    for (size_t i = 0; i < db->nq; i++)
        queue_free(db->queues[i]);
    free(db->queues);
    db->queues = NULL;
    db->nq = db->capq = 0;
}
