"""Operations: /healthz, /readyz, /metrics, graceful SIGTERM, store outage.

Metric names are not fixed by API.md; the suite looks for (see README.md):
- a counter whose name contains "request" with a route label and a
  status/code label (e.g. waitroom_http_requests_total{route=..,status=..});
- a histogram (has _bucket lines with le=) whose name contains "store";
- gauges whose names contain "waiting" and "active" with queue="<name>";
- counters whose names contain "admitted", "consumed", "expired", "rejected"
  with queue="<name>";
- something whose name contains "breaker".
"""
import signal
import socket
import time

import jwtutil
from harness import ENV, FAST, RedisServer, WRTest, Waitroomd, uid
from helpers import parse_metrics, private_server


class Ops(WRTest):

    def test_healthz_and_readyz(self):
        for path in ("/healthz", "/readyz"):
            with self.subTest(path):
                r = self.c.get(path)
                self.assertEqual(r.status, 200, repr(r))
                if r.headers.get("content-type", "").startswith("application/json"):
                    self.assertJsonHeaders(r, path)

    def metrics(self):
        r = self.c.get("/metrics")
        self.assertEqual(r.status, 200, repr(r))
        self.assertTrue(r.headers.get("content-type", "").startswith("text/plain"),
                        "Prometheus text content type: %r" % r.headers)
        return parse_metrics(r.body)

    def test_metrics(self):
        q = self.new_queue(dict(FAST, maxQueueSize=2, tokenTtlSeconds=1))
        a, b = uid(), uid()
        ta = self.admit(q, a)
        self.admit(q, b)     # b's token expires unused
        self.assertEqual(self.c.consume(q, ta).status, 200)
        self.c.patch_queue(q, {"paused": True})
        for _ in range(2):
            self.join_ok(q, uid())  # line of 2: full
        self.assertEqual(self.c.join(q, uid()).status, 429)
        self.c.me(q, uid())      # a 404
        self.poll_until(lambda: self.stats(q)["expiredTotal"], lambda v: v == 1, timeout=5,
                        what="b's token expired")
        st = self.stats(q)
        # gauges may be refreshed by the scheduler: poll until they show the state
        deadline = time.monotonic() + 3
        while True:
            samples, types = self.metrics()
            names = {s[0] for s in samples} | set(types)
            mine = [s for s in samples if q in s[1].values()]
            gw = [s for s in mine if "waiting" in s[0] and types.get(s[0]) == "gauge"]
            ga = [s for s in mine if "active" in s[0] and types.get(s[0]) == "gauge"]
            ok = gw and ga and gw[0][2] == st["waiting"] and ga[0][2] == st["active"]
            if ok or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        with self.subTest("requests by route and status"):
            req = [s for s in samples if "request" in s[0] and "route" in s[1]
                   and ("status" in s[1] or "code" in s[1])]
            self.assertTrue(req, "no request counter with route and status labels; names: %s"
                            % sorted(names))
            statuses = {s[1].get("status", s[1].get("code")) for s in req}
            self.assertTrue({"200", "404", "429"} <= statuses, "statuses seen: %s" % statuses)
        with self.subTest("store latency histogram"):
            hist = [s for s in samples if "store" in s[0] and s[0].endswith("_bucket")
                    and "le" in s[1]]
            self.assertTrue(hist, "no store latency histogram; names: %s" % sorted(names))
            self.assertTrue(any(s[1]["le"] == "+Inf" and s[2] > 0 for s in hist))
        with self.subTest("per-queue waiting/active gauges"):
            self.assertTrue(gw, "no waiting gauge for queue %s; names: %s" % (q, sorted(names)))
            self.assertTrue(ga, "no active gauge for queue %s" % q)
            self.assertEqual(gw[0][2], st["waiting"], "waiting gauge vs stats %r" % st)
            self.assertEqual(ga[0][2], st["active"], "active gauge vs stats %r" % st)
        for word, want in (("admitted", 2), ("consumed", 1), ("expired", 1), ("rejected", 1)):
            with self.subTest(counter=word):
                found = [s for s in mine if word in s[0]]
                self.assertTrue(found, "no %s counter for queue %s; names: %s"
                                % (word, q, sorted(names)))
                self.assertEqual(max(s[2] for s in found), want, "%s: %r" % (word, found))
        with self.subTest("breaker state"):
            self.assertTrue(any("breaker" in n for n in names), "no breaker metric: %s"
                            % sorted(names))

    def test_sigterm_exits_zero(self):
        w = private_server(self, identity="header:X-User-Id")
        q = self.new_queue(FAST, client=w.client)
        self.assertEqual(w.client.join(q, uid()).status, 200)
        w.client.delete_queue(q)
        t0 = time.monotonic()
        code = w.terminate(timeout=10)
        self.assertEqual(code, 0, "exit code on SIGTERM; stderr:\n" + w.stderr_tail())
        self.assertLess(time.monotonic() - t0, 10)
        with self.assertRaises(OSError, msg="port still open after exit"):
            socket.create_connection(("127.0.0.1", w.port), timeout=1).close()

    def test_sigint_exits_zero(self):
        w = private_server(self, identity="header:X-User-Id")
        self.assertEqual(w.client.get("/healthz").status, 200)
        w.proc.send_signal(signal.SIGINT)
        self.assertEqual(w.proc.wait(timeout=10), 0, "exit code on SIGINT")

    def test_environment_overrides_secrets(self):
        env_secret = "e" * 64
        w = Waitroomd(ENV.waitroomd, "memory", "f" * 64, ENV.tmpdir,
                      identity="header:X-User-Id", admin_key="flag-key",
                      env={"WAITROOM_ADMIN_KEY": "test-admin-key",
                           "WAITROOM_TOKEN_SECRET": env_secret})
        self.addCleanup(w.kill)
        r = w.client.put_queue("envq", {"admitPerSecond": 1000, "tickMs": 50}, key="flag-key")
        self.assertError(r, 401, "UNAUTHORIZED", "the flag's admin key must be overridden")
        q = self.new_queue(FAST, client=w.client)   # with test-admin-key (from the env)
        tok = self.admit(q, uid(), client=w.client)
        self.assertTrue(jwtutil.verifies(tok, env_secret.encode())
                        or jwtutil.verifies(tok, bytes.fromhex(env_secret)),
                        "token not signed with WAITROOM_TOKEN_SECRET")
        self.assertEqual(w.terminate(), 0)

    def test_shared_secret_from_the_store(self):
        self.redis_only()
        a = Waitroomd(ENV.waitroomd, ENV.store_arg, None, ENV.tmpdir, identity="header:X-User-Id")
        self.addCleanup(a.kill)
        b = Waitroomd(ENV.waitroomd, ENV.store_arg, None, ENV.tmpdir, identity="header:X-User-Id")
        self.addCleanup(b.kill)
        q = self.new_queue(FAST, client=a.client)
        u = uid()
        tok = self.admit(q, u, client=a.client)
        r = b.client.consume(q, tok)
        self.assertEqual((r.status, r.json.get("userId")), (200, u),
                         "instances without --token-secret must share the stored secret: %r" % r)
        self.assertEqual(a.terminate(), 0)
        self.assertEqual(b.terminate(), 0)

    def test_store_outage_readyz_and_503(self):
        self.redis_only()
        redis = RedisServer(ENV.tmpdir)
        self.addCleanup(redis.stop)
        w = Waitroomd(ENV.waitroomd, "redis://127.0.0.1:%d" % redis.port, ENV.secret,
                      ENV.tmpdir, identity="header:X-User-Id")
        self.addCleanup(w.kill)
        # 1.1: "closed" keeps v1's 503 on user routes (limited/open answer in
        # degraded mode, test_degraded.py)
        q = self.new_queue(dict(FAST, paused=True, failPolicy="closed"), client=w.client)
        u = uid()
        self.join_ok(q, u, client=w.client)
        port = redis.port
        redis.stop()
        r = self.poll_until(lambda: w.client.get("/readyz"), lambda r: r.status == 503,
                            timeout=5, what="/readyz 503 with Redis down")
        t0 = time.monotonic()
        r = w.client.join(q, uid())
        self.assertLess(time.monotonic() - t0, 3, "a request with the store down must fail fast")
        self.assertError(r, 503, "STORE_UNAVAILABLE", "join with Redis down")
        ra = r.headers.get("retry-after", "")
        self.assertTrue(ra.isdigit() and int(ra) >= 1, "Retry-After: %r" % ra)
        self.assertEqual(w.client.get("/healthz").status, 200, "healthz while store down")
        redis2 = RedisServer(ENV.tmpdir, port=port)
        self.addCleanup(redis2.stop)
        self.poll_until(lambda: w.client.get("/readyz").status, lambda s: s == 200, timeout=10,
                        what="/readyz back to 200 after Redis returned")
        self.assertEqual(w.terminate(), 0, "exit code on SIGTERM")
