/*
 * identity.c - the signed visitor cookie of cookie mode.
 *
 * A visitor is 16 random bytes (wr_crypto_random), written as 22 base64url
 * characters: the vid. Its cookie value is "<vid>.<issued>.<mac>": issued
 * is the Unix time in seconds at signing, in decimal (1-12 digits, no
 * leading zero: one spelling per time), and mac is the 43-character
 * base64url of HMAC-SHA256(key, "<vid>.<issued>"). The issue time is what
 * lets a poll tell an old cookie from a fresh one (renewal, see
 * wr_identity_should_renew); it is inside the MAC, so a client cannot
 * rejuvenate a value, only get it renewed by asking.
 *
 * An invited account (cookie mode, invite-only queues) has its own form,
 * "~<acct>.<issued>.<mac>" (identity.h): the user in line is the account
 * itself, so the entry token's sub is the invite's sub. It is verified,
 * renewed and rotated exactly as a vid's value.
 *
 * The first format, "<vid>.<mac>" with mac = HMAC-SHA256(key, vid) (66
 * bytes, one dot), is still accepted, with issue time 0 ("unknown, old"),
 * so those visitors keep their place and get a new-format cookie on their
 * next join or poll. The two MAC inputs cannot be confused: the first
 * format signs exactly 22 characters, the second always more.
 *
 * Verification decodes every part strictly (one accepted encoding per
 * value), recomputes the MAC and compares it in constant time
 * (wr_crypto_equal); anything else is refused without detail. The server
 * does not expire visitors by issue time: Max-Age is the browser's
 * business, and a visitor is only as old as their place in line.
 *
 * Several wr_vid cookies in one request (a sibling deployment on a parent
 * domain, an old cookie path, a client's own addition) are tried in order
 * and the first that verifies wins (wr_identity_find_visitor); at most
 * WR_VID_CANDIDATES_MAX values are checked per request, and a value of the
 * wrong shape costs no HMAC.
 *
 * wr_identity_next_cookie is a small RFC 6265 (section 5.4 / 4.2.1) reader
 * of a Cookie header: pairs separated by ';', optional whitespace around
 * them, name and value split at the first '='. It scans at most
 * COOKIE_HEADER_MAX bytes (the request header limit) and returns a pointer
 * into the caller's header. No allocation, no global state; the caller owns
 * every buffer.
 */
#include "core/identity.h"

#include <string.h>

#include "base/b64.h"
#include "base/crypto.h"
#include "base/ids.h"

#define VID_RAW           16
#define MAC_LEN           WR_CRYPTO_MAC_LEN
#define MAC_B64_LEN       43
#define ISSUED_DIGITS_MAX 12
#define V1_COOKIE_LEN     (WR_VID_LEN + 1 + MAC_B64_LEN) /* "<vid>.<mac>" */
#define ACCOUNT_MARK      '~' /* first char of an account cookie: never base64url */
#define ACCT_B64_MAX      ((WR_USER_ID_MAX * 4 + 2) / 3)
#define ACCT_COOKIE_MIN   (1 + 2 + 1 + 1 + 1 + MAC_B64_LEN) /* "~<1 byte>.<1 digit>.<mac>" */
#define COOKIE_HEADER_MAX 32768 /* bytes of a Cookie header we look at */

/* True if s (n chars) is a vid: 22 base64url chars decoding to 16 bytes. */
static bool vid_ok(const char *s, size_t n)
{
    uint8_t raw[VID_RAW + 4];
    size_t raw_len;
    return n == WR_VID_LEN && wr_b64url_decode(s, n, raw, sizeof raw, &raw_len) == WR_OK &&
           raw_len == VID_RAW;
}

/* Writes "<issued>" in decimal to out (ISSUED_DIGITS_MAX + NUL); returns
 * its length, or 0 when issued is out of range. */
