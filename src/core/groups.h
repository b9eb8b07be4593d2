/*
 * groups.h - priority groups and presale codes (docs/API.md 1.3, "Priority
 * groups and presale codes" and "Groups, precisely"), the rules that need
 * no store: group names, the split of one tick's admissions between the
 * standard line and the groups (the standard line's share kept exactly,
 * with a carried fraction), the rate a group's ETA uses, and presale codes
 * (generation, the accepted spelling, the hash a store keeps, why a code
 * is refused).
 *
 * Pure functions: no I/O, no store. The stores apply the split in their
 * admission tick and the code rules in their join, as they apply
 * core/queue.h's budget; this module is the reference and is unit-tested.
 */
#ifndef WR_GROUPS_H
#define WR_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/ids.h"

#define WR_GROUPS_MAX       8            /* groups: at most this many */
#define WR_GROUP_NAME_MAX   WR_LABEL_MAX /* a group name: bytes, without NUL: a label */
#define WR_GROUP_STANDARD   "standard"   /* the standard line's name (stats), never a group's */
#define WR_GROUP_NAME_RULE  "[a-z0-9-]{1,32}"
#define WR_GROUPS_SHARE_DEF 0.2     /* standardShare's default */
#define WR_CODE_MAX         32      /* a code as given: bytes, without NUL */
#define WR_CODE_LEN         23      /* a generated code: 4 blocks of 5 symbols, 3 dashes */
#define WR_CODE_BITS        100     /* a generated code's randomness: 20 symbols x 5 bits */
#define WR_CODE_HASH_HEX    64      /* the hash a store keeps: SHA-256, lowercase hex */
#define WR_CODES_COUNT_MAX  100000  /* POST .../codes: count, at most */
#define WR_CODES_USES_MAX   1000000 /* POST .../codes: uses, at most */

/* Why a config with groups is refused on a store without them (store.h
 * wr_store_has_groups; every backend of the registry serves them). */
#define WR_GROUPS_STORE_ONLY "this store does not serve priority groups"
/* Why a config_put that removes a group is refused (WR_EGROUP). */
#define WR_GROUPS_REMOVE_REFUSED                                                                   \
    "a group that still has people in line, held or admitted, or live codes, cannot be removed"

/* True when s (len bytes) is a group name: [a-z0-9-]{1,32} and not
 * "standard". Uniqueness is the config's check. */
bool wr_groups_name_ok(const char *s, size_t len);

/*
 * One line of a tick's split: line 0 is the standard line, lines 1..n the
 * groups in priority order.
 *   held   the held returns (1.2) of this line the tick admits first: they
 *          count toward this line's admissions
 *   avail  the people of this line the tick could admit after those
 *          (admissible now: due, not away), capped by the caller at any
 *          bound it likes (the budget is enough)
 */
typedef struct {
    uint64_t held;
    uint64_t avail;
} wr_groups_line_t;

/*
 * Splits one tick's admissions ("Groups, precisely"). allowed is what the
 * tick may admit in all (the budget, maxActive and stock applied: they
 * count everyone) and includes the held returns, sum(lines[i].held) <=
 * allowed (a larger sum is clamped: nobody new is admitted). share_micro is
 * standardShare in millionths (0..1000000), *carry_micro the standard
 * line's carried fraction in millionths ([0, 1000000): the store keeps it
 * between ticks, as the budget's carry).
 *
 * The tick admits A = held + min(allowed - held, sum of avail) people. The
 * standard line is owed floor(share x A + carry) of them (its held returns
 * included); the groups take the rest in order, each as many as it has;
 * what one side cannot use goes to the other. The new carry is the part of
 * share x A + carry the standard line did not get, below one person; it is
 * 0 when the standard line got more than it was owed or had nobody
 * admissible (no held return, no avail): a share is not saved up while
 * nobody stands in the standard line.
 *
 * Writes out[i], the new (not held) admissions of line i, for i < n_lines
 * (1 + the number of groups, at least 1), and returns A. So over any run of
 * ticks in which the standard line always had someone admissible, it got
 * at least floor(share x the admissions of those ticks).
 */
