"""Invite-only queues (inviteKey) and the way back (?return=, returnOrigins,
tokenInQuery, the pass cookie): docs/API.md, "Version 1.1 additions"."""
import html
import os
import re
import subprocess
import time
import urllib.parse

import jwtutil
from harness import ENV, FAST, HOLD, Waitroomd, WRTest, uid
from helpers import bearer, invite, KEY, page_attr, set_cookies

OTHER_KEY = "other-key-" + "o" * 32


def visitor(cookie_value):
    """The visitor id of a wr_vid cookie value "<vid>.<issued>.<mac>": the
    value itself carries the second it was signed (renewed on every join),
    so two answers for the same visitor may differ in it (K32)."""
    return cookie_value.split(".")[0]


class InviteConfig(WRTest):

    def test_invite_key_is_write_only(self):
        q = self.new_queue(dict(HOLD, inviteKey=KEY))
        self.assertEqual(self.config(q)["inviteKey"], "set")
        r = self.c.get_queue(q)
        self.assertNotIn(KEY, r.body)
        r = self.c.list_queues()
        self.assertNotIn(KEY, r.body)
        r = self.c.patch_queue(q, {"paused": True})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["inviteKey"], "set")
        self.assertNotIn(KEY, r.body)
        # "set" sent back keeps the key; null removes it
        self.assertEqual(self.c.patch_queue(q, {"inviteKey": "set"}).status, 200)
        self.assertEqual(self.c.join(q, "u1", bearer(invite(q, "u1"))).status, 200)
        r = self.c.patch_queue(q, {"inviteKey": None})
        self.assertEqual(r.json["inviteKey"], None)
        self.assertEqual(self.c.join(q, "u2").status, 200)
        q2 = self.new_queue(HOLD)
        self.assertIsNone(self.config(q2)["inviteKey"])
        self.assertEqual(self.config(q2)["returnOrigins"], [])
        self.assertIs(self.config(q2)["tokenInQuery"], False)

    def test_bad_config(self):
        q = uid("cfg")
        for cfg, field in [
            ({"inviteKey": "x" * 31}, "inviteKey"),
            ({"inviteKey": "set"}, "inviteKey"),
            ({"inviteKey": 5}, "inviteKey"),
            ({"returnOrigins": ["https://shop.example/path"]}, "returnOrigins"),
            ({"returnOrigins": ["shop.example"]}, "returnOrigins"),
            ({"returnOrigins": ["ftp://shop.example"]}, "returnOrigins"),
            ({"returnOrigins": ["https://u@shop.example"]}, "returnOrigins"),
            ({"returnOrigins": "https://shop.example"}, "returnOrigins"),
            ({"tokenInQuery": "yes"}, "tokenInQuery"),
        ]:
            r = self.c.put_queue(q, dict(HOLD, **cfg))
            self.assertError(r, 400, "INVALID_CONFIG", repr(cfg))
            self.assertEqual(r.json.get("field"), field, repr(cfg))
        self.assertEqual(self.c.get_queue(q).status, 404)
        # "set" (what GET shows) on a queue with no key says why it fails
        r = self.c.put_queue(q, dict(HOLD, inviteKey="set"))
        self.assertIn("no invite key to keep", r.json.get("message", ""), r)
        q = self.new_queue(dict(HOLD, returnOrigins=["HTTPS://Cart.Example:443", "http://a.example:8080"]))
        self.assertEqual(self.config(q)["returnOrigins"], ["https://cart.example", "http://a.example:8080"])


