/*
 * test_mem_snapshot_groups.c - the priority groups in the embedded
 * store's snapshot (version 12, mem_snapshot_groups.c): a queue with two
 * groups - people in each line, a held group member, an admitted one,
 * presale codes spent, revoked and expiring, the standard line's carried
 * share - written and loaded back exactly (every line, slot, pass, code
 * and counter compared), with slots that differ between the writer and
 * the loader (groups are kept by name); then the loaded queue at work:
 * positions per line, the codes' counts and verdicts, admissions that
 * take from the group first and give the standard line its carried share
 * on time. And every corruption of such a file, checksum fixed, is
 * refused or loaded whole, never half (the sanitizer build runs it).
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/crypto.h"
#include "core/groups.h"
#include "core/queue.h"
#include "memq_steps.h"
#include "store/memory/mem_snapshot.h"
#include "store/memory/memq.h"
#include "unit_cfg.h"
#include "unit_main.h"

#define T0 INT64_C(1800000000000000) /* store time, us */
#define MS INT64_C(1000)

static char dir[64];

static char *snap_path(void)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/waitroom.snapshot", dir);
    return p;
}

static void db_init(wr_memq_db_t *db)
{
    memset(db, 0, sizeof *db);
    wr_rng_seed(&db->rng, 7);
}

/* The config: rate 10/s at 100 ms ticks (one admission a tick), passes of
 * 1 s, nobody away by idleness, held people kept 10 minutes, groups as
 * named (n of them), standard share 0.2. */
static wr_queue_config_t config(const char *const *groups, size_t n)
{
    wr_queue_config_t c = cfg_rate(10);
    c.tick_ms = 100;
    c.token_ttl_seconds = 1;
    c.idle_timeout_seconds = 0;
    c.away_hold_seconds = 600;
    c.standard_share = 0.2;
    for (size_t i = 0; i < n; i++)
        snprintf(c.groups[i], sizeof c.groups[i], "%s", groups[i]);
    c.n_groups = n;
    return c;
}

/* The hash memq keeps of code text. */
static const char *hash_of(const char *code)
{
    static char h[4][WR_CODE_HASH_HEX + 1];
    static int k;
    k = (k + 1) % 4;
    assert_int_equal(wr_groups_code_hash(code, strlen(code), h[k]), WR_OK);
    return h[k];
}

/* A join of u at now: into group (NULL: none) or with code (NULL: none). */
static wr_err_t join(wr_memq_t *q, const char *u, const char *group, const char *code, bool page,
                     int64_t now, wr_entry_t *e)
{
    wr_memq_join_t j = {.slot = wr_memq_group_slot(q, group),
                        .code_hash = code ? hash_of(code) : NULL};
    bool dirty = false;
    memset(e, 0, sizeof *e);
    return wr_memq_entry_group(q, u, strlen(u), true, page, &j, now, now, e, &dirty);
}

static wr_entry_t status(wr_memq_t *q, const char *u, int64_t now)
{
    return memq_entry(q, u, false, false, now);
}

static void create_code(wr_memq_t *q, const char *group, const char *code, uint32_t uses,
                        int64_t expires_ms)
{
    char h[1][WR_CODE_HASH_HEX + 1];
    snprintf(h[0], sizeof h[0], "%s", hash_of(code));
    bool dirty = false;
    assert_int_equal(wr_memq_codes_create(q, group, h, 1, uses, expires_ms, &dirty), WR_OK);
}

#define SAVED_AT (T0 + 2300 * MS) /* the snapshot's time in the_queue */

/*
 * The queue "g" of db, at SAVED_AT:
 *   standard line: s1, s2, s3 (s3 a pending page join)
 *   fans' line: f3 (came with code B), f4; press's line: p1, p2 (code E)
 *   held: f1 (fans: their pass expired unseen); passes: f2 (fans, seen)
 *   fans admitted 2, the standard line's carry 0.4 (two ticks of 0.2)
 *   codes: fans A (2 uses, 1 spent), B (1, spent), C (1, expires at
 *   T0 + 5 s), D (3, revoked); press E (1, spent)
 * Its groups were first configured press, fans, then reordered: fans has
 * slot 1, press slot 0 (a fresh load makes fans 0, press 1).
 */
