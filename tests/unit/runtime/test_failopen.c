/*
 * test_failopen.c - degraded mode's spent set and owed burns (failopen.c)
 * on a real libevent base, against a fake store (its vtable: burn and
 * consume only) that records every call and answers from the loop.
 *
 * Checked: a pass spent once is spent (WR_ETOKEN the second time, per
 * queue and jti) until it expires, then its place can be taken; the set is
 * bounded (WR_FAILOPEN_MAX live passes, then WR_ELIMIT; expired ones make
 * room); the owed burns are replayed once each when the store answers (a
 * fail-open pass burned with its expiry in us, an ordinary token consumed
 * as its user), in the order spent; a store failure puts the burn back for
 * the next round (replayed again, once more only); a call refused at once
 * (breaker open) ends the round; a burn whose pass expired is dropped
 * unsent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "fake_store.h"
#include "runtime/failopen.h"
#include "unit_main.h"

/* ---------------------------------------------------------- fake store */

/* burn and consume, answered from the loop; every pass burned is a real
 * burn, never a check */
static fake_store_t g_fake;
static struct event_base *g_loop;

static void burn_not_check_only(const fs_call_t *c)
{
    if (c->op == FS_BURN)
        assert_false(c->check_only);
}

static wr_failopen_t *g_fo;

static int setup(void **state)
{
    (void)state;
    g_loop = fs_init_loop(&g_fake, FS_BURN | FS_CONSUME);
    if (!g_loop)
        return -1;
    g_fake.on_call = burn_not_check_only;
    return wr_failopen_new(g_loop, &g_fake.base, &g_fo) == WR_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    wr_failopen_free(g_fo); /* a burn in flight frees it from its callback */
    fs_free_loop(&g_fake);
    return 0;
}

static void run_for_ms(int ms)
{
    struct timeval tv = wr_clock_tv_ms((uint64_t)ms);
    event_base_loopexit(g_loop, &tv);
    event_base_dispatch(g_loop);
}

/* s into dst (cap bytes with the NUL), cut to fit: a copy the Release
 * build's -Wformat-truncation does not second-guess. */
