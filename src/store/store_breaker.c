/*
 * store_breaker.c - circuit-breaker decorator around any store (see
 * store_breaker.h for the rules of what counts as a failure).
 *
 * Structure: struct bstore starts with the wr_store_t header (its own ops
 * table) and holds the inner store, the breaker and the metrics registry.
 * Each allowed operation allocates one `struct call` (the caller's callback
 * and argument, the breaker permit, the start time) passed to the inner
 * store as the callback argument.
 *
 * Lifetime: a call is freed by its wrapped callback, which (1) records the
 * outcome in the breaker (skipped while closing), (2) frees the call, and
 * (3) calls the caller's callback last - that callback may start new
 * operations or close the store, so nothing of the store is touched after
 * it. If the inner call returns an error, the call is freed at once and the
 * error returned (the inner store never calls back then). close(): marks the
 * store closing, closes the inner store (which calls every pending callback
 * synchronously with WR_ECANCELED: the calls are freed and their callers
 * answered), then frees the breaker and the decorator.
 */
#include "store/store_breaker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/freelist.h"
#include "base/log.h"
#include "base/metric_defs.h"

typedef enum { K_ENTRY, K_DONE, K_ADMIT, K_TOKEN, K_INFO, K_LIST, K_SECRET } kind_t;

struct bstore {
    wr_store_t base_; /* must be first */
    wr_store_t *inner;
    wr_breaker_t *br;
    wr_metrics_t *metrics;
    int64_t (*now_ms)(void);
    uint32_t (*stalled_ms)(const void *arg, int64_t since_ms, int64_t now_ms);
    const void *stalled_arg;
    uint32_t slow_ms; /* the slow-call threshold: below it a stall cannot matter */
    bool closing;
    wr_freelist_t calls; /* recycled call records (no malloc per store call) */
    wr_store_ops_t ops;  /* breaker_ops, with the log's operations over a store with a log,
                            without push_sub over one without subscriptions */
};

#define FREE_CALLS_MAX 1024

struct call {
    struct bstore *s;
    wr_breaker_permit_t permit;
    int64_t t0_ms;
    wr_store_cb_t cb;
    void *arg;
};

static const wr_store_ops_t breaker_ops;

static bool is_failure(wr_err_t err)
{
    return err == WR_ETIMEOUT || err == WR_EUNAVAILABLE || err == WR_EPROTO;
}

/* Neither success nor failure: says nothing about the store's health. A
 * late replica (WR_EREPLICA, durability mode) is not the store's failure:
 * the primary answered; nor a success, since its latency is the WAIT's.
 * Nor is a queue whose keys hold the wrong type (WR_EDATA): the store
 * answered, and counting it opened the breaker for every queue. */
static bool is_neutral(wr_err_t err)
{
    return err == WR_ECANCELED || err == WR_EINVAL || err == WR_ENOMEM || err == WR_ELIMIT ||
           err == WR_EREPLICA || err == WR_ESHARD || err == WR_EDATA;
}

static void publish_state(struct bstore *s, wr_breaker_state_t st)
{
    if (!s->metrics)
        return;
    static const wr_breaker_state_t all[3] = {WR_BREAKER_CLOSED, WR_BREAKER_OPEN,
                                              WR_BREAKER_HALF_OPEN};
    for (int i = 0; i < 3; i++) {
        char l[48];
        snprintf(l, sizeof(l), "state=\"%s\"", wr_breaker_state_name(all[i]));
        wr_metrics_set(s->metrics, "waitroom_breaker_state", l, all[i] == st ? 1 : 0);
    }
}

