/*
 * waitroom-verify - checks a waiting room's public log from outside
 * (docs/API.md, "A line anyone can check" and "waitroom-verify"):
 *
 *   waitroom-verify [--state FILE] [--me U] [--json] [--timeout S] URL QUEUE VKEY
 *
 * It fetches the queue's latest checkpoint and checks its signature
 * against VKEY (the verifier key text, or a file holding it) and its
 * origin ("<key name>/<QUEUE>"); fetches every leaf below its size (1,000
 * per request), recomputes the Merkle root and compares; with --state,
 * checks that the checkpoint saved there by an earlier run is a prefix of
 * this one (the server's consistency proof, and the root of the leaves
 * just fetched at that size), then saves this one (a missing file is
 * created); replays the leaves (core/logreplay: the line, every admission,
 * every draw); with --me U, finds U's join leaf and checks the server's
 * inclusion proof of it. It prints a fairness statement (--json: one JSON
 * object) and exits
 *   0 everything checks and there is no overtake
 *   1 overtakes (or leaves that break the log's own rules)
 *   2 a signature, root, proof or consistency failure
 *   3 a draw that cannot be checked
 *   4 usage or network error
 * the first of 4, 2, 3, 1 that applies.
 *
 * Everything it computes is the server's own code (base/tlog, base/note,
 * core/logleaf, core/logreplay), run on what the server serves: a second,
 * independent implementation is the test's (tests/verify/logserver.py).
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/b64.h"
#include "base/ids.h"
#include "base/note.h"
#include "base/tlog.h"
#include "core/logleaf.h"
#include "core/logreplay.h"
#include "vhttp.h"

enum { EXIT_FAIR = 0, EXIT_OVERTAKE = 1, EXIT_BROKEN = 2, EXIT_DRAW = 3, EXIT_USAGE = 4 };

#define PAGE        1000 /* leaves per entries request (the server's cap) */
#define ENTRIES_MAX (PAGE * (WR_LOGLEAF_MAX + 1)) /* bytes of one entries answer */
#define SMALL_MAX   65536                         /* bytes of a checkpoint or proof answer */
#define STATE_MAX   8192

typedef struct {
    const char *state_path, *me, *url, *queue, *vkey;
    bool json;
    int timeout_s; /* --timeout: the deadline of each request (0: the default) */
    vhttp_t *http;
    wr_note_verifier_t v;
    wr_checkpoint_t cp;
    char checkpoint[WR_NOTE_MAX + 1];
    wr_crypto_sha256_t *sha;
    wr_logreplay_t *replay;
    /* the saved checkpoint (--state) */
    bool have_old;
    uint64_t old_size;
    uint8_t old_root[32], old_local[32]; /* saved; computed from the leaves */
    bool consistent;
    /* --me */
    bool me_found, me_ok;
    bool broken_me; /* the one failure is --me's: the log itself checks */
    uint64_t me_index;
    uint8_t me_leaf[32];
    /* what failed, for the statement */
    char broken[300];
    char net[300];
} run_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: waitroom-verify [--state FILE] [--me U] [--json] [--timeout S] URL QUEUE "
            "VKEY\n"
            "Checks the public log of QUEUE on the waiting room at URL: the checkpoint's\n"
            "signature under VKEY (the verifier key, or a file holding it), the root of\n"
            "every leaf, consistency with the checkpoint saved in FILE (then saves this\n"
            "one), the line's order (overtakes) and the opening draws; --me U checks the\n"
            "inclusion of log id U's join; --timeout S ends a request unanswered in S\n"
            "seconds (default %d). Exit: 0 fair, 1 overtakes, 2 signature, root, proof or\n"
            "consistency failure, 3 a draw that cannot be checked, 4 usage or network\n"
            "error.\n",
            VHTTP_TIMEOUT_S);
}

static void set_broken(run_t *r, const char *what)
{
    if (!r->broken[0])
        snprintf(r->broken, sizeof r->broken, "%s", what);
}

