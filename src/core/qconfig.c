/*
 * qconfig.c - a queue's configuration: defaults, validation, JSON in and out.
 *
 * One row per field (the table at the end of the helpers, as Redis's
 * config.c static_configs[]): JSON key, kind, range, default, the member's
 * offset in wr_queue_config_t, the field of the store's per-queue hash,
 * and hooks for the odd fields (capacity, pollBands, inviteKey,
 * returnOrigins are CUSTOM; targetUrl is a STRING with a check). Defaults,
 * the unknown-key check, parsing, rendering and the store's hash values
 * walk the table, so a field is written once; the rows' macros name the
 * member and its C type, so a row whose kind does not match its member
 * does not compile.
 *
 * The config is a plain value (wr_queue_config_t, no pointers), so parsing
 * works on a local copy and only assigns *out after every field validated:
 * on error *out is untouched. PUT starts from the defaults, PATCH from the
 * base; both then run the same per-field validation (apply_fields), which
 * first rejects unknown keys and then checks the given ones in row order,
 * so the field named in an error is deterministic.
 *
 * The rate (admitPerSecond) has no default: it is given, or derived from
 * capacity as connections / (serviceMs / 1000) * safety. In a PATCH,
 * giving capacity without admitPerSecond re-derives it; "capacity": null
 * removes the capacity object and keeps the rate. failOpenPerSecond
 * defaults to the rate in a PUT; a PATCH keeps the base value unless given.
 * These rules across fields are in wr_qconfig_parse / wr_qconfig_patch.
 *
 * "...At" fields (WR_QF_EPOCH_MS) are epoch ms: from the API a value below
 * WR_QF_EPOCH_MS_MIN is refused as plausible seconds (K34); a store's own
 * copy (wr_qconfig_parse_stored) keeps what earlier versions accepted.
 *
 * pollBands: every band but the last must have upTo; the last may have one
 * (positions beyond it still use the last band, see wr_queue_poll_base_ms),
 * and it is kept so GET shows what was PUT.
 *
 * inviteKey is write-only: wr_qconfig_to_json (what the stores keep) has
 * the key, wr_qconfig_to_public_json (what the API answers) has "set" or
 * null; so is captcha's secret (core/captcha.c). returnOrigins are kept
 * canonical (origin.h), so GET shows "https://shop.example" for
 * "HTTPS://Shop.Example:443".
 *
 * The CUSTOM rows' hooks are in qconfig_fields.c (capacity, pollBands,
 * targetUrl's check, inviteKey, returnOrigins, pollMaxMs, autotune,
 * captcha, bypass) and qconfig_page.c (page, notice: the queue page's texts and
 * brand); qconfig_internal.h names them and the helpers they share.
 *
 * wr_qconfig_to_json renders every field such that parse(to_json(c)) == c.
 * Nothing here allocates except the JSON rendering (caller owns the result).
 */
#include "core/qconfig.h"

#include "base/names.h"

#include "core/qconfig_internal.h"

#include <inttypes.h>
#include <math.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Error sink: the caller's field and message buffers (the field cut to
 * WR_FIELD_MAX bytes where the caller's is longer). */
typedef wr_field_err_t errbuf_t;

static errbuf_t sink(char *field, size_t field_len, char *msg, size_t msg_len)
{
    return (errbuf_t){field, field_len < WR_FIELD_MAX ? field_len : WR_FIELD_MAX, msg, msg_len};
}

/* How strict the "...At" rule is: the API's input, or a store's own copy. */
typedef enum { FROM_API, FROM_STORE } source_t;

/* An integer field: must be a JSON integer within [min, max]. */
wr_err_t wr_qconfig__get_int(errbuf_t *e, const json_t *v, const char *field, long long min,
                             long long max, long long *out)
{
    if (!json_is_integer(v))
        return wr_field_einval(e, field, "must be an integer from %lld to %lld", min, max);
    long long x = (long long)json_integer_value(v);
    if (x < min || x > max)
        return wr_field_einval(e, field, "must be an integer from %lld to %lld", min, max);
    *out = x;
    return WR_OK;
}

