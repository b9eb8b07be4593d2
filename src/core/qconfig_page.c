/*
 * qconfig_page.c - the queue page's fields of a queue config (API 1.2,
 * "The queue page carries the shop"): page (title, brand, logoUrl,
 * accentColor, lang: the brand rules) and notice. Their rows are in
 * qconfig.c's table; these are their hooks (qconfig_internal.h).
 *
 * page: null or an object of optional members, each checked by its own
 * rule and named in an error as "page.<member>"; a given object replaces
 * the whole page (PATCH too). Texts are valid UTF-8 without control
 * characters (C0, DEL, C1), at most WR_PAGE_TEXT_MAX code points; the logo
 * is an https:// URL (its origin goes in the page's CSP) or a local path.
 * notice: a text of at most WR_NOTICE_MAX_CP code points, not blank; an
 * object of page language code to such texts (1.3: at most
 * WR_NOTICE_LANGS_MAX, WR_NOTICE_TEXTS_MAX bytes together, kept compactly
 * in wr_notice_t); or null. The keys follow the rule of a page language's
 * name (wr_page_lang_code_ok), not the list of the built-in ones: a queue's
 * config cannot see the --web-dir that may add languages; a key the page
 * does not speak shows only as the last resort (the first key).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/origin.h"
#include "core/qconfig_internal.h"

/* page (API 1.2, "The queue page carries the shop"): null or an object
 * of optional members, each checked by its own rule and named in an error
 * as "page.<member>". A given object replaces the whole page (PATCH too). */
const char *const wr_page_langs[] = {"en", "ko", "ja", "zh-Hans", "zh-Hant", "es", "fr", "de",
                                     "pt", "it", "vi", "th",      "id",      "ar", NULL};

/* Code points of valid UTF-8 s (len bytes), or -1 when it is not UTF-8
 * (overlong forms, surrogates and values past U+10FFFF are not) or holds a
 * control character (C0, DEL, C1). */
static long utf8_chars(const char *s, size_t len)
{
    long n = 0;
    for (size_t i = 0; i < len; n++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return -1;
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (k == 0 || i + k > len)
            return -1;
        uint32_t cp = k == 1 ? c : k == 2 ? (c & 0x1fu) : k == 3 ? (c & 0x0fu) : (c & 0x07u);
        for (size_t j = 1; j < k; j++) {
            unsigned char t = (unsigned char)s[i + j];
            if ((t & 0xc0) != 0x80)
                return -1;
            cp = (cp << 6) | (t & 0x3fu);
        }
        if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
            return -1; /* (U+0080..U+009F: the C1 controls, e.g. NEL) */
        i += k;
    }
    return n;
}

/* page.logoUrl: an https:// URL with a host, or a path starting with
 * exactly one "/"; printable ASCII without space, quotes, <, > or \. */
static bool logo_url_ok(const char *s, size_t len)
{
    bool ok = false;
    char origin[WR_ORIGIN_MAX + 1];
    if (len > 8 && strncasecmp(s, "https://", 8) == 0) /* its origin goes in the page's CSP */
        ok = len <= WR_PAGE_LOGO_MAX && s[len] == '\0' && wr_origin_of_url(s, origin);
    else if (len >= 1 && s[0] == '/')
        ok = len == 1 || (s[1] != '/' && s[1] != '\\');
    for (size_t i = 0; ok && i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= 0x20 || ch >= 0x7f || ch == '\\' || ch == '"' || ch == '\'' || ch == '<' ||
            ch == '>')
            ok = false;
    }
    return ok;
}

