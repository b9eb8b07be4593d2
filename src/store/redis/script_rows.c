/*
 * script_rows.c - the rows of scripts.def as data (script_rows.h): one
 * entry per row of the file, in its order, so a table's elements are the
 * entries after its opening one, up to its end. The shape check walks
 * them; the index macros of the header need no data.
 */
#include "store/redis/script_rows.h"

#include <stdio.h>

struct row {
    const char *table;
    const char *name; /* NULL: the table's opening or end row */
    const char *type; /* "i", "s", "a"; NULL on opening and end rows */
};

static const struct row rows[WR_ROWS__COUNT] = {
#define WR_SCRIPT_TABLE(T, SCRIPTS)  [WR_ROWS__##T] = {#T, NULL, NULL},
#define WR_SCRIPT_ROW(T, NAME, TYPE) [WR_ROWS__##T##_ROW_##NAME] = {#T, #NAME, #TYPE},
#define WR_SCRIPT_VALUE(T, NAME, V, TYPE)
#define WR_SCRIPT_END(T) [WR_ROWS__##T##__END] = {#T, NULL, NULL},
#include "store/redis/scripts.def"
#undef WR_SCRIPT_TABLE
#undef WR_SCRIPT_ROW
#undef WR_SCRIPT_VALUE
#undef WR_SCRIPT_END
};

char wr_script_rows_type(wr_script_row_t table, size_t i)
{
    if ((size_t)table + 1 + i >= WR_ROWS__COUNT)
        return 0;
    const char *t = rows[table + 1 + i].type;
    return t ? t[0] : 0;
}

const char *wr_script_rows_name(wr_script_row_t table, size_t i, char *buf, size_t size)
{
    if ((size_t)table >= WR_ROWS__COUNT)
        return "?";
    if (wr_script_rows_type(table, i) == 0)
        snprintf(buf, size, "%s[%zu]", rows[table].table, i);
    else
        snprintf(buf, size, "%s.%s", rows[table].table, rows[table + 1 + i].name);
    return buf;
}

static const char *type_name(int reply_type)
{
    switch (reply_type) {
    case REDIS_REPLY_INTEGER:
        return "integer";
    case REDIS_REPLY_STRING:
        return "string";
    case REDIS_REPLY_ARRAY:
        return "array";
    case REDIS_REPLY_NIL:
        return "nil";
    case REDIS_REPLY_ERROR:
        return "error";
    default:
        return "other";
    }
}

static int reply_type_of(char t)
{
    return t == 'i' ? REDIS_REPLY_INTEGER : t == 's' ? REDIS_REPLY_STRING : REDIS_REPLY_ARRAY;
}

bool wr_script_rows_match(redisReply *const *el, size_t n, wr_script_row_t table, char *why,
                          size_t size)
{
    char name[96];
    for (size_t i = 0; i < n; i++) {
        char t = wr_script_rows_type(table, i);
        if (t == 0) {
            if (why)
                snprintf(why, size, "%s: %zu elements, the rows say fewer", rows[table].table, n);
            return false;
        }
        if (!el[i] || el[i]->type != reply_type_of(t)) {
            if (why)
                snprintf(why, size, "%s: %s expected, got %s",
                         wr_script_rows_name(table, i, name, sizeof name),
                         type_name(reply_type_of(t)), el[i] ? type_name(el[i]->type) : "nothing");
            return false;
        }
    }
    if (wr_script_rows_type(table, n) != 0) {
        if (why)
            snprintf(why, size, "%s: %zu elements, the rows say more (next %s)", rows[table].table,
                     n, wr_script_rows_name(table, n, name, sizeof name));
        return false;
    }
    return true;
}

bool wr_script_rows_check(const redisReply *rep, wr_script_row_t table, char *why, size_t size)
{
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        if (why)
            snprintf(why, size, "%s: not an array",
                     (size_t)table < WR_ROWS__COUNT ? rows[table].table : "?");
        return false;
    }
    return wr_script_rows_match(rep->element, rep->elements, table, why, size);
}

bool wr_script_rows_batch_table(long long kind, wr_script_row_t *t)
{
    switch (kind) {
    case WR_ROW_VALUE(K_ENTRY, WAITING):
        *t = WR_ROWS_TABLE(B_WAITING);
        return true;
    case WR_ROW_VALUE(K_ENTRY, ADMITTED):
        *t = WR_ROWS_TABLE(B_ADMITTED);
        return true;
    case WR_ROW_VALUE(K_ENTRY, FULL):
    case WR_ROW_VALUE(K_ENTRY, HELD):
        *t = WR_ROWS_TABLE(B_COUNT);
        return true;
    case WR_ROW_VALUE(K_ENTRY, CLOSED):
        *t = WR_ROWS_TABLE(B_CLOSED);
        return true;
    case WR_ROW_VALUE(K_ENTRY, PASSTHROUGH):
    case WR_ROW_VALUE(K_ENTRY, PREQUEUE):
    case WR_ROW_VALUE(K_ENTRY, PREQUEUE_NEW):
    case WR_ROW_VALUE(K_ENTRY, NO_QUEUE):
    case WR_ROW_VALUE(K_ENTRY, NOT_IN_QUEUE):
        *t = WR_ROWS_TABLE(B_KIND);
        return true;
    case WR_ROW_VALUE(K_ENTRY, RECEIPT):
        *t = WR_ROWS_TABLE(B_RECEIPT);
        return true;
    case WR_ROW_VALUE(K_ENTRY, GROUP):
        *t = WR_ROWS_TABLE(B_GROUP);
        return true;
    default:
        return false;
    }
}

size_t wr_script_rows_len(wr_script_row_t table)
{
    size_t n = 0;
    while (wr_script_rows_type(table, n))
        n++;
    return n;
}
