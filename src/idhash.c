/*
 * idhash.c - open-addressing hash set of items keyed by user id.
 *
 * Structure. A power-of-two array of 8-byte slots; 0 is an empty slot,
 * otherwise slot = item address | (tag << 48), tag = the top 16 bits of the
 * item's hash (x86-64 and arm64 user addresses fit in 48 bits; an item that
 * does not is refused). Probing compares tags first and dereferences the
 * item (to compare keys) only on a tag match, so a lookup touches about one
 * item. Linear probing; deletion by backward shift (no tombstones), so
 * probe chains never rot.
 *
 * Invariants. Every item sits in the run of occupied slots that starts at
 * its home slot (hash & mask) and contains no empty slot. count <= 0.8 *
 * cap. The table grows (x2) before exceeding 0.8 and shrinks (/2) below
 * 1/8 when larger than 64 slots.
 *
 * Ownership. The table owns its slot array; items are the caller's. Hashes
 * are recomputed from the item's key on resize (no stored hashes: 8 bytes
 * per slot in total).
 */
#include "idhash.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rng.h"
#include "siphash.h"

#define MIN_CAP   16u
#define TAG_SHIFT 48
#define PTR_MASK  ((UINT64_C(1) << TAG_SHIFT) - 1)

struct wr_idhash {
    uint64_t *slots;
    size_t cap; /* power of two */
    size_t count;
    uint64_t k[2]; /* SipHash key, random per table */
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

void wr_idhash_free(wr_idhash_t *h)
{
    if (!h)
        return;
    free(h->slots);
    free(h);
}

/* Index of the slot holding id, or SIZE_MAX. */
static size_t find_slot(const wr_idhash_t *h, const char *id, size_t len)
{
    uint64_t hv = hash_of(h, id, len);
    uint64_t tag = tag_of(hv);
    size_t mask = h->cap - 1;
    for (size_t i = hv & mask;; i = (i + 1) & mask) {
        uint64_t s = h->slots[i];
        if (s == 0)
            return SIZE_MAX;
        if ((s >> TAG_SHIFT) == tag) {
            size_t klen;
            const char *k = h->key((const void *)(uintptr_t)(s & PTR_MASK), &klen);
            if (klen == len && memcmp(k, id, len) == 0)
                return i;
        }
    }
}

void *wr_idhash_get(const wr_idhash_t *h, const char *id, size_t len)
{
    size_t i = find_slot(h, id, len);
    return i == SIZE_MAX ? NULL : (void *)(uintptr_t)(h->slots[i] & PTR_MASK);
}

static void place(uint64_t *slots, size_t mask, uint64_t hv, uint64_t slot)
{
    size_t i = hv & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = slot;
}

#define HUGE_PAGE ((size_t)2 << 20)

/* A zeroed slot array; from 2 MiB on, huge-page aligned and advised, so
 * random probes into a large table cost fewer TLB misses. */
static uint64_t *slots_alloc(size_t cap)
{
    size_t bytes = cap * sizeof(uint64_t);
    if (bytes < HUGE_PAGE)
        return calloc(cap, sizeof(uint64_t));
    uint64_t *p = aligned_alloc(HUGE_PAGE, bytes); /* bytes: a power of two >= 2 MiB */
    if (!p)
        return NULL;
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    memset(p, 0, bytes);
    return p;
}

static wr_err_t resize(wr_idhash_t *h, size_t cap)
{
    uint64_t *ns = slots_alloc(cap);
    if (!ns)
        return WR_ENOMEM;
    for (size_t i = 0; i < h->cap; i++) {
        uint64_t s = h->slots[i];
        if (s == 0)
            continue;
        size_t klen;
        const char *k = h->key((const void *)(uintptr_t)(s & PTR_MASK), &klen);
        place(ns, cap - 1, hash_of(h, k, klen), s);
    }
    free(h->slots);
    h->slots = ns;
    h->cap = cap;
    return WR_OK;
}

wr_err_t wr_idhash_reserve(wr_idhash_t *h, size_t n)
{
    size_t cap = h->cap;
    while ((h->count + n) * 5 > cap * 4)
        cap *= 2;
    return cap == h->cap ? WR_OK : resize(h, cap);
}

wr_err_t wr_idhash_put(wr_idhash_t *h, void *item)
{
    uint64_t p = (uint64_t)(uintptr_t)item;
    if (p == 0 || (p & ~PTR_MASK) != 0)
        return WR_EINVAL;
    if ((h->count + 1) * 5 > h->cap * 4) {
        wr_err_t err = resize(h, h->cap * 2);
        if (err != WR_OK)
            return err;
    }
    size_t klen;
    const char *k = h->key(item, &klen);
    uint64_t hv = hash_of(h, k, klen);
    place(h->slots, h->cap - 1, hv, p | (tag_of(hv) << TAG_SHIFT));
    h->count++;
    return WR_OK;
}

void *wr_idhash_del(wr_idhash_t *h, const char *id, size_t len)
{
    size_t i = find_slot(h, id, len);
    if (i == SIZE_MAX)
        return NULL;
    void *item = (void *)(uintptr_t)(h->slots[i] & PTR_MASK);
    size_t mask = h->cap - 1;
    /* Backward shift: pull later members of the run into the hole when the
     * hole lies on their probe path (between their home and their slot). */
    size_t hole = i;
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        uint64_t s = h->slots[j];
        if (s == 0)
            break;
        size_t klen;
        const char *k = h->key((const void *)(uintptr_t)(s & PTR_MASK), &klen);
        size_t home = hash_of(h, k, klen) & mask;
        /* distance from home to j vs from home to the hole (cyclic) */
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            h->slots[hole] = s;
            hole = j;
        }
    }
    h->slots[hole] = 0;
    h->count--;
    if (h->cap > 64 && h->count * 8 < h->cap)
        (void)resize(h, h->cap / 2); /* on ENOMEM the table just stays larger */
    return item;
}

size_t wr_idhash_count(const wr_idhash_t *h)
{
    return h->count;
}

size_t wr_idhash_bytes(const wr_idhash_t *h)
{
    return sizeof *h + h->cap * sizeof *h->slots;
}

void wr_idhash_foreach(const wr_idhash_t *h, void (*fn)(void *item, void *arg), void *arg)
{
    for (size_t i = 0; i < h->cap; i++)
        if (h->slots[i])
            fn((void *)(uintptr_t)(h->slots[i] & PTR_MASK), arg);
}
