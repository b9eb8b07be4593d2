/*
 * zsl.c - order-statistic skiplist with spans (after Redis's zskiplist in
 * t_zset.c), made compact for very long waiting lines.
 *
 * Structure. A header node with WR_ZSL_MAXLEVEL levels; every element node
 * has 1..32 levels drawn with p = 1/4. Level i of a node holds the forward
 * pointer to the next node having at least i+1 levels and the span: how
 * many level-0 steps that forward pointer jumps. The rank of a node is the
 * sum of the spans followed while searching for it from the header.
 *
 * Invariants.
 *  - Scores are unique and strictly increasing along every level.
 *  - For a non-NULL forward pointer at level i of x, span(x, i) is the
 *    difference of the ranks of the two nodes. Spans next to a NULL forward
 *    pointer are never read for a result (they only feed other such spans),
 *    as in Redis.
 *  - Level 0 spans are always 1, so they are not stored.
 *
 * Node layout (no padding, 27 bytes + levels + id, rounded up to 8):
 *   int64 score | node *next (level 0) | u32 seq | u32 aux | u8 level |
 *   u8 idlen | u8 flags | (level-1) x { node *fwd; u32 span } packed, 12
 *   bytes each, accessed with memcpy | id bytes | NUL [| extra bytes]
 * The level byte's low six bits are the levels; its top bit says that the
 * node has the caller's WR_ZSL_EXTRA bytes after the id's NUL (inserted
 * while wr_zsl_set_extra was on: memq's copy of a public-log receipt).
 * aux and flags are the caller's (memq: last-seen time and the pending
 * mark of people who stop asking); they fill what was rounding slack for
 * 12-byte ids. A level-1 node with a 12-byte id takes 40 bytes; the mean
 * over the level distribution is about 45 bytes.
 *
 * Memory. Nodes come from a per-list pool: size classes in steps of 8 bytes,
 * each with a free list threaded through freed nodes, carved from chunks
 * that grow from 4 KiB to 2 MiB; 2 MiB chunks are huge-page aligned and
 * advised with MADV_HUGEPAGE (fewer TLB misses when a search walks a long
 * line: rank at 10M users went from 17 to about 7 us). glibc's 16-byte
 * per-malloc overhead is
 * paid once per chunk, not per node. Freed nodes are reused by later nodes
 * of the same class; chunks go back to the system only in wr_zsl_free().
 * The list owns every node; callers hold node pointers only while the node
 * is in the list.
 *
 * Rank index (append-only lists). The span walk of rank touches a dozen or
 * more nodes spread over the heap: at 1M elements it cost about 3 us, most
 * of it cache misses, and rank is what every position poll asks. The
 * waiting line only ever appends (arrival scores are strictly increasing)
 * and deletes, so while that holds each node also gets a sequence number
 * (the order of its append) and the list keeps one bit per sequence number
 * (1 = still in the list) in blocks of RB_BITS bits, a live count per block
 * and per superblock of RB_SUP blocks. rank = live in the superblocks
 * before + live in the blocks before (same superblock) + popcount of the
 * bits before it in its own block: two small arrays that stay in cache and
 * one bitmap block, about a tenth of the walk. Costs 4 bytes per node (the
 * sequence number, kept as its low 32 bits: the index covers at most 2^31
 * sequence numbers from its first block) and about one bit per element
 * appended since the oldest element still in the list; fully dead blocks
 * are freed, and dead superblocks at the front are dropped. An insert that
 * is not an append, a window wider than 2^31 or an allocation failure turns
 * the index off (rank falls back to the span walk, still exact) until the
 * list is empty again.
 *
 * Reserved numbers (the sale opening). The pre-queue enters the line below
 * every later arrival, in chunks, while later arrivals keep appending: not
 * appends. So the opening reserves one sequence number per pre-queue
 * member first (wr_zsl_reserve: next moves on by n, the bits stay 0), and
 * each moved element takes its own (wr_zsl_insert_reserved), its score
 * sorting exactly as its number. The index stays exact and on. While a
 * reservation is open (pin), blocks and superblocks from its first number
 * on are kept, so a late reserved insert always finds its block.
 */
#include "store/memory/zsl.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/array.h"
#include "base/rng.h"

