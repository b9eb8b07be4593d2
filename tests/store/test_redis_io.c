/*
 * test_redis_io.c - the Redis connection of redis_io.h against real
 * redis-server processes that the tests start themselves: plain TCP, a
 * unix socket, --requirepass, an ACL user, TLS with a CA, a server and a
 * client certificate made here with the openssl command, IPv6 on ::1
 * (skipped where the machine has none). Also a listener that never
 * answers (connect timeouts) and servers that die with commands in flight.
 *
 * Every callback is counted: a command's callback must come exactly once
 * and never from inside the call that submitted it; on_close once. No
 * message may hold a password, and nothing is written to stderr while
 * the authentication tests run (the module does not log; the check
 * guards that).
 *
 * Label store: it needs redis-server (with TLS, as Debian builds it) and
 * openssl on the PATH.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "store/redis/redis_io.h"
#include "store/redis/redis_io_internal.h"
#include "store_harness.h"

#define WAIT_MS 5000
#define PW      "Pa55-w0rd-8c1f"  /* the server's requirepass */
#define ALICEPW "al1ce:s3cret@x"  /* the ACL user's password */
#define WRONGPW "wr0ng-pw-77e2a9" /* what a wrong client sends */

static char g_dir[256]; /* a mkdtemp directory for certificates and servers */
static bool g_in_call;  /* a submit is running: a callback now is a contract break */

/* ------------------------------------------------------------ servers */

typedef struct {
    pid_t pid;
    int port;
    char sock[300];
    char name[32];
} srv_t;

