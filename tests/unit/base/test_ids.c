/*
 * test_ids.c - the syntax of names and ids: queue names, user ids, jti,
 * key ids, host names and labels (lengths at and past the bounds, every extra
 * character, bytes outside the classes, counted strings with an embedded
 * NUL), and the rule texts built from the limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/ids.h"
#include "unit_main.h"

/* A name rule: its check of a C string and of a counted one, its longest
 * name (max characters, here all fill), and names it accepts and refuses
 * (NULL-terminated lists). */
typedef struct {
    bool (*valid)(const char *s);
    bool (*valid_n)(const char *s, size_t n);
    size_t max;
    char fill;
    const char *ok[4];
    const char *bad[12];
} rule_t;

static void check_rule(const rule_t *r)
{
    char s[200];
    memset(s, r->fill, sizeof(s));
    s[r->max] = '\0';
    assert_true(r->valid(s));
    s[r->max] = r->fill;
    s[r->max + 1] = '\0';
    assert_false(r->valid(s));
    for (size_t i = 0; r->ok[i]; i++)
        assert_true(r->valid(r->ok[i]));
    for (size_t i = 0; r->bad[i]; i++)
        assert_false(r->valid(r->bad[i]));
    assert_false(r->valid(""));
    assert_false(r->valid(NULL));
    assert_true(r->valid_n(s, r->max));
    assert_false(r->valid_n(s, r->max + 1));
}

static void test_queue_names(void **state)
{
    (void)state;
    assert_int_equal(WR_QUEUE_NAME_MAX, 64);
    static const rule_t queue = {
        wr_ids_valid_queue,      wr_ids_valid_queue_n,
        WR_QUEUE_NAME_MAX,       'a',
        {"a", "Shop_2-x", NULL}, {"a.b", "a b", "a/b", "a:b", "\xc3\xa9", "{q}", NULL},
    };
    check_rule(&queue);

    /* Counted: exactly n bytes, no NUL inside. */
    assert_true(wr_ids_valid_queue_n("abc", 3));
    assert_true(wr_ids_valid_queue_n("abc!", 3));
    assert_false(wr_ids_valid_queue_n("ab\0c", 4));
    assert_false(wr_ids_valid_queue_n("abc", 0));
    assert_false(wr_ids_valid_queue_n(NULL, 3));
}

static void test_user_ids(void **state)
{
    (void)state;
    assert_int_equal(WR_USER_ID_MAX, 128);
    static const rule_t user = {
        wr_ids_valid_user,
        wr_ids_valid_user_n,
        WR_USER_ID_MAX,
        'u',
        {"u", "A-z0.9_~:@+-", "user@example.com", NULL},
        {"a b", "a/b", "a,b", "a\"b", "a\nb", "a%20", "{x}", "\xc3\xa9", NULL},
    };
    check_rule(&user);

    assert_true(wr_ids_valid_user_n("a.b~c", 5));
    assert_false(wr_ids_valid_user_n("a\0b", 3));
}

static void test_jti_and_kid(void **state)
{
    (void)state;
    const char *jti = "AbCdEfGhIjKlMnOpQr-_09"; /* 22 base64url chars */
    assert_int_equal(strlen(jti), WR_JTI_LEN);
    assert_true(wr_ids_valid_jti_n(jti, WR_JTI_LEN));
    assert_true(wr_ids_valid_jti_n(jti, 1));
    assert_false(wr_ids_valid_jti_n("AbCdEfGhIjKlMnOpQr-_09x", WR_JTI_LEN + 1));
    assert_false(wr_ids_valid_jti_n(jti, 0));
    assert_false(wr_ids_valid_jti_n("ab.c", 4));
    assert_false(wr_ids_valid_jti_n("ab=", 3));
    assert_false(wr_ids_valid_jti_n("ab+/", 4));
    assert_true(wr_ids_valid_jti(jti));
    assert_false(wr_ids_valid_jti("AbCdEfGhIjKlMnOpQr-_09x"));
    assert_false(wr_ids_valid_jti(""));
    assert_false(wr_ids_valid_jti(NULL));
    assert_false(wr_ids_valid_jti("a.b"));

    assert_true(wr_ids_valid_kid_n("Ab-_09xY", WR_KID_LEN));
    assert_false(wr_ids_valid_kid_n("Ab-_09xYz", WR_KID_LEN + 1));
    assert_false(wr_ids_valid_kid_n("", 0));
    assert_false(wr_ids_valid_kid_n("a b", 3));
}

