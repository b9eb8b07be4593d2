/*
 * invite.h - invites of invite-only queues (docs/API.md, "Invite-only
 * queues"): JWTs (HS256) signed with the queue's inviteKey, with
 * aud = the queue, sub = the invited user id and exp. Pure: no I/O, no
 * store; the JWT code is token.h's.
 */
#ifndef WR_INVITE_H
#define WR_INVITE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "core/groups.h"
#include "core/identity.h"
#include "core/qconfig.h"

/* Why an invite was refused; the API's "reason" is wr_invite_reason_name(). */
typedef enum {
    WR_INVITE_OK = 0,
    WR_INVITE_MISSING,     /* "missing": no invite given */
    WR_INVITE_MALFORMED,   /* "malformed": not a JWT, not HS256, or sub/aud/exp absent or of the
                              wrong type (sub must be a valid user id) */
    WR_INVITE_SIGNATURE,   /* "signature": not signed with the queue's inviteKey */
    WR_INVITE_EXPIRED,     /* "expired": exp <= now */
    WR_INVITE_WRONG_QUEUE, /* "wrongQueue": aud is not this queue */
    WR_INVITE_WRONG_USER,  /* "wrongUser": header identity mode, sub != the header's user id */
    WR_INVITE_NOT_YET,     /* "notYetValid": nbf > now (RFC 7519 4.1.5; no leeway, as exp) */
} wr_invite_reason_t;

/* "missing", "malformed", ... as above; "ok" for WR_INVITE_OK. */
const char *wr_invite_reason_name(wr_invite_reason_t r);

/*
 * Verifies invite (len bytes, need not be NUL-terminated; NULL or empty is
 * missing) for queue against key (key_len bytes) at now_s (seconds since
 * the epoch). Order: structure and alg (malformed), MAC in constant time
 * (signature), then the claims: sub, aud and exp present and well typed,
 * nbf a number if present (malformed), exp > now_s (expired), nbf <= now_s
 * (notYetValid), aud == queue (wrongQueue). An "aud" array is accepted when
 * it holds the queue. Other claims (iss, iat, jti...) are not looked at. On WR_INVITE_OK the
 * invite's sub is copied to sub (NUL-terminated), and its claim grp (the
 * priority group it joins, docs/API.md 1.3) to grp, "" without one (grp
 * may be NULL: not read). A grp that is not a string naming a possible
 * group ([a-z0-9-]{1,32}, not "standard": wr_groups_name_ok) is
 * malformed; whether the queue has that group is the caller's check
 * (wr_qconfig_group_index: one it does not have is malformed too).
 */
wr_invite_reason_t wr_invite_verify(const char *invite, size_t len, const uint8_t *key,
                                    size_t key_len, const char *queue, int64_t now_s,
                                    char sub[WR_USER_ID_MAX + 1], char grp[WR_GROUP_NAME_MAX + 1]);

/*
 * Signs an invite for user to queue, valid from iat until exp (seconds
 * since the epoch): claims {"iss":"waitroom-invite","aud":queue,
 * "sub":user,"iat":iat,"exp":exp}, and "grp":grp when grp is not NULL (the
 * priority group). out gets the JWT (cap bytes incl. NUL;
 * WR_TOKEN_MAX + 1 is always enough). Returns WR_OK, WR_EINVAL (bad queue
 * name, user id, group name, key shorter than WR_INVITE_KEY_MIN,
 * exp <= iat), WR_ELIMIT, WR_ENOMEM.
 */
wr_err_t wr_invite_sign(const uint8_t *key, size_t key_len, const char *queue, const char *user,
                        const char *grp, int64_t iat, int64_t exp, char *out, size_t cap);

#endif