/* A free TCP port on the loopback of family af. 0 if none. */
static int free_port(int af)
{
    int fd = socket(af, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof ss);
    if (af == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sl = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        sl = sizeof *a;
    }
    int port = 0;
    if (bind(fd, (struct sockaddr *)&ss, sl) == 0 &&
        getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        port = ntohs(af == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                   : ((struct sockaddr_in6 *)&ss)->sin6_port);
    close(fd);
    return port;
}

static bool can_connect(int af, int port, const char *path)
{
    int fd = socket(path ? AF_UNIX : af, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof ss);
    if (path) {
        struct sockaddr_un *a = (struct sockaddr_un *)&ss;
        a->sun_family = AF_UNIX;
        size_t n = strlen(path);
        if (n >= sizeof a->sun_path) { /* not a snprintf: -Wformat-truncation at -O2 */
            close(fd);
            return false;
        }
        memcpy(a->sun_path, path, n + 1);
        sl = sizeof *a;
    } else if (af == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sl = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        a->sin6_addr = in6addr_loopback;
        sl = sizeof *a;
    }
    bool ok = connect(fd, (struct sockaddr *)&ss, sl) == 0;
    close(fd);
    return ok;
}

/*
 * Starts redis-server named name: TCP on a free port of af (the port
 * given with --port, or with --tls-port when tls), and a unix socket; the
 * extra arguments (NULL-terminated) follow. Waits until it accepts.
 */
static bool srv_start(srv_t *s, const char *name, int af, int tls, ...)
{
    const char *argv[64];
    int n = 0;
    char port[16], log[400], dir[300], bind[16];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->port = free_port(af);
    if (!s->port)
        return false;
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(s->sock, sizeof s->sock, "%s/%s.sock", g_dir, name);
    snprintf(log, sizeof log, "%s/%s.log", g_dir, name);
    snprintf(dir, sizeof dir, "%s", g_dir);
    snprintf(bind, sizeof bind, "%s", af == AF_INET ? "127.0.0.1" : "::1");
    argv[n++] = "redis-server";
    argv[n++] = "--bind";
    argv[n++] = bind;
    argv[n++] = "--port";
    argv[n++] = tls ? "0" : port;
    if (tls) {
        argv[n++] = "--tls-port";
        argv[n++] = port;
    }
    const char *fixed[] = {
        "--unixsocket", s->sock, "--save",    "",  "--appendonly",           "no",
        "--dir",        dir,     "--logfile", log, "--enable-debug-command", "yes"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[n++] = fixed[i];
    va_list ap;
    va_start(ap, tls);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && n < 62)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execvp("redis-server", (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    int64_t deadline = wr_clock_mono_ms() + WAIT_MS;
    while (wr_clock_mono_ms() < deadline) {
        if (can_connect(af, s->port, NULL) && can_connect(af, 0, s->sock))
            return true;
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            s->pid = 0;
            return false;
        }
        usleep(10000);
    }
    return false;
}

static void srv_stop(srv_t *s, int sig)
{
    if (s->pid > 0) {
        kill(s->pid, sig);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    unlink(s->sock);
}

/* ------------------------------------------------------------ callbacks */

/* What one command's callback saw. */
typedef struct {
    int calls;
    bool sync; /* called from inside the submit */
    wr_err_t err;
    int type;
    long long integer;
    size_t len;
    size_t elements;
    char str[256];
} rep_t;

static void rep_cb(wr_err_t err, const redisReply *r, void *arg)
{
    rep_t *x = arg;
    x->calls++;
    x->sync |= g_in_call;
    x->err = err;
    if (r) {
        x->type = r->type;
        x->integer = r->integer;
        x->len = r->len;
        x->elements = r->elements;
        if (r->str) {
            size_t n = r->len < sizeof x->str - 1 ? r->len : sizeof x->str - 1;
            memcpy(x->str, r->str, n);
            x->str[n] = '\0';
        }
    }
}

/* What the connection's callbacks saw. */
typedef struct {
    int ready, closed, done; /* done = ready + closed */
    int hooks, pushes;
    wr_err_t err;
    char msg[WR_REDIS_IO_MSG_MAX];
    char push[128];
    wr_redis_io_t *io;
    bool free_on_ready, free_on_close;
} conn_t;

static void on_ready(wr_redis_io_t *io, void *arg)
{
    conn_t *c = arg;
    assert_true(wr_redis_io_ready(io));
    c->ready++;
    c->done++;
    if (c->free_on_ready) {
        wr_redis_io_free(io);
        c->io = NULL;
    }
}

static void on_close(wr_redis_io_t *io, wr_err_t err, const char *msg, void *arg)
{
    conn_t *c = arg;
    assert_false(g_in_call);
    assert_false(wr_redis_io_ready(io));
    c->closed++;
    c->done++;
    c->err = err;
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    if (c->free_on_close) {
        wr_redis_io_free(io);
        c->io = NULL;
    }
}

static void on_push(wr_redis_io_t *io, const redisReply *r, void *arg)
{
    conn_t *c = arg;
    c->pushes++;
    if (r->elements == 3 && r->element[2]->str)
        snprintf(c->push, sizeof c->push, "%s", r->element[2]->str);
}

static wr_redis_io_opts_t opts_tcp(int port)
{
    /* WAIT_MS, not the 250 ms default: commands here wait for their answer
     * unless a test sets a timeout of its own (a 1 MB GET of t_reply_cap
     * took over 250 ms under ASan on a loaded 2-core machine) */
    wr_redis_io_opts_t o = {
        .host = "127.0.0.1", .port = port, .db = -1, .command_timeout_ms = WAIT_MS};
    return o;
}

/* Connects with o (callbacks filled in here, arg c; c not cleared) and
 * returns at once. */
static wr_redis_io_t *start_io(wr_redis_io_opts_t o, conn_t *c)
{
    o.on_ready = on_ready;
    o.on_close = on_close;
    if (!o.on_push)
        o.on_push = on_push;
    o.arg = c;
    wr_redis_io_t *io = NULL;
    g_in_call = true;
    assert_int_equal(wr_redis_io_connect(sh_base(), &o, &io), WR_OK);
    g_in_call = false;
    assert_non_null(io);
    c->io = io;
    assert_int_equal(c->done, 0); /* never from inside connect */
    return io;
}

/* Connects with o and waits for ready or close; c cleared first. */
static wr_redis_io_t *open_io(wr_redis_io_opts_t o, conn_t *c)
{
    memset(c, 0, sizeof *c);
    wr_redis_io_t *io = start_io(o, c);
    assert_true(sh_run_until(&c->done, 1, WAIT_MS));
    return io;
}

static void expect_ready(conn_t *c)
{
    if (c->ready != 1)
        fail_msg("not ready: %s (%s)", c->msg, wr_errname(c->err));
    assert_int_equal(c->closed, 0);
}

/* Submits a command and checks the contract at submission. */
static void submit(wr_redis_io_t *io, rep_t *r, uint32_t timeout_ms, int argc, const char **argv)
{
    memset(r, 0, sizeof *r);
    g_in_call = true;
    wr_err_t e = wr_redis_io_command(io, argc, argv, NULL, timeout_ms, rep_cb, r);
    g_in_call = false;
    assert_int_equal(e, WR_OK);
}

/* One command, waited for; the callback's error. */
static wr_err_t run_cmd(wr_redis_io_t *io, rep_t *r, int argc, const char **argv)
{
    submit(io, r, 0, argc, argv);
    assert_true(sh_run_until(&r->calls, 1, WAIT_MS));
    sh_run_for(1);
    assert_int_equal(r->calls, 1);
    assert_false(r->sync);
    return r->err;
}

#define CMD(io, r, ...)                                                                            \
    run_cmd((io), (r), (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)),        \
            (const char *[]){__VA_ARGS__})

static void assert_no_secret(const char *s)
{
    if (strstr(s, PW) || strstr(s, ALICEPW) || strstr(s, WRONGPW) || strstr(s, "s3cret"))
        fail_msg("a password in: %s", s);
}

/* ------------------------------------------------------------ plain TCP, unix, SELECT */

static srv_t g_plain; /* TCP + unix socket, no password; for most tests */

static void t_plain(void **state)
{
    (void)state;
    conn_t c;
    rep_t r, held[3];
    wr_redis_io_opts_t o = opts_tcp(g_plain.port);
    memset(&c, 0, sizeof c);
    wr_redis_io_t *io = start_io(o, &c);
    char ep[64];
    snprintf(ep, sizeof ep, "127.0.0.1:%d", g_plain.port);
    assert_string_equal(wr_redis_io_endpoint(io), ep);

    /* submitted before the connection is ready: held, then answered in order */
    submit(io, &held[0], 0, 3, (const char *[]){"SET", "plain:k", "v"});
    submit(io, &held[1], 0, 2, (const char *[]){"GET", "plain:k"});
    submit(io, &held[2], 0, 2, (const char *[]){"INCR", "plain:k"});
    assert_false(wr_redis_io_ready(io));
    assert_int_equal(wr_redis_io_pending(io), 3);
    assert_true(sh_run_until(&held[2].calls, 1, WAIT_MS));
    assert_int_equal(c.ready, 1);
    assert_true(wr_redis_io_ready(io));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(held[i].calls, 1);
        assert_false(held[i].sync);
        assert_int_equal(held[i].err, WR_OK);
    }
    assert_int_equal(held[0].type, REDIS_REPLY_STATUS);
    assert_string_equal(held[0].str, "OK");
    assert_int_equal(held[1].type, REDIS_REPLY_STRING);
    assert_string_equal(held[1].str, "v");
    assert_int_equal(held[2].type, REDIS_REPLY_ERROR); /* an error reply is still an answer */
    assert_non_null(strstr(held[2].str, "not an integer"));

    /* binary-safe arguments */
    const char *bin[] = {"SET", "plain:bin", "a\0b\r\n"};
    size_t lens[] = {3, 9, 5};
    memset(&r, 0, sizeof r);
    assert_int_equal(wr_redis_io_command(io, 3, bin, lens, 0, rep_cb, &r), WR_OK);
    assert_true(sh_run_until(&r.calls, 1, WAIT_MS));
    assert_int_equal(CMD(io, &r, "GET", "plain:bin"), WR_OK);
    assert_int_equal(r.len, 5);
    assert_memory_equal(r.str, "a\0b\r\n", 5);
    assert_int_equal(CMD(io, &r, "GET", "plain:none"), WR_OK);
    assert_int_equal(r.type, REDIS_REPLY_NIL);
    assert_int_equal(CMD(io, &r, "RPUSH", "plain:l", "a", "b", "c"), WR_OK);
    assert_int_equal(r.type, REDIS_REPLY_INTEGER);
    assert_int_equal(r.integer, 3);
    assert_int_equal(CMD(io, &r, "LRANGE", "plain:l", "0", "-1"), WR_OK);
    assert_int_equal(r.type, REDIS_REPLY_ARRAY);
    assert_int_equal(r.elements, 3);

    /* 1000 commands in one go: each answered once, in order */
    static rep_t many[1000];
    CMD(io, &r, "DEL", "plain:n");
    for (int i = 0; i < 1000; i++)
        submit(io, &many[i], 2000, 2, (const char *[]){"INCR", "plain:n"});
    assert_true(sh_run_until(&many[999].calls, 1, WAIT_MS));
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(many[i].calls, 1);
        assert_int_equal(many[i].integer, i + 1);
    }
    assert_int_equal(wr_redis_io_pending(io), 0);
    wr_redis_io_free(io);
    assert_int_equal(c.closed, 0); /* free never calls on_close */
}

static void t_unix_and_select(void **state)
{
    (void)state;
    conn_t c, c0, c3;
    rep_t r;
    wr_redis_io_opts_t o = {.unix_path = g_plain.sock, .db = 3};
    wr_redis_io_t *io = open_io(o, &c);
    expect_ready(&c);
    char ep[400];
    snprintf(ep, sizeof ep, "unix:%s", g_plain.sock);
    assert_string_equal(wr_redis_io_endpoint(io), ep);
    assert_int_equal(CMD(io, &r, "SET", "sel:k", "in3"), WR_OK);

    wr_redis_io_t *io0 = open_io(opts_tcp(g_plain.port), &c0); /* no SELECT: db 0 */
    expect_ready(&c0);
    assert_int_equal(CMD(io0, &r, "GET", "sel:k"), WR_OK);
    assert_int_equal(r.type, REDIS_REPLY_NIL);
    o = opts_tcp(g_plain.port);
    o.db = 3;
    wr_redis_io_t *io3 = open_io(o, &c3);
    expect_ready(&c3);
    assert_int_equal(CMD(io3, &r, "GET", "sel:k"), WR_OK);
    assert_string_equal(r.str, "in3");
    wr_redis_io_free(io);
    wr_redis_io_free(io0);
    wr_redis_io_free(io3);

    /* a database the server does not have: refused, WR_EINVAL */
    o.db = 99;
    io = open_io(o, &c);
    assert_int_equal(c.closed, 1);
    assert_int_equal(c.ready, 0);
    assert_int_equal(c.err, WR_EINVAL);
    assert_non_null(strstr(c.msg, "SELECT 99 refused"));
    assert_false(wr_redis_io_ready(io));
    assert_int_equal(wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, rep_cb, &r),
                     WR_EUNAVAILABLE);
    wr_redis_io_free(io);
}