static void on_transition(wr_breaker_state_t from, wr_breaker_state_t to, wr_breaker_why_t why,
                          uint32_t wait_ms, void *arg)
{
    struct bstore *s = arg;
    if (to == WR_BREAKER_OPEN)
        wr_warn("store breaker: %s -> open (%s): failing fast for %u ms",
                wr_breaker_state_name(from), wr_breaker_why_name(why), (unsigned)wait_ms);
    else
        wr_info("store breaker: %s -> %s (%s)", wr_breaker_state_name(from),
                wr_breaker_state_name(to), wr_breaker_why_name(why));
    if (!s->metrics)
        return;
    char l[48];
    snprintf(l, sizeof(l), "to=\"%s\"", wr_breaker_state_name(to));
    wr_metrics_inc(s->metrics, "waitroom_breaker_transitions_total", l, 1);
    publish_state(s, to);
}

/* Asks the breaker; NULL with *err set when refused or out of memory. */
static struct call *begin(struct bstore *s, wr_err_t *err)
{
    int64_t now = s->now_ms();
    wr_breaker_permit_t p = wr_breaker_allow(s->br, now);
    if (!p.allowed) {
        if (s->metrics)
            wr_metrics_inc(s->metrics, "waitroom_breaker_rejected_total", NULL, 1);
        *err = WR_EUNAVAILABLE;
        return NULL;
    }
    struct call *c = wr_freelist_take(&s->calls);
    if (!c) {
        wr_breaker_cancel(s->br, p);
        *err = WR_ENOMEM;
        return NULL;
    }
    c->s = s;
    c->permit = p;
    c->t0_ms = now;
    return c;
}

/* Records err for c in the breaker (unless closing) and frees c. */
static void settle(struct call *c, wr_err_t err)
{
    struct bstore *s = c->s;
    if (!s->closing) {
        if (is_neutral(err)) {
            wr_breaker_cancel(s->br, c->permit);
        } else {
            int64_t now = s->now_ms();
            int64_t lat = now - c->t0_ms;
            if (lat < 0)
                lat = 0;
            if (lat > UINT32_MAX)
                lat = UINT32_MAX;
            if (s->inner->ops->in_process)
                lat = 0; /* the process's own slowness, not the store's */
            else if (s->stalled_ms && lat >= s->slow_ms) { /* the process's own stall, likewise */
                int64_t st = s->stalled_ms(s->stalled_arg, c->t0_ms, now);
                lat = lat > st ? lat - st : 0;
            }
            wr_breaker_record(s->br, c->permit, is_failure(err), (uint32_t)lat, now);
        }
    }
    /* The wrappers copy the user's callback out before settling, so the
     * record may be reused by a call made from inside that callback. */
    wr_freelist_give(&s->calls, c);
}

/* The inner call returned err: settle and pass it on. */
static wr_err_t started(struct call *c, wr_err_t err)
{
    if (err != WR_OK)
        settle(c, err);
    return err;
}

/* ---------------------------------------------------- wrapped callbacks */

/* Settles c with err and returns the caller's argument. Each wrapper reads
 * the caller's callback out of c first: c may be reused once settled. */
static void *settled(struct call *c, wr_err_t err)
{
    void *uarg = c->arg;
    settle(c, err);
    return uarg;
}

static void w_entry(wr_err_t err, const wr_entry_t *e, void *arg)
{
    struct call *c = arg;
    wr_store_entry_cb cb = c->cb.entry;
    cb(err, e, settled(c, err));
}

static void w_done(wr_err_t err, void *arg)
{
    struct call *c = arg;
    wr_store_done_cb cb = c->cb.done;
    cb(err, settled(c, err));
}

static void w_admit(wr_err_t err, const wr_admit_t *res, void *arg)
{
    struct call *c = arg;
    wr_store_admit_cb cb = c->cb.admit;
    cb(err, res, settled(c, err));
}

static void w_token(wr_err_t err, const wr_token_check_t *res, void *arg)
{
    struct call *c = arg;
    wr_store_token_cb cb = c->cb.token;
    cb(err, res, settled(c, err));
}

static void w_info(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    struct call *c = arg;
    wr_store_info_cb cb = c->cb.info;
    cb(err, info, settled(c, err));
}

