/*
 * test_redis_endpoint.c - the address of a CLUSTER SLOTS node entry and
 * of a MOVED/ASK redirect for each endpoint type Redis documents (issue
 * 37, K42): ip, hostname, hostname never announced ("?"), unknown-endpoint
 * (NULL, and "" in a redirect). The replies are built as hiredis builds
 * Redis 7's (cluster.c, addNodeToNodeReply); the same answers from a real
 * cluster run in tests/integration/test_cluster_faults.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "store/redis/redis_endpoint.h"
#include "unit_main.h"

static redisReply str(const char *s)
{
    redisReply r = {.type = REDIS_REPLY_STRING, .str = (char *)s, .len = strlen(s)};
    return r;
}

static redisReply num(long long v)
{
    redisReply r = {.type = REDIS_REPLY_INTEGER, .integer = v};
    return r;
}

/* [endpoint, port, id, [meta...]] */
typedef struct {
    redisReply e, ep, port, id, meta, mk, mv;
    redisReply *el[4], *mel[2];
} entry_t;

static redisReply *entry(entry_t *t, const redisReply *ep, long long port, const char *meta_ip)
{
    memset(t, 0, sizeof *t);
    t->ep = *ep;
    t->port = num(port);
    t->id = str("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca");
    t->meta.type = REDIS_REPLY_ARRAY;
    if (meta_ip) {
        t->mk = str("ip");
        t->mv = str(meta_ip);
        t->mel[0] = &t->mk;
        t->mel[1] = &t->mv;
        t->meta.element = t->mel;
        t->meta.elements = 2;
    }
    t->el[0] = &t->ep;
    t->el[1] = &t->port;
    t->el[2] = &t->id;
    t->el[3] = &t->meta;
    t->e.type = REDIS_REPLY_ARRAY;
    t->e.element = t->el;
    t->e.elements = 4;
    return &t->e;
}

static void t_entry_types(void **state)
{
    (void)state;
    entry_t t;
    char host[64];
    int port = 0;
    /* ip */
    redisReply ip = str("10.0.0.7");
    assert_true(
        wr_redis_endpoint_entry(entry(&t, &ip, 7001, NULL), "seed", host, sizeof host, &port));
    assert_string_equal(host, "10.0.0.7");
    assert_int_equal(port, 7001);
    /* hostname (announced): as it is, resolved later */
    redisReply hn = str("redis-1.example");
    assert_true(wr_redis_endpoint_entry(entry(&t, &hn, 7002, "10.0.0.8"), "seed", host, sizeof host,
                                        &port));
    assert_string_equal(host, "redis-1.example");
    assert_int_equal(port, 7002);
    /* hostname never announced: "?", the ip metadata first, else the node asked */
    redisReply q = str("?");
    assert_true(
        wr_redis_endpoint_entry(entry(&t, &q, 7003, "10.0.0.9"), "seed", host, sizeof host, &port));
    assert_string_equal(host, "10.0.0.9");
    assert_true(
        wr_redis_endpoint_entry(entry(&t, &q, 7003, NULL), "seed", host, sizeof host, &port));
    assert_string_equal(host, "seed");
    /* unknown-endpoint: NULL is the node asked, whatever the metadata says */
    redisReply nil = {.type = REDIS_REPLY_NIL};
    assert_true(wr_redis_endpoint_entry(entry(&t, &nil, 7004, "10.0.0.10"), "lb.example", host,
                                        sizeof host, &port));
    assert_string_equal(host, "lb.example");
    assert_int_equal(port, 7004);
    /* "": a node that does not know its own address yet */
    redisReply empty = str("");
    assert_true(wr_redis_endpoint_entry(entry(&t, &empty, 7005, NULL), "127.0.0.1", host,
                                        sizeof host, &port));
    assert_string_equal(host, "127.0.0.1");
    /* Redis 6's two-element entry */
    entry(&t, &ip, 7006, NULL);
    t.e.elements = 2;
    assert_true(wr_redis_endpoint_entry(&t.e, "seed", host, sizeof host, &port));
    assert_string_equal(host, "10.0.0.7");
}

