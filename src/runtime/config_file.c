/*
 * config_file.c - the INI file half of the config module (config.h):
 * wr_config_load_file and the [queue NAME] declarations it creates.
 *
 * [server] keys go to wr_config_set, so a key means the same as its flag.
 * The file goes through libinih. It is read into memory first (at most
 * FILE_MAX bytes) and checked line by line: no NUL bytes, no line longer
 * than LINE_MAX_INI (libinih would silently cut it), and every [section]
 * header known - also sections without keys, which libinih never reports.
 * libinih's process-wide knobs are set for the parse and restored after:
 * heap line buffer of LINE_MAX_INI, stop at the first error (so the line it
 * returns is the one our handler failed on), no multi-line values. A key
 * set twice in one section, or a section header met twice, is an error
 * naming the line (libinih would keep the last silently). Config
 * loading runs once at start, before any thread exists. Errors are
 * "FILE:LINE: ..." (or "FILE: ..." for the file as a whole).
 *
 * [queue NAME] keys are queue-config JSON fields. Each value is parsed as
 * JSON (any type) or kept as a string, checked on its own with
 * wr_qconfig_patch (so a bad key or value is reported with its line), and
 * stored in cfg->queues[i].fields, a JSON object the config owns until
 * wr_config_free. Whether a queue's whole config is complete (it has a
 * rate) is checked by wr_qconfig_parse where the queue is created.
 */
#include "runtime/config.h"

#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ids.h"

#define FILE_MAX     (1024 * 1024) /* bytes of a config file */
#define LINE_MAX_INI 8192          /* bytes of one INI line, with its newline */

/* Writes "PATH:LINE: message" (line 0: "PATH: message") to err; WR_EINVAL. */
__attribute__((format(printf, 5, 6))) static wr_err_t
where(char *err, size_t errlen, const char *path, int line, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return WR_EINVAL;
    int n = line > 0 ? snprintf(err, errlen, "%s:%d: ", path, line)
                     : snprintf(err, errlen, "%s: ", path);
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return WR_EINVAL;
}

void wr_config_free(wr_config_t *cfg)
{
    for (size_t i = 0; i < cfg->n_queues && i < WR_CONFIG_QUEUES_MAX; i++) {
        json_decref(cfg->queues[i].fields);
        cfg->queues[i].fields = NULL;
        cfg->queues[i].name[0] = '\0';
    }
    cfg->n_queues = 0;
}

typedef struct {
    wr_config_t *cfg;
    json_t *seen;  /* "SECTION\nKEY" of every key so far: a second one is an error */
    char msg[512]; /* the handler's error, without the file:line prefix */
    bool failed;
} ini_ctx_t;

/* Notes key in section (its canonical name, "server" or "queue NAME");
 * false (message in c->msg) when the section already set it. */
static bool first_key(ini_ctx_t *c, const char *section, const char *key)
{
    char both[600];
    snprintf(both, sizeof(both), "%.300s\n%.290s", section, key);
    if (json_object_get(c->seen, both)) {
        snprintf(c->msg, sizeof(c->msg),
                 "[%.300s]: key '%.100s' set again (each key at most once per section)", section,
                 key);
        return false;
    }
    if (json_object_set_new(c->seen, both, json_true()) != 0) {
        snprintf(c->msg, sizeof(c->msg), "out of memory");
        return false;
    }
    return true;
}

/* If section is "queue NAME" (NAME valid), copies NAME to name and returns
 * true. */
static bool queue_section(const char *section, char name[WR_QUEUE_NAME_MAX + 1])
{
    if (strncmp(section, "queue", 5) != 0 || (section[5] != ' ' && section[5] != '\t'))
        return false;
    const char *p = section + 5;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strlen(p);
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (!wr_ids_valid_queue_n(p, n))
        return false;
    memcpy(name, p, n);
    name[n] = '\0';
    return true;
}

/* Checks a section name; on error writes a message to msg. */
static bool check_section(const char *section, char *msg, size_t msg_len)
{
    char name[WR_QUEUE_NAME_MAX + 1];
    if (strcmp(section, "server") == 0 || queue_section(section, name))
        return true;
    if (strncmp(section, "queue", 5) == 0)
        snprintf(msg, msg_len, "[%.300s]: the queue name must match " WR_QUEUE_NAME_RULE, section);
    else
        snprintf(msg, msg_len, "unknown section [%.300s] (expected [server] or [queue NAME])",
                 section);
    return false;
}

