/*
 * store_redis_draw.c - the opening draw of the Redis store's public log
 * (store.h log_beacon and the beacon part of log_unsigned; docs/API.md
 * 1.3, "The opening draw, fixed in public"). Part of the store_redis
 * module; the model is lib.lua's "The opening draw", the steps are
 * scripts/draw.lua's, docs/DESIGN.md "The opening draw on Redis" says why.
 *
 * A script has no SHA-256 and must not draw randomness, so the draw has
 * two halves:
 *   - The commit: every call that holds a join of a queue whose opening
 *     may need one carries a fresh seed and its SHA-256
 *     (wr_store_redis__commit_seed, sent by store_redis_batch.c); the first
 *     pre-queue join writes the commit leaf with it and keeps the seed in
 *     wr:{q}:log (dseed) until the draw leaf reveals it (lib_log.lua). A
 *     join without one where one is needed is refused (WRLOGID).
 *   - The draw, a job of this instance once the opening waits for it and
 *     may run (admit.lua's DRAW, or the signer's round): BEGIN (takes the
 *     draw's lease; the seed and the beacon's answer; with a beacon that
 *     never answered, its error first, so that no answer can come after
 *     the draw value is fixed), READ (the pre-queue keyed below the late
 *     band with each person's log entry, READ_CHUNK a call, by key), the
 *     ranks SHA-256(D || u) sorted here (every rank compared whole), APPLY
 *     (the drawn keys, APPLY_CHUNK a call), FINISH (the draw leaf, the
 *     opening begun, in one script; refused while anyone is left undrawn:
 *     read again, at most ATTEMPTS times). Each call is bounded (about a
 *     millisecond of Redis for a chunk), whatever the pre-queue's size.
 * The drawn key of the person of the i-th rank is DRAW_BASE + max(their
 * rank's first 52 bits, the previous key + 1): exact in a Redis score,
 * increasing in rank order, and a function of the ranks alone, so a draw
 * taken over after a crash (the lease expired) reads the part already
 * keyed with the rest and writes the same keys.
 */
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/crypto.h"
#include "base/hex.h"
#include "base/ids.h"
#include "base/log.h"
#include "core/logleaf.h"
#include "store/redis/script_rows.h"
#include "store/redis/store_redis_log_internal.h"

#define READ_CHUNK  500                   /* people a READ answers */
#define APPLY_CHUNK 250                   /* people an APPLY keys (two arguments each) */
#define ATTEMPTS    3                     /* reads of a draw whose FINISH found someone undrawn */
#define DRAW_BASE   (-(INT64_C(1) << 53)) /* lib.lua's */
#define DRAWS_MAX   (sizeof((struct rstore *)0)->drawing / sizeof((struct rstore *)0)->drawing[0])

typedef struct {
    char *user;
    bool has_u; /* a log id was read: ranked */
    uint8_t rank[32];
    int64_t key; /* the drawn key (has_u) */
} member_t;

struct draw {
    uint8_t d[32];             /* the draw value */
    char tail[WR_LOGLEAF_MAX]; /* the draw leaf after its n */
    size_t tail_len;
    bool closed; /* the beacon that never answered has its error */
    member_t *m; /* the pre-queue read */
    size_t n, cap, applied;
    char cursor[32]; /* READ's CURSOR: "-inf", then "(<last key>" */
    int attempts;
};

typedef void (*step_fn)(ljob_t *j, wr_err_t err, const redisReply *rep);

/* ------------------------------------------------------------ plumbing */

static void members_free(struct draw *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->m[i].user);
    free(d->m);
    d->m = NULL;
    d->n = d->cap = d->applied = 0;
}

void wr_store_redis__draw_free(ljob_t *j)
{
    if (j->draw) {
        members_free(j->draw);
        wr_crypto_wipe(j->draw, sizeof *j->draw);
        free(j->draw);
    }
    free(j->bq);
    free(j->burl);
    free(j->bround);
    free(j->bq_ptrs);
    free(j->burl_ptrs);
}

/* A draw.lua call of mode (an M_DRAW value) on j's queue, with room for
 * nargs more arguments and extra bytes, answered to next; NULL when out
 * of memory. */
