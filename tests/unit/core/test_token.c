/*
 * test_token.c - JWT HS256 entry tokens.
 *
 * Expected values come from outside the code under test: RFC 7515
 * appendix A.1 vectors, and a token computed independently
 * (Python hmac/base64) for fixed claims. Hostile tokens are built by hand
 * (make_token) and signed with the right key, so that each rejection is
 * caused by the one thing the test changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/b64.h"
#include "base/crypto.h"
#include "core/token.h"
#include "unit_main.h"

static const uint8_t SECRET[] = "0123456789abcdef0123456789abcdef"; /* 32 bytes + NUL */
#define SECRET_LEN 32
static const uint8_t OTHER[] = "0123456789abcdef0123456789abcdeF";

#define HS256_HDR "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
#define GOOD_CLAIMS                                                                                \
    "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":\"AAECAwQFBgcICQoLDA0ODw\","    \
    "\"iat\":1700000000,\"exp\":1700000300}"
#define NOW 1700000100

/* RFC 7515 A.1 */
static const char A1_KEY[] =
    "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
static const char A1_INPUT[] = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9."
                               "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGx"
                               "lLmNvbS9pc19yb290Ijp0cnVlfQ";
static const char A1_SIG[] = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

/* Builds "b64(hdr).b64(payload).b64(HMAC(key, ...))" into out. */
static void make_token_n(const char *hdr, const char *payload, size_t payload_len,
                         const uint8_t *key, size_t key_len, char *out, size_t cap)
{
    size_t len, part;
    uint8_t mac[32];

    assert_int_equal(wr_b64url_encode((const uint8_t *)hdr, strlen(hdr), out, cap, &len), WR_OK);
    out[len++] = '.';
    assert_int_equal(
        wr_b64url_encode((const uint8_t *)payload, payload_len, out + len, cap - len, &part),
        WR_OK);
    len += part;
    assert_int_equal(wr_crypto_hmac_sha256(key, key_len, out, len, mac), WR_OK);
    out[len++] = '.';
    assert_int_equal(wr_b64url_encode(mac, sizeof mac, out + len, cap - len, &part), WR_OK);
}

static void make_token(const char *hdr, const char *payload, char *out, size_t cap)
{
    make_token_n(hdr, payload, strlen(payload), SECRET, SECRET_LEN, out, cap);
}

static wr_token_reason_t verify(const char *tok, int64_t now)
{
    wr_token_claims_t c;
    return wr_token_verify(tok, strlen(tok), SECRET, SECRET_LEN, now, &c);
}

static wr_token_reason_t verify_hp(const char *hdr, const char *payload)
{
    char tok[2 * WR_TOKEN_MAX];
    make_token(hdr, payload, tok, sizeof tok);
    return verify(tok, NOW);
}

/* A header signed with the right key over GOOD_CLAIMS, and its verdict. */
typedef struct {
    const char *hdr;
    wr_token_reason_t want;
} hdr_case_t;

static void check_headers(const hdr_case_t *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        wr_token_reason_t got = verify_hp(cases[i].hdr, GOOD_CLAIMS);
        if (got != cases[i].want)
            fail_msg("header %s: %s, want %s", cases[i].hdr, wr_token_reason_name(got),
                     wr_token_reason_name(cases[i].want));
    }
}

/* fixed_claims()' payload, exact bytes, with the members extra (",..." or
 * "") before its closing brace. */
#define FIXED_PAYLOAD(extra)                                                                       \
    "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"user-1@example.com\","                       \
    "\"jti\":\"AAECAwQFBgcICQoLDA0ODw\",\"iat\":1700000000,\"exp\":1700000300" extra "}"

static void fixed_claims(wr_token_claims_t *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->queue, "shop");
    strcpy(c->user, "user-1@example.com");
    strcpy(c->jti, "AAECAwQFBgcICQoLDA0ODw");
    c->iat = 1700000000;
    c->exp = 1700000300;
}

/* ---- RFC 7515 A.1 ------------------------------------------------------- */

static void a1_key(uint8_t key[64])
{
    size_t len;
    assert_int_equal(wr_b64url_decode(A1_KEY, strlen(A1_KEY), key, 64, &len), WR_OK);
    assert_int_equal(len, 64);
}

static void test_rfc7515_a1_signature(void **state)
{
    (void)state;
    uint8_t key[64], mac[32];
    char sig[64];
    size_t len;

    a1_key(key);
    assert_int_equal(wr_crypto_hmac_sha256(key, 64, A1_INPUT, strlen(A1_INPUT), mac), WR_OK);
    assert_int_equal(wr_b64url_encode(mac, 32, sig, sizeof sig, &len), WR_OK);
    assert_string_equal(sig, A1_SIG);
}

