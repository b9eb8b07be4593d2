/*
 * config.h - the server's configuration: command-line flags, an INI file
 * (libinih) and environment variables for secrets.
 *
 * Precedence, lowest first: defaults, the INI file (--config), flags, then
 * WAITROOM_ADMIN_KEY / WAITROOM_TOKEN_SECRET / WAITROOM_COOKIE_SECRET for
 * secrets. The INI file may declare queues to create at start:
 *
 *   [server]
 *   listen = 127.0.0.1:8080
 *   store = memory
 *   admin_key = change-me
 *   [queue demo]
 *   admitPerSecond = 175
 *   pollBands = [{"upTo":100,"ms":1000},{"ms":5000}]
 *   targetUrl = https://shop.example/checkout
 *
 * Queue keys are the JSON field names of the queue config; each value is
 * parsed as JSON, or taken as a string when it is not valid JSON.
 */
#ifndef WR_CONFIG_H
#define WR_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/log.h"
#include "core/pushaddr.h"
#include "core/qconfig.h"
#include "core/ratelimit.h"

#define WR_CONFIG_QUEUES_MAX          64
#define WR_ADDR_MAX                   255
#define WR_URL_MAX                    1023
#define WR_KEY_MAX                    256
#define WR_HEADER_NAME_MAX            64
#define WR_BREAKER_SPEC_MAX           255
#define WR_CONFIG_SECRET_MIN          32    /* --strict-secrets: minimum bytes of a secret */
#define WR_CONFIG_CONNECTIONS_DEFAULT 10000 /* --max-connections auto, when the limit allows */

typedef enum {
    WR_IDENTITY_COOKIE = 0, /* signed wr_vid visitor cookie (default) */
    WR_IDENTITY_HEADER = 1, /* user id from a trusted gateway header */
} wr_identity_mode_t;

typedef struct {
    char name[WR_QUEUE_NAME_MAX + 1];
    json_t *fields; /* owned: the queue config as a JSON object, for wr_qconfig_parse */
} wr_config_queue_t;

typedef struct {
    char listen[WR_ADDR_MAX + 1];   /* "ADDR:PORT", default "127.0.0.1:8080" */
    bool reuse_port;                /* SO_REUSEPORT on the listeners: N processes share
                                       one port (one Redis store); default false */
    char store[WR_URL_MAX + 1];     /* "memory" (default) | redis://... | unix://... */
    char admin_key[WR_KEY_MAX + 1]; /* "" = admin API refuses everything (401) */
    wr_identity_mode_t identity;    /* default cookie */
    char identity_header[WR_HEADER_NAME_MAX + 1]; /* header mode: default "X-User-Id" */
    uint8_t token_secret[WR_KEY_MAX];             /* raw bytes; len 0 = shared one from the store */
    size_t token_secret_len;
    uint8_t cookie_secret[WR_KEY_MAX]; /* len 0 = derived from the token secret */
    size_t cookie_secret_len;
    wr_log_level_t log_level;              /* default info */
    bool cookie_secure;                    /* add Secure to wr_vid; default false */
    uint32_t max_connections;              /* connection cap; 0 (default) = auto, which
                                              wr_config_fit_connections resolves */
    uint32_t timeout_seconds;              /* HTTP read/write timeout, s; default 30 */
    uint32_t store_timeout_ms;             /* store command timeout, ms; default 250 */
    char data_dir[WR_URL_MAX + 1];         /* memory store snapshots; "" = none */
    char log_key_file[WR_URL_MAX + 1];     /* --log-key: the public log's key (PEM); "" = the
                                              store's */
    char log_name[65];                     /* --log-name: the log's key and origin name */
    char web_dir[WR_URL_MAX + 1];          /* the queue page's files replacing the embedded
                                              ones by name (http/webdir.h); "" = none */
    char breaker[WR_BREAKER_SPEC_MAX + 1]; /* store breaker: "" = defaults, "off", or
                                              "key=value,..." (wr_breaker_parse) */
    uint32_t redis_wait_replicas;          /* WAIT N after consume/admission; 0 = off */
    uint32_t redis_wait_timeout_ms;        /* timeout of that WAIT, ms; default 100 */
    char redis_ca[WR_URL_MAX + 1];         /* rediss://: PEM CA bundle; "" = system CAs */
    char redis_cert[WR_URL_MAX + 1];       /* rediss://: PEM client certificate; "" = none */
    char redis_key[WR_URL_MAX + 1];        /* its private key (PEM, unencrypted) */
    char redis_password[512];              /* WAITROOM_REDIS_PASSWORD (env only): replaces
                                              the store URL's password; "" = the URL's */
    bool redis_allow_eviction;             /* start on an allkeys-* maxmemory-policy */
    /* Security (docs/SECURITY.md). */
    char admin_listen[WR_ADDR_MAX + 1];        /* "" = admin API on the main listener; else
                                                  only there (404 on the public one) */
    uint8_t token_secret_previous[WR_KEY_MAX]; /* rotation: still verifies; len 0 = none */
    size_t token_secret_previous_len;
    uint8_t cookie_secret_previous[WR_KEY_MAX]; /* rotation: still verifies; len 0 = none */
    size_t cookie_secret_previous_len;
    bool strict_secrets; /* refuse configured secrets < 32 bytes; default false */
    double join_rate;    /* joins per second per client address; 0 = off
                            (default: clients behind one NAT share an address) */
    double join_burst;   /* join bucket size; default 20 */
    wr_cidr_t trusted_proxies[WR_RATELIMIT_CIDRS_MAX]; /* peers whose X-Forwarded-For counts */
    size_t n_trusted_proxies;
    double poll_min_fraction;         /* a poll earlier than this share of the last
                                         retryAfterMs is early; 0 = off (default) */
    double poll_allowance;            /* early polls allowed (bucket, refilled 1/s);
                                         default 20 */
    uint32_t rate_limit_keys;         /* entries per limiter table; default 65536 */
    uint32_t max_conn_requests;       /* requests per connection, then close; 0 = no
                                         limit; default 1000 */
    uint32_t report_days;             /* --report-days: days a queue's report is kept
                                         (1..3650); default 30 */
    uint32_t request_timeout_seconds; /* a request (line, headers, body) must arrive
                                         within this, else 408 and close; default 10 */
    /* Web Push (docs/API.md 1.3, "Your turn, off the page"). */
    char push_subject[256];         /* --push-subject: mailto: or https:// (wr_vapid_subject_ok);
                                       "" = none: no queue may turn push on */
    char push_key[WR_URL_MAX + 1];  /* --push-key: P-256 PEM file; "" = the key derived
                                       from the token secret kept in the store */
    wr_pushaddr_allow_t push_allow; /* --push-allow-host HOST[:PORT], repeatable */
    /* Operations (logs, pid file). */
    wr_log_format_t log_format;      /* text (default) | json */
    char access_log[WR_URL_MAX + 1]; /* "" = none, "-" = stdout, else a file */
    char error_log[WR_URL_MAX + 1];  /* "" = standard error, else a file */
    char pid_file[WR_URL_MAX + 1];   /* "" = none; written at start, removed at exit */
    wr_config_queue_t queues[WR_CONFIG_QUEUES_MAX];
    size_t n_queues;
} wr_config_t;

