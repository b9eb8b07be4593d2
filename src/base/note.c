/*
 * note.c - C2SP signed notes and tlog checkpoints (note.h).
 *
 * Writing is snprintf into the caller's buffer after the lengths are
 * checked. Reading is strict where a loose reader would let two texts mean
 * one thing: the note splits at its last empty line ("\n\n", as
 * golang.org/x/mod/sumdb/note does), each signature line must be exactly
 * "— " name " " base64 "\n", the base64 canonical (b64.h refuses any other
 * spelling of the same bytes), the checkpoint's size canonical decimal.
 * Only then is a signature checked, and only one whose name and key id
 * are the verifier's.
 */
#include "base/note.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/b64.h"
#include "base/hex.h"

#define EM_DASH     "\xe2\x80\x94" /* U+2014 in UTF-8 */
#define SIG_PREFIX  EM_DASH " "
#define ALG_ED25519 0x01
#define SIG_BLOB    (WR_NOTE_KEY_ID + WR_CRYPTO_ED25519_SIG)

bool wr_note_valid_name(const char *name, size_t len)
{
    if (!name || len == 0 || len > WR_NOTE_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= 0x20 || c == 0x7f || c == '+')
            return false;
    }
    return true;
}

wr_err_t wr_note_key_id(const char *name, const uint8_t pub[WR_CRYPTO_ED25519_PUB],
                        uint8_t id[WR_NOTE_KEY_ID])
{
    if (!name || !pub || !id || !wr_note_valid_name(name, strlen(name)))
        return WR_EINVAL;
    uint8_t buf[WR_NOTE_NAME_MAX + 2 + WR_CRYPTO_ED25519_PUB], md[WR_CRYPTO_SHA256_LEN];
    size_t n = strlen(name);
    memcpy(buf, name, n);
    buf[n++] = '\n';
    buf[n++] = ALG_ED25519;
    memcpy(buf + n, pub, WR_CRYPTO_ED25519_PUB);
    n += WR_CRYPTO_ED25519_PUB;
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    if (!h)
        return WR_ENOMEM;
    wr_err_t err = wr_crypto_sha256_digest(h, buf, n, md);
    wr_crypto_sha256_free(h);
    if (err == WR_OK)
        memcpy(id, md, WR_NOTE_KEY_ID);
    return err;
}

wr_err_t wr_note_verifier_format(const char *name, const uint8_t pub[WR_CRYPTO_ED25519_PUB],
                                 char *out, size_t cap, size_t *out_len)
{
    uint8_t id[WR_NOTE_KEY_ID], key[1 + WR_CRYPTO_ED25519_PUB];
    char b64[64];
    if (!out)
        return WR_EINVAL;
    wr_err_t err = wr_note_key_id(name, pub, id);
    if (err != WR_OK)
        return err;
    key[0] = ALG_ED25519;
    memcpy(key + 1, pub, WR_CRYPTO_ED25519_PUB);
    err = wr_b64_encode(key, sizeof key, b64, sizeof b64, NULL);
    if (err != WR_OK)
        return err;
    int n = snprintf(out, cap, "%s+%02x%02x%02x%02x+%s", name, id[0], id[1], id[2], id[3], b64);
    if (n < 0 || (size_t)n >= cap)
        return WR_ELIMIT;
    if (out_len)
        *out_len = (size_t)n;
    return WR_OK;
}

wr_err_t wr_note_verifier_parse(const char *text, size_t len, wr_note_verifier_t *v)
{
    if (!text || !v)
        return WR_EINVAL;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' ||
                       text[len - 1] == '\t'))
        len--;
    /* name + 8 hex + base64: the base64 may hold '+', so split at the first two */
    const char *p1 = memchr(text, '+', len);
    if (!p1)
        return WR_EINVAL;
    size_t name_len = (size_t)(p1 - text);
    const char *hex = p1 + 1;
    size_t rest = len - name_len - 1;
    if (!wr_note_valid_name(text, name_len) || rest < 10 || hex[8] != '+')
        return WR_EINVAL;
    uint8_t id[WR_NOTE_KEY_ID], key[2 + WR_CRYPTO_ED25519_PUB];
    if (!wr_hex_decode(hex, 2 * WR_NOTE_KEY_ID, id, WR_NOTE_KEY_ID))
        return WR_EINVAL;
    size_t key_len = 0;
    if (wr_b64_decode(hex + 9, rest - 9, key, sizeof key, &key_len) != WR_OK ||
        key_len != 1 + WR_CRYPTO_ED25519_PUB || key[0] != ALG_ED25519)
        return WR_EINVAL;
    memcpy(v->name, text, name_len);
    v->name[name_len] = '\0';
    memcpy(v->pub, key + 1, WR_CRYPTO_ED25519_PUB);
    uint8_t want[WR_NOTE_KEY_ID];
    if (wr_note_key_id(v->name, v->pub, want) != WR_OK || memcmp(want, id, WR_NOTE_KEY_ID) != 0)
        return WR_EINVAL;
    memcpy(v->id, id, WR_NOTE_KEY_ID);
    return WR_OK;
}