static struct req *draw_cmd(ljob_t *j, int mode, int nargs, size_t extra, step_fn next)
{
    struct req *r = wr_store_redis__lj_cmd(j, SC_DRAW, 3 + 1 + NKEYS + 2 + nargs, extra, next);
    char m[2] = {(char)('0' + mode), '\0'};
    if (r && !(wr_store_redis__queue_keys(r->cmd, j->queue, NKEYS) &&
               wr_redis_conn_cmd_str(r->cmd, m) && wr_redis_conn_cmd_str(r->cmd, j->s->instance))) {
        wr_store_redis__req_free(r);
        return NULL;
    }
    return r;
}

static bool is_str(const redisReply *e)
{
    return e && e->type == REDIS_REPLY_STRING;
}

/* The integer element i of rep (an array), or def. */
static long long int_at(const redisReply *rep, size_t i, long long def)
{
    if (!rep || rep->type != REDIS_REPLY_ARRAY || i >= rep->elements ||
        rep->element[i]->type != REDIS_REPLY_INTEGER)
        return def;
    return rep->element[i]->integer;
}

/* A decimal string of at most 20 digits (a leading '-' allowed when neg). */
static bool str_int(const redisReply *e, bool neg, int64_t *out)
{
    if (!is_str(e) || e->len == 0 || e->len > 21)
        return false;
    char buf[24], *end;
    memcpy(buf, e->str, e->len);
    buf[e->len] = '\0';
    if (!neg && buf[0] == '-')
        return false;
    long long v = strtoll(buf, &end, 10);
    *out = v;
    return *end == '\0';
}

/* ------------------------------------------------------------ the commit */

bool wr_store_redis__commit_seed(const wr_cfgcache_snap_t *snap, char seed[65], char hash[65])
{
    seed[0] = hash[0] = '\0';
    if (snap && !(snap->cfg.public_log && snap->cfg.pre_queue_shuffle &&
                  snap->cfg.opens_at_ms != WR_OPENS_AT_NONE))
        return true;
    uint8_t s[WR_LOGLEAF_SEED], h[32];
    wr_crypto_sha256_t *sha = wr_crypto_sha256_new();
    bool ok = sha && wr_crypto_random(s, sizeof s) == WR_OK &&
              wr_crypto_sha256_digest(sha, s, sizeof s, h) == WR_OK;
    wr_crypto_sha256_free(sha);
    if (ok) {
        wr_hex_encode(s, sizeof s, seed);
        wr_hex_encode(h, sizeof h, hash);
    }
    wr_crypto_wipe(s, sizeof s);
    return ok;
}

/* ------------------------------------------------------------ log_beacon */

static void beacon_done(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK && rep->type != REDIS_REPLY_INTEGER)
        err = WR_EPROTO;
    wr_store_redis__lj_end(j, err != WR_OK ? err : rep->integer == 1 ? WR_OK : WR_ENOTFOUND);
}

/* draw.lua BEACON with j's round, randomness (hex) or error. */
static struct req *beacon_cmd(ljob_t *j, step_fn next)
{
    struct req *r =
        draw_cmd(j, WR_ROW_VALUE(M_DRAW, BEACON), 3, sizeof j->b_rand + sizeof j->b_err, next);
    if (r &&
        !(wr_redis_conn_cmd_fmt(r->cmd, "%" PRIu64, j->b_round) &&
          wr_redis_conn_cmd_str(r->cmd, j->b_rand) && wr_redis_conn_cmd_str(r->cmd, j->b_err))) {
        wr_store_redis__req_free(r);
        return NULL;
    }
    return r;
}

wr_err_t wr_store_redis__log_beacon(wr_store_t *st, const char *queue, uint64_t round,
                                    const uint8_t *randomness, size_t len, const char *error,
                                    wr_store_log_cb cb, void *arg)
{
    struct rstore *s = (struct rstore *)st;
    if (!wr_ids_valid_queue(queue) || !cb ||
        !(randomness ? len >= 1 && len <= WR_LOGLEAF_RANDOM_MAX : error != NULL))
        return WR_EINVAL;
    if (!wr_redis_router_connected(s->conn))
        return WR_EUNAVAILABLE;
    ljob_t *j = wr_store_redis__lj_new(s, J_BEACON, queue, cb, arg);
    if (!j)
        return WR_ENOMEM;
    j->b_round = round;
    if (randomness)
        wr_hex_encode(randomness, len, j->b_rand);
    else /* (a text, written into the draw leaf by wr_logleaf_encode: escaped there) */
        snprintf(j->b_err, sizeof j->b_err, "%s", error[0] ? error : "no answer");
    return wr_store_redis__lj_start(j, beacon_cmd(j, beacon_done), true);
}

