/*
 * pushmsg.c - the JSON of a Web Push (pushmsg.h).
 *
 * Text lookup: the language's object, then "en"'s, then the built-in
 * English below (the same as i18n.json's "en", so a --web-dir that
 * removes a key still never sends an empty notification). The JSON is
 * written by jansson with JSON_PRESERVE_ORDER | JSON_COMPACT, so every
 * string is escaped by one encoder; a text is cut to WR_PUSHMSG_TEXT_MAX
 * bytes at a UTF-8 character boundary, so the message stays within one
 * encrypted record whatever --web-dir holds.
 */
#include "core/pushmsg.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct texts {
    const char *title_key, *body_key, *title_en, *body_en, *status, *reason;
};

static const struct texts kinds[] = {
    [WR_PUSHMSG_ADMITTED] = {"push_admitted_title", "push_admitted_body", "It's your turn",
                             "Open the page now to go in before your pass expires.", "admitted",
                             NULL},
    [WR_PUSHMSG_CLOSED] = {"push_closed_title", "push_closed_body", "The sale has ended",
                           "The sale is closed. Thank you for waiting.", "closed", "closed"},
    [WR_PUSHMSG_SOLD_OUT] = {"push_soldout_title", "push_soldout_body", "Sold out",
                             "Everything has been sold. Thank you for waiting.", "closed",
                             "soldOut"},
};

/* True when s holds something other than white space. */
static bool has_text(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s))
            return true;
    return false;
}

/* The string key of language lang in i18n, or NULL when missing or blank. */
static const char *lookup(const json_t *i18n, const char *lang, const char *key)
{
    const json_t *l = i18n && lang ? json_object_get(i18n, lang) : NULL;
    const char *s = json_string_value(json_is_object(l) ? json_object_get(l, key) : NULL);
    return has_text(s) ? s : NULL;
}

/* A JSON string of text cut to WR_PUSHMSG_TEXT_MAX bytes at a character
 * boundary (never inside a UTF-8 sequence). */
static json_t *cut_string(const char *text)
{
    size_t n = strlen(text);
    if (n > WR_PUSHMSG_TEXT_MAX) {
        n = WR_PUSHMSG_TEXT_MAX;
        while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
            n--;
    }
    return json_stringn(text, n);
}

static const char *text_of(const json_t *i18n, const char *lang, const char *key,
                           const char *builtin)
{
    const char *s = lookup(i18n, lang, key);
    if (!s)
        s = lookup(i18n, "en", key);
    return s ? s : builtin;
}

wr_err_t wr_pushmsg_build(const json_t *i18n, const char *lang, wr_pushmsg_kind_t kind,
                          const char *queue, int64_t expires_at, char *out, size_t cap,
                          size_t *out_len)
{
    if (!queue || !*queue || !out || (unsigned)kind > WR_PUSHMSG_SOLD_OUT)
        return WR_EINVAL;
    if (!lang || !*lang)
        lang = "en";
    const struct texts *t = &kinds[kind];
    char url[300];
    if (snprintf(url, sizeof url, "/q/%s", queue) >= (int)sizeof url)
        return WR_EINVAL;
    wr_err_t err = WR_ENOMEM;
    char *s = NULL;
    json_t *o = json_object();
    if (!o || json_object_set_new(o, "queue", json_string(queue)) != 0 ||
        json_object_set_new(o, "status", json_string(t->status)) != 0 ||
        (t->reason && json_object_set_new(o, "reason", json_string(t->reason)) != 0) ||
        json_object_set_new(o, "title",
                            cut_string(text_of(i18n, lang, t->title_key, t->title_en))) != 0 ||
        json_object_set_new(o, "body", cut_string(text_of(i18n, lang, t->body_key, t->body_en))) !=
            0 ||
        json_object_set_new(o, "url", json_string(url)) != 0 ||
        (kind == WR_PUSHMSG_ADMITTED &&
         json_object_set_new(o, "expiresAt", json_integer(expires_at)) != 0))
        goto out;
    s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!s)
        goto out;
    size_t n = strlen(s);
    if (n + 1 > cap) {
        err = WR_ELIMIT;
        goto out;
    }
    memcpy(out, s, n + 1);
    if (out_len)
        *out_len = n;
    err = WR_OK;
out:
    free(s);
    json_decref(o);
    return err;
}
