/*
 * http_parse.c - reading one request off a connection's buffer: our head
 * scan, then llhttp (strict, no lenient flag) for the fields and the body.
 *
 * The head scan runs over the bytes of a request until the empty line that
 * ends its head, resuming where it stopped when more bytes come (c->scan),
 * and refuses before llhttp sees a byte:
 *   - a bare CR or LF, or any other control byte but TAB (NUL among
 *     them) or DEL, anywhere in the head (400, as soon as it arrives);
 *   - a request line other than METHOD SP target SP HTTP/D.D (400), a
 *     target over WR_HTTP_MAX_TARGET (414, also while the line is still
 *     coming), a major version other than 1 (505: HTTP/2.0, the h2
 *     preface), a method we do not know (501, a token of any length);
 *   - a field line that starts with white space (obs-fold, 400), or with
 *     its colon (an empty field name, which llhttp 8 accepts: 400);
 *   - a head over WR_HTTP_MAX_HEADERS (431, counting the request line and
 *     every field line with its CRLF, not the final empty line; a request
 *     line alone over it is 431 too, whatever its method, 414 first).
 * Empty lines before a request line are skipped (RFC 9112 2.2). HTTP/1.2
 * and later minors are answered as 1.1: the scan rewrites the minor digit
 * to 1 in the buffer (llhttp refuses unknown versions).
 *
 * llhttp then parses the complete head in one call, and the body as it
 * comes. The head is first copied whole into the request's arena (one
 * copy: a copy per span was 16 arena appends a poll); llhttp's span
 * callbacks, all within that one call, only note each span's offset in the
 * copy, and the copy's delimiters after them (the SP after the target, a
 * field's colon, the CR or white space after a value) are overwritten with
 * NULs, so each is a C string where it lies. At the end of the head
 * (on_headers_complete) check what llhttp lets through: Host (HTTP/1.1
 * needs exactly one, of host characters), Transfer-Encoding (exactly one
 * field, exactly "chunked" in any case, never on HTTP/1.0), a
 * Content-Length of 2^63 or more, the target's form (origin or absolute),
 * Expect (100-continue or 417), and the route's body limit (413 at once
 * for a declared length over it; chunked bodies at the chunk size that
 * takes them over it).
 * llhttp itself refuses both Content-Length and Transfer-Encoding, two
 * Content-Lengths, a length that is not digits, whitespace before a colon,
 * control characters in values and bad chunk sizes (0x2 included); chunk
 * extensions and trailers are read and ignored (trailers up to 32 KiB, as
 * the head: 431 beyond; extensions 32 KiB in all: 400 beyond). Any llhttp
 * error is 400.
 * on_message_complete pauses the parser, so each request is dispatched
 * before the next is read.
 *
 * On x86-64 the build compiles llhttp twice (CMakeLists.txt): the baseline
 * copy and one with -msse4.2, whose own SIMD paths scan a header field or
 * value 16 bytes at a time. The first parse_init picks the SSE4.2 copy when
 * the CPU has it; both are the same state machine over the same llhttp_t.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/ids.h"
#include "http/http_conn_internal.h"

#define METHOD_MAX 16

/* The offset from p of its first control byte other than TAB (0x00-0x08,
 * 0x0a-0x1f: CR, LF and NUL among them) or DEL (0x7f), n when none of its
 * n bytes is one: in a head, CR ends a line (with its LF) and any other is
 * refused. SSE2 (every x86-64) compares 16 bytes at a time: a poll's head
 * is about 100 bytes in 5 lines, each line one to three steps. Only whole
 * 16-byte steps inside the n bytes are loaded; the rest a byte at a time. */
