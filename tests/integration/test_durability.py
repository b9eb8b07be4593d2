"""More incident cases (shared/cases/README.md) at the HTTP level:
K06 (Redis hangs), K07 (client gone while its store call is pending),
K08 (oversized and slow requests), K09 (breaker fails fast, no burst after),
K10 (SIGKILL during admission loses nobody), K13 (175/s is 17 or 18 per tick,
175/s on average, not 180/s).

The Redis cases use a private redis-server and waitroomd so that stalling or
killing them never disturbs the shared servers of the other tests.
"""
import os
import random
import signal
import socket
import struct
import threading
import time

from harness import ENV, HOLD, RedisServer, WRTest, Waitroomd, open_fds, uid
from resp import Redis
from test_admission import Sampler
from test_concurrency import race


class PrivateRedis(WRTest):
    """Helpers: a private redis-server and waitroomd instances on it."""

    def private(self, extra=()):
        self.redis_only()
        redis = RedisServer(ENV.tmpdir)
        self.addCleanup(redis.stop)
        w = self.instance(redis, extra)
        return redis, w

    def instance(self, redis, extra=()):
        w = Waitroomd(ENV.waitroomd, "redis://127.0.0.1:%d" % redis.port, ENV.secret,
                      ENV.tmpdir, identity="header:X-User-Id", extra=extra)
        self.addCleanup(w.kill)
        return w

    def recover(self, w, q, u, position, timeout=10):
        r = self.poll_until(lambda: w.client.me(q, u), lambda r: r.status == 200,
                            timeout=timeout, interval=0.1, what="service back after the outage")
        self.assertEqual(r.json.get("position"), position, "place kept: %r" % r)


