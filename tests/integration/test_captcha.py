"""The CAPTCHA hook (queue config `captcha`, docs/API.md 1.2, "A place
costs work"): a join that adds a person needs a widget response that
waitroomd verifies with the provider's siteverify; a provider that does not
answer follows the queue's `fallback`. The provider is a stand-in started
here (never a real one): a Python http.server on a free loopback port whose
answer the response token chooses:

    ok-...      {"success": true, ...}
    once-...    {"success": true, ...} the first time, then (as a real
                provider: a response verifies once) {"success": false,
                "error-codes": ["timeout-or-duplicate"]}
    other-...   solved under another site key of the same account: refused
                ("sitekey-secret-mismatch") when the form names a site key
                (hCaptcha), else {"success": true, ...}
    named-...   {"success": true, ...} naming another "sitekey"
    elsewhere-... {"success": true, ...} solved on host elsewhere.example
    no-...      {"success": false, "error-codes": ["invalid-input-response"]}
    slow-...    answers after 5 s (waitroomd gives up after 3 s)
    500-...     500 with the provider's JSON
    badjson-... 200 "not json"
    big-...     200 with 64 KiB of JSON (over the 8 KiB waitroomd reads)
    close-...   closes the connection without an answer

A success carries the fields the real providers return: Turnstile's
(`challenge_ts`, `hostname`, `action`, `cdata`, `metadata`) on /siteverify,
hCaptcha's (`challenge_ts`, `hostname`, `credit`) on /hcaptcha/siteverify;
the host name is shop.example unless the token says otherwise.

Every request it gets is recorded (path, headers, form), so tests count the
verifications (one per join) and check what was sent."""
import html
import json
import ssl
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness import ENV, FAST, HOLD, WRTest, now_ms, uid
from helpers import ALPHABET, BITS, make_certs, memory_server, metric, private_server, solve, vid_of

SITE_KEY = "1x00000000000000000000AA"
OTHER_SITE_KEY = "2x00000000000000000000BB"
HOST = "shop.example"
SECRET = "0x4AAAAAAA-stand-in-secret"
FALLBACK_BITS = 6


class StandIn:
    """The stand-in siteverify (and widget script) on 127.0.0.1."""

    def __init__(self, tls=None):
        """tls: (certificate file, key file) to serve https."""
        self.lock = threading.Lock()
        self.requests = []
        self.seen = set()  # responses verified once already
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                body = b"window.standIn = true;"
                self.send_response(200)
                self.send_header("Content-Type", "text/javascript")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n).decode()
                form = {k: v[0] for k, v in urllib.parse.parse_qs(raw, keep_blank_values=True).items()}
                with stand_in.lock:
                    stand_in.requests.append({"path": self.path, "headers": dict(self.headers),
                                              "form": form, "raw": raw})
                token = form.get("response", "")
                kind = token.split("-", 1)[0]
                if kind == "close":
                    self.close_connection = True
                    return
                if kind == "slow":
                    time.sleep(5)
                status, body = 200, stand_in.success(self.path, form)
                with stand_in.lock:
                    again = token in stand_in.seen
                    stand_in.seen.add(token)
                if kind == "no":
                    body = {"success": False, "error-codes": ["invalid-input-response"]}
                elif kind == "once" and again:
                    body = {"success": False, "error-codes": ["timeout-or-duplicate"]}
                elif kind == "other" and form.get("sitekey", OTHER_SITE_KEY) != OTHER_SITE_KEY:
                    body = {"success": False, "error-codes": ["sitekey-secret-mismatch"]}
                elif kind == "named":
                    body["sitekey"] = OTHER_SITE_KEY
                elif kind == "elsewhere":
                    body["hostname"] = "elsewhere.example"
                elif kind == "500":
                    status = 500
                    body = {"success": False, "error-codes": ["internal-error"]}
                data = json.dumps(body).encode()
                if kind == "badjson":
                    data = b"not json"
                elif kind == "big":
                    data = json.dumps({"success": True, "pad": "x" * 65536}).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # waitroomd gave up first

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.origin = "http://127.0.0.1:%d" % self.port
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
            self.origin = "https://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def success(path, form):
        """A success as the provider of path answers it."""
        ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        if path.startswith("/hcaptcha/"):
            return {"success": True, "challenge_ts": ts, "hostname": HOST, "credit": False,
                    "error-codes": []}
        return {"success": True, "error-codes": [], "challenge_ts": ts, "hostname": HOST,
                "action": "", "cdata": "", "metadata": {"interactive": False}}

    def count(self, token=None):
        with self.lock:
            return sum(1 for r in self.requests
                       if token is None or r["form"].get("response") == token)

    def last(self, token):
        with self.lock:
            got = [r for r in self.requests if r["form"].get("response") == token]
        return got[-1] if got else None

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


