/*
 * memlog.h - the embedded store's public log of one queue (docs/API.md
 * 1.3, "A line anyone can check"): the leaves in order, the hashes of
 * every complete subtree by (level, index) (base/tlog.h), the queue's log
 * salt, who is in the log's line (user id -> the index of their join
 * leaf: the receipts, and which events are logged at all), the opening's
 * commitment, and the latest signed checkpoint.
 *
 * A log is kept by name in the db (memq.h), apart from its queue: a
 * deleted queue's log stays readable and a queue created again under the
 * name continues it. memq.c's operations append to it in the same call as
 * the change they log (memq_log.c). Pure: no I/O, no clock; the salt and
 * the seeds are drawn with wr_crypto_random. Not thread-safe.
 */
#ifndef WR_MEMLOG_H
#define WR_MEMLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"
#include "base/idhash.h"
#include "base/ids.h"
#include "base/tlog.h"
#include "core/logleaf.h"

#define WR_MEMLOG_SALT   32           /* bytes of a queue's log salt */
#define WR_MEMLOG_CP_MAX 1024         /* bytes of a signed checkpoint */
#define WR_MEMLOG_LEAVES (1ull << 32) /* leaves a log may hold */

typedef struct wr_memlog {
    char name[WR_QUEUE_NAME_MAX + 1];
    uint8_t salt[WR_MEMLOG_SALT];
    /* the leaves, back to back in bytes; leaf i is bytes [off[i], off[i+1]) */
    char *bytes;
    size_t bytes_len, bytes_cap;
    uint64_t *off; /* size + 1 entries */
    size_t off_cap;
    /* the complete subtrees: level l holds size >> l hashes */
    uint8_t (*lv[WR_TLOG_LEVELS])[WR_TLOG_HASH];
    size_t lv_cap[WR_TLOG_LEVELS];
    wr_tlog_frontier_t fr;
    wr_crypto_sha256_t *h;
    wr_crypto_hmac_t *mac; /* keyed with salt on first use (wr_memlog_u) */
    wr_idhash_t *people;   /* user id -> struct memlog_person: in the log's line */
    /* Hints (wr_memlog_hint): a generation per slot, +1 whenever its
     * member is forgotten; free slots stacked in hfree. A member takes a
     * slot at their first hint. A hint names (generation, slot). */
    uint32_t *hgen;
    size_t n_hgen, hgen_cap;
    uint32_t *hfree;
    size_t n_hfree, hfree_cap;
    int64_t last_at; /* the last leaf's "at" */
    int64_t last_t;  /* the last join's t: the order key never goes back */
    /* the opening: a commit awaiting its draw */
    bool committed;
    uint8_t seed[WR_LOGLEAF_SEED];
    bool beacon;
    char beacon_url[WR_LOGLEAF_URL_MAX + 1];
    uint64_t round;
    /* the beacon's answer for the draw (store.h log_beacon): done, its
     * randomness, or an error (beaconError) */
    bool beacon_done;
    uint8_t randomness[WR_LOGLEAF_RANDOM_MAX];
    size_t randomness_len;
    char beacon_error[WR_LOGLEAF_ERROR_MAX + 1];
    /* the latest signed checkpoint (its text, its size) */
    char cp[WR_MEMLOG_CP_MAX];
    size_t cp_len;
    uint64_t cp_size;
    uint8_t cp_root[WR_TLOG_HASH];
    bool stopped; /* a head found it shorter than cp or not giving its root: never signed again */
} wr_memlog_t;

/* A new empty log of queue name with a fresh random salt, or NULL
 * (ENOMEM, no entropy). */
wr_memlog_t *wr_memlog_new(const char *name);
void wr_memlog_free(wr_memlog_t *l);

/* Leaves in the log. */
static inline uint64_t wr_memlog_size(const wr_memlog_t *l)
{
    return l->fr.size;
}

