/*
 * history.h - the recent history of one queue for the dashboard: one
 * sample per second (waiting, active, admitted and consumed totals) in a
 * fixed ring of WR_HISTORY_SECONDS samples, so at least the last 16
 * minutes. Pure (jansson only); one thread.
 *
 * Samples come from the admission tick's answers (several per second): the
 * last answer of a second is that second's sample. Times are the store's
 * clock in Unix seconds, so every instance on one store samples the same
 * seconds. A second without an answer (store down, instance stopped) has no
 * sample: the chart shows a gap, never an invented value.
 */
#ifndef WR_HISTORY_H
#define WR_HISTORY_H

#include <jansson.h>
#include <stdint.h>

#define WR_HISTORY_SECONDS 960 /* samples kept: 16 minutes at one a second */

typedef struct wr_history wr_history_t;

/* A new, empty history, or NULL when out of memory. Free with wr_history_free. */
wr_history_t *wr_history_new(void);
void wr_history_free(wr_history_t *h);

/*
 * Records the queue's state at Unix second t (store clock): people
 * waiting, active tokens, and the store-wide admitted and consumed
 * totals. A second call for the same second replaces its sample; a time
 * before the last sample is ignored (a clock step back).
 */
void wr_history_add(wr_history_t *h, int64_t t, uint64_t waiting, uint64_t active,
                    uint64_t admitted_total, uint64_t consumed_total);

/* Samples held (0..WR_HISTORY_SECONDS). */
size_t wr_history_len(const wr_history_t *h);

/*
 * The samples after Unix second since (0 = all), oldest first, as columns:
 *   {"intervalSeconds":1,"t":[ms,...],"waiting":[...],"active":[...],
 *    "admittedPerSecond":[...],"consumedPerSecond":[...]}
 * t is epoch milliseconds. The rates are the change of the totals since
 * the sample before, per second; null for the first sample held, after a
 * gap of more than 5 s, or when a total went down (the queue was
 * recreated). Returns a new object (caller decrefs) or NULL when out of
 * memory.
 */
json_t *wr_history_json(const wr_history_t *h, int64_t since);

#endif
