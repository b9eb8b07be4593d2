"""Entry tokens: format, consume, verify, and K11 (skipping the line).

Reasons expected in 403 INVALID_TOKEN bodies (src/core/token.h): "missing",
"malformed", "unsupported_alg", "bad_signature", "wrong_queue", "expired",
"consumed", "user_mismatch".
"""
import os
import re
import time

import jwtutil
from harness import ENV, FAST, WRTest, uid

JTI_RE = re.compile(r"^[A-Za-z0-9_-]{22}$")


def server_secret(token):
    """The bytes the server signs with: --token-secret as given (ASCII) or
    hex-decoded. None if neither verifies."""
    for cand in (ENV.secret.encode(), bytes.fromhex(ENV.secret)):
        if jwtutil.verifies(token, cand):
            return cand
    return None


def comparable(stats):
    return {k: v for k, v in stats.items() if k != "admitRateObserved"}


class TokenFormat(WRTest):

    def test_token_is_an_hs256_jwt_with_the_documented_claims(self):
        ttl = 77
        q = self.new_queue(dict(FAST, tokenTtlSeconds=ttl))
        a, b = uid(), uid()
        ta, tb = self.admit(q, a), self.admit(q, b)
        for tok, user in ((ta, a), (tb, b)):
            self.assertNotIn("=", tok, "base64url without padding")
            h, p, sig, _ = jwtutil.decode(tok)
            # kid names the signing key (rotation, docs/SECURITY.md)
            self.assertRegex(h.get("kid", ""), r"^[A-Za-z0-9_-]{8}$")
            self.assertEqual({k: v for k, v in h.items() if k != "kid"},
                             {"alg": "HS256", "typ": "JWT"})
            self.assertEqual(p.get("iss"), "waitroom")
            self.assertEqual(p.get("aud"), q)
            self.assertEqual(p.get("sub"), user)
            self.assertRegex(p.get("jti", ""), JTI_RE)
            self.assertInt(p.get("iat"), "iat")
            self.assertInt(p.get("exp"), "exp")
            self.assertEqual(p["exp"] - p["iat"], ttl)
            self.assertAlmostEqual(p["iat"], time.time(), delta=10)
            self.assertEqual(len(sig), 32, "HMAC-SHA256 is 32 bytes")
        self.assertNotEqual(jwtutil.decode(ta)[1]["jti"], jwtutil.decode(tb)[1]["jti"])
        self.assertIsNotNone(server_secret(ta),
                             "signature verifies neither with --token-secret's bytes nor "
                             "with its hex decoding")


