/*
 * pushaddr.c - the endpoint URL, the allow list and the address rules of
 * Web Push (pushaddr.h).
 *
 * The URL grammar is deliberately narrower than RFC 3986: what push
 * services hand out (https://fcm.googleapis.com/fcm/send/..., https://
 * updates.push.services.mozilla.com/wpush/v2/..., https://web.push.apple
 * .com/..., https://<region>.notify.windows.com/w/?token=...) and nothing that
 * parsers disagree on: no user info, no percent-encoded or non-ASCII
 * host, no zone id, no fragment. A host whose last label starts with a
 * digit must be a dotted-quad IPv4 (inet_pton's strict form): "127.1",
 * "0x7f.0.0.1" or "2130706433" are refused, because some resolvers read
 * them as addresses that the rule would then have to guess at.
 *
 * The address rule is a table of prefixes per family; an IPv6 address in
 * a prefix that embeds an IPv4 address is checked again as that IPv4.
 */
#include "core/pushaddr.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct prefix {
    uint8_t bytes[16];
    unsigned bits;
    const char *why;
    int v4_at; /* >= 0: an embedded IPv4 starts at this byte (checked again) */
};

static const struct prefix v4_refused[] = {
    {{0}, 8, "unspecified", -1},           /* 0.0.0.0/8 */
    {{10}, 8, "private", -1},              /* 10.0.0.0/8 */
    {{100, 64}, 10, "shared", -1},         /* 100.64.0.0/10 */
    {{127}, 8, "loopback", -1},            /* 127.0.0.0/8 */
    {{169, 254}, 16, "linkLocal", -1},     /* 169.254.0.0/16 */
    {{172, 16}, 12, "private", -1},        /* 172.16.0.0/12 */
    {{192, 0, 0}, 24, "ietfProtocol", -1}, /* 192.0.0.0/24 */
    {{192, 168}, 16, "private", -1},       /* 192.168.0.0/16 */
    {{198, 18}, 15, "benchmark", -1},      /* 198.18.0.0/15 */
    {{224}, 4, "multicast", -1},           /* 224.0.0.0/4 */
    {{240}, 4, "reserved", -1},            /* 240.0.0.0/4, broadcast too */
};

static const struct prefix v6_refused[] = {
    {{0}, 128, "unspecified", -1},                                           /* :: */
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, "loopback", -1}, /* ::1 */
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, "embeddedV4", 12},      /* ::ffff:0:0/96 */
    {{0, 0x64, 0xff, 0x9b}, 96, "embeddedV4", 12},                           /* 64:ff9b::/96 */
    {{0x20, 0x02}, 16, "embeddedV4", 2},                                     /* 2002::/16 (6to4) */
    {{0}, 96, "embeddedV4", 12},         /* ::/96 (IPv4-compatible) */
    {{0xfc}, 7, "uniqueLocal", -1},      /* fc00::/7 */
    {{0xfe, 0x80}, 10, "linkLocal", -1}, /* fe80::/10 */
    {{0xff}, 8, "multicast", -1},        /* ff00::/8 */
};