/* A number field (integer or real), finite; rule is the whole message. */
wr_err_t wr_qconfig__get_number(errbuf_t *e, const json_t *v, const char *field, const char *rule,
                                double *out)
{
    if (!json_is_number(v))
        return wr_field_einval(e, field, "%s", rule);
    double x = json_number_value(v);
    if (!isfinite(x))
        return wr_field_einval(e, field, "%s", rule);
    *out = x;
    return WR_OK;
}

static bool known(const char *key, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

/* Fails naming prefix + key as an unknown field. */
wr_err_t wr_qconfig__unknown(errbuf_t *e, const char *prefix, const char *key)
{
    char path[WR_FIELD_MAX + 1];
    snprintf(path, sizeof(path), "%s%s", prefix, key);
    return wr_field_einval(e, path, "unknown field");
}

/* Rejects the first key of obj not in keys; prefix is prepended to the field. */
wr_err_t wr_qconfig__reject_unknown(errbuf_t *e, const json_t *obj, const char *prefix,
                                    const char *const *keys, size_t n)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        if (!known(key, keys, n))
            return wr_qconfig__unknown(e, prefix, key);
    }
    return WR_OK;
}

/* A double as a JSON integer when it is integral (and in range), else real. */
json_t *wr_qconfig_number_json(double d)
{
    if (d == floor(d) && fabs(d) <= 9007199254740992.0)
        return json_integer((json_int_t)d);
    return json_real(d);
}

/* json_object_set_new that tracks failure: *ok becomes false on error. */
void wr_qconfig__set(json_t *obj, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(obj, key, v) != 0)
        *ok = false;
}

/* A render hook's end: *out = v when v was built whole (ok), else frees it. */
bool wr_qconfig__finish(json_t *v, bool ok, json_t **out)
{
    if (!v || !ok) {
        json_decref(v);
        return false;
    }
    *out = v;
    return true;
}

/* ------------------------------------------------------------ the table */

static const char *const fail_policies[] = {"closed", "open", "limited", NULL}; /* by value */
_Static_assert(sizeof(wr_fail_policy_t) == sizeof(int), "ENUM members are int-sized");

/* The row macros name a member and its C type: a row whose kind does not
 * match its member's type does not compile. */
#define TYPED(m, T)                                                                                \
    .off = _Generic(((wr_queue_config_t *)0)->m, T                                                 \
                    : offsetof(wr_queue_config_t, m)),                                             \
    .size = sizeof(((wr_queue_config_t *)0)->m)
#define BOOL_FIELD(m) .kind = WR_QF_BOOL, TYPED(m, bool)
#define INT_FIELD(m, lo, hi)                                                                       \
    .kind = WR_QF_INT,                                                                             \
    .off = _Generic(((wr_queue_config_t *)0)->m, uint32_t                                          \
                    : offsetof(wr_queue_config_t, m), uint64_t                                     \
                    : offsetof(wr_queue_config_t, m), int64_t                                      \
                    : offsetof(wr_queue_config_t, m)),                                             \
    .size = sizeof(((wr_queue_config_t *)0)->m), .imin = (lo), .imax = (hi)
#define NUMBER_FIELD(m, lo, hi, rule_)                                                             \
    .kind = WR_QF_NUMBER, TYPED(m, double), .dmin = (lo), .dmax = (hi), .rule = (rule_)
#define STRING_FIELD(m, check_, rule_)                                                             \
    .kind = WR_QF_STRING, TYPED(m, char *), .check = (check_), .rule = (rule_)
#define ENUM_FIELD(m, T, list) .kind = WR_QF_ENUM, TYPED(m, T), .names = (list)
#define CUSTOM_FIELD(m, name)                                                                      \
    .kind = WR_QF_CUSTOM, .off = offsetof(wr_queue_config_t, m),                                   \
    .parse = wr_qconfig__parse_##name, .render = wr_qconfig__render_##name
#define RESET(name) .reset = wr_qconfig__reset_##name

