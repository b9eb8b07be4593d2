"""Process management, an HTTP client and a base TestCase for the
integration suite (Python 3.11 standard library only).

run.py fills ENV (the servers under test) before loading the test modules.
Every child process is registered in PROCS and killed at exit (atexit and
run.py's finally), even when tests fail.
"""
import atexit
import http.client
import json
import math
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse

from resp import Redis, RedisError

ADMIN_KEY = "test-admin-key"
ADMIN = {"Authorization": "Bearer " + ADMIN_KEY}
REQUEST_TIMEOUT = 15.0
# under a wrapper (valgrind) everything is slower
STARTUP_SLOWDOWN = 4 if os.environ.get("WR_WAITROOMD_WRAPPER") else 1

PROCS = []  # every child process we started


try:
    import ctypes
    _PRCTL = ctypes.CDLL("libc.so.6", use_errno=True).prctl
except Exception:  # not Linux/glibc: rely on atexit and run.py's finally
    _PRCTL = None


def _die_with_parent():
    """preexec_fn: the child gets SIGKILL when the runner dies, however it
    dies (Linux prctl PR_SET_PDEATHSIG = 1), so no process is left behind."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL, 0, 0, 0)


def kill_all():
    for p in PROCS:
        if p.poll() is None:
            try:
                p.kill()
                p.wait(timeout=5)
            except Exception:
                pass


atexit.register(kill_all)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



def stop_process(proc, timeout=10):
    """SIGTERM, then SIGKILL after `timeout` s; waits for the exit either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

class Env:
    """What run.py started: shared by every test."""
    waitroomd = None      # path of the binary
    store = None          # "redis" | "memory" | "redis-cluster"
    cluster = None        # redis-cluster only: the RedisCluster
    store_arg = None      # value passed to --store
    secret = None         # --token-secret value (64 hex chars)
    redis_port = None     # redis only
    main = None           # header-mode server (X-User-Id)
    cookie = None         # cookie-mode server
    tmpdir = None


ENV = Env()


