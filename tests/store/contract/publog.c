/*
 * publog.c - the store contract, the public log (1.3; store.h log_key,
 * log_head, log_read, log_publish, log_unsigned): a log only while
 * publicLog is on; leaves appended with the changes they log (a page join
 * that never counts: none); receipts; the key's first writer wins; a
 * checkpoint kept only when it extends the last one with the right root;
 * the log outlives its queue and a queue created again continues it; read
 * bounds. A backend that keeps no log (the ops NULL) skips these. Run by
 * runner.c against every backend of the store registry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/tlog.h"
#include "contract.h"
#include "core/logleaf.h"

void lg_cb(wr_err_t err, const wr_log_answer_t *a, void *arg)
{
    lres_t *l = arg;
    sh_note(&l->r, err);
    if (!a)
        return;
    l->a = *a;
    if (a->leaves && a->leaves_len < sizeof l->leaves) {
        memcpy(l->leaves, a->leaves, a->leaves_len);
        l->leaves[a->leaves_len] = '\0';
    }
    if (a->checkpoint && a->checkpoint_len < sizeof l->cp)
        memcpy(l->cp, a->checkpoint, a->checkpoint_len);
    if (a->hashes)
        memcpy(l->hashes, a->hashes, a->n_hashes * 32);
    l->n_names = a->n_names;
    l->n_beacons = a->n_beacons;
    if (a->n_beacons > 0) {
        snprintf(l->beacon_queue, sizeof l->beacon_queue, "%s", a->beacon_queues[0]);
        snprintf(l->beacon_url, sizeof l->beacon_url, "%s", a->beacon_urls[0]);
        l->beacon_round = a->beacon_rounds[0];
    }
    l->a.leaves = l->a.checkpoint = NULL;
    l->a.hashes = NULL;
    l->a.names = NULL;
    l->a.beacon_queues = l->a.beacon_urls = NULL;
    l->a.beacon_rounds = NULL;
}

wr_err_t lg_head(wr_store_t *s, const char *q, lres_t *l)
{
    memset(l, 0, sizeof *l);
    sh_begin(&l->r);
    return sh_settle(&l->r, wr_store_log_head(s, q, lg_cb, l));
}

wr_err_t lg_read(wr_store_t *s, const char *q, const wr_log_read_t *req, lres_t *l)
{
    memset(l, 0, sizeof *l);
    sh_begin(&l->r);
    return sh_settle(&l->r, wr_store_log_read(s, q, req, lg_cb, l));
}

/* The test's store; the test is skipped on a backend without a public
 * log (wr_store_has_log). */
static wr_store_t *log_store(void **state)
{
    wr_store_t *s = *state;
    if (!wr_store_has_log(s))
        skip();
    return s;
}

static void put_log(wr_store_t *s, const char *q, bool on)
{
    wr_queue_config_t c = mkcfg(5, 100, 0, 0, 300);
    c.paused = true;
    c.public_log = on;
    put_ok(s, q, c);
}

/* The kinds of q's leaves [0, n), one letter each (j, a, l, w, c, d). */
static void kinds(wr_store_t *s, const char *q, uint64_t n, char *out)
{
    wr_log_read_t req = {.start = 0, .end = n};
    lres_t l;
    assert_int_equal(lg_read(s, q, &req, &l), WR_OK);
    size_t k = 0;
    for (char *p = l.leaves; *p; k++) {
        char *nl = strchr(p, '\n');
        assert_non_null(nl);
        wr_logleaf_t leaf;
        assert_int_equal(wr_logleaf_parse(p, (size_t)(nl - p), &leaf, NULL, 0), WR_OK);
        static const char letter[] = {
            [WR_LOGLEAF_JOIN] = 'j',    [WR_LOGLEAF_ADMIT] = 'a',  [WR_LOGLEAF_LEAVE] = 'l',
            [WR_LOGLEAF_AWAY] = 'w',    [WR_LOGLEAF_COMMIT] = 'c', [WR_LOGLEAF_DRAW] = 'd',
            [WR_LOGLEAF_FAILOPEN] = 'f'};
        out[k] = letter[leaf.e];
        p = nl + 1;
    }
    out[k] = '\0';
    assert_int_equal(k, n);
}

