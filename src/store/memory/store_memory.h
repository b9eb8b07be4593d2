/*
 * store_memory.h - the embedded backend of the store interface (store.h):
 * the whole state in process, single-threaded on the caller's loop, with
 * an order-statistic skiplist so join, rank and pop-first-N are O(log N).
 */
#ifndef WR_STORE_MEMORY_H
#define WR_STORE_MEMORY_H

#include <event2/event.h>
#include <stdint.h>

#include "store/store.h"

typedef struct {
    const char *data_dir;          /* snapshot directory, copied; NULL = no persistence */
    uint32_t snapshot_interval_ms; /* periodic snapshot; 0 = 2000 */
    int64_t test_clock_start_us;   /* test hook: > 0 = the store clock starts at this time
                                      (us since the epoch) and moves only by
                                      debug_advance_time; 0 = the real clocks */
} wr_store_memory_opts_t;

/*
 * Opens the backend on base (borrowed; must outlive the store). With a
 * data_dir, loads the snapshot found there. Callbacks run from the loop
 * (an event_active'd deferred queue), never inside the call.
 * Returns WR_OK and *out, WR_EIO for an unreadable or corrupt snapshot
 * (logged) or a data_dir already held by another process (an flock on
 * DIR/waitroom.lock), WR_ENOMEM.
 * wr_store_close() writes a final snapshot (with data_dir), calls pending
 * callbacks synchronously with WR_ECANCELED, and frees.
 */
wr_err_t wr_store_memory_open(struct event_base *base, const wr_store_memory_opts_t *opts,
                              wr_store_t **out);

/*
 * Writes a snapshot now (synchronously) when the store has a data_dir:
 * DIR/waitroom.snapshot, replaced atomically (temp file, fsync, rename,
 * fsync of DIR). Returns WR_OK (also without data_dir: nothing to do),
 * WR_EIO (logged; the previous snapshot stays intact), WR_ENOMEM,
 * WR_EINVAL when s is not a memory store.
 */
wr_err_t wr_store_memory_snapshot(wr_store_t *s);

#endif
