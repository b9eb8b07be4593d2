/*
 * memq_group.c - priority groups and presale codes on the embedded store
 * (docs/API.md 1.3, "Priority groups and presale codes", "Groups,
 * precisely"; core/groups.h holds the rules that need no store).
 *
 * Groups. Each group of the config has a slot of the queue (q->grp), kept
 * while its name stays in the config, so a reordered config moves nobody:
 * grp_order lists the slots in the config's order. A slot holds the
 * group's line, an order-statistic skiplist like the standard line's,
 * keyed by the same arrival scores (one counter for every line, so scores
 * never collide), and its counters. Everyone's node is found through the
 * one waiting hash; a group member's node carries slot + 1 in its flags'
 * top four bits (memq.h wr_memq_node_slot), and keeps it through held and
 * back (memq_idle.c copies it); their pass carries it too (an unseen pass
 * puts them back in their group's held). A position counts the person's
 * own line (a rank in it), so it never goes up however many priority
 * people join. A group member never enters the pre-queue: before opensAt
 * they wait in their group's line in arrival order (the answer says
 * PREQUEUE) and nobody is admitted until the opening.
 *
 * Admission (memq.c admit) asks wr_groups_split how many each line gets;
 * this file keeps what the split and the ETA need: the standard line's
 * carried share and the admissions of each line per second over the last
 * minute (a ring of WR_MEMQ_RATE_SECONDS counts).
 *
 * Config changes (wr_memq__groups_sync, before a config_put swaps the
 * config in): a new group gets a slot and an empty line; a group that
 * left the config frees its slot, unless it still has people (line, held,
 * back, a live pass) or live codes (not revoked, not used up, not
 * expired): then WR_EGROUP and nothing changes. Its spent codes go with
 * it (a slot given to a later group must not inherit them).
 *
 * Codes: an id hash from the code's hash (SHA-256 hex; the code itself is
 * never kept) to its group slot, uses, uses spent, expiry and revoked
 * mark; the group keeps the counts GET .../codes answers. The check and
 * the spend happen inside the join (memq.c), in the same call as the
 * place it buys.
 */
#include "store/memory/memq.h"
#include "store/memory/memq_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/hex.h"

static const char *code_key(const void *item, size_t *len)
{
    const wr_memq_code_t *c = item;
    *len = c->idlen;
    return c->id;
}

wr_zsl_t *wr_memq__line_of(const wr_memq_t *q, const wr_zsl_node_t *node)
{
    int slot = wr_memq_node_slot(node);
    return slot >= 0 && q->grp[slot] ? q->grp[slot]->line : q->line;
}

int wr_memq_group_slot(const wr_memq_t *q, const char *name)
{
    if (!name || !name[0])
        return -1;
    for (size_t i = 0; i < q->n_grp; i++)
        if (strcmp(q->grp[q->grp_order[i]]->name, name) == 0)
            return q->grp_order[i];
    return -1;
}

uint32_t wr_memq__line_of_slot(const wr_memq_t *q, int slot)
{
    for (size_t i = 0; slot >= 0 && i < q->n_grp; i++)
        if (q->grp_order[i] == slot)
            return (uint32_t)i + 1;
    return 0;
}

int wr_memq__slot_valid(const wr_memq_t *q, int slot)
{
    return slot >= 0 && slot < WR_GROUPS_MAX && q->grp[slot] ? slot : -1;
}

wr_err_t wr_memq_group_line_add(wr_memq_t *q, int slot, const char *user, size_t ulen,
                                int64_t score, wr_zsl_node_t **out)
{
    if (wr_memq__slot_valid(q, slot) < 0)
        return WR_EINVAL;
    wr_zsl_node_t *n;
    wr_err_t err =
        wr_memq__set_add(q->grp[slot]->line, q->waiting, user, ulen, score, UINT64_MAX, &n);
    if (err != WR_OK)
        return err;
    wr_zsl_node_set_flags(n, 0);
    wr_memq_node_set_slot(n, slot);
    if (score > q->last_score)
        q->last_score = score;
    *out = n;
    return WR_OK;
}

