/*
 * logreplay.c - the replay of a public log (logreplay.h).
 *
 * Places: one record per join (a person who joins again gets a new one),
 * never changed in its order key, found by log id through an idhash that
 * holds each person's latest place, allocated from fixed blocks so the
 * whole replay frees in one pass (about 90 bytes a join).
 *
 * The line of each group is a binary min-heap of places on the
 * order key (class: 0 pre-queue, 1 the rest; the opening's number; the
 * draw rank; t; the join's log index). Only places in the line and not
 * away are admissible, and a place leaves that set only by going away,
 * being admitted or leaving, never to come back (an unseen pass puts a
 * place back as away): so instead of deleting from the middle, the heap
 * keeps stale entries and drops them when they reach the top. Each entry
 * is pushed once and popped once: O(log n) amortized per leaf, whatever
 * the order of events.
 *
 * Pre-queue joins made while a commit awaits its draw go to the opening's
 * pending list instead; the draw checks its commit, computes every
 * pending person's rank and pushes them.
 */
#include "core/logreplay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hex.h"
#include "base/idhash.h"
#include "base/names.h"

enum { OUT, IN_LINE, AWAY, PENDING_DRAW };

typedef struct person {
    uint8_t u[WR_LOGLEAF_U_BYTES]; /* the key */
    uint8_t state;
    uint8_t group;
    /* the order key of this join (set once) */
    uint8_t cls; /* 0 pre-queue, 1 the rest */
    uint32_t opening;
    uint8_t rank[32];
    int64_t t;
    uint64_t index;
} person_t;

typedef person_t *entry_t;

typedef struct {
    char name[WR_LOGLEAF_GROUP_MAX + 1];
    entry_t *heap;
    size_t len, cap;
} group_t;

#define BLOCK 4096 /* people per allocation */

struct wr_logreplay {
    wr_logreplay_stats_t st;
    wr_idhash_t *people;
    person_t **blocks;
    size_t nblocks, used; /* people in the last block */
    group_t groups[WR_LOGREPLAY_GROUPS];
    size_t ngroups;
    wr_crypto_sha256_t *sha;
    /* the opening: a commit awaiting its draw, the pre-queue joins it got */
    bool committed;
    uint32_t opening;
    uint8_t seed_hash[32];
    bool beacon;
    char beacon_url[WR_LOGLEAF_URL_MAX + 1];
    uint64_t round;
    person_t **pending;
    size_t npending, pending_cap;
};

static const char *key_of(const void *item, size_t *len)
{
    *len = WR_LOGLEAF_U_BYTES;
    return (const char *)((const person_t *)item)->u;
}

wr_logreplay_t *wr_logreplay_new(void)
{
    wr_logreplay_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->people = wr_idhash_new(key_of);
    r->sha = wr_crypto_sha256_new();
    r->ngroups = 1; /* the standard line, "" */
    r->st.draw_independent = true;
    if (!r->people || !r->sha) {
        wr_logreplay_free(r);
        return NULL;
    }
    return r;
}

void wr_logreplay_free(wr_logreplay_t *r)
{
    if (!r)
        return;
    wr_idhash_free(r->people);
    for (size_t i = 0; i < r->nblocks; i++)
        free(r->blocks[i]);
    free(r->blocks);
    for (size_t i = 0; i < r->ngroups; i++)
        free(r->groups[i].heap);
    free(r->pending);
    wr_crypto_sha256_free(r->sha);
    free(r);
}

const wr_logreplay_stats_t *wr_logreplay_stats(const wr_logreplay_t *r)
{
    return &r->st;
}

const char *wr_logreplay_why_name(wr_logreplay_why_t why)
{
    static const char *const names[] = {
        [WR_LOGREPLAY_NOT_FIRST] = "notFirst",
        [WR_LOGREPLAY_NOT_AWAY] = "notAway",
        [WR_LOGREPLAY_NOT_IN_LINE] = "notInLine",
        [WR_LOGREPLAY_UNDRAWN] = "undrawn",
    };
    return WR_NAMES_GET(names, why, "?");
}

