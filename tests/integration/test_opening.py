"""Sale opening (API 1.1, queue config opensAt and preQueueShuffle): the
pre-queue answers and its countdown polls spread over the first second
after opensAt, nobody admitted before it, the opening in one step (a
uniformly random order, or arrival order), everyone in the pre-queue ahead
of later arrivals, postpone, null or past opens at once, paused, leave,
stats prequeue; on Redis two instances racing to open one queue and an
instance killed during the opening of a large pre-queue; on the embedded
store the snapshot keeps a pre-queue across a restart. Both stores."""
import collections
import itertools
import secrets
import signal
import tempfile
import time

from harness import ENV, FAST, HOLD, RedisServer, Waitroomd, WRTest, now_ms, uid
from helpers import memory_server, private_server

PRE_KEYS = {"status", "opensAt", "retryAfterMs"}


class Opening(WRTest):

    def prequeue_queue(self, cfg=None, opens_in_ms=3000, client=None):
        at = now_ms() + opens_in_ms
        q = self.new_queue(dict(cfg or FAST, opensAt=at), client=client)
        return q, at

    def assertPrequeue(self, r, opens_at, what=""):
        self.assertEqual(r.status, 200, "%s: %r" % (what, r))
        self.assertJsonHeaders(r, what)
        self.assertEqual(set(r.json), PRE_KEYS, "%s: %r" % (what, r))
        self.assertEqual(r.json["status"], "prequeue", "%s: %r" % (what, r))
        self.assertEqual(r.json["opensAt"], opens_at, "%s: %r" % (what, r))
        self.assertInt(r.json["retryAfterMs"], what)
        self.assertGreaterEqual(r.json["retryAfterMs"], 250, "%s: %r" % (what, r))
        self.assertLessEqual(r.json["retryAfterMs"], 5000, "%s: %r" % (what, r))
        return r.json

    def wait_opened(self, q, client=None, timeout=10.0):
        """Waits until stats show no pre-queue (the opening has run)."""
        return self.poll_until(lambda: self.stats(q, client), lambda st: st["prequeue"] == 0,
                               timeout=timeout, what="the opening of %s" % q)

    def positions(self, q, users, client=None):
        c = client or self.c
        out = {}
        for u in users:
            r = c.me(q, u)
            self.assertEqual(r.status, 200, repr(r))
            self.assertEqual(r.json["status"], "waiting", "%s: %r" % (u, r))
            out[u] = r.json["position"]
        return out

    # ------------------------------------------------------------ answers
    def test_config_fields(self):
        q = self.new_queue(FAST)
        cfg = self.config(q)
        self.assertIsNone(cfg["opensAt"])
        self.assertIs(cfg["preQueueShuffle"], True)
        at = now_ms() + 60000
        r = self.c.patch_queue(q, {"opensAt": at, "preQueueShuffle": False})
        self.assertEqual(r.status, 200, repr(r))
        cfg = self.config(q)
        self.assertEqual((cfg["opensAt"], cfg["preQueueShuffle"]), (at, False))
        for bad in ({"opensAt": -5}, {"opensAt": "soon"}, {"opensAt": 1.5},
                    {"preQueueShuffle": "yes"}):
            r = self.c.patch_queue(q, bad)
            self.assertError(r, 400, "INVALID_CONFIG", repr(bad))
            self.assertEqual(r.json.get("field"), list(bad)[0], repr(r))
        r = self.c.patch_queue(q, {"opensAt": None})
        self.assertEqual(r.status, 200, repr(r))
        self.assertIsNone(self.config(q)["opensAt"])

    def test_prequeue_answers_and_stats(self):
        q, at = self.prequeue_queue(opens_in_ms=60000)
        users = [uid("pre-") for _ in range(5)]
        for u in users:
            self.assertPrequeue(self.c.join(q, u), at, "join")
            self.assertPrequeue(self.c.join(q, u), at, "join again")
            self.assertPrequeue(self.c.me(q, u), at, "me")
        st = self.stats(q)
        self.assertEqual((st["prequeue"], st["waiting"], st["admittedTotal"]), (5, 0, 0), st)
        # far from the opening: about 5 s, never more
        r = self.c.me(q, users[0])
        self.assertGreaterEqual(r.json["retryAfterMs"], 4000, repr(r))

    def test_prequeue_cookie_mode_and_page(self):
        cc = ENV.cookie.client
        q, at = self.prequeue_queue(opens_in_ms=60000, client=cc)
        r = cc.join(q, None)
        self.assertPrequeue(r, at, "cookie join")
        vid = [c.split(";")[0] for c in r.set_cookies if c.startswith("wr_vid=")]
        self.assertEqual(len(vid), 1, repr(r))
        self.assertPrequeue(cc.me(q, None, {"Cookie": vid[0]}), at, "cookie me")
        page = cc.get("/q/%s" % q)  # a page join of a new visitor: must not fail
        self.assertEqual(page.status, 200, repr(page))
        page = cc.get("/q/%s" % q, {"Cookie": vid[0]})
        self.assertEqual(page.status, 200, repr(page))
        self.assertEqual(self.stats(q, cc)["prequeue"], 2)

    def test_leave_in_prequeue(self):
        q, at = self.prequeue_queue(opens_in_ms=60000)
        a, b = uid(), uid()
        self.join_ok(q, a)
        self.join_ok(q, b)
        self.assertEqual(self.c.leave(q, a).status, 204)
        self.assertError(self.c.me(q, a), 404, "NOT_IN_QUEUE")
        self.assertEqual(self.c.leave(q, a).status, 404)
        st = self.stats(q)
        self.assertEqual((st["prequeue"], st["leftTotal"]), (1, 1), st)
        self.assertPrequeue(self.c.join(q, a), at, "join again after leaving")

    def test_idle_timeout_in_the_prequeue(self):
        """1.2 (away, not gone): people away before the opening keep their
        place in the pre-queue and enter the line at the opening like
        everyone else; only a page join that never asked again leaves."""
        q, at = self.prequeue_queue(dict(HOLD, idleTimeoutSeconds=1), opens_in_ms=60000)
        keeps, stops = uid("keeps-"), uid("stops-")
        self.assertPrequeue(self.c.join(q, keeps), at)
        self.assertPrequeue(self.c.join(q, stops), at)
        scanner = self.c.get("/q/%s" % q, {"X-User-Id": uid("scan-")})
        self.assertEqual(scanner.status, 200, repr(scanner))

        def seen():
            self.assertPrequeue(self.c.me(q, keeps), at, "a person who keeps asking")
            return self.stats(q)
        st = self.poll_until(seen, lambda st: st["abandonedTotal"] == 1, timeout=10,
                             interval=0.3, what="the scanner removed")
        self.assertEqual(st["prequeue"], 2, st)
        self.assertPrequeue(self.c.me(q, stops), at, "away, kept")
        self.assertEqual(self.c.patch_queue(q, {"opensAt": None}).status, 200)
        pos = self.positions(q, [keeps, stops])
        self.assertEqual(sorted(pos.values()), [1, 2], pos)

    def test_countdown_polls_spread_over_the_first_second(self):
        """300 people asking 2-3 s before opensAt are told to come back in
        their own slot of the first second after it: never before opensAt,
        within the second, and spread (no 50 ms bucket with more than
        three times its share, every 100 ms bucket used)."""
        q, at = self.prequeue_queue(opens_in_ms=4000)
        landings = []
        for i in range(300):
            u = "spread-%d-%s" % (i, secrets.token_hex(3))
            t0 = now_ms()
            r = self.c.join(q, u)
            t1 = now_ms()
            b = self.assertPrequeue(r, at, u)
            if at - t1 > 4600:  # too early: the ~5 s poll is the shorter
                continue
            # the server's clock read lies between t0 and t1
            lo, hi = t0 + b["retryAfterMs"], t1 + b["retryAfterMs"]
            self.assertGreaterEqual(hi, at, "%s lands before the opening: %r" % (u, r))
            self.assertLessEqual(lo, at + 1000, "%s lands after the first second: %r" % (u, r))
            landings.append((lo + hi) / 2 - at)
        self.assertGreater(len(landings), 200)
        buckets = collections.Counter(int(max(0, min(999, x)) // 50) for x in landings)
        share = len(landings) / 20
        self.assertLessEqual(max(buckets.values()), 3 * share + 3, sorted(buckets.items()))
        tenths = {int(max(0, min(999, x)) // 100) for x in landings}
        self.assertEqual(tenths, set(range(10)), sorted(buckets.items()))

    # ------------------------------------------------------------ opening
    def test_nobody_admitted_before_opens_at(self):
        q, at = self.prequeue_queue(FAST, opens_in_ms=2500)
        users = [uid("early-") for _ in range(5)]
        for u in users:
            self.join_ok(q, u)
        while now_ms() < at - 300:
            for u in users:
                r = self.c.me(q, u)
                self.assertEqual(r.json["status"], "prequeue", repr(r))
            self.assertEqual(self.stats(q)["admittedTotal"], 0)
            time.sleep(0.1)
        for u in users:
            b = self.wait_admitted(q, u, timeout=10)
            # a token issued at or after opensAt (iat in seconds)
            self.assertGreaterEqual(b["expiresAt"], at + 300 * 1000 - 1000)
        self.assertEqual(self.stats(q)["admittedTotal"], 5)

    def test_prequeue_ahead_of_later_arrivals_fcfs(self):
        q, at = self.prequeue_queue(HOLD, opens_in_ms=2000)
        pre = [uid("p%02d-" % i) for i in range(12)]
        for u in pre:
            self.join_ok(q, u)
        while now_ms() < at + 50:
            time.sleep(0.05)
        later = [uid("l%02d-" % i) for i in range(6)]
        for i, u in enumerate(later):
            b = self.join_ok(q, u)
            self.assertEqual(b["status"], "waiting", repr(b))
            self.assertEqual(b["position"], len(pre) + i + 1, repr(b))
        st = self.wait_opened(q)
        self.assertEqual((st["waiting"], st["prequeue"]), (18, 0), st)
        pos = self.positions(q, pre + later)
        self.assertEqual(sorted(pos[u] for u in pre), list(range(1, 13)))
        self.assertEqual([pos[u] for u in later], list(range(13, 19)))

    def test_arrival_order_without_shuffle(self):
        q, at = self.prequeue_queue(dict(HOLD, preQueueShuffle=False), opens_in_ms=60000)
        pre = [uid("a%02d-" % i) for i in range(10)]
        for u in pre:
            self.join_ok(q, u)
        self.assertEqual(self.c.patch_queue(q, {"opensAt": None}).status, 200)
        pos = self.positions(q, pre)
        self.assertEqual([pos[u] for u in pre], list(range(1, 11)))

    def test_null_opens_at_once(self):
        q, at = self.prequeue_queue(FAST, opens_in_ms=60000)
        users = [uid() for _ in range(3)]
        for u in users:
            self.join_ok(q, u)
        self.assertEqual(self.c.patch_queue(q, {"opensAt": None}).status, 200)
        for u in users:
            self.wait_admitted(q, u)
        b = self.join_ok(q, uid())
        self.assertIn(b["status"], ("waiting", "admitted"))

    def test_past_opens_at_once(self):
        q, at = self.prequeue_queue(HOLD, opens_in_ms=60000)
        users = [uid() for _ in range(3)]
        for u in users:
            self.join_ok(q, u)
        self.assertEqual(self.c.patch_queue(q, {"opensAt": now_ms() - 1000}).status, 200)
        pos = self.positions(q, users)
        self.assertEqual(sorted(pos.values()), [1, 2, 3])
        st = self.stats(q)
        self.assertEqual((st["prequeue"], st["waiting"]), (0, 3), st)

    def test_postpone(self):
        q, at = self.prequeue_queue(FAST, opens_in_ms=1500)
        u = uid()
        self.join_ok(q, u)
        later = now_ms() + 4000
        self.assertEqual(self.c.patch_queue(q, {"opensAt": later}).status, 200)
        while now_ms() < at + 800:
            time.sleep(0.1)
        self.assertPrequeue(self.c.me(q, u), later, "after the first opensAt")
        self.assertEqual(self.stats(q)["admittedTotal"], 0)
        self.wait_admitted(q, u, timeout=12)
        self.assertGreaterEqual(now_ms(), later)

    def test_paused_prequeue_enters_the_line(self):
        q, at = self.prequeue_queue(HOLD, opens_in_ms=1500)
        users = [uid() for _ in range(4)]
        for u in users:
            self.join_ok(q, u)
        st = self.wait_opened(q)
        self.assertEqual((st["waiting"], st["admittedTotal"]), (4, 0), st)
        for u in users:
            self.assertWaiting(self.c.me(q, u), self.c.me(q, u).json["position"], eta_null=True)
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        for u in users:
            self.wait_admitted(q, u)

    def test_shuffle_is_uniform(self):
        """Many openings of three people: each of the 6 orders equally
        likely (chi-square, 5 degrees of freedom, failing only above 40:
        p < 1e-7 for a fair shuffle), and each pair in arrival order about
        half the time (binomial, 6 sigma)."""
        rounds = 300
        q = self.new_queue(dict(HOLD, opensAt=now_ms() + 3600000))
        counts = collections.Counter()
        first_before_second = 0
        for i in range(rounds):
            if i:
                self.assertEqual(
                    self.c.patch_queue(q, {"opensAt": now_ms() + 3600000}).status, 200)
            users = ["r%d-%d-%s" % (i, k, secrets.token_hex(2)) for k in range(3)]
            for u in users:
                self.assertEqual(self.c.join(q, u).json["status"], "prequeue")
            self.assertEqual(self.c.patch_queue(q, {"opensAt": None}).status, 200)
            pos = self.positions(q, users)
            order = tuple(sorted(range(3), key=lambda k: pos[users[k]]))
            self.assertEqual(sorted(pos.values()), [1, 2, 3], pos)
            counts[order] += 1
            first_before_second += pos[users[0]] < pos[users[1]]
            for u in users:
                self.assertEqual(self.c.leave(q, u).status, 204)
        exp = rounds / 6
        chi2 = sum((counts[p] - exp) ** 2 / exp for p in itertools.permutations(range(3)))
        self.assertLess(chi2, 40.0, dict(counts))
        sd = (rounds * 0.25) ** 0.5
        self.assertLess(abs(first_before_second - rounds / 2), 6 * sd, first_before_second)

    # ------------------------------------------------------- Redis: racing
    def load_prequeue(self, r, q, n, prefix):
        """Puts n people straight into q's Redis pre-queue (random keys as
        waitroomd gives them): a large pre-queue without n HTTP joins."""
        users = ["%s%06d" % (prefix, i) for i in range(n)]
        keys = {}
        for i in range(0, n, 2000):
            args = []
            for u in users[i:i + 2000]:
                k = secrets.randbits(52)
                keys[u] = k
                args += [k, u]
            r.cmd("ZADD", "wr:{%s}:pre" % q, *args)
        r.cmd("HSET", "wr:{%s}:config" % q, "preq", "1")
        return users, keys

    def check_line(self, r, q, keys):
        """The line holds exactly the pre-queue, in key order, scores
        contiguous: nobody lost, duplicated or out of order."""
        flat = r.cmd("ZRANGE", "wr:{%s}:waiting" % q, 0, -1, "WITHSCORES")
        line = flat[0::2]
        scores = [int(s) for s in flat[1::2]]
        self.assertEqual(r.cmd("ZCARD", "wr:{%s}:pre" % q), 0)
        self.assertEqual(len(line), len(keys))
        self.assertEqual(set(line), set(keys))
        self.assertEqual(scores, list(range(scores[0], scores[0] + len(scores))))
        self.assertEqual(line, sorted(keys, key=lambda u: (keys[u], u)))

    def test_two_instances_race_to_open(self):
        self.redis_only()
        w2 = private_server(self, identity="header:X-User-Id")
        r = ENV.redis.client()
        self.addCleanup(r.close)
        at = now_ms() + 2500
        q = self.new_queue(dict(HOLD, opensAt=at))
        users, keys = self.load_prequeue(r, q, 20000, "race-")
        # both instances know the queue and tick it
        self.assertEqual(w2.client.get_queue(q).status, 200)
        http = [uid("h-") for _ in range(20)]
        for u in http:
            self.assertEqual(w2.client.join(q, u).json["status"], "prequeue")
            keys[u] = int(r.cmd("ZSCORE", "wr:{%s}:pre" % q, u))
        st = self.stats(q)
        self.assertEqual(st["prequeue"], 20020, st)
        # stats show prequeue 0 from the moment the opening begins; the move
        # itself ends when the pre-queue set is empty
        self.poll_until(lambda: (self.stats(q)["prequeue"], r.cmd("ZCARD", "wr:{%s}:pre" % q)),
                        lambda v: v == (0, 0), timeout=15, what="the opening")
        self.check_line(r, q, keys)
        sample = http + users[::997]
        p1 = self.positions(q, sample)
        p2 = self.positions(q, sample, client=w2.client)
        self.assertEqual(p1, p2)
        st = self.stats(q, w2.client)
        self.assertEqual((st["waiting"], st["prequeue"]), (20020, 0), st)

    def test_instance_killed_during_a_large_opening(self):
        """SIGKILL while a 100,000-person pre-queue moves into the line:
        another instance finishes it; nobody lost or duplicated, key order."""
        self.redis_only()
        redis = RedisServer(ENV.tmpdir)
        self.addCleanup(redis.stop)
        url = "redis://127.0.0.1:%d" % redis.port
        w1 = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id")
        self.addCleanup(w1.kill)
        r = redis.client()
        self.addCleanup(r.close)
        at = now_ms() + 3000
        q = self.new_queue(dict(HOLD, opensAt=at), client=w1.client)
        users, keys = self.load_prequeue(r, q, 100000, "kill-")
        self.assertEqual(w1.client.get_queue(q).status, 200)
        # kill it as soon as the move has begun and before it ends
        deadline = time.monotonic() + 20
        n = None
        while time.monotonic() < deadline:
            n = r.cmd("ZCARD", "wr:{%s}:pre" % q)
            if n < 100000:
                break
            time.sleep(0.001)
        w1.proc.send_signal(signal.SIGKILL)
        w1.proc.wait()
        left = r.cmd("ZCARD", "wr:{%s}:pre" % q)
        moved = r.cmd("ZCARD", "wr:{%s}:waiting" % q)
        self.assertEqual(left + moved, 100000)
        w2 = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id")
        self.addCleanup(w2.kill)
        self.poll_until(lambda: self.stats(q, w2.client)["prequeue"], lambda n: n == 0,
                        timeout=20, what="the opening finished by the second instance")
        self.poll_until(lambda: r.cmd("HGET", "wr:{%s}:state" % q, "opening"),
                        lambda v: v is None, timeout=20, what="the opening's end")
        self.check_line(r, q, keys)
        self.assertEqual(self.stats(q, w2.client)["waiting"], 100000)
        self.assertLess(moved, 100000, "killed after the opening ended (%d moved)" % moved)

    # ------------------------------------------------- memory: the snapshot
    def test_snapshot_keeps_the_prequeue(self):
        if ENV.store != "memory":
            self.skipTest("memory only")
        data = tempfile.mkdtemp(prefix="wr-open-snap-", dir=ENV.tmpdir)
        w = memory_server(self, data)
        at = now_ms() + 60000
        q = self.new_queue(dict(HOLD, opensAt=at), client=w.client)
        users = [uid() for _ in range(5)]
        for u in users:
            self.assertPrequeue(w.client.join(q, u), at)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())
        w = memory_server(self, data)
        for u in users:
            self.assertPrequeue(w.client.me(q, u), at, "after the restart")
        self.assertEqual(self.stats(q, w.client)["prequeue"], 5)
        self.assertEqual(w.client.patch_queue(q, {"opensAt": None}).status, 200)
        pos = self.positions(q, users, client=w.client)
        self.assertEqual(sorted(pos.values()), [1, 2, 3, 4, 5])
        self.assertEqual(w.terminate(), 0, w.stderr_tail())