static void w_list(wr_err_t err, const wr_queue_info_t *infos, size_t n, void *arg)
{
    struct call *c = arg;
    wr_store_list_cb cb = c->cb.list;
    cb(err, infos, n, settled(c, err));
}

static void w_secret(wr_err_t err, const uint8_t *secret, size_t len, void *arg)
{
    struct call *c = arg;
    wr_store_secret_cb cb = c->cb.secret;
    cb(err, secret, len, settled(c, err));
}

static void w_sync(wr_err_t err, const wr_store_sync_t *res, void *arg)
{
    struct call *c = arg;
    wr_store_sync_cb cb = c->cb.sync;
    cb(err, res, settled(c, err));
}

static void w_autotune(wr_err_t err, const wr_autotune_state_rec_t *res, void *arg)
{
    struct call *c = arg;
    wr_store_autotune_cb cb = c->cb.autotune;
    cb(err, res, settled(c, err));
}

static void w_log(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    struct call *c = arg;
    wr_store_log_cb cb = c->cb.log;
    cb(err, res, settled(c, err));
}

static void w_report(wr_err_t err, const wr_store_report_pair_t *pairs, size_t n, void *arg)
{
    struct call *c = arg;
    wr_store_report_cb cb = c->cb.report;
    cb(err, pairs, n, settled(c, err));
}

static void w_codes(wr_err_t err, const wr_store_codes_t *res, void *arg)
{
    struct call *c = arg;
    wr_store_codes_cb cb = c->cb.codes;
    cb(err, res, settled(c, err));
}

/* ------------------------------------------------------------ operations */

/* Opens a call c for callback field F, or returns the refusal. */
#define BEGIN(F, CB)                                                                               \
    struct bstore *s = (struct bstore *)st;                                                        \
    if (!(CB))                                                                                     \
        return WR_EINVAL;                                                                          \
    wr_err_t berr = WR_OK;                                                                         \
    struct call *c = begin(s, &berr);                                                              \
    if (!c)                                                                                        \
        return berr;                                                                               \
    c->cb.F = (CB);                                                                                \
    c->arg = arg

static wr_err_t b_join(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                       void *arg)
{
    BEGIN(entry, cb);
    return started(c, wr_store_join(s->inner, q, u, w_entry, c));
}

static wr_err_t b_join_page(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                            void *arg)
{
    BEGIN(entry, cb);
    return started(c, wr_store_join_page(s->inner, q, u, w_entry, c));
}

static wr_err_t b_status_quiet(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                               void *arg)
{
    BEGIN(entry, cb);
    return started(c, wr_store_status_quiet(s->inner, q, u, w_entry, c));
}

static wr_err_t b_join_group(wr_store_t *st, const char *q, const char *u, const wr_store_join_t *j,
                             wr_store_entry_cb cb, void *arg)
{
    BEGIN(entry, cb);
    return started(c, wr_store_join_group(s->inner, q, u, j, w_entry, c));
}

static wr_err_t b_codes(wr_store_t *st, const char *q, const wr_store_codes_req_t *req,
                        wr_store_codes_cb cb, void *arg)
{
    BEGIN(codes, cb);
    return started(c, wr_store_codes(s->inner, q, req, w_codes, c));
}

static wr_err_t b_status(wr_store_t *st, const char *q, const char *u, wr_store_entry_cb cb,
                         void *arg)
{
    BEGIN(entry, cb);
    return started(c, wr_store_status(s->inner, q, u, w_entry, c));
}

static wr_err_t b_leave(wr_store_t *st, const char *q, const char *u, wr_store_done_cb cb,
                        void *arg)
{
    BEGIN(done, cb);
    return started(c, wr_store_leave(s->inner, q, u, w_done, c));
}

static wr_err_t b_admit(wr_store_t *st, const char *q, wr_store_admit_cb cb, void *arg)
{
    BEGIN(admit, cb);
    return started(c, wr_store_admit(s->inner, q, w_admit, c));
}

