/*
 * store_memory_internal.h - what the files of the store_memory module
 * share, and nothing else includes: the store (struct mstore) and the few
 * functions each file calls in the other.
 *
 * The store_memory module is one store in two files:
 *   store_memory.c       the operations, clocks, deferred callbacks,
 *                        open/close
 *   store_memory_snap.c  the snapshots of a store with a data_dir: the
 *                        periodic timer, the forked writer and its
 *                        reaping, the write on demand and at close
 * Names shared between these files are wr_store_memory__*; file statics
 * are unprefixed (STYLE.md). Everything here runs on the store's loop.
 */
#ifndef WR_STORE_MEMORY_INTERNAL_H
#define WR_STORE_MEMORY_INTERNAL_H

#include <sys/queue.h>

#include "base/freelist.h"
#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/logleaf.h"
#include "store/memory/memq.h"
#include "store/store.h"

struct item; /* a deferred answer (store_memory.c) */

typedef struct mstore {
    wr_store_t base;
    struct event_base *evbase;
    struct event *ev_defer;
    struct event *ev_snap;
    struct event *ev_reap;          /* polls for the snapshot child's exit (no zombie) */
    STAILQ_HEAD(itemq, item) items; /* deferred answers, in call order */
    size_t pending;
    wr_freelist_t cache; /* free items for reuse */
    bool draining, closing, free_after_drain;

    wr_memq_db_t db;               /* the queues and the secret */
    struct wr_mem_report *reports; /* the sale's reports (mem_report.h) */
    /* secret_sync (store.h): the epoch marker and the previous secret; not
     * in the snapshot (one process: this store never loses its data under
     * its instance) */
    char epoch[WR_STORE_EPOCH_MAX + 1];
    uint8_t prev_secret[WR_SECRET_MAX];
    size_t prev_secret_len;

    int64_t mono_offset_us; /* wall - monotonic at open */
    int64_t debug_offset_us;
    int64_t test_clock_us; /* > 0: fixed test clock */

    char *data_dir;
    int lock_fd;    /* DIR/waitroom.lock, flock'ed: one process per data dir */
    pid_t snap_pid; /* background snapshot child, 0 = none */
    uint32_t snap_ms;
    bool dirty;
} mstore_t;

/* ---- store_memory_log.c: the public log's operations (store.h) ---- */

/* An answer of a log operation: ans points into the owned parts. */
typedef struct wr_store_memory__log_res {
    wr_log_answer_t ans;
    char *leaves;                         /* owned */
    uint8_t (*hashes)[32];                /* owned */
    char cp[1024];                        /* the checkpoint's copy */
    char (*names)[WR_QUEUE_NAME_MAX + 1]; /* owned */
    const char **name_ptrs;               /* owned */
    /* log_unsigned's beacon waits (owned) */
    char (*bq)[WR_QUEUE_NAME_MAX + 1];
    char (*burl)[WR_LOGLEAF_URL_MAX + 1];
    const char **bq_ptrs, **burl_ptrs;
    uint64_t *brounds;
} wr_store_memory__log_res_t;

void wr_store_memory__log_res_free(wr_store_memory__log_res_t *r);

struct item;
/* Queues the answer (err, res; res owned, may be NULL) of a log operation
 * whose item wr_store_memory__op_begin gave (D_LOG: the checks every
 * operation makes, before any work). (store_memory.c) */
void wr_store_memory__log_answer(mstore_t *s, struct item *it, wr_err_t err,
                                 wr_store_memory__log_res_t *res);

wr_err_t wr_store_memory__log_key(wr_store_t *base, const uint8_t proposed[32], wr_store_log_cb cb,
                                  void *arg);
wr_err_t wr_store_memory__log_head(wr_store_t *base, const char *queue, wr_store_log_cb cb,
                                   void *arg);
wr_err_t wr_store_memory__log_read(wr_store_t *base, const char *queue, const wr_log_read_t *req,
                                   wr_store_log_cb cb, void *arg);
wr_err_t wr_store_memory__log_publish(wr_store_t *base, const char *queue, uint64_t size,
                                      const uint8_t root[32], const char *note, size_t len,
                                      wr_store_log_cb cb, void *arg);
wr_err_t wr_store_memory__log_unsigned(wr_store_t *base, wr_store_log_cb cb, void *arg);
wr_err_t wr_store_memory__log_beacon(wr_store_t *base, const char *queue, uint64_t round,
                                     const uint8_t *randomness, size_t len, const char *error,
                                     wr_store_log_cb cb, void *arg);

/* ---- the sale's report (store.h report) ---- */

/* Answers the report operation (store_memory.c): an item for cb with
 * err and, on WR_OK, pairs (n of them; owned, freed with the item). */
wr_err_t wr_store_memory__report_answer(mstore_t *s, wr_store_report_cb cb, void *arg, bool args_ok,
                                        wr_err_t err, wr_store_report_pair_t *pairs, size_t n);
/* The arrival clock: the wall clock (the test clock when set), us
 * (store_memory.c). */
