"""Bypass rules (docs/API.md 1.3, "Bypass rules", "Bypass, safely").

Queue config `bypass`: rules by header + secret (write-only: GET shows
"set"), cidr or path. The gate (GET tokens/verify) answers 204 with
X-Waitroom-Bypass for a matching request; a join matching a header or cidr
rule answers 200 passthrough with a pass that takes no place, active slot
or stock and that consume accepts once. Every bypass is counted in
waitroom_bypass_total{queue,rule} and stats bypassTotal (every instance's).
The client address and X-Original-URI count only from trusted proxies; a
path with dot segments, "//", encoded separators or dots, or a backslash
never matches.
"""
import jwtutil
from harness import HOLD, WRTest, uid
from helpers import metric, metrics, private_server

SECRET = "staff-secret-0123456789abcdef-0123456789"  # 40 bytes
RULES = [
    {"name": "staff", "header": "X-Staff-Key", "secret": SECRET},
    {"name": "office", "cidr": "203.0.113.0/24"},
    {"name": "office6", "cidr": "2001:db8::/32"},
    {"name": "health", "path": "/healthz"},
    {"name": "static", "path": "/static/*"},
]
UNCHANGED = ("waiting", "active", "admittedTotal", "consumedTotal", "prequeue", "stockLeft")


def hold(**kw):
    """A paused queue (nobody admitted) with a stock and the rules."""
    cfg = dict(HOLD, stock=5, bypass=RULES)
    cfg.update(kw)
    return cfg


class BypassTest(WRTest):

    def proxy_queue(self, **kw):
        """A queue hold(**kw) on a header-mode waitroomd of its own that
        trusts 127.0.0.1 as a proxy (killed after the test): that server's
        client, the queue and its stats before any request."""
        w = private_server(self, identity="header:X-User-Id",
                           extra=["--trusted-proxies", "127.0.0.1/32"])
        q = self.new_queue(hold(**kw), client=w.client)
        return w.client, q, self.stats(q, client=w.client)

    def assertUnchanged(self, st, st0):
        """Bypasses take no place, slot, admission or stock."""
        for k in UNCHANGED:
            self.assertEqual(st[k], st0[k], k)

    def gate(self, client, q, headers):
        return client.request("GET", "/v1/queues/%s/tokens/verify" % q, headers)

    def assertBypassed(self, r, name, what=""):
        self.assertEqual(r.status, 204, "%s: %r" % (what, r))
        self.assertEqual(r.headers.get("x-waitroom-bypass"), name, "%s: %r" % (what, r))

    def assertGateRefused(self, r, what=""):
        # no token and no rule: 401, never a bypass
        self.assertEqual(r.status, 401, "%s: %r" % (what, r))
        self.assertNotIn("x-waitroom-bypass", r.headers, what)

    def bypass_count(self, client, q, rule):
        return metric(client, "waitroom_bypass_total", 'queue="%s",rule="%s"' % (q, rule))


