/*
 * fuzz_qconfig.c - libFuzzer target: queue config JSON (wr_qconfig_parse
 * for PUT, wr_qconfig_patch for PATCH on the defaults,
 * wr_qconfig_parse_stored for a store's copy). A config that parses must
 * render (wr_qconfig_to_json) and parse again (the same way) to the same
 * rendering: what the API or a store keeps, it can read back.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/qconfig.h"

typedef wr_err_t (*parse_fn)(const json_t *, wr_queue_config_t *, char *, size_t, char *, size_t);

static void roundtrip(const wr_queue_config_t *cfg, parse_fn parse)
{
    char field[WR_FIELD_MAX + 1], msg[256];
    json_t *j = wr_qconfig_to_json(cfg);
    if (!j)
        return;
    wr_queue_config_t back;
    if (parse(j, &back, field, sizeof(field), msg, sizeof(msg)) != WR_OK)
        abort(); /* our own rendering must parse */
    json_t *j2 = wr_qconfig_to_json(&back);
    char *a = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    char *b = j2 ? json_dumps(j2, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (a && b && strcmp(a, b) != 0)
        abort();
    free(a);
    free(b);
    json_decref(j2);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *obj = json_loadb((const char *)data, size, 0, &jerr);
    if (!obj)
        return 0;
    char field[WR_FIELD_MAX + 1], msg[256];
    wr_queue_config_t cfg, base;
    if (wr_qconfig_parse(obj, &cfg, field, sizeof(field), msg, sizeof(msg)) == WR_OK)
        roundtrip(&cfg, wr_qconfig_parse);
    else if (strnlen(field, sizeof(field)) > WR_FIELD_MAX || msg[0] == '\0')
        abort(); /* an error names a field and says why */
    wr_qconfig_defaults(&base);
    base.admit_per_second = 10;
    if (wr_qconfig_patch(&base, obj, &cfg, field, sizeof(field), msg, sizeof(msg)) == WR_OK)
        roundtrip(&cfg, wr_qconfig_parse);
    if (wr_qconfig_parse_stored(obj, &cfg, field, sizeof(field), msg, sizeof(msg)) == WR_OK)
        roundtrip(&cfg, wr_qconfig_parse_stored);
    json_decref(obj);
    return 0;
}
