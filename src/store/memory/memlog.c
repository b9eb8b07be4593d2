/*
 * memlog.c - the embedded store's public log of one queue (memlog.h).
 *
 * Layout. The leaves are kept back to back in one growing byte array with
 * an offset per leaf; the tree is kept as tlog.h's complete subtrees, one
 * growing array of hashes per level (level l holds size >> l of them:
 * the hash at (l, i) covers leaves [i << l, (i + 1) << l)), filled by the
 * frontier's callback as each append completes them. So a proof or an old
 * root reads O(log n) stored hashes, and nothing is ever recomputed.
 * Arrays grow by doubling: an append is O(log n) amortized.
 *
 * Members. Who is in the log's line (a join leaf, no admit or leave
 * after it) is a hash from user id to the index of their join leaf:
 * the receipts read it, and memq_log.c logs an admit, away or leave only
 * of a member, so a page join that never counted (never logged) never
 * gets a leaf either.
 *
 * Hints. A poll's receipt would be a second hash lookup here (the line's
 * node was found already) and two cache misses (the table, the record):
 * about 0.3 us a poll. So memq keeps a copy of the receipt in the line
 * node itself (memq_log.c, wr_memq_log_receipt_at) with a hint from here:
 * (generation, slot), the slot's generation moving on when its member is
 * forgotten or recorded at another leaf. A live hint proves the copy is
 * still the member's receipt; checking it reads one 4-byte generation
 * from an array of them (200 KB at 50,000 members).
 *
 * Snapshot form (wr_memlog_write; all integers little-endian, in
 * mem_snapshot.c's file): u8 name_len, name, 32 bytes salt, i64 last_at, i64 last_t,
 * u8 committed, 32 bytes seed, u8 beacon, u16 url_len, url, u64 round,
 * u8 beacon_done, u8 randomness_len, randomness, u16 error_len, error,
 * u16 cp_len, cp, u64 cp_size, 32 bytes its root, u64 leaves, per leaf u16 len and bytes,
 * u64 members, per member u8 id_len, id, u64 index. On load the leaves
 * are hashed again: the tree is what the stored bytes give, so a leaf
 * changed on disk shows as a root that no longer matches the checkpoint.
 */
#include "store/memory/memlog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hex.h"

/* A member of the log's line: their join leaf's index, and their
 * receipt read from it once (log id and leaf hash), so that a receipt by
 * id is this one lookup (no leaf read, no parse). */
typedef struct memlog_person {
    uint64_t index;
    uint8_t u[WR_LOGLEAF_U_BYTES];
    uint8_t leaf_hash[WR_TLOG_HASH];
    bool has_receipt; /* the leaf at index is a join whose u was read */
    uint8_t len;
    uint32_t slot; /* its hint slot + 1 (0: none yet) */
    char id[];
} memlog_person_t;

/* p's receipt from the join leaf at p->index. */
static void person_receipt(const wr_memlog_t *l, memlog_person_t *p)
{
    size_t len = 0;
    char u[WR_LOGLEAF_U_HEX + 1];
    const char *leaf = wr_memlog_leaf(l, p->index, &len);
    p->has_receipt =
        leaf && wr_logleaf_join_u(leaf, len, u) && wr_logleaf_u_bytes(u, p->u) == WR_OK;
    if (p->has_receipt)
        memcpy(p->leaf_hash, l->lv[0][p->index], WR_TLOG_HASH);
}

static const char *person_key(const void *item, size_t *len)
{
    const memlog_person_t *p = item;
    *len = p->len;
    return p->id;
}

wr_memlog_t *wr_memlog_new(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > WR_QUEUE_NAME_MAX)
        return NULL;
    wr_memlog_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    memcpy(l->name, name, n);
    l->h = wr_crypto_sha256_new();
    l->people = wr_idhash_new(person_key);
    l->off = wr_array_grow(NULL, &l->off_cap, 64, sizeof *l->off, 64, false);
    if (!l->h || !l->people || !l->off || wr_crypto_random(l->salt, sizeof l->salt) != WR_OK) {
        wr_memlog_free(l);
        return NULL;
    }
    l->off[0] = 0;
    wr_tlog_frontier_init(&l->fr);
    return l;
}

