#!/usr/bin/env python3
"""Integration suite for waitroomd: drives the real server (and a real
redis-server) over loopback and checks it against docs/API.md and the
incident cases. Python 3.11 standard library only.

    python3 tests/integration/run.py --waitroomd build/waitroomd --store BACKEND (memory, redis)
            [-k PATTERN ...] [--keep] [--shard K/N]

Starts (redis-server,) a header-mode waitroomd (--identity header:X-User-Id)
and a cookie-mode waitroomd, runs every test_*.py module of this directory
(unittest, verbose), prints "N passed, N failed[, N skipped]" last and exits
non-zero on any failure. Every child process is stopped at the end, even when
tests fail. See README.md for the assumptions the suite makes.

--shard K/N: only the K-th of N shards of the suite: its modules are
dealt out longest first, each to the shard with the least time so far, by
the seconds in shard_weights.txt (a module missing there weighs the
median), so every run of one tree splits it the same way. CTest runs the
memory and Redis suites as shards (cmake/per_backend_tests.cmake.in:
integration_<store>_<k>). The run ends by printing each module's time
("module times"), for refreshing shard_weights.txt.
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
from helpers import RedisCluster  # noqa: E402


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


def load_weights(store):
    """Module -> seconds for store (memory, or redis for every Redis
    backend) from shard_weights.txt; {} when it cannot be read."""
    col = 1 if store == "memory" else 2
    weights = {}
    try:
        with open(os.path.join(HERE, "shard_weights.txt")) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and not line.startswith("#"):
                    try:
                        weights[parts[0]] = float(parts[col])
                    except ValueError:
                        pass
    except OSError:
        pass
    return weights


def shard_of(names, weights, n):
    """Module name -> shard 1..n: longest first to the least loaded shard
    (ties: the lower shard), a module without a weight weighing the median."""
    known = sorted(weights.values())
    median = known[len(known) // 2] if known else 1.0
    w = {m: weights.get(m, median) for m in names}
    load = [0.0] * n
    out = {}
    for m in sorted(names, key=lambda m: (-w[m], m)):
        k = min(range(n), key=lambda i: (load[i], i))
        load[k] += w[m]
        out[m] = k + 1
    return out


class ModuleTimes(unittest.TestSuite):
    """The suite's per-module suites, run in order, each timed."""

    _cleanup = False

    def __init__(self, modules):
        super().__init__()
        self.modules = modules
        self.times = []

    def __iter__(self):
        for name, suite in self.modules:
            t0 = time.monotonic()
            yield suite
            self.times.append((name, time.monotonic() - t0))


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
    ap.add_argument("--shard", metavar="K/N",
                    help="run only the K-th of N shards of the suite (1 <= K <= N)")
    args = ap.parse_args()

    if args.store not in HARNESSES:
        print("no integration harness for store backend '%s': add its row to HARNESSES "
              "in tests/integration/run.py" % args.store)
        print("0 passed, 1 failed")
        return 1
    shard = None
    if args.shard:
        try:
            shard = tuple(int(x) for x in args.shard.split("/"))
            if len(shard) != 2 or not 1 <= shard[0] <= shard[1]:
                raise ValueError
        except ValueError:
            print("--shard wants K/N with 1 <= K <= N, not %r" % args.shard)
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
            # The shared servers are not what the breaker tests test (those
            # start their own): on a loaded CI machine under ASan, Redis
            # calls over the default slow_ms of 200 opened the shared
            # breaker once and failed the next module's tests with 503s.
            shared = [] if args.store == "memory" else ["--breaker", "slow_ms=2000"]
            ENV.main = Waitroomd(binary, ENV.store_arg, ENV.secret, tmp,
                                 identity="header:X-User-Id", extra=shared)
            servers.append(ENV.main)
            ENV.cookie = Waitroomd(binary, ENV.store_arg, ENV.secret, tmp, extra=shared)
            servers.append(ENV.cookie)
        except Exception as e:  # the environment did not come up
            print("SETUP FAILED: %s" % e)
            return 1

        loader = unittest.TestLoader()
        if args.k:
            loader.testNamePatterns = ["*%s*" % k if "*" not in k else k for k in args.k]
        suite = loader.discover(HERE, pattern=PATTERNS.get(args.store, "test_*.py"),
                                top_level_dir=HERE)
        modules = [(module_of(m), m) for m in suite]
        modules = [(n, m) for n, m in modules if n]
        if args.shard:
            k, n = shard
            where = shard_of([name for name, _ in modules], load_weights(args.store), n)
            modules = [(name, m) for name, m in modules if where[name] == k]
            print("shard %d/%d: %s" % (k, n, " ".join(name for name, _ in modules)))
        suite = ModuleTimes(modules)
        runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                         resultclass=TimedResult)
        result = runner.run(suite)
        slowest = sorted(result.durations, key=lambda d: -d[1])[:10]
        print("slowest tests (s): " + ", ".join("%s %.1f" % (n.split(".")[-1], t)
                                                 for n, t in slowest))

        print("module times (s): " + " ".join("%s %.1f" % t for t in suite.times))
        bad = test_ids(result)
        if result.testsRun == 0 and args.shard and not modules:
            print("this shard has no module (more shards than modules)")
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