static void copy(char *dst, size_t cap, const char *s)
{
    size_t n = strnlen(s, cap - 1);
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static wr_token_claims_t pass(const char *q, const char *user, const char *jti, int64_t exp,
                              bool fail_open)
{
    wr_token_claims_t c;
    memset(&c, 0, sizeof c);
    copy(c.queue, sizeof c.queue, q);
    copy(c.user, sizeof c.user, user);
    copy(c.jti, sizeof c.jti, jti);
    c.iat = exp - 300;
    c.exp = exp;
    c.fail_open = fail_open;
    return c;
}

/* ------------------------------------------------------------- tests */

static void t_spent_once_is_spent(void **state)
{
    (void)state;
    int64_t now = (int64_t)time(NULL);
    wr_token_claims_t a = pass("q1", "u1", "jtiA", now + 300, true);
    assert_false(wr_failopen_spent(g_fo, &a, now));
    assert_int_equal(wr_failopen_spend(g_fo, &a, now), WR_OK);
    assert_true(wr_failopen_spent(g_fo, &a, now));
    assert_int_equal(wr_failopen_spend(g_fo, &a, now), WR_ETOKEN);
    assert_int_equal(wr_failopen_spend(g_fo, &a, now + 299), WR_ETOKEN);
    /* the same jti in another queue, another jti in this one: other passes */
    wr_token_claims_t b = pass("q2", "u1", "jtiA", now + 300, true);
    wr_token_claims_t c = pass("q1", "u1", "jtiB", now + 300, false);
    assert_int_equal(wr_failopen_spend(g_fo, &b, now), WR_OK);
    assert_int_equal(wr_failopen_spend(g_fo, &c, now), WR_OK);
    assert_int_equal(wr_failopen_count(g_fo), 3);
    assert_int_equal(wr_failopen_pending(g_fo), 3);
    /* expired: no longer spent (nothing left to spend) */
    assert_false(wr_failopen_spent(g_fo, &a, now + 300));
}

static void t_expired_place_can_be_taken(void **state)
{
    (void)state;
    int64_t now = (int64_t)time(NULL);
    /* spent long ago, expired at now - 1: its burn is dropped unsent */
    wr_token_claims_t old = pass("q1", "u1", "jtiOld", now - 1, true);
    assert_int_equal(wr_failopen_spend(g_fo, &old, now - 100), WR_OK);
    run_for_ms(400); /* one replay round */
    assert_int_equal(g_fake.calls, 0);
    assert_int_equal(wr_failopen_pending(g_fo), 0);
    /* a new pass with that jti (exp in the future) is spent anew */
    wr_token_claims_t again = pass("q1", "u1", "jtiOld", now + 60, true);
    assert_int_equal(wr_failopen_spend(g_fo, &again, now), WR_OK);
    assert_int_equal(wr_failopen_count(g_fo), 1);
    assert_int_equal(wr_failopen_spend(g_fo, &again, now), WR_ETOKEN);
}

static void t_burns_replayed_once_in_order(void **state)
{
    (void)state;
    int64_t now = (int64_t)time(NULL);
    wr_token_claims_t fo = pass("q1", "alice", "jtiF", now + 300, true);
    wr_token_claims_t ord = pass("q1", "bob", "jtiO", now + 200, false);
    assert_int_equal(wr_failopen_spend(g_fo, &fo, now), WR_OK);
    assert_int_equal(wr_failopen_spend(g_fo, &ord, now), WR_OK);
    run_for_ms(700); /* two rounds of 250 ms */
    assert_int_equal(g_fake.calls, 2);
    assert_int_equal(g_fake.call[0].op, FS_BURN);
    assert_string_equal(g_fake.call[0].queue, "q1");
    assert_string_equal(g_fake.call[0].jti, "jtiF");
    assert_int_equal(g_fake.call[0].exp_us, (now + 300) * 1000000);
    assert_int_equal(g_fake.call[1].op, FS_CONSUME);
    assert_string_equal(g_fake.call[1].user, "bob");
    assert_string_equal(g_fake.call[1].jti, "jtiO");
    assert_int_equal(wr_failopen_pending(g_fo), 0);
    /* settled: never sent again; still spent here */
    run_for_ms(600);
    assert_int_equal(g_fake.calls, 2);
    assert_true(wr_failopen_spent(g_fo, &fo, now));
    assert_int_equal(wr_failopen_spend(g_fo, &fo, now), WR_ETOKEN);
}

static void t_store_failure_retries_once_more(void **state)
{
    (void)state;
    int64_t now = (int64_t)time(NULL);
    wr_token_claims_t a = pass("q1", "u1", "jti1", now + 300, true);
    wr_token_claims_t b = pass("q1", "u2", "jti2", now + 300, true);
    assert_int_equal(wr_failopen_spend(g_fo, &a, now), WR_OK);
    assert_int_equal(wr_failopen_spend(g_fo, &b, now), WR_OK);
    g_fake.fail_next = 1; /* the first burn fails as a store failure */
    run_for_ms(900);
    assert_int_equal(g_fake.calls, 3); /* jti1 (failed), jti2, jti1 again */
    assert_string_equal(g_fake.call[0].jti, "jti1");
    assert_string_equal(g_fake.call[1].jti, "jti2");
    assert_string_equal(g_fake.call[2].jti, "jti1");
    assert_int_equal(wr_failopen_pending(g_fo), 0);
}

static void t_refused_at_once_ends_the_round(void **state)
{
    (void)state;
    int64_t now = (int64_t)time(NULL);
    for (int i = 0; i < 5; i++) {
        char jti[16];
        snprintf(jti, sizeof jti, "j%d", i);
        wr_token_claims_t p = pass("q1", "u", jti, now + 300, true);
        assert_int_equal(wr_failopen_spend(g_fo, &p, now), WR_OK);
    }
    g_fake.sync_err = WR_EUNAVAILABLE;                       /* the breaker is open */
    run_for_ms(600);                                         /* two rounds */
    assert_true(g_fake.refused >= 1 && g_fake.refused <= 3); /* one try per round */
    assert_int_equal(g_fake.calls, 0);
    assert_int_equal(wr_failopen_pending(g_fo), 5);
    g_fake.sync_err = WR_OK; /* the store is back: each once, in order */
    run_for_ms(400);
    assert_int_equal(g_fake.calls, 5);
    for (int i = 0; i < 5; i++) {
        char jti[16];
        snprintf(jti, sizeof jti, "j%d", i);
        assert_string_equal(g_fake.call[i].jti, jti);
    }
    assert_int_equal(wr_failopen_pending(g_fo), 0);
}

static void t_bounded(void **state)
{
    (void)state;
    int64_t now = (int64_t)time(NULL);
    char jti[32];
    /* half the set expires at now + 10, half lives */
    for (int i = 0; i < WR_FAILOPEN_MAX; i++) {
        snprintf(jti, sizeof jti, "b%d", i);
        wr_token_claims_t p = pass("qb", "u", jti, i % 2 ? now + 300 : now + 10, true);
        assert_int_equal(wr_failopen_spend(g_fo, &p, now), WR_OK);
    }
    assert_int_equal(wr_failopen_count(g_fo), WR_FAILOPEN_MAX);
    wr_token_claims_t more = pass("qb", "u", "more", now + 300, true);
    assert_int_equal(wr_failopen_spend(g_fo, &more, now), WR_ELIMIT); /* all live */
    assert_false(wr_failopen_spent(g_fo, &more, now));
    /* at now + 10 half of them expired: the sweep makes room */
    assert_int_equal(wr_failopen_spend(g_fo, &more, now + 10), WR_OK);
    assert_int_equal(wr_failopen_count(g_fo), WR_FAILOPEN_MAX / 2 + 1);
}

#define TESTS(X)                                                                                   \
    X(t_spent_once_is_spent)                                                                       \
    X(t_expired_place_can_be_taken)                                                                \
    X(t_burns_replayed_once_in_order)                                                              \
    X(t_store_failure_retries_once_more)                                                           \
    X(t_refused_at_once_ends_the_round)                                                            \
    X(t_bounded)
WR_UNIT_MAIN_EACH(setup, teardown, TESTS)