/* ---- hints -------------------------------------------------------------- */

/* Frees p's hint slot: its generation moves on, so every hint to it is
 * stale from now on. */
static void hint_drop(wr_memlog_t *l, memlog_person_t *p)
{
    if (!p->slot)
        return;
    uint32_t i = p->slot - 1;
    if (++l->hgen[i] == 0)
        l->hgen[i] = 1; /* 2^32 reuses: generation 0 would read as no hint */
    size_t cap = l->hfree_cap;
    uint32_t *f = wr_array_grow(l->hfree, &cap, l->n_hfree + 1, sizeof *f, 16, false);
    if (f) { /* else the slot is leaked: never reused, never wrong */
        l->hfree = f;
        l->hfree_cap = cap;
        l->hfree[l->n_hfree++] = i;
    }
    p->slot = 0;
}

uint64_t wr_memlog_hint(wr_memlog_t *l, const char *user, size_t ulen)
{
    memlog_person_t *p = wr_idhash_get(l->people, user, ulen);
    if (!p)
        return 0;
    if (!p->slot) {
        uint32_t i;
        if (l->n_hfree > 0) {
            i = l->hfree[--l->n_hfree];
        } else {
            if (l->n_hgen >= UINT32_MAX - 1)
                return 0;
            size_t cap = l->hgen_cap;
            uint32_t *g = wr_array_grow(l->hgen, &cap, l->n_hgen + 1, sizeof *g, 64, false);
            if (!g)
                return 0;
            l->hgen = g;
            l->hgen_cap = cap;
            i = (uint32_t)l->n_hgen++;
            l->hgen[i] = 1;
        }
        p->slot = i + 1;
    }
    return ((uint64_t)l->hgen[p->slot - 1] << 32) | (p->slot - 1);
}

bool wr_memlog_hint_live(const wr_memlog_t *l, uint64_t hint)
{
    uint32_t i = (uint32_t)hint, gen = (uint32_t)(hint >> 32);
    return gen != 0 && i < l->n_hgen && l->hgen[i] == gen;
}

static void free_person(void *item, void *arg)
{
    (void)arg;
    free(item);
}

void wr_memlog_free(wr_memlog_t *l)
{
    if (!l)
        return;
    if (l->people) {
        wr_idhash_foreach(l->people, free_person, NULL);
        wr_idhash_free(l->people);
    }
    for (unsigned i = 0; i < WR_TLOG_LEVELS; i++)
        free(l->lv[i]);
    wr_crypto_sha256_free(l->h);
    wr_crypto_hmac_free(l->mac);
    free(l->bytes);
    free(l->off);
    free(l->hgen);
    free(l->hfree);
    wr_crypto_wipe(l->seed, sizeof l->seed);
    wr_crypto_wipe(l->salt, sizeof l->salt);
    free(l);
}

/* Grows *p (elements of size sz, *cap of them) to hold need. */
static bool grow(void **p, size_t *cap, uint64_t need, size_t sz)
{
    void *q = need <= SIZE_MAX ? wr_array_grow(*p, cap, (size_t)need, sz, 16, false) : NULL;
    if (q)
        *p = q;
    return q != NULL;
}

typedef struct {
    wr_memlog_t *l;
    bool failed;
} node_ctx_t;

/* The frontier's callback: keeps the complete subtree (level, index),
 * which is always the next one of its level. */
static void keep_node(void *ctx, unsigned level, uint64_t index, const uint8_t hash[WR_TLOG_HASH])
{
    node_ctx_t *c = ctx;
    wr_memlog_t *l = c->l;
    if (!grow((void **)&l->lv[level], &l->lv_cap[level], index + 1, WR_TLOG_HASH)) {
        c->failed = true;
        return;
    }
    memcpy(l->lv[level][index], hash, WR_TLOG_HASH);
}

