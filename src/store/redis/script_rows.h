/*
 * script_rows.h - the rows of scripts.def for C: the position of every
 * argument and reply element of the Redis store's scripts, the length of
 * each table, the named constants (entry modes, answer kinds), and the
 * shape check of a reply against its rows. The Lua side gets the same
 * rows at build time (cmake/script_rows.cmake folds each T.NAME of a
 * script into its number); neither side writes a bare position.
 *
 *   e[WR_ROW(R_ADMIT, STOCK_LEFT)]        the element (0-based index)
 *   WR_ROWS_LEN(R_ADMIT)                  25
 *   WR_ROW_VALUE(K_ENTRY, WAITING)        1
 *   wr_script_rows_check(rep, WR_ROWS_TABLE(R_ADMIT), ...)
 *
 * Pure: hiredis's reply type only.
 */
#ifndef WR_SCRIPT_ROWS_H
#define WR_SCRIPT_ROWS_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>

/* Every row of every table, in file order: WR_ROWS__T opens table T,
 * WR_ROWS__T_ROW_NAME is its element NAME, WR_ROWS__T__END closes it. */
typedef enum {
#define WR_SCRIPT_TABLE(T, SCRIPTS)  WR_ROWS__##T,
#define WR_SCRIPT_ROW(T, NAME, TYPE) WR_ROWS__##T##_ROW_##NAME,
#define WR_SCRIPT_VALUE(T, NAME, V, TYPE)
#define WR_SCRIPT_END(T) WR_ROWS__##T##__END,
#include "store/redis/scripts.def"
#undef WR_SCRIPT_TABLE
#undef WR_SCRIPT_ROW
#undef WR_SCRIPT_VALUE
#undef WR_SCRIPT_END
    WR_ROWS__COUNT
} wr_script_row_t;

/* The named constants: WR_ROWV__T_NAME. */
enum {
#define WR_SCRIPT_TABLE(T, SCRIPTS)
#define WR_SCRIPT_ROW(T, NAME, TYPE)
#define WR_SCRIPT_VALUE(T, NAME, V, TYPE) WR_ROWV__##T##_##NAME = (V),
#define WR_SCRIPT_END(T)
#include "store/redis/scripts.def"
#undef WR_SCRIPT_TABLE
#undef WR_SCRIPT_ROW
#undef WR_SCRIPT_VALUE
#undef WR_SCRIPT_END
};

/* Element NAME of table T: its 0-based index in the reply (or, for an A_
 * table, in ARGV after KEYS). */
#define WR_ROW(T, NAME) ((size_t)(WR_ROWS__##T##_ROW_##NAME - WR_ROWS__##T - 1))
/* The number of elements of table T. */
#define WR_ROWS_LEN(T) ((size_t)(WR_ROWS__##T##__END - WR_ROWS__##T - 1))
/* Table T, for wr_script_rows_check() and wr_script_rows_name(). */
#define WR_ROWS_TABLE(T) WR_ROWS__##T
/* Constant NAME of table T. */
#define WR_ROW_VALUE(T, NAME) WR_ROWV__##T##_##NAME

/* Compile-time check that a C builder appends the arguments of table T in
 * the order of its rows: WR_ROWS_ORDER(A_ADMIT, SEED, VERSION, ...) names
 * every row, in the order the builder appends them (up to 8). */
#define WR__ROWS_AT(T, i, N)                               (WR_ROW(T, N) == (i))
#define WR__ROWS_N(_1, _2, _3, _4, _5, _6, _7, _8, n, ...) n
#define WR__ROWS_1(T, a)                                   WR__ROWS_AT(T, 0, a)
#define WR__ROWS_2(T, a, b)                                WR__ROWS_1(T, a) && WR__ROWS_AT(T, 1, b)
#define WR__ROWS_3(T, a, b, c)                             WR__ROWS_2(T, a, b) && WR__ROWS_AT(T, 2, c)
#define WR__ROWS_4(T, a, b, c, d)                          WR__ROWS_3(T, a, b, c) && WR__ROWS_AT(T, 3, d)
#define WR__ROWS_5(T, a, b, c, d, e)                       WR__ROWS_4(T, a, b, c, d) && WR__ROWS_AT(T, 4, e)
#define WR__ROWS_6(T, a, b, c, d, e, f)                    WR__ROWS_5(T, a, b, c, d, e) && WR__ROWS_AT(T, 5, f)
#define WR__ROWS_7(T, a, b, c, d, e, f, g)                 WR__ROWS_6(T, a, b, c, d, e, f) && WR__ROWS_AT(T, 6, g)
#define WR__ROWS_8(T, a, b, c, d, e, f, g, h)                                                      \
    WR__ROWS_7(T, a, b, c, d, e, f, g) && WR__ROWS_AT(T, 7, h)
#define WR__ROWS_CAT(a, b) a##b
#define WR__ROWS_SEL(n)    WR__ROWS_CAT(WR__ROWS_, n)
#define WR_ROWS_ORDER(T, ...)                                                                      \
    _Static_assert(                                                                                \
        WR__ROWS_SEL(WR__ROWS_N(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0))(T, __VA_ARGS__) &&        \
            WR_ROWS_LEN(T) == WR__ROWS_N(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0),                  \
        #T ": the arguments appended here are not its rows, in order")

/* The type letter of element i of table t ('i' integer, 's' bulk string,
 * 'a' array), 0 when i is past its end. */
char wr_script_rows_type(wr_script_row_t table, size_t i);

/* The name of table t ("R_ADMIT"), or of its element i ("R_ADMIT.CODE")
 * written to buf (bounded by size). */
const char *wr_script_rows_name(wr_script_row_t table, size_t i, char *buf, size_t size);

/* True when el[0 .. n-1] are exactly table t's elements: n its length and
 * each of its type. On false, why (when not NULL) says which element
 * differs ("R_ADMIT.WAITS: array expected, got integer"), bounded by size. */
bool wr_script_rows_match(redisReply *const *el, size_t n, wr_script_row_t table, char *why,
                          size_t size);

/* The number of elements of table t (WR_ROWS_LEN for a table named at
 * compile time). */
size_t wr_script_rows_len(wr_script_row_t table);

/* The B_ table of an answer of kind (a K_ENTRY) in entry_batch.lua's
 * reply: B_WAITING, B_ADMITTED, B_COUNT (FULL, HELD), B_CLOSED, B_RECEIPT
 * (the receipt after an answer), B_GROUP (the priority groups' part after
 * an answer), B_KIND (the rest); false for a kind it never sends. */
bool wr_script_rows_batch_table(long long kind, wr_script_row_t *t);

/* wr_script_rows_match() of a whole reply: an array of exactly table t. */
bool wr_script_rows_check(const redisReply *rep, wr_script_row_t table, char *why, size_t size);

#endif
