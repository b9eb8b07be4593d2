#!/usr/bin/env python3
"""run_examples.py - the shop integration examples of docs/INTEGRATION.md run
against a real waitroomd (CTest shop_examples).

    run_examples.py --waitroomd BIN [--only shell|node|python]

Starts waitroomd (embedded store, cookie identity as behind the queue page,
a free port) with queue "shop" (sessions on) and invite-only queue "vip",
then:

shell   examples/shell/waitroom.sh: a person waits for a pass (cookie jar),
        the shop verifies, consumes, releases; a second consume is refused;
        the health report (204, or 404 from a waitroomd without autotune);
        an invite (waitroom-invite) lets its user into "vip".
node    examples/node/shop.js (Express from the npm registry: npm ci in
        examples/node when node_modules is missing or older than the lock
        file) and python: examples/python/shop.py (Flask from Debian's
        python3-flask), each checked the same way: no pass -> 302 to the
        queue page with a return URL (HTML) or 403 JSON (API); a live pass
        as cookie, as ?wr_token= and as Bearer -> the page; a forged one ->
        refused; the order consumes the pass and releases the session
        (stats: sessions 0, releasedTotal up); the same pass again -> 403
        "consumed"; the health report's answer is printed; the example's
        mintInvite / mint_invite makes an invite that "vip" accepts.

The health report (POST /v1/queues/{q}/health, autotune) is another
branch's work: a waitroomd without it answers 404, which each example
reports and tolerates; the check accepts 204 or that 404 and says which.
Prints "N passed, N failed" and exits 1 on any failure.
"""
import argparse
from http.cookiejar import CookieJar
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checklib import check, summary  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from harness import ADMIN_KEY, Waitroomd, kill_all  # noqa: E402

INVITE_KEY = "i" * 40


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **kw):
        return None


def http(method, url, headers=None, body=None, opener=None):
    """(status, headers, body text); never follows redirects."""
    data = None
    headers = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    op = opener or urllib.request.build_opener(NoRedirect)
    try:
        with op.open(req, timeout=10) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


class Person:
    """Someone in line with a cookie jar (the visitor cookie wr_vid)."""

    def __init__(self, api):
        self.api = api
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(CookieJar()), NoRedirect)

    def pass_for(self, q, timeout=10):
        st, _, body = http("POST", f"{self.api}/v1/queues/{q}/entries", opener=self.opener)
        deadline = time.monotonic() + timeout
        while True:
            doc = json.loads(body)
            if st == 200 and doc.get("status") == "admitted":
                return doc["token"]
            if time.monotonic() > deadline:
                raise RuntimeError(f"not admitted in {timeout} s: {st} {body}")
            time.sleep(min(doc.get("retryAfterMs") or 200, 500) / 1000)
            st, _, body = http("GET", f"{self.api}/v1/queues/{q}/entries/me", opener=self.opener)


def admin(api, method, path, body=None):
    return http(method, api + path, {"Authorization": "Bearer " + ADMIN_KEY}, body)


def stats(api, q):
    st, _, body = admin(api, "GET", f"/v1/admin/queues/{q}")
    return json.loads(body)["stats"]


def health_ok(text):
    """The health report's outcome: 204 (autotune) or the 404 of a server without it."""
    return "204" in text or "404" in text


