/*
 * metric_defs.c - the table of every metric family (metric_defs.h).
 *
 * Add a metric: one row here (name, type, labels, help, the component that
 * registers it), then update it where it is measured; docs/API.md lists
 * the families for operators. The unit test checks that every row has a
 * help text and renders # HELP and # TYPE.
 */
#include "base/metric_defs.h"

#include <string.h>

/* waitroom_wait_seconds: waits are seconds to hours. */
static const double wait_bounds[] = {1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200};

static const wr_metric_def_t rows[] = {
    {WR_METRICS_GROUP_API, "waitroom_http_requests_total", WR_METRIC_COUNTER, "route,status",
     "HTTP requests answered, by route and status.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_store_latency_seconds", WR_METRIC_HISTOGRAM, "op",
     "Store operation latency as seen by the API, by operation.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_store_errors_total", WR_METRIC_COUNTER, "op,error",
     "Store operations that failed (unavailable, timeout), by operation.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_tokens_rejected_total", WR_METRIC_COUNTER, "reason",
     "Tokens refused before the store was touched, by reason.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_fail_open_admitted_total", WR_METRIC_COUNTER, "queue",
     "Callers admitted with a fail-open pass while the store was unreachable (degraded "
     "mode), by queue.",
     NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_fail_open_consumed_total", WR_METRIC_COUNTER, "queue",
     "Consumes answered with failOpen: fail-open passes spent, and ordinary tokens let "
     "through while the store was unreachable.",
     NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_http_in_flight", WR_METRIC_GAUGE, "",
     "Requests waiting for a store answer.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_rate_limited_total", WR_METRIC_COUNTER, "kind",
     "Requests refused 429 RATE_LIMITED, by kind (join per address, poll per identity).", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_rate_limit_tracked", WR_METRIC_GAUGE, "kind",
     "Addresses (join) and identities (poll) the limiters track now.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_rate_limit_evictions_total", WR_METRIC_COUNTER, "kind",
     "Limiter entries evicted because the table was full.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_http_request_duration_seconds", WR_METRIC_HISTOGRAM, "route",
     "Time from dispatching an HTTP request to sending its answer, seconds, by route.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_challenges_issued_total", WR_METRIC_COUNTER, "queue",
     "Join challenges issued (GET .../challenge and inline in 403 CHALLENGE_REQUIRED).", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_challenges_solved_total", WR_METRIC_COUNTER, "queue",
     "Joins that brought a valid challenge solution.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_challenges_refused_total", WR_METRIC_COUNTER, "queue,reason",
     "Joins refused 403 CHALLENGE_REQUIRED, by reason.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_captcha_verifications_total", WR_METRIC_COUNTER,
     "queue,outcome",
     "CAPTCHA widget responses verified with the provider (siteverify), by queue and "
     "outcome (passed, refused, timeout, error, badAnswer, busy).",
     NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_joins_total", WR_METRIC_COUNTER, "queue",
     "Joins this instance answered (POST entries and queue page loads the store "
     "accepted, repeats by people already in line included), by queue.",
     NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_build_info", WR_METRIC_GAUGE, "version",
     "Always 1; the label says the version of waitroomd.", NULL, 0},
    {WR_METRICS_GROUP_API, "waitroom_log_lines_dropped_total", WR_METRIC_COUNTER, "",
     "Log lines (error, audit and access log) dropped because their destination did not "
     "keep up (a pipe nobody reads, a stalled disk); K27.",
     NULL, 0},
    {WR_METRICS_GROUP_API, "process_cpu_seconds_total", WR_METRIC_COUNTER, "",
     "Total user and system CPU time spent in seconds.", NULL, 0},
    {WR_METRICS_GROUP_API, "process_resident_memory_bytes", WR_METRIC_GAUGE, "",
     "Resident memory size in bytes.", NULL, 0},
    {WR_METRICS_GROUP_API, "process_open_fds", WR_METRIC_GAUGE, "",
     "Number of open file descriptors.", NULL, 0},
    {WR_METRICS_GROUP_API, "process_max_fds", WR_METRIC_GAUGE, "",
     "Maximum number of open file descriptors.", NULL, 0},
    {WR_METRICS_GROUP_API, "process_start_time_seconds", WR_METRIC_GAUGE, "",
     "Start time of the process since unix epoch in seconds.", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_waiting", WR_METRIC_GAUGE, "queue",
     "People waiting in line; store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_active", WR_METRIC_GAUGE, "queue",
     "Live, unconsumed entry tokens plus open sessions (exact); store-wide (the same on "
     "every instance).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_admitted_total", WR_METRIC_COUNTER, "queue",
     "Users admitted; store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_consumed_total", WR_METRIC_COUNTER, "queue",
     "Entry tokens consumed; store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_expired_total", WR_METRIC_COUNTER, "queue",
     "Entry tokens that expired unused; store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_left_total", WR_METRIC_COUNTER, "queue",
     "Users who left the line or gave back a token; store-wide (the same on every "
     "instance).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_rejected_full_total", WR_METRIC_COUNTER, "queue",
     "Joins refused because the line was full; store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_sessions", WR_METRIC_GAUGE, "queue",
     "Open sessions (part of active, exact); store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_released_total", WR_METRIC_COUNTER, "queue",
     "Sessions ended by release or leave; store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_sessions_expired_total", WR_METRIC_COUNTER,
     "queue",
     "Sessions that lapsed after sessionSeconds; store-wide (the same on every "
     "instance).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_abandoned_total", WR_METRIC_COUNTER, "queue",
     "Page joins that never asked again, removed idleTimeoutSeconds after the fetch, and "
     "held people removed after awayHoldSeconds; store-wide (the same on every "
     "instance).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_away", WR_METRIC_GAUGE, "queue",
     "People in line now away (no join or poll for idleTimeoutSeconds), held ones "
     "included; store-wide.",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_held", WR_METRIC_GAUGE, "queue",
     "People whose turn came while away, held out of the line until they return; "
     "store-wide.",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_returned_total", WR_METRIC_COUNTER, "queue",
     "Held people admitted on their return; store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_unseen_expired_total", WR_METRIC_COUNTER, "queue",
     "Passes that expired before any answer carried them to their holder (part of "
     "expired_total; the holder was held, docs/API.md 1.3); store-wide.",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_stock_left", WR_METRIC_GAUGE, "queue",
     "What is left of the queue's stock (people who may still be let in); only for "
     "queues with a stock; store-wide.",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_prequeue", WR_METRIC_GAUGE, "queue",
     "People waiting for the sale opening (opensAt); store-wide.", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_opening_step_max_seconds", WR_METRIC_GAUGE, "queue",
     "Last sale opening this instance took part in: its longest synchronous store call "
     "(the embedded store's event-loop pause).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_opening_seconds", WR_METRIC_GAUGE, "queue",
     "Last sale opening this instance took part in: from its first chunk to its last.", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_admit_rate_observed", WR_METRIC_GAUGE, "queue",
     "Admissions per second over the last minute, from the store-wide admitted total "
     "(the same on every instance).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_admit_rate_configured", WR_METRIC_GAUGE, "queue",
     "Configured outflow rate, users per second; store-wide (the same on every "
     "instance).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_paused", WR_METRIC_GAUGE, "queue",
     "1 while admission is paused; store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_enabled", WR_METRIC_GAUGE, "queue",
     "1 while the line is on (0 = passthrough); store-wide (the same on every instance).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_autotune_rate", WR_METRIC_GAUGE, "queue",
     "The admission rate in use for a queue with autotune (users per second), as "
     "this instance last read it from the store (within a second).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_closed", WR_METRIC_GAUGE, "queue",
     "1 while the sale is closed (queue config closed); store-wide.", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queue_sold_out", WR_METRIC_GAUGE, "queue",
     "1 while the queue is sold out (stock 0, no pass live: stats soldOutAt); store-wide.", NULL,
     0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_queues_quiet", WR_METRIC_GAUGE, "",
     "Queues this instance calls once a second instead of every tick: nobody waiting, "
     "nothing live (docs/DESIGN.md, quiet queues).",
     NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_admission_errors_total", WR_METRIC_COUNTER, "",
     "Admission ticks of this instance that failed (store unavailable, timeout).", NULL, 0},
    {WR_METRICS_GROUP_SCHEDULER, "waitroom_wait_seconds", WR_METRIC_HISTOGRAM, "queue",
     "Time from joining the line to admission, seconds: for each user admitted by this "
     "instance's admission tick, the store time of that tick minus the user's arrival "
     "score. Every admission is counted once, by the instance whose tick made it; sum "
     "the series of all instances for the whole queue.",
     wait_bounds, sizeof(wait_bounds) / sizeof(wait_bounds[0])},
    {WR_METRICS_GROUP_REDIS, "waitroom_redis_wait_total", WR_METRIC_COUNTER, "result",
     "WAIT after consume/admission, by result (ok; short: fewer replicas acknowledged, "
     "the operation stands).",
     NULL, 0},
    {WR_METRICS_GROUP_BREAKER, "waitroom_breaker_state", WR_METRIC_GAUGE, "state",
     "Store circuit breaker state (1 = current).", NULL, 0},
    {WR_METRICS_GROUP_BREAKER, "waitroom_breaker_transitions_total", WR_METRIC_COUNTER, "to",
     "Store circuit breaker transitions, by the state moved to.", NULL, 0},
    {WR_METRICS_GROUP_BREAKER, "waitroom_breaker_rejected_total", WR_METRIC_COUNTER, "",
     "Store operations refused by the open circuit breaker.", NULL, 0},
};

const wr_metric_def_t *wr_metric_defs(size_t *n)
{
    if (n)
        *n = sizeof(rows) / sizeof(rows[0]);
    return rows;
}

const wr_metric_def_t *wr_metric_defs_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(rows) / sizeof(rows[0]); i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    return NULL;
}

void wr_metric_defs_describe(wr_metrics_t *m, wr_metric_group_t group)
{
    for (size_t i = 0; m && i < sizeof(rows) / sizeof(rows[0]); i++) {
        const wr_metric_def_t *r = &rows[i];
        if (r->group != group)
            continue;
        if (r->bounds)
            wr_metrics_describe_histogram(m, r->name, r->help, r->bounds, r->n_bounds);
        else
            wr_metrics_describe(m, r->name, r->type, r->help);
    }
}
