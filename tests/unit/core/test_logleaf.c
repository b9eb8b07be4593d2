/*
 * test_logleaf.c - the public log's leaves: the exact bytes of every kind
 * (key order, optional fields, no white space), parsing them back, what
 * the parser refuses, the log id and the draw against values computed
 * independently (Python's hmac and hashlib).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/logleaf.h"
#include "unit_main.h"

#define U1 "00112233445566778899aabbccddeeff"

static void roundtrip(const wr_logleaf_t *l, const char *want)
{
    char out[WR_LOGLEAF_MAX];
    size_t len = 0;
    assert_int_equal(wr_logleaf_encode(l, out, sizeof out, &len), WR_OK);
    assert_string_equal(out, want);
    assert_int_equal(len, strlen(want));
    wr_logleaf_t back;
    char msg[80] = "";
    assert_int_equal(wr_logleaf_parse(out, len, &back, msg, sizeof msg), WR_OK);
    char again[WR_LOGLEAF_MAX];
    assert_int_equal(wr_logleaf_encode(&back, again, sizeof again, NULL), WR_OK);
    assert_string_equal(again, want);
}

/* A leaf of kind e at at, all else zero; of the user u unless NULL. */
static wr_logleaf_t leaf(wr_logleaf_kind_t e, int64_t at, const char *u)
{
    wr_logleaf_t l;
    memset(&l, 0, sizeof l);
    l.e = e;
    l.at = at;
    if (u)
        snprintf(l.u, sizeof l.u, "%s", u);
    return l;
}

/* l (a commit or a draw) names the beacon at url and its round. */
static void set_beacon(wr_logleaf_t *l, uint64_t round, const char *url)
{
    l->beacon = true;
    l->round = round;
    snprintf(l->beacon_url, sizeof l->beacon_url, "%s", url);
}

static void test_encode_each_kind(void **state)
{
    (void)state;
    wr_logleaf_t l = leaf(WR_LOGLEAF_JOIN, 1700000000000001, U1);
    l.t = 1700000000000000;
    roundtrip(&l,
              "{\"e\":\"join\",\"at\":1700000000000001,\"u\":\"" U1 "\",\"t\":1700000000000000}");
    l.pre = true;
    snprintf(l.grp, sizeof l.grp, "fanclub");
    roundtrip(&l, "{\"e\":\"join\",\"at\":1700000000000001,\"u\":\"" U1
                  "\",\"t\":1700000000000000,\"pre\":true,\"grp\":\"fanclub\"}");

    l = leaf(WR_LOGLEAF_ADMIT, 5, U1);
    roundtrip(&l, "{\"e\":\"admit\",\"at\":5,\"u\":\"" U1 "\"}");
    l.held = true;
    snprintf(l.grp, sizeof l.grp, "vip-1");
    roundtrip(&l, "{\"e\":\"admit\",\"at\":5,\"u\":\"" U1 "\",\"grp\":\"vip-1\",\"held\":true}");

    l = leaf(WR_LOGLEAF_AWAY, 6, U1);
    roundtrip(&l, "{\"e\":\"away\",\"at\":6,\"u\":\"" U1 "\"}");
    l.unseen = true;
    roundtrip(&l, "{\"e\":\"away\",\"at\":6,\"u\":\"" U1 "\",\"unseen\":true}");

    l = leaf(WR_LOGLEAF_LEAVE, 7, U1);
    const char *whys[] = {"left", "abandoned", "pending", "removed"};
    for (int i = 0; i < 4; i++) {
        char want[200];
        l.why = (wr_logleaf_why_t)i;
        snprintf(want, sizeof want, "{\"e\":\"leave\",\"at\":7,\"u\":\"" U1 "\",\"why\":\"%s\"}",
                 whys[i]);
        roundtrip(&l, want);
    }

    l = leaf(WR_LOGLEAF_FAILOPEN, 8, NULL);
    l.n = 12;
    roundtrip(&l, "{\"e\":\"failOpen\",\"at\":8,\"n\":12}");

    l = leaf(WR_LOGLEAF_COMMIT, 9, NULL);
    memset(l.seed_hash, 0xab, 32);
    roundtrip(&l, "{\"e\":\"commit\",\"at\":9,\"seedHash\":\""
                  "abababababababababababababababababababababababababababababababab\"}");
    set_beacon(&l, 1234, "https://drand.example/\"x\"");
    roundtrip(&l, "{\"e\":\"commit\",\"at\":9,\"seedHash\":\""
                  "abababababababababababababababababababababababababababababababab\","
                  "\"beacon\":\"https://drand.example/\\\"x\\\"\",\"round\":1234}");

    l = leaf(WR_LOGLEAF_DRAW, 10, NULL);
    l.n = 3;
    memset(l.seed, 0x01, 32);
    roundtrip(&l, "{\"e\":\"draw\",\"at\":10,\"n\":3,\"seed\":\""
                  "0101010101010101010101010101010101010101010101010101010101010101\"}");
    set_beacon(&l, 7, "https://b.example");
    l.randomness_len = 32;
    memset(l.randomness, 0xff, 32);
    roundtrip(&l, "{\"e\":\"draw\",\"at\":10,\"n\":3,\"seed\":\""
                  "0101010101010101010101010101010101010101010101010101010101010101\","
                  "\"round\":7,\"randomness\":\""
                  "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\","
                  "\"beacon\":\"https://b.example\"}");
    l.randomness_len = 0;
    snprintf(l.beacon_error, sizeof l.beacon_error, "timeout after 60 s\n");
    roundtrip(&l, "{\"e\":\"draw\",\"at\":10,\"n\":3,\"seed\":\""
                  "0101010101010101010101010101010101010101010101010101010101010101\","
                  "\"round\":7,\"beacon\":\"https://b.example\","
                  "\"beaconError\":\"timeout after 60 s?\"}");
    /* randomness and an error at once is no draw */
    l.randomness_len = 32;
    char out[WR_LOGLEAF_MAX];
    assert_int_equal(wr_logleaf_encode(&l, out, sizeof out, NULL), WR_EINVAL);
}

