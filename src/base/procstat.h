/*
 * procstat.h - this process's resource use, read from /proc/self (Linux),
 * for the standard process_* metrics of Prometheus client libraries.
 */
#ifndef WR_PROCSTAT_H
#define WR_PROCSTAT_H

#include <stdint.h>

#include "base/error.h"

typedef struct {
    double cpu_seconds;        /* user + system CPU time, seconds */
    double resident_bytes;     /* resident set size, bytes */
    double open_fds;           /* open file descriptors */
    double max_fds;            /* soft RLIMIT_NOFILE (-1 = unlimited) */
    double start_time_seconds; /* process start, Unix seconds */
} wr_procstat_t;

/* Reads the numbers now. WR_OK, or WR_EIO when /proc cannot be read (the
 * fields then hold what could be read, 0 for the rest). */
wr_err_t wr_procstat_read(wr_procstat_t *out);

#endif
