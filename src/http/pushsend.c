/*
 * pushsend.c - the Web Push sender (pushsend.h).
 *
 * Every message is a `struct job` on the sender's list of live jobs (so
 * wr_pushsend_free can answer each), with one event of its own, `ev`,
 * whose meaning follows the job's state:
 *
 *   QUEUED     in the FIFO; ev idle. The sender's pump_ev (made active by
 *              wr_pushsend_push, so nothing runs inside it) starts jobs
 *              while fewer than max_in_flight try.
 *   RESOLVING  evdns_getaddrinfo under way; ev is the try's timer.
 *   SENDING    the POST under way on evcon; ev is the try's timer, made
 *              active at once by the HTTP client's callback (which may run
 *              inside evhttp_make_request, so it only records).
 *   WAITING    between tries; ev is the backoff timer; then back to the
 *              FIFO's tail.
 *   DONE       ev made active; its callback answers the caller and frees
 *              the job: the one place a callback is called from the loop.
 *
 * A try ends (end_try) with the connection freed (a pending request goes
 * with it, without a callback) and its slot given back, then the answer
 * decides: done, or WAITING again. The address rules are core/pushaddr's;
 * the resolver's answers are all checked before the first connect, which
 * goes to the checked address as a numeric host, so libevent makes no
 * lookup of its own. TLS is http/tlsclient's: OpenSSL's default verify
 * paths, SNI and SSL_set1_host for a name, the IP checked for a literal.
 */
#include "http/pushsend.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/version.h"
#include "core/pushanswer.h"
#include "core/pushcrypt.h"
#include "core/vapid.h"
#include "http/tlsclient.h"

enum state { QUEUED, RESOLVING, SENDING, WAITING, DONE };

#define MAX_ADDRS 8 /* checked addresses of a host kept to connect to */

/* A lookup's handle: evdns calls back once per lookup, a cancelled one
 * too (later, from the loop), so the callback's argument outlives the job
 * that gave up on it: it is freed by that callback. */
struct resolve {
    struct job *j; /* NULL once the job gave up */
};

struct job {
    wr_pushsend_t *ps;
    LIST_ENTRY(job) link;    /* the live jobs */
    STAILQ_ENTRY(job) qlink; /* the FIFO */
    enum state state;
    wr_pushaddr_url_t url;
    uint8_t *body;
    size_t body_len;
    char topic[WR_PUSHSUB_TOPIC_LEN + 1];
    char urgency[16];
    int64_t deadline_ms, ttl_s;
    wr_pushsend_cb cb;
    void *arg;
    struct event *ev;
    struct evdns_getaddrinfo_request *dnsreq;
    struct resolve *rs; /* the pending lookup's handle, or NULL */
    struct evhttp_connection *evcon;
    bool answered;          /* the HTTP client called back */
    int status;             /* its status (0: none) */
    int64_t retry_after_ms; /* -1: no Retry-After */
    bool timed_out;         /* the HTTP client said timeout */
    wr_pushsend_result_t res;
};

struct wr_pushsend {
    wr_pushsend_config_t cfg; /* the pointers below are ours or borrowed as documented */
    wr_pushaddr_allow_t allow;
    wr_vapid_t *vapid;
    SSL_CTX *tls;               /* NULL until the first https:// try */
    struct evdns_base *own_dns; /* made when cfg.dns is NULL, at the first name */
    struct event *pump_ev;
    LIST_HEAD(, job) jobs;   /* live jobs */
    STAILQ_HEAD(, job) fifo; /* queued jobs, oldest first */
    size_t in_flight, queued;
    size_t live; /* messages not answered yet: at most max_queued */
    bool closing;
};

const char *wr_pushsend_outcome_name(wr_pushsend_outcome_t o)
{
    static const char *names[] = {"delivered", "gone", "failed", "expired", "canceled"};
    return (unsigned)o < sizeof names / sizeof names[0] ? names[o] : "unknown";
}

static int64_t now_ms(void)
{
    return wr_clock_wall_us() / 1000;
}

/* Gives up j's lookup, if any: its callback will only free the handle. */
static void cancel_lookup(struct job *j)
{
    if (!j->rs)
        return;
    struct evdns_getaddrinfo_request *r = j->dnsreq;
    j->rs->j = NULL;
    j->rs = NULL;
    j->dnsreq = NULL;
    if (r)
        evdns_getaddrinfo_cancel(r);
}

/* ---------- the FIFO and the pump ---------- */

static void start_try(struct job *j);

