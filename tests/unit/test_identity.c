/*
 * test_identity.c - the signed visitor cookie and the Cookie header reader.
 *
 * KNOWN_COOKIE was computed independently (Python hmac + base64) as
 * vid "." base64url(HMAC-SHA256(KEY, vid)) for vid = base64url(00..0f).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "b64.h"
#include "identity.h"

static const uint8_t KEY[] = "cookie-key-0123456789-0123456789";
#define KEY_LEN 32
static const uint8_t KEY2[] = "cookie-key-0123456789-012345678X";

static const char KNOWN_COOKIE[] =
    "AAECAwQFBgcICQoLDA0ODw.VMPFDyvMCLCdoXO0kTbR7xo1XdwTRJyuLXf3CIA3evg";
static const char KNOWN_VID[] = "AAECAwQFBgcICQoLDA0ODw";

static bool verify(const uint8_t *key, const char *value, size_t len, char vid[WR_VID_LEN + 1])
{
    return wr_identity_verify_cookie(key, KEY_LEN, value, len, vid);
}

static void test_known_cookie(void **state)
{
    (void)state;
    char vid[WR_VID_LEN + 1];

    assert_int_equal(strlen(KNOWN_COOKIE), WR_VID_COOKIE_LEN);
    memset(vid, 'X', sizeof vid);
    assert_true(verify(KEY, KNOWN_COOKIE, strlen(KNOWN_COOKIE), vid));
    assert_string_equal(vid, KNOWN_VID);
}

static void test_new_visitor(void **state)
{
    (void)state;
    char vid[WR_VID_LEN + 1], cookie[WR_VID_COOKIE_LEN + 1];
    char vid2[WR_VID_LEN + 1], cookie2[WR_VID_COOKIE_LEN + 1];
    char back[WR_VID_LEN + 1];
    uint8_t raw[20];
    size_t len;

    assert_int_equal(wr_identity_new_visitor(KEY, KEY_LEN, vid, cookie), WR_OK);
    assert_int_equal(strlen(vid), WR_VID_LEN);
    assert_int_equal(strlen(cookie), WR_VID_COOKIE_LEN);
    assert_memory_equal(cookie, vid, WR_VID_LEN);
    assert_int_equal(cookie[WR_VID_LEN], '.');
    assert_int_equal(wr_b64url_decode(vid, WR_VID_LEN, raw, sizeof raw, &len), WR_OK);
    assert_int_equal(len, 16);

    assert_true(verify(KEY, cookie, strlen(cookie), back));
    assert_string_equal(back, vid);
    assert_false(verify(KEY2, cookie, strlen(cookie), back));

    assert_int_equal(wr_identity_new_visitor(KEY, KEY_LEN, vid2, cookie2), WR_OK);
    assert_string_not_equal(vid, vid2);
    assert_string_not_equal(cookie, cookie2);

    assert_int_equal(wr_identity_new_visitor(NULL, 0, vid, cookie), WR_EINVAL);
}

static void test_verify_rejects(void **state)
{
    (void)state;
    char vid[WR_VID_LEN + 1], buf[128];
    size_t n = strlen(KNOWN_COOKIE);

    /* Wrong key. */
    assert_false(verify(KEY2, KNOWN_COOKIE, n, vid));
    assert_false(wr_identity_verify_cookie(KEY, KEY_LEN - 1, KNOWN_COOKIE, n, vid));
    assert_false(wr_identity_verify_cookie(NULL, 0, KNOWN_COOKIE, n, vid));

    /* Wrong length: truncated, extended, empty. */
    assert_false(verify(KEY, KNOWN_COOKIE, n - 1, vid));
    assert_false(verify(KEY, KNOWN_COOKIE, 0, vid));
    snprintf(buf, sizeof buf, "%sA", KNOWN_COOKIE);
    assert_false(verify(KEY, buf, strlen(buf), vid));
    snprintf(buf, sizeof buf, "%s", KNOWN_VID);
    assert_false(verify(KEY, buf, strlen(buf), vid));

    /* Tampered vid: every position, one character changed. */
    for (size_t i = 0; i < WR_VID_LEN; i++) {
        memcpy(buf, KNOWN_COOKIE, n + 1);
        buf[i] = buf[i] == 'B' ? 'C' : 'B';
        assert_false(verify(KEY, buf, n, vid));
    }
    /* Tampered MAC: every position. */
    for (size_t i = WR_VID_LEN + 1; i < n; i++) {
        memcpy(buf, KNOWN_COOKIE, n + 1);
        buf[i] = buf[i] == 'B' ? 'C' : 'B';
        assert_false(verify(KEY, buf, n, vid));
    }
    /* MAC bytes with one bit flipped, re-encoded canonically. */
    {
        uint8_t mac[32];
        size_t len;
        assert_int_equal(wr_b64url_decode(KNOWN_COOKIE + 23, 43, mac, sizeof mac, &len), WR_OK);
        mac[31] ^= 0x80;
        memcpy(buf, KNOWN_COOKIE, 23);
        assert_int_equal(wr_b64url_encode(mac, 32, buf + 23, sizeof buf - 23, &len), WR_OK);
        assert_false(verify(KEY, buf, n, vid));
    }
    /* Non-canonical spelling of the same MAC: last char 'g' (100000b) ->
     * 'h' (100001b) would decode to the same bytes in a lax decoder. */
    memcpy(buf, KNOWN_COOKIE, n + 1);
    assert_int_equal(buf[n - 1], 'g');
    buf[n - 1] = 'h';
    assert_false(verify(KEY, buf, n, vid));

    /* Separator missing or moved. */
    memcpy(buf, KNOWN_COOKIE, n + 1);
    buf[WR_VID_LEN] = '_';
    assert_false(verify(KEY, buf, n, vid));

    /* Garbage of the right length. */
    memset(buf, '.', n);
    assert_false(verify(KEY, buf, n, vid));
    memset(buf, 0, n);
    assert_false(verify(KEY, buf, n, vid));
    memset(buf, 'A', n);
    buf[WR_VID_LEN] = '.';
    assert_false(verify(KEY, buf, n, vid));
    /* A quoted value is not ours either. */
    snprintf(buf, sizeof buf, "\"%s\"", KNOWN_COOKIE);
    assert_false(verify(KEY, buf, strlen(buf), vid));
    assert_false(verify(KEY, NULL, n, vid));
}

