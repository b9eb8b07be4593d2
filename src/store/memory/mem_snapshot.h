/*
 * mem_snapshot.h - the embedded store's persistence: a checksummed
 * snapshot file of a wr_memq_db_t (memq.h) in a data directory, written
 * atomically and loaded at start, and the lock that keeps a data directory
 * to one process. Synchronous file I/O; no libevent, no fork (the forked
 * background writer and its timers live in store_memory.c).
 *
 * Files in DIR: waitroom.snapshot (the snapshot), .waitroom.snapshot.tmp
 * (while writing), waitroom.lock (the flock). Every WR_EIO is logged
 * (log.h) with a line naming the file and the cause.
 */
#ifndef WR_MEM_SNAPSHOT_H
#define WR_MEM_SNAPSHOT_H

#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"
#include "store/memory/memq.h"

/*
 * Creates DIR (mode 0700) if it does not exist and takes an exclusive,
 * non-blocking flock on DIR/waitroom.lock: two processes snapshotting into
 * one directory would overwrite each other's state. Returns WR_OK and
 * *lock_fd (the caller closes it to release the lock; close-on-exec),
 * WR_EIO when DIR cannot be created, the lock file cannot be opened or
 * another process holds the lock, WR_EINVAL for a too long path. On error
 * *lock_fd is -1.
 */
wr_err_t wr_mem_snapshot_lock_dir(const char *dir, int *lock_fd);

/*
 * A fresh SHA-256 context for wr_mem_snapshot_write_md, or NULL on ENOMEM.
 * The caller frees it with wr_crypto_sha256_free().
 */
wr_crypto_sha256_t *wr_mem_snapshot_digest_new(void);

/*
 * Writes db (borrowed, read only) to DIR/waitroom.snapshot, replaced
 * atomically: temp file, fsync, rename, fsync of DIR. written_at_us (the
 * store's clock, us since the epoch) goes into the header; the line's
 * last-seen times are written as ages at that time. md is a fresh context
 * from wr_mem_snapshot_digest_new, borrowed and used up (the caller frees
 * it): a forked child can then write without fetching an algorithm (no
 * OpenSSL global locks after fork). Allocates one 1 MiB buffer.
 * Returns WR_OK, WR_EIO (logged; the previous snapshot stays intact and
 * no temp file is left), WR_ENOMEM, WR_EINVAL for a too long path.
 */
wr_err_t wr_mem_snapshot_write_md(const wr_memq_db_t *db, const char *dir, int64_t written_at_us,
                                  wr_crypto_sha256_t *md);

/* wr_mem_snapshot_write_md with its own digest context. Same returns. */
wr_err_t wr_mem_snapshot_write(const wr_memq_db_t *db, const char *dir, int64_t written_at_us);

/*
 * Loads DIR/waitroom.snapshot into db, which must be empty (no queues, no
 * secret). Returns WR_OK (also when there is no snapshot: a first start;
 * db stays empty), WR_EIO for an unreadable, corrupt or truncated file, a
 * bad checksum or an unknown version (logged; db is left empty), WR_ENOMEM,
 * WR_EINVAL for a too long path. now_us is the store's clock at load: each
 * waiting user's last-seen time is set to now_us minus the age the file
 * holds (the time the store was down does not count as idle; a version 1
 * or 2 file holds none: now_us).
 */
wr_err_t wr_mem_snapshot_load(wr_memq_db_t *db, const char *dir, int64_t now_us);

#endif
