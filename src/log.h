/*
 * log.h - leveled logging, one line per event to stderr:
 * "2026-11-30T02:03:04.123Z level=info msg..." or, in JSON mode, one JSON
 * object per line. Not thread-safe beyond what stdio gives (one loop).
 */
#ifndef WR_LOG_H
#define WR_LOG_H

#include <stdbool.h>

typedef enum {
    WR_LOG_DEBUG = 0,
    WR_LOG_INFO = 1,
    WR_LOG_WARN = 2,
    WR_LOG_ERROR = 3,
} wr_log_level_t;

/* Sets the minimum level written (default WR_LOG_INFO) and JSON mode. */
void wr_log_setup(wr_log_level_t min, bool json);

/* Parses "debug" | "info" | "warn" | "error". Returns false if unknown. */
bool wr_log_parse_level(const char *s, wr_log_level_t *out);

/* Writes one line if level >= the minimum. The message is truncated at 1 KiB. */
void wr_log(wr_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define wr_debug(...) wr_log(WR_LOG_DEBUG, __VA_ARGS__)
#define wr_info(...)  wr_log(WR_LOG_INFO, __VA_ARGS__)
#define wr_warn(...)  wr_log(WR_LOG_WARN, __VA_ARGS__)
#define wr_error(...) wr_log(WR_LOG_ERROR, __VA_ARGS__)

#endif