static wr_memq_t *the_queue(wr_memq_db_t *db)
{
    static const char *const rev[] = {"press", "fans"}, *const fwd[] = {"fans", "press"};
    db_init(db);
    wr_queue_config_t c = config(rev, 2);
    wr_memq_t *q;
    assert_int_equal(wr_memq_db_put_config(db, "g", &c, &q), WR_OK);
    c = config(fwd, 2);
    assert_int_equal(wr_memq_db_put_config(db, "g", &c, &q), WR_OK);
    assert_int_equal(wr_memq_group_slot(q, "fans"), 1);
    assert_int_equal(wr_memq_group_slot(q, "press"), 0);
    create_code(q, "fans", "code-a", 2, -1);
    create_code(q, "fans", "code-b", 1, -1);
    create_code(q, "fans", "code-c", 1, T0 / MS + 5000);
    create_code(q, "fans", "code-d", 3, -1);
    create_code(q, "press", "code-e", 1, -1);
    bool dirty = false;
    assert_int_equal(wr_memq_code_revoke(q, hash_of("code-d"), &dirty), WR_OK);
    wr_entry_t e;
    int64_t t = T0;
    assert_int_equal(join(q, "f1", "fans", NULL, false, t += MS, &e), WR_OK);
    assert_int_equal(join(q, "s1", NULL, NULL, false, t += MS, &e), WR_OK);
    assert_int_equal(join(q, "f2", NULL, "code-a", false, t += MS, &e), WR_OK);
    assert_string_equal(e.group, "fans");
    assert_int_equal(join(q, "p1", "press", NULL, false, t += MS, &e), WR_OK);
    assert_int_equal(join(q, "s2", NULL, NULL, false, t += MS, &e), WR_OK);
    assert_int_equal(join(q, "f3", NULL, "code-b", false, t += MS, &e), WR_OK);
    assert_int_equal(join(q, "p2", NULL, "code-e", false, t += MS, &e), WR_OK);
    assert_string_equal(e.group, "press");
    assert_int_equal(join(q, "f4", "fans", NULL, false, t += MS, &e), WR_OK);
    assert_int_equal(join(q, "s3", NULL, NULL, true, t += MS, &e), WR_OK); /* page: pending */
    /* tick 1 (share 0.2 of 1: the standard line is owed 0, carries 0.2): f1 */
    assert_int_equal(memq_admit(q, T0 + 1000 * MS), 1);
    assert_non_null(wr_memq_token(q, "f1", 2));
    /* f1's pass expires unseen: held, in fans */
    dirty = false;
    wr_memq_sweep(q, T0 + 2100 * MS, &dirty);
    bool back;
    const wr_zsl_node_t *h = wr_memq_held(q, "f1", 2, &back);
    assert_non_null(h);
    assert_false(back);
    assert_int_equal(wr_memq_node_slot(h), 1);
    /* tick 2 (carry 0.4): f2, who then sees their pass */
    assert_int_equal(memq_admit(q, T0 + 2200 * MS), 1);
    assert_int_equal(status(q, "f2", T0 + 2250 * MS).state, WR_ENTRY_ADMITTED);
    assert_int_equal(wr_memq_token(q, "f2", 2)->slot, 1);
    assert_int_equal(q->share_carry_micro, 400000);
    assert_int_equal(q->grp[1]->admitted_total, 2);
    return q;
}

/* ---- the whole state as text ------------------------------------------ */

typedef struct {
    char *s;
    size_t n, cap;
} text_t;

static void add(text_t *t, const char *fmt, ...)
{
    va_list ap;
    char line[512];
    va_start(ap, fmt);
    int k = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    assert_true(k > 0 && (size_t)k < sizeof line);
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->cap + (size_t)k + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    memcpy(t->s + t->n, line, (size_t)k + 1);
    t->n += (size_t)k;
}

