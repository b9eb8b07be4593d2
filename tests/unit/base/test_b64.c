/*
 * test_b64.c - base64url without padding: RFC 4648 section 10 test vectors
 * (with the '=' padding dropped, as section 5 / 3.2 allow), the two
 * URL-safe characters, bounds and strict rejection of bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/b64.h"
#include "unit_main.h"

struct vec {
    const char *raw;
    const char *enc;
};

/* RFC 4648 section 10, "BASE64" vectors, padding removed. */
static const struct vec rfc4648[] = {
    {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},          {"foo", "Zm9v"},
    {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"},
};

static void test_rfc4648_encode(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
        char out[16];
        size_t len = 999;
        size_t n = strlen(rfc4648[i].raw);
        assert_int_equal(
            wr_b64url_encode((const uint8_t *)rfc4648[i].raw, n, out, sizeof out, &len), WR_OK);
        assert_string_equal(out, rfc4648[i].enc);
        assert_int_equal(len, strlen(rfc4648[i].enc));
        assert_int_equal(wr_b64url_encoded_len(n), strlen(rfc4648[i].enc));
    }
}

static void test_rfc4648_decode(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
        uint8_t out[16];
        size_t len = 999;
        const char *enc = rfc4648[i].enc;
        assert_int_equal(wr_b64url_decode(enc, strlen(enc), out, sizeof out, &len), WR_OK);
        assert_int_equal(len, strlen(rfc4648[i].raw));
        assert_memory_equal(out, rfc4648[i].raw, len);
    }
}

/* 0xfb 0xff -> sextets 62 63 60 -> "-_8" (standard base64 "+/8="). */
static void test_url_alphabet(void **state)
{
    (void)state;
    const uint8_t a[] = {0xfb, 0xff};
    const uint8_t b[] = {0xff, 0xff, 0xfe};                   /* 63 63 63 62 */
    const uint8_t c[] = {0x00, 0x10, 0x83, 0x10, 0x51, 0x87}; /* 0..7 -> "ABCDEFGH" */
    char out[16];
    uint8_t raw[16];
    size_t len;

    assert_int_equal(wr_b64url_encode(a, sizeof a, out, sizeof out, &len), WR_OK);
    assert_string_equal(out, "-_8");
    assert_int_equal(wr_b64url_encode(b, sizeof b, out, sizeof out, &len), WR_OK);
    assert_string_equal(out, "___-");
    assert_int_equal(wr_b64url_encode(c, sizeof c, out, sizeof out, &len), WR_OK);
    assert_string_equal(out, "ABCDEFGH");

    assert_int_equal(wr_b64url_decode("-_8", 3, raw, sizeof raw, &len), WR_OK);
    assert_int_equal(len, 2);
    assert_memory_equal(raw, a, 2);
    assert_int_equal(wr_b64url_decode("___-", 4, raw, sizeof raw, &len), WR_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(raw, b, 3);
}

static void test_round_trip_all_bytes(void **state)
{
    (void)state;
    uint8_t in[256], back[256];
    char enc[400];
    size_t len, blen;

    for (int i = 0; i < 256; i++)
        in[i] = (uint8_t)i;
    for (size_t n = 0; n <= sizeof in; n++) {
        assert_int_equal(wr_b64url_encode(in, n, enc, sizeof enc, &len), WR_OK);
        assert_int_equal(len, (n * 4 + 2) / 3); /* ceil(8n/6) */
        assert_int_equal(strlen(enc), len);
        assert_int_equal(wr_b64url_decode(enc, len, back, sizeof back, &blen), WR_OK);
        assert_int_equal(blen, n);
        assert_memory_equal(back, in, n);
    }
}

static void test_encode_bounds(void **state)
{
    (void)state;
    char out[8];
    size_t len = 77;

    /* "foo" needs 4 chars + NUL = 5. */
    memset(out, 'X', sizeof out);
    assert_int_equal(wr_b64url_encode((const uint8_t *)"foo", 3, out, 4, &len), WR_ELIMIT);
    assert_int_equal(len, 77);
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(out[i], 'X');
    assert_int_equal(wr_b64url_encode((const uint8_t *)"foo", 3, out, 5, &len), WR_OK);
    assert_string_equal(out, "Zm9v");
    assert_int_equal(out[5], 'X');
    /* Empty input still needs room for the NUL. */
    assert_int_equal(wr_b64url_encode((const uint8_t *)"", 0, out, 0, &len), WR_ELIMIT);
    assert_int_equal(wr_b64url_encode((const uint8_t *)"", 0, out, 1, &len), WR_OK);
    assert_int_equal(len, 0);
    assert_string_equal(out, "");
    assert_int_equal(wr_b64url_encoded_len(32), 43);
    assert_int_equal(wr_b64url_encoded_len(16), 22);
}

static void test_decode_bounds(void **state)
{
    (void)state;
    uint8_t out[8];
    size_t len = 77;

    memset(out, 0xAA, sizeof out);
    assert_int_equal(wr_b64url_decode("Zm9v", 4, out, 2, &len), WR_ELIMIT);
    assert_int_equal(len, 77);
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(out[i], 0xAA);
    assert_int_equal(wr_b64url_decode("Zm9v", 4, out, 3, &len), WR_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(out, "foo", 3);
    assert_int_equal(out[3], 0xAA);
    /* "Zm9vYmE" decodes to 5 bytes. */
    assert_int_equal(wr_b64url_decode("Zm9vYmE", 7, out, 4, &len), WR_ELIMIT);
    assert_int_equal(wr_b64url_decode("Zm9vYmE", 7, out, 5, &len), WR_OK);
    assert_int_equal(len, 5);
    /* n counts: only the first 4 chars of a longer string are read. */
    assert_int_equal(wr_b64url_decode("Zm9vYmFy", 4, out, sizeof out, &len), WR_OK);
    assert_int_equal(len, 3);
}

static void test_decode_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "Zg==",         /* padding */
        "Zm8=",         /* padding */
        "Zg=",          /* padding */
        "Zm9v\n",       /* whitespace */
        "Zm 9",         /* whitespace, length % 4 == 0 */
        "Zm9\t",        /* whitespace, length % 4 == 0 */
        "Zm\r\n",       /* CRLF */
        "Z",            /* length % 4 == 1 */
        "Zm9vY",        /* length % 4 == 1 */
        "Zm9+",         /* standard alphabet '+' */
        "Zm9/",         /* standard alphabet '/' */
        "Zh",           /* 'h' = 33 = 100001b: trailing bits 0001 */
        "Zm9",          /* '9' = 61 = 111101b: trailing bits 01 */
        "-_9",          /* same, URL alphabet */
        "Zm9v\xc3\xa9", /* non-ASCII */
    };
    uint8_t out[16];
    size_t len;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        len = 77;
        assert_int_equal(wr_b64url_decode(bad[i], strlen(bad[i]), out, sizeof out, &len),
                         WR_EINVAL);
        assert_int_equal(len, 77);
    }
    /* An embedded NUL is outside the alphabet too. */
    assert_int_equal(wr_b64url_decode("Zm\0v", 4, out, sizeof out, &len), WR_EINVAL);
    /* Invalid input is reported as such even when cap is also too small. */
    assert_int_equal(wr_b64url_decode("Zm9+", 4, out, 0, &len), WR_EINVAL);
}

