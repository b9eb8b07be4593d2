"""Incident cases (shared/cases/README.md) at the HTTP level: K01, K02, K05.
K04 is in test_concurrency.py, K11 in test_tokens.py.

Redis key names assumed (DESIGN.md): wr:{q}:waiting (ZSET, score = arrival
microseconds), wr:{q}:active, wr:{q}:tokens, wr:{q}:config, wr:{q}:state.
"""
import time

from harness import ENV, WRTest, uid


class K01ScorePrecision(WRTest):

    def test_k01_arrival_score_is_an_exact_integer(self):
        self.redis_only()
        q = self.new_queue({"admitPerSecond": 10, "paused": True})
        r = ENV.redis.client()
        self.addCleanup(r.close)
        a, b = uid(), uid()
        sec, usec = r.cmd("TIME")
        before = int(sec) * 1000000 + int(usec)
        self.join_ok(q, a)
        self.join_ok(q, b)
        sec, usec = r.cmd("TIME")
        after = int(sec) * 1000000 + int(usec)
        key = "wr:{%s}:waiting" % q
        self.assertEqual(r.cmd("TYPE", key), "zset", "key %s" % key)
        sa, sb = r.cmd("ZSCORE", key, a), r.cmd("ZSCORE", key, b)
        for s in (sa, sb):
            self.assertIsNotNone(s, "user not in %s" % key)
            self.assertRegex(s, r"^\d{16}$", "score must be an exact 16-digit integer")
        self.assertTrue(before <= int(sa) < int(sb) <= after + 1,
                        "scores %s %s not within TIME %d..%d" % (sa, sb, before, after))
        # rejoin keeps the first arrival time
        self.join_ok(q, a)
        self.assertEqual(r.cmd("ZSCORE", key, a), sa)

    def test_k03_every_key_carries_the_hash_tag(self):
        self.redis_only()
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50})
        self.admit(q, uid())
        self.join_ok(q, uid())
        r = ENV.redis.client()
        self.addCleanup(r.close)
        keys = r.cmd("KEYS", "*%s*" % q)
        self.assertTrue(keys, "no keys for %s" % q)
        tag = "{%s}" % q
        for k in keys:
            self.assertIn(tag, k, "key without the queue's hash tag")
            self.assertTrue(k.startswith("wr:"), k)


class K02ScriptCacheLost(WRTest):

    def test_k02_script_flush_then_join_poll_consume(self):
        self.redis_only()
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50})
        r = ENV.redis.client()
        self.addCleanup(r.close)
        u = uid()
        self.assertEqual(r.cmd("SCRIPT", "FLUSH"), "OK")
        self.join_ok(q, u)
        self.assertEqual(r.cmd("SCRIPT", "FLUSH"), "OK")
        b = self.wait_admitted(q, u, timeout=5)
        self.assertEqual(r.cmd("SCRIPT", "FLUSH"), "OK")
        res = self.c.consume(q, b["token"])
        self.assertEqual(res.status, 200, repr(res))
        self.assertEqual(res.json.get("userId"), u)
        self.assertEqual(r.cmd("SCRIPT", "FLUSH"), "OK")
        self.assertTokenRefused(self.c.consume(q, b["token"]), "consumed", "token used twice")
        # NOSCRIPT is not a store failure: many flushes never open the breaker
        for i in range(30):
            r.cmd("SCRIPT", "FLUSH")
            res = self.c.join(q, uid())
            self.assertEqual(res.status, 200, "join #%d after SCRIPT FLUSH: %r" % (i, res))
        self.assertEqual(self.c.get("/readyz").status, 200)
        st = self.stats(q)
        self.assertEqual(st["consumedTotal"], 1)


class K05ActiveCountDrift(WRTest):

    def test_k05_expired_tokens_free_their_slots_exactly(self):
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50, "maxActive": 50,
                            "tokenTtlSeconds": 2})
        first = [uid("e") for _ in range(20)]
        for u in first:
            self.join_ok(q, u)
        self.poll_until(lambda: self.stats(q), lambda st: st["admittedTotal"] == 20, timeout=5,
                        what="20 admitted")
        old = [self.c.me(q, u) for u in first]
        for r in old:
            self.assertAdmitted(r, ttl=2)
        old_token = old[0].json["token"]
        # the 20 tokens expire unused (TTL 2 s): wait for the exact count
        st = self.poll_until(lambda: self.stats(q), lambda st: st["expiredTotal"] >= 20,
                             timeout=6, what="20 tokens expired")
        self.assertEqual((st["active"], st["expiredTotal"]), (0, 20), st)
        self.assertEqual(self.c.patch_queue(q, {"tokenTtlSeconds": 300}).status, 200)
        second = [uid("l") for _ in range(30)]
        for u in second:
            self.join_ok(q, u)
        self.poll_until(lambda: self.stats(q), lambda st: st["admittedTotal"] == 50, timeout=5,
                        what="30 more admitted")
        tokens = [self.wait_admitted(q, u)["token"] for u in second]
        for t in tokens[:10]:
            r = self.c.consume(q, t)
            self.assertEqual(r.status, 200, repr(r))
        for i in range(5):
            self.assertTokenRefused(self.c.consume(q, "garbage%d.x.y" % i), what="garbage")
        self.assertTokenRefused(self.c.consume(q, old_token), "expired", "expired token")
        for u in first[:3]:
            self.assertError(self.c.me(q, u), 404, "NOT_IN_QUEUE", "expired user")
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["active"], st["admittedTotal"], st["consumedTotal"],
                          st["expiredTotal"]), (0, 20, 50, 10, 20), st)
        # the cap counts exactly: 30 free slots now, 31 joiners -> 30 admitted, 1 waits
        third = [uid("t") for _ in range(31)]
        for u in third:
            self.join_ok(q, u)
        self.poll_until(lambda: self.stats(q), lambda st: st["active"] == 50, timeout=5,
                        what="cap filled")
        time.sleep(0.2)   # a few more ticks: the cap must hold
        st = self.stats(q)
        self.assertEqual((st["active"], st["waiting"], st["admittedTotal"]), (50, 1, 80), st)