static size_t first_head_ctl(const char *p, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    const __m128i us = _mm_set1_epi8(0x1f), tab = _mm_set1_epi8('\t'), del = _mm_set1_epi8(0x7f);
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        /* x <= 0x1f (unsigned) exactly when max(x, 0x1f) is 0x1f; not TAB */
        __m128i ctl =
            _mm_andnot_si128(_mm_cmpeq_epi8(x, tab), _mm_cmpeq_epi8(_mm_max_epu8(x, us), us));
        unsigned bits = (unsigned)_mm_movemask_epi8(_mm_or_si128(ctl, _mm_cmpeq_epi8(x, del)));
        if (bits)
            return i + (size_t)__builtin_ctz(bits);
    }
#endif
    for (; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return i;
    }
    return n;
}

/* The offset from p of its first byte that cannot be in a request target
 * (a control byte, SP or DEL: 0x00-0x20, 0x7f), n when none; as above. */
static size_t target_end(const char *p, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    const __m128i sp = _mm_set1_epi8(' '), del = _mm_set1_epi8(0x7f);
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        /* x <= 0x20 (unsigned) exactly when max(x, 0x20) is 0x20 */
        __m128i m = _mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(x, sp), sp), _mm_cmpeq_epi8(x, del));
        unsigned bits = (unsigned)_mm_movemask_epi8(m);
        if (bits)
            return i + (size_t)__builtin_ctz(bits);
    }
#endif
    for (; i < n; i++)
        if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f)
            return i;
    return n;
}

static void fail(wr_http_conn_t *c, int status, const char *code, const char *msg)
{
    c->err_status = status;
    c->err_code = code;
    c->err_msg = msg;
}

static const char *const method_names[] = {"GET",    "HEAD",    "POST",  "PUT",    "PATCH",
                                           "DELETE", "OPTIONS", "TRACE", "CONNECT"};

static int method_of(const char *p, size_t n)
{
    for (int i = 0; i < (int)(sizeof(method_names) / sizeof(method_names[0])); i++)
        if (strlen(method_names[i]) == n && memcmp(method_names[i], p, n) == 0)
            return i;
    return WR_HTTP_M_OTHER;
}

/* The first line of a head (n bytes at p, without CRLF). Returns false
 * with c->err_* set when it is refused. */
static bool request_line(wr_http_conn_t *c, char *p, size_t n)
{
    if (n + 2 > WR_HTTP_MAX_HEADERS) {
        /* The line alone (with its CRLF) passes the head's limit: 431, as
         * while it was still coming (scan_head), 414 first (a target up to
         * the next SP, as there). */
        const char *sp = memchr(p, ' ', n);
        if (sp) {
            const char *t = sp + 1, *e = memchr(t, ' ', (size_t)(p + n - t));
            if ((size_t)((e ? e : p + n) - t) > WR_HTTP_MAX_TARGET) {
                fail(c, 414, "URI_TOO_LONG", "the request target exceeds 8 KiB");
                return false;
            }
        }
        fail(c, 431, "HEADERS_TOO_LARGE", "the request line and headers exceed 32 KiB");
        return false;
    }
    size_t m = 0;
    while (m < n && wr_ids_token_char(p[m]))
        m++;
    if (m == 0 || m >= n || p[m] != ' ') {
        fail(c, 400, "BAD_REQUEST", "malformed request line");
        return false;
    }
    size_t t = m + 1, te = t + target_end(p + t, n - t);
    if (te - t > WR_HTTP_MAX_TARGET) {
        fail(c, 414, "URI_TOO_LONG", "the request target exceeds 8 KiB");
        return false;
    }
    /* SP "HTTP/" DIGIT "." DIGIT, then the end of the line. */
    if (te == t || n - te != 9 || memcmp(p + te, " HTTP/", 6) != 0 || p[te + 7] != '.' ||
        p[te + 6] < '0' || p[te + 6] > '9' || p[te + 8] < '0' || p[te + 8] > '9') {
        fail(c, 400, "BAD_REQUEST", "malformed request line");
        return false;
    }
    if (p[te + 6] != '1') {
        fail(c, 505, "HTTP_VERSION_NOT_SUPPORTED", "only HTTP/1.x is served");
        return false;
    }
    if (p[te + 8] > '1')
        p[te + 8] = '1'; /* HTTP/1.2 and later minors: answered as 1.1 */
    /* A token of any length is a method (RFC 9110 9.1): one we do not know,
     * of however many letters, is 501, not 400. */
    int method = m > METHOD_MAX ? WR_HTTP_M_OTHER : method_of(p, m);
    if (method == WR_HTTP_M_OTHER) {
        fail(c, 501, "NOT_IMPLEMENTED", "method not implemented");
        return false;
    }
    c->rl_method = (uint8_t)method;
    c->rl_method_len = (uint8_t)m; /* m <= METHOD_MAX */
    return true;
}