static void test_encode_refuses(void **state)
{
    (void)state;
    wr_logleaf_t l = leaf(WR_LOGLEAF_JOIN, 0, "00112233445566778899AABBCCDDEEFF"); /* upper case */
    char out[WR_LOGLEAF_MAX];
    assert_int_equal(wr_logleaf_encode(&l, out, sizeof out, NULL), WR_EINVAL);
    snprintf(l.u, sizeof l.u, U1);
    snprintf(l.grp, sizeof l.grp, "Fan Club");
    assert_int_equal(wr_logleaf_encode(&l, out, sizeof out, NULL), WR_EINVAL);
    l.grp[0] = '\0';
    l.at = -1;
    assert_int_equal(wr_logleaf_encode(&l, out, sizeof out, NULL), WR_EINVAL);
    l.at = 1;
    assert_int_equal(wr_logleaf_encode(&l, out, 20, NULL), WR_ELIMIT);
}

static void test_parse_refuses(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "[]",
        "{\"e\":\"jump\",\"at\":1}",
        "{\"e\":\"join\",\"at\":1,\"u\":\"" U1 "\"}",                        /* no t */
        "{\"e\":\"join\",\"at\":1,\"t\":1}",                                 /* no u */
        "{\"e\":\"join\",\"at\":1,\"u\":\"0011\",\"t\":1}",                  /* short u */
        "{\"e\":\"join\",\"at\":-1,\"u\":\"" U1 "\",\"t\":1}",               /* negative */
        "{\"e\":\"join\",\"at\":1.5,\"u\":\"" U1 "\",\"t\":1}",              /* float */
        "{\"e\":\"join\",\"at\":1,\"u\":\"" U1 "\",\"t\":1,\"pre\":1}",      /* pre not bool */
        "{\"e\":\"join\",\"at\":1,\"u\":\"" U1 "\",\"t\":1,\"grp\":\"A\"}",  /* bad group */
        "{\"e\":\"join\",\"e\":\"join\",\"at\":1,\"u\":\"" U1 "\",\"t\":1}", /* duplicate */
        "{\"e\":\"leave\",\"at\":1,\"u\":\"" U1 "\",\"why\":\"bored\"}",
        "{\"e\":\"commit\",\"at\":1,\"seedHash\":\"abab\"}",
        "{\"e\":\"draw\",\"at\":1,\"seed\":\"" U1 U1 "\"}", /* no n */
        "{\"e\":\"draw\",\"at\":1,\"n\":0,\"seed\":\"" U1 U1 "\",\"randomness\":\"ff\"}",
        "{\"e\":\"failOpen\",\"at\":1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wr_logleaf_t l;
        char msg[80] = "";
        assert_int_equal(wr_logleaf_parse(bad[i], strlen(bad[i]), &l, msg, sizeof msg), WR_EINVAL);
        assert_true(msg[0] != '\0');
    }
    /* unknown fields are ignored */
    wr_logleaf_t l;
    static const char ok[] = "{\"e\":\"away\",\"at\":1,\"u\":\"" U1 "\",\"later\":[1,2]}";
    assert_int_equal(wr_logleaf_parse(ok, sizeof ok - 1, &l, NULL, 0), WR_OK);
    assert_int_equal(l.e, WR_LOGLEAF_AWAY);
    assert_string_equal(l.u, U1);
}

static void unhex(const char *s, uint8_t *out)
{
    for (size_t i = 0; i < strlen(s) / 2; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

/* Expected values from Python: hmac.new(salt, user, sha256), hashlib. */
static void test_ids_and_draw(void **state)
{
    (void)state;
    char u[WR_LOGLEAF_U_HEX + 1];
    static const char salt[] = "salt-of-the-queue";
    assert_int_equal(wr_logleaf_log_id((const uint8_t *)salt, sizeof salt - 1, "user-42", 7, u),
                     WR_OK);
    assert_string_equal(u, "885c8c6564aec0c0eb6b515189f81a85");
    assert_int_equal(wr_logleaf_log_id(NULL, 0, "user-42", 7, u), WR_EINVAL);

    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    uint8_t seed[32], rnd[32], d[32], want[32], rank[32], ub[16];
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)i;
    memset(rnd, 0xaa, sizeof rnd);
    assert_int_equal(wr_logleaf_draw_value(h, seed, rnd, 32, d), WR_OK);
    unhex("1938af355add193c91ec054c689ea846fa41d12c15164a5849d42e53d0f9917e", want);
    assert_memory_equal(d, want, 32);
    assert_int_equal(wr_logleaf_u_bytes(U1, ub), WR_OK);
    assert_int_equal(wr_logleaf_draw_rank(h, d, ub, rank), WR_OK);
    unhex("324e72d48e85e9e3d8125efa2850f56a6d0691e543f958d3fb18f1698237bbb2", want);
    assert_memory_equal(rank, want, 32);
    /* without a beacon: SHA-256(seed) */
    assert_int_equal(wr_logleaf_draw_value(h, seed, NULL, 0, d), WR_OK);
    unhex("630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd", want);
    assert_memory_equal(d, want, 32);
    wr_crypto_sha256_free(h);
}

#define TESTS(X)                                                                                   \
    X(test_encode_each_kind)                                                                       \
    X(test_encode_refuses)                                                                         \
    X(test_parse_refuses)                                                                          \
    X(test_ids_and_draw)
WR_UNIT_MAIN(NULL, NULL, TESTS)
