/*
 * test_identity.c - the signed visitor cookie and the Cookie header reader.
 *
 * The known values were computed independently (Python hmac + base64) for
 * vid = base64url(00..0f): KNOWN_COOKIE = vid "." 1700000000 "."
 * base64url(HMAC-SHA256(KEY, vid "." 1700000000)), and the first format
 * KNOWN_V1 = vid "." base64url(HMAC-SHA256(KEY, vid)).
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/b64.h"
#include "core/identity.h"
#include "unit_main.h"

static const uint8_t KEY[] = "cookie-key-0123456789-0123456789";
#define KEY_LEN 32
static const uint8_t KEY2[] = "cookie-key-0123456789-012345678X";

/* First format: vid "." base64url(HMAC-SHA256(KEY, vid)). */
static const char KNOWN_V1[] = "AAECAwQFBgcICQoLDA0ODw.VMPFDyvMCLCdoXO0kTbR7xo1XdwTRJyuLXf3CIA3evg";
/* Current format: vid "." issued "." base64url(HMAC-SHA256(KEY, vid "." issued)). */
static const char KNOWN_COOKIE[] =
    "AAECAwQFBgcICQoLDA0ODw.1700000000.Ah8CQRBTbPCPVpB4EkR_bdCQ3kSKF3zwap6qfsRtd04";
static const char KNOWN_VID[] = "AAECAwQFBgcICQoLDA0ODw";
#define KNOWN_ISSUED 1700000000
#define NOW          1700000000

static bool verify(const uint8_t *key, const char *value, size_t len, char vid[WR_VID_LEN + 1])
{
    wr_identity_visitor_t v;
    if (!wr_identity_verify(key, KEY_LEN, value, len, &v))
        return false;
    memcpy(vid, v.vid, WR_VID_LEN + 1);
    return true;
}

static void test_known_cookie(void **state)
{
    (void)state;
    wr_identity_visitor_t v;

    assert_true(strlen(KNOWN_COOKIE) <= WR_VID_COOKIE_LEN);
    memset(&v, 'X', sizeof v);
    assert_true(wr_identity_verify(KEY, KEY_LEN, KNOWN_COOKIE, strlen(KNOWN_COOKIE), &v));
    assert_string_equal(v.vid, KNOWN_VID);
    assert_int_equal(v.issued_s, KNOWN_ISSUED);
    assert_false(v.prev_key);
}

/* Cookies of the first format still verify, as issued at 0 (old). */
static void test_first_format_still_verifies(void **state)
{
    (void)state;
    wr_identity_visitor_t v;

    assert_true(wr_identity_verify(KEY, KEY_LEN, KNOWN_V1, strlen(KNOWN_V1), &v));
    assert_string_equal(v.vid, KNOWN_VID);
    assert_int_equal(v.issued_s, 0);
    assert_true(wr_identity_should_renew(&v, NOW));
    assert_false(wr_identity_verify(KEY2, KEY_LEN, KNOWN_V1, strlen(KNOWN_V1), &v));
}

static void test_mint(void **state)
{
    (void)state;
    char vid[WR_VID_LEN + 1], cookie[WR_VID_COOKIE_LEN + 1];
    char vid2[WR_VID_LEN + 1], cookie2[WR_VID_COOKIE_LEN + 1];
    char back[WR_VID_LEN + 1];
    uint8_t raw[20];
    size_t len;
    wr_identity_visitor_t v;

    assert_int_equal(wr_identity_mint(KEY, KEY_LEN, NOW, vid, cookie), WR_OK);
    assert_int_equal(strlen(vid), WR_VID_LEN);
    assert_int_equal(strlen(cookie), WR_VID_LEN + 1 + 10 + 1 + 43);
    assert_memory_equal(cookie, vid, WR_VID_LEN);
    assert_int_equal(cookie[WR_VID_LEN], '.');
    assert_memory_equal(cookie + WR_VID_LEN + 1, "1700000000.", 11);
    assert_int_equal(wr_b64url_decode(vid, WR_VID_LEN, raw, sizeof raw, &len), WR_OK);
    assert_int_equal(len, 16);

    assert_true(verify(KEY, cookie, strlen(cookie), back));
    assert_string_equal(back, vid);
    assert_false(verify(KEY2, cookie, strlen(cookie), back));
    assert_true(wr_identity_verify(KEY, KEY_LEN, cookie, strlen(cookie), &v));
    assert_int_equal(v.issued_s, NOW);

    assert_int_equal(wr_identity_mint(KEY, KEY_LEN, NOW, vid2, cookie2), WR_OK);
    assert_string_not_equal(vid, vid2);
    assert_string_not_equal(cookie, cookie2);

    assert_int_equal(wr_identity_mint(NULL, 0, NOW, vid, cookie), WR_EINVAL);
    assert_int_equal(wr_identity_mint(KEY, KEY_LEN, 0, vid, cookie), WR_EINVAL);
}

