/*
 * mem_snapshot.c - the embedded store's snapshot file: format, writer and
 * reader of a wr_memq_db_t (memq.h), and the data directory lock.
 *
 * Format, version 12 (version 1, without the sessions and the burned
 * passes, version 2, without the idle part, version 3, without the
 * pre-queue, version 4, without the held people, version 5, without
 * the stock - their configs have no stock -, version 6, without the
 * unseen passes - their passes load as seen -, version 7, without the
 * public logs, version 8, without the bypass counts, version 9,
 * without the push subscriptions, version 10, without an unseen
 * pass's join leaf, and version 11, without the priority groups - their
 * groups load empty -, still load).
 * All integers little-endian.
 *   "WRMEMSNP" u32 version  u64 written_at_us (the store's clock)
 *   u32 secret_len, secret bytes
 *   u32 queue count, then per queue:
 *     u8 name_len, name
 *     u32 config_len, config JSON (wr_qconfig_to_json, compact)
 *     u64 version  i64 last_score  i64 last_tick  i64 carry_micro
 *     u64 admitted consumed expired left rejected_full
 *     (version 4, sale opening) u8 opening (1: in progress), i64 open_base,
 *       u64 open_total, u64 open_moved
 *     u64 waiting count, per user in line order: i64 score, u8 id_len, id,
 *                 (version 3) u32 idle_cs (centiseconds since the user's
 *                 last join or poll, at written_at_us), u8 flags (1 = a
 *                 pending page join)
 *     u64 token count, per token: u8 id_len, id, 22 bytes jti, i64 iat_us, i64 exp_us
 *     (version 2) u64 released sessions_expired
 *     (version 2) u64 session count, per session: u8 id_len, id, 22 bytes jti,
 *                 i64 opened_us, i64 end_us
 *     (version 2, degraded mode) u64 burn count, per burned fail-open
 *       pass: u8 jti_len, jti, i64 exp_us
 *     (version 3) u64 abandoned
 *     (version 4, sale opening) u64 pre-queue count, per person in key
 *       order: i64 key, u8 id_len, id, u32 idle_cs, u8 flags (as in the
 *       line)
 *     (version 5, away, not gone) u64 returned, then the held people and
 *       the returned ones (held, back), each: u64 count, per person in
 *       key order: i64 age of the key in us at written_at_us (the hold or
 *       return time; negative after a clock step), u8 id_len, id, u32
 *       idle_cs
 *     (version 6, the end of a sale) i64 stock_left (what is left of the
 *       stock, -1: none), i64 sold_out_us (the moment it sold out, wall
 *       clock, -1: not sold out)
 *     (version 7, unseen passes) u64 unseen_expired, u64 count of the live
 *       tokens not yet seen (no answer carried them; memq.h), per token:
 *       u8 id_len, id (the user, whose token is in the tokens above),
 *       (version 11) u64 the index of the holder's join leaf in the public
 *       log (UINT64_MAX: none; an unseen expiry puts them back in the
 *       log's line with it)
 *     (version 9, bypass rules) u64 bypass (stats bypassTotal)
 *     (version 12, priority groups: mem_snapshot_groups.c) per group of
 *       the config, by name, its admissions, its line (as the line
 *       above) and its people held, returned or holding a pass; the
 *       standard line's carried share; the presale codes. Before the
 *       push part: a group member's subscription finds them in line.
 *     (version 10, Web Push: mem_snapshot_push.c) the subscriptions and
 *       the closing already pushed
 *   (version 8, the public log) u8 has_log_key, 32 bytes log key, u32 log
 *     count, per log its form in memlog.c (wr_memlog_write)
 *   32 bytes: SHA-256 of every byte before.
 * Times are wall-clock microseconds since the epoch. Last-seen times and
 * hold times are kept as ages, so that on load the time the store was down
 * does not count against the people in line or held (they could not poll
 * meanwhile). The away marks are not kept: the first sweep sets them.
 *
 * Writing. The file is written to DIR/.waitroom.snapshot.tmp, fsynced,
 * renamed over DIR/waitroom.snapshot and the directory fsynced, so a crash
 * at any point leaves either the old or the new snapshot, never a mix; on
 * any error the temp file is removed and the old snapshot stays. The
 * writer only reads the db: store_memory.c runs it in a forked child on a
 * copy-on-write image of the state, with a digest context made before the
 * fork.
 *
 * Reading. Every count and length is checked against its limit (and the
 * number of users against the file size, before it sizes an allocation),
 * the line must be in strictly increasing score order, no user may appear
 * twice, and the checksum and the exact end of the file are verified. The
 * first problem found is what the log line names; on any problem the db is
 * emptied, so a store never starts on half a snapshot.
 */
