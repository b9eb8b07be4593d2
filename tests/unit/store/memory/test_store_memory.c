/*
 * test_store_memory.c - the embedded store beyond the shared contract:
 * the async contract (never called from inside the call, FIFO, exactly
 * once, close cancels), snapshots (round trip, order kept across a clock
 * that went back, corrupt files refused with WR_EIO, the periodic timer)
 * and argument checks. The loop, result records and blocking helpers are
 * store_harness.h's (tests/store/).
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
#include <event2/event.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "core/groups.h"
#include "core/queue.h"
#include "store_harness.h"
#include "store/memory/store_memory.h"
#include "unit_cfg.h"
#include "unit_main.h"

#define T0 1750000000000000LL

/* An entry always carries its queue's config (store.h). */
static void entry_has_config(const sh_res_t *r)
{
    if (r->has_entry)
        assert_true(r->has_cfg);
}

static void put_cfg(wr_store_t *st, const char *q, double rate, uint64_t max_size)
{
    wr_queue_config_t c = cfg_rate(rate);
    c.max_queue_size = max_size;
    assert_int_equal(sh_put(st, q, &c), WR_OK);
}

static sh_res_t join(wr_store_t *st, const char *q, const char *u)
{
    sh_res_t r;
    sh_join(st, q, u, &r);
    entry_has_config(&r);
    return r;
}

static sh_res_t status(wr_store_t *st, const char *q, const char *u)
{
    sh_res_t r;
    sh_status(st, q, u, &r);
    entry_has_config(&r);
    return r;
}

static sh_res_t get(wr_store_t *st, const char *q)
{
    sh_res_t r;
    sh_get(st, q, &r);
    return r;
}

static void test_async_contract(void **state)
{
    struct event_base *base = sh_loop_new();
    wr_store_t *st;
    wr_store_memory_opts_t o = {.test_clock_start_us = T0};
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);
    assert_string_equal(st->ops->name, "memory");
    put_cfg(st, "q", 10, 0);

    sh_res_t a = {0}, b = {0}, c = {0};
    assert_int_equal(wr_store_join(st, "q", "alice", sh_entry_cb, &a), WR_OK);
    assert_int_equal(wr_store_join(st, "q", "bob", sh_entry_cb, &b), WR_OK);
    assert_int_equal(wr_store_ping(st, sh_done_cb, &c), WR_OK);
    /* nothing called from inside the calls */
    assert_int_equal(a.calls + b.calls + c.calls, 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    assert_int_equal(a.calls, 1);
    assert_int_equal(b.calls, 1);
    assert_int_equal(c.calls, 1);
    assert_true(a.order < b.order && b.order < c.order); /* FIFO */
    assert_int_equal(a.entry.position, 1);
    assert_int_equal(b.entry.position, 2);
    assert_int_equal(b.entry.waiting, 2);
    entry_has_config(&a);
    entry_has_config(&b);
    assert_int_equal(c.err, WR_OK);

    /* bad arguments: error now, callback never */
    sh_res_t x = {0};
    assert_int_equal(wr_store_join(st, "bad name", "u", sh_entry_cb, &x), WR_EINVAL);
    assert_int_equal(wr_store_join(st, "q", "", sh_entry_cb, &x), WR_EINVAL);
    char longid[200];
    memset(longid, 'a', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    assert_int_equal(wr_store_join(st, "q", longid, sh_entry_cb, &x), WR_EINVAL);
    assert_int_equal(wr_store_secret(st, NULL, 0, sh_secret_cb, &x), WR_EINVAL);
    assert_int_equal(st->ops->debug_advance_time(st, -1), WR_EINVAL);
    event_base_loop(base, EVLOOP_NONBLOCK);
    assert_int_equal(x.calls, 0);

    /* close calls what is pending, synchronously, with WR_ECANCELED */
    sh_res_t p1 = {0}, p2 = {0};
    assert_int_equal(wr_store_status(st, "q", "alice", sh_entry_cb, &p1), WR_OK);
    assert_int_equal(wr_store_admit(st, "q", sh_admit_cb, &p2), WR_OK);
    wr_store_close(st);
    assert_int_equal(p1.calls, 1);
    assert_int_equal(p1.err, WR_ECANCELED);
    assert_int_equal(p2.calls, 1);
    assert_int_equal(p2.err, WR_ECANCELED);
    sh_loop_free();
}

/* Closing the store from inside one of its callbacks. */
static wr_store_t *g_st;
static void close_in_cb(wr_err_t err, void *arg)
{
    sh_note(arg, err);
    wr_store_close(g_st);
}

static void test_close_inside_callback(void **state)
{
    struct event_base *base = sh_loop_new();
    assert_int_equal(wr_store_memory_open(base, NULL, &g_st), WR_OK);
    sh_res_t a = {0}, b = {0};
    assert_int_equal(wr_store_ping(g_st, close_in_cb, &a), WR_OK);
    assert_int_equal(wr_store_ping(g_st, sh_done_cb, &b), WR_OK);
    event_base_loop(base, EVLOOP_NONBLOCK);
    assert_int_equal(a.calls, 1);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.err, WR_ECANCELED);
    sh_loop_free();
}

