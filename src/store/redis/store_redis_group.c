/*
 * store_redis_group.c - priority groups and presale codes on the Redis
 * store (store.h join_group, codes; docs/API.md 1.3, "Priority groups and
 * presale codes"). Part of the store_redis module; what the files share is
 * store_redis_internal.h. The rules live in the scripts (lib_group.lua
 * describes the keys):
 *   entry_group.lua  a join into a group: the invite's group, or the
 *                    code's check, the place and one use spent in one
 *                    script (lib_entry.lua entry()); sent as a batch of
 *                    one by store_redis_batch.c (r_join_group in
 *                    store_redis.c), so it keeps the order of the joins
 *                    and polls around it, and the durability mode's WAIT
 *   codes.lua        presale codes: create, check, delete, list, revoke
 *   admit.lua        the split of each tick between the lines
 *   config_put.lua   the groups' slots; removing one with people or live
 *                    codes refused (WR_EGROUP)
 *
 * Codes (this file): a create of up to WR_CODES_COUNT_MAX hashes is sent
 * in parts of CHUNK hashes, run together in one argument (64 hex
 * characters each), one script call at a time: when there is more than
 * one part, every part is checked first ('k': no hash kept already),
 * then written ('c', each part all or nothing); a part that fails after
 * others were written (another create of the same hash in between: not
 * for random codes) has those deleted again ('d') before the answer. So a
 * create is all or nothing as far as Redis lets one script call be: a
 * lost connection in the middle may leave some parts written. Two hashes
 * alike in one call are refused at the call (WR_EINVAL).
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ids.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/script_reply.h"
#include "store/redis/script_rows.h"
#include "store/redis/store_redis_internal.h"

/* an entry mode (scripts.def M_ENTRY) as the one character ARGV holds */
#define MODE(m) ((char)('0' + WR_ROW_VALUE(M_ENTRY, m)))

wr_err_t wr_store_redis__join_group(wr_store_t *st, const char *q, const char *u,
                                    const wr_store_join_t *j, wr_store_entry_cb cb, void *arg)
{
    if (!j)
        return WR_EINVAL;
    char mode = j->check_only ? MODE(STATUS) : j->page ? MODE(JOIN_PAGE) : MODE(JOIN);
    return wr_store_redis__entry(st, q, u, mode, j, cb, arg);
}

#define CHUNK 2000 /* hashes in one codes.lua call: 128 KB of argument, about 5 ms of Redis */

typedef enum { STEP_ONE, STEP_CHECK, STEP_WRITE, STEP_UNDO } step_t;

/* One codes operation, across its script calls. */
struct codes_job {
    wr_store_codes_cb cb;
    void *arg;
    char queue[WR_QUEUE_NAME_MAX + 1];
    char kind; /* codes.lua's KIND */
    char group[WR_GROUP_NAME_MAX + 1];
    uint32_t uses;
    int64_t expires_at_ms;
    char *hashes; /* n hashes of 64 hex characters, run together (no NUL) */
    size_t n;
    step_t step;
    size_t part;     /* the part of the step being sent */
    size_t written;  /* parts written (STEP_WRITE), to undo on failure */
    wr_err_t failed; /* STEP_UNDO: the answer after it */
    wr_store_codes_t res;
};

static size_t parts(const struct codes_job *j)
{
    return j->n == 0 ? 1 : (j->n + CHUNK - 1) / CHUNK;
}

static void job_free(struct codes_job *j)
{
    free(j->hashes);
    free(j);
}

/* Answers j (the user callback, last) and frees it. */
static void job_answer(struct codes_job *j, wr_err_t err)
{
    wr_store_codes_cb cb = j->cb;
    void *arg = j->arg;
    wr_store_codes_t res = j->res;
    bool with = err == WR_OK || err == WR_EINVAL || err == WR_ECODE;
    job_free(j);
    cb(err, with ? &res : NULL, arg);
}

WR_ROWS_ORDER(A_CODES, KIND, GROUP, USES, EXPIRES_MS, HASHES); /* send_step's */

/* Sends j's current step: codes.lua with kind and part j->part of the
 * hashes. WR_OK, or why it could not be sent (nothing sent). */
static wr_err_t send_step(struct rstore *s, struct codes_job *j, char kind)
{
    size_t at = j->part * CHUNK, k = j->n - at < CHUNK ? j->n - at : CHUNK;
    if (j->n == 0)
        at = k = 0;
    wr_err_t err;
    struct req *r =
        wr_store_redis__req_start(s, OP_CODES, SC_CODES, k * WR_CODE_HASH_HEX + 128, j, &err);
    if (!r)
        return err;
    char k1[2] = {kind, '\0'};
    return wr_store_redis__submit(
        s, r,
        wr_store_redis__arg_queue_keys(r, j->queue) && wr_redis_conn_cmd_str(r->cmd, k1) &&
            wr_redis_conn_cmd_str(r->cmd, j->group) &&
            wr_redis_conn_cmd_fmt(r->cmd, "%u", (unsigned)j->uses) &&
            wr_redis_conn_cmd_fmt(r->cmd, "%lld", (long long)j->expires_at_ms) &&
            wr_redis_conn_cmd_arg(r->cmd, j->hashes + at * WR_CODE_HASH_HEX, k * WR_CODE_HASH_HEX));
}

/* The kind codes.lua runs for j's step. */
static char step_kind(const struct codes_job *j)
{
    switch (j->step) {
    case STEP_CHECK:
        return 'k';
    case STEP_WRITE:
        return 'c';
    case STEP_UNDO:
        return 'd';
    case STEP_ONE:
    default:
        return j->kind;
    }
}

