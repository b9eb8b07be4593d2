/*
 * strbuf.h - appending text to a caller's fixed buffer without printf: the
 * hot answers (a poll's JSON, its receipt) are a few literals and integers,
 * and glibc's vfprintf was about 4% of a poll's CPU (docs/BENCHMARKS.md,
 * session 18). No allocation; bounded: an append that does not fit sets
 * the overflow flag and writes nothing more, so a caller checks once at
 * the end (wr_strbuf_ok).
 */
#ifndef WR_STRBUF_H
#define WR_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A buffer of cap bytes at p, n of them used (always NUL-terminated while
 * cap > 0); over: an append did not fit (the text stops before it). */
typedef struct {
    char *p;
    size_t cap;
    size_t n;
    bool over;
} wr_strbuf_t;

/* An empty buffer over p (cap bytes, cap > 0; the caller owns p). */
static inline wr_strbuf_t wr_strbuf_init(char *p, size_t cap)
{
    wr_strbuf_t b = {p, cap, 0, cap == 0};
    if (cap > 0)
        p[0] = '\0';
    return b;
}

/* Appends len bytes at s (they need no NUL). */
void wr_strbuf_put(wr_strbuf_t *b, const char *s, size_t len);

/* Appends the NUL-terminated s. */
static inline void wr_strbuf_str(wr_strbuf_t *b, const char *s)
{
    wr_strbuf_put(b, s, strlen(s));
}

/* Appends v in decimal ("0", "18446744073709551615"). */
void wr_strbuf_u64(wr_strbuf_t *b, uint64_t v);

/* Appends v in decimal, with '-' when negative (INT64_MIN included). */
void wr_strbuf_i64(wr_strbuf_t *b, int64_t v);

/* Copies the NUL-terminated src into dst (cap > 0 bytes), cut to cap - 1
 * bytes, NUL-terminated: snprintf(dst, cap, "%s", src) without printf. */
static inline void wr_strbuf_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* True when every append fitted (and the text is whole). */
static inline bool wr_strbuf_ok(const wr_strbuf_t *b)
{
    return !b->over;
}

#endif
