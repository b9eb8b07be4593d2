/*
 * script_reply.c - the decoders of the Lua scripts' answers
 * (script_reply.h).
 *
 * Each decoder reads the script's reply by the rows of scripts.def
 * (script_rows.h: e[WR_ROW(R_ADMIT, STOCK_LEFT)], never a bare position):
 * first the shape (wr_script_rows_check: the length and each element's
 * type), then the result code, then the config part
 * (through the caller's resolver, before the code-specific checks, as the
 * scripts send it for every code but "no queue"), then the values.
 * Results are written only to the caller's out-parameters; what is
 * allocated: one SHA-256 context per thread (at the first receipt), and
 * admit's waits and Web Push subscriptions (unpacked with
 * wr_pushsub_unpack), which the caller frees.
 */
#include "store/redis/script_reply.h"

#include "base/crypto.h"
#include "base/tlog.h"
#include "core/logleaf.h"
#include "store/redis/script_rows.h"
#include "base/ids.h"

#include <math.h>
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

/* The elements of rep when it is an array of exactly the rows of table t,
 * else NULL (WR_EPROTO); *out, size bytes, zeroed either way. */
static redisReply *const *rows_of(const redisReply *rep, wr_script_row_t t, void *out, size_t size)
{
    memset(out, 0, size);
    return wr_script_rows_check(rep, t, NULL, 0) ? rep->element : NULL;
}

/* rows_of() for table T (R_ENTRY...), zeroing the answer *out. */
#define ROWS(reply, T, out) rows_of(reply, WR_ROWS_TABLE(T), out, sizeof *(out))

/* The head that admit.lua's and queue_get.lua's answers share: the code
 * (0 ok, -1 no such queue: WR_ENOTFOUND; anything else, or bad: WR_EPROTO),
 * then the config of version and json through resolve. */
static wr_err_t code_config(const redisReply *code, bool bad, const redisReply *version,
                            const redisReply *json, wr_script_reply_config_fn resolve, void *ctx,
                            const wr_queue_config_t **out)
{
    if (code->integer == -1)
        return WR_ENOTFOUND;
    if (code->integer != 0 || bad)
        return WR_EPROTO;
    return resolve(ctx, version->integer, json, out);
}

/* code_config() of the elements e of a reply of table T. */
#define CODE_CONFIG(e, T, bad, out)                                                                \
    code_config(e[WR_ROW(T, CODE)], bad, e[WR_ROW(T, VERSION)], e[WR_ROW(T, JSON)], resolve, ctx,  \
                out)

static uint64_t u64(const redisReply *e)
{
    return e->integer < 0 ? 0 : (uint64_t)e->integer;
}

/* A string element of a reply as a double (autotune.lua's '%.17g', also
 * queue_get.lua's AUTO_RATE); 0 when it is not one. */
static double reply_double(const redisReply *e)
{
    char buf[64];
    if (e->type != REDIS_REPLY_STRING || e->len == 0 || e->len >= sizeof buf)
        return 0;
    memcpy(buf, e->str, e->len);
    buf[e->len] = '\0';
    char *end;
    double d = strtod(buf, &end);
    return *end == '\0' && isfinite(d) ? d : 0;
}

/* The stats of a reply of table T (R_ADMIT, R_QUEUE_GET: the same row
 * names, lib.lua's stats()) from its elements e. */
