/*
 * failopen.c - degraded mode: the local spent set and the burn replay
 * (failopen.h says what and why).
 *
 * Structure: every spent pass is one `struct spent` (its queue, user, jti,
 * expiry, kind), held by an id hash keyed by "queue\0jti" (idhash.h: keyed
 * SipHash, so chosen jtis cannot flood it). A pass whose burn is still
 * owed to the store is also on the pending FIFO (queued) or in flight in a
 * store call (in_flight); it stays in the hash after its burn until it
 * expires, so this instance keeps refusing it locally even if the store
 * forgot.
 *
 * Timer (persistent, TICK_MS): sends up to MAX_IN_FLIGHT queued burns;
 * every SWEEP_TICKS ticks drops expired passes. A store failure (WR_EUNAVAILABLE,
 * WR_ETIMEOUT, WR_ECANCELED) puts the pass back at the front of the FIFO;
 * any other answer settles it (logged at debug).
 *
 * Lifetime: a store call in flight points at its pass, and the pass at the
 * object; wr_failopen_free with calls in flight marks the object dead and
 * the last callback frees it (the store calls every callback once, also on
 * close).
 */
#include "runtime/failopen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include "base/idhash.h"
#include "base/log.h"

#define TICK_MS       250
#define SWEEP_TICKS   40 /* 10 s */
#define MAX_IN_FLIGHT 64
#define KEY_MAX       (WR_QUEUE_NAME_MAX + 1 + WR_JTI_LEN)

typedef struct spent {
    STAILQ_ENTRY(spent) link; /* the pending FIFO */
    wr_failopen_t *f;
    bool queued;    /* on the pending FIFO */
    bool in_flight; /* its burn is in a store call */
    bool fail_open; /* burn (a fail-open or bypass pass) or consume (ordinary token) */
    bool noted;     /* the store's answer, no burn owed (wr_failopen_note_spent) */
    int64_t exp_s;
    char queue[WR_QUEUE_NAME_MAX + 1];
    char user[WR_USER_ID_MAX + 1];
    char jti[WR_JTI_LEN + 1];
    size_t klen;
    char key[KEY_MAX + 1];
} spent_t;

struct wr_failopen {
    wr_store_t *store;
    struct event *timer;
    wr_idhash_t *set;
    STAILQ_HEAD(spentq, spent) pending; /* burns owed, oldest first */
    size_t queued, in_flight;
    unsigned ticks;
    bool dead;
};

static const char *spent_key(const void *item, size_t *len)
{
    const spent_t *s = item;
    *len = s->klen;
    return s->key;
}

static size_t make_key(const char *queue, const char *jti, char key[KEY_MAX + 1])
{
    int n = snprintf(key, KEY_MAX + 1, "%s%c%s", queue, 0, jti);
    return n < 0 ? 0 : (size_t)n > KEY_MAX ? KEY_MAX : (size_t)n;
}

/* Whether the live entry s refuses the pass of cl: a pass spent here by
 * its jti; a note (the store's answer about one user's token) only for
 * that user. */
static bool refuses(const spent_t *s, const wr_token_claims_t *cl, int64_t now_s)
{
    return s && s->exp_s > now_s && (!s->noted || strcmp(s->user, cl->user) == 0);
}

static void push_back(wr_failopen_t *f, spent_t *s)
{
    STAILQ_INSERT_TAIL(&f->pending, s, link);
    s->queued = true;
    f->queued++;
}

static void push_front(wr_failopen_t *f, spent_t *s)
{
    STAILQ_INSERT_HEAD(&f->pending, s, link);
    s->queued = true;
    f->queued++;
}

static spent_t *pop_front(wr_failopen_t *f)
{
    spent_t *s = STAILQ_FIRST(&f->pending);
    if (!s)
        return NULL;
    STAILQ_REMOVE_HEAD(&f->pending, link);
    s->queued = false;
    f->queued--;
    return s;
}

/* Collects the passes of the set into an array (wr_idhash_foreach). */
typedef struct {
    spent_t **v;
    size_t n, cap;
    int64_t now_s; /* collect only expired idle passes; INT64_MAX = all */
} collect_t;

