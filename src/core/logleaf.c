/*
 * logleaf.c - the public log's leaves (logleaf.h): encoding, parsing, log
 * ids, the draw.
 *
 * The encoder appends pieces to the caller's buffer through `put`, which
 * keeps the first overflow (WR_ELIMIT) and writes nothing past it, so each
 * kind is a short list of puts in the documented key order and one check
 * at the end. Numbers are integers (%lld / %llu): no float ever enters a
 * leaf, so every encoder in any language writes the same bytes.
 *
 * The parser is jansson's (duplicate keys refused: a leaf that says two
 * things is not a leaf), then one typed getter per field.
 */
#include "core/logleaf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/hex.h"
#include "base/ids.h"
#include "base/names.h"

static const char *const kind_names[] = {
    [WR_LOGLEAF_JOIN] = "join",         [WR_LOGLEAF_COMMIT] = "commit",
    [WR_LOGLEAF_DRAW] = "draw",         [WR_LOGLEAF_ADMIT] = "admit",
    [WR_LOGLEAF_AWAY] = "away",         [WR_LOGLEAF_LEAVE] = "leave",
    [WR_LOGLEAF_FAILOPEN] = "failOpen",
};
static const char *const why_names[WR_LOGLEAF_WHY_COUNT] = {
    [WR_LOGLEAF_LEFT] = "left",
    [WR_LOGLEAF_ABANDONED] = "abandoned",
    [WR_LOGLEAF_PENDING] = "pending",
    [WR_LOGLEAF_REMOVED] = "removed",
};

const char *wr_logleaf_kind_name(wr_logleaf_kind_t e)
{
    return WR_NAMES_GET(kind_names, e, "?");
}

const char *wr_logleaf_why_name(wr_logleaf_why_t why)
{
    return WR_NAMES_GET(why_names, why, "?");
}

/* ---------- ids and names */

wr_err_t wr_logleaf_u_bytes(const char *u, uint8_t out[WR_LOGLEAF_U_BYTES])
{
    if (!u || !out || !wr_hex_decode(u, strlen(u), out, WR_LOGLEAF_U_BYTES))
        return WR_EINVAL;
    return WR_OK;
}

static bool valid_u(const char *u)
{
    uint8_t b[WR_LOGLEAF_U_BYTES];
    return wr_logleaf_u_bytes(u, b) == WR_OK;
}

bool wr_logleaf_join_u(const char *leaf, size_t len, char u[WR_LOGLEAF_U_HEX + 1])
{
    static const char key[] = ",\"u\":\"";
    for (size_t i = 0; leaf && i + sizeof key - 1 + WR_LOGLEAF_U_HEX <= len; i++)
        if (memcmp(leaf + i, key, sizeof key - 1) == 0) {
            memcpy(u, leaf + i + sizeof key - 1, WR_LOGLEAF_U_HEX);
            u[WR_LOGLEAF_U_HEX] = '\0';
            return valid_u(u);
        }
    return false;
}

/* A group name: a label, [a-z0-9-]{1,32} (base/ids.h, the rule a
 * queue's groups are named by). */
_Static_assert(WR_LOGLEAF_GROUP_MAX == WR_LABEL_MAX, "a leaf's group is a label");

static bool valid_group(const char *g, size_t len)
{
    return wr_ids_valid_label_n(g, len);
}

/* ---------- encoding */

typedef struct {
    char *out;
    size_t cap, len;
    wr_err_t err;
} buf_t;

static void put(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(buf_t *b, const char *fmt, ...)
{
    if (b->err != WR_OK)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->out + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= b->cap - b->len) {
        b->err = WR_ELIMIT;
        b->out[b->len] = '\0';
        return;
    }
    b->len += (size_t)n;
}

/* "key":"text" with text as escaped printable ASCII (max chars). */
static void put_text(buf_t *b, const char *key, const char *text, size_t max)
{
    put(b, ",\"%s\":\"", key);
    for (size_t i = 0; text[i] && i < max && b->err == WR_OK; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\')
            put(b, "\\%c", c);
        else
            put(b, "%c", c >= 0x20 && c < 0x7f ? c : '?');
    }
    put(b, "\"");
}

