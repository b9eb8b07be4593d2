/*
 * store_redis_internal.h - what the files of the store_redis module share,
 * and nothing else includes: the store (struct rstore), the batches of
 * joins and statuses, the script table and the few functions each file
 * calls in the other.
 *
 * The store_redis module is one store in three files:
 *   store_redis.c        the operations, requests, reply decoding, config
 *                        resolution, open/close
 *   store_redis_batch.c  the coalescing of joins and statuses ("Coalescing")
 *   store_redis_list.c   queue_list: the registry, then one queue_get per name;
 *                        queue_names: the registry alone
 *   store_redis_push.c   push_sub: a person's Web Push subscription
 *   store_redis_group.c  priority groups: join_group, codes
 * Names shared between these files are wr_store_redis__*; file statics are
 * unprefixed (STYLE.md). Everything here runs on the store's loop.
 */
#ifndef WR_STORE_REDIS_INTERNAL_H
#define WR_STORE_REDIS_INTERNAL_H

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/queue.h>

#include "base/crypto.h"
#include "store/redis/cfgcache.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/store.h"

enum script_id {
    SC_ENTRY,
    SC_ENTRY_BATCH,
    SC_LEAVE,
    SC_TOKEN,
    SC_ADMIT,
    SC_GET,
    SC_DELETE,
    SC_PUT,
    SC_SECRET,
    SC_RELEASE,
    SC_BURN,          /* degraded mode */
    SC_SECRET_SYNC,   /* K31: a Redis restarted empty */
    SC_AUTOTUNE,      /* autotune state */
    SC_BYPASS,        /* bypass rules' count */
    SC_REPORT,        /* the sale's report: a WRITE */
    SC_REPORT_INDEX,  /* the sale's report: the registry */
    SC_LOG_KEY,       /* the public log (store_redis_log.c): its key and salt master */
    SC_LOG_HEAD,      /* ... what a queue's log holds */
    SC_LOG_HASHED,    /* ... subtree hashes stored */
    SC_LOG_PUBLISH,   /* ... a checkpoint kept */
    SC_LOG_READ,      /* ... leaves and hashes read */
    SC_LOG_LEASE,     /* ... the signer's lease */
    SC_PUSH,          /* Web Push: a person's subscription */
    SC_DRAW,          /* the public log's opening draw: one step (store_redis_draw.c) */
    SC_ENTRY_GROUP,   /* priority groups: a join into a group (store_redis_group.c) */
    SC_ENTRY_G,       /* ... SC_ENTRY of a queue with groups (lib_group.lua, the group keys) */
    SC_ENTRY_BATCH_G, /* ... SC_ENTRY_BATCH likewise */
    SC_CODES,         /* ... presale codes */
    SC_COUNT,
};

/* The script table of the connection, by enum script_id (store_redis.c). */
extern const wr_redis_conn_script_t wr_store_redis__scripts[SC_COUNT];

/* The number of keys of a queue, lib.lua's order (store_redis.c): the
 * first NKEYS_BASE (lib.lua's twelve, lib_log.lua's four, Web Push's two)
 * go with every queue script; the priority groups' eleven after them
 * (lib_group.lua: the eight lines, gm, codes, gstat) with every one but
 * the polls of a queue cached without groups (store_redis_batch.c) and
 * token.lua's verify and release.lua, which never read them. */
enum { NKEYS_BASE = 18, NKEYS = 29 };

/* The suffixes of a queue's keys in that order: key i is
 * "wr:{<queue>}:<suffix i>" (store_redis.c). */
extern const char *const wr_store_redis__key_suffix[NKEYS];

/* The most bytes of a queue's config JSON (stored and read). */
#define JSON_MAX (64 * 1024)

struct rstore;

/* The keys that belong to no queue. On one Redis their names are as they
 * always were; on a cluster they share the hash tag {.global} (no queue
 * name holds a '.'), so they live in one home slot and a script may take
 * several of them (secret_sync.lua) without a CROSSSLOT error. */
