/*
 * groups.c - the store contract, priority groups and presale codes
 * (store.h join_group and codes; docs/API.md 1.3, "Priority groups and
 * presale codes"). A store that serves groups: codes kept by hash (create,
 * list, revoke; a hash kept twice, an unknown group refused), a join with
 * a code buys a place in the code's group and spends one use in the same
 * step - refused with WR_ECODE and the reason (unknown, used up, revoked),
 * nothing changed - and someone with a place spends nothing; an invite's
 * group wins over a code; positions count the own line; admission takes
 * the groups first but keeps the standard line's share; the stats count
 * each line; a config removing a group that has people is WR_EGROUP; a
 * check_only join gives the verdict alone, changing nothing. Every backend
 * serves them (wr_store_has_groups). Run by runner.c against every
 * backend (tests in WR_CONTRACT_GROUP at the end).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "contract.h"
#include "core/groups.h"
#include "core/logleaf.h"
#include "core/logreplay.h"

/* A queue q with groups "fanclub", "card", 10/s on ticks of 100 ms. */
static void put_groups(wr_store_t *s, const char *q)
{
    wr_queue_config_t c = mkcfg(10, 100, 0, 0, 300);
    c.n_groups = 2;
    snprintf(c.groups[0], sizeof c.groups[0], "fanclub");
    snprintf(c.groups[1], sizeof c.groups[1], "card");
    c.standard_share = 0.5;
    put_ok(s, q, c);
}

/* The store of a groups test with queue q put with groups (put_groups);
 * the test is skipped on a store without groups. */
static wr_store_t *groups_store(void **state, const char *q)
{
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s))
        skip();
    put_groups(s, q);
    return s;
}

static void hash_of(const char *code, char out[WR_CODE_HASH_HEX + 1])
{
    assert_int_equal(wr_groups_code_hash(code, strlen(code), out), WR_OK);
}

/* n new codes' hashes into h. */
static void new_hashes(char (*h)[WR_CODE_HASH_HEX + 1], int n)
{
    for (int i = 0; i < n; i++) {
        char code[WR_CODE_LEN + 1];
        assert_int_equal(wr_groups_code_new(code), WR_OK);
        hash_of(code, h[i]);
    }
}

/* CREATE of the code of hash h, good for uses joins until exp (-1 never),
 * in group of queue q: the error; c the answer. */
static wr_err_t create_one(wr_store_t *s, const char *q, const char *group,
                           const char (*h)[WR_CODE_HASH_HEX + 1], uint32_t uses, int64_t exp,
                           sh_res_t *c)
{
    wr_store_codes_req_t req = {.kind = WR_CODES_CREATE,
                                .group = group,
                                .hashes = h,
                                .n = 1,
                                .uses = uses,
                                .expires_at_ms = exp};
    return sh_codes(s, q, &req, c);
}

static void t_groups_served(void **state)
{
    wr_store_t *s = *state;
    assert_true(wr_store_has_groups(s)); /* every backend: memory, Redis, Redis Cluster */
    /* a join without its arguments is refused at the call, no callback */
    sh_res_t r;
    assert_int_equal(wr_store_join_group(s, "q", "u", NULL, sh_entry_cb, &r), WR_EINVAL);
}

