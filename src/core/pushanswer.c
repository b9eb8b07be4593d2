/*
 * pushanswer.c - a push service's answers and the waits between tries
 * (pushanswer.h). The date form is parsed with strptime in the C locale's
 * fixed English names and converted with timegm (UTC, not the local
 * zone); anything but the exact IMF-fixdate or all-digit seconds is
 * malformed rather than guessed at.
 */
#define _GNU_SOURCE /* strptime, timegm */
#include "core/pushanswer.h"

#include <string.h>
#include <time.h>

wr_pushanswer_t wr_pushanswer_of(int status)
{
    if (status >= 200 && status <= 299)
        return WR_PUSHANSWER_DELIVERED;
    if (status == 404 || status == 410)
        return WR_PUSHANSWER_GONE;
    if (status >= 300 && status <= 399)
        return WR_PUSHANSWER_REDIRECT;
    if (status >= 400 && status <= 499 && status != 429)
        return WR_PUSHANSWER_REFUSED;
    return WR_PUSHANSWER_RETRY;
}

int64_t wr_pushanswer_retry_after_ms(const char *v, int64_t now_ms)
{
    const int64_t max = WR_PUSHANSWER_RETRY_AFTER_MAX_MS;
    if (!v || !*v)
        return -1;
    if (*v >= '0' && *v <= '9') {
        int64_t s = 0;
        for (; *v >= '0' && *v <= '9'; v++)
            if (s <= max / 1000)
                s = s * 10 + (*v - '0');
        if (*v != '\0')
            return -1;
        return s * 1000 < max ? s * 1000 : max;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!end || *end != '\0')
        return -1;
    int64_t ms = (int64_t)timegm(&tm) * 1000 - now_ms;
    return ms < 0 ? 0 : ms > max ? max : ms;
}

int64_t wr_pushanswer_backoff_ms(unsigned retries, int64_t first_ms, int64_t max_ms)
{
    int64_t d = first_ms > 0 ? first_ms : 1;
    for (unsigned i = 0; i < retries && d < max_ms; i++)
        d *= 2;
    return d < max_ms ? d : max_ms;
}
