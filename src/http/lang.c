/*
 * lang.c - language tags matched against a page's languages (lang.h).
 *
 * Browsers name languages in more ways than a page lists them: legacy
 * primary subtags (Android still sends "in-ID" for Indonesian, "iw" for
 * Hebrew), regions ("pt-BR", "es-419"), scripts ("zh-Hant-TW"). One tag is
 * looked up as RFC 4647's "lookup" does (the whole tag, then shorter
 * prefixes), under each name of its primary subtag (aliases[]), with
 * Chinese's script read from the script or region first, and last by the
 * primary subtag alone, so a page that offers only "pt-BR" still serves a
 * "pt-PT" visitor in Portuguese. Every buffer is bounded by
 * WR_LANG_TAG_MAX; a longer tag is looked at by its first bytes.
 */
#define _GNU_SOURCE /* strncasecmp */
#include "http/lang.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/qconfig.h"

#define LANG_ENTRIES_MAX 64 /* Accept-Language entries looked at */

/* Other names of a primary subtag (ISO 639 changes, macrolanguages). */
static const struct {
    const char *from, *to;
} aliases[] = {
    {"in", "id"}, {"id", "in"}, {"iw", "he"}, {"he", "iw"},  {"ji", "yi"},  {"yi", "ji"},
    {"jw", "jv"}, {"jv", "jw"}, {"mo", "ro"}, {"tl", "fil"}, {"fil", "tl"}, {"no", "nb"},
    {"no", "nn"}, {"nb", "no"}, {"nn", "no"}, {"nb", "nn"},  {"nn", "nb"},
};

/* Length of the first subtag of s (n bytes). */
static size_t subtag_len(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] != '-' && s[i] != '_')
        i++;
    return i;
}

/* The offered code equal to s (n bytes, "_" read as "-"), or NULL. */
static const char *find(const char *const *offered, const char *s, size_t n)
{
    for (size_t i = 0; offered[i]; i++) {
        if (strlen(offered[i]) != n)
            continue;
        size_t k = 0;
        for (; k < n; k++) {
            char a = s[k] == '_' ? '-' : s[k];
            if (tolower((unsigned char)a) != tolower((unsigned char)offered[i][k]))
                break;
        }
        if (k == n)
            return offered[i];
    }
    return NULL;
}

/* Chinese: Traditional for the script Hant or a region that writes it. */
static bool chinese_traditional(const char *rest, size_t n)
{
    static const char *const trad[] = {"hant", "tw", "hk", "mo", NULL};
    while (n > 1) {
        rest++, n--; /* the "-" */
        size_t k = subtag_len(rest, n);
        for (size_t i = 0; trad[i]; i++)
            if (strlen(trad[i]) == k && strncasecmp(rest, trad[i], k) == 0)
                return true;
        if (k == 4 && strncasecmp(rest, "hans", 4) == 0)
            return false;
        rest += k, n -= k;
    }
    return false;
}

/* Lookup of primary p (plen) + rest (rlen, starting at "-" or empty):
 * the whole tag, Chinese's script, then shorter prefixes. */
static const char *lookup(const char *const *offered, const char *p, size_t plen, const char *rest,
                          size_t rlen)
{
    char buf[WR_LANG_TAG_MAX + 1];
    if (plen + rlen > WR_LANG_TAG_MAX)
        rlen = plen < WR_LANG_TAG_MAX ? WR_LANG_TAG_MAX - plen : 0;
    if (plen > WR_LANG_TAG_MAX)
        return NULL;
    memcpy(buf, p, plen);
    memcpy(buf + plen, rest, rlen);
    size_t n = plen + rlen;
    const char *hit = find(offered, buf, n);
    if (hit)
        return hit;
    if (plen == 2 && strncasecmp(p, "zh", 2) == 0 &&
        (hit = find(offered, chinese_traditional(rest, rlen) ? "zh-Hant" : "zh-Hans", 7)))
        return hit;
    while (n > plen) { /* drop the last subtag */
        while (n > plen && buf[n - 1] != '-' && buf[n - 1] != '_')
            n--;
        if (n > plen)
            n--; /* the separator */
        if ((hit = find(offered, buf, n)))
            return hit;
    }
    return NULL;
}