class RedisServer:
    def __init__(self, tmpdir, port=None, extra=(), datadir=None, start_timeout=10,
                 password=None):
        """extra: more redis-server arguments (e.g. "--appendonly", "yes");
        datadir: reuse a data directory (a restart that keeps its AOF);
        start_timeout: seconds to wait for PING (loading a large AOF)."""
        self.port = port or free_port()
        self.dir = datadir or tempfile.mkdtemp(prefix="redis-", dir=tmpdir)
        self.log = open(os.path.join(self.dir, "redis.log"), "ab")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--enable-debug-command", "local"] + list(extra),
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_die_with_parent)
        PROCS.append(self.proc)
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                r = Redis(self.port, timeout=1)
                try:
                    if password:
                        r.cmd("AUTH", password)
                    ok = r.cmd("PING") == "PONG"
                finally:
                    r.close()
                if ok:
                    return
            except (OSError, RedisError):  # not up yet, or LOADING its AOF
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start on port %d" % self.port)
            time.sleep(0.05)

    def client(self):
        return Redis(self.port)

    def kill(self):
        """SIGKILL (a crash: no shutdown save) and wait."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def stop(self):
        stop_process(self.proc)
        self.log.close()


class Waitroomd:
    """One waitroomd process. `identity` None = cookie mode (the default)."""

    def __init__(self, binary, store_arg, secret, tmpdir, identity=None, extra=(), env=None,
                 admin_key=ADMIN_KEY, log_level="warn"):
        # WR_WAITROOMD_WRAPPER (e.g. "valgrind --error-exitcode=1 ..."): a
        # command every waitroomd runs under (scripts/valgrind.sh)
        wrapper = os.environ.get("WR_WAITROOMD_WRAPPER", "").split()
        self.args = wrapper + [binary, "--listen", "127.0.0.1:0", "--store", store_arg,
                               "--admin-key", admin_key]
        if log_level is not None:  # None: the config file's (or the default, info)
            self.args += ["--log-level", log_level]
        if secret is not None:   # None: the shared secret kept in the store
            self.args += ["--token-secret", secret]
        if identity:
            self.args += ["--identity", identity]
        self.args += list(extra)
        fd, self.errpath = tempfile.mkstemp(prefix="waitroomd-", suffix=".log", dir=tmpdir)
        self.err = os.fdopen(fd, "wb")
        penv = None
        if env:
            penv = dict(os.environ)
            penv.update(env)
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.err,
                                     start_new_session=True, preexec_fn=_die_with_parent,
                                     env=penv)
        PROCS.append(self.proc)
        self.stdout_lines = []
        first = []
        got = threading.Event()

        def drain():  # keeps the pipe from filling; the first line is the address
            for raw in self.proc.stdout:
                line = raw.decode(errors="replace").rstrip("\n")
                if not got.is_set():
                    first.append(line)
                    got.set()
                self.stdout_lines.append(line)
                del self.stdout_lines[:-200]
            got.set()

        threading.Thread(target=drain, daemon=True).start()
        if not got.wait(15 * STARTUP_SLOWDOWN) or not first:
            self.kill()
            raise RuntimeError("waitroomd printed no first line (args %s); stderr:\n%s"
                               % (self.args, self.stderr_tail()))
        line = first[0]
        prefix = "listening on 127.0.0.1:"
        if not line.startswith(prefix) or not line[len(prefix):].isdigit():
            self.kill()
            raise RuntimeError("unexpected first stdout line %r; stderr:\n%s"
                               % (line, self.stderr_tail()))
        self.port = int(line[len(prefix):])
        self.client = Client(self.port)
        deadline = time.monotonic() + 10 * STARTUP_SLOWDOWN
        while True:  # ready = the store answers
            try:
                if self.client.get("/readyz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("waitroomd /readyz never 200; stderr:\n" + self.stderr_tail())
            time.sleep(0.05)
        while True:  # user routes answer once the token secret is loaded (not 503)
            try:
                st = self.client.join("startup-probe", "probe").status
                if st != 503:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("waitroomd user routes still 503; stderr:\n"
                                   + self.stderr_tail())
            time.sleep(0.05)

    def stderr_tail(self, n=4000):
        try:
            self.err.flush()
            with open(self.errpath, "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def terminate(self, timeout=15):
        """SIGTERM and wait; returns the exit code (None if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --------------------------------------------------------------------------
# HTTP


class Response:
    """(status, headers, json, body); headers are lowercased, set_cookies is
    the list of every Set-Cookie value."""

    def __init__(self, status, headers, body, set_cookies):
        self.status = status
        self.headers = headers
        self.body = body
        self.set_cookies = set_cookies
        self.json = None
        if body:
            try:
                self.json = json.loads(body)
            except ValueError:
                self.json = None

    def __iter__(self):
        return iter((self.status, self.headers, self.json, self.body))

    def __getitem__(self, i):
        return (self.status, self.headers, self.json, self.body)[i]

    def __repr__(self):
        return "<%d %s %r>" % (self.status, self.headers, self.body[:300])


def _encode_body(body):
    if body is None:
        return None
    if isinstance(body, (bytes, str)):
        return body.encode() if isinstance(body, str) else body
    return json.dumps(body).encode()


class Client:
    """One connection per request (simple and independent of keep-alive)."""

    def __init__(self, port, host="127.0.0.1", timeout=REQUEST_TIMEOUT):
        self.host = host
        self.port = port
        self.timeout = timeout

    def request(self, method, path, headers=None, body=None):
        data = _encode_body(body)
        hdrs = dict(headers or {})
        if data is not None and not any(k.lower() == "content-type" for k in hdrs):
            hdrs["Content-Type"] = "application/json"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            r = conn.getresponse()
            raw = r.read()
            headers_l = {}
            cookies = []
            for k, v in r.getheaders():
                kl = k.lower()
                if kl == "set-cookie":
                    cookies.append(v)
                headers_l[kl] = v if kl not in headers_l else headers_l[kl] + ", " + v
            return Response(r.status, headers_l, raw.decode(errors="replace"), cookies)
        finally:
            conn.close()

    def get(self, path, headers=None):
        return self.request("GET", path, headers)

    # -- user routes (header mode: user is the X-User-Id value) ----------
    @staticmethod
    def uh(user, extra=None):
        h = {} if user is None else {"X-User-Id": user}
        h.update(extra or {})
        return h

    def join(self, q, user, headers=None):
        return self.request("POST", "/v1/queues/%s/entries" % q, self.uh(user, headers))

    def me(self, q, user, headers=None):
        return self.request("GET", "/v1/queues/%s/entries/me" % q, self.uh(user, headers))

    def leave(self, q, user, headers=None):
        return self.request("DELETE", "/v1/queues/%s/entries/me" % q, self.uh(user, headers))

    def _token_post(self, q, action, token, user, via, body):
        """POST tokens/{action}: the token as Bearer (+ body userId) or in the body."""
        headers = {}
        if via == "bearer" and token is not None:
            headers["Authorization"] = "Bearer " + token
            if user is not None:
                body = {"userId": user}
        elif via == "body":
            body = {}
            if token is not None:
                body["token"] = token
            if user is not None:
                body["userId"] = user
        return self.request("POST", "/v1/queues/%s/tokens/%s" % (q, action), headers, body)

    def consume(self, q, token=None, user=None, via="bearer", body=None):
        return self._token_post(q, "consume", token, user, via, body)

    def release(self, q, token=None, user=None, via="bearer"):
        """POST tokens/release (sessions): the token as on consume."""
        return self._token_post(q, "release", token, user, via, None)

    def verify(self, q, token=None, via="bearer"):
        headers = {}
        if token is not None:
            if via == "bearer":
                headers["Authorization"] = "Bearer " + token
            elif via == "header":
                headers["X-Waitroom-Token"] = token
            elif via == "cookie":
                headers["Cookie"] = "wr_token_%s=%s" % (q, token)
        return self.request("GET", "/v1/queues/%s/tokens/verify" % q, headers)

    # -- admin -----------------------------------------------------------
    def put_queue(self, q, cfg, key=ADMIN_KEY):
        return self.request("PUT", "/v1/admin/queues/" + q, {"Authorization": "Bearer " + key},
                            cfg)

    def patch_queue(self, q, fields, key=ADMIN_KEY):
        return self.request("PATCH", "/v1/admin/queues/" + q,
                            {"Authorization": "Bearer " + key}, fields)

    def get_queue(self, q, key=ADMIN_KEY):
        return self.request("GET", "/v1/admin/queues/" + q, {"Authorization": "Bearer " + key})

    def delete_queue(self, q, key=ADMIN_KEY):
        return self.request("DELETE", "/v1/admin/queues/" + q,
                            {"Authorization": "Bearer " + key})

    def list_queues(self, key=ADMIN_KEY):
        return self.request("GET", "/v1/admin/queues", {"Authorization": "Bearer " + key})


def parse_head(head):
    """Splits a raw HTTP response head (the bytes before the blank line)
    into its status line and its header fields, names lowercased:
    (status_line, {name: value})."""
    lines = head.decode(errors="replace").split("\r\n")
    hd = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hd[k.strip().lower()] = v.strip()
    return lines[0], hd


def open_fds(pid):
    """Open file descriptors of process pid, or -1 when it is gone."""
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


def raw_request(port, method, path, headers, body, chunked=False, timeout=10.0):
    """Sends a request on a raw socket and reads the answer even if the server
    closes (or resets) the connection while we are still sending: for 413.
    Returns Response, or None if no status line was received."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        head = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1:%d" % port]
        for k, v in headers.items():
            head.append("%s: %s" % (k, v))
        if chunked:
            head.append("Transfer-Encoding: chunked")
        else:
            head.append("Content-Length: %d" % len(body))
        data = ("\r\n".join(head) + "\r\n\r\n").encode()
        if chunked:
            step = 1000
            for i in range(0, len(body), step):
                part = body[i:i + step]
                data += b"%x\r\n%s\r\n" % (len(part), part)
            data += b"0\r\n\r\n"
        else:
            data += body
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may answer and close before reading everything
        buf = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            if b"\r\n\r\n" in buf:
                hdr, _, rest = buf.partition(b"\r\n\r\n")
                _, hd = parse_head(hdr)
                n = int(hd.get("content-length", "-1"))
                if n >= 0 and len(rest) >= n:
                    break
        if not buf.startswith(b"HTTP/1."):
            return None
        hdr, _, rest = buf.partition(b"\r\n\r\n")
        status_line, hd = parse_head(hdr)
        status = int(status_line.split()[1])
        n = int(hd.get("content-length", str(len(rest))))
        return Response(status, hd, rest[:n].decode(errors="replace"), [])
    finally:
        s.close()


# --------------------------------------------------------------------------
# Test base


def uid(prefix="u"):
    return prefix + secrets.token_hex(6)


def now_ms():
    return int(time.time() * 1000)


FAST = {"admitPerSecond": 1000, "tickMs": 50}        # admits within a tick or two
HOLD = {"admitPerSecond": 1000, "paused": True}      # nobody is admitted, ETA null
SLOW = {"admitPerSecond": 0.125}                     # first admission after ~8 s; eta = 8*pos

STATS_KEYS = {"waiting", "active", "admittedTotal", "consumedTotal", "expiredTotal",
              "leftTotal", "rejectedFullTotal", "admitRateObserved",
              "sessions", "releasedTotal", "sessionsExpiredTotal", "abandonedTotal",
              "prequeue", "away", "held", "returnedTotal", "stockLeft", "soldOutAt",
             "admitRateTarget", "unseenExpiredTotal", "bypassTotal",
             "groups",  # 1.3: per line ("Priority groups and presale codes")
             "subscribed"}  # 1.3: Web Push's live subscriptions (a push queue adds "push")


def admin_listener_client(srv, timeout=5):
    """The Client of srv's separate admin listener (--admin-listen
    127.0.0.1:0), from the "admin listening on" line it prints; None when
    none came within timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = next((ln for ln in srv.stdout_lines if ln.startswith("admin listening on ")), None)
        if line:
            return Client(int(line.rsplit(":", 1)[1]))
        time.sleep(0.02)
    return None