/* ------------------------------------------------------------ failures to connect */

static void t_refused(void **state)
{
    (void)state;
    conn_t c;
    rep_t r;
    int port = free_port(AF_INET); /* nobody listens there */
    wr_redis_io_opts_t o = opts_tcp(port);
    memset(&c, 0, sizeof c);
    wr_redis_io_t *io = start_io(o, &c);
    submit(io, &r, 2000, 1, (const char *[]){"PING"});
    assert_true(sh_run_until(&c.done, 1, WAIT_MS));
    assert_int_equal(c.closed, 1);
    assert_int_equal(c.err, WR_EUNAVAILABLE);
    assert_non_null(strstr(c.msg, "Connection refused"));
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WR_EUNAVAILABLE);
    sh_run_for(20);
    assert_int_equal(c.closed, 1);
    wr_redis_io_free(io);

    /* a unix socket that does not exist (connect fails inside connect():
     * still reported from the loop) */
    char path[400];
    snprintf(path, sizeof path, "%s/none.sock", g_dir);
    o = (wr_redis_io_opts_t){.unix_path = path, .db = -1, .command_timeout_ms = WAIT_MS};
    io = open_io(o, &c);
    assert_int_equal(c.closed, 1);
    assert_int_equal(c.err, WR_EUNAVAILABLE);
    assert_non_null(strstr(c.msg, "No such file"));
    wr_redis_io_free(io);
}

/* A listener that never accepts nor answers: TCP connects (the kernel's
 * backlog), nothing more. */
static int silent_listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 16), 0);
    getsockname(fd, (struct sockaddr *)&a, &sl);
    *port = ntohs(a.sin_port);
    return fd;
}

static wr_redis_io_tls_t *g_tls; /* trusts the test CA */

static void t_connect_timeout(void **state)
{
    (void)state;
    int port;
    int lfd = silent_listener(&port);
    conn_t c;
    rep_t quick, slow;
    wr_redis_io_opts_t o = opts_tcp(port);
    o.connect_timeout_ms = 300;
    memset(&c, 0, sizeof c);
    int64_t t0 = wr_clock_mono_ms();
    wr_redis_io_t *io = start_io(o, &c);
    submit(io, &quick, 50, 1, (const char *[]){"PING"}); /* times out while held */
    submit(io, &slow, 5000, 1, (const char *[]){"PING"});
    assert_true(sh_run_until(&quick.calls, 1, WAIT_MS));
    assert_int_equal(quick.err, WR_ETIMEOUT);
    assert_int_equal(wr_redis_io_pending(io), 1);
    assert_true(sh_run_until(&c.done, 1, WAIT_MS));
    int64_t took = wr_clock_mono_ms() - t0;
    assert_true(took >= 290 && took < 3000);
    assert_int_equal(c.err, WR_ETIMEOUT);
    assert_non_null(strstr(c.msg, "not ready within 300 ms (AUTH/SELECT)"));
    assert_int_equal(slow.calls, 1);
    assert_int_equal(slow.err, WR_EUNAVAILABLE);
    assert_int_equal(quick.calls, 1);
    wr_redis_io_free(io);

    /* the same over TLS: the handshake never completes */
    o.tls = g_tls;
    o.tls_name = "localhost";
    io = open_io(o, &c);
    assert_int_equal(c.err, WR_ETIMEOUT);
    assert_non_null(strstr(c.msg, "(TCP connect or TLS handshake)"));
    wr_redis_io_free(io);
    close(lfd);
}

/* ------------------------------------------------------------ timeouts */

static void t_command_timeout(void **state)
{
    (void)state;
    conn_t c;
    rep_t sleep_r, ping;

    /* never dropped for hanging: the late reply is read and dropped */
    wr_redis_io_opts_t o = opts_tcp(g_plain.port);
    o.hung_ms = WR_REDIS_IO_NO_HUNG;
    wr_redis_io_t *io = open_io(o, &c);
    expect_ready(&c);
    int64_t t0 = wr_clock_mono_ms();
    submit(io, &sleep_r, 100, 3, (const char *[]){"DEBUG", "SLEEP", "0.4"});
    submit(io, &ping, 3000, 1, (const char *[]){"PING"});
    assert_true(sh_run_until(&sleep_r.calls, 1, WAIT_MS));
    int64_t took = wr_clock_mono_ms() - t0;
    assert_int_equal(sleep_r.err, WR_ETIMEOUT); /* so it came before the sleep ended */
    assert_true(took >= 95);
    assert_int_equal(wr_redis_io_pending(io), 2); /* the timed-out one still counts */
    assert_true(sh_run_until(&ping.calls, 1, WAIT_MS));
    assert_int_equal(ping.err, WR_OK);
    assert_string_equal(ping.str, "PONG");
    assert_int_equal(sleep_r.calls, 1); /* its late reply did not call it again */
    assert_int_equal(wr_redis_io_pending(io), 0);
    assert_true(wr_redis_io_ready(io));
    wr_redis_io_free(io);

    /* the default: unanswered twice the timeout after it: hung, dropped */
    o = opts_tcp(g_plain.port);
    o.command_timeout_ms = 100;
    io = open_io(o, &c);
    expect_ready(&c);
    t0 = wr_clock_mono_ms();
    submit(io, &sleep_r, 0, 3, (const char *[]){"DEBUG", "SLEEP", "1"});
    submit(io, &ping, 5000, 1, (const char *[]){"PING"});
    assert_true(sh_run_until(&c.closed, 1, WAIT_MS));
    took = wr_clock_mono_ms() - t0;
    assert_true(took >= 290 && took < 990);
    assert_int_equal(c.err, WR_ETIMEOUT);
    assert_non_null(strstr(c.msg, "hung"));
    assert_int_equal(sleep_r.calls, 1);
    assert_int_equal(sleep_r.err, WR_ETIMEOUT);
    assert_int_equal(ping.calls, 1);
    assert_int_equal(ping.err, WR_EUNAVAILABLE);
    wr_redis_io_free(io);
    sh_run_for(800); /* the server finishes its sleep */
}

/* A late loop is not a late server (redis_io_cmd.c, "Timeouts"): the
 * commands are written, then the process stops looping for ten times
 * their timeout while the server answers (what a paused process or a
 * loaded machine does); when the loop runs again, the replies, not the
 * timers, answer them. 60 replies of 1000 bytes: libevent reads 4 KB (one
 * TLS record) per readable event, so the later ones are still in the
 * socket when their timers fire.
 * A command the server has not answered at its deadline still times out. */
