#!/usr/bin/env python3
"""Replays a demo run's arrivals at the shop through a model of the shop, to
see what the shop's in-flight peak is made of (docs/BENCHMARKS.md, "The end
of a sale", session 13).

    scripts/shop_model.py DIR [DIR ...]

DIR is a `scripts/demo.sh --out DIR` directory (its with-users.csv). The
model: --pool slots (default 40), each order --service-ms (default 200) long,
orders served first come first served; in flight = arrived and not done (the
demo shop's own count, which it reproduces within a few orders). For each run
it prints the model's peak for:
  measured   the orders as sent;
  shuffled   the same admission-to-order lags, dealt to the people in a
             random order (five draws): the lag's size without its
             correlation in time;
  uniform    every order at its admission tick plus U(0, 100 ms);
and the discovery lag (admission tick to the poll that saw it) of the people
who never slept and were not held, p50 / p90 / p99 in ms.
"""
import argparse
import csv
import heapq
import os
import random
import sys


def peak(arrivals, pool, service_ms):
    """The most orders in flight at once (arrived, not done)."""
    free = [0.0] * pool
    events = []
    for a in sorted(arrivals):
        start = max(a, heapq.heappop(free))
        done = start + service_ms
        heapq.heappush(free, done)
        events.append((a, 1))
        events.append((done, -1))
    events.sort()  # a departure before an arrival at the same ms
    cur = best = 0
    for _, d in events:
        cur += d
        best = max(best, cur)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--pool", type=int, default=40)
    ap.add_argument("--service-ms", type=float, default=200.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    for d in a.dirs:
        path = os.path.join(d, "with-users.csv")
        try:
            rows = list(csv.DictReader(open(path)))
        except OSError as e:
            sys.exit("shop_model: %s: %s" % (path, e.strerror))
        num = lambda r, k: int(r[k]) if r.get(k) not in (None, "") else -1
        orders = [r for r in rows if num(r, "orderSentMs") >= 0 and num(r, "admitTickMs") >= 0]
        if not orders:
            print("%s: no orders" % d)
            continue
        sent = [num(r, "orderSentMs") for r in orders]
        plain = [r for r in orders if r["held"] == "0" and num(r, "sleepFromMs") < 0
                 and num(r, "admitSeenMs") >= 0]
        rest = [num(r, "orderSentMs") for r in orders if r not in plain]
        lags = [num(r, "orderSentMs") - num(r, "admitTickMs") for r in plain]
        shuffled = []
        for _ in range(5):
            rng.shuffle(lags)
            shuffled.append(peak(rest + [num(r, "admitTickMs") + g for r, g in zip(plain, lags)],
                                 a.pool, a.service_ms))
        uniform = peak([num(r, "admitTickMs") + rng.uniform(0, 100) for r in orders],
                       a.pool, a.service_ms)
        seen = sorted(num(r, "admitSeenMs") - num(r, "admitTickMs") for r in plain)
        q = lambda p: seen[int(p * (len(seen) - 1))] if seen else -1
        print("%s: orders %d, model peak measured %d, shuffled %d-%d, uniform %d; "
              "lag p50/p90/p99 %d/%d/%d ms"
              % (d, len(orders), peak(sent, a.pool, a.service_ms), min(shuffled),
                 max(shuffled), uniform, q(.5), q(.9), q(.99)))


if __name__ == "__main__":
    main()
