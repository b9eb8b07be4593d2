/*
 * app_secret.c - the token secret kept in the store.
 *
 * Without a configured --token-secret, the secret every instance signs
 * with is fetched from the store, or created there with the proposed one
 * (wr_store_secret): retried from 100 ms doubling to 1 s while the store
 * does not answer.
 *
 * A store that lost its data (K31, a Redis restarted empty): once a second
 * every instance calls secret_sync (store.h) with a fresh random epoch
 * marker and, when its token secret is shared through the store, that
 * secret. A stored marker other than the one seen last, a secret written
 * back (it was missing) or another secret found there means the store was
 * emptied: the declared queues are created again (if absent, as at start).
 * Another secret found there is adopted, ours becoming the previous one;
 * the store's previous secret (written by an instance that adopted) is
 * installed as ours. Every step is logged (warn).
 */
#include "app_secret.h"

#include <stdio.h>
#include <string.h>

#include "app_declare.h"
#include "base/clock.h"
#include "base/crypto.h"
#include "base/hex.h"
#include "base/log.h"

static void retry_secret(app_t *app)
{
    uint32_t ms = app->secret_retry_ms ? app->secret_retry_ms : 100;
    struct timeval tv = wr_clock_tv_ms(ms);
    evtimer_add(app->secret_timer, &tv);
    app->secret_retry_ms = ms * 2 > 1000 ? 1000 : ms * 2;
}

static void secret_cb(wr_err_t err, const uint8_t *secret, size_t len, void *arg)
{
    app_t *app = arg;
    app->secret_pending = false;
    app->secret_answered = true;
    if (err == WR_OK && len > 0) {
        wr_api_set_secret(app->api, secret, len);
        memcpy(app->store_secret, secret, len);
        app->store_secret_len = len;
        /* the store keeps the first secret proposed to it: ours, when the
         * answer is what this instance proposed */
        bool ours = len == sizeof(app->proposed_secret) &&
                    wr_crypto_equal(secret, app->proposed_secret, len);
        wr_info("token secret %s the store (%zu bytes)",
                ours ? "created and kept in" : "loaded from", len);
        return;
    }
    if (err != WR_ECANCELED && !app->stopping) {
        wr_warn("could not load the token secret from the store (%s); retrying", wr_strerror(err));
        retry_secret(app);
    }
}

void wr_app_secret_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    app_t *app = arg;
    if (app->secret_pending || app->stopping)
        return;
    if (wr_store_secret(app->store, app->proposed_secret, sizeof(app->proposed_secret), secret_cb,
                        app) == WR_OK)
        app->secret_pending = true;
    else
        retry_secret(app); /* e.g. the Redis connection is still being set up */
}

/* The answer of the periodic secret_sync (store.h; K31). */
static void sync_cb(wr_err_t err, const wr_store_sync_t *res, void *arg)
{
    app_t *app = arg;
    app->sync_pending = false;
    if (err != WR_OK || !res || app->stopping)
        return; /* the store is not answering: the next round asks again */
    bool lost = app->seen_epoch[0] && strcmp(app->seen_epoch, res->epoch) != 0;
    snprintf(app->seen_epoch, sizeof app->seen_epoch, "%s", res->epoch);
    bool shared = app->cfg.token_secret_len == 0 && app->store_secret_len > 0;
    if (shared && res->secret_restored) {
        lost = true;
        wr_warn("the store had lost its data: the token secret was written back to it");
    } else if (shared && res->secret &&
               (res->secret_len != app->store_secret_len ||
                memcmp(res->secret, app->store_secret, res->secret_len) != 0)) {
        /* another instance wrote its own first: adopt it; ours stays
         * accepted (secret_sync made it the store's previous secret) */
        lost = true;
        if (app->cfg.token_secret_previous_len == 0) {
            wr_api_set_previous_secret(app->api, app->store_secret, app->store_secret_len);
            memcpy(app->store_prev, app->store_secret, app->store_secret_len);
            app->store_prev_len = app->store_secret_len;
        } else {
            wr_warn("a configured previous token secret is kept: passes signed with the "
                    "secret this instance used before are refused from now on");
        }
        wr_api_set_secret(app->api, res->secret, res->secret_len);
        memcpy(app->store_secret, res->secret, res->secret_len);
        app->store_secret_len = res->secret_len;
        wr_warn("the store had lost its data and holds another token secret now: adopted it; "
                "the one used before stays accepted as the previous secret");
    }
    if (app->cfg.token_secret_previous_len == 0 && res->previous &&
        (res->previous_len != app->store_secret_len ||
         memcmp(res->previous, app->store_secret, res->previous_len) != 0) &&
        (res->previous_len != app->store_prev_len ||
         memcmp(res->previous, app->store_prev, res->previous_len) != 0)) {
        wr_api_set_previous_secret(app->api, res->previous, res->previous_len);
        memcpy(app->store_prev, res->previous, res->previous_len);
        app->store_prev_len = res->previous_len;
        wr_info("previous token secret loaded from the store (passes signed with it stay "
                "valid until they expire)");
    }
    if (lost) {
        wr_warn("the store had lost its data: writing back the %zu queue%s the config file "
                "declares (created if absent)",
                app->cfg.n_queues, app->cfg.n_queues == 1 ? "" : "s");
        wr_app_redeclare(app);
    }
}

/* Every SYNC_MS: secret_sync (K31), one call at a time. */
#define SYNC_MS 1000
void wr_app_sync_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    app_t *app = arg;
    if (app->stopping)
        return;
    uint8_t rnd[16];
    if (!app->sync_pending && wr_crypto_random(rnd, sizeof rnd) == WR_OK) {
        /* a fresh marker each time: whoever finds the store without one
         * writes a value nobody has seen, so every instance notices */
        wr_hex_encode(rnd, sizeof rnd, app->epoch);
        bool shared = app->cfg.token_secret_len == 0 && app->store_secret_len > 0;
        if (wr_store_secret_sync(app->store, shared ? app->store_secret : NULL,
                                 shared ? app->store_secret_len : 0, app->epoch, sync_cb,
                                 app) == WR_OK)
            app->sync_pending = true;
    }
    struct timeval tv = wr_clock_tv_ms(SYNC_MS);
    evtimer_add(app->sync_timer, &tv);
}
