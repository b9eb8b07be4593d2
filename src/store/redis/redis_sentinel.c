/*
 * redis_sentinel.c - Sentinel discovery and failover for redis_conn
 * (redis_sentinel.h), for redis-sentinel://H1:P1,.../MASTER. Part of the
 * redis_conn module: its state lives in struct wr_redis_conn (sq_io,
 * sub_io, sentinel, pin_*; redis_conn_internal.h).
 *
 * Before every connect: a short-lived io to one sentinel after the other
 * (starting with the last that answered) with SENTINEL
 * get-master-addr-by-name MASTER; no address from any: the attempt
 * fails (logged, backoff). The primary is then connected with the URL's
 * credentials and DB. A second io to the sentinel that answered stays
 * subscribed to +failover-state-send-slaveof-noone, +promoted-slave and
 * +switch-master; our master moving to another address drops the
 * primary connection at once and connects to the new address (pinned
 * for 10 s: the sentinels name the old one until the failover ends;
 * the ROLE check holds us off until the replica is promoted). Moving at
 * the first event, before the replica is promoted, matters: writes the
 * old primary still takes (and its other replicas acknowledge) are lost
 * when those replicas resync from the new one.
 *
 * Ownership: sq_io and sub_io are the connection's; wr_redis_conn_close()
 * frees them with the primary's io.
 */
#include "store/redis/redis_sentinel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "store/redis/redis_conn_internal.h"

static void ask_sentinel(wr_redis_conn_t *c);

static void on_sub_close(wr_redis_io_t *io, wr_err_t err, const char *msg, void *arg)
{
    (void)err;
    wr_redis_conn_t *c = arg;
    if (io != c->sub_io)
        return;
    c->sub_io = NULL;
    wr_debug("%s: sentinel subscription ended: %s", c->name, msg);
    wr_redis_conn__free_io(c, io); /* nothing pending: no callback runs */
}

/* "+switch-master" message: "MASTER OLDIP OLDPORT NEWIP NEWPORT"; or
 * "+promoted-slave" (earlier, when the replica is promoted). */
static void on_sub_push(wr_redis_io_t *io, const redisReply *rep, void *arg)
{
    wr_redis_conn_t *c = arg;
    if (io != c->sub_io || rep->type != REDIS_REPLY_ARRAY || rep->elements != 3)
        return;
    const char *chan = wr_redis_conn__reply_str(rep->element[1]),
               *body = wr_redis_conn__reply_str(rep->element[2]);
    char name[WR_REDIS_URL_MASTER_MAX + 1], oh[256], nh[256];
    int op = 0, np = 0;
    bool early = chan && strcmp(chan, "+failover-state-send-slaveof-noone") == 0;
    if (chan && (early || strcmp(chan, "+promoted-slave") == 0)) {
        /* "slave NAME NEWIP NEWPORT @ MASTER OLDIP OLDPORT": the replica is
         * the primary from now on, while the old one may still take
         * writes until the sentinels demote it; move at once. */
        char skip[300];
        if (!body || sscanf(body, "slave %299s %255s %d @ %255s %255s %d", skip, nh, &np, name, oh,
                            &op) != 6)
            return;
    } else if (!chan || !body || strcmp(chan, "+switch-master") != 0 ||
               sscanf(body, "%255s %255s %d %255s %d", name, oh, &op, nh, &np) != 5) {
        return;
    }
    if (strcmp(name, c->ep.master) != 0)
        return;
    /* Until connected there (or 10 s), connect to the new primary without
     * asking: the sentinels still name the old one until the end. */
    snprintf(c->pin_host, sizeof c->pin_host, "%s", nh);
    c->pin_port = np;
    c->pin_until_ms = wr_clock_mono_ms() + 10000;
    char msg[900];
    snprintf(msg, sizeof msg, "sentinel: %s failed over from %s:%d to %s:%d (%s)", name, oh, op, nh,
             np, chan);
    wr_warn("%s: %s", c->name, msg);
    if (c->state == WR_REDIS_CONN__CLOSED)
        return;
    if (c->io && strcmp(c->host, nh) == 0 && c->port == np && c->state == WR_REDIS_CONN__CONNECTED)
        return; /* already there */
    if (c->sq_io)
        return; /* asking now: the answer will be the new primary */
    /* Fail fast now; reconnect from the loop (we are inside sub_io's callback). */
    c->state = WR_REDIS_CONN__DISCONNECTED;
    c->backoff_ms = WR_REDIS_CONN__BACKOFF_MIN_MS;
    snprintf(c->drop_why, sizeof c->drop_why, "the sentinels switched %s to %s:%d", name, nh, np);
    if (c->io) {
        event_active(c->drop_ev, EV_TIMEOUT, 0);
    } else {
        evtimer_del(c->retry_timer);
        struct timeval tv = {0, 0};
        evtimer_add(c->retry_timer, &tv);
    }
}

/* Options of an io to the current sentinel: no credentials (the URL's are
 * the primary's), the connect timeout for its commands too. */