static void t_codes_join(void **state)
{
    wr_store_t *s = groups_store(state, "g");
    char code[3][WR_CODE_LEN + 1], h[3][WR_CODE_HASH_HEX + 1];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(wr_groups_code_new(code[i]), WR_OK);
        hash_of(code[i], h[i]);
    }
    sh_res_t c;
    wr_store_codes_req_t req = {.kind = WR_CODES_CREATE,
                                .group = "fanclub",
                                .hashes = &h[0],
                                .n = 1,
                                .uses = 2,
                                .expires_at_ms = -1};
    assert_int_equal(sh_codes(s, "g", &req, &c), WR_OK);
    assert_int_equal(c.codes.n, 2);
    assert_string_equal(c.codes.groups[0].name, "fanclub");
    assert_int_equal(c.codes.groups[0].issued, 1);
    req.group = "card";
    req.hashes = &h[1];
    assert_int_equal(sh_codes(s, "g", &req, &c), WR_OK);
    assert_int_equal(c.codes.groups[1].issued, 1);
    /* a hash kept twice, a group not in the config: nothing kept */
    assert_int_equal(sh_codes(s, "g", &req, &c), WR_EINVAL);
    req.group = "nope";
    req.hashes = &h[2];
    assert_int_equal(sh_codes(s, "g", &req, &c), WR_EINVAL);
    /* no such queue */
    req.group = "card";
    assert_int_equal(sh_codes(s, "missing", &req, &c), WR_ENOTFOUND);
    /* two places for the 2-use code, the third refused used up */
    sh_res_t r;
    assert_int_equal(sh_join_group(s, "g", "a1", NULL, h[0], &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_string_equal(r.entry.group, "fanclub");
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(sh_join_group(s, "g", "a2", NULL, h[0], &r), WR_OK);
    assert_int_equal(r.entry.position, 2);
    assert_int_equal(sh_join_group(s, "g", "a3", NULL, h[0], &r), WR_ECODE);
    assert_int_equal(r.entry.code_reason, WR_CODE_USED_UP);
    /* a1 again with the code: their place, nothing spent */
    assert_int_equal(sh_join_group(s, "g", "a1", NULL, h[1], &r), WR_OK);
    assert_string_equal(r.entry.group, "fanclub");
    /* unknown code; a3 got nothing */
    assert_int_equal(sh_join_group(s, "g", "a3", NULL, h[2], &r), WR_ECODE);
    assert_int_equal(r.entry.code_reason, WR_CODE_UNKNOWN);
    sh_res_t st;
    assert_int_equal(sh_status(s, "g", "a3", &st), WR_ENOTINQUEUE);
    /* revoked */
    wr_store_codes_req_t rv = {.kind = WR_CODES_REVOKE, .hashes = &h[1], .n = 1};
    assert_int_equal(sh_codes(s, "g", &rv, &c), WR_OK);
    assert_int_equal(c.codes.groups[1].revoked, 1);
    assert_int_equal(sh_join_group(s, "g", "b1", NULL, h[1], &r), WR_ECODE);
    assert_int_equal(r.entry.code_reason, WR_CODE_REVOKED);
    rv.hashes = &h[2];
    assert_int_equal(sh_codes(s, "g", &rv, &c), WR_ECODE); /* no such code */
    /* an invite's group wins over a code */
    assert_int_equal(sh_join_group(s, "g", "i1", "card", h[0], &r), WR_OK);
    assert_string_equal(r.entry.group, "card");
    wr_store_codes_req_t ls = {.kind = WR_CODES_LIST};
    assert_int_equal(sh_codes(s, "g", &ls, &c), WR_OK);
    assert_int_equal(c.codes.groups[0].uses_spent, 2);
    assert_int_equal(c.codes.groups[1].uses_spent, 0);
    /* the stats count each line; waiting counts them all */
    sh_join(s, "g", "s1", &r);
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(r.entry.waiting, 4);
    assert_int_equal(sh_get(s, "g", &st), WR_OK);
    assert_int_equal(st.stats.n_lines, 3);
    assert_string_equal(st.stats.lines[0].name, "standard");
    assert_int_equal(st.stats.lines[0].waiting, 1);
    assert_string_equal(st.stats.lines[1].name, "fanclub");
    assert_int_equal(st.stats.lines[1].waiting, 2);
    assert_int_equal(st.stats.lines[2].waiting, 1);
    assert_int_equal(st.stats.waiting, 4);
}

static void t_groups_admission(void **state)
{
    wr_store_t *s = groups_store(state, "g");
    sh_res_t r;
    for (int i = 0; i < 4; i++) {
        char u[8];
        snprintf(u, sizeof u, "f%d", i);
        assert_int_equal(sh_join_group(s, "g", u, "fanclub", NULL, &r), WR_OK);
        snprintf(u, sizeof u, "s%d", i);
        assert_int_equal(sh_join(s, "g", u, &r), WR_OK);
    }
    pass_us(s, 300000); /* the admission delay */
    /* 8 admissions over ticks: half each (share 0.5), the fanclub first */
    int64_t prev = -1;
    uint64_t n = admit_until(s, "g", 100000, 8, 40, &prev, &r);
    assert_int_equal(n, 8);
    expect_admitted(s, "g", "f0");
    expect_admitted(s, "g", "s0");
    sh_res_t st;
    assert_int_equal(sh_get(s, "g", &st), WR_OK);
    assert_int_equal(st.stats.lines[0].admitted_total, 4);
    assert_int_equal(st.stats.lines[1].admitted_total, 4);
    assert_int_equal(st.stats.admitted_total, 8);
}

/* A group member's join says whether it placed them (entry.added, what
 * the sale's report counts as joined): the first, before the opening (in
 * their group's line, answered PREQUEUE) as after it; never a repeat, a
 * plain join or a status of a member. */
static void t_groups_join_added(void **state)
{
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s))
        skip();
    const wr_entry_state_t PRE = WR_ENTRY_PREQUEUE, IN = WR_ENTRY_WAITING;
    wr_queue_config_t c = mkcfg(10, 100, 0, 0, 300);
    c.n_groups = 1;
    snprintf(c.groups[0], sizeof c.groups[0], "fanclub");
    c.opens_at_ms = wr_clock_wall_us() / 1000 + 600000;
    put_ok(s, "ga", c);
    sh_res_t r;
    expect_entry(sh_join_group(s, "ga", "f1", "fanclub", NULL, &r), &r, PRE, true);
    assert_string_equal(r.entry.group, "fanclub");
    expect_entry(sh_join_group(s, "ga", "f1", "fanclub", NULL, &r), &r, PRE, false);
    expect_entry(sh_join(s, "ga", "f1", &r), &r, PRE, false);
    expect_entry(sh_status(s, "ga", "f1", &r), &r, PRE, false);
    expect_entry(sh_join(s, "ga", "s1", &r), &r, PRE, true); /* the standard line's pre-queue */
    c.opens_at_ms = WR_OPENS_AT_NONE;
    put_ok(s, "ga", c);
    expect_entry(sh_join_group(s, "ga", "f2", "fanclub", NULL, &r), &r, IN, true);
    expect_entry(sh_join_group(s, "ga", "f2", "fanclub", NULL, &r), &r, IN, false);
    expect_entry(sh_join_group(s, "ga", "f1", "fanclub", NULL, &r), &r, IN, false);
}

