/*
 * metrics.h - counters, gauges and histograms rendered as Prometheus text
 * (exposition format 0.0.4). Knows nothing of HTTP or stores.
 *
 * A series is a family name plus a label string written exactly as it will
 * appear between braces ("route=\"join\",status=\"200\"", or NULL for none).
 * The number of series is not capped (K44: every queue is listed): callers
 * pass only label values they control (route names, status codes,
 * validated names of queues the admin API created), so hostile input can
 * never grow memory. An update that cannot be recorded (a label string over
 * WR_METRICS_LABELS_MAX, a type that does not match its family, out of
 * memory) is dropped, counted in waitroom_metrics_dropped_series_total and
 * logged. Every family's # HELP text is in the table of metric_defs.h.
 */
#ifndef WR_METRICS_H
#define WR_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_METRICS_LABELS_MAX 256 /* bytes of one label string */

typedef enum {
    WR_METRIC_COUNTER = 0,
    WR_METRIC_GAUGE = 1,
    WR_METRIC_HISTOGRAM = 2, /* default buckets (seconds): .0005 .001 .0025 .005 .01 .025 .05 .1
                                .25 .5 1 2.5 +Inf; or a family's own (describe_histogram) */
} wr_metric_type_t;

typedef struct wr_metrics wr_metrics_t;

/* Returns a new, empty registry or NULL on allocation failure. Caller frees
 * with wr_metrics_free. */
wr_metrics_t *wr_metrics_new(void);
void wr_metrics_free(wr_metrics_t *m);

/* Declares a family (its # HELP and # TYPE lines). name and help are
 * borrowed and must be static strings. Re-declaring is a no-op. A family
 * first used by an update (inc, set, observe) without this call gets the
 * type of the update and the help of its row in metric_defs.h (none for a
 * name that has no row). Prefer wr_metric_defs_describe (metric_defs.h). */
void wr_metrics_describe(wr_metrics_t *m, const char *name, wr_metric_type_t type,
                         const char *help);

/* Declares a histogram family with its own bucket bounds (seconds,
 * ascending, n <= 12; +Inf is added; borrowed, must be static) instead of
 * the default ones. No-op once the family has observations. */
void wr_metrics_describe_histogram(wr_metrics_t *m, const char *name, const char *help,
                                   const double *bounds, size_t n);

/* Adds delta to a counter series (created at 0 on first use). */
void wr_metrics_inc(wr_metrics_t *m, const char *name, const char *labels, uint64_t delta);

/* Sets a gauge series; on a counter family, sets the counter (for totals
 * mirrored from the store, e.g. admitted_total, or read from the system,
 * e.g. CPU seconds, which may be fractional; negative values give 0). */
void wr_metrics_set(wr_metrics_t *m, const char *name, const char *labels, double value);

/* Records one observation (seconds) in a histogram series. */
void wr_metrics_observe(wr_metrics_t *m, const char *name, const char *labels, double seconds);

/* A remembered series, for updates on a hot path (a poll's three): the
 * first update through a ref looks the series up by name and labels (as
 * the calls above) and remembers its slot; later ones go straight to it,
 * no hashing, no string compare. Valid until any series is removed (rare:
 * a queue deleted, a gauge dropped), after which the next update looks it
 * up again. Zero-initialised = not taken yet. One ref stands for one
 * (name, labels): pass the same two at every call with it. */
typedef struct {
    int32_t slot1;  /* the series' slot + 1; 0 = none */
    uint32_t epoch; /* the registry's removal count when taken */
} wr_metrics_ref_t;

/* wr_metrics_inc and wr_metrics_observe through ref (see above). */
void wr_metrics_inc_ref(wr_metrics_t *m, wr_metrics_ref_t *ref, const char *name,
                        const char *labels, uint64_t delta);
void wr_metrics_observe_ref(wr_metrics_t *m, wr_metrics_ref_t *ref, const char *name,
                            const char *labels, double seconds);

/* Removes every series of any family whose labels contain `needle`
 * (e.g. "queue=\"shop\"") - used when a queue is deleted. */
void wr_metrics_remove_matching(wr_metrics_t *m, const char *needle);

/* Removes the one series of family name with exactly these labels (NULL =
 * none), if it exists - a gauge that stops applying (a queue's stock set
 * back to null). */
void wr_metrics_remove(wr_metrics_t *m, const char *name, const char *labels);

/* Returns a counter's or gauge's current value, 0 if absent (tests, and this
 * instance's push counts in the admin JSON, http/api_push.c). */
double wr_metrics_get(const wr_metrics_t *m, const char *name, const char *labels);

/*
 * Renders every family and series as Prometheus text, families in
 * declaration order, series in creation order. Returns a malloc'd
 * NUL-terminated string (caller frees) and its length in *len, or NULL on
 * allocation failure.
 */
char *wr_metrics_render(const wr_metrics_t *m, size_t *len);

#endif
