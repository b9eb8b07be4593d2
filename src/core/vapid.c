/*
 * vapid.c - RFC 8292 VAPID JWTs and their per-origin cache (vapid.h).
 *
 * The claims are written with jansson in a fixed order (aud, exp, sub:
 * the order of RFC 8292's example, so its claims come out byte for byte)
 * and compact separators; the signature is base/crypto.c's ES256 (r || s).
 *
 * The cache is a small array searched linearly: the push services one
 * deployment talks to are a handful (FCM, Mozilla, Apple, Windows), so
 * `slots` stays small and a linear scan beats any table. Each slot holds
 * the origin, the header value and its JWT's exp.
 */
#include "core/vapid.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/b64.h"

/* base64url of {"typ":"JWT","alg":"ES256"} */
#define JWT_HEADER_B64 "eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9"

struct slot {
    char aud[WR_VAPID_ORIGIN_MAX + 1];
    char value[WR_VAPID_AUTH_MAX + 1];
    int64_t exp;
    int64_t signed_at;
};

struct wr_vapid {
    uint8_t priv[WR_CRYPTO_P256_PRIV];
    uint8_t pub[WR_CRYPTO_P256_PUB];
    char subject[WR_VAPID_SUBJECT_MAX + 1];
    size_t nslots, used;
    uint64_t signed_count;
    struct slot slots[];
};

/* True when host (n bytes) is "localhost" or ends in ".localhost". */
static bool is_localhost(const char *host, size_t n)
{
    static const char lh[] = "localhost";
    size_t l = sizeof lh - 1;
    if (n > 0 && host[n - 1] == '.') /* the absolute form */
        n--;
    if (n < l || strncasecmp(host + n - l, lh, l) != 0)
        return false;
    return n == l || host[n - l - 1] == '.';
}

bool wr_vapid_subject_ok(const char *s)
{
    if (!s)
        return false;
    size_t n = strlen(s);
    if (n == 0 || n > WR_VAPID_SUBJECT_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\\')
            return false;
    if (strncmp(s, "mailto:", 7) == 0) {
        const char *at = strrchr(s + 7, '@');
        if (!at || at == s + 7 || at[1] == '\0')
            return false;
        const char *dom = at + 1, *q = strchr(dom, '?');
        return !is_localhost(dom, q ? (size_t)(q - dom) : strlen(dom));
    }
    if (strncmp(s, "https://", 8) == 0) {
        const char *h = s + 8, *at = strpbrk(h, "@/?#");
        if (at && *at == '@')
            h = at + 1;
        size_t hl;
        if (*h == '[') {
            const char *e = strchr(h, ']');
            if (!e)
                return false;
            hl = (size_t)(e - h + 1);
        } else {
            hl = strcspn(h, ":/?#");
        }
        return hl > 0 && !is_localhost(h, hl);
    }
    return false;
}

wr_err_t wr_vapid_jwt(const uint8_t priv[WR_CRYPTO_P256_PRIV], const char *aud, int64_t exp,
                      const char *sub, char *out, size_t cap, size_t *out_len)
{
    if (!priv || !aud || !sub || !out || !*aud || !*sub || strlen(aud) > WR_VAPID_ORIGIN_MAX ||
        strlen(sub) > WR_VAPID_SUBJECT_MAX)
        return WR_EINVAL;
    wr_err_t err = WR_ENOMEM;
    char *claims = NULL;
    json_t *o = json_object();
    if (!o || json_object_set_new(o, "aud", json_string(aud)) != 0 ||
        json_object_set_new(o, "exp", json_integer(exp)) != 0 ||
        json_object_set_new(o, "sub", json_string(sub)) != 0)
        goto out;
    claims = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!claims)
        goto out;
    /* header "." claims "." signature, each base64url */
    size_t hl = sizeof JWT_HEADER_B64 - 1, cl = 0, sl = 0;
    if (cap < hl + 2) {
        err = WR_ELIMIT;
        goto out;
    }
    memcpy(out, JWT_HEADER_B64 ".", hl + 1);
    err =
        wr_b64url_encode((const uint8_t *)claims, strlen(claims), out + hl + 1, cap - hl - 1, &cl);
    if (err != WR_OK)
        goto out;
    size_t signed_len = hl + 1 + cl;
    uint8_t sig[WR_CRYPTO_P256_SIG];
    err = wr_crypto_p256_sign(priv, out, signed_len, sig);
    if (err != WR_OK)
        goto out;
    if (cap < signed_len + 2) {
        err = WR_ELIMIT;
        goto out;
    }
    out[signed_len] = '.';
    err = wr_b64url_encode(sig, sizeof sig, out + signed_len + 1, cap - signed_len - 1, &sl);
    if (err == WR_OK && out_len)
        *out_len = signed_len + 1 + sl;
out:
    free(claims);
    json_decref(o);
    return err;
}

