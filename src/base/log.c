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
 *
 * The writer thread (K27: a log reader that stops reading stopped the
 * server, a blocking write(2) on the event loop). Once wr_log_async_start
 * ran, a line is not written by the caller: it is copied into its
 * destination's buffer (BUF_BYTES, one for the error log, one for the
 * access log) under a mutex, and a writer thread per destination (so a
 * stalled access log cannot hold up the error line that says so) writes it
 * out with ordinary blocking writes, whole batches of whole lines (double
 * buffered: the loop fills one while the thread writes the other). So a
 * full pipe, a stuck collector, a stalled disk or NFS server blocks the
 * thread, never the loop: when a line does not fit, it is dropped and
 * counted (wr_log_dropped), and the first drop of a stall queues one warn
 * line on the error log ("... not being written: dropping them"); the
 * first line after the writer caught up (everything queued written) queues
 * another with the count. A destination that stalls again and again is
 * told at most once per NOTICE_MS; the count of the next end told covers
 * every line dropped since the last one told.
 * Why a thread and not O_NONBLOCK descriptors: O_NONBLOCK does nothing for
 * regular files (a stalled disk or NFS still blocks), and on standard
 * output or error it is a flag of the open file description, shared with
 * the supervisor and other processes writing the same pipe or terminal.
 * The cost on the loop is a memcpy and a mutex round trip per line
 * (docs/BENCHMARKS.md), and fewer write(2) calls than one per line.
 * Before wr_log_async_start, after wr_log_async_stop, and in a forked
 * child (pthread_atfork), lines are written directly as before.
 */
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
#define BUF_BYTES      (256 * 1024) /* queued bytes per destination (writer thread) */
#define NOTICE_MS      10000        /* at most one stall told per destination per 10 s */

static wr_log_level_t min_level = WR_LOG_INFO;
static bool json_mode;
static const char *names[] = {"debug", "info", "warn", "error"};

/* The files: the error log's path ("" = standard error, never reopened)
 * and the access log's descriptor (-1 = none) and path ("" = stdout). */
static char error_path[PATH_MAX_LOG];
static int access_fd = -1;
static char access_path[PATH_MAX_LOG];

/* ---- the writer thread (see the top) ---- */

typedef struct {
    const char *name; /* "error log", "access log" */
    char bufs[2][BUF_BYTES];
    char *fill;      /* the buffer lines are appended to (under mu) */
    size_t fill_len; /* bytes in fill */
    int fd;          /* where fill goes: 2, or access_fd (under mu) */
    bool writing;    /* its thread is in a write (outside mu) */
    pthread_t thread;
    bool dropping;          /* a stall: lines dropped, the writer not caught up since */
    bool said;              /* this stall was told (its end will be, with the count) */
    uint64_t dropped_stall; /* dropped since the last count told */
    int64_t said_ms;        /* monotonic ms of the last stall told */
} dest_t;

