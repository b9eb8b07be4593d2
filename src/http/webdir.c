/*
 * webdir.c - the page files: embedded ones, replaced by name from the
 * operator's --web-dir (webdir.h).
 *
 * Everything is read once, at start (wr_webdir_load), into memory: a
 * request never touches the file system, and a file that does not load
 * stops the start with a sentence naming it instead of giving people a
 * blank page later. Lookups are a short linear scan of the directory's
 * files (at most WR_WEBDIR_FILES_MAX), then the embedded table.
 *
 * i18n.json is the one file merged rather than replaced: the directory's
 * languages are laid over the embedded ones key by key (json_object_update
 * per language), and the merged object is kept parsed (the page renders
 * its strings) and as compact text (the page script gets it whole).
 */
#define _GNU_SOURCE /* memmem */
#include "http/webdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/embed.h"
#include "http/lang.h"

typedef struct {
    char name[WR_WEBDIR_NAME_MAX + 1];
    unsigned char *data; /* NUL-terminated */
    size_t len;
} file_t;

struct wr_webdir {
    file_t files[WR_WEBDIR_FILES_MAX];
    size_t n;
    json_t *i18n;    /* the merged object */
    char *i18n_text; /* its compact JSON */
    size_t i18n_len;
    struct {
        const char *lang; /* a key of i18n (borrowed from it) */
        char *text;       /* {"en": ..., lang: ...} */
        size_t len;
    } * per; /* one per language of i18n */
    size_t n_per;
    char *langs;        /* the codes, space-separated */
    const char **langv; /* the codes (borrowed from i18n), NULL-terminated */
};

/* Each language's first-render JSON and the list of codes (webdir.h). */
static wr_err_t split_i18n(wr_webdir_t *w)
{
    size_t n = json_object_size(w->i18n), used = 0, cap = 1;
    const char *lang;
    json_t *strings;
    json_object_foreach(w->i18n, lang, strings) cap += strlen(lang) + 1;
    w->per = calloc(n ? n : 1, sizeof(*w->per));
    w->langs = malloc(cap);
    w->langv = calloc(n + 1, sizeof(*w->langv));
    if (!w->per || !w->langs || !w->langv)
        return WR_ENOMEM;
    w->langs[0] = 0;
    json_t *en = json_object_get(w->i18n, "en");
    json_object_foreach(w->i18n, lang, strings)
    {
        json_t *two = json_object();
        if (!two || (en && json_object_set(two, "en", en) != 0) ||
            json_object_set(two, lang, strings) != 0) {
            json_decref(two);
            return WR_ENOMEM;
        }
        char *text = json_dumps(two, JSON_COMPACT);
        json_decref(two);
        if (!text)
            return WR_ENOMEM;
        w->per[w->n_per].lang = lang;
        w->per[w->n_per].text = text;
        w->per[w->n_per].len = strlen(text);
        w->langv[w->n_per] = lang;
        w->n_per++;
        used += (size_t)snprintf(w->langs + used, cap - used, "%s%s", used ? " " : "", lang);
    }
    return WR_OK;
}

static const char *const kinds[] = {".html", ".css",  ".js",  ".json", ".svg",   ".png",
                                    ".jpg",  ".webp", ".ico", ".txt",  ".woff2", NULL};

/* A page file name of a known kind (the rule of webdir.h). */
static bool page_name(const char *name)
{
    size_t n = strnlen(name, WR_WEBDIR_NAME_MAX + 1);
    if (n == 0 || n > WR_WEBDIR_NAME_MAX || name[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
            return false;
    }
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && kinds[i]; i++)
        if (strcmp(dot, kinds[i]) == 0)
            return true;
    return false;
}

/* Valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF). */
static bool utf8_ok(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (k == 0 || i + k > len)
            return false;
        unsigned cp = k == 1 ? c : k == 2 ? (c & 0x1fu) : k == 3 ? (c & 0x0fu) : (c & 0x07u);
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + j] & 0x3fu);
        }
        if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k;
    }
    return true;
}

__attribute__((format(printf, 3, 4))) static wr_err_t say(char *err, size_t errlen, const char *fmt,
                                                          ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return WR_EINVAL;
}