#define FILL_STATS(st, e, T)                                                                       \
    do {                                                                                           \
        (st)->waiting = u64((e)[WR_ROW(T, WAITING)]);                                              \
        (st)->active = u64((e)[WR_ROW(T, ACTIVE)]);                                                \
        (st)->admitted_total = u64((e)[WR_ROW(T, ADMITTED_TOTAL)]);                                \
        (st)->consumed_total = u64((e)[WR_ROW(T, CONSUMED_TOTAL)]);                                \
        (st)->expired_total = u64((e)[WR_ROW(T, EXPIRED_TOTAL)]);                                  \
        (st)->left_total = u64((e)[WR_ROW(T, LEFT_TOTAL)]);                                        \
        (st)->rejected_full_total = u64((e)[WR_ROW(T, REJECTED_FULL_TOTAL)]);                      \
        (st)->sessions = u64((e)[WR_ROW(T, SESSIONS)]);                                            \
        (st)->released_total = u64((e)[WR_ROW(T, RELEASED_TOTAL)]);                                \
        (st)->sessions_expired_total = u64((e)[WR_ROW(T, SESSIONS_EXPIRED_TOTAL)]);                \
        (st)->abandoned_total = u64((e)[WR_ROW(T, ABANDONED_TOTAL)]);                              \
        (st)->prequeue = u64((e)[WR_ROW(T, PREQUEUE)]);                                            \
        (st)->away = u64((e)[WR_ROW(T, AWAY)]);                                                    \
        (st)->held = u64((e)[WR_ROW(T, HELD)]);                                                    \
        (st)->returned_total = u64((e)[WR_ROW(T, RETURNED_TOTAL)]);                                \
        (st)->unseen_expired_total = u64((e)[WR_ROW(T, UNSEEN_EXPIRED_TOTAL)]);                    \
        (st)->bypass_total = u64((e)[WR_ROW(T, BYPASS_TOTAL)]);                                    \
        (st)->subscribed = u64((e)[WR_ROW(T, SUBSCRIBED)]);                                        \
        fill_stock(st, (e)[WR_ROW(T, STOCK_LEFT)], (e)[WR_ROW(T, SOLD_OUT_AT)]);                   \
    } while (0)

/* The stats per line (wr_queue_stats_t lines) of a reply's LINES (lib_group.lua
 * G.stats_lines: waiting, admitted total per line, the standard line first,
 * then cfg's groups in order; {} on a queue without groups: the standard
 * line is the whole line). False when it does not fit cfg. */
static bool fill_lines(wr_queue_stats_t *st, const redisReply *a, const wr_queue_config_t *cfg)
{
    size_t n = a->elements / 2;
    if (a->elements == 0) {
        st->n_lines = 1;
        snprintf(st->lines[0].name, sizeof st->lines[0].name, "%s", WR_GROUP_STANDARD);
        st->lines[0].waiting = st->waiting;
        st->lines[0].admitted_total = st->admitted_total;
        return true;
    }
    if (a->elements % 2 != 0 || n != 1 + cfg->n_groups || n > WR_GROUPS_MAX + 1)
        return false;
    for (size_t i = 0; i < a->elements; i++)
        if (!is_int(a->element[i]))
            return false;
    st->n_lines = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(st->lines[i].name, sizeof st->lines[i].name, "%s",
                 i == 0 ? WR_GROUP_STANDARD : cfg->groups[i - 1]);
        st->lines[i].waiting = u64(a->element[2 * i]);
        st->lines[i].admitted_total = u64(a->element[2 * i + 1]);
    }
    return true;
}

/* The answer of one join or status, as entry.lua and entry_batch.lua send
 * it (R_ENTRY, B_* of scripts.def): kind, then by kind position, waiting,
 * head_due_us, own_due_us and passed (WAITING; the dues are -1 unless a
 * join added the user: entry->added, as PREQUEUE_NEW is a PREQUEUE that
 * added the user; passed -1 unless the people ahead were counted:
 * lib.lua entry_passed), jti, iat_us, exp_us (ADMITTED), waiting (FULL,
 * HELD), why (CLOSED, in position); unused fields are 0 / NULL. */
struct ans {
    long long kind, position, waiting, iat, exp, head_due, own_due, passed;
    long long subscribed; /* WAITING, HELD: 1 with a live Web Push subscription */
    const redisReply *jti;
    long long stock_left;    /* the call's: -1 without a stock */
    long long receipt_index; /* the public log's receipt: the join leaf's index, or -1 */
    const redisReply *receipt_u, *receipt_hash, *receipt_leaf; /* B_RECEIPT's U, HASH, LEAF */
    redisReply *const *group; /* priority groups: B_GROUP's elements, or NULL */
};

