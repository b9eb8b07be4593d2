/*
 * names.h - the name of an enum value from a table of names indexed by it
 * (designated initializers: [WR_X_OK] = "ok"): the one bounds-and-gap
 * check every reason_name / why_name function used to write again.
 */
#ifndef WR_NAMES_H
#define WR_NAMES_H

#include <stddef.h>

/* names[v] when 0 <= v < n and names[v] is not NULL, else fallback. */
const char *wr_names_get(const char *const *names, size_t n, long long v, const char *fallback);

/* wr_names_get on a table array (its size taken from its type). */
#define WR_NAMES_GET(table, v, fallback)                                                           \
    wr_names_get((table), sizeof(table) / sizeof((table)[0]), (long long)(v), (fallback))

#endif