uint64_t wr_memq__waiting_all(const wr_memq_t *q)
{
    uint64_t n = wr_zsl_length(q->line) + wr_memq__pending(q);
    for (size_t i = 0; i < q->n_grp; i++)
        n += wr_zsl_length(q->grp[q->grp_order[i]]->line);
    return n;
}

/* ---- admissions per second ------------------------------------------- */

/* Moves the ring to the second of now_us (the counts of seconds it
 * passes cleared). */
static void rate_advance(wr_memq_t *q, int64_t now_us)
{
    int64_t sec = now_us / MICRO;
    if (sec <= q->rate_sec)
        return;
    int64_t gap = sec - q->rate_sec;
    if (gap >= WR_MEMQ_RATE_SECONDS || q->rate_sec == 0) {
        memset(q->rate_n, 0, sizeof q->rate_n);
    } else {
        for (int64_t s = q->rate_sec + 1; s <= sec; s++)
            for (size_t l = 0; l <= WR_GROUPS_MAX; l++)
                q->rate_n[l][s % WR_MEMQ_RATE_SECONDS] = 0;
    }
    q->rate_sec = sec;
}

void wr_memq__rate_add(wr_memq_t *q, int slot, uint64_t n, int64_t now_us)
{
    if (n == 0)
        return;
    rate_advance(q, now_us);
    uint32_t *c = &q->rate_n[slot + 1][q->rate_sec % WR_MEMQ_RATE_SECONDS];
    *c = n > UINT32_MAX - *c ? UINT32_MAX : *c + (uint32_t)n;
}

/* Admissions of slot's line (-1 the standard line) in the 60 s before
 * now_us. */
static uint64_t rate_60s(const wr_memq_t *q, int slot, int64_t now_us)
{
    int64_t sec = now_us / MICRO;
    uint64_t n = 0;
    for (int64_t s = sec - WR_MEMQ_RATE_SECONDS + 1; s <= sec && s <= q->rate_sec; s++)
        if (s > q->rate_sec - WR_MEMQ_RATE_SECONDS && s >= 0)
            n += q->rate_n[slot + 1][s % WR_MEMQ_RATE_SECONDS];
    return n;
}

void wr_memq__group_answer(const wr_memq_t *q, int slot, int64_t now_us, wr_entry_t *e)
{
    slot = wr_memq__slot_valid(q, slot);
    e->group_line = wr_memq__line_of_slot(q, slot);
    if (e->group_line == 0)
        slot = -1;
    snprintf(e->group, sizeof e->group, "%s", slot >= 0 ? q->grp[slot]->name : "");
    e->group_admitted_60s = rate_60s(q, slot, now_us);
    e->group_first_waiting = 0;
    for (size_t i = 0; i < q->n_grp; i++)
        if (wr_zsl_length(q->grp[q->grp_order[i]]->line) > 0) {
            e->group_first_waiting = (uint32_t)i + 1;
            break;
        }
}

/* ---- the config's groups ---------------------------------------------- */

/* True when someone in held or back, or a live pass, belongs to slot. */
static bool slot_has_people(const wr_memq_t *q, int slot)
{
    const wr_memq_group_t *g = q->grp[slot];
    if (wr_zsl_length(g->line) > 0)
        return true;
    const wr_zsl_t *sets[] = {q->held, q->back};
    for (size_t s = 0; s < 2; s++)
        for (const wr_zsl_node_t *x = wr_zsl_first(sets[s]); x; x = wr_zsl_next(x))
            if (wr_memq_node_slot(x) == slot)
                return true;
    for (size_t i = 0; i < q->heap_n; i++)
        if (q->heap[i]->slot == slot)
            return true;
    return false;
}

typedef struct {
    int slot;
    int64_t now_ms;
    bool live;
    wr_memq_code_t **dead;
    size_t ndead;
} codes_scan_t;

