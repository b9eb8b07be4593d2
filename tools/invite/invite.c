/*
 * waitroom-invite - signs invites for an invite-only queue (docs/API.md,
 * "Invite-only queues"): one JWT per user id, one per output line, in the
 * order the ids came. For the shop's own systems (a batch before the sale,
 * a login hook) and for tests.
 *
 *   WAITROOM_INVITE_KEY=... waitroom-invite --queue NAME [--ttl SECONDS] [--group G] [USER...]
 *   waitroom-invite --key-file FILE --queue NAME [--ttl SECONDS] [--group G] < users.txt
 *
 * --group G puts the claim "grp":G in every invite: the invited join the
 * queue's priority group G (docs/API.md 1.3, "Priority groups and presale
 * codes"); G must be [a-z0-9-]{1,32} and not "standard".
 *
 * The key (the queue's inviteKey, at least 32 bytes) comes from the
 * environment variable WAITROOM_INVITE_KEY or from a file (--key-file;
 * one trailing newline is dropped), never from a flag's value: a command
 * line is visible to every local user (ps, /proc/PID/cmdline) and lands in
 * shell histories, and whoever holds the key can invite anyone.
 * With no USER arguments the ids are read from standard input, one per
 * line, and output line k is always the invite of input line k (a batch is
 * mailed by pairing the two files line by line). So a blank line, like an
 * id that is not a valid user id ([A-Za-z0-9._~:@+-]{1,128}), stops the
 * run with exit status 1 before anything is printed for it, naming the
 * line: skipping it would give every later person the next one's invite.
 * Usage errors exit 2.
 *
 * The JWT work is the server's own (invite.c over token.c): what this
 * signs is exactly what waitroomd verifies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/ids.h"
#include "core/groups.h"
#include "core/invite.h"
#include "core/qconfig.h"
#include "core/token.h"

#define DEFAULT_TTL  86400
#define LINE_MAX_LEN 4096

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: WAITROOM_INVITE_KEY=KEY waitroom-invite --queue NAME [--ttl SECONDS] [--group G]\n"
        "                                              [USER...]\n"
        "       waitroom-invite --key-file FILE --queue NAME [--ttl SECONDS] [--group G] "
        "[USER...]\n"
        "Prints one invite (JWT) per user id, one per line; with no USER, reads the\n"
        "ids from standard input, one per line. --ttl: seconds until the invites\n"
        "expire (default %d). --group: the priority group the invites join (claim\n"
        "grp). The key is never taken from the command line.\n",
        DEFAULT_TTL);
}

/* Reads the key file into key (cap bytes); drops one trailing "\n" or "\r\n". */
static int read_key_file(const char *path, char *key, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "waitroom-invite: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t n = fread(key, 1, cap, f);
    int bad = ferror(f) || n == cap;
    fclose(f);
    if (bad) {
        fprintf(stderr, "waitroom-invite: %s: unreadable or longer than %d bytes\n", path,
                WR_INVITE_KEY_MAX);
        return -1;
    }
    if (n > 0 && key[n - 1] == '\n')
        n--;
    if (n > 0 && key[n - 1] == '\r')
        n--;
    *len = n;
    return 0;
}

typedef struct {
    const uint8_t *key;
    size_t key_len;
    const char *queue;
    const char *group; /* NULL: the standard line */
    int64_t now, exp;
} signer_t;

static int sign_one(const signer_t *s, const char *user)
{
    char tok[WR_TOKEN_MAX + 1];
    if (!wr_ids_valid_user(user)) {
        fprintf(stderr, "waitroom-invite: not a valid user id: \"%.140s\"\n", user);
        return 1;
    }
    wr_err_t err = wr_invite_sign(s->key, s->key_len, s->queue, user, s->group, s->now, s->exp, tok,
                                  sizeof(tok));
    if (err != WR_OK) {
        fprintf(stderr, "waitroom-invite: cannot sign for %s: %s\n", user, wr_strerror(err));
        return 1;
    }
    printf("%s\n", tok);
    return 0;
}

int main(int argc, char **argv)
{
    const char *queue = NULL, *key_file = NULL, *group = NULL;
    long long ttl = DEFAULT_TTL;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--queue") == 0 && i + 1 < argc) {
            queue = argv[++i];
        } else if (strcmp(a, "--group") == 0 && i + 1 < argc) {
            group = argv[++i];
            if (!wr_groups_name_ok(group, strlen(group))) {
                fprintf(stderr, "waitroom-invite: --group must be " WR_GROUP_NAME_RULE
                                " and not \"" WR_GROUP_STANDARD "\"\n");
                return 2;
            }
        } else if (strcmp(a, "--key-file") == 0 && i + 1 < argc) {
            key_file = argv[++i];
        } else if (strcmp(a, "--ttl") == 0 && i + 1 < argc) {
            char *end = NULL;
            ttl = strtoll(argv[++i], &end, 10);
            if (!end || *end || ttl < 1 || ttl > 31536000) {
                fprintf(stderr, "waitroom-invite: --ttl must be 1..31536000 seconds\n");
                return 2;
            }
        } else if (strcmp(a, "--key") == 0) {
            fprintf(stderr, "waitroom-invite: no --key: a command line is visible to every "
                            "local user (ps); use WAITROOM_INVITE_KEY or --key-file\n");
            return 2;
        } else if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (a[0] == '-') {
            usage(stderr);
            return 2;
        } else {
            break;
        }
    }
    if (!queue || !wr_ids_valid_queue(queue)) {
        fprintf(stderr, "waitroom-invite: --queue NAME is required ([A-Za-z0-9_-]{1,64})\n");
        usage(stderr);
        return 2;
    }
    char key[WR_INVITE_KEY_MAX + 2];
    size_t key_len = 0;
    if (key_file) {
        if (read_key_file(key_file, key, sizeof(key), &key_len) != 0)
            return 2;
    } else {
        const char *env = getenv("WAITROOM_INVITE_KEY");
        if (!env || !*env) {
            fprintf(stderr, "waitroom-invite: set WAITROOM_INVITE_KEY or give --key-file FILE\n");
            return 2;
        }
        key_len = strlen(env);
        if (key_len > WR_INVITE_KEY_MAX)
            key_len = WR_INVITE_KEY_MAX + 1; /* refused below */
        else
            memcpy(key, env, key_len);
    }
    if (key_len < WR_INVITE_KEY_MIN || key_len > WR_INVITE_KEY_MAX) {
        fprintf(stderr, "waitroom-invite: the key must be %d to %d bytes (the queue's inviteKey)\n",
                WR_INVITE_KEY_MIN, WR_INVITE_KEY_MAX);
        return 2;
    }
    signer_t s = {(const uint8_t *)key, key_len, queue, group, (int64_t)time(NULL), 0};
    s.exp = s.now + ttl;

    int rc = 0;
    if (i < argc) {
        for (; i < argc && rc == 0; i++)
            rc = sign_one(&s, argv[i]);
    } else {
        char line[LINE_MAX_LEN];
        for (long no = 1; rc == 0 && fgets(line, sizeof(line), stdin); no++) {
            size_t n = strlen(line);
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                line[--n] = '\0';
            if (n == 0) {
                fprintf(stderr,
                        "waitroom-invite: line %ld is blank: every input line must be a user id "
                        "(output line k is the invite of input line k)\n",
                        no);
                rc = 1;
            } else {
                rc = sign_one(&s, line);
            }
        }
    }
    memset(key, 0, sizeof(key));
    if (fflush(stdout) != 0)
        rc = 1;
    return rc;
}
