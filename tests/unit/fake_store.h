/*
 * fake_store.h - the one fake store of the unit tests: a wr_store_t whose
 * vtable holds the operations a test asks for (admit, queue_list, burn,
 * consume, join, ping, close), answering with canned results and recording
 * every call.
 *
 * Two ways to answer:
 *   - from a loop (fs_init with a base): each accepted call is answered at
 *     once from the loop (never inside the call), like a real store; the
 *     next fail_next answers carry WR_EUNAVAILABLE, the others WR_OK;
 *   - by hand (fs_init with NULL): accepted calls wait in a FIFO (at most
 *     FS_PENDING_MAX) until the test calls fs_answer.
 * A call made while sync_err != WR_OK returns sync_err at once, without a
 * callback, and counts in refused (not in calls). queue_list returns
 * list_err at once (WR_EUNAVAILABLE unless set): discovery finds nothing;
 * with list_err WR_OK (a loop needed) it answers from the loop with the
 * list_n names of list_names (config NULL, stats zero: as queue_names),
 * one list at a time (a second while one is pending: WR_EINVAL).
 *
 * Canned results (on WR_OK; NULL with an error): admit: the admit field with
 * now_us = the fake's store clock at the call; join: the entry field; burn
 * and consume: a zeroed wr_token_check_t. The store clock: fixed_us when
 * >= 0, else the host's wall clock plus offset_us.
 *
 * The fake is a plain struct, owned by the test (a static or a local); fs_init
 * clears it. Fields may be changed by the test at any time (ops.in_process
 * too). Pending callbacks are dropped without a call when the test drops the
 * fake (close, when in the vtable, answers them with WR_ECANCELED).
 */
#ifndef WR_TEST_FAKE_STORE_H
#define WR_TEST_FAKE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "store/store.h"

#define FS_CALLS_MAX   1024 /* calls recorded; calls counts beyond it */
#define FS_PENDING_MAX 256
#define FS_LIST_MAX    16 /* names a list answers with */

/* The operations (a mask for fs_init). */
typedef enum {
    FS_ADMIT = 1 << 0,
    FS_QUEUE_LIST = 1 << 1,
    FS_BURN = 1 << 2,
    FS_CONSUME = 1 << 3,
    FS_JOIN = 1 << 4,
    FS_PING = 1 << 5,
    FS_CLOSE = 1 << 6,
} fs_op_t;

/* One accepted call, as made. */
typedef struct {
    fs_op_t op;
    char queue[WR_QUEUE_NAME_MAX + 1];
    char user[WR_USER_ID_MAX + 1]; /* "" when the operation has none */
    char jti[WR_JTI_LEN + 1];      /* burn, consume */
    int64_t exp_us;                /* burn */
    bool check_only;               /* burn */
    int64_t store_us;              /* the fake's store clock at the call */
    int64_t mono_ms;               /* the host's monotonic clock at the call */
} fs_call_t;

typedef struct {
    fs_op_t op;
    union {
        wr_store_admit_cb admit;
        wr_store_token_cb token;
        wr_store_entry_cb entry;
        wr_store_done_cb done;
    } cb;
    void *arg;
    int64_t now_us; /* admit: the store clock at the call */
} fs_pending_t;

typedef struct fake_store {
    wr_store_t base; /* first: the store handed to the code under test */
    wr_store_ops_t ops;
    struct event_base *loop; /* NULL: answered by hand (fs_answer) */
    /* canned answers */
    wr_err_t sync_err; /* != WR_OK: calls return it at once (refused) */
    int fail_next;     /* loop: the next answers carry WR_EUNAVAILABLE */
    wr_err_t list_err; /* queue_list's answer (WR_EUNAVAILABLE) */
    int64_t fixed_us;  /* store clock: fixed when >= 0 (-1) ... */
    int64_t offset_us; /* ... else wall clock + offset_us (0) */
    wr_admit_t admit;  /* admit's result (now_us is set per call) */
    wr_entry_t entry;  /* join's result */
    /* list_err WR_OK: the list_n names listed; the lists answered; the
     * pending list (its answer's event, NULL when none; callback and arg) */
    const char *list_names[FS_LIST_MAX];
    size_t list_n;
    int lists;
    struct event *list_ev;
    wr_store_list_cb list_cb;
    void *list_arg;
    /* called with each accepted call as it is recorded (NULL: none): a
     * test's checks on every call */
    void (*on_call)(const fs_call_t *call);
    /* what happened */
    int calls;    /* accepted calls (recorded up to FS_CALLS_MAX) */
    int answered; /* callbacks made */
    int refused;  /* calls refused at once (sync_err) */
    fs_call_t call[FS_CALLS_MAX];
    int n; /* pending (by hand), oldest first */
    fs_pending_t pend[FS_PENDING_MAX];
    bool closed; /* close was called */
} fake_store_t;

/* Clears f and sets its vtable to the operations in ops (fs_op_t mask,
 * named "fake"), the defaults above, and the way to answer (loop or
 * NULL). */
void fs_init(fake_store_t *f, unsigned ops, struct event_base *loop);

/* The fake's store clock now, us. */
int64_t fs_now_us(const fake_store_t *f);

/* By hand: answers pending call i (0 = oldest) with err and the canned
 * result; the others keep their order. */
void fs_answer(fake_store_t *f, int i, wr_err_t err);

/* From a loop: runs it until n callbacks have been made, for at most
 * timeout_ms; false when they were not. */
bool fs_run_until_answered(fake_store_t *f, int n, int64_t timeout_ms);

/* fs_init answering from a new loop, returned (NULL: out of memory). */
struct event_base *fs_init_loop(fake_store_t *f, unsigned ops);

/* The end of fs_init_loop: the answers still queued are made (up to 5 s:
 * a freed caller's callbacks free what they own), then the loop is freed. */
void fs_free_loop(fake_store_t *f);

/* Calls that reached the fake: accepted and refused. */
int fs_reached(const fake_store_t *f);

#endif
