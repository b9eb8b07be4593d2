/*
 * publog_draw.c - the store contract, the public log's opening draw (1.3,
 * "The opening draw, fixed in public"; store.h log_beacon and
 * log_unsigned's beacons): with publicLog and preQueueShuffle the commit
 * comes before the first pre-queue join and carries the config's beacon;
 * the opening waits for the beacon's round (nobody admitted, joins
 * meanwhile behind the drawn, logged as line joins), log_unsigned names
 * it meanwhile and log_beacon keeps the first answer of that round; the
 * draw leaf reveals a seed that hashes to the commit's, n counts the
 * pre-queue joins it drew, and the line is the one the contract defines:
 * ascending SHA-256(D || u), D = SHA-256(seed || randomness) (or of the
 * seed alone: no beacon, a beacon error, or none within 60 s of opensAt);
 * page joins that have not counted follow the drawn; every admission
 * replays with 0 overtakes (core/logreplay); a new opening commits again.
 * A pre-queue of 2,300 is drawn too (on Redis: in several chunks). A
 * backend without a draw (wr_store_has_draw) skips these. Run by runner.c
 * against every backend of the store registry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "base/hex.h"
#include "contract.h"
#include "core/logleaf.h"
#include "core/logreplay.h"

#define BEACON "https://beacon.example/drand"

static wr_store_t *draw_store(void **state)
{
    wr_store_t *s = *state;
    if (!wr_store_has_draw(s))
        skip();
    return s;
}

/* The store's clock (its admission tick's now_us), ms: ahead of the wall
 * clock on a backend whose time the tests move (pass_us). */
static int64_t store_ms(wr_store_t *s)
{
    sh_res_t r;
    put_ok(s, "dclock", mkcfg(1, 1000, 0, 0, 300));
    assert_int_equal(sh_admit(s, "dclock", &r), WR_OK);
    return r.admit.now_us / 1000;
}

/* A paused queue with publicLog and a shuffled opening at opens_ms, with
 * the draw's beacon round when round > 0. */
static wr_queue_config_t draw_cfg(int64_t opens_ms, uint64_t round)
{
    wr_queue_config_t c = mkcfg(20000, 100, 0, 0, 300);
    c.paused = true;
    c.public_log = true;
    c.pre_queue_shuffle = true;
    c.opens_at_ms = opens_ms;
    if (round > 0) {
        c.draw.set = true;
        snprintf(c.draw.beacon_url, sizeof c.draw.beacon_url, "%s", BEACON);
        c.draw.round = round;
    }
    return c;
}