STAND_IN = None


def setUpModule():
    global STAND_IN
    STAND_IN = StandIn()


def tearDownModule():
    if STAND_IN:
        STAND_IN.stop()


def captcha(fallback="challenge", provider="turnstile", bits=FALLBACK_BITS, **extra):
    path = "/hcaptcha/siteverify" if provider == "hcaptcha" else "/siteverify"
    return dict({"provider": provider, "siteKey": SITE_KEY, "secret": SECRET,
                 "verifyUrl": STAND_IN.origin + path, "fallback": fallback,
                 "fallbackBits": bits}, **extra)


class CaptchaBase(WRTest):

    def post(self, q, user, body, client=None, headers=None):
        c = client or self.c
        return c.request("POST", "/v1/queues/%s/entries" % q, c.uh(user, headers), body)

    def token(self, kind):
        return "%s-%s" % (kind, uid("t"))

    def assertCaptcha(self, r, reason, what="", challenge=None, bits=None, fallback=False,
                      provider="turnstile", script_origin=None):
        self.assertError(r, 403, "CHALLENGE_REQUIRED", what)
        b = r.json
        self.assertEqual(b.get("reason"), reason, "%s: %r" % (what, r))
        script = "/turnstile/v0/api.js" if provider == "turnstile" else "/1/api.js"
        origin = script_origin or STAND_IN.origin
        self.assertEqual(b.get("captcha"), {"provider": provider, "siteKey": SITE_KEY,
                                            "scriptUrl": origin + script},
                         "%s: %r" % (what, r))
        self.assertNotIn(SECRET, r.body, "the secret never leaves")
        if challenge:
            self.assertTrue(ALPHABET.match(b.get("challenge", "")), r)
            self.assertEqual(b.get("bits"), bits, r)
            self.assertGreaterEqual(b.get("expiresAt", 0), now_ms() + 119000, r)
        else:
            self.assertNotIn("challenge", b, "%s: %r" % (what, r))
        self.assertEqual(b.get("fallback", False), fallback, "%s: %r" % (what, r))
        return b