static void expect_cookie(const char *header, const char *name, const char *want)
{
    size_t len = 999;
    const char *v = wr_identity_find_cookie(header, name, &len);
    if (!want) {
        assert_null(v);
        return;
    }
    assert_non_null(v);
    assert_true(v >= header && v + len <= header + strlen(header));
    assert_int_equal(len, strlen(want));
    assert_memory_equal(v, want, len);
}

static void test_find_cookie(void **state)
{
    (void)state;
    expect_cookie("a=b; wr_vid=xyz; c=d", "wr_vid", "xyz");
    expect_cookie("wr_vid=xyz", "wr_vid", "xyz");
    expect_cookie("a=b; wr_vid=xyz", "wr_vid", "xyz");
    expect_cookie("wr_vid=xyz; a=b", "wr_vid", "xyz");
    expect_cookie("a=b;wr_vid=xyz;c=d", "wr_vid", "xyz");
    expect_cookie("  wr_vid = xyz ;c=d", "wr_vid", "xyz");
    expect_cookie("a=b;\twr_vid=xyz\t", "wr_vid", "xyz");
    expect_cookie(KNOWN_VID, "wr_vid", NULL);

    /* Exact name match only. */
    expect_cookie("xwr_vid=1; wr_vidx=2; WR_VID=3; wr_vi=4", "wr_vid", NULL);
    expect_cookie("xwr_vid=1; wr_vid=5", "wr_vid", "5");
    expect_cookie("wr_vidx=2; wr_vid=6", "wr_vid", "6");
    /* A value containing the name does not match. */
    expect_cookie("a=wr_vid=7", "wr_vid", NULL);
    expect_cookie("a=wr_vid; b=c", "wr_vid", NULL);
    /* Value may contain '=' (first '=' splits). */
    expect_cookie("wr_vid=a=b", "wr_vid", "a=b");
    /* First occurrence wins. */
    expect_cookie("wr_vid=first; wr_vid=second", "wr_vid", "first");
    /* Empty value is found, with length 0. */
    expect_cookie("wr_vid=; a=b", "wr_vid", "");
    expect_cookie("wr_vid=", "wr_vid", "");
    /* Absent, empty, degenerate. */
    expect_cookie("", "wr_vid", NULL);
    expect_cookie(";;;", "wr_vid", NULL);
    expect_cookie("wr_vid", "wr_vid", NULL);
    expect_cookie("=wr_vid", "wr_vid", NULL);
    expect_cookie("a=b", "", NULL);
    expect_cookie("=x", "", NULL);

    size_t len;
    assert_null(wr_identity_find_cookie(NULL, "wr_vid", &len));
    assert_null(wr_identity_find_cookie("wr_vid=1", NULL, &len));
    assert_null(wr_identity_find_cookie("wr_vid=1", "wr_vid", NULL));
}

