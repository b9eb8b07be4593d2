"""Races: K04 token replay, the last free place in a full line, and the same
user joining from many connections at once. Each request runs on its own
connection; all are released together by a threading.Barrier."""

from harness import FAST, HOLD, WRTest, uid
from helpers import race

N = 50


class Races(WRTest):

    def test_k04_concurrent_consumes_of_one_token(self):
        q = self.new_queue(FAST)
        users = [uid() for _ in range(3)]
        tokens = [self.admit(q, u) for u in users]
        st0 = self.stats(q)
        self.assertEqual(st0["active"], 3)
        req = ("POST", "/v1/queues/%s/tokens/consume" % q,
               {"Authorization": "Bearer " + tokens[0]}, None)
        out = race(self.srv.port, [req] * N)
        ok = [o for o in out if o[0] == 200]
        refused = [o for o in out if o[0] == 403 and isinstance(o[2], dict)
                   and o[2].get("error") == "INVALID_TOKEN"]
        self.assertEqual(len(ok), 1, "exactly one 200: %s" % sorted(str(o[0]) for o in out))
        self.assertEqual(ok[0][2], {"valid": True, "userId": users[0]})
        self.assertEqual(len(refused), N - 1, "49 x 403 INVALID_TOKEN: %r"
                         % [o for o in out if o not in ok and o not in refused][:3])
        self.assertEqual({o[2].get("reason") for o in refused}, {"consumed"})
        st = self.stats(q)
        self.assertEqual((st["active"], st["consumedTotal"]), (2, st0["consumedTotal"] + 1), st)
        self.assertError(self.c.me(q, users[0]), 404, "NOT_IN_QUEUE", "after the race")
        self.assertEqual(self.c.consume(q, tokens[1]).status, 200, "other tokens untouched")

    def test_concurrent_joins_for_the_last_free_place(self):
        q = self.new_queue(dict(HOLD, maxQueueSize=10))
        for _ in range(9):
            self.join_ok(q, uid())
        newcomers = [uid() for _ in range(N)]
        out = race(self.srv.port, [("POST", "/v1/queues/%s/entries" % q, {"X-User-Id": u}, None)
                                   for u in newcomers])
        ok = [(u, o) for u, o in zip(newcomers, out) if o[0] == 200]
        full = [o for o in out if o[0] == 429 and isinstance(o[2], dict)
                and o[2].get("error") == "QUEUE_FULL"]
        self.assertEqual(len(ok), 1, "exactly one 200: %s" % sorted(str(o[0]) for o in out))
        self.assertEqual(ok[0][1][2]["position"], 10)
        self.assertEqual(len(full), N - 1)
        for o in full:
            ra = o[1].get("retry-after", "")
            self.assertTrue(ra.isdigit() and int(ra) >= 1, "Retry-After %r" % ra)
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["rejectedFullTotal"]), (10, N - 1), st)
        self.assertWaiting(self.c.me(q, ok[0][0]), 10, 10, eta_null=True)

    def test_same_user_joining_on_many_connections(self):
        q = self.new_queue(HOLD)
        self.join_ok(q, uid())
        u = uid()
        out = race(self.srv.port, [("POST", "/v1/queues/%s/entries" % q, {"X-User-Id": u}, None)]
                   * N)
        self.assertEqual({o[0] for o in out}, {200}, [o for o in out if o[0] != 200][:3])
        self.assertEqual({o[2]["position"] for o in out}, {2})
        self.assertEqual(self.stats(q)["waiting"], 2)
