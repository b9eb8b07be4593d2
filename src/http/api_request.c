/*
 * api_request.c - the readers of a request that every route family shares,
 * and the cookies an answer sets: the bottom of the api module with
 * api_reply.c (the route families, api_entries.c and up, call down into
 * these two; nothing here calls up into a route family).
 *
 *   identity     wr_api__resolve_user: the identity header, or the signed
 *                wr_vid visitor cookie (current or previous key), minted
 *                for a join; the 400 of a bad one goes through api_reply.c
 *   cookies      the visitor cookie (wr_vid) and the pass (wr_token_{queue},
 *                Secure when the request came over TLS through a trusted
 *                proxy), and when a join's answer keeps its new visitor
 *   query        one decoded query parameter (never one holding a %00)
 *   bearer       "Authorization: Bearer X", and the admin key compared
 *                through HMACs in constant time
 *   secret       whether a token secret is installed
 *
 * The client address after trusted proxies (wr_api__client_addr) stays in
 * api_reply.c: the access log reads it for every answer.
 */
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http/api_internal.h"
#include "base/crypto.h"
#include "base/ids.h"
#include "http/http.h"

void wr_api__set_visitor_cookie(wr_api_t *a, wr_http_req_t *req, const char *value)
{
    char hdr[WR_IDENTITY_COOKIE_MAX + 96];
    snprintf(hdr, sizeof(hdr), "%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Lax%s",
             WR_VID_COOKIE_NAME, value, WR_VID_COOKIE_MAX_AGE,
             a->cfg->cookie_secure ? "; Secure" : "");
    wr_http_req_add_header(req, "Set-Cookie", hdr);
}

/* Whether a join answered err hands out the visitor cookie it minted: on
 * success, on a store timeout or outage, and on a late replica (the join
 * may have been applied, or was, and the retry must come back as the same
 * visitor). Not on a refusal (unknown queue, full line): an error creates
 * no visitor. */
bool wr_api__visitor_kept(wr_err_t err)
{
    return err == WR_OK || err == WR_ETIMEOUT || err == WR_EUNAVAILABLE || err == WR_EREPLICA ||
           err == WR_ESHARD;
}

/* Whether req came over TLS: waitroomd has no TLS listener of its own, so
 * that is a trusted proxy's "X-Forwarded-Proto: https" (its first value),
 * or the operator's cookie_secure. */
static bool request_secure(wr_api_t *a, wr_http_req_t *req)
{
    if (a->cfg->cookie_secure)
        return true;
    const char *xfp = wr_http_req_header(req, "X-Forwarded-Proto");
    if (!xfp)
        return false;
    while (*xfp == ' ' || *xfp == '\t')
        xfp++;
    if (evutil_ascii_strncasecmp(xfp, "https", 5) != 0 ||
        (xfp[5] && xfp[5] != ',' && xfp[5] != ' ' && xfp[5] != '\t'))
        return false;
    return wr_api__peer_trusted(a, req);
}

bool wr_api__peer_trusted(wr_api_t *a, wr_http_req_t *req)
{
    const char *peer = wr_http_req_peer(req, NULL);
    return peer &&
           wr_ratelimit_cidrs_match(a->cfg->trusted_proxies, a->cfg->n_trusted_proxies, peer);
}

/* The pass of an admitted user as cookie wr_token_{queue}, for a protected
 * service on the same host (an nginx gate reads it). */
void wr_api__set_token_cookie(wr_api__ctx_t *c, const char *token, int64_t expires_at_ms)
{
    char hdr[WR_TOKEN_MAX + 192];
    long long max_age = (long long)(expires_at_ms / 1000 - (int64_t)time(NULL));
    int n =
        snprintf(hdr, sizeof(hdr), "wr_token_%s=%s; Path=/; Max-Age=%lld; HttpOnly; SameSite=Lax%s",
                 c->queue, token, max_age > 0 ? max_age : 1,
                 request_secure(c->api, c->req) ? "; Secure" : "");
    if (n > 0 && (size_t)n < sizeof(hdr))
        wr_http_req_add_header(c->req, "Set-Cookie", hdr);
}

/* The value of query parameter name of req's URI, percent-decoded, into
 * out (cap bytes with NUL). False when absent, empty or too long. */