static void t_log_only_with_public_log(void **state)
{
    wr_store_t *s = log_store(state);
    lres_t l;
    put_log(s, "p", false);
    memset(&l, 0, sizeof l);
    assert_int_equal(lg_head(s, "p", &l), WR_ENOTFOUND);
    assert_int_equal(lg_head(s, "nosuch", &l), WR_ENOTFOUND);
    put_log(s, "p", true);
    assert_int_equal(lg_head(s, "p", &l), WR_OK);
    assert_int_equal(l.a.size, 0);
    assert_true(l.a.enabled);
    uint8_t empty[32];
    wr_tlog_empty_root(empty);
    assert_memory_equal(l.a.root, empty, 32);
    assert_null(l.a.checkpoint);
}

/* Joins, a page join that never counts, a leave, an admission: leaves in
 * the order applied; receipts for people in line. */
static void t_log_follows_changes(void **state)
{
    wr_store_t *s = log_store(state);
    put_log(s, "q", true);
    sh_res_t r;
    assert_int_equal(sh_join(s, "q", "u1", &r), WR_OK);
    assert_true(r.entry.has_receipt);
    assert_int_equal(r.entry.receipt_index, 0);
    char u1[33];
    memcpy(u1, r.entry.receipt_u, sizeof u1);
    assert_int_equal(sh_join_page(s, "q", "page", &r), WR_OK);
    assert_false(r.entry.has_receipt);
    assert_int_equal(sh_join(s, "q", "u2", &r), WR_OK);
    assert_int_equal(r.entry.receipt_index, 1);
    assert_string_not_equal(r.entry.receipt_u, u1);
    assert_int_equal(sh_status(s, "q", "u1", &r), WR_OK);
    assert_true(r.entry.has_receipt);
    assert_string_equal(r.entry.receipt_u, u1);
    assert_int_equal(sh_leave(s, "q", "u2"), WR_OK);
    wr_queue_config_t c = mkcfg(1000, 100, 0, 0, 300);
    c.public_log = true;
    put_ok(s, "q", c);
    pass_us(s, 2000000);
    assert_int_equal(sh_admit(s, "q", &r), WR_OK);
    assert_int_equal(r.admit.admitted, 1); /* u1 (the page join is passed over) */
    lres_t l;
    assert_int_equal(lg_head(s, "q", &l), WR_OK);
    assert_int_equal(l.a.size, 4);
    char k[8];
    kinds(s, "q", 4, k);
    assert_string_equal(k, "jjla");
    assert_int_equal(sh_status(s, "q", "u1", &r), WR_OK);
    assert_int_equal(r.entry.state, WR_ENTRY_ADMITTED);
    assert_false(r.entry.has_receipt);
}

static void t_log_key_first_writer(void **state)
{
    wr_store_t *s = log_store(state);
    uint8_t a[32], b[32];
    memset(a, 1, 32);
    memset(b, 2, 32);
    /* no callback: WR_EINVAL before any work (store.h): b is not kept */
    assert_int_equal(wr_store_log_key(s, b, NULL, NULL), WR_EINVAL);
    lres_t l;
    memset(&l, 0, sizeof l);
    sh_begin(&l.r);
    assert_int_equal(sh_settle(&l.r, wr_store_log_key(s, a, lg_cb, &l)), WR_OK);
    assert_memory_equal(l.a.key, a, 32);
    memset(&l, 0, sizeof l);
    sh_begin(&l.r);
    assert_int_equal(sh_settle(&l.r, wr_store_log_key(s, b, lg_cb, &l)), WR_OK);
    assert_memory_equal(l.a.key, a, 32);
}

