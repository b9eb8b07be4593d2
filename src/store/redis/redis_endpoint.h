/*
 * redis_endpoint.h - the node address a Redis Cluster answer names, for
 * every endpoint type Redis documents (`cluster-preferred-endpoint-type`):
 *
 *   ip                "127.0.0.1" - used as it is;
 *   hostname          "redis-0.example" - used as it is (redis_io resolves
 *                     it, and a TLS connection checks the certificate
 *                     against it); "?" when the node has no
 *                     cluster-announce-hostname;
 *   unknown-endpoint  NULL in CLUSTER SLOTS, "" in MOVED/ASK.
 *
 * NULL, "" and "?" mean the address the answer came from (Redis's
 * CLUSTER SLOTS page: "the same endpoint it used to send the current
 * command"); for "?" the entry's "ip" metadata (Redis 7's fourth element)
 * comes first when it is there. Pure functions, no I/O.
 */
#ifndef WR_REDIS_ENDPOINT_H
#define WR_REDIS_ENDPOINT_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * A CLUSTER SLOTS node entry [endpoint, port, id?, metadata?] -> host
 * (cap bytes, NUL-terminated) and port. from: the host the answer came
 * from (borrowed). False when the entry is malformed (not an array, no
 * port, a port outside 1..65535, an endpoint that is neither a string nor
 * NULL, a host that does not fit); host and port are then unset.
 */
bool wr_redis_endpoint_entry(const redisReply *e, const char *from, char *host, size_t cap,
                             int *port);

/*
 * A redirect "MOVED 3999 127.0.0.1:6381" or "ASK 3999 :6381" (the word,
 * the slot, then ENDPOINT:PORT; the last ':' ends the endpoint, so an IPv6
 * host comes without brackets) -> slot (< 16384), host and port; an empty
 * or "?" endpoint is from (the node that answered). False when malformed.
 */
bool wr_redis_endpoint_redirect(const char *s, const char *from, unsigned *slot, char *host,
                                size_t cap, int *port);

#endif
