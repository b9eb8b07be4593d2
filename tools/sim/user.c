/*
 * user.c - waitroom-sim: one simulated user's state machine (sim.h, the
 * states are drawn in sim.c): arrival, join, polls as told, sleep and
 * return (--sleepers; subscribing instead with --subscribed: push.c),
 * leaving (quitters), the order at the shop, and the
 * misbehaving kinds (bypass with a forged token, replay of a used one).
 */
#include "sim.h"

/* ---------- the run ---------- */

static void user_done(user_t *u, ustate_t st)
{
    sim_t *s = u->sim;
    u->st = st;
    s->done++;
    if (s->done == s->n_users)
        finish(s);
}

static void on_order(op_t *op, int code, json_t *body);
static void on_replay(op_t *op, int code, json_t *body);

/* POST /orders to the shop with the user's token (none: no header). */
static void post_order(user_t *u, op_cb cb)
{
    op_t *op = op_new(EVHTTP_REQ_POST, "/orders", u->uid, cb, u);
    if (u->token) {
        char auth[2100];
        snprintf(auth, sizeof(auth), "Bearer %s", u->token);
        op_set_auth(op, auth);
    }
    pool_submit(&u->sim->shopp, op);
}

static void send_order(user_t *u)
{
    u->st = S_ORDERING;
    u->order_sent_ms = now_ms();
    post_order(u, on_order);
}

static void on_order(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    u->order_code = code;
    u->order_done_ms = now_ms();
    if (code == 200)
        s->orders_ok++;
    else if (code == 403)
        s->orders_refused++;
    else
        s->orders_failed++;
    if (u->kind == K_REPLAY && code == 200) {
        /* replay the used token: it must be refused */
        s->replay_attempts++;
        post_order(u, on_replay); /* the same token again */
        return;
    }
    user_done(u, S_DONE);
}

static void on_replay(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    if (code == 200)
        u->sim->replay_accepted++;
    user_done(u, S_DONE);
}

static void on_bypass(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    if (code == 200)
        u->sim->bypass_accepted++;
    user_done(u, S_DONE);
}

static void b64url(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    if (wr_b64url_encode((const uint8_t *)in, strlen(in), out, cap, &n) != WR_OK)
        out[0] = '\0';
}

/* A user who skips the line: calls the shop directly, with no token, a
 * forged HS256 token (wrong key), an alg=none token, or garbage. */
static void send_bypass(user_t *u)
{
    sim_t *s = u->sim;
    s->bypass_attempts++;
    u->st = S_ORDERING;
    u->order_sent_ms = now_ms();
    op_t *op = op_new(EVHTTP_REQ_POST, "/orders", u->uid, on_bypass, u);
    char hdr[128], pay[512], payload[512], sig[64], auth[1400];
    long long t = (long long)(now_ms() / 1000);
    snprintf(pay, sizeof(pay),
             "{\"iss\":\"waitroom\",\"aud\":\"%s\",\"sub\":\"%s\",\"jti\":\"forged%u\","
             "\"iat\":%lld,\"exp\":%lld}",
             s->queue, u->uid, u->idx, t, t + 300);
    b64url(pay, payload, sizeof(payload));
    switch (u->idx % 4) {
    case 0:
        break; /* no token at all */
    case 1: {
        char rawsig[33];
        for (int i = 0; i < 32; i++)
            rawsig[i] = (char)('A' + (int)(rnd(s) * 26));
        rawsig[32] = '\0';
        b64url("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", hdr, sizeof(hdr));
        b64url(rawsig, sig, sizeof(sig));
        snprintf(auth, sizeof(auth), "Bearer %s.%s.%s", hdr, payload, sig);
        op_set_auth(op, auth);
        break;
    }
    case 2:
        b64url("{\"alg\":\"none\",\"typ\":\"JWT\"}", hdr, sizeof(hdr));
        snprintf(auth, sizeof(auth), "Bearer %s.%s.", hdr, payload);
        op_set_auth(op, auth);
        break;
    default:
        op_set_auth(op, "Bearer not-a-token");
        break;
    }
    pool_submit(&s->shopp, op);
}

static void on_status(op_t *op, int code, json_t *body);
static void on_leave(op_t *op, int code, json_t *body);

static void path_me(sim_t *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "/v1/queues/%s/entries/me", s->queue);
}

