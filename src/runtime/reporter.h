/*
 * reporter.h - this instance's part of the sale's report (docs/API.md
 * 1.3, "The sale's report"; core/report.h): it takes each queue's sample
 * at the start of every minute (the store keeps the first instance's),
 * counts what happens on this instance (joins that got a place, failed
 * challenges, fail-open passes, bypasses, pushes delivered) and the waits
 * of the people its admission ticks admitted, per minute of the store's
 * clock, and adds them to the store in small batches (every 200 ms;
 * kept and sent again while the store is unreachable, so fail-open passes
 * given then are counted once it is back).
 *
 * One per process, owned by the scheduler (wr_scheduler_reporter); on the
 * event loop only.
 */
#ifndef WR_REPORTER_H
#define WR_REPORTER_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/report.h"
#include "store/store.h"

typedef struct wr_reporter wr_reporter_t;

/* A new reporter on store (borrowed, outlives it) keeping keep_days days
 * (1..WR_REPORT_DAYS_MAX; 0 = 30). NULL when out of memory. */
wr_reporter_t *wr_reporter_new(struct event_base *base, wr_store_t *store, uint32_t keep_days);
/* Frees; counts not sent yet are lost (wr_reporter_flush first). */
void wr_reporter_free(wr_reporter_t *r);

uint32_t wr_reporter_keep_days(const wr_reporter_t *r);

/* The store's clock as this instance last learnt it (epoch ms, from the
 * admission ticks' answers; the wall clock before the first). */
int64_t wr_reporter_now_ms(const wr_reporter_t *r);

/* Adds n to count c of queue in the current minute. NULL r: nothing. */
void wr_reporter_count(wr_reporter_t *r, const char *queue, wr_report_counted_t c, uint64_t n);

/* Before an admission tick of a busy queue (not quiet: a quiet queue's
 * counters and gauges do not move, so the report carries its last sample
 * on): sends the minute's sample (rate: the admission rate in use) when
 * this instance has not yet for the minute the store's clock is in, so it
 * is taken before the tick's changes (same connection, in order). */
void wr_reporter_before_tick(wr_reporter_t *r, const char *queue, double rate);

/* After an admission tick's answer: the store's time now_us (the clock
 * learnt) and the waits of the n people it admitted (us; a wait starts at
 * the later of the join and opens_at_ms, -1 = none). The opening's moves
 * count nothing: a pre-queue join was counted as joined when it was
 * made (WR_REPORT_JOINED, the join's entry->added). */
void wr_reporter_admitted(wr_reporter_t *r, const char *queue, int64_t now_us,
                          const int64_t *waited_us, size_t n, int64_t opens_at_ms);

/* Sends every count held now (queue NULL: of every queue). */
void wr_reporter_flush(wr_reporter_t *r, const char *queue);
/* Store calls of the reporter still unanswered. */
size_t wr_reporter_in_flight(const wr_reporter_t *r);

/* queue was created (admin PUT of a queue that did not exist): its
 * registry entry says it lives (a queue created again after a delete). */
void wr_reporter_created(wr_reporter_t *r, const char *queue);

/* This instance forgets queue (gone): its record goes once nothing of it
 * is left to send; a record with counts left stays until they are sent. */
void wr_reporter_forget(wr_reporter_t *r, const char *queue);

/* A queue is about to be deleted: sends its counts and its last sample
 * (before the delete, on the same connection). After the delete
 * succeeded: wr_reporter_deleted marks it deleted in the registry. */
void wr_reporter_before_delete(wr_reporter_t *r, const char *queue, double rate);
void wr_reporter_deleted(wr_reporter_t *r, const char *queue);

#endif
