/*
 * test_groups.c - priority groups and presale codes, the store-free rules:
 * group names, the split of a tick (held first, the standard line's exact
 * share with its carried fraction, groups in order, what one side cannot
 * use going to the other), the share as a floor over every prefix of a
 * long random run, the ETA rate rule, code generation, spelling, hash and
 * verdict. Expectations are worked out in the comment beside them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/groups.h"
#include "unit_main.h"

static void test_names(void **state)
{
    (void)state;
    assert_true(wr_groups_name_ok("fanclub", 7));
    assert_true(wr_groups_name_ok("a", 1));
    assert_true(wr_groups_name_ok("vip-2026", 8));
    assert_true(wr_groups_name_ok("abcdefghijklmnopqrstuvwxyz012345", 32));
    assert_false(wr_groups_name_ok("abcdefghijklmnopqrstuvwxyz0123456", 33));
    assert_false(wr_groups_name_ok("", 0));
    assert_false(wr_groups_name_ok("standard", 8));
    assert_true(wr_groups_name_ok("standard2", 9));
    assert_false(wr_groups_name_ok("Fanclub", 7));
    assert_false(wr_groups_name_ok("fan_club", 8));
    assert_false(wr_groups_name_ok("fan club", 8));
    assert_false(wr_groups_name_ok("fan\0club", 8));
}

/* one tick with lines {held, avail}: standard first */
static uint64_t split(uint64_t allowed, double share, int64_t *carry, const wr_groups_line_t *l,
                      size_t n, uint64_t *out)
{
    return wr_groups_split(allowed, wr_groups_share_micro(share), carry, l, n, out);
}

static void test_split_basic(void **state)
{
    (void)state;
    uint64_t out[3];
    int64_t carry = 0;
    /* 10 to admit, share 0.2, everyone has plenty: standard 2, first group 8 */
    wr_groups_line_t l[3] = {{0, 100}, {0, 100}, {0, 100}};
    assert_int_equal(split(10, 0.2, &carry, l, 3, out), 10);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 8);
    assert_int_equal(out[2], 0);
    assert_int_equal(carry, 0);

    /* 3 to admit: owed 0.6 -> 0 now, 0.6 carried; next tick 0.6 + 0.6 =
     * 1.2 -> 1, 0.2 carried */
    assert_int_equal(split(3, 0.2, &carry, l, 3, out), 3);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 3);
    assert_int_equal(carry, 600000);
    assert_int_equal(split(3, 0.2, &carry, l, 3, out), 3);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(carry, 200000);

    /* the first group runs short: the second takes the rest */
    carry = 0;
    wr_groups_line_t s[3] = {{0, 100}, {0, 3}, {0, 100}};
    assert_int_equal(split(10, 0.2, &carry, s, 3, out), 10);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 3);
    assert_int_equal(out[2], 5);

    /* the groups run short: the standard line takes the rest, no carry */
    carry = 500000;
    wr_groups_line_t g[3] = {{0, 100}, {0, 1}, {0, 2}};
    assert_int_equal(split(10, 0.2, &carry, g, 3, out), 10);
    assert_int_equal(out[0], 7);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 2);
    assert_int_equal(carry, 0); /* it got 7, owed 2.5 */

    /* the standard line has nobody: the groups take everything and no
     * share is saved up */
    carry = 900000;
    wr_groups_line_t e[2] = {{0, 0}, {0, 100}};
    assert_int_equal(split(7, 0.5, &carry, e, 2, out), 7);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 7);
    assert_int_equal(carry, 0);

    /* fewer people than allowed in all */
    carry = 0;
    wr_groups_line_t f[2] = {{0, 1}, {0, 2}};
    assert_int_equal(split(10, 0.2, &carry, f, 2, out), 3);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);

    /* share 0 and share 1 */
    carry = 0;
    assert_int_equal(split(10, 0, &carry, l, 3, out), 10);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 10);
    assert_int_equal(split(10, 1, &carry, l, 3, out), 10);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[1], 0);

    /* no groups at all: the standard line takes everything */
    carry = 0;
    wr_groups_line_t only[1] = {{0, 4}};
    assert_int_equal(split(10, 0.2, &carry, only, 1, out), 4);
    assert_int_equal(out[0], 4);
}

static void test_split_held(void **state)
{
    (void)state;
    uint64_t out[2];
    int64_t carry = 0;
    /* 10 allowed, 2 held returns of the standard line: A = 10, standard
     * owed 2, already met by its held returns: the group takes all 8 new */
    wr_groups_line_t a[2] = {{2, 100}, {0, 100}};
    assert_int_equal(split(10, 0.2, &carry, a, 2, out), 10);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 8);
    /* 3 held returns of the group: they count toward the group; standard
     * still owed 2 of A = 10 */
    wr_groups_line_t b[2] = {{0, 100}, {3, 100}};
    assert_int_equal(split(10, 0.2, &carry, b, 2, out), 10);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 5);
    /* held returns fill the tick: nobody new */
    wr_groups_line_t c[2] = {{6, 100}, {6, 100}};
    assert_int_equal(split(10, 0.2, &carry, c, 2, out), 12);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0);
}

