/*
 * test_redis_reply.c - hiredis reply objects from free lists
 * (redis_reply.h): every RESP2 reply kind read by a reader with our
 * functions gives the same tree as hiredis's own reader (type, integer,
 * len, the string's bytes and its NUL, elements), whole or fed one byte at
 * a time, at the boundaries of the inline string and the kept vector;
 * freed, the blocks go back to the lists up to their bound; a protocol
 * error in the middle of an array frees the partial reply (ASan, LSan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/read.h>

#include "store/redis/redis_reply.h"
#include "unit_main.h"

static void same_tree(const redisReply *a, const redisReply *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->type, b->type);
    switch (a->type) {
    case REDIS_REPLY_INTEGER:
        assert_int_equal(a->integer, b->integer);
        break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
        assert_int_equal(a->len, b->len);
        assert_memory_equal(a->str, b->str, a->len);
        assert_int_equal(b->str[b->len], '\0');
        break;
    case REDIS_REPLY_ARRAY:
        assert_int_equal(a->elements, b->elements);
        for (size_t i = 0; i < a->elements; i++)
            same_tree(a->element[i], b->element[i]);
        break;
    default:
        break;
    }
}

/* RESP of a bulk string of n bytes (every byte value, NULs included). */
static size_t bulk(char *out, size_t n)
{
    size_t k = (size_t)sprintf(out, "$%zu\r\n", n);
    for (size_t i = 0; i < n; i++)
        out[k + i] = (char)(i * 7 + 1);
    memcpy(out + k + n, "\r\n", 2);
    return k + n + 2;
}

/* Every kind, the boundaries, and nesting. */
static size_t stream(char *s)
{
    size_t n = 0;
    n += (size_t)sprintf(s + n, "+OK\r\n-ERR wrong\r\n:0\r\n:-9223372036854775808\r\n");
    n += (size_t)sprintf(s + n, "$-1\r\n$0\r\n\r\n*-1\r\n*0\r\n");
    n += bulk(s + n, WR_REDIS_REPLY_INLINE - 2); /* inline, the last that fits */
    n += bulk(s + n, WR_REDIS_REPLY_INLINE - 1); /* NUL makes it 80: malloc'd */
    n += bulk(s + n, 5000);
    for (int len = WR_REDIS_REPLY_VEC - 1; len <= WR_REDIS_REPLY_VEC + 1; len++) {
        n += (size_t)sprintf(s + n, "*%d\r\n", len);
        for (int i = 0; i < len; i++)
            n += i % 3 == 0   ? (size_t)sprintf(s + n, ":%d\r\n", i)
                 : i % 3 == 1 ? bulk(s + n, (size_t)i * 5)
                              : (size_t)sprintf(s + n, "$-1\r\n");
    }
    /* a poll's script reply: [status, pos, ..., [receipt...]] nested 3 deep */
    n += (size_t)sprintf(s + n, "*4\r\n$7\r\nwaiting\r\n:512\r\n*2\r\n*3\r\n:1\r\n+x\r\n$3\r\n"
                                "abc\r\n*0\r\n-NOSCRIPT x\r\n");
    return n;
}

static int read_all(redisReader *r, const char *s, size_t n, size_t step, void **out, int max)
{
    int k = 0;
    for (size_t off = 0; off < n; off += step) {
        size_t take = n - off < step ? n - off : step;
        assert_int_equal(redisReaderFeed(r, s + off, take), REDIS_OK);
        for (;;) {
            void *rep = NULL;
            assert_int_equal(redisReaderGetReply(r, &rep), REDIS_OK);
            if (!rep)
                break;
            assert_true(k < max);
            out[k++] = rep;
        }
    }
    return k;
}

static void test_same_trees_as_hiredis(void **state)
{
    (void)state;
    static char s[64 * 1024];
    size_t n = stream(s);
    const size_t steps[] = {1, 7, n};
    for (size_t si = 0; si < 3; si++) {
        size_t step = steps[si];
        redisReader *ours = redisReaderCreateWithFunctions(&wr_redis_reply_fns);
        redisReader *theirs = redisReaderCreate();
        void *a[32], *b[32];
        int na = read_all(theirs, s, n, n, a, 32);
        int nb = read_all(ours, s, n, step, b, 32);
        assert_int_equal(na, 15);
        assert_int_equal(nb, na);
        for (int i = 0; i < na; i++) {
            same_tree(a[i], b[i]);
            freeReplyObject(a[i]);
            wr_redis_reply_free(b[i]);
        }
        redisReaderFree(ours);
        redisReaderFree(theirs);
    }
    size_t vecs;
    size_t objs = wr_redis_reply_kept(&vecs);
    assert_true(objs > 100); /* the blocks came back */
    assert_true(vecs >= 5);
    wr_redis_reply_clear();
    assert_int_equal(wr_redis_reply_kept(&vecs), 0);
    assert_int_equal(vecs, 0);
}

/* 10,000 objects freed at once: no more than the bound is kept. */
static void test_kept_bounded(void **state)
{
    (void)state;
    static char s[16 * 10000 + 64];
    size_t n = (size_t)sprintf(s, "*10000\r\n");
    for (int i = 0; i < 10000; i++)
        n += (size_t)sprintf(s + n, "+s%d\r\n", i);
    redisReader *r = redisReaderCreateWithFunctions(&wr_redis_reply_fns);
    void *rep;
    assert_int_equal(read_all(r, s, n, n, &rep, 1), 1);
    assert_int_equal(((redisReply *)rep)->elements, 10000);
    assert_string_equal(((redisReply *)rep)->element[9999]->str, "s9999");
    wr_redis_reply_free(rep);
    assert_int_equal(wr_redis_reply_kept(NULL), 4096);
    redisReaderFree(r);
    wr_redis_reply_clear();
}

/* A protocol error inside an array: the reader frees what it built with
 * our free function (LSan finds a leak otherwise). */
static void test_error_mid_array(void **state)
{
    (void)state;
    const char s[] = "*3\r\n$3\r\nabc\r\n*2\r\n:1\r\n!bad\r\n";
    redisReader *r = redisReaderCreateWithFunctions(&wr_redis_reply_fns);
    assert_int_equal(redisReaderFeed(r, s, sizeof s - 1), REDIS_OK);
    void *rep = NULL;
    assert_int_equal(redisReaderGetReply(r, &rep), REDIS_ERR);
    assert_null(rep);
    redisReaderFree(r);
    /* and a partial reply left in a reader that is freed */
    r = redisReaderCreateWithFunctions(&wr_redis_reply_fns);
    assert_int_equal(redisReaderFeed(r, "*2\r\n$3\r\nabc\r\n", 13), REDIS_OK);
    assert_int_equal(redisReaderGetReply(r, &rep), REDIS_OK);
    assert_null(rep);
    redisReaderFree(r);
    wr_redis_reply_clear();
}

#define TESTS(X) X(test_same_trees_as_hiredis) X(test_kept_bounded) X(test_error_mid_array)
WR_UNIT_MAIN(NULL, NULL, TESTS)
