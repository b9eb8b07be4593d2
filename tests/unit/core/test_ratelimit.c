/* Unit tests for ratelimit: token buckets against a fake clock, poll
 * pacing, the LRU bound under a flood of keys, CIDR parsing and the client
 * address behind trusted proxies. Expected values are computed by hand in
 * the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/ratelimit.h"
#include "unit_main.h"

static int64_t fake_now;

static int64_t fake_clock(void *arg)
{
    (void)arg;
    return fake_now;
}

static wr_ratelimit_t *mk(double rate, double burst, size_t max)
{
    wr_ratelimit_opts_t o = {rate, burst, max, fake_clock, NULL};
    wr_ratelimit_t *rl = NULL;
    assert_int_equal(wr_ratelimit_new(&o, &rl), WR_OK);
    return rl;
}

static bool take(wr_ratelimit_t *rl, const char *k, uint32_t *ra)
{
    return wr_ratelimit_take(rl, k, strlen(k), ra);
}

static void test_bucket_burst_then_rate(void **state)
{
    (void)state;
    fake_now = 1000000;
    wr_ratelimit_t *rl = mk(10, 20, 16); /* 10/s, burst 20 */
    uint32_t ra = 0;
    for (int i = 0; i < 20; i++)
        assert_true(take(rl, "1.2.3.4", &ra));
    assert_false(take(rl, "1.2.3.4", &ra));
    assert_int_equal(ra, 100); /* one token at 10/s = 100 ms */
    /* another key is independent */
    assert_true(take(rl, "1.2.3.5", &ra));
    /* 50 ms later: half a token, still refused, 50 ms to go */
    fake_now += 50000;
    assert_false(take(rl, "1.2.3.4", &ra));
    assert_int_equal(ra, 50);
    /* 1 s after the burst: 10 tokens (and not more) */
    fake_now += 950000;
    for (int i = 0; i < 10; i++)
        assert_true(take(rl, "1.2.3.4", &ra));
    assert_false(take(rl, "1.2.3.4", &ra));
    /* a long pause refills only to the burst */
    fake_now += 3600LL * 1000000;
    int n = 0;
    while (take(rl, "1.2.3.4", &ra) && n < 100)
        n++;
    assert_int_equal(n, 20);
    assert_int_equal(wr_ratelimit_size(rl), 2);
    wr_ratelimit_free(rl);
}

static void test_fractional_rate_and_clock_step_back(void **state)
{
    (void)state;
    fake_now = 5000000;
    wr_ratelimit_t *rl = mk(0.5, 1, 4); /* one every 2 s */
    uint32_t ra = 0;
    assert_true(take(rl, "k", &ra));
    assert_false(take(rl, "k", &ra));
    assert_int_equal(ra, 2000);
    fake_now -= 10000000; /* clock steps back 10 s: no refill, no crash */
    assert_false(take(rl, "k", &ra));
    assert_int_equal(ra, 2000);
    fake_now += 1999000;
    assert_false(take(rl, "k", &ra));
    assert_int_equal(ra, 1); /* 1 ms left */
    fake_now += 1000;
    assert_true(take(rl, "k", &ra));
    wr_ratelimit_free(rl);
}

static void test_off_allows_everything(void **state)
{
    (void)state;
    wr_ratelimit_t *rl = mk(0, 20, 4);
    assert_false(wr_ratelimit_enabled(rl));
    for (int i = 0; i < 1000; i++)
        assert_true(take(rl, "k", NULL));
    assert_int_equal(wr_ratelimit_size(rl), 0);
    assert_true(wr_ratelimit_pace_check(rl, "k", 1, NULL));
    wr_ratelimit_free(rl);
}

static void test_lru_bound_under_flood(void **state)
{
    (void)state;
    fake_now = 0;
    wr_ratelimit_t *rl = mk(1, 2, 100);
    char k[32];
    /* "hot" exhausts its bucket, then 10,000 spoofed keys arrive, touching
     * "hot" every 50 keys so it stays recent. */
    assert_true(take(rl, "hot", NULL));
    assert_true(take(rl, "hot", NULL));
    assert_false(take(rl, "hot", NULL));
    for (int i = 0; i < 10000; i++) {
        snprintf(k, sizeof(k), "10.0.%d.%d", i / 256, i % 256);
        assert_true(take(rl, k, NULL)); /* each new key starts full */
        if (i % 50 == 0)
            assert_false(take(rl, "hot", NULL)); /* still limited: not evicted */
        assert_true(wr_ratelimit_size(rl) <= 100);
    }
    assert_int_equal(wr_ratelimit_size(rl), 100);
    /* 10,001 keys through a table of 100: 9,901 evictions */
    assert_int_equal(wr_ratelimit_evictions(rl), 9901);
    /* the first spoofed key was evicted: it starts full again */
    assert_true(take(rl, "10.0.0.0", NULL));
    assert_true(take(rl, "10.0.0.0", NULL));
    wr_ratelimit_free(rl);
}

