"""Security (issue 6, case K08): connection and request limits under attack.

Each test starts its own waitroomd with short limits
(--request-timeout-seconds 2, --timeout-seconds 4, --max-conn-requests 5,
--max-connections as the test needs) and checks that
  - the attack gets an answer (408 / 431 / 413) or a clean close, never a
    crash or a reset before the answer;
  - normal status polls keep working while the attack runs (each within
    POLL_SLA seconds);
  - waitroomd's RSS (VmRSS from /proc) stays bounded;
  - the server is alive and exits 0 on SIGTERM afterwards.
"""
import errno
import json
import os
import socket
import sys
import threading
import time

from harness import ADMIN, ENV, HOLD, WRTest, Waitroomd, parse_head, uid
from helpers import private_server

POLL_SLA = 1.0  # seconds a normal poll may take during an attack


def rss_factor():
    """ASan keeps freed memory in quarantine, and valgrind's RSS includes its
    own shadow memory: RSS bounds are 4x under either."""
    if "valgrind" in os.environ.get("WR_WAITROOMD_WRAPPER", ""):
        return 4
    try:
        with open(ENV.waitroomd, "rb") as f:
            return 4 if b"__asan_init" in f.read() else 1
    except OSError:
        return 1


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def read_response(s, timeout=10.0):
    """Reads until EOF / timeout; returns (status or None, headers, body, how)
    where how is 'eof', 'timeout' or 'reset'."""
    s.settimeout(timeout)
    buf = b""
    how = "eof"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            how = "timeout"
            break
        except ConnectionResetError:
            how = "reset"
            break
        if not d:
            break
        buf += d
    if not buf.startswith(b"HTTP/1."):
        return None, {}, b"", how
    head, _, body = buf.partition(b"\r\n\r\n")
    status_line, hd = parse_head(head)
    return int(status_line.split()[1]), hd, body, how


