/*
 * idhash.h - a compact hash set of items keyed by a user id (byte string)
 * that the item itself holds: open addressing, linear probing, one 8-byte
 * slot per entry (the item pointer with a 16-bit hash tag in its unused top
 * bits), load factor up to 0.8, keyed SipHash-1-3 (siphash.h) with a
 * random key per table (no hash flooding by chosen ids). Resizing is
 * incremental: a put past the load limit (or a del below 1/8) allocates the
 * new slot array, and every later put and del moves at most
 * WR_IDHASH_MIGRATE_STEP slots of the old array into it, so no call rehashes
 * the whole table (a put or del costs O(WR_IDHASH_MIGRATE_STEP) item
 * dereferences at most). Items are borrowed: the table never frees them.
 * Not thread-safe; no I/O.
 */
#ifndef WR_IDHASH_H
#define WR_IDHASH_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Returns the key of item (borrowed, len bytes) - e.g. a node's id. */
typedef const char *(*wr_idhash_key_fn)(const void *item, size_t *len);

typedef struct wr_idhash wr_idhash_t;

/* Old slots a put or del migrates at most while a resize runs. */
#define WR_IDHASH_MIGRATE_STEP 32

/* Creates an empty table; key extracts the key of an item. NULL on ENOMEM. */
wr_idhash_t *wr_idhash_new(wr_idhash_key_fn key);

/* Frees the table, both slot arrays while a resize runs (not the items).
 * NULL is ok. */
void wr_idhash_free(wr_idhash_t *h);

/* The item whose key is id (len bytes), or NULL. Never migrates: while a
 * resize runs it searches the new array, then the old one. */
void *wr_idhash_get(const wr_idhash_t *h, const char *id, size_t len);

/*
 * Adds item; its key must not be in the table yet (the caller checks with
 * wr_idhash_get). Allocates (a new slot array of twice the slots) only when
 * the table would pass 0.8 full; then, and while a resize runs, it moves at
 * most WR_IDHASH_MIGRATE_STEP old slots. Returns WR_OK, WR_ENOMEM (table
 * unchanged), or WR_EINVAL when item's address is NULL or does not fit in
 * 48 bits.
 */
wr_err_t wr_idhash_put(wr_idhash_t *h, void *item);

/* Grows the table so that n more puts (with no del between) cannot fail
 * nor allocate; they may still move old slots of a running resize, and
 * the last of those frees the old array. When it must grow during a
 * resize, it first finishes that resize (O(n) work: a resize runs only
 * while the table is far below n puts from growing). Returns WR_OK or
 * WR_ENOMEM (table unchanged). */
wr_err_t wr_idhash_reserve(wr_idhash_t *h, size_t n);

/* Removes and returns the item whose key is id, or NULL if absent (then
 * nothing else happens). May start a shrink (allocating half the slots;
 * skipped on ENOMEM) and moves at most WR_IDHASH_MIGRATE_STEP old slots
 * while a resize runs. */
void *wr_idhash_del(wr_idhash_t *h, const char *id, size_t len);

/* Number of items. */
size_t wr_idhash_count(const wr_idhash_t *h);

/* Bytes held by the table: the struct and its slot arrays (both while a
 * resize runs: right after a growth, 24 bytes for every slot before it). */
size_t wr_idhash_bytes(const wr_idhash_t *h);

/* Calls fn once for every item (in both arrays while a resize runs), in no
 * particular order; fn must not modify h. */
void wr_idhash_foreach(const wr_idhash_t *h, void (*fn)(void *item, void *arg), void *arg);

/* Test and diagnostic hook: old slots a running resize has still to
 * visit (0 when none runs). Each put or del lowers it by at most
 * WR_IDHASH_MIGRATE_STEP, or to 0 when the old array holds no item left. */
size_t wr_idhash__pending(const wr_idhash_t *h);

#endif