/* ------------------------------------------------------------ the signer's round */

/* Appends (j->queue, url, round) to j's beacon list and points the answer
 * at it. */
static bool beacon_add(ljob_t *j, const redisReply *url, uint64_t round)
{
    if (url->len == 0 || url->len > WR_LOGLEAF_URL_MAX)
        return false;
    if (j->n_b == j->cap_b) {
        size_t cap = j->cap_b ? 2 * j->cap_b : 4;
        void *a = realloc(j->bq, cap * sizeof *j->bq), *b = NULL, *c = NULL, *d = NULL, *e = NULL;
        if (a)
            j->bq = a;
        if (a && (b = realloc(j->burl, cap * sizeof *j->burl)))
            j->burl = b;
        if (b && (c = realloc(j->bround, cap * sizeof *j->bround)))
            j->bround = c;
        if (c && (d = realloc(j->bq_ptrs, cap * sizeof *j->bq_ptrs)))
            j->bq_ptrs = d;
        if (d && (e = realloc(j->burl_ptrs, cap * sizeof *j->burl_ptrs)))
            j->burl_ptrs = e;
        if (!e)
            return false;
        j->cap_b = cap;
    }
    snprintf(j->bq[j->n_b], sizeof j->bq[0], "%s", j->queue);
    memcpy(j->burl[j->n_b], url->str, url->len);
    j->burl[j->n_b][url->len] = '\0';
    j->bround[j->n_b++] = round;
    for (size_t i = 0; i < j->n_b; i++) { /* (the arrays may have moved) */
        j->bq_ptrs[i] = j->bq[i];
        j->burl_ptrs[i] = j->burl[i];
    }
    j->ans.beacon_queues = j->bq_ptrs;
    j->ans.beacon_urls = j->burl_ptrs;
    j->ans.beacon_rounds = j->bround;
    j->ans.n_beacons = j->n_b;
    return true;
}

/* STATE's answer {phase, beacon, round}: 1 waits for its beacon, 2 due. */
static void state_done(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    long long phase = err == WR_OK ? int_at(rep, 0, 0) : 0;
    int64_t round = 0;
    if (phase == 1 && rep->elements == 3 && is_str(rep->element[1]) &&
        str_int(rep->element[2], false, &round) && !beacon_add(j, rep->element[1], (uint64_t)round))
        wr_warn("store_redis: public log of %s: the beacon to fetch is not kept (no memory, or "
                "its URL is too long)",
                j->queue);
    if (phase == 2)
        wr_store_redis__draw_due(j->s, j->queue);
    wr_store_redis__lj_next_log(j);
}

void wr_store_redis__draw_state(ljob_t *j)
{
    wr_store_redis__lj_send(j, draw_cmd(j, WR_ROW_VALUE(M_DRAW, STATE), 0, 0, state_done), true);
}

/* ------------------------------------------------------------ the draw */

static void begun(ljob_t *j, wr_err_t err, const redisReply *rep);
static void read_more(ljob_t *j);

/* The draw job of j ends (err: why; WR_OK drawn or nothing to do). */
static void draw_end(ljob_t *j, wr_err_t err)
{
    struct rstore *s = j->s;
    for (size_t i = 0; i < s->n_drawing; i++)
        if (strcmp(s->drawing[i], j->queue) == 0) {
            memmove(s->drawing[i], s->drawing[i + 1],
                    (s->n_drawing - i - 1) * sizeof s->drawing[0]);
            s->n_drawing--;
            break;
        }
    if (err != WR_OK && err != WR_ECANCELED)
        wr_warn("store_redis: public log of %s: the opening draw stopped (%s): it starts again "
                "at the next tick",
                j->queue, wr_strerror(err));
    wr_store_redis__lj_end(j, err);
}