#define ZSL_P_NUM 0x4000u /* p = 0x4000 / 0x10000 = 1/4 */
#define LVL_BYTES 12      /* one upper level: pointer + u32 span */
#define HDR_BYTES 27      /* score + next + seq + aux + level + idlen + flags */
#define ALIGN     8
#define LVL_MASK  0x3fu /* the level byte: the node's levels (1..32) */
#define LVL_EXTRA 0x80u /* the level byte: the node has the extra word */
#define MAX_NODE  (HDR_BYTES + LVL_BYTES * (WR_ZSL_MAXLEVEL - 1) + WR_ZSL_ID_MAX + 1 + WR_ZSL_EXTRA)
#define N_CLASSES (MAX_NODE / ALIGN + 2)
#define CHUNK_MIN 4096u
#define CHUNK_MAX (1u << 21) /* 2 MiB: one transparent huge page */

struct wr_zsl_node {
    int64_t score;
    struct wr_zsl_node *next;
    uint32_t seq; /* low 32 bits of the append sequence number (rank index) */
    uint32_t aux; /* the caller's word (wr_zsl_node_aux); 0 at insert */
    uint8_t level;
    uint8_t idlen;
    uint8_t flags; /* the caller's bits (wr_zsl_node_flags); 0 at insert */
    unsigned char tail[];
};

#define RB_BITS  4096u /* sequence numbers per bitmap block (512 bytes) */
#define RB_WORDS (RB_BITS / 64)
#define RB_SUP   64u /* blocks per superblock */
#define RB_SPAN  (UINT64_C(1) << 31)

typedef struct {
    uint64_t *bits; /* RB_WORDS words; NULL when no element of it is left */
    uint32_t live;
} rblock_t;

typedef struct {
    bool on;
    uint64_t next;      /* sequence number of the next append */
    uint64_t pin;       /* lowest reserved number that may still be used (UINT64_MAX: none):
                           the index keeps its blocks from there on */
    uint64_t first_blk; /* absolute block number of blk[0], a multiple of RB_SUP */
    rblock_t *blk;      /* blocks first_blk .. first_blk + nblk - 1 */
    size_t nblk, cap_blk;
    uint64_t *sup; /* live per superblock: sup[i] covers blk[i*RB_SUP ...] */
    size_t nsup, cap_sup;
} rankidx_t;

typedef struct chunk {
    struct chunk *next;
    size_t size;
} chunk_t;

struct wr_zsl {
    wr_zsl_node_t *header;
    uint64_t length;
    int level;    /* levels in use, 1..WR_ZSL_MAXLEVEL */
    wr_rng_t rng; /* level generator */
    /* pool */
    void *free_list[N_CLASSES];
    chunk_t *chunks;
    unsigned char *bump, *bump_end;
    size_t next_chunk;
    size_t pool_bytes;
    rankidx_t ri;
    bool extra; /* nodes inserted now get the extra word (wr_zsl_set_extra) */
};

/* ---- node accessors ------------------------------------------------ */

static inline wr_zsl_node_t *fwd(const wr_zsl_node_t *x, int i)
{
    if (i == 0)
        return x->next;
    wr_zsl_node_t *p;
    memcpy(&p, x->tail + (size_t)LVL_BYTES * (i - 1), sizeof p);
    return p;
}

static inline void set_fwd(wr_zsl_node_t *x, int i, wr_zsl_node_t *p)
{
    if (i == 0)
        x->next = p;
    else
        memcpy(x->tail + (size_t)LVL_BYTES * (i - 1), &p, sizeof p);
}

static inline uint32_t span(const wr_zsl_node_t *x, int i)
{
    if (i == 0)
        return 1;
    uint32_t s;
    memcpy(&s, x->tail + (size_t)LVL_BYTES * (i - 1) + sizeof(void *), sizeof s);
    return s;
}

static inline void set_span(wr_zsl_node_t *x, int i, uint32_t s)
{
    if (i != 0)
        memcpy(x->tail + (size_t)LVL_BYTES * (i - 1) + sizeof(void *), &s, sizeof s);
}

