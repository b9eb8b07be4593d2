/*
 * pushmsg.h - the plaintext of a Web Push (docs/API.md 1.3): the JSON the
 * service worker reads and shows as a notification, in the subscriber's
 * language, never without a title and body (no silent pushes).
 *
 *   admitted: {"queue":"sale","status":"admitted","title":"...","body":
 *              "...","url":"/q/sale","expiresAt":1800000000000}
 *   closing:  {"queue":"sale","status":"closed","reason":"closed" or
 *              "soldOut","title":"...","body":"...","url":"/q/sale"}
 *
 * Members in that order, compact. The texts are the page's strings
 * (i18n.json, with --web-dir's merged in): push_admitted_title/_body,
 * push_closed_title/_body, push_soldout_title/_body, taken from the
 * subscriber's language, else "en", else built-in English; a string that
 * is missing, empty or only white space is never used.
 *
 * Pure; the output is the caller's buffer.
 */
#ifndef WR_PUSHMSG_H
#define WR_PUSHMSG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_PUSHMSG_TEXT_MAX                                                                        \
    400 /* bytes of a title or body taken (longer ones are cut at a                                \
           character boundary) */

/* What a push says. */
typedef enum {
    WR_PUSHMSG_ADMITTED = 0, /* their turn: the pass is waiting */
    WR_PUSHMSG_CLOSED,       /* the sale ended for them: closed */
    WR_PUSHMSG_SOLD_OUT,     /* the sale ended for them: sold out */
} wr_pushmsg_kind_t;

/*
 * The plaintext of a push of kind to a subscriber of queue in language
 * lang (an i18n code; NULL or "" is "en"), from the strings in i18n (an
 * object of language code to object of key to string; NULL: built-in
 * English only). expires_at is the pass's expiry in epoch ms (admitted
 * only; ignored otherwise). NUL-terminated into out (cap bytes), its
 * length to *out_len (may be NULL). WR_OK, WR_EINVAL (no queue or out) or
 * WR_ELIMIT (cap too small: keep cap at WR_PUSHCRYPT_PLAIN_MAX + 1 and the
 * message fits one record).
 */
wr_err_t wr_pushmsg_build(const json_t *i18n, const char *lang, wr_pushmsg_kind_t kind,
                          const char *queue, int64_t expires_at, char *out, size_t cap,
                          size_t *out_len);

#endif