int64_t wr_store_memory__wall_us(const mstore_t *s);
/* The report operation (store_memory_report.c). */
wr_err_t wr_store_memory__report(wr_store_t *base, const wr_store_report_req_t *req,
                                 wr_store_report_cb cb, void *arg);

/* The token and tick clock: monotonic, in wall-clock microseconds (the
 * test clock when set). (store_memory.c) */
int64_t wr_store_memory__now_us(const mstore_t *s);

/* ---- store_memory_snap.c (all for a store with a data_dir) ---- */

/* Starts the periodic snapshot: the snap_ms timer and the reap timer on
 * s->evbase. WR_OK, or WR_ENOMEM (the events made so far are left for
 * wr_store_memory__snap_free). */
wr_err_t wr_store_memory__snap_start(mstore_t *s);

/* Writes a snapshot now, in process, after the background child (if any)
 * is done; WR_OK without a data_dir. WR_OK or an error of
 * wr_mem_snapshot_write; a written state is clean. */
wr_err_t wr_store_memory__snap_now(mstore_t *s);

/* At close (s->closing set): stops both timers, waits for the child
 * (bounded; a hung one is killed) and writes the state if dirty. */
void wr_store_memory__snap_close(mstore_t *s);

/* Frees the timers (NULL ones skipped). */
void wr_store_memory__snap_free(mstore_t *s);

/* ---- store_memory_defer.c: the deferred answers (the async contract) ---- */

typedef enum {
    D_ENTRY,
    D_DONE,
    D_ADMIT,
    D_TOKEN,
    D_INFO,
    D_LIST,
    D_SECRET,
    D_SYNC,
    D_AUTOTUNE,
    D_LOG,
    D_REPORT,
    D_CODES
} dkind_t;

typedef struct list_res {
    size_t n;
    wr_queue_info_t *infos;
    wr_memq_cfg_t **cfgs;
    char (*names)[WR_QUEUE_NAME_MAX + 1];
} list_res_t;

typedef struct item {
    STAILQ_ENTRY(item) link; /* mstore_t.items */
    dkind_t kind;
    wr_err_t err;
    bool has_res;
    void *arg;
    wr_store_cb_t cb;
    wr_memq_cfg_t *cfg;         /* held reference for entry / admit / info answers */
    int64_t *waits;             /* D_ADMIT: the admitted users' waits (owned) */
    wr_memq_push_t **pushes;    /* D_ADMIT: the claimed subscriptions (owned), n_pushes */
    wr_store_push_t *push_view; /* D_ADMIT: what res.admit.pushes points at (owned) */
    size_t n_pushes;
    char name[WR_QUEUE_NAME_MAX + 1];
    union {
        wr_entry_t entry;
        wr_admit_t admit;
        wr_token_check_t token;
        wr_queue_info_t info;
        list_res_t list;
        struct {
            uint8_t buf[WR_SECRET_MAX];
            size_t len;
        } secret;
        wr_autotune_state_rec_t autotune;
        struct sync_res *sync;           /* D_SYNC (owned; kept out of the union's size: the
                                            items of every operation are cleared whole) */
        wr_store_memory__log_res_t *log; /* D_LOG (owned, as sync) */
        struct {
            wr_store_report_pair_t *pairs; /* D_REPORT: owned (one allocation) */
            size_t n;
        } report;
        wr_store_codes_t *codes; /* D_CODES (owned, as sync) */
    } res;
} item_t;

/* The answer of secret_sync: copies, which sync points into. */
struct sync_res {
    wr_store_sync_t sync;
    uint8_t secret[WR_SECRET_MAX], previous[WR_SECRET_MAX];
    char epoch[WR_STORE_EPOCH_MAX + 1];
};

/* A free item of kind for arg (the store's free list), or NULL. */
item_t *wr_store_memory__item_new(mstore_t *s, dkind_t kind, void *arg);
/* Frees what the item owns and gives it back to the free list (or frees
 * it once the store is closing). */
void wr_store_memory__item_release(mstore_t *s, item_t *it);
/* Calls the item's callback with err (its own or an override). */
void wr_store_memory__item_fire(item_t *it, wr_err_t err);
/* Queues the item's answer for the next round of the loop. */
void wr_store_memory__item_enqueue(mstore_t *s, item_t *it);
/* The deferred-answer event: delivers the items pending when it fired. */
void wr_store_memory__on_defer(evutil_socket_t fd, short what, void *arg);
/* The start of every operation: WR_ECANCELED once closing, WR_EINVAL
 * without a callback or when !args_ok, WR_ENOMEM; else WR_OK and a new
 * item of kind for arg that answers cb. */
wr_err_t wr_store_memory__op_begin(mstore_t *s, wr_store_cb_t cb, bool args_ok, dkind_t kind,
                                   void *arg, item_t **out);
/* The queue named queue, or NULL with it->err = WR_ENOTFOUND. */
wr_memq_t *wr_store_memory__op_queue(mstore_t *s, item_t *it, const char *queue);
/* Frees the store (store_memory.c; after the last deferred answer when
 * closing during a delivery). */
void wr_store_memory__free(mstore_t *s);

#endif