/* A slot as its group's name ("-": the standard line). */
static const char *gname(const wr_memq_t *q, int slot)
{
    return slot < 0 ? "-" : q->grp[slot]->name;
}

static void add_nodes(text_t *t, const wr_memq_t *q, const char *what, const wr_zsl_t *set,
                      int64_t now)
{
    for (const wr_zsl_node_t *x = wr_zsl_first(set); x; x = wr_zsl_next(x)) {
        size_t len;
        add(t, "%s %s score=%lld age=%u flags=%u group=%s\n", what, wr_zsl_node_id(x, &len),
            (long long)wr_zsl_node_score(x), wr_memq_seen_age_cs(x, now),
            wr_zsl_node_flags(x) & WR_MEMQ_MARKS, gname(q, wr_memq_node_slot(x)));
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
    const wr_memq_t *q;
    char **rows;
    size_t n;
} code_rows_t;

static void code_row(void *item, void *arg)
{
    const wr_memq_code_t *c = item;
    code_rows_t *cr = arg;
    char *row = malloc(160);
    assert_non_null(row);
    snprintf(row, 160, "code %s group=%s uses=%u spent=%u expires=%lld revoked=%d\n", c->id,
             gname(cr->q, c->slot), c->uses, c->spent, (long long)c->expires_ms, c->revoked);
    cr->rows[cr->n++] = row;
}

/* Everything of q a snapshot keeps about groups and people, at now, as
 * text with no slot number in it (slots may differ across a load). */
static char *dump(const wr_memq_t *q, int64_t now)
{
    text_t t = {0};
    add(&t, "last_score=%lld admitted=%llu carry=%lld groups=%zu\n", (long long)q->last_score,
        (unsigned long long)q->admitted_total, (long long)q->share_carry_micro, q->n_grp);
    add_nodes(&t, q, "line", q->line, now);
    for (size_t i = 0; i < q->n_grp; i++) {
        const wr_memq_group_t *g = q->grp[q->grp_order[i]];
        add(&t, "group %s admitted=%llu\n", g->name, (unsigned long long)g->admitted_total);
        add_nodes(&t, q, g->name, g->line, now);
    }
    add_nodes(&t, q, "held", q->held, now);
    add_nodes(&t, q, "back", q->back, now);
    char **rows = calloc(q->heap_n + 1, sizeof *rows);
    assert_non_null(rows);
    for (size_t i = 0; i < q->heap_n; i++) {
        const wr_memq_token_t *k = q->heap[i];
        rows[i] = malloc(200);
        assert_non_null(rows[i]);
        snprintf(rows[i], 200, "pass %s jti=%s iat=%lld exp=%lld seen=%d group=%s\n", k->id, k->jti,
                 (long long)k->iat_us, (long long)k->exp_us, k->seen, gname(q, k->slot));
    }
    qsort(rows, q->heap_n, sizeof *rows, cmp_str); /* the heap's order is its own */
    for (size_t i = 0; i < q->heap_n; i++) {
        add(&t, "%s", rows[i]);
        free(rows[i]);
    }
    free(rows);
    size_t nc = q->codes ? wr_idhash_count(q->codes) : 0;
    code_rows_t cr = {.q = q, .rows = calloc(nc + 1, sizeof(char *))};
    assert_non_null(cr.rows);
    if (q->codes)
        wr_idhash_foreach(q->codes, code_row, &cr);
    qsort(cr.rows, cr.n, sizeof *cr.rows, cmp_str);
    for (size_t i = 0; i < cr.n; i++) {
        add(&t, "%s", cr.rows[i]);
        free(cr.rows[i]);
    }
    free(cr.rows);
    wr_store_codes_t cc;
    wr_memq_codes_counts(q, &cc);
    for (size_t i = 0; i < cc.n; i++)
        add(&t, "counts %s issued=%llu spent=%llu revoked=%llu\n", cc.groups[i].name,
            (unsigned long long)cc.groups[i].issued, (unsigned long long)cc.groups[i].uses_spent,
            (unsigned long long)cc.groups[i].revoked);
    return t.s;
}

static int dir_setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/wr_snapgrp_XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int dir_teardown(void **state)
{
    (void)state;
    unlink(snap_path());
    rmdir(dir);
    return 0;
}

/* ---- tests -------------------------------------------------------------- */

/* Written and loaded back exactly; then the loaded queue at work. */
static void test_round_trip(void **state)
{
    (void)state;
    wr_memq_db_t a, b;
    wr_memq_t *q = the_queue(&a);
    char *before = dump(q, SAVED_AT);
    assert_int_equal(wr_mem_snapshot_write(&a, dir, SAVED_AT), WR_OK);
    db_init(&b);
    assert_int_equal(wr_mem_snapshot_load(&b, dir, SAVED_AT), WR_OK);
    wr_memq_t *r = wr_memq_db_find(&b, "g");
    assert_non_null(r);
    /* the slots are the loader's: fans 0, press 1 */
    assert_int_equal(wr_memq_group_slot(r, "fans"), 0);
    assert_int_equal(wr_memq_group_slot(r, "press"), 1);
    char *after = dump(r, SAVED_AT);
    assert_string_equal(after, before);
    /* what the comparison covers is there: the held fan, the fan's pass */
    const char *h = strstr(after, "held f1 ");
    assert_non_null(h);
    assert_true(strncmp(strchr(h, '\n') - 10, "group=fans", 10) == 0);
    const char *p = strstr(after, "pass f2 ");
    assert_non_null(p);
    assert_true(strncmp(strchr(p, '\n') - 10, "group=fans", 10) == 0);
    free(before);
    free(after);
    wr_memq_db_clear(&a);

    /* positions per line */
    int64_t now = SAVED_AT + 10 * MS;
    wr_entry_t e = status(r, "f3", now);
    assert_int_equal(e.state, WR_ENTRY_WAITING);
    assert_int_equal(e.position, 1);
    assert_string_equal(e.group, "fans");
    assert_int_equal(status(r, "f4", now).position, 2);
    e = status(r, "p2", now);
    assert_int_equal(e.position, 2);
    assert_string_equal(e.group, "press");
    assert_int_equal(status(r, "s3", now).position, 3);
    assert_int_equal(status(r, "s1", now).position, 1);
    e = status(r, "f2", now);
    assert_int_equal(e.state, WR_ENTRY_ADMITTED);
    assert_string_equal(e.group, "fans");
    /* the codes: counts, then each verdict as before the restart */
    wr_store_codes_t cc;
    wr_memq_codes_counts(r, &cc);
    assert_int_equal(cc.n, 2);
    assert_string_equal(cc.groups[0].name, "fans");
    assert_int_equal(cc.groups[0].issued, 4);
    assert_int_equal(cc.groups[0].uses_spent, 2);
    assert_int_equal(cc.groups[0].revoked, 1);
    assert_string_equal(cc.groups[1].name, "press");
    assert_int_equal(cc.groups[1].issued, 1);
    assert_int_equal(cc.groups[1].uses_spent, 1);
    assert_int_equal(cc.groups[1].revoked, 0);
    assert_int_equal(join(r, "n1", NULL, "code-a", false, now, &e), WR_OK); /* its last use */
    assert_string_equal(e.group, "fans");
    assert_int_equal(e.position, 3);
    assert_int_equal(join(r, "n2", NULL, "code-a", false, now, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_USED_UP);
    assert_int_equal(join(r, "n2", NULL, "code-b", false, now, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_USED_UP);
    assert_int_equal(join(r, "n2", NULL, "code-d", false, now, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_REVOKED);
    assert_int_equal(join(r, "n2", NULL, "code-e", false, now, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_USED_UP);
    /* admissions take from the group first: carry 0.4 -> 0.6 (f3), 0.8
     * (f4), then 1.0: the standard line's s1 - on the third tick only
     * because the carry came back (from 0 it would be the fifth) */
    assert_int_equal(memq_admit(r, now + 100 * MS), 1);
    assert_non_null(wr_memq_token(r, "f3", 2));
    assert_int_equal(wr_memq_token(r, "f3", 2)->slot, 0);
    assert_int_equal(memq_admit(r, now + 200 * MS), 1);
    assert_non_null(wr_memq_token(r, "f4", 2));
    assert_int_equal(memq_admit(r, now + 300 * MS), 1);
    assert_non_null(wr_memq_token(r, "s1", 2));
    assert_int_equal(r->grp[0]->admitted_total, 4);
    wr_queue_stats_t st;
    wr_memq_stats(r, &st);
    assert_int_equal(st.lines[1].admitted_total, 4); /* fans */
    assert_int_equal(st.lines[0].admitted_total, 1); /* standard */
    /* the held fan returns into fans' held returns: admitted first */
    e = status(r, "f1", now + 350 * MS);
    assert_true(e.held);
    assert_string_equal(e.group, "fans");
    assert_int_equal(memq_admit(r, now + 400 * MS), 1);
    assert_int_equal(wr_memq_token(r, "f1", 2)->slot, 0);
    assert_int_equal(r->grp[0]->admitted_total, 5);
    /* the expiring code (unused: it would have given a place so far) at
     * its time */
    assert_int_equal(join(r, "n2", NULL, "code-c", false, T0 + 5000 * MS, &e), WR_ECODE);
    assert_int_equal(e.code_reason, WR_CODE_EXPIRED);
    wr_memq_db_clear(&b);
}

/* A queue without groups writes an empty part; its slots' absence loads. */
static void test_no_groups(void **state)
{
    (void)state;
    wr_memq_db_t a, b;
    db_init(&a);
    wr_queue_config_t c = config(NULL, 0);
    wr_memq_t *q;
    assert_int_equal(wr_memq_db_put_config(&a, "plain", &c, &q), WR_OK);
    wr_entry_t e;
    assert_int_equal(join(q, "u", NULL, NULL, false, T0, &e), WR_OK);
    assert_int_equal(wr_mem_snapshot_write(&a, dir, T0), WR_OK);
    db_init(&b);
    assert_int_equal(wr_mem_snapshot_load(&b, dir, T0), WR_OK);
    q = wr_memq_db_find(&b, "plain");
    assert_int_equal(q->n_grp, 0);
    assert_null(q->codes);
    assert_int_equal(status(q, "u", T0).position, 1);
    wr_memq_db_clear(&a);
    wr_memq_db_clear(&b);
}

static unsigned char *read_all(size_t *n)
{
    FILE *f = fopen(snap_path(), "rb");
    assert_non_null(f);
    static unsigned char buf[1 << 16];
    *n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(*n > 64 && *n < sizeof buf);
    return buf;
}

/* Writes body (n bytes) with its checksum as the snapshot. */
static void write_summed(const unsigned char *body, size_t n)
{
    uint8_t sum[WR_CRYPTO_SHA256_LEN];
    wr_crypto_sha256_t *h = wr_crypto_sha256_new();
    assert_non_null(h);
    assert_int_equal(wr_crypto_sha256_update(h, body, n), WR_OK);
    assert_int_equal(wr_crypto_sha256_final(h, sum), WR_OK);
    wr_crypto_sha256_free(h);
    FILE *f = fopen(snap_path(), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(body, 1, n, f), n);
    assert_int_equal(fwrite(sum, 1, sizeof sum, f), sizeof sum);
    fclose(f);
}

/* Loads the file: WR_OK (1), WR_EIO with nothing loaded (0), or
 * anything else (-1: a fault). */
static int load_result(void)
{
    wr_memq_db_t b;
    db_init(&b);
    wr_err_t err = wr_mem_snapshot_load(&b, dir, SAVED_AT);
    int res = err == WR_OK ? 1 : err == WR_EIO && b.nq == 0 && b.secret_len == 0 ? 0 : -1;
    wr_memq_db_clear(&b);
    return res;
}

/* Loads the file: WR_OK with the queue whole, or WR_EIO with nothing. */
static wr_err_t load_whole_or_nothing(void)
{
    int res = load_result();
    assert_true(res >= 0);
    return res ? WR_OK : WR_EIO;
}

/* The offset of the groups' part in body: right after the bypass count,
 * found as the u8 count 2 followed by "\x04fans". */
static size_t groups_part(const unsigned char *body, size_t n)
{
    static const unsigned char head[] = {2, 4, 'f', 'a', 'n', 's'};
    for (size_t i = 0; i + sizeof head <= n; i++)
        if (memcmp(body + i, head, sizeof head) == 0)
            return i;
    fail_msg("no groups part");
    return 0;
}

/* Every byte of the file changed (two ways) and every cut, with a good
 * checksum: refused whole or loaded whole, never a crash; the changes
 * the part's checks must catch are refused. */
static void test_corrupt_refused(void **state)
{
    (void)state;
    wr_memq_db_t a;
    the_queue(&a);
    assert_int_equal(wr_mem_snapshot_write(&a, dir, SAVED_AT), WR_OK);
    wr_memq_db_clear(&a);
    size_t n;
    unsigned char *orig = read_all(&n);
    size_t body = n - WR_CRYPTO_SHA256_LEN;
    static unsigned char m[1 << 16];
    size_t refused = 0, tried = 0, faults = 0, cut_loaded = 0;
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY); /* thousands of log lines */
    assert_true(saved >= 0 && null >= 0);
    dup2(null, 2);
    for (size_t i = 0; i < body; i++)
        for (int k = 0; k < 2; k++) {
            memcpy(m, orig, body);
            m[i] ^= k ? 0x80 : 0x01;
            write_summed(m, body);
            int res = load_result();
            faults += res < 0;
            refused += res == 0;
            tried++;
        }
    for (size_t len = 0; len < body; len += 3) {
        write_summed(orig, len);
        cut_loaded += load_result() != 0;
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(null);
    printf("corruptions refused: %zu of %zu\n", refused, tried);
    assert_int_equal(faults, 0);
    assert_int_equal(cut_loaded, 0);
    assert_true(refused > 0);
    /* the part's own checks, one at a time */
    size_t g = groups_part(orig, body);
    static const struct {
        size_t at;
        unsigned char to;
    } bad[] = {
        {0, 1},   /* a group count other than the config's (2) */
        {0, 3},   /* the same, above */
        {2, 'F'}, /* "Fans": no such group */
        {1, 0},   /* an empty name */
        {1, 33},  /* a name too long */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        memcpy(m, orig, body);
        m[g + bad[k].at] = bad[k].to;
        write_summed(m, body);
        assert_int_equal(load_whole_or_nothing(), WR_EIO);
    }
    /* the carried share (0.4) out of range */
    memcpy(m, orig, body);
    static const unsigned char carry[8] = {0x80, 0x1a, 0x06, 0, 0, 0, 0, 0}; /* 400000 */
    unsigned char *cp = memmem(m + g, body - g, carry, sizeof carry);
    assert_non_null(cp);
    cp[0] = 0x40, cp[1] = 0x42, cp[2] = 0x0f; /* 1000000 */
    write_summed(m, body);
    assert_int_equal(load_whole_or_nothing(), WR_EIO);
    /* fans' members (f1 held, f2's pass): one who is neither held nor
     * admitted (s1 waits in the standard line), one named twice */
    static const char *const members[][2] = {{"\x02"
                                              "f1",
                                              "\x02"
                                              "s1"},
                                             {"\x02"
                                              "f2",
                                              "\x02"
                                              "f1"}};
    for (size_t k = 0; k < 2; k++) {
        memcpy(m, orig, body);
        unsigned char *at = memmem(m + g, body - g, members[k][0], 3);
        assert_non_null(at);
        memcpy(at, members[k][1], 3);
        write_summed(m, body);
        assert_int_equal(load_whole_or_nothing(), WR_EIO);
    }
    /* the intact file loads */
    write_summed(orig, body);
    assert_int_equal(load_whole_or_nothing(), WR_OK);
}

/* Many codes are written compactly: 38 bytes each without expiry or use,
 * and they all come back. */
static void test_many_codes(void **state)
{
    (void)state;
    static const char *const one[] = {"fans"};
    wr_memq_db_t a, b;
    db_init(&a);
    wr_queue_config_t c = config(one, 1);
    wr_memq_t *q;
    assert_int_equal(wr_memq_db_put_config(&a, "m", &c, &q), WR_OK);
    assert_int_equal(wr_mem_snapshot_write(&a, dir, T0), WR_OK);
    size_t n0;
    read_all(&n0);
    enum { N = 20000 };
    char(*h)[WR_CODE_HASH_HEX + 1] = malloc(N * sizeof *h);
    assert_non_null(h);
    for (size_t i = 0; i < N; i++) {
        char code[32];
        snprintf(code, sizeof code, "code-%zu", i);
        snprintf(h[i], sizeof h[i], "%s", hash_of(code));
    }
    bool dirty = false;
    assert_int_equal(
        wr_memq_codes_create(q, "fans", (const char(*)[WR_CODE_HASH_HEX + 1]) h, N, 1, -1, &dirty),
        WR_OK);
    free(h);
    assert_int_equal(wr_mem_snapshot_write(&a, dir, T0), WR_OK);
    struct stat sb;
    assert_int_equal(stat(snap_path(), &sb), 0);
    assert_int_equal((size_t)sb.st_size - n0, (size_t)N * 38);
    db_init(&b);
    assert_int_equal(wr_mem_snapshot_load(&b, dir, T0), WR_OK);
    wr_store_codes_t cc;
    wr_memq_codes_counts(wr_memq_db_find(&b, "m"), &cc);
    assert_int_equal(cc.groups[0].issued, N);
    wr_memq_t *r = wr_memq_db_find(&b, "m");
    wr_entry_t e;
    assert_int_equal(join(r, "x", NULL, "code-19999", false, T0, &e), WR_OK);
    assert_string_equal(e.group, "fans");
    wr_memq_db_clear(&a);
    wr_memq_db_clear(&b);
}

/* memq keeps a code's hash as lowercase hex only (the snapshot writes its
 * bytes): another spelling is refused by create and by a load's add. */
static void test_hash_spelling(void **state)
{
    (void)state;
    static const char *const one[] = {"fans"};
    wr_memq_db_t a;
    db_init(&a);
    wr_queue_config_t c = config(one, 1);
    wr_memq_t *q;
    assert_int_equal(wr_memq_db_put_config(&a, "h", &c, &q), WR_OK);
    char h[1][WR_CODE_HASH_HEX + 1];
    snprintf(h[0], sizeof h[0], "%s", hash_of("code-x"));
    for (char *p = h[0]; *p; p++)
        if (*p >= 'a' && *p <= 'f')
            *p = (char)(*p - 'a' + 'A');
    bool dirty = false;
    assert_int_equal(
        wr_memq_codes_create(q, "fans", (const char(*)[WR_CODE_HASH_HEX + 1]) h, 1, 1, -1, &dirty),
        WR_EINVAL);
    assert_int_equal(wr_memq_code_add(q, h[0], 0, 1, 0, -1, false), WR_EINVAL);
    assert_int_equal(wr_memq_code_add(q, hash_of("code-x"), 0, 1, 0, -1, false), WR_OK);
    wr_memq_db_clear(&a);
}

#define TESTS(X)                                                                                   \
    X(test_round_trip, dir_setup, dir_teardown)                                                    \
    X(test_no_groups, dir_setup, dir_teardown)                                                     \
    X(test_corrupt_refused, dir_setup, dir_teardown)                                               \
    X(test_many_codes, dir_setup, dir_teardown)                                                    \
    X(test_hash_spelling)
WR_UNIT_MAIN(NULL, NULL, TESTS)