static void send_step(ljob_t *j, struct req *r)
{
    wr_err_t err = r ? wr_store_redis__submit(j->s, r, true) : WR_ENOMEM;
    if (err != WR_OK)
        draw_end(j, err);
}

void wr_store_redis__draw_due(struct rstore *s, const char *queue)
{
    if (s->closing || s->n_drawing >= DRAWS_MAX || !wr_ids_valid_queue(queue))
        return;
    for (size_t i = 0; i < s->n_drawing; i++)
        if (strcmp(s->drawing[i], queue) == 0)
            return; /* running */
    ljob_t *j = wr_store_redis__lj_new(s, J_DRAW, queue, NULL, NULL);
    if (!j || !(j->draw = calloc(1, sizeof *j->draw))) {
        wr_store_redis__lj_free(j);
        return;
    }
    snprintf(s->drawing[s->n_drawing++], sizeof s->drawing[0], "%s", queue);
    send_step(j, draw_cmd(j, WR_ROW_VALUE(M_DRAW, BEGIN), 0, 0, begun));
}

/* The draw leaf after its n (the leaf encoded with at 0 and n 0, cut
 * after that prefix and before its closing brace) into d->tail. */
static wr_err_t leaf_tail(struct draw *d, const wr_logleaf_t *l)
{
    static const char prefix[] = "{\"e\":\"draw\",\"at\":0,\"n\":0";
    char out[WR_LOGLEAF_MAX];
    size_t len = 0;
    wr_err_t err = wr_logleaf_encode(l, out, sizeof out, &len);
    if (err != WR_OK)
        return err;
    if (len < sizeof prefix || memcmp(out, prefix, sizeof prefix - 1) != 0 || out[len - 1] != '}')
        return WR_EPROTO;
    d->tail_len = len - (sizeof prefix - 1) - 1;
    memcpy(d->tail, out + sizeof prefix - 1, d->tail_len);
    d->tail[d->tail_len] = '\0';
    return WR_OK;
}

/* The late beacon's error is kept (or an answer came just before it):
 * BEGIN again. */
static void beacon_closed(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    (void)rep;
    if (err != WR_OK) {
        draw_end(j, err);
        return;
    }
    send_step(j, draw_cmd(j, WR_ROW_VALUE(M_DRAW, BEGIN), 0, 0, begun));
}

/* BEGIN's answer {1, seed, beacon, round, randomness, error}: the draw
 * value and the draw leaf's tail; a beacon that never answered gets its
 * error first (BEACON), then BEGIN again. */
static void begun(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    struct draw *d = j->draw;
    if (err != WR_OK || int_at(rep, 0, 0) != 1) {
        draw_end(j, err); /* (0: not due, drawn, or another instance draws) */
        return;
    }
    redisReply *const *e = rep->element;
    wr_logleaf_t l = {.e = WR_LOGLEAF_DRAW};
    int64_t round = 0;
    bool ok = rep->elements == 6 && is_str(e[1]) && is_str(e[2]) && is_str(e[4]) && is_str(e[5]) &&
              e[1]->len == 2 * WR_LOGLEAF_SEED &&
              wr_hex_decode(e[1]->str, e[1]->len, l.seed, WR_LOGLEAF_SEED) &&
              e[2]->len <= WR_LOGLEAF_URL_MAX && e[4]->len % 2 == 0 &&
              e[4]->len <= 2 * WR_LOGLEAF_RANDOM_MAX &&
              wr_hex_decode(e[4]->str, e[4]->len, l.randomness, e[4]->len / 2);
    l.beacon = ok && e[2]->len > 0;
    if (l.beacon && !(ok = str_int(e[3], false, &round)))
        l.beacon = false;
    if (!ok) {
        draw_end(j, WR_EPROTO);
        return;
    }
    l.round = (uint64_t)round;
    l.randomness_len = e[4]->len / 2;
    if (l.beacon) {
        memcpy(l.beacon_url, e[2]->str, e[2]->len);
        if (l.randomness_len == 0 && e[5]->len == 0) {
            /* never answered within the wait: its error, kept before the
             * draw value is fixed, so that no answer can come after it */
            if (d->closed) {
                draw_end(j, WR_EPROTO);
                return;
            }
            d->closed = true;
            j->b_round = l.round;
            j->b_rand[0] = '\0';
            snprintf(j->b_err, sizeof j->b_err, WR_LOGLEAF_BEACON_LATE,
                     (unsigned long long)l.round);
            send_step(j, beacon_cmd(j, beacon_closed));
            return;
        }
        snprintf(l.beacon_error, sizeof l.beacon_error, "%.*s", (int)e[5]->len, e[5]->str);
    }
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    err = h ? wr_logleaf_draw_value(h, l.seed, l.randomness, l.randomness_len, d->d) : WR_ENOMEM;
    wr_crypto_sha256_free(h);
    if (err == WR_OK)
        err = leaf_tail(d, &l);
    wr_crypto_wipe(l.seed, sizeof l.seed);
    if (err != WR_OK) {
        draw_end(j, err);
        return;
    }
    snprintf(d->cursor, sizeof d->cursor, "-inf");
    read_more(j);
}

