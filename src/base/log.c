/*
 * log.c - leveled logging and the access log, as text or JSON lines.
 *
 * Each line is built in a fixed stack buffer (LINE_MAX_BYTES) by a small
 * writer (line_t) whose appends are all or nothing: a piece that does not
 * fit leaves the line as it was and marks it truncated. The closing bytes
 * ("}\n" or "\n") are reserved up front, so a JSON line is always a whole
 * object. The line is written with one write(2) to its descriptor: log
 * lines to 2 (standard error, which wr_log_open points at the error-log
 * file when there is one), access lines to their own descriptor. With
 * O_APPEND one write is one line, even with several writers.
 *
 * Reopen (SIGHUP, after logrotate renamed the files): the path is opened
 * again and dup2()ed onto the descriptor in use, so the descriptor number
 * never changes and a failure leaves the old file in use.
 *
 * Text values are written bare when they are made of "safe" bytes (no
 * space, quote, '=', backslash or control byte), else quoted with JSON
 * escapes, so a line splits back into key=value pairs. The logger never
 * allocates.
 */
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

#define MSG_MAX        1024 /* bytes of a printf-style message */
#define LINE_MAX_BYTES 8192 /* bytes of one line, newline included */
#define PATH_MAX_LOG   1024

static wr_log_level_t min_level = WR_LOG_INFO;
static bool json_mode;
static const char *names[] = {"debug", "info", "warn", "error"};

/* The files: the error log's path ("" = standard error, never reopened)
 * and the access log's descriptor (-1 = none) and path ("" = stdout). */
static char error_path[PATH_MAX_LOG];
static int access_fd = -1;
static char access_path[PATH_MAX_LOG];

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

/* ---- files ---- */

static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
}

/* Opens path and puts it on descriptor fd (dup2); fd's old file is closed
 * only on success. */
static wr_err_t reopen_onto(const char *path, int fd)
{
    int nfd = open_log(path);
    if (nfd < 0)
        return WR_EIO;
    int rc = dup2(nfd, fd);
    int e = errno;
    close(nfd);
    errno = e;
    return rc < 0 ? WR_EIO : WR_OK;
}

wr_err_t wr_log_open(const char *error_log, const char *access_log, const char **what)
{
    wr_err_t rc = WR_EIO;
    const char *failed = access_log;
    int afd = -1;
    if (access_log && access_log[0]) {
        errno = ENAMETOOLONG;
        if (strlen(access_log) >= PATH_MAX_LOG)
            goto out;
        afd = strcmp(access_log, "-") == 0 ? dup(STDOUT_FILENO) : open_log(access_log);
        if (afd < 0)
            goto out;
    }
    if (error_log && error_log[0]) {
        failed = error_log;
        errno = ENAMETOOLONG;
        if (strlen(error_log) >= PATH_MAX_LOG || reopen_onto(error_log, STDERR_FILENO) != WR_OK)
            goto out;
        snprintf(error_path, sizeof(error_path), "%s", error_log);
    }
    if (access_fd >= 0)
        close(access_fd);
    access_fd = afd;
    afd = -1;
    snprintf(access_path, sizeof(access_path), "%s",
             access_log && strcmp(access_log, "-") != 0 ? access_log : "");
    rc = WR_OK;
out:
    if (afd >= 0) {
        int e = errno;
        close(afd);
        errno = e;
    }
    if (rc != WR_OK && what)
        *what = failed;
    return rc;
}

wr_err_t wr_log_reopen(const char **what)
{
    wr_err_t rc = WR_OK;
    if (access_fd >= 0 && access_path[0] && reopen_onto(access_path, access_fd) != WR_OK) {
        rc = WR_EIO;
        if (what)
            *what = access_path;
    }
    int e = errno;
    if (error_path[0] && reopen_onto(error_path, STDERR_FILENO) != WR_OK) {
        rc = WR_EIO;
        e = errno;
        if (what)
            *what = error_path;
    }
    errno = e;
    return rc;
}

void wr_log_close(void)
{
    if (access_fd >= 0)
        close(access_fd);
    access_fd = -1;
    access_path[0] = '\0';
}

bool wr_log_access_enabled(void)
{
    return access_fd >= 0;
}

/* ---- the line writer ---- */

typedef struct {
    char buf[LINE_MAX_BYTES];
    size_t len;
    size_t cap; /* LINE_MAX_BYTES minus the reserved closing bytes */
    bool truncated;
} line_t;