/* Records a problem of the current leaf (invalid leaf or failed draw):
 * what, then arg (may be NULL). */
static void problem(wr_logreplay_t *r, const char *what, const char *arg)
{
    uint64_t k = r->st.problems++;
    if (k >= WR_LOGREPLAY_LISTED)
        return;
    r->st.problem[k].index = r->st.leaves;
    snprintf(r->st.problem[k].what, sizeof r->st.problem[k].what, "%s%s%s", what, arg ? " " : "",
             arg ? arg : "");
}

static void invalid(wr_logreplay_t *r, const char *what, const char *arg)
{
    r->st.invalid++;
    problem(r, what, arg);
}

static void draw_failed(wr_logreplay_t *r, const char *what)
{
    r->st.draw_failures++;
    problem(r, "draw:", what);
}

/* ---------- the heap */

/* True when a orders before b. */
static bool before(const person_t *a, const person_t *b)
{
    if (a->cls != b->cls)
        return a->cls < b->cls;
    if (a->opening != b->opening)
        return a->opening < b->opening;
    int c = memcmp(a->rank, b->rank, sizeof a->rank);
    if (c != 0)
        return c < 0;
    if (a->t != b->t)
        return a->t < b->t;
    return a->index < b->index;
}

static wr_err_t heap_push(group_t *g, person_t *p)
{
    entry_t *h = wr_array_grow(g->heap, &g->cap, g->len + 1, sizeof(*h), 256, false);
    if (!h)
        return WR_ENOMEM;
    g->heap = h;
    size_t i = g->len++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!before(p, g->heap[up]))
            break;
        g->heap[i] = g->heap[up];
        i = up;
    }
    g->heap[i] = p;
    return WR_OK;
}

static void heap_pop(group_t *g)
{
    entry_t last = g->heap[--g->len];
    size_t i = 0, n = g->len;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(g->heap[c + 1], g->heap[c]))
            c++;
        if (!before(g->heap[c], last))
            break;
        g->heap[i] = g->heap[c];
        i = c;
    }
    if (n > 0)
        g->heap[i] = last;
}

/* The first admissible person of g (stale entries dropped), or NULL. */
static person_t *heap_first(group_t *g)
{
    while (g->len > 0) {
        if (g->heap[0]->state == IN_LINE)
            return g->heap[0];
        heap_pop(g);
    }
    return NULL;
}

/* ---------- people and groups */

static int group_of(wr_logreplay_t *r, const char *name)
{
    for (size_t i = 0; i < r->ngroups; i++) {
        if (strcmp(r->groups[i].name, name) == 0)
            return (int)i;
    }
    if (r->ngroups == WR_LOGREPLAY_GROUPS)
        return -1;
    snprintf(r->groups[r->ngroups].name, sizeof r->groups[0].name, "%s", name);
    return (int)r->ngroups++;
}

static person_t *find(wr_logreplay_t *r, const char *u)
{
    uint8_t b[WR_LOGLEAF_U_BYTES];
    if (wr_logleaf_u_bytes(u, b) != WR_OK)
        return NULL;
    return wr_idhash_get(r->people, (const char *)b, sizeof b);
}

/* A new place for u, replacing u's previous one in the table. */
static person_t *make(wr_logreplay_t *r, const char *u, person_t *old)
{
    if (r->nblocks == 0 || r->used == BLOCK) {
        person_t **blocks = realloc(r->blocks, (r->nblocks + 1) * sizeof(*blocks));
        if (!blocks)
            return NULL;
        r->blocks = blocks;
        if (!(blocks[r->nblocks] = calloc(BLOCK, sizeof(person_t))))
            return NULL;
        r->nblocks++;
        r->used = 0;
    }
    person_t *p = &r->blocks[r->nblocks - 1][r->used];
    if (wr_logleaf_u_bytes(u, p->u) != WR_OK)
        return NULL;
    if (old)
        wr_idhash_del(r->people, (const char *)old->u, sizeof old->u);
    if (wr_idhash_put(r->people, p) != WR_OK)
        return NULL;
    r->used++;
    return p;
}

