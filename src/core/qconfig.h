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
#include "core/bypass.h"
#include "core/captcha.h"
#include "core/groups.h"
#include "core/origin.h"

#define WR_POLL_BANDS_MAX     8    /* pollBands entries */
#define WR_POLL_LAST_BAND_MS  5000 /* the default config's last (slowest) band, ms */
#define WR_TARGET_URL_MAX     2048 /* targetUrl bytes, without NUL */
#define WR_FIELD_MAX          64   /* a field path in an error ("capacity.safety") */
#define WR_INVITE_KEY_MIN     32   /* inviteKey bytes, at least */
#define WR_INVITE_KEY_MAX     256  /* inviteKey bytes, at most */
#define WR_RETURN_ORIGINS_MAX 16   /* returnOrigins entries */
#define WR_PAGE_TEXT_MAX      100  /* page.title, page.brand: Unicode code points */
#define WR_PAGE_LOGO_MAX      2000 /* page.logoUrl: characters (ASCII: a URL) */
#define WR_PAGE_LANG_MAX      7    /* page.lang bytes, without NUL ("zh-Hans") */

/*
 * The queue page's brand (config `page`, docs/API.md "The queue page
 * carries the shop"). set false = `page` is null (the default); then every
 * string is "". Each string is "" when its member was not given (or null).
 * title and brand are UTF-8 of at most WR_PAGE_TEXT_MAX code points;
 * logo_url is an https:// URL or a path starting with exactly one "/"
 * (printable ASCII, no quotes, angle brackets, backslash or space);
 * accent is "#RRGGBB" as given; lang one of wr_page_langs.
 */
typedef struct {
    bool set;
    char title[WR_PAGE_TEXT_MAX * 4 + 1];
    char brand[WR_PAGE_TEXT_MAX * 4 + 1];
    char logo_url[WR_PAGE_LOGO_MAX + 1];
    char accent[8];
    char lang[WR_PAGE_LANG_MAX + 1];
} wr_page_config_t;

/* The languages the queue page speaks (page.lang's values, the page's
 * i18n.json keys), NULL-terminated: en ko ja zh-Hans zh-Hant es fr de pt it
 * vi th id ar. */
extern const char *const wr_page_langs[];
#define WR_NOTICE_MAX_CP    500                    /* a notice text: Unicode code points, at most */
#define WR_NOTICE_MAX       (WR_NOTICE_MAX_CP * 4) /* a notice text: bytes (UTF-8), at most */
#define WR_NOTICE_LANGS_MAX 24                     /* notice by language: languages, at most */
#define WR_NOTICE_TEXTS_MAX 8000 /* notice by language: bytes (UTF-8) of its texts together */
#define WR_LANG_CODE_MAX    35   /* a page language code: bytes (lang.h's WR_LANG_TAG_MAX) */
#define WR_NOTICE_BUF       (WR_NOTICE_TEXTS_MAX + WR_NOTICE_LANGS_MAX * (WR_LANG_CODE_MAX + 2))

/*
 * The operator's notice (config `notice`, docs/API.md "The end of a sale"
 * and 1.3's notice by language), kept compactly: n entries "code\0text\0"
 * one after the other in buf (len bytes in use), in the order given (the
 * first is the last resort of wr_notice_pick). n 0 = no notice (JSON
 * null). The string form is one entry with code "" (by_lang false); the
 * object form (by_lang true) has 1..WR_NOTICE_LANGS_MAX entries, each code
 * a page language code (wr_page_lang_code_ok), no two alike in any case.
 * Every text is valid UTF-8 of 1..WR_NOTICE_MAX_CP code points, no NUL,
 * not only white space; the object's texts together take at most
 * WR_NOTICE_TEXTS_MAX bytes. Plain data (WR_NOTICE_BUF + 4 bytes).
 */
typedef struct {
    uint8_t n;    /* entries: 0 = no notice */
    bool by_lang; /* the object of language to text (GET shows it); false: one string */
    uint16_t len; /* bytes of buf in use */
    char buf[WR_NOTICE_BUF];
} wr_notice_t;