/* A Content-Length field line (len bytes at line, in the head at b):
 * 0 to keep it, 1 when it repeats the first one's value (it is then
 * dropped: one field, RFC 9110 8.6), -1 when the values differ. */
static int content_length_line(wr_http_conn_t *c, const char *b, uint32_t line, uint32_t len)
{
    static const char name[] = "content-length:";
    const uint32_t k = sizeof(name) - 1;
    if (len < k || (b[line] | 0x20) != 'c' || strncasecmp(b + line, name, k) != 0)
        return 0; /* (the first letter alone turns most lines away) */
    uint32_t v = line + k, e = line + len;
    while (v < e && (b[v] == ' ' || b[v] == '\t'))
        v++;
    while (e > v && (b[e - 1] == ' ' || b[e - 1] == '\t'))
        e--;
    if (!c->cl_seen) {
        c->cl_seen = true;
        c->cl_off = v;
        c->cl_len = e - v;
        return 0;
    }
    if (e - v == c->cl_len && memcmp(b + v, b + c->cl_off, c->cl_len) == 0)
        return 1;
    fail(c, 400, "BAD_REQUEST", "two Content-Length values that differ");
    return -1;
}

/* Scans the head at c->ipos: 1 and *head_len when it is complete, 0 when
 * more bytes are needed, -1 when it is refused. */
