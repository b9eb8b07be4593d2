/*
 * rng.c - seeding of the xorshift64* generator (rng.h) and the never
 * failing entropy for keys and seeds.
 *
 * The fallback of wr_rng_entropy runs only when OpenSSL's RAND_bytes fails
 * (no entropy yet at early boot): it feeds both clocks, the buffer's
 * address and a counter through splitmix64, so two tables created in the
 * same microsecond still get different keys. Not secret, but never
 * constant.
 */
#include "base/rng.h"

#include <string.h>

#include "base/clock.h"
#include "base/crypto.h"

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15) /* 2^64 / phi: splitmix64's increment */

void wr_rng_seed(wr_rng_t *r, uint64_t seed)
{
    r->s = seed ? seed : GOLDEN;
}

void wr_rng_seed_random(wr_rng_t *r)
{
    uint64_t seed;
    wr_rng_entropy(&seed, sizeof seed);
    wr_rng_seed(r, seed);
}

double wr_rng_unit(wr_rng_t *r)
{
    return (double)(wr_rng_next(r) >> 11) / 9007199254740992.0; /* 2^53 */
}

/* splitmix64 (Steele, Lea, Flood 2014): a good 64-bit mixer. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += GOLDEN);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void wr_rng_entropy(void *buf, size_t n)
{
    static uint64_t counter;

    if (wr_crypto_random(buf, n) == WR_OK)
        return;
    uint64_t x = (uint64_t)wr_clock_wall_us() ^ ((uint64_t)wr_clock_mono_us() << 20) ^
                 (uint64_t)(uintptr_t)buf ^ (++counter * GOLDEN);
    unsigned char *p = buf;
    while (n > 0) {
        uint64_t v = splitmix64(&x);
        size_t k = n < sizeof v ? n : sizeof v;
        memcpy(p, &v, k);
        p += k;
        n -= k;
    }
}
