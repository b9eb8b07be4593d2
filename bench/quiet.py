#!/usr/bin/env python3
"""Benchmark of quiet queues (docs/BENCHMARKS.md, "Quiet queues", K29):
creates N empty queues (default 2,000) on a private redis-server, waits
until waitroomd's first ticks ran, and counts the Redis commands of the
next S seconds (INFO commandstats, calls of every command summed, before
and after): commands per quiet queue per second, and the EVALSHA calls;
and waitroomd's CPU over the same seconds (/proc/PID/stat).

    python3 bench/quiet.py --waitroomd build/waitroomd [--queues 2000] [--seconds 10]
                           [--store redis|memory]

Python 3 standard library and redis-server. Starts and stops its own
processes (by pid).
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import harness  # noqa: E402
from harness import RedisServer, Waitroomd  # noqa: E402
from resp import commandstats as stats  # noqa: E402


def cpu_s(pid):
    """CPU seconds (user + system) of process pid so far (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitroomd", required=True)
    ap.add_argument("--queues", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--store", choices=("redis", "memory"), default="redis",
                    help="memory: the embedded store (waitroomd's CPU only)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wr-bench-quiet-")
    redis = RedisServer(tmp) if args.store == "redis" else None
    srv = None
    try:
        store = "redis://127.0.0.1:%d" % redis.port if redis else "memory"
        srv = Waitroomd(os.path.abspath(args.waitroomd), store,
                        "ab" * 32, tmp, identity="header:X-User-Id")
        for i in range(args.queues):
            for _ in range(100):  # 503 while the breaker is open (an overloaded Redis)
                r = srv.client.put_queue("quiet-%05d" % i, {"admitPerSecond": 5, "tickMs": 100})
                if r.status != 503:
                    break
                time.sleep(0.5)
            if r.status != 200:
                raise SystemExit("PUT %d: %r\n%s" % (i, r, srv.stderr_tail()))
        time.sleep(5)  # every queue's first ticks, discovery
        t0, c0 = time.monotonic(), cpu_s(srv.proc.pid)
        s0 = stats(redis.port) if redis else {}
        time.sleep(args.seconds)
        t1, c1 = time.monotonic(), cpu_s(srv.proc.pid)
        s1 = stats(redis.port) if redis else {}
        dt = t1 - t0
        print("%d quiet queues on %s, %.1f s" % (args.queues, args.store, dt))
        print("waitroomd CPU: %.1f%% of a core (%.1f us per quiet queue per second)"
              % ((c1 - c0) / dt * 100, (c1 - c0) / dt / args.queues * 1e6))
        if redis:
            total = sum(s1.values()) - sum(s0.values())
            ev = s1.get("evalsha", 0) - s0.get("evalsha", 0)
            print("%d Redis commands = %.1f per queue per second "
                  "(EVALSHA %.2f per queue per second)"
                  % (total, total / args.queues / dt, ev / args.queues / dt))
            top = sorted(((s1[k] - s0.get(k, 0), k) for k in s1), reverse=True)[:8]
            print("  by command: " + ", ".join("%s %d" % (k, n) for n, k in top if n))
    finally:
        if srv:
            srv.terminate()
        if redis:
            redis.stop()
        harness.kill_all()


if __name__ == "__main__":
    main()
