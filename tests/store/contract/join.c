/*
 * join.c - the store contract, joining: positions, unknown queues, maxQueueSize.
 * Run by runner.c against every backend of the store registry (tests
 * listed in WR_CONTRACT_GROUP at the end; *_redis_only groups run
 * against Redis alone).
 */
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "contract.h"

/* ------------------------------------------------------------ contract */

static void t_ping_and_unknown_queue(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    assert_int_equal(sh_ping(s), WR_OK);
    assert_int_equal(sh_join(s, "nosuch", "u1", &r), WR_ENOTFOUND);
    assert_int_equal(sh_status(s, "nosuch", "u1", &r), WR_ENOTFOUND);
    assert_int_equal(sh_admit(s, "nosuch", &r), WR_ENOTFOUND);
    assert_int_equal(sh_consume(s, "nosuch", "u1", "AAAAAAAAAAAAAAAAAAAAAA", &r), WR_ENOTFOUND);
    assert_int_equal(sh_verify(s, "nosuch", "u1", "AAAAAAAAAAAAAAAAAAAAAA", &r), WR_ENOTFOUND);
    assert_int_equal(sh_get(s, "nosuch", &r), WR_ENOTFOUND);
    assert_int_equal(sh_delete(s, "nosuch"), WR_ENOTFOUND);
}

static void t_join_positions(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "pos", plain_cfg());
    const char *users[5] = {"u1", "u2", "u3", "u4", "u5"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(sh_join(s, "pos", users[i], &r), WR_OK);
        assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
        assert_int_equal(r.entry.position, i + 1);
        assert_int_equal(r.entry.waiting, i + 1);
        assert_true(r.has_cfg);
        assert_true(r.cfg.admit_per_second == 5.0);
        assert_int_equal(r.cfg.tick_ms, 1000);
    }
    /* rejoin keeps the place */
    assert_int_equal(sh_join(s, "pos", "u3", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_int_equal(r.entry.position, 3);
    assert_int_equal(r.entry.waiting, 5);
    assert_int_equal(sh_status(s, "pos", "u4", &r), WR_OK);
    assert_int_equal(r.entry.position, 4);
    assert_int_equal(r.entry.waiting, 5);
    assert_int_equal(sh_status(s, "pos", "ghost", &r), WR_ENOTINQUEUE);
    assert_false(r.has_entry && r.entry.position > 0);

    /* leave from the line moves the others up; twice -> not in queue */
    assert_int_equal(sh_leave(s, "pos", "u2"), WR_OK);
    assert_int_equal(sh_status(s, "pos", "u4", &r), WR_OK);
    assert_int_equal(r.entry.position, 3);
    assert_int_equal(r.entry.waiting, 4);
    assert_int_equal(sh_leave(s, "pos", "u2"), WR_ENOTINQUEUE);
    assert_int_equal(sh_status(s, "pos", "u2", &r), WR_ENOTINQUEUE);
    /* joining again goes to the end */
    assert_int_equal(sh_join(s, "pos", "u2", &r), WR_OK);
    assert_int_equal(r.entry.position, 5);
    sh_expect_queue_stats(s, "pos", SH_ST(waiting, 5), SH_ST(left_total, 1), SH_ST(active, 0));
}

static void t_max_queue_size(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "full", mkcfg(5, 1000, 0, 3, 300));
    join_n(s, "full", 1, 3);
    assert_int_equal(sh_join(s, "full", "u4", &r), WR_EFULL);
    assert_true(r.has_entry);
    assert_int_equal(r.entry.waiting, 3);
    assert_true(r.has_cfg);
    assert_int_equal(r.cfg.max_queue_size, 3);
    /* already in line: not refused */
    assert_int_equal(sh_join(s, "full", "u1", &r), WR_OK);
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(sh_status(s, "full", "u4", &r), WR_ENOTINQUEUE);
    sh_expect_queue_stats(s, "full", SH_ST(rejected_full_total, 1), SH_ST(waiting, 3));
    /* a place frees up */
    assert_int_equal(sh_leave(s, "full", "u2"), WR_OK);
    assert_int_equal(sh_join(s, "full", "u4", &r), WR_OK);
    assert_int_equal(r.entry.position, 3);
}

WR_CONTRACT_GROUP(join, T(t_ping_and_unknown_queue), T(t_join_positions), T(t_max_queue_size));