/* Appends one waiting answer's etaSeconds to s->etas (a null ETA or no
 * memory: nothing; the figures then have fewer samples). */
static void eta_record(sim_t *s, const user_t *u, const json_t *eta, int64_t now)
{
    if (!json_is_integer(eta) || json_integer_value(eta) < 0 || json_integer_value(eta) > INT32_MAX)
        return;
    if (s->n_etas == s->cap_etas) {
        size_t cap = s->cap_etas ? s->cap_etas * 2 : 65536;
        eta_sample_t *g = realloc(s->etas, cap * sizeof(*g));
        if (!g)
            return;
        s->etas = g;
        s->cap_etas = cap;
    }
    s->etas[s->n_etas++] =
        (eta_sample_t){.idx = u->idx, .eta_s = (int32_t)json_integer_value(eta), .ms = now};
}

/* A 200 answer of join or status. */
static void handle_status(user_t *u, json_t *j, bool at_join)
{
    sim_t *s = u->sim;
    const char *st = json_string_value(json_object_get(j, "status"));
    int64_t now = now_ms();
    presale_answer(u, j);
    if (at_join && st &&
        (!strcmp(st, "waiting") || !strcmp(st, "prequeue") || !strcmp(st, "admitted"))) {
        u->placed = true; /* a place: what the server's report counts as joined */
        s->placed++;
    }
    if (st && !strcmp(st, "prequeue")) {
        /* before the opening: no place yet; ask again when told */
        if (at_join) {
            u->prequeue = true;
            s->prequeue_joined++;
        }
        u->st = S_WAITING;
        if (at_join && u->push) { /* "notify me", then the phone goes away */
            push_subscribe(u);
            return;
        }
        int64_t retry = json_integer_value(json_object_get(j, "retryAfterMs"));
        if (retry <= 0 || retry > 60000)
            retry = 1000;
        timer_ms(u->ev, u->kind == K_GREEDY ? s->greedy_poll_ms : retry);
        return;
    }
    if (st && !strcmp(st, "waiting")) {
        int64_t pos = json_integer_value(json_object_get(j, "position"));
        int64_t retry = json_integer_value(json_object_get(j, "retryAfterMs"));
        if (at_join) {
            json_t *eta = json_object_get(j, "etaSeconds");
            u->eta_s = json_is_integer(eta) ? json_integer_value(eta) : -1;
            u->pos_join = pos;
            /* a sleeper's phone locks in the first quarter of its expected wait */
            if (u->sleeper)
                u->sleep_onset_ms =
                    now + (int64_t)(u->sleep_at * (double)pos / s->rate * 1000.0 / 4.0);
        } else if (u->eta1_ms == 0) {
            json_t *eta = json_object_get(j, "etaSeconds");
            u->eta1_s = json_is_integer(eta) ? json_integer_value(eta) : -1;
            u->eta1_ms = now;
        }
        eta_record(s, u, json_object_get(j, "etaSeconds"), now);
        u->st = S_WAITING;
        if (at_join && u->push) { /* "notify me", then the phone goes away */
            push_subscribe(u);
            return;
        }
        if (json_is_true(json_object_get(j, "held")) && !u->held) {
            u->held = true; /* away when the tick reached them: out of the order, kept */
            s->users_held++;
            if (u->sleeper)
                s->sleepers_held++;
        } else if (u->waking && !u->held) {
            s->sleepers_woke_in_line++; /* back before its turn: the same place */
        }
        if (u->kind == K_QUITTER && now >= u->quit_at_ms && pos > 50) {
            char path[192];
            path_me(s, path, sizeof(path));
            op_t *op = op_new(EVHTTP_REQ_DELETE, path, u->uid, on_leave, u);
            op->retries = 2;
            pool_submit(&s->wr, op);
            return;
        }
        int64_t delay = u->kind == K_GREEDY ? s->greedy_poll_ms : retry;
        if (delay < 0 || delay > 60000)
            delay = 1000;
        if (u->sleeper && !u->slept && now + delay >= u->sleep_onset_ms) {
            /* the phone sleeps: silent sleep_ms from this answer on */
            u->slept = u->asleep = true;
            u->sleep_from_ms = now;
            s->sleepers++;
            s->asleep_now++;
            delay = u->sleep_ms;
        }
        timer_ms(u->ev, delay);
        return;
    }
    if (st && !strcmp(st, "admitted")) {
        const char *tok = json_string_value(json_object_get(j, "token"));
        int64_t exp = json_integer_value(json_object_get(j, "expiresAt"));
        if (!tok || strlen(tok) > 2048) {
            s->errors++;
            user_done(u, S_ERROR);
            return;
        }
        free(u->token);
        u->token = strdup(tok);
        u->admit_seen_ms = now;
        u->admit_tick_ms = exp - (int64_t)s->ttl_s * 1000;
        s->admitted++;
        if (u->held) {
            s->users_returned++;
            if (u->sleeper)
                s->sleepers_returned++;
        } else if (u->waking) {
            s->sleepers_pass_waited++; /* admitted before it counted as away */
        }
        send_order(u);
        return;
    }
    if (st && !strcmp(st, "closed")) {
        /* sold out or the sale ended: no place for this user (API 1.2) */
        const char *why = json_string_value(json_object_get(j, "reason"));
        if (why && !strcmp(why, "soldOut"))
            s->told_sold_out++;
        else
            s->told_closed++;
        user_done(u, S_CLOSED);
        return;
    }
    if (st && !strcmp(st, "passthrough")) {
        u->admit_seen_ms = now;
        s->admitted++;
        send_order(u);
        return;
    }
    s->errors++;
    user_done(u, S_ERROR);
}