static size_t issued_str(int64_t issued, char out[ISSUED_DIGITS_MAX + 1])
{
    char rev[ISSUED_DIGITS_MAX];
    size_t n = 0;
    if (issued <= 0)
        return 0;
    while (issued > 0 && n < ISSUED_DIGITS_MAX) {
        rev[n++] = (char)('0' + issued % 10);
        issued /= 10;
    }
    if (issued > 0)
        return 0; /* more than 12 digits */
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* Parses the decimal issue time (n chars, 1-12 digits, no leading zero). */
static bool issued_parse(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;
    if (n == 0 || n > ISSUED_DIGITS_MAX || s[0] == '0')
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Writes "<id>.<issued>.<mac>" to cookie (cap bytes): id is id_len bytes
 * (a vid, or '~' and an account's base64url), mac the HMAC of what comes
 * before its dot. */
static wr_err_t sign_value(const uint8_t *key, size_t key_len, const char *id, size_t id_len,
                           int64_t issued_s, char *cookie, size_t cap)
{
    char t[ISSUED_DIGITS_MAX + 1], mac_b64[MAC_B64_LEN + 1];
    char msg[1 + ACCT_B64_MAX + 1 + ISSUED_DIGITS_MAX];
    uint8_t mac[MAC_LEN];
    size_t tn, msg_len;
    wr_err_t err;

    if (!key || key_len == 0 || (tn = issued_str(issued_s, t)) == 0 ||
        id_len + 1 + tn > sizeof msg || id_len + 1 + tn + 1 + MAC_B64_LEN + 1 > cap)
        return WR_EINVAL;
    memcpy(msg, id, id_len);
    msg[id_len] = '.';
    memcpy(msg + id_len + 1, t, tn);
    msg_len = id_len + 1 + tn;
    err = wr_crypto_hmac_sha256(key, key_len, msg, msg_len, mac);
    if (err != WR_OK)
        return err;
    err = wr_b64url_encode(mac, sizeof mac, mac_b64, sizeof mac_b64, NULL);
    if (err != WR_OK)
        return err;
    memcpy(cookie, msg, msg_len);
    cookie[msg_len] = '.';
    memcpy(cookie + msg_len + 1, mac_b64, sizeof mac_b64); /* includes the NUL */
    return WR_OK;
}

wr_err_t wr_identity_sign(const uint8_t *key, size_t key_len, const char *vid, int64_t issued_s,
                          char cookie[WR_VID_COOKIE_LEN + 1])
{
    if (!vid || !cookie || !vid_ok(vid, strnlen(vid, WR_VID_LEN + 1)))
        return WR_EINVAL;
    return sign_value(key, key_len, vid, WR_VID_LEN, issued_s, cookie, WR_VID_COOKIE_LEN + 1);
}

wr_err_t wr_identity_sign_account(const uint8_t *key, size_t key_len, const char *user,
                                  int64_t issued_s, char cookie[WR_IDENTITY_COOKIE_MAX + 1])
{
    char id[1 + ACCT_B64_MAX + 1];
    size_t n = 0;
    if (!user || !cookie || !wr_ids_valid_user(user))
        return WR_EINVAL;
    id[0] = ACCOUNT_MARK;
    if (wr_b64url_encode((const uint8_t *)user, strlen(user), id + 1, sizeof id - 1, &n) != WR_OK)
        return WR_EINVAL;
    return sign_value(key, key_len, id, 1 + n, issued_s, cookie, WR_IDENTITY_COOKIE_MAX + 1);
}

wr_err_t wr_identity_resign(const uint8_t *key, size_t key_len, const wr_identity_visitor_t *v,
                            int64_t now_s, char cookie[WR_IDENTITY_COOKIE_MAX + 1])
{
    if (!v)
        return WR_EINVAL;
    return v->account ? wr_identity_sign_account(key, key_len, v->user, now_s, cookie)
                      : wr_identity_sign(key, key_len, v->vid, now_s, cookie);
}

wr_err_t wr_identity_mint(const uint8_t *key, size_t key_len, int64_t now_s,
                          char vid[WR_VID_LEN + 1], char cookie[WR_VID_COOKIE_LEN + 1])
{
    uint8_t raw[VID_RAW];
    char v[WR_VID_LEN + 1], c[WR_VID_COOKIE_LEN + 1];
    wr_err_t err;

    if (!key || key_len == 0 || !vid || !cookie)
        return WR_EINVAL;
    err = wr_crypto_random(raw, sizeof raw);
    if (err == WR_OK)
        err = wr_b64url_encode(raw, sizeof raw, v, sizeof v, NULL);
    if (err == WR_OK)
        err = wr_identity_sign(key, key_len, v, now_s, c);
    if (err != WR_OK)
        return err;
    memcpy(vid, v, sizeof v);
    memcpy(cookie, c, strlen(c) + 1);
    return WR_OK;
}

/* An account cookie's "~<acct>.<issued>" (msg_len bytes, MAC not checked
 * yet): decodes the account into user. */
static bool account_parse(const char *value, size_t msg_len, char user[WR_USER_ID_MAX + 1],
                          int64_t *issued)
{
    const char *dot = memchr(value, '.', msg_len);
    if (!dot || value[0] != ACCOUNT_MARK)
        return false;
    size_t an = (size_t)(dot - value) - 1, un = 0;
    uint8_t raw[WR_USER_ID_MAX + 4];
    if (an == 0 || an > ACCT_B64_MAX ||
        wr_b64url_decode(value + 1, an, raw, sizeof raw, &un) != WR_OK || un == 0 ||
        un > WR_USER_ID_MAX)
        return false;
    memcpy(user, raw, un);
    user[un] = '\0';
    return strlen(user) == un && wr_ids_valid_user(user) &&
           issued_parse(dot + 1, msg_len - (size_t)(dot + 1 - value), issued);
}

bool wr_identity_verify(const uint8_t *key, size_t key_len, const char *value, size_t len,
                        wr_identity_visitor_t *out)
{
    uint8_t got[MAC_LEN + 4], want[MAC_LEN];
    size_t got_len, msg_len;
    int64_t issued = 0;
    char user[WR_USER_ID_MAX + 1];
    bool account = value && len > 0 && value[0] == ACCOUNT_MARK;

    if (!key || key_len == 0 || !value || !out ||
        len < (account ? ACCT_COOKIE_MIN : V1_COOKIE_LEN) ||
        len > (account ? WR_IDENTITY_COOKIE_MAX : WR_VID_COOKIE_LEN))
        return false;
    /* The MAC is the last 43 characters, after a dot; what it signs is
     * everything before that dot: the vid alone (first format),
     * "<vid>.<issued>", or "~<acct>.<issued>". */
    msg_len = len - MAC_B64_LEN - 1;
    if (value[msg_len] != '.')
        return false;
    if (account) {
        if (!account_parse(value, msg_len, user, &issued))
            return false;
    } else {
        if (value[WR_VID_LEN] != '.' || !vid_ok(value, WR_VID_LEN))
            return false;
        if (msg_len > WR_VID_LEN &&
            !issued_parse(value + WR_VID_LEN + 1, msg_len - WR_VID_LEN - 1, &issued))
            return false;
    }
    if (wr_b64url_decode(value + msg_len + 1, MAC_B64_LEN, got, sizeof got, &got_len) != WR_OK ||
        got_len != MAC_LEN)
        return false;
    if (wr_crypto_hmac_sha256(key, key_len, value, msg_len, want) != WR_OK)
        return false;
    if (!wr_crypto_equal(want, got, MAC_LEN))
        return false;
    out->account = account;
    if (account) {
        memcpy(out->user, user, strlen(user) + 1);
        out->vid[0] = '\0';
    } else {
        memcpy(out->vid, value, WR_VID_LEN);
        out->vid[WR_VID_LEN] = '\0';
        memcpy(out->user, out->vid, WR_VID_LEN + 1);
    }
    out->issued_s = issued;
    out->prev_key = false;
    return true;
}

bool wr_identity_find_visitor(const wr_identity_keys_t *keys, const char *header, unsigned *budget,
                              wr_identity_visitor_t *out)
{
    size_t pos = 0, len;
    const char *v;

    if (!keys || !header || !budget || !out)
        return false;
    while (*budget > 0 && (v = wr_identity_next_cookie(header, WR_VID_COOKIE_NAME, &pos, &len))) {
        bool acct = len > 0 && v[0] == ACCOUNT_MARK;
        if (len < (acct ? ACCT_COOKIE_MIN : V1_COOKIE_LEN) ||
            len > (acct ? WR_IDENTITY_COOKIE_MAX : WR_VID_COOKIE_LEN))
            continue; /* not ours whatever the key: costs nothing */
        (*budget)--;
        if (wr_identity_verify(keys->key, keys->key_len, v, len, out))
            return true;
        if (keys->prev_key && wr_identity_verify(keys->prev_key, keys->prev_key_len, v, len, out)) {
            out->prev_key = true;
            return true;
        }
    }
    return false;
}

bool wr_identity_should_renew(const wr_identity_visitor_t *v, int64_t now_s)
{
    if (!v)
        return false;
    return v->prev_key || v->issued_s <= 0 || now_s - v->issued_s > WR_VID_COOKIE_MAX_AGE / 2;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

const char *wr_identity_next_cookie(const char *header, const char *name, size_t *pos, size_t *len)
{
    size_t n, name_len, i;

    if (!header || !name || !pos || !len)
        return NULL;
    name_len = strlen(name);
    if (name_len == 0)
        return NULL;
    n = strnlen(header, COOKIE_HEADER_MAX);

    for (i = *pos; i < n;) {
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
        *pos = i;
        *len = ve - vs;
        return header + vs;
    }
    *pos = n;
    return NULL;
}

const char *wr_identity_find_cookie(const char *header, const char *name, size_t *len)
{
    size_t pos = 0;
    return wr_identity_next_cookie(header, name, &pos, len);
}
