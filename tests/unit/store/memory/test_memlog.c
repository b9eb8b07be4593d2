/*
 * test_memlog.c - the embedded store's public log of one queue (memlog.c):
 * the stored subtrees give the same roots as a fresh frontier at every
 * size and proofs that verify, members, receipt hints, and the snapshot form (a round
 * trip, a truncated stream refused, a changed leaf rebuilding another
 * tree).
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

#include "store/memory/memlog.h"
#include "unit_main.h"

#define N 70

static void leaf_text(int i, char *buf, size_t cap, size_t *len)
{
    *len = (size_t)snprintf(buf, cap, "{\"e\":\"failOpen\",\"at\":%d,\"n\":%d}", 1000 + i, i);
}

static wr_memlog_t *filled(int n)
{
    wr_memlog_t *l = wr_memlog_new("q");
    assert_non_null(l);
    for (int i = 0; i < n; i++) {
        char b[64];
        size_t len;
        leaf_text(i, b, sizeof b, &len);
        assert_int_equal(wr_memlog_append_bytes(l, b, len, 1000 + i), WR_OK);
    }
    return l;
}

/* Every size's root from the stored hashes equals a fresh frontier's, and
 * every inclusion and consistency proof verifies against them. */
static void test_tree(void **state)
{
    (void)state;
    wr_memlog_t *l = filled(N);
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    wr_tlog_frontier_t f;
    wr_tlog_frontier_init(&f);
    uint8_t roots[N + 1][32];
    wr_tlog_empty_root(roots[0]);
    for (int i = 0; i < N; i++) {
        size_t len;
        const char *leaf = wr_memlog_leaf(l, (uint64_t)i, &len);
        char b[64];
        size_t want;
        leaf_text(i, b, sizeof b, &want);
        assert_int_equal(len, want);
        assert_memory_equal(leaf, b, len);
        uint8_t lh[32];
        assert_int_equal(wr_tlog_leaf_hash(h, leaf, len, lh), WR_OK);
        assert_int_equal(wr_tlog_frontier_append(h, &f, lh, NULL, NULL), WR_OK);
        assert_int_equal(wr_tlog_frontier_root(h, &f, roots[i + 1]), WR_OK);
    }
    assert_null(wr_memlog_leaf(l, N, &(size_t){0}));
    wr_tlog_reader_t rd = wr_memlog_reader(l);
    uint8_t root[32], proof[WR_TLOG_PROOF_MAX][32];
    assert_int_equal(wr_memlog_root(l, root), WR_OK);
    assert_memory_equal(root, roots[N], 32);
    for (uint64_t n = 1; n <= N; n++) {
        assert_int_equal(wr_tlog_root_at(h, &rd, n, root), WR_OK);
        assert_memory_equal(root, roots[n], 32);
        for (uint64_t i = 0; i < n; i++) {
            size_t k;
            uint8_t lh[32];
            assert_int_equal(rd.read(rd.ctx, 0, i, lh), WR_OK);
            assert_int_equal(wr_tlog_inclusion_proof(h, &rd, i, n, proof, &k), WR_OK);
            assert_true(
                wr_tlog_verify_inclusion(h, i, n, lh, (const uint8_t(*)[32])proof, k, roots[n]));
        }
        for (uint64_t m = 1; m <= n; m++) {
            size_t k;
            assert_int_equal(wr_tlog_consistency_proof(h, &rd, m, n, proof, &k), WR_OK);
            assert_true(wr_tlog_verify_consistency(h, m, n, roots[m], roots[n],
                                                   (const uint8_t(*)[32])proof, k));
        }
    }
    /* a node past the log is not there */
    assert_int_equal(rd.read(rd.ctx, 0, N, root), WR_ENOTFOUND);
    assert_int_equal(rd.read(rd.ctx, 7, 1, root), WR_ENOTFOUND);
    wr_crypto_sha256_free(h);
    wr_memlog_free(l);
}

/* Events are encoded by logleaf with "at" never going back; log ids are
 * the salt's; members. */