static void enqueue(struct job *j)
{
    wr_pushsend_t *ps = j->ps;
    j->state = QUEUED;
    STAILQ_INSERT_TAIL(&ps->fifo, j, qlink);
    ps->queued++;
}

static void pump(wr_pushsend_t *ps)
{
    while (!ps->closing && !STAILQ_EMPTY(&ps->fifo) && ps->in_flight < ps->cfg.max_in_flight) {
        struct job *j = STAILQ_FIRST(&ps->fifo);
        STAILQ_REMOVE_HEAD(&ps->fifo, qlink);
        ps->queued--;
        start_try(j);
    }
}

static void pump_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    pump(arg);
}

/* ---------- ending ---------- */

/* The job is answered: from the loop, by its event. */
static void finish(struct job *j, wr_pushsend_outcome_t o, const char *why)
{
    j->res.outcome = o;
    j->res.why = why;
    j->state = DONE;
    event_del(j->ev);
    event_active(j->ev, EV_TIMEOUT, 1);
}

static void unlink_job(struct job *j)
{
    wr_pushsend_t *ps = j->ps;
    ps->live--;
    LIST_REMOVE(j, link);
}

static void free_job(struct job *j)
{
    if (j->evcon)
        evhttp_connection_free(j->evcon);
    if (j->ev)
        event_free(j->ev);
    free(j->body);
    free(j);
}

/* Another try later, or expired when that would be at or past the deadline. */
static void retry(struct job *j, const char *why)
{
    int64_t now = now_ms();
    int64_t delay = j->retry_after_ms;
    if (delay < 0)
        delay = wr_pushanswer_backoff_ms(j->res.retries, j->ps->cfg.backoff_first_ms,
                                         j->ps->cfg.backoff_max_ms);
    if (now + delay >= j->deadline_ms) {
        finish(j, WR_PUSHSEND_EXPIRED, "deadline");
        return;
    }
    j->res.retries++;
    j->res.why = why;
    j->state = WAITING;
    struct timeval tv = wr_clock_tv_ms((uint64_t)delay);
    evtimer_add(j->ev, &tv);
}

/* The try is over (its slot given back): decides what follows. */
static void end_try(struct job *j, const char *why)
{
    wr_pushsend_t *ps = j->ps;
    event_del(j->ev);
    if (j->evcon) { /* a pending request goes with it, without a callback */
        evhttp_connection_free(j->evcon);
        j->evcon = NULL;
    }
    if (ps->in_flight > 0)
        ps->in_flight--;
    int s = j->answered ? j->status : 0;
    j->res.status = s ? s : j->res.status;
    switch (wr_pushanswer_of(s)) {
    case WR_PUSHANSWER_DELIVERED:
        finish(j, WR_PUSHSEND_DELIVERED, "ok");
        break;
    case WR_PUSHANSWER_GONE:
        finish(j, WR_PUSHSEND_GONE, "status");
        break;
    case WR_PUSHANSWER_REDIRECT:
        finish(j, WR_PUSHSEND_FAILED, "redirect");
        break;
    case WR_PUSHANSWER_REFUSED:
        finish(j, WR_PUSHSEND_FAILED, "status");
        break;
    case WR_PUSHANSWER_RETRY:
        retry(j, s ? "status" : j->timed_out ? "timeout" : why);
        break;
    }
    if (s || j->timed_out)
        wr_log(WR_LOG_DEBUG, "push: %s answered %d (%s)", j->url.origin, s,
               wr_pushsend_outcome_name(j->res.outcome));
    pump(ps);
}

/* ---------- a try ---------- */

static void http_done_cb(struct evhttp_request *req, void *arg)
{
    struct job *j = arg;
    if (j->state != SENDING || j->answered)
        return;
    j->answered = true;
    j->status = req ? evhttp_request_get_response_code(req) : 0;
    j->retry_after_ms = -1;
    if (req && (j->status == 429 || j->status >= 500))
        j->retry_after_ms = wr_pushanswer_retry_after_ms(
            evhttp_find_header(evhttp_request_get_input_headers(req), "Retry-After"), now_ms());
    event_del(j->ev);
    event_active(j->ev, EV_TIMEOUT, 1);
}

static void http_error_cb(enum evhttp_request_error e, void *arg)
{
    struct job *j = arg;
    if (e == EVREQ_HTTP_TIMEOUT)
        j->timed_out = true;
}

/* The connection to the checked address ip (numeric text) for j: the
 * certificate must name the URL's host (its IP for a literal, else its
 * DNS name, sent as SNI too), never the address connected to. */