static bool code_live(const wr_memq_code_t *c, int64_t now_ms)
{
    return !c->revoked && c->spent < c->uses && (c->expires_ms < 0 || c->expires_ms > now_ms);
}

static void scan_code(void *item, void *arg)
{
    wr_memq_code_t *c = item;
    codes_scan_t *s = arg;
    if (c->slot != s->slot)
        return;
    if (code_live(c, s->now_ms))
        s->live = true;
    else if (s->dead)
        s->dead[s->ndead++] = c;
}

/* Frees slot's group and drops its codes (all dead: checked). */
static void slot_free(wr_memq_t *q, int slot)
{
    wr_memq_group_t *g = q->grp[slot];
    if (q->codes && g->codes_issued > 0) {
        codes_scan_t s = {.slot = slot, .now_ms = INT64_MIN};
        s.dead = malloc(wr_idhash_count(q->codes) * sizeof *s.dead);
        if (s.dead) {
            wr_idhash_foreach(q->codes, scan_code, &s);
            for (size_t i = 0; i < s.ndead; i++) {
                wr_idhash_del(q->codes, s.dead[i]->id, s.dead[i]->idlen);
                free(s.dead[i]);
            }
            free(s.dead);
        } /* out of memory: they stay, unknown to every group (slot checks) */
    }
    q->removed_admitted += g->admitted_total; /* not the standard line's */
    wr_zsl_free(g->line);
    free(g);
    q->grp[slot] = NULL;
    memset(q->rate_n[slot + 1], 0, sizeof q->rate_n[0]);
}

wr_err_t wr_memq__groups_sync(wr_memq_t *q, const wr_queue_config_t *cfg, wr_rng_t *rng,
                              int64_t now_us)
{
    int want[WR_GROUPS_MAX]; /* config group i -> its slot (existing), or -1 */
    bool keep[WR_GROUPS_MAX] = {false};
    size_t n = cfg->n_groups < WR_GROUPS_MAX ? cfg->n_groups : WR_GROUPS_MAX;
    for (size_t i = 0; i < n; i++) {
        want[i] = -1;
        for (int s = 0; s < WR_GROUPS_MAX; s++)
            if (q->grp[s] && strcmp(q->grp[s]->name, cfg->groups[i]) == 0) {
                want[i] = s;
                keep[s] = true;
            }
    }
    /* the groups that leave: nobody in them, no live code */
    for (int s = 0; s < WR_GROUPS_MAX; s++) {
        if (!q->grp[s] || keep[s])
            continue;
        if (slot_has_people(q, s))
            return WR_EGROUP;
        if (q->codes) {
            codes_scan_t sc = {.slot = s, .now_ms = now_us / 1000};
            wr_idhash_foreach(q->codes, scan_code, &sc);
            if (sc.live)
                return WR_EGROUP;
        }
    }
    /* the new ones, allocated before anything changes */
    wr_memq_group_t *made[WR_GROUPS_MAX] = {NULL};
    for (size_t i = 0; i < n; i++) {
        if (want[i] >= 0)
            continue;
        wr_memq_group_t *g = calloc(1, sizeof *g);
        if (g)
            g->line = wr_zsl_new(wr_rng_next(rng));
        if (!g || !g->line) {
            free(g);
            for (size_t k = 0; k < i; k++)
                if (made[k]) {
                    wr_zsl_free(made[k]->line);
                    free(made[k]);
                }
            return WR_ENOMEM;
        }
        snprintf(g->name, sizeof g->name, "%s", cfg->groups[i]);
        made[i] = g;
    }
    for (int s = 0; s < WR_GROUPS_MAX; s++)
        if (q->grp[s] && !keep[s])
            slot_free(q, s);
    for (size_t i = 0; i < n; i++) {
        if (made[i]) {
            int s = 0;
            while (q->grp[s]) /* a free slot: at most WR_GROUPS_MAX groups in all */
                s++;
            q->grp[s] = made[i];
            want[i] = s;
        }
        q->grp_order[i] = (uint8_t)want[i];
    }
    q->n_grp = n;
    if (n == 0)
        q->share_carry_micro = 0;
    return WR_OK;
}