struct gkeys {
    const char *queues;          /* the registry: a set of queue names */
    const char *secret;          /* the token secret */
    const char *secret_previous; /* the secret before the last change */
    const char *epoch;           /* secret_sync.lua's store epoch */
    const char *reports;         /* the registry of reports (report_index.lua) */
    const char *logs;            /* the public log: the queues that have one (a set) */
    const char *logkey;          /* ... its signing key's seed */
    const char *logsalt;         /* ... the master of the queues' log salts */
    const char *loglease;        /* ... the signer's lease */
};

typedef enum {
    OP_LEAVE,
    OP_ADMIT,
    OP_CONSUME,
    OP_VERIFY,
    OP_PUT,
    OP_GET,
    OP_DELETE,
    OP_SECRET,
    OP_PING,
    OP_AUTOTUNE,
    OP_NAMES,
    OP_RELEASE,
    OP_BURN,       /* degraded mode: burn */
    OP_BURN_CHECK, /* degraded mode: burn, check only */
    OP_BYPASS,     /* bypass rules: the count */
    OP_SYNC,       /* secret_sync with a secret */
    OP_SYNC_EPOCH, /* secret_sync without one (a configured secret) */
    OP_REPORT,     /* the sale's report (store_redis_report.c) */
    OP_LOG,        /* a step of a public log operation (store_redis_log.c) */
    OP_PUSH,       /* Web Push: push_sub (store_redis_push.c) */
    OP_CODES,      /* priority groups: a step of codes (store_redis_group.c) */
} op_t;

/* Internal callback of the SMEMBERS step of queue_list. */
typedef void (*names_cb)(struct rstore *s, wr_err_t err, const redisReply *reply, void *arg);

struct req {
    struct rstore *s; /* valid while the store is open (every callback but WR_ECANCELED) */
    op_t op;
    int script;       /* enum script_id, or WR_REDIS_CONN_NO_SCRIPT for a plain command */
    wr_store_cb_t cb; /* the caller's callback, by op */
    names_cb names;   /* OP_NAMES (queue_list's first step) instead of cb */
    void *arg;
    char queue[WR_QUEUE_NAME_MAX + 1];
    wr_cfgcache_snap_t *snap; /* the config announced to the script (a reference); NULL = none */
    wr_redis_conn_cmd_t *cmd; /* the command being built; owned until submitted */
};

/* One join or status waiting in a batch. */
struct sub {
    wr_store_entry_cb cb;
    void *arg;
    char mode; /* entry.lua's ARGV[3]: '1' join, '2' join_page, '0' status, '3' status_quiet */
    unsigned long long key; /* entry.lua's ARGV[4]: a join's pre-queue key (0 for a status) */
    char user[WR_USER_ID_MAX + 1];
    char logid[33]; /* entry.lua's LOG_ID: a join's log id on a publicLog queue, else "" */
    /* a join into a priority group (join_group; its batch is solo): the
     * invite's group and the code's hash, "" none */
    char group[WR_GROUP_NAME_MAX + 1];
    char code[WR_CODE_HASH_HEX + 1];
};

/* The joins and statuses of one queue coalesced into one script call
 * (see "Coalescing" at the top). */
struct batch {
    struct rstore *s;
    STAILQ_ENTRY(batch) link; /* in s->held or s->failed */
    char queue[WR_QUEUE_NAME_MAX + 1];
    bool joins, statuses;     /* what it holds */
    bool solo;                /* a join into a group: entry_group.lua, alone in its batch */
    bool groups;              /* sent with the group keys (NKEYS; else NKEYS_BASE) */
    bool resent;              /* sent again with them after WRGROUPS (once) */
    wr_err_t err;             /* s->failed: why it could not be sent */
    wr_cfgcache_snap_t *snap; /* the config announced to the script (a reference); NULL = none */
    size_t n, cap;            /* requests in sub, and room */
    size_t answered;          /* sub[0 .. answered - 1] have had their callback */
    struct sub *sub;
    wr_crypto_hmac_t *logmac; /* keyed with the queue's log salt, at its first log id */
};

/* A FIFO of batches (STAILQ_INIT'ed at open). */
struct blist {
    STAILQ_HEAD(batchq, batch) q;
    size_t n;
};

