/*
 * api_beacon.c - the opening draw's beacon (docs/API.md 1.3, "The opening
 * draw, fixed in public"): GET {beaconUrl}/public/{round} of a
 * drand-compatible beacon through the API's outgoing client (api_client.h),
 * for a queue whose opening waits for it (the signer's round names them
 * once a second: runtime/logsign.h). A 200 whose JSON has the round asked
 * and its randomness (1 to 64 bytes of hex) is handed to the store
 * (log_beacon), which draws with it at the next tick. Anything else (404:
 * the round is not out yet; an error; a bad answer) is asked again at the
 * next round, until the store stops waiting 60 s after opensAt and draws
 * without it, saying so in the draw leaf (beaconError). The beacon's own
 * signature is not checked here: the draw leaf reveals round and
 * randomness for anyone to check with the beacon's tools.
 */
#include <event2/event.h>
#include <event2/http.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/log.h"
#include "core/logleaf.h"
#include "http/api.h"
#include "http/api_client.h"

#define BEACON_TIMEOUT_MS 5000
#define BEACON_ANSWER_MAX 4096
#define BEACON_IN_FLIGHT  16

typedef struct {
    wr_api_t *api;
    struct evhttp_connection *evcon;
    struct event *ev; /* made active when the answer is in: frees the connection */
    char queue[WR_QUEUE_NAME_MAX + 1];
    uint64_t round;
    bool done, ok;
    uint8_t randomness[WR_LOGLEAF_RANDOM_MAX];
    size_t len;
} beacon_t;

static size_t in_flight;

static void stored_cb(wr_err_t err, const wr_log_answer_t *res, void *arg)
{
    (void)res;
    char *queue = arg;
    if (err == WR_OK)
        wr_info("public log: queue %s: the beacon's round is in, the opening draws with it", queue);
    free(queue);
}

/* From the loop: frees the request, hands a good answer to the store. */
static void deliver(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    beacon_t *b = arg;
    event_free(b->ev);
    if (b->evcon)
        evhttp_connection_free(b->evcon);
    if (in_flight > 0)
        in_flight--;
    char *queue = b->ok ? strdup(b->queue) : NULL;
    if (queue && wr_store_log_beacon(b->api->store, b->queue, b->round, b->randomness, b->len, NULL,
                                     stored_cb, queue) != WR_OK)
        free(queue);
    free(b);
}

/* {"round": R, "randomness": "<hex>", ...} with R the round asked. */
static bool read_answer(beacon_t *b, const char *body, size_t n)
{
    json_error_t jerr;
    json_t *o = json_loadb(body, n, 0, &jerr);
    json_t *r = json_object_get(o, "round"), *x = json_object_get(o, "randomness");
    const char *hex = json_string_value(x);
    size_t hl = hex ? json_string_length(x) : 0;
    bool ok = json_is_integer(r) && (uint64_t)json_integer_value(r) == b->round && hex && hl >= 2 &&
              hl % 2 == 0 && hl / 2 <= sizeof b->randomness &&
              wr_hex_decode(hex, hl, b->randomness, hl / 2);
    b->len = ok ? hl / 2 : 0;
    json_decref(o);
    return ok;
}

static void done_cb(struct evhttp_request *req, void *arg)
{
    beacon_t *b = arg;
    if (b->done)
        return;
    b->done = true;
    int status = req ? evhttp_request_get_response_code(req) : 0;
    if (status == 200) {
        char body[BEACON_ANSWER_MAX];
        ev_ssize_t got = wr_api__client_body(req, body, sizeof body);
        b->ok = got > 0 && read_answer(b, body, (size_t)got);
        if (!b->ok)
            wr_warn("public log: queue %s: the beacon's answer for round %" PRIu64
                    " is not {\"round\", \"randomness\"}: asked again",
                    b->queue, b->round);
    }
    event_active(b->ev, EV_TIMEOUT, 1);
}

void wr_api_beacon_fetch(void *api, const char *queue, const char *url, uint64_t round)
{
    wr_api_t *a = api;
    wr_captcha_url_t u;
    char path[sizeof u.path + 32];
    if (in_flight >= BEACON_IN_FLIGHT || !wr_captcha_url_parse(url, &u))
        return;
    size_t pl = strlen(u.path);
    snprintf(path, sizeof path, "%s%spublic/%" PRIu64, u.path,
             pl > 0 && u.path[pl - 1] == '/' ? "" : "/", round);
    beacon_t *b = calloc(1, sizeof *b);
    if (!b)
        return;
    b->api = a;
    b->round = round;
    snprintf(b->queue, sizeof b->queue, "%s", queue);
    b->ev = evtimer_new(a->base, deliver, b);
    b->evcon =
        b->ev ? wr_api__client_connection(a, &u, BEACON_TIMEOUT_MS, BEACON_ANSWER_MAX) : NULL;
    struct evhttp_request *req = b->evcon ? evhttp_request_new(done_cb, b) : NULL;
    if (!req) {
        if (b->evcon)
            evhttp_connection_free(b->evcon);
        if (b->ev)
            event_free(b->ev);
        free(b);
        return;
    }
    wr_api__client_headers(req, &u);
    in_flight++;
    struct timeval tv = {BEACON_TIMEOUT_MS / 1000 + 1, 0};
    evtimer_add(b->ev, &tv); /* the deadline, should the client never answer */
    if (evhttp_make_request(b->evcon, req, EVHTTP_REQ_GET, path) != 0 && !b->done) {
        b->done = true;
        event_active(b->ev, EV_TIMEOUT, 1);
    }
}
