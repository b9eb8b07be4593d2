/*
 * rng.h - fast, non-cryptographic random numbers: xorshift64* (Vigna,
 * "An experimental exploration of Marsaglia's xorshift generators,
 * scrambled", 2016), one 64-bit word of state, period 2^64 - 1. For spread,
 * never for secrecy: poll jitter, reconnect backoff jitter, skiplist
 * levels. Secrets, ids and tokens take crypto.h's random bytes.
 *
 * Also where a module gets the seed or key material that must exist even
 * when the system's entropy source fails (hash-table keys, generator
 * seeds): wr_rng_entropy.
 *
 * A generator is plain data owned by its user (embed it); not thread-safe.
 */
#ifndef WR_RNG_H
#define WR_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t s; /* never 0 once seeded */
} wr_rng_t;

/* Seeds r with seed; 0 (which xorshift cannot leave) is replaced by a
 * fixed non-zero constant. The same seed gives the same sequence. */
void wr_rng_seed(wr_rng_t *r, uint64_t seed);

/* Seeds r from wr_rng_entropy: a different sequence in every process. */
void wr_rng_seed_random(wr_rng_t *r);

/* The next 64 random bits. r must have been seeded. */
static inline uint64_t wr_rng_next(wr_rng_t *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* A uniform double in [0, 1) (the top 53 bits of wr_rng_next). */
double wr_rng_unit(wr_rng_t *r);

/*
 * Fills buf with n bytes for keys and seeds: cryptographically random
 * (crypto.h) when the system can give them, else - never failing - bytes
 * mixed from both clocks, buf's address and a per-process counter, which
 * still differ between tables and processes.
 */
void wr_rng_entropy(void *buf, size_t n);

#endif