/* In the documented order (docs/API.md, "Queue config"): the order of the
 * rendering and of the checks. The store names are the Lua scripts' (kept
 * as they are: existing Redis data reads on). */
const wr_qfield_t wr_qconfig_fields[] = {
    {"enabled", BOOL_FIELD(enabled), .idef = true, .store = "enabled", .example = "false"},
    {"paused", BOOL_FIELD(paused), .idef = false, .store = "paused", .example = "true"},
    /* no default (0): given, or derived from capacity (wr_qconfig_parse) */
    {"admitPerSecond",
     NUMBER_FIELD(admit_per_second, RATE_MIN, RATE_MAX, "must be a number >= 0.001 and <= 1000000"),
     .store = "rate", .example = "2.5"},
    {"capacity", CUSTOM_FIELD(has_capacity, capacity), RESET(capacity),
     .example = "{\"connections\":40,\"serviceMs\":200,\"safety\":0.5}"},
    {"tickMs", INT_FIELD(tick_ms, 10, 10000), .idef = 100, .store = "tickMs", .example = "250"},
    {"maxActive", INT_FIELD(max_active, 0, INT64_MAX), .idef = 0, .store = "maxActive",
     .example = "9007199254740993"},
    {"maxQueueSize", INT_FIELD(max_queue_size, 0, INT64_MAX), .idef = 100000,
     .store = "maxQueueSize", .example = "0"},
    {"tokenTtlSeconds", INT_FIELD(token_ttl_seconds, 1, 86400), .idef = 300, .store = "ttlSec",
     .example = "86400"},
    {"pollBands", CUSTOM_FIELD(poll_bands, poll_bands), RESET(poll_bands),
     .example = "[{\"upTo\":5,\"ms\":250},{\"upTo\":50,\"ms\":600000}]"},
    {"pollJitter", NUMBER_FIELD(poll_jitter, 0, 0.5, "must be a number from 0 to 0.5"), .ddef = 0.1,
     .example = "0.5"},
    {"failPolicy", ENUM_FIELD(fail_policy, wr_fail_policy_t, fail_policies),
     .idef = WR_FAIL_LIMITED, .example = "\"open\""},
    /* default: the rate (wr_qconfig_parse) */
    {"failOpenPerSecond",
     NUMBER_FIELD(fail_open_per_second, 0, RATE_MAX, "must be a number >= 0 and <= 1000000"),
     .example = "0.25"},
    {"targetUrl",
     STRING_FIELD(target_url, wr_qconfig__target_url_ok,
                  "must be \"\", an absolute http(s):// URL or a path starting with one \"/\", "
                  "without spaces or control characters"),
     .example = "\"https://shop.example/buy?x=1\""},
    {"inviteKey", CUSTOM_FIELD(invite_key, invite_key),
     .example = "\"0123456789abcdef0123456789abcdef\""},
    {"returnOrigins", CUSTOM_FIELD(return_origins, return_origins),
     .example = "[\"https://shop.example\",\"http://[::1]:3000\"]"},
    {"tokenInQuery", BOOL_FIELD(token_in_query), .idef = false, .example = "true"},
    {"sessionSeconds", INT_FIELD(session_seconds, 0, 86400), .idef = 0, .store = "sessionSec",
     .example = "900"},
    {"idleTimeoutSeconds", INT_FIELD(idle_timeout_seconds, 0, 86400), .idef = 120,
     .store = "idleSec", .example = "0"},
    {"awayHoldSeconds", INT_FIELD(away_hold_seconds, 0, 86400), .idef = 1800, .store = "holdSec",
     .example = "60"},
    {"pollMaxMs", CUSTOM_FIELD(poll_max_ms, poll_max_ms), RESET(poll_max_ms), .example = "1000"},
    {"opensAt", INT_FIELD(opens_at_ms, 0, WR_OPENS_AT_MAX),
     .flags = WR_QF_NULLABLE | WR_QF_EPOCH_MS, .idef = WR_OPENS_AT_NONE, .store = "opensAt",
     .example = "1764460800000"},
    {"preQueueShuffle", BOOL_FIELD(pre_queue_shuffle), .idef = true, .store = "shuffle",
     .example = "false"},
    {"closed", BOOL_FIELD(closed), .idef = false, .store = "closed", .example = "true"},
    /* what is left lives in the store's state (wr:{q}:state stockLeft), not
     * in the config hash: no store name */
    {"stock", INT_FIELD(stock, 0, WR_STOCK_MAX), .flags = WR_QF_NULLABLE, .idef = WR_STOCK_NONE,
     .example = "9007199254740992"},
    {"notice", CUSTOM_FIELD(notice, notice), .flags = WR_QF_STORED_BLANK_NULL,
     .example = "\"Sold out in size 42, sorry\""},
    {"challengeBits", INT_FIELD(challenge_bits, 0, 32), .idef = 0, .example = "20"},
    {"autotune", CUSTOM_FIELD(has_autotune, autotune), .store = "autotune",
     .store_value = wr_qconfig__store_value_autotune,
     .example = "{\"minPerSecond\":10,\"maxPerSecond\":350,\"targetMs\":400}"},
    {"page", CUSTOM_FIELD(page, page),
     .example = "{\"title\":\"Launch day\",\"brand\":\"Shop \\u00e9\",\"logoUrl\":\"/logo.svg\","
                "\"accentColor\":\"#FFD400\",\"lang\":\"zh-Hant\"}"},
    {"captcha", CUSTOM_FIELD(captcha, captcha),
     .example = "{\"provider\":\"hcaptcha\",\"siteKey\":\"10000000-ffff-ffff-ffff-000000000001\","
                "\"secret\":\"0x0000000000000000000000000000000000000000\","
                "\"verifyUrl\":\"https://api.hcaptcha.com/siteverify\",\"fallback\":\"refuse\","
                "\"fallbackBits\":20,\"hostname\":\"shop.example\"}"},
    {"groups", CUSTOM_FIELD(groups, groups),
     .example = "[{\"name\":\"fanclub\"},{\"name\":\"vip-2\"}]"},
    {"standardShare", NUMBER_FIELD(standard_share, 0, 1, "must be a number from 0 to 1"),
     .ddef = WR_GROUPS_SHARE_DEF, .example = "0.35"},
    {"publicLog", BOOL_FIELD(public_log), .idef = false, .store = "log", .example = "true"},
    {"draw", CUSTOM_FIELD(draw, draw),
     .example = "{\"beaconUrl\":\"https://api.drand.sh\",\"round\":4200000}"},
    {"bypass", CUSTOM_FIELD(bypass, bypass),
     .example = "[{\"name\":\"staff\",\"header\":\"X-Staff\","
                "\"secret\":\"0123456789abcdef0123456789abcdef\"},"
                "{\"name\":\"office\",\"cidr\":\"2001:db8::/32\"},"
                "{\"name\":\"health\",\"path\":\"/healthz\"},"
                "{\"name\":\"static\",\"path\":\"/static/*\"}]"},
    {"push", BOOL_FIELD(push), .idef = false, .example = "true"},
};
const size_t wr_qconfig_n_fields = sizeof(wr_qconfig_fields) / sizeof(wr_qconfig_fields[0]);

