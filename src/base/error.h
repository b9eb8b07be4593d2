/*
 * error.h - the one error enum of waitroom.
 *
 * Every function that can fail returns wr_err_t: WR_OK (0) or one of the
 * values below. Numbers never change; new values are only added at the end.
 */
#ifndef WR_ERROR_H
#define WR_ERROR_H

#include <stddef.h>

typedef enum {
    WR_OK = 0,
    WR_ENOMEM = 1,       /* allocation failed */
    WR_EINVAL = 2,       /* invalid argument or input */
    WR_ENOTFOUND = 3,    /* the queue does not exist */
    WR_EFULL = 4,        /* the line is full (waiting >= maxQueueSize) */
    WR_ETIMEOUT = 5,     /* the store did not answer within the command timeout */
    WR_EUNAVAILABLE = 6, /* the store is unreachable (disconnected, breaker open) */
    WR_ENOTINQUEUE = 7,  /* the user is neither waiting nor holding a live token */
    WR_ETOKEN = 8,       /* the token is not live (consumed, revoked, expired) */
    WR_EPROTO = 9,       /* the store answered something unexpected */
    WR_ECANCELED = 10,   /* the operation was cancelled (shutdown) */
    WR_EIO = 11,         /* an I/O error (file, socket) */
    WR_ELIMIT = 12,      /* a bounded buffer or table is full */
    WR_EAUTH = 13,       /* the store refused our credentials (AUTH), or wants some */
    WR_EREPLICA = 14,    /* durability mode: the write is on the primary, but no replica
                            acknowledged it in time (the store is reachable) */
    WR_ESHARD = 15,      /* a sharded store (Redis Cluster): the part that holds this queue
                            is unreachable, the others answer; handled as WR_EUNAVAILABLE
                            for the queue, not as a store outage (the breaker ignores it) */
    WR_ECODE = 16,       /* a presale code is not valid for this queue (unknown, used up,
                            revoked, expired: the entry's code_reason says which), or
                            (codes revoke) no such code */
    WR_EGROUP = 17,      /* config_put: it removes a priority group that still has people
                            (line, held, admitted) or live codes */
    WR_EDATA = 18,       /* a key of this queue in the store holds the wrong type (Redis
                            WRONGTYPE: written by something else): the queue's data is bad,
                            not the store; answered as WR_EPROTO, but the breaker ignores
                            it (one queue's keys must not close the store to every queue) */
} wr_err_t;

/* Returns a static, human-readable string for err; never NULL. */
const char *wr_strerror(wr_err_t err);

/* Returns a static symbolic name ("WR_ENOTFOUND"); never NULL. */
const char *wr_errname(wr_err_t err);

/*
 * The answer to invalid input, with the reason: writes the printf-style
 * message to msg (len bytes including the NUL, cut to fit; nothing when
 * msg is NULL or len is 0) and returns WR_EINVAL.
 */
wr_err_t wr_einval(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Where a parser of fields (a queue's config, its captcha object) reports
 * the bad one: the caller's buffers, borrowed. field gets the field's path
 * ("capacity.safety"), msg the reason; either may be NULL or 0 long.
 */
typedef struct wr_field_err {
    char *field;
    size_t field_len; /* bytes including the NUL */
    char *msg;
    size_t msg_len; /* bytes including the NUL */
} wr_field_err_t;

/*
 * The answer to an invalid field: writes path to e->field and the
 * printf-style message to e->msg (each cut to fit, nothing where the
 * buffer is NULL or 0 long) and returns WR_EINVAL.
 */
wr_err_t wr_field_einval(wr_field_err_t *e, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
