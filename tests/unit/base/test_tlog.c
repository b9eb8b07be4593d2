/*
 * test_tlog.c - the RFC 9162 Merkle tree: the Certificate Transparency
 * reference vectors (the 8 leaves of RFC 6962's test data, their roots,
 * inclusion and consistency proofs as certificate-transparency-go
 * publishes them), then every inclusion proof and every consistency proof
 * of every tree up to 70 leaves against a naive recursive implementation
 * of RFC 9162 2.1 written from the text, and mangled proofs refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/tlog.h"
#include "unit_main.h"
#include "unit_sha.h"

#define H WR_TLOG_HASH

static void unhex(const char *s, uint8_t *out, size_t *len)
{
    size_t n = strlen(s) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
    if (len)
        *len = n;
}

static void hash_of(const char *hex, uint8_t out[H])
{
    unhex(hex, out, NULL);
}

/* ---------- a tree in memory: the stored hashes, written by on_node */

#define MAXN 72
#define MAXL 8

typedef struct {
    uint8_t hash[MAXL][MAXN][H];
    int set[MAXL][MAXN];
    int reads;
} store_t;

static void on_node(void *ctx, unsigned level, uint64_t index, const uint8_t hash[H])
{
    store_t *s = ctx;
    assert_true(level < MAXL && index < MAXN);
    assert_false(s->set[level][index]); /* written once, never changed */
    memcpy(s->hash[level][index], hash, H);
    s->set[level][index] = 1;
}

static wr_err_t read_node(void *ctx, unsigned level, uint64_t index, uint8_t out[H])
{
    store_t *s = ctx;
    s->reads++;
    if (level >= MAXL || index >= MAXN || !s->set[level][index])
        return WR_ENOTFOUND;
    memcpy(out, s->hash[level][index], H);
    return WR_OK;
}

/* ---------- the naive RFC 9162 2.1, recursive, from the text */

static uint64_t k_of(uint64_t n)
{
    uint64_t k = 1;
    while (k * 2 < n)
        k *= 2;
    return k;
}

static void mth(const uint8_t (*leaves)[H], uint64_t n, uint8_t out[H])
{
    if (n == 0) {
        wr_tlog_empty_root(out);
        return;
    }
    if (n == 1) {
        memcpy(out, leaves[0], H);
        return;
    }
    uint64_t k = k_of(n);
    uint8_t l[H], r[H];
    mth(leaves, k, l);
    mth(leaves + k, n - k, r);
    assert_int_equal(wr_tlog_node_hash(sha, l, r, out), WR_OK);
}

static size_t path(uint64_t m, const uint8_t (*leaves)[H], uint64_t n, uint8_t (*out)[H])
{
    if (n <= 1)
        return 0;
    uint64_t k = k_of(n);
    size_t len;
    if (m < k) {
        len = path(m, leaves, k, out);
        mth(leaves + k, n - k, out[len]);
    } else {
        len = path(m - k, leaves + k, n - k, out);
        mth(leaves, k, out[len]);
    }
    return len + 1;
}

static size_t subproof(uint64_t m, const uint8_t (*leaves)[H], uint64_t n, int b, uint8_t (*out)[H])
{
    if (m == n) {
        if (b)
            return 0;
        mth(leaves, n, out[0]);
        return 1;
    }
    uint64_t k = k_of(n);
    size_t len;
    if (m <= k) {
        len = subproof(m, leaves, k, b, out);
        mth(leaves + k, n - k, out[len]);
    } else {
        len = subproof(m - k, leaves + k, n - k, 0, out);
        mth(leaves, k, out[len]);
    }
    return len + 1;
}

/* ---------- the reference vectors */

static const char *const ct_leaves[] = {
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
};