static void late_loop(wr_redis_io_opts_t o)
{
    enum { N = 60, LEN = 1000 };
    static rep_t r[N];
    static char val[LEN + 1];
    conn_t c;
    rep_t sleep_r;
    memset(val, 'v', LEN);
    o.command_timeout_ms = 100;
    o.hung_ms = WR_REDIS_IO_NO_HUNG;
    wr_redis_io_t *io = open_io(o, &c);
    expect_ready(&c);
    /* (the setup's SET waits WAIT_MS: at 100 ms a loaded CI run's TLS SET
     * under ASan timed out before the test began) */
    submit(io, &r[0], WAIT_MS, 3, (const char *[]){"SET", "late:k", val});
    assert_true(sh_run_until(&r[0].calls, 1, WAIT_MS));
    assert_int_equal(r[0].err, WR_OK);
    for (int i = 0; i < N; i++)
        submit(io, &r[i], 0, 2, (const char *[]){"GET", "late:k"});
    event_base_loop(sh_base(), EVLOOP_NONBLOCK); /* writes them, waits for nothing */
    usleep(1000 * 1000); /* the loop is paused (10x the timeout: the server answers meanwhile) */
    assert_true(sh_run_until(&r[N - 1].calls, 1, WAIT_MS));
    for (int i = 0; i < N; i++) {
        if (r[i].calls != 1 || r[i].err != WR_OK)
            fail_msg("command %d of %d: %d calls, %s", i, N, r[i].calls, wr_errname(r[i].err));
        assert_int_equal(r[i].len, LEN);
    }
    assert_int_equal(c.closed, 0);

    /* the server itself late: the timer still fires on time */
    int64_t t0 = wr_clock_mono_ms();
    submit(io, &sleep_r, 0, 3, (const char *[]){"DEBUG", "SLEEP", "1"});
    assert_true(sh_run_until(&sleep_r.calls, 1, WAIT_MS));
    int64_t took = wr_clock_mono_ms() - t0;
    assert_int_equal(sleep_r.err, WR_ETIMEOUT);
    assert_true(took >= 95 && took < 1000);
    sh_run_for(1100); /* the late reply is read and dropped */
    assert_int_equal(sleep_r.calls, 1);
    assert_int_equal(wr_redis_io_pending(io), 0);
    assert_true(wr_redis_io_ready(io));
    wr_redis_io_free(io);
}

static void t_late_loop(void **state)
{
    (void)state;
    late_loop(opts_tcp(g_plain.port));
}

/* ------------------------------------------------------------ the server dies */

static void t_server_dies(void **state)
{
    (void)state;
    srv_t s;
    conn_t c;
    rep_t sl;
    static rep_t pings[200];
    assert_true(srv_start(&s, "dies", AF_INET, false, NULL));
    wr_redis_io_t *io = open_io(opts_tcp(s.port), &c);
    expect_ready(&c);
    submit(io, &sl, 5000, 3, (const char *[]){"DEBUG", "SLEEP", "2"});
    for (int i = 0; i < 200; i++)
        submit(io, &pings[i], 5000, 1, (const char *[]){"PING"});
    sh_run_for(100); /* all written; the server sleeps */
    assert_int_equal(wr_redis_io_pending(io), 201);
    srv_stop(&s, SIGKILL);
    assert_true(sh_run_until(&c.closed, 1, WAIT_MS));
    sh_run_for(20);
    assert_int_equal(c.closed, 1);
    assert_int_equal(c.err, WR_EUNAVAILABLE);
    assert_int_equal(sl.calls, 1);
    assert_int_equal(sl.err, WR_EUNAVAILABLE);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(pings[i].calls, 1);
        assert_int_equal(pings[i].err, WR_EUNAVAILABLE);
        assert_false(pings[i].sync);
    }
    assert_int_equal(wr_redis_io_pending(io), 0);
    rep_t after;
    memset(&after, 0, sizeof after);
    assert_int_equal(wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, rep_cb, &after),
                     WR_EUNAVAILABLE);
    sh_run_for(10);
    assert_int_equal(after.calls, 0);
    wr_redis_io_free(io);
}

/* ------------------------------------------------------------ AUTH */

static srv_t g_auth; /* --requirepass PW, and ACL user alice / ALICEPW */