static inline size_t node_size(int level, size_t idlen, bool extra)
{
    size_t n = HDR_BYTES + (size_t)LVL_BYTES * (level - 1) + idlen + 1 + (extra ? WR_ZSL_EXTRA : 0);
    return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

static inline char *node_id(const wr_zsl_node_t *x)
{
    return (char *)x->tail + (size_t)LVL_BYTES * ((x->level & LVL_MASK) - 1);
}

/* ---- pool ------------------------------------------------------------ */

static void pool_push(wr_zsl_t *zsl, void *p, size_t size)
{
    void *head = zsl->free_list[size / ALIGN];
    memcpy(p, &head, sizeof head);
    zsl->free_list[size / ALIGN] = p;
}

static void *pool_alloc(wr_zsl_t *zsl, size_t size)
{
    void **fl = &zsl->free_list[size / ALIGN];
    if (*fl) {
        void *p = *fl, *nx;
        memcpy(&nx, p, sizeof nx);
        *fl = nx;
        return p;
    }
    if ((size_t)(zsl->bump_end - zsl->bump) < size) {
        /* Give the tail of the old chunk to the free list that fits it. */
        size_t rest = (size_t)(zsl->bump_end - zsl->bump) & ~(size_t)(ALIGN - 1);
        if (rest >= node_size(1, 1, false))
            pool_push(zsl, zsl->bump, rest);
        size_t csize = zsl->next_chunk;
        chunk_t *c;
        if (csize == CHUNK_MAX) {
            /* Long lines: huge-page chunks, so walking the list costs fewer
             * TLB misses (madvise is advice; failure is harmless). */
            c = aligned_alloc(CHUNK_MAX, csize);
            if (c)
                (void)madvise(c, csize, MADV_HUGEPAGE);
        } else {
            c = malloc(csize);
        }
        if (!c)
            return NULL;
        c->next = zsl->chunks;
        c->size = csize;
        zsl->chunks = c;
        zsl->pool_bytes += csize;
        zsl->bump = (unsigned char *)c + ((sizeof *c + ALIGN - 1) & ~(size_t)(ALIGN - 1));
        zsl->bump_end = (unsigned char *)c + csize;
        if (zsl->next_chunk < CHUNK_MAX)
            zsl->next_chunk *= 2;
    }
    void *p = zsl->bump;
    zsl->bump += size;
    return p;
}

/* ---- rank index ------------------------------------------------------ */

_Static_assert(HDR_BYTES == offsetof(struct wr_zsl_node, tail), "node header layout");

/* The lowest sequence number the index may still have to hold. */
static inline uint64_t ri_low(const rankidx_t *ri)
{
    return ri->pin < ri->next ? ri->pin : ri->next;
}

/* Empties the index and turns it on; sequence numbers go on from next. */
static void ri_reset(rankidx_t *ri)
{
    uint64_t next = ri->next, pin = ri->pin;
    for (size_t i = 0; i < ri->nblk; i++)
        free(ri->blk[i].bits);
    free(ri->blk);
    free(ri->sup);
    memset(ri, 0, sizeof *ri);
    ri->on = true;
    ri->next = next;
    ri->pin = pin;
    ri->first_blk = ri_low(ri) / RB_BITS / RB_SUP * RB_SUP;
}

static void ri_off(rankidx_t *ri)
{
    ri_reset(ri);
    ri->on = false;
}

/* Full 64-bit sequence number of a node (the index is on). */
static inline uint64_t ri_seq(const rankidx_t *ri, const wr_zsl_node_t *x)
{
    return ri->next - (uint32_t)((uint32_t)ri->next - x->seq);
}

/* Records x (just inserted) under sequence number seq (< next); turns the
 * index off when it cannot. */
static void ri_mark(rankidx_t *ri, wr_zsl_node_t *x, uint64_t seq)
{
    x->seq = (uint32_t)seq;
    if (!ri->on)
        return;
    if (seq < ri->first_blk * RB_BITS || seq - ri->first_blk * RB_BITS >= RB_SPAN) {
        ri_off(ri);
        return;
    }
    size_t b = (size_t)(seq / RB_BITS - ri->first_blk);
    size_t sp = b / RB_SUP;
    rblock_t *nb = wr_array_grow(ri->blk, &ri->cap_blk, b + 1, sizeof *nb, RB_SUP, true);
    if (nb)
        ri->blk = nb;
    uint64_t *ns = nb ? wr_array_grow(ri->sup, &ri->cap_sup, sp + 1, sizeof *ns, 4, true) : NULL;
    if (!ns) {
        ri_off(ri);
        return;
    }
    ri->sup = ns;
    rblock_t *bk = &ri->blk[b];
    if (!bk->bits) {
        bk->bits = calloc(RB_WORDS, sizeof(uint64_t));
        if (!bk->bits) {
            ri_off(ri);
            return;
        }
    }
    bk->bits[(seq % RB_BITS) / 64] |= UINT64_C(1) << (seq % 64);
    bk->live++;
    ri->sup[sp]++;
    if (b >= ri->nblk)
        ri->nblk = b + 1;
    if (sp >= ri->nsup)
        ri->nsup = sp + 1;
}

/* Records an append (x is the new last node). */
static void ri_append(rankidx_t *ri, wr_zsl_node_t *x)
{
    ri_mark(ri, x, ri->next++);
}

/* Records the deletion of x (in the list until now). */
static void ri_delete(rankidx_t *ri, const wr_zsl_node_t *x)
{
    if (!ri->on)
        return;
    uint64_t seq = ri_seq(ri, x);
    size_t b = (size_t)(seq / RB_BITS - ri->first_blk);
    rblock_t *bk = &ri->blk[b];
    bk->bits[(seq % RB_BITS) / 64] &= ~(UINT64_C(1) << (seq % 64));
    bk->live--;
    ri->sup[b / RB_SUP]--;
    /* A block with nothing left that no later append can use is freed
     * (a reserved number that comes later allocates it again). */
    if (bk->live == 0 && (seq / RB_BITS + 1) * RB_BITS <= ri->next) {
        free(bk->bits);
        bk->bits = NULL;
    }
    /* Drop dead superblocks at the front (all their blocks are passed). */
    size_t drop = 0;
    while (drop < ri->nsup && ri->sup[drop] == 0 &&
           (ri->first_blk + (drop + 1) * RB_SUP) * RB_BITS <= ri_low(ri))
        drop++;
    if (drop > 0) {
        for (size_t i = 0; i < drop * RB_SUP && i < ri->nblk; i++)
            free(ri->blk[i].bits);
        size_t nb = ri->nblk > drop * RB_SUP ? ri->nblk - drop * RB_SUP : 0;
        memmove(ri->blk, ri->blk + drop * RB_SUP, nb * sizeof *ri->blk);
        memset(ri->blk + nb, 0, (ri->cap_blk - nb) * sizeof *ri->blk);
        ri->nblk = nb;
        memmove(ri->sup, ri->sup + drop, (ri->nsup - drop) * sizeof *ri->sup);
        memset(ri->sup + (ri->nsup - drop), 0, drop * sizeof *ri->sup);
        ri->nsup -= drop;
        ri->first_blk += drop * RB_SUP;
    }
}

/* Set bits of w[0 .. n-1] plus those of last & mask: the rank's bitmap
 * count. Built for any x86-64, where __builtin_popcountll is a library
 * call; the same loop compiled for the POPCNT instruction is picked once
 * when the CPU has it (every x86-64 since about 2008). */
static uint64_t popcount_sw(const uint64_t *w, size_t n, uint64_t last)
{
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++)
        r += (uint64_t)__builtin_popcountll(w[i]);
    return r + (uint64_t)__builtin_popcountll(last);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("popcnt"))) static uint64_t popcount_hw(const uint64_t *w, size_t n,
                                                              uint64_t last)
{
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++)
        r += (uint64_t)__builtin_popcountll(w[i]);
    return r + (uint64_t)__builtin_popcountll(last);
}