const char *wr_lang_match(const char *const *offered, const char *tag, size_t tlen)
{
    if (!offered || !tag || tlen == 0)
        return NULL;
    size_t plen = subtag_len(tag, tlen);
    if (plen == 0 || (plen == 1 && tag[0] == '*'))
        return NULL;
    const char *rest = tag + plen;
    size_t rlen = tlen - plen;
    const char *hit = lookup(offered, tag, plen, rest, rlen);
    for (size_t i = 0; !hit && i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strlen(aliases[i].from) == plen && strncasecmp(tag, aliases[i].from, plen) == 0)
            hit = lookup(offered, aliases[i].to, strlen(aliases[i].to), rest, rlen);
    if (hit)
        return hit;
    /* the same primary subtag, any region or script (first offered wins) */
    for (size_t i = 0; offered[i]; i++) {
        size_t olen = subtag_len(offered[i], strlen(offered[i]));
        if (olen == plen && strncasecmp(offered[i], tag, plen) == 0)
            return offered[i];
        for (size_t k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
            if (strlen(aliases[k].from) == plen && strncasecmp(tag, aliases[k].from, plen) == 0 &&
                strlen(aliases[k].to) == olen && strncasecmp(offered[i], aliases[k].to, olen) == 0)
                return offered[i];
    }
    return NULL;
}

/* Parses an RFC 9110 qvalue ("0", "0.5", "1.000") into thousandths; -1 if bad. */
static int parse_q(const char *s, size_t n)
{
    if (n == 0 || (s[0] != '0' && s[0] != '1'))
        return -1;
    int q = (s[0] - '0') * 1000;
    if (n == 1)
        return q;
    if (s[1] != '.' || n > 5)
        return -1;
    int scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        q += (s[i] - '0') * scale;
    }
    return q > 1000 ? -1 : q;
}

static size_t trim(const char **s, size_t n)
{
    while (n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        n--;
    }
    while (n && ((*s)[n - 1] == ' ' || (*s)[n - 1] == '\t'))
        n--;
    return n;
}

const char *wr_lang_pick(const char *const *offered, const char *accept_language,
                         const char *fallback)
{
    const char *best = NULL;
    int best_q = 0; /* thousandths; the first entry wins a tie */
    const char *p = accept_language ? accept_language : "";
    for (int idx = 0; *p && idx < LANG_ENTRIES_MAX; idx++) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        const char *e = p;
        p = comma ? comma + 1 : p + n;
        /* entry = tag *( ";" param ), the q param gives the weight */
        const char *semi = memchr(e, ';', n);
        const char *tag = e;
        size_t tlen = trim(&tag, semi ? (size_t)(semi - e) : n);
        int q = 1000;
        while (semi) {
            const char *par = semi + 1;
            size_t rest = n - (size_t)(par - e);
            semi = memchr(par, ';', rest);
            size_t plen = trim(&par, semi ? (size_t)(semi - par) : rest);
            if (plen >= 2 && (par[0] == 'q' || par[0] == 'Q') && par[1] == '=') {
                const char *qs = par + 2;
                q = parse_q(qs, trim(&qs, plen - 2));
            }
        }
        const char *l = q > best_q ? wr_lang_match(offered, tag, tlen) : NULL;
        if (l) {
            best = l;
            best_q = q;
        }
    }
    if (best)
        return best;
    const char *fb = fallback ? wr_lang_match(offered, fallback, strlen(fallback)) : NULL;
    if (fb)
        return fb;
    fb = find(offered, "en", 2);
    return fb ? fb : offered[0];
}

bool wr_lang_rtl(const char *code)
{
    static const char *const rtl[] = {"ar", "he",  "iw", "fa", "ur",  "yi",  "ji", "ps",
                                      "sd", "ckb", "dv", "ug", "syr", "arc", NULL};
    static const char *const scripts[] = {"arab", "hebr", "syrc", "thaa", "nkoo", "adlm", NULL};
    if (!code)
        return false;
    size_t n = strlen(code), plen = subtag_len(code, n);
    for (size_t i = 0; rtl[i]; i++)
        if (strlen(rtl[i]) == plen && strncasecmp(code, rtl[i], plen) == 0)
            return true;
    for (const char *s = code + plen; *s;) {
        s++; /* the separator */
        size_t k = subtag_len(s, strlen(s));
        for (size_t i = 0; k == 4 && scripts[i]; i++)
            if (strncasecmp(s, scripts[i], 4) == 0)
                return true;
        s += k;
    }
    return false;
}

bool wr_lang_code_ok(const char *code)
{
    /* the rule is core's: a notice's keys (qconfig) follow it too */
    return code && wr_page_lang_code_ok(code, strnlen(code, WR_LANG_TAG_MAX + 1));
}