const wr_qfield_t *wr_qconfig_field(const char *key)
{
    for (size_t i = 0; i < wr_qconfig_n_fields; i++)
        if (strcmp(key, wr_qconfig_fields[i].key) == 0)
            return &wr_qconfig_fields[i];
    return NULL;
}

/* ------------------------------------------------- members, by the row */

static void *member_of(wr_queue_config_t *c, const wr_qfield_t *f)
{
    return (char *)c + f->off;
}

static const void *cmember_of(const wr_queue_config_t *c, const wr_qfield_t *f)
{
    return (const char *)c + f->off;
}

/* INT (uint32_t, or a uint64_t / int64_t below 2^63) and ENUM (int) values. */
static int64_t int_of(const wr_queue_config_t *c, const wr_qfield_t *f)
{
    if (f->kind == WR_QF_ENUM) {
        int v;
        memcpy(&v, cmember_of(c, f), sizeof(v));
        return v;
    }
    if (f->size == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, cmember_of(c, f), sizeof(v));
        return v;
    }
    int64_t v;
    memcpy(&v, cmember_of(c, f), sizeof(v));
    return v;
}

static void put_int(wr_queue_config_t *c, const wr_qfield_t *f, int64_t x)
{
    if (f->kind == WR_QF_ENUM) {
        int v = (int)x;
        memcpy(member_of(c, f), &v, sizeof(v));
    } else if (f->size == sizeof(uint32_t)) {
        uint32_t v = (uint32_t)x;
        memcpy(member_of(c, f), &v, sizeof(v));
    } else {
        memcpy(member_of(c, f), &x, sizeof(x));
    }
}

