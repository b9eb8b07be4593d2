/*
 * api_codes.c - presale codes at the join (docs/API.md 1.3, "Priority
 * groups and presale codes", "Groups, precisely"; api_gates.h). The admin
 * routes that issue and revoke codes are api_codes_admin.c.
 *
 * A code buys a place in a priority group. It comes as the join body's
 * "code" (POST entries) or as ?code= on the queue page. On a store that
 * serves groups (wr_store_has_groups: the embedded store) the gate only
 * reads it: its one spelling's hash (wr_groups_code_hash) goes to the
 * store's join (join_group), which checks the code and spends one use in
 * the same atomic step as the place it buys, or refuses it (WR_ECODE with
 * the reason: 403 CODE_INVALID, nothing changed). An invite's grp wins
 * over a code (the code is not looked at). When the join would spend a
 * solved challenge, the store's verdict on the code is asked first
 * (join_group check_only), so a refused code spends no challenge.
 *
 * A code that is not a code's spelling, or any code on a store without
 * groups (Redis: no queue there has groups, so no code is valid), is
 * unknown - except for a person who already has a place, a held turn or a
 * pass, whom the contract answers normally whatever code they send.
 * Whether they do is one status read (the read the challenge gate makes
 * for a refused solution); nothing is written. The code's value is never
 * logged (the access log names the route, not the URL or body).
 */
#include <event2/http.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "core/groups.h"
#include "http/api_gates.h"

/* A code as read, at most this long (longer: not a code's spelling). */
#define CODE_READ_MAX (4 * WR_CODE_MAX)

/*
 * The join's code into out (cap bytes, NUL-terminated) and *len: POST
 * entries' body member "code", the queue page's ?code=. 0 none (no body,
 * not an object, no member, null; no ?code=), 1 a code (one longer than
 * cap - 1 bytes, or holding a NUL, is given with *len = cap: no code's
 * spelling), -1 a member of another type.
 */
static int join_code(wr_api__ctx_t *c, char *out, size_t cap, size_t *len)
{
    out[0] = '\0';
    *len = 0;
    if (c->route == WR_ROUTE_QUEUE_PAGE) {
        if (wr_api__query_param(c->req, "code", out, cap)) {
            *len = strlen(out);
            return 1;
        }
        if (!wr_api__query_names(wr_http_req_query(c->req), "code"))
            return 0;
        *len = cap; /* named, but empty, too long or with a NUL */
        return 1;
    }
    json_t *body = NULL;
    if (!wr_api__join_body(c->req, &body))
        return 0;
    const json_t *v = json_is_object(body) ? json_object_get(body, "code") : NULL;
    int k = !v || json_is_null(v) ? 0 : json_is_string(v) ? 1 : -1;
    if (k == 1) {
        size_t n = json_string_length(v);
        *len = n < cap && !memchr(json_string_value(v), '\0', n) ? n : cap;
        if (*len < cap)
            memcpy(out, json_string_value(v), n + 1);
    }
    json_decref(body);
    return k;
}

/* The store's word on a person who brought a code no store can take
 * (wr_api__code_gate): their place, else 403 CODE_INVALID unknown. */
static void code_status_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    if (err != WR_ENOTINQUEUE) {
        c->code_next(err, e, c); /* their place, or the store's error as a join meets it */
        return;
    }
    c->code_next(WR_ECODE, NULL, c); /* reason unknown (wr_api__code_reason) */
}

/* The store's verdict on the code before a solved challenge is spent:
 * refused, the 403; else (a place it would buy, someone with a place, or
 * a store that did not answer: the join meets it) the join goes on. */
static void code_verdict_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    if (err == WR_ECODE) {
        c->code_next(err, e, c);
        return;
    }
    wr_api__observe(c, err);
    c->code_go(c);
}

bool wr_api__code_gate(wr_api__ctx_t *c, wr_store_entry_cb entry, void (*go)(wr_api__ctx_t *c))
{
    if (c->route != WR_ROUTE_JOIN && c->route != WR_ROUTE_QUEUE_PAGE)
        return false;
    wr_store_t *store = c->api->store;
    bool groups = wr_store_has_groups(store);
    if (c->code_checked) {
        /* a solved challenge to spend: the verdict first, once */
        if (!c->code_hash[0] || !c->spend_id[0] || c->code_verdict)
            return false;
        c->code_verdict = true;
        c->code_next = entry;
        c->code_go = go;
        c->op = "code_check";
        c->t0_us = wr_clock_wall_us();
        wr_store_join_t j = {
            .page = c->route == WR_ROUTE_QUEUE_PAGE, .code_hash = c->code_hash, .check_only = true};
        if (wr_store_join_group(store, c->queue, c->user, &j, code_verdict_cb, c) != WR_OK)
            return false; /* not even asked: the join meets the store as it is */
        return true;
    }
    c->code_checked = true;
    c->code_hash[0] = '\0';
    char code[CODE_READ_MAX + 1];
    size_t len;
    int k = join_code(c, code, sizeof(code), &len);
    if (k == 0 || (groups && c->group[0])) /* none; or an invite's grp, which wins */
        return false;
    if (k < 0) {
        wr_api__reply_error(c->api, c->req, c->route, 400, "BAD_REQUEST",
                            "the join's code must be a string", "code", NULL, 0);
        wr_api__ctx_free(c);
        return true;
    }
    wr_err_t herr = len < sizeof(code) ? wr_groups_code_hash(code, len, c->code_hash) : WR_EINVAL;
    if (groups && herr == WR_OK)
        return wr_api__code_gate(c, entry, go); /* the store's join checks it */
    c->code_hash[0] = '\0';
    if (herr != WR_OK && herr != WR_EINVAL) {
        wr_api__reply_error(c->api, c->req, c->route, 500, "INTERNAL", "could not read the code",
                            NULL, NULL, 0);
        wr_api__ctx_free(c);
        return true;
    }
    /* not a code's spelling, or no store here keeps codes: unknown, unless
     * the person has a place */
    c->code_next = entry;
    c->op = "status";
    c->t0_us = wr_clock_wall_us();
    c->seen_us = wr_clock_mono_us();
    wr_err_t err = wr_store_status(store, c->queue, c->user, code_status_cb, c);
    if (err != WR_OK)
        entry(err, NULL, c);
    return true;
}
