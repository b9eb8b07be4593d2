#!/usr/bin/env python3
"""Benchmark of the sale opening (docs/BENCHMARKS.md, "Sale opening"):
fills a pre-queue of N people (wrk, bench/wrk/join.lua), sets opensAt two
seconds ahead, and measures the opening:

  - waitroomd's own line (log level info): people moved, the time from the
    first chunk to the last, the longest synchronous store call (the
    embedded store's event-loop pause) and the longest admit round trip;
  - the longest answer to GET /healthz from a probe asking in a loop on one
    keep-alive connection around the opening (the event loop's pause as a
    client sees it);
  - on Redis: SLOWLOG entries over 1 ms (the opening's chunks) and INFO
    commandstats (EVALSHA calls and time) over the opening;
  - with --public-log (the queue's publicLog, its shuffle the opening
    draw): the draw's line (people drawn, its time after opensAt).

    python3 bench/opening.py --waitroomd build/waitroomd --store memory|redis [--people 100000]
        [--public-log]

Python 3 standard library, wrk and redis-server. Starts and stops its own
processes (by pid).
"""
import argparse
import calendar
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from resp import Redis  # noqa: E402

KEY = "bench-admin-key"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def req(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = {"Authorization": "Bearer " + KEY}
    if body is not None:
        h["Content-Type"] = "application/json"
    c.request(method, path, body=None if body is None else json.dumps(body), headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data) if data else None


def cpu_ms(pid):
    """utime + stime of process pid so far, ms."""
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


def commandstats(r):
    out = {}
    for ln in r.cmd("INFO", "commandstats").splitlines():
        m = re.match(r"cmdstat_(\w+):calls=(\d+),usec=(\d+)", ln)
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitroomd", required=True)
    ap.add_argument("--store", choices=["memory", "redis"], required=True)
    ap.add_argument("--people", type=int, default=100000)
    ap.add_argument("--shuffle", choices=["true", "false"], default="true")
    ap.add_argument("--public-log", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wr-bench-opening-")
    procs = []
    try:
        store = "memory"
        rc = None
        if args.store == "redis":
            rport = free_port()
            procs.append(subprocess.Popen(
                ["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL))
            for _ in range(100):
                try:
                    rc = Redis(rport)
                    if rc.cmd("PING") == "PONG":
                        break
                except OSError:
                    time.sleep(0.05)
            store = "redis://127.0.0.1:%d" % rport
        errlog = open(os.path.join(tmp, "waitroomd.log"), "wb")
        w = subprocess.Popen([args.waitroomd, "--listen", "127.0.0.1:0", "--store", store,
                              "--admin-key", KEY, "--identity", "header:X-User-Id",
                              "--log-level", "info"], stdout=subprocess.PIPE, stderr=errlog)
        procs.append(w)
        line = w.stdout.readline().decode()
        port = int(line.rsplit(":", 1)[1])
        q = "opening"
        st, _ = req(port, "PUT", "/v1/admin/queues/" + q,
                    {"admitPerSecond": 1000, "paused": True, "maxQueueSize": 0,
                     "preQueueShuffle": args.shuffle == "true", "publicLog": args.public_log,
                     "opensAt": int(time.time() * 1000) + 3600000})
        assert st == 200, (st, _)
        env = dict(os.environ, WR_FILL=str(args.people), WR_QUEUE=q, WR_PREFIX="b")
        t0 = time.monotonic()
        wrk = subprocess.Popen(["wrk", "-t1", "-c32", "-d600s", "-s",
                                os.path.join(HERE, "wrk", "join.lua"),
                                "http://127.0.0.1:%d" % port],
                               env=env, stdout=subprocess.DEVNULL)
        procs.append(wrk)
        while True:  # wrk's thread stops after WR_FILL joins; wrk itself waits for -d
            st, info = req(port, "GET", "/v1/admin/queues/" + q)
            assert st == 200, (st, info)
            if (info["stats"]["prequeue"] >= args.people or wrk.poll() is not None
                    or time.monotonic() - t0 > 180):
                break
            time.sleep(0.2)
        fill_s = time.monotonic() - t0
        wrk.terminate()
        wrk.wait()
        time.sleep(0.2)
        _, info = req(port, "GET", "/v1/admin/queues/" + q)
        pre = info["stats"]["prequeue"]
        print("pre-queue: %d people (filled in %.1f s)" % (pre, fill_s))
        if pre < args.people:
            # wrk counts answers, not joins: a join answered without the
            # store (breaker open: degraded mode) is not in the pre-queue
            errlog.flush()
            with open(errlog.name, "rb") as f:
                print("short fill; waitroomd said:\n" + f.read()[-3000:].decode(errors="replace"))

        if rc:
            rc.cmd("CONFIG", "SET", "slowlog-log-slower-than", "1000")
            rc.cmd("CONFIG", "SET", "slowlog-max-len", "1024")
            rc.cmd("SLOWLOG", "RESET")
            cs0 = commandstats(rc)
            rcpu0 = cpu_ms(procs[0].pid)

        # the probe: /healthz in a loop on one keep-alive connection
        worst = [0.0, 0]
        stop = threading.Event()

        def probe():
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            while not stop.is_set():
                t = time.monotonic()
                c.request("GET", "/healthz")
                c.getresponse().read()
                d = time.monotonic() - t
                worst[1] += 1
                if d > worst[0]:
                    worst[0] = d
        opens_at = int(time.time() * 1000) + 2000
        st, _ = req(port, "PATCH", "/v1/admin/queues/" + q, {"opensAt": opens_at})
        assert st == 200, st
        while time.time() * 1000 < opens_at - 300:
            time.sleep(0.01)
        th = threading.Thread(target=probe)
        th.start()
        # the end: waitroomd's line (stats count people still to move in
        # waiting as soon as the opening has begun)
        deadline = time.monotonic() + 60
        lines = []
        while time.monotonic() < deadline and not lines:
            time.sleep(0.05)
            errlog.flush()
            with open(errlog.name, "rb") as f:
                all_lines = [ln.decode(errors="replace") for ln in f]
            lines = [ln for ln in all_lines if "opening: moved" in ln]
        time.sleep(0.2)
        stop.set()
        th.join()
        _, info = req(port, "GET", "/v1/admin/queues/" + q)
        if not lines:
            print("".join(all_lines[-20:]))
        print("waitroomd: " + (lines[-1].split("level=info ", 1)[-1].strip() if lines
                               else "(no opening line)"))
        drawn = [ln for ln in all_lines if "the opening is drawn" in ln]
        if drawn:  # its time after opensAt, from the log line's UTC time stamp
            m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z", drawn[-1])
            at = calendar.timegm(time.strptime(m.group(1)[:19], "%Y-%m-%dT%H:%M:%S"))
            at += float("0." + m.group(1).split(".")[1])
            print("waitroomd: %s, %.0f ms after opensAt"
                  % (drawn[-1].split("level=info ", 1)[-1].strip(), at * 1000 - opens_at))
        print("probe: longest GET /healthz %.2f ms (of %d) around the opening"
              % (worst[0] * 1000, worst[1]))
        if rc:
            slow = rc.cmd("SLOWLOG", "GET", "1024")
            durs = sorted((e[2] for e in slow), reverse=True)
            kinds = {}
            for e in slow:  # the script of each slow call: EVALSHA <sha> ...
                name = " ".join(str(a) for a in e[3][:2])[:60]
                n, top = kinds.get(name, (0, 0))
                kinds[name] = (n + 1, max(top, e[2] / 1000))
            print("redis: SLOWLOG by command (entries, longest ms): %s" % kinds)
            cs1 = commandstats(rc)
            print("redis: CPU time over the opening %.0f ms (redis-server's utime + stime)"
                  % (cpu_ms(procs[0].pid) - rcpu0))
            calls = cs1.get("evalsha", (0, 0))[0] - cs0.get("evalsha", (0, 0))[0]
            usec = cs1.get("evalsha", (0, 0))[1] - cs0.get("evalsha", (0, 0))[1]
            print("redis: SLOWLOG > 1 ms: %d entries, longest %.2f ms, total %.1f ms; "
                  "EVALSHA over the opening: %d calls, %.1f ms in all"
                  % (len(durs), (durs[0] / 1000) if durs else 0, sum(durs) / 1000,
                     calls, usec / 1000))
        print("line after: %d waiting, %d in the pre-queue"
              % (info["stats"]["waiting"], info["stats"]["prequeue"]))
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