static bool accent_ok(const char *s, size_t len)
{
    if (len != 7 || s[0] != '#')
        return false;
    for (size_t i = 1; i < 7; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

static bool lang_ok(const char *s, size_t len)
{
    for (size_t i = 0; wr_page_langs[i]; i++)
        if (strlen(wr_page_langs[i]) == len && memcmp(wr_page_langs[i], s, len) == 0)
            return true;
    return false;
}

/* One member of page: absent or null leaves out ("" in out, cap bytes). */
static wr_err_t page_member(wr_field_err_t *e, const json_t *obj, const char *key, char *out,
                            size_t cap,
                            wr_err_t (*check)(wr_field_err_t *, const char *, const char *, size_t))
{
    const json_t *v = json_object_get(obj, key);
    out[0] = '\0';
    if (!v || json_is_null(v))
        return WR_OK;
    char path[WR_FIELD_MAX];
    snprintf(path, sizeof(path), "page.%s", key);
    const char *s = json_string_value(v);
    size_t len = s ? json_string_length(v) : 0;
    wr_err_t err = s ? check(e, path, s, len) : check(e, path, NULL, 0);
    if (err)
        return err;
    if (len >= cap) /* the checks bound every member below its buffer */
        return wr_field_einval(e, path, "is too long");
    memcpy(out, s, len);
    out[len] = '\0';
    return WR_OK;
}

static wr_err_t check_text(wr_field_err_t *e, const char *path, const char *s, size_t len)
{
    long n = s ? utf8_chars(s, len) : -1;
    if (n < 0 || n > WR_PAGE_TEXT_MAX)
        return wr_field_einval(e, path,
                               "must be a string of at most %d characters (no control characters), "
                               "or null",
                               WR_PAGE_TEXT_MAX);
    return WR_OK;
}

static wr_err_t check_logo(wr_field_err_t *e, const char *path, const char *s, size_t len)
{
    if (!s || len > WR_PAGE_LOGO_MAX || !logo_url_ok(s, len))
        return wr_field_einval(
            e, path,
            "must be an https:// URL or a path starting with one \"/\" (at most %d "
            "characters, no spaces, quotes or control characters), or null",
            WR_PAGE_LOGO_MAX);
    return WR_OK;
}

static wr_err_t check_accent(wr_field_err_t *e, const char *path, const char *s, size_t len)
{
    if (!s || !accent_ok(s, len))
        return wr_field_einval(e, path, "must be a colour \"#RRGGBB\", or null");
    return WR_OK;
}

static wr_err_t check_lang(wr_field_err_t *e, const char *path, const char *s, size_t len)
{
    if (!s || !lang_ok(s, len))
        return wr_field_einval(
            e, path,
            "must be one of \"en\", \"ko\", \"ja\", \"zh-Hans\", \"zh-Hant\", \"es\", "
            "\"fr\", \"de\", \"pt\", \"it\", \"vi\", \"th\", \"id\", \"ar\", or null");
    return WR_OK;
}

wr_err_t wr_qconfig__parse_page(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
{
    static const char *const keys[] = {"title", "brand", "logoUrl", "accentColor", "lang"};
    wr_page_config_t p;
    memset(&p, 0, sizeof(p));
    if (json_is_null(v)) {
        c->page = p;
        return WR_OK;
    }
    if (!json_is_object(v))
        return wr_field_einval(
            e, "page", "must be null or an object {title, brand, logoUrl, accentColor, lang}");
    wr_err_t err = wr_qconfig__reject_unknown(e, v, "page.", keys, 5);
    if (!err)
        err = page_member(e, v, "title", p.title, sizeof(p.title), check_text);
    if (!err)
        err = page_member(e, v, "brand", p.brand, sizeof(p.brand), check_text);
    if (!err)
        err = page_member(e, v, "logoUrl", p.logo_url, sizeof(p.logo_url), check_logo);
    if (!err)
        err = page_member(e, v, "accentColor", p.accent, sizeof(p.accent), check_accent);
    if (!err)
        err = page_member(e, v, "lang", p.lang, sizeof(p.lang), check_lang);
    if (err)
        return err;
    p.set = true;
    c->page = p;
    return WR_OK;
}

/* null, or the object with the members that are set. */
bool wr_qconfig__render_page(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    const wr_page_config_t *p = &c->page;
    if (!p->set) {
        *out = json_null();
        return *out != NULL;
    }
    const struct {
        const char *key;
        const char *s;
        size_t cap;
    } m[] = {
        {"title", p->title, sizeof(p->title)},
        {"brand", p->brand, sizeof(p->brand)},
        {"logoUrl", p->logo_url, sizeof(p->logo_url)},
        {"accentColor", p->accent, sizeof(p->accent)},
        {"lang", p->lang, sizeof(p->lang)},
    };
    bool ok = true;
    json_t *o = json_object();
    for (size_t i = 0; o && i < sizeof(m) / sizeof(m[0]); i++) {
        size_t len = strnlen(m[i].s, m[i].cap - 1);
        if (len > 0)
            wr_qconfig__set(o, m[i].key, json_stringn(m[i].s, len), &ok);
    }
    return wr_qconfig__finish(o, ok, out);
}

/* The code point at s[*i] (valid UTF-8, as jansson hands out), *i moved
 * past it. */
static uint32_t next_cp(const unsigned char *s, size_t len, size_t *i)
{
    uint32_t cp = s[(*i)++];
    int more = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : cp >= 0xC0 ? 1 : 0;
    cp &= more == 3 ? 0x07 : more == 2 ? 0x0F : more == 1 ? 0x1F : 0x7F;
    while (more-- > 0 && *i < len)
        cp = (cp << 6) | (s[(*i)++] & 0x3F);
    return cp;
}

static bool is_space_cp(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

bool wr_qconfig__blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len;)
        if (!is_space_cp(next_cp((const unsigned char *)s, len, &i)))
            return false;
    return true;
}

/* A well-formed page language code (qconfig.h). */
bool wr_page_lang_code_ok(const char *s, size_t len)
{
    if (!s || len == 0 || len > WR_LANG_CODE_MAX)
        return false;
    size_t run = 0;
    bool first = true;
    for (size_t i = 0; i <= len; i++) {
        char ch = i < len ? s[i] : '-';
        if (ch == '-') {
            if (run == 0 || run > 8)
                return false;
            run = 0;
            first = false;
            continue;
        }
        if (!(isalpha((unsigned char)ch) || (!first && isdigit((unsigned char)ch))))
            return false;
        run++;
    }
    return true;
}

size_t wr_notice_entries(const wr_notice_t *n, const char *codes[], const char *texts[])
{
    size_t k = 0, at = 0;
    for (; k < n->n && k < WR_NOTICE_LANGS_MAX && at < n->len; k++) {
        codes[k] = n->buf + at;
        at += strnlen(n->buf + at, n->len - at) + 1;
        texts[k] = n->buf + at;
        at += strnlen(n->buf + at, n->len - at) + 1;
    }
    codes[k] = texts[k] = NULL;
    return k;
}

const char *wr_notice_pick(const wr_notice_t *n, const char *chosen)
{
    const char *codes[WR_NOTICE_LANGS_MAX + 1], *texts[WR_NOTICE_LANGS_MAX + 1];
    size_t k = wr_notice_entries(n, codes, texts), en = k;
    for (size_t i = 0; i < k; i++) {
        if (codes[i] == chosen)
            return texts[i];
        if (en == k && strcasecmp(codes[i], "en") == 0)
            en = i;
    }
    return k == 0 ? NULL : en < k ? texts[en] : texts[0];
}

/* One text of a notice, named path in an error: a string of at most
 * WR_NOTICE_MAX_CP code points (jansson hands out valid UTF-8: every byte
 * that is not a continuation byte starts one), no NUL, not empty nor only
 * white space (1.3). */
static wr_err_t notice_text(wr_field_err_t *e, const char *path, const json_t *v)
{
    const char *s = json_string_value(v);
    size_t len = s ? json_string_length(v) : 0, cps = 0;
    for (size_t i = 0; s && i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            cps++;
    if (!s || cps > WR_NOTICE_MAX_CP || len > WR_NOTICE_MAX || memchr(s, '\0', len))
        return wr_field_einval(
            e, path, "must be a string of at most %d characters (no NUL)%s, or null",
            WR_NOTICE_MAX_CP, strchr(path, '.') ? "" : ", an object of language to such strings");
    if (wr_qconfig__blank(s, len))
        return wr_field_einval(e, path,
                               "must not be empty or only white space (null clears the notice)");
    return WR_OK;
}

/* Appends the entry code (clen bytes), text v to n (room checked by the
 * caller: the caps keep every notice within buf). */
static void notice_add(wr_notice_t *n, const char *code, size_t clen, const json_t *v)
{
    size_t len = json_string_length(v);
    memcpy(n->buf + n->len, code, clen);
    n->buf[n->len + clen] = '\0';
    memcpy(n->buf + n->len + clen + 1, json_string_value(v), len);
    n->buf[n->len + clen + 1 + len] = '\0';
    n->len = (uint16_t)(n->len + clen + len + 2);
    n->n++;
}

/* notice by language (1.3): 1..WR_NOTICE_LANGS_MAX keys, each a page
 * language code (no two alike in any case) naming a text; the texts
 * together at most WR_NOTICE_TEXTS_MAX bytes. */
static wr_err_t parse_notice_object(wr_field_err_t *e, const json_t *v, wr_notice_t *n)
{
    size_t size = json_object_size(v), total = 0;
    if (size == 0 || size > WR_NOTICE_LANGS_MAX)
        return wr_field_einval(e, "notice", "must name 1 to %d languages (null clears the notice)",
                               WR_NOTICE_LANGS_MAX);
    const char *codes[WR_NOTICE_LANGS_MAX + 1], *texts[WR_NOTICE_LANGS_MAX + 1];
    for (void *it = json_object_iter((json_t *)v); it;
         it = json_object_iter_next((json_t *)v, it)) {
        const char *key = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        if (!wr_page_lang_code_ok(key, klen))
            return wr_field_einval(e, "notice",
                                   "keys must be page language codes (\"en\", \"ko\", "
                                   "\"zh-Hant\", \"pt-BR\"...: letters, then \"-\" and letters "
                                   "or digits, at most %d characters)",
                                   WR_LANG_CODE_MAX);
        char path[WR_FIELD_MAX];
        snprintf(path, sizeof(path), "notice.%s", key);
        size_t k = wr_notice_entries(n, codes, texts);
        for (size_t i = 0; i < k; i++)
            if (strcasecmp(codes[i], key) == 0)
                return wr_field_einval(e, path, "names a language given already");
        const json_t *t = json_object_iter_value(it);
        wr_err_t err = notice_text(e, path, t);
        if (err)
            return err;
        total += json_string_length(t);
        if (total > WR_NOTICE_TEXTS_MAX)
            return wr_field_einval(e, "notice", "texts must take at most %d bytes together",
                                   WR_NOTICE_TEXTS_MAX);
        notice_add(n, key, klen, t);
    }
    n->by_lang = true;
    return WR_OK;
}

/* notice: a text (notice_text), an object of language to text
 * (parse_notice_object), or null (no notice). A stored blank notice,
 * which 1.2 accepted, reads as null (the row's WR_QF_STORED_BLANK_NULL). */
wr_err_t wr_qconfig__parse_notice(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c)
{
    wr_notice_t *n = &c->notice;
    n->n = 0;
    n->len = 0;
    n->by_lang = false;
    if (json_is_null(v))
        return WR_OK;
    wr_err_t err = json_is_object(v) ? parse_notice_object(e, v, n) : notice_text(e, "notice", v);
    if (!err && !n->by_lang)
        notice_add(n, "", 0, v);
    if (err) {
        n->n = 0;
        n->len = 0;
        n->by_lang = false;
    }
    return err;
}

/* null, the string, or the object in the order given. */
bool wr_qconfig__render_notice(const wr_queue_config_t *c, bool secrets, json_t **out)
{
    (void)secrets;
    const char *codes[WR_NOTICE_LANGS_MAX + 1], *texts[WR_NOTICE_LANGS_MAX + 1];
    size_t k = wr_notice_entries(&c->notice, codes, texts);
    if (k == 0 || !c->notice.by_lang) {
        *out = k ? json_string(texts[0]) : json_null();
        return *out != NULL;
    }
    bool ok = true;
    json_t *o = json_object();
    for (size_t i = 0; o && i < k; i++)
        wr_qconfig__set(o, codes[i], json_string(texts[i]), &ok);
    return wr_qconfig__finish(o, ok, out);
}