/* The entries of n: codes[i] and texts[i] point into n->buf (NUL-ended),
 * codes[n] and texts[n] are NULL (both arrays hold WR_NOTICE_LANGS_MAX + 1).
 * Returns the number of entries (0: no notice). */
size_t wr_notice_entries(const wr_notice_t *n, const char *codes[], const char *texts[]);

/* The text of n to show a visitor (NULL: no notice): the string form's
 * text; else the text of the entry whose code is `chosen` (a pointer
 * wr_notice_entries handed out, e.g. the one lang.h's wr_lang_match picked
 * for the visitor's language; NULL: none), else the one of "en" (any case),
 * else the first. */
const char *wr_notice_pick(const wr_notice_t *n, const char *chosen);

/* A well-formed language code for a page or a notice's key (the names a
 * --web-dir's languages take too): 1-8 letters, then "-" and 1-8 letters
 * or digits, repeated; s is len bytes, at most WR_LANG_CODE_MAX. */
bool wr_page_lang_code_ok(const char *s, size_t len);

#define WR_STOCK_MAX  INT64_C(9007199254740992) /* stock: 2^53 */
#define WR_STOCK_NONE (-1)                      /* stock: no limit (JSON null) */

/* The opening draw's beacon (config `draw`): beacon_url an https:// URL
 * (http:// only to a loopback host: core/captcha.h wr_captcha_url_parse),
 * at most WR_DRAW_URL_MAX characters; round >= 1. */
#define WR_DRAW_URL_MAX 500
typedef struct {
    bool set;
    char beacon_url[WR_DRAW_URL_MAX + 1];
    uint64_t round;
} wr_draw_config_t;

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
    wr_page_config_t page;  /* page: the queue page's brand (null = none) */
    /* The end of a sale (docs/API.md 1.2, "The end of a sale"). */
    bool closed; /* closed: the sale is over; joins and polls answer "closed", nobody
                    joins or is admitted, places and live passes are kept */
    /* stock: how many more people may be let in, 0..WR_STOCK_MAX, or
     * WR_STOCK_NONE (JSON null, the default: no limit). What is left
     * changes with every admission and return: the stores keep it (store.h,
     * wr_queue_stats_t.stock_left), and a config a store answers with
     * carries the value last set (GET shows what is left now). */
    int64_t stock;
    /* Not a field: true when handing this config to a store's config_put
     * sets what is left to `stock` (a PUT, or a PATCH that names stock);
     * false keeps the store's count. wr_qconfig_parse sets it,
     * wr_qconfig_patch sets it when the PATCH names stock,
     * wr_qconfig_parse_stored clears it. Never rendered. */
    bool stock_set;
    /* Not a field: true when the store's last admission tick found the
     * queue sold out (stats soldOutAt set: stock 0 and no unconsumed pass
     * live). The scheduler sets it on the config it keeps; every other
     * config has it false. Never rendered nor stored. */
    bool sold_out;
    /* notice: the operator's message to the line, one string or one text
     * per language (wr_notice_t); n 0 = none (JSON null). */
    wr_notice_t notice;
    uint32_t challenge_bits; /* challengeBits: a join that adds a person needs a solved join
                                challenge with this many leading zero bits (core/challenge.h),
                                0..32, default 0 = off */
    /* autotune (docs/API.md 1.2, "The line follows the shop"): null (the
     * default, has_autotune false) or the bounds and target of the rate the
     * server moves from the protected service's reports (core/autotune.h).
     * While set, admit_per_second is only where the rate starts (clamped
     * into [min, max]); a PUT without admitPerSecond or capacity sets it to
     * the min (at least 0.001). */
    bool has_autotune;
    double autotune_min;         /* minPerSecond, users/s, (0, 1e6] */
    double autotune_max;         /* maxPerSecond, users/s, [min, 1e6] */
    uint32_t autotune_target_ms; /* targetMs, ms, 1..60000 */
    /* captcha (docs/API.md 1.2, "A place costs work"): null (the default,
     * captcha.set false) or the Turnstile / hCaptcha widget a join that
     * adds a person must pass (core/captcha.h); its secret is write-only
     * in the API, as inviteKey. */
    wr_captcha_config_t captcha;
    /* groups (docs/API.md 1.3, "Priority groups and presale codes"):
     * n_groups 0 = null (the default), else 1..WR_GROUPS_MAX names in
     * priority order, each [a-z0-9-]{1,32}, unique, not "standard"
     * (core/groups.h); the unused names are all zeros. */
    char groups[WR_GROUPS_MAX][WR_GROUP_NAME_MAX + 1];
    size_t n_groups;
    double standard_share; /* standardShare: the standard line's least share of the
                              admissions, 0..1, default 0.2 */
    /* publicLog (docs/API.md 1.3, "A line anyone can check"): the queue
     * keeps a public, signed log of every change of a person's standing.
     * Switchable only while the line and pre-queue are empty (the admin
     * API checks). */
    bool public_log;
    /* draw (1.3, "The opening draw"): null (set false, the default) or
     * the drand-compatible beacon and round the opening's draw mixes in;
     * fixed once the opening's commit is logged. */
    wr_draw_config_t draw;
    /* bypass (docs/API.md 1.3, "Bypass rules"): null (the default,
     * bypass.set false) or the rules that let a request past the line
     * (core/bypass.h); a header rule's secret is write-only in the API. */
    wr_bypass_config_t bypass;
    /* push (docs/API.md 1.3, "Web Push"): people in line may subscribe to
     * a push at their admission (default false; true needs --push-subject:
     * the API refuses it without, http/api_push.c). */
    bool push;
} wr_queue_config_t;

