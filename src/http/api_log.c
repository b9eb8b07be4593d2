/*
 * api_log.c - the public log's routes (docs/API.md 1.3, "A line anyone
 * can check"): public, no key.
 *
 *   GET /v1/log/key                                  the verifier key
 *   GET /v1/queues/{q}/log/checkpoint                the latest checkpoint
 *   GET /v1/queues/{q}/log/entries?start=S&end=E     leaves, ndjson
 *   GET /v1/queues/{q}/log/proof/inclusion?index=I&size=N
 *   GET /v1/queues/{q}/log/proof/consistency?from=M&to=N
 *
 * Each reads the log's head first (store.h log_head: 404 LOG_NOT_ENABLED
 * when there is no log to show, 503 LOG_BROKEN when the log is shorter
 * than its checkpoint); ranges and sizes are checked against the latest
 * checkpoint's size (400 BAD_REQUEST). A proof is computed by base/tlog
 * twice: once with a reader that only records which (level, index)
 * hashes it asks for (a proof's reads depend on the sizes alone), then,
 * after one log_read of those hashes, with a reader that hands them out in
 * the same order: O(log n) stored reads, one store round trip. Entries and
 * proofs below a checkpoint never change: cached as immutable; the
 * checkpoint for a second. A log with no checkpoint yet is signed on the
 * spot (logsign.h) before its first checkpoint is served.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "base/tlog.h"
#include "http/api_internal.h"
#include "http/api_routes.h"
#include "http/http_reply.h"
#include "runtime/logsign.h"

#define IMMUTABLE "public, max-age=31536000, immutable"

typedef struct {
    wr_api__ctx_t *c;
    uint64_t a, b; /* start/end, index/size, from/to */
    wr_log_read_t rd;
} logreq_t;

static void send_text(wr_api_t *a, wr_http_req_t *req, wr_route_t route, const char *ctype,
                      const char *cache, const char *body, size_t len)
{
    wr_api__count_request(a, req, route, 200, len);
    wr_http_req_add_header(req, "Content-Type", ctype);
    wr_http_req_add_header(req, "Cache-Control", cache);
    wr_http_send(req, 200, body, len, false);
}

static void bad_request(wr_api__ctx_t *c, const char *msg)
{
    wr_api__reply_error(c->api, c->req, c->route, 400, "BAD_REQUEST", msg, NULL, NULL, 0);
}

/* The answer to a log operation that failed (err) or found the log broken. */
static void reply_log_error(wr_api__ctx_t *c, wr_err_t err)
{
    if (err == WR_ENOTFOUND)
        wr_api__reply_error(c->api, c->req, c->route, 404, "LOG_NOT_ENABLED",
                            "this queue keeps no public log (publicLog is off)", NULL, NULL, 0);

    else if (err == WR_EIO)
        wr_api__reply_error(c->api, c->req, c->route, 503, "LOG_BROKEN",
                            "the log is shorter than a checkpoint already published: it is no "
                            "longer signed or served",
                            NULL, NULL, 0);
    else
        wr_api__reply_store_error(c, err, 0);
}

static void done(logreq_t *r)
{
    wr_api__ctx_free(r->c);
    free(r);
}

/* No log to show: 404 LOG_NOT_ENABLED when the queue exists (publicLog
 * off), QUEUE_NOT_FOUND when it never did (neither queue nor log). */
static void exists_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    logreq_t *r = arg;
    (void)info;
    if (err == WR_OK)
        reply_log_error(r->c, WR_ENOTFOUND);
    else /* WR_ENOTFOUND: 404 QUEUE_NOT_FOUND, as every queue route */
        wr_api__reply_store_error(r->c, err, WR_API__TELLS_QUEUE);
    done(r);
}

/* Answers r's failure err and frees r. */
static void fail(logreq_t *r, wr_err_t err)
{
    if (err == WR_ENOTFOUND &&
        wr_store_queue_get(r->c->api->store, r->c->queue, exists_cb, r) == WR_OK)
        return;
    reply_log_error(r->c, err);
    done(r);
}

