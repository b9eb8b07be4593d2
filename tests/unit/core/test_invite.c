/*
 * test_invite.c - invites (invite.h): every refusal reason of docs/API.md,
 * invites made by other JWT libraries (only sub, aud, exp), signing, and
 * nbf.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/b64.h"
#include "base/crypto.h"
#include "core/invite.h"
#include "core/token.h"
#include "unit_main.h"

#define KEY "an-invite-key-of-at-least-32-bytes!!"
#define NOW 1764460800

/* A JWT of header hdr and claims payload (JSON texts) signed with key. */
static void jwt(const char *hdr, const char *payload, const char *key, char *out, size_t cap)
{
    char h[512], p[1024];
    uint8_t mac[32];
    assert_int_equal(wr_b64url_encode((const uint8_t *)hdr, strlen(hdr), h, sizeof(h), NULL),
                     WR_OK);
    assert_int_equal(
        wr_b64url_encode((const uint8_t *)payload, strlen(payload), p, sizeof(p), NULL), WR_OK);
    char signing[1600];
    snprintf(signing, sizeof(signing), "%s.%s", h, p);
    assert_int_equal(
        wr_crypto_hmac_sha256((const uint8_t *)key, strlen(key), signing, strlen(signing), mac),
        WR_OK);
    char s[64];
    assert_int_equal(wr_b64url_encode(mac, 32, s, sizeof(s), NULL), WR_OK);
    snprintf(out, cap, "%s.%s", signing, s);
}

static wr_invite_reason_t check(const char *inv, const char *queue, char *sub)
{
    return wr_invite_verify(inv, inv ? strlen(inv) : 0, (const uint8_t *)KEY, strlen(KEY), queue,
                            NOW, sub, NULL);
}