static bool bool_of(const wr_queue_config_t *c, const wr_qfield_t *f)
{
    bool v;
    memcpy(&v, cmember_of(c, f), sizeof(v));
    return v;
}

static double double_of(const wr_queue_config_t *c, const wr_qfield_t *f)
{
    double v;
    memcpy(&v, cmember_of(c, f), sizeof(v));
    return v;
}

/* An ENUM value's name; an out-of-range value reads as the default. */
static const char *enum_name(const wr_qfield_t *f, int64_t v)
{
    for (int64_t i = 0; f->names[i]; i++)
        if (i == v)
            return f->names[i];
    return f->names[f->idef];
}

static void reset_field(const wr_qfield_t *f, wr_queue_config_t *c)
{
    switch (f->kind) {
    case WR_QF_BOOL: {
        bool v = f->idef != 0;
        memcpy(member_of(c, f), &v, sizeof(v));
        break;
    }
    case WR_QF_INT:
    case WR_QF_ENUM:
        put_int(c, f, f->idef);
        break;
    case WR_QF_NUMBER:
        memcpy(member_of(c, f), &f->ddef, sizeof(f->ddef));
        break;
    case WR_QF_STRING:
        *(char *)member_of(c, f) = '\0';
        break;
    case WR_QF_CUSTOM:
        if (f->reset)
            f->reset(c);
        break;
    }
}

/* Every row's default on a zeroed config (the reset hooks set only what
 * is not zero; a CUSTOM row without one defaults to zeros). */
void wr_qconfig_defaults(wr_queue_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < wr_qconfig_n_fields; i++)
        reset_field(&wr_qconfig_fields[i], cfg);
}

/* ------------------------------------------------------------- parsing */

/* An "...At" field: epoch ms (K34: from the API, not plausible seconds). */
static wr_err_t parse_epoch_ms(errbuf_t *e, const wr_qfield_t *f, const json_t *v, source_t src,
                               long long *out)
{
    if (src == FROM_STORE)
        return wr_qconfig__get_int(e, v, f->key, f->imin, f->imax, out);
    bool is_int = json_is_integer(v);
    long long x = is_int ? (long long)json_integer_value(v) : -1;
    long long lo = WR_QF_EPOCH_MS_MIN > f->imin ? WR_QF_EPOCH_MS_MIN : f->imin;
    if (!is_int || x < lo || x > f->imax)
        return wr_field_einval(e, f->key,
                               "must be epoch milliseconds%s: an integer from %lld to %lld%s",
                               is_int && x >= 0 && x < lo ? ", not seconds" : "", lo,
                               (long long)f->imax, (f->flags & WR_QF_NULLABLE) ? ", or null" : "");
    *out = x;
    return WR_OK;
}