static void test_forget_reuses_entries(void **state)
{
    (void)state;
    fake_now = 0;
    wr_ratelimit_t *rl = mk(1, 1, 3);
    assert_true(take(rl, "a", NULL));
    assert_true(take(rl, "b", NULL));
    assert_int_equal(wr_ratelimit_size(rl), 2);
    wr_ratelimit_forget(rl, "a", 1);
    wr_ratelimit_forget(rl, "zz", 2); /* absent: no-op */
    assert_int_equal(wr_ratelimit_size(rl), 1);
    assert_true(take(rl, "a", NULL)); /* fresh bucket */
    assert_false(take(rl, "b", NULL));
    assert_true(take(rl, "c", NULL));
    assert_int_equal(wr_ratelimit_size(rl), 3);
    assert_int_equal(wr_ratelimit_evictions(rl), 0);
    assert_true(take(rl, "d", NULL)); /* full: evicts the LRU entry, "a" */
    assert_int_equal(wr_ratelimit_evictions(rl), 1);
    assert_true(take(rl, "a", NULL)); /* "a" is new again; evicts "b" */
    assert_true(take(rl, "b", NULL));
    wr_ratelimit_free(rl);
}

static void test_pacing(void **state)
{
    (void)state;
    fake_now = 0;
    /* early credits: 3, refilled at 1 per second */
    wr_ratelimit_t *rl = mk(1, 3, 16);
    const char key[] = "q\0user1";
    uint32_t ra = 0;
    /* no note yet: allowed, nothing stored */
    assert_true(wr_ratelimit_pace_check(rl, key, sizeof(key), &ra));
    assert_int_equal(wr_ratelimit_size(rl), 0);
    wr_ratelimit_pace_note(rl, key, sizeof(key), 500); /* told 1000 ms, 50% */
    /* 3 early polls at +10 ms pass on credits, the 4th is refused */
    fake_now += 10000;
    for (int i = 0; i < 3; i++)
        assert_true(wr_ratelimit_pace_check(rl, key, sizeof(key), &ra));
    assert_false(wr_ratelimit_pace_check(rl, key, sizeof(key), &ra));
    assert_int_equal(ra, 490); /* 500 - 10 ms */
    /* an on-time poll passes without spending */
    fake_now = 500000;
    assert_true(wr_ratelimit_pace_check(rl, key, sizeof(key), &ra));
    wr_ratelimit_pace_note(rl, key, sizeof(key), 500);
    /* by now 0.5 s refilled half a credit: the next early poll is refused */
    fake_now += 1;
    assert_false(wr_ratelimit_pace_check(rl, key, sizeof(key), &ra));
    assert_int_equal(ra, 500);
    /* another identity is not affected */
    const char other[] = "q\0user2";
    assert_true(wr_ratelimit_pace_check(rl, other, sizeof(other), &ra));
    /* forgetting (left, admitted) lifts it */
    wr_ratelimit_forget(rl, key, sizeof(key));
    assert_true(wr_ratelimit_pace_check(rl, key, sizeof(key), &ra));
    wr_ratelimit_free(rl);
}