static void free_code(void *item, void *arg)
{
    (void)arg;
    free(item); /* the table is freed right after, never read again */
}

void wr_memq__groups_free(wr_memq_t *q)
{
    for (int s = 0; s < WR_GROUPS_MAX; s++)
        if (q->grp[s]) {
            wr_zsl_free(q->grp[s]->line);
            free(q->grp[s]);
            q->grp[s] = NULL;
        }
    q->n_grp = 0;
    if (q->codes) {
        wr_idhash_foreach(q->codes, free_code, NULL);
        wr_idhash_free(q->codes);
        q->codes = NULL;
    }
}

/* ---- presale codes ------------------------------------------------------ */

/* True when h (NUL-terminated) is a code's hash as kept: WR_CODE_HASH_HEX
 * lowercase hex digits (the snapshot keeps it as its bytes). */
static bool hash_ok(const char *h)
{
    uint8_t b[WR_CODE_HASH_HEX / 2];
    return wr_hex_decode(h, strnlen(h, WR_CODE_HASH_HEX + 1), b, sizeof b);
}

wr_code_reason_t wr_memq__code_check(const wr_memq_t *q, const char *hash, int64_t now_us,
                                     int *slot)
{
    *slot = -1;
    const wr_memq_code_t *c =
        q->codes && hash ? wr_idhash_get(q->codes, hash, strnlen(hash, WR_CODE_HASH_HEX + 1))
                         : NULL;
    if (!c || wr_memq__slot_valid(q, c->slot) < 0 || wr_memq__line_of_slot(q, c->slot) == 0)
        return WR_CODE_UNKNOWN;
    wr_code_reason_t r =
        wr_groups_code_verdict(c->revoked, c->expires_ms, c->uses - c->spent, now_us / 1000);
    if (r == WR_CODE_OK)
        *slot = c->slot;
    return r;
}

wr_code_reason_t wr_memq_code_verdict(const wr_memq_t *q, const char *hash, int64_t now_us)
{
    int slot;
    return wr_memq__code_check(q, hash, now_us, &slot);
}

void wr_memq__code_spend(wr_memq_t *q, const char *hash)
{
    wr_memq_code_t *c = wr_idhash_get(q->codes, hash, strnlen(hash, WR_CODE_HASH_HEX + 1));
    if (!c || c->spent >= c->uses)
        return;
    c->spent++;
    q->grp[c->slot]->codes_spent++;
}

void wr_memq_codes_counts(const wr_memq_t *q, wr_store_codes_t *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < q->n_grp; i++) {
        const wr_memq_group_t *g = q->grp[q->grp_order[i]];
        snprintf(out->groups[i].name, sizeof out->groups[i].name, "%s", g->name);
        out->groups[i].issued = g->codes_issued;
        out->groups[i].uses_spent = g->codes_spent;
        out->groups[i].revoked = g->codes_revoked;
    }
    out->n = q->n_grp;
}

wr_err_t wr_memq_code_add(wr_memq_t *q, const char *hash, int slot, uint32_t uses, uint32_t spent,
                          int64_t expires_ms, bool revoked)
{
    size_t len = strnlen(hash, WR_CODE_HASH_HEX + 1);
    if (!hash_ok(hash) || wr_memq__slot_valid(q, slot) < 0 || uses == 0 || spent > uses)
        return WR_EINVAL;
    if (!q->codes && !(q->codes = wr_idhash_new(code_key)))
        return WR_ENOMEM;
    if (wr_idhash_get(q->codes, hash, len))
        return WR_EINVAL;
    wr_memq_code_t *c = calloc(1, sizeof *c);
    if (!c)
        return WR_ENOMEM;
    memcpy(c->id, hash, len);
    c->idlen = (uint8_t)len;
    c->slot = (int8_t)slot;
    c->uses = uses;
    c->spent = spent;
    c->expires_ms = expires_ms;
    c->revoked = revoked;
    wr_err_t err = wr_idhash_put(q->codes, c);
    if (err != WR_OK) {
        free(c);
        return err;
    }
    wr_memq_group_t *g = q->grp[slot];
    g->codes_issued++;
    g->codes_spent += spent;
    g->codes_revoked += revoked;
    return WR_OK;
}