/* xorshift64*: the test's own deterministic randomness */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* A long random run: in every tick the standard line has someone, so over
 * every prefix of ticks it got at least floor(share x admissions); each
 * tick admits min(allowed, people); every count within what each line had. */
static void test_split_share_floor(void **state)
{
    (void)state;
    static const double shares[] = {0.2, 0.1, 0.333333, 0.05, 0.75, 0.999999};
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (size_t k = 0; k < sizeof(shares) / sizeof(shares[0]); k++) {
        uint32_t sm = wr_groups_share_micro(shares[k]);
        int64_t carry = 0;
        uint64_t cum_a = 0, cum_s = 0;
        for (int t = 0; t < 20000; t++) {
            wr_groups_line_t l[4];
            uint64_t allowed = rnd(&seed) % 40;
            for (size_t i = 0; i < 4; i++) {
                /* held returns in the standard line only: a group's held
                 * returns come first and may fill a tick before the
                 * standard line's share (test_split_held) */
                l[i].held = i == 0 && rnd(&seed) % 8 == 0 ? rnd(&seed) % 3 : 0;
                l[i].avail = rnd(&seed) % 3 == 0 ? 0 : rnd(&seed) % 30;
            }
            /* the standard line always has more than a tick can take */
            l[0].avail = 40 + rnd(&seed) % 5;
            uint64_t people = 0, held = 0;
            for (size_t i = 0; i < 4; i++) {
                people += l[i].avail;
                held += l[i].held;
            }
            if (allowed < held)
                allowed = held;
            uint64_t out[4];
            uint64_t a = wr_groups_split(allowed, sm, &carry, l, 4, out);
            uint64_t fresh = allowed - held < people ? allowed - held : people;
            assert_int_equal(a, held + fresh);
            uint64_t sum = 0;
            for (size_t i = 0; i < 4; i++) {
                assert_true(out[i] <= l[i].avail);
                sum += out[i];
            }
            assert_int_equal(sum, fresh);
            /* a group gets someone only when every group before it is
             * exhausted or the groups' part is spent */
            for (size_t i = 2; i < 4; i++)
                if (out[i] > 0)
                    for (size_t j = 1; j < i; j++)
                        assert_int_equal(out[j], l[j].avail);
            assert_true(carry >= 0 && carry < 1000000);
            cum_a += a;
            cum_s += l[0].held + out[0];
            /* the floor, exact: what it got plus the carried fraction is
             * at least share x every admission so far */
            assert_true(cum_s * 1000000 + (uint64_t)carry >= (uint64_t)sm * cum_a);
            assert_true(cum_s >= (uint64_t)sm * cum_a / 1000000);
        }
    }
}

/* The share exact: 10 ticks of 3 admissions at 0.2 give the standard line
 * 6 = 0.2 x 30, never one short of the floor on the way. */
static void test_split_exact(void **state)
{
    (void)state;
    int64_t carry = 0;
    uint64_t cum = 0;
    wr_groups_line_t l[2] = {{0, 1000}, {0, 1000}};
    for (int t = 1; t <= 10; t++) {
        uint64_t out[2];
        assert_int_equal(split(3, 0.2, &carry, l, 2, out), 3);
        cum += out[0];
        assert_int_equal(cum, (uint64_t)(3 * t) * 2 / 10);
    }
    assert_int_equal(cum, 6);
    assert_int_equal(carry, 0);
}

static void test_eta_rate(void **state)
{
    (void)state;
    /* 120 in the last minute: 2/s whatever the line */
    assert_true(wr_groups_eta_rate(0, 120, 0.2, 50, 1) == 2.0);
    assert_true(wr_groups_eta_rate(3, 120, 0.2, 50, 1) == 2.0);
    /* none yet: standard 0.2 x 50 = 10; the first group waiting 40; others null */
    assert_true(wr_groups_eta_rate(0, 0, 0.2, 50, 2) == 10.0);
    assert_true(wr_groups_eta_rate(2, 0, 0.2, 50, 2) == 40.0);
    assert_true(wr_groups_eta_rate(1, 0, 0.2, 50, 2) < 0);
    assert_true(wr_groups_eta_rate(3, 0, 0.2, 50, 2) < 0);
    assert_true(wr_groups_eta_rate(1, 0, 0.2, 50, 0) < 0);
}

static void test_share_micro(void **state)
{
    (void)state;
    assert_int_equal(wr_groups_share_micro(0), 0);
    assert_int_equal(wr_groups_share_micro(0.2), 200000);
    assert_int_equal(wr_groups_share_micro(1), 1000000);
    assert_int_equal(wr_groups_share_micro(0.0000004), 0);
    assert_int_equal(wr_groups_share_micro(0.0000006), 1);
}