static wr_err_t publish(wr_store_t *s, const char *q, uint64_t size, const uint8_t root[32],
                        lres_t *l)
{
    static const char note[] = "a checkpoint\n";
    memset(l, 0, sizeof *l);
    sh_begin(&l->r);
    return sh_settle(&l->r,
                     wr_store_log_publish(s, q, size, root, note, sizeof note - 1, lg_cb, l));
}

size_t lg_unsigned(wr_store_t *s, lres_t *l)
{
    memset(l, 0, sizeof *l);
    sh_begin(&l->r);
    assert_int_equal(sh_settle(&l->r, wr_store_log_unsigned(s, lg_cb, l)), WR_OK);
    return l->n_names;
}

static size_t unsigned_logs(wr_store_t *s)
{
    lres_t l;
    return lg_unsigned(s, &l);
}

/* A checkpoint is kept only at the right root and never for fewer leaves;
 * log_unsigned names a log until its checkpoint covers it. */
static void t_log_publish_rules(void **state)
{
    wr_store_t *s = log_store(state);
    put_log(s, "c", true);
    assert_int_equal(unsigned_logs(s), 1);
    join_n(s, "c", 1, 3);
    lres_t h, l;
    assert_int_equal(lg_head(s, "c", &h), WR_OK);
    assert_int_equal(h.a.size, 3);
    uint8_t wrong[32];
    memcpy(wrong, h.a.root, 32);
    wrong[0] ^= 1;
    assert_int_equal(publish(s, "c", 3, wrong, &l), WR_EINVAL);
    assert_int_equal(publish(s, "c", 4, h.a.root, &l), WR_EINVAL);
    /* no callback: WR_EINVAL before any work, nothing kept */
    assert_int_equal(wr_store_log_publish(s, "c", 3, h.a.root, "x\n", 2, NULL, NULL), WR_EINVAL);
    assert_int_equal(lg_head(s, "c", &l), WR_OK);
    assert_null(l.a.checkpoint);
    assert_int_equal(unsigned_logs(s), 1);
    assert_int_equal(publish(s, "c", 3, h.a.root, &l), WR_OK);
    assert_int_equal(l.a.checkpoint_size, 3);
    assert_memory_equal(l.cp, "a checkpoint\n", 13);
    assert_int_equal(unsigned_logs(s), 0);
    /* the root of 2 leaves is right, but 2 < 3 */
    wr_log_read_t req = {.start = 0, .end = 0, .n_nodes = 1, .level = {1}, .index = {0}};
    assert_int_equal(lg_read(s, "c", &req, &l), WR_OK);
    assert_int_equal(publish(s, "c", 2, l.hashes[0], &l), WR_EINVAL);
    assert_int_equal(lg_head(s, "c", &h), WR_OK);
    assert_int_equal(h.a.checkpoint_size, 3);
    assert_false(h.a.broken || h.a.forked);
    join_n(s, "c", 4, 4);
    assert_int_equal(unsigned_logs(s), 1);
}

/* Read bounds: past the log, backwards, more than 1,000 leaves. */
static void t_log_read_bounds(void **state)
{
    wr_store_t *s = log_store(state);
    put_log(s, "b", true);
    join_n(s, "b", 1, 2);
    lres_t l;
    wr_log_read_t req = {.start = 0, .end = 3};
    memset(&l, 0, sizeof l);
    sh_begin(&l.r);
    assert_int_equal(sh_settle(&l.r, wr_store_log_read(s, "b", &req, lg_cb, &l)), WR_EINVAL);
    req = (wr_log_read_t){.start = 2, .end = 1};
    sh_begin(&l.r);
    assert_int_equal(sh_settle(&l.r, wr_store_log_read(s, "b", &req, lg_cb, &l)), WR_EINVAL);
    req = (wr_log_read_t){.start = 0, .end = 2, .n_nodes = 1, .level = {0}, .index = {2}};
    sh_begin(&l.r);
    assert_int_equal(sh_settle(&l.r, wr_store_log_read(s, "b", &req, lg_cb, &l)), WR_EINVAL);
    req = (wr_log_read_t){.start = 1, .end = 2, .n_nodes = 1, .level = {0}, .index = {1}};
    assert_int_equal(lg_read(s, "b", &req, &l), WR_OK);
    assert_int_equal(l.a.n_hashes, 1);
    assert_true(strchr(l.leaves, '\n') == l.leaves + strlen(l.leaves) - 1);
}