/* An ENUM's error: must be "a", "b" or "c". */
static wr_err_t enum_fail(errbuf_t *e, const wr_qfield_t *f)
{
    char list[256] = "";
    size_t n = 0, used = 0;
    while (f->names[n])
        n++;
    for (size_t i = 0; i < n && used < sizeof(list); i++) {
        int w = snprintf(list + used, sizeof(list) - used, "%s\"%s\"",
                         i == 0 ? "" : (i + 1 == n ? " or " : ", "), f->names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return wr_field_einval(e, f->key, "must be %s", list);
}

/* Validates v (present) as f's value and stores it in c. */
static wr_err_t parse_field(errbuf_t *e, const wr_qfield_t *f, const json_t *v,
                            wr_queue_config_t *c, source_t src)
{
    wr_err_t err;
    long long i = 0;
    double d = 0;
    switch (f->kind) {
    case WR_QF_BOOL: {
        if (!json_is_boolean(v))
            return wr_field_einval(e, f->key, "must be true or false");
        bool b = json_is_true(v);
        memcpy(member_of(c, f), &b, sizeof(b));
        return WR_OK;
    }
    case WR_QF_INT:
        if ((f->flags & WR_QF_NULLABLE) && json_is_null(v))
            i = -1;
        else if ((f->flags & WR_QF_EPOCH_MS) && (err = parse_epoch_ms(e, f, v, src, &i)))
            return err;
        else if (!(f->flags & WR_QF_EPOCH_MS) &&
                 (err = wr_qconfig__get_int(e, v, f->key, f->imin, f->imax, &i)))
            return err;
        put_int(c, f, i);
        return WR_OK;
    case WR_QF_NUMBER:
        if ((err = wr_qconfig__get_number(e, v, f->key, f->rule, &d)))
            return err;
        if (!(((f->flags & WR_QF_MIN_OPEN) ? d > f->dmin : d >= f->dmin) && d <= f->dmax))
            return wr_field_einval(e, f->key, "%s", f->rule);
        memcpy(member_of(c, f), &d, sizeof(d));
        return WR_OK;
    case WR_QF_STRING: {
        if (!json_is_string(v))
            return wr_field_einval(e, f->key, "%s", f->rule);
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        if (len > f->size - 1)
            return wr_field_einval(e, f->key, "must be at most %zu bytes", f->size - 1);
        if (f->check && !f->check(s, len))
            return wr_field_einval(e, f->key, "%s", f->rule);
        memcpy(member_of(c, f), s, len);
        ((char *)member_of(c, f))[len] = '\0';
        return WR_OK;
    }
    case WR_QF_ENUM: {
        const char *s = json_string_value(v);
        for (size_t k = 0; s && f->names[k]; k++)
            if (strcmp(s, f->names[k]) == 0) {
                put_int(c, f, (int64_t)k);
                return WR_OK;
            }
        return enum_fail(e, f);
    }
    case WR_QF_CUSTOM:
        if (src == FROM_STORE && (f->flags & WR_QF_STORED_BLANK_NULL) && json_is_string(v) &&
            wr_qconfig__blank(json_string_value(v), json_string_length(v)))
            return f->parse(e, json_null(), c);
        return f->parse(e, v, c);
    }
    return wr_field_einval(e, f->key, "unknown field");
}

/* Validates obj's fields onto c (a working copy): unknown keys first, then
 * the given fields in row order. */
static wr_err_t apply_fields(errbuf_t *e, const json_t *obj, wr_queue_config_t *c, source_t src)
{
    wr_err_t err;
    const char *key;
    const json_t *v;
    if (!json_is_object(obj))
        return wr_field_einval(e, "", "the queue config must be a JSON object");
    json_object_foreach((json_t *)obj, key, v)
    {
        if (!wr_qconfig_field(key))
            return wr_qconfig__unknown(e, "", key);
    }
    for (size_t k = 0; k < wr_qconfig_n_fields; k++) {
        const wr_qfield_t *f = &wr_qconfig_fields[k];
        if ((v = json_object_get(obj, f->key)) && (err = parse_field(e, f, v, c, src)))
            return err;
    }
    return WR_OK;
}

static wr_err_t derive_rate(errbuf_t *e, wr_queue_config_t *c)
{
    double r = (double)c->cap_connections / ((double)c->cap_service_ms / 1000.0) * c->cap_safety;
    if (!(r >= RATE_MIN && r <= RATE_MAX))
        return wr_field_einval(
            e, "capacity", "derives admitPerSecond = %g, which must be >= 0.001 and <= 1000000", r);
    c->admit_per_second = r;
    return WR_OK;
}

static wr_err_t parse_config(const json_t *obj, wr_queue_config_t *out, source_t src, errbuf_t *e)
{
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    wr_err_t err = apply_fields(e, obj, &c, src);
    if (err)
        return err;
    if (!json_object_get(obj, "admitPerSecond")) {
        if (c.has_capacity) {
            if ((err = derive_rate(e, &c)))
                return err;
        } else if (c.has_autotune) {
            /* autotune alone: the rate starts from its min */
            c.admit_per_second = c.autotune_min > RATE_MIN ? c.autotune_min : RATE_MIN;
        } else {
            return wr_field_einval(e, "admitPerSecond",
                                   "is required unless capacity or autotune is given "
                                   "(number >= 0.001 and <= 1000000)");
        }
    }
    if (!json_object_get(obj, "failOpenPerSecond"))
        c.fail_open_per_second = c.admit_per_second;
    c.stock_set = src == FROM_API; /* a PUT sets what is left (null: no limit) */
    *out = c;
    return WR_OK;
}

wr_err_t wr_qconfig_parse(const json_t *obj, wr_queue_config_t *out, char *field, size_t field_len,
                          char *msg, size_t msg_len)
{
    errbuf_t e = sink(field, field_len, msg, msg_len);
    return parse_config(obj, out, FROM_API, &e);
}

wr_err_t wr_qconfig_parse_stored(const json_t *obj, wr_queue_config_t *out, char *field,
                                 size_t field_len, char *msg, size_t msg_len)
{
    errbuf_t e = sink(field, field_len, msg, msg_len);
    return parse_config(obj, out, FROM_STORE, &e);
}

wr_err_t wr_qconfig_patch(const wr_queue_config_t *base, const json_t *obj, wr_queue_config_t *out,
                          char *field, size_t field_len, char *msg, size_t msg_len)
{
    errbuf_t e = sink(field, field_len, msg, msg_len);
    wr_queue_config_t c = *base;
    wr_err_t err = apply_fields(&e, obj, &c, FROM_API);
    if (err)
        return err;
    bool rate_given = json_object_get(obj, "admitPerSecond") != NULL;
    const json_t *cap = json_object_get(obj, "capacity");
    if (cap && !json_is_null(cap) && !rate_given && (err = derive_rate(&e, &c)))
        return err;
    if (!(c.admit_per_second >= RATE_MIN && c.admit_per_second <= RATE_MAX))
        return wr_field_einval(&e, "admitPerSecond",
                               "is required (number >= 0.001 and <= 1000000)");
    /* failOpenPerSecond defaults to the rate: when it still equals the old
     * rate and the PATCH changes the rate without naming it, it follows. */
    if (!json_object_get(obj, "failOpenPerSecond") &&
        c.admit_per_second != base->admit_per_second &&
        base->fail_open_per_second == base->admit_per_second)
        c.fail_open_per_second = c.admit_per_second;
    c.stock_set = json_object_get(obj, "stock") != NULL;
    *out = c;
    return WR_OK;
}

wr_err_t wr_qconfig_check_fields(const json_t *obj, char *field, size_t field_len, char *msg,
                                 size_t msg_len)
{
    errbuf_t e = sink(field, field_len, msg, msg_len);
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    /* a stand-in key, so that "inviteKey":"set" (keep the stored one) is
     * judged as the PATCH will judge it against a queue that has one */
    memset(c.invite_key, 'k', WR_INVITE_KEY_MAX);
    c.invite_key_len = WR_INVITE_KEY_MAX;
    /* and a stand-in captcha secret, for "captcha": {..., "secret": "set"} */
    c.captcha.set = true;
    memset(c.captcha.secret, 's', WR_CAPTCHA_SECRET_MAX);
    /* and any bypass rule's secret, for {"name":..., "secret": "set"} */
    c.bypass.any_secret = true;
    return apply_fields(&e, obj, &c, FROM_API);
}

wr_err_t wr_qconfig_check_available(const wr_queue_config_t *cfg, char *field, size_t field_len,
                                    char *msg, size_t msg_len)
{
    errbuf_t e = sink(field, field_len, msg, msg_len);
    (void)e;
    (void)cfg; /* every field is served; a store that lacks groups says so (wr_store_has_groups) */
    return WR_OK;
}

int wr_qconfig_group_index(const wr_queue_config_t *cfg, const char *name, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < cfg->n_groups && i < WR_GROUPS_MAX; i++)
        if (strnlen(cfg->groups[i], WR_GROUP_NAME_MAX + 1) == len &&
            memcmp(cfg->groups[i], name, len) == 0)
            return (int)i + 1;
    return -1;
}

/* ----------------------------------------------------------- rendering */

/* f's value as JSON: *out (NULL = left out); false on allocation failure. */
static bool render_field(const wr_qfield_t *f, const wr_queue_config_t *c, bool secrets,
                         json_t **out)
{
    int64_t i;
    *out = NULL;
    switch (f->kind) {
    case WR_QF_BOOL:
        *out = json_boolean(bool_of(c, f));
        break;
    case WR_QF_INT:
        i = int_of(c, f);
        *out = (f->flags & WR_QF_NULLABLE) && i < 0 ? json_null() : json_integer((json_int_t)i);
        break;
    case WR_QF_NUMBER:
        *out = wr_qconfig_number_json(double_of(c, f));
        break;
    case WR_QF_STRING: {
        const char *s = cmember_of(c, f);
        *out = json_stringn(s, strnlen(s, f->size - 1));
        break;
    }
    case WR_QF_ENUM:
        *out = json_string(enum_name(f, int_of(c, f)));
        break;
    case WR_QF_CUSTOM:
        return f->render(c, secrets, out);
    }
    return *out != NULL;
}

static json_t *render(const wr_queue_config_t *cfg, bool show_secrets)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    for (size_t k = 0; k < wr_qconfig_n_fields; k++) {
        const wr_qfield_t *f = &wr_qconfig_fields[k];
        json_t *v;
        if (!render_field(f, cfg, show_secrets, &v) ||
            (v && json_object_set_new(o, f->key, v) != 0)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *wr_qconfig_to_json(const wr_queue_config_t *cfg)
{
    return render(cfg, true);
}

json_t *wr_qconfig_to_public_json(const wr_queue_config_t *cfg)
{
    return render(cfg, false);
}

int wr_qconfig_store_value(const wr_qfield_t *f, const wr_queue_config_t *cfg, char *buf,
                           size_t len)
{
    int n = -1;
    int64_t i;
    if (!f->store || !buf || len == 0)
        return -1;
    switch (f->kind) {
    case WR_QF_BOOL:
        n = snprintf(buf, len, "%s", bool_of(cfg, f) ? "1" : "0");
        break;
    case WR_QF_INT:
        i = int_of(cfg, f);
        if ((f->flags & WR_QF_NULLABLE) && i < 0)
            n = snprintf(buf, len, "%s", "");
        else
            n = snprintf(buf, len, "%" PRId64, i);
        break;
    case WR_QF_NUMBER:
        n = snprintf(buf, len, "%.17g", double_of(cfg, f));
        break;
    case WR_QF_STRING: {
        const char *s = cmember_of(cfg, f);
        n = snprintf(buf, len, "%.*s", (int)strnlen(s, f->size - 1), s);
        break;
    }
    case WR_QF_ENUM:
        n = snprintf(buf, len, "%s", enum_name(f, int_of(cfg, f)));
        break;
    case WR_QF_CUSTOM:
        if (!f->store_value)
            return -1;
        n = f->store_value(cfg, buf, len);
        break;
    }
    return n >= 0 && (size_t)n < len ? n : -1;
}

const char *wr_qconfig_fail_policy_name(wr_fail_policy_t p)
{
    return WR_NAMES_GET(fail_policies, p, "limited"); /* its NULL end too */
}
