/*
 * fake_redis.h - a scripted stand-in for redis-server on a unix socket, for
 * testing how store_redis handles replies Redis would never send.
 *
 * A thread accepts connections and parses commands with hiredis's reader.
 * PING answers +PONG, SELECT +OK, SADD/SREM :1, ROLE master, CONFIG GET an
 * empty array, SCRIPT +OK (the connect checks); every other command (the
 * script calls) answers the raw RESP bytes set with fake_redis_reply().
 */
#ifndef WR_TEST_FAKE_REDIS_H
#define WR_TEST_FAKE_REDIS_H

#include <stddef.h>

typedef struct fake_redis fake_redis_t;

/* Listens on path (created, removed by stop). NULL on failure. */
fake_redis_t *fake_redis_start(const char *path);

/* Sets the raw reply (RESP bytes, copied) for the following script calls. */
void fake_redis_reply(fake_redis_t *f, const char *raw, size_t len);

/* Number of commands named cmd (upper case, e.g. "EVAL") received so far. */
int fake_redis_count(fake_redis_t *f, const char *cmd);

/* Closes every connection at once (the store sees a disconnect). */
void fake_redis_drop(fake_redis_t *f);

/* Stops the thread, closes the sockets, removes path, frees f. */
void fake_redis_stop(fake_redis_t *f);

#endif
