/*
 * push.c - waitroom-sim: the subscribed sleepers (--subscribed F, issue 40)
 * and the stand-in Web Push service they subscribe with (sim.h).
 *
 * Of the sleepers (--sleepers), a fraction F (seeded, scenario.c) press
 * "notify me" instead: each gets a P-256 key pair and a 16-byte auth
 * secret, as a browser's PushManager makes them, and right after its join
 * answer PUTs the subscription {"endpoint":"http://127.0.0.1:P/p/<user
 * index>","keys":{"p256dh","auth"}} to /v1/queues/Q/entries/me/push. On
 * 204 it stops polling entirely: no timer is left, only its push brings it
 * back (one that never comes keeps it until the run's deadline, counted in
 * pushesMissed and usersStillWaiting).
 *
 * The stand-in push service is an evhttp server in the simulator's own
 * loop on 127.0.0.1:--push-port (waitroomd lets pushes go there with
 * --push-allow-host 127.0.0.1:P). Every POST is checked as a push service
 * and the browser would check it, and a failed check is answered 400 and
 * counted rejected (the server counts it `failed`):
 *   - VAPID (RFC 8292): `Authorization: vapid t=<JWT>, k=<key>`, k the
 *     queue's key (GET /v1/queues/Q/push/key at the start), the JWT's
 *     header ES256, its signature (64-byte r || s) valid under k, aud this
 *     service's origin, exp in the next 24 h, sub a mailto: or https: URL;
 *   - RFC 8030: a TTL, `Urgency: high`, `Content-Encoding: aes128gcm`;
 *   - RFC 8291: the body decrypts (core/pushcrypt.h's receiver) with the
 *     user's private key and auth secret, to the contract's JSON message
 *     for this queue (admitted with expiresAt, or closed), title and body
 *     not empty.
 * A push that passes is answered 201 and wakes its user, who polls once
 * and takes the pass (or learns that the sale closed). A second valid push
 * to the same person is counted a duplicate (one push per admission).
 * Latency is the arrival here minus the admission tick (the message's
 * expiresAt - tokenTtlSeconds, as for every admission in the run).
 */
#include <limits.h>

#include "core/pushcrypt.h"
#include "sim.h"

#define PUSH_BODY_MAX 4096 /* one record (pushcrypt.h) */
#define JWT_MAX       1024

void push_pick(user_t *u)
{
    push_user_t *p = calloc(1, sizeof(*p));
    if (!p)
        die_oom();
    if (wr_crypto_p256_keygen(p->priv, p->pub) != WR_OK ||
        wr_crypto_random(p->auth, sizeof p->auth) != WR_OK) {
        fprintf(stderr, "waitroom-sim: cannot make a push subscription's keys\n");
        exit(1);
    }
    p->latency_ms = -1;
    u->push = p;
    u->sim->subscribed_planned++;
}

/* ---------- the subscription ---------- */

static void on_subscribe(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    push_user_t *p = u->push;
    if (s->finishing)
        return;
    if (code != 204) {
        /* not subscribed (admitted meanwhile: 404): polls as an ordinary user */
        s->subscribe_failed++;
        timer_ms(u->ev, 1000);
        return;
    }
    s->subscribed++;
    if (p->pushed) { /* the push overtook this answer */
        timer_ms(u->ev, 0);
        return;
    }
    p->silent = true; /* no timer: only the push brings it back */
}

void push_subscribe(user_t *u)
{
    sim_t *s = u->sim;
    char path[192], ep[96], p256dh[96], auth[32];
    size_t n;
    snprintf(path, sizeof(path), "/v1/queues/%s/entries/me/push", s->queue);
    snprintf(ep, sizeof(ep), "http://127.0.0.1:%u/p/%u", s->push_port, u->idx);
    if (wr_b64url_encode(u->push->pub, sizeof u->push->pub, p256dh, sizeof p256dh, &n) != WR_OK ||
        wr_b64url_encode(u->push->auth, sizeof u->push->auth, auth, sizeof auth, &n) != WR_OK)
        die_oom(); /* the buffers fit: cannot happen */
    json_t *b =
        json_pack("{s:s,s:{s:s,s:s}}", "endpoint", ep, "keys", "p256dh", p256dh, "auth", auth);
    op_t *op = op_new(EVHTTP_REQ_PUT, path, u->uid, on_subscribe, u);
    op->body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    if (!op->body)
        die_oom();
    op->retries = 2; /* a PUT replaces: safe to send again */
    pool_submit(&s->wr, op);
}