static int scan_head(wr_http_conn_t *c, uint32_t *head_len)
{
    /* Empty lines before the request line. */
    while (!c->reqline_done && c->scan == 0 && c->ilen - c->ipos >= 1 && c->ibuf[c->ipos] == '\r') {
        if (c->ilen - c->ipos < 2)
            return 0;
        if (c->ibuf[c->ipos + 1] != '\n') {
            fail(c, 400, "BAD_REQUEST", "bare CR in the request head");
            return -1;
        }
        c->ipos += 2;
    }
    char *b = c->ibuf + c->ipos;
    uint32_t n = c->ilen - c->ipos, i = c->scan;
    for (; i < n; i++) {
        if (i == c->line_start && c->reqline_done && (b[i] == ' ' || b[i] == '\t')) {
            fail(c, 400, "BAD_REQUEST", "obs-fold (a field line starting with white space)");
            return -1;
        }
        /* The rest of the line up to its CR: no other control byte (TAB
         * aside) may come before it, LF and NUL included; refused as soon
         * as it is seen, though the head is not complete. */
        uint32_t end = i + (uint32_t)first_head_ctl(b + i, n - i);
        if (end < n && b[end] != '\r') {
            fail(c, 400, "BAD_REQUEST",
                 b[end] == '\n'   ? "bare LF in the request head"
                 : b[end] == '\0' ? "NUL in the request head"
                                  : "a control character in the request head");
            return -1;
        }
        i = end;
        if (i >= n)
            break;
        { /* b[i] is a CR */
            if (i + 1 >= n)
                break; /* its LF is still to come */
            if (b[i + 1] != '\n') {
                fail(c, 400, "BAD_REQUEST", "bare CR in the request head");
                return -1;
            }
            uint32_t len = i - c->line_start;
            if (!c->reqline_done) {
                if (!request_line(c, b, len))
                    return -1;
                c->reqline_done = true;
            } else if (len > 0) {
                if (b[c->line_start] == ':') {
                    /* An empty field name (llhttp 8 lets ": v" through): a
                     * proxy may read the line otherwise, or drop it. */
                    fail(c, 400, "BAD_REQUEST", "a field line without a field name");
                    return -1;
                }
                int d = content_length_line(c, b, c->line_start, len);
                if (d < 0)
                    return -1;
                if (d > 0) {
                    /* Drop the repeated line (its CRLF too) from the buffer. */
                    uint32_t next = i + 2;
                    memmove(b + c->line_start, b + next, n - next);
                    c->ilen -= next - c->line_start;
                    n -= next - c->line_start;
                    i = c->line_start - 1; /* the loop's i++ lands on the next line */
                    if (c->line_start < n &&
                        (b[c->line_start] == ' ' || b[c->line_start] == '\t')) {
                        fail(c, 400, "BAD_REQUEST",
                             "obs-fold (a field line starting with white space)");
                        return -1;
                    }
                    continue;
                }
            } else {
                if (c->line_start > WR_HTTP_MAX_HEADERS) {
                    fail(c, 431, "HEADERS_TOO_LARGE", "the request line and headers exceed 32 KiB");
                    return -1;
                }
                *head_len = i + 2;
                return 1;
            }
            i++;
            c->line_start = i + 1;
            if (c->line_start < n && (b[c->line_start] == ' ' || b[c->line_start] == '\t')) {
                fail(c, 400, "BAD_REQUEST", "obs-fold (a field line starting with white space)");
                return -1;
            }
        }
    }
    c->scan = i;
    if (!c->reqline_done) {
        /* The target while the request line is still coming: 414 early. */
        const char *sp = memchr(b, ' ', n);
        if (sp) {
            const char *t = sp + 1, *e = memchr(t, ' ', (size_t)(b + n - t));
            if ((size_t)((e ? e : b + n) - t) > WR_HTTP_MAX_TARGET) {
                fail(c, 414, "URI_TOO_LONG", "the request target exceeds 8 KiB");
                return -1;
            }
        }
        if (n > WR_HTTP_MAX_HEADERS) {
            fail(c, 431, "HEADERS_TOO_LARGE", "the request line and headers exceed 32 KiB");
            return -1;
        }
    } else if (n - (n > 0 && b[n - 1] == '\r' ? 1 : 0) > WR_HTTP_MAX_HEADERS) {
        fail(c, 431, "HEADERS_TOO_LARGE", "the request line and headers exceed 32 KiB");
        return -1;
    }
    return 0;
}

/* ---- llhttp callbacks ---- */

static wr_http_req_t *req_of(llhttp_t *p)
{
    return ((wr_http_conn_t *)p->data)->cur;
}

/* The offset in the request's copy of the head of a span at `at` in ibuf
 * (during the head's one llhttp call). */
static uint32_t head_off(const wr_http_conn_t *c, const char *at)
{
    return c->head_at + (uint32_t)(at - c->head_src);
}

static int on_url(llhttp_t *p, const char *at, size_t n)
{
    wr_http_conn_t *c = p->data;
    wr_http_req_t *r = c->cur;
    if (n == 0)
        return 0;
    if (r->target_len == 0)
        r->target = head_off(c, at);
    r->target_len += (uint32_t)n;
    return 0;
}

static int on_url_complete(llhttp_t *p)
{
    wr_http_req_t *r = req_of(p);
    r->in.p[r->target + r->target_len] = '\0'; /* the SP after it, in the copy */
    return 0;
}

/* n more bytes the chunked framing carries besides the body, counted in
 * *used: ignored, but at most what a head may be in one request (else
 * status and the connection closed: a chunked body could otherwise stream
 * an endless trailer, or endless chunk extensions, until the deadline). */
