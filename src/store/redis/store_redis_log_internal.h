/*
 * store_redis_log_internal.h - what the two files of the Redis store's
 * public log share (store_redis_log.c: the operations and their jobs;
 * store_redis_logtree.c: the Merkle tree's hashing and the signer's
 * round). Internal to the store_redis module.
 */
#ifndef WR_STORE_REDIS_LOG_INTERNAL_H
#define WR_STORE_REDIS_LOG_INTERNAL_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/tlog.h"
#include "core/logleaf.h"
#include "store/redis/store_redis_internal.h"

#define HASH_CHUNK  220  /* leaves hashed per command (their nodes fit one: HASHED_ARGS) */
#define HASH_ROUNDS 200  /* chunks per log per round, at most (44,000 leaves) */
#define LEASE_MS    3000 /* the signer's lease: three rounds */
#define CP_MAX      1024 /* bytes of a signed checkpoint (store.h) */
#define NAMES_MAX   10000

/* A public log operation of the Redis store: a job of commands in
 * sequence (store_redis_log.c); J_BEACON (log_beacon) and J_DRAW (the
 * opening draw, the store's own job) are store_redis_draw.c's. */
typedef enum { J_KEY, J_HEAD, J_READ, J_PUBLISH, J_UNSIGNED, J_BEACON, J_DRAW } jkind_t;

struct draw; /* a draw job's state (store_redis_draw.c) */

typedef struct ljob ljob_t;
typedef void (*wr_store_redis__lj_step)(ljob_t *j, wr_err_t err, const redisReply *rep);

/* What one queue's log holds (the meta fields of wr:{q}:log). */
typedef struct {
    bool exists, has_config, log_on, has_cp, stop;
    bool committed; /* an opening's commit awaits its draw (dseed) */
    uint64_t n, hs, cps;
    char cp[CP_MAX];
    size_t cp_len;
    uint8_t cpr[WR_TLOG_HASH];
} meta_t;

struct ljob {
    struct rstore *s;
    jkind_t kind;
    wr_store_log_cb cb;
    void *arg;
    wr_store_redis__lj_step next;
    char queue[WR_QUEUE_NAME_MAX + 1];
    meta_t m;
    wr_log_answer_t ans;
    uint8_t root[WR_TLOG_HASH];
    wr_tlog_frontier_t fr; /* hashing: the frontier at m.hs */
    int rounds;
    /* log_read */
    wr_log_read_t rd;
    char *leaves;
    uint8_t (*hashes)[WR_TLOG_HASH];
    /* log_publish */
    uint64_t p_size;
    uint8_t p_root[WR_TLOG_HASH];
    char note[CP_MAX];
    size_t note_len;
    bool refused;
    /* log_key */
    uint8_t proposed[32], salt[32];
    /* log_unsigned */
    char (*names)[WR_QUEUE_NAME_MAX + 1];
    const char **ptrs;
    size_t n_names, cur, n_out;
    bool stated; /* the current log's draw state was asked (draw_state) */
    /* ... the queues whose opening waits for its beacon (store_redis_draw.c) */
    char (*bq)[WR_QUEUE_NAME_MAX + 1];
    char (*burl)[WR_LOGLEAF_URL_MAX + 1];
    uint64_t *bround;
    const char **bq_ptrs, **burl_ptrs;
    size_t n_b, cap_b;
    /* log_beacon; the draw */
    uint64_t b_round;
    char b_rand[2 * WR_LOGLEAF_RANDOM_MAX + 1], b_err[WR_LOGLEAF_ERROR_MAX + 1];
    struct draw *draw;
};

/* ---- store_redis_log.c --------------------------------------------- */

/* A job of kind for queue (NULL: none), answering cb(arg); NULL when out
 * of memory. */
ljob_t *wr_store_redis__lj_new(struct rstore *s, jkind_t kind, const char *queue,
                               wr_store_log_cb cb, void *arg);
/* Frees j and what it holds. */
void wr_store_redis__lj_free(ljob_t *j);
/* Answers j's caller (exactly once; none for the store's own jobs) and
 * frees j. */
void wr_store_redis__lj_end(ljob_t *j, wr_err_t err);
/* A command of j (script: enum script_id or WR_REDIS_CONN_NO_SCRIPT; at
 * most max_args arguments) whose reply goes to next; NULL when out of
 * memory. */
struct req *wr_store_redis__lj_cmd(ljob_t *j, int script, int max_args, size_t extra,
                                   wr_store_redis__lj_step next);
/* Sends r (its arguments built when ok); on failure j ends with the error. */
void wr_store_redis__lj_send(ljob_t *j, struct req *r, bool ok);
/* Sends j's first command: WR_OK, or the error with j freed and nothing
 * called (the async contract). */
wr_err_t wr_store_redis__lj_start(ljob_t *j, struct req *r, bool ok);
/* Appends "wr:{q}:<suffix>" / "<level>:<index>" to c; false when out of room. */
bool wr_store_redis__lj_key(wr_redis_conn_cmd_t *c, const char *q, const char *suffix);
bool wr_store_redis__lj_node(wr_redis_conn_cmd_t *c, unsigned level, uint64_t index);
/* log_head.lua on j's queue (its reply: the meta, then the head); NULL
 * when out of memory. */
struct req *wr_store_redis__lj_meta_cmd(ljob_t *j);
/* Asks for the frontier of size leaves (an HMGET of logh; none for 0),
 * answered to next; reads it from that reply (WR_ENOTFOUND: a hash the
 * log lacks). */
void wr_store_redis__lj_frontier(ljob_t *j, uint64_t size, wr_store_redis__lj_step next);
wr_err_t wr_store_redis__lj_frontier_of(const redisReply *rep, uint64_t size,
                                        wr_tlog_frontier_t *f);
/* j's leaves are hashed (as far as one call goes): what its kind does with
 * the head. */
void wr_store_redis__lj_hashed(ljob_t *j);

/* ---- store_redis_logtree.c ----------------------------------------- */

/* Hashes j's log's leaves past m.hs (HASH_CHUNK a command, HASH_ROUNDS
 * chunks at most), storing every subtree they complete and moving hs;
 * then wr_store_redis__lj_hashed(j). */
void wr_store_redis__lj_hash(ljob_t *j);
/* log_unsigned's round: the next log of j->names (its meta, its hashing,
 * and for a log whose commit awaits its draw the draw's state), or the
 * answer after the last. */
void wr_store_redis__lj_next_log(ljob_t *j);

/* ---- store_redis_draw.c -------------------------------------------- */

/* log_unsigned's round on j's current log, whose commit awaits its draw:
 * its state (draw.lua STATE); an opening waiting for its beacon goes to
 * j's beacon list, one whose draw may run gets it started
 * (wr_store_redis__draw_due); then wr_store_redis__lj_next_log(j). */
void wr_store_redis__draw_state(ljob_t *j);
/* Frees what a job holds of the draw's (its state, its beacon list). */
void wr_store_redis__draw_free(ljob_t *j);

#endif
