/*
 * challenge.c - join challenges: issuing, checking, the zero-bit count and
 * a reference solver (challenge.h; docs/API.md 1.2, docs/SECURITY.md
 * "Bots").
 *
 * Format: "1.<bits>.<expiresAt>.<tag>.<bind>", every part of the API's
 * alphabet [A-Za-z0-9._~-] (decimal numbers, base64url MACs), about 60
 * characters. Two MACs under the key derived from the token secret:
 *   tag  = HMAC(k, "t" 0 bits 0 expiresAt)[0..12)           issued by us
 *   bind = HMAC(k, "b" 0 bits 0 expiresAt 0 queue 0 user)[0..16)  for whom
 * The tag tells a challenge no instance issued ("malformed") from one
 * issued to someone else or for another queue ("wrongUser"): a client
 * cannot make a tag without the key, so an edited challenge is malformed,
 * while a real one replayed by another visitor is wrongUser. 96 and 128
 * bits of MAC: forging either is out of reach within a challenge's life.
 * The fields are joined with NUL bytes, which no field may hold (queue
 * names and user ids have none), so no two field lists give one message.
 *
 * Cost: each MAC is two SHA-256 compressions over OpenSSL contexts whose
 * key pads were hashed once (wr_crypto_hmac_t); the digest of a solution
 * one more through a reused context: an issue is two MACs, a check two
 * MACs and a digest (docs/BENCHMARKS.md, "Join challenges").
 *
 * Nothing here is stored. A solved challenge buys one place, once (API
 * 1.3): the api remembers it in the store's spent set under
 * wr_challenge_spent_id until it expires (http/api_challenge.c).
 */
#include "core/challenge.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "base/crypto.h"
#include "base/ids.h"
#include "base/names.h"

#define KEY_LABEL      "waitroom challenge v1"
#define TAG_BYTES      12 /* -> 16 base64url chars */
#define BIND_BYTES     16 /* -> 22 base64url chars */
#define TAG_CHARS      16
#define BIND_CHARS     22
#define EXP_DIGITS_MAX 15 /* epoch ms < 10^15 until the year 33658 */

struct wr_challenge_key {
    wr_crypto_hmac_t *mac;
    wr_crypto_sha256_t *sha; /* the solutions' digests */
};

static const char *const reason_names[WR_CHALLENGE_N_REASONS] = {
    [WR_CHALLENGE_OK] = "ok",
    [WR_CHALLENGE_MISSING] = "missing",
    [WR_CHALLENGE_MALFORMED] = "malformed",
    [WR_CHALLENGE_EXPIRED] = "expired",
    [WR_CHALLENGE_WRONG_USER] = "wrongUser",
    [WR_CHALLENGE_INSUFFICIENT] = "insufficient",
    [WR_CHALLENGE_USED] = "used",
};

const char *wr_challenge_reason_name(wr_challenge_reason_t r)
{
    return WR_NAMES_GET(reason_names, r, "malformed");
}

wr_challenge_key_t *wr_challenge_key_new(const uint8_t *secret, size_t len)
{
    uint8_t key[WR_CRYPTO_KEY_LEN];
    if (wr_crypto_derive_key(secret, len, KEY_LABEL, key) != WR_OK)
        return NULL;
    wr_challenge_key_t *k = calloc(1, sizeof(*k));
    if (k) {
        k->mac = wr_crypto_hmac_new(key, sizeof key);
        k->sha = wr_crypto_sha256_new();
        if (!k->mac || !k->sha) {
            wr_challenge_key_free(k);
            k = NULL;
        }
    }
    wr_crypto_wipe(key, sizeof key);
    return k;
}

void wr_challenge_key_free(wr_challenge_key_t *k)
{
    if (!k)
        return;
    wr_crypto_hmac_free(k->mac);
    wr_crypto_sha256_free(k->sha);
    free(k);
}

/* ---------- the MACs ---------- */

/* The message of the tag ("t") or the binding ("b", with queue and user)
 * into buf; its length. bits and exp are the decimal texts. */
static size_t mac_message(char *buf, size_t cap, char kind, const char *bits, size_t bits_len,
                          const char *exp, size_t exp_len, const char *queue, const char *user)
{
    size_t n = 0;
#define PUT(p, l)                                                                                  \
    do {                                                                                           \
        if (n + (l) + 1 > cap)                                                                     \
            return 0;                                                                              \
        memcpy(buf + n, (p), (l));                                                                 \
        n += (l);                                                                                  \
        buf[n++] = '\0';                                                                           \
    } while (0)
    PUT(&kind, 1);
    PUT(bits, bits_len);
    PUT(exp, exp_len);
    if (kind == 'b') {
        PUT(queue, strlen(queue));
        PUT(user, strlen(user));
    }
#undef PUT
    return n;
}

/* The first want bytes of the MAC of msg. */
static bool mac_of(wr_challenge_key_t *k, const char *msg, size_t len, uint8_t *out, size_t want)
{
    uint8_t mac[WR_CRYPTO_MAC_LEN];
    if (len == 0 || wr_crypto_hmac_mac(k->mac, msg, len, mac) != WR_OK)
        return false;
    memcpy(out, mac, want);
    return true;
}

