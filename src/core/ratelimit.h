/*
 * ratelimit.h - abuse controls: per-key token buckets and poll pacing in a
 * bounded table, and the client address behind trusted proxies. Pure: no
 * libevent, no I/O; the clock is injected so tests control time.
 *
 * A limiter is a table of at most max_keys entries keyed by arbitrary bytes
 * (an address, or "queue\0user"). Keys are reduced to a 128-bit SipHash
 * digest under a random per-limiter key, so the memory per entry is fixed
 * and an attacker cannot aim hash collisions. When the table is full the
 * least recently used entry is evicted (a flood of spoofed keys costs
 * memory never, only the eviction of idle entries), counted in
 * wr_ratelimit_evictions.
 *
 * Two uses of the same table:
 *   - token bucket (wr_ratelimit_take): rate tokens per second, at most
 *     burst; a new key starts full. Joins per client address.
 *   - poll pacing (wr_ratelimit_pace_*): after each answer the caller notes
 *     the earliest time the identity should poll again; a poll before that
 *     time spends one "early" credit from a bucket of the same rate/burst;
 *     with no credit left it is refused with the time left until the
 *     earliest allowed poll.
 */
#ifndef WR_RATELIMIT_H
#define WR_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_RATELIMIT_KEYS_DEFAULT 65536
#define WR_RATELIMIT_KEYS_MAX     (1u << 24)
#define WR_RATELIMIT_CIDRS_MAX    32

typedef struct wr_ratelimit wr_ratelimit_t;

/* Monotonic time in microseconds. */
typedef int64_t (*wr_ratelimit_clock_fn)(void *arg);

typedef struct {
    double rate;                 /* tokens per second; <= 0 = off: everything allowed */
    double burst;                /* bucket size in tokens (>= 1; smaller values count as 1) */
    size_t max_keys;             /* table bound; 0 = WR_RATELIMIT_KEYS_DEFAULT */
    wr_ratelimit_clock_fn clock; /* NULL = CLOCK_MONOTONIC */
    void *clock_arg;
} wr_ratelimit_opts_t;

/*
 * Creates a limiter; the table (max_keys entries) is allocated at once, so
 * it never grows. Returns WR_OK, WR_EINVAL (max_keys > KEYS_MAX), WR_ENOMEM.
 */
wr_err_t wr_ratelimit_new(const wr_ratelimit_opts_t *opts, wr_ratelimit_t **out);

/* Frees the limiter (NULL is fine). */
void wr_ratelimit_free(wr_ratelimit_t *rl);

/* True when the limiter limits anything (rate > 0). */
bool wr_ratelimit_enabled(const wr_ratelimit_t *rl);

/*
 * Takes one token from key's bucket (key: len bytes, any content). Returns
 * true if allowed. When refused, *retry_after_ms (may be NULL) is the time
 * until a token is available, rounded up, >= 1.
 */
bool wr_ratelimit_take(wr_ratelimit_t *rl, const void *key, size_t len, uint32_t *retry_after_ms);

/*
 * Poll pacing, check: true if a poll from key is allowed now (no note for
 * key, the noted time has come, or an early credit was left and is spent).
 * When refused, *retry_after_ms is the time until the noted earliest poll.
 */
bool wr_ratelimit_pace_check(wr_ratelimit_t *rl, const void *key, size_t len,
                             uint32_t *retry_after_ms);

/* Poll pacing, note: key should not poll again for min_gap_ms from now. */
void wr_ratelimit_pace_note(wr_ratelimit_t *rl, const void *key, size_t len, uint32_t min_gap_ms);

/* Drops key's entry (e.g. the identity left the line or was admitted). */
void wr_ratelimit_forget(wr_ratelimit_t *rl, const void *key, size_t len);

/* Entries in the table now (<= max_keys). */
size_t wr_ratelimit_size(const wr_ratelimit_t *rl);

/* Entries evicted because the table was full, since creation. */
uint64_t wr_ratelimit_evictions(const wr_ratelimit_t *rl);

/* ---- client addresses ---- */

/* An IPv4 or IPv6 network; IPv4 is held as an IPv4-mapped IPv6 address. */
typedef struct {
    uint8_t addr[16];
    uint8_t prefix; /* 0..128, in the IPv6 form */
} wr_cidr_t;

/*
 * Parses a comma-separated list of CIDRs ("10.0.0.0/8, 127.0.0.1,
 * ::1/128"; a bare address is a /32 or /128) into out (cap entries).
 * Whitespace around items is ignored; an empty string gives 0 networks.
 * Returns WR_OK and sets *n, WR_EINVAL (bad item; the first bad item is
 * copied to bad, badcap bytes, when bad is not NULL), WR_ELIMIT (> cap).
 */
wr_err_t wr_ratelimit_cidrs_parse(const char *list, wr_cidr_t *out, size_t cap, size_t *n,
                                  char *bad, size_t badcap);

/* True when the textual address addr (IPv4 or IPv6) is in one of the networks. */
bool wr_ratelimit_cidrs_match(const wr_cidr_t *nets, size_t n, const char *addr);

/*
 * The client address of a request: the peer address, unless the peer is a
 * trusted proxy and an X-Forwarded-For header is present; then the
 * right-most address of X-Forwarded-For that is not itself a trusted proxy
 * (the one the first trusted hop saw; hops to its left are client-written
 * and may be forged). If every listed address is trusted, the left-most
 * one. A malformed item stops the walk and the last trusted hop's view is
 * used (that hop's own peer: the item to the malformed one's right, or the
 * peer). Writes a NUL-terminated address to out (cap >= 46 recommended).
 * xff may be NULL.
 */
void wr_ratelimit_client_addr(const char *peer, const char *xff, const wr_cidr_t *nets, size_t n,
                              char *out, size_t cap);

#endif