#include "store/memory/mem_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "store/memory/mem_sio.h"
#include "store/memory/mem_snapshot_groups.h"
#include "store/memory/mem_snapshot_log.h"
#include "store/memory/mem_snapshot_push.h"

#define SNAP_NAME  "waitroom.snapshot"
#define SNAP_MAGIC "WRMEMSNP"
/* What is written (sessions, burned passes, idle part, pre-queue, held,
 * stock, unseen passes, the public logs, bypass counts, push, unseen join
 * leaves, priority groups); 1..12 load. */
#define SNAP_VERSION 12u
#define PATH_MAX_LEN 4096
#define MICRO        1000000LL

/* n token records (a token or a session): u8 id_len, id, jti, iat, exp. */
static void write_tokens(wr_mem_sio_t *w, wr_memq_token_t *const *a, size_t n)
{
    wr_mem_sio_w_u64(w, n);
    for (size_t i = 0; i < n && !w->failed; i++) {
        const wr_memq_token_t *t = a[i];
        wr_mem_sio_w_u8(w, t->idlen);
        wr_mem_sio_w_bytes(w, t->id, t->idlen);
        wr_mem_sio_w_bytes(w, t->jti, WR_JTI_LEN);
        wr_mem_sio_w_u64(w, (uint64_t)t->iat_us);
        wr_mem_sio_w_u64(w, (uint64_t)t->exp_us);
    }
}

/* Version 2: the session counters and the open sessions. */
static void write_sessions(wr_mem_sio_t *w, const wr_memq_t *q)
{
    wr_mem_sio_w_u64(w, q->released_total);
    wr_mem_sio_w_u64(w, q->sessions_expired_total);
    write_tokens(w, q->sess_heap, q->sess_n);
}

static void write_burned(wr_mem_sio_t *w, const wr_memq_t *q);
static void read_burned(wr_mem_sio_t *r, wr_memq_t *q);

/* Version 7: the unseen-expiry counter and the users whose live token no
 * answer has carried yet (a pass loads as seen unless named here), each
 * with its holder's join leaf (version 11). */
static void write_unseen(wr_mem_sio_t *w, const wr_memq_t *q)
{
    uint64_t n = 0;
    for (size_t i = 0; i < q->heap_n; i++)
        n += !q->heap[i]->seen;
    wr_mem_sio_w_u64(w, q->unseen_expired_total);
    wr_mem_sio_w_u64(w, n);
    for (size_t i = 0; i < q->heap_n && !w->failed; i++) {
        const wr_memq_token_t *t = q->heap[i];
        if (t->seen)
            continue;
        wr_mem_sio_w_u8(w, t->idlen);
        wr_mem_sio_w_bytes(w, t->id, t->idlen);
        wr_mem_sio_w_u64(w, t->log_index);
    }
}