/* What wr_config_load leaves for the caller to do. */
typedef enum {
    WR_CONFIG_RUN = 0,     /* start the server */
    WR_CONFIG_HELP = 1,    /* --help: print wr_config_usage() on stdout, exit 0 */
    WR_CONFIG_VERSION = 2, /* --version: print wr_config_version() on stdout, exit 0 */
} wr_config_action_t;

/* Fills cfg with defaults (no queues). */
void wr_config_defaults(wr_config_t *cfg);

/*
 * Loads flags (argv), the INI file named by --config, and the environment
 * (envp-style lookup through getenv). Returns WR_OK, or WR_EINVAL with a
 * message naming the flag, file line or key in err (errlen bytes incl. NUL).
 * Sets *action (when not NULL) to WR_CONFIG_HELP or WR_CONFIG_VERSION (and
 * returns WR_OK, whatever else argv holds) for the first --help or
 * --version, else to WR_CONFIG_RUN. cfg is first reset to
 * the defaults (it need not be initialised). On error cfg may be
 * partially filled; call wr_config_free() either way. An empty secret
 * environment variable counts as unset.
 */
wr_err_t wr_config_load(wr_config_t *cfg, int argc, char **argv, wr_config_action_t *action,
                        char *err, size_t errlen);

/* Parses an INI file into cfg (flags not applied). Same errors as load.
 * Implemented in config_file.c. */
wr_err_t wr_config_load_file(wr_config_t *cfg, const char *path, char *err, size_t errlen);

/*
 * Sets the [server] key key (e.g. "max_connections") to value, checked as
 * its flag is. WR_OK, or WR_EINVAL with "unknown key 'KEY' in [server]" or
 * "KEY: what is wrong" in err (errlen bytes incl. NUL).
 */
wr_err_t wr_config_set(wr_config_t *cfg, const char *key, const char *value, char *err,
                       size_t errlen);

/*
 * SIGHUP: takes from fresh (a config just loaded from the same flags, file
 * and environment) the settings that apply without a restart - the log
 * level and format, the admin key and the secrets - into running. The
 * names ([server] keys, or flags for settings without one) of the other
 * settings whose values differ are written to restart (cap bytes incl. NUL,
 * comma-separated, "" when none): they need a restart. Returns how many
 * reloadable settings changed. Queue declarations are not touched.
 */
size_t wr_config_reload(wr_config_t *running, const wr_config_t *fresh, char *restart, size_t cap);

/*
 * Fits cfg->max_connections to the hard limit on open files (hard_limit,
 * RLIMIT_NOFILE's rlim_max; pass ULLONG_MAX for "unlimited"), keeping margin
 * descriptors for everything else (store, listeners, files). An explicit
 * value (> 0) is kept if value + margin <= hard_limit, else WR_EINVAL with
 * the reason in note. Auto (0) becomes WR_CONFIG_CONNECTIONS_DEFAULT, or
 * hard_limit - margin when that is lower, with a warning for the log in
 * note ("" when there is nothing to say); WR_EINVAL when hard_limit <=
 * margin. note is notelen bytes incl. NUL.
 */
wr_err_t wr_config_fit_connections(wr_config_t *cfg, unsigned long long hard_limit, unsigned margin,
                                   char *note, size_t notelen);

/* Releases the queue declarations (json objects). cfg stays valid, with no
 * queues. Implemented in config_file.c. */
void wr_config_free(wr_config_t *cfg);

/* The usage text printed by --help. Static string. */
const char *wr_config_usage(void);

/* The line printed by --version: "waitroomd X.Y.Z\n" (WR_VERSION from
 * version.h). Static string. */
const char *wr_config_version(void);

#endif
