"""Production Redis (K18, K19, K25): AUTH with a password and an ACL user
(URL and WAITROOM_REDIS_PASSWORD), a wrong password, TLS (rediss:// with
--redis-ca, a client certificate, an untrusted certificate), Sentinel (a
failover under a join load with WAIT on, a wrong master name), a replica
answering READONLY, IPv6, the safe-settings check (allkeys-* eviction), and
ready-at-start (the first request after "listening on" succeeds).

Every test starts its own servers on loopback; all are Redis-only (skipped
with --store memory). No secret may reach stdout, stderr, /metrics or
--help.
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from harness import (stop_process, ENV, PROCS, WRTest, Client, RedisServer, Waitroomd, _die_with_parent,
                     free_port, uid)
from helpers import make_certs
from resp import Redis

PASSWORD = "pw-S3cret-7f1c"
ACL_PASSWORD = "acl-S3cret-92ab"
STORE_TIMEOUT_S = 0.25   # waitroomd's default --store-timeout-ms
MARGIN_S = 2.0           # scheduling margin on a loaded 2-core box


def wait_port(port, host="127.0.0.1", timeout=10.0):
    deadline = time.monotonic() + timeout
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    while time.monotonic() < deadline:
        try:
            with socket.socket(fam, socket.SOCK_STREAM) as s:
                s.settimeout(0.5)
                s.connect((host, port))
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nothing listens on %s:%d" % (host, port))


class Proc:
    """A redis-server (or sentinel) with any arguments; ready when its port
    accepts connections."""

    def __init__(self, tmpdir, args, port, host="127.0.0.1"):
        self.dir = tempfile.mkdtemp(prefix="redisprod-", dir=tmpdir)
        self.port = port
        self.logf = open(os.path.join(self.dir, "server.log"), "ab")
        self.proc = subprocess.Popen(args, stdout=self.logf, stderr=subprocess.STDOUT, cwd=self.dir,
                                     start_new_session=True, preexec_fn=_die_with_parent)
        PROCS.append(self.proc)
        try:
            wait_port(port, host)
        except RuntimeError:
            self.stop()
            raise

    def stop(self):
        stop_process(self.proc)
        self.logf.close()


def redis_args(port, *extra, bind="127.0.0.1"):
    return ["redis-server", "--port", str(port), "--bind", bind, "--save", "", "--appendonly",
            "no"] + list(extra)


class Raw:
    """waitroomd started without waiting for /readyz: the first stdout line
    is awaited (it must come even when Redis is down or refuses us)."""

    def __init__(self, tmpdir, store, extra=(), env=None, timeout=15.0):
        self.args = [ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", store, "--admin-key",
                     "test-admin-key", "--token-secret", ENV.secret, "--log-level", "info"] + \
            list(extra)
        fd, self.errpath = tempfile.mkstemp(prefix="waitroomd-", suffix=".log", dir=tmpdir)
        self.err = os.fdopen(fd, "wb")
        penv = dict(os.environ)
        penv.update(env or {})
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.err,
                                     start_new_session=True, preexec_fn=_die_with_parent,
                                     env=penv)
        PROCS.append(self.proc)
        self.lines = []
        got = threading.Event()

        def drain():
            for raw in self.proc.stdout:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                got.set()
            got.set()
        threading.Thread(target=drain, daemon=True).start()
        got.wait(timeout)
        self.started_s = time.monotonic() - self.t0
        self.port = None
        if self.lines and self.lines[0].startswith("listening on 127.0.0.1:"):
            self.port = int(self.lines[0].rsplit(":", 1)[1])
            self.client = Client(self.port, timeout=10)

    def stderr(self):
        if not self.err.closed:
            self.err.flush()
        with open(self.errpath, "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self):
        stop_process(self.proc)
        self.err.close()


class RedisProdTest(WRTest):
    def setUp(self):
        super().setUp()
        self.redis_only()

    def no_secret(self, secret, *texts):
        for t in texts:
            self.assertNotIn(secret, t)

    def assertLogged(self, read, pattern):
        """Waits until read() (a server's stderr) matches the regular
        expression pattern: log lines go through the log's writer thread,
        which may write one after the answer it explains. Returns the text."""
        return self.poll_until(read, lambda t: re.search(pattern, t), timeout=10,
                               what="a log line matching %r" % pattern)

    def wait_ready(self, client, want=200, timeout=15.0):
        deadline = time.monotonic() + timeout
        st = None
        while time.monotonic() < deadline:
            try:
                st = client.get("/readyz").status
                if st == want:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.fail("/readyz stayed %s, want %d" % (st, want))

    # ------------------------------------------------------------ AUTH (K18)
    def test_password_acl_user_and_env(self):
        port = free_port()
        srv = Proc(ENV.tmpdir, redis_args(port, "--requirepass", PASSWORD, "--user", "alice",
                                          "on", ">" + ACL_PASSWORD, "~*", "&*", "+@all"), port)
        self.addCleanup(srv.stop)
        forms = [
            ("redis://:%s@127.0.0.1:%d" % (PASSWORD, port), None, PASSWORD),
            ("redis://alice:%s@127.0.0.1:%d/0" % (ACL_PASSWORD, port), None, ACL_PASSWORD),
            ("redis://127.0.0.1:%d" % port, {"WAITROOM_REDIS_PASSWORD": PASSWORD}, PASSWORD),
            # the environment wins over the URL's (wrong) password
            ("redis://:wrong@127.0.0.1:%d" % port, {"WAITROOM_REDIS_PASSWORD": PASSWORD},
             PASSWORD),
        ]
        for url, env, secret in forms:
            w = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                          env=env)
            self.addCleanup(w.kill)
            q = self.new_queue({"admitPerSecond": 5}, client=w.client)
            r = w.client.join(q, uid())
            self.assertIn(r.status, (200, 201), repr(r))
            m = w.client.get("/metrics").body
            w.terminate()
            self.no_secret(secret, w.stderr_tail(100000), "\n".join(w.stdout_lines), m)
        h = subprocess.run([ENV.waitroomd, "--help"], capture_output=True, text=True,
                           env=dict(os.environ, WAITROOM_REDIS_PASSWORD=PASSWORD))
        self.no_secret(PASSWORD, h.stdout, h.stderr)

    def test_wrong_password_starts_503_and_recovers(self):
        port = free_port()
        srv = Proc(ENV.tmpdir, redis_args(port, "--requirepass", PASSWORD), port)
        self.addCleanup(srv.stop)
        bad = "not-the-Pw-4411"
        w = Raw(ENV.tmpdir, "redis://:%s@127.0.0.1:%d" % (bad, port))
        self.addCleanup(w.stop)
        self.assertIsNotNone(w.port, "no 'listening on'; stderr:\n" + w.stderr())
        self.assertEqual(w.client.get("/readyz").status, 503)
        err = self.assertLogged(w.stderr, "authentication failed")
        m = w.client.get("/metrics").body
        self.no_secret(bad, err, "\n".join(w.lines), m)
        # the operator fixes the password on the Redis side: waitroomd recovers
        r = Redis(port)
        r.cmd("AUTH", PASSWORD)
        r.cmd("CONFIG", "SET", "requirepass", bad)
        r.close()
        self.wait_ready(w.client)
        self.assertIsNone(w.proc.poll())
        w.stop()
        self.no_secret(bad, w.stderr())

    # ------------------------------------------------------------ TLS (K18)
    def test_tls(self):
        self.assertTrue(shutil.which("openssl"), "openssl is missing: scripts/deps.sh installs it")
        d = tempfile.mkdtemp(prefix="certs-", dir=ENV.tmpdir)
        c = make_certs(d)
        port = free_port()
        srv = Proc(ENV.tmpdir, ["redis-server", "--port", "0", "--tls-port", str(port), "--bind",
                                "127.0.0.1", "--save", "", "--tls-cert-file", c["server.pem"],
                                "--tls-key-file", c["server.key"], "--tls-ca-cert-file",
                                c["ca.pem"], "--tls-auth-clients", "optional"], port)
        self.addCleanup(srv.stop)
        url = "rediss://127.0.0.1:%d" % port
        for extra in (["--redis-ca", c["ca.pem"]],
                      ["--redis-ca", c["ca.pem"], "--redis-cert", c["client.pem"],
                       "--redis-key", c["client.key"]]):
            w = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                          extra=extra)
            self.addCleanup(w.kill)
            q = self.new_queue({"admitPerSecond": 5}, client=w.client)
            self.assertIn(w.client.join(q, uid()).status, (200, 201))
            self.assertEqual(w.terminate(), 0)
        # a certificate from a CA we do not trust: starts, says why, 503
        w = Raw(ENV.tmpdir, url, ["--redis-ca", c["other-ca.pem"]])
        self.addCleanup(w.stop)
        self.assertIsNotNone(w.port, "no 'listening on'; stderr:\n" + w.stderr())
        self.assertEqual(w.client.get("/readyz").status, 503)
        self.assertLogged(w.stderr, r"(?i)certificate")
        self.assertIsNone(w.proc.poll())
        # a missing CA file: refuses to start, naming it
        bad = subprocess.run([ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", url,
                              "--redis-ca", os.path.join(d, "nope.pem")],
                             capture_output=True, text=True, timeout=10)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("nope.pem", bad.stderr)

    # ------------------------------------------------------------ safety check
    def test_eviction_policy_refused_unless_allowed(self):
        port = free_port()
        srv = Proc(ENV.tmpdir, redis_args(port, "--maxmemory-policy", "allkeys-lru"), port)
        self.addCleanup(srv.stop)
        url = "redis://127.0.0.1:%d" % port
        p = subprocess.run([ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", url],
                           capture_output=True, text=True, timeout=20)
        self.assertNotEqual(p.returncode, 0)
        self.assertNotIn("listening on", p.stdout)
        self.assertIn("maxmemory-policy allkeys-lru", p.stderr)
        self.assertIn("--redis-allow-eviction", p.stderr)
        w = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                      extra=["--redis-allow-eviction"])
        self.addCleanup(w.kill)
        self.assertEqual(w.terminate(), 0)

    # ------------------------------------------------------------ READONLY
    def test_replica_readonly_then_promoted(self):
        primary = RedisServer(ENV.tmpdir)
        self.addCleanup(primary.stop)
        replica = RedisServer(ENV.tmpdir, extra=["--replicaof", "127.0.0.1", str(primary.port)])
        self.addCleanup(replica.stop)
        w = Raw(ENV.tmpdir, "redis://127.0.0.1:%d" % replica.port)
        self.addCleanup(w.stop)
        self.assertIsNotNone(w.port, "no 'listening on'; stderr:\n" + w.stderr())
        self.assertEqual(w.client.get("/readyz").status, 503)
        self.assertLogged(w.stderr, "not the primary")
        rc = replica.client()
        self.addCleanup(rc.close)
        rc.cmd("REPLICAOF", "NO", "ONE")
        self.wait_ready(w.client)
        # demoted again while connected: a write answers READONLY, which
        # drops the connection; the ROLE check then keeps it out (503)
        rc.cmd("REPLICAOF", "127.0.0.1", str(primary.port))
        h = {"Authorization": "Bearer test-admin-key"}
        r = w.client.request("PUT", "/v1/admin/queues/ro-" + uid(), h, {"admitPerSecond": 1})
        self.assertGreaterEqual(r.status, 500, repr(r))
        self.wait_ready(w.client, want=503)
        self.assertLogged(w.stderr, "READONLY")
        self.assertIsNone(w.proc.poll())

    # ------------------------------------------------------------ Sentinel (K19)
    def sentinel(self, master_port):
        port = free_port()
        d = tempfile.mkdtemp(prefix="sentinel-", dir=ENV.tmpdir)
        conf = os.path.join(d, "sentinel.conf")
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\n"
                    "sentinel monitor mymaster 127.0.0.1 %d 1\n"
                    "sentinel down-after-milliseconds mymaster 1000\n"
                    "sentinel failover-timeout mymaster 10000\n" % (port, d, master_port))
        exe = shutil.which("redis-sentinel")
        args = [exe, conf] if exe else ["redis-server", conf, "--sentinel"]
        s = Proc(ENV.tmpdir, args, port)
        self.addCleanup(s.stop)
        return s

    def test_sentinel_wrong_master_name(self):
        primary = RedisServer(ENV.tmpdir)
        self.addCleanup(primary.stop)
        s = self.sentinel(primary.port)
        w = Raw(ENV.tmpdir, "redis-sentinel://127.0.0.1:%d/nosuchmaster" % s.port)
        self.addCleanup(w.stop)
        self.assertIsNotNone(w.port, "no 'listening on'; stderr:\n" + w.stderr())
        self.assertLess(w.started_s, 10)
        t0 = time.monotonic()
        self.assertEqual(w.client.get("/readyz").status, 503)
        self.assertLess(time.monotonic() - t0, STORE_TIMEOUT_S + MARGIN_S)
        self.assertLogged(w.stderr, "no sentinel named a primary for master nosuchmaster")

    def test_sentinel_failover_under_load(self):
        primary = RedisServer(ENV.tmpdir)
        self.addCleanup(primary.stop)
        # the production shape (docs/RELIABILITY.md): two replicas, so the one
        # not promoted serves WAIT 1 for the new primary at once
        replica = RedisServer(ENV.tmpdir, extra=["--replicaof", "127.0.0.1", str(primary.port),
                                                 "--replica-priority", "10"])
        self.addCleanup(replica.stop)
        replica2 = RedisServer(ENV.tmpdir, extra=["--replicaof", "127.0.0.1", str(primary.port),
                                                  "--replica-priority", "100"])
        self.addCleanup(replica2.stop)
        pc = primary.client()
        self.addCleanup(pc.close)
        self.poll_until(lambda: pc.cmd("INFO", "replication"),
                        lambda x: "connected_slaves:2" in x and x.count("state=online") == 2,
                        timeout=15, what="replicas online")
        s = self.sentinel(primary.port)
        sc = Redis(s.port)
        self.addCleanup(sc.close)
        self.poll_until(lambda: sc.cmd("SENTINEL", "replicas", "mymaster"),
                        lambda x: len(x) == 2, timeout=20, what="sentinel sees the replicas")
        url = "redis-sentinel://127.0.0.1:%d/mymaster" % s.port
        w = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                      extra=["--redis-wait-replicas", "1", "--redis-wait-timeout-ms", "200",
                             "--log-level", "info"])
        self.addCleanup(w.kill)
        rate = 20
        q = self.new_queue({"admitPerSecond": rate, "tickMs": 100}, client=w.client)
        joined, results, stop = [], [], threading.Event()

        def load():
            cl = Client(w.port, timeout=30)
            while not stop.is_set():
                u = uid()
                t0 = time.monotonic()
                body = {}
                try:
                    r = cl.join(q, u)
                    st, body = r.status, (r.json or {}) if r.status == 200 else {}
                except OSError:
                    st = -1
                t1 = time.monotonic()
                # the default failPolicy "limited" answers the switch in
                # degraded mode (API 1.1): a fail-open pass or a waiting
                # answer without a place; only a join the store took counts
                in_store = st in (200, 201) and not body.get("failOpen") and \
                    not body.get("degraded")
                results.append((t0, t1, st if in_store or st not in (200, 201) else 299))
                if in_store:
                    joined.append(u)
                time.sleep(0.01)
        th = threading.Thread(target=load, daemon=True)
        th.start()
        time.sleep(1.0)
        t_fail = time.monotonic()
        sc.cmd("SENTINEL", "FAILOVER", "mymaster")
        # the replica becomes the primary; waitroomd follows
        self.poll_until(lambda: sc.cmd("SENTINEL", "get-master-addr-by-name", "mymaster"),
                        lambda a: a and int(a[1]) == replica.port, timeout=30,
                        what="sentinel names the new primary")

        def flags():
            m = sc.cmd("SENTINEL", "master", "mymaster")
            return dict(zip(m[0::2], m[1::2])).get("flags", "")
        # +switch-master comes at the end of the failover, once the other
        # replica follows the new primary (until then the old primary still
        # takes writes, which WAIT reports unreplicated: joins answer 503)
        self.poll_until(flags, lambda f: "failover_in_progress" not in f, timeout=40,
                        what="failover over (+switch-master)")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ok_after = [r for r in results if r[0] > t_fail and r[2] in (200, 201)]
            if ok_after and ok_after[-1][0] > time.monotonic() - 0.5 and \
                    w.client.get("/readyz").status == 200:
                break
            time.sleep(0.1)
        time.sleep(1.0)
        stop.set()
        th.join(30)
        failed = [r for r in results if r[2] not in (200, 201)]
        degraded = (max(r[1] for r in failed) - min(r[0] for r in failed)) if failed else 0.0
        print("\n[sentinel failover] %d joins, %d answered non-2xx, degraded service %.2f s"
              % (len(results), len(failed), degraded), flush=True)
        slowest = max(r[1] - r[0] for r in results)
        self.assertLess(slowest, STORE_TIMEOUT_S + 0.2 + MARGIN_S, "a join hung")
        # 299: a degraded-mode 200 (fail-open pass, or waiting without a place)
        self.assertTrue(all(r[2] in (200, 201, 299, 503) for r in results),
                        sorted({r[2] for r in results}))
        self.assertLess(degraded, 30)
        # no joined user lost: each is still in line (or admitted) on the new primary
        cl = Client(w.port)
        lost = [u for u in joined if cl.me(q, u).status == 404]
        self.assertEqual(lost, [], "%d of %d joined users lost" % (len(lost), len(joined)))
        # admission resumes at the configured rate
        late = [cl.join(q, uid()).status for i in range(3 * rate)]   # a line for 3 s
        print("[sentinel failover] joins after the switch: %r" % sorted(set(late)), flush=True)
        self.assertGreaterEqual(late.count(200) + late.count(201), 2 * rate, late)
        a0 = self.stats(q, client=w.client)
        time.sleep(2.0)
        a1 = self.stats(q, client=w.client)
        print("[sentinel failover] admitted after: %r -> %r" % (a0, a1), flush=True)
        self.assertGreaterEqual(a1["admittedTotal"] - a0["admittedTotal"], rate)  # 2 s x 20/s
        self.assertLogged(lambda: w.stderr_tail(100000), "mymaster")

    # ------------------------------------------------------------ IPv6 (K19)
    def test_ipv6(self):
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
                s.bind(("::1", 0))
        except OSError:
            self.skipTest("no IPv6 loopback (::1) on this machine")
        port = free_port()
        srv = Proc(ENV.tmpdir, redis_args(port, bind="::1"), port, host="::1")
        self.addCleanup(srv.stop)
        w = Waitroomd(ENV.waitroomd, "redis://[::1]:%d" % port, ENV.secret, ENV.tmpdir,
                      identity="header:X-User-Id")
        self.addCleanup(w.kill)
        q = self.new_queue({"admitPerSecond": 5}, client=w.client)
        self.assertIn(w.client.join(q, uid()).status, (200, 201))
        self.assertEqual(w.terminate(), 0)

    # ------------------------------------------------------------ ready at start (K25)
    def test_first_request_after_listening_succeeds(self):
        srv = RedisServer(ENV.tmpdir)
        self.addCleanup(srv.stop)
        url = "redis://127.0.0.1:%d" % srv.port
        w0 = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id")
        self.addCleanup(w0.kill)
        q = self.new_queue({"admitPerSecond": 5}, client=w0.client)
        for i in range(20):
            w = Raw(ENV.tmpdir, url, ["--identity", "header:X-User-Id", "--log-level", "warn"])
            try:
                self.assertIsNotNone(w.port, "no 'listening on'; stderr:\n" + w.stderr())
                r = w.client.join(q, uid())
                self.assertIn(r.status, (200, 201), "start %d: %r\n%s" % (i, r, w.stderr()))
            finally:
                w.stop()

    def test_redis_down_at_start(self):
        port = free_port()   # nothing listens there
        w = Raw(ENV.tmpdir, "redis://127.0.0.1:%d" % port)
        self.addCleanup(w.stop)
        self.assertIsNotNone(w.port, "no 'listening on'; stderr:\n" + w.stderr())
        self.assertLess(w.started_s, 10)
        self.assertEqual(w.client.get("/readyz").status, 503)
        srv = RedisServer(ENV.tmpdir, port=port)
        self.addCleanup(srv.stop)
        self.wait_ready(w.client)
