/*
 * fuzz_cookie.c - libFuzzer target: header parsing outside libevent: the
 * Cookie header reader and the signed visitor cookie
 * (wr_identity_find_cookie, wr_identity_verify_cookie), and the
 * X-Forwarded-For / trusted-proxy parsing (wr_ratelimit_cidrs_parse,
 * wr_ratelimit_client_addr). The input is split at the first NUL: the
 * first part is the header, the second a CIDR list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "identity.h"
#include "ratelimit.h"

static const uint8_t KEY[] = "fuzz-cookie-key-0123456789abcdef";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *hdr = malloc(size + 1);
    if (!hdr)
        return 0;
    memcpy(hdr, data, size);
    hdr[size] = '\0';
    size_t hl = strlen(hdr);
    const char *cidrs = hl < size ? hdr + hl + 1 : "";

    size_t len = 0;
    const char *v = wr_identity_find_cookie(hdr, WR_VID_COOKIE_NAME, &len);
    if (v) {
        if (v < hdr || v + len > hdr + hl)
            abort(); /* must point into the header */
        char vid[WR_VID_LEN + 1];
        if (wr_identity_verify_cookie(KEY, sizeof(KEY) - 1, v, len, vid)) {
            char again[WR_VID_COOKIE_LEN + 1];
            if (wr_identity_sign_vid(KEY, sizeof(KEY) - 1, vid, again) != WR_OK ||
                memcmp(again, v, WR_VID_COOKIE_LEN) != 0)
                abort(); /* one accepted spelling per visitor */
        }
    }
    /* the whole input as a cookie value too */
    char vid[WR_VID_LEN + 1];
    (void)wr_identity_verify_cookie(KEY, sizeof(KEY) - 1, (const char *)data, size, vid);

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
