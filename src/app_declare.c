/*
 * app_declare.c - the queues the config file declares ([queue NAME]
 * sections): created when absent at start (a restart never undoes a
 * runtime change), synced on reload (app_reload.c: a changed section is a
 * PATCH of the fields it names, API 1.2; an unchanged one only created if
 * absent), and written back when the store lost its data (app_secret.c,
 * K31). One round at a time on queues_timer, every 500 ms until the store
 * answered for each; a generation number (decl_gen) tells the answers of
 * an older round apart.
 */
#include "app_declare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

/* Declared queues: created when absent; on reload, a changed section is a
 * PATCH of the fields it names (API 1.2). */
typedef struct {
    app_t *app;
    size_t i;
    unsigned gen;          /* app->decl_gen when sent: an older answer is not for cfg.queues[i] */
    bool patched;          /* cfg is the stored config with the section's fields applied */
    wr_queue_config_t cfg; /* what is written */
} decl_t;

static void decl_put_cb(wr_err_t err, void *arg)
{
    decl_t *d = arg;
    app_t *app = d->app;
    if (err == WR_OK && d->gen == app->decl_gen) {
        app->declared_done[d->i] = true;
        wr_info("queue %s %s from the config file", app->cfg.queues[d->i].name,
                d->patched ? "updated (the fields its section names)" : "created");
        wr_scheduler_set_config(app->sched, app->cfg.queues[d->i].name, &d->cfg);
    }
    app->declared_pending--;
    free(d);
}

/* The queue's config in the store (or WR_ENOTFOUND): an absent queue is
 * created with the declaration; a present one is kept as it is (DECL_CREATE)
 * or gets the fields its section names, as a PATCH would (DECL_PATCH): the
 * fields the section does not name keep their runtime values. */
static void decl_get_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    decl_t *d = arg;
    app_t *app = d->app;
    const wr_config_queue_t *decl = &app->cfg.queues[d->i];
    if (d->gen != app->decl_gen || app->stopping) {
        /* declarations changed meanwhile: the next round asks again */
    } else if (err == WR_OK && app->declared_mode[d->i] == DECL_CREATE) {
        app->declared_done[d->i] = true; /* exists: keep its (maybe changed) config */
        wr_scheduler_note(app->sched, decl->name, info->config);
    } else if ((err == WR_OK || err == WR_ENOTFOUND) && app->declared[d->i].n_groups > 0 &&
               !wr_store_has_groups(app->store)) {
        /* (every backend of the registry serves groups: a store that would not) */
        wr_error("queue %s in the config file: groups: %s; the queue is left as it is", decl->name,
                 WR_GROUPS_STORE_ONLY);
        app->declared_done[d->i] = true;
    } else if (err == WR_OK) {
        char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
        if (wr_qconfig_patch(info->config, decl->fields, &d->cfg, field, sizeof(field), msg,
                             sizeof(msg)) != WR_OK) {
            /* valid alone (checked at load), not over the running config */
            wr_error("reload: queue %s in the config file cannot be applied to its running "
                     "config: %s: %s; the queue is left as it is",
                     decl->name, field, msg);
            app->declared_done[d->i] = true;
        } else {
            d->patched = true;
            if (wr_store_config_put(app->store, decl->name, &d->cfg, decl_put_cb, d) == WR_OK)
                return;
        }
    } else if (err == WR_ENOTFOUND) {
        d->cfg = app->declared[d->i];
        if (wr_store_config_put(app->store, decl->name, &d->cfg, decl_put_cb, d) == WR_OK)
            return;
    }
    app->declared_pending--;
    free(d);
}

/* True when every declared queue had its answer (exists, created, or
 * cannot be applied). */
bool wr_app_declared_all_done(const app_t *app)
{
    for (size_t i = 0; i < app->cfg.n_queues; i++)
        if (!app->declared_done[i])
            return false;
    return true;
}

void wr_app_queues_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    app_t *app = arg;
    if (app->stopping)
        return;
    if (wr_app_declared_all_done(app))
        return; /* every declared queue exists */
    if (app->declared_pending == 0) {
        for (size_t i = 0; i < app->cfg.n_queues; i++) {
            if (app->declared_done[i])
                continue;
            decl_t *d = calloc(1, sizeof(*d));
            if (!d)
                break;
            d->app = app;
            d->i = i;
            d->gen = app->decl_gen;
            wr_err_t e = wr_store_queue_get(app->store, app->cfg.queues[i].name, decl_get_cb, d);
            if (e == WR_OK)
                app->declared_pending++;
            else
                free(d);
        }
    }
    struct timeval tv = {0, 500000}; /* until the store answers for each */
    evtimer_add(app->queues_timer, &tv);
}

/* Declared queues: every one is looked at again and created if absent, as
 * at start (K31: the store lost its data). */
void wr_app_redeclare(app_t *app)
{
    for (size_t i = 0; i < app->cfg.n_queues; i++) {
        app->declared_done[i] = false;
        app->declared_mode[i] = DECL_CREATE;
    }
    app->decl_gen++; /* answers in flight are for the store before */
    if (app->cfg.n_queues && !app->stopping) {
        struct timeval tv = {0, 0};
        evtimer_add(app->queues_timer, &tv);
    }
}

/* Parses the queue declarations of cfg into out; false (logged as error
 * with the prefix `when`) on the first that does not parse. */
bool wr_app_parse_declared(const wr_config_t *cfg, wr_queue_config_t *out, const char *when)
{
    for (size_t i = 0; i < cfg->n_queues; i++) {
        char field[WR_FIELD_MAX + 1] = "", msg[256] = "";
        if (wr_qconfig_parse(cfg->queues[i].fields, &out[i], field, sizeof(field), msg,
                             sizeof(msg)) != WR_OK ||
            wr_qconfig_check_available(&out[i], field, sizeof(field), msg, sizeof(msg)) != WR_OK) {
            if (when)
                wr_error("%s: queue %s in the config file: %s: %s", when, cfg->queues[i].name,
                         field, msg);
            else
                fprintf(stderr, "waitroomd: queue %s in the config file: %s: %s\n",
                        cfg->queues[i].name, field, msg);
            return false;
        }
    }
    return true;
}

/* The declaration of queue name in cfg, or NULL. */
const wr_config_queue_t *wr_app_find_declared(const wr_config_t *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n_queues; i++)
        if (strcmp(cfg->queues[i].name, name) == 0)
            return &cfg->queues[i];
    return NULL;
}
