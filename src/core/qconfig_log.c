/*
 * qconfig_log.c - the hooks of the queue config's `draw` row (docs/API.md
 * 1.3, "The opening draw, fixed in public"): null, or
 * {"beaconUrl": "https://...", "round": R}, a drand-compatible beacon
 * (GET {beaconUrl}/public/{R}) and the round the operator names in
 * advance. The URL follows the CAPTCHA verify URL's rule (captcha.h
 * wr_captcha_url_parse): https://, or http:// to a loopback host only.
 * The rule across state (fixed once the commit is logged) is the admin
 * API's, which sees the store.
 */
#include <stdio.h>
#include <string.h>

#include "core/captcha.h"
#include "core/qconfig_internal.h"

#define ROUND_MAX INT64_C(9007199254740991) /* 2^53 - 1: exact in every JSON reader */

wr_err_t wr_qconfig__parse_draw(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"beaconUrl", "round"};
    if (json_is_null(v)) {
        memset(&c->draw, 0, sizeof c->draw);
        return WR_OK;
    }
    if (!json_is_object(v))
        return wr_field_einval(e, "draw", "must be null or an object {beaconUrl, round}");
    wr_err_t err = wr_qconfig__reject_unknown(e, v, "draw.", keys, 2);
    if (err)
        return err;
    const json_t *x = json_object_get(v, "beaconUrl");
    const char *u = json_string_value(x);
    size_t len = u ? json_string_length(x) : 0;
    wr_captcha_url_t parts;
    if (!u || len == 0 || len > WR_DRAW_URL_MAX || memchr(u, '\0', len) ||
        !wr_captcha_url_parse(u, &parts))
        return wr_field_einval(e, "draw.beaconUrl",
                               "is required: an https:// URL (http:// only to a loopback host: "
                               "127.0.0.1, [::1], localhost) of at most %d characters",
                               WR_DRAW_URL_MAX);
    long long round = 0;
    x = json_object_get(v, "round");
    if (!x)
        return wr_field_einval(e, "draw.round", "is required (integer from 1 to 2^53 - 1)");
    if ((err = wr_qconfig__get_int(e, x, "draw.round", 1, ROUND_MAX, &round)))
        return err;
    memset(&c->draw, 0, sizeof c->draw);
    c->draw.set = true;
    memcpy(c->draw.beacon_url, u, len);
    c->draw.round = (uint64_t)round;
    return WR_OK;
}

bool wr_qconfig__render_draw(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    if (!c->draw.set) {
        *out = json_null();
        return *out != NULL;
    }
    bool ok = true;
    json_t *o = json_object();
    if (!o)
        return false;
    wr_qconfig__set(o, "beaconUrl", json_string(c->draw.beacon_url), &ok);
    wr_qconfig__set(o, "round", json_integer((json_int_t)c->draw.round), &ok);
    return wr_qconfig__finish(o, ok, out);
}
