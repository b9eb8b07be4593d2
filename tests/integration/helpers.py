"""Helpers shared by the integration test modules, next to harness.py (the
processes, the HTTP client and WRTest): every test module imports shared
helpers from harness.py or from here, never from another test module.

What is here: private servers a test may stop, signal or starve
(PrivateServer on the suite's store, PrivateRedisTest on a private
redis-server, RedisCluster: a private Redis Cluster, also the one run.py
starts for the redis-cluster suite), `spawn` (waitroomd without waiting
for readiness),
`make_certs` (a test CA and certificates), /metrics parsers (`metric`: one
series of a client's server; `metrics`: every series of an instance;
`parse_metrics`: samples and types of a text), cookies, invites and page
attributes, the admission challenge's proof of work (`solve`), `race`
(requests released together) and `Sampler` (the admission rate, sampled).
"""
import hashlib
import html
import http.client
import json
import os
import re
import socket
import subprocess
import threading
import time

import jwtutil
from harness import (ENV, PROCS, REQUEST_TIMEOUT, RedisServer, WRTest, Waitroomd, free_port,
                     stop_process, uid)
from resp import Redis, RedisError


# ---- Private servers, spawned processes, certificates ----

WRAPPED = bool(os.environ.get("WR_WAITROOMD_WRAPPER"))


def read_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace").splitlines()
    except FileNotFoundError:
        return []


def json_lines(path):
    return [json.loads(ln) for ln in read_lines(path) if ln.strip()]


class PrivateServer(WRTest):
    """Helpers (no tests): a private waitroomd on the suite's store, its
    config file and its JSON log. Signals and limits sent to it never touch
    the shared servers."""

    def start(self, extra=(), ini=None, identity="header:X-User-Id", log_level="warn", env=None):
        """A private waitroomd on the suite's store; ini: text of a config file."""
        args = list(extra)
        if ini is not None:
            self.ini = os.path.join(ENV.tmpdir, "private-%s.ini" % uid())
            with open(self.ini, "w") as f:
                f.write(ini)
            args = ["--config", self.ini] + args
        return private_server(self, identity=identity, extra=args, log_level=log_level, env=env)

    def write_ini(self, text):
        tmp = self.ini + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.ini)

    def log(self, w):
        w.err.flush()
        return json_lines(w.errpath)

    def wait_log(self, w, pred, what, timeout=5.0):
        return self.poll_until(lambda: [e for e in self.log(w) if pred(e)], bool,
                               timeout=timeout, what=what)

DEBUG = ["--enable-debug-command", "local"]  # DEBUG SLEEP (off by default in Redis 7)


class PrivateRedisTest(WRTest):
    """Helpers (no tests): a private redis-server (DEBUG SLEEP enabled) and
    header-mode waitroomd instances on it, so stopping, slowing or killing
    them never disturbs the shared servers. test_durability and
    test_redis_scripts use it too."""

    def private(self, extra=(), redis_extra=()):
        """A private redis-server and a header-mode waitroomd on it."""
        self.redis_only()
        redis = RedisServer(ENV.tmpdir, extra=DEBUG + list(redis_extra))
        self.addCleanup(redis.stop)
        return redis, self.instance(redis, extra)

    def instance(self, redis, extra=()):
        """One more header-mode waitroomd on `redis`, killed at cleanup."""
        w = Waitroomd(ENV.waitroomd, "redis://127.0.0.1:%d" % redis.port, ENV.secret,
                      ENV.tmpdir, identity="header:X-User-Id", extra=extra)
        self.addCleanup(w.kill)
        return w

    def assertExitsCleanly(self, w):
        self.assertIsNone(w.proc.poll(), "waitroomd died; stderr:\n" + w.stderr_tail())
        self.assertEqual(w.terminate(), 0, "exit code on SIGTERM (ASan report?); stderr:\n"
                         + w.stderr_tail())

    def assert503(self, r, what):
        self.assertError(r, 503, "STORE_UNAVAILABLE", what)
        ra = r.headers.get("retry-after", "")
        self.assertTrue(ra.isdigit() and int(ra) >= 1, "%s: Retry-After %r" % (what, ra))


