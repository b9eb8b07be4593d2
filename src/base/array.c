/*
 * array.c - growing a heap array by doubling (array.h).
 */
#include "base/array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *wr_array_grow(void *a, size_t *cap, size_t need, size_t elem, size_t first, bool zero)
{
    if (a && need <= *cap)
        return a;
    if (!a)
        *cap = 0; /* NULL holds nothing, whatever *cap says */
    size_t n = *cap ? *cap : (first ? first : 1);
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (elem && n > SIZE_MAX / elem)
        return NULL;
    unsigned char *b = realloc(a, n * elem);
    if (!b)
        return NULL;
    if (zero)
        memset(b + *cap * elem, 0, (n - *cap) * elem);
    *cap = n;
    return b;
}