/* The queue declaration named name, created if new; NULL if the table is full. */
static wr_config_queue_t *queue_slot(wr_config_t *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n_queues; i++)
        if (strcmp(cfg->queues[i].name, name) == 0)
            return &cfg->queues[i];
    if (cfg->n_queues >= WR_CONFIG_QUEUES_MAX)
        return NULL;
    wr_config_queue_t *q = &cfg->queues[cfg->n_queues];
    json_t *obj = json_object();
    if (!obj)
        return NULL;
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->fields = obj;
    cfg->n_queues++;
    return q;
}

static int ini_queue_key(ini_ctx_t *c, const char *qname, const char *key, const char *value)
{
    json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);
    if (!v)
        v = json_string(value);
    json_t *one = json_object();
    if (!v || !one || json_object_set(one, key, v) != 0) {
        snprintf(c->msg, sizeof(c->msg), "out of memory");
        goto fail;
    }
    /* Check the key and value alone, on a base that has a rate. */
    wr_queue_config_t base, out;
    wr_qconfig_defaults(&base);
    base.admit_per_second = 1;
    char field[WR_FIELD_MAX], why[256];
    if (wr_qconfig_patch(&base, one, &out, field, sizeof(field), why, sizeof(why)) != WR_OK ||
        wr_qconfig_check_available(&out, field, sizeof(field), why, sizeof(why)) != WR_OK) {
        if (strcmp(field, key) == 0 && strcmp(why, "unknown field") == 0)
            snprintf(c->msg, sizeof(c->msg), "[queue %s]: unknown key '%.100s'", qname, key);
        else
            snprintf(c->msg, sizeof(c->msg), "[queue %s]: %s %s", qname, field, why);
        goto fail;
    }
    wr_config_queue_t *q = queue_slot(c->cfg, qname);
    if (!q) {
        snprintf(c->msg, sizeof(c->msg), "more than %d [queue] sections", WR_CONFIG_QUEUES_MAX);
        goto fail;
    }
    if (json_object_set(q->fields, key, v) != 0) {
        snprintf(c->msg, sizeof(c->msg), "out of memory");
        goto fail;
    }
    json_decref(one);
    json_decref(v);
    return 1;
fail:
    json_decref(one);
    json_decref(v);
    c->failed = true;
    return 0;
}

static int on_ini_line(void *user, const char *section, const char *name, const char *value)
{
    ini_ctx_t *c = user;
    char qname[WR_QUEUE_NAME_MAX + 1];
    if (strcmp(section, "server") == 0) {
        if (first_key(c, "server", name) &&
            wr_config_set(c->cfg, name, value, c->msg, sizeof(c->msg)) == WR_OK)
            return 1;
        c->failed = true;
        return 0;
    }
    if (queue_section(section, qname)) {
        char canon[WR_QUEUE_NAME_MAX + 8];
        snprintf(canon, sizeof(canon), "queue %s", qname);
        if (!first_key(c, canon, name)) {
            c->failed = true;
            return 0;
        }
        return ini_queue_key(c, qname, name, value);
    }
    if (section[0] == '\0')
        snprintf(c->msg, sizeof(c->msg), "key '%.100s' outside a section", name);
    else
        check_section(section, c->msg, sizeof(c->msg));
    c->failed = true;
    return 0;
}

/* Reads path into a NUL-terminated malloc'd buffer (at most FILE_MAX bytes). */
static wr_err_t read_file(const char *path, char **out, char *err, size_t errlen)
{
    wr_err_t rc = WR_OK;
    char *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return where(err, errlen, path, 0, "cannot open the config file");
    buf = malloc(FILE_MAX + 1);
    if (!buf) {
        rc = WR_ENOMEM;
        goto out;
    }
    size_t n = fread(buf, 1, FILE_MAX + 1, f);
    if (ferror(f)) {
        rc = where(err, errlen, path, 0, "read error");
        goto out;
    }
    if (n > FILE_MAX) {
        rc = where(err, errlen, path, 0, "larger than %d bytes", FILE_MAX);
        goto out;
    }
    buf[n] = '\0';
    if (memchr(buf, '\0', n)) {
        rc = where(err, errlen, path, 0, "contains a NUL byte");
        goto out;
    }
    *out = buf;
    buf = NULL;
out:
    free(buf);
    fclose(f);
    return rc;
}

/* Checks line lengths and section headers before libinih sees the text,
 * and declares every [queue NAME] section (libinih never reports a section
 * without keys: an empty one must still declare its queue, so that the
 * missing rate is an error at start instead of a queue silently skipped).
 * A section header met twice ([server], or [queue NAME] by its name) is an
 * error naming both lines: libinih would merge them, the last key winning. */
