/*
 * test_stats.c - Kendall's tau, nearest-rank percentiles, overtakes and
 * bucketing, against examples computed by hand in the comments, plus tau
 * against a brute-force O(n^2) count on pseudo-random data with ties.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "stats.h"

#define EPS 1e-12

static void test_tau_hand(void **state)
{
    (void)state;
    double x[] = {1, 2, 3, 4, 5};
    double y[] = {3, 1, 2, 5, 4};
    double t = 0;
    /*
     * The 10 pairs (i,j), i<j, x always increases:
     *   (1,2) y 3->1 D   (1,3) 3->2 D   (1,4) 3->5 C   (1,5) 3->4 C
     *   (2,3) 1->2 C     (2,4) 1->5 C   (2,5) 1->4 C
     *   (3,4) 2->5 C     (3,5) 2->4 C
     *   (4,5) 5->4 D
     * C = 7, D = 3, no ties: tau = (7 - 3) / 10 = 0.4
     */
    assert_int_equal(wr_stats_kendall_tau(x, y, 5, &t), WR_OK);
    assert_true(fabs(t - 0.4) < EPS);

    /* identical order: every pair concordant, tau = 10/10 = 1 */
    assert_int_equal(wr_stats_kendall_tau(x, x, 5, &t), WR_OK);
    assert_true(fabs(t - 1.0) < EPS);

    /* reversed: every pair discordant, tau = -10/10 = -1 */
    double r[] = {5, 4, 3, 2, 1};
    assert_int_equal(wr_stats_kendall_tau(x, r, 5, &t), WR_OK);
    assert_true(fabs(t + 1.0) < EPS);

    /* one adjacent swap in 4: pairs 6, D = 1 (the swapped pair), C = 5:
     * tau = (5 - 1) / 6 = 2/3 */
    double a[] = {10, 20, 30, 40};
    double b[] = {1, 2, 4, 3};
    assert_int_equal(wr_stats_kendall_tau(a, b, 4, &t), WR_OK);
    assert_true(fabs(t - 2.0 / 3.0) < EPS);
}

static void test_tau_ties(void **state)
{
    (void)state;
    double t = 0;
    /*
     * x = (1,2,3,4), y = (1,1,2,3): n0 = 6; pair (1,2) tied in y (n2 = 1),
     * the other 5 concordant, D = 0:
     * tau_b = 5 / sqrt((6 - 0) * (6 - 1)) = 5 / sqrt(30) = 0.912870929175277
     */
    double x1[] = {1, 2, 3, 4}, y1[] = {1, 1, 2, 3};
    assert_int_equal(wr_stats_kendall_tau(x1, y1, 4, &t), WR_OK);
    assert_true(fabs(t - 0.912870929175277) < 1e-12);

    /*
     * x = (1,1,2,3), y = (1,2,2,3): pair (1,2) tied in x (n1 = 1), pair
     * (2,3) tied in y (n2 = 1), the other 4 concordant:
     * tau_b = 4 / sqrt(5 * 5) = 0.8
     */
    double x2[] = {1, 1, 2, 3}, y2[] = {1, 2, 2, 3};
    assert_int_equal(wr_stats_kendall_tau(x2, y2, 4, &t), WR_OK);
    assert_true(fabs(t - 0.8) < EPS);

    /* tied in both x and y (n3 = 1): x = (1,1,2), y = (5,5,9): n0 = 3,
     * n1 = 1, n2 = 1, C = 2: tau_b = 2 / sqrt(2 * 2) = 1 */
    double x3[] = {1, 1, 2}, y3[] = {5, 5, 9};
    assert_int_equal(wr_stats_kendall_tau(x3, y3, 3, &t), WR_OK);
    assert_true(fabs(t - 1.0) < EPS);
}

static void test_tau_errors(void **state)
{
    (void)state;
    double t = 42;
    double x[] = {1, 2, 3}, c[] = {7, 7, 7};
    assert_int_equal(wr_stats_kendall_tau(x, x, 1, &t), WR_EINVAL);
    assert_int_equal(wr_stats_kendall_tau(x, x, 0, &t), WR_EINVAL);
    assert_int_equal(wr_stats_kendall_tau(x, c, 3, &t), WR_EINVAL); /* y constant */
    assert_int_equal(wr_stats_kendall_tau(c, x, 3, &t), WR_EINVAL); /* x constant */
    double n[] = {1, NAN, 3};
    assert_int_equal(wr_stats_kendall_tau(x, n, 3, &t), WR_EINVAL);
    assert_true(t == 42); /* untouched on error */
}

/* Brute force: sum over pairs of sign(dx) * sign(dy), ties per tau-b. */
static double tau_brute(const double *x, const double *y, size_t n)
{
    double s = 0, n1 = 0, n2 = 0, n0 = (double)n * (double)(n - 1) / 2;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double dx = x[j] - x[i], dy = y[j] - y[i];
            if (dx == 0)
                n1++;
            if (dy == 0)
                n2++;
            s += (double)((dx > 0) - (dx < 0)) * (double)((dy > 0) - (dy < 0));
        }
    return s / sqrt((n0 - n1) * (n0 - n2));
}

