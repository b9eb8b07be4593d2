/*
 * ratelimit.c - bounded table of token buckets (joins per address) and poll
 * pacing (polls per identity); client address behind trusted proxies.
 *
 * Structure: `ents` is an array of max_keys entries allocated once. A used
 * entry is in exactly one hash chain (heads[h0 & mask], linked by `chain`)
 * and in the LRU list (lru_prev/lru_next, most recent at lru_head). Unused
 * entries are either beyond n_used or in the free list (linked by `chain`),
 * which forget() feeds. An insert takes a free entry, then a never-used
 * one, and only when the table is full evicts the LRU tail. Indices are
 * uint32_t with NIL as "none"; max_keys <= 2^24 keeps them small.
 *
 * Keys are hashed with SipHash-1-3 under two random 128-bit keys (one per
 * digest half), drawn from wr_rng_entropy() at creation; the 128-bit digest is
 * all an entry keeps of its key, so entries have a fixed size and two
 * different keys share a bucket with probability 2^-128.
 *
 * Time: the injected clock (microseconds); buckets refill continuously,
 * tokens = min(burst, tokens + elapsed * rate). Nothing here allocates
 * after creation and nothing is global; one limiter is used from one
 * thread (the event loop).
 */
#include "core/ratelimit.h"

#include "base/clock.h"
#include "base/rng.h"
#include "base/siphash.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX

typedef struct {
    uint64_t h0, h1;
    double tokens;
    int64_t t_us;          /* tokens is as of this time */
    int64_t not_before_us; /* pacing: earliest on-time poll; 0 = none */
    uint32_t chain;        /* next in hash chain, or in the free list */
    uint32_t lru_prev, lru_next;
} entry_t;

struct wr_ratelimit {
    double rate, burst;
    wr_ratelimit_clock_fn clock;
    void *clock_arg;
    uint64_t k[4]; /* SipHash keys: k[0..1] for h0, k[2..3] for h1 */
    entry_t *ents;
    uint32_t *heads;
    uint32_t mask;
    uint32_t max, n_used, n_live;
    uint32_t free_head;
    uint32_t lru_head, lru_tail;
    uint64_t evictions;
};

/* Keys are hashed with SipHash-1-3 (siphash.h, the one implementation in
 * the tree), under two independent random keys. */

/* ---- table ---- */

/* The default clock (wr_ratelimit_clock_fn): monotonic. */
static int64_t mono_us(void *arg)
{
    (void)arg;
    return wr_clock_mono_us();
}

wr_err_t wr_ratelimit_new(const wr_ratelimit_opts_t *opts, wr_ratelimit_t **out)
{
    size_t max = opts->max_keys ? opts->max_keys : WR_RATELIMIT_KEYS_DEFAULT;
    if (max > WR_RATELIMIT_KEYS_MAX)
        return WR_EINVAL;
    wr_ratelimit_t *rl = calloc(1, sizeof(*rl));
    if (!rl)
        return WR_ENOMEM;
    size_t nb = 1;
    while (nb < max)
        nb <<= 1;
    rl->ents = calloc(max, sizeof(*rl->ents));
    rl->heads = malloc(nb * sizeof(*rl->heads));
    if (!rl->ents || !rl->heads) {
        wr_ratelimit_free(rl);
        return WR_ENOMEM;
    }
    for (size_t i = 0; i < nb; i++)
        rl->heads[i] = NIL;
    rl->mask = (uint32_t)(nb - 1);
    rl->max = (uint32_t)max;
    rl->free_head = rl->lru_head = rl->lru_tail = NIL;
    rl->rate = opts->rate > 0 && isfinite(opts->rate) ? opts->rate : 0;
    rl->burst = opts->burst >= 1 && isfinite(opts->burst) ? opts->burst : 1;
    rl->clock = opts->clock ? opts->clock : mono_us;
    rl->clock_arg = opts->clock_arg;
    wr_rng_entropy(rl->k, sizeof(rl->k));
    *out = rl;
    return WR_OK;
}

void wr_ratelimit_free(wr_ratelimit_t *rl)
{
    if (!rl)
        return;
    free(rl->ents);
    free(rl->heads);
    free(rl);
}

bool wr_ratelimit_enabled(const wr_ratelimit_t *rl)
{
    return rl && rl->rate > 0;
}

size_t wr_ratelimit_size(const wr_ratelimit_t *rl)
{
    return rl ? rl->n_live : 0;
}

uint64_t wr_ratelimit_evictions(const wr_ratelimit_t *rl)
{
    return rl ? rl->evictions : 0;
}

static void lru_unlink(wr_ratelimit_t *rl, uint32_t i)
{
    entry_t *e = &rl->ents[i];
    if (e->lru_prev != NIL)
        rl->ents[e->lru_prev].lru_next = e->lru_next;
    else
        rl->lru_head = e->lru_next;
    if (e->lru_next != NIL)
        rl->ents[e->lru_next].lru_prev = e->lru_prev;
    else
        rl->lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NIL;
}

