/*
 * pool.c - waitroom-sim: HTTP client pools, clock and seeded randomness (sim.h).
 *
 * A pool is a fixed set of keep-alive evhttp connections with at most one
 * request in flight each; requests beyond that wait in the pool's FIFO.
 * An op is owned by its pool while queued or in flight and freed after its
 * callback returns; the JSON body passed to the callback is borrowed.
 */
#include "sim.h"

/* ---------- small helpers ---------- */

/* Wall-clock ms: the report's time axis is wall time (base/clock.h). */
int64_t now_ms(void)
{
    return wr_clock_wall_us() / 1000;
}

double rnd(sim_t *s)
{
    return wr_rng_unit(&s->rng);
}

void timer_ms(struct event *ev, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    event_add(ev, &tv);
}

static bool parse_url(const char *url, char *host, size_t cap, uint16_t *port)
{
    if (!url || strncmp(url, "http://", 7) != 0)
        return false;
    const char *h = url + 7;
    const char *c = strchr(h, ':');
    if (!c || (size_t)(c - h) >= cap)
        return false;
    memcpy(host, h, (size_t)(c - h));
    host[c - h] = '\0';
    char *end;
    long p = strtol(c + 1, &end, 10);
    if ((*end && *end != '/') || p <= 0 || p > 65535)
        return false;
    *port = (uint16_t)p;
    return true;
}

int64_t series_index(sim_t *s, int64_t t)
{
    int64_t k = (t - s->t0_ms) / BUCKET_MS;
    if (k < 0 || (size_t)k >= s->ser.cap)
        return -1;
    return k;
}

void die_oom(void)
{
    fprintf(stderr, "waitroom-sim: out of memory\n");
    exit(1);
}

/* ---------- HTTP pools ---------- */

static void op_free(op_t *op)
{
    free(op->auth);
    free(op->body);
    free(op);
}

static void conn_release(conn_t *c);

static void req_done(struct evhttp_request *resp, void *arg)
{
    conn_t *c = arg;
    pool_t *p = c->pool;
    op_t *op = c->op;
    c->op = NULL;
    int code = resp ? evhttp_request_get_response_code(resp) : 0;
    json_t *body = NULL;
    if (resp && code > 0) {
        struct evbuffer *in = evhttp_request_get_input_buffer(resp);
        size_t len = in ? evbuffer_get_length(in) : 0;
        if (len > 0 && len < 65536) {
            const char *data = (const char *)evbuffer_pullup(in, (ssize_t)len);
            if (data)
                body = json_loadb(data, len, 0, NULL);
        }
    }
    p->sent++;
    if (code == 0)
        p->errors++;
    conn_release(c);
    if (code == 0 && op->retries > 0) {
        op->retries--;
        pool_submit(p, op); /* the connection reconnects on the next request */
        return;
    }
    op->cb(op, code, body);
    json_decref(body);
    op_free(op);
}

void dispatch(conn_t *c, op_t *op)
{
    pool_t *p = c->pool;
    c->op = op;
    struct evhttp_request *r = evhttp_request_new(req_done, c);
    if (!r)
        die_oom();
    struct evkeyvalq *h = evhttp_request_get_output_headers(r);
    char hosthdr[80];
    snprintf(hosthdr, sizeof(hosthdr), "%s:%u", p->host, p->port);
    evhttp_add_header(h, "Host", hosthdr);
    if (op->user[0])
        evhttp_add_header(h, "X-User-Id", op->user);
    if (op->auth)
        evhttp_add_header(h, "Authorization", op->auth);
    if (op->body) {
        evhttp_add_header(h, "Content-Type", "application/json");
        /* libevent adds Content-Length itself for POST and PUT only (PATCH) */
        char clen[24];
        snprintf(clen, sizeof(clen), "%zu", strlen(op->body));
        evhttp_add_header(h, "Content-Length", clen);
        evbuffer_add(evhttp_request_get_output_buffer(r), op->body, strlen(op->body));
    }
    if (p->count_load) {
        p->sim->wr_requests++;
        int64_t k = series_index(p->sim, now_ms());
        if (k >= 0)
            p->sim->ser.wr_requests[k]++;
    }
    if (evhttp_make_request(c->ec, r, op->method, op->path) != 0) {
        fprintf(stderr, "waitroom-sim: cannot send a request to %s:%u\n", p->host, p->port);
        exit(1);
    }
}

/* The connection is free: it takes the next queued op or becomes idle. */
static void conn_release(conn_t *c)
{
    pool_t *p = c->pool;
    op_t *op = p->qh;
    if (op) {
        p->qh = op->next;
        if (!p->qh)
            p->qt = NULL;
        op->next = NULL;
        dispatch(c, op);
        return;
    }
    c->next_idle = p->idle;
    p->idle = c;
}

void pool_submit(pool_t *p, op_t *op)
{
    op->pool = p;
    conn_t *c = p->idle;
    if (c) {
        p->idle = c->next_idle;
        dispatch(c, op);
        return;
    }
    op->next = NULL;
    if (p->qt)
        p->qt->next = op;
    else
        p->qh = op;
    p->qt = op;
}

op_t *op_new(enum evhttp_cmd_type m, const char *path, const char *user, op_cb cb, void *arg)
{
    op_t *op = calloc(1, sizeof(*op));
    if (!op)
        die_oom();
    op->method = m;
    snprintf(op->path, sizeof(op->path), "%s", path);
    if (user)
        snprintf(op->user, sizeof(op->user), "%s", user);
    op->cb = cb;
    op->arg = arg;
    return op;
}

void op_set_auth(op_t *op, const char *scheme_token)
{
    op->auth = strdup(scheme_token);
    if (!op->auth)
        die_oom();
}

op_t *admin_op(sim_t *s, enum evhttp_cmd_type m, op_cb cb)
{
    return admin_op_at(s, m, "", cb);
}

op_t *admin_op_at(sim_t *s, enum evhttp_cmd_type m, const char *tail, op_cb cb)
{
    char path[192], auth[300];
    snprintf(path, sizeof(path), "/v1/admin/queues/%s%s", s->queue, tail);
    snprintf(auth, sizeof(auth), "Bearer %s", s->admin_key);
    op_t *op = op_new(m, path, NULL, cb, s);
    op_set_auth(op, auth);
    return op;
}

bool pool_init(sim_t *s, pool_t *p, const char *name, const char *url, size_t n, bool count_load)
{
    p->sim = s;
    p->name = name;
    p->count_load = count_load;
    if (!parse_url(url, p->host, sizeof(p->host), &p->port)) {
        fprintf(stderr, "waitroom-sim: bad URL for %s: %s (want http://HOST:PORT)\n", name,
                url ? url : "(none)");
        return false;
    }
    p->conns = calloc(n, sizeof(*p->conns));
    if (!p->conns)
        return false;
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        conn_t *c = &p->conns[i];
        c->pool = p;
        c->ec = evhttp_connection_base_new(s->base, NULL, p->host, p->port);
        if (!c->ec)
            return false;
        evhttp_connection_set_timeout(c->ec, 60);
        evhttp_connection_set_retries(c->ec, 3);
        c->next_idle = p->idle;
        p->idle = c;
    }
    return true;
}

void pool_free(pool_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->conns[i].ec)
            evhttp_connection_free(p->conns[i].ec);
    free(p->conns);
    op_t *op = p->qh;
    while (op) {
        op_t *n = op->next;
        op_free(op);
        op = n;
    }
}
