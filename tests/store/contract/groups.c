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
 * check_only join gives the verdict alone, changing nothing. A
 * store that does not (Redis in this version) says so: wr_store_has_groups
 * is false and its calls are refused at the call. Run by runner.c against
 * every backend (tests in WR_CONTRACT_GROUP at the end).
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

static void hash_of(const char *code, char out[WR_CODE_HASH_HEX + 1])
{
    assert_int_equal(wr_groups_code_hash(code, strlen(code), out), WR_OK);
}

static void t_groups_served(void **state)
{
    wr_store_t *s = *state;
    if (g_redis || g_cluster) { /* not served: refused at the call, no callback */
        assert_false(wr_store_has_groups(s));
        wr_store_join_t j = {.group = "fanclub"};
        sh_res_t r;
        assert_int_equal(wr_store_join_group(s, "q", "u", &j, sh_entry_cb, &r), WR_EINVAL);
        return;
    }
    assert_true(wr_store_has_groups(s));
}

static void t_codes_join(void **state)
{
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s))
        skip();
    put_groups(s, "g");
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
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s))
        skip();
    put_groups(s, "g");
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
    uint64_t n = 0;
    int64_t prev = -1;
    for (int k = 0; k < 40 && n < 8; k++) {
        admit_next_tick(s, "g", 100000, prev, &r);
        prev = r.admit.now_us / 100000;
        n += r.admit.admitted;
    }
    assert_int_equal(n, 8);
    expect_admitted(s, "g", "f0");
    expect_admitted(s, "g", "s0");
    sh_res_t st;
    assert_int_equal(sh_get(s, "g", &st), WR_OK);
    assert_int_equal(st.stats.lines[0].admitted_total, 4);
    assert_int_equal(st.stats.lines[1].admitted_total, 4);
    assert_int_equal(st.stats.admitted_total, 8);
}

static void t_groups_remove_refused(void **state)
{
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s))
        skip();
    put_groups(s, "g");
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
    wr_store_t *s = *state;
    if (!wr_store_has_groups(s))
        skip();
    put_groups(s, "k");
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

WR_CONTRACT_GROUP(groups, T(t_groups_served), T(t_codes_join), T(t_groups_admission),
                  T(t_groups_remove_refused), T(t_code_check_only));
