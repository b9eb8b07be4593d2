"""Starting waitroomd (issue 22): the default --max-connections under a low
file descriptor limit, the exit status of a start that fails, one line per
flag error, and duplicate INI keys or sections at start and on SIGHUP.

Each test runs its own waitroomd (on the suite's store); the refused starts
never get as far as listening.
"""
import json
import os
import shutil
import signal
import subprocess
import time

from harness import ENV, Client, WRTest, uid
from helpers import private_server, spawn

WRAPPED = bool(os.environ.get("WR_WAITROOMD_WRAPPER"))


def run_refused(args, prlimit=None, timeout=20):
    """Runs waitroomd expecting it to stop before listening; returns the
    completed process."""
    cmd = [ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", ENV.store_arg] + list(args)
    if prlimit:
        cmd = ["prlimit", prlimit] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


class StartLimits(WRTest):
    """--max-connections under `ulimit -Hn` (prlimit)."""

    def setUp(self):
        super().setUp()
        if WRAPPED:
            self.skipTest("not under a wrapper")
        if not shutil.which("prlimit"):
            self.skipTest("prlimit (util-linux) not installed")

    def test_default_fits_a_low_hard_limit(self):
        """Issue 22: with the default --max-connections and ulimit -Hn 2048
        the server starts (it used to refuse below 10,064), with a warning
        naming the limit and the cap it took: 2048 - 64 = 1984."""
        proc, port, errpath = spawn(self, ["--store", ENV.store_arg, "--token-secret",
                                           ENV.secret], wrapper=["prlimit", "--nofile=2048:2048"])
        with open(errpath) as f:
            tail = f.read()
        self.assertEqual(Client(port).get("/healthz").status, 200)
        with open("/proc/%d/limits" % proc.pid) as f:
            soft = [ln.split()[3] for ln in f if ln.startswith("Max open files")][0]
        self.assertEqual(soft, "2048", "the soft limit raised to cap + 64")
        self.assertIn("the hard limit on open files (ulimit -Hn) is 2048: --max-connections is "
                      "1984 instead of 10000", tail)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=15), 0)

    def test_explicit_value_that_cannot_fit_is_refused(self):
        """Issue 22: an explicit --max-connections over the hard limit is a
        configuration error: exit 2 (systemd does not restart it)."""
        p = run_refused(["--max-connections", "3000"], prlimit="--nofile=2048:2048")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("listening on", p.stdout)
        self.assertIn("--max-connections 3000 needs 3064 file descriptors", p.stderr)
        self.assertIn("lower --max-connections to 1984", p.stderr)


