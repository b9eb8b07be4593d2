/*
 * contract.h - the store contract suite (store.h), split by topic: one .c
 * per topic (join, admission, tokens, config, close, iteration, sessions,
 * idle, opening; redis for what only the Redis backend has), each ending
 * with its WR_CONTRACT_GROUP list of tests; runner.c runs every group
 * against each backend of the store registry (runtime/store_registry.h),
 * the *_redis_only groups against Redis alone.
 *
 * Every test opens a fresh store on one libevent base and drives it with
 * the blocking helpers of store_harness.h: each helper calls one operation,
 * checks that it returned WR_OK, marks "returned", then runs the loop until
 * the callback fired (bounded). The callback checks that it did not run
 * inside the call and counts its calls: every helper asserts exactly one.
 *
 * For "redis" the runner starts its own redis-server (store_harness.h: on a
 * unix socket in a mkdtemp directory, --port 0, no persistence) and kills
 * it at the end; each test starts from FLUSHALL.
 *
 * Time: admission counts depend on the store's tick, so the tests use the
 * store's own clock (wr_admit_t.now_us) to compute the exact expectation
 * of each call (same tick: 0; next ticks: the hand-computed budget).
 *
 * Adding a test: write it in its topic's file and add T(name) to that
 * file's WR_CONTRACT_GROUP; a new topic is a new file here (CMake takes
 * every .c of this folder) and one line in runner.c's group table.
 */
#ifndef WR_CONTRACT_H
#define WR_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/embed.h"
#include "core/queue.h"
#include "cluster_harness.h"
#include "fake_redis.h"
#include "runtime/store_registry.h"
#include "store/redis/store_redis.h"
#include "store/store.h"
#include "store_harness.h"

struct CMUnitTest;

/* The backend under test is Redis (runner.c sets it from argv). */
extern bool g_redis;
extern bool g_cluster; /* the backend is redis-cluster (a private cluster, cluster_harness.h) */

/* ---------------------------------------------------------- common.c */

wr_queue_config_t mkcfg(double rate, uint32_t tick_ms, uint64_t max_active, uint64_t max_queue,
                        uint32_t ttl_s);
/* The plain queue most tests use: 5 users a second on ticks of 1 s, no
 * limit on active or waiting people, passes of 300 s. */
wr_queue_config_t plain_cfg(void);
void put_ok(wr_store_t *s, const char *q, wr_queue_config_t c);
/* A paused queue q (5/s, tick 100 ms, TTL 300 s) whose waiting people are
 * away after idle_s seconds of silence (0: never), with users u1..u<users>
 * joined (join_n) and then p1..p<pages> page-joined (join_page_n: the last
 * at position users + pages). */
void put_idle_line(wr_store_t *s, const char *q, uint32_t idle_s, int users, int pages);
/* Joins users "u<from>".."u<to>", each WAITING. */
void join_n(wr_store_t *s, const char *q, int from, int to);
/* Admits until the store reports a tick other than prev_tick (bounded),
 * checking that every same-tick call admitted 0; r: the first call in a
 * new tick. */
void admit_next_tick(wr_store_t *s, const char *q, int64_t tick_us, int64_t prev_tick, sh_res_t *r);
/* admit_next_tick, tick after tick, until want people were admitted or
 * max_ticks ticks ran; *prev_tick (-1 at first) follows the ticks, r is
 * the last tick's answer. Returns how many were admitted. */
uint64_t admit_until(wr_store_t *s, const char *q, int64_t tick_us, uint64_t want, int max_ticks,
                     int64_t *prev_tick, sh_res_t *r);
/* Moves the store's clock past t_us (debug hook, else a real wait). */
void pass_store_time(wr_store_t *s, int64_t t_us);
/* join_n, then lets the admission delay pass. */
void join_due(wr_store_t *s, const char *q, int from, int to);
/* Moves the store's clock on by us. */
void pass_us(wr_store_t *s, int64_t us);
/* u's status is WAITING at pos of waiting. */
void expect_waiting(wr_store_t *s, const char *q, const char *u, uint64_t pos, uint64_t waiting);
/* u's status is the held answer: WAITING, held, position 1, waiting the
 * line's count (the held are not in it). */
