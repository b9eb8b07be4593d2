/*
 * store_harness.h - the scaffolding the store test programs share
 * (test_store_contract (contract/), test_store_model, test_store_memory,
 * test_store_breaker): one event loop, a result record that every store
 * callback fills, blocking helpers that run one operation to its callback,
 * and a private redis-server.
 *
 * Not thread-safe; one loop and one redis-server per program. The helpers
 * fail the running cmocka test (assert_*) when the async contract of
 * store.h is broken: a call that returns WR_OK must call back exactly once,
 * from the loop, never from inside the call.
 */
#ifndef WR_TEST_STORE_HARNESS_H
#define WR_TEST_STORE_HARNESS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "base/clock.h"
#include "store/store.h"

/* How long a helper waits for one callback, ms. */
#define SH_WAIT_MS 5000

/* ------------------------------------------------------------ loop */

/* Time: clock.h (wr_clock_mono_ms for deadlines; wr_clock_wall_us is the
 * clock Redis TIME uses on this host). */

/* Creates the loop the helpers run, with a 5 ms keepalive timer so that a
 * loop with nothing else pending still wakes up to check its deadline.
 * Returns it (owned by the harness; NULL on failure). One at a time. */
struct event_base *sh_loop_new(void);

/* The loop made by sh_loop_new (borrowed), for the stores to open on. */
struct event_base *sh_base(void);

/* Frees the loop; close every store on it first. */
void sh_loop_free(void);

/* Runs the loop until *count >= target or timeout_ms passed; true if
 * reached. */
bool sh_run_until(const int *count, int target, int timeout_ms);

/* Runs the loop for ms milliseconds. */
void sh_run_for(int ms);

/* ------------------------------------------------------------ results */

/* What the callbacks saw. Clear it (sh_begin) before each call. Borrowed
 * results are copied: entry.config, admit.config are set to NULL, the
 * config goes to cfg (has_cfg), names are copied. */
typedef struct {
    int calls;      /* callbacks received */
    bool returned;  /* the call has returned (set by sh_settle) */
    bool sync_call; /* a callback ran before `returned` was set */
    int order;      /* harness-wide sequence number of the last callback */
    wr_err_t err;
    bool has_entry;
    wr_entry_t entry;
    bool has_admit;
    wr_admit_t admit;                        /* waited_us cleared: see the two below */
    int64_t waited_first_us, waited_last_us; /* admit.waited_us[0] and [n_waited - 1] */
    bool has_cfg;
    wr_queue_config_t cfg;
    bool has_tok;
    wr_token_check_t tok;
    bool has_info; /* queue_get: name, stats, cfg */
    char name[WR_QUEUE_NAME_MAX + 1];
    wr_queue_stats_t stats;
    size_t n; /* queue_list: the count; names and lstats of the first 16 */
    char names[16][WR_QUEUE_NAME_MAX + 1];
    wr_queue_stats_t lstats[16];
    uint8_t secret[WR_SECRET_MAX];
    size_t secret_len;
    bool has_codes; /* codes: the counts per group */
    wr_store_codes_t codes;
} sh_res_t;

/* Counts one callback into r (calls, err, order, sync_call); for callbacks
 * a test writes itself. */
void sh_note(sh_res_t *r, wr_err_t err);

/* The store callbacks; arg is an sh_res_t. */
void sh_entry_cb(wr_err_t err, const wr_entry_t *e, void *arg);
void sh_done_cb(wr_err_t err, void *arg);
void sh_admit_cb(wr_err_t err, const wr_admit_t *a, void *arg);
void sh_token_cb(wr_err_t err, const wr_token_check_t *t, void *arg);
void sh_info_cb(wr_err_t err, const wr_queue_info_t *i, void *arg);
void sh_list_cb(wr_err_t err, const wr_queue_info_t *infos, size_t n, void *arg);
void sh_secret_cb(wr_err_t err, const uint8_t *sec, size_t len, void *arg);
void sh_codes_cb(wr_err_t err, const wr_store_codes_t *c, void *arg);

/* ------------------------------------------------------------ one call, waited for */

/* Clears r. */
void sh_begin(sh_res_t *r);

/* After a call that returned rc: asserts rc == WR_OK, marks r returned,
 * runs the loop until the callback (SH_WAIT_MS) and asserts exactly one,
 * not from inside the call. Returns the callback's error. Use:
 * sh_begin(&r); sh_settle(&r, wr_store_x(s, ..., my_cb, &r)). */
wr_err_t sh_settle(sh_res_t *r, wr_err_t rc);

/* sh_settle waiting up to wait_ms (ms) for the callback: for calls known
 * to take many store round trips. */
wr_err_t sh_settle_ms(sh_res_t *r, wr_err_t rc, int wait_ms);

/* Runs the loop until r's callback (SH_WAIT_MS) and asserts exactly one;
 * for calls made by hand. */
void sh_wait_one(sh_res_t *r);

/* One operation each, run to its callback (sh_begin + call + sh_settle).
 * Return the callback's error; r holds the rest. */