static void test_semantics(void **state)
{
    struct event_base *base = sh_loop_new();
    wr_store_t *st;
    wr_store_memory_opts_t o = {.test_clock_start_us = T0};
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);

    sh_res_t r = join(st, "nope", "u");
    assert_int_equal(r.err, WR_ENOTFOUND);

    put_cfg(st, "q", 10, 2); /* 10/s at 100 ms: 1 per tick; max 2 waiting */
    assert_int_equal(join(st, "q", "u1").entry.position, 1);
    assert_int_equal(join(st, "q", "u2").entry.position, 2);
    r = join(st, "q", "u3");
    assert_int_equal(r.err, WR_EFULL);
    assert_int_equal(r.entry.waiting, 2);
    assert_int_equal(r.cfg.max_queue_size, 2);
    /* rejoin does not move and is not refused */
    r = join(st, "q", "u2");
    assert_int_equal(r.err, WR_OK);
    assert_int_equal(r.entry.position, 2);
    assert_int_equal(status(st, "q", "u3").err, WR_ENOTINQUEUE);

    /* nobody is admitted sooner than 250 ms after joining (queue.h) */
    sh_res_t a;
    assert_int_equal(sh_admit(st, "q", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 0);
    assert_int_equal(st->ops->debug_advance_time(st, WR_ADMIT_DELAY_US), WR_OK);
    /* the first tick after it: 1 admitted; same tick again: 0 */
    assert_int_equal(sh_admit(st, "q", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(a.admit.now_us, T0 + WR_ADMIT_DELAY_US);
    assert_int_equal(a.admit.stats.active, 1);
    assert_int_equal(sh_admit(st, "q", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 0);

    r = status(st, "q", "u1");
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    assert_int_equal(r.entry.issued_at_us, T0 + WR_ADMIT_DELAY_US);
    assert_int_equal(r.entry.expires_at_us, T0 + WR_ADMIT_DELAY_US + 300 * 1000000LL);
    assert_int_equal(strlen(r.entry.jti), WR_JTI_LEN);
    char jti[WR_JTI_LEN + 1];
    memcpy(jti, r.entry.jti, sizeof jti);
    assert_int_equal(status(st, "q", "u2").entry.position, 1);

    /* verify does not consume; consume does, once */
    sh_res_t t;
    assert_int_equal(sh_verify(st, "q", "u1", jti, &t), WR_OK);
    assert_int_equal(sh_consume(st, "q", "u1", "wrongjti", &t), WR_ETOKEN);
    assert_int_equal(t.tok.reason, WR_TOKEN_CONSUMED);
    assert_int_equal(sh_consume(st, "q", "u1", jti, &t), WR_OK);
    assert_false(t.tok.passthrough);
    assert_int_equal(sh_consume(st, "q", "u1", jti, &t), WR_ETOKEN);
    assert_int_equal(t.tok.reason, WR_TOKEN_CONSUMED);

    /* 250 ms later (2 ticks, 2 budget), one waiting: 1 admitted, carry dropped */
    assert_int_equal(st->ops->debug_advance_time(st, 250000), WR_OK);
    assert_int_equal(sh_admit(st, "q", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1);
    /* u2's pass, carried by an answer (seen), expires after 300 s: status
     * says not in queue, counted once */
    assert_int_equal(status(st, "q", "u2").entry.state, WR_ENTRY_ADMITTED);
    assert_int_equal(st->ops->debug_advance_time(st, 300 * 1000000LL), WR_OK);
    assert_int_equal(status(st, "q", "u2").err, WR_ENOTINQUEUE);
    r = get(st, "q");
    assert_int_equal(r.err, WR_OK);
    assert_string_equal(r.name, "q");
    sh_expect_stats(&r.stats, SH_ST(waiting, 0), SH_ST(active, 0), SH_ST(admitted_total, 2),
                    SH_ST(consumed_total, 1), SH_ST(expired_total, 1),
                    SH_ST(rejected_full_total, 1));

    /* leave: from the line, then not in queue */
    join(st, "q", "u9");
    assert_int_equal(sh_leave(st, "q", "u9"), WR_OK);
    assert_int_equal(sh_leave(st, "q", "u9"), WR_ENOTINQUEUE);
    assert_int_equal(get(st, "q").stats.left_total, 1);

    /* disabled: passthrough for join and consume */
    wr_queue_config_t c = cfg_rate(10);
    c.enabled = false;
    sh_put(st, "q", &c);
    assert_int_equal(join(st, "q", "zz").entry.state, WR_ENTRY_PASSTHROUGH);
    assert_int_equal(sh_consume(st, "q", "zz", "x", &t), WR_OK);
    assert_true(t.tok.passthrough);
    /* the counters survived the config change */
    assert_int_equal(get(st, "q").stats.admitted_total, 2);

    /* list sorted by name; delete */
    put_cfg(st, "c", 1, 0);
    put_cfg(st, "a", 1, 0);
    sh_res_t li;
    sh_list(st, &li);
    assert_int_equal(li.n, 3);
    assert_string_equal(li.names[0], "a");
    assert_string_equal(li.names[1], "c");
    assert_string_equal(li.names[2], "q");
    assert_int_equal(sh_delete(st, "c"), WR_OK);
    assert_int_equal(sh_delete(st, "c"), WR_ENOTFOUND);

    /* secret: first writer wins */
    uint8_t s1[32], s2[32];
    memset(s1, 1, sizeof s1);
    memset(s2, 2, sizeof s2);
    sh_res_t sr;
    sh_secret(st, s1, sizeof s1, &sr);
    sh_secret(st, s2, sizeof s2, &sr);
    assert_int_equal(sr.secret_len, 32);
    assert_memory_equal(sr.secret, s1, 32);
    wr_store_close(st);
    sh_loop_free();
}

/* Answers keep their config even when the queue is deleted before the
 * callback runs. */
static void test_config_outlives_queue(void **state)
{
    struct event_base *base = sh_loop_new();
    wr_store_t *st;
    assert_int_equal(wr_store_memory_open(base, NULL, &st), WR_OK);
    put_cfg(st, "q", 42, 0);
    sh_res_t r = {0}, d = {0};
    assert_int_equal(wr_store_join(st, "q", "u", sh_entry_cb, &r), WR_OK);
    assert_int_equal(wr_store_queue_delete(st, "q", sh_done_cb, &d), WR_OK);
    sh_wait_one(&d);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.cfg.admit_per_second, 42); /* read in the callback, ASan-clean */
    wr_store_close(st);
    sh_loop_free();
}

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wr_store_memory_XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
}

/* The snapshot file in tmpdir. */
static const char *snap_path(void)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/waitroom.snapshot", tmpdir);
    return p;
}

static void rm_tmpdir(void)
{
    char p[128];
    unlink(snap_path());
    snprintf(p, sizeof p, "%s/waitroom.lock", tmpdir);
    unlink(p);
    rmdir(tmpdir);
}

/* The store of a snapshot test (snap_setup): its loop, the store, and the
 * options it was opened with (kept for reopen). */
static struct {
    struct event_base *base;
    wr_store_t *st;
    wr_store_memory_opts_t o;
} sn;

/* A store with a snapshot directory: a new directory, a new loop, and the
 * store opened on it with the test clock at T0. A fixture: */
static int snap_setup(void **state)
{
    (void)state;
    make_tmpdir();
    sn.base = sh_loop_new();
    memset(&sn.o, 0, sizeof sn.o);
    sn.o.data_dir = tmpdir;
    sn.o.test_clock_start_us = T0;
    assert_int_equal(wr_store_memory_open(sn.base, &sn.o, &sn.st), WR_OK);
    return 0;
}

/* A restart: sn.st closed (its snapshot written) and opened again with
 * sn.o. */
static void reopen(void)
{
    wr_store_close(sn.st);
    assert_int_equal(wr_store_memory_open(sn.base, &sn.o, &sn.st), WR_OK);
}

/* The store st closed, the loop freed, the directory removed. */
static void snap_end(wr_store_t *st)
{
    wr_store_close(st);
    sh_loop_free();
    rm_tmpdir();
}

/* The end of snap_setup (a fixture). */
static int snap_teardown(void **state)
{
    (void)state;
    snap_end(sn.st);
    return 0;
}

static void test_snapshot_round_trip(void **state)
{
    (void)state;
    put_cfg(sn.st, "shop", 10, 0);
    put_cfg(sn.st, "empty", 3.5, 7);
    /* K34: an opensAt in seconds, as configs stored before the API refused
     * it hold, is snapshotted and loads back as it was */
    wr_queue_config_t legacy = cfg_rate(2);
    legacy.opens_at_ms = 1764460800;
    assert_int_equal(sh_put(sn.st, "legacy", &legacy), WR_OK);
    const char *users[] = {"u-a", "u-b", "u-c", "u-d", "u-e"};
    for (int i = 0; i < 5; i++) {
        join(sn.st, "shop", users[i]);
        sn.st->ops->debug_advance_time(sn.st, 10);
    }
    sn.st->ops->debug_advance_time(sn.st, WR_ADMIT_DELAY_US + 1000); /* all due (queue.h) */
    sh_res_t a;
    assert_int_equal(sh_admit(sn.st, "shop", &a), WR_OK); /* admits u-a */
    assert_int_equal(a.admit.admitted, 1);
    sh_leave(sn.st, "shop", "u-c");
    sh_res_t adm = status(sn.st, "shop", "u-a");
    assert_int_equal(adm.entry.state, WR_ENTRY_ADMITTED);
    uint8_t sec[40];
    memset(sec, 0xAB, sizeof sec);
    sh_res_t sr;
    sh_secret(sn.st, sec, sizeof sec, &sr);

    /* Reopen (the snapshot written) with a clock one hour EARLIER: a
     * newcomer still goes last. */
    sn.o.test_clock_start_us = T0 - 3600 * 1000000LL;
    reopen();
    sh_res_t g = get(sn.st, "shop");
    assert_int_equal(g.err, WR_OK);
    sh_expect_stats(&g.stats, SH_ST(waiting, 3), SH_ST(active, 1), SH_ST(admitted_total, 1),
                    SH_ST(left_total, 1));
    assert_int_equal(g.cfg.admit_per_second, 10);
    g = get(sn.st, "empty");
    assert_int_equal(g.cfg.admit_per_second, 3.5);
    assert_int_equal(g.cfg.max_queue_size, 7);
    g = get(sn.st, "legacy");
    assert_int_equal(g.err, WR_OK);
    assert_int_equal(g.cfg.opens_at_ms, 1764460800);
    assert_int_equal(status(sn.st, "shop", "u-b").entry.position, 1);
    assert_int_equal(status(sn.st, "shop", "u-d").entry.position, 2);
    assert_int_equal(status(sn.st, "shop", "u-e").entry.position, 3);
    assert_int_equal(status(sn.st, "shop", "u-c").err, WR_ENOTINQUEUE);
    sh_res_t r = status(sn.st, "shop", "u-a");
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    assert_string_equal(r.entry.jti, adm.entry.jti);
    assert_int_equal(r.entry.issued_at_us, adm.entry.issued_at_us);
    assert_int_equal(r.entry.expires_at_us, adm.entry.expires_at_us);
    assert_int_equal(join(sn.st, "shop", "late").entry.position, 4);
    uint8_t other[32] = {0};
    sh_secret(sn.st, other, sizeof other, &sr);
    assert_int_equal(sr.secret_len, sizeof sec);
    assert_memory_equal(sr.secret, sec, sizeof sec);
    /* a second store on the same directory is refused */
    wr_store_t *st2 = NULL;
    assert_int_equal(wr_store_memory_open(sn.base, &sn.o, &st2), WR_EIO);
    assert_null(st2);
    /* explicit snapshot works too */
    assert_int_equal(wr_store_memory_snapshot(sn.st), WR_OK);
    wr_store_close(sn.st);
    /* the snapshot holds the token secret: readable by its owner only,
     * even over a leftover world-readable file and under umask 0 */
    const char *p = snap_path();
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    char t[600];
    snprintf(t, sizeof t, "%s/.waitroom.snapshot.tmp", tmpdir);
    FILE *f = fopen(t, "wb");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(chmod(t, 0644), 0);
    mode_t old = umask(0);
    assert_int_equal(wr_store_memory_open(sn.base, &sn.o, &sn.st), WR_OK);
    assert_int_equal(wr_store_memory_snapshot(sn.st), WR_OK);
    wr_store_close(sn.st);
    sn.st = NULL; /* closed: snap_teardown has only the loop and the directory */
    umask(old);
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
}

/* API 1.2: a clock that steps backwards never stops admission, also
 * across a restart: a snapshot written at T0 + 1 h (its last tick, arrival
 * scores and tokens an hour ahead) loaded under a clock at T0. Admission
 * goes on at once at the configured rate (10/s at 100 ms ticks: one per
 * tick), in line order, and a newcomer joins behind everyone. */
static void test_snapshot_clock_stepped_back(void **state)
{
    (void)state;
    make_tmpdir();
    struct event_base *base = sh_loop_new();
    wr_store_t *st;
    const int64_t hour = 3600 * 1000000LL;
    wr_store_memory_opts_t o = {.data_dir = tmpdir, .test_clock_start_us = T0 + hour};
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);
    put_cfg(st, "shop", 10, 0);
    const char *users[] = {"u-a", "u-b", "u-c", "u-d", "u-e"};
    for (int i = 0; i < 5; i++) {
        join(st, "shop", users[i]);
        st->ops->debug_advance_time(st, 10);
    }
    st->ops->debug_advance_time(st, WR_ADMIT_DELAY_US + 1000);
    sh_res_t a;
    assert_int_equal(sh_admit(st, "shop", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1); /* u-a; last tick = T0 + 1 h */
    wr_store_close(st);

    o.test_clock_start_us = T0; /* an hour back */
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);
    assert_int_equal(join(st, "shop", "late").entry.position, 5);
    uint64_t total = 0;
    const char *order[] = {"u-b", "u-c", "u-d", "u-e"};
    for (int t = 0; t < 4; t++) {
        st->ops->debug_advance_time(st, 100000); /* the next 100 ms tick */
        assert_int_equal(sh_admit(st, "shop", &a), WR_OK);
        assert_int_equal(a.admit.admitted, 1);
        total += a.admit.admitted;
        assert_int_equal(status(st, "shop", order[t]).entry.state, WR_ENTRY_ADMITTED);
        if (t < 3)
            assert_int_equal(status(st, "shop", order[t + 1]).entry.position, 1);
    }
    assert_int_equal(total, 4);
    assert_int_equal(status(st, "shop", "late").entry.position, 1);
    st->ops->debug_advance_time(st, 100000);
    assert_int_equal(sh_admit(st, "shop", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 1);
    assert_int_equal(status(st, "shop", "late").entry.state, WR_ENTRY_ADMITTED);
    snap_end(st);
}

static void write_snapshot_with(void (*mangle)(const char *path))
{
    const char *p = snap_path();
    unlink(p); /* start empty */
    struct event_base *base = sh_loop_new();
    wr_store_t *st;
    wr_store_memory_opts_t o = {.data_dir = tmpdir, .test_clock_start_us = T0};
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);
    put_cfg(st, "q", 10, 0);
    join(st, "q", "someone");
    wr_store_close(st);
    mangle(p);
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_EIO);
    sh_loop_free();
}