static uint64_t popcount_words(const uint64_t *w, size_t n, uint64_t last)
{
    static int hw = -1; /* one process, one CPU model: a benign race at worst */
    if (hw < 0) {
        __builtin_cpu_init();
        hw = __builtin_cpu_supports("popcnt") ? 1 : 0;
    }
    return hw ? popcount_hw(w, n, last) : popcount_sw(w, n, last);
}
#else
#define popcount_words popcount_sw
#endif

/* 1-based rank of x from the index (which is on). */
static uint64_t ri_rank(const rankidx_t *ri, const wr_zsl_node_t *x)
{
    uint64_t seq = ri_seq(ri, x);
    size_t b = (size_t)(seq / RB_BITS - ri->first_blk);
    size_t sp = b / RB_SUP;
    uint64_t r = 0;
    for (size_t i = 0; i < sp; i++)
        r += ri->sup[i];
    /* Blocks before b in its superblock, and bits before seq in its block:
     * each counted from the nearer end (the far side's count is the whole
     * one's minus the near side's), half the loop on average. */
    size_t b0 = sp * RB_SUP, b1 = b0 + RB_SUP;
    if (b - b0 <= RB_SUP / 2 || b1 > ri->nblk) {
        for (size_t i = b0; i < b; i++)
            r += ri->blk[i].live;
    } else {
        r += ri->sup[sp];
        for (size_t i = b; i < b1; i++)
            r -= ri->blk[i].live;
    }
    const uint64_t *w = ri->blk[b].bits;
    size_t wi = (seq % RB_BITS) / 64;
    uint64_t mask = (seq % 64) == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (seq % 64 + 1)) - 1;
    if (wi < RB_WORDS / 2)
        return r + popcount_words(w, wi, w[wi] & mask);
    return r + ri->blk[b].live - popcount_words(w + wi + 1, RB_WORDS - wi - 1, w[wi] & ~mask);
}