static void write_queue(wr_mem_sio_t *w, const wr_memq_t *q, int64_t now_us)
{
    size_t nlen = strlen(q->name);
    wr_mem_sio_w_u8(w, (uint8_t)nlen);
    wr_mem_sio_w_bytes(w, q->name, nlen);
    json_t *j = wr_qconfig_to_json(&q->cfg->cfg);
    char *js = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!js) {
        w->failed = true;
        w->what = "config rendering failed";
        return;
    }
    size_t jlen = strlen(js);
    wr_mem_sio_w_u32(w, (uint32_t)jlen);
    wr_mem_sio_w_bytes(w, js, jlen);
    free(js);
    wr_mem_sio_w_u64(w, q->version);
    wr_mem_sio_w_u64(w, (uint64_t)q->last_score);
    wr_mem_sio_w_u64(w, (uint64_t)q->budget.last_tick);
    wr_mem_sio_w_u64(w, (uint64_t)q->budget.carry_micro);
    wr_mem_sio_w_u64(w, q->admitted_total);
    wr_mem_sio_w_u64(w, q->consumed_total);
    wr_mem_sio_w_u64(w, q->expired_total);
    wr_mem_sio_w_u64(w, q->left_total);
    wr_mem_sio_w_u64(w, q->rejected_full_total);
    wr_mem_sio_w_u8(w, q->opening ? 1 : 0);
    wr_mem_sio_w_u64(w, (uint64_t)q->open_base);
    wr_mem_sio_w_u64(w, q->open_total);
    wr_mem_sio_w_u64(w, q->open_moved);
    wr_mem_sio_w_nodes(w, q->line, now_us, false);
    write_tokens(w, q->heap, q->heap_n);
    write_sessions(w, q);
    write_burned(w, q);
    wr_mem_sio_w_u64(w, q->abandoned_total);      /* version 3 */
    wr_mem_sio_w_nodes(w, q->pre, now_us, false); /* version 4 */
    wr_mem_sio_w_u64(w, q->returned_total);       /* version 5 */
    wr_mem_sio_w_nodes(w, q->held, now_us, true);
    wr_mem_sio_w_nodes(w, q->back, now_us, true);
    wr_mem_sio_w_u64(w, (uint64_t)q->stock_left); /* version 6 */
    wr_mem_sio_w_u64(w, (uint64_t)q->sold_out_us);
    write_unseen(w, q);                          /* version 7 */
    wr_mem_sio_w_u64(w, q->bypass_total);        /* version 9 */
    wr_mem_snapshot__groups_write(w, q, now_us); /* version 12 (before push: members first) */
    wr_mem_snapshot__push_write(w, q);           /* version 10 */
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

wr_crypto_sha256_t *wr_mem_snapshot_digest_new(void)
{
    return wr_crypto_sha256_new();
}

/* md comes from the caller so that a forked child never has to fetch an
 * algorithm (OpenSSL's global locks) - it only updates and finalises. */
