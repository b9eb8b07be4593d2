/*
 * store_redis_admin.c - the Redis store's administrative operations
 * (store.h): config_put (the config JSON and hash in one script, the
 * registry SADD next to it), queue_get, queue_delete (the script, then the
 * registry SREM and the degraded mode's burned set), the global keys'
 * secret and secret_sync, autotune's state (autotune.lua) and the bypass
 * rules' count (bypass.lua). Requests, submission and reply
 * decoding are store_redis.c's (store_redis_internal.h); queue_list is store_redis_list.c's.
 */
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ids.h"
#include "core/qconfig.h"
#include "store/redis/redis_conn.h"
#include "store/redis/redis_router.h"
#include "store/redis/script_rows.h"
#include "store/redis/store_redis_internal.h"

/* The priority groups' names in the config's order, comma separated
 * (config_put.lua's pair groups), into buf. */
static void groups_list(const wr_queue_config_t *cfg, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < cfg->n_groups && i < WR_GROUPS_MAX; i++) {
        int n = snprintf(buf + at, size - at, "%s%s", i ? "," : "", cfg->groups[i]);
        if (n < 0 || (size_t)n >= size - at)
            return;
        at += (size_t)n;
    }
}

/* The config hash's fields (config_put.lua's ARGV after the JSON), as
 * name, value pairs: every row of the qconfig table with a store field;
 * then push ('1'/'0': off deletes the subscriptions), the priority groups
 * (groups, the names in order; shareMicro, standardShare in millionths:
 * lib_group.lua) and, when the config sets what is left of its stock
 * (stock_set), the pair stockLeft (config_put.lua writes it to state; '' =
 * no stock). */
static bool arg_config_hash(struct req *r, const wr_queue_config_t *cfg)
{
    char groups[WR_GROUPS_MAX * (WR_GROUP_NAME_MAX + 1) + 1];
    groups_list(cfg, groups, sizeof groups);
    if (!wr_redis_conn_cmd_str(r->cmd, "push") ||
        !wr_redis_conn_cmd_str(r->cmd, cfg->push ? "1" : "0") ||
        !wr_redis_conn_cmd_str(r->cmd, "groups") || !wr_redis_conn_cmd_str(r->cmd, groups) ||
        !wr_redis_conn_cmd_str(r->cmd, "shareMicro") ||
        !wr_redis_conn_cmd_fmt(r->cmd, "%u", (unsigned)wr_groups_share_micro(cfg->standard_share)))
        return false;
    for (size_t i = 0; i < wr_qconfig_n_fields; i++) {
        const wr_qfield_t *f = &wr_qconfig_fields[i];
        char v[WR_QF_STORE_VALUE_MAX];
        if (!f->store)
            continue;
        if (wr_qconfig_store_value(f, cfg, v, sizeof v) < 0 ||
            !wr_redis_conn_cmd_str(r->cmd, f->store) || !wr_redis_conn_cmd_str(r->cmd, v))
            return false;
    }
    if (cfg->stock_set)
        return wr_redis_conn_cmd_str(r->cmd, "stockLeft") &&
               (cfg->stock >= 0 ? wr_redis_conn_cmd_fmt(r->cmd, "%lld", (long long)cfg->stock)
                                : wr_redis_conn_cmd_str(r->cmd, ""));
    return true;
}