static void t_auth(void **state)
{
    (void)state;
    char errpath[400];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", g_dir);
    fflush(stderr);
    int saved = dup(2);
    int efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(efd, 2);
    close(efd);

    conn_t c;
    rep_t r, held;
    /* the password of the default user, with a SELECT after it */
    wr_redis_io_opts_t o = opts_tcp(g_auth.port);
    o.password = PW;
    o.db = 1;
    wr_redis_io_t *io = open_io(o, &c);
    expect_ready(&c);
    assert_int_equal(CMD(io, &r, "PING"), WR_OK);
    assert_string_equal(r.str, "PONG");
    assert_int_equal(CMD(io, &r, "CLIENT", "INFO"), WR_OK);
    assert_non_null(strstr(r.str, " db=1 "));
    wr_redis_io_free(io);

    /* no password: the handshake's PING finds out (NOAUTH) */
    o = opts_tcp(g_auth.port);
    memset(&c, 0, sizeof c);
    io = start_io(o, &c);
    submit(io, &held, 0, 3, (const char *[]){"SET", "auth:k", "v"});
    assert_true(sh_run_until(&c.done, 1, WAIT_MS));
    assert_int_equal(c.err, WR_EAUTH);
    assert_non_null(strstr(c.msg, "requires authentication"));
    assert_non_null(strstr(c.msg, "NOAUTH"));
    assert_int_equal(held.calls, 1);
    assert_int_equal(held.err, WR_EUNAVAILABLE);
    wr_redis_io_free(io);

    /* the ACL user */
    o = opts_tcp(g_auth.port);
    o.user = "alice";
    o.password = ALICEPW;
    io = open_io(o, &c);
    expect_ready(&c);
    assert_int_equal(CMD(io, &r, "ACL", "WHOAMI"), WR_OK);
    assert_string_equal(r.str, "alice");
    wr_redis_io_free(io);

    /* wrong credentials: WR_EAUTH, the server's answer, never the password */
    static const struct {
        const char *user, *password, *says;
    } wrong[] = {
        {NULL, WRONGPW, ": authentication failed: WRONGPASS"},
        {"alice", WRONGPW, ": authentication failed (user alice): WRONGPASS"},
        {"bob", ALICEPW, ": authentication failed (user bob): WRONGPASS"},
    };
    char msgs[3][WR_REDIS_IO_MSG_MAX];
    for (size_t i = 0; i < 3; i++) {
        o.user = wrong[i].user;
        o.password = wrong[i].password;
        io = open_io(o, &c);
        assert_int_equal(c.closed, 1);
        assert_int_equal(c.err, WR_EAUTH);
        snprintf(msgs[i], sizeof msgs[i], "%s", c.msg);
        wr_redis_io_free(io);
    }

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    for (size_t i = 0; i < 3; i++) {
        if (!strstr(msgs[i], wrong[i].says))
            fail_msg("\"%s\" lacks \"%s\"", msgs[i], wrong[i].says);
        assert_no_secret(msgs[i]);
    }
    char buf[4096] = "";
    FILE *f = fopen(errpath, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_no_secret(buf);
    assert_string_equal(buf, ""); /* redis_io does not log */
    assert_string_equal(wr_strerror(WR_EAUTH), "store authentication failed");
    assert_string_equal(wr_errname(WR_EAUTH), "WR_EAUTH");
}

/* ------------------------------------------------------------ the handshake hook */

typedef struct {
    conn_t c;
    bool refuse_eviction;
    int seq, hook_seq, held_seq;
    char policy[64];
    wr_err_t outside;
} hook_t;

static void hook_reply(wr_err_t err, const redisReply *r, void *arg)
{
    wr_redis_io_t *io = ((hook_t *)arg)->c.io;
    hook_t *h = arg;
    h->hook_seq = ++h->seq;
    if (err != WR_OK)
        return;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        snprintf(h->policy, sizeof h->policy, "%s", r->element[1]->str);
    if (h->refuse_eviction && strncmp(h->policy, "allkeys-", 8) == 0)
        wr_redis_io_handshake_done(io, WR_EINVAL, "maxmemory-policy allkeys-lru evicts keys");
    else
        wr_redis_io_handshake_done(io, WR_OK, NULL);
}

static void hook(wr_redis_io_t *io, void *arg)
{
    hook_t *h = arg;
    h->c.hooks++;
    h->c.io = io;
    assert_false(wr_redis_io_ready(io));
    assert_int_equal(
        wr_redis_io_handshake_command(io, 3, (const char *[]){"CONFIG", "GET", "maxmemory-policy"},
                                      NULL, hook_reply, h),
        WR_OK);
}

static void held_cb(wr_err_t err, const redisReply *r, void *arg)
{
    hook_t *h = arg;
    h->held_seq = ++h->seq;
    h->c.err = err;
    (void)r;
}

static void t_handshake_hook(void **state)
{
    (void)state;
    static hook_t h;
    rep_t r;
    for (int refuse = 0; refuse < 2; refuse++) {
        conn_t set;
        wr_redis_io_t *admin = open_io(opts_tcp(g_plain.port), &set);
        CMD(admin, &r, "CONFIG", "SET", "maxmemory-policy", refuse ? "allkeys-lru" : "noeviction");
        memset(&h, 0, sizeof h);
        h.refuse_eviction = true;
        wr_redis_io_opts_t o = opts_tcp(g_plain.port);
        o.on_handshake = hook;
        o.on_ready = on_ready;
        o.on_close = on_close;
        o.arg = &h;
        wr_redis_io_t *io = NULL;
        assert_int_equal(wr_redis_io_connect(sh_base(), &o, &io), WR_OK);
        assert_int_equal(wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, held_cb, &h),
                         WR_OK);
        assert_true(sh_run_until(&h.held_seq, 1, WAIT_MS));
        sh_run_for(10);
        assert_int_equal(h.c.hooks, 1);
        assert_int_equal(h.hook_seq, 1); /* the hook's command went first */
        assert_int_equal(h.held_seq, 2);
        if (!refuse) {
            assert_string_equal(h.policy, "noeviction");
            assert_int_equal(h.c.ready, 1);
            assert_int_equal(h.c.err, WR_OK); /* the held PING's answer */
            /* outside the hook */
            assert_int_equal(
                wr_redis_io_handshake_command(io, 1, (const char *[]){"PING"}, NULL, rep_cb, &r),
                WR_EINVAL);
            wr_redis_io_handshake_done(io, WR_EPROTO, "ignored");
            assert_int_equal(CMD(io, &r, "PING"), WR_OK);
        } else {
            assert_string_equal(h.policy, "allkeys-lru");
            assert_int_equal(h.c.ready, 0);
            assert_int_equal(h.c.closed, 1);
            assert_int_equal(h.c.err, WR_EINVAL); /* on_close's, after the held one's */
            assert_non_null(strstr(h.c.msg, ": maxmemory-policy allkeys-lru evicts keys"));
        }
        wr_redis_io_free(io);
        CMD(admin, &r, "CONFIG", "SET", "maxmemory-policy", "noeviction");
        wr_redis_io_free(admin);
    }
}

/* ------------------------------------------------------------ TLS */

static srv_t g_tlssrv;  /* TLS port, client certificates optional, requirepass PW */
static srv_t g_mtlssrv; /* TLS port, client certificate required */

static wr_redis_io_tls_t *tls_from(const char *ca, const char *cert, const char *key)
{
    char caf[400], cf[400], kf[400], err[512];
    snprintf(caf, sizeof caf, "%s/%s", g_dir, ca);
    snprintf(cf, sizeof cf, "%s/%s", g_dir, cert ? cert : "");
    snprintf(kf, sizeof kf, "%s/%s", g_dir, key ? key : "");
    wr_redis_io_tls_opts_t to = {
        .ca_file = caf, .cert_file = cert ? cf : NULL, .key_file = key ? kf : NULL};
    wr_redis_io_tls_t *t = NULL;
    if (wr_redis_io_tls_new(&to, &t, err, sizeof err) != WR_OK)
        fail_msg("tls_new: %s", err);
    return t;
}

static wr_redis_io_opts_t opts_tls(int port, const char *name)
{
    wr_redis_io_opts_t o = opts_tcp(port);
    o.tls = g_tls;
    o.tls_name = name;
    o.password = PW;
    return o;
}

