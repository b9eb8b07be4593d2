/*
 * test_memq_log.c - the public log in the embedded store's queue model
 * (memq_log.c): a sale driven through memq (a shuffled pre-queue, a page
 * join that never counts, people away and held, a held return, a leave,
 * the queue's delete) writes a log whose replay (core/logreplay) finds
 * no overtake and a draw that checks; the pre-queue enters the line in
 * the draw's rank order; a page join that starts to count is logged with
 * its original t; the log outlives its queue and a queue created again
 * continues it above its last t.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/logreplay.h"
#include "memq_steps.h"
#include "store/memory/mem_snapshot.h"
#include "store/memory/memlog.h"
#include "store/memory/memq.h"
#include "unit_cfg.h"
#include "unit_main.h"

#define T0   INT64_C(1800000000000000) /* store time, us */
#define USER 20

static wr_memq_db_t db;

static int setup(void **state)
{
    (void)state;
    memset(&db, 0, sizeof db);
    wr_rng_seed(&db.rng, 42);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    wr_memq_db_clear(&db);
    return 0;
}

static wr_memq_t *queue(const char *name, int64_t opens_at_ms)
{
    wr_queue_config_t cfg = cfg_rate(1000);
    cfg.tick_ms = 10;
    cfg.public_log = true;
    cfg.opens_at_ms = opens_at_ms;
    cfg.idle_timeout_seconds = 1;
    cfg.away_hold_seconds = 60;
    wr_memq_t *q = NULL;
    assert_int_equal(wr_memq_db_put_config(&db, name, &cfg, &q), WR_OK);
    assert_int_equal(wr_memq_log_attach(&db, q), WR_OK);
    assert_non_null(q->log);
    return q;
}

/* name's config set to cfg: its queue. */
static wr_memq_t *requeue(const char *name, const wr_queue_config_t *cfg)
{
    wr_memq_t *q = NULL;
    assert_int_equal(wr_memq_db_put_config(&db, name, cfg, &q), WR_OK);
    return q;
}

/* The users <prefix>0 .. <prefix>(n - 1) ask (a line join if add), user i
 * at now + i * step. */
static void entries(wr_memq_t *q, const char *prefix, int n, bool add, int64_t now, int64_t step)
{
    char u[16];
    for (int i = 0; i < n; i++) {
        snprintf(u, sizeof u, "%s%d", prefix, i);
        memq_entry(q, u, add, false, now + i * step);
    }
}

/* Admission ticks every 10 ms from from until before to, each after the
 * users of seen (NULL-terminated, or NULL) asked again; how many were
 * admitted. */
static uint64_t admit_span(wr_memq_t *q, int64_t from, int64_t to, const char *const *seen)
{
    uint64_t n = 0;
    for (int64_t t = from; t < to; t += 10000) {
        for (size_t i = 0; seen && seen[i]; i++)
            memq_entry(q, seen[i], false, false, t);
        n += memq_admit(q, t);
    }
    return n;
}

/* The replay of l's leaves. */
static wr_logreplay_stats_t replay(const wr_memlog_t *l)
{
    wr_logreplay_t *r = wr_logreplay_new();
    assert_non_null(r);
    for (uint64_t i = 0; i < wr_memlog_size(l); i++) {
        size_t len;
        const char *leaf = wr_memlog_leaf(l, i, &len);
        assert_int_equal(wr_logreplay_feed(r, leaf, len), WR_OK);
    }
    wr_logreplay_stats_t st = *wr_logreplay_stats(r);
    wr_logreplay_free(r);
    return st;
}

static bool in_log(const wr_memlog_t *l, const char *u)
{
    for (uint64_t i = 0; i < wr_memlog_size(l); i++) {
        size_t len;
        const char *leaf = wr_memlog_leaf(l, i, &len);
        char buf[WR_LOGLEAF_MAX + 1];
        memcpy(buf, leaf, len);
        buf[len] = '\0';
        if (strstr(buf, u))
            return true;
    }
    return false;
}

