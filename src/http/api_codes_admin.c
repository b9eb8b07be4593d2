/*
 * api_codes_admin.c - the presale codes' admin routes (docs/API.md 1.3,
 * "Priority groups and presale codes", "Codes and report, precisely"):
 *   POST   /v1/admin/queues/{queue}/codes         issue codes of a group
 *   GET    /v1/admin/queues/{queue}/codes         per group: issued, spent, revoked
 *   DELETE /v1/admin/queues/{queue}/codes/{code}  revoke one
 * Part of the api module (api_internal.h); the admin key was checked in
 * api.c's dispatch. The joins that use codes are api_codes.c's.
 *
 * Issuing: the body is checked first (400 BAD_REQUEST naming the field),
 * then count codes are drawn (wr_groups_code_new: 100 random bits each),
 * each hashed (wr_groups_code_hash), and the hashes go to the store in one
 * codes call (CREATE). The codes themselves exist only in this answer,
 * 201 {"codes":[...]} - never kept, never logged (the access log names
 * the route, not the path or the body). At most WR_CODES_COUNT_MAX codes:
 * the answer (about 26 bytes a code, 2.6 MB at most) is written by hand
 * into one buffer sized for it, and the hashes (65 bytes a code) live in
 * one allocation until the store answers.
 *
 * A store without groups (wr_store_has_groups false: a store that keeps no
 * priority groups; both stores keep them today) keeps no codes: the queue
 * is read (404 QUEUE_NOT_FOUND), then GET answers {"groups":{}}, POST 400
 * BAD_REQUEST (no such group), DELETE 404 CODE_NOT_FOUND. A store with
 * groups answers for itself: WR_ENOTFOUND (no queue), WR_EINVAL (a group
 * the config does not have: 400), WR_ECODE (DELETE: no such code, 404
 * CODE_NOT_FOUND).
 *
 * Issuing and revoking write an "admin change" line, as the config routes
 * do (api_admin.c): action codes_create (group, count, uses, expiresAt) or
 * codes_revoke (the first 12 hex digits of the code's hash: enough to match
 * it with the code an operator holds, never the code).
 */
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/log.h"
#include "core/groups.h"
#include "http/api_internal.h"
#include "http/api_routes.h"

/* One codes request, from its parsed body to the store's answer. */
typedef struct {
    wr_api__ctx_t *c;
    wr_codes_kind_t kind;
    char group[WR_GROUP_NAME_MAX + 1];         /* CREATE */
    uint32_t count, uses;                      /* CREATE */
    int64_t expires_at_ms;                     /* CREATE: -1 never */
    char (*codes)[WR_CODE_LEN + 1];            /* CREATE: the codes drawn (count) */
    char (*hashes)[WR_CODE_HASH_HEX + 1];      /* CREATE: theirs; REVOKE: hashes[0] */
    char revoke_hash[1][WR_CODE_HASH_HEX + 1]; /* REVOKE: "" = not a code's spelling */
} kctx_t;

static void kctx_free(kctx_t *k)
{
    wr_api__ctx_free(k->c);
    if (k->codes)
        wr_crypto_wipe(k->codes, (size_t)k->count * sizeof(*k->codes));
    free(k->codes);
    free(k->hashes);
    free(k);
}

/* ---------- POST: the body ---------- */

/* An integer member of body in [lo, hi] into *out (absent: 0 when
 * optional, else false). */
static bool int_member(const json_t *body, const char *name, json_int_t lo, json_int_t hi,
                       bool optional, json_int_t *out)
{
    const json_t *v = json_object_get(body, name);
    *out = -1;
    if (!v || (optional && json_is_null(v)))
        return optional;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return false;
    *out = json_integer_value(v);
    return true;
}

#define GROUP_RULE   "group must be a group's name, " WR_GROUP_NAME_RULE
#define COUNT_RULE   "count must be an integer from 1 to 100000"
#define USES_RULE    "uses must be an integer from 1 to 1000000"
#define EXPIRES_RULE "expiresAt must be null or a time to come, epoch milliseconds"

/* The body of POST .../codes into k: {"group","count","uses"[,"expiresAt"]}.
 * Answers 400 BAD_REQUEST naming the field and returns false when it is
 * not one. */
