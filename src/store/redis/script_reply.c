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
#include "store/redis/script_reply.h"

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

/* The answer of one join or status, as entry.lua and entry_batch.lua send
 * it: kind, then by kind position, waiting, head_due_us, own_due_us and
 * passed (1; the dues are -1 unless a join added the user, passed -1 unless
 * the people ahead were counted: lib.lua entry_passed), jti, iat_us,
 * exp_us (2), waiting (-2); unused fields are 0 / NULL. */
struct ans {
    long long kind, position, waiting, iat, exp, head_due, own_due, passed;
    const redisReply *jti;
    long long stock_left; /* the call's: -1 without a stock */
};

/* The stock fields of a stats reply: what is left (-1: none) and the
 * sold-out moment, us -> epoch ms (-1: not sold out). */
static void fill_stock(wr_queue_stats_t *st, const redisReply *left, const redisReply *sold_us)
{
    st->stock_left = left->integer >= 0 ? left->integer : -1;
    st->sold_out_at_ms = sold_us->integer >= 0 ? sold_us->integer / 1000 : -1;
}

/* Decodes a, with the reply's config part (version, json) resolved first
 * for every kind but "no queue". */
static wr_err_t decode_entry(const struct ans *a, long long version, const redisReply *json,
                             wr_script_reply_config_fn resolve, void *ctx, wr_entry_t *entry)
{
    wr_err_t err = WR_EPROTO;
    entry->head_due_us = entry->own_due_us = -1;
    entry->passed_ahead = -1;
    entry->passed_scan = 0;
    entry->stock_left = a->stock_left >= 0 ? a->stock_left : -1;
    if (a->kind == -1) {
        err = WR_ENOTFOUND;
        goto out;
    }
    err = resolve(ctx, version, json, &entry->config);
    if (err != WR_OK)
        goto out;
    err = WR_EPROTO;
    switch (a->kind) {
    case 1:
        if (a->position < 1 || a->waiting < a->position)
            goto out;
        entry->state = WR_ENTRY_WAITING;
        entry->position = (uint64_t)a->position;
        entry->waiting = (uint64_t)a->waiting;
        if (a->head_due >= 0 && a->own_due >= 0) {
            entry->head_due_us = a->head_due;
            entry->own_due_us = a->own_due;
        }
        if (a->passed >= 0) {
            /* the script counts everyone ahead, or nobody */
            if (a->passed > a->position - 1 || a->position - 1 > WR_STORE_AHEAD_SCAN)
                goto out;
            entry->passed_ahead = a->passed;
            entry->passed_scan = (uint64_t)a->position - 1;
        }
        err = WR_OK;
        break;
    case 2:
        if (!a->jti || a->jti->len == 0 || a->jti->len > WR_JTI_LEN)
            goto out;
        entry->state = WR_ENTRY_ADMITTED;
        memcpy(entry->jti, a->jti->str, a->jti->len);
        entry->jti[a->jti->len] = '\0';
        entry->issued_at_us = a->iat;
        entry->expires_at_us = a->exp;
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
    case 5: /* held: position 1, out of the line's count */
        if (a->position != 1 || a->waiting < 0)
            goto out;
        entry->state = WR_ENTRY_WAITING;
        entry->held = true;
        entry->position = 1;
        entry->waiting = (uint64_t)a->waiting;
        err = WR_OK;
        break;
    case 6: /* the end of a sale: position says why */
        if (a->position != 1 && a->position != 2)
            goto out;
        entry->state = WR_ENTRY_CLOSED;
        entry->closed_reason = a->position == 2 ? WR_CLOSE_SOLD_OUT : WR_CLOSE_CLOSED;
        err = WR_OK;
        break;
    case -2:
        entry->waiting = a->waiting < 0 ? 0 : (uint64_t)a->waiting;
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

wr_err_t wr_script_reply_entry(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                               wr_entry_t *entry)
{
    memset(entry, 0, sizeof *entry);
    if (!shape(rep, "iisiisiiiiii"))
        return WR_EPROTO;
    redisReply *const *e = rep->element;
    struct ans a = {.kind = e[0]->integer,
                    .position = e[3]->integer,
                    .waiting = e[4]->integer,
                    .jti = e[5],
                    .iat = e[6]->integer,
                    .exp = e[7]->integer,
                    .head_due = e[8]->integer,
                    .own_due = e[9]->integer,
                    .stock_left = e[10]->integer,
                    .passed = e[11]->integer};
    return decode_entry(&a, e[1]->integer, e[2], resolve, ctx, entry);
}

/* The types of the elements that follow an answer's kind in
 * entry_batch.lua's reply; NULL for a kind it never sends. */
static const char *batch_fields(long long kind)
{
    switch (kind) {
    case 1:
        return "iiiii";
    case 2:
        return "sii";
    case -2:
    case 5:
    case 6:
        return "i";
    case 3:
    case 4:
    case -1:
    case -3:
        return "";
    default:
        return NULL;
    }
}

/* Reads the answer at element *at of rep into *a (a->kind = 0 for an
 * error reply) and moves *at past it. False when it is cut off or of the
 * wrong shape. */
static bool batch_answer(const redisReply *rep, size_t *at, struct ans *a)
{
    memset(a, 0, sizeof *a);
    const redisReply *k = *at < rep->elements ? rep->element[*at] : NULL;
    if (k && k->type == REDIS_REPLY_ERROR) {
        (*at)++;
        return true;
    }
    if (!is_int(k) || k->integer == 0)
        return false;
    const char *f = batch_fields(k->integer);
    size_t nf = f ? strlen(f) : 0;
    if (!f || rep->elements - *at - 1 < nf)
        return false;
    redisReply *const *e = rep->element + *at + 1;
    for (size_t i = 0; i < nf; i++)
        if (f[i] == 'i' ? !is_int(e[i]) : !is_str(e[i]))
            return false;
    a->kind = k->integer;
    if (a->kind == 1) {
        a->position = e[0]->integer;
        a->waiting = e[1]->integer;
        a->head_due = e[2]->integer;
        a->own_due = e[3]->integer;
        a->passed = e[4]->integer;
    } else if (a->kind == 2) {
        a->jti = e[0];
        a->iat = e[1]->integer;
        a->exp = e[2]->integer;
    } else if (a->kind == -2) {
        a->waiting = e[0]->integer;
    } else if (a->kind == 5) {
        a->position = 1;
        a->waiting = e[0]->integer;
    } else if (a->kind == 6) {
        a->position = e[0]->integer;
    }
    *at += 1 + nf;
    return true;
}

wr_err_t wr_script_reply_batch_begin(wr_script_reply_batch_t *it, const redisReply *rep, size_t n)
{
    it->rep = NULL;
    it->at = 3;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 3 || !is_int(rep->element[0]) ||
        !is_str(rep->element[1]) || !is_int(rep->element[2]))
        return WR_EPROTO;
    size_t at = 3;
    struct ans a;
    for (size_t i = 0; i < n; i++)
        if (!batch_answer(rep, &at, &a))
            return WR_EPROTO;
    if (at != rep->elements)
        return WR_EPROTO;
    it->rep = rep;
    return WR_OK;
}

wr_err_t wr_script_reply_batch_next(wr_script_reply_batch_t *it, const redisReply **error,
                                    wr_script_reply_config_fn resolve, void *ctx, wr_entry_t *entry)
{
    memset(entry, 0, sizeof *entry);
    *error = NULL;
    struct ans a;
    const redisReply *rep = it->rep;
    if (!rep || it->at >= rep->elements)
        return WR_EPROTO;
    size_t at = it->at;
    if (!batch_answer(rep, &it->at, &a))
        return WR_EPROTO; /* cannot happen after batch_begin */
    if (a.kind == 0) {
        *error = rep->element[at];
        return WR_EPROTO;
    }
    a.stock_left = rep->element[2]->integer;
    return decode_entry(&a, rep->element[0]->integer, rep->element[1], resolve, ctx, entry);
}

wr_err_t wr_script_reply_admit(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                               wr_admit_t *res)
{
    memset(res, 0, sizeof *res);
    if (!shape(rep, "iiiisiiiiiiiiiiiaiiiiiiii"))
        return WR_EPROTO;
    redisReply *const *e = rep->element;
    if (e[0]->integer == -1)
        return WR_ENOTFOUND;
    if (e[0]->integer != 0 || e[1]->integer < 0)
        return WR_EPROTO;
    wr_err_t err = resolve(ctx, e[3]->integer, e[4], &res->config);
    if (err != WR_OK)
        return err;
    res->admitted = u64(e[1]);
    res->now_us = e[2]->integer;
    fill_stats(&res->stats, e + 5);
    res->stats.prequeue = u64(e[17]);
    res->opening_moved = u64(e[18]);
    res->opening_left = u64(e[19]);
    res->stats.away = u64(e[20]);
    res->stats.held = u64(e[21]);
    res->stats.returned_total = u64(e[22]);
    fill_stock(&res->stats, e[23], e[24]);
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
    res->session_us = -1;
    if (shape(rep, "ii") && rep->element[0]->integer == 0) { /* release.lua: {0, us} */
        res->session_us = rep->element[1]->integer >= 0 ? rep->element[1]->integer : -1;
        return WR_OK;
    }
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
                             wr_queue_info_t *info)
{
    memset(info, 0, sizeof *info);
    if (!shape(rep, "iisiiiiiiiiiiiiiiiiis"))
        return WR_EPROTO;
    redisReply *const *e = rep->element;
    if (e[0]->integer == -1)
        return WR_ENOTFOUND;
    if (e[0]->integer != 0)
        return WR_EPROTO;
    wr_err_t err = resolve(ctx, e[1]->integer, e[2], &info->config);
    if (err != WR_OK)
        return err;
    fill_stats(&info->stats, e + 3);
    info->stats.prequeue = u64(e[14]);
    info->stats.away = u64(e[15]);
    info->stats.held = u64(e[16]);
    info->stats.returned_total = u64(e[17]);
    fill_stock(&info->stats, e[18], e[19]);
    if (e[20]->len > 0 && e[20]->len < 64) { /* autotune's kept rate, '%.17g' */
        char buf[64];
        memcpy(buf, e[20]->str, e[20]->len);
        buf[e[20]->len] = '\0';
        double d = strtod(buf, NULL);
        info->stats.autotune_rate = d > 0 && d <= WR_AUTOTUNE_RATE_MAX ? d : 0;
    }
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

wr_err_t wr_script_reply_sync(const redisReply *rep, bool with_secret, wr_store_sync_t *res)
{
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 4)
        return WR_EPROTO;
    const redisReply *ep = rep->element[0], *sec = rep->element[1], *prev = rep->element[2];
    if (!is_str(ep) || ep->len > WR_STORE_EPOCH_MAX || strlen(ep->str) != ep->len ||
        !is_int(rep->element[3]))
        return WR_EPROTO;
    memset(res, 0, sizeof *res);
    res->epoch = ep->str;
    if (with_secret && wr_script_reply_secret(sec, &res->secret, &res->secret_len) != WR_OK)
        return WR_EPROTO;
    if (is_str(prev) && wr_store_valid_secret(prev->str, prev->len)) {
        res->previous = (const uint8_t *)prev->str;
        res->previous_len = prev->len;
    }
    res->secret_restored = with_secret && rep->element[3]->integer == 1;
    return WR_OK;
}

wr_err_t wr_script_reply_secret(const redisReply *rep, const uint8_t **secret, size_t *len)
{
    if (!is_str(rep) || !wr_store_valid_secret(rep->str, rep->len))
        return WR_EPROTO;
    *secret = (const uint8_t *)rep->str;
    *len = rep->len;
    return WR_OK;
}