class StartExitStatus(WRTest):
    """Exit 2 for every configuration error at start, 1 for what a restart
    may cure; one line per flag error."""

    def assertRefused(self, p, status, *needles):
        self.assertEqual(p.returncode, status, p.stderr)
        self.assertNotIn("listening on", p.stdout)
        for n in needles:
            self.assertIn(n, p.stderr)

    def test_missing_data_dir_parent_is_a_config_error(self):
        """Issue 22: --data-dir under a directory that does not exist exits 2
        (it exited 1, and systemd restarted it every second)."""
        if ENV.store != "memory":
            self.skipTest("--data-dir is the memory store's")
        d = os.path.join(ENV.tmpdir, "no-such-parent-" + uid(), "data")
        p = run_refused(["--data-dir", d])
        self.assertRefused(p, 2, "cannot open store")

    def test_unwritable_files_are_config_errors(self):
        """Issue 22: a log or pid file that cannot be written exits 2."""
        missing = os.path.join(ENV.tmpdir, "no-such-dir-" + uid())
        p = run_refused(["--error-log", os.path.join(missing, "e.log")])
        self.assertRefused(p, 2, "cannot open the log file")
        p = run_refused(["--pid-file", os.path.join(missing, "w.pid")])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("cannot write the pid file", p.stderr)

    def test_port_in_use_may_be_retried(self):
        """Issue 22: a port in use is not the configuration's fault: exit 1,
        so systemd tries again."""
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            port = s.getsockname()[1]
            p = subprocess.run([ENV.waitroomd, "--listen", "127.0.0.1:%d" % port, "--store",
                                ENV.store_arg], capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("cannot listen on", p.stderr)

    def test_flag_errors_are_one_line(self):
        """Issue 22: a flag error prints one line naming the flag and the
        reason, and points at --help (it printed the 60-line usage)."""
        cases = [
            (["--bogus"], "unknown flag '--bogus'"),
            (["--max-connections", "abc"], "--max-connections: 'abc' must be an integer"),
            (["--log-level"], "--log-level needs a value"),
            (["extra"], "unexpected argument 'extra'"),
        ]
        for args, needle in cases:
            p = run_refused(args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            lines = p.stderr.splitlines()
            self.assertEqual(len(lines), 1, (args, p.stderr))
            self.assertTrue(lines[0].startswith("waitroomd: "), lines[0])
            self.assertIn(needle, lines[0])
            self.assertTrue(lines[0].endswith("see waitroomd --help"), lines[0])
            self.assertNotIn("usage:", p.stderr)


class IniDuplicates(WRTest):
    """Duplicate INI keys or sections: an error naming the line."""

    def write(self, text):
        path = os.path.join(ENV.tmpdir, "dup-%s.ini" % uid())
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_refused_at_start(self):
        """Issue 22: a key set twice, or a section twice, stops the start
        (exit 2) naming the line; libinih alone kept the last silently."""
        path = self.write("[server]\nlog_level = info\nlog_level = debug\n")
        p = run_refused(["--config", path])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(path + ":3: [server]: key 'log_level' set again", p.stderr)
        q = "dup-" + uid()
        path = self.write("[queue %s]\nadmitPerSecond = 1\n\n[queue %s]\nmaxQueueSize = 5\n"
                          % (q, q))
        p = run_refused(["--config", path])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(path + ":4: [queue %s] appears again (first at line 1" % q, p.stderr)

    def test_refused_on_sighup(self):
        """Issue 22: on SIGHUP a file with a duplicate is logged and ignored
        (the running configuration is kept); an unchanged file with the
        default --max-connections needs no restart."""
        q = "duphup-" + uid()
        path = self.write("[server]\nlog_level = info\n\n[queue %s]\nadmitPerSecond = 5\n" % q)
        w = private_server(self, identity="header:X-User-Id",
                           extra=["--config", path, "--log-format", "json"], log_level=None)
        c = w.client
        self.poll_until(lambda: c.get_queue(q).status, lambda s: s == 200, what="declared queue")

        def log():
            w.err.flush()
            out = []
            with open(w.errpath, "rb") as f:
                for ln in f.read().decode(errors="replace").splitlines():
                    try:
                        out.append(json.loads(ln))
                    except ValueError:
                        pass
            return out

        w.proc.send_signal(signal.SIGHUP)
        self.poll_until(lambda: [e for e in log() if "reload done" in e["msg"]], bool,
                        what="the unchanged reload")
        self.assertEqual([e["msg"] for e in log() if "need a restart" in e["msg"]], [],
                         "auto --max-connections is not a change")
        tmp = path + ".new"
        with open(tmp, "w") as f:
            f.write("[server]\nlog_level = info\n\n[queue %s]\nadmitPerSecond = 9\n"
                    "admitPerSecond = 10\n" % q)
        os.replace(tmp, path)
        w.proc.send_signal(signal.SIGHUP)
        errs = self.poll_until(
            lambda: [e for e in log() if e["level"] == "error" and "reload failed" in e["msg"]],
            bool, what="the failed reload logged")
        self.assertIn(":6: [queue %s]: key 'admitPerSecond' set again" % q, errs[-1]["msg"])
        time.sleep(0.3)
        self.assertIsNone(w.proc.poll(), "waitroomd stopped on a broken file")
        self.assertEqual(c.get_queue(q).json["config"]["admitPerSecond"], 5)
        self.assertEqual(w.terminate(), 0)