static void t_tls(void **state)
{
    (void)state;
    conn_t c;
    rep_t r;
    /* the name in the certificate, reached by address */
    wr_redis_io_t *io = open_io(opts_tls(g_tlssrv.port, "localhost"), &c);
    expect_ready(&c);
    char ep[64];
    snprintf(ep, sizeof ep, "tls 127.0.0.1:%d", g_tlssrv.port);
    assert_string_equal(wr_redis_io_endpoint(io), ep);
    assert_int_equal(CMD(io, &r, "SET", "tls:k", "over tls"), WR_OK);
    assert_int_equal(CMD(io, &r, "GET", "tls:k"), WR_OK);
    assert_string_equal(r.str, "over tls");
    /* a 3 MiB value both ways (many TLS records, the reader fed in chunks) */
    size_t big = 3u << 20;
    char *v = malloc(big);
    for (size_t i = 0; i < big; i++)
        v[i] = (char)('a' + i % 26);
    memset(&r, 0, sizeof r);
    assert_int_equal(wr_redis_io_command(io, 3, (const char *[]){"SET", "tls:big", v},
                                         (const size_t[]){3, 7, big}, 5000, rep_cb, &r),
                     WR_OK);
    assert_true(sh_run_until(&r.calls, 1, WAIT_MS));
    assert_int_equal(r.err, WR_OK);
    assert_int_equal(CMD(io, &r, "STRLEN", "tls:big"), WR_OK);
    assert_int_equal(r.integer, (long long)big);
    assert_int_equal(CMD(io, &r, "GETRANGE", "tls:big", "3145700", "-1"), WR_OK);
    assert_memory_equal(r.str, v + 3145700, big - 3145700);
    free(v);
    wr_redis_io_free(io);

    /* by IP: the certificate's IP address is checked (no SNI) */
    io = open_io(opts_tls(g_tlssrv.port, NULL), &c);
    expect_ready(&c);
    wr_redis_io_free(io);
    /* by name: localhost resolves and matches */
    wr_redis_io_opts_t o = opts_tls(g_tlssrv.port, NULL);
    o.host = "localhost";
    io = open_io(o, &c);
    expect_ready(&c);
    wr_redis_io_free(io);

    /* a name the certificate does not carry: refused */
    io = open_io(opts_tls(g_tlssrv.port, "redis.example.com"), &c);
    assert_int_equal(c.closed, 1);
    assert_int_equal(c.err, WR_EUNAVAILABLE);
    assert_non_null(strstr(c.msg, "TLS: the server's certificate is not for 'redis.example.com'"));
    wr_redis_io_free(io);
    o = opts_tls(g_tlssrv.port, "192.0.2.7"); /* an IP literal not in it */
    io = open_io(o, &c);
    assert_int_equal(c.closed, 1);
    assert_non_null(strstr(c.msg, "is not for '192.0.2.7'"));
    wr_redis_io_free(io);

    /* a CA that did not sign it: untrusted */
    wr_redis_io_tls_t *other = tls_from("ca2.crt", NULL, NULL);
    o = opts_tls(g_tlssrv.port, "localhost");
    o.tls = other;
    io = open_io(o, &c);
    assert_int_equal(c.closed, 1);
    assert_int_equal(c.err, WR_EUNAVAILABLE);
    assert_non_null(strstr(c.msg, "TLS: the server's certificate is not trusted"));
    wr_redis_io_free(io);
    wr_redis_io_tls_free(other);

    /* TLS to a plain port: Redis waits for a line that never comes */
    o = opts_tls(g_plain.port, "localhost");
    o.connect_timeout_ms = 300;
    io = open_io(o, &c);
    assert_int_equal(c.closed, 1);
    assert_non_null(strstr(c.msg, "TLS"));
    wr_redis_io_free(io);

    /* TLS and a wrong password */
    o = opts_tls(g_tlssrv.port, "localhost");
    o.password = WRONGPW;
    io = open_io(o, &c);
    assert_int_equal(c.err, WR_EAUTH);
    assert_no_secret(c.msg);
    wr_redis_io_free(io);

    /* the settings may go once connect() returned */
    wr_redis_io_tls_t *tmp = tls_from("ca.crt", NULL, NULL);
    o = opts_tls(g_tlssrv.port, "localhost");
    o.tls = tmp;
    memset(&c, 0, sizeof c);
    io = start_io(o, &c);
    wr_redis_io_tls_free(tmp);
    assert_true(sh_run_until(&c.done, 1, WAIT_MS));
    expect_ready(&c);
    wr_redis_io_free(io);
}

static void t_tls_late_loop(void **state)
{
    (void)state;
    late_loop(opts_tls(g_tlssrv.port, "localhost"));
}

static void t_tls_client_cert(void **state)
{
    (void)state;
    conn_t c;
    rep_t r;
    wr_redis_io_tls_t *mine = tls_from("ca.crt", "client.crt", "client.key");
    wr_redis_io_opts_t o = opts_tls(g_mtlssrv.port, "localhost");
    o.password = NULL;
    o.tls = mine;
    wr_redis_io_t *io = open_io(o, &c);
    expect_ready(&c);
    assert_int_equal(CMD(io, &r, "PING"), WR_OK);
    wr_redis_io_free(io);
    /* without one the server refuses (at the handshake, or right after) */
    o.tls = g_tls;
    io = open_io(o, &c);
    if (c.done == 0)
        assert_true(sh_run_until(&c.done, 1, WAIT_MS));
    assert_int_equal(c.ready, 0);
    assert_int_equal(c.closed, 1);
    assert_int_equal(c.err, WR_EUNAVAILABLE);
    wr_redis_io_free(io);
    wr_redis_io_tls_free(mine);

    /* settings that do not load */
    char err[512], f1[400], f2[400];
    wr_redis_io_tls_t *t = NULL;
    wr_redis_io_tls_opts_t to = {.ca_file = "/nonexistent/ca.pem"};
    assert_int_equal(wr_redis_io_tls_new(&to, &t, err, sizeof err), WR_EINVAL);
    assert_non_null(strstr(err, "cannot load the CA file /nonexistent/ca.pem"));
    assert_null(t);
    snprintf(f1, sizeof f1, "%s/client.crt", g_dir);
    snprintf(f2, sizeof f2, "%s/server.key", g_dir);
    to = (wr_redis_io_tls_opts_t){.cert_file = f1};
    assert_int_equal(wr_redis_io_tls_new(&to, &t, err, sizeof err), WR_EINVAL);
    assert_non_null(strstr(err, "both the certificate and its key"));
    to = (wr_redis_io_tls_opts_t){.cert_file = f1, .key_file = f2};
    assert_int_equal(wr_redis_io_tls_new(&to, &t, err, sizeof err), WR_EINVAL);
    assert_non_null(strstr(err, "cannot load the client key"));
    to = (wr_redis_io_tls_opts_t){.cert_file = f2, .key_file = f2};
    assert_int_equal(wr_redis_io_tls_new(&to, &t, err, sizeof err), WR_EINVAL);
    assert_non_null(strstr(err, "cannot load the client certificate"));
    to = (wr_redis_io_tls_opts_t){.ca_file = NULL}; /* the system's CAs */
    assert_int_equal(wr_redis_io_tls_new(&to, &t, err, sizeof err), WR_OK);
    wr_redis_io_tls_free(t);
    wr_redis_io_tls_free(NULL);
}

/* ------------------------------------------------------------ IPv6 */

static void t_ipv6(void **state)
{
    (void)state;
    if (!free_port(AF_INET6)) {
        print_message("skipped: this machine has no IPv6 loopback (::1)\n");
        skip();
    }
    srv_t s;
    conn_t c;
    rep_t r;
    if (!srv_start(&s, "ipv6", AF_INET6, false, NULL)) {
        srv_stop(&s, SIGKILL);
        print_message("skipped: redis-server cannot listen on ::1 here\n");
        skip();
    }
    wr_redis_io_opts_t o = {.host = "::1", .port = s.port, .db = -1, .command_timeout_ms = WAIT_MS};
    wr_redis_io_t *io = open_io(o, &c);
    expect_ready(&c);
    char ep[64];
    snprintf(ep, sizeof ep, "[::1]:%d", s.port);
    assert_string_equal(wr_redis_io_endpoint(io), ep);
    assert_int_equal(CMD(io, &r, "PING"), WR_OK);
    wr_redis_io_free(io);
    srv_stop(&s, SIGTERM);
}

/* ------------------------------------------------------------ limits */

