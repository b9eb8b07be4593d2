/*
 * test_lang.c - the lang module: the language a page speaks. Accept-Language
 * with its q-values, read through the page's list (wr_page_lang: the
 * embedded fourteen, else the queue's page.lang, else English), the forms
 * browsers send (legacy codes, regions, scripts, "_" for "-"), one ?lang=
 * tag (wr_page_lang_tag), and the same matching over any list of languages
 * (a --web-dir's): wr_lang_match, wr_lang_pick, right-to-left scripts and
 * the codes an i18n.json may use.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/lang.h"
#include "http/page.h"
#include "unit_main.h"

/* The page's language for Accept-Language al (no page.lang) is want. */
static void expect_lang(const char *al, const char *want)
{
    const char *got = wr_page_lang(NULL, al, NULL);
    if (strcmp(got, want) != 0)
        fail_msg("%s: %s, not %s", al, got, want);
}

static void test_lang(void **state)
{
    (void)state;
    assert_string_equal(wr_page_lang(NULL, "ko-KR,ko;q=0.9,en;q=0.8", NULL), "ko");
    assert_string_equal(wr_page_lang(NULL, "en-US,en;q=0.9,ko;q=0.8", NULL), "en");
    assert_string_equal(wr_page_lang(NULL, "ko;q=0.1, en;q=0.5", NULL), "en");
    assert_string_equal(wr_page_lang(NULL, "en;q=0.1, ko;q=0.5", NULL), "ko");
    assert_string_equal(wr_page_lang(NULL, NULL, NULL), "en");
    assert_string_equal(wr_page_lang(NULL, "", NULL), "en");
    assert_string_equal(wr_page_lang(NULL, "garbage", NULL), "en");
    assert_string_equal(wr_page_lang(NULL, ";;;,,,=q=,ko;q=x", NULL), "en");
    assert_string_equal(wr_page_lang(NULL, "ko;q=0", NULL), "en"); /* q=0: not acceptable */
    assert_string_equal(wr_page_lang(NULL, "KO", NULL), "ko");     /* case-insensitive */
    assert_string_equal(wr_page_lang(NULL, "xx, ko;q=0.3", NULL),
                        "ko");                                     /* ko over an unknown one */
    assert_string_equal(wr_page_lang(NULL, "ko, en", NULL), "ko"); /* equal q: first listed */
    assert_string_equal(wr_page_lang(NULL, "en, ko", NULL), "en");
    assert_string_equal(wr_page_lang(NULL, "kok, ko-KR ; q=0.7 , en;q=0.6", NULL), "ko");
    assert_string_equal(wr_page_lang(NULL, "ko;q=1.5", NULL), "en"); /* bad q: entry ignored */
    /* the fourteen (API 1.2) */
    static const struct {
        const char *al, *want;
    } cases[] = {
        {"ja-JP", "ja"},
        {"zh-CN", "zh-Hans"},
        {"zh-SG", "zh-Hans"},
        {"zh-TW", "zh-Hant"},
        {"zh-HK", "zh-Hant"},
        {"zh-Hant-TW", "zh-Hant"},
        {"zh-Hans-HK", "zh-Hans"},
        {"zh", "zh-Hans"},
        {"zh-MO", "zh-Hant"},
        {"es-MX", "es"},
        {"fr-CA,en;q=0.5", "fr"},
        {"de", "de"},
        {"pt-BR", "pt"},
        {"it", "it"},
        {"vi-VN", "vi"},
        {"th", "th"},
        {"id-ID", "id"},
        {"ar-EG,en;q=0.9", "ar"},
        {"en;q=0.2, ar;q=0.8", "ar"},
        {"nl, de;q=0.5", "de"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_lang(cases[i].al, cases[i].want);
    /* none of ours asked for: the queue's page.lang, else English */
    assert_string_equal(wr_page_lang(NULL, "nl-NL", "ko"), "ko");
    assert_string_equal(wr_page_lang(NULL, NULL, "zh-Hant"), "zh-Hant");
    assert_string_equal(wr_page_lang(NULL, "nl-NL", "xx"), "en");
    assert_string_equal(wr_page_lang(NULL, "fr", "ko"), "fr");
    /* K40: the forms browsers send (legacy Android "in-ID", regions) */
    static const struct {
        const char *al, *want;
    } forms[] = {
        {"in-ID", "id"},       {"in", "id"},         {"in-ID,en-US;q=0.9", "id"},
        {"pt-PT", "pt"},       {"es-419", "es"},     {"zh-Hant-HK", "zh-Hant"},
        {"ZH_tw", "zh-Hant"},  {"ar_SA", "ar"},      {"iw-IL, ko;q=0.5", "ko"}, /* no Hebrew */
        {"*, ko;q=0.5", "ko"}, {"de-CH-1996", "de"},
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
        expect_lang(forms[i].al, forms[i].want);
    /* ?lang= and page.lang: one tag, mapped the same way; NULL for none */
    assert_string_equal(wr_page_lang_tag(NULL, "in"), "id");
    assert_string_equal(wr_page_lang_tag(NULL, "zh-HK"), "zh-Hant");
    assert_string_equal(wr_page_lang_tag(NULL, "ko"), "ko");
    assert_null(wr_page_lang_tag(NULL, "xx"));
    assert_null(wr_page_lang_tag(NULL, ""));
    assert_null(wr_page_lang_tag(NULL, NULL));
}

/* K40: the same matching over any list of languages (a --web-dir's). */
static void test_lang_match(void **state)
{
    (void)state;
    static const char *const offered[] = {"en", "he", "yi", "nb", "zh-Hant", "pt-BR", "fil", NULL};
    static const struct {
        const char *tag, *want; /* want NULL: none */
    } cases[] = {
        {"iw-IL", "he"},      {"he", "he"},         {"ji", "yi"},
        {"no", "nb"},         {"nn-NO", "nb"},      {"NB", "nb"},
        {"zh-HK", "zh-Hant"}, {"zh-CN", "zh-Hant"}, /* the only Chinese */
        {"pt", "pt-BR"},      {"pt-PT", "pt-BR"},   {"tl", "fil"},
        {"en-GB", "en"},      {"ko", NULL},         {"*", NULL},
        {"-", NULL},          {"hebrew", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = wr_lang_match(offered, cases[i].tag, strlen(cases[i].tag));
        if (cases[i].want ? !got || strcmp(got, cases[i].want) != 0 : got != NULL)
            fail_msg("%s: %s, not %s", cases[i].tag, got ? got : "none",
                     cases[i].want ? cases[i].want : "none");
    }
    /* a tag longer than WR_LANG_TAG_MAX is read by its first bytes */
    char longtag[200];
    memset(longtag, 'x', sizeof(longtag));
    memcpy(longtag, "he-", 3);
    assert_string_equal(wr_lang_match(offered, longtag, sizeof(longtag)), "he");
    assert_string_equal(wr_lang_pick(offered, "ko, ja", NULL), "en");
    assert_string_equal(wr_lang_pick(offered, "ko, ja", "iw"), "he");
    /* right to left: by language, legacy forms and script */
    static const char *const rtl[] = {"ar", "he",  "iw",      "fa-IR", "ur", "yi",
                                      "ps", "ckb", "az-Arab", "ug",    NULL};
    static const char *const ltr[] = {"en", "arn", "ko", "zh-Hant", "az", "az-Latn", "", NULL};
    for (size_t i = 0; rtl[i]; i++)
        if (!wr_lang_rtl(rtl[i]))
            fail_msg("%s should be right to left", rtl[i]);
    for (size_t i = 0; ltr[i]; i++)
        if (wr_lang_rtl(ltr[i]))
            fail_msg("%s should be left to right", ltr[i]);
    assert_true(wr_lang_code_ok("nl"));
    assert_true(wr_lang_code_ok("zh-Hant"));
    assert_true(wr_lang_code_ok("es-419"));
    assert_false(wr_lang_code_ok(""));
    assert_false(wr_lang_code_ok("en_US"));
    assert_false(wr_lang_code_ok("english!"));
    assert_false(wr_lang_code_ok("9x"));
    assert_false(wr_lang_code_ok("nl-"));
    assert_false(wr_lang_code_ok("abcdefghi"));
}

#define TESTS(X)                                                                                   \
    X(test_lang)                                                                                   \
    X(test_lang_match)
WR_UNIT_MAIN(NULL, NULL, TESTS)