enum { D_ERROR = 0, D_ACCESS = 1 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* lines queued, or stop */
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER; /* a batch written */
static bool running;        /* the threads take the lines (else written directly) */
static bool stopping;       /* wr_log_async_stop: write what is queued, then end */
static int retired_fd = -1; /* an access descriptor to close once its write ends */
static uint64_t dropped_total;
static dest_t dests[2] = {{.name = "error log", .fd = STDERR_FILENO},
                          {.name = "access log", .fd = -1}};

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

/* Closes an access descriptor given up, or, while the writer thread is
 * writing it, lets the thread close it when that write returns (so the
 * number is not reused under it). mu held. */
static void retire_locked(int fd)
{
    if (fd < 0)
        return;
    if (dests[D_ACCESS].writing && dests[D_ACCESS].fd == fd) {
        if (retired_fd >= 0)
            close(retired_fd);
        retired_fd = fd;
    } else {
        close(fd);
    }
}

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
    pthread_mutex_lock(&mu);
    retire_locked(access_fd);
    access_fd = afd;
    dests[D_ACCESS].fd = afd;
    pthread_mutex_unlock(&mu);
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
    pthread_mutex_lock(&mu);
    retire_locked(access_fd);
    access_fd = -1;
    dests[D_ACCESS].fd = -1;
    dests[D_ACCESS].fill_len = 0; /* nowhere to go */
    pthread_mutex_unlock(&mu);
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
    ok = json_mode ? put(l, ",", 1) && put_json_str(l, f->key) && put(l, ":", 1)
                   : put(l, " ", 1) && puts_(l, f->key) && put(l, "=", 1);
    if (ok && f->kind == WR_LOG_INT) {
        snprintf(num, sizeof(num), "%lld", f->num);
        ok = puts_(l, num);
    } else if (ok && json_mode) {
        ok = !f->str                 ? puts_(l, "null")
             : f->kind == WR_LOG_RAW ? puts_(l, f->str)
                                     : put_json_str(l, f->str);
    } else if (ok) {
        ok = !f->str                                      ? puts_(l, "-")
             : f->kind == WR_LOG_RAW || text_bare(f->str) ? puts_(l, f->str)
                                                          : put_json_str(l, f->str);
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

/* Closes the line (JSON "}", the newline). */
static void line_close(line_t *l)
{
    l->cap = sizeof(l->buf);
    if (json_mode) {
        if (l->truncated)
            puts_(l, ",\"truncated\":true");
        puts_(l, "}");
    }
    puts_(l, "\n");
}

/* Appends a line to d's buffer if it fits; false (nothing changed) if not.
 * mu held. */
static bool append_locked(dest_t *d, const char *p, size_t n)
{
    if (d->fd < 0 || n > BUF_BYTES - d->fill_len)
        return false;
    memcpy(d->fill + d->fill_len, p, n);
    d->fill_len += n;
    pthread_cond_broadcast(&work_cv); /* two threads wait on it */
    return true;
}

/* Queues the logger's own warn line about destination d on the error log
 * (dropped silently, and counted, when it does not fit). mu held. */
static void notice_locked(const dest_t *d, const char *msg, uint64_t dropped)
{
    line_t l;
    line_start(&l, names[WR_LOG_WARN], msg);
    wr_log_field_t f[] = {WR_LOG_S("log", d->name), WR_LOG_I("dropped", dropped)};
    for (size_t i = 0; i < (dropped ? 2u : 1u); i++)
        put_field(&l, &f[i]);
    line_close(&l);
    if (!append_locked(&dests[D_ERROR], l.buf, l.len))
        dropped_total++;
}

/* Writes a finished line to destination di: queued for the writer thread
 * when it runs (dropped and counted when the buffer is full), else
 * directly. */
static void emit(int di, line_t *l)
{
    line_close(l);
    dest_t *d = &dests[di];
    pthread_mutex_lock(&mu);
    if (!running) {
        int fd = d->fd;
        pthread_mutex_unlock(&mu);
        if (fd >= 0)
            write_all(fd, l->buf, l->len);
        return;
    }
    bool caught_up = d->fill_len == 0 && !d->writing; /* all written before this line */
    if (append_locked(d, l->buf, l->len)) {
        if (d->dropping && caught_up) { /* the stall is over */
            d->dropping = false;
            if (d->said) {
                notice_locked(d, "log: lines are written again after a stall", d->dropped_stall);
                d->dropped_stall = 0;
                d->said = false;
            }
        }
    } else if (d->fd >= 0) {
        dropped_total++;
        d->dropped_stall++;
        int64_t now = wr_clock_mono_ms();
        if (!d->dropping && (d->said_ms == 0 || now - d->said_ms >= NOTICE_MS)) {
            notice_locked(d,
                          "log: lines are not being written (the reader or the disk is "
                          "stalled); dropping them until it catches up",
                          0);
            d->said = true;
            d->said_ms = now;
        }
        d->dropping = true;
    }
    pthread_mutex_unlock(&mu);
}

/* One thread per destination (a stalled access log must not hold up the
 * error log that says so): writes its buffer out, batch by batch. */
static void *writer_main(void *arg)
{
    dest_t *d = arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!stopping && d->fill_len == 0)
            pthread_cond_wait(&work_cv, &mu);
        if (d->fill_len == 0)
            break; /* stopping, all written */
        char *out = d->fill;
        size_t n = d->fill_len;
        int fd = d->fd;
        d->fill = out == d->bufs[0] ? d->bufs[1] : d->bufs[0];
        d->fill_len = 0;
        d->writing = true;
        pthread_mutex_unlock(&mu);
        write_all(fd, out, n);
        pthread_mutex_lock(&mu);
        d->writing = false;
        if (d == &dests[D_ACCESS] && retired_fd >= 0) {
            close(retired_fd);
            retired_fd = -1;
        }
        pthread_cond_broadcast(&idle_cv);
    }
    pthread_cond_broadcast(&idle_cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* fork(): the child (the memory store's snapshot writer) has no writer
 * thread; it writes its lines directly. The mutex is held across fork so
 * that no buffer is half-written in the child. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&mu);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&mu);
}

