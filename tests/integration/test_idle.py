"""People who stop asking (API 1.1, queue config idleTimeoutSeconds, default
120 s), as 1.2 ("Away, not gone") changed it: a waiting user whose last join
or poll is older is away and keeps their place (nobody is removed for being
away; test_away.py has the held people); a polling user is unaffected. A join
by fetching the queue page counts only from the visitor's next request, so a
link scanner that fetched once is never admitted, holds no slot (K20) and
leaves idleTimeoutSeconds after the fetch (abandonedTotal); API joins count at
once. Runs on both stores (the timeouts here are real waits of a few
seconds)."""
import time

from harness import ENV, FAST, HOLD, WRTest, uid
from helpers import parse_metrics, vid_of

IDLE = 2  # idleTimeoutSeconds of these tests


class IdleTimeout(WRTest):

    def test_config_field(self):
        q = self.new_queue(FAST)
        self.assertEqual(self.config(q)["idleTimeoutSeconds"], 120)
        for ok in (0, 1, 86400):
            r = self.c.patch_queue(q, {"idleTimeoutSeconds": ok})
            self.assertEqual(r.status, 200, repr(r))
            self.assertEqual(self.config(q)["idleTimeoutSeconds"], ok)
        for bad in (-1, 86401, 1.5, "60", True, None):
            with self.subTest(bad=bad):
                r = self.c.patch_queue(q, {"idleTimeoutSeconds": bad})
                self.assertError(r, 400, "INVALID_CONFIG", "idleTimeoutSeconds %r" % (bad,))
                self.assertEqual(r.json.get("field"), "idleTimeoutSeconds", repr(r))
        self.assertIn("abandonedTotal", self.stats(q))

    def test_following_retry_after_never_makes_a_person_idle(self):
        # a slow queue whose bands (5 s, and a custom 200 s one) outlast the
        # idle timeout: retryAfterMs is capped at half of it, and a person
        # who waits exactly that long each time keeps their place
        for bands in (None, [{"ms": 200000}]):
            cfg = dict(HOLD, idleTimeoutSeconds=IDLE)
            if bands:
                cfg["pollBands"] = bands
            q = self.new_queue(cfg)
            users = [uid() for _ in range(30)]
            last = None
            for u in users:
                r = self.c.join(q, u)
                self.assertEqual(r.status, 200, repr(r))
                ra = r.json["retryAfterMs"]
                self.assertTrue(250 <= ra <= IDLE * 1000 // 2, "retryAfterMs %d with T=%d s" % (ra, IDLE))
                last = (u, ra)
            u, ra = last
            deadline = time.monotonic() + IDLE * 2 + 1
            while time.monotonic() < deadline:
                time.sleep(ra / 1000.0)
                r = self.c.me(q, u)
                self.assertEqual(r.status, 200, "following retryAfterMs keeps the place: %r" % r)
                ra = r.json["retryAfterMs"]
                self.assertLessEqual(ra, IDLE * 1000 // 2, repr(r))
            # the 29 who stopped asking are away but keep their places (1.2);
            # the one who followed was never away
            self.assertEqual((r.json["position"], r.json["waiting"]), (30, 30), repr(r))
            st = self.poll_until(lambda: self.stats(q), lambda st: st["away"] == 29, timeout=5,
                                 what="29 away")
            self.assertEqual((st["abandonedTotal"], st["held"]), (0, 0), st)

    def test_silent_user_keeps_place_polling_user_stays(self):
        """1.2: silent for longer than idleTimeoutSeconds is away, not gone."""
        q = self.new_queue(dict(HOLD, idleTimeoutSeconds=IDLE))
        silent, polling = uid(), uid()
        self.assertWaiting(self.c.join(q, silent), 1, 1, eta_null=True)
        self.assertWaiting(self.c.join(q, polling), 2, 2, eta_null=True)
        deadline = time.monotonic() + IDLE + 2.0
        while time.monotonic() < deadline:
            r = self.c.me(q, polling)
            self.assertEqual(r.status, 200, "the polling user stays: %r" % r)
            self.assertEqual(r.json.get("status"), "waiting", repr(r))
            # well inside IDLE: on a busy machine a poll may take a second
            # (K32); asking every 0.3 s keeps the gap far from the timeout
            time.sleep(0.3)
        st = self.poll_until(lambda: self.stats(q), lambda st: st["away"] == 1, timeout=5,
                             what="the silent user away")
        self.assertEqual((st["waiting"], st["abandonedTotal"], st["leftTotal"]), (2, 0, 0), st)
        self.assertWaiting(self.c.me(q, silent), 1, 2, eta_null=True,
                           what="the silent user kept the place")
        self.assertWaiting(self.c.me(q, polling), 2, 2, eta_null=True)
        # asking again ends being away
        self.poll_until(lambda: self.stats(q)["away"], lambda v: v == 0, timeout=5,
                        what="no longer away")

    def test_late_poll_keeps_place(self):
        """However late the user asks (before or after a sweep), the place
        is kept and nothing is counted as abandoned (1.2)."""
        q = self.new_queue(dict(HOLD, idleTimeoutSeconds=1))
        u = uid()
        self.join_ok(q, u)
        time.sleep(1.4)  # Redis: 1 s + up to 1/4 (docs/API.md)
        self.assertWaiting(self.c.me(q, u), 1, 1, eta_null=True)
        self.assertWaiting(self.c.me(q, u), 1, 1, eta_null=True)
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["abandonedTotal"], st["leftTotal"]), (1, 0, 0), st)

    def test_zero_means_never(self):
        q = self.new_queue(dict(HOLD, idleTimeoutSeconds=0))
        u = uid()
        self.join_ok(q, u)
        time.sleep(IDLE + 0.5)
        self.assertWaiting(self.c.me(q, u), 1, 1, eta_null=True)
        self.assertEqual(self.stats(q)["abandonedTotal"], 0)

    def test_leave_is_left_not_abandoned(self):
        q = self.new_queue(dict(HOLD, idleTimeoutSeconds=IDLE))
        u = uid()
        self.join_ok(q, u)
        r = self.c.leave(q, u)
        self.assertIn(r.status, (200, 204), repr(r))
        st = self.stats(q)
        self.assertEqual((st["leftTotal"], st["abandonedTotal"]), (1, 0), st)

    def test_metric(self):
        """abandonedTotal counts a page join that never asked again."""
        q = self.new_queue(dict(HOLD, idleTimeoutSeconds=1))
        r = self.c.get("/q/%s" % q, {"X-User-Id": uid()})  # a scanner: one fetch
        self.assertEqual(r.status, 200, repr(r))
        self.poll_until(lambda: self.stats(q)["abandonedTotal"], lambda v: v == 1,
                        timeout=5, what="abandonedTotal 1")

        def abandoned():
            r = self.c.get("/metrics")
            self.assertEqual(r.status, 200, repr(r))
            samples, types = parse_metrics(r.body)
            self.assertEqual(types.get("waitroom_queue_abandoned_total"), "counter")
            v = [s[2] for s in samples
                 if s[0] == "waitroom_queue_abandoned_total" and s[1].get("queue") == q]
            return v[0] if v else None
        self.poll_until(abandoned, lambda v: v == 1, timeout=5, what="the metric")