static void lru_push_head(wr_ratelimit_t *rl, uint32_t i)
{
    entry_t *e = &rl->ents[i];
    e->lru_prev = NIL;
    e->lru_next = rl->lru_head;
    if (rl->lru_head != NIL)
        rl->ents[rl->lru_head].lru_prev = i;
    rl->lru_head = i;
    if (rl->lru_tail == NIL)
        rl->lru_tail = i;
}

/* Removes entry i from its hash chain. */
static void chain_unlink(wr_ratelimit_t *rl, uint32_t i)
{
    uint32_t *p = &rl->heads[rl->ents[i].h0 & rl->mask];
    while (*p != NIL && *p != i)
        p = &rl->ents[*p].chain;
    if (*p == i)
        *p = rl->ents[i].chain;
}

static void digest(const wr_ratelimit_t *rl, const void *key, size_t len, uint64_t *h0,
                   uint64_t *h1)
{
    *h0 = wr_siphash13(rl->k[0], rl->k[1], key, len);
    *h1 = wr_siphash13(rl->k[2], rl->k[3], key, len);
}

static uint32_t find(wr_ratelimit_t *rl, uint64_t h0, uint64_t h1)
{
    for (uint32_t i = rl->heads[h0 & rl->mask]; i != NIL; i = rl->ents[i].chain)
        if (rl->ents[i].h0 == h0 && rl->ents[i].h1 == h1)
            return i;
    return NIL;
}

/* Finds or creates (full bucket) the entry of key; most recent in LRU. */
static entry_t *get(wr_ratelimit_t *rl, const void *key, size_t len, int64_t now, bool create)
{
    uint64_t h0, h1;
    digest(rl, key, len, &h0, &h1);
    uint32_t i = find(rl, h0, h1);
    if (i != NIL) {
        lru_unlink(rl, i);
        lru_push_head(rl, i);
        return &rl->ents[i];
    }
    if (!create)
        return NULL;
    if (rl->free_head != NIL) {
        i = rl->free_head;
        rl->free_head = rl->ents[i].chain;
    } else if (rl->n_used < rl->max) {
        i = rl->n_used++;
    } else {
        i = rl->lru_tail;
        lru_unlink(rl, i);
        chain_unlink(rl, i);
        rl->evictions++;
        rl->n_live--;
    }
    entry_t *e = &rl->ents[i];
    memset(e, 0, sizeof(*e));
    e->h0 = h0;
    e->h1 = h1;
    e->tokens = rl->burst;
    e->t_us = now;
    e->chain = rl->heads[h0 & rl->mask];
    rl->heads[h0 & rl->mask] = i;
    e->lru_prev = e->lru_next = NIL;
    lru_push_head(rl, i);
    rl->n_live++;
    return e;
}

static void refill(const wr_ratelimit_t *rl, entry_t *e, int64_t now)
{
    if (now > e->t_us) {
        e->tokens += (double)(now - e->t_us) / 1e6 * rl->rate;
        if (e->tokens > rl->burst)
            e->tokens = rl->burst;
    }
    e->t_us = now; /* a clock step back only delays refill */
}

static uint32_t ms_ceil(double us)
{
    double ms = ceil(us / 1000.0);
    if (ms < 1)
        return 1;
    if (ms > 86400000.0)
        return 86400000u;
    return (uint32_t)ms;
}

/* Spends one token if there is one; else sets *wait_us. */
static bool spend(const wr_ratelimit_t *rl, entry_t *e, int64_t now, double *wait_us)
{
    refill(rl, e, now);
    if (e->tokens >= 1.0) {
        e->tokens -= 1.0;
        return true;
    }
    *wait_us = (1.0 - e->tokens) / rl->rate * 1e6;
    return false;
}

bool wr_ratelimit_take(wr_ratelimit_t *rl, const void *key, size_t len, uint32_t *retry_after_ms)
{
    if (!wr_ratelimit_enabled(rl))
        return true;
    int64_t now = rl->clock(rl->clock_arg);
    entry_t *e = get(rl, key, len, now, true);
    double wait_us = 0;
    if (spend(rl, e, now, &wait_us))
        return true;
    if (retry_after_ms)
        *retry_after_ms = ms_ceil(wait_us);
    return false;
}

bool wr_ratelimit_pace_check(wr_ratelimit_t *rl, const void *key, size_t len,
                             uint32_t *retry_after_ms)
{
    if (!wr_ratelimit_enabled(rl))
        return true;
    int64_t now = rl->clock(rl->clock_arg);
    entry_t *e = get(rl, key, len, now, false);
    if (!e || e->not_before_us == 0 || now >= e->not_before_us)
        return true;
    double wait_us = 0;
    if (spend(rl, e, now, &wait_us))
        return true;
    if (retry_after_ms)
        *retry_after_ms = ms_ceil((double)(e->not_before_us - now));
    return false;
}

void wr_ratelimit_pace_note(wr_ratelimit_t *rl, const void *key, size_t len, uint32_t min_gap_ms)
{
    if (!wr_ratelimit_enabled(rl))
        return;
    int64_t now = rl->clock(rl->clock_arg);
    entry_t *e = get(rl, key, len, now, true);
    e->not_before_us = now + (int64_t)min_gap_ms * 1000;
}

