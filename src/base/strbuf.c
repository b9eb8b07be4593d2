/*
 * strbuf.c - appends to a fixed buffer (strbuf.h). Integers are written
 * backwards into a 20-byte scratch, then copied: no division per digit
 * beyond the one that makes it.
 */
#include "base/strbuf.h"

void wr_strbuf_put(wr_strbuf_t *b, const char *s, size_t len)
{
    if (b->over)
        return;
    if (len >= b->cap - b->n) {
        b->over = true;
        return;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

void wr_strbuf_u64(wr_strbuf_t *b, uint64_t v)
{
    char d[20];
    size_t i = sizeof d;
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    wr_strbuf_put(b, d + i, sizeof d - i);
}

void wr_strbuf_i64(wr_strbuf_t *b, int64_t v)
{
    if (v < 0) {
        wr_strbuf_put(b, "-", 1);
        wr_strbuf_u64(b, (uint64_t)0 - (uint64_t)v); /* INT64_MIN's magnitude too */
        return;
    }
    wr_strbuf_u64(b, (uint64_t)v);
}
