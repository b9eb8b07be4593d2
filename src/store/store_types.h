/*
 * store_types.h - what the store's operations answer: the results handed
 * to their callbacks (an entry's answer, an admission tick's, a queue's
 * stats and config, the public log's and the report's records) and the
 * callback types, with the bounds on one operation's work. store.h, the
 * interface itself (the vtable and its wrappers), includes it; a module
 * that only reads answers may include this alone.
 *
 * Ownership and time as in store.h: results are borrowed until the
 * callback returns; every time is the store's clock, in microseconds since
 * the epoch ("_us") unless the name says otherwise.
 */
#ifndef WR_STORE_TYPES_H
#define WR_STORE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "base/ids.h"
#include "core/autotune.h"
#include "core/groups.h"
#include "core/pushsub.h"
#include "core/qconfig.h"
#include "core/report.h"
#include "core/token.h"

/* Away, not gone (idleTimeoutSeconds, awayHoldSeconds): bounds on the work
 * of one admission tick. */
#define WR_STORE_IDLE_SWEEP_MAX                                                                    \
    2000                             /* removals per tick, at most: page joins that never          \
                                        asked again, held people past awayHoldSeconds */
#define WR_STORE_ADMIT_SCAN_MAX 2000 /* pending or away users passed over per tick */
#define WR_STORE_IDLE_VISIT_MAX 8192 /* users the away sweep looks at per tick, about */
#define WR_STORE_AHEAD_SCAN     256  /* people ahead a poll looks at (passed_ahead) */

typedef enum {
    WR_ENTRY_WAITING = 1,     /* in line */
    WR_ENTRY_ADMITTED = 2,    /* holds a live token */
    WR_ENTRY_PASSTHROUGH = 3, /* queue disabled: go straight on */
    WR_ENTRY_PREQUEUE = 4,    /* waiting for the opening (config opensAt, still ahead) */
    WR_ENTRY_CLOSED = 5,      /* the sale is over or sold out (closed_reason): nobody
                                 joins or is admitted; people in line keep their place */
} wr_entry_state_t;

/* Why an entry is WR_ENTRY_CLOSED (docs/API.md 1.2, "The end of a sale"). */
typedef enum {
    WR_CLOSE_NONE = 0,
    WR_CLOSE_CLOSED = 1,   /* config closed: "reason":"closed" */
    WR_CLOSE_SOLD_OUT = 2, /* stock 0 and no unconsumed pass live: "reason":"soldOut" */
} wr_close_reason_t;

/* A queue's counters and gauges, cluster-wide (all instances). */
typedef struct {
    uint64_t waiting;             /* people in line now */
    uint64_t active;              /* live, unconsumed tokens + open sessions now (exact) */
    uint64_t admitted_total;      /* ever admitted */
    uint64_t consumed_total;      /* tokens consumed */
    uint64_t expired_total;       /* tokens that expired unused */
    uint64_t left_total;          /* explicit leaves (line or token revoke) */
    uint64_t rejected_full_total; /* joins refused with QUEUE_FULL */
    /* Sessions (sessionSeconds > 0): */
    uint64_t sessions;               /* open sessions now (part of active) */
    uint64_t released_total;         /* sessions ended by release or leave */
    uint64_t sessions_expired_total; /* sessions that lapsed (sessionSeconds) */
    /* Away, not gone (idleTimeoutSeconds, awayHoldSeconds): */
    uint64_t abandoned_total; /* page joins removed as idle, held people removed after
                                 awayHoldSeconds (not in left_total) */
    uint64_t away;            /* people in line now away (as the away sweep last saw them)
                                 plus the held; never pending page joins */
    uint64_t held;            /* people whose turn came while away, out of the line's order
                                 (returned or not); not in waiting */
    uint64_t returned_total;  /* held people admitted on their return */
    /* Unseen passes (docs/API.md 1.3): passes that expired before any join,
     * poll or page answer carried them (part of expired_total); their
     * holders went back to held. */
    uint64_t unseen_expired_total;
    /* Sale opening: */
    uint64_t prequeue; /* people waiting for the opening (not in waiting); once the
                          opening has begun, those not yet moved count in waiting */
    /* The end of a sale (config stock): */
    int64_t stock_left;     /* what is left now, or -1 (WR_STOCK_NONE) without a stock */
    int64_t sold_out_at_ms; /* epoch ms (store clock) the queue became sold out, or -1
                               while it is not */
    /* The public log: a commit awaits its draw (config draw is fixed). */
    bool log_committed;
    /* Autotune: the rate in use the store keeps (see autotune below), users/s;
     * 0 when none is kept (autotune off, or no step yet: the starting rate
     * applies, wr_store_rate_in_use). */
    double autotune_rate;
    /* Bypass rules (config bypass): requests let past the line by a rule,
     * at the gate or the join, counted by every instance (store.h bypass). */
    uint64_t bypass_total;
    /* Web Push (config push): the live subscriptions of the queue now, people
     * in line, the pre-queue or held who asked to be notified (push_sub);
     * store-wide. Admission claims them, leave drops them. */
    uint64_t subscribed;
    /* Priority groups (config groups; docs/API.md 1.3, "Priority groups and
     * presale codes"): n_lines lines, line 0 the standard line
     * (WR_GROUP_STANDARD), then the config's groups in priority order.
     * waiting: people in that line now (the standard line's includes the
     * pre-queue still to move, as waiting does; held people are in none);
     * admitted_total: admissions from that line ever (held returns
     * included). A store without groups fills line 0 alone (n_lines 1)
     * with waiting and admitted_total. */
    size_t n_lines;
    struct {
        char name[WR_GROUP_NAME_MAX + 1];
        uint64_t waiting;
        uint64_t admitted_total;
    } lines[WR_GROUPS_MAX + 1];
} wr_queue_stats_t;