wr_err_t wr_mem_snapshot_write_md(const wr_memq_db_t *db, const char *dir, int64_t written_at_us,
                                  wr_crypto_sha256_t *md)
{
    char path[PATH_MAX_LEN], tmp[PATH_MAX_LEN];
    wr_err_t err = WR_EIO;
    wr_mem_sio_t w = {0};
    bool tmp_made = false;
    int n1 = snprintf(path, sizeof path, "%s/%s", dir, SNAP_NAME);
    int n2 = snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, SNAP_NAME);
    if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof path || (size_t)n2 >= sizeof tmp) {
        wr_error("store memory: snapshot path too long in %s", dir);
        return WR_EINVAL;
    }
    w.md = md;
    w.buf = malloc(WR_MEM_SIO_BUF);
    if (!w.buf) {
        err = WR_ENOMEM;
        goto out;
    }
    /* 0600: the file holds the token secret and the queues' invite keys
     * (fchmod too: O_CREAT keeps the mode of a leftover tmp file) */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 && (fchmod(fd, 0600) != 0 || !(w.f = fdopen(fd, "wb")))) {
        int e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    if (fd < 0) {
        wr_error("store memory: cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    tmp_made = true;
    wr_mem_sio_w_bytes(&w, SNAP_MAGIC, 8);
    wr_mem_sio_w_u32(&w, SNAP_VERSION);
    wr_mem_sio_w_u64(&w, (uint64_t)written_at_us);
    wr_mem_sio_w_u32(&w, (uint32_t)db->secret_len);
    wr_mem_sio_w_bytes(&w, db->secret, db->secret_len);
    wr_mem_sio_w_u32(&w, (uint32_t)db->nq);
    for (size_t i = 0; i < db->nq && !w.failed; i++)
        write_queue(&w, db->queues[i], written_at_us);
    wr_mem_snapshot_write_logs(&w, db);
    wr_mem_sio_w_flush(&w);
    unsigned char digest[WR_CRYPTO_SHA256_LEN];
    if (!w.failed && wr_crypto_sha256_final(w.md, digest) != WR_OK) {
        w.failed = true;
        w.what = "digest failed";
    }
    if (!w.failed && fwrite(digest, 1, 32, w.f) != 32) {
        w.failed = true;
        w.what = "write failed";
    }
    if (!w.failed && (fflush(w.f) != 0 || fsync(fileno(w.f)) != 0)) {
        w.failed = true;
        w.what = "flush/fsync failed";
    }
    if (fclose(w.f) != 0 && !w.failed) {
        w.failed = true;
        w.what = "close failed";
    }
    w.f = NULL;
    if (w.failed) {
        wr_error("store memory: snapshot %s: %s (%s)", tmp, w.what, strerror(errno));
        goto out;
    }
    if (rename(tmp, path) != 0) {
        wr_error("store memory: rename %s -> %s: %s", tmp, path, strerror(errno));
        goto out;
    }
    tmp_made = false;
    if (fsync_dir(dir) != 0) {
        wr_error("store memory: fsync %s: %s", dir, strerror(errno));
        goto out;
    }
    err = WR_OK;
out:
    if (w.f)
        fclose(w.f);
    if (tmp_made)
        unlink(tmp);
    free(w.buf);
    return err;
}

wr_err_t wr_mem_snapshot_write(const wr_memq_db_t *db, const char *dir, int64_t written_at_us)
{
    wr_crypto_sha256_t *md = wr_mem_snapshot_digest_new();
    if (!md)
        return WR_ENOMEM;
    wr_err_t err = wr_mem_snapshot_write_md(db, dir, written_at_us, md);
    wr_crypto_sha256_free(md);
    return err;
}

/* Reads one token record (write_tokens) into a new wr_memq_token_t, or
 * NULL when r failed (the caller frees what it gets). */
static wr_memq_token_t *read_token(wr_mem_sio_t *r)
{
    char user[WR_ZSL_ID_MAX + 1];
    uint8_t len = wr_mem_sio_r_user(r, user);
    if (r->failed)
        return NULL;
    wr_memq_token_t *t = wr_memq_token_new(user, len);
    if (!t) {
        wr_mem_sio_fail(r, "out of memory");
        return NULL;
    }
    wr_mem_sio_r_bytes(r, t->jti, WR_JTI_LEN);
    t->jti[WR_JTI_LEN] = '\0';
    t->iat_us = (int64_t)wr_mem_sio_r_u64(r);
    t->exp_us = (int64_t)wr_mem_sio_r_u64(r);
    t->seen = true; /* unless version 7 names it unseen (read_unseen) */
    if (!r->failed && strlen(t->jti) != WR_JTI_LEN)
        wr_mem_sio_fail(r, "bad token");
    if (r->failed) {
        free(t);
        return NULL;
    }
    return t;
}

/* A u64 count, then that many tokens added to q: its open sessions
 * (sessions) or its live tokens; a duplicate fails r. */
static void read_tokens(wr_mem_sio_t *r, wr_memq_t *q, bool sessions)
{
    uint64_t n = wr_mem_sio_r_u64(r);
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        wr_memq_token_t *t = read_token(r);
        if (!t)
            break;
        bool dup = sessions
                       ? wr_memq_session(q, t->id, t->idlen) != NULL
                       : wr_memq_waiting(q, t->id, t->idlen) || wr_memq_token(q, t->id, t->idlen);
        if (dup)
            wr_mem_sio_fail(r, sessions ? "duplicate session" : "duplicate user or bad token");
        else if ((sessions ? wr_memq_session_add(q, t) : wr_memq_token_add(q, t)) != WR_OK)
            wr_mem_sio_fail(r, "out of memory");
        if (r->failed) {
            free(t);
            break;
        }
    }
}

/* Version 2: the session counters and the open sessions of q. */
static void read_sessions(wr_memq_t *q, wr_mem_sio_t *r)
{
    q->released_total = wr_mem_sio_r_u64(r);
    q->sessions_expired_total = wr_mem_sio_r_u64(r);
    read_tokens(r, q, true);
}

/* Version 4: the pre-queue of q, in key order (after the line, tokens
 * and the opening's state). */
static void read_prequeue(wr_mem_sio_t *r, wr_memq_t *q, int64_t now_us)
{
    uint64_t np = wr_mem_sio_r_count(r, "bad pre-queue count");
    int64_t prev = INT64_MIN;
    for (uint64_t i = 0; i < np && !r->failed; i++) {
        wr_mem_sio_node_t u;
        int64_t key = wr_mem_sio_r_node(r, &u, true, "bad last-seen record");
        if (r->failed)
            break;
        if (key <= prev || wr_mem_sio_user_known(q, u.user, u.len)) {
            wr_mem_sio_fail(r, "pre-queue out of order or duplicate user");
            break;
        }
        prev = key;
        if (wr_memq_pre_add(q, u.user, u.len, key) != WR_OK) {
            wr_mem_sio_fail(r, "out of memory");
            break;
        }
        wr_zsl_node_t *n = wr_memq_prequeued(q, u.user, u.len);
        wr_memq_seen_set(n, now_us, u.age);
        wr_zsl_node_set_flags(n, u.flags);
    }
    if (!r->failed && q->opening && np > q->open_total - q->open_moved)
        wr_mem_sio_fail(r, "bad opening");
    if (!r->failed && q->opening && np == 0) {
        /* nobody left to move: the opening is over */
        uint64_t m, l;
        bool d = false;
        (void)wr_memq_open_step(q, INT64_MIN, 0, &m, &l, &d);
    }
}

/* Version 7: the unseen-expiry counter and the unseen live tokens of q
 * (after its tokens), with their holders' join leaves from version 11
 * (before: none, UINT64_MAX). */
static void read_unseen(wr_mem_sio_t *r, wr_memq_t *q, uint32_t version)
{
    char user[WR_ZSL_ID_MAX + 1];
    q->unseen_expired_total = wr_mem_sio_r_u64(r);
    uint64_t n = wr_mem_sio_r_count(r, "bad unseen count");
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        uint8_t len = wr_mem_sio_r_user(r, user);
        uint64_t log_index = version >= 11 ? wr_mem_sio_r_u64(r) : UINT64_MAX;
        if (r->failed)
            break;
        wr_memq_token_t *t = wr_memq_token(q, user, len);
        if (!t || !t->seen) {
            wr_mem_sio_fail(r, "unseen pass of no token, or named twice");
            break;
        }
        t->seen = false;
        t->log_index = log_index; /* past the log's end: no leaf (wr_memq__log_unseen) */
    }
}