/* ---- list ------------------------------------------------------------ */

static int random_level(wr_zsl_t *zsl)
{
    int level = 1;
    for (;;) {
        uint64_t r = wr_rng_next(&zsl->rng);
        for (int k = 0; k < 4; k++, r >>= 16) {
            if ((r & 0xFFFF) >= ZSL_P_NUM || level >= WR_ZSL_MAXLEVEL)
                return level;
            level++;
        }
    }
}

wr_zsl_t *wr_zsl_new(uint64_t seed)
{
    wr_zsl_t *zsl = calloc(1, sizeof *zsl);
    if (!zsl)
        return NULL;
    zsl->header = calloc(1, node_size(WR_ZSL_MAXLEVEL, 0, false));
    if (!zsl->header) {
        free(zsl);
        return NULL;
    }
    zsl->header->level = WR_ZSL_MAXLEVEL;
    zsl->level = 1;
    wr_rng_seed(&zsl->rng, seed);
    zsl->next_chunk = CHUNK_MIN;
    zsl->ri.on = true;
    zsl->ri.pin = UINT64_MAX;
    return zsl;
}

void wr_zsl_free(wr_zsl_t *zsl)
{
    if (!zsl)
        return;
    chunk_t *c = zsl->chunks;
    while (c) {
        chunk_t *nx = c->next;
        free(c);
        c = nx;
    }
    ri_reset(&zsl->ri);
    free(zsl->header);
    free(zsl);
}

/* The insert; seq is UINT64_MAX for an append's number, else a reserved
 * one. */