static const char HS[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";

static void test_valid(void **state)
{
    (void)state;
    char t[2048], sub[WR_USER_ID_MAX + 1] = "";
    /* the minimum a shop's JWT library writes */
    jwt(HS, "{\"sub\":\"alice@shop\",\"aud\":\"sale\",\"exp\":1764464400}", KEY, t, sizeof(t));
    assert_int_equal(check(t, "sale", sub), WR_INVITE_OK);
    assert_string_equal(sub, "alice@shop");
    /* aud as an array; exp as a real; extra claims ignored */
    jwt("{\"alg\":\"HS256\"}",
        "{\"iss\":\"shop\",\"sub\":\"u1\",\"aud\":[\"x\",\"sale\"],\"exp\":1764464400.5,\"jti\":1}",
        KEY, t, sizeof(t));
    assert_int_equal(check(t, "sale", sub), WR_INVITE_OK);
    assert_string_equal(sub, "u1");
    /* signed by us */
    assert_int_equal(wr_invite_sign((const uint8_t *)KEY, strlen(KEY), "sale", "bob", NULL, NOW,
                                    NOW + 3600, t, sizeof(t)),
                     WR_OK);
    assert_int_equal(check(t, "sale", sub), WR_INVITE_OK);
    assert_string_equal(sub, "bob");
    /* which is never an entry token, even under the same key */
    wr_token_claims_t cl;
    assert_int_not_equal(wr_token_verify(t, strlen(t), (const uint8_t *)KEY, strlen(KEY), NOW, &cl),
                         WR_TOKEN_OK);
}

static void test_reasons(void **state)
{
    (void)state;
    char t[2048], sub[WR_USER_ID_MAX + 1];
    assert_int_equal(check(NULL, "sale", sub), WR_INVITE_MISSING);
    assert_int_equal(check("", "sale", sub), WR_INVITE_MISSING);
    assert_string_equal(wr_invite_reason_name(WR_INVITE_MISSING), "missing");

    /* malformed: not a JWT, not HS256, claims missing or mistyped */
    static const char *const junk[] = {"x", "a.b", "a.b.c.d", "!!!.###.$$$", "e30.e30.e30"};
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
        assert_int_equal(check(junk[i], "sale", sub), WR_INVITE_MALFORMED);
    static const char *const algs[] = {"{\"alg\":\"none\"}", "{\"alg\":\"HS512\"}",
                                       "{\"alg\":\"RS256\"}", "{\"typ\":\"JWT\"}",
                                       "{\"alg\":\"hs256\"}"};
    for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
        jwt(algs[i], "{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400}", KEY, t, sizeof(t));
        assert_int_equal(check(t, "sale", sub), WR_INVITE_MALFORMED);
    }
    static const char *const claims[] = {
        "{\"aud\":\"sale\",\"exp\":1764464400}",
        "{\"sub\":\"u\",\"exp\":1764464400}",
        "{\"sub\":\"u\",\"aud\":\"sale\"}",
        "{\"sub\":7,\"aud\":\"sale\",\"exp\":1764464400}",
        "{\"sub\":\"\",\"aud\":\"sale\",\"exp\":1764464400}",
        "{\"sub\":\"a b\",\"aud\":\"sale\",\"exp\":1764464400}",
        "{\"sub\":\"u\",\"aud\":7,\"exp\":1764464400}",
        "{\"sub\":\"u\",\"aud\":[],\"exp\":1764464400}",
        "{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":\"1764464400\"}",
        "[1,2]",
    };
    for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
        jwt(HS, claims[i], KEY, t, sizeof(t));
        if (check(t, "sale", sub) != WR_INVITE_MALFORMED)
            fail_msg("claims %s: not malformed", claims[i]);
    }
    assert_string_equal(wr_invite_reason_name(WR_INVITE_MALFORMED), "malformed");

    /* signature: another key, a changed payload */
    jwt(HS, "{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400}",
        "another-key-another-key-another-key!", t, sizeof(t));
    assert_int_equal(check(t, "sale", sub), WR_INVITE_SIGNATURE);
    jwt(HS, "{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400}", KEY, t, sizeof(t));
    char *dot = strrchr(t, '.');
    dot[1] = dot[1] == 'A' ? 'B' : 'A';
    assert_int_equal(check(t, "sale", sub), WR_INVITE_SIGNATURE);
    assert_string_equal(wr_invite_reason_name(WR_INVITE_SIGNATURE), "signature");

    /* expired: exp == now counts as past */
    jwt(HS, "{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764460800}", KEY, t, sizeof(t));
    assert_int_equal(check(t, "sale", sub), WR_INVITE_EXPIRED);
    assert_string_equal(wr_invite_reason_name(WR_INVITE_EXPIRED), "expired");

    /* wrongQueue */
    jwt(HS, "{\"sub\":\"u\",\"aud\":\"other\",\"exp\":1764464400}", KEY, t, sizeof(t));
    assert_int_equal(check(t, "sale", sub), WR_INVITE_WRONG_QUEUE);
    jwt(HS, "{\"sub\":\"u\",\"aud\":\"salex\",\"exp\":1764464400}", KEY, t, sizeof(t));
    assert_int_equal(check(t, "sale", sub), WR_INVITE_WRONG_QUEUE);
    assert_string_equal(wr_invite_reason_name(WR_INVITE_WRONG_QUEUE), "wrongQueue");
    assert_string_equal(wr_invite_reason_name(WR_INVITE_WRONG_USER), "wrongUser");
}

static void test_sign_errors(void **state)
{
    (void)state;
    char t[2048];
    assert_int_equal(
        wr_invite_sign((const uint8_t *)"short", 5, "sale", "u", NULL, NOW, NOW + 1, t, sizeof(t)),
        WR_EINVAL);
    assert_int_equal(wr_invite_sign((const uint8_t *)KEY, strlen(KEY), "bad queue", "u", NULL, NOW,
                                    NOW + 1, t, sizeof(t)),
                     WR_EINVAL);
    assert_int_equal(wr_invite_sign((const uint8_t *)KEY, strlen(KEY), "sale", "bad user", NULL,
                                    NOW, NOW + 1, t, sizeof(t)),
                     WR_EINVAL);
    assert_int_equal(wr_invite_sign((const uint8_t *)KEY, strlen(KEY), "sale", "u", NULL, NOW, NOW,
                                    t, sizeof(t)),
                     WR_EINVAL);
    assert_int_equal(
        wr_invite_sign((const uint8_t *)KEY, strlen(KEY), "sale", "u", NULL, NOW, NOW + 1, t, 10),
        WR_ELIMIT);
}

/* Issue 22: nbf (RFC 7519 4.1.5) is honoured: an invite not valid yet is
 * refused with its own reason, without leeway (as exp). */
