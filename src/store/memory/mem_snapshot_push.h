/*
 * mem_snapshot_push.h - version 10's part of a queue in the embedded
 * store's snapshot (mem_snapshot.c): its Web Push subscriptions and the
 * closing already pushed (memq_push.c). Included by mem_snapshot.c only.
 */
#ifndef WR_MEM_SNAPSHOT_PUSH_H
#define WR_MEM_SNAPSHOT_PUSH_H

#include "store/memory/mem_sio.h"
#include "store/memory/memq.h"

/* Writes q's subscriptions and push_closed (after version 9's part). */
void wr_mem_snapshot__push_write(wr_mem_sio_t *w, const wr_memq_t *q);

/* Reads them into q, whose line, pre-queue and held people are loaded:
 * fails r (wr_mem_sio_fail) on a bad record, a subscription of someone
 * not in line, pre-queue or held, or one given twice. */
void wr_mem_snapshot__push_read(wr_mem_sio_t *r, wr_memq_t *q);

#endif