wr_err_t wr_memlog_append_bytes(wr_memlog_t *l, const char *leaf, size_t len, int64_t at)
{
    if (!l || !leaf || len > WR_LOGLEAF_MAX)
        return WR_EINVAL;
    uint64_t n = l->fr.size;
    if (n + 1 >= WR_MEMLOG_LEAVES)
        return WR_ELIMIT;
    /* room first for everything, so a failure changes nothing */
    void *bytes = l->bytes;
    if (!grow(&bytes, &l->bytes_cap, l->bytes_len + len + 1, 1))
        return WR_ENOMEM;
    l->bytes = bytes;
    void *off = l->off;
    if (!grow(&off, &l->off_cap, n + 2, sizeof *l->off))
        return WR_ENOMEM;
    l->off = off;
    for (unsigned lv = 0; lv < WR_TLOG_LEVELS && ((n + 1) >> lv) > 0; lv++)
        if (!grow((void **)&l->lv[lv], &l->lv_cap[lv], ((n + 1) >> lv) + 1, WR_TLOG_HASH))
            return WR_ENOMEM;
    uint8_t lh[WR_TLOG_HASH];
    wr_err_t err = wr_tlog_leaf_hash(l->h, leaf, len, lh);
    if (err != WR_OK)
        return err;
    node_ctx_t c = {l, false};
    if ((err = wr_tlog_frontier_append(l->h, &l->fr, lh, keep_node, &c)) != WR_OK)
        return err;
    if (c.failed)
        return WR_ENOMEM; /* cannot happen: room was made */
    memcpy(l->bytes + l->bytes_len, leaf, len);
    l->bytes_len += len;
    l->off[n + 1] = l->bytes_len;
    if (at > l->last_at)
        l->last_at = at;
    return WR_OK;
}

wr_err_t wr_memlog_append(wr_memlog_t *l, wr_logleaf_t *ev, uint64_t *index)
{
    char buf[WR_LOGLEAF_MAX];
    size_t len;
    if (ev->at < l->last_at)
        ev->at = l->last_at;
    wr_err_t err = wr_logleaf_encode(ev, buf, sizeof buf, &len);
    if (err != WR_OK)
        return err;
    uint64_t at = l->fr.size;
    if ((err = wr_memlog_append_bytes(l, buf, len, ev->at)) != WR_OK)
        return err;
    if (index)
        *index = at;
    return WR_OK;
}

const char *wr_memlog_leaf(const wr_memlog_t *l, uint64_t i, size_t *len)
{
    if (i >= l->fr.size)
        return NULL;
    *len = (size_t)(l->off[i + 1] - l->off[i]);
    return l->bytes + l->off[i];
}

static wr_err_t read_node(void *ctx, unsigned level, uint64_t index, uint8_t out[WR_TLOG_HASH])
{
    const wr_memlog_t *l = ctx;
    if (level >= WR_TLOG_LEVELS || index >= (l->fr.size >> level))
        return WR_ENOTFOUND;
    memcpy(out, l->lv[level][index], WR_TLOG_HASH);
    return WR_OK;
}

wr_tlog_reader_t wr_memlog_reader(wr_memlog_t *l)
{
    wr_tlog_reader_t r = {read_node, l};
    return r;
}

wr_err_t wr_memlog_root(wr_memlog_t *l, uint8_t out[WR_TLOG_HASH])
{
    return wr_tlog_frontier_root(l->h, &l->fr, out);
}

wr_err_t wr_memlog_u(wr_memlog_t *l, const char *user, size_t ulen, char u[WR_LOGLEAF_U_HEX + 1])
{
    uint8_t mac[WR_CRYPTO_MAC_LEN];
    if (!user || ulen == 0)
        return WR_EINVAL;
    /* keyed once (the pads hashed once): a join pays one MAC, not a setup */
    if (!l->mac && !(l->mac = wr_crypto_hmac_new(l->salt, sizeof l->salt)))
        return WR_ENOMEM;
    wr_err_t err = wr_crypto_hmac_mac(l->mac, user, ulen, mac);
    if (err == WR_OK)
        wr_hex_encode(mac, WR_LOGLEAF_U_BYTES, u);
    wr_crypto_wipe(mac, sizeof mac);
    return err;
}

