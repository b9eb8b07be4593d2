/*
 * test_note.c - C2SP signed notes and checkpoints: golang.org/x/mod's
 * sumdb/note example (the PeterNeumann key: its key id, verifier key and
 * signature, byte for byte, so our key id, signature line and key text are
 * Go's), the signed-note spec's example key, then our checkpoints: the
 * exact text, signing, opening, and every way a note or checkpoint can be
 * malformed or forged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/b64.h"
#include "base/note.h"
#include "unit_main.h"

#define PETER_VKEY "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
/* the seed of PRIVATE+KEY+PeterNeumann+c74f20a3+<this>: 0x01 || seed */
#define PETER_SKEY_B64 "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
#define PETER_TEXT                                                                                 \
    "If you think cryptography is the answer to your problem,\n"                                   \
    "then you don't know what your problem is.\n"
#define PETER_SIG                                                                                  \
    "\xe2\x80\x94 PeterNeumann "                                                                   \
    "x08go/ZJkuBS9UG/"                                                                             \
    "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
#define PETER_NOTE PETER_TEXT "\n" PETER_SIG

static void peter_seed(uint8_t seed[32])
{
    uint8_t raw[33];
    size_t n = 0;
    assert_int_equal(wr_b64_decode(PETER_SKEY_B64, strlen(PETER_SKEY_B64), raw, sizeof raw, &n),
                     WR_OK);
    assert_int_equal(n, 33);
    assert_int_equal(raw[0], 1);
    memcpy(seed, raw + 1, 32);
}

static void test_go_vectors(void **state)
{
    (void)state;
    uint8_t seed[32], pub[32], id[4];
    peter_seed(seed);
    assert_int_equal(wr_crypto_ed25519_public(seed, pub), WR_OK);
    assert_int_equal(wr_note_key_id("PeterNeumann", pub, id), WR_OK);
    static const uint8_t want_id[4] = {0xc7, 0x4f, 0x20, 0xa3};
    assert_memory_equal(id, want_id, 4);

    char vkey[WR_NOTE_VERIFIER_MAX];
    size_t len = 0;
    assert_int_equal(wr_note_verifier_format("PeterNeumann", pub, vkey, sizeof vkey, &len), WR_OK);
    assert_string_equal(vkey, PETER_VKEY);
    assert_int_equal(len, strlen(PETER_VKEY));

    wr_note_verifier_t v;
    assert_int_equal(wr_note_verifier_parse(PETER_VKEY "\n", strlen(PETER_VKEY) + 1, &v), WR_OK);
    assert_string_equal(v.name, "PeterNeumann");
    assert_memory_equal(v.pub, pub, 32);
    assert_memory_equal(v.id, want_id, 4);

    /* signing gives Go's note byte for byte (Ed25519 is deterministic) */
    char note[WR_NOTE_MAX];
    assert_int_equal(
        wr_note_sign("PeterNeumann", seed, PETER_TEXT, strlen(PETER_TEXT), note, sizeof note, &len),
        WR_OK);
    assert_string_equal(note, PETER_NOTE);
    assert_int_equal(len, strlen(PETER_NOTE));

    size_t text_len = 0;
    assert_int_equal(wr_note_open(&v, PETER_NOTE, strlen(PETER_NOTE), &text_len), WR_OK);
    assert_int_equal(text_len, strlen(PETER_TEXT));
}

/* The verifier key of the C2SP signed-note spec's example parses (its key
 * id is the one its text names). */
static void test_spec_key(void **state)
{
    (void)state;
    static const char k[] = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";
    wr_note_verifier_t v;
    assert_int_equal(wr_note_verifier_parse(k, sizeof k - 1, &v), WR_OK);
    assert_string_equal(v.name, "example.com/foo");
    char back[WR_NOTE_VERIFIER_MAX];
    assert_int_equal(wr_note_verifier_format(v.name, v.pub, back, sizeof back, NULL), WR_OK);
    assert_string_equal(back, k);
}