static int framing_bytes(llhttp_t *p, uint32_t *used, size_t n, int status, const char *code,
                         const char *msg)
{
    if (n > WR_HTTP_MAX_HEADERS || *used + n > WR_HTTP_MAX_HEADERS) {
        fail(p->data, status, code, msg);
        return -1;
    }
    *used += (uint32_t)n;
    return 0;
}

/* A trailer's bytes (field names and values): 431 beyond, as for the head. */
static int trailer_bytes(llhttp_t *p, size_t n)
{
    return framing_bytes(p, &req_of(p)->trailer_bytes, n, 431, "HEADERS_TOO_LARGE",
                         "the trailer fields exceed 32 KiB");
}

static int on_field(llhttp_t *p, const char *at, size_t n)
{
    wr_http_conn_t *c = p->data;
    wr_http_req_t *r = c->cur;
    if (r->headers_done)
        return trailer_bytes(p, n); /* a trailer */
    if (!r->field_open) {
        if (r->n_fields == r->fields_cap) {
            uint32_t cap = r->fields_cap ? 2 * r->fields_cap : 16;
            wr_http_field_t *f = realloc(r->fields, cap * sizeof(*f));
            wr_http__allocs++;
            if (!f)
                return -1;
            r->fields = f;
            r->fields_cap = cap;
        }
        wr_http_field_t *f = &r->fields[r->n_fields++];
        memset(f, 0, sizeof(*f));
        f->name = head_off(c, at);
        r->field_open = true;
    }
    r->fields[r->n_fields - 1].name_len += (uint32_t)n;
    return 0;
}

static int on_field_complete(llhttp_t *p)
{
    wr_http_req_t *r = req_of(p);
    if (r->headers_done)
        return 0;
    wr_http_field_t *f = &r->fields[r->n_fields - 1];
    r->in.p[f->name + f->name_len] = '\0'; /* the colon, in the copy */
    f->value = f->name + f->name_len + 1;  /* "" there unless a value comes */
    return 0;
}

static int on_value(llhttp_t *p, const char *at, size_t n)
{
    wr_http_conn_t *c = p->data;
    wr_http_req_t *r = c->cur;
    if (r->headers_done)
        return trailer_bytes(p, n);
    wr_http_field_t *f = &r->fields[r->n_fields - 1];
    if (n == 0)
        return 0; /* llhttp's empty span of an empty value is at the next line: not ours */
    if (f->value_len == 0)
        f->value = head_off(c, at);
    f->value_len += (uint32_t)n;
    return 0;
}

static int on_value_complete(llhttp_t *p)
{
    wr_http_req_t *r = req_of(p);
    if (r->headers_done)
        return 0;
    wr_http_field_t *f = &r->fields[r->n_fields - 1];
    while (f->value_len > 0 && (r->in.p[f->value + f->value_len - 1] == ' ' ||
                                r->in.p[f->value + f->value_len - 1] == '\t'))
        f->value_len--;
    r->in.p[f->value + f->value_len] = '\0'; /* its CR or white space, in the copy */
    r->field_open = false;
    return 0;
}

/* Host characters: reg-name, IPv4, [IPv6], with an optional port (RFC
 * 3986's unreserved and sub-delims, '%', ':', '[' and ']'), as a table
 * (filled once by wr_http__parse_init): a strchr per character was a
 * tenth of the head's own checks. */
static bool host_chars[256];

static void host_chars_init(void)
{
    for (int ch = 0; ch < 256; ch++)
        host_chars[ch] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                         (ch >= '0' && ch <= '9') || (ch && strchr("-._~!$&'()*+,;=%:[]", ch));
}

static bool valid_host(const char *v)
{
    if (!*v)
        return false;
    for (const char *s = v; *s; s++)
        if (!host_chars[(unsigned char)*s])
            return false;
    return true;
}

/* A copy of n bytes at offset from of r's input arena, NUL-terminated, at
 * its end; its offset in *at. */