wr_err_t wr_store_redis__config_put(wr_store_t *st, const char *q, const wr_queue_config_t *cfg,
                                    wr_store_done_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    wr_err_t err = WR_OK;
    char *json = NULL;
    struct req *r = NULL;
    if (!wr_ids_valid_queue(q) || !wr_store_valid_config(cfg) || !cb)
        return WR_EINVAL;
    if (!wr_redis_router_connected(s->conn))
        return WR_EUNAVAILABLE;
    json_t *j = wr_qconfig_to_json(cfg);
    if (!j)
        return WR_ENOMEM;
    /* Store only what reads back: every reader parses this JSON. */
    wr_queue_config_t check;
    char field[WR_FIELD_MAX + 1], msg[128];
    if (wr_qconfig_parse_stored(j, &check, field, sizeof field, msg, sizeof msg) != WR_OK) {
        json_decref(j);
        return WR_EINVAL;
    }
    json = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!json)
        return WR_ENOMEM;
    size_t jlen = strlen(json);
    if (jlen > JSON_MAX) {
        err = WR_ELIMIT;
        goto out;
    }
    /* EVALSHA SHA numkeys, the keys, the JSON, then a name and a value
     * (each under WR_QF_STORE_VALUE_MAX bytes, the groups' names under
     * 300) per config hash field */
    r = wr_store_redis__req_new_args(
        s, OP_PUT, SC_PUT, 4 + NKEYS + 2 * ((int)wr_qconfig_n_fields + 4),
        jlen + 2 * WR_QF_STORE_VALUE_MAX * (wr_qconfig_n_fields + 4) + 300, arg);
    if (!r) {
        err = WR_ENOMEM;
        goto out;
    }
    r->cb.done = cb;
    if (!wr_store_redis__arg_queue_keys(r, q) || !wr_redis_conn_cmd_arg(r->cmd, json, jlen) ||
        !arg_config_hash(r, cfg)) {
        err = WR_EINVAL;
        goto out;
    }
    /* Registry first: a crash between the two leaves a name whose config
     * does not exist, which queue_list filters out. */
    err = wr_store_redis__send_plain(s, "SADD", s->keys->queues, q);
    /* the public log's registry (store_redis_log.c): its signer's round
     * finds the log from then on, also after the queue is deleted */
    if (err == WR_OK && cfg->public_log)
        err = wr_store_redis__send_plain(s, "SADD", s->keys->logs, q);
    if (err != WR_OK)
        goto out;
    /* (push off: config_put.lua deletes the subscriptions and parked
     * claims with the config, not when it refuses it) */
    err = wr_store_redis__submit(s, r, true);
    r = NULL; /* submit owns it */
out:
    wr_store_redis__req_free(r);
    free(json);
    return err;
}

WR_ROWS_ORDER(A_QUEUE_GET, VERSION); /* queue_get's */

wr_err_t wr_store_redis__queue_get(wr_store_t *st, const char *q, wr_store_info_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(q) || !cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_GET, SC_GET, 0, arg, &err);
    if (!r)
        return err;
    r->cb.info = cb;
    return wr_store_redis__submit(
        s, r, wr_store_redis__arg_queue_keys(r, q) && wr_store_redis__arg_known_version(s, r));
}

wr_err_t wr_store_redis__queue_delete(wr_store_t *st, const char *q, wr_store_done_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(q) || !cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_DELETE, SC_DELETE, 0, arg, &err);
    if (!r)
        return err;
    r->cb.done = cb;
    err = wr_store_redis__submit(s, r, wr_store_redis__arg_queue_keys(r, q));
    if (err != WR_OK)
        return err;
    /* After the script, on the same connection. If this is lost, the
     * stale name is filtered by queue_list. */
    (void)wr_store_redis__send_plain(s, "SREM", s->keys->queues, q);
    /* Degraded mode: the burned set goes too (if this is lost, the key
     * expires with its last pass: burn.lua sets its expiry). */
    char burned[WR_QUEUE_NAME_MAX + 16];
    snprintf(burned, sizeof burned, "wr:{%s}:burned", q);
    const char *del[2] = {"DEL", burned};
    (void)wr_redis_router_send_oneway(s->conn, "registry", 2, del);
    return WR_OK;
}

wr_err_t wr_store_redis__secret(wr_store_t *st, const uint8_t *proposed, size_t len,
                                wr_store_secret_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_store_valid_secret(proposed, len) || !cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_SECRET, SC_SECRET, len, arg, &err);
    if (!r)
        return err;
    r->cb.secret = cb;
    return wr_store_redis__submit(s, r,
                                  wr_redis_conn_cmd_str(r->cmd, "1") &&
                                      wr_redis_conn_cmd_str(r->cmd, s->keys->secret) &&
                                      wr_redis_conn_cmd_arg(r->cmd, proposed, len));
}

