/*
 * fake_redis.c - see fake_redis.h. One thread, poll() over the listening
 * socket and up to MAXC clients, 20 ms ticks so stop is noticed quickly.
 * State shared with the test thread (reply bytes, counters, drop request)
 * is guarded by one mutex.
 */
#include "fake_redis.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAXC     8
#define NCOUNTS  16
#define REPLYMAX 4096

struct fake_redis {
    char path[512];
    int lfd;
    int cfd[MAXC];
    redisReader *rd[MAXC];
    pthread_t th;
    pthread_mutex_t mu;
    bool stop, drop;
    char reply[REPLYMAX];
    size_t reply_len;
    char names[NCOUNTS][16];
    int counts[NCOUNTS];
};

static void count(fake_redis_t *f, const char *name)
{
    for (int i = 0; i < NCOUNTS; i++) {
        if (f->names[i][0] == '\0')
            snprintf(f->names[i], sizeof f->names[i], "%s", name);
        if (strcmp(f->names[i], name) == 0) {
            f->counts[i]++;
            return;
        }
    }
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void close_client(fake_redis_t *f, int i)
{
    close(f->cfd[i]);
    f->cfd[i] = -1;
    redisReaderFree(f->rd[i]);
    f->rd[i] = NULL;
}

static void answer(fake_redis_t *f, int fd, const redisReply *cmd)
{
    char name[16] = "";
    if (cmd->type == REDIS_REPLY_ARRAY && cmd->elements > 0 &&
        cmd->element[0]->type == REDIS_REPLY_STRING) {
        snprintf(name, sizeof name, "%.*s", (int)cmd->element[0]->len, cmd->element[0]->str);
        for (char *p = name; *p; p++)
            if (*p >= 'a' && *p <= 'z')
                *p = (char)(*p - 'a' + 'A');
    }
    pthread_mutex_lock(&f->mu);
    count(f, name);
    char out[REPLYMAX];
    size_t n;
    if (strcmp(name, "PING") == 0) {
        n = (size_t)snprintf(out, sizeof out, "+PONG\r\n");
    } else if (strcmp(name, "SELECT") == 0) {
        n = (size_t)snprintf(out, sizeof out, "+OK\r\n");
    } else if (strcmp(name, "ROLE") == 0) { /* redis_conn's connect checks */
        n = (size_t)snprintf(out, sizeof out, "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");
    } else if (strcmp(name, "CONFIG") == 0) {
        n = (size_t)snprintf(out, sizeof out, "*0\r\n");
    } else if (strcmp(name, "SCRIPT") == 0) {
        n = (size_t)snprintf(out, sizeof out, "+OK\r\n");
    } else if (strcmp(name, "SADD") == 0 || strcmp(name, "SREM") == 0) {
        n = (size_t)snprintf(out, sizeof out, ":1\r\n");
    } else {
        n = f->reply_len;
        memcpy(out, f->reply, n);
    }
    pthread_mutex_unlock(&f->mu);
    write_all(fd, out, n);
}

static void *run(void *arg)
{
    fake_redis_t *f = arg;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        bool stop = f->stop, drop = f->drop;
        f->drop = false;
        pthread_mutex_unlock(&f->mu);
        if (stop)
            break;
        if (drop)
            for (int i = 0; i < MAXC; i++)
                if (f->cfd[i] >= 0)
                    close_client(f, i);
        struct pollfd p[MAXC + 1];
        int map[MAXC + 1], n = 0;
        p[n] = (struct pollfd){.fd = f->lfd, .events = POLLIN};
        map[n++] = -1;
        for (int i = 0; i < MAXC; i++) {
            if (f->cfd[i] >= 0) {
                p[n] = (struct pollfd){.fd = f->cfd[i], .events = POLLIN};
                map[n++] = i;
            }
        }
        if (poll(p, (nfds_t)n, 20) <= 0)
            continue;
        for (int k = 0; k < n; k++) {
            if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (map[k] < 0) {
                int c = accept(f->lfd, NULL, NULL);
                if (c < 0)
                    continue;
                int slot = -1;
                for (int i = 0; i < MAXC && slot < 0; i++)
                    if (f->cfd[i] < 0)
                        slot = i;
                if (slot < 0) {
                    close(c);
                    continue;
                }
                f->cfd[slot] = c;
                f->rd[slot] = redisReaderCreate();
                continue;
            }
            int i = map[k];
            char buf[8192];
            ssize_t r = read(f->cfd[i], buf, sizeof buf);
            if (r <= 0) {
                close_client(f, i);
                continue;
            }
            redisReaderFeed(f->rd[i], buf, (size_t)r);
            void *cmd = NULL;
            while (redisReaderGetReply(f->rd[i], &cmd) == REDIS_OK && cmd) {
                answer(f, f->cfd[i], cmd);
                freeReplyObject(cmd);
                cmd = NULL;
            }
        }
    }
    return NULL;
}

fake_redis_t *fake_redis_start(const char *path)
{
    fake_redis_t *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    snprintf(f->path, sizeof f->path, "%s", path);
    for (int i = 0; i < MAXC; i++)
        f->cfd[i] = -1;
    pthread_mutex_init(&f->mu, NULL);
    f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    unlink(path);
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(f->lfd, 16) != 0 || pthread_create(&f->th, NULL, run, f) != 0) {
        if (f->lfd >= 0)
            close(f->lfd);
        pthread_mutex_destroy(&f->mu);
        free(f);
        return NULL;
    }
    return f;
}

void fake_redis_reply(fake_redis_t *f, const char *raw, size_t len)
{
    pthread_mutex_lock(&f->mu);
    if (len > REPLYMAX)
        len = REPLYMAX;
    memcpy(f->reply, raw, len);
    f->reply_len = len;
    pthread_mutex_unlock(&f->mu);
}

int fake_redis_count(fake_redis_t *f, const char *cmd)
{
    int n = 0;
    pthread_mutex_lock(&f->mu);
    for (int i = 0; i < NCOUNTS; i++)
        if (strcmp(f->names[i], cmd) == 0)
            n = f->counts[i];
    pthread_mutex_unlock(&f->mu);
    return n;
}

void fake_redis_drop(fake_redis_t *f)
{
    pthread_mutex_lock(&f->mu);
    f->drop = true;
    pthread_mutex_unlock(&f->mu);
}

void fake_redis_stop(fake_redis_t *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->stop = true;
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->th, NULL);
    for (int i = 0; i < MAXC; i++)
        if (f->cfd[i] >= 0)
            close_client(f, i);
    close(f->lfd);
    unlink(f->path);
    pthread_mutex_destroy(&f->mu);
    free(f);
}