#define WR_OPENS_AT_NONE (-1) /* opens_at_ms: no scheduled opening (JSON null) */
#define WR_OPENS_AT_MAX  INT64_C(253402300799999) /* 9999-12-31T23:59:59.999Z */

/*
 * The field table: every queue config field is one row of
 * wr_qconfig_fields (qconfig.c), in the documented order. Defaults, parsing
 * (PUT and PATCH: the unknown-key check, the checks in row order, the
 * field and message of an error), rendering and the store's per-queue hash
 * (wr_qconfig_store_value) all walk it; rules across fields (the rate
 * derived from capacity, failOpenPerSecond following the rate) are in
 * wr_qconfig_parse and wr_qconfig_patch. Adding a field is a member of
 * wr_queue_config_t and a row.
 */
typedef enum {
    WR_QF_BOOL,   /* bool; JSON true or false */
    WR_QF_INT,    /* uint32_t, uint64_t or int64_t; a JSON integer in [imin, imax] */
    WR_QF_NUMBER, /* double; a finite JSON number in [dmin, dmax] ((dmin, dmax] with
                     WR_QF_MIN_OPEN) */
    WR_QF_STRING, /* char[size]; a JSON string of at most size - 1 bytes, then check */
    WR_QF_ENUM,   /* int-sized enum; one of the JSON strings names, the value its index */
    WR_QF_CUSTOM, /* parsed, rendered and reset by the row's hooks (objects, arrays, secrets) */
} wr_qfield_kind_t;

#define WR_QF_NULLABLE 0x1u /* INT (int64_t, imin >= 0): JSON null allowed, kept as -1 */
#define WR_QF_EPOCH_MS                                                                             \
    0x2u                    /* INT: an "...At" field in epoch ms: from the API, a value below      \
                               WR_QF_EPOCH_MS_MIN (plausible as seconds) is refused */
#define WR_QF_MIN_OPEN 0x4u /* NUMBER: dmin itself is refused */
#define WR_QF_STORED_BLANK_NULL                                                                    \
    0x8u /* CUSTOM: a stored string that is empty or only white space (accepted before 1.3)        \
            reads as null; from the API it is refused by the row's parse */

