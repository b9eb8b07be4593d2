/*
 * store_memory.h - the embedded backend of the store interface (store.h):
 * the whole state in process, single-threaded on the caller's loop, with
 * an order-statistic skiplist so join, rank and pop-first-N are O(log N).
 */
#ifndef WR_STORE_MEMORY_H
#define WR_STORE_MEMORY_H

#include <event2/event.h>
#include <stdint.h>

#include "store.h"

typedef struct {
    const char *data_dir;          /* snapshot directory, copied; NULL = no persistence */
    uint32_t snapshot_interval_ms; /* periodic snapshot; 0 = 2000 */
} wr_store_memory_opts_t;

/*
 * Opens the backend on base (borrowed; must outlive the store). With a
 * data_dir, loads the snapshot found there. Callbacks run from the loop
 * (an event_active'd deferred queue), never inside the call.
 * Returns WR_OK and *out, WR_EIO for an unreadable snapshot, WR_ENOMEM.
 * wr_store_close() writes a final snapshot (with data_dir), calls pending
 * callbacks synchronously with WR_ECANCELED, and frees.
 */
wr_err_t wr_store_memory_open(struct event_base *base, const wr_store_memory_opts_t *opts,
                              wr_store_t **out);

#endif