void expect_held(wr_store_t *s, const char *q, const char *u, uint64_t waiting);
/* A join or status answered WR_OK (err, its call's) with r in state, and
 * r.entry.added as added (the call placed the user or not). */
void expect_entry(wr_err_t err, const sh_res_t *r, wr_entry_state_t state, bool added);
/* u's status is ADMITTED. */
void expect_admitted(wr_store_t *s, const char *q, const char *u);
/* u's status is ADMITTED: its pass's jti into jti. */
void pass_of(wr_store_t *s, const char *q, const char *u, char jti[WR_JTI_LEN + 1]);
/* join_due of u1..u<n>, then one admission tick, which must admit
 * admitted; a (NULL: not wanted): that tick's answer. */
void join_and_admit(wr_store_t *s, const char *q, int n, uint64_t admitted, sh_res_t *a);
/* Queue q put with config c, u1..u<n> joined and admitted in one tick
 * (join_and_admit: all n admitted); u1's pass's jti into jti. */
void put_and_admit(wr_store_t *s, const char *q, wr_queue_config_t c, int n,
                   char jti[WR_JTI_LEN + 1]);
/* Page joins of p<from>..p<to>, each a newcomer at the end of the line
 * (WAITING, position == waiting); returns the last one's position. */
uint64_t join_page_n(wr_store_t *s, const char *q, int from, int to);
/* A call on one pass (wr_store_consume, wr_store_release). */
typedef wr_err_t (*pass_call_t)(wr_store_t *s, const char *q, const char *u, const char *jti,
                                wr_store_token_cb cb, void *arg);
/* n (at most 64) calls of call on u's pass jti in flight at once (all made
 * before any answer): each answered once, never from inside the call;
 * exactly one succeeds, the others are refused WR_ETOKEN with reason. */
void race_one(wr_store_t *s, pass_call_t call, const char *q, const char *u, const char *jti, int n,
              wr_token_reason_t reason);
/* The backend under test, opened through the store registry. */
wr_store_t *open_store_with(uint32_t cmd_timeout_ms);
/* Per test: a fresh store in *state (Redis: after FLUSHALL); closed after. */
int setup(void **state);
int teardown(void **state);
int group_setup(void **state);

/* ------------------------------------------------------- iteration.c */

/* Joins and statuses made in one loop iteration (store_redis sends those
 * of one queue as one script call): each answers exactly once, never from
 * inside the call, with the answer it gets when the calls run one after
 * the other; an argument refused at the call (WR_EINVAL) is never called
 * back and does not disturb the others; within a queue the callbacks come
 * in call order. */
typedef struct {
    char op; /* 'j' join, 's' status, 'p' join_page, 'q' status_quiet, 'l' leave,
                'd' delete, 'a' admit */
    const char *q, *u;
    wr_err_t rc;   /* what the call returns */
    wr_err_t want; /* what the callback gets (rc == WR_OK) */
    int pos;       /* WAITING: position (0 = any state), or -1 ADMITTED, -2 PASSTHROUGH */
    int waiting;   /* WAITING or EFULL: waiting */
    int added;     /* answered WR_OK: 1 the call placed the user (entry.added), -1 it did
                      not, 0 either (a status never does, whatever this says) */
} step_t;