static wr_redis_io_opts_t sentinel_opts(wr_redis_conn_t *c)
{
    const wr_redis_url_addr_t *s = &c->ep.sentinels[c->sentinel];
    wr_redis_io_opts_t o = {0};
    o.host = s->host;
    o.port = s->port;
    o.db = -1;
    o.connect_timeout_ms = c->connect_timeout_ms;
    o.command_timeout_ms = c->connect_timeout_ms;
    o.arg = c;
    return o;
}

static void subscribe_sentinel(wr_redis_conn_t *c)
{
    if (c->sub_io)
        return;
    wr_redis_io_opts_t o = sentinel_opts(c);
    o.hung_ms = WR_REDIS_IO_NO_HUNG;
    o.on_close = on_sub_close;
    o.on_push = on_sub_push;
    o.arg = c;
    static const char *const argv[] = {"SUBSCRIBE", "+switch-master"};
    static const char *const argv2[] = {"SUBSCRIBE", "+promoted-slave"};
    static const char *const argv3[] = {"SUBSCRIBE", "+failover-state-send-slaveof-noone"};
    if (wr_redis_io_connect(c->base, &o, &c->sub_io) != WR_OK) {
        c->sub_io = NULL;
        return;
    }
    if (wr_redis_io_command(c->sub_io, 2, argv, NULL, 0, NULL, NULL) != WR_OK ||
        wr_redis_io_command(c->sub_io, 2, argv2, NULL, 0, NULL, NULL) != WR_OK ||
        wr_redis_io_command(c->sub_io, 2, argv3, NULL, 0, NULL, NULL) != WR_OK) {
        wr_redis_io_t *io = c->sub_io;
        c->sub_io = NULL;
        wr_redis_conn__free_io(c, io);
    }
}

static void on_sentinel_reply(wr_err_t err, const redisReply *rep, void *arg)
{
    wr_redis_conn_t *c = arg;
    if (err == WR_ECANCELED)
        return; /* we freed it (close) */
    wr_redis_io_t *io = c->sq_io;
    const wr_redis_url_addr_t *s = &c->ep.sentinels[c->sentinel];
    char where[280], host[WR_REDIS_URL_HOST_MAX + 1] = "";
    int port = 0;
    wr_redis_url_addr_format(s->host, s->port, where, sizeof where);
    if (err == WR_OK && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
        wr_redis_conn__reply_str(rep->element[0]) && wr_redis_conn__reply_str(rep->element[1])) {
        snprintf(host, sizeof host, "%s", rep->element[0]->str);
        port = atoi(rep->element[1]->str);
    } else if (err != WR_OK) {
        snprintf(c->sentinel_last, sizeof c->sentinel_last, "sentinel %s: %s", where,
                 wr_strerror(err));
    } else if (rep->type == REDIS_REPLY_ERROR) {
        snprintf(c->sentinel_last, sizeof c->sentinel_last, "sentinel %s: %.120s", where, rep->str);
    } else {
        snprintf(c->sentinel_last, sizeof c->sentinel_last, "sentinel %s knows no master named %s",
                 where, c->ep.master);
    }
    c->sq_io = NULL;
    if (!wr_redis_conn__free_io(c, io))
        return;
    if (c->state == WR_REDIS_CONN__CLOSED || c->io)
        return;
    if (port > 0 && port <= 65535) {
        subscribe_sentinel(c);
        wr_redis_conn__connect_server(c, host, port);
        return;
    }
    c->sentinel = (c->sentinel + 1) % c->ep.nsentinels;
    if (++c->sentinel_tries < c->ep.nsentinels) {
        ask_sentinel(c);
        return;
    }
    char msg[1100];
    snprintf(msg, sizeof msg, "no sentinel named a primary for master %s (last: %s)", c->ep.master,
             c->sentinel_last);
    c->state = WR_REDIS_CONN__DISCONNECTED;
    wr_redis_conn__log(c, WR_LOG_WARN, msg);
    wr_redis_conn__first_done(c, WR_EUNAVAILABLE, msg);
    wr_redis_conn__schedule_reconnect(c);
}

static void ask_sentinel(wr_redis_conn_t *c)
{
    wr_redis_io_opts_t o = sentinel_opts(c);
    c->state = WR_REDIS_CONN__CONNECTING;
    const char *argv[] = {"SENTINEL", "get-master-addr-by-name", c->ep.master};
    if (wr_redis_io_connect(c->base, &o, &c->sq_io) != WR_OK) {
        c->sq_io = NULL;
        c->state = WR_REDIS_CONN__DISCONNECTED;
        wr_redis_conn__schedule_reconnect(c);
        return;
    }
    if (wr_redis_io_command(c->sq_io, 3, argv, NULL, 0, on_sentinel_reply, c) != WR_OK) {
        wr_redis_io_t *io = c->sq_io;
        c->sq_io = NULL;
        c->state = WR_REDIS_CONN__DISCONNECTED;
        if (wr_redis_conn__free_io(c, io))
            wr_redis_conn__schedule_reconnect(c);
    }
}

void wr_redis_sentinel_attempt(wr_redis_conn_t *c)
{
    if (c->pin_port > 0 && wr_clock_mono_ms() < c->pin_until_ms) {
        wr_redis_conn__connect_server(c, c->pin_host, c->pin_port);
        return;
    }
    c->pin_port = 0;
    c->sentinel_tries = 0;
    ask_sentinel(c);
}
