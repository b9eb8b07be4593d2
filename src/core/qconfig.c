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
 * wr_qconfig_to_json renders every field such that parse(to_json(c)) == c.
 * Nothing here allocates except the JSON rendering (caller owns the result).
 */
#include "core/qconfig.h"

#include <inttypes.h>
#include <math.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define RATE_MAX 1000000.0
#define RATE_MIN 0.001 /* one admission per ~17 minutes: below that, ETAs are absurd */

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
static wr_err_t get_int(errbuf_t *e, const json_t *v, const char *field, long long min,
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
static wr_err_t get_number(errbuf_t *e, const json_t *v, const char *field, const char *rule,
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
static wr_err_t unknown(errbuf_t *e, const char *prefix, const char *key)
{
    char path[WR_FIELD_MAX + 1];
    snprintf(path, sizeof(path), "%s%s", prefix, key);
    return wr_field_einval(e, path, "unknown field");
}

/* Rejects the first key of obj not in keys; prefix is prepended to the field. */
static wr_err_t reject_unknown(errbuf_t *e, const json_t *obj, const char *prefix,
                               const char *const *keys, size_t n)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        if (!known(key, keys, n))
            return unknown(e, prefix, key);
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
static void set(json_t *obj, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(obj, key, v) != 0)
        *ok = false;
}

/* ------------------------------------------------------- CUSTOM fields */

/* A render hook's end: *out = v when v was built whole (ok), else frees it. */
static bool finish(json_t *v, bool ok, json_t **out)
{
    if (!v || !ok) {
        json_decref(v);
        return false;
    }
    *out = v;
    return true;
}

static wr_err_t parse_capacity(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"connections", "serviceMs", "safety"};
    if (json_is_null(v)) { /* removes the capacity object; the rate stays */
        c->has_capacity = false;
        c->cap_connections = 0;
        c->cap_service_ms = 0;
        c->cap_safety = 0.875;
        return WR_OK;
    }
    if (!json_is_object(v))
        return wr_field_einval(e, "capacity", "must be an object {connections, serviceMs, safety}");
    wr_err_t err = reject_unknown(e, v, "capacity.", keys, 3);
    if (err)
        return err;
    long long conn = 0, svc = 0;
    const json_t *x = json_object_get(v, "connections");
    if (!x)
        return wr_field_einval(e, "capacity.connections",
                               "is required (integer from 1 to 1000000)");
    if ((err = get_int(e, x, "capacity.connections", 1, 1000000, &conn)))
        return err;
    x = json_object_get(v, "serviceMs");
    if (!x)
        return wr_field_einval(e, "capacity.serviceMs", "is required (integer from 1 to 3600000)");
    if ((err = get_int(e, x, "capacity.serviceMs", 1, 3600000, &svc)))
        return err;
    double safety = 0.875;
    x = json_object_get(v, "safety");
    if (x) {
        if ((err = get_number(e, x, "capacity.safety", "must be a number in (0, 1]", &safety)))
            return err;
        if (!(safety > 0 && safety <= 1))
            return wr_field_einval(e, "capacity.safety", "must be a number in (0, 1]");
    }
    c->has_capacity = true;
    c->cap_connections = (uint32_t)conn;
    c->cap_service_ms = (uint32_t)svc;
    c->cap_safety = safety;
    return WR_OK;
}

static bool render_capacity(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    *out = NULL;
    if (!c->has_capacity)
        return true; /* left out */
    bool ok = true;
    json_t *cap = json_object();
    if (!cap)
        return false;
    set(cap, "connections", json_integer(c->cap_connections), &ok);
    set(cap, "serviceMs", json_integer(c->cap_service_ms), &ok);
    set(cap, "safety", wr_qconfig_number_json(c->cap_safety), &ok);
    return finish(cap, ok, out);
}

static void reset_capacity(wr_queue_config_t *c)
{
    c->cap_safety = 0.875;
}