class InviteHeaderMode(WRTest):
    """Header identity mode: the invite's sub must be the header's user."""

    def test_reasons(self):
        q = self.new_queue(dict(HOLD, inviteKey=KEY))
        other = self.new_queue(dict(HOLD, inviteKey=KEY))
        now = int(time.time())
        self.assertInviteRefused(self.c.join(q, "u1"), "missing")
        self.assertInviteRefused(self.c.join(q, "u1", {"Authorization": "Bearer "}), "missing")
        cases = [
            ("not-a-jwt", "malformed"),
            (jwtutil.unsigned({"alg": "none"}, {"sub": "u1", "aud": q, "exp": now + 60}), "malformed"),
            (jwtutil.sign({"alg": "HS512"}, {"sub": "u1", "aud": q, "exp": now + 60}, KEY.encode()),
             "malformed"),
            (jwtutil.sign(jwtutil.HS256, {"aud": q, "exp": now + 60}, KEY.encode()), "malformed"),
            (jwtutil.sign(jwtutil.HS256, {"sub": "u1", "exp": now + 60}, KEY.encode()), "malformed"),
            (jwtutil.sign(jwtutil.HS256, {"sub": "u1", "aud": q}, KEY.encode()), "malformed"),
            (invite(q, "u1", key=OTHER_KEY), "signature"),
            (invite(q, "u1", ttl=-5), "expired"),
            (invite(other, "u1"), "wrongQueue"),
            (invite(q, "u2"), "wrongUser"),
        ]
        for tok, reason in cases:
            self.assertInviteRefused(self.c.join(q, "u1", bearer(tok)), reason, reason)
        # an error never changes state
        self.assertEqual(self.stats(q)["waiting"], 0)
        self.assertError(self.c.me(q, "u1"), 404, "NOT_IN_QUEUE")
        # the right invite joins; polls need no invite
        self.assertWaiting(self.c.join(q, "u1", bearer(invite(q, "u1"))), 1, 1, eta_null=True)
        self.assertWaiting(self.c.me(q, "u1"), 1, 1, eta_null=True)
        self.assertWaiting(self.c.join(q, "u1", bearer(invite(q, "u1"))), 1, 1, eta_null=True)
        self.assertEqual(self.c.leave(q, "u1").status, 204)
        # an entry token of the queue is not an invite
        fq = self.new_queue(dict(FAST, inviteKey=KEY))
        tok = self.admit_invited(fq, "u3")
        self.assertInviteRefused(self.c.join(fq, "u4", bearer(tok)), "signature")

    def admit_invited(self, q, user):
        r = self.c.join(q, user, bearer(invite(q, user)))
        self.assertEqual(r.status, 200, r)
        return self.wait_admitted(q, user)["token"]

    def test_queue_without_key_ignores_bearer(self):
        q = self.new_queue(HOLD)
        self.assertWaiting(self.c.join(q, "u1", bearer("whatever")), 1, 1, eta_null=True)

    def test_waitroom_invite_tool(self):
        tool = os.path.join(os.path.dirname(ENV.waitroomd), "waitroom-invite")
        if not os.path.exists(tool):
            self.skipTest("no waitroom-invite beside waitroomd")
        q = self.new_queue(dict(HOLD, inviteKey=KEY))
        env = dict(os.environ, WAITROOM_INVITE_KEY=KEY)
        r = subprocess.run([tool, "--queue", q, "--ttl", "600", "alice", "bob"], env=env,
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 2)
        _, claims, _, _ = jwtutil.decode(lines[0])
        self.assertEqual((claims["sub"], claims["aud"]), ("alice", q))
        self.assertTrue(590 <= claims["exp"] - time.time() <= 610)
        self.assertWaiting(self.c.join(q, "alice", bearer(lines[0])), 1, 1, eta_null=True)
        self.assertWaiting(self.c.join(q, "bob", bearer(lines[1])), 2, 2, eta_null=True)
        # stdin, from a key file
        keyfile = os.path.join(ENV.tmpdir, uid("key"))
        with open(keyfile, "w") as f:
            f.write(KEY + "\n")
        nokey = {k: v for k, v in os.environ.items() if k != "WAITROOM_INVITE_KEY"}
        r = subprocess.run([tool, "--queue", q, "--key-file", keyfile], input="carol\ndave\n",
                           env=nokey, capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 2)
        self.assertWaiting(self.c.join(q, "dave", bearer(r.stdout.splitlines()[1])), 3, 3,
                           eta_null=True)
        # output line k is the invite of input line k: a blank line stops the
        # run (skipping it would mail every later person the next one's invite)
        r = subprocess.run([tool, "--queue", q, "--key-file", keyfile], input="erin\n\nfrank\n",
                           env=nokey, capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stdout.splitlines()), 1)
        self.assertEqual(jwtutil.decode(r.stdout.splitlines()[0])[1]["sub"], "erin")
        self.assertIn("line 2 is blank", r.stderr)
        # the key never as a flag; a bad id stops the run
        r = subprocess.run([tool, "--queue", q, "--key", KEY, "x"], capture_output=True, text=True,
                           timeout=10)
        self.assertEqual(r.returncode, 2)
        r = subprocess.run([tool, "--queue", q, "ok", "bad id"], env=env, capture_output=True,
                           text=True, timeout=10)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stdout.splitlines()), 1)


