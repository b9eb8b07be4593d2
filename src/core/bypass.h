/*
 * bypass.h - bypass rules (docs/API.md 1.3, "Bypass rules" and "Bypass,
 * safely"): the queue config field `bypass`, its parsing with errors that
 * name the member ("bypass[2].secret") and its rendering (secrets only in
 * the stores' form), and the matching of a request against the rules.
 *
 * A rule has a name ([a-z0-9-]{1,32}) and exactly one test:
 *   header: the request's field `header` equals `secret` (32..128 bytes),
 *           compared in constant time;
 *   cidr:   the client address (through trusted proxies, the caller's
 *           job) is in the IPv4 or IPv6 prefix;
 *   path:   the path of X-Original-URI (from a trusted proxy, the caller's
 *           job), without its query, is "/exact", or is at or below
 *           "/prefix/" for "/prefix/\*". A path with "." or ".." segments,
 *           "//", %2F, %2E, %5C, %00 or a backslash never matches;
 *           matching is byte for byte (case-sensitive, nothing decoded).
 * Pure: no I/O, no clock, nothing allocated but the JSON rendering.
 */
#ifndef WR_BYPASS_H
#define WR_BYPASS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/ids.h"
#include "core/ratelimit.h"

#define WR_BYPASS_RULES_MAX  32           /* rules in a queue's bypass */
#define WR_BYPASS_NAME_MAX   WR_LABEL_MAX /* a rule's name, bytes, without NUL: a label */
#define WR_BYPASS_HEADER_MAX 64           /* a header rule's field name, bytes, without NUL */
#define WR_BYPASS_SECRET_MIN 32           /* a header rule's secret, bytes, at least */
#define WR_BYPASS_VALUE_MAX  128          /* a secret, a path or a cidr text, bytes, without NUL */
#define WR_BYPASS_URI_MAX    8192 /* X-Original-URI bytes looked at, at most (longer: no match) */

typedef enum {
    WR_BYPASS_HEADER = 1, /* "header" + "secret" */
    WR_BYPASS_CIDR = 2,   /* "cidr" */
    WR_BYPASS_PATH = 3,   /* "path" */
} wr_bypass_kind_t;

/*
 * One rule. value holds the secret (HEADER: value_len bytes, printable
 * ASCII), the cidr as given (CIDR, parsed into net) or the path as given
 * (PATH: "/exact", or "/prefix/\*" with prefix_path true). Strings are
 * NUL-terminated.
 */
typedef struct {
    wr_bypass_kind_t kind;
    char name[WR_BYPASS_NAME_MAX + 1];
    char header[WR_BYPASS_HEADER_MAX + 1]; /* HEADER: the field name as given */
    char value[WR_BYPASS_VALUE_MAX + 1];
    uint8_t value_len;
    bool prefix_path; /* PATH: "/p/\*" (matches "/p/" and below) */
    wr_cidr_t net;    /* CIDR: the network (IPv4 as IPv4-mapped IPv6) */
} wr_bypass_rule_t;

/*
 * The queue config's `bypass`: null (set false, the default) or n rules
 * (0..WR_BYPASS_RULES_MAX) in the order given (the first that matches
 * names the bypass). Plain data, copied by value inside wr_queue_config_t.
 */
typedef struct {
    bool set;
    uint8_t n;
    /* Not a field: a stand-in for wr_qconfig_check_fields, where "secret":
     * "set" is judged as the PATCH will judge it against a queue whose
     * rule of that name has a secret. Never rendered nor stored. */
    bool any_secret;
    wr_bypass_rule_t rules[WR_BYPASS_RULES_MAX];
} wr_bypass_config_t;

/*
 * Parses the config value v (present: null or an array) onto c. c holds
 * the queue's current rules (a PATCH's base; defaults for a PUT): a rule
 * whose "secret" is "set" keeps the secret of c's header rule of the same
 * name (so what GET shows can be sent back); without one that is an
 * error (c->any_secret: always kept). Names are unique. Errors write the
 * field "bypass" to field (field_len bytes) and a message naming the
 * member ("bypass[3].cidr must be ...") to msg (msg_len bytes), return
 * WR_EINVAL, and leave c untouched.
 */
wr_err_t wr_bypass_parse(const json_t *v, wr_bypass_config_t *c, char *field, size_t field_len,
                         char *msg, size_t msg_len);

/* Renders c: null, or the array of rules; a secret is "set" unless
 * secrets (the stores' form, which wr_bypass_parse reads back to the same
 * rules). New reference; NULL on allocation failure. */
json_t *wr_bypass_to_json(const wr_bypass_config_t *c, bool secrets);

/*
 * What a request shows the rules. header (ctx, name) returns the value of
 * the request's first field `name` (matched without case), or NULL.
 * client: the client address (text, through trusted proxies), or NULL.
 * uri: X-Original-URI as a trusted proxy sent it, or NULL (not sent, or
 * not from a trusted proxy). paths: whether path rules apply (the gate:
 * true; a join: false).
 */
typedef struct {
    const char *(*header)(void *ctx, const char *name);
    void *ctx;
    const char *client;
    const char *uri;
    bool paths;
} wr_bypass_request_t;

/* The first rule of c that req matches, or NULL (c null or empty, or no
 * match). A header rule's secret is compared in constant time (its time
 * does not depend on where the value differs, nor on the secret's length). */
const wr_bypass_rule_t *wr_bypass_match(const wr_bypass_config_t *c,
                                        const wr_bypass_request_t *req);

/* True when the path of uri (its query and fragment cut) matches the path
 * rule r under the rules above; false for any other kind. */
bool wr_bypass_path_matches(const wr_bypass_rule_t *r, const char *uri);

/* True when name is a rule name: a label, [a-z0-9-]{1,32} (base/ids.h). */
bool wr_bypass_valid_name(const char *s, size_t len);

#endif