/* GET path; -1 (r->net set) when there is no answer or it is not 200. */
static int get(run_t *r, const char *path, size_t max, char **body, size_t *len)
{
    int status = 0;
    char err[256];
    if (vhttp_get(r->http, path, max, &status, body, len, err, sizeof err) != 0) {
        snprintf(r->net, sizeof r->net, "%s", err);
        return -1;
    }
    if (status != 200) {
        snprintf(r->net, sizeof r->net, "GET %s: HTTP %d: %.120s", path, status, *body);
        free(*body);
        *body = NULL;
        return -1;
    }
    return 0;
}

/* Reads the verifier key: a file when one is there, else the text. */
static int load_vkey(run_t *r)
{
    char buf[WR_NOTE_VERIFIER_MAX + 2];
    size_t n = 0;
    FILE *f = fopen(r->vkey, "rb");
    if (f) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    } else {
        n = strlen(r->vkey);
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, r->vkey, n);
    }
    buf[n] = '\0';
    if (wr_note_verifier_parse(buf, n, &r->v) != WR_OK) {
        fprintf(stderr, "waitroom-verify: %s: not a verifier key (name+keyid+base64)\n",
                f ? r->vkey : "VKEY");
        return -1;
    }
    return 0;
}

/* ---------- the saved checkpoint (--state) */

static int state_read(run_t *r)
{
    json_error_t e;
    FILE *f = fopen(r->state_path, "rb");
    if (!f) {
        if (errno == ENOENT)
            return 0; /* created at the end */
        fprintf(stderr, "waitroom-verify: %s: %s\n", r->state_path, strerror(errno));
        return -1;
    }
    json_t *o = json_loadf(f, 0, &e);
    fclose(f);
    const char *cp = o ? json_string_value(json_object_get(o, "checkpoint")) : NULL;
    wr_checkpoint_t old;
    if (!cp || wr_checkpoint_open(&r->v, cp, strlen(cp), &old) != WR_OK) {
        json_decref(o);
        fprintf(stderr, "waitroom-verify: %s: no checkpoint signed by this key in it\n",
                r->state_path);
        return -1;
    }
    json_decref(o);
    r->have_old = true;
    r->old_size = old.size;
    memcpy(r->old_root, old.root, 32);
    if (strcmp(old.origin, r->cp.origin) != 0) {
        set_broken(r, "the saved checkpoint is of another log");
        return 1;
    }
    return 0;
}

static int state_write(run_t *r)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", r->state_path);
    json_t *o = json_pack("{s:s, s:I, s:s}", "origin", r->cp.origin, "size", (json_int_t)r->cp.size,
                          "checkpoint", r->checkpoint);
    int rc = o && json_dump_file(o, tmp, JSON_INDENT(2)) == 0 && rename(tmp, r->state_path) == 0
                 ? 0
                 : -1;
    json_decref(o);
    if (rc != 0)
        fprintf(stderr, "waitroom-verify: %s: cannot save: %s\n", r->state_path, strerror(errno));
    return rc;
}

/* Decodes a JSON array of base64 hashes into proof; -1 when malformed. */
static int hashes_of(json_t *a, uint8_t proof[WR_TLOG_PROOF_MAX][32], size_t *n)
{
    if (!json_is_array(a) || json_array_size(a) > WR_TLOG_PROOF_MAX)
        return -1;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i));
        size_t len = 0;
        if (!s || wr_b64_decode(s, strlen(s), proof[i], 32, &len) != WR_OK || len != 32)
            return -1;
    }
    *n = json_array_size(a);
    return 0;
}

/* Fetches and parses the proof answer of GET
 * /v1/queues/{queue}/log/proof/{kind}?{ka}={a}&{kb}={b}: 0 ok (its hashes
 * in proof, n of them; the answer in *out, json_decref it), 1 malformed,
 * -1 network. */
