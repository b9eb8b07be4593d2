/*
 * fuzz_token.c - libFuzzer target: JWT verification (wr_token_verify_keys,
 * wr_token_verify) on arbitrary bytes, with a keyring of two keys. A token
 * that verifies must have well-formed claims, and re-signing its claims
 * with the key that verified it must give a token that verifies again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/token.h"

static const uint8_t K1[] = "fuzz-current-secret-0123456789abcdef";
static const uint8_t K2[] = "fuzz-previous-secret-0123456789abcdef";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static wr_token_key_t ring[2];
    static int init;
    if (!init) {
        ring[0] = (wr_token_key_t){K1, sizeof(K1) - 1, ""};
        ring[1] = (wr_token_key_t){K2, sizeof(K2) - 1, ""};
        wr_token_kid(K1, sizeof(K1) - 1, ring[0].kid);
        wr_token_kid(K2, sizeof(K2) - 1, ring[1].kid);
        init = 1;
    }
    wr_token_claims_t c;
    memset(&c, 0, sizeof(c));
    wr_token_reason_t r = wr_token_verify_keys((const char *)data, size, ring, 2, 0, &c);
    if (r == WR_TOKEN_OK) {
        if (strlen(c.queue) == 0 || strlen(c.user) == 0 || strlen(c.jti) == 0)
            abort();
        char tok[WR_TOKEN_MAX + 1];
        if (wr_token_sign_key(&c, &ring[0], tok, sizeof(tok)) == WR_OK &&
            wr_token_verify_keys(tok, strlen(tok), ring, 2, 0, NULL) != WR_TOKEN_OK)
            abort();
    }
    (void)wr_token_verify((const char *)data, size, K1, sizeof(K1) - 1, 0, NULL);
    (void)wr_token_reason_name(r);
    return 0;
}