class Consume(WRTest):

    def test_consume_via_bearer(self):
        q = self.new_queue(FAST)
        u = uid()
        tok = self.admit(q, u)
        st0 = self.stats(q)
        r = self.c.consume(q, tok)
        self.assertEqual(r.status, 200, repr(r))
        self.assertJsonHeaders(r)
        self.assertIs(r.json.get("valid"), True, repr(r))
        self.assertEqual(r.json.get("userId"), u)
        self.assertFalse(r.json.get("passthrough", False))
        st = self.stats(q)
        self.assertEqual(st["consumedTotal"], st0["consumedTotal"] + 1)
        self.assertEqual(st["active"], st0["active"] - 1)
        self.assertTokenRefused(self.c.consume(q, tok), "consumed", "second consume")
        self.assertTokenRefused(self.c.consume(q, tok, via="body"), "consumed", "third consume")
        self.assertEqual(self.stats(q)["consumedTotal"], st0["consumedTotal"] + 1)

    def test_consume_via_json_body(self):
        q = self.new_queue(FAST)
        u = uid()
        tok = self.admit(q, u)
        r = self.c.consume(q, tok, via="body")
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual((r.json.get("valid"), r.json.get("userId")), (True, u))

    def test_user_mismatch_does_not_consume(self):
        q = self.new_queue(FAST)
        u = uid()
        tok = self.admit(q, u)
        self.assertTokenRefused(self.c.consume(q, tok, user=uid(), via="body"),
                                "user_mismatch", "body userId differs")
        self.assertTokenRefused(self.c.consume(q, tok, user="someone-else", via="bearer"),
                                "user_mismatch", "bearer + body userId differs")
        st = self.stats(q)
        self.assertEqual((st["active"], st["consumedTotal"]), (1, 0))
        r = self.c.consume(q, tok, user=u, via="body")
        self.assertEqual(r.status, 200, "the right user still consumes: %r" % r)
        self.assertEqual(r.json.get("userId"), u)

    def test_missing_token(self):
        q = self.new_queue(FAST)
        for what, r in [("nothing", self.c.consume(q)),
                        ("empty body object", self.c.consume(q, None, via="body")),
                        ("only userId", self.c.consume(q, None, user="u1", via="body")),
                        ("empty bearer", self.c.request(
                            "POST", "/v1/queues/%s/tokens/consume" % q,
                            {"Authorization": "Bearer "}))]:
            with self.subTest(what):
                self.assertTokenRefused(r, "missing", what)

    def test_disabled_queue_is_passthrough(self):
        q = self.new_queue(dict(FAST, enabled=False))
        for what, r in [("no token", self.c.consume(q)),
                        ("garbage", self.c.consume(q, "x.y.z"))]:
            with self.subTest(what):
                self.assertEqual(r.status, 200, repr(r))
                self.assertJsonHeaders(r)
                self.assertIs(r.json.get("valid"), True)
                self.assertIs(r.json.get("passthrough"), True)
        self.assertEqual(self.stats(q)["consumedTotal"], 0)


class Verify(WRTest):

    def test_verify_ways_and_never_consumes(self):
        q = self.new_queue(FAST)
        u = uid()
        tok = self.admit(q, u)
        for via in ("bearer", "header", "cookie", "bearer", "header"):
            with self.subTest(via=via):
                r = self.c.verify(q, tok, via=via)
                self.assertEqual(r.status, 204, "%s: %r" % (via, r))
                self.assertEqual(r.body, "")
        st = self.stats(q)
        self.assertEqual((st["active"], st["consumedTotal"]), (1, 0))
        r = self.c.consume(q, tok)
        self.assertEqual(r.status, 200, "verify must not consume: %r" % r)
        r = self.c.verify(q, tok)
        self.assertEqual(r.status, 403, "consumed token no longer verifies: %r" % r)

    def test_verify_errors(self):
        q = self.new_queue(FAST)
        other = self.new_queue(FAST, prefix="other")
        tok_other = self.admit(other, uid())
        r = self.c.verify(q)
        self.assertEqual(r.status, 401, repr(r))
        self.assertJsonHeaders(r)
        for what, t in [("garbage", "abc"), ("three parts", "a.b.c"),
                        ("other queue's token", tok_other)]:
            with self.subTest(what):
                r = self.c.verify(q, t)
                self.assertEqual(r.status, 403, "%s: %r" % (what, r))
        # the cookie of another queue is not this queue's token
        r = self.c.request("GET", "/v1/queues/%s/tokens/verify" % q,
                           {"Cookie": "wr_token_%s=%s" % (other, tok_other)})
        self.assertEqual(r.status, 401, "cookie of another queue = no token: %r" % r)
        self.assertEqual(self.c.consume(other, tok_other).status, 200)

    def test_verify_disabled_queue(self):
        q = self.new_queue(dict(FAST, enabled=False))
        self.assertEqual(self.c.verify(q).status, 204)
        self.assertEqual(self.c.verify(q, "x.y.z").status, 204)


