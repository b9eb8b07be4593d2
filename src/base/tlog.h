/*
 * tlog.h - the Merkle tree of a transparency log, RFC 9162 section 2.1
 * (the same tree as RFC 6962): leaf hash SHA-256(0x00 || leaf), node hash
 * SHA-256(0x01 || left || right), the split at the largest power of two
 * below the size; the root of the empty tree is SHA-256 of nothing.
 *
 * Three parts, each usable alone:
 * - the right frontier (wr_tlog_frontier_t): the hashes of the complete
 *   subtrees a tree of `size` leaves ends with (one per set bit of size).
 *   Appending a leaf costs at most 64 node hashes (O(log n)), the root at
 *   most 63 more, nothing is ever recomputed; each complete subtree the
 *   append finishes is handed to a callback, so a store can keep it;
 * - proofs (inclusion, RFC 9162 2.1.3.1; consistency, 2.1.4.1) built from
 *   stored hashes through an abstract reader: the hash of the complete
 *   subtree at (level L, index I), which covers leaves [I * 2^L,
 *   (I + 1) * 2^L) (level 0: the leaf hashes). The C2SP tlog-tiles layout
 *   names the same (level, index) pairs. A proof costs O(log n) reads;
 * - verification of both proofs (2.1.3.2, 2.1.4.2), from hashes alone.
 *
 * Hashes are 32 raw bytes. Every function takes a SHA-256 context
 * (wr_crypto_sha256_new) that it uses and leaves reusable: one context per
 * thread, reused across calls, keeps 1,000,000 appends under a second or
 * two. No allocation; pure (the reader is the caller's).
 */
#ifndef WR_TLOG_H
#define WR_TLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"

#define WR_TLOG_HASH      32  /* bytes of a hash */
#define WR_TLOG_LEVELS    64  /* a size is a uint64_t: at most 64 complete subtrees */
#define WR_TLOG_PROOF_MAX 128 /* hashes a proof may hold (inclusion <= 64, consistency <= 65) */

/* The hash of a leaf's bytes (len; may be 0): SHA-256(0x00 || leaf). */
wr_err_t wr_tlog_leaf_hash(wr_crypto_sha256_t *h, const void *leaf, size_t len,
                           uint8_t out[WR_TLOG_HASH]);

/* The hash of an interior node: SHA-256(0x01 || left || right). out may be
 * left or right. */
wr_err_t wr_tlog_node_hash(wr_crypto_sha256_t *h, const uint8_t left[WR_TLOG_HASH],
                           const uint8_t right[WR_TLOG_HASH], uint8_t out[WR_TLOG_HASH]);

/* The root of the empty tree: SHA-256("") (e3b0c442...). */
void wr_tlog_empty_root(uint8_t out[WR_TLOG_HASH]);

/* ---------- the right frontier */

typedef struct wr_tlog_frontier {
    uint64_t size; /* leaves in the tree */
    /* hash[l], when bit l of size is set: the complete subtree of 2^l
     * leaves that starts at leaf (size >> (l + 1)) << (l + 1), i.e. at
     * level l, index (size >> l) - 1; the others are meaningless. */
    uint8_t hash[WR_TLOG_LEVELS][WR_TLOG_HASH];
} wr_tlog_frontier_t;

/* Called for every complete subtree an append finishes, bottom up: the new
 * leaf (level 0) first, then each node it completes: the subtree at
 * (level, index) now has this hash and never changes again. */
typedef void (*wr_tlog_node_fn)(void *ctx, unsigned level, uint64_t index,
                                const uint8_t hash[WR_TLOG_HASH]);

/* An empty tree. */
void wr_tlog_frontier_init(wr_tlog_frontier_t *f);

/* Appends a leaf by its hash (wr_tlog_leaf_hash); on_node (may be NULL)
 * sees the new complete subtrees. WR_OK, WR_ELIMIT (2^64 - 1 leaves) or
 * WR_EIO (OpenSSL). */
