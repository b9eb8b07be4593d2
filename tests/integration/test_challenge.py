"""Join challenges (challengeBits, GET .../challenge, 403 CHALLENGE_REQUIRED):
docs/API.md, "Version 1.2 additions", "A place costs work". Low bits (a few
hundred hashes in Python) keep every test fast."""
import html

from harness import ENV, FAST, HOLD, Waitroomd, WRTest, now_ms, uid
from helpers import ALPHABET, bearer, BITS, digest_bits, invite, KEY, metric, solve, vid_of


def unsolve(challenge, bits):
    """A well-formed nonce with fewer than bits zero bits."""
    i = 0
    while digest_bits(challenge, "x%d" % i) >= bits:
        i += 1
    return "x%d" % i


class ChallengeBase(WRTest):

    def get_challenge(self, q, user, client=None, headers=None):
        c = client or self.c
        r = c.get("/v1/queues/%s/challenge" % q, c.uh(user, headers))
        self.assertEqual(r.status, 200, r)
        self.assertJsonHeaders(r)
        return r

    def post(self, q, user, body, client=None, headers=None, raw=None):
        c = client or self.c
        h = c.uh(user, headers)
        if raw is not None:
            h["Content-Type"] = "application/json"
            return c.request("POST", "/v1/queues/%s/entries" % q, h, raw.encode())
        return c.request("POST", "/v1/queues/%s/entries" % q, h, body)

    def solved(self, q, user, bits=BITS, client=None, headers=None):
        ch = self.get_challenge(q, user, client, headers).json["challenge"]
        return {"challenge": ch, "nonce": solve(ch, bits)}

    def assertRequired(self, r, reason, bits=BITS, what=""):
        self.assertError(r, 403, "CHALLENGE_REQUIRED", what)
        self.assertEqual(r.json.get("reason"), reason, "%s: %r" % (what, r))
        self.assertTrue(ALPHABET.match(r.json["challenge"]), r)
        self.assertEqual(r.json["bits"], bits, r)
        self.assertGreaterEqual(r.json["expiresAt"], now_ms() + 119000, r)


