#!/usr/bin/env python3
"""check_make_run.py - `make run`'s demo lets a browser in, and only once (issue 37).

Starts scripts/run.sh (what `make run` runs) on free ports with a private
RUN_DIR, joins queue `demo` as a browser would (cookies), waits for the
admission (2/s), then follows the queue's targetUrl with the browser's
cookies: the demo shop must answer 200 with its page (the pass consumed),
and the same pass again must send the browser back to the queue page (302),
not a raw JSON 404 as when targetUrl was "/" on waitroomd itself.

    python3 tests/ops/check_make_run.py --waitroomd build/waitroomd

Prints one line per check and "N passed, N failed"; exit 1 on a failure.
"""
import argparse
import http.cookiejar
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import checklib  # noqa: E402
from checklib import check, summary  # noqa: E402


def free_pair():
    """Two consecutive free loopback ports (waitroomd's and the shop's),
    drawn below Linux's ephemeral range (32768-60999), where the suite's
    own client connections take their ports, and checked as the servers
    bind them (SO_REUSEADDR: a port in TIME_WAIT still serves)."""
    rng = random.Random()
    for _ in range(500):
        p = rng.randrange(20000, 32000)
        socks = []
        try:
            for port in (p, p + 1):
                s = socket.socket()
                socks.append(s)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", port))
            return p
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise SystemExit("no two consecutive free ports")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitroomd", required=True)
    a = ap.parse_args()
    port = free_pair()
    base = "http://127.0.0.1:%d" % port
    run_dir = tempfile.mkdtemp(prefix="wr-make-run-")
    env = dict(os.environ, PORT=str(port), WAITROOMD=os.path.abspath(a.waitroomd), RUN_DIR=run_dir)
    proc = subprocess.Popen(["bash", os.path.join(ROOT, "scripts", "run.sh")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)

    def call(method, url, body=None):
        req = urllib.request.Request(url, data=body, method=method,
                                     headers={"Accept": "text/html,application/json"})
        try:
            with browser.open(req, timeout=10) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    try:
        deadline = time.monotonic() + 60
        ready = False
        while time.monotonic() < deadline and not ready:
            try:
                ready = call("GET", base + "/readyz")[0] == 200
            except OSError:  # not listening yet
                pass
            if not ready:  # (a 503 too: no busy loop while the store gets ready)
                time.sleep(0.2)
        check("make run's waitroomd answers /readyz", ready)
        shop_up = False
        while time.monotonic() < deadline and not shop_up:
            try:
                socket.create_connection(("127.0.0.1", port + 1), timeout=1).close()
                shop_up = True
            except OSError:
                time.sleep(0.2)
        check("make run's demo shop listens on PORT+1", shop_up)
        st, _, body = call("POST", base + "/v1/queues/demo/entries", b"")
        doc = json.loads(body or b"{}")
        check("a browser joins queue demo", st == 200 and doc.get("status") in ("waiting", "admitted"),
              "%s %r" % (st, body[:200]))
        target = None
        while time.monotonic() < deadline and doc.get("status") != "admitted":
            time.sleep(max(0.1, min(2.0, doc.get("retryAfterMs", 500) / 1000)))
            st, _, body = call("GET", base + "/v1/queues/demo/entries/me")
            doc = json.loads(body or b"{}")
        check("admitted within the deadline (2/s)", doc.get("status") == "admitted", repr(doc))
        req = urllib.request.Request(base + "/v1/admin/queues/demo",
                                     headers={"Authorization": "Bearer demo-admin-key"})
        with urllib.request.urlopen(req, timeout=10) as r:
            target = json.loads(r.read()).get("config", {}).get("targetUrl")
        check("the demo queue's targetUrl is the demo shop",
              target == "http://127.0.0.1:%d/" % (port + 1), repr(target))
        if target:
            st, hdr, body = call("GET", target)
            check("the admitted browser lands on the shop's page (200 HTML, pass consumed)",
                  st == 200 and b"You're in" in body
                  and hdr.get("Content-Type", "").startswith("text/html"),
                  "%s %r" % (st, body[:200]))
            st, hdr, body = call("GET", target)
            loc = hdr.get("Location", "")
            check("the same pass again goes back to the queue page (302)",
                  st == 302 and loc.startswith(base + "/q/demo"), "%s %r" % (st, loc))
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        if checklib.failed:
            print(out[-3000:])
        shutil.rmtree(run_dir, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