static void t_groups_remove_refused(void **state)
{
    wr_store_t *s = groups_store(state, "g");
    sh_res_t r;
    assert_int_equal(sh_join_group(s, "g", "c1", "card", NULL, &r), WR_OK);
    wr_queue_config_t c = mkcfg(10, 100, 0, 0, 300);
    c.n_groups = 1;
    snprintf(c.groups[0], sizeof c.groups[0], "fanclub");
    assert_int_equal(sh_put(s, "g", &c), WR_EGROUP);
    assert_int_equal(sh_leave(s, "g", "c1"), WR_OK);
    assert_int_equal(sh_put(s, "g", &c), WR_OK);
}

/* join_group of u with check_only and hash, run to its callback: its
 * error; *r the answer. */
static wr_err_t gcheck(wr_store_t *s, const char *q, const char *u, const char *hash, sh_res_t *r)
{
    wr_store_join_t j = {.code_hash = hash, .check_only = true};
    sh_begin(r);
    return sh_settle(r, wr_store_join_group(s, q, u, &j, sh_entry_cb, r));
}

/* join_group with check_only (the API asks before it spends a solved
 * challenge): the verdict alone - WR_ENOTINQUEUE for a code that would buy
 * a place, WR_ECODE with the reason for one that would not, someone with
 * a place their answer - and nothing added or spent. */