/* ---------- proofs: the recording reader, the replaying reader ---------- */

typedef struct {
    wr_log_read_t *want;        /* recording: the reads asked, in order */
    const wr_log_answer_t *got; /* replaying: their hashes, in the same order */
    size_t next;
} proof_rd_t;

static wr_err_t proof_read(void *ctx, unsigned level, uint64_t index, uint8_t out[WR_TLOG_HASH])
{
    proof_rd_t *p = ctx;
    if (p->want) {
        if (p->want->n_nodes >= WR_LOG_NODES_MAX)
            return WR_ELIMIT;
        p->want->level[p->want->n_nodes] = (uint8_t)level;
        p->want->index[p->want->n_nodes++] = index;
        memset(out, 0, WR_TLOG_HASH);
        return WR_OK;
    }
    if (p->next >= p->got->n_hashes)
        return WR_EIO;
    memcpy(out, p->got->hashes[p->next++], WR_TLOG_HASH);
    return WR_OK;
}

/* Runs r's proof through reader p: its hashes in proof, their count *n;
 * the inclusion proof's leaf hash is the first read (level 0, index I). */
static wr_err_t run_proof(logreq_t *r, proof_rd_t *p,
                          uint8_t proof[WR_TLOG_PROOF_MAX][WR_TLOG_HASH], size_t *n,
                          uint8_t leaf[WR_TLOG_HASH])
{
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    if (!h)
        return WR_ENOMEM;
    wr_tlog_reader_t rd = {proof_read, p};
    wr_err_t err;
    *n = 0;
    if (r->c->route == WR_ROUTE_LOG_INCLUSION) {
        err = proof_read(p, 0, r->a, leaf);
        if (err == WR_OK)
            err = wr_tlog_inclusion_proof(h, &rd, r->a, r->b, proof, n);
    } else {
        err = r->a == r->b ? WR_OK : wr_tlog_consistency_proof(h, &rd, r->a, r->b, proof, n);
    }
    wr_crypto_sha256_free(h);
    return err;
}

static bool push_b64(json_t *arr, const uint8_t hash[WR_TLOG_HASH])
{
    char b[64];
    size_t len;
    return wr_b64_encode(hash, WR_TLOG_HASH, b, sizeof b, &len) == WR_OK &&
           json_array_append_new(arr, json_stringn(b, len)) == 0;
}

static void proof_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    logreq_t *r = arg;
    wr_api__ctx_t *c = r->c;
    wr_api__observe(c, err);
    if (err != WR_OK || !res) {
        fail(r, err);
        return;
    }
    uint8_t proof[WR_TLOG_PROOF_MAX][WR_TLOG_HASH], leaf[WR_TLOG_HASH];
    size_t n;
    proof_rd_t p = {NULL, res, 0};
    bool incl = c->route == WR_ROUTE_LOG_INCLUSION;
    json_t *o = json_object(), *arr = json_array();
    bool ok = o && arr && run_proof(r, &p, proof, &n, leaf) == WR_OK;
    for (size_t i = 0; ok && i < n; i++)
        ok = push_b64(arr, proof[i]);
    if (ok) {
        json_object_set_new(o, incl ? "index" : "from", json_integer((json_int_t)r->a));
        json_object_set_new(o, incl ? "size" : "to", json_integer((json_int_t)r->b));
        if (incl) {
            json_t *lh = json_array();
            ok = lh && push_b64(lh, leaf);
            if (ok)
                json_object_set(o, "leafHash", json_array_get(lh, 0));
            json_decref(lh);
        }
        json_object_set(o, "hashes", arr);
    }
    char *body = ok ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(arr);
    json_decref(o);
    if (body)
        send_text(c->api, c->req, c->route, "application/json", IMMUTABLE, body, strlen(body));
    else
        wr_api__reply_oom(c->api, c->req, c->route);
    free(body);
    done(r);
}

