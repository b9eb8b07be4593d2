/*
 * test_memq_group.c - priority groups and presale codes in the embedded
 * store's queue model (memq_group.c, memq_admit.c): the standard line's
 * share over every second of a long run while priority people keep
 * joining, positions that count the own line only and never go up,
 * groups admitted in order, held returns counted in their own line,
 * maxActive across lines, codes (every refusal, exactly K uses
 * of a K-use code, nothing spent by someone who has a place), a config
 * that removes a group with people or live codes refused, reordered
 * groups keeping their people, and the public log of a sale with groups
 * replaying with no overtake.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/groups.h"
#include "core/logreplay.h"
#include "store/memory/memlog.h"
#include "store/memory/memq.h"
#include "unit_cfg.h"
#include "unit_main.h"

#define T0 INT64_C(1800000000000000) /* store time, us */

static wr_memq_db_t db;

static int setup(void **state)
{
    (void)state;
    memset(&db, 0, sizeof db);
    wr_rng_seed(&db.rng, 7);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    wr_memq_db_clear(&db);
    return 0;
}

/* The config at rate (users/s), ticks of 100 ms, with groups names (n of
 * them) and standardShare share. */
static wr_queue_config_t cfg_groups(double rate, const char *const *names, size_t n, double share)
{
    wr_queue_config_t cfg = cfg_rate(rate);
    cfg.tick_ms = 100;
    cfg.standard_share = share;
    cfg.n_groups = n;
    for (size_t i = 0; i < n; i++)
        snprintf(cfg.groups[i], sizeof cfg.groups[i], "%s", names[i]);
    return cfg;
}

/* Queue name put with cfg at T0. */
static wr_memq_t *put_at(const char *name, const wr_queue_config_t *cfg)
{
    wr_memq_t *q = NULL;
    assert_int_equal(wr_memq_db_put_config_at(&db, name, cfg, T0, &q), WR_OK);
    return q;
}

static wr_memq_t *queue_g(const char *name, double rate, const char *const *names, size_t n,
                          double share)
{
    wr_queue_config_t cfg = cfg_groups(rate, names, n, share);
    return put_at(name, &cfg);
}

/* user joins (group slot, or -1) at now: WR_OK expected; its answer. */
static wr_entry_t join(wr_memq_t *q, const char *u, int slot, int64_t now)
{
    wr_entry_t e;
    bool dirty = false;
    memset(&e, 0, sizeof e);
    wr_memq_join_t j = {.slot = slot, .code_hash = NULL};
    assert_int_equal(wr_memq_entry_group(q, u, strlen(u), true, false, &j, now, now, &e, &dirty),
                     WR_OK);
    return e;
}

static wr_entry_t status(wr_memq_t *q, const char *u, int64_t now)
{
    wr_entry_t e;
    bool dirty = false;
    memset(&e, 0, sizeof e);
    assert_int_equal(wr_memq_entry(q, u, strlen(u), false, false, now, 0, &e, &dirty), WR_OK);
    return e;
}

/* A join with a code (its hash) at now: the error, *e the answer. */
static wr_err_t join_code(wr_memq_t *q, const char *u, const char *hash, int64_t now, wr_entry_t *e)
{
    bool dirty = false;
    memset(e, 0, sizeof *e);
    wr_memq_join_t j = {.slot = -1, .code_hash = hash};
    return wr_memq_entry_group(q, u, strlen(u), true, false, &j, now, now, e, &dirty);
}

static uint64_t admit(wr_memq_t *q, int64_t now)
{
    uint64_t n = 0, moved, left;
    bool dirty = false;
    assert_int_equal(wr_memq_admit(q, now, &n, NULL, &moved, &left, &dirty), WR_OK);
    return n;
}

/* The line (0 standard, else 1-based group) of admitted user u: from its
 * pass's slot. -2 when u holds no pass. */
static int admitted_line(const wr_memq_t *q, const char *u)
{
    const wr_memq_token_t *t = wr_memq_token(q, u, strlen(u));
    if (!t)
        return -2;
    for (size_t i = 0; i < q->n_grp; i++)
        if (q->grp_order[i] == t->slot)
            return (int)i + 1;
    return 0;
}