/* Version 5: held (back = false) or back of q, keys rebased on now_us. */
static void read_held(wr_mem_sio_t *r, wr_memq_t *q, bool back, int64_t now_us)
{
    uint64_t nh = wr_mem_sio_r_count(r, "bad held count");
    int64_t prev = INT64_MIN;
    for (uint64_t i = 0; i < nh && !r->failed; i++) {
        wr_mem_sio_node_t u;
        int64_t age_us = wr_mem_sio_r_node(r, &u, false, "bad held record");
        if (!r->failed && (age_us < -(INT64_C(1) << 52) || age_us > (INT64_C(1) << 52)))
            wr_mem_sio_fail(r, "bad held record");
        if (r->failed)
            break;
        int64_t key = now_us - age_us;
        if (key <= prev || wr_mem_sio_user_known(q, u.user, u.len))
            wr_mem_sio_fail(r, "held out of order or duplicate user");
        else if (wr_memq_held_add(q, u.user, u.len, key, back, now_us, u.age) != WR_OK)
            wr_mem_sio_fail(r, "out of memory");
        prev = key;
    }
}

static bool read_queue(wr_memq_db_t *db, wr_mem_sio_t *r, uint32_t version, int64_t now_us)
{
    char name[WR_QUEUE_NAME_MAX + 1];
    uint8_t nlen = wr_mem_sio_r_u8(r);
    if (nlen == 0 || nlen > WR_QUEUE_NAME_MAX)
        wr_mem_sio_fail(r, "bad queue name length");
    wr_mem_sio_r_bytes(r, name, nlen);
    name[r->failed ? 0 : nlen] = '\0';
    uint32_t jlen = wr_mem_sio_r_u32(r);
    if (jlen == 0 || jlen > (1u << 20))
        wr_mem_sio_fail(r, "bad config length");
    if (r->failed)
        return false;
    if (memchr(name, '\0', nlen) || wr_memq_db_find(db, name)) {
        wr_mem_sio_fail(r, "bad or duplicate queue name");
        return false;
    }
    char *js = malloc(jlen + 1);
    if (!js) {
        wr_mem_sio_fail(r, "out of memory");
        return false;
    }
    wr_mem_sio_r_bytes(r, js, jlen);
    js[jlen] = '\0';
    wr_queue_config_t cfg;
    char field[WR_FIELD_MAX + 1], msg[256];
    json_t *j = r->failed ? NULL : json_loadb(js, jlen, 0, NULL);
    free(js);
    if (r->failed)
        return false;
    wr_err_t perr =
        j ? wr_qconfig_parse_stored(j, &cfg, field, sizeof field, msg, sizeof msg) : WR_EINVAL;
    json_decref(j);
    if (perr != WR_OK) {
        wr_mem_sio_fail(r, "invalid queue config");
        return false;
    }
    wr_memq_t *q;
    if (wr_memq_db_put_config(db, name, &cfg, &q) != WR_OK) {
        wr_mem_sio_fail(r, "out of memory");
        return false;
    }
    q->version = wr_mem_sio_r_u64(r);
    q->last_score = (int64_t)wr_mem_sio_r_u64(r);
    q->budget.last_tick = (int64_t)wr_mem_sio_r_u64(r);
    q->budget.carry_micro = (int64_t)wr_mem_sio_r_u64(r);
    q->admitted_total = wr_mem_sio_r_u64(r);
    q->consumed_total = wr_mem_sio_r_u64(r);
    q->expired_total = wr_mem_sio_r_u64(r);
    q->left_total = wr_mem_sio_r_u64(r);
    q->rejected_full_total = wr_mem_sio_r_u64(r);
    if (q->budget.carry_micro < 0 || q->budget.carry_micro >= MICRO || q->budget.last_tick < -1)
        wr_mem_sio_fail(r, "bad admission budget");
    /* sale opening: an opening in progress is restored while the line loads */
    bool opening = false;
    int64_t obase = 0;
    uint64_t ototal = 0, omoved = 0;
    if (version >= 4) {
        opening = wr_mem_sio_r_u8(r) == 1;
        obase = (int64_t)wr_mem_sio_r_u64(r);
        ototal = wr_mem_sio_r_u64(r);
        omoved = wr_mem_sio_r_u64(r);
        if (opening && (omoved > ototal || ototal > (uint64_t)UINT32_MAX || obase < 0 ||
                        obase + (int64_t)ototal - 1 > q->last_score))
            wr_mem_sio_fail(r, "bad opening");
    }
    uint64_t nw = wr_mem_sio_r_u64(r);
    /* each user takes at least 10 bytes: a larger count is corrupt, and
     * must not size an allocation */
    if (!r->failed && nw <= r->fsize / 10)
        (void)wr_memq_line_reserve(q, (size_t)nw); /* no rehash while loading */
    int64_t prev = INT64_MIN;
    for (uint64_t i = 0; i < nw && !r->failed; i++) {
        wr_mem_sio_node_t u = {.age = 0, .flags = 0};
        int64_t score;
        if (version >= 3) {
            score = wr_mem_sio_r_node(r, &u, true, "bad last-seen record");
        } else {
            score = (int64_t)wr_mem_sio_r_u64(r);
            u.len = wr_mem_sio_r_user(r, u.user);
        }
        if (r->failed)
            break;
        if (score <= prev || score > q->last_score || wr_memq_waiting(q, u.user, u.len)) {
            wr_mem_sio_fail(r, "line out of order or duplicate user");
            break;
        }
        prev = score;
        if (opening && score >= obase + (int64_t)ototal) {
            wr_memq_open_restore(q, obase, ototal, omoved);
            opening = false; /* restored */
        }
        wr_zsl_node_t *n;
        if (wr_memq_line_add(q, u.user, u.len, score, &n) != WR_OK) {
            wr_mem_sio_fail(r, "out of memory");
            break;
        }
        wr_memq_seen_set(n, now_us, u.age);
        wr_zsl_node_set_flags(n, u.flags);
    }
    read_tokens(r, q, false);
    if (version >= 2 && !r->failed)
        read_sessions(q, r);
    if (version >= 2 && !r->failed)
        read_burned(r, q);
    if (version >= 3 && !r->failed)
        q->abandoned_total = wr_mem_sio_r_u64(r);
    if (opening && !r->failed)
        wr_memq_open_restore(q, obase, ototal, omoved);
    if (version >= 4 && !r->failed)
        read_prequeue(r, q, now_us);
    if (version >= 5 && !r->failed) {
        q->returned_total = wr_mem_sio_r_u64(r);
        read_held(r, q, false, now_us);
        if (!r->failed)
            read_held(r, q, true, now_us);
    }
    if (version >= 6 && !r->failed) {
        /* what is left (the config's stock is the value last set) */
        q->stock_left = (int64_t)wr_mem_sio_r_u64(r);
        q->sold_out_us = (int64_t)wr_mem_sio_r_u64(r);
        if (q->stock_left < -1 || q->stock_left > WR_STOCK_MAX || q->sold_out_us < -1 ||
            (q->stock_left >= 0) != (q->cfg->cfg.stock >= 0))
            wr_mem_sio_fail(r, "bad stock");
    }
    if (version >= 7 && !r->failed)
        read_unseen(r, q, version);
    if (version >= 9 && !r->failed)
        q->bypass_total = wr_mem_sio_r_u64(r);
    if (version >= 12 && !r->failed)
        wr_mem_snapshot__groups_read(r, q, now_us);
    if (version >= 10 && !r->failed)
        wr_mem_snapshot__push_read(r, q);
    return !r->failed;
}