/* Joins <prefix>0..<prefix>(n-1): each PREQUEUE with a receipt. */
static void pre_joins(wr_store_t *s, const char *q, const char *prefix, int n)
{
    for (int i = 0; i < n; i++) {
        char u[32];
        sh_res_t r;
        snprintf(u, sizeof u, "%s%d", prefix, i);
        assert_int_equal(sh_join(s, q, u, &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
        assert_true(r.entry.has_receipt);
    }
}

/* u's log id (their receipt: a status). */
static void log_id(wr_store_t *s, const char *q, const char *u, char out[33])
{
    sh_res_t r;
    assert_int_equal(sh_status(s, q, u, &r), WR_OK);
    assert_true(r.entry.has_receipt);
    memcpy(out, r.entry.receipt_u, 33);
}

/* Admission ticks until the opening has moved the whole pre-queue into
 * the line (the draw first: on Redis a job of a few calls that the tick
 * starts), bounded. */
static void open_drawn(wr_store_t *s, const char *q)
{
    for (int i = 0; i < 500; i++) {
        sh_res_t r;
        assert_int_equal(sh_admit(s, q, &r), WR_OK);
        if (r.admit.stats.prequeue == 0 && r.admit.opening_left == 0)
            return;
        sh_run_for(10);
    }
    fail_msg("the opening of %s was never drawn", q);
}

/* Leaves [0, size of the log) of q parsed into out (max of them, the
 * rest read and dropped), each fed to rp when not NULL; how many. */
static size_t leaves_of(wr_store_t *s, const char *q, wr_logleaf_t *out, size_t max,
                        wr_logreplay_t *rp)
{
    lres_t h, l;
    assert_int_equal(lg_head(s, q, &h), WR_OK);
    size_t k = 0;
    for (uint64_t at = 0; at < h.a.size; at += 200) {
        wr_log_read_t req = {.start = at, .end = at + 200 < h.a.size ? at + 200 : h.a.size};
        assert_int_equal(lg_read(s, q, &req, &l), WR_OK);
        for (char *p = l.leaves, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1, k++) {
            wr_logleaf_t leaf;
            assert_int_equal(wr_logleaf_parse(p, (size_t)(nl - p), &leaf, NULL, 0), WR_OK);
            if (k < max)
                out[k] = leaf;
            if (rp)
                assert_int_equal(wr_logreplay_feed(rp, p, (size_t)(nl - p)), WR_OK);
        }
    }
    assert_int_equal(k, h.a.size);
    return k;
}

/* The draw leaf checks against commit: the seed is the one committed,
 * the beacon and round the commit's, n. */
static void expect_draw(const wr_logleaf_t *commit, const wr_logleaf_t *draw, uint64_t n)
{
    assert_non_null(commit);
    assert_non_null(draw);
    assert_true(commit < draw);
    uint8_t h[32];
    wr_crypto_sha256_t *sha = wr_crypto_sha256_new();
    assert_int_equal(wr_crypto_sha256_digest(sha, draw->seed, sizeof draw->seed, h), WR_OK);
    wr_crypto_sha256_free(sha);
    assert_memory_equal(h, commit->seed_hash, 32);
    assert_int_equal(draw->beacon, commit->beacon);
    if (commit->beacon) {
        assert_string_equal(draw->beacon_url, commit->beacon_url);
        assert_int_equal(draw->round, commit->round);
    }
    assert_int_equal(draw->n, n);
}

typedef struct {
    const char *user;
    uint8_t rank[32];
} ranked_t;

static int by_rank(const void *a, const void *b)
{
    return memcmp(((const ranked_t *)a)->rank, ((const ranked_t *)b)->rank, 32);
}

/* <prefix>0..<prefix>(n-1) are at positions 1..n (of waiting) in
 * ascending rank under draw's D: the contract's order. */
static void expect_drawn_order(wr_store_t *s, const char *q, const wr_logleaf_t *draw,
                               const char *prefix, int n, uint64_t waiting)
{
    wr_crypto_sha256_t *sha = wr_crypto_sha256_new();
    uint8_t d[32];
    assert_int_equal(
        wr_logleaf_draw_value(sha, draw->seed, draw->randomness, draw->randomness_len, d), WR_OK);
    ranked_t *r = calloc((size_t)n, sizeof *r);
    char(*names)[32] = calloc((size_t)n, sizeof *names);
    assert_true(r && names);
    for (int i = 0; i < n; i++) {
        char u[33];
        uint8_t ub[WR_LOGLEAF_U_BYTES];
        snprintf(names[i], sizeof names[i], "%s%d", prefix, i);
        log_id(s, q, names[i], u);
        assert_int_equal(wr_logleaf_u_bytes(u, ub), WR_OK);
        assert_int_equal(wr_logleaf_draw_rank(sha, d, ub, r[i].rank), WR_OK);
        r[i].user = names[i];
    }
    qsort(r, (size_t)n, sizeof *r, by_rank);
    for (int i = 0; i < n; i++)
        expect_waiting(s, q, r[i].user, (uint64_t)i + 1, waiting);
    wr_crypto_sha256_free(sha);
    free(r);
    free(names);
}

/* Admits everyone (unpaused: 2,000 a tick) and replays q's log: every
 * admission in order, every draw checked; its stats into st. */
static void admit_all_and_replay(wr_store_t *s, const char *q, wr_queue_config_t c,
                                 uint64_t everyone, wr_logreplay_stats_t *st)
{
    c.paused = false;
    put_ok(s, q, c);
    uint64_t admitted = 0;
    for (int i = 0; i < 200 && admitted < everyone; i++) {
        sh_res_t r;
        pass_us(s, 110000);
        assert_int_equal(sh_admit(s, q, &r), WR_OK);
        admitted = r.admit.stats.admitted_total;
    }
    assert_int_equal(admitted, everyone);
    wr_logreplay_t *rp = wr_logreplay_new();
    assert_non_null(rp);
    leaves_of(s, q, NULL, 0, rp);
    *st = *wr_logreplay_stats(rp);
    wr_logreplay_free(rp);
    assert_int_equal(st->overtakes, 0);
    assert_int_equal(st->draw_failures, 0);
    assert_int_equal(st->invalid, 0);
    assert_int_equal(st->admitted, everyone);
    assert_false(st->draw_pending);
}

/* Without a beacon: commit first, the draw at the opening (the queue's
 * stats say committed until then), the drawn in rank order, a page join
 * that had not counted after them, a join after the opening after it; a
 * new opening commits and draws again. */
static void t_draw_without_beacon(void **state)
{
    wr_store_t *s = draw_store(state);
    int64_t opens = store_ms(s) + 400;
    wr_queue_config_t c = draw_cfg(opens, 0);
    put_ok(s, "dw", c);
    pre_joins(s, "dw", "p", 30);
    sh_res_t r;
    assert_int_equal(sh_join_page(s, "dw", "page", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    assert_int_equal(sh_get(s, "dw", &r), WR_OK);
    assert_true(r.stats.log_committed);
    wr_logleaf_t l[40];
    assert_int_equal(leaves_of(s, "dw", l, 40, NULL), 31);
    assert_int_equal(l[0].e, WR_LOGLEAF_COMMIT);
    assert_false(l[0].beacon);
    for (int i = 1; i < 31; i++)
        assert_true(l[i].e == WR_LOGLEAF_JOIN && l[i].pre);
    pass_store_time(s, opens * 1000);
    open_drawn(s, "dw");
    assert_int_equal(sh_get(s, "dw", &r), WR_OK);
    assert_false(r.stats.log_committed);
    size_t n = leaves_of(s, "dw", l, 40, NULL);
    assert_int_equal(n, 32);
    assert_int_equal(l[31].e, WR_LOGLEAF_DRAW);
    expect_draw(&l[0], &l[31], 30);
    assert_int_equal(l[31].randomness_len, 0);
    expect_drawn_order(s, "dw", &l[31], "p", 30, 31);
    expect_waiting(s, "dw", "page", 31, 31); /* (asked again: it counts now) */
    assert_int_equal(sh_join(s, "dw", "after", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, 32);
    wr_logreplay_stats_t st;
    admit_all_and_replay(s, "dw", c, 32, &st);
    assert_int_equal(st.draws, 1);
    /* a new opening: a new commit, a new draw */
    c.opens_at_ms = store_ms(s) + 400;
    put_ok(s, "dw", c);
    pre_joins(s, "dw", "n", 5);
    pass_store_time(s, c.opens_at_ms * 1000);
    open_drawn(s, "dw");
    admit_all_and_replay(s, "dw", c, 37, &st);
    assert_int_equal(st.draws, 2);
    assert_true(st.draw_independent == false);
}

/* With a beacon: the commit names it; past opensAt the opening waits
 * (nobody admitted, a join meanwhile answered PREQUEUE and logged as a
 * line join), log_unsigned names the queue, its beacon and round;
 * log_beacon keeps the first answer of that round only; the draw mixes it
 * in; the late join follows the drawn. */
static void t_draw_with_beacon(void **state)
{
    wr_store_t *s = draw_store(state);
    int64_t opens = store_ms(s) + 400;
    wr_queue_config_t c = draw_cfg(opens, 9);
    put_ok(s, "db", c);
    lres_t u;
    lg_unsigned(s, &u);
    assert_int_equal(u.n_beacons, 0);
    pre_joins(s, "db", "p", 12);
    pass_store_time(s, opens * 1000);
    sh_res_t r;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sh_admit(s, "db", &r), WR_OK);
        assert_int_equal(r.admit.admitted + r.admit.opening_moved, 0);
        assert_int_equal(r.admit.stats.prequeue, 12);
        sh_run_for(20);
    }
    assert_int_equal(sh_join(s, "db", "late", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    assert_true(r.entry.has_receipt);
    assert_int_equal(sh_status(s, "db", "p3", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    lg_unsigned(s, &u);
    assert_int_equal(u.n_beacons, 1);
    assert_string_equal(u.beacon_queue, "db");
    assert_string_equal(u.beacon_url, BEACON);
    assert_int_equal(u.beacon_round, 9);
    uint8_t rnd[32];
    for (int i = 0; i < 32; i++)
        rnd[i] = (uint8_t)(7 * i + 1);
    lres_t b;
    memset(&b, 0, sizeof b);
    sh_begin(&b.r);
    assert_int_equal(sh_settle(&b.r, wr_store_log_beacon(s, "db", 8, rnd, 32, NULL, lg_cb, &b)),
                     WR_ENOTFOUND);
    sh_begin(&b.r);
    assert_int_equal(sh_settle(&b.r, wr_store_log_beacon(s, "db", 9, rnd, 32, NULL, lg_cb, &b)),
                     WR_OK);
    sh_begin(&b.r);
    assert_int_equal(sh_settle(&b.r, wr_store_log_beacon(s, "db", 9, NULL, 0, "late", lg_cb, &b)),
                     WR_ENOTFOUND);
    open_drawn(s, "db");
    lg_unsigned(s, &u);
    assert_int_equal(u.n_beacons, 0);
    wr_logleaf_t l[20];
    size_t n = leaves_of(s, "db", l, 20, NULL);
    assert_int_equal(n, 1 + 12 + 1 + 1);
    assert_true(l[0].e == WR_LOGLEAF_COMMIT && l[0].beacon);
    assert_string_equal(l[0].beacon_url, BEACON);
    assert_int_equal(l[0].round, 9);
    assert_true(l[13].e == WR_LOGLEAF_JOIN && !l[13].pre); /* the late join */
    expect_draw(&l[0], &l[14], 12);
    assert_int_equal(l[14].randomness_len, 32);
    assert_memory_equal(l[14].randomness, rnd, 32);
    assert_string_equal(l[14].beacon_error, "");
    expect_drawn_order(s, "db", &l[14], "p", 12, 13);
    expect_waiting(s, "db", "late", 13, 13);
    wr_logreplay_stats_t st;
    admit_all_and_replay(s, "db", c, 13, &st);
    assert_true(st.draw_independent);
}

/* The beacon answers an error, or never within 60 s of opensAt (here:
 * opensAt moved 61 s into the past after the commit): the draw goes on
 * without it and says why (beaconError), D of the seed alone. */
static void t_draw_beacon_error(void **state)
{
    wr_store_t *s = draw_store(state);
    static const char *const q[2] = {"de", "dl"};
    for (int k = 0; k < 2; k++) {
        int64_t opens = store_ms(s) + 400;
        wr_queue_config_t c = draw_cfg(opens, 77);
        put_ok(s, q[k], c);
        pre_joins(s, q[k], "p", 6);
        if (k == 0) {
            pass_store_time(s, opens * 1000);
            lres_t b;
            memset(&b, 0, sizeof b);
            sh_begin(&b.r);
            assert_int_equal(
                sh_settle(&b.r, wr_store_log_beacon(s, q[k], 77, NULL, 0, "the \"beacon\" is down",
                                                    lg_cb, &b)),
                WR_OK);
        } else {
            c.opens_at_ms = store_ms(s) - 61000;
            put_ok(s, q[k], c);
        }
        open_drawn(s, q[k]);
        wr_logleaf_t l[10];
        assert_int_equal(leaves_of(s, q[k], l, 10, NULL), 8);
        expect_draw(&l[0], &l[7], 6);
        assert_int_equal(l[7].randomness_len, 0);
        char want[WR_LOGLEAF_ERROR_MAX + 1];
        snprintf(want, sizeof want, WR_LOGLEAF_BEACON_LATE, 77ULL);
        assert_string_equal(l[7].beacon_error, k == 0 ? "the \"beacon\" is down" : want);
        expect_drawn_order(s, q[k], &l[7], "p", 6, 6);
        wr_logreplay_stats_t st;
        admit_all_and_replay(s, q[k], c, 6, &st);
        assert_false(st.draw_independent);
    }
}

/* A pre-queue of 2,300 (Redis: read 500 and keyed 250 a call) drawn,
 * with people leaving before the opening: every admission in draw order. */
static void t_draw_large(void **state)
{
    wr_store_t *s = draw_store(state);
    enum { N = 2300 };
    wr_queue_config_t c = draw_cfg(store_ms(s) + 600000, 0);
    put_ok(s, "dL", c);
    pre_joins(s, "dL", "p", N);
    for (int i = 0; i < N; i += 100) {
        char u[32];
        snprintf(u, sizeof u, "p%d", i);
        assert_int_equal(sh_leave(s, "dL", u), WR_OK);
    }
    c.opens_at_ms = store_ms(s) - 1;
    put_ok(s, "dL", c);
    open_drawn(s, "dL");
    wr_logleaf_t l[1];
    lres_t h;
    assert_int_equal(lg_head(s, "dL", &h), WR_OK);
    wr_log_read_t req = {.start = h.a.size - 1, .end = h.a.size};
    lres_t last;
    assert_int_equal(lg_read(s, "dL", &req, &last), WR_OK);
    assert_int_equal(wr_logleaf_parse(last.leaves, strlen(last.leaves) - 1, l, NULL, 0), WR_OK);
    assert_int_equal(l[0].e, WR_LOGLEAF_DRAW);
    assert_int_equal(l[0].n, N - N / 100);
    wr_logreplay_stats_t st;
    admit_all_and_replay(s, "dL", c, N - N / 100, &st);
    assert_int_equal(st.draws, 1);
    assert_int_equal(st.left[WR_LOGLEAF_LEFT], N / 100);
}

/* The count of q's pre-queue keyed in the drawn band (below 0): Redis. */
static long long drawn_band(const char *q)
{
    redisReply *r = sh_redis_cmd("ZCOUNT wr:{%s}:pre -inf (0", q);
    assert_non_null(r);
    long long n = r->integer;
    freeReplyObject(r);
    return n;
}

/* Redis: an instance that stops in the middle of a draw (its store closed
 * after the first APPLY: part of the pre-queue keyed) leaves its lease to
 * expire (here: removed); another instance's draw reads the part keyed with
 * the rest and writes the same order: one draw leaf, every admission in
 * draw order. */
static void t_draw_taken_over(void **state)
{
    wr_store_t *s = draw_store(state);
    if (!g_redis)
        skip(); /* (the keys read by hand: one server) */
    enum { N = 1200 };
    wr_queue_config_t c = draw_cfg(store_ms(s) + 600000, 0);
    put_ok(s, "dt", c);
    pre_joins(s, "dt", "p", N);
    c.opens_at_ms = store_ms(s) - 1;
    put_ok(s, "dt", c);
    sh_res_t r;
    assert_int_equal(sh_admit(s, "dt", &r), WR_OK); /* (the tick that starts the draw) */
    long long part = 0;
    for (int i = 0; i < 20000 && part == 0; i++) {
        event_base_loop(sh_base(), EVLOOP_ONCE);
        part = drawn_band("dt");
    }
    assert_true(part > 0 && part < N); /* one APPLY's answer at a time: stopped in the middle */
    wr_store_close(s);
    redisReply *x = sh_redis_cmd("HDEL wr:{dt}:log dlease");
    assert_non_null(x);
    freeReplyObject(x);
    *state = s = open_store_with(2000);
    assert_non_null(s);
    open_drawn(s, "dt");
    wr_logleaf_t l[1];
    lres_t h, last;
    assert_int_equal(lg_head(s, "dt", &h), WR_OK);
    assert_int_equal(h.a.size, 1 + N + 1);
    wr_log_read_t req = {.start = h.a.size - 1, .end = h.a.size};
    assert_int_equal(lg_read(s, "dt", &req, &last), WR_OK);
    assert_int_equal(wr_logleaf_parse(last.leaves, strlen(last.leaves) - 1, l, NULL, 0), WR_OK);
    assert_true(l[0].e == WR_LOGLEAF_DRAW && l[0].n == N);
    wr_logreplay_stats_t st;
    admit_all_and_replay(s, "dt", c, N, &st);
    assert_int_equal(st.draws, 1);
}

WR_CONTRACT_GROUP(publog_draw, T(t_draw_without_beacon), T(t_draw_with_beacon),
                  T(t_draw_beacon_error), T(t_draw_large), T(t_draw_taken_over));
