/*
 * fuzz_cookie.c - libFuzzer target: header parsing outside libevent: the
 * Cookie header reader and the signed visitor cookie
 * (wr_identity_next_cookie, wr_identity_verify, wr_identity_find_visitor
 * under a current and a previous key), and the
 * X-Forwarded-For / trusted-proxy parsing (wr_ratelimit_cidrs_parse,
 * wr_ratelimit_client_addr). The input is split at the first NUL: the
 * first part is the header, the second a CIDR list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/identity.h"
#include "core/ratelimit.h"

static const uint8_t KEY[] = "fuzz-cookie-key-0123456789abcdef";
static const uint8_t KEY2[] = "fuzz-cookie-key-previous-0123456";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *hdr = malloc(size + 1);
    if (!hdr)
        return 0;
    memcpy(hdr, data, size);
    hdr[size] = '\0';
    size_t hl = strlen(hdr);
    const char *cidrs = hl < size ? hdr + hl + 1 : "";

    size_t len = 0, pos = 0;
    const char *v;
    while ((v = wr_identity_next_cookie(hdr, WR_VID_COOKIE_NAME, &pos, &len)) != NULL) {
        if (v < hdr || v + len > hdr + hl || pos > hl + 1)
            abort(); /* must point into the header, and advance */
        wr_identity_visitor_t vis;
        if (wr_identity_verify(KEY, sizeof(KEY) - 1, v, len, &vis) && vis.issued_s > 0) {
            char again[WR_VID_COOKIE_LEN + 1];
            if (wr_identity_sign(KEY, sizeof(KEY) - 1, vis.vid, vis.issued_s, again) != WR_OK ||
                strlen(again) != len || memcmp(again, v, len) != 0)
                abort(); /* one accepted spelling per visitor and time */
        }
    }
    wr_identity_keys_t keys = {KEY, sizeof(KEY) - 1, KEY2, sizeof(KEY2) - 1};
    wr_identity_visitor_t vis;
    unsigned budget = WR_VID_CANDIDATES_MAX;
    if (wr_identity_find_visitor(&keys, hdr, &budget, &vis) && strlen(vis.vid) != WR_VID_LEN)
        abort();
    if (budget > WR_VID_CANDIDATES_MAX)
        abort();
    /* the whole input as a cookie value too */
    (void)wr_identity_verify(KEY, sizeof(KEY) - 1, (const char *)data, size, &vis);

    wr_cidr_t nets[WR_RATELIMIT_CIDRS_MAX];
    size_t n = 0;
    char bad[64], out[64];
    if (wr_ratelimit_cidrs_parse(cidrs, nets, WR_RATELIMIT_CIDRS_MAX, &n, bad, sizeof(bad)) !=
        WR_OK)
        n = 0;
    wr_ratelimit_client_addr("127.0.0.1", hdr, nets, n, out, sizeof(out));
    if (strlen(out) >= sizeof(out))
        abort();
    (void)wr_ratelimit_cidrs_match(nets, n, hdr);
    free(hdr);
    return 0;
}