/* True for a note text: ends in "\n", no empty line at its end, no NUL. */
static bool valid_text(const char *text, size_t len)
{
    if (!text || len == 0 || len > WR_NOTE_TEXT_MAX || text[len - 1] != '\n')
        return false;
    if (len >= 2 && text[len - 2] == '\n')
        return false;
    return memchr(text, '\0', len) == NULL;
}

wr_err_t wr_note_sign(const char *name, const uint8_t seed[WR_CRYPTO_ED25519_SEED],
                      const char *text, size_t len, char *out, size_t cap, size_t *out_len)
{
    uint8_t pub[WR_CRYPTO_ED25519_PUB], blob[SIG_BLOB];
    char b64[128];
    if (!name || !seed || !out || !valid_text(text, len))
        return WR_EINVAL;
    wr_err_t err = wr_crypto_ed25519_public(seed, pub);
    if (err == WR_OK)
        err = wr_note_key_id(name, pub, blob);
    if (err == WR_OK)
        err = wr_crypto_ed25519_sign(seed, text, len, blob + WR_NOTE_KEY_ID);
    if (err == WR_OK)
        err = wr_b64_encode(blob, sizeof blob, b64, sizeof b64, NULL);
    if (err != WR_OK)
        return err;
    int n = snprintf(out, cap, "%.*s\n" SIG_PREFIX "%s %s\n", (int)len, text, name, b64);
    if (n < 0 || (size_t)n >= cap)
        return WR_ELIMIT;
    if (out_len)
        *out_len = (size_t)n;
    return WR_OK;
}

/* Checks one signature line (without its "\n") against v: WR_OK when it
 * is v's and verifies, WR_ENOTFOUND when it is another key's, WR_EAUTH
 * when it is v's and does not verify, WR_EINVAL when malformed. */
static wr_err_t check_sig_line(const wr_note_verifier_t *v, const char *text, size_t text_len,
                               const char *line, size_t len)
{
    size_t pre = sizeof SIG_PREFIX - 1;
    if (len < pre || memcmp(line, SIG_PREFIX, pre) != 0)
        return WR_EINVAL;
    line += pre;
    len -= pre;
    const char *sp = memchr(line, ' ', len);
    if (!sp)
        return WR_EINVAL;
    size_t name_len = (size_t)(sp - line);
    if (!wr_note_valid_name(line, name_len))
        return WR_EINVAL;
    uint8_t blob[SIG_BLOB + 64];
    size_t blob_len = 0;
    if (wr_b64_decode(sp + 1, len - name_len - 1, blob, sizeof blob, &blob_len) != WR_OK ||
        blob_len < WR_NOTE_KEY_ID)
        return WR_EINVAL;
    if (name_len != strlen(v->name) || memcmp(line, v->name, name_len) != 0 ||
        memcmp(blob, v->id, WR_NOTE_KEY_ID) != 0)
        return WR_ENOTFOUND;
    if (blob_len != SIG_BLOB ||
        !wr_crypto_ed25519_verify(v->pub, text, text_len, blob + WR_NOTE_KEY_ID))
        return WR_EAUTH;
    return WR_OK;
}