class CaptchaConfig(CaptchaBase):

    def test_field_secret_and_validation(self):
        q = self.new_queue(HOLD)
        self.assertIsNone(self.config(q)["captcha"])
        r = self.c.patch_queue(q, {"captcha": captcha()})
        self.assertEqual(r.status, 200, r)
        self.assertNotIn(SECRET, r.body)
        got = self.config(q)["captcha"]
        self.assertEqual(got, {"provider": "turnstile", "siteKey": SITE_KEY, "secret": "set",
                               "verifyUrl": STAND_IN.origin + "/siteverify",
                               "fallback": "challenge", "fallbackBits": FALLBACK_BITS,
                               "hostname": None})
        self.assertNotIn(SECRET, self.c.get_queue(q).body)
        self.assertNotIn(SECRET, self.c.list_queues().body)
        # the provider's verify URL by default
        q2 = self.new_queue(dict(HOLD, captcha={"provider": "hcaptcha", "siteKey": "k",
                                                "secret": "s"}))
        self.assertEqual(self.config(q2)["captcha"]["verifyUrl"],
                         "https://api.hcaptcha.com/siteverify")
        self.assertEqual(self.config(q2)["captcha"]["fallback"], "challenge")
        self.assertEqual(self.config(q2)["captcha"]["fallbackBits"], 18)
        # what GET shows, sent back, keeps the secret (the join still verifies)
        back = dict(got, siteKey=SITE_KEY)
        self.assertEqual(self.c.patch_queue(q, {"captcha": back}).status, 200)
        tok = self.token("ok")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}), 1, 1, eta_null=True)
        self.assertEqual(STAND_IN.last(tok)["form"]["secret"], SECRET)
        # bad values: 400 INVALID_CONFIG naming the member, nothing changed
        before = self.config(q)
        base = captcha()
        bad = [
            ("captcha", True),
            ("captcha", [1]),
            ("captcha.provider", dict(base, provider="recaptcha")),
            ("captcha.provider", {k: v for k, v in base.items() if k != "provider"}),
            ("captcha.siteKey", {k: v for k, v in base.items() if k != "siteKey"}),
            ("captcha.siteKey", dict(base, siteKey="")),
            ("captcha.siteKey", dict(base, siteKey="a b")),
            ("captcha.siteKey", dict(base, siteKey="k" * 101)),
            ("captcha.secret", {k: v for k, v in base.items() if k != "secret"}),
            ("captcha.secret", dict(base, secret=5)),
            ("captcha.secret", dict(base, secret="s" * 201)),
            ("captcha.verifyUrl", dict(base, verifyUrl="http://captcha.example/siteverify")),
            ("captcha.verifyUrl", dict(base, verifyUrl="ftp://127.0.0.1/x")),
            ("captcha.verifyUrl", dict(base, verifyUrl="https://u@captcha.example/x")),
            ("captcha.verifyUrl", dict(base, verifyUrl=5)),
            ("captcha.fallback", dict(base, fallback="admit")),
            ("captcha.fallbackBits", dict(base, fallbackBits=0)),
            ("captcha.fallbackBits", dict(base, fallbackBits=33)),
            ("captcha.fallbackBits", dict(base, fallbackBits="8")),
            ("captcha.hostname", dict(base, hostname="")),
            ("captcha.hostname", dict(base, hostname="https://shop.example")),
            ("captcha.hostname", dict(base, hostname="shop.example:443")),
            ("captcha.hostname", dict(base, hostname=5)),
            ("captcha.other", dict(base, other=1)),
        ]
        for field, value in bad:
            r = self.c.patch_queue(q, {"captcha": value})
            self.assertError(r, 400, "INVALID_CONFIG", "%s=%r" % (field, value))
            self.assertEqual(r.json.get("field"), field, "%r: %r" % (value, r))
            self.assertEqual(self.config(q), before, "a refused PATCH changes nothing")
        # "set" in a PUT: there is no secret to keep
        r = self.c.put_queue(uid("q"), dict(HOLD, captcha=dict(base, secret="set")))
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json.get("field"), "captcha.secret")
        # null removes it: joins need nothing
        self.assertEqual(self.c.patch_queue(q, {"captcha": None}).status, 200)
        self.assertIsNone(self.config(q)["captcha"])
        self.assertWaiting(self.c.join(q, "u2"), 2, 2, eta_null=True)