/* READ's answer {1, user, key, log entry, ...}: the people read so far,
 * the next READ, or (a short chunk: the last) the ranks and APPLY. */
static void read_done(ljob_t *j, wr_err_t err, const redisReply *rep);
static void apply_next(ljob_t *j);

static void read_more(ljob_t *j)
{
    struct draw *d = j->draw;
    struct req *r = draw_cmd(j, WR_ROW_VALUE(M_DRAW, READ), 2, 64, read_done);
    if (r && !(wr_redis_conn_cmd_str(r->cmd, d->cursor) &&
               wr_redis_conn_cmd_fmt(r->cmd, "%d", READ_CHUNK))) {
        wr_store_redis__req_free(r);
        r = NULL;
    }
    send_step(j, r);
}

/* A log entry of logm ('i' or 'q', "<s>:<digits>:<32 hex>"): its log id's
 * bytes; false for any other (no rank: not drawn). */
static bool entry_u(const redisReply *e, uint8_t u[WR_LOGLEAF_U_BYTES])
{
    if (!is_str(e) || e->len < 3 + WR_LOGLEAF_U_HEX || (e->str[0] != 'i' && e->str[0] != 'q') ||
        e->str[1] != ':' || e->str[e->len - WR_LOGLEAF_U_HEX - 1] != ':')
        return false;
    char hex[WR_LOGLEAF_U_HEX + 1];
    memcpy(hex, e->str + e->len - WR_LOGLEAF_U_HEX, WR_LOGLEAF_U_HEX);
    hex[WR_LOGLEAF_U_HEX] = '\0';
    return wr_logleaf_u_bytes(hex, u) == WR_OK;
}

/* Ranked people first, by rank (every byte), then the others. */
static int by_rank(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    if (x->has_u != y->has_u)
        return x->has_u ? -1 : 1;
    return x->has_u ? memcmp(x->rank, y->rank, sizeof x->rank) : 0;
}

/* Everyone read: sorted by rank, and their drawn keys (the top of the file). */
static void keys_of(struct draw *d)
{
    qsort(d->m, d->n, sizeof *d->m, by_rank);
    int64_t prev = -1;
    for (size_t i = 0; i < d->n && d->m[i].has_u; i++) {
        uint64_t top = 0;
        for (int b = 0; b < 8; b++)
            top = top << 8 | d->m[i].rank[b];
        int64_t k = (int64_t)(top >> 12);
        if (k <= prev)
            k = prev + 1;
        prev = k;
        d->m[i].key = DRAW_BASE + k;
    }
}

