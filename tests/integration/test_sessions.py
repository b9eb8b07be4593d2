"""Sessions, one in, one out (API 1.1, queue config sessionSeconds):
consume opens a session that counts in active until
POST tokens/release, DELETE entries/me, or sessionSeconds pass; verify
passes during it (past the token's exp too); stats sessions, releasedTotal,
sessionsExpiredTotal. Runs on both stores."""
import threading
import time

import jwtutil
from harness import FAST, WRTest, uid
from helpers import race

SESS = dict(FAST, sessionSeconds=300)


class Sessions(WRTest):

    def consumed(self, q, user):
        """Admits user into q and consumes the token; returns the token."""
        tok = self.admit(q, user)
        r = self.c.consume(q, tok)
        self.assertEqual(r.status, 200, "consume: %r" % r)
        self.assertEqual((r.json.get("valid"), r.json.get("userId")), (True, user))
        return tok

    def test_consume_opens_a_session_counted_in_active(self):
        q = self.new_queue(SESS)
        self.consumed(q, uid())
        st = self.stats(q)
        self.assertEqual((st["active"], st["sessions"], st["consumedTotal"]), (1, 1, 1), st)
        self.assertEqual((st["releasedTotal"], st["sessionsExpiredTotal"]), (0, 0), st)

    def test_stats_and_config_fields(self):
        q = self.new_queue(dict(FAST, sessionSeconds=45))
        self.assertEqual(self.config(q)["sessionSeconds"], 45)
        st = self.stats(q)
        for k in ("sessions", "releasedTotal", "sessionsExpiredTotal"):
            self.assertIn(k, st)
            self.assertInt(st[k], k)
        r = self.c.patch_queue(q, {"sessionSeconds": 0})
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(self.config(q)["sessionSeconds"], 0)
        for bad in (-1, 86401, 1.5, "60", True):
            with self.subTest(bad=bad):
                r = self.c.patch_queue(q, {"sessionSeconds": bad})
                self.assertError(r, 400, "INVALID_CONFIG", "sessionSeconds %r" % (bad,))
                self.assertEqual(r.json.get("field"), "sessionSeconds", repr(r))
        self.assertEqual(self.config(q)["sessionSeconds"], 0)

    def test_release_then_no_session(self):
        q = self.new_queue(SESS)
        u = uid()
        tok = self.consumed(q, u)
        r = self.c.release(q, tok)
        self.assertEqual(r.status, 204, repr(r))
        self.assertEqual(r.body, "")
        st = self.stats(q)
        self.assertEqual((st["active"], st["sessions"], st["releasedTotal"]), (0, 0, 1), st)
        self.assertTokenRefused(self.c.release(q, tok), "noSession", "second release")
        self.assertTokenRefused(self.c.release(q, tok, via="body"), "noSession", "via body")
        self.assertTokenRefused(self.c.verify(q, tok), "consumed", "verify after release")
        self.assertTokenRefused(self.c.consume(q, tok), "consumed", "consume after release")
        self.assertEqual(self.stats(q)["releasedTotal"], 1)

    def test_release_via_body_and_bad_tokens(self):
        q = self.new_queue(SESS)
        u = uid()
        tok = self.consumed(q, u)
        self.assertTokenRefused(self.c.release(q, tok, user="someone-else", via="body"),
                                "user_mismatch", "other userId")
        self.assertTokenRefused(self.c.release(q), "missing", "no token")
        self.assertTokenRefused(self.c.release(q, "a.b.c"), "malformed", "garbage")
        other = self.new_queue(SESS)
        self.assertTokenRefused(self.c.release(other, tok), "wrong_queue", "other queue")
        self.assertEqual(self.stats(q)["sessions"], 1, "a refused release ends nothing")
        r = self.c.release(q, tok, user=u, via="body")
        self.assertEqual(r.status, 204, repr(r))
        self.assertError(self.c.release("nosuch-" + uid(""), tok), 404, "QUEUE_NOT_FOUND")

    def test_release_of_a_never_consumed_token(self):
        q = self.new_queue(SESS)
        u = uid()
        tok = self.admit(q, u)
        self.assertTokenRefused(self.c.release(q, tok), "noSession", "not consumed yet")
        self.assertEqual(self.c.verify(q, tok).status, 204, "the token is still live")
        r = self.c.consume(q, tok)
        self.assertEqual(r.status, 200, "and still consumable: %r" % r)
        self.assertEqual(self.c.release(q, tok).status, 204)

    def test_second_consume_is_refused_during_the_session(self):
        q = self.new_queue(SESS)
        tok = self.consumed(q, uid())
        self.assertTokenRefused(self.c.consume(q, tok), "consumed", "second consume")
        self.assertEqual(self.c.verify(q, tok).status, 204, "the session is still open")
        st = self.stats(q)
        self.assertEqual((st["consumedTotal"], st["sessions"]), (1, 1), st)

    def test_max_active_holds_admission_until_release(self):
        q = self.new_queue(dict(SESS, maxActive=2))
        a, b, c = uid(), uid(), uid()
        ta = self.consumed(q, a)
        self.consumed(q, b)
        self.join_ok(q, c)
        time.sleep(0.5)  # ten ticks: nobody may be let in
        r = self.c.me(q, c)
        self.assertEqual(r.json.get("status"), "waiting", "admitted past maxActive: %r" % r)
        st = self.stats(q)
        self.assertEqual((st["active"], st["sessions"], st["waiting"]), (2, 2, 1), st)
        self.assertEqual(self.c.release(q, ta).status, 204)
        t0 = time.monotonic()
        self.wait_admitted(q, c, timeout=3.0)
        # a tick or two (50 ms each) after the release, plus polling slack
        self.assertLess(time.monotonic() - t0, 1.5)
        st = self.stats(q)
        self.assertEqual((st["active"], st["sessions"]), (2, 1), st)

    def test_lapse_frees_the_slot(self):
        q = self.new_queue(dict(FAST, sessionSeconds=1, maxActive=1))
        a, b = uid(), uid()
        ta = self.consumed(q, a)
        t_consume = time.monotonic()
        self.join_ok(q, b)
        self.assertEqual(self.c.verify(q, ta).status, 204)
        self.wait_admitted(q, b, timeout=4.0)
        self.assertGreater(time.monotonic() - t_consume, 0.9, "admitted before the lapse")
        st = self.stats(q)
        self.assertEqual((st["sessions"], st["sessionsExpiredTotal"], st["releasedTotal"]),
                         (0, 1, 0), st)
        self.assertEqual(st["active"], 1, st)
        self.assertTokenRefused(self.c.release(q, ta), "noSession", "release after the lapse")
        self.assertTokenRefused(self.c.verify(q, ta), "consumed", "verify after the lapse")

    def test_leave_ends_the_session(self):
        q = self.new_queue(SESS)
        u = uid()
        tok = self.consumed(q, u)
        r = self.c.leave(q, u)
        self.assertEqual(r.status, 204, repr(r))
        st = self.stats(q)
        self.assertEqual((st["active"], st["sessions"], st["releasedTotal"], st["leftTotal"]),
                         (0, 0, 1, 0), st)
        self.assertError(self.c.leave(q, u), 404, "NOT_IN_QUEUE", "second leave")
        self.assertTokenRefused(self.c.release(q, tok), "noSession", "release after leave")
        self.assertTokenRefused(self.c.verify(q, tok), "consumed", "verify after leave")

    def test_verify_outlives_the_token_exp(self):
        q = self.new_queue(dict(FAST, tokenTtlSeconds=1, sessionSeconds=30))
        u = uid()
        tok = self.consumed(q, u)
        exp = jwtutil.decode(tok)[1]["exp"]
        while time.time() < exp + 1.6:  # past the exp and its 1 s grace
            time.sleep(0.1)
        for via in ("bearer", "header", "cookie"):
            with self.subTest(via=via):
                r = self.c.verify(q, tok, via=via)
                self.assertEqual(r.status, 204, "verify past exp in a session: %r" % r)
        self.assertTokenRefused(self.c.consume(q, tok), "expired", "consume past exp")
        r = self.c.release(q, tok)
        self.assertEqual(r.status, 204, "release past exp ends the open session: %r" % r)
        self.assertTokenRefused(self.c.verify(q, tok), "expired", "verify after the end")
        self.assertTokenRefused(self.c.release(q, tok), "expired", "release after the end")
        st = self.stats(q)
        self.assertEqual((st["releasedTotal"], st["active"], st["expiredTotal"]), (1, 0, 0), st)

    def test_disabled_queue_release_passes(self):
        q = self.new_queue(SESS)
        tok = self.consumed(q, uid())
        self.assertEqual(self.c.patch_queue(q, {"enabled": False}).status, 200)
        self.assertEqual(self.c.release(q, tok).status, 204)
        self.assertEqual(self.c.patch_queue(q, {"enabled": True}).status, 200)
        self.assertEqual(self.stats(q)["sessions"], 1, "passthrough ends nothing")

    def test_concurrent_consume_and_release_keep_active_exact(self):
        n = 50
        q = self.new_queue(dict(SESS, maxActive=n))
        users = [uid() for _ in range(n)]
        for u in users:
            self.join_ok(q, u)
        toks = {u: self.wait_admitted(q, u)["token"] for u in users}
        path = "/v1/queues/%s/tokens/" % q
        res = race(self.srv.port, [("POST", path + "consume",
                                    {"Authorization": "Bearer " + toks[u]}, None)
                                   for u in users])
        self.assertEqual([r[0] for r in res], [200] * n, res)
        # every other user releases twice at once: exactly one 204 each
        half = users[::2]
        reqs = [("POST", path + "release", {"Authorization": "Bearer " + toks[u]}, None)
                for u in half for _ in range(2)]
        res = race(self.srv.port, reqs)
        for i, u in enumerate(half):
            got = sorted(r[0] for r in res[2 * i:2 * i + 2])
            self.assertEqual(got, [204, 403], "double release of %s: %r" % (u, res))
        st = self.stats(q)
        self.assertEqual(st["consumedTotal"], n, st)
        self.assertEqual(st["releasedTotal"], len(half), st)
        self.assertEqual(st["sessions"], n - len(half), st)
        self.assertEqual(st["active"], n - len(half), st)
        # consume, verify and release of the rest, all at once
        rest = users[1::2]
        reqs = [("POST", path + "release", {"Authorization": "Bearer " + toks[u]}, None)
                for u in rest]
        reqs += [("GET", path + "verify", {"Authorization": "Bearer " + toks[u]}, None)
                 for u in half]
        res = race(self.srv.port, reqs)
        self.assertEqual([r[0] for r in res[:len(rest)]], [204] * len(rest), res)
        self.assertEqual([r[0] for r in res[len(rest):]], [403] * len(half), res)
        st = self.stats(q)
        self.assertEqual((st["active"], st["sessions"], st["releasedTotal"]), (0, 0, n), st)

    def test_metrics(self):
        q = self.new_queue(SESS)
        tok = self.consumed(q, uid())
        self.assertEqual(self.c.release(q, tok).status, 204)
        self.consumed(q, uid())
        want = ['waitroom_queue_sessions{queue="%s"} 1' % q,
                'waitroom_queue_released_total{queue="%s"} 1' % q,
                'waitroom_queue_sessions_expired_total{queue="%s"} 0' % q]

        def body():
            r = self.c.get("/metrics")
            self.assertEqual(r.status, 200)
            return r.body
        self.poll_until(body, lambda b: all(w in b for w in want), timeout=5.0,
                        what="session metrics")


class SessionThreads(WRTest):
    """Many users consuming and releasing from threads: active stays exact."""

    def test_threads(self):
        n = 40
        q = self.new_queue(dict(SESS, maxActive=10))
        users = [uid() for _ in range(n)]
        errors = []

        def life(u):
            try:
                tok = self.admit(q, u, timeout=30.0)
                r = self.c.consume(q, tok)
                if r.status != 200:
                    errors.append(("consume", u, r))
                time.sleep(0.05)
                r = self.c.release(q, tok)
                if r.status != 204:
                    errors.append(("release", u, r))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(("exception", u, repr(e)))
        ts = [threading.Thread(target=life, args=(u,)) for u in users]
        for t in ts:
            t.start()
        peak = 0
        while any(t.is_alive() for t in ts):
            st = self.stats(q)
            peak = max(peak, st["active"])
            self.assertLessEqual(st["active"], 10, st)
            time.sleep(0.05)
        for t in ts:
            t.join()
        self.assertEqual(errors, [])
        st = self.stats(q)
        self.assertEqual((st["active"], st["sessions"], st["releasedTotal"], st["consumedTotal"]),
                         (0, 0, n, n), st)
        self.assertGreater(peak, 0)