wr_err_t wr_vapid_authorization(const uint8_t priv[WR_CRYPTO_P256_PRIV],
                                const uint8_t pub[WR_CRYPTO_P256_PUB], const char *aud, int64_t exp,
                                const char *sub, char *out, size_t cap, size_t *out_len)
{
    static const char t[] = "vapid t=", k[] = ", k=";
    if (!pub || !out)
        return WR_EINVAL;
    if (cap < sizeof t)
        return WR_ELIMIT;
    memcpy(out, t, sizeof t - 1);
    size_t n = sizeof t - 1, jl = 0, kl = 0;
    wr_err_t err = wr_vapid_jwt(priv, aud, exp, sub, out + n, cap - n, &jl);
    if (err != WR_OK)
        return err;
    n += jl;
    if (cap < n + sizeof k)
        return WR_ELIMIT;
    memcpy(out + n, k, sizeof k - 1);
    n += sizeof k - 1;
    err = wr_b64url_encode(pub, WR_CRYPTO_P256_PUB, out + n, cap - n, &kl);
    if (err == WR_OK && out_len)
        *out_len = n + kl;
    return err;
}

wr_vapid_t *wr_vapid_new(const uint8_t priv[WR_CRYPTO_P256_PRIV], const char *subject, size_t slots)
{
    if (!priv || !wr_vapid_subject_ok(subject) || slots == 0 || slots > 4096)
        return NULL;
    wr_vapid_t *v = calloc(1, sizeof *v + slots * sizeof v->slots[0]);
    if (!v)
        return NULL;
    memcpy(v->priv, priv, sizeof v->priv);
    memcpy(v->subject, subject, strlen(subject) + 1);
    v->nslots = slots;
    if (wr_crypto_p256_public(priv, v->pub) != WR_OK) {
        wr_vapid_free(v);
        return NULL;
    }
    return v;
}

void wr_vapid_free(wr_vapid_t *v)
{
    if (!v)
        return;
    wr_crypto_wipe(v->priv, sizeof v->priv);
    free(v);
}

const uint8_t *wr_vapid_public(const wr_vapid_t *v)
{
    return v ? v->pub : NULL;
}

uint64_t wr_vapid_signed(const wr_vapid_t *v)
{
    return v ? v->signed_count : 0;
}

wr_err_t wr_vapid_get(wr_vapid_t *v, const char *aud, int64_t now_s, const char **out)
{
    if (!v || !aud || !out || !*aud || strlen(aud) > WR_VAPID_ORIGIN_MAX)
        return WR_EINVAL;
    struct slot *s = NULL, *oldest = NULL;
    for (size_t i = 0; i < v->used && !s; i++)
        if (strcmp(v->slots[i].aud, aud) == 0)
            s = &v->slots[i];
    if (s && s->exp - now_s > WR_VAPID_RENEW_S && s->signed_at <= now_s) {
        *out = s->value;
        return WR_OK;
    }
    if (!s && v->used < v->nslots)
        s = &v->slots[v->used++];
    for (size_t i = 0; i < v->used && !s; i++)
        if (!oldest || v->slots[i].signed_at < oldest->signed_at)
            oldest = &v->slots[i];
    if (!s)
        s = oldest;
    int64_t exp = now_s + WR_VAPID_LIFETIME_S;
    wr_err_t err = wr_vapid_authorization(v->priv, v->pub, aud, exp, v->subject, s->value,
                                          sizeof s->value, NULL);
    if (err != WR_OK) {
        s->aud[0] = '\0'; /* never a stale header under a name */
        s->exp = 0;
        return err;
    }
    memcpy(s->aud, aud, strlen(aud) + 1);
    s->exp = exp;
    s->signed_at = now_s;
    v->signed_count++;
    *out = s->value;
    return WR_OK;
}
