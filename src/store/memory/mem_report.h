/*
 * mem_report.h - the embedded store's part of the sale's report (store.h
 * report; core/report.h): the per-queue, per-day maps and the registry of
 * reports, in memory, kept in the data dir (when the store has one) as
 * DIR/reports/<queue>.<day>.json and DIR/reports/index.json.
 *
 * One thread (the store's loop). The maps are jansson objects: field ->
 * string (samples) or integer (counts).
 */
#ifndef WR_MEM_REPORT_H
#define WR_MEM_REPORT_H

#include <jansson.h>
#include <stdint.h>

#include "base/error.h"
#include "store/store.h"

typedef struct wr_mem_report wr_mem_report_t;

/* A new, empty set of reports; with dir (copied; NULL = none) loads the
 * files found in DIR/reports (a file that does not parse is skipped,
 * logged). NULL when out of memory. */
wr_mem_report_t *wr_mem_report_new(const char *dir, int64_t now_ms);
/* Writes what changed (with a dir), then frees. NULL is a no-op. */
void wr_mem_report_free(wr_mem_report_t *r);

/* WRITE (store.h report): sample_text is the sample to set in req->sample
 * (NULL: none, the queue does not exist); an "s" field only when absent. */
wr_err_t wr_mem_report_write(wr_mem_report_t *r, const wr_store_report_req_t *req,
                             const char *sample_text, int64_t now_ms);
/* READ: the day's map of queue (borrowed until the next call), or NULL. */
json_t *wr_mem_report_day(wr_mem_report_t *r, const char *queue, int64_t day);
/* INDEX: updates req->queue's entry when given (not a lookup); answers
 * the registry (queue -> "FIRST_MS,DELETED_MS"), borrowed until the next
 * call (wr_mem_report_op answers as store.h says). */
json_t *wr_mem_report_index(wr_mem_report_t *r, const wr_store_report_req_t *req);

/* The whole operation (store.h report): WRITE (then a save at most every
 * 5 s), READ, INDEX. On WR_OK, *pairs (one allocation with its strings;
 * caller frees; NULL when *n is 0 and nothing was allocated) and *n. */
wr_err_t wr_mem_report_op(wr_mem_report_t *r, const wr_store_report_req_t *req,
                          const char *sample_text, int64_t now_ms, wr_store_report_pair_t **pairs,
                          size_t *n);

/* Writes the changed files now (with a dir) when at least min_gap_ms
 * passed since the last write (0 = now). WR_OK or WR_EIO (logged). */
wr_err_t wr_mem_report_save(wr_mem_report_t *r, int64_t now_ms, int64_t min_gap_ms);

#endif
