/*
 * qconfig.c - a queue's configuration: defaults, validation, JSON in and out.
 *
 * The config is a plain value (wr_queue_config_t, no pointers), so parsing
 * works on a local copy and only assigns *out after every field validated:
 * on error *out is untouched. PUT starts from the defaults, PATCH from the
 * base; both then run the same per-field validation (apply_fields), which
 * first rejects unknown keys and then checks the known ones in the
 * documented order, so the field named in an error is deterministic.
 *
 * The rate (admitPerSecond) has no default: it is given, or derived from
 * capacity as connections / (serviceMs / 1000) * safety. In a PATCH,
 * giving capacity without admitPerSecond re-derives it; "capacity": null
 * removes the capacity object and keeps the rate. failOpenPerSecond
 * defaults to the rate in a PUT; a PATCH keeps the base value unless given.
 *
 * pollBands: every band but the last must have upTo; the last may have one
 * (positions beyond it still use the last band, see wr_queue_poll_base_ms),
 * and it is kept so GET shows what was PUT.
 *
 * inviteKey is write-only: wr_qconfig_to_json (what the stores keep) has
 * the key, wr_qconfig_to_public_json (what the API answers) has "set" or
 * null. returnOrigins are kept canonical (origin.h), so GET shows
 * "https://shop.example" for "HTTPS://Shop.Example:443".
 *
 * wr_qconfig_to_json renders every field such that parse(to_json(c)) == c.
 * Nothing here allocates except the JSON rendering (caller owns the result).
 */
#include "core/qconfig.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RATE_MAX 1000000.0
#define RATE_MIN 0.001 /* one admission per ~17 minutes: below that, ETAs are absurd */

void wr_qconfig_defaults(wr_queue_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->enabled = true;
    cfg->paused = false;
    cfg->admit_per_second = 0;
    cfg->has_capacity = false;
    cfg->cap_safety = 0.875;
    cfg->tick_ms = 100;
    cfg->max_active = 0;
    cfg->max_queue_size = 100000;
    cfg->token_ttl_seconds = 300;
    cfg->poll_bands[0] = (wr_poll_band_t){.up_to = 100, .ms = 1000};
    cfg->poll_bands[1] = (wr_poll_band_t){.up_to = 1000, .ms = 3000};
    cfg->poll_bands[2] = (wr_poll_band_t){.up_to = 0, .ms = WR_POLL_LAST_BAND_MS};
    cfg->n_poll_bands = 3;
    cfg->poll_jitter = 0.1;
    cfg->fail_policy = WR_FAIL_LIMITED;
    cfg->fail_open_per_second = 0;
    cfg->target_url[0] = '\0';
    cfg->idle_timeout_seconds = 120;
    cfg->away_hold_seconds = 1800;
    cfg->poll_max_ms = 60000;
    cfg->opens_at_ms = WR_OPENS_AT_NONE;
    cfg->pre_queue_shuffle = true;
}

/* Error sink: the caller's field and message buffers. */
typedef struct {
    char *field;
    size_t field_len;
    char *msg;
    size_t msg_len;
} errbuf_t;

__attribute__((format(printf, 3, 4))) static wr_err_t fail(errbuf_t *e, const char *field,
                                                           const char *fmt, ...)
{
    if (e->field && e->field_len > 0) {
        size_t cap = e->field_len < WR_FIELD_MAX ? e->field_len : WR_FIELD_MAX;
        snprintf(e->field, cap, "%s", field);
    }
    if (e->msg && e->msg_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, e->msg_len, fmt, ap);
        va_end(ap);
    }
    return WR_EINVAL;
}

/* An integer field: must be a JSON integer within [min, max]. */
static wr_err_t get_int(errbuf_t *e, const json_t *v, const char *field, long long min,
                        long long max, long long *out)
{
    if (!json_is_integer(v))
        return fail(e, field, "must be an integer from %lld to %lld", min, max);
    long long x = (long long)json_integer_value(v);
    if (x < min || x > max)
        return fail(e, field, "must be an integer from %lld to %lld", min, max);
    *out = x;
    return WR_OK;
}