#define MSG_MAX (2 + 3 + EXP_DIGITS_MAX + 1 + WR_QUEUE_NAME_MAX + 1 + WR_USER_ID_MAX + 1 + 8)

wr_err_t wr_challenge_issue(wr_challenge_key_t *k, const char *queue, const char *user,
                            unsigned bits, int64_t expires_at_ms, char out[WR_CHALLENGE_MAX + 1])
{
    if (!k || !queue || !user || !out || !wr_ids_valid_queue(queue) || !wr_ids_valid_user(user) ||
        bits > WR_CHALLENGE_BITS_MAX || expires_at_ms <= 0)
        return WR_EINVAL;
    char b[4], e[24], msg[MSG_MAX];
    int bl = snprintf(b, sizeof b, "%u", bits);
    int el = snprintf(e, sizeof e, "%lld", (long long)expires_at_ms);
    if (el <= 0 || el > EXP_DIGITS_MAX)
        return WR_EINVAL;
    uint8_t tag[TAG_BYTES], bind[BIND_BYTES];
    size_t ml = mac_message(msg, sizeof msg, 't', b, (size_t)bl, e, (size_t)el, NULL, NULL);
    if (!mac_of(k, msg, ml, tag, sizeof tag))
        return WR_EIO;
    ml = mac_message(msg, sizeof msg, 'b', b, (size_t)bl, e, (size_t)el, queue, user);
    if (!mac_of(k, msg, ml, bind, sizeof bind))
        return WR_EIO;
    char t64[TAG_CHARS + 1], b64[BIND_CHARS + 1];
    size_t tl = 0, bl64 = 0;
    if (wr_b64url_encode(tag, sizeof tag, t64, sizeof t64, &tl) != WR_OK ||
        wr_b64url_encode(bind, sizeof bind, b64, sizeof b64, &bl64) != WR_OK)
        return WR_EIO;
    int n = snprintf(out, WR_CHALLENGE_MAX + 1, "1.%s.%s.%s.%s", b, e, t64, b64);
    return n > 0 && n <= WR_CHALLENGE_MAX ? WR_OK : WR_EINVAL;
}

/* ---------- parsing ---------- */

typedef struct {
    const char *bits, *exp, *tag, *bind;
    size_t bits_len, exp_len;
    unsigned bits_v;
    int64_t exp_v;
} parsed_t;

static bool b64url_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '_';
}

/* A decimal of 1..max digits without a leading zero (but "0"), into *v. */
static bool decimal(const char *s, size_t n, size_t max, int64_t *v)
{
    if (n == 0 || n > max || (n > 1 && s[0] == '0'))
        return false;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return true;
}

/* Splits c (n bytes) into its five parts; false when it is not of the
 * format. */
static bool parse(const char *c, size_t n, parsed_t *p)
{
    if (!c || n < 2 || n > WR_CHALLENGE_MAX || c[0] != '1' || c[1] != '.')
        return false;
    const char *part[4];
    size_t len[4], k = 0, start = 2;
    for (size_t i = 2; i <= n; i++) {
        if (i < n && c[i] != '.')
            continue;
        if (k == 4)
            return false; /* a fifth dot */
        part[k] = c + start;
        len[k++] = i - start;
        start = i + 1;
    }
    if (k != 4 || len[2] != TAG_CHARS || len[3] != BIND_CHARS)
        return false;
    for (size_t i = 0; i < TAG_CHARS; i++)
        if (!b64url_char(part[2][i]))
            return false;
    for (size_t i = 0; i < BIND_CHARS; i++)
        if (!b64url_char(part[3][i]))
            return false;
    int64_t bits = 0;
    if (!decimal(part[0], len[0], 2, &bits) || bits > WR_CHALLENGE_BITS_MAX ||
        !decimal(part[1], len[1], EXP_DIGITS_MAX, &p->exp_v) || p->exp_v <= 0)
        return false;
    p->bits = part[0];
    p->bits_len = len[0];
    p->bits_v = (unsigned)bits;
    p->exp = part[1];
    p->exp_len = len[1];
    p->tag = part[2];
    p->bind = part[3];
    return true;
}

int64_t wr_challenge_expires_at(const char *challenge, size_t clen)
{
    parsed_t p;
    return parse(challenge, clen, &p) ? p.exp_v : -1;
}

/* Whether the base64url text (chars) is the encoding of the first bytes of
 * mac, compared in constant time (the encoding of the MAC is compared,
 * not a decoding of the text: non-canonical last characters fail). */
static bool mac_matches(const uint8_t *mac, size_t bytes, const char *text, size_t chars)
{
    char enc[BIND_CHARS + 1];
    size_t el = 0;
    if (wr_b64url_encode(mac, bytes, enc, sizeof enc, &el) != WR_OK || el != chars)
        return false;
    return wr_crypto_equal(enc, text, chars);
}

unsigned wr_challenge_zero_bits(const uint8_t *digest, size_t n)
{
    unsigned z = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = digest[i];
        if (b == 0) {
            z += 8;
            continue;
        }
        while (!(b & 0x80)) {
            z++;
            b = (uint8_t)(b << 1);
        }
        break;
    }
    return z;
}

