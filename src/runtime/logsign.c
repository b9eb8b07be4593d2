/*
 * logsign.c - the public log's checkpoint signer (logsign.h).
 *
 * One round a second: log_unsigned names the logs with leaves past their
 * checkpoint; each is signed once (log_head, wr_checkpoint_sign over its
 * size and root, log_publish). A round starts only when the last one is
 * over, so a queue is never signed twice in a second. The store refuses
 * a checkpoint smaller than the kept one or with another root: a refusal
 * is logged, never retried into a fork. A head found broken (shorter
 * than its checkpoint) or forked (its first leaves no longer give the
 * checkpoint's root) is logged and counted once; the store signs it no
 * more (log_unsigned leaves it out).
 */
#include "runtime/logsign.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/metric_defs.h"

#define ROUND_MS 1000

struct wr_logsign {
    struct event_base *base;
    wr_store_t *store;
    wr_metrics_t *metrics;
    struct event *timer;
    char name[65]; /* --log-name: [a-z0-9.-]{1,64} */
    uint8_t seed[WR_CRYPTO_ED25519_SEED];
    char vkey[WR_NOTE_VERIFIER_MAX];
    bool ready;
    size_t in_flight; /* signs of the running round */
    /* the logs found broken or forked, reported once (wr_logsign_broken) */
    char reported[64][WR_QUEUE_NAME_MAX + 1];
    size_t n_reported;
    wr_logsign_beacon_fn beacon;
    void *beacon_arg;
};

typedef struct {
    wr_logsign_t *ls;
    char queue[WR_QUEUE_NAME_MAX + 1];
    wr_store_log_cb cb; /* NULL: the round's own */
    void *arg;
} sign_t;

wr_logsign_t *wr_logsign_new(struct event_base *base, wr_store_t *store, wr_metrics_t *metrics,
                             const char *name)
{
    wr_logsign_t *ls = malloc(sizeof *ls);
    if (!ls)
        return NULL;
    *ls = (wr_logsign_t){.base = base, .store = store, .metrics = metrics}; /* the rest zero */
    snprintf(ls->name, sizeof ls->name, "%s", name && name[0] ? name : "waitroom");
    if (metrics) {
        wr_metric_defs_describe(metrics, WR_METRICS_GROUP_LOG);
        wr_metrics_inc(metrics, "waitroom_log_checkpoints_total", NULL, 0);
        wr_metrics_inc(metrics, "waitroom_log_broken_total", NULL, 0);
    }
    return ls;
}

bool wr_logsign_ready(const wr_logsign_t *ls)
{
    return ls && ls->ready;
}

const char *wr_logsign_name(const wr_logsign_t *ls)
{
    return ls->name;
}

const char *wr_logsign_vkey(const wr_logsign_t *ls)
{
    return ls->vkey;
}

static void finish(sign_t *sg, wr_err_t err, const wr_log_answer_t *res)
{
    wr_logsign_t *ls = sg->ls;
    if (sg->cb)
        sg->cb(err, res, sg->arg);
    else if (ls->in_flight > 0)
        ls->in_flight--;
    free(sg);
}

static void published(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    sign_t *sg = arg;
    if (err == WR_OK && sg->ls->metrics)
        wr_metrics_inc(sg->ls->metrics, "waitroom_log_checkpoints_total", NULL, 1);
    else if (err == WR_EINVAL)
        wr_warn("public log of queue %s: the store refused a checkpoint (another one is newer, or "
                "the log changed): not signed again this round",
                sg->queue);
    finish(sg, err == WR_EINVAL ? WR_OK : err, res);
}

void wr_logsign_broken(wr_logsign_t *ls, const char *queue, const wr_log_answer_t *res)
{
    if (!ls || !res || !(res->broken || res->forked))
        return;
    for (size_t i = 0; i < ls->n_reported; i++)
        if (strcmp(ls->reported[i], queue) == 0)
            return; /* once per log and process */
    if (ls->n_reported < sizeof ls->reported / sizeof ls->reported[0])
        snprintf(ls->reported[ls->n_reported++], sizeof ls->reported[0], "%s", queue);
    wr_error("public log of queue %s: %s (checkpoint of %" PRIu64 " leaves, the log holds %" PRIu64
             "): not signed any more",
             queue,
             res->broken ? "the log is shorter than a checkpoint already published"
                         : "the log's leaves no longer give the published root",
             res->checkpoint_size, res->size);
    if (ls->metrics)
        wr_metrics_inc(ls->metrics, "waitroom_log_broken_total", NULL, 1);
}

