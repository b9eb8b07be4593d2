"""Logs (API.md "Running, 1.1"): JSON logs, the access log (fields, no
token or cookie), the audit line, the text access log on stdout, the pid
file, and SIGHUP reopening the access log.

Each test starts its own waitroomd (on the suite's store), so signals
never touch the shared servers (PrivateServer, helpers.py, also the base of
test_sighup_reload, test_metrics and test_fd_limits).
"""
import json
import os
import re
import signal

from harness import ENV, FAST, uid
from helpers import json_lines, PrivateServer, read_lines

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class Logs(PrivateServer):

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
        # the writer thread writes the line a moment after the answer: it must
        # be in the file before the rotation for the rotated file to hold it
        self.poll_until(lambda: read_lines(acc), lambda ls: any("route=healthz" in ln for ln in ls),
                        what="the healthz line written before the rotation")
        os.rename(acc, acc + ".1")  # logrotate
        w.proc.send_signal(signal.SIGHUP)
        self.poll_until(lambda: os.path.exists(acc), bool, what="the access log reopened")
        self.assertEqual(w.client.get("/readyz").status, 200)
        self.poll_until(lambda: read_lines(acc), lambda ls: any("route=readyz" in ln for ln in ls),
                        what="the new request in the new file")
        self.assertTrue(any("route=healthz" in ln for ln in read_lines(acc + ".1")))
