/*
 * test_challenge.c - join challenges (challenge.h): the format, the
 * signature, the binding to caller and queue, expiry, the zero-bit count
 * across byte boundaries, the reasons in their order, rotation (a previous
 * key), and the keyed HMAC and one-shot digest it rests on (crypto.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/crypto.h"
#include "core/challenge.h"
#include "unit_main.h"

#define SECRET "a-token-secret-shared-by-every-instance"
#define NOW    1764460800000LL

static wr_challenge_key_t *key_of(const char *secret)
{
    wr_challenge_key_t *k = wr_challenge_key_new((const uint8_t *)secret, strlen(secret));
    assert_non_null(k);
    return k;
}

static wr_challenge_reason_t check(wr_challenge_key_t *k, const char *q, const char *u,
                                   const char *c, const char *nonce, unsigned req, int64_t now)
{
    wr_challenge_key_t *keys[1] = {k};
    return wr_challenge_check(keys, 1, q, u, c, c ? strlen(c) : 0, nonce, nonce ? strlen(nonce) : 0,
                              req, now);
}

/* the keyed HMAC is RFC 2104's: the same MAC as the one-shot, short and long keys */
static void test_keyed_hmac_matches(void **state)
{
    (void)state;
    static const size_t lens[] = {0, 1, 32, 64, 65, 200};
    uint8_t key[200], a[32], b[32];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        wr_crypto_hmac_t *h = wr_crypto_hmac_new(key, lens[i]);
        assert_non_null(h);
        for (int r = 0; r < 2; r++) { /* reused */
            assert_int_equal(wr_crypto_hmac_mac(h, "hello world", 11 - (size_t)r, a), WR_OK);
            assert_int_equal(wr_crypto_hmac_sha256(key, lens[i], "hello world", 11 - (size_t)r, b),
                             WR_OK);
            assert_memory_equal(a, b, 32);
        }
        wr_crypto_hmac_free(h);
    }
    /* RFC 4231 test case 2 */
    wr_crypto_hmac_t *h = wr_crypto_hmac_new((const uint8_t *)"Jefe", 4);
    assert_int_equal(wr_crypto_hmac_mac(h, "what do ya want for nothing?", 28, a), WR_OK);
    static const uint8_t want[4] = {0x5b, 0xdc, 0xc1, 0x46};
    assert_memory_equal(a, want, 4);
    wr_crypto_hmac_free(h);
}

/* the reused digest context gives SHA-256 each time */
static void test_sha256_digest(void **state)
{
    (void)state;
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    uint8_t d[32];
    static const uint8_t abc[4] = {0xba, 0x78, 0x16, 0xbf};
    for (int r = 0; r < 3; r++) {
        assert_int_equal(wr_crypto_sha256_digest(h, "abc", 3, d), WR_OK);
        assert_memory_equal(d, abc, 4);
    }
    wr_crypto_sha256_free(h);
}

/* bits counted from the most significant bit of the first byte on */
static void test_zero_bits(void **state)
{
    (void)state;
    /* a digest that starts with head (its first bytes) and goes on 0xff:
     * how many zero bits lead it */
    static const struct {
        uint8_t head[5];
        size_t n;
        int bits;
    } cases[] = {
        {{0xff}, 1, 0},
        {{0x7f}, 1, 1},
        {{0x01}, 1, 7},
        {{0x00, 0x80}, 2, 8},
        {{0x00, 0x40}, 2, 9},
        {{0x00, 0x00, 0x0f}, 3, 20},
        {{0x00, 0x00, 0x00, 0x01}, 4, 31},
        {{0x00, 0x00, 0x00, 0x00, 0xff}, 5, 32},
    };
    uint8_t d[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(d, 0xff, sizeof d);
        memcpy(d, cases[i].head, cases[i].n);
        assert_int_equal(wr_challenge_zero_bits(d, 32), cases[i].bits);
    }
    memset(d, 0, sizeof d);
    assert_int_equal(wr_challenge_zero_bits(d, 32), 256);
    assert_int_equal(wr_challenge_zero_bits(d, 0), 0);
}