/* Appends leaf (its bytes, len <= WR_LOGLEAF_MAX): stored, hashed, every
 * subtree it completes kept. at: the leaf's "at" (for last_at). WR_OK,
 * WR_ENOMEM or WR_ELIMIT (nothing changed), WR_EIO. */
wr_err_t wr_memlog_append_bytes(wr_memlog_t *l, const char *leaf, size_t len, int64_t at);

/* Encodes l's event and appends it; ev->at is raised to the last leaf's
 * so "at" never goes back. *index: where it went (may be NULL). */
wr_err_t wr_memlog_append(wr_memlog_t *l, wr_logleaf_t *ev, uint64_t *index);

/* Leaf i (borrowed until the next append), its length in *len; NULL past
 * the end. */
const char *wr_memlog_leaf(const wr_memlog_t *l, uint64_t i, size_t *len);

/* The reader of the stored hashes (tlog.h). */
wr_tlog_reader_t wr_memlog_reader(wr_memlog_t *l);

/* The root of the whole log. */
wr_err_t wr_memlog_root(wr_memlog_t *l, uint8_t out[WR_TLOG_HASH]);

/* The log id of user (ulen bytes) under the log's salt: the first 16
 * bytes of HMAC-SHA-256(salt, user), as core/logleaf.h's
 * wr_logleaf_log_id (tested equal), with the MAC keyed once. */
wr_err_t wr_memlog_u(wr_memlog_t *l, const char *user, size_t ulen, char u[WR_LOGLEAF_U_HEX + 1]);

/* ---- who is in the log's line ------------------------------------------ */

/* The index of user's join leaf while they are in the log's line: true
 * and *index, else false. */
bool wr_memlog_member(const wr_memlog_t *l, const char *user, size_t ulen, uint64_t *index);

/* user's receipt while they are in the log's line: their log id (32 hex,
 * NUL-terminated), the index and hash of their join leaf, kept beside the
 * member (no leaf read); false for a non-member. */
bool wr_memlog_receipt(const wr_memlog_t *l, const char *user, size_t ulen,
                       char u[WR_LOGLEAF_U_HEX + 1], uint64_t *index,
                       uint8_t leaf_hash[WR_TLOG_HASH]);

/* A hint for user while they stay a member (0: not a member, or out of
 * memory): a 64-bit word a caller keeps beside its own copy of their
 * receipt (memq: in their line node) and checks with wr_memlog_hint_live
 * before using that copy. Asked again for the same member it is the same
 * hint. Valid for this log only. */
uint64_t wr_memlog_hint(wr_memlog_t *l, const char *user, size_t ulen);

/* True while the member the hint was given for is still a member (never
 * forgotten since: a member's receipt never changes while they stay); false
 * for 0 and every stale hint, also after their slot went to someone else. */
bool wr_memlog_hint_live(const wr_memlog_t *l, uint64_t hint);

/* Records user's join leaf index (they are in the log's line), and their
 * receipt read from that leaf (which must be appended already). WR_OK or
 * WR_ENOMEM. */
wr_err_t wr_memlog_member_add(wr_memlog_t *l, const char *user, size_t ulen, uint64_t index);

/* Forgets user (admitted or gone); true when they were a member. */
bool wr_memlog_member_del(wr_memlog_t *l, const char *user, size_t ulen);

/* ---- the snapshot (mem_snapshot.c) ------------------------------------- */

/* Writes l through put (no crypto: safe in a forked child): name, salt,
 * last_at, the opening's commitment, the checkpoint, the leaves, the
 * members. */
void wr_memlog_write(const wr_memlog_t *l, void (*put)(void *ctx, const void *p, size_t n),
                     void *ctx);

/* Reads a log written by wr_memlog_write through get (false: short read
 * or failure); the leaves are hashed again (the tree is rebuilt). NULL
 * on any fault, *what naming it. */
wr_memlog_t *wr_memlog_read(bool (*get)(void *ctx, void *p, size_t n), void *ctx,
                            const char **what);

#endif
