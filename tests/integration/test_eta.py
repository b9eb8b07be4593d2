"""The ETA of one in, one out (issue 22): with maxActive holding admission
back, etaSeconds comes from the observed admission rate (docs/API.md), and
for the ETA that rate is measured over the time the line had people in it
(stats' admitRateObserved stays the last minute's). Runs on both stores."""
import math
import time

from harness import FAST, WRTest, uid


class OneInOneOutEta(WRTest):

    def test_idle_time_before_a_crowd_does_not_dilute_the_observed_rate(self):
        """Issue 22, one-in-one-out ETA: a queue idle before its crowd (the
        usual case: made ahead of the sale) averaged the idle seconds into
        its one-minute observed rate, so the crowd's ETAs came out several
        times too long (20 min at the median in the demo after a 30 s idle)
        and its polls fell back to the far band, which slowed admission
        itself. Here: 4 s idle, then a line of 60 behind maxActive 5 whose
        slots free up as the test consumes; the ETA must follow the crowd's
        rate (the old window gave about 0.4 of it: ETAs 2.5 times too long)."""
        q = self.new_queue(dict(FAST, maxActive=5))
        r = self.c.consume(q, self.admit(q, uid()))
        self.assertEqual(r.status, 200, repr(r))
        time.sleep(4.0)  # the line is empty: a deliberate idle stretch, not a wait for luck
        users = [uid() for _ in range(60)]
        t0 = time.monotonic()
        for u in users:
            self.join_ok(q, u)
        pending = list(users)
        # one in, one out: whoever is admitted (in line order) is consumed,
        # which frees the slot for the next tick; at most one every 0.1 s,
        # for 2.5 s
        while time.monotonic() - t0 < 2.5:
            time.sleep(0.1)
            for u in pending[:6]:
                m = self.c.me(q, u)
                self.assertEqual(m.status, 200, repr(m))
                if m.json.get("status") == "admitted":
                    r = self.c.consume(q, m.json["token"])
                    self.assertEqual(r.status, 200, repr(r))
                    pending.remove(u)
                    break
        st = self.stats(q)
        crowd = (st["admittedTotal"] - 1) / (time.monotonic() - t0)  # the crowd's own rate
        self.assertGreaterEqual(st["admittedTotal"] - 1, 10, st)  # slots did turn over
        self.assertGreater(st["waiting"], 0, st)  # maxActive still holds it back
        # stats' admitRateObserved stays the last minute's, idle part and all
        self.assertLess(st["admitRateObserved"], 0.7 * crowd, st)
        # the ETA of the last in line follows the crowd's rate (not
        # admitPerSecond's 1 s, nor the diluted minute's 2.5 times longer)
        last = self.c.me(q, pending[-1])
        self.assertEqual(last.status, 200, repr(last))
        self.assertEqual(last.json.get("status"), "waiting", repr(last))
        pos = last.json["position"]
        self.assertLessEqual(last.json["etaSeconds"], math.ceil(pos / (0.7 * crowd)), repr(last))
        self.assertGreaterEqual(last.json["etaSeconds"], math.ceil(pos / (1.5 * crowd)), repr(last))
