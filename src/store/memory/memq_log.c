/*
 * memq_log.c - the public log in the embedded store's queue model
 * (docs/API.md 1.3, "A line anyone can check"; memlog.h keeps the log).
 *
 * Every operation of memq that changes a person's standing calls one of
 * the wr_memq__log_* hooks in the same call as the change, so the leaves
 * are in the order the store applied them: a join when a person gets a
 * place that counts (a page join when it starts to count, with its
 * original t), admit (held for a held return), away (passed over while
 * away: held), leave (left, abandoned, removed). Admit, away and leave
 * are written only for a member of the log's line (memlog.h), so a page
 * join that never counted gets no leaf at all.
 *
 * The order key t: a line join's t is its score, which memq gives out
 * strictly increasing (max(store time, last + 1)); a pre-queue join takes
 * the next score too. A queue attached to a log continues above the log's
 * last t, so a queue created again never goes back.
 *
 * The opening (preQueueShuffle): a commit leaf (SHA-256 of a fresh
 * 32-byte seed, and the beacon and round of config draw) before the first
 * pre-queue join that is logged; when the opening begins the draw: D =
 * SHA-256(seed || beacon randomness) or SHA-256(seed), each pre-queue
 * person's rank SHA-256(D || u), and the pre-queue's keys replaced by the
 * ranks' first 62 bits, so the move into the line follows the draw; the
 * draw leaf reveals the seed. An append that fails (out of memory) is
 * counted in q->log_faults; the change it logs stands.
 */
#include "base/hex.h"
#include "store/memory/memlog.h"
#include "store/memory/memq.h"
#include "store/memory/memq_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the db's logs ------------------------------------------------------ */

static size_t log_index(const wr_memq_db_t *db, const char *name, bool *found)
{
    return wr_memq__by_name((void *const *)db->logs, db->nlogs, offsetof(wr_memlog_t, name), name,
                            found);
}

wr_memlog_t *wr_memq_db_log(const wr_memq_db_t *db, const char *name)
{
    bool found;
    size_t i = log_index(db, name, &found);
    return found ? db->logs[i] : NULL;
}

wr_err_t wr_memq_db_log_add(wr_memq_db_t *db, wr_memlog_t *l)
{
    bool found;
    size_t i = log_index(db, l->name, &found);
    return found ? WR_EINVAL
                 : wr_memq__insert_at((void ***)&db->logs, &db->nlogs, &db->caplogs, i, l);
}

void wr_memq__log_hints(wr_memq_t *q, bool on)
{
    wr_zsl_set_extra(q->line, on);
    for (size_t i = 0; i < WR_GROUPS_MAX; i++)
        if (q->grp[i])
            wr_zsl_set_extra(q->grp[i]->line, on);
}

wr_err_t wr_memq_log_attach(wr_memq_db_t *db, wr_memq_t *q)
{
    wr_memq__log_hints(q, false);
    if (!q->cfg->cfg.public_log) {
        q->log = NULL;
        return WR_OK;
    }
    wr_memlog_t *l = wr_memq_db_log(db, q->name);
    if (!l) {
        if (!(l = wr_memlog_new(q->name)))
            return WR_ENOMEM;
        wr_err_t err = wr_memq_db_log_add(db, l);
        if (err != WR_OK) {
            wr_memlog_free(l);
            return err;
        }
    }
    q->log = l;
    wr_memq__log_hints(q, true);
    if (q->last_score < l->last_t)
        q->last_score = l->last_t;
    return WR_OK;
}

/* ---- appends ------------------------------------------------------------ */

static void put(wr_memq_t *q, wr_logleaf_t *ev, uint64_t *index)
{
    if (wr_memlog_append(q->log, ev, index) != WR_OK)
        q->log_faults++;
}

/* A leaf of kind e at now_us about user (their log id; NULL: none). */
static bool leaf_for(wr_memq_t *q, wr_logleaf_t *ev, wr_logleaf_kind_t e, const char *user,
                     size_t ulen, int64_t now_us)
{
    memset(ev, 0, sizeof *ev);
    ev->e = e;
    ev->at = now_us;
    if (user && wr_memlog_u(q->log, user, ulen, ev->u) != WR_OK) {
        q->log_faults++;
        return false;
    }
    return true;
}

