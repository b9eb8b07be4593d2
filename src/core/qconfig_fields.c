/*
 * qconfig_fields.c - the hooks of the queue config's CUSTOM rows whose
 * rules are more than a range (qconfig.c's table; qconfig_internal.h):
 * capacity (the rate derived from connections, serviceMs and safety),
 * pollBands, targetUrl's check, inviteKey (write-only: the API shows
 * "set"), returnOrigins (kept canonical, origin.h), pollMaxMs, autotune
 * (its store value is what the Redis admission script clamps with),
 * captcha (core/captcha.c), groups (core/groups.h's names) and bypass
 * (core/bypass.c). Each hook
 * validates or renders one field.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/bypass.h"
#include "core/captcha.h"
#include "core/origin.h"
#include "core/qconfig_internal.h"

wr_err_t wr_qconfig__parse_capacity(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
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
    wr_err_t err = wr_qconfig__reject_unknown(e, v, "capacity.", keys, 3);
    if (err)
        return err;
    long long conn = 0, svc = 0;
    const json_t *x = json_object_get(v, "connections");
    if (!x)
        return wr_field_einval(e, "capacity.connections",
                               "is required (integer from 1 to 1000000)");
    if ((err = wr_qconfig__get_int(e, x, "capacity.connections", 1, 1000000, &conn)))
        return err;
    x = json_object_get(v, "serviceMs");
    if (!x)
        return wr_field_einval(e, "capacity.serviceMs", "is required (integer from 1 to 3600000)");
    if ((err = wr_qconfig__get_int(e, x, "capacity.serviceMs", 1, 3600000, &svc)))
        return err;
    double safety = 0.875;
    x = json_object_get(v, "safety");
    if (x) {
        if ((err = wr_qconfig__get_number(e, x, "capacity.safety", "must be a number in (0, 1]",
                                          &safety)))
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

bool wr_qconfig__render_capacity(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    *out = NULL;
    if (!c->has_capacity)
        return true; /* left out */
    bool ok = true;
    json_t *cap = json_object();
    if (!cap)
        return false;
    wr_qconfig__set(cap, "connections", json_integer(c->cap_connections), &ok);
    wr_qconfig__set(cap, "serviceMs", json_integer(c->cap_service_ms), &ok);
    wr_qconfig__set(cap, "safety", wr_qconfig_number_json(c->cap_safety), &ok);
    return wr_qconfig__finish(cap, ok, out);
}

void wr_qconfig__reset_capacity(wr_queue_config_t *c)
{
    c->cap_safety = 0.875;
}