/* The smallest epoch-ms value the API accepts in an "...At" field
 * (1973-03-03T09:46:40Z): anything smaller is far more likely a time in
 * seconds (now is about 1.8e9 s) than a moment in 1970. */
#define WR_QF_EPOCH_MS_MIN INT64_C(100000000000)

typedef wr_field_err_t wr_qfield_err_t; /* an error sink (base/error.h) */

typedef struct wr_qfield {
    const char *key; /* JSON key, camelCase; unique in the table */
    wr_qfield_kind_t kind;
    unsigned flags;           /* WR_QF_* */
    size_t off, size;         /* the member in wr_queue_config_t: offset and bytes (CUSTOM: its
                                 first member, 0) */
    int64_t imin, imax;       /* INT: the accepted range, inclusive */
    double dmin, dmax;        /* NUMBER: the accepted range */
    const char *rule;         /* NUMBER, STRING: the error message of a bad value; others
                                 build theirs from the kind and range */
    int64_t idef;             /* BOOL, INT, ENUM: the default (NULLABLE: -1 = null) */
    double ddef;              /* NUMBER: the default */
    const char *const *names; /* ENUM: the JSON strings, NULL-terminated */
    const char *store;        /* its field in the store's per-queue hash (the Redis backend's
                                 wr:{q}:config, read by the Lua scripts); NULL = JSON only */
    bool (*check)(const char *s, size_t len); /* STRING: after the length check; NULL = any */
    /* CUSTOM: parse v (present, maybe null) onto c or fail naming the
     * field; render c (*out NULL = leave the key out; false = no memory);
     * reset: set the default on a zeroed config (NULL: zeros are it). */
    wr_err_t (*parse)(wr_qfield_err_t *e, const json_t *v, wr_queue_config_t *c);
    bool (*render)(const wr_queue_config_t *c, bool secrets, json_t **out);
    void (*reset)(wr_queue_config_t *c);
    /* CUSTOM with a store field: writes its store value (as
     * wr_qconfig_store_value); NULL for the others. */
    int (*store_value)(const wr_queue_config_t *c, char *buf, size_t len);
    const char *example; /* a valid value other than the default, as canonical JSON text
                            (what rendering gives back): the table's unit tests */
} wr_qfield_t;

extern const wr_qfield_t wr_qconfig_fields[];
extern const size_t wr_qconfig_n_fields;

/* The row whose JSON key is key, or NULL. */
const wr_qfield_t *wr_qconfig_field(const char *key);

#define WR_QF_STORE_VALUE_MAX 64 /* bytes of a store field's name or value, with the NUL */

/*
 * Writes f's value in cfg as the store's per-queue hash keeps it (f->store
 * set): BOOL "1"/"0", INT decimal ("" for a NULLABLE's null), NUMBER
 * "%.17g", ENUM and STRING the JSON string, CUSTOM its row's store_value
 * (autotune: "" for null, else "min:max:targetMs"). Returns the length written
 * (NUL-terminated in buf), or -1 when f has no store field, is CUSTOM or
 * the value does not fit len bytes (WR_QF_STORE_VALUE_MAX always fits a
 * BOOL, INT, NUMBER, ENUM or autotune).
 */
int wr_qconfig_store_value(const wr_qfield_t *f, const wr_queue_config_t *cfg, char *buf,
                           size_t len);

/* A number as the config renders it: a JSON integer when whole (175, not
 * 175.0), else a real. New reference; NULL on allocation failure. */
json_t *wr_qconfig_number_json(double d);

/* Fills cfg with the documented defaults. admit_per_second is set to 0
 * (it has no default: it must be given or derived from capacity). */
void wr_qconfig_defaults(wr_queue_config_t *cfg);

