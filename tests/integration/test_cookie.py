"""Cookie identity mode (the default): the signed wr_vid visitor cookie."""
import jwtutil
from harness import ENV, FAST, HOLD, WRTest, uid
from helpers import parse_set_cookie


def tamper(value):
    """Changes the first character (full 6 data bits, unlike the last one)."""
    return ("B" if value[0] != "B" else "C") + value[1:]


class CookieMode(WRTest):

    server = "cookie"

    def vid_cookie(self, r):
        found = [parse_set_cookie(v) for v in r.set_cookies]
        found = [f for f in found if f[0] == "wr_vid"]
        self.assertEqual(len(found), 1, "exactly one wr_vid Set-Cookie: %r" % r.set_cookies)
        return found[0]

    def join_c(self, q, cookie=None, extra=None):
        h = dict(extra or {})
        if cookie is not None:
            h["Cookie"] = "wr_vid=" + cookie
        return self.c.join(q, None, h)

    def test_first_join_sets_the_cookie(self):
        q = self.new_queue(HOLD)
        r = self.join_c(q)
        self.assertWaiting(r, 1, 1, eta_null=True)
        name, val, attrs = self.vid_cookie(r)
        self.assertTrue(val, "cookie value is empty")
        self.assertIs(attrs.get("httponly"), True, "HttpOnly: %r" % r.set_cookies)
        self.assertEqual(str(attrs.get("samesite", "")).lower(), "lax", repr(r.set_cookies))
        self.assertEqual(attrs.get("path"), "/", repr(r.set_cookies))
        self.assertNotIn("secure", attrs, "Secure is off unless configured")

    def test_cookie_is_the_same_user_in_two_tabs(self):
        q = self.new_queue(HOLD)
        r1 = self.join_c(q)
        _, v1, _ = self.vid_cookie(r1)
        r2 = self.join_c(q)
        _, v2, _ = self.vid_cookie(r2)
        self.assertNotEqual(v1, v2, "two visitors without cookies get different ids")
        self.assertWaiting(r2, 2, 2, eta_null=True)
        for tab in range(2):
            self.assertWaiting(self.join_c(q, v1), 1, 2, eta_null=True, what="tab %d" % tab)
            self.assertWaiting(self.c.me(q, None, {"Cookie": "wr_vid=" + v1}), 1, 2,
                               eta_null=True, what="me tab %d" % tab)
        # the cookie among others in the Cookie header
        r = self.c.me(q, None, {"Cookie": "a=1; wr_vid=%s; b=2" % v2})
        self.assertWaiting(r, 2, 2, eta_null=True, what="cookie among others")
        self.assertEqual(self.stats(q)["waiting"], 2)

    def test_tampered_cookie_is_a_new_visitor(self):
        q = self.new_queue(HOLD)
        _, v1, _ = self.vid_cookie(self.join_c(q))
        bad = tamper(v1)
        r = self.join_c(q, bad)
        self.assertWaiting(r, 2, 2, eta_null=True, what="tampered cookie joins as new")
        _, v2, _ = self.vid_cookie(r)
        self.assertNotEqual(v2, v1)
        self.assertNotEqual(v2, bad)
        self.assertWaiting(self.join_c(q, v1), 1, 2, eta_null=True, what="original still 1")
        # other garbage values are also just new visitors
        for junk in ["", "x", v1 + "x", v1.split(".")[0] if "." in v1 else v1[:22]]:
            with self.subTest(junk=junk):
                r = self.join_c(q, junk)
                self.assertEqual(r.status, 200, repr(r))
                self.assertEqual(r.json["status"], "waiting")
                self.assertGreater(r.json["position"], 2)
                self.vid_cookie(r)

    def test_me_and_leave_without_valid_cookie_are_404_and_set_no_cookie(self):
        q = self.new_queue(HOLD)
        _, v1, _ = self.vid_cookie(self.join_c(q))
        for what, h in [("no cookie", {}), ("tampered", {"Cookie": "wr_vid=" + tamper(v1)}),
                        ("other cookie", {"Cookie": "other=1"})]:
            for route, r in [("me", self.c.me(q, None, h)), ("leave", self.c.leave(q, None, h))]:
                with self.subTest(what=what, route=route):
                    self.assertError(r, 404, "NOT_IN_QUEUE", "%s %s" % (route, what))
                    self.assertEqual(r.set_cookies, [], "only a join creates a visitor")
        self.assertWaiting(self.c.me(q, None, {"Cookie": "wr_vid=" + v1}), 1, 1, eta_null=True)
        r = self.c.leave(q, None, {"Cookie": "wr_vid=" + v1})
        self.assertEqual(r.status, 204, repr(r))
        self.assertError(self.c.me(q, None, {"Cookie": "wr_vid=" + v1}), 404, "NOT_IN_QUEUE")

    def test_identity_header_is_ignored_in_cookie_mode(self):
        q = self.new_queue(HOLD)
        r1 = self.join_c(q, extra={"X-User-Id": "alice"})
        r2 = self.join_c(q, extra={"X-User-Id": "alice"})
        self.assertWaiting(r1, 1, 1, eta_null=True)
        self.assertWaiting(r2, 2, 2, eta_null=True,
                           what="X-User-Id must not identify a user in cookie mode")

    def test_cookie_user_gets_and_consumes_a_token(self):
        q = self.new_queue(FAST)
        r = self.join_c(q)
        _, v, _ = self.vid_cookie(r)
        b = self.wait_admitted(q, None, headers={"Cookie": "wr_vid=" + v})
        sub = jwtutil.decode(b["token"])[1]["sub"]
        r = self.c.consume(q, b["token"])
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(r.json, {"valid": True, "userId": sub})
        self.assertError(self.c.me(q, None, {"Cookie": "wr_vid=" + v}), 404, "NOT_IN_QUEUE")


class CookieUnknownQueue(WRTest):
    """Without a visitor cookie, entries/me answers NOT_IN_QUEUE for a queue
    that exists and QUEUE_NOT_FOUND for one that does not."""

    def test_no_cookie_unknown_queue_is_queue_not_found(self):
        c = ENV.cookie.client
        q = self.new_queue(HOLD, client=c)
        for method in ("GET", "DELETE"):
            r = c.request(method, "/v1/queues/%s/entries/me" % q, {})
            self.assertError(r, 404, "NOT_IN_QUEUE", "%s, known queue" % method)
            self.assertNotIn("set-cookie", r.headers)
            r = c.request(method, "/v1/queues/no-such-queue-%s/entries/me" % uid(), {})
            self.assertError(r, 404, "QUEUE_NOT_FOUND", "%s, unknown queue" % method)
            self.assertNotIn("set-cookie", r.headers)

    def test_refused_join_creates_no_visitor(self):
        """A join refused by the store (unknown queue, full line) sets no
        wr_vid cookie: an error creates no visitor."""
        c = ENV.cookie.client
        r = c.join("no-such-queue-" + uid(), None, {})
        self.assertError(r, 404, "QUEUE_NOT_FOUND")
        self.assertEqual(r.set_cookies, [])
        q = self.new_queue(dict(HOLD, maxQueueSize=1), client=c)
        first = c.join(q, None, {})
        self.assertEqual(first.status, 200)
        self.assertEqual(len(first.set_cookies), 1)
        r = c.join(q, None, {})
        self.assertError(r, 429, "QUEUE_FULL")
        self.assertEqual(r.set_cookies, [])
