/*
 * memq_session.c - sessions (sessionSeconds) and the burned set of spent
 * fail-open passes in the embedded store's queue model.
 *
 * A session is a wr_memq_token_t held in q->sessions (by user) and in
 * q->sess_heap (by exp_us, its end), with the token heap helpers of
 * memq.c (wr_memq__heap_*). token_use opens one (wr_memq__session_open),
 * leave and release end it (wr_memq__session_end, wr_memq_release), the
 * expiry sweep of memq.c drops the ended ones (wr_memq__session_sweep).
 * burned (jti -> expiry) is an id hash plus its own min-heap by expiry,
 * created at the first burn; wr_memq_burn_sweep drops expired burns. The
 * full model is described at the top of memq.c. No I/O, no clocks.
 */
#include "store/memory/memq.h"

#include "base/array.h"
#include "store/memory/memq_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- sessions (sessionSeconds) ------------------------------------------ */

/* A session is a wr_memq_token_t held in sessions (by user) and in
 * sess_heap (by exp_us, the session's end): jti is the consumed token's,
 * iat_us the consume time. A user has at most one session; it is
 * independent of line and tokens (the user may join again meanwhile). */

wr_memq_token_t *wr_memq_session(const wr_memq_t *q, const char *user, size_t ulen)
{
    return wr_idhash_get(q->sessions, user, ulen);
}

wr_err_t wr_memq_session_add(wr_memq_t *q, wr_memq_token_t *t)
{
    if (wr_memq__heap_reserve_in(&q->sess_heap, q->sess_n, &q->sess_cap, 1) != WR_OK)
        return WR_ENOMEM;
    wr_err_t err = wr_idhash_put(q->sessions, t);
    if (err != WR_OK)
        return err;
    wr_memq__heap_push_in(q->sess_heap, &q->sess_n, t);
    return WR_OK;
}

static void session_drop(wr_memq_t *q, wr_memq_token_t *t)
{
    wr_memq__heap_remove_in(q->sess_heap, &q->sess_n, t);
    wr_idhash_del(q->sessions, t->id, t->idlen);
    free(t);
}

void wr_memq__session_sweep(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    while (q->sess_n > 0 && q->sess_heap[0]->exp_us <= now_us) {
        session_drop(q, q->sess_heap[0]);
        q->sessions_expired_total++;
        *dirty = true;
    }
}

/* Opens (or replaces) the session of token t's user, before t is dropped:
 * same jti, ending now + sessionSeconds. WR_OK or WR_ENOMEM (q unchanged). */
wr_err_t wr_memq__session_open(wr_memq_t *q, wr_memq_token_t *t, int64_t now_us, bool *dirty)
{
    int64_t end = now_us + (int64_t)q->cfg->cfg.session_seconds * MICRO;
    wr_memq_token_t *ss = wr_memq_session(q, t->id, t->idlen);
    if (ss) {
        memcpy(ss->jti, t->jti, sizeof ss->jti);
        ss->iat_us = now_us;
        ss->exp_us = end;
        wr_memq__heap_up(q->sess_heap, ss->heap_idx);
        wr_memq__heap_down(q->sess_heap, q->sess_n, ss->heap_idx);
    } else {
        ss = wr_memq_token_new(t->id, t->idlen);
        if (!ss)
            return WR_ENOMEM;
        memcpy(ss->jti, t->jti, sizeof ss->jti);
        ss->iat_us = now_us;
        ss->exp_us = end;
        wr_err_t err = wr_memq_session_add(q, ss);
        if (err != WR_OK) {
            free(ss);
            return err;
        }
    }
    *dirty = true;
    return WR_OK;
}

/* Ends user's session if it is open at now_us (released_total); true if
 * it did. A lapsed one is left to the sweep. */
bool wr_memq__session_end(wr_memq_t *q, const char *user, size_t ulen, int64_t now_us, bool *dirty)
{
    wr_memq_token_t *ss = wr_memq_session(q, user, ulen);
    if (!ss || ss->exp_us <= now_us)
        return false;
    session_drop(q, ss);
    q->released_total++;
    *dirty = true;
    return true;
}