/* Reads path (a regular file of at most WR_WEBDIR_FILE_MAX bytes) into f. */
static wr_err_t read_file(const char *path, file_t *f, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        say(err, errlen, "--web-dir: cannot read %s: %s", path, strerror(errno));
        return WR_EIO;
    }
    unsigned char *buf = malloc(WR_WEBDIR_FILE_MAX + 2);
    if (!buf) {
        fclose(fp);
        return WR_ENOMEM;
    }
    size_t n = fread(buf, 1, WR_WEBDIR_FILE_MAX + 1, fp);
    bool bad = ferror(fp) != 0;
    fclose(fp);
    if (bad) {
        free(buf);
        say(err, errlen, "--web-dir: cannot read %s", path);
        return WR_EIO;
    }
    if (n > WR_WEBDIR_FILE_MAX) {
        free(buf);
        return say(err, errlen, "--web-dir: %s is larger than %d bytes", path, WR_WEBDIR_FILE_MAX);
    }
    buf[n] = 0;
    f->data = buf;
    f->len = n;
    return WR_OK;
}

/* Whether text (len bytes) holds needle. */
static bool holds(const unsigned char *text, size_t len, const char *needle)
{
    return memmem(text, len, needle, strlen(needle)) != NULL;
}

/*
 * The parts a template cannot do without (examples/page/README.md, the
 * template contract): queue.html's #app and state; with the page script,
 * what the script reads; dashboard.html's script and the ids it fills.
 * A missing one stops the start, naming it.
 */
static wr_err_t check_template(const file_t *f, const char *dir, char *err, size_t errlen)
{
    static const char *const queue_parts[] = {"id=\"app\"", "{{state}}", NULL};
    static const char *const script_parts[] = {
        "{{queue}}",    "{{lang}}",       "{{langs}}",     "{{i18n}}",
        "{{retry_ms}}", "{{target_url}}", "id=\"status\"", NULL};
    static const char *const dash_parts[] = {"/static/dashboard.js", "id=\"login\"", "id=\"board\"",
                                             "id=\"queues\"", NULL};
    const char *const *need = NULL, *const *more = NULL;
    if (strcmp(f->name, "queue.html") == 0) {
        need = queue_parts;
        if (holds(f->data, f->len, "/static/queue.js"))
            more = script_parts;
    } else if (strcmp(f->name, "dashboard.html") == 0) {
        need = dash_parts;
    }
    for (size_t i = 0; need && need[i]; i++)
        if (!holds(f->data, f->len, need[i]))
            return say(err, errlen,
                       "--web-dir: %s/%s lacks %s, a part every %s needs (examples/page/README.md)",
                       dir, f->name, need[i], f->name);
    for (size_t i = 0; more && more[i]; i++)
        if (!holds(f->data, f->len, more[i]))
            return say(err, errlen,
                       "--web-dir: %s/%s loads /static/queue.js but lacks %s, which the script "
                       "reads (examples/page/README.md)",
                       dir, f->name, more[i]);
    return WR_OK;
}

/* Whether the directory's templates or scripts name the string key (a
 * shop's own {{t:key}}, data-t="key" or t('key')). */
static bool key_used(const wr_webdir_t *w, const char *key)
{
    char tpl[WR_WEBDIR_NAME_MAX + 8], attr[WR_WEBDIR_NAME_MAX + 12], q1[WR_WEBDIR_NAME_MAX + 4],
        q2[WR_WEBDIR_NAME_MAX + 4];
    if (strlen(key) > WR_WEBDIR_NAME_MAX)
        return false;
    snprintf(tpl, sizeof(tpl), "{{t:%s}}", key);
    snprintf(attr, sizeof(attr), "data-t=\"%s\"", key);
    snprintf(q1, sizeof(q1), "'%s'", key);
    snprintf(q2, sizeof(q2), "\"%s\"", key);
    for (size_t i = 0; i < w->n; i++) {
        const file_t *f = &w->files[i];
        size_t nl = strlen(f->name);
        bool html = nl > 5 && strcmp(f->name + nl - 5, ".html") == 0;
        bool js = nl > 3 && strcmp(f->name + nl - 3, ".js") == 0;
        if ((html && (holds(f->data, f->len, tpl) || holds(f->data, f->len, attr))) ||
            (js && (holds(f->data, f->len, q1) || holds(f->data, f->len, q2))))
            return true;
    }
    return false;
}

