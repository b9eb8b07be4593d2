/*
 * memq_internal.h - what the files of the memq module share, and nothing
 * else includes.
 *
 * The memq module (the embedded store's queue model) is in these files:
 *   memq.c          configs, tokens and their heap, the line, entry,
 *                   leave, admit, stats, the db of queues, sessions and
 *                   the burned set of fail-open passes
 *   memq_open.c     the sale opening: the pre-queue and its move into
 *                   the line
 * Names shared between these files are wr_memq__*; file statics are
 * unprefixed (STYLE.md). None of them does I/O or reads a clock.
 */
#ifndef WR_MEMQ_INTERNAL_H
#define WR_MEMQ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memq.h"

/* Inserts user at score into set and its id hash (seq: a reserved rank
 * number of set, or UINT64_MAX for none); *out the node (owned by set).
 * All or nothing: WR_ENOMEM leaves set and ids unchanged. (memq.c) */
wr_err_t wr_memq__set_add(wr_zsl_t *set, wr_idhash_t *ids, const char *user, size_t ulen,
                          int64_t score, uint64_t seq, wr_zsl_node_t **out);

/* ---- memq_open.c ---- */

/* True before opensAt with no opening in progress: joins go to the
 * pre-queue and nobody is admitted. now_us: store clock, microseconds. */
bool wr_memq__gate_closed(const wr_memq_t *q, int64_t now_us);

/* The opening is due: people in pre, none moving yet, opensAt null or
 * passed. */
bool wr_memq__open_due(const wr_memq_t *q, int64_t now_us);

/* Begins the opening: reserves the line scores last_score + 1 .. + |pre|
 * and as many rank numbers of the line; sets *dirty. */
void wr_memq__open_begin(wr_memq_t *q, bool *dirty);

/* Ends the opening once nobody is left to move in pre. */
void wr_memq__open_settle(wr_memq_t *q);

/* People not yet moved from pre: they count in waiting while the opening
 * runs; 0 when no opening is in progress. */
uint64_t wr_memq__pending(const wr_memq_t *q);

/* The 1-based position of line node n: its rank, plus the pre-queue not
 * yet moved when n came after the opening began. */
uint64_t wr_memq__line_position(const wr_memq_t *q, const wr_zsl_node_t *n);

#endif