static bool read_create(wr_api_t *a, wr_http_req_t *req, wr_route_t route, kctx_t *k)
{
    size_t blen;
    const char *data = wr_http_req_body(req, &blen);
    json_error_t jerr;
    json_t *body = blen ? wr_api__load_body(data, blen, &jerr) : NULL;
    const char *field = NULL, *msg = NULL;
    json_int_t count = 0, uses = 0, exp = -1;
    const char *key;
    json_t *v;
    char big[WR_FIELD_MAX + 1]; /* a number too big for jansson: its field */
    if (!body && blen && wr_api__body_number_field(data, blen, &jerr, big, sizeof big)) {
        field = big;
        msg = strcmp(big, "count") == 0       ? COUNT_RULE
              : strcmp(big, "uses") == 0      ? USES_RULE
              : strcmp(big, "expiresAt") == 0 ? EXPIRES_RULE
              : strcmp(big, "group") == 0     ? GROUP_RULE
                                              : "unknown field";
        goto out;
    }
    if (!json_is_object(body)) {
        msg = "the body must be a JSON object {\"group\",\"count\",\"uses\"[,\"expiresAt\"]}";
        goto out;
    }
    json_object_foreach(body, key, v)
    {
        if (strcmp(key, "group") != 0 && strcmp(key, "count") != 0 && strcmp(key, "uses") != 0 &&
            strcmp(key, "expiresAt") != 0) {
            field = key;
            msg = "unknown field";
            goto out;
        }
    }
    v = json_object_get(body, "group");
    if (!json_is_string(v) || !wr_groups_name_ok(json_string_value(v), json_string_length(v))) {
        field = "group";
        msg = GROUP_RULE;
    } else if (!int_member(body, "count", 1, WR_CODES_COUNT_MAX, false, &count)) {
        field = "count";
        msg = COUNT_RULE;
    } else if (!int_member(body, "uses", 1, WR_CODES_USES_MAX, false, &uses)) {
        field = "uses";
        msg = USES_RULE;
    } else if (!int_member(body, "expiresAt", 1, INT64_MAX / 1000, true, &exp) ||
               (exp >= 0 && exp <= wr_clock_wall_us() / 1000)) {
        field = "expiresAt";
        msg = EXPIRES_RULE;
    } else {
        wr_api__copy(k->group, sizeof(k->group), json_string_value(v));
        k->count = (uint32_t)count;
        k->uses = (uint32_t)uses;
        k->expires_at_ms = exp;
    }
out:
    if (msg) /* before the body goes: field may be one of its keys */
        wr_api__reply_error(a, req, route, 400, "BAD_REQUEST", msg, field, NULL, 0);
    json_decref(body);
    return msg == NULL;
}

/* Draws k->count codes and their hashes. WR_OK, WR_ENOMEM, WR_EIO. */
static wr_err_t draw_codes(kctx_t *k)
{
    k->codes = malloc((size_t)k->count * sizeof(*k->codes));
    k->hashes = malloc((size_t)k->count * sizeof(*k->hashes));
    if (!k->codes || !k->hashes)
        return WR_ENOMEM;
    for (uint32_t i = 0; i < k->count; i++) {
        wr_err_t err = wr_groups_code_new(k->codes[i]);
        if (err == WR_OK)
            err = wr_groups_code_hash(k->codes[i], WR_CODE_LEN, k->hashes[i]);
        if (err != WR_OK)
            return err;
    }
    return WR_OK;
}

/* ---------- the answers ---------- */

/* 201 {"codes":[...]}: the codes, written into one buffer (no escaping: a
 * code is [0-9A-Z-]). */
static void reply_created(kctx_t *k)
{
    size_t cap = 16 + (size_t)k->count * (WR_CODE_LEN + 3);
    char *buf = malloc(cap);
    if (!buf) {
        wr_api__reply_oom(k->c->api, k->c->req, k->c->route);
        return;
    }
    size_t n = 0;
    memcpy(buf, "{\"codes\":[", 10);
    n = 10;
    for (uint32_t i = 0; i < k->count; i++) {
        if (i)
            buf[n++] = ',';
        buf[n++] = '"';
        memcpy(buf + n, k->codes[i], WR_CODE_LEN);
        n += WR_CODE_LEN;
        buf[n++] = '"';
    }
    memcpy(buf + n, "]}", 2);
    n += 2;
    wr_api__reply_json(k->c->api, k->c->req, k->c->route, 201, buf, n, 0);
    wr_crypto_wipe(buf, n);
    free(buf);
}

