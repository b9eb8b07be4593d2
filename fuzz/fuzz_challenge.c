/*
 * fuzz_challenge.c - libFuzzer target: join challenges (core/challenge.h)
 * from outside input. The input is split at the first NUL: the first part
 * is the challenge, the second the nonce. Checked under two keys for a
 * fixed caller and queue; only a challenge issued by a key may get past
 * "malformed", and a result is always one of the reasons. A challenge
 * issued for the input's own bytes as a nonce must check as issued.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/challenge.h"

static const uint8_t SECRET[] = "fuzz-challenge-secret-0123456789";
static const uint8_t SECRET2[] = "fuzz-challenge-previous-01234567";
#define NOW 1764460800000LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static wr_challenge_key_t *keys[2];
    if (!keys[0]) {
        keys[0] = wr_challenge_key_new(SECRET, sizeof SECRET - 1);
        keys[1] = wr_challenge_key_new(SECRET2, sizeof SECRET2 - 1);
        if (!keys[0] || !keys[1])
            abort();
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t clen = nul ? (size_t)(nul - data) : size;
    const char *nonce = nul ? (const char *)nul + 1 : "";
    size_t nlen = nul ? size - clen - 1 : 0;
    wr_challenge_reason_t r = wr_challenge_check(keys, 2, "sale", "visitor-1", (const char *)data,
                                                 clen, nonce, nlen, 4, NOW);
    if ((unsigned)r >= WR_CHALLENGE_N_REASONS)
        abort();
    if (r == WR_CHALLENGE_OK || r == WR_CHALLENGE_EXPIRED || r == WR_CHALLENGE_WRONG_USER ||
        r == WR_CHALLENGE_INSUFFICIENT)
        abort(); /* the input cannot hold a valid tag: only missing or malformed */
    int64_t exp = wr_challenge_expires_at((const char *)data, clen);
    if (exp == 0 || exp < -1)
        abort();
    /* a real challenge with the input's nonce: never malformed unless the nonce is */
    char c[WR_CHALLENGE_MAX + 1];
    if (wr_challenge_issue(keys[1], "sale", "visitor-1", 0, NOW + 1000, c) != WR_OK)
        abort();
    r = wr_challenge_check(keys, 2, "sale", "visitor-1", c, strlen(c), nonce, nlen, 0, NOW);
    int nonce_ok = nlen >= 1 && nlen <= WR_CHALLENGE_NONCE_MAX;
    for (size_t i = 0; nonce_ok && i < nlen; i++) {
        char ch = nonce[i];
        nonce_ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    }
    if (r != (nonce_ok ? WR_CHALLENGE_OK : WR_CHALLENGE_MALFORMED))
        abort();
    return 0;
}
