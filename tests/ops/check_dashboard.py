#!/usr/bin/env python3
"""check_dashboard.py - examples/grafana/waitroom.json against a real waitroomd
(CTest grafana_dashboard).

    check_dashboard.py --waitroomd BIN

Starts waitroomd (embedded store, header identity, a free port), walks one
queue through join, admission, consume, a replayed consume (403), a forged
verify (403), one without a pass (401) and a release, reads /metrics, and checks the dashboard:

- it is valid JSON with a title, a uid, a Prometheus data source input and
  a `queue` variable whose label_values() names an exposed metric and label;
- every panel with queries has at least one, each with a refId;
- every metric name in every PromQL expression (functions, keywords,
  by/on(...) label lists, label matchers, ranges and Grafana variables
  taken out) is one that /metrics exposes: a family of its `# TYPE` lines,
  or a histogram's _bucket/_sum/_count;
- every label a matcher names ({queue=~"$queue"}, {status=~"5.."}) is a
  label of that metric's samples, and every panel's `by (...)` label is a
  label of a metric in its expression (or `le` of a histogram).

Metrics that only servers with a feature expose (the Redis store's
waitroom_redis_wait_total) are not on the dashboard: this check would fail
on them here. The 1.2 families (stock, closed / sold out, autotune, join
challenges, CAPTCHA verifications) are: drive_sale() makes a queue use each.
Prints "N passed, N failed" and exits 1 on any failure.
"""
import argparse
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checklib import check, summary  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from harness import ADMIN, Waitroomd, kill_all  # noqa: E402
from helpers import solve  # noqa: E402

DASHBOARD = os.path.join(ROOT, "examples", "grafana", "waitroom.json")
# Labels Prometheus adds to every series it scrapes.
TARGET_LABELS = {"job", "instance"}
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan"}



def strip_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)


def metric_names(expr):
    """The metric names an expression selects."""
    s = strip_strings(expr)
    s = re.sub(r"\{[^}]*\}", " ", s)                      # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)                     # ranges, subqueries
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    s = re.sub(r"\$\{?\w+\}?", " ", s)                    # Grafana variables
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        rest = s[m.end():].lstrip()
        word = m.group(0)
        if rest.startswith("(") or word.lower() in KEYWORDS:
            continue                                      # a function or a keyword
        if m.start() > 0 and (s[m.start() - 1].isdigit() or s[m.start() - 1] == "."):
            continue                                      # 1e3, 0.5
        names.add(word)
    return names


def matchers(expr):
    """(metric, label) for every label a selector's matcher names."""
    s = strip_strings(expr)
    out = set()
    for m in re.finditer(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}", s):
        for lm in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)", m.group(2)):
            out.add((m.group(1), lm.group(1)))
    return out


def grouping_labels(expr):
    """Labels of every by (...) clause."""
    s = strip_strings(expr)
    out = set()
    for m in re.finditer(r"\bby\s*\(([^)]*)\)", s):
        out.update(x.strip() for x in m.group(1).split(",") if x.strip())
    return out