/* The stats' line i (0 standard). */
static uint64_t line_admitted(const wr_memq_t *q, size_t i)
{
    wr_queue_stats_t st;
    wr_memq_stats(q, &st);
    return st.lines[i].admitted_total;
}

static void test_share_every_second(void **state)
{
    (void)state;
    const char *names[] = {"fanclub", "card"};
    wr_memq_t *q = queue_g("share", 20, names, 2, 0.25);
    int fan = wr_memq_group_slot(q, "fanclub"), card = wr_memq_group_slot(q, "card");
    assert_true(fan >= 0 && card >= 0 && fan != card);
    char u[32];
    for (int i = 0; i < 200; i++) { /* 200 standard people */
        snprintf(u, sizeof u, "s%d", i);
        join(q, u, -1, T0 + i);
    }
    int nfan = 0, ncard = 0;
    uint64_t last_pos = UINT64_MAX, seconds = 0;
    for (int sec = 0; sec < 12; sec++) {
        uint64_t a0 = q->admitted_total, s0 = line_admitted(q, 0);
        for (int tick = 0; tick < 10; tick++) {
            int64_t now = T0 + 1000000 + (int64_t)sec * 1000000 + tick * 100000;
            for (int k = 0; k < 3; k++) { /* priority people join faster than the rate */
                snprintf(u, sizeof u, "f%d", nfan++);
                assert_int_equal(join(q, u, fan, now + k).state, WR_ENTRY_WAITING);
                snprintf(u, sizeof u, "c%d", ncard++);
                wr_entry_t c = join(q, u, card, now + k);
                assert_string_equal(c.group, "card");
                assert_int_equal(c.group_line, 2);
                assert_int_equal(c.position, wr_zsl_length(q->grp[card]->line));
            }
            /* the last standard person's position never goes up */
            wr_entry_t e = status(q, "s199", now + 5);
            assert_int_equal(e.state, WR_ENTRY_WAITING);
            assert_true(e.position <= last_pos);
            last_pos = e.position;
            assert_string_equal(e.group, "");
            assert_int_equal(e.group_line, 0);
            assert_int_equal(e.group_first_waiting, 1);
            wr_queue_stats_t st;
            wr_memq_stats(q, &st);
            assert_int_equal(e.waiting, st.waiting); /* every line */
            assert_int_equal(st.waiting,
                             st.lines[0].waiting + st.lines[1].waiting + st.lines[2].waiting);
            admit(q, now + 10);
        }
        uint64_t a = q->admitted_total - a0, sa = line_admitted(q, 0) - s0;
        if (a == 0)
            continue;
        seconds++;

        /* the share over the second: at least floor(share x A) */
        assert_true(sa * 4 >= a - a % 4);
        if (sec >= 1) /* (in the first, the groups' newcomers were not due yet: the standard
                         line took what they could not use) */
            assert_true(sa <= a / 4 + 1);
    }
    assert_true(seconds >= 11);
    /* the groups in order: card got nothing while fanclub always had people */
    assert_int_equal(q->grp[card]->admitted_total, 0);
    assert_int_equal(q->grp[fan]->admitted_total + line_admitted(q, 0), q->admitted_total);
    assert_true(q->admitted_total >= 200); /* 20/s for about 11 s */
    assert_int_equal(line_admitted(q, 2), 0);
}

/* The standard line takes what the groups cannot use, and the groups
 * what it cannot; its share is not saved up while it is empty. */
