/*
 * unit_sha.h - the one SHA-256 hasher of a unit test binary whose tests all
 * hash (test_tlog, test_logreplay): sha, made by the group setup
 * sha_setup() before the first test and freed by sha_teardown() after the
 * last:
 *
 *   WR_UNIT_MAIN(sha_setup, sha_teardown, cmocka_unit_test(test_a), ...)
 *
 * Include it once, in the test's .c file.
 */
#ifndef WR_UNIT_SHA_H
#define WR_UNIT_SHA_H

#include "base/crypto.h"

static wr_crypto_sha256_t *sha;

static int sha_setup(void **state)
{
    (void)state;
    sha = wr_crypto_sha256_new();
    return sha ? 0 : -1;
}

static int sha_teardown(void **state)
{
    (void)state;
    wr_crypto_sha256_free(sha);
    return 0;
}

#endif
