"""Metrics and history (API.md "Operations", "Running, 1.1"; case K23):
the whole /metrics text read by a real Prometheus parser
(prometheus_client: Debian python3-prometheus-client, installed by
scripts/deps.sh; a python3 that is not Debian's (pyenv) finds the Debian
package through /usr/lib/python3/dist-packages), /metrics only on
--admin-listen, and the queue history route.
"""
import subprocess
import sys
import time

from harness import ADMIN, ENV, FAST, HOLD, Client, uid
from helpers import PrivateServer

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # a python3 other than Debian's: use the Debian package
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        text_string_to_metric_families = None


class Metrics(PrivateServer):

    def scrape(self, client):
        r = client.get("/metrics")
        self.assertEqual(r.status, 200, repr(r))
        return r.body

    def families(self, text):
        if text_string_to_metric_families is None:
            self.fail("prometheus_client is not importable: install python3-prometheus-client "
                      "(scripts/deps.sh)")
        return {f.name: f for f in text_string_to_metric_families(text)}

    def test_metrics_parse_with_prometheus_client(self):
        q = self.new_queue(FAST)
        users = [uid() for _ in range(3)]
        for u in users:
            self.admit(q, u)
        servers = [ENV.main, ENV.cookie]

        def waits():
            n = 0
            for s in servers:
                fam = self.families(self.scrape(s.client)).get("waitroom_wait_seconds")
                for smp in fam.samples if fam else []:
                    if smp.name.endswith("_count") and smp.labels.get("queue") == q:
                        n += smp.value
            return n
        # every admission once, by the instance whose tick made it
        self.poll_until(waits, lambda n: n == 3, what="3 waits in waitroom_wait_seconds")

        text = self.scrape(self.c)
        fams = self.families(text)  # the whole text parses
        version = subprocess.run([ENV.waitroomd, "--version"], capture_output=True,
                                 text=True).stdout.split()[1]
        bi = fams["waitroom_build_info"]
        self.assertEqual(bi.type, "gauge")
        self.assertEqual([(s.labels, s.value) for s in bi.samples], [({"version": version}, 1)])
        proc = {n: fams[n].samples[0].value for n in (
            "process_cpu_seconds", "process_resident_memory_bytes", "process_open_fds",
            "process_max_fds", "process_start_time_seconds")}
        self.assertEqual(fams["process_cpu_seconds"].type, "counter")
        self.assertGreaterEqual(proc["process_cpu_seconds"], 0)
        self.assertGreater(proc["process_resident_memory_bytes"], 1 << 20)
        self.assertGreater(proc["process_open_fds"], 3)
        self.assertGreaterEqual(proc["process_max_fds"], proc["process_open_fds"])
        self.assertLess(abs(proc["process_start_time_seconds"] - time.time()), 86400)
        joins = [s for s in fams["waitroom_joins"].samples
                 if s.name == "waitroom_joins_total" and s.labels.get("queue") == q]
        self.assertEqual([s.value for s in joins], [3])
        hist = fams["waitroom_http_request_duration_seconds"]
        self.assertEqual(hist.type, "histogram")
        routes = {s.labels.get("route") for s in hist.samples if s.name.endswith("_count")}
        self.assertTrue({"join", "status", "admin_put"} <= routes, routes)
        self.assertEqual(fams["waitroom_wait_seconds"].type, "histogram")
        self.assertIn("arrival", fams["waitroom_wait_seconds"].documentation)
        for name in ("waitroom_queue_waiting", "waitroom_queue_active",
                     "waitroom_queue_admitted"):
            self.assertIn("store-wide (the same on every instance)", fams[name].documentation,
                          name)

    def test_six_hundred_queues_all_listed_each_family_described(self):
        """K44: with 600 queues /metrics listed 215 (a fixed cap of 4096
        series dropped the rest silently) and one family had no # HELP:
        every queue is listed, nothing is dropped, every family has # HELP
        and # TYPE. 600 autotuned queues tick every 100 ms on the suite's
        one Redis: on a loaded 2-core machine (ASan build, the other shards
        beside it) the server's own loop stalled 300-480 ms, ticks passed
        the default 250 ms store timeout, the breaker opened and a PUT got
        503. So this server waits 5 s for the store and has no breaker
        (timeouts and the breaker are test_degraded's subject, not this
        test's)."""
        w = self.start(extra=["--store-timeout-ms", "5000", "--breaker", "off"])
        c = w.client
        prefix = "k44-" + uid()
        names = ["%s-%03d" % (prefix, i) for i in range(600)]

        def cleanup():  # the suite's Redis is shared: 600 queues left there
            for n in names:  # would tick in every later server of the shard
                for _ in range(5):
                    try:
                        if c.delete_queue(n).status in (204, 404):
                            break
                    except OSError:
                        pass
                    time.sleep(0.2)
        self.addCleanup(cleanup)
        for n in names:
            r = c.put_queue(n, {"admitPerSecond": 5, "autotune": {"minPerSecond": 1, "maxPerSecond": 10, "targetMs": 500}})
            self.assertEqual(r.status, 200, "PUT %s -> %r" % (n, r))

        def listed(family):
            fam = self.families(self.scrape(c)).get(family)
            return {smp.labels.get("queue") for smp in fam.samples} if fam else set()
        self.poll_until(lambda: len(set(names) - listed("waitroom_queue_waiting")),
                        lambda missing: missing == 0, timeout=30,
                        what="all 600 queues in waitroom_queue_waiting")
        text = self.scrape(c)
        fams = self.families(text)
        for family in ("waitroom_queue_waiting", "waitroom_queue_admit_rate_configured",
                       "waitroom_queue_paused", "waitroom_queue_enabled"):
            self.assertEqual(set(names) - {smp.labels.get("queue") for smp in
                                           fams[family].samples}, set(), family)
        self.assertEqual(fams["waitroom_metrics_dropped_series"].samples[0].value, 0)
        lines = text.splitlines()
        typed = [ln.split()[2] for ln in lines if ln.startswith("# TYPE ")]
        helped = {ln.split()[2] for ln in lines if ln.startswith("# HELP ")}
        self.assertGreater(len(typed), 30)
        self.assertEqual([f for f in typed if f not in helped], [], "families without # HELP")
        self.assertEqual(len(typed), len(set(typed)), "a family typed twice")
        for ln in lines:  # every sample belongs to a typed family
            if ln and not ln.startswith("#"):
                name = ln.split("{")[0].split(" ")[0]
                base = name
                for suffix in ("_bucket", "_sum", "_count"):
                    if name.endswith(suffix) and name[:-len(suffix)] in typed:
                        base = name[:-len(suffix)]
                self.assertIn(base, typed, "sample without # TYPE: " + ln)

    def test_metrics_only_on_the_admin_listener(self):
        """K23: with --admin-listen, /metrics (and /admin) answer 404 on the public port."""
        w = self.start(["--admin-listen", "127.0.0.1:0"])
        line = self.poll_until(
            lambda: [ln for ln in w.stdout_lines if ln.startswith("admin listening on ")], bool,
            what="the admin address")[0]
        admin = Client(int(line.rsplit(":", 1)[1]))
        for path in ("/metrics", "/admin", "/v1/admin/queues/x/history"):
            self.assertError(w.client.get(path, ADMIN), 404, "NOT_FOUND", "public " + path)
        self.assertEqual(admin.get("/metrics").status, 200)
        self.assertEqual(admin.get("/admin").status, 200)
        self.families(self.scrape(admin))

    def test_history_route(self):
        q = self.new_queue(HOLD)
        for _ in range(4):
            self.join_ok(q, uid())
        path = "/v1/admin/queues/%s/history" % q
        self.assertError(self.c.get(path), 401, "UNAUTHORIZED")
        self.assertError(self.c.get("/v1/admin/queues/no-such-%s/history" % uid(), ADMIN), 404,
                         "QUEUE_NOT_FOUND")
        self.assertError(self.c.get(path + "?since=soon", ADMIN), 400, "BAD_REQUEST")
        # beyond int64, a sign or a space: not a time either (a fresh
        # user's probe got 200 for these)
        # ... nor is one beside a part that is not name=value (the whole
        # query was once dropped: 200)
        for bad in ("99999999999999999999999", "9223372036854775808", "%2B5", "%201", "-1",
                    "soon&x"):
            self.assertError(self.c.get(path + "?since=" + bad, ADMIN), 400, "BAD_REQUEST")
        h = self.poll_until(lambda: self.c.get(path, ADMIN).json,
                            lambda b: b and len(b["t"]) >= 3 and b["waiting"][-1] == 4,
                            what="3 samples")
        n = len(h["t"])
        for k in ("waiting", "active", "admittedPerSecond", "consumedPerSecond"):
            self.assertEqual(len(h[k]), n, k)
        self.assertEqual(h["intervalSeconds"], 1)
        self.assertEqual(h["t"], sorted(set(h["t"])))
        self.assertTrue(all(t % 1000 == 0 for t in h["t"]))
        self.assertLess(abs(h["t"][-1] - time.time() * 1000), 5000)
        self.assertEqual(h["admitPerSecond"], 1000)
        self.assertIsNone(h["timeToClearSeconds"], "paused: no time to clear")
        later = self.c.get(path + "?since=%d" % h["t"][-2], ADMIN).json
        self.assertEqual(later["t"][0], h["t"][-1])