/* Lays the directory's i18n.json (text, len bytes) over the embedded one. */
static wr_err_t merge_i18n(wr_webdir_t *w, const file_t *f, const char *dir, char *err,
                           size_t errlen)
{
    json_error_t je;
    json_t *mine = json_loadb((const char *)f->data, f->len, JSON_REJECT_DUPLICATES, &je);
    if (!mine)
        return say(err, errlen, "--web-dir: %s/i18n.json is not JSON: line %d: %s", dir, je.line,
                   je.text);
    const char *lang, *key;
    json_t *strings, *s;
    wr_err_t rc = WR_OK;
    const json_t *en = json_object_get(w->i18n, "en"); /* the embedded keys, before the merge */
    if (!json_is_object(mine))
        rc = say(err, errlen, "--web-dir: %s/i18n.json must be an object of languages", dir);
    json_object_foreach(mine, lang, strings)
    {
        if (rc)
            break;
        if (!wr_lang_code_ok(lang)) {
            rc = say(err, errlen,
                     "--web-dir: %s/i18n.json: \"%s\" is not a language code (like \"nl\", "
                     "\"pt-BR\", \"zh-Hant\")",
                     dir, lang);
            break;
        }
        if (!json_is_object(strings)) {
            rc = say(err, errlen, "--web-dir: %s/i18n.json: \"%s\" must be an object of strings",
                     dir, lang);
            break;
        }
        json_object_foreach(strings, key, s)
        {
            if (!json_is_string(s)) {
                rc = say(err, errlen, "--web-dir: %s/i18n.json: \"%s\".\"%s\" must be a string",
                         dir, lang, key);
                break;
            }
            /* a key the page does not know: a typo, unless the shop's own
             * template or script uses it */
            if (!json_object_get(en, key) && !key_used(w, key)) {
                rc = say(err, errlen,
                         "--web-dir: %s/i18n.json: \"%s\".\"%s\" is not a string of the page "
                         "(a typo?), and no template or script of the directory uses it",
                         dir, lang, key);
                break;
            }
        }
        if (rc)
            break;
        json_t *have = json_object_get(w->i18n, lang);
        if (have ? json_object_update(have, strings) != 0
                 : json_object_set(w->i18n, lang, strings) != 0)
            rc = WR_ENOMEM;
    }
    json_decref(mine);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const file_t *)a)->name, ((const file_t *)b)->name);
}

static wr_err_t load_dir(wr_webdir_t *w, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        say(err, errlen, "--web-dir: cannot open %s: %s", dir, strerror(errno));
        return WR_EIO;
    }
    wr_err_t rc = WR_OK;
    struct dirent *de;
    while (rc == WR_OK && (de = readdir(d)) != NULL) {
        if (!page_name(de->d_name))
            continue;
        char path[4096];
        if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path)) {
            rc = say(err, errlen, "--web-dir: the path %s is too long", dir);
            break;
        }
        struct stat st;
        if (stat(path, &st) != 0) {
            rc = say(err, errlen, "--web-dir: cannot read %s: %s", path, strerror(errno));
            break;
        }
        if (!S_ISREG(st.st_mode))
            continue;
        if (w->n == WR_WEBDIR_FILES_MAX) {
            rc = say(err, errlen, "--web-dir: %s has more than %d page files", dir,
                     WR_WEBDIR_FILES_MAX);
            break;
        }
        file_t *f = &w->files[w->n];
        size_t nl = strnlen(de->d_name, WR_WEBDIR_NAME_MAX); /* page_name: at most that */
        memcpy(f->name, de->d_name, nl);
        f->name[nl] = '\0';
        if ((rc = read_file(path, f, err, errlen)) != WR_OK)
            break;
        w->n++;
        if (nl > 5 && strcmp(f->name + nl - 5, ".html") == 0 && !utf8_ok(f->data, f->len))
            rc = say(err, errlen, "--web-dir: %s is not UTF-8", path);
    }
    closedir(d);
    if (rc)
        return rc;
    qsort(w->files, w->n, sizeof(w->files[0]), by_name);
    for (size_t i = 0; i < w->n; i++)
        if ((rc = check_template(&w->files[i], dir, err, errlen)) != WR_OK)
            return rc;
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->files[i].name, "i18n.json") == 0)
            return merge_i18n(w, &w->files[i], dir, err, errlen);
    return WR_OK;
}