static wr_err_t b_consume(wr_store_t *st, const char *q, const char *u, const char *jti,
                          wr_store_token_cb cb, void *arg)
{
    BEGIN(token, cb);
    return started(c, wr_store_consume(s->inner, q, u, jti, w_token, c));
}

static wr_err_t b_verify(wr_store_t *st, const char *q, const char *u, const char *jti,
                         wr_store_token_cb cb, void *arg)
{
    BEGIN(token, cb);
    return started(c, wr_store_verify(s->inner, q, u, jti, w_token, c));
}

static wr_err_t b_release(wr_store_t *st, const char *q, const char *u, const char *jti,
                          wr_store_token_cb cb, void *arg)
{
    BEGIN(token, cb);
    return started(c, wr_store_release(s->inner, q, u, jti, w_token, c));
}

/* degraded mode */
static wr_err_t b_burn(wr_store_t *st, const char *q, const char *jti, int64_t exp_us,
                       bool check_only, wr_store_token_cb cb, void *arg)
{
    BEGIN(token, cb);
    return started(c, wr_store_burn(s->inner, q, jti, exp_us, check_only, w_token, c));
}

/* bypass rules' count */
static wr_err_t b_bypass(wr_store_t *st, const char *q, uint64_t n, wr_store_done_cb cb, void *arg)
{
    BEGIN(done, cb);
    return started(c, wr_store_bypass(s->inner, q, n, w_done, c));
}

static wr_err_t b_autotune(wr_store_t *st, const char *q, const wr_autotune_req_t *req,
                           wr_store_autotune_cb cb, void *arg)
{
    BEGIN(autotune, cb);
    return started(c, wr_store_autotune(s->inner, q, req, w_autotune, c));
}

static wr_err_t b_report(wr_store_t *st, const wr_store_report_req_t *req, wr_store_report_cb cb,
                         void *arg)
{
    BEGIN(report, cb);
    return started(c, wr_store_report(s->inner, req, w_report, c));
}

static wr_err_t b_config_put(wr_store_t *st, const char *q, const wr_queue_config_t *cfg,
                             wr_store_done_cb cb, void *arg)
{
    BEGIN(done, cb);
    return started(c, wr_store_config_put(s->inner, q, cfg, w_done, c));
}

static wr_err_t b_queue_get(wr_store_t *st, const char *q, wr_store_info_cb cb, void *arg)
{
    BEGIN(info, cb);
    return started(c, wr_store_queue_get(s->inner, q, w_info, c));
}

static wr_err_t b_queue_list(wr_store_t *st, wr_store_list_cb cb, void *arg)
{
    BEGIN(list, cb);
    return started(c, wr_store_queue_list(s->inner, w_list, c));
}

static wr_err_t b_queue_names(wr_store_t *st, wr_store_list_cb cb, void *arg)
{
    BEGIN(list, cb);
    return started(c, wr_store_queue_names(s->inner, w_list, c));
}

static wr_err_t b_queue_delete(wr_store_t *st, const char *q, wr_store_done_cb cb, void *arg)
{
    BEGIN(done, cb);
    return started(c, wr_store_queue_delete(s->inner, q, w_done, c));
}

static wr_err_t b_secret(wr_store_t *st, const uint8_t *proposed, size_t len, wr_store_secret_cb cb,
                         void *arg)
{
    BEGIN(secret, cb);
    return started(c, wr_store_secret(s->inner, proposed, len, w_secret, c));
}

static wr_err_t b_secret_sync(wr_store_t *st, const uint8_t *own, size_t own_len, const char *epoch,
                              wr_store_sync_cb cb, void *arg)
{
    BEGIN(sync, cb);
    return started(c, wr_store_secret_sync(s->inner, own, own_len, epoch, w_sync, c));
}

