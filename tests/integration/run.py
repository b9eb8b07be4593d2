#!/usr/bin/env python3
"""Integration suite for waitroomd: drives the real server (and a real
redis-server) over loopback and checks it against docs/API.md and the
incident cases. Python 3.11 standard library only.

    python3 tests/integration/run.py --waitroomd build/waitroomd --store BACKEND (memory, redis)
            [-k PATTERN ...] [--keep] [--claims DIR]

Starts (redis-server,) a header-mode waitroomd (--identity header:X-User-Id)
and a cookie-mode waitroomd, runs every test_*.py module of this directory
(unittest, verbose), prints "N passed, N failed[, N skipped]" last and exits
non-zero on any failure. Every child process is stopped at the end, even when
tests fail. See README.md for the assumptions the suite makes.

--claims DIR: one shard of the suite. Several runs given the same (empty)
DIR share the modules between them: each run takes the next module nobody
has taken (an O_EXCL file DIR/<module>, holding the module's time once it
ends), so the shards stay busy until the suite is done, however late CTest
starts each. The longest modules of the last run (DIR.prev) go first. CTest runs the Redis and memory suites this way (CMakeLists.txt,
integration_<backend>_<n>, after integration_<backend>_setup empties DIR).
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
from harness import ENV, RedisCluster, RedisServer, Waitroomd  # noqa: E402


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


def start_cluster(tmp):
    cluster = RedisCluster(tmp, primaries=3, replicas=1)
    ENV.cluster = cluster
    return cluster, cluster.url()


# The suite a backend runs: the Redis Cluster backend runs the cluster
# tests alone (everything else is the same code as "redis", which runs the
# whole suite; test_cluster.py brings the failovers and reshards).
PATTERNS = {"redis-cluster": "test_cluster*.py"}

# How to bring up each backend of the store registry (CTest runs this once
# per backend that `test_store_contract --list-backends` names): returns
# (the server to stop or None, the --store URL). A backend without a row
# fails its run, so a new backend cannot go untested by accident.
HARNESSES = {"memory": start_memory, "redis": start_redis, "redis-cluster": start_cluster}


def on_signal(signum, frame):
    # SIGTERM/SIGINT: unwind through main's finally, which stops every child
    raise SystemExit(128 + signum)


def module_of(suite):
    """The module name of a discovered per-module suite (None when empty)."""
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            name = module_of(t)
            if name:
                return name
        else:
            parts = t.id().split(".")
            # a module that failed to import: unittest.loader._FailedTest.<module>
            return parts[-1] if parts[0] == "unittest" else parts[0]
    return None


def claim_order(modules, claims):
    """Longest first, by the times the last run left in DIR.prev (the setup
    test moves DIR there); modules it did not time come first, by name."""
    prev = {}
    for name, _ in modules:
        try:
            with open(os.path.join(claims.rstrip("/") + ".prev", name)) as f:
                prev[name] = float(f.read().strip() or "inf")
        except (OSError, ValueError):
            prev[name] = float("inf")
    return sorted(modules, key=lambda m: (-prev[m[0]], m[0]))


class ClaimingSuite(unittest.TestSuite):
    """The suite's modules, each run only by the shard that claims it first
    (an O_EXCL create of claims/<module>): iterated lazily, so a shard claims
    its next module only when it is free. The claim file gets the module's
    time (s) once it ends."""

    _cleanup = False

    def __init__(self, modules, claims):
        super().__init__()
        self.modules = modules
        self.claims = claims
        self.taken = []

    def __iter__(self):
        for name, suite in self.modules:
            path = os.path.join(self.claims, name)
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                continue
            self.taken.append(name)
            t0 = time.monotonic()
            yield suite
            os.write(fd, b"%.1f\n" % (time.monotonic() - t0))
            os.close(fd)


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
    ap.add_argument("--claims", metavar="DIR",
                    help="run as one shard: take modules nobody has taken in DIR")
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
        suite = loader.discover(HERE, pattern=PATTERNS.get(args.store, "test_*.py"),
                                top_level_dir=HERE)
        claiming = None
        if args.claims:
            os.makedirs(args.claims, exist_ok=True)
            modules = [(module_of(m), m) for m in suite]
            modules = claim_order([(n, m) for n, m in modules if n], args.claims)
            claiming = ClaimingSuite(modules, args.claims)
            suite = claiming
        runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                         resultclass=TimedResult)
        result = runner.run(suite)
        slowest = sorted(result.durations, key=lambda d: -d[1])[:10]
        print("slowest tests (s): " + ", ".join("%s %.1f" % (n.split(".")[-1], t)
                                                 for n, t in slowest))

        if claiming is not None:
            print("this shard ran %d modules: %s" % (len(claiming.taken), " ".join(claiming.taken)))
        bad = test_ids(result)
        if result.testsRun == 0 and claiming is not None and not args.k:
            # the other shards took every module: nothing left is not a failure
            print("every module was taken by another shard")
        elif result.testsRun == 0:
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
