/*
 * redis_url.h - the one URL grammar of the Redis store: parsed by the
 * connection when it opens and by the check of --store, so the two cannot
 * disagree. Pure: no libevent, no hiredis, no logging.
 *
 *   redis://[USER:PASSWORD@]HOST:PORT[/DB]
 *   rediss://[USER:PASSWORD@]HOST:PORT[/DB]                       TLS
 *   redis-sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER[/DB]
 *   unix://[USER:PASSWORD@]/PATH[?db=DB]
 *   redis-cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]      Redis Cluster seeds
 *   rediss-cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]     the same over TLS
 *
 * HOST is a name or IPv4 address of [A-Za-z0-9._-] (1..255 bytes), or an
 * IPv6 literal in brackets ("[::1]", "[fe80::1%25eth0]" with a zone);
 * PORT 1..65535 and DB 0..65535 are decimal digits. USER and PASSWORD are
 * percent-decoded ("p%40ss" is "p@ss"); USER may be empty (":PASSWORD@":
 * the password of the default user); an empty PASSWORD is no password.
 * The credentials end at the last '@' of the URL, so a password written
 * with a raw '@', '/' or ':' still parses. In redis-sentinel:// the
 * credentials are those of the primary (and its replicas), not of the
 * sentinels. In redis-cluster:// the seeds are any nodes of the cluster
 * (the slot map is asked from them); a cluster has no DB.
 *
 * Secrets: no message of this module ever contains the password. Where a
 * message quotes the URL, it quotes wr_redis_url_redact()'s form
 * ("redis://alice:***@host:6379").
 */
#ifndef WR_REDIS_URL_H
#define WR_REDIS_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/ids.h"

#define WR_REDIS_URL_MAX 4096 /* longest URL accepted, bytes */
#define WR_REDIS_URL_HOST_MAX                                                                      \
    WR_HOST_NAME_MAX                     /* bytes of a host (an IPv6 host without brackets)        \
                                          */
#define WR_REDIS_URL_PATH_MAX      107   /* bytes after unix:// (sun_path without the NUL) */
#define WR_REDIS_URL_DB_MAX        65535 /* highest database number */
#define WR_REDIS_URL_USER_MAX      255   /* bytes of a decoded ACL user name */
#define WR_REDIS_URL_PASSWORD_MAX  511   /* bytes of a decoded password */
#define WR_REDIS_URL_MASTER_MAX    255   /* bytes of a Sentinel master name */
#define WR_REDIS_URL_SENTINELS_MAX 16    /* sentinels in one redis-sentinel:// URL */
#define WR_REDIS_URL_SEEDS_MAX     16    /* seeds in one redis-cluster:// URL */

typedef enum {
    WR_REDIS_URL_TCP = 0,      /* redis:// */
    WR_REDIS_URL_TLS = 1,      /* rediss:// */
    WR_REDIS_URL_SENTINEL = 2, /* redis-sentinel:// */
    WR_REDIS_URL_UNIX = 3,     /* unix:// */
    WR_REDIS_URL_CLUSTER = 4,  /* redis-cluster:// and rediss-cluster:// (tls set) */
} wr_redis_url_kind_t;

/* One TCP endpoint. */
typedef struct {
    char host[WR_REDIS_URL_HOST_MAX + 1]; /* name, IPv4, or IPv6 without brackets
                                             ("::1", "fe80::1%eth0") */
    int port;                             /* 1..65535 */
} wr_redis_url_addr_t;

/* Where to connect and as whom. Plain data: copy it freely; clear it with
 * wr_redis_url_wipe() when done (it holds the password). */
typedef struct {
    wr_redis_url_kind_t kind;
    bool is_unix;                         /* kind == WR_REDIS_URL_UNIX */
    bool tls;                             /* rediss:// or rediss-cluster:// */
    char host[WR_REDIS_URL_HOST_MAX + 1]; /* TCP, TLS: the server (as in wr_redis_url_addr_t) */
    int port;                             /* TCP, TLS: 1..65535 */
    char path[WR_REDIS_URL_PATH_MAX + 1]; /* unix: absolute socket path */
    int db;                               /* SELECT db after connecting; -1 = none */
    bool has_user;                        /* AUTH USER PASSWORD (ACL) */
    char user[WR_REDIS_URL_USER_MAX + 1];
    bool has_password; /* AUTH [USER] PASSWORD; false: no AUTH unless has_user */
    char password[WR_REDIS_URL_PASSWORD_MAX + 1];
    size_t nsentinels; /* sentinel: 1..WR_REDIS_URL_SENTINELS_MAX */
    wr_redis_url_addr_t sentinels[WR_REDIS_URL_SENTINELS_MAX];
    char master[WR_REDIS_URL_MASTER_MAX + 1]; /* sentinel: [A-Za-z0-9._-]{1,255} */
    size_t nseeds; /* cluster: 1..WR_REDIS_URL_SEEDS_MAX; host/port are seeds[0] */
    wr_redis_url_addr_t seeds[WR_REDIS_URL_SEEDS_MAX];
} wr_redis_url_t;

/*
 * Parses url (one of the forms above). Returns WR_OK and fills *out (when
 * out is not NULL); WR_EINVAL with a one-line message in err (errlen
 * bytes, NUL-terminated, cut to fit; err may be NULL) that quotes the
 * redacted URL, e.g. "'redis://h' must be redis://HOST:PORT[/DB] (port
 * 1..65535)" or "'redis://[::1:6379': IPv6 address without a closing ']'".
 * A refused URL leaves *out as it was.
 */
wr_err_t wr_redis_url_parse(const char *url, wr_redis_url_t *out, char *err, size_t errlen);

/*
 * The password from the environment (WAITROOM_REDIS_PASSWORD), given as
 * its value: NULL or "" changes nothing; anything else replaces the URL's
 * password as is (not percent-decoded), like every WAITROOM_* secret that
 * overrides the command line. Returns WR_OK; WR_EINVAL when it is longer
 * than WR_REDIS_URL_PASSWORD_MAX bytes ("WAITROOM_REDIS_PASSWORD is longer
 * than 511 bytes"; u unchanged). Pure: the caller reads the environment.
 */
wr_err_t wr_redis_url_set_env_password(wr_redis_url_t *u, const char *env_value, char *err,
                                       size_t errlen);

/*
 * Copies url into out (cap bytes, NUL-terminated, cut to fit) with the
 * password replaced by "***": "redis://alice:s3cret@h:1/0" becomes
 * "redis://alice:***@h:1/0", ":s3cret@" becomes ":***@", and credentials
 * without a ':' ("redis://s3cret@h:1") become "***@" (they may be a
 * password). Works on any string, valid URL or not: everything from the
 * start of the authority (after "://", or the start of the string) to the
 * last '@' counts as credentials. Returns out.
 */
char *wr_redis_url_redact(const char *url, char *out, size_t cap);

/*
 * "HOST:PORT" with an IPv6 host in brackets ("[::1]:6379"), for messages.
 * Returns out (cap bytes, NUL-terminated, cut to fit).
 */
char *wr_redis_url_addr_format(const char *host, int port, char *out, size_t cap);

/* Overwrites the credentials in u with zeros (explicit_bzero: never
 * optimized away) and clears has_user / has_password. NULL is a no-op. */
void wr_redis_url_wipe(wr_redis_url_t *u);

#endif
