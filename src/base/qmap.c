/*
 * qmap.c - the queue-name map (qmap.h).
 *
 * Structure. A power-of-two array of bucket heads (16 at first); each
 * entry is one allocation {next, hash, value, name} in its bucket's chain.
 * The hash is kept, so growing rehashes without hashing again and a
 * lookup compares names only on a full hash match.
 *
 * Invariants. Every entry is in the chain of bucket hash & (nbuckets - 1);
 * no name twice; count <= nbuckets after every put (the array doubles
 * first). It never shrinks: a map holds as many queues as were ever live
 * at once, a few dozen at most.
 *
 * Iteration keeps the entry after the one it returned, so removing the
 * returned entry leaves the iterator valid.
 */
#include "base/qmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/ids.h"
#include "base/rng.h"
#include "base/siphash.h"

#define MIN_BUCKETS 16

struct node {
    struct node *next;
    uint64_t hash;
    void *value;
    char name[WR_QUEUE_NAME_MAX + 1];
};

struct wr_qmap {
    struct node **buckets;
    size_t nbuckets; /* power of two */
    size_t count;
    uint64_t k[2]; /* SipHash key, random per table */
};

static uint64_t hash_of(const wr_qmap_t *m, const char *name, size_t len)
{
    return wr_siphash13(m->k[0], m->k[1], name, len);
}

wr_qmap_t *wr_qmap_new(void)
{
    wr_qmap_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->buckets = calloc(MIN_BUCKETS, sizeof *m->buckets);
    if (!m->buckets) {
        free(m);
        return NULL;
    }
    m->nbuckets = MIN_BUCKETS;
    wr_rng_entropy(m->k, sizeof m->k); /* random; distinct per table even without entropy */
    return m;
}

void wr_qmap_free(wr_qmap_t *m)
{
    if (!m)
        return;
    for (size_t b = 0; b < m->nbuckets; b++) {
        struct node *n = m->buckets[b];
        while (n) {
            struct node *next = n->next;
            free(n);
            n = next;
        }
    }
    free(m->buckets);
    free(m);
}

/* The link that points at name's entry (or at the NULL ending its chain). */
static struct node **find(const wr_qmap_t *m, const char *name, size_t len, uint64_t h)
{
    struct node **pp = &m->buckets[h & (m->nbuckets - 1)];
    while (*pp && ((*pp)->hash != h || memcmp((*pp)->name, name, len + 1) != 0))
        pp = &(*pp)->next;
    return pp;
}

void *wr_qmap_get(const wr_qmap_t *m, const char *name)
{
    if (!wr_ids_valid_queue(name))
        return NULL;
    size_t len = strlen(name);
    struct node *n = *find(m, name, len, hash_of(m, name, len));
    return n ? n->value : NULL;
}

/* Doubles the bucket array. WR_OK or WR_ENOMEM (map unchanged). */
static wr_err_t grow(wr_qmap_t *m)
{
    size_t nb = m->nbuckets * 2;
    struct node **b = calloc(nb, sizeof *b);
    if (!b)
        return WR_ENOMEM;
    for (size_t i = 0; i < m->nbuckets; i++) {
        struct node *n = m->buckets[i];
        while (n) {
            struct node *next = n->next;
            n->next = b[n->hash & (nb - 1)];
            b[n->hash & (nb - 1)] = n;
            n = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
    return WR_OK;
}

wr_err_t wr_qmap_put(wr_qmap_t *m, const char *name, void *value)
{
    if (!value || !wr_ids_valid_queue(name))
        return WR_EINVAL;
    size_t len = strlen(name);
    uint64_t h = hash_of(m, name, len);
    struct node **pp = find(m, name, len, h);
    if (*pp) {
        (*pp)->value = value;
        return WR_OK;
    }
    if (m->count + 1 > m->nbuckets) {
        if (grow(m) != WR_OK)
            return WR_ENOMEM;
        pp = find(m, name, len, h);
    }
    struct node *n = malloc(sizeof *n);
    if (!n)
        return WR_ENOMEM;
    n->next = NULL;
    n->hash = h;
    n->value = value;
    memcpy(n->name, name, len + 1);
    *pp = n;
    m->count++;
    return WR_OK;
}

void *wr_qmap_remove(wr_qmap_t *m, const char *name)
{
    if (!wr_ids_valid_queue(name))
        return NULL;
    size_t len = strlen(name);
    struct node **pp = find(m, name, len, hash_of(m, name, len));
    struct node *n = *pp;
    if (!n)
        return NULL;
    *pp = n->next;
    void *value = n->value;
    free(n);
    m->count--;
    return value;
}

size_t wr_qmap_count(const wr_qmap_t *m)
{
    return m->count;
}

bool wr_qmap_next(const wr_qmap_t *m, wr_qmap_iter_t *it, const char **name, void **value)
{
    struct node *n = it->node;
    while (!n && it->bucket < m->nbuckets)
        n = m->buckets[it->bucket++];
    if (!n)
        return false;
    it->node = n->next;
    *name = n->name;
    *value = n->value;
    return true;
}
