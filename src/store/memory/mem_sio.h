/*
 * mem_sio.h - the snapshot file's byte I/O (mem_snapshot.c): buffered
 * writes and reads of little-endian integers and byte strings through one
 * WR_MEM_SIO_BUF block, with a SHA-256 digest of everything written or
 * read, updated once per block.
 *
 * Errors are sticky: the first failure (a short read, a write or digest
 * error, or one a caller reports with wr_mem_sio_fail) sets failed and
 * what; every later call does nothing (a read then yields zeros), so a
 * caller checks failed once at the end of a record or of the file.
 *
 * Then the records several parts of the snapshot share (mem_snapshot.c,
 * mem_snapshot_groups.c): a line's people, the head of a person's record,
 * and the check that a person is loaded once.
 */
#ifndef WR_MEM_SIO_H
#define WR_MEM_SIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/crypto.h"
#include "store/memory/memq.h"
#include "store/memory/zsl.h"

#define WR_MEM_SIO_BUF (1u << 20) /* bytes of the block buffer (buf) */

/* Buffered snapshot I/O: fields go through buf, and the digest is updated
 * once per block, not once per field (loading 10M users took 18 s with
 * per-field stdio and digest calls). */
typedef struct {
    FILE *f;
    wr_crypto_sha256_t *md;
    bool failed;
    const char *what;   /* first problem, for the log */
    unsigned char *buf; /* WR_MEM_SIO_BUF bytes */
    size_t pos, len;    /* read: consumed / filled; write: filled */
    size_t dig;         /* read: bytes of buf already digested */
    uint64_t fsize;     /* read: file size, to bound counts */
} wr_mem_sio_t;

/* Records the first failure (what: static text, for the log). */
void wr_mem_sio_fail(wr_mem_sio_t *io, const char *what);
/* Writer: digests and writes the buffered block. */
void wr_mem_sio_w_flush(wr_mem_sio_t *w);
/* Writes n bytes / a little-endian u64, u32, u8. */
void wr_mem_sio_w_bytes(wr_mem_sio_t *w, const void *p, size_t n);
void wr_mem_sio_w_u64(wr_mem_sio_t *w, uint64_t v);
void wr_mem_sio_w_u32(wr_mem_sio_t *w, uint32_t v);
void wr_mem_sio_w_u8(wr_mem_sio_t *w, uint8_t v);
/* Reader: digests what was consumed and not yet digested. */
void wr_mem_sio_r_digest(wr_mem_sio_t *r);
/* Copies n bytes out; digest = false for the checksum itself. */
void wr_mem_sio_r_take(wr_mem_sio_t *r, void *p, size_t n, bool digest);
/* Reads n bytes / a little-endian u64, u32, u8 (zeros once failed). */
void wr_mem_sio_r_bytes(wr_mem_sio_t *r, void *p, size_t n);
uint64_t wr_mem_sio_r_u64(wr_mem_sio_t *r);
uint32_t wr_mem_sio_r_u32(wr_mem_sio_t *r);
uint8_t wr_mem_sio_r_u8(wr_mem_sio_t *r);
/* Reads a u64 count of records of at least 10 bytes each: a larger count
 * than the file can hold is corrupt (what names it), and must not size an
 * allocation or a loop. */
uint64_t wr_mem_sio_r_count(wr_mem_sio_t *r, const char *what);
/* Reads a user id (u8 length 1..WR_USER_ID_MAX, bytes) into user,
 * NUL-terminated; returns its length (unusable once r failed). */
uint8_t wr_mem_sio_r_user(wr_mem_sio_t *r, char user[WR_ZSL_ID_MAX + 1]);

/* ---- records the snapshot's parts share ---- */

/* The people of set (the standard line, the pre-queue, a group's line;
 * with held: held or back): u64 count, then per person in order: i64
 * score (the pre-queue's key; held: the age of the hold or return key at
 * now_us, in us), u8 id_len, id, u32 last-seen age in centiseconds at
 * now_us (0 for a time ahead of now_us: a clock stepped back), and but
 * for held u8 flags (WR_MEMQ_PENDING only: the away mark and a group's
 * slot are not written). */
void wr_mem_sio_w_nodes(wr_mem_sio_t *w, const wr_zsl_t *set, int64_t now_us, bool held);

/* The head of a person's record, as wr_mem_sio_r_node reads it. */
typedef struct {
    char user[WR_ZSL_ID_MAX + 1];
    uint8_t len;   /* strlen(user) */
    uint32_t age;  /* last-seen age in centiseconds, <= INT32_MAX */
    uint8_t flags; /* 0 or WR_MEMQ_PENDING */
} wr_mem_sio_node_t;

/* Reads a u64 (a score or key, or an age in us), returned as int64_t,
 * then the user id, a u32 last-seen age and, with flags, a u8 of flags
 * (one record of wr_mem_sio_w_nodes; held records have no flags) into u;
 * an age over INT32_MAX or a flag other than WR_MEMQ_PENDING fails r with
 * bad. */
int64_t wr_mem_sio_r_node(wr_mem_sio_t *r, wr_mem_sio_node_t *u, bool flags, const char *bad);

/* True when user (len bytes) is already somewhere in q: a line (the
 * standard one or a group's), tokens, pre-queue, held or back (a snapshot
 * holds each person once). */
bool wr_mem_sio_user_known(const wr_memq_t *q, const char *user, uint8_t len);

#endif