static void flip_byte(const char *path)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 30, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 30, SEEK_SET);
    fputc(c ^ 0x01, f);
    fclose(f);
}

/* A byte of the user id "someone": still well-formed, only the checksum
 * can tell (the file ends with the id, its last-seen record of version 3 -
 * u32 age, u8 flags -, the token count, the session part of version 2 -
 * released, lapsed, session count -, the burn count of version 2,
 * abandoned of version 3, the pre-queue count of version 4, the 24
 * bytes of version 5 - returned, held and back counts -, the 16 bytes of
 * version 6 - stock left, sold-out time -, the 16 of version 7 - the
 * unseen-expiry count, the unseen pass count -, the bypass count of
 * version 9, the 25 bytes of version 12 - no group, the carried share,
 * the removed groups' admissions, the code count -, the 9 bytes of version 10 - the subscription
 * count, the closing pushed -, the 37 of version 8 - the log key and the log count - and the
 * 32-byte sum). */
static void flip_id_byte(const char *path)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    long off = (long)sb.st_size - 32 - 37 - 9 - 25 - 8 - 16 - 16 - 24 - 8 - 8 - 8 - 24 - 8 - 5 - 3;
    fseek(f, off, SEEK_SET);
    int c = fgetc(f);
    assert_int_equal(c, 'o'); /* "someone"[4] */
    fseek(f, off, SEEK_SET);
    fputc('x', f);
    fclose(f);
}