static void test_rfc7515_a1_verify(void **state)
{
    (void)state;
    uint8_t key[64], sig[32];
    char tok[512], bad[64];
    size_t len;
    wr_token_claims_t c;

    a1_key(key);
    snprintf(tok, sizeof tok, "%s.%s", A1_INPUT, A1_SIG);
    /* MAC verifies; the claims are not ours (iss "joe", no aud/sub/jti). */
    assert_int_equal(wr_token_verify(tok, strlen(tok), key, 64, 1300819379, &c),
                     WR_TOKEN_WRONG_ISSUER);

    /* One bit flipped in the signature bytes. */
    assert_int_equal(wr_b64url_decode(A1_SIG, strlen(A1_SIG), sig, sizeof sig, &len), WR_OK);
    sig[0] ^= 0x01;
    assert_int_equal(wr_b64url_encode(sig, 32, bad, sizeof bad, &len), WR_OK);
    snprintf(tok, sizeof tok, "%s.%s", A1_INPUT, bad);
    assert_int_equal(wr_token_verify(tok, strlen(tok), key, 64, 1300819379, &c),
                     WR_TOKEN_BAD_SIGNATURE);
    /* Last byte, lowest bit. */
    sig[0] ^= 0x01;
    sig[31] ^= 0x01;
    assert_int_equal(wr_b64url_encode(sig, 32, bad, sizeof bad, &len), WR_OK);
    snprintf(tok, sizeof tok, "%s.%s", A1_INPUT, bad);
    assert_int_equal(wr_token_verify(tok, strlen(tok), key, 64, 1300819379, &c),
                     WR_TOKEN_BAD_SIGNATURE);

    /* A changed payload character (iss "joe" -> "jod"... any edit) breaks the MAC. */
    snprintf(tok, sizeof tok, "%s.%s", A1_INPUT, A1_SIG);
    char *p = strchr(tok, '.') + 5;
    *p = (*p == 'A') ? 'B' : 'A';
    assert_int_equal(wr_token_verify(tok, strlen(tok), key, 64, 1300819379, &c),
                     WR_TOKEN_BAD_SIGNATURE);
}

/* ---- signing ------------------------------------------------------------- */

/* Independently computed (Python hmac + base64) for fixed_claims() and SECRET. */
static const char FIXED_TOKEN[] =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJpc3MiOiJ3YWl0cm9vbSIsImF1ZCI6InNob3AiLCJzdWIiOiJ1c2VyLTFAZXhhbXBsZS5jb20iLCJqdGkiOiJBQUVD"
    "QXdRRkJnY0lDUW9MREEwT0R3IiwiaWF0IjoxNzAwMDAwMDAwLCJleHAiOjE3MDAwMDAzMDB9."
    "MZ6ejaOHFALmryg7JSXQEIUE5XcQZQuB-36PF89ysiw";

static void test_sign_exact_encoding(void **state)
{
    (void)state;
    const char *hdr = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    const char *pay = FIXED_PAYLOAD("");
    char want[WR_TOKEN_MAX], tok[WR_TOKEN_MAX + 1], tok2[WR_TOKEN_MAX + 1];
    size_t len, part;
    wr_token_claims_t c;

    assert_int_equal(wr_b64url_encode((const uint8_t *)hdr, strlen(hdr), want, sizeof want, &len),
                     WR_OK);
    assert_string_equal(want, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9");
    want[len++] = '.';
    assert_int_equal(
        wr_b64url_encode((const uint8_t *)pay, strlen(pay), want + len, sizeof want - len, &part),
        WR_OK);
    len += part;
    want[len++] = '.';

    fixed_claims(&c);
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_OK);
    assert_memory_equal(tok, want, len); /* header and payload parts */
    assert_string_equal(tok, FIXED_TOKEN);

    /* Deterministic. */
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok2, sizeof tok2), WR_OK);
    assert_string_equal(tok, tok2);
}

static void test_sign_verify_round_trip(void **state)
{
    (void)state;
    wr_token_claims_t in, out;
    char tok[WR_TOKEN_MAX + 1];

    memset(&in, 0, sizeof in);
    strcpy(in.queue, "flash_sale-2");
    strcpy(in.user, "a.b~c:d@e+f-g_h");
    assert_int_equal(wr_token_new_jti(in.jti), WR_OK);
    in.iat = 1764460500;
    in.exp = 1764460800;
    assert_int_equal(wr_token_sign(&in, SECRET, SECRET_LEN, tok, sizeof tok), WR_OK);

    memset(&out, 0x5a, sizeof out);
    assert_int_equal(wr_token_verify(tok, strlen(tok), SECRET, SECRET_LEN, 1764460500, &out),
                     WR_TOKEN_OK);
    assert_string_equal(out.queue, "flash_sale-2");
    assert_string_equal(out.user, "a.b~c:d@e+f-g_h");
    assert_string_equal(out.jti, in.jti);
    assert_int_equal(out.iat, 1764460500);
    assert_int_equal(out.exp, 1764460800);

    /* exp is exclusive: valid at exp - 1, expired at exp. */
    assert_int_equal(verify(tok, 1764460799), WR_TOKEN_OK);
    assert_int_equal(verify(tok, 1764460800), WR_TOKEN_EXPIRED);
    assert_int_equal(verify(tok, 1764470000), WR_TOKEN_EXPIRED);

    /* Longest claims still fit in WR_TOKEN_MAX. */
    memset(in.queue, 'q', WR_QUEUE_NAME_MAX);
    in.queue[WR_QUEUE_NAME_MAX] = '\0';
    memset(in.user, 'u', WR_USER_ID_MAX);
    in.user[WR_USER_ID_MAX] = '\0';
    in.iat = INT64_MIN;
    in.exp = INT64_MAX;
    assert_int_equal(wr_token_sign(&in, SECRET, SECRET_LEN, tok, sizeof tok), WR_OK);
    assert_true(strlen(tok) <= WR_TOKEN_MAX);
    assert_int_equal(wr_token_verify(tok, strlen(tok), SECRET, SECRET_LEN, 0, &out), WR_TOKEN_OK);
    assert_string_equal(out.queue, in.queue);
    assert_string_equal(out.user, in.user);
    assert_true(out.iat == INT64_MIN);
    assert_true(out.exp == INT64_MAX);
}