static void commit(wr_memq_t *q, int64_t now_us)
{
    wr_memlog_t *l = q->log;
    wr_logleaf_t ev;
    if (wr_crypto_random(l->seed, sizeof l->seed) != WR_OK ||
        wr_crypto_sha256_digest(l->h, l->seed, sizeof l->seed, ev.seed_hash) != WR_OK) {
        q->log_faults++;
        return;
    }
    uint8_t hash[32];
    memcpy(hash, ev.seed_hash, sizeof hash);
    leaf_for(q, &ev, WR_LOGLEAF_COMMIT, NULL, 0, now_us);
    memcpy(ev.seed_hash, hash, sizeof hash);
    const wr_draw_config_t *d = &q->cfg->cfg.draw;
    l->beacon = d->set;
    snprintf(l->beacon_url, sizeof l->beacon_url, "%s", d->set ? d->beacon_url : "");
    l->round = d->set ? d->round : 0;
    l->beacon_done = false;
    ev.beacon = l->beacon;
    memcpy(ev.beacon_url, l->beacon_url, sizeof ev.beacon_url);
    ev.round = l->round;
    l->committed = true;
    put(q, &ev, NULL);
}

void wr_memq__log_join(wr_memq_t *q, const char *user, size_t ulen, int64_t score, bool pre,
                       int64_t now_us)
{
    wr_memq__log_join_grp(q, user, ulen, score, pre, NULL, now_us);
}

void wr_memq__log_join_grp(wr_memq_t *q, const char *user, size_t ulen, int64_t score, bool pre,
                           const char *grp, int64_t now_us)
{
    if (!q->log || wr_memlog_member(q->log, user, ulen, NULL))
        return;
    if (pre && q->cfg->cfg.pre_queue_shuffle && !q->log->committed)
        commit(q, now_us);
    wr_logleaf_t ev;
    if (!leaf_for(q, &ev, WR_LOGLEAF_JOIN, user, ulen, now_us))
        return;
    if (score <= 0) {
        /* a shuffled pre-queue join: the next order key */
        score = wr_memq__next_score(q, now_us);
        q->last_score = score;
    }
    ev.t = score;
    ev.pre = pre;
    snprintf(ev.grp, sizeof ev.grp, "%s", grp ? grp : "");
    if (score > q->log->last_t)
        q->log->last_t = score;
    uint64_t index;
    if (wr_memlog_append(q->log, &ev, &index) != WR_OK ||
        wr_memlog_member_add(q->log, user, ulen, index) != WR_OK)
        q->log_faults++;
}

/* The join leaf of node (id, len): in the line at its score; in the
 * pre-queue drawn (shuffled: a random key, t the next order key), in
 * arrival order (its key), or late (joined while the opening waited for
 * its beacon: not drawn, a line join at its arrival score). */
static void join_of(wr_memq_t *q, const wr_zsl_node_t *node, const char *id, size_t len, bool pre,
                    bool shuffled, int64_t now_us)
{
    int64_t key = wr_zsl_node_score(node);
    int slot = pre ? -1 : wr_memq__slot_valid(q, wr_memq_node_slot(node));
    if (slot >= 0) /* a group member: in their group's line at their score */
        wr_memq__log_join_grp(q, id, len, key, false, q->grp[slot]->name, now_us);
    else if (pre && key >= WR_MEMQ_LATE_KEY)
        wr_memq__log_join(q, id, len, key - WR_MEMQ_LATE_KEY, false, now_us);
    else
        wr_memq__log_join(q, id, len, pre && shuffled ? 0 : key, pre, now_us);
}

/* A line node made while the queue has a log keeps its person's receipt
 * from their join on (wr_memq_log_receipt_at), so that even their first
 * poll reads it from the node. */
static void keep_receipt(wr_memq_t *q, wr_zsl_node_t *node, const char *id, size_t len)
{
    if (!wr_zsl_node_extra(node))
        return;
    char u[WR_LOGLEAF_U_HEX + 1];
    uint64_t index;
    uint8_t hash[32];
    (void)wr_memq_log_receipt_at(q, node, id, len, u, &index, hash);
}

