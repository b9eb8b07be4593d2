/*
 * redis_reply.h - hiredis reply objects from free lists: the reply object
 * functions given to the redisReader of every Redis connection
 * (redis_io.c), in place of hiredis's defaults, which calloc every object
 * and malloc every string. A poll's script reply is about 20 objects;
 * glibc's calloc never takes the thread cache, so those allocations, their
 * frees and the consolidation they caused were a third of a poll's
 * instructions on Redis (docs/BENCHMARKS.md, session 21).
 *
 * The objects are hiredis's own redisReply structs, built as hiredis's
 * defaults build them (type, integer, len, str NUL-terminated, elements,
 * element), so every reader of a reply is unchanged. Only the freeing
 * differs: a reply from such a reader is freed with wr_redis_reply_free,
 * never freeReplyObject.
 *
 * Not thread-safe: the free lists are the process's, used from the loop's
 * thread (as redis_io is).
 */
#ifndef WR_REDIS_REPLY_H
#define WR_REDIS_REPLY_H

#include <hiredis/hiredis.h>
#include <stddef.h>

/* Bytes of a string kept inside its object's block (NUL included); a
 * longer one is malloc'd. */
#define WR_REDIS_REPLY_INLINE 80
/* Elements of an array whose pointer vector comes from a free list; a
 * longer one is calloc'd. */
#define WR_REDIS_REPLY_VEC 32

/* The functions for redisReaderCreateWithFunctions (hiredis keeps the
 * pointer: static, never freed). */
extern redisReplyObjectFunctions wr_redis_reply_fns;

/* Frees a reply made by a reader with wr_redis_reply_fns, its elements
 * included; its blocks go back to the free lists (up to their bound).
 * NULL is a no-op. */
void wr_redis_reply_free(void *reply);

/* Blocks kept in the free lists now (objects, element vectors): for
 * tests. */
size_t wr_redis_reply_kept(size_t *vectors);

/* Frees every kept block (at exit, or in a test). */
void wr_redis_reply_clear(void);

#endif
