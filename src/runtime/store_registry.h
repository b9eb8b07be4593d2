/*
 * store_registry.h - which store backend serves a --store URL: one table of
 * {scheme, check_url, open} rows, in the manner of Redis's connection
 * types (src/connection.c), as a static table. The check of --store and the
 * open at startup both go through a row, and each row checks and opens with
 * the same parser, so the two cannot disagree. Adding a backend is a row;
 * nothing else switches on the store type.
 */
#ifndef WR_STORE_REGISTRY_H
#define WR_STORE_REGISTRY_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/metrics.h"
#include "store/store.h"

/* What waitroomd's settings say about the store; each backend takes the
 * fields it knows and ignores the others. All zero = the defaults. */
typedef struct {
    const char *data_dir;        /* memory: snapshot directory; NULL or "" = none */
    uint32_t command_timeout_ms; /* redis: 0 = 250 */
    uint32_t connect_timeout_ms; /* redis: 0 = 1000 */
    uint32_t reconnect_max_ms;   /* redis: 0 = 2000 */
    uint32_t wait_replicas;      /* redis durability mode (WAIT); 0 = off */
    uint32_t wait_timeout_ms;    /* redis: 0 = 100 */
    wr_metrics_t *metrics;       /* redis: borrowed, may be NULL; outlives the store */
    const char *redis_ca;        /* rediss://: --redis-ca, --redis-cert, --redis-key */
    const char *redis_cert;
    const char *redis_key;
    const char *redis_password; /* WAITROOM_REDIS_PASSWORD; NULL or "" = the URL's */
    bool redis_allow_eviction;  /* --redis-allow-eviction */
    bool push_sender;           /* redis: this instance sends Web Push (--push-subject) */
    /* The first attempt to reach the store is over, called once: from the
     * loop for Redis (redis_conn.h's started callback: WR_OK connected,
     * WR_EINVAL refuse to start with msg, other errors start degraded),
     * from inside open for the memory store (WR_OK: nothing to reach).
     * May be NULL. */
    void (*on_started)(wr_err_t err, const char *msg, void *arg);
    void *started_arg;
} wr_store_params_t;

/* One row of the registry. */
typedef struct {
    /* "memory" matches exactly that URL; a scheme ending in "://" matches
     * every URL that starts with it. */
    const char *scheme;
    const char *syntax; /* for messages: "redis://HOST:PORT[/DB]" */
    const char *title;  /* how the startup log names such a store; NULL = its URL */
    /* WR_OK, or WR_EINVAL with a one-line message in err (errlen bytes). */
    wr_err_t (*check_url)(const char *url, char *err, size_t errlen);
    /* Opens the backend for url on base, as the backend's own open does
     * (store_memory.h, store_redis.h): WR_OK and *out, or an error. */
    wr_err_t (*open)(struct event_base *base, const char *url, const wr_store_params_t *p,
                     wr_store_t **out);
    /* The backend the row opens, one name per open function ("memory",
     * "redis": the Redis URL schemes share it); the store contract suite
     * and the integration suite run once per backend. */
    const char *backend;
    /* url as messages and logs may show it (its password replaced), in out
     * (cap bytes, NUL-terminated, cut to fit); returns out. NULL: the URL
     * holds no secret and is shown as it is. */
    char *(*redact)(const char *url, char *out, size_t cap);
} wr_store_backend_t;

/* Bytes a shown (redacted) --store value needs: the longest URL accepted
 * plus room for the "***" that replaces a password. */
#define WR_STORE_URL_SHOWN_MAX (4096 + 16)

/*
 * url as a message or log line may quote it, in out (cap bytes,
 * NUL-terminated, cut to fit; WR_STORE_URL_SHOWN_MAX is enough): its row's
 * redact; for a URL no row serves, everything from the start of the
 * authority to the last '@' is taken for credentials and replaced (a typo
 * in the scheme never prints a password). Returns out.
 */
char *wr_store_url_shown(const char *url, char *out, size_t cap);

/* The row that serves url, or NULL (url NULL, or no row matches). */
const wr_store_backend_t *wr_store_registry_find(const char *url);

/* The backends of the table, each once, in table order ("memory", "redis"):
 * stores the first cap names (static strings) in names and returns how
 * many backends there are (may be more than cap). For the test runners
 * (tests/store/contract/runner.c --list-backends). */
size_t wr_store_registry_backends(const char **names, size_t cap);

/*
 * Checks a --store value without opening anything: WR_OK, or WR_EINVAL with
 * a one-line message in err (errlen bytes, NUL-terminated; err may be NULL)
 * that quotes url, e.g. "'mysql://h' must be memory,
 * redis://HOST:PORT[/DB] or unix:///PATH".
 */
wr_err_t wr_store_check_url(const char *url, char *err, size_t errlen);

/*
 * Opens the store url names on base (borrowed; must outlive the store), with
 * p (may be NULL: the defaults). WR_EINVAL when no row serves url or its
 * backend refuses it (the same verdict as wr_store_check_url), else the
 * backend's open: WR_OK and *out, the caller frees with wr_store_close().
 */
wr_err_t wr_store_open_url(struct event_base *base, const char *url, const wr_store_params_t *p,
                           wr_store_t **out);

#endif