/* Appends n bytes, all or nothing. */
static bool put(line_t *l, const char *s, size_t n)
{
    if (l->len + n > l->cap) {
        l->truncated = true;
        return false;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    return true;
}

static bool puts_(line_t *l, const char *s)
{
    return put(l, s, strlen(s));
}

/* Appends s JSON-escaped between quotes, all or nothing. */
static bool put_json_str(line_t *l, const char *s)
{
    size_t start = l->len;
    if (!put(l, "\"", 1))
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        size_t n = 0;
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            n = 2;
        } else if (*p == '\n') {
            memcpy(esc, "\\n", 2);
            n = 2;
        } else if (*p < 0x20 || *p == 0x7f) {
            n = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", *p);
        } else {
            esc[0] = (char)*p;
            n = 1;
        }
        if (!put(l, esc, n)) {
            l->len = start;
            return false;
        }
    }
    if (!put(l, "\"", 1)) {
        l->len = start;
        return false;
    }
    return true;
}

/* A text value needs quotes when empty or when it has a byte that would
 * make key=value pairs ambiguous. */
static bool text_bare(const char *s)
{
    if (!*s)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p == 0x7f || *p == '"' || *p == '=' || *p == '\\')
            return false;
    return true;
}

/* Appends one field (with its leading separator), all or nothing. */
static void put_field(line_t *l, const wr_log_field_t *f)
{
    size_t start = l->len;
    char num[32];
    bool ok;
    if (json_mode) {
        ok = put(l, ",", 1) && put_json_str(l, f->key) && put(l, ":", 1);
        if (ok && f->kind == WR_LOG_INT) {
            snprintf(num, sizeof(num), "%lld", f->num);
            ok = puts_(l, num);
        } else if (ok) {
            ok = !f->str                 ? puts_(l, "null")
                 : f->kind == WR_LOG_RAW ? puts_(l, f->str)
                                         : put_json_str(l, f->str);
        }
    } else {
        ok = put(l, " ", 1) && puts_(l, f->key) && put(l, "=", 1);
        if (ok && f->kind == WR_LOG_INT) {
            snprintf(num, sizeof(num), "%lld", f->num);
            ok = puts_(l, num);
        } else if (ok) {
            ok = !f->str                                      ? puts_(l, "-")
                 : f->kind == WR_LOG_RAW || text_bare(f->str) ? puts_(l, f->str)
                                                              : put_json_str(l, f->str);
        }
    }
    if (!ok)
        l->len = start;
}

static void timestamp(char ts[32])
{
    int64_t now_us = wr_clock_wall_us();
    time_t secs = (time_t)(now_us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(ts, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, 32 - n, ".%03dZ", (int)(now_us % 1000000 / 1000));
}

/* Starts a line: JSON {"ts":..,"level":..,"msg":..  or text "TS level=L msg"
 * (level NULL: text lines without level and message). */
static void line_start(line_t *l, const char *level, const char *msg)
{
    char ts[32];
    timestamp(ts);
    l->len = 0;
    l->truncated = false;
    l->cap = sizeof(l->buf) - 24; /* ,"truncated":true}\n */
    if (json_mode) {
        puts_(l, "{\"ts\":\"");
        puts_(l, ts);
        puts_(l, "\",\"level\":\"");
        puts_(l, level ? level : "info");
        puts_(l, "\",\"msg\":");
        if (!put_json_str(l, msg))
            puts_(l, "\"\"");
    } else {
        puts_(l, ts);
        if (level) {
            puts_(l, " level=");
            puts_(l, level);
            if (msg[0] && put(l, " ", 1) && !puts_(l, msg)) {
                /* a message longer than the line: as much as fits */
                size_t room = l->cap - l->len;
                put(l, msg, room);
            }
        }
    }
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* nowhere to report it */
        p += w;
        n -= (size_t)w;
    }
}

static void line_end(line_t *l, int fd)
{
    l->cap = sizeof(l->buf);
    if (json_mode) {
        if (l->truncated)
            puts_(l, ",\"truncated\":true");
        puts_(l, "}");
    }
    puts_(l, "\n");
    write_all(fd, l->buf, l->len);
}

/* ---- entry points ---- */

void wr_log_fields(wr_log_level_t level, const char *msg, const wr_log_field_t *f, size_t n)
{
    if (level < min_level || level > WR_LOG_ERROR)
        return;
    line_t l;
    line_start(&l, names[level], msg ? msg : "");
    for (size_t i = 0; i < n; i++)
        put_field(&l, &f[i]);
    line_end(&l, STDERR_FILENO);
}

void wr_log(wr_log_level_t level, const char *fmt, ...)
{
    if (level < min_level || level > WR_LOG_ERROR)
        return;
    char msg[MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    wr_log_fields(level, msg, NULL, 0);
}

void wr_log_access(const wr_log_field_t *f, size_t n)
{
    if (access_fd < 0)
        return;
    line_t l;
    line_start(&l, json_mode ? "info" : NULL, "request");
    for (size_t i = 0; i < n; i++)
        put_field(&l, &f[i]);
    line_end(&l, access_fd);
}