static void test_unused_share_moves(void **state)
{
    (void)state;
    const char *names[] = {"vip"};
    wr_memq_t *q = queue_g("moves", 10, names, 1, 0.5);
    int vip = wr_memq_group_slot(q, "vip");
    char u[32];
    for (int i = 0; i < 30; i++) {
        snprintf(u, sizeof u, "v%d", i);
        join(q, u, vip, T0 + i);
    }
    /* nobody standard: the groups take everything, and no share piles up */
    int64_t now = T0 + 1000000;
    for (int t = 0; t < 20; t++)
        admit(q, now + t * 100000);
    assert_int_equal(q->grp[vip]->admitted_total, 20);
    assert_int_equal(q->share_carry_micro, 0);
    /* one standard person: half the admissions once due (the admission
     * delay first): of the next two ticks, one is theirs */
    join(q, "s0", -1, now + 2000000);
    assert_int_equal(admit(q, now + 2000000 + WR_ADMIT_DELAY_US), 1);
    assert_int_equal(admit(q, now + 2100000 + WR_ADMIT_DELAY_US), 1);
    assert_int_equal(admitted_line(q, "s0"), 0);
    assert_int_equal(q->grp[vip]->admitted_total, 21);
    /* the vip line runs dry: the standard line takes everything */
    for (int i = 1; i < 40; i++) {
        snprintf(u, sizeof u, "s%d", i);
        join(q, u, -1, now + 2400000 + i);
    }
    uint64_t n = 0;
    for (int t = 0; t < 30; t++)
        n += admit(q, now + 2500000 + t * 100000);
    assert_int_equal(n, 30);
    assert_int_equal(q->grp[vip]->admitted_total, 30);
    assert_int_equal(line_admitted(q, 0), 1 + 21);
}

/* maxActive counts everyone; a held group member returns first and counts
 * in their own line. */
static void test_max_active_held(void **state)
{
    (void)state;
    const char *names[] = {"vip"};
    wr_queue_config_t cfg = cfg_groups(100, names, 1, 0.2);
    cfg.max_active = 3;
    cfg.idle_timeout_seconds = 1;
    cfg.away_hold_seconds = 60;
    wr_memq_t *q = put_at("cap", &cfg);
    int vip = wr_memq_group_slot(q, "vip");
    join(q, "v0", vip, T0);
    join(q, "v1", vip, T0 + 1);
    join(q, "s0", -1, T0 + 2);
    join(q, "s1", -1, T0 + 3);
    /* v0 goes away: their turn comes while away, they are held */
    for (int t = 0; t < 30; t++) {
        int64_t now = T0 + 100000 + t * 100000;
        status(q, "v1", now);
        status(q, "s0", now);
        status(q, "s1", now);
    }
    int64_t now = T0 + 3200000;
    status(q, "v1", now);
    status(q, "s0", now);
    status(q, "s1", now);
    uint64_t n = admit(q, now + 10);
    assert_int_equal(n, 3); /* maxActive 3 across the lines */
    assert_int_equal(q->heap_n, 3);
    bool back;
    const wr_zsl_node_t *h = wr_memq_held(q, "v0", 2, &back);
    assert_non_null(h);
    assert_int_equal(wr_memq_node_slot(h), vip); /* held in their group */
    /* v0 returns: held, their group named */
    wr_entry_t e = status(q, "v0", now + 20);
    assert_true(e.held);
    assert_string_equal(e.group, "vip");
    /* a pass frees a slot: the held return goes first, in the vip line */
    bool dirty = false;
    const wr_memq_token_t *t = wr_memq_token(q, "v1", 2);
    assert_non_null(t);
    char jti[WR_JTI_LEN + 1];
    memcpy(jti, t->jti, sizeof jti);
    wr_token_reason_t why;
    assert_int_equal(wr_memq_token_use(q, "v1", 2, jti, true, now + 30, &why, &dirty), WR_OK);
    assert_int_equal(admit(q, now + 100010), 1);
    assert_int_equal(admitted_line(q, "v0"), 1);
    assert_int_equal(q->grp[vip]->admitted_total, 2);
    assert_int_equal(q->returned_total, 1);
}

/* stock counts everyone: the groups and the standard line together never
 * get more than is left. */
static void test_stock_across(void **state)
{
    (void)state;
    const char *names[] = {"vip"};
    wr_queue_config_t cfg = cfg_groups(100, names, 1, 0.5);
    cfg.stock = 3;
    cfg.stock_set = true;
    wr_memq_t *q = put_at("stock", &cfg);
    int vip = wr_memq_group_slot(q, "vip");
    char u[16];
    for (int i = 0; i < 4; i++) {
        snprintf(u, sizeof u, "v%d", i);
        join(q, u, vip, T0 + i);
        snprintf(u, sizeof u, "s%d", i);
        join(q, u, -1, T0 + 10 + i);
    }
    uint64_t n = 0;
    for (int t = 0; t < 20; t++)
        n += admit(q, T0 + 1000000 + t * 100000);
    assert_int_equal(n, 3);
    assert_int_equal(q->stock_left, 0);
    assert_int_equal(q->grp[vip]->admitted_total + line_admitted(q, 0), 3);
    assert_true(line_admitted(q, 0) >= 1); /* half of 3: its share */
}

