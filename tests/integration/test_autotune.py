"""Autotune (API 1.2, "The line follows the shop"): queue config autotune,
POST /v1/queues/{queue}/health, stats admitRateTarget, the gauge
waitroom_autotune_rate{queue}. The rate starts from admitPerSecond clamped
into [min, max] (or from min), falls when reports say the service is slow or
failing (never faster than halving a second, never below min), rises while
they say it is well within the target and people wait, holds with no fresh
report (older than 10 s), and is the same on every instance (kept in the
store). Queues are paused with people waiting: the law runs (the rate
limits admission) while nobody is admitted, so nothing else moves. The
dashboard's history carries the rate in use, the latency and the target.
Runs on both stores; the two-instance test on Redis only."""
import time

from harness import ADMIN, WRTest

KEY = ADMIN


def auto(lo, hi, target, **extra):
    cfg = {"tickMs": 50, "paused": True,
           "autotune": {"minPerSecond": lo, "maxPerSecond": hi, "targetMs": target}}
    cfg.update(extra)
    return cfg


class Autotune(WRTest):

    def health(self, q, body, client=None, headers=KEY):
        return (client or self.c).request("POST", "/v1/queues/%s/health" % q, dict(headers),
                                          body)

    def report(self, q, latency, errors=0.0, client=None):
        r = self.health(q, {"latencyMs": latency, "errorRate": errors}, client)
        self.assertEqual(r.status, 204, repr(r))
        self.assertEqual(r.body, "")

    def rate(self, q, client=None):
        return self.stats(q, client)["admitRateTarget"]

    def crowd(self, q, n=5):
        for i in range(n):
            self.join_ok(q, "u%d" % i)

    def until(self, q, pred, what, timeout=6.0, client=None):
        """Polls the rate until pred(rate); returns it (fails after timeout)."""
        deadline = time.monotonic() + timeout
        r = self.rate(q, client)
        while not pred(r) and time.monotonic() < deadline:
            time.sleep(0.1)
            r = self.rate(q, client)
        self.assertTrue(pred(r), "%s: rate %r" % (what, r))
        return r

    def test_config_start_and_errors(self):
        q = self.new_queue({"autotune": {"minPerSecond": 10, "maxPerSecond": 100,
                                         "targetMs": 400}})
        cfg = self.config(q)
        self.assertEqual(cfg["autotune"], {"minPerSecond": 10, "maxPerSecond": 100,
                                           "targetMs": 400})
        self.assertEqual(cfg["admitPerSecond"], 10)
        self.assertEqual(self.rate(q), 10)          # neither given: from min
        q2 = self.new_queue(auto(10, 100, 400, admitPerSecond=500))
        self.assertEqual(self.rate(q2), 100)        # admitPerSecond clamped
        q3 = self.new_queue({"admitPerSecond": 175})
        self.assertIsNone(self.config(q3)["autotune"])
        self.assertEqual(self.rate(q3), 175)        # no autotune: the configured rate
        for bad, field in ((5, "autotune"), ({}, "autotune.minPerSecond"),
                           ({"minPerSecond": 0, "maxPerSecond": 5, "targetMs": 1},
                            "autotune.minPerSecond"),
                           ({"minPerSecond": 6, "maxPerSecond": 5, "targetMs": 1},
                            "autotune.maxPerSecond"),
                           ({"minPerSecond": 1, "maxPerSecond": 1000001, "targetMs": 1},
                            "autotune.maxPerSecond"),
                           ({"minPerSecond": 1, "maxPerSecond": 5, "targetMs": 60001},
                            "autotune.targetMs"),
                           ({"minPerSecond": 1, "maxPerSecond": 5, "targetMs": 0},
                            "autotune.targetMs")):
            with self.subTest(bad=bad):
                r = self.c.patch_queue(q, {"autotune": bad})
                self.assertError(r, 400, "INVALID_CONFIG", repr(bad))
                self.assertEqual(r.json.get("field"), field, repr(r))
        r = self.c.patch_queue(q, {"autotune": None})
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(self.rate(q), 10)

    def test_health_answers(self):
        q = self.new_queue(auto(10, 100, 400))
        self.report(q, 120.5, 0.01)
        self.report(q, 0, 1)
        for body, field in (({"latencyMs": -1, "errorRate": 0}, "latencyMs"),
                            ({"latencyMs": "5", "errorRate": 0}, "latencyMs"),
                            ({"errorRate": 0}, "latencyMs"),
                            ({"latencyMs": 5, "errorRate": 1.5}, "errorRate"),
                            ({"latencyMs": 5, "errorRate": -0.1}, "errorRate"),
                            ({"latencyMs": 5}, "errorRate"),
                            ({"latencyMs": 5, "errorRate": 0, "x": 1}, None),
                            ([1, 2], None), ("nope", None)):
            with self.subTest(body=body):
                r = self.health(q, body)
                self.assertError(r, 400, "BAD_REQUEST", repr(body))
                if field:
                    self.assertEqual(r.json.get("field"), field, repr(r))
        r = self.health(q, {"latencyMs": 5, "errorRate": 0}, headers={})
        self.assertError(r, 401, "UNAUTHORIZED", "no admin key")
        r = self.health(q, {"latencyMs": 5, "errorRate": 0},
                        headers={"Authorization": "Bearer wrong"})
        self.assertError(r, 401, "UNAUTHORIZED", "wrong admin key")
        r = self.health("no-such-queue-x", {"latencyMs": 5, "errorRate": 0})
        self.assertError(r, 404, "QUEUE_NOT_FOUND", "unknown queue")

    def test_slow_lowers_within_bounds_then_holds(self):
        q = self.new_queue(auto(40, 400, 100, admitPerSecond=100))
        self.crowd(q)
        self.assertEqual(self.rate(q), 100)
        # no report at all: the rate holds
        time.sleep(1.5)
        self.assertEqual(self.rate(q), 100)
        # a storm of ever slower reports (a backlog that keeps growing):
        # halving a second at most, never below min
        # (t of the sample that saw the change, rate, gap since the sample
        # before it): a busy machine can space two samples over a second,
        # so each change is bounded by the cuts its gap allows (one a second)
        seen = [(time.monotonic(), 100, 0.0)]
        deadline = time.monotonic() + 8
        lat = 1000.0
        last_t = time.monotonic()
        while time.monotonic() < deadline and seen[-1][1] > 40:
            lat = min(lat * 1.25, 3600000)
            self.report(q, lat)
            r, t = self.rate(q), time.monotonic()
            if r != seen[-1][1]:
                seen.append((t, r, t - last_t))
            last_t = t
            time.sleep(0.1)
        self.assertEqual(seen[-1][1], 40, "reached min: %r" % seen)
        for (_, a, _), (_, b, gap) in zip(seen, seen[1:]):
            cuts = int(gap) + 1
            self.assertGreaterEqual(b, a / 2 ** cuts - 1e-9, "faster than halving: %r" % seen)
        if seen[1][2] < 1.0:
            self.assertEqual(seen[1][1], 50, "the first cut halves: %r" % seen)
        # flat, still over the target: a service slow at any rate; it holds
        for _ in range(6):
            self.report(q, lat)
            time.sleep(0.25)
        self.assertEqual(self.rate(q), 40)
        # the gauge shows the rate in use
        m = self.c.request("GET", "/metrics")
        self.assertIn('waitroom_autotune_rate{queue="%s"} 40' % q, m.body)
        # the ETA follows the rate in use (40/s), not admitPerSecond (100/s)
        r = self.c.patch_queue(q, {"paused": False})
        self.assertEqual(r.status, 200, r)
        checked = 0
        for i in range(150):
            j = self.join_ok(q, "late%d" % i)
            pos = j.get("position")
            if j.get("status") == "waiting" and pos and pos > 45:
                self.assertEqual(j["etaSeconds"], -(-pos // 40),
                                 "ETA at the rate in use: position %d, %r" % (pos, j))
                checked += 1
        self.assertGreater(checked, 10, "people far enough back to tell 40/s from 100/s")
        self.assertEqual(self.rate(q), 40)

    def test_healthy_raises_and_stale_reports_are_ignored(self):
        q = self.new_queue(auto(10, 1000, 400, admitPerSecond=10))
        self.crowd(q)
        self.report(q, 50)
        r1 = self.until(q, lambda r: r > 10, "a healthy report raises")
        # no more reports: it goes on rising while the report is fresh (10 s),
        # by at most 10% of max (100/s) a second, then holds
        t0 = time.monotonic()
        prev, prev_t = r1, t0
        while time.monotonic() - t0 < 12.5:
            time.sleep(0.25)
            r, t = self.rate(q), time.monotonic()
            # one raise a second at most: a gap of g seconds holds int(g)+1
            self.assertLessEqual(r - prev, 100 * (int(t - prev_t) + 1) + 1e-6,
                                 "faster than +10%% of max a second: %r -> %r" % (prev, r))
            prev, prev_t = r, t
        held = self.rate(q)
        self.assertGreater(held, r1)
        time.sleep(2.0)
        self.assertEqual(self.rate(q), held, "a report older than 10 s moved the rate")

    def test_nobody_waiting_no_raise(self):
        q = self.new_queue(auto(10, 1000, 400, admitPerSecond=50))
        for _ in range(4):
            self.report(q, 10)
            time.sleep(0.5)
        self.assertEqual(self.rate(q), 50, "raised with nobody in line")
        # a rate that never changed is still on the gauge (the rate in use)
        want = 'waitroom_autotune_rate{queue="%s"} 50' % q
        self.poll_until(lambda: self.c.request("GET", "/metrics").body, lambda b: want in b,
                        timeout=5, interval=0.2, what="the gauge of a steady rate")

    def test_history_carries_rate_and_latency(self):
        # the dashboard's history (GET /v1/admin/queues/{q}/history): per
        # second the rate in use, the latency the controller used (the worst
        # fresh report, null when none) and the target; its autotune object
        # says why the rate last changed. A fixed-rate queue has neither.
        q = self.new_queue(auto(10, 100, 500, admitPerSecond=40))
        fixed = self.new_queue({"tickMs": 50, "paused": True, "admitPerSecond": 5})
        self.crowd(q)
        self.join_ok(fixed, "f0")

        def hist(name=q):
            return self.c.get("/v1/admin/queues/%s/history" % name, KEY).json

        def last(h, k):
            return h[k][-1] if h and h.get(k) else None

        # no report yet: the starting rate, no latency, the target
        h = self.poll_until(hist, lambda b: last(b, "rateInUse") == 40, timeout=6,
                            interval=0.1, what="the starting rate in the history")
        n = len(h["t"])
        for k in ("rateInUse", "latencyMs", "targetMs"):
            self.assertEqual(len(h[k]), n, k)
        self.assertIsNone(h["latencyMs"][-1])
        self.assertEqual(h["targetMs"][-1], 500)
        at = h["autotune"]
        self.assertEqual((at["rateInUse"], at["latencyMs"], at["errorRate"], at["targetMs"],
                          at["minPerSecond"], at["maxPerSecond"]), (40, None, None, 500, 10, 100))
        # "start", or null when another instance's step set it (Redis)
        self.assertIn(at["lastChange"]["reason"], ("start", None))
        self.assertEqual(at["lastChange"]["to"], 40)
        # the 40 in a second that is over: a sample for the newest second
        # replaces it (history.c), so a cut within the second it was
        # sampled in (a stalled loop on a loaded machine) would leave no 40
        self.poll_until(hist, lambda b: 40 in (b.get("rateInUse") or [])[:-1], timeout=6,
                        interval=0.1, what="the starting rate in a second that is over")
        # a slow report (1000 ms against 500): one cut, 40 -> 20 (at most halved)
        t0 = time.time() * 1000
        self.report(q, 1000)
        self.until(q, lambda r: r == 20, "lowered")
        h = self.poll_until(hist, lambda b: last(b, "rateInUse") == 20 and
                            last(b, "latencyMs") == 1000, timeout=6, interval=0.1,
                            what="the cut rate and the report in the history")
        self.assertEqual(h["targetMs"][-1], 500)
        self.assertEqual(h["rateInUse"][-1], self.rate(q), "the history's rate = admitRateTarget")
        self.assertIn(40, h["rateInUse"], "the rate before the cut is in the history")
        lc = h["autotune"]["lastChange"]
        if lc["reason"] is None:
            # another instance's step made the cut (two instances on Redis):
            # only that one knows why (docs/API.md, history "lastChange")
            self.assertEqual((lc["from"], lc["to"], lc["latencyMs"], lc["errorRate"]),
                             (40, 20, None, None), repr(lc))
        else:
            self.assertEqual((lc["reason"], lc["from"], lc["to"], lc["latencyMs"],
                              lc["errorRate"]), ("slow", 40, 20, 1000, 0), repr(lc))
        self.assertGreater(lc["at"], t0 - 2000)
        self.assertLess(lc["at"], time.time() * 1000 + 2000)
        # a report in the dead band (450 ms): the rate holds, the history shows it
        self.report(q, 450.5)
        h = self.poll_until(hist, lambda b: last(b, "latencyMs") == 450.5, timeout=6,
                            interval=0.1, what="the new report in the history")
        self.assertEqual(h["rateInUse"][-1], 20)
        self.assertEqual(h["autotune"]["latencyMs"], 450.5)
        # since: the columns follow the samples asked for
        later = self.c.get("/v1/admin/queues/%s/history?since=%d" % (q, h["t"][-2]), KEY).json
        self.assertEqual(len(later["rateInUse"]), len(later["t"]))
        self.assertEqual(later["t"][0], h["t"][-1])
        # the fixed-rate queue: no autotune column, no autotune object
        f = self.poll_until(lambda: hist(fixed), lambda b: b and len(b["t"]) >= 2, timeout=6,
                            interval=0.1, what="the fixed queue's history")
        for k in ("rateInUse", "latencyMs", "targetMs"):
            self.assertNotIn(k, f)
        self.assertIsNone(f["autotune"])
        # autotune turned off: the newer samples carry none, the object is null
        r = self.c.patch_queue(q, {"autotune": None})
        self.assertEqual(r.status, 200, repr(r))
        h = self.poll_until(hist, lambda b: b["autotune"] is None and
                            b["targetMs"][-1] is None, timeout=6, interval=0.1,
                            what="samples without autotune")
        self.assertIsNone(h["rateInUse"][-1])
        self.assertIsNone(h["latencyMs"][-1])
        self.assertIn(500, h["targetMs"], "the older samples keep theirs")

    def test_two_instances_same_rate(self):
        self.redis_only()
        a, b = self.two_instances()
        q = self.new_queue(auto(10, 400, 100, admitPerSecond=200), client=a.client)
        for i in range(5):
            self.join_ok(q, "u%d" % i, client=(a, b)[i % 2].client)
        self.report(q, 1000, client=b.client)   # reported to b, stepped by either
        r = self.until(q, lambda r: r < 200, "lowered", client=a.client)
        self.assertGreaterEqual(r, 100)         # one cut: at most halved
        self.assertEqual(self.rate(q, b.client), r)
        # both instances' gauges come to the rate in use
        want = 'waitroom_autotune_rate{queue="%s"} %g' % (q, r)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            bodies = [x.client.request("GET", "/metrics").body for x in (a, b)]
            if all(want in body for body in bodies):
                break
            time.sleep(0.2)
        for body in bodies:
            self.assertIn(want, body)

    def test_sessions_are_a_report(self):
        # sessionSeconds > 0: consume to release counts as latencyMs (its p95)
        q = self.new_queue({"tickMs": 50, "sessionSeconds": 300, "admitPerSecond": 200,
                            "autotune": {"minPerSecond": 10, "maxPerSecond": 400,
                                         "targetMs": 100}})
        self.assertEqual(self.rate(q), 200)
        for i in range(3):
            tok = self.admit(q, "s%d" % i)
            r = self.c.consume(q, tok)
            self.assertEqual(r.status, 200, repr(r))
            time.sleep(0.35)                    # a 350 ms visit, against a 100 ms target
            r = self.c.release(q, tok)
            self.assertEqual(r.status, 204, repr(r))
        r = self.until(q, lambda r: r < 200, "slow sessions lower the rate")
        self.assertGreaterEqual(r, 10)
