/*
 * origin.c - origins, the `return` URL check and the token handoff.
 *
 * The queue page takes ?return=<url> from anyone (it is a link), so the
 * check is written as an allow-list over a strict reading, not as a filter
 * of known tricks: a URL passes only when it is spelled in the one plain
 * way we understand, and its origin is exactly one of the allowed ones.
 *   - Absolute: "http://" or "https://" (scheme in any case), then an
 *     authority that is only a host and an optional port, ending at the
 *     end of the string or at '/', '?' or '#'. Userinfo ("shop@evil"),
 *     percent-escapes, backslashes and anything outside [a-z0-9.-] in a
 *     name (or hex, ':' and '.' in a bracketed IPv6 literal) fail. The
 *     host is lower-cased and a default port dropped, so
 *     "HTTPS://SHOP.EXAMPLE:443" is "https://shop.example"; a trailing dot
 *     ("shop.example.") is refused rather than guessed at.
 *   - A path: "/" not followed by '/' or '\' (those would be read by a
 *     browser as a protocol-relative "//host"). It is on the page's own
 *     origin, so it passes only when targetUrl is a path as well.
 *   - Everything else ("//evil", "https:evil", "javascript:...",
 *     "%2F%2Fevil", relative "evil") fails.
 * Over the whole URL, only printable ASCII without '\', '"', '<', '>' is
 * accepted: browsers remove tabs and newlines inside URLs and treat '\' as
 * '/', which is how "/\t/evil" or "/\evil" become "//evil".
 *
 * No allocation and no global state; every output is bounded by its cap.
 */
#include "core/origin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_MAX 253

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Case-insensitive prefix test over len bytes of s. */
static bool has_prefix(const char *s, size_t len, const char *p)
{
    size_t n = strlen(p);
    if (len < n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != p[i])
            return false;
    return true;
}

/* A DNS-style host: labels of [A-Za-z0-9-], separated by single dots, no
 * dot first or last. */
static bool host_name_ok(const char *h, size_t n)
{
    if (n == 0 || n > HOST_MAX || h[0] == '.' || h[n - 1] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (c == '.') {
            if (h[i + 1] == '.')
                return false;
        } else if (!is_alnum(c) && c != '-') {
            return false;
        }
    }
    return true;
}

/* "[...]": hex digits, ':' and '.' (an IPv4 tail) inside the brackets. */
static bool host_ipv6_ok(const char *h, size_t n)
{
    if (n < 4 || h[0] != '[' || h[n - 1] != ']')
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_hex(h[i]) && h[i] != ':' && h[i] != '.')
            return false;
    return true;
}

/*
 * Reads "scheme://authority" at the start of s (len bytes): the authority
 * ends at the end or at the first '/', '?' or '#'. Writes the canonical
 * origin and sets *used to the bytes read. False when it is not one.
 */
