/*
 * log.h - leveled logging and the access log, one line per event, as text
 * or as JSON.
 *
 * Text:  "2026-11-30T02:03:04.123Z level=info message key=value ..."
 * JSON:  {"ts":"2026-11-30T02:03:04.123Z","level":"info","msg":"message","key":value,...}
 *
 * ts is RFC 3339 UTC with milliseconds; the keys ts, level and msg are in
 * every JSON line (access log lines too: level "info", msg "request"),
 * followed by the line's fields in the order given. Log lines go to
 * standard error, or to a file (wr_log_open); access lines to a file or
 * standard output. Files are opened O_APPEND and reopened by
 * wr_log_reopen (SIGHUP, after logrotate moved them). Lines are written
 * whole (one write(2) per line, or per batch of whole lines), so they never
 * interleave mid-line. Nothing here allocates: an allocation failure can be
 * logged. Called from one thread (the loop).
 *
 * K27: after wr_log_async_start a line is queued (a bounded buffer per
 * destination) for a writer thread, so a stalled destination (a pipe
 * nobody reads, a stuck collector, a stalled disk) never blocks the
 * caller: lines that do not fit are dropped and counted (wr_log_dropped),
 * and the error log says so once per stall, and again with the count when
 * lines fit again.
 */
#ifndef WR_LOG_H
#define WR_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef enum {
    WR_LOG_DEBUG = 0,
    WR_LOG_INFO = 1,
    WR_LOG_WARN = 2,
    WR_LOG_ERROR = 3,
} wr_log_level_t;

typedef enum {
    WR_LOG_TEXT = 0, /* "TS level=L msg key=value" (default) */
    WR_LOG_JSON = 1, /* one JSON object a line */
} wr_log_format_t;

/* What a field's value is. */
typedef enum {
    WR_LOG_STR = 0, /* text: JSON-escaped, or quoted in text mode when needed */
    WR_LOG_INT = 1, /* an integer */
    WR_LOG_RAW = 2, /* valid JSON (an object, array, ...), written as it is */
} wr_log_kind_t;

/* One key = value of a structured line. Everything borrowed for the call. */
typedef struct {
    const char *key; /* [a-z_]+ */
    wr_log_kind_t kind;
    const char *str; /* WR_LOG_STR, WR_LOG_RAW; NULL = JSON null / "-" */
    long long num;   /* WR_LOG_INT */
} wr_log_field_t;

#define WR_LOG_S(k, v) ((wr_log_field_t){.key = (k), .kind = WR_LOG_STR, .str = (v)})
#define WR_LOG_I(k, v) ((wr_log_field_t){.key = (k), .kind = WR_LOG_INT, .num = (long long)(v)})
#define WR_LOG_J(k, v) ((wr_log_field_t){.key = (k), .kind = WR_LOG_RAW, .str = (v)})

/* Sets the minimum level written (default WR_LOG_INFO) and JSON mode. */
void wr_log_setup(wr_log_level_t min, bool json);

/* Parses "debug" | "info" | "warn" | "error". Returns false if unknown. */
bool wr_log_parse_level(const char *s, wr_log_level_t *out);

/*
 * Opens the log files: error_log (NULL or "" = standard error; else the
 * file, also made the process's standard error so that libraries' own
 * messages land there too) and access_log (NULL or "" = no access log,
 * "-" = standard output, else the file). Files are created 0640 and
 * appended to. WR_OK, or WR_EIO with errno set and nothing changed; *what
 * (may be NULL) then names the path that failed.
 */
wr_err_t wr_log_open(const char *error_log, const char *access_log, const char **what);

/* Reopens the files opened by wr_log_open at the same paths (logrotate).
 * WR_OK, or WR_EIO (errno set; the old file stays in use) naming the path
 * in *what. Standard streams are left alone. */
wr_err_t wr_log_reopen(const char **what);

/* Starts the writer thread: from now on lines are queued, never written by
 * the caller (see the top). Call it after wr_log_open, once the process
 * will not daemonize; a forked child writes directly. WR_OK (also when
 * already started), WR_ENOMEM (no thread: lines stay direct). */
wr_err_t wr_log_async_start(void);

/* Waits until the queued lines are written, at most timeout_ms; true when
 * they were (or no thread runs). For tests and before exit. */
bool wr_log_flush(int timeout_ms);

/* Writes what is queued (at most timeout_ms: a stalled destination must not
 * hold up the exit) and stops the thread; lines are then written directly.
 * Returns false when the time ran out: the thread is left in its write
 * (the process exit ends it) and later lines are still queued. */
bool wr_log_async_stop(int timeout_ms);

/* Lines dropped because their destination did not keep up, since the
 * start (waitroom_log_lines_dropped_total). */
uint64_t wr_log_dropped(void);

/* Closes the access log (standard error stays). */
void wr_log_close(void);

/* True when an access log is open. */
bool wr_log_access_enabled(void);

/* Writes one line if level >= the minimum. The message is truncated at 1 KiB. */
void wr_log(wr_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes one line with msg and n fields if level >= the minimum. A line is
 * at most 8 KiB: fields that do not fit are left out (JSON lines then get
 * "truncated":true), so a line is always whole and valid. */
void wr_log_fields(wr_log_level_t level, const char *msg, const wr_log_field_t *f, size_t n);

/* Writes one access-log line of n fields (no-op without an access log):
 * text "TS key=value ...", JSON {"ts":..,"level":"info","msg":"request",...}. */
void wr_log_access(const wr_log_field_t *f, size_t n);

#define wr_debug(...) wr_log(WR_LOG_DEBUG, __VA_ARGS__)
#define wr_info(...)  wr_log(WR_LOG_INFO, __VA_ARGS__)
#define wr_warn(...)  wr_log(WR_LOG_WARN, __VA_ARGS__)
#define wr_error(...) wr_log(WR_LOG_ERROR, __VA_ARGS__)

#endif
