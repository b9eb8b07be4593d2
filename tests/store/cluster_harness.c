/*
 * cluster_harness.c - see cluster_harness.h.
 *
 * Ports: each node needs PORT and PORT + 10000 (the cluster bus) free; a
 * port is taken from the kernel (bind to port 0), and kept when its bus
 * port binds too. The window between closing the probe and redis-server
 * binding is short; a node that does not come up fails the setup.
 */
#include "cluster_harness.h"

#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "runtime/store_registry.h"
#include "store/redis/store_redis.h"
#include "store_harness.h"

static char g_dir[256];
static int g_n;
static int g_port[SC_NODES_MAX];
static pid_t g_pid[SC_NODES_MAX];
static char g_url[128];

static int bind_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int got = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        got = ntohs(a.sin_port);
    close(fd);
    return got;
}

static int free_port(void)
{
    for (int i = 0; i < 100; i++) {
        int p = bind_port(0);
        if (p > 0 && p + 10000 <= 65535 && bind_port(p + 10000) == p + 10000)
            return p;
    }
    return -1;
}

redisReply *sc_cmd(int port, const char *fmt, ...)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c && c->err) {
        redisFree(c);
        c = NULL;
    }
    if (c)
        redisSetTimeout(c, tv);
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = sh_redis_vcmd(c, fmt, ap);
    va_end(ap);
    return r;
}

static bool reply_has(redisReply *r, const char *s)
{
    bool ok = r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) &&
              strstr(r->str, s) != NULL;
    if (r)
        freeReplyObject(r);
    return ok;
}

static pid_t start_node(int i)
{
    char dir[300], port[16], log[340];
    snprintf(dir, sizeof dir, "%s/%d", g_dir, g_port[i]);
    if (mkdir(dir, 0700) != 0)
        return -1;
    snprintf(port, sizeof port, "%d", g_port[i]);
    snprintf(log, sizeof log, "%s/log", dir);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1",
               "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
               "--cluster-node-timeout", "1000", "--save", "", "--appendonly", "yes",
               "--appendfsync", "no", "--dir", dir, "--logfile", log, (char *)NULL);
        _exit(127);
    }
    return pid;
}

int sc_setup(int primaries, int replicas)
{
    g_n = primaries * (1 + replicas);
    if (g_n > SC_NODES_MAX || primaries < 3)
        return -1;
    snprintf(g_dir, sizeof g_dir, "/tmp/wr-cluster-test-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    for (int i = 0; i < g_n; i++) {
        g_port[i] = free_port();
        g_pid[i] = g_port[i] > 0 ? start_node(i) : -1;
        if (g_pid[i] < 0)
            goto fail;
    }
    for (int i = 0; i < g_n; i++) {
        int64_t deadline = wr_clock_mono_ms() + 5000;
        while (!reply_has(sc_cmd(g_port[i], "PING"), "PONG")) {
            if (wr_clock_mono_ms() > deadline)
                goto fail;
            usleep(20000);
        }
    }
    char cmd[1024];
    int k = snprintf(cmd, sizeof cmd, "redis-cli --cluster create");
    for (int i = 0; i < g_n; i++)
        k += snprintf(cmd + k, sizeof cmd - (size_t)k, " 127.0.0.1:%d", g_port[i]);
    snprintf(cmd + k, sizeof cmd - (size_t)k,
             " --cluster-replicas %d --cluster-yes >%s/create.log 2>&1", replicas, g_dir);
    if (system(cmd) != 0)
        goto fail;
    int64_t deadline = wr_clock_mono_ms() + 20000;
    for (int i = 0; i < g_n; i++) {
        while (!reply_has(sc_cmd(g_port[i], "CLUSTER INFO"), "cluster_state:ok")) {
            if (wr_clock_mono_ms() > deadline)
                goto fail;
            usleep(50000);
        }
    }
    snprintf(g_url, sizeof g_url, "redis-cluster://127.0.0.1:%d,127.0.0.1:%d", g_port[0],
             g_port[1]);
    return 0;
fail:
    fprintf(stderr, "cannot start a Redis Cluster (logs in %s)\n", g_dir);
    sc_teardown();
    return -1;
}

void sc_teardown(void)
{
    for (int i = 0; i < g_n; i++) {
        if (g_pid[i] > 0) {
            kill(g_pid[i], SIGKILL);
            waitpid(g_pid[i], NULL, 0);
            g_pid[i] = -1;
        }
    }
    if (g_dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", g_dir);
        g_dir[0] = '\0';
    }
}

const char *sc_url(void)
{
    return g_url;
}

int sc_flushall(void)
{
    for (int i = 0; i < g_n; i++) {
        redisReply *r = sc_cmd(g_port[i], "ROLE");
        bool primary = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                       strcmp(r->element[0]->str, "master") == 0;
        if (r)
            freeReplyObject(r);
        if (primary && !reply_has(sc_cmd(g_port[i], "FLUSHALL"), "OK"))
            return -1;
    }
    return 0;
}

wr_store_t *sc_open(uint32_t cmd_timeout_ms)
{
    wr_store_t *s = NULL;
    wr_store_params_t p = {.command_timeout_ms = cmd_timeout_ms,
                           .connect_timeout_ms = 1000,
                           .reconnect_max_ms = 400,
                           .push_sender = true};
    if (wr_store_open_url(sh_base(), g_url, &p, &s) != WR_OK)
        return NULL;
    /* connected to every primary of the map */
    int64_t deadline = wr_clock_mono_ms() + 10000;
    char parts[512];
    while ((!wr_store_redis_connected(s) || wr_store_unreachable(s, parts, sizeof parts) > 0 ||
            !wr_store_redis_log_ready(s)) &&
           wr_clock_mono_ms() < deadline)
        sh_run_for(5);
    if (!wr_store_redis_connected(s) || wr_store_unreachable(s, parts, sizeof parts) > 0) {
        wr_store_close(s);
        return NULL;
    }
    return s;
}
