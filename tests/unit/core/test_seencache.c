/*
 * test_seencache.c - the bounded cache of recently recorded waiting users:
 * fresh within the window only, per (queue, user), forget, and a full table
 * that only ever forgets (a miss is the safe answer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core/seencache.h"
#include "unit_main.h"

static void test_window(void **state)
{
    (void)state;
    wr_seencache_t *c = NULL;
    assert_int_equal(wr_seencache_new(64, &c), WR_OK);
    assert_false(wr_seencache_fresh(c, "q", "u", 1000, 500));
    wr_seencache_note(c, "q", "u", 1000);
    assert_true(wr_seencache_fresh(c, "q", "u", 1000, 500));
    assert_true(wr_seencache_fresh(c, "q", "u", 1499, 500));
    assert_false(wr_seencache_fresh(c, "q", "u", 1500, 500)); /* the window is open-ended */
    assert_false(wr_seencache_fresh(c, "q", "u", 999, 500));  /* a clock before the note */
    /* per queue and user: "q\0u" is neither "q" + "u2" nor "q2" + "u" */
    assert_false(wr_seencache_fresh(c, "q2", "u", 1100, 500));
    assert_false(wr_seencache_fresh(c, "q", "u2", 1100, 500));
    assert_false(wr_seencache_fresh(c, "qu", "", 1100, 500));
    /* a later note moves the window; forget ends it */
    wr_seencache_note(c, "q", "u", 1400);
    assert_true(wr_seencache_fresh(c, "q", "u", 1800, 500));
    wr_seencache_forget(c, "q", "u");
    assert_false(wr_seencache_fresh(c, "q", "u", 1800, 500));
    wr_seencache_forget(c, "q", "nobody"); /* harmless */
    wr_seencache_free(c);
    wr_seencache_free(NULL);
}

/* More users than entries: the newest stay, older ones are forgotten,
 * never reported fresh wrongly. */
static void test_full_table(void **state)
{
    (void)state;
    wr_seencache_t *c = NULL;
    assert_int_equal(wr_seencache_new(64, &c), WR_OK);
    char u[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(u, sizeof u, "user%d", i);
        wr_seencache_note(c, "q", u, 1000 + i);
    }
    int fresh = 0;
    for (int i = 0; i < 10000; i++) {
        snprintf(u, sizeof u, "user%d", i);
        if (wr_seencache_fresh(c, "q", u, 20000, 1000000))
            fresh++;
    }
    assert_true(fresh > 0 && fresh <= 64);
    snprintf(u, sizeof u, "user%d", 9999); /* the newest is kept */
    assert_true(wr_seencache_fresh(c, "q", u, 20000, 1000000));
    wr_seencache_free(c);
}

#define TESTS(X)                                                                                   \
    X(test_window)                                                                                 \
    X(test_full_table)
WR_UNIT_MAIN(NULL, NULL, TESTS)
