/*
 * http_conn_internal.h - what http_conn.c (connections, answers, order)
 * and http_parse.c (the head scan and llhttp) share: the request and
 * connection structs. Nothing outside those two files includes it.
 */
#ifndef WR_HTTP_CONN_INTERNAL_H
#define WR_HTTP_CONN_INTERNAL_H

#include <event2/event_struct.h>
#include <llhttp.h>
#include <sys/uio.h>

#include "http/http_conn.h"

/* A request header field: offsets into the request's input arena. */
typedef struct {
    uint32_t name, name_len, value, value_len;
} wr_http_field_t;

/* A growable byte arena (kept across requests up to ARENA_KEEP bytes). */
typedef struct {
    char *p;
    uint32_t len, cap;
} wr_http_arena_t;

struct wr_http_req {
    wr_http_conn_t *conn;           /* NULL once the connection is gone (an orphan) */
    STAILQ_ENTRY(wr_http_req) link; /* in the connection's queue, or the free list */
    /* input */
    wr_http_arena_t in; /* target, field names and values, body; each NUL-terminated */
    wr_http_field_t *fields;
    uint32_t n_fields, fields_cap;
    uint32_t target, target_len, path, path_len, query; /* offsets; query 0 = none */
    uint32_t body, body_len;
    uint32_t body_limit;
    uint8_t method; /* wr_http_method_t */
    uint8_t minor;
    bool field_open;          /* the last callback was a field name (a value follows) */
    bool headers_done;        /* later header callbacks are trailers (ignored) */
    uint32_t trailer_bytes;   /* of the trailer fields: ignored, but bounded as the head is */
    uint32_t chunk_ext_bytes; /* of the chunk extensions: ignored, but bounded likewise */
    char method_name[16];
    char peer[48];
    uint16_t peer_port;
    /* output */
    wr_http_arena_t out; /* response header lines, then a copied body */
    uint32_t hdrs_len;   /* bytes of header lines at the start of out */
    const char *body_ref;
    size_t body_ref_len;
    char line[224]; /* status line, then Date, Content-Length, Connection, CRLF */
    uint32_t line_len;
    struct iovec iov[3];
    int n_iov;
    bool done;  /* answered: its bytes wait in iov */
    bool close; /* the connection closes after this answer */
};

enum { WR_CONN_HEAD, WR_CONN_BODY };

struct wr_http_conn {
    wr_http_env_t *env;
    TAILQ_ENTRY(wr_http_conn) link; /* in env->conns, or env->free_conns */
    struct event rev, wev;
    int fd;
    char *ibuf; /* bytes read, not yet parsed from ipos */
    uint32_t ilen, icap, ipos;
    /* the head scan of the request at ipos (http_parse.c) */
    uint32_t scan, line_start;
    uint32_t head_end;    /* the end of cur's head in ibuf while it is parsed */
    const char *head_src; /* cur's head in ibuf during its one llhttp call */
    uint32_t head_at;     /* its copy's offset in cur's input arena */
    bool reqline_done;
    /* the request line's method (WR_HTTP_M_*) and its length */
    uint8_t rl_method, rl_method_len;
    bool cl_seen;            /* a Content-Length line was seen in this head */
    uint32_t cl_off, cl_len; /* its value, in the head */
    uint8_t state;           /* WR_CONN_HEAD / WR_CONN_BODY */
    llhttp_t parser;         /* its data points at this connection */
    wr_http_req_t *cur;      /* the request being parsed */
    bool msg_done;           /* llhttp finished cur's message */
    int err_status;          /* a callback's verdict (0 = llhttp's own error: 400) */
    const char *err_code, *err_msg;
    struct wr_http_req_list q; /* dispatched, in order, not yet written */
    uint32_t nq;
    uint32_t requests;
    uint32_t wr_off;     /* bytes of q's first answer already written */
    int64_t start_us;    /* first byte of the request being read; 0 = none */
    int64_t last_us;     /* last read or write progress */
    int64_t close_at_us; /* closing: the write side is shut; close by then */
    bool in_read;        /* in the read callback: answers wait for one writev at its end */
    bool closing;        /* no more requests: answer what is queued, then close */
    bool shut;           /* write side shut, input discarded */
    bool eof;            /* the peer closed its write side */
    bool read_off;       /* reading stopped (pipeline full) */
    bool parse_blocked;  /* whole requests wait in ibuf for room in the pipeline */
    bool rd_more;        /* the socket may hold bytes no edge will announce (http_conn.c) */
    bool rdhup;          /* EPOLLRDHUP seen: the peer's FIN is in the socket, read to it */
    bool probed;         /* a recv said EAGAIN since the last bytes came (http_conn.c, on_read) */
    bool wev_on;
    char peer[48];
    uint16_t peer_port;
};

/* http_parse.c */
void wr_http__parse_init(wr_http_conn_t *c);

/* Which of llhttp's two copies parses from now on (both the same parser;
 * CMakeLists.txt): on = the SSE4.2 copy if it was built and the CPU has
 * SSE4.2, else (or off) the baseline copy. Returns true when the SSE4.2
 * copy is the one in use. The first wr_http__parse_init calls it with
 * true unless it was called before; the unit suite runs its tests with
 * each. */
bool wr_http__parse_simd(bool on);
/* Parses what is buffered: returns 1 when cur's message is complete (the
 * request is ready), 0 when more bytes are needed, -1 on an error (its
 * status, code and message in c->err_*). */
int wr_http__parse(wr_http_conn_t *c);

/* http_conn.c */
wr_http_req_t *wr_http__req_get(wr_http_conn_t *c);
bool wr_http__arena_add(wr_http_arena_t *a, const void *p, size_t n);
extern uint64_t wr_http__allocs; /* wr_http_conn_allocs */

#endif