static void t_code_check_only(void **state)
{
    wr_store_t *s = groups_store(state, "k");
    char one[WR_CODE_LEN + 1], never[WR_CODE_LEN + 1];
    char h[1][WR_CODE_HASH_HEX + 1], hn[WR_CODE_HASH_HEX + 1];
    assert_int_equal(wr_groups_code_new(one), WR_OK);
    assert_int_equal(wr_groups_code_new(never), WR_OK);
    hash_of(one, h[0]);
    hash_of(never, hn);
    sh_res_t c; /* one code of card, good for one join */
    wr_store_codes_req_t req = {
        .kind = WR_CODES_CREATE, .group = "card", .hashes = h, .n = 1, .uses = 1};
    req.expires_at_ms = -1;
    assert_int_equal(sh_codes(s, "k", &req, &c), WR_OK);
    sh_res_t r, st;
    assert_int_equal(gcheck(s, "k", "n1", h[0], &r), WR_ENOTINQUEUE);
    assert_int_equal(gcheck(s, "k", "n1", hn, &r), WR_ECODE);
    assert_int_equal(r.entry.code_reason, WR_CODE_UNKNOWN);
    assert_int_equal(sh_status(s, "k", "n1", &st), WR_ENOTINQUEUE);
    assert_int_equal(sh_get(s, "k", &st), WR_OK);
    assert_int_equal(st.stats.waiting, 0);
    wr_store_codes_req_t ls = {.kind = WR_CODES_LIST};
    assert_int_equal(sh_codes(s, "k", &ls, &c), WR_OK);
    assert_int_equal(c.codes.groups[1].uses_spent, 0);
    /* the one use spent by a join: used up for the next check; the one
     * with the place gets their answer */
    assert_int_equal(sh_join_group(s, "k", "p1", NULL, h[0], &r), WR_OK);
    assert_int_equal(gcheck(s, "k", "n1", h[0], &r), WR_ECODE);
    assert_int_equal(r.entry.code_reason, WR_CODE_USED_UP);
    assert_int_equal(gcheck(s, "k", "p1", h[0], &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_WAITING);
    assert_string_equal(r.entry.group, "card");
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(sh_get(s, "k", &st), WR_OK);
    assert_int_equal(st.stats.waiting, 1);
}

/* A code of k uses, joined by n people in one go (the calls made before
 * any answer: on Redis each its own script call, back to back): exactly k
 * places, the others refused used up, exactly k uses spent. */
static void t_groups_code_uses_exact(void **state)
{
    wr_store_t *s = groups_store(state, "g");
    char h[1][WR_CODE_HASH_HEX + 1];
    new_hashes(h, 1);
    sh_res_t c;
    assert_int_equal(create_one(s, "g", "card", h, 3, -1, &c), WR_OK);
    enum { N = 10 };
    sh_res_t r[N];
    char u[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(u[i], sizeof u[i], "c%d", i);
        wr_store_join_t j = {.code_hash = h[0]};
        sh_begin(&r[i]);
        assert_int_equal(wr_store_join_group(s, "g", u[i], &j, sh_entry_cb, &r[i]), WR_OK);
        r[i].returned = true;
    }
    int placed = 0, used_up = 0;
    for (int i = 0; i < N; i++) {
        sh_wait_one(&r[i]);
        if (r[i].err == WR_OK) {
            placed++;
            assert_string_equal(r[i].entry.group, "card");
            assert_int_equal(r[i].entry.position, placed); /* in join order */
        } else {
            assert_int_equal(r[i].err, WR_ECODE);
            assert_int_equal(r[i].entry.code_reason, WR_CODE_USED_UP);
            used_up++;
        }
    }
    assert_int_equal(placed, 3);
    assert_int_equal(used_up, N - 3);
    wr_store_codes_req_t ls = {.kind = WR_CODES_LIST};
    assert_int_equal(sh_codes(s, "g", &ls, &c), WR_OK);
    assert_int_equal(c.codes.groups[1].uses_spent, 3);
    assert_int_equal(c.codes.groups[1].issued, 1);
}

/* Expiry at the store's clock; a revoked or live code keeps its group in
 * the config (WR_EGROUP), one used up, revoked or expired does not. */
static void t_groups_code_expiry_and_removal(void **state)
{
    wr_store_t *s = groups_store(state, "g");
    char h[2][WR_CODE_HASH_HEX + 1];
    new_hashes(h, 2);
    sh_res_t c;
    assert_int_equal(create_one(s, "g", "card", &h[0], 5, 1000, &c), WR_OK); /* 1970: expired */
    assert_int_equal(create_one(s, "g", "card", &h[1], 5, -1, &c), WR_OK);
    sh_res_t r;
    assert_int_equal(sh_join_group(s, "g", "x1", NULL, h[0], &r), WR_ECODE);
    assert_int_equal(r.entry.code_reason, WR_CODE_EXPIRED);
    wr_queue_config_t only_fanclub = mkcfg(10, 100, 0, 0, 300);
    only_fanclub.n_groups = 1;
    snprintf(only_fanclub.groups[0], sizeof only_fanclub.groups[0], "fanclub");
    assert_int_equal(sh_put(s, "g", &only_fanclub), WR_EGROUP); /* h[1] is live */
    wr_store_codes_req_t rv = {.kind = WR_CODES_REVOKE, .hashes = &h[1], .n = 1};
    assert_int_equal(sh_codes(s, "g", &rv, &c), WR_OK);
    assert_int_equal(sh_codes(s, "g", &rv, &c), WR_OK); /* a second revoke: counted once */
    assert_int_equal(c.codes.groups[1].revoked, 1);
    assert_int_equal(sh_put(s, "g", &only_fanclub), WR_OK);
    /* the group back again: its old codes are unknown, its counts new */
    put_groups(s, "g");
    assert_int_equal(sh_join_group(s, "g", "x2", NULL, h[1], &r), WR_ECODE);
    assert_int_equal(r.entry.code_reason, WR_CODE_UNKNOWN);
    wr_store_codes_req_t ls = {.kind = WR_CODES_LIST};
    assert_int_equal(sh_codes(s, "g", &ls, &c), WR_OK);
    assert_int_equal(c.codes.groups[1].issued, 0);
    assert_int_equal(sh_codes(s, "g", &rv, &c), WR_ECODE);
}

/* A create of many codes (on Redis in several script calls) keeps them
 * all; one of many kept already, or two alike, keeps none. */
static void t_groups_codes_many(void **state)
{
    wr_store_t *s = groups_store(state, "g");
    enum { N = 25000 };
    char(*h)[WR_CODE_HASH_HEX + 1] = calloc(N + 1, sizeof *h);
    assert_non_null(h);
    for (int i = 0; i <= N; i++)
        snprintf(h[i], sizeof h[i], "%064x", i + 1);
    sh_res_t c;
    wr_store_codes_req_t req = {.kind = WR_CODES_CREATE,
                                .group = "fanclub",
                                .hashes = h,
                                .n = N,
                                .uses = 1,
                                .expires_at_ms = -1};
    assert_int_equal(sh_codes(s, "g", &req, &c), WR_OK);
    assert_int_equal(c.codes.groups[0].issued, N);
    /* h[1 .. N]: the last N - 1 are kept already */
    req.hashes = h + 1;
    assert_int_equal(sh_codes(s, "g", &req, &c), WR_EINVAL);
    /* h[N] alone is new: a create of it and h[N - 1] twice */
    memcpy(h[0], h[N], sizeof h[0]);
    memcpy(h[1], h[N], sizeof h[1]);
    req.hashes = h;
    req.n = 2;
    wr_err_t rc = sh_codes(s, "g", &req, &c);
    assert_int_equal(rc, WR_EINVAL);
    wr_store_codes_req_t ls = {.kind = WR_CODES_LIST};
    assert_int_equal(sh_codes(s, "g", &ls, &c), WR_OK);
    assert_int_equal(c.codes.groups[0].issued, N);
    sh_res_t r;
    assert_int_equal(sh_join_group(s, "g", "m1", NULL, h[N], &r), WR_ECODE); /* never kept */
    assert_int_equal(r.entry.code_reason, WR_CODE_UNKNOWN);
    free(h);
}

/* A group member keeps their group through a pass that expires unseen
 * (held in it), their return (admitted first, counted toward the group)
 * and the pass it gets, which their answers name. */
static void t_groups_held_keep_group(void **state)
{
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s))
        skip();
    wr_queue_config_t c = mkcfg(10, 100, 0, 0, 1); /* passes of 1 s */
    c.n_groups = 1;
    snprintf(c.groups[0], sizeof c.groups[0], "fanclub");
    put_ok(s, "h", c);
    sh_res_t r, a;
    assert_int_equal(sh_join_group(s, "h", "f1", "fanclub", NULL, &r), WR_OK);
    pass_us(s, 300000);
    int64_t prev = -1;
    uint64_t n = admit_until(s, "h", 100000, 1, 20, &prev, &a);
    assert_int_equal(n, 1);
    pass_us(s, 1200000); /* the pass expires unseen: f1 is held */
    admit_next_tick(s, "h", 100000, prev, &a);
    prev = a.admit.now_us / 100000;
    assert_int_equal(sh_status(s, "h", "f1", &r), WR_OK);
    assert_true(r.entry.held);
    assert_string_equal(r.entry.group, "fanclub");
    assert_int_equal(r.entry.group_line, 1);
    admit_next_tick(s, "h", 100000, prev, &a);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(a.admit.stats.returned_total, 1);
    assert_int_equal(sh_status(s, "h", "f1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    assert_string_equal(r.entry.group, "fanclub");
    sh_res_t st;
    assert_int_equal(sh_get(s, "h", &st), WR_OK);
    assert_int_equal(st.stats.lines[1].admitted_total, 2);
    assert_int_equal(st.stats.lines[0].admitted_total, 0);
    /* the pass used, the group removed: its admissions are not the
     * standard line's */
    assert_int_equal(sh_consume(s, "h", "f1", r.entry.jti, &st), WR_OK);
    c.n_groups = 0;
    put_ok(s, "h", c);
    assert_int_equal(sh_get(s, "h", &st), WR_OK);
    assert_int_equal(st.stats.admitted_total, 2);
    assert_int_equal(st.stats.n_lines, 1);
    assert_int_equal(st.stats.lines[0].admitted_total, 0);
}

/* A standard position never goes up while people join groups; answers
 * name the first group with people waiting and each line's admissions of
 * the last minute (the ETA's rate). */
static void t_groups_positions_and_rate(void **state)
{
    wr_store_t *s = groups_store(state, "g");
    sh_res_t r, a;
    assert_int_equal(sh_join(s, "g", "s1", &r), WR_OK);
    assert_int_equal(r.entry.group_line, 0);
    assert_int_equal(r.entry.group_first_waiting, 0);
    for (int i = 0; i < 3; i++) {
        char u[8];
        snprintf(u, sizeof u, "k%d", i);
        assert_int_equal(sh_join_group(s, "g", u, "card", NULL, &r), WR_OK);
        assert_int_equal(r.entry.position, (uint64_t)i + 1);
        assert_int_equal(sh_status(s, "g", "s1", &r), WR_OK);
        assert_int_equal(r.entry.position, 1);
        assert_int_equal(r.entry.waiting, (uint64_t)i + 2);
        assert_int_equal(r.entry.group_first_waiting, 2); /* card, the second group */
    }
    pass_us(s, 300000);
    int64_t prev = -1;
    uint64_t n = admit_until(s, "g", 100000, 3, 40, &prev, &a);
    assert_true(n >= 3);
    assert_int_equal(sh_get(s, "g", &r), WR_OK);
    uint64_t cards = r.stats.lines[2].admitted_total;
    assert_true(cards >= 1);
    assert_int_equal(sh_status(s, "g", "k2", &r), WR_OK); /* waiting or admitted */
    assert_string_equal(r.entry.group, "card");
    assert_int_equal(r.entry.group_admitted_60s, cards);
}

/* Another instance whose cached config of the queue has no groups (Redis:
 * its polls go without the group keys) answers right after the groups
 * came, with them. */
static void t_groups_added_under_a_cache(void **state)
{
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s) || !(g_redis || g_cluster))
        skip();
    wr_store_t *other = open_store_with(2000);
    assert_non_null(other);
    put_ok(s, "ac", mkcfg(10, 100, 0, 0, 300));
    sh_res_t r;
    assert_int_equal(sh_join(other, "ac", "s1", &r), WR_OK); /* other caches: no groups */
    assert_int_equal(sh_status(other, "ac", "s1", &r), WR_OK);
    put_groups(s, "ac");
    assert_int_equal(sh_join_group(s, "ac", "f1", "fanclub", NULL, &r), WR_OK);
    assert_int_equal(sh_status(other, "ac", "s1", &r), WR_OK);
    assert_int_equal(r.entry.waiting, 2);
    assert_int_equal(r.entry.group_first_waiting, 1);
    assert_int_equal(sh_status(other, "ac", "f1", &r), WR_OK);
    assert_string_equal(r.entry.group, "fanclub");
    assert_int_equal(r.entry.position, 1);
    wr_store_close(other);
}