static void entries_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    logreq_t *r = arg;
    wr_api__ctx_t *c = r->c;
    wr_api__observe(c, err);
    if (err != WR_OK || !res)
        reply_log_error(c, err);
    else
        send_text(c->api, c->req, c->route, "application/x-ndjson", IMMUTABLE, res->leaves,
                  res->leaves_len);
    done(r);
}

static void send_checkpoint(wr_api__ctx_t *c, const wr_log_answer_t *res)
{
    send_text(c->api, c->req, c->route, "text/plain; charset=utf-8", "public, max-age=1",
              res->checkpoint, res->checkpoint_len);
}

static void signed_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    logreq_t *r = arg;
    wr_api__observe(r->c, err);
    if (err == WR_OK && res)
        wr_logsign_broken(r->c->api->logsign, r->c->queue, res); /* (once per log) */
    if (err == WR_OK && res && res->broken)
        err = WR_EIO;
    if (err != WR_OK || !res || !res->checkpoint)
        reply_log_error(r->c, err != WR_OK ? err : WR_EUNAVAILABLE);
    else
        send_checkpoint(r->c, res);
    done(r);
}

/* The head, then what the route asks. */
static void head_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    logreq_t *r = arg;
    wr_api__ctx_t *c = r->c;
    wr_api__observe(c, err);
    if (err == WR_OK && res)
        wr_logsign_broken(c->api->logsign, c->queue, res); /* (once per log) */
    if (err == WR_OK && res && res->broken)
        err = WR_EIO;
    if (err != WR_OK || !res) {
        fail(r, err);
        return;
    }
    uint64_t size = res->checkpoint ? res->checkpoint_size : 0;
    wr_store_log_cb next = proof_cb;
    switch (c->route) {
    case WR_ROUTE_LOG_CHECKPOINT:
        if (res->checkpoint) {
            send_checkpoint(c, res);
            done(r);
            return;
        }
        err = wr_logsign_queue(c->api->logsign, c->queue, signed_cb, r);
        if (err != WR_OK) {
            reply_log_error(c, WR_EUNAVAILABLE);
            done(r);
        }
        return;
    case WR_ROUTE_LOG_ENTRIES:
        if (r->a >= size || r->b > size || r->a >= r->b) {
            bad_request(c, "start and end must satisfy 0 <= start < end <= the latest "
                           "checkpoint's size");
            done(r);
            return;
        }
        r->rd.start = r->a;
        r->rd.end = r->b - r->a > 1000 ? r->a + 1000 : r->b;
        next = entries_cb;
        break;
    case WR_ROUTE_LOG_INCLUSION:
    case WR_ROUTE_LOG_CONSISTENCY: {
        bool incl = c->route == WR_ROUTE_LOG_INCLUSION;
        if (incl ? !(r->a < r->b && r->b <= size) : !(r->a >= 1 && r->a <= r->b && r->b <= size)) {
            bad_request(c, incl ? "index and size must satisfy 0 <= index < size <= the latest "
                                  "checkpoint's size"
                                : "from and to must satisfy 1 <= from <= to <= the latest "
                                  "checkpoint's size");
            done(r);
            return;
        }
        uint8_t proof[WR_TLOG_PROOF_MAX][WR_TLOG_HASH], leaf[WR_TLOG_HASH];
        size_t n;
        proof_rd_t p = {&r->rd, NULL, 0};
        if (run_proof(r, &p, proof, &n, leaf) != WR_OK) {
            wr_api__reply_oom(c->api, c->req, c->route);
            done(r);
            return;
        }
        break;
    }
    default:
        break;
    }
    c->op = "log_read";
    err = wr_store_log_read(c->api->store, c->queue, &r->rd, next, r);
    if (err != WR_OK) {
        fail(r, err);
    }
}