static void t_reply_cap(void **state)
{
    (void)state;
    conn_t c;
    rep_t r, get;
    size_t n = 2u << 20;
    char *v = malloc(n);
    memset(v, 'x', n);
    wr_redis_io_opts_t o = opts_tcp(g_plain.port);
    o.max_reply_bytes = 1u << 20;
    wr_redis_io_t *io = open_io(o, &c);
    expect_ready(&c);
    memset(&r, 0, sizeof r);
    assert_int_equal(wr_redis_io_command(io, 3, (const char *[]){"SET", "cap:big", v},
                                         (const size_t[]){3, 7, n}, 5000, rep_cb, &r),
                     WR_OK);
    assert_true(sh_run_until(&r.calls, 1, WAIT_MS));
    assert_int_equal(r.err, WR_OK);
    memset(&r, 0, sizeof r);
    assert_int_equal(wr_redis_io_command(io, 3, (const char *[]){"SET", "cap:fits", v},
                                         (const size_t[]){3, 8, (1u << 20) - 100}, 5000, rep_cb,
                                         &r),
                     WR_OK);
    assert_true(sh_run_until(&r.calls, 1, WAIT_MS));
    assert_int_equal(CMD(io, &r, "GET", "cap:fits"), WR_OK);
    assert_int_equal(r.len, (1u << 20) - 100);
    submit(io, &get, 5000, 2, (const char *[]){"GET", "cap:big"});
    assert_true(sh_run_until(&c.closed, 1, WAIT_MS));
    assert_int_equal(c.err, WR_EPROTO);
    assert_non_null(strstr(c.msg, "a reply larger than 1048576 bytes"));
    assert_int_equal(get.calls, 1);
    assert_int_equal(get.err, WR_EUNAVAILABLE);
    wr_redis_io_free(io);

    /* an array of small elements counts whole */
    io = open_io(o, &c);
    expect_ready(&c);
    CMD(io, &r, "DEL", "cap:list");
    for (int i = 0; i < 30; i++) {
        const char *argv[102];
        argv[0] = "RPUSH";
        argv[1] = "cap:list";
        for (int k = 0; k < 100; k++)
            argv[2 + k] = v + n - 500 - 1; /* 500 bytes each, NUL-terminated below */
        v[n - 1] = '\0';
        memset(&r, 0, sizeof r);
        assert_int_equal(wr_redis_io_command(io, 102, argv, NULL, 5000, rep_cb, &r), WR_OK);
        assert_true(sh_run_until(&r.calls, 1, WAIT_MS));
    }
    assert_int_equal(CMD(io, &r, "LLEN", "cap:list"), WR_OK);
    assert_int_equal(r.integer, 3000);
    submit(io, &get, 5000, 4, (const char *[]){"LRANGE", "cap:list", "0", "-1"});
    assert_true(sh_run_until(&c.closed, 1, WAIT_MS));
    assert_int_equal(c.err, WR_EPROTO);
    assert_int_equal(get.err, WR_EUNAVAILABLE);
    wr_redis_io_free(io);
    free(v);
}

static void t_bad_args(void **state)
{
    (void)state;
    wr_redis_io_t *io = (wr_redis_io_t *)&io; /* must stay untouched */
    wr_redis_io_t *const before = io;
    char longhost[300], longpw[600], longpath[200];
    memset(longhost, 'h', sizeof longhost - 1);
    longhost[sizeof longhost - 1] = '\0';
    memset(longpw, 'p', sizeof longpw - 1);
    longpw[sizeof longpw - 1] = '\0';
    memset(longpath, 'u', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = '\0';
    const wr_redis_io_opts_t bad[] = {
        {.db = -1},
        {.host = "", .port = 1},
        {.host = "127.0.0.1", .port = 0},
        {.host = "127.0.0.1", .port = 65536},
        {.host = longhost, .port = 1},
        {.host = "127.0.0.1", .port = 1, .password = longpw},
        {.host = "127.0.0.1", .port = 1, .user = longpw},
        {.unix_path = longpath},
        {.unix_path = ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(wr_redis_io_connect(sh_base(), &bad[i], &io), WR_EINVAL);
    assert_ptr_equal(io, before);
    assert_int_equal(wr_redis_io_connect(NULL, &bad[0], &io), WR_EINVAL);

    conn_t c;
    rep_t r[4];
    memset(r, 0, sizeof r);
    wr_redis_io_opts_t o = opts_tcp(g_plain.port);
    o.max_pending = 3;
    io = open_io(o, &c);
    expect_ready(&c);
    for (int i = 0; i < 3; i++)
        submit(io, &r[i], 0, 1, (const char *[]){"PING"});
    assert_int_equal(wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, rep_cb, &r[3]),
                     WR_ELIMIT);
    assert_int_equal(wr_redis_io_command(io, 0, (const char *[]){"PING"}, NULL, 0, rep_cb, &r[3]),
                     WR_EINVAL);
    assert_true(sh_run_until(&r[2].calls, 1, WAIT_MS));
    sh_run_for(5);
    assert_int_equal(r[3].calls, 0);
    /* a NULL callback: the reply is dropped */
    assert_int_equal(wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, NULL, NULL),
                     WR_OK);
    assert_int_equal(CMD(io, &r[0], "PING"), WR_OK);
    assert_int_equal(wr_redis_io_pending(io), 0);
    wr_redis_io_free(io);
    wr_redis_io_free(NULL);
}

/* ------------------------------------------------------------ freeing from callbacks */

typedef struct {
    wr_redis_io_t *io;
    int calls;
    wr_err_t err;
    wr_err_t resubmit; /* what a submit from inside the callback returned */
} freer_t;

static void free_in_cb(wr_err_t err, const redisReply *r, void *arg)
{
    freer_t *f = arg;
    f->calls++;
    f->err = err;
    wr_redis_io_free(f->io);
    wr_redis_io_free(f->io); /* a second free is a no-op */
    (void)r;
}

static void cancel_cb(wr_err_t err, const redisReply *r, void *arg)
{
    freer_t *f = arg;
    f->calls++;
    f->err = err;
    f->resubmit = wr_redis_io_command(f->io, 1, (const char *[]){"PING"}, NULL, 0, rep_cb, NULL);
    (void)r;
}

static void t_free_in_callbacks(void **state)
{
    (void)state;
    conn_t c;
    freer_t first, rest[5];
    /* free from a reply callback: the rest are cancelled inside that free */
    wr_redis_io_t *io = open_io(opts_tcp(g_plain.port), &c);
    expect_ready(&c);
    memset(&first, 0, sizeof first);
    memset(rest, 0, sizeof rest);
    first.io = io;
    assert_int_equal(
        wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, free_in_cb, &first), WR_OK);
    for (int i = 0; i < 5; i++) {
        rest[i].io = io;
        assert_int_equal(
            wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, cancel_cb, &rest[i]),
            WR_OK);
    }
    assert_true(sh_run_until(&first.calls, 1, WAIT_MS));
    assert_int_equal(first.err, WR_OK);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(rest[i].calls, 1);
        assert_int_equal(rest[i].err, WR_ECANCELED);
        assert_int_equal(rest[i].resubmit, WR_EUNAVAILABLE);
    }
    sh_run_for(20);
    assert_int_equal(c.closed, 0);

    /* free while connecting: held commands cancelled at once */
    wr_redis_io_opts_t o = opts_tcp(g_plain.port);
    memset(&c, 0, sizeof c);
    io = start_io(o, &c);
    for (int i = 0; i < 3; i++) {
        memset(&rest[i], 0, sizeof rest[i]);
        rest[i].io = io;
        assert_int_equal(
            wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, cancel_cb, &rest[i]),
            WR_OK);
    }
    wr_redis_io_free(io);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rest[i].calls, 1);
        assert_int_equal(rest[i].err, WR_ECANCELED);
    }
    sh_run_for(50);
    assert_int_equal(c.done, 0);

    /* free from on_ready (held commands already written: cancelled) */
    memset(&c, 0, sizeof c);
    c.free_on_ready = true;
    io = start_io(o, &c);
    memset(&rest[0], 0, sizeof rest[0]);
    rest[0].io = io;
    assert_int_equal(
        wr_redis_io_command(io, 1, (const char *[]){"PING"}, NULL, 0, cancel_cb, &rest[0]), WR_OK);
    assert_true(sh_run_until(&c.ready, 1, WAIT_MS));
    assert_int_equal(rest[0].calls, 1);
    assert_int_equal(rest[0].err, WR_ECANCELED);
    sh_run_for(50);
    assert_int_equal(c.closed, 0);

    /* free from on_close */
    memset(&c, 0, sizeof c);
    c.free_on_close = true;
    o = opts_tcp(free_port(AF_INET));
    io = start_io(o, &c);
    assert_true(sh_run_until(&c.closed, 1, WAIT_MS));
    assert_null(c.io);
    sh_run_for(20);
}

