/*
 * mem_snapshot_log.c - the public logs in the embedded store's snapshot
 * (mem_snapshot_log.h): the log key, then each log as memlog.c writes it
 * (its leaves, not its tree: the tree is hashed again on load, so a leaf
 * changed in the file shows as a root that no longer matches the
 * checkpoint it had).
 */
#include "store/memory/mem_snapshot_log.h"

#include "store/memory/memlog.h"

static void put(void *ctx, const void *p, size_t n)
{
    wr_mem_sio_w_bytes(ctx, p, n);
}

void wr_mem_snapshot_write_logs(wr_mem_sio_t *w, const wr_memq_db_t *db)
{
    wr_mem_sio_w_u8(w, db->has_log_key);
    wr_mem_sio_w_bytes(w, db->log_key, sizeof db->log_key);
    wr_mem_sio_w_u32(w, (uint32_t)db->nlogs);
    for (size_t i = 0; i < db->nlogs && !w->failed; i++)
        wr_memlog_write(db->logs[i], put, w);
}

static bool get(void *ctx, void *p, size_t n)
{
    wr_mem_sio_t *r = ctx;
    wr_mem_sio_r_bytes(r, p, n);
    return !r->failed;
}

void wr_mem_snapshot_read_logs(wr_mem_sio_t *r, wr_memq_db_t *db)
{
    db->has_log_key = wr_mem_sio_r_u8(r) != 0;
    wr_mem_sio_r_bytes(r, db->log_key, sizeof db->log_key);
    uint32_t n = wr_mem_sio_r_u32(r);
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        const char *what = "bad log";
        wr_memlog_t *l = wr_memlog_read(get, r, &what);
        if (!l || wr_memq_db_log_add(db, l) != WR_OK) {
            wr_memlog_free(l);
            wr_mem_sio_fail(r, what);
        }
    }
    for (size_t i = 0; i < db->nq && !r->failed; i++)
        if (wr_memq_log_attach(db, db->queues[i]) != WR_OK)
            wr_mem_sio_fail(r, "out of memory");
}
