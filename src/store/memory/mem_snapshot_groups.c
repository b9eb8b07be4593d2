/*
 * mem_snapshot_groups.c - the priority groups' part of a queue in the
 * embedded store's snapshot (version 12; mem_snapshot.c has the whole
 * format). It comes after the bypass count (version 9) and before the
 * push part (version 10), so that a group member's subscription finds
 * them in line when it loads:
 *   u8 group count (the config's groups, in its order), per group:
 *     u8 name_len, name
 *     u64 admitted_total
 *     its line, as the standard line's (mem_sio.h wr_mem_sio_w_nodes):
 *       u64 count, per person in line order: i64 score, u8 id_len, id,
 *       u32 idle_cs, u8 flags
 *     u64 member count, per member: u8 id_len, id - the group's people
 *       in held or back or holding a live pass (their records, written
 *       before, carry no group)
 *   i64 share_carry_micro (the standard line's carried share, 0..999999)
 *   u64 removed_admitted (admissions of groups since removed: kept out of
 *     the standard line's count)
 *   u64 code count, per code: 32 bytes (its hash: the SHA-256 whose 64
 *     lowercase hex digits memq keeps), u8 group (its index among the
 *     groups above), u8 marks (1 revoked, 2 it expires, 4 a use spent),
 *     u32 uses, (marks 4) u32 uses spent, (marks 2) i64 expires_ms
 *
 * By name, not by slot. A slot is where the queue keeps a group (memq.h
 * grp[]), not a number of the file: a reordered config leaves each group
 * in its slot, so the slots need not follow the config's order. The
 * config loads first and makes the slots anew; each group of this part
 * finds its slot by its name (wr_memq_group_slot), and whatever the part
 * gives a group (line nodes, held and back nodes, passes, codes) gets
 * that slot. A group the config does not name, one named twice, or a
 * count other than the config's is a corrupt file.
 *
 * Derived, not written: the groups' code counters (issued, uses spent,
 * revoked: wr_memq_code_add counts each code it loads; memq drops the
 * codes of a group that leaves the config, so the codes kept are exactly
 * what the counters count). Not kept: the admissions per second of the
 * last minute (rate_*): after a restart the ETAs start again from the
 * configured rate (core/groups.h wr_groups_eta_rate; a group other than
 * the first with people waiting answers no ETA until it admits again);
 * nor the groups' away-sweep cursors (the first sweep starts at the
 * front), as for the standard line.
 *
 * Compact codes: 38 bytes a code (50 with an expiry and a use spent):
 * 100 000 codes take under 5 MB, loaded in one pass of hash inserts.
 */
#include "store/memory/mem_snapshot_groups.h"

#include <string.h>

#include "base/hex.h"

#define MICRO 1000000LL

/* A code's marks. */
#define CODE_REVOKED 0x01u
#define CODE_EXPIRES 0x02u
#define CODE_SPENT   0x04u
#define CODE_MARKS   (CODE_REVOKED | CODE_EXPIRES | CODE_SPENT)

#define HASH_BYTES (WR_CODE_HASH_HEX / 2)

/* The ids of slot's people in set (held or back) and passes: written with
 * w, or only counted (w NULL). Returns the count. */
static uint64_t members(wr_mem_sio_t *w, const wr_memq_t *q, int slot)
{
    uint64_t n = 0;
    const wr_zsl_t *sets[] = {q->held, q->back};
    for (size_t s = 0; s < 2; s++)
        for (const wr_zsl_node_t *x = wr_zsl_first(sets[s]); x; x = wr_zsl_next(x)) {
            if (wr_memq_node_slot(x) != slot)
                continue;
            n++;
            if (w) {
                size_t len;
                const char *id = wr_zsl_node_id(x, &len);
                wr_mem_sio_w_u8(w, (uint8_t)len);
                wr_mem_sio_w_bytes(w, id, len);
            }
        }
    for (size_t i = 0; i < q->heap_n; i++) {
        const wr_memq_token_t *t = q->heap[i];
        if (t->slot != slot)
            continue;
        n++;
        if (w) {
            wr_mem_sio_w_u8(w, t->idlen);
            wr_mem_sio_w_bytes(w, t->id, t->idlen);
        }
    }
    return n;
}

/* The codes' walk (wr_idhash_foreach): index[slot] is the slot's group's
 * index in the part (-1: a slot no group of the config holds, whose codes
 * no group knows: not written); w NULL counts them in n. */