/* The receipt of a into entry (lib_log.lua log_receipt): the join leaf's
 * index, the log id (32 lowercase hex), and the leaf hash (RFC 9162): the
 * one the signer stored (32 bytes), or, for a leaf not hashed yet, computed
 * here from the leaf's bytes, which must be a join leaf of that log id.
 * Any other shape (a hash of another length, both or neither of hash and
 * leaf) is no receipt: WR_EPROTO. One SHA-256 context for the thread,
 * made on first use. */
static wr_err_t decode_receipt(const struct ans *a, wr_entry_t *entry)
{
    static _Thread_local wr_crypto_sha256_t *sha;
    if (a->receipt_index < 0)
        return WR_OK;
    const redisReply *u = a->receipt_u, *h = a->receipt_hash, *leaf = a->receipt_leaf;
    uint8_t ub[WR_LOGLEAF_U_BYTES];
    if (!is_str(u) || !is_str(h) || !is_str(leaf) || u->len != WR_LOGLEAF_U_HEX)
        return WR_EPROTO;
    memcpy(entry->receipt_u, u->str, WR_LOGLEAF_U_HEX);
    entry->receipt_u[WR_LOGLEAF_U_HEX] = '\0';
    if (wr_logleaf_u_bytes(entry->receipt_u, ub) != WR_OK)
        return WR_EPROTO;
    if (h->len > 0) { /* hashed by the signer: nothing to compute */
        if (h->len != WR_TLOG_HASH || leaf->len > 0)
            return WR_EPROTO;
        memcpy(entry->receipt_leaf_hash, h->str, WR_TLOG_HASH);
    } else {
        char lu[WR_LOGLEAF_U_HEX + 1];
        if (!wr_logleaf_join_u(leaf->str, leaf->len, lu) || strcmp(lu, entry->receipt_u) != 0)
            return WR_EPROTO;
        if (!sha && !(sha = wr_crypto_sha256_new()))
            return WR_ENOMEM;
        wr_err_t err = wr_tlog_leaf_hash(sha, leaf->str, leaf->len, entry->receipt_leaf_hash);
        if (err != WR_OK)
            return err;
    }
    entry->has_receipt = true;
    entry->receipt_index = (uint64_t)a->receipt_index;
    return WR_OK;
}

/* The group part of a (B_GROUP: lib_entry.lua entry_group_part) into
 * entry: the line (its group's name from the answer's config), its
 * admissions of the last 60 s, the first group with people waiting. */