static bool in_prefix(const uint8_t *addr, const struct prefix *p)
{
    unsigned full = p->bits / 8, rest = p->bits % 8;
    if (memcmp(addr, p->bytes, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (addr[full] & mask) == (p->bytes[full] & mask);
}

const char *wr_pushaddr_refused(int family, const uint8_t *addr)
{
    if (!addr || (family != 4 && family != 6))
        return "family";
    const struct prefix *t = family == 4 ? v4_refused : v6_refused;
    size_t n = family == 4 ? sizeof v4_refused / sizeof v4_refused[0]
                           : sizeof v6_refused / sizeof v6_refused[0];
    for (size_t i = 0; i < n; i++) {
        if (!in_prefix(addr, &t[i]))
            continue;
        if (t[i].v4_at < 0)
            return t[i].why;
        /* an embedded IPv4: refused when that IPv4 is */
        return wr_pushaddr_refused(4, addr + t[i].v4_at) ? t[i].why : NULL;
    }
    return NULL;
}

const char *wr_pushaddr_verdict_name(wr_pushaddr_verdict_t v)
{
    switch (v) {
    case WR_PUSHADDR_OK:
        return "ok";
    case WR_PUSHADDR_SCHEME:
        return "scheme";
    case WR_PUSHADDR_PORT:
        return "port";
    case WR_PUSHADDR_ADDRESS:
        return "address";
    }
    return "unknown";
}

static bool name_char(int c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_';
}

/* Parses a host of n bytes at h (brackets around an IPv6 literal) into
 * host (lowercase, no brackets); *ip set for a literal. */
static bool parse_host(const char *h, size_t n, char *host, bool *ip)
{
    uint8_t a[16];
    if (n == 0)
        return false;
    if (h[0] == '[') {
        if (n < 3 || h[n - 1] != ']' || n - 2 > 45)
            return false;
        memcpy(host, h + 1, n - 2);
        host[n - 2] = '\0';
        for (char *p = host; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        *ip = true;
        return inet_pton(AF_INET6, host, a) == 1;
    }
    if (n > WR_PUSHADDR_HOST_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!name_char((unsigned char)h[i]))
            return false;
        host[i] = (char)tolower((unsigned char)h[i]);
    }
    host[n] = '\0';
    if (host[0] == '.' || strstr(host, ".."))
        return false;
    /* a last label (before an optional final dot) starting with a digit:
     * a dotted-quad IPv4 or nothing */
    size_t end = n;
    if (host[end - 1] == '.')
        end--;
    size_t last = end;
    while (last > 0 && host[last - 1] != '.')
        last--;
    *ip = false;
    if (last < end && isdigit((unsigned char)host[last])) {
        if (end != n) /* "1.2.3.4." */
            return false;
        *ip = true;
        return inet_pton(AF_INET, host, a) == 1;
    }
    return end > 0;
}

/* Parses a decimal port (n bytes, 1..65535, no sign or leading zeros). */
static bool parse_port(const char *p, size_t n, uint16_t *port)
{
    if (n == 0 || n > 5 || p[0] == '0')
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)p[i]))
            return false;
        v = v * 10 + (unsigned)(p[i] - '0');
    }
    if (v == 0 || v > 65535)
        return false;
    *port = (uint16_t)v;
    return true;
}

/* Splits "host[:port]" (n bytes) at its port colon: the host's length,
 * and the port's start (NULL: no port). Brackets keep an IPv6's colons. */
static size_t split_port(const char *s, size_t n, const char **port)
{
    *port = NULL;
    const char *c;
    if (n && s[0] == '[') {
        const char *e = memchr(s, ']', n);
        if (!e)
            return n;
        c = (size_t)(e + 1 - s) < n && e[1] == ':' ? e + 1 : NULL;
    } else {
        c = memchr(s, ':', n);
    }
    if (!c)
        return n;
    *port = c + 1;
    return (size_t)(c - s);
}

wr_err_t wr_pushaddr_parse(const char *endpoint, wr_pushaddr_url_t *u)
{
    if (!u)
        return WR_EINVAL;
    memset(u, 0, sizeof *u);
    if (!endpoint)
        return WR_EINVAL;
    size_t len = strlen(endpoint);
    if (len > WR_PUSHADDR_ENDPOINT_MAX)
        return WR_EINVAL;
    for (size_t i = 0; i < len; i++)
        if (endpoint[i] <= ' ' || endpoint[i] > '~' || endpoint[i] == '#' || endpoint[i] == '\\')
            goto bad;
    const char *p;
    if (strncasecmp(endpoint, "https://", 8) == 0) {
        u->https = true;
        p = endpoint + 8;
    } else if (strncasecmp(endpoint, "http://", 7) == 0) {
        p = endpoint + 7;
    } else {
        goto bad;
    }
    size_t alen = strcspn(p, "/?");
    if (memchr(p, '@', alen))
        goto bad;
    const char *port = NULL;
    size_t hlen = split_port(p, alen, &port);
    if (!parse_host(p, hlen, u->host, &u->ip_literal))
        goto bad;
    u->port = u->https ? 443 : 80;
    bool explicit_port = port != NULL;
    if (port && !parse_port(port, alen - (size_t)(port - p), &u->port))
        goto bad;
    bool v6 = strchr(u->host, ':') != NULL;
    bool dflt = !explicit_port || u->port == (u->https ? 443 : 80);
    char ports[8] = "";
    if (!dflt)
        snprintf(ports, sizeof ports, ":%u", (unsigned)u->port);
    snprintf(u->authority, sizeof u->authority, "%s%s%s%s", v6 ? "[" : "", u->host, v6 ? "]" : "",
             ports);
    snprintf(u->origin, sizeof u->origin, "%s://%s", u->https ? "https" : "http", u->authority);
    const char *t = p + alen;
    if (*t == '/')
        snprintf(u->target, sizeof u->target, "%s", t);
    else
        snprintf(u->target, sizeof u->target, "/%s", t); /* "" or "?query" */
    return WR_OK;
bad:
    memset(u, 0, sizeof *u);
    return WR_EINVAL;
}

