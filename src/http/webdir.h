/*
 * webdir.h - the queue page's and the dashboard's files: the ones embedded
 * at build time (src/http/web/), each replaced by the file of the same name
 * in the operator's --web-dir when there is one (docs/API.md, "The queue
 * page carries the shop"). Loaded once at start; read-only afterwards.
 */
#ifndef WR_WEBDIR_H
#define WR_WEBDIR_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"

#define WR_WEBDIR_FILE_MAX  (1024 * 1024) /* bytes of one file of --web-dir */
#define WR_WEBDIR_FILES_MAX 64            /* files taken from --web-dir */
#define WR_WEBDIR_NAME_MAX  64            /* bytes of a file name */

typedef struct wr_webdir wr_webdir_t;

/*
 * Loads the page files. dir NULL or "" = the embedded files only. From dir,
 * every regular file whose name is a page file name (letters, digits, ".",
 * "-", "_", not starting with "."; at most WR_WEBDIR_NAME_MAX bytes) of a
 * known kind (.html .css .js .json .svg .png .jpg .webp .ico .txt .woff2)
 * replaces the embedded file of that name or adds one; other names are
 * ignored. i18n.json is merged into the embedded one: each language's
 * strings replace or add to the embedded language's (a new language is
 * added), so a shop changes one sentence without copying the others.
 * Errors (WR_EINVAL, or WR_EIO when dir or a file cannot be read; err gets
 * a sentence naming the file): dir not a readable directory, a file over
 * WR_WEBDIR_FILE_MAX bytes, more than WR_WEBDIR_FILES_MAX files, i18n.json
 * not an object of objects of strings, a .html template that is not UTF-8.
 * WR_ENOMEM on allocation failure. On success *out is owned by the caller
 * (wr_webdir_free).
 */
wr_err_t wr_webdir_load(const char *dir, wr_webdir_t **out, char *err, size_t errlen);

void wr_webdir_free(wr_webdir_t *w);

/* The file called name ("queue.html"): --web-dir's, else the embedded one;
 * NULL (w NULL or no such file) otherwise. Borrowed: valid until
 * wr_webdir_free (embedded ones forever); NUL-terminated, *len bytes. */
const unsigned char *wr_webdir_file(const wr_webdir_t *w, const char *name, size_t *len);

/* The merged i18n.json: parsed (borrowed, NULL when w is NULL or the
 * embedded file is missing) and as compact JSON text (borrowed, *len bytes). */
const json_t *wr_webdir_i18n(const wr_webdir_t *w);
const char *wr_webdir_i18n_text(const wr_webdir_t *w, size_t *len);

/* The strings a page in language lang needs at first: compact JSON
 * {"en": {...}, "<lang>": {...}} (English only for "en"; English alone for
 * a language the JSON lacks), and in *langs the space-separated codes of
 * every language the merged JSON has (the script fetches the whole
 * /static/i18n.json when the person switches to another). Borrowed, as
 * above; NULL when w is NULL. */
const char *wr_webdir_i18n_for(const wr_webdir_t *w, const char *lang, size_t *len,
                               const char **langs);

/* The codes of every language of the merged i18n.json (the embedded
 * ones first, in the file's order, then --web-dir's new ones), as a
 * NULL-terminated list; borrowed as above; NULL when w is NULL. */
const char *const *wr_webdir_langs(const wr_webdir_t *w);

/* How many files came from --web-dir (0 without one). */
size_t wr_webdir_count(const wr_webdir_t *w);

#endif