static wr_err_t parse_poll_bands(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"upTo", "ms"};
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > WR_POLL_BANDS_MAX)
        return wr_field_einval(e, "pollBands", "must be an array of 1 to %d bands {upTo, ms}",
                               WR_POLL_BANDS_MAX);
    size_t n = json_array_size(v);
    wr_poll_band_t bands[WR_POLL_BANDS_MAX];
    long long prev = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *b = json_array_get(v, i);
        char path[WR_FIELD_MAX + 1];
        snprintf(path, sizeof(path), "pollBands[%zu]", i);
        if (!json_is_object(b))
            return wr_field_einval(e, path, "must be an object {upTo, ms}");
        char prefix[WR_FIELD_MAX + 1];
        snprintf(prefix, sizeof(prefix), "pollBands[%zu].", i);
        wr_err_t err = reject_unknown(e, b, prefix, keys, 2);
        if (err)
            return err;

        long long up_to = 0, ms = 0;
        const json_t *x = json_object_get(b, "upTo");
        snprintf(path, sizeof(path), "pollBands[%zu].upTo", i);
        if (x) {
            if ((err = get_int(e, x, path, 1, INT64_MAX, &up_to)))
                return err;
            if (up_to <= prev)
                return wr_field_einval(
                    e, path, "must be greater than the previous band's upTo (%lld)", prev);
            prev = up_to;
        } else if (i + 1 < n) {
            return wr_field_einval(e, path, "is required on every band but the last");
        }
        x = json_object_get(b, "ms");
        snprintf(path, sizeof(path), "pollBands[%zu].ms", i);
        if (!x)
            return wr_field_einval(e, path, "is required (integer from 250 to 600000)");
        if ((err = get_int(e, x, path, 250, 600000, &ms)))
            return err;
        bands[i].up_to = (uint64_t)up_to;
        bands[i].ms = (uint32_t)ms;
    }
    memcpy(c->poll_bands, bands, n * sizeof(bands[0]));
    for (size_t i = n; i < WR_POLL_BANDS_MAX; i++)
        c->poll_bands[i] = (wr_poll_band_t){0, 0};
    c->n_poll_bands = n;
    return WR_OK;
}

static bool render_poll_bands(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    bool ok = true;
    json_t *bands = json_array();
    size_t n = c->n_poll_bands <= WR_POLL_BANDS_MAX ? c->n_poll_bands : WR_POLL_BANDS_MAX;
    for (size_t i = 0; bands && i < n; i++) {
        json_t *b = json_object();
        if (b && c->poll_bands[i].up_to > 0)
            set(b, "upTo", json_integer((json_int_t)c->poll_bands[i].up_to), &ok);
        if (b)
            set(b, "ms", json_integer(c->poll_bands[i].ms), &ok);
        if (!b || json_array_append_new(bands, b) != 0)
            ok = false;
    }
    return finish(bands, ok, out);
}

static void reset_poll_bands(wr_queue_config_t *c)
{
    c->poll_bands[0] = (wr_poll_band_t){.up_to = 100, .ms = 1000};
    c->poll_bands[1] = (wr_poll_band_t){.up_to = 1000, .ms = 3000};
    c->poll_bands[2] = (wr_poll_band_t){.up_to = 0, .ms = WR_POLL_LAST_BAND_MS};
    c->n_poll_bands = 3;
}

/* targetUrl (a STRING row): "", an absolute http(s) URL, or a path. */
static bool target_url_ok(const char *s, size_t len)
{
    if (len == 0)
        return true;
    bool ok = false;
    if (strncmp(s, "https://", 8) == 0)
        ok = len > 8;
    else if (strncmp(s, "http://", 7) == 0)
        ok = len > 7;
    else if (s[0] == '/')
        ok = len == 1 || (s[1] != '/' && s[1] != '\\');
    /* Bytes <= 0x20 include NUL (an embedded NUL would truncate the URL),
     * controls and space; a backslash is rejected because browsers read
     * "/\host" as the protocol-relative "//host" (an open redirect). */
    for (size_t i = 0; ok && i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= 0x20 || ch == 0x7f || ch == '\\' || ch == '"' || ch == '<' || ch == '>')
            ok = false;
    }
    return ok;
}

static wr_err_t parse_invite_key(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    if (json_is_null(v)) {
        memset(c->invite_key, 0, sizeof(c->invite_key));
        c->invite_key_len = 0;
        return WR_OK;
    }
    if (!json_is_string(v))
        return wr_field_einval(e, "inviteKey", "must be a string of %d to %d bytes, or null",
                               WR_INVITE_KEY_MIN, WR_INVITE_KEY_MAX);
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len == 3 && memcmp(s, "set", 3) == 0) {
        if (c->invite_key_len > 0)
            return WR_OK; /* what GET shows, sent back: keep the key */
        return wr_field_einval(e, "inviteKey",
                               "is \"set\" but this queue has no invite key to keep: give a key "
                               "of %d to %d bytes, or null",
                               WR_INVITE_KEY_MIN, WR_INVITE_KEY_MAX);
    }
    if (len < WR_INVITE_KEY_MIN || len > WR_INVITE_KEY_MAX || memchr(s, '\0', len))
        return wr_field_einval(e, "inviteKey",
                               "must be a string of %d to %d bytes (no NUL), or null",
                               WR_INVITE_KEY_MIN, WR_INVITE_KEY_MAX);
    memset(c->invite_key, 0, sizeof(c->invite_key));
    memcpy(c->invite_key, s, len);
    c->invite_key_len = len;
    return WR_OK;
}