static void on_join(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    if (code != 200 || !body) {
        s->errors++;
        user_done(u, S_ERROR);
        return;
    }
    u->join_ms = now_ms();
    u->join_seq = s->join_seq++;
    s->joined++;
    handle_status(u, body, true);
}

static void on_status(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    if (s->finishing)
        return;
    if (code == 200 && body) {
        handle_status(u, body, false); /* reads u->waking */
        u->waking = false;
    } else if (code == 404) {
        u->waking = false;
        s->lost++; /* joined, not admitted, no longer in line */
        if (u->slept || u->push)
            s->sleepers_lost++; /* came back to NOT_IN_QUEUE: the place is gone */
        if (u->push)
            s->subscribed_lost++;
        user_done(u, S_LOST);
    } else if (++u->errors < 20) {
        timer_ms(u->ev, 1000);
    } else {
        s->errors++;
        user_done(u, S_ERROR);
    }
}

static void on_leave(op_t *op, int code, json_t *body)
{
    user_t *u = op->arg;
    sim_t *s = u->sim;
    if (code == 204) {
        s->left++;
        user_done(u, S_LEFT);
    } else if (code == 404) {
        s->lost++; /* was waiting (position > 50) a moment ago */
        user_done(u, S_LOST);
    } else {
        s->errors++;
        user_done(u, S_ERROR);
    }
}

void user_timer(evutil_socket_t fd, short what, void *arg)
{
    user_t *u = arg;
    sim_t *s = u->sim;
    if (s->finishing)
        return;
    if (u->st == S_PENDING) {
        if (u->kind == K_BYPASS) {
            send_bypass(u);
        } else if (s->no_queue) {
            s->joined++; /* "joins" the shop directly */
            u->join_ms = now_ms();
            u->admit_seen_ms = u->join_ms;
            send_order(u);
        } else {
            u->st = S_JOINING;
            char path[192];
            snprintf(path, sizeof(path), "/v1/queues/%s/entries", s->queue);
            op_t *op = op_new(EVHTTP_REQ_POST, path, u->uid, on_join, u);
            presale_join_body(u, op); /* --presale: {"code":...} */
            op->retries = 3;          /* joining again never moves a user, nor spends a use */
            pool_submit(&s->join, op);
        }
        return;
    }
    if (u->st == S_WAITING) {
        if (u->asleep) { /* the phone wakes: this poll is the return */
            u->asleep = false;
            u->waking = true;
            u->wake_ms = now_ms();
            s->asleep_now--;
        }
        char path[192];
        path_me(s, path, sizeof(path));
        s->polls++;
        u->polls++;
        if (u->kind == K_GREEDY)
            s->greedy_polls++;
        op_t *op = op_new(EVHTTP_REQ_GET, path, u->uid, on_status, u);
        op->retries = 2;
        pool_submit(&s->wr, op);
    }
}
