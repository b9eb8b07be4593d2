/*
 * seencache.c - the bounded cache of recently recorded waiting users
 * (seencache.h).
 *
 * Table: nsets sets of WAYS entries {tag, t_us}; tag 0 = empty slot. The
 * set of a key is its SipHash's low bits; its tag is the whole hash with
 * the low bit forced on (never 0). Lookups compare WAYS tags of one cache
 * line pair; note() overwrites the same tag, else an empty slot, else the
 * oldest. A tag collision (two keys with one 64-bit hash) could only make
 * one user's poll skip a recording it needed: about 2^-64 per pair.
 */
#include "core/seencache.h"

#include <stdlib.h>
#include <string.h>

#include "base/ids.h"
#include "base/rng.h"
#include "base/siphash.h"

#define WAYS 8

typedef struct {
    uint64_t tag;
    int64_t t_us;
} slot_t;

struct wr_seencache {
    uint64_t k0, k1;
    size_t nsets;  /* power of two */
    slot_t *slots; /* nsets * WAYS */
};

wr_err_t wr_seencache_new(size_t entries, wr_seencache_t **out)
{
    if (entries == 0)
        entries = WR_SEENCACHE_DEFAULT;
    size_t nsets = 1;
    while (nsets * WAYS < entries && nsets < ((size_t)1 << 28))
        nsets <<= 1;
    wr_seencache_t *c = calloc(1, sizeof *c);
    if (!c)
        return WR_ENOMEM;
    c->slots = calloc(nsets * WAYS, sizeof *c->slots);
    if (!c->slots) {
        free(c);
        return WR_ENOMEM;
    }
    c->nsets = nsets;
    uint64_t k[2];
    wr_rng_entropy(k, sizeof k); /* random; distinct per table even without entropy */
    c->k0 = k[0];
    c->k1 = k[1];
    *out = c;
    return WR_OK;
}

void wr_seencache_free(wr_seencache_t *c)
{
    if (!c)
        return;
    free(c->slots);
    free(c);
}

/* The set and tag of (queue, user). */
static slot_t *find_set(const wr_seencache_t *c, const char *queue, const char *user, uint64_t *tag)
{
    char key[WR_QUEUE_NAME_MAX + WR_USER_ID_MAX + 2];
    size_t ql = strnlen(queue, WR_QUEUE_NAME_MAX), ul = strnlen(user, WR_USER_ID_MAX);
    memcpy(key, queue, ql);
    key[ql] = '\0';
    memcpy(key + ql + 1, user, ul);
    uint64_t h = wr_siphash13(c->k0, c->k1, key, ql + 1 + ul);
    *tag = h | 1;
    return &c->slots[(h >> 1 & (c->nsets - 1)) * WAYS];
}

void wr_seencache_note(wr_seencache_t *c, const char *queue, const char *user, int64_t t_us)
{
    uint64_t tag;
    slot_t *s = find_set(c, queue, user, &tag);
    slot_t *victim = &s[0];
    for (int i = 0; i < WAYS; i++) {
        if (s[i].tag == tag) {
            victim = &s[i];
            break;
        }
        if (victim->tag != 0 && (s[i].tag == 0 || s[i].t_us < victim->t_us))
            victim = &s[i];
    }
    victim->tag = tag;
    victim->t_us = t_us;
}

bool wr_seencache_fresh(const wr_seencache_t *c, const char *queue, const char *user,
                        int64_t now_us, int64_t window_us)
{
    uint64_t tag;
    const slot_t *s = find_set(c, queue, user, &tag);
    for (int i = 0; i < WAYS; i++)
        if (s[i].tag == tag)
            return now_us - s[i].t_us < window_us && now_us >= s[i].t_us;
    return false;
}

void wr_seencache_forget(wr_seencache_t *c, const char *queue, const char *user)
{
    uint64_t tag;
    slot_t *s = find_set(c, queue, user, &tag);
    for (int i = 0; i < WAYS; i++)
        if (s[i].tag == tag)
            s[i].tag = 0;
}