class PageJoins(WRTest):
    """Cookie mode, as browsers and link scanners meet it."""

    server = "cookie"

    def page(self, q, vid=None):
        h = {"Cookie": "wr_vid=" + vid} if vid else {}
        r = self.c.get("/q/%s" % q, h)
        self.assertEqual(r.status, 200, repr(r))
        return r

    def me(self, q, vid):
        return self.c.me(q, None, {"Cookie": "wr_vid=" + vid})

    def test_k20_link_scanners(self):
        """maxActive 5, high rate; five cookieless GET /q/{queue} with no
        later request; then a person who joins and polls is admitted at
        once, and none of the five is admitted or holds a slot."""
        q = self.new_queue(dict(FAST, maxActive=5))
        for _ in range(5):
            self.page(q)
        time.sleep(0.5)  # several ticks
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["active"], st["admittedTotal"]), (5, 0, 0), st)
        r = self.c.join(q, None, {})
        self.assertEqual(r.status, 200, repr(r))
        vid = vid_of(r)
        self.assertTrue(vid, repr(r.set_cookies))
        t0 = time.monotonic()
        self.wait_admitted(q, None, timeout=5, headers={"Cookie": "wr_vid=" + vid})
        self.assertLess(time.monotonic() - t0, 2.0, "admitted at once")
        time.sleep(0.5)
        st = self.stats(q)
        self.assertEqual((st["active"], st["admittedTotal"], st["waiting"]), (1, 1, 5), st)

    def test_page_visitor_who_asks_again_is_admitted(self):
        q = self.new_queue(FAST)
        scanner = vid_of(self.page(q))
        polled = vid_of(self.page(q))
        refreshed = vid_of(self.page(q))
        self.assertTrue(scanner and polled and refreshed)
        time.sleep(0.3)
        self.assertEqual(self.stats(q)["admittedTotal"], 0, "page joins wait for a request")
        # the page's own poll
        self.wait_admitted(q, None, timeout=5, headers={"Cookie": "wr_vid=" + polled})
        # a refresh of the page
        self.page(q, refreshed)
        self.poll_until(lambda: self.stats(q)["admittedTotal"], lambda v: v == 2, timeout=5,
                        what="the refreshed visitor admitted")
        self.assertEqual(self.me(q, refreshed).json.get("status"), "admitted")
        time.sleep(0.3)
        st = self.stats(q)
        self.assertEqual((st["admittedTotal"], st["waiting"]), (2, 1), st)

    def test_scanner_removed_by_idle_timeout(self):
        q = self.new_queue(dict(FAST, idleTimeoutSeconds=IDLE))
        for _ in range(2):
            self.page(q)
        self.assertEqual(self.stats(q)["waiting"], 2)
        self.poll_until(lambda: self.stats(q), lambda st: st["waiting"] == 0,
                        timeout=IDLE + 4, interval=0.25, what="scanners removed")
        st = self.stats(q)
        self.assertEqual((st["abandonedTotal"], st["admittedTotal"], st["leftTotal"]), (2, 0, 0),
                         st)

    def test_api_join_counts_at_once(self):
        q = self.new_queue(FAST)
        self.page(q)  # a scanner ahead
        r = self.c.join(q, None, {})
        self.assertEqual(r.status, 200, repr(r))
        vid = vid_of(r)
        self.poll_until(lambda: self.stats(q)["admittedTotal"], lambda v: v == 1, timeout=5,
                        what="the API join admitted without a poll")
        self.assertEqual(self.me(q, vid).json.get("status"), "admitted")