class CaptchaJoin(CaptchaBase):

    def test_missing(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        before, n = self.stats(q), STAND_IN.count()
        self.assertCaptcha(self.c.join(q, "u1"), "captchaMissing")
        self.assertCaptcha(self.post(q, "u1", {}), "captchaMissing")
        self.assertCaptcha(self.post(q, "u1", {"captchaResponse": None}), "captchaMissing")
        self.assertEqual(self.stats(q), before, "a refusal changes nothing")
        self.assertEqual(STAND_IN.count(), n, "nothing to verify")

    def test_passed(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        tok = self.token("ok")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}), 1, 1, eta_null=True)
        self.assertEqual(STAND_IN.count(tok), 1, "one verification per join")
        seen = STAND_IN.last(tok)
        self.assertEqual(seen["path"], "/siteverify")
        self.assertEqual(seen["form"], {"secret": SECRET, "response": tok,
                                        "remoteip": "127.0.0.1"})
        self.assertEqual(seen["headers"].get("Content-Type"),
                         "application/x-www-form-urlencoded")
        lq = 'queue="%s"' % q
        self.assertEqual(metric(self.c, "waitroom_captcha_verifications_total",
                                lq + ',outcome="passed"'), 1)

    def test_refused_and_malformed(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        before = self.stats(q)
        tok = self.token("no")
        self.assertCaptcha(self.post(q, "u1", {"captchaResponse": tok}), "captchaInvalid")
        self.assertEqual(STAND_IN.count(tok), 1)
        n = STAND_IN.count()
        for bad in (5, True, "", "a b", "x" * 3801, "caf\u00e9", ["ok-1"]):
            self.assertCaptcha(self.post(q, "u1", {"captchaResponse": bad}), "captchaInvalid",
                               what="captchaResponse=%r" % (bad,)[:40])
        self.assertEqual(STAND_IN.count(), n, "a response of the wrong shape is never sent")
        self.assertEqual(self.stats(q), before, "a refusal changes nothing")
        lq = 'queue="%s"' % q
        self.assertEqual(metric(self.c, "waitroom_captcha_verifications_total",
                                lq + ',outcome="refused"'), 1)
        self.assertEqual(metric(self.c, "waitroom_challenges_refused_total",
                                lq + ',reason="captchaInvalid"'), 8)

    def test_in_line_or_live_pass_needs_nothing(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": self.token("ok")}), 1, 1,
                           eta_null=True)
        n = STAND_IN.count()
        self.assertWaiting(self.c.join(q, "u1"), 1, 1, eta_null=True, what="join again")
        self.assertWaiting(self.c.me(q, "u1"), 1, 1, eta_null=True)
        self.assertEqual(STAND_IN.count(), n, "no verification for someone in line")
        q2 = self.new_queue(dict(FAST, captcha=captcha()))
        self.post(q2, "u1", {"captchaResponse": self.token("ok")})
        self.wait_admitted(q2, "u1")
        self.assertAdmitted(self.c.join(q2, "u1"))
        self.assertEqual(self.c.leave(q, "u1").status, 204)
        self.assertCaptcha(self.c.join(q, "u1"), "captchaMissing", what="after leaving")

    def test_disabled_or_closed_asks_nothing(self):
        q = self.new_queue(dict(HOLD, captcha=captcha(), enabled=False))
        self.assertEqual(self.c.join(q, "u1").json, {"status": "passthrough"})
        q2 = self.new_queue(dict(HOLD, captcha=captcha(), closed=True))
        r = self.poll_until(lambda: self.c.join(q2, uid()), lambda r: r.status == 200,
                            timeout=5, what="closed answer without a captcha")
        self.assertEqual(r.json, {"status": "closed", "reason": "closed"})


class CaptchaVerdictKept(CaptchaBase):
    """K38: a response the provider accepted stays good for that caller,
    account and queue for 300 s (the server remembers the verdict: a
    provider verifies a response once), and a join that will not get a
    place is answered before the response is sent."""

    def test_full_line_refused_before_the_provider(self):
        q = self.new_queue(dict(HOLD, captcha=captcha(), maxQueueSize=1))
        self.assertWaiting(self.post(q, "u0", {"captchaResponse": self.token("ok")}), 1, 1,
                           eta_null=True)
        tok = self.token("once")
        r = self.post(q, "u1", {"captchaResponse": tok})
        self.assertError(r, 429, "QUEUE_FULL")
        self.assertEqual(STAND_IN.count(tok), 0, "a full line: the response is not spent")
        # someone in line sends one: answered, nothing verified
        tok0 = self.token("once")
        self.assertWaiting(self.post(q, "u0", {"captchaResponse": tok0}), 1, 1, eta_null=True)
        self.assertEqual(STAND_IN.count(tok0), 0, "in line: no verification")
        # room again: the same response joins (its first verification)
        self.assertEqual(self.c.leave(q, "u0").status, 204)
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}), 1, 1, eta_null=True)
        self.assertEqual(STAND_IN.count(tok), 1)

    def test_verified_response_good_for_a_retry(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        tok = self.token("once")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}), 1, 1, eta_null=True)
        self.assertEqual(self.c.leave(q, "u1").status, 204)
        # the provider would say "timeout-or-duplicate": the server knows its verdict
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}), 1, 1, eta_null=True,
                           what="the same response again")
        self.assertEqual(STAND_IN.count(tok), 1, "verified once")
        # for that caller only: another one's join sends it (and the provider refuses it)
        self.assertCaptcha(self.post(q, "u2", {"captchaResponse": tok}), "captchaInvalid")
        self.assertEqual(STAND_IN.count(tok), 2)

    def test_verdict_kept_when_the_challenge_refuses(self):
        """captcha and challengeBits: a verified response whose join then
        meets a used challenge is good for the retry with a fresh one."""
        q = self.new_queue(dict(HOLD, challengeBits=BITS, captcha=captcha()))
        ch = self.c.get("/v1/queues/%s/challenge" % q, self.c.uh("u1")).json["challenge"]
        sol = {"challenge": ch, "nonce": solve(ch, BITS)}
        self.assertWaiting(self.post(q, "u1", dict(sol, captchaResponse=self.token("ok"))), 1,
                           1, eta_null=True)
        self.assertEqual(self.c.leave(q, "u1").status, 204)
        tok = self.token("once")
        r = self.post(q, "u1", dict(sol, captchaResponse=tok))
        self.assertCaptcha(r, "used", challenge=True, bits=BITS)
        self.assertEqual(STAND_IN.count(tok), 1)
        fresh = {"challenge": r.json["challenge"], "nonce": solve(r.json["challenge"], BITS)}
        self.assertWaiting(self.post(q, "u1", dict(fresh, captchaResponse=tok)), 1, 1,
                           eta_null=True, what="no new puzzle")
        self.assertEqual(STAND_IN.count(tok), 1)

    def test_store_down_under_fail_policy_closed(self):
        """Redis down, failPolicy closed: 503 before the provider."""
        start = self.private_redis_instances()
        w = start()
        q = self.new_queue(dict(HOLD, captcha=captcha(), failPolicy="closed"), client=w.client)
        start.redis.stop()
        self.poll_until(lambda: w.client.get("/readyz").status, lambda s: s == 503,
                        timeout=5, what="/readyz 503 with Redis down")
        tok = self.token("once")
        r = self.post(q, "u1", {"captchaResponse": tok}, client=w.client)
        self.assertError(r, 503, "STORE_UNAVAILABLE")
        self.assertEqual(STAND_IN.count(tok), 0, "the response is not spent")