class K11SkippingTheLine(WRTest):

    def test_k11_every_forgery_is_refused_without_side_effects(self):
        ttl = 300
        a = self.new_queue(dict(FAST, tokenTtlSeconds=ttl), prefix="k11a")
        b = self.new_queue(FAST, prefix="k11b")
        c = self.new_queue(dict(FAST, tokenTtlSeconds=1), prefix="k11c")
        u1, u2, u3, u4 = uid(), uid(), uid(), uid()
        t4 = self.admit(c, u4)                 # expires while we prepare the rest
        t1, t2 = self.admit(a, u1), self.admit(a, u2)
        t3 = self.admit(b, u3)
        h1, p1, _, _ = jwtutil.decode(t1)
        now = int(time.time())
        other_secret = os.urandom(32)
        forged_claims = jwtutil.claims_for(a, u1, now, ttl)
        tampered = jwtutil.unsigned(h1, dict(p1, sub=u2), t1.split(".")[2])
        attacks = [
            ("no token", None, None, "missing"),
            ("not a JWT", "hello", None, "malformed"),
            ("three dots of junk", "a.b.c", None, "malformed"),
            ("random well-formed JWT",
             jwtutil.unsigned(jwtutil.HS256, forged_claims, jwtutil.b64u_encode(os.urandom(32))),
             None, "bad_signature"),
            ("signed by another secret", jwtutil.sign(jwtutil.HS256, forged_claims, other_secret),
             None, "bad_signature"),
            ("alg none", jwtutil.unsigned({"alg": "none", "typ": "JWT"}, forged_claims), None,
             "unsupported_alg"),
            ("alg none, real signature",
             jwtutil.unsigned({"alg": "none", "typ": "JWT"}, p1, t1.split(".")[2]), None,
             "unsupported_alg"),
            ("alg HS512", jwtutil.sign({"alg": "HS512", "typ": "JWT"}, forged_claims,
                                       other_secret), None, "unsupported_alg"),
            ("payload changed, signature kept", tampered, None, "bad_signature"),
            ("token of another queue", t3, None, "wrong_queue"),
            ("valid token, another user's id", t1, u2, "user_mismatch"),
        ]
        # wait for c's token to be past its exp, then add it
        self.poll_until(lambda: self.c.me(c, u4).status, lambda s: s == 404, timeout=6,
                        what="token of %s expired" % c)
        while time.time() <= jwtutil.decode(t4)[1]["exp"]:
            time.sleep(0.05)
        attacks.append(("expired token (at its own queue)", t4, None, "expired"))
        self.assertEqual(self.c.verify(c, t4).status, 403, "verify of an expired token")
        secret = server_secret(t1)
        if secret is not None:  # forgeries with the real secret: only issued tokens pass
            attacks += [
                ("real secret, expired claims",
                 jwtutil.sign(jwtutil.HS256, jwtutil.claims_for(a, u1, now - 600, 60), secret),
                 None, "expired"),
                ("real secret, never-issued jti",
                 jwtutil.sign(jwtutil.HS256, jwtutil.claims_for(a, u1, now, ttl), secret), None,
                 "consumed"),
                ("real secret, u1's jti with sub u2",
                 jwtutil.sign(jwtutil.HS256, dict(p1, sub=u2), secret), None, "consumed"),
            ]
        before_a, before_b = comparable(self.stats(a)), comparable(self.stats(b))
        self.assertEqual((before_a["active"], before_b["active"]), (2, 1))
        for what, tok, user, reason in attacks:
            with self.subTest(what):
                q = c if tok is t4 else a
                if user is not None:
                    r = self.c.consume(q, tok, user=user, via="body")
                else:
                    r = self.c.consume(q, tok)
                self.assertTokenRefused(r, reason, what)
        self.assertEqual(comparable(self.stats(a)), before_a, "attacks changed queue a")
        self.assertEqual(comparable(self.stats(b)), before_b, "attacks changed queue b")
        self.assertEqual(self.stats(c)["consumedTotal"], 0)
        # the real tokens still work, once
        for q, tok, user in ((a, t1, u1), (a, t2, u2), (b, t3, u3)):
            r = self.c.consume(q, tok)
            self.assertEqual(r.status, 200, "real token of %s: %r" % (user, r))
            self.assertEqual(r.json.get("userId"), user)
            self.assertTokenRefused(self.c.consume(q, tok), "consumed")
        self.assertIsNotNone(secret, "could not determine the signing secret (see TokenFormat)")
