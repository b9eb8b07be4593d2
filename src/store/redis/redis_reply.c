/*
 * redis_reply.c - hiredis reply objects from free lists (redis_reply.h).
 *
 * A reply object is a block of OBJ_BLOCK bytes: hiredis's redisReply, then
 * room for a string of up to WR_REDIS_REPLY_INLINE bytes (NUL included),
 * so a short status, error or bulk string is one block, not two
 * allocations. An array's pointer vector is a block of its own from a
 * second list when it has at most WR_REDIS_REPLY_VEC elements. Both lists
 * are bounded (KEEP_OBJS, KEEP_VECS): after a burst of large replies the
 * rest goes back to malloc. The create functions follow hiredis 0.14's
 * defaults (hiredis.c) one for one, including linking a new object into
 * its parent array at task->idx, which the reader relies on.
 */
#include "store/redis/redis_reply.h"

#include <stdlib.h>
#include <string.h>

#include "base/freelist.h"

#define OBJ_BLOCK (sizeof(redisReply) + WR_REDIS_REPLY_INLINE)
#define VEC_BLOCK (WR_REDIS_REPLY_VEC * sizeof(redisReply *))
#define KEEP_OBJS 4096
#define KEEP_VECS 512

static wr_freelist_t objs = {NULL, 0, KEEP_OBJS, OBJ_BLOCK};
static wr_freelist_t vecs = {NULL, 0, KEEP_VECS, VEC_BLOCK};

static char *inline_str(redisReply *r)
{
    return (char *)(r + 1);
}

static redisReply *obj_new(const redisReadTask *task, int type)
{
    redisReply *r = wr_freelist_take(&objs); /* zeroed */
    if (!r)
        return NULL;
    r->type = type;
    if (task->parent) {
        redisReply *parent = task->parent->obj;
        parent->element[task->idx] = r;
    }
    return r;
}

static void *create_string(const redisReadTask *task, char *str, size_t len)
{
    char *buf = NULL;
    if (len >= WR_REDIS_REPLY_INLINE && !(buf = malloc(len + 1)))
        return NULL;
    redisReply *r = obj_new(task, task->type);
    if (!r) {
        free(buf);
        return NULL;
    }
    if (!buf)
        buf = inline_str(r);
    memcpy(buf, str, len);
    buf[len] = '\0';
    r->str = buf;
    r->len = len;
    return r;
}

static void *create_array(const redisReadTask *task, int elements)
{
    redisReply **vec = NULL;
    if (elements > 0) {
        vec = elements <= WR_REDIS_REPLY_VEC ? wr_freelist_take(&vecs)
                                             : calloc((size_t)elements, sizeof(*vec));
        if (!vec)
            return NULL;
    }
    redisReply *r = obj_new(task, REDIS_REPLY_ARRAY);
    if (!r) {
        if (elements <= WR_REDIS_REPLY_VEC)
            wr_freelist_give(&vecs, vec);
        else
            free(vec);
        return NULL;
    }
    r->element = vec;
    r->elements = elements > 0 ? (size_t)elements : 0;
    return r;
}

static void *create_integer(const redisReadTask *task, long long value)
{
    redisReply *r = obj_new(task, REDIS_REPLY_INTEGER);
    if (r)
        r->integer = value;
    return r;
}

static void *create_nil(const redisReadTask *task)
{
    return obj_new(task, REDIS_REPLY_NIL);
}

redisReplyObjectFunctions wr_redis_reply_fns = {
    .createString = create_string,
    .createArray = create_array,
    .createInteger = create_integer,
    .createNil = create_nil,
    .freeObject = wr_redis_reply_free,
};

void wr_redis_reply_free(void *reply)
{
    redisReply *r = reply;
    if (!r)
        return;
    switch (r->type) {
    case REDIS_REPLY_ARRAY:
        if (r->element) {
            for (size_t j = 0; j < r->elements; j++)
                wr_redis_reply_free(r->element[j]);
            if (r->elements <= WR_REDIS_REPLY_VEC)
                wr_freelist_give(&vecs, r->element);
            else
                free(r->element);
        }
        break;
    case REDIS_REPLY_ERROR:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_STRING:
        if (r->str != inline_str(r))
            free(r->str);
        break;
    default:
        break;
    }
    wr_freelist_give(&objs, r);
}

size_t wr_redis_reply_kept(size_t *vectors)
{
    if (vectors)
        *vectors = vecs.n;
    return objs.n;
}

void wr_redis_reply_clear(void)
{
    wr_freelist_clear(&objs);
    wr_freelist_clear(&vecs);
}
