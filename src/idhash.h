/*
 * idhash.h - a compact hash set of items keyed by a user id (byte string)
 * that the item itself holds: open addressing, linear probing, one 8-byte
 * slot per entry (the item pointer with a 16-bit hash tag in its unused top
 * bits), load factor up to 0.8, keyed SipHash-1-3 (siphash.h) with a
 * random key per table (no hash flooding by chosen ids). Items are
 * borrowed: the table never frees them. Not thread-safe; no I/O.
 */
#ifndef WR_IDHASH_H
#define WR_IDHASH_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Returns the key of item (borrowed, len bytes) - e.g. a node's id. */
typedef const char *(*wr_idhash_key_fn)(const void *item, size_t *len);

typedef struct wr_idhash wr_idhash_t;

/* Creates an empty table; key extracts the key of an item. NULL on ENOMEM. */
wr_idhash_t *wr_idhash_new(wr_idhash_key_fn key);

/* Frees the table (not the items). NULL is ok. */
void wr_idhash_free(wr_idhash_t *h);

/* The item whose key is id (len bytes), or NULL. */
void *wr_idhash_get(const wr_idhash_t *h, const char *id, size_t len);

/*
 * Adds item; its key must not be in the table yet (the caller checks with
 * wr_idhash_get). Returns WR_OK, WR_ENOMEM (table unchanged), or WR_EINVAL
 * when item's address does not fit in 48 bits.
 */
wr_err_t wr_idhash_put(wr_idhash_t *h, void *item);

/* Grows the table so that n more puts cannot fail (nor resize).
 * Returns WR_OK or WR_ENOMEM (table unchanged). */
wr_err_t wr_idhash_reserve(wr_idhash_t *h, size_t n);

/* Removes and returns the item whose key is id, or NULL if absent. */
void *wr_idhash_del(wr_idhash_t *h, const char *id, size_t len);

/* Number of items. */
size_t wr_idhash_count(const wr_idhash_t *h);

/* Bytes held by the table (slot array and struct). */
size_t wr_idhash_bytes(const wr_idhash_t *h);

/* Calls fn for every item, in no particular order; fn must not modify h. */
void wr_idhash_foreach(const wr_idhash_t *h, void (*fn)(void *item, void *arg), void *arg);

#endif
