"""Durability: no acknowledged user is lost. A SIGKILLed instance in the
middle of admission loses nobody and gives nobody two passes (K10); the WAIT
mode (--redis-wait-replicas) waits for a replica's acknowledgement of each
write and says so in its metrics (K12); a late replica is not an outage:
joins answer 503, never a fail-open pass (K26). Redis only, private servers.
"""
import os
import random
import signal
import time

from harness import ENV, HOLD, WRTest, Waitroomd, uid
from helpers import metrics, PrivateRedisTest
from resp import Redis


class Durability(PrivateRedisTest):

    def test_k10_sigkill_while_admitting_loses_nobody(self):
        """K10: 6 SIGKILLs of the only instance while it admits 400 users at 200/s:
        waiting + active = 400, ZCARD active = HLEN tokens = active =
        admittedTotal, the admitted are a prefix of the join order, the waiting
        keep their order, and the passes consume as their own users."""
        redis, w = self.private()
        q = self.new_queue({"admitPerSecond": 200, "tickMs": 50, "paused": True},
                           client=w.client)
        users = ["k10-%03d" % i for i in range(400)]
        for u in users:
            self.join_ok(q, u, client=w.client)
        # Nobody is admitted sooner than 250 ms after joining (the admission
        # delay): let it pass, so the first instance admits before its kill.
        time.sleep(0.3)
        self.assertEqual(w.client.patch_queue(q, {"paused": False}).status, 200)
        rnd = random.Random(1)
        for _ in range(6):
            time.sleep(rnd.uniform(0.05, 0.3))
            w.kill()   # SIGKILL, mid-admission
            w = self.instance(redis)
        time.sleep(0.1)
        self.assertEqual(w.client.patch_queue(q, {"paused": True}).status, 200)
        time.sleep(0.2)
        st = self.stats(q, client=w.client)
        self.assertEqual(st["waiting"] + st["active"], 400, "users vanished: %r" % st)
        self.assertEqual(st["admittedTotal"], st["active"], st)
        self.assertGreater(st["admittedTotal"], 0)
        r = Redis(redis.port)
        self.addCleanup(r.close)
        self.assertEqual(r.cmd("ZCARD", "wr:{%s}:active" % q), st["active"])
        self.assertEqual(r.cmd("HLEN", "wr:{%s}:tokens" % q), st["active"])
        n = st["admittedTotal"]
        tokens = []
        for i, u in enumerate(users):
            res = w.client.me(q, u)
            self.assertEqual(res.status, 200, "%s: %r" % (u, res))
            if i < n:
                self.assertEqual(res.json["status"], "admitted", "FIFO: %s (#%d of %d)"
                                 % (u, i + 1, n))
                tokens.append(res.json["token"])
            else:
                self.assertWaiting(res, i - n + 1, 400 - n, eta_null=True,
                                   what="%s keeps the original order" % u)
        for u, tok in zip(users, tokens[:20]):
            res = w.client.consume(q, tok)
            self.assertEqual((res.status, res.json.get("userId")), (200, u), repr(res))

    # ------------------------------------------------------------ WAIT (K12)
    def test_wait_replicas_durability_mode(self):
        """K12: --redis-wait-replicas 1: one WAIT per write (none on idle ticks), the
        replica has the consumption; with 2 wanted and 1 present, WAIT times out,
        the consume stands (answered after the timeout) and is counted short."""
        primary, replica = self.primary_and_replica()
        url = "redis://127.0.0.1:%d" % primary.port
        # (a WAIT timeout of 3 s: this part is about the count of WAITs; on
        # a loaded machine the replica's ack took over the default 100 ms,
        # and a join then answers 503, as it must: test_late_replica)
        w1 = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                       extra=["--redis-wait-replicas", "1", "--redis-wait-timeout-ms", "3000"])
        self.addCleanup(w1.kill)
        q = self.new_queue({"admitPerSecond": 1000, "tickMs": 50}, client=w1.client)
        tok = self.admit(q, uid(), client=w1.client)
        tok2 = self.admit(q, uid(), client=w1.client)   # consumed by w2 below
        self.assertEqual(w1.client.consume(q, tok).status, 200)
        time.sleep(0.2)
        m = metrics(w1)
        # six WAITs: the harness's startup probe join; per user the join and
        # the tick that admitted them; one consume. Idle ticks and refusals
        # send none (they would block the connection)
        self.assertEqual(m.get(("waitroom_redis_wait_total", 'result="ok"'), 0), 6)
        time.sleep(0.5)   # ten more ticks, admitting nobody
        self.assertEqual(metrics(w1).get(("waitroom_redis_wait_total", 'result="ok"')), 6)
        self.assertEqual(m.get(("waitroom_redis_wait_total", 'result="short"')), 0)
        # the replica has the consumption (WAIT returned after it acknowledged)
        rc = replica.client()
        self.addCleanup(rc.close)
        self.assertEqual(rc.cmd("HGET", "wr:{%s}:state" % q, "consumedTotal"), "1")
        self.assertExitsCleanly(w1)
        # 2 replicas wanted, 1 exists: WAIT times out after 50 ms; the
        # consume stands and is answered as done (a join would answer 503:
        # test_redis_prod's failover test)
        w2 = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                       extra=["--redis-wait-replicas", "2", "--redis-wait-timeout-ms", "50"])
        self.addCleanup(w2.kill)
        tok = tok2
        t0 = time.monotonic()
        r = w2.client.consume(q, tok)
        took = time.monotonic() - t0
        self.assertEqual(r.status, 200, repr(r))
        self.assertGreaterEqual(took, 0.05, "consume answered before WAIT's timeout")
        self.assertTokenRefused(w2.client.consume(q, tok), "consumed")
        m = metrics(w2)
        self.assertGreater(m.get(("waitroom_redis_wait_total", 'result="short"'), 0), 0)
        self.assertIn("WAIT", w2.stderr_tail())
        self.assertExitsCleanly(w2)


