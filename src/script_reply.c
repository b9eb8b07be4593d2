/*
 * script_reply.c - the decoders of the Lua scripts' answers
 * (script_reply.h).
 *
 * Each decoder is written against the script's return statement: first
 * the shape (shape(): one letter per element, 'i' integer, 's' bulk
 * string), then the result code in element 0, then the config part
 * (through the caller's resolver, before the code-specific checks, as the
 * scripts send it for every code but "no queue"), then the values. Nothing
 * here allocates; results are written only to the caller's out-parameters.
 */
#include "script_reply.h"

#include <stdlib.h>
#include <string.h>

static bool is_int(const redisReply *e)
{
    return e && e->type == REDIS_REPLY_INTEGER;
}

static bool is_str(const redisReply *e)
{
    return e && e->type == REDIS_REPLY_STRING;
}

/* Checks that reply is an array of n elements of the given types
 * ('i' integer, 's' bulk string). */
static bool shape(const redisReply *reply, const char *types)
{
    size_t n = strlen(types);
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const redisReply *e = reply->element[i];
        bool ok = types[i] == 'i'   ? is_int(e)
                  : types[i] == 'a' ? e && e->type == REDIS_REPLY_ARRAY
                                    : is_str(e);
        if (!ok)
            return false;
    }
    return true;
}

static uint64_t u64(const redisReply *e)
{
    return e->integer < 0 ? 0 : (uint64_t)e->integer;
}

static void fill_stats(wr_queue_stats_t *st, redisReply *const *e)
{
    st->waiting = u64(e[0]);
    st->active = u64(e[1]);
    st->admitted_total = u64(e[2]);
    st->consumed_total = u64(e[3]);
    st->expired_total = u64(e[4]);
    st->left_total = u64(e[5]);
    st->rejected_full_total = u64(e[6]);
    st->sessions = u64(e[7]);
    st->released_total = u64(e[8]);
    st->sessions_expired_total = u64(e[9]);
    st->abandoned_total = u64(e[10]);
}

wr_err_t wr_script_reply_entry(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                               wr_entry_t *entry, wr_queue_config_t *cfg)
{
    wr_err_t err = WR_EPROTO;
    memset(entry, 0, sizeof *entry);
    if (!shape(rep, "iisiisii"))
        goto out;
    redisReply *const *e = rep->element;
    long long kind = e[0]->integer;
    if (kind == -1) {
        err = WR_ENOTFOUND;
        goto out;
    }
    err = resolve(ctx, e[1]->integer, e[2], cfg);
    if (err != WR_OK)
        goto out;
    entry->config = cfg;
    err = WR_EPROTO;
    switch (kind) {
    case 1:
        if (e[3]->integer < 1 || e[4]->integer < e[3]->integer)
            goto out;
        entry->state = WR_ENTRY_WAITING;
        entry->position = u64(e[3]);
        entry->waiting = u64(e[4]);
        err = WR_OK;
        break;
    case 2:
        if (e[5]->len == 0 || e[5]->len > WR_JTI_LEN)
            goto out;
        entry->state = WR_ENTRY_ADMITTED;
        memcpy(entry->jti, e[5]->str, e[5]->len);
        entry->jti[e[5]->len] = '\0';
        entry->issued_at_us = e[6]->integer;
        entry->expires_at_us = e[7]->integer;
        err = WR_OK;
        break;
    case 3:
        entry->state = WR_ENTRY_PASSTHROUGH;
        err = WR_OK;
        break;
    case 4:
        entry->state = WR_ENTRY_PREQUEUE;
        err = WR_OK;
        break;
    case -2:
        entry->waiting = u64(e[4]);
        err = WR_EFULL;
        break;
    case -3:
        err = WR_ENOTINQUEUE;
        break;
    default:
        break;
    }
out:
    return err;
}