static void test_codes(void **state)
{
    (void)state;
    char a[WR_CODE_LEN + 1], b[WR_CODE_LEN + 1];
    assert_int_equal(wr_groups_code_new(a), WR_OK);
    assert_int_equal(wr_groups_code_new(b), WR_OK);
    assert_int_equal(strlen(a), WR_CODE_LEN);
    assert_true(strcmp(a, b) != 0);
    assert_true(WR_CODE_LEN <= WR_CODE_MAX && WR_CODE_BITS >= 80);
    for (size_t i = 0; i < WR_CODE_LEN; i++) {
        if (i % 6 == 5) {
            assert_int_equal(a[i], '-');
            continue;
        }
        assert_non_null(strchr("0123456789ABCDEFGHJKMNPQRSTVWXYZ", a[i]));
    }
    /* every symbol turns up: 2000 codes x 20 symbols, 32 symbols */
    int seen[128] = {0};
    for (int n = 0; n < 2000; n++) {
        assert_int_equal(wr_groups_code_new(a), WR_OK);
        for (size_t i = 0; i < WR_CODE_LEN; i++)
            seen[(unsigned char)a[i]]++;
    }
    for (const char *p = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"; *p; p++)
        assert_true(seen[(unsigned char)*p] > 800); /* 1250 expected */

    /* spelling: case, O/I/L, refusals */
    char n[WR_CODE_MAX + 1];
    assert_true(wr_groups_code_norm("ab-cd", 5, n));
    assert_string_equal(n, "AB-CD");
    assert_true(wr_groups_code_norm("oIl0", 4, n));
    assert_string_equal(n, "0110");
    assert_false(wr_groups_code_norm("AB CD", 5, n));
    assert_string_equal(n, "");
    assert_false(wr_groups_code_norm("", 0, n));
    assert_false(wr_groups_code_norm("A\0B", 3, n));
    assert_false(wr_groups_code_norm("AB_CD", 5, n));
    assert_true(wr_groups_code_norm("ABCDEFGHJKABCDEFGHJKABCDEFGHJK12", 32, n));
    assert_false(wr_groups_code_norm("ABCDEFGHJKABCDEFGHJKABCDEFGHJK123", 33, n));
    /* a generated code's 20 symbols however they were typed: its spelling */
    const char *typed[] = {"7K2QD-M9XWA-0RT4E-HZ3PB", "7k2qd m9xwa 0rt4e hz3pb",
                           "7K2QDM9XWA0RT4EHZ3PB", "  7K2QD-M9XWA-ORT4E-HZ3PB\n",
                           "7K2QD - M9XWA - 0RT4E - HZ3PB"};
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++) {
        assert_true(wr_groups_code_norm(typed[i], strlen(typed[i]), n));
        assert_string_equal(n, "7K2QD-M9XWA-0RT4E-HZ3PB");
    }
    assert_false(wr_groups_code_norm("7K2QD-M9XWA-0RT4E-HZ3P_", 23, n)); /* a stray symbol */
    assert_false(wr_groups_code_norm(" \t ", 3, n));

    /* the hash: SHA-256 of the one spelling; "ABC" is the FIPS 180-2
     * example's bytes upper-cased: sha256("ABC") */
    char h1[WR_CODE_HASH_HEX + 1], h2[WR_CODE_HASH_HEX + 1];
    assert_int_equal(wr_groups_code_hash("ABC", 3, h1), WR_OK);
    assert_string_equal(h1, "b5d4045c3f466fa91fe2cc6abe79232a1a57cdf104f7a26e716e0a1e2789df78");
    assert_int_equal(wr_groups_code_hash("abc", 3, h2), WR_OK);
    assert_string_equal(h1, h2);
    assert_int_equal(wr_groups_code_hash("a b", 3, h2), WR_EINVAL);

    /* verdicts: revoked, then expired, then used up */
    assert_int_equal(wr_groups_code_verdict(false, -1, 1, 1000), WR_CODE_OK);
    assert_int_equal(wr_groups_code_verdict(false, 1001, 1, 1000), WR_CODE_OK);
    assert_int_equal(wr_groups_code_verdict(false, 1000, 1, 1000), WR_CODE_EXPIRED);
    assert_int_equal(wr_groups_code_verdict(false, -1, 0, 1000), WR_CODE_USED_UP);
    assert_int_equal(wr_groups_code_verdict(true, 5, 0, 1000), WR_CODE_REVOKED);
    assert_int_equal(wr_groups_code_verdict(false, 5, 0, 1000), WR_CODE_EXPIRED);
    assert_string_equal(wr_groups_code_reason_name(WR_CODE_USED_UP), "usedUp");
    assert_string_equal(wr_groups_code_reason_name(WR_CODE_UNKNOWN), "unknown");
    assert_string_equal(wr_groups_code_reason_name(WR_CODE_REVOKED), "revoked");
    assert_string_equal(wr_groups_code_reason_name(WR_CODE_EXPIRED), "expired");
}

#define TESTS(X)                                                                                   \
    X(test_names)                                                                                  \
    X(test_split_basic)                                                                            \
    X(test_split_held)                                                                             \
    X(test_split_share_floor)                                                                      \
    X(test_split_exact)                                                                            \
    X(test_eta_rate)                                                                               \
    X(test_share_micro)                                                                            \
    X(test_codes)
WR_UNIT_MAIN(NULL, NULL, TESTS)
