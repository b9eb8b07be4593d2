/*
 * test_strbuf.c - the fixed-buffer appender: integers at their limits as
 * printf writes them, text, and a buffer that overflows (nothing more is
 * written, the text stays NUL-terminated, the flag says so).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "unit_main.h"

static void test_integers_as_printf(void **state)
{
    (void)state;
    const uint64_t us[] = {0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u, UINT64_MAX};
    const int64_t is[] = {0, -1, 1, -10, 123456789, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    char buf[32], want[32];
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
        wr_strbuf_t b = wr_strbuf_init(buf, sizeof buf);
        wr_strbuf_u64(&b, us[i]);
        snprintf(want, sizeof want, "%" PRIu64, us[i]);
        assert_string_equal(buf, want);
        assert_int_equal(b.n, strlen(want));
        assert_true(wr_strbuf_ok(&b));
    }
    /* every value up to 200,000, and each power of ten and its neighbours
     * (two digits are written per division: every pair, odd lengths) */
    uint64_t p10 = 1;
    for (uint64_t v = 0; v < 200000 || p10 != 0; v++) {
        uint64_t x = v < 200000 ? v : p10 + (v % 3) - 1;
        if (v >= 200000 && v % 3 == 2)
            p10 = p10 > UINT64_MAX / 10 ? 0 : p10 * 10;
        wr_strbuf_t b = wr_strbuf_init(buf, sizeof buf);
        wr_strbuf_u64(&b, x);
        snprintf(want, sizeof want, "%" PRIu64, x);
        assert_string_equal(buf, want);
    }
    for (size_t i = 0; i < sizeof is / sizeof is[0]; i++) {
        wr_strbuf_t b = wr_strbuf_init(buf, sizeof buf);
        wr_strbuf_i64(&b, is[i]);
        snprintf(want, sizeof want, "%" PRId64, is[i]);
        assert_string_equal(buf, want);
        assert_true(wr_strbuf_ok(&b));
    }
}

static void test_text(void **state)
{
    (void)state;
    char buf[64];
    wr_strbuf_t b = wr_strbuf_init(buf, sizeof buf);
    wr_strbuf_str(&b, "{\"position\":");
    wr_strbuf_u64(&b, 512);
    wr_strbuf_put(&b, ",\"x\":1}garbage", 7);
    assert_string_equal(buf, "{\"position\":512,\"x\":1}");
    assert_int_equal(b.n, strlen(buf));
    assert_true(wr_strbuf_ok(&b));
}

static void test_overflow(void **state)
{
    (void)state;
    char buf[8];
    memset(buf, 'z', sizeof buf);
    wr_strbuf_t b = wr_strbuf_init(buf, sizeof buf);
    wr_strbuf_str(&b, "abcdefg"); /* 7 + NUL: fits exactly */
    assert_true(wr_strbuf_ok(&b));
    assert_string_equal(buf, "abcdefg");
    wr_strbuf_str(&b, "h"); /* no room */
    assert_false(wr_strbuf_ok(&b));
    assert_string_equal(buf, "abcdefg");
    b = wr_strbuf_init(buf, sizeof buf);
    wr_strbuf_str(&b, "ab");
    wr_strbuf_u64(&b, UINT64_MAX); /* 20 digits: not written at all */
    wr_strbuf_str(&b, "c");        /* nor anything after */
    assert_false(wr_strbuf_ok(&b));
    assert_string_equal(buf, "ab");
    assert_int_equal(b.n, 2);
    /* a number is written in place: one that fills the buffer to its NUL
     * fits, one digit more is refused whole (as wr_strbuf_put) */
    memset(buf, 'z', sizeof buf);
    b = wr_strbuf_init(buf, sizeof buf);
    wr_strbuf_str(&b, "ab");
    wr_strbuf_u64(&b, 12345);
    assert_true(wr_strbuf_ok(&b));
    assert_string_equal(buf, "ab12345");
    b = wr_strbuf_init(buf, sizeof buf);
    wr_strbuf_str(&b, "ab");
    wr_strbuf_u64(&b, 123456);
    assert_false(wr_strbuf_ok(&b));
    assert_string_equal(buf, "ab");
    assert_int_equal(b.n, 2);
}

/* wr_strbuf_copy: whole when it fits, cut to cap - 1 bytes otherwise,
 * always NUL-terminated, as snprintf("%s") */
static void test_copy(void **state)
{
    (void)state;
    char d[6], want[6];
    const char *srcs[] = {"", "a", "abcde", "abcdef", "abcdefghij"};
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        memset(d, 'x', sizeof d);
        wr_strbuf_copy(d, sizeof d, srcs[i]);
        snprintf(want, sizeof want, "%s", srcs[i]);
        assert_string_equal(d, want);
    }
    wr_strbuf_copy(d, 1, "abc");
    assert_string_equal(d, "");
}

#define TESTS(X)                                                                                   \
    X(test_copy)                                                                                   \
    X(test_integers_as_printf)                                                                     \
    X(test_text)                                                                                   \
    X(test_overflow)
WR_UNIT_MAIN(NULL, NULL, TESTS)
