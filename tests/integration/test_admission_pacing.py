"""Admission pacing: the rate is spread over the ticks, never a second's
worth at once, and fractional per-tick budgets add up to the exact rate
(K13). test_admission.py has the rate, FIFO and pause rules.
"""
from harness import WRTest, uid
from helpers import Sampler


class AdmissionPacing(WRTest):

    def test_k13_175_per_second_is_17_or_18_per_tick(self):
        """K13, K24: 175/s at 100 ms ticks: every step of admittedTotal is k ticks of
        17 or 18, the first step at most one tick's budget, and the total is
        17.5 per tick within 1.5 (175/s, not 180/s)."""
        q = self.new_queue({"admitPerSecond": 175, "tickMs": 100, "paused": True})
        for _ in range(700):
            self.join_ok(q, uid())
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        s = Sampler(self, q, self.c)
        s.run(3.0, 0.005)
        steps = [b[1] - a[1] for a, b in zip(s.samples, s.samples[1:]) if b[1] != a[1]]
        self.assertGreater(len(steps), 20, "too few admission steps seen: %r" % steps)
        # The first tick after the unpause may come less than 250 ms after
        # the last of the 700 joins (they take about that long), and the
        # admission delay (nobody admitted sooner than 250 ms after joining)
        # stops it at the first person not yet due: it may admit fewer,
        # never more than one tick's budget (K24), and is not counted in
        # the rate below.
        self.assertLessEqual(steps[0], 18, "first step %d above one tick (steps %r)" % (steps[0], steps))
        steps = steps[1:]
        ticks = 0
        for d in steps:
            k = max(1, round(d / 17.5))
            self.assertTrue(17 * k <= d <= 18 * k, "a step of %d admissions is not %d ticks' "
                            "worth of 17 or 18 (steps %r)" % (d, k, steps))
            ticks += k
        total = sum(steps)
        self.assertLessEqual(abs(total - 17.5 * ticks), 1.5,
                             "%d admitted in %d ticks: %.2f per tick, expected 17.5 (175/s, "
                             "not 180/s)" % (total, ticks, total / ticks))
