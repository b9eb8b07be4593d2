"""The Redis scripts (Redis only): scores are exact integers (K01), every
key of a queue carries its hash tag (K03), and a lost script cache
(NOSCRIPT) is reloaded with one retry and never counts as a store failure
(K02).

Redis key names (DESIGN.md): wr:{q}:waiting (ZSET, score = arrival
microseconds), wr:{q}:active, wr:{q}:tokens, wr:{q}:config, wr:{q}:state.
"""
from harness import ENV, WRTest, uid
from helpers import metrics, PrivateRedisTest


class RedisScripts(WRTest):

    def test_k01_arrival_score_is_an_exact_integer(self):
        """K01: ZSCORE of a join is a 16-digit integer between two Redis TIMEs; a
        rejoin keeps the first arrival time."""
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
        """K03: every key of a queue starts with wr: and carries {queue}."""
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


class ScriptCacheLost(PrivateRedisTest):

    def test_k02_script_flush_then_join_poll_consume(self):
        """K02: SCRIPT FLUSH before a join, a poll and a consume: all succeed, the
        token is consumed exactly once; 30 more flushes + joins never open the
        breaker (transitions to open 0, state closed, /readyz 200)."""
        redis, w = self.private()
        c = w.client
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50}, client=c)
        r = redis.client()
        self.addCleanup(r.close)
        u = uid()
        self.assertEqual(r.cmd("SCRIPT", "FLUSH"), "OK")
        self.join_ok(q, u, client=c)
        self.assertEqual(r.cmd("SCRIPT", "FLUSH"), "OK")
        b = self.wait_admitted(q, u, timeout=5, client=c)
        self.assertEqual(r.cmd("SCRIPT", "FLUSH"), "OK")
        res = c.consume(q, b["token"])
        self.assertEqual(res.status, 200, repr(res))
        self.assertEqual(res.json.get("userId"), u)
        self.assertEqual(r.cmd("SCRIPT", "FLUSH"), "OK")
        self.assertTokenRefused(c.consume(q, b["token"]), "consumed", "token used twice")
        # NOSCRIPT is not a store failure: many flushes never open the breaker
        for i in range(30):
            r.cmd("SCRIPT", "FLUSH")
            res = c.join(q, uid())
            self.assertEqual(res.status, 200, "join #%d after SCRIPT FLUSH: %r" % (i, res))
        self.assertEqual(c.get("/readyz").status, 200)
        self.assertEqual(self.stats(q, client=c)["consumedTotal"], 1)
        m = metrics(w)
        self.assertEqual(m.get(("waitroom_breaker_transitions_total", 'to="open"')), 0)
        self.assertEqual(m.get(("waitroom_breaker_state", 'state="closed"')), 1)
        self.assertExitsCleanly(w)


class WrongTypeKey(PrivateRedisTest):

    def test_a_queue_whose_key_holds_the_wrong_type_is_not_an_outage(self):
        """A queue's key overwritten with another type (something else wrote
        wr:{q}:waiting as a string: Redis answers WRONGTYPE) fails that
        queue alone: its requests answer 503 STORE_UNAVAILABLE, counted as
        WR_EDATA, while another queue keeps serving; 40 of them never open
        the breaker (before: the breaker counted them as store failures,
        opened, and every queue answered 503); and the admin can delete the
        broken queue."""
        redis, w = self.private()
        c = w.client
        good = self.new_queue({"admitPerSecond": 1, "paused": True}, client=c)
        bad = self.new_queue({"admitPerSecond": 1, "paused": True}, client=c)
        self.join_ok(good, "g0", client=c)
        self.join_ok(bad, "b0", client=c)
        r = redis.client()
        self.addCleanup(r.close)
        key = "wr:{%s}:waiting" % bad
        self.assertEqual(r.cmd("TYPE", key), "zset")
        r.cmd("DEL", key)
        self.assertEqual(r.cmd("SET", key, "not a line"), "OK")
        # ten in a row each round: twice the breaker's 5 consecutive failures
        for k in range(4):
            for i in range(10):
                res = c.join(bad, "b%d" % (i + 1)) if i % 2 else c.me(bad, "b0")
                self.assert503(res, "request %d.%d on the broken queue" % (k, i))
            res = c.me(good, "g0")
            self.assertEqual(res.status, 200, "poll of the good queue after round %d: %r"
                             % (k, res))
            self.assertEqual(res.json["position"], 1)
        self.join_ok(good, "g1", client=c)
        self.assertEqual(c.get("/readyz").status, 200)
        m = metrics(w)
        self.assertEqual(m.get(("waitroom_breaker_transitions_total", 'to="open"')), 0)
        self.assertEqual(m.get(("waitroom_breaker_state", 'state="closed"')), 1)
        edata = sum(v for (name, labels), v in m.items()
                    if name == "waitroom_store_errors_total" and 'error="WR_EDATA"' in labels)
        self.assertGreaterEqual(edata, 40)
        # the admin removes the broken queue; the good one is untouched
        self.assertEqual(c.delete_queue(bad).status, 204)
        self.assertEqual(r.cmd("EXISTS", key), 0)
        self.assertEqual(c.get_queue(bad).status, 404)
        self.assertEqual(self.stats(good, client=c)["waiting"], 2)
        self.assertExitsCleanly(w)