static void put_hex(buf_t *b, const char *key, const uint8_t *v, size_t n)
{
    char hex[2 * WR_LOGLEAF_RANDOM_MAX + 1];
    wr_hex_encode(v, n, hex);
    put(b, ",\"%s\":\"%s\"", key, hex);
}

wr_err_t wr_logleaf_encode(const wr_logleaf_t *l, char *out, size_t cap, size_t *len)
{
    if (!l || !out || cap == 0 || l->at < 0)
        return WR_EINVAL;
    bool has_u = l->e == WR_LOGLEAF_JOIN || l->e == WR_LOGLEAF_ADMIT || l->e == WR_LOGLEAF_AWAY ||
                 l->e == WR_LOGLEAF_LEAVE;
    bool has_grp = (l->e == WR_LOGLEAF_JOIN || l->e == WR_LOGLEAF_ADMIT) && l->grp[0];
    if ((has_u && !valid_u(l->u)) || (has_grp && !valid_group(l->grp, strlen(l->grp))) ||
        (unsigned)l->e > WR_LOGLEAF_FAILOPEN)
        return WR_EINVAL;
    buf_t b = {out, cap, 0, WR_OK};
    put(&b, "{\"e\":\"%s\",\"at\":%" PRId64, kind_names[l->e], l->at);
    if (has_u)
        put(&b, ",\"u\":\"%s\"", l->u);
    switch (l->e) {
    case WR_LOGLEAF_JOIN:
        if (l->t < 0)
            return WR_EINVAL;
        put(&b, ",\"t\":%" PRId64, l->t);
        if (l->pre)
            put(&b, ",\"pre\":true");
        if (has_grp)
            put(&b, ",\"grp\":\"%s\"", l->grp);
        break;
    case WR_LOGLEAF_COMMIT:
        put_hex(&b, "seedHash", l->seed_hash, 32);
        if (l->beacon) {
            put_text(&b, "beacon", l->beacon_url, WR_LOGLEAF_URL_MAX);
            put(&b, ",\"round\":%" PRIu64, l->round);
        }
        break;
    case WR_LOGLEAF_DRAW:
        if (l->randomness_len > WR_LOGLEAF_RANDOM_MAX ||
            (l->randomness_len && (l->beacon_error[0] || !l->beacon)))
            return WR_EINVAL;
        put(&b, ",\"n\":%" PRIu64, l->n);
        put_hex(&b, "seed", l->seed, WR_LOGLEAF_SEED);
        if (l->beacon) {
            put(&b, ",\"round\":%" PRIu64, l->round);
            if (l->randomness_len)
                put_hex(&b, "randomness", l->randomness, l->randomness_len);
            put_text(&b, "beacon", l->beacon_url, WR_LOGLEAF_URL_MAX);
        }
        if (l->beacon_error[0])
            put_text(&b, "beaconError", l->beacon_error, WR_LOGLEAF_ERROR_MAX);
        break;
    case WR_LOGLEAF_ADMIT:
        if (has_grp)
            put(&b, ",\"grp\":\"%s\"", l->grp);
        if (l->held)
            put(&b, ",\"held\":true");
        break;
    case WR_LOGLEAF_AWAY:
        if (l->unseen)
            put(&b, ",\"unseen\":true");
        break;
    case WR_LOGLEAF_LEAVE:
        if ((unsigned)l->why >= WR_LOGLEAF_WHY_COUNT)
            return WR_EINVAL;
        put(&b, ",\"why\":\"%s\"", why_names[l->why]);
        break;
    case WR_LOGLEAF_FAILOPEN:
        put(&b, ",\"n\":%" PRIu64, l->n);
        break;
    }
    put(&b, "}");
    if (b.err == WR_OK && len)
        *len = b.len;
    return b.err;
}

/* ---------- parsing */

/* The reader of one leaf: its object, where the first error goes. */
typedef struct {
    json_t *o;
    char *msg;
    size_t msg_len;
    bool bad;
} rd_t;

