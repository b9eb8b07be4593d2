"""Degraded mode (docs/API.md 1.1, "the store is unreachable"): the fail
policies on the whole user path, fail-open passes ("fo" claim) spent once
per instance during an outage and once across instances after it, the
burns of passes spent during the outage replayed to the store, and the line
kept intact.

Each test runs its own redis-server (AOF on, so a restart keeps the queues)
and two header-mode waitroomd instances on it, then stops Redis. Redis-only
(the embedded store is never unreachable but through its breaker).
"""
import os
import random
import signal
import threading
import time

from harness import ENV, WRTest, RedisServer, Waitroomd, uid
from helpers import metrics
from jwtutil import decode

AOF = ["--appendonly", "yes", "--appendfsync", "always"]
NULLS = ("position", "ahead", "waiting", "etaSeconds")


def jti(token):
    return decode(token)[1]["jti"]


class Degraded(WRTest):

    def cluster(self):
        """A private Redis (AOF) and two instances on it."""
        self.redis_only()
        redis = RedisServer(ENV.tmpdir, extra=AOF)
        self.addCleanup(lambda: self.redis.stop())
        self.redis = redis
        ws = []
        for _ in range(2):
            w = Waitroomd(ENV.waitroomd, "redis://127.0.0.1:%d" % redis.port, ENV.secret,
                          ENV.tmpdir, identity="header:X-User-Id")
            self.addCleanup(w.kill)
            ws.append(w)
        return ws

    def known_to(self, w, q):
        """Waits until instance w has q's config (its admission ticks run:
        discovery, 1 s)."""
        self.poll_until(lambda: metrics(w).get(("waitroom_queue_enabled", 'queue="%s"' % q)),
                        lambda v: v is not None, timeout=5, what="queue known to the instance")

    def stop_redis(self, *ws):
        self.port = self.redis.port
        self.redis.stop()
        for w in ws:
            self.poll_until(lambda: w.client.get("/readyz").status, lambda s: s == 503,
                            timeout=5, what="/readyz 503 with Redis down")

    def start_redis(self, *ws):
        self.redis = RedisServer(ENV.tmpdir, port=self.port, datadir=self.redis.dir, extra=AOF)
        for w in ws:
            self.poll_until(lambda: w.client.get("/readyz").status, lambda s: s == 200,
                            timeout=15, what="/readyz 200 after Redis returned")
            # and its circuit breaker closed again (a half-open breaker still
            # answers some calls in degraded mode: K32 on a busy machine)
            self.poll_until(lambda: metrics(w).get(("waitroom_breaker_state", 'state="closed"')),
                            lambda v: v == 1, timeout=15, what="breaker closed after Redis returned")

    def assertDegradedWaiting(self, r, what=""):
        self.assertEqual(r.status, 200, "%s: %r" % (what, r))
        self.assertJsonHeaders(r, what)
        b = r.json
        self.assertEqual(b.get("status"), "waiting", "%s: %r" % (what, r))
        self.assertIs(b.get("degraded"), True, "%s: %r" % (what, r))
        for k in NULLS:
            self.assertIn(k, b, "%s: %r" % (what, r))
            self.assertIsNone(b[k], "%s: %s in %r" % (what, k, r))
        self.assertInt(b.get("retryAfterMs"), what)
        self.assertGreaterEqual(b["retryAfterMs"], 250, what)

    def assertFailOpenAdmitted(self, r, q, user, ttl, what=""):
        b = self.assertAdmitted(r, ttl=ttl, what=what)
        self.assertIs(b.get("failOpen"), True, "%s: %r" % (what, r))
        claims = decode(b["token"])[1]
        self.assertIs(claims.get("fo"), True, what)
        self.assertEqual(claims["aud"], q, what)
        self.assertEqual(claims["sub"], user, what)
        return b["token"]

    def assertFailOpenConsumed(self, r, user, what=""):
        self.assertEqual(r.status, 200, "%s: %r" % (what, r))
        self.assertEqual(r.json, {"valid": True, "userId": user, "failOpen": True}, what)

    def redis_cmd(self, *args):
        c = self.redis.client()
        try:
            return c.cmd(*args)
        finally:
            c.close()

    # ------------------------------------------------------------- limited
    def test_limited_outage_two_instances(self):
        w1, w2 = self.cluster()
        ttl = 300
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "limited",
                            "failOpenPerSecond": 5, "tokenTtlSeconds": ttl}, client=w1.client)
        other = self.new_queue({"admitPerSecond": 1000, "tickMs": 50}, client=w1.client)
        # a paused line of five (a paused queue hands out no fail-open pass:
        # test_outage_keeps_the_brakes; so the passes come from q)
        held = self.new_queue({"admitPerSecond": 1000, "paused": True, "failPolicy": "limited"},
                              client=w1.client)
        # two ordinary tokens
        u_ord1, u_ord2 = uid("ord-"), uid("ord-")
        t_ord1 = self.admit(q, u_ord1, client=w1.client)
        t_ord2 = self.admit(q, u_ord2, client=w1.client)
        line = [uid("line-") for _ in range(5)]
        for i, u in enumerate(line):
            self.assertEqual(self.join_ok(held, u, client=w1.client)["position"], i + 1)
        self.known_to(w2, q)
        self.known_to(w1, other)
        self.known_to(w1, held)
        self.stop_redis(w1, w2)

        # joins: within the per-instance budget (burst 5 + 5/s), the rest
        # told to wait without a place
        t0 = time.monotonic()
        res = [(u, w1.client.join(q, u)) for u in [uid("new-") for _ in range(30)]]
        elapsed = time.monotonic() - t0
        admitted = []
        for u, r in res:
            if r.status == 200 and r.json.get("status") == "admitted":
                admitted.append((u, self.assertFailOpenAdmitted(r, q, u, ttl, "join " + u)))
            else:
                self.assertDegradedWaiting(r, "join " + u)
        self.assertGreaterEqual(len(admitted), 5, "the burst of one second")
        self.assertLessEqual(len(admitted), 5 + 5 * elapsed + 1,
                             "%d admitted in %.2f s" % (len(admitted), elapsed))
        # entries/me answers alike (someone never seen: no store needed)
        u = uid()
        r = w1.client.me(q, u)
        if r.json.get("status") == "admitted":  # the budget refilled meanwhile
            admitted.append((u, self.assertFailOpenAdmitted(r, q, u, ttl, "status")))
        else:
            self.assertDegradedWaiting(r, "status")
        self.assertEqual(len(set(jti(t) for _, t in admitted)), len(admitted), "fresh jtis")
        (f1_user, f1), (f2_user, f2) = admitted[0], admitted[1]

        # a fail-open pass: once on this instance
        self.assertEqual(w1.client.verify(q, f1).status, 204)
        self.assertFailOpenConsumed(w1.client.consume(q, f1), f1_user, "fo consume")
        self.assertTokenRefused(w1.client.consume(q, f1), "consumed", "fo consume again")
        self.assertEqual(w1.client.verify(q, f1).status, 403, "verify of a spent pass")
        self.assertEqual(w1.client.verify(q, f2).status, 204, "verify of an unspent pass")
        # no token, garbage, another queue's token: 403 whatever the store's state
        self.assertTokenRefused(w1.client.consume(q), "missing")
        self.assertTokenRefused(w1.client.consume(q, "garbage.token.here"))
        self.assertTokenRefused(w1.client.consume(q, f1[:-3] + "AAA"))
        self.assertTokenRefused(w1.client.consume(other, f2), "wrong_queue")
        # an ordinary token: once per instance, from the same budget
        time.sleep(1.3)
        self.assertFailOpenConsumed(w1.client.consume(q, t_ord1), u_ord1, "ordinary consume")
        self.assertTokenRefused(w1.client.consume(q, t_ord1), "consumed")
        m = metrics(w1)
        lbl = 'queue="%s"' % q
        self.assertEqual(m.get(("waitroom_fail_open_admitted_total", lbl)), len(admitted))
        self.assertEqual(m.get(("waitroom_fail_open_consumed_total", lbl)), 2)

        self.start_redis(w1, w2)
        # the burns are replayed: the pass and the ordinary token are spent
        # in the store
        key = "wr:{%s}:burned" % q
        self.poll_until(lambda: self.redis_cmd("ZSCORE", key, jti(f1)), lambda v: v is not None,
                        timeout=10, what="the fail-open burn replayed")
        self.poll_until(lambda: self.redis_cmd("HEXISTS", "wr:{%s}:tokens" % q, u_ord1),
                        lambda v: v == 0, timeout=10, what="the ordinary consume replayed")
        self.assertTokenRefused(w2.client.consume(q, f1), "consumed", "fo pass on instance 2")
        self.assertEqual(w2.client.verify(q, f1).status, 403)
        self.assertTokenRefused(w2.client.consume(q, t_ord1), None, "ordinary token after")
        # an unspent pass: once across both instances
        self.assertEqual(w2.client.verify(q, f2).status, 204)
        self.assertFailOpenConsumed(w2.client.consume(q, f2), f2_user, "unspent pass")
        self.assertTokenRefused(w1.client.consume(q, f2), "consumed")
        self.assertTokenRefused(w2.client.consume(q, f2), "consumed")
        # an ordinary token untouched during the outage: as ever
        r = w2.client.consume(q, t_ord2)
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(r.json, {"valid": True, "userId": u_ord2})
        # the line is intact, in order
        for i, u in enumerate(line):
            self.assertWaiting(w1.client.me(held, u), i + 1, what="after the outage")
        self.assertEqual(w1.terminate(), 0)
        self.assertEqual(w2.terminate(), 0)

    # --------------------------------------------------------- open, closed
    def test_open_and_closed(self):
        w1, w2 = self.cluster()
        qo = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "open",
                             "failOpenPerSecond": 1}, client=w1.client)
        qc = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "closed"},
                            client=w1.client)
        u_c = uid()
        t_c = self.admit(qc, u_c, client=w1.client)
        self.assertEqual(w1.client.patch_queue(qc, {"paused": True}).status, 200)
        waiting = uid()
        self.join_ok(qc, waiting, client=w1.client)
        self.stop_redis(w1)
        # open: no cap (failOpenPerSecond is not looked at)
        for i in range(20):
            u = uid()
            self.assertFailOpenAdmitted(w1.client.join(qo, u), qo, u, 300, "open join %d" % i)
        u = uid()
        self.assertFailOpenAdmitted(w1.client.me(qo, u), qo, u, 300, "open status")
        # closed: 503 everywhere, nobody admitted
        for r in (w1.client.join(qc, uid()), w1.client.me(qc, waiting), w1.client.me(qc, u_c),
                  w1.client.consume(qc, t_c), w1.client.verify(qc, t_c)):
            self.assertError(r, 503, "STORE_UNAVAILABLE", repr(r))
            self.assertTrue(r.headers.get("retry-after", "").isdigit())
        # the queue page of a closed queue says unavailable
        r = w1.client.get("/q/%s" % qc, {"X-User-Id": uid()})
        self.assertEqual(r.status, 503)
        # a queue this instance does not know: 503
        self.assertError(w1.client.join("never-seen-" + uid()[:8], uid()), 503,
                         "STORE_UNAVAILABLE")
        # a bad token is 403 even when the queue is unknown
        self.assertTokenRefused(w1.client.consume("never-seen-q", "garbage"))
        m = metrics(w1)
        self.assertEqual(m.get(("waitroom_fail_open_admitted_total", 'queue="%s"' % qo)), 21)
        self.assertIsNone(m.get(("waitroom_fail_open_admitted_total", 'queue="%s"' % qc)))
        self.start_redis(w1)
        self.assertWaiting(w1.client.me(qc, waiting), 1, what="closed line kept")
        r = w1.client.consume(qc, t_c)
        self.assertEqual(r.status, 200, "the closed queue's token was never spent: %r" % r)
        self.assertEqual(w1.terminate(), 0)

    def test_outage_longer_than_idle_timeout_keeps_the_line(self):
        """Redis down for longer than idleTimeoutSeconds x 5/4: nobody could
        record a poll, so when it is back nobody counts as away at once
        (the gap in admission ticks starts a grace of T x 5/4 + 10 s); the
        people who ask again keep their places, and those who never do are
        away after the grace and still keep theirs (docs/API.md 1.2, "Away,
        not gone")."""
        w1, w2 = self.cluster()
        idle = 2
        q = self.new_queue({"admitPerSecond": 1, "paused": True, "idleTimeoutSeconds": idle,
                            "failPolicy": "closed"}, client=w1.client)
        self.known_to(w1, q)
        self.known_to(w2, q)
        # joined just before Redis stops (well within the 2 s timeout)
        users = [uid("g") for _ in range(6)]
        for i, u in enumerate(users):
            self.assertWaiting(w1.client.join(q, u), i + 1, i + 1, eta_null=True)
        self.stop_redis(w1, w2)
        # the outage: more than T x 5/4 (2.5 s), and more than the 5 s
        # without a tick that marks an outage
        time.sleep(6.5)
        self.assertError(w2.client.me(q, users[0]), 503, "STORE_UNAVAILABLE", "during the outage")
        self.start_redis(w1, w2)
        back = time.monotonic()  # the grace began before this
        askers, silent = users[0::2], users[1::2]
        for i, u in enumerate(askers):
            self.assertWaiting((w1, w2)[i % 2].client.me(q, u), 2 * i + 1, 6, eta_null=True,
                               what="asking again after the outage keeps the place")
        st = self.stats(q, client=w1.client)
        self.assertEqual((st["abandonedTotal"], st["away"]), (0, 0), st)
        # the askers go on asking; the silent ones are away after the grace
        while time.monotonic() < back + idle * 5 / 4 + 10 + 1.5:
            for u in askers:
                r = w1.client.me(q, u)
                self.assertEqual(r.status, 200, "an asker stays: %r" % r)
            time.sleep(0.4)
        st = self.poll_until(lambda: self.stats(q, client=w1.client),
                             lambda st: st["away"] == 3, timeout=5, what="the silent ones away")
        self.assertEqual((st["waiting"], st["abandonedTotal"]), (6, 0), st)
        for i, u in enumerate(silent):
            self.assertWaiting(w2.client.me(q, u), 2 * i + 2, 6, eta_null=True,
                               what="silent after the grace: away, the place kept")

    def freeze_redis(self, *ws):
        """SIGSTOP of the private Redis (a stalled host: its socket stays
        open, nothing answers) until every instance's /readyz says 503."""
        pid = self.redis.proc.pid
        os.kill(pid, signal.SIGSTOP)
        self.addCleanup(lambda: self.redis.proc.poll() is None and os.kill(pid, signal.SIGCONT))
        for w in ws:
            self.poll_until(lambda: w.client.get("/readyz").status, lambda s: s == 503,
                            timeout=5, what="/readyz 503 with Redis stopped")

    def thaw_redis(self, *ws):
        os.kill(self.redis.proc.pid, signal.SIGCONT)
        for w in ws:
            self.poll_until(lambda: w.client.get("/readyz").status, lambda s: s == 200,
                            timeout=15, what="/readyz 200 after Redis resumed")
            # and its breaker closed again, as start_redis waits (a loaded
            # run's consume right after the thaw met a half-open breaker
            # and was answered in degraded mode: a fail-open pass)
            self.poll_until(lambda: metrics(w).get(("waitroom_breaker_state", 'state="closed"')),
                            lambda v: v == 1, timeout=15, what="breaker closed after Redis resumed")

    def test_outage_keeps_the_brakes(self):
        """K28 (API 1.2 "Clarifications"): during an outage an instance
        answers from its last known config of the queue and hands out no
        fail-open pass while it says paused (the degraded waiting form) or
        while opensAt is ahead (the prequeue form with that opensAt, for
        newcomers and people in the pre-queue alike, JSON and page), even
        under failPolicy "open"; a disabled queue answers passthrough. The
        pause is learnt from the other instance's admin change. Redis-only:
        the embedded store has no outage but through its breaker."""
        w1, w2 = self.cluster()
        ws = (w1, w2)
        opens_at = int(time.time() * 1000) + 3600 * 1000
        qp = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "limited",
                             "failOpenPerSecond": 1000}, client=w1.client, prefix="k28p")
        qs = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "open",
                             "opensAt": opens_at}, client=w1.client, prefix="k28s")
        qo = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "open",
                             "paused": True}, client=w1.client, prefix="k28o")
        qd = self.new_queue({"admitPerSecond": 1000, "failPolicy": "open", "enabled": False},
                            client=w1.client, prefix="k28d")
        # paused through instance 1; instance 2 learns it from the store
        self.assertEqual(w1.client.patch_queue(qp, {"paused": True}).status, 200)
        for w in ws:
            for q in (qp, qs, qo, qd):
                self.known_to(w, q)
            self.poll_until(lambda: metrics(w).get(("waitroom_queue_paused", 'queue="%s"' % qp)),
                            lambda v: v == 1, timeout=5, what="the pause known")
        in_line, in_pre = uid("line-"), uid("pre-")
        self.assertWaiting(w1.client.join(qp, in_line), 1, eta_null=True)
        r = w1.client.join(qs, in_pre)
        self.assertEqual((r.status, r.json.get("status")), (200, "prequeue"), repr(r))
        self.freeze_redis(w1, w2)

        bodies = []
        for i, w in enumerate(ws):
            for k in range(8):
                for q in (qp, qo):
                    r = w.client.join(q, uid("new-"))
                    self.assertDegradedWaiting(r, "paused %s join %d on instance %d" % (q, k, i))
                    bodies.append(r.body)
                r = w.client.join(qs, uid("new-"))
                bodies.append(r.body)
                self.assertEqual(r.status, 200, repr(r))
                self.assertJsonHeaders(r)
                self.assertEqual(set(r.json), {"status", "opensAt", "retryAfterMs"}, repr(r))
                self.assertEqual(r.json["status"], "prequeue", repr(r))
                self.assertEqual(r.json["opensAt"], opens_at, repr(r))
                self.assertInt(r.json["retryAfterMs"])
                self.assertGreaterEqual(r.json["retryAfterMs"], 250, repr(r))
                self.assertLessEqual(r.json["retryAfterMs"], 5000, repr(r))
            # people already there: the same forms
            r = w.client.me(qp, in_line)
            self.assertDegradedWaiting(r, "in line, instance %d" % i)
            bodies.append(r.body)
            r = w.client.me(qs, in_pre)
            self.assertEqual((r.status, r.json.get("status"), r.json.get("opensAt")),
                             (200, "prequeue", opens_at), repr(r))
            bodies.append(r.body)
            # the queue page says so too
            r = w.client.get("/q/%s" % qp, {"X-User-Id": uid()})
            self.assertEqual(r.status, 200, repr(r))
            self.assertIn('data-state="degraded"', r.body)
            r = w.client.get("/q/%s" % qs, {"X-User-Id": uid()})
            self.assertEqual(r.status, 200, repr(r))
            self.assertIn('data-state="prequeue"', r.body)
            self.assertFalse(any(c.startswith("wr_token_") for c in r.set_cookies), repr(r))
            # a disabled queue: passthrough, as with the store
            self.assertEqual(w.client.join(qd, uid()).json, {"status": "passthrough"})
        for b in bodies:
            self.assertNotIn("failOpen", b)
            self.assertNotIn("admitted", b)
        for w in ws:
            m = metrics(w)
            for q in (qp, qs, qo):
                self.assertIsNone(m.get(("waitroom_fail_open_admitted_total", 'queue="%s"' % q)))

        self.thaw_redis(w1, w2)
        # (w2's breaker may still be half-open right after /readyz: its answer
        # is degraded, position null, until a probe closes it)
        r = self.poll_until(lambda: w2.client.me(qp, in_line),
                            lambda r: r.status == 200 and type(r.json.get("position")) is int,
                            timeout=15, what="a store answer from w2 after the outage")
        self.assertWaiting(r, 1, eta_null=True, what="after the outage")
        r = w2.client.me(qs, in_pre)
        self.assertEqual((r.status, r.json.get("status")), (200, "prequeue"), repr(r))
        for w in ws:
            self.assertEqual(w.terminate(), 0)

    def test_outage_keeps_the_sale_end_brakes(self):
        """API 1.2 "Clarifications": during an outage fail-open admits
        nobody while the last known config says closed or sold out (stock
        0); the answer is the closed form with its reason (and the notice),
        for people in line and newcomers, on both instances (the closing and
        the sell-out learnt from the other instance's changes), even under
        failPolicy "open"."""
        w1, w2 = self.cluster()
        ws = (w1, w2)
        qc = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "open",
                             "paused": True, "notice": "Thanks, all gone"}, client=w1.client,
                            prefix="endc")
        qs = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "open",
                             "stock": 1}, client=w1.client, prefix="ends")
        in_line = uid("line-")
        self.join_ok(qc, in_line, client=w1.client)
        buyer = uid("buyer-")
        tok = self.admit(qs, buyer, client=w1.client)
        self.assertEqual(w1.client.consume(qs, tok, buyer).status, 200)  # sold out now
        # closed (and unpaused: the closing alone is the brake)
        self.assertEqual(w1.client.patch_queue(qc, {"closed": True, "paused": False}).status,
                         200)
        for w in ws:
            for q in (qc, qs):
                self.known_to(w, q)
            self.poll_until(lambda: w.client.join(qs, uid()).json.get("reason"),
                            lambda v: v == "soldOut", timeout=5, what="sold out")
            self.poll_until(lambda: metrics(w).get(("waitroom_queue_stock_left",
                                                    'queue="%s"' % qs)),
                            lambda v: v == 0, timeout=5, what="the stock known")
        # the closing learnt by instance 2 within a tick
        self.poll_until(lambda: w2.client.get_queue(qc).json["config"]["closed"],
                        lambda v: v is True, timeout=5, what="closed")
        time.sleep(0.5)
        self.freeze_redis(w1, w2)
        for i, w in enumerate(ws):
            for who in (in_line, uid("new-"), uid("new-")):
                r = w.client.join(qc, who)
                self.assertEqual(r.status, 200, repr(r))
                self.assertEqual(r.json.get("status"), "closed", "instance %d: %r" % (i, r))
                self.assertEqual(r.json.get("reason"), "closed", repr(r))
                self.assertEqual(r.json.get("notice"), "Thanks, all gone", repr(r))
                self.assertLessEqual(int(r.headers["retry-after"]), 60, repr(r))
                r = w.client.join(qs, who)
                self.assertEqual((r.status, r.json.get("status"), r.json.get("reason")),
                                 (200, "closed", "soldOut"), "instance %d: %r" % (i, r))
            r = w.client.me(qc, in_line)
            self.assertEqual((r.json.get("status"), r.json.get("reason")), ("closed", "closed"))
            r = w.client.get("/q/%s" % qc, {"X-User-Id": uid()})
            self.assertIn('data-state="closed"', r.body)
            m = metrics(w)
            for q in (qc, qs):
                self.assertIsNone(m.get(("waitroom_fail_open_admitted_total", 'queue="%s"' % q)))
        self.thaw_redis(w1, w2)
        r = w2.client.me(qc, in_line)
        self.assertEqual((r.json.get("status"), r.json.get("reason")), ("closed", "closed"))
        for w in ws:
            self.assertEqual(w.terminate(), 0)

    def test_spent_pass_refused_by_verify_and_consume_alike(self):
        """K33: once the store has a pass's burn, verify and consume agree
        on every instance - also when that instance cannot reach the store
        again afterwards (a breaker still open after the recovery, a second
        blip): a pass the store answered "consumed" is refused by both, and
        never spent a second time in degraded mode. Checked for a fail-open
        pass spent on instance 1 during an outage and for an ordinary token
        consumed on instance 1 after it (no sessions)."""
        w1, w2 = self.cluster()
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "limited",
                            "failOpenPerSecond": 100}, client=w1.client)
        u_ord = uid("ord-")
        t_ord = self.admit(q, u_ord, client=w1.client)
        self.known_to(w2, q)
        self.freeze_redis(w1, w2)
        u_fo = uid("fo-")
        f = self.assertFailOpenAdmitted(w1.client.join(q, u_fo), q, u_fo, 300, "fail-open join")
        self.assertFailOpenConsumed(w1.client.consume(q, f), u_fo, "spent on instance 1")
        self.thaw_redis(w1, w2)
        self.poll_until(lambda: self.redis_cmd("ZSCORE", "wr:{%s}:burned" % q, jti(f)),
                        lambda v: v is not None, timeout=10, what="the burn in the store")
        r = w1.client.consume(q, t_ord)
        self.assertEqual((r.status, r.json), (200, {"valid": True, "userId": u_ord}), repr(r))
        # instance 2 asks the store: spent, both routes
        for t in (f, t_ord):
            self.assertTokenRefused(w2.client.consume(q, t), "consumed", "consume on instance 2")
            self.assertEqual(w2.client.verify(q, t).status, 403, "verify on instance 2")
        # instance 2 cannot reach the store again: the same answers
        self.freeze_redis(w1, w2)
        for i, w in ((2, w2), (1, w1)):
            for name, t in (("fail-open pass", f), ("ordinary token", t_ord)):
                what = "%s, instance %d, store unreachable" % (name, i)
                r = w.client.verify(q, t)
                self.assertEqual(r.status, 403, "verify of a spent %s: %r" % (what, r))
                self.assertTokenRefused(w.client.consume(q, t), "consumed", "consume: " + what)
        m = metrics(w2)
        self.assertIsNone(m.get(("waitroom_fail_open_consumed_total", 'queue="%s"' % q)))
        self.thaw_redis(w1, w2)
        for w in (w1, w2):
            for t in (f, t_ord):
                self.assertTokenRefused(w.client.consume(q, t), "consumed", "after")
                self.assertEqual(w.client.verify(q, t).status, 403, "after")
            self.assertEqual(w.terminate(), 0)

    def test_queue_page_degraded(self):
        w1, _ = self.cluster()
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "failPolicy": "limited",
                            "failOpenPerSecond": 1}, client=w1.client)
        self.stop_redis(w1)
        pages = [w1.client.get("/q/%s" % q, {"X-User-Id": uid(), "Accept-Language": "ko"})
                 for _ in range(4)]
        states = []
        for r in pages:
            self.assertEqual(r.status, 200, repr(r))
            if 'data-state="admitted"' in r.body:
                states.append("admitted")
                self.assertTrue(any(c.startswith("wr_token_%s=" % q) for c in r.set_cookies))
            else:
                self.assertIn('data-state="degraded"', r.body)
                self.assertIn("대기열이 다시 연결되는 중입니다", r.body)
                self.assertIn('http-equiv="refresh"', r.body)
                states.append("degraded")
        self.assertIn("admitted", states)
        self.assertIn("degraded", states)

    # ---------------------------------------------------------------- chaos
    def test_chaos_outage_during_admission(self):
        """Redis stopped while two instances admit (limited, open, closed):
        fail-open admissions within each instance's budget, no pass spent
        twice (during the outage on one instance; after it on either), the
        line intact and nobody lost."""
        w1, w2 = self.cluster()
        ws = (w1, w2)
        rate_fo = 4
        qs = {p: self.new_queue({"admitPerSecond": 5, "tickMs": 100, "failPolicy": p,
                                 "failOpenPerSecond": rate_fo}, client=w1.client, prefix="ch" + p)
              for p in ("limited", "open", "closed")}
        before = {p: [uid("b-") for _ in range(40)] for p in qs}
        for p, q in qs.items():
            for u in before[p]:
                self.join_ok(q, u, client=random.choice(ws).client)
        for w in ws:
            for q in qs.values():
                self.known_to(w, q)
        time.sleep(1.0)  # admission runs
        ordinary = {}
        for p, q in qs.items():
            for u in before[p]:
                b = w1.client.me(q, u).json
                if b.get("status") == "admitted":
                    ordinary[(p, u)] = b["token"]
        self.stop_redis(w1, w2)
        # load: joins of newcomers on both instances for a measured window
        fo = {p: {0: [], 1: []} for p in qs}
        answers = {p: [] for p in qs}
        lock = threading.Lock()
        stop = threading.Event()

        def load(i, p):
            q = qs[p]
            while not stop.is_set():
                u = uid("n-")
                r = ws[i].client.join(q, u)
                with lock:
                    answers[p].append(r.status)
                    if r.status == 200 and r.json.get("status") == "admitted":
                        fo[p][i].append((u, r.json["token"]))
                time.sleep(0.02)

        threads = [threading.Thread(target=load, args=(i, p)) for i in (0, 1) for p in qs]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(3.0)
        stop.set()
        for t in threads:
            t.join(10)
        window = time.monotonic() - t0
        for i in (0, 1):
            n = len(fo["limited"][i])
            self.assertLessEqual(n, rate_fo + rate_fo * window + rate_fo,
                                 "instance %d admitted %d in %.1f s" % (i, n, window))
            self.assertGreaterEqual(n, rate_fo, "instance %d: the burst" % i)
        self.assertEqual(set(answers["closed"]), {503})
        self.assertEqual(set(answers["open"]), {200})
        self.assertEqual(len(fo["open"][0]) + len(fo["open"][1]), len(answers["open"]))
        # spend every limited pass twice on its own instance: exactly once
        spent = []
        for i in (0, 1):
            for u, t in fo["limited"][i]:
                self.assertFailOpenConsumed(ws[i].client.consume(qs["limited"], t), u)
                self.assertTokenRefused(ws[i].client.consume(qs["limited"], t), "consumed")
                spent.append((i, t))
        self.start_redis(w1, w2)
        key = "wr:{%s}:burned" % qs["limited"]
        self.poll_until(lambda: self.redis_cmd("ZCARD", key), lambda n: n == len(spent),
                        timeout=15, what="every burn replayed")
        # after recovery: a pass spent on one instance is refused on the other
        for i, t in spent:
            self.assertTokenRefused(ws[1 - i].client.consume(qs["limited"], t), "consumed")
        # the open queue's passes: each spends exactly once across both
        for i in (0, 1):
            for u, t in fo["open"][i][:10]:
                self.assertFailOpenConsumed(ws[1 - i].client.consume(qs["open"], t), u)
                self.assertTokenRefused(ws[i].client.consume(qs["open"], t), "consumed")
        # the line: everyone who joined before the outage is still waiting,
        # in order, or holds their token (nobody lost)
        for p, q in qs.items():
            self.assertEqual(w1.client.patch_queue(q, {"paused": True}).status, 200)
        time.sleep(0.3)
        for p, q in qs.items():
            last = 0
            for u in before[p]:
                r = w1.client.me(q, u)
                self.assertEqual(r.status, 200, "%s %s lost: %r" % (p, u, r))
                b = r.json
                if b["status"] == "waiting":
                    self.assertGreater(b["position"], last, "%s: order kept" % p)
                    last = b["position"]
                else:
                    self.assertEqual(b["status"], "admitted")
        for w in ws:
            self.assertEqual(w.terminate(), 0)