class LateReplica(WRTest):
    """K26: a late replica is not an outage (docs/RELIABILITY.md)."""


    def stop_process(self, proc):
        """SIGSTOP (a paused process: its sockets stay open, it answers
        nothing); SIGCONT at the end whatever happens."""
        os.kill(proc.pid, signal.SIGSTOP)
        self.addCleanup(lambda: proc.poll() is None and os.kill(proc.pid, signal.SIGCONT))

    def assertReplicaLate(self, r, what):
        """503 STORE_UNAVAILABLE with Retry-After, never a pass."""
        self.assertError(r, 503, "STORE_UNAVAILABLE", what)
        self.assertTrue(r.headers.get("retry-after", "").isdigit(), "%s: %r" % (what, r))
        self.assertNotIn("failOpen", r.body, what)
        self.assertNotIn("token", r.json, what)
        self.assertIn("replica", r.json.get("message", ""), what)

    def test_late_replica_joins_answer_503_never_a_pass(self):
        """K26: with --redis-wait-replicas 1, a replica stopped (SIGSTOP) makes
        every join's WAIT answer 0; the store is reachable, so degraded mode
        never starts: each join answers 503 STORE_UNAVAILABLE with
        Retry-After (never a fail-open pass, on a paused queue nor on a
        failPolicy "open" one), the entry stands on the primary (a retry
        finds the same place), polls answer from the store, the breaker stays
        closed; once the replica is back the joins answer 200 again."""
        primary, replica = self.primary_and_replica()
        w = Waitroomd(ENV.waitroomd, "redis://127.0.0.1:%d" % primary.port, ENV.secret,
                      ENV.tmpdir, identity="header:X-User-Id",
                      extra=["--redis-wait-replicas", "1"])
        self.addCleanup(w.kill)
        qp = self.new_queue(dict(HOLD, failPolicy="limited", failOpenPerSecond=100),
                            client=w.client)
        qo = self.new_queue({"admitPerSecond": 0.125, "failPolicy": "open"}, client=w.client)
        first = uid("first-")
        # (with the replica running, a loaded machine may still ack a join
        # later than the default 100 ms: that join is a 503 too, and a retry
        # of a join is the same join)
        r = self.poll_until(lambda: w.client.join(qp, first), lambda r: r.status == 200,
                            timeout=15, what="the first join acknowledged")
        self.assertEqual(r.json["position"], 1)

        self.stop_process(replica.proc)
        joined = []
        for i in range(6):
            for q in (qp, qo):
                u = uid("late-")
                self.assertReplicaLate(w.client.join(q, u), "join %d of %s" % (i, q))
                joined.append((q, u))
        # the entries stand on the primary: in line, in join order
        for i, u in enumerate([u for q, u in joined if q == qp]):
            self.assertWaiting(w.client.me(qp, u), i + 2, eta_null=True, what="kept " + u)
        self.assertWaiting(w.client.me(qp, first), 1, eta_null=True, what="first")
        # a retry of the same join: the same place, the same answer
        u = joined[0][1]
        self.assertReplicaLate(w.client.join(qp, u), "retry")
        self.assertWaiting(w.client.me(qp, u), 2, eta_null=True, what="after the retry")
        # the store is reachable: ready, the breaker closed, nobody fail-open
        self.assertEqual(w.client.get("/readyz").status, 200)
        m = metrics(w)
        self.assertEqual(m.get(("waitroom_breaker_state", 'state="closed"')), 1)
        self.assertEqual(m.get(("waitroom_breaker_transitions_total", 'to="open"'), 0), 0)
        for q in (qp, qo):
            self.assertIsNone(m.get(("waitroom_fail_open_admitted_total", 'queue="%s"' % q)))
        self.assertGreaterEqual(m.get(("waitroom_redis_wait_total", 'result="short"'), 0), 13)
        self.poll_until(w.stderr_tail, lambda t: "WAIT: 0 of 1 replicas acknowledged" in t,
                        what="the short WAIT logged (through the log's writer thread)")

        # the replica is back: joins are acknowledged again
        os.kill(replica.proc.pid, signal.SIGCONT)
        r = self.poll_until(lambda: w.client.join(qp, u), lambda r: r.status == 200, timeout=15,
                            what="joins answered once the replica is back")
        self.assertWaiting(r, 2, eta_null=True, what="the retry after")
        self.assertEqual(w.terminate(), 0)