static void test_host_names(void **state)
{
    (void)state;
    char s[300];
    memset(s, 'h', sizeof s);
    assert_true(wr_ids_valid_host_n("localhost", 9));
    assert_true(wr_ids_valid_host_n("127.0.0.1", 9));
    assert_true(wr_ids_valid_host_n("redis-1.internal_x", 18));
    assert_true(wr_ids_valid_host_n(s, WR_HOST_NAME_MAX));
    assert_false(wr_ids_valid_host_n(s, WR_HOST_NAME_MAX + 1));
    assert_false(wr_ids_valid_host_n("", 0));
    assert_false(wr_ids_valid_host_n("a b", 3));
    assert_false(wr_ids_valid_host_n("a:b", 3));
    assert_false(wr_ids_valid_host_n("[::1]", 5));
    assert_false(wr_ids_valid_host_n("a/b", 3));
    assert_true(wr_ids_host_char('.') && wr_ids_host_char('_') && wr_ids_host_char('Z'));
    assert_false(wr_ids_host_char(':') || wr_ids_host_char('\0') || wr_ids_host_char('~'));
}

/* labels: priority group and bypass rule names, [a-z0-9-]{1,32} */
static void test_labels(void **state)
{
    (void)state;
    static const char *const ok[] = {"a", "staff-2", "0", "-", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    static const char *const bad[] = {
        "", "A", "a_b", "a.b", "a b", "a:b", "\xc3\xa9", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_true(wr_ids_valid_label_n(ok[i], strlen(ok[i])));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(wr_ids_valid_label_n(bad[i], strlen(bad[i])));
    assert_false(wr_ids_valid_label_n("a\0b", 3));
    assert_false(wr_ids_valid_label_n(NULL, 0));
    assert_string_equal(WR_LABEL_RULE, "[a-z0-9-]{1,32}");
}

/* HTTP tokens (RFC 9110 tchar): methods and field names */
static void test_tokens(void **state)
{
    (void)state;
    static const char tchars[] = "!#$%&'*+-.^_`|~09AZaz";
    for (const char *c = tchars; *c; c++)
        assert_true(wr_ids_token_char(*c));
    static const char other[] = " \t\"(),/:;<=>?@[\\]{}\x7f\x80\xff";
    for (size_t i = 0; i < sizeof other - 1; i++)
        assert_false(wr_ids_token_char(other[i]));
    assert_false(wr_ids_token_char('\0'));
    assert_true(wr_ids_valid_token_n("X-Staff-Key", 11, 64));
    assert_true(wr_ids_valid_token_n("x", 1, 1));
    assert_false(wr_ids_valid_token_n("xy", 2, 1));
    assert_false(wr_ids_valid_token_n("", 0, 64));
    assert_false(wr_ids_valid_token_n("X Y", 3, 64));
    assert_false(wr_ids_valid_token_n("X:", 2, 64));
    assert_false(wr_ids_valid_token_n(NULL, 0, 64));
}

/* letters and digits alone: challenge nonces, store epochs */
static void test_alnum(void **state)
{
    (void)state;
    assert_true(wr_ids_valid_alnum_n("aZ09", 4, 4));
    assert_true(wr_ids_valid_alnum_n("x", 1, 1));
    assert_false(wr_ids_valid_alnum_n("xy", 2, 1));
    assert_false(wr_ids_valid_alnum_n("", 0, 8));
    static const char *const bad[] = {"a-b", "a_b", "a.b", "a b", "a+b", "\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(wr_ids_valid_alnum_n(bad[i], strlen(bad[i]), 8));
    assert_false(wr_ids_valid_alnum_n("a\0b", 3, 8));
    assert_false(wr_ids_valid_alnum_n(NULL, 0, 8));
}

static void test_rule_texts(void **state)
{
    (void)state;
    assert_string_equal(WR_QUEUE_NAME_RULE, "[A-Za-z0-9_-]{1,64}");
    assert_string_equal(WR_USER_ID_RULE, "[A-Za-z0-9._~:@+-]{1,128}");
}

#define TESTS(X)                                                                                   \
    X(test_queue_names)                                                                            \
    X(test_user_ids)                                                                               \
    X(test_jti_and_kid)                                                                            \
    X(test_host_names)                                                                             \
    X(test_labels)                                                                                 \
    X(test_tokens)                                                                                 \
    X(test_alnum)                                                                                  \
    X(test_rule_texts)
WR_UNIT_MAIN(NULL, NULL, TESTS)