static wr_err_t b_ping(wr_store_t *st, wr_store_done_cb cb, void *arg)
{
    BEGIN(done, cb);
    return started(c, wr_store_ping(s->inner, w_done, c));
}

static wr_err_t b_push_sub(wr_store_t *st, const char *q, const char *u, const wr_pushsub_t *sub,
                           wr_store_done_cb cb, void *arg)
{
    BEGIN(done, cb);
    return started(c, wr_store_push_sub(s->inner, q, u, sub, w_done, c));
}

/* Not an operation of the breaker: what the inner store knows. */
static size_t b_unreachable(wr_store_t *st, char *out, size_t cap)
{
    return wr_store_unreachable(((struct bstore *)st)->inner, out, cap);
}

static wr_err_t b_debug_advance_time(wr_store_t *st, int64_t us)
{
    struct bstore *s = (struct bstore *)st;
    if (!s->inner->ops->debug_advance_time)
        return WR_EINVAL;
    return s->inner->ops->debug_advance_time(s->inner, us);
}

static void b_close(wr_store_t *st)
{
    struct bstore *s = (struct bstore *)st;
    if (!s || s->closing)
        return; /* a second close from a callback run by the first */
    s->closing = true;
    wr_store_close(s->inner); /* settles every pending call */
    wr_breaker_free(s->br);
    wr_freelist_clear(&s->calls);
    free(s);
}

/* The public log's operations (store.h), for an inner store that keeps a
 * log: the instance's ops (bstore.ops) take them (wr_store_breaker_wrap). */
static wr_err_t b_log_key(wr_store_t *st, const uint8_t proposed[32], wr_store_log_cb cb, void *arg)
{
    BEGIN(log, cb);
    return started(c, wr_store_log_key(s->inner, proposed, w_log, c));
}

static wr_err_t b_log_head(wr_store_t *st, const char *q, wr_store_log_cb cb, void *arg)
{
    BEGIN(log, cb);
    return started(c, wr_store_log_head(s->inner, q, w_log, c));
}

static wr_err_t b_log_read(wr_store_t *st, const char *q, const wr_log_read_t *req,
                           wr_store_log_cb cb, void *arg)
{
    BEGIN(log, cb);
    return started(c, wr_store_log_read(s->inner, q, req, w_log, c));
}

static wr_err_t b_log_publish(wr_store_t *st, const char *q, uint64_t size, const uint8_t root[32],
                              const char *note, size_t len, wr_store_log_cb cb, void *arg)
{
    BEGIN(log, cb);
    return started(c, wr_store_log_publish(s->inner, q, size, root, note, len, w_log, c));
}

static wr_err_t b_log_unsigned(wr_store_t *st, wr_store_log_cb cb, void *arg)
{
    BEGIN(log, cb);
    return started(c, wr_store_log_unsigned(s->inner, w_log, c));
}

static wr_err_t b_log_beacon(wr_store_t *st, const char *q, uint64_t round,
                             const uint8_t *randomness, size_t len, const char *error,
                             wr_store_log_cb cb, void *arg)
{
    BEGIN(log, cb);
    return started(c, wr_store_log_beacon(s->inner, q, round, randomness, len, error, w_log, c));
}

static const wr_store_ops_t breaker_ops = {
    .name = "breaker",
    .join = b_join,
    .status = b_status,
    .join_page = b_join_page,
    .status_quiet = b_status_quiet,
    .leave = b_leave,
    .admit = b_admit,
    .consume = b_consume,
    .verify = b_verify,
    .release = b_release,
    /* degraded mode */
    .burn = b_burn,
    .bypass = b_bypass,
    .config_put = b_config_put,
    .queue_get = b_queue_get,
    .queue_list = b_queue_list,
    .queue_names = b_queue_names,
    .queue_delete = b_queue_delete,
    .secret = b_secret,
    .secret_sync = b_secret_sync,
    .ping = b_ping,
    .autotune = b_autotune,
    .report = b_report,
    .unreachable = b_unreachable,
    .push_sub = b_push_sub,
    .debug_advance_time = b_debug_advance_time,
    .close = b_close,
};

