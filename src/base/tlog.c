/*
 * tlog.c - the RFC 9162 Merkle tree (tlog.h): frontier, proofs through a
 * reader of stored hashes, proof verification.
 *
 * The one idea under all of it: the hash of leaves [lo, hi), where lo is a
 * multiple of the power of two at or above hi - lo (every range a proof or
 * a root asks for is one), is the right fold of the complete subtrees that
 * the binary digits of hi - lo cut it into, largest first: MTH(D[k:n]) for
 * k the largest power of two below n splits exactly there, recursively.
 * So any such range costs one stored read per set bit of its length
 * (range_hash), and the proofs walk the recursion of RFC 9162 2.1.3.1 and
 * 2.1.4.1 top down, collecting one range per level, then reverse the list
 * (the RFC lists the deepest first).
 *
 * Verification follows RFC 9162 2.1.3.2 and 2.1.4.2 step by step, with the
 * same names (fn, sn, fr, sr); it never trusts a length it was given: a
 * proof longer or shorter than the tree's shape fails.
 */
#include "base/tlog.h"

#include <string.h>

static const uint8_t EMPTY_ROOT[WR_TLOG_HASH] = {
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
};

void wr_tlog_empty_root(uint8_t out[WR_TLOG_HASH])
{
    memcpy(out, EMPTY_ROOT, WR_TLOG_HASH);
}

wr_err_t wr_tlog_leaf_hash(wr_crypto_sha256_t *h, const void *leaf, size_t len,
                           uint8_t out[WR_TLOG_HASH])
{
    static const uint8_t prefix = 0x00;
    if (!h || (!leaf && len > 0) || !out)
        return WR_EINVAL;
    wr_err_t err = wr_crypto_sha256_reset(h);
    if (err == WR_OK)
        err = wr_crypto_sha256_update(h, &prefix, 1);
    if (err == WR_OK && len > 0)
        err = wr_crypto_sha256_update(h, leaf, len);
    if (err == WR_OK)
        err = wr_crypto_sha256_final(h, out);
    return err;
}

wr_err_t wr_tlog_node_hash(wr_crypto_sha256_t *h, const uint8_t left[WR_TLOG_HASH],
                           const uint8_t right[WR_TLOG_HASH], uint8_t out[WR_TLOG_HASH])
{
    uint8_t buf[1 + 2 * WR_TLOG_HASH];
    if (!h || !left || !right || !out)
        return WR_EINVAL;
    buf[0] = 0x01;
    memcpy(buf + 1, left, WR_TLOG_HASH);
    memcpy(buf + 1 + WR_TLOG_HASH, right, WR_TLOG_HASH);
    return wr_crypto_sha256_digest(h, buf, sizeof buf, out);
}

/* ---------- frontier */

void wr_tlog_frontier_init(wr_tlog_frontier_t *f)
{
    memset(f, 0, sizeof(*f));
}

wr_err_t wr_tlog_frontier_append(wr_crypto_sha256_t *h, wr_tlog_frontier_t *f,
                                 const uint8_t leaf_hash[WR_TLOG_HASH], wr_tlog_node_fn on_node,
                                 void *ctx)
{
    if (!h || !f || !leaf_hash)
        return WR_EINVAL;
    if (f->size == UINT64_MAX)
        return WR_ELIMIT;
    uint8_t cur[WR_TLOG_HASH];
    memcpy(cur, leaf_hash, WR_TLOG_HASH);
    uint64_t index = f->size; /* of cur at its level */
    unsigned level = 0;
    if (on_node)
        on_node(ctx, 0, index, cur);
    /* each set low bit of size is a complete subtree cur completes */
    while (f->size >> level & 1) {
        wr_err_t err = wr_tlog_node_hash(h, f->hash[level], cur, cur);
        if (err != WR_OK)
            return err;
        level++;
        index >>= 1;
        if (on_node)
            on_node(ctx, level, index, cur);
    }
    memcpy(f->hash[level], cur, WR_TLOG_HASH);
    f->size++;
    return WR_OK;
}

