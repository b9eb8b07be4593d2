/*
 * freelist.h - a bounded free list of fixed-size blocks: records that are
 * made and dropped on every request (store calls, request contexts,
 * deferred answers) are kept for reuse instead of going back to malloc,
 * up to a bound, so memory stays bounded when a burst is over.
 *
 * The list is intrusive: a kept block's first bytes hold the link, so a
 * block must be at least a pointer in size (wr_freelist_init checks);
 * a taken block is zeroed, as calloc would give it. Not thread-safe.
 */
#ifndef WR_FREELIST_H
#define WR_FREELIST_H

#include <stddef.h>

typedef struct {
    void *head;  /* kept blocks, linked through their first bytes */
    size_t n;    /* blocks kept */
    size_t max;  /* blocks kept at most */
    size_t size; /* bytes of one block */
} wr_freelist_t;

/* An empty list of blocks of size bytes (>= sizeof(void *); smaller is
 * raised to it), keeping at most max. */
void wr_freelist_init(wr_freelist_t *fl, size_t size, size_t max);

/* A zeroed block: a kept one, else a new one (calloc); NULL when out of
 * memory. The caller owns it until wr_freelist_give or free(). */
void *wr_freelist_take(wr_freelist_t *fl);

/* Gives p back: kept while fewer than max are kept, else freed. NULL is a
 * no-op. p must come from this list (or be a block of its size from
 * malloc). */
void wr_freelist_give(wr_freelist_t *fl, void *p);

/* Frees every kept block; the list stays usable. */
void wr_freelist_clear(wr_freelist_t *fl);

#endif