static struct evhttp_connection *connection(struct job *j, const char *ip)
{
    wr_pushsend_t *ps = j->ps;
    if (!j->url.https)
        return evhttp_connection_base_new(ps->cfg.base, NULL, ip, j->url.port);
    if (!ps->tls && !(ps->tls = wr_tlsclient_context(ps->cfg.ca_file)))
        return NULL;
    return wr_tlsclient_connection(ps->cfg.base, NULL, ps->tls, j->url.host, j->url.ip_literal, ip,
                                   j->url.port);
}

/* Sends the POST to the checked address (family 4 or 6, raw bytes). */
static void send_to(struct job *j, int family, const uint8_t *addr)
{
    wr_pushsend_t *ps = j->ps;
    char ip[INET6_ADDRSTRLEN], ttl[24];
    const char *auth = NULL;
    j->state = SENDING;
    j->answered = false;
    j->timed_out = false;
    j->res.tries++;
    inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, ip, sizeof ip);
    int64_t now = now_ms();
    int64_t t = j->ttl_s >= 0 ? j->ttl_s : (j->deadline_ms - now) / 1000;
    snprintf(ttl, sizeof ttl, "%lld", (long long)(t > 0 ? t : 0));
    if (wr_vapid_get(ps->vapid, j->url.origin, now / 1000, &auth) != WR_OK ||
        !(j->evcon = connection(j, ip))) {
        end_try(j, "connect");
        return;
    }
    struct evhttp_request *req = evhttp_request_new(http_done_cb, j);
    if (!req) {
        end_try(j, "connect");
        return;
    }
    struct timeval tv = wr_clock_tv_ms((uint64_t)ps->cfg.try_timeout_ms);
    evhttp_connection_set_timeout_tv(j->evcon, &tv);
    evhttp_connection_set_retries(j->evcon, 0);
    evhttp_connection_set_max_body_size(j->evcon, WR_PUSHSEND_ANSWER_MAX);
    evhttp_connection_set_max_headers_size(j->evcon, 16384);
    evhttp_request_set_error_cb(req, http_error_cb);
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Host", j->url.authority);
    evhttp_add_header(oh, "TTL", ttl);
    evhttp_add_header(oh, "Urgency", j->urgency);
    if (j->topic[0])
        evhttp_add_header(oh, "Topic", j->topic);
    evhttp_add_header(oh, "Content-Encoding", "aes128gcm");
    evhttp_add_header(oh, "Content-Type", "application/octet-stream");
    evhttp_add_header(oh, "Authorization", auth);
    evhttp_add_header(oh, "Connection", "close");
    evhttp_add_header(oh, "User-Agent", "waitroomd/" WR_VERSION);
    evbuffer_add(evhttp_request_get_output_buffer(req), j->body, j->body_len);
    if (evhttp_make_request(j->evcon, req, EVHTTP_REQ_POST, j->url.target) != 0 && !j->answered) {
        /* could not even start (the request is libevent's to free) */
        j->answered = true;
        j->status = 0;
        event_del(j->ev);
        event_active(j->ev, EV_TIMEOUT, 1);
    }
}

static void resolved_cb(int result, struct evutil_addrinfo *ai, void *arg)
{
    struct resolve *rs = arg;
    struct job *j = rs->j;
    free(rs);
    if (!j) { /* given up: the try's timer, or the sender's end */
        if (ai)
            evutil_freeaddrinfo(ai);
        return;
    }
    j->rs = NULL;
    j->dnsreq = NULL;
    /* the checked addresses, IPv4 first (an IPv6 answer on a host without
     * IPv6 routes would fail every try), at most MAX_ADDRS of them */
    int fams[MAX_ADDRS];
    uint8_t addrs[MAX_ADDRS][16];
    size_t n4 = 0, n = 0;
    const char *refused = NULL;
    for (struct evutil_addrinfo *a = result == 0 ? ai : NULL; a && !refused; a = a->ai_next) {
        int fam = a->ai_family == AF_INET ? 4 : a->ai_family == AF_INET6 ? 6 : 0;
        uint8_t b[16] = {0};
        if (fam == 4)
            memcpy(b, &((struct sockaddr_in *)(void *)a->ai_addr)->sin_addr, 4);
        else if (fam == 6)
            memcpy(b, &((struct sockaddr_in6 *)(void *)a->ai_addr)->sin6_addr, 16);
        else
            continue;
        if (wr_pushaddr_check_ip(&j->ps->allow, &j->url, fam, b) != WR_PUSHADDR_OK) {
            refused = "address"; /* every address is checked, kept or not */
        } else if (n < MAX_ADDRS) {
            size_t at = n;
            if (fam == 4) { /* after the IPv4 ones already kept */
                memmove(&fams[n4 + 1], &fams[n4], (n - n4) * sizeof fams[0]);
                memmove(&addrs[n4 + 1], &addrs[n4], (n - n4) * sizeof addrs[0]);
                at = n4++;
            }
            fams[at] = fam;
            memcpy(addrs[at], b, sizeof b);
            n++;
        }
    }
    if (ai)
        evutil_freeaddrinfo(ai);
    if (refused) { /* one refused address refuses the host: no connection at all */
        j->ps->in_flight--;
        finish(j, WR_PUSHSEND_FAILED, refused);
        pump(j->ps);
    } else if (n == 0) {
        end_try(j, "resolve");
    } else {
        /* a retry goes to the next address: one that does not answer
         * does not take every try */
        size_t k = j->res.tries % n;
        send_to(j, fams[k], addrs[k]);
    }
}