static void test_verify_rejects(void **state)
{
    (void)state;
    char vid[WR_VID_LEN + 1], buf[160];
    size_t n = strlen(KNOWN_COOKIE);
    wr_identity_visitor_t v;

    /* Wrong key. */
    assert_false(verify(KEY2, KNOWN_COOKIE, n, vid));
    assert_false(wr_identity_verify(KEY, KEY_LEN - 1, KNOWN_COOKIE, n, &v));
    assert_false(wr_identity_verify(NULL, 0, KNOWN_COOKIE, n, &v));
    assert_false(wr_identity_verify(KEY, KEY_LEN, KNOWN_COOKIE, n, NULL));

    /* Wrong length: truncated, extended, empty. */
    assert_false(verify(KEY, KNOWN_COOKIE, n - 1, vid));
    assert_false(verify(KEY, KNOWN_COOKIE, 0, vid));
    snprintf(buf, sizeof buf, "%sA", KNOWN_COOKIE);
    assert_false(verify(KEY, buf, strlen(buf), vid));
    snprintf(buf, sizeof buf, "%s", KNOWN_VID);
    assert_false(verify(KEY, buf, strlen(buf), vid));

    /* Tampered vid, time or MAC: every position, one character changed. */
    for (size_t i = 0; i < n; i++) {
        if (KNOWN_COOKIE[i] == '.')
            continue;
        memcpy(buf, KNOWN_COOKIE, n + 1);
        buf[i] = buf[i] == '1'                    ? '2'
                 : buf[i] == 'B'                  ? 'C'
                 : isdigit((unsigned char)buf[i]) ? '1'
                                                  : 'B';
        assert_false(verify(KEY, buf, n, vid));
    }
    /* The time moved to the same MAC with another spelling: a leading zero,
     * a sign, a missing time. */
    {
        const char *mac = strrchr(KNOWN_COOKIE, '.') + 1;
        snprintf(buf, sizeof buf, "%s.01700000000.%s", KNOWN_VID, mac);
        assert_false(verify(KEY, buf, strlen(buf), vid));
        snprintf(buf, sizeof buf, "%s.+1700000000.%s", KNOWN_VID, mac);
        assert_false(verify(KEY, buf, strlen(buf), vid));
        snprintf(buf, sizeof buf, "%s..%s", KNOWN_VID, mac);
        assert_false(verify(KEY, buf, strlen(buf), vid));
        /* The first format's MAC under the second format, and back. */
        snprintf(buf, sizeof buf, "%s.1700000000.%s", KNOWN_VID, strrchr(KNOWN_V1, '.') + 1);
        assert_false(verify(KEY, buf, strlen(buf), vid));
        snprintf(buf, sizeof buf, "%s.%s", KNOWN_VID, mac);
        assert_false(verify(KEY, buf, strlen(buf), vid));
    }
    /* MAC bytes with one bit flipped, re-encoded canonically. */
    {
        uint8_t mac[32];
        size_t len, off = n - 43;
        assert_int_equal(wr_b64url_decode(KNOWN_COOKIE + off, 43, mac, sizeof mac, &len), WR_OK);
        mac[31] ^= 0x80;
        memcpy(buf, KNOWN_COOKIE, off);
        assert_int_equal(wr_b64url_encode(mac, 32, buf + off, sizeof buf - off, &len), WR_OK);
        assert_false(verify(KEY, buf, n, vid));
    }
    /* Non-canonical spelling of the same MAC: the last char with other
     * trailing bits would decode to the same bytes in a lax decoder. */
    memcpy(buf, KNOWN_V1, sizeof KNOWN_V1);
    assert_int_equal(buf[sizeof KNOWN_V1 - 2], 'g');
    buf[sizeof KNOWN_V1 - 2] = 'h';
    assert_false(verify(KEY, buf, sizeof KNOWN_V1 - 1, vid));

    /* Separator missing or moved. */
    memcpy(buf, KNOWN_COOKIE, n + 1);
    buf[WR_VID_LEN] = '_';
    assert_false(verify(KEY, buf, n, vid));
    memcpy(buf, KNOWN_COOKIE, n + 1);
    buf[n - 44] = '_';
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
    assert_int_equal(len, strlen(KNOWN_COOKIE));
    assert_true(verify(KEY, v, len, vid));
    assert_string_equal(vid, KNOWN_VID);
}