static void head_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    sign_t *sg = arg;
    wr_logsign_t *ls = sg->ls;
    if (err != WR_OK || !res) {
        finish(sg, err, res);
        return;
    }
    if (res->broken || res->forked) {
        wr_logsign_broken(ls, sg->queue, res);
        finish(sg, WR_OK, res);
        return;
    }
    if (res->checkpoint && res->checkpoint_size == res->size) {
        finish(sg, WR_OK, res); /* signed already */
        return;
    }
    char origin[WR_CHECKPOINT_ORIGIN_MAX + 1], note[WR_CHECKPOINT_MAX];
    size_t len = 0;
    snprintf(origin, sizeof origin, "%s/%s", ls->name, sg->queue);
    err = wr_checkpoint_sign(ls->name, ls->seed, origin, res->size, res->root, note, sizeof note,
                             &len);
    if (err == WR_OK)
        err = wr_store_log_publish(ls->store, sg->queue, res->size, res->root, note, len, published,
                                   sg);
    if (err != WR_OK)
        finish(sg, err, NULL);
}

static wr_err_t sign(wr_logsign_t *ls, const char *queue, wr_store_log_cb cb, void *arg)
{
    if (!ls->ready)
        return WR_EUNAVAILABLE;
    sign_t *sg = calloc(1, sizeof *sg);
    if (!sg)
        return WR_ENOMEM;
    sg->ls = ls;
    snprintf(sg->queue, sizeof sg->queue, "%s", queue);
    sg->cb = cb;
    sg->arg = arg;
    wr_err_t err = wr_store_log_head(ls->store, queue, head_cb, sg);
    if (err != WR_OK)
        free(sg);
    return err;
}

wr_err_t wr_logsign_queue(wr_logsign_t *ls, const char *queue, wr_store_log_cb cb, void *arg)
{
    return cb ? sign(ls, queue, cb, arg) : WR_EINVAL;
}

static void unsigned_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    wr_logsign_t *ls = arg;
    ls->in_flight = 0;
    if (err != WR_OK || !res)
        return;
    for (size_t i = 0; i < res->n_names; i++)
        if (sign(ls, res->names[i], NULL, NULL) == WR_OK)
            ls->in_flight++;
    for (size_t i = 0; ls->beacon && i < res->n_beacons; i++)
        ls->beacon(ls->beacon_arg, res->beacon_queues[i], res->beacon_urls[i],
                   res->beacon_rounds[i]);
}

void wr_logsign_set_beacon(wr_logsign_t *ls, wr_logsign_beacon_fn fn, void *arg)
{
    ls->beacon = fn;
    ls->beacon_arg = arg;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_logsign_t *ls = arg;
    if (ls->in_flight == 0 && wr_store_log_unsigned(ls->store, unsigned_cb, ls) == WR_OK)
        ls->in_flight = 1; /* the list itself, until its answer */
    struct timeval tv = wr_clock_tv_ms(ROUND_MS);
    evtimer_add(ls->timer, &tv);
}

wr_err_t wr_logsign_start(wr_logsign_t *ls, const uint8_t seed[WR_CRYPTO_ED25519_SEED])
{
    uint8_t pub[WR_CRYPTO_ED25519_PUB];
    wr_err_t err = wr_crypto_ed25519_public(seed, pub);
    if (err == WR_OK)
        err = wr_note_verifier_format(ls->name, pub, ls->vkey, sizeof ls->vkey, NULL);
    if (err != WR_OK)
        return err;
    memcpy(ls->seed, seed, sizeof ls->seed);
    ls->ready = true;
    if (!ls->timer && !(ls->timer = evtimer_new(ls->base, on_timer, ls)))
        return WR_ENOMEM;
    struct timeval tv = wr_clock_tv_ms(ROUND_MS);
    evtimer_add(ls->timer, &tv);
    return WR_OK;
}

void wr_logsign_free(wr_logsign_t *ls)
{
    if (!ls)
        return;
    if (ls->timer)
        event_free(ls->timer);
    wr_crypto_wipe(ls->seed, sizeof ls->seed);
    free(ls);
}
