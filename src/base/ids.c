/*
 * ids.c - the syntax of names and ids (ids.h).
 *
 * Each rule is a character class and a length range. One table gives the
 * classes of every byte, so a check is one load per byte: queue names and
 * the base64url ids (jti, kid) share one class (A-Z a-z 0-9 _ -), user ids
 * add . ~ : @ +, host names add the dot; labels (group and bypass rule
 * names) are lower case letters, digits and '-'; HTTP tokens (methods,
 * field names: RFC 9110 tchar) add !#$%&'*+-.^_`|~ to letters and digits;
 * challenge nonces and store epochs are letters and digits alone. NUL and every byte >=
 * 0x80 belong to no class, so a counted string with an embedded NUL, or UTF-8, is refused.
 */
#include "base/ids.h"

#include <string.h>

enum {
    C_NAME = 1,   /* [A-Za-z0-9_-]: queue names, base64url */
    C_USER = 2,   /* [A-Za-z0-9._~:@+-]: user ids */
    C_HOST = 4,   /* [A-Za-z0-9._-]: host names */
    C_LABEL = 8,  /* [a-z0-9-]: group and bypass rule names */
    C_TOKEN = 16, /* RFC 9110 tchar: methods, HTTP field names */
    C_ALNUM = 32  /* [A-Za-z0-9]: challenge nonces, store epochs */
};

/* GNU range designators (the build is gnu11). */
static const unsigned char classes[256] = {
    ['0' ... '9'] = C_NAME | C_USER | C_HOST | C_LABEL | C_TOKEN | C_ALNUM,
    ['A' ... 'Z'] = C_NAME | C_USER | C_HOST | C_TOKEN | C_ALNUM,
    ['a' ... 'z'] = C_NAME | C_USER | C_HOST | C_LABEL | C_TOKEN | C_ALNUM,
    ['_'] = C_NAME | C_USER | C_HOST | C_TOKEN,
    ['-'] = C_NAME | C_USER | C_HOST | C_LABEL | C_TOKEN,
    ['.'] = C_USER | C_HOST | C_TOKEN,
    ['~'] = C_USER | C_TOKEN,
    [':'] = C_USER,
    ['@'] = C_USER,
    ['+'] = C_USER | C_TOKEN,
    ['!'] = C_TOKEN,
    ['#'] = C_TOKEN,
    ['$'] = C_TOKEN,
    ['%'] = C_TOKEN,
    ['&'] = C_TOKEN,
    ['\''] = C_TOKEN,
    ['*'] = C_TOKEN,
    ['^'] = C_TOKEN,
    ['`'] = C_TOKEN,
    ['|'] = C_TOKEN,
};

/* True if s holds n bytes, 1 <= n <= max, each in class cls. */
static bool match(const char *s, size_t n, size_t max, unsigned cls)
{
    if (!s || n < 1 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(classes[(unsigned char)s[i]] & cls))
            return false;
    return true;
}

/* The length of a NUL-terminated s, or max + 1 when it is longer than max
 * (the scan stops there); 0 for NULL. */
static size_t bounded(const char *s, size_t max)
{
    return s ? strnlen(s, max + 1) : 0;
}

bool wr_ids_valid_queue(const char *name)
{
    return match(name, bounded(name, WR_QUEUE_NAME_MAX), WR_QUEUE_NAME_MAX, C_NAME);
}

bool wr_ids_valid_queue_n(const char *s, size_t n)
{
    return match(s, n, WR_QUEUE_NAME_MAX, C_NAME);
}

bool wr_ids_valid_user(const char *id)
{
    return match(id, bounded(id, WR_USER_ID_MAX), WR_USER_ID_MAX, C_USER);
}

bool wr_ids_valid_user_n(const char *s, size_t n)
{
    return match(s, n, WR_USER_ID_MAX, C_USER);
}

bool wr_ids_valid_label_n(const char *s, size_t n)
{
    return match(s, n, WR_LABEL_MAX, C_LABEL);
}

bool wr_ids_valid_jti(const char *jti)
{
    return match(jti, bounded(jti, WR_JTI_LEN), WR_JTI_LEN, C_NAME);
}

bool wr_ids_valid_jti_n(const char *s, size_t n)
{
    return match(s, n, WR_JTI_LEN, C_NAME);
}

bool wr_ids_valid_alnum_n(const char *s, size_t n, size_t max)
{
    return match(s, n, max, C_ALNUM);
}

bool wr_ids_valid_kid_n(const char *s, size_t n)
{
    return match(s, n, WR_KID_LEN, C_NAME);
}

bool wr_ids_valid_host_n(const char *s, size_t n)
{
    return match(s, n, WR_HOST_NAME_MAX, C_HOST);
}

bool wr_ids_host_char(char c)
{
    return classes[(unsigned char)c] & C_HOST;
}

bool wr_ids_token_char(char c)
{
    return classes[(unsigned char)c] & C_TOKEN;
}

bool wr_ids_valid_token_n(const char *s, size_t n, size_t max)
{
    return match(s, n, max, C_TOKEN);
}