static void start_try(struct job *j)
{
    wr_pushsend_t *ps = j->ps;
    ps->in_flight++;
    j->state = RESOLVING;
    j->retry_after_ms = -1;
    j->status = 0;
    j->answered = false;
    if (now_ms() >= j->deadline_ms) {
        ps->in_flight--;
        finish(j, WR_PUSHSEND_EXPIRED, "deadline");
        return;
    }
    wr_pushaddr_verdict_t v = wr_pushaddr_check_url(&ps->allow, &j->url);
    if (v != WR_PUSHADDR_OK) {
        ps->in_flight--;
        finish(j, WR_PUSHSEND_FAILED, wr_pushaddr_verdict_name(v));
        return;
    }
    struct timeval tv = wr_clock_tv_ms((uint64_t)ps->cfg.try_timeout_ms);
    evtimer_add(j->ev, &tv);
    uint8_t a[16];
    if (j->url.ip_literal) {
        bool v6 = inet_pton(AF_INET6, j->url.host, a) == 1;
        if (!v6 && inet_pton(AF_INET, j->url.host, a) != 1) {
            end_try(j, "resolve");
            return;
        }
        send_to(j, v6 ? 6 : 4, a);
        return;
    }
    struct evdns_base *dns = ps->cfg.dns;
    if (!dns && !(dns = ps->own_dns))
        dns = ps->own_dns = evdns_base_new(ps->cfg.base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
                                                             EVDNS_BASE_DISABLE_WHEN_INACTIVE);
    if (!dns) {
        end_try(j, "resolve");
        return;
    }
    struct evutil_addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    struct resolve *rs = malloc(sizeof *rs);
    if (!rs) {
        end_try(j, "resolve");
        return;
    }
    rs->j = j;
    j->rs = rs;
    /* may answer at once (hosts file, a numeric name): resolved_cb runs
     * inside and returns NULL; else the request, kept to cancel it */
    struct evdns_getaddrinfo_request *r =
        evdns_getaddrinfo(dns, j->url.host, NULL, &hints, resolved_cb, rs);
    if (j->rs == rs)
        j->dnsreq = r;
}

/* The job's event: see the states at the top of the file. */
static void job_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct job *j = arg;
    switch (j->state) {
    case RESOLVING: /* the try's timer */
        cancel_lookup(j);
        end_try(j, "timeout");
        break;
    case SENDING: /* answered, or the try's timer */
        end_try(j, j->answered ? "connect" : "timeout");
        break;
    case WAITING:
        enqueue(j);
        pump(j->ps);
        break;
    case DONE: {
        wr_pushsend_result_t res = j->res;
        wr_pushsend_cb cb = j->cb;
        void *cb_arg = j->arg;
        unlink_job(j);
        free_job(j);
        cb(&res, cb_arg);
        break;
    }
    case QUEUED:
        break;
    }
}

/* ---------- the interface ---------- */