static void test_sale_replays_fair(void **state)
{
    (void)state;
    int64_t opens = T0 + 5000000;
    wr_memq_t *q = queue("sale", opens / 1000);
    char users[USER][16];
    for (int i = 0; i < USER; i++) {
        snprintf(users[i], sizeof users[i], "user%02d", i);
        wr_entry_t e = memq_entry(q, users[i], true, false, T0 + i * 1000);
        assert_int_equal(e.state, WR_ENTRY_PREQUEUE);
    }
    /* a page join in the pre-queue that never asks again: never logged */
    assert_int_equal(memq_entry(q, "scanner", true, true, T0 + 50000).state, WR_ENTRY_PREQUEUE);
    char scanner_u[33];
    assert_int_equal(wr_memlog_u(q->log, "scanner", 7, scanner_u), WR_OK);
    /* the receipt: the join leaf of user 0 is leaf 1 (after the commit) */
    char u[33];
    uint64_t idx;
    uint8_t lh[32];
    assert_true(wr_memq_log_receipt(q, users[0], strlen(users[0]), u, &idx, lh));
    assert_int_equal(idx, 1);
    assert_true(wr_memq_log_committed(q));
    /* everyone but users 0 and 1 asks again just before the opening */
    for (int i = 2; i < USER; i++)
        memq_entry(q, users[i], false, false, opens - 100000);
    /* the opening: the draw, then admissions */
    uint64_t admitted = admit_span(q, opens, opens + 400000, NULL);
    assert_false(wr_memq_log_committed(q));
    assert_int_equal(admitted, USER - 2);
    /* user 0 comes back: a held return, admitted first */
    wr_entry_t e = memq_entry(q, users[0], false, false, opens + 500000);
    assert_true(e.held);
    assert_true(wr_memq_log_receipt(q, users[0], strlen(users[0]), u, &idx, lh));
    assert_int_equal(memq_admit(q, opens + 520000), 1);
    /* user 1 leaves while held */
    bool dirty = false;
    assert_int_equal(wr_memq_leave(q, users[1], strlen(users[1]), opens + 600000, &dirty), WR_OK);
    wr_memlog_t *l = q->log;
    wr_logreplay_stats_t st = replay(l);
    assert_int_equal(st.invalid, 0);
    assert_int_equal(st.overtakes, 0);
    assert_int_equal(st.joined, USER);
    assert_int_equal(st.admitted, USER - 1);
    assert_int_equal(st.held_returns, 1);
    assert_int_equal(st.away, 2);
    assert_int_equal(st.left[WR_LOGLEAF_LEFT], 1);
    assert_int_equal(st.draws, 1);
    assert_int_equal(st.draw_failures, 0);
    assert_false(st.draw_pending);
    assert_false(in_log(l, scanner_u));
    /* the queue deleted: the scanner is nobody's; its log stays */
    wr_memq_log_removed(q, opens + 700000);
    assert_int_equal(wr_memq_db_delete(&db, "sale"), WR_OK);
    assert_ptr_equal(wr_memq_db_log(&db, "sale"), l);
    int64_t last_t = l->last_t;
    q = queue("sale", -1);
    assert_ptr_equal(q->log, l);
    e = memq_entry(q, "again", true, false, T0); /* a clock far back: t still goes on */
    assert_true(wr_memq_log_receipt(q, "again", 5, u, &idx, lh));
    assert_int_equal(idx, wr_memlog_size(l) - 1);
    assert_true(l->last_t > last_t);
    st = replay(l);
    assert_int_equal(st.overtakes, 0);
}

/* A page join in line that starts to count is logged then, with its
 * original t, ahead of a later join; one that never does is not. */
static void test_page_join_counts_late(void **state)
{
    (void)state;
    wr_memq_t *q = queue("page", -1);
    memq_entry(q, "p", true, true, T0);
    memq_entry(q, "x", true, false, T0 + 1000);
    assert_int_equal(wr_memlog_size(q->log), 1);
    memq_entry(q, "p", false, false, T0 + 2000); /* asks again: counts */
    assert_int_equal(wr_memlog_size(q->log), 2);
    size_t len;
    const char *leaf = wr_memlog_leaf(q->log, 1, &len);
    char want[32];
    snprintf(want, sizeof want, "\"t\":%lld}", (long long)T0);
    assert_non_null(strstr(leaf, want));
    uint64_t n = admit_span(q, T0 + 1500000, T0 + 1700000, NULL);
    /* both idle by now: held in order, nobody admitted */
    wr_logreplay_stats_t st = replay(q->log);
    assert_int_equal(st.overtakes, 0);
    assert_int_equal(st.joined, 2);
    assert_int_equal(st.away + st.admitted, 2);
    assert_int_equal(n, st.admitted);
}