/* The zero bits of SHA-256(challenge ":" nonce), through h; -1 on error. */
static int work_bits(wr_crypto_sha256_t *h, const char *c, size_t clen, const char *nonce,
                     size_t nlen)
{
    char buf[WR_CHALLENGE_MAX + 1 + WR_CHALLENGE_NONCE_MAX];
    uint8_t d[WR_CRYPTO_SHA256_LEN];
    if (clen > WR_CHALLENGE_MAX || nlen > WR_CHALLENGE_NONCE_MAX)
        return -1;
    memcpy(buf, c, clen);
    buf[clen] = ':';
    memcpy(buf + clen + 1, nonce, nlen);
    if (wr_crypto_sha256_digest(h, buf, clen + 1 + nlen, d) != WR_OK)
        return -1;
    return (int)wr_challenge_zero_bits(d, sizeof d);
}

wr_challenge_reason_t wr_challenge_check(wr_challenge_key_t *const *keys, size_t n_keys,
                                         const char *queue, const char *user, const char *challenge,
                                         size_t clen, const char *nonce, size_t nlen,
                                         unsigned required, int64_t now_ms)
{
    if (!challenge || clen == 0)
        return WR_CHALLENGE_MISSING;
    parsed_t p;
    if (!parse(challenge, clen, &p) || !queue || !user)
        return WR_CHALLENGE_MALFORMED;
    char msg[MSG_MAX];
    uint8_t mac[BIND_BYTES];
    size_t ml = mac_message(msg, sizeof msg, 't', p.bits, p.bits_len, p.exp, p.exp_len, NULL, NULL);
    wr_challenge_key_t *k = NULL;
    for (size_t i = 0; i < n_keys && !k; i++)
        if (keys[i] && mac_of(keys[i], msg, ml, mac, TAG_BYTES) &&
            mac_matches(mac, TAG_BYTES, p.tag, TAG_CHARS))
            k = keys[i];
    if (!k)
        return WR_CHALLENGE_MALFORMED;
    if (p.exp_v <= now_ms)
        return WR_CHALLENGE_EXPIRED;
    ml = mac_message(msg, sizeof msg, 'b', p.bits, p.bits_len, p.exp, p.exp_len, queue, user);
    if (!mac_of(k, msg, ml, mac, BIND_BYTES) || !mac_matches(mac, BIND_BYTES, p.bind, BIND_CHARS))
        return WR_CHALLENGE_WRONG_USER;
    if (!wr_ids_valid_alnum_n(nonce, nlen, WR_CHALLENGE_NONCE_MAX))
        return WR_CHALLENGE_MALFORMED;
    int z = work_bits(k->sha, challenge, clen, nonce, nlen);
    if (z < 0)
        return WR_CHALLENGE_MALFORMED;
    return (unsigned)z >= required ? WR_CHALLENGE_OK : WR_CHALLENGE_INSUFFICIENT;
}

wr_err_t wr_challenge_spent_id(wr_challenge_key_t *k, const char *kind, const char *const *parts,
                               const size_t *lens, size_t n, char out[WR_CHALLENGE_ID_LEN + 1])
{
    char buf[WR_CHALLENGE_ID_INPUT_MAX];
    if (!k || !kind || !out || (n && (!parts || !lens)))
        return WR_EINVAL;
    size_t at = strlen(kind);
    if (at >= sizeof buf)
        return WR_EINVAL;
    memcpy(buf, kind, at);
    for (size_t i = 0; i < n; i++) {
        if (!parts[i] || lens[i] + 1 > sizeof buf - at)
            return WR_EINVAL;
        buf[at++] = '\0';
        memcpy(buf + at, parts[i], lens[i]);
        at += lens[i];
    }
    uint8_t d[WR_CRYPTO_SHA256_LEN];
    size_t el = 0;
    if (wr_crypto_sha256_digest(k->sha, buf, at, d) != WR_OK ||
        wr_b64url_encode(d, 16, out, WR_CHALLENGE_ID_LEN + 1, &el) != WR_OK ||
        el != WR_CHALLENGE_ID_LEN)
        return WR_EIO;
    return WR_OK;
}

uint64_t wr_challenge_solve(const char *challenge, unsigned bits, uint64_t max_tries,
                            char nonce[WR_CHALLENGE_NONCE_MAX + 1])
{
    if (!challenge || !nonce || bits > 256)
        return 0;
    size_t clen = strlen(challenge);
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    if (!h || clen > WR_CHALLENGE_MAX) {
        wr_crypto_sha256_free(h);
        return 0;
    }
    uint64_t found = 0;
    for (uint64_t i = 0; i < max_tries; i++) {
        int n = snprintf(nonce, WR_CHALLENGE_NONCE_MAX + 1, "%llu", (unsigned long long)i);
        int z = work_bits(h, challenge, clen, nonce, (size_t)n);
        if (z >= 0 && (unsigned)z >= bits) {
            found = i + 1;
            break;
        }
    }
    wr_crypto_sha256_free(h);
    if (!found)
        nonce[0] = '\0';
    return found;
}
