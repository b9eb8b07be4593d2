/*
 * pushsub.c - a Web Push subscription's checks and its Topic (pushsub.h).
 *
 * The keys are base64url without padding, decoded by base/b64's strict
 * decoder (no '=', no whitespace, zero trailing bits: one spelling per
 * key), so a key is stored and compared as bytes. The point check is
 * base/crypto's (OpenSSL's EC_POINT_oct2point): a p256dh that is not on
 * the curve would make every push to it fail, or worse leak bits of the
 * ephemeral key through an invalid-curve attack; it is refused at the door.
 */
#include "core/pushsub.h"

#include <string.h>
#include <strings.h>

#include "base/b64.h"

#define TOPIC_LABEL "waitroom push topic v1"

const char *wr_pushsub_reason_name(wr_pushsub_reason_t r)
{
    switch (r) {
    case WR_PUSHSUB_OK:
        return "ok";
    case WR_PUSHSUB_ENDPOINT:
        return "endpoint";
    case WR_PUSHSUB_P256DH:
        return "p256dh";
    case WR_PUSHSUB_AUTH:
        return "auth";
    case WR_PUSHSUB_LANG:
        return "lang";
    }
    return "unknown";
}

/* Decodes n characters of base64url at s into exactly want bytes (at most
 * WR_CRYPTO_P256_PUB). */
static bool b64_exact(const char *s, size_t n, uint8_t *out, size_t want)
{
    uint8_t buf[WR_CRYPTO_P256_PUB + 1];
    size_t got = 0;
    if (wr_b64url_decode(s, n, buf, sizeof buf, &got) != WR_OK || got != want)
        return false;
    memcpy(out, buf, want);
    return true;
}

/* Decodes the string member key of keys into exactly want bytes. */
static bool key_bytes(const json_t *keys, const char *key, uint8_t *out, size_t want)
{
    const json_t *v = json_is_object(keys) ? json_object_get(keys, key) : NULL;
    return json_is_string(v) && b64_exact(json_string_value(v), json_string_length(v), out, want);
}

static wr_pushsub_reason_t check(const json_t *body, const wr_pushaddr_allow_t *allow,
                                 const char *const *langs, wr_pushsub_t *out)
{
    if (!json_is_object(body))
        return WR_PUSHSUB_ENDPOINT;
    const json_t *ep = json_object_get(body, "endpoint");
    if (!json_is_string(ep) || json_string_length(ep) > WR_PUSHADDR_ENDPOINT_MAX ||
        strlen(json_string_value(ep)) != json_string_length(ep))
        return WR_PUSHSUB_ENDPOINT;
    wr_pushaddr_url_t u;
    if (wr_pushaddr_parse(json_string_value(ep), &u) != WR_OK ||
        (!u.https && !wr_pushaddr_listed(allow, &u)))
        return WR_PUSHSUB_ENDPOINT;
    memcpy(out->endpoint, json_string_value(ep), json_string_length(ep) + 1);

    const json_t *keys = json_object_get(body, "keys");
    if (!key_bytes(keys, "p256dh", out->p256dh, WR_CRYPTO_P256_PUB) ||
        !wr_crypto_p256_point_valid(out->p256dh, WR_CRYPTO_P256_PUB))
        return WR_PUSHSUB_P256DH;
    if (!key_bytes(keys, "auth", out->auth, WR_PUSHCRYPT_AUTH))
        return WR_PUSHSUB_AUTH;

    const json_t *lang = json_object_get(body, "lang");
    if (!lang || json_is_null(lang))
        return WR_PUSHSUB_OK;
    if (!json_is_string(lang) || !langs)
        return WR_PUSHSUB_LANG;
    for (size_t i = 0; langs[i]; i++) {
        if (strcasecmp(langs[i], json_string_value(lang)) == 0 &&
            strlen(langs[i]) <= WR_PUSHSUB_LANG_MAX &&
            strlen(langs[i]) == json_string_length(lang)) {
            memcpy(out->lang, langs[i], strlen(langs[i]) + 1);
            return WR_PUSHSUB_OK;
        }
    }
    return WR_PUSHSUB_LANG;
}

wr_pushsub_reason_t wr_pushsub_parse(const json_t *body, const wr_pushaddr_allow_t *allow,
                                     const char *const *langs, wr_pushsub_t *out)
{
    if (!out)
        return WR_PUSHSUB_ENDPOINT;
    memset(out, 0, sizeof *out);
    wr_pushsub_reason_t r = check(body, allow, langs, out);
    if (r != WR_PUSHSUB_OK)
        memset(out, 0, sizeof *out);
    return r;
}

