/*
 * qconfig_internal.h - what the files of the queue config module share
 * (qconfig.c, qconfig_fields.c, qconfig_page.c): the field helpers and the
 * CUSTOM rows' hooks. Not for other modules: they use qconfig.h.
 *
 * Every helper writes its error (field path, message) into e and returns
 * WR_EINVAL, or returns WR_OK.
 */
#ifndef WR_QCONFIG_INTERNAL_H
#define WR_QCONFIG_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "core/qconfig.h"

#define RATE_MAX 1000000.0
#define RATE_MIN 0.001 /* one admission per ~17 minutes: below that, ETAs are absurd */

/* An integer field: must be a JSON integer within [min, max]. */
wr_err_t wr_qconfig__get_int(wr_field_err_t *e, const json_t *v, const char *field, long long min,
                             long long max, long long *out);
/* A number field (integer or real), finite; rule is the whole message. */
wr_err_t wr_qconfig__get_number(wr_field_err_t *e, const json_t *v, const char *field,
                                const char *rule, double *out);
/* Fails naming prefix + key as an unknown field. */
wr_err_t wr_qconfig__unknown(wr_field_err_t *e, const char *prefix, const char *key);
/* Rejects the first key of obj not in keys (n of them); prefix is
 * prepended to the field named. */
wr_err_t wr_qconfig__reject_unknown(wr_field_err_t *e, const json_t *obj, const char *prefix,
                                    const char *const *keys, size_t n);
/* json_object_set_new that tracks failure: *ok becomes false on error
 * (v NULL included). */
void wr_qconfig__set(json_t *obj, const char *key, json_t *v, bool *ok);
/* A render hook's end: *out = v when v was built whole (ok), else frees
 * it and returns false. */
bool wr_qconfig__finish(json_t *v, bool ok, json_t **out);

/* The CUSTOM rows' hooks (wr_qfield_t: parse, render, reset, store_value),
 * named after the row: parse_X validates JSON v into c (or fails naming
 * the field), render_X builds X's JSON value (secrets: the store's copy),
 * reset_X sets X's default. */
#define WR_QCONFIG__HOOKS(name)                                                                    \
    wr_err_t wr_qconfig__parse_##name(wr_field_err_t *e, const json_t *v, wr_queue_config_t *c);   \
    bool wr_qconfig__render_##name(const wr_queue_config_t *c, bool secrets, json_t **out)
/* qconfig_fields.c */
WR_QCONFIG__HOOKS(capacity);
void wr_qconfig__reset_capacity(wr_queue_config_t *c);
WR_QCONFIG__HOOKS(poll_bands);
void wr_qconfig__reset_poll_bands(wr_queue_config_t *c);
WR_QCONFIG__HOOKS(invite_key);
WR_QCONFIG__HOOKS(return_origins);
WR_QCONFIG__HOOKS(poll_max_ms);
void wr_qconfig__reset_poll_max_ms(wr_queue_config_t *c);
WR_QCONFIG__HOOKS(autotune);
/* autotune's value in the store's hash: "min:max:targetMs", "" for null;
 * the length written (snprintf's). */
int wr_qconfig__store_value_autotune(const wr_queue_config_t *c, char *buf, size_t len);
WR_QCONFIG__HOOKS(captcha);
WR_QCONFIG__HOOKS(groups);
WR_QCONFIG__HOOKS(bypass);
/* targetUrl (a STRING row): "", an absolute http(s) URL, or a path. */
bool wr_qconfig__target_url_ok(const char *s, size_t len);
/* qconfig_log.c */
WR_QCONFIG__HOOKS(draw);
/* qconfig_page.c */
WR_QCONFIG__HOOKS(page);
WR_QCONFIG__HOOKS(notice);
/* True when the UTF-8 text s (len bytes) is empty or only white space:
 * the Unicode White_Space characters (ASCII's, U+0085, U+00A0, U+1680,
 * U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) and U+FEFF. */
bool wr_qconfig__blank(const char *s, size_t len);

#endif
