/*
 * config.c - the store contract, queue configs: round trip and version, delete, list, the shared
 * secret. Run by runner.c against every backend of the store registry (tests listed in
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

static void t_config_roundtrip_and_version(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    wr_queue_config_t c = mkcfg(5, 1000, 7, 99, 60);
    snprintf(c.target_url, sizeof c.target_url, "https://shop.example/checkout");
    put_ok(s, "cfg", c);
    assert_int_equal(sh_get(s, "cfg", &r), WR_OK);
    assert_string_equal(r.name, "cfg");
    assert_true(r.cfg.admit_per_second == 5.0);
    assert_int_equal(r.cfg.tick_ms, 1000);
    assert_int_equal(r.cfg.max_active, 7);
    assert_int_equal(r.cfg.max_queue_size, 99);
    assert_int_equal(r.cfg.token_ttl_seconds, 60);
    assert_string_equal(r.cfg.target_url, "https://shop.example/checkout");
    sh_expect_stats(&r.stats, SH_ST(waiting, 0), SH_ST(admitted_total, 0));
    /* twice, so a caching backend answers from its cache the second time */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sh_join(s, "cfg", i ? "u2" : "u1", &r), WR_OK);
        assert_true(r.has_cfg);
        assert_true(r.cfg.admit_per_second == 5.0);
        assert_int_equal(r.cfg.max_queue_size, 99);
    }
    /* replace: the line is kept, every operation sees the new config */
    c = mkcfg(7.25, 200, 0, 50, 120);
    put_ok(s, "cfg", c);
    pass_store_time(s, wr_clock_wall_us() + WR_ADMIT_DELAY_US); /* u1, u2 due */
    assert_int_equal(sh_status(s, "cfg", "u1", &r), WR_OK);
    assert_int_equal(r.entry.position, 1);
    assert_int_equal(r.entry.waiting, 2);
    assert_true(r.cfg.admit_per_second == 7.25);
    assert_int_equal(r.cfg.tick_ms, 200);
    assert_int_equal(r.cfg.max_queue_size, 50);
    assert_int_equal(r.cfg.target_url[0], '\0');
    assert_int_equal(sh_admit(s, "cfg", &r), WR_OK);
    assert_int_equal(r.cfg.tick_ms, 200);
    assert_int_equal(r.cfg.token_ttl_seconds, 120);
    /* 7.25/s * 0.2 s = 1.45 -> 1 admitted on the first tick */
    assert_int_equal(r.admit.admitted, 1);
    assert_int_equal(sh_get(s, "cfg", &r), WR_OK);
    assert_true(r.cfg.admit_per_second == 7.25);
    assert_int_equal(r.stats.waiting, 1);
}

static void t_queue_delete(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    put_ok(s, "del", plain_cfg());
    join_and_admit(s, "del", 6, 5, &r);
    assert_int_equal(sh_delete(s, "del"), WR_OK);
    assert_int_equal(sh_get(s, "del", &r), WR_ENOTFOUND);
    assert_int_equal(sh_join(s, "del", "u1", &r), WR_ENOTFOUND);
    assert_int_equal(sh_status(s, "del", "u6", &r), WR_ENOTFOUND);
    assert_int_equal(sh_delete(s, "del"), WR_ENOTFOUND);
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 0);
    /* created again: nothing of the old state survives */
    put_ok(s, "del", mkcfg(3, 500, 0, 0, 300));
    assert_int_equal(sh_get(s, "del", &r), WR_OK);
    assert_true(r.cfg.admit_per_second == 3.0);
    sh_expect_stats(&r.stats, SH_ST(waiting, 0), SH_ST(active, 0), SH_ST(admitted_total, 0));
    assert_int_equal(sh_status(s, "del", "u1", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_status(s, "del", "u6", &r), WR_ENOTINQUEUE);
    assert_int_equal(sh_join(s, "del", "u6", &r), WR_OK);
    assert_int_equal(r.entry.position, 1);
    assert_true(r.cfg.admit_per_second == 3.0);
}

static void t_queue_list_sorted(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 0);
    put_ok(s, "qc", mkcfg(1, 1000, 0, 0, 300));
    put_ok(s, "qa", mkcfg(2, 1000, 0, 0, 300));
    put_ok(s, "qb", mkcfg(3, 1000, 0, 0, 300));
    put_ok(s, "qb", mkcfg(4, 1000, 0, 0, 300)); /* a put of a known queue adds no entry */
    join_n(s, "qb", 1, 2);
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.names[0], "qa");
    assert_string_equal(r.names[1], "qb");
    assert_string_equal(r.names[2], "qc");
    assert_int_equal(r.lstats[0].waiting, 0);
    assert_int_equal(r.lstats[1].waiting, 2);
    assert_int_equal(sh_delete(s, "qa"), WR_OK);
    assert_int_equal(sh_list(s, &r), WR_OK);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.names[0], "qb");
    assert_string_equal(r.names[1], "qc");
}

static void t_secret_first_writer_wins(void **state)
{
    wr_store_t *s = *state;
    sh_res_t r;
    uint8_t a[32], b[40];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = (uint8_t)(i * 7 + 1); /* binary, with no NUL */
    memset(b, 'b', sizeof b);
    assert_int_equal(sh_secret(s, a, sizeof a, &r), WR_OK);
    assert_int_equal(r.secret_len, sizeof a);
    assert_memory_equal(r.secret, a, sizeof a);
    assert_int_equal(sh_secret(s, b, sizeof b, &r), WR_OK);
    assert_int_equal(r.secret_len, sizeof a);
    assert_memory_equal(r.secret, a, sizeof a);
    if (g_redis || g_cluster) { /* shared by every instance */
        wr_store_t *s2 = open_store_with(2000);
        assert_non_null(s2);
        assert_int_equal(sh_secret(s2, b, sizeof b, &r), WR_OK);
        assert_int_equal(r.secret_len, sizeof a);
        assert_memory_equal(r.secret, a, sizeof a);
        wr_store_close(s2);
    }
}