/* Write-only: the key itself only in the stores' form (secrets). */
static bool render_invite_key(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    size_t klen = c->invite_key_len <= WR_INVITE_KEY_MAX ? c->invite_key_len : 0;
    if (klen == 0)
        *out = json_null();
    else
        *out = secrets ? json_stringn(c->invite_key, klen) : json_string("set");
    return *out != NULL;
}

static wr_err_t parse_return_origins(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char rule[] = "must be an array of at most %d origins "
                               "(\"scheme://host[:port]\", http or https, no path)";
    if (!json_is_array(v) || json_array_size(v) > WR_RETURN_ORIGINS_MAX)
        return wr_field_einval(e, "returnOrigins", rule, WR_RETURN_ORIGINS_MAX);
    char got[WR_RETURN_ORIGINS_MAX][WR_ORIGIN_MAX + 1];
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(v, i);
        if (!json_is_string(x) ||
            !wr_origin_parse(json_string_value(x), json_string_length(x), got[i]))
            return wr_field_einval(e, "returnOrigins", rule, WR_RETURN_ORIGINS_MAX);
    }
    memset(c->return_origins, 0, sizeof(c->return_origins));
    memcpy(c->return_origins, got, n * sizeof(got[0]));
    c->n_return_origins = n;
    return WR_OK;
}

static bool render_return_origins(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    bool ok = true;
    json_t *origins = json_array();
    size_t n = c->n_return_origins <= WR_RETURN_ORIGINS_MAX ? c->n_return_origins : 0;
    for (size_t i = 0; origins && i < n; i++) {
        json_t *x =
            json_stringn(c->return_origins[i], strnlen(c->return_origins[i], WR_ORIGIN_MAX));
        if (!x || json_array_append_new(origins, x) != 0)
            ok = false;
    }
    return finish(origins, ok, out);
}

/* pollMaxMs: 0 (bands only) or 1000..600000, default 60000 (API 1.2,
 * "Fewer polls from far back"): a range with a hole, so a CUSTOM row. */
static wr_err_t parse_poll_max_ms(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    long long i = json_is_integer(v) ? (long long)json_integer_value(v) : -1;
    if (!json_is_integer(v) || (i != 0 && (i < 1000 || i > 600000)))
        return wr_field_einval(e, "pollMaxMs", "must be 0 or an integer from 1000 to 600000");
    c->poll_max_ms = (uint32_t)i;
    return WR_OK;
}

static bool render_poll_max_ms(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    *out = json_integer(c->poll_max_ms);
    return *out != NULL;
}

static void reset_poll_max_ms(wr_queue_config_t *c)
{
    c->poll_max_ms = 60000;
}

/* page (API 1.2, "The queue page carries the shop"): null or an object
 * of optional members, each checked by its own rule and named in an error
 * as "page.<member>". A given object replaces the whole page (PATCH too). */
const char *const wr_page_langs[] = {"en", "ko", "ja", "zh-Hans", "zh-Hant", "es", "fr", "de",
                                     "pt", "it", "vi", "th",      "id",      "ar", NULL};

/* Code points of valid UTF-8 s (len bytes), or -1 when it is not UTF-8
 * (overlong forms, surrogates and values past U+10FFFF are not) or holds a
 * control character (C0, DEL, C1). */
static long utf8_chars(const char *s, size_t len)
{
    long n = 0;
    for (size_t i = 0; i < len; n++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return -1;
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (k == 0 || i + k > len)
            return -1;
        uint32_t cp = k == 1 ? c : k == 2 ? (c & 0x1fu) : k == 3 ? (c & 0x0fu) : (c & 0x07u);
        for (size_t j = 1; j < k; j++) {
            unsigned char t = (unsigned char)s[i + j];
            if ((t & 0xc0) != 0x80)
                return -1;
            cp = (cp << 6) | (t & 0x3fu);
        }
        if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
            return -1; /* (U+0080..U+009F: the C1 controls, e.g. NEL) */
        i += k;
    }
    return n;
}