class Proc:
    """A child printing "listening on 127.0.0.1:PORT" first; keeps its output."""

    def __init__(self, cmd, cwd, env):
        self.p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines = []
        got = threading.Event()

        def drain():
            for line in self.p.stdout:
                self.lines.append(line.rstrip("\n"))
                got.set()
            got.set()
        threading.Thread(target=drain, daemon=True).start()
        deadline = time.monotonic() + 30
        self.port = None
        while time.monotonic() < deadline and self.port is None:
            got.wait(0.2)
            for line in self.lines:
                if line.startswith("listening on 127.0.0.1:"):
                    self.port = int(line.rsplit(":", 1)[1])
            if self.p.poll() is not None and self.port is None:
                break
        if self.port is None:
            self.stop()
            raise RuntimeError(f"{cmd} did not start: {self.lines[-20:]}")

    def wait_line(self, pred, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines:
                if pred(line):
                    return line
            time.sleep(0.1)
        return None

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()


def check_shop(name, shop, api):
    """The same walk through a shop example (node or python)."""
    base = f"http://127.0.0.1:{shop.port}"
    page = base + "/checkout/"
    st, h, _ = http("GET", page, {"Accept": "text/html"})
    loc = h.get("Location", "") if h else ""
    want = f"{api}/q/shop?return=" + urllib.parse.quote(page, safe="")
    check(f"{name}: no pass, a page view: 302 to the queue page with the return URL",
          st == 302 and loc == want, f"{st} {loc!r}, want {want!r}")
    st, _, body = http("POST", base + "/checkout/order", {"Accept": "application/json"})
    doc = json.loads(body) if body.startswith("{") else {}
    check(f"{name}: no pass, an API call: 403 QUEUE_PASS_REQUIRED with queueUrl",
          st == 403 and doc.get("error") == "QUEUE_PASS_REQUIRED"
          and doc.get("queueUrl", "").startswith(api + "/q/shop?return="), f"{st} {body}")

    token = Person(api).pass_for("shop")
    st, _, body = http("GET", page, {"Cookie": f"wr_token_shop={token}", "Accept": "text/html"})
    check(f"{name}: the pass as cookie wr_token_shop: the page (200)", st == 200 and "Checkout" in body,
          f"{st} {body[:200]}")
    st, _, _ = http("GET", page + "?wr_token=" + urllib.parse.quote(token), {"Accept": "text/html"})
    check(f"{name}: the pass as ?wr_token= (tokenInQuery): 200", st == 200, str(st))
    st, _, _ = http("GET", page, {"Authorization": "Bearer " + token})
    check(f"{name}: the pass as Bearer (an app): 200", st == 200, str(st))
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    st, _, body = http("GET", page, {"Authorization": "Bearer " + forged, "Accept": "application/json"})
    check(f"{name}: a forged pass: 403 QUEUE_PASS_REQUIRED", st == 403 and "QUEUE_PASS_REQUIRED" in body,
          f"{st} {body}")

    before = stats(api, "shop")
    st, _, body = http("POST", base + "/checkout/order", {"Cookie": f"wr_token_shop={token}"})
    doc = json.loads(body) if body.startswith("{") else {}
    check(f"{name}: the order consumes the pass and releases the session",
          st == 200 and doc.get("ordered") is True and doc.get("released") is True
          and isinstance(doc.get("userId"), str), f"{st} {body}")
    after = stats(api, "shop")
    check(f"{name}: stats: no open session, releasedTotal up by 1",
          after.get("sessions") == 0
          and after.get("releasedTotal") == before.get("releasedTotal", 0) + 1,
          f"before {before}, after {after}")
    st, _, body = http("POST", base + "/checkout/order",
                       {"Cookie": f"wr_token_shop={token}", "Accept": "application/json"})
    check(f"{name}: the same pass again: 403, reason consumed",
          st == 403 and json.loads(body).get("reason") == "consumed", f"{st} {body}")
    line = shop.wait_line(lambda l: l.startswith("waitroom health report"))
    check(f"{name}: the health report answered 204, or 404 from a waitroomd without autotune",
          line is not None and health_ok(line), repr(shop.lines[-10:]))
    if line:
        print(f"     {name}: {line}")


def check_invite(name, invite, api):
    st, _, body = http("POST", f"{api}/v1/queues/vip/entries",
                       {"Authorization": "Bearer " + invite})
    check(f"{name}: its invite lets its user into invite-only queue vip",
          st == 200 and json.loads(body).get("status") in ("waiting", "admitted"), f"{st} {body}")
    st, _, body = http("POST", f"{api}/v1/queues/vip/entries")
    check(f"{name}: (without one: 403 INVITE_REQUIRED)", st == 403 and "INVITE_REQUIRED" in body,
          f"{st} {body}")


def run_shell(api, bindir, tmp):
    sh = os.path.join(ROOT, "examples", "shell", "waitroom.sh")
    env = dict(os.environ, WAITROOM=api, WAITROOM_JAR=os.path.join(tmp, "jar"),
               WAITROOM_ADMIN_KEY=ADMIN_KEY, WAITROOM_INVITE_KEY=INVITE_KEY,
               PATH=bindir + os.pathsep + os.environ.get("PATH", ""))

    def run(*args):
        r = subprocess.run(["sh", sh] + list(args), env=env, capture_output=True, text=True,
                           timeout=60)
        return r.returncode, r.stdout.strip(), r.stderr.strip()

    rc, token, err = run("wait", "shop")
    if not check("shell: wait: a pass", rc == 0 and token.count(".") == 2, f"{rc} {token} {err}"):
        return
    check("shell: verify: 204", run("verify", "shop", token)[1] == "204")
    rc, out, err = run("consume", "shop", token)
    check("shell: consume: exit 0, valid", rc == 0 and json.loads(out).get("valid") is True,
          f"{rc} {out} {err}")
    check("shell: verify during the session: 204", run("verify", "shop", token)[1] == "204")
    check("shell: release: 204, then 403 (no session)",
          run("release", "shop", token)[1] == "204" and run("release", "shop", token)[1] == "403")
    rc, out, err = run("consume", "shop", token)
    check("shell: consume again: exit 1, reason consumed",
          rc == 1 and json.loads(out).get("reason") == "consumed", f"{rc} {out} {err}")
    rc, out, err = run("health", "shop", "120", "0.01")
    check("shell: health: 204, or the 404 of a waitroomd without autotune",
          rc == 0 and health_ok(out), f"{rc} {out} {err}")
    print(f"     shell: health: {out}")
    rc, invite, err = run("invite", "vip", "vip-shell")
    if check("shell: invite (waitroom-invite)", rc == 0 and invite.count(".") == 2, f"{rc} {err}"):
        check_invite("shell", invite, api)


def run_node(api, tmp):
    d = os.path.join(ROOT, "examples", "node")
    node, npm = shutil.which("node"), shutil.which("npm")
    if not check("node: node and npm are installed (scripts/deps.sh)", node and npm):
        return
    mods = os.path.join(d, "node_modules", ".package-lock.json")
    lock = os.path.join(d, "package-lock.json")
    if not os.path.exists(mods) or os.path.getmtime(mods) < os.path.getmtime(lock):
        r = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=d, capture_output=True,
                           text=True, timeout=600)
        if not check("node: npm ci (express from the npm registry)", r.returncode == 0,
                     r.stdout[-2000:] + r.stderr[-2000:]):
            return
    env = dict(os.environ, WAITROOM_API=api, WAITROOM_PAGE=api + "/", WAITROOM_QUEUE="shop",
               WAITROOM_ADMIN_KEY=ADMIN_KEY, PORT="0")
    shop = Proc([node, "shop.js"], d, env)
    try:
        check_shop("node", shop, api)
    finally:
        shop.stop()
    r = subprocess.run([node, "-e", "process.stdout.write(require('./waitroom').mintInvite("
                        f"'{INVITE_KEY}', 'vip', 'vip-node'))"], cwd=d, capture_output=True,
                       text=True, timeout=30)
    if check("node: mintInvite", r.returncode == 0 and r.stdout.count(".") == 2, r.stderr):
        check_invite("node", r.stdout, api)


