/*
 * procstat.c - process metrics from /proc/self, as the Prometheus client
 * libraries compute them:
 *   cpu_seconds        (utime + stime) / CLK_TCK      /proc/self/stat fields 14, 15
 *   start_time_seconds btime + starttime / CLK_TCK    /proc/stat "btime", stat field 22
 *   resident_bytes     resident pages * page size     /proc/self/statm field 2
 *   open_fds           entries of /proc/self/fd (minus the one opendir holds)
 *   max_fds            the soft RLIMIT_NOFILE
 * /proc/self/stat's second field (the command name) may hold spaces and
 * parentheses, so the fields are counted from the last ')'. Each call
 * reads the files afresh (a scrape every few seconds; a few system calls).
 */
#include "base/procstat.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Reads path into buf (cap bytes, NUL-terminated); false on error. */
static bool read_small(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return n > 0;
}

static double boot_time(void)
{
    char buf[8192];
    if (!read_small("/proc/stat", buf, sizeof(buf)))
        return 0;
    const char *p = strstr(buf, "\nbtime ");
    return p ? strtod(p + 7, NULL) : 0;
}

wr_err_t wr_procstat_read(wr_procstat_t *out)
{
    wr_err_t rc = WR_OK;
    memset(out, 0, sizeof(*out));
    double tck = (double)sysconf(_SC_CLK_TCK);
    if (tck <= 0)
        tck = 100;

    char buf[1024];
    const char *p = read_small("/proc/self/stat", buf, sizeof(buf)) ? strrchr(buf, ')') : NULL;
    if (p) {
        /* After ')': field 3 (state) is the first; utime is 14, stime 15,
         * starttime 22. */
        unsigned long long v[23] = {0};
        int field = 3;
        for (char *s = (char *)p + 1; *s && field <= 22;) {
            while (*s == ' ')
                s++;
            char *end;
            unsigned long long x = strtoull(s, &end, 10);
            if (end == s)
                x = 0; /* the state letter */
            v[field++] = x;
            s = end;
            while (*s && *s != ' ')
                s++;
        }
        out->cpu_seconds = (double)(v[14] + v[15]) / tck;
        out->start_time_seconds = boot_time() + (double)v[22] / tck;
    } else {
        rc = WR_EIO;
    }

    if (read_small("/proc/self/statm", buf, sizeof(buf))) {
        unsigned long long size = 0, resident = 0;
        if (sscanf(buf, "%llu %llu", &size, &resident) == 2)
            out->resident_bytes = (double)resident * (double)sysconf(_SC_PAGESIZE);
    } else {
        rc = WR_EIO;
    }

    DIR *d = opendir("/proc/self/fd");
    if (d) {
        double n = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            if (e->d_name[0] != '.')
                n++;
        closedir(d);
        out->open_fds = n > 0 ? n - 1 : 0; /* not the descriptor of d itself */
    } else {
        rc = WR_EIO;
    }

    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        out->max_fds = rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur;
    return rc;
}