static int fetch_proof(run_t *r, const char *kind, const char *ka, uint64_t a, const char *kb,
                       uint64_t b, uint8_t proof[WR_TLOG_PROOF_MAX][32], size_t *n, json_t **out)
{
    char path[600];
    snprintf(path, sizeof path, "/v1/queues/%s/log/proof/%s?%s=%" PRIu64 "&%s=%" PRIu64, r->queue,
             kind, ka, a, kb, b);
    char *body = NULL;
    size_t len = 0;
    if (get(r, path, SMALL_MAX, &body, &len) != 0)
        return -1;
    json_t *o = json_loadb(body, len, 0, NULL);
    free(body);
    if (!o || hashes_of(json_object_get(o, "hashes"), proof, n) != 0) {
        json_decref(o);
        return 1;
    }
    *out = o;
    return 0;
}

static int check_consistency(run_t *r)
{
    if (!r->have_old || r->old_size == 0 || r->old_size == r->cp.size) {
        r->consistent =
            !r->have_old || r->old_size != r->cp.size || memcmp(r->old_root, r->cp.root, 32) == 0;
        if (!r->consistent)
            set_broken(r, "the saved checkpoint has the same size and another root (a fork)");
        return 0;
    }
    if (r->old_size > r->cp.size) {
        set_broken(r, "the log is smaller than the saved checkpoint");
        return 0;
    }
    uint8_t proof[WR_TLOG_PROOF_MAX][32];
    size_t n = 0;
    json_t *o = NULL;
    int rc = fetch_proof(r, "consistency", "from", r->old_size, "to", r->cp.size, proof, &n, &o);
    if (rc < 0)
        return -1;
    json_decref(o);
    r->consistent = rc == 0 &&
                    wr_tlog_verify_consistency(r->sha, r->old_size, r->cp.size, r->old_root,
                                               r->cp.root, (const uint8_t(*)[32])proof, n) &&
                    memcmp(r->old_local, r->old_root, 32) == 0;
    if (!r->consistent)
        set_broken(r, "not consistent with the saved checkpoint (a fork or a rewrite)");
    return 0;
}

static int check_me(run_t *r)
{
    if (!r->me)
        return 0;
    if (!r->me_found) {
        r->broken_me = !r->broken[0];
        set_broken(r, "--me: no join of this log id in the log (a mistyped id, or a receipt the "
                      "log does not hold)");
        return 0;
    }
    uint8_t proof[WR_TLOG_PROOF_MAX][32], leaf[32];
    size_t n = 0, len = 0;
    json_t *o = NULL;
    int rc = fetch_proof(r, "inclusion", "index", r->me_index, "size", r->cp.size, proof, &n, &o);
    if (rc < 0)
        return -1;
    const char *lh = rc == 0 ? json_string_value(json_object_get(o, "leafHash")) : NULL;
    r->me_ok = lh && wr_b64_decode(lh, strlen(lh), leaf, 32, &len) == WR_OK && len == 32 &&
               memcmp(leaf, r->me_leaf, 32) == 0 &&
               wr_tlog_verify_inclusion(r->sha, r->me_index, r->cp.size, leaf,
                                        (const uint8_t(*)[32])proof, n, r->cp.root);
    json_decref(o);
    if (!r->me_ok) {
        r->broken_me = !r->broken[0];
        set_broken(r, "--me: the inclusion proof of the join does not check");
    }
    return 0;
}

/* ---------- the leaves */

/* One leaf (len bytes) at index i: hashed, replayed, looked at for --me. */
static int take_leaf(run_t *r, wr_tlog_frontier_t *f, uint64_t i, const char *leaf, size_t len)
{
    uint8_t h[32];
    if (wr_tlog_leaf_hash(r->sha, leaf, len, h) != WR_OK ||
        wr_tlog_frontier_append(r->sha, f, h, NULL, NULL) != WR_OK ||
        wr_logreplay_feed(r->replay, leaf, len) != WR_OK) {
        fprintf(stderr, "waitroom-verify: out of memory\n");
        return -1;
    }
    if (r->have_old && f->size == r->old_size)
        wr_tlog_frontier_root(r->sha, f, r->old_local);
    if (r->me && len < WR_LOGLEAF_MAX) {
        char key[64];
        snprintf(key, sizeof key, "\"u\":\"%s\"", r->me);
        wr_logleaf_t l;
        if (memmem(leaf, len, key, strlen(key)) &&
            wr_logleaf_parse(leaf, len, &l, NULL, 0) == WR_OK && l.e == WR_LOGLEAF_JOIN &&
            strcmp(l.u, r->me) == 0) {
            r->me_found = true;
            r->me_index = i;
            memcpy(r->me_leaf, h, 32);
        }
    }
    return 0;
}