void wr_ratelimit_forget(wr_ratelimit_t *rl, const void *key, size_t len)
{
    if (!rl)
        return;
    uint64_t h0, h1;
    digest(rl, key, len, &h0, &h1);
    uint32_t i = find(rl, h0, h1);
    if (i == NIL)
        return;
    lru_unlink(rl, i);
    chain_unlink(rl, i);
    rl->ents[i].chain = rl->free_head;
    rl->free_head = i;
    rl->n_live--;
}

/* ---- client addresses ---- */

/* Parses an IPv4 or IPv6 address (n bytes) into the IPv6 form; *v4 set for IPv4. */
static bool parse_addr(const char *s, size_t n, uint8_t out[16], bool *v4)
{
    char buf[64];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    struct in_addr a4;
    if (inet_pton(AF_INET, buf, &a4) == 1) {
        memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &a4, 4);
        *v4 = true;
        return true;
    }
    *v4 = false;
    return inet_pton(AF_INET6, buf, out) == 1;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Trims [*s, *e) of spaces. */
static void trim(const char **s, const char **e)
{
    while (*s < *e && is_space(**s))
        (*s)++;
    while (*e > *s && is_space((*e)[-1]))
        (*e)--;
}

wr_err_t wr_ratelimit_cidrs_parse(const char *list, wr_cidr_t *out, size_t cap, size_t *n,
                                  char *bad, size_t badcap)
{
    size_t count = 0;
    const char *p = list ? list : "";
    while (*p) {
        const char *e = strchr(p, ',');
        const char *end = e ? e : p + strlen(p);
        const char *s = p, *t = end;
        trim(&s, &t);
        p = e ? e + 1 : end;
        if (s == t) {
            if (!e && count > 0)
                break; /* a trailing comma */
            goto fail;
        }
        const char *slash = memchr(s, '/', (size_t)(t - s));
        wr_cidr_t c;
        bool v4;
        if (!parse_addr(s, (size_t)((slash ? slash : t) - s), c.addr, &v4))
            goto fail;
        unsigned prefix = v4 ? 32 : 128;
        if (slash) {
            const char *d = slash + 1;
            if (d == t || t - d > 3)
                goto fail;
            unsigned v = 0;
            for (; d < t; d++) {
                if (*d < '0' || *d > '9')
                    goto fail;
                v = v * 10 + (unsigned)(*d - '0');
            }
            if (v > prefix)
                goto fail;
            prefix = v;
        }
        c.prefix = (uint8_t)(v4 ? prefix + 96 : prefix);
        if (count >= cap)
            return WR_ELIMIT;
        out[count++] = c;
        continue;
    fail:
        if (bad && badcap) {
            size_t bl = (size_t)(t - s) < badcap - 1 ? (size_t)(t - s) : badcap - 1;
            memcpy(bad, s, bl);
            bad[bl] = '\0';
        }
        return WR_EINVAL;
    }
    *n = count;
    return WR_OK;
}

static bool in_net(const wr_cidr_t *c, const uint8_t a[16])
{
    unsigned full = c->prefix / 8, rest = c->prefix % 8;
    if (memcmp(c->addr, a, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t m = (uint8_t)(0xff << (8 - rest));
    return (c->addr[full] & m) == (a[full] & m);
}

static bool match_bin(const wr_cidr_t *nets, size_t n, const uint8_t a[16])
{
    for (size_t i = 0; i < n; i++)
        if (in_net(&nets[i], a))
            return true;
    return false;
}

bool wr_ratelimit_cidrs_match(const wr_cidr_t *nets, size_t n, const char *addr)
{
    uint8_t a[16];
    bool v4;
    if (!addr || !parse_addr(addr, strlen(addr), a, &v4))
        return false;
    return match_bin(nets, n, a);
}

static void copy_out(char *out, size_t cap, const char *s, size_t n)
{
    if (cap == 0)
        return;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

void wr_ratelimit_client_addr(const char *peer, const char *xff, const wr_cidr_t *nets, size_t n,
                              char *out, size_t cap)
{
    const char *best = peer ? peer : "";
    size_t best_len = strlen(best);
    if (!xff || n == 0 || !wr_ratelimit_cidrs_match(nets, n, best)) {
        copy_out(out, cap, best, best_len);
        return;
    }
    /* Walk X-Forwarded-For from the right, from its real end: a bound
     * below the request header limit (32 KiB) would start the walk inside
     * a long value the client wrote, and take its address. */
    const char *end = xff + strlen(xff);
    while (end > xff) {
        const char *start = end;
        while (start > xff && start[-1] != ',')
            start--;
        const char *s = start, *t = end;
        trim(&s, &t);
        end = start > xff ? start - 1 : xff;
        uint8_t a[16];
        bool v4;
        if (!parse_addr(s, (size_t)(t - s), a, &v4))
            break; /* malformed: keep the last trusted hop's view */
        best = s;
        best_len = (size_t)(t - s);
        if (!match_bin(nets, n, a))
            break; /* the first untrusted address from the right: the client */
    }
    copy_out(out, cap, best, best_len);
}