/* A user's place: the answer of join and status. */
typedef struct {
    wr_entry_state_t state;
    uint64_t position;        /* WAITING: 1-based rank in line */
    uint64_t waiting;         /* WAITING or EFULL: people in line */
    char jti[WR_JTI_LEN + 1]; /* ADMITTED: id of the live token */
    int64_t issued_at_us;     /* ADMITTED: admission time */
    int64_t expires_at_us;    /* ADMITTED: token expiry */
    /* WAITING after a join that added the user (else -1): us from the
     * store's now until the first of the line, and until this user, may
     * be admitted (the admission delay, queue.h wr_queue_admit_due_us). */
    int64_t head_due_us;
    int64_t own_due_us;
    /* This call placed the user: a join that added them to the line, a
     * group's line or the pre-queue (WAITING or PREQUEUE; a page join
     * too, at once). False for every other answer: a repeated join, a
     * status, a held person's return, a refusal, a pass. The sale's
     * report counts its joined by it (api_entries.c). */
    bool added;
    /* WAITING: the user is held (their turn came while they were away):
     * position is 1, waiting the line's count; admitted at the next tick
     * that admits anyone. */
    bool held;
    /* WAITING, after a join or poll of someone already in line: of the
     * first passed_scan people ahead (min(position - 1,
     * WR_STORE_AHEAD_SCAN)), how many admission is expected to pass over
     * (wr_queue_passed_over: away, overdue, pending page joins), for the
     * retry plan (docs/API.md "Away people ahead"). passed_ahead -1 and
     * passed_scan 0 when not counted: a newcomer, a quiet status, the
     * pre-queue and its opening, a held person. */
    int64_t passed_ahead;
    uint64_t passed_scan;
    wr_close_reason_t closed_reason; /* CLOSED: why */
    bool subscribed;                 /* WAITING: a live Web Push subscription (push_sub):
                                        present without polling, no idle cap on the retry */
    int64_t stock_left;              /* what is left now (any state), or -1 without a stock */
    const wr_queue_config_t *config; /* current config of the queue; borrowed */
    /* The public log's receipt (publicLog on, a person in line, pre-queue
     * or held): their log id, the index and hash of their join leaf. */
    bool has_receipt;
    char receipt_u[33];
    uint64_t receipt_index;
    uint8_t receipt_leaf_hash[32];
    /* Priority groups (docs/API.md 1.3): the person's line (WAITING,
     * PREQUEUE, CLOSED of someone with a place, and ADMITTED): group "" and
     * group_line 0 for the standard line, else the group's name and its
     * 1-based place in the config's order. position counts this line only
     * (waiting counts the whole line). group_admitted_60s: admissions from
     * this line in the last 60 s (store clock), for the ETA rate
     * (wr_groups_eta_rate); group_first_waiting: the 1-based line of the
     * first group with people waiting, 0 none. */
    char group[WR_GROUP_NAME_MAX + 1];
    uint32_t group_line;
    uint32_t group_first_waiting;
    uint64_t group_admitted_60s;
    /* WR_ECODE: why the presale code was refused (nothing changed). */
    wr_code_reason_t code_reason;
} wr_entry_t;