static void collect(void *item, void *arg)
{
    collect_t *c = arg;
    spent_t *s = item;
    if (c->n >= c->cap)
        return;
    if (c->now_s != INT64_MAX && (s->exp_s > c->now_s || s->queued || s->in_flight))
        return;
    c->v[c->n++] = s;
}

/* Drops the queued burns of expired passes, then every expired idle
 * pass. Returns how many passes were dropped. */
static size_t sweep(wr_failopen_t *f, int64_t now_s)
{
    STAILQ_HEAD(, spent) keep = STAILQ_HEAD_INITIALIZER(keep);
    spent_t *s;
    while ((s = pop_front(f)) != NULL)
        if (s->exp_s > now_s) /* else unsent: the store could not spend it anymore */
            STAILQ_INSERT_TAIL(&keep, s, link);
    while ((s = STAILQ_FIRST(&keep)) != NULL) {
        STAILQ_REMOVE_HEAD(&keep, link);
        push_back(f, s);
    }
    size_t cnt = wr_idhash_count(f->set);
    if (cnt == 0)
        return 0;
    collect_t c = {calloc(cnt, sizeof(spent_t *)), 0, cnt, now_s};
    if (!c.v)
        return 0;
    wr_idhash_foreach(f->set, collect, &c);
    for (size_t i = 0; i < c.n; i++) {
        wr_idhash_del(f->set, c.v[i]->key, c.v[i]->klen);
        free(c.v[i]);
    }
    free(c.v);
    return c.n;
}

static void really_free(wr_failopen_t *f)
{
    if (f->timer)
        event_free(f->timer);
    if (f->set) {
        size_t cnt = wr_idhash_count(f->set);
        collect_t c = {cnt ? calloc(cnt, sizeof(spent_t *)) : NULL, 0, cnt, INT64_MAX};
        if (c.v)
            wr_idhash_foreach(f->set, collect, &c);
        for (size_t i = 0; i < c.n; i++)
            free(c.v[i]);
        free(c.v);
        wr_idhash_free(f->set);
    }
    free(f);
}

static bool store_failure(wr_err_t err)
{
    return err == WR_EUNAVAILABLE || err == WR_ETIMEOUT || err == WR_ECANCELED || err == WR_ESHARD;
}

static void burned_cb(wr_err_t err, const wr_token_check_t *res, void *arg)
{
    spent_t *s = arg;
    wr_failopen_t *f = s->f;
    s->in_flight = false;
    f->in_flight--;
    if (f->dead) {
        if (f->in_flight == 0)
            really_free(f);
        return;
    }
    if (store_failure(err)) {
        push_front(f, s); /* the next round tries again */
        return;
    }
    wr_debug("degraded mode: replayed the %s of %s pass %s in queue %s: %s%s%s",
             s->fail_open ? "burn" : "consume", s->fail_open ? "fail-open" : "ordinary", s->jti,
             s->queue, wr_strerror(err), err == WR_ETOKEN && res ? " " : "",
             err == WR_ETOKEN && res ? wr_token_reason_name(res->reason) : "");
}

/* Sends queued burns, at most MAX_IN_FLIGHT in flight. */
static void replay(wr_failopen_t *f, int64_t now_s)
{
    while (!STAILQ_EMPTY(&f->pending) && f->in_flight < MAX_IN_FLIGHT) {
        spent_t *s = pop_front(f);
        if (s->exp_s <= now_s)
            continue; /* expired: nothing left to spend */
        s->in_flight = true;
        f->in_flight++;
        wr_err_t err =
            s->fail_open
                ? wr_store_burn(f->store, s->queue, s->jti, s->exp_s * 1000000, false, burned_cb, s)
                : wr_store_consume(f->store, s->queue, s->user, s->jti, burned_cb, s);
        if (err != WR_OK) {
            s->in_flight = false;
            f->in_flight--;
            if (store_failure(err)) {
                push_front(f, s);
                return; /* refused at once (breaker open): next round */
            }
            wr_debug("degraded mode: could not replay pass %s in queue %s: %s", s->jti, s->queue,
                     wr_strerror(err));
        }
    }
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wr_failopen_t *f = arg;
    int64_t now_s = (int64_t)time(NULL);
    if (++f->ticks >= SWEEP_TICKS) {
        f->ticks = 0;
        sweep(f, now_s);
    }
    if (!STAILQ_EMPTY(&f->pending))
        replay(f, now_s);
}