def exposed(text):
    """({name: set of label names} for every family and sample name on
    /metrics, the set of names that have samples)."""
    families = {}
    sampled = set()
    for line in text.splitlines():
        m = re.match(r"# TYPE ([A-Za-z_:][A-Za-z0-9_:]*) (\w+)", line)
        if m:
            name, kind = m.groups()
            families.setdefault(name, set())
            if kind == "histogram":
                for suffix in ("_bucket", "_sum", "_count"):
                    families.setdefault(name + suffix, set())
                families[name + "_bucket"].add("le")
            continue
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s", line)
        if m:
            labels = set(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="', m.group(3) or ""))
            families.setdefault(m.group(1), set()).update(labels | TARGET_LABELS)
            sampled.add(m.group(1))
    return families, sampled


def self_test():
    """The parser on expressions whose answer is known (a misspelled metric
    is found; labels, functions and variables are not taken for metrics)."""
    e = ('histogram_quantile(0.99, sum by (le, queue) (rate(waitroom_wait_secnds_bucket'
         '{queue=~"$queue"}[$__rate_interval]))) and on (job, instance) waitroom_build_info')
    check("parser: metric names of a known expression",
          metric_names(e) == {"waitroom_wait_secnds_bucket", "waitroom_build_info"},
          repr(metric_names(e)))
    check("parser: matchers and grouping labels of a known expression",
          matchers(e) == {("waitroom_wait_secnds_bucket", "queue")}
          and grouping_labels(e) == {"le", "queue"}, repr((matchers(e), grouping_labels(e))))


def drive(server):
    """One queue through every state the dashboard shows."""
    c = server.client
    q = "dash"
    r = c.put_queue(q, {"admitPerSecond": 50, "sessionSeconds": 60})
    assert r.status in (200, 201), repr(r)
    users = ["dash-%d" % i for i in range(3)]
    for u in users:
        assert c.join(q, u).status == 200
    tokens = {}
    import time
    deadline = time.monotonic() + 10
    while len(tokens) < len(users) and time.monotonic() < deadline:
        for u in users:
            if u not in tokens:
                r = c.me(q, u)
                if r.status == 200 and r.json.get("status") == "admitted":
                    tokens[u] = r.json["token"]
        time.sleep(0.1)
    assert len(tokens) == len(users), "not all admitted in 10 s: %r" % tokens
    t = tokens[users[0]]
    assert c.consume(q, t).status == 200
    assert c.consume(q, t).status == 403        # replayed: 403 on consume
    assert c.verify(q, "not-a-token").status == 403   # forged
    assert c.verify(q).status == 401                  # no pass at all
    assert c.release(q, t).status == 204
    c.leave(q, users[2])
    limited = [c.join(q, "dash-rl-%d" % i).status for i in range(6)]
    assert 429 in limited, "no 429 from --join-rate 1 --join-burst 5: %r" % limited


# The families drive_sale() makes a queue use: each must have samples, or
# the label checks of its panels would be skipped (a note, not a failure).
SALE_FAMILIES = ("waitroom_queue_stock_left", "waitroom_queue_closed", "waitroom_queue_sold_out",
                 "waitroom_autotune_rate", "waitroom_challenges_issued_total",
                 "waitroom_challenges_solved_total", "waitroom_challenges_refused_total",
                 "waitroom_captcha_verifications_total")


def drive_sale(server):
    """The 1.2 families: a queue with a stock, autotune, a join challenge
    (issued, solved, refused) and a CAPTCHA whose provider does not answer
    (a closed loopback port: outcome error); a closed queue; a sold-out one.
    Returns the SALE_FAMILIES still without a sample after 20 s."""
    import socket
    import time
    time.sleep(2.5)  # --join-rate 1: drive() spent the burst; two joins here
    c = server.client
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    q = "dash-sale"
    r = c.put_queue(q, {"admitPerSecond": 50, "stock": 5, "challengeBits": 4,
                        "autotune": {"minPerSecond": 5, "maxPerSecond": 100, "targetMs": 200},
                        "captcha": {"provider": "turnstile", "siteKey": "1x00000000000000000000AA",
                                    "secret": "0x4AAAAAAA-stand-in-secret", "fallback": "refuse",
                                    "verifyUrl": "http://127.0.0.1:%d/siteverify" % dead}})
    assert r.status in (200, 201), repr(r)
    u = "dash-sale-1"
    ch = c.get("/v1/queues/%s/challenge" % q, c.uh(u)).json["challenge"]
    body = {"challenge": ch, "nonce": solve(ch, 4), "captchaResponse": "x"}
    r = c.request("POST", "/v1/queues/%s/entries" % q, c.uh(u), body)
    assert r.status == 403, repr(r)  # the provider does not answer: refused
    assert c.join(q, "dash-sale-2").status == 403  # no solution: refused
    for name, cfg in (("dash-closed", {"admitPerSecond": 5, "closed": True}),
                      ("dash-soldout", {"admitPerSecond": 5, "stock": 0})):
        r = c.put_queue(name, cfg)
        assert r.status in (200, 201), repr(r)
    # an admission tick of each queue publishes its gauges: a busy machine
    # may take more than a tick's time to run it
    deadline = time.monotonic() + 20
    while True:
        _, sampled = exposed(c.get("/metrics").body)
        missing = [f for f in SALE_FAMILIES if f not in sampled]
        if not missing or time.monotonic() > deadline:
            return missing
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitroomd", required=True)
    a = ap.parse_args()
    self_test()
    with open(DASHBOARD) as f:
        text = f.read()
    try:
        dash = json.loads(text)
    except ValueError as e:
        check("waitroom.json is valid JSON", False, str(e))
        return 1
    check("waitroom.json is valid JSON with a title and a uid",
          bool(dash.get("title")) and bool(dash.get("uid")))
    inputs = [i for i in dash.get("__inputs", []) if i.get("pluginId") == "prometheus"]
    check("a Prometheus data source input (DS_PROMETHEUS)",
          [i.get("name") for i in inputs] == ["DS_PROMETHEUS"], repr(dash.get("__inputs")))

    tmp = tempfile.mkdtemp(prefix="wr-dash-")
    # --join-rate 1 --join-burst 5: the sixth quick join from 127.0.0.1 is
    # refused 429, so waitroom_rate_limited_total has a sample (its labels).
    server = Waitroomd(a.waitroomd, "memory", "d" * 64, tmp, identity="header",
                       extra=("--join-rate", "1", "--join-burst", "5"))
    try:
        drive(server)
        missing = drive_sale(server)
        check("the families drive_sale() uses have samples", not missing,
              "no sample of %s" % missing)
        r = server.client.get("/metrics")
        check("/metrics answers 200", r.status == 200, repr(r))
        fams, sampled = exposed(r.body if isinstance(r.body, str) else r.body.decode())
    finally:
        server.terminate()
        kill_all()

    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    qv = variables.get("queue", {})
    qdef = qv.get("definition", "")
    m = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", qdef)
    check("the queue variable: label_values(METRIC, queue) of an exposed metric with that label",
          m is not None and m.group(2) == "queue" and m.group(1) in fams
          and "queue" in fams[m.group(1)], repr(qdef))
    check("the queue variable: multi-value, with All", qv.get("multi") and qv.get("includeAll"))

    exprs = []
    for p in dash.get("panels", []):
        if p.get("type") == "row":
            continue
        targets = p.get("targets", [])
        check(f"panel {p.get('title')!r}: has queries, each with refId and expr",
              targets and all(t.get("refId") and t.get("expr") for t in targets), repr(targets))
        for t in targets:
            exprs.append((p.get("title"), t.get("expr", "")))
    check("the dashboard has queries", len(exprs) >= 10, repr(len(exprs)))

    used = set()
    unsampled_used = set()
    for title, e in exprs:
        names = metric_names(e)
        used |= names
        unknown = sorted(n for n in names if n not in fams)
        check(f"{title!r}: {e}: every metric is on /metrics", names and not unknown,
              f"not exposed: {unknown}" if unknown else "no metric found")
        # A family with no sample yet (the store never failed here: fail-open,
        # store errors) has no labels to compare with: said, not failed.
        unsampled = sorted(n for n in names if n in fams and n not in sampled)
        if unsampled:
            print(f"note {title!r}: {e}: labels not checked, no samples of {unsampled} "
                  "on a server whose store never failed")
            unsampled_used.update(unsampled)
            continue
        bad = sorted(f"{mn}{{{lb}}}" for mn, lb in matchers(e) if mn in fams and lb not in fams[mn])
        check(f"{title!r}: {e}: every matcher's label is on that metric", not bad,
              f"no such label: {bad}")
        labels_here = set().union(*(fams.get(n, set()) for n in names)) if names else set()
        missing = sorted(g for g in grouping_labels(e) if g not in labels_here)
        check(f"{title!r}: {e}: every by (...) label is on a metric it uses", not missing,
              f"no metric of the expression has {missing}")
    print(f"{len(used)} metrics used of the {len(fams)} names on /metrics; labels not "
          f"checked (no samples): {sorted(unsampled_used)}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
