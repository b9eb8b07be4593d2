"""A full line's Retry-After: the queue's own slowest poll band, in seconds,
on the JSON join and on the queue page alike (docs/API.md, "Choices where
the contract is silent": 429 QUEUE_FULL carries Retry-After = the slowest
poll band in seconds, 5 by default)."""
from harness import HOLD, WRTest, uid


class FullLine(WRTest):

    def fill(self, cfg):
        q = self.new_queue(dict(HOLD, maxQueueSize=1, **cfg))
        self.join_ok(q, uid())
        return q

    def test_full_line_retry_after_is_the_queues_slowest_band(self):
        """Not a K case (docs/API.md 'Choices'): a queue whose last poll band
        is 7.5 s tells a full line 'Retry-After: 8' on POST entries and on
        the queue page (the page said the default's 5 before)."""
        q = self.fill({"pollBands": [{"upTo": 10, "ms": 1000}, {"ms": 7500}]})
        r = self.c.join(q, uid())
        self.assertError(r, 429, "QUEUE_FULL", "JSON join")
        self.assertEqual(r.headers.get("retry-after"), "8", "JSON join: %r" % r)
        r = self.c.get("/q/%s" % q, {"X-User-Id": uid()})
        self.assertEqual(r.status, 429, "page: %r" % r)
        self.assertIn("text/html", r.headers.get("content-type", ""))
        self.assertEqual(r.headers.get("retry-after"), "8", "page: %r" % r)

    def test_full_line_retry_after_default_is_5(self):
        """Not a K case: with the default bands, 5 on both."""
        q = self.fill({})
        r = self.c.join(q, uid())
        self.assertError(r, 429, "QUEUE_FULL")
        self.assertEqual(r.headers.get("retry-after"), "5")
        r = self.c.get("/q/%s" % q, {"X-User-Id": uid()})
        self.assertEqual(r.status, 429, "page: %r" % r)
        self.assertEqual(r.headers.get("retry-after"), "5")
