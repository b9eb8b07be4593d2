/*
 * idhash.c - open-addressing hash set of items keyed by user id.
 *
 * Structure. A power-of-two array of 8-byte slots; 0 is an empty slot,
 * otherwise slot = item address | (tag << 48), tag = the top 16 bits of the
 * item's hash (x86-64 and arm64 user addresses fit in 48 bits; an item that
 * does not is refused). Probing compares tags first and dereferences the
 * item (to compare keys) only on a tag match, so a lookup touches about one
 * item. Linear probing; deletion by backward shift (no tombstones), so
 * probe chains never rot (only the old array of a running resize has
 * tombstones, and it is freed within a bounded number of operations).
 *
 * Incremental resizing (as Redis's dict). Rehashing an item costs a
 * dereference and a SipHash, 150-200 ns, so rehashing a whole table of a
 * million items at once would stall the caller's event loop for ~150 ms.
 * Instead, a resize allocates the new array and keeps the previous one as
 * the old table; every later put and del then migrates the next
 * MIGRATE_STEP old slots (the cursor walks the old array from 0 up) and
 * the old array is freed when no item is left in it. Meanwhile puts go to
 * the new table only, lookups search the new table and then the old one
 * (both tables share the hash key, so one hash serves both), and a del
 * removes from whichever table holds the item. wr_idhash_get never
 * migrates (it is const).
 *
 * The old table never receives an insert, and it never empties a slot: a
 * migrated or deleted item leaves a tombstone (TOMB: pointer bits 0, so it
 * never matches a lookup and is never mistaken for an item). Backward
 * shift there could move an item below the cursor, where it would never
 * be migrated; with tombstones the set of non-empty old slots is frozen
 * when the migration starts, so every probe path that ran through
 * occupied slots then still does, every item left in the old table sits
 * where it sat (at or above the cursor), and old lookups stop at the same
 * empty slots as before (the old table was at most 0.8 full: it has empty
 * slots, probe runs never lengthen). The new table is an ordinary table
 * (backward shift included).
 *
 * Arithmetic: the migration ends before the new table must resize. A
 * growth starts when a put would pass 0.8 * ocap items and doubles the
 * table (cap = 2 * ocap); the new table grows again only after about
 * 0.8 * ocap more puts, while the migration ends within ocap / MIGRATE_STEP
 * puts and dels (one op for the 16-slot minimum). A shrink starts when a
 * del leaves fewer than ocap / 8 items and halves the table (cap =
 * ocap / 2, load < 1/4); it grows again only after about 0.275 * ocap
 * puts, and the migration ends within ocap / MIGRATE_STEP ops. So a put
 * never finds a migration running when it must grow (if it ever did,
 * start_resize would finish the old one synchronously first: correct,
 * merely slow). A shrink is not started while a migration runs; the next
 * del after it ends checks again (a second shrink would be due only after
 * ~ocap / 16 dels anyway). wr_idhash_reserve may have to grow during a
 * migration: it then finishes the running one synchronously, which visits
 * at most ~4 old slots per reserved put (growth is needed only when n is
 * at least ~0.38 * cap during a growth migration, or ~0.49 * cap during a
 * shrink migration of 2 * cap old slots), so O(n) work like the n puts
 * that follow.
 *
 * Work per operation: a put or del visits at most MIGRATE_STEP old slots
 * and rehashes at most that many items (32 * ~200 ns = ~6 us) plus its own
 * probe; a get probes at most two tables. Memory: while a growth migrates,
 * both arrays are held, 3 * ocap slots (24 bytes per old slot).
 * Arrays of 2 MiB or more are mapped, not memset: the kernel zeroes each
 * 4 KiB page on its first touch, so the zeroing too is spread over the
 * migration's puts (a memset of fresh huge pages took 20-40 ms for 8 MiB);
 * huge pages are advised once the migration into the array is over
 * (slots_alloc).
 *
 * Invariants. Every item is in exactly one table. In the table, every
 * item sits in the run of occupied slots that starts at its home slot
 * (hash & mask) and contains no empty slot; in the old table the same
 * holds with tombstones counted as occupied, and old slots below the
 * cursor hold no item. count (both tables) <= 0.8 * cap. The table grows
 * (x2) before exceeding 0.8 and shrinks (/2) below 1/8 when larger than 64
 * slots and no migration runs.
 *
 * Ownership. The table owns its slot arrays; items are the caller's.
 * Hashes are recomputed from the item's key on migration (no stored
 * hashes: 8 bytes per slot in total).
 */
#include "base/idhash.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/rng.h"
#include "base/siphash.h"

#define MIN_CAP      16u
#define TAG_SHIFT    48
#define PTR_MASK     ((UINT64_C(1) << TAG_SHIFT) - 1)
#define TOMB         (UINT64_C(1) << TAG_SHIFT) /* old table only: pointer bits 0 */
#define MIGRATE_STEP WR_IDHASH_MIGRATE_STEP

