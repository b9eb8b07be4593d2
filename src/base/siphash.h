/*
 * siphash.h - SipHash-1-3 (Aumasson and Bernstein; the variant Rust and
 * Python use for their hash tables): a keyed 64-bit hash of a byte string.
 * Under a secret random key, an attacker who chooses the strings (user ids,
 * client addresses) cannot make them collide on purpose, so the tables
 * keyed by them (idhash, ratelimit, qmap) keep O(1) lookups.
 *
 * Pure: no state, no allocation. Not a MAC: use crypto.h for that.
 */
#ifndef WR_SIPHASH_H
#define WR_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* SipHash-1-3 of data (len bytes; data may be NULL when len is 0) under
 * the 128-bit key (k0, k1), k0 holding key bytes 0..7 little-endian. */
uint64_t wr_siphash13(uint64_t k0, uint64_t k1, const void *data, size_t len);

#endif