/* The answer of one admission tick. */
typedef struct {
    uint64_t admitted;               /* users admitted by this call (0 when another
                                        instance already ran this tick) */
    int64_t now_us;                  /* store time of the tick */
    wr_queue_stats_t stats;          /* after the tick */
    const wr_queue_config_t *config; /* current config; borrowed */
    const int64_t *waited_us;        /* each user admitted by this call: how long they
                                        waited, now_us - arrival score (us, >= 0);
                                        borrowed; n_waited == admitted */
    size_t n_waited;
    /* Sale opening: */
    uint64_t opening_moved; /* pre-queue people this call moved into the line */
    uint64_t opening_left;  /* pre-queue people still to move (> 0: call admit again now) */
    /* Web Push: the subscribed people this call admitted, their
     * subscriptions claimed (deleted from the store): the caller sends
     * each one push (exactly one per admission, whichever instance made
     * the tick). Borrowed; n_pushes 0 when none. */
    const struct wr_store_push *pushes;
    size_t n_pushes;
} wr_admit_t;

/* A claimed subscription of an admitted person (wr_admit_t.pushes). */
typedef struct wr_store_push {
    const char *user;          /* borrowed */
    const wr_pushsub_t *sub;   /* borrowed */
    int64_t expires_at_us;     /* admission: their pass's expiry (store clock, epoch us) */
    wr_close_reason_t closing; /* NONE: an admission; else the closing push (the sale
                                  closed or sold out; the subscription stays) */
} wr_store_push_t;

/* The answer of consume and verify. */
typedef struct {
    bool passthrough;         /* queue disabled: valid without a token */
    wr_token_reason_t reason; /* on WR_ETOKEN: WR_TOKEN_CONSUMED or _EXPIRED;
                                 release: WR_TOKEN_NO_SESSION */
    int64_t session_us;       /* release WR_OK: how long the session lasted, consume to
                                 release (store clock, us; autotune's session signal);
                                 -1 unknown or not a release */
} wr_token_check_t;

/* A queue with its config and stats: the answer of get and list. */
typedef struct {
    const char *name;                /* borrowed */
    const wr_queue_config_t *config; /* borrowed */
    wr_queue_stats_t stats;
} wr_queue_info_t;

/* The answer of secret_sync (K31: a store that lost its data). Borrowed
 * until the callback returns. */
#define WR_STORE_EPOCH_MAX 64 /* bytes of an epoch marker */
typedef struct {
    const uint8_t *secret; /* the shared token secret now stored (after a write-back: own);
                              NULL (len 0) when own was not given */
    size_t secret_len;
    const uint8_t *previous; /* the previous shared secret the store keeps (written by an
                                instance that adopted another's), NULL (len 0) if none */
    size_t previous_len;
    const char *epoch;    /* the store's epoch marker now (NUL-terminated) */
    bool secret_restored; /* the store held no secret: this call wrote own back */
} wr_store_sync_t;

/* Autotune (docs/API.md 1.2, "The line follows the shop"): what one call
 * of the autotune operation does. */
#define WR_AUTOTUNE_SOURCES 2 /* report slots: 0 the service's POST .../health, 1 sessions */
typedef struct {
    bool report;       /* record a report in slot source, received now (store clock) */
    int source;        /* 0..WR_AUTOTUNE_SOURCES-1 */
    double latency_ms; /* wr_autotune_report_valid */
    double error_rate;
    bool set;               /* compare-and-set the rate in use: */
    int64_t expect_step_us; /* ... when the kept step time is this (0 = none kept) */
    double rate;            /* ... to this (> 0, <= 1e6), step time = now */
    double cut_latency_ms;  /* ... with this (autotune.h wr_autotune_state_t) */
} wr_autotune_req_t;