/* page.logoUrl: an https:// URL with a host, or a path starting with
 * exactly one "/"; printable ASCII without space, quotes, <, > or \. */
static bool logo_url_ok(const char *s, size_t len)
{
    bool ok = false;
    char origin[WR_ORIGIN_MAX + 1];
    if (len > 8 && strncasecmp(s, "https://", 8) == 0) /* its origin goes in the page's CSP */
        ok = len <= WR_PAGE_LOGO_MAX && s[len] == '\0' && wr_origin_of_url(s, origin);
    else if (len >= 1 && s[0] == '/')
        ok = len == 1 || (s[1] != '/' && s[1] != '\\');
    for (size_t i = 0; ok && i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= 0x20 || ch >= 0x7f || ch == '\\' || ch == '"' || ch == '\'' || ch == '<' ||
            ch == '>')
            ok = false;
    }
    return ok;
}

static bool accent_ok(const char *s, size_t len)
{
    if (len != 7 || s[0] != '#')
        return false;
    for (size_t i = 1; i < 7; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

static bool lang_ok(const char *s, size_t len)
{
    for (size_t i = 0; wr_page_langs[i]; i++)
        if (strlen(wr_page_langs[i]) == len && memcmp(wr_page_langs[i], s, len) == 0)
            return true;
    return false;
}

/* One member of page: absent or null leaves out ("" in out, cap bytes). */
static wr_err_t page_member(errbuf_t *e, const json_t *obj, const char *key, char *out, size_t cap,
                            wr_err_t (*check)(errbuf_t *, const char *, const char *, size_t))
{
    const json_t *v = json_object_get(obj, key);
    out[0] = '\0';
    if (!v || json_is_null(v))
        return WR_OK;
    char path[WR_FIELD_MAX];
    snprintf(path, sizeof(path), "page.%s", key);
    const char *s = json_string_value(v);
    size_t len = s ? json_string_length(v) : 0;
    wr_err_t err = s ? check(e, path, s, len) : check(e, path, NULL, 0);
    if (err)
        return err;
    if (len >= cap) /* the checks bound every member below its buffer */
        return wr_field_einval(e, path, "is too long");
    memcpy(out, s, len);
    out[len] = '\0';
    return WR_OK;
}

static wr_err_t check_text(errbuf_t *e, const char *path, const char *s, size_t len)
{
    long n = s ? utf8_chars(s, len) : -1;
    if (n < 0 || n > WR_PAGE_TEXT_MAX)
        return wr_field_einval(e, path,
                               "must be a string of at most %d characters (no control characters), "
                               "or null",
                               WR_PAGE_TEXT_MAX);
    return WR_OK;
}

static wr_err_t check_logo(errbuf_t *e, const char *path, const char *s, size_t len)
{
    if (!s || len > WR_PAGE_LOGO_MAX || !logo_url_ok(s, len))
        return wr_field_einval(
            e, path,
            "must be an https:// URL or a path starting with one \"/\" (at most %d "
            "characters, no spaces, quotes or control characters), or null",
            WR_PAGE_LOGO_MAX);
    return WR_OK;
}

static wr_err_t check_accent(errbuf_t *e, const char *path, const char *s, size_t len)
{
    if (!s || !accent_ok(s, len))
        return wr_field_einval(e, path, "must be a colour \"#RRGGBB\", or null");
    return WR_OK;
}

static wr_err_t check_lang(errbuf_t *e, const char *path, const char *s, size_t len)
{
    if (!s || !lang_ok(s, len))
        return wr_field_einval(
            e, path,
            "must be one of \"en\", \"ko\", \"ja\", \"zh-Hans\", \"zh-Hant\", \"es\", "
            "\"fr\", \"de\", \"pt\", \"it\", \"vi\", \"th\", \"id\", \"ar\", or null");
    return WR_OK;
}

static wr_err_t parse_page(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"title", "brand", "logoUrl", "accentColor", "lang"};
    wr_page_config_t p;
    memset(&p, 0, sizeof(p));
    if (json_is_null(v)) {
        c->page = p;
        return WR_OK;
    }
    if (!json_is_object(v))
        return wr_field_einval(
            e, "page", "must be null or an object {title, brand, logoUrl, accentColor, lang}");
    wr_err_t err = reject_unknown(e, v, "page.", keys, 5);
    if (!err)
        err = page_member(e, v, "title", p.title, sizeof(p.title), check_text);
    if (!err)
        err = page_member(e, v, "brand", p.brand, sizeof(p.brand), check_text);
    if (!err)
        err = page_member(e, v, "logoUrl", p.logo_url, sizeof(p.logo_url), check_logo);
    if (!err)
        err = page_member(e, v, "accentColor", p.accent, sizeof(p.accent), check_accent);
    if (!err)
        err = page_member(e, v, "lang", p.lang, sizeof(p.lang), check_lang);
    if (err)
        return err;
    p.set = true;
    c->page = p;
    return WR_OK;
}

/* null, or the object with the members that are set. */
static bool render_page(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    const wr_page_config_t *p = &c->page;
    if (!p->set) {
        *out = json_null();
        return *out != NULL;
    }
    const struct {
        const char *key;
        const char *s;
        size_t cap;
    } m[] = {
        {"title", p->title, sizeof(p->title)},
        {"brand", p->brand, sizeof(p->brand)},
        {"logoUrl", p->logo_url, sizeof(p->logo_url)},
        {"accentColor", p->accent, sizeof(p->accent)},
        {"lang", p->lang, sizeof(p->lang)},
    };
    bool ok = true;
    json_t *o = json_object();
    for (size_t i = 0; o && i < sizeof(m) / sizeof(m[0]); i++) {
        size_t len = strnlen(m[i].s, m[i].cap - 1);
        if (len > 0)
            set(o, m[i].key, json_stringn(m[i].s, len), &ok);
    }
    return finish(o, ok, out);
}

/* notice: a string of at most WR_NOTICE_MAX_CP code points (jansson
 * hands out valid UTF-8: every byte that is not a continuation byte
 * starts one), no NUL, or null; "" is no notice (rendered null). */
static wr_err_t parse_notice(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    if (json_is_null(v)) {
        c->notice[0] = '\0';
        return WR_OK;
    }
    const char *s = json_string_value(v);
    size_t len = s ? json_string_length(v) : 0, cps = 0;
    for (size_t i = 0; s && i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            cps++;
    if (!s || cps > WR_NOTICE_MAX_CP || len > WR_NOTICE_MAX || memchr(s, '\0', len))
        return wr_field_einval(e, "notice",
                               "must be a string of at most %d characters (no NUL), or null",
                               WR_NOTICE_MAX_CP);
    memcpy(c->notice, s, len);
    c->notice[len] = '\0';
    return WR_OK;
}

static bool render_notice(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    size_t len = strnlen(c->notice, WR_NOTICE_MAX);
    *out = len ? json_stringn(c->notice, len) : json_null();
    return *out != NULL;
}

/* autotune: null or {minPerSecond, maxPerSecond, targetMs}, all required,
 * 0 < min <= max <= 1e6, targetMs 1..60000 (API 1.2, "The line follows the
 * shop"). Its store value "min:max:targetMs" ("" for null) is what the
 * Redis admission script clamps the rate in use with. */
static wr_err_t parse_autotune(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"minPerSecond", "maxPerSecond", "targetMs"};
    if (json_is_null(v)) {
        c->has_autotune = false;
        c->autotune_min = c->autotune_max = 0;
        c->autotune_target_ms = 0;
        return WR_OK;
    }
    if (!json_is_object(v))
        return wr_field_einval(e, "autotune",
                               "must be null or an object {minPerSecond, maxPerSecond, "
                               "targetMs}");
    wr_err_t err = reject_unknown(e, v, "autotune.", keys, 3);
    if (err)
        return err;
    double lo = 0, hi = 0;
    long long t = 0;
    const json_t *x = json_object_get(v, "minPerSecond");
    if (!x)
        return wr_field_einval(e, "autotune.minPerSecond",
                               "is required (number > 0 and <= 1000000)");
    if ((err =
             get_number(e, x, "autotune.minPerSecond", "must be a number > 0 and <= 1000000", &lo)))
        return err;
    if (!(lo > 0 && lo <= RATE_MAX))
        return wr_field_einval(e, "autotune.minPerSecond", "must be a number > 0 and <= 1000000");
    x = json_object_get(v, "maxPerSecond");
    if (!x)
        return wr_field_einval(e, "autotune.maxPerSecond",
                               "is required (number >= minPerSecond and <= 1000000)");
    if ((err = get_number(e, x, "autotune.maxPerSecond",
                          "must be a number >= minPerSecond and <= 1000000", &hi)))
        return err;
    if (!(hi >= lo && hi <= RATE_MAX))
        return wr_field_einval(e, "autotune.maxPerSecond",
                               "must be a number >= minPerSecond and <= 1000000");
    x = json_object_get(v, "targetMs");
    if (!x)
        return wr_field_einval(e, "autotune.targetMs", "is required (integer from 1 to 60000)");
    if ((err = get_int(e, x, "autotune.targetMs", 1, 60000, &t)))
        return err;
    c->has_autotune = true;
    c->autotune_min = lo;
    c->autotune_max = hi;
    c->autotune_target_ms = (uint32_t)t;
    return WR_OK;
}

static bool render_autotune(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    if (!c->has_autotune) {
        *out = json_null();
        return *out != NULL;
    }
    bool ok = true;
    json_t *o = json_object();
    if (!o)
        return false;
    set(o, "minPerSecond", wr_qconfig_number_json(c->autotune_min), &ok);
    set(o, "maxPerSecond", wr_qconfig_number_json(c->autotune_max), &ok);
    set(o, "targetMs", json_integer(c->autotune_target_ms), &ok);
    return finish(o, ok, out);
}

static int store_value_autotune(const wr_queue_config_t *c, char *buf, size_t len)
{
    if (!c->has_autotune)
        return snprintf(buf, len, "%s", "");
    return snprintf(buf, len, "%.17g:%.17g:%" PRIu32, c->autotune_min, c->autotune_max,
                    c->autotune_target_ms);
}

/* captcha (API 1.2, "A place costs work"): null or the widget object,
 * parsed and rendered by core/captcha.c (which names the member in its
 * errors: "captcha.siteKey"); a given object replaces the whole one, and
 * "secret": "set" keeps the secret the base has. The secret is rendered
 * only in the stores' form. */
static wr_err_t parse_captcha(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    char field[WR_FIELD_MAX] = "captcha", msg[256] = "";
    if (wr_captcha_parse(v, &c->captcha, field, sizeof field, msg, sizeof msg) != WR_OK)
        return wr_field_einval(e, field, "%s", msg);
    return WR_OK;
}

static bool render_captcha(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    *out = wr_captcha_to_json(&c->captcha, secrets);
    return *out != NULL;
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
    .kind = WR_QF_CUSTOM, .off = offsetof(wr_queue_config_t, m), .parse = parse_##name,            \
    .render = render_##name
#define RESET(name) .reset = reset_##name

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
     STRING_FIELD(target_url, target_url_ok,
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
    {"notice", CUSTOM_FIELD(notice, notice), .example = "\"Sold out in size 42, sorry\""},
    {"challengeBits", INT_FIELD(challenge_bits, 0, 32), .idef = 0, .example = "20"},
    {"autotune", CUSTOM_FIELD(has_autotune, autotune), .store = "autotune",
     .store_value = store_value_autotune,
     .example = "{\"minPerSecond\":10,\"maxPerSecond\":350,\"targetMs\":400}"},
    {"page", CUSTOM_FIELD(page, page),
     .example = "{\"title\":\"Launch day\",\"brand\":\"Shop \\u00e9\",\"logoUrl\":\"/logo.svg\","
                "\"accentColor\":\"#FFD400\",\"lang\":\"zh-Hant\"}"},
    {"captcha", CUSTOM_FIELD(captcha, captcha),
     .example = "{\"provider\":\"hcaptcha\",\"siteKey\":\"10000000-ffff-ffff-ffff-000000000001\","
                "\"secret\":\"0x0000000000000000000000000000000000000000\","
                "\"verifyUrl\":\"https://api.hcaptcha.com/siteverify\",\"fallback\":\"refuse\","
                "\"fallbackBits\":20,\"hostname\":\"shop.example\"}"},
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
        return get_int(e, v, f->key, f->imin, f->imax, out);
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
                 (err = get_int(e, v, f->key, f->imin, f->imax, &i)))
            return err;
        put_int(c, f, i);
        return WR_OK;
    case WR_QF_NUMBER:
        if ((err = get_number(e, v, f->key, f->rule, &d)))
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
            return unknown(e, "", key);
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
    return apply_fields(&e, obj, &c, FROM_API);
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
    return (unsigned)p < 3 ? fail_policies[p] : "limited";
}
