/*
 * app_log.c - the public log's key and signer at start (app_log.h).
 *
 * The key is created once and kept in the store like the token secret
 * (store.h log_key: first writer wins): without --log-key every instance
 * proposes a fresh one and uses what the store answers; with it, the file's
 * key is proposed and must be what the store keeps, else the instance
 * refuses to start (two keys would sign two different histories of one
 * log). The answer is awaited before listening (at most 10 s).
 */
#include "app_log.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/log.h"
#include "runtime/logsign.h"

typedef struct {
    bool answered;
    wr_err_t err;
    uint8_t key[WR_CRYPTO_ED25519_SEED];
} key_wait_t;

static void key_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    key_wait_t *w = arg;
    w->answered = true;
    w->err = err == WR_OK && !res ? WR_EPROTO : err;
    if (w->err == WR_OK)
        memcpy(w->key, res->key, sizeof w->key);
}

/* The seed of the PEM file path: WR_OK or WR_EINVAL (printed). */
static wr_err_t read_key(const char *path, uint8_t seed[WR_CRYPTO_ED25519_SEED])
{
    char pem[WR_CRYPTO_PEM_MAX * 4];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(pem, 1, sizeof pem, f) : 0;
    if (f)
        fclose(f);
    wr_err_t err = f && n < sizeof pem ? wr_crypto_ed25519_from_pem(pem, n, seed) : WR_EINVAL;
    wr_crypto_wipe(pem, sizeof pem);
    if (err != WR_OK)
        fprintf(stderr, "waitroomd: --log-key %s: %s\n", path,
                f ? "not an Ed25519 private key in PKCS#8 PEM" : "cannot be read");
    return err == WR_OK ? WR_OK : WR_EINVAL;
}

wr_err_t wr_app_log_start(app_t *app)
{
    if (!wr_store_has_log(app->store)) {
        /* a declared queue may not ask for what this store cannot keep */
        for (size_t i = 0; i < app->cfg.n_queues; i++)
            if (json_is_true(json_object_get(app->cfg.queues[i].fields, "publicLog"))) {
                fprintf(stderr,
                        "waitroomd: refusing to start: queue %s: publicLog is not available on "
                        "this store yet (the embedded store keeps a public log)\n",
                        app->cfg.queues[i].name);
                return WR_EINVAL;
            }
        return WR_OK;
    }
    key_wait_t w = {0};
    uint8_t seed[WR_CRYPTO_ED25519_SEED], pub[WR_CRYPTO_ED25519_PUB];
    bool given = app->cfg.log_key_file[0] != '\0';
    wr_err_t err =
        given ? read_key(app->cfg.log_key_file, seed) : wr_crypto_ed25519_keygen(seed, pub);
    if (err != WR_OK)
        return given ? WR_EINVAL : err;
    err = wr_store_log_key(app->store, seed, key_cb, &w);
    int64_t until = wr_clock_mono_ms() + 10000;
    while (err == WR_OK && !w.answered && !app->stopping && wr_clock_mono_ms() < until)
        event_base_loop(app->base, EVLOOP_ONCE);
    if (err != WR_OK || !w.answered || w.err != WR_OK) {
        wr_warn("public log: the store did not give its key (%s): the log routes answer 404 "
                "until a restart",
                wr_strerror(err != WR_OK ? err
                            : w.answered ? w.err
                                         : WR_ETIMEOUT));
        wr_crypto_wipe(seed, sizeof seed);
        return WR_OK;
    }
    if (given && memcmp(w.key, seed, sizeof seed) != 0) {
        fprintf(stderr,
                "waitroomd: refusing to start: --log-key %s is not the public log's key "
                "the store keeps (another key signed this store's logs)\n",
                app->cfg.log_key_file);
        wr_crypto_wipe(seed, sizeof seed);
        wr_crypto_wipe(w.key, sizeof w.key);
        return WR_EINVAL;
    }
    wr_crypto_wipe(seed, sizeof seed);
    app->logsign = wr_logsign_new(app->base, app->store, app->metrics, app->cfg.log_name);
    err = app->logsign ? wr_logsign_start(app->logsign, w.key) : WR_ENOMEM;
    wr_crypto_wipe(w.key, sizeof w.key);
    if (err != WR_OK)
        return err;
    wr_api_set_logsign(app->api, app->logsign);
    wr_logsign_set_beacon(app->logsign, wr_api_beacon_fetch, app->api);
    wr_info("public log: key %s", wr_logsign_vkey(app->logsign));
    return WR_OK;
}