static wr_err_t insert(wr_zsl_t *zsl, int64_t score, const char *id, size_t idlen, uint64_t seq,
                       wr_zsl_node_t **out)
{
    wr_zsl_node_t *update[WR_ZSL_MAXLEVEL];
    uint64_t rank[WR_ZSL_MAXLEVEL];

    if (idlen == 0 || idlen > WR_ZSL_ID_MAX)
        return WR_EINVAL;
    if (zsl->length >= UINT32_MAX - 1)
        return WR_ELIMIT;

    wr_zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        rank[i] = i == zsl->level - 1 ? 0 : rank[i + 1];
        while (fwd(x, i) && fwd(x, i)->score < score) {
            rank[i] += span(x, i);
            x = fwd(x, i);
        }
        update[i] = x;
    }
    if (x->next && x->next->score == score)
        return WR_EINVAL;

    int level = random_level(zsl);
    wr_zsl_node_t *n = pool_alloc(zsl, node_size(level, idlen, zsl->extra));
    if (!n)
        return WR_ENOMEM;
    if (level > zsl->level) {
        for (int i = zsl->level; i < level; i++) {
            rank[i] = 0;
            update[i] = zsl->header;
            set_span(zsl->header, i, (uint32_t)zsl->length);
        }
        zsl->level = level;
    }
    n->score = score;
    rankidx_t *ri = &zsl->ri;
    if (seq != UINT64_MAX) {
        /* a reserved number: its neighbours must sort as their numbers */
        wr_zsl_node_t *prev = update[0] == zsl->header ? NULL : update[0], *nx = update[0]->next;
        if (ri->on && seq < ri->next && seq >= ri_low(ri) && (!prev || ri_seq(ri, prev) < seq) &&
            (!nx || ri_seq(ri, nx) > seq))
            ri_mark(ri, n, seq);
        else if (ri->on)
            ri_off(ri);
    } else if (update[0]->next == NULL) {
        ri_append(ri, n);
    } else if (ri->on) {
        ri_off(ri); /* not an append: rank walks the spans from now on */
    }
    n->level = (uint8_t)(level | (zsl->extra ? LVL_EXTRA : 0));
    n->idlen = (uint8_t)idlen;
    n->aux = 0;
    n->flags = 0;
    memcpy(node_id(n), id, idlen);
    node_id(n)[idlen] = '\0';
    if (zsl->extra)
        memset(node_id(n) + idlen + 1, 0, WR_ZSL_EXTRA);
    for (int i = 0; i < level; i++) {
        set_fwd(n, i, fwd(update[i], i));
        set_fwd(update[i], i, n);
        set_span(n, i, span(update[i], i) - (uint32_t)(rank[0] - rank[i]));
        set_span(update[i], i, (uint32_t)(rank[0] - rank[i]) + 1);
    }
    for (int i = level; i < zsl->level; i++)
        set_span(update[i], i, span(update[i], i) + 1);
    zsl->length++;
    *out = n;
    return WR_OK;
}

wr_err_t wr_zsl_insert(wr_zsl_t *zsl, int64_t score, const char *id, size_t idlen,
                       wr_zsl_node_t **out)
{
    return insert(zsl, score, id, idlen, UINT64_MAX, out);
}

wr_err_t wr_zsl_insert_reserved(wr_zsl_t *zsl, int64_t score, const char *id, size_t idlen,
                                uint64_t seq, wr_zsl_node_t **out)
{
    if (seq == UINT64_MAX)
        return WR_EINVAL;
    return insert(zsl, score, id, idlen, seq, out);
}

uint64_t wr_zsl_reserve(wr_zsl_t *zsl, uint64_t n)
{
    rankidx_t *ri = &zsl->ri;
    uint64_t base = ri->next;
    if (ri->pin > base)
        ri->pin = base;
    ri->next += n;
    return base;
}

void wr_zsl_unreserve(wr_zsl_t *zsl)
{
    zsl->ri.pin = UINT64_MAX;
}

uint64_t wr_zsl_count_below(const wr_zsl_t *zsl, int64_t score)
{
    uint64_t rank = 0;
    const wr_zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (fwd(x, i) && fwd(x, i)->score < score) {
            rank += span(x, i);
            x = fwd(x, i);
        }
    }
    return rank;
}

/* Unlinks x given its predecessors at every level, and frees it. */
static void delete_node(wr_zsl_t *zsl, wr_zsl_node_t *x, wr_zsl_node_t **update)
{
    for (int i = 0; i < zsl->level; i++) {
        if (fwd(update[i], i) == x) {
            set_span(update[i], i, span(update[i], i) + span(x, i) - 1);
            set_fwd(update[i], i, fwd(x, i));
        } else {
            set_span(update[i], i, span(update[i], i) - 1);
        }
    }
    while (zsl->level > 1 && fwd(zsl->header, zsl->level - 1) == NULL)
        zsl->level--;
    zsl->length--;
    if (zsl->length == 0) {
        ri_reset(&zsl->ri); /* also turns a disabled index back on */
    } else {
        ri_delete(&zsl->ri, x);
    }
    pool_push(zsl, x, node_size(x->level & LVL_MASK, x->idlen, x->level & LVL_EXTRA));
}

void wr_zsl_delete(wr_zsl_t *zsl, wr_zsl_node_t *node)
{
    wr_zsl_node_t *update[WR_ZSL_MAXLEVEL];
    wr_zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (fwd(x, i) && fwd(x, i)->score < node->score)
            x = fwd(x, i);
        update[i] = x;
    }
    if (x->next != node)
        abort(); /* internal invariant: node is not in this list */
    delete_node(zsl, node, update);
}