class InviteCookieMode(WRTest):
    """Cookie identity mode: the invite's sub is the place in line."""

    server = "cookie"

    def test_one_place_per_invited_account(self):
        q = self.new_queue(dict(HOLD, inviteKey=KEY))
        r = self.c.join(q, None)
        self.assertInviteRefused(r, "missing")
        self.assertNotIn("wr_vid", set_cookies(r), "a refused join mints no visitor")
        inv = invite(q, "alice")
        r1 = self.c.join(q, None, bearer(inv))
        self.assertWaiting(r1, 1, 1, eta_null=True)
        vid1, attrs = set_cookies(r1)["wr_vid"]
        self.assertIs(attrs.get("httponly"), True)
        import time; time.sleep(1.1)
        # another browser (no cookie, or another visitor's cookie) with the same invite
        r2 = self.c.join(q, None, bearer(inv))
        self.assertWaiting(r2, 1, 1, eta_null=True, what="second browser")
        vid2 = set_cookies(r2)["wr_vid"][0]
        self.assertEqual(visitor(vid2), visitor(vid1), "same invite, same visitor")
        self.assertWaiting(self.c.me(q, None, {"Cookie": "wr_vid=" + vid2}), 1, 1, eta_null=True,
                           what="the second browser's cookie finds the place")
        other = self.c.join(self.new_queue(HOLD), None)
        ov = set_cookies(other)["wr_vid"][0]
        r3 = self.c.join(q, None, bearer(inv, {"Cookie": "wr_vid=" + ov}))
        self.assertWaiting(r3, 1, 1, eta_null=True, what="a browser with another visitor")
        self.assertEqual(visitor(set_cookies(r3)["wr_vid"][0]), visitor(vid1))
        # bob is behind; polls find each by the cookie alone
        rb = self.c.join(q, None, bearer(invite(q, "bob")))
        self.assertWaiting(rb, 2, 2, eta_null=True)
        self.assertWaiting(self.c.me(q, None, {"Cookie": "wr_vid=" + vid1}), 1, 2, eta_null=True)
        vb = set_cookies(rb)["wr_vid"][0]
        self.assertWaiting(self.c.me(q, None, {"Cookie": "wr_vid=" + vb}), 2, 2, eta_null=True)
        # the cookie alone does not join again: joining needs the invite
        r = self.c.join(q, None, {"Cookie": "wr_vid=" + vid1})
        self.assertError(r, 403, "INVITE_REQUIRED")
        self.assertEqual(self.stats(q)["waiting"], 2)

    def test_queue_page_with_invite(self):
        q = self.new_queue(dict(HOLD, inviteKey=KEY))
        inv = invite(q, "carol")
        r = self.c.get("/q/%s?invite=%s" % (q, inv))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(page_attr(r, "data-state"), "waiting")
        vid = set_cookies(r)["wr_vid"][0]
        r2 = self.c.get("/q/%s?invite=%s" % (q, inv))
        self.assertEqual(visitor(set_cookies(r2)["wr_vid"][0]), visitor(vid),
                         "same invite, same visitor")
        self.assertEqual(self.stats(q)["waiting"], 1)
        self.assertWaiting(self.c.join(q, None, bearer(inv)), 1, 1, eta_null=True)
        for path, reason in [("/q/%s" % q, "missing"), ("/q/%s?invite=x.y.z" % q, "malformed"),
                             ("/q/%s?invite=%s" % (q, invite(q, "carol", ttl=-1)), "expired"),
                             ("/q/%s?invite=%s" % (q, invite(q, "carol", key=OTHER_KEY)), "signature")]:
            r = self.c.get(path)
            self.assertEqual(r.status, 403, path)
            self.assertEqual(page_attr(r, "data-state"), "invite", path)
            self.assertEqual(page_attr(r, "data-reason"), reason, path)
            self.assertIn("text/html", r.headers.get("content-type", ""))
        self.assertEqual(self.stats(q)["waiting"], 1)