static void truncate_file(const char *path)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(truncate(path, sb.st_size - 40), 0);
}

static void garbage(const char *path)
{
    FILE *f = fopen(path, "wb");
    fputs("this is not a snapshot at all, just some text\n", f);
    fclose(f);
}

static void append_byte(const char *path)
{
    FILE *f = fopen(path, "ab");
    fputc('x', f);
    fclose(f);
}

static void test_corrupt_snapshots(void **state)
{
    make_tmpdir();
    write_snapshot_with(flip_byte);
    write_snapshot_with(flip_id_byte);
    write_snapshot_with(truncate_file);
    write_snapshot_with(garbage);
    write_snapshot_with(append_byte);
    rm_tmpdir();
}

/* Sessions survive a restart: the open ones (jti, end) and the counters. */
static void test_snapshot_sessions(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(100);
    c.session_seconds = 600;
    assert_int_equal(sh_put(sn.st, "s", &c), WR_OK);
    join(sn.st, "s", "u1");
    join(sn.st, "s", "u2");
    join(sn.st, "s", "u3");
    sn.st->ops->debug_advance_time(sn.st, WR_ADMIT_DELAY_US + 1000); /* all due (queue.h) */
    sh_res_t a, r;
    assert_int_equal(sh_admit(sn.st, "s", &a), WR_OK);
    assert_int_equal(a.admit.admitted, 3);
    char j[3][WR_JTI_LEN + 1];
    for (int i = 0; i < 3; i++) {
        char u[4] = {'u', (char)('1' + i), 0};
        sh_res_t e = status(sn.st, "s", u);
        assert_int_equal(e.entry.state, WR_ENTRY_ADMITTED);
        memcpy(j[i], e.entry.jti, sizeof j[i]);
    }
    assert_int_equal(sh_consume(sn.st, "s", "u1", j[0], &r), WR_OK);
    assert_int_equal(sh_consume(sn.st, "s", "u2", j[1], &r), WR_OK);
    assert_int_equal(sh_release(sn.st, "s", "u2", j[1], &r), WR_OK);
    c.session_seconds = 1;
    assert_int_equal(sh_put(sn.st, "s", &c), WR_OK);
    assert_int_equal(sh_consume(sn.st, "s", "u3", j[2], &r), WR_OK);
    sn.st->ops->debug_advance_time(sn.st, 2000000);
    sh_res_t g = get(sn.st, "s");
    sh_expect_stats(&g.stats, SH_ST(sessions, 1), SH_ST(sessions_expired_total, 1));

    sn.o.test_clock_start_us = T0 + 3000000;
    reopen();
    g = get(sn.st, "s");
    assert_int_equal(g.err, WR_OK);
    sh_expect_stats(&g.stats, SH_ST(active, 1), SH_ST(sessions, 1), SH_ST(released_total, 1),
                    SH_ST(sessions_expired_total, 1), SH_ST(consumed_total, 3));
    assert_int_equal(sh_verify(sn.st, "s", "u1", j[0], &r), WR_OK);
    assert_int_equal(sh_release(sn.st, "s", "u2", j[1], &r), WR_ETOKEN);
    assert_int_equal(sh_release(sn.st, "s", "u1", j[0], &r), WR_OK);
    g = get(sn.st, "s");
    sh_expect_stats(&g.stats, SH_ST(active, 0), SH_ST(released_total, 2));
}