wr_err_t wr_pushaddr_allow_add(wr_pushaddr_allow_t *a, const char *spec)
{
    if (!a || !spec)
        return WR_EINVAL;
    size_t n = strlen(spec);
    const char *port = NULL;
    char host[WR_PUSHADDR_HOST_MAX + 1];
    bool ip = false;
    uint16_t pn = 0;
    /* a bare IPv6 ("::1") has colons and no brackets: all host */
    size_t hlen =
        spec[0] != '[' && strchr(spec, ':') != strrchr(spec, ':') ? n : split_port(spec, n, &port);
    if (hlen == n && spec[0] != '[' && strchr(spec, ':')) {
        char br[WR_PUSHADDR_HOST_MAX + 3];
        if (n > 45)
            return WR_EINVAL;
        snprintf(br, sizeof br, "[%s]", spec);
        if (!parse_host(br, n + 2, host, &ip))
            return WR_EINVAL;
    } else if (!parse_host(spec, hlen, host, &ip)) {
        return WR_EINVAL;
    }
    if (port && !parse_port(port, n - (size_t)(port - spec), &pn))
        return WR_EINVAL;
    if (a->n >= WR_PUSHADDR_ALLOW_MAX)
        return WR_ELIMIT;
    memcpy(a->e[a->n].host, host, strlen(host) + 1);
    a->e[a->n].port = pn;
    a->n++;
    return WR_OK;
}

bool wr_pushaddr_listed(const wr_pushaddr_allow_t *a, const wr_pushaddr_url_t *u)
{
    if (!a || !u)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->e[i].host, u->host) != 0)
            continue;
        uint16_t want = a->e[i].port ? a->e[i].port : (u->https ? 443 : 80);
        if (want == u->port)
            return true;
    }
    return false;
}

/* The address of an IP literal host: its family (4, 6) and bytes. */
static int literal(const char *host, uint8_t *addr)
{
    if (inet_pton(AF_INET, host, addr) == 1)
        return 4;
    if (inet_pton(AF_INET6, host, addr) == 1)
        return 6;
    return 0;
}

wr_pushaddr_verdict_t wr_pushaddr_check_url(const wr_pushaddr_allow_t *a,
                                            const wr_pushaddr_url_t *u)
{
    if (!u || !u->host[0])
        return WR_PUSHADDR_ADDRESS;
    if (wr_pushaddr_listed(a, u))
        return WR_PUSHADDR_OK;
    if (!u->https)
        return WR_PUSHADDR_SCHEME;
    if (u->port != 443)
        return WR_PUSHADDR_PORT;
    uint8_t addr[16];
    int fam = u->ip_literal ? literal(u->host, addr) : 0;
    if (u->ip_literal && wr_pushaddr_refused(fam, addr))
        return WR_PUSHADDR_ADDRESS;
    return WR_PUSHADDR_OK;
}

wr_pushaddr_verdict_t wr_pushaddr_check_ip(const wr_pushaddr_allow_t *a, const wr_pushaddr_url_t *u,
                                           int family, const uint8_t *addr)
{
    wr_pushaddr_verdict_t v = wr_pushaddr_check_url(a, u);
    if (v != WR_PUSHADDR_OK || wr_pushaddr_listed(a, u))
        return v;
    return wr_pushaddr_refused(family, addr) ? WR_PUSHADDR_ADDRESS : WR_PUSHADDR_OK;
}
