/*
 * qconfig.h - a queue's configuration: defaults, JSON parsing with
 * validation that names the offending field, and JSON rendering.
 *
 * The JSON shape is the "Queue config" of docs/API.md (camelCase). The
 * struct is plain data: copy it by value. Knows nothing of HTTP or stores.
 */
#ifndef WR_QCONFIG_H
#define WR_QCONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/ids.h"
#include "core/origin.h"

#define WR_POLL_BANDS_MAX     8    /* pollBands entries */
#define WR_POLL_LAST_BAND_MS  5000 /* the default config's last (slowest) band, ms */
#define WR_TARGET_URL_MAX     2048 /* targetUrl bytes, without NUL */
#define WR_FIELD_MAX          64   /* a field path in an error ("capacity.safety") */
#define WR_INVITE_KEY_MIN     32   /* inviteKey bytes, at least */
#define WR_INVITE_KEY_MAX     256  /* inviteKey bytes, at most */
#define WR_RETURN_ORIGINS_MAX 16   /* returnOrigins entries */

typedef enum {
    WR_FAIL_CLOSED = 0,  /* consume answers 503 while the store is down */
    WR_FAIL_OPEN = 1,    /* consume answers passthrough */
    WR_FAIL_LIMITED = 2, /* passthrough up to failOpenPerSecond per instance */
} wr_fail_policy_t;

typedef struct {
    uint64_t up_to; /* position upper bound, inclusive; 0 = no bound (last band) */
    uint32_t ms;    /* poll interval for this band, ms, >= 250 */
} wr_poll_band_t;

typedef struct {
    bool enabled;               /* false: the line is off, passthrough */
    bool paused;                /* true: joins accepted, nobody admitted */
    double admit_per_second;    /* outflow rate, users/s, > 0 (given or derived) */
    bool has_capacity;          /* capacity object given */
    uint32_t cap_connections;   /* capacity.connections, >= 1 */
    uint32_t cap_service_ms;    /* capacity.serviceMs, ms, >= 1 */
    double cap_safety;          /* capacity.safety, (0, 1] */
    uint32_t tick_ms;           /* scheduler tick, ms, 10..10000 */
    uint64_t max_active;        /* cap on live tokens, 0 = no cap */
    uint64_t max_queue_size;    /* cap on waiting users, 0 = unlimited */
    uint32_t token_ttl_seconds; /* entry token lifetime, s, 1..86400 */
    wr_poll_band_t poll_bands[WR_POLL_BANDS_MAX];
    size_t n_poll_bands; /* 1..WR_POLL_BANDS_MAX; the last band applies to every
                            position past the others (its up_to, 0 or not, is
                            kept only to render the config as given) */
    double poll_jitter;  /* 0..0.5, fraction of the poll interval */
    wr_fail_policy_t fail_policy;
    double fail_open_per_second;            /* limited policy budget per instance, >= 0 */
    char target_url[WR_TARGET_URL_MAX + 1]; /* "" when not set */
    /* inviteKey: HS256 key of the queue's invites (invite.h); write-only in
     * the API. invite_key_len 0 = no invite needed. No NUL inside. */
    char invite_key[WR_INVITE_KEY_MAX + 1];
    size_t invite_key_len;
    /* returnOrigins: origins a ?return= URL may go to besides targetUrl's,
     * canonical (origin.h: wr_origin_parse). */
    char return_origins[WR_RETURN_ORIGINS_MAX][WR_ORIGIN_MAX + 1];
    size_t n_return_origins;
    bool token_in_query;      /* tokenInQuery: hand the token to another origin as ?wr_token= */
    uint32_t session_seconds; /* sessionSeconds: a consume opens a session that counts
                                 in active this long at most, s, 0..86400; 0 = off */
    uint32_t idle_timeout_seconds; /* idleTimeoutSeconds: a waiting user whose last join or poll
                                      is older is away (keeps their place, passed over by
                                      admission), s, 0..86400, default 120; 0 = never */
    uint32_t away_hold_seconds;    /* awayHoldSeconds: a held person (turn came while away) who
                                      has not asked again this long after it leaves
                                      (abandonedTotal), s, 0..86400, default 1800 */
    uint32_t poll_max_ms;          /* pollMaxMs: far polls, a tenth of the expected wait up to
                                      this, ms, 0 (bands only) or 1000..600000, default 60000 */
    /* Sale opening (docs/API.md, "Sale opening"): opensAt, epoch ms, or
     * WR_OPENS_AT_NONE (JSON null, the default: no pre-queue). Before it,
     * joins wait in the pre-queue; at it the pre-queue enters the line. */
    int64_t opens_at_ms;
    bool pre_queue_shuffle; /* preQueueShuffle: the pre-queue enters in a uniformly random
                               order (default true), else in arrival order */
} wr_queue_config_t;

#define WR_OPENS_AT_NONE (-1) /* opens_at_ms: no scheduled opening (JSON null) */
#define WR_OPENS_AT_MAX  INT64_C(253402300799999) /* 9999-12-31T23:59:59.999Z */

/* Fills cfg with the documented defaults. admit_per_second is set to 0
 * (it has no default: it must be given or derived from capacity). */
void wr_qconfig_defaults(wr_queue_config_t *cfg);

/*
 * Parses a full config (PUT). Fields absent from obj take defaults; unknown
 * fields are rejected. When admitPerSecond is absent it is derived from
 * capacity (connections / (serviceMs/1000) * safety); with neither, the
 * error names "admitPerSecond".
 * Returns WR_OK and fills *out, or WR_EINVAL with the field path written to
 * field (NUL-terminated, at most WR_FIELD_MAX bytes) and a message to msg
 * (msg_len bytes including NUL). *out is untouched on error.
 */
wr_err_t wr_qconfig_parse(const json_t *obj, wr_queue_config_t *out, char *field, size_t field_len,
                          char *msg, size_t msg_len);

/*
 * Applies a partial config (PATCH) on top of base, validated like a PUT.
 * Giving capacity without admitPerSecond re-derives the rate.
 * "inviteKey": "set" keeps base's key (so what GET shows can be sent back);
 * in a PUT, or without a key in base, it is too short (WR_EINVAL).
 * Same returns as wr_qconfig_parse; *out untouched on error. out may equal base.
 */
wr_err_t wr_qconfig_patch(const wr_queue_config_t *base, const json_t *obj, wr_queue_config_t *out,
                          char *field, size_t field_len, char *msg, size_t msg_len);

/* Renders cfg as JSON, secrets included (inviteKey as the key itself):
 * the form the stores keep, which wr_qconfig_parse reads back to the same
 * config. Never send or log it; see wr_qconfig_to_public_json. Returns a
 * new reference (caller json_decref's it), or NULL on allocation failure. */
json_t *wr_qconfig_to_json(const wr_queue_config_t *cfg);

/* Renders cfg as the API shows it: like wr_qconfig_to_json, but inviteKey
 * is "set" or null (write-only). Same ownership. */
json_t *wr_qconfig_to_public_json(const wr_queue_config_t *cfg);

/* Returns "closed", "open" or "limited". */
const char *wr_qconfig_fail_policy_name(wr_fail_policy_t p);

#endif