class ReturnAndPass(WRTest):
    """?return= on the queue page, tokenInQuery, the wr_token_{queue} cookie."""

    server = "cookie"

    def page(self, q, ret=None, headers=None, raw=False):
        path = "/q/" + q
        if ret is not None:
            path += "?return=" + (ret if raw else urllib.parse.quote(ret, safe=""))
        return self.c.get(path, headers)

    def test_return_only_to_allowed_origins(self):
        target = "https://shop.example/checkout"
        q = self.new_queue(dict(HOLD, targetUrl=target, returnOrigins=["https://cart.example"]))
        allowed = ["https://shop.example/item/7?size=m#top", "https://shop.example",
                   "HTTPS://SHOP.EXAMPLE/x", "https://shop.example:443/y", "https://cart.example/c"]
        for ret in allowed:
            self.assertEqual(page_attr(self.page(q, ret), "data-target-url"), ret, ret)
        tricks = ["//evil.com", "///evil.com", "https:evil.com", "https:/evil.com", "\\\\evil.com",
                  "/\\evil.com", "https://shop.example@evil.com", "https://shop.example:x@evil.com/",
                  "https://evil.com\\@shop.example", "javascript:alert(1)", "%2F%2Fevil.com",
                  "https://shop.example.evil.com/", "https://shop.example./", "https://shop.example:8443/",
                  "http://shop.example/", "/\t/evil.com", "/checkout/deep", "data:text/html,x", ""]
        for ret in tricks:
            self.assertEqual(page_attr(self.page(q, ret), "data-target-url"), target, repr(ret))
        # sent without encoding ("?return=//evil.com") as well
        self.assertEqual(page_attr(self.page(q, "//evil.com", raw=True), "data-target-url"), target)
        # an encoded NUL never cuts the URL short (https://shop.example%00.evil.com)
        for ret in ["https://shop.example%00.evil.com/", "/x%00//evil.com"]:
            self.assertEqual(page_attr(self.page(q, ret, raw=True), "data-target-url"), target, ret)
        # a path targetUrl: a path return is on the same origin
        q2 = self.new_queue(dict(HOLD, targetUrl="/checkout/"))
        self.assertEqual(page_attr(self.page(q2, "/checkout/item/7?size=m", raw=True),
                                   "data-target-url"), "/checkout/item/7?size=m")
        for ret in ["//evil.com", "/\\evil.com", "https://shop.example/"]:
            self.assertEqual(page_attr(self.page(q2, ret), "data-target-url"), "/checkout/", ret)

    def admitted_page(self, q, path_suffix="", headers=None):
        """Joins by the page, polls until admitted, then fetches the page again."""
        r = self.c.get("/q/%s%s" % (q, path_suffix), headers)
        self.assertEqual(r.status, 200, r)
        vid = set_cookies(r)["wr_vid"][0]
        h = dict(headers or {}, Cookie="wr_vid=" + vid)
        body = self.wait_admitted(q, None, headers=h)
        r = self.c.get("/q/%s%s" % (q, path_suffix), h)
        self.assertEqual(page_attr(r, "data-state"), "admitted", r)
        return body, r

    def test_pass_cookie_and_token_in_query(self):
        target = "https://shop.example/checkout?from=wr#go"
        q = self.new_queue(dict(FAST, targetUrl=target, tokenInQuery=True))
        body, r = self.admitted_page(q)
        val, attrs = set_cookies(r)["wr_token_" + q]
        self.assertIs(attrs.get("httponly"), True)
        self.assertEqual(str(attrs.get("samesite")).lower(), "lax")
        self.assertEqual(attrs.get("path"), "/")
        self.assertNotIn("secure", attrs)
        self.assertEqual(page_attr(r, "data-token-in-query"), "1")
        refresh = re.search(r'http-equiv="refresh" content="([^"]*)"', r.body).group(1)
        url = html.unescape(refresh).split("url=", 1)[1]
        self.assertTrue(url.startswith("https://shop.example/checkout?from=wr&wr_token="), url)
        self.assertTrue(url.endswith("#go"), url)
        tok = url.split("wr_token=", 1)[1].split("#")[0]
        self.assertEqual(self.c.verify(q, tok).status, 204)
        self.assertEqual(self.c.verify(q, val, via="cookie").status, 204)

    def test_secure_behind_tls_proxy(self):
        w = Waitroomd(ENV.waitroomd, ENV.store_arg, ENV.secret, ENV.tmpdir,
                      extra=["--trusted-proxies", "127.0.0.1"])
        try:
            c = w.client
            q = self.new_queue(FAST, client=c)
            r = c.join(q, None, {"X-Forwarded-Proto": "https"})
            vid = set_cookies(r)["wr_vid"][0]
            h = {"Cookie": "wr_vid=" + vid, "X-Forwarded-Proto": "https"}
            self.wait_admitted(q, None, client=c, headers=h)
            r = c.me(q, None, h)
            self.assertIn("secure", set_cookies(r)["wr_token_" + q][1], r.set_cookies)
            r = c.me(q, None, {"Cookie": "wr_vid=" + vid, "X-Forwarded-Proto": "http"})
            self.assertNotIn("secure", set_cookies(r)["wr_token_" + q][1], r.set_cookies)
        finally:
            w.terminate()
        # not from a trusted proxy: the header is the client's own claim
        q = self.new_queue(FAST)
        r = self.c.join(q, None, {"X-Forwarded-Proto": "https"})
        vid = set_cookies(r)["wr_vid"][0]
        h = {"Cookie": "wr_vid=" + vid, "X-Forwarded-Proto": "https"}
        self.wait_admitted(q, None, headers=h)
        self.assertNotIn("secure", set_cookies(self.c.me(q, None, h))["wr_token_" + q][1])