static bool copy_span(wr_http_req_t *r, uint32_t from, uint32_t n, uint32_t *at)
{
    *at = r->in.len;
    if (!wr_http__arena_add(&r->in, NULL, (size_t)n + 1))
        return false;
    memmove(r->in.p + *at, r->in.p + from, n);
    r->in.p[*at + n] = '\0';
    return true;
}

/* Splits the target into path and query: origin form, or absolute form
 * (scheme://authority[path]) served as its path ("/" when it has none).
 * False for other forms, and for a fragment ('#': RFC 9112 section 3.2,
 * neither form has one; a client never sends it, so it is a made-up
 * request, which would otherwise reach the router as part of the path). */
static bool split_target(wr_http_req_t *r)
{
    const char *t = r->in.p + r->target;
    uint32_t n = r->target_len, off = 0;
    if (n == 0 || memchr(t, '#', n))
        return false;
    if (t[0] != '/') {
        const char *s = strstr(t, "://");
        size_t sl = s ? (size_t)(s - t) : 0;
        if (!s || sl == 0 || sl > 16)
            return false;
        for (size_t i = 0; i < sl; i++) {
            char ch = t[i];
            bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
            bool more = (ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.';
            if (!alpha && !(i > 0 && more))
                return false;
        }
        off = (uint32_t)(sl + 3);
        while (off < n && t[off] != '/' && t[off] != '?')
            off++;
    }
    const char *q = memchr(t + off, '?', n - off);
    uint32_t plen = (uint32_t)((q ? q : t + n) - (t + off));
    uint32_t qfrom = q ? r->target + (uint32_t)(q - t) + 1 : 0;
    uint32_t qlen = q ? n - (uint32_t)(q - t) - 1 : 0;
    if (plen == 0) {
        r->path_len = 1;
        if (!copy_span(r, 0, 0, &r->path) || !wr_http__arena_add(&r->in, NULL, 1))
            return false;
        r->in.p[r->path] = '/';
        r->in.p[r->path + 1] = '\0';
    } else if (off == 0 && !q) {
        r->path = r->target;
        r->path_len = plen;
    } else {
        r->path_len = plen;
        if (!copy_span(r, r->target + off, plen, &r->path))
            return false;
    }
    if (q && !copy_span(r, qfrom, qlen, &r->query))
        return false;
    return true;
}

static int on_headers_complete(llhttp_t *p)
{
    wr_http_conn_t *c = p->data;
    wr_http_req_t *r = c->cur;
    r->headers_done = true;
    r->minor = (uint8_t)(p->http_minor > 0 ? 1 : 0);
    int host = 0, te = 0;
    const char *expect = NULL;
    for (uint32_t i = 0; i < r->n_fields; i++) {
        const wr_http_field_t *f = &r->fields[i];
        const char *name = r->in.p + f->name, *v = r->in.p + f->value;
        if (f->name_len == 4 && strcasecmp(name, "host") == 0) {
            if (++host > 1 || !valid_host(v)) {
                fail(c, 400, "BAD_REQUEST", host > 1 ? "two Host fields" : "invalid Host");
                return -1;
            }
        } else if (f->name_len == 17 && strcasecmp(name, "transfer-encoding") == 0) {
            if (++te > 1 || r->minor == 0 || strcasecmp(v, "chunked") != 0) {
                fail(c, 400, "BAD_REQUEST", "Transfer-Encoding other than one chunked");
                return -1;
            }
        } else if (f->name_len == 6 && strcasecmp(name, "expect") == 0) {
            expect = v;
        }
    }
    if (r->minor == 1 && host == 0) {
        fail(c, 400, "BAD_REQUEST", "HTTP/1.1 request without Host");
        return -1;
    }
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length >= ((uint64_t)1 << 63)) {
        fail(c, 400, "BAD_REQUEST", "Content-Length out of range");
        return -1;
    }
    if (!split_target(r)) {
        fail(c, 400, "BAD_REQUEST", "malformed request target");
        return -1;
    }
    wr_http_env_t *env = c->env;
    bool has_body = (p->flags & F_CHUNKED) || ((p->flags & F_CONTENT_LENGTH) && p->content_length);
    size_t limit = !has_body         ? 0
                   : env->body_limit ? env->body_limit(r, env->handler_arg)
                                     : WR_HTTP_MAX_BODY_ADMIN;
    r->body_limit = (uint32_t)(limit > WR_HTTP_MAX_BODY_ADMIN ? WR_HTTP_MAX_BODY_ADMIN : limit);
    if (expect && r->minor == 1 && strcasecmp(expect, "100-continue") != 0) {
        fail(c, 417, "EXPECTATION_FAILED", "only 100-continue is expected");
        return -1;
    }
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > r->body_limit) {
        fail(c, 413, "PAYLOAD_TOO_LARGE", "request body too large");
        return -1;
    }
    /* CONNECT or an Upgrade (Connection: upgrade with Upgrade:, which
     * llhttp flags here) we do not do: answered, then closed - the bytes
     * after its head are not HTTP/1.1 of ours. on_message_complete's pause
     * comes before llhttp's own HPE_PAUSED_UPGRADE, so it is marked here. */
    if (p->upgrade)
        r->close = true;
    r->body = r->in.len;
    if (expect && r->minor == 1 && (p->flags & (F_CONTENT_LENGTH | F_CHUNKED)) &&
        (p->content_length > 0 || (p->flags & F_CHUNKED)) && c->nq == 0 && c->head_end >= c->ilen) {
        /* Nothing is queued before it and no body byte has come yet. */
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        ssize_t w = send(c->fd, cont, sizeof(cont) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)w; /* best effort: without it the client sends after its own wait */
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t n)
{
    wr_http_conn_t *c = p->data;
    wr_http_req_t *r = c->cur;
    if (r->body_len + n > r->body_limit) {
        fail(c, 413, "PAYLOAD_TOO_LARGE", "request body too large");
        return -1;
    }
    r->body_len += (uint32_t)n;
    return wr_http__arena_add(&r->in, at, n) ? 0 : -1;
}