class Limits(WRTest):

    def start(self, *extra):
        # ASan's quarantine keeps up to 256 MB of freed memory: an attack
        # whose input is read and discarded (a 10 MB body after its 413)
        # would show as RSS growth though nothing is kept; 8 MB keeps the
        # RSS bounds meaningful (ignored by a build without ASan)
        asan = os.environ.get("ASAN_OPTIONS", "")
        srv = Waitroomd(ENV.waitroomd, ENV.store_arg, ENV.secret, ENV.tmpdir,
                        identity="header:X-User-Id",
                        extra=("--request-timeout-seconds", "2", "--timeout-seconds", "4",
                               "--max-conn-requests", "5") + tuple(extra),
                        env={"ASAN_OPTIONS": (asan + ":" if asan else "") + "quarantine_size_mb=8"})
        self.addCleanup(srv.kill)
        self.srv2 = srv
        self.c2 = srv.client
        self.q = self.new_queue(HOLD, client=self.c2)
        self.user = uid()
        self.assertEqual(self.c2.join(self.q, self.user).status, 200)
        return srv

    def poll_ok(self, what):
        t0 = time.monotonic()
        r = self.c2.me(self.q, self.user)
        dt = time.monotonic() - t0
        self.assertWaiting(r, 1, what=what)
        self.assertLess(dt, POLL_SLA, "%s: a normal poll took %.2f s" % (what, dt))
        return dt

    def finish(self, srv, rss0, max_growth_kb, what):
        self.poll_ok(what + ": after")
        growth = rss_kb(srv.proc.pid) - rss0
        print("\n  %s: RSS %d KiB -> %+d KiB" % (what, rss0, growth), file=sys.stderr)
        self.assertLess(growth, max_growth_kb * rss_factor(),
                        "%s: RSS grew by %d KiB" % (what, growth))
        self.assertEqual(srv.terminate(), 0, what + ": exit code on SIGTERM\n" +
                         srv.stderr_tail())
        return growth

    def test_slowloris_headers_trickled_get_408(self):
        srv = self.start()
        rss0 = rss_kb(srv.proc.pid)
        n = 200
        socks = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        t0 = time.monotonic()
        # trickle one header line every 0.5 s on every connection; poll meanwhile
        polls = 0
        while time.monotonic() - t0 < 2.5:
            for s in socks:
                try:
                    s.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass
            self.poll_ok("during slowloris")
            polls += 1
            time.sleep(0.5)
        got = {}
        for s in socks:
            status, hd, body, how = read_response(s, timeout=5)
            got[status] = got.get(status, 0) + 1
            if status == 408:
                self.assertEqual(json.loads(body)["error"], "REQUEST_TIMEOUT")
                self.assertEqual(hd.get("content-type"), "application/json")
            s.close()
        elapsed = time.monotonic() - t0
        print("\n  slowloris: %d connections, all answered by %.2f s" % (n, elapsed),
              file=sys.stderr)
        self.assertEqual(got, {408: n}, "every trickling connection answered 408")
        # the deadline is 2 s after the first byte, swept every 100 ms
        self.assertLess(elapsed, 2 + 1.5 + 1, "408s came too late: %.1f s" % elapsed)
        self.assertGreaterEqual(polls, 4)
        self.finish(srv, rss0, 20 * 1024, "slowloris")

    def test_request_finished_after_its_408_is_not_served(self):
        """A leave trickled past the deadline gets its 408; its last bytes,
        arriving in the second before the connection is shut for reading,
        must not run the leave (an error never changes state)."""
        srv = self.start()
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(("DELETE /v1/queues/%s/entries/me HTTP/1.1\r\nHost: x\r\n"
                   "X-User-Id: %s\r\n" % (self.q, self.user)).encode())
        status, hd, body, how = read_response(s, timeout=5)
        self.assertEqual(status, 408)
        try:
            s.sendall(b"\r\n")   # the request is complete now, inside the grace second
        except OSError:
            pass
        time.sleep(0.5)
        s.close()
        self.poll_ok("the late leave was not served")
        self.assertEqual(self.stats(self.q, client=self.c2)["leftTotal"], 0)

    def test_huge_headers_answered_not_reset(self):
        srv = self.start()
        rss0 = rss_kb(srv.proc.pid)
        # headers just under the 32 KiB cap are fine
        ok = {"X-Pad-%d" % i: "a" * 1000 for i in range(30)}
        r = self.c2.request("GET", "/healthz", ok)
        self.assertEqual(r.status, 200, "30 x 1 KB headers")
        for round_ in range(20):
            s = socket.create_connection(("127.0.0.1", srv.port))
            head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(
                b"X-H%d: %s\r\n" % (i, b"a" * 1000) for i in range(200)) + b"\r\n"
            try:
                s.sendall(head)
            except OSError as e:  # the server may answer and close mid-send
                self.assertIn(e.errno, (errno.EPIPE, errno.ECONNRESET))
            status, hd, body, how = read_response(s)
            s.close()
            # our JSON 431 (never libevent's HTML 400), then a clean close
            self.assertEqual(status, 431, "200 x 1 KB headers: %r %r" % (how, body))
            self.assertEqual(json.loads(body)["error"], "HEADERS_TOO_LARGE")
            self.assertEqual(hd.get("content-type"), "application/json")
            self.assertEqual(how, "eof", "answered, not reset")
            if round_ % 5 == 0:
                self.poll_ok("during huge headers")
        self.finish(srv, rss0, 20 * 1024, "huge headers")

    def test_huge_body_10mb_join(self):
        srv = self.start()
        rss0 = rss_kb(srv.proc.pid)
        for i in range(5):
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.settimeout(10)
            head = ("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                    % (self.q, uid(), 10 * 1024 * 1024)).encode()
            sent = 0
            try:
                s.sendall(head)
                chunk = b"a" * 65536
                while sent < 10 * 1024 * 1024:
                    s.sendall(chunk)
                    sent += len(chunk)
            except OSError:
                pass  # answered and closed before the body was read: expected
            status, hd, body, how = read_response(s)
            s.close()
            self.assertEqual(status, 413, "10 MB join body: %r" % how)
            # ours, before the body is read (never libevent's HTML page)
            self.assertEqual(hd.get("content-type"), "application/json", body)
            self.assertEqual(json.loads(body)["error"], "PAYLOAD_TOO_LARGE")
            self.poll_ok("during huge bodies")
        # a Content-Length over 64 KiB with no body sent is answered at once
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                   "Content-Length: 70000\r\n\r\n" % (self.q, uid())).encode())
        status, hd, body, how = read_response(s, timeout=5)
        s.close()
        self.assertEqual((status, json.loads(body)["error"]), (413, "PAYLOAD_TOO_LARGE"), how)
        # a sign or a non-OWS space is not digits: 400 (API.md 1.3, second
        # reading); any number of leading zeros is read (the user already in
        # line: the 200 is a rejoin, nobody is added)
        for cl, body_, want in (("+70000", b"", 400), ("\x0b70000", b"", 400),
                                ("0" * 40 + "2", b"{}", 200)):
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                       "Connection: close\r\nContent-Length: %s\r\n\r\n"
                       % (self.q, self.user, cl)).encode() + body_)
            status, hd, body, how = read_response(s, timeout=5)
            s.close()
            self.assertEqual(status, want, "Content-Length %r: %r %r" % (cl, how, body))
            self.assertEqual(hd.get("content-type"), "application/json", body)
        # the admin routes' 64 KiB: 65,536 bytes reach the route (valid JSON:
        # a config), 65,537 are the JSON 413, and change nothing
        cfg = json.dumps(dict(HOLD, admitPerSecond=999)).encode()
        for size, want in ((65536, 200), (65537, 413)):
            r = self.c2.request("PUT", "/v1/admin/queues/%s" % self.q, ADMIN,
                                cfg + b" " * (size - len(cfg)))
            self.assertEqual(r.status, want, "a %d-byte PUT: %r" % (size, r))
            self.assertEqual(r.headers.get("content-type"), "application/json", r)
        self.assertEqual(r.json["error"], "PAYLOAD_TOO_LARGE", r)
        self.assertEqual(self.config(self.q, self.c2)["admitPerSecond"], 999)
        # a body over the 4 KiB user limit but under the server cap: JSON 413
        r = self.c2.request("POST", "/v1/queues/%s/entries" % self.q, {"X-User-Id": uid()},
                            b"{" + b" " * 5000 + b"}")
        self.assertError(r, 413, "PAYLOAD_TOO_LARGE", "5 KB join body")
        self.assertEqual(self.stats(self.q, self.c2)["waiting"], 1, "no join slipped through")
        self.finish(srv, rss0, 20 * 1024, "huge body")

    def test_thousands_of_idle_keepalive_connections(self):
        srv = self.start("--max-connections", "5000")
        rss0 = rss_kb(srv.proc.pid)
        n = 3000
        socks = []
        req = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(req)
            socks.append(s)
        answered = 0
        for s in socks:
            status, _, _, _ = read_response_one(s)
            answered += status == 200
        self.assertEqual(answered, n, "every keep-alive request answered")
        rss_busy = rss_kb(srv.proc.pid)
        self.poll_ok("with %d idle keep-alives" % n)
        # the idle keep-alives are closed by the idle timeout (4 s)
        t0 = time.monotonic()
        closed = 0
        for s in socks:
            s.settimeout(max(0.1, 8 - (time.monotonic() - t0)))
            try:
                closed += s.recv(1) == b""
            except (socket.timeout, ConnectionResetError):
                pass
            s.close()
        self.assertEqual(closed, n, "idle keep-alives closed by the server")
        per_conn = (rss_busy - rss0) * 1024 / n
        print("\n  %d idle keep-alives: %.0f bytes of RSS each" % (n, per_conn), file=sys.stderr)
        self.assertLess(per_conn, 16 * 1024 * rss_factor(), "%.0f bytes of RSS per idle connection" % per_conn)
        self.finish(srv, rss0, 64 * 1024, "idle keep-alives")

    def test_connection_cap_pauses_accept(self):
        srv = self.start("--max-connections", "50")
        idle = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(60)]
        time.sleep(0.3)  # let the server accept up to the cap (swept every 100 ms)
        # the 61st client waits in the backlog: no answer while the cap holds
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        status, _, _, how = read_response(s, timeout=0.8)
        self.assertIsNone(status, "answered although the cap was reached (%s)" % how)
        for x in idle[:30]:
            x.close()
        t0 = time.monotonic()
        status, _, _, how = read_response(s, timeout=5)
        self.assertEqual(status, 200, how)
        self.assertLess(time.monotonic() - t0, 2.0, "served soon after connections closed")
        s.close()
        for x in idle[30:]:
            x.close()
        self.poll_ok("after the cap")
        self.assertEqual(srv.terminate(), 0)

    def test_requests_per_connection_limit(self):
        srv = self.start()
        s = socket.create_connection(("127.0.0.1", srv.port))
        # 7 pipelined requests; the limit is 5: 5 answers, the 5th with
        # Connection: close, then EOF
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 7)
        data = b""
        s.settimeout(5)
        while True:
            try:
                d = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not d:
                break
            data += d
        s.close()
        self.assertEqual(data.count(b"HTTP/1.1 200 OK"), 5, data[-600:])
        last = data[data.rfind(b"HTTP/1.1 200"):]
        self.assertIn(b"connection: close", last.lower())
        # one at a time on a keep-alive connection: the same
        s = socket.create_connection(("127.0.0.1", srv.port))
        for i in range(5):
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            status, hd, _ = read_response_one(s)[:3]
            self.assertEqual(status, 200, "request %d" % (i + 1))
            self.assertEqual(hd.get("connection", "").lower() == "close", i == 4,
                             "Connection: close only on the 5th: %r" % hd)
        s.settimeout(3)
        self.assertEqual(s.recv(1), b"", "closed after the 5th answer")
        s.close()
        self.assertEqual(srv.terminate(), 0)


