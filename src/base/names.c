/*
 * names.c - the name of an enum value from a table indexed by it (names.h).
 */
#include "base/names.h"

const char *wr_names_get(const char *const *names, size_t n, long long v, const char *fallback)
{
    if (v < 0 || (unsigned long long)v >= n || !names[v])
        return fallback;
    return names[v];
}