class Config(BypassTest):

    def test_rules_in_get_with_the_secret_write_only(self):
        q = self.new_queue(hold())
        got = self.config(q)["bypass"]
        want = [dict(r) for r in RULES]
        want[0]["secret"] = "set"
        self.assertEqual(got, want)
        self.assertNotIn(SECRET, self.c.get_queue(q).body)
        # the default is null, and null removes every rule
        self.assertIsNone(self.config(self.new_queue(HOLD))["bypass"])
        # what GET shows, sent back, keeps the secret
        self.assertEqual(self.c.patch_queue(q, {"bypass": got}).status, 200)
        r = self.gate(self.c, q, {"X-Staff-Key": SECRET})
        self.assertBypassed(r, "staff", "the kept secret")
        self.assertEqual(self.c.patch_queue(q, {"bypass": None}).status, 200)
        self.assertIsNone(self.config(q)["bypass"])
        self.assertGateRefused(self.gate(self.c, q, {"X-Staff-Key": SECRET}), "rules removed")

    def test_invalid_rules_are_400_naming_bypass(self):
        q = self.new_queue(hold())
        before = self.config(q)
        bad = [
            True, {"name": "x"}, [1], [{"name": "x"}],
            [{"name": "Bad", "path": "/x"}], [{"name": "", "path": "/x"}],
            [{"name": "a" * 33, "path": "/x"}], [{"path": "/x"}],
            [{"name": "x", "path": "/x", "cidr": "10.0.0.0/8"}],
            [{"name": "x", "header": "X-A", "secret": SECRET, "path": "/x"}],
            [{"name": "x", "header": "X-A"}], [{"name": "x", "secret": SECRET}],
            [{"name": "x", "header": "X-A", "secret": "s" * 31}],
            [{"name": "x", "header": "X-A", "secret": 5}],
            [{"name": "x", "header": "X A", "secret": SECRET}],
            [{"name": "x", "header": "X-A", "secret": "set"}],  # no such rule to keep
            [{"name": "x", "cidr": "10.0.0.0/33"}], [{"name": "x", "cidr": "10.0.0/8"}],
            [{"name": "x", "cidr": "::/129"}], [{"name": "x", "cidr": "shop.example"}],
            [{"name": "x", "path": "x"}], [{"name": "x", "path": "/a/../b"}],
            [{"name": "x", "path": "/a//b"}], [{"name": "x", "path": "/a%2Fb"}],
            [{"name": "x", "path": "/a*"}], [{"name": "x", "path": "/a\\b"}],
            [{"name": "x", "path": "/x", "other": 1}],
            [{"name": "x", "path": "/x"}, {"name": "x", "path": "/y"}],
            [{"name": "r%d" % i, "path": "/x"} for i in range(33)],
        ]
        for value in bad:
            with self.subTest(value=str(value)[:60]):
                r = self.c.patch_queue(q, {"bypass": value})
                self.assertError(r, 400, "INVALID_CONFIG", repr(value))
                self.assertEqual(r.json.get("field"), "bypass", repr(r))
                r = self.c.put_queue(uid("q"), dict(HOLD, bypass=value))
                self.assertError(r, 400, "INVALID_CONFIG", "PUT %r" % (value,))
                self.assertEqual(r.json.get("field"), "bypass", repr(r))
        self.assertEqual(self.config(q), before, "a refused PATCH changes nothing")
        # 32 rules are fine
        ok = [{"name": "r%d" % i, "path": "/x%d" % i} for i in range(32)]
        self.assertEqual(self.c.patch_queue(q, {"bypass": ok}).status, 200)


