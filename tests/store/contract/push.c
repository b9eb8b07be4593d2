/*
 * push.c - the store contract, Web Push subscriptions (store.h push_sub;
 * docs/API.md 1.3, "Your turn, off the page"): set, replaced and deleted
 * only for a person waiting, in the pre-queue or held (not for an admitted
 * one, whose unseen pass stays unseen); a subscribed person is never away
 * nor counted as passed over, and their answers carry `subscribed`; leave
 * and the queue's delete drop it; admission claims it - handed to exactly
 * one admit call, with the pass's expiry, never again; the closing push
 * goes out once per closing and the subscriptions stay. The stats'
 * `subscribed` (queue_get's and admit's answers) counts the live ones.
 * Run by runner.c
 * against every backend of the store registry (tests listed in
 * WR_CONTRACT_GROUP at the end). On Redis the time is real.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/crypto.h"
#include "contract.h"

#define PUSH_MAX 16

/* One push handed over (copied: borrowed until its callback returned). */
typedef struct {
    char user[WR_USER_ID_MAX + 1];
    char endpoint[WR_PUSHADDR_ENDPOINT_MAX + 1];
    char lang[WR_PUSHSUB_LANG_MAX + 1];
    int64_t exp_us;
    wr_close_reason_t closing;
} prec_t;

/* What one admit call answered: its pushes (n), the admitted count, the
 * stats' subscribed and the store's time; the callbacks and the last
 * error. */
typedef struct {
    size_t n;
    prec_t p[PUSH_MAX];
    uint64_t admitted, subscribed;
    int64_t now_us;
    int calls;
    wr_err_t err;
} pres_t;

static void push_admit_cb(wr_err_t err, const wr_admit_t *a, void *arg)
{
    pres_t *r = arg;
    r->err = err;
    r->calls++;
    if (a) {
        r->admitted = a->admitted;
        r->subscribed = a->stats.subscribed;
        r->now_us = a->now_us;
    }
    for (size_t i = 0; a && i < a->n_pushes && r->n < PUSH_MAX; i++, r->n++) {
        const wr_store_push_t *p = &a->pushes[i];
        snprintf(r->p[r->n].user, sizeof r->p[r->n].user, "%s", p->user);
        snprintf(r->p[r->n].endpoint, sizeof r->p[r->n].endpoint, "%s", p->sub->endpoint);
        snprintf(r->p[r->n].lang, sizeof r->p[r->n].lang, "%s", p->sub->lang);
        r->p[r->n].exp_us = p->expires_at_us;
        r->p[r->n].closing = p->closing;
    }
}

/* One admit call, run to its callback. */
static void padmit(wr_store_t *s, const char *q, pres_t *r)
{
    memset(r, 0, sizeof *r);
    assert_int_equal(wr_store_admit(s, q, push_admit_cb, r), WR_OK);
    assert_true(sh_run_until(&r->calls, 1, 5000));
    assert_int_equal(r->calls, 1);
    assert_int_equal(r->err, WR_OK);
}

/* Admit calls until one runs a new tick after the one at prev_us (bounded). */
static void padmit_next_tick(wr_store_t *s, const char *q, int64_t prev_us, pres_t *r)
{
    for (int i = 0; i < 100; i++) {
        padmit(s, q, r);
        if (r->now_us / 100000 != prev_us / 100000)
            return;
        assert_int_equal(r->n, 0);
        sh_run_for(26);
    }
    fail_msg("the store's tick never advanced");
}

/* u's subscription: a valid key, endpoint https://push.example/<u>, lang. */
static wr_pushsub_t mksub(const char *u, const char *lang)
{
    wr_pushsub_t sub;
    uint8_t priv[WR_CRYPTO_P256_PRIV];
    memset(&sub, 0, sizeof sub);
    assert_int_equal(wr_crypto_p256_keygen(priv, sub.p256dh), WR_OK);
    assert_int_equal(wr_crypto_random(sub.auth, sizeof sub.auth), WR_OK);
    snprintf(sub.endpoint, sizeof sub.endpoint, "https://push.example/%s", u);
    snprintf(sub.lang, sizeof sub.lang, "%s", lang);
    return sub;
}

/* push_sub of u in q (sub NULL: delete), run to its callback: its error. */
static wr_err_t psub(wr_store_t *s, const char *q, const char *u, const wr_pushsub_t *sub)
{
    sh_res_t r;
    sh_begin(&r);
    return sh_settle(&r, wr_store_push_sub(s, q, u, sub, sh_done_cb, &r));
}