uint64_t wr_zsl_rank(const wr_zsl_t *zsl, const wr_zsl_node_t *node)
{
    if (zsl->ri.on)
        return ri_rank(&zsl->ri, node);
    return wr_zsl_rank_walk(zsl, node);
}

uint64_t wr_zsl_rank_walk(const wr_zsl_t *zsl, const wr_zsl_node_t *node)
{
    uint64_t rank = 0;
    const wr_zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (fwd(x, i) && fwd(x, i)->score <= node->score) {
            rank += span(x, i);
            x = fwd(x, i);
        }
        if (x == node)
            return rank;
    }
    return 0;
}

wr_zsl_node_t *wr_zsl_by_rank(const wr_zsl_t *zsl, uint64_t rank)
{
    uint64_t traversed = 0;
    wr_zsl_node_t *x = zsl->header;
    if (rank == 0 || rank > zsl->length)
        return NULL;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (fwd(x, i) && traversed + span(x, i) <= rank) {
            traversed += span(x, i);
            x = fwd(x, i);
        }
        if (traversed == rank)
            return x;
    }
    return NULL;
}

wr_zsl_node_t *wr_zsl_first_ge(const wr_zsl_t *zsl, int64_t score)
{
    const wr_zsl_node_t *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (fwd(x, i) && fwd(x, i)->score < score)
            x = fwd(x, i);
    return x->next;
}

wr_zsl_node_t *wr_zsl_first(const wr_zsl_t *zsl)
{
    return zsl->header->next;
}

wr_zsl_node_t *wr_zsl_next(const wr_zsl_node_t *node)
{
    return node->next;
}

uint64_t wr_zsl_pop_first(wr_zsl_t *zsl, uint64_t n, wr_zsl_pop_fn fn, void *arg)
{
    wr_zsl_node_t *update[WR_ZSL_MAXLEVEL];
    uint64_t done = 0;
    for (int i = 0; i < WR_ZSL_MAXLEVEL; i++)
        update[i] = zsl->header;
    while (done < n && zsl->header->next) {
        wr_zsl_node_t *x = zsl->header->next;
        if (fn)
            fn(x, arg);
        delete_node(zsl, x, update);
        done++;
    }
    return done;
}

uint64_t wr_zsl_length(const wr_zsl_t *zsl)
{
    return zsl->length;
}

size_t wr_zsl_bytes(const wr_zsl_t *zsl)
{
    const rankidx_t *ri = &zsl->ri;
    size_t bits = 0;
    for (size_t i = 0; i < ri->nblk; i++)
        bits += ri->blk[i].bits ? RB_WORDS * sizeof(uint64_t) : 0;
    return sizeof *zsl + node_size(WR_ZSL_MAXLEVEL, 0, false) + zsl->pool_bytes +
           ri->cap_blk * sizeof *ri->blk + ri->cap_sup * sizeof *ri->sup + bits;
}

bool wr_zsl_rank_indexed(const wr_zsl_t *zsl)
{
    return zsl->ri.on;
}

int64_t wr_zsl_node_score(const wr_zsl_node_t *node)
{
    return node->score;
}

uint32_t wr_zsl_node_aux(const wr_zsl_node_t *node)
{
    return node->aux;
}

void wr_zsl_node_set_aux(wr_zsl_node_t *node, uint32_t aux)
{
    node->aux = aux;
}

uint8_t wr_zsl_node_flags(const wr_zsl_node_t *node)
{
    return node->flags;
}

void wr_zsl_node_set_flags(wr_zsl_node_t *node, uint8_t flags)
{
    node->flags = flags;
}

void wr_zsl_set_extra(wr_zsl_t *zsl, bool on)
{
    zsl->extra = on;
}

unsigned char *wr_zsl_node_extra(const wr_zsl_node_t *node)
{
    return (node->level & LVL_EXTRA) ? (unsigned char *)node_id(node) + node->idlen + 1 : NULL;
}

const char *wr_zsl_node_id(const wr_zsl_node_t *node, size_t *len)
{
    if (len)
        *len = node->idlen;
    return node_id(node);
}