class Gate(BypassTest):

    def test_each_rule_at_the_gate(self):
        c, q, st0 = self.proxy_queue()
        cases = [
            ("staff", {"X-Staff-Key": SECRET}),
            ("staff", {"x-staff-key": SECRET}),
            ("office", {"X-Forwarded-For": "203.0.113.9"}),
            ("office", {"X-Forwarded-For": "198.51.100.1, 203.0.113.9"}),
            ("office6", {"X-Forwarded-For": "2001:db8:5::1"}),
            ("health", {"X-Original-URI": "/healthz"}),
            ("health", {"X-Original-URI": "/healthz?check=1"}),
            ("static", {"X-Original-URI": "/static/"}),
            ("static", {"X-Original-URI": "/static/app.js?v=3"}),
        ]
        for name, headers in cases:
            with self.subTest(headers=headers):
                self.assertBypassed(self.gate(c, q, headers), name, repr(headers))
        st = self.stats(q, client=c)
        self.assertEqual(st["bypassTotal"], st0["bypassTotal"] + len(cases))
        self.assertUnchanged(st, st0)
        self.assertEqual(self.bypass_count(c, q, "staff"), 2)
        self.assertEqual(self.bypass_count(c, q, "office"), 2)
        self.assertEqual(self.bypass_count(c, q, "office6"), 1)
        self.assertEqual(self.bypass_count(c, q, "health"), 2)
        self.assertEqual(self.bypass_count(c, q, "static"), 2)
        # the store-wide count in /metrics too, from the next admission tick
        self.poll_until(lambda: metric(c, "waitroom_queue_bypass_total", 'queue="%s"' % q),
                        lambda v: v == st["bypassTotal"], timeout=5,
                        what="waitroom_queue_bypass_total")

    def test_what_never_matches(self):
        c, q, st0 = self.proxy_queue()
        never = [
            # the secret, exactly
            {"X-Staff-Key": SECRET[:-1]}, {"X-Staff-Key": SECRET + "0"},
            {"X-Staff-Key": SECRET.upper()}, {"X-Staff-Key": ""}, {"X-Staff-Key": "set"},
            {"X-Other-Key": SECRET},
            # the client: the rightmost entry that is not a trusted proxy
            {"X-Forwarded-For": "203.0.113.9, 198.51.100.1"},
            {"X-Forwarded-For": "198.51.100.1"},
            # paths: exact, prefix, case, and the traversal forms
            {"X-Original-URI": "/healthz/"}, {"X-Original-URI": "/healthzz"},
            {"X-Original-URI": "/HEALTHZ"}, {"X-Original-URI": "/static"},
            {"X-Original-URI": "/Static/app.js"}, {"X-Original-URI": "/static/../admin"},
            {"X-Original-URI": "/static/./app.js"}, {"X-Original-URI": "/static//app.js"},
            {"X-Original-URI": "//static/app.js"}, {"X-Original-URI": "/static/%2e%2e/admin"},
            {"X-Original-URI": "/static/%2E%2E/admin"}, {"X-Original-URI": "/static/a%2Fb"},
            {"X-Original-URI": "/static/a%2fb"}, {"X-Original-URI": "/static/a%5Cb"},
            {"X-Original-URI": "/static/a%00.js"}, {"X-Original-URI": "/static/a\\b"},
            {"X-Original-URI": "/static/.."}, {"X-Original-URI": "/healthz/.."},
            {"X-Original-URI": "/x/../healthz"}, {"X-Original-URI": "http://shop/healthz"},
            {"X-Original-URI": "/admin?/static/x"},
        ]
        for headers in never:
            with self.subTest(headers=headers):
                self.assertGateRefused(self.gate(c, q, headers), repr(headers))
        self.assertEqual(self.stats(q, client=c)["bypassTotal"], st0["bypassTotal"])

    def test_forwarded_fields_from_an_untrusted_peer_are_ignored(self):
        # the suite's server trusts no proxy: X-Forwarded-For and
        # X-Original-URI are the client's own words
        q = self.new_queue(hold())
        for headers in ({"X-Forwarded-For": "203.0.113.9"},
                        {"X-Forwarded-For": "2001:db8::1"},
                        {"X-Original-URI": "/healthz"},
                        {"X-Original-URI": "/static/app.js"}):
            with self.subTest(headers=headers):
                self.assertGateRefused(self.gate(self.c, q, headers), repr(headers))
        r = self.c.join(q, uid(), {"X-Forwarded-For": "203.0.113.9"})
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(r.json.get("status"), "waiting", repr(r))
        self.assertEqual(self.stats(q)["bypassTotal"], 0)
        # the peer itself is what a cidr rule sees
        self.assertEqual(self.c.patch_queue(q, {"bypass": [{"name": "local",
                                                             "cidr": "127.0.0.1"}]}).status, 200)
        self.assertBypassed(self.gate(self.c, q, {"X-Forwarded-For": "198.51.100.1"}), "local")

    def test_rules_come_right_after_enabled(self):
        q = self.new_queue(hold(closed=True))
        # a bypass wins over a token check: a bad token does not matter
        r = self.gate(self.c, q, {"X-Staff-Key": SECRET, "Authorization": "Bearer x.y.z"})
        self.assertBypassed(r, "staff")
        # a queue that is off answers passthrough, rules or not
        self.assertEqual(self.c.patch_queue(q, {"enabled": False}).status, 200)
        r = self.gate(self.c, q, {"X-Staff-Key": SECRET})
        self.assertEqual(r.status, 204, repr(r))
        self.assertNotIn("x-waitroom-bypass", r.headers)
        r = self.c.join(q, uid(), {"X-Staff-Key": SECRET})
        self.assertEqual(r.json, {"status": "passthrough"}, repr(r))


