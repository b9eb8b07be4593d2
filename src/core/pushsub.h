/*
 * pushsub.h - a person's Web Push subscription (docs/API.md 1.3: `PUT
 * /v1/queues/{queue}/entries/me/push`): the browser's PushSubscription
 * JSON checked into fixed-size fields, the reasons of `400
 * INVALID_SUBSCRIPTION`, and the `Topic` of a person's pushes.
 *
 * The body: {"endpoint":"https://...","keys":{"p256dh":"...","auth":
 * "..."},"lang":"ko"} (`lang` optional; `expirationTime` and any other
 * member accepted and ignored). Reasons, checked in this order:
 *   endpoint - missing, not a string, over 1,024 bytes, not a URL of
 *              pushaddr's grammar, or not https:// (http:// only for a
 *              host listed with --push-allow-host);
 *   p256dh   - missing, not base64url without padding, not 65 bytes, or
 *              not a point on P-256;
 *   auth     - missing, not base64url without padding, or not 16 bytes;
 *   lang     - present (not null) and not one of the page's languages.
 * The port and address rules are the sender's (they need the resolved
 * addresses); a subscription that breaks them is taken and its pushes
 * fail (counted `failed`, the subscription deleted).
 *
 * Pure; no allocation (jansson values are borrowed).
 */
#ifndef WR_PUSHSUB_H
#define WR_PUSHSUB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"
#include "core/pushaddr.h"
#include "core/pushcrypt.h"

#define WR_PUSHSUB_LANG_MAX  35 /* bytes of a language code, without NUL */
#define WR_PUSHSUB_TOPIC_LEN 32 /* chars of a Topic (RFC 8030: at most 32 base64url) */

/* A checked subscription. */
typedef struct wr_pushsub {
    char endpoint[WR_PUSHADDR_ENDPOINT_MAX + 1]; /* as given: a capability, never logged */
    uint8_t p256dh[WR_CRYPTO_P256_PUB];          /* the browser's public point */
    uint8_t auth[WR_PUSHCRYPT_AUTH];             /* its auth secret */
    char lang[WR_PUSHSUB_LANG_MAX + 1];          /* one of the offered codes, or "" */
} wr_pushsub_t;

/* Why a subscription is refused (the `reason` of INVALID_SUBSCRIPTION). */
typedef enum {
    WR_PUSHSUB_OK = 0,
    WR_PUSHSUB_ENDPOINT,
    WR_PUSHSUB_P256DH,
    WR_PUSHSUB_AUTH,
    WR_PUSHSUB_LANG,
} wr_pushsub_reason_t;

/* "ok", "endpoint", "p256dh", "auth", "lang". */
const char *wr_pushsub_reason_name(wr_pushsub_reason_t r);

/*
 * Checks body (a JSON object; anything else is WR_PUSHSUB_ENDPOINT) into
 * *out. allow is the --push-allow-host list (NULL: empty); langs the
 * page's language codes, NULL-terminated (a lang matches one ignoring
 * case and is stored as that code). Returns WR_PUSHSUB_OK with *out set,
 * or the first reason (*out zeroed).
 */
wr_pushsub_reason_t wr_pushsub_parse(const json_t *body, const wr_pushaddr_allow_t *allow,
                                     const char *const *langs, wr_pushsub_t *out);

/*
 * The Topic of the pushes to user in queue: base64url of the first 24
 * bytes of HMAC-SHA256(K, queue || 0x00 || user), K derived from secret
 * (len bytes: the token secret) under "waitroom push topic v1"; exactly
 * WR_PUSHSUB_TOPIC_LEN characters and a NUL into out. The same for a
 * person and queue on every instance and restart (a newer push replaces
 * an undelivered older one at the push service), and it reveals neither.
 * WR_OK or WR_EINVAL (NULL or empty secret, queue or user).
 */
wr_err_t wr_pushsub_topic(const uint8_t *secret, size_t len, const char *queue, const char *user,
                          char out[WR_PUSHSUB_TOPIC_LEN + 1]);

/*
 * A subscription as a store keeps it as one string (the Redis store's
 * push hash): "<p256dh> <auth> <lang> <endpoint>", the keys in base64url
 * without padding, lang possibly empty, the endpoint last (it runs to the
 * end). At most WR_PUSHSUB_PACKED_MAX bytes without the NUL.
 * wr_pushsub_pack writes sub's into out (cap bytes, NUL-terminated; *len
 * without the NUL): WR_OK, WR_EINVAL (no endpoint, a lang holding a
 * space), WR_ELIMIT (cap too small). wr_pushsub_unpack reads n bytes of in
 * back into *out: WR_OK, or WR_EINVAL (*out zeroed) for anything else than
 * what wr_pushsub_pack writes of a checked subscription (a p256dh that is
 * not a P-256 point included).
 */
#define WR_PUSHSUB_PACKED_MAX (87 + 1 + 22 + 1 + WR_PUSHSUB_LANG_MAX + 1 + WR_PUSHADDR_ENDPOINT_MAX)

wr_err_t wr_pushsub_pack(const wr_pushsub_t *sub, char *out, size_t cap, size_t *len);
wr_err_t wr_pushsub_unpack(const char *in, size_t n, wr_pushsub_t *out);

#endif