static wr_err_t pending_add(wr_logreplay_t *r, person_t *p)
{
    person_t **a =
        wr_array_grow(r->pending, &r->pending_cap, r->npending + 1, sizeof(*a), 256, false);
    if (!a)
        return WR_ENOMEM;
    r->pending = a;
    r->pending[r->npending++] = p;
    return WR_OK;
}

/* ---------- the events */

static wr_err_t on_join(wr_logreplay_t *r, const wr_logleaf_t *l)
{
    person_t *p = find(r, l->u);
    if (p && p->state != OUT) {
        invalid(r, "a second join of someone in the line:", l->u);
        return WR_OK;
    }
    int g = group_of(r, l->grp);
    if (g < 0) {
        invalid(r, "a join into one group too many:", l->grp);
        return WR_OK;
    }
    if (!(p = make(r, l->u, p)))
        return WR_ENOMEM;
    p->group = (uint8_t)g;
    p->cls = l->pre ? 0 : 1;
    p->t = l->t;
    p->index = r->st.leaves;
    r->st.joined++;
    r->st.waiting++;
    if (l->pre && r->committed) {
        p->state = PENDING_DRAW;
        return pending_add(r, p);
    }
    p->state = IN_LINE;
    return heap_push(&r->groups[g], p);
}

static void overtake(wr_logreplay_t *r, const wr_logleaf_t *l, wr_logreplay_why_t why,
                     const person_t *first)
{
    uint64_t k = r->st.overtakes++;
    if (k >= WR_LOGREPLAY_LISTED)
        return;
    wr_logreplay_overtake_t *o = &r->st.overtake[k];
    o->index = r->st.leaves;
    o->why = why;
    snprintf(o->u, sizeof o->u, "%s", l->u);
    snprintf(o->grp, sizeof o->grp, "%s", l->grp);
    o->expected[0] = '\0';
    if (first)
        wr_hex_encode(first->u, WR_LOGLEAF_U_BYTES, o->expected);
}

static void on_admit(wr_logreplay_t *r, const wr_logleaf_t *l)
{
    person_t *p = find(r, l->u);
    r->st.admitted++;
    if (l->held)
        r->st.held_returns++;
    if (!p || p->state == OUT) {
        overtake(r, l, WR_LOGREPLAY_NOT_IN_LINE, NULL);
        return;
    }
    if (strcmp(r->groups[p->group].name, l->grp) != 0)
        invalid(r, "an admit in another group than the join:", l->u);
    r->st.waiting--;
    if (l->held) {
        if (p->state != AWAY)
            overtake(r, l, WR_LOGREPLAY_NOT_AWAY, NULL);
    } else if (p->state == PENDING_DRAW) {
        overtake(r, l, WR_LOGREPLAY_UNDRAWN, NULL);
    } else {
        person_t *first = heap_first(&r->groups[p->group]);
        if (first != p) /* an away person too: they are not the first who is not away */
            overtake(r, l, WR_LOGREPLAY_NOT_FIRST, first);
    }
    p->state = OUT; /* its heap entry, if any, is stale from now */
}

static void on_away(wr_logreplay_t *r, const wr_logleaf_t *l)
{
    person_t *p = find(r, l->u);
    if (l->unseen) {
        /* an admitted person's unseen pass expired: back in the line, away */
        if (!p || p->state != OUT) {
            r->st.stray++;
            return;
        }
        p->state = AWAY;
        r->st.waiting++;
        r->st.away++;
        return;
    }
    if (!p || p->state != IN_LINE) {
        r->st.stray++;
        return;
    }
    p->state = AWAY;
    r->st.away++;
}