static void test_find_then_verify(void **state)
{
    (void)state;
    char header[256], vid[WR_VID_LEN + 1];
    size_t len;

    snprintf(header, sizeof header, "theme=dark; %s=%s; session=abc", WR_VID_COOKIE_NAME,
             KNOWN_COOKIE);
    const char *v = wr_identity_find_cookie(header, WR_VID_COOKIE_NAME, &len);
    assert_non_null(v);
    assert_int_equal(len, WR_VID_COOKIE_LEN);
    assert_true(wr_identity_verify_cookie(KEY, KEY_LEN, v, len, vid));
    assert_string_equal(vid, KNOWN_VID);
}

/* The scan is bounded: a cookie beyond the first 16 KiB is not looked at,
 * and a long header without the cookie is handled. */
static void test_find_bounded(void **state)
{
    (void)state;
    size_t big = 40000;
    char *h = test_malloc(big + 32);
    size_t len;

    memset(h, 'a', big);
    h[0] = 'x';
    h[1] = '=';
    strcpy(h + big, "; wr_vid=late");
    assert_null(wr_identity_find_cookie(h, "wr_vid", &len));

    strcpy(h, "wr_vid=early; y=");
    h[strlen(h)] = 'a'; /* join with the long run of 'a' */
    assert_non_null(wr_identity_find_cookie(h, "wr_vid", &len));
    assert_int_equal(len, 5);
    test_free(h);
}

/* Re-signing a known vid gives the independently computed KNOWN_COOKIE;
 * under KEY2 it verifies with KEY2 only (cookie key rotation). */
static void test_sign_vid(void **state)
{
    (void)state;
    char cookie[WR_VID_COOKIE_LEN + 1], vid[WR_VID_LEN + 1];
    assert_int_equal(wr_identity_sign_vid(KEY, KEY_LEN, KNOWN_VID, cookie), WR_OK);
    assert_string_equal(cookie, KNOWN_COOKIE);
    assert_int_equal(wr_identity_sign_vid(KEY2, KEY_LEN, KNOWN_VID, cookie), WR_OK);
    assert_false(verify(KEY, cookie, strlen(cookie), vid));
    assert_true(verify(KEY2, cookie, strlen(cookie), vid));
    assert_string_equal(vid, KNOWN_VID);
    assert_int_equal(wr_identity_sign_vid(KEY, KEY_LEN, "short", cookie), WR_EINVAL);
    assert_int_equal(wr_identity_sign_vid(KEY, KEY_LEN, "AAECAwQFBgcICQoLDA0OD!", cookie),
                     WR_EINVAL);
    assert_int_equal(wr_identity_sign_vid(KEY, 0, KNOWN_VID, cookie), WR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sign_vid),     cmocka_unit_test(test_known_cookie),
        cmocka_unit_test(test_new_visitor),  cmocka_unit_test(test_verify_rejects),
        cmocka_unit_test(test_find_cookie),  cmocka_unit_test(test_find_then_verify),
        cmocka_unit_test(test_find_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