static void test_sign_rejects(void **state)
{
    (void)state;
    wr_token_claims_t c;
    char tok[WR_TOKEN_MAX + 1];
    size_t n = strlen(FIXED_TOKEN);

    fixed_claims(&c);
    /* Output bounds: needs strlen + 1. */
    memset(tok, 'X', sizeof tok);
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, n), WR_ELIMIT);
    assert_int_equal(tok[0], 'X');
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, n + 1), WR_OK);
    assert_string_equal(tok, FIXED_TOKEN);

    assert_int_equal(wr_token_sign(&c, NULL, 0, tok, sizeof tok), WR_EINVAL);
    assert_int_equal(wr_token_sign(NULL, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);

    fixed_claims(&c);
    c.queue[0] = '\0';
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);
    fixed_claims(&c);
    strcpy(c.queue, "sh/op");
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);
    fixed_claims(&c);
    strcpy(c.user, "has space");
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);
    fixed_claims(&c);
    strcpy(c.user, "quote\"");
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);
    fixed_claims(&c);
    memset(c.user, 'u', sizeof c.user); /* unterminated */
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);
    fixed_claims(&c);
    c.jti[0] = '\0';
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);
    fixed_claims(&c);
    memset(c.jti, 'A', sizeof c.jti); /* 23 chars, unterminated */
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);
    fixed_claims(&c);
    c.jti[3] = '+';
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, tok, sizeof tok), WR_EINVAL);
}

/* ---- verification -------------------------------------------------------- */

static void test_verify_fixed_token(void **state)
{
    (void)state;
    wr_token_claims_t c;

    assert_int_equal(wr_token_verify(FIXED_TOKEN, strlen(FIXED_TOKEN), SECRET, SECRET_LEN, NOW, &c),
                     WR_TOKEN_OK);
    assert_string_equal(c.queue, "shop");
    assert_string_equal(c.user, "user-1@example.com");
    assert_string_equal(c.jti, "AAECAwQFBgcICQoLDA0ODw");
    assert_int_equal(c.iat, 1700000000);
    assert_int_equal(c.exp, 1700000300);
    /* Not NUL-terminated input: only len bytes are read. */
    char buf[WR_TOKEN_MAX + 8];
    memcpy(buf, FIXED_TOKEN, strlen(FIXED_TOKEN));
    memcpy(buf + strlen(FIXED_TOKEN), "xyz", 3);
    assert_int_equal(wr_token_verify(buf, strlen(FIXED_TOKEN), SECRET, SECRET_LEN, NOW, &c),
                     WR_TOKEN_OK);
    assert_int_equal(verify(FIXED_TOKEN, 1700000300), WR_TOKEN_EXPIRED);
}

static void test_alg_pinned(void **state)
{
    (void)state;
    char tok[WR_TOKEN_MAX + 1];
    size_t len;

    /* alg "none" with an empty signature (the classic attack). */
    assert_int_equal(wr_b64url_encode((const uint8_t *)"{\"alg\":\"none\",\"typ\":\"JWT\"}",
                                      26, /* strlen */
                                      tok, sizeof tok, &len),
                     WR_OK);
    tok[len++] = '.';
    size_t part;
    assert_int_equal(wr_b64url_encode((const uint8_t *)GOOD_CLAIMS, strlen(GOOD_CLAIMS), tok + len,
                                      sizeof tok - len, &part),
                     WR_OK);
    len += part;
    tok[len++] = '.';
    tok[len] = '\0';
    assert_int_equal(verify(tok, NOW), WR_TOKEN_BAD_ALG);

    static const hdr_case_t cases[] = {
        /* Every other header below is signed with the right key: only alg is wrong. */
        {"{\"alg\":\"none\",\"typ\":\"JWT\"}", WR_TOKEN_BAD_ALG},
        {"{\"alg\":\"HS512\",\"typ\":\"JWT\"}", WR_TOKEN_BAD_ALG},
        {"{\"alg\":\"RS256\",\"typ\":\"JWT\"}", WR_TOKEN_BAD_ALG},
        {"{\"alg\":\"hs256\",\"typ\":\"JWT\"}", WR_TOKEN_BAD_ALG},
        {"{\"alg\":\"HS256 \",\"typ\":\"JWT\"}", WR_TOKEN_BAD_ALG},
        /* jansson (without JSON_ALLOW_NUL) refuses \u0000: not even JSON to us. */
        {"{\"alg\":\"HS256\\u0000\",\"typ\":\"JWT\"}", WR_TOKEN_MALFORMED},
        {"{\"typ\":\"JWT\"}", WR_TOKEN_BAD_ALG},
        {"{\"alg\":256,\"typ\":\"JWT\"}", WR_TOKEN_BAD_ALG},
        {"{\"alg\":null}", WR_TOKEN_BAD_ALG},
        {"{\"alg\":[\"HS256\"]}", WR_TOKEN_BAD_ALG},
        /* The control: the same construction with HS256 verifies (typ is optional). */
        {HS256_HDR, WR_TOKEN_OK},
        {"{\"alg\":\"HS256\"}", WR_TOKEN_OK},
    };
    check_headers(cases, sizeof cases / sizeof cases[0]);
}

