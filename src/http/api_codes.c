/*
 * api_codes.c - presale codes at the join (docs/API.md 1.3, "Priority
 * groups and presale codes"; api_gates.h).
 *
 * A code buys a place in a priority group. This version keeps no codes
 * and serves no groups (a `groups` other than null is refused: "not
 * available yet"), so no code can be valid: a person who brings one gets
 * 403 CODE_INVALID reason unknown - unless they already have a place, a
 * held turn or a pass, whom the contract answers normally whatever code
 * they send. Whether they do is one status read, the same read the
 * challenge gate makes for a refused solution; nothing is written, so a
 * refused code changes nothing. The code's value is never logged (the
 * access log names the route, not the URL or body).
 *
 * When the stores keep codes, the check moves into the store's join (one
 * atomic step: the verdict, the place and one use spent), and this gate
 * only reads the body's code for it.
 */
#include <event2/http.h>
#include <stdio.h>

#include "base/clock.h"
#include "core/groups.h"
#include "http/api_gates.h"

/* The join body's "code": 0 none (no body, not an object, no member, or
 * null), 1 a string, -1 any other type. */
static int join_code(wr_http_req_t *req)
{
    json_t *body = NULL;
    if (!wr_api__join_body(req, &body))
        return 0;
    const json_t *v = json_is_object(body) ? json_object_get(body, "code") : NULL;
    int k = !v || json_is_null(v) ? 0 : json_is_string(v) ? 1 : -1;
    json_decref(body);
    return k;
}

/* The store's word on a person who brought a code (wr_api__code_gate). */
static void code_status_cb(wr_err_t err, const wr_entry_t *e, void *arg)
{
    wr_api__ctx_t *c = arg;
    if (err != WR_ENOTINQUEUE) {
        c->code_next(err, e, c); /* their place, or the store's error as a join meets it */
        return;
    }
    wr_api__observe(c, err);
    wr_api__reply_error(c->api, c->req, c->route, 403, "CODE_INVALID",
                        "the code is not valid for this queue", NULL,
                        wr_groups_code_reason_name(WR_CODE_UNKNOWN), 0);
    wr_api__ctx_free(c);
}

bool wr_api__code_gate(wr_api__ctx_t *c, wr_store_entry_cb entry)
{
    if (c->route != WR_ROUTE_JOIN || c->code_checked)
        return false;
    c->code_checked = true;
    int k = join_code(c->req);
    if (k == 0)
        return false;
    if (k < 0) {
        wr_api__reply_error(c->api, c->req, c->route, 400, "BAD_REQUEST",
                            "the join's code must be a string", "code", NULL, 0);
        wr_api__ctx_free(c);
        return true;
    }
    c->code_next = entry;
    c->op = "status";
    c->t0_us = wr_clock_wall_us();
    c->seen_us = wr_clock_mono_us();
    wr_err_t err = wr_store_status(c->api->store, c->queue, c->user, code_status_cb, c);
    if (err != WR_OK)
        entry(err, NULL, c);
    return true;
}
