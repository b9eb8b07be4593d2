/*
 * config_internal.h - what config.c and config_settings.c share: the row
 * type of the settings table and the value parsers the rows' kinds use.
 * Not for other modules (they use config.h).
 */
#ifndef WR_CONFIG_INTERNAL_H
#define WR_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "runtime/config.h"

typedef enum {
    K_HEADING, /* not a setting: a heading line in the usage text */
    K_CONFIG,  /* --config FILE, read by wr_config_load itself */
    K_HELP,    /* --help */
    K_VERSION, /* --version */
    K_BOOL,    /* bool; the flag alone means true, --flag=VALUE takes a bool word */
    K_UINT,    /* uint32_t in [min, max] */
    K_DOUBLE,  /* double in [min, max] */
    K_ENUM,    /* int-sized enum: the index of the value in names */
    K_STRING,  /* char[size], at most size - 1 bytes, after check */
    K_SECRET,  /* uint8_t[size] of raw bytes with a size_t length at len_off */
    K_SPECIAL, /* parsed and stored by set */
} kind_t;

typedef wr_err_t (*check_fn)(const char *v, char *err, size_t errlen);
typedef wr_err_t (*special_fn)(wr_config_t *cfg, const char *v, char *err, size_t errlen);

typedef struct {
    const char *flag; /* without "--"; NULL = no flag */
    const char *ini;  /* [server] key; NULL = not in the file */
    kind_t kind;
    size_t off, size;         /* the field in wr_config_t: offset, bytes */
    size_t len_off;           /* K_SECRET: offset of its length */
    double min, max;          /* K_UINT, K_DOUBLE: the accepted range */
    const char *zero;         /* K_UINT, K_DOUBLE: what 0 means ("off"), or NULL */
    const char *const *names; /* K_ENUM: NULL-terminated */
    check_fn check;           /* K_STRING: validates the value first; NULL = any */
    special_fn set;           /* K_SPECIAL */
    const char *env;          /* variable that overrides file and flag; NULL = none */
    const char *def;          /* default, parsed like a value; NULL = zero / empty */
    bool def_in_help;         /* help already names the default */
    const char *meta;         /* --help: the value's placeholder; NULL = none */
    const char *help;         /* --help: what it does (K_HEADING: the heading) */
    const char *doc;          /* --help: more, inside the parentheses */
    bool reload;              /* applied by SIGHUP (wr_config_reload); else needs a restart */
} setting_t;

/* Every setting, in the order of the usage text (config_settings.c). */
extern const setting_t wr_config__settings[];
extern const size_t wr_config__n_settings;

/* Digits only (no sign, space or junk), value in [min, max]. */
bool wr_config__parse_uint(const char *s, unsigned long long min, unsigned long long max,
                           unsigned long long *out);
/* A finite number in [min, max], the whole string. */
bool wr_config__parse_double(const char *s, double min, double max, double *out);
/* The special settings whose values config.c compares on reload:
 * --identity (cookie | header:NAME) and --trusted-proxies (a CIDR list). */
wr_err_t wr_config__set_identity(wr_config_t *cfg, const char *v, char *err, size_t errlen);
wr_err_t wr_config__set_trusted_proxies(wr_config_t *cfg, const char *v, char *err, size_t errlen);
wr_err_t wr_config__set_push_allow(wr_config_t *cfg, const char *v, char *err, size_t errlen);
/* true/false, yes/no, on/off, 1/0 (any case). */
bool wr_config__parse_bool(const char *v, bool *out);

#endif