void wr_memq__placed(wr_memq_t *q, wr_zsl_node_t *node, bool page, bool shuffled, int64_t now_us)
{
    wr_memq_seen_set(node, now_us, 0);
    wr_zsl_node_set_flags(
        node, (uint8_t)((wr_zsl_node_flags(node) & ~WR_MEMQ_MARKS) | (page ? WR_MEMQ_PENDING : 0)));
    if (page || !q->log)
        return;
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    bool pre = wr_memq_prequeued(q, id, len) == node;
    join_of(q, node, id, len, pre, shuffled, now_us);
    keep_receipt(q, node, id, len);
}

void wr_memq__log_counted(wr_memq_t *q, wr_zsl_node_t *node, int64_t now_us)
{
    if (!q->log || !(wr_zsl_node_flags(node) & WR_MEMQ_PENDING))
        return;
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    if (wr_memq_waiting(q, id, len) == node) {
        join_of(q, node, id, len, false, false, now_us);
        keep_receipt(q, node, id, len);
    } else if (wr_memq_prequeued(q, id, len) == node)
        join_of(q, node, id, len, true, q->cfg->cfg.pre_queue_shuffle, now_us);
}

/* A leaf of kind e about a member, who then leaves the log's line unless
 * e is away; returns their join leaf index (UINT64_MAX: not a member). */
static uint64_t member_leaf(wr_memq_t *q, wr_logleaf_kind_t e, const char *user, size_t ulen,
                            const char *grp, bool held, int why, int64_t now_us)
{
    uint64_t index = UINT64_MAX;
    wr_logleaf_t ev;
    if (!q->log || !wr_memlog_member(q->log, user, ulen, &index) ||
        !leaf_for(q, &ev, e, user, ulen, now_us))
        return index;
    snprintf(ev.grp, sizeof ev.grp, "%s", grp ? grp : "");
    ev.held = held;
    ev.why = (wr_logleaf_why_t)why;
    put(q, &ev, NULL);
    if (e != WR_LOGLEAF_AWAY)
        wr_memlog_member_del(q->log, user, ulen);
    return index;
}

uint64_t wr_memq__log_admit(wr_memq_t *q, const char *user, size_t ulen, const char *grp, bool held,
                            int64_t now_us)
{
    return member_leaf(q, WR_LOGLEAF_ADMIT, user, ulen, grp, held, 0, now_us);
}

void wr_memq__log_unseen(wr_memq_t *q, const char *user, size_t ulen, uint64_t join_index,
                         int64_t now_us)
{
    wr_logleaf_t ev;
    if (!q->log || join_index >= wr_memlog_size(q->log) ||
        wr_memlog_member(q->log, user, ulen, NULL) ||
        !leaf_for(q, &ev, WR_LOGLEAF_AWAY, user, ulen, now_us))
        return;
    ev.unseen = true;
    put(q, &ev, NULL);
    if (wr_memlog_member_add(q->log, user, ulen, join_index) != WR_OK)
        q->log_faults++;
}

void wr_memq__log_away(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us)
{
    member_leaf(q, WR_LOGLEAF_AWAY, user, ulen, NULL, false, 0, now_us);
}

void wr_memq__log_leave(wr_memq_t *q, const char *user, size_t ulen, int why, int64_t now_us)
{
    member_leaf(q, WR_LOGLEAF_LEAVE, user, ulen, NULL, false, why, now_us);
}

void wr_memq__log_leave_node(wr_memq_t *q, const wr_zsl_node_t *node, int why, int64_t now_us)
{
    size_t len;
    const char *id = wr_zsl_node_id(node, &len);
    wr_memq__log_leave(q, id, len, why, now_us);
}

/* ---- the draw ----------------------------------------------------------- */

typedef struct {
    char id[WR_ZSL_ID_MAX + 1];
    size_t len;
    int64_t key;
    uint32_t aux;
    uint8_t flags;
} drawn_t;

/* The pre-queue's key for a rank: its first 62 bits. */
static int64_t rank_key(const uint8_t rank[32])
{
    uint64_t k = 0;
    for (int i = 0; i < 8; i++)
        k = (k << 8) | rank[i];
    return (int64_t)(k >> 2);
}

/* The pre-queue's people who joined before opensAt (the keys below
 * WR_MEMQ_LATE_KEY come first). */
