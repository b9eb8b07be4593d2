/*
 * push_e2e.c - the driver of the Web Push end-to-end test
 * (tests/push/test_push_e2e.py): sends a fixed set of pushes through the
 * sender (http/pushsend.c) to the stand-in push service
 * (tests/push/pushservice.py) on loopback, which checks and decrypts each,
 * and prints one JSON line per message with how it ended.
 *
 *   push_e2e --http-port P --tls-port S --p256dh B64 --auth B64
 *            --key VAPID.pem --subject mailto:... --ca CA.pem --hosts FILE
 *
 * Host names come from FILE (evdns with no name server: nothing leaves
 * the machine); push.test and wrong.test are listed with
 * --push-allow-host-style entries for the stand-in's ports.
 */
#include <event2/dns.h>
#include <event2/event.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/embed.h"
#include "core/pushmsg.h"
#include "core/pushsub.h"
#include "http/pushsend.h"

struct scenario {
    const char *name;
    const char *url;     /* {H}: the HTTP port, {S}: the TLS port */
    int64_t deadline_ms; /* from the start; <0: already past */
    int64_t ttl_s;
    const char *lang;
    wr_pushmsg_kind_t kind;
    const char *user;
};

static const struct scenario scenarios[] = {
    {"ok", "http://push.test:{H}/ok/1", 20000, -1, "ko", WR_PUSHMSG_ADMITTED, "u1"},
    {"closing", "http://push.test:{H}/ok/closing", 20000, 3600, "en", WR_PUSHMSG_SOLD_OUT, "u1"},
    {"tls", "https://push.test:{S}/ok/tls", 20000, -1, "fr", WR_PUSHMSG_ADMITTED, "u2"},
    {"tlsname", "https://wrong.test:{S}/ok/wrongname", 2500, -1, "en", WR_PUSHMSG_ADMITTED, "u3"},
    {"gone", "http://push.test:{H}/gone/1", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u4"},
    {"notfound", "http://push.test:{H}/notfound/1", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u5"},
    {"bad", "http://push.test:{H}/bad/1", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u6"},
    {"redirect", "http://push.test:{H}/redirect/1", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u7"},
    {"rate", "http://push.test:{H}/rate/1", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u8"},
    {"ratedate", "http://push.test:{H}/ratedate/1", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u9"},
    {"flaky", "http://push.test:{H}/flaky/1", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u10"},
    {"ratelong", "http://push.test:{H}/ratelong/1", 3000, -1, "en", WR_PUSHMSG_ADMITTED, "u11"},
    {"down", "http://push.test:{H}/down/1", 2000, -1, "en", WR_PUSHMSG_ADMITTED, "u12"},
    {"never", "http://push.test:{H}/never/1", 2500, -1, "en", WR_PUSHMSG_ADMITTED, "u13"},
    {"evil", "https://evil.test/ok/evil", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u14"},
    {"mixed", "https://mixed.test/ok/mixed", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u15"},
    {"literal", "https://10.1.2.3/ok/literal", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u16"},
    {"mapped", "https://[::ffff:127.0.0.1]/ok/mapped", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u17"},
    {"port", "https://push.example.net:8443/ok/port", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u18"},
    {"scheme", "http://evil.test:{H}/ok/scheme", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u19"},
    {"multi", "http://multi.test:{H}/ok/multi", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "u22"},
    {"unresolved", "https://nowhere.test/ok/x", 1500, -1, "en", WR_PUSHMSG_ADMITTED, "u20"},
    {"late", "http://push.test:{H}/ok/late", -1, -1, "en", WR_PUSHMSG_ADMITTED, "u21"},
    {"slow1", "http://push.test:{H}/slow/1", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "s1"},
    {"slow2", "http://push.test:{H}/slow/2", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "s2"},
    {"slow3", "http://push.test:{H}/slow/3", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "s3"},
    {"slow4", "http://push.test:{H}/slow/4", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "s4"},
    {"slow5", "http://push.test:{H}/slow/5", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "s5"},
    {"slow6", "http://push.test:{H}/slow/6", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "s6"},
    {"slow7", "http://push.test:{H}/slow/7", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "s7"},
    {"slow8", "http://push.test:{H}/slow/8", 20000, -1, "en", WR_PUSHMSG_ADMITTED, "s8"},
};
#define NSCEN (sizeof scenarios / sizeof scenarios[0])

static struct event_base *base;
static int64_t t0;
static size_t answered;
static int answers[NSCEN + 3];
static char topics[NSCEN + 1][WR_PUSHSUB_TOPIC_LEN + 1];

static void done(const wr_pushsend_result_t *r, void *arg)
{
    size_t i = (size_t)(uintptr_t)arg;
    const char *name = i < NSCEN ? scenarios[i].name : i == NSCEN ? "cancel" : "tiny";
    answers[i]++;
    printf("{\"name\":\"%s\",\"outcome\":\"%s\",\"why\":\"%s\",\"status\":%d,\"tries\":%u,"
           "\"retries\":%u,\"ms\":%lld,\"topic\":\"%s\"}\n",
           name, wr_pushsend_outcome_name(r->outcome), r->why, r->status, r->tries, r->retries,
           (long long)(wr_clock_wall_us() / 1000 - t0), i <= NSCEN ? topics[i] : "");
    fflush(stdout);
    if (i < NSCEN && ++answered == NSCEN)
        event_base_loopbreak(base);
}

/* url with "{H}" and "{S}" replaced by the ports. */
static void expand(char *out, size_t cap, const char *url, int http_port, int tls_port)
{
    size_t n = 0;
    for (const char *p = url; *p && n + 8 < cap; p++) {
        if (p[0] == '{' && (p[1] == 'H' || p[1] == 'S') && p[2] == '}') {
            n += (size_t)snprintf(out + n, cap - n, "%d", p[1] == 'H' ? http_port : tls_port);
            p += 2;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

static const char *arg_of(int argc, char **argv, const char *name)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    fprintf(stderr, "push_e2e: %s missing\n", name);
    exit(2);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 65536);
    *len = buf ? fread(buf, 1, 65535, f) : 0;
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    int http_port = atoi(arg_of(argc, argv, "--http-port"));
    int tls_port = atoi(arg_of(argc, argv, "--tls-port"));
    const char *p256dh = arg_of(argc, argv, "--p256dh"), *auth = arg_of(argc, argv, "--auth");
    const char *subject = arg_of(argc, argv, "--subject"), *ca = arg_of(argc, argv, "--ca");
    size_t pem_len = 0;
    char *pem = slurp(arg_of(argc, argv, "--key"), &pem_len);
    uint8_t key[WR_CRYPTO_P256_PRIV];
    if (!pem || wr_crypto_p256_from_pem(pem, pem_len, key) != WR_OK) {
        fprintf(stderr, "push_e2e: cannot read the VAPID key\n");
        return 2;
    }
    free(pem);

    base = event_base_new();
    struct evdns_base *dns = evdns_base_new(base, 0);
    if (!base || !dns || evdns_base_load_hosts(dns, arg_of(argc, argv, "--hosts")) != 0) {
        fprintf(stderr, "push_e2e: no loop or resolver\n");
        return 2;
    }
    wr_pushaddr_allow_t allow;
    memset(&allow, 0, sizeof allow);
    char spec[64];
    snprintf(spec, sizeof spec, "push.test:%d", http_port);
    wr_pushaddr_allow_add(&allow, spec);
    snprintf(spec, sizeof spec, "push.test:%d", tls_port);
    wr_pushaddr_allow_add(&allow, spec);
    snprintf(spec, sizeof spec, "wrong.test:%d", tls_port);
    wr_pushaddr_allow_add(&allow, spec);
    snprintf(spec, sizeof spec, "multi.test:%d", http_port);
    wr_pushaddr_allow_add(&allow, spec);

    wr_pushsend_config_t cfg = {
        .base = base,
        .vapid_key = key,
        .subject = subject,
        .allow = &allow,
        .max_in_flight = 4,
        .try_timeout_ms = 700,
        .backoff_first_ms = 200,
        .backoff_max_ms = 800,
        .dns = dns,
        .ca_file = ca,
    };
    wr_err_t err;
    wr_pushsend_t *ps = wr_pushsend_new(&cfg, &err);
    if (!ps) {
        fprintf(stderr, "push_e2e: wr_pushsend_new: %s\n", wr_strerror(err));
        return 2;
    }
    const wr_embed_file_t *f = wr_embed_find("web/i18n.json");
    json_t *i18n = f ? json_loadb((const char *)f->data, f->len, 0, NULL) : NULL;
    t0 = wr_clock_wall_us() / 1000;
    printf("{\"t0\":%lld}\n", (long long)t0); /* the deadlines count from here */
    static const uint8_t secret[] = "push e2e topic secret";
    static const char *const langs[] = {"en", "ko", "fr", NULL};
    for (size_t i = 0; i <= NSCEN; i++) {
        /* the last one (i == NSCEN) never gets an answer: cancelled by free */
        const struct scenario *s = i < NSCEN ? &scenarios[i] : &scenarios[0];
        char url[256], body[1024], payload[WR_PUSHCRYPT_PLAIN_MAX + 1];
        if (i < NSCEN)
            expand(url, sizeof url, s->url, http_port, tls_port);
        else
            snprintf(url, sizeof url, "http://push.test:%d/never/cancel", http_port);
        snprintf(body, sizeof body,
                 "{\"endpoint\":\"%s\",\"keys\":{\"p256dh\":\"%s\",\"auth\":\"%s\"},"
                 "\"lang\":\"%s\",\"expirationTime\":null}",
                 url, p256dh, auth, s->lang);
        json_t *j = json_loads(body, 0, NULL);
        wr_pushsub_t sub;
        /* the subscription route's check (an unlisted host over http:// is refused
         * there; here it is sent anyway, to see the sender refuse it too) */
        wr_pushsub_reason_t why = wr_pushsub_parse(j, &allow, langs, &sub);
        json_decref(j);
        if (why == WR_PUSHSUB_ENDPOINT && strcmp(s->name, "scheme") == 0) {
            memset(&sub, 0, sizeof sub);
            snprintf(sub.endpoint, sizeof sub.endpoint, "%s", url);
            wr_pushsub_t ok;
            snprintf(body, sizeof body,
                     "{\"endpoint\":\"https://x.example/\",\"keys\":{\"p256dh\":\"%s\","
                     "\"auth\":\"%s\"}}",
                     p256dh, auth);
            j = json_loads(body, 0, NULL);
            why = wr_pushsub_parse(j, NULL, langs, &ok);
            json_decref(j);
            memcpy(sub.p256dh, ok.p256dh, sizeof sub.p256dh);
            memcpy(sub.auth, ok.auth, sizeof sub.auth);
        }
        if (why != WR_PUSHSUB_OK) {
            fprintf(stderr, "push_e2e: %s: subscription refused (%s)\n", s->name,
                    wr_pushsub_reason_name(why));
            return 2;
        }
        int64_t expires = t0 + (s->deadline_ms < 0 ? -1000 : s->deadline_ms);
        size_t plen = 0;
        if (wr_pushmsg_build(i18n, sub.lang, s->kind, "sale", expires, payload, sizeof payload,
                             &plen) != WR_OK ||
            wr_pushsub_topic(secret, sizeof secret - 1, "sale", s->user, topics[i]) != WR_OK) {
            fprintf(stderr, "push_e2e: %s: no payload\n", s->name);
            return 2;
        }
        wr_pushsend_msg_t m = {
            .sub = &sub,
            .payload = payload,
            .len = plen,
            .topic = topics[i],
            .deadline_ms = i < NSCEN ? expires : t0 + 60000,
            .ttl_s = s->ttl_s,
        };
        err = wr_pushsend_push(ps, &m, done, (void *)(uintptr_t)i);
        if (err != WR_OK) {
            fprintf(stderr, "push_e2e: %s: push refused: %s\n", s->name, wr_strerror(err));
            return 2;
        }
    }
    /* the bound on unanswered messages: a second one is refused, cb never called */
    wr_pushsend_config_t small = cfg;
    small.max_queued = 1;
    wr_pushsend_t *tiny = wr_pushsend_new(&small, &err);
    if (!tiny) {
        fprintf(stderr, "push_e2e: the second sender: %s\n", wr_strerror(err));
        return 2;
    }
    {
        wr_pushsub_t sub;
        memset(&sub, 0, sizeof sub);
        json_t *j = json_pack("{s:s,s:{s:s,s:s}}", "endpoint", "https://push.example.net/x", "keys",
                              "p256dh", p256dh, "auth", auth);
        wr_pushsub_parse(j, NULL, langs, &sub);
        json_decref(j);
        wr_pushsend_msg_t m = {
            .sub = &sub, .payload = "{}", .len = 2, .deadline_ms = t0 + 60000, .ttl_s = -1};
        wr_err_t e1 = wr_pushsend_push(tiny, &m, done, (void *)(uintptr_t)(NSCEN + 1));
        wr_err_t e2 = wr_pushsend_push(tiny, &m, done, (void *)(uintptr_t)(NSCEN + 2));
        printf("{\"limit\":[\"%s\",\"%s\"]}\n", wr_errname(e1), wr_errname(e2));
        wr_pushsend_free(tiny); /* the first: canceled, from here */
    }
    wr_crypto_wipe(key, sizeof key);
    struct timeval limit = {60, 0};
    event_base_loopexit(base, &limit);
    event_base_dispatch(base);
    /* a push never answered: the sender's end answers it, once */
    wr_pushsend_free(ps);
    for (int k = 0; k < 5; k++) /* cancelled lookups call back from the loop */
        event_base_loop(base, EVLOOP_NONBLOCK);
    json_decref(i18n);
    evdns_base_free(dns, 0);
    event_base_free(base);
    int bad = answered != NSCEN || answers[NSCEN] != 1 || answers[NSCEN + 1] != 1 ||
              answers[NSCEN + 2] != 0;
    for (size_t i = 0; i < NSCEN; i++)
        bad |= answers[i] != 1;
    if (bad)
        fprintf(stderr, "push_e2e: not every push was answered exactly once\n");
    return bad ? 1 : 0;
}