static void test_bad_header(void **state)
{
    (void)state;
    static const hdr_case_t cases[] = {
        /* crit names extensions we do not implement: refuse (RFC 7515 4.1.11). */
        {"{\"alg\":\"HS256\",\"crit\":[\"exp\"],\"exp\":1}", WR_TOKEN_MALFORMED},
        {"[\"HS256\"]", WR_TOKEN_MALFORMED},
        {"\"HS256\"", WR_TOKEN_MALFORMED},
        {"not json", WR_TOKEN_MALFORMED},
        {"", WR_TOKEN_MALFORMED},
        {HS256_HDR "x", WR_TOKEN_MALFORMED},
        /* Duplicate alg: parsers disagree on which wins, so refuse. */
        {"{\"alg\":\"none\",\"alg\":\"HS256\"}", WR_TOKEN_MALFORMED},
    };
    check_headers(cases, sizeof cases / sizeof cases[0]);
}

static void test_wrong_secret(void **state)
{
    (void)state;
    wr_token_claims_t c;
    char tok[WR_TOKEN_MAX + 1];

    fixed_claims(&c);
    assert_int_equal(wr_token_sign(&c, OTHER, SECRET_LEN, tok, sizeof tok), WR_OK);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_BAD_SIGNATURE);
    /* Secret one byte shorter (a prefix of the right one). */
    assert_int_equal(
        wr_token_verify(FIXED_TOKEN, strlen(FIXED_TOKEN), SECRET, SECRET_LEN - 1, NOW, &c),
        WR_TOKEN_BAD_SIGNATURE);
    assert_int_equal(wr_token_verify(FIXED_TOKEN, strlen(FIXED_TOKEN), NULL, 0, NOW, &c),
                     WR_TOKEN_BAD_SIGNATURE);
}

/* The MAC is checked before any claim is looked at. */
static void test_mac_before_claims(void **state)
{
    (void)state;
    char tok[WR_TOKEN_MAX + 1];
    const char *expired = "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":\"abc\","
                          "\"iat\":1,\"exp\":2}";

    make_token_n(HS256_HDR, "garbage", 7, SECRET, SECRET_LEN, tok, sizeof tok);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_MALFORMED);
    make_token_n(HS256_HDR, "garbage", 7, OTHER, SECRET_LEN, tok, sizeof tok);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_BAD_SIGNATURE);

    make_token_n(HS256_HDR, expired, strlen(expired), SECRET, SECRET_LEN, tok, sizeof tok);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_EXPIRED);
    make_token_n(HS256_HDR, expired, strlen(expired), OTHER, SECRET_LEN, tok, sizeof tok);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_BAD_SIGNATURE);
}