/* ---------------------------------------------- K31: secret_sync */

typedef struct {
    sh_res_t r; /* first: sh_note's record */
    char epoch[WR_STORE_EPOCH_MAX + 1];
    uint8_t secret[WR_SECRET_MAX], previous[WR_SECRET_MAX];
    size_t secret_len, previous_len;
    bool has_secret, restored;
} sync_rec_t;

static void sync_rec_cb(wr_err_t err, const wr_store_sync_t *res, void *arg)
{
    sync_rec_t *x = arg;
    sh_note(&x->r, err);
    if (!res)
        return;
    snprintf(x->epoch, sizeof x->epoch, "%s", res->epoch);
    x->has_secret = res->secret != NULL;
    x->secret_len = res->secret_len;
    if (res->secret)
        memcpy(x->secret, res->secret, res->secret_len);
    x->previous_len = res->previous_len;
    if (res->previous)
        memcpy(x->previous, res->previous, res->previous_len);
    x->restored = res->secret_restored;
}

static wr_err_t do_sync(wr_store_t *s, const uint8_t *own, size_t len, const char *epoch,
                        sync_rec_t *x)
{
    memset(x, 0, sizeof *x);
    return sh_settle(&x->r, wr_store_secret_sync(s, own, len, epoch, sync_rec_cb, x));
}

/* K31: the epoch marker is set once and answered after; a missing secret
 * is written back (set-if-absent, restored); a present one is answered. */
static void t_k31_sync_epoch_and_write_back(void **state)
{
    wr_store_t *s = *state;
    sync_rec_t x;
    uint8_t a[32];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = (uint8_t)(i * 11 + 3);
    assert_int_equal(do_sync(s, NULL, 0, "e1", &x), WR_OK);
    assert_string_equal(x.epoch, "e1");
    assert_false(x.has_secret);
    assert_false(x.restored);
    assert_int_equal(x.previous_len, 0);
    assert_int_equal(do_sync(s, NULL, 0, "e2", &x), WR_OK);
    assert_string_equal(x.epoch, "e1"); /* kept */
    /* no secret stored: own is written back */
    assert_int_equal(do_sync(s, a, sizeof a, "e3", &x), WR_OK);
    assert_true(x.restored);
    assert_int_equal(x.secret_len, sizeof a);
    assert_memory_equal(x.secret, a, sizeof a);
    sh_res_t r;
    uint8_t b[32];
    memset(b, 'b', sizeof b);
    assert_int_equal(sh_secret(s, b, sizeof b, &r), WR_OK); /* first writer won: a */
    assert_memory_equal(r.secret, a, sizeof a);
    assert_int_equal(do_sync(s, a, sizeof a, "e4", &x), WR_OK);
    assert_false(x.restored);
    assert_memory_equal(x.secret, a, sizeof a);
    assert_int_equal(x.previous_len, 0);
    assert_string_equal(x.epoch, "e1");
    /* arguments */
    assert_int_equal(wr_store_secret_sync(s, a, sizeof a, "", sync_rec_cb, &x), WR_EINVAL);
    assert_int_equal(wr_store_secret_sync(s, a, sizeof a, "a-b", sync_rec_cb, &x), WR_EINVAL);
    assert_int_equal(wr_store_secret_sync(s, a, sizeof a, "e", NULL, NULL), WR_EINVAL);
    assert_int_equal(x.r.calls, 1);
}

/* K31: another secret stored: it is answered for the caller to adopt, and
 * the caller's becomes the store's previous secret, which every later
 * caller is told (an instance started after learns it). */
static void t_k31_sync_adopt_keeps_previous(void **state)
{
    wr_store_t *s = *state;
    sync_rec_t x;
    sh_res_t r;
    uint8_t other[40], mine[32];
    memset(other, 'o', sizeof other);
    for (size_t i = 0; i < sizeof mine; i++)
        mine[i] = (uint8_t)(200 - i);
    assert_int_equal(sh_secret(s, other, sizeof other, &r), WR_OK);
    assert_int_equal(do_sync(s, mine, sizeof mine, "m1", &x), WR_OK);
    assert_false(x.restored);
    assert_int_equal(x.secret_len, sizeof other);
    assert_memory_equal(x.secret, other, sizeof other);
    assert_int_equal(x.previous_len, sizeof mine);
    assert_memory_equal(x.previous, mine, sizeof mine);
    /* the stored secret is unchanged; a caller holding it learns the previous */
    assert_int_equal(do_sync(s, other, sizeof other, "m2", &x), WR_OK);
    assert_memory_equal(x.secret, other, sizeof other);
    assert_int_equal(x.previous_len, sizeof mine);
    assert_memory_equal(x.previous, mine, sizeof mine);
    assert_int_equal(do_sync(s, NULL, 0, "m3", &x), WR_OK);
    assert_false(x.has_secret);
    assert_int_equal(x.previous_len, sizeof mine);
}

WR_CONTRACT_GROUP(config, T(t_config_roundtrip_and_version), T(t_queue_delete),
                  T(t_queue_list_sorted), T(t_secret_first_writer_wins),
                  T(t_k31_sync_epoch_and_write_back), T(t_k31_sync_adopt_keeps_previous));