wr_err_t wr_memq_codes_create(wr_memq_t *q, const char *group,
                              const char (*hashes)[WR_CODE_HASH_HEX + 1], size_t n, uint32_t uses,
                              int64_t expires_ms, bool *dirty)
{
    int slot = wr_memq_group_slot(q, group);
    if (slot < 0 || n == 0 || n > WR_CODES_COUNT_MAX || uses == 0 || uses > WR_CODES_USES_MAX)
        return WR_EINVAL;
    /* all or nothing: room first, and no hash kept twice */
    if (!q->codes && !(q->codes = wr_idhash_new(code_key)))
        return WR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!hash_ok(hashes[i]) || wr_idhash_get(q->codes, hashes[i], WR_CODE_HASH_HEX))
            return WR_EINVAL;
    if (wr_idhash_reserve(q->codes, n) != WR_OK)
        return WR_ENOMEM;
    wr_memq_code_t **made = calloc(n, sizeof *made);
    if (!made)
        return WR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(made[i] = calloc(1, sizeof **made))) {
            for (size_t k = 0; k < i; k++)
                free(made[k]);
            free(made);
            return WR_ENOMEM;
        }
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        wr_memq_code_t *c = made[i];
        memcpy(c->id, hashes[i], WR_CODE_HASH_HEX);
        c->idlen = WR_CODE_HASH_HEX;
        c->slot = (int8_t)slot;
        c->uses = uses;
        c->expires_ms = expires_ms;
        if (wr_idhash_get(q->codes, c->id, WR_CODE_HASH_HEX) ||
            wr_idhash_put(q->codes, c) != WR_OK) { /* the same hash twice in one call */
            for (size_t k = 0; k < i; k++) {
                wr_idhash_del(q->codes, made[k]->id, WR_CODE_HASH_HEX);
                free(made[k]);
            }
            for (size_t k = i; k < n; k++)
                free(made[k]);
            free(made);
            return WR_EINVAL;
        }
        added++;
    }
    free(made);
    q->grp[slot]->codes_issued += added;
    *dirty = true;
    return WR_OK;
}

wr_err_t wr_memq_code_revoke(wr_memq_t *q, const char *hash, bool *dirty)
{
    wr_memq_code_t *c =
        q->codes ? wr_idhash_get(q->codes, hash, strnlen(hash, WR_CODE_HASH_HEX + 1)) : NULL;
    if (!c || wr_memq__slot_valid(q, c->slot) < 0 || wr_memq__line_of_slot(q, c->slot) == 0)
        return WR_ECODE;
    if (!c->revoked) {
        c->revoked = true;
        q->grp[c->slot]->codes_revoked++;
        *dirty = true;
    }
    return WR_OK;
}

void wr_memq_groups_stats(const wr_memq_t *q, wr_queue_stats_t *st)
{
    st->n_lines = 1 + q->n_grp;
    snprintf(st->lines[0].name, sizeof st->lines[0].name, "%s", WR_GROUP_STANDARD);
    st->lines[0].waiting = wr_zsl_length(q->line) + wr_memq__pending(q);
    uint64_t groups = q->removed_admitted; /* the standard line's: everyone else's */
    for (size_t i = 0; i < q->n_grp; i++) {
        const wr_memq_group_t *g = q->grp[q->grp_order[i]];
        snprintf(st->lines[i + 1].name, sizeof st->lines[i + 1].name, "%s", g->name);
        st->lines[i + 1].waiting = wr_zsl_length(g->line);
        st->lines[i + 1].admitted_total = g->admitted_total;
        groups += g->admitted_total;
    }
    st->lines[0].admitted_total = q->admitted_total > groups ? q->admitted_total - groups : 0;
}
