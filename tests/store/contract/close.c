/*
 * close.c - the store contract, closing the store: pending calls cancelled once, close from inside
 * a callback. Run by runner.c against every backend of the store registry (tests listed in
 * WR_CONTRACT_GROUP at the end; *_redis_only groups run against Redis alone).
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

static void t_close_cancels_pending(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r[6];
    put_ok(s, "cl", plain_cfg());
    for (int i = 0; i < 6; i++) {
        char u[8];
        snprintf(u, sizeof u, "u%d", i);
        sh_begin(&r[i]);
        wr_err_t rc = i < 5 ? wr_store_join(s, "cl", u, sh_entry_cb, &r[i])
                            : wr_store_admit(s, "cl", sh_admit_cb, &r[i]);
        assert_int_equal(rc, WR_OK);
        r[i].returned = true;
        assert_int_equal(r[i].calls, 0);
    }
    wr_store_close(s);
    *state = NULL;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].err, WR_ECANCELED);
    }
    sh_run_for(50); /* nothing more arrives after close */
    for (int i = 0; i < 6; i++)
        assert_int_equal(r[i].calls, 1);
}

typedef struct {
    wr_store_t *s;
    sh_res_t r[3];
} close_in_cb_t;

static close_in_cb_t *g_cic;

static void close_in_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    sh_entry_cb(err, e, arg);
    if (arg == &g_cic->r[0]) {
        wr_store_close(g_cic->s); /* the others are cancelled right here */
        g_cic->s = NULL;
        assert_int_equal(g_cic->r[1].calls, 1);
        assert_int_equal(g_cic->r[2].calls, 1);
    }
}

/* close() from inside a callback is safe: pending callbacks get
 * WR_ECANCELED once, nothing runs after, nothing leaks (ASan). */
static void t_close_inside_callback(void **state)
{
    close_in_cb_t c;
    memset(&c, 0, sizeof c);
    c.s = *state;
    g_cic = &c;
    put_ok(c.s, "cic", plain_cfg());
    for (int i = 0; i < 3; i++) {
        char u[8];
        snprintf(u, sizeof u, "u%d", i);
        assert_int_equal(wr_store_join(c.s, "cic", u, close_in_cb, &c.r[i]), WR_OK);
        c.r[i].returned = true;
    }
    *state = NULL; /* closed by the first callback */
    assert_true(sh_run_until(&c.r[0].calls, 1, SH_WAIT_MS));
    assert_null(c.s);
    assert_int_equal(c.r[0].err, WR_OK);
    assert_int_equal(c.r[1].err, WR_ECANCELED);
    assert_int_equal(c.r[2].err, WR_ECANCELED);
    sh_run_for(50);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c.r[i].calls, 1);
        assert_false(c.r[i].sync_call);
    }
    g_cic = NULL;
}

WR_CONTRACT_GROUP(close, T(t_close_cancels_pending), T(t_close_inside_callback));
