/*
 * zsl.h - an order-statistic skiplist of (score, id) with spans, as Redis's
 * zskiplist (t_zset.c): insert, delete, rank of an element and pop of the
 * first element in O(log N); walking in score order.
 *
 * Made for the waiting line of the embedded store: scores are unique
 * (arrival times in microseconds, strictly increasing per queue), ids are
 * user ids of 1..255 bytes kept inline in the node. Nodes come from a
 * per-list slab pool (size classes of 8 bytes), so a 12-byte id costs about
 * 43 bytes per node on average. Not thread-safe; no I/O; no libevent.
 */
#ifndef WR_ZSL_H
#define WR_ZSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_ZSL_MAXLEVEL 32
#define WR_ZSL_ID_MAX   255 /* longest id, bytes */
#define WR_ZSL_EXTRA    64  /* a node's extra bytes (wr_zsl_set_extra) */

typedef struct wr_zsl wr_zsl_t;
typedef struct wr_zsl_node wr_zsl_node_t;

/* Creates an empty list; seed drives the level generator (any value).
 * Returns NULL on allocation failure. Free with wr_zsl_free(). */
wr_zsl_t *wr_zsl_new(uint64_t seed);

/* Frees the list and every node (nodes are invalid afterwards). NULL is ok. */
void wr_zsl_free(wr_zsl_t *zsl);

/*
 * Inserts id (idlen bytes, 1..WR_ZSL_ID_MAX, need not be NUL-terminated)
 * with score. The node keeps a NUL-terminated copy of id.
 * Returns WR_OK and *out (owned by the list; valid until deleted), WR_EINVAL
 * when score is already in the list or idlen is out of range, WR_ELIMIT at
 * 2^32-1 elements, WR_ENOMEM. The list does not check id uniqueness.
 */
wr_err_t wr_zsl_insert(wr_zsl_t *zsl, int64_t score, const char *id, size_t idlen,
                       wr_zsl_node_t **out);

/*
 * Reserved places (the sale opening: a block of elements inserted later,
 * below every element appended after the reservation). wr_zsl_reserve
 * takes the next n append sequence numbers of the rank index and returns
 * the first; wr_zsl_insert_reserved inserts an element with one of them.
 * The caller gives the reserved elements scores that sort exactly as their
 * sequence numbers among every element of the list (above every element
 * appended before the reservation, below every one appended after it,
 * increasing with the sequence number); then rank stays on the index. An
 * insert that breaks that order turns the index off, as any non-append
 * does (rank stays exact). One reservation at a time; wr_zsl_unreserve
 * ends it (the numbers not used are never used).
 */
uint64_t wr_zsl_reserve(wr_zsl_t *zsl, uint64_t n);
void wr_zsl_unreserve(wr_zsl_t *zsl);
/* wr_zsl_insert with the reserved sequence number seq (see above); the
 * same answers. */
wr_err_t wr_zsl_insert_reserved(wr_zsl_t *zsl, int64_t score, const char *id, size_t idlen,
                                uint64_t seq, wr_zsl_node_t **out);

/* Number of elements with a score < score. O(log N). */
uint64_t wr_zsl_count_below(const wr_zsl_t *zsl, int64_t score);

/* Removes node (which must be in zsl) and frees it. O(log N). */
void wr_zsl_delete(wr_zsl_t *zsl, wr_zsl_node_t *node);

/* 1-based rank of node (which must be in zsl): the number of elements with
 * a score <= its score. From the rank index while every insert since the
 * list was last empty was an append (the highest score so far): O(N / 2^18)
 * additions over two small arrays plus one bitmap block; otherwise by the
 * span walk, O(log N). */
uint64_t wr_zsl_rank(const wr_zsl_t *zsl, const wr_zsl_node_t *node);

/* The same rank, always by the span walk (O(log N)); for tests and
 * benchmarks that compare the two. */
uint64_t wr_zsl_rank_walk(const wr_zsl_t *zsl, const wr_zsl_node_t *node);

/* True while rank uses the rank index (see wr_zsl_rank). */
bool wr_zsl_rank_indexed(const wr_zsl_t *zsl);

/* The element of 1-based rank, or NULL when rank is 0 or > length. O(log N). */
wr_zsl_node_t *wr_zsl_by_rank(const wr_zsl_t *zsl, uint64_t rank);

/* The first element (lowest score), or NULL when empty. O(1). */
wr_zsl_node_t *wr_zsl_first(const wr_zsl_t *zsl);

/* The first element with a score >= score, or NULL. O(log N). */
wr_zsl_node_t *wr_zsl_first_ge(const wr_zsl_t *zsl, int64_t score);

/* The element after node in score order, or NULL. O(1). */
wr_zsl_node_t *wr_zsl_next(const wr_zsl_node_t *node);

/* Callback for wr_zsl_pop_first: node is still valid during the call. */
typedef void (*wr_zsl_pop_fn)(const wr_zsl_node_t *node, void *arg);

/*
 * Removes the first min(n, length) elements in score order; fn (may be
 * NULL) sees each one just before it is freed. fn must not modify zsl.
 * Returns the number removed. O(n + log N) in total.
 */
uint64_t wr_zsl_pop_first(wr_zsl_t *zsl, uint64_t n, wr_zsl_pop_fn fn, void *arg);

/* Number of elements. */
uint64_t wr_zsl_length(const wr_zsl_t *zsl);

/* Bytes held by the node pool (slabs, whether in use or free) plus the list
 * header: the list's memory footprint. */
size_t wr_zsl_bytes(const wr_zsl_t *zsl);

/* The node's score. */
int64_t wr_zsl_node_score(const wr_zsl_node_t *node);

/* The caller's data of a node: a 32-bit word and 8 flag bits, both 0 when
 * the node is inserted; the list never reads them. */
uint32_t wr_zsl_node_aux(const wr_zsl_node_t *node);
void wr_zsl_node_set_aux(wr_zsl_node_t *node, uint32_t aux);
uint8_t wr_zsl_node_flags(const wr_zsl_node_t *node);
void wr_zsl_node_set_flags(wr_zsl_node_t *node, uint8_t flags);

/* The caller's extra bytes: nodes inserted while on (default off) carry
 * WR_ZSL_EXTRA bytes more, zeroed at insert; nodes inserted while off have
 * none. Turning it on or off changes no node already in the list, so a
 * list may hold both kinds. */
void wr_zsl_set_extra(wr_zsl_t *zsl, bool on);
/* The node's extra bytes (WR_ZSL_EXTRA of them, not aligned: read and
 * write them with memcpy), valid while the node lives; NULL when it has
 * none. */
unsigned char *wr_zsl_node_extra(const wr_zsl_node_t *node);

/* The node's id, NUL-terminated, borrowed while the node lives; *len (may
 * be NULL) gets its length in bytes. */
const char *wr_zsl_node_id(const wr_zsl_node_t *node, size_t *len);

#endif