class InviteIssue22(WRTest):
    """Issue 22: invites honour nbf; in cookie mode the invited account is
    the place in line and the pass's sub (API 1.2 Clarifications)."""

    server = "cookie"

    def test_nbf_in_the_future_is_refused(self):
        """Issue 22: an invite with nbf in the future (RFC 7519 4.1.5) is
        refused with reason notYetValid, on POST entries and on the page,
        and joins nobody; once nbf has passed it works."""
        q = self.new_queue(dict(HOLD, inviteKey=KEY))
        early = invite(q, "erin", nbf=int(time.time()) + 600)
        r = self.c.join(q, None, bearer(early))
        self.assertInviteRefused(r, "notYetValid")
        self.assertNotIn("wr_vid", set_cookies(r))
        r = self.c.get("/q/%s?invite=%s" % (q, early))
        self.assertEqual(r.status, 403)
        self.assertEqual(page_attr(r, "data-state"), "invite")
        self.assertEqual(page_attr(r, "data-reason"), "notYetValid")
        self.assertIn("not valid yet", r.body)
        self.assertEqual(self.stats(q)["waiting"], 0)
        # header mode too (the main server)
        qh = self.new_queue(dict(HOLD, inviteKey=KEY), client=ENV.main.client)
        r = ENV.main.client.join(qh, "erin", bearer(invite(qh, "erin", nbf=int(time.time()) + 600)))
        self.assertInviteRefused(r, "notYetValid")
        # nbf now or before: valid
        r = self.c.join(q, None, bearer(invite(q, "erin", nbf=int(time.time()) - 1)))
        self.assertWaiting(r, 1, 1, eta_null=True)

    def test_cookie_mode_pass_names_the_invited_account(self):
        """Issue 22 / API 1.2 Clarifications: in cookie mode the place in line
        is the invited account, and the entry token's sub (and so consume's
        userId) is the invite's sub, not a visitor id."""
        q = self.new_queue(dict(FAST, inviteKey=KEY))
        sub = "acct:42@shop"
        r = self.c.join(q, None, bearer(invite(q, sub)))
        self.assertEqual(r.status, 200, r)
        vid = set_cookies(r)["wr_vid"][0]
        h = {"Cookie": "wr_vid=" + vid}
        body = self.wait_admitted(q, None, headers=h)
        _, claims, _, _ = jwtutil.decode(body["token"])
        self.assertEqual(claims["sub"], sub, "the pass names the invited account")
        # the place is the account's: the same invite from a fresh browser
        # finds the same admitted place (no second place)
        r2 = self.c.join(q, None, bearer(invite(q, sub)))
        self.assertEqual(r2.status, 200, r2)
        self.assertEqual(r2.json["status"], "admitted", r2)
        self.assertEqual(jwtutil.decode(r2.json["token"])[1]["sub"], sub)
        # consume tells the shop the account, and checks it when given
        r = self.c.consume(q, body["token"], user="someone-else")
        self.assertTokenRefused(r)
        r = self.c.consume(q, body["token"], user=sub)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["userId"], sub)
        # a page join with the invite: the page's pass is the account's too
        q2 = self.new_queue(dict(FAST, inviteKey=KEY))
        r = self.c.get("/q/%s?invite=%s" % (q2, invite(q2, sub)))
        self.assertEqual(r.status, 200, r)
        h = {"Cookie": "wr_vid=" + set_cookies(r)["wr_vid"][0]}
        body = self.wait_admitted(q2, None, headers=h)
        self.assertEqual(jwtutil.decode(body["token"])[1]["sub"], sub)


