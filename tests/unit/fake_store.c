/*
 * fake_store.c - the unit tests' fake store (fake_store.h).
 *
 * Every operation goes through one path: refuse at once (sync_err), else
 * record the call, then either queue it for fs_answer (by hand) or answer
 * it from the loop with the canned result (event_base_once, zero delay).
 * Loop answers own a malloc'd copy of the pending record, freed after the
 * callback; an answer still queued when the loop is freed is lost (the
 * tests drain their loop before freeing it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "fake_store.h"

int64_t fs_now_us(const fake_store_t *f)
{
    return f->fixed_us >= 0 ? f->fixed_us : wr_clock_wall_us() + f->offset_us;
}

int fs_reached(const fake_store_t *f)
{
    return f->calls + f->refused;
}

/* Makes p's callback with err and the canned result. */
static void call_back(fake_store_t *f, const fs_pending_t *p, wr_err_t err)
{
    f->answered++;
    switch (p->op) {
    case FS_ADMIT: {
        wr_admit_t res = f->admit;
        res.now_us = p->now_us;
        p->cb.admit(err, err == WR_OK ? &res : NULL, p->arg);
        break;
    }
    case FS_BURN:
    case FS_CONSUME: {
        wr_token_check_t res;
        memset(&res, 0, sizeof res);
        p->cb.token(err, err == WR_OK ? &res : NULL, p->arg);
        break;
    }
    case FS_JOIN: {
        wr_entry_t e = f->entry;
        p->cb.entry(err, err == WR_OK ? &e : NULL, p->arg);
        break;
    }
    default:
        p->cb.done(err, p->arg);
        break;
    }
}

typedef struct {
    fake_store_t *f;
    fs_pending_t p;
    wr_err_t err;
} loop_answer_t;

static void loop_answer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    loop_answer_t *a = arg;
    call_back(a->f, &a->p, a->err);
    free(a);
}

/* The one path of every operation but queue_list and close. */
static wr_err_t take(wr_store_t *s, fs_pending_t p, const char *queue, const char *user,
                     const char *jti, int64_t exp_us, bool check_only)
{
    fake_store_t *f = (fake_store_t *)s;
    if (f->sync_err != WR_OK) {
        f->refused++;
        return f->sync_err;
    }
    p.now_us = fs_now_us(f);
    fs_call_t c;
    memset(&c, 0, sizeof c);
    c.op = p.op;
    snprintf(c.queue, sizeof c.queue, "%s", queue ? queue : "");
    snprintf(c.user, sizeof c.user, "%s", user ? user : "");
    snprintf(c.jti, sizeof c.jti, "%s", jti ? jti : "");
    c.exp_us = exp_us;
    c.check_only = check_only;
    c.store_us = p.now_us;
    c.mono_ms = wr_clock_mono_ms();
    if (f->calls < FS_CALLS_MAX)
        f->call[f->calls] = c;
    f->calls++;
    if (f->on_call)
        f->on_call(&c);
    if (!f->loop) {
        assert_true(f->n < FS_PENDING_MAX);
        f->pend[f->n++] = p;
        return WR_OK;
    }
    loop_answer_t *a = malloc(sizeof *a);
    assert_non_null(a);
    a->f = f;
    a->p = p;
    a->err = WR_OK;
    if (f->fail_next > 0) {
        f->fail_next--;
        a->err = WR_EUNAVAILABLE;
    }
    struct timeval zero = {0, 0};
    assert_int_equal(event_base_once(f->loop, -1, EV_TIMEOUT, loop_answer, a, &zero), 0);
    return WR_OK;
}

void fs_answer(fake_store_t *f, int i, wr_err_t err)
{
    assert_true(i >= 0 && i < f->n);
    fs_pending_t p = f->pend[i];
    f->n--;
    memmove(&f->pend[i], &f->pend[i + 1], (size_t)(f->n - i) * sizeof f->pend[0]);
    call_back(f, &p, err);
}

static wr_err_t f_admit(wr_store_t *s, const char *queue, wr_store_admit_cb cb, void *arg)
{
    fs_pending_t p = {.op = FS_ADMIT, .cb.admit = cb, .arg = arg};
    return take(s, p, queue, NULL, NULL, 0, false);
}