wr_err_t wr_note_open(const wr_note_verifier_t *v, const char *note, size_t len, size_t *text_len)
{
    if (!v || !note || len == 0 || len > WR_NOTE_MAX || note[len - 1] != '\n' ||
        memchr(note, '\0', len))
        return WR_EINVAL;
    /* the last "\n\n": the text ends at its first "\n" */
    size_t split = 0;
    bool found = false;
    for (size_t i = len - 1; i > 0; i--) {
        if (note[i] == '\n' && note[i - 1] == '\n') {
            split = i;
            found = true;
            break;
        }
    }
    if (!found || !valid_text(note, split))
        return WR_EINVAL;
    size_t at = split + 1, sigs = 0;
    bool ok = false; /* a bad signature of v beside a good one: still v's note */
    while (at < len) {
        const char *nl = memchr(note + at, '\n', len - at);
        size_t line_len = (size_t)(nl - (note + at));
        if (++sigs > WR_NOTE_SIGS_MAX)
            return WR_EINVAL;
        wr_err_t err = check_sig_line(v, note, split, note + at, line_len);
        if (err == WR_EINVAL)
            return err;
        ok = ok || err == WR_OK;
        at += line_len + 1;
    }
    if (sigs == 0)
        return WR_EINVAL;
    if (!ok)
        return WR_EAUTH;
    if (text_len)
        *text_len = split;
    return WR_OK;
}

/* ---------- checkpoints */

wr_err_t wr_checkpoint_text(const char *origin, uint64_t size, const uint8_t root[32], char *out,
                            size_t cap, size_t *out_len)
{
    char b64[64];
    if (!origin || !root || !out)
        return WR_EINVAL;
    size_t olen = strlen(origin);
    if (olen == 0 || olen > WR_CHECKPOINT_ORIGIN_MAX)
        return WR_EINVAL;
    for (size_t i = 0; i < olen; i++) {
        if ((unsigned char)origin[i] < 0x20 || origin[i] == 0x7f)
            return WR_EINVAL;
    }
    wr_err_t err = wr_b64_encode(root, 32, b64, sizeof b64, NULL);
    if (err != WR_OK)
        return err;
    int n = snprintf(out, cap, "%s\n%" PRIu64 "\n%s\n", origin, size, b64);
    if (n < 0 || (size_t)n >= cap)
        return WR_ELIMIT;
    if (out_len)
        *out_len = (size_t)n;
    return WR_OK;
}

wr_err_t wr_checkpoint_sign(const char *name, const uint8_t seed[WR_CRYPTO_ED25519_SEED],
                            const char *origin, uint64_t size, const uint8_t root[32], char *out,
                            size_t cap, size_t *out_len)
{
    char text[WR_CHECKPOINT_MAX];
    size_t len = 0;
    wr_err_t err = wr_checkpoint_text(origin, size, root, text, sizeof text, &len);
    if (err != WR_OK)
        return err;
    return wr_note_sign(name, seed, text, len, out, cap, out_len);
}

wr_err_t wr_checkpoint_parse(const char *text, size_t len, wr_checkpoint_t *cp)
{
    if (!text || !cp || len == 0 || text[len - 1] != '\n')
        return WR_EINVAL;
    const char *l1 = memchr(text, '\n', len);
    size_t olen = (size_t)(l1 - text);
    if (olen == 0 || olen > WR_CHECKPOINT_ORIGIN_MAX)
        return WR_EINVAL;
    const char *s = l1 + 1, *end = text + len;
    const char *l2 = memchr(s, '\n', (size_t)(end - s));
    if (!l2 || l2 == s || (l2 - s > 1 && *s == '0') || l2 - s > 20)
        return WR_EINVAL;
    uint64_t size = 0;
    for (const char *p = s; p < l2; p++) {
        if (*p < '0' || *p > '9')
            return WR_EINVAL;
        unsigned d = (unsigned)(*p - '0');
        if (size > (UINT64_MAX - d) / 10)
            return WR_EINVAL;
        size = size * 10 + d;
    }
    const char *r = l2 + 1;
    const char *l3 = memchr(r, '\n', (size_t)(end - r));
    if (!l3 || l3 + 1 != end)
        return WR_EINVAL; /* exactly three lines */
    size_t root_len = 0;
    if (wr_b64_decode(r, (size_t)(l3 - r), cp->root, sizeof cp->root, &root_len) != WR_OK ||
        root_len != 32)
        return WR_EINVAL;
    for (size_t i = 0; i < olen; i++) {
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            return WR_EINVAL;
    }
    memcpy(cp->origin, text, olen);
    cp->origin[olen] = '\0';
    cp->size = size;
    return WR_OK;
}

wr_err_t wr_checkpoint_open(const wr_note_verifier_t *v, const char *note, size_t len,
                            wr_checkpoint_t *cp)
{
    size_t text_len = 0;
    wr_err_t err = wr_note_open(v, note, len, &text_len);
    if (err != WR_OK)
        return err;
    return wr_checkpoint_parse(note, text_len, cp);
}