/* The scan is bounded: a cookie beyond the first 32 KiB (the request
 * header limit) is not looked at, one within it is (shops send 20 KB of
 * cookies), and a long header without the cookie is handled. */
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
    strcpy(h + 20000, "; wr_vid=mid");
    assert_non_null(wr_identity_find_cookie(h, "wr_vid", &len));
    assert_int_equal(len, 3);

    strcpy(h, "wr_vid=early; y=");
    h[strlen(h)] = 'a'; /* join with the long run of 'a' */
    assert_non_null(wr_identity_find_cookie(h, "wr_vid", &len));
    assert_int_equal(len, 5);
    test_free(h);
}

/* Signing a known vid at a known time gives the independently computed
 * KNOWN_COOKIE; under KEY2 it verifies with KEY2 only (cookie key
 * rotation). */
static void test_sign(void **state)
{
    (void)state;
    char cookie[WR_VID_COOKIE_LEN + 1], vid[WR_VID_LEN + 1];
    assert_int_equal(wr_identity_sign(KEY, KEY_LEN, KNOWN_VID, KNOWN_ISSUED, cookie), WR_OK);
    assert_string_equal(cookie, KNOWN_COOKIE);
    assert_int_equal(wr_identity_sign(KEY2, KEY_LEN, KNOWN_VID, KNOWN_ISSUED, cookie), WR_OK);
    assert_false(verify(KEY, cookie, strlen(cookie), vid));
    assert_true(verify(KEY2, cookie, strlen(cookie), vid));
    assert_string_equal(vid, KNOWN_VID);
    assert_int_equal(wr_identity_sign(KEY, KEY_LEN, "short", 1, cookie), WR_EINVAL);
    assert_int_equal(wr_identity_sign(KEY, KEY_LEN, "AAECAwQFBgcICQoLDA0OD!", 1, cookie),
                     WR_EINVAL);
    assert_int_equal(wr_identity_sign(KEY, 0, KNOWN_VID, 1, cookie), WR_EINVAL);
    /* The time: 1 .. 12 digits. */
    assert_int_equal(wr_identity_sign(KEY, KEY_LEN, KNOWN_VID, 0, cookie), WR_EINVAL);
    assert_int_equal(wr_identity_sign(KEY, KEY_LEN, KNOWN_VID, -5, cookie), WR_EINVAL);
    assert_int_equal(wr_identity_sign(KEY, KEY_LEN, KNOWN_VID, 1000000000000LL, cookie), WR_EINVAL);
    assert_int_equal(wr_identity_sign(KEY, KEY_LEN, KNOWN_VID, 999999999999LL, cookie), WR_OK);
    assert_int_equal(strlen(cookie), WR_VID_COOKIE_LEN);
    assert_true(verify(KEY, cookie, strlen(cookie), vid));
    assert_int_equal(wr_identity_sign(KEY, KEY_LEN, KNOWN_VID, 7, cookie), WR_OK);
    assert_true(verify(KEY, cookie, strlen(cookie), vid));
}