static void fail(rd_t *r, const char *key, const char *what)
{
    if (!r->bad && r->msg && r->msg_len)
        snprintf(r->msg, r->msg_len, "\"%s\": %s", key, what);
    r->bad = true;
}

/* A required (req) or optional integer >= 0; absent optional: 0. */
static uint64_t get_uint(rd_t *r, const char *key, bool req)
{
    json_t *v = json_object_get(r->o, key);
    if (!v) {
        if (req)
            fail(r, key, "missing");
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        fail(r, key, "not an integer >= 0");
        return 0;
    }
    return (uint64_t)json_integer_value(v);
}

static bool get_true(rd_t *r, const char *key)
{
    json_t *v = json_object_get(r->o, key);
    if (v && !json_is_boolean(v))
        fail(r, key, "not a boolean");
    return v && json_is_true(v);
}

/* A string into out (cap bytes incl. NUL); absent optional: "". */
static void get_str(rd_t *r, const char *key, bool req, char *out, size_t cap)
{
    out[0] = '\0';
    json_t *v = json_object_get(r->o, key);
    if (!v) {
        if (req)
            fail(r, key, "missing");
        return;
    }
    if (!json_is_string(v) || json_string_length(v) >= cap ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        fail(r, key, "not a string of the right length");
        return;
    }
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
}

static void get_hex(rd_t *r, const char *key, bool req, uint8_t *out, size_t n, size_t max,
                    size_t *got)
{
    char hex[2 * WR_LOGLEAF_RANDOM_MAX + 2];
    get_str(r, key, req, hex, sizeof hex);
    size_t len = strlen(hex);
    if (!req && len == 0 && !json_object_get(r->o, key)) {
        if (got)
            *got = 0;
        return;
    }
    size_t bytes = n ? n : len / 2;
    if (r->bad || bytes > max || !wr_hex_decode(hex, len, out, bytes)) {
        fail(r, key, "not lowercase hex of the right length");
        return;
    }
    if (got)
        *got = bytes;
}

wr_err_t wr_logleaf_parse(const char *leaf, size_t len, wr_logleaf_t *l, char *msg, size_t msg_len)
{
    if (!leaf || !l || len > WR_LOGLEAF_MAX)
        return wr_einval(msg, msg_len, "no leaf, or longer than %d bytes", WR_LOGLEAF_MAX);
    json_error_t jerr;
    json_t *o = json_loadb(leaf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        return wr_einval(msg, msg_len, "not a JSON object");
    }
    memset(l, 0, sizeof(*l));
    rd_t r = {o, msg, msg_len, false};
    char e[16];
    get_str(&r, "e", true, e, sizeof e);
    int kind = -1;
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++) {
        if (strcmp(e, kind_names[i]) == 0)
            kind = (int)i;
    }
    if (kind < 0)
        fail(&r, "e", "not an event");
    l->e = (wr_logleaf_kind_t)(kind < 0 ? 0 : kind);
    uint64_t at = get_uint(&r, "at", true);
    l->at = at > INT64_MAX ? INT64_MAX : (int64_t)at;
    if (!r.bad && (kind == WR_LOGLEAF_JOIN || kind == WR_LOGLEAF_ADMIT || kind == WR_LOGLEAF_AWAY ||
                   kind == WR_LOGLEAF_LEAVE)) {
        get_str(&r, "u", true, l->u, sizeof l->u);
        if (!r.bad && !valid_u(l->u))
            fail(&r, "u", "not 32 lowercase hex");
    }
    if (!r.bad && (kind == WR_LOGLEAF_JOIN || kind == WR_LOGLEAF_ADMIT)) {
        get_str(&r, "grp", false, l->grp, sizeof l->grp);
        if (!r.bad && json_object_get(o, "grp") && !valid_group(l->grp, strlen(l->grp)))
            fail(&r, "grp", "not a group name");
    }
    char why[16];
    switch (r.bad ? -1 : kind) {
    case WR_LOGLEAF_JOIN: {
        uint64_t t = get_uint(&r, "t", true);
        l->t = t > INT64_MAX ? INT64_MAX : (int64_t)t;
        l->pre = get_true(&r, "pre");
        break;
    }
    case WR_LOGLEAF_COMMIT:
    case WR_LOGLEAF_DRAW:
        if (kind == WR_LOGLEAF_COMMIT) {
            get_hex(&r, "seedHash", true, l->seed_hash, 32, 32, NULL);
        } else {
            l->n = get_uint(&r, "n", true);
            get_hex(&r, "seed", true, l->seed, WR_LOGLEAF_SEED, WR_LOGLEAF_SEED, NULL);
            get_hex(&r, "randomness", false, l->randomness, 0, WR_LOGLEAF_RANDOM_MAX,
                    &l->randomness_len);
            get_str(&r, "beaconError", false, l->beacon_error, sizeof l->beacon_error);
        }
        get_str(&r, "beacon", false, l->beacon_url, sizeof l->beacon_url);
        l->beacon = json_object_get(o, "beacon") != NULL;
        l->round = get_uint(&r, "round", l->beacon);
        if (!r.bad && kind == WR_LOGLEAF_DRAW && l->randomness_len && !l->beacon)
            fail(&r, "randomness", "without a beacon");
        break;
    case WR_LOGLEAF_ADMIT:
        l->held = get_true(&r, "held");
        break;
    case WR_LOGLEAF_AWAY:
        l->unseen = get_true(&r, "unseen");
        break;
    case WR_LOGLEAF_LEAVE:
        get_str(&r, "why", true, why, sizeof why);
        l->why = WR_LOGLEAF_WHY_COUNT;
        for (int i = 0; i < WR_LOGLEAF_WHY_COUNT; i++) {
            if (strcmp(why, why_names[i]) == 0)
                l->why = (wr_logleaf_why_t)i;
        }
        if (!r.bad && l->why == WR_LOGLEAF_WHY_COUNT)
            fail(&r, "why", "not a reason");
        break;
    case WR_LOGLEAF_FAILOPEN:
        l->n = get_uint(&r, "n", true);
        break;
    default:
        break;
    }
    json_decref(o);
    return r.bad ? WR_EINVAL : WR_OK;
}

