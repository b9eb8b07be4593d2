/*
 * groups.c - priority groups and presale codes: the store-free rules
 * (groups.h).
 *
 * The split. A tick first admits the held returns (they come back first,
 * 1.2), each counted toward its own line; the rest of what the tick may
 * admit goes to the people admissible now. The standard line's share is
 * kept as the budget keeps a fractional rate (core/queue.c): in integer
 * millionths, owed = share_micro x A + carry, the line gets at least
 * floor(owed / 10^6) when it has that many, and the remainder below one
 * person is carried to the next tick. The groups then fill what is left in
 * priority order, the first group first; when they run short the standard
 * line takes the rest, so the tick admits as many people as it may and has.
 * A carry is never saved while the standard line has nobody admissible,
 * and never over one person: the share is a floor over every run of ticks,
 * not a debt that could later admit a burst.
 *
 * Codes. 20 symbols of Crockford's base 32 carry 100 random bits (5 bits a
 * symbol from a byte's low bits: 256 is a multiple of 32, so each symbol is
 * uniform), shown as XXXXX-XXXXX-XXXXX-XXXXX. The one spelling a code is
 * looked up by is upper case with O, I, L read as 0, 1, 1, so a code typed
 * from paper still works; the store keeps SHA-256 of that spelling (100
 * random bits are beyond any offline search, so no key is needed).
 */
#include "core/groups.h"

#include <string.h>

#include "base/crypto.h"
#include "base/hex.h"
#include "base/ids.h"
#include "base/names.h"

#define MICRO 1000000ULL