/* Renewal: a poll renews when less than half of the life is left, or the
 * cookie was signed with the previous key. */
static void test_should_renew(void **state)
{
    (void)state;
    wr_identity_visitor_t v;
    memset(&v, 0, sizeof v);
    v.issued_s = NOW;
    assert_false(wr_identity_should_renew(&v, NOW));
    assert_false(wr_identity_should_renew(&v, NOW + WR_VID_COOKIE_MAX_AGE / 2));
    assert_true(wr_identity_should_renew(&v, NOW + WR_VID_COOKIE_MAX_AGE / 2 + 1));
    assert_true(wr_identity_should_renew(&v, NOW + 10 * WR_VID_COOKIE_MAX_AGE));
    assert_false(wr_identity_should_renew(&v, NOW - 3600)); /* a clock behind ours */
    v.prev_key = true;
    assert_true(wr_identity_should_renew(&v, NOW));
    v.prev_key = false;
    v.issued_s = 0;
    assert_true(wr_identity_should_renew(&v, NOW));
    assert_false(wr_identity_should_renew(NULL, NOW));
}

/* Several wr_vid cookies: the first that verifies, under either key. */
static void test_find_visitor(void **state)
{
    (void)state;
    char h[1024], other[WR_VID_COOKIE_LEN + 1], vid2[WR_VID_LEN + 1];
    wr_identity_keys_t keys = {KEY, KEY_LEN, NULL, 0};
    wr_identity_keys_t rot = {KEY2, KEY_LEN, KEY, KEY_LEN};
    wr_identity_visitor_t v;
    unsigned budget;

    assert_int_equal(wr_identity_mint(KEY2, KEY_LEN, NOW, vid2, other), WR_OK);

    /* A foreign (other key) cookie first, ours second. */
    snprintf(h, sizeof h, "wr_vid=%s; a=1; wr_vid=%s", other, KNOWN_COOKIE);
    budget = WR_VID_CANDIDATES_MAX;
    assert_true(wr_identity_find_visitor(&keys, h, &budget, &v));
    assert_string_equal(v.vid, KNOWN_VID);
    assert_false(v.prev_key);
    assert_int_equal(budget, WR_VID_CANDIDATES_MAX - 2);

    /* Junk and a tampered value first. */
    snprintf(h, sizeof h, "wr_vid=junk; wr_vid=; wr_vid=%.*sB; wr_vid=%s",
             (int)strlen(KNOWN_V1) - 1, KNOWN_V1, KNOWN_V1);
    budget = WR_VID_CANDIDATES_MAX;
    assert_true(wr_identity_find_visitor(&keys, h, &budget, &v));
    assert_string_equal(v.vid, KNOWN_VID);
    assert_int_equal(v.issued_s, 0);
    assert_int_equal(budget, WR_VID_CANDIDATES_MAX - 2); /* junk of the wrong shape is free */

    /* Both valid: the first wins. */
    snprintf(h, sizeof h, "wr_vid=%s; wr_vid=%s", other, KNOWN_COOKIE);
    budget = WR_VID_CANDIDATES_MAX;
    assert_true(wr_identity_find_visitor(&rot, h, &budget, &v));
    assert_string_equal(v.vid, vid2);
    assert_false(v.prev_key);
    /* Rotation: KNOWN_COOKIE is signed with the previous key. */
    snprintf(h, sizeof h, "x=1; wr_vid=%s", KNOWN_COOKIE);
    budget = WR_VID_CANDIDATES_MAX;
    assert_true(wr_identity_find_visitor(&rot, h, &budget, &v));
    assert_string_equal(v.vid, KNOWN_VID);
    assert_true(v.prev_key);
    assert_true(wr_identity_should_renew(&v, KNOWN_ISSUED));

    /* None verifies. */
    snprintf(h, sizeof h, "wr_vid=%s; b=2", other);
    budget = WR_VID_CANDIDATES_MAX;
    assert_false(wr_identity_find_visitor(&keys, h, &budget, &v));
    assert_false(wr_identity_find_visitor(&keys, "", &budget, &v));

    /* The budget bounds the HMACs: the valid cookie after it is not found. */
    h[0] = 0;
    for (int i = 0; i < WR_VID_CANDIDATES_MAX; i++)
        snprintf(h + strlen(h), sizeof h - strlen(h), "wr_vid=%s; ", other);
    snprintf(h + strlen(h), sizeof h - strlen(h), "wr_vid=%s", KNOWN_COOKIE);
    budget = WR_VID_CANDIDATES_MAX;
    assert_false(wr_identity_find_visitor(&keys, h, &budget, &v));
    assert_int_equal(budget, 0);
    budget = WR_VID_CANDIDATES_MAX + 1;
    assert_true(wr_identity_find_visitor(&keys, h, &budget, &v));
}

