/*
 * bypass.c - bypass rules: the config field `bypass` and the matching of a
 * request (docs/API.md 1.3, "Bypass rules", "Bypass, safely").
 *
 * Parsing works on a local copy and assigns the caller's config only when
 * every rule validated, so a refused PATCH changes nothing. Every error
 * names the field "bypass" (the config field, as the contract says) and
 * its message names the member ("bypass[2].secret must be ..."), so a
 * client sees which rule and which member is wrong.
 *
 * The secret is write-only, as inviteKey and captcha.secret: the stores'
 * JSON has it, the API's has "set", and "set" sent back keeps the secret
 * of the current header rule of the same name (bypass.h; its header may
 * change).
 *
 * Matching, in the rules' order (the first that matches names the
 * bypass):
 * - header: the value of the request's field is compared with the secret
 *   through HMAC-SHA256 digests under a fixed key, and the digests in
 *   constant time (wr_crypto_equal): the time depends neither on where the
 *   values differ nor on their lengths.
 * - cidr: the client address, parsed and matched by core/ratelimit.c (the
 *   same code as --trusted-proxies: one CIDR grammar).
 * - path: the path of the URI (cut at '?' or '#') is refused outright when
 *   it is not safe to compare: not starting with "/", a "." or ".."
 *   segment, "//", a backslash, a control byte or space, or %2F, %2E, %5C,
 *   %00 in any case (encoded separators and dots a backend may decode into
 *   a path the rule did not mean). A safe path is compared byte for byte:
 *   "/exact" equal, "/p/\*" at or below "/p/" ("/p" itself does not match).
 *   A rule's own path must be safe too, so no rule can be written that an
 *   unsafe path could match.
 */
#include "core/bypass.h"

#include <stdio.h>
#include <string.h>

#include "base/crypto.h"
#include "base/ids.h"

#define FIELD "bypass"

/* ------------------------------------------------------------ syntax */

bool wr_bypass_valid_name(const char *s, size_t len)
{
    return wr_ids_valid_label_n(s, len);
}

/* Visible ASCII (no space: a field value's edges are trimmed by HTTP). */
static bool visible(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] < 0x21 || s[i] > 0x7e)
            return false;
    return true;
}