/* A number field (integer or real), finite. */
static wr_err_t get_number(errbuf_t *e, const json_t *v, const char *field, const char *rule,
                           double *out)
{
    if (!json_is_number(v))
        return fail(e, field, "must be a number %s", rule);
    double x = json_number_value(v);
    if (!isfinite(x))
        return fail(e, field, "must be a number %s", rule);
    *out = x;
    return WR_OK;
}

static wr_err_t get_bool(errbuf_t *e, const json_t *v, const char *field, bool *out)
{
    if (!json_is_boolean(v))
        return fail(e, field, "must be true or false");
    *out = json_is_true(v);
    return WR_OK;
}

static const char *const top_keys[] = {
    "enabled",      "paused",          "admitPerSecond",
    "capacity",     "tickMs",          "maxActive",
    "maxQueueSize", "tokenTtlSeconds", "pollBands",
    "pollJitter",   "failPolicy",      "failOpenPerSecond",
    "targetUrl",    "inviteKey",       "returnOrigins",
    "tokenInQuery", "sessionSeconds",  "idleTimeoutSeconds",
    "opensAt",      "preQueueShuffle", "awayHoldSeconds",
    "pollMaxMs",
};

static bool known(const char *key, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

/* Rejects the first key of obj not in keys; prefix is prepended to the field. */
static wr_err_t reject_unknown(errbuf_t *e, const json_t *obj, const char *prefix,
                               const char *const *keys, size_t n)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        if (!known(key, keys, n)) {
            char path[WR_FIELD_MAX + 1];
            snprintf(path, sizeof(path), "%s%s", prefix, key);
            return fail(e, path, "unknown field");
        }
    }
    return WR_OK;
}

static wr_err_t parse_capacity(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"connections", "serviceMs", "safety"};
    if (!json_is_object(v))
        return fail(e, "capacity", "must be an object {connections, serviceMs, safety}");
    wr_err_t err = reject_unknown(e, v, "capacity.", keys, 3);
    if (err)
        return err;
    long long conn = 0, svc = 0;
    const json_t *x = json_object_get(v, "connections");
    if (!x)
        return fail(e, "capacity.connections", "is required (integer from 1 to 1000000)");
    if ((err = get_int(e, x, "capacity.connections", 1, 1000000, &conn)))
        return err;
    x = json_object_get(v, "serviceMs");
    if (!x)
        return fail(e, "capacity.serviceMs", "is required (integer from 1 to 3600000)");
    if ((err = get_int(e, x, "capacity.serviceMs", 1, 3600000, &svc)))
        return err;
    double safety = 0.875;
    x = json_object_get(v, "safety");
    if (x) {
        if ((err = get_number(e, x, "capacity.safety", "in (0, 1]", &safety)))
            return err;
        if (!(safety > 0 && safety <= 1))
            return fail(e, "capacity.safety", "must be a number in (0, 1]");
    }
    c->has_capacity = true;
    c->cap_connections = (uint32_t)conn;
    c->cap_service_ms = (uint32_t)svc;
    c->cap_safety = safety;
    return WR_OK;
}

static wr_err_t parse_poll_bands(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"upTo", "ms"};
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > WR_POLL_BANDS_MAX)
        return fail(e, "pollBands", "must be an array of 1 to %d bands {upTo, ms}",
                    WR_POLL_BANDS_MAX);
    size_t n = json_array_size(v);
    wr_poll_band_t bands[WR_POLL_BANDS_MAX];
    long long prev = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *b = json_array_get(v, i);
        char path[WR_FIELD_MAX + 1];
        snprintf(path, sizeof(path), "pollBands[%zu]", i);
        if (!json_is_object(b))
            return fail(e, path, "must be an object {upTo, ms}");
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
                return fail(e, path, "must be greater than the previous band's upTo (%lld)", prev);
            prev = up_to;
        } else if (i + 1 < n) {
            return fail(e, path, "is required on every band but the last");
        }
        x = json_object_get(b, "ms");
        snprintf(path, sizeof(path), "pollBands[%zu].ms", i);
        if (!x)
            return fail(e, path, "is required (integer from 250 to 600000)");
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