/* The n bytes at p are all fill. */
static void assert_filled(const unsigned char *p, size_t n, unsigned char fill)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(p[i], fill);
}

/* Drops the n zero bytes of a queue's part that stand keep bytes before
 * its 37 bytes of public logs at buf + *logs (a part a later version
 * added, before the keep bytes of the queue's last parts). */
static void drop_before_logs(unsigned char *buf, size_t *body, size_t *logs, size_t n, size_t keep)
{
    assert_filled(buf + *logs - keep - n, n, 0);
    memmove(buf + *logs - keep - n, buf + *logs - keep, keep + 37);
    *body -= n;
    *logs -= n;
}

/* Rewrites the snapshot at path (one queue without groups, the users
 * "someone" and "other" in line, no tokens, no sessions, no burns) as
 * version `version` (1, 2, 4..11): every part a later version added
 * dropped. */
static void to_version(const char *path, unsigned version)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static unsigned char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 32 + 32 + 8 + 8 && n < sizeof buf);
    size_t body = n - 32, logs = body - 37;
    /* version 12: the queue's groups part (no group, the carried share,
     * the removed groups' admissions, the code count: 25 zero bytes),
     * right before its push part (9) */
    drop_before_logs(buf, &body, &logs, 25, 9);
    /* version 11 added a join leaf index to each unseen pass: none here */
    if (version == 11 || version == 10)
        goto sum;
    /* version 10 next: the queue's push part (the subscription count and
     * the closing pushed: 9 zero bytes), the last of its part, right
     * before the public logs */
    drop_before_logs(buf, &body, &logs, 9, 0);
    if (version == 9)
        goto sum;
    /* version 9: the queue's bypass count (8 bytes, 0), then the last of
     * its part */
    drop_before_logs(buf, &body, &logs, 8, 0);
    if (version == 8)
        goto sum;
    /* the parts right before the sum, last first: each is len bytes of
     * fill, dropped for a version before the one that added it */
    static const struct {
        unsigned added;
        size_t len;
        unsigned char fill;
    } tail[] = {
        {8, 37, 0},    /* the public logs (no log key, a zero key, no log) */
        {7, 16, 0},    /* the unseen-expiry counter and unseen pass count */
        {6, 16, 0xff}, /* stock left and the sold-out time (-1: no stock) */
        {5, 24, 0},    /* returned, the held and back counts */
    };
    for (size_t k = 0; k < sizeof tail / sizeof tail[0]; k++) {
        body -= tail[k].len;
        assert_filled(buf + body, tail[k].len, tail[k].fill);
        if (version == tail[k].added - 1)
            goto sum;
    }
    /* version 4: the pre-queue count (8 bytes) before the sum, and the
     * 25-byte opening part after the counters */
    body -= 8;
    assert_filled(buf + body, 8, 0);
    /* the config's JSON: the first object in the file, as long as jansson
     * reads it (whatever fields later versions add after preQueueShuffle) */
    unsigned char *cfg = memchr(buf, '{', body);
    assert_non_null(cfg);
    json_error_t jerr;
    json_t *cj =
        json_loadb((const char *)cfg, body - (size_t)(cfg - buf), JSON_DISABLE_EOF_CHECK, &jerr);
    assert_non_null(cj);
    assert_non_null(json_object_get(cj, "preQueueShuffle"));
    json_decref(cj);
    size_t op = (size_t)(cfg - buf) + (size_t)jerr.position + 9 * 8;
    assert_int_equal(buf[op], 0); /* no opening in progress */
    memmove(buf + op, buf + op + 25, body - op - 25);
    body -= 25;
    /* version 3: abandoned (8 bytes) before the sum; then the 5-byte
     * last-seen record after each id in line */
    body -= 8;
    static const char *const ids[] = {"someone", "other"};
    for (int k = 0; k < 2; k++) {
        unsigned char *at = memmem(buf, body, ids[k], strlen(ids[k]));
        assert_non_null(at);
        size_t from = (size_t)(at - buf) + strlen(ids[k]);
        memmove(buf + from, buf + from + 5, body - from - 5);
        body -= 5;
    }
    if (version == 1) {
        /* no sessions, no burns: drop the 24-byte session part and the
         * 8-byte burn count */
        assert_filled(buf + body - 32, 32, 0);
        body -= 32;
    }
sum:
    buf[8] = (unsigned char)version; /* u32 version, little-endian */
    unsigned int dlen = 0;
    assert_int_equal(EVP_Digest(buf, body, buf + body, &dlen, EVP_sha256(), NULL), 1);
    assert_int_equal(dlen, 32);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, body + 32, f), body + 32);
    fclose(f);
}

