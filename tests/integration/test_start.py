"""Starting waitroomd (issue 22): the default --max-connections under a low
file descriptor limit, the exit status of a start that fails, one line per
flag error, and duplicate INI keys or sections at start and on SIGHUP.

Each test runs its own waitroomd (on the suite's store); the refused starts
never get as far as listening.
"""
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import threading
import time

from harness import ENV, PROCS, Client, WRTest, stop_process, uid
from helpers import private_server, spawn, wait_in_file

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
        self.assertEqual(Client(port).get("/healthz").status, 200)
        with open("/proc/%d/limits" % proc.pid) as f:
            soft = [ln.split()[3] for ln in f if ln.startswith("Max open files")][0]
        self.assertEqual(soft, "2048", "the soft limit raised to cap + 64")
        wait_in_file(self, errpath, "the hard limit on open files (ulimit -Hn) is 2048: "
                     "--max-connections is 1984 instead of 10000",
                     "the warning naming the limit and the cap")
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

    def test_listen_host_that_resolves_to_nothing_is_a_config_error(self):
        """README: a listen address that is invalid exits 2 (999.1.1.1 and a
        name that does not exist exited 1, as if a restart could cure them:
        found by a fresh user); an address this machine does not have may
        come up later: 1."""
        for host in ("999.1.1.1:80", "no-such-host.invalid:80"):
            p = run_refused(["--listen", host])
            self.assertRefused(p, 2, "cannot listen on %s: the host resolves to no address" % host)
            # the public listener opens first (and says so); the admin one then stops the start
            p = run_refused(["--admin-listen", host])
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("cannot listen on %s (--admin-listen): the host resolves to no address"
                          % host, p.stderr)
        p = run_refused(["--listen", "192.0.2.1:80"])  # TEST-NET-1: never this machine's
        self.assertRefused(p, 1, "Cannot assign requested address")

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


