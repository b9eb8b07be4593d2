/*
 * logleaf.h - the leaves of the public log (docs/API.md, "A line anyone
 * can check"): one line of JSON per event that changes a person's
 * standing, their encoding (what the server writes, once, forever) and
 * their parsing (what the replay and waitroom-verify read); the log id of
 * a person; the opening draw's value and ranks ("The opening draw, fixed
 * in public").
 *
 * Encoding is deterministic: "e", then "at", then the event's fields in
 * the order API.md lists them, optional ones only when set, no white
 * space, no newline:
 *   {"e":"join","at":AT,"u":U,"t":T[,"pre":true][,"grp":G]}
 *   {"e":"commit","at":AT,"seedHash":HEX[,"beacon":URL,"round":R]}
 *   {"e":"draw","at":AT,"n":N,"seed":HEX[,"round":R,"randomness":HEX,
 *        "beacon":URL][,"beaconError":TEXT]}   (an error: no randomness)
 *   {"e":"admit","at":AT,"u":U[,"grp":G][,"held":true]}
 *   {"e":"away","at":AT,"u":U[,"unseen":true]}
 *   {"e":"leave","at":AT,"u":U,"why":"left|abandoned|pending|removed"}
 *   {"e":"failOpen","at":AT,"n":N}
 * AT and T are epoch microseconds of the store's clock; U is a log id (32
 * lowercase hex); G a group name ([a-z0-9-]{1,32}; absent: the standard
 * line); HEX lowercase. Free texts (a beacon's URL, beaconError) are
 * written as printable ASCII (anything else becomes '?'), escaped.
 *
 * Pure: no allocation in the encoder; the parser uses jansson and frees
 * what it made before returning.
 */
#ifndef WR_LOGLEAF_H
#define WR_LOGLEAF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"

#define WR_LOGLEAF_MAX        2048 /* bytes of a leaf (encoder's output, parser's input) */
#define WR_LOGLEAF_U_BYTES    16   /* bytes of a log id */
#define WR_LOGLEAF_U_HEX      32   /* its hex characters */
#define WR_LOGLEAF_GROUP_MAX  32   /* characters of a group name */
#define WR_LOGLEAF_URL_MAX    512  /* characters of a beacon's URL */
#define WR_LOGLEAF_ERROR_MAX  200  /* characters of beaconError */
#define WR_LOGLEAF_RANDOM_MAX 64   /* bytes of a beacon's randomness */
#define WR_LOGLEAF_SEED       32   /* bytes of a draw's seed */

/* The draw's beaconError when the beacon gave no round in time (a printf
 * format of the round, unsigned long long): the stores' text. */
#define WR_LOGLEAF_BEACON_LATE "the beacon gave no round %llu within 60 s of the opening"

typedef enum {
    WR_LOGLEAF_JOIN,
    WR_LOGLEAF_COMMIT,
    WR_LOGLEAF_DRAW,
    WR_LOGLEAF_ADMIT,
    WR_LOGLEAF_AWAY,
    WR_LOGLEAF_LEAVE,
    WR_LOGLEAF_FAILOPEN,
} wr_logleaf_kind_t;

/* Why a person left the line ("why" of a leave leaf). */
typedef enum {
    WR_LOGLEAF_LEFT,      /* DELETE */
    WR_LOGLEAF_ABANDONED, /* awayHoldSeconds passed */
    WR_LOGLEAF_PENDING,   /* a page join that never asked again */
    WR_LOGLEAF_REMOVED,   /* the queue was reset or deleted */
    WR_LOGLEAF_WHY_COUNT,
} wr_logleaf_why_t;

