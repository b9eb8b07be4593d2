/*
 * store_registry.c - the table of store backends (store_registry.h).
 *
 * One static array of rows, searched in order; the first row whose scheme
 * matches serves the URL. A row's check_url and open share their parser:
 * the memory row accepts exactly "memory"; every Redis row checks with
 * wr_redis_url_parse, the parser wr_store_redis_open runs when it opens.
 * The message for a URL no row serves lists every row's syntax, so it
 * grows with the table.
 */
#include "runtime/store_registry.h"

#include <stdio.h>
#include <string.h>

#include "store/redis/redis_url.h"
#include "store/memory/store_memory.h"
#include "store/redis/store_redis.h"

/* WR_EINVAL with "'URL' must be MUST" in err; the URL without its password
 * (wr_redis_url_redact). */
_Static_assert(WR_STORE_URL_SHOWN_MAX >= WR_REDIS_URL_MAX + 16, "room for a redacted URL");

static wr_err_t refuse(const char *url, const char *must, char *err, size_t errlen)
{
    if (err && errlen) {
        char red[WR_STORE_URL_SHOWN_MAX];
        snprintf(err, errlen, "'%s' must be %s", wr_store_url_shown(url, red, sizeof red), must);
    }
    return WR_EINVAL;
}

/* ---------------------------------------------------------------- memory */

static wr_err_t check_memory(const char *url, char *err, size_t errlen)
{
    if (strcmp(url, "memory") != 0)
        return refuse(url, "memory", err, errlen);
    return WR_OK;
}

static wr_err_t open_memory(struct event_base *base, const char *url, const wr_store_params_t *p,
                            wr_store_t **out)
{
    if (check_memory(url, NULL, 0) != WR_OK)
        return WR_EINVAL;
    wr_store_memory_opts_t o = {0};
    o.data_dir = p->data_dir && p->data_dir[0] ? p->data_dir : NULL;
    wr_err_t err = wr_store_memory_open(base, &o, out);
    if (err == WR_OK && p->on_started)
        p->on_started(WR_OK, NULL, p->started_arg); /* nothing to reach */
    return err;
}

/* ----------------------------------------------------------------- redis */

static wr_err_t check_redis(const char *url, char *err, size_t errlen)
{
    return wr_redis_url_parse(url, NULL, err, errlen);
}

static wr_err_t open_redis(struct event_base *base, const char *url, const wr_store_params_t *p,
                           wr_store_t **out)
{
    wr_store_redis_opts_t o = {0};
    o.url = url;
    o.command_timeout_ms = p->command_timeout_ms;
    o.connect_timeout_ms = p->connect_timeout_ms;
    o.reconnect_max_ms = p->reconnect_max_ms;
    o.wait_replicas = p->wait_replicas;
    o.wait_timeout_ms = p->wait_timeout_ms;
    o.metrics = p->metrics;
    o.tls_ca_file = p->redis_ca && p->redis_ca[0] ? p->redis_ca : NULL;
    o.tls_cert_file = p->redis_cert && p->redis_cert[0] ? p->redis_cert : NULL;
    o.tls_key_file = p->redis_key && p->redis_key[0] ? p->redis_key : NULL;
    o.env_password = p->redis_password;
    o.allow_eviction = p->redis_allow_eviction;
    o.push_sender = p->push_sender;
    o.on_started = p->on_started;
    o.started_arg = p->started_arg;
    return wr_store_redis_open(base, &o, out);
}

/* Redis Cluster: the same backend code (store_redis routes by slot,
 * redis_router.c), its own backend name, so the store contract suite and
 * the integration suite run against a cluster of their own. */
static wr_err_t open_redis_cluster(struct event_base *base, const char *url,
                                   const wr_store_params_t *p, wr_store_t **out)
{
    return open_redis(base, url, p, out);
}

/* ----------------------------------------------------------------- table */

static const wr_store_backend_t backends[] = {
    {"memory", "memory", "memory (embedded)", check_memory, open_memory, "memory", NULL},
    {"redis://", "redis://HOST:PORT[/DB]", NULL, check_redis, open_redis, "redis",
     wr_redis_url_redact},
    {"rediss://", "rediss://HOST:PORT[/DB]", NULL, check_redis, open_redis, "redis",
     wr_redis_url_redact},
    {"redis-sentinel://", "redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER[/DB]", NULL,
     check_redis, open_redis, "redis", wr_redis_url_redact},
    {"unix://", "unix:///PATH", NULL, check_redis, open_redis, "redis", wr_redis_url_redact},
    {"redis-cluster://", "redis-cluster://HOST:PORT[,HOST:PORT...]", NULL, check_redis,
     open_redis_cluster, "redis-cluster", wr_redis_url_redact},
    {"rediss-cluster://", "rediss-cluster://HOST:PORT[,HOST:PORT...]", NULL, check_redis,
     open_redis_cluster, "redis-cluster", wr_redis_url_redact},
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

static bool matches(const char *scheme, const char *url)
{
    size_t n = strlen(scheme);
    bool prefix = n >= 3 && strcmp(scheme + n - 3, "://") == 0;
    return prefix ? strncmp(url, scheme, n) == 0 : strcmp(url, scheme) == 0;
}

const wr_store_backend_t *wr_store_registry_find(const char *url)
{
    for (size_t i = 0; url && i < NBACKENDS; i++)
        if (matches(backends[i].scheme, url))
            return &backends[i];
    return NULL;
}

char *wr_store_url_shown(const char *url, char *out, size_t cap)
{
    const wr_store_backend_t *b = wr_store_registry_find(url);
    if (b && !b->redact) {
        snprintf(out, cap, "%s", url);
        return out;
    }
    /* a row's own, or (no row) the generic rule, which the Redis one is */
    return b ? b->redact(url, out, cap) : wr_redis_url_redact(url ? url : "", out, cap);
}

size_t wr_store_registry_backends(const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < NBACKENDS; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(backends[j].backend, backends[i].backend) == 0;
        if (seen)
            continue;
        if (n < cap)
            names[n] = backends[i].backend;
        n++;
    }
    return n;
}

wr_err_t wr_store_check_url(const char *url, char *err, size_t errlen)
{
    const wr_store_backend_t *b = wr_store_registry_find(url);
    if (b)
        return b->check_url(url, err, errlen);
    /* "'URL' must be A, B or C", from the table */
    char list[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < NBACKENDS; i++) {
        const char *sep = i == 0 ? "" : i + 1 == NBACKENDS ? " or " : ", ";
        int k = snprintf(list + used, sizeof list - used, "%s%s", sep, backends[i].syntax);
        if (k < 0 || (size_t)k >= sizeof list - used)
            break;
        used += (size_t)k;
    }
    return refuse(url, list, err, errlen);
}

wr_err_t wr_store_open_url(struct event_base *base, const char *url, const wr_store_params_t *p,
                           wr_store_t **out)
{
    static const wr_store_params_t defaults;
    const wr_store_backend_t *b = wr_store_registry_find(url);
    if (!b || !base || !out)
        return WR_EINVAL;
    return b->open(base, url, p ? p : &defaults, out);
}