static wr_err_t psub_new(wr_store_t *s, const char *q, const char *u)
{
    wr_pushsub_t sub = mksub(u, "");
    return psub(s, q, u, &sub);
}

/* u's status: WAITING, its subscribed flag. */
static bool subscribed(wr_store_t *s, const char *q, const char *u)
{
    sh_res_t r;
    assert_int_equal(sh_status(s, q, u, &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    return r.entry.subscribed;
}

/* q's live subscriptions, as its stats (queue_get) count them. */
static uint64_t nsub(wr_store_t *s, const char *q)
{
    sh_res_t r;
    assert_int_equal(sh_get(s, q, &r), WR_OK);
    return r.stats.subscribed;
}

/* A queue's config with push on: rate per second at ticks of 100 ms,
 * passes of ttl s, paused or not. */
static wr_queue_config_t push_cfg(double rate, uint32_t ttl, bool paused)
{
    wr_queue_config_t c = mkcfg(rate, 100, 0, 0, ttl);
    c.paused = paused;
    c.push = true;
    return c;
}

/* Puts q: 10/s, passes of ttl s. */
static void put_push_queue(wr_store_t *s, const char *q, uint32_t ttl, bool paused)
{
    put_ok(s, q, push_cfg(10, ttl, paused));
}

/* Only a person in line may subscribe; a PUT replaces, a DELETE removes;
 * the answers of a batch and of one status say the same. */
static void t_push_sub_who(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    assert_int_equal(psub_new(s, "nopq", "u1"), WR_ENOTFOUND);
    put_push_queue(s, "pw", 300, true);
    assert_int_equal(psub_new(s, "pw", "u1"), WR_ENOTINQUEUE); /* not in line */
    join_n(s, "pw", 1, 2);
    assert_false(subscribed(s, "pw", "u1"));
    assert_int_equal(nsub(s, "pw"), 0);
    assert_int_equal(psub_new(s, "pw", "u1"), WR_OK);
    assert_true(subscribed(s, "pw", "u1"));
    assert_int_equal(nsub(s, "pw"), 1);
    assert_false(subscribed(s, "pw", "u2"));
    assert_int_equal(sh_status_quiet(s, "pw", "u1", &r), WR_OK);
    assert_true(r.entry.subscribed);
    assert_int_equal(sh_join(s, "pw", "u1", &r), WR_OK); /* a join of someone in line */
    assert_true(r.entry.subscribed);
    wr_pushsub_t b = mksub("u1b", "ko");
    assert_int_equal(psub(s, "pw", "u1", &b), WR_OK); /* replaces */
    assert_int_equal(nsub(s, "pw"), 1);
    assert_int_equal(psub_new(s, "pw", "u2"), WR_OK);
    assert_int_equal(nsub(s, "pw"), 2);
    assert_int_equal(psub(s, "pw", "u1", NULL), WR_OK);
    assert_false(subscribed(s, "pw", "u1"));
    assert_int_equal(nsub(s, "pw"), 1);
    assert_int_equal(psub(s, "pw", "u1", NULL), WR_OK); /* none: still fine */
    assert_int_equal(psub(s, "pw", "u9", NULL), WR_ENOTINQUEUE);
    assert_int_equal(nsub(s, "pw"), 1);
    /* the pre-queue (a sale not open yet) */
    wr_queue_config_t c = push_cfg(10, 300, false);
    c.opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, "pwpre", c);
    assert_int_equal(sh_join(s, "pwpre", "p1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_PREQUEUE);
    assert_int_equal(psub_new(s, "pwpre", "p1"), WR_OK);
    assert_int_equal(nsub(s, "pwpre"), 1); /* the pre-queue's count too */
    assert_int_equal(psub(s, "pwpre", "p1", NULL), WR_OK);
    assert_int_equal(nsub(s, "pwpre"), 0);
}

/* The pushes of a, added to got (n of them). */
typedef struct {
    size_t n;
    prec_t p[PUSH_MAX];
} pushes_t;

static void collect(pushes_t *got, const pres_t *a)
{
    for (size_t k = 0; k < a->n; k++) {
        assert_true(got->n < PUSH_MAX);
        got->p[got->n++] = a->p[k];
    }
}

/* Admission claims the subscription: handed over by exactly one admit
 * call (several in flight at once), with the pass's expiry, never again;
 * an admitted person can neither subscribe nor unsubscribe, and that
 * refusal does not carry their pass (still unseen: its expiry holds them). */
static void t_push_claimed_once(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_push_queue(s, "pc", 1, true);
    join_n(s, "pc", 1, 3);
    wr_pushsub_t s1 = mksub("u1", "fr"), s3 = mksub("u3", "");
    assert_int_equal(psub(s, "pc", "u1", &s1), WR_OK);
    assert_int_equal(psub(s, "pc", "u3", &s3), WR_OK);
    assert_int_equal(nsub(s, "pc"), 2);
    put_push_queue(s, "pc", 1, false);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US);
    /* 4 admit calls in flight at once (one of them runs the tick), then
     * ticks until u1..u3 are in (one a tick) */
    pres_t a[4];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 4; i++)
        assert_int_equal(wr_store_admit(s, "pc", push_admit_cb, &a[i]), WR_OK);
    pushes_t got = {0};
    uint64_t admitted = 0;
    int64_t last = 0;
    for (int i = 0; i < 4; i++) {
        assert_true(sh_run_until(&a[i].calls, 1, 5000));
        assert_int_equal(a[i].err, WR_OK);
        assert_true(a[i].n <= a[i].admitted); /* only the call that admitted them */
        admitted += a[i].admitted;
        collect(&got, &a[i]);
        last = a[i].now_us > last ? a[i].now_us : last;
    }
    for (int i = 0; i < 40 && admitted < 3; i++) {
        pres_t b;
        padmit_next_tick(s, "pc", last, &b);
        last = b.now_us;
        admitted += b.admitted;
        collect(&got, &b);
    }
    assert_int_equal(admitted, 3);
    assert_int_equal(got.n, 2);
    /* claimed: none left, as queue_get and the last admit answer count */
    assert_int_equal(nsub(s, "pc"), 0);
    int64_t exp3 = 0;
    for (size_t i = 0; i < got.n; i++) {
        const char *u = got.p[i].user;
        bool one = strcmp(u, "u1") == 0;
        assert_true(one || strcmp(u, "u3") == 0);
        char ep[200];
        snprintf(ep, sizeof ep, "https://push.example/%s", u);
        assert_string_equal(got.p[i].endpoint, ep);
        assert_string_equal(got.p[i].lang, one ? "fr" : "");
        assert_int_equal(got.p[i].closing, WR_CLOSE_NONE);
        if (!one)
            exp3 = got.p[i].exp_us;
    }
    assert_string_not_equal(got.p[0].user, got.p[1].user);
    /* gone from the store: a DELETE or PUT finds an admitted person, and
     * answers nothing of the pass (u1 never saw it: unseen) */
    assert_int_equal(psub(s, "pc", "u1", NULL), WR_ENOTINQUEUE);
    assert_int_equal(psub_new(s, "pc", "u1"), WR_ENOTINQUEUE);
    /* u3's pass: the expiry its push carried */
    assert_int_equal(sh_status(s, "pc", "u3", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    assert_int_equal(r.entry.expires_at_us, exp3);
    /* the passes expire (1 s): no push again; u1's was unseen: held */
    pass_store_time(s, exp3 + 100000);
    pres_t b;
    padmit_next_tick(s, "pc", last, &b);
    assert_int_equal(b.n, 0);
    expect_held(s, "pc", "u1", 0);
}

/* A subscribed person is never away: the sweep does not mark them, the
 * tick admits them (their silence notwithstanding) while it holds the
 * unsubscribed silent one, and nobody counts them as passed over. */
static void t_push_never_away(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = push_cfg(1000, 300, true);
    c.idle_timeout_seconds = 1; /* silent 1 s (Redis: + its slack): away */
    put_ok(s, "pa", c);
    join_n(s, "pa", 1, 3);
    assert_int_equal(psub_new(s, "pa", "u1"), WR_OK);
    pass_us(s, 1450000); /* u1 and u2 silent past 1 s (Redis: + its slack) */
    assert_int_equal(sh_status(s, "pa", "u3", &r), WR_OK);
    assert_int_equal(r.entry.position, 3);
    assert_int_equal(r.entry.passed_ahead, 1); /* u2, not u1 */
    assert_int_equal(r.entry.passed_scan, 2);
    assert_false(r.entry.subscribed);
    pres_t a;
    padmit(s, "pa", &a);               /* paused: the sweep alone */
    assert_int_equal(a.subscribed, 1); /* admit's answer counts them too */
    assert_int_equal(sh_get(s, "pa", &r), WR_OK);
    assert_int_equal(r.stats.away, 1); /* u2 */
    c.paused = false;
    put_ok(s, "pa", c);
    padmit_next_tick(s, "pa", a.now_us, &a);
    assert_int_equal(a.admitted, 2); /* u1 and u3; u2 held */
    assert_int_equal(a.n, 1);
    assert_int_equal(a.subscribed, 0); /* u1's claimed by this call */
    assert_string_equal(a.p[0].user, "u1");
    assert_int_equal(sh_get(s, "pa", &r), WR_OK);
    assert_int_equal(r.stats.held, 1);
    expect_admitted(s, "pa", "u1");
    /* a held person may subscribe: it is their return (admitted first) */
    assert_int_equal(psub_new(s, "pa", "u2"), WR_OK);
    padmit_next_tick(s, "pa", a.now_us, &a);
    assert_int_equal(a.admitted, 1);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.p[0].user, "u2");
}

/* q paused, u1 and u2 in line, both subscribed (stats: 2). */
static void two_subscribed(wr_store_t *s, const char *q)
{
    put_push_queue(s, q, 300, true);
    join_n(s, q, 1, 2);
    assert_int_equal(psub_new(s, q, "u1"), WR_OK);
    assert_int_equal(psub_new(s, q, "u2"), WR_OK);
    assert_int_equal(nsub(s, q), 2);
}

/* Leave deletes the subscription (a return to the line starts without
 * one), and so does the queue's delete (a queue made again under its
 * name has none). */
static void t_push_leave_and_delete(void **state)
{
    wr_store_t *s = *state;
    two_subscribed(s, "pl");
    assert_int_equal(sh_leave(s, "pl", "u1"), WR_OK);
    assert_int_equal(nsub(s, "pl"), 1);
    join_n(s, "pl", 1, 1);
    assert_false(subscribed(s, "pl", "u1"));
    assert_true(subscribed(s, "pl", "u2"));
    assert_int_equal(sh_delete(s, "pl"), WR_OK);
    put_push_queue(s, "pl", 300, false);
    join_due(s, "pl", 2, 2);
    assert_false(subscribed(s, "pl", "u2"));
    assert_int_equal(nsub(s, "pl"), 0);
    pres_t a;
    padmit(s, "pl", &a);
    for (int i = 0; i < 20 && a.admitted == 0; i++)
        padmit_next_tick(s, "pl", a.now_us, &a);
    assert_int_equal(a.admitted, 1);
    assert_int_equal(a.n, 0);
}

/* The closing push: the first tick that finds the sale over hands every
 * subscription over once, with the reason; they stay (the people keep
 * their place), so a reopening and a second closing push again. */
static void t_push_closing_once(void **state)
{
    wr_store_t *s = *state;
    wr_queue_config_t c = push_cfg(10, 300, true);
    put_ok(s, "pz", c);
    join_n(s, "pz", 1, 3);
    assert_int_equal(psub_new(s, "pz", "u1"), WR_OK);
    assert_int_equal(psub_new(s, "pz", "u3"), WR_OK);
    pres_t a;
    padmit(s, "pz", &a);
    assert_int_equal(a.n, 0); /* open */
    for (int round = 0; round < 2; round++) {
        c.closed = true;
        put_ok(s, "pz", c);
        padmit(s, "pz", &a); /* the first call after it, in any tick */
        assert_int_equal(a.n, 2);
        for (size_t i = 0; i < a.n; i++) {
            assert_int_equal(a.p[i].closing, WR_CLOSE_CLOSED);
            assert_true(strcmp(a.p[i].user, "u1") == 0 || strcmp(a.p[i].user, "u3") == 0);
        }
        assert_string_not_equal(a.p[0].user, a.p[1].user);
        pres_t b;
        padmit_next_tick(s, "pz", a.now_us, &b); /* the same closing: nothing */
        assert_int_equal(b.n, 0);
        padmit(s, "pz", &b);
        assert_int_equal(b.n, 0);
        assert_int_equal(psub(s, "pz", "u2", NULL), WR_OK); /* still in line */
        c.closed = false;
        put_ok(s, "pz", c);
        padmit(s, "pz", &a); /* seen open */
        assert_int_equal(a.n, 0);
    }
}

/* Redis, an instance that sends no push (no --push-subject) in the
 * fleet: its admission parks the claimed subscription, and the next admit
 * call of an instance that sends hands it over, once; a closing is left to
 * the sender too. Skipped on the embedded store (one instance). */
static void t_push_parked_by_non_sender(void **state)
{
    wr_store_t *s = *state;
    if (!g_redis && !g_cluster)
        skip();
    char url[700];
    snprintf(url, sizeof url, g_redis ? "unix://%s" : "%s", g_redis ? sh_redis_sock() : sc_url());
    wr_store_params_t p = {.command_timeout_ms = 2000, .connect_timeout_ms = 1000};
    wr_store_t *quiet = NULL; /* push_sender false */
    assert_int_equal(wr_store_open_url(sh_base(), url, &p, &quiet), WR_OK);
    char parts[512];
    for (int i = 0; i < 1000 && (!wr_store_redis_connected(quiet) ||
                                 wr_store_unreachable(quiet, parts, sizeof parts) > 0);
         i++)
        sh_run_for(5);
    assert_true(wr_store_redis_connected(quiet));
    put_push_queue(s, "pp", 300, true);
    join_n(s, "pp", 1, 2);
    assert_int_equal(psub_new(s, "pp", "u1"), WR_OK);
    assert_int_equal(psub_new(s, "pp", "u2"), WR_OK);
    /* the closing: only a sender hands it over */
    wr_queue_config_t c = push_cfg(10, 300, true);
    c.closed = true;
    put_ok(s, "pp", c);
    pres_t a, b;
    padmit(quiet, "pp", &a);
    assert_int_equal(a.n, 0);
    padmit(s, "pp", &b);
    assert_int_equal(b.n, 2);
    assert_int_equal(b.p[0].closing, WR_CLOSE_CLOSED);
    c.closed = false;
    c.paused = false;
    put_ok(s, "pp", c);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US);
    /* the non-sender admits u1 (one a tick): parked, not handed over */
    padmit(quiet, "pp", &a);
    for (int i = 0; i < 20 && a.admitted == 0; i++)
        padmit_next_tick(quiet, "pp", a.now_us, &a);
    assert_int_equal(a.admitted, 1);
    assert_int_equal(a.n, 0);
    /* the sender's next call, in any tick: u1's, with the pass's expiry */
    padmit(s, "pp", &b);
    size_t i1 = b.n == 2 && strcmp(b.p[1].user, "u1") == 0 ? 1 : 0;
    assert_true(b.n >= 1);
    assert_string_equal(b.p[i1].user, "u1");
    assert_string_equal(b.p[i1].endpoint, "https://push.example/u1");
    assert_int_equal(b.p[i1].closing, WR_CLOSE_NONE);
    sh_res_t r;
    assert_int_equal(sh_status(s, "pp", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    assert_int_equal(b.p[i1].exp_us, r.entry.expires_at_us);
    /* and never again */
    pres_t c2;
    padmit(s, "pp", &c2);
    for (size_t k = 0; k < c2.n; k++)
        assert_string_not_equal(c2.p[k].user, "u1");
    wr_store_close(quiet);
}

/* A config put with push off drops every subscription (store.h
 * config_put): subscribed 0, and the next admission claims none, also
 * after push is on again. */
static void t_push_off_drops(void **state)
{
    wr_store_t *s = *state;
    two_subscribed(s, "poff");
    wr_queue_config_t c = push_cfg(10, 300, true);
    c.push = false;
    put_ok(s, "poff", c);
    assert_int_equal(nsub(s, "poff"), 0);
    put_push_queue(s, "poff", 300, false);
    pass_us(s, WR_ADMIT_DELAY_US + 1000);
    pres_t a;
    uint64_t admitted = 0;
    for (int i = 0; i < 40 && admitted < 2; i++) {
        padmit_next_tick(s, "poff", i ? a.now_us : 0, &a);
        admitted += a.admitted;
        assert_int_equal(a.n, 0);
    }
    assert_int_equal(admitted, 2);
}

WR_CONTRACT_GROUP(push, T(t_push_sub_who), T(t_push_claimed_once), T(t_push_never_away),
                  T(t_push_leave_and_delete), T(t_push_closing_once),
                  T(t_push_parked_by_non_sender), T(t_push_off_drops));
