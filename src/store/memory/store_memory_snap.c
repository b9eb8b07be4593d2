/*
 * store_memory_snap.c - the snapshots of the embedded store (store_memory)
 * with a data_dir: when and by whom the snapshot file (mem_snapshot.h) is
 * written.
 *
 * A snapshot file holds everything; it is written atomically every
 * snapshot_interval_ms when something changed - by a forked child, so the
 * loop never waits for the disk - and in process on close (after the
 * child, if any, is done) and on demand (wr_store_memory_snapshot); it is
 * loaded at open (store_memory.c). The child writes the state as it was
 * at fork() (copy-on-write); at most one child runs at a time, a reap
 * timer collects it soon after it exits, and a failed child marks the
 * state dirty again so the next round retries. A corrupt or unreadable
 * file fails open() with WR_EIO and a log line naming the problem.
 */
#include "store/memory/store_memory_internal.h"

#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "store/memory/mem_snapshot.h"

#define CHILD_WAIT_MS 60000 /* longest wait for a snapshot child at close */

/* Writes a snapshot in process; a written state is clean. */
static wr_err_t write_snapshot(mstore_t *s)
{
    wr_err_t err = wr_mem_snapshot_write(&s->db, s->data_dir, wr_store_memory__now_us(s));
    if (err == WR_OK)
        s->dirty = false;
    return err;
}

/* Collects the background snapshot child, if any; block = wait for it.
 * A failed child marks the state dirty again, so the next round retries. */
static void reap_child(mstore_t *s, bool block)
{
    if (s->snap_pid <= 0)
        return;
    int status = 0;
    pid_t r;
    /* Blocking waits are bounded: a child still not done after
     * CHILD_WAIT_MS (a 10M-user snapshot takes about 1 s) is killed and the
     * caller writes in process. */
    for (int waited = 0;; waited += 10) {
        r = waitpid(s->snap_pid, &status, WNOHANG);
        if (r != 0 && !(r < 0 && errno == EINTR))
            break;
        if (r == 0 && (!block || waited >= CHILD_WAIT_MS)) {
            if (!block)
                return; /* still writing */
            wr_warn("store memory: snapshot child %ld hangs; killing it", (long)s->snap_pid);
            kill(s->snap_pid, SIGKILL);
            while ((r = waitpid(s->snap_pid, &status, 0)) < 0 && errno == EINTR)
                ;
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        /* r < 0: reaped elsewhere (SIGCHLD ignored); the outcome is unknown */
        if (r >= 0)
            wr_warn("store memory: background snapshot failed; will retry");
        s->dirty = true;
    }
    s->snap_pid = 0;
}

/* Collects the snapshot child soon after it exits rather than at the next
 * snapshot round, so no exited child lingers as a zombie for seconds. */
static void on_reap_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mstore_t *s = arg;
    reap_child(s, false);
    if (s->snap_pid > 0 && !s->closing) {
        struct timeval tv = {0, 100 * 1000};
        evtimer_add(s->ev_reap, &tv);
    }
}

/*
 * Periodic snapshot, in a forked child: the child writes the state as it
 * was at fork() (copy-on-write) while the loop goes on serving, so a long
 * line does not stall every request for the length of a write (about
 * 0.15 s per million users). At most one child at a time; without fork,
 * the snapshot is written in process.
 */
static void on_snap_timer(evutil_socket_t fd, short what, void *arg)
{
    mstore_t *s = arg;
    reap_child(s, false);
    if (!s->dirty || s->closing || s->snap_pid > 0)
        return;
    wr_crypto_sha256_t *md = wr_mem_snapshot_digest_new();
    if (!md)
        return; /* retried next round: still dirty */
    pid_t pid = fork();
    if (pid == 0) {
        /* The child shares libevent's signal socket: a SIGTERM to the whole
         * process group must reach the parent once, not twice (the second
         * would skip its graceful drain). The child just writes and exits. */
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        _exit(wr_mem_snapshot_write_md(&s->db, s->data_dir, wr_store_memory__now_us(s), md) == WR_OK
                  ? 0
                  : 1);
    }
    wr_crypto_sha256_free(md);
    if (pid < 0) {
        wr_warn("store memory: fork for snapshot: %s; writing in process", strerror(errno));
        (void)write_snapshot(s);
        return;
    }
    s->snap_pid = pid;
    s->dirty = false;
    struct timeval tv = {0, 100 * 1000};
    evtimer_add(s->ev_reap, &tv);
}

wr_err_t wr_store_memory__snap_now(mstore_t *s)
{
    if (!s->data_dir)
        return WR_OK;
    reap_child(s, true); /* one writer of the temp file at a time */
    return write_snapshot(s);
}

wr_err_t wr_store_memory__snap_start(mstore_t *s)
{
    s->ev_snap = event_new(s->evbase, -1, EV_PERSIST, on_snap_timer, s);
    s->ev_reap = evtimer_new(s->evbase, on_reap_timer, s);
    if (!s->ev_snap || !s->ev_reap)
        return WR_ENOMEM;
    struct timeval tv = wr_clock_tv_ms(s->snap_ms);
    if (event_add(s->ev_snap, &tv) != 0)
        return WR_ENOMEM;
    return WR_OK;
}

void wr_store_memory__snap_close(mstore_t *s)
{
    if (s->ev_snap)
        event_del(s->ev_snap);
    if (s->ev_reap)
        event_del(s->ev_reap);
    reap_child(s, true);
    if (s->data_dir && s->dirty)
        (void)write_snapshot(s);
}

void wr_store_memory__snap_free(mstore_t *s)
{
    if (s->ev_snap)
        event_free(s->ev_snap);
    if (s->ev_reap)
        event_free(s->ev_reap);
}
