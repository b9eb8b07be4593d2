"""The sale's report (docs/API.md 1.3, "The sale's report", "Codes and
report, precisely", "The report, precisely"): per minute, totals that agree
with the stats counters, every minute present, from/to rounding, CSV, kept
across a restart and after the queue's delete, one report per queue on a
shared Redis."""
import csv
import io
import os
import time

from harness import ENV, WRTest, Waitroomd, now_ms, uid
from helpers import BITS, digest_bits, solve


def unsolve(challenge, bits):
    """A well-formed nonce with fewer than bits zero bits."""
    i = 0
    while digest_bits(challenge, "x%d" % i) >= bits:
        i += 1
    return "x%d" % i

MIN = 60000
STAFF = "s" * 40  # a bypass rule's secret (at least 32 bytes)
COLUMNS = ["at", "joined", "admitted", "consumed", "expired", "left", "abandoned",
           "returned", "rejectedFull", "challengeFailed", "failOpen", "bypass",
           "pushDelivered", "waiting", "away", "admitRate", "waitP50Ms", "waitP90Ms",
           "waitP99Ms"]
COUNTERS = COLUMNS[1:13]


class Report(WRTest):

    def get_report(self, q, query="", client=None):
        r = (client or self.c).request("GET", "/v1/admin/queues/%s/report%s" % (q, query),
                                       self.admin_headers())
        return r

    def admin_headers(self):
        from harness import ADMIN_KEY
        return {"Authorization": "Bearer " + ADMIN_KEY}

    def wait_admitted(self, q, n, client=None, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            if self.stats(q, client)["admittedTotal"] >= n:
                return
            time.sleep(0.05)
        self.fail("not admitted: %r" % self.stats(q, client))

    def post(self, c, q, user, body=None):
        return c.request("POST", "/v1/queues/%s/entries" % q, c.uh(user), body)

    def solved(self, c, q, user):
        r = c.get("/v1/queues/%s/challenge" % q, c.uh(user))
        self.assertEqual(r.status, 200, repr(r))
        ch = r.json["challenge"]
        return {"challenge": ch, "nonce": solve(ch, BITS)}

    def sale(self, client=None):
        """A small sale with join challenges: 4 places (and a repeated
        join), one refused for the line being full, one for a wrong
        solution (challengeFailed), one with none (not counted), one leave,
        two passes consumed, one that expires unused; returns (queue,
        joins that got a place)."""
        c = client or self.c
        q = self.new_queue({"admitPerSecond": 1000, "paused": True, "maxQueueSize": 4,
                            "challengeBits": BITS, "tokenTtlSeconds": 3,
                            "bypass": [{"name": "staff", "header": "X-Staff", "secret": STAFF}]},
                           client=c)
        r = c.get("/v1/queues/%s/tokens/verify" % q, {"X-Staff": STAFF})
        self.assertEqual(r.status, 204, repr(r))  # a bypass, counted
        users = [uid() for _ in range(4)]
        for u in users:
            r = self.post(c, q, u, self.solved(c, q, u))
            self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(self.post(c, q, users[0]).status, 200)  # a repeat: not counted again
        u = uid()
        self.assertError(self.post(c, q, u, self.solved(c, q, u)), 429, "QUEUE_FULL")
        u = uid()
        ch = self.solved(c, q, u)["challenge"]
        r = self.post(c, q, u, {"challenge": ch, "nonce": unsolve(ch, BITS)})
        self.assertError(r, 403, "CHALLENGE_REQUIRED")  # a failed challenge
        self.assertError(self.post(c, q, uid()), 403, "CHALLENGE_REQUIRED")  # none: not a failure
        self.assertIn(c.leave(q, users[3]).status, (200, 204))
        self.assertEqual(c.patch_queue(q, {"paused": False}).status, 200)
        self.wait_admitted(q, 3, c)
        for u in users[:2]:
            tok = c.join(q, u).json["token"]
            self.assertIn(c.consume(q, tok, u).status, (200, 204))
        end = time.time() + 15
        while self.stats(q, c)["expiredTotal"] < 1 and time.time() < end:
            time.sleep(0.1)  # users[2]'s pass expires unused (tokenTtlSeconds 3)
        self.assertEqual(self.stats(q, c)["expiredTotal"], 1)
        return q, 4

    def check_totals(self, rep, st, joined):
        t = rep["totals"]
        self.assertEqual(t["joined"], joined, rep)
        for k, s in (("admitted", "admittedTotal"), ("consumed", "consumedTotal"),
                     ("expired", "expiredTotal"), ("left", "leftTotal"),
                     ("abandoned", "abandonedTotal"), ("returned", "returnedTotal"),
                     ("rejectedFull", "rejectedFullTotal")):
            self.assertEqual(t[k], st[s], "%s: %r vs %r" % (k, rep, st))
        self.assertEqual(t["noShows"], t["expired"])
        self.assertEqual(t["challengeFailed"], 1, rep)
        self.assertEqual(t["bypass"], st["bypassTotal"], rep)
        self.assertEqual(t["bypass"], 1, rep)
        for k in COUNTERS:
            self.assertEqual(t[k], sum(m[k] for m in rep["minutes"]), k)

    def test_totals_agree_with_the_stats_counters(self):
        q, joined = self.sale()
        r = self.get_report(q)
        self.assertEqual(r.status, 200, repr(r))
        rep = r.json
        self.assertEqual(rep["queue"], q)
        self.assertEqual(rep["from"] % MIN, 0)
        self.assertEqual(rep["to"] % MIN, 0)
        self.assertEqual(len(rep["minutes"]), (rep["to"] - rep["from"]) // MIN)
        self.assertEqual(list(rep["minutes"][-1].keys()), COLUMNS)
        self.check_totals(rep, self.stats(q), joined)
        for m in rep["minutes"]:
            self.assertEqual(m["waitP50Ms"] is None, m["admitted"] == 0, m)
        last = rep["minutes"][-1]
        self.assertEqual(last["waiting"], 0)
        self.assertEqual(last["admitRate"], 1000)

    def test_minutes_rounding_zeros_and_bad_range(self):
        q, _ = self.sale()
        t = now_ms()
        frm = t - 3 * MIN - 1234
        r = self.get_report(q, "?from=%d&to=%d" % (frm, t))
        self.assertEqual(r.status, 200, repr(r))
        rep = r.json
        self.assertEqual(rep["from"], frm - frm % MIN)
        self.assertEqual(rep["to"], t - t % MIN + (MIN if t % MIN else 0))
        self.assertEqual([m["at"] for m in rep["minutes"]],
                         list(range(rep["from"], rep["to"], MIN)))
        # the minutes before the queue existed are there, with zeros
        self.assertEqual(rep["minutes"][0]["joined"], 0)
        self.assertIsNone(rep["minutes"][0]["waitP99Ms"])
        r = self.get_report(q, "?from=%d&to=%d" % (t, t - 2 * MIN))
        self.assertError(r, 400, "BAD_REQUEST")
        # the asked values, not the rounded minutes: both round to one minute
        m0 = t - t % MIN
        r = self.get_report(q, "?from=%d&to=%d" % (m0 + 10, m0 + 5))
        self.assertError(r, 400, "BAD_REQUEST")
        r = self.get_report(q, "?from=%d&to=%d" % (m0 + 5, m0 + 5))
        self.assertEqual(r.status, 200, repr(r))
        # a bad value is refused even when a part of the query is not
        # name=value (the whole query was once dropped: a 200 report)
        for qs in ("?from=abc", "?from=abc&x", "?format=xml&x", "?from"):
            self.assertError(self.get_report(q, qs), 400, "BAD_REQUEST", qs)
        r = self.get_report("never-" + uid())
        self.assertError(r, 404, "QUEUE_NOT_FOUND")

    def test_csv_one_row_a_minute(self):
        q, joined = self.sale()
        js = self.get_report(q).json
        r = self.get_report(q, "?format=csv&from=%d&to=%d" % (js["from"], js["to"]))
        self.assertEqual(r.status, 200, repr(r))
        self.assertIn("text/csv", r.headers.get("content-type", ""))
        body = r.body if isinstance(r.body, str) else r.body.decode()
        rows = list(csv.reader(io.StringIO(body)))
        self.assertEqual(rows[0], COLUMNS)
        self.assertEqual(len(rows) - 1, len(js["minutes"]))
        self.assertEqual(sum(int(x[1]) for x in rows[1:]), joined)
        empty = [x for x in rows[1:] if x[2] == "0"]
        for x in empty:
            self.assertEqual(x[16:19], ["", "", ""])

    def test_report_outlives_the_queue(self):
        q, joined = self.sale()
        before = self.get_report(q).json
        self.assertIn(self.c.delete_queue(q).status, (200, 204))
        r = self.get_report(q)
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(r.json["totals"], before["totals"])
        r = self.c.request("GET", "/v1/admin/reports", self.admin_headers())
        self.assertEqual(r.status, 200, repr(r))
        mine = [x for x in r.json["reports"] if x["queue"] == q]
        self.assertEqual(len(mine), 1, r.json)
        self.assertTrue(mine[0]["deleted"])
        self.assertEqual(mine[0]["from"] % MIN, 0)

    def test_report_across_a_restart(self):
        if ENV.store == "redis":
            extra, store = [], ENV.store_arg
        else:
            d = os.path.join(ENV.tmpdir, "report-" + uid())
            os.makedirs(d)
            extra, store = ["--data-dir", d], "memory"
        w = Waitroomd(ENV.waitroomd, store, ENV.secret, ENV.tmpdir,
                      identity="header:X-User-Id", extra=extra)
        self.addCleanup(w.kill)
        q, joined = self.sale(w.client)
        before = self.get_report(q, client=w.client).json
        w.terminate()
        w2 = Waitroomd(ENV.waitroomd, store, ENV.secret, ENV.tmpdir,
                       identity="header:X-User-Id", extra=extra)
        self.addCleanup(w2.kill)
        after = self.get_report(q, client=w2.client).json
        self.assertEqual(after["totals"], before["totals"])
        self.check_totals(after, self.stats(q, w2.client), joined)

    def test_prequeue_joins_count_at_the_join(self):
        """A join into the pre-queue is a place when it is made: someone
        who joins before opensAt and leaves before it was joined all the
        same (a repeat is not); the opening's move counts nobody again."""
        c = self.c
        q = self.new_queue({"admitPerSecond": 1000, "opensAt": now_ms() + 3600000})
        users = [uid() for _ in range(3)]
        for u in users:
            r = c.join(q, u)
            self.assertEqual((r.status, r.json["status"]), (200, "prequeue"), repr(r))
        self.assertEqual(c.join(q, users[0]).json["status"], "prequeue")  # a repeat
        self.assertIn(c.leave(q, users[2]).status, (200, 204))
        t = self.get_report(q).json["totals"]
        self.assertEqual((t["joined"], t["left"], t["admitted"]), (3, 1, 0), t)
        # the opening (opensAt null: at once) moves the two still there
        self.assertEqual(c.patch_queue(q, {"opensAt": None}).status, 200)
        self.wait_admitted(q, 2)
        t = self.get_report(q).json["totals"]
        self.assertEqual((t["joined"], t["left"], t["admitted"]), (3, 1, 2), t)

    def test_two_instances_one_report(self):
        self.redis_only()
        a, b = self.two_instances()
        q = self.new_queue({"admitPerSecond": 1000, "paused": True}, client=a.client)
        for i in range(6):
            self.assertEqual((a.client if i % 2 else b.client).join(q, uid()).status, 200)
        self.assertEqual(a.client.patch_queue(q, {"paused": False}).status, 200)
        self.wait_admitted(q, 6, a.client)
        time.sleep(0.5)  # the admitting instance's batch (200 ms)
        ra = self.get_report(q, client=a.client).json
        rb = self.get_report(q, client=b.client).json
        self.assertEqual(ra["totals"], rb["totals"])
        self.assertEqual(ra["totals"]["joined"], 6)
        self.assertEqual(ra["totals"]["admitted"], 6)

    def test_a_real_minute_boundary(self):
        """Joins, leaves and admissions on both sides of a minute's start
        land in their own minute (the minute's sample is taken before its
        first tick; the instances' counts by the store's clock)."""
        c = self.c
        q = self.new_queue({"admitPerSecond": 1000, "paused": True})
        t = now_ms()
        if MIN - t % MIN < 8000:  # too close to a boundary: start after it
            time.sleep((MIN - t % MIN) / 1000 + 1.5)
        t1 = now_ms()  # at least 8 s before the next minute
        m0 = t1 // MIN * MIN
        first = [uid() for _ in range(3)]
        for u in first:
            self.assertEqual(c.join(q, u).status, 200)
        self.assertIn(c.leave(q, first[2]).status, (200, 204))
        time.sleep(max(0, (m0 + MIN - now_ms()) / 1000) + 1.5)  # the next minute
        second = [uid() for _ in range(4)]
        for u in second:
            self.assertEqual(c.join(q, u).status, 200)
        self.assertIn(c.leave(q, second[3]).status, (200, 204))
        self.assertEqual(c.patch_queue(q, {"paused": False}).status, 200)
        self.wait_admitted(q, 5)
        rep = self.get_report(q, "?from=%d&to=%d" % (m0, m0 + 2 * MIN)).json
        a, b = rep["minutes"]
        self.assertEqual((a["at"], b["at"]), (m0, m0 + MIN))
        self.assertEqual((a["joined"], b["joined"]), (3, 4), rep)
        self.assertEqual((a["left"], b["left"]), (1, 1), rep)
        self.assertEqual((a["admitted"], b["admitted"]), (0, 5), rep)
        self.assertEqual(a["waiting"], 2, rep)  # the line at the first minute's end
        self.assertIsNone(a["waitP50Ms"])
        # 5 admitted: the 3 who joined this minute waited well under 5 s (the
        # 3rd smallest wait is the p50), the 2 of the first minute since t1,
        # at least 8 s before it ended (the 5th is the p90 and p99, nearest
        # rank; buckets within 0.8%)
        self.assertLess(b["waitP50Ms"], 5000, rep)
        self.assertGreaterEqual(b["waitP90Ms"], (m0 + MIN - t1) * 0.99, rep)
        self.assertEqual(b["waitP99Ms"], b["waitP90Ms"], rep)

    def test_fairness_with_the_public_log(self):
        """With publicLog (the embedded store keeps the log), the report
        carries the latest checkpoint, its size and the overtakes the
        replay of the log up to it finds (0 for a fair line); a queue
        without the log has no "fairness"; the statement outlives the
        queue's delete, as the log does."""
        if ENV.store == "redis":
            self.skipTest("the public log is on the embedded store only")
        c = self.c
        q = self.new_queue({"admitPerSecond": 1000, "paused": True, "publicLog": True})
        for _ in range(4):
            self.assertEqual(c.join(q, uid()).status, 200)
        self.assertEqual(c.patch_queue(q, {"paused": False}).status, 200)
        self.wait_admitted(q, 4)
        # the latest checkpoint: the signer signs once a second when a leaf
        # is past the last one, so the report may first carry the empty
        # tree's (a loaded run read size 0); then the 4 joins at least (the
        # admissions may come after it)
        f = self.poll_until(lambda: self.get_report(q).json["fairness"],
                            lambda f: f["size"] >= 4, timeout=10,
                            what="a checkpoint over the 4 joins")
        self.assertEqual(set(f), {"checkpoint", "size", "overtakes"})
        self.assertEqual(f["overtakes"], 0)
        self.assertEqual(f["checkpoint"].split("\n")[1], str(f["size"]), f)
        self.assertIn(c.delete_queue(q).status, (200, 204))
        self.assertEqual(self.get_report(q).json["fairness"]["overtakes"], 0)
        plain = self.new_queue({"admitPerSecond": 1000})
        self.assertNotIn("fairness", self.get_report(plain).json)
