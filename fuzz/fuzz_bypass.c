/*
 * fuzz_bypass.c - libFuzzer target: bypass path rules (core/bypass.h). The
 * input is a rule's path, a newline, and a request URI. When the rule
 * parses and the URI matches it, the URI's path (before '?' or '#') must
 * be safe: it starts with the rule's stem, has no "." or ".." segment, no
 * "//", no backslash, no %2F, %2E, %5C or %00 in any case, no control
 * byte or space. The rule must render back to what was given.
 */
#define _GNU_SOURCE /* strcasestr */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/bypass.h"

static void check_safe(const char *uri, const wr_bypass_rule_t *r)
{
    size_t len = strcspn(uri, "?#");
    size_t stem = r->prefix_path ? (size_t)r->value_len - 1 : r->value_len;
    if (len < stem || memcmp(uri, r->value, stem) != 0 || (!r->prefix_path && len != stem))
        abort();
    static const char *const bad[] = {"//", "\\", "%2f", "%2e", "%5c", "%00", "/./", "/../"};
    char *p = strndup(uri, len);
    if (!p)
        return;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
            abort();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (strcasestr(p, bad[i]))
            abort();
    if ((len >= 2 && strcmp(p + len - 2, "/.") == 0) ||
        (len >= 3 && strcmp(p + len - 3, "/..") == 0))
        abort();
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *nl = memchr(data, '\n', size);
    if (!nl)
        return 0;
    size_t rlen = (size_t)(nl - (const char *)data);
    json_t *rules = json_pack("[{s:s,s:s%}]", "name", "p", "path", (const char *)data, rlen);
    if (!rules)
        return 0;
    wr_bypass_config_t c;
    memset(&c, 0, sizeof c);
    char field[64], msg[256];
    if (wr_bypass_parse(rules, &c, field, sizeof field, msg, sizeof msg) == WR_OK) {
        json_t *back = wr_bypass_to_json(&c, true);
        if (!back || !json_equal(back, rules))
            abort();
        json_decref(back);
        char *uri = strndup(nl + 1, size - rlen - 1);
        if (uri && wr_bypass_path_matches(&c.rules[0], uri))
            check_safe(uri, &c.rules[0]);
        free(uri);
    }
    json_decref(rules);
    return 0;
}