wr_err_t wr_mem_snapshot_load(wr_memq_db_t *db, const char *dir, int64_t now_us)
{
    char path[PATH_MAX_LEN];
    wr_err_t err = WR_EIO;
    wr_mem_sio_t r = {0};
    int n = snprintf(path, sizeof path, "%s/%s", dir, SNAP_NAME);
    if (n < 0 || (size_t)n >= sizeof path) {
        wr_error("store memory: snapshot path too long in %s", dir);
        return WR_EINVAL;
    }
    r.f = fopen(path, "rb");
    if (!r.f) {
        if (errno == ENOENT)
            return WR_OK; /* first start */
        wr_error("store memory: cannot open snapshot %s: %s", path, strerror(errno));
        return WR_EIO;
    }
    struct stat sb;
    r.fsize = fstat(fileno(r.f), &sb) == 0 ? (uint64_t)sb.st_size : 0;
    r.buf = malloc(WR_MEM_SIO_BUF);
    r.md = wr_crypto_sha256_new();
    if (!r.buf || !r.md) {
        err = WR_ENOMEM;
        goto out;
    }
    char magic[8];
    wr_mem_sio_r_bytes(&r, magic, 8);
    if (!r.failed && memcmp(magic, SNAP_MAGIC, 8) != 0)
        wr_mem_sio_fail(&r, "not a waitroom snapshot (bad magic)");
    uint32_t version = wr_mem_sio_r_u32(&r);
    if (!r.failed && (version < 1 || version > SNAP_VERSION))
        wr_mem_sio_fail(&r, "unsupported snapshot version");
    (void)wr_mem_sio_r_u64(&r); /* written_at_us */
    uint32_t slen = wr_mem_sio_r_u32(&r);
    if (slen > WR_SECRET_MAX)
        wr_mem_sio_fail(&r, "bad secret length");
    wr_mem_sio_r_bytes(&r, db->secret, r.failed ? 0 : slen);
    db->secret_len = r.failed ? 0 : slen;
    uint32_t nq = wr_mem_sio_r_u32(&r);
    for (uint32_t i = 0; i < nq && !r.failed; i++)
        read_queue(db, &r, version, now_us);
    if (version >= 8 && !r.failed)
        wr_mem_snapshot_read_logs(&r, db);
    unsigned char want[WR_CRYPTO_SHA256_LEN], got[WR_CRYPTO_SHA256_LEN];
    wr_mem_sio_r_digest(&r);
    if (!r.failed && wr_crypto_sha256_final(r.md, want) != WR_OK)
        wr_mem_sio_fail(&r, "digest failed");
    wr_mem_sio_r_take(&r, got, 32, false);
    if (!r.failed && memcmp(want, got, 32) != 0)
        wr_mem_sio_fail(&r, "checksum mismatch");
    if (!r.failed && (r.pos < r.len || fgetc(r.f) != EOF))
        wr_mem_sio_fail(&r, "trailing bytes after checksum");
    if (r.failed) {
        wr_error("store memory: corrupt snapshot %s: %s; refusing to start with it (move it away "
                 "to start empty)",
                 path, r.what ? r.what : "unknown error");
        wr_memq_db_clear(db);
        db->secret_len = 0;
        db->has_log_key = false;
        goto out;
    }
    err = WR_OK;
    uint64_t users = 0;
    for (size_t i = 0; i < db->nq; i++) {
        const wr_memq_t *q = db->queues[i];
        users += wr_zsl_length(q->line) + q->heap_n + q->sess_n + wr_zsl_length(q->pre) +
                 wr_zsl_length(q->held) + wr_zsl_length(q->back);
        for (size_t g = 0; g < q->n_grp; g++)
            users += wr_zsl_length(q->grp[q->grp_order[g]]->line);
    }
    wr_info("store memory: loaded %s: %zu queues, %" PRIu64 " users", path, db->nq, users);
out:
    fclose(r.f);
    wr_crypto_sha256_free(r.md);
    free(r.buf);
    return err;
}

