/*
 * mem_snapshot_push.c - the Web Push part of a queue in the embedded
 * store's snapshot (version 10; mem_snapshot.c has the whole format):
 *   u64 subscription count, each: u8 id_len, id (a person in line,
 *   pre-queue or held), u32 endpoint_len (1..1024), endpoint, 65 bytes
 *   p256dh, 16 bytes auth, u8 lang_len (0..35), lang;
 *   then u8 push_closed (the closing already pushed: 0 none, 1 closed,
 *   2 sold out).
 * Claimed subscriptions (push_due) are not written: they are handed over
 * within the tick that claimed them.
 */
#include "store/memory/mem_snapshot_push.h"

#include <string.h>

static void write_one(void *item, void *arg)
{
    wr_mem_sio_t *w = arg;
    const wr_memq_push_t *p = item;
    size_t elen = strlen(p->sub.endpoint), llen = strlen(p->sub.lang);
    wr_mem_sio_w_u8(w, p->idlen);
    wr_mem_sio_w_bytes(w, p->id, p->idlen);
    wr_mem_sio_w_u32(w, (uint32_t)elen);
    wr_mem_sio_w_bytes(w, p->sub.endpoint, elen);
    wr_mem_sio_w_bytes(w, p->sub.p256dh, sizeof p->sub.p256dh);
    wr_mem_sio_w_bytes(w, p->sub.auth, sizeof p->sub.auth);
    wr_mem_sio_w_u8(w, (uint8_t)llen);
    wr_mem_sio_w_bytes(w, p->sub.lang, llen);
}

void wr_mem_snapshot__push_write(wr_mem_sio_t *w, const wr_memq_t *q)
{
    wr_mem_sio_w_u64(w, q->push ? wr_idhash_count(q->push) : 0);
    if (q->push)
        wr_idhash_foreach(q->push, write_one, w);
    wr_mem_sio_w_u8(w, (uint8_t)q->push_closed);
}

/* A person a subscription may belong to: in line, pre-queue or held. */
static bool in_line(const wr_memq_t *q, const char *user, size_t len)
{
    bool back;
    return wr_memq_waiting(q, user, len) || wr_memq_prequeued(q, user, len) ||
           wr_memq_held(q, user, len, &back);
}

void wr_mem_snapshot__push_read(wr_mem_sio_t *r, wr_memq_t *q)
{
    char user[WR_ZSL_ID_MAX + 1];
    uint64_t n = wr_mem_sio_r_count(r, "bad subscription count");
    for (uint64_t i = 0; i < n && !r->failed; i++) {
        wr_pushsub_t sub;
        memset(&sub, 0, sizeof sub);
        uint8_t len = wr_mem_sio_r_user(r, user);
        uint32_t elen = r->failed ? 0 : wr_mem_sio_r_u32(r);
        if (r->failed || elen < 1 || elen > WR_PUSHADDR_ENDPOINT_MAX) {
            wr_mem_sio_fail(r, "bad subscription");
            break;
        }
        wr_mem_sio_r_bytes(r, sub.endpoint, elen);
        wr_mem_sio_r_bytes(r, sub.p256dh, sizeof sub.p256dh);
        wr_mem_sio_r_bytes(r, sub.auth, sizeof sub.auth);
        uint8_t llen = wr_mem_sio_r_u8(r);
        if (r->failed || llen > WR_PUSHSUB_LANG_MAX) {
            wr_mem_sio_fail(r, "bad subscription");
            break;
        }
        wr_mem_sio_r_bytes(r, sub.lang, llen);
        if (r->failed)
            break;
        if (strlen(sub.endpoint) != elen ||
            !wr_crypto_p256_point_valid(sub.p256dh, sizeof sub.p256dh) || !in_line(q, user, len) ||
            wr_memq_push_has(q, user, len))
            wr_mem_sio_fail(r, "bad subscription");
        else if (wr_memq_push_restore(q, user, len, &sub) != WR_OK)
            wr_mem_sio_fail(r, "out of memory");
    }
    uint8_t closed = r->failed ? 0 : wr_mem_sio_r_u8(r);
    if (!r->failed && closed > WR_CLOSE_SOLD_OUT)
        wr_mem_sio_fail(r, "bad push closing");
    q->push_closed = (wr_close_reason_t)closed;
}