/* queue_delete: a removed leave for everyone in line; the log stays and a
 * queue created again continues it. */
static void t_log_outlives_queue(void **state)
{
    wr_store_t *s = log_store(state);
    put_log(s, "d", true);
    join_n(s, "d", 1, 2);
    assert_int_equal(sh_delete(s, "d"), WR_OK);
    lres_t l;
    assert_int_equal(lg_head(s, "d", &l), WR_OK);
    assert_false(l.a.enabled);
    assert_int_equal(l.a.size, 4);
    char k[8];
    kinds(s, "d", 4, k);
    assert_string_equal(k, "jjll");
    put_log(s, "d", true);
    sh_res_t r;
    assert_int_equal(sh_join(s, "d", "u9", &r), WR_OK);
    assert_int_equal(r.entry.receipt_index, 4);
}

/* The leaf hash of q's leaf index (RFC 9162), from its bytes read back. */
static void leaf_hash_of(wr_store_t *s, const char *q, uint64_t index, uint8_t out[32])
{
    wr_log_read_t req = {.start = index, .end = index + 1};
    lres_t l;
    assert_int_equal(lg_read(s, q, &req, &l), WR_OK);
    char *nl = strchr(l.leaves, '\n');
    assert_non_null(nl);
    wr_crypto_sha256_t *sha = wr_crypto_sha256_new();
    assert_non_null(sha);
    assert_int_equal(wr_tlog_leaf_hash(sha, l.leaves, (size_t)(nl - l.leaves), out), WR_OK);
    wr_crypto_sha256_free(sha);
}

/* r holds the receipt (index, u, the leaf hash of q's leaf index). */
static void expect_receipt(wr_store_t *s, const char *q, const sh_res_t *r, uint64_t index,
                           const char *u)
{
    uint8_t want[32];
    leaf_hash_of(s, q, index, want);
    assert_int_equal(r->err, WR_OK);
    assert_true(r->entry.has_receipt);
    assert_int_equal(r->entry.receipt_index, index);
    assert_string_equal(r->entry.receipt_u, u);
    assert_memory_equal(r->entry.receipt_leaf_hash, want, 32);
}

/* A receipt is the same before and after its join leaf is hashed (on
 * Redis: computed from the leaf's bytes by waitroomd, then the hash the
 * signer stored, lib_log.lua log_receipt), from one status and from a
 * batch (calls of one loop iteration: one entry_batch.lua on Redis) that
 * mixes both; its leaf hash is the one of the leaf read back. */
static void t_log_receipt_hashed(void **state)
{
    wr_store_t *s = log_store(state);
    put_log(s, "rh", true);
    join_n(s, "rh", 1, 3);
    sh_res_t r;
    assert_int_equal(sh_status(s, "rh", "u2", &r), WR_OK); /* not hashed yet */
    char u2[33];
    memcpy(u2, r.entry.receipt_u, sizeof u2);
    expect_receipt(s, "rh", &r, 1, u2);
    lres_t h;
    assert_int_equal(lg_head(s, "rh", &h), WR_OK); /* hashes every leaf */
    assert_int_equal(h.a.size, 3);
    assert_int_equal(sh_status(s, "rh", "u2", &r), WR_OK); /* hashed */
    expect_receipt(s, "rh", &r, 1, u2);
    assert_int_equal(sh_status(s, "rh", "u1", &r), WR_OK);
    char u1[33];
    memcpy(u1, r.entry.receipt_u, sizeof u1);
    expect_receipt(s, "rh", &r, 0, u1);
    /* one iteration: a hashed leaf's status, a join (its leaf not hashed),
     * the joiner's status, another hashed leaf's status */
    sh_res_t b[4];
    static const char *const who[] = {"u2", "u4", "u4", "u1"};
    for (int i = 0; i < 4; i++) {
        sh_begin(&b[i]);
        assert_int_equal(i == 1 ? wr_store_join(s, "rh", who[i], sh_entry_cb, &b[i])
                                : wr_store_status(s, "rh", who[i], sh_entry_cb, &b[i]),
                         WR_OK);
        b[i].returned = true;
    }
    for (int i = 0; i < 4; i++)
        sh_wait_one(&b[i]);
    expect_receipt(s, "rh", &b[0], 1, u2);
    char u4[33];
    memcpy(u4, b[1].entry.receipt_u, sizeof u4);
    assert_string_not_equal(u4, u1);
    assert_string_not_equal(u4, u2);
    expect_receipt(s, "rh", &b[1], 3, u4);
    expect_receipt(s, "rh", &b[2], 3, u4);
    expect_receipt(s, "rh", &b[3], 0, u1);
    assert_int_equal(lg_head(s, "rh", &h), WR_OK);
    assert_int_equal(h.a.size, 4);
    assert_int_equal(sh_status(s, "rh", "u4", &r), WR_OK);
    expect_receipt(s, "rh", &r, 3, u4);
}