def read_response_one(s, timeout=10.0):
    """Reads exactly one response (Content-Length framed) from a keep-alive
    connection; returns (status, headers, body, how)."""
    s.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        try:
            d = s.recv(4096)
        except (socket.timeout, ConnectionResetError) as e:
            return None, {}, b"", repr(e)
        if not d:
            return None, {}, b"", "eof"
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    status_line, hd = parse_head(head)
    n = int(hd.get("content-length", "0"))
    while len(body) < n:
        d = s.recv(4096)
        if not d:
            break
        body += d
    return int(status_line.split()[1]), hd, body[:n], "ok"


class IdleAndSlowConnections(WRTest):

    def test_k08_idle_and_slow_connections_are_closed(self):
        """K08: with --timeout-seconds 2, a connection that never sends a byte and
        one that trickles a request (1 byte / 0.5 s) are both closed by the
        server within 5 s; the server still answers."""
        w = private_server(self, identity="header:X-User-Id", extra=["--timeout-seconds", "2"])
        idle = socket.create_connection(("127.0.0.1", w.port), timeout=6)
        slow = socket.create_connection(("127.0.0.1", w.port), timeout=6)
        t0 = time.monotonic()
        closed = {}

        def trickle():
            try:
                for ch in b"GET /healthz HTTP/1.1\r\nHost: x\r\n":
                    slow.send(bytes([ch]))
                    time.sleep(0.5)
            except OSError:
                pass

        threading.Thread(target=trickle, daemon=True).start()
        for name, s in (("idle", idle), ("slow", slow)):
            closed[name] = float("inf")   # not closed by the server within the socket timeout
            try:
                while s.recv(4096):
                    pass
                closed[name] = time.monotonic() - t0
            except socket.timeout:
                pass
            except OSError:
                closed[name] = time.monotonic() - t0
        for name, took in closed.items():
            self.assertLess(took, 5.0, "%s connection held %.1f s (or still open) with "
                            "--timeout-seconds 2" % (name, took))
        self.assertEqual(w.client.get("/healthz").status, 200)
        self.assertEqual(w.terminate(), 0)