struct wr_idhash {
    uint64_t *slots; /* the table: puts go here */
    size_t cap;      /* power of two */
    size_t count;    /* items in both tables */
    uint64_t *old;   /* while a resize migrates: the previous array, else NULL */
    size_t ocap;     /* its slots (0 when old is NULL) */
    size_t ocount;   /* items still in old */
    size_t cursor;   /* old slots below it hold no item */
    uint64_t k[2];   /* SipHash key, random per table */
    wr_idhash_key_fn key;
};

static inline uint64_t hash_of(const wr_idhash_t *h, const char *id, size_t len)
{
    return wr_siphash13(h->k[0], h->k[1], id, len);
}

static inline uint64_t tag_of(uint64_t hv)
{
    return hv >> TAG_SHIFT;
}

static inline void *item_of(uint64_t slot)
{
    return (void *)(uintptr_t)(slot & PTR_MASK);
}

/* The hash of the item in slot (dereferences it). */
static uint64_t slot_hash(const wr_idhash_t *h, uint64_t slot)
{
    size_t klen;
    const char *k = h->key(item_of(slot), &klen);
    return hash_of(h, k, klen);
}

wr_idhash_t *wr_idhash_new(wr_idhash_key_fn key)
{
    wr_idhash_t *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->slots = calloc(MIN_CAP, sizeof *h->slots);
    if (!h->slots) {
        free(h);
        return NULL;
    }
    h->cap = MIN_CAP;
    h->key = key;
    wr_rng_entropy(h->k, sizeof h->k); /* random; distinct per table even without entropy */
    return h;
}

/* Index of the slot of slots (cap mask + 1) holding id (hash hv), or
 * SIZE_MAX. A tombstone never matches: its pointer bits are 0. */
static size_t find_in(const wr_idhash_t *h, const uint64_t *slots, size_t mask, uint64_t hv,
                      const char *id, size_t len)
{
    uint64_t tag = tag_of(hv);
    for (size_t i = hv & mask;; i = (i + 1) & mask) {
        uint64_t s = slots[i];
        if (s == 0)
            return SIZE_MAX;
        if ((s >> TAG_SHIFT) == tag && (s & PTR_MASK) != 0) {
            size_t klen;
            const char *k = h->key(item_of(s), &klen);
            if (klen == len && memcmp(k, id, len) == 0)
                return i;
        }
    }
}

void *wr_idhash_get(const wr_idhash_t *h, const char *id, size_t len)
{
    uint64_t hv = hash_of(h, id, len);
    size_t i = find_in(h, h->slots, h->cap - 1, hv, id, len);
    if (i != SIZE_MAX)
        return item_of(h->slots[i]);
    if (h->old && (i = find_in(h, h->old, h->ocap - 1, hv, id, len)) != SIZE_MAX)
        return item_of(h->old[i]);
    return NULL;
}

static void place(uint64_t *slots, size_t mask, uint64_t hv, uint64_t slot)
{
    size_t i = hv & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = slot;
}

#define HUGE_PAGE ((size_t)2 << 20)

/*
 * A zeroed slot array. From 2 MiB on it is its own huge-page aligned
 * mapping, not zeroed here: the kernel zeroes each page when a put or a
 * migration step first touches it, so the cost is spread over the puts of
 * the migration (a step touches about MIGRATE_STEP + 1 pages at most) instead of
 * one memset stalling the loop (measured: 20-40 ms for 8 MiB of fresh huge
 * pages). It is advised MADV_NOHUGEPAGE meanwhile (a first touch of a huge
 * page zeroes 2 MiB at once) and MADV_HUGEPAGE once the migration into it
 * is over (huge_advise), so khugepaged collapses it in the background and
 * random probes cost fewer TLB misses.
 */