static void test_structure(void **state)
{
    (void)state;
    char tok[2 * WR_TOKEN_MAX];
    wr_token_claims_t c;
    size_t n = strlen(FIXED_TOKEN);
    const char *dot2 = strrchr(FIXED_TOKEN, '.');

    assert_int_equal(wr_token_verify(NULL, 0, SECRET, SECRET_LEN, NOW, &c), WR_TOKEN_MISSING);
    assert_int_equal(wr_token_verify("", 0, SECRET, SECRET_LEN, NOW, &c), WR_TOKEN_MISSING);

    /* Truncated at various points. */
    assert_int_equal(wr_token_verify(FIXED_TOKEN, 36, SECRET, SECRET_LEN, NOW, &c),
                     WR_TOKEN_MALFORMED); /* header only */
    assert_int_equal(wr_token_verify(FIXED_TOKEN, 37, SECRET, SECRET_LEN, NOW, &c),
                     WR_TOKEN_MALFORMED); /* "header." */
    assert_int_equal(
        wr_token_verify(FIXED_TOKEN, (size_t)(dot2 - FIXED_TOKEN), SECRET, SECRET_LEN, NOW, &c),
        WR_TOKEN_MALFORMED); /* no signature part */
    assert_int_equal(wr_token_verify(FIXED_TOKEN, n - 2, SECRET, SECRET_LEN, NOW, &c),
                     WR_TOKEN_MALFORMED); /* 41 signature chars: 41 % 4 == 1 */
    /* A signature that decodes but is not 32 bytes cannot verify. */
    assert_int_equal(wr_token_verify(FIXED_TOKEN, n - 3, SECRET, SECRET_LEN, NOW, &c),
                     WR_TOKEN_BAD_SIGNATURE);
    assert_int_equal(
        wr_token_verify(FIXED_TOKEN, (size_t)(dot2 - FIXED_TOKEN) + 1, SECRET, SECRET_LEN, NOW, &c),
        WR_TOKEN_BAD_SIGNATURE); /* "h.p." with HS256 */

    /* The right MAC followed by one more byte (33 bytes) is not the MAC. */
    {
        uint8_t sig[33];
        size_t len, hp = (size_t)(dot2 - FIXED_TOKEN) + 1;
        assert_int_equal(wr_b64url_decode(dot2 + 1, 43, sig, sizeof sig, &len), WR_OK);
        assert_int_equal(len, 32);
        sig[32] = 0;
        memcpy(tok, FIXED_TOKEN, hp);
        assert_int_equal(wr_b64url_encode(sig, 33, tok + hp, sizeof tok - hp, &len), WR_OK);
        assert_int_equal(verify(tok, NOW), WR_TOKEN_BAD_SIGNATURE);
    }

    /* Garbage and extra dots. */
    assert_int_equal(verify("garbage", NOW), WR_TOKEN_MALFORMED);
    assert_int_equal(verify("..", NOW), WR_TOKEN_MALFORMED);
    assert_int_equal(verify("a.b.c.d", NOW), WR_TOKEN_MALFORMED);
    snprintf(tok, sizeof tok, "%s.", FIXED_TOKEN);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_MALFORMED);
    snprintf(tok, sizeof tok, "%s.x", FIXED_TOKEN);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_MALFORMED);
    snprintf(tok, sizeof tok, "%s ", FIXED_TOKEN);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_MALFORMED);
    snprintf(tok, sizeof tok, "Bearer %s", FIXED_TOKEN);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_MALFORMED);
    snprintf(tok, sizeof tok, "%s==", FIXED_TOKEN);
    assert_int_equal(verify(tok, NOW), WR_TOKEN_MALFORMED);

    /* Non-canonical signature spelling: last char 'w' (110000b) -> 'x'
     * (110001b) decodes to the same bytes in a lax decoder. Refused. */
    snprintf(tok, sizeof tok, "%s", FIXED_TOKEN);
    assert_int_equal(tok[n - 1], 'w');
    tok[n - 1] = 'x';
    assert_int_equal(verify(tok, NOW), WR_TOKEN_MALFORMED);
}