class CaptchaThisWidget(CaptchaBase):
    """K39: a response solved under another site key of the same provider
    account, or on another site, is not this queue's: captchaInvalid."""

    def test_hcaptcha_is_told_the_site_key(self):
        q = self.new_queue(dict(HOLD, captcha=captcha(provider="hcaptcha")))
        tok = self.token("other")
        self.assertCaptcha(self.post(q, "u1", {"captchaResponse": tok}), "captchaInvalid",
                           provider="hcaptcha")
        self.assertEqual(STAND_IN.last(tok)["form"].get("sitekey"), SITE_KEY)
        tok = self.token("ok")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}), 1, 1, eta_null=True)
        self.assertEqual(STAND_IN.last(tok)["form"],
                         {"secret": SECRET, "response": tok, "remoteip": "127.0.0.1",
                          "sitekey": SITE_KEY})

    def test_answer_naming_another_site_key(self):
        for provider in ("turnstile", "hcaptcha"):
            q = self.new_queue(dict(HOLD, captcha=captcha(provider=provider)))
            self.assertCaptcha(self.post(q, "u1", {"captchaResponse": self.token("named")}),
                               "captchaInvalid", provider=provider, what=provider)
            self.assertEqual(self.stats(q)["waiting"], 0)

    def test_expected_hostname(self):
        q = self.new_queue(dict(HOLD, captcha=captcha(hostname="Shop.Example")))
        self.assertEqual(self.config(q)["captcha"]["hostname"], HOST)
        self.assertCaptcha(self.post(q, "u1", {"captchaResponse": self.token("elsewhere")}),
                           "captchaInvalid")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": self.token("ok")}), 1, 1,
                           eta_null=True)
        lq = 'queue="%s"' % q
        self.assertEqual(metric(self.c, "waitroom_captcha_verifications_total",
                                lq + ',outcome="refused"'), 1)
        # without one, the answer's hostname is not looked at
        q2 = self.new_queue(dict(HOLD, captcha=captcha()))
        self.assertWaiting(self.post(q2, "u1", {"captchaResponse": self.token("elsewhere")}), 1,
                           1, eta_null=True)


