/*
 * bench_memory.c - memory and latency of the embedded store's line.
 *
 * Joins users with 12-character ids ("u00000000001") into one paused queue
 * through the store vtable (callbacks delivered by the loop, as in the
 * server), and at 10k, 100k, 1M (and 10M when asked) users prints:
 *   - RSS growth since before the first join, divided by the users;
 *   - join latency: mean over the last 10,000 joins before that size;
 *   - status (rank) latency: mean over 10,000 status calls of random users.
 * Build without sanitizers (e.g. -DCMAKE_BUILD_TYPE=Release) for numbers
 * that mean something. Usage: bench_memory [max_users [data_dir]]
 * (WR_BENCH_PUBLIC_LOG=1 in the environment: with the queue's public log)
 * (default 1000000; 10000000 for the 10M row). With data_dir (empty, it
 * is written to), also times one snapshot and its load at max_users.
 */
#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "store/memory/store_memory.h"

#define SAMPLE 10000
#define BATCH  1024

static long done_calls;

static void on_entry(wr_err_t err, const wr_entry_t *e, void *arg)
{
    if (err != WR_OK) {
        fprintf(stderr, "bench: %s\n", wr_errname(err));
        exit(1);
    }
    done_calls++;
}

static void on_done(wr_err_t err, void *arg)
{
    done_calls++;
}

static double now_s(void)
{
    return (double)wr_clock_mono_us() / 1e6;
}

static long rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static void user_id(char out[16], long i)
{
    snprintf(out, 16, "u%011ld", i);
}

static void drain(struct event_base *base, long want)
{
    while (done_calls < want)
        event_base_loop(base, EVLOOP_NONBLOCK);
}

int main(int argc, char **argv)
{
    long max = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    if (max < SAMPLE)
        max = SAMPLE;
    const char *dir = argc > 2 ? argv[2] : NULL;
    struct event_base *base = event_base_new();
    wr_store_t *st;
    wr_store_memory_opts_t opts = {.data_dir = dir, .snapshot_interval_ms = 3600000};
    if (!base || wr_store_memory_open(base, &opts, &st) != WR_OK) {
        fprintf(stderr, "bench: cannot open the store\n");
        return 1;
    }
    wr_queue_config_t cfg;
    wr_qconfig_defaults(&cfg);
    cfg.admit_per_second = 100;
    cfg.paused = true;
    cfg.max_queue_size = 0;
    /* WR_BENCH_PUBLIC_LOG=1: the queue keeps its public log (a leaf, a
     * tree append and a receipt per join; a receipt per status) */
    cfg.public_log = getenv("WR_BENCH_PUBLIC_LOG") != NULL;
    if (cfg.public_log)
        printf("publicLog on\n");
    long issued = 0;
    if (wr_store_config_put(st, "bench", &cfg, on_done, NULL) != WR_OK)
        return 1;
    drain(base, ++issued);

    long rss0 = rss_bytes();
    printf("%12s %14s %12s %12s\n", "users", "bytes/user", "join_ns", "status_ns");
    long milestones[] = {10000, 100000, 1000000, 10000000};
    long n = 0;
    srand(1);
    for (size_t m = 0; m < sizeof milestones / sizeof milestones[0]; m++) {
        long target = milestones[m];
        if (target > max)
            break;
        double t_join = 0;
        while (n < target) {
            long k = target - n < BATCH ? target - n : BATCH;
            bool timed = n >= target - SAMPLE;
            double t0 = timed ? now_s() : 0;
            for (long i = 0; i < k; i++) {
                char id[16];
                user_id(id, n + i);
                if (wr_store_join(st, "bench", id, on_entry, NULL) != WR_OK)
                    return 1;
            }
            issued += k;
            drain(base, issued);
            if (timed)
                t_join += now_s() - t0;
            n += k;
        }
        long rss = rss_bytes();
        double t0 = now_s();
        for (long i = 0; i < SAMPLE; i += BATCH) {
            long k = SAMPLE - i < BATCH ? SAMPLE - i : BATCH;
            for (long j = 0; j < k; j++) {
                char id[16];
                user_id(id, (long)(((uint64_t)rand() * RAND_MAX + rand()) % (uint64_t)n));
                if (wr_store_status(st, "bench", id, on_entry, NULL) != WR_OK)
                    return 1;
            }
            issued += k;
            drain(base, issued);
        }
        double t_status = now_s() - t0;
        long join_samples = target < SAMPLE ? target : SAMPLE;
        printf("%12ld %14.1f %12.0f %12.0f\n", target, (double)(rss - rss0) / (double)target,
               t_join / join_samples * 1e9, t_status / SAMPLE * 1e9);
        fflush(stdout);
    }
    if (dir) {
        double t0 = now_s();
        if (wr_store_memory_snapshot(st) != WR_OK)
            return 1;
        double t_save = now_s() - t0;
        wr_store_close(st); /* nothing changed since: no second write */
        t0 = now_s();
        if (wr_store_memory_open(base, &opts, &st) != WR_OK)
            return 1;
        double t_load = now_s() - t0;
        /* the periodic snapshot forks: the loop stalls only for fork() */
        t0 = now_s();
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        double t_fork = now_s() - t0;
        if (pid > 0)
            waitpid(pid, NULL, 0);
        printf("snapshot of %ld users: write %.2f s, load %.2f s, fork %.1f ms\n", n, t_save,
               t_load, t_fork * 1e3);
    }
    wr_store_close(st);
    event_base_free(base);
    return 0;
}