typedef struct {
    wr_mem_sio_t *w;
    int index[WR_GROUPS_MAX];
    uint64_t n;
} codes_walk_t;

static void code_write(void *item, void *arg)
{
    const wr_memq_code_t *c = item;
    codes_walk_t *cw = arg;
    if (c->slot < 0 || c->slot >= WR_GROUPS_MAX || cw->index[c->slot] < 0)
        return;
    cw->n++;
    if (!cw->w)
        return;
    uint8_t hash[HASH_BYTES];
    if (!wr_hex_decode(c->id, c->idlen, hash, sizeof hash)) {
        wr_mem_sio_fail(cw->w, "bad code hash"); /* memq keeps lowercase hex only */
        return;
    }
    uint8_t marks =
        (uint8_t)((c->revoked ? CODE_REVOKED : 0) | (c->expires_ms >= 0 ? CODE_EXPIRES : 0) |
                  (c->spent > 0 ? CODE_SPENT : 0));
    wr_mem_sio_w_bytes(cw->w, hash, sizeof hash);
    wr_mem_sio_w_u8(cw->w, (uint8_t)cw->index[c->slot]);
    wr_mem_sio_w_u8(cw->w, marks);
    wr_mem_sio_w_u32(cw->w, c->uses);
    if (marks & CODE_SPENT)
        wr_mem_sio_w_u32(cw->w, c->spent);
    if (marks & CODE_EXPIRES)
        wr_mem_sio_w_u64(cw->w, (uint64_t)c->expires_ms);
}

void wr_mem_snapshot__groups_write(wr_mem_sio_t *w, const wr_memq_t *q, int64_t now_us)
{
    codes_walk_t cw = {.w = NULL, .n = 0};
    for (size_t s = 0; s < WR_GROUPS_MAX; s++)
        cw.index[s] = -1;
    wr_mem_sio_w_u8(w, (uint8_t)q->n_grp);
    for (size_t i = 0; i < q->n_grp && !w->failed; i++) {
        int slot = q->grp_order[i];
        const wr_memq_group_t *g = q->grp[slot];
        size_t nlen = strlen(g->name);
        cw.index[slot] = (int)i;
        wr_mem_sio_w_u8(w, (uint8_t)nlen);
        wr_mem_sio_w_bytes(w, g->name, nlen);
        wr_mem_sio_w_u64(w, g->admitted_total);
        wr_mem_sio_w_nodes(w, g->line, now_us, false);
        wr_mem_sio_w_u64(w, members(NULL, q, slot));
        (void)members(w, q, slot);
    }
    wr_mem_sio_w_u64(w, (uint64_t)q->share_carry_micro);
    wr_mem_sio_w_u64(w, q->removed_admitted);
    if (q->codes)
        wr_idhash_foreach(q->codes, code_write, &cw); /* count */
    wr_mem_sio_w_u64(w, cw.n);
    cw.w = w;
    if (q->codes && cw.n > 0)
        wr_idhash_foreach(q->codes, code_write, &cw);
}

/* slot's line: each person at their score, seen age ago, marked pending
 * as written. */
static void read_line(wr_mem_sio_t *r, wr_memq_t *q, int slot, int64_t now_us)
{
    uint64_t n = wr_mem_sio_r_count(r, "bad group line count");
    int64_t prev = INT64_MIN;
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        wr_mem_sio_node_t u;
        int64_t score = wr_mem_sio_r_node(r, &u, true, "bad last-seen record");
        if (r->failed)
            break;
        if (score <= prev || score > q->last_score || wr_mem_sio_user_known(q, u.user, u.len)) {
            wr_mem_sio_fail(r, "group line out of order or duplicate user");
            break;
        }
        prev = score;
        wr_zsl_node_t *x;
        if (wr_memq_group_line_add(q, slot, u.user, u.len, score, &x) != WR_OK) {
            wr_mem_sio_fail(r, "out of memory");
            break;
        }
        wr_memq_seen_set(x, now_us, u.age);
        wr_zsl_node_set_flags(x, (uint8_t)(wr_zsl_node_flags(x) | u.flags));
    }
}