/* The public log of a sale with groups: the joins and admissions of
 * group members name their group (the admissions of a held return too),
 * and the replay - one line per group - finds no overtake. */
static void t_groups_public_log(void **state)
{
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s) || !wr_store_has_log(s))
        skip();
    wr_queue_config_t c = mkcfg(10, 100, 0, 0, 300);
    c.n_groups = 1;
    snprintf(c.groups[0], sizeof c.groups[0], "fanclub");
    c.standard_share = 0.3;
    c.public_log = true;
    put_ok(s, "gl", c);
    sh_res_t r, a;
    for (int i = 0; i < 6; i++) {
        char u[8];
        snprintf(u, sizeof u, "s%d", i);
        assert_int_equal(sh_join(s, "gl", u, &r), WR_OK);
        snprintf(u, sizeof u, "f%d", i);
        assert_int_equal(sh_join_group(s, "gl", u, "fanclub", NULL, &r), WR_OK);
    }
    pass_us(s, 300000);
    int64_t prev = -1;
    uint64_t n = admit_until(s, "gl", 100000, 12, 60, &prev, &a);
    assert_int_equal(n, 12);
    lres_t h, l;
    assert_int_equal(lg_head(s, "gl", &h), WR_OK);
    assert_int_equal(h.a.size, 24);
    wr_log_read_t req = {.start = 0, .end = h.a.size};
    assert_int_equal(lg_read(s, "gl", &req, &l), WR_OK);
    wr_logreplay_t *rp = wr_logreplay_new();
    assert_non_null(rp);
    int grp_joins = 0, grp_admits = 0;
    for (char *p = l.leaves; *p;) {
        char *nl = strchr(p, '\n');
        assert_non_null(nl);
        wr_logleaf_t leaf;
        assert_int_equal(wr_logleaf_parse(p, (size_t)(nl - p), &leaf, NULL, 0), WR_OK);
        if (strcmp(leaf.grp, "fanclub") == 0) {
            grp_joins += leaf.e == WR_LOGLEAF_JOIN;
            grp_admits += leaf.e == WR_LOGLEAF_ADMIT;
        }
        assert_int_equal(wr_logreplay_feed(rp, p, (size_t)(nl - p)), WR_OK);
        p = nl + 1;
    }
    const wr_logreplay_stats_t *st = wr_logreplay_stats(rp);
    assert_int_equal(st->invalid, 0);
    assert_int_equal(st->overtakes, 0);
    assert_int_equal(st->joined, 12);
    assert_int_equal(st->admitted, 12);
    assert_int_equal(grp_joins, 6);
    assert_int_equal(grp_admits, 6);
    wr_logreplay_free(rp);
}

WR_CONTRACT_GROUP(groups, T(t_groups_served), T(t_codes_join), T(t_groups_admission),
                  T(t_groups_remove_refused), T(t_code_check_only), T(t_groups_code_uses_exact),
                  T(t_groups_code_expiry_and_removal), T(t_groups_codes_many),
                  T(t_groups_held_keep_group), T(t_groups_positions_and_rate),
                  T(t_groups_added_under_a_cache), T(t_groups_public_log), T(t_groups_join_added));