static void test_next_cookie(void **state)
{
    (void)state;
    const char *h = "wr_vid=1; a=2; wr_vid=3;wr_vid= 4 ";
    size_t pos = 0, len = 0;
    const char *v = wr_identity_next_cookie(h, "wr_vid", &pos, &len);
    assert_non_null(v);
    assert_memory_equal(v, "1", len);
    v = wr_identity_next_cookie(h, "wr_vid", &pos, &len);
    assert_non_null(v);
    assert_memory_equal(v, "3", len);
    v = wr_identity_next_cookie(h, "wr_vid", &pos, &len);
    assert_non_null(v);
    assert_int_equal(len, 1);
    assert_memory_equal(v, "4", len);
    assert_null(wr_identity_next_cookie(h, "wr_vid", &pos, &len));
    assert_null(wr_identity_next_cookie(h, "wr_vid", &pos, &len));
}

/* Issue 22 (API 1.2 Clarifications, invites in cookie mode): the cookie of
 * an invited account carries the account, which is the user in line.
 * KNOWN_ACCOUNT was computed independently (Python hmac + base64):
 * "~" base64url("alice@shop") "." 1700000000 "." base64url(HMAC-SHA256(KEY,
 * what comes before that dot)). */
static const char KNOWN_ACCOUNT[] =
    "~YWxpY2VAc2hvcA.1700000000.MIG4jGpMg4iw_QpjwsZRF6BulboUfndp7g3lwyBlNlM";