/* The answer: the state after the call. Borrowed until the callback returns. */
typedef struct {
    double rate;                                       /* the rate in use kept, 0 = none */
    int64_t step_us;                                   /* store time of its last change, 0 = none */
    double cut_latency_ms;                             /* kept with it */
    wr_autotune_report_t reports[WR_AUTOTUNE_SOURCES]; /* at_us 0 = none */
    int64_t now_us;                                    /* store time of the call */
    bool applied;                                      /* req->set and this call wrote the rate */
} wr_autotune_state_rec_t;

/* The public log (docs/API.md 1.3, "A line anyone can check"): what a
 * store answers about a queue's log. Only the members of the operation
 * asked are set; all borrowed until the callback returns. */
#define WR_LOG_NODES_MAX 256 /* (level, index) hashes one log_read may ask for */
typedef struct {
    /* log_head, log_publish: */
    uint64_t size;          /* leaves in the log */
    uint8_t root[32];       /* the root of all of them */
    const char *checkpoint; /* the latest signed checkpoint (NULL, 0: none yet) */
    size_t checkpoint_len;
    uint64_t checkpoint_size; /* its tree size */
    bool broken;              /* the log holds fewer leaves than the checkpoint */
    bool forked;              /* the first checkpoint_size leaves do not give its root */
    bool enabled;             /* the queue exists with publicLog on (else: a deleted
                                 queue's log, still readable) */
    /* log_read: */
    const char *leaves; /* leaves start..end-1, each followed by "\n" */
    size_t leaves_len;
    const uint8_t (*hashes)[32]; /* the nodes asked, in order */
    size_t n_hashes;
    /* log_key: */
    uint8_t key[32]; /* the signing key's seed the store keeps */
    /* log_unsigned: */
    const char *const *names; /* queues whose log has leaves no checkpoint covers */
    size_t n_names;
    /* ... and the queues whose opening waits for its beacon (docs/API.md
     * 1.3), with the beacon's URL and round of their commit */
    const char *const *beacon_queues;
    const char *const *beacon_urls;
    const uint64_t *beacon_rounds;
    size_t n_beacons;
} wr_log_answer_t;

/* What log_read reads: leaves [start, end) (start == end: none) and the
 * stored hashes at (level[i], index[i]) for i < n_nodes. */
typedef struct {
    uint64_t start, end;
    size_t n_nodes;
    uint8_t level[WR_LOG_NODES_MAX];
    uint64_t index[WR_LOG_NODES_MAX];
} wr_log_read_t;

/* The sale's report (docs/API.md 1.3; core/report.h): what one call of the
 * report operation does. */
typedef enum {
    WR_STORE_REPORT_WRITE = 1, /* into the map of queue and day: */
    WR_STORE_REPORT_READ,      /* every field of the map of queue and day */
    WR_STORE_REPORT_INDEX,     /* the registry of reports (and one entry's update) */
} wr_store_report_kind_t;

typedef struct {
    const char *field; /* a field name (< WR_REPORT_FIELD_MAX bytes) */
    int64_t n;         /* added to it */
} wr_store_report_add_t;

typedef struct {
    wr_store_report_kind_t kind;
    const char *queue; /* WRITE, READ: the queue; INDEX: the entry to update, NULL = none */
    int64_t day;       /* WRITE, READ: the day (core/report.h wr_report_day), >= 0 */
    /* WRITE: */
    int64_t expire_at_ms;              /* the day's map may go at this time (the kept days) */
    const char *sample;                /* a field to set to a sample of the queue now (its counters
                                          and gauges, wr_report_sample_t as text, taken in the same
                                          atomic step), NULL = none. An "s" field is set only when
                                          absent (the first instance's sample wins); an "e" field
                                          always. Nothing when the queue does not exist. */
    double rate;                       /* with sample: the admission rate in use, users/s */
    const wr_store_report_add_t *adds; /* fields to add to (n_adds) */
    size_t n_adds;
    /* INDEX with queue: */
    bool lookup;        /* answer that entry alone (no pair: none), change nothing */
    int64_t first_ms;   /* else: the report's first minute when the entry is new */
    int64_t deleted_ms; /* -1: the queue lives; else when it was deleted */
} wr_store_report_req_t;

