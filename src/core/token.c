/*
 * token.c - entry tokens: JWT (RFC 7519) with HS256 (RFC 7515), OpenSSL.
 *
 * A token is three base64url parts "H.P.S": H the JOSE header, P the
 * claims, S = HMAC-SHA256(secret, "H.P"). We produce exactly
 *   H = {"alg":"HS256","typ":"JWT"}
 *   P = {"iss":"waitroom","aud":Q,"sub":U,"jti":J,"iat":N,"exp":N}
 * (compact JSON, claims in that order), so signing is deterministic; a
 * fail-open pass (degraded mode) adds ,"fo":true at the end, a bypass
 * pass ,"byp":"<rule name>". A token without "fo", or with "fo":false, is
 * ordinary; any other "fo" is malformed, and so is a "byp" that is not a
 * rule name. With
 * a key id (rotation), H = {"alg":"HS256","typ":"JWT","kid":K}.
 *
 * Verification is ordered so that nothing an attacker controls is trusted
 * before the MAC verifies:
 *   1. length <= WR_TOKEN_MAX and exactly two dots        else malformed
 *   2. H decodes to a JSON object without "crit"          else malformed
 *      whose "alg" is exactly the string "HS256"          else unsupported_alg
 *      and whose "kid", if any, is a string naming a key  else bad_signature
 *   3. S is strict base64url                              else malformed
 *      of exactly 32 bytes equal, in constant time
 *      (wr_crypto_equal), to the HMAC over "H.P"          else bad_signature
 *   4. only then P is decoded and its claims checked: types and syntax
 *      (malformed), iss (wrong_issuer), exp > now (expired).
 * Steps 1-3 and the decoding of P are wr_token_verify_jws, which the
 * invites (invite.c) share: they are JWTs of the same shape signed with
 * another key, whose claims are checked by their own rules. Likewise
 * wr_token_sign_json signs any claims JSON with the plain header.
 * The strict decoder gives every MAC exactly one accepted encoding.
 *
 * Everything is bounded by WR_TOKEN_MAX: the decoded parts live in stack
 * buffers of that size. jansson values are created and released within
 * each call; the caller owns every buffer passed in. No global state, so
 * the functions are safe to call from any thread.
 */
#include "core/token.h"

#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "base/b64.h"
#include "base/names.h"
#include "base/crypto.h"
#include "base/ids.h"

#define MAC_LEN WR_CRYPTO_MAC_LEN
#define ISSUER  "waitroom"

static const char *const reason_names[] = {
    [WR_TOKEN_OK] = "ok",
    [WR_TOKEN_MISSING] = "missing",
    [WR_TOKEN_MALFORMED] = "malformed",
    [WR_TOKEN_BAD_ALG] = "unsupported_alg",
    [WR_TOKEN_BAD_SIGNATURE] = "bad_signature",
    [WR_TOKEN_WRONG_QUEUE] = "wrong_queue",
    [WR_TOKEN_EXPIRED] = "expired",
    [WR_TOKEN_CONSUMED] = "consumed",
    [WR_TOKEN_USER_MISMATCH] = "user_mismatch",
    [WR_TOKEN_WRONG_ISSUER] = "wrong_issuer",
    [WR_TOKEN_NO_SESSION] = "noSession",
};

const char *wr_token_reason_name(wr_token_reason_t r)
{
    return WR_NAMES_GET(reason_names, r, "unknown");
}

/* Length of the NUL-terminated string in a fixed array, or cap if unterminated. */
static size_t bounded_len(const char *s, size_t cap)
{
    return strnlen(s, cap);
}

/* ---- jti ---------------------------------------------------------------- */

wr_err_t wr_token_new_jti(char out[WR_JTI_LEN + 1])
{
    uint8_t raw[16];
    wr_err_t err;

    if (!out)
        return WR_EINVAL;
    err = wr_crypto_random(raw, sizeof raw);
    if (err != WR_OK)
        return err;
    return wr_b64url_encode(raw, sizeof raw, out, WR_JTI_LEN + 1, NULL);
}

/* ---- signing ------------------------------------------------------------- */