/* Standard base64 with padding: RFC 4648 section 10 as written, the two
 * standard characters, and strict decoding (padding exactly as needed). */
static void test_std(void **state)
{
    (void)state;
    static const struct vec v[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char out[16];
        uint8_t back[16];
        size_t len = 99, n = strlen(v[i].raw);
        assert_int_equal(wr_b64_encode((const uint8_t *)v[i].raw, n, out, sizeof out, &len), WR_OK);
        assert_string_equal(out, v[i].enc);
        assert_int_equal(len, wr_b64_encoded_len(n));
        assert_int_equal(wr_b64_decode(v[i].enc, strlen(v[i].enc), back, sizeof back, &len), WR_OK);
        assert_int_equal(len, n);
        assert_memory_equal(back, v[i].raw, n);
    }
    static const uint8_t hi[3] = {0xfb, 0xff, 0xbf};
    char out[8];
    assert_int_equal(wr_b64_encode(hi, 3, out, sizeof out, NULL), WR_OK);
    assert_string_equal(out, "+/+/");
    uint8_t b[8];
    size_t len;
    static const char *const bad[] = {"Zg",   "Zg=",  "Zg===",    "Z===", "Zm8",  "Zh==",
                                      "Zm9=", "-_-_", "Zg==Zg==", "Zm=v", "====", " Zg="};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(wr_b64_decode(bad[i], strlen(bad[i]), b, sizeof b, &len), WR_EINVAL);
    assert_int_equal(wr_b64_decode("Zm9v", 4, b, 2, &len), WR_ELIMIT);
}

#define TESTS(X)                                                                                   \
    X(test_rfc4648_encode)                                                                         \
    X(test_rfc4648_decode)                                                                         \
    X(test_url_alphabet)                                                                           \
    X(test_round_trip_all_bytes)                                                                   \
    X(test_encode_bounds)                                                                          \
    X(test_decode_bounds)                                                                          \
    X(test_decode_rejects)                                                                         \
    X(test_std)
WR_UNIT_MAIN(NULL, NULL, TESTS)