static void test_tau_against_brute_force(void **state)
{
    (void)state;
    enum { N = 1500 };
    static double x[N], y[N];
    uint32_t seed = 12345;
    for (int round = 0; round < 4; round++) {
        /* round 0: few distinct values (many ties); later rounds fewer ties */
        uint32_t mod = round == 0 ? 7 : round == 1 ? 100 : 1000000;
        for (size_t i = 0; i < N; i++) {
            seed = seed * 1103515245u + 12345u;
            x[i] = (double)((seed >> 8) % mod);
            seed = seed * 1103515245u + 12345u;
            /* y correlates with x plus noise (round 3: exactly x) */
            y[i] = round == 3 ? x[i] : x[i] + (double)((seed >> 8) % (mod / 2 + 1));
        }
        double t = 0;
        assert_int_equal(wr_stats_kendall_tau(x, y, N, &t), WR_OK);
        assert_true(fabs(t - tau_brute(x, y, N)) < 1e-9);
        if (round == 3)
            assert_true(fabs(t - 1.0) < EPS);
    }
}

/*
 * The sale opening's figure (sim.c put_opening): join order against the
 * admission tick, many people per tick (ties in y only).
 */
static void test_tau_opening(void **state)
{
    (void)state;
    double t = 0;
    double x[] = {1, 2, 3, 4, 5, 6};
    /*
     * Two per tick in join order: of the 15 pairs, 3 are tied in y (same
     * tick), the other 12 concordant: tau_b = 12 / sqrt(15 * 12) =
     * 0.894427190999916 (tau-b counts a tick as a tie, so FIFO with ties
     * is below 1; the FIFO figure breaks ties by join order instead).
     */
    double fifo[] = {1, 1, 2, 2, 3, 3};
    assert_int_equal(wr_stats_kendall_tau(x, fifo, 6, &t), WR_OK);
    assert_true(fabs(t - 0.894427190999916) < EPS);
    double rev[] = {3, 3, 2, 2, 1, 1};
    assert_int_equal(wr_stats_kendall_tau(x, rev, 6, &t), WR_OK);
    assert_true(fabs(t + 0.894427190999916) < EPS);
    /*
     * A shuffle, ticks y = (2,1,3,1,3,2):
     *   (1,2) 2->1 D  (1,3) 2->3 C  (1,4) 2->1 D  (1,5) 2->3 C  (1,6) tie
     *   (2,3) 1->3 C  (2,4) tie     (2,5) 1->3 C  (2,6) 1->2 C
     *   (3,4) 3->1 D  (3,5) tie     (3,6) 3->2 D
     *   (4,5) 1->3 C  (4,6) 1->2 C
     *   (5,6) 3->2 D
     * C = 7, D = 5, n2 = 3: tau_b = 2 / sqrt(15 * 12) = 0.149071198499986
     */
    double sh[] = {2, 1, 3, 1, 3, 2};
    assert_int_equal(wr_stats_kendall_tau(x, sh, 6, &t), WR_OK);
    assert_true(fabs(t - 0.149071198499986) < EPS);

    /* A uniform shuffle of 3000 people admitted 18 per tick: tau near 0.
     * Under independence its standard deviation is about
     * sqrt(2(2n+5) / (9n(n-1))) = 0.0122; the seed is fixed, the bound is
     * 4 of them. */
    enum { N = 3000, PER_TICK = 18 };
    static double jx[N], ty[N];
    uint32_t perm[N];
    for (uint32_t i = 0; i < N; i++)
        perm[i] = i;
    uint64_t r = 0x9e3779b97f4a7c15ULL;
    for (uint32_t i = N - 1; i > 0; i--) { /* Fisher-Yates */
        r ^= r >> 12;
        r ^= r << 25;
        r ^= r >> 27;
        uint32_t j = (uint32_t)((r * 2685821657736338717ULL) % (i + 1));
        uint32_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    /* perm[k] = the join order of the k-th person admitted */
    for (uint32_t k = 0; k < N; k++) {
        jx[k] = (double)perm[k];
        ty[k] = (double)(k / PER_TICK);
    }
    assert_int_equal(wr_stats_kendall_tau(jx, ty, N, &t), WR_OK);
    assert_true(fabs(t) < 4 * 0.0122);
    assert_true(fabs(t - tau_brute(jx, ty, N)) < 1e-9);
}

static void test_percentile(void **state)
{
    (void)state;
    double v[] = {40, 15, 50, 35, 20};
    wr_stats_sort(v, 5);
    assert_true(v[0] == 15 && v[1] == 20 && v[2] == 35 && v[3] == 40 && v[4] == 50);
    double out = 0;
    /* nearest rank = ceil(p/100 * 5): */
    assert_int_equal(wr_stats_percentile(v, 5, 5, &out), WR_OK); /* ceil(0.25)=1 */
    assert_true(out == 15);
    assert_int_equal(wr_stats_percentile(v, 5, 30, &out), WR_OK); /* ceil(1.5)=2 */
    assert_true(out == 20);
    assert_int_equal(wr_stats_percentile(v, 5, 40, &out), WR_OK); /* ceil(2.0)=2 */
    assert_true(out == 20);
    assert_int_equal(wr_stats_percentile(v, 5, 50, &out), WR_OK); /* ceil(2.5)=3 */
    assert_true(out == 35);
    assert_int_equal(wr_stats_percentile(v, 5, 100, &out), WR_OK); /* rank 5 */
    assert_true(out == 50);
    assert_int_equal(wr_stats_percentile(v, 5, 0, &out), WR_OK); /* clamped to rank 1 */
    assert_true(out == 15);

    /* 1..10: p90 -> ceil(9.0) = 9 -> 9; p95 -> ceil(9.5) = 10; p99 -> ceil(9.9) = 10 */
    double w[10];
    for (int i = 0; i < 10; i++)
        w[i] = i + 1;
    assert_int_equal(wr_stats_percentile(w, 10, 90, &out), WR_OK);
    assert_true(out == 9);
    assert_int_equal(wr_stats_percentile(w, 10, 95, &out), WR_OK);
    assert_true(out == 10);
    assert_int_equal(wr_stats_percentile(w, 10, 99, &out), WR_OK);
    assert_true(out == 10);
    assert_int_equal(wr_stats_percentile(w, 10, 10, &out), WR_OK); /* ceil(1.0) = 1 */
    assert_true(out == 1);
    assert_int_equal(wr_stats_percentile(w, 10, 11, &out), WR_OK); /* ceil(1.1) = 2 */
    assert_true(out == 2);

    out = -1;
    assert_int_equal(wr_stats_percentile(w, 0, 50, &out), WR_EINVAL);
    assert_int_equal(wr_stats_percentile(w, 10, -1, &out), WR_EINVAL);
    assert_int_equal(wr_stats_percentile(w, 10, 100.5, &out), WR_EINVAL);
    assert_int_equal(wr_stats_percentile(w, 10, NAN, &out), WR_EINVAL);
    assert_true(out == -1);
}

static void test_overtakes(void **state)
{
    (void)state;
    size_t n = 99;
    /* FIFO (admission ticks may tie): nobody ahead of an earlier joiner */
    double j[] = {1, 2, 3, 4, 5};
    double fifo[] = {100, 100, 200, 200, 300};
    assert_int_equal(wr_stats_overtakes(j, fifo, 5, &n), WR_OK);
    assert_int_equal(n, 0);
    /* admit (1,3,2,5,4): user 3 (admit 2 < 3 of user 2) and user 5 (4 < 5
     * of user 4) were admitted ahead of an earlier joiner: 2 */
    double a[] = {1, 3, 2, 5, 4};
    assert_int_equal(wr_stats_overtakes(j, a, 5, &n), WR_OK);
    assert_int_equal(n, 2);
    /* the last joiner admitted first: only that one user counts: 1 */
    double b[] = {2, 3, 4, 5, 1};
    assert_int_equal(wr_stats_overtakes(j, b, 5, &n), WR_OK);
    assert_int_equal(n, 1);
    /* equal join times are not "earlier": join (1,1,2) admit (2,1,1): only
     * the third (admit 1 < 2 of a join-1 user) counts: 1 */
    double jt[] = {1, 1, 2}, at[] = {2, 1, 1};
    assert_int_equal(wr_stats_overtakes(jt, at, 3, &n), WR_OK);
    assert_int_equal(n, 1);
    assert_int_equal(wr_stats_overtakes(j, a, 0, &n), WR_OK);
    assert_int_equal(n, 0);
}

static void test_bucket(void **state)
{
    (void)state;
    double t[] = {0, 99, 100, 250, 999, 1000, -1, 99.999};
    uint32_t c[10];
    /* [0,100): 0, 99, 99.999 -> 3; [100,200): 100 -> 1; [200,300): 250 -> 1;
     * [900,1000): 999 -> 1; 1000 and -1 are outside [0, 1000) */
    assert_int_equal(wr_stats_bucket(t, 8, 0, 100, c, 10), 6);
    uint32_t want[10] = {3, 1, 1, 0, 0, 0, 0, 0, 0, 1};
    for (int i = 0; i < 10; i++)
        assert_int_equal(c[i], want[i]);
    assert_int_equal(wr_stats_bucket(t, 8, 0, 0, c, 10), 0);
    assert_int_equal(c[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tau_hand),   cmocka_unit_test(test_tau_ties),
        cmocka_unit_test(test_tau_errors), cmocka_unit_test(test_tau_against_brute_force),
        cmocka_unit_test(test_percentile), cmocka_unit_test(test_overtakes),
        cmocka_unit_test(test_bucket),     cmocka_unit_test(test_tau_opening),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