static wr_err_t parse_target_url(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char rule[] = "must be \"\", an absolute http(s):// URL or a path starting "
                               "with one \"/\", without spaces or control characters";
    if (!json_is_string(v))
        return fail(e, "targetUrl", "%s", rule);
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len > WR_TARGET_URL_MAX)
        return fail(e, "targetUrl", "must be at most %d bytes", WR_TARGET_URL_MAX);
    if (len > 0) {
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
        if (!ok)
            return fail(e, "targetUrl", "%s", rule);
    }
    memcpy(c->target_url, s, len);
    c->target_url[len] = '\0';
    return WR_OK;
}

static wr_err_t parse_invite_key(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    if (json_is_null(v)) {
        memset(c->invite_key, 0, sizeof(c->invite_key));
        c->invite_key_len = 0;
        return WR_OK;
    }
    if (!json_is_string(v))
        return fail(e, "inviteKey", "must be a string of %d to %d bytes, or null",
                    WR_INVITE_KEY_MIN, WR_INVITE_KEY_MAX);
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len == 3 && memcmp(s, "set", 3) == 0 && c->invite_key_len > 0)
        return WR_OK; /* what GET shows, sent back: keep the key */
    if (len < WR_INVITE_KEY_MIN || len > WR_INVITE_KEY_MAX || memchr(s, '\0', len))
        return fail(e, "inviteKey", "must be a string of %d to %d bytes (no NUL), or null",
                    WR_INVITE_KEY_MIN, WR_INVITE_KEY_MAX);
    memset(c->invite_key, 0, sizeof(c->invite_key));
    memcpy(c->invite_key, s, len);
    c->invite_key_len = len;
    return WR_OK;
}

static wr_err_t parse_return_origins(errbuf_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char rule[] = "must be an array of at most %d origins "
                               "(\"scheme://host[:port]\", http or https, no path)";
    if (!json_is_array(v) || json_array_size(v) > WR_RETURN_ORIGINS_MAX)
        return fail(e, "returnOrigins", rule, WR_RETURN_ORIGINS_MAX);
    char got[WR_RETURN_ORIGINS_MAX][WR_ORIGIN_MAX + 1];
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(v, i);
        if (!json_is_string(x) ||
            !wr_origin_parse(json_string_value(x), json_string_length(x), got[i]))
            return fail(e, "returnOrigins", rule, WR_RETURN_ORIGINS_MAX);
    }
    memset(c->return_origins, 0, sizeof(c->return_origins));
    memcpy(c->return_origins, got, n * sizeof(got[0]));
    c->n_return_origins = n;
    return WR_OK;
}

/*
 * Validates obj's fields onto c (a working copy). Sets *rate_given and
 * *fail_open_given when those fields were given, *cap_given when a capacity
 * object was given ("capacity": null clears it and is not "given").
 */