/* A chunk extension's bytes (name or value), of all its chunks together:
 * 400 beyond 32 KiB (framing_bytes). */
static int on_chunk_ext(llhttp_t *p, const char *at, size_t n)
{
    (void)at;
    return framing_bytes(p, &req_of(p)->chunk_ext_bytes, n, 400, "BAD_REQUEST",
                         "the chunk extensions exceed 32 KiB");
}

/* A chunk's size comes before its bytes: one that takes the body over the
 * limit is 413 at once, not after the client sent it (or 408). */
static int on_chunk_header(llhttp_t *p)
{
    wr_http_conn_t *c = p->data;
    if (p->content_length > c->cur->body_limit - c->cur->body_len) {
        fail(c, 413, "PAYLOAD_TOO_LARGE", "request body too large");
        return -1;
    }
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    wr_http_conn_t *c = p->data;
    if (!wr_http__arena_add(&c->cur->in, "", 1))
        return -1;
    c->msg_done = true;
    return HPE_PAUSED;
}

static llhttp_settings_t settings;

/* llhttp_execute's body (api.c), with the copy chosen in parse_init */
typedef int (*execute_fn)(llhttp__internal_t *s, const char *p, const char *endp);
static execute_fn execute = llhttp__internal_execute;
static bool execute_chosen;
#ifdef WR_LLHTTP_SSE42
int wr_sse42_llhttp__internal_execute(llhttp__internal_t *s, const char *p, const char *endp);
#endif

bool wr_http__parse_simd(bool on)
{
    execute_chosen = true;
    execute = llhttp__internal_execute;
#ifdef WR_LLHTTP_SSE42
    if (on && __builtin_cpu_supports("sse4.2"))
        execute = wr_sse42_llhttp__internal_execute;
#else
    (void)on;
#endif
    return execute != llhttp__internal_execute;
}