/* Exactly WR_TOKEN_MAX bytes is accepted, one more is not. */
static void test_length_limit(void **state)
{
    (void)state;
    /* Token length = 36 + 1 + enc(L) + 1 + 43 = 81 + enc(L); enc(707) = 943
     * gives 1024, enc(708) = 944 gives 1025. */
    static const char base[] =
        "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":\"abc\","
        "\"iat\":1,\"exp\":1800000000,\"pad\":\"";
    char payload[800], tok[2 * WR_TOKEN_MAX];
    size_t fixed = strlen(base) + 2; /* + "\"}" */

    for (size_t total = 707; total <= 708; total++) {
        size_t pad = total - fixed;
        memcpy(payload, base, strlen(base));
        memset(payload + strlen(base), 'p', pad);
        memcpy(payload + strlen(base) + pad, "\"}", 3);
        assert_int_equal(strlen(payload), total);
        make_token(HS256_HDR, payload, tok, sizeof tok);
        if (total == 707) {
            assert_int_equal(strlen(tok), WR_TOKEN_MAX);
            assert_int_equal(verify(tok, NOW), WR_TOKEN_OK);
        } else {
            assert_int_equal(strlen(tok), WR_TOKEN_MAX + 1);
            assert_int_equal(verify(tok, NOW), WR_TOKEN_MALFORMED);
        }
    }
    char big[4096];
    memset(big, 'A', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    big[10] = '.';
    big[20] = '.';
    assert_int_equal(verify(big, NOW), WR_TOKEN_MALFORMED);
}

#define CLAIMS(iss, aud, sub, jti, iat, exp)                                                       \
    "{\"iss\":" iss ",\"aud\":" aud ",\"sub\":" sub ",\"jti\":" jti ",\"iat\":" iat                \
    ",\"exp\":" exp "}"

/* A JSON string of n characters c, quotes included, into out (n + 3
 * bytes). */
static void quoted(char *out, char c, size_t n)
{
    out[0] = '"';
    memset(out + 1, c, n);
    out[n + 1] = '"';
    out[n + 2] = '\0';
}

static void test_claims(void **state)
{
    (void)state;
    const char *H = HS256_HDR;
    char q64[80], q65[80], u128[160], u129[160], p[512];

    /* quoted: aud of 64 and 65 characters, sub of 128 and 129 */
    quoted(q64, 'q', 64);
    quoted(q65, 'q', 65);
    quoted(u128, 'u', 128);
    quoted(u129, 'u', 129);

    /* the claims (JSON values) and the verdict */
    const struct {
        const char *iss, *aud, *sub, *jti, *iat, *exp;
        wr_token_reason_t want;
    } rows[] = {
        /* Control. */
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_OK},
        /* Issuer. */
        {"\"other\"", "\"shop\"", "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_WRONG_ISSUER},
        {"\"Waitroom\"", "\"shop\"", "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_WRONG_ISSUER},
        {"\"waitroom\\u0000x\"", "\"shop\"", "\"u1\"", "\"abc\"", "1", "1800000000",
         WR_TOKEN_MALFORMED}, /* \u0000 is refused by the parser */
        {"5", "\"shop\"", "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        /* Integers only for iat / exp. */
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"abc\"", "1", "1800000000.0", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"abc\"", "1", "1.8e9", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"abc\"", "1.5", "1800000000", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"abc\"", "1", "\"1800000000\"",
         WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"abc\"", "null", "1800000000", WR_TOKEN_MALFORMED},
        /* Expired is judged only on a well-formed token. */
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"abc\"", "1", "1700000100", WR_TOKEN_EXPIRED},
        /* aud: [A-Za-z0-9_-]{1,64} */
        {"\"waitroom\"", q64, "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_OK},
        {"\"waitroom\"", q65, "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"\"", "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"sh.op\"", "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "[\"shop\"]", "\"u1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        /* sub: [A-Za-z0-9._~:@+-]{1,128} */
        {"\"waitroom\"", "\"shop\"", u128, "\"abc\"", "1", "1800000000", WR_TOKEN_OK},
        {"\"waitroom\"", "\"shop\"", u129, "\"abc\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "\"u/1\"", "\"abc\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "\"u1\\u0000\"", "\"abc\"", "1", "1800000000",
         WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "42", "\"abc\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        /* jti: 1..22 base64url chars */
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"AAECAwQFBgcICQoLDA0ODw\"", "1", "1800000000",
         WR_TOKEN_OK},
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"AAECAwQFBgcICQoLDA0ODwX\"", "1", "1800000000",
         WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"\"", "1", "1800000000", WR_TOKEN_MALFORMED},
        {"\"waitroom\"", "\"shop\"", "\"u1\"", "\"a+b\"", "1", "1800000000", WR_TOKEN_MALFORMED},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        snprintf(p, sizeof p, CLAIMS("%s", "%s", "%s", "%s", "%s", "%s"), rows[i].iss, rows[i].aud,
                 rows[i].sub, rows[i].jti, rows[i].iat, rows[i].exp);
        wr_token_reason_t got = verify_hp(H, p);
        if (got != rows[i].want)
            fail_msg("claims %s: %s, want %s", p, wr_token_reason_name(got),
                     wr_token_reason_name(rows[i].want));
    }

    /* Unknown extra claims are ignored; no iss, no exp: malformed. */
    assert_int_equal(verify_hp(H, "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":"
                                  "\"abc\",\"iat\":1,\"exp\":1800000000,\"x\":{\"y\":[1,2]}}"),
                     WR_TOKEN_OK);
    assert_int_equal(verify_hp(H, "{\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":\"abc\",\"iat\":1,"
                                  "\"exp\":1800000000}"),
                     WR_TOKEN_MALFORMED);
    assert_int_equal(verify_hp(H, "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":"
                                  "\"abc\",\"iat\":1}"),
                     WR_TOKEN_MALFORMED);

    /* Payload shape. */
    assert_int_equal(verify_hp(H, "[1,2,3]"), WR_TOKEN_MALFORMED);
    assert_int_equal(verify_hp(H, "{}"), WR_TOKEN_MALFORMED);
    assert_int_equal(verify_hp(H, "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":"
                                  "\"abc\",\"iat\":1,\"exp\":1800000000,\"exp\":1800000001}"),
                     WR_TOKEN_MALFORMED);
}

/* ---- randomness and names ------------------------------------------------ */

static void test_jti(void **state)
{
    (void)state;
    char a[WR_JTI_LEN + 1], b[WR_JTI_LEN + 1];
    uint8_t raw[20];
    size_t len;

    memset(a, 'X', sizeof a);
    assert_int_equal(wr_token_new_jti(a), WR_OK);
    assert_int_equal(wr_token_new_jti(b), WR_OK);
    assert_int_equal(strlen(a), 22);
    assert_int_equal(strlen(b), 22);
    assert_int_equal(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
                     22);
    assert_string_not_equal(a, b);
    assert_int_equal(wr_b64url_decode(a, 22, raw, sizeof raw, &len), WR_OK);
    assert_int_equal(len, 16);
}

static void test_reason_names(void **state)
{
    (void)state;
    assert_string_equal(wr_token_reason_name(WR_TOKEN_OK), "ok");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_MISSING), "missing");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_MALFORMED), "malformed");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_BAD_ALG), "unsupported_alg");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_BAD_SIGNATURE), "bad_signature");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_WRONG_QUEUE), "wrong_queue");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_EXPIRED), "expired");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_CONSUMED), "consumed");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_USER_MISMATCH), "user_mismatch");
    assert_string_equal(wr_token_reason_name(WR_TOKEN_WRONG_ISSUER), "wrong_issuer");
    assert_string_equal(wr_token_reason_name((wr_token_reason_t)99), "unknown");
}

/* Rotation: kid in the header, a keyring of current + previous keys. The
 * kids were computed with Python (hmac, base64) from SECRET and OTHER. */
