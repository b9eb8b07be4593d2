/*
 * b64.c - base64url without padding (RFC 4648 section 5).
 *
 * Encoding maps each 3-byte group to 4 characters of the alphabet
 * A-Z a-z 0-9 - _; a final group of 1 or 2 bytes gives 2 or 3 characters
 * and no '=' padding. Decoding is strict so that every byte string has
 * exactly one accepted encoding (no signature malleability in tokens and
 * cookies): padding, whitespace, characters outside the alphabet, a length
 * of 4k+1 and non-zero unused bits in the last character are all refused.
 *
 * Both directions validate the whole input and check the output capacity
 * before writing anything, so on error the output buffer is untouched.
 * No allocation; the caller owns every buffer.
 *
 * Standard base64 with padding (RFC 4648 section 4: '+' and '/', then '='
 * to a multiple of 4), as the public log's hashes and signed notes write
 * it, is the same code over the other alphabet (the `enc` and `dec` cores
 * take it), with the same strictness: exactly the padding the length
 * needs, nothing after it, zero unused bits.
 */
#include "base/b64.h"

static const char url_alphabet[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char std_alphabet[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Value of c in the base64url alphabet (std false) or the standard one
 * (std true), or -1. */
static int sextet2(unsigned char c, int std)
{
    if (c == '+' || c == '/')
        return std ? (c == '+' ? 62 : 63) : -1;
    if (c == '-' || c == '_')
        return std ? -1 : (c == '-' ? 62 : 63);
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return -1;
}

/* Largest n whose encoded length (plus NUL) fits in a size_t. */
#define MAX_ENCODABLE ((SIZE_MAX / 4 - 1) * 3)

size_t wr_b64url_encoded_len(size_t n)
{
    if (n > MAX_ENCODABLE)
        return SIZE_MAX;
    return (n / 3) * 4 + (n % 3 == 0 ? 0 : n % 3 + 1);
}

/* Encodes n bytes of in with alphabet (std: and pads with '='). */
static wr_err_t enc(const uint8_t *in, size_t n, char *out, size_t cap, size_t *out_len, int std)
{
    const char *alphabet = std ? std_alphabet : url_alphabet;
    if ((!in && n > 0) || !out)
        return WR_EINVAL;
    if (n > MAX_ENCODABLE)
        return WR_ELIMIT;
    size_t need = std ? wr_b64_encoded_len(n) : wr_b64url_encoded_len(n);
    if (cap < need + 1)
        return WR_ELIMIT;

    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = alphabet[v >> 6 & 63];
        out[o++] = alphabet[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = alphabet[v >> 6 & 63];
    }
    while (std && o % 4 != 0)
        out[o++] = '=';
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return WR_OK;
}

/* Decodes n characters without padding in the alphabet of std. */
static wr_err_t dec(const char *in, size_t n, uint8_t *out, size_t cap, size_t *out_len, int std)
{
    if ((!in && n > 0) || (!out && cap > 0))
        return WR_EINVAL;
    size_t rem = n % 4;
    if (rem == 1)
        return WR_EINVAL;

    /* Validate everything first: the alphabet, then the unused low bits of
     * the last character (4 bits when rem == 2, 2 bits when rem == 3). */
    for (size_t i = 0; i < n; i++) {
        if (sextet2((unsigned char)in[i], std) < 0)
            return WR_EINVAL;
    }
    if (rem == 2 && (sextet2((unsigned char)in[n - 1], std) & 0x0f) != 0)
        return WR_EINVAL;
    if (rem == 3 && (sextet2((unsigned char)in[n - 1], std) & 0x03) != 0)
        return WR_EINVAL;

    size_t need = (n / 4) * 3 + (rem == 0 ? 0 : rem - 1);
    if (cap < need)
        return WR_ELIMIT;

    size_t o = 0, i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t v = (uint32_t)sextet2((unsigned char)in[i], std) << 18 |
                     (uint32_t)sextet2((unsigned char)in[i + 1], std) << 12 |
                     (uint32_t)sextet2((unsigned char)in[i + 2], std) << 6 |
                     (uint32_t)sextet2((unsigned char)in[i + 3], std);
        out[o++] = (uint8_t)(v >> 16);
        out[o++] = (uint8_t)(v >> 8);
        out[o++] = (uint8_t)v;
    }
    if (rem >= 2) {
        uint32_t v = (uint32_t)sextet2((unsigned char)in[i], std) << 18 |
                     (uint32_t)sextet2((unsigned char)in[i + 1], std) << 12;
        if (rem == 3)
            v |= (uint32_t)sextet2((unsigned char)in[i + 2], std) << 6;
        out[o++] = (uint8_t)(v >> 16);
        if (rem == 3)
            out[o++] = (uint8_t)(v >> 8);
    }
    if (out_len)
        *out_len = o;
    return WR_OK;
}

wr_err_t wr_b64url_encode(const uint8_t *in, size_t n, char *out, size_t cap, size_t *out_len)
{
    return enc(in, n, out, cap, out_len, 0);
}

wr_err_t wr_b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *out_len)
{
    return dec(in, n, out, cap, out_len, 0);
}

size_t wr_b64_encoded_len(size_t n)
{
    if (n > MAX_ENCODABLE)
        return SIZE_MAX;
    return (n + 2) / 3 * 4;
}

wr_err_t wr_b64_encode(const uint8_t *in, size_t n, char *out, size_t cap, size_t *out_len)
{
    return enc(in, n, out, cap, out_len, 1);
}

wr_err_t wr_b64_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *out_len)
{
    if ((!in && n > 0) || n % 4 != 0)
        return WR_EINVAL;
    /* the padding the length needs, exactly: one '=' for 2 bytes in the last
     * group, two for 1; dec then refuses any '=' left inside */
    size_t pad = 0;
    while (pad < 2 && n > pad && in[n - 1 - pad] == '=')
        pad++;
    return dec(in, n - pad, out, cap, out_len, 1);
}
