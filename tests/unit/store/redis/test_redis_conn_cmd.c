/*
 * test_redis_conn_cmd.c - a Redis command's arguments (redis_conn.h) and
 * the commands kept for reuse: a freed command is handed out again to a
 * request that fits (its layout redone: the arguments are the new ones,
 * the old ones gone), one that does not fit gets a new allocation, at most
 * 16 are kept and none over 16 KiB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "store/redis/redis_conn.h"
#include "store/redis/redis_conn_internal.h"
#include "unit_main.h"

static void test_arguments_and_reuse(void **state)
{
    (void)state;
    wr_redis_conn_cmd_clear_kept();
    wr_redis_conn_cmd_t *a = wr_redis_conn_cmd_new_args(WR_REDIS_CONN_NO_SCRIPT, 40, 1024);
    assert_non_null(a);
    assert_true(wr_redis_conn_cmd_str(a, "SET"));
    assert_true(wr_redis_conn_cmd_str(a, "k"));
    assert_true(wr_redis_conn_cmd_u64(a, 18446744073709551615u));
    assert_int_equal(a->argc, 3);
    assert_string_equal(a->argv[2], "18446744073709551615");
    wr_redis_conn_cmd_free(a);
    assert_int_equal(wr_redis_conn_cmd_kept(), 1);

    /* smaller: the same block, a clean command */
    wr_redis_conn_cmd_t *b = wr_redis_conn_cmd_new_args(1, 10, 200);
    assert_ptr_equal(b, a);
    assert_int_equal(wr_redis_conn_cmd_kept(), 0);
    assert_int_equal(b->argc, 2); /* a script's: EVALSHA sha filled at send */
    assert_int_equal(b->max_args, 10);
    assert_int_equal(b->buf_used, 0);
    assert_int_equal(b->buf_cap, 200);
    assert_null(b->held);
    assert_true((char *)b->argv > (char *)b && b->buf + 200 <= (char *)b + b->alloc);
    for (int i = 2; i < 10; i++)
        assert_true(wr_redis_conn_cmd_u64(b, (uint64_t)i * 1000));
    assert_false(wr_redis_conn_cmd_str(b, "one too many")); /* max_args holds */
    assert_string_equal(b->argv[9], "9000");
    wr_redis_conn_cmd_free(b);

    /* larger than any kept: a new one */
    wr_redis_conn_cmd_t *c = wr_redis_conn_cmd_new_args(WR_REDIS_CONN_NO_SCRIPT, 40, 8192);
    assert_non_null(c);
    assert_ptr_not_equal(c, a);
    assert_int_equal(wr_redis_conn_cmd_kept(), 1);
    wr_redis_conn_cmd_free(c);
    assert_int_equal(wr_redis_conn_cmd_kept(), 2);
    wr_redis_conn_cmd_clear_kept();
    assert_int_equal(wr_redis_conn_cmd_kept(), 0);
}

static void test_kept_bounded(void **state)
{
    (void)state;
    wr_redis_conn_cmd_t *cmds[20];
    for (int i = 0; i < 20; i++)
        assert_non_null(cmds[i] = wr_redis_conn_cmd_new(WR_REDIS_CONN_NO_SCRIPT, 64));
    for (int i = 0; i < 20; i++)
        wr_redis_conn_cmd_free(cmds[i]);
    assert_int_equal(wr_redis_conn_cmd_kept(), 16);
    wr_redis_conn_cmd_clear_kept();
    /* over 16 KiB: freed, not kept */
    wr_redis_conn_cmd_t *big = wr_redis_conn_cmd_new(WR_REDIS_CONN_NO_SCRIPT, 20 * 1024);
    assert_non_null(big);
    wr_redis_conn_cmd_free(big);
    assert_int_equal(wr_redis_conn_cmd_kept(), 0);
    wr_redis_conn_cmd_free(NULL);
}

/* A block of arguments laid end to end (a queue's keys): each argument
 * where its bytes are, its length exact; a block that does not fit, in
 * arguments or in bytes, appends nothing. */
static void test_block(void **state)
{
    (void)state;
    wr_redis_conn_cmd_t *c = wr_redis_conn_cmd_new_args(WR_REDIS_CONN_NO_SCRIPT, 5, 32);
    assert_non_null(c);
    assert_true(wr_redis_conn_cmd_str(c, "EVAL"));
    static const char bytes[] = "wr:{q}:a\0wr:{q}:bb\0x";
    const size_t lens[] = {8, 9, 1};
    assert_true(wr_redis_conn_cmd_block(c, bytes, lens, 3));
    assert_int_equal(c->argc, 4);
    assert_string_equal(c->argv[1], "wr:{q}:a");
    assert_string_equal(c->argv[2], "wr:{q}:bb");
    assert_string_equal(c->argv[3], "x");
    assert_int_equal(c->argvlen[2], 9);
    assert_int_equal(c->buf_used, 5 + 21);
    /* two more arguments than max_args allows: nothing appended */
    assert_false(wr_redis_conn_cmd_block(c, bytes, lens, 2));
    assert_int_equal(c->argc, 4);
    assert_int_equal(c->buf_used, 26);
    /* one argument that would pass the 32 bytes: nothing appended */
    assert_false(wr_redis_conn_cmd_block(c, bytes, lens, 1));
    assert_int_equal(c->buf_used, 26);
    assert_true(wr_redis_conn_cmd_block(c, bytes + 19, lens + 2, 1));
    assert_int_equal(c->argc, 5);
    assert_string_equal(c->argv[4], "x");
    wr_redis_conn_cmd_free(c);
    wr_redis_conn_cmd_clear_kept();
}

#define TESTS(X) X(test_arguments_and_reuse) X(test_kept_bounded) X(test_block)
WR_UNIT_MAIN(NULL, NULL, TESTS)
