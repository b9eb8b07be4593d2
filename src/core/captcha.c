/*
 * captcha.c - the CAPTCHA hook's pure part: the `captcha` config object,
 * verify URLs, the widget script and CSP sources of a provider, the
 * siteverify form and the reading of its answer (captcha.h; docs/API.md
 * 1.2, "A place costs work"; docs/SECURITY.md, "Bots").
 *
 * The config object is parsed whole (a PATCH replaces it, as `page`): a
 * working copy is filled member by member and assigned at the end, so a
 * refused object changes nothing. The secret is write-only: the stores
 * keep it (wr_captcha_to_json with secrets, inside the config JSON of the
 * Redis hash and of the memory snapshot), the API shows "set", and "set"
 * sent back keeps the secret already there.
 *
 * Verify URLs: https:// to any host, or http:// to a loopback host only
 * (127.0.0.0/8, [::1], localhost), so that tests can stand in for the
 * provider on a local port while a production queue can never send its
 * secret in the clear. The same loopback rule moves the widget script to
 * the stand-in's origin (wr_captcha_script_url): the page's CSP then names
 * that loopback origin, never anything wider.
 *
 * The provider's answer: `success` decides; an answer without it (an HTML
 * error page, a truncated body, a 5xx) is BAD_ANSWER, which the api treats
 * as a provider that did not answer (the queue's fallback policy). A
 * success for another widget is a refusal (API 1.3, K39): hCaptcha is sent
 * the site key (its secret is the account's, shared by all its site keys)
 * and an answer that names another site key, or another host name than
 * the queue's `hostname`, is not this queue's.
 */
#include "core/captcha.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/origin.h"

static const char *const provider_names[] = {"turnstile", "hcaptcha", NULL};
static const char *const fallback_names[] = {"challenge", "refuse", NULL};

/* Per provider: siteverify, the script's origin and path, CSP sources. */
static const struct {
    const char *verify;
    const char *script_origin;
    const char *script_path;
    const char *csp;
    bool style;
} providers[] = {
    [WR_CAPTCHA_TURNSTILE] = {"https://challenges.cloudflare.com/turnstile/v0/siteverify",
                              "https://challenges.cloudflare.com", "/turnstile/v0/api.js",
                              "https://challenges.cloudflare.com", false},
    [WR_CAPTCHA_HCAPTCHA] = {"https://api.hcaptcha.com/siteverify", "https://js.hcaptcha.com",
                             "/1/api.js", "https://hcaptcha.com https://*.hcaptcha.com", true},
};

const char *wr_captcha_provider_name(wr_captcha_provider_t p)
{
    return p == WR_CAPTCHA_HCAPTCHA ? "hcaptcha" : "turnstile";
}

const char *wr_captcha_default_verify_url(wr_captcha_provider_t p)
{
    return providers[p == WR_CAPTCHA_HCAPTCHA ? 1 : 0].verify;
}

/* ---------- parsing ---------- */

/* Printable ASCII without space, quotes, angle brackets or backslash. */
static bool plain(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= 0x20 || ch >= 0x7f || ch == '"' || ch == '\'' || ch == '<' || ch == '>' ||
            ch == '\\')
            return false;
    }
    return true;
}

/* A string member of 1..max plain bytes into out (max + 1 bytes). */
static wr_err_t string_member(wr_field_err_t *e, const json_t *v, const char *path, size_t max,
                              char *out)
{
    const char *s = json_string_value(v);
    size_t len = s ? json_string_length(v) : 0;
    if (!s || len == 0 || len > max || !plain(s, len))
        return wr_field_einval(
            e, path,
            "must be a string of 1 to %zu printable ASCII characters (no spaces, quotes, "
            "angle brackets or backslashes)",
            max);
    memcpy(out, s, len);
    out[len] = '\0';
    return WR_OK;
}

/* A DNS name (letters, digits, '-', '.'; 1..WR_CAPTCHA_HOSTNAME_MAX) into
 * out in lower case. */
static bool host_name(const char *s, size_t len, char out[WR_CAPTCHA_HOSTNAME_MAX + 1])
{
    if (!s || len == 0 || len > WR_CAPTCHA_HOSTNAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '.'))
            return false;
        out[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    out[len] = '\0';
    return true;
}