/*
 * Parses a full config (PUT). Fields absent from obj take defaults; unknown
 * fields are rejected. When admitPerSecond is absent it is derived from
 * capacity (connections / (serviceMs/1000) * safety); with neither, the
 * error names "admitPerSecond". An "...At" field (WR_QF_EPOCH_MS) below
 * WR_QF_EPOCH_MS_MIN is refused: it is plausible as seconds (K34).
 * Returns WR_OK and fills *out, or WR_EINVAL with the field path written to
 * field (NUL-terminated, at most WR_FIELD_MAX bytes) and a message to msg
 * (msg_len bytes including NUL). *out is untouched on error.
 */
wr_err_t wr_qconfig_parse(const json_t *obj, wr_queue_config_t *out, char *field, size_t field_len,
                          char *msg, size_t msg_len);

/*
 * Parses a config a store kept (the Redis hash's JSON, a snapshot): like
 * wr_qconfig_parse, but an "...At" field below WR_QF_EPOCH_MS_MIN, which
 * versions before K34 accepted, is kept (it reads as a moment long past).
 * Never for input from the API or the config file.
 */
wr_err_t wr_qconfig_parse_stored(const json_t *obj, wr_queue_config_t *out, char *field,
                                 size_t field_len, char *msg, size_t msg_len);

/*
 * Applies a partial config (PATCH) on top of base, validated like a PUT.
 * Giving capacity without admitPerSecond re-derives the rate.
 * "inviteKey": "set" keeps base's key (so what GET shows can be sent back);
 * in a PUT, or without a key in base, it is too short (WR_EINVAL).
 * Same returns as wr_qconfig_parse; *out untouched on error. out may equal base.
 */
wr_err_t wr_qconfig_patch(const wr_queue_config_t *base, const json_t *obj, wr_queue_config_t *out,
                          char *field, size_t field_len, char *msg, size_t msg_len);

/*
 * Checks each field of a PATCH body on its own: the unknown-key check and
 * every row's rule, no rule across fields (capacity's derived rate, the
 * rate being required: those need the stored config). A body it refuses,
 * wr_qconfig_patch refuses whatever the stored config, with the same field
 * and message; so the admin API answers 400 before reading the store, and
 * bad input is 400 even while the store is unreachable. "inviteKey":"set"
 * passes here (the stored key decides). Same returns as wr_qconfig_parse.
 */
wr_err_t wr_qconfig_check_fields(const json_t *obj, char *field, size_t field_len, char *msg,
                                 size_t msg_len);

/*
 * The fields the parser accepts whose feature this version does not serve
 * yet: WR_EINVAL naming the field with the message "not available yet:
 * ...", else WR_OK (same buffers as wr_qconfig_parse). The admin API (PUT,
 * PATCH) and the config file's queues call it after parsing, so a config
 * that is accepted works: `groups` other than null (priority groups: the
 * stores do not keep per-group lines yet; docs/API.md). A config a store
 * kept is never refused by it.
 */
wr_err_t wr_qconfig_check_available(const wr_queue_config_t *cfg, char *field, size_t field_len,
                                    char *msg, size_t msg_len);

/* The line of group name (len bytes) in cfg: 1..n_groups for its groups
 * in priority order, 0 for "" (the standard line), -1 for a name cfg does
 * not have ("standard" included: it is no group's name). */
int wr_qconfig_group_index(const wr_queue_config_t *cfg, const char *name, size_t len);

/* Renders cfg as JSON, secrets included (inviteKey as the key itself):
 * the form the stores keep, which wr_qconfig_parse reads back to the same
 * config. Never send or log it; see wr_qconfig_to_public_json. Returns a
 * new reference (caller json_decref's it), or NULL on allocation failure. */
json_t *wr_qconfig_to_json(const wr_queue_config_t *cfg);

/* Renders cfg as the API shows it: like wr_qconfig_to_json, but inviteKey
 * is "set" or null, captcha.secret and each bypass rule's secret "set"
 * (write-only). Same ownership. */
json_t *wr_qconfig_to_public_json(const wr_queue_config_t *cfg);

/* Returns "closed", "open" or "limited". */
const char *wr_qconfig_fail_policy_name(wr_fail_policy_t p);

#endif