static void test_kid_keyring(void **state)
{
    (void)state;
    wr_token_key_t cur = {OTHER, SECRET_LEN, ""}, prev = {SECRET, SECRET_LEN, ""};
    assert_int_equal(wr_token_kid(SECRET, SECRET_LEN, prev.kid), WR_OK);
    assert_string_equal(prev.kid, "IsQy-VMH");
    assert_int_equal(wr_token_kid(OTHER, SECRET_LEN, cur.kid), WR_OK);
    assert_string_equal(cur.kid, "M7DX7LW7");
    assert_int_equal(wr_token_kid(SECRET, 0, cur.kid), WR_EINVAL);
    assert_int_equal(wr_token_kid(OTHER, SECRET_LEN, cur.kid), WR_OK);

    wr_token_claims_t c = {.queue = "shop",
                           .user = "u1",
                           .jti = "AAECAwQFBgcICQoLDA0ODw",
                           .iat = 1700000000,
                           .exp = 1700000300};
    char tok[WR_TOKEN_MAX + 1], hdr[128];
    size_t hl;
    assert_int_equal(wr_token_sign_key(&c, &prev, tok, sizeof tok), WR_OK);
    assert_int_equal(wr_b64url_decode(tok, (size_t)(strchr(tok, '.') - tok), (uint8_t *)hdr,
                                      sizeof hdr - 1, &hl),
                     WR_OK);
    hdr[hl] = 0;
    assert_string_equal(hdr, "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"IsQy-VMH\"}");

    wr_token_key_t ring[2] = {cur, prev};
    wr_token_claims_t out;
    /* a token of the previous key verifies with the ring, not with cur alone */
    assert_int_equal(wr_token_verify_keys(tok, strlen(tok), ring, 2, NOW, &out), WR_TOKEN_OK);
    assert_string_equal(out.user, "u1");
    assert_int_equal(wr_token_verify_keys(tok, strlen(tok), ring, 1, NOW, &out),
                     WR_TOKEN_BAD_SIGNATURE);
    /* ...and it still expires like any token */
    assert_int_equal(wr_token_verify_keys(tok, strlen(tok), ring, 2, 1700000300, &out),
                     WR_TOKEN_EXPIRED);
    /* wr_token_verify with the named secret accepts it too */
    assert_int_equal(wr_token_verify(tok, strlen(tok), SECRET, SECRET_LEN, NOW, &out), WR_TOKEN_OK);
    /* a kid-less token (before kids existed) is tried against every key */
    char plain[WR_TOKEN_MAX + 1];
    assert_int_equal(wr_token_sign(&c, SECRET, SECRET_LEN, plain, sizeof plain), WR_OK);
    assert_int_equal(wr_token_verify_keys(plain, strlen(plain), ring, 2, NOW, &out), WR_TOKEN_OK);
    /* a kid that names a key is checked with that key only: a token signed
     * by SECRET but claiming cur's kid fails */
    char forged[WR_TOKEN_MAX + 1];
    make_token("{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"M7DX7LW7\"}", GOOD_CLAIMS, forged,
               sizeof forged);
    assert_int_equal(wr_token_verify_keys(forged, strlen(forged), ring, 2, NOW, &out),
                     WR_TOKEN_BAD_SIGNATURE);
    /* unknown kid, non-string kid, over-long kid: bad_signature */
    const char *hdrs[] = {
        "{\"alg\":\"HS256\",\"kid\":\"zzzzzzzz\"}", "{\"alg\":\"HS256\",\"kid\":7}",
        "{\"alg\":\"HS256\",\"kid\":\"IsQy-VMHx\"}", "{\"alg\":\"HS256\",\"kid\":\"\"}"};
    for (size_t i = 0; i < 4; i++) {
        make_token(hdrs[i], GOOD_CLAIMS, forged, sizeof forged);
        assert_int_equal(wr_token_verify_keys(forged, strlen(forged), ring, 2, NOW, &out),
                         WR_TOKEN_BAD_SIGNATURE);
    }
    /* alg is still checked first */
    make_token("{\"alg\":\"none\",\"kid\":\"IsQy-VMH\"}", GOOD_CLAIMS, forged, sizeof forged);
    assert_int_equal(wr_token_verify_keys(forged, strlen(forged), ring, 2, NOW, &out),
                     WR_TOKEN_BAD_ALG);
    /* an empty ring verifies nothing */
    assert_int_equal(wr_token_verify_keys(tok, strlen(tok), ring, 0, NOW, &out),
                     WR_TOKEN_BAD_SIGNATURE);
    /* a bad kid is refused by the signer */
    wr_token_key_t bad = {SECRET, SECRET_LEN, "a.b"};
    assert_int_equal(wr_token_sign_key(&c, &bad, tok, sizeof tok), WR_EINVAL);
}

/* ---- degraded mode: the fail-open claim "fo" ------------------------------ */

/* in, signed with SECRET into tok (WR_TOKEN_MAX + 1 bytes), is exactly the
 * token built by hand from HS256_HDR and payload, and verifies at NOW into
 * *out (filled with junk first). */
static void sign_exact(const wr_token_claims_t *in, const char *payload, char *tok,
                       wr_token_claims_t *out)
{
    char want[2 * WR_TOKEN_MAX];
    assert_int_equal(wr_token_sign(in, SECRET, SECRET_LEN, tok, WR_TOKEN_MAX + 1), WR_OK);
    make_token(HS256_HDR, payload, want, sizeof want);
    assert_string_equal(tok, want);
    memset(out, 0x5a, sizeof *out);
    assert_int_equal(wr_token_verify(tok, strlen(tok), SECRET, SECRET_LEN, NOW, out), WR_TOKEN_OK);
}

