/*
 * mem_snapshot_log.h - the public logs' part of the embedded store's
 * snapshot file (version 8; mem_snapshot.c writes and reads the rest).
 */
#ifndef WR_MEM_SNAPSHOT_LOG_H
#define WR_MEM_SNAPSHOT_LOG_H

#include "store/memory/mem_sio.h"
#include "store/memory/memq.h"

/* Writes u8 has_log_key, 32 bytes log key, u32 log count and each log
 * (memlog.c's form). */
void wr_mem_snapshot_write_logs(wr_mem_sio_t *w, const wr_memq_db_t *db);

/* Reads what wr_mem_snapshot_write_logs wrote into db (the queues read
 * already), then puts each queue with publicLog back on its log. A fault
 * fails r. */
void wr_mem_snapshot_read_logs(wr_mem_sio_t *r, wr_memq_db_t *db);

#endif
