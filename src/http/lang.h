/*
 * lang.h - language tags as browsers send them, matched against the
 * languages a page offers (RFC 9110 Accept-Language, RFC 4647 lookup with
 * the legacy and region forms browsers still send). Pure functions, no
 * state, no I/O; page.c uses them with the page's languages (the embedded
 * i18n.json's, and --web-dir's added ones).
 */
#ifndef WR_LANG_H
#define WR_LANG_H

#include <stdbool.h>
#include <stddef.h>

#define WR_LANG_TAG_MAX 35 /* bytes of a language tag looked at (RFC 5646's longest common) */

/*
 * The offered language that one tag (tlen bytes, "-" or "_" between
 * subtags, any case) names, or NULL. offered is a NULL-terminated list of
 * codes ("en", "zh-Hant", "pt-BR"...); the result is one of its pointers.
 * In order: the whole tag, then (Chinese) the script its script or region
 * means (zh-Hant for Hant, TW, HK, MO; else zh-Hans), then the tag with
 * its last subtags dropped one by one (pt-BR: pt); each also with the
 * primary subtag's other names (in/id, iw/he, ji/yi, jw/jv, mo/ro,
 * tl/fil, no/nb/nn); last, the first offered code with the same primary
 * subtag (pt-PT when only pt-BR is offered). Comparisons ignore case.
 */
const char *wr_lang_match(const char *const *offered, const char *tag, size_t tlen);

/*
 * Of the offered languages, the one an Accept-Language value asks for:
 * the entry with the highest q (the first listed on a tie; q=0 and
 * malformed q never) that wr_lang_match finds; when none: the one
 * fallback names (wr_lang_match), else "en" when offered, else offered[0].
 * accept_language and fallback may be NULL. Returns one of offered's
 * pointers (offered must hold at least one code).
 */
const char *wr_lang_pick(const char *const *offered, const char *accept_language,
                         const char *fallback);

/* True when a page in language code (a tag) is written right to left:
 * Arabic, Hebrew, Persian, Urdu, Yiddish, Pashto, Sindhi, Sorani, Dhivehi,
 * Uyghur, Syriac (by the primary subtag, legacy forms included), or any
 * tag with the script Arab, Hebr, Syrc, Thaa, Nkoo or Adlm. */
bool wr_lang_rtl(const char *code);

/* A well-formed language code for a page: 1-8 letters, then "-" and 1-8
 * letters or digits, repeated, at most WR_LANG_TAG_MAX bytes. */
bool wr_lang_code_ok(const char *code);

#endif