wr_err_t wr_webdir_load(const char *dir, wr_webdir_t **out, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    wr_webdir_t *w = calloc(1, sizeof(*w));
    if (!w)
        return WR_ENOMEM;
    const wr_embed_file_t *e = wr_embed_find("web/i18n.json");
    w->i18n = e ? json_loadb((const char *)e->data, e->len, 0, NULL) : json_object();
    wr_err_t rc = w->i18n && json_is_object(w->i18n) ? WR_OK : WR_ENOMEM;
    if (rc == WR_OK && dir && dir[0])
        rc = load_dir(w, dir, err, errlen);
    if (rc == WR_OK) {
        w->i18n_text = json_dumps(w->i18n, JSON_COMPACT);
        if (!w->i18n_text)
            rc = WR_ENOMEM;
        else
            w->i18n_len = strlen(w->i18n_text);
        if (rc == WR_OK)
            rc = split_i18n(w);
    }
    if (rc != WR_OK) {
        wr_webdir_free(w);
        return rc;
    }
    *out = w;
    return WR_OK;
}

void wr_webdir_free(wr_webdir_t *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++)
        free(w->files[i].data);
    for (size_t i = 0; i < w->n_per; i++)
        free(w->per[i].text);
    free(w->per);
    free(w->langs);
    free(w->langv);
    json_decref(w->i18n);
    free(w->i18n_text);
    free(w);
}

const unsigned char *wr_webdir_file(const wr_webdir_t *w, const char *name, size_t *len)
{
    if (!name || !len)
        return NULL;
    if (w && w->i18n_text && strcmp(name, "i18n.json") == 0) { /* the merged one */
        *len = w->i18n_len;
        return (const unsigned char *)w->i18n_text;
    }
    for (size_t i = 0; w && i < w->n; i++)
        if (strcmp(w->files[i].name, name) == 0) {
            *len = w->files[i].len;
            return w->files[i].data;
        }
    char path[WR_WEBDIR_NAME_MAX + 8];
    if (strlen(name) > WR_WEBDIR_NAME_MAX)
        return NULL;
    snprintf(path, sizeof(path), "web/%s", name);
    const wr_embed_file_t *f = wr_embed_find(path);
    if (!f)
        return NULL;
    *len = f->len;
    return f->data;
}

const json_t *wr_webdir_i18n(const wr_webdir_t *w)
{
    return w ? w->i18n : NULL;
}

const char *wr_webdir_i18n_text(const wr_webdir_t *w, size_t *len)
{
    if (!w || !w->i18n_text) {
        *len = 0;
        return NULL;
    }
    *len = w->i18n_len;
    return w->i18n_text;
}

const char *wr_webdir_i18n_for(const wr_webdir_t *w, const char *lang, size_t *len,
                               const char **langs)
{
    if (!w || !len)
        return NULL;
    size_t pick = w->n_per; /* English's, when lang is not there */
    for (size_t i = 0; i < w->n_per; i++) {
        if (lang && strcmp(w->per[i].lang, lang) == 0) {
            pick = i;
            break;
        }
        if (strcmp(w->per[i].lang, "en") == 0 && pick == w->n_per)
            pick = i;
    }
    if (langs)
        *langs = w->langs;
    if (pick == w->n_per) {
        *len = 0;
        return NULL;
    }
    *len = w->per[pick].len;
    return w->per[pick].text;
}

const char *const *wr_webdir_langs(const wr_webdir_t *w)
{
    return w ? w->langv : NULL;
}

size_t wr_webdir_count(const wr_webdir_t *w)
{
    return w ? w->n : 0;
}
