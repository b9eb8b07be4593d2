"""An unseen pass is not a lost place (API 1.3, cases K35 and K36).

A pass that expires before any answer carried it to its holder (no join,
poll or page answer with its token) sends its holder back to held: their
next request answers position 1 with "held": true and the next tick admits
them first, ahead of people who joined later; awayHoldSeconds counts from
the expiry; the stock unit and the active slot come back as for any expired
pass; stats unseenExpiredTotal. A pass that an answer carried and that its
holder let expire is gone, as ever. Runs on both stores with passes of 1-2 s
(real waits of a few seconds)."""
import time

from harness import WRTest, uid


class Unseen(WRTest):

    def test_admitted_while_asleep_is_held(self):
        """K35: position 2, one poll, then the phone sleeps. The next tick
        admits them; the pass (2 s) expires unseen. On waking: held, then
        admitted first at the next tick, ahead of people who joined after
        them; the stock unit and the active slot came back meanwhile."""
        q = self.new_queue({"admitPerSecond": 1, "tickMs": 100, "tokenTtlSeconds": 2,
                            "stock": 10, "paused": True})
        first, sleeper = uid("first-"), uid("sleeper-")
        self.join_ok(q, first)
        self.join_ok(q, sleeper)
        self.assertWaiting(self.c.me(q, sleeper), 2, 2, eta_null=True, what="the one poll")
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        # 1 a second: first, then the sleeper (nobody polls the sleeper)
        self.wait_admitted(q, first, timeout=5)
        st = self.poll_until(lambda: self.stats(q), lambda st: st["admittedTotal"] == 2,
                             timeout=5, interval=0.05, what="the sleeper admitted")
        self.assertEqual(self.c.patch_queue(q, {"paused": True}).status, 200)
        self.assertEqual((st["active"], st["stockLeft"]), (2, 8), st)
        later = [uid("later-") for _ in range(2)]
        for u in later:
            self.join_ok(q, u)
        # both passes expire (first's was seen: gone; the sleeper's unseen: held)
        st = self.poll_until(lambda: self.stats(q), lambda st: st["expiredTotal"] == 2,
                             timeout=6, interval=0.1, what="both passes expired")
        self.assertEqual((st["unseenExpiredTotal"], st["held"], st["active"], st["stockLeft"],
                          st["waiting"], st["abandonedTotal"]), (1, 1, 0, 10, 2, 0), st)
        self.assertError(self.c.me(q, first), 404, "NOT_IN_QUEUE", "a seen pass that expired")
        # the sleeper wakes: held, first; the later ones are behind
        b = self.held_answer(self.c.me(q, sleeper), "on waking")
        self.assertEqual(b["waiting"], 2, b)
        self.assertWaiting(self.c.me(q, later[0]), 1, 2, eta_null=True, what="held: no position")
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        st = self.poll_until(lambda: self.stats(q), lambda st: st["admittedTotal"] == 3,
                             timeout=5, interval=0.05, what="the next admission")
        self.assertEqual((st["returnedTotal"], st["held"], st["waiting"], st["stockLeft"]),
                         (1, 0, 2, 9), st)
        self.assertAdmitted(self.c.me(q, sleeper), ttl=2, what="admitted first")
        self.assertEqual(self.c.me(q, later[0]).json["status"], "waiting")

    def test_told_pass_expires_gone(self):
        """The negative: a pass that a poll carried to its holder, let
        expire, is gone as before (404; not held, not counted unseen)."""
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "tokenTtlSeconds": 1})
        u = uid()
        self.join_ok(q, u)
        self.wait_admitted(q, u, timeout=5)
        st = self.poll_until(lambda: self.stats(q), lambda st: st["expiredTotal"] == 1,
                             timeout=5, interval=0.1, what="the pass expired")
        self.assertEqual((st["unseenExpiredTotal"], st["held"], st["active"]), (0, 0, 0), st)
        self.assertError(self.c.me(q, u), 404, "NOT_IN_QUEUE", "told, then let expire")

    def test_page_answer_carries_the_pass(self):
        """The queue page that renders the admitted state carries the token:
        that pass, let expire, is gone (not held)."""
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "tokenTtlSeconds": 1,
                            "paused": True})
        u = uid()
        self.join_ok(q, u)
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        self.poll_until(lambda: self.stats(q), lambda st: st["admittedTotal"] == 1, timeout=5,
                        what="admitted")
        r = self.c.request("GET", "/q/" + q, {"X-User-Id": u, "Accept": "text/html"})
        self.assertEqual(r.status, 200, repr(r))
        self.assertIn("admitted", r.body)
        st = self.poll_until(lambda: self.stats(q), lambda st: st["expiredTotal"] == 1,
                             timeout=5, interval=0.1, what="the pass expired")
        self.assertEqual((st["unseenExpiredTotal"], st["held"]), (0, 0), st)
        self.assertError(self.c.me(q, u), 404, "NOT_IN_QUEUE", "the page carried it")

    def test_far_back_advice_outlives_the_pass(self):
        """K36: far back at 1/s, told to come back in a tenth of the wait
        (pollMaxMs); the rate rises, everyone is admitted at once with passes
        of 1 s. Coming back as told finds them held - never gone - and the
        next tick admits them."""
        q = self.new_queue({"admitPerSecond": 1, "tickMs": 100, "tokenTtlSeconds": 1,
                            "paused": True})
        ahead = [uid("ahead-") for _ in range(39)]
        far = uid("far-")
        for u in ahead + [far]:
            self.join_ok(q, u)
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        r = self.c.me(q, far)
        self.assertWaiting(r, 40, 40, what="far back")
        told = r.json["retryAfterMs"]
        self.assertGreater(told, 2500, "advice longer than the pass: %r" % r)
        t0 = time.monotonic()
        self.assertEqual(self.c.patch_queue(q, {"admitPerSecond": 1000}).status, 200)
        self.poll_until(lambda: self.stats(q), lambda st: st["admittedTotal"] == 40, timeout=5,
                        what="everyone admitted at the raised rate")
        time.sleep(max(0, told / 1000 - (time.monotonic() - t0)))
        self.held_answer(self.c.me(q, far), "came back as told")
        self.wait_admitted(q, far, timeout=5)
        st = self.stats(q)
        self.assertEqual(st["unseenExpiredTotal"], 40, st)
        self.assertGreaterEqual(st["returnedTotal"], 1, st)

    def test_advice_never_outlives_pass_and_hold(self):
        """K36, the rest: with a short awayHoldSeconds the advice itself is
        capped at tokenTtlSeconds + awayHoldSeconds, so coming back as told
        is in time even for someone admitted right after the answer."""
        q = self.new_queue({"admitPerSecond": 1, "tickMs": 100, "tokenTtlSeconds": 1,
                            "awayHoldSeconds": 1, "paused": True})
        users = [uid() for _ in range(40)]
        for u in users:
            self.join_ok(q, u)
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        for _ in range(3):
            r = self.c.me(q, users[-1])
            self.assertWaiting(r, 40, 40, what="far back")
            self.assertLessEqual(r.json["retryAfterMs"], 2000, repr(r))
            self.assertGreaterEqual(r.json["retryAfterMs"], 1500, repr(r))
        # without the short hold the same person is told a tenth of the wait
        self.assertEqual(self.c.patch_queue(q, {"awayHoldSeconds": 1800}).status, 200)
        r = self.c.me(q, users[-1])
        self.assertGreater(r.json["retryAfterMs"], 3000, repr(r))

