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
 *
 * A queue with autotune also records, per sample, the rate in use, the
 * latency the controller last saw (the worst fresh report) and its target,
 * for the dashboard's autotune charts (wr_history_add_tuned); they live in
 * the same fixed ring (no allocation per sample).
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

/* Autotune's part of a sample (queue config autotune; runtime/scheduler.c). */
typedef struct {
    double rate;        /* the rate in use, users/s; <= 0 (or not finite) = not known yet */
    double latency_ms;  /* the worst fresh report at the controller's last step, ms;
                           < 0 (or not finite) = none fresh; kept to the microsecond,
                           at most 3,600,000 ms (a valid report's bound) */
    uint32_t target_ms; /* targetMs (1..60000); 0 = the queue has no autotune */
} wr_history_tune_t;

/* wr_history_add with autotune's part of the sample; tune NULL (or its
 * target_ms 0) = a queue without autotune (the same as wr_history_add). */
void wr_history_add_tuned(wr_history_t *h, int64_t t, uint64_t waiting, uint64_t active,
                          uint64_t admitted_total, uint64_t consumed_total,
                          const wr_history_tune_t *tune);

/* Samples held (0..WR_HISTORY_SECONDS). */
size_t wr_history_len(const wr_history_t *h);

/*
 * The samples after Unix second since (0 = all), oldest first, as columns:
 *   {"intervalSeconds":1,"t":[ms,...],"waiting":[...],"active":[...],
 *    "admittedPerSecond":[...],"consumedPerSecond":[...]}
 * t is epoch milliseconds. The rates are the change of the totals since
 * the sample before, per second; null for the first sample held, after a
 * gap of more than 5 s, or when a total went down (the queue was
 * recreated). When at least one of the samples answered is of a queue with
 * autotune, three more columns:
 *   "rateInUse":[users/s|null,...],"latencyMs":[ms|null,...],
 *   "targetMs":[ms|null,...]
 * null where the sample has no autotune (all three), the rate was not
 * known yet, or no report was fresh (latencyMs); numbers are integers when
 * whole. Without any such sample they are left out. Returns a new object
 * (caller decrefs) or NULL when out of memory.
 */
json_t *wr_history_json(const wr_history_t *h, int64_t since);

#endif
