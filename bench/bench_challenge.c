/*
 * bench_challenge.c - what a join challenge costs (docs/BENCHMARKS.md,
 * "Join challenges"; docs/SECURITY.md, "Bots").
 *
 *   bench_challenge [--solve MIN_BITS MAX_BITS RUNS]
 *
 * Always: the server's side, per call, in CPU time of this process
 * (CLOCK_PROCESS_CPUTIME_ID) over 200,000 calls each: wr_challenge_issue
 * (two HMACs), and wr_challenge_check of a solved challenge (two HMACs and
 * one SHA-256; the path every valid join takes) and of a forged one
 * (refused at the first MAC). Budget: under 2 us each.
 *
 * With --solve: a script's side, the native solver (wr_challenge_solve,
 * OpenSSL's SHA-256 on one core, a fresh challenge per run) at every even
 * bits from MIN to MAX, RUNS runs each: the median and mean wall time and
 * the digests per second. A bot's cost per place is 2^bits digests on
 * average.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "core/challenge.h"

#define N 200000

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    static const char secret[] = "bench-secret-0123456789abcdef0123456789";
    wr_challenge_key_t *k = wr_challenge_key_new((const uint8_t *)secret, sizeof secret - 1);
    if (!k)
        return 1;
    wr_challenge_key_t *keys[2] = {k, NULL};
    int64_t now = wr_clock_wall_us() / 1000;
    char c[WR_CHALLENGE_MAX + 1], nonce[WR_CHALLENGE_NONCE_MAX + 1];
    char user[40];

    double t0 = cpu_s();
    for (int i = 0; i < N; i++) {
        snprintf(user, sizeof user, "v%08d", i);
        if (wr_challenge_issue(k, "sale", user, 20, now + WR_CHALLENGE_TTL_MS, c) != WR_OK)
            return 1;
    }
    double issue_us = (cpu_s() - t0) / N * 1e6;

    if (wr_challenge_issue(k, "sale", "visitor", 8, now + WR_CHALLENGE_TTL_MS, c) != WR_OK ||
        !wr_challenge_solve(c, 8, 1u << 24, nonce))
        return 1;
    t0 = cpu_s();
    for (int i = 0; i < N; i++)
        if (wr_challenge_check(keys, 2, "sale", "visitor", c, strlen(c), nonce, strlen(nonce), 8,
                               now) != WR_CHALLENGE_OK)
            return 1;
    double check_us = (cpu_s() - t0) / N * 1e6;
    char forged[WR_CHALLENGE_MAX + 1];
    memcpy(forged, c, sizeof forged);
    forged[strlen(forged) - 30] ^= 1;
    t0 = cpu_s();
    for (int i = 0; i < N; i++)
        if (wr_challenge_check(keys, 2, "sale", "visitor", forged, strlen(forged), nonce,
                               strlen(nonce), 8, now) != WR_CHALLENGE_MALFORMED)
            return 1;
    double forged_us = (cpu_s() - t0) / N * 1e6;
    printf("challenge length      %zu chars\n", strlen(c));
    printf("issue                 %.3f us CPU per call\n", issue_us);
    printf("check (valid)         %.3f us CPU per call\n", check_us);
    printf("check (forged)        %.3f us CPU per call\n", forged_us);

    if (argc == 5 && strcmp(argv[1], "--solve") == 0) {
        int lo = atoi(argv[2]), hi = atoi(argv[3]), runs = atoi(argv[4]);
        if (lo < 0 || hi > 32 || lo > hi || runs < 1 || runs > 1000)
            return 2;
        double *ms = calloc((size_t)runs, sizeof *ms);
        printf("\nnative solver (one core): bits, median ms, mean ms, digests/s\n");
        for (int bits = lo; bits <= hi; bits += 2) {
            double sum = 0, tries = 0;
            for (int r = 0; r < runs; r++) {
                snprintf(user, sizeof user, "bot%d-%d", bits, r);
                wr_challenge_issue(k, "sale", user, (unsigned)bits, now + WR_CHALLENGE_TTL_MS, c);
                int64_t w0 = wr_clock_mono_us();
                uint64_t n = wr_challenge_solve(c, (unsigned)bits, UINT64_MAX, nonce);
                ms[r] = (double)(wr_clock_mono_us() - w0) / 1000.0;
                sum += ms[r];
                tries += (double)n;
            }
            qsort(ms, (size_t)runs, sizeof *ms, cmp_d);
            printf("%2d  %10.1f  %10.1f  %12.0f\n", bits, ms[runs / 2], sum / runs,
                   tries / (sum / 1000.0));
        }
        free(ms);
    }
    wr_challenge_key_free(k);
    return 0;
}
