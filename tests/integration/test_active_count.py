"""The active count (API "Queue config" maxActive, tokenTtlSeconds): a
pass that expires unused frees its slot exactly, a consumed one too, garbage
consumes change nothing, and the cap counts exactly (K05).
"""
import time

from harness import WRTest, uid


class ActiveCount(WRTest):

    def test_k05_expired_tokens_free_their_slots_exactly(self):
        """K05: maxActive 50, TTL 2 s: 20 admitted expire unused (expiredTotal 20,
        active 0); TTL 300, 30 more admitted, 10 consumed, 5 garbage consumes:
        active 20, never negative; 31 more joiners: exactly 30 admitted, 1 waits."""
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