static void test_cidrs_parse(void **state)
{
    (void)state;
    wr_cidr_t nets[4];
    size_t n = 99;
    char bad[32];
    assert_int_equal(wr_ratelimit_cidrs_parse("", nets, 4, &n, bad, sizeof(bad)), WR_OK);
    assert_int_equal(n, 0);
    assert_int_equal(
        wr_ratelimit_cidrs_parse(" 10.0.0.0/8 , 127.0.0.1,::1/128", nets, 4, &n, bad, sizeof(bad)),
        WR_OK);
    assert_int_equal(n, 3);
    assert_int_equal(nets[0].prefix, 96 + 8);
    assert_int_equal(nets[1].prefix, 128);
    assert_int_equal(nets[2].prefix, 128);
    assert_true(wr_ratelimit_cidrs_match(nets, n, "10.255.1.2"));
    assert_false(wr_ratelimit_cidrs_match(nets, n, "11.0.0.1"));
    assert_true(wr_ratelimit_cidrs_match(nets, n, "127.0.0.1"));
    assert_false(wr_ratelimit_cidrs_match(nets, n, "127.0.0.2"));
    assert_true(wr_ratelimit_cidrs_match(nets, n, "::1"));
    assert_true(wr_ratelimit_cidrs_match(nets, n, "::ffff:10.1.1.1")); /* mapped form */
    assert_false(wr_ratelimit_cidrs_match(nets, n, "garbage"));
    assert_false(wr_ratelimit_cidrs_match(nets, n, ""));
    assert_int_equal(wr_ratelimit_cidrs_parse("192.168.1.0/23", nets, 4, &n, NULL, 0), WR_OK);
    assert_true(wr_ratelimit_cidrs_match(nets, n, "192.168.0.7"));
    assert_false(wr_ratelimit_cidrs_match(nets, n, "192.168.2.0"));
    assert_int_equal(wr_ratelimit_cidrs_parse("0.0.0.0/0", nets, 4, &n, NULL, 0), WR_OK);
    assert_true(wr_ratelimit_cidrs_match(nets, n, "8.8.8.8"));

    const char *bads[] = {"10.0.0.0/33", "10.0.0.0/", "1.2.3", "10.0.0.0/8,,1.1.1.1",
                          "::1/129",     "x/8",       ",",     "10.0.0.0/-1"};
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
        assert_int_equal(wr_ratelimit_cidrs_parse(bads[i], nets, 4, &n, bad, sizeof(bad)),
                         WR_EINVAL);
    assert_int_equal(wr_ratelimit_cidrs_parse("1.1.1.1,x", nets, 4, &n, bad, sizeof(bad)),
                     WR_EINVAL);
    assert_string_equal(bad, "x");
    assert_int_equal(wr_ratelimit_cidrs_parse("1.1.1.1,2.2.2.2,3.3.3.3", nets, 2, &n, NULL, 0),
                     WR_ELIMIT);
}

static void test_client_addr(void **state)
{
    (void)state;
    wr_cidr_t nets[4];
    size_t n;
    char out[64];
    assert_int_equal(wr_ratelimit_cidrs_parse("127.0.0.1,10.0.0.0/8", nets, 4, &n, NULL, 0), WR_OK);
    /* untrusted peer: XFF ignored */
    wr_ratelimit_client_addr("203.0.113.9", "1.1.1.1", nets, n, out, sizeof(out));
    assert_string_equal(out, "203.0.113.9");
    /* trusted peer, no XFF: the peer */
    wr_ratelimit_client_addr("127.0.0.1", NULL, nets, n, out, sizeof(out));
    assert_string_equal(out, "127.0.0.1");
    /* trusted peer: right-most untrusted hop; the forged left part is ignored */
    wr_ratelimit_client_addr("127.0.0.1", "6.6.6.6, 198.51.100.7, 10.1.2.3", nets, n, out,
                             sizeof(out));
    assert_string_equal(out, "198.51.100.7");
    /* every hop trusted: the left-most */
    wr_ratelimit_client_addr("127.0.0.1", "10.0.0.5,10.0.0.6", nets, n, out, sizeof(out));
    assert_string_equal(out, "10.0.0.5");
    /* malformed item: the last trusted hop's view */
    wr_ratelimit_client_addr("127.0.0.1", "1.1.1.1, junk, 10.0.0.9", nets, n, out, sizeof(out));
    assert_string_equal(out, "10.0.0.9");
    wr_ratelimit_client_addr("127.0.0.1", "junk", nets, n, out, sizeof(out));
    assert_string_equal(out, "127.0.0.1");
    wr_ratelimit_client_addr("127.0.0.1", "", nets, n, out, sizeof(out));
    assert_string_equal(out, "127.0.0.1");
    wr_ratelimit_client_addr("127.0.0.1", " 2001:db8::1 ", nets, n, out, sizeof(out));
    assert_string_equal(out, "2001:db8::1");
    /* no trusted proxies at all: always the peer */
    wr_ratelimit_client_addr("127.0.0.1", "1.1.1.1", nets, 0, out, sizeof(out));
    assert_string_equal(out, "127.0.0.1");
}

#define TESTS(X)                                                                                   \
    X(test_bucket_burst_then_rate)                                                                 \
    X(test_fractional_rate_and_clock_step_back)                                                    \
    X(test_off_allows_everything)                                                                  \
    X(test_lru_bound_under_flood)                                                                  \
    X(test_forget_reuses_entries)                                                                  \
    X(test_pacing)                                                                                 \
    X(test_cidrs_parse)                                                                            \
    X(test_client_addr)
WR_UNIT_MAIN(NULL, NULL, TESTS)
