/*
 * fuzz_llhttp_copies.c - libFuzzer target: llhttp's two copies (the
 * baseline build and the SSE4.2 one, CMakeLists.txt; http_parse.c picks
 * the second on a CPU with SSE4.2) fed the same bytes must say the same
 * things: every callback with the same span, in the same order, and the
 * same error at the same offset.
 *
 * The input is a request stream (strict mode, HTTP_REQUEST, as
 * http_parse.c runs it), fed in chunks whose sizes the first byte seeds,
 * so the SIMD paths meet chunk ends (they only look 16 bytes ahead when
 * 16 are there). A pause (on_message_complete returns HPE_PAUSED, as ours
 * does) is resumed and the rest fed on. Each copy's callbacks are logged
 * (a kind, the span's offset and length) and the logs compared; a
 * difference aborts. Without the SSE4.2 copy (another CPU or compiler),
 * the baseline is compared with itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llhttp.h"

#ifdef WR_LLHTTP_SSE42
int wr_sse42_llhttp__internal_execute(llhttp__internal_t *s, const char *p, const char *endp);
#endif

typedef int (*execute_fn)(llhttp__internal_t *s, const char *p, const char *endp);

#define LOG_MAX 4096

typedef struct {
    const char *base; /* the input's first byte: spans as offsets */
    uint32_t log[LOG_MAX][3];
    size_t n;
} trace_t;

static void note(llhttp_t *p, uint32_t kind, const char *at, size_t len)
{
    trace_t *t = p->data;
    if (t->n < LOG_MAX) {
        t->log[t->n][0] = kind;
        t->log[t->n][1] = at ? (uint32_t)(at - t->base) : UINT32_MAX;
        t->log[t->n][2] = (uint32_t)len;
    }
    t->n++;
}

#define SPAN_CB(NAME, KIND)                                                                        \
    static int NAME(llhttp_t *p, const char *at, size_t len)                                       \
    {                                                                                              \
        note(p, KIND, at, len);                                                                    \
        return 0;                                                                                  \
    }
#define EVENT_CB(NAME, KIND)                                                                       \
    static int NAME(llhttp_t *p)                                                                   \
    {                                                                                              \
        note(p, KIND, NULL, 0);                                                                    \
        return 0;                                                                                  \
    }
SPAN_CB(on_url, 1)
SPAN_CB(on_field, 2)
SPAN_CB(on_value, 3)
SPAN_CB(on_body, 4)
SPAN_CB(on_ext_name, 5)
SPAN_CB(on_ext_value, 6)
SPAN_CB(on_method, 7)
SPAN_CB(on_version, 8)
EVENT_CB(on_message_begin, 20)
EVENT_CB(on_url_complete, 21)
EVENT_CB(on_field_complete, 22)
EVENT_CB(on_value_complete, 23)
EVENT_CB(on_chunk_header, 24)
EVENT_CB(on_chunk_complete, 25)

static int on_headers_complete(llhttp_t *p)
{
    note(p, 26, NULL, p->content_length > UINT32_MAX ? UINT32_MAX : (size_t)p->content_length);
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    note(p, 27, NULL, 0);
    return HPE_PAUSED; /* as http_parse.c */
}

static llhttp_settings_t settings;

/* Runs one copy over the input in the chunks rng picks; the trace gets
 * every callback, then the final error and its offset. */
static void run(execute_fn execute, const char *data, size_t size, uint32_t rng, trace_t *t)
{
    llhttp_t parser;
    llhttp_init(&parser, HTTP_REQUEST, &settings);
    t->base = data;
    t->n = 0;
    parser.data = t;
    size_t at = 0;
    int e = HPE_OK;
    while (at < size) {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        size_t n = 1 + rng % 96;
        if (n > size - at)
            n = size - at;
        e = execute(&parser, data + at, data + at + n);
        if (e == HPE_PAUSED) {
            const char *pos = llhttp_get_error_pos(&parser);
            note(&parser, 40, pos, 0);
            llhttp_resume(&parser);
            at = (size_t)(pos - data);
            continue;
        }
        if (e != HPE_OK)
            break;
        at += n;
    }
    note(&parser, 41, e == HPE_OK ? NULL : llhttp_get_error_pos(&parser), (size_t)e);
}

static trace_t a, b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!settings.on_url) {
        llhttp_settings_init(&settings);
        settings.on_url = on_url;
        settings.on_header_field = on_field;
        settings.on_header_value = on_value;
        settings.on_body = on_body;
        settings.on_chunk_extension_name = on_ext_name;
        settings.on_chunk_extension_value = on_ext_value;
        settings.on_method = on_method;
        settings.on_version = on_version;
        settings.on_message_begin = on_message_begin;
        settings.on_url_complete = on_url_complete;
        settings.on_header_field_complete = on_field_complete;
        settings.on_header_value_complete = on_value_complete;
        settings.on_chunk_header = on_chunk_header;
        settings.on_chunk_complete = on_chunk_complete;
        settings.on_headers_complete = on_headers_complete;
        settings.on_message_complete = on_message_complete;
    }
    if (size < 1)
        return 0;
    uint32_t rng = (uint32_t)data[0] * 2654435761u | 1;
    execute_fn simd = llhttp__internal_execute;
#ifdef WR_LLHTTP_SSE42
    if (__builtin_cpu_supports("sse4.2"))
        simd = wr_sse42_llhttp__internal_execute;
#endif
    run(llhttp__internal_execute, (const char *)data + 1, size - 1, rng, &a);
    run(simd, (const char *)data + 1, size - 1, rng, &b);
    size_t logged = a.n < LOG_MAX ? a.n : LOG_MAX;
    if (a.n != b.n || memcmp(a.log, b.log, logged * sizeof a.log[0]) != 0)
        abort();
    return 0;
}