static void atfork_child(void)
{
    running = false;
    dests[0].writing = dests[1].writing = false;
    pthread_mutex_unlock(&mu);
}

wr_err_t wr_log_async_start(void)
{
    static bool atfork_done;
    pthread_mutex_lock(&mu);
    bool already = running;
    pthread_mutex_unlock(&mu);
    if (already)
        return WR_OK;
    if (!atfork_done) {
        if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child) != 0)
            return WR_ENOMEM;
        atfork_done = true;
    }
    for (int di = 0; di < 2; di++) {
        dests[di].fill = dests[di].bufs[0];
        dests[di].fill_len = 0;
    }
    stopping = false;
    if (pthread_create(&dests[0].thread, NULL, writer_main, &dests[0]) != 0)
        return WR_ENOMEM;
    if (pthread_create(&dests[1].thread, NULL, writer_main, &dests[1]) != 0) {
        pthread_mutex_lock(&mu);
        stopping = true;
        pthread_cond_broadcast(&work_cv);
        pthread_mutex_unlock(&mu);
        pthread_join(dests[0].thread, NULL);
        return WR_ENOMEM;
    }
    pthread_mutex_lock(&mu);
    running = true;
    pthread_mutex_unlock(&mu);
    return WR_OK;
}

/* Waits until every queued line is written or timeout_ms passed (mu
 * held); true when all was written. */
static bool drained_locked(int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (dests[0].fill_len > 0 || dests[1].fill_len > 0 || dests[0].writing || dests[1].writing) {
        if (pthread_cond_timedwait(&idle_cv, &mu, &until) == ETIMEDOUT)
            return false;
    }
    return true;
}

bool wr_log_flush(int timeout_ms)
{
    pthread_mutex_lock(&mu);
    bool ok = !running || drained_locked(timeout_ms);
    pthread_mutex_unlock(&mu);
    return ok;
}

bool wr_log_async_stop(int timeout_ms)
{
    pthread_mutex_lock(&mu);
    if (!running) {
        pthread_mutex_unlock(&mu);
        return true;
    }
    stopping = true;
    pthread_cond_broadcast(&work_cv);
    bool ok = drained_locked(timeout_ms);
    if (ok)
        running = false; /* from now on, lines are written directly */
    pthread_mutex_unlock(&mu);
    for (int di = 0; di < 2; di++) {
        if (ok)
            pthread_join(dests[di].thread, NULL);
        else
            pthread_detach(dests[di].thread); /* may be stuck in a write: exit ends it */
    }
    return ok;
}

uint64_t wr_log_dropped(void)
{
    pthread_mutex_lock(&mu);
    uint64_t n = dropped_total;
    pthread_mutex_unlock(&mu);
    return n;
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
    emit(D_ERROR, &l);
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
    emit(D_ACCESS, &l);
}
