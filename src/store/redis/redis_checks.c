/*
 * redis_checks.c - the connect-time checks of redis_conn (redis_checks.h):
 * the hook redis_io runs after AUTH and SELECT, before the connection is
 * ready. Part of the redis_conn module (redis_conn_internal.h).
 *
 * Handshake hook (each connection, before any command of ours)
 *   ROLE must say master (a replica: the connection ends, WR_EUNAVAILABLE,
 *   and is retried: pointing at a replica recovers once it is promoted).
 *   CONFIG GET maxmemory-policy / appendonly / save: allkeys-* without
 *   allow_eviction ends the connection with WR_EINVAL (the first attempt
 *   turns it into a refusal to start); appendonly no with save "" warns
 *   (nothing persisted); a refused CONFIG (managed Redis renames it) or
 *   ROLE warns and goes on. SCRIPT LOAD of every script (a new primary
 *   after a failover starts with an empty script cache). A final PING's
 *   answer decides. Each warning is logged once per connection object.
 * *
 * The answers are gathered in c->hook; every command is queued at once and
 * the last one (PING) decides, calling wr_redis_io_handshake_done().
 */
#include "store/redis/redis_checks.h"

#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "store/redis/redis_conn_internal.h"

/* Whether a check's answer can be read: not when the command failed, nor
 * when the server refused it (an error reply: *refused set). */
static bool answered(wr_err_t err, const redisReply *rep, bool *refused)
{
    if (err != WR_OK)
        return false;
    if (rep->type == REDIS_REPLY_ERROR) {
        *refused = true;
        return false;
    }
    return true;
}

static void hook_role(wr_err_t err, const redisReply *rep, void *arg)
{
    wr_redis_conn_t *c = arg;
    if (!answered(err, rep, &c->hook.role_refused))
        return;
    const char *role = rep->type == REDIS_REPLY_ARRAY && rep->elements > 0
                           ? wr_redis_conn__reply_str(rep->element[0])
                           : NULL;
    if (role && strcmp(role, "master") != 0) {
        c->hook.not_master = true;
        snprintf(c->hook.role, sizeof c->hook.role, "%s", role);
    }
}

static void hook_config(wr_err_t err, const redisReply *rep, void *arg)
{
    wr_redis_conn_t *c = arg;
    if (!answered(err, rep, &c->hook.config_refused))
        return;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2)
        return; /* unknown: as if not set */
    const char *k = wr_redis_conn__reply_str(rep->element[0]),
               *v = wr_redis_conn__reply_str(rep->element[1]);
    if (!k || !v)
        return;
    if (strcmp(k, "maxmemory-policy") == 0)
        snprintf(c->hook.policy, sizeof c->hook.policy, "%s", v);
    else if (strcmp(k, "appendonly") == 0)
        snprintf(c->hook.appendonly, sizeof c->hook.appendonly, "%s", v);
    else if (strcmp(k, "save") == 0)
        snprintf(c->hook.save, sizeof c->hook.save, "%s", v);
}

static void hook_script(wr_err_t err, const redisReply *rep, void *arg)
{
    wr_redis_conn_t *c = arg;
    if (err == WR_OK && rep->type == REDIS_REPLY_ERROR)
        wr_debug("%s: SCRIPT LOAD: %s (EVAL will load it)", c->name, rep->str);
}

/* The last answer of the hook: every check has its answer. */
static void hook_decide(wr_err_t err, const redisReply *rep, void *arg)
{
    (void)rep;
    wr_redis_conn_t *c = arg;
    if (err != WR_OK || !c->io)
        return;
    const wr_redis_conn__hook_t *h = &c->hook;
    const char *ep = wr_redis_io_endpoint(c->io);
    char msg[400];
    if (h->not_master) {
        snprintf(msg, sizeof msg,
                 "%s is a %s, not the primary (ROLE); the store waits until it is promoted%s", ep,
                 h->role,
                 c->ep.kind == WR_REDIS_URL_SENTINEL ? " or the sentinels name another" : "");
        wr_redis_io_handshake_done(c->io, WR_EUNAVAILABLE, msg);
        return;
    }
    if (strncmp(h->policy, "allkeys-", 8) == 0 && !c->allow_eviction) {
        snprintf(msg, sizeof msg,
                 "%s has maxmemory-policy %s: Redis may evict the queue's keys (users lose their "
                 "place, admitted users their entry); set maxmemory-policy noeviction "
                 "(docs/RELIABILITY.md), or start with --redis-allow-eviction to accept that",
                 ep, h->policy);
        wr_redis_io_handshake_done(c->io, WR_EINVAL, msg);
        return;
    }
    if (h->role_refused && !c->warned_role) {
        c->warned_role = true;
        wr_warn("%s: %s refused ROLE; cannot check that it is the primary", c->name, ep);
    }
    if (h->config_refused && !c->warned_config) {
        c->warned_config = true;
        wr_warn("%s: %s refused CONFIG GET (managed Redis?); cannot check maxmemory-policy "
                "and persistence: make sure they are noeviction and AOF (docs/RELIABILITY.md)",
                c->name, ep);
    }
    if (strncmp(h->policy, "allkeys-", 8) == 0 && !c->warned_volatile) {
        c->warned_volatile = true;
        wr_warn("%s: %s has maxmemory-policy %s (--redis-allow-eviction): keys may be evicted",
                c->name, ep, h->policy);
    }
    if (strcmp(h->appendonly, "no") == 0 && h->save[0] == '\0' && !c->warned_persist) {
        c->warned_persist = true;
        wr_warn("%s: %s persists nothing (appendonly no, save \"\"): a restart loses every "
                "queue; use appendonly yes with appendfsync everysec (docs/RELIABILITY.md)",
                c->name, ep);
    }
    wr_redis_io_handshake_done(c->io, WR_OK, NULL);
}

void wr_redis_checks_on_handshake(wr_redis_io_t *io, void *arg)
{
    wr_redis_conn_t *c = arg;
    if (io != c->io)
        return;
    memset(&c->hook, 0, sizeof c->hook);
    snprintf(c->hook.save, sizeof c->hook.save, "?");
    static const char *const role[] = {"ROLE"};
    static const char *const cfg[][3] = {{"CONFIG", "GET", "maxmemory-policy"},
                                         {"CONFIG", "GET", "appendonly"},
                                         {"CONFIG", "GET", "save"}};
    static const char *const ping[] = {"PING"};
    bool ok = wr_redis_io_handshake_command(io, 1, role, NULL, hook_role, c) == WR_OK;
    for (size_t i = 0; ok && i < 3; i++)
        ok = wr_redis_io_handshake_command(io, 3, cfg[i], NULL, hook_config, c) == WR_OK;
    for (size_t i = 0; ok && i < c->nscripts; i++) {
        const char *argv[] = {"SCRIPT", "LOAD", c->scripts[i].text};
        const size_t len[] = {6, 4, c->scripts[i].len};
        ok = wr_redis_io_handshake_command(io, 3, argv, len, hook_script, c) == WR_OK;
    }
    if (ok)
        ok = wr_redis_io_handshake_command(io, 1, ping, NULL, hook_decide, c) == WR_OK;
    if (!ok)
        wr_redis_io_handshake_done(io, WR_EUNAVAILABLE, "could not send the checks");
}
