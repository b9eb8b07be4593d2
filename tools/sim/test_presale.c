/*
 * test_presale.c - waitroom-sim's presale figures (presale.c) on a run made
 * by hand: the standard line's share over every second that starts at an
 * admitting tick and in which it had someone to admit all through, the
 * floor(share x T) misses, and the waits and FIFO per line. The HTTP side
 * of presale.c is stubbed out (never called here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim.h"

/* ---- stubs of what presale.c calls outside the figures ---- */

void die_oom(void)
{
    fail_msg("out of memory");
    abort();
}

op_t *admin_op_at(sim_t *s, enum evhttp_cmd_type m, const char *tail, op_cb cb)
{
    (void)s, (void)m, (void)tail, (void)cb;
    fail_msg("admin_op_at called");
    return NULL;
}

void pool_submit(pool_t *p, op_t *op)
{
    (void)p, (void)op;
}

void setup_next(sim_t *s)
{
    (void)s;
}

uint32_t pick_users(sim_t *s, double frac, bool (*fit)(const user_t *u),
                    void (*take)(user_t *u, uint32_t j, uint32_t want))
{
    (void)s, (void)frac, (void)fit, (void)take;
    return 0;
}

/* ---- a run by hand ---- */

#define T0    1000000
#define TICKS 40 /* ticks every 100 ms from T0 + 100: 4 s */
#define PER   10 /* admissions per tick */

static sim_t sim;
static user_t users[TICKS * PER];

/*
 * Everybody joins at T0 (join order: their index), one tick every 100 ms
 * admits PER people: std_at(k) of them from the standard line, the rest
 * presale. Each is seen admitted 50 ms after its tick.
 */
static void make_run(uint32_t (*std_at)(size_t k))
{
    json_decref(sim.queue_config);
    memset(&sim, 0, sizeof(sim));
    memset(users, 0, sizeof(users));
    sim.u = users;
    sim.n_users = sim.users = TICKS * PER;
    sim.t0_ms = T0;
    sim.end_ms = T0 + (TICKS + 1) * 100;
    sim.join_seq = TICKS * PER;
    sim.presale_planned = 1;
    sim.queue_config =
        json_pack("{s:[{s:s}],s:f}", "groups", "name", "presale", "standardShare", 0.2);
    size_t i = 0;
    for (size_t k = 0; k < TICKS; k++)
        for (uint32_t j = 0; j < PER; j++, i++) {
            user_t *u = &users[i];
            u->sim = &sim;
            u->idx = (uint32_t)i;
            u->kind = K_NORMAL;
            u->join_ms = T0;
            u->join_seq = (int64_t)i;
            u->admit_tick_ms = T0 + 100 * (int64_t)(k + 1);
            u->admit_seen_ms = u->admit_tick_ms + 50;
            u->grp = j < std_at(k) ? 0 : 1;
            u->presale = u->placed = true;
        }
}

static uint32_t two_each(size_t k)
{
    (void)k;
    return 2; /* 2 of 10: exactly the share */
}

static uint32_t one_short(size_t k)
{
    return k == 5 ? 1 : 2; /* tick 6 gives the standard line 1 */
}

static json_t *figures(void)
{
    json_t *r = json_object();
    presale_figures(&sim, r);
    return r;
}

static json_int_t ival(json_t *r, const char *k)
{
    return json_integer_value(json_object_get(r, k));
}

static void test_share_kept(void **state)
{
    (void)state;
    make_run(two_each);
    json_t *r = figures();
    /* a second from tick k (T0 + 100(k+1)) counts while someone standard is
     * admitted at or after its end: ticks 1..30 of 40 (the last standard
     * admission is tick 40, at T0 + 4000, the end of the second from tick
     * 30); each holds 10 ticks, 100 admissions, 20 standard */
    assert_int_equal(ival(r, "standardShareSeconds"), 30);
    assert_int_equal(ival(r, "standardShareFloorMisses"), 0);
    assert_true(fabs(json_number_value(json_object_get(r, "standardShareMinObserved")) - 0.2) <
                1e-12);
    assert_string_equal(json_string_value(json_object_get(r, "presaleGroup")), "presale");
    assert_int_equal(ival(r, "presaleJoinedInGroup"), TICKS * (PER - 2));
    /* FIFO within each line: join order is admission order in both */
    json_t *tau = json_object_get(r, "kendallTauByGroup");
    assert_true(json_number_value(json_object_get(tau, "presale")) > 1 - 1e-12);
    assert_true(json_number_value(json_object_get(tau, "standard")) > 1 - 1e-12);
    /* per second from T0: ticks 1..9 in second 0, 10..19 in second 1 ... */
    json_t *ps = json_object_get(json_object_get(r, "admittedPerSecondByGroup"), "standard");
    assert_int_equal(json_integer_value(json_array_get(ps, 0)), 18);
    assert_int_equal(json_integer_value(json_array_get(ps, 1)), 20);
    json_decref(r);
}

static void test_one_short_is_a_miss(void **state)
{
    (void)state;
    make_run(one_short);
    json_t *r = figures();
    /* tick 6 (index 5) is in the seconds from ticks 1..6: 19 of 100 there,
     * below floor(0.2 x 100) = 20 */
    assert_int_equal(ival(r, "standardShareSeconds"), 30);
    assert_int_equal(ival(r, "standardShareFloorMisses"), 6);
    assert_true(fabs(json_number_value(json_object_get(r, "standardShareMinObserved")) - 0.19) <
                1e-12);
    json_decref(r);
}

static void test_no_one_to_admit_is_not_counted(void **state)
{
    (void)state;
    make_run(one_short);
    /* the standard people join only just before their own tick: nobody
     * standard waits through a whole second, so none counts */
    for (size_t i = 0; i < TICKS * PER; i++)
        if (users[i].grp == 0)
            users[i].join_ms = users[i].admit_tick_ms - 10;
    json_t *r = figures();
    assert_int_equal(ival(r, "standardShareSeconds"), 0);
    assert_int_equal(ival(r, "standardShareFloorMisses"), 0);
    assert_true(json_is_null(json_object_get(r, "standardShareMinObserved")));
    json_decref(r);
}

static void test_waits_by_line(void **state)
{
    (void)state;
    make_run(two_each);
    /* presale people first in each tick's time: all their waits shorter */
    for (size_t i = 0; i < TICKS * PER; i++)
        if (users[i].grp == 0)
            users[i].admit_seen_ms += 1000;
    json_t *r = figures();
    json_t *w = json_object_get(r, "waitP50MsByGroup");
    /* presale: waits 150, 250, ... 4050 ms, 8 a tick: the nearest-rank p50
     * (the 160th of 320) is the 20th tick's: 2050; standard 1000 more */
    assert_int_equal((json_int_t)json_number_value(json_object_get(w, "presale")), 2050);
    assert_int_equal((json_int_t)json_number_value(json_object_get(w, "standard")), 3050);
    json_decref(r);
}

static void test_no_presale_is_null(void **state)
{
    (void)state;
    make_run(two_each);
    sim.presale_planned = 0;
    json_t *r = figures();
    assert_true(json_is_null(json_object_get(r, "standardShareMinObserved")));
    assert_true(json_is_null(json_object_get(r, "waitP50MsByGroup")));
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_kept),
        cmocka_unit_test(test_one_short_is_a_miss),
        cmocka_unit_test(test_no_one_to_admit_is_not_counted),
        cmocka_unit_test(test_waits_by_line),
        cmocka_unit_test(test_no_presale_is_null),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    json_decref(sim.queue_config);
    return rc;
}
