/*
 * test_cfgcache.c - the Redis store's bounded, versioned config cache
 * (cfgcache.h).
 *
 * Checked: a put caches a copy at its version and get returns it as a new
 * reference; the same version again changes nothing (the snapshot is
 * kept); a new version is a new snapshot while a request holding the old
 * one still reads the old values; the bound: a full cache takes no new
 * queue (it is served uncached) but still takes new versions of cached
 * ones, and a remove makes room; refcounts: a snapshot lives until the
 * cache entry and the last reference are gone, also past the cache's free
 * (run under ASan/LSan, a wrong count is a use after free or a leak).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/redis/cfgcache.h"
#include "unit_cfg.h"
#include "unit_main.h"

/* wr_cfgcache_put_ref with the caller's reference dropped at once: what is
 * cached is the cache's alone */
static void put(wr_cfgcache_t *c, const char *q, uint64_t version, const wr_queue_config_t *cfg)
{
    wr_cfgcache_snap_t *s = wr_cfgcache_put_ref(c, q, version, cfg);
    assert_non_null(s);
    wr_cfgcache_release(s);
}

static void t_put_get_copy_and_version(void **state)
{
    (void)state;
    wr_cfgcache_t *c = wr_cfgcache_new(4);
    assert_non_null(c);
    assert_null(wr_cfgcache_get(c, "a"));
    wr_queue_config_t cfg = cfg_rate(7);
    put(c, "a", 100, &cfg);
    cfg.admit_per_second = 99; /* the cache holds a copy */
    wr_cfgcache_snap_t *s = wr_cfgcache_get(c, "a");
    assert_non_null(s);
    assert_int_equal(s->version, 100);
    assert_true(s->cfg.admit_per_second == 7);
    assert_int_equal(s->refs, 2); /* the entry's and ours */
    wr_cfgcache_release(s);
    assert_int_equal(s->refs, 1);
    assert_null(wr_cfgcache_get(c, "b"));
    wr_cfgcache_free(c);
}

static void t_same_version_keeps_the_snapshot(void **state)
{
    (void)state;
    wr_cfgcache_t *c = wr_cfgcache_new(4);
    wr_queue_config_t cfg = cfg_rate(7);
    put(c, "a", 100, &cfg);
    wr_cfgcache_snap_t *s1 = wr_cfgcache_get(c, "a");
    cfg.admit_per_second = 8;
    put(c, "a", 100, &cfg); /* same version: nothing changes */
    wr_cfgcache_snap_t *s2 = wr_cfgcache_get(c, "a");
    assert_ptr_equal(s1, s2);
    assert_true(s2->cfg.admit_per_second == 7);
    assert_int_equal(s2->refs, 3);
    wr_cfgcache_release(s1);
    wr_cfgcache_release(s2);
    wr_cfgcache_free(c);
}

static void t_new_version_while_a_request_holds_the_old(void **state)
{
    (void)state;
    wr_cfgcache_t *c = wr_cfgcache_new(4);
    wr_queue_config_t cfg = cfg_rate(7);
    put(c, "a", 100, &cfg);
    wr_cfgcache_snap_t *old = wr_cfgcache_get(c, "a"); /* a request announced v100 */
    cfg.admit_per_second = 8;
    put(c, "a", 101, &cfg);
    assert_int_equal(old->refs, 1); /* the cache let go of it, the request did not */
    assert_int_equal(old->version, 100);
    assert_true(old->cfg.admit_per_second == 7);
    wr_cfgcache_snap_t *cur = wr_cfgcache_get(c, "a");
    assert_ptr_not_equal(cur, old);
    assert_int_equal(cur->version, 101);
    assert_true(cur->cfg.admit_per_second == 8);
    /* the cache freed while both are held: both stay readable */
    wr_cfgcache_free(c);
    assert_int_equal(cur->refs, 1);
    assert_int_equal(cur->version, 101);
    assert_int_equal(old->version, 100);
    wr_cfgcache_release(old);
    wr_cfgcache_release(cur);
}

/* put_ref: the reply's config by reference - the cached snapshot when its
 * version is cached (no copy), the new one otherwise, and one of the
 * caller's own when the cache is full. */
static void t_put_ref(void **state)
{
    (void)state;
    wr_cfgcache_t *c = wr_cfgcache_new(1);
    wr_queue_config_t cfg = cfg_rate(7);
    wr_cfgcache_snap_t *a = wr_cfgcache_put_ref(c, "a", 100, &cfg);
    assert_non_null(a);
    assert_int_equal(a->refs, 2); /* the entry's and ours */
    cfg.admit_per_second = 8;
    wr_cfgcache_snap_t *a2 = wr_cfgcache_put_ref(c, "a", 100, &cfg);
    assert_ptr_equal(a, a2); /* same version: the cached snapshot, not copied */
    assert_true(a2->cfg.admit_per_second == 7);
    assert_int_equal(a->refs, 3);
    wr_cfgcache_snap_t *b = wr_cfgcache_put_ref(c, "b", 5, &cfg); /* full: uncached */
    assert_non_null(b);
    assert_int_equal(b->refs, 1);
    assert_true(b->cfg.admit_per_second == 8);
    assert_null(wr_cfgcache_get(c, "b"));
    wr_cfgcache_release(b);
    wr_cfgcache_release(a2);
    wr_cfgcache_free(c);
    assert_int_equal(a->refs, 1); /* ours outlives the cache */
    wr_cfgcache_release(a);
}

static void t_bound_and_remove(void **state)
{
    (void)state;
    wr_cfgcache_t *c = wr_cfgcache_new(2);
    wr_queue_config_t cfg = cfg_rate(1);
    put(c, "a", 1, &cfg);
    put(c, "b", 1, &cfg);
    put(c, "c", 1, &cfg); /* full: not cached */
    assert_null(wr_cfgcache_get(c, "c"));
    /* a cached queue still takes new versions when the cache is full */
    cfg.admit_per_second = 2;
    put(c, "b", 2, &cfg);
    wr_cfgcache_snap_t *b = wr_cfgcache_get(c, "b");
    assert_non_null(b);
    assert_int_equal(b->version, 2);
    wr_cfgcache_release(b);
    /* a remove makes room; removing an unknown queue is a no-op */
    wr_cfgcache_remove(c, "zz");
    wr_cfgcache_remove(c, "a");
    assert_null(wr_cfgcache_get(c, "a"));
    put(c, "c", 1, &cfg);
    wr_cfgcache_snap_t *s = wr_cfgcache_get(c, "c");
    assert_non_null(s);
    assert_int_equal(s->version, 1);
    wr_cfgcache_remove(c, "c"); /* removed while held: still readable */
    assert_int_equal(s->refs, 1);
    assert_true(s->cfg.admit_per_second == 2);
    wr_cfgcache_release(s);
    wr_cfgcache_free(c);
    wr_cfgcache_free(NULL);
    wr_cfgcache_release(NULL);
}

#define TESTS(X)                                                                                   \
    X(t_put_get_copy_and_version)                                                                  \
    X(t_same_version_keeps_the_snapshot)                                                           \
    X(t_new_version_while_a_request_holds_the_old)                                                 \
    X(t_bound_and_remove)                                                                          \
    X(t_put_ref)
WR_UNIT_MAIN(NULL, NULL, TESTS)