class WRTest(unittest.TestCase):
    """Base: self.c is the header-mode server's client."""

    maxDiff = 4000

    # The suite's server the class's tests talk to, by its ENV attribute:
    # "main" (header mode) or "cookie" (cookie mode).
    server = "main"

    def setUp(self):
        self.srv = getattr(ENV, self.server)
        self.c = self.srv.client

    def redis_only(self):
        if ENV.store != "redis":
            self.skipTest("redis only")

    def two_instances(self):
        """Two more header-mode waitroomd on the suite's store (Redis),
        killed after the test: (a, b)."""
        pair = []
        for _ in range(2):
            w = Waitroomd(ENV.waitroomd, ENV.store_arg, ENV.secret, ENV.tmpdir,
                          identity="header:X-User-Id")
            self.addCleanup(w.kill)
            pair.append(w)
        return tuple(pair)

    # -- queue lifecycle -------------------------------------------------
    def new_queue(self, cfg, client=None, prefix=None):
        client = client or self.c
        name = (prefix or self._testMethodName.replace("test_", "")[:30]) + "-" + \
            secrets.token_hex(5)
        name = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)[:64]
        r = client.put_queue(name, cfg)
        self.assertEqual(r.status, 200, "PUT %s %s -> %r" % (name, cfg, r))

        def cleanup():
            try:
                client.delete_queue(name)
            except Exception:
                pass
        self.addCleanup(cleanup)
        return name

    def stats(self, q, client=None):
        r = (client or self.c).get_queue(q)
        self.assertEqual(r.status, 200, repr(r))
        return r.json["stats"]

    def config(self, q, client=None):
        r = (client or self.c).get_queue(q)
        self.assertEqual(r.status, 200, repr(r))
        return r.json["config"]

    # -- assertions ------------------------------------------------------
    def assertJsonHeaders(self, r, what=""):
        ct = r.headers.get("content-type", "")
        self.assertEqual(ct.split(";")[0].strip().lower(), "application/json",
                         "%s Content-Type of %r" % (what, r))
        cc = [d.strip().lower() for d in r.headers.get("cache-control", "").split(",")]
        self.assertIn("no-store", cc, "%s Cache-Control of %r" % (what, r))

    def assertError(self, r, status, code, what=""):
        self.assertEqual(r.status, status, "%s: %r" % (what, r))
        self.assertJsonHeaders(r, what)
        self.assertIsInstance(r.json, dict, "%s: error body not JSON: %r" % (what, r))
        self.assertEqual(r.json.get("error"), code, "%s: %r" % (what, r))
        self.assertIsInstance(r.json.get("message"), str, "%s: no message: %r" % (what, r))
        self.assertTrue(r.json["message"], "%s: empty message" % what)

    def assertTokenRefused(self, r, reason=None, what=""):
        self.assertError(r, 403, "INVALID_TOKEN", what)
        if reason is not None:
            self.assertEqual(r.json.get("reason"), reason, "%s: reason of %r" % (what, r))

    def assertInviteRefused(self, r, reason, what=""):
        """403 INVITE_REQUIRED with reason (missing, malformed, signature...)."""
        self.assertError(r, 403, "INVITE_REQUIRED", what)
        self.assertEqual(r.json.get("reason"), reason, "%s: %r" % (what, r))

    def assertInt(self, v, what=""):
        self.assertTrue(type(v) is int, "%s: %r is not an integer" % (what, v))

    def assertWaiting(self, r, position, waiting=None, rate=None, eta_null=False, what=""):
        """A 200 waiting body with every field checked."""
        self.assertEqual(r.status, 200, "%s: %r" % (what, r))
        self.assertJsonHeaders(r, what)
        b = r.json
        self.assertEqual(b.get("status"), "waiting", "%s: %r" % (what, r))
        for k in ("position", "ahead", "waiting", "retryAfterMs"):
            self.assertIn(k, b, "%s: %r" % (what, r))
            self.assertInt(b[k], "%s %s" % (what, k))
        self.assertIn("etaSeconds", b, "%s: %r" % (what, r))
        self.assertEqual(b["position"], position, "%s: position in %r" % (what, r))
        self.assertEqual(b["ahead"], position - 1, "%s: ahead in %r" % (what, r))
        if waiting is not None:
            self.assertEqual(b["waiting"], waiting, "%s: waiting in %r" % (what, r))
        self.assertGreaterEqual(b["waiting"], b["position"], what)
        if eta_null:
            self.assertIsNone(b["etaSeconds"], "%s: etaSeconds while paused: %r" % (what, r))
        elif rate is not None:
            self.assertInt(b["etaSeconds"], what + " etaSeconds")
            self.assertEqual(b["etaSeconds"], math.ceil(position / rate),
                             "%s: etaSeconds = ceil(%d/%s) in %r" % (what, position, rate, r))
        self.assertGreaterEqual(b["retryAfterMs"], 250, what)
        return b

    def held_answer(self, r, what=""):
        """The held answer (API 1.2, "Away, not gone"): waiting, position
        1, ahead 0, held true."""
        self.assertEqual(r.status, 200, "%s: %r" % (what, r))
        b = r.json
        self.assertEqual((b.get("status"), b.get("position"), b.get("ahead"), b.get("held")),
                         ("waiting", 1, 0, True), "%s: %r" % (what, r))
        self.assertIn("waiting", b)
        self.assertIn("etaSeconds", b)
        self.assertGreaterEqual(b["retryAfterMs"], 250)
        return b

    def assertAdmitted(self, r, ttl=None, what=""):
        self.assertEqual(r.status, 200, "%s: %r" % (what, r))
        self.assertJsonHeaders(r, what)
        b = r.json
        self.assertEqual(b.get("status"), "admitted", "%s: %r" % (what, r))
        self.assertIsInstance(b.get("token"), str, what)
        self.assertEqual(b["token"].count("."), 2, what)
        self.assertInt(b.get("expiresAt"), what + " expiresAt")
        if ttl is not None:
            t = now_ms()
            # admitted at most a couple of seconds ago, at least now - ttl
            self.assertLessEqual(b["expiresAt"], t + ttl * 1000 + 1500,
                                 "%s: expiresAt too late in %r (now %d)" % (what, r, t))
            self.assertGreaterEqual(b["expiresAt"], t + ttl * 1000 - 4000,
                                    "%s: expiresAt too early in %r (now %d)" % (what, r, t))
        return b

    # -- flows -------------------------------------------------------------
    def wait_admitted(self, q, user, timeout=8.0, client=None, headers=None):
        """Polls entries/me every 50 ms until admitted; returns the body."""
        c = client or self.c
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = c.me(q, user, headers)
            if last.status == 200 and last.json and last.json.get("status") == "admitted":
                return last.json
            self.assertEqual(last.status, 200, "polling %s/%s: %r" % (q, user, last))
            time.sleep(0.05)
        self.fail("%s not admitted in %.1f s in %s; last %r" % (user, timeout, q, last))

    def join_ok(self, q, user, client=None):
        r = (client or self.c).join(q, user)
        self.assertEqual(r.status, 200, "join %s %s: %r" % (q, user, r))
        return r.json

    def admit(self, q, user, client=None, timeout=8.0):
        """Joins (into a FAST queue) and waits for the token; returns it."""
        self.join_ok(q, user, client)
        return self.wait_admitted(q, user, timeout, client)["token"]

    def poll_until(self, fn, pred, timeout=8.0, interval=0.05, what="condition"):
        deadline = time.monotonic() + timeout
        v = None
        while time.monotonic() < deadline:
            v = fn()
            if pred(v):
                return v
            time.sleep(interval)
        self.fail("%s not reached in %.1f s; last %r" % (what, timeout, v))

    def private_redis_instances(self):
        """Redis only: a private redis-server (stopped at cleanup) and a
        function that starts a header-mode waitroomd on it (killed at
        cleanup) each time it is called: for tests that SIGKILL their
        instance and start another. The function's `redis` is the server
        (for tests that stop it)."""
        self.redis_only()
        redis = RedisServer(ENV.tmpdir)
        self.addCleanup(redis.stop)

        def instance():
            w = Waitroomd(ENV.waitroomd, "redis://127.0.0.1:%d" % redis.port, ENV.secret,
                          ENV.tmpdir, identity="header:X-User-Id")
            self.addCleanup(w.kill)
            return w
        instance.redis = redis
        return instance

    def primary_and_replica(self):
        """A private primary and its replica (redis-server --replicaof),
        stopped at cleanup; returns (primary, replica) once the replica is
        online. Redis-only."""
        self.redis_only()
        primary = RedisServer(ENV.tmpdir)
        self.addCleanup(primary.stop)
        replica = RedisServer(ENV.tmpdir, extra=["--replicaof", "127.0.0.1", str(primary.port)])
        self.addCleanup(replica.stop)
        pc = primary.client()
        self.addCleanup(pc.close)
        self.poll_until(lambda: pc.cmd("INFO", "replication"),
                        lambda s: "connected_slaves:1" in s and "state=online" in s, timeout=15,
                        what="replica online")
        return primary, replica


def urlq(s):
    return urllib.parse.quote(s, safe="")