/* Version 1 (before sessions), 2 (before the idle part), 4 (before the
 * held people), 5 (before the stock), 6 (before the unseen passes), 7
 * (before the public logs), 8 (before the bypass counts), 9 (before
 * the push subscriptions), 10 (before the unseen passes' join leaves)
 * and 11 (before the priority groups) snapshots still load; their people
 * in line count as seen at the load. */
static void test_snapshot_old_versions_load(void **state)
{
    (void)state;
    static const unsigned versions[] = {1, 2, 4, 5, 6, 7, 8, 9, 10, 11};
    for (size_t vi = 0; vi < sizeof versions / sizeof versions[0]; vi++) {
        unsigned version = versions[vi];
        snap_setup(NULL);
        const char *p = snap_path();
        put_cfg(sn.st, "q", 10, 0);
        join(sn.st, "q", "someone");
        join(sn.st, "q", "other");
        wr_store_close(sn.st);
        to_version(p, version);
        assert_int_equal(wr_store_memory_open(sn.base, &sn.o, &sn.st), WR_OK);
        sh_res_t g = get(sn.st, "q");
        assert_int_equal(g.err, WR_OK);
        sh_expect_stats(&g.stats, SH_ST(waiting, 2), SH_ST(sessions, 0), SH_ST(released_total, 0),
                        SH_ST(abandoned_total, 0), SH_ST(held, 0), SH_ST(returned_total, 0),
                        SH_ST(stock_left, -1), SH_ST(sold_out_at_ms, -1),
                        SH_ST(unseen_expired_total, 0), SH_ST(bypass_total, 0));
        assert_int_equal(status(sn.st, "q", "other").entry.position, 2);
        snap_teardown(NULL);
    }
}

/* Version 6 keeps what is left of the stock and the sold-out moment: a
 * restart neither restocks nor forgets the limit. */
