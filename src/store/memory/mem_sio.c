/*
 * mem_sio.c - the snapshot file's byte I/O (mem_sio.h): a writer that
 * fills a block, then digests and writes it; a reader that reads a block,
 * hands out fields, and digests what was consumed before the next block
 * (or before the checksum, which is read without being digested). Then
 * the records several parts of the snapshot share: a line's people (the
 * standard line, the pre-queue, a group's line), the head of a person's
 * record, and the check that a person is loaded once.
 */
#include "store/memory/mem_sio.h"

#include <string.h>

#include "store/memory/memq.h"

void wr_mem_sio_fail(wr_mem_sio_t *io, const char *what)
{
    if (!io->failed) {
        io->failed = true;
        io->what = what;
    }
}

/* Writer: digests and writes the buffered block. */
void wr_mem_sio_w_flush(wr_mem_sio_t *w)
{
    if (w->failed || w->pos == 0)
        return;
    if (wr_crypto_sha256_update(w->md, w->buf, w->pos) != WR_OK)
        wr_mem_sio_fail(w, "digest failed");
    else if (fwrite(w->buf, 1, w->pos, w->f) != w->pos)
        wr_mem_sio_fail(w, "write failed");
    w->pos = 0;
}

void wr_mem_sio_w_bytes(wr_mem_sio_t *w, const void *p, size_t n)
{
    const unsigned char *in = p;
    while (n > 0 && !w->failed) {
        if (w->pos == WR_MEM_SIO_BUF)
            wr_mem_sio_w_flush(w);
        size_t k = WR_MEM_SIO_BUF - w->pos < n ? WR_MEM_SIO_BUF - w->pos : n;
        memcpy(w->buf + w->pos, in, k);
        w->pos += k;
        in += k;
        n -= k;
    }
}

void wr_mem_sio_w_u64(wr_mem_sio_t *w, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    wr_mem_sio_w_bytes(w, b, 8);
}

void wr_mem_sio_w_u32(wr_mem_sio_t *w, uint32_t v)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    wr_mem_sio_w_bytes(w, b, 4);
}

void wr_mem_sio_w_u8(wr_mem_sio_t *w, uint8_t v)
{
    wr_mem_sio_w_bytes(w, &v, 1);
}

/* Reader: digests what was consumed and not yet digested. */
void wr_mem_sio_r_digest(wr_mem_sio_t *r)
{
    if (!r->failed && r->pos > r->dig &&
        wr_crypto_sha256_update(r->md, r->buf + r->dig, r->pos - r->dig) != WR_OK)
        wr_mem_sio_fail(r, "digest failed");
    r->dig = r->pos;
}

/* Copies n bytes out; digest = false for the checksum itself. */
void wr_mem_sio_r_take(wr_mem_sio_t *r, void *p, size_t n, bool digest)
{
    unsigned char *out = p;
    while (n > 0 && !r->failed) {
        if (r->pos == r->len) {
            wr_mem_sio_r_digest(r);
            r->len = fread(r->buf, 1, WR_MEM_SIO_BUF, r->f);
            r->pos = r->dig = 0;
            if (r->len == 0) {
                wr_mem_sio_fail(r, ferror(r->f) ? "read error" : "file truncated");
                return;
            }
        }
        size_t k = r->len - r->pos < n ? r->len - r->pos : n;
        memcpy(out, r->buf + r->pos, k);
        r->pos += k;
        out += k;
        n -= k;
        if (!digest)
            r->dig = r->pos;
    }
}

void wr_mem_sio_r_bytes(wr_mem_sio_t *r, void *p, size_t n)
{
    wr_mem_sio_r_take(r, p, n, true);
}

uint64_t wr_mem_sio_r_u64(wr_mem_sio_t *r)
{
    unsigned char b[8] = {0};
    wr_mem_sio_r_bytes(r, b, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

uint32_t wr_mem_sio_r_u32(wr_mem_sio_t *r)
{
    unsigned char b[4] = {0};
    wr_mem_sio_r_bytes(r, b, 4);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

uint8_t wr_mem_sio_r_u8(wr_mem_sio_t *r)
{
    uint8_t v = 0;
    wr_mem_sio_r_bytes(r, &v, 1);
    return v;
}

/* Reads a u64 count of records of at least 10 bytes each: a larger count
 * than the file can hold is corrupt (what names it), and must not size an
 * allocation or a loop. */
uint64_t wr_mem_sio_r_count(wr_mem_sio_t *r, const char *what)
{
    uint64_t n = wr_mem_sio_r_u64(r);
    if (!r->failed && n > r->fsize / 10)
        wr_mem_sio_fail(r, what);
    return n;
}

/* Reads a user id (u8 length 1..WR_USER_ID_MAX, bytes) into user,
 * NUL-terminated; returns its length (unusable once r failed). */
uint8_t wr_mem_sio_r_user(wr_mem_sio_t *r, char user[WR_ZSL_ID_MAX + 1])
{
    uint8_t len = wr_mem_sio_r_u8(r);
    if (len == 0 || len > WR_USER_ID_MAX)
        wr_mem_sio_fail(r, "bad user id length");
    wr_mem_sio_r_bytes(r, user, len);
    if (!r->failed)
        user[len] = '\0';
    return len;
}

/* ---- records the snapshot's parts share ------------------------------ */

void wr_mem_sio_w_nodes(wr_mem_sio_t *w, const wr_zsl_t *set, int64_t now_us, bool held)
{
    wr_mem_sio_w_u64(w, wr_zsl_length(set));
    for (const wr_zsl_node_t *x = wr_zsl_first(set); x && !w->failed; x = wr_zsl_next(x)) {
        size_t len;
        const char *id = wr_zsl_node_id(x, &len);
        int64_t score = wr_zsl_node_score(x);
        wr_mem_sio_w_u64(w, (uint64_t)(held ? now_us - score : score));
        wr_mem_sio_w_u8(w, (uint8_t)len);
        wr_mem_sio_w_bytes(w, id, len);
        uint32_t age = wr_memq_seen_age_cs(x, now_us);
        wr_mem_sio_w_u32(w, age > INT32_MAX ? 0 : age); /* "in the future": clock stepped back */
        if (!held)
            wr_mem_sio_w_u8(w, wr_zsl_node_flags(x) & WR_MEMQ_PENDING);
    }
}

int64_t wr_mem_sio_r_node(wr_mem_sio_t *r, wr_mem_sio_node_t *u, bool flags, const char *bad)
{
    int64_t v = (int64_t)wr_mem_sio_r_u64(r);
    u->len = wr_mem_sio_r_user(r, u->user);
    u->age = wr_mem_sio_r_u32(r);
    u->flags = flags ? wr_mem_sio_r_u8(r) : 0;
    if (!r->failed && (u->age > INT32_MAX || (u->flags & ~WR_MEMQ_PENDING)))
        wr_mem_sio_fail(r, bad);
    return v;
}

bool wr_mem_sio_user_known(const wr_memq_t *q, const char *user, uint8_t len)
{
    bool back;
    return wr_memq_waiting(q, user, len) || wr_memq_token(q, user, len) ||
           wr_memq_prequeued(q, user, len) || wr_memq_held(q, user, len, &back);
}