/* base64url of {"alg":"HS256","typ":"JWT"} is built at call time from this. */
static const char header_json[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";

/* Writes the compact claims JSON to buf; returns its length, or 0. */
static size_t claims_json(const wr_token_claims_t *c, char *buf, size_t cap)
{
    json_t *o = json_object();
    size_t n = 0;

    if (!o)
        return 0;
    if (json_object_set_new(o, "iss", json_string(ISSUER)) ||
        json_object_set_new(o, "aud", json_string(c->queue)) ||
        json_object_set_new(o, "sub", json_string(c->user)) ||
        json_object_set_new(o, "jti", json_string(c->jti)) ||
        json_object_set_new(o, "iat", json_integer((json_int_t)c->iat)) ||
        json_object_set_new(o, "exp", json_integer((json_int_t)c->exp)) ||
        (c->fail_open && json_object_set_new(o, "fo", json_true())) ||
        (c->bypass[0] && json_object_set_new(o, "byp", json_string(c->bypass))))
        goto out;
    n = json_dumpb(o, buf, cap, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (n > cap)
        n = 0;
out:
    json_decref(o);
    return n;
}

/* Writes "H.P.S" for a JOSE header and claims (JSON texts) under secret. */
static wr_err_t sign_parts(const char *hdr, size_t hdr_len, const char *json, size_t json_len,
                           const uint8_t *secret, size_t secret_len, char *out, size_t cap)
{
    char tok[WR_TOKEN_MAX + 1];
    uint8_t mac[MAC_LEN];
    size_t len, part;
    wr_err_t err;

    err = wr_b64url_encode((const uint8_t *)hdr, hdr_len, tok, sizeof tok, &part);
    if (err != WR_OK)
        return err;
    len = part;
    if (len + 1 >= sizeof tok)
        return WR_ELIMIT;
    tok[len++] = '.';
    err = wr_b64url_encode((const uint8_t *)json, json_len, tok + len, sizeof tok - len, &part);
    if (err != WR_OK)
        return err;
    len += part;
    err = wr_crypto_hmac_sha256(secret, secret_len, tok, len, mac);
    if (err != WR_OK)
        return err;
    if (len + 1 >= sizeof tok)
        return WR_ELIMIT;
    tok[len++] = '.';
    err = wr_b64url_encode(mac, sizeof mac, tok + len, sizeof tok - len, &part);
    if (err != WR_OK)
        return err;
    len += part;

    if (cap < len + 1)
        return WR_ELIMIT;
    memcpy(out, tok, len + 1);
    return WR_OK;
}

static wr_err_t sign(const wr_token_claims_t *claims, const uint8_t *secret, size_t secret_len,
                     const char *kid, char *out, size_t cap)
{
    char json[WR_TOKEN_MAX];
    char hdr[96];
    size_t hdr_len;
    size_t json_len;

    if (!claims || !out || !secret || secret_len == 0)
        return WR_EINVAL;
    if (!wr_ids_valid_queue_n(claims->queue, bounded_len(claims->queue, sizeof claims->queue)) ||
        !wr_ids_valid_user_n(claims->user, bounded_len(claims->user, sizeof claims->user)) ||
        !wr_ids_valid_jti_n(claims->jti, bounded_len(claims->jti, sizeof claims->jti)))
        return WR_EINVAL;

    json_len = claims_json(claims, json, sizeof json);
    if (json_len == 0)
        return WR_ENOMEM;

    if (kid && kid[0]) {
        size_t kl = strnlen(kid, WR_KID_LEN + 1);
        if (!wr_ids_valid_kid_n(kid, kl))
            return WR_EINVAL;
        hdr_len = (size_t)snprintf(hdr, sizeof hdr,
                                   "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"%s\"}", kid);
    } else {
        memcpy(hdr, header_json, sizeof header_json);
        hdr_len = sizeof header_json - 1;
    }
    return sign_parts(hdr, hdr_len, json, json_len, secret, secret_len, out, cap);
}

wr_err_t wr_token_sign_json(const char *claims, size_t len, const uint8_t *secret,
                            size_t secret_len, char *out, size_t cap)
{
    if (!claims || len == 0 || !out || !secret || secret_len == 0)
        return WR_EINVAL;
    return sign_parts(header_json, sizeof header_json - 1, claims, len, secret, secret_len, out,
                      cap);
}

wr_err_t wr_token_sign(const wr_token_claims_t *claims, const uint8_t *secret, size_t secret_len,
                       char *out, size_t cap)
{
    return sign(claims, secret, secret_len, NULL, out, cap);
}

wr_err_t wr_token_sign_key(const wr_token_claims_t *claims, const wr_token_key_t *key, char *out,
                           size_t cap)
{
    if (!key)
        return WR_EINVAL;
    return sign(claims, key->secret, key->len, key->kid, out, cap);
}

wr_err_t wr_token_kid(const uint8_t *secret, size_t len, char kid[WR_KID_LEN + 1])
{
    uint8_t mac[MAC_LEN];
    char b64[48];
    if (!secret || len == 0 || !kid)
        return WR_EINVAL;
    wr_err_t err = wr_crypto_hmac_sha256(secret, len, "waitroom kid v1", 15, mac);
    if (err == WR_OK)
        err = wr_b64url_encode(mac, sizeof mac, b64, sizeof b64, NULL);
    if (err != WR_OK)
        return err;
    memcpy(kid, b64, WR_KID_LEN);
    kid[WR_KID_LEN] = '\0';
    return WR_OK;
}

/* ---- verification -------------------------------------------------------- */

/* Decodes a base64url part and parses it as a JSON object; NULL if it is not one. */
static json_t *decode_object(const char *s, size_t n)
{
    uint8_t buf[WR_TOKEN_MAX];
    size_t len;
    json_t *v;

    if (wr_b64url_decode(s, n, buf, sizeof buf, &len) != WR_OK)
        return NULL;
    v = json_loadb((const char *)buf, len, JSON_REJECT_DUPLICATES, NULL);
    if (v && !json_is_object(v)) {
        json_decref(v);
        return NULL;
    }
    return v;
}

/* Checks the header: object, alg exactly "HS256", no "crit"; copies a
 * string "kid" of at most WR_KID_LEN chars to kid ("" when absent; a kid of
 * another shape can name none of our keys: bad_signature). */
static wr_token_reason_t check_header(const char *s, size_t n, char kid[WR_KID_LEN + 1])
{
    json_t *h = decode_object(s, n);
    wr_token_reason_t r = WR_TOKEN_OK;
    json_t *alg, *k;

    kid[0] = '\0';
    if (!h)
        return WR_TOKEN_MALFORMED;
    alg = json_object_get(h, "alg");
    k = json_object_get(h, "kid");
    if (!json_is_string(alg) || json_string_length(alg) != 5 ||
        memcmp(json_string_value(alg), "HS256", 5) != 0)
        r = WR_TOKEN_BAD_ALG;
    else if (json_object_get(h, "crit"))
        r = WR_TOKEN_MALFORMED; /* we understand no extension (RFC 7515 4.1.11) */
    else if (k && (!json_is_string(k) ||
                   !wr_ids_valid_kid_n(json_string_value(k), json_string_length(k))))
        r = WR_TOKEN_BAD_SIGNATURE;
    else if (k)
        memcpy(kid, json_string_value(k), json_string_length(k) + 1);
    json_decref(h);
    return r;
}

/* The string claim `name` if it is a string, with its length; else NULL. */
static const char *string_claim(json_t *o, const char *name, size_t *len)
{
    json_t *v = json_object_get(o, name);

    if (!json_is_string(v))
        return NULL;
    *len = json_string_length(v);
    return json_string_value(v);
}

/* Checks the claims of a token whose MAC has verified; fills *out. */
static wr_token_reason_t check_claims(json_t *p, int64_t now_s, wr_token_claims_t *out)
{
    wr_token_reason_t r = WR_TOKEN_MALFORMED;
    const char *iss, *aud, *sub, *jti;
    size_t iss_len = 0, aud_len = 0, sub_len = 0, jti_len = 0;
    json_t *iat, *exp, *fo, *byp;

    if (!p)
        return WR_TOKEN_MALFORMED;
    iss = string_claim(p, "iss", &iss_len);
    if (!iss)
        goto out;
    if (iss_len != sizeof ISSUER - 1 || memcmp(iss, ISSUER, iss_len) != 0) {
        r = WR_TOKEN_WRONG_ISSUER;
        goto out;
    }
    aud = string_claim(p, "aud", &aud_len);
    sub = string_claim(p, "sub", &sub_len);
    jti = string_claim(p, "jti", &jti_len);
    iat = json_object_get(p, "iat");
    exp = json_object_get(p, "exp");
    fo = json_object_get(p, "fo");
    if (fo && !json_is_boolean(fo))
        goto out;
    byp = json_object_get(p, "byp");
    if (byp && !(json_is_string(byp) &&
                 wr_bypass_valid_name(json_string_value(byp), json_string_length(byp))))
        goto out;
    if (!aud || !wr_ids_valid_queue_n(aud, aud_len) || !sub || !wr_ids_valid_user_n(sub, sub_len) ||
        !jti || !wr_ids_valid_jti_n(jti, jti_len) || !json_is_integer(iat) || !json_is_integer(exp))
        goto out;
    if ((int64_t)json_integer_value(exp) <= now_s) {
        r = WR_TOKEN_EXPIRED;
        goto out;
    }
    if (out) {
        memset(out, 0, sizeof *out);
        memcpy(out->queue, aud, aud_len);
        memcpy(out->user, sub, sub_len);
        memcpy(out->jti, jti, jti_len);
        out->iat = (int64_t)json_integer_value(iat);
        out->exp = (int64_t)json_integer_value(exp);
        out->fail_open = json_is_true(fo);
        if (byp)
            memcpy(out->bypass, json_string_value(byp), json_string_length(byp));
    }
    r = WR_TOKEN_OK;
out:
    return r;
}

wr_token_reason_t wr_token_verify(const char *token, size_t len, const uint8_t *secret,
                                  size_t secret_len, int64_t now_s, wr_token_claims_t *claims)
{
    wr_token_key_t key = {secret, secret_len, ""};
    if (secret && secret_len > 0 && wr_token_kid(secret, secret_len, key.kid) != WR_OK)
        return WR_TOKEN_BAD_SIGNATURE;
    return wr_token_verify_keys(token, len, &key, 1, now_s, claims);
}

wr_token_reason_t wr_token_verify_keys(const char *token, size_t len, const wr_token_key_t *keys,
                                       size_t n, int64_t now_s, wr_token_claims_t *claims)
{
    json_t *p = NULL;
    wr_token_reason_t r = wr_token_verify_jws(token, len, keys, n, &p);
    if (r != WR_TOKEN_OK)
        return r;
    r = check_claims(p, now_s, claims);
    json_decref(p);
    return r;
}

wr_token_reason_t wr_token_verify_jws(const char *token, size_t len, const wr_token_key_t *keys,
                                      size_t n, json_t **payload)
{
    const char *dot1 = NULL, *dot2 = NULL;
    uint8_t sig[WR_TOKEN_MAX], mac[MAC_LEN];
    size_t sig_len, dots = 0;
    wr_token_reason_t r;
    char kid[WR_KID_LEN + 1];
    bool ok = false;

    if (!token || len == 0)
        return WR_TOKEN_MISSING;
    if (len > WR_TOKEN_MAX)
        return WR_TOKEN_MALFORMED;
    for (size_t i = 0; i < len; i++) {
        if (token[i] != '.')
            continue;
        if (++dots == 1)
            dot1 = token + i;
        else if (dots == 2)
            dot2 = token + i;
        else
            return WR_TOKEN_MALFORMED;
    }
    if (dots != 2)
        return WR_TOKEN_MALFORMED;

    r = check_header(token, (size_t)(dot1 - token), kid);
    if (r != WR_TOKEN_OK)
        return r;

    if (wr_b64url_decode(dot2 + 1, len - (size_t)(dot2 + 1 - token), sig, sizeof sig, &sig_len) !=
        WR_OK)
        return WR_TOKEN_MALFORMED;
    if (!keys || n == 0 || n > WR_TOKEN_KEYS_MAX || sig_len != MAC_LEN)
        return WR_TOKEN_BAD_SIGNATURE;
    for (size_t i = 0; i < n && !ok; i++) {
        if (!keys[i].secret || keys[i].len == 0)
            continue;
        if (kid[0] && strcmp(kid, keys[i].kid) != 0)
            continue; /* the token names another key */
        if (wr_crypto_hmac_sha256(keys[i].secret, keys[i].len, token, (size_t)(dot2 - token),
                                  mac) != WR_OK)
            continue;
        ok = wr_crypto_equal(mac, sig, MAC_LEN);
    }
    if (!ok)
        return WR_TOKEN_BAD_SIGNATURE;

    json_t *p = decode_object(dot1 + 1, (size_t)(dot2 - dot1 - 1));
    if (!p)
        return WR_TOKEN_MALFORMED;
    if (payload)
        *payload = p;
    else
        json_decref(p);
    return WR_TOKEN_OK;
}