wr_err_t wr_tlog_frontier_root(wr_crypto_sha256_t *h, const wr_tlog_frontier_t *f,
                               uint8_t out[WR_TLOG_HASH])
{
    if (!h || !f || !out)
        return WR_EINVAL;
    if (f->size == 0) {
        wr_tlog_empty_root(out);
        return WR_OK;
    }
    /* right fold: the smallest subtree is the rightmost */
    uint8_t acc[WR_TLOG_HASH];
    bool have = false;
    for (unsigned l = 0; l < WR_TLOG_LEVELS; l++) {
        if (!(f->size >> l & 1))
            continue;
        if (!have) {
            memcpy(acc, f->hash[l], WR_TLOG_HASH);
            have = true;
            continue;
        }
        wr_err_t err = wr_tlog_node_hash(h, f->hash[l], acc, acc);
        if (err != WR_OK)
            return err;
    }
    memcpy(out, acc, WR_TLOG_HASH);
    return WR_OK;
}

wr_err_t wr_tlog_frontier_load(const wr_tlog_reader_t *r, uint64_t size, wr_tlog_frontier_t *f)
{
    if (!r || !r->read || !f)
        return WR_EINVAL;
    wr_tlog_frontier_init(f);
    for (unsigned l = 0; l < WR_TLOG_LEVELS; l++) {
        if (!(size >> l & 1))
            continue;
        wr_err_t err = r->read(r->ctx, l, (size >> l) - 1, f->hash[l]);
        if (err != WR_OK)
            return err;
    }
    f->size = size;
    return WR_OK;
}

/* ---------- proofs */

/* The largest power of two strictly below n (n >= 2). Doubles while 2k
 * <= n - 1, written so that it never computes 2^64 (which wraps to 0 and
 * would loop for ever on a size above 2^63). */
static uint64_t split_of(uint64_t n)
{
    uint64_t k = 1;
    while (k <= (n - 1) / 2)
        k <<= 1;
    return k;
}

/* MTH(D[lo:hi]) for lo a multiple of the power of two at or above hi - lo
 * (hi > lo): the complete subtrees of the set bits of hi - lo, largest
 * (leftmost) first, folded from the right. */
static wr_err_t range_hash(wr_crypto_sha256_t *h, const wr_tlog_reader_t *r, uint64_t lo,
                           uint64_t hi, uint8_t out[WR_TLOG_HASH])
{
    uint8_t parts[WR_TLOG_LEVELS][WR_TLOG_HASH];
    size_t n = 0;
    uint64_t len = hi - lo, at = lo;
    for (int l = WR_TLOG_LEVELS - 1; l >= 0; l--) {
        if (!(len >> l & 1))
            continue;
        wr_err_t err = r->read(r->ctx, (unsigned)l, at >> l, parts[n++]);
        if (err != WR_OK)
            return err;
        at += (uint64_t)1 << l;
    }
    for (size_t i = n - 1; i > 0; i--) {
        wr_err_t err = wr_tlog_node_hash(h, parts[i - 1], parts[i], parts[i - 1]);
        if (err != WR_OK)
            return err;
    }
    memcpy(out, parts[0], WR_TLOG_HASH);
    return WR_OK;
}

wr_err_t wr_tlog_root_at(wr_crypto_sha256_t *h, const wr_tlog_reader_t *r, uint64_t size,
                         uint8_t out[WR_TLOG_HASH])
{
    if (!h || !r || !r->read || !out)
        return WR_EINVAL;
    if (size == 0) {
        wr_tlog_empty_root(out);
        return WR_OK;
    }
    return range_hash(h, r, 0, size, out);
}

/* Reverses the n hashes of proof in place. */
static void reverse(uint8_t (*proof)[WR_TLOG_HASH], size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        uint8_t t[WR_TLOG_HASH];
        memcpy(t, proof[i], WR_TLOG_HASH);
        memcpy(proof[i], proof[n - 1 - i], WR_TLOG_HASH);
        memcpy(proof[n - 1 - i], t, WR_TLOG_HASH);
    }
}

wr_err_t wr_tlog_inclusion_proof(wr_crypto_sha256_t *h, const wr_tlog_reader_t *r, uint64_t index,
                                 uint64_t size, uint8_t proof[WR_TLOG_PROOF_MAX][WR_TLOG_HASH],
                                 size_t *n)
{
    if (!h || !r || !r->read || !proof || !n || index >= size)
        return WR_EINVAL;
    uint64_t lo = 0, hi = size;
    size_t k = 0;
    /* PATH(m, D[lo:hi]): the sibling range of each level, top down */
    while (hi - lo > 1) {
        uint64_t split = split_of(hi - lo);
        wr_err_t err;
        if (index - lo < split) {
            err = range_hash(h, r, lo + split, hi, proof[k++]);
            hi = lo + split;
        } else {
            err = range_hash(h, r, lo, lo + split, proof[k++]);
            lo += split;
        }
        if (err != WR_OK)
            return err;
    }
    reverse(proof, k);
    *n = k;
    return WR_OK;
}