wr_err_t wr_store_breaker_wrap(wr_store_t *inner, const wr_store_breaker_opts_t *opts,
                               wr_store_t **out)
{
    if (!inner || !out)
        return WR_EINVAL;
    struct bstore *s = calloc(1, sizeof(*s));
    if (!s)
        return WR_ENOMEM;
    wr_freelist_init(&s->calls, sizeof(struct call), FREE_CALLS_MAX);
    wr_breaker_opts_t bo;
    if (opts)
        bo = opts->breaker;
    else
        memset(&bo, 0, sizeof(bo));
    bo.on_transition = on_transition;
    bo.arg = s;
    wr_err_t err = wr_breaker_new(&bo, &s->br);
    if (err != WR_OK) {
        free(s);
        return err;
    }
    /* per instance: the log's operations only over a store that keeps a
     * log, push_sub only over one that keeps subscriptions */
    s->ops = breaker_ops;
    if (wr_store_has_log(inner)) {
        s->ops.log_key = b_log_key;
        s->ops.log_head = b_log_head;
        s->ops.log_read = b_log_read;
        s->ops.log_publish = b_log_publish;
        s->ops.log_unsigned = b_log_unsigned;
        s->ops.log_beacon = inner->ops->log_beacon ? b_log_beacon : NULL;
    }
    if (wr_store_has_groups(inner)) { /* priority groups only over a store that serves them */
        s->ops.join_group = b_join_group;
        s->ops.codes = b_codes;
    }
    if (!inner->ops->push_sub)
        s->ops.push_sub = NULL; /* wr_store_has_push tells the inner store's answer */
    s->ops.in_process = inner->ops->in_process;
    s->ops.status_records_free = inner->ops->status_records_free;
    s->base_.ops = &s->ops;
    s->inner = inner;
    s->metrics = opts ? opts->metrics : NULL;
    s->now_ms = opts && opts->now_ms ? opts->now_ms : wr_clock_coarse_mono_ms;
    s->stalled_ms = opts ? opts->stalled_ms : NULL;
    s->stalled_arg = opts ? opts->stalled_arg : NULL;
    wr_breaker_opts_t d;
    wr_breaker_opts_default(&d);
    s->slow_ms = opts && opts->breaker.slow_call_ms ? opts->breaker.slow_call_ms : d.slow_call_ms;
    if (s->metrics) {
        wr_metric_defs_describe(s->metrics, WR_METRICS_GROUP_BREAKER);
        publish_state(s, WR_BREAKER_CLOSED);
        static const char *const to[3] = {"to=\"closed\"", "to=\"open\"", "to=\"half_open\""};
        for (int i = 0; i < 3; i++)
            wr_metrics_inc(s->metrics, "waitroom_breaker_transitions_total", to[i], 0);
        wr_metrics_inc(s->metrics, "waitroom_breaker_rejected_total", NULL, 0);
    }
    *out = &s->base_;
    return WR_OK;
}

static struct bstore *as_b(wr_store_t *st)
{
    return st && st->ops->close == b_close ? (struct bstore *)st : NULL;
}

wr_breaker_state_t wr_store_breaker_state(wr_store_t *st)
{
    struct bstore *s = as_b(st);
    return s ? wr_breaker_state(s->br) : WR_BREAKER_CLOSED;
}

wr_store_t *wr_store_breaker_inner(wr_store_t *st)
{
    struct bstore *s = as_b(st);
    return s ? s->inner : NULL;
}

void wr_store_breaker_stats(wr_store_t *st, wr_breaker_stats_t *out)
{
    struct bstore *s = as_b(st);
    if (s)
        wr_breaker_get_stats(s->br, out);
    else
        memset(out, 0, sizeof(*out));
}
