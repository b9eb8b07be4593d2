"""K29: thousands of quiet queues. A queue with nobody waiting and nothing
live costs (almost) nothing per tick, and 2,000 of them beside one busy
queue leave the busy one's admission rate exact, on both stores."""
import time

from harness import ENV, RedisServer, WRTest, Waitroomd, uid
from helpers import plain_metric as metric
from resp import commandstats

N_QUIET = 2000
RATE = 50.0
TICK_MS = 100
PER_TICK = RATE * TICK_MS / 1000.0  # 5


def commands_total(port):
    """Every command Redis ran so far (INFO commandstats, calls summed)."""
    return sum(commandstats(port).values())


class QuietQueues(WRTest):

    def own_server(self):
        """A waitroomd (and, on Redis, a redis-server) of this test alone, so
        that INFO commandstats counts nothing but this test's queues."""
        store = ENV.store_arg
        self.redis = None
        if ENV.store == "redis":
            self.redis = RedisServer(ENV.tmpdir)
            self.addCleanup(self.redis.stop)
            store = "redis://127.0.0.1:%d" % self.redis.port
        srv = Waitroomd(ENV.waitroomd, store, ENV.secret, ENV.tmpdir,
                        identity="header:X-User-Id")
        self.addCleanup(srv.terminate)
        return srv, srv.client

    def wait_quiet(self, c, n, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            q = metric(c, "waitroom_queues_quiet")
            if q is not None and q >= n:
                return
            self.assertLess(time.monotonic(), deadline,
                            "only %s of %d queues quiet" % (q, n))
            time.sleep(0.2)

    def test_k29_quiet_queues_beside_a_busy_one(self):
        """K29: 2,000 quiet queues: on Redis at most 8 commands per quiet
        queue per second (150-190 before), and the busy queue beside them
        admits its 50/s, counted per tick, at least half as fast as a
        reference queue with no quiet queues beside it, measured at the
        same time (the suite's own server): on a starved machine both lose
        the ticks that come late (K24: no catch-up), but the quiet queues
        must not cost the busy one more than that (before: 0.6/s against
        50/s)."""
        srv, c = self.own_server()
        deadline = time.monotonic() + 120
        for i in range(N_QUIET):
            while True:  # 503 while the breaker is open (Redis overloaded: K29 itself)
                r = c.put_queue("quiet-%04d" % i, {"admitPerSecond": 5, "tickMs": TICK_MS})
                if r.status != 503 or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            self.assertEqual(r.status, 200, "PUT of quiet queue %d: %r" % (i, r))
        # (beside 2,000 quiet queues on a starved machine a store call may
        # time out: 503; each call below is idempotent, so it is asked again)
        def until_not_503(call, what):
            r = self.poll_until(call, lambda r: r.status != 503, timeout=15, interval=0.2,
                                what=what)
            self.assertEqual(r.status, 200, "%s: %r" % (what, r))
        busy, ref = ("%s-%s" % (k, uid("")) for k in ("busy", "ref"))
        self.addCleanup(lambda: self.c.delete_queue(ref))
        for q, cl in ((busy, c), (ref, self.c)):
            until_not_503(lambda: cl.put_queue(q, {"admitPerSecond": RATE, "tickMs": TICK_MS,
                                                   "paused": True}), "PUT %s" % q)
        users = [uid("b%03d-" % i) for i in range(300)]
        for u in users:
            until_not_503(lambda: c.join(busy, u), "join %s" % busy)
            until_not_503(lambda: self.c.join(ref, u), "join %s" % ref)
        self.wait_quiet(c, N_QUIET)

        if self.redis:
            t0, n0 = time.monotonic(), commands_total(self.redis.port)
            time.sleep(5.0)
            t1, n1 = time.monotonic(), commands_total(self.redis.port)
            per_queue = (n1 - n0) / N_QUIET / (t1 - t0)
            self.assertLessEqual(per_queue, 8.0,
                                 "%.1f Redis commands per quiet queue per second" % per_queue)

        # the busy queue and the reference, unpaused together, sampled in turn
        # (a PATCH may time out on a starved machine: 503 STORE_UNAVAILABLE,
        # which a loaded CI run saw; unpausing is idempotent, so ask again)
        for q, cl in ((busy, c), (ref, self.c)):
            until_not_503(lambda: cl.patch_queue(q, {"paused": False}), "unpausing %s" % q)
        t0 = time.monotonic()
        samples = {busy: [], ref: []}
        while time.monotonic() < t0 + 4.0:
            for q, cl in ((busy, c), (ref, self.c)):
                sent = time.monotonic()
                r = cl.get_queue(q)
                if r.status == 200:  # (a slow sanitizer build may time a read out: skip it)
                    samples[q].append((time.monotonic(), r.json["stats"]["admittedTotal"], sent))
            time.sleep(0.02)
        got = {}
        for q in (busy, ref):
            s = samples[q]
            # never more than the rate allows between two reads: the server
            # read each count at some moment between the request's send and
            # its answer, so the span is at most from A's send to B's answer
            # (a starved machine answers one read late and the next at once:
            # the answers' own times alone made a 254 ms window of 30)
            for (_, a, sa), (tb, b, _) in zip(s, s[1:]):
                allowed = RATE * (tb - sa) + 2 * PER_TICK + 1
                self.assertLessEqual(b - a, allowed,
                                     "%s: %d admitted in %.0f ms" % (q, b - a, (tb - sa) * 1000))
            s0 = next(x for x in s if x[0] >= t0 + 0.5)
            # (the window between the answers; and the widest it can be,
            # from the first read's send, for the bound from above)
            got[q] = (s[-1][1] - s0[1], s[-1][0] - s0[0], s[-1][0] - s0[2])
        n, dt, wide = got[busy]
        rn, rdt, _ = got[ref]
        self.assertLessEqual(n, RATE * wide * 1.15 + 2 * PER_TICK,
                             "busy queue: %d admitted in %.2f s" % (n, wide))
        # admission runs at all (a floor far below the rate: the same for a
        # stopped scheduler and a starved machine would be no test)
        self.assertGreaterEqual(rn, 0.3 * RATE * rdt, "reference: %d admitted in %.2f s"
                                % (rn, rdt))
        # at least half as fast as the reference (per second of each one's
        # window), less two ticks: K29's fault was 1% (0.6/s against 50/s).
        # This bound was a tenth until session 23: loaded runs had seen
        # 57%, 32% and 20% of the reference and blamed the machine, but
        # the cause was the quiet queues' own discovery on Redis (each
        # second the list of 2,000 names allocated and sorted 59 MB of
        # configs: 20% of a core in a release build, in one piece; under
        # ASan on a loaded machine loop stalls of 0.3-0.9 s that lost ticks
        # and opened the breaker 17 times in a test); with it fixed, three
        # copies of this test at once beside two busy loops kept 96-100%.
        self.assertGreaterEqual(n / dt, 0.5 * rn / rdt - 2 * PER_TICK / dt,
                                "busy queue: %.1f/s beside %d quiet queues, reference %.1f/s"
                                % (n / dt, N_QUIET, rn / rdt))

    def test_k29_quiet_queue_wakes_on_join(self):
        """K29: a quiet queue that people join admits at its rate from the next
        tick (the join wakes it; no one-second sleep first)."""
        q = self.new_queue({"admitPerSecond": 20, "tickMs": TICK_MS})
        time.sleep(0.6)  # its first tick found it quiet
        users = [uid("w%02d-" % i) for i in range(40)]
        stalls0 = metric(self.c, "waitroom_event_loop_stalls_total")
        t0 = time.monotonic()
        for u in users:
            self.assertEqual(self.c.join(q, u).status, 200)
        samples = []  # (sent, answered, admittedTotal)
        while time.monotonic() < t0 + 2.5:
            sent = time.monotonic()
            a = self.stats(q)["admittedTotal"]
            samples.append((sent, time.monotonic(), a))
            time.sleep(0.02)
        # the admission delay (250 ms) and a tick, not a quiet second. The
        # first admission came after the last read that saw none was sent:
        # that send's time is the bound (a late answer or a starved client
        # does not count against the server), and a stall the server itself
        # reports in this window (a loaded machine: one of 436 ms failed
        # a run) widens it by that much.
        i = next((k for k, smp in enumerate(samples) if smp[2] > 0), None)
        self.assertIsNotNone(i, "nobody admitted in 2.5 s")
        none_yet = samples[i - 1][0] if i > 0 else t0
        stalls = metric(self.c, "waitroom_event_loop_stalls_total") - stalls0
        late = stalls * metric(self.c, "waitroom_event_loop_last_stall_seconds")
        self.assertLess(none_yet - t0, 0.9 + late,
                        "nobody admitted %.2f s after the join (%d loop stalls, the last %.2f s)"
                        % (none_yet - t0, stalls, late / stalls if stalls else 0))
        samples = [(smp[1], smp[2]) for smp in samples]
        s0 = next(s for s in samples if s[0] >= t0 + 0.6)
        s1 = samples[-1]
        n, dt = s1[1] - s0[1], s1[0] - s0[0]
        self.assertLessEqual(abs(n - 20 * dt), 0.15 * 20 * dt + 2 * 2,
                             "%d admitted in %.2f s" % (n, dt))