static bool read_origin(const char *s, size_t len, char out[WR_ORIGIN_MAX + 1], size_t *used)
{
    const char *scheme;
    size_t at;
    out[0] = '\0';
    if (has_prefix(s, len, "https://")) {
        scheme = "https";
        at = 8;
    } else if (has_prefix(s, len, "http://")) {
        scheme = "http";
        at = 7;
    } else {
        return false;
    }
    size_t end = at;
    while (end < len && s[end] != '/' && s[end] != '?' && s[end] != '#')
        end++;
    const char *auth = s + at;
    size_t alen = end - at;
    /* host, then an optional ":port"; for an IPv6 literal the port colon
     * follows the ']' */
    size_t hlen = alen;
    if (alen > 0 && auth[0] == '[') {
        const char *rb = memchr(auth, ']', alen);
        if (!rb)
            return false;
        hlen = (size_t)(rb - auth) + 1;
        if (hlen < alen && auth[hlen] != ':')
            return false;
        if (!host_ipv6_ok(auth, hlen))
            return false;
    } else {
        const char *colon = memchr(auth, ':', alen);
        if (colon)
            hlen = (size_t)(colon - auth);
        if (!host_name_ok(auth, hlen))
            return false;
    }
    long port = 0;
    if (hlen < alen) {
        const char *p = auth + hlen + 1;
        size_t plen = alen - hlen - 1;
        if (plen == 0 || plen > 5)
            return false;
        for (size_t i = 0; i < plen; i++) {
            if (p[i] < '0' || p[i] > '9')
                return false;
            port = port * 10 + (p[i] - '0');
        }
        if (port < 1 || port > 65535)
            return false;
        if ((port == 443 && scheme[4] == 's') || (port == 80 && scheme[4] == '\0'))
            port = 0;
    }
    char host[HOST_MAX + 1];
    if (hlen > HOST_MAX)
        return false;
    for (size_t i = 0; i < hlen; i++)
        host[i] = lower(auth[i]);
    host[hlen] = '\0';
    int n = port ? snprintf(out, WR_ORIGIN_MAX + 1, "%s://%s:%ld", scheme, host, port)
                 : snprintf(out, WR_ORIGIN_MAX + 1, "%s://%s", scheme, host);
    if (n < 0 || n > WR_ORIGIN_MAX) {
        out[0] = '\0';
        return false;
    }
    *used = end;
    return true;
}

bool wr_origin_parse(const char *s, size_t len, char out[WR_ORIGIN_MAX + 1])
{
    size_t used = 0;
    if (!out)
        return false;
    out[0] = '\0';
    if (!s || len > WR_ORIGIN_MAX || memchr(s, '\0', len))
        return false;
    if (!read_origin(s, len, out, &used) || used != len) {
        out[0] = '\0';
        return false;
    }
    return true;
}

/* Printable ASCII without '\', '"', '<', '>' over all of s. */
static bool url_bytes_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '<' || c == '>')
            return false;
    }
    return true;
}

bool wr_origin_of_url(const char *url, char out[WR_ORIGIN_MAX + 1])
{
    size_t used = 0;
    if (!out)
        return false;
    out[0] = '\0';
    if (!url || !url_bytes_ok(url, strlen(url)))
        return false;
    return read_origin(url, strlen(url), out, &used);
}

/* "/" followed by anything but '/' or '\'. */
static bool is_path(const char *u)
{
    return u[0] == '/' && u[1] != '/' && u[1] != '\\';
}

bool wr_origin_return_ok(const char *ret, size_t max_len, const char *target_url,
                         const char (*origins)[WR_ORIGIN_MAX + 1], size_t n)
{
    if (!ret || !*ret || !target_url)
        return false;
    size_t len = strnlen(ret, max_len + 1);
    if (len > max_len || !url_bytes_ok(ret, len))
        return false;
    if (is_path(ret))
        return is_path(target_url);
    char o[WR_ORIGIN_MAX + 1], t[WR_ORIGIN_MAX + 1];
    if (!wr_origin_of_url(ret, o))
        return false;
    if (wr_origin_of_url(target_url, t) && strcmp(o, t) == 0)
        return true;
    for (size_t i = 0; origins && i < n; i++)
        if (strcmp(o, origins[i]) == 0)
            return true;
    return false;
}

bool wr_origin_add_param(const char *url, const char *name, const char *value, char *out,
                         size_t cap)
{
    if (!url || !name || !value || !out || cap == 0)
        return false;
    const char *hash = strchr(url, '#');
    size_t base = hash ? (size_t)(hash - url) : strlen(url);
    const char *q = memchr(url, '?', base);
    const char *sep = !q ? "?" : (url[base - 1] == '?' || url[base - 1] == '&') ? "" : "&";
    int n = snprintf(out, cap, "%.*s%s%s=%s%s", (int)base, url, sep, name, value, hash ? hash : "");
    if (n < 0 || (size_t)n >= cap) {
        out[0] = '\0';
        return false;
    }
    return true;
}