static uint64_t early_count(const wr_memq_t *q)
{
    uint64_t n = wr_zsl_length(q->pre);
    const wr_zsl_node_t *late = wr_zsl_first_ge(q->pre, WR_MEMQ_LATE_KEY);
    return late ? wr_zsl_rank(q->pre, late) - 1 : n;
}

/* Replaces the key of every drawn pre-queue person (joined before opensAt,
 * in the log: *drawn of them) by their rank under D; the others (page
 * joins that have not counted yet) go after them, as late joins do, so
 * that nobody the draw did not rank enters among the drawn. */
static wr_err_t rekey(wr_memq_t *q, const uint8_t d[32], uint64_t *drawn)
{
    uint64_t n = early_count(q);
    drawn_t *a = n ? calloc(n, sizeof *a) : NULL;
    wr_crypto_sha256_t *h = q->log->h;
    wr_err_t err = n && !a ? WR_ENOMEM : WR_OK;
    uint64_t k = 0;
    for (wr_zsl_node_t *x = wr_zsl_first(q->pre); x && k < n && err == WR_OK;
         x = wr_zsl_next(x), k++) {
        const char *id = wr_zsl_node_id(x, &a[k].len);
        memcpy(a[k].id, id, a[k].len);
        a[k].aux = wr_zsl_node_aux(x);
        a[k].flags = wr_zsl_node_flags(x);
        if (!wr_memlog_member(q->log, id, a[k].len, NULL)) {
            /* not drawn: the next order key, as a join after opensAt */
            a[k].key = WR_MEMQ_LATE_KEY + ++q->last_score;
            continue;
        }
        (*drawn)++;
        char u[WR_LOGLEAF_U_HEX + 1];
        uint8_t ub[WR_LOGLEAF_U_BYTES], rank[32];
        if ((err = wr_memlog_u(q->log, id, a[k].len, u)) == WR_OK &&
            (err = wr_logleaf_u_bytes(u, ub)) == WR_OK &&
            (err = wr_logleaf_draw_rank(h, d, ub, rank)) == WR_OK)
            a[k].key = rank_key(rank);
    }
    if (err != WR_OK) {
        free(a);
        return err;
    }
    /* all drawn out, then in at their ranks (a 62-bit tie: the next key);
     * the late ones stay after them */
    wr_zsl_node_t *x;
    while ((x = wr_zsl_first(q->pre)) != NULL && wr_zsl_node_score(x) < WR_MEMQ_LATE_KEY) {
        size_t len;
        const char *id = wr_zsl_node_id(x, &len);
        wr_idhash_del(q->pre_ids, id, len);
        wr_zsl_pop_first(q->pre, 1, NULL, NULL);
    }
    for (uint64_t i = 0; i < n; i++) {
        wr_zsl_node_t *m;
        int64_t key = a[i].key;
        for (int t = 0; t < 8; t++, key++)
            if ((err = wr_memq__set_add(q->pre, q->pre_ids, a[i].id, a[i].len, key, UINT64_MAX,
                                        &m)) != WR_EINVAL)
                break;
        if (err != WR_OK) {
            q->log_faults++; /* out of memory: this person is lost */
            continue;
        }
        wr_zsl_node_set_aux(m, a[i].aux);
        wr_zsl_node_set_flags(m, a[i].flags);
    }
    free(a);
    return WR_OK;
}

void wr_memq__log_draw(wr_memq_t *q, int64_t now_us)
{
    wr_memlog_t *l = q->log;
    if (!l || !l->committed || !q->cfg->cfg.pre_queue_shuffle)
        return;
    wr_logleaf_t ev;
    leaf_for(q, &ev, WR_LOGLEAF_DRAW, NULL, 0, now_us);
    memcpy(ev.seed, l->seed, sizeof ev.seed);
    ev.beacon = l->beacon;
    if (l->beacon) {
        memcpy(ev.beacon_url, l->beacon_url, sizeof ev.beacon_url);
        ev.round = l->round;
        if (l->beacon_done && l->beacon_error[0] == '\0') {
            memcpy(ev.randomness, l->randomness, l->randomness_len);
            ev.randomness_len = l->randomness_len;
        } else {
            if (l->beacon_done)
                snprintf(ev.beacon_error, sizeof ev.beacon_error, "%s", l->beacon_error);
            else
                snprintf(ev.beacon_error, sizeof ev.beacon_error, WR_LOGLEAF_BEACON_LATE,
                         (unsigned long long)l->round);
        }
    }
    uint8_t d[32];
    wr_err_t err = wr_logleaf_draw_value(l->h, l->seed, ev.randomness, ev.randomness_len, d);
    if (err == WR_OK)
        err = rekey(q, d, &ev.n);
    if (err != WR_OK) {
        q->log_faults++;
        return;
    }
    l->committed = false;
    put(q, &ev, NULL);
}