static int fetch_leaves(run_t *r)
{
    wr_tlog_frontier_t f;
    wr_tlog_frontier_init(&f);
    uint64_t at = 0;
    while (at < r->cp.size) {
        uint64_t end = r->cp.size - at > PAGE ? at + PAGE : r->cp.size;
        char path[600], *body = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "/v1/queues/%s/log/entries?start=%" PRIu64 "&end=%" PRIu64,
                 r->queue, at, end);
        if (get(r, path, ENTRIES_MAX, &body, &len) != 0)
            return -1;
        uint64_t got = 0;
        size_t pos = 0;
        while (pos < len && at + got < end) {
            char *nl = memchr(body + pos, '\n', len - pos);
            if (!nl)
                break; /* a leaf without its newline: not served whole */
            size_t n = (size_t)(nl - (body + pos));
            if (take_leaf(r, &f, at + got, body + pos, n) != 0) {
                free(body);
                return -1;
            }
            got++;
            pos += n + 1;
        }
        bool extra = pos != len;
        free(body);
        if (got == 0 || extra) {
            set_broken(r, got == 0 ? "the server does not serve the leaves its checkpoint covers"
                                   : "an entries answer is not one leaf per line");
            return 0;
        }
        at += got;
    }
    uint8_t root[32];
    wr_tlog_frontier_root(r->sha, &f, root);
    if (memcmp(root, r->cp.root, 32) != 0)
        set_broken(r, "the leaves served do not hash to the checkpoint's root");
    return 0;
}

/* ---------- the statement */

static void print_text(run_t *r, const wr_logreplay_stats_t *st, int code)
{
    char root[64];
    wr_b64_encode(r->cp.root, 32, root, sizeof root, NULL);
    printf("log %s: size %" PRIu64 ", root %s\n", r->cp.origin, r->cp.size, root);
    printf("signature: ok (%s)\n", r->v.name);
    printf("checks: %s\n", r->broken[0] ? r->broken : "root ok, every leaf hashed");
    if (r->have_old)
        printf("consistency: %s with the saved checkpoint of size %" PRIu64 "\n",
               r->consistent ? "ok" : "FAILED", r->old_size);
    printf("joined %" PRIu64 ", admitted %" PRIu64 " (held returns %" PRIu64 "), away %" PRIu64
           ", waiting %" PRIu64 ", fail-open %" PRIu64 "\n",
           st->joined, st->admitted, st->held_returns, st->away, st->waiting, st->fail_open);
    printf("left: %" PRIu64 " left, %" PRIu64 " abandoned, %" PRIu64 " pending, %" PRIu64
           " removed\n",
           st->left[0], st->left[1], st->left[2], st->left[3]);
    if (st->draws == 0 && !st->draw_pending)
        printf("draw: none\n");
    else if (st->draw_failures)
        printf("draw: FAILED (%" PRIu64 " of %" PRIu64 " draws do not check)\n", st->draw_failures,
               st->draws);
    else
        printf("draw: checks (%" PRIu64 " draws)%s%s\n", st->draws,
               st->draw_independent ? ""
                                    : "; not independent of the operator (no beacon randomness)",
               st->draw_pending ? "; an opening awaits its draw" : "");
    printf("overtakes: %" PRIu64 "\n", st->overtakes);
    for (uint64_t i = 0; i < st->overtakes && i < WR_LOGREPLAY_LISTED; i++) {
        const wr_logreplay_overtake_t *o = &st->overtake[i];
        printf("  leaf %" PRIu64 ": admit of %s (%s)%s%s\n", o->index, o->u,
               wr_logreplay_why_name(o->why), o->expected[0] ? ", first was " : "", o->expected);
    }
    for (uint64_t i = 0; i < st->problems && i < WR_LOGREPLAY_LISTED; i++)
        printf("  leaf %" PRIu64 ": %s\n", st->problem[i].index, st->problem[i].what);
    if (r->me)
        printf("me: %s %s\n", r->me,
               r->me_ok ? "is in the log, inclusion proof ok" : "NOT proven in the log");
    static const char *const verdicts[] = {"fair: every admission followed the line",
                                           "NOT FAIR: overtakes", "BROKEN: the log does not check",
                                           "DRAW NOT CHECKED"};
    if (r->broken[0])
        printf("problem: %s\n", r->broken);
    if (code == EXIT_BROKEN && r->broken_me) /* the log checks; this person's place does not */
        printf("verdict: NOT PROVEN: the log checks, but not this place in it\n");
    else
        printf("verdict: %s\n", verdicts[code]);
}