static int name_index(const json_t *v, const char *const *names)
{
    const char *s = json_string_value(v);
    for (int i = 0; s && names[i]; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

wr_err_t wr_captcha_parse(const json_t *v, wr_captcha_config_t *c, char *field, size_t field_len,
                          char *msg, size_t msg_len)
{
    static const char *const keys[] = {"provider", "secret",       "siteKey", "verifyUrl",
                                       "fallback", "fallbackBits", "hostname"};
    wr_field_err_t e = {field, field_len, msg, msg_len};
    wr_captcha_config_t n;
    memset(&n, 0, sizeof n);
    if (json_is_null(v)) {
        *c = n;
        return WR_OK;
    }
    if (!json_is_object(v))
        return wr_field_einval(
            &e, "captcha",
            "must be null or an object {provider, siteKey, secret, verifyUrl, fallback, "
            "fallbackBits, hostname}");
    const char *key;
    const json_t *x;
    json_object_foreach((json_t *)v, key, x)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            known = known || strcmp(key, keys[i]) == 0;
        if (!known) {
            char path[64];
            snprintf(path, sizeof path, "captcha.%s", key);
            return wr_field_einval(&e, path, "unknown field");
        }
    }
    wr_err_t err;
    /* provider */
    x = json_object_get(v, "provider");
    int p = x ? name_index(x, provider_names) : -1;
    if (p < 0)
        return wr_field_einval(&e, "captcha.provider",
                               "must be \"turnstile\" or \"hcaptcha\" (required)");
    n.provider = (wr_captcha_provider_t)p;
    /* siteKey */
    x = json_object_get(v, "siteKey");
    if (!x)
        return wr_field_einval(&e, "captcha.siteKey", "is required (the widget's site key)");
    if ((err = string_member(&e, x, "captcha.siteKey", WR_CAPTCHA_SITE_KEY_MAX, n.site_key)))
        return err;
    /* secret: "set" keeps the one already there */
    x = json_object_get(v, "secret");
    if (!x)
        return wr_field_einval(&e, "captcha.secret", "is required (the provider's secret key)");
    const char *s = json_string_value(x);
    if (s && strcmp(s, "set") == 0 && c->set && c->secret[0]) {
        memcpy(n.secret, c->secret, sizeof n.secret);
    } else if (s && strcmp(s, "set") == 0) {
        return wr_field_einval(
            &e, "captcha.secret",
            "is \"set\" but this queue has no captcha secret to keep: give the secret");
    } else if ((err = string_member(&e, x, "captcha.secret", WR_CAPTCHA_SECRET_MAX, n.secret))) {
        return err;
    }
    /* verifyUrl: null or absent = the provider's */
    x = json_object_get(v, "verifyUrl");
    if (x && !json_is_null(x)) {
        const char *u = json_string_value(x);
        size_t len = u ? json_string_length(x) : 0;
        wr_captcha_url_t parts;
        if (!u || len == 0 || len > WR_CAPTCHA_URL_MAX || memchr(u, '\0', len) ||
            !wr_captcha_url_parse(u, &parts))
            return wr_field_einval(
                &e, "captcha.verifyUrl",
                "must be an https:// URL (http:// only to a loopback host: 127.0.0.1, "
                "[::1], localhost) of at most %d characters, or null",
                WR_CAPTCHA_URL_MAX);
        memcpy(n.verify_url, u, len);
        n.verify_url[len] = '\0';
    } else {
        snprintf(n.verify_url, sizeof n.verify_url, "%s",
                 wr_captcha_default_verify_url(n.provider));
    }
    /* fallback */
    n.fallback = WR_CAPTCHA_FALLBACK_CHALLENGE;
    x = json_object_get(v, "fallback");
    if (x) {
        int f = name_index(x, fallback_names);
        if (f < 0)
            return wr_field_einval(&e, "captcha.fallback", "must be \"challenge\" or \"refuse\"");
        n.fallback = (wr_captcha_fallback_t)f;
    }
    /* fallbackBits */
    n.fallback_bits = WR_CAPTCHA_FALLBACK_BITS;
    x = json_object_get(v, "fallbackBits");
    if (x) {
        json_int_t b = json_is_integer(x) ? json_integer_value(x) : -1;
        if (b < 1 || b > 32)
            return wr_field_einval(&e, "captcha.fallbackBits", "must be an integer from 1 to 32");
        n.fallback_bits = (uint32_t)b;
    }
    /* hostname: null or absent = not checked */
    x = json_object_get(v, "hostname");
    if (x && !json_is_null(x) &&
        !host_name(json_string_value(x), json_is_string(x) ? json_string_length(x) : 0, n.hostname))
        return wr_field_einval(&e, "captcha.hostname",
                               "must be null or a host name of 1 to %d letters, digits, '-' "
                               "and '.' (where the widget is solved: the answer's hostname)",
                               WR_CAPTCHA_HOSTNAME_MAX);
    n.set = true;
    *c = n;
    return WR_OK;
}

/* ---------- rendering ---------- */

static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        *ok = false;
}

