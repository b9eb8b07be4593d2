/*
 * test_logreplay.c - the replay of a public log: a correct sale (pre-queue
 * with a shuffle draw, joins, groups, admissions in order, away, held
 * returns, an unseen pass, leaves) has no overtake; each kind of wrong
 * admission is counted as one, naming who was first; a draw with a wrong
 * seed, a wrong n, no commit, fails; a randomized log of 20,000 events
 * replays as a naive model of the rules (a scan of everyone) says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/logreplay.h"
#include "unit_main.h"
#include "unit_sha.h"

static void uid(int i, char out[WR_LOGLEAF_U_HEX + 1])
{
    snprintf(out, WR_LOGLEAF_U_HEX + 1, "%032x", (unsigned)i * 2654435761u);
}

static void feed(wr_logreplay_t *r, const wr_logleaf_t *l)
{
    char out[WR_LOGLEAF_MAX];
    size_t len = 0;
    assert_int_equal(wr_logleaf_encode(l, out, sizeof out, &len), WR_OK);
    assert_int_equal(wr_logreplay_feed(r, out, len), WR_OK);
}

static int64_t clock_us = 1000;

static void join(wr_logreplay_t *r, int i, bool pre, const char *grp)
{
    wr_logleaf_t l = {.e = WR_LOGLEAF_JOIN, .at = clock_us, .t = clock_us, .pre = pre};
    clock_us++;
    uid(i, l.u);
    snprintf(l.grp, sizeof l.grp, "%s", grp);
    feed(r, &l);
}

static void event(wr_logreplay_t *r, wr_logleaf_kind_t e, int i, const char *grp, bool flag)
{
    wr_logleaf_t l = {.e = e, .at = clock_us++};
    uid(i, l.u);
    snprintf(l.grp, sizeof l.grp, "%s", grp);
    l.held = e == WR_LOGLEAF_ADMIT && flag;
    l.unseen = e == WR_LOGLEAF_AWAY && flag;
    feed(r, &l);
}

static void admit(wr_logreplay_t *r, int i, const char *grp, bool held)
{
    event(r, WR_LOGLEAF_ADMIT, i, grp, held);
}

static void commit(wr_logreplay_t *r, const uint8_t seed[32])
{
    wr_logleaf_t l = {.e = WR_LOGLEAF_COMMIT, .at = clock_us++};
    assert_int_equal(wr_crypto_sha256_digest(sha, seed, 32, l.seed_hash), WR_OK);
    feed(r, &l);
}

static void draw(wr_logreplay_t *r, const uint8_t seed[32], uint64_t n)
{
    wr_logleaf_t l = {.e = WR_LOGLEAF_DRAW, .at = clock_us++, .n = n};
    memcpy(l.seed, seed, 32);
    feed(r, &l);
}

/* The people 0..n-1 in draw order under seed (no beacon). */
static void draw_order(const uint8_t seed[32], int n, int *order)
{
    uint8_t d[32], rank[64][32], ub[16];
    char u[33];
    assert_int_equal(wr_logleaf_draw_value(sha, seed, NULL, 0, d), WR_OK);
    for (int i = 0; i < n; i++) {
        uid(i, u);
        assert_int_equal(wr_logleaf_u_bytes(u, ub), WR_OK);
        assert_int_equal(wr_logleaf_draw_rank(sha, d, ub, rank[i]), WR_OK);
        order[i] = i;
    }
    for (int i = 1; i < n; i++) /* insertion sort by rank */
        for (int j = i; j > 0 && memcmp(rank[order[j]], rank[order[j - 1]], 32) < 0; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

static void test_correct_sale(void **state)
{
    (void)state;
    wr_logreplay_t *r = wr_logreplay_new();
    uint8_t seed[32];
    memset(seed, 0x5a, sizeof seed);
    int order[5];
    draw_order(seed, 5, order);
    commit(r, seed);
    for (int i = 0; i < 5; i++)
        join(r, i, true, "");
    join(r, 9, true, "vip"); /* pre-queue of a group: drawn too */
    join(r, 5, false, "");   /* joins at the opening, before the draw: after the pre-queue */
    draw(r, seed, 6);
    join(r, 6, false, "");
    join(r, 7, false, "");
    join(r, 8, false, "vip");
    const wr_logreplay_stats_t *st = wr_logreplay_stats(r);
    assert_int_equal(st->draws, 1);
    assert_int_equal(st->draw_failures, 0);
    assert_false(st->draw_independent); /* no beacon */
    admit(r, 9, "vip", false);          /* groups have their own lines */
    admit(r, order[0], "", false);
    event(r, WR_LOGLEAF_AWAY, order[1], "", false); /* passed over while away */
    admit(r, order[2], "", false);
    admit(r, order[1], "", true); /* back: held */
    admit(r, order[3], "", false);
    event(r, WR_LOGLEAF_LEAVE, order[4], "", false);
    admit(r, 5, "", false);
    admit(r, 8, "vip", false);
    admit(r, 6, "", false);
    event(r, WR_LOGLEAF_AWAY, 6, "", true); /* unseen pass: back in line, away */
    admit(r, 7, "", false);
    admit(r, 6, "", true);
    assert_int_equal(st->overtakes, 0);
    assert_int_equal(st->invalid, 0);
    assert_int_equal(st->joined, 10);
    assert_int_equal(st->admitted, 10);
    assert_int_equal(st->held_returns, 2);
    assert_int_equal(st->left[WR_LOGLEAF_LEFT], 1);
    assert_int_equal(st->away, 2);
    assert_int_equal(st->waiting, 0);
    assert_false(st->draw_pending);
    wr_logreplay_free(r);
}

static void test_overtakes(void **state)
{
    (void)state;
    wr_logreplay_t *r = wr_logreplay_new();
    const wr_logreplay_stats_t *st = wr_logreplay_stats(r);
    for (int i = 0; i < 6; i++)
        join(r, i, false, "");
    admit(r, 1, "", false); /* 0 was first */
    assert_int_equal(st->overtakes, 1);
    assert_int_equal(st->overtake[0].why, WR_LOGREPLAY_NOT_FIRST);
    char u0[33], u1[33];
    uid(0, u0);
    uid(1, u1);
    assert_string_equal(st->overtake[0].u, u1);
    assert_string_equal(st->overtake[0].expected, u0);
    assert_int_equal(st->overtake[0].index, 6);
    admit(r, 2, "", true); /* held, but not away */
    assert_int_equal(st->overtake[1].why, WR_LOGREPLAY_NOT_AWAY);
    admit(r, 42, "", false); /* nobody */
    assert_int_equal(st->overtake[2].why, WR_LOGREPLAY_NOT_IN_LINE);
    event(r, WR_LOGLEAF_AWAY, 0, "", false);
    admit(r, 0, "", false); /* away, admitted without held: 3 was first */
    assert_int_equal(st->overtake[3].why, WR_LOGREPLAY_NOT_FIRST);
    admit(r, 3, "", false); /* in order again */
    assert_int_equal(st->overtakes, 4);
    /* ties of t: by log index */
    wr_logleaf_t a = {.e = WR_LOGLEAF_JOIN, .at = clock_us, .t = clock_us + 100};
    uid(100, a.u);
    feed(r, &a);
    uid(101, a.u);
    feed(r, &a);
    admit(r, 4, "", false);
    admit(r, 5, "", false);
    admit(r, 100, "", false);
    admit(r, 101, "", false);
    assert_int_equal(st->overtakes, 4);
    /* a pre-queue person admitted before the draw */
    uint8_t seed[32] = {1};
    commit(r, seed);
    join(r, 200, true, "");
    admit(r, 200, "", false);
    assert_int_equal(st->overtakes, 5);
    assert_int_equal(st->overtake[4].why, WR_LOGREPLAY_UNDRAWN);
    assert_true(st->draw_pending);
    assert_int_equal(st->invalid, 0);
    /* a second join of someone in line is invalid, not an overtake */
    join(r, 300, false, "");
    join(r, 300, false, "");
    assert_int_equal(st->invalid, 1);
    feed(r, &(wr_logleaf_t){.e = WR_LOGLEAF_FAILOPEN, .n = 3});
    assert_int_equal(st->fail_open, 3);
    assert_int_equal(wr_logreplay_feed(r, "{not json", 9), WR_OK);
    assert_int_equal(st->invalid, 2);
    assert_int_equal(st->problems, 2);
    wr_logreplay_free(r);
}

static void test_bad_draws(void **state)
{
    (void)state;
    uint8_t seed[32], other[32];
    memset(seed, 7, sizeof seed);
    memset(other, 8, sizeof other);
    wr_logreplay_t *r = wr_logreplay_new();
    const wr_logreplay_stats_t *st = wr_logreplay_stats(r);
    commit(r, seed);
    join(r, 1, true, "");
    join(r, 2, true, "");
    draw(r, other, 2); /* not the committed seed */
    assert_int_equal(st->draw_failures, 1);
    wr_logreplay_free(r);

    r = wr_logreplay_new();
    st = wr_logreplay_stats(r);
    commit(r, seed);
    join(r, 1, true, "");
    join(r, 2, true, "");
    event(r, WR_LOGLEAF_LEAVE, 2, "", false);
    draw(r, seed, 2); /* one left before the draw: n is 1 */
    assert_int_equal(st->draw_failures, 1);
    draw(r, seed, 0); /* no commit */
    assert_int_equal(st->draw_failures, 2);
    wr_logreplay_free(r);

    /* a beacon's draw: independent; a beacon error: not */
    r = wr_logreplay_new();
    st = wr_logreplay_stats(r);
    wr_logleaf_t c = {.e = WR_LOGLEAF_COMMIT, .beacon = true, .round = 9};
    snprintf(c.beacon_url, sizeof c.beacon_url, "https://drand.example");
    assert_int_equal(wr_crypto_sha256_digest(sha, seed, 32, c.seed_hash), WR_OK);
    feed(r, &c);
    wr_logleaf_t d = {.e = WR_LOGLEAF_DRAW, .beacon = true, .round = 9, .randomness_len = 32};
    memcpy(d.seed, seed, 32);
    snprintf(d.beacon_url, sizeof d.beacon_url, "https://drand.example");
    feed(r, &d);
    assert_int_equal(st->draw_failures, 0);
    assert_true(st->draw_independent);
    feed(r, &c);
    d.randomness_len = 0;
    snprintf(d.beacon_error, sizeof d.beacon_error, "no answer in 60 s");
    feed(r, &d);
    assert_int_equal(st->draw_failures, 0);
    assert_false(st->draw_independent);
    feed(r, &c);
    d.round = 10; /* not the committed round */
    feed(r, &d);
    assert_int_equal(st->draw_failures, 1);
    wr_logreplay_free(r);
}

/* ---------- randomized, against a naive model: a scan of everyone */

enum { PEOPLE = 400, EVENTS = 20000 };

typedef struct {
    int state; /* 0 out, 1 line, 2 away */
    int grp;
    int64_t t;
    uint64_t index;
} naive_t;

static int naive_first(const naive_t *p, int grp)
{
    int best = -1;
    for (int i = 0; i < PEOPLE; i++) {
        if (p[i].state != 1 || p[i].grp != grp)
            continue;
        if (best < 0 || p[i].t < p[best].t || (p[i].t == p[best].t && p[i].index < p[best].index))
            best = i;
    }
    return best;
}

static void test_randomized(void **state)
{
    (void)state;
    static naive_t p[PEOPLE];
    static const char *const groups[] = {"", "a", "b"};
    memset(p, 0, sizeof p);
    srand(12345);
    wr_logreplay_t *r = wr_logreplay_new();
    const wr_logreplay_stats_t *st = wr_logreplay_stats(r);
    uint64_t index = 0, want_overtakes = 0;
    int64_t t = 0;
    for (int k = 0; k < EVENTS; k++, index++) {
        int i = rand() % PEOPLE, op = rand() % 10;
        if (p[i].state == 0 && op < 5) {
            p[i].state = 1;
            p[i].grp = rand() % 3;
            p[i].t = (t += rand() % 2); /* ties happen */
            p[i].index = index;
            wr_logleaf_t l = {.e = WR_LOGLEAF_JOIN, .t = p[i].t};
            uid(i, l.u);
            snprintf(l.grp, sizeof l.grp, "%s", groups[p[i].grp]);
            feed(r, &l);
        } else if (p[i].state != 0 && op < 8) {
            /* an admission: mostly the right one, sometimes not */
            int g = p[i].grp, first = naive_first(p, g);
            int who = (first >= 0 && rand() % 8) ? first : i;
            bool held = p[who].state == 2 ? rand() % 4 != 0 : rand() % 16 == 0;
            bool fair = held ? p[who].state == 2 : who == first;
            want_overtakes += !fair;
            admit(r, who, groups[g], held);
            p[who].state = 0;
        } else if (p[i].state == 1 && op == 8) {
            event(r, WR_LOGLEAF_AWAY, i, "", false);
            p[i].state = 2;
        } else if (p[i].state != 0) {
            event(r, WR_LOGLEAF_LEAVE, i, "", false);
            p[i].state = 0;
        } else {
            feed(r, &(wr_logleaf_t){.e = WR_LOGLEAF_FAILOPEN, .n = 1});
        }
        assert_int_equal(st->overtakes, want_overtakes);
    }
    assert_true(want_overtakes > 100);
    assert_int_equal(st->invalid, 0);
    assert_int_equal(st->leaves, EVENTS);
    wr_logreplay_free(r);
}

#define TESTS(X)                                                                                   \
    X(test_correct_sale)                                                                           \
    X(test_overtakes)                                                                              \
    X(test_bad_draws)                                                                              \
    X(test_randomized)
WR_UNIT_MAIN(sha_setup, sha_teardown, TESTS)