/* 200 {"groups":{"NAME":{"issued","usesSpent","revoked"}}} of res (NULL:
 * no groups). */
static void reply_counts(wr_api__ctx_t *c, const wr_store_codes_t *res)
{
    json_t *g = json_object();
    for (size_t i = 0; g && res && i < res->n && i < WR_GROUPS_MAX; i++)
        json_object_set_new(g, res->groups[i].name,
                            json_pack("{s:I,s:I,s:I}", "issued", (json_int_t)res->groups[i].issued,
                                      "usesSpent", (json_int_t)res->groups[i].uses_spent, "revoked",
                                      (json_int_t)res->groups[i].revoked));
    wr_api__reply_jansson(c->api, c->req, c->route, 200,
                          g ? json_pack("{s:o}", "groups", g) : NULL);
}

static void reply_no_group(wr_api__ctx_t *c)
{
    wr_api__reply_error(c->api, c->req, c->route, 400, "BAD_REQUEST", "the queue has no such group",
                        "group", NULL, 0);
}

static void reply_no_code(wr_api__ctx_t *c)
{
    wr_api__reply_error(c->api, c->req, c->route, 404, "CODE_NOT_FOUND",
                        "no such code in this queue", NULL, NULL, 0);
}

/* ---------- the store ---------- */

/* The audit line of k's change, done (info, "admin change"). */
static void audit_codes(const kctx_t *k)
{
    wr_api__ctx_t *c = k->c;
    char client[64] = "";
    wr_api__client_addr(c->api, c->req, client, sizeof(client));
    if (k->kind == WR_CODES_CREATE) {
        wr_log_field_t f[] = {
            WR_LOG_S("queue", c->queue),
            WR_LOG_S("action", "codes_create"),
            WR_LOG_S("client", client),
            WR_LOG_S("group", k->group),
            WR_LOG_I("count", k->count),
            WR_LOG_I("uses", k->uses),
            WR_LOG_I("expiresAt", k->expires_at_ms),
        };
        wr_log_fields(WR_LOG_INFO, "admin change", f, sizeof(f) / sizeof(f[0]));
    } else {
        char hash12[13];
        snprintf(hash12, sizeof hash12, "%.12s", k->revoke_hash[0]);
        wr_log_field_t f[] = {
            WR_LOG_S("queue", c->queue),
            WR_LOG_S("action", "codes_revoke"),
            WR_LOG_S("client", client),
            WR_LOG_S("codeHash", hash12),
        };
        wr_log_fields(WR_LOG_INFO, "admin change", f, sizeof(f) / sizeof(f[0]));
    }
}

static void codes_cb(wr_err_t err, const wr_store_codes_t *res, void *arg)
{
    kctx_t *k = arg;
    wr_api__ctx_t *c = k->c;
    wr_api__observe(c, err == WR_EINVAL || err == WR_ECODE ? WR_OK : err);
    if (err == WR_OK && k->kind != WR_CODES_LIST)
        audit_codes(k); /* before the reply, while the request is valid */
    if (err == WR_OK && k->kind == WR_CODES_CREATE)
        reply_created(k);
    else if (err == WR_OK && k->kind == WR_CODES_LIST)
        reply_counts(c, res);
    else if (err == WR_OK)
        wr_api__reply_empty(c->api, c->req, c->route, 204);
    else if (err == WR_EINVAL && k->kind == WR_CODES_CREATE)
        reply_no_group(c); /* a group the config does not have (now) */
    else if (err == WR_ECODE)
        reply_no_code(c);
    else
        wr_api__reply_store_error(c, err, WR_API__TELLS_STORE);
    kctx_free(k);
}

