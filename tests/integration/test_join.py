"""Joining, polling (entries/me) and leaving, in header mode."""
import time

import jwtutil
from harness import FAST, HOLD, SLOW, WRTest, uid


class Join(WRTest):

    def test_waiting_body_positions_are_one_based(self):
        # 0.125/s: eta = 8 * position, nobody admitted for ~8 s; pollMaxMs 0:
        # the bands alone (1.2's far polls would answer a tenth of the
        # expected wait, 1.6 s at position 2: test_away.py)
        q = self.new_queue(dict(SLOW, pollMaxMs=0))
        users = [uid() for _ in range(3)]
        for i, u in enumerate(users, start=1):
            b = self.assertWaiting(self.c.join(q, u), i, i, rate=0.125, what="join #%d" % i)
            self.assertEqual(b["etaSeconds"], 8 * i)
            self.assertTrue(900 <= b["retryAfterMs"] <= 1100,
                            "default band 1000 ms +/- 10%%: %r" % b)
        b = self.assertWaiting(self.c.me(q, users[0]), 1, 3, rate=0.125, what="me #1")
        self.assertEqual(b["ahead"], 0)
        self.assertWaiting(self.c.me(q, users[2]), 3, 3, rate=0.125, what="me #3")

    def test_eta_uses_the_rate(self):
        q = self.new_queue({"admitPerSecond": 0.25})   # eta = ceil(p / 0.25) = 4p
        for i in range(1, 4):
            self.assertWaiting(self.c.join(q, uid()), i, i, rate=0.25, what="join #%d" % i)

    def test_retry_after_default_bands_and_jitter(self):
        q = self.new_queue(HOLD)
        users = [uid() for _ in range(101)]
        values = []
        for i, u in enumerate(users, start=1):
            b = self.assertWaiting(self.c.join(q, u), i, i, eta_null=True, what="join #%d" % i)
            if i <= 100:
                self.assertTrue(900 <= b["retryAfterMs"] <= 1100,
                                "position %d: 1000 ms +/- 10%%: %r" % (i, b))
                values.append(b["retryAfterMs"])
            else:
                self.assertTrue(2700 <= b["retryAfterMs"] <= 3300,
                                "position 101: 3000 ms +/- 10%%: %r" % b)
        self.assertGreater(len(set(values)), 5,
                           "jitter must spread a crowd that joined together: %r" % values[:20])

    def test_retry_after_custom_bands_and_floor(self):
        q = self.new_queue(dict(HOLD, pollBands=[{"upTo": 2, "ms": 250}, {"upTo": 4, "ms": 2000},
                                                 {"ms": 6000}], pollJitter=0.5))
        users = [uid() for _ in range(6)]
        for u in users:
            self.join_ok(q, u)
        lows = 0
        for _ in range(15):
            for i, u in enumerate(users, start=1):
                b = self.assertWaiting(self.c.me(q, u), i, 6, eta_null=True)
                ms = b["retryAfterMs"]
                if i <= 2:
                    self.assertTrue(250 <= ms <= 375, "pos %d band 250 +/-50%%, floor 250: %d"
                                    % (i, ms))
                    lows += ms == 250
                elif i <= 4:
                    self.assertTrue(1000 <= ms <= 3000, "pos %d band 2000 +/-50%%: %d" % (i, ms))
                else:
                    self.assertTrue(3000 <= ms <= 9000, "pos %d band 6000 +/-50%%: %d" % (i, ms))
        # half of the jittered values fall below 250 and must be raised to it
        self.assertGreater(lows, 0, "expected some polls clamped to the 250 ms floor")

    def test_no_jitter_gives_the_band_exactly(self):
        q = self.new_queue(dict(HOLD, pollBands=[{"upTo": 1, "ms": 700}, {"ms": 1300}],
                                pollJitter=0))
        a, b = uid(), uid()
        self.assertEqual(self.join_ok(q, a)["retryAfterMs"], 700)
        self.assertEqual(self.join_ok(q, b)["retryAfterMs"], 1300)

    def test_rejoin_keeps_the_place(self):
        q = self.new_queue(HOLD)
        a, b, c, d = (uid() for _ in range(4))
        for i, u in enumerate((a, b, c), start=1):
            self.assertWaiting(self.c.join(q, u), i, i, eta_null=True)
        self.assertWaiting(self.c.join(q, a), 1, 3, eta_null=True, what="rejoin a")
        self.assertWaiting(self.c.join(q, b), 2, 3, eta_null=True, what="rejoin b")
        self.assertWaiting(self.c.join(q, d), 4, 4, eta_null=True, what="d joins behind")
        for _ in range(3):
            self.assertWaiting(self.c.join(q, b), 2, 4, eta_null=True, what="rejoin b again")
            self.assertWaiting(self.c.join(q, c), 3, 4, eta_null=True, what="rejoin c")
        self.assertWaiting(self.c.me(q, d), 4, 4, eta_null=True)
        self.assertEqual(self.stats(q)["waiting"], 4)

    def test_admitted_body_and_rejoin_while_admitted(self):
        ttl = 120
        q = self.new_queue(dict(FAST, tokenTtlSeconds=ttl))
        u = uid()
        self.join_ok(q, u)
        b = self.wait_admitted(q, u)
        self.assertAdmitted(self.c.me(q, u), ttl=ttl, what="me admitted")
        self.assertEqual(sorted(b), ["expiresAt", "status", "token"], "admitted body keys: %r" % b)
        h, p, _, _ = jwtutil.decode(b["token"])
        self.assertEqual(p["sub"], u)
        self.assertAlmostEqual(b["expiresAt"] / 1000.0, p["exp"], delta=1.0,
                               msg="expiresAt (ms) and the token's exp (s) agree")
        # joining again while admitted keeps the admission and the same token id
        r = self.c.join(q, u)
        b2 = self.assertAdmitted(r, ttl=ttl, what="rejoin admitted")
        self.assertEqual(jwtutil.decode(b2["token"])[1]["jti"], p["jti"])
        self.assertEqual(b2["expiresAt"], b["expiresAt"])
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["active"], st["admittedTotal"]), (0, 1, 1))

    def test_a_body_that_is_not_a_json_object_is_400_and_joins_nobody(self):
        # API.md: "a body that is not the JSON the route expects is 400
        # BAD_REQUEST"; a join's body is optional (none, or whitespace)
        q = self.new_queue(HOLD)
        url = "/v1/queues/%s/entries" % q
        bad = [b"not json", b"[1]", b"5", b'"x"', b"null", b'{"a":1,"a":2}', b"{",
               b'{"a":"x\x00"}']
        for i, raw in enumerate(bad):
            r = self.c.request("POST", url,
                               self.c.uh("bad%d" % i, {"Content-Type": "application/json"}), raw)
            self.assertError(r, 400, "BAD_REQUEST", "body %r" % raw)
        self.assertEqual(self.stats(q)["waiting"], 0, "a refused join adds nobody")
        self.assertEqual(self.c.me(q, "bad0").status, 404)
        good = [None, b"", b"  \r\n", b"{}", b'{"somethingElse":1}']
        for i, raw in enumerate(good, start=1):
            r = self.c.request("POST", url, self.c.uh("good%d" % i), raw)
            self.assertWaiting(r, i, i, eta_null=True, what="body %r" % raw)

    def test_passthrough_when_disabled(self):
        q = self.new_queue(dict(HOLD, enabled=False))
        u = uid()
        r = self.c.join(q, u)
        self.assertEqual(r.status, 200, repr(r))
        self.assertJsonHeaders(r)
        self.assertEqual(r.json.get("status"), "passthrough", repr(r))
        self.assertNotIn("token", r.json)
        self.assertEqual(self.stats(q)["waiting"], 0, "a passthrough join does not queue")
        r = self.c.patch_queue(q, {"enabled": True})
        self.assertEqual(r.status, 200, repr(r))
        self.assertWaiting(self.c.join(q, u), 1, 1, eta_null=True, what="after enabling")

    def test_queue_full(self):
        q = self.new_queue(dict(HOLD, maxQueueSize=3))
        users = [uid() for _ in range(3)]
        for i, u in enumerate(users, start=1):
            self.assertWaiting(self.c.join(q, u), i, i, eta_null=True)
        late = uid()
        r = self.c.join(q, late)
        self.assertError(r, 429, "QUEUE_FULL", "4th join")
        ra = r.headers.get("retry-after", "")
        self.assertTrue(ra.isdigit() and int(ra) >= 1, "Retry-After integer seconds: %r" % ra)
        # users already in a full line still rejoin fine
        self.assertWaiting(self.c.join(q, users[1]), 2, 3, eta_null=True, what="rejoin full")
        self.assertWaiting(self.c.join(q, users[2]), 3, 3, eta_null=True, what="rejoin full")
        self.assertError(self.c.me(q, late), 404, "NOT_IN_QUEUE", "refused user")
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["rejectedFullTotal"]), (3, 1))
        # a free place lets the next one in, at the end
        self.assertEqual(self.c.leave(q, users[0]).status, 204)
        self.assertWaiting(self.c.join(q, late), 3, 3, eta_null=True, what="after a leave")

    def test_max_queue_size_zero_is_unlimited(self):
        q = self.new_queue(dict(HOLD, maxQueueSize=0))
        for i in range(1, 13):
            self.assertWaiting(self.c.join(q, uid()), i, i, eta_null=True)


