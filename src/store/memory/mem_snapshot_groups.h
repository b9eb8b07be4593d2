/*
 * mem_snapshot_groups.h - version 12's part of a queue in the embedded
 * store's snapshot (mem_snapshot.c): its priority groups and presale codes
 * (memq_group.c). Included by mem_snapshot.c only.
 */
#ifndef WR_MEM_SNAPSHOT_GROUPS_H
#define WR_MEM_SNAPSHOT_GROUPS_H

#include <stdint.h>

#include "store/memory/mem_sio.h"
#include "store/memory/memq.h"

/* Writes q's groups (in the config's order, by name), the standard line's
 * carried share and the codes (after version 9's part); last-seen times
 * as ages at now_us (written_at_us). */
void wr_mem_snapshot__groups_write(wr_mem_sio_t *w, const wr_memq_t *q, int64_t now_us);

/* Reads them into q, whose config (naming the groups: their slots are
 * made), line, tokens, pre-queue, held and back are loaded: a group's
 * people back in its line (last seen now_us minus their age), its held,
 * returned and pass holders given its slot, its admissions, the carry and
 * the codes. Fails r (wr_mem_sio_fail) on a bad record: a group the
 * config lacks or named twice, a group count other than the config's, a
 * line out of order or a person loaded twice, a member who holds no place
 * in held or back and no pass or is named twice, a carry out of range, a
 * bad or duplicate code. */
void wr_mem_snapshot__groups_read(wr_mem_sio_t *r, wr_memq_t *q, int64_t now_us);

#endif