/* ------------------------------------------------------------ pub/sub */

static void t_pubsub(void **state)
{
    (void)state;
    conn_t sub, pub;
    rep_t r;
    wr_redis_io_t *s = open_io(opts_tcp(g_plain.port), &sub);
    wr_redis_io_t *p = open_io(opts_tcp(g_plain.port), &pub);
    expect_ready(&sub);
    expect_ready(&pub);
    assert_int_equal(CMD(s, &r, "SUBSCRIBE", "+switch-master"), WR_OK);
    assert_int_equal(r.type, REDIS_REPLY_ARRAY);
    assert_int_equal(
        CMD(p, &r, "PUBLISH", "+switch-master", "mymaster 10.0.0.1 6379 10.0.0.2 6379"), WR_OK);
    assert_int_equal(r.integer, 1);
    assert_true(sh_run_until(&sub.pushes, 1, WAIT_MS));
    assert_string_equal(sub.push, "mymaster 10.0.0.1 6379 10.0.0.2 6379");
    assert_int_equal(wr_redis_io_pending(s), 0);
    wr_redis_io_free(s);
    wr_redis_io_free(p);
}

/* ------------------------------------------------------------ setup */

static int setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    snprintf(g_dir, sizeof g_dir, "/tmp/wr-redis-io-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char path[400], cmd[900];
    snprintf(path, sizeof path, "%s/mkcerts.sh", g_dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f,
            "set -e; cd '%s'; k='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
            "openssl req -x509 $k -keyout ca.key -out ca.crt -days 2 -subj /CN=wr-test-ca\n"
            "openssl req -x509 $k -keyout ca2.key -out ca2.crt -days 2 -subj /CN=wr-other-ca\n"
            "openssl req $k -keyout server.key -out server.csr -subj /CN=localhost\n"
            "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\\n' > server.ext\n"
            "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
            "-out server.crt -days 2 -extfile server.ext\n"
            "openssl req $k -keyout client.key -out client.csr -subj /CN=waitroomd\n"
            "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n"
            "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
            "-out client.crt -days 2 -extfile client.ext\n",
            g_dir);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sh '%s' >'%s.log' 2>&1", path, path);
    if (system(cmd) != 0) {
        fprintf(stderr, "openssl could not make the test certificates (see %s.log)\n", path);
        return -1;
    }
    if (!sh_loop_new())
        return -1;
    char crt[400], key[400], ca[400];
    snprintf(crt, sizeof crt, "%s/server.crt", g_dir);
    snprintf(key, sizeof key, "%s/server.key", g_dir);
    snprintf(ca, sizeof ca, "%s/ca.crt", g_dir);
    if (!srv_start(&g_plain, "plain", AF_INET, false, NULL) ||
        !srv_start(&g_auth, "auth", AF_INET, false, "--requirepass", PW, "--user", "alice", "on",
                   ">" ALICEPW, "~*", "+@all", NULL) ||
        !srv_start(&g_tlssrv, "tls", AF_INET, true, "--tls-cert-file", crt, "--tls-key-file", key,
                   "--tls-ca-cert-file", ca, "--tls-auth-clients", "optional", "--requirepass", PW,
                   NULL) ||
        !srv_start(&g_mtlssrv, "mtls", AF_INET, true, "--tls-cert-file", crt, "--tls-key-file", key,
                   "--tls-ca-cert-file", ca, "--tls-auth-clients", "yes", NULL)) {
        fprintf(stderr, "cannot start redis-server (with TLS: is it built with it?)\n");
        return -1;
    }
    g_tls = tls_from("ca.crt", NULL, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    wr_redis_io_tls_free(g_tls);
    srv_stop(&g_plain, SIGTERM);
    srv_stop(&g_auth, SIGTERM);
    srv_stop(&g_tlssrv, SIGTERM);
    srv_stop(&g_mtlssrv, SIGTERM);
    sh_loop_free();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (strncmp(g_dir, "/tmp/wr-redis-io-", 17) == 0 && system(cmd) != 0)
        return -1;
    return 0;
}

/* Our RESP writer gives hiredis's bytes exactly: no arguments, one, 9, 10
 * and 99 of them (the count's digits), empty and binary ones (NUL, CR,
 * LF), lengths of 1 to 6 digits, random ones. */
static void t_resp_form(void **state)
{
    (void)state;
    static char big[123456];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 7 + 3); /* every byte value, NUL and CRLF included */
    const char *argv[100];
    size_t lens[100];
    unsigned seed = 12345;
    for (int round = 0; round < 300; round++) {
        int argc = round < 5 ? (int[]){1, 9, 10, 99, 100}[round] : 1 + (int)(rand_r(&seed) % 60);
        for (int i = 0; i < argc; i++) {
            size_t pick = rand_r(&seed) % 7;
            static const size_t fixed[] = {0, 9, 10, sizeof big};
            lens[i] = pick < 4 ? fixed[pick] : (size_t)(rand_r(&seed) % 2000);
            argv[i] = big + (lens[i] == sizeof big ? 0 : (size_t)(rand_r(&seed) % 1000));
        }
        char *want = NULL;
        int wn = redisFormatCommandArgv(&want, argc, argv, lens);
        assert_true(wn > 0);
        size_t n = 0;
        char *got = wr_redis_io__format_resp(argc, argv, lens, &n);
        assert_non_null(got);
        assert_int_equal(n, (size_t)wn);
        assert_memory_equal(got, want, n);
        free(got);
        redisFreeCommand(want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_resp_form),
        cmocka_unit_test(t_plain),
        cmocka_unit_test(t_unix_and_select),
        cmocka_unit_test(t_refused),
        cmocka_unit_test(t_connect_timeout),
        cmocka_unit_test(t_command_timeout),
        cmocka_unit_test(t_late_loop),
        cmocka_unit_test(t_server_dies),
        cmocka_unit_test(t_auth),
        cmocka_unit_test(t_handshake_hook),
        cmocka_unit_test(t_tls),
        cmocka_unit_test(t_tls_client_cert),
        cmocka_unit_test(t_tls_late_loop),
        cmocka_unit_test(t_ipv6),
        cmocka_unit_test(t_reply_cap),
        cmocka_unit_test(t_bad_args),
        cmocka_unit_test(t_free_in_callbacks),
        cmocka_unit_test(t_pubsub),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