static wr_err_t apply_fields(errbuf_t *e, const json_t *obj, wr_queue_config_t *c, bool *rate_given,
                             bool *cap_given, bool *fail_open_given)
{
    wr_err_t err;
    const json_t *v;
    long long i = 0;
    double d = 0;

    *rate_given = *cap_given = *fail_open_given = false;
    if (!json_is_object(obj))
        return fail(e, "", "the queue config must be a JSON object");
    if ((err = reject_unknown(e, obj, "", top_keys, sizeof(top_keys) / sizeof(top_keys[0]))))
        return err;

    if ((v = json_object_get(obj, "enabled")) && (err = get_bool(e, v, "enabled", &c->enabled)))
        return err;
    if ((v = json_object_get(obj, "paused")) && (err = get_bool(e, v, "paused", &c->paused)))
        return err;
    if ((v = json_object_get(obj, "admitPerSecond"))) {
        if ((err = get_number(e, v, "admitPerSecond", ">= 0.001 and <= 1000000", &d)))
            return err;
        if (!(d >= RATE_MIN && d <= RATE_MAX))
            return fail(e, "admitPerSecond", "must be a number >= 0.001 and <= 1000000");
        c->admit_per_second = d;
        *rate_given = true;
    }
    if ((v = json_object_get(obj, "capacity"))) {
        if (json_is_null(v)) {
            c->has_capacity = false;
            c->cap_connections = 0;
            c->cap_service_ms = 0;
            c->cap_safety = 0.875;
        } else {
            if ((err = parse_capacity(e, v, c)))
                return err;
            *cap_given = true;
        }
    }
    if ((v = json_object_get(obj, "tickMs"))) {
        if ((err = get_int(e, v, "tickMs", 10, 10000, &i)))
            return err;
        c->tick_ms = (uint32_t)i;
    }
    if ((v = json_object_get(obj, "maxActive"))) {
        if ((err = get_int(e, v, "maxActive", 0, INT64_MAX, &i)))
            return err;
        c->max_active = (uint64_t)i;
    }
    if ((v = json_object_get(obj, "maxQueueSize"))) {
        if ((err = get_int(e, v, "maxQueueSize", 0, INT64_MAX, &i)))
            return err;
        c->max_queue_size = (uint64_t)i;
    }
    if ((v = json_object_get(obj, "tokenTtlSeconds"))) {
        if ((err = get_int(e, v, "tokenTtlSeconds", 1, 86400, &i)))
            return err;
        c->token_ttl_seconds = (uint32_t)i;
    }
    if ((v = json_object_get(obj, "sessionSeconds"))) {
        if ((err = get_int(e, v, "sessionSeconds", 0, 86400, &i)))
            return err;
        c->session_seconds = (uint32_t)i;
    }
    if ((v = json_object_get(obj, "idleTimeoutSeconds"))) {
        if ((err = get_int(e, v, "idleTimeoutSeconds", 0, 86400, &i)))
            return err;
        c->idle_timeout_seconds = (uint32_t)i;
    }
    if ((v = json_object_get(obj, "awayHoldSeconds"))) {
        if ((err = get_int(e, v, "awayHoldSeconds", 0, 86400, &i)))
            return err;
        c->away_hold_seconds = (uint32_t)i;
    }
    if ((v = json_object_get(obj, "pollMaxMs"))) {
        /* 0 (bands only) or 1000..600000 */
        if (!json_is_integer(v) ||
            ((i = (long long)json_integer_value(v)) != 0 && (i < 1000 || i > 600000)))
            return fail(e, "pollMaxMs", "must be 0 or an integer from 1000 to 600000");
        c->poll_max_ms = (uint32_t)i;
    }
    if ((v = json_object_get(obj, "pollBands")) && (err = parse_poll_bands(e, v, c)))
        return err;
    if ((v = json_object_get(obj, "pollJitter"))) {
        if ((err = get_number(e, v, "pollJitter", "from 0 to 0.5", &d)))
            return err;
        if (!(d >= 0 && d <= 0.5))
            return fail(e, "pollJitter", "must be a number from 0 to 0.5");
        c->poll_jitter = d;
    }
    if ((v = json_object_get(obj, "failPolicy"))) {
        const char *s = json_string_value(v);
        if (s && strcmp(s, "closed") == 0)
            c->fail_policy = WR_FAIL_CLOSED;
        else if (s && strcmp(s, "open") == 0)
            c->fail_policy = WR_FAIL_OPEN;
        else if (s && strcmp(s, "limited") == 0)
            c->fail_policy = WR_FAIL_LIMITED;
        else
            return fail(e, "failPolicy", "must be \"closed\", \"open\" or \"limited\"");
    }
    if ((v = json_object_get(obj, "failOpenPerSecond"))) {
        if ((err = get_number(e, v, "failOpenPerSecond", ">= 0 and <= 1000000", &d)))
            return err;
        if (!(d >= 0 && d <= RATE_MAX))
            return fail(e, "failOpenPerSecond", "must be a number >= 0 and <= 1000000");
        c->fail_open_per_second = d;
        *fail_open_given = true;
    }
    if ((v = json_object_get(obj, "targetUrl")) && (err = parse_target_url(e, v, c)))
        return err;
    if ((v = json_object_get(obj, "inviteKey")) && (err = parse_invite_key(e, v, c)))
        return err;
    if ((v = json_object_get(obj, "returnOrigins")) && (err = parse_return_origins(e, v, c)))
        return err;
    if ((v = json_object_get(obj, "tokenInQuery")) &&
        (err = get_bool(e, v, "tokenInQuery", &c->token_in_query)))
        return err;
    if ((v = json_object_get(obj, "opensAt"))) {
        if (json_is_null(v)) {
            c->opens_at_ms = WR_OPENS_AT_NONE;
        } else {
            if ((err = get_int(e, v, "opensAt", 0, WR_OPENS_AT_MAX, &i)))
                return err;
            c->opens_at_ms = (int64_t)i;
        }
    }
    if ((v = json_object_get(obj, "preQueueShuffle")) &&
        (err = get_bool(e, v, "preQueueShuffle", &c->pre_queue_shuffle)))
        return err;
    return WR_OK;
}

