/*
 * test_webdir.c - the page files: the embedded ones without --web-dir; a
 * directory's file replaces the embedded one of its name and a missing one
 * falls back; i18n.json is merged string by string; every way a directory
 * fails to load is an error naming the file, at load.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "http/page.h"
#include "http/webdir.h"
#include "unit_main.h"

static char dir[64];

static void put(const char *name, const char *text, size_t len)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void clean(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/wr_webdir_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    clean();
    return 0;
}

/* An empty directory again, for the next files. */
static void reset(void)
{
    clean();
    assert_int_equal(mkdir(dir, 0700), 0);
}

/* The directory as it is now, which must load. */
static wr_webdir_t *load_ok(void)
{
    wr_webdir_t *w = NULL;
    char err[512] = "";
    if (wr_webdir_load(dir, &w, err, sizeof(err)) != WR_OK)
        fail_msg("%s", err);
    return w;
}

static void test_embedded_only(void **state)
{
    (void)state;
    wr_webdir_t *w = NULL;
    char err[256];
    assert_int_equal(wr_webdir_load(NULL, &w, err, sizeof(err)), WR_OK);
    size_t len = 0;
    const unsigned char *d = wr_webdir_file(w, "queue.html", &len);
    assert_non_null(d);
    assert_true(len > 100);
    assert_non_null(strstr((const char *)d, "id=\"app\""));
    assert_int_equal(wr_webdir_count(w), 0);
    /* the fourteen languages, each with every English key */
    const json_t *i18n = wr_webdir_i18n(w);
    static const char *const langs[] = {"en", "ko", "ja", "zh-Hans", "zh-Hant", "es", "fr", "de",
                                        "pt", "it", "vi", "th",      "id",      "ar", NULL};
    const json_t *en = json_object_get(i18n, "en");
    for (size_t i = 0; langs[i]; i++) {
        const json_t *l = json_object_get(i18n, langs[i]);
        if (!json_is_object(l))
            fail_msg("no language %s", langs[i]);
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)en, key, v)
        {
            if (!json_is_string(json_object_get(l, key)))
                fail_msg("%s lacks %s", langs[i], key);
        }
        assert_int_equal(json_object_size(l), json_object_size(en));
    }
    /* a page's first strings: English and its own language */
    const char *codes = NULL;
    const char *ar = wr_webdir_i18n_for(w, "ar", &len, &codes);
    assert_non_null(strstr(ar, "\"ar\":{"));
    assert_non_null(strstr(ar, "\"en\":{"));
    assert_null(strstr(ar, "\"ko\":{"));
    assert_int_equal(strlen(ar), len);
    assert_string_equal(codes, "en ko ja zh-Hans zh-Hant es fr de pt it vi th id ar");
    const char *eng = wr_webdir_i18n_for(w, "en", &len, NULL);
    assert_null(strstr(eng, "\"ko\":{"));
    assert_ptr_equal(wr_webdir_i18n_for(w, "xx", &len, NULL), eng); /* unknown: English */
    assert_null(wr_webdir_file(w, "nope.css", &len));
    assert_null(wr_webdir_file(NULL, "nope.css", &len));
    assert_non_null(wr_webdir_file(NULL, "style.css", &len)); /* no webdir: embedded */
    wr_webdir_free(w);
    assert_int_equal(wr_webdir_load("", &w, err, sizeof(err)), WR_OK);
    wr_webdir_free(w);
}