wr_err_t wr_tlog_frontier_append(wr_crypto_sha256_t *h, wr_tlog_frontier_t *f,
                                 const uint8_t leaf_hash[WR_TLOG_HASH], wr_tlog_node_fn on_node,
                                 void *ctx);

/* The root of the tree (the empty root for size 0). */
wr_err_t wr_tlog_frontier_root(wr_crypto_sha256_t *h, const wr_tlog_frontier_t *f,
                               uint8_t out[WR_TLOG_HASH]);

/* ---------- stored hashes: the reader, proofs */

/* Writes the hash of the complete subtree at (level, index) into out:
 * leaves [index << level, (index + 1) << level), all appended already.
 * Returns WR_OK, or an error that the caller of the proof gets back
 * (WR_ENOTFOUND for a hash the store lacks, WR_EIO, ...). */
typedef wr_err_t (*wr_tlog_read_fn)(void *ctx, unsigned level, uint64_t index,
                                    uint8_t out[WR_TLOG_HASH]);

typedef struct wr_tlog_reader {
    wr_tlog_read_fn read;
    void *ctx;
} wr_tlog_reader_t;

/* The frontier of the tree's first `size` leaves, from stored hashes (one
 * read per set bit of size): where an append goes on after a restart. */
wr_err_t wr_tlog_frontier_load(const wr_tlog_reader_t *r, uint64_t size, wr_tlog_frontier_t *f);

/* The root of the tree's first `size` leaves (any size up to what is
 * stored: the root of an older checkpoint), from at most 64 reads. */
wr_err_t wr_tlog_root_at(wr_crypto_sha256_t *h, const wr_tlog_reader_t *r, uint64_t size,
                         uint8_t out[WR_TLOG_HASH]);

/*
 * The inclusion proof of leaf `index` in the tree of `size` leaves (RFC
 * 9162 2.1.3.1, the deepest sibling first) into proof, its length in *n
 * (0 for a tree of one leaf). WR_OK, WR_EINVAL (index >= size), or the
 * reader's error.
 */
wr_err_t wr_tlog_inclusion_proof(wr_crypto_sha256_t *h, const wr_tlog_reader_t *r, uint64_t index,
                                 uint64_t size, uint8_t proof[WR_TLOG_PROOF_MAX][WR_TLOG_HASH],
                                 size_t *n);

/*
 * The consistency proof from the tree of m leaves to the tree of n (RFC
 * 9162 2.1.4.1) into proof, its length in *len (0 when m == n). WR_OK,
 * WR_EINVAL (m == 0 or m > n), or the reader's error.
 */
wr_err_t wr_tlog_consistency_proof(wr_crypto_sha256_t *h, const wr_tlog_reader_t *r, uint64_t m,
                                   uint64_t n, uint8_t proof[WR_TLOG_PROOF_MAX][WR_TLOG_HASH],
                                   size_t *len);

/* ---------- verification (hashes only, no reader) */

/* True when proof (n hashes) proves that leaf_hash is leaf `index` of the
 * tree of `size` leaves whose root is root (RFC 9162 2.1.3.2). */
bool wr_tlog_verify_inclusion(wr_crypto_sha256_t *h, uint64_t index, uint64_t size,
                              const uint8_t leaf_hash[WR_TLOG_HASH],
                              const uint8_t (*proof)[WR_TLOG_HASH], size_t n,
                              const uint8_t root[WR_TLOG_HASH]);

/* True when proof (len hashes) proves that the tree of m leaves with root
 * root_m is a prefix of the tree of n leaves with root root_n (RFC 9162
 * 2.1.4.2). m == n: the proof is empty and the roots equal; m == 0: the
 * proof is empty and root_m is the empty root; m > n is false. */
bool wr_tlog_verify_consistency(wr_crypto_sha256_t *h, uint64_t m, uint64_t n,
                                const uint8_t root_m[WR_TLOG_HASH],
                                const uint8_t root_n[WR_TLOG_HASH],
                                const uint8_t (*proof)[WR_TLOG_HASH], size_t len);

#endif