wr_err_t wr_qconfig__parse_poll_bands(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
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
        wr_err_t err = wr_qconfig__reject_unknown(e, b, prefix, keys, 2);
        if (err)
            return err;

        long long up_to = 0, ms = 0;
        const json_t *x = json_object_get(b, "upTo");
        snprintf(path, sizeof(path), "pollBands[%zu].upTo", i);
        if (x) {
            if ((err = wr_qconfig__get_int(e, x, path, 1, INT64_MAX, &up_to)))
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
        if ((err = wr_qconfig__get_int(e, x, path, 250, 600000, &ms)))
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

bool wr_qconfig__render_poll_bands(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    bool ok = true;
    json_t *bands = json_array();
    size_t n = c->n_poll_bands <= WR_POLL_BANDS_MAX ? c->n_poll_bands : WR_POLL_BANDS_MAX;
    for (size_t i = 0; bands && i < n; i++) {
        json_t *b = json_object();
        if (b && c->poll_bands[i].up_to > 0)
            wr_qconfig__set(b, "upTo", json_integer((json_int_t)c->poll_bands[i].up_to), &ok);
        if (b)
            wr_qconfig__set(b, "ms", json_integer(c->poll_bands[i].ms), &ok);
        if (!b || json_array_append_new(bands, b) != 0)
            ok = false;
    }
    return wr_qconfig__finish(bands, ok, out);
}

void wr_qconfig__reset_poll_bands(wr_queue_config_t *c)
{
    c->poll_bands[0] = (wr_poll_band_t){.up_to = 100, .ms = 1000};
    c->poll_bands[1] = (wr_poll_band_t){.up_to = 1000, .ms = 3000};
    c->poll_bands[2] = (wr_poll_band_t){.up_to = 0, .ms = WR_POLL_LAST_BAND_MS};
    c->n_poll_bands = 3;
}

/* targetUrl (a STRING row): "", an absolute http(s) URL, or a path. */
bool wr_qconfig__target_url_ok(const char *s, size_t len)
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

wr_err_t wr_qconfig__parse_invite_key(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
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
bool wr_qconfig__render_invite_key(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    size_t klen = c->invite_key_len <= WR_INVITE_KEY_MAX ? c->invite_key_len : 0;
    if (klen == 0)
        *out = json_null();
    else
        *out = secrets ? json_stringn(c->invite_key, klen) : json_string("set");
    return *out != NULL;
}

wr_err_t wr_qconfig__parse_return_origins(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
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

bool wr_qconfig__render_return_origins(const wr_queue_config_t *c, bool secrets, json_t **out)
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
    return wr_qconfig__finish(origins, ok, out);
}

/* pollMaxMs: 0 (bands only) or 1000..600000, default 60000 (API 1.2,
 * "Fewer polls from far back"): a range with a hole, so a CUSTOM row. */
wr_err_t wr_qconfig__parse_poll_max_ms(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
{
    long long i = json_is_integer(v) ? (long long)json_integer_value(v) : -1;
    if (!json_is_integer(v) || (i != 0 && (i < 1000 || i > 600000)))
        return wr_field_einval(e, "pollMaxMs", "must be 0 or an integer from 1000 to 600000");
    c->poll_max_ms = (uint32_t)i;
    return WR_OK;
}

bool wr_qconfig__render_poll_max_ms(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    *out = json_integer(c->poll_max_ms);
    return *out != NULL;
}

void wr_qconfig__reset_poll_max_ms(wr_queue_config_t *c)
{
    c->poll_max_ms = 60000;
}

/* autotune: null or {minPerSecond, maxPerSecond, targetMs}, all required,
 * 0 < min <= max <= 1e6, targetMs 1..60000 (API 1.2, "The line follows the
 * shop"). Its store value "min:max:targetMs" ("" for null) is what the
 * Redis admission script clamps the rate in use with. */
wr_err_t wr_qconfig__parse_autotune(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
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
    wr_err_t err = wr_qconfig__reject_unknown(e, v, "autotune.", keys, 3);
    if (err)
        return err;
    double lo = 0, hi = 0;
    long long t = 0;
    const json_t *x = json_object_get(v, "minPerSecond");
    if (!x)
        return wr_field_einval(e, "autotune.minPerSecond",
                               "is required (number > 0 and <= 1000000)");
    if ((err = wr_qconfig__get_number(e, x, "autotune.minPerSecond",
                                      "must be a number > 0 and <= 1000000", &lo)))
        return err;
    if (!(lo > 0 && lo <= RATE_MAX))
        return wr_field_einval(e, "autotune.minPerSecond", "must be a number > 0 and <= 1000000");
    x = json_object_get(v, "maxPerSecond");
    if (!x)
        return wr_field_einval(e, "autotune.maxPerSecond",
                               "is required (number >= minPerSecond and <= 1000000)");
    if ((err = wr_qconfig__get_number(e, x, "autotune.maxPerSecond",
                                      "must be a number >= minPerSecond and <= 1000000", &hi)))
        return err;
    if (!(hi >= lo && hi <= RATE_MAX))
        return wr_field_einval(e, "autotune.maxPerSecond",
                               "must be a number >= minPerSecond and <= 1000000");
    x = json_object_get(v, "targetMs");
    if (!x)
        return wr_field_einval(e, "autotune.targetMs", "is required (integer from 1 to 60000)");
    if ((err = wr_qconfig__get_int(e, x, "autotune.targetMs", 1, 60000, &t)))
        return err;
    c->has_autotune = true;
    c->autotune_min = lo;
    c->autotune_max = hi;
    c->autotune_target_ms = (uint32_t)t;
    return WR_OK;
}

bool wr_qconfig__render_autotune(const wr_queue_config_t *c, bool secrets, json_t **out)
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
    wr_qconfig__set(o, "minPerSecond", wr_qconfig_number_json(c->autotune_min), &ok);
    wr_qconfig__set(o, "maxPerSecond", wr_qconfig_number_json(c->autotune_max), &ok);
    wr_qconfig__set(o, "targetMs", json_integer(c->autotune_target_ms), &ok);
    return wr_qconfig__finish(o, ok, out);
}

int wr_qconfig__store_value_autotune(const wr_queue_config_t *c, char *buf, size_t len)
{
    if (!c->has_autotune)
        return snprintf(buf, len, "%s", "");
    return snprintf(buf, len, "%.17g:%.17g:%" PRIu32, c->autotune_min, c->autotune_max,
                    c->autotune_target_ms);
}

/* The rows whose value is a module's own object: its parser (which writes
 * the field and message of an error) and its renderer (secrets: the
 * stores' form), on the member m. */
#define DELEGATED_HOOKS(name, m, parse_fn, to_json_fn)                                             \
    wr_err_t wr_qconfig__parse_##name(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)    \
    {                                                                                              \
        char field[WR_FIELD_MAX] = #name, msg[256] = "";                                           \
        if (parse_fn(v, &c->m, field, sizeof field, msg, sizeof msg) != WR_OK)                     \
            return wr_field_einval(e, field, "%s", msg);                                           \
        return WR_OK;                                                                              \
    }                                                                                              \
    bool wr_qconfig__render_##name(const wr_queue_config_t *c, bool secrets, json_t **out)         \
    {                                                                                              \
        *out = to_json_fn(&c->m, secrets);                                                         \
        return *out != NULL;                                                                       \
    }

/* captcha (API 1.2, "A place costs work"): null or the widget object,
 * parsed and rendered by core/captcha.c (which names the member in its
 * errors: "captcha.siteKey"); a given object replaces the whole one, and
 * "secret": "set" keeps the secret the base has. The secret is rendered
 * only in the stores' form. */
DELEGATED_HOOKS(captcha, captcha, wr_captcha_parse, wr_captcha_to_json)

/* groups: null or 1..8 objects {"name"} in priority order, each name
 * [a-z0-9-]{1,32}, unique, not "standard" (API 1.3, "Priority groups and
 * presale codes"). The error names the element ("groups[1].name"). */
wr_err_t wr_qconfig__parse_groups(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"name"};
    if (json_is_null(v)) {
        memset(c->groups, 0, sizeof(c->groups));
        c->n_groups = 0;
        return WR_OK;
    }
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > WR_GROUPS_MAX)
        return wr_field_einval(
            e, "groups", "must be null or an array of 1 to %d objects {\"name\"}", WR_GROUPS_MAX);
    char got[WR_GROUPS_MAX][WR_GROUP_NAME_MAX + 1];
    memset(got, 0, sizeof(got));
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
        const json_t *g = json_array_get(v, i);
        char at[WR_FIELD_MAX];
        snprintf(at, sizeof(at), "groups[%zu].", i);
        if (!json_is_object(g))
            return wr_field_einval(e, "groups",
                                   "must be null or an array of 1 to %d objects "
                                   "{\"name\"}",
                                   WR_GROUPS_MAX);
        wr_err_t err = wr_qconfig__reject_unknown(e, g, at, keys, 1);
        if (err)
            return err;
        const json_t *name = json_object_get(g, "name");
        snprintf(at, sizeof(at), "groups[%zu].name", i);
        if (!json_is_string(name) ||
            !wr_groups_name_ok(json_string_value(name), json_string_length(name)))
            return wr_field_einval(e, at, "must be " WR_GROUP_NAME_RULE " and not \"%s\"",
                                   WR_GROUP_STANDARD);
        memcpy(got[i], json_string_value(name), json_string_length(name));
        for (size_t j = 0; j < i; j++)
            if (strcmp(got[j], got[i]) == 0)
                return wr_field_einval(e, at, "\"%s\" is named twice", got[i]);
    }
    memcpy(c->groups, got, sizeof(got));
    c->n_groups = n;
    return WR_OK;
}

bool wr_qconfig__render_groups(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    if (c->n_groups == 0 || c->n_groups > WR_GROUPS_MAX) {
        *out = json_null();
        return *out != NULL;
    }
    bool ok = true;
    json_t *groups = json_array();
    for (size_t i = 0; groups && i < c->n_groups; i++) {
        json_t *g = json_object();
        wr_qconfig__set(g, "name",
                        json_stringn(c->groups[i], strnlen(c->groups[i], WR_GROUP_NAME_MAX)), &ok);
        if (!g || json_array_append_new(groups, g) != 0)
            ok = false;
    }
    return wr_qconfig__finish(groups, ok, out);
}

/* bypass (API 1.3, "Bypass rules"): null or the rules, parsed and rendered
 * by core/bypass.c (the error names the field "bypass", its message the
 * member); a given array replaces the whole one, "secret": "set" keeping
 * the secret of the current rule of the same name. */
DELEGATED_HOOKS(bypass, bypass, wr_bypass_parse, wr_bypass_to_json)