static const char *const ct_roots[] = {
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

struct proof_vec {
    uint64_t a, b; /* index and size, or from and to */
    const char *hashes[4];
};

static const struct proof_vec ct_inclusion[] = {
    {0,
     8,
     {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4", NULL}},
    {5,
     8,
     {"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7", NULL}},
};

static const struct proof_vec ct_consistency[] = {
    {1,
     8,
     {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4", NULL}},
    {2,
     5,
     {"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b", NULL, NULL}},
    {6,
     8,
     {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7", NULL}},
};

static store_t ct_store;
static wr_tlog_frontier_t ct_front;

static void build_ct(void)
{
    memset(&ct_store, 0, sizeof ct_store);
    wr_tlog_frontier_init(&ct_front);
    for (size_t i = 0; i < 8; i++) {
        uint8_t data[16], leaf[H], root[H], want[H];
        size_t len;
        unhex(ct_leaves[i], data, &len);
        assert_int_equal(wr_tlog_leaf_hash(sha, data, len, leaf), WR_OK);
        assert_int_equal(wr_tlog_frontier_append(sha, &ct_front, leaf, on_node, &ct_store), WR_OK);
        assert_int_equal(wr_tlog_frontier_root(sha, &ct_front, root), WR_OK);
        hash_of(ct_roots[i + 1], want);
        assert_memory_equal(root, want, H);
    }
}

static void test_ct_roots(void **state)
{
    (void)state;
    uint8_t root[H], want[H];
    wr_tlog_frontier_t f;
    wr_tlog_frontier_init(&f);
    assert_int_equal(wr_tlog_frontier_root(sha, &f, root), WR_OK);
    hash_of(ct_roots[0], want);
    assert_memory_equal(root, want, H);
    build_ct();
    wr_tlog_reader_t r = {read_node, &ct_store};
    for (uint64_t n = 0; n <= 8; n++) {
        assert_int_equal(wr_tlog_root_at(sha, &r, n, root), WR_OK);
        hash_of(ct_roots[n], want);
        assert_memory_equal(root, want, H);
    }
    /* the frontier reloaded from the stored hashes goes on the same */
    wr_tlog_frontier_t g;
    assert_int_equal(wr_tlog_frontier_load(&r, 5, &g), WR_OK);
    assert_int_equal(wr_tlog_frontier_root(sha, &g, root), WR_OK);
    hash_of(ct_roots[5], want);
    assert_memory_equal(root, want, H);
}

static void check_vec(const struct proof_vec *v, int consistency)
{
    wr_tlog_reader_t r = {read_node, &ct_store};
    uint8_t proof[WR_TLOG_PROOF_MAX][H], want[H], ra[H], rb[H];
    size_t n = 0, k = 0;
    if (consistency)
        assert_int_equal(wr_tlog_consistency_proof(sha, &r, v->a, v->b, proof, &n), WR_OK);
    else
        assert_int_equal(wr_tlog_inclusion_proof(sha, &r, v->a, v->b, proof, &n), WR_OK);
    for (; v->hashes[k]; k++) {
        hash_of(v->hashes[k], want);
        assert_memory_equal(proof[k], want, H);
    }
    assert_int_equal(n, k);
    hash_of(ct_roots[v->b], rb);
    if (consistency) {
        hash_of(ct_roots[v->a], ra);
        assert_true(
            wr_tlog_verify_consistency(sha, v->a, v->b, ra, rb, (const uint8_t(*)[H])proof, n));
    } else {
        assert_true(wr_tlog_verify_inclusion(sha, v->a, v->b, ct_store.hash[0][v->a],
                                             (const uint8_t(*)[H])proof, n, rb));
    }
}

static void test_ct_proofs(void **state)
{
    (void)state;
    build_ct();
    for (size_t i = 0; i < sizeof ct_inclusion / sizeof ct_inclusion[0]; i++)
        check_vec(&ct_inclusion[i], 0);
    for (size_t i = 0; i < sizeof ct_consistency / sizeof ct_consistency[0]; i++)
        check_vec(&ct_consistency[i], 1);
    /* bounds */
    wr_tlog_reader_t r = {read_node, &ct_store};
    uint8_t proof[WR_TLOG_PROOF_MAX][H];
    size_t n;
    assert_int_equal(wr_tlog_inclusion_proof(sha, &r, 8, 8, proof, &n), WR_EINVAL);
    assert_int_equal(wr_tlog_consistency_proof(sha, &r, 0, 8, proof, &n), WR_EINVAL);
    assert_int_equal(wr_tlog_consistency_proof(sha, &r, 5, 3, proof, &n), WR_EINVAL);
    /* a size past 2^63 (the largest power of two below it is 2^63): the
     * reader is asked, nothing loops on an overflowed doubling */
    assert_int_equal(wr_tlog_inclusion_proof(sha, &r, 0, UINT64_MAX, proof, &n), WR_ENOTFOUND);
    assert_int_equal(wr_tlog_consistency_proof(sha, &r, 3, (uint64_t)1 << 63 | 5, proof, &n),
                     WR_ENOTFOUND);
    /* a hash the store lacks is the reader's error, not a wrong proof */
    assert_int_equal(wr_tlog_inclusion_proof(sha, &r, 0, 9, proof, &n), WR_ENOTFOUND);
    assert_int_equal(wr_tlog_consistency_proof(sha, &r, 4, 4, proof, &n), WR_OK);
    assert_int_equal(n, 0);
}

/* Every proof of every tree up to 70 leaves, generated through the reader,
 * equals the naive one, verifies, and fails once mangled. */
static void test_all_sizes(void **state)
{
    (void)state;
    enum { N = 70 };
    static store_t st;
    static uint8_t leaves[N][H];
    static uint8_t roots[N + 1][H];
    memset(&st, 0, sizeof st);
    wr_tlog_frontier_t f;
    wr_tlog_frontier_init(&f);
    wr_tlog_reader_t r = {read_node, &st};
    wr_tlog_empty_root(roots[0]);
    for (int i = 0; i < N; i++) {
        char leaf[32];
        int len = snprintf(leaf, sizeof leaf, "leaf %d", i * 7919);
        assert_int_equal(wr_tlog_leaf_hash(sha, leaf, (size_t)len, leaves[i]), WR_OK);
        assert_int_equal(wr_tlog_frontier_append(sha, &f, leaves[i], on_node, &st), WR_OK);
        assert_int_equal(wr_tlog_frontier_root(sha, &f, roots[i + 1]), WR_OK);
        uint8_t naive[H];
        mth((const uint8_t(*)[H])leaves, (uint64_t)i + 1, naive);
        assert_memory_equal(roots[i + 1], naive, H);
    }
    for (uint64_t n = 1; n <= N; n++) {
        uint8_t root[H];
        st.reads = 0;
        assert_int_equal(wr_tlog_root_at(sha, &r, n, root), WR_OK);
        assert_true(st.reads <= 7);
        assert_memory_equal(root, roots[n], H);
        for (uint64_t i = 0; i < n; i++) {
            uint8_t got[WR_TLOG_PROOF_MAX][H], want[WR_TLOG_PROOF_MAX][H];
            size_t gl = 0;
            size_t wl = path(i, (const uint8_t(*)[H])leaves, n, want);
            st.reads = 0;
            assert_int_equal(wr_tlog_inclusion_proof(sha, &r, i, n, got, &gl), WR_OK);
            assert_true(st.reads <= 7 * 7); /* O(log n) reads */
            assert_int_equal(gl, wl);
            assert_memory_equal(got, want, gl * H);
            const uint8_t(*p)[H] = (const uint8_t(*)[H])got;
            assert_true(wr_tlog_verify_inclusion(sha, i, n, leaves[i], p, gl, roots[n]));
            assert_false(wr_tlog_verify_inclusion(sha, i, n, leaves[(i + 1) % N], p, gl, roots[n]));
            if (n > 1) {
                assert_false(
                    wr_tlog_verify_inclusion(sha, (i + 1) % n, n, leaves[i], p, gl, roots[n]));
                assert_false(wr_tlog_verify_inclusion(sha, i, n, leaves[i], p, gl - 1, roots[n]));
                got[gl - 1][5] ^= 1;
                assert_false(wr_tlog_verify_inclusion(sha, i, n, leaves[i], p, gl, roots[n]));
                got[gl - 1][5] ^= 1;
                memset(got[gl], 0xab, H);
                assert_false(wr_tlog_verify_inclusion(sha, i, n, leaves[i], p, gl + 1, roots[n]));
            }
            assert_false(wr_tlog_verify_inclusion(sha, n, n, leaves[i], p, gl, roots[n]));
        }
        for (uint64_t m = 1; m <= n; m++) {
            uint8_t got[WR_TLOG_PROOF_MAX][H], want[WR_TLOG_PROOF_MAX][H];
            size_t gl = 0;
            size_t wl = subproof(m, (const uint8_t(*)[H])leaves, n, 1, want);
            assert_int_equal(wr_tlog_consistency_proof(sha, &r, m, n, got, &gl), WR_OK);
            assert_int_equal(gl, wl);
            assert_memory_equal(got, want, gl * H);
            const uint8_t(*p)[H] = (const uint8_t(*)[H])got;
            assert_true(wr_tlog_verify_consistency(sha, m, n, roots[m], roots[n], p, gl));
            if (m < n) {
                assert_false(wr_tlog_verify_consistency(sha, m, n, roots[m - 1], roots[n], p, gl));
                assert_false(wr_tlog_verify_consistency(sha, m, n, roots[m], roots[n - 1], p, gl));
                assert_false(wr_tlog_verify_consistency(sha, m, n, roots[m], roots[n], p, gl - 1));
                got[0][3] ^= 0x80;
                assert_false(wr_tlog_verify_consistency(sha, m, n, roots[m], roots[n], p, gl));
                got[0][3] ^= 0x80;
                memset(got[gl], 0xcd, H);
                assert_false(wr_tlog_verify_consistency(sha, m, n, roots[m], roots[n], p, gl + 1));
            } else {
                assert_int_equal(gl, 0);
                assert_false(wr_tlog_verify_consistency(sha, m, n, roots[m], roots[n - 1], p, 0));
            }
        }
    }
    /* size 0 against anything: empty proof, empty root */
    assert_true(wr_tlog_verify_consistency(sha, 0, 8, roots[0], roots[8], NULL, 0));
    assert_false(wr_tlog_verify_consistency(sha, 0, 8, roots[1], roots[8], NULL, 0));
    assert_false(wr_tlog_verify_consistency(sha, 9, 8, roots[8], roots[8], NULL, 0));
}

static void test_frontier_nodes(void **state)
{
    (void)state;
    /* appending leaf 7 completes (0,7), (1,3), (2,1), (3,0): four writes */
    static store_t st;
    memset(&st, 0, sizeof st);
    wr_tlog_frontier_t f;
    wr_tlog_frontier_init(&f);
    uint8_t leaf[H] = {0};
    for (int i = 0; i < 8; i++) {
        leaf[0] = (uint8_t)i;
        assert_int_equal(wr_tlog_frontier_append(sha, &f, leaf, on_node, &st), WR_OK);
    }
    assert_true(st.set[0][7] && st.set[1][3] && st.set[2][1] && st.set[3][0]);
    assert_false(st.set[4][0]);
    int count = 0;
    for (int l = 0; l < MAXL; l++)
        for (int i = 0; i < MAXN; i++)
            count += st.set[l][i];
    assert_int_equal(count, 15); /* 8 leaves + 4 + 2 + 1 */
}

#define TESTS(X)                                                                                   \
    X(test_ct_roots)                                                                               \
    X(test_ct_proofs)                                                                              \
    X(test_all_sizes)                                                                              \
    X(test_frontier_nodes)
WR_UNIT_MAIN(sha_setup, sha_teardown, TESTS)