static void test_snapshot_stock(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(1000);
    c.stock = 1;
    c.stock_set = true;
    assert_int_equal(sh_put(sn.st, "q", &c), WR_OK);
    join(sn.st, "q", "a");
    join(sn.st, "q", "b");
    assert_int_equal(sn.st->ops->debug_advance_time(sn.st, 1000000LL), WR_OK);
    sh_res_t r;
    assert_int_equal(sh_admit(sn.st, "q", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 1);
    sh_res_t a = status(sn.st, "q", "a");
    assert_int_equal(a.entry.state, WR_ENTRY_ADMITTED);
    assert_int_equal(sh_consume(sn.st, "q", "a", a.entry.jti, &r), WR_OK);
    sh_res_t g = get(sn.st, "q");
    assert_int_equal(g.stats.stock_left, 0);
    int64_t sold = g.stats.sold_out_at_ms;
    assert_true(sold > 0);
    reopen();
    g = get(sn.st, "q");
    sh_expect_stats(&g.stats, SH_ST(stock_left, 0), SH_ST(sold_out_at_ms, sold));
    sh_res_t b = status(sn.st, "q", "b");
    assert_int_equal(b.entry.state, WR_ENTRY_CLOSED);
    assert_int_equal(b.entry.closed_reason, WR_CLOSE_SOLD_OUT);
}

/* Version 9 keeps the bypass count (stats bypassTotal) across a restart. */
static void test_snapshot_bypass(void **state)
{
    (void)state;
    put_cfg(sn.st, "q", 10, 0);
    assert_int_equal(sh_bypass(sn.st, "q", 7), WR_OK);
    assert_int_equal(get(sn.st, "q").stats.bypass_total, 7);
    reopen();
    assert_int_equal(get(sn.st, "q").stats.bypass_total, 7);
}

/* join_group of u into group (NULL none) or with code (NULL none). */
static sh_res_t join_with(wr_store_t *st, const char *q, const char *u, const char *group,
                          const char *code)
{
    char h[WR_CODE_HASH_HEX + 1];
    if (code)
        assert_int_equal(wr_groups_code_hash(code, strlen(code), h), WR_OK);
    sh_res_t r;
    sh_join_group(st, q, u, group, code ? h : NULL, &r);
    return r;
}

/* Version 12 keeps the priority groups through the store (its forked
 * writer, its load): a group member's place in their group's line, a
 * code's remaining uses, the counts per group. */
static void test_snapshot_groups(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(10);
    snprintf(c.groups[0], sizeof c.groups[0], "fans");
    c.n_groups = 1;
    assert_int_equal(sh_put(sn.st, "q", &c), WR_OK);
    char hashes[1][WR_CODE_HASH_HEX + 1];
    assert_int_equal(wr_groups_code_hash("code-a", 6, hashes[0]), WR_OK);
    wr_store_codes_req_t req = {.kind = WR_CODES_CREATE,
                                .group = "fans",
                                .hashes = hashes,
                                .n = 1,
                                .uses = 2,
                                .expires_at_ms = -1};
    sh_res_t cr;
    assert_int_equal(sh_codes(sn.st, "q", &req, &cr), WR_OK);
    assert_int_equal(join(sn.st, "q", "s1").entry.position, 1);
    sh_res_t r = join_with(sn.st, "q", "f1", "fans", NULL);
    assert_int_equal(r.err, WR_OK);
    assert_string_equal(r.entry.group, "fans");
    r = join_with(sn.st, "q", "f2", NULL, "code-a");
    assert_int_equal(r.err, WR_OK);
    assert_int_equal(r.entry.position, 2);

    reopen();
    r = status(sn.st, "q", "f2");
    assert_int_equal(r.entry.position, 2);
    assert_string_equal(r.entry.group, "fans");
    assert_int_equal(status(sn.st, "q", "f1").entry.position, 1);
    assert_int_equal(status(sn.st, "q", "s1").entry.position, 1);
    req = (wr_store_codes_req_t){.kind = WR_CODES_LIST};
    assert_int_equal(sh_codes(sn.st, "q", &req, &cr), WR_OK);
    assert_int_equal(cr.codes.n, 1);
    assert_int_equal(cr.codes.groups[0].issued, 1);
    assert_int_equal(cr.codes.groups[0].uses_spent, 1);
    /* the code's one use left, then none */
    r = join_with(sn.st, "q", "f3", NULL, "code-a");
    assert_int_equal(r.err, WR_OK);
    assert_int_equal(r.entry.position, 3);
    r = join_with(sn.st, "q", "f4", NULL, "code-a");
    assert_int_equal(r.err, WR_ECODE);
    assert_int_equal(r.entry.code_reason, WR_CODE_USED_UP);
}

/* Version 7 keeps which live passes no answer carried yet, and the
 * unseen-expiry count: after a restart an unseen pass that expires still
 * holds its holder, a seen one is gone as ever. */
static void test_snapshot_unseen(void **state)
{
    (void)state;
    wr_queue_config_t c = cfg_rate(1000);
    c.token_ttl_seconds = 2;
    assert_int_equal(sh_put(sn.st, "q", &c), WR_OK);
    const char *users[] = {"old", "seen", "unseen"};
    join(sn.st, "q", users[0]);
    assert_int_equal(sn.st->ops->debug_advance_time(sn.st, 1000000LL), WR_OK);
    sh_res_t r;
    assert_int_equal(sh_admit(sn.st, "q", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 1); /* "old": expires unseen before the restart */
    join(sn.st, "q", users[1]);
    join(sn.st, "q", users[2]);
    assert_int_equal(sn.st->ops->debug_advance_time(sn.st, 1500000LL), WR_OK);
    assert_int_equal(sh_admit(sn.st, "q", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 2);
    assert_int_equal(status(sn.st, "q", "seen").entry.state, WR_ENTRY_ADMITTED);
    assert_int_equal(sn.st->ops->debug_advance_time(sn.st, 600000LL), WR_OK);
    assert_int_equal(sh_admit(sn.st, "q", &r), WR_OK);
    sh_expect_stats(&r.admit.stats, SH_ST(unseen_expired_total, 1), SH_ST(held, 1));
    sn.o.test_clock_start_us = T0 + 3100000; /* the clock went on meanwhile */
    reopen();
    sh_res_t g = get(sn.st, "q");
    sh_expect_stats(&g.stats, SH_ST(unseen_expired_total, 1), SH_ST(active, 2));
    assert_int_equal(sn.st->ops->debug_advance_time(sn.st, 2000000LL), WR_OK);
    assert_int_equal(sh_admit(sn.st, "q", &r), WR_OK);
    sh_expect_stats(&r.admit.stats, SH_ST(expired_total, 3), SH_ST(unseen_expired_total, 2),
                    SH_ST(held, 2)); /* "old" and "unseen" */
    assert_true(status(sn.st, "q", "unseen").entry.held);
    assert_int_equal(status(sn.st, "q", "seen").err, WR_ENOTINQUEUE);
}

/* Version 3 keeps last-seen ages and pending page joins; the time the
 * store was down does not count as idle. */
static void test_snapshot_idle(void **state)
{
    (void)state;
    put_cfg(sn.st, "q", 10, 0); /* idleTimeoutSeconds: the default, 120 */
    sh_res_t r;
    assert_int_equal(sh_join_page(sn.st, "q", "scanner", &r), WR_OK);
    join(sn.st, "q", "person");
    assert_int_equal(sn.st->ops->debug_advance_time(sn.st, 100 * 1000000LL), WR_OK);
    status(sn.st, "q", "person"); /* seen at +100 s; scanner at 0 */
    reopen();                     /* the test clock starts at T0 again: 100 s "earlier" */
    assert_int_equal(sn.st->ops->debug_advance_time(sn.st, 30 * 1000000LL), WR_OK);
    /* the scanner was 100 s idle at the write: 130 s now; person 30 s */
    assert_int_equal(sh_admit(sn.st, "q", &r), WR_OK);
    assert_int_equal(r.admit.stats.abandoned_total, 1);
    assert_int_equal(r.admit.stats.waiting + r.admit.admitted, 1); /* person: maybe admitted */
    assert_int_equal(sh_status(sn.st, "q", "scanner", &r), WR_ENOTINQUEUE);
    reopen();
    assert_int_equal(get(sn.st, "q").stats.abandoned_total, 1);
}

static void test_snapshot_timer(void **state)
{
    make_tmpdir();
    struct event_base *base = sh_loop_new();
    wr_store_t *st;
    wr_store_memory_opts_t o = {.data_dir = tmpdir, .snapshot_interval_ms = 20};
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);
    const char *p = snap_path();
    assert_int_not_equal(access(p, F_OK), 0); /* nothing yet */
    put_cfg(st, "q", 10, 0);
    /* the 20 ms timer writes it; bounded wait (up to 5 s) */
    struct timeval tick = {0, 10000};
    for (int i = 0; i < 500 && access(p, F_OK) != 0; i++) {
        event_base_loopexit(base, &tick);
        event_base_dispatch(base);
    }
    assert_int_equal(access(p, F_OK), 0); /* renamed into place: complete */
    /* the file (written by the background child) loads, with the queue */
    wr_store_close(st); /* nothing changed since: no write of its own */
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);
    sh_res_t g = get(st, "q");
    assert_int_equal(g.err, WR_OK);
    assert_int_equal(g.cfg.admit_per_second, 10);
    snap_end(st);
}

/* Real clocks: many joins within the same microsecond still get distinct,
 * increasing scores, so positions follow arrival exactly. */
static void test_real_clock_fifo(void **state)
{
    struct event_base *base = sh_loop_new();
    wr_store_t *st;
    assert_int_equal(wr_store_memory_open(base, NULL, &st), WR_OK);
    put_cfg(st, "q", 1, 0);
    enum { N = 2000 };
    static sh_res_t r[N];
    char id[32];
    memset(r, 0, sizeof r);
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "user%d", i);
        assert_int_equal(wr_store_join(st, "q", id, sh_entry_cb, &r[i]), WR_OK);
    }
    sh_wait_one(&r[N - 1]);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].entry.position, (uint64_t)i + 1);
        entry_has_config(&r[i]);
    }
    sh_res_t s1 = status(st, "q", "user1234");
    assert_int_equal(s1.entry.position, 1235);
    assert_int_equal(s1.entry.waiting, N);
    wr_store_close(st);
    sh_loop_free();
}