wr_err_t sh_join(wr_store_t *s, const char *q, const char *u, sh_res_t *r);
/* join_page: the queue page's join (a newcomer is pending). */
wr_err_t sh_join_page(wr_store_t *s, const char *q, const char *u, sh_res_t *r);
/* status_quiet: status that may skip recording the last-seen time. */
wr_err_t sh_status_quiet(wr_store_t *s, const char *q, const char *u, sh_res_t *r);
wr_err_t sh_status(wr_store_t *s, const char *q, const char *u, sh_res_t *r);
wr_err_t sh_leave(wr_store_t *s, const char *q, const char *u);
/* Counts n bypasses of q (store.h bypass). */
wr_err_t sh_bypass(wr_store_t *s, const char *q, uint64_t n);
wr_err_t sh_admit(wr_store_t *s, const char *q, sh_res_t *r);
wr_err_t sh_consume(wr_store_t *s, const char *q, const char *u, const char *jti, sh_res_t *r);
wr_err_t sh_verify(wr_store_t *s, const char *q, const char *u, const char *jti, sh_res_t *r);
wr_err_t sh_release(wr_store_t *s, const char *q, const char *u, const char *jti, sh_res_t *r);
wr_err_t sh_put(wr_store_t *s, const char *q, const wr_queue_config_t *cfg);
wr_err_t sh_get(wr_store_t *s, const char *q, sh_res_t *r);
wr_err_t sh_delete(wr_store_t *s, const char *q);
wr_err_t sh_list(wr_store_t *s, sh_res_t *r);
wr_err_t sh_secret(wr_store_t *s, const uint8_t *proposed, size_t n, sh_res_t *r);
wr_err_t sh_ping(wr_store_t *s);
/* join_group of u: into group (an invite's grp; NULL none), else with the
 * code whose hash is hash (NULL none). */
wr_err_t sh_join_group(wr_store_t *s, const char *q, const char *u, const char *group,
                       const char *hash, sh_res_t *r);
/* codes (store.h): a call refused at once (no callback) returns its
 * error; else the callback's, r->codes the counts. */
wr_err_t sh_codes(wr_store_t *s, const char *q, const wr_store_codes_req_t *req, sh_res_t *r);

/* ------------------------------------------------------------ a queue's stats, checked */

/* One expected value of a queue's stats: a 64-bit integer field of
 * wr_queue_stats_t and the value it must have. Build it with SH_ST (a
 * field of another type does not compile). */
typedef struct {
    const char *name; /* the field's name, for the failure message */
    size_t off;       /* offsetof(wr_queue_stats_t, field) */
    int64_t want;
} sh_stat_t;
/* clang-format off */
#define SH_ST(field, value) {#field, SH_ST_OFF_(field), (int64_t)(value)}
#define SH_ST_OFF_(field)                                                                          \
    _Generic(((wr_queue_stats_t *)0)->field,                                                       \
             uint64_t: offsetof(wr_queue_stats_t, field),                                          \
             int64_t: offsetof(wr_queue_stats_t, field))
/* clang-format on */

/* Checks the listed fields of the stats *st, in order, like one
 * assert_int_equal each: the first that differs fails the running test at
 * the caller's line, naming the field and both values.
 *   sh_expect_stats(&r.stats, SH_ST(waiting, 2), SH_ST(active, 0)); */
#define sh_expect_stats(st, ...)                                                                   \
    sh_expect_stats_at((st), (const sh_stat_t[]){__VA_ARGS__, {NULL, 0, 0}}, __FILE__, __LINE__)
void sh_expect_stats_at(const wr_queue_stats_t *st, const sh_stat_t *want, const char *file,
                        int line);

/* Gets queue q's stats (sh_get, which must answer WR_OK) and checks them
 * as sh_expect_stats does.
 *   sh_expect_queue_stats(s, "q", SH_ST(waiting, 2), SH_ST(active, 0)); */
#define sh_expect_queue_stats(s, q, ...)                                                           \
    sh_expect_queue_stats_at((s), (q), (const sh_stat_t[]){__VA_ARGS__, {NULL, 0, 0}}, __FILE__,   \
                             __LINE__)
void sh_expect_queue_stats_at(wr_store_t *s, const char *q, const sh_stat_t *want, const char *file,
                              int line);

/* ------------------------------------------------------------ a private redis-server */

/* Starts redis-server in a fresh mkdtemp directory under /tmp, listening
 * only on the unix socket sh_redis_sock() there (--port 0, no persistence,
 * DEBUG enabled, killed if this program dies), and waits until it answers
 * PING (5 s). 0, or -1 (nothing left running). */
int sh_redis_setup(void);

/* Starts it again on the same socket after sh_redis_stop; 0 or -1. */
int sh_redis_start(void);

/* Sends sig (SIGTERM, SIGKILL) and waits for the process to end. */
void sh_redis_stop(int sig);

/* Stops it (SIGTERM) and removes its log, socket and directory. */
void sh_redis_teardown(void);

/* Its pid (for SIGSTOP/SIGCONT), socket path and directory (borrowed). */
pid_t sh_redis_pid(void);
const char *sh_redis_sock(void);
const char *sh_redis_dir(void);

/* A fresh blocking connection to it (2 s timeout); caller redisFree()s.
 * NULL if it does not answer. */
redisContext *sh_redis_ctx(void);

/* One command on a fresh connection; the reply (caller
 * freeReplyObject()s) or NULL. */
redisReply *sh_redis_cmd(const char *fmt, ...);

/* One command (fmt and its arguments ap) on c, which it then redisFree()s:
 * the reply (caller freeReplyObject()s) or NULL; c NULL: NULL. */
redisReply *sh_redis_vcmd(redisContext *c, const char *fmt, va_list ap);

/* Opens store_redis on the private server (unix://SOCK, through the store
 * registry, as waitroomd with --push-subject opens it) and waits until it
 * is connected (SH_WAIT_MS). cmd_timeout_ms 0 = the store's default. NULL
 * on failure. */
wr_store_t *sh_open_redis(uint32_t cmd_timeout_ms);

/* Runs the loop until store_redis s is connected; asserts it is within
 * timeout_ms. */
void sh_wait_connected(wr_store_t *s, int timeout_ms);

#endif
