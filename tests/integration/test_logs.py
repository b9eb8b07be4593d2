"""Operations, 1.1 (API.md "Running, 1.1"; case K23): signals and reload,
JSON logs, the access log, the audit line, the pid file, the metrics as a
real Prometheus parser reads them, /metrics only on the admin listener,
the queue history, and the file descriptor limit.

Each test starts its own waitroomd (on the suite's store), so signals and
limits never touch the shared servers. The metrics check parses the whole
/metrics text with prometheus_client (Debian python3-prometheus-client,
installed by scripts/deps.sh); a python3 that is not Debian's (pyenv) finds
the Debian package through /usr/lib/python3/dist-packages.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

from harness import ADMIN, ENV, FAST, HOLD, Client, WRTest, Waitroomd, uid

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # a python3 other than Debian's: use the Debian package
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        text_string_to_metric_families = None

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
WRAPPED = bool(os.environ.get("WR_WAITROOMD_WRAPPER"))


def read_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace").splitlines()
    except FileNotFoundError:
        return []


def json_lines(path):
    return [json.loads(ln) for ln in read_lines(path) if ln.strip()]


class Ops11(WRTest):

    def start(self, extra=(), ini=None, identity="header:X-User-Id", log_level="warn", env=None):
        """A private waitroomd on the suite's store; ini: text of a config file."""
        args = list(extra)
        if ini is not None:
            self.ini = os.path.join(ENV.tmpdir, "ops11-%s.ini" % uid())
            with open(self.ini, "w") as f:
                f.write(ini)
            args = ["--config", self.ini] + args
        w = Waitroomd(ENV.waitroomd, ENV.store_arg, ENV.secret, ENV.tmpdir, identity=identity,
                      extra=args, log_level=log_level, env=env)
        self.addCleanup(w.kill)
        return w

    def write_ini(self, text):
        tmp = self.ini + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.ini)

    def log(self, w):
        w.err.flush()
        return json_lines(w.errpath)

    def wait_log(self, w, pred, what, timeout=5.0):
        return self.poll_until(lambda: [e for e in self.log(w) if pred(e)], bool,
                               timeout=timeout, what=what)

    # -- signals and reload ------------------------------------------------

    def test_signals_and_reload(self):
        q = "reload-" + uid()
        ini = ("[server]\nlog_level = info\n\n[queue %s]\nadmitPerSecond = 5\npaused = true\n" % q)
        w = self.start(["--log-format", "json"], ini=ini, log_level=None)
        c = w.client
        self.poll_until(lambda: c.get_queue(q).status, lambda s: s == 200, what="declared queue")
        users = [uid() for _ in range(3)]
        for i, u in enumerate(users):
            self.assertWaiting(c.join(q, u), i + 1)

        def positions():
            return [c.me(q, u).json.get("position") for u in users]

        # USR1, USR2 and an unchanged HUP: logged, nothing else changes
        for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP):
            w.proc.send_signal(sig)
            time.sleep(0.2)
            self.assertIsNone(w.proc.poll(), "waitroomd stopped on %s" % sig.name)
            self.assertEqual(c.get("/healthz").status, 200)
            self.assertEqual(positions(), [1, 2, 3], "after %s" % sig.name)
        for name in ("SIGUSR1", "SIGUSR2"):
            self.wait_log(w, lambda e, n=name: e["level"] == "warn" and n in e["msg"],
                          name + " logged as a warning")

        # an audit line at level info, now
        self.assertEqual(c.patch_queue(q, {"pollJitter": 0.2}).status, 200)
        self.wait_log(w, lambda e: e["msg"] == "admin change" and e.get("queue") == q,
                      "the audit line at info")

        # a changed file: the queue's rate and the log level apply, the line stays
        self.write_ini("[server]\nlog_level = warn\n\n[queue %s]\nadmitPerSecond = 7\n"
                       "paused = true\n" % q)
        w.proc.send_signal(signal.SIGHUP)
        self.poll_until(lambda: c.get_queue(q).json["config"]["admitPerSecond"],
                        lambda v: v == 7, what="the file's new rate")
        self.assertEqual(positions(), [1, 2, 3], "the line after the reload")
        n_audit = len([e for e in self.log(w) if e["msg"] == "admin change"])
        self.assertEqual(c.patch_queue(q, {"pollJitter": 0.3}).status, 200)
        time.sleep(0.3)
        self.assertEqual(len([e for e in self.log(w) if e["msg"] == "admin change"]), n_audit,
                         "log_level = warn from the file: no info lines any more")

        # a broken file: logged (error), the running config kept, still serving
        self.write_ini("[server]\nlog_level = info\nno_such_key = 1\n")
        w.proc.send_signal(signal.SIGHUP)
        self.wait_log(w, lambda e: e["level"] == "error" and "reload failed" in e["msg"],
                      "the failed reload logged")
        self.assertIsNone(w.proc.poll(), "waitroomd stopped on a broken file")
        self.assertEqual(c.get_queue(q).json["config"]["admitPerSecond"], 7)
        self.assertEqual(positions(), [1, 2, 3])
        self.assertEqual(w.terminate(), 0, "exit code; stderr:\n" + w.stderr_tail())

    def test_reload_keeps_runtime_changes_of_unchanged_sections(self):
        q = "keep-" + uid()
        ini = "[queue %s]\nadmitPerSecond = 5\npaused = true\n" % q
        w = self.start(ini=ini)
        c = w.client
        self.poll_until(lambda: c.get_queue(q).status, lambda s: s == 200, what="declared queue")
        self.assertEqual(c.patch_queue(q, {"admitPerSecond": 11}).status, 200)
        w.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        self.assertEqual(c.get_queue(q).json["config"]["admitPerSecond"], 11,
                         "an unchanged section must not undo a runtime change")

    # -- logs ----------------------------------------------------------------

    def test_json_logs_access_log_and_audit(self):
        acc = os.path.join(ENV.tmpdir, "access-%s.log" % uid())
        w = self.start(["--log-format", "json", "--access-log", acc], identity=None,
                       log_level="info")
        c = w.client
        q = self.new_queue(FAST, client=c)
        r = c.request("POST", "/v1/queues/%s/entries" % q)
        self.assertEqual(r.status, 200)
        vid = [s.split(";")[0] for s in r.set_cookies if s.startswith("wr_vid=")][0]
        body = self.poll_until(lambda: c.request("GET", "/v1/queues/%s/entries/me" % q,
                                                 {"Cookie": vid}).json,
                               lambda b: b and b.get("status") == "admitted", what="admitted")
        token = body["token"]
        self.assertEqual(c.consume(q, token).status, 200)
        self.assertEqual(c.get("/nope").status, 404)
        r = c.patch_queue(q, {"admitPerSecond": 3})
        self.assertEqual(r.status, 200)

        # every stderr line is one JSON object with ts, level, msg
        lines = read_lines(w.errpath)
        self.assertTrue(lines)
        for ln in lines:
            e = json.loads(ln)
            self.assertTrue(TS.match(e["ts"]), e)
            self.assertIn(e["level"], ("debug", "info", "warn", "error"))
            self.assertIsInstance(e["msg"], str)
        audit = self.wait_log(w, lambda e: e["msg"] == "admin change" and e.get("queue") == q
                              and e.get("action") == "patch", "the audit line")[-1]
        self.assertEqual(audit["level"], "info")
        self.assertIn("admitPerSecond", audit["changed"])
        self.assertEqual(audit["old"]["admitPerSecond"], 1000)
        self.assertEqual(audit["new"]["admitPerSecond"], 3)
        self.assertTrue(TS.match(audit["ts"]))

        # the access log: one JSON line per request, no token or cookie
        entries = self.poll_until(lambda: json_lines(acc),
                                  lambda es: any(e.get("route") == "admin_patch" for e in es),
                                  what="access log lines")
        for e in entries:
            for k in ("ts", "client", "method", "route", "queue", "status", "duration_us",
                      "bytes"):
                self.assertIn(k, e)
            self.assertEqual(e["client"], "127.0.0.1")
            self.assertIsInstance(e["duration_us"], int)
            self.assertIsInstance(e["bytes"], int)
        routes = {(e["method"], e["route"], e["status"]) for e in entries if e["queue"] == q}
        for want in (("POST", "join", 200), ("GET", "status", 200), ("POST", "consume", 200),
                     ("PATCH", "admin_patch", 200)):
            self.assertIn(want, routes)
        self.assertIn(("GET", "none", 404), {(e["method"], e["route"], e["status"])
                                             for e in entries})
        raw = open(acc).read() + open(w.errpath).read()
        for secret in (token, token.split(".")[2], vid.split("=", 1)[1], ENV.secret, "Bearer",
                       "test-admin-key"):
            self.assertNotIn(secret, raw)

    def test_text_access_log_on_stdout_and_pid_file(self):
        pid = os.path.join(ENV.tmpdir, "wr-%s.pid" % uid())
        w = self.start(["--access-log", "-", "--pid-file", pid])
        with open(pid) as f:
            self.assertEqual(int(f.read().strip()), w.proc.pid)
        self.assertEqual(w.client.get("/healthz").status, 200)
        line = self.poll_until(
            lambda: [ln for ln in w.stdout_lines if "route=healthz" in ln], bool,
            what="a text access line on stdout")[0]
        self.assertRegex(line, r"^\d{4}-\d\d-\d\dT[\d:.]+Z client=127\.0\.0\.1 method=GET "
                         r"route=healthz queue=- status=200 duration_us=\d+ bytes=\d+$")
        self.assertEqual(w.terminate(), 0)
        self.assertFalse(os.path.exists(pid), "pid file removed at exit")

    def test_hup_reopens_the_access_log(self):
        acc = os.path.join(ENV.tmpdir, "rot-%s.log" % uid())
        w = self.start(["--access-log", acc])
        self.assertEqual(w.client.get("/healthz").status, 200)
        os.rename(acc, acc + ".1")  # logrotate
        w.proc.send_signal(signal.SIGHUP)
        self.poll_until(lambda: os.path.exists(acc), bool, what="the access log reopened")
        self.assertEqual(w.client.get("/readyz").status, 200)
        self.poll_until(lambda: read_lines(acc), lambda ls: any("route=readyz" in ln for ln in ls),
                        what="the new request in the new file")
        self.assertTrue(any("route=healthz" in ln for ln in read_lines(acc + ".1")))

    # -- metrics ---------------------------------------------------------------

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

    # -- history ---------------------------------------------------------------

    def test_history_route(self):
        q = self.new_queue(HOLD)
        for _ in range(4):
            self.join_ok(q, uid())
        path = "/v1/admin/queues/%s/history" % q
        self.assertError(self.c.get(path), 401, "UNAUTHORIZED")
        self.assertError(self.c.get("/v1/admin/queues/no-such-%s/history" % uid(), ADMIN), 404,
                         "QUEUE_NOT_FOUND")
        self.assertError(self.c.get(path + "?since=soon", ADMIN), 400, "BAD_REQUEST")
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

    # -- file descriptors --------------------------------------------------------

    def test_refuses_to_start_above_the_hard_fd_limit(self):
        if WRAPPED:
            self.skipTest("not under a wrapper")
        p = subprocess.run(["prlimit", "--nofile=64:64", ENV.waitroomd, "--listen",
                            "127.0.0.1:0", "--store", ENV.store_arg, "--max-connections",
                            "1000"], capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("listening on", p.stdout)
        self.assertIn("--max-connections 1000 needs 1064 file descriptors", p.stderr)
        self.assertIn("hard limit", p.stderr)

    def test_accept_backs_off_when_descriptors_run_out(self):
        if WRAPPED:
            self.skipTest("not under a wrapper")
        w = self.start(["--max-connections", "500"])
        self.assertEqual(w.client.get("/healthz").status, 200)
        subprocess.run(["prlimit", "--pid", str(w.proc.pid), "--nofile=48:48"], check=True)
        socks = []
        try:
            for _ in range(80):
                s = socket.create_connection(("127.0.0.1", w.port), timeout=5)
                socks.append(s)
            t0 = time.monotonic()
            time.sleep(3)
            self.assertIsNone(w.proc.poll(), "waitroomd died out of descriptors")
            warned = [ln for ln in read_lines(w.errpath) if "accept failed" in ln]
            self.assertGreaterEqual(len(warned), 1, "no accept warning:\n" + w.stderr_tail())
            self.assertLessEqual(len(warned), time.monotonic() - t0 + 2,
                                 "more than one line a second:\n" + "\n".join(warned))
        finally:
            for s in socks:
                s.close()
        # the connections are gone: it serves again
        self.poll_until(lambda: self._healthz(w), bool, timeout=10, what="serving again")
        self.assertEqual(w.terminate(), 0)

    @staticmethod
    def _healthz(w):
        try:
            return Client(w.port, timeout=2).get("/healthz").status == 200
        except OSError:
            return False
