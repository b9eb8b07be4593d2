"""Admission: the configured outflow rate, FIFO order, pause without burst,
and several instances on one Redis admitting the rate once, not N times."""
import time

from harness import WRTest, uid
from helpers import PER_TICK, RATE, Sampler, TICK_MS


class Admission(WRTest):

    def queue(self, **kw):
        cfg = {"admitPerSecond": RATE, "tickMs": TICK_MS, "paused": True}
        cfg.update(kw)
        return self.new_queue(cfg)

    def test_rate_and_fifo(self):
        q = self.queue()
        users = [uid("f%02d-" % i) for i in range(60)]
        for i, u in enumerate(users, start=1):
            self.assertWaiting(self.c.join(q, u), i, i, eta_null=True)
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        t0 = time.monotonic()
        s = Sampler(self, q, self.c)
        s.run(2.5, 0.02)
        self.assertEqual(self.c.patch_queue(q, {"paused": True}).status, 200)
        s.check_no_burst("steady admission")
        s.assert_rate(t0 + 0.3, t0 + 2.5, "20/s queue")
        # frozen snapshot: admitted = exactly the first A users in join order
        time.sleep(TICK_MS / 1000.0 * 2)   # a tick in flight during the PATCH may still land
        n = self.stats(q)["admittedTotal"]
        self.assertTrue(30 <= n < 60, "admitted after ~2.5 s at 20/s: %d" % n)
        for i, u in enumerate(users):
            r = self.c.me(q, u)
            self.assertEqual(r.status, 200, repr(r))
            if i < n:
                self.assertEqual(r.json["status"], "admitted",
                                 "FIFO: user #%d of %d admitted must be admitted" % (i + 1, n))
            else:
                self.assertWaiting(r, i - n + 1, 60 - n, eta_null=True,
                                   what="FIFO: user #%d after %d admitted" % (i + 1, n))
        self.assertEqual(self.stats(q)["admittedTotal"], n, "admission while paused")
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        self.poll_until(lambda: self.stats(q), lambda st: st["waiting"] == 0,
                        timeout=(60 - n) / RATE + 3, what="line drained")
        st = self.stats(q)
        self.assertEqual((st["admittedTotal"], st["active"]), (60, 60), st)

    def test_paused_admits_nobody_and_unpause_does_not_burst(self):
        q = self.queue()
        users = [uid() for _ in range(40)]
        for u in users:
            self.join_ok(q, u)
        s = Sampler(self, q, self.c)
        s.run(1.0, 0.05)
        self.assertEqual(max(a for _, a in s.samples), 0, "admitted while paused")
        self.assertWaiting(self.c.me(q, users[0]), 1, 40, eta_null=True)
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        t0 = time.monotonic()
        s = Sampler(self, q, self.c)
        s.sample()
        s.run(0.6, 0.02)
        s.check_no_burst("after unpause")
        n300 = [a for t, a in s.samples if t <= t0 + 0.3][-1]
        allowed = RATE * 0.3 + 2 * PER_TICK + 1
        self.assertLessEqual(n300, allowed, "first 300 ms after a 1 s pause: %d admitted "
                             "(no budget may build up while paused)" % n300)
        self.assertGreater(s.samples[-1][1], 0, "nobody admitted 600 ms after unpause")

    def test_no_burst_after_an_empty_line(self):
        q = self.queue(paused=False)
        s = Sampler(self, q, self.c)
        s.run(1.0, 0.1)   # empty line: no budget may build up
        users = [uid() for _ in range(30)]
        t0 = time.monotonic()
        for u in users:
            self.join_ok(q, u)
        s.run(0.8, 0.02)
        s.check_no_burst("after an empty second")
        n = s.samples[-1][1]
        self.assertLessEqual(n, RATE * (time.monotonic() - t0) + 2 * PER_TICK + 1)
        self.assertGreater(n, 0)

    def test_a_join_wakes_a_quiet_queue(self):
        """K29 (quiet queues) with the queue held per request: a join into a
        queue gone quiet (nobody waiting, nothing live: its admit call comes
        once a second) is admitted at the tick 250-350 ms after it (README,
        Limits), not at the quiet queue's next call, up to 1 s later. Joins
        and polls hold the queue (wr_scheduler_hold), which did not wake it;
        only admin and token requests did (wr_scheduler_note). Three queues,
        so that a lucky quiet call cannot pass it on the old code."""
        for _ in range(3):
            q = self.new_queue({"admitPerSecond": 100, "tickMs": 50})
            ttl_ms = self.config(q)["tokenTtlSeconds"] * 1000
            time.sleep(1.5)  # no request: the queue goes quiet
            u = uid()
            t0_ms = time.time() * 1000
            self.join_ok(q, u)
            admitted_ms = self.wait_admitted(q, u)["expiresAt"] - ttl_ms
            # 250 ms admission delay + one 50 ms tick + slack for a busy machine
            self.assertLess(admitted_ms - t0_ms, 550, "admitted %.0f ms after the join" % (admitted_ms - t0_ms))

    def test_fractional_rate_kept_exactly(self):
        # 2.5/s at 100 ms ticks: 0.25 per tick; rounding per tick would give 0 or 10/s
        q = self.queue(admitPerSecond=2.5)
        for _ in range(30):
            self.join_ok(q, uid())
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        t0 = time.monotonic()
        s = Sampler(self, q, self.c)
        s.run(4.2, 0.1)
        n, dt = s.rate_between(t0 + 0.1, t0 + 4.2)
        self.assertTrue(abs(n - 2.5 * dt) <= 2, "%d admitted in %.2f s at 2.5/s" % (n, dt))


class TwoInstances(WRTest):

    def test_two_instances_admit_the_rate_once(self):
        self.redis_only()
        a, b = self.two_instances()
        q = self.new_queue({"admitPerSecond": RATE, "tickMs": TICK_MS, "paused": True},
                           client=a.client)
        for i in range(300):
            c = (a, b)[i % 2].client
            r = c.join(q, "u%03d" % i)
            self.assertEqual((r.status, r.json["position"]), (200, i + 1), repr(r))
        r = b.client.patch_queue(q, {"paused": False})
        self.assertEqual(r.status, 200, repr(r))
        t0 = time.monotonic()
        s = Sampler(self, q, a.client)
        s.run(3.2, 0.05)
        s.check_no_burst("two instances")
        rate = s.assert_rate(t0 + 0.3, t0 + 3.2, "two instances on one Redis")
        self.assertLess(rate, 1.5 * RATE, "instances multiplied the rate")
        # b alone keeps admitting at the rate: it ticks this queue too
        self.assertEqual(a.terminate(), 0, "waitroomd exit code on SIGTERM")
        t1 = time.monotonic()
        s2 = Sampler(self, q, b.client)
        s2.run(1.6, 0.05)
        s2.assert_rate(t1 + 0.2, t1 + 1.6, "after one instance stopped")
        # FIFO across instances: the head of the line is the next arrival
        n = s2.sample()[1]
        r = b.client.me(q, "u%03d" % 299)
        self.assertEqual(r.status, 200, repr(r))
        if r.json["status"] == "waiting":
            self.assertLessEqual(abs(r.json["position"] - (300 - n)), 2 * PER_TICK + 1, repr(r))
        b.client.delete_queue(q)
        self.assertEqual(b.terminate(), 0, "waitroomd exit code on SIGTERM")