static wr_err_t derive_rate(errbuf_t *e, wr_queue_config_t *c)
{
    double r = (double)c->cap_connections / ((double)c->cap_service_ms / 1000.0) * c->cap_safety;
    if (!(r >= RATE_MIN && r <= RATE_MAX))
        return fail(e, "capacity",
                    "derives admitPerSecond = %g, which must be >= 0.001 and <= 1000000", r);
    c->admit_per_second = r;
    return WR_OK;
}

wr_err_t wr_qconfig_parse(const json_t *obj, wr_queue_config_t *out, char *field, size_t field_len,
                          char *msg, size_t msg_len)
{
    errbuf_t e = {field, field_len, msg, msg_len};
    wr_queue_config_t c;
    bool rate_given, cap_given, fail_open_given;
    wr_qconfig_defaults(&c);
    wr_err_t err = apply_fields(&e, obj, &c, &rate_given, &cap_given, &fail_open_given);
    if (err)
        return err;
    if (!rate_given) {
        if (!c.has_capacity)
            return fail(&e, "admitPerSecond",
                        "is required unless capacity is given (number >= 0.001 and <= 1000000)");
        if ((err = derive_rate(&e, &c)))
            return err;
    }
    if (!fail_open_given)
        c.fail_open_per_second = c.admit_per_second;
    *out = c;
    return WR_OK;
}

wr_err_t wr_qconfig_patch(const wr_queue_config_t *base, const json_t *obj, wr_queue_config_t *out,
                          char *field, size_t field_len, char *msg, size_t msg_len)
{
    errbuf_t e = {field, field_len, msg, msg_len};
    wr_queue_config_t c = *base;
    bool rate_given, cap_given, fail_open_given;
    wr_err_t err = apply_fields(&e, obj, &c, &rate_given, &cap_given, &fail_open_given);
    if (err)
        return err;
    if (cap_given && !rate_given && (err = derive_rate(&e, &c)))
        return err;
    if (!(c.admit_per_second >= RATE_MIN && c.admit_per_second <= RATE_MAX))
        return fail(&e, "admitPerSecond", "is required (number >= 0.001 and <= 1000000)");
    /* failOpenPerSecond defaults to the rate: when it still equals the old
     * rate and the PATCH changes the rate without naming it, it follows. */
    if (!fail_open_given && c.admit_per_second != base->admit_per_second &&
        base->fail_open_per_second == base->admit_per_second)
        c.fail_open_per_second = c.admit_per_second;
    *out = c;
    return WR_OK;
}

/* A double as a JSON integer when it is integral (and in range), else real. */
static json_t *number_json(double d)
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