/* A long log hashed in two heads, the second starting at leaf 24,439: a
 * store that hashes in chunks (Redis's store_redis_logtree.c) completes
 * there about as many subtrees as a chunk can (with chunks of 240 they once
 * overflowed the command that stores them, and the tree stopped there).
 * The head covers every leaf, and its root is the one recomputed from the
 * leaves read back. */
/* lg_head of a long log, waited for up to 60 s: a head first hashes every
 * leaf not hashed yet, a store round trip per chunk of 220 (over 100 for
 * 24,439 leaves), which a loaded run under ASan took over SH_WAIT_MS to do */
static wr_err_t lg_head_long(wr_store_t *s, const char *q, lres_t *l)
{
    memset(l, 0, sizeof *l);
    sh_begin(&l->r);
    return sh_settle_ms(&l->r, wr_store_log_head(s, q, lg_cb, l), 60000);
}

static void t_log_long(void **state)
{
    wr_store_t *s = log_store(state);
    enum { FIRST = 24439, N = 24700, CHUNK = 60 };
    put_log(s, "L", true);
    join_n(s, "L", 1, FIRST);
    lres_t h, l;
    assert_int_equal(lg_head_long(s, "L", &h), WR_OK);
    assert_int_equal(h.a.size, FIRST);
    join_n(s, "L", FIRST + 1, N);
    assert_int_equal(lg_head_long(s, "L", &h), WR_OK);
    assert_int_equal(h.a.size, N);
    wr_crypto_sha256_t *sha = wr_crypto_sha256_new();
    assert_non_null(sha);
    wr_tlog_frontier_t f;
    wr_tlog_frontier_init(&f);
    for (uint64_t at = 0; at < N; at += CHUNK) {
        wr_log_read_t req = {.start = at, .end = at + CHUNK < N ? at + CHUNK : N};
        assert_int_equal(lg_read(s, "L", &req, &l), WR_OK);
        uint64_t k = 0;
        for (char *p = l.leaves, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1, k++) {
            uint8_t lh[32];
            assert_int_equal(wr_tlog_leaf_hash(sha, p, (size_t)(nl - p), lh), WR_OK);
            assert_int_equal(wr_tlog_frontier_append(sha, &f, lh, NULL, NULL), WR_OK);
        }
        assert_int_equal(k, req.end - req.start);
    }
    uint8_t root[32];
    assert_int_equal(wr_tlog_frontier_root(sha, &f, root), WR_OK);
    wr_crypto_sha256_free(sha);
    assert_memory_equal(root, h.a.root, 32);
}

WR_CONTRACT_GROUP(publog, T(t_log_only_with_public_log), T(t_log_follows_changes),
                  T(t_log_key_first_writer), T(t_log_publish_rules), T(t_log_read_bounds),
                  T(t_log_outlives_queue), T(t_log_receipt_hashed), T(t_log_long));