/* Goes on with j after a step answered err: the next part or step, or the
 * answer. */
static void job_next(struct rstore *s, struct codes_job *j, wr_err_t err)
{
    if (j->step == STEP_UNDO) {
        err = j->failed; /* (an undo that fails leaves what it could not delete) */
        if (++j->part < j->written && send_step(s, j, 'd') == WR_OK)
            return;
        job_answer(j, err);
        return;
    }
    if (err == WR_OK && j->step != STEP_ONE && ++j->part < parts(j)) {
        if (j->step == STEP_WRITE)
            j->written = j->part;
        err = send_step(s, j, step_kind(j));
        if (err == WR_OK)
            return;
    } else if (err == WR_OK && j->step == STEP_CHECK) {
        j->step = STEP_WRITE;
        j->part = 0;
        err = send_step(s, j, 'c');
        if (err == WR_OK)
            return;
    }
    if (err != WR_OK && j->step == STEP_WRITE && j->written > 0) {
        j->step = STEP_UNDO; /* undo the parts written */
        j->failed = err;
        j->part = 0;
        if (send_step(s, j, 'd') == WR_OK)
            return;
    }
    job_answer(j, err);
}

void wr_store_redis__codes_reply(struct req *r, wr_err_t err, const redisReply *rep)
{
    struct codes_job *j = r->arg;
    if (err == WR_OK) {
        memset(&j->res, 0, sizeof j->res);
        err = wr_script_reply_codes(rep, &j->res);
    }
    if (err == WR_ECANCELED) { /* the store is closing: no other step */
        job_answer(j, err);
        return;
    }
    job_next(r->s, j, err);
}

static int hash_cmp(const void *a, const void *b)
{
    return memcmp(a, b, WR_CODE_HASH_HEX);
}

/* True when every hash of h (n) is 64 lowercase hex and no two are alike;
 * writes them run together to blob. */
static bool hashes_ok(const char (*h)[WR_CODE_HASH_HEX + 1], size_t n, char *blob)
{
    for (size_t i = 0; i < n; i++) {
        if (strnlen(h[i], WR_CODE_HASH_HEX + 1) != WR_CODE_HASH_HEX)
            return false;
        for (size_t k = 0; k < WR_CODE_HASH_HEX; k++)
            if (!((h[i][k] >= '0' && h[i][k] <= '9') || (h[i][k] >= 'a' && h[i][k] <= 'f')))
                return false;
        memcpy(blob + i * WR_CODE_HASH_HEX, h[i], WR_CODE_HASH_HEX);
    }
    char *sorted = malloc(n * WR_CODE_HASH_HEX);
    if (!sorted)
        return false;
    memcpy(sorted, blob, n * WR_CODE_HASH_HEX);
    qsort(sorted, n, WR_CODE_HASH_HEX, hash_cmp);
    bool ok = true;
    for (size_t i = 1; i < n && ok; i++)
        ok = memcmp(sorted + (i - 1) * WR_CODE_HASH_HEX, sorted + i * WR_CODE_HASH_HEX,
                    WR_CODE_HASH_HEX) != 0;
    free(sorted);
    return ok;
}

wr_err_t wr_store_redis__codes(wr_store_t *st, const char *q, const wr_store_codes_req_t *req,
                               wr_store_codes_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    bool create = req && req->kind == WR_CODES_CREATE, revoke = req && req->kind == WR_CODES_REVOKE;
    if (!wr_ids_valid_queue(q) || !cb || !req ||
        (!create && !revoke && req->kind != WR_CODES_LIST) ||
        (revoke && (!req->hashes || req->n != 1)) ||
        (create && (!req->hashes || !req->group ||
                    !wr_groups_name_ok(req->group, strnlen(req->group, WR_GROUP_NAME_MAX + 1)) ||
                    req->n < 1 || req->n > WR_CODES_COUNT_MAX || req->uses < 1 ||
                    req->uses > WR_CODES_USES_MAX)))
        return WR_EINVAL;
    if (!wr_redis_router_connected(s->conn))
        return WR_EUNAVAILABLE;
    struct codes_job *j = calloc(1, sizeof *j);
    size_t n = create || revoke ? req->n : 0;
    if (!j || !(j->hashes = malloc(n * WR_CODE_HASH_HEX + 1))) {
        free(j);
        return WR_ENOMEM;
    }
    if (n > 0 && !hashes_ok(req->hashes, n, j->hashes)) {
        job_free(j);
        return WR_EINVAL;
    }
    j->cb = cb;
    j->arg = arg;
    snprintf(j->queue, sizeof j->queue, "%s", q);
    j->kind = create ? 'c' : revoke ? 'r' : 'l';
    snprintf(j->group, sizeof j->group, "%s", create ? req->group : "");
    j->uses = create ? req->uses : 0;
    j->expires_at_ms = create && req->expires_at_ms >= 0 ? req->expires_at_ms : -1;
    j->n = n;
    /* a create of several parts: every part checked before the first is written */
    j->step = create && parts(j) > 1 ? STEP_CHECK : STEP_ONE;
    /* the checks above (and the caller's drawing of the codes) may have
     * taken a while in this loop iteration: the command timeout counts
     * from the send, not from the loop's cached time */
    if (create)
        event_base_update_cache_time(event_get_base(s->flush_ev));
    wr_err_t err = send_step(s, j, step_kind(j));
    if (err != WR_OK)
        job_free(j);
    return err;
}
