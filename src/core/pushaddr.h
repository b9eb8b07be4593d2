/*
 * pushaddr.h - where a Web Push may go (docs/API.md 1.3, "Your turn, off
 * the page: Web Push" and "Push, safely"): the endpoint URL's parts, the
 * `--push-allow-host HOST[:PORT]` list, and the rules every address the
 * endpoint's host resolves to must pass before a connection is made.
 *
 * An endpoint is a capability URL the browser's push service gave; the
 * server POSTs to it. Unchecked it would let anyone who can subscribe make
 * the server send requests to its own network (SSRF). So:
 *   - the scheme is https://, or http:// for a listed host only;
 *   - the port is 443, or the URL's host and port are listed;
 *   - every resolved address is public: not loopback, private (10/8,
 *     172.16/12, 192.168/16), link-local (169.254/16, fe80::/10),
 *     unique-local (fc00::/7), multicast (224/4, ff00::/8), unspecified
 *     (0.0.0.0/8, ::), shared (100.64/10), 192.0.0.0/24, 198.18/15,
 *     240/4, nor an IPv6 form that embeds a refused IPv4 (::ffff:0:0/96,
 *     64:ff9b::/96, 2002::/16, and the old ::/96) - unless the host is
 *     listed, which lifts the address rule for it (tests, private push
 *     services).
 * The sender (http/pushsend.c) resolves once, checks every address here,
 * and connects to a checked one, so a second lookup cannot change it.
 *
 * Pure: no I/O, no allocation; addresses are raw network-order bytes.
 */
#ifndef WR_PUSHADDR_H
#define WR_PUSHADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_PUSHADDR_ENDPOINT_MAX 1024 /* bytes of an endpoint, without NUL */
#define WR_PUSHADDR_HOST_MAX     255  /* bytes of a host, without brackets or NUL */
#define WR_PUSHADDR_ORIGIN_MAX   300  /* bytes of an origin, without NUL */
#define WR_PUSHADDR_ALLOW_MAX    32   /* entries of --push-allow-host */

/* An endpoint's parts. */
typedef struct wr_pushaddr_url {
    bool https;                                /* else http:// */
    bool ip_literal;                           /* the host is an IPv4 or [IPv6] literal */
    char host[WR_PUSHADDR_HOST_MAX + 1];       /* lowercase, without brackets */
    uint16_t port;                             /* the URL's, else 443 / 80 */
    char origin[WR_PUSHADDR_ORIGIN_MAX + 1];   /* scheme://host[:port], lowercase, the default
                                                  port left out: the VAPID audience */
    char authority[WR_PUSHADDR_HOST_MAX + 10]; /* host[:port] as the Host header carries it */
    char target[WR_PUSHADDR_ENDPOINT_MAX + 1]; /* path and query ("/" when empty) */
} wr_pushaddr_url_t;

/*
 * The parts of an endpoint (a NUL-terminated absolute URL): "https://" or
 * "http://" (any case), a host (a name of letters, digits, '-', '.', '_';
 * a dotted IPv4; or an IPv6 literal in brackets, no zone), an optional
 * port 1..65535, then a path and query of printable ASCII; no user info,
 * no fragment, no spaces or controls, at most WR_PUSHADDR_ENDPOINT_MAX
 * bytes. WR_OK, or WR_EINVAL (u left zeroed) for anything else.
 */
wr_err_t wr_pushaddr_parse(const char *endpoint, wr_pushaddr_url_t *u);

/* The --push-allow-host list: listed hosts (and ports). Zero it to start. */
typedef struct wr_pushaddr_allow {
    size_t n;
    struct {
        char host[WR_PUSHADDR_HOST_MAX + 1]; /* lowercase, without brackets */
        uint16_t port;                       /* 0: the scheme's default port (443, 80) */
    } e[WR_PUSHADDR_ALLOW_MAX];
} wr_pushaddr_allow_t;

/*
 * Adds "HOST[:PORT]" ("push.test", "127.0.0.1:8080", "[::1]:8443", "::1")
 * to a. WR_OK, WR_EINVAL (malformed, port 0 or > 65535) or WR_ELIMIT
 * (WR_PUSHADDR_ALLOW_MAX entries already).
 */
wr_err_t wr_pushaddr_allow_add(wr_pushaddr_allow_t *a, const char *spec);

/* True when u's host and port are listed in a (NULL: an empty list). */
bool wr_pushaddr_listed(const wr_pushaddr_allow_t *a, const wr_pushaddr_url_t *u);

/* Why a push may not go somewhere (WR_PUSHADDR_OK: it may). */
typedef enum {
    WR_PUSHADDR_OK = 0,
    WR_PUSHADDR_SCHEME,  /* http:// to a host not listed */
    WR_PUSHADDR_PORT,    /* a port other than 443 not listed with its host */
    WR_PUSHADDR_ADDRESS, /* an address the rules refuse (see wr_pushaddr_refused) */
} wr_pushaddr_verdict_t;

/* "ok", "scheme", "port", "address". */
const char *wr_pushaddr_verdict_name(wr_pushaddr_verdict_t v);

/*
 * The checks made before resolving: the scheme, the port, and an IP
 * literal host's address. WR_PUSHADDR_OK when the push may go on to
 * resolve (a listed host always may, on its listed port).
 */
wr_pushaddr_verdict_t wr_pushaddr_check_url(const wr_pushaddr_allow_t *a,
                                            const wr_pushaddr_url_t *u);

/*
 * The address rule: NULL when addr may be pushed to, else the name of the
 * rule that refuses it ("loopback", "private", "linkLocal", "uniqueLocal",
 * "multicast", "unspecified", "shared", "reserved", "benchmark",
 * "ietfProtocol", "embeddedV4"). family is 4 (addr: 4 bytes) or 6 (16
 * bytes); any other family is refused ("family").
 */
const char *wr_pushaddr_refused(int family, const uint8_t *addr);

/* The check of one resolved address of u's host: WR_PUSHADDR_OK for a
 * listed host or an address wr_pushaddr_refused lets through. */
wr_pushaddr_verdict_t wr_pushaddr_check_ip(const wr_pushaddr_allow_t *a, const wr_pushaddr_url_t *u,
                                           int family, const uint8_t *addr);

#endif