class ChallengeRoute(ChallengeBase):

    def test_config_field(self):
        q = self.new_queue(HOLD)
        self.assertEqual(self.config(q)["challengeBits"], 0)
        r = self.c.patch_queue(q, {"challengeBits": 32})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.config(q)["challengeBits"], 32)
        for bad in (33, -1, 1.5, "8", None, True):
            r = self.c.patch_queue(q, {"challengeBits": bad})
            self.assertError(r, 400, "INVALID_CONFIG", "challengeBits=%r" % (bad,))
            self.assertIn("challengeBits", r.json["message"] + r.json.get("field", ""))
        self.assertEqual(self.config(q)["challengeBits"], 32)

    def test_challenge_shape_and_no_store_write(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        before = self.stats(q)
        t0 = now_ms()
        r = self.get_challenge(q, "u1")
        self.assertEqual(set(r.json), {"challenge", "bits", "expiresAt"})
        self.assertTrue(ALPHABET.match(r.json["challenge"]), r)
        self.assertEqual(r.json["bits"], BITS)
        self.assertGreaterEqual(r.json["expiresAt"], t0 + 120000)
        self.assertLess(r.json["expiresAt"], t0 + 3600000)
        self.assertEqual(self.stats(q), before, "issuing changes nothing")
        # off: still answers, with bits 0
        q0 = self.new_queue(HOLD)
        self.assertEqual(self.get_challenge(q0, "u1").json["bits"], 0)
        # unknown queue, bad name, no identity header
        self.assertError(self.c.get("/v1/queues/%s/challenge" % uid("nope"), self.c.uh("u1")),
                         404, "QUEUE_NOT_FOUND")
        self.assertError(self.c.get("/v1/queues/bad%20name/challenge", self.c.uh("u1")),
                         400, "INVALID_QUEUE_NAME")
        self.assertError(self.c.get("/v1/queues/%s/challenge" % q), 400, "INVALID_USER_ID")

    def test_join_needs_a_solution(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        r = self.c.join(q, "u1")
        self.assertRequired(r, "missing")
        self.assertEqual(self.stats(q)["waiting"], 0, "a refusal changes nothing")
        # the inline challenge is the caller's: solve it and join
        body = {"challenge": r.json["challenge"], "nonce": solve(r.json["challenge"], BITS)}
        r = self.post(q, "u1", body)
        self.assertWaiting(r, 1, 1, eta_null=True)

    def test_reasons(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        q2 = self.new_queue(dict(HOLD, challengeBits=BITS))
        ch = self.get_challenge(q, "u1").json["challenge"]
        good = solve(ch, BITS)
        cases = [
            ("empty object", None, "{}", "missing"),
            ("null challenge", {"challenge": None, "nonce": good}, None, "missing"),
            ("not JSON", None, "garbage", "malformed"),
            ("an array", None, "[1]", "malformed"),
            ("a number", {"challenge": 5, "nonce": good}, None, "malformed"),
            ("no nonce", {"challenge": ch}, None, "malformed"),
            ("nonce not [A-Za-z0-9]", {"challenge": ch, "nonce": "a-b"}, None, "malformed"),
            ("nonce too long", {"challenge": ch, "nonce": "a" * 65}, None, "malformed"),
            ("empty nonce", {"challenge": ch, "nonce": ""}, None, "malformed"),
            ("garbage challenge", {"challenge": "x.y.z", "nonce": good}, None, "malformed"),
            ("edited bits", {"challenge": "1.0." + ch.split(".", 2)[2], "nonce": good}, None,
             "malformed"),
            ("too long", {"challenge": "A" * 300, "nonce": good}, None, "malformed"),
            ("too few bits", {"challenge": ch, "nonce": unsolve(ch, BITS)}, None,
             "insufficient"),
        ]
        for what, body, raw, reason in cases:
            r = self.post(q, "u1", body, raw=raw)
            self.assertRequired(r, reason, what=what)
        # another visitor's, another queue's
        self.assertRequired(self.post(q, "u2", {"challenge": ch, "nonce": good}), "wrongUser")
        self.assertRequired(self.post(q2, "u1", {"challenge": ch, "nonce": good}), "wrongUser")
        self.assertEqual(self.stats(q)["waiting"], 0)
        self.assertEqual(self.stats(q2)["waiting"], 0)
        # the queue's bits raised after the solve: insufficient unless the
        # nonce happens to have the new bits (it counts by its own)
        self.c.patch_queue(q, {"challengeBits": 20})
        if digest_bits(ch, good) < 20:
            r = self.post(q, "u1", {"challenge": ch, "nonce": good})
            self.assertRequired(r, "insufficient", bits=20)
        self.c.patch_queue(q, {"challengeBits": 1})
        good1 = solve(ch, 1)
        self.assertWaiting(self.post(q, "u1", {"challenge": ch, "nonce": good1}), 1, 1,
                           eta_null=True, what="a 6-bit challenge solved to 1 bit, queue at 1")

    def test_one_place_per_solution_and_no_second_solve(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        body = self.solved(q, "u1")
        self.assertWaiting(self.post(q, "u1", body), 1, 1, eta_null=True)
        self.assertWaiting(self.post(q, "u1", body), 1, 1, eta_null=True, what="used again")
        # in line: joins, polls and leaves without one
        self.assertWaiting(self.c.join(q, "u1"), 1, 1, eta_null=True, what="join again, no body")
        self.assertWaiting(self.c.me(q, "u1"), 1, 1, eta_null=True)
        body2 = self.solved(q, "u2")
        self.assertWaiting(self.post(q, "u2", body2), 2, 2, eta_null=True)
        self.assertEqual(self.stats(q)["waiting"], 2, "a reused solution buys no second place")
        self.assertEqual(self.c.leave(q, "u1").status, 204)
        self.assertRequired(self.c.join(q, "u1"), "missing", what="after leaving")
        # a solved challenge buys one place, once (API 1.3): after a leave
        # it is "used", with a fresh challenge that joins
        r = self.post(q, "u1", body)
        self.assertRequired(r, "used", what="the same solution after a leave")
        self.assertEqual(self.stats(q)["waiting"], 1, "a used solution changes nothing")
        fresh = {"challenge": r.json["challenge"], "nonce": solve(r.json["challenge"], BITS)}
        self.assertWaiting(self.post(q, "u1", fresh), 2, 2, eta_null=True)
        lq = 'queue="%s"' % q
        self.assertEqual(metric(self.c, "waitroom_challenges_refused_total",
                                lq + ',reason="used"'), 1)

    def test_live_pass_needs_none(self):
        q = self.new_queue(dict(FAST, challengeBits=BITS))
        self.post(q, "u1", self.solved(q, "u1"))
        self.wait_admitted(q, "u1")
        self.assertAdmitted(self.c.join(q, "u1"))

    def test_disabled_queue_needs_none(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS, enabled=False))
        r = self.c.join(q, "u1")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json, {"status": "passthrough"})

    def test_closed_or_sold_out_asks_no_work(self):
        """A closed queue, or one with nothing left of its stock, answers a
        newcomer's join without a challenge: the closed form (no phone
        solves a proof of work to read that the sale has ended)."""
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        self.assertRequired(self.c.join(q, uid()), "missing", what="open queue")
        self.assertEqual(self.c.patch_queue(q, {"closed": True}).status, 200)
        r = self.poll_until(lambda: self.c.join(q, uid()), lambda r: r.status == 200,
                            timeout=5, what="closed answer without a challenge")
        self.assertEqual(r.json, {"status": "closed", "reason": "closed"})
        self.assertEqual(self.c.patch_queue(q, {"closed": False, "stock": 0}).status, 200)
        r = self.poll_until(lambda: self.c.join(q, uid()),
                            lambda r: r.status == 200 and r.json.get("reason") == "soldOut",
                            timeout=5, what="sold-out answer without a challenge")
        self.assertEqual(r.json, {"status": "closed", "reason": "soldOut"})
        # a restock asks for work again
        self.assertEqual(self.c.patch_queue(q, {"stock": 10}).status, 200)
        r = self.poll_until(lambda: self.c.join(q, uid()), lambda r: r.status == 403,
                            timeout=5, what="a challenge again after the restock")
        self.assertRequired(r, "missing", what="restocked queue")

    def test_stock_zero_with_a_live_pass_still_asks_work(self):
        """stock 0 while a pass is live is not sold out: a join still adds
        a person to the line (API 1.2), so it needs a solution; once the
        pass is consumed the queue is sold out and asks for none."""
        q = self.new_queue(dict(FAST, challengeBits=BITS, stock=1))
        self.assertWaiting(self.post(q, "first", self.solved(q, "first")), 1, 1)
        token = self.wait_admitted(q, "first")["token"]
        # the one unit is out on a live pass: stockLeft 0, not sold out
        st = self.poll_until(lambda: self.stats(q), lambda s: s.get("stockLeft") == 0,
                             timeout=5, what="stockLeft 0")
        self.assertIsNone(st.get("soldOutAt"), st)
        self.assertRequired(self.c.join(q, uid()), "missing", what="stock 0, pass live")
        r = self.post(q, "second", self.solved(q, "second"))
        self.assertEqual((r.status, r.json.get("status")), (200, "waiting"), r)
        # the pass is consumed (keeps its unit): sold out, no work asked
        self.assertEqual(self.c.consume(q, token).status, 200)
        r = self.poll_until(lambda: self.c.join(q, uid()),
                            lambda r: r.status == 200 and r.json.get("reason") == "soldOut",
                            timeout=5, what="sold-out answer without a challenge")
        self.assertEqual(r.json, {"status": "closed", "reason": "soldOut"})

    def test_invites_and_challenges_both_required(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS, inviteKey=KEY))
        body = self.solved(q, "alice")
        self.assertError(self.post(q, "alice", body), 403, "INVITE_REQUIRED")
        self.assertRequired(self.c.join(q, "alice", bearer(invite(q, "alice"))), "missing")
        r = self.post(q, "alice", body, headers=bearer(invite(q, "alice")))
        self.assertWaiting(r, 1, 1, eta_null=True)

    def test_any_instance_checks_any_other(self):
        """Instance B (another process, the same token secret) accepts A's."""
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        body = self.solved(q, "u1")
        w = Waitroomd(ENV.waitroomd, ENV.store_arg, ENV.secret, ENV.tmpdir,
                      identity="header:X-User-Id")
        try:
            c2 = w.client
            if ENV.store != "redis":  # the embedded store is per process
                self.assertEqual(c2.put_queue(q, dict(HOLD, challengeBits=BITS)).status, 200)
            self.assertWaiting(self.post(q, "u1", body, client=c2), 1, 1, eta_null=True)
            # and the other way round
            body2 = self.solved(q, "u2", client=c2)
            self.assertWaiting(self.post(q, "u2", body2), 2 if ENV.store == "redis" else 1,
                               eta_null=True)
            if ENV.store == "redis":
                # one place, once, on every instance: B's spent solution is used on A
                self.assertEqual(c2.leave(q, "u1").status, 204)
                self.assertRequired(self.post(q, "u1", body), "used", what="spent on B")
        finally:
            w.terminate()
        # another secret: none of ours
        w = Waitroomd(ENV.waitroomd, ENV.store_arg, "f" * 64, ENV.tmpdir,
                      identity="header:X-User-Id")
        try:
            c3 = w.client
            if ENV.store != "redis":
                c3.put_queue(q, dict(HOLD, challengeBits=BITS))
            self.assertRequired(self.post(q, "u9", self.solved(q, "u9", client=c3)), "malformed")
        finally:
            w.terminate()

    def test_metrics(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        lq = 'queue="%s"' % q
        self.c.join(q, "u1")
        self.post(q, "u1", {"challenge": "x", "nonce": "1"})
        self.post(q, "u1", self.solved(q, "u1"))
        self.assertEqual(metric(self.c, "waitroom_challenges_issued_total", lq), 3)
        self.assertEqual(metric(self.c, "waitroom_challenges_solved_total", lq), 1)
        self.assertEqual(metric(self.c, "waitroom_challenges_refused_total",
                                lq + ',reason="missing"'), 1)
        self.assertEqual(metric(self.c, "waitroom_challenges_refused_total",
                                lq + ',reason="malformed"'), 1)


class ChallengeCookieMode(ChallengeBase):

    server = "cookie"

    def test_visitor_binding(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        # the route creates the visitor; the challenge is theirs
        r = self.get_challenge(q, None)
        vid = vid_of(r)
        self.assertTrue(vid, r.set_cookies)
        ch = r.json["challenge"]
        body = {"challenge": ch, "nonce": solve(ch, BITS)}
        # another visitor (no cookie): wrongUser, and a cookie with a challenge of its own
        r = self.post(q, None, body)
        self.assertRequired(r, "wrongUser")
        vid2 = vid_of(r)
        self.assertTrue(vid2, "a 403 to a caller without a cookie sets one")
        self.assertNotEqual(vid2.split(".")[0], vid.split(".")[0])
        b2 = {"challenge": r.json["challenge"], "nonce": solve(r.json["challenge"], BITS)}
        r = self.post(q, None, b2, headers={"Cookie": "wr_vid=" + vid2})
        self.assertWaiting(r, 1, 1, eta_null=True, what="the inline challenge is bound to it")
        r = self.post(q, None, body, headers={"Cookie": "wr_vid=" + vid})
        self.assertWaiting(r, 2, 2, eta_null=True)

    def test_one_solution_one_place_whatever_the_invite(self):
        """K37: one visitor, one solved challenge, six invited accounts: one
        place; used again for that account while the place lives, it
        answers that place; for any other account it is "used"."""
        q = self.new_queue(dict(HOLD, challengeBits=BITS, inviteKey=KEY))
        r = self.get_challenge(q, None)
        vid = vid_of(r)
        h = {"Cookie": "wr_vid=" + vid}
        body = {"challenge": r.json["challenge"], "nonce": solve(r.json["challenge"], BITS)}
        r = self.post(q, None, body, headers=dict(h, **bearer(invite(q, "acct0"))))
        self.assertWaiting(r, 1, 1, eta_null=True, what="the first invite")
        for i in range(1, 6):
            r = self.post(q, None, body, headers=dict(h, **bearer(invite(q, "acct%d" % i))))
            self.assertRequired(r, "used", what="invite %d" % i)
        self.assertEqual(self.stats(q)["waiting"], 1, "six invites, one solution: one place")
        r = self.post(q, None, body, headers=dict(h, **bearer(invite(q, "acct0"))))
        self.assertWaiting(r, 1, 1, eta_null=True, what="the first account again")
        # the fresh challenge of a "used" answer is the visitor's: it buys one more
        r = self.post(q, None, body, headers=dict(h, **bearer(invite(q, "acct1"))))
        b2 = {"challenge": r.json["challenge"], "nonce": solve(r.json["challenge"], BITS)}
        r = self.post(q, None, b2, headers=dict(h, **bearer(invite(q, "acct1"))))
        self.assertWaiting(r, 2, 2, eta_null=True, what="a fresh solution")

    def test_page_does_not_join(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        r = self.c.get("/q/" + q)
        self.assertEqual(r.status, 200, r)
        self.assertIn('data-state="challenge"', r.body)
        self.assertIn("JavaScript", html.unescape(r.body))
        self.assertEqual(self.stats(q)["waiting"], 0, "the page does not join")
        vid = vid_of(r)
        self.assertTrue(vid)
        h = {"Cookie": "wr_vid=" + vid}
        self.post(q, None, self.solved(q, None, headers=h), headers=h)
        # in line: the page shows the place, with no challenge
        r = self.c.get("/q/" + q, h)
        self.assertIn('data-state="waiting"', r.body)
        self.assertIn('data-position="1"', r.body)
        self.assertEqual(self.stats(q)["waiting"], 1)