bool wr_memlog_receipt(const wr_memlog_t *l, const char *user, size_t ulen,
                       char u[WR_LOGLEAF_U_HEX + 1], uint64_t *index,
                       uint8_t leaf_hash[WR_TLOG_HASH])
{
    const memlog_person_t *p = wr_idhash_get(l->people, user, ulen);
    if (!p || !p->has_receipt)
        return false;
    *index = p->index;
    wr_hex_encode(p->u, WR_LOGLEAF_U_BYTES, u);
    memcpy(leaf_hash, p->leaf_hash, WR_TLOG_HASH);
    return true;
}

bool wr_memlog_member(const wr_memlog_t *l, const char *user, size_t ulen, uint64_t *index)
{
    const memlog_person_t *p = wr_idhash_get(l->people, user, ulen);
    if (p && index)
        *index = p->index;
    return p != NULL;
}

wr_err_t wr_memlog_member_add(wr_memlog_t *l, const char *user, size_t ulen, uint64_t index)
{
    if (ulen == 0 || ulen > 255)
        return WR_EINVAL;
    memlog_person_t *p = wr_idhash_get(l->people, user, ulen);
    if (p) {
        if (p->index != index)
            hint_drop(l, p); /* another receipt: the copies of the old one go stale */
        p->index = index;
        person_receipt(l, p);
        return WR_OK;
    }
    p = malloc(sizeof *p + ulen + 1);
    if (!p)
        return WR_ENOMEM;
    p->index = index;
    p->len = (uint8_t)ulen;
    p->slot = 0;
    memcpy(p->id, user, ulen);
    p->id[ulen] = '\0';
    person_receipt(l, p);
    wr_err_t err = wr_idhash_put(l->people, p);
    if (err != WR_OK)
        free(p);
    return err;
}

bool wr_memlog_member_del(wr_memlog_t *l, const char *user, size_t ulen)
{
    memlog_person_t *p = wr_idhash_del(l->people, user, ulen);
    if (p)
        hint_drop(l, p);
    free(p);
    return p != NULL;
}

/* ---- the snapshot ------------------------------------------------------- */

typedef struct {
    void (*put)(void *ctx, const void *p, size_t n);
    void *ctx;
} writer_t;

static void put_u64(const writer_t *w, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    w->put(w->ctx, b, 8);
}

static void put_u16(const writer_t *w, size_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    w->put(w->ctx, b, 2);
}

static void put_u8(const writer_t *w, unsigned v)
{
    uint8_t b = (uint8_t)v;
    w->put(w->ctx, &b, 1);
}

static void put_member(void *item, void *arg)
{
    const memlog_person_t *p = item;
    const writer_t *w = arg;
    put_u8(w, p->len);
    w->put(w->ctx, p->id, p->len);
    put_u64(w, p->index);
}

void wr_memlog_write(const wr_memlog_t *l, void (*put)(void *ctx, const void *p, size_t n),
                     void *ctx)
{
    writer_t w = {put, ctx};
    size_t nl = strlen(l->name), ul = strlen(l->beacon_url);
    put_u8(&w, (unsigned)nl);
    put(ctx, l->name, nl);
    put(ctx, l->salt, sizeof l->salt);
    put_u64(&w, (uint64_t)l->last_at);
    put_u64(&w, (uint64_t)l->last_t);
    put_u8(&w, l->committed);
    put(ctx, l->seed, sizeof l->seed);
    put_u8(&w, l->beacon);
    put_u16(&w, ul);
    put(ctx, l->beacon_url, ul);
    put_u64(&w, l->round);
    size_t el = strlen(l->beacon_error);
    put_u8(&w, l->beacon_done);
    put_u8(&w, (unsigned)l->randomness_len);
    put(ctx, l->randomness, l->randomness_len);
    put_u16(&w, el);
    put(ctx, l->beacon_error, el);
    put_u16(&w, l->cp_len);
    put(ctx, l->cp, l->cp_len);
    put_u64(&w, l->cp_size);
    put(ctx, l->cp_root, sizeof l->cp_root);
    put_u64(&w, l->fr.size);
    for (uint64_t i = 0; i < l->fr.size; i++) {
        size_t len = (size_t)(l->off[i + 1] - l->off[i]);
        put_u16(&w, len);
        put(ctx, l->bytes + l->off[i], len);
    }
    put_u64(&w, wr_idhash_count(l->people));
    wr_idhash_foreach(l->people, put_member, &w);
}

