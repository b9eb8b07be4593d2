/*
 * fuzz_publog.c - libFuzzer target: what waitroom-verify reads from a
 * server, and what a server's log routes will read back from a store:
 * signed checkpoints (base/note.h), verifier keys, leaves (core/logleaf.h)
 * and their replay (core/logreplay.h), proofs (base/tlog.h). The input is
 * split at the first NUL: the first part is opened as a signed checkpoint
 * under a fixed key and parsed as a verifier key, the second is fed as
 * leaves, one per line, to one replay; the whole input's bytes are also
 * tried as proof hashes.
 *
 * Invariants: nothing the fixed key did not sign opens; a leaf that parses
 * encodes to bytes that parse to the same encoding; a verifier key that
 * parses formats back to its text; no proof of garbage verifies.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/note.h"
#include "base/tlog.h"
#include "core/logleaf.h"
#include "core/logreplay.h"

static const uint8_t SEED[32] = "fuzz-publog-seed-0123456789abcde";

static void leaves(wr_logreplay_t *r, const char *p, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) : n;
        wr_logleaf_t l;
        if (wr_logleaf_parse(p, len, &l, NULL, 0) == WR_OK) {
            char a[WR_LOGLEAF_MAX], b[WR_LOGLEAF_MAX];
            size_t alen = 0;
            wr_logleaf_t again;
            /* a parsed leaf may be one the encoder refuses (a draw with
             * both randomness and an error); if it encodes, its encoding
             * is a fixed point */
            if (wr_logleaf_encode(&l, a, sizeof a, &alen) == WR_OK) {
                if (wr_logleaf_parse(a, alen, &again, NULL, 0) != WR_OK ||
                    wr_logleaf_encode(&again, b, sizeof b, NULL) != WR_OK || strcmp(a, b) != 0)
                    abort();
            }
        }
        if (wr_logreplay_feed(r, p, len) != WR_OK)
            abort();
        if (!nl)
            break;
        n -= len + 1;
        p = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static wr_note_verifier_t v;
    static wr_crypto_sha256_t *sha;
    if (!sha) {
        uint8_t pub[32];
        char text[WR_NOTE_VERIFIER_MAX];
        sha = wr_crypto_sha256_new();
        if (!sha || wr_crypto_ed25519_public(SEED, pub) != WR_OK ||
            wr_note_verifier_format("fuzz.example", pub, text, sizeof text, NULL) != WR_OK ||
            wr_note_verifier_parse(text, strlen(text), &v) != WR_OK)
            abort();
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t clen = nul ? (size_t)(nul - data) : size;

    wr_checkpoint_t cp;
    if (wr_checkpoint_open(&v, (const char *)data, clen, &cp) == WR_OK)
        abort(); /* the input cannot hold a signature of the fixed key */
    wr_note_verifier_t other;
    if (wr_note_verifier_parse((const char *)data, clen, &other) == WR_OK) {
        char back[WR_NOTE_VERIFIER_MAX];
        if (wr_note_verifier_format(other.name, other.pub, back, sizeof back, NULL) != WR_OK ||
            strncmp(back, (const char *)data, strlen(back)) != 0)
            abort();
    }
    wr_checkpoint_parse((const char *)data, clen, &cp);

    if (nul) {
        wr_logreplay_t *r = wr_logreplay_new();
        if (!r)
            abort();
        leaves(r, (const char *)nul + 1, size - clen - 1);
        const wr_logreplay_stats_t *st = wr_logreplay_stats(r);
        if (st->held_returns > st->admitted)
            abort();
        wr_logreplay_free(r);
    }

    /* garbage as a proof: hashes from the input, never accepted */
    uint8_t proof[WR_TLOG_PROOF_MAX][32], root[32], leaf[32];
    size_t n = size / 32 > 8 ? 8 : size / 32;
    memcpy(proof, data, n * 32);
    memset(root, 0x5a, sizeof root);
    memset(leaf, 0xa5, sizeof leaf);
    uint64_t a = size, b = size * 3 + 1;
    if (wr_tlog_verify_inclusion(sha, a % b, b, leaf, (const uint8_t(*)[32])proof, n, root))
        abort();
    if (a % b > 0 &&
        wr_tlog_verify_consistency(sha, a % b, b, leaf, root, (const uint8_t(*)[32])proof, n))
        abort();
    return 0;
}