/* One event. Only the fields of its kind are read or set. */
typedef struct wr_logleaf {
    wr_logleaf_kind_t e;
    int64_t at;                         /* every kind: store time, epoch us */
    char u[WR_LOGLEAF_U_HEX + 1];       /* join, admit, away, leave */
    int64_t t;                          /* join: the order key, store us */
    bool pre;                           /* join: a pre-queue join */
    char grp[WR_LOGLEAF_GROUP_MAX + 1]; /* join, admit: "" for the standard line */
    bool held;                          /* admit: a held person's return */
    bool unseen;                        /* away: an unseen pass expired */
    wr_logleaf_why_t why;               /* leave */
    uint64_t n;                         /* draw: people drawn; failOpen: admissions */
    uint8_t seed_hash[32];              /* commit */
    uint8_t seed[WR_LOGLEAF_SEED];      /* draw */
    bool beacon;                        /* commit, draw: beacon and round are set */
    char beacon_url[WR_LOGLEAF_URL_MAX + 1];
    uint64_t round;
    uint8_t randomness[WR_LOGLEAF_RANDOM_MAX]; /* draw, with a beacon and no error */
    size_t randomness_len;
    char beacon_error[WR_LOGLEAF_ERROR_MAX + 1]; /* draw: "" when none */
} wr_logleaf_t;

/* The name of a kind ("join", ...) and of a reason ("left", ...). */
const char *wr_logleaf_kind_name(wr_logleaf_kind_t e);
const char *wr_logleaf_why_name(wr_logleaf_why_t why);

/* The leaf of l into out (cap bytes, NUL-terminated; WR_LOGLEAF_MAX is
 * enough), its length in *len. WR_OK, WR_EINVAL (a u that is not a log
 * id, a group that is not a group name, a draw with randomness and an
 * error, a negative time) or WR_ELIMIT. */
wr_err_t wr_logleaf_encode(const wr_logleaf_t *l, char *out, size_t cap, size_t *len);

/* Parses one leaf (len bytes, no newline) into l. Unknown fields are
 * ignored; a missing or mistyped field of the kind, an unknown kind, a u
 * that is not 32 lowercase hex, a hex of the wrong length is WR_EINVAL
 * (the reason in msg, msg_len bytes, when msg is not NULL). */
wr_err_t wr_logleaf_parse(const char *leaf, size_t len, wr_logleaf_t *l, char *msg, size_t msg_len);

/* The log id of a user: the first 16 bytes of HMAC-SHA-256(salt, user
 * id), as 32 lowercase hex and a NUL. WR_OK or WR_EINVAL. */
wr_err_t wr_logleaf_log_id(const uint8_t *salt, size_t salt_len, const char *user, size_t len,
                           char out[WR_LOGLEAF_U_HEX + 1]);

/* The 16 bytes of a log id's hex. WR_OK or WR_EINVAL (not 32 lowercase
 * hex). */
wr_err_t wr_logleaf_u_bytes(const char *u, uint8_t out[WR_LOGLEAF_U_BYTES]);

/* The log id of a join leaf as the encoder writes it
 * (`{"e":"join","at":AT,"u":"<32 hex>",...`; len bytes) into u: a receipt
 * read back from the stored leaf instead of an HMAC per poll. False when
 * the leaf holds no such field. */
bool wr_logleaf_join_u(const char *leaf, size_t len, char u[WR_LOGLEAF_U_HEX + 1]);

/* The draw value D = SHA-256(seed || randomness) (randomness_len 0: no
 * beacon, SHA-256(seed)). WR_OK, WR_EINVAL or WR_EIO. */
wr_err_t wr_logleaf_draw_value(wr_crypto_sha256_t *h, const uint8_t seed[WR_LOGLEAF_SEED],
                               const uint8_t *randomness, size_t randomness_len, uint8_t d[32]);

/* A drawn person's rank: SHA-256(D || the 16 bytes of u); the pre-queue's
 * order is ascending rank (memcmp). WR_OK, WR_EINVAL or WR_EIO. */
wr_err_t wr_logleaf_draw_rank(wr_crypto_sha256_t *h, const uint8_t d[32],
                              const uint8_t u[WR_LOGLEAF_U_BYTES], uint8_t rank[32]);

#endif