class Join(BypassTest):

    def test_join_passthrough_with_a_pass_consumed_once(self):
        c, q, st0 = self.proxy_queue(maxQueueSize=1)
        for name, headers in (("staff", {"X-Staff-Key": SECRET}),
                              ("office", {"X-Forwarded-For": "203.0.113.77"})):
            with self.subTest(rule=name):
                user = uid()
                r = c.join(q, user, headers)
                self.assertEqual(r.status, 200, repr(r))
                self.assertJsonHeaders(r)
                self.assertEqual(set(r.json), {"status", "bypass", "token"}, repr(r))
                self.assertEqual(r.json["status"], "passthrough")
                self.assertEqual(r.json["bypass"], name)
                self.assertEqual(r.headers.get("x-waitroom-bypass"), name)
                tok = r.json["token"]
                _, claims, _, _ = jwtutil.decode(tok)
                self.assertEqual(claims.get("byp"), name)
                self.assertEqual(claims.get("aud"), q)
                self.assertEqual(claims.get("sub"), user)
                # no place: the person is not in line
                self.assertEqual(c.me(q, user).status, 404)
                # the gate accepts the pass until it is spent
                self.assertEqual(c.verify(q, tok).status, 204)
                r = c.consume(q, tok, user)
                self.assertEqual(r.status, 200, repr(r))
                self.assertIs(r.json.get("valid"), True)
                self.assertEqual(r.json.get("userId"), user)
                self.assertTokenRefused(c.consume(q, tok), "consumed", "second consume")
                self.assertTokenRefused(c.verify(q, tok), "consumed", "verify after consume")
        st = self.stats(q, client=c)
        self.assertUnchanged(st, st0)
        self.assertEqual(st["bypassTotal"], st0["bypassTotal"] + 2)
        self.assertEqual(self.bypass_count(c, q, "staff"), 1)
        self.assertEqual(self.bypass_count(c, q, "office"), 1)
        # no identity check comes before the rules: without the identity
        # header the pass is the rule's own
        r = c.join(q, None, {"X-Staff-Key": SECRET})
        self.assertEqual(r.json.get("status"), "passthrough", repr(r))
        self.assertEqual(jwtutil.decode(r.json["token"])[1].get("sub"), "bypass:staff")
        self.assertEqual(c.consume(q, r.json["token"]).status, 200)
        # a path rule does not let a join past the line
        r = c.join(q, uid(), {"X-Original-URI": "/healthz"})
        self.assertEqual(r.json.get("status"), "waiting", repr(r))
        # the line is full now (maxQueueSize 1), a bypass still passes
        self.assertEqual(c.join(q, uid()).status, 429)
        r = c.join(q, uid(), {"X-Staff-Key": SECRET})
        self.assertEqual(r.json.get("status"), "passthrough", repr(r))

    def test_join_bypass_before_every_other_check(self):
        for extra in ({"closed": True}, {"stock": 0}, {"challengeBits": 20},
                      {"inviteKey": "k" * 32}, {"opensAt": 4102444800000}):
            with self.subTest(extra=extra):
                q = self.new_queue(hold(**extra))
                r = self.c.join(q, uid(), {"X-Staff-Key": SECRET})
                self.assertEqual(r.status, 200, repr(r))
                self.assertEqual(r.json.get("bypass"), "staff", repr(r))
                self.assertGateRefused(self.gate(self.c, q, {"X-Staff-Key": "nope"}))


class Instances(BypassTest):

    def test_counts_add_up_across_instances(self):
        self.redis_only()
        a, b = self.two_instances()
        q = self.new_queue(hold(), client=a.client)
        for _ in range(2):
            self.assertBypassed(self.gate(a.client, q, {"X-Staff-Key": SECRET}), "staff")
        r = b.client.join(q, uid(), {"X-Staff-Key": SECRET})
        self.assertEqual(r.json.get("status"), "passthrough", repr(r))
        # every instance's bypasses in the stats, each instance's own in /metrics
        self.assertEqual(self.stats(q, client=a.client)["bypassTotal"], 3)
        self.assertEqual(self.stats(q, client=b.client)["bypassTotal"], 3)
        self.assertEqual(self.bypass_count(a.client, q, "staff"), 2)
        self.assertEqual(self.bypass_count(b.client, q, "staff"), 1)
        # the pass b handed out is spent once, on any instance
        tok = r.json["token"]
        self.assertEqual(a.client.consume(q, tok).status, 200)
        self.assertTokenRefused(b.client.consume(q, tok), "consumed")

    def test_a_rule_does_not_depend_on_the_store(self):
        # the store down: the gate and the join still bypass (the count is a
        # store error), and the pass is spent once on this instance
        new_instance = self.private_redis_instances()
        w = new_instance()
        q = self.new_queue(hold(failPolicy="closed"), client=w.client)
        self.assertBypassed(self.gate(w.client, q, {"X-Staff-Key": SECRET}), "staff")
        new_instance.redis.stop()
        self.poll_until(lambda: w.client.get("/readyz").status, lambda s: s == 503, timeout=5,
                        what="/readyz 503 with Redis down")
        self.assertBypassed(self.gate(w.client, q, {"X-Staff-Key": SECRET}), "staff",
                            "store down")
        r = w.client.join(q, uid(), {"X-Staff-Key": SECRET})
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(r.json.get("bypass"), "staff", repr(r))
        self.assertEqual(self.bypass_count(w.client, q, "staff"), 3)
        errors = sum(v for (name, labels), v in metrics(w).items()
                     if name == "waitroom_store_errors_total" and 'op="bypass"' in labels)
        self.assertGreaterEqual(errors, 2, "the two counts the store did not take")