/* A removed group's admissions stay its own: the standard line's count
 * does not take them. */
static void test_removed_group_admissions(void **state)
{
    (void)state;
    const char *names[] = {"vip"};
    wr_memq_t *q = queue_g("gone", 100, names, 1, 0.2);
    join(q, "v0", wr_memq_group_slot(q, "vip"), T0);
    join(q, "v1", wr_memq_group_slot(q, "vip"), T0 + 1);
    assert_int_equal(admit(q, T0 + 1000000), 2);
    bool dirty = false;
    wr_token_reason_t why;
    for (int i = 0; i < 2; i++) { /* their passes used: nobody of vip is left */
        const char *u = i ? "v1" : "v0";
        const wr_memq_token_t *t = wr_memq_token(q, u, 2);
        char jti[WR_JTI_LEN + 1];
        memcpy(jti, t->jti, sizeof jti);
        assert_int_equal(wr_memq_token_use(q, u, 2, jti, true, T0 + 1000010, &why, &dirty), WR_OK);
    }
    wr_queue_config_t cfg = q->cfg->cfg;
    cfg.n_groups = 0;
    wr_memq_t *q2 = NULL;
    assert_int_equal(wr_memq_db_put_config_at(&db, "gone", &cfg, T0 + 2000000, &q2), WR_OK);
    wr_queue_stats_t st;
    wr_memq_stats(q, &st);
    assert_int_equal(st.n_lines, 1);
    assert_int_equal(st.admitted_total, 2);
    assert_int_equal(st.lines[0].admitted_total, 0);
    join(q, "s0", -1, T0 + 2000001);
    assert_int_equal(admit(q, T0 + 3000000), 1);
    wr_memq_stats(q, &st);
    assert_int_equal(st.lines[0].admitted_total, 1);
}

static void hash_of(const char *code, char out[WR_CODE_HASH_HEX + 1])
{
    assert_int_equal(wr_groups_code_hash(code, strlen(code), out), WR_OK);
}