def spawn(testcase, args, wrapper=()):
    """Starts waitroomd (args after --listen) without waiting for readiness
    (the store may be unreachable on purpose); returns (process, port, path
    of its stderr). Stopped at the test's cleanup."""
    errpath = os.path.join(ENV.tmpdir, "spawn-%s.log" % uid())
    with open(errpath, "wb") as err:
        proc = subprocess.Popen(list(wrapper) + [ENV.waitroomd, "--listen", "127.0.0.1:0"]
                                + list(args), stdout=subprocess.PIPE, stderr=err,
                                start_new_session=True)
    PROCS.append(proc)
    testcase.addCleanup(proc.stdout.close)
    testcase.addCleanup(stop_process, proc)
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("listening on 127.0.0.1:"):
        with open(errpath) as f:
            testcase.fail("no 'listening on' (%r); stderr:\n%s" % (line, f.read()))
    return proc, int(line.rsplit(":", 1)[1]), errpath


def wait_in_file(testcase, path, needle, what, timeout=10):
    """Waits until the text of path (a spawned server's stderr) holds
    needle. Log lines go through the log's writer thread, which may write
    them after "listening on" reached stdout; returns the text."""
    def text():
        with open(path, errors="replace") as f:
            return f.read()
    return testcase.poll_until(text, lambda t: needle in t, timeout=timeout, what=what)