static wr_err_t decode_group(const struct ans *a, wr_entry_t *entry)
{
    if (!a->group)
        return WR_OK;
    long long line = a->group[WR_ROW(B_GROUP, LINE)]->integer;
    long long first = a->group[WR_ROW(B_GROUP, FIRST_WAITING)]->integer;
    size_t ng = entry->config->n_groups;
    if (line < 0 || (size_t)line > ng || first < 0 || (size_t)first > ng)
        return WR_EPROTO;
    entry->group_line = (uint32_t)line;
    snprintf(entry->group, sizeof entry->group, "%s",
             line > 0 ? entry->config->groups[line - 1] : "");
    entry->group_admitted_60s = u64(a->group[WR_ROW(B_GROUP, ADMITTED_60S)]);
    entry->group_first_waiting = (uint32_t)first;
    return WR_OK;
}

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
    entry->added = false;
    entry->passed_ahead = -1;
    entry->passed_scan = 0;
    entry->stock_left = a->stock_left >= 0 ? a->stock_left : -1;
    if (a->kind == WR_ROW_VALUE(K_ENTRY, NO_QUEUE)) {
        err = WR_ENOTFOUND;
        goto out;
    }
    err = resolve(ctx, version, json, &entry->config);
    if (err == WR_OK)
        err = decode_receipt(a, entry);
    if (err == WR_OK)
        err = decode_group(a, entry);
    if (err != WR_OK)
        goto out;
    err = WR_EPROTO;
    switch (a->kind) {
    case WR_ROW_VALUE(K_ENTRY, WAITING):
        if (a->position < 1 || a->waiting < a->position)
            goto out;
        entry->state = WR_ENTRY_WAITING;
        entry->position = (uint64_t)a->position;
        entry->waiting = (uint64_t)a->waiting;
        entry->subscribed = a->subscribed == 1;
        if (a->head_due >= 0 && a->own_due >= 0) {
            entry->head_due_us = a->head_due;
            entry->own_due_us = a->own_due;
            entry->added = true;
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
    case WR_ROW_VALUE(K_ENTRY, ADMITTED):
        if (!a->jti || a->jti->len == 0 || a->jti->len > WR_JTI_LEN)
            goto out;
        entry->state = WR_ENTRY_ADMITTED;
        memcpy(entry->jti, a->jti->str, a->jti->len);
        entry->jti[a->jti->len] = '\0';
        entry->issued_at_us = a->iat;
        entry->expires_at_us = a->exp;
        err = WR_OK;
        break;
    case WR_ROW_VALUE(K_ENTRY, PASSTHROUGH):
        entry->state = WR_ENTRY_PASSTHROUGH;
        err = WR_OK;
        break;
    case WR_ROW_VALUE(K_ENTRY, PREQUEUE_NEW): /* a join that added the user */
    case WR_ROW_VALUE(K_ENTRY, PREQUEUE):
        entry->state = WR_ENTRY_PREQUEUE;
        entry->added = a->kind == WR_ROW_VALUE(K_ENTRY, PREQUEUE_NEW);
        err = WR_OK;
        break;
    case WR_ROW_VALUE(K_ENTRY, HELD): /* position 1, out of the line's count */
        if (a->position != 1 || a->waiting < 0)
            goto out;
        entry->state = WR_ENTRY_WAITING;
        entry->held = true;
        entry->subscribed = a->subscribed == 1;
        entry->position = 1;
        entry->waiting = (uint64_t)a->waiting;
        err = WR_OK;
        break;
    case WR_ROW_VALUE(K_ENTRY, CLOSED): /* the end of a sale: position says why */
        if (a->position != 1 && a->position != 2)
            goto out;
        entry->state = WR_ENTRY_CLOSED;
        entry->closed_reason = a->position == 2 ? WR_CLOSE_SOLD_OUT : WR_CLOSE_CLOSED;
        err = WR_OK;
        break;
    case WR_ROW_VALUE(K_ENTRY, FULL):
        entry->waiting = a->waiting < 0 ? 0 : (uint64_t)a->waiting;
        err = WR_EFULL;
        break;
    case WR_ROW_VALUE(K_ENTRY, NOT_IN_QUEUE):
        err = WR_ENOTINQUEUE;
        break;
    case WR_ROW_VALUE(K_ENTRY, CODE): /* a presale code that buys nothing: why */
        if (a->position < WR_CODE_UNKNOWN || a->position > WR_CODE_EXPIRED)
            goto out;
        entry->code_reason = (wr_code_reason_t)a->position;
        err = WR_ECODE;
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
    redisReply *const *e = ROWS(rep, R_ENTRY, entry);
    if (!e)
        return WR_EPROTO;
    struct ans a = {.kind = e[WR_ROW(R_ENTRY, KIND)]->integer,
                    .position = e[WR_ROW(R_ENTRY, POSITION)]->integer,
                    .waiting = e[WR_ROW(R_ENTRY, WAITING)]->integer,
                    .jti = e[WR_ROW(R_ENTRY, JTI)],
                    .iat = e[WR_ROW(R_ENTRY, IAT_US)]->integer,
                    .exp = e[WR_ROW(R_ENTRY, EXP_US)]->integer,
                    .head_due = e[WR_ROW(R_ENTRY, HEAD_DUE_US)]->integer,
                    .own_due = e[WR_ROW(R_ENTRY, OWN_DUE_US)]->integer,
                    .stock_left = e[WR_ROW(R_ENTRY, STOCK_LEFT)]->integer,
                    .passed = e[WR_ROW(R_ENTRY, PASSED)]->integer,
                    .receipt_index = e[WR_ROW(R_ENTRY, RECEIPT_INDEX)]->integer,
                    .receipt_u = e[WR_ROW(R_ENTRY, RECEIPT_U)],
                    .receipt_hash = e[WR_ROW(R_ENTRY, RECEIPT_HASH)],
                    .receipt_leaf = e[WR_ROW(R_ENTRY, RECEIPT_LEAF)],
                    .subscribed = e[WR_ROW(R_ENTRY, SUBSCRIBED)]->integer};
    /* the group part: B_GROUP's elements in a row (GROUP_KIND its KIND) */
    _Static_assert(WR_ROW(R_ENTRY, GROUP_LINE) - WR_ROW(R_ENTRY, GROUP_KIND) ==
                           WR_ROW(B_GROUP, LINE) - WR_ROW(B_GROUP, KIND) &&
                       WR_ROW(R_ENTRY, GROUP_ADMITTED_60S) - WR_ROW(R_ENTRY, GROUP_KIND) ==
                           WR_ROW(B_GROUP, ADMITTED_60S) - WR_ROW(B_GROUP, KIND) &&
                       WR_ROW(R_ENTRY, GROUP_FIRST_WAITING) - WR_ROW(R_ENTRY, GROUP_KIND) ==
                           WR_ROW(B_GROUP, FIRST_WAITING) - WR_ROW(B_GROUP, KIND),
                   "R_ENTRY's GROUP_* rows are B_GROUP's, in its order");
    long long gk = e[WR_ROW(R_ENTRY, GROUP_KIND)]->integer;
    if (gk == WR_ROW_VALUE(K_ENTRY, GROUP))
        a.group = e + WR_ROW(R_ENTRY, GROUP_KIND) - WR_ROW(B_GROUP, KIND);
    else if (gk != 0)
        return WR_EPROTO;
    return decode_entry(&a, e[WR_ROW(R_ENTRY, VERSION)]->integer, e[WR_ROW(R_ENTRY, JSON)], resolve,
                        ctx, entry);
}

/* The part of table t (its first element: kind) at element *at of rep, if
 * one starts there: *part its elements and *at moved past it; *part NULL
 * when the element there is not kind. False when it starts but is cut off
 * or of the wrong shape. */
static bool optional_part(const redisReply *rep, size_t *at, long long kind, wr_script_row_t t,
                          redisReply *const **part)
{
    *part = NULL;
    const redisReply *k = *at < rep->elements ? rep->element[*at] : NULL;
    if (!is_int(k) || k->integer != kind)
        return true;
    size_t n = wr_script_rows_len(t);
    if (rep->elements - *at < n || !wr_script_rows_match(rep->element + *at, n, t, NULL, 0))
        return false;
    *part = rep->element + *at;
    *at += n;
    return true;
}

/* Reads the answer at element *at of rep into *a (a->kind = 0 for an
 * error reply) and moves *at past it. False when it is cut off or of the
 * wrong shape. */
static bool batch_answer(const redisReply *rep, size_t *at, struct ans *a)
{
    memset(a, 0, sizeof *a);
    a->receipt_index = -1;
    const redisReply *k = *at < rep->elements ? rep->element[*at] : NULL;
    if (k && k->type == REDIS_REPLY_ERROR) {
        (*at)++;
        return true;
    }
    wr_script_row_t t;
    if (!is_int(k) || !wr_script_rows_batch_table(k->integer, &t))
        return false;
    size_t n = wr_script_rows_len(t);
    if (rep->elements - *at < n || !wr_script_rows_match(rep->element + *at, n, t, NULL, 0))
        return false;
    redisReply *const *e = rep->element + *at;
    a->kind = k->integer;
    if (t == WR_ROWS_TABLE(B_WAITING)) {
        a->position = e[WR_ROW(B_WAITING, POSITION)]->integer;
        a->waiting = e[WR_ROW(B_WAITING, WAITING)]->integer;
        a->head_due = e[WR_ROW(B_WAITING, HEAD_DUE_US)]->integer;
        a->own_due = e[WR_ROW(B_WAITING, OWN_DUE_US)]->integer;
        a->passed = e[WR_ROW(B_WAITING, PASSED)]->integer;
        a->subscribed = e[WR_ROW(B_WAITING, SUBSCRIBED)]->integer;
    } else if (t == WR_ROWS_TABLE(B_ADMITTED)) {
        a->jti = e[WR_ROW(B_ADMITTED, JTI)];
        a->iat = e[WR_ROW(B_ADMITTED, IAT_US)]->integer;
        a->exp = e[WR_ROW(B_ADMITTED, EXP_US)]->integer;
    } else if (t == WR_ROWS_TABLE(B_COUNT)) {
        a->position = a->kind == WR_ROW_VALUE(K_ENTRY, HELD) ? 1 : 0;
        a->waiting = e[WR_ROW(B_COUNT, WAITING)]->integer;
        a->subscribed = e[WR_ROW(B_COUNT, SUBSCRIBED)]->integer;
    } else if (t == WR_ROWS_TABLE(B_CLOSED)) {
        a->position = e[WR_ROW(B_CLOSED, WHY)]->integer;
    } else if (t == WR_ROWS_TABLE(B_RECEIPT) || t == WR_ROWS_TABLE(B_GROUP)) {
        return false; /* a receipt or group part after no answer */
    }
    *at += n;
    /* the priority groups' part, then the public log's receipt, each right
     * after the answer when it has one */
    redisReply *const *g, *const *re;
    if (!optional_part(rep, at, WR_ROW_VALUE(K_ENTRY, GROUP), WR_ROWS_TABLE(B_GROUP), &g) ||
        !optional_part(rep, at, WR_ROW_VALUE(K_ENTRY, RECEIPT), WR_ROWS_TABLE(B_RECEIPT), &re))
        return false;
    a->group = g;
    if (re) {
        a->receipt_index = re[WR_ROW(B_RECEIPT, INDEX)]->integer;
        a->receipt_u = re[WR_ROW(B_RECEIPT, U)];
        a->receipt_hash = re[WR_ROW(B_RECEIPT, HASH)];
        a->receipt_leaf = re[WR_ROW(B_RECEIPT, LEAF)];
        if (a->receipt_index < 0)
            return false;
    }
    return true;
}

wr_err_t wr_script_reply_batch_begin(wr_script_reply_batch_t *it, const redisReply *rep, size_t n)
{
    size_t at = WR_ROWS_LEN(R_ENTRY_BATCH); /* the header, then the answers */
    it->rep = NULL;
    it->at = at;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < at ||
        !wr_script_rows_match(rep->element, at, WR_ROWS_TABLE(R_ENTRY_BATCH), NULL, 0))
        return WR_EPROTO;
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
    redisReply *const *h = rep->element;
    a.stock_left = h[WR_ROW(R_ENTRY_BATCH, STOCK_LEFT)]->integer;
    return decode_entry(&a, h[WR_ROW(R_ENTRY_BATCH, VERSION)]->integer,
                        h[WR_ROW(R_ENTRY_BATCH, JSON)], resolve, ctx, entry);
}

