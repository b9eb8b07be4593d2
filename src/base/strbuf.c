/*
 * strbuf.c - appends to a fixed buffer (strbuf.h). An integer's digits
 * are counted first, then written backwards in place, two digits per
 * division (a table of the 100 pairs).
 */
#include "base/strbuf.h"

#include <string.h>

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

/* "00" "01" .. "99": two digits per division (a poll's answer writes
 * about eight numbers). */
static const char digit_pairs[201] = "0001020304050607080910111213141516171819"
                                     "2021222324252627282930313233343536373839"
                                     "4041424344454647484950515253545556575859"
                                     "6061626364656667686970717273747576777879"
                                     "8081828384858687888990919293949596979899";

/* The decimal digits of v: 1 for 0 .. 9, 20 for 2^64 - 1. */
static size_t digits_u64(uint64_t v)
{
    size_t n = 1;
    for (;;) {
        if (v < 10)
            return n;
        if (v < 100)
            return n + 1;
        if (v < 1000)
            return n + 2;
        if (v < 10000)
            return n + 3;
        v /= 10000;
        n += 4;
    }
}

void wr_strbuf_u64(wr_strbuf_t *b, uint64_t v)
{
    if (b->over)
        return;
    size_t len = digits_u64(v);
    if (len >= b->cap - b->n) { /* as wr_strbuf_put */
        b->over = true;
        return;
    }
    char *q = b->p + b->n + len;
    *q = '\0';
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, digit_pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    b->n += len;
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