void wr_http__parse_init(wr_http_conn_t *c)
{
    if (!settings.on_url) {
        host_chars_init();
        if (!execute_chosen)
            wr_http__parse_simd(true);
        llhttp_settings_init(&settings);
        settings.on_url = on_url;
        settings.on_url_complete = on_url_complete;
        settings.on_header_field = on_field;
        settings.on_header_field_complete = on_field_complete;
        settings.on_header_value = on_value;
        settings.on_header_value_complete = on_value_complete;
        settings.on_headers_complete = on_headers_complete;
        settings.on_body = on_body;
        settings.on_chunk_header = on_chunk_header;
        settings.on_chunk_extension_name = on_chunk_ext;
        settings.on_chunk_extension_value = on_chunk_ext;
        settings.on_message_complete = on_message_complete;
    }
    llhttp_init(&c->parser, HTTP_REQUEST, &settings);
    c->parser.data = c;
    c->state = WR_CONN_HEAD;
    c->scan = c->line_start = 0;
    c->reqline_done = false;
}

/* llhttp over n bytes at p: bytes used in *used; false on an error. */
static bool feed(wr_http_conn_t *c, const char *p, size_t n, uint32_t *used)
{
    llhttp_errno_t e = (llhttp_errno_t)execute(&c->parser, p, p + n);
    if (e == HPE_OK) {
        *used = (uint32_t)n;
        return true;
    }
    if (e == HPE_PAUSED || e == HPE_PAUSED_UPGRADE) {
        *used = (uint32_t)(llhttp_get_error_pos(&c->parser) - p);
        if (e == HPE_PAUSED) {
            llhttp_resume(&c->parser);
        } else {
            /* CONNECT or an Upgrade we do not do: answered, then closed. */
            llhttp_resume_after_upgrade(&c->parser);
            c->cur->close = true;
        }
        return true;
    }
    if (e == HPE_PAUSED_H2_UPGRADE) {
        fail(c, 505, "HTTP_VERSION_NOT_SUPPORTED", "only HTTP/1.x is served");
        return false;
    }
    if (c->err_status == 0)
        fail(c, 400, "BAD_REQUEST", llhttp_get_error_reason(&c->parser));
    return false;
}

int wr_http__parse(wr_http_conn_t *c)
{
    uint32_t used;
    if (c->state == WR_CONN_HEAD) {
        uint32_t head_len = 0;
        int r = scan_head(c, &head_len);
        if (r <= 0)
            return r;
        c->cur = wr_http__req_get(c);
        if (!c->cur) {
            fail(c, 503, "STORE_UNAVAILABLE", "out of memory");
            return -1;
        }
        const char *m = c->ibuf + c->ipos;
        size_t ml = c->rl_method_len;
        c->cur->method = c->rl_method;
        memcpy(c->cur->method_name, m, ml);
        c->cur->method_name[ml] = '\0';
        c->msg_done = false;
        c->state = WR_CONN_BODY;
        c->scan = c->line_start = 0;
        c->reqline_done = false;
        c->cl_seen = false;
        c->head_end = c->ipos + head_len;
        /* the head's copy, which the callbacks point into */
        c->head_src = c->ibuf + c->ipos;
        c->head_at = c->cur->in.len;
        if (!wr_http__arena_add(&c->cur->in, c->head_src, head_len)) {
            fail(c, 503, "STORE_UNAVAILABLE", "out of memory");
            return -1;
        }
        if (!feed(c, c->ibuf + c->ipos, head_len, &used))
            return -1;
        c->ipos += used;
    }
    if (c->ipos < c->ilen && !c->msg_done) {
        if (!feed(c, c->ibuf + c->ipos, c->ilen - c->ipos, &used))
            return -1;
        c->ipos += used;
    }
    if (!c->msg_done)
        return 0;
    c->state = WR_CONN_HEAD;
    if (!llhttp_should_keep_alive(&c->parser))
        c->cur->close = true;
    return 1;
}
