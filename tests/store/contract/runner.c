/*
 * runner.c - runs the store contract (contract.h) against one backend of
 * the store registry:
 *
 *     test_store_contract --list-backends   the registry's backends, one a line
 *     test_store_contract BACKEND           every group against BACKEND
 *
 * The backends come from the registry (wr_store_registry_backends), not
 * from this file; CTest asks --list-backends and adds one test per line
 * (store_contract_<backend>, CMakeLists.txt). What this file knows per
 * backend is its harness: how to bring up a server for it (a private
 * redis-server for "redis", a private cluster of three primaries for
 * "redis-cluster", nothing for "memory"). A backend of the
 * registry without a harness row fails its run (exit 2), so a new backend
 * cannot go untested by accident.
 *
 * Groups run in the table's order; the Redis-only groups last, and in them
 * r_kill_and_restart last (it restarts Redis).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "contract.h"

bool g_redis;
bool g_cluster;

WR_CONTRACT_EXTERN(join);
WR_CONTRACT_EXTERN(admission);
WR_CONTRACT_EXTERN(tokens);
WR_CONTRACT_EXTERN(config);
WR_CONTRACT_EXTERN(close);
WR_CONTRACT_EXTERN(iteration);
WR_CONTRACT_EXTERN(sessions);
WR_CONTRACT_EXTERN(idle);
WR_CONTRACT_EXTERN(opening);
WR_CONTRACT_EXTERN(away);
WR_CONTRACT_EXTERN(stock);
WR_CONTRACT_EXTERN(unseen);
WR_CONTRACT_EXTERN(autotune);
WR_CONTRACT_EXTERN(publog);
WR_CONTRACT_EXTERN(push);
WR_CONTRACT_EXTERN(groups);
WR_CONTRACT_EXTERN(publog_draw);
WR_CONTRACT_EXTERN(idle_redis_only);
WR_CONTRACT_EXTERN(script_rows_redis_only);
WR_CONTRACT_EXTERN(redis_redis_only);

#define GROUP(name, only)                                                                          \
    {                                                                                              \
#name, wr_contract_##name, &wr_contract_##name##_n, only                                   \
    }

static const struct {
    const char *name;
    const struct CMUnitTest *tests;
    const size_t *n;
    const char *only; /* run against this backend alone; NULL = every backend */
} groups[] = {
    GROUP(join, NULL),
    GROUP(admission, NULL),
    GROUP(tokens, NULL),
    GROUP(config, NULL),
    GROUP(close, NULL),
    GROUP(iteration, NULL),
    GROUP(sessions, NULL),
    GROUP(idle, NULL),
    GROUP(opening, NULL),
    GROUP(away, NULL),
    GROUP(stock, NULL),
    GROUP(unseen, NULL),
    GROUP(autotune, NULL),
    GROUP(publog, NULL),
    GROUP(push, NULL),
    GROUP(groups, NULL),
    GROUP(publog_draw, NULL),
    GROUP(idle_redis_only, "redis"),
    GROUP(script_rows_redis_only, "redis"),
    GROUP(redis_redis_only, "redis"), /* last: its last test restarts Redis */
};

/* Three primaries without replicas: the contract needs the routing, not
 * the failover (tests/integration/test_cluster.py has those). */
static int cluster_up(void)
{
    return sc_setup(3, 0);
}

/* How to bring up each backend's server for the suite. */
static const struct {
    const char *backend;
    int (*up)(void);    /* 0 = ready; NULL = nothing to start */
    void (*down)(void); /* NULL = nothing to stop */
} harnesses[] = {
    {"memory", NULL, NULL},
    {"redis", sh_redis_setup, sh_redis_teardown},
    {"redis-cluster", cluster_up, sc_teardown},
};

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s --list-backends | BACKEND (one of --list-backends)\n", argv0);
    return 2;
}

int main(int argc, char **argv)
{
    const char *names[16];
    size_t nb = wr_store_registry_backends(names, 16);
    if (nb > 16)
        nb = 16;
    if (argc != 2)
        return usage(argv[0]);
    if (strcmp(argv[1], "--list-backends") == 0) {
        for (size_t i = 0; i < nb; i++)
            printf("%s\n", names[i]);
        return 0;
    }
    const char *backend = NULL;
    for (size_t i = 0; i < nb; i++)
        if (strcmp(argv[1], names[i]) == 0)
            backend = names[i];
    if (!backend) {
        fprintf(stderr, "%s: '%s' is not a backend of the store registry\n", argv[0], argv[1]);
        return usage(argv[0]);
    }
    size_t h = 0;
    while (h < sizeof harnesses / sizeof harnesses[0] && strcmp(harnesses[h].backend, backend))
        h++;
    if (h == sizeof harnesses / sizeof harnesses[0]) {
        fprintf(stderr,
                "%s: no contract harness for backend '%s': add its row to "
                "tests/store/contract/runner.c\n",
                argv[0], backend);
        return 2;
    }
    g_redis = strcmp(backend, "redis") == 0;
    g_cluster = strcmp(backend, "redis-cluster") == 0;
    signal(SIGPIPE, SIG_IGN);
    if (!sh_loop_new())
        return 1;
    if (harnesses[h].up && harnesses[h].up() != 0)
        return 1;
    int failed = 0;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        if (groups[i].only && strcmp(groups[i].only, backend) != 0)
            continue;
        char title[64];
        snprintf(title, sizeof title, "%s: %s", backend, groups[i].name);
        failed += _cmocka_run_group_tests(title, groups[i].tests, *groups[i].n, group_setup, NULL);
    }
    if (harnesses[h].down)
        harnesses[h].down();
    sh_loop_free();
    return failed ? 1 : 0;
}