static void on_leave(wr_logreplay_t *r, const wr_logleaf_t *l)
{
    person_t *p = find(r, l->u);
    r->st.left[l->why]++;
    if (!p || p->state == OUT) {
        r->st.stray++;
        return;
    }
    p->state = OUT;
    r->st.waiting--;
}

static void on_commit(wr_logreplay_t *r, const wr_logleaf_t *l)
{
    if (r->committed)
        draw_failed(r, "a commit before the previous one's draw");
    r->committed = true;
    r->opening++;
    memcpy(r->seed_hash, l->seed_hash, 32);
    r->beacon = l->beacon;
    snprintf(r->beacon_url, sizeof r->beacon_url, "%s", l->beacon_url);
    r->round = l->round;
    r->npending = 0;
}

static wr_err_t on_draw(wr_logreplay_t *r, const wr_logleaf_t *l)
{
    r->st.draws++;
    uint8_t h[32], d[32];
    if (!r->committed) {
        draw_failed(r, "no commit before it");
        return WR_OK;
    }
    r->committed = false;
    if (wr_crypto_sha256_digest(r->sha, l->seed, WR_LOGLEAF_SEED, h) != WR_OK)
        return WR_ENOMEM;
    if (memcmp(h, r->seed_hash, 32) != 0)
        draw_failed(r, "the seed is not the one committed");
    if (r->beacon != l->beacon ||
        (l->beacon && (r->round != l->round || strcmp(r->beacon_url, l->beacon_url) != 0)))
        draw_failed(r, "the beacon or round is not the one committed");
    if (!l->beacon || l->randomness_len == 0 || l->beacon_error[0])
        r->st.draw_independent = false;
    if (wr_logleaf_draw_value(r->sha, l->seed, l->randomness, l->randomness_len, d) != WR_OK)
        return WR_ENOMEM;
    uint64_t n = 0;
    for (size_t i = 0; i < r->npending; i++) {
        person_t *p = r->pending[i];
        if (p->state != PENDING_DRAW)
            continue; /* left before the draw */
        n++;
        p->state = IN_LINE;
        p->opening = r->opening;
        if (wr_logleaf_draw_rank(r->sha, d, p->u, p->rank) != WR_OK)
            return WR_ENOMEM;
        wr_err_t err = heap_push(&r->groups[p->group], p);
        if (err != WR_OK)
            return err;
    }
    r->npending = 0;
    if (n != l->n)
        draw_failed(r, "n is not the number of people in the pre-queue");
    return WR_OK;
}

wr_err_t wr_logreplay_apply(wr_logreplay_t *r, const wr_logleaf_t *l)
{
    wr_err_t err = WR_OK;
    switch (l->e) {
    case WR_LOGLEAF_JOIN:
        err = on_join(r, l);
        break;
    case WR_LOGLEAF_ADMIT:
        on_admit(r, l);
        break;
    case WR_LOGLEAF_AWAY:
        on_away(r, l);
        break;
    case WR_LOGLEAF_LEAVE:
        on_leave(r, l);
        break;
    case WR_LOGLEAF_COMMIT:
        on_commit(r, l);
        break;
    case WR_LOGLEAF_DRAW:
        err = on_draw(r, l);
        break;
    case WR_LOGLEAF_FAILOPEN:
        r->st.fail_open += l->n;
        break;
    }
    r->st.leaves++;
    r->st.draw_pending = r->committed;
    return err;
}

wr_err_t wr_logreplay_feed(wr_logreplay_t *r, const char *leaf, size_t len)
{
    wr_logleaf_t l;
    char msg[80];
    if (wr_logleaf_parse(leaf, len, &l, msg, sizeof msg) != WR_OK) {
        invalid(r, "a malformed leaf:", msg);
        r->st.leaves++;
        return WR_OK;
    }
    return wr_logreplay_apply(r, &l);
}