class CaptchaProviderSilent(CaptchaBase):
    """A provider that does not answer: timeout, 5xx, bad JSON, an oversized
    answer, a closed connection. fallback "challenge" (default): a fallback
    proof of work; "refuse": 403 captchaUnavailable."""

    def test_every_silence_falls_back_to_a_challenge(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        lq = 'queue="%s"' % q
        cases = [("slow", "timeout"), ("500", "error"), ("badjson", "badAnswer"),
                 ("big", "badAnswer"), ("close", "error")]
        for i, (kind, outcome) in enumerate(cases):
            before = self.stats(q)
            user = "u-%s" % kind
            tok = self.token(kind)
            t0 = time.monotonic()
            r = self.post(q, user, {"captchaResponse": tok})
            took = time.monotonic() - t0
            b = self.assertCaptcha(r, "captchaUnavailable", what=kind, challenge=True,
                                   bits=FALLBACK_BITS, fallback=True)
            self.assertEqual(STAND_IN.count(tok), 1, kind)
            if kind == "slow":
                self.assertGreaterEqual(took, 2.5, "waited for the timeout")
                self.assertLess(took, 4.9, "gave up before the provider answered")
            self.assertEqual(self.stats(q), before, "%s: a refusal changes nothing" % kind)
            self.assertGreaterEqual(metric(self.c, "waitroom_captcha_verifications_total",
                                           lq + ',outcome="%s"' % outcome), 1, kind)
            # the fallback challenge, solved, joins without a widget response
            body = {"challenge": b["challenge"], "nonce": solve(b["challenge"], FALLBACK_BITS)}
            self.assertWaiting(self.post(q, user, body), i + 1, i + 1, eta_null=True, what=kind)
        self.assertEqual(metric(self.c, "waitroom_challenges_refused_total",
                                lq + ',reason="captchaUnavailable"'), len(cases))

    def test_fallback_challenge_is_only_the_fallback(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        # a challengeBits challenge (GET .../challenge) is not a fallback one
        ch = self.c.get("/v1/queues/%s/challenge" % q, self.c.uh("u1")).json["challenge"]
        r = self.post(q, "u1", {"challenge": ch, "nonce": solve(ch, FALLBACK_BITS)})
        self.assertCaptcha(r, "captchaMissing")
        # a fallback challenge is the caller's and the queue's
        r = self.post(q, "u1", {"captchaResponse": self.token("500")})
        b = self.assertCaptcha(r, "captchaUnavailable", challenge=True, bits=FALLBACK_BITS,
                               fallback=True)
        body = {"challenge": b["challenge"], "nonce": solve(b["challenge"], FALLBACK_BITS)}
        self.assertCaptcha(self.post(q, "u2", body), "captchaMissing", what="another visitor")
        q2 = self.new_queue(dict(HOLD, captcha=captcha()))
        self.assertCaptcha(self.post(q2, "u1", body), "captchaMissing", what="another queue")
        self.assertEqual(self.stats(q)["waiting"], 0)
        self.assertWaiting(self.post(q, "u1", body), 1, 1, eta_null=True)

    def test_fallback_refuse(self):
        q = self.new_queue(dict(HOLD, captcha=captcha(fallback="refuse")))
        before = self.stats(q)
        for kind in ("500", "badjson", "close"):
            r = self.post(q, "u1", {"captchaResponse": self.token(kind)})
            self.assertCaptcha(r, "captchaUnavailable", what=kind)
            self.assertTrue(r.headers.get("retry-after"), r)
        self.assertEqual(self.stats(q), before, "nothing joined")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": self.token("ok")}), 1, 1,
                           eta_null=True, what="the provider back")


class CaptchaAndChallenges(CaptchaBase):
    """captcha and challengeBits together: both are needed; the proof of
    work is checked first (no verification is spent on a join without
    one); with fallback "challenge" a silent provider lets the solved proof
    of work through."""

    def solved(self, q, user):
        ch = self.c.get("/v1/queues/%s/challenge" % q, self.c.uh(user)).json["challenge"]
        return {"challenge": ch, "nonce": solve(ch, BITS)}

    def test_both(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS, captcha=captcha()))
        n = STAND_IN.count()
        r = self.post(q, "u1", {"captchaResponse": self.token("ok")})
        self.assertCaptcha(r, "missing", challenge=True, bits=BITS)
        self.assertEqual(STAND_IN.count(), n, "no verification without the proof of work")
        sol = self.solved(q, "u1")
        self.assertCaptcha(self.post(q, "u1", sol), "captchaMissing", challenge=True, bits=BITS)
        self.assertCaptcha(self.post(q, "u1", dict(sol, captchaResponse=self.token("no"))),
                           "captchaInvalid", challenge=True, bits=BITS)
        self.assertEqual(self.stats(q)["waiting"], 0)
        self.assertWaiting(self.post(q, "u1", dict(sol, captchaResponse=self.token("ok"))), 1, 1,
                           eta_null=True)

    def test_silent_provider_with_a_solved_challenge(self):
        q = self.new_queue(dict(HOLD, challengeBits=BITS, captcha=captcha()))
        sol = self.solved(q, "u1")
        self.assertWaiting(self.post(q, "u1", dict(sol, captchaResponse=self.token("500"))), 1,
                           1, eta_null=True, what="fallback challenge: the work is done")
        q2 = self.new_queue(dict(HOLD, challengeBits=BITS, captcha=captcha(fallback="refuse")))
        sol = self.solved(q2, "u1")
        r = self.post(q2, "u1", dict(sol, captchaResponse=self.token("500")))
        self.assertCaptcha(r, "captchaUnavailable", challenge=True, bits=BITS)
        self.assertEqual(self.stats(q2)["waiting"], 0)

    def test_any_instance_verifies(self):
        """Redis: another instance reads the captcha from the store and
        verifies with it (the secret travels in the stored config)."""
        self.redis_only()
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        a, _ = self.two_instances()
        tok = self.token("ok")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}, client=a.client), 1, 1,
                           eta_null=True)
        self.assertEqual(STAND_IN.last(tok)["form"]["secret"], SECRET)
        self.assertCaptcha(a.client.join(q, "u2"), "captchaMissing")