static void test_bad_verifier_keys(void **state)
{
    (void)state;
    wr_note_verifier_t v;
    static const char *const bad[] = {
        "",
        "PeterNeumann",
        "PeterNeumann+c74f20a3",
        "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", /* wrong id */
        "PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", /* upper hex */
        "PeterNeumanm+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", /* other name */
        "PeterNeumann+c74f20a3+Apc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  /* short */
        "PeterNeumann+c74f20a3+AhpczQcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", /* type 2 */
        "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(wr_note_verifier_parse(bad[i], strlen(bad[i]), &v), WR_EINVAL);
}

static void test_note_forgeries(void **state)
{
    (void)state;
    wr_note_verifier_t v;
    assert_int_equal(wr_note_verifier_parse(PETER_VKEY, strlen(PETER_VKEY), &v), WR_OK);
    char buf[WR_NOTE_MAX];
    size_t tl;
    /* a changed text */
    snprintf(buf, sizeof buf, "%s", PETER_NOTE);
    buf[3] = 'X';
    assert_int_equal(wr_note_open(&v, buf, strlen(buf), &tl), WR_EAUTH);
    /* no empty line, no signature, a bad signature line */
    assert_int_equal(wr_note_open(&v, PETER_TEXT PETER_SIG, strlen(PETER_TEXT PETER_SIG), &tl),
                     WR_EINVAL);
    assert_int_equal(wr_note_open(&v, PETER_TEXT "\n", strlen(PETER_TEXT) + 1, &tl), WR_EINVAL);
    static const char dash[] =
        PETER_TEXT "\n- PeterNeumann "
                   "x08go/ZJkuBS9UG/"
                   "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
    assert_int_equal(wr_note_open(&v, dash, sizeof dash - 1, &tl), WR_EINVAL);
    /* only another key's signature */
    static const char other[] = PETER_TEXT "\n\xe2\x80\x94 EnochRoot "
                                           "rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/"
                                           "5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";
    assert_int_equal(wr_note_open(&v, other, sizeof other - 1, &tl), WR_EAUTH);
    /* another key's beside ours: ours verifies */
    static const char both[] =
        PETER_TEXT "\n\xe2\x80\x94 EnochRoot "
                   "rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/"
                   "5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n" PETER_SIG;
    assert_int_equal(wr_note_open(&v, both, sizeof both - 1, &tl), WR_OK);
    assert_int_equal(tl, strlen(PETER_TEXT));
    /* a missing final newline */
    assert_int_equal(wr_note_open(&v, PETER_NOTE, strlen(PETER_NOTE) - 1, &tl), WR_EINVAL);
}

static void test_checkpoint(void **state)
{
    (void)state;
    uint8_t seed[32], pub[32], root[32];
    for (int i = 0; i < 32; i++)
        root[i] = (uint8_t)i;
    peter_seed(seed);
    assert_int_equal(wr_crypto_ed25519_public(seed, pub), WR_OK);
    char text[WR_CHECKPOINT_MAX];
    size_t len = 0;
    assert_int_equal(wr_checkpoint_text("waitroom/sale", 42, root, text, sizeof text, &len), WR_OK);
    assert_string_equal(text, "waitroom/sale\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n");

    char note[WR_CHECKPOINT_MAX], vkey[WR_NOTE_VERIFIER_MAX];
    assert_int_equal(
        wr_checkpoint_sign("waitroom", seed, "waitroom/sale", 42, root, note, sizeof note, &len),
        WR_OK);
    assert_int_equal(strncmp(note, text, strlen(text)), 0);
    assert_int_equal(strncmp(note + strlen(text), "\n\xe2\x80\x94 waitroom ", 14), 0);
    assert_int_equal(note[len - 1], '\n');
    assert_int_equal(len, strlen(text) + 1 + 3 + 1 + 8 + 1 + 92 + 1);

    wr_note_verifier_t v;
    assert_int_equal(wr_note_verifier_format("waitroom", pub, vkey, sizeof vkey, NULL), WR_OK);
    assert_int_equal(wr_note_verifier_parse(vkey, strlen(vkey), &v), WR_OK);
    wr_checkpoint_t cp;
    assert_int_equal(wr_checkpoint_open(&v, note, len, &cp), WR_OK);
    assert_string_equal(cp.origin, "waitroom/sale");
    assert_int_equal(cp.size, 42);
    assert_memory_equal(cp.root, root, 32);

    /* the empty log: size 0, root SHA-256("") */
    static const uint8_t empty[32] = {0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14,
                                      0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
                                      0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c,
                                      0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55};
    assert_int_equal(wr_checkpoint_text("w/q", 0, empty, text, sizeof text, &len), WR_OK);
    assert_string_equal(text, "w/q\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n");

    /* malformed texts */
    static const char *const bad[] = {
        "w/q\n00\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n",
        "w/q\n-1\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n",
        "w/q\n18446744073709551616\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n",
        "w/q\n1\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU\n",
        "w/q\n1\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\nextension\n",
        "\n1\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n",
        "w/q\n1\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        "w/q\n\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(wr_checkpoint_parse(bad[i], strlen(bad[i]), &cp), WR_EINVAL);
    assert_int_equal(
        wr_checkpoint_parse(
            "w/q\n18446744073709551615\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n",
            strlen("w/q\n18446744073709551615\n47DEQpj8HBSa+/"
                   "TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"),
            &cp),
        WR_OK);
    assert_true(cp.size == UINT64_MAX);

    /* a checkpoint signed by another key of the same name is refused */
    uint8_t s2[32], p2[32];
    assert_int_equal(wr_crypto_ed25519_keygen(s2, p2), WR_OK);
    assert_int_equal(
        wr_checkpoint_sign("waitroom", s2, "waitroom/sale", 42, root, note, sizeof note, &len),
        WR_OK);
    assert_int_equal(wr_checkpoint_open(&v, note, len, &cp), WR_EAUTH);
}

#define TESTS(X)                                                                                   \
    X(test_go_vectors)                                                                             \
    X(test_spec_key)                                                                               \
    X(test_bad_verifier_keys)                                                                      \
    X(test_note_forgeries)                                                                         \
    X(test_checkpoint)
WR_UNIT_MAIN(NULL, NULL, TESTS)
