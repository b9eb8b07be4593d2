/*
 * config.c - server configuration from defaults, flags and the environment;
 * config_file.c reads the INI file.
 *
 * One table (settings[], after Redis's static_configs[]) has a row per
 * server setting: its flag, [server] INI key, secret environment variable,
 * kind (bool, integer or number with a range, string with an optional
 * check, secret bytes, a name from a list, or a special parse function for
 * the odd ones), the field it fills (offsetof, type-checked by the row
 * macros), its default as text, and its --help line. Defaults, flags, INI
 * keys (wr_config_set), the environment, range checks and the usage text
 * all walk that table, so a setting means the same wherever it comes from,
 * and adding one is a field in wr_config_t plus a row here. Errors are
 * written to the caller's buffer prefixed with where the value came from:
 * "FILE:LINE: ...", "--flag: ..." or "WAITROOM_...: ...".
 *
 * wr_config_load makes two passes over argv: the first finds --config,
 * --help and --version (so the file is loaded first wherever --config
 * appears), the second applies the other flags in order (the last
 * occurrence wins). The secret environment variables are applied last; an
 * empty variable counts as unset. Config loading runs once at start,
 * before any thread exists (the usage text, too, is built once, into a
 * static buffer). The table and the checks of the special values are in
 * config_settings.c (config_internal.h).
 */
#include "runtime/config.h"

#include "runtime/config_internal.h"

#include "core/breaker.h"
#include "base/ids.h"
#include "runtime/store_registry.h"
#include "base/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <math.h>

#define USAGE_COL   27   /* --help: column of the descriptions */
#define USAGE_WIDTH 92   /* --help: wrap descriptions at this column */
#define USAGE_MAX   6144 /* --help: bytes of the whole text */

/* A bounded text buffer (the usage text, an error's list of names). */
typedef struct {
    char *buf;
    size_t cap, len; /* buf holds len bytes and a NUL; what does not fit is dropped */
    size_t col;      /* characters since the last newline */
} out_t;

__attribute__((format(printf, 2, 3))) static void out_printf(out_t *o, const char *fmt, ...)
{
    if (o->len + 1 >= o->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t end = o->len + (size_t)n < o->cap ? o->len + (size_t)n : o->cap - 1;
    for (; o->len < end; o->len++)
        o->col = o->buf[o->len] == '\n' ? 0 : o->col + 1;
}

/* Validates v and stores it in s's field; the message says what is wrong
 * (the caller prefixes where the value came from). */
static wr_err_t set_value(wr_config_t *cfg, const setting_t *s, const char *v, char *err,
                          size_t errlen)
{
    char *field = (char *)cfg + s->off;
    char note[32] = ""; /* " (off)": what the lowest value 0 means */
    if (s->zero && s->min == 0)
        snprintf(note, sizeof(note), " (%s)", s->zero);
    switch (s->kind) {
    case K_HEADING:
    case K_CONFIG:
    case K_HELP:
    case K_VERSION:
        return WR_OK;
    case K_BOOL: {
        bool b;
        if (!wr_config__parse_bool(v, &b))
            return wr_einval(err, errlen, "'%s' must be true, false, 1, 0, yes or no", v);
        memcpy(field, &b, sizeof(b));
        return WR_OK;
    }
    case K_UINT: {
        unsigned long long n, lo = (unsigned long long)s->min, hi = (unsigned long long)s->max;
        if (!wr_config__parse_uint(v, lo, hi, &n))
            return wr_einval(err, errlen, "'%s' must be an integer from %llu%s to %llu", v, lo,
                             note, hi);
        uint32_t u = (uint32_t)n;
        memcpy(field, &u, sizeof(u));
        return WR_OK;
    }
    case K_DOUBLE: {
        double d;
        if (!wr_config__parse_double(v, s->min, s->max, &d))
            return wr_einval(err, errlen, "'%s' must be a number from %.15g%s to %.15g", v, s->min,
                             note, s->max);
        memcpy(field, &d, sizeof(d));
        return WR_OK;
    }
    case K_ENUM: {
        char list[160] = "";
        out_t l = {.buf = list, .cap = sizeof(list)};
        for (int i = 0; s->names[i]; i++) {
            if (strcmp(v, s->names[i]) == 0) {
                memcpy(field, &i, sizeof(i));
                return WR_OK;
            }
            out_printf(&l, "%s%s", i == 0 ? "" : s->names[i + 1] ? ", " : " or ", s->names[i]);
        }
        return wr_einval(err, errlen, "'%s' must be %s", v, list);
    }
    case K_STRING:
        if (s->check && s->check(v, err, errlen) != WR_OK)
            return WR_EINVAL;
        if (strlen(v) > s->size - 1)
            return wr_einval(err, errlen, "is longer than %zu bytes", s->size - 1);
        memcpy(field, v, strlen(v) + 1);
        return WR_OK;
    case K_SECRET: {
        size_t n = strlen(v);
        if (n > s->size)
            return wr_einval(err, errlen, "is longer than %zu bytes", s->size);
        memcpy(field, v, n);
        memcpy((char *)cfg + s->len_off, &n, sizeof(n));
        return WR_OK;
    }
    case K_SPECIAL:
        return s->set(cfg, v, err, errlen);
    }
    return wr_einval(err, errlen, "unknown setting");
}

void wr_config_defaults(wr_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < wr_config__n_settings; i++)
        if (wr_config__settings[i].def &&
            set_value(cfg, &wr_config__settings[i], wr_config__settings[i].def, NULL, 0) != WR_OK)
            abort(); /* a bad default in the table (test_config loads them all) */
}

