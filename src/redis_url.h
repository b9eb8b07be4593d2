/*
 * redis_url.h - the one URL grammar of the Redis store: parsed by the
 * connection when it opens (redis_conn) and by the check of --store
 * (store_registry), so the two cannot disagree. Pure: no libevent, no
 * hiredis.
 */
#ifndef WR_REDIS_URL_H
#define WR_REDIS_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define WR_REDIS_URL_HOST_MAX 255    /* bytes of a redis:// host name */
#define WR_REDIS_URL_PATH_MAX 1023   /* bytes of a unix socket path */
#define WR_REDIS_URL_DB_MAX   100000 /* highest database number */

/* Where to connect. */
typedef struct {
    bool is_unix;
    char host[WR_REDIS_URL_HOST_MAX + 1]; /* TCP: host name or address */
    int port;                             /* TCP: 1..65535 */
    char path[WR_REDIS_URL_PATH_MAX + 1]; /* unix: absolute socket path */
    int db;                               /* SELECT db after connecting; -1 = none */
} wr_redis_url_t;

/*
 * Parses
 *   redis://HOST[:PORT][/DB]  HOST 1..255 bytes, PORT 1..65535 (6379),
 *                             DB 0..100000
 *   unix:///PATH[?db=DB]      PATH absolute, at most 1023 bytes
 * Returns WR_OK and fills *out (when out is not NULL); WR_EINVAL with a
 * one-line message in err (errlen bytes, NUL-terminated; err may be NULL).
 */
wr_err_t wr_redis_url_parse(const char *url, wr_redis_url_t *out, char *err, size_t errlen);

#endif