json_t *wr_captcha_to_json(const wr_captcha_config_t *c, bool secrets)
{
    if (!c->set)
        return json_null();
    json_t *o = json_object();
    bool ok = o != NULL;
    if (o) {
        put(o, "provider", json_string(wr_captcha_provider_name(c->provider)), &ok);
        put(o, "siteKey", json_stringn(c->site_key, strnlen(c->site_key, WR_CAPTCHA_SITE_KEY_MAX)),
            &ok);
        put(o, "secret",
            secrets ? json_stringn(c->secret, strnlen(c->secret, WR_CAPTCHA_SECRET_MAX))
                    : json_string("set"),
            &ok);
        put(o, "verifyUrl", json_stringn(c->verify_url, strnlen(c->verify_url, WR_CAPTCHA_URL_MAX)),
            &ok);
        put(o, "fallback",
            json_string(c->fallback == WR_CAPTCHA_FALLBACK_REFUSE ? "refuse" : "challenge"), &ok);
        put(o, "fallbackBits", json_integer(c->fallback_bits), &ok);
        put(o, "hostname",
            c->hostname[0]
                ? json_stringn(c->hostname, strnlen(c->hostname, WR_CAPTCHA_HOSTNAME_MAX))
                : json_null(),
            &ok);
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---------- verify URLs ---------- */

/* A dotted quad whose first byte is 127. */
static bool loopback_v4(const char *h)
{
    unsigned a, b, c, d;
    char tail;
    return sscanf(h, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 && b < 256 &&
           c < 256 && d < 256;
}

bool wr_captcha_url_parse(const char *url, wr_captcha_url_t *out)
{
    if (!url || !out)
        return false;
    size_t len = strlen(url);
    if (len == 0 || len > WR_CAPTCHA_URL_MAX || !plain(url, len) || strchr(url, '#'))
        return false;
    char origin[WR_ORIGIN_MAX + 1];
    if (!wr_origin_of_url(url, origin) || strlen(origin) > WR_CAPTCHA_ORIGIN_MAX)
        return false;
    memset(out, 0, sizeof *out);
    snprintf(out->origin, sizeof out->origin, "%s", origin);
    /* the canonical origin: scheme://host[:port], lower case */
    const char *h;
    if (strncmp(origin, "https://", 8) == 0) {
        out->https = true;
        out->port = 443;
        h = origin + 8;
    } else if (strncmp(origin, "http://", 7) == 0) {
        out->port = 80;
        h = origin + 7;
    } else {
        return false;
    }
    const char *port = NULL;
    size_t hl;
    if (*h == '[') {
        const char *end = strchr(h, ']');
        if (!end)
            return false;
        hl = (size_t)(end - h - 1);
        if (hl == 0 || hl > WR_CAPTCHA_HOST_MAX)
            return false;
        memcpy(out->host, h + 1, hl);
        port = end[1] == ':' ? end + 2 : NULL;
    } else {
        const char *colon = strchr(h, ':');
        hl = colon ? (size_t)(colon - h) : strlen(h);
        if (hl == 0 || hl > WR_CAPTCHA_HOST_MAX)
            return false;
        memcpy(out->host, h, hl);
        port = colon ? colon + 1 : NULL;
    }
    out->host[hl] = '\0';
    if (port) {
        unsigned long p = 0;
        for (const char *q = port; *q; q++) {
            if (*q < '0' || *q > '9')
                return false;
            p = p * 10 + (unsigned long)(*q - '0');
            if (p > 65535)
                return false;
        }
        if (p == 0)
            return false;
        out->port = (uint16_t)p;
    }
    out->loopback = loopback_v4(out->host) || strcmp(out->host, "::1") == 0 ||
                    strcasecmp(out->host, "localhost") == 0;
    if (!out->https && !out->loopback)
        return false; /* the secret never travels in the clear */
    /* the path: from the first '/' or '?' after the authority */
    const char *auth = strstr(url, "://") + 3;
    const char *p = auth + strcspn(auth, "/?");
    if (*p == '\0')
        snprintf(out->path, sizeof out->path, "/");
    else if (*p == '?')
        snprintf(out->path, sizeof out->path, "/%s", p);
    else
        snprintf(out->path, sizeof out->path, "%s", p);
    return true;
}

int wr_captcha_script_url(const wr_captcha_config_t *c, char *buf, size_t cap)
{
    if (!c || !c->set || !buf || cap == 0)
        return -1;
    int i = c->provider == WR_CAPTCHA_HCAPTCHA ? 1 : 0;
    wr_captcha_url_t u;
    int n;
    if (wr_captcha_url_parse(c->verify_url, &u) && !u.https)
        n = snprintf(buf, cap, "%s%s", u.origin, providers[i].script_path);
    else
        n = snprintf(buf, cap, "%s%s", providers[i].script_origin, providers[i].script_path);
    return n >= 0 && (size_t)n < cap ? n : -1;
}

int wr_captcha_csp_sources(const wr_captcha_config_t *c, char *buf, size_t cap, unsigned *dirs)
{
    if (dirs)
        *dirs = 0;
    if (!c || !c->set || !buf || cap == 0)
        return -1;
    int i = c->provider == WR_CAPTCHA_HCAPTCHA ? 1 : 0;
    wr_captcha_url_t u;
    int n;
    if (wr_captcha_url_parse(c->verify_url, &u) && !u.https) {
        n = snprintf(buf, cap, "%s", u.origin); /* a loopback stand-in */
        if (dirs)
            *dirs = WR_CAPTCHA_CSP_CONNECT;
    } else {
        n = snprintf(buf, cap, "%s", providers[i].csp);
        if (dirs && providers[i].style)
            *dirs = WR_CAPTCHA_CSP_STYLE | WR_CAPTCHA_CSP_CONNECT;
    }
    return n >= 0 && (size_t)n < cap ? n : -1;
}

/* ---------- the exchange ---------- */

bool wr_captcha_response_ok(const char *s, size_t len)
{
    if (!s || len == 0 || len > WR_CAPTCHA_RESPONSE_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= 0x20 || ch >= 0x7f)
            return false;
    }
    return true;
}

/* Appends name=value (value percent-encoded) at *n; false when full. */
static bool form_pair(char *buf, size_t cap, size_t *n, const char *name, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t at = *n;
    size_t nl = strlen(name);
    if (at + (at > 0) + nl + 1 >= cap)
        return false;
    if (at > 0)
        buf[at++] = '&';
    memcpy(buf + at, name, nl);
    at += nl;
    buf[at++] = '=';
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        bool keep = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~';
        if (at + (keep ? 1 : 3) >= cap)
            return false;
        if (keep) {
            buf[at++] = (char)*p;
        } else {
            buf[at++] = '%';
            buf[at++] = hex[*p >> 4];
            buf[at++] = hex[*p & 15];
        }
    }
    buf[at] = '\0';
    *n = at;
    return true;
}

int wr_captcha_form(char *buf, size_t cap, const char *secret, const char *response,
                    const char *remoteip, const char *sitekey)
{
    size_t n = 0;
    if (!buf || cap == 0 || !secret || !response)
        return -1;
    buf[0] = '\0';
    if (!form_pair(buf, cap, &n, "secret", secret) ||
        !form_pair(buf, cap, &n, "response", response))
        return -1;
    if (remoteip && remoteip[0] && !form_pair(buf, cap, &n, "remoteip", remoteip))
        return -1;
    if (sitekey && sitekey[0] && !form_pair(buf, cap, &n, "sitekey", sitekey))
        return -1;
    return (int)n;
}

/* Whether a success in answer j is for expect (site key, host name). */
static const char *mismatch(const json_t *j, const wr_captcha_config_t *expect)
{
    if (!expect)
        return NULL;
    const json_t *k = json_object_get(j, "sitekey");
    if (json_is_string(k) && strcmp(json_string_value(k), expect->site_key) != 0)
        return "sitekey-mismatch";
    const json_t *h = json_object_get(j, "hostname");
    if (expect->hostname[0] &&
        (!json_is_string(h) || strcasecmp(json_string_value(h), expect->hostname) != 0))
        return "hostname-mismatch";
    return NULL;
}

wr_captcha_verdict_t wr_captcha_verdict(int status, const char *body, size_t len,
                                        const wr_captcha_config_t *expect, char *codes, size_t cap)
{
    if (codes && cap > 0)
        codes[0] = '\0';
    if (!body || len == 0 || len > WR_CAPTCHA_ANSWER_MAX || status < 200 || status >= 500 ||
        (status >= 300 && status < 400))
        return WR_CAPTCHA_BAD_ANSWER;
    json_error_t jerr;
    json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    json_t *ok = json_object_get(j, "success");
    wr_captcha_verdict_t v = !json_is_object(j) || !json_is_boolean(ok) ? WR_CAPTCHA_BAD_ANSWER
                             : json_is_true(ok)                         ? WR_CAPTCHA_PASSED
                                                                        : WR_CAPTCHA_REFUSED;
    const char *why = v == WR_CAPTCHA_PASSED ? mismatch(j, expect) : NULL;
    if (why) {
        /* solved under another site key, or on another site */
        json_decref(j);
        if (codes && cap > 0)
            snprintf(codes, cap, "%s", why);
        return WR_CAPTCHA_REFUSED;
    }
    json_t *ec = json_object_get(j, "error-codes");
    size_t n = 0;
    for (size_t i = 0; codes && cap > 1 && json_is_array(ec) && i < json_array_size(ec); i++) {
        const char *s = json_string_value(json_array_get(ec, i));
        if (!s || !plain(s, strlen(s)))
            continue;
        int w = snprintf(codes + n, cap - n, "%s%s", n ? "," : "", s);
        if (w < 0 || (size_t)w >= cap - n) {
            codes[n] = '\0';
            break;
        }
        n += (size_t)w;
    }
    json_decref(j);
    return v;
}