static wr_err_t prescan(wr_config_t *cfg, const char *path, const char *text, char *err,
                        size_t errlen)
{
    json_t *lines = json_object(); /* canonical section name -> its first line */
    if (!lines)
        return WR_ENOMEM;
    wr_err_t rc = WR_OK;
    int lineno = 0;
    const char *p = text;
    while (*p) {
        lineno++;
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len + 3 > LINE_MAX_INI) {
            rc = where(err, errlen, path, lineno, "line longer than %d bytes", LINE_MAX_INI - 3);
            goto out;
        }
        const char *s = p, *e = p + len;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        if (lineno == 1 && e - s >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
            s += 3;
        if (s < e && *s == '[') {
            const char *close = memchr(s, ']', (size_t)(e - s));
            if (close) {
                char section[512];
                size_t sl = (size_t)(close - s - 1);
                if (sl >= sizeof(section))
                    sl = sizeof(section) - 1;
                memcpy(section, s + 1, sl);
                section[sl] = '\0';
                char msg[512];
                if (!check_section(section, msg, sizeof(msg))) {
                    rc = where(err, errlen, path, lineno, "%s", msg);
                    goto out;
                }
                char qname[WR_QUEUE_NAME_MAX + 1], canon[WR_QUEUE_NAME_MAX + 8] = "server";
                bool is_queue = queue_section(section, qname);
                if (is_queue)
                    snprintf(canon, sizeof(canon), "queue %s", qname);
                const json_t *first = json_object_get(lines, canon);
                if (first) {
                    rc = where(err, errlen, path, lineno,
                               "[%s] appears again (first at line %d; one section each)", canon,
                               (int)json_integer_value(first));
                    goto out;
                }
                if (json_object_set_new(lines, canon, json_integer(lineno)) != 0) {
                    rc = WR_ENOMEM;
                    goto out;
                }
                if (is_queue && !queue_slot(cfg, qname)) {
                    rc = where(err, errlen, path, lineno, "more than %d [queue] sections",
                               WR_CONFIG_QUEUES_MAX);
                    goto out;
                }
            }
        }
        p = nl ? nl + 1 : p + len;
    }
out:
    json_decref(lines);
    return rc;
}

/* libinih's process-wide settings. */
typedef struct {
    bool use_stack, allow_realloc, stop_on_first_error, allow_multiline;
    int initial_alloc, max_line;
} knobs_t;

/* Sets libinih's settings to k; returns the ones they replace. */
static knobs_t knobs_swap(knobs_t k)
{
    knobs_t old = {.use_stack = ini_use_stack,
                   .allow_realloc = ini_allow_realloc,
                   .stop_on_first_error = ini_stop_on_first_error,
                   .allow_multiline = ini_allow_multiline,
                   .initial_alloc = ini_initial_alloc,
                   .max_line = ini_max_line};
    ini_use_stack = k.use_stack;
    ini_allow_realloc = k.allow_realloc;
    ini_stop_on_first_error = k.stop_on_first_error;
    ini_allow_multiline = k.allow_multiline;
    ini_initial_alloc = k.initial_alloc;
    ini_max_line = k.max_line;
    return old;
}

wr_err_t wr_config_load_file(wr_config_t *cfg, const char *path, char *err, size_t errlen)
{
    char *text = NULL;
    wr_err_t rc = read_file(path, &text, err, errlen);
    if (rc)
        return rc;
    if ((rc = prescan(cfg, path, text, err, errlen)))
        goto out;

    ini_ctx_t ctx = {.cfg = cfg, .seen = json_object(), .msg = "", .failed = false};
    if (!ctx.seen) {
        rc = WR_ENOMEM;
        goto out;
    }
    knobs_t saved = knobs_swap((knobs_t){.use_stack = false,
                                         .allow_realloc = false,
                                         .initial_alloc = LINE_MAX_INI,
                                         .max_line = LINE_MAX_INI,
                                         .stop_on_first_error = true,
                                         .allow_multiline = false});
    int line = ini_parse_string(text, on_ini_line, &ctx);
    knobs_swap(saved);
    json_decref(ctx.seen);

    if (line == -2) {
        rc = WR_ENOMEM;
    } else if (line != 0) {
        if (ctx.failed)
            rc = where(err, errlen, path, line, "%s", ctx.msg);
        else
            rc = where(err, errlen, path, line, "syntax error (expected [section] or key = value)");
    }
out:
    free(text);
    return rc;
}
