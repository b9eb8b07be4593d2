/* Unit tests for the scheduler's held queues (wr_scheduler_hold): one
 * lookup, then reads without one; a queue forgotten while held reads as
 * unknown and is freed by whichever comes last of the last release and its
 * admit answer, also after the scheduler is freed (ASan: no leak, no use
 * after free). On a real event loop, with a fake store whose admit calls
 * the test answers by hand, so "in flight" is a state the test holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "core/qconfig.h"
#include "runtime/scheduler.h"
#include "store/store.h"

/* ---- the fake store: admit waits for the test, discovery fails ---- */

typedef struct {
    wr_store_t base;
    int n; /* admit calls pending */
    wr_store_admit_cb cb[4];
    void *arg[4];
} fake_t;

static wr_err_t f_admit(wr_store_t *s, const char *queue, wr_store_admit_cb cb, void *arg)
{
    fake_t *f = (fake_t *)s;
    (void)queue;
    assert_true(f->n < 4);
    f->cb[f->n] = cb;
    f->arg[f->n] = arg;
    f->n++;
    return WR_OK;
}

static wr_err_t f_queue_list(wr_store_t *s, wr_store_list_cb cb, void *arg)
{
    (void)s;
    (void)cb;
    (void)arg;
    return WR_EUNAVAILABLE;
}

/* Answers the oldest pending admit call with err. */
static void answer_admit(fake_t *f, wr_err_t err)
{
    assert_true(f->n > 0);
    wr_store_admit_cb cb = f->cb[0];
    void *arg = f->arg[0];
    f->n--;
    memmove(f->cb, f->cb + 1, (size_t)f->n * sizeof(f->cb[0]));
    memmove(f->arg, f->arg + 1, (size_t)f->n * sizeof(f->arg[0]));
    cb(err, NULL, arg);
}

static const wr_store_ops_t fake_ops = {
    .name = "fake",
    .admit = f_admit,
    .queue_list = f_queue_list,
};

typedef struct {
    struct event_base *base;
    fake_t store;
    wr_scheduler_t *sched;
    wr_queue_config_t cfg;
} fx_t;

static int setup(void **state)
{
    static fx_t fx;
    memset(&fx, 0, sizeof(fx));
    fx.base = event_base_new();
    assert_non_null(fx.base);
    fx.store.base.ops = &fake_ops;
    wr_scheduler_opts_t o = {fx.base, &fx.store.base, NULL, 60000};
    assert_int_equal(wr_scheduler_new(&o, &fx.sched), WR_OK);
    wr_qconfig_defaults(&fx.cfg);
    fx.cfg.admit_per_second = 10;
    fx.cfg.fail_open_per_second = 5;
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    wr_scheduler_free(fx->sched); /* NULL when the test freed it */
    while (fx->store.n > 0)       /* as a store's close: ECANCELED */
        answer_admit(&fx->store, WR_ECANCELED);
    event_base_free(fx->base);
    return 0;
}

/* Runs the loop until the queue's first tick (armed at 0 ms) has called
 * admit. */
