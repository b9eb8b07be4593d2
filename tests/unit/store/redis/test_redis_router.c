/*
 * test_redis_router.c - the pure parts of redis_router.c: the key slot
 * (CRC16 with hash tags, Redis Cluster's rule) and the routing of the
 * store's keys. The routing itself runs against a real cluster in
 * tests/store/contract (backend redis-cluster) and tests/integration
 * (test_cluster.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "store/redis/redis_router.h"
#include "unit_main.h"

static unsigned slot(const char *k)
{
    return wr_redis_router_keyslot(k, strlen(k));
}

static void t_keyslot(void **state)
{
    (void)state;
    /* Redis's own values (CLUSTER KEYSLOT) */
    assert_int_equal(slot("123456789"), 12739); /* CRC16 XMODEM 0x31C3 */
    assert_int_equal(slot("foo"), 12182);
    assert_int_equal(slot("bar"), 5061);
    assert_int_equal(slot(""), 0);
    /* a hash tag: the part between the first '{' and the next '}' */
    assert_int_equal(slot("{user1000}.following"), slot("user1000"));
    assert_int_equal(slot("foo{bar}zap"), slot("bar"));
    assert_int_equal(slot("foo{{bar}}zap"), slot("{bar"));
    assert_int_equal(slot("foo{bar}{zap}"), slot("bar"));
    /* an empty tag hashes the whole key */
    assert_int_equal(slot("foo{}{bar}"), 8363);
    assert_int_equal(slot("{}"), wr_redis_router_keyslot("{}", 2));
    assert_int_equal(slot("foo{"), 7673);
    assert_int_equal(slot(".global"), 13526); /* the home slot (docs/DESIGN.md) */
    /* every key of a queue is in the slot of its name */
    const char *suffix[] = {"config", "waiting", "tokens", "burned"};
    for (size_t i = 0; i < 4; i++) {
        char k[64];
        snprintf(k, sizeof k, "wr:{shoes-2026}:%s", suffix[i]);
        assert_int_equal(slot(k), slot("shoes-2026"));
    }
    /* the global keys share the home slot of {.global} */
    assert_int_equal(slot("wr:{.global}:queues"), slot(".global"));
    assert_int_equal(slot("wr:{.global}:secret:previous"), slot(".global"));
    /* a length, not a NUL, ends the key */
    assert_int_equal(wr_redis_router_keyslot("foox", 3), 12182);
}

#define TESTS(X) X(t_keyslot)
WR_UNIT_MAIN(NULL, NULL, TESTS)