class InviteConfigReadFails(WRTest):
    """Issue 37 (e0a7394): a join whose config read fails with a store
    error (not an unknown queue) never goes past the invite gate
    unchecked. An instance that holds the queue's config runs the gate on
    it; one that holds none answers the store's error and adds nobody."""

    def test_join_whose_config_read_fails_skips_no_gate(self):
        instance = self.private_redis_instances()
        a = instance()
        q = uid("cfgfail")
        self.assertEqual(a.client.put_queue(q, dict(HOLD, inviteKey=KEY)).status, 200)
        # a holds the config (its join is gated and adds nobody)
        self.assertInviteRefused(a.client.join(q, "eve"), "missing")
        r = instance.redis.client()
        self.addCleanup(r.close)
        # the stored config can no longer be read (the version stays: a
        # keeps what it holds; a new instance must read it)
        r.cmd("HSET", "wr:{%s}:config" % q, "json", "{not json")
        b = instance()
        ans = b.client.join(q, "mallory")
        self.assertError(ans, 503, "STORE_UNAVAILABLE")
        self.assertInviteRefused(a.client.join(q, "mallory"), "missing")
        # nobody got a place, through either instance
        self.assertIsNone(r.cmd("ZSCORE", "wr:{%s}:waiting" % q, "mallory"))
        self.assertIsNone(r.cmd("ZSCORE", "wr:{%s}:waiting" % q, "eve"))
        self.assertEqual(r.cmd("ZCARD", "wr:{%s}:waiting" % q), 0)