/* Unpacks the elements of a - (user, pass expiry us, packed subscription)
 * triples (with_exp), else (user, packed subscription) pairs - into
 * p[at..], their subscriptions into subs[at..], as closing (NONE: an
 * admission); an element of the wrong shape is skipped. Returns the next
 * free index. */
static size_t unpack_pushes(const redisReply *a, bool with_exp, wr_close_reason_t closing,
                            wr_store_push_t *p, wr_pushsub_t *subs, size_t at)
{
    size_t step = with_exp ? 3 : 2;
    for (size_t i = 0; i + step <= a->elements; i += step) {
        const redisReply *u = a->element[i], *v = a->element[i + step - 1];
        const redisReply *exp = with_exp ? a->element[i + 1] : NULL;
        if (!is_str(u) || !wr_ids_valid_user(u->str) || strlen(u->str) != u->len || !is_str(v) ||
            (exp && !is_int(exp)) || wr_pushsub_unpack(v->str, v->len, &subs[at]) != WR_OK)
            continue; /* (claimed: never sent, as a push that failed) */
        p[at] = (wr_store_push_t){.user = u->str,
                                  .sub = &subs[at],
                                  .expires_at_us = exp ? exp->integer : 0,
                                  .closing = closing};
        at++;
    }
    return at;
}

