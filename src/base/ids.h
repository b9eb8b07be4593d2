/*
 * ids.h - the names and ids of waitroom: their limits and their syntax, in
 * one place. Every module that bounds, stores or checks a queue name, a
 * user id, a jti or a key id uses these macros and validators; none keeps
 * its own copy of a rule.
 *
 *   queue name  [A-Za-z0-9_-]{1,64}         URL segment, Redis hash tag, JWT aud
 *   user id     [A-Za-z0-9._~:@+-]{1,128}   header identity, visitor id, JWT sub
 *   jti         base64url, 1..22 chars      22 = 16 random bytes (JWT jti)
 *   key id      base64url, 1..8 chars       JOSE header kid (token.h)
 *   host name   [A-Za-z0-9._-]{1,255}       --listen, redis:// (a name or IPv4)
 *
 * Pure: no allocation, no state, no dependency but libc.
 */
#ifndef WR_IDS_H
#define WR_IDS_H

#include <stdbool.h>
#include <stddef.h>

#define WR_QUEUE_NAME_MAX 64  /* bytes of a queue name, without NUL */
#define WR_USER_ID_MAX    128 /* bytes of a user id, without NUL */
#define WR_JTI_LEN        22  /* a jti we issue: base64url of 16 random bytes */
#define WR_KID_LEN        8   /* a key id: 8 base64url chars */
#define WR_HOST_NAME_MAX  255 /* bytes of a host name in an address or URL */
#define WR_LABEL_MAX      32  /* bytes of a label: a priority group's or bypass rule's name */

#define WR_IDS_STR_(x) #x
#define WR_IDS_STR(x)  WR_IDS_STR_(x)
/* The rules as text, for error messages ("queue names match ..."). */
#define WR_QUEUE_NAME_RULE "[A-Za-z0-9_-]{1," WR_IDS_STR(WR_QUEUE_NAME_MAX) "}"
#define WR_USER_ID_RULE    "[A-Za-z0-9._~:@+-]{1," WR_IDS_STR(WR_USER_ID_MAX) "}"
#define WR_LABEL_RULE      "[a-z0-9-]{1," WR_IDS_STR(WR_LABEL_MAX) "}"

/* True if name (NUL-terminated) is a queue name; NULL is false. */
bool wr_ids_valid_queue(const char *name);

/* True if the n bytes at s (need not be NUL-terminated) are a queue name. */
bool wr_ids_valid_queue_n(const char *s, size_t n);

/* True if id (NUL-terminated) is a user id; NULL is false. */
bool wr_ids_valid_user(const char *id);

/* True if the n bytes at s are a user id. */
bool wr_ids_valid_user_n(const char *s, size_t n);

/* True if jti (NUL-terminated) is a jti: 1..WR_JTI_LEN base64url chars;
 * NULL is false. */
bool wr_ids_valid_jti(const char *jti);

/* True if the n bytes at s are a jti: 1..WR_JTI_LEN base64url chars. */
bool wr_ids_valid_jti_n(const char *s, size_t n);

/* True if the n bytes at s are a key id: 1..WR_KID_LEN base64url chars. */
bool wr_ids_valid_kid_n(const char *s, size_t n);

/* True if the n bytes at s are 1..max ASCII letters and digits
 * ([A-Za-z0-9]: a challenge nonce, a store epoch); NULL is false. */
bool wr_ids_valid_alnum_n(const char *s, size_t n, size_t max);

/* True if the n bytes at s are a label: a name the operator gives a
 * priority group or a bypass rule, also a metric label value
 * (WR_LABEL_RULE). */
bool wr_ids_valid_label_n(const char *s, size_t n);

/* True if c is an RFC 9110 tchar: a byte of a method or a field name
 * (A-Z a-z 0-9 and !#$%&'*+-.^_`|~). */
bool wr_ids_token_char(char c);

/* True if the n bytes at s are an RFC 9110 token of 1..max bytes (an HTTP
 * field name). */
bool wr_ids_valid_token_n(const char *s, size_t n, size_t max);

/* True if c may appear in a host name (below). */
bool wr_ids_host_char(char c);

/* True if the n bytes at s are a host name or IPv4 address as the
 * addresses and URLs of the config take it: 1..WR_HOST_NAME_MAX chars of
 * [A-Za-z0-9._-] (IPv6 literals are written in brackets, checked apart). */
bool wr_ids_valid_host_n(const char *s, size_t n);

#endif