static void test_append_and_members(void **state)
{
    (void)state;
    wr_memlog_t *l = wr_memlog_new("shop");
    assert_non_null(l);
    wr_logleaf_t ev = {.e = WR_LOGLEAF_JOIN, .at = 500, .t = 500};
    assert_int_equal(wr_memlog_u(l, "alice", 5, ev.u), WR_OK);
    uint64_t idx = 99;
    assert_int_equal(wr_memlog_append(l, &ev, &idx), WR_OK);
    assert_int_equal(idx, 0);
    ev.at = 400; /* the clock stepped back: the leaf keeps 500 */
    assert_int_equal(wr_memlog_append(l, &ev, &idx), WR_OK);
    assert_int_equal(idx, 1);
    size_t len;
    const char *leaf = wr_memlog_leaf(l, 1, &len);
    char want[128];
    int n = snprintf(want, sizeof want, "{\"e\":\"join\",\"at\":500,\"u\":\"%s\",\"t\":500}", ev.u);
    assert_int_equal(len, (size_t)n);
    assert_memory_equal(leaf, want, len);
    char u2[33]; /* the one-shot HMAC of logleaf gives the same id */
    assert_int_equal(wr_logleaf_log_id(l->salt, sizeof l->salt, "alice", 5, u2), WR_OK);
    assert_string_equal(ev.u, u2);
    assert_false(wr_memlog_member(l, "alice", 5, &idx));
    assert_int_equal(wr_memlog_member_add(l, "alice", 5, 1), WR_OK);
    assert_true(wr_memlog_member(l, "alice", 5, &idx));
    assert_int_equal(idx, 1);
    assert_true(wr_memlog_member_del(l, "alice", 5));
    assert_false(wr_memlog_member_del(l, "alice", 5));
    /* another log's salt: another id */
    wr_memlog_t *o = wr_memlog_new("shop");
    char u3[33];
    assert_int_equal(wr_memlog_u(o, "alice", 5, u3), WR_OK);
    assert_string_not_equal(u3, ev.u);
    wr_memlog_free(o);
    wr_memlog_free(l);
}

/* A join leaf of user at t appended and its member recorded; its index. */
static uint64_t join(wr_memlog_t *l, const char *user, int64_t t)
{
    wr_logleaf_t ev = {.e = WR_LOGLEAF_JOIN, .at = t, .t = t};
    assert_int_equal(wr_memlog_u(l, user, strlen(user), ev.u), WR_OK);
    uint64_t idx;
    assert_int_equal(wr_memlog_append(l, &ev, &idx), WR_OK);
    assert_int_equal(wr_memlog_member_add(l, user, strlen(user), idx), WR_OK);
    return idx;
}

/* A hint stays live while its member stays, the same when asked again,
 * and goes stale when they are forgotten or get another join leaf: also
 * after their slot goes to someone else, and after they come back (a new
 * hint then). */
static void test_receipt_hints(void **state)
{
    (void)state;
    wr_memlog_t *l = wr_memlog_new("shop");
    assert_non_null(l);
    assert_int_equal(wr_memlog_hint(l, "nobody", 6), 0); /* not a member */
    assert_false(wr_memlog_hint_live(l, 0));
    uint64_t ia = join(l, "alice", 100);
    join(l, "bob", 101);
    uint64_t ha = wr_memlog_hint(l, "alice", 5), hb = wr_memlog_hint(l, "bob", 3);
    assert_int_not_equal(ha, 0);
    assert_int_not_equal(hb, 0);
    assert_int_not_equal(ha, hb);
    assert_int_equal(wr_memlog_hint(l, "alice", 5), ha); /* asked again: the same */
    assert_true(wr_memlog_hint_live(l, ha));
    assert_true(wr_memlog_hint_live(l, hb));
    /* alice forgotten: her hint is stale; carol takes her slot under
     * another generation, which alice's old hint never matches */
    assert_true(wr_memlog_member_del(l, "alice", 5));
    assert_false(wr_memlog_hint_live(l, ha));
    assert_true(wr_memlog_hint_live(l, hb));
    join(l, "carol", 102);
    uint64_t hc = wr_memlog_hint(l, "carol", 5);
    assert_int_equal((uint32_t)hc, (uint32_t)ha); /* the same slot */
    assert_int_not_equal(hc, ha);                 /* another generation */
    assert_false(wr_memlog_hint_live(l, ha));
    assert_true(wr_memlog_hint_live(l, hc));
    /* alice back: a new hint; past the table, or of generation 0: stale */
    uint64_t ia2 = join(l, "alice", 103);
    assert_int_not_equal(ia2, ia);
    uint64_t ha2 = wr_memlog_hint(l, "alice", 5);
    assert_int_not_equal(ha2, ha);
    assert_true(wr_memlog_hint_live(l, ha2));
    assert_false(wr_memlog_hint_live(l, (UINT64_C(1) << 32) | 999));
    assert_false(wr_memlog_hint_live(l, (uint32_t)ha2));
    /* bob recorded at another leaf: his copies go stale; the same leaf
     * again changes nothing */
    uint64_t idx;
    assert_true(wr_memlog_member(l, "bob", 3, &idx));
    assert_int_equal(wr_memlog_member_add(l, "bob", 3, idx), WR_OK);
    assert_true(wr_memlog_hint_live(l, hb));
    assert_int_equal(wr_memlog_member_add(l, "bob", 3, ia2), WR_OK);
    assert_false(wr_memlog_hint_live(l, hb));
    assert_true(wr_memlog_hint_live(l, wr_memlog_hint(l, "bob", 3)));
    wr_memlog_free(l);
}