class Me(WRTest):

    def test_not_in_queue_for_never_joined(self):
        q = self.new_queue(HOLD)
        self.assertError(self.c.me(q, uid()), 404, "NOT_IN_QUEUE", "empty queue")
        self.join_ok(q, uid())
        self.assertError(self.c.me(q, uid()), 404, "NOT_IN_QUEUE", "queue with one user")

    def test_me_has_the_join_body(self):
        q = self.new_queue(SLOW)
        a, b = uid(), uid()
        self.join_ok(q, a)
        j = self.join_ok(q, b)
        m = self.c.me(q, b)
        self.assertWaiting(m, 2, 2, rate=0.125)
        for k in ("status", "position", "ahead", "waiting", "etaSeconds"):
            self.assertEqual(m.json[k], j[k], k)
        self.assertEqual(set(m.json), set(j))

    def test_not_in_queue_after_leave_and_after_consume(self):
        q = self.new_queue(FAST)
        a, b = uid(), uid()
        tok = self.admit(q, a)
        r = self.c.consume(q, tok)
        self.assertEqual(r.status, 200, repr(r))
        self.assertError(self.c.me(q, a), 404, "NOT_IN_QUEUE", "after consume")
        h = self.new_queue(HOLD, prefix="hold")
        self.join_ok(h, b)
        self.assertEqual(self.c.leave(h, b).status, 204)
        self.assertError(self.c.me(h, b), 404, "NOT_IN_QUEUE", "after leave")

    def test_not_in_queue_after_expiry_never_position_one(self):
        q = self.new_queue(dict(FAST, tokenTtlSeconds=1))
        u = uid()
        self.join_ok(q, u)
        b = self.wait_admitted(q, u)
        deadline = time.monotonic() + 6
        seen = []
        while time.monotonic() < deadline:
            r = self.c.me(q, u)
            seen.append(r.status)
            if r.status == 404:
                break
            self.assertEqual(r.json.get("status"), "admitted",
                             "an admitted user is never back in line: %r" % r)
            time.sleep(0.05)
        self.assertError(r, 404, "NOT_IN_QUEUE", "after expiry")
        self.assertGreaterEqual(time.time() * 1000, b["expiresAt"] - 200,
                                "404 came before the token expired")
        self.assertError(self.c.me(q, u), 404, "NOT_IN_QUEUE", "still gone")

    def test_eta_null_while_paused(self):
        q = self.new_queue(dict(SLOW, paused=True))
        a, b = uid(), uid()
        self.assertWaiting(self.c.join(q, a), 1, 1, eta_null=True)
        self.assertWaiting(self.c.join(q, b), 2, 2, eta_null=True)
        self.assertWaiting(self.c.me(q, b), 2, 2, eta_null=True)
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        self.assertWaiting(self.c.me(q, b), 2, 2, rate=0.125, what="after unpause")


