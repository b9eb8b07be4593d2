/*
 * seencache.h - which waiting users this instance has recently seen the
 * store record as seen: a bounded, lossy cache that lets a status poll skip
 * the store's last-seen write (people who stop asking, docs/DESIGN.md).
 *
 * The store keeps each waiting user's last join or poll so that people who
 * stop asking leave the line (idleTimeoutSeconds). Writing it on every poll
 * doubled the Redis cost of a poll, so the store tolerates a last-seen time
 * up to one window old (wr_store_seen_window_us: its idle rule has that much
 * slack): a poll within the window after a join or status that recorded it
 * may go as status_quiet, which records nothing. This cache remembers, per
 * (queue, user), when this instance sent such a recording request that the
 * store answered WAITING.
 *
 * Structure: a fixed table of 8-way sets of {64-bit tag, time}; the tag is
 * SipHash-1-3 of "queue\0user" under a random key (no aimed collisions).
 * A new entry replaces the oldest of its set, so a full table only costs
 * recording polls, never a wrong answer: a miss is always safe. Pure: no
 * I/O, no clock (times come from the caller, monotonic microseconds), not
 * thread-safe.
 */
#ifndef WR_SEENCACHE_H
#define WR_SEENCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_SEENCACHE_DEFAULT (1u << 18) /* entries: 4 MiB */

typedef struct wr_seencache wr_seencache_t;

/* Creates a cache of about `entries` entries (rounded up to a power of two,
 * at least 8; 0 = WR_SEENCACHE_DEFAULT), allocated at once, under a key
 * from wr_rng_entropy. WR_OK or WR_ENOMEM. */
wr_err_t wr_seencache_new(size_t entries, wr_seencache_t **out);

/* Frees c (NULL is fine). */
void wr_seencache_free(wr_seencache_t *c);

/* Records that a recording request for user in queue (NUL-terminated),
 * sent at t_us, was answered WAITING. */
void wr_seencache_note(wr_seencache_t *c, const char *queue, const char *user, int64_t t_us);

/* True when such a request was noted less than window_us before now_us. */
bool wr_seencache_fresh(const wr_seencache_t *c, const char *queue, const char *user,
                        int64_t now_us, int64_t window_us);

/* Forgets user in queue (a page join, a leave, an answer other than
 * WAITING): their next poll records again. */
void wr_seencache_forget(wr_seencache_t *c, const char *queue, const char *user);

#endif