/* A query parameter: decimal digits only, below 2^63. */
static bool param_u64(wr_http_req_t *req, const char *name, uint64_t *out)
{
    char v[24];
    if (!wr_api__query_param(req, name, v, sizeof v) || !v[0] || strlen(v) > 19)
        return false;
    uint64_t x = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *out = x;
    return x <= (uint64_t)INT64_MAX;
}

void wr_api__handle_log(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    if (wr_api__join_limited(a, req, route))
        return; /* 429: the user routes' limit per client address */
    if (route == WR_ROUTE_LOG_KEY) {
        if (!wr_logsign_ready(a->logsign)) {
            wr_api__reply_error(a, req, route, 404, "LOG_NOT_ENABLED",
                                "this server keeps no public log", NULL, NULL, 0);
            return;
        }
        char text[WR_NOTE_VERIFIER_MAX + 2];
        int n = snprintf(text, sizeof text, "%s\n", wr_logsign_vkey(a->logsign));
        send_text(a, req, route, "text/plain; charset=utf-8", "public, max-age=300", text,
                  (size_t)n);
        return;
    }
    uint64_t x = 0, y = 0;
    static const char *const names[][2] = {
        [WR_ROUTE_LOG_ENTRIES] = {"start", "end"},
        [WR_ROUTE_LOG_INCLUSION] = {"index", "size"},
        [WR_ROUTE_LOG_CONSISTENCY] = {"from", "to"},
    };
    if (route != WR_ROUTE_LOG_CHECKPOINT &&
        (!param_u64(req, names[route][0], &x) || !param_u64(req, names[route][1], &y))) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s and %s must be non-negative integers", names[route][0],
                 names[route][1]);
        wr_api__reply_error(a, req, route, 400, "BAD_REQUEST", msg, NULL, NULL, 0);
        return;
    }
    logreq_t *r = calloc(1, sizeof *r);
    if (!r) {
        wr_api__reply_oom(a, req, route);
        return;
    }
    if (!(r->c = wr_api__ctx_new(a, req, route, call->queue))) {
        free(r);
        return;
    }
    r->a = x;
    r->b = y;
    r->c->op = "log_head";
    wr_err_t err = !wr_logsign_ready(a->logsign)
                       ? WR_ENOTFOUND
                       : wr_store_log_head(a->store, call->queue, head_cb, r);
    if (err != WR_OK) {
        fail(r, err);
    }
}

bool wr_api__log_config_check(wr_api__ctx_t *c, const wr_queue_config_t *old,
                              const wr_queue_stats_t *st, const wr_queue_config_t *cfg)
{
    const char *field = NULL, *msg = NULL;
    if (cfg->public_log && !wr_store_has_log(c->api->store)) {
        field = "publicLog";
        msg = "is not available on this store";
    } else if (cfg->public_log && cfg->pre_queue_shuffle && cfg->opens_at_ms != WR_OPENS_AT_NONE &&
               !wr_store_has_draw(c->api->store)) {
        field = "preQueueShuffle";
        msg = "with publicLog is not available on this store: a shuffled opening needs the "
              "opening draw, which this store does not run (set preQueueShuffle to false: "
              "the pre-queue then opens in arrival order, logged)";
    } else if (old && st && old->public_log != cfg->public_log &&
               st->waiting + st->prequeue + st->held > 0) {
        field = "publicLog";
        msg = "can be switched only while the line and the pre-queue are empty";
    } else if (old && st && st->log_committed &&
               (old->draw.set != cfg->draw.set || old->draw.round != cfg->draw.round ||
                strcmp(old->draw.beacon_url, cfg->draw.beacon_url) != 0)) {
        field = "draw";
        msg = "cannot change once the opening's commit is logged";
    }
    if (!field)
        return true;
    char text[256];
    snprintf(text, sizeof text, "%s %s", field, msg);
    wr_api__reply_error(c->api, c->req, c->route, 400, "INVALID_CONFIG", text, field, NULL, 0);
    return false;
}