/* ---- usage text ---- */

/* Writes text's words from the current column, wrapping before USAGE_WIDTH
 * to lines that start at column indent, and ends the line. "A = B" stays
 * on one line. */
static void out_wrapped(out_t *o, const char *text, size_t indent)
{
    bool first = true;
    for (const char *p = text + strspn(text, " "); *p; p += strspn(p, " ")) {
        size_t n = strcspn(p, " ");
        while (strncmp(p + n, " = ", 3) == 0)
            n += 3 + strcspn(p + n + 3, " ");
        if (!first && o->col + 1 + n > USAGE_WIDTH)
            out_printf(o, "\n%*s", (int)indent, "");
        else if (!first)
            out_printf(o, " ");
        out_printf(o, "%.*s", (int)n, p);
        first = false;
        p += n;
    }
    out_printf(o, "\n");
}

/* A flag's description: its help (or choices), then "(default D; 0 = Z;
 * env VAR; doc)" with the parts it has. */
static void describe(out_t *t, const setting_t *s)
{
    if (s->kind != K_ENUM)
        out_printf(t, "%s", s->help);
    for (size_t i = 0; s->kind == K_ENUM && s->names[i]; i++)
        out_printf(t, "%s%s%s", i ? " | " : "", s->names[i],
                   s->def && strcmp(s->def, s->names[i]) == 0 ? " (default)" : "");
    bool show_def = s->def && !s->def_in_help && s->kind != K_ENUM && s->kind != K_SPECIAL;
    bool zero_def = show_def && s->zero && strcmp(s->def, "0") == 0;
    char def[96] = "", zero[32] = "", env[64] = "";
    if (show_def)
        snprintf(def, sizeof(def), "default %s%s%s", s->def, zero_def ? " = " : "",
                 zero_def ? s->zero : "");
    if (s->zero && !zero_def)
        snprintf(zero, sizeof(zero), "0 = %s", s->zero);
    if (s->env)
        snprintf(env, sizeof(env), "env %s", s->env);
    const char *parts[] = {def, zero, env, s->doc ? s->doc : ""}, *sep = " (";
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        if (parts[i][0])
            out_printf(t, "%s%s", sep, parts[i]);
        sep = parts[i][0] || sep[0] == ';' ? "; " : sep;
    }
    if (sep[0] == ';')
        out_printf(t, ")");
}

const char *wr_config_version(void)
{
    return "waitroomd " WR_VERSION "\n";
}

const char *wr_config_usage(void)
{
    static char usage[USAGE_MAX];
    if (usage[0])
        return usage;
    out_t o = {.buf = usage, .cap = sizeof(usage)};
    out_printf(&o, "usage: waitroomd [options]\n");
    for (size_t i = 0; i < wr_config__n_settings; i++) {
        const setting_t *s = &wr_config__settings[i];
        if (s->kind == K_HEADING)
            out_printf(&o, "%s\n", s->help);
        if (!s->flag)
            continue;
        out_printf(&o, "  --%s%s%s", s->flag, s->meta ? " " : "", s->meta ? s->meta : "");
        out_printf(&o, "%*s", o.col < USAGE_COL ? (int)(USAGE_COL - o.col) : 2, "");
        char text[512] = "";
        out_t t = {.buf = text, .cap = sizeof(text)};
        describe(&t, s);
        out_wrapped(&o, text, USAGE_COL);
    }
    char text[512] = "";
    out_t t = {.buf = text, .cap = sizeof(text)};
    out_printf(&t, "Flags override the file;");
    size_t n_env = 0, k = 0;
    for (size_t i = 0; i < wr_config__n_settings; i++)
        n_env += wr_config__settings[i].env != NULL;
    for (size_t i = 0; i < wr_config__n_settings; i++)
        if (wr_config__settings[i].env)
            out_printf(&t, "%s%s",
                       k++ == 0     ? " "
                       : k == n_env ? " and "
                                    : ", ",
                       wr_config__settings[i].env);
    out_printf(&t, " override both. Both --flag VALUE and --flag=VALUE work.");
    out_wrapped(&o, text, 0);
    return usage;
}

