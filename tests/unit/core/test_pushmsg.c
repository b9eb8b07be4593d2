/*
 * test_pushmsg.c - the plaintext of a push: the exact JSON of each kind,
 * the texts from the page's i18n.json (the embedded one) in every one of
 * its languages (each push key present and not blank: no silent push),
 * the fallbacks (unknown language, blank text, no table), the cut of a
 * long text at a character boundary and the size bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/embed.h"
#include "core/pushcrypt.h"
#include "core/pushmsg.h"
#include "unit_main.h"

static json_t *i18n;

static int setup(void **state)
{
    (void)state;
    const wr_embed_file_t *f = wr_embed_find("web/i18n.json");
    assert_non_null(f);
    i18n = json_loadb((const char *)f->data, f->len, 0, NULL);
    assert_non_null(i18n);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(i18n);
    return 0;
}

static void test_exact(void **state)
{
    (void)state;
    char out[WR_PUSHCRYPT_PLAIN_MAX + 1];
    size_t n = 0;
    assert_int_equal(wr_pushmsg_build(i18n, "en", WR_PUSHMSG_ADMITTED, "sale", 1800000000123, out,
                                      sizeof out, &n),
                     WR_OK);
    assert_string_equal(out, "{\"queue\":\"sale\",\"status\":\"admitted\",\"title\":\"It's your "
                             "turn\",\"body\":\"Open the page now to go in before your pass "
                             "expires.\",\"url\":\"/q/sale\",\"expiresAt\":1800000000123}");
    assert_int_equal(n, strlen(out));
    assert_int_equal(
        wr_pushmsg_build(i18n, "en", WR_PUSHMSG_CLOSED, "sale", 0, out, sizeof out, &n), WR_OK);
    assert_string_equal(out, "{\"queue\":\"sale\",\"status\":\"closed\",\"reason\":\"closed\","
                             "\"title\":\"The sale has ended\",\"body\":\"The sale is closed. "
                             "Thank you for waiting.\",\"url\":\"/q/sale\"}");
    assert_int_equal(
        wr_pushmsg_build(i18n, "ko", WR_PUSHMSG_SOLD_OUT, "sale", 0, out, sizeof out, &n), WR_OK);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "closed");
    assert_string_equal(json_string_value(json_object_get(j, "reason")), "soldOut");
    assert_string_equal(
        json_string_value(json_object_get(j, "title")),
        json_string_value(json_object_get(json_object_get(i18n, "ko"), "push_soldout_title")));
    assert_null(json_object_get(j, "expiresAt"));
    json_decref(j);
}

/* Every language of the page has every push text, not blank, and the
 * message of each kind takes it. */
static void test_every_language(void **state)
{
    (void)state;
    static const char *keys[] = {"push_admitted_title", "push_admitted_body", "push_closed_title",
                                 "push_closed_body",    "push_soldout_title", "push_soldout_body"};
    const char *lang;
    json_t *strings;
    size_t count = 0;
    json_object_foreach(i18n, lang, strings)
    {
        count++;
        for (size_t k = 0; k < 6; k++) {
            const char *s = json_string_value(json_object_get(strings, keys[k]));
            if (!s || !*s)
                fail_msg("%s: %s missing or empty", lang, keys[k]);
        }
        for (int kind = WR_PUSHMSG_ADMITTED; kind <= WR_PUSHMSG_SOLD_OUT; kind++) {
            char out[WR_PUSHCRYPT_PLAIN_MAX + 1];
            assert_int_equal(wr_pushmsg_build(i18n, lang, (wr_pushmsg_kind_t)kind, "sale", 1, out,
                                              sizeof out, NULL),
                             WR_OK);
            json_t *j = json_loads(out, 0, NULL);
            assert_non_null(j);
            assert_string_equal(json_string_value(json_object_get(j, "title")),
                                json_string_value(json_object_get(strings, keys[kind * 2])));
            assert_string_equal(json_string_value(json_object_get(j, "body")),
                                json_string_value(json_object_get(strings, keys[kind * 2 + 1])));
            json_decref(j);
        }
    }
    assert_int_equal(count, 14);
}

static void test_fallbacks(void **state)
{
    (void)state;
    char out[WR_PUSHCRYPT_PLAIN_MAX + 1], en[WR_PUSHCRYPT_PLAIN_MAX + 1];
    assert_int_equal(wr_pushmsg_build(i18n, "en", WR_PUSHMSG_ADMITTED, "q", 5, en, sizeof en, NULL),
                     WR_OK);
    /* an unknown language, none, and no table at all: English */
    assert_int_equal(
        wr_pushmsg_build(i18n, "xx", WR_PUSHMSG_ADMITTED, "q", 5, out, sizeof out, NULL), WR_OK);
    assert_string_equal(out, en);
    assert_int_equal(
        wr_pushmsg_build(i18n, NULL, WR_PUSHMSG_ADMITTED, "q", 5, out, sizeof out, NULL), WR_OK);
    assert_string_equal(out, en);
    assert_int_equal(
        wr_pushmsg_build(NULL, "ko", WR_PUSHMSG_ADMITTED, "q", 5, out, sizeof out, NULL), WR_OK);
    assert_string_equal(out, en);
    /* a blank text in a --web-dir's table: English, never empty */
    json_t *t = json_pack("{s:{s:s,s:s},s:{s:s}}", "fr", "push_admitted_title", "  \n",
                          "push_admitted_body", "Entrez", "en", "push_admitted_title", "Go");
    assert_int_equal(wr_pushmsg_build(t, "fr", WR_PUSHMSG_ADMITTED, "q", 5, out, sizeof out, NULL),
                     WR_OK);
    assert_string_equal(out, "{\"queue\":\"q\",\"status\":\"admitted\",\"title\":\"Go\",\"body\":"
                             "\"Entrez\",\"url\":\"/q/q\",\"expiresAt\":5}");
    /* a long text is cut at a character boundary (3-byte characters) */
    char longtxt[1500] = "";
    for (int i = 0; i < 450; i++)
        strcat(longtxt, "\xe2\x80\x94");
    json_object_set_new(json_object_get(t, "fr"), "push_admitted_body", json_string(longtxt));
    assert_int_equal(wr_pushmsg_build(t, "fr", WR_PUSHMSG_ADMITTED, "q", 5, out, sizeof out, NULL),
                     WR_OK);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_int_equal(strlen(json_string_value(json_object_get(j, "body"))), 399);
    json_decref(j);
    json_decref(t);
    /* bounds and arguments */
    assert_int_equal(wr_pushmsg_build(i18n, "en", WR_PUSHMSG_ADMITTED, "q", 5, out, 20, NULL),
                     WR_ELIMIT);
    assert_int_equal(
        wr_pushmsg_build(i18n, "en", WR_PUSHMSG_ADMITTED, "", 5, out, sizeof out, NULL), WR_EINVAL);
    assert_int_equal(
        wr_pushmsg_build(i18n, "en", (wr_pushmsg_kind_t)7, "q", 5, out, sizeof out, NULL),
        WR_EINVAL);
}

#define TESTS(X)                                                                                   \
    X(test_exact)                                                                                  \
    X(test_every_language)                                                                         \
    X(test_fallbacks)
WR_UNIT_MAIN(setup, teardown, TESTS)