def run_python(api, tmp):
    d = os.path.join(ROOT, "examples", "python")
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    r = subprocess.run([py, "-c", "import flask"], capture_output=True, text=True)
    if not check("python: Flask is importable (Debian python3-flask; scripts/deps.sh)",
                 r.returncode == 0, r.stderr):
        return
    env = dict(os.environ, WAITROOM_API=api, WAITROOM_PAGE=api + "/", WAITROOM_QUEUE="shop",
               WAITROOM_ADMIN_KEY=ADMIN_KEY, PORT="0", PYTHONUNBUFFERED="1")
    shop = Proc([py, "shop.py"], d, env)
    try:
        check_shop("python", shop, api)
    finally:
        shop.stop()
    sys.path.insert(0, d)
    import waitroom_gate
    check_invite("python", waitroom_gate.mint_invite(INVITE_KEY, "vip", "vip-python"), api)
    # Plain WSGI: the same gate around any WSGI app, waitroomd unreachable -> 503.
    gate = waitroom_gate.Gate(api="http://127.0.0.1:9", page=api + "/", queue="shop")
    app = gate.wsgi(lambda environ, sr: (sr("200 OK", []), [b"in"])[1], consume=True)
    got = {}
    out = app({"REQUEST_METHOD": "POST", "HTTP_AUTHORIZATION": "Bearer x.y.z", "PATH_INFO": "/",
               "wsgi.url_scheme": "http", "HTTP_HOST": "shop"},
              lambda status, headers: got.update(status=status))
    check("python: plain WSGI gate, waitroomd unreachable: 503 (fails closed)",
          got.get("status", "").startswith("503") and b"WAITROOM_UNAVAILABLE" in b"".join(out),
          repr(got))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitroomd", required=True)
    ap.add_argument("--only", choices=["shell", "node", "python"])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wr-examples-")
    server = Waitroomd(a.waitroomd, "memory", "e" * 64, tmp)
    try:
        api = f"http://127.0.0.1:{server.port}"
        st, _, body = admin(api, "PUT", "/v1/admin/queues/shop",
                            {"admitPerSecond": 50, "sessionSeconds": 60})
        check("queue shop (sessions on)", st in (200, 201), body)
        st, _, body = admin(api, "PUT", "/v1/admin/queues/vip",
                            {"admitPerSecond": 50, "inviteKey": INVITE_KEY})
        check("queue vip (invite-only)", st in (200, 201), body)
        for name, fn in (("shell", lambda: run_shell(api, os.path.dirname(
                os.path.abspath(a.waitroomd)), tmp)),
                         ("node", lambda: run_node(api, tmp)),
                         ("python", lambda: run_python(api, tmp))):
            if a.only in (None, name):
                try:
                    fn()
                except Exception as e:  # one example's crash is its failure, not the run's
                    check(f"{name}: ran to the end", False, repr(e))
    finally:
        server.terminate()
        kill_all()
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