bool wr_memq_log_beacon_wait(const wr_memq_t *q, int64_t now_us)
{
    const wr_memlog_t *l = q->log;
    int64_t at = q->cfg->cfg.opens_at_ms;
    return l && l->committed && l->beacon && !l->beacon_done && q->cfg->cfg.pre_queue_shuffle &&
           at >= 0 && now_us >= at * 1000 && now_us < at * 1000 + WR_MEMQ_BEACON_WAIT_US;
}

/* ---- reads and the delete ---------------------------------------------- */

void wr_memq_log_removed(wr_memq_t *q, int64_t now_us)
{
    if (!q->log)
        return;
    /* the members in log order: everyone in line, pre-queue or held */
    wr_zsl_t *sets[4 + WR_GROUPS_MAX] = {q->line, q->pre, q->held, q->back};
    size_t nsets = 4;
    for (size_t i = 0; i < q->n_grp; i++)
        sets[nsets++] = q->grp[q->grp_order[i]]->line;
    for (size_t s = 0; s < nsets; s++)
        for (wr_zsl_node_t *x = wr_zsl_first(sets[s]); x; x = wr_zsl_next(x))
            wr_memq__log_leave_node(q, x, WR_LOGLEAF_REMOVED, now_us);
    q->log->committed = false;
}

bool wr_memq_log_receipt(const wr_memq_t *q, const char *user, size_t ulen, char *u,
                         uint64_t *index, uint8_t leaf_hash[32])
{
    return q->log && wr_memlog_receipt(q->log, user, ulen, u, index, leaf_hash);
}

/* A line node's copy of its person's receipt (zsl.h extra bytes, while
 * the queue has a log): the hint (memlog.h) it was copied under, the join
 * leaf's index, the log id's bytes and the leaf hash. */
enum {
    RC_HINT = 0,
    RC_INDEX = 8,
    RC_U = 16,
    RC_HASH = RC_U + WR_LOGLEAF_U_BYTES,
    RC_END = RC_HASH + 32
};
_Static_assert(RC_END <= WR_ZSL_EXTRA, "a receipt fits a node's extra bytes");

bool wr_memq_log_receipt_at(wr_memq_t *q, wr_zsl_node_t *node, const char *user, size_t ulen,
                            char *u, uint64_t *index, uint8_t leaf_hash[32])
{
    if (!q->log)
        return false;
    unsigned char *x = node ? wr_zsl_node_extra(node) : NULL;
    uint64_t hint = 0;
    if (x)
        memcpy(&hint, x + RC_HINT, sizeof hint);
    if (hint && wr_memlog_hint_live(q->log, hint)) {
        /* the common poll: everything in the node, no lookup */
        memcpy(index, x + RC_INDEX, sizeof *index);
        wr_hex_encode(x + RC_U, WR_LOGLEAF_U_BYTES, u);
        memcpy(leaf_hash, x + RC_HASH, 32);
        return true;
    }
    if (!wr_memlog_receipt(q->log, user, ulen, u, index, leaf_hash))
        return false;
    uint8_t ub[WR_LOGLEAF_U_BYTES];
    if (x && wr_logleaf_u_bytes(u, ub) == WR_OK &&
        (hint = wr_memlog_hint(q->log, user, ulen)) != 0) { /* kept for the next poll */
        memcpy(x + RC_INDEX, index, sizeof *index);
        memcpy(x + RC_U, ub, sizeof ub);
        memcpy(x + RC_HASH, leaf_hash, 32);
        memcpy(x + RC_HINT, &hint, sizeof hint);
    }
    return true;
}

bool wr_memq_log_committed(const wr_memq_t *q)
{
    return q->log && q->log->committed;
}