static void t_entry_malformed(void **state)
{
    (void)state;
    entry_t t;
    char host[16];
    int port = 0;
    redisReply ip = str("10.0.0.7"), n = num(5);
    assert_false(wr_redis_endpoint_entry(NULL, "seed", host, sizeof host, &port));
    assert_false(wr_redis_endpoint_entry(&ip, "seed", host, sizeof host, &port));
    assert_false(wr_redis_endpoint_entry(entry(&t, &ip, 0, NULL), "s", host, sizeof host, &port));
    assert_false(
        wr_redis_endpoint_entry(entry(&t, &ip, 65536, NULL), "s", host, sizeof host, &port));
    assert_false(wr_redis_endpoint_entry(entry(&t, &n, 7000, NULL), "s", host, sizeof host, &port));
    entry(&t, &ip, 7000, NULL);
    t.e.elements = 1;
    assert_false(wr_redis_endpoint_entry(&t.e, "s", host, sizeof host, &port));
    /* a host that does not fit */
    redisReply longh = str("a-very-long-host-name.example");
    assert_false(
        wr_redis_endpoint_entry(entry(&t, &longh, 7000, NULL), "s", host, sizeof host, &port));
    /* NULL endpoint and no address to fall back on */
    redisReply nil = {.type = REDIS_REPLY_NIL};
    assert_false(
        wr_redis_endpoint_entry(entry(&t, &nil, 7000, NULL), "", host, sizeof host, &port));
}

static void t_redirect(void **state)
{
    (void)state;
    char host[64];
    int port = 0;
    unsigned slot = 0;
    assert_true(wr_redis_endpoint_redirect("MOVED 3999 127.0.0.1:6381", "from", &slot, host,
                                           sizeof host, &port));
    assert_int_equal(slot, 3999);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 6381);
    /* hostname */
    assert_true(wr_redis_endpoint_redirect("ASK 0 redis-2.example:7000", "from", &slot, host,
                                           sizeof host, &port));
    assert_string_equal(host, "redis-2.example");
    assert_int_equal(slot, 0);
    /* IPv6 without brackets: the last ':' ends the host */
    assert_true(
        wr_redis_endpoint_redirect("MOVED 16383 ::1:7000", "f", &slot, host, sizeof host, &port));
    assert_string_equal(host, "::1");
    assert_int_equal(slot, 16383);
    /* unknown-endpoint ("") and hostname not announced ("?"): the node
     * that answered */
    assert_true(
        wr_redis_endpoint_redirect("MOVED 12 :7002", "10.1.1.1", &slot, host, sizeof host, &port));
    assert_string_equal(host, "10.1.1.1");
    assert_int_equal(port, 7002);
    assert_true(wr_redis_endpoint_redirect("ASK 12 ?:7003", "lb", &slot, host, sizeof host, &port));
    assert_string_equal(host, "lb");
    assert_int_equal(port, 7003);
    /* malformed */
    const char *bad[] = {"MOVED",
                         "MOVED x 1.2.3.4:1",
                         "MOVED 16384 1.2.3.4:1",
                         "MOVED 1 1.2.3.4",
                         "MOVED 1 1.2.3.4:0",
                         "MOVED 1 1.2.3.4:65536",
                         "MOVED 1 1.2.3.4:x",
                         "MOVED 1  "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(wr_redis_endpoint_redirect(bad[i], "f", &slot, host, sizeof host, &port));
    assert_false(wr_redis_endpoint_redirect(NULL, "f", &slot, host, sizeof host, &port));
    assert_false(wr_redis_endpoint_redirect("MOVED 1 :7000", "", &slot, host, sizeof host, &port));
    assert_false(
        wr_redis_endpoint_redirect("MOVED 1 a-long-host.example:7000", "f", &slot, host, 8, &port));
}

#define TESTS(X)                                                                                   \
    X(t_entry_types)                                                                               \
    X(t_entry_malformed)                                                                           \
    X(t_redirect)
WR_UNIT_MAIN(NULL, NULL, TESTS)