/* A draw with a beacon waits for it: joins after opensAt are not drawn
 * (a line join each, after the drawn); 60 s after opensAt without an
 * answer the draw goes on and says so (beaconError), and replays. */
static void test_beacon_wait_bound(void **state)
{
    (void)state;
    int64_t opens = T0 + 1000000;
    wr_queue_config_t cfg = queue("b", opens / 1000)->cfg->cfg;
    cfg.draw.set = true;
    snprintf(cfg.draw.beacon_url, sizeof cfg.draw.beacon_url, "https://api.drand.sh");
    cfg.draw.round = 9;
    wr_memq_t *q = requeue("b", &cfg);
    assert_int_equal(wr_memq_log_attach(&db, q), WR_OK);
    memq_entry(q, "a", true, false, T0);
    memq_entry(q, "b", true, false, T0 + 1);
    assert_false(wr_memq_log_beacon_wait(q, opens - 1));
    assert_true(wr_memq_log_beacon_wait(q, opens));
    assert_int_equal(memq_admit(q, opens + 10000), 0);
    assert_int_equal(memq_entry(q, "late", true, false, opens + 20000).state, WR_ENTRY_PREQUEUE);
    assert_true(wr_memq_log_committed(q));
    int64_t end = opens + 60 * 1000000LL;
    assert_true(wr_memq_log_beacon_wait(q, end - 1));
    assert_false(wr_memq_log_beacon_wait(q, end));
    static const char *const seen[] = {"a", "b", "late", NULL};
    assert_int_equal(admit_span(q, end, end + 300000, seen), 3);
    wr_logreplay_stats_t st = replay(q->log);
    assert_int_equal(st.overtakes, 0);
    assert_int_equal(st.draws, 1);
    assert_int_equal(st.draw_failures, 0);
    assert_false(st.draw_independent);
    assert_true(in_log(q->log, "\"n\":2"));
    assert_true(in_log(q->log, "within 60 s"));
}

/* A pre-queue page join that counts only after the draw was not drawn:
 * it enters after the drawn, and the replay agrees (logged then as a line
 * join with its order key). */
static void test_page_join_counts_after_draw(void **state)
{
    (void)state;
    int64_t opens = T0 + 1000000;
    wr_memq_t *q = queue("late-page", opens / 1000);
    entries(q, "d", 6, true, T0, 1);
    memq_entry(q, "pg", true, true, opens - 500000); /* a page join, not counted */
    entries(q, "d", 6, false, opens - 1000, 0);      /* seen: not away */
    memq_entry(q, "pg", false, false, opens + 1);    /* counts at the opening's start */
    static const char *const seen[] = {"pg", NULL};
    assert_int_equal(admit_span(q, opens + 10000, opens + 3000000, seen), 7);
    wr_logreplay_stats_t st = replay(q->log);
    assert_int_equal(st.overtakes, 0);
    assert_int_equal(st.joined, 7);
    assert_int_equal(st.draw_failures, 0);
    assert_true(in_log(q->log, "\"n\":6"));
}

/* A queue "unseen" (passes of 1 s, nobody away by idleness) where "a"
 * joined and was admitted, and no answer carried the pass. */
static wr_memq_t *admitted_unseen(void)
{
    wr_queue_config_t cfg = queue("unseen", -1)->cfg->cfg;
    cfg.token_ttl_seconds = 1;
    cfg.idle_timeout_seconds = 0;
    wr_memq_t *q = requeue("unseen", &cfg);
    memq_entry(q, "a", true, false, T0);
    assert_int_equal(admit_span(q, T0 + 500000, T0 + 800000, NULL), 1);
    return q;
}

/* The pass of admitted_unseen's "a" expires unseen: the away leaf with
 * unseen puts them back in the log's line, away (their receipt is their
 * join leaf again); their return is an admit with held, and the replay
 * counts both admissions. */