struct rstore {
    wr_store_t base_;         /* must be first */
    wr_redis_router_t *conn;  /* the connection(s); NULL once close() closed it */
    const struct gkeys *keys; /* the names of the global keys (single or cluster) */
    bool closing;             /* close() began */
    int busy;                 /* > 0: inside a loop entry of ours; close() leaves the free to it */
    wr_cfgcache_t *cache;     /* configs by queue name, see cfgcache.h */
    uint32_t wait_replicas;   /* durability mode: joins and statuses are not batched together */
    struct event *flush_ev;   /* made active when a batch is held: sends at the end of the
                                 loop iteration, answers s->failed */
    struct blist held;        /* batches of this iteration, not sent yet, in arrival order */
    struct blist failed;      /* batches whose send failed, answered by flush_ev */
    struct batch *answering;  /* the batch whose callbacks are being called */
    wr_crypto_hmac_t *log_master;   /* keyed with the log salts' master (log_key), or NULL */
    bool salt_wanted, salt_loading; /* the store's own load of it: asked for, in flight */
    char instance[33];              /* this store's id (hex, random): the signer's lease */
    bool push_sender;               /* this instance sends Web Push (admit.lua A_ADMIT.PUSH) */
    /* the queues whose opening draw this instance runs (store_redis_draw.c) */
    char drawing[4][WR_QUEUE_NAME_MAX + 1];
    size_t n_drawing;
};

/* What resolve_config reads: the store, the queue and the snapshot of the
 * version announced to the script; and its result, kept, so the answers
 * of a batch resolve the reply's one config part once. */
struct cfgctx {
    struct rstore *s;
    const char *queue;
    const wr_cfgcache_snap_t *snap; /* the version announced (the request's reference) */
    bool done;
    wr_err_t err;
    const wr_queue_config_t *cfg; /* the answer's: in snap or own, never a copy */
    wr_cfgcache_snap_t *own;      /* a reference to the snapshot of a JSON reply, or NULL */
};

/* store_redis.c */

/* Appends numkeys and the first n keys (NKEYS_BASE or NKEYS) of queue q
 * to cmd; false when out of room. */
bool wr_store_redis__queue_keys(wr_redis_conn_cmd_t *cmd, const char *q, int n);

/* The config of a reply (wr_script_reply_config_fn, ctx = a struct cfgctx),
 * borrowed: valid until wr_store_redis__cfgctx_done(), which the caller
 * calls after the last callback that was handed it. */
wr_err_t wr_store_redis__resolve_config(void *ctx, long long version, const redisReply *json,
                                        const wr_queue_config_t **out);

/* Drops what ctx holds (the snapshot of a JSON reply). */
void wr_store_redis__cfgctx_done(struct cfgctx *c);

/* Leaves a loop entry of ours (s->busy); frees s with the outermost one once
 * close() ran inside. */
void wr_store_redis__unbusy(struct rstore *s);

/* A request of operation op (script: enum script_id, or
 * WR_REDIS_CONN_NO_SCRIPT) with a command of room for extra more bytes of
 * arguments; NULL when out of memory. */
struct req *wr_store_redis__req_new(struct rstore *s, op_t op, int script, size_t extra, void *arg);

/* wr_store_redis__req_new for an operation that needs the store now: NULL
 * with *err WR_EUNAVAILABLE when the router has no connection (nothing is
 * allocated then), or WR_ENOMEM; *err is untouched on success. */
struct req *wr_store_redis__req_start(struct rstore *s, op_t op, int script, size_t extra,
                                      void *arg, wr_err_t *err);

/* wr_store_redis__req_new with a command of max_args arguments (EVALSHA,
 * the SHA and numkeys included). */
struct req *wr_store_redis__req_new_args(struct rstore *s, op_t op, int script, int max_args,
                                         size_t extra, void *arg);

/* Frees r, its command and its snapshot reference; NULL is a no-op. */
void wr_store_redis__req_free(struct req *r);

/* Sets r's queue to q and appends numkeys and q's NKEYS keys; false when
 * out of room. */
bool wr_store_redis__arg_queue_keys(struct req *r, const char *q);
/* The same with q's first n keys (NKEYS_BASE: a script that never reads
 * the group keys). */
bool wr_store_redis__arg_queue_keys_n(struct req *r, const char *q, int n);

/* Announces the cached config version of r->queue (or "0") to the script,
 * taking a reference to its snapshot (r->snap). */