static void until_admit_called(fx_t *fx)
{
    for (int i = 0; i < 100 && fx->store.n == 0; i++)
        event_base_loop(fx->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_int_equal(fx->store.n, 1);
}

static void test_hold_once_then_reads(void **state)
{
    fx_t *fx = *state;
    wr_scheduler_queue_t *q = NULL;
    /* unknown, no config to note: NULL, reads as unknown */
    assert_null(wr_scheduler_hold(fx->sched, &q, "a", NULL));
    assert_null(wr_scheduler_queue_config(q));
    assert_true(wr_scheduler_queue_rate(q) == -1);
    assert_int_equal(wr_scheduler_queue_next_tick_ms(q), -1);
    assert_false(wr_scheduler_queue_take_fail_open(q, 0));
    /* with a config: noted and held */
    wr_scheduler_queue_t *h = wr_scheduler_hold(fx->sched, &q, "a", &fx->cfg);
    assert_non_null(h);
    assert_ptr_equal(h, q);
    assert_int_equal(wr_scheduler_count(fx->sched), 1);
    assert_ptr_equal(wr_scheduler_queue_config(q), wr_scheduler_config(fx->sched, "a"));
    assert_true(wr_scheduler_queue_config(q)->admit_per_second == 10);
    assert_true(wr_scheduler_queue_rate(q) == -1); /* no admit answer yet */
    assert_true(wr_scheduler_queue_next_tick_ms(q) >= 0);
    assert_true(wr_scheduler_queue_take_fail_open(q, 1000));
    /* held and known: the same entry, nothing noted again */
    assert_ptr_equal(wr_scheduler_hold(fx->sched, &q, "a", NULL), h);
    /* a second holder; holding another name releases it and looks the
     * name up */
    wr_scheduler_queue_t *b = NULL;
    assert_ptr_equal(wr_scheduler_hold(fx->sched, &b, "a", NULL), h);
    assert_null(wr_scheduler_hold(fx->sched, &b, "b", NULL));
    assert_null(b);
    wr_scheduler_release(q);
    wr_scheduler_release(NULL);
}

static void test_forgotten_while_held(void **state)
{
    fx_t *fx = *state;
    wr_scheduler_queue_t *q = NULL, *q2 = NULL;
    wr_scheduler_queue_t *h = wr_scheduler_hold(fx->sched, &q, "a", &fx->cfg);
    assert_non_null(h);
    assert_non_null(wr_scheduler_hold(fx->sched, &q2, "a", NULL)); /* two holders */
    wr_scheduler_forget(fx->sched, "a");
    assert_int_equal(wr_scheduler_count(fx->sched), 0);
    /* still valid memory, read as unknown */
    assert_null(wr_scheduler_queue_config(q));
    assert_true(wr_scheduler_queue_rate(q) == -1);
    assert_int_equal(wr_scheduler_queue_next_tick_ms(q), -1);
    assert_false(wr_scheduler_queue_take_fail_open(q, 1000));
    /* holding again finds the queue anew (noted again with a config) */
    assert_null(wr_scheduler_hold(fx->sched, &q2, "a", NULL));
    assert_non_null(wr_scheduler_hold(fx->sched, &q2, "a", &fx->cfg));
    assert_ptr_not_equal(q2, h);
    assert_non_null(wr_scheduler_queue_config(q2));
    wr_scheduler_release(q); /* the last holder of the forgotten one frees it */
    wr_scheduler_release(q2);
}

/* Forgotten with its admit in flight and held: the answer keeps it for
 * the holder, the release frees it. */
static void test_admit_in_flight_then_release(void **state)
{
    fx_t *fx = *state;
    wr_scheduler_queue_t *q = NULL;
    assert_non_null(wr_scheduler_hold(fx->sched, &q, "a", &fx->cfg));
    until_admit_called(fx);
    assert_int_equal(wr_scheduler_queue_next_tick_ms(q), 0); /* in flight */
    wr_scheduler_forget(fx->sched, "a");
    answer_admit(&fx->store, WR_EUNAVAILABLE);
    assert_null(wr_scheduler_queue_config(q));
    wr_scheduler_release(q);
}

/* Released before its admit answer: the answer frees it. */
static void test_release_then_admit_answer(void **state)
{
    fx_t *fx = *state;
    wr_scheduler_queue_t *q = NULL;
    assert_non_null(wr_scheduler_hold(fx->sched, &q, "a", &fx->cfg));
    until_admit_called(fx);
    wr_scheduler_forget(fx->sched, "a");
    wr_scheduler_release(q);
    answer_admit(&fx->store, WR_EUNAVAILABLE);
}

/* main's order: the store closed (admit answered ECANCELED), the
 * scheduler freed, and only then the requests' contexts give their queues
 * back. */
static void test_held_past_scheduler_free(void **state)
{
    fx_t *fx = *state;
    wr_scheduler_queue_t *q = NULL, *idle = NULL;
    assert_non_null(wr_scheduler_hold(fx->sched, &q, "a", &fx->cfg));
    until_admit_called(fx);
    assert_non_null(wr_scheduler_hold(fx->sched, &idle, "b", &fx->cfg)); /* not in flight */
    answer_admit(&fx->store, WR_ECANCELED);
    wr_scheduler_free(fx->sched);
    fx->sched = NULL;
    assert_null(wr_scheduler_queue_config(q));
    assert_null(wr_scheduler_queue_config(idle));
    wr_scheduler_release(q);
    wr_scheduler_release(idle);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hold_once_then_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forgotten_while_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admit_in_flight_then_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_then_admit_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_past_scheduler_free, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
