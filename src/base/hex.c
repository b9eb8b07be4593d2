/*
 * hex.c - lowercase hexadecimal (hex.h). Decoding accepts only the one
 * spelling the encoder writes, so a value has one text (a log id compared
 * as text and as bytes agrees).
 */
#include "base/hex.h"

static const char digits[] = "0123456789abcdef";

void wr_hex_encode(const uint8_t *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The value of a lowercase hex digit, or -1. */
static int value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

bool wr_hex_decode(const char *s, size_t len, uint8_t *out, size_t n)
{
    if (!s || len != 2 * n)
        return false;
    for (size_t i = 0; i < n; i++) {
        int hi = value(s[2 * i]), lo = value(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}