class Leave(WRTest):

    def test_leave_waiting_user_moves_the_next_up(self):
        q = self.new_queue(HOLD)
        a, b, c = uid(), uid(), uid()
        for u in (a, b, c):
            self.join_ok(q, u)
        r = self.c.leave(q, a)
        self.assertEqual(r.status, 204, repr(r))
        self.assertEqual(r.body, "")
        self.assertWaiting(self.c.me(q, b), 1, 2, eta_null=True, what="b moved up")
        self.assertWaiting(self.c.me(q, c), 2, 2, eta_null=True, what="c moved up")
        self.assertError(self.c.leave(q, a), 404, "NOT_IN_QUEUE", "second leave")
        self.assertError(self.c.leave(q, uid()), 404, "NOT_IN_QUEUE", "never joined")
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["leftTotal"]), (2, 1))
        # leaving and joining again goes to the back
        self.assertWaiting(self.c.join(q, a), 3, 3, eta_null=True, what="rejoin after leave")

    def test_leave_admitted_user_frees_the_slot_at_once(self):
        q = self.new_queue(FAST)
        a, b = uid(), uid()
        ta = self.admit(q, a)
        self.admit(q, b)
        self.assertEqual(self.stats(q)["active"], 2)
        r = self.c.leave(q, a)
        self.assertEqual(r.status, 204, repr(r))
        self.assertEqual(r.body, "")
        st = self.stats(q)
        self.assertEqual(st["active"], 1, "revoke frees the active slot at once: %r" % st)
        self.assertError(self.c.me(q, a), 404, "NOT_IN_QUEUE", "after revoke")
        self.assertTokenRefused(self.c.consume(q, ta), what="revoked token")
        self.assertError(self.c.leave(q, a), 404, "NOT_IN_QUEUE", "second leave")
        self.assertEqual(self.stats(q)["consumedTotal"], 0)

    def test_leave_frees_a_max_active_slot(self):
        q = self.new_queue(dict(FAST, maxActive=1))
        a, b = uid(), uid()
        self.admit(q, a)
        self.join_ok(q, b)
        time.sleep(0.3)  # several ticks: b must stay waiting while a holds the only slot
        self.assertWaiting(self.c.me(q, b), 1, 1, what="capped")
        self.assertEqual(self.c.leave(q, a).status, 204)
        self.wait_admitted(q, b, timeout=3)