bool wr_store_redis__arg_known_version(struct rstore *s, struct req *r);

/* Sends a fire-and-forget registry command (SADD/SREM) before or after a
 * script on the same connection, so both go in one round trip. */
wr_err_t wr_store_redis__send_plain(struct rstore *s, const char *cmd, const char *key,
                                    const char *member);

/* Hands r's command to the connection when its arguments were built
 * (args_ok; else WR_EINVAL); on error frees r. Never calls a callback. */
wr_err_t wr_store_redis__submit(struct rstore *s, struct req *r, bool args_ok);

/* store_redis_admin.c: these operations (store.h) of the store st */

wr_err_t wr_store_redis__config_put(wr_store_t *st, const char *q, const wr_queue_config_t *cfg,
                                    wr_store_done_cb cb, void *arg);
wr_err_t wr_store_redis__queue_get(wr_store_t *st, const char *q, wr_store_info_cb cb, void *arg);
wr_err_t wr_store_redis__queue_delete(wr_store_t *st, const char *q, wr_store_done_cb cb,
                                      void *arg);
wr_err_t wr_store_redis__secret(wr_store_t *st, const uint8_t *proposed, size_t len,
                                wr_store_secret_cb cb, void *arg);
wr_err_t wr_store_redis__secret_sync(wr_store_t *st, const uint8_t *own, size_t own_len,
                                     const char *epoch, wr_store_sync_cb cb, void *arg);
wr_err_t wr_store_redis__autotune(wr_store_t *st, const char *q, const wr_autotune_req_t *req,
                                  wr_store_autotune_cb cb, void *arg);
wr_err_t wr_store_redis__bypass(wr_store_t *st, const char *q, uint64_t n, wr_store_done_cb cb,
                                void *arg);

/* store_redis_log.c: the public log's operations (store.h) */

wr_err_t wr_store_redis__log_key(wr_store_t *st, const uint8_t proposed[32], wr_store_log_cb cb,
                                 void *arg);
wr_err_t wr_store_redis__log_head(wr_store_t *st, const char *queue, wr_store_log_cb cb, void *arg);
wr_err_t wr_store_redis__log_read(wr_store_t *st, const char *queue, const wr_log_read_t *req,
                                  wr_store_log_cb cb, void *arg);
wr_err_t wr_store_redis__log_publish(wr_store_t *st, const char *queue, uint64_t size,
                                     const uint8_t root[32], const char *note, size_t len,
                                     wr_store_log_cb cb, void *arg);
wr_err_t wr_store_redis__log_unsigned(wr_store_t *st, wr_store_log_cb cb, void *arg);

/* The step of a public log operation that r (OP_LOG) is: answered with
 * err, or rep when err is WR_OK. */
void wr_store_redis__log_reply(struct req *r, wr_err_t err, const redisReply *rep);

/* Asks for the store's own load of the log salts' master (at the end of
 * this loop iteration: wr_store_redis__log_salt_load from the flush event),
 * unless it is there or on its way. */
void wr_store_redis__log_salt_want(struct rstore *s);
void wr_store_redis__log_salt_load(struct rstore *s);

/* The log id of user in b's queue (lib_log.lua's u: 32 lowercase hex and
 * a NUL) into out, under the queue's log salt (b->logmac, made at the
 * first call). WR_EUNAVAILABLE before log_key answered (no salt master
 * yet; out is ""), WR_ENOMEM, WR_EIO. */
wr_err_t wr_store_redis__log_id(struct rstore *s, struct batch *b, const char *user, char out[33]);

/* store_redis_draw.c: the opening draw (store.h log_beacon; docs/DESIGN.md
 * "The opening draw on Redis") */

/* The log_beacon operation (store.h). */
wr_err_t wr_store_redis__log_beacon(wr_store_t *st, const char *queue, uint64_t round,
                                    const uint8_t *randomness, size_t len, const char *error,
                                    wr_store_log_cb cb, void *arg);
/* The error of rep, an error reply to one of our scripts or commands:
 * WR_EDATA when Redis says a key holds the wrong type ("WRONGTYPE", at the
 * start of the reply or, from a script, after Redis 6's "ERR Error running
 * script ...: "): the queue's keys were written by something else; else
 * WR_EPROTO. */