def sigmask_has(pid, sig):
    """True when /proc says sig is blocked or caught by pid (its code runs
    and the signal can no longer take its default action)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for ln in f:
                if ln.startswith(("SigBlk:", "SigCgt:")) and int(ln.split()[1], 16) >> (sig - 1) & 1:
                    return True
    except OSError:
        pass
    return False


class SignalsDuringStart(WRTest):
    """K43: every signal the server handles is safe from the first
    instruction. A SIGHUP sent in the first 40 ms of a start killed the
    embedded-store server in 14 of 20 starts (the default action of a signal
    whose handler was not installed yet); one before ready is applied once
    started; a SIGTERM during the start is a clean stop (exit 0)."""

    INI = "[server]\nlog_level = info\n"

    def setUp(self):
        super().setUp()
        if WRAPPED:
            self.skipTest("not under a wrapper (its start takes seconds)")

    def launch(self, extra=(), env=None):
        errpath = os.path.join(ENV.tmpdir, "sigstart-%s.log" % uid())
        with open(errpath, "wb") as err:
            proc = subprocess.Popen([ENV.waitroomd, "--listen", "127.0.0.1:0", "--store",
                                     ENV.store_arg, "--token-secret", ENV.secret,
                                     "--log-level", "info"] + list(extra),
                                    stdout=subprocess.PIPE, stderr=err, start_new_session=True,
                                    env=env)
        PROCS.append(proc)
        self.addCleanup(proc.stdout.close)
        self.addCleanup(stop_process, proc)
        return proc, errpath

    @staticmethod
    def first_line(proc, timeout=15.0):
        """The first stdout line ('' at EOF or after timeout seconds)."""
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        buf = b""
        deadline = time.monotonic() + timeout
        try:
            while b"\n" not in buf and time.monotonic() < deadline:
                if sel.select(max(0.0, deadline - time.monotonic())):
                    chunk = os.read(proc.stdout.fileno(), 4096)
                    if not chunk:
                        break
                    buf += chunk
        finally:
            sel.close()
        return buf.decode(errors="replace").split("\n", 1)[0]

    @staticmethod
    def text(path):
        with open(path, errors="replace") as f:
            return f.read()

    def assertStarted(self, proc, errpath, what, listening=None):
        line = self.first_line(proc)
        if listening:
            listening()
        self.assertTrue(line.startswith("listening on 127.0.0.1:"),
                        "%s: first line %r, exit %r; stderr:\n%s"
                        % (what, line, proc.poll(), self.text(errpath)[-2000:]))
        c = Client(int(line.rsplit(":", 1)[1]))
        self.poll_until(lambda: c.get("/readyz").status, lambda s: s == 200, what=what + ": ready")
        self.assertIsNone(proc.poll(), what + ": stopped")

    def assertCleanStop(self, proc, errpath, what):
        proc.terminate()
        rc = proc.wait(timeout=20)
        self.assertEqual(rc, 0, "%s: exit status; stderr:\n%s" % (what, self.text(errpath)[-2000:]))

    def fifo_config(self):
        """A config file that is a FIFO: the server's start stops in the
        config load (its first step) until the test writes the file."""
        path = os.path.join(ENV.tmpdir, "sigstart-%s.ini" % uid())
        os.mkfifo(path)

        def release():  # a reader releases a writer waiting in open
            try:
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
            except OSError:
                pass
        self.addCleanup(release)
        return path

    def test_signals_while_the_config_loads(self):
        """Deterministic: HUP, USR1 and USR2 arrive while the start reads its
        config file, before anything else is set up: the server starts, the
        reload is applied once it is ready and USR1/USR2 are logged."""
        path = self.fifo_config()
        proc, errpath = self.launch(["--config", path])
        with open(path, "w") as first:  # open returns once the server opened the file
            for sig in (signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
                proc.send_signal(sig)
            first.write(self.INI)

        def feed():  # the reload reads the file again
            with open(path, "w") as f:
                f.write(self.INI)
        feeder = threading.Thread(target=feed, daemon=True)
        self.addCleanup(feeder.join, 5)
        self.assertStarted(proc, errpath, "signals while the config loads", feeder.start)
        self.poll_until(lambda: self.text(errpath), lambda t: "reload done" in t,
                        what="the SIGHUP of the start applied once ready")
        for name in ("SIGUSR1", "SIGUSR2"):
            self.poll_until(lambda: self.text(errpath), lambda t, n=name: n + ") ignored" in t,
                            what=name + " logged")
        self.assertCleanStop(proc, errpath, "after the signals")

    def test_sigterm_while_the_config_loads(self):
        """SIGTERM while the start reads its config: exit 0, nothing listened."""
        path = self.fifo_config()
        proc, errpath = self.launch(["--config", path])
        with open(path, "w") as first:
            proc.send_signal(signal.SIGTERM)
            first.write(self.INI)
        rc = proc.wait(timeout=20)
        err = self.text(errpath)
        self.assertEqual(rc, 0, "SIGTERM during the start: stderr:\n" + err[-2000:])
        self.assertEqual(self.first_line(proc, 1), "", "stopped before listening")

    def sweep(self, sig, starts):
        """sig at 0, 2, ... ms after the server's first instruction (seen in
        /proc: the loader and a sanitizer's runtime run before it)."""
        for i in range(starts):
            proc, errpath = self.launch()
            what = "start %d, %s at %d ms" % (i, sig.name, 2 * i)
            deadline = time.monotonic() + 5
            while not sigmask_has(proc.pid, sig) and proc.poll() is None:
                self.assertLess(time.monotonic(), deadline, what + ": never blocked nor caught")
                time.sleep(0.0002)
            time.sleep(i * 0.002)
            proc.send_signal(sig)
            self.assertStarted(proc, errpath, what)
            if sig == signal.SIGHUP:  # applied, never lost
                self.poll_until(lambda: self.text(errpath), lambda t: "reload done" in t,
                                what=what + ": the reload")
            self.assertCleanStop(proc, errpath, what)

    def test_sighup_in_the_first_40_ms(self):
        self.sweep(signal.SIGHUP, 20)

    def test_usr1_usr2_in_the_first_ms(self):
        self.sweep(signal.SIGUSR1, 5)
        self.sweep(signal.SIGUSR2, 5)

    def test_sigterm_in_the_first_40_ms(self):
        for i in range(10):
            proc, errpath = self.launch()
            while not sigmask_has(proc.pid, signal.SIGTERM) and proc.poll() is None:
                time.sleep(0.0002)
            time.sleep(i * 0.004)
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=20)
            err = self.text(errpath)
            self.assertEqual(rc, 0, "SIGTERM at %d ms: stderr:\n%s" % (4 * i, err[-2000:]))

    def test_ready_told_to_the_service_manager_once_listening(self):
        """K43, the service manager's side: the unit is Type=notify, so
        `systemctl reload` (SIGHUP) waits for READY=1, which waitroomd sends
        once it listens; at SIGTERM it says STOPPING=1 (systemd's notify
        protocol on $NOTIFY_SOCKET, here a socket of the test's)."""
        path = os.path.join(ENV.tmpdir, "notify-%s.sock" % uid())
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        self.addCleanup(sock.close)
        sock.settimeout(15)
        proc, errpath = self.launch(env=dict(os.environ, NOTIFY_SOCKET=path))
        msg = sock.recv(4096).decode()
        self.assertEqual(msg, "READY=1")
        line = self.first_line(proc, 1)  # printed before READY=1
        self.assertTrue(line.startswith("listening on 127.0.0.1:"), line)
        c = Client(int(line.rsplit(":", 1)[1]))
        self.assertEqual(c.get("/healthz").status, 200, "listening when READY=1 came")
        proc.send_signal(signal.SIGHUP)  # what systemctl reload does now
        proc.terminate()
        self.assertEqual(sock.recv(4096).decode(), "STOPPING=1")
        self.assertEqual(proc.wait(timeout=20), 0, self.text(errpath)[-2000:])


class StartWarnings(WRTest):
    """Flags the server takes but bends, said at start."""

    def test_request_timeout_above_the_idle_timeout_is_lowered_with_a_warning(self):
        """A request's deadline never exceeds the connection's idle limit
        (--timeout-seconds): a larger --request-timeout-seconds is lowered
        to it, and the start says so (it used to be silent: a fresh user
        set 40 s and got 408 at 30)."""
        proc, port, errpath = spawn(self, ["--store", ENV.store_arg, "--token-secret", ENV.secret,
                                           "--timeout-seconds", "1",
                                           "--request-timeout-seconds", "30"])
        wait_in_file(self, errpath, "--request-timeout-seconds 30 is above --timeout-seconds 1",
                     "the warning naming both flags")
        s = socket.create_connection(("127.0.0.1", port), timeout=25)
        self.addCleanup(s.close)
        t0 = time.monotonic()
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        got = b""
        while b"\r\n\r\n" not in got:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
        took = time.monotonic() - t0
        self.assertTrue(got.startswith(b"HTTP/1.1 408 "), got[:200])
        self.assertLess(took, 20, "408 after the 1 s limit, not the 30 s asked: %.1f s" % took)
