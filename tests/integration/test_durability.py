"""Durability mode (`--redis-wait-replicas N`, docs/RELIABILITY.md): what a
join answers when a replica is late while the primary is healthy.

Each test runs its own primary and replica (redis-server --replicaof) and
its own waitroomd; Redis-only (skipped with --store memory).
"""
import os
import signal
import time

from harness import ENV, HOLD, WRTest, Waitroomd, uid
from test_resilience import metrics


class Durability(WRTest):

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
        self.assertEqual(self.join_ok(qp, first, client=w.client)["position"], 1)

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
        self.assertIn("WAIT: 0 of 1 replicas acknowledged", w.stderr_tail())

        # the replica is back: joins are acknowledged again
        os.kill(replica.proc.pid, signal.SIGCONT)
        self.poll_until(lambda: w.client.join(qp, u), lambda r: r.status == 200, timeout=15,
                        what="joins answered once the replica is back")
        self.assertWaiting(w.client.join(qp, u), 2, eta_null=True, what="the retry after")
        self.assertEqual(w.terminate(), 0)