typedef struct {
    bool (*get)(void *ctx, void *p, size_t n);
    void *ctx;
    bool failed;
} reader_t;

static void get_bytes(reader_t *r, void *p, size_t n)
{
    if (!r->failed && !r->get(r->ctx, p, n))
        r->failed = true;
    if (r->failed)
        memset(p, 0, n);
}

static uint64_t get_u64(reader_t *r)
{
    uint8_t b[8];
    get_bytes(r, b, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static size_t get_u16(reader_t *r)
{
    uint8_t b[2];
    get_bytes(r, b, 2);
    return (size_t)b[0] | ((size_t)b[1] << 8);
}

static unsigned get_u8(reader_t *r)
{
    uint8_t b;
    get_bytes(r, &b, 1);
    return b;
}

wr_memlog_t *wr_memlog_read(bool (*get)(void *ctx, void *p, size_t n), void *ctx, const char **what)
{
    reader_t r = {get, ctx, false};
    char name[WR_QUEUE_NAME_MAX + 1] = "";
    unsigned nl = get_u8(&r);
    if (nl == 0 || nl > WR_QUEUE_NAME_MAX) {
        *what = "bad log name";
        return NULL;
    }
    get_bytes(&r, name, nl);
    name[nl] = '\0';
    wr_memlog_t *l = r.failed ? NULL : wr_memlog_new(name);
    if (!l) {
        *what = r.failed ? "truncated log" : "out of memory";
        return NULL;
    }
    get_bytes(&r, l->salt, sizeof l->salt);
    l->last_at = (int64_t)get_u64(&r);
    l->last_t = (int64_t)get_u64(&r);
    l->committed = get_u8(&r) != 0;
    get_bytes(&r, l->seed, sizeof l->seed);
    l->beacon = get_u8(&r) != 0;
    size_t ul = get_u16(&r);
    if (ul > WR_LOGLEAF_URL_MAX)
        goto bad;
    get_bytes(&r, l->beacon_url, ul);
    l->round = get_u64(&r);
    l->beacon_done = get_u8(&r) != 0;
    l->randomness_len = get_u8(&r);
    if (l->randomness_len > sizeof l->randomness)
        goto bad;
    get_bytes(&r, l->randomness, l->randomness_len);
    size_t el = get_u16(&r);
    if (el >= sizeof l->beacon_error)
        goto bad;
    get_bytes(&r, l->beacon_error, el);
    l->cp_len = get_u16(&r);
    if (l->cp_len >= sizeof l->cp)
        goto bad;
    get_bytes(&r, l->cp, l->cp_len);
    l->cp_size = get_u64(&r);
    get_bytes(&r, l->cp_root, sizeof l->cp_root);
    uint64_t n = get_u64(&r);
    if (n >= WR_MEMLOG_LEAVES || l->cp_size > UINT64_MAX / 2)
        goto bad;
    char leaf[WR_LOGLEAF_MAX];
    for (uint64_t i = 0; i < n && !r.failed; i++) {
        size_t len = get_u16(&r);
        if (len > WR_LOGLEAF_MAX)
            goto bad;
        get_bytes(&r, leaf, len);
        if (!r.failed && wr_memlog_append_bytes(l, leaf, len, 0) != WR_OK)
            goto bad;
    }
    uint64_t members = get_u64(&r);
    if (members > n)
        goto bad;
    for (uint64_t i = 0; i < members && !r.failed; i++) {
        char id[256];
        size_t idl = get_u8(&r);
        get_bytes(&r, id, idl);
        uint64_t index = get_u64(&r);
        if (idl == 0 || index >= n || (!r.failed && wr_memlog_member_add(l, id, idl, index)))
            goto bad;
    }
    if (r.failed)
        goto bad;
    return l;
bad:
    *what = r.failed ? "truncated log" : "bad log";
    wr_memlog_free(l);
    return NULL;
}