static void print_json(run_t *r, const wr_logreplay_stats_t *st, int code)
{
    char root[64];
    wr_b64_encode(r->cp.root, 32, root, sizeof root, NULL);
    json_t *list = json_array(), *problems = json_array();
    for (uint64_t i = 0; i < st->overtakes && i < WR_LOGREPLAY_LISTED; i++) {
        const wr_logreplay_overtake_t *o = &st->overtake[i];
        json_array_append_new(list, json_pack("{s:I, s:s, s:s, s:s}", "index", (json_int_t)o->index,
                                              "u", o->u, "why", wr_logreplay_why_name(o->why),
                                              "expected", o->expected));
    }
    for (uint64_t i = 0; i < st->problems && i < WR_LOGREPLAY_LISTED; i++)
        json_array_append_new(problems,
                              json_pack("{s:I, s:s}", "index", (json_int_t)st->problem[i].index,
                                        "what", st->problem[i].what));
    json_t *o = json_pack(
        "{s:s, s:s, s:I, s:s, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, "
        "s:{s:I, s:I, s:I, s:I}, s:I, s:o, s:b, s:b, s:I, s:b, s:I, s:o, s:i}",
        "queue", r->queue, "origin", r->cp.origin, "size", (json_int_t)r->cp.size, "root", root,
        "signatureChecked", 1, "rootChecked", !r->broken[0] || r->broken_me, "joined",
        (json_int_t)st->joined, "admitted", (json_int_t)st->admitted, "heldReturns",
        (json_int_t)st->held_returns, "away", (json_int_t)st->away, "waiting",
        (json_int_t)st->waiting, "failOpen", (json_int_t)st->fail_open, "left", "left",
        (json_int_t)st->left[0], "abandoned", (json_int_t)st->left[1], "pending",
        (json_int_t)st->left[2], "removed", (json_int_t)st->left[3], "overtakes",
        (json_int_t)st->overtakes, "firstOvertakes", list, "drawChecked", st->draw_failures == 0,
        "drawIndependent", st->draw_independent, "draws", (json_int_t)st->draws, "drawPending",
        st->draw_pending, "invalid", (json_int_t)st->invalid, "problems", problems, "exit", code);
    if (r->have_old) {
        json_object_set_new(o, "consistent", json_boolean(r->consistent));
        json_object_set_new(o, "savedSize", json_integer((json_int_t)r->old_size));
    }
    if (r->broken[0])
        json_object_set_new(o, "broken", json_string(r->broken));
    if (r->me)
        json_object_set_new(o, "me",
                            json_pack("{s:s, s:b, s:b, s:I}", "u", r->me, "found", r->me_found,
                                      "included", r->me_ok, "index",
                                      (json_int_t)(r->me_found ? r->me_index : 0)));
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (s)
        printf("%s\n", s);
    free(s);
    json_decref(o);
}

/* ---------- main */

