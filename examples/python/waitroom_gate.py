"""waitroom_gate.py - a shop written in Python behind waitroom
(docs/INTEGRATION.md). Standard library only; the Flask decorators need
Flask (Debian: python3-flask) and import it only when used.

    from waitroom_gate import Gate
    gate = Gate(api="http://127.0.0.1:8080", page="https://shop.example/", queue="shop")

    @app.get("/checkout/")
    @gate.flask_verify                # page views: a live pass, not spent
    def checkout(): ...

    @app.post("/checkout/order")
    @gate.flask_consume               # the protected work: the pass spent, once
    def order():
        ... g.waitroom["userId"] ...
        gate.release(g.waitroom["token"])   # sessions on: the next person's turn

    # any WSGI app: application = gate.wsgi(application, consume=False)

The pass (entry token) comes as the cookie wr_token_<queue>, the query
parameter wr_token (tokenInQuery), or "Authorization: Bearer" /
"X-Waitroom-Token" (apps). Without a valid pass, page views (GET asking for
HTML) are sent to the queue page with a return URL; other requests get 403
JSON with the queue page's address. If waitroomd cannot be reached the
gate fails closed (503).
"""
import base64
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookies import SimpleCookie


class Unavailable(Exception):
    """waitroomd did not answer, or answered what a gate cannot act on."""


def pass_of(environ, queue):
    """The pass a request carries, or None."""
    auth = environ.get("HTTP_AUTHORIZATION", "")
    if auth.startswith("Bearer "):
        return auth[7:]
    if environ.get("HTTP_X_WAITROOM_TOKEN"):
        return environ["HTTP_X_WAITROOM_TOKEN"]
    qs = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
    if qs.get("wr_token"):
        return qs["wr_token"][0]
    cookies = SimpleCookie()
    try:
        cookies.load(environ.get("HTTP_COOKIE", ""))
    except Exception:
        return None
    c = cookies.get("wr_token_" + queue)
    return c.value if c else None


class Gate:
    def __init__(self, api, page, queue, timeout=2.0):
        self.queue = queue
        self.page = page.rstrip("/") + "/"
        self.base = api.rstrip("/") + "/v1/queues/" + urllib.parse.quote(queue, safe="") + "/tokens/"
        self.timeout = timeout

    def _call(self, route, method, token):
        req = urllib.request.Request(self.base + route, method=method,
                                     headers={"Authorization": "Bearer " + token})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except OSError as e:
            raise Unavailable(str(e))

    def verify(self, token):
        """GET tokens/verify: True (204: live, or the queue is off), False (401/403)."""
        status, _ = self._call("verify", "GET", token)
        if status == 204:
            return True
        if status in (401, 403):
            return False
        raise Unavailable("verify answered %d" % status)

    def consume(self, token):
        """POST tokens/consume: the 200 body ({"valid":true,"userId":...}), or
        {"valid": False, "reason": ...} when refused (403)."""
        status, body = self._call("consume", "POST", token)
        try:
            doc = json.loads(body or b"{}")
        except ValueError:
            doc = {}
        if status == 200 and doc.get("valid"):
            return doc
        if status == 403:
            return {"valid": False, "reason": doc.get("reason", "invalid")}
        raise Unavailable("consume answered %d" % status)

    def release(self, token):
        """POST tokens/release: ends the session; True when one was open (204)."""
        status, _ = self._call("release", "POST", token)
        return status == 204

    def queue_url(self, return_url):
        return (self.page + "q/" + urllib.parse.quote(self.queue, safe="")
                + "?return=" + urllib.parse.quote(return_url, safe=""))

    # ---- WSGI ----
    def wsgi(self, app, consume=False):
        """Wraps a WSGI app: every request needs a pass (verified, or consumed
        when consume=True). The pass's claims go to environ["waitroom"]."""
        def gated(environ, start_response):
            refused = self._check(environ, consume)
            if refused is not None:
                status, headers, body = refused
                start_response(status, headers)
                return [body]
            return app(environ, start_response)
        return gated

    def _check(self, environ, consume):
        """None when the request may go on, or (status, headers, body)."""
        token = pass_of(environ, self.queue)
        reason = "missing"
        try:
            if token and consume:
                doc = self.consume(token)
                if doc["valid"]:
                    environ["waitroom"] = dict(doc, token=token)
                    return None
                reason = doc["reason"]
            elif token:
                if self.verify(token):
                    environ["waitroom"] = {"token": token}
                    return None
                reason = "invalid"
        except Unavailable as e:
            body = json.dumps({"error": "WAITROOM_UNAVAILABLE", "message": str(e)}).encode()
            return ("503 Service Unavailable",
                    [("Content-Type", "application/json"), ("Retry-After", "5")], body)
        url = self.queue_url(_request_url(environ))
        if environ.get("REQUEST_METHOD") == "GET" and "html" in environ.get("HTTP_ACCEPT", ""):
            return "302 Found", [("Location", url), ("Content-Length", "0")], b""
        body = json.dumps({"error": "QUEUE_PASS_REQUIRED", "reason": reason, "queueUrl": url}).encode()
        return "403 Forbidden", [("Content-Type", "application/json")], body

    # ---- Flask ----
    def flask_verify(self, view):
        return self._flask(view, consume=False)

    def flask_consume(self, view):
        return self._flask(view, consume=True)

    def _flask(self, view, consume):
        import functools
        from flask import Response, g, request

        @functools.wraps(view)
        def wrapped(*args, **kwargs):
            refused = self._check(request.environ, consume)
            if refused is not None:
                status, headers, body = refused
                return Response(body, status=int(status.split()[0]), headers=headers)
            g.waitroom = request.environ["waitroom"]
            return view(*args, **kwargs)
        return wrapped


def _request_url(environ):
    """The request's own URL, without a wr_token parameter."""
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "localhost")
    path = urllib.parse.quote(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""))
    qs = [(k, v) for k, v in urllib.parse.parse_qsl(environ.get("QUERY_STRING", ""))
          if k != "wr_token"]
    url = environ.get("wsgi.url_scheme", "http") + "://" + host + path
    return url + ("?" + urllib.parse.urlencode(qs) if qs else "")


def report_health(api, queue, admin_key, latency_ms, error_rate, timeout=2.0):
    """Autotune: POST /v1/queues/{queue}/health with the shop's p95 latency (ms)
    and error share (0..1). Returns the status: 204 taken; 404 from a
    waitroomd without autotune (stop reporting)."""
    req = urllib.request.Request(
        api.rstrip("/") + "/v1/queues/" + urllib.parse.quote(queue, safe="") + "/health",
        method="POST", data=json.dumps({"latencyMs": latency_ms, "errorRate": error_rate}).encode(),
        headers={"Authorization": "Bearer " + admin_key, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def mint_invite(invite_key, queue, user_id, ttl_seconds=86400):
    """An invite for an invite-only queue (inviteKey): HS256 JWT, aud = queue,
    sub = the user id, exp. The same as waitroom-invite."""
    def b64(o):
        raw = json.dumps(o, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    now = int(time.time())
    signing = b64({"alg": "HS256", "typ": "JWT"}) + "." + b64(
        {"aud": queue, "sub": user_id, "iat": now, "exp": now + ttl_seconds})
    sig = hmac.new(invite_key.encode(), signing.encode(), hashlib.sha256).digest()
    return signing + "." + base64.urlsafe_b64encode(sig).rstrip(b"=").decode()