static void test_fail_open_claim(void **state)
{
    (void)state;
    wr_token_claims_t in, out;
    char tok[WR_TOKEN_MAX + 1], plain[WR_TOKEN_MAX + 1], want[2 * WR_TOKEN_MAX];

    /* Signed with fail_open: the payload ends with ,"fo":true (exact bytes,
     * built by hand), and verify gives it back. */
    fixed_claims(&in);
    in.fail_open = true;
    sign_exact(&in, FIXED_PAYLOAD(",\"fo\":true"), tok, &out);
    assert_true(out.fail_open);
    assert_string_equal(out.jti, in.jti);

    /* Without it: the v1 token, byte for byte, and an ordinary one. */
    in.fail_open = false;
    assert_int_equal(wr_token_sign(&in, SECRET, SECRET_LEN, plain, sizeof plain), WR_OK);
    assert_string_equal(plain, FIXED_TOKEN);
    assert_int_equal(wr_token_verify(plain, strlen(plain), SECRET, SECRET_LEN, NOW, &out),
                     WR_TOKEN_OK);
    assert_false(out.fail_open);

    /* "fo":false is ordinary; any other type is malformed. */
    make_token(HS256_HDR,
               "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":\"abc\","
               "\"iat\":1,\"exp\":1800000000,\"fo\":false}",
               want, sizeof want);
    assert_int_equal(wr_token_verify(want, strlen(want), SECRET, SECRET_LEN, NOW, &out),
                     WR_TOKEN_OK);
    assert_false(out.fail_open);
    assert_int_equal(verify_hp(HS256_HDR, "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":"
                                          "\"u1\",\"jti\":\"abc\",\"iat\":1,\"exp\":"
                                          "1800000000,\"fo\":1}"),
                     WR_TOKEN_MALFORMED);
    assert_int_equal(verify_hp(HS256_HDR, "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":"
                                          "\"u1\",\"jti\":\"abc\",\"iat\":1,\"exp\":"
                                          "1800000000,\"fo\":\"true\"}"),
                     WR_TOKEN_MALFORMED);

    /* The claim is covered by the MAC: flipping it on an ordinary token
     * (same header, payload re-encoded, old signature) is bad_signature. */
    const char *d1 = strchr(plain, '.');
    const char *d2 = strchr(d1 + 1, '.');
    char forged[2 * WR_TOKEN_MAX], body[WR_TOKEN_MAX];
    size_t n;
    make_token(HS256_HDR, FIXED_PAYLOAD(",\"fo\":true"), body, sizeof body);
    n = (size_t)(strrchr(body, '.') - body);
    snprintf(forged, sizeof forged, "%.*s%s", (int)n, body, d2);
    assert_int_equal(verify(forged, NOW), WR_TOKEN_BAD_SIGNATURE);
}

/* ---- bypass passes: the claim "byp" (API 1.3, "Bypass, safely") ----------- */

static void test_bypass_claim(void **state)
{
    (void)state;
    wr_token_claims_t in, out;
    char tok[WR_TOKEN_MAX + 1];
    fixed_claims(&in);
    snprintf(in.bypass, sizeof in.bypass, "%s", "staff-1");
    sign_exact(&in, FIXED_PAYLOAD(",\"byp\":\"staff-1\""), tok, &out);
    assert_string_equal(out.bypass, "staff-1");
    assert_false(out.fail_open);
    /* without it: "" */
    assert_int_equal(
        wr_token_verify(FIXED_TOKEN, strlen(FIXED_TOKEN), SECRET, SECRET_LEN, NOW, &out),
        WR_TOKEN_OK);
    assert_string_equal(out.bypass, "");
    /* a "byp" that is not a rule name is malformed */
    static const char *const bad[] = {"1", "\"\"", "\"Staff\"", "true",
                                      "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char payload[256];
        snprintf(payload, sizeof payload,
                 "{\"iss\":\"waitroom\",\"aud\":\"shop\",\"sub\":\"u1\",\"jti\":\"abc\","
                 "\"iat\":1,\"exp\":1800000000,\"byp\":%s}",
                 bad[i]);
        assert_int_equal(verify_hp(HS256_HDR, payload), WR_TOKEN_MALFORMED);
    }
}

#define TESTS(X)                                                                                   \
    X(test_rfc7515_a1_signature)                                                                   \
    X(test_rfc7515_a1_verify)                                                                      \
    X(test_sign_exact_encoding)                                                                    \
    X(test_sign_verify_round_trip)                                                                 \
    X(test_sign_rejects)                                                                           \
    X(test_verify_fixed_token)                                                                     \
    X(test_alg_pinned)                                                                             \
    X(test_bad_header)                                                                             \
    X(test_wrong_secret)                                                                           \
    X(test_mac_before_claims)                                                                      \
    X(test_structure)                                                                              \
    X(test_length_limit)                                                                           \
    X(test_claims)                                                                                 \
    X(test_jti)                                                                                    \
    X(test_reason_names)                                                                           \
    X(test_kid_keyring)                                                                            \
    X(test_fail_open_claim)                                                                        \
    X(test_bypass_claim)
WR_UNIT_MAIN(NULL, NULL, TESTS)