wr_err_t wr_config_set(wr_config_t *cfg, const char *key, const char *value, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < wr_config__n_settings; i++) {
        if (wr_config__settings[i].ini && strcmp(wr_config__settings[i].ini, key) == 0) {
            char why[384];
            if (set_value(cfg, &wr_config__settings[i], value, why, sizeof(why)) == WR_OK)
                return WR_OK;
            return wr_einval(err, errlen, "%s: %s", key, why);
        }
    }
    return wr_einval(err, errlen, "unknown key '%.100s' in [server]", key);
}

/* ---- flags ---- */

/*
 * Reads the flag at argv[*i]: sets *s and *value (NULL when the flag has
 * none) and advances *i past a separate value.
 */
static wr_err_t next_flag(int argc, char **argv, int *i, const setting_t **s, const char **value,
                          char *err, size_t errlen)
{
    const char *a = argv[*i];
    if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
        return wr_einval(err, errlen, "unexpected argument '%.200s'", a);
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t k = 0; k < wr_config__n_settings; k++) {
        const setting_t *o = &wr_config__settings[k];
        if (!o->flag || strlen(o->flag) != name_len || strncmp(o->flag, name, name_len) != 0)
            continue;
        *s = o;
        bool no_value = o->kind == K_HELP || o->kind == K_VERSION;
        if (no_value && eq)
            return wr_einval(err, errlen, "--%s takes no value", o->flag);
        if (eq) {
            *value = eq + 1;
        } else if (!no_value && o->kind != K_BOOL) {
            if (*i + 1 >= argc)
                return wr_einval(err, errlen, "--%s needs a value", o->flag);
            *value = argv[++*i];
        } else {
            *value = NULL;
        }
        return WR_OK;
    }
    return wr_einval(err, errlen, "unknown flag '--%.*s'", (int)(name_len > 200 ? 200 : name_len),
                     name);
}

wr_err_t wr_config_load(wr_config_t *cfg, int argc, char **argv, wr_config_action_t *action,
                        char *err, size_t errlen)
{
    wr_err_t rc;
    const char *config_path = NULL;
    wr_config_action_t act = WR_CONFIG_RUN;
    if (action)
        *action = WR_CONFIG_RUN;
    wr_config_defaults(cfg);

    /* Pass 1: --help, --version and --config. */
    for (int i = 1; i < argc; i++) {
        const setting_t *s = NULL;
        const char *value = NULL;
        if ((rc = next_flag(argc, argv, &i, &s, &value, err, errlen))) {
            if (act != WR_CONFIG_RUN)
                break; /* --help or --version wins over a later mistake */
            return rc;
        }
        if (act == WR_CONFIG_RUN && (s->kind == K_HELP || s->kind == K_VERSION))
            act = s->kind == K_HELP ? WR_CONFIG_HELP : WR_CONFIG_VERSION;
        else if (s->kind == K_CONFIG)
            config_path = value;
    }
    if (act != WR_CONFIG_RUN) {
        if (action)
            *action = act;
        return WR_OK;
    }
    if (config_path) {
        if (config_path[0] == '\0')
            return wr_einval(err, errlen, "--config needs a file name");
        if ((rc = wr_config_load_file(cfg, config_path, err, errlen)))
            return rc;
    }

    /* Pass 2: every other flag, in order; a bool flag alone means true. */
    for (int i = 1; i < argc; i++) {
        const setting_t *s = NULL;
        const char *value = NULL;
        if ((rc = next_flag(argc, argv, &i, &s, &value, err, errlen)))
            return rc;
        if (s->kind == K_CONFIG)
            continue;
        char why[384];
        if (set_value(cfg, s, value ? value : "true", why, sizeof(why)))
            return wr_einval(err, errlen, "--%s: %s", s->flag, why);
    }

    /* Environment: secrets override both. */
    for (size_t k = 0; k < wr_config__n_settings; k++) {
        const char *v = wr_config__settings[k].env ? getenv(wr_config__settings[k].env) : NULL;
        if (!v || v[0] == '\0')
            continue;
        char why[384];
        if (set_value(cfg, &wr_config__settings[k], v, why, sizeof(why)))
            return wr_einval(err, errlen, "%s: %s", wr_config__settings[k].env, why);
    }

    /* --reuse-port shares a port between processes: with the memory store
     * each would keep its own line, and a person's place would depend on
     * the connection the kernel picked. */
    if (cfg->reuse_port && strcmp(cfg->store, "memory") == 0)
        return wr_einval(err, errlen,
                         "--reuse-port: needs a shared store (redis://...); with the memory store "
                         "every process keeps its own line");

    /* A queue with push needs --push-subject (docs/API.md 1.3). */
    for (size_t q = 0; q < cfg->n_queues; q++)
        if (!cfg->push_subject[0] && json_is_true(json_object_get(cfg->queues[q].fields, "push")))
            return wr_einval(err, errlen, "queue %s: push needs --push-subject",
                             cfg->queues[q].name);

    /* --strict-secrets: every configured secret has at least 32 bytes. */
    if (cfg->strict_secrets) {
        static const char *const names[] = {"token secret", "previous token secret",
                                            "cookie secret", "previous cookie secret"};
        const size_t lens[] = {cfg->token_secret_len, cfg->token_secret_previous_len,
                               cfg->cookie_secret_len, cfg->cookie_secret_previous_len};
        for (size_t k = 0; k < 4; k++)
            if (lens[k] > 0 && lens[k] < WR_CONFIG_SECRET_MIN)
                return wr_einval(err, errlen,
                                 "--strict-secrets: the %s is %zu bytes; at least %d are required",
                                 names[k], lens[k], WR_CONFIG_SECRET_MIN);
    }
    return WR_OK;
}