class K06StoreHangs(PrivateRedis):

    def check_wave(self, w, q, users, what):
        t0 = time.monotonic()
        out = race(w.port, [("GET", "/v1/queues/%s/entries/me" % q, {"X-User-Id": u}, None)
                            for u in users])
        took = time.monotonic() - t0
        statuses = [o[0] for o in out]
        self.assertNotIn("exception", statuses, "%s: a request got no answer: %r"
                         % (what, [o for o in out if o[0] == "exception"][:2]))
        self.assertEqual(set(statuses), {503}, "%s: statuses %s" % (what, sorted(set(map(str, statuses)))))
        for o in out:
            self.assertEqual(o[2].get("error"), "STORE_UNAVAILABLE")
            ra = o[1].get("retry-after", "")
            self.assertTrue(ra.isdigit() and int(ra) >= 1, "Retry-After %r" % ra)
        # store timeout 250 ms plus a margin, for the whole concurrent wave
        self.assertLess(took, 2.0, "%s: the wave took %.2f s" % (what, took))

    def test_k06_debug_sleep_and_sigstop(self):
        redis, w = self.private()
        # 1.1: "closed" keeps v1's 503 on user routes (limited/open answer in
        # degraded mode, test_degraded.py)
        q = self.new_queue(dict(HOLD, failPolicy="closed"), client=w.client)
        head = uid()
        self.join_ok(q, head, client=w.client)
        users = [uid() for _ in range(50)]
        # DEBUG SLEEP 3 on its own connection (it blocks that connection too)
        sleeper = threading.Thread(target=lambda: Redis(redis.port, timeout=10).cmd(
            "DEBUG", "SLEEP", "3"), daemon=True)
        sleeper.start()
        time.sleep(0.1)
        self.check_wave(w, q, users, "DEBUG SLEEP 3")
        sleeper.join(10)
        self.recover(w, q, head, 1)
        # SIGSTOP: the socket stays open, nothing answers
        os.kill(redis.proc.pid, signal.SIGSTOP)
        self.addCleanup(lambda: redis.proc.poll() is None and os.kill(redis.proc.pid,
                                                                       signal.SIGCONT))
        try:
            self.check_wave(w, q, users, "SIGSTOP")
            # K09: with the breaker open, the next requests fail fast
            lat = []
            for _ in range(20):
                t0 = time.monotonic()
                r = w.client.me(q, head)
                lat.append(time.monotonic() - t0)
                self.assertEqual(r.status, 503, repr(r))
            lat.sort()
            self.assertLess(lat[len(lat) // 2], 0.1, "K09: median latency %.3f s while the "
                            "store is down: requests should fail fast (breaker open)"
                            % lat[len(lat) // 2])
        finally:
            os.kill(redis.proc.pid, signal.SIGCONT)
        self.recover(w, q, head, 1)
        self.assertEqual(w.client.get("/healthz").status, 200)
        self.assertEqual(w.terminate(), 0, "exit code on SIGTERM after the outages")

    def test_k09_no_burst_after_an_outage(self):
        redis, w = self.private()
        rate, tick = 20.0, 100
        q = self.new_queue({"admitPerSecond": rate, "tickMs": tick}, client=w.client)
        for _ in range(150):
            self.join_ok(q, uid(), client=w.client)
        time.sleep(0.5)
        os.kill(redis.proc.pid, signal.SIGSTOP)
        self.addCleanup(lambda: redis.proc.poll() is None and os.kill(redis.proc.pid,
                                                                       signal.SIGCONT))
        time.sleep(2.0)   # the outage
        os.kill(redis.proc.pid, signal.SIGCONT)
        self.poll_until(lambda: w.client.get_queue(q).status, lambda s: s == 200, timeout=10,
                        what="admin GET back")
        t0 = time.monotonic()
        s = Sampler(self, q, w.client)
        s.run(1.5, 0.02)
        per_tick = rate * tick / 1000.0
        catchup = 3   # docs: the catch-up after missed ticks is capped at a few ticks
        for (ta, a), (tb, b) in zip(s.samples, s.samples[1:]):
            allowed = rate * (tb - ta) + catchup * per_tick + 1
            self.assertLessEqual(b - a, allowed, "burst after the outage: %d admitted in "
                                 "%.0f ms" % (b - a, (tb - ta) * 1000))
        n = s.samples[-1][1] - s.samples[0][1]
        self.assertLessEqual(n, rate * (s.samples[-1][0] - t0) + (catchup + 1) * per_tick + 1)
        self.assertGreater(n, 0, "admission did not resume")


class K07ClientGone(PrivateRedis):

    def test_k07_disconnect_while_the_store_call_is_pending(self):
        redis, w = self.private()
        q = self.new_queue(dict(HOLD, maxQueueSize=0), client=w.client)
        first = uid()
        self.join_ok(q, first, client=w.client)
        time.sleep(0.2)
        base_fds = open_fds(w.proc.pid)
        stop = threading.Event()

        def slow():
            r = Redis(redis.port, timeout=10)
            while not stop.is_set():
                r.cmd("DEBUG", "SLEEP", "0.2")
                time.sleep(0.02)
            r.close()

        t = threading.Thread(target=slow, daemon=True)
        t.start()
        users = [first] + [uid() for _ in range(20)]
        try:
            deadline = time.monotonic() + 8
            n = 0
            while n < 3000 and time.monotonic() < deadline:
                u = users[n % len(users)]
                body = b'{"x":1}' if n % 2 else b""
                s = socket.create_connection(("127.0.0.1", w.port), timeout=2)
                s.sendall(b"POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (q.encode(), u.encode(), len(body),
                                                             body))
                time.sleep(0.001)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()   # RST: the client is gone
                n += 1
        finally:
            stop.set()
            t.join(5)
        self.assertGreater(n, 500, "too few disconnects sent")
        self.assertIsNone(w.proc.poll(), "waitroomd died: " + w.stderr_tail())
        self.recover(w, q, first, 1)
        self.assertEqual(w.client.get("/healthz").status, 200)
        self.poll_until(lambda: open_fds(w.proc.pid), lambda c: c <= base_fds + 2, timeout=10,
                        what="open descriptors back to the baseline %d" % base_fds)
        self.assertWaiting(w.client.join(q, first), 1, eta_null=True,
                           what="first user keeps the original place")
        self.assertEqual(w.terminate(), 0, "exit code on SIGTERM; stderr:\n" + w.stderr_tail())


class K08Limits(WRTest):

    # Huge headers and a 10 MB body (K08): test_security_limits.Limits
    # (test_huge_headers_answered_not_reset, test_huge_body_10mb_join) sends
    # the same requests and also checks that nothing joined and RSS held.

    def test_k08_idle_and_slow_connections_are_closed(self):
        w = Waitroomd(ENV.waitroomd, ENV.store_arg, ENV.secret, ENV.tmpdir,
                      identity="header:X-User-Id", extra=["--timeout-seconds", "2"])
        self.addCleanup(w.kill)
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


class K08ConnectionCap(WRTest):

    def test_k08_connection_cap(self):
        w = Waitroomd(ENV.waitroomd, ENV.store_arg, ENV.secret, ENV.tmpdir,
                      identity="header:X-User-Id", extra=["--max-connections", "5"])
        self.addCleanup(w.kill)
        time.sleep(0.1)
        base = open_fds(w.proc.pid)
        held = [socket.create_connection(("127.0.0.1", w.port), timeout=3) for _ in range(12)]
        self.addCleanup(lambda: [s.close() for s in held])
        time.sleep(0.3)
        self.assertLessEqual(open_fds(w.proc.pid), base + 5 + 1,
                             "more than --max-connections 5 connections kept open")
        for s in held:
            s.close()
        r = self.poll_until(lambda: w.client.get("/healthz").status, lambda s: s == 200,
                            timeout=5, what="server answers again once the idle ones close")
        self.poll_until(lambda: open_fds(w.proc.pid), lambda c: c <= base + 1, timeout=5,
                        what="descriptors back to the baseline %d" % base)
        self.assertEqual(r, 200)
        self.assertEqual(w.terminate(), 0)


class K10CrashDuringAdmission(PrivateRedis):

    def test_k10_sigkill_while_admitting_loses_nobody(self):
        redis, w = self.private()
        q = self.new_queue({"admitPerSecond": 200, "tickMs": 50, "paused": True},
                           client=w.client)
        users = ["k10-%03d" % i for i in range(400)]
        for u in users:
            self.join_ok(q, u, client=w.client)
        # Nobody is admitted sooner than 250 ms after joining (the admission
        # delay): let it pass, so the first instance admits before its kill.
        time.sleep(0.3)
        self.assertEqual(w.client.patch_queue(q, {"paused": False}).status, 200)
        rnd = random.Random(1)
        for _ in range(6):
            time.sleep(rnd.uniform(0.05, 0.3))
            w.kill()   # SIGKILL, mid-admission
            w = self.instance(redis)
        time.sleep(0.1)
        self.assertEqual(w.client.patch_queue(q, {"paused": True}).status, 200)
        time.sleep(0.2)
        st = self.stats(q, client=w.client)
        self.assertEqual(st["waiting"] + st["active"], 400, "users vanished: %r" % st)
        self.assertEqual(st["admittedTotal"], st["active"], st)
        self.assertGreater(st["admittedTotal"], 0)
        r = Redis(redis.port)
        self.addCleanup(r.close)
        self.assertEqual(r.cmd("ZCARD", "wr:{%s}:active" % q), st["active"])
        self.assertEqual(r.cmd("HLEN", "wr:{%s}:tokens" % q), st["active"])
        n = st["admittedTotal"]
        tokens = []
        for i, u in enumerate(users):
            res = w.client.me(q, u)
            self.assertEqual(res.status, 200, "%s: %r" % (u, res))
            if i < n:
                self.assertEqual(res.json["status"], "admitted", "FIFO: %s (#%d of %d)"
                                 % (u, i + 1, n))
                tokens.append(res.json["token"])
            else:
                self.assertWaiting(res, i - n + 1, 400 - n, eta_null=True,
                                   what="%s keeps the original order" % u)
        for u, tok in zip(users, tokens[:20]):
            res = w.client.consume(q, tok)
            self.assertEqual((res.status, res.json.get("userId")), (200, u), repr(res))


class K13Spread(WRTest):

    def test_k13_175_per_second_is_17_or_18_per_tick(self):
        q = self.new_queue({"admitPerSecond": 175, "tickMs": 100, "paused": True})
        for _ in range(700):
            self.join_ok(q, uid())
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        s = Sampler(self, q, self.c)
        s.run(3.0, 0.005)
        steps = [b[1] - a[1] for a, b in zip(s.samples, s.samples[1:]) if b[1] != a[1]]
        self.assertGreater(len(steps), 20, "too few admission steps seen: %r" % steps)
        # The first tick after the unpause may come less than 250 ms after
        # the last of the 700 joins (they take about that long), and the
        # admission delay (nobody admitted sooner than 250 ms after joining)
        # stops it at the first person not yet due: it may admit fewer,
        # never more than one tick's budget (K24), and is not counted in
        # the rate below.
        self.assertLessEqual(steps[0], 18, "first step %d above one tick (steps %r)" % (steps[0], steps))
        steps = steps[1:]
        ticks = 0
        for d in steps:
            k = max(1, round(d / 17.5))
            self.assertTrue(17 * k <= d <= 18 * k, "a step of %d admissions is not %d ticks' "
                            "worth of 17 or 18 (steps %r)" % (d, k, steps))
            ticks += k
        total = sum(steps)
        self.assertLessEqual(abs(total - 17.5 * ticks), 1.5,
                             "%d admitted in %d ticks: %.2f per tick, expected 17.5 (175/s, "
                             "not 180/s)" % (total, ticks, total / ticks))
