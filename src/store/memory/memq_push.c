/*
 * memq_push.c - Web Push subscriptions in the embedded store (docs/API.md
 * 1.3, "Your turn, off the page"): one per person and queue, kept in the
 * queue's push hash (user id -> wr_memq_push_t).
 *
 * A subscription lives while its person is in line (waiting, pre-queue,
 * held). Admission claims it (memq.c's admit_first calls
 * wr_memq__push_claim for every user it admits): it leaves the hash for
 * push_due with the pass's expiry, and the store hands push_due to the
 * admit's caller, which sends the push - exactly one claim per admission,
 * so exactly one push. Leave drops it; the queue's free frees them.
 * A person with a subscription is never away (wr_memq_idle asks
 * wr_memq_push_has): they keep their place without polling.
 *
 * In the snapshot (mem_snapshot_push.c, version 10) with the closing already
 * pushed; the claimed ones (push_due) are handed over within the tick.
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "store/memory/memq.h"
#include "store/memory/memq_internal.h"

static bool due_add(wr_memq_t *q, wr_memq_push_t *p);

static const char *push_key(const void *item, size_t *len)
{
    const wr_memq_push_t *p = item;
    *len = p->idlen;
    return p->id;
}

bool wr_memq_push_has(const wr_memq_t *q, const char *user, size_t ulen)
{
    return q->push && wr_idhash_count(q->push) > 0 && wr_idhash_get(q->push, user, ulen);
}

/* The states a subscription may be set or dropped in: a status first.
 * An admitted person is refused before it: this answer does not carry
 * their pass, so it must not mark it seen (an unseen pass's expiry holds
 * its holder, docs/API.md 1.3). */
static wr_err_t push_status(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us,
                            bool *dirty)
{
    wr_memq_sweep(q, now_us, dirty); /* as the status would first */
    if (wr_memq_token(q, user, ulen))
        return WR_ENOTINQUEUE; /* admitted */
    wr_entry_t e;
    memset(&e, 0, sizeof(e));
    wr_err_t err = wr_memq_entry(q, user, ulen, false, false, now_us, 0, &e, dirty);
    if (err != WR_OK)
        return err;
    if (e.state == WR_ENTRY_WAITING || e.state == WR_ENTRY_PREQUEUE)
        return WR_OK;
    /* closed: still in line (a reopened sale admits them) */
    if (e.state == WR_ENTRY_CLOSED &&
        (wr_memq_waiting(q, user, ulen) || wr_memq_prequeued(q, user, ulen)))
        return WR_OK;
    return WR_ENOTINQUEUE; /* admitted */
}

wr_err_t wr_memq_push_set(wr_memq_t *q, const char *user, size_t ulen, const wr_pushsub_t *sub,
                          int64_t now_us, bool *dirty)
{
    wr_err_t err = push_status(q, user, ulen, now_us, dirty);
    if (err != WR_OK)
        return err;
    *dirty = true;
    return wr_memq_push_restore(q, user, ulen, sub);
}

wr_err_t wr_memq_push_restore(wr_memq_t *q, const char *user, size_t ulen, const wr_pushsub_t *sub)
{
    wr_err_t err;
    if (!q->push && !(q->push = wr_idhash_new(push_key)))
        return WR_ENOMEM;
    wr_memq_push_t *old = wr_idhash_get(q->push, user, ulen);
    if (old) {
        old->sub = *sub; /* a new PUT replaces it */
        return WR_OK;
    }
    wr_memq_push_t *p = calloc(1, sizeof(*p) + ulen + 1);
    if (!p)
        return WR_ENOMEM;
    p->sub = *sub;
    p->idlen = (uint8_t)ulen;
    memcpy(p->id, user, ulen);
    err = wr_idhash_put(q->push, p);
    if (err != WR_OK)
        free(p);
    return err;
}

void wr_memq__push_drop(wr_memq_t *q, const char *user, size_t ulen)
{
    if (q->push)
        free(wr_idhash_del(q->push, user, ulen));
}

wr_err_t wr_memq_push_del(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us, bool *dirty)
{
    wr_err_t err = push_status(q, user, ulen, now_us, dirty);
    if (err == WR_OK && wr_memq_push_has(q, user, ulen)) {
        wr_memq__push_drop(q, user, ulen);
        *dirty = true;
    }
    return err;
}

void wr_memq__push_claim(wr_memq_t *q, const wr_memq_token_t *t)
{
    if (!q->push || wr_idhash_count(q->push) == 0)
        return;
    wr_memq_push_t *p = wr_idhash_get(q->push, t->id, t->idlen);
    if (!p)
        return;
    if (!due_add(q, p))
        return; /* kept, unclaimed: dropped when the person leaves */
    (void)wr_idhash_del(q->push, t->id, t->idlen);
    p->exp_us = t->exp_us;
}

/* Appends p to push_due; false when it cannot grow. */
static bool due_add(wr_memq_t *q, wr_memq_push_t *p)
{
    wr_memq_push_t **a =
        wr_array_grow(q->push_due, &q->push_due_cap, q->push_due_n + 1, sizeof(*a), 16, false);
    if (!a)
        return false;
    q->push_due = a;
    q->push_due[q->push_due_n++] = p;
    return true;
}

typedef struct {
    wr_memq_t *q;
    wr_close_reason_t why;
} closing_ctx_t;

static void closing_one(void *item, void *arg)
{
    closing_ctx_t *c = arg;
    const wr_memq_push_t *p = item;
    wr_memq_push_t *copy = malloc(sizeof(*p) + p->idlen + 1u);
    if (!copy)
        return;
    memcpy(copy, p, sizeof(*p) + p->idlen + 1u);
    copy->closing = c->why;
    copy->exp_us = 0;
    if (!due_add(c->q, copy))
        free(copy);
}

void wr_memq__push_closing(wr_memq_t *q, bool *dirty)
{
    wr_close_reason_t why = wr_memq_halted(q);
    if (why == WR_CLOSE_NONE) {
        if (q->push_closed != WR_CLOSE_NONE)
            *dirty = true;
        q->push_closed = WR_CLOSE_NONE; /* open (again): the next closing pushes */
        return;
    }
    if (q->push_closed != WR_CLOSE_NONE)
        return; /* this closing's push went out */
    q->push_closed = why;
    *dirty = true;
    if (!q->push || wr_idhash_count(q->push) == 0)
        return;
    closing_ctx_t c = {q, why};
    wr_idhash_foreach(q->push, closing_one, &c);
}

void wr_memq_push_take(wr_memq_t *q, wr_memq_push_t ***out, size_t *n)
{
    *out = q->push_due_n ? q->push_due : NULL;
    *n = q->push_due_n;
    if (q->push_due_n) {
        q->push_due = NULL;
        q->push_due_n = q->push_due_cap = 0;
    }
}

static void free_one(void *item, void *arg)
{
    (void)arg;
    free(item);
}

void wr_memq_push_clear(wr_memq_t *q)
{
    wr_memq__push_free(q);
}

void wr_memq__push_free(wr_memq_t *q)
{
    if (q->push) {
        wr_idhash_foreach(q->push, free_one, NULL);
        wr_idhash_free(q->push);
        q->push = NULL;
    }
    for (size_t i = 0; i < q->push_due_n; i++)
        free(q->push_due[i]);
    free(q->push_due);
    q->push_due = NULL;
    q->push_due_n = q->push_due_cap = 0;
}