static void read_done(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    struct draw *d = j->draw;
    if (err == WR_OK && int_at(rep, 0, 0) != 1)
        err = WR_ECANCELED; /* drawn by another, or its lease: nothing more to do */
    if (err == WR_OK && (rep->elements - 1) % 3 != 0)
        err = WR_EPROTO;
    size_t got = err == WR_OK ? (rep->elements - 1) / 3 : 0;
    wr_crypto_sha256_t *h = got ? wr_crypto_sha256_new() : NULL;
    if (got && !h)
        err = WR_ENOMEM;
    if (err == WR_OK && d->n + got > d->cap) {
        size_t cap = d->cap ? d->cap : READ_CHUNK;
        while (cap < d->n + got)
            cap *= 2;
        member_t *m = realloc(d->m, cap * sizeof *m);
        if (m) {
            d->m = m;
            d->cap = cap;
        } else {
            err = WR_ENOMEM;
        }
    }
    int64_t key = 0;
    for (size_t i = 0; err == WR_OK && i < got; i++) {
        redisReply *const *e = rep->element + 1 + 3 * i;
        uint8_t u[WR_LOGLEAF_U_BYTES];
        if (!is_str(e[0]) || e[0]->len > WR_USER_ID_MAX || !str_int(e[1], true, &key)) {
            err = WR_EPROTO;
            break;
        }
        member_t *m = &d->m[d->n];
        *m = (member_t){.user = strndup(e[0]->str, e[0]->len), .has_u = entry_u(e[2], u)};
        if (!m->user) {
            err = WR_ENOMEM;
            break;
        }
        d->n++;
        if (m->has_u && (err = wr_logleaf_draw_rank(h, d->d, u, m->rank)) != WR_OK)
            break;
    }
    wr_crypto_sha256_free(h);
    if (err != WR_OK) {
        draw_end(j, err == WR_ECANCELED ? WR_OK : err);
        return;
    }
    if (got == READ_CHUNK) {
        snprintf(d->cursor, sizeof d->cursor, "(%" PRId64, key);
        read_more(j);
        return;
    }
    keys_of(d);
    apply_next(j);
}

/* ------------------------------------------------------------ apply, finish */

static void applied(ljob_t *j, wr_err_t err, const redisReply *rep);
static void finished(ljob_t *j, wr_err_t err, const redisReply *rep);

/* The next APPLY_CHUNK people keyed, or FINISH after the last. */
static void apply_next(ljob_t *j)
{
    struct draw *d = j->draw;
    if (d->applied == d->n) {
        struct req *r = draw_cmd(j, WR_ROW_VALUE(M_DRAW, FINISH), 1, d->tail_len + 16, finished);
        if (r && !wr_redis_conn_cmd_arg(r->cmd, d->tail, d->tail_len)) {
            wr_store_redis__req_free(r);
            r = NULL;
        }
        send_step(j, r);
        return;
    }
    size_t k = d->n - d->applied < APPLY_CHUNK ? d->n - d->applied : APPLY_CHUNK;
    size_t bytes = 0;
    for (size_t i = 0; i < k; i++)
        bytes += strlen(d->m[d->applied + i].user) + 24;
    struct req *r = draw_cmd(j, WR_ROW_VALUE(M_DRAW, APPLY), 2 * (int)k, bytes, applied);
    for (size_t i = 0; r && i < k; i++) {
        const member_t *m = &d->m[d->applied + i];
        if (!(wr_redis_conn_cmd_str(r->cmd, m->user) &&
              (m->has_u ? wr_redis_conn_cmd_fmt(r->cmd, "%" PRId64, m->key)
                        : wr_redis_conn_cmd_str(r->cmd, "")))) {
            wr_store_redis__req_free(r);
            r = NULL;
        }
    }
    d->applied += k;
    send_step(j, r);
}

static void applied(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    if (err == WR_OK && int_at(rep, 0, 0) != 1)
        err = WR_ECANCELED; /* as read_done */
    if (err != WR_OK) {
        draw_end(j, err == WR_ECANCELED ? WR_OK : err);
        return;
    }
    apply_next(j);
}

/* FINISH's answer: {1, n} drawn; {0, left} someone was left undrawn (a
 * join the clock let in): read again; {0, -1} as read_done. */
static void finished(ljob_t *j, wr_err_t err, const redisReply *rep)
{
    struct draw *d = j->draw;
    long long ok = err == WR_OK ? int_at(rep, 0, -1) : -1, n = int_at(rep, 1, -1);
    if (err == WR_OK && ok == 1) {
        wr_info("store_redis: public log of %s: the opening is drawn (%lld people)", j->queue, n);
        draw_end(j, WR_OK);
        return;
    }
    if (err == WR_OK && ok == 0 && n > 0 && ++d->attempts < ATTEMPTS) {
        members_free(d);
        snprintf(d->cursor, sizeof d->cursor, "-inf");
        read_more(j);
        return;
    }
    draw_end(j, err != WR_OK ? err : ok == 0 && n < 0 ? WR_OK : WR_EPROTO);
}