class CaptchaStored(CaptchaBase):

    def test_memory_snapshot_keeps_the_captcha_and_its_secret(self):
        """The embedded store: the captcha, secret included, survives a
        restart from the snapshot (the config JSON holds it); GET still
        shows "set"."""
        if ENV.store != "memory":
            self.skipTest("memory only (Redis: test_any_instance_verifies)")
        data = tempfile.mkdtemp(prefix="wr-captcha-snap-", dir=ENV.tmpdir)
        w = memory_server(self, data, log_level="info")
        q = self.new_queue(dict(HOLD, captcha=captcha()), client=w.client)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())
        log = w.stderr_tail(200000)
        self.assertIn("admin change", log, "the audit line of the PUT")
        self.assertNotIn(SECRET, log, "the audit log shows the secret as set")
        w = memory_server(self, data)
        self.assertEqual(self.config(q, w.client)["captcha"]["secret"], "set")
        self.assertCaptcha(w.client.join(q, "u1"), "captchaMissing")
        tok = self.token("ok")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}, client=w.client), 1, 1,
                           eta_null=True)
        self.assertEqual(STAND_IN.last(tok)["form"]["secret"], SECRET)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())


class CaptchaTLS(CaptchaBase):
    """A verify URL over https: TLS through bufferevent_openssl, the
    provider's certificate checked against the trust store (here a test CA
    given as SSL_CERT_FILE, which OpenSSL's default paths read) and its
    name (the IP address of the URL)."""

    def test_https_verification_and_certificate_check(self):
        d = tempfile.mkdtemp(dir=ENV.tmpdir)
        certs = make_certs(d)
        tls = StandIn(tls=(certs["server.pem"], certs["server.key"]))
        self.addCleanup(tls.stop)
        cfg = dict(HOLD, captcha=dict(captcha(), verifyUrl=tls.origin + "/siteverify"))
        trusting = private_server(self, identity="header:X-User-Id",
                                  env={"SSL_CERT_FILE": certs["ca.pem"]})
        q = self.new_queue(cfg, client=trusting.client)
        tok = self.token("ok")
        self.assertWaiting(self.post(q, "u1", {"captchaResponse": tok}, client=trusting.client),
                           1, 1, eta_null=True, what="verified over TLS")
        self.assertEqual(tls.last(tok)["form"]["secret"], SECRET)
        tok = self.token("no")
        real = "https://challenges.cloudflare.com"  # an https verifyUrl: the provider's script
        self.assertCaptcha(self.post(q, "u2", {"captchaResponse": tok}, client=trusting.client),
                           "captchaInvalid", script_origin=real)
        # a server that does not trust the stand-in's CA never sends the
        # secret: the handshake fails, the provider counts as silent
        q2 = self.new_queue(cfg)
        tok = self.token("ok")
        r = self.post(q2, "u1", {"captchaResponse": tok})
        self.assertCaptcha(r, "captchaUnavailable", challenge=True, bits=FALLBACK_BITS,
                           fallback=True, script_origin=real)
        self.assertEqual(tls.count(tok), 0, "nothing sent to an unverified peer")
        self.assertGreaterEqual(metric(self.c, "waitroom_captcha_verifications_total",
                                       'queue="%s",outcome="error"' % q2), 1)


