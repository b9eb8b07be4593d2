/*
 * test_pushanswer.c - a push service's answers by status (table), the
 * Retry-After forms (seconds, IMF-fixdate, past dates, malformed, the
 * one-day cap) and the backoff's doubling and cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/pushanswer.h"
#include "unit_main.h"

static void test_status(void **state)
{
    (void)state;
    static const struct {
        int status;
        wr_pushanswer_t want;
    } rows[] = {
        {200, WR_PUSHANSWER_DELIVERED}, {201, WR_PUSHANSWER_DELIVERED},
        {202, WR_PUSHANSWER_DELIVERED}, {299, WR_PUSHANSWER_DELIVERED},
        {404, WR_PUSHANSWER_GONE},      {410, WR_PUSHANSWER_GONE},
        {301, WR_PUSHANSWER_REDIRECT},  {302, WR_PUSHANSWER_REDIRECT},
        {307, WR_PUSHANSWER_REDIRECT},  {308, WR_PUSHANSWER_REDIRECT},
        {400, WR_PUSHANSWER_REFUSED},   {401, WR_PUSHANSWER_REFUSED},
        {403, WR_PUSHANSWER_REFUSED},   {413, WR_PUSHANSWER_REFUSED},
        {499, WR_PUSHANSWER_REFUSED},   {429, WR_PUSHANSWER_RETRY},
        {500, WR_PUSHANSWER_RETRY},     {502, WR_PUSHANSWER_RETRY},
        {503, WR_PUSHANSWER_RETRY},     {599, WR_PUSHANSWER_RETRY},
        {0, WR_PUSHANSWER_RETRY},       {100, WR_PUSHANSWER_RETRY},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (wr_pushanswer_of(rows[i].status) != rows[i].want)
            fail_msg("status %d: got %d", rows[i].status, wr_pushanswer_of(rows[i].status));
}

static void test_retry_after(void **state)
{
    (void)state;
    /* 1994-11-06 08:49:37 UTC = 784111777 */
    const int64_t now = 784111777000;
    assert_int_equal(wr_pushanswer_retry_after_ms("0", now), 0);
    assert_int_equal(wr_pushanswer_retry_after_ms("1", now), 1000);
    assert_int_equal(wr_pushanswer_retry_after_ms("120", now), 120000);
    assert_int_equal(wr_pushanswer_retry_after_ms("86400", now), WR_PUSHANSWER_RETRY_AFTER_MAX_MS);
    assert_int_equal(wr_pushanswer_retry_after_ms("99999999999999999999", now),
                     WR_PUSHANSWER_RETRY_AFTER_MAX_MS);
    assert_int_equal(wr_pushanswer_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", now), 0);
    assert_int_equal(wr_pushanswer_retry_after_ms("Sun, 06 Nov 1994 08:49:40 GMT", now + 500),
                     2500);
    assert_int_equal(wr_pushanswer_retry_after_ms("Sun, 06 Nov 1994 08:49:30 GMT", now), 0);
    assert_int_equal(wr_pushanswer_retry_after_ms("Mon, 07 Nov 1994 08:49:37 GMT", now),
                     WR_PUSHANSWER_RETRY_AFTER_MAX_MS);
    static const char *bad[] = {"",
                                "-1",
                                "1.5",
                                " 1",
                                "1 ",
                                "soon",
                                "Sun, 06 Nov 1994 08:49:37",
                                "06 Nov 1994 08:49:37 GMT",
                                "Sunday, 06-Nov-94 08:49:37 GMT"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (wr_pushanswer_retry_after_ms(bad[i], now) != -1)
            fail_msg("'%s' accepted", bad[i]);
    assert_int_equal(wr_pushanswer_retry_after_ms(NULL, now), -1);
}

static void test_backoff(void **state)
{
    (void)state;
    assert_int_equal(wr_pushanswer_backoff_ms(0, 1000, 60000), 1000);
    assert_int_equal(wr_pushanswer_backoff_ms(1, 1000, 60000), 2000);
    assert_int_equal(wr_pushanswer_backoff_ms(2, 1000, 60000), 4000);
    assert_int_equal(wr_pushanswer_backoff_ms(5, 1000, 60000), 32000);
    assert_int_equal(wr_pushanswer_backoff_ms(6, 1000, 60000), 60000);
    assert_int_equal(wr_pushanswer_backoff_ms(4000000000u, 1000, 60000), 60000);
    assert_int_equal(wr_pushanswer_backoff_ms(3, 200, 800), 800);
    assert_int_equal(wr_pushanswer_backoff_ms(0, 0, 800), 1);
}

#define TESTS(X)                                                                                   \
    X(test_status)                                                                                 \
    X(test_retry_after)                                                                            \
    X(test_backoff)
WR_UNIT_MAIN(NULL, NULL, TESTS)