static void test_account_cookie(void **state)
{
    (void)state;
    char cookie[WR_IDENTITY_COOKIE_MAX + 1], again[WR_IDENTITY_COOKIE_MAX + 1];
    char header[WR_IDENTITY_COOKIE_MAX + 64];
    unsigned budget = WR_VID_CANDIDATES_MAX;
    wr_identity_keys_t keys = {KEY, KEY_LEN, NULL, 0};
    wr_identity_visitor_t v;
    assert_int_equal(wr_identity_sign_account(KEY, KEY_LEN, "alice@shop", KNOWN_ISSUED, cookie),
                     WR_OK);
    assert_string_equal(cookie, KNOWN_ACCOUNT);
    memset(&v, 'X', sizeof v);
    assert_true(wr_identity_verify(KEY, KEY_LEN, cookie, strlen(cookie), &v));
    assert_true(v.account);
    assert_string_equal(v.user, "alice@shop");
    assert_string_equal(v.vid, "");
    assert_int_equal(v.issued_s, KNOWN_ISSUED);
    assert_false(wr_identity_verify(KEY2, KEY_LEN, cookie, strlen(cookie), &v));
    /* a vid cookie names its vid as the user, not an account */
    assert_true(wr_identity_verify(KEY, KEY_LEN, KNOWN_COOKIE, strlen(KNOWN_COOKIE), &v));
    assert_false(v.account);
    assert_string_equal(v.user, KNOWN_VID);
    /* renewal keeps the form */
    assert_true(wr_identity_verify(KEY, KEY_LEN, KNOWN_ACCOUNT, strlen(KNOWN_ACCOUNT), &v));
    assert_int_equal(wr_identity_resign(KEY2, KEY_LEN, &v, NOW + 5, again), WR_OK);
    assert_true(wr_identity_verify(KEY2, KEY_LEN, again, strlen(again), &v));
    assert_true(v.account);
    assert_string_equal(v.user, "alice@shop");
    assert_int_equal(v.issued_s, NOW + 5);
    /* the longest user id fits the buffer exactly */
    char user[WR_USER_ID_MAX + 1];
    memset(user, 'u', WR_USER_ID_MAX);
    user[WR_USER_ID_MAX] = '\0';
    assert_int_equal(wr_identity_sign_account(KEY, KEY_LEN, user, 999999999999LL, cookie), WR_OK);
    assert_int_equal(strlen(cookie), WR_IDENTITY_COOKIE_MAX);
    assert_true(wr_identity_verify(KEY, KEY_LEN, cookie, strlen(cookie), &v));
    assert_string_equal(v.user, user);
    /* the shortest: a one-byte user id, a one-digit time */
    assert_int_equal(wr_identity_sign_account(KEY, KEY_LEN, "u", 7, cookie), WR_OK);
    assert_int_equal(strlen(cookie), 1 + 2 + 1 + 1 + 1 + 43);
    assert_true(wr_identity_verify(KEY, KEY_LEN, cookie, strlen(cookie), &v));
    assert_string_equal(v.user, "u");
    snprintf(header, sizeof header, "wr_vid=%s", cookie);
    budget = WR_VID_CANDIDATES_MAX;
    assert_true(wr_identity_find_visitor(&keys, header, &budget, &v));
    assert_string_equal(v.user, "u");
    /* found among the Cookie header's wr_vid values */
    snprintf(header, sizeof header, "a=b; wr_vid=%s", KNOWN_ACCOUNT);
    budget = WR_VID_CANDIDATES_MAX;
    assert_true(wr_identity_find_visitor(&keys, header, &budget, &v));
    assert_string_equal(v.user, "alice@shop");
    /* refused: bad user ids, a tampered account, a vid passed off as one */
    assert_int_equal(wr_identity_sign_account(KEY, KEY_LEN, "bad user", 1, cookie), WR_EINVAL);
    assert_int_equal(wr_identity_sign_account(KEY, KEY_LEN, "", 1, cookie), WR_EINVAL);
    memcpy(cookie, KNOWN_ACCOUNT, sizeof KNOWN_ACCOUNT);
    cookie[1] = 'Z';
    assert_false(wr_identity_verify(KEY, KEY_LEN, cookie, strlen(cookie), &v));
    snprintf(cookie, sizeof cookie, "~%s", KNOWN_COOKIE);
    assert_false(wr_identity_verify(KEY, KEY_LEN, cookie, strlen(cookie), &v));
    /* "bad user" (a space) signed by hand still does not verify */
    snprintf(cookie, sizeof cookie, "~YmFkIHVzZXI.1700000000.%s", KNOWN_ACCOUNT + 28);
    assert_false(wr_identity_verify(KEY, KEY_LEN, cookie, strlen(cookie), &v));
}

#define TESTS(X)                                                                                   \
    X(test_sign)                                                                                   \
    X(test_known_cookie)                                                                           \
    X(test_first_format_still_verifies)                                                            \
    X(test_mint)                                                                                   \
    X(test_verify_rejects)                                                                         \
    X(test_find_cookie)                                                                            \
    X(test_find_then_verify)                                                                       \
    X(test_find_bounded)                                                                           \
    X(test_should_renew)                                                                           \
    X(test_find_visitor)                                                                           \
    X(test_next_cookie)                                                                            \
    X(test_account_cookie)
WR_UNIT_MAIN(NULL, NULL, TESTS)
