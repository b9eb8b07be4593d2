"""--reuse-port (SO_REUSEPORT): three instances on one Redis share one
listening port; the kernel hands connections to each of them, and together
they admit the configured rate once, not three times."""
import re
import time

from harness import ADMIN, Client, WRTest, uid
from helpers import private_server

RATE = 50.0
TICK_MS = 100
PER_TICK = RATE * TICK_MS / 1000.0  # 5
INSTANCES = 3
CONNECTIONS = 90  # fresh connections to the shared port: each instance gets some


class ReusePort(WRTest):

    def start(self, port=None):
        """One instance with --reuse-port on `port` (None: the first picks
        one) and its own admin listener, which tells it apart from the
        others; returns (Waitroomd, admin Client)."""
        extra = ["--reuse-port", "--admin-listen", "127.0.0.1:0"]
        if port:
            extra += ["--listen", "127.0.0.1:%d" % port]
        w = private_server(self, identity="header:X-User-Id", extra=extra)
        prefix = "admin listening on 127.0.0.1:"
        deadline = time.monotonic() + 10
        while True:
            line = next((l for l in w.stdout_lines if l.startswith(prefix)), None)
            if line:
                break
            self.assertLess(time.monotonic(), deadline, "no admin address on stdout")
            time.sleep(0.05)
        admin = Client(int(line[len(prefix):]))
        self.poll_until(lambda: admin.get("/readyz").status, lambda st: st == 200,
                        what="readyz of the instance on its admin port")
        return w, admin

    def healthz_answered(self, admin):
        """healthz requests this instance answered (its own metrics)."""
        r = admin.get("/metrics", ADMIN)
        self.assertEqual(r.status, 200, repr(r))
        m = re.search(r'^waitroom_http_requests_total\{route="healthz",status="200"\} (\d+)',
                      r.body, re.M)
        return int(m.group(1)) if m else 0

    def test_three_instances_share_a_port_and_admit_the_rate_once(self):
        self.redis_only()
        first, admin0 = self.start()
        instances = [(first, admin0)] + [self.start(first.port) for _ in range(INSTANCES - 1)]
        for w, _ in instances:
            self.assertEqual(w.port, first.port, "every instance on the first one's port")
        shared = first.client

        # Every instance accepts connections on the shared port.
        before = [self.healthz_answered(admin) for _, admin in instances]
        for _ in range(CONNECTIONS):
            self.assertEqual(shared.get("/healthz").status, 200)
        answered = [self.healthz_answered(admin) - b
                    for (_, admin), b in zip(instances, before)]
        self.assertEqual(sum(answered), CONNECTIONS, answered)
        for i, n in enumerate(answered):
            self.assertGreater(n, 0, "instance %d answered none of %d connections: %s"
                               % (i, CONNECTIONS, answered))

        # Together they admit the rate once.
        q = self.new_queue({"admitPerSecond": RATE, "tickMs": TICK_MS, "paused": True},
                           client=admin0)  # the admin API is on the admin listeners
        for i in range(400):
            r = shared.join(q, uid("rp%03d-" % i))
            self.assertEqual((r.status, r.json["position"]), (200, i + 1), repr(r))
        self.assertEqual(admin0.patch_queue(q, {"paused": False}).status, 200)

        def sample():
            t0 = time.monotonic()
            st = admin0.get_queue(q)
            t1 = time.monotonic()
            self.assertEqual(st.status, 200, repr(st))
            return (t0 + t1) / 2, st.json["stats"]["admittedTotal"]

        t0, a0 = sample()
        time.sleep(6.0)
        t1, a1 = sample()
        expected = RATE * (t1 - t0)
        admitted = a1 - a0
        what = "%d instances on one port: %d admitted in %.2f s = %.1f/s, configured %.0f/s" % (
            INSTANCES, admitted, t1 - t0, admitted / (t1 - t0), RATE)
        # never more than the rate (ticks are idempotent across instances; two
        # ticks of slack for the sampling), and not far below it: on a loaded
        # machine a tick that every instance runs late is lost (no catch-up,
        # K24), and the two admin GETs themselves take time under ASan
        self.assertLessEqual(admitted, expected + 2 * PER_TICK + 1, what)
        self.assertGreaterEqual(admitted, 0.8 * expected - PER_TICK, what)
        self.assertEqual(admin0.patch_queue(q, {"paused": True}).status, 200)
        for w, _ in instances:
            self.assertEqual(w.terminate(), 0, "waitroomd exit code on SIGTERM")