static int parse_args(run_t *r, int argc, char **argv)
{
    static const struct option opts[] = {
        {"state", required_argument, NULL, 's'}, {"me", required_argument, NULL, 'm'},
        {"json", no_argument, NULL, 'j'},        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 's')
            r->state_path = optarg;
        else if (c == 'm')
            r->me = optarg;
        else if (c == 'j')
            r->json = true;
        else if (c == 't') {
            char *end = NULL;
            long t = strtol(optarg, &end, 10);
            if (end == optarg || *end || t < 1 || t > 3600) {
                fprintf(stderr, "waitroom-verify: --timeout %s: not 1 to 3600 seconds\n", optarg);
                return -1;
            }
            r->timeout_s = (int)t;
        } else if (c == 'h') {
            usage(stdout);
            exit(0);
        } else
            return -1;
    }
    if (argc - optind != 3)
        return -1;
    r->url = argv[optind];
    r->queue = argv[optind + 1];
    r->vkey = argv[optind + 2];
    uint8_t ub[WR_LOGLEAF_U_BYTES];
    if (!wr_ids_valid_queue(r->queue)) {
        fprintf(stderr, "waitroom-verify: %s: not a queue name\n", r->queue);
        return -1;
    }
    if (r->me && wr_logleaf_u_bytes(r->me, ub) != WR_OK) {
        fprintf(stderr, "waitroom-verify: --me %s: not a log id (32 lowercase hex)\n", r->me);
        return -1;
    }
    return 0;
}

static int run(run_t *r)
{
    char err[300], *body = NULL, path[600];
    size_t len = 0;
    if (!(r->http = vhttp_open(r->url, r->timeout_s, err, sizeof err))) {
        fprintf(stderr, "waitroom-verify: %s\n", err);
        return EXIT_USAGE;
    }
    snprintf(path, sizeof path, "/v1/queues/%s/log/checkpoint", r->queue);
    if (get(r, path, SMALL_MAX, &body, &len) != 0) {
        fprintf(stderr, "waitroom-verify: %s\n", r->net);
        return EXIT_USAGE;
    }
    bool fits = len < sizeof r->checkpoint;
    if (fits)
        memcpy(r->checkpoint, body, len + 1);
    wr_err_t err_cp = fits ? wr_checkpoint_open(&r->v, body, len, &r->cp) : WR_EINVAL;
    free(body);
    char origin[WR_CHECKPOINT_ORIGIN_MAX + 2];
    snprintf(origin, sizeof origin, "%s/%s", r->v.name, r->queue);
    if (err_cp != WR_OK || strcmp(r->cp.origin, origin) != 0) {
        fprintf(stderr, "waitroom-verify: the checkpoint %s\n",
                err_cp == WR_EAUTH ? "is not signed by this key"
                : err_cp != WR_OK  ? "is not a signed checkpoint"
                                   : "is of another log (origin)");
        return EXIT_BROKEN;
    }
    if (r->state_path && state_read(r) < 0)
        return EXIT_USAGE;
    if (fetch_leaves(r) < 0 || check_consistency(r) < 0 || check_me(r) < 0) {
        fprintf(stderr, "waitroom-verify: %s\n", r->net);
        return EXIT_USAGE;
    }
    const wr_logreplay_stats_t *st = wr_logreplay_stats(r->replay);
    int code = r->broken[0]                   ? EXIT_BROKEN
               : st->draw_failures            ? EXIT_DRAW
               : st->overtakes || st->invalid ? EXIT_OVERTAKE
                                              : EXIT_FAIR;
    if (r->json)
        print_json(r, st, code);
    else
        print_text(r, st, code);
    /* a checkpoint that checks replaces the saved one (never a broken one) */
    if (r->state_path && code != EXIT_BROKEN && state_write(r) != 0)
        return EXIT_USAGE;
    return code;
}

int main(int argc, char **argv)
{
    run_t *r = calloc(1, sizeof(*r));
    if (!r)
        return EXIT_USAGE;
    int code = EXIT_USAGE;
    if (parse_args(r, argc, argv) != 0) {
        usage(stderr);
    } else if (load_vkey(r) == 0) {
        r->sha = wr_crypto_sha256_new();
        r->replay = wr_logreplay_new();
        if (r->sha && r->replay)
            code = run(r);
    }
    vhttp_close(r->http);
    wr_logreplay_free(r->replay);
    wr_crypto_sha256_free(r->sha);
    free(r);
    return code;
}