static void test_not_before(void **state)
{
    (void)state;
    char t[2048], sub[WR_USER_ID_MAX + 1] = "";
    static const struct {
        const char *claims;
        wr_invite_reason_t want;
    } cases[] = {
        {"{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400,\"nbf\":1764460801}",
         WR_INVITE_NOT_YET},
        /* nbf == now is valid (not before it); earlier too; a real number */
        {"{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400,\"nbf\":1764460800}", WR_INVITE_OK},
        {"{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400,\"nbf\":1764460799.5}", WR_INVITE_OK},
        /* an nbf that is not a number is malformed */
        {"{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400,\"nbf\":\"soon\"}",
         WR_INVITE_MALFORMED},
        /* expired wins over not yet valid (an invite whose window has passed) */
        {"{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764460000,\"nbf\":1764469999}",
         WR_INVITE_EXPIRED},
        /* not yet valid is told before wrongQueue */
        {"{\"sub\":\"u\",\"aud\":\"other\",\"exp\":1764464400,\"nbf\":1764460900}",
         WR_INVITE_NOT_YET},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        jwt(HS, cases[i].claims, KEY, t, sizeof(t));
        wr_invite_reason_t got = check(t, "sale", sub);
        if (got != cases[i].want)
            fail_msg("%s: %s, want %s", cases[i].claims, wr_invite_reason_name(got),
                     wr_invite_reason_name(cases[i].want));
    }
    assert_string_equal(wr_invite_reason_name(WR_INVITE_NOT_YET), "notYetValid");
}

/* The priority group claim grp (API 1.3): copied when it can name a
 * group, malformed otherwise; signed by us with --group. */
static void test_group_claim(void **state)
{
    (void)state;
    char t[2048], sub[WR_USER_ID_MAX + 1], grp[WR_GROUP_NAME_MAX + 1] = "x";
    jwt(HS, "{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400}", KEY, t, sizeof(t));
    assert_int_equal(
        wr_invite_verify(t, strlen(t), (const uint8_t *)KEY, strlen(KEY), "sale", NOW, sub, grp),
        WR_INVITE_OK);
    assert_string_equal(grp, ""); /* none: the standard line */
    jwt(HS, "{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400,\"grp\":\"fanclub\"}", KEY, t,
        sizeof(t));
    assert_int_equal(
        wr_invite_verify(t, strlen(t), (const uint8_t *)KEY, strlen(KEY), "sale", NOW, sub, grp),
        WR_INVITE_OK);
    assert_string_equal(grp, "fanclub");
    static const char *const bad[] = {"\"standard\"",
                                      "\"Fan\"",
                                      "\"\"",
                                      "7",
                                      "null",
                                      "[\"fanclub\"]",
                                      "\"abcdefghijklmnopqrstuvwxyz0123456\""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char payload[256];
        snprintf(payload, sizeof(payload),
                 "{\"sub\":\"u\",\"aud\":\"sale\",\"exp\":1764464400,\"grp\":%s}", bad[i]);
        jwt(HS, payload, KEY, t, sizeof(t));
        assert_int_equal(wr_invite_verify(t, strlen(t), (const uint8_t *)KEY, strlen(KEY), "sale",
                                          NOW, sub, grp),
                         WR_INVITE_MALFORMED);
        assert_string_equal(grp, "");
    }
    /* signed by us */
    assert_int_equal(wr_invite_sign((const uint8_t *)KEY, strlen(KEY), "sale", "bob", "vip-1", NOW,
                                    NOW + 60, t, sizeof(t)),
                     WR_OK);
    assert_int_equal(
        wr_invite_verify(t, strlen(t), (const uint8_t *)KEY, strlen(KEY), "sale", NOW, sub, grp),
        WR_INVITE_OK);
    assert_string_equal(grp, "vip-1");
    assert_string_equal(sub, "bob");
    assert_int_equal(wr_invite_sign((const uint8_t *)KEY, strlen(KEY), "sale", "bob", "standard",
                                    NOW, NOW + 60, t, sizeof(t)),
                     WR_EINVAL);
    assert_int_equal(wr_invite_sign((const uint8_t *)KEY, strlen(KEY), "sale", "bob", "", NOW,
                                    NOW + 60, t, sizeof(t)),
                     WR_EINVAL);
}

#define TESTS(X)                                                                                   \
    X(test_group_claim)                                                                            \
    X(test_valid)                                                                                  \
    X(test_reasons)                                                                                \
    X(test_sign_errors)                                                                            \
    X(test_not_before)
WR_UNIT_MAIN(NULL, NULL, TESTS)