/* ---- degraded mode: the burned set in the snapshot ---------------------- */

static wr_err_t burn(wr_store_t *st, const char *q, const char *jti, int64_t exp_us)
{
    sh_res_t r;
    sh_begin(&r);
    return sh_settle(&r, wr_store_burn(st, q, jti, exp_us, false, sh_token_cb, &r));
}

/* Burned passes survive a restart (snapshot version 2); expired ones are
 * swept after it. */
static void test_snapshot_burned(void **state)
{
    (void)state;
    put_cfg(sn.st, "shop", 10, 0);
    assert_int_equal(burn(sn.st, "shop", "AAAAAAAAAAAAAAAAAAAAAA", T0 + 60 * 1000000LL), WR_OK);
    assert_int_equal(burn(sn.st, "shop", "BBBBBBBBBBBBBBBBBBBBBB", T0 + 5 * 1000000LL), WR_OK);
    reopen();
    assert_int_equal(burn(sn.st, "shop", "AAAAAAAAAAAAAAAAAAAAAA", T0 + 60 * 1000000LL), WR_ETOKEN);
    assert_int_equal(burn(sn.st, "shop", "BBBBBBBBBBBBBBBBBBBBBB", T0 + 60 * 1000000LL), WR_ETOKEN);
    sn.st->ops->debug_advance_time(sn.st, 10 * 1000000LL);
    assert_int_equal(burn(sn.st, "shop", "BBBBBBBBBBBBBBBBBBBBBB", T0 + 60 * 1000000LL), WR_OK);
    assert_int_equal(burn(sn.st, "shop", "AAAAAAAAAAAAAAAAAAAAAA", T0 + 60 * 1000000LL), WR_ETOKEN);
}

static void put_le(unsigned char **p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        *(*p)++ = (unsigned char)(v >> (8 * i));
}

/* A version 1 snapshot (before the burned set) still loads. Built by hand
 * from the format in mem_snapshot.c. */
static void test_snapshot_v1_loads(void **state)
{
    (void)state;
    make_tmpdir();
    static unsigned char buf[4096];
    unsigned char *p = buf;
    const char *cfg = "{\"admitPerSecond\":7}";
    memcpy(p, "WRMEMSNP", 8);
    p += 8;
    put_le(&p, 1, 4);  /* version 1 */
    put_le(&p, T0, 8); /* written at */
    put_le(&p, 32, 4);
    memset(p, 0x42, 32);
    p += 32;
    put_le(&p, 1, 4); /* one queue */
    put_le(&p, 4, 1);
    memcpy(p, "shop", 4);
    p += 4;
    put_le(&p, strlen(cfg), 4);
    memcpy(p, cfg, strlen(cfg));
    p += strlen(cfg);
    put_le(&p, 1, 8);            /* version */
    put_le(&p, T0, 8);           /* last score */
    put_le(&p, (uint64_t)-1, 8); /* last tick */
    put_le(&p, 0, 8);            /* carry */
    for (int i = 0; i < 5; i++)
        put_le(&p, 0, 8); /* counters */
    put_le(&p, 1, 8);     /* one user waiting */
    put_le(&p, T0, 8);
    put_le(&p, 2, 1);
    memcpy(p, "u1", 2);
    p += 2;
    put_le(&p, 0, 8); /* no tokens */
    unsigned char md[32];
    SHA256(buf, (size_t)(p - buf), md);
    memcpy(p, md, 32);
    p += 32;
    const char *path = snap_path();
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, (size_t)(p - buf), f), (size_t)(p - buf));
    fclose(f);

    struct event_base *base = sh_loop_new();
    wr_store_t *st;
    wr_store_memory_opts_t o = {.data_dir = tmpdir, .test_clock_start_us = T0 + 1000};
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);
    sh_res_t g = get(st, "shop");
    assert_int_equal(g.err, WR_OK);
    assert_int_equal(g.cfg.admit_per_second, 7);
    assert_int_equal(status(st, "shop", "u1").entry.position, 1);
    assert_int_equal(burn(st, "shop", "AAAAAAAAAAAAAAAAAAAAAA", T0 + 60 * 1000000LL), WR_OK);
    wr_store_close(st); /* rewritten as version 3 */
    assert_int_equal(wr_store_memory_open(base, &o, &st), WR_OK);
    assert_int_equal(status(st, "shop", "u1").entry.position, 1);
    assert_int_equal(burn(st, "shop", "AAAAAAAAAAAAAAAAAAAAAA", T0 + 60 * 1000000LL), WR_ETOKEN);
    snap_end(st);
}

#define TESTS(X)                                                                                   \
    X(test_async_contract)                                                                         \
    X(test_close_inside_callback)                                                                  \
    X(test_semantics)                                                                              \
    X(test_config_outlives_queue)                                                                  \
    X(test_snapshot_round_trip, snap_setup, snap_teardown)                                         \
    X(test_corrupt_snapshots)                                                                      \
    X(test_snapshot_sessions, snap_setup, snap_teardown)                                           \
    X(test_snapshot_old_versions_load)                                                             \
    X(test_snapshot_stock, snap_setup, snap_teardown)                                              \
    X(test_snapshot_unseen, snap_setup, snap_teardown)                                             \
    X(test_snapshot_bypass, snap_setup, snap_teardown)                                             \
    X(test_snapshot_groups, snap_setup, snap_teardown)                                             \
    X(test_snapshot_idle, snap_setup, snap_teardown)                                               \
    X(test_snapshot_timer)                                                                         \
    X(test_real_clock_fifo)                                                                        \
    X(test_snapshot_burned, snap_setup, snap_teardown)                                             \
    X(test_snapshot_v1_loads)                                                                      \
    X(test_snapshot_clock_stepped_back)
WR_UNIT_MAIN(NULL, NULL, TESTS)