static int lower(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static bool hex_digit(char ch)
{
    return (ch >= '0' && ch <= '9') || (lower(ch) >= 'a' && lower(ch) <= 'f');
}

/* %2F, %2E, %5C or %00 (any case) at p (n bytes left). */
static bool bad_escape(const char *p, size_t n)
{
    static const char *const bad[] = {"%2f", "%2e", "%5c", "%00"};
    if (n < 3)
        return false;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (p[1] == bad[i][1] && lower(p[2]) == bad[i][2])
            return true;
    return false;
}

/* A path that may be compared: see the design comment. len bytes. */
static bool path_safe(const char *p, size_t len)
{
    if (len == 0 || p[0] != '/')
        return false;
    size_t seg = 1; /* start of the current segment */
    for (size_t i = 1; i <= len; i++) {
        if (i == len || p[i] == '/') {
            size_t n = i - seg;
            if (i < len && p[i - 1] == '/')
                return false; /* "//" */
            if ((n == 1 && p[seg] == '.') || (n == 2 && p[seg] == '.' && p[seg + 1] == '.'))
                return false; /* "." or ".." segment */
            seg = i + 1;
            continue;
        }
        if (p[i] == '\\' || (unsigned char)p[i] < 0x21 || (unsigned char)p[i] > 0x7e)
            return false;
        if (p[i] == '%' && bad_escape(p + i, len - i))
            return false;
    }
    return true;
}

/* A rule's path: "/exact" or "/prefix/\*", safe, '%' only as %XX, no '?',
 * '#' or '*' elsewhere. Sets *prefix. */
static bool rule_path_ok(const char *s, size_t len, bool *prefix)
{
    *prefix = len >= 2 && s[len - 1] == '*' && s[len - 2] == '/';
    size_t stem = *prefix ? len - 1 : len;
    if (!path_safe(s, stem))
        return false;
    for (size_t i = 0; i < stem; i++) {
        if (s[i] == '?' || s[i] == '#' || s[i] == '*')
            return false;
        if (s[i] == '%' && !(i + 2 < stem && hex_digit(s[i + 1]) && hex_digit(s[i + 2])))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------ parsing */

/* Fails naming the field, with the rule's member in the message. */
#define FAIL(e, ...) wr_field_einval((e), FIELD, __VA_ARGS__)

static const char *json_str(const json_t *o, const char *key, size_t *len)
{
    const json_t *x = json_object_get(o, key);
    *len = json_is_string(x) ? json_string_length(x) : 0;
    return json_is_string(x) ? json_string_value(x) : NULL;
}

/* The current header rule named name, or NULL. */
static const wr_bypass_rule_t *current_secret(const wr_bypass_config_t *c, const char *name)
{
    for (size_t i = 0; c->set && i < c->n && i < WR_BYPASS_RULES_MAX; i++) {
        const wr_bypass_rule_t *r = &c->rules[i];
        if (r->kind == WR_BYPASS_HEADER && strcmp(r->name, name) == 0)
            return r;
    }
    return NULL;
}

/* The secret of a header rule: given, or "set" (kept from cur). */
static wr_err_t parse_secret(wr_field_err_t *e, size_t i, const json_t *rule,
                             const wr_bypass_config_t *cur, wr_bypass_rule_t *r)
{
    size_t len;
    const char *s = json_str(rule, "secret", &len);
    if (!json_object_get(rule, "secret"))
        return FAIL(e, "bypass[%zu].secret is required with header", i);
    if (s && strcmp(s, "set") == 0) {
        const wr_bypass_rule_t *old = current_secret(cur, r->name);
        if (cur->any_secret) {
            memset(r->value, 's', WR_BYPASS_SECRET_MIN);
            r->value_len = WR_BYPASS_SECRET_MIN;
            return WR_OK;
        }
        if (!old)
            return FAIL(e,
                        "bypass[%zu].secret is \"set\" but this queue has no header rule "
                        "\"%s\" whose secret to keep: give the secret",
                        i, r->name);
        memcpy(r->value, old->value, sizeof r->value);
        r->value_len = old->value_len;
        return WR_OK;
    }
    if (!s || len < WR_BYPASS_SECRET_MIN || len > WR_BYPASS_VALUE_MAX || !visible(s, len))
        return FAIL(e,
                    "bypass[%zu].secret must be a string of %d to %d visible ASCII characters "
                    "(no spaces)",
                    i, WR_BYPASS_SECRET_MIN, WR_BYPASS_VALUE_MAX);
    memcpy(r->value, s, len);
    r->value[len] = '\0';
    r->value_len = (uint8_t)len;
    return WR_OK;
}

static wr_err_t parse_rule(wr_field_err_t *e, size_t i, const json_t *rule,
                           const wr_bypass_config_t *cur, wr_bypass_rule_t *r)
{
    static const char *const keys[] = {"name", "header", "secret", "cidr", "path"};
    if (!json_is_object(rule))
        return FAIL(e, "bypass[%zu] must be an object {name, header+secret | cidr | path}", i);
    size_t known = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        known += json_object_get(rule, keys[k]) != NULL;
    if (known != json_object_size(rule))
        return FAIL(e, "bypass[%zu] may have only name, header, secret, cidr and path", i);
    memset(r, 0, sizeof *r);
    size_t len;
    const char *s = json_str(rule, "name", &len);
    if (!wr_bypass_valid_name(s, len))
        return FAIL(e, "bypass[%zu].name must be 1 to %d of a-z, 0-9 and '-'", i,
                    WR_BYPASS_NAME_MAX);
    memcpy(r->name, s, len);
    bool has_h = json_object_get(rule, "header") || json_object_get(rule, "secret");
    bool has_c = json_object_get(rule, "cidr") != NULL;
    bool has_p = json_object_get(rule, "path") != NULL;
    if ((int)has_h + (int)has_c + (int)has_p != 1)
        return FAIL(e, "bypass[%zu] must have exactly one of header (with secret), cidr or path",
                    i);
    if (has_h) {
        r->kind = WR_BYPASS_HEADER;
        s = json_str(rule, "header", &len);
        if (!json_object_get(rule, "header"))
            return FAIL(e, "bypass[%zu].header is required with secret", i);
        if (!wr_ids_valid_token_n(s, len, WR_BYPASS_HEADER_MAX))
            return FAIL(e, "bypass[%zu].header must be an HTTP field name of 1 to %d characters", i,
                        WR_BYPASS_HEADER_MAX);
        memcpy(r->header, s, len);
        return parse_secret(e, i, rule, cur, r);
    }
    if (has_c) {
        r->kind = WR_BYPASS_CIDR;
        s = json_str(rule, "cidr", &len);
        size_t n = 0;
        if (!s || len == 0 || len > WR_BYPASS_VALUE_MAX ||
            strspn(s, "0123456789abcdefABCDEF:./") != len ||
            wr_ratelimit_cidrs_parse(s, &r->net, 1, &n, NULL, 0) != WR_OK || n != 1)
            return FAIL(e,
                        "bypass[%zu].cidr must be an IPv4 or IPv6 prefix (\"10.0.0.0/8\", "
                        "\"2001:db8::/32\") or address",
                        i);
        memcpy(r->value, s, len);
        r->value_len = (uint8_t)len;
        return WR_OK;
    }
    r->kind = WR_BYPASS_PATH;
    s = json_str(rule, "path", &len);
    if (!s || len > WR_BYPASS_VALUE_MAX || !rule_path_ok(s, len, &r->prefix_path))
        return FAIL(e,
                    "bypass[%zu].path must be \"/exact\" or \"/prefix/*\" of at most %d "
                    "characters, without '.' or '..' segments, \"//\", backslashes, spaces, "
                    "'?', '#' or %%2F, %%2E, %%5C, %%00",
                    i, WR_BYPASS_VALUE_MAX);
    memcpy(r->value, s, len);
    r->value_len = (uint8_t)len;
    return WR_OK;
}

wr_err_t wr_bypass_parse(const json_t *v, wr_bypass_config_t *c, char *field, size_t field_len,
                         char *msg, size_t msg_len)
{
    wr_field_err_t e = {field, field_len, msg, msg_len};
    wr_bypass_config_t n;
    memset(&n, 0, sizeof n);
    n.any_secret = c->any_secret;
    if (json_is_null(v)) {
        *c = n;
        return WR_OK;
    }
    if (!json_is_array(v) || json_array_size(v) > WR_BYPASS_RULES_MAX)
        return FAIL(&e, "bypass must be null or an array of at most %d rules", WR_BYPASS_RULES_MAX);
    for (size_t i = 0; i < json_array_size(v); i++) {
        wr_err_t err = parse_rule(&e, i, json_array_get(v, i), c, &n.rules[i]);
        if (err)
            return err;
        for (size_t j = 0; j < i; j++)
            if (strcmp(n.rules[j].name, n.rules[i].name) == 0)
                return FAIL(&e, "bypass[%zu].name \"%s\" is already the name of bypass[%zu]", i,
                            n.rules[i].name, j);
        n.n = (uint8_t)(i + 1);
    }
    n.set = true;
    *c = n;
    return WR_OK;
}

/* ---------------------------------------------------------- rendering */

json_t *wr_bypass_to_json(const wr_bypass_config_t *c, bool secrets)
{
    if (!c->set)
        return json_null();
    json_t *a = json_array();
    bool ok = a != NULL;
    for (size_t i = 0; ok && i < c->n && i < WR_BYPASS_RULES_MAX; i++) {
        const wr_bypass_rule_t *r = &c->rules[i];
        json_t *o = json_object();
        ok = o && json_array_append_new(a, o) == 0;
        if (!ok)
            break;
        ok = json_object_set_new(o, "name", json_string(r->name)) == 0;
        const char *key = r->kind == WR_BYPASS_CIDR ? "cidr" : "path";
        if (ok && r->kind == WR_BYPASS_HEADER) {
            ok = json_object_set_new(o, "header", json_string(r->header)) == 0 &&
                 json_object_set_new(o, "secret",
                                     secrets ? json_stringn(r->value, r->value_len)
                                             : json_string("set")) == 0;
        } else if (ok) {
            ok = json_object_set_new(o, key, json_stringn(r->value, r->value_len)) == 0;
        }
    }
    if (!ok) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* ----------------------------------------------------------- matching */

/* The digest a header value or secret is compared through. */
static bool digest(const char *s, size_t len, uint8_t out[WR_CRYPTO_MAC_LEN])
{
    static const uint8_t key[] = "waitroom bypass v1";
    return wr_crypto_hmac_sha256(key, sizeof key - 1, s, len, out) == WR_OK;
}

static bool header_matches(const wr_bypass_rule_t *r, const wr_bypass_request_t *req)
{
    const char *v = req->header ? req->header(req->ctx, r->header) : NULL;
    if (!v)
        return false;
    uint8_t a[WR_CRYPTO_MAC_LEN], b[WR_CRYPTO_MAC_LEN];
    size_t vlen = strnlen(v, WR_BYPASS_URI_MAX + 1);
    if (!digest(v, vlen, a) || !digest(r->value, r->value_len, b))
        return false;
    bool eq = wr_crypto_equal(a, b, sizeof a);
    wr_crypto_wipe(b, sizeof b);
    return eq && r->value_len >= WR_BYPASS_SECRET_MIN;
}

bool wr_bypass_path_matches(const wr_bypass_rule_t *r, const char *uri)
{
    if (!r || r->kind != WR_BYPASS_PATH || !uri)
        return false;
    size_t len = strcspn(uri, "?#");
    if (len > WR_BYPASS_URI_MAX || !path_safe(uri, len))
        return false;
    if (!r->prefix_path)
        return len == r->value_len && memcmp(uri, r->value, len) == 0;
    size_t stem = (size_t)r->value_len - 1; /* "/p/" of "/p/\*" */
    return len >= stem && memcmp(uri, r->value, stem) == 0;
}

const wr_bypass_rule_t *wr_bypass_match(const wr_bypass_config_t *c, const wr_bypass_request_t *req)
{
    if (!c || !c->set || !req)
        return NULL;
    for (size_t i = 0; i < c->n && i < WR_BYPASS_RULES_MAX; i++) {
        const wr_bypass_rule_t *r = &c->rules[i];
        bool hit = false;
        switch (r->kind) {
        case WR_BYPASS_HEADER:
            hit = header_matches(r, req);
            break;
        case WR_BYPASS_CIDR:
            hit = req->client && wr_ratelimit_cidrs_match(&r->net, 1, req->client);
            break;
        case WR_BYPASS_PATH:
            hit = req->paths && wr_bypass_path_matches(r, req->uri);
            break;
        }
        if (hit)
            return r;
    }
    return NULL;
}