bool wr_api__query_param(wr_http_req_t *req, const char *name, char *out, size_t cap)
{
    const char *q = wr_http_req_query(req);
    struct evkeyvalq params;
    bool ok = false;
    /* A NUL would cut the decoded value short (?return=https://ok%00.evil
     * read as https://ok): a query with one is not read at all. */
    if (!q || strstr(q, "%00") || evhttp_parse_query_str(q, &params) != 0)
        return false;
    const char *v = evhttp_find_header(&params, name);
    if (v && *v && strlen(v) < cap) {
        memcpy(out, v, strlen(v) + 1);
        ok = true;
    }
    evhttp_clear_headers(&params);
    return ok;
}

bool wr_api__query_names(const char *q, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = q; p && *p; p = strchr(p, '&'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, n) == 0 && p[n] == '=')
            return true;
    }
    return false;
}

/* Finds the user for a request (api_internal.h). */
int wr_api__resolve_user(wr_api_t *a, wr_http_req_t *req, wr_route_t route, bool create,
                         char user[WR_USER_ID_MAX + 1], char cookie_out[WR_IDENTITY_COOKIE_MAX + 1])
{
    cookie_out[0] = 0;
    if (a->cfg->identity == WR_IDENTITY_HEADER) {
        const char *v = wr_http_req_header(req, a->cfg->identity_header);
        if (!v || !*v || !wr_ids_valid_user(v)) {
            wr_api__reply_error(a, req, route, 400, "INVALID_USER_ID",
                                !v || !*v ? "missing identity header" : "invalid user id", NULL,
                                NULL, 0);
            return 1;
        }
        wr_api__copy(user, WR_USER_ID_MAX + 1, v);
        return 0;
    }
    /* Every Cookie field, every wr_vid in it: the first that verifies under
     * the current or the previous key (rotation) is the visitor. */
    wr_identity_keys_t keys = {a->cookie_key, a->cookie_key_len,
                               a->has_prev_cookie_key ? a->prev_cookie_key : NULL,
                               sizeof(a->prev_cookie_key)};
    wr_identity_visitor_t vis;
    int64_t now_s = (int64_t)time(NULL);
    if (wr_http_visitor(req, &keys, &vis)) {
        snprintf(user, WR_USER_ID_MAX + 1, "%s", vis.user); /* the vid, or an invited account */
        if (create || (route == WR_ROUTE_STATUS && wr_identity_should_renew(&vis, now_s)))
            wr_identity_resign(a->cookie_key, a->cookie_key_len, &vis, now_s, cookie_out);
        return 0;
    }
    if (!create)
        return 2; /* no visitor: the caller answers (the queue may not exist either) */
    char vid[WR_VID_LEN + 1];
    if (wr_identity_mint(a->cookie_key, a->cookie_key_len, now_s, vid, cookie_out) != WR_OK) {
        wr_api__reply_error(a, req, route, 500, "INTERNAL", "could not create a visitor", NULL,
                            NULL, 0);
        return 1;
    }
    snprintf(user, WR_USER_ID_MAX + 1, "%s", vid);
    return 3;
}

bool wr_api__bearer(const wr_http_req_t *req, const char **tok, size_t *len)
{
    const char *v = wr_http_req_header(req, "Authorization");
    if (!v)
        return false;
    if (strncasecmp(v, "Bearer ", 7) != 0)
        return false;
    v += 7;
    while (*v == ' ')
        v++;
    *tok = v;
    *len = strlen(v);
    return *len > 0;
}

bool wr_api__admin_ok(wr_api_t *a, wr_http_req_t *req)
{
    if (!a->admin_enabled)
        return false;
    const char *tok;
    size_t len;
    if (!wr_api__bearer(req, &tok, &len))
        return false;
    uint8_t mac[WR_CRYPTO_MAC_LEN];
    if (wr_crypto_hmac_sha256(a->admin_mac_key, sizeof(a->admin_mac_key), tok, len, mac) != WR_OK)
        return false;
    return wr_crypto_equal(mac, a->admin_mac, sizeof mac);
}

bool wr_api_has_secret(const wr_api_t *a)
{
    return a->secret_len > 0;
}