wr_err_t wr_mem_snapshot_lock_dir(const char *dir, int *lock_fd)
{
    char path[PATH_MAX_LEN];
    *lock_fd = -1;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        wr_error("store memory: cannot create data dir %s: %s", dir, strerror(errno));
        return WR_EIO;
    }
    int n = snprintf(path, sizeof path, "%s/waitroom.lock", dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return WR_EINVAL;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        wr_error("store memory: cannot open %s: %s", path, strerror(errno));
        return WR_EIO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        wr_error("store memory: data dir %s is in use by another process (%s)", dir,
                 strerror(errno));
        close(fd);
        return WR_EIO;
    }
    *lock_fd = fd;
    return WR_OK;
}

/* ---- degraded mode: the burned fail-open passes ------------------------ */

static void write_burned(wr_mem_sio_t *w, const wr_memq_t *q)
{
    wr_mem_sio_w_u64(w, q->bheap_n);
    for (size_t i = 0; i < q->bheap_n && !w->failed; i++) {
        const wr_memq_burn_t *b = q->bheap[i];
        wr_mem_sio_w_u8(w, b->jlen);
        wr_mem_sio_w_bytes(w, b->jti, b->jlen);
        wr_mem_sio_w_u64(w, (uint64_t)b->exp_us);
    }
}

static void read_burned(wr_mem_sio_t *r, wr_memq_t *q)
{
    uint64_t nb = wr_mem_sio_r_count(r, "bad burned count"); /* each burn takes at least 10 bytes */
    for (uint64_t i = 0; i < nb && !r->failed; i++) {
        char jti[WR_JTI_LEN + 1];
        uint8_t len = wr_mem_sio_r_u8(r);
        if (len < 1 || len > WR_JTI_LEN)
            wr_mem_sio_fail(r, "bad burned pass");
        wr_mem_sio_r_bytes(r, jti, r->failed ? 0 : len);
        int64_t exp_us = (int64_t)wr_mem_sio_r_u64(r);
        if (r->failed)
            break;
        jti[len] = '\0';
        wr_token_reason_t reason;
        bool dirty = false;
        /* now = INT64_MIN: nothing is swept or refused as expired while
         * loading (the next burn or tick sweeps) */
        wr_err_t err = wr_memq_burn(q, jti, len, exp_us, false, INT64_MIN, &reason, &dirty);
        if (err == WR_ETOKEN)
            wr_mem_sio_fail(r, "duplicate burned pass");
        else if (err != WR_OK)
            wr_mem_sio_fail(r, "out of memory");
    }
}