/* admit.lua's Web Push part (PUSHES; CLOSING with CLOSING_PUSHES) into
 * res->pushes: one malloc'd block, the pushes then their subscriptions,
 * which the caller frees after use (users point into the reply). Out of
 * memory: none reported. */
static void admit_pushes(redisReply *const *e, wr_admit_t *res)
{
    const redisReply *adm = e[WR_ROW(R_ADMIT, PUSHES)], *cl = e[WR_ROW(R_ADMIT, CLOSING_PUSHES)];
    long long why = e[WR_ROW(R_ADMIT, CLOSING)]->integer;
    bool closing = why == 1 || why == 2;
    size_t n = adm->elements / 3 + (closing ? cl->elements / 2 : 0);
    if (n == 0)
        return;
    wr_store_push_t *p = malloc(n * (sizeof *p + sizeof(wr_pushsub_t)));
    if (!p)
        return;
    wr_pushsub_t *subs = (wr_pushsub_t *)(p + n);
    size_t at = unpack_pushes(adm, true, WR_CLOSE_NONE, p, subs, 0);
    if (closing)
        at = unpack_pushes(cl, false, why == 2 ? WR_CLOSE_SOLD_OUT : WR_CLOSE_CLOSED, p, subs, at);
    res->pushes = p;
    res->n_pushes = at;
}