wr_err_t wr_script_reply_admit(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                               wr_admit_t *res, wr_queue_config_t *cfg)
{
    memset(res, 0, sizeof *res);
    if (!shape(rep, "iiiisiiiiiiiiiiiaiii"))
        return WR_EPROTO;
    redisReply *const *e = rep->element;
    if (e[0]->integer == -1)
        return WR_ENOTFOUND;
    if (e[0]->integer != 0 || e[1]->integer < 0)
        return WR_EPROTO;
    wr_err_t err = resolve(ctx, e[3]->integer, e[4], cfg);
    if (err != WR_OK)
        return err;
    res->admitted = u64(e[1]);
    res->now_us = e[2]->integer;
    fill_stats(&res->stats, e + 5);
    res->stats.prequeue = u64(e[17]);
    res->opening_moved = u64(e[18]);
    res->opening_left = u64(e[19]);
    res->config = cfg;
    /* The waits of the users admitted by this call (admit.lua's 17th
     * element): malloc'd, the caller frees. Out of memory: none reported. */
    size_t nw = e[16]->elements;
    int64_t *waits = NULL;
    if (nw > 0 && nw == res->admitted && (waits = malloc(nw * sizeof *waits)) != NULL) {
        for (size_t i = 0; i < nw; i++) {
            const redisReply *w = e[16]->element[i];
            waits[i] = is_int(w) && w->integer > 0 ? w->integer : 0;
        }
        res->waited_us = waits;
        res->n_waited = nw;
    }
    return WR_OK;
}

wr_err_t wr_script_reply_token(const redisReply *rep, wr_token_check_t *res)
{
    res->passthrough = false;
    res->reason = WR_TOKEN_OK;
    if (!is_int(rep))
        return WR_EPROTO;
    switch (rep->integer) {
    case 0:
        return WR_OK;
    case 1:
        res->passthrough = true;
        return WR_OK;
    case -1:
        return WR_ENOTFOUND;
    case -2:
        res->reason = WR_TOKEN_CONSUMED;
        return WR_ETOKEN;
    case -3:
        res->reason = WR_TOKEN_EXPIRED;
        return WR_ETOKEN;
    case -4:
        res->reason = WR_TOKEN_NO_SESSION;
        return WR_ETOKEN;
    default:
        return WR_EPROTO;
    }
}

wr_err_t wr_script_reply_get(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                             wr_queue_info_t *info, wr_queue_config_t *cfg)
{
    memset(info, 0, sizeof *info);
    if (!shape(rep, "iisiiiiiiiiiiii"))
        return WR_EPROTO;
    redisReply *const *e = rep->element;
    if (e[0]->integer == -1)
        return WR_ENOTFOUND;
    if (e[0]->integer != 0)
        return WR_EPROTO;
    wr_err_t err = resolve(ctx, e[1]->integer, e[2], cfg);
    if (err != WR_OK)
        return err;
    info->config = cfg;
    fill_stats(&info->stats, e + 3);
    info->stats.prequeue = u64(e[14]);
    return WR_OK;
}

wr_err_t wr_script_reply_code(const redisReply *rep, bool not_in_queue_ok)
{
    if (!is_int(rep))
        return WR_EPROTO;
    if (rep->integer == 0)
        return WR_OK;
    if (rep->integer == -1)
        return WR_ENOTFOUND;
    if (rep->integer == -3 && not_in_queue_ok)
        return WR_ENOTINQUEUE;
    return WR_EPROTO;
}

wr_err_t wr_script_reply_put(const redisReply *rep)
{
    return is_int(rep) && rep->integer > 0 ? WR_OK : WR_EPROTO;
}

wr_err_t wr_script_reply_secret(const redisReply *rep, const uint8_t **secret, size_t *len)
{
    if (!is_str(rep) || !wr_store_valid_secret(rep->str, rep->len))
        return WR_EPROTO;
    *secret = (const uint8_t *)rep->str;
    *len = rep->len;
    return WR_OK;
}