/* ---------- ids and the draw */

wr_err_t wr_logleaf_log_id(const uint8_t *salt, size_t salt_len, const char *user, size_t len,
                           char out[WR_LOGLEAF_U_HEX + 1])
{
    uint8_t mac[WR_CRYPTO_MAC_LEN];
    if (!salt || salt_len == 0 || !user || len == 0 || !out)
        return WR_EINVAL;
    wr_err_t err = wr_crypto_hmac_sha256(salt, salt_len, user, len, mac);
    if (err != WR_OK)
        return err;
    wr_hex_encode(mac, WR_LOGLEAF_U_BYTES, out);
    return WR_OK;
}

wr_err_t wr_logleaf_draw_value(wr_crypto_sha256_t *h, const uint8_t seed[WR_LOGLEAF_SEED],
                               const uint8_t *randomness, size_t randomness_len, uint8_t d[32])
{
    uint8_t buf[WR_LOGLEAF_SEED + WR_LOGLEAF_RANDOM_MAX];
    if (!h || !seed || !d || (!randomness && randomness_len) ||
        randomness_len > WR_LOGLEAF_RANDOM_MAX)
        return WR_EINVAL;
    memcpy(buf, seed, WR_LOGLEAF_SEED);
    if (randomness_len)
        memcpy(buf + WR_LOGLEAF_SEED, randomness, randomness_len);
    return wr_crypto_sha256_digest(h, buf, WR_LOGLEAF_SEED + randomness_len, d);
}

wr_err_t wr_logleaf_draw_rank(wr_crypto_sha256_t *h, const uint8_t d[32],
                              const uint8_t u[WR_LOGLEAF_U_BYTES], uint8_t rank[32])
{
    uint8_t buf[32 + WR_LOGLEAF_U_BYTES];
    if (!h || !d || !u || !rank)
        return WR_EINVAL;
    memcpy(buf, d, 32);
    memcpy(buf + 32, u, WR_LOGLEAF_U_BYTES);
    return wr_crypto_sha256_digest(h, buf, sizeof buf, rank);
}
