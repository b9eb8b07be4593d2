/*
 * invite.c - invites: verification and signing. (The visitor cookie of
 * an invited account, cookie mode, is identity.c's account form.)
 *
 * An invite is a JWT of the entry tokens' shape (token.c does the JWT
 * work: wr_token_verify_jws checks the structure, alg == HS256 and the MAC
 * in constant time before any claim is read; wr_token_sign_json signs), but
 * under the queue's own inviteKey and with claims the shop writes: only
 * sub, aud and exp are required, so a shop can issue invites from any JWT
 * library. We sign iss "waitroom-invite" (never "waitroom", so an invite
 * can never pass for an entry token even under a shared key).
 *
 * The reasons follow docs/API.md: anything that is not a well-formed
 * HS256 JWT with sub, aud and exp is "malformed"; a MAC that does not
 * verify is "signature"; then "expired", "notYetValid" (an nbf claim, RFC
 * 7519 4.1.5, still in the future; like exp, without leeway: the shop's
 * clock and ours are both NTP's) and "wrongQueue". A grp claim (the
 * priority group, API 1.3) that cannot name a group is "malformed"; one
 * the queue does not have is refused the same way by the api. "wrongUser" is
 * the api's (header identity mode): verification here does not know who
 * asks.
 *
 * No allocation beyond the jansson values of one call; no global state.
 */
#include "core/invite.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/names.h"
#include "base/ids.h"
#include "core/token.h"

static const char *const reason_names[] = {
    [WR_INVITE_OK] = "ok",
    [WR_INVITE_MISSING] = "missing",
    [WR_INVITE_MALFORMED] = "malformed",
    [WR_INVITE_SIGNATURE] = "signature",
    [WR_INVITE_EXPIRED] = "expired",
    [WR_INVITE_WRONG_QUEUE] = "wrongQueue",
    [WR_INVITE_WRONG_USER] = "wrongUser",
    [WR_INVITE_NOT_YET] = "notYetValid",
};

const char *wr_invite_reason_name(wr_invite_reason_t r)
{
    return WR_NAMES_GET(reason_names, r, "unknown");
}

/* aud is the queue: a string equal to it, or an array holding it. */
static bool aud_names(const json_t *aud, const char *queue)
{
    if (json_is_string(aud))
        return strcmp(json_string_value(aud), queue) == 0 &&
               json_string_length(aud) == strlen(queue);
    size_t i;
    const json_t *v;
    json_array_foreach(aud, i, v)
    {
        if (json_is_string(v) && json_string_length(v) == strlen(queue) &&
            strcmp(json_string_value(v), queue) == 0)
            return true;
    }
    return false;
}

/* aud is a string or a non-empty array of strings. */
static bool aud_typed(const json_t *aud)
{
    if (json_is_string(aud))
        return true;
    if (!json_is_array(aud) || json_array_size(aud) == 0)
        return false;
    size_t i;
    const json_t *v;
    json_array_foreach(aud, i, v)
    {
        if (!json_is_string(v))
            return false;
    }
    return true;
}

wr_invite_reason_t wr_invite_verify(const char *invite, size_t len, const uint8_t *key,
                                    size_t key_len, const char *queue, int64_t now_s,
                                    char sub[WR_USER_ID_MAX + 1], char grp[WR_GROUP_NAME_MAX + 1])
{
    if (grp)
        grp[0] = '\0';
    if (!invite || len == 0)
        return WR_INVITE_MISSING;
    if (!key || key_len == 0 || !queue)
        return WR_INVITE_SIGNATURE;
    wr_token_key_t k = {key, key_len, ""};
    if (wr_token_kid(key, key_len, k.kid) != WR_OK)
        return WR_INVITE_SIGNATURE;
    json_t *p = NULL;
    wr_token_reason_t tr = wr_token_verify_jws(invite, len, &k, 1, &p);
    if (tr == WR_TOKEN_MISSING)
        return WR_INVITE_MISSING;
    if (tr == WR_TOKEN_BAD_SIGNATURE)
        return WR_INVITE_SIGNATURE;
    if (tr != WR_TOKEN_OK)
        return WR_INVITE_MALFORMED; /* not a JWT, alg not HS256, crit */

    wr_invite_reason_t r = WR_INVITE_MALFORMED;
    const json_t *s = json_object_get(p, "sub");
    const json_t *aud = json_object_get(p, "aud");
    const json_t *exp = json_object_get(p, "exp");
    const json_t *nbf = json_object_get(p, "nbf");
    const json_t *g = json_object_get(p, "grp");
    if (g &&
        (!json_is_string(g) || !wr_groups_name_ok(json_string_value(g), json_string_length(g))))
        goto out;
    if (!json_is_string(s) || json_string_length(s) != strlen(json_string_value(s)) ||
        !wr_ids_valid_user(json_string_value(s)) || !aud_typed(aud) || !json_is_number(exp) ||
        (nbf && !json_is_number(nbf)))
        goto out;
    if (json_number_value(exp) <= (double)now_s) {
        r = WR_INVITE_EXPIRED;
        goto out;
    }
    if (nbf && json_number_value(nbf) > (double)now_s) {
        r = WR_INVITE_NOT_YET;
        goto out;
    }
    if (!aud_names(aud, queue)) {
        r = WR_INVITE_WRONG_QUEUE;
        goto out;
    }
    if (sub)
        snprintf(sub, WR_USER_ID_MAX + 1, "%s", json_string_value(s));
    if (grp && g)
        snprintf(grp, WR_GROUP_NAME_MAX + 1, "%s", json_string_value(g));
    r = WR_INVITE_OK;
out:
    json_decref(p);
    return r;
}

wr_err_t wr_invite_sign(const uint8_t *key, size_t key_len, const char *queue, const char *user,
                        const char *grp, int64_t iat, int64_t exp, char *out, size_t cap)
{
    if (!key || key_len < WR_INVITE_KEY_MIN || key_len > WR_INVITE_KEY_MAX || !out ||
        !wr_ids_valid_queue(queue) || !wr_ids_valid_user(user) || exp <= iat ||
        (grp && !wr_groups_name_ok(grp, strlen(grp))))
        return WR_EINVAL;
    json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I}", "iss", "waitroom-invite", "aud", queue, "sub",
                          user, "iat", (json_int_t)iat, "exp", (json_int_t)exp);
    if (o && grp && json_object_set_new(o, "grp", json_string(grp)) != 0) {
        json_decref(o);
        o = NULL;
    }
    if (!o)
        return WR_ENOMEM;
    char json[WR_TOKEN_MAX];
    size_t n = json_dumpb(o, json, sizeof json, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (n == 0 || n > sizeof json)
        return WR_ELIMIT;
    return wr_token_sign_json(json, n, key, key_len, out, cap);
}
