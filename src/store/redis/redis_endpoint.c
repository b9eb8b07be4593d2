/*
 * redis_endpoint.c - the node address of a CLUSTER SLOTS entry or of a
 * MOVED/ASK redirect (redis_endpoint.h).
 *
 * Why a module of its own: the router used to take only a string endpoint
 * (a NULL one, `cluster-preferred-endpoint-type unknown-endpoint`, made
 * the whole slot map "not parse" and every request 503, issue 37 / K42);
 * the rules for the three endpoint types are pure and tested alone
 * (tests/unit/store/redis/test_redis_endpoint.c), the router keeps the
 * table and the connections.
 *
 * Redis 7 (cluster.c, addNodeToNodeReply / getPreferredEndpoint): the
 * endpoint is the node's IP, its announced hostname ("?" without one) or
 * NULL (unknown-endpoint); a redirect prints "" for NULL. The fourth
 * element of an entry is a flat key/value list of the addresses that are
 * not the preferred one ("ip", "hostname").
 */
#include "store/redis/redis_endpoint.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 16384

/* The "ip" value of an entry's metadata (element 3), or NULL. */
static const char *meta_ip(const redisReply *e)
{
    if (e->elements < 4)
        return NULL;
    const redisReply *m = e->element[3];
    if (m->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < m->elements; i += 2) {
        const redisReply *k = m->element[i], *v = m->element[i + 1];
        if (k->type == REDIS_REPLY_STRING && strcmp(k->str, "ip") == 0 &&
            v->type == REDIS_REPLY_STRING && v->str[0])
            return v->str;
    }
    return NULL;
}

static bool put_host(const char *h, char *host, size_t cap)
{
    size_t n = h ? strlen(h) : 0;
    if (n == 0 || n >= cap)
        return false;
    memcpy(host, h, n + 1);
    return true;
}

bool wr_redis_endpoint_entry(const redisReply *e, const char *from, char *host, size_t cap,
                             int *port)
{
    if (!e || e->type != REDIS_REPLY_ARRAY || e->elements < 2 ||
        e->element[1]->type != REDIS_REPLY_INTEGER || e->element[1]->integer < 1 ||
        e->element[1]->integer > 65535)
        return false;
    const redisReply *ep = e->element[0];
    const char *h;
    if (ep->type == REDIS_REPLY_NIL)
        h = from; /* unknown-endpoint */
    else if (ep->type != REDIS_REPLY_STRING)
        return false;
    else if (ep->str[0] == '\0')
        h = from; /* the node does not know its own address yet */
    else if (strcmp(ep->str, "?") == 0)
        h = meta_ip(e) ? meta_ip(e) : from; /* hostname type, none announced */
    else
        h = ep->str;
    if (!put_host(h, host, cap))
        return false;
    *port = (int)e->element[1]->integer;
    return true;
}

bool wr_redis_endpoint_redirect(const char *s, const char *from, unsigned *slot, char *host,
                                size_t cap, int *port)
{
    const char *sp = s ? strchr(s, ' ') : NULL;
    if (!sp)
        return false;
    char *end;
    unsigned long v = strtoul(sp + 1, &end, 10);
    if (end == sp + 1 || *end != ' ' || v >= SLOTS)
        return false;
    const char *addr = end + 1;
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return false;
    long p = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || (*end != '\0' && *end != ' ') || p < 1 || p > 65535)
        return false;
    size_t n = (size_t)(colon - addr);
    if (n == 0 || (n == 1 && addr[0] == '?')) {
        if (!put_host(from, host, cap))
            return false;
    } else {
        if (n >= cap)
            return false;
        memcpy(host, addr, n);
        host[n] = '\0';
    }
    *slot = (unsigned)v;
    *port = (int)p;
    return true;
}