wr_err_t wr_failopen_new(struct event_base *base, wr_store_t *store, wr_failopen_t **out)
{
    wr_failopen_t *f = calloc(1, sizeof *f);
    if (!f)
        return WR_ENOMEM;
    f->store = store;
    STAILQ_INIT(&f->pending);
    f->set = wr_idhash_new(spent_key);
    f->timer = event_new(base, -1, EV_PERSIST, on_tick, f);
    if (!f->set || !f->timer) {
        really_free(f);
        return WR_ENOMEM;
    }
    struct timeval tv = {0, TICK_MS * 1000};
    event_add(f->timer, &tv);
    *out = f;
    return WR_OK;
}

void wr_failopen_free(wr_failopen_t *f)
{
    if (!f)
        return;
    if (f->queued)
        wr_warn("degraded mode: %zu burns were never written to the store", f->queued);
    if (f->in_flight) {
        event_del(f->timer);
        f->dead = true;
        return;
    }
    really_free(f);
}

bool wr_failopen_spent(const wr_failopen_t *f, const wr_token_claims_t *cl, int64_t now_s)
{
    char key[KEY_MAX + 1];
    size_t n = make_key(cl->queue, cl->jti, key);
    return refuses(wr_idhash_get(f->set, key, n), cl, now_s);
}

/* Records the pass of cl as spent here at now_s; its burn is queued when
 * owed. WR_ETOKEN when it was spent here already (nothing changed). A note
 * about another user's token with the same jti gives way. */
static wr_err_t record(wr_failopen_t *f, const wr_token_claims_t *cl, int64_t now_s, bool owed)
{
    char key[KEY_MAX + 1];
    size_t n = make_key(cl->queue, cl->jti, key);
    spent_t *old = wr_idhash_get(f->set, key, n);
    if (refuses(old, cl, now_s))
        return WR_ETOKEN;
    if (old) {
        /* expired (kept only until the next sweep), or a note about
         * another user: take its place */
        if (old->queued || old->in_flight)
            return WR_ETOKEN; /* cannot happen for a live token; be safe */
        wr_idhash_del(f->set, old->key, old->klen);
        free(old);
    }
    if (wr_idhash_count(f->set) >= WR_FAILOPEN_MAX && sweep(f, now_s) == 0)
        return WR_ELIMIT;
    spent_t *s = calloc(1, sizeof *s);
    if (!s)
        return WR_ENOMEM;
    s->f = f;
    s->fail_open = wr_token_off_store(cl);
    s->noted = !owed;
    s->exp_s = cl->exp;
    snprintf(s->queue, sizeof s->queue, "%s", cl->queue);
    snprintf(s->user, sizeof s->user, "%s", cl->user);
    snprintf(s->jti, sizeof s->jti, "%s", cl->jti);
    memcpy(s->key, key, n + 1);
    s->klen = n;
    if (wr_idhash_put(f->set, s) != WR_OK) {
        free(s);
        return WR_ENOMEM;
    }
    if (owed)
        push_back(f, s);
    return WR_OK;
}

wr_err_t wr_failopen_spend(wr_failopen_t *f, const wr_token_claims_t *cl, int64_t now_s)
{
    return record(f, cl, now_s, true);
}

wr_err_t wr_failopen_note_spent(wr_failopen_t *f, const wr_token_claims_t *cl, int64_t now_s)
{
    /* notes never take the second half of the set: it stays for the
     * passes spent during an outage */
    if (wr_idhash_count(f->set) >= WR_FAILOPEN_MAX / 2 && !wr_failopen_spent(f, cl, now_s))
        return WR_ELIMIT;
    wr_err_t err = record(f, cl, now_s, false);
    return err == WR_ETOKEN ? WR_OK : err;
}

size_t wr_failopen_pending(const wr_failopen_t *f)
{
    return f->queued + f->in_flight;
}

size_t wr_failopen_count(const wr_failopen_t *f)
{
    return wr_idhash_count(f->set);
}