#define WR_STORE_REPORT_ADDS_MAX 500 /* adds in one WRITE, at most */

/* An answer's pairs: READ the map's fields and values; INDEX one pair per
 * queue with a report: its name and "FIRST_MS,DELETED_MS" (-1: lives).
 * Borrowed until the callback returns. */
typedef struct {
    const char *key;
    const char *value;
} wr_store_report_pair_t;

/* Callbacks. `arg` is the caller's pointer, passed back unchanged. */
typedef void (*wr_store_entry_cb)(wr_err_t err, const wr_entry_t *entry, void *arg);

/* A join into a priority group (store.h join_group). */
typedef struct {
    bool page;             /* a page join (join_page's rules), else an API join (join's) */
    const char *group;     /* an invite's claim grp: a group of the queue's config; NULL or
                              "" none */
    const char *code_hash; /* a presale code's hash (wr_groups_code_hash: 64 lowercase hex),
                              or NULL; with group set it is not looked at (grp wins) */
    bool check_only;       /* the verdict on code_hash only: nothing added or spent */
} wr_store_join_t;

/* Presale codes (store.h codes). */
typedef enum {
    WR_CODES_CREATE, /* keep n new codes (their hashes) of group, each with uses uses */
    WR_CODES_LIST,   /* per group of the config: issued, uses spent, revoked */
    WR_CODES_REVOKE, /* revoke the code whose hash is hashes[0] */
} wr_codes_kind_t;

typedef struct {
    wr_codes_kind_t kind;
    const char *group;                          /* CREATE: a group of the queue's config */
    const char (*hashes)[WR_CODE_HASH_HEX + 1]; /* CREATE: n hashes; REVOKE: 1 */
    size_t n;                                   /* CREATE: 1..WR_CODES_COUNT_MAX; REVOKE: 1 */
    uint32_t uses;                              /* CREATE: 1..WR_CODES_USES_MAX */
    int64_t expires_at_ms;                      /* CREATE: epoch ms, or -1 never */
} wr_store_codes_req_t;

/* The answer of codes (every kind): the config's groups in order, each with
 * the codes issued (count), uses spent and codes revoked. */
typedef struct {
    size_t n;
    struct {
        char name[WR_GROUP_NAME_MAX + 1];
        uint64_t issued, uses_spent, revoked;
    } groups[WR_GROUPS_MAX];
} wr_store_codes_t;

typedef void (*wr_store_codes_cb)(wr_err_t err, const wr_store_codes_t *res, void *arg);
typedef void (*wr_store_done_cb)(wr_err_t err, void *arg);
typedef void (*wr_store_admit_cb)(wr_err_t err, const wr_admit_t *res, void *arg);
typedef void (*wr_store_token_cb)(wr_err_t err, const wr_token_check_t *res, void *arg);
typedef void (*wr_store_info_cb)(wr_err_t err, const wr_queue_info_t *info, void *arg);
typedef void (*wr_store_list_cb)(wr_err_t err, const wr_queue_info_t *infos, size_t n, void *arg);
typedef void (*wr_store_secret_cb)(wr_err_t err, const uint8_t *secret, size_t len, void *arg);
typedef void (*wr_store_sync_cb)(wr_err_t err, const wr_store_sync_t *res, void *arg);
typedef void (*wr_store_autotune_cb)(wr_err_t err, const wr_autotune_state_rec_t *res, void *arg);
typedef void (*wr_store_log_cb)(wr_err_t err, const wr_log_answer_t *res, void *arg);

typedef void (*wr_store_report_cb)(wr_err_t err, const wr_store_report_pair_t *pairs, size_t n,
                                   void *arg);

/* Any one of the callbacks: what a backend keeps for a pending operation,
 * next to its own record of which member is set. */
typedef union {
    wr_store_entry_cb entry;
    wr_store_done_cb done;
    wr_store_admit_cb admit;
    wr_store_token_cb token;
    wr_store_info_cb info;
    wr_store_list_cb list;
    wr_store_secret_cb secret;
    wr_store_sync_cb sync;
    wr_store_autotune_cb autotune;
    wr_store_log_cb log;
    wr_store_report_cb report;
    wr_store_codes_cb codes;
} wr_store_cb_t;

#endif
