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

#define WR_REDIS_URL_HOST_MAX 255   /* bytes of a redis:// host */
#define WR_REDIS_URL_PATH_MAX 107   /* bytes after unix:// (sun_path without the NUL) */
#define WR_REDIS_URL_DB_MAX   65535 /* highest database number */

/* Where to connect. */
typedef struct {
    bool is_unix;
    char host[WR_REDIS_URL_HOST_MAX + 1]; /* TCP: host name or IPv4 address */
    int port;                             /* TCP: 1..65535 */
    char path[WR_REDIS_URL_PATH_MAX + 1]; /* unix: absolute socket path */
    int db;                               /* SELECT db after connecting; -1 = none */
} wr_redis_url_t;

/*
 * Parses
 *   redis://HOST:PORT[/DB]  HOST 1..255 bytes of [A-Za-z0-9._-], PORT
 *                           1..65535, DB 0..65535 (decimal digits only)
 *   unix:///PATH[?db=DB]    at most 107 bytes after "unix://", none of them
 *                           a control byte, space or DEL; PATH absolute
 * Returns WR_OK and fills *out (when out is not NULL); WR_EINVAL with a
 * one-line message in err (errlen bytes, NUL-terminated; err may be NULL)
 * that quotes the URL, e.g. "'redis://h' must be redis://HOST:PORT[/DB]
 * (port 1..65535)", or "unix socket path is longer than 107 bytes".
 */
wr_err_t wr_redis_url_parse(const char *url, wr_redis_url_t *out, char *err, size_t errlen);

#endif