wr_err_t wr_pushsub_topic(const uint8_t *secret, size_t len, const char *queue, const char *user,
                          char out[WR_PUSHSUB_TOPIC_LEN + 1])
{
    if (!secret || !len || !queue || !*queue || !user || !*user || !out)
        return WR_EINVAL;
    uint8_t key[WR_CRYPTO_KEY_LEN], mac[WR_CRYPTO_MAC_LEN];
    wr_err_t err = wr_crypto_derive_key(secret, len, TOPIC_LABEL, key);
    wr_crypto_hmac_t *h = err == WR_OK ? wr_crypto_hmac_new(key, sizeof key) : NULL;
    wr_crypto_wipe(key, sizeof key);
    if (!h)
        return err != WR_OK ? err : WR_ENOMEM;
    /* queue || 0x00 || user: a queue name never holds a NUL, so the split
     * is unambiguous */
    size_t ql = strlen(queue), ul = strlen(user);
    char msg[512];
    if (ql + 1 + ul > sizeof msg) {
        wr_crypto_hmac_free(h);
        return WR_EINVAL;
    }
    memcpy(msg, queue, ql + 1);
    memcpy(msg + ql + 1, user, ul);
    err = wr_crypto_hmac_mac(h, msg, ql + 1 + ul, mac);
    wr_crypto_hmac_free(h);
    size_t n = 0;
    if (err == WR_OK)
        err = wr_b64url_encode(mac, 24, out, WR_PUSHSUB_TOPIC_LEN + 1, &n);
    return err;
}

wr_err_t wr_pushsub_pack(const wr_pushsub_t *sub, char *out, size_t cap, size_t *len)
{
    size_t pl = 0, al = 0;
    if (!sub || !out || !len)
        return WR_EINVAL;
    size_t el = strnlen(sub->endpoint, sizeof sub->endpoint);
    size_t ll = strnlen(sub->lang, sizeof sub->lang);
    if (el == 0 || el > WR_PUSHADDR_ENDPOINT_MAX || ll > WR_PUSHSUB_LANG_MAX ||
        memchr(sub->lang, ' ', ll))
        return WR_EINVAL;
    wr_err_t err = wr_b64url_encode(sub->p256dh, sizeof sub->p256dh, out, cap, &pl);
    if (err != WR_OK)
        return err;
    if (pl + 1 > cap)
        return WR_ELIMIT;
    out[pl++] = ' ';
    err = wr_b64url_encode(sub->auth, sizeof sub->auth, out + pl, cap - pl, &al);
    if (err != WR_OK)
        return err;
    pl += al;
    if (pl + 1 + ll + 1 + el + 1 > cap)
        return WR_ELIMIT;
    out[pl++] = ' ';
    memcpy(out + pl, sub->lang, ll);
    pl += ll;
    out[pl++] = ' ';
    memcpy(out + pl, sub->endpoint, el + 1);
    *len = pl + el;
    return WR_OK;
}

/* The length of the field of in[0..n) that ends at the next ' ', or n
 * when there is none. */
static size_t field_len(const char *in, size_t n)
{
    const char *sp = memchr(in, ' ', n);
    return sp ? (size_t)(sp - in) : n;
}

wr_err_t wr_pushsub_unpack(const char *in, size_t n, wr_pushsub_t *out)
{
    if (!in || !out)
        return WR_EINVAL;
    memset(out, 0, sizeof *out);
    size_t f[3], at = 0;
    for (int i = 0; i < 3; i++) {
        f[i] = field_len(in + at, n - at);
        if (at + f[i] >= n) /* no ' ' after it */
            goto bad;
        at += f[i] + 1;
    }
    size_t el = n - at; /* the endpoint: the rest */
    if (!b64_exact(in, f[0], out->p256dh, sizeof out->p256dh) ||
        !wr_crypto_p256_point_valid(out->p256dh, sizeof out->p256dh) ||
        !b64_exact(in + f[0] + 1, f[1], out->auth, sizeof out->auth) ||
        f[2] > WR_PUSHSUB_LANG_MAX || el == 0 || el > WR_PUSHADDR_ENDPOINT_MAX ||
        memchr(in + at, '\0', el))
        goto bad;
    memcpy(out->lang, in + f[0] + f[1] + 2, f[2]);
    memcpy(out->endpoint, in + at, el);
    return WR_OK;
bad:
    memset(out, 0, sizeof *out);
    return WR_EINVAL;
}