static void test_replaces_by_name(void **state)
{
    (void)state;
    static const char tpl[] =
        "<!doctype html><p id=\"app\" data-state=\"{{state}}\">shop {{queue}}</p>";
    put("queue.html", tpl, sizeof(tpl) - 1);
    put("logo.svg", "<svg/>", 6);
    put("README.md", "not a page file", 15); /* ignored */
    static const char i18n[] = "{\"en\": {\"heading\": \"In the queue for tea\"}, "
                               "\"nl\": {\"title\": \"Wachtkamer\"}}";
    put("i18n.json", i18n, sizeof(i18n) - 1);
    wr_webdir_t *w = load_ok();
    assert_int_equal(wr_webdir_count(w), 3);
    size_t len = 0;
    const unsigned char *d = wr_webdir_file(w, "queue.html", &len);
    assert_int_equal(len, sizeof(tpl) - 1);
    assert_memory_equal(d, tpl, len);
    assert_non_null(wr_webdir_file(w, "logo.svg", &len));
    assert_null(wr_webdir_file(w, "README.md", &len));
    /* style.css is not in the directory: the embedded one */
    d = wr_webdir_file(w, "style.css", &len);
    assert_non_null(d);
    assert_non_null(strstr((const char *)d, "--accent"));
    /* i18n: the changed string, the others kept, a new language added */
    const json_t *j = wr_webdir_i18n(w);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "en"), "heading")),
                        "In the queue for tea");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "en"), "title")),
                        "Waiting room");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "nl"), "title")),
                        "Wachtkamer");
    assert_non_null(json_object_get(j, "ar"));
    /* served as the merged JSON */
    d = wr_webdir_file(w, "i18n.json", &len);
    const char *text = wr_webdir_i18n_text(w, &len);
    assert_ptr_equal(d, text);
    assert_non_null(strstr(text, "In the queue for tea"));
    assert_non_null(strstr(text, "Waiting room"));
    wr_webdir_free(w);
    reset();
}

static void expect_error(const char *want)
{
    wr_webdir_t *w = NULL;
    char err[512] = "";
    assert_int_not_equal(wr_webdir_load(dir, &w, err, sizeof(err)), WR_OK);
    assert_null(w);
    if (!strstr(err, want))
        fail_msg("error '%s' does not say '%s'", err, want);
    reset();
}

static void test_errors_at_load(void **state)
{
    (void)state;
    wr_webdir_t *w = NULL;
    char err[512] = "";
    assert_int_equal(wr_webdir_load("/nonexistent/wr-web", &w, err, sizeof(err)), WR_EIO);
    assert_non_null(strstr(err, "/nonexistent/wr-web"));

    put("i18n.json", "{\"en\": ", 7);
    expect_error("i18n.json is not JSON");
    put("i18n.json", "[1]", 3);
    expect_error("must be an object of languages");
    put("i18n.json", "{\"en\": {\"title\": 5}}", 20);
    expect_error("\"en\".\"title\" must be a string");
    put("i18n.json", "{\"en\": \"x\"}", 11);
    expect_error("\"en\" must be an object of strings");
    put("queue.html", "\xff\xfe<p>", 5);
    expect_error("queue.html is not UTF-8");
    char *big = malloc(WR_WEBDIR_FILE_MAX + 1);
    assert_non_null(big);
    memset(big, 'a', WR_WEBDIR_FILE_MAX + 1);
    put("style.css", big, WR_WEBDIR_FILE_MAX + 1);
    free(big);
    expect_error("style.css is larger than");
    put("style.css", "x", 1);
    char path[160];
    snprintf(path, sizeof(path), "%s/style.css", dir);
    if (getuid() != 0) { /* root reads anything */
        assert_int_equal(chmod(path, 0), 0);
        expect_error("cannot read");
    }
}

/* K40: a language the directory adds is offered and chosen like a
 * built-in one (Accept-Language in its legacy forms, ?lang=), rendered in
 * its own direction. */