static void list_answer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    fake_store_t *f = arg;
    wr_queue_info_t infos[FS_LIST_MAX];
    size_t n = f->list_n < FS_LIST_MAX ? f->list_n : FS_LIST_MAX;
    memset(infos, 0, sizeof infos);
    for (size_t i = 0; i < n; i++)
        infos[i].name = f->list_names[i];
    event_free(f->list_ev);
    f->list_ev = NULL;
    f->lists++;
    f->list_cb(WR_OK, infos, n, f->list_arg);
}

static wr_err_t f_queue_list(wr_store_t *s, wr_store_list_cb cb, void *arg)
{
    fake_store_t *f = (fake_store_t *)s;
    if (f->list_err != WR_OK)
        return f->list_err;
    if (!f->loop || f->list_ev)
        return WR_EINVAL;
    f->list_ev = evtimer_new(f->loop, list_answer, f);
    if (!f->list_ev)
        return WR_ENOMEM;
    f->list_cb = cb;
    f->list_arg = arg;
    struct timeval zero = {0, 0};
    evtimer_add(f->list_ev, &zero);
    return WR_OK;
}

static wr_err_t f_burn(wr_store_t *s, const char *queue, const char *jti, int64_t exp_us,
                       bool check_only, wr_store_token_cb cb, void *arg)
{
    fs_pending_t p = {.op = FS_BURN, .cb.token = cb, .arg = arg};
    return take(s, p, queue, NULL, jti, exp_us, check_only);
}

static wr_err_t f_consume(wr_store_t *s, const char *queue, const char *user, const char *jti,
                          wr_store_token_cb cb, void *arg)
{
    fs_pending_t p = {.op = FS_CONSUME, .cb.token = cb, .arg = arg};
    return take(s, p, queue, user, jti, 0, false);
}

static wr_err_t f_join(wr_store_t *s, const char *queue, const char *user, wr_store_entry_cb cb,
                       void *arg)
{
    fs_pending_t p = {.op = FS_JOIN, .cb.entry = cb, .arg = arg};
    return take(s, p, queue, user, NULL, 0, false);
}

static wr_err_t f_ping(wr_store_t *s, wr_store_done_cb cb, void *arg)
{
    fs_pending_t p = {.op = FS_PING, .cb.done = cb, .arg = arg};
    return take(s, p, NULL, NULL, NULL, 0, false);
}

/* As a store's close: the pending calls get WR_ECANCELED, newest first. */
static void f_close(wr_store_t *s)
{
    fake_store_t *f = (fake_store_t *)s;
    while (f->n > 0)
        fs_answer(f, f->n - 1, WR_ECANCELED);
    f->closed = true;
}

void fs_init(fake_store_t *f, unsigned ops, struct event_base *loop)
{
    memset(f, 0, sizeof *f);
    f->ops.name = "fake";
    f->ops.admit = (ops & FS_ADMIT) ? f_admit : NULL;
    f->ops.queue_list = (ops & FS_QUEUE_LIST) ? f_queue_list : NULL;
    f->ops.burn = (ops & FS_BURN) ? f_burn : NULL;
    f->ops.consume = (ops & FS_CONSUME) ? f_consume : NULL;
    f->ops.join = (ops & FS_JOIN) ? f_join : NULL;
    f->ops.ping = (ops & FS_PING) ? f_ping : NULL;
    f->ops.close = (ops & FS_CLOSE) ? f_close : NULL;
    f->base.ops = &f->ops;
    f->loop = loop;
    f->list_err = WR_EUNAVAILABLE;
    f->fixed_us = -1;
}

bool fs_run_until_answered(fake_store_t *f, int n, int64_t timeout_ms)
{
    int64_t deadline = wr_clock_mono_ms() + timeout_ms;
    while (f->answered < n && wr_clock_mono_ms() < deadline)
        event_base_loop(f->loop, EVLOOP_ONCE);
    return f->answered >= n;
}

struct event_base *fs_init_loop(fake_store_t *f, unsigned ops)
{
    struct event_base *loop = event_base_new();
    if (loop)
        fs_init(f, ops, loop);
    return loop;
}

void fs_free_loop(fake_store_t *f)
{
    fs_run_until_answered(f, f->calls, 5000);
    if (f->list_ev) /* a list never answered: dropped (the caller is gone) */
        event_free(f->list_ev);
    f->list_ev = NULL;
    event_base_free(f->loop);
    f->loop = NULL;
}