static void unseen_expiry_returns(wr_memq_t *q)
{
    char u[33];
    uint64_t idx;
    uint8_t lh[32];
    assert_int_equal(memq_admit(q, T0 + 2000000), 0); /* the pass expired unseen */
    assert_true(wr_memq_log_receipt(q, "a", 1, u, &idx, lh));
    assert_int_equal(idx, 0);
    assert_true(in_log(q->log, "\"unseen\":true"));
    assert_true(memq_entry(q, "a", false, false, T0 + 2100000).held);
    assert_int_equal(memq_admit(q, T0 + 2200000), 1);
    wr_logreplay_stats_t st = replay(q->log);
    assert_int_equal(st.invalid, 0);
    assert_int_equal(st.overtakes, 0);
    assert_int_equal(st.admitted, 2);
    assert_int_equal(st.held_returns, 1);
}

/* An unseen pass that expires (1.3, second reading): its holder is back
 * in the log's line (unseen_expiry_returns). */
static void test_unseen_pass(void **state)
{
    (void)state;
    wr_memq_t *q = admitted_unseen();
    char u[33];
    uint64_t idx;
    uint8_t lh[32];
    assert_false(wr_memq_log_receipt(q, "a", 1, u, &idx, lh)); /* admitted: out of it */
    unseen_expiry_returns(q);
}

/* A restart at now_us: the db written to a snapshot, cleared, loaded. */
static void restart(int64_t now_us)
{
    char dir[] = "/tmp/wr_memq_log_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/waitroom.snapshot", dir);
    assert_int_equal(wr_mem_snapshot_write(&db, dir, now_us), WR_OK);
    wr_memq_db_clear(&db);
    assert_int_equal(wr_mem_snapshot_load(&db, dir, now_us), WR_OK);
    unlink(path);
    rmdir(dir);
}

/* The same across a restart: the snapshot keeps the holder's join leaf,
 * so a pass admitted unseen before it still puts its holder back in the
 * log's line when it expires after the load. */
static void test_unseen_pass_restart(void **state)
{
    (void)state;
    admitted_unseen();
    restart(T0 + 800000);
    wr_memq_t *q = wr_memq_db_find(&db, "unseen");
    assert_non_null(q);
    unseen_expiry_returns(q);
}

/* preQueueShuffle false: no commit, no draw; the pre-queue enters in
 * arrival order, ahead of later joins, and the replay agrees. */
static void test_arrival_order_opening(void **state)
{
    (void)state;
    int64_t opens = T0 + 1000000;
    wr_queue_config_t cfg = queue("fifo", opens / 1000)->cfg->cfg;
    cfg.pre_queue_shuffle = false;
    cfg.idle_timeout_seconds = 0;
    wr_memq_t *q = requeue("fifo", &cfg);
    entries(q, "p", 5, true, T0, 1);
    assert_false(wr_memq_log_committed(q));
    uint64_t n = memq_admit(q, opens + 10000);
    memq_entry(q, "later", true, false, opens + 20000);
    n += admit_span(q, opens + 30000, opens + 3000000, NULL);
    assert_int_equal(n, 6);
    wr_logreplay_stats_t st = replay(q->log);
    assert_int_equal(st.overtakes, 0);
    assert_int_equal(st.draws, 0);
    assert_int_equal(st.joined, 6);
    assert_int_equal(st.admitted, 6);
    assert_false(in_log(q->log, "commit"));
}

/* user's receipt through their line node (the poll's path), checked
 * against the lookup by id; false when they have none. */
static bool node_receipt(wr_memq_t *q, const char *user, int64_t now, uint64_t *index)
{
    wr_entry_t e = memq_entry(q, user, false, false, now);
    assert_int_equal(e.state, WR_ENTRY_WAITING);
    assert_non_null(q->entry_node);
    char u[33], u2[33];
    uint8_t lh[32], lh2[32];
    uint64_t i2;
    bool got = wr_memq_log_receipt_at(q, q->entry_node, user, strlen(user), u, index, lh);
    assert_int_equal(got, wr_memq_log_receipt(q, user, strlen(user), u2, &i2, lh2));
    if (got) {
        assert_string_equal(u, u2);
        assert_int_equal(*index, i2);
        assert_memory_equal(lh, lh2, 32);
    }
    return got;
}