static void test_added_language(void **state)
{
    (void)state;
    static const char i18n[] =
        "{\"he\": {\"title\": \"\u05d7\u05d3\u05e8 \u05d4\u05de\u05ea\u05e0\u05d4\"}, "
        "\"nl\": {\"heading\": \"U staat in de rij\"}}";
    put("i18n.json", i18n, sizeof(i18n) - 1);
    wr_webdir_t *w = load_ok();
    const char *const *langs = wr_webdir_langs(w);
    size_t n = 0;
    while (langs[n])
        n++;
    assert_int_equal(n, 16); /* the fourteen, then the two added */
    assert_string_equal(langs[14], "he");
    assert_string_equal(langs[15], "nl");
    assert_string_equal(wr_page_lang(w, "iw-IL,en;q=0.5", NULL), "he");
    assert_string_equal(wr_page_lang(w, "nl-BE", NULL), "nl");
    assert_string_equal(wr_page_lang(w, "fr, nl;q=0.9", NULL), "fr");
    assert_string_equal(wr_page_lang(w, "xx", "nl"), "nl"); /* a fallback of the directory's */
    assert_string_equal(wr_page_lang_tag(w, "he"), "he");
    assert_null(wr_page_lang_tag(NULL, "he")); /* not without the directory */
    wr_page_view_t v;
    memset(&v, 0, sizeof(v));
    v.queue = "shop";
    v.web = w;
    v.state = "waiting";
    v.position = 3;
    v.waiting = 9;
    /* each in its language and direction, with its own words, and the
     * added codes in data-langs after the embedded ones */
    static const struct {
        const char *lang, *html, *words;
    } renders[] = {
        {"he", "<html lang=\"he\" dir=\"rtl\">", "\xd7\x97\xd7\x93\xd7\xa8"},
        {"nl", "<html lang=\"nl\" dir=\"ltr\">", "U staat in de rij"},
    };
    for (size_t i = 0; i < sizeof(renders) / sizeof(renders[0]); i++) {
        v.lang = renders[i].lang;
        size_t len = 0;
        char *html = wr_page_render_queue(&v, &len);
        assert_non_null(html);
        if (!strstr(html, renders[i].html) || !strstr(html, renders[i].words) ||
            !strstr(html, "data-langs=\"en ko") || !strstr(html, " he nl\""))
            fail_msg("%s: not rendered in its language", renders[i].lang);
        free(html);
    }
    wr_webdir_free(w);
    reset();
}

/* Typos and broken templates stop the start, naming what is wrong. */
static void test_checks_at_load(void **state)
{
    (void)state;
    static const char typo[] = "{\"en\": {\"statsu_waiting\": \"x\"}}";
    put("i18n.json", typo, sizeof(typo) - 1);
    expect_error("\"en\".\"statsu_waiting\" is not a string of the page");
    /* a key the directory's own template uses is the shop's, not a typo */
    static const char own[] = "{\"en\": {\"shop_hours\": \"9-5\"}}";
    static const char tpl[] = "<main id=\"app\" data-state=\"{{state}}\">{{t:shop_hours}}</main>";
    put("i18n.json", own, sizeof(own) - 1);
    put("queue.html", tpl, sizeof(tpl) - 1);
    wr_webdir_t *w = load_ok();
    wr_webdir_free(w);
    reset();
    static const char badlang[] = "{\"english!\": {\"title\": \"x\"}}";
    put("i18n.json", badlang, sizeof(badlang) - 1);
    expect_error("\"english!\" is not a language code");
    static const char nostate[] = "<main id=\"app\">{{queue}}</main>";
    put("queue.html", nostate, sizeof(nostate) - 1);
    expect_error("queue.html lacks {{state}}");
    static const char noapp[] = "<main data-state=\"{{state}}\"></main>";
    put("queue.html", noapp, sizeof(noapp) - 1);
    expect_error("queue.html lacks id=\"app\"");
    static const char noi18n[] =
        "<main id=\"app\" data-state=\"{{state}}\" data-queue=\"{{queue}}\" "
        "data-lang=\"{{lang}}\" data-langs=\"{{langs}}\" data-retry-ms=\"{{retry_ms}}\" "
        "data-target-url=\"{{target_url}}\"><p id=\"status\"></p></main>"
        "<script src=\"/static/queue.js\"></script>";
    put("queue.html", noi18n, sizeof(noi18n) - 1);
    expect_error("loads /static/queue.js but lacks {{i18n}}");
    static const char dash[] = "<main id=\"board\"></main>";
    put("dashboard.html", dash, sizeof(dash) - 1);
    expect_error("dashboard.html lacks /static/dashboard.js");
    /* the embedded templates pass their own checks */
    size_t len = 0;
    const unsigned char *q = wr_webdir_file(NULL, "queue.html", &len);
    put("queue.html", (const char *)q, len);
    const unsigned char *d = wr_webdir_file(NULL, "dashboard.html", &len);
    put("dashboard.html", (const char *)d, len);
    w = load_ok();
    wr_webdir_free(w);
    reset();
}

#define TESTS(X)                                                                                   \
    X(test_embedded_only)                                                                          \
    X(test_replaces_by_name)                                                                       \
    X(test_errors_at_load)                                                                         \
    X(test_added_language)                                                                         \
    X(test_checks_at_load)
WR_UNIT_MAIN(setup, teardown, TESTS)
