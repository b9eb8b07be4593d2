/*
 * test_memq_push.c - Web Push subscriptions in the embedded store's queue
 * model (memq_push.c): set for a person in line, refused for an admitted
 * one without carrying their pass (an unseen pass stays unseen: its
 * expiry holds them, docs/API.md 1.3), claimed once by admission, dropped
 * by leave.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store/memory/memq.h"
#include "unit_cfg.h"
#include "unit_main.h"

#define T0 INT64_C(1800000000000000) /* store time, us */

static wr_memq_db_t db; /* each test's: queue() makes it, the test clears it */

/* A new db's queue admitting at once, passes of 1 s, nobody away by
 * idleness, held people kept a minute. */
static wr_memq_t *queue(void)
{
    memset(&db, 0, sizeof db);
    wr_rng_seed(&db.rng, 42);
    wr_queue_config_t cfg = cfg_rate(1000);
    cfg.tick_ms = 10;
    cfg.token_ttl_seconds = 1;
    cfg.idle_timeout_seconds = 0;
    cfg.away_hold_seconds = 60;
    wr_memq_t *q = NULL;
    assert_int_equal(wr_memq_db_put_config(&db, "p", &cfg, &q), WR_OK);
    return q;
}

static wr_entry_t entry(wr_memq_t *q, const char *u, bool add, int64_t now)
{
    wr_entry_t e;
    bool dirty = false;
    memset(&e, 0, sizeof e);
    assert_int_equal(wr_memq_entry(q, u, strlen(u), add, false, now, now, &e, &dirty), WR_OK);
    return e;
}

/* One admission tick at now: how many admitted; the claimed
 * subscriptions' count in *claimed. */
static uint64_t admit(wr_memq_t *q, int64_t now, size_t *claimed)
{
    uint64_t n = 0, moved, left;
    bool dirty = false;
    assert_int_equal(wr_memq_admit(q, now, &n, NULL, &moved, &left, &dirty), WR_OK);
    wr_memq_push_t **p;
    size_t np;
    wr_memq_push_take(q, &p, &np);
    for (size_t i = 0; i < np; i++)
        free(p[i]);
    free(p);
    if (claimed)
        *claimed = np;
    return n;
}

static wr_pushsub_t sub(void)
{
    wr_pushsub_t s;
    memset(&s, 0, sizeof s);
    snprintf(s.endpoint, sizeof s.endpoint, "https://push.example/a");
    return s;
}

/* A queue where "a" joined and subscribed. */
static wr_memq_t *subscribed(void)
{
    wr_memq_t *q = queue();
    entry(q, "a", true, T0);
    wr_pushsub_t s = sub();
    bool dirty = false;
    assert_int_equal(wr_memq_push_set(q, "a", 1, &s, T0 + 1, &dirty), WR_OK);
    assert_true(dirty);
    assert_true(wr_memq_push_has(q, "a", 1));
    return q;
}

/* Set while waiting (never away then), claimed once by the admission. */
static void test_claimed_once(void **state)
{
    (void)state;
    wr_memq_t *q = subscribed();
    size_t claimed = 0;
    uint64_t n = 0;
    for (int64_t t = T0 + 500000; t < T0 + 800000 && n == 0; t += 10000)
        n += admit(q, t, &claimed);
    assert_int_equal(n, 1);
    assert_int_equal(claimed, 1);
    assert_false(wr_memq_push_has(q, "a", 1));
    assert_int_equal(admit(q, T0 + 810000, &claimed), 0);
    assert_int_equal(claimed, 0);
    wr_memq_db_clear(&db);
}

/* An admitted person's PUT (a service worker renewing its subscription
 * while the page sleeps) is refused, and its status does not carry the
 * pass: still unseen, its expiry holds them; a DELETE the same. */
static void test_admitted_put_keeps_pass_unseen(void **state)
{
    (void)state;
    wr_memq_t *q = queue();
    entry(q, "a", true, T0);
    uint64_t n = 0;
    for (int64_t t = T0 + 500000; t < T0 + 800000 && n == 0; t += 10000)
        n += admit(q, t, NULL);
    assert_int_equal(n, 1);
    wr_pushsub_t s = sub();
    bool dirty = false;
    assert_int_equal(wr_memq_push_set(q, "a", 1, &s, T0 + 850000, &dirty), WR_ENOTINQUEUE);
    assert_int_equal(wr_memq_push_del(q, "a", 1, T0 + 860000, &dirty), WR_ENOTINQUEUE);
    assert_false(wr_memq_push_has(q, "a", 1));
    admit(q, T0 + 2000000, NULL); /* the pass expired */
    assert_int_equal(q->unseen_expired_total, 1);
    wr_entry_t e = entry(q, "a", false, T0 + 2100000);
    assert_int_equal(e.state, WR_ENTRY_WAITING);
    assert_true(e.held);
    wr_memq_db_clear(&db);
}

/* Leave drops the subscription; a person not in line cannot set one. */
static void test_leave_drops(void **state)
{
    (void)state;
    wr_memq_t *q = subscribed();
    wr_pushsub_t s = sub();
    bool dirty = false;
    assert_int_equal(wr_memq_leave(q, "a", 1, T0 + 2, &dirty), WR_OK);
    assert_false(wr_memq_push_has(q, "a", 1));
    assert_int_equal(wr_memq_push_set(q, "a", 1, &s, T0 + 3, &dirty), WR_ENOTINQUEUE);
    assert_int_equal(wr_memq_push_set(q, "b", 1, &s, T0 + 3, &dirty), WR_ENOTINQUEUE);
    wr_memq_db_clear(&db);
}

#define TESTS(X)                                                                                   \
    X(test_claimed_once)                                                                           \
    X(test_admitted_put_keeps_pass_unseen)                                                         \
    X(test_leave_drops)
WR_UNIT_MAIN(NULL, NULL, TESTS)
