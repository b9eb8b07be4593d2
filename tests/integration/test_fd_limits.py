"""File descriptor limits (API.md "Running, 1.1"): a refused start above
the hard limit (prlimit --nofile=64:64), and accept backing off when
descriptors run out, then serving again. Each test on a private waitroomd.
"""
import socket
import subprocess
import time

from harness import ENV, Client
from helpers import PrivateServer, read_lines, WRAPPED


class FdLimits(PrivateServer):

    def test_refuses_to_start_above_the_hard_fd_limit(self):
        """An explicit --max-connections that cannot fit the hard limit is a
        configuration error: exit 2 (docs/waitroomd.8, EXIT STATUS)."""
        if WRAPPED:
            self.skipTest("not under a wrapper")
        p = subprocess.run(["prlimit", "--nofile=64:64", ENV.waitroomd, "--listen",
                            "127.0.0.1:0", "--store", ENV.store_arg, "--max-connections",
                            "1000"], capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 2, p.stderr)
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