static void test_codes(void **state)
{
    (void)state;
    const char *names[] = {"fanclub", "card"};
    wr_memq_t *q = queue_g("codes", 10, names, 2, 0.2);
    char codes[4][WR_CODE_LEN + 1], h[4][WR_CODE_HASH_HEX + 1];
    for (int i = 0; i < 4; i++) {
        assert_int_equal(wr_groups_code_new(codes[i]), WR_OK);
        hash_of(codes[i], h[i]);
    }
    bool dirty = false;
    /* a 3-use code, a 1-use code that will be revoked, one that expires */
    assert_int_equal(wr_memq_codes_create(q, "fanclub", &h[0], 1, 3, -1, &dirty), WR_OK);
    assert_int_equal(wr_memq_codes_create(q, "card", &h[1], 1, 1, -1, &dirty), WR_OK);
    assert_int_equal(wr_memq_codes_create(q, "card", &h[2], 1, 5, T0 / 1000 + 1000, &dirty), WR_OK);
    /* refused: an unknown group, a hash kept already, counts out of range */
    assert_int_equal(wr_memq_codes_create(q, "nope", &h[3], 1, 1, -1, &dirty), WR_EINVAL);
    assert_int_equal(wr_memq_codes_create(q, "card", &h[0], 1, 1, -1, &dirty), WR_EINVAL);
    assert_int_equal(wr_memq_codes_create(q, "card", &h[3], 1, 0, -1, &dirty), WR_EINVAL);
    wr_entry_t e;
    /* unknown */
    assert_int_equal(join_code(q, "x", h[3], T0, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_UNKNOWN);
    assert_null(wr_memq_waiting(q, "x", 1));
    /* exactly 3 places for the 3-use code */
    char u[16];
    for (int i = 0; i < 5; i++) {
        snprintf(u, sizeof u, "p%d", i);
        wr_err_t err = join_code(q, u, h[0], T0 + 10 + i, &e);
        if (i < 3) {
            assert_int_equal(err, WR_OK);
            assert_string_equal(e.group, "fanclub");
            assert_int_equal(e.position, (uint64_t)i + 1);
        } else {
            assert_int_equal(err, WR_ECODE);
            assert_int_equal(e.code_reason, WR_CODE_USED_UP);
        }
    }
    /* someone with a place spends nothing, whatever code they bring */
    assert_int_equal(join_code(q, "p0", h[1], T0 + 20, &e), WR_OK);
    assert_string_equal(e.group, "fanclub");
    join(q, "std", -1, T0 + 21);
    assert_int_equal(join_code(q, "std", h[1], T0 + 22, &e), WR_OK);
    assert_string_equal(e.group, "");
    wr_store_codes_t c;
    wr_memq_codes_counts(q, &c);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.groups[0].name, "fanclub");
    assert_int_equal(c.groups[0].issued, 1);
    assert_int_equal(c.groups[0].uses_spent, 3);
    assert_int_equal(c.groups[1].issued, 2);
    assert_int_equal(c.groups[1].uses_spent, 0);
    /* revoked */
    assert_int_equal(wr_memq_code_revoke(q, h[1], &dirty), WR_OK);
    assert_int_equal(wr_memq_code_revoke(q, h[1], &dirty), WR_OK); /* again: fine */
    assert_int_equal(wr_memq_code_revoke(q, h[3], &dirty), WR_ECODE);
    assert_int_equal(join_code(q, "r", h[1], T0 + 30, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_REVOKED);
    /* expired at the store's clock */
    assert_int_equal(join_code(q, "t", h[2], T0 + 999000, &e), WR_OK);
    assert_string_equal(e.group, "card");
    assert_int_equal(join_code(q, "t2", h[2], T0 + 1000000, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_EXPIRED);
    wr_memq_codes_counts(q, &c);
    assert_int_equal(c.groups[1].revoked, 1);
    assert_int_equal(c.groups[1].uses_spent, 1);
    /* another queue's code is unknown here */
    const char *other[] = {"fanclub"};
    wr_memq_t *q2 = queue_g("other", 10, other, 1, 0.2);
    assert_int_equal(join_code(q2, "p9", h[0], T0, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_UNKNOWN);
}

/* A config that removes a group with people or live codes is refused;
 * reordering keeps everyone in their line. */
static void test_config_changes(void **state)
{
    (void)state;
    const char *names[] = {"a", "b"};
    wr_memq_t *q = queue_g("cfg", 10, names, 2, 0.2);
    int a = wr_memq_group_slot(q, "a"), b = wr_memq_group_slot(q, "b");
    join(q, "a0", a, T0);
    join(q, "a1", a, T0 + 1);
    char hb[WR_CODE_HASH_HEX + 1], code[WR_CODE_LEN + 1];
    assert_int_equal(wr_groups_code_new(code), WR_OK);
    hash_of(code, hb);
    bool dirty = false;
    assert_int_equal(
        wr_memq_codes_create(q, "b", (const char(*)[WR_CODE_HASH_HEX + 1]) hb, 1, 1, -1, &dirty),
        WR_OK);
    wr_queue_config_t cfg = q->cfg->cfg;
    /* b and a swapped: a's people stay, now the second line */
    snprintf(cfg.groups[0], sizeof cfg.groups[0], "b");
    snprintf(cfg.groups[1], sizeof cfg.groups[1], "a");
    wr_memq_t *q2 = NULL;
    assert_int_equal(wr_memq_db_put_config_at(&db, "cfg", &cfg, T0 + 10, &q2), WR_OK);
    assert_ptr_equal(q2, q);
    assert_int_equal(wr_memq_group_slot(q, "a"), a);
    wr_entry_t e = status(q, "a1", T0 + 20);
    assert_string_equal(e.group, "a");
    assert_int_equal(e.group_line, 2);
    assert_int_equal(e.position, 2);
    /* a removed while it has people: refused, nothing changed */
    cfg.n_groups = 1;
    snprintf(cfg.groups[0], sizeof cfg.groups[0], "b");
    uint64_t version = q->version;
    assert_int_equal(wr_memq_db_put_config_at(&db, "cfg", &cfg, T0 + 30, &q2), WR_EGROUP);
    assert_int_equal(q->version, version);
    assert_int_equal(q->n_grp, 2);
    /* b removed while its code is live: refused */
    snprintf(cfg.groups[0], sizeof cfg.groups[0], "a");
    assert_int_equal(wr_memq_db_put_config_at(&db, "cfg", &cfg, T0 + 30, &q2), WR_EGROUP);
    /* revoked, b can go; a new group takes a slot and starts empty */
    assert_int_equal(wr_memq_code_revoke(q, hb, &dirty), WR_OK);
    cfg.n_groups = 2;
    snprintf(cfg.groups[1], sizeof cfg.groups[1], "c");
    assert_int_equal(wr_memq_db_put_config_at(&db, "cfg", &cfg, T0 + 40, &q2), WR_OK);
    assert_int_equal(wr_memq_group_slot(q, "b"), -1);
    int c = wr_memq_group_slot(q, "c");
    assert_true(c >= 0);
    assert_int_equal(wr_zsl_length(q->grp[c]->line), 0);
    /* the revoked code of b is gone with it: unknown */
    assert_int_equal(join_code(q, "z", hb, T0 + 50, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_UNKNOWN);
    (void)b;
    /* a's people leave: a can go too */
    assert_int_equal(wr_memq_leave(q, "a0", 2, T0 + 60, &dirty), WR_OK);
    assert_int_equal(wr_memq_leave(q, "a1", 2, T0 + 61, &dirty), WR_OK);
    cfg.n_groups = 0;
    assert_int_equal(wr_memq_db_put_config_at(&db, "cfg", &cfg, T0 + 70, &q2), WR_OK);
    assert_int_equal(q->n_grp, 0);
}

/* The public log of a sale with groups: joins and admits name the group,
 * and the replay (one line per group) finds no overtake. */
static void test_log_replays(void **state)
{
    (void)state;
    const char *names[] = {"fanclub"};
    wr_queue_config_t cfg = cfg_groups(10, names, 1, 0.3);
    cfg.public_log = true;
    wr_memq_t *q = put_at("logged", &cfg);
    assert_int_equal(wr_memq_log_attach(&db, q), WR_OK);
    int fan = wr_memq_group_slot(q, "fanclub");
    char u[16];
    for (int i = 0; i < 20; i++) {
        snprintf(u, sizeof u, "s%d", i);
        join(q, u, -1, T0 + i);
        snprintf(u, sizeof u, "f%d", i);
        join(q, u, fan, T0 + 100 + i);
    }
    uint64_t n = 0;
    for (int t = 0; t < 50; t++)
        n += admit(q, T0 + 1000000 + t * 100000);
    assert_int_equal(n, 40);
    wr_logreplay_t *r = wr_logreplay_new();
    assert_non_null(r);
    bool grp_leaf = false;
    for (uint64_t i = 0; i < wr_memlog_size(q->log); i++) {
        size_t len;
        const char *leaf = wr_memlog_leaf(q->log, i, &len);
        if (len > 14 && memmem(leaf, len, "\"grp\":\"fanclub\"", 15))
            grp_leaf = true;
        assert_int_equal(wr_logreplay_feed(r, leaf, len), WR_OK);
    }
    const wr_logreplay_stats_t *st = wr_logreplay_stats(r);
    assert_int_equal(st->invalid, 0);
    assert_int_equal(st->overtakes, 0);
    assert_int_equal(st->joined, 40);
    assert_int_equal(st->admitted, 40);
    assert_true(grp_leaf);
    wr_logreplay_free(r);
}

#define TESTS(X)                                                                                   \
    X(test_share_every_second)                                                                     \
    X(test_unused_share_moves)                                                                     \
    X(test_max_active_held)                                                                        \
    X(test_stock_across)                                                                           \
    X(test_removed_group_admissions)                                                               \
    X(test_codes)                                                                                  \
    X(test_config_changes)                                                                         \
    X(test_log_replays)
WR_UNIT_MAIN_EACH(setup, teardown, TESTS)