/* ---------- the key ---------- */

static void on_key(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    const char *k = json_string_value(json_object_get(body, "publicKey"));
    size_t n = 0;
    if (code != 200 || !k ||
        wr_b64url_decode(k, strlen(k), s->push_key, sizeof s->push_key, &n) != WR_OK ||
        n != sizeof s->push_key) {
        fprintf(stderr, "waitroom-sim: GET /v1/queues/%s/push/key answered %d: no push key\n",
                s->queue, code);
        s->exit_code = 2;
        event_base_loopexit(s->base, NULL);
        return;
    }
    start_warm(s);
}

void push_fetch_key(sim_t *s)
{
    char path[192];
    snprintf(path, sizeof(path), "/v1/queues/%s/push/key", s->queue);
    pool_submit(&s->statp, op_new(EVHTTP_REQ_GET, path, NULL, on_key, s));
}

/* ---------- the stand-in push service ---------- */

/* base64url text (len chars) into out (exactly want bytes). */
static bool b64_exact(const char *in, size_t len, uint8_t *out, size_t want)
{
    size_t n = 0;
    return wr_b64url_decode(in, len, out, want, &n) == WR_OK && n == want;
}

/* The JSON object of a base64url JWT part (len chars), or NULL. */
static json_t *jwt_part(const char *in, size_t len)
{
    uint8_t buf[JWT_MAX];
    size_t n = 0;
    if (wr_b64url_decode(in, len, buf, sizeof buf, &n) != WR_OK)
        return NULL;
    json_t *j = json_loadb((const char *)buf, n, 0, NULL);
    if (j && !json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* NULL when the Authorization value is a valid VAPID one for this service
 * and the queue's key; else why not. */
static const char *check_vapid(sim_t *s, const char *v, int64_t now_s)
{
    char jwt[JWT_MAX + 1] = "", key[128] = "";
    if (!v || strncmp(v, "vapid ", 6) != 0)
        return "not a vapid authorization";
    for (const char *p = v + 6; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t len = strcspn(p, ",");
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (!strncmp(p, "t=", 2) && len - 2 <= JWT_MAX)
            snprintf(jwt, sizeof jwt, "%.*s", (int)(len - 2), p + 2);
        else if (!strncmp(p, "k=", 2) && len - 2 < sizeof key)
            snprintf(key, sizeof key, "%.*s", (int)(len - 2), p + 2);
        else if (len > 0)
            return "an unknown vapid parameter";
        p += strcspn(p, ",");
    }
    uint8_t k[WR_CRYPTO_P256_PUB], sig[WR_CRYPTO_P256_SIG];
    if (!b64_exact(key, strlen(key), k, sizeof k) || memcmp(k, s->push_key, sizeof k) != 0)
        return "k is not the queue's key";
    const char *d1 = strchr(jwt, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    if (!d2 || !b64_exact(d2 + 1, strlen(d2 + 1), sig, sizeof sig) ||
        !wr_crypto_p256_verify(k, jwt, (size_t)(d2 - jwt), sig))
        return "the JWT's ES256 signature";
    json_t *h = jwt_part(jwt, (size_t)(d1 - jwt)), *c = jwt_part(d1 + 1, (size_t)(d2 - d1 - 1));
    const char *alg = json_string_value(json_object_get(h, "alg"));
    const char *aud = json_string_value(json_object_get(c, "aud"));
    const char *sub = json_string_value(json_object_get(c, "sub"));
    json_t *exp = json_object_get(c, "exp");
    char origin[64];
    snprintf(origin, sizeof origin, "http://127.0.0.1:%u", s->push_port);
    const char *why = NULL;
    if (!alg || strcmp(alg, "ES256") != 0)
        why = "the JWT's alg";
    else if (!aud || strcmp(aud, origin) != 0)
        why = "aud is not this service's origin";
    else if (!json_is_integer(exp) || json_integer_value(exp) <= now_s ||
             json_integer_value(exp) > now_s + 24 * 3600)
        why = "exp not within the next 24 h";
    else if (!sub || (strncmp(sub, "mailto:", 7) != 0 && strncmp(sub, "https://", 8) != 0))
        why = "sub is not a mailto: or https: URL";
    json_decref(h);
    json_decref(c);
    return why;
}

/* The decrypted, checked message of a push to u, or NULL with *why set. */
static json_t *open_message(sim_t *s, user_t *u, struct evhttp_request *req, const char **why)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    uint8_t body[PUSH_BODY_MAX], pt[PUSH_BODY_MAX];
    size_t n = 0;
    if (len == 0 || len > sizeof body || evbuffer_copyout(in, body, len) != (ssize_t)len ||
        wr_pushcrypt_decrypt(u->push->priv, u->push->auth, body, len, pt, sizeof pt, &n) != WR_OK) {
        *why = "the body does not decrypt (RFC 8291)";
        return NULL;
    }
    json_t *m = json_loadb((const char *)pt, n, 0, NULL);
    const char *q = json_string_value(json_object_get(m, "queue"));
    const char *st = json_string_value(json_object_get(m, "status"));
    const char *title = json_string_value(json_object_get(m, "title"));
    const char *text = json_string_value(json_object_get(m, "body"));
    if (!q || strcmp(q, s->queue) != 0 || !st || !title || !*title || !text || !*text)
        *why = "the message is not this queue's, or has no title or body";
    else if (strcmp(st, "closed") != 0 &&
             (strcmp(st, "admitted") != 0 || !json_is_integer(json_object_get(m, "expiresAt"))))
        *why = "the message's status";
    else
        return m;
    json_decref(m);
    return NULL;
}

/* The checks of a push (NULL: it passes) and, when it passes, its message. */
static const char *check_push(sim_t *s, struct evhttp_request *req, user_t **uo, json_t **mo)
{
    struct evkeyvalq *h = evhttp_request_get_input_headers(req);
    const char *uri = evhttp_request_get_uri(req);
    char *end = NULL;
    unsigned long idx = uri && !strncmp(uri, "/p/", 3) ? strtoul(uri + 3, &end, 10) : ULONG_MAX;
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST || !end || *end || idx >= s->n_users ||
        !s->u[idx].push)
        return "not a POST to a subscribed person's endpoint";
    *uo = &s->u[idx];
    const char *why = check_vapid(s, evhttp_find_header(h, "Authorization"), now_ms() / 1000);
    const char *ttl = evhttp_find_header(h, "TTL");
    const char *urgency = evhttp_find_header(h, "Urgency");
    const char *ce = evhttp_find_header(h, "Content-Encoding");
    if (!why && (!ttl || !*ttl || strspn(ttl, "0123456789") != strlen(ttl)))
        why = "TTL";
    if (!why && (!urgency || strcmp(urgency, "high") != 0))
        why = "Urgency is not high";
    if (!why && (!ce || strcmp(ce, "aes128gcm") != 0))
        why = "Content-Encoding is not aes128gcm";
    if (!why)
        *mo = open_message(s, *uo, req, &why);
    return why;
}

static void on_push(struct evhttp_request *req, void *arg)
{
    sim_t *s = arg;
    int64_t now = now_ms();
    user_t *u = NULL;
    json_t *m = NULL;
    const char *why = check_push(s, req, &u, &m);
    if (why) {
        s->pushes_rejected++;
        if (s->pushes_rejected <= 5)
            fprintf(stderr, "\nwaitroom-sim: a push refused: %s\n", why);
        evhttp_send_reply(req, 400, "Bad Request", NULL);
        return;
    }
    evhttp_send_reply(req, 201, "Created", NULL);
    push_user_t *p = u->push;
    json_t *exp = json_object_get(m, "expiresAt");
    if (p->pushed) {
        s->pushes_duplicate++;
    } else {
        s->pushes_delivered++;
        p->pushed = true;
        if (json_is_integer(exp))
            p->latency_ms = now - (json_integer_value(exp) - (int64_t)s->ttl_s * 1000);
        if (p->silent && !s->finishing) { /* the phone buzzes: back now */
            p->silent = false;
            timer_ms(u->ev, 0);
        }
    }
    json_decref(m);
}

bool push_listen(sim_t *s)
{
    s->push_http = evhttp_new(s->base);
    if (!s->push_http ||
        evhttp_bind_socket(s->push_http, "127.0.0.1", (ev_uint16_t)s->push_port) != 0) {
        fprintf(stderr, "waitroom-sim: cannot listen on 127.0.0.1:%u (the push service)\n",
                s->push_port);
        return false;
    }
    evhttp_set_max_body_size(s->push_http, PUSH_BODY_MAX);
    evhttp_set_allowed_methods(s->push_http, EVHTTP_REQ_POST | EVHTTP_REQ_GET);
    evhttp_set_gencb(s->push_http, on_push, s);
    return true;
}

void push_free(sim_t *s)
{
    if (s->push_http)
        evhttp_free(s->push_http);
    for (uint32_t k = 0; k < s->n_users; k++) {
        if (s->u[k].push)
            wr_crypto_wipe(s->u[k].push, sizeof *s->u[k].push);
        free(s->u[k].push);
    }
}

/* ---------- the figures ---------- */

void push_figures(sim_t *s, json_t *r)
{
    if (s->subscribed_planned == 0)
        return;
    size_t cap = s->n_users + 1;
    double *lat = calloc(3 * cap, sizeof(double)), *back_sub = lat + cap,
           *back_slept = lat + 2 * cap;
    if (!lat)
        die_oom();
    size_t nl = 0, nbs = 0, nbw = 0;
    s->pushes_missed = 0;
    /* polls per person: subscribed sleepers, sleepers that slept, and the
     * ordinary users who did neither */
    uint64_t polls[3] = {0, 0, 0}, people[3] = {0, 0, 0};
    uint32_t back = 0;
    for (uint32_t i = 0; i < s->n_users; i++) {
        user_t *u = &s->u[i];
        int g = u->push ? 0 : u->slept ? 1 : u->kind == K_NORMAL ? 2 : -1;
        if (u->push && u->push->latency_ms >= 0)
            lat[nl++] = (double)u->push->latency_ms;
        /* back after the admission: a subscribed sleeper at the poll its
         * push brought, a sleeper whose pass waited at its return */
        if (u->push && u->push->pushed && u->admit_tick_ms > 0)
            back_sub[nbs++] = (double)(u->admit_seen_ms - u->admit_tick_ms);
        else if (u->slept && !u->held && u->admit_tick_ms > 0 && u->admit_tick_ms < u->wake_ms)
            back_slept[nbw++] = (double)(u->admit_seen_ms - u->admit_tick_ms);
        if (u->push && u->push->pushed && u->admit_seen_ms > 0)
            back++;
        if (u->push && u->push->silent)
            s->pushes_missed++; /* subscribed, never pushed: still silent */
        if (g < 0 || u->join_ms == 0)
            continue;
        polls[g] += u->polls;
        people[g]++;
    }
    struct {
        const char *key;
        uint32_t v;
    } counts[] = {{"subscribedPlanned", s->subscribed_planned},
                  {"subscribed", s->subscribed},
                  {"subscribeFailed", s->subscribe_failed},
                  {"subscribedLost", s->subscribed_lost},
                  {"subscribedAdmittedOnPush", back},
                  {"pushesDelivered", s->pushes_delivered},
                  {"pushesRejected", s->pushes_rejected},
                  {"pushesDuplicate", s->pushes_duplicate},
                  {"pushesMissed", s->pushes_missed}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        json_object_set_new(r, counts[i].key, json_integer(counts[i].v));
    put_percentiles(r, "pushLatency", "Ms", lat, nl);
    put_percentiles(r, "subscribedBackAfterAdmission", "Ms", back_sub, nbs);
    put_percentiles(r, "sleepersBackAfterAdmission", "Ms", back_slept, nbw);
    free(lat);
    static const char *const keys[] = {"pollsPerSubscribedSleeper", "pollsPerSleeper",
                                       "pollsPerOtherUser"};
    double per[3];
    for (int g = 0; g < 3; g++) {
        per[g] = people[g] ? (double)polls[g] / (double)people[g] : 0;
        json_object_set_new(r, keys[g], people[g] ? json_real(per[g]) : json_null());
    }
    json_object_set_new(r, "pollsSavedPerSubscribedSleeper",
                        people[0] && people[1] ? json_real(per[1] - per[0]) : json_null());
}
