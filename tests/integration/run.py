#!/usr/bin/env python3
"""Integration suite for waitroomd: drives the real server (and a real
redis-server) over loopback and checks it against docs/API.md and the
incident cases. Python 3.11 standard library only.

    python3 tests/integration/run.py --waitroomd build/waitroomd --store BACKEND (memory, redis)
            [-k PATTERN ...] [--keep]

Starts (redis-server,) a header-mode waitroomd (--identity header:X-User-Id)
and a cookie-mode waitroomd, runs every test_*.py module of this directory
(unittest, verbose), prints "N passed, N failed[, N skipped]" last and exits
non-zero on any failure. Every child process is stopped at the end, even when
tests fail. See README.md for the assumptions the suite makes.
"""
import argparse
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import harness  # noqa: E402
from harness import ENV, RedisServer, Waitroomd  # noqa: E402


def test_ids(result):
    """Distinct test cases among failures and errors (subtests folded)."""
    ids = set()
    for test, _ in result.failures + result.errors:
        case = getattr(test, "test_case", test)
        ids.add(case.id())
    for test in result.unexpectedSuccesses:
        ids.add(test.id())
    return ids


def start_memory(tmp):
    return None, "memory"


def start_redis(tmp):
    redis = RedisServer(tmp)
    ENV.redis_port = redis.port
    ENV.redis = redis
    return redis, "redis://127.0.0.1:%d" % redis.port


# How to bring up each backend of the store registry (CTest runs this once
# per backend that `test_store_contract --list-backends` names): returns
# (the server to stop or None, the --store URL). A backend without a row
# fails its run, so a new backend cannot go untested by accident.
HARNESSES = {"memory": start_memory, "redis": start_redis}


def on_signal(signum, frame):
    # SIGTERM/SIGINT: unwind through main's finally, which stops every child
    raise SystemExit(128 + signum)


class TimedResult(unittest.TextTestResult):
    """Records each test's wall time (Python 3.11's unittest has no
    --durations): the run prints the ten slowest, for whoever keeps the
    suite's time down."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.durations = []
        self._t0 = 0.0

    def startTest(self, test):
        self._t0 = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        self.durations.append((test.id(), time.monotonic() - self._t0))
        super().stopTest(test)


def main():
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitroomd", required=True)
    ap.add_argument("--store", required=True,
                    help="a backend of the store registry: %s" % ", ".join(HARNESSES))
    ap.add_argument("-k", action="append", default=None,
                    help="only tests whose name matches (unittest -k)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir with logs")
    args = ap.parse_args()

    if args.store not in HARNESSES:
        print("no integration harness for store backend '%s': add its row to HARNESSES "
              "in tests/integration/run.py" % args.store)
        print("0 passed, 1 failed")
        return 1
    binary = os.path.abspath(args.waitroomd)
    if not os.access(binary, os.X_OK):
        print("waitroomd not found or not executable: %s" % binary)
        print("0 passed, 1 failed")
        return 1

    tmp = tempfile.mkdtemp(prefix="wr-integration-")
    ENV.tmpdir = tmp
    ENV.waitroomd = binary
    ENV.store = args.store
    ENV.secret = secrets.token_hex(32)
    redis = None
    servers = []
    failed = True
    line = "0 passed, 1 failed"
    started = time.monotonic()
    try:
        try:
            redis, ENV.store_arg = HARNESSES[args.store](tmp)
            ENV.main = Waitroomd(binary, ENV.store_arg, ENV.secret, tmp,
                                 identity="header:X-User-Id")
            servers.append(ENV.main)
            ENV.cookie = Waitroomd(binary, ENV.store_arg, ENV.secret, tmp)
            servers.append(ENV.cookie)
        except Exception as e:  # the environment did not come up
            print("SETUP FAILED: %s" % e)
            return 1

        loader = unittest.TestLoader()
        if args.k:
            loader.testNamePatterns = ["*%s*" % k if "*" not in k else k for k in args.k]
        suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
        runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                         resultclass=TimedResult)
        result = runner.run(suite)
        slowest = sorted(result.durations, key=lambda d: -d[1])[:10]
        print("slowest tests (s): " + ", ".join("%s %.1f" % (n.split(".")[-1], t)
                                                 for n, t in slowest))

        bad = test_ids(result)
        if result.testsRun == 0:
            print("FAIL: no test matched %s" % (args.k or "the suite"))
            return 1
        skipped = len(result.skipped)
        n_failed = len(bad)
        n_passed = result.testsRun - n_failed - skipped
        # the shared servers must have survived the run and stop cleanly (exit 0;
        # under ASan a leak or error report makes this non-zero)
        for s in servers:
            died = s.proc.poll()
            code = died if died is not None else s.terminate(timeout=15)
            if code != 0:
                print("FAIL: waitroomd (port %d) %s %s; stderr tail:\n%s"
                      % (s.port, "died during the run with" if died is not None
                         else "exited on SIGTERM with", code, s.stderr_tail()))
                n_failed += 1
            elif bad:
                tail = s.stderr_tail(3000)
                if tail.strip():
                    print("---- waitroomd port %d stderr tail ----\n%s" % (s.port, tail))
        print("integration (%s): %.1f s" % (args.store, time.monotonic() - started))
        line = "%d passed, %d failed" % (n_passed, n_failed)
        if skipped:
            line += ", %d skipped" % skipped
        failed = n_failed > 0
        return 1 if failed else 0
    finally:
        for s in servers:
            s.terminate(timeout=10)
        if redis:
            redis.stop()
        harness.kill_all()
        if args.keep or failed:
            print("logs kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
        print(line)
        sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
