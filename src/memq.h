/*
 * memq.h - the queue model of the embedded store (store_memory.c): one
 * queue's state - its config, the waiting line, the admitted users' tokens
 * with their expiry heap, the admission budget and the counters - and the
 * set of queues with the signing secret (wr_memq_db_t: everything a
 * snapshot holds, mem_snapshot.h).
 *
 * Pure data structures: no I/O, no clock (callers pass times in), no
 * libevent, not thread-safe. The operation semantics (what join, admit or
 * consume answer, when a sweep runs) belong to store_memory.c; this module
 * keeps the structures consistent.
 *
 * Times are wall-clock microseconds since the epoch, chosen by the caller.
 */
#ifndef WR_MEMQ_H
#define WR_MEMQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "idhash.h"
#include "qconfig.h"
#include "queue.h"
#include "store.h"
#include "token.h"
#include "zsl.h"

/* A queue's config, immutable and shared by reference count: a queue holds
 * one reference; a pending answer that points at the config holds another,
 * so the config outlives a config_put or a delete of its queue. */
typedef struct {
    unsigned refs;
    wr_queue_config_t cfg;
} wr_memq_cfg_t;

/* Adds a reference to c and returns c. */
wr_memq_cfg_t *wr_memq_cfg_ref(wr_memq_cfg_t *c);

/* Drops a reference; the last one frees c. NULL is ok. */
void wr_memq_cfg_unref(wr_memq_cfg_t *c);

/* The live token of an admitted user. Held by its queue (tokens and heap). */
typedef struct {
    int64_t iat_us; /* issued at */
    int64_t exp_us; /* expires at; the token is dead from exp_us on */
    size_t heap_idx;
    char jti[WR_JTI_LEN + 1];
    uint8_t idlen;
    char id[]; /* the user id, NUL-terminated */
} wr_memq_token_t;

/*
 * One queue. Callers read every field; they may write the counters,
 * version, last_score and budget (a snapshot load restores them), never
 * line, waiting, tokens or heap, which only the functions below change.
 *
 * Invariants: a user is in at most one of line and tokens; waiting indexes
 * exactly the nodes of line; every token is in both tokens and heap; the
 * active count is heap_n; last_score >= every score in line.
 */
typedef struct {
    char name[WR_QUEUE_NAME_MAX + 1];
    wr_memq_cfg_t *cfg;     /* one reference held */
    uint64_t version;       /* config version, +1 per config_put */
    wr_zsl_t *line;         /* (arrival score, user id), in line order */
    wr_idhash_t *waiting;   /* user id -> wr_zsl_node_t in line */
    wr_idhash_t *tokens;    /* user id -> wr_memq_token_t */
    wr_memq_token_t **heap; /* min-heap of the tokens by exp_us */
    size_t heap_n, heap_cap;
    int64_t last_score; /* highest arrival score ever given out */
    wr_budget_t budget;
    uint64_t admitted_total, consumed_total, expired_total, left_total, rejected_full_total;
} wr_memq_t;

/* The user's node in the line (borrowed while it is in the line), or NULL. */
wr_zsl_node_t *wr_memq_waiting(const wr_memq_t *q, const char *user, size_t ulen);

/* The user's token (borrowed while it is live), or NULL. */
wr_memq_token_t *wr_memq_token(const wr_memq_t *q, const char *user, size_t ulen);

/*
 * Puts user (ulen bytes, 1..WR_USER_ID_MAX, copied) at score, which must be
 * unique in the line; raises last_score to score. The caller checks that
 * the user is in neither line nor tokens. Returns WR_OK and *out (the node,
 * borrowed while it is in the line), or an error of wr_zsl_insert or
 * wr_idhash_put (WR_ENOMEM, ...) with q unchanged.
 */
wr_err_t wr_memq_line_add(wr_memq_t *q, const char *user, size_t ulen, int64_t score,
                          wr_zsl_node_t **out);

/* Grows the waiting hash so that the next n wr_memq_line_add calls never
 * rehash it (a snapshot load knows its count). WR_OK or WR_ENOMEM. */
wr_err_t wr_memq_line_reserve(wr_memq_t *q, size_t n);

/* Removes node (which must be in q's line) from line and waiting; frees it. */
void wr_memq_line_remove(wr_memq_t *q, wr_zsl_node_t *node);

/*
 * Moves the first n users of the line (n <= its length) to tokens: each
 * gets a fresh jti, iat_us = now_us and exp_us = now_us + ttl_us; adds n to
 * admitted_total. All or nothing: returns WR_OK, or WR_ENOMEM or an error
 * of wr_token_new_jti with q unchanged. n = 0 does nothing.
 */
wr_err_t wr_memq_admit_first(wr_memq_t *q, uint64_t n, int64_t now_us, int64_t ttl_us);

/* A token for user (idlen bytes, 1..WR_USER_ID_MAX, copied); the caller
 * fills jti and times, then adds it with wr_memq_token_add or frees it
 * with free(). NULL on ENOMEM. */
wr_memq_token_t *wr_memq_token_new(const char *id, size_t idlen);

/* Adds t (whose user must be in neither line nor tokens) to tokens and
 * heap; takes ownership on WR_OK. WR_ENOMEM (or WR_EINVAL from
 * wr_idhash_put): q unchanged, the caller still owns t. */
wr_err_t wr_memq_token_add(wr_memq_t *q, wr_memq_token_t *t);

/* Removes t (which must be q's) from tokens and heap and frees it. */
void wr_memq_token_drop(wr_memq_t *q, wr_memq_token_t *t);

/* Removes every token with exp_us <= now_us, counting each in
 * expired_total. Returns how many were removed. O(k log N). */
uint64_t wr_memq_sweep(wr_memq_t *q, int64_t now_us);

/* The queue's counters as the store interface reports them. */
void wr_memq_stats(const wr_memq_t *q, wr_queue_stats_t *st);

/*
 * The embedded store's data: the queues, sorted by name (binary search;
 * few queues), and the token signing secret. Zero-initialise, set seed,
 * free with wr_memq_db_clear. The db owns its queues.
 */
typedef struct {
    wr_memq_t **queues;
    size_t nq, capq;
    uint8_t secret[WR_SECRET_MAX];
    size_t secret_len; /* 0 = none yet */
    uint64_t seed;     /* skiplist level seed, advanced for each new queue */
} wr_memq_db_t;

/* The queue named name, or NULL. */
wr_memq_t *wr_memq_db_find(const wr_memq_db_t *db, const char *name);

/*
 * Installs a copy of cfg as the config of queue name, creating an empty
 * queue when there is none; increments its version. A new tick_ms resets
 * the admission budget (tick indices of another tick length are not
 * comparable). Returns WR_OK and *out (may be NULL; the queue, borrowed
 * from db), or WR_ENOMEM with db unchanged.
 */
wr_err_t wr_memq_db_put_config(wr_memq_db_t *db, const char *name, const wr_queue_config_t *cfg,
                               wr_memq_t **out);

/* Deletes and frees queue name: WR_OK, or WR_ENOTFOUND. Configs held by
 * others stay valid (reference counted). */
wr_err_t wr_memq_db_delete(wr_memq_db_t *db, const char *name);

/* Frees every queue and the queue array; keeps secret and seed. */
void wr_memq_db_clear(wr_memq_db_t *db);

#endif