def make_certs(d):
    """A CA, a server certificate for 127.0.0.1 / localhost, a client
    certificate, and a second (untrusted) CA, all with openssl."""
    def run(*a):
        subprocess.run(["openssl"] + list(a), cwd=d, check=True, capture_output=True)
    for ca in ("ca", "other-ca"):
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=" + ca,
            "-keyout", ca + ".key", "-out", ca + ".pem")
    with open(os.path.join(d, "san.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, ca in (("server", "ca"), ("client", "ca")):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name, "-keyout",
            name + ".key", "-out", name + ".csr")
        run("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.cnf", "-out", name + ".pem")
    return {k: os.path.join(d, k) for k in ("ca.pem", "other-ca.pem", "server.pem", "server.key",
                                            "client.pem", "client.key")}


def private_server(test, **kw):
    """A waitroomd of its own on the suite's store (Waitroomd's keyword
    arguments: identity, extra, env, log_level...), killed at the test's
    cleanup: stopping or signalling it never touches the shared servers."""
    w = Waitroomd(ENV.waitroomd, ENV.store_arg, ENV.secret, ENV.tmpdir, **kw)
    test.addCleanup(w.kill)
    return w


def memory_server(test, data, extra=(), **kw):
    """A header-mode waitroomd on the memory store with --data-dir data (its
    snapshot) and the arguments extra, killed at the test's cleanup; started
    again on the same data, it restarts from the snapshot."""
    w = Waitroomd(ENV.waitroomd, "memory", ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                  extra=["--data-dir", data] + list(extra), **kw)
    test.addCleanup(w.kill)
    return w


def exchange(port, data, timeout=5.0):
    """Sends raw bytes on a new connection to 127.0.0.1:port and returns all
    that came back (decoded, errors replaced) until the server closed it or
    timeout seconds passed."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunk = s.recv(65536)
        if not chunk:
            break
        out += chunk
    s.close()
    return out.decode(errors="replace")


# ---- A private Redis Cluster (the redis-cluster suite, test_cluster*.py) ----

def free_cluster_port():
    """A free port whose cluster bus port (+10000) is free too."""
    for _ in range(100):
        p = free_port()
        if p + 10000 > 65535:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", p + 10000))
            except OSError:
                continue
        return p
    raise RuntimeError("no free port pair for a cluster node")


class RedisCluster:
    """A private Redis Cluster on loopback: `primaries` primaries with
    `replicas` replicas each (redis-cli --cluster create), node timeout
    1 s, full coverage not required (queues on live shards keep working).
    extra: more redis-server arguments for every node (e.g. requirepass).
    tls: {"ca": PEM, "cert": PEM, "key": PEM}: each node also listens with
    TLS on n.tls_port and the cluster speaks TLS (tls-cluster: CLUSTER SLOTS
    and MOVED name the TLS ports); the plain port stays for the helpers."""

    def __init__(self, tmpdir, primaries=3, replicas=1, extra=(), password=None, tls=None):
        self.password = password
        auth = ["--requirepass", password, "--masterauth", password] if password else []
        self.tmpdir, self.extra = tmpdir, list(extra)
        self.node_args = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                          "--cluster-node-timeout", "1000",
                          "--cluster-require-full-coverage", "no",
                          "--appendonly", "yes", "--appendfsync", "no"] + auth + list(extra)
        self.nodes = []
        tls_cli = ["--tls", "--cacert", tls["ca"], "--cert", tls["cert"], "--key", tls["key"]] \
            if tls else []
        try:
            for _ in range(primaries * (1 + replicas)):
                if tls:  # the cluster bus is at the TLS port + 10000
                    tport = free_cluster_port()
                    n = RedisServer(tmpdir, port=free_port(), password=password,
                                    extra=self.node_args + [
                                        "--tls-port", str(tport), "--tls-cluster", "yes",
                                        "--tls-replication", "yes", "--tls-cert-file", tls["cert"],
                                        "--tls-key-file", tls["key"], "--tls-ca-cert-file",
                                        tls["ca"], "--tls-auth-clients", "optional"])
                    n.tls_port = tport
                else:
                    n = RedisServer(tmpdir, port=free_cluster_port(), extra=self.node_args,
                                    password=password)
                self.nodes.append(n)
            cmd = ["redis-cli"] + (["-a", password, "--no-auth-warning"] if password else []) + \
                tls_cli + ["--cluster", "create"] + \
                ["127.0.0.1:%d" % (n.tls_port if tls else n.port) for n in self.nodes] + \
                ["--cluster-replicas", str(replicas), "--cluster-yes"]
            out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 timeout=60)
            if out.returncode != 0:
                raise RuntimeError("redis-cli --cluster create: %s" % out.stdout[-2000:])
            self.wait_ok()
        except Exception:
            self.stop()
            raise

    def url(self, scheme="redis-cluster", creds=""):
        return "%s://%s127.0.0.1:%d,127.0.0.1:%d" % (scheme, creds, self.nodes[0].port,
                                                     self.nodes[1].port)

    def client(self, port):
        r = Redis(port)
        if self.password:
            r.cmd("AUTH", self.password)
        return r

    def cmd(self, port, *args):
        r = self.client(port)
        try:
            return r.cmd(*args)
        finally:
            r.close()

    def alive(self):
        return [n for n in self.nodes if n.proc.poll() is None]

    def wait_ok(self, timeout=30):
        """Every live node says cluster_state:ok and agrees on the primaries."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                states = [self.cmd(n.port, "CLUSTER", "INFO") for n in self.alive()]
                repl = [self.cmd(n.port, "INFO", "replication") for n in self.alive()]
                # and every replica in sync with its primary (WAIT needs it)
                if all("cluster_state:ok" in s for s in states) and \
                        all("role:master" in r or "master_link_status:up" in r for r in repl):
                    return
            except (OSError, RedisError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not reach cluster_state:ok")
            time.sleep(0.1)

    def nodes_table(self, port=None):
        """CLUSTER NODES of a live node: [(id, port, flags, master_id, slots)]."""
        port = port or self.alive()[0].port
        rows = []
        for line in self.cmd(port, "CLUSTER", "NODES").splitlines():
            f = line.split()
            rows.append((f[0], int(f[1].split("@")[0].rsplit(":", 1)[1]), f[2], f[3], f[8:]))
        return rows

    def owner(self, key):
        """The port of the primary that owns key's slot."""
        slot = self.cmd(self.alive()[0].port, "CLUSTER", "KEYSLOT", key)
        for s in self.cmd(self.alive()[0].port, "CLUSTER", "SLOTS"):
            if s[0] <= slot <= s[1]:
                return s[2][1]
        return None

    def replicas_of(self, port):
        ids = {p: i for i, p, _, _, _ in self.nodes_table()}
        return [p for i, p, flags, master, _ in self.nodes_table()
                if "slave" in flags and master == ids[port] and "fail" not in flags]

    def replica_of(self, port):
        r = self.replicas_of(port)
        return r[0] if r else None

    def primary_ports(self):
        return sorted(p for _, p, flags, _, _ in self.nodes_table()
                      if "master" in flags and "fail" not in flags)

    def node(self, port):
        return next(n for n in self.nodes if n.port == port)

    def restart(self, port):
        """Starts the killed node of port again on its data directory (its
        nodes.conf: it rejoins the cluster with its slots)."""
        old = self.node(port)
        n = RedisServer(self.tmpdir, port=port, extra=self.node_args, datadir=old.dir,
                        password=self.password)
        self.nodes[self.nodes.index(old)] = n
        return n

    def ids(self):
        """{port: node id} of the nodes a live node knows."""
        return {p: i for i, p, _, _, _ in self.nodes_table()}

    def add_node(self, timeout=30):
        """Starts one more node (the cluster's arguments), joins it to the
        cluster as a primary without slots (CLUSTER MEET) and waits until
        every live node knows it. Returns its port."""
        n = RedisServer(self.tmpdir, port=free_cluster_port(), extra=self.node_args,
                        password=self.password)
        self.nodes.append(n)
        self.cmd(n.port, "CLUSTER", "MEET", "127.0.0.1", self.nodes[0].port)
        deadline = time.monotonic() + timeout
        while not all(n.port in self.ids_of(m.port) for m in self.alive()):
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not learn node %d" % n.port)
            time.sleep(0.1)
        self.wait_ok(timeout)
        return n.port

    def ids_of(self, port):
        try:
            return {p for _, p, _, _, _ in self.nodes_table(port)}
        except (OSError, RedisError):
            return set()

    def migrate_slot(self, slot, src, dst):
        """Moves slot from primary src to primary dst as redis-cli --cluster
        reshard does: IMPORTING on dst, MIGRATING on src, MIGRATE every key,
        then SETSLOT NODE on every live node."""
        ids = self.ids()
        self.cmd(dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])
        self.cmd(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst])
        self.migrate_keys(slot, src, dst)
        self.assign_slot(slot, dst)

    def migrate_keys(self, slot, src, dst):
        """MIGRATEs every key of slot from src to dst (the slot MIGRATING)."""
        auth = ["AUTH", self.password] if self.password else []
        while True:
            keys = self.cmd(src, "CLUSTER", "GETKEYSINSLOT", slot, 100)
            if not keys:
                return
            self.cmd(src, "MIGRATE", "127.0.0.1", dst, "", 0, 5000, *(auth + ["KEYS"] + keys))

    def assign_slot(self, slot, dst):
        """CLUSTER SETSLOT slot NODE dst on every live primary (dst first)."""
        ids = self.ids()
        for p in [dst] + [p for p in self.primary_ports() if p != dst]:
            try:
                self.cmd(p, "CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
            except RedisError as e:  # a primary that gave up its last slot is a replica now
                if p == dst or "only with masters" not in str(e):
                    raise

    def stop(self):
        for n in self.nodes:
            n.kill()


# ---- /metrics ----

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    samples, types = [], {}
    for ln in text.splitlines():
        if ln.startswith("# TYPE "):
            parts = ln.split()
            if len(parts) >= 4:
                types[parts[2]] = parts[3]
            continue
        if not ln or ln.startswith("#"):
            continue
        m = LINE.match(ln)
        if m:
            labels = dict(LABEL.findall(m.group(3) or ""))
            samples.append((m.group(1), labels, float(m.group(4))))
    return samples, types


def metrics(w):
    """{(name, labels-string): value} of a waitroomd's /metrics."""
    r = w.client.get("/metrics")
    out = {}
    for ln in r.body.splitlines():
        if not ln or ln.startswith("#"):
            continue
        m = LINE.match(ln)
        if m:
            out[(m.group(1), m.group(3) or "")] = float(m.group(4))
    return out


def plain_metric(client, name):
    """The value of an unlabelled series ("name 3"), None when /metrics has none."""
    m = re.search(r"^%s (\S+)$" % re.escape(name), client.get("/metrics").body, re.M)
    return float(m.group(1)) if m else None


def metric(client, name, labels):
    """The value of one series; 0 when the counter exists (its # TYPE line is
    there) but that series was never incremented. A missing family fails."""
    text = client.get("/metrics").body
    assert "# TYPE %s " % name in text, "no metric family %s in /metrics" % name
    for line in text.splitlines():
        if line.startswith(name + "{" + labels + "}"):
            return float(line.split()[-1])
    return 0.0


# ---- Cookies, invites, pages ----


def parse_set_cookie(value):
    """'wr_vid=V; Path=/; HttpOnly' -> ('wr_vid', 'V', {'path': '/', 'httponly': True})"""
    parts = [p.strip() for p in value.split(";")]
    name, _, val = parts[0].partition("=")
    attrs = {}
    for p in parts[1:]:
        k, eq, v = p.partition("=")
        attrs[k.strip().lower()] = v.strip() if eq else True
    return name.strip(), val.strip(), attrs


def vid_of(r):
    """The wr_vid value a response set."""
    for v in r.set_cookies:
        name, val, _ = parse_set_cookie(v)
        if name == "wr_vid":
            return val
    return None

KEY = "invite-key-" + "k" * 32


def invite(q, sub, key=KEY, ttl=3600, **extra):
    claims = {"sub": sub, "aud": q, "exp": int(time.time()) + ttl}
    claims.update(extra)
    return jwtutil.sign({"alg": "HS256", "typ": "JWT"}, claims, key.encode())


def bearer(tok, extra=None):
    h = {"Authorization": "Bearer " + tok}
    h.update(extra or {})
    return h


def set_cookies(r):
    """{name: (value, {attr: value or True})} of the response's Set-Cookie lines."""
    out = {}
    for line in r.set_cookies:
        name, val, attrs = parse_set_cookie(line)
        out[name] = (val, attrs)
    return out


def page_attr(r, name):
    m = re.search(r'\s%s="([^"]*)"' % re.escape(name), r.body)
    return html.unescape(m.group(1)) if m else None


# ---- The admission challenge (proof of work) ----

ALPHABET = re.compile(r"^[A-Za-z0-9._~-]{1,256}$")
BITS = 6


def zero_bits(digest):
    n = 0
    for b in digest:
        if b == 0:
            n += 8
            continue
        n += 8 - b.bit_length()
        break
    return n


def digest_bits(challenge, nonce):
    return zero_bits(hashlib.sha256((challenge + ":" + nonce).encode()).digest())


def solve(challenge, bits, start=0):
    i = start
    while digest_bits(challenge, "n%d" % i) < bits:
        i += 1
    return "n%d" % i


# ---- Concurrent requests; sampling the admission rate ----


def race(port, requests):
    """requests: list of (method, path, headers, body). Connects N sockets,
    releases them together, returns [(status, headers, json)] in order."""
    barrier = threading.Barrier(len(requests))
    out = [None] * len(requests)

    def run(i, method, path, headers, body):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
        try:
            conn.connect()
            data = None if body is None else json.dumps(body).encode()
            h = dict(headers)
            if data is not None:
                h["Content-Type"] = "application/json"
            barrier.wait(timeout=20)
            conn.request(method, path, body=data, headers=h)
            r = conn.getresponse()
            raw = r.read()
            try:
                js = json.loads(raw) if raw else None
            except ValueError:
                js = None
            out[i] = (r.status, {k.lower(): v for k, v in r.getheaders()}, js)
        except Exception as e:  # recorded; the test asserts on it
            out[i] = ("exception", {}, repr(e))
        finally:
            conn.close()

    threads = [threading.Thread(target=run, args=(i,) + tuple(req))
               for i, req in enumerate(requests)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out

RATE = 20.0
TICK_MS = 100
PER_TICK = RATE * TICK_MS / 1000.0  # 2


class Sampler:
    """Samples admittedTotal of a queue through the admin API."""

    def __init__(self, test, q, client):
        self.t, self.q, self.c = test, q, client
        self.samples = []  # (monotonic time the answer came, admittedTotal)
        self.sent = []     # monotonic time each sample's request was sent

    def sample(self):
        sent = time.monotonic()
        r = self.c.get_queue(self.q)
        self.t.assertEqual(r.status, 200, repr(r))
        v = (time.monotonic(), r.json["stats"]["admittedTotal"])
        self.samples.append(v)
        self.sent.append(sent)
        return v

    def run(self, seconds, interval):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.sample()
            time.sleep(interval)
        return self.sample()

    def check_no_burst(self, what):
        """No interval between two samples admits more than the rate allows
        for its length plus two ticks' worth plus one. The server read each
        count somewhere between its request's sending and its answer's
        coming, so two reads lie at most from the first request's sending
        to the second answer's coming apart: that is the interval (a test
        process paused on a loaded machine, an answer late, would otherwise
        make two reads 200 ms apart look 20 ms apart)."""
        for (s0, (_, a0)), (t1, a1) in zip(zip(self.sent, self.samples), self.samples[1:]):
            allowed = RATE * (t1 - s0) + 2 * PER_TICK + 1
            self.t.assertLessEqual(a1 - a0, allowed,
                                   "%s: %d admitted in %.0f ms (allowed %.1f)"
                                   % (what, a1 - a0, (t1 - s0) * 1000, allowed))
            self.t.assertGreaterEqual(a1, a0, "admittedTotal went down")

    def rate_between(self, start, end):
        """(admitted, seconds) between the first samples at/after start and end."""
        s0 = next(s for s in self.samples if s[0] >= start)
        s1 = [s for s in self.samples if s[0] <= end][-1]
        return s1[1] - s0[1], s1[0] - s0[0]

    def assert_rate(self, start, end, what, rate=RATE, rel=0.15):
        n, dt = self.rate_between(start, end)
        expected = rate * dt
        # rel tolerance plus one tick's worth of quantization at each end
        tol = rel * expected + 2 * PER_TICK
        self.t.assertLessEqual(abs(n - expected), tol,
                               "%s: %d admitted in %.2f s = %.1f/s, configured %.1f/s"
                               % (what, n, dt, n / dt if dt else 0, rate))
        return n / dt