wr_err_t wr_store_redis__secret_sync(wr_store_t *st, const uint8_t *own, size_t own_len,
                                     const char *epoch, wr_store_sync_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if ((own_len > 0 && !wr_store_valid_secret(own, own_len)) || !wr_store_valid_epoch(epoch) ||
        !cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, own_len > 0 ? OP_SYNC : OP_SYNC_EPOCH,
                                              SC_SECRET_SYNC, own_len + strlen(epoch), arg, &err);
    if (!r)
        return err;
    r->cb.sync = cb;
    return wr_store_redis__submit(
        s, r,
        wr_redis_conn_cmd_str(r->cmd, "3") && wr_redis_conn_cmd_str(r->cmd, s->keys->epoch) &&
            wr_redis_conn_cmd_str(r->cmd, s->keys->secret) &&
            wr_redis_conn_cmd_str(r->cmd, s->keys->secret_previous) &&
            wr_redis_conn_cmd_str(r->cmd, epoch) &&
            wr_redis_conn_cmd_arg(r->cmd, own_len > 0 ? own : (const uint8_t *)"", own_len));
}

/* Bypass rules: bypass (store.h), bypass.lua on the queue's keys (it
 * reads none of the groups'). */
WR_ROWS_ORDER(A_BYPASS, N); /* wr_store_redis__bypass's */

wr_err_t wr_store_redis__bypass(wr_store_t *st, const char *q, uint64_t n, wr_store_done_cb cb,
                                void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(q) || !wr_store_valid_bypass(n) || !cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_BYPASS, SC_BYPASS, 24, arg, &err);
    if (!r)
        return err;
    r->cb.done = cb;
    return wr_store_redis__submit(s, r,
                                  wr_store_redis__arg_queue_keys_n(r, q, NKEYS_BASE) &&
                                      wr_redis_conn_cmd_fmt(r->cmd, "%llu", (unsigned long long)n));
}

/* Autotune (store.h): autotune.lua on wr:{q}:config and wr:{q}:state. */
WR_ROWS_ORDER(A_AUTOTUNE, REPORT, SOURCE, LATENCY_MS, ERROR_RATE, SET, STEP_US, RATE,
              CUT_MS); /* wr_store_redis__autotune's */

wr_err_t wr_store_redis__autotune(wr_store_t *st, const char *q, const wr_autotune_req_t *req,
                                  wr_store_autotune_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(q) || !wr_store_valid_autotune(req) || !cb)
        return WR_EINVAL;
    wr_err_t err;
    struct req *r = wr_store_redis__req_start(s, OP_AUTOTUNE, SC_AUTOTUNE, 8 * 32, arg, &err);
    if (!r)
        return err;
    r->cb.autotune = cb;
    bool ok = wr_store_redis__arg_queue_keys_n(r, q, NKEYS_BASE) && /* (no group's) */
              wr_redis_conn_cmd_str(r->cmd, req->report ? "1" : "0") &&
              wr_redis_conn_cmd_fmt(r->cmd, "%d", req->report ? req->source : 0) &&
              wr_redis_conn_cmd_fmt(r->cmd, "%.17g", req->report ? req->latency_ms : 0.0) &&
              wr_redis_conn_cmd_fmt(r->cmd, "%.17g", req->report ? req->error_rate : 0.0) &&
              wr_redis_conn_cmd_str(r->cmd, req->set ? "1" : "0") &&
              wr_redis_conn_cmd_fmt(r->cmd, "%lld", (long long)req->expect_step_us) &&
              wr_redis_conn_cmd_fmt(r->cmd, "%.17g", req->set ? req->rate : 0.0) &&
              wr_redis_conn_cmd_fmt(r->cmd, "%.17g", req->set ? req->cut_latency_ms : 0.0);
    return wr_store_redis__submit(s, r, ok);
}