class CaptchaPage(CaptchaBase):
    """The queue page of a queue with a captcha (cookie mode)."""

    server = "cookie"

    def csp(self, r):
        return dict((d.strip().split(" ", 1) + [""])[:2]
                    for d in r.headers["content-security-policy"].split(";"))

    def test_page_shows_the_widget_and_widens_the_csp_for_it_only(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        r = self.c.get("/q/" + q)
        self.assertEqual(r.status, 200, r)
        self.assertIn('data-state="challenge"', r.body)
        self.assertIn('data-captcha-provider="turnstile"', r.body)
        self.assertIn('data-captcha-site-key="%s"' % SITE_KEY, r.body)
        self.assertIn('data-captcha-script="%s/turnstile/v0/api.js"' % STAND_IN.origin, r.body)
        self.assertIn("JavaScript", html.unescape(r.body), "without JavaScript it says so")
        self.assertNotIn(SECRET, r.body)
        self.assertEqual(self.stats(q)["waiting"], 0, "the page does not join")
        csp = self.csp(r)
        self.assertEqual(csp["script-src"], "'self' " + STAND_IN.origin)
        self.assertEqual(csp["frame-src"], "'self' " + STAND_IN.origin)
        self.assertEqual(csp["connect-src"], "'self' " + STAND_IN.origin)
        self.assertEqual(csp["style-src"], "'self'")
        self.assertEqual(csp["default-src"], "'self'")
        # another queue's page: nothing widened
        q2 = self.new_queue(HOLD)
        r2 = self.c.get("/q/" + q2)
        self.assertNotIn(STAND_IN.origin, r2.headers["content-security-policy"])
        self.assertNotIn("frame-src", r2.headers["content-security-policy"])
        self.assertIn('data-captcha-provider=""', r2.body)
        # the page's join: a visitor cookie; with the response, a place
        vid = vid_of(r)
        self.assertTrue(vid)
        h = {"Cookie": "wr_vid=" + vid}
        r = self.post(q, None, {"captchaResponse": self.token("ok")}, headers=h)
        self.assertWaiting(r, 1, 1, eta_null=True)
        r = self.c.get("/q/" + q, h)
        self.assertIn('data-state="waiting"', r.body, "in line: no widget")

    def test_hcaptcha_csp_as_documented(self):
        q = self.new_queue(dict(HOLD, captcha={"provider": "hcaptcha", "siteKey": SITE_KEY,
                                               "secret": SECRET}))
        csp = self.csp(self.c.get("/q/" + q))
        src = "https://hcaptcha.com https://*.hcaptcha.com"
        self.assertEqual(csp["script-src"], "'self' " + src)
        self.assertEqual(csp["frame-src"], "'self' " + src)
        self.assertEqual(csp["style-src"], "'self' " + src)
        self.assertEqual(csp["connect-src"], "'self' " + src)
        r = self.c.get("/q/" + q)
        self.assertIn('data-captcha-script="https://js.hcaptcha.com/1/api.js"', r.body)

    def test_fresh_visitor_refused_without_a_store_read_gets_a_cookie(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        r = self.post(q, None, {})
        self.assertCaptcha(r, "captchaMissing")
        self.assertTrue(vid_of(r), "a 403 to a caller without a cookie sets one")


class CaptchaIsolation(CaptchaBase):
    """A queue without captcha is untouched by another's."""

    def test_other_queues_unaffected(self):
        q = self.new_queue(dict(HOLD, captcha=captcha()))
        q2 = self.new_queue(HOLD)
        self.assertCaptcha(self.c.join(q, "u1"), "captchaMissing")
        self.assertWaiting(self.c.join(q2, "u1"), 1, 1, eta_null=True)


if __name__ == "__main__":
    raise SystemExit("run through run.py")
