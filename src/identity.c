/*
 * identity.c - the signed visitor cookie of cookie mode.
 *
 * A visitor is 16 random bytes (RAND_bytes), written as 22 base64url
 * characters: the vid. Its cookie value is "<vid>.<mac>" where mac is the
 * 43-character base64url of HMAC-SHA256(key, the 22 vid characters). The
 * value therefore has exactly WR_VID_COOKIE_LEN (66) bytes, the dot at
 * offset WR_VID_LEN. Verification decodes both parts strictly (one accepted
 * encoding per value), recomputes the MAC and compares it in constant time
 * (CRYPTO_memcmp); anything else is refused without detail.
 *
 * wr_identity_find_cookie is a small RFC 6265 (section 5.4 / 4.2.1) reader
 * of a Cookie header: pairs separated by ';', optional whitespace around
 * them, name and value split at the first '='. It scans at most
 * COOKIE_HEADER_MAX bytes and returns a pointer into the caller's header.
 * No allocation, no global state; the caller owns every buffer.
 */
#include "identity.h"

#include <string.h>

#include <openssl/crypto.h>

#include "b64.h"
#include "token.h"

#define VID_RAW           16
#define MAC_LEN           32
#define MAC_B64_LEN       43
#define COOKIE_HEADER_MAX 16384 /* bytes of a Cookie header we look at */

/* Writes the 43-char base64url MAC of vid (WR_VID_LEN chars) plus NUL to out. */
static wr_err_t vid_mac(const uint8_t *key, size_t key_len, const char *vid,
                        char out[MAC_B64_LEN + 1])
{
    uint8_t mac[MAC_LEN];
    wr_err_t err = wr_token_hmac_sha256(key, key_len, vid, WR_VID_LEN, mac);

    if (err != WR_OK)
        return err;
    return wr_b64url_encode(mac, sizeof mac, out, MAC_B64_LEN + 1, NULL);
}

wr_err_t wr_identity_new_visitor(const uint8_t *key, size_t key_len, char vid[WR_VID_LEN + 1],
                                 char cookie[WR_VID_COOKIE_LEN + 1])
{
    uint8_t raw[VID_RAW];
    char v[WR_VID_LEN + 1], mac[MAC_B64_LEN + 1];
    wr_err_t err;

    if (!key || key_len == 0 || !vid || !cookie)
        return WR_EINVAL;
    err = wr_token_random(raw, sizeof raw);
    if (err != WR_OK)
        return err;
    err = wr_b64url_encode(raw, sizeof raw, v, sizeof v, NULL);
    if (err != WR_OK)
        return err;
    err = vid_mac(key, key_len, v, mac);
    if (err != WR_OK)
        return err;
    memcpy(vid, v, sizeof v);
    memcpy(cookie, v, WR_VID_LEN);
    cookie[WR_VID_LEN] = '.';
    memcpy(cookie + WR_VID_LEN + 1, mac, sizeof mac); /* includes the NUL */
    return WR_OK;
}

wr_err_t wr_identity_sign_vid(const uint8_t *key, size_t key_len, const char *vid,
                              char cookie[WR_VID_COOKIE_LEN + 1])
{
    uint8_t raw[VID_RAW + 4];
    size_t raw_len;
    char mac[MAC_B64_LEN + 1];

    if (!key || key_len == 0 || !vid || !cookie || strnlen(vid, WR_VID_LEN + 1) != WR_VID_LEN ||
        wr_b64url_decode(vid, WR_VID_LEN, raw, sizeof raw, &raw_len) != WR_OK || raw_len != VID_RAW)
        return WR_EINVAL;
    wr_err_t err = vid_mac(key, key_len, vid, mac);
    if (err != WR_OK)
        return err;
    memcpy(cookie, vid, WR_VID_LEN);
    cookie[WR_VID_LEN] = '.';
    memcpy(cookie + WR_VID_LEN + 1, mac, sizeof mac);
    return WR_OK;
}

bool wr_identity_verify_cookie(const uint8_t *key, size_t key_len, const char *value, size_t len,
                               char vid[WR_VID_LEN + 1])
{
    uint8_t raw[VID_RAW + 4], got[MAC_LEN + 4], want[MAC_LEN];
    size_t raw_len, got_len;

    if (!key || key_len == 0 || !value || !vid || len != WR_VID_COOKIE_LEN ||
        value[WR_VID_LEN] != '.')
        return false;
    /* Strict decoding: the vid is 16 bytes, the MAC 32, each in its one
     * canonical spelling. */
    if (wr_b64url_decode(value, WR_VID_LEN, raw, sizeof raw, &raw_len) != WR_OK ||
        raw_len != VID_RAW)
        return false;
    if (wr_b64url_decode(value + WR_VID_LEN + 1, MAC_B64_LEN, got, sizeof got, &got_len) != WR_OK ||
        got_len != MAC_LEN)
        return false;
    if (wr_token_hmac_sha256(key, key_len, value, WR_VID_LEN, want) != WR_OK)
        return false;
    if (CRYPTO_memcmp(want, got, MAC_LEN) != 0)
        return false;
    memcpy(vid, value, WR_VID_LEN);
    vid[WR_VID_LEN] = '\0';
    return true;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

const char *wr_identity_find_cookie(const char *header, const char *name, size_t *len)
{
    size_t n, name_len, i = 0;

    if (!header || !name || !len)
        return NULL;
    name_len = strlen(name);
    if (name_len == 0)
        return NULL;
    n = strnlen(header, COOKIE_HEADER_MAX);

    while (i < n) {
        size_t start, end, eq, ns, ne, vs, ve;

        /* One pair: [start, end) up to the next ';' or the end. */
        start = i;
        end = start;
        while (end < n && header[end] != ';')
            end++;
        i = end + 1;

        eq = start;
        while (eq < end && header[eq] != '=')
            eq++;
        if (eq == end)
            continue; /* no '=': not a cookie-pair, ignore */

        ns = start;
        while (ns < eq && is_ows(header[ns]))
            ns++;
        ne = eq;
        while (ne > ns && is_ows(header[ne - 1]))
            ne--;
        if (ne - ns != name_len || memcmp(header + ns, name, name_len) != 0)
            continue;

        vs = eq + 1;
        while (vs < end && is_ows(header[vs]))
            vs++;
        ve = end;
        while (ve > vs && is_ows(header[ve - 1]))
            ve--;
        *len = ve - vs;
        return header + vs;
    }
    return NULL;
}