bool wr_groups_name_ok(const char *s, size_t len)
{
    if (!wr_ids_valid_label_n(s, len))
        return false;
    return !(len == sizeof(WR_GROUP_STANDARD) - 1 && memcmp(s, WR_GROUP_STANDARD, len) == 0);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

uint64_t wr_groups_split(uint64_t allowed, uint32_t share_micro, int64_t *carry_micro,
                         const wr_groups_line_t *lines, size_t n_lines, uint64_t *out)
{
    if (share_micro > MICRO)
        share_micro = (uint32_t)MICRO;
    uint64_t held = 0, avail_groups = 0;
    for (size_t i = 0; i < n_lines; i++) {
        held += lines[i].held;
        if (i > 0)
            avail_groups += lines[i].avail;
        out[i] = 0;
    }
    uint64_t room = allowed > held ? allowed - held : 0;
    uint64_t fresh = min_u64(room, lines[0].avail + avail_groups);
    uint64_t total = held + fresh;

    uint64_t carry =
        *carry_micro > 0 && (uint64_t)*carry_micro < MICRO ? (uint64_t)*carry_micro : 0;
    bool standard_here = lines[0].held + lines[0].avail > 0;
    if (!standard_here)
        carry = 0;
    uint64_t owe = (uint64_t)share_micro * total + carry; /* total <= 2^43: no overflow */
    uint64_t owed = owe / MICRO;
    /* the standard line's floor this tick: what it is owed, as far as it
     * has people; its held returns count toward it */
    uint64_t floor_total =
        min_u64(lines[0].held + lines[0].avail, owed > lines[0].held ? owed : lines[0].held);
    uint64_t floor_fresh = min_u64(floor_total - lines[0].held, fresh);
    uint64_t to_groups = min_u64(avail_groups, fresh - floor_fresh);
    out[0] = fresh - to_groups; /* <= avail: fresh <= avail + avail_groups */
    for (size_t i = 1; i < n_lines && to_groups > 0; i++) {
        out[i] = min_u64(lines[i].avail, to_groups);
        to_groups -= out[i];
    }
    uint64_t got = (lines[0].held + out[0]) * MICRO;
    uint64_t left = standard_here && got < owe ? owe - got : 0;
    *carry_micro = (int64_t)(left < MICRO ? left : MICRO - 1);
    return total;
}

uint32_t wr_groups_share_micro(double share)
{
    if (!(share > 0))
        return 0;
    if (share >= 1)
        return (uint32_t)MICRO;
    return (uint32_t)(share * (double)MICRO + 0.5);
}

double wr_groups_eta_rate(size_t line, uint64_t admitted_60s, double share, double rate,
                          size_t first_waiting)
{
    if (admitted_60s > 0)
        return (double)admitted_60s / 60.0;
    if (line == 0)
        return share * rate;
    if (line == first_waiting)
        return (1.0 - share) * rate;
    return -1;
}

static const char *const reason_names[] = {
    [WR_CODE_OK] = "ok",           [WR_CODE_UNKNOWN] = "unknown", [WR_CODE_USED_UP] = "usedUp",
    [WR_CODE_REVOKED] = "revoked", [WR_CODE_EXPIRED] = "expired",
};

const char *wr_groups_code_reason_name(wr_code_reason_t r)
{
    return WR_NAMES_GET(reason_names, r, "unknown");
}

wr_code_reason_t wr_groups_code_verdict(bool revoked, int64_t expires_at_ms, uint64_t uses_left,
                                        int64_t now_ms)
{
    if (revoked)
        return WR_CODE_REVOKED;
    if (expires_at_ms >= 0 && expires_at_ms <= now_ms)
        return WR_CODE_EXPIRED;
    if (uses_left == 0)
        return WR_CODE_USED_UP;
    return WR_CODE_OK;
}

static const char alphabet[33] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

wr_err_t wr_groups_code_new(char out[WR_CODE_LEN + 1])
{
    uint8_t r[20];
    if (wr_crypto_random(r, sizeof(r)) != WR_OK) {
        out[0] = '\0';
        return WR_EIO;
    }
    size_t o = 0;
    for (size_t i = 0; i < sizeof(r); i++) {
        if (i > 0 && i % 5 == 0)
            out[o++] = '-';
        out[o++] = alphabet[r[i] & 31u];
    }
    out[o] = '\0';
    wr_crypto_wipe(r, sizeof(r));
    return WR_OK;
}

/* c as a code symbol: uppercase, O read as 0, I and L as 1; 0 when c is
 * not one (a dash or anything else). */
static char code_symbol(char c)
{
    if (c >= 'a' && c <= 'z')
        c = (char)(c - 'a' + 'A');
    if (c == 'O')
        return '0';
    if (c == 'I' || c == 'L')
        return '1';
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : 0;
}

static bool code_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool wr_groups_code_norm(const char *s, size_t len, char out[WR_CODE_MAX + 1])
{
    out[0] = '\0';
    if (!s || len == 0 || len > 2 * WR_CODE_MAX)
        return false;
    /* white space around it goes */
    while (len > 0 && code_space(s[0]))
        s++, len--;
    while (len > 0 && code_space(s[len - 1]))
        len--;
    /* a generated code's 20 symbols, however they are grouped (dashes,
     * spaces, or none): its one spelling, 4 blocks of 5 */
    char sym[WR_CODE_MAX + 1];
    size_t n = 0;
    bool symbols_only = true;
    for (size_t i = 0; i < len && symbols_only; i++) {
        char c = code_symbol(s[i]);
        if (c && n < WR_CODE_MAX)
            sym[n++] = c;
        else if (!c && s[i] != '-' && !code_space(s[i]))
            symbols_only = false;
        else if (c)
            symbols_only = false; /* too many symbols */
    }
    if (symbols_only && n == 20) {
        for (size_t b = 0, o = 0; b < 4; b++) {
            if (b)
                out[o++] = '-';
            memcpy(out + o, sym + 5 * b, 5);
            o += 5;
            out[o] = '\0';
        }
        return true;
    }
    /* anything else: as typed, but for case and O/I/L */
    if (len == 0 || len > WR_CODE_MAX)
        return false;
    char buf[WR_CODE_MAX + 1];
    for (size_t i = 0; i < len; i++) {
        char c = s[i] == '-' ? '-' : code_symbol(s[i]);
        if (!c)
            return false;
        buf[i] = c;
    }
    buf[len] = '\0';
    memcpy(out, buf, len + 1);
    return true;
}

wr_err_t wr_groups_code_hash(const char *s, size_t len, char out[WR_CODE_HASH_HEX + 1])
{
    char norm[WR_CODE_MAX + 1];
    out[0] = '\0';
    if (!wr_groups_code_norm(s, len, norm))
        return WR_EINVAL;
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    if (!h)
        return WR_ENOMEM;
    uint8_t d[WR_CRYPTO_SHA256_LEN];
    wr_err_t err = wr_crypto_sha256_digest(h, norm, strlen(norm), d);
    wr_crypto_sha256_free(h);
    if (err != WR_OK)
        return err;
    wr_hex_encode(d, sizeof(d), out);
    out[WR_CODE_HASH_HEX] = '\0';
    return WR_OK;
}
