/*
 * note.h - C2SP signed notes with Ed25519 keys, and the C2SP tlog
 * checkpoint they carry: the public log's signed tree heads (docs/API.md,
 * "A line anyone can check").
 *
 * A signed note is its text (lines each ending in "\n"), an empty line,
 * then signature lines "— <key name> <base64(key id (4) || signature
 * (64))>\n" (the em dash is U+2014). The key id is the first 4 bytes of
 * SHA-256(<key name> || "\n" || 0x01 || the 32-byte public key), and the
 * verifier key the text "<key name>+<key id, 8 lowercase hex>+<base64(0x01
 * || public key)>": golang.org/x/mod/sumdb/note's rules, byte for byte.
 *
 * A checkpoint's text is three lines: the origin ("<logName>/<queue>"),
 * the tree size in decimal, the root hash in base64; no extension lines.
 *
 * Base64 is the standard alphabet with padding. No allocation; every
 * output buffer is the caller's, with its capacity; pure (signing goes
 * through crypto.h).
 */
#ifndef WR_NOTE_H
#define WR_NOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/error.h"

#define WR_NOTE_NAME_MAX         128  /* bytes of a key name */
#define WR_NOTE_KEY_ID           4    /* bytes of a key id */
#define WR_NOTE_VERIFIER_MAX     200  /* bytes of a verifier key text, and more */
#define WR_NOTE_TEXT_MAX         4096 /* bytes of a note's text this module signs or opens */
#define WR_NOTE_MAX              8192 /* bytes of a whole signed note it opens */
#define WR_NOTE_SIGS_MAX         16   /* signature lines it reads at most */
#define WR_CHECKPOINT_MAX        512  /* bytes of a signed checkpoint (origin up to 160) */
#define WR_CHECKPOINT_ORIGIN_MAX 160

/* A verifier key, parsed. */
typedef struct wr_note_verifier {
    char name[WR_NOTE_NAME_MAX + 1];
    uint8_t id[WR_NOTE_KEY_ID];
    uint8_t pub[WR_CRYPTO_ED25519_PUB];
} wr_note_verifier_t;

/* True for a key name: 1..WR_NOTE_NAME_MAX bytes, none of them a space,
 * a control character or '+' (the note's rule; --log-name is narrower). */
bool wr_note_valid_name(const char *name, size_t len);

/* The key id of an Ed25519 public key under a key name (NUL-terminated):
 * SHA-256(name || "\n" || 0x01 || pub), its first 4 bytes. WR_OK,
 * WR_EINVAL (a name that is not valid) or WR_EIO. */
wr_err_t wr_note_key_id(const char *name, const uint8_t pub[WR_CRYPTO_ED25519_PUB],
                        uint8_t id[WR_NOTE_KEY_ID]);

/* The verifier key text of pub under name, NUL-terminated, into out (cap
 * bytes; WR_NOTE_VERIFIER_MAX is enough), its length in *out_len (may be
 * NULL). WR_OK, WR_EINVAL or WR_ELIMIT. */
wr_err_t wr_note_verifier_format(const char *name, const uint8_t pub[WR_CRYPTO_ED25519_PUB],
                                 char *out, size_t cap, size_t *out_len);

/* Parses a verifier key text (len bytes; trailing white space dropped):
 * name, key id, type 0x01 and a 32-byte key; the id must be the key's.
 * WR_OK, or WR_EINVAL for anything else. */
wr_err_t wr_note_verifier_parse(const char *text, size_t len, wr_note_verifier_t *v);

/*
 * Signs text (len bytes, 1..WR_NOTE_TEXT_MAX, ending in "\n", no empty
 * line at its end) with the private key seed under name: writes the note
 * (text, "\n", the signature line) NUL-terminated into out (cap bytes), its
 * length in *out_len. WR_OK, WR_EINVAL (bad name or text), WR_ELIMIT or
 * WR_EIO.
 */
wr_err_t wr_note_sign(const char *name, const uint8_t seed[WR_CRYPTO_ED25519_SEED],
                      const char *text, size_t len, char *out, size_t cap, size_t *out_len);

/*
 * Opens a signed note (len bytes): finds a signature line of v (its name
 * and key id) whose signature over the text verifies; other signatures
 * are ignored. On WR_OK *text_len is the length of the text (the note's
 * first bytes). WR_EINVAL: not a well-formed note (no empty line before
 * the signatures, a signature line that is not "— name base64\n", more
 * than WR_NOTE_SIGS_MAX of them, too long); WR_EAUTH: well-formed, but no
 * signature of v verifies.
 */
wr_err_t wr_note_open(const wr_note_verifier_t *v, const char *note, size_t len, size_t *text_len);

/* ---------- checkpoints */

typedef struct wr_checkpoint {
    char origin[WR_CHECKPOINT_ORIGIN_MAX + 1];
    uint64_t size;
    uint8_t root[32];
} wr_checkpoint_t;

/* The checkpoint text "<origin>\n<size>\n<base64 root>\n" into out (cap
 * bytes, NUL-terminated), its length in *out_len. WR_OK, WR_EINVAL (an
 * origin empty, longer than WR_CHECKPOINT_ORIGIN_MAX or with a control
 * character) or WR_ELIMIT. */
wr_err_t wr_checkpoint_text(const char *origin, uint64_t size, const uint8_t root[32], char *out,
                            size_t cap, size_t *out_len);

/* The signed checkpoint: wr_checkpoint_text signed by wr_note_sign under
 * name. WR_CHECKPOINT_MAX is enough for cap. */
wr_err_t wr_checkpoint_sign(const char *name, const uint8_t seed[WR_CRYPTO_ED25519_SEED],
                            const char *origin, uint64_t size, const uint8_t root[32], char *out,
                            size_t cap, size_t *out_len);

/* Parses a checkpoint text (len bytes): exactly three lines, a size in
 * canonical decimal (no sign, no leading zero but "0"), a root of 32
 * bytes in canonical base64. WR_OK or WR_EINVAL. */
wr_err_t wr_checkpoint_parse(const char *text, size_t len, wr_checkpoint_t *cp);

/* Opens a signed checkpoint: wr_note_open with v, then wr_checkpoint_parse
 * of its text. WR_OK, WR_EINVAL (malformed) or WR_EAUTH (no valid
 * signature of v). */
wr_err_t wr_checkpoint_open(const wr_note_verifier_t *v, const char *note, size_t len,
                            wr_checkpoint_t *cp);

#endif