wr_pushsend_t *wr_pushsend_new(const wr_pushsend_config_t *cfg, wr_err_t *err)
{
    wr_err_t e = WR_EINVAL;
    wr_pushsend_t *ps = NULL;
    if (!cfg || !cfg->base || !cfg->vapid_key || !wr_vapid_subject_ok(cfg->subject))
        goto out;
    e = WR_ENOMEM;
    if (!(ps = calloc(1, sizeof *ps)))
        goto out;
    LIST_INIT(&ps->jobs);
    STAILQ_INIT(&ps->fifo);
    ps->cfg = *cfg;
    ps->cfg.subject = NULL; /* the vapid cache keeps its copy */
    ps->cfg.allow = NULL;
    if (cfg->allow)
        ps->allow = *cfg->allow;
#define DEFAULT(f, v)                                                                              \
    if (ps->cfg.f <= 0)                                                                            \
    ps->cfg.f = (v)
    DEFAULT(max_in_flight, WR_PUSHSEND_IN_FLIGHT);
    DEFAULT(max_queued, WR_PUSHSEND_QUEUED_MAX);
    DEFAULT(try_timeout_ms, WR_PUSHSEND_TRY_MS);
    DEFAULT(backoff_first_ms, WR_PUSHSEND_BACKOFF_MS);
    DEFAULT(backoff_max_ms, WR_PUSHSEND_BACKOFF_MAX);
#undef DEFAULT
    ps->vapid = wr_vapid_new(cfg->vapid_key, cfg->subject, 64);
    ps->pump_ev = event_new(cfg->base, -1, 0, pump_cb, ps);
    if (!ps->vapid || !ps->pump_ev) {
        e = ps->vapid ? WR_ENOMEM : WR_EINVAL;
        wr_pushsend_free(ps);
        ps = NULL;
        goto out;
    }
    ps->cfg.vapid_key = NULL;
    e = WR_OK;
out:
    if (err)
        *err = e;
    return ps;
}

wr_err_t wr_pushsend_push(wr_pushsend_t *ps, const wr_pushsend_msg_t *m, wr_pushsend_cb cb,
                          void *arg)
{
    if (!ps || !m || !m->sub || !cb || (!m->payload && m->len) || m->len > WR_PUSHCRYPT_PLAIN_MAX)
        return WR_EINVAL;
    if (ps->closing)
        return WR_ECANCELED;
    if (ps->live >= ps->cfg.max_queued)
        return WR_ELIMIT;
    if (m->topic && strlen(m->topic) > WR_PUSHSUB_TOPIC_LEN)
        return WR_EINVAL;
    if (m->urgency && (strlen(m->urgency) >= 16 || !*m->urgency))
        return WR_EINVAL;
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return WR_ENOMEM;
    wr_err_t err = wr_pushaddr_parse(m->sub->endpoint, &j->url);
    if (err == WR_OK) {
        err = WR_ENOMEM;
        j->body = malloc(WR_PUSHCRYPT_BODY_LEN(m->len));
        j->ev = evtimer_new(ps->cfg.base, job_cb, j);
    }
    if (j->body && j->ev)
        err = wr_pushcrypt_encrypt(m->sub->p256dh, m->sub->auth, (const uint8_t *)m->payload,
                                   m->len, j->body, WR_PUSHCRYPT_BODY_LEN(m->len), &j->body_len);
    if (err != WR_OK) {
        free_job(j);
        return err;
    }
    j->ps = ps;
    snprintf(j->topic, sizeof j->topic, "%s", m->topic ? m->topic : "");
    snprintf(j->urgency, sizeof j->urgency, "%s", m->urgency ? m->urgency : "high");
    j->deadline_ms = m->deadline_ms;
    j->ttl_s = m->ttl_s;
    j->cb = cb;
    j->arg = arg;
    j->res.why = "ok";
    ps->live++;
    LIST_INSERT_HEAD(&ps->jobs, j, link);
    enqueue(j);
    event_active(ps->pump_ev, EV_TIMEOUT, 1);
    return WR_OK;
}

size_t wr_pushsend_in_flight(const wr_pushsend_t *ps)
{
    return ps ? ps->in_flight : 0;
}

size_t wr_pushsend_queued(const wr_pushsend_t *ps)
{
    return ps ? ps->queued : 0;
}

void wr_pushsend_free(wr_pushsend_t *ps)
{
    if (!ps)
        return;
    ps->closing = true;
    while (!LIST_EMPTY(&ps->jobs)) {
        struct job *j = LIST_FIRST(&ps->jobs);
        cancel_lookup(j);
        wr_pushsend_result_t res = j->res;
        if (j->state != DONE) {
            res.outcome = WR_PUSHSEND_CANCELED;
            res.why = "shutdown";
        }
        wr_pushsend_cb cb = j->cb;
        void *cb_arg = j->arg;
        unlink_job(j);
        free_job(j);
        cb(&res, cb_arg);
    }
    if (ps->pump_ev)
        event_free(ps->pump_ev);
    if (ps->own_dns)
        evdns_base_free(ps->own_dns, 0);
    if (ps->tls)
        SSL_CTX_free(ps->tls);
    wr_vapid_free(ps->vapid);
    free(ps);
}