/* slot's people in held or back and its pass holders get the slot. */
static void read_members(wr_mem_sio_t *r, wr_memq_t *q, int slot)
{
    char user[WR_ZSL_ID_MAX + 1];
    uint64_t n = wr_mem_sio_r_count(r, "bad group member count");
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint8_t len = wr_mem_sio_r_user(r, user);
        if (r->failed)
            break;
        bool back;
        wr_zsl_node_t *h = wr_memq_held(q, user, len, &back);
        wr_memq_token_t *t = h ? NULL : wr_memq_token(q, user, len);
        if (h && wr_memq_node_slot(h) < 0)
            wr_memq_node_set_slot(h, slot);
        else if (t && t->slot < 0)
            t->slot = (int8_t)slot;
        else
            wr_mem_sio_fail(r, "group member neither held nor admitted, or named twice");
    }
}

/* The codes, each given the slot of its group's index (slots, n groups). */
static void read_codes(wr_mem_sio_t *r, wr_memq_t *q, const int *slots, size_t ngroups)
{
    uint64_t n = wr_mem_sio_r_count(r, "bad code count");
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint8_t hash[HASH_BYTES];
        wr_mem_sio_r_bytes(r, hash, sizeof hash);
        uint8_t gi = wr_mem_sio_r_u8(r);
        uint8_t marks = wr_mem_sio_r_u8(r);
        uint32_t uses = wr_mem_sio_r_u32(r);
        uint32_t spent = marks & CODE_SPENT ? wr_mem_sio_r_u32(r) : 0;
        int64_t expires_ms = marks & CODE_EXPIRES ? (int64_t)wr_mem_sio_r_u64(r) : -1;
        if (r->failed)
            break;
        if (gi >= ngroups || (marks & ~CODE_MARKS) || uses == 0 || uses > WR_CODES_USES_MAX ||
            spent > uses || ((marks & CODE_SPENT) && spent == 0) || expires_ms < -1 ||
            ((marks & CODE_EXPIRES) && expires_ms < 0)) {
            wr_mem_sio_fail(r, "bad code");
            break;
        }
        char hex[WR_CODE_HASH_HEX + 1];
        wr_hex_encode(hash, sizeof hash, hex);
        wr_err_t err =
            wr_memq_code_add(q, hex, slots[gi], uses, spent, expires_ms, marks & CODE_REVOKED);
        if (err == WR_EINVAL)
            wr_mem_sio_fail(r, "duplicate code");
        else if (err != WR_OK)
            wr_mem_sio_fail(r, "out of memory");
    }
}

void wr_mem_snapshot__groups_read(wr_mem_sio_t *r, wr_memq_t *q, int64_t now_us)
{
    int slots[WR_GROUPS_MAX]; /* the part's group i -> its slot */
    bool seen[WR_GROUPS_MAX] = {false};
    for (size_t k = 0; k < WR_GROUPS_MAX; k++)
        slots[k] = -1;
    uint8_t n = wr_mem_sio_r_u8(r);
    if (!r->failed && n != q->n_grp)
        wr_mem_sio_fail(r, "group count other than the config's");
    for (size_t i = 0; i < n && !r->failed; i++) {
        char name[WR_GROUP_NAME_MAX + 1];
        uint8_t nlen = wr_mem_sio_r_u8(r);
        if (!r->failed && (nlen == 0 || nlen > WR_GROUP_NAME_MAX))
            wr_mem_sio_fail(r, "bad group name");
        wr_mem_sio_r_bytes(r, name, r->failed ? 0 : nlen);
        if (r->failed)
            break;
        name[nlen] = '\0';
        int slot = memchr(name, '\0', nlen) ? -1 : wr_memq_group_slot(q, name);
        if (slot < 0 || seen[slot]) {
            wr_mem_sio_fail(r, "group not in the config, or named twice");
            break;
        }
        seen[slot] = true;
        slots[i] = slot;
        q->grp[slot]->admitted_total = wr_mem_sio_r_u64(r);
        read_line(r, q, slot, now_us);
        if (!r->failed)
            read_members(r, q, slot);
    }
    int64_t carry = r->failed ? 0 : (int64_t)wr_mem_sio_r_u64(r);
    if (!r->failed && (carry < 0 || carry >= MICRO))
        wr_mem_sio_fail(r, "bad carried share");
    q->share_carry_micro = r->failed ? 0 : carry;
    uint64_t removed = r->failed ? 0 : wr_mem_sio_r_u64(r);
    if (!r->failed && removed > q->admitted_total)
        wr_mem_sio_fail(r, "more admissions of removed groups than in all");
    q->removed_admitted = r->failed ? 0 : removed;
    if (!r->failed)
        read_codes(r, q, slots, n);
}