static json_t *render(const wr_queue_config_t *cfg, bool show_secrets)
{
    bool ok = true;
    json_t *o = json_object();
    if (!o)
        return NULL;
    set(o, "enabled", json_boolean(cfg->enabled), &ok);
    set(o, "paused", json_boolean(cfg->paused), &ok);
    set(o, "admitPerSecond", number_json(cfg->admit_per_second), &ok);
    if (cfg->has_capacity) {
        json_t *cap = json_object();
        if (cap) {
            set(cap, "connections", json_integer(cfg->cap_connections), &ok);
            set(cap, "serviceMs", json_integer(cfg->cap_service_ms), &ok);
            set(cap, "safety", number_json(cfg->cap_safety), &ok);
        }
        set(o, "capacity", cap, &ok);
    }
    set(o, "tickMs", json_integer(cfg->tick_ms), &ok);
    set(o, "maxActive", json_integer((json_int_t)cfg->max_active), &ok);
    set(o, "maxQueueSize", json_integer((json_int_t)cfg->max_queue_size), &ok);
    set(o, "tokenTtlSeconds", json_integer(cfg->token_ttl_seconds), &ok);
    json_t *bands = json_array();
    size_t n = cfg->n_poll_bands <= WR_POLL_BANDS_MAX ? cfg->n_poll_bands : WR_POLL_BANDS_MAX;
    for (size_t i = 0; bands && i < n; i++) {
        json_t *b = json_object();
        if (b && cfg->poll_bands[i].up_to > 0)
            set(b, "upTo", json_integer((json_int_t)cfg->poll_bands[i].up_to), &ok);
        if (b)
            set(b, "ms", json_integer(cfg->poll_bands[i].ms), &ok);
        if (!b || json_array_append_new(bands, b) != 0)
            ok = false;
    }
    set(o, "pollBands", bands, &ok);
    set(o, "pollJitter", number_json(cfg->poll_jitter), &ok);
    set(o, "failPolicy", json_string(wr_qconfig_fail_policy_name(cfg->fail_policy)), &ok);
    set(o, "failOpenPerSecond", number_json(cfg->fail_open_per_second), &ok);
    set(o, "targetUrl", json_stringn(cfg->target_url, strnlen(cfg->target_url, WR_TARGET_URL_MAX)),
        &ok);
    size_t klen = cfg->invite_key_len <= WR_INVITE_KEY_MAX ? cfg->invite_key_len : 0;
    if (klen == 0)
        set(o, "inviteKey", json_null(), &ok);
    else
        set(o, "inviteKey", show_secrets ? json_stringn(cfg->invite_key, klen) : json_string("set"),
            &ok);
    json_t *origins = json_array();
    size_t no = cfg->n_return_origins <= WR_RETURN_ORIGINS_MAX ? cfg->n_return_origins : 0;
    for (size_t i = 0; origins && i < no; i++) {
        json_t *x =
            json_stringn(cfg->return_origins[i], strnlen(cfg->return_origins[i], WR_ORIGIN_MAX));
        if (!x || json_array_append_new(origins, x) != 0)
            ok = false;
    }
    set(o, "returnOrigins", origins, &ok);
    set(o, "tokenInQuery", json_boolean(cfg->token_in_query), &ok);
    set(o, "sessionSeconds", json_integer(cfg->session_seconds), &ok);
    set(o, "idleTimeoutSeconds", json_integer(cfg->idle_timeout_seconds), &ok);
    set(o, "awayHoldSeconds", json_integer(cfg->away_hold_seconds), &ok);
    set(o, "pollMaxMs", json_integer(cfg->poll_max_ms), &ok);
    set(o, "opensAt",
        cfg->opens_at_ms >= 0 ? json_integer((json_int_t)cfg->opens_at_ms) : json_null(), &ok);
    set(o, "preQueueShuffle", json_boolean(cfg->pre_queue_shuffle), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
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

const char *wr_qconfig_fail_policy_name(wr_fail_policy_t p)
{
    switch (p) {
    case WR_FAIL_CLOSED:
        return "closed";
    case WR_FAIL_OPEN:
        return "open";
    case WR_FAIL_LIMITED:
        return "limited";
    }
    return "limited";
}