/* the format: the API's alphabet, at most 256 chars, expiresAt readable */
static void test_issue_format(void **state)
{
    (void)state;
    wr_challenge_key_t *k = key_of(SECRET);
    char c[WR_CHALLENGE_MAX + 1];
    assert_int_equal(wr_challenge_issue(k, "sale", "u1", 20, NOW + WR_CHALLENGE_TTL_MS, c), WR_OK);
    assert_true(strlen(c) <= WR_CHALLENGE_MAX);
    assert_int_equal(
        strspn(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-"), strlen(c));
    assert_true(strncmp(c, "1.20.", 5) == 0);
    assert_int_equal(wr_challenge_expires_at(c, strlen(c)), NOW + WR_CHALLENGE_TTL_MS);
    /* longest ids still fit */
    char q[65], u[129];
    memset(q, 'q', 64);
    q[64] = '\0';
    memset(u, 'u', 128);
    u[128] = '\0';
    assert_int_equal(wr_challenge_issue(k, q, u, 32, 999999999999999LL, c), WR_OK);
    assert_true(strlen(c) <= WR_CHALLENGE_MAX);
    /* the same inputs, the same challenge (stateless); bad arguments refused */
    char c2[WR_CHALLENGE_MAX + 1];
    assert_int_equal(wr_challenge_issue(k, q, u, 32, 999999999999999LL, c2), WR_OK);
    assert_string_equal(c, c2);
    assert_int_equal(wr_challenge_issue(k, "bad name", "u1", 1, NOW, c), WR_EINVAL);
    assert_int_equal(wr_challenge_issue(k, "sale", "", 1, NOW, c), WR_EINVAL);
    assert_int_equal(wr_challenge_issue(k, "sale", "u1", 33, NOW, c), WR_EINVAL);
    assert_int_equal(wr_challenge_issue(k, "sale", "u1", 1, 0, c), WR_EINVAL);
    assert_int_equal(wr_challenge_issue(k, "sale", "u1", 1, 1000000000000000LL, c), WR_EINVAL);
    assert_null(wr_challenge_key_new(NULL, 0));
    assert_null(wr_challenge_key_new((const uint8_t *)"", 0));
    wr_challenge_key_free(k);
}

/* solved: ok; each refusal reason in its order */
static void test_check_reasons(void **state)
{
    (void)state;
    wr_challenge_key_t *k = key_of(SECRET);
    char c[WR_CHALLENGE_MAX + 1], nonce[WR_CHALLENGE_NONCE_MAX + 1];
    int64_t exp = NOW + WR_CHALLENGE_TTL_MS;
    assert_int_equal(wr_challenge_issue(k, "sale", "u1", 8, exp, c), WR_OK);
    assert_true(wr_challenge_solve(c, 8, 1u << 20, nonce) > 0);
    assert_int_equal(check(k, "sale", "u1", c, nonce, 8, NOW), WR_CHALLENGE_OK);
    assert_int_equal(check(k, "sale", "u1", c, nonce, 0, NOW), WR_CHALLENGE_OK);
    /* missing */
    assert_int_equal(check(k, "sale", "u1", NULL, nonce, 8, NOW), WR_CHALLENGE_MISSING);
    assert_int_equal(check(k, "sale", "u1", "", nonce, 8, NOW), WR_CHALLENGE_MISSING);
    /* expired: at and after expiresAt; before it, fine */
    assert_int_equal(check(k, "sale", "u1", c, nonce, 8, exp), WR_CHALLENGE_EXPIRED);
    assert_int_equal(check(k, "sale", "u1", c, nonce, 8, exp + 1), WR_CHALLENGE_EXPIRED);
    assert_int_equal(check(k, "sale", "u1", c, nonce, 8, exp - 1), WR_CHALLENGE_OK);
    /* the binding: another caller, another queue */
    assert_int_equal(check(k, "sale", "u2", c, nonce, 8, NOW), WR_CHALLENGE_WRONG_USER);
    assert_int_equal(check(k, "other", "u1", c, nonce, 8, NOW), WR_CHALLENGE_WRONG_USER);
    /* the same binding over NUL-joined fields: ("sale","u1") != ("sal","eu1") */
    assert_int_equal(check(k, "sal", "eu1", c, nonce, 8, NOW), WR_CHALLENGE_WRONG_USER);
    /* another secret: none of ours */
    wr_challenge_key_t *other = key_of("another-secret-of-another-deployment");
    assert_int_equal(check(other, "sale", "u1", c, nonce, 8, NOW), WR_CHALLENGE_MALFORMED);
    /* nonce format */
    assert_int_equal(check(k, "sale", "u1", c, "", 8, NOW), WR_CHALLENGE_MALFORMED);
    assert_int_equal(check(k, "sale", "u1", c, NULL, 8, NOW), WR_CHALLENGE_MALFORMED);
    assert_int_equal(check(k, "sale", "u1", c, "ab-c", 8, NOW), WR_CHALLENGE_MALFORMED);
    char longn[66];
    memset(longn, 'a', 65);
    longn[65] = '\0';
    assert_int_equal(check(k, "sale", "u1", c, longn, 8, NOW), WR_CHALLENGE_MALFORMED);
    longn[64] = '\0'; /* 64 is allowed: a format ok, probably too few bits */
    wr_challenge_reason_t r = check(k, "sale", "u1", c, longn, 8, NOW);
    assert_true(r == WR_CHALLENGE_OK || r == WR_CHALLENGE_INSUFFICIENT);
    /* insufficient: the queue now asks for more than this nonce has */
    unsigned have = 8;
    while (check(k, "sale", "u1", c, nonce, have + 1, NOW) == WR_CHALLENGE_OK)
        have++;
    assert_int_equal(check(k, "sale", "u1", c, nonce, have + 1, NOW), WR_CHALLENGE_INSUFFICIENT);
    assert_int_equal(check(k, "sale", "u1", c, "x", 32, NOW), WR_CHALLENGE_INSUFFICIENT);
    wr_challenge_key_free(other);
    wr_challenge_key_free(k);
}

/* a solution counts by its own bits: a challenge issued at 20 bits solved
 * with 4 passes a queue now at 4 (the difficulty was lowered) */
static void test_counts_own_bits(void **state)
{
    (void)state;
    wr_challenge_key_t *k = key_of(SECRET);
    char c[WR_CHALLENGE_MAX + 1], nonce[WR_CHALLENGE_NONCE_MAX + 1];
    assert_int_equal(wr_challenge_issue(k, "sale", "u1", 20, NOW + 1000, c), WR_OK);
    assert_true(wr_challenge_solve(c, 4, 1u << 16, nonce) > 0);
    assert_int_equal(check(k, "sale", "u1", c, nonce, 4, NOW), WR_CHALLENGE_OK);
    wr_challenge_key_free(k);
}

/* every edit of a valid challenge is refused (malformed, or wrongUser for
 * the binding part), and malformed shapes are malformed */
static void test_tampered_and_malformed(void **state)
{
    (void)state;
    wr_challenge_key_t *k = key_of(SECRET);
    char c[WR_CHALLENGE_MAX + 1], t[WR_CHALLENGE_MAX + 2], nonce[WR_CHALLENGE_NONCE_MAX + 1];
    assert_int_equal(wr_challenge_issue(k, "sale", "u1", 4, NOW + 60000, c), WR_OK);
    assert_true(wr_challenge_solve(c, 4, 1u << 16, nonce) > 0);
    size_t n = strlen(c);
    const char *bind_at = strrchr(c, '.') + 1;
    for (size_t i = 0; i < n; i++) {
        memcpy(t, c, n + 1);
        t[i] = t[i] == 'A' ? 'B' : 'A';
        wr_challenge_reason_t r = check(k, "sale", "u1", t, nonce, 4, NOW);
        if (c + i >= bind_at)
            assert_int_equal(r, WR_CHALLENGE_WRONG_USER);
        else
            assert_int_equal(r, WR_CHALLENGE_MALFORMED);
    }
    /* raising bits or expiry in the text breaks the tag */
    char *dot = strchr(c + 2, '.');
    snprintf(t, sizeof t, "1.5%s", dot);
    assert_int_equal(check(k, "sale", "u1", t, nonce, 4, NOW), WR_CHALLENGE_MALFORMED);
    static const char *const bad[] = {
        "x",
        "1.",
        "1.20",
        "2.20.1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
        "1.020.1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
        "1.33.1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
        "1.20.0.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
        "1.20.1.AAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
        "1.20.1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.",
        "1.20.1.AAAAAAAA=AAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
        "1.20.1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.x",
        "1.20.1000000000000000.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
        "1.-1.1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(check(k, "sale", "u1", bad[i], nonce, 4, NOW), WR_CHALLENGE_MALFORMED);
    char big[300];
    memset(big, 'A', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(check(k, "sale", "u1", big, nonce, 4, NOW), WR_CHALLENGE_MALFORMED);
    /* not NUL-terminated: only clen bytes are read */
    wr_challenge_key_t *keys[1] = {k};
    memcpy(t, c, n);
    t[n] = 'Z';
    assert_int_equal(wr_challenge_check(keys, 1, "sale", "u1", t, n, nonce, strlen(nonce), 4, NOW),
                     WR_CHALLENGE_OK);
    wr_challenge_key_free(k);
}

/* rotation: a challenge of the previous secret still passes while that
 * key is given; the order of keys does not matter; NULL keys skipped */
static void test_previous_key(void **state)
{
    (void)state;
    wr_challenge_key_t *old = key_of("the-previous-secret-0123456789abc");
    wr_challenge_key_t *cur = key_of(SECRET);
    char c[WR_CHALLENGE_MAX + 1], nonce[WR_CHALLENGE_NONCE_MAX + 1];
    assert_int_equal(wr_challenge_issue(old, "sale", "u1", 2, NOW + 1000, c), WR_OK);
    assert_true(wr_challenge_solve(c, 2, 1000, nonce) > 0);
    wr_challenge_key_t *both[3] = {cur, NULL, old};
    assert_int_equal(
        wr_challenge_check(both, 3, "sale", "u1", c, strlen(c), nonce, strlen(nonce), 2, NOW),
        WR_CHALLENGE_OK);
    assert_int_equal(
        wr_challenge_check(both, 1, "sale", "u1", c, strlen(c), nonce, strlen(nonce), 2, NOW),
        WR_CHALLENGE_MALFORMED);
    assert_int_equal(
        wr_challenge_check(both, 3, "sale", "u2", c, strlen(c), nonce, strlen(nonce), 2, NOW),
        WR_CHALLENGE_WRONG_USER);
    wr_challenge_key_free(old);
    wr_challenge_key_free(cur);
}

/* the reference solver: its nonce has the bits, and it gives up */
static void test_solve(void **state)
{
    (void)state;
    char nonce[WR_CHALLENGE_NONCE_MAX + 1];
    assert_int_equal(wr_challenge_solve("abc", 0, 10, nonce), 1);
    assert_string_equal(nonce, "0");
    uint64_t tries = wr_challenge_solve("abc", 12, 1u << 20, nonce);
    assert_true(tries > 0);
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    char buf[80];
    uint8_t d[32];
    int n = snprintf(buf, sizeof buf, "abc:%s", nonce);
    assert_int_equal(wr_crypto_sha256_digest(h, buf, (size_t)n, d), WR_OK);
    assert_true(wr_challenge_zero_bits(d, 32) >= 12);
    wr_crypto_sha256_free(h);
    assert_int_equal(wr_challenge_solve("abc", 32, 5, nonce), 0);
    assert_string_equal(nonce, "");
    assert_string_equal(wr_challenge_reason_name(WR_CHALLENGE_WRONG_USER), "wrongUser");
    assert_string_equal(wr_challenge_reason_name(WR_CHALLENGE_INSUFFICIENT), "insufficient");
    assert_string_equal(wr_challenge_reason_name((wr_challenge_reason_t)99), "malformed");
}

/* the gates' spent ids (API 1.3): the same on every instance whatever the
 * key, a jti's shape, and apart for every kind and every list of parts */
static void test_spent_id(void **state)
{
    (void)state;
    wr_challenge_key_t *k = key_of(SECRET), *other = key_of("another-secret");
    char c[WR_CHALLENGE_MAX + 1], id[WR_CHALLENGE_ID_LEN + 1], id2[WR_CHALLENGE_ID_LEN + 1];
    assert_int_equal(wr_challenge_issue(k, "q1", "u1", 6, NOW + 60000, c), WR_OK);
    const char *p1[] = {c};
    size_t l1[] = {strlen(c)};
    assert_int_equal(wr_challenge_spent_id(k, "challenge v1", p1, l1, 1, id), WR_OK);
    assert_int_equal(strlen(id), WR_CHALLENGE_ID_LEN);
    for (size_t i = 0; i < WR_CHALLENGE_ID_LEN; i++)
        assert_true((id[i] >= 'A' && id[i] <= 'Z') || (id[i] >= 'a' && id[i] <= 'z') ||
                    (id[i] >= '0' && id[i] <= '9') || id[i] == '-' || id[i] == '_');
    /* unkeyed: another instance's key gives the same id */
    assert_int_equal(wr_challenge_spent_id(other, "challenge v1", p1, l1, 1, id2), WR_OK);
    assert_string_equal(id, id2);
    /* another kind, another challenge: another id */
    assert_int_equal(wr_challenge_spent_id(k, "captcha verdict v1", p1, l1, 1, id2), WR_OK);
    assert_string_not_equal(id, id2);
    char c2[WR_CHALLENGE_MAX + 1];
    assert_int_equal(wr_challenge_issue(k, "q1", "u2", 6, NOW + 60000, c2), WR_OK);
    const char *p2[] = {c2};
    size_t l2[] = {strlen(c2)};
    assert_int_equal(wr_challenge_spent_id(k, "challenge v1", p2, l2, 1, id2), WR_OK);
    assert_string_not_equal(id, id2);
    /* parts are separated: ("ab","c") is not ("a","bc") */
    const char *pa[] = {"ab", "c"}, *pb[] = {"a", "bc"};
    size_t la[] = {2, 1}, lb[] = {1, 2};
    assert_int_equal(wr_challenge_spent_id(k, "k", pa, la, 2, id), WR_OK);
    assert_int_equal(wr_challenge_spent_id(k, "k", pb, lb, 2, id2), WR_OK);
    assert_string_not_equal(id, id2);
    /* bad arguments, too much input */
    assert_int_equal(wr_challenge_spent_id(NULL, "k", pa, la, 2, id), WR_EINVAL);
    assert_int_equal(wr_challenge_spent_id(k, NULL, pa, la, 2, id), WR_EINVAL);
    static char big[WR_CHALLENGE_ID_INPUT_MAX];
    memset(big, 'x', sizeof big);
    const char *pbig[] = {big};
    size_t lbig[] = {sizeof big};
    assert_int_equal(wr_challenge_spent_id(k, "k", pbig, lbig, 1, id), WR_EINVAL);
    assert_string_equal(wr_challenge_reason_name(WR_CHALLENGE_USED), "used");
    wr_challenge_key_free(k);
    wr_challenge_key_free(other);
}

#define TESTS(X)                                                                                   \
    X(test_keyed_hmac_matches)                                                                     \
    X(test_sha256_digest)                                                                          \
    X(test_zero_bits)                                                                              \
    X(test_issue_format)                                                                           \
    X(test_check_reasons)                                                                          \
    X(test_counts_own_bits)                                                                        \
    X(test_tampered_and_malformed)                                                                 \
    X(test_previous_key)                                                                           \
    X(test_solve)                                                                                  \
    X(test_spent_id)
WR_UNIT_MAIN(NULL, NULL, TESTS)