wr_err_t wr_tlog_consistency_proof(wr_crypto_sha256_t *h, const wr_tlog_reader_t *r, uint64_t m,
                                   uint64_t n, uint8_t proof[WR_TLOG_PROOF_MAX][WR_TLOG_HASH],
                                   size_t *len)
{
    if (!h || !r || !r->read || !proof || !len || m == 0 || m > n)
        return WR_EINVAL;
    uint64_t lo = 0, hi = n, rel = m; /* SUBPROOF(rel, D[lo:hi], b) */
    bool b = true;
    size_t k = 0;
    for (;;) {
        wr_err_t err = WR_OK;
        if (rel == hi - lo) {
            if (!b)
                err = range_hash(h, r, lo, hi, proof[k++]);
            if (err != WR_OK)
                return err;
            break;
        }
        uint64_t split = split_of(hi - lo);
        if (rel <= split) {
            err = range_hash(h, r, lo + split, hi, proof[k++]);
            hi = lo + split;
        } else {
            err = range_hash(h, r, lo, lo + split, proof[k++]);
            lo += split;
            rel -= split;
            b = false;
        }
        if (err != WR_OK)
            return err;
    }
    reverse(proof, k);
    *len = k;
    return WR_OK;
}

/* ---------- verification */

bool wr_tlog_verify_inclusion(wr_crypto_sha256_t *h, uint64_t index, uint64_t size,
                              const uint8_t leaf_hash[WR_TLOG_HASH],
                              const uint8_t (*proof)[WR_TLOG_HASH], size_t n,
                              const uint8_t root[WR_TLOG_HASH])
{
    if (!h || !leaf_hash || !root || (!proof && n > 0) || index >= size)
        return false;
    uint64_t fn = index, sn = size - 1;
    uint8_t rr[WR_TLOG_HASH];
    memcpy(rr, leaf_hash, WR_TLOG_HASH);
    for (size_t i = 0; i < n; i++) {
        if (sn == 0)
            return false;
        if ((fn & 1) || fn == sn) {
            if (wr_tlog_node_hash(h, proof[i], rr, rr) != WR_OK)
                return false;
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else if (wr_tlog_node_hash(h, rr, proof[i], rr) != WR_OK) {
            return false;
        }
        fn >>= 1;
        sn >>= 1;
    }
    return sn == 0 && memcmp(rr, root, WR_TLOG_HASH) == 0;
}

bool wr_tlog_verify_consistency(wr_crypto_sha256_t *h, uint64_t m, uint64_t n,
                                const uint8_t root_m[WR_TLOG_HASH],
                                const uint8_t root_n[WR_TLOG_HASH],
                                const uint8_t (*proof)[WR_TLOG_HASH], size_t len)
{
    if (!h || !root_m || !root_n || (!proof && len > 0) || m > n)
        return false;
    if (m == 0)
        return len == 0 && memcmp(root_m, EMPTY_ROOT, WR_TLOG_HASH) == 0;
    if (m == n)
        return len == 0 && memcmp(root_m, root_n, WR_TLOG_HASH) == 0;
    if (len == 0)
        return false;
    /* a first size that is a power of two: its root is the path's start */
    const uint8_t *first = (m & (m - 1)) == 0 ? root_m : proof[0];
    size_t i = (m & (m - 1)) == 0 ? 0 : 1;
    uint64_t fn = m - 1, sn = n - 1;
    while (fn & 1) {
        fn >>= 1;
        sn >>= 1;
    }
    uint8_t fr[WR_TLOG_HASH], sr[WR_TLOG_HASH];
    memcpy(fr, first, WR_TLOG_HASH);
    memcpy(sr, first, WR_TLOG_HASH);
    for (; i < len; i++) {
        const uint8_t *c = proof[i];
        if (sn == 0)
            return false;
        if ((fn & 1) || fn == sn) {
            if (wr_tlog_node_hash(h, c, fr, fr) != WR_OK ||
                wr_tlog_node_hash(h, c, sr, sr) != WR_OK)
                return false;
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else if (wr_tlog_node_hash(h, sr, c, sr) != WR_OK) {
            return false;
        }
        fn >>= 1;
        sn >>= 1;
    }
    return sn == 0 && memcmp(fr, root_m, WR_TLOG_HASH) == 0 &&
           memcmp(sr, root_n, WR_TLOG_HASH) == 0;
}
