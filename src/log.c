/*
 * log.c - leveled one-line logging to stderr.
 *
 * Each line is formatted into a fixed 1 KiB stack buffer and written with
 * one fwrite, so lines from one process never interleave mid-line. In JSON
 * mode the message is escaped by hand (quotes, backslash, control bytes):
 * the logger must not allocate, so it can log an allocation failure.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static wr_log_level_t min_level = WR_LOG_INFO;
static bool json_mode;

static const char *names[] = {"debug", "info", "warn", "error"};

void wr_log_setup(wr_log_level_t min, bool json)
{
    min_level = min;
    json_mode = json;
}

bool wr_log_parse_level(const char *s, wr_log_level_t *out)
{
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (wr_log_level_t)i;
            return true;
        }
    }
    return false;
}

void wr_log(wr_log_level_t level, const char *fmt, ...)
{
    if (level < min_level || level > WR_LOG_ERROR)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char ts[32];
    size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof(ts) - n, ".%03dZ", (int)(tv.tv_usec / 1000));

    char line[2048 + 64];
    int len;
    if (json_mode) {
        char esc[2048];
        size_t j = 0;
        for (const unsigned char *p = (const unsigned char *)msg; *p && j < sizeof(esc) - 7; p++) {
            if (*p == '"' || *p == '\\') {
                esc[j++] = '\\';
                esc[j++] = (char)*p;
            } else if (*p < 0x20) {
                j += (size_t)snprintf(esc + j, sizeof(esc) - j, "\\u%04x", *p);
            } else {
                esc[j++] = (char)*p;
            }
        }
        esc[j] = 0;
        len = snprintf(line, sizeof(line), "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"%s\"}\n", ts,
                       names[level], esc);
    } else {
        len = snprintf(line, sizeof(line), "%s level=%s %s\n", ts, names[level], msg);
    }
    if (len < 0)
        return;
    if ((size_t)len >= sizeof(line))
        len = (int)sizeof(line) - 1;
    fwrite(line, 1, (size_t)len, stderr);
}
