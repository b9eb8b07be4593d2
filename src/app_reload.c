/*
 * app_reload.c - SIGHUP: reload.
 *
 * The config is loaded again from the same flags, file and
 * environment into a fresh wr_config_t; if it or one of its queue
 * declarations does not load, that is logged (error) and nothing changes.
 * Else: the log level and format, the admin key and the secrets are
 * applied (wr_config_reload; settings that need a restart are named in a
 * warning), the log files are reopened, and the declared queues are
 * synced: a queue whose [queue] section changed (or is new) gets the
 * fields the section names, as a PATCH of those fields (API 1.2): fields it
 * does not name keep their runtime values (paused, opensAt set through the
 * admin API are never undone by a reload that did not name them); an
 * absent queue is created with the declaration; an unchanged section is
 * only created if absent, as at start, so runtime changes to it
 * survive. Declarations in flight from before the reload finish first (a
 * generation number tells their callbacks apart).
 *
 * A SIGHUP that comes during the start is applied once it is over (main.c,
 * K43).
 */
#include "app_reload.h"

#include <errno.h>
#include <string.h>

#include "app_declare.h"
#include "base/crypto.h"
#include "base/log.h"

void wr_app_reload(app_t *app)
{
    static wr_config_t fresh; /* large; one reload at a time (the loop) */
    static wr_queue_config_t declared[WR_CONFIG_QUEUES_MAX];
    char err[512] = "";
    wr_config_action_t action;
    wr_info("SIGHUP: reloading the configuration");
    if (wr_config_load(&fresh, app->argc, app->argv, &action, err, sizeof(err)) != WR_OK) {
        wr_error("reload failed, the running configuration is kept: %s", err);
        goto out;
    }
    if (!wr_app_parse_declared(&fresh, declared,
                               "reload failed, the running configuration is kept"))
        goto out;
    if (fresh.max_connections == 0 && app->max_connections_auto)
        fresh.max_connections = app->cfg.max_connections; /* auto, resolved at start */

    const uint8_t *old_secret = app->cfg.token_secret;
    size_t old_len = app->cfg.token_secret_len;
    uint8_t before[WR_KEY_MAX];
    memcpy(before, old_secret, old_len);
    size_t before_prev = app->cfg.token_secret_previous_len;
    uint8_t prev[WR_KEY_MAX];
    memcpy(prev, app->cfg.token_secret_previous, before_prev);
    bool had_admin_key = app->cfg.admin_key[0] != '\0';
    char restart[512];
    size_t changed = wr_config_reload(&app->cfg, &fresh, restart, sizeof(restart));
    if (had_admin_key && !app->cfg.admin_key[0])
        wr_warn("reload: no admin key configured any more: the admin API answers 401 to "
                "everything until one is set again");
    wr_log_setup(app->cfg.log_level, app->cfg.log_format == WR_LOG_JSON);
    if (restart[0])
        wr_warn("reload: changed settings that need a restart to apply: %s", restart);
    if (app->cfg.token_secret_len > 0 && (app->cfg.token_secret_len != old_len ||
                                          memcmp(app->cfg.token_secret, before, old_len) != 0))
        wr_api_set_secret(app->api, app->cfg.token_secret, app->cfg.token_secret_len);
    else if (app->cfg.token_secret_len == 0 && old_len > 0)
        wr_warn("reload: the token secret is no longer configured; the running one is kept "
                "until a restart");
    if (app->cfg.token_secret_previous_len != before_prev ||
        memcmp(app->cfg.token_secret_previous, prev, before_prev) != 0)
        wr_api_set_previous_secret(app->api, app->cfg.token_secret_previous,
                                   app->cfg.token_secret_previous_len);
    wr_api_reload(app->api);
    wr_crypto_wipe(before, sizeof(before));
    wr_crypto_wipe(prev, sizeof(prev));

    /* Queues: a changed or new section writes the fields it names (a
     * PATCH; the queue is created with the declaration when absent), an
     * unchanged one is created if absent. */
    size_t n_changed = 0;
    for (size_t i = 0; i < fresh.n_queues; i++) {
        const wr_config_queue_t *old = wr_app_find_declared(&app->cfg, fresh.queues[i].name);
        bool same = old && json_equal(old->fields, fresh.queues[i].fields);
        app->declared_mode[i] = same ? DECL_CREATE : DECL_PATCH;
        app->declared_done[i] = false;
        app->declared[i] = declared[i];
        n_changed += !same;
    }
    wr_config_free(&app->cfg);
    memcpy(app->cfg.queues, fresh.queues, sizeof(fresh.queues));
    app->cfg.n_queues = fresh.n_queues;
    fresh.n_queues = 0; /* moved */
    app->decl_gen++;
    if (app->cfg.n_queues && !app->stopping) {
        struct timeval tv = {0, 0};
        evtimer_add(app->queues_timer, &tv);
    }
    const char *what = NULL;
    if (wr_log_reopen(&what) != WR_OK)
        wr_error("reload: cannot reopen %s: %s", what, strerror(errno));
    wr_info("reload done: %zu setting%s applied, %zu queue declaration%s changed", changed,
            changed == 1 ? "" : "s", n_changed, n_changed == 1 ? "" : "s");
out:
    wr_config_free(&fresh);
    memset(&fresh, 0, sizeof(fresh));
}
