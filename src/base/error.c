/*
 * error.c - names and messages for wr_err_t, wr_einval and wr_field_einval.
 *
 * A table indexed by the enum value; values outside the table map to a
 * generic string so a corrupted value can never crash a log line.
 */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

static const struct {
    const char *name;
    const char *msg;
} table[] = {
    [WR_OK] = {"WR_OK", "success"},
    [WR_ENOMEM] = {"WR_ENOMEM", "out of memory"},
    [WR_EINVAL] = {"WR_EINVAL", "invalid argument"},
    [WR_ENOTFOUND] = {"WR_ENOTFOUND", "queue not found"},
    [WR_EFULL] = {"WR_EFULL", "the line is full"},
    [WR_ETIMEOUT] = {"WR_ETIMEOUT", "store command timed out"},
    [WR_EUNAVAILABLE] = {"WR_EUNAVAILABLE", "store unavailable"},
    [WR_ENOTINQUEUE] = {"WR_ENOTINQUEUE", "user not in queue"},
    [WR_ETOKEN] = {"WR_ETOKEN", "token not live"},
    [WR_EPROTO] = {"WR_EPROTO", "unexpected reply from store"},
    [WR_ECANCELED] = {"WR_ECANCELED", "operation cancelled"},
    [WR_EIO] = {"WR_EIO", "I/O error"},
    [WR_ELIMIT] = {"WR_ELIMIT", "limit reached"},
    [WR_EAUTH] = {"WR_EAUTH", "store authentication failed"},
    [WR_EREPLICA] = {"WR_EREPLICA", "no replica acknowledged the write in time"},
    [WR_ESHARD] = {"WR_ESHARD", "the store shard of this queue is unreachable"},
    [WR_ECODE] = {"WR_ECODE", "the presale code is not valid for this queue"},
    [WR_EGROUP] = {"WR_EGROUP", "a priority group with people or live codes cannot be removed"},
    [WR_EDATA] = {"WR_EDATA", "a key of this queue in the store holds the wrong type"},
};

const char *wr_strerror(wr_err_t err)
{
    if ((unsigned)err >= sizeof(table) / sizeof(table[0]) || !table[err].msg)
        return "unknown error";
    return table[err].msg;
}

const char *wr_errname(wr_err_t err)
{
    if ((unsigned)err >= sizeof(table) / sizeof(table[0]) || !table[err].name)
        return "WR_EUNKNOWN";
    return table[err].name;
}

wr_err_t wr_einval(char *msg, size_t len, const char *fmt, ...)
{
    if (msg && len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return WR_EINVAL;
}

wr_err_t wr_field_einval(wr_field_err_t *e, const char *path, const char *fmt, ...)
{
    if (e->field && e->field_len > 0)
        snprintf(e->field, e->field_len, "%s", path);
    if (e->msg && e->msg_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, e->msg_len, fmt, ap);
        va_end(ap);
    }
    return WR_EINVAL;
}