/* The receipt's copy in a line node: a poll reads the same receipt
 * through it as by id; nodes made before the log have none (and no receipt); a
 * person who leaves and comes back gets their new join's receipt; a
 * restart's nodes start without hints and read the same receipts. */
static void test_receipt_hint_in_line_node(void **state)
{
    (void)state;
    wr_queue_config_t cfg = queue("hints", 0)->cfg->cfg;
    cfg.public_log = false;
    cfg.idle_timeout_seconds = 0;
    wr_memq_t *q = requeue("hints", &cfg);
    assert_int_equal(wr_memq_log_attach(&db, q), WR_OK);
    assert_null(q->log);
    entries(q, "early", 3, true, T0, 1);
    cfg.public_log = true;
    q = requeue("hints", &cfg);
    assert_int_equal(wr_memq_log_attach(&db, q), WR_OK);
    entries(q, "late", 5, true, T0 + 100, 1);
    uint64_t idx[5], k, hint;
    for (int i = 0; i < 5; i++) {
        char u[16];
        snprintf(u, sizeof u, "late%d", i);
        assert_true(node_receipt(q, u, T0 + 1000, &idx[i])); /* the copy kept at the join */
        const unsigned char *x = wr_zsl_node_extra(q->entry_node);
        assert_non_null(x);
        memcpy(&hint, x, sizeof hint);
        assert_true(wr_memlog_hint_live(q->log, hint));
        memcpy(&k, x + 8, sizeof k);
        assert_int_equal(k, idx[i]);
        assert_true(node_receipt(q, u, T0 + 2000, &k)); /* through the copy */
        assert_int_equal(k, idx[i]);
    }
    for (int i = 0; i < 3; i++) {
        char u[16];
        snprintf(u, sizeof u, "early%d", i);
        assert_false(node_receipt(q, u, T0 + 3000, &k));
        assert_null(wr_zsl_node_extra(q->entry_node)); /* made before the log */
    }
    /* late0 leaves (their slot goes to the next member) and joins again */
    bool dirty = false;
    assert_int_equal(wr_memq_leave(q, "late0", 5, T0 + 4000, &dirty), WR_OK);
    memq_entry(q, "late9", true, false, T0 + 4100);
    assert_true(node_receipt(q, "late9", T0 + 4200, &k));
    memq_entry(q, "late0", true, false, T0 + 4300);
    assert_true(node_receipt(q, "late0", T0 + 4400, &k));
    assert_true(k > idx[4]);
    assert_true(node_receipt(q, "late0", T0 + 4500, &idx[0]));
    assert_int_equal(idx[0], k);
    /* a restart: the same receipts, by id first, then through new hints */
    restart(T0 + 5000);
    q = wr_memq_db_find(&db, "hints");
    assert_non_null(q);
    for (int i = 0; i < 5; i++) {
        char u[16];
        snprintf(u, sizeof u, "late%d", i);
        for (int round = 0; round < 2; round++) {
            assert_true(node_receipt(q, u, T0 + 6000 + round, &k));
            assert_int_equal(k, idx[i]);
            /* a loaded node has room for the copy, filled by its first poll */
            const unsigned char *x = wr_zsl_node_extra(q->entry_node);
            assert_non_null(x);
            memcpy(&hint, x, sizeof hint);
            assert_true(wr_memlog_hint_live(q->log, hint));
        }
    }
    /* publicLog off: no receipt through any node */
    cfg.public_log = false;
    q = requeue("hints", &cfg);
    assert_int_equal(wr_memq_log_attach(&db, q), WR_OK);
    assert_false(node_receipt(q, "late1", T0 + 7000, &k));
}

#define TESTS(X)                                                                                   \
    X(test_sale_replays_fair)                                                                      \
    X(test_page_join_counts_late)                                                                  \
    X(test_beacon_wait_bound)                                                                      \
    X(test_arrival_order_opening)                                                                  \
    X(test_page_join_counts_after_draw)                                                            \
    X(test_unseen_pass)                                                                            \
    X(test_unseen_pass_restart)                                                                    \
    X(test_receipt_hint_in_line_node)
WR_UNIT_MAIN_EACH(setup, teardown, TESTS)