wr_err_t wr_store_redis__reply_err(const redisReply *rep);

/* queue's opening waits for its draw and the draw may run (admit.lua's
 * DRAW, log_unsigned's round): this instance runs it unless it runs it
 * already (or four others); draw.lua's lease keeps the other instances
 * out meanwhile. Never calls a callback. */
void wr_store_redis__draw_due(struct rstore *s, const char *queue);
/* The commit arguments of a call holding a join of the queue whose cached
 * config is snap (NULL: none cached): a fresh seed and its SHA-256, hex,
 * when its opening may need a commit (publicLog, preQueueShuffle and
 * opensAt set; or nothing cached), else "" both. False when the CSPRNG
 * failed. */
bool wr_store_redis__commit_seed(const wr_cfgcache_snap_t *snap, char seed[65], char hash[65]);

/* store_redis_report.c */

/* The report operation (store.h). */
wr_err_t wr_store_redis__report(wr_store_t *st, const wr_store_report_req_t *req,
                                wr_store_report_cb cb, void *arg);
/* Answers r (OP_REPORT) with err, or with the pairs of rep when err is WR_OK. */
void wr_store_redis__report_reply(struct req *r, wr_err_t err, const redisReply *rep);

/* store_redis_push.c */

/* The push_sub operation (store.h). */
wr_err_t wr_store_redis__push_sub(wr_store_t *st, const char *q, const char *u,
                                  const wr_pushsub_t *sub, wr_store_done_cb cb, void *arg);

/* store_redis_group.c: priority groups */

/* The join_group operation (store.h): wr_store_redis__entry with j. */
wr_err_t wr_store_redis__join_group(wr_store_t *st, const char *q, const char *u,
                                    const wr_store_join_t *j, wr_store_entry_cb cb, void *arg);
/* The codes operation (store.h). */
wr_err_t wr_store_redis__codes(wr_store_t *st, const char *q, const wr_store_codes_req_t *req,
                               wr_store_codes_cb cb, void *arg);
/* Answers r (OP_CODES) with err, or goes on with rep when err is WR_OK. */
void wr_store_redis__codes_reply(struct req *r, wr_err_t err, const redisReply *rep);

/* store_redis_list.c */

/* The queue_list operation (store.h) of the store st. */
wr_err_t wr_store_redis__queue_list(wr_store_t *st, wr_store_list_cb cb, void *arg);
/* The queue_names operation (store.h): the registry's names alone. */
wr_err_t wr_store_redis__queue_names(wr_store_t *st, wr_store_list_cb cb, void *arg);

/* store_redis_batch.c */

/* Takes the first batch of l out of it; NULL when l is empty. */
struct batch *wr_store_redis__blist_pop(struct blist *l);

/* Frees b and its reference to the config snapshot; NULL is a no-op. */
void wr_store_redis__batch_free(struct batch *b);

/* Calls the callback of every request of b not answered yet, in order, with
 * err, or with its answer in rep when err is WR_OK; frees b. */
void wr_store_redis__answer_batch(struct rstore *s, struct batch *b, wr_err_t err,
                                  const redisReply *rep);

/* Sends every held batch of s, in arrival order. */
void wr_store_redis__send_held(struct rstore *s);

/* s->flush_ev's callback (arg = s): sends the held batches, answers the
 * failed ones. */
void wr_store_redis__on_flush(evutil_socket_t fd, short what, void *arg);

/* join ('1'), status ('0'), join_page ('2') and status_quiet ('3') (mode:
 * entry.lua's ARGV[3]) of user u in queue q: held in a batch, sent at the
 * end of this loop iteration; cb is called once, later. With j (a join or
 * page join, join_group) it goes alone in its batch, to entry_group.lua.
 * WR_EINVAL (bad names, no cb, a code hash that is not 64 hex), WR_EUNAVAILABLE
 * (not connected), WR_EIO (no random key), WR_ENOMEM. */
wr_err_t wr_store_redis__entry(wr_store_t *st, const char *q, const char *u, char mode,
                               const wr_store_join_t *j, wr_store_entry_cb cb, void *arg);

#endif