wr_err_t wr_script_reply_admit(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                               wr_admit_t *res)
{
    redisReply *const *e = ROWS(rep, R_ADMIT, res);
    wr_err_t err =
        e ? CODE_CONFIG(e, R_ADMIT, e[WR_ROW(R_ADMIT, ADMITTED)]->integer < 0, &res->config)
          : WR_EPROTO;
    if (err != WR_OK)
        return err;
    res->admitted = u64(e[WR_ROW(R_ADMIT, ADMITTED)]);
    res->now_us = e[WR_ROW(R_ADMIT, NOW_US)]->integer;
    FILL_STATS(&res->stats, e, R_ADMIT);
    if (!fill_lines(&res->stats, e[WR_ROW(R_ADMIT, LINES)], res->config))
        return WR_EPROTO;
    res->opening_moved = u64(e[WR_ROW(R_ADMIT, OPEN_MOVED)]);
    res->opening_left = u64(e[WR_ROW(R_ADMIT, OPEN_LEFT)]);
    /* The waits of the users admitted by this call: malloc'd, the caller
     * frees. Out of memory: none reported. */
    const redisReply *wa = e[WR_ROW(R_ADMIT, WAITS)];
    size_t nw = wa->elements;
    int64_t *waits = NULL;
    if (nw > 0 && nw == res->admitted && (waits = malloc(nw * sizeof *waits)) != NULL) {
        for (size_t i = 0; i < nw; i++) {
            const redisReply *w = wa->element[i];
            waits[i] = is_int(w) && w->integer > 0 ? w->integer : 0;
        }
        res->waited_us = waits;
        res->n_waited = nw;
    }
    admit_pushes(e, res);
    return WR_OK;
}

wr_err_t wr_script_reply_token(const redisReply *rep, wr_token_check_t *res)
{
    res->passthrough = false;
    res->reason = WR_TOKEN_OK;
    res->session_us = -1;
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 && is_int(rep->element[0]) &&
        is_int(rep->element[1]) && rep->element[0]->integer == 0) { /* release.lua: {0, us} */
        res->session_us = rep->element[1]->integer >= 0 ? rep->element[1]->integer : -1;
        return WR_OK;
    }
    /* The refusals, codes -2, -3, -4. */
    static const wr_token_reason_t refused[] = {WR_TOKEN_CONSUMED, WR_TOKEN_EXPIRED,
                                                WR_TOKEN_NO_SESSION};
    if (!is_int(rep))
        return WR_EPROTO;
    long long code = rep->integer;
    if (code == 0)
        return WR_OK;
    if (code == WR_ROW_VALUE(K_ENTRY, WAITING)) {
        res->passthrough = true;
        return WR_OK;
    }
    if (code == -1)
        return WR_ENOTFOUND;
    if (code > -2 || code < -4)
        return WR_EPROTO;
    res->reason = refused[-2 - code];
    return WR_ETOKEN;
}