/* The store's codes call of k (a store with groups). */
static void codes_call(kctx_t *k)
{
    wr_api__ctx_t *c = k->c;
    wr_store_codes_req_t r = {.kind = k->kind, .expires_at_ms = -1};
    if (k->kind == WR_CODES_CREATE) {
        wr_err_t err = draw_codes(k);
        if (err != WR_OK) {
            wr_api__reply_error(c->api, c->req, c->route, 500, "INTERNAL",
                                err == WR_ENOMEM ? "out of memory" : "could not draw codes", NULL,
                                NULL, 0);
            kctx_free(k);
            return;
        }
        r.group = k->group;
        r.hashes = (const char(*)[WR_CODE_HASH_HEX + 1]) k->hashes;
        r.n = k->count;
        r.uses = k->uses;
        r.expires_at_ms = k->expires_at_ms;
    } else if (k->kind == WR_CODES_REVOKE) {
        r.hashes = (const char(*)[WR_CODE_HASH_HEX + 1]) k->revoke_hash;
        r.n = 1;
    }
    c->op = "codes";
    c->t0_us = wr_clock_wall_us();
    wr_err_t err = wr_store_codes(c->api->store, c->queue, &r, codes_cb, k);
    if (err != WR_OK)
        codes_cb(err, NULL, k);
}

/* A store without groups: the queue read, then what it keeps (nothing). */
static void plain_info_cb(wr_err_t err, const wr_queue_info_t *info, void *arg)
{
    kctx_t *k = arg;
    wr_api__ctx_t *c = k->c;
    wr_api__observe(c, err);
    if (err != WR_OK || !info)
        wr_api__reply_store_error(c, err == WR_OK ? WR_ENOTFOUND : err, WR_API__TELLS_STORE);
    else if (k->kind == WR_CODES_LIST)
        reply_counts(c, NULL);
    else if (k->kind == WR_CODES_CREATE)
        reply_no_group(c);
    else
        reply_no_code(c);
    kctx_free(k);
}

/* The {code} of DELETE (raw path segment, len bytes) as its hash into out;
 * "" when it is no code's spelling. */
static void revoke_hash_of(const char *seg, size_t len, char out[WR_CODE_HASH_HEX + 1])
{
    out[0] = '\0';
    if (len > 3 * WR_CODE_MAX)
        return;
    char raw[3 * WR_CODE_MAX + 1];
    memcpy(raw, seg, len);
    raw[len] = '\0';
    size_t dlen = len;
    bool escaped = memchr(raw, '%', len) != NULL;
    char *dec = escaped ? evhttp_uridecode(raw, 0, &dlen) : raw;
    if (!dec || wr_groups_code_hash(dec, dlen, out) != WR_OK)
        out[0] = '\0';
    if (escaped)
        free(dec);
}

void wr_api__handle_codes(wr_api_t *a, wr_http_req_t *req, const wr_api__call_t *call)
{
    wr_route_t route = call->route;
    kctx_t *k = calloc(1, sizeof(*k));
    if (!k) {
        wr_api__reply_oom(a, req, route);
        return;
    }
    k->kind = route == WR_ROUTE_CODES_CREATE   ? WR_CODES_CREATE
              : route == WR_ROUTE_CODES_REVOKE ? WR_CODES_REVOKE
                                               : WR_CODES_LIST;
    if (k->kind == WR_CODES_CREATE && !read_create(a, req, route, k)) {
        free(k);
        return;
    }
    if (k->kind == WR_CODES_REVOKE)
        revoke_hash_of(call->param2 ? call->param2 : "", call->param2 ? call->param2_len : 0,
                       k->revoke_hash[0]);
    k->c = wr_api__ctx_new(a, req, route, call->queue);
    if (!k->c) {
        free(k);
        return;
    }
    if (!wr_store_has_groups(a->store) || (k->kind == WR_CODES_REVOKE && !k->revoke_hash[0][0])) {
        /* nothing the store could find: whether the queue exists says 404 which */
        k->c->op = "queue_get";
        wr_err_t err = wr_store_queue_get(a->store, call->queue, plain_info_cb, k);
        if (err != WR_OK)
            plain_info_cb(err, NULL, k);
        return;
    }
    codes_call(k);
}