/* ---- file descriptors ---- */

wr_err_t wr_config_fit_connections(wr_config_t *cfg, unsigned long long hard_limit, unsigned margin,
                                   char *note, size_t notelen)
{
    if (note && notelen)
        note[0] = '\0';
    unsigned long long room = hard_limit > margin ? hard_limit - margin : 0;
    if (cfg->max_connections > 0) { /* explicit: it fits or the start fails */
        if ((unsigned long long)cfg->max_connections <= room)
            return WR_OK;
        if (room == 0)
            return wr_einval(note, notelen,
                             "--max-connections %u needs %llu file descriptors (connections + %u), "
                             "but the hard limit (ulimit -Hn) is %llu: raise the limit (systemd: "
                             "LimitNOFILE=)",
                             cfg->max_connections,
                             (unsigned long long)cfg->max_connections + margin, margin, hard_limit);
        return wr_einval(note, notelen,
                         "--max-connections %u needs %llu file descriptors (connections + %u), "
                         "but the hard limit (ulimit -Hn) is %llu: lower --max-connections to "
                         "%llu or raise the limit (systemd: LimitNOFILE=)",
                         cfg->max_connections, (unsigned long long)cfg->max_connections + margin,
                         margin, hard_limit, room);
    }
    if (room >= WR_CONFIG_CONNECTIONS_DEFAULT) {
        cfg->max_connections = WR_CONFIG_CONNECTIONS_DEFAULT;
        return WR_OK;
    }
    if (room == 0)
        return wr_einval(note, notelen,
                         "the hard limit on open files (ulimit -Hn) is %llu: at least %u are "
                         "needed (raise the limit; systemd: LimitNOFILE=)",
                         hard_limit, margin + 1);
    cfg->max_connections = (uint32_t)room;
    if (note && notelen)
        snprintf(note, notelen,
                 "the hard limit on open files (ulimit -Hn) is %llu: --max-connections is %llu "
                 "instead of %d (raise the limit, e.g. systemd LimitNOFILE=, for more)",
                 hard_limit, room, WR_CONFIG_CONNECTIONS_DEFAULT);
    return WR_OK;
}

/* ---- SIGHUP ---- */

/* Whether setting s has the same value in a and b. */
static bool same_value(const setting_t *s, const wr_config_t *a, const wr_config_t *b)
{
    if (memcmp((const char *)a + s->off, (const char *)b + s->off, s->size) != 0)
        return false;
    if (s->kind == K_SECRET)
        return memcmp((const char *)a + s->len_off, (const char *)b + s->len_off, sizeof(size_t)) ==
               0;
    if (s->set == wr_config__set_trusted_proxies)
        return a->n_trusted_proxies == b->n_trusted_proxies;
    if (s->set == wr_config__set_identity)
        return strcmp(a->identity_header, b->identity_header) == 0;
    return true;
}

size_t wr_config_reload(wr_config_t *running, const wr_config_t *fresh, char *restart, size_t cap)
{
    size_t changed = 0;
    out_t r = {.buf = restart, .cap = cap};
    if (cap > 0)
        restart[0] = '\0';
    for (size_t i = 0; i < wr_config__n_settings; i++) {
        const setting_t *s = &wr_config__settings[i];
        /* Rows without a name (identity_header) are compared with their
         * named row (identity). */
        if (s->size == 0 || (!s->ini && !s->flag) || same_value(s, running, fresh))
            continue;
        if (!s->reload) {
            out_printf(&r, "%s%s", r.len ? ", " : "", s->ini ? s->ini : s->flag);
            continue;
        }
        memcpy((char *)running + s->off, (const char *)fresh + s->off, s->size);
        if (s->kind == K_SECRET)
            memcpy((char *)running + s->len_off, (const char *)fresh + s->len_off, sizeof(size_t));
        changed++;
    }
    return changed;
}