wr_err_t wr_script_reply_get(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                             wr_queue_info_t *info)
{
    redisReply *const *e = ROWS(rep, R_QUEUE_GET, info);
    wr_err_t err = e ? CODE_CONFIG(e, R_QUEUE_GET, false, &info->config) : WR_EPROTO;
    if (err != WR_OK)
        return err;
    FILL_STATS(&info->stats, e, R_QUEUE_GET);
    info->stats.log_committed = e[WR_ROW(R_QUEUE_GET, LOG_COMMITTED)]->integer == 1;
    if (!fill_lines(&info->stats, e[WR_ROW(R_QUEUE_GET, LINES)], info->config))
        return WR_EPROTO;
    /* autotune's kept rate, '%.17g' */
    double d = reply_double(e[WR_ROW(R_QUEUE_GET, AUTO_RATE)]);
    info->stats.autotune_rate = d > 0 && d <= WR_AUTOTUNE_RATE_MAX ? d : 0;
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
    if (is_int(rep) && rep->integer == -5)
        return WR_EGROUP;
    return is_int(rep) && rep->integer > 0 ? WR_OK : WR_EPROTO;
}

wr_err_t wr_script_reply_codes(const redisReply *rep, wr_store_codes_t *res)
{
    redisReply *const *e = ROWS(rep, R_CODES, res);
    if (!e)
        return WR_EPROTO;
    static const wr_err_t by_code[] = {WR_OK, WR_ENOTFOUND, WR_EINVAL, WR_EINVAL, WR_ECODE};
    long long code = e[WR_ROW(R_CODES, CODE)]->integer;
    const redisReply *c = e[WR_ROW(R_CODES, COUNTS)];
    if (code > 0 || code < -4 || c->elements % 4 != 0 || c->elements / 4 > WR_GROUPS_MAX)
        return WR_EPROTO;
    for (size_t i = 0; i < c->elements; i += 4) {
        const redisReply *name = c->element[i];
        if (!is_str(name) || !wr_groups_name_ok(name->str, name->len) ||
            !is_int(c->element[i + 1]) || !is_int(c->element[i + 2]) || !is_int(c->element[i + 3]))
            return WR_EPROTO;
        size_t g = res->n++;
        snprintf(res->groups[g].name, sizeof res->groups[g].name, "%.*s", (int)name->len,
                 name->str);
        res->groups[g].issued = u64(c->element[i + 1]);
        res->groups[g].uses_spent = u64(c->element[i + 2]);
        res->groups[g].revoked = u64(c->element[i + 3]);
    }
    return by_code[-code];
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

wr_err_t wr_script_reply_autotune(const redisReply *rep, wr_autotune_state_rec_t *res)
{
    redisReply *const *e = ROWS(rep, R_AUTOTUNE, res);
    if (!e)
        return WR_EPROTO;
    if (reply_double(e[WR_ROW(R_AUTOTUNE, CODE)]) != 0)
        return WR_ENOTFOUND;
    res->rate = reply_double(e[WR_ROW(R_AUTOTUNE, RATE)]);
    res->step_us = (int64_t)reply_double(e[WR_ROW(R_AUTOTUNE, STEP)]);
    res->cut_latency_ms = reply_double(e[WR_ROW(R_AUTOTUNE, CUT)]);
    static const size_t rep_at[WR_AUTOTUNE_SOURCES][3] = {
        {WR_ROW(R_AUTOTUNE, LAT0), WR_ROW(R_AUTOTUNE, ERR0), WR_ROW(R_AUTOTUNE, AT0)},
        {WR_ROW(R_AUTOTUNE, LAT1), WR_ROW(R_AUTOTUNE, ERR1), WR_ROW(R_AUTOTUNE, AT1)},
    };
    for (int i = 0; i < WR_AUTOTUNE_SOURCES; i++) {
        res->reports[i].latency_ms = reply_double(e[rep_at[i][0]]);
        res->reports[i].error_rate = reply_double(e[rep_at[i][1]]);
        res->reports[i].at_us = (int64_t)reply_double(e[rep_at[i][2]]);
    }
    res->now_us = (int64_t)reply_double(e[WR_ROW(R_AUTOTUNE, NOW)]);
    res->applied = reply_double(e[WR_ROW(R_AUTOTUNE, APPLIED)]) == 1;
    return WR_OK;
}