static uint64_t *slots_alloc(size_t cap)
{
    size_t bytes = cap * sizeof(uint64_t);
    if (bytes < HUGE_PAGE)
        return calloc(cap, sizeof(uint64_t));
    size_t len = bytes + HUGE_PAGE; /* room to align */
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    unsigned char *p =
        (unsigned char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (p > m)
        (void)munmap(m, (size_t)(p - m));
    if (m + len > p + bytes)
        (void)munmap(p + bytes, (size_t)(m + len - (p + bytes)));
    (void)madvise(p, bytes, MADV_NOHUGEPAGE); /* advice: failure is harmless */
    return (uint64_t *)p;
}

static void slots_free(uint64_t *slots, size_t cap)
{
    if (!slots)
        return;
    if (cap * sizeof(uint64_t) < HUGE_PAGE)
        free(slots);
    else
        (void)munmap(slots, cap * sizeof(uint64_t));
}

/* The table's array is complete (no migration into it): huge pages from
 * now on (slots_alloc). */
static void huge_advise(const wr_idhash_t *h)
{
    if (h->cap * sizeof(uint64_t) >= HUGE_PAGE)
        (void)madvise(h->slots, h->cap * sizeof(uint64_t), MADV_HUGEPAGE);
}

void wr_idhash_free(wr_idhash_t *h)
{
    if (!h)
        return;
    slots_free(h->old, h->ocap);
    slots_free(h->slots, h->cap);
    free(h);
}

/* Moves the items of the next n old slots (at most) into the table,
 * leaving tombstones; frees the old array once it holds no item. */
static void migrate(wr_idhash_t *h, size_t n)
{
    size_t end = h->ocap - h->cursor > n ? h->cursor + n : h->ocap;
    size_t mask = h->cap - 1;
    for (size_t i = h->cursor; i < end && h->ocount > 0; i++) {
        uint64_t s = h->old[i];
        if ((s & PTR_MASK) == 0)
            continue; /* empty or tombstone */
        place(h->slots, mask, slot_hash(h, s), s);
        h->old[i] = TOMB;
        h->ocount--;
    }
    h->cursor = end;
    if (h->ocount == 0) { /* also when the cursor reached ocap */
        slots_free(h->old, h->ocap);
        h->old = NULL;
        h->ocap = h->cursor = 0;
        huge_advise(h);
    }
}

/* Starts migrating into a new array of cap slots; a migration still
 * running is finished first (see the design comment: only reserve gets
 * here with one). WR_ENOMEM leaves the table as it was. */
static wr_err_t start_resize(wr_idhash_t *h, size_t cap)
{
    uint64_t *ns = slots_alloc(cap);
    if (!ns)
        return WR_ENOMEM;
    if (h->old)
        migrate(h, SIZE_MAX);
    h->old = h->slots;
    h->ocap = h->cap;
    h->ocount = h->count;
    h->cursor = 0;
    h->slots = ns;
    h->cap = cap;
    if (h->ocount == 0)
        migrate(h, 0); /* nothing to move: frees the old array */
    return WR_OK;
}

wr_err_t wr_idhash_reserve(wr_idhash_t *h, size_t n)
{
    size_t cap = h->cap;
    while ((h->count + n) * 5 > cap * 4)
        cap *= 2;
    return cap == h->cap ? WR_OK : start_resize(h, cap);
}

wr_err_t wr_idhash_put(wr_idhash_t *h, void *item)
{
    uint64_t p = (uint64_t)(uintptr_t)item;
    if (p == 0 || (p & ~PTR_MASK) != 0)
        return WR_EINVAL;
    if ((h->count + 1) * 5 > h->cap * 4) {
        wr_err_t err = start_resize(h, h->cap * 2);
        if (err != WR_OK)
            return err;
    }
    size_t klen;
    const char *k = h->key(item, &klen);
    uint64_t hv = hash_of(h, k, klen);
    place(h->slots, h->cap - 1, hv, p | (tag_of(hv) << TAG_SHIFT));
    h->count++;
    if (h->old)
        migrate(h, MIGRATE_STEP);
    return WR_OK;
}

/* Empties slot i of the table by backward shift: pulls later members of
 * the run into the hole when the hole lies on their probe path (between
 * their home and their slot). */
static void shift_out(wr_idhash_t *h, size_t i)
{
    size_t mask = h->cap - 1;
    size_t hole = i;
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        uint64_t s = h->slots[j];
        if (s == 0)
            break;
        size_t home = slot_hash(h, s) & mask;
        /* distance from home to j vs from home to the hole (cyclic) */
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            h->slots[hole] = s;
            hole = j;
        }
    }
    h->slots[hole] = 0;
}

void *wr_idhash_del(wr_idhash_t *h, const char *id, size_t len)
{
    uint64_t hv = hash_of(h, id, len);
    void *item;
    size_t i = find_in(h, h->slots, h->cap - 1, hv, id, len);
    if (i != SIZE_MAX) {
        item = item_of(h->slots[i]);
        shift_out(h, i);
    } else if (h->old && (i = find_in(h, h->old, h->ocap - 1, hv, id, len)) != SIZE_MAX) {
        item = item_of(h->old[i]);
        h->old[i] = TOMB; /* no backward shift in the old table */
        h->ocount--;
    } else {
        return NULL;
    }
    h->count--;
    if (!h->old && h->cap > 64 && h->count * 8 < h->cap)
        (void)start_resize(h, h->cap / 2); /* on ENOMEM the table just stays larger */
    if (h->old)
        migrate(h, MIGRATE_STEP);
    return item;
}

size_t wr_idhash_count(const wr_idhash_t *h)
{
    return h->count;
}

size_t wr_idhash_bytes(const wr_idhash_t *h)
{
    return sizeof *h + (h->cap + h->ocap) * sizeof *h->slots;
}

size_t wr_idhash__pending(const wr_idhash_t *h)
{
    return h->ocap - h->cursor;
}

void wr_idhash_foreach(const wr_idhash_t *h, void (*fn)(void *item, void *arg), void *arg)
{
    for (size_t i = 0; i < h->cap; i++)
        if (h->slots[i])
            fn(item_of(h->slots[i]), arg);
    for (size_t i = h->cursor; i < h->ocap; i++) /* old slots below the cursor hold no item */
        if (h->old[i] & PTR_MASK)
            fn(item_of(h->old[i]), arg);
}