/* A step by what it expects (op as above):
 *   STEP_WAITS(op, q, u, pos, of)  answered WR_OK: waiting, position pos of `of`
 *   STEP_ADMITTED(op, q, u)        answered WR_OK: admitted
 *   STEP_PASSES(op, q, u)          answered WR_OK: passthrough
 *   STEP_DONE(op, q, u)            answered WR_OK (in any state)
 *   STEP_FULL(op, q, u, of)        answered WR_EFULL with `of` waiting
 *   STEP_FAILS(op, q, u, err)      answered err (not WR_EFULL)
 *   STEP_REFUSED(op, q, u)         the call returns WR_EINVAL, no answer
 *   STEP_ADDED(op, q, u)           answered WR_OK (any state): the call placed the user
 *   STEP_KEPT(op, q, u)            answered WR_OK (any state): it did not */
#define STEP_(o, qq, uu, r, w, p, of, add)                                                         \
    ((step_t){.op = o, .q = qq, .u = uu, .rc = r, .want = w, .pos = p, .waiting = of, .added = add})
#define STEP_WAITS(op, q, u, pos, of) STEP_(op, q, u, WR_OK, WR_OK, pos, of, 0)
#define STEP_ADMITTED(op, q, u)       STEP_(op, q, u, WR_OK, WR_OK, -1, 0, 0)
#define STEP_PASSES(op, q, u)         STEP_(op, q, u, WR_OK, WR_OK, -2, 0, 0)
#define STEP_DONE(op, q, u)           STEP_(op, q, u, WR_OK, WR_OK, 0, 0, 0)
#define STEP_FULL(op, q, u, of)       STEP_(op, q, u, WR_OK, WR_EFULL, 0, of, 0)
#define STEP_FAILS(op, q, u, err)     STEP_(op, q, u, WR_OK, err, 0, 0, 0)
#define STEP_REFUSED(op, q, u)        STEP_(op, q, u, WR_EINVAL, WR_OK, 0, 0, 0)
#define STEP_ADDED(op, q, u)          STEP_(op, q, u, WR_OK, WR_OK, 0, 0, 1)
#define STEP_KEPT(op, q, u)           STEP_(op, q, u, WR_OK, WR_OK, 0, 0, -1)

/* Callbacks of one queue come in call order (run_steps checks); false in
 * durability mode. */
extern bool g_in_order;
/* Makes every call of steps in one go, runs the loop until each answered,
 * and checks each answer. */
void run_steps(wr_store_t *s, const step_t *steps, size_t n);

/* ------------------------------------------------------------ publog.c */

/* What a public log operation answered (lg_cb copies it; the answer's
 * pointers are cleared). */
typedef struct {
    sh_res_t r;
    wr_log_answer_t a;
    char leaves[65536];
    char cp[1024];
    uint8_t hashes[WR_LOG_NODES_MAX][32];
    size_t n_names;
    size_t n_beacons; /* log_unsigned: queues waiting for their beacon; the first: */
    char beacon_queue[WR_QUEUE_NAME_MAX + 1];
    char beacon_url[600];
    uint64_t beacon_round;
} lres_t;
/* A wr_store_log_cb into an lres_t (arg). */
void lg_cb(wr_err_t err, const wr_log_answer_t *a, void *arg);
/* log_head, log_read and log_unsigned run to their callback into *l
 * (cleared first); the callback's error (lg_unsigned: asserts WR_OK and
 * returns the names' count). */
wr_err_t lg_head(wr_store_t *s, const char *q, lres_t *l);
wr_err_t lg_read(wr_store_t *s, const char *q, const wr_log_read_t *req, lres_t *l);
size_t lg_unsigned(wr_store_t *s, lres_t *l);

/* ------------------------------------------------------------ groups */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* The list of a topic's tests: wr_contract_<name>[] and its length. */
#define WR_CONTRACT_GROUP(name, ...)                                                               \
    const struct CMUnitTest wr_contract_##name[] = {__VA_ARGS__};                                  \
    const size_t wr_contract_##name##_n = sizeof wr_contract_##name / sizeof wr_contract_##name[0]
#define WR_CONTRACT_EXTERN(name)                                                                   \
    extern const struct CMUnitTest wr_contract_##name[];                                           \
    extern const size_t wr_contract_##name##_n

#endif