typedef struct {
    unsigned char buf[1 << 16];
    size_t len, pos;
} stream_t;

static void put(void *ctx, const void *p, size_t n)
{
    stream_t *s = ctx;
    assert_true(s->len + n <= sizeof s->buf);
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

static bool get(void *ctx, void *p, size_t n)
{
    stream_t *s = ctx;
    if (s->pos + n > s->len)
        return false;
    memcpy(p, s->buf + s->pos, n);
    s->pos += n;
    return true;
}

static void test_snapshot_form(void **state)
{
    (void)state;
    wr_memlog_t *l = filled(13);
    assert_int_equal(wr_memlog_member_add(l, "bob", 3, 7), WR_OK);
    l->committed = true;
    memset(l->seed, 0x5a, sizeof l->seed);
    l->beacon = true;
    snprintf(l->beacon_url, sizeof l->beacon_url, "https://api.drand.sh");
    l->round = 42;
    l->last_t = 1234;
    memcpy(l->cp, "cp text\n", 8);
    l->cp_len = 8;
    l->cp_size = 12;
    memset(l->cp_root, 7, 32);
    static stream_t s;
    memset(&s, 0, sizeof s);
    wr_memlog_write(l, put, &s);
    const char *what = NULL;
    wr_memlog_t *r = wr_memlog_read(get, &s, &what);
    assert_non_null(r);
    assert_int_equal(s.pos, s.len);
    uint8_t a[32], b[32];
    assert_int_equal(wr_memlog_root(l, a), WR_OK);
    assert_int_equal(wr_memlog_root(r, b), WR_OK);
    assert_memory_equal(a, b, 32);
    assert_string_equal(r->name, "q");
    assert_memory_equal(r->salt, l->salt, sizeof l->salt);
    uint64_t idx = 0;
    assert_true(wr_memlog_member(r, "bob", 3, &idx));
    assert_int_equal(idx, 7);
    assert_true(r->committed && r->beacon);
    assert_memory_equal(r->seed, l->seed, 32);
    assert_string_equal(r->beacon_url, "https://api.drand.sh");
    assert_int_equal(r->round, 42);
    assert_int_equal(r->last_t, 1234);
    assert_int_equal(r->cp_len, 8);
    assert_int_equal(r->cp_size, 12);
    assert_memory_equal(r->cp_root, l->cp_root, 32);
    wr_memlog_free(r);
    /* truncated anywhere: refused */
    size_t full = s.len;
    for (size_t cut = 0; cut < full; cut += 17) {
        s.len = cut;
        s.pos = 0;
        assert_null(wr_memlog_read(get, &s, &what));
        assert_non_null(what);
    }
    /* one leaf byte changed: another tree */
    s.len = full;
    s.pos = 0;
    unsigned char *at = memmem(s.buf, s.len, "\"n\":5", 5);
    assert_non_null(at);
    at[4] = '6';
    r = wr_memlog_read(get, &s, &what);
    assert_non_null(r);
    assert_int_equal(wr_memlog_root(r, b), WR_OK);
    assert_memory_not_equal(a, b, 32);
    wr_memlog_free(r);
    wr_memlog_free(l);
}

#define TESTS(X)                                                                                   \
    X(test_tree)                                                                                   \
    X(test_append_and_members)                                                                     \
    X(test_receipt_hints)                                                                          \
    X(test_snapshot_form)
WR_UNIT_MAIN(NULL, NULL, TESTS)