uint64_t wr_groups_split(uint64_t allowed, uint32_t share_micro, int64_t *carry_micro,
                         const wr_groups_line_t *lines, size_t n_lines, uint64_t *out);

/* standardShare (0..1) in millionths, rounded: what wr_groups_split takes. */
uint32_t wr_groups_share_micro(double share);

/*
 * The rate (people/s) a line's ETA uses ("Groups, precisely"): its
 * admissions over the last 60 s / 60 when there were any; else, for the
 * standard line (line 0), share x rate; for the first group with people
 * waiting (line == first_waiting, 1-based among the groups; 0 = none),
 * (1 - share) x rate; for any other group -1 (the answer's etaSeconds is
 * null). rate is the admission rate in use (people/s).
 */
double wr_groups_eta_rate(size_t line, uint64_t admitted_60s, double share, double rate,
                          size_t first_waiting);

/* Why a code is refused; the API's `reason` is wr_groups_code_reason_name(). */
typedef enum {
    WR_CODE_OK = 0,
    WR_CODE_UNKNOWN, /* "unknown": not a code of this queue (or not a code's spelling) */
    WR_CODE_USED_UP, /* "usedUp": every use spent */
    WR_CODE_REVOKED, /* "revoked": DELETE .../codes/{code} */
    WR_CODE_EXPIRED, /* "expired": expiresAt <= now */
} wr_code_reason_t;

/* "unknown", "usedUp", "revoked", "expired"; "ok" for WR_CODE_OK. */
const char *wr_groups_code_reason_name(wr_code_reason_t r);

/*
 * The verdict on a code a store found: revoked first, then expired
 * (expires_at_ms >= 0 and <= now_ms; -1 = never expires), then used up
 * (uses_left 0). A code the store did not find is WR_CODE_UNKNOWN.
 */
wr_code_reason_t wr_groups_code_verdict(bool revoked, int64_t expires_at_ms, uint64_t uses_left,
                                        int64_t now_ms);

/*
 * A new code: 20 symbols of Crockford's base 32 (0-9 A-Z without I L O U,
 * 5 random bits each: WR_CODE_BITS bits) in four blocks of five joined by
 * "-" ("7K2QD-M9XWA-0RT4E-HZ3PB"), NUL-terminated. WR_OK, or WR_EIO when
 * the system's randomness fails.
 */
wr_err_t wr_groups_code_new(char out[WR_CODE_LEN + 1]);

/*
 * A code as a person typed it, in its one spelling: lowercase is made
 * uppercase, and the letters Crockford's alphabet leaves out read as what
 * they look like (O as 0, I and L as 1); white space around it is
 * dropped. Twenty symbols grouped any way (dashes, spaces, or none: "7k2qd
 * m9xwa 0rt4e hz3pb", "7K2QDM9XWA0RT4EHZ3PB") are a generated code's
 * spelling, 4 blocks of 5 joined by "-". Anything else must be at most
 * WR_CODE_MAX bytes of [A-Za-z0-9-] (kept as typed but for the above).
 * Writes out (NUL-terminated) and returns true; false (out "") for
 * anything else, which is `reason` unknown. Input over 2 x WR_CODE_MAX
 * bytes is refused.
 */
bool wr_groups_code_norm(const char *s, size_t len, char out[WR_CODE_MAX + 1]);

/*
 * What a store keeps of a code: SHA-256 of its normalized spelling
 * (wr_groups_code_norm), lowercase hex, NUL-terminated. The code itself is
 * shown once (POST .../codes) and never kept. WR_OK, WR_EINVAL (not a
 * code's spelling), WR_ENOMEM or WR_EIO.
 */
wr_err_t wr_groups_code_hash(const char *s, size_t len, char out[WR_CODE_HASH_HEX + 1]);

#endif
