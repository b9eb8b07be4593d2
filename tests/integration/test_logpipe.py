"""K27: a log reader that stops reading never stops the server. waitroomd
with --access-log - and its standard output a pipe nobody reads: every
request is still answered at once, the lines that do not fit are dropped
and counted (waitroom_log_lines_dropped_total), the error log says so, and
once somebody reads again, lines flow again."""
import os
import re
import secrets
import subprocess
import tempfile
import threading
import time

from harness import ADMIN_KEY, ENV, PROCS, Client, WRTest, _die_with_parent, stop_process
from helpers import plain_metric as metric

N_REQUESTS = 5000


class LogPipe(WRTest):

    def start(self):
        """waitroomd whose stdout (the access log) is a pipe this test reads
        only the first line of. Returns the process, its client and the
        pipe's read end."""
        fd, errpath = tempfile.mkstemp(prefix="waitroomd-k27-", suffix=".log", dir=ENV.tmpdir)
        err = os.fdopen(fd, "wb")
        self.addCleanup(err.close)
        args = [ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", ENV.store_arg,
                "--admin-key", ADMIN_KEY, "--token-secret", ENV.secret,
                "--identity", "header:X-User-Id", "--access-log", "-", "--log-level", "info"]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err,
                                start_new_session=True, preexec_fn=_die_with_parent)
        PROCS.append(proc)
        self.addCleanup(stop_process, proc)
        out = proc.stdout.fileno()
        first = b""
        deadline = time.monotonic() + 15
        while not first.endswith(b"\n"):  # the address line, byte by byte: nothing more
            self.assertLess(time.monotonic(), deadline, "no first line")
            b = os.read(out, 1)
            self.assertTrue(b, "waitroomd exited")
            first += b
        port = int(first.decode().strip().rsplit(":", 1)[1])
        c = Client(port, timeout=5.0)
        deadline = time.monotonic() + 10
        while True:
            try:
                if c.get("/readyz")[0] == 200:
                    break
            except OSError:
                pass
            self.assertLess(time.monotonic(), deadline, "never ready")
            time.sleep(0.05)
        self.errpath = errpath
        return proc, c, out

    def test_k27_unread_access_log_pipe(self):
        """K27: 5,000 requests with the access-log pipe unread (it fills after
        a few hundred lines) all answered within normal latency; dropped
        lines counted; lines flow again once the pipe is read."""
        proc, c, out = self.start()
        worst = 0.0
        for i in range(N_REQUESTS):
            t = time.monotonic()
            r = c.get("/healthz")
            worst = max(worst, time.monotonic() - t)
            self.assertEqual(r.status, 200, "request %d: %r" % (i, r))
        self.assertLess(worst, 2.0, "slowest of %d requests: %.2f s" % (N_REQUESTS, worst))
        dropped = metric(c, "waitroom_log_lines_dropped_total")
        self.assertIsNotNone(dropped)
        self.assertGreater(dropped, 0)
        with open(self.errpath, "rb") as f:
            self.assertIn(b"dropping them", f.read())

        # somebody reads again: lines flow, the error log counts the stall
        got = []

        def drain():
            while True:
                b = os.read(out, 65536)
                if not b:
                    return
                got.append(b)
        threading.Thread(target=drain, daemon=True).start()
        marker = "k27-after-" + secrets.token_hex(4)
        deadline = time.monotonic() + 10
        while marker.encode() not in b"".join(got):
            self.assertLess(time.monotonic(), deadline, "no access line after reading again")
            c.join(marker, "u1")
            time.sleep(0.1)
        deadline = time.monotonic() + 10
        while True:
            with open(self.errpath, "rb") as f:
                text = f.read()
            m = re.search(rb"written again after a stall.*dropped[=\":]+(\d+)", text)
            if m:
                break
            self.assertLess(time.monotonic(), deadline, "no recovery line: %r" % text[-2000:])
            c.get("/healthz")  # told with the first line after the writer caught up
            time.sleep(0.1)
        self.assertGreater(int(m.group(1)), 0)
        self.assertLessEqual(int(m.group(1)), metric(c, "waitroom_log_lines_dropped_total"))
        self.assertIsNone(proc.poll())
