/*
 * array.h - growing a heap array by doubling: the one place the
 * "capacity ? capacity * 2 : first; realloc" step is written.
 */
#ifndef WR_ARRAY_H
#define WR_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Makes the array a (*cap elements of elem bytes; NULL: none yet) hold at
 * least need elements: when need > *cap, *cap doubles (from first when 0)
 * until it fits and a is realloc'd, the new elements zeroed when zero; a
 * NULL array is always allocated (first elements when need <= first).
 * Returns the array to use from now on (a itself when it was big enough),
 * never NULL but when memory runs out or the size overflows: then a and
 * *cap are unchanged and a is still the caller's to free.
 */
void *wr_array_grow(void *a, size_t *cap, size_t need, size_t elem, size_t first, bool zero);

#endif