wr_err_t wr_memq_release(wr_memq_t *q, const char *user, size_t ulen, const char *jti,
                         int64_t now_us, wr_token_reason_t *reason, int64_t *session_us,
                         bool *dirty)
{
    wr_memq_token_t *ss = wr_memq_session(q, user, ulen);
    *session_us = -1;
    if (ss && strcmp(ss->jti, jti) == 0) {
        if (ss->exp_us > now_us) {
            *session_us = now_us > ss->iat_us ? now_us - ss->iat_us : 0;
            session_drop(q, ss);
            q->released_total++;
            *dirty = true;
            return WR_OK;
        }
        session_drop(q, ss); /* lapsed, not yet swept */
        q->sessions_expired_total++;
        *dirty = true;
    }
    *reason = WR_TOKEN_NO_SESSION;
    return WR_ETOKEN;
}

/* ---- degraded mode: the burned set ------------------------------------- */

static const char *burn_key(const void *item, size_t *len)
{
    const wr_memq_burn_t *b = item;
    *len = b->jlen;
    return b->jti;
}

void wr_memq__burned_free(wr_memq_t *q)
{
    for (size_t i = 0; i < q->bheap_n; i++)
        free(q->bheap[i]);
    free(q->bheap);
    wr_idhash_free(q->burned);
    q->bheap = NULL;
    q->burned = NULL;
    q->bheap_n = q->bheap_cap = 0;
}

static void bheap_set(wr_memq_t *q, size_t i, wr_memq_burn_t *b)
{
    q->bheap[i] = b;
    b->heap_idx = i;
}

static void bheap_up(wr_memq_t *q, size_t i)
{
    wr_memq_burn_t *b = q->bheap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (q->bheap[p]->exp_us <= b->exp_us)
            break;
        bheap_set(q, i, q->bheap[p]);
        i = p;
    }
    bheap_set(q, i, b);
}

static void bheap_down(wr_memq_t *q, size_t i)
{
    wr_memq_burn_t *b = q->bheap[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        int64_t best = b->exp_us;
        if (l < q->bheap_n && q->bheap[l]->exp_us < best) {
            m = l;
            best = q->bheap[l]->exp_us;
        }
        if (l + 1 < q->bheap_n && q->bheap[l + 1]->exp_us < best)
            m = l + 1;
        if (m == i)
            break;
        bheap_set(q, i, q->bheap[m]);
        i = m;
    }
    bheap_set(q, i, b);
}

void wr_memq_burn_sweep(wr_memq_t *q, int64_t now_us, bool *dirty)
{
    while (q->bheap_n > 0 && q->bheap[0]->exp_us <= now_us) {
        wr_memq_burn_t *b = q->bheap[0];
        wr_idhash_del(q->burned, b->jti, b->jlen);
        if (--q->bheap_n > 0) {
            bheap_set(q, 0, q->bheap[q->bheap_n]);
            bheap_down(q, 0);
        }
        free(b);
        *dirty = true;
    }
}

wr_err_t wr_memq_burn(wr_memq_t *q, const char *jti, size_t jlen, int64_t exp_us, bool check_only,
                      int64_t now_us, wr_token_reason_t *reason, bool *dirty)
{
    wr_memq_burn_sweep(q, now_us, dirty);
    if (q->burned && wr_idhash_get(q->burned, jti, jlen)) {
        *reason = WR_TOKEN_CONSUMED;
        return WR_ETOKEN;
    }
    if (exp_us <= now_us) {
        *reason = WR_TOKEN_EXPIRED;
        return WR_ETOKEN;
    }
    if (check_only)
        return WR_OK;
    if (!q->burned && !(q->burned = wr_idhash_new(burn_key)))
        return WR_ENOMEM;
    wr_memq_burn_t **h =
        wr_array_grow(q->bheap, &q->bheap_cap, q->bheap_n + 1, sizeof *h, 16, false);
    if (!h)
        return WR_ENOMEM;
    q->bheap = h;
    wr_memq_burn_t *b = malloc(sizeof *b);
    if (!b)
        return WR_ENOMEM;
    b->exp_us = exp_us;
    b->jlen = (uint8_t)jlen;
    memcpy(b->jti, jti, jlen);
    b->jti[jlen] = '\0';
    if (wr_idhash_put(q->burned, b) != WR_OK) {
        free(b);
        return WR_ENOMEM;
    }
    bheap_set(q, q->bheap_n++, b);
    bheap_up(q, q->bheap_n - 1);
    *dirty = true;
    return WR_OK;
}
