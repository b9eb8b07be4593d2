/*
 * test_hex.c - lowercase hex: round trip of every byte, and the strict
 * decoder's refusals (upper case, odd or wrong lengths, other characters).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/hex.h"
#include "unit_main.h"

static void test_round_trip(void **state)
{
    (void)state;
    uint8_t in[256], back[256];
    char text[513];
    for (int i = 0; i < 256; i++)
        in[i] = (uint8_t)i;
    wr_hex_encode(in, sizeof in, text);
    assert_int_equal(strlen(text), 512);
    assert_memory_equal(text, "000102", 6);
    assert_string_equal(text + 506, "fdfeff");
    assert_true(wr_hex_decode(text, 512, back, sizeof back));
    assert_memory_equal(in, back, sizeof in);
    wr_hex_encode(in, 0, text);
    assert_string_equal(text, "");
}

static void test_refusals(void **state)
{
    (void)state;
    uint8_t out[2];
    assert_true(wr_hex_decode("0aff", 4, out, 2));
    assert_int_equal(out[0], 0x0a);
    assert_int_equal(out[1], 0xff);
    assert_false(wr_hex_decode("0AFF", 4, out, 2));
    assert_false(wr_hex_decode("0af", 3, out, 2));
    assert_false(wr_hex_decode("0aff00", 6, out, 2));
    assert_false(wr_hex_decode("0ag0", 4, out, 2));
    assert_false(wr_hex_decode(" 0af", 4, out, 2));
    assert_false(wr_hex_decode(NULL, 4, out, 2));
}

#define TESTS(X)                                                                                   \
    X(test_round_trip)                                                                             \
    X(test_refusals)
WR_UNIT_MAIN(NULL, NULL, TESTS)
