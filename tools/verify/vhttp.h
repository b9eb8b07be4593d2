/*
 * vhttp.h - waitroom-verify's HTTP client: blocking GETs against one
 * server (http:// or https://, a path prefix allowed), one connection per
 * request, over libevent's evhttp (and bufferevent_openssl for https, the
 * certificate checked against the system's CAs and the host name).
 * Bounded: a deadline per request (connect to the last byte: a server that
 * trickles its answer a byte at a time cannot hold one past it), a cap on
 * the headers and the body.
 */
#ifndef WR_VHTTP_H
#define WR_VHTTP_H

#include <stddef.h>

typedef struct vhttp vhttp_t;

#define VHTTP_TIMEOUT_S 120 /* the default deadline of one GET, seconds */

/* A client of the server at url ("http[s]://host[:port][/prefix]") whose
 * GETs each end within timeout_s seconds (>= 1), or NULL with the reason
 * in err (errlen bytes). */
vhttp_t *vhttp_open(const char *url, int timeout_s, char *err, size_t errlen);

/* GETs prefix + path (path starts with '/', query included). On 0: *status
 * is the HTTP status, *body a malloc'd NUL-terminated copy of the body
 * (*len bytes; the caller frees). -1: no answer (connect, TLS, no answer
 * whole within the deadline, a body over max_body bytes), the reason in err. */
int vhttp_get(vhttp_t *h, const char *path, size_t max_body, int *status, char **body, size_t *len,
              char *err, size_t errlen);

/* Frees h; NULL is a no-op. */
void vhttp_close(vhttp_t *h);

#endif
