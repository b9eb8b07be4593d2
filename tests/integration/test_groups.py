"""Priority groups and presale codes (API 1.3, issue 41: "Priority groups
and presale codes", "Groups, precisely", "Codes and report, precisely").

Both stores serve groups (the embedded store, and Redis: one server,
Sentinel or Cluster); this module runs on each. What every queue answers:
the config's rules, the codes routes of a queue without groups, a join
with a code no store keeps (403 CODE_INVALID unknown, nothing changed),
someone with a place answered normally whatever code they send, the
invite's grp checked against the config, Referrer-Policy on the page, and
the logs that never carry a code or an invite.

With groups: codes issued, listed, revoked; each refusal's reason
(unknown, usedUp, revoked, expired, another queue's code); a K-use code
under a race; the same person again spends nothing; an invite's grp joins
that group and wins over a code; answers carry group, positions count the
person's own line and never go up while priority people join, ETA per
line; admission gives the groups first in order but the standard line at
least standardShare of every run of ticks while it has people (counted in
admissions, sampled in real time); maxActive counts everyone; a group with
people or live codes cannot be removed; stats, metrics and the report."""
import os
import re
import tempfile
import time

import jwtutil
from harness import ADMIN, ENV, FAST, HOLD, Client, WRTest, now_ms, uid
from helpers import (BITS, KEY, PrivateServer, bearer, invite, json_lines, memory_server, metric,
                     page_attr, race, solve)

GROUPS = [{"name": "fanclub"}, {"name": "vip"}]
CODE_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}$")
NOT_ISSUED = "7K2QD-M9XWA-0RT4E-HZ3PB"


class GroupsTest(WRTest):
    """Helpers (no tests)."""

    def group_queue(self, **extra):
        return self.new_queue(dict(HOLD, groups=GROUPS, **extra))

    def codes_path(self, q, code=None):
        return "/v1/admin/queues/%s/codes%s" % (q, "" if code is None else "/" + code)

    def create(self, q, group="fanclub", count=1, uses=1, client=None, **extra):
        body = dict({"group": group, "count": count, "uses": uses}, **extra)
        r = (client or self.c).request("POST", self.codes_path(q), ADMIN, body)
        self.assertEqual(r.status, 201, r)
        self.assertJsonHeaders(r)
        self.assertEqual(list(r.json), ["codes"])
        return r.json["codes"]

    def counts(self, q, client=None):
        r = (client or self.c).request("GET", self.codes_path(q), ADMIN)
        self.assertEqual(r.status, 200, r)
        return r.json["groups"]

    def revoke(self, q, code):
        return self.c.request("DELETE", self.codes_path(q, code), ADMIN)

    def join_code(self, q, user, code, headers=None, client=None):
        h = self.c.uh(user, headers)
        return (client or self.c).request("POST", "/v1/queues/%s/entries" % q, h, {"code": code})

    def assertCodeRefused(self, r, reason, what=""):
        self.assertError(r, 403, "CODE_INVALID", what)
        self.assertEqual(r.json.get("reason"), reason, "%s: %r" % (what, r))

    def member(self, r, group, position, what=""):
        """A waiting answer in group (None: the standard line) at position."""
        b = self.assertWaiting(r, position, what=what)
        self.assertEqual(b.get("group"), group, "%s: %r" % (what, r))
        if group is None:
            self.assertNotIn("group", b, what)
        return b


class GroupsConfig(GroupsTest):

    def test_defaults(self):
        q = self.new_queue(HOLD)
        cfg = self.config(q)
        self.assertIsNone(cfg["groups"])
        self.assertEqual(cfg["standardShare"], 0.2)

    def test_stats_per_line(self):
        """Stats gain groups: with no groups the standard line is the whole
        line (its waiting, its admissions)."""
        q = self.new_queue(HOLD)
        self.assertEqual(self.stats(q)["groups"], {"standard": {"waiting": 0, "admittedTotal": 0}})
        self.assertEqual(self.c.join(q, "s1").status, 200)
        self.assertEqual(self.c.join(q, "s2").status, 200)
        self.assertEqual(self.stats(q)["groups"], {"standard": {"waiting": 2, "admittedTotal": 0}})
        fq = self.new_queue(FAST)
        self.assertEqual(self.c.join(fq, "f1").status, 200)
        self.wait_admitted(fq, "f1")
        st = self.stats(fq)
        self.assertEqual(st["groups"], {"standard": {"waiting": 0, "admittedTotal": 1}})
        self.assertEqual(st["groups"]["standard"]["admittedTotal"], st["admittedTotal"])

    def test_standard_share_rules(self):
        q = self.new_queue(HOLD)
        for share in (0, 0.35, 1):
            with self.subTest(share=share):
                r = self.c.patch_queue(q, {"standardShare": share})
                self.assertEqual(r.status, 200, r)
                self.assertEqual(self.config(q)["standardShare"], share)
        for bad in (-0.01, 1.5, "0.2", None, True):
            with self.subTest(bad=bad):
                r = self.c.patch_queue(q, {"standardShare": bad})
                self.assertError(r, 400, "INVALID_CONFIG")
                self.assertEqual(r.json["field"], "standardShare")
        self.assertEqual(self.config(q)["standardShare"], 1)  # nothing changed
        r = self.c.put_queue(q, dict(HOLD, standardShare=0.5))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.config(q)["standardShare"], 0.5)

    def test_group_rules_name_the_element(self):
        q = self.new_queue(HOLD)
        nine = [{"name": "g%d" % i} for i in range(9)]
        bad = [([], "groups"), ({}, "groups"), ("fanclub", "groups"), (["fanclub"], "groups"),
               (nine, "groups"),
               ([{"name": "standard"}], "groups[0].name"),
               ([{"name": "a"}, {"name": "Fan"}], "groups[1].name"),
               ([{"name": ""}], "groups[0].name"),
               ([{"name": "a" * 33}], "groups[0].name"),
               ([{"name": "fan club"}], "groups[0].name"),
               ([{"name": 5}], "groups[0].name"),
               ([{}], "groups[0].name"),
               ([{"name": "a"}, {"name": "b"}, {"name": "a"}], "groups[2].name"),
               ([{"name": "a", "share": 0.5}], "groups[0].share")]
        for groups, field in bad:
            with self.subTest(groups=str(groups)[:40]):
                r = self.c.patch_queue(q, {"groups": groups})
                self.assertError(r, 400, "INVALID_CONFIG")
                self.assertEqual(r.json["field"], field)
        self.assertIsNone(self.config(q)["groups"])

    def test_groups_by_store(self):
        """Every store serves groups (PUT and PATCH, 1 to 8, in order,
        reordered and removed while nobody is in them)."""
        q = self.new_queue(HOLD)
        valid = [{"name": "fanclub"}, {"name": "vip-2"}, {"name": "a" * 32}]
        r = self.c.patch_queue(q, {"groups": valid})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["groups"], valid)
        self.assertEqual(self.config(q)["groups"], valid)
        eight = [{"name": "g%d" % i} for i in range(8)]
        self.assertEqual(self.c.put_queue(q, dict(HOLD, groups=eight)).status, 200)
        self.assertEqual(self.config(q)["groups"], eight)
        self.assertEqual(self.c.put_queue(q, dict(HOLD, groups=eight[::-1])).status, 200)
        self.assertEqual(self.config(q)["groups"], eight[::-1])
        self.assertEqual(self.c.patch_queue(q, {"groups": None}).status, 200)
        self.assertIsNone(self.config(q)["groups"])


class CodesAdmin(GroupsTest):

    def test_create_list_revoke(self):
        q = self.group_queue()
        self.assertEqual(self.counts(q), {"fanclub": {"issued": 0, "usesSpent": 0, "revoked": 0},
                                          "vip": {"issued": 0, "usesSpent": 0, "revoked": 0}})
        codes = self.create(q, "fanclub", count=3, uses=2)
        self.assertEqual(len(set(codes)), 3)
        for code in codes:
            self.assertRegex(code, CODE_RE)
        vip = self.create(q, "vip", count=2, uses=1, expiresAt=int(time.time() * 1000) + 3600000)
        self.assertEqual(self.member(self.join_code(q, "f1", codes[0]), "fanclub", 1)["waiting"], 1)
        self.assertEqual(self.counts(q), {"fanclub": {"issued": 3, "usesSpent": 1, "revoked": 0},
                                          "vip": {"issued": 2, "usesSpent": 0, "revoked": 0}})
        # revoke, in any spelling of the code; a second revoke is fine too
        r = self.revoke(q, codes[1].lower())
        self.assertEqual((r.status, r.body), (204, ""), r)
        self.assertEqual(self.revoke(q, codes[1]).status, 204)
        self.assertEqual(self.revoke(q, codes[0]).status, 204)  # one with a use spent
        self.assertEqual(self.counts(q)["fanclub"], {"issued": 3, "usesSpent": 1, "revoked": 2})
        self.assertCodeRefused(self.join_code(q, "f2", codes[1]), "revoked")
        self.assertCodeRefused(self.join_code(q, "f2", codes[0]), "revoked")
        self.member(self.join_code(q, "v1", vip[0]), "vip", 1)
        # the one already in line keeps their place
        self.member(self.c.me(q, "f1"), "fanclub", 1)
        # codes that are none of this queue's
        other = self.group_queue()
        elsewhere = self.create(other, "fanclub")[0]
        for code in (NOT_ISSUED, elsewhere, "NOPE", "a%20b", "%2F", "A%2DB"):
            with self.subTest(code=code):
                self.assertError(self.revoke(q, code), 404, "CODE_NOT_FOUND")
        self.assertEqual(self.counts(other)["fanclub"]["revoked"], 0)

    def test_bad_requests(self):
        """Every store: the body is checked before the store is asked."""
        groups = GROUPS
        q = self.new_queue(dict(HOLD, groups=groups))
        good = {"group": "fanclub", "count": 1, "uses": 1}
        bad = [(dict(good, group="nope"), "group"), (dict(good, group="standard"), "group"),
               (dict(good, group="Fan"), "group"), (dict(good, group=5), "group"),
               ({"count": 1, "uses": 1}, "group"),
               (dict(good, count=0), "count"), (dict(good, count=100001), "count"),
               (dict(good, count=1.5), "count"), (dict(good, count="1"), "count"),
               ({"group": "fanclub", "uses": 1}, "count"),
               (dict(good, uses=0), "uses"), (dict(good, uses=1000001), "uses"),
               ({"group": "fanclub", "count": 1}, "uses"),
               (dict(good, expiresAt=1000), "expiresAt"),
               (dict(good, expiresAt=int(time.time() * 1000) - 1000), "expiresAt"),
               (dict(good, expiresAt="soon"), "expiresAt"),
               (dict(good, colour="red"), "colour")]
        for body, field in bad:
            with self.subTest(body=body):
                r = self.c.request("POST", self.codes_path(q), ADMIN, body)
                self.assertError(r, 400, "BAD_REQUEST")
                self.assertEqual(r.json.get("field"), field, r)
        for raw in ("", "[1]", "{", "null"):
            with self.subTest(raw=raw):
                r = self.c.request("POST", self.codes_path(q), dict(ADMIN), raw.encode())
                self.assertError(r, 400, "BAD_REQUEST")
        # a number no JSON library here holds still names its field
        for raw, field in (('{"group":"fanclub","count":18446744073709551616,"uses":1}', "count"),
                           ('{"group":"fanclub","count":1,"uses":1e999}', "uses"),
                           ('{"group":"fanclub","count":1,"uses":1,"expiresAt":-1e400}',
                            "expiresAt"),
                           ('{"group":"fanclub","count":1,"uses":1,"x":99999999999999999999}',
                            "x")):
            with self.subTest(raw=raw):
                r = self.c.request("POST", self.codes_path(q), dict(ADMIN), raw.encode())
                self.assertError(r, 400, "BAD_REQUEST")
                self.assertEqual(r.json.get("field"), field, r)
        if groups:
            self.assertEqual(self.counts(q)["fanclub"]["issued"], 0)
            # null expiresAt: never expires
            self.assertEqual(len(self.create(q, expiresAt=None)), 1)
        # the admin key, and an unknown queue, for each route
        for method, path, body in (("POST", self.codes_path(q), good),
                                   ("GET", self.codes_path(q), None),
                                   ("DELETE", self.codes_path(q, NOT_ISSUED), None)):
            with self.subTest(method=method):
                self.assertError(self.c.request(method, path, {}, body), 401, "UNAUTHORIZED")
                path = path.replace(q, q + "-gone")
                self.assertError(self.c.request(method, path, ADMIN, body), 404,
                                 "QUEUE_NOT_FOUND")

    def test_queue_without_groups(self):
        """Every store: a queue without groups has no codes (GET: no group;
        POST: no such group; DELETE: no such code)."""
        q = self.new_queue(HOLD)
        self.assertEqual(self.counts(q), {})
        r = self.c.request("POST", self.codes_path(q), ADMIN,
                           {"group": "fanclub", "count": 1, "uses": 1})
        self.assertError(r, 400, "BAD_REQUEST")
        self.assertEqual(r.json["field"], "group")
        self.assertError(self.revoke(q, NOT_ISSUED), 404, "CODE_NOT_FOUND")
        self.assertError(self.revoke(q, "x%20y"), 404, "CODE_NOT_FOUND")
        for method in ("GET", "DELETE"):
            path = self.codes_path(q + "-gone", None if method == "GET" else NOT_ISSUED)
            self.assertError(self.c.request(method, path, ADMIN), 404, "QUEUE_NOT_FOUND")

    def test_a_hundred_thousand_codes(self):
        q = self.group_queue()
        # One answer of 2.6 MB made in one call: 0.2 s in a release build,
        # 0.6 s under ASan on an idle machine, but a loaded 2-core CI
        # machine stretched it past the default 15 s: this call may wait
        # longer (the bound is on the server, not on the client's patience).
        slow = Client(self.c.port, timeout=120)
        codes = self.create(q, "vip", count=100000, uses=1000000, client=slow)
        self.assertEqual(len(codes), 100000)
        self.assertEqual(len(set(codes)), 100000)
        self.assertTrue(all(CODE_RE.match(c) for c in codes[:1000]))
        self.assertEqual(self.counts(q)["vip"], {"issued": 100000, "usesSpent": 0, "revoked": 0})
        self.member(self.join_code(q, "v1", codes[99999]), "vip", 1)


class CodeJoins(GroupsTest):

    def test_unknown_code_changes_nothing(self):
        """Every store: no code of a queue without groups is valid."""
        q = self.new_queue(HOLD)
        for code in (NOT_ISSUED, "fanclub", "", "A" * 33, "a b", "\u00e9"):
            with self.subTest(code=code):
                self.assertCodeRefused(self.join_code(q, "u1", code), "unknown")
        st = self.stats(q)
        self.assertEqual((st["waiting"], st.get("rejectedFullTotal", 0)), (0, 0))
        self.assertError(self.c.me(q, "u1"), 404, "NOT_IN_QUEUE")
        # not a string: the body is not what the route expects
        for code in (5, ["x"], {"c": 1}, True):
            with self.subTest(code=code):
                r = self.join_code(q, "u1", code)
                self.assertError(r, 400, "BAD_REQUEST")
                self.assertEqual(r.json.get("field"), "code")
        self.assertEqual(self.stats(q)["waiting"], 0)
        # null or no code: an ordinary join
        self.assertWaiting(self.join_code(q, "u1", None), 1, 1, eta_null=True)
        self.assertWaiting(self.c.join(q, "u2"), 2, 2, eta_null=True)

    def test_a_refused_code_spends_no_challenge(self):
        """Every store; with groups, the store's verdict comes before the
        challenge is spent, and the same solution then buys the place."""
        groups = GROUPS
        q = self.new_queue(dict(HOLD, challengeBits=BITS, groups=groups))
        r = self.c.get("/v1/queues/%s/challenge" % q, self.c.uh("c1"))
        self.assertEqual(r.status, 200, r)
        ch = r.json["challenge"]
        body = {"challenge": ch, "nonce": solve(ch, BITS)}
        path = "/v1/queues/%s/entries" % q
        r = self.c.request("POST", path, self.c.uh("c1"), dict(body, code="NOPE"))
        self.assertCodeRefused(r, "unknown")
        self.assertEqual(self.stats(q)["waiting"], 0)
        if groups:
            used = self.create(q, "fanclub")[0]
            self.assertEqual(self.join_code(q, "first", used).status, 403)  # needs a challenge
            self.assertEqual(self.counts(q)["fanclub"]["usesSpent"], 0)
            good = self.create(q, "vip")[0]
            r = self.c.request("POST", path, self.c.uh("c1"), dict(body, code=good))
            self.member(r, "vip", 1)
            self.assertEqual(self.counts(q)["vip"]["usesSpent"], 1)
            return
        r = self.c.request("POST", path, self.c.uh("c1"), body)
        self.assertWaiting(r, 1, 1, eta_null=True)

    def test_a_place_is_answered_whatever_the_code(self):
        """Every store: someone in line, or holding a pass, gets their
        answer whatever code they send."""
        q = self.new_queue(HOLD)
        self.assertWaiting(self.c.join(q, "u1"), 1, 1, eta_null=True)
        self.assertWaiting(self.c.join(q, "u2"), 2, 2, eta_null=True)
        r = self.join_code(q, "u2", NOT_ISSUED)
        self.assertWaiting(r, 2, 2, eta_null=True)
        self.assertNotIn("group", r.json)
        self.assertEqual(self.stats(q)["waiting"], 2)
        # holding a pass: the pass again
        fq = self.new_queue(FAST)
        self.assertEqual(self.c.join(fq, "p1").status, 200)
        tok = self.wait_admitted(fq, "p1")["token"]
        r = self.join_code(fq, "p1", "NOPE")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["status"], "admitted")
        self.assertEqual(r.json["token"], tok)
        # a disabled queue: passthrough, as any join
        dq = self.new_queue(dict(HOLD, enabled=False))
        r = self.join_code(dq, "d1", "NOPE")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["status"], "passthrough")

    def test_each_reason_changes_nothing(self):
        q = self.group_queue()
        once = self.create(q, "fanclub", uses=1)[0]
        self.member(self.join_code(q, "f1", once), "fanclub", 1)
        revoked = self.create(q, "fanclub")[0]
        self.assertEqual(self.revoke(q, revoked).status, 204)
        expires = int(time.time() * 1000) + 1500
        soon = self.create(q, "vip", expiresAt=expires)[0]
        other = self.group_queue()
        elsewhere = self.create(other, "fanclub")[0]
        before = (self.stats(q)["groups"], self.counts(q))
        cases = [(NOT_ISSUED, "unknown"), (elsewhere, "unknown"), ("NOPE", "unknown"),
                 ("", "unknown"), ("A" * 33, "unknown"), ("a b", "unknown"),
                 (once, "usedUp"), (revoked, "revoked")]
        for code, reason in cases:
            with self.subTest(code=code):
                self.assertCodeRefused(self.join_code(q, "n1", code), reason)
        self.assertError(self.c.me(q, "n1"), 404, "NOT_IN_QUEUE")
        # expired at the store's clock (the wall clock): past expiresAt
        time.sleep(max(0.0, expires / 1000.0 - time.time() + 0.2))
        self.assertCodeRefused(self.join_code(q, "n1", soon), "expired")
        self.assertEqual((self.stats(q)["groups"], self.counts(q)), before)
        self.assertEqual(self.counts(other)["fanclub"]["usesSpent"], 0)

    def test_k_uses_under_a_race(self):
        """20 people race for a code good for 5 joins: exactly 5 places."""
        q = self.group_queue()
        code = self.create(q, "fanclub", uses=5)[0]
        reqs = [("POST", "/v1/queues/%s/entries" % q, {"X-User-Id": "r%d" % i}, {"code": code})
                for i in range(20)]
        out = race(self.c.port, reqs)
        ok = [js for status, _, js in out if status == 200]
        refused = [js for status, _, js in out if status == 403]
        self.assertEqual(len(ok), 5, out)
        self.assertEqual(len(refused), 15, out)
        self.assertEqual(sorted(js["position"] for js in ok), [1, 2, 3, 4, 5])
        self.assertTrue(all(js["group"] == "fanclub" for js in ok), ok)
        self.assertTrue(all(js["error"] == "CODE_INVALID" and js["reason"] == "usedUp"
                            for js in refused), refused)
        self.assertEqual(self.counts(q)["fanclub"], {"issued": 1, "usesSpent": 5, "revoked": 0})
        self.assertEqual(self.stats(q)["groups"]["fanclub"]["waiting"], 5)

    def test_the_same_person_spends_nothing_again(self):
        q = self.group_queue()
        code, second = self.create(q, "fanclub", count=2, uses=3)
        self.member(self.join_code(q, "f1", code), "fanclub", 1)
        self.member(self.join_code(q, "f1", code), "fanclub", 1)
        self.member(self.join_code(q, "f1", second), "fanclub", 1)
        vip = self.create(q, "vip")[0]
        self.member(self.join_code(q, "f1", vip), "fanclub", 1)  # their group kept
        self.assertEqual(self.counts(q)["fanclub"]["usesSpent"], 1)
        self.assertEqual(self.counts(q)["vip"]["usesSpent"], 0)
        # someone in the standard line sending a code: their answer, their line
        self.member(self.c.join(q, "s1"), None, 1)
        self.member(self.join_code(q, "s1", vip), None, 1)
        self.member(self.join_code(q, "s1", NOT_ISSUED), None, 1)
        self.assertEqual(self.counts(q)["vip"]["usesSpent"], 0)
        self.assertEqual(self.stats(q)["groups"],
                         {"standard": {"waiting": 1, "admittedTotal": 0},
                          "fanclub": {"waiting": 1, "admittedTotal": 0},
                          "vip": {"waiting": 0, "admittedTotal": 0}})

    def test_spellings(self):
        """A code reads in lowercase, with O for 0 and I or L for 1."""
        q = self.group_queue()
        codes = self.create(q, "fanclub", count=30, uses=2)
        plain = [c for c in codes if "0" in c or "1" in c][0]
        typed = plain.lower().replace("0", "o").replace("1", "l")
        self.member(self.join_code(q, "t1", typed), "fanclub", 1)
        self.assertEqual(self.counts(q)["fanclub"]["usesSpent"], 1)

    def test_queue_page(self):
        q = self.group_queue(targetUrl="/after")
        code = self.create(q, "vip")[0]
        r = self.c.get("/q/%s?code=%s" % (q, code), {"X-User-Id": "p1"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers.get("referrer-policy"), "no-referrer")
        self.assertEqual(page_attr(r, "data-state"), "waiting")
        self.assertEqual(page_attr(r, "data-group"), "vip")  # "You are in the vip presale line."
        self.assertEqual(page_attr(r, "data-groups"), "1")
        self.member(self.c.me(q, "p1"), "vip", 1)
        r = self.c.get("/q/%s?code=%s" % (q, code), {"X-User-Id": "p2"})
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.headers.get("content-type"), "text/html; charset=utf-8")
        self.assertEqual(page_attr(r, "data-error"), "CODE_INVALID")
        self.assertEqual(page_attr(r, "data-reason"), "usedUp")
        # the code page: why, in words, and the form to try again
        self.assertEqual(page_attr(r, "data-state"), "code")
        self.assertIn("This presale code has already been used as many times as it allows.",
                      r.body)
        self.assertIn('<form id="code-form" method="get" action="/q/%s">' % q, r.body)
        # a corrected code that is admitted goes where the queue says
        self.assertEqual(page_attr(r, "data-target-url"), "/after")
        for query in ("code=NOPE", "code=", "code=" + "A" * 300):
            with self.subTest(query=query[:20]):
                r = self.c.get("/q/%s?%s" % (q, query), {"X-User-Id": "p3"})
                self.assertEqual((r.status, page_attr(r, "data-reason")), (403, "unknown"))
        self.assertError(self.c.me(q, "p2"), 404, "NOT_IN_QUEUE")
        self.assertError(self.c.me(q, "p3"), 404, "NOT_IN_QUEUE")
        # the one with a place: their page whatever the code
        r = self.c.get("/q/%s?code=NOPE" % q, {"X-User-Id": "p1"})
        self.assertEqual((r.status, page_attr(r, "data-state")), (200, "waiting"))


class GroupInvites(GroupsTest):

    def test_unknown_group_claim_is_malformed(self):
        """Every store: a grp the queue does not have is malformed."""
        q = self.new_queue(dict(HOLD, inviteKey=KEY))
        for grp in ("fanclub", "standard", "Fan", "", 7, None):
            with self.subTest(grp=grp):
                self.assertInviteRefused(
                    self.c.join(q, "u1", bearer(invite(q, "u1", grp=grp))), "malformed")
        self.assertEqual(self.stats(q)["waiting"], 0)
        self.assertError(self.c.me(q, "u1"), 404, "NOT_IN_QUEUE")
        # without the claim: the standard line, no "group" in the answer
        r = self.c.join(q, "u1", bearer(invite(q, "u1")))
        self.assertWaiting(r, 1, 1, eta_null=True)
        self.assertNotIn("group", r.json)
        # one already in line sending an invite with an unknown grp: refused
        # the same way, their place kept
        self.assertInviteRefused(
            self.c.join(q, "u1", bearer(invite(q, "u1", grp="vip"))), "malformed")
        self.assertWaiting(self.c.me(q, "u1"), 1, 1, eta_null=True)

    def test_waitroom_invite_group(self):
        tool = os.path.join(os.path.dirname(ENV.waitroomd), "waitroom-invite")
        if not os.path.exists(tool):
            self.skipTest("no waitroom-invite beside waitroomd")
        import subprocess
        env = dict(os.environ, WAITROOM_INVITE_KEY=KEY)
        r = subprocess.run([tool, "--queue", "sale", "--group", "fanclub", "alice"], env=env,
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 0, r.stderr)
        _, claims, _, _ = jwtutil.decode(r.stdout.splitlines()[0])
        self.assertEqual((claims["sub"], claims["aud"], claims["grp"]), ("alice", "sale", "fanclub"))
        r = subprocess.run([tool, "--queue", "sale", "alice"], env=env, capture_output=True,
                           text=True, timeout=10)
        self.assertNotIn("grp", jwtutil.decode(r.stdout.splitlines()[0])[1])
        for bad in ("standard", "Fan", "", "a" * 33):
            with self.subTest(group=bad):
                r = subprocess.run([tool, "--queue", "sale", "--group", bad, "alice"], env=env,
                                   capture_output=True, text=True, timeout=10)
                self.assertEqual(r.returncode, 2)
                self.assertEqual(r.stdout, "")
                self.assertIn("--group", r.stderr)

    def test_invite_group_joins_it_and_wins_over_a_code(self):
        q = self.group_queue(inviteKey=KEY)
        self.member(self.c.join(q, "v1", bearer(invite(q, "v1", grp="vip"))), "vip", 1)
        self.member(self.c.join(q, "s1", bearer(invite(q, "s1"))), None, 1)
        self.assertInviteRefused(self.c.join(q, "x1", bearer(invite(q, "x1", grp="gold"))),
                                 "malformed")
        # the invite's grp wins: the code is not looked at, nor spent
        fan = self.create(q, "fanclub")[0]
        h = bearer(invite(q, "v2", grp="vip"))
        self.member(self.join_code(q, "v2", fan, h), "vip", 2)
        self.member(self.join_code(q, "v3", "NOPE", bearer(invite(q, "v3", grp="vip"))), "vip", 3)
        self.assertEqual(self.counts(q)["fanclub"]["usesSpent"], 0)
        # an invite without grp and a code: the code's group
        self.member(self.join_code(q, "f1", fan, bearer(invite(q, "f1"))), "fanclub", 1)
        self.assertEqual(self.counts(q)["fanclub"]["usesSpent"], 1)
        # the queue page: ?invite= with grp
        r = self.c.get("/q/%s?invite=%s&code=%s" % (q, invite(q, "v4", grp="vip"), NOT_ISSUED),
                       {"X-User-Id": "v4"})
        self.assertEqual((r.status, page_attr(r, "data-state")), (200, "waiting"), r)
        self.member(self.c.me(q, "v4"), "vip", 4)


class GroupLines(GroupsTest):

    def test_positions_count_the_own_line(self):
        """A standard person's position never goes up while priority people
        join; each member's counts their group; waiting counts everyone."""
        q = self.group_queue()
        for i in range(3):
            self.member(self.c.join(q, "s%d" % i), None, i + 1)
        fan = self.create(q, "fanclub", uses=10)[0]
        vip = self.create(q, "vip", uses=10)[0]
        for i in range(6):
            code, group = (fan, "fanclub") if i % 2 == 0 else (vip, "vip")
            b = self.member(self.join_code(q, "g%d" % i, code), group, i // 2 + 1)
            self.assertEqual(b["waiting"], 4 + i)
            s = self.member(self.c.me(q, "s2"), None, 3)
            self.assertEqual(s["waiting"], 4 + i)
        self.member(self.c.me(q, "g4"), "fanclub", 3)
        self.member(self.c.me(q, "g5"), "vip", 3)
        self.assertEqual(self.stats(q)["groups"],
                         {"standard": {"waiting": 3, "admittedTotal": 0},
                          "fanclub": {"waiting": 3, "admittedTotal": 0},
                          "vip": {"waiting": 3, "admittedTotal": 0}})

    def test_eta_per_line(self):
        """With nothing admitted yet: the standard line standardShare x the
        rate, the first group waiting the rest, a later group null."""
        q = self.new_queue({"admitPerSecond": 0.01, "groups": GROUPS, "standardShare": 0.2})
        fan = self.create(q, "fanclub", uses=2)[0]
        vip = self.create(q, "vip")[0]
        self.assertEqual(self.member(self.c.join(q, "s1"), None, 1)["etaSeconds"], 500)
        self.assertEqual(self.member(self.join_code(q, "f1", fan), "fanclub", 1)["etaSeconds"], 125)
        self.assertEqual(self.member(self.join_code(q, "f2", fan), "fanclub", 2)["etaSeconds"], 250)
        self.assertIsNone(self.member(self.join_code(q, "v1", vip), "vip", 1)["etaSeconds"])
        self.assertEqual(self.c.me(q, "s1").json["etaSeconds"], 500)
        self.assertEqual(self.stats(q)["admittedTotal"], 0)  # no admission yet: the rule above

    def test_admission_order_and_the_standard_share(self):
        """Groups first, in order; over every run of ticks while it has
        people the standard line gets at least floor(standardShare x the
        admissions) - and, while a group has people, no more than its
        share plus one. Sampled in real time, counted in admissions."""
        q = self.new_queue({"admitPerSecond": 20, "tickMs": 100, "paused": True,
                            "groups": GROUPS, "standardShare": 0.2})
        fan = self.create(q, "fanclub", uses=40)[0]
        vip = self.create(q, "vip", uses=20)[0]
        for i in range(40):
            self.assertEqual(self.join_code(q, "f%d" % i, fan).status, 200)
        for i in range(20):
            self.assertEqual(self.join_code(q, "v%d" % i, vip).status, 200)
        for i in range(30):
            self.assertEqual(self.c.join(q, "s%d" % i).status, 200)
        time.sleep(0.4)  # every join past the admission delay (250 ms) before the start
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        samples = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            g = self.stats(q)["groups"]
            samples.append(g)
            if sum(line["admittedTotal"] for line in g.values()) == 90:
                break
            time.sleep(0.07)
        last = samples[-1]
        self.assertEqual({k: v["admittedTotal"] for k, v in last.items()},
                         {"standard": 30, "fanclub": 40, "vip": 20}, samples)

        def tot(g):
            return sum(line["admittedTotal"] for line in g.values())
        for i, a in enumerate(samples):
            if a["fanclub"]["waiting"] > 0:  # the groups in order
                self.assertEqual(a["vip"]["admittedTotal"], 0, a)
            for b in samples[i + 1:]:
                n = tot(b) - tot(a)
                s = b["standard"]["admittedTotal"] - a["standard"]["admittedTotal"]
                if b["standard"]["waiting"] > 0:
                    self.assertGreater(10 * s, 2 * n - 10, "standard %d of %d: %r -> %r"
                                       % (s, n, a, b))
                if b["fanclub"]["waiting"] + b["vip"]["waiting"] > 0:
                    self.assertLess(10 * s, 2 * n + 10, "standard %d of %d: %r -> %r"
                                    % (s, n, a, b))
        self.assertGreater(len(samples), 20)  # the run was seen in many steps

    def test_max_active_counts_everyone(self):
        """maxActive 3 with six waiting: the first tick admits 3, all of
        fanclub (the standard line is owed floor(0.2 x 3) = 0, carry 0.6);
        one pass consumed, the next tick's one goes to the standard line
        (owed floor(0.2 + 0.6) = 0, but the groups have nobody left)."""
        q = self.group_queue(maxActive=3, admitPerSecond=1000, tickMs=50)
        fan = self.create(q, "fanclub", uses=3)[0]
        for i in range(3):
            self.assertEqual(self.c.join(q, "s%d" % i).status, 200)
            self.assertEqual(self.join_code(q, "f%d" % i, fan).status, 200)
        time.sleep(0.3)  # everyone past the admission delay (250 ms) before the start
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        st = self.poll_until(lambda: self.stats(q), lambda st: st["admittedTotal"] >= 3,
                             what="three admitted")
        self.assertEqual(st["groups"]["fanclub"]["admittedTotal"], 3, st)
        time.sleep(0.3)  # six ticks: nobody more while three passes are live
        st = self.stats(q)
        self.assertEqual((st["admittedTotal"], st["active"]), (3, 3), st)
        tok = self.c.me(q, "f0").json["token"]
        self.assertIn(self.c.consume(q, tok, "f0").status, (200, 204))
        st = self.poll_until(lambda: self.stats(q), lambda st: st["admittedTotal"] >= 4,
                             what="a fourth admitted")
        self.assertEqual(st["groups"]["standard"]["admittedTotal"], 1, st)
        self.assertLessEqual(st["active"], 3, st)

    def test_removing_a_group(self):
        """A group with people, or with live codes, stays; once they are
        gone it can be removed (and added again, empty)."""
        q = self.group_queue()
        code = self.create(q, "vip", uses=2)[0]
        self.member(self.join_code(q, "v1", code), "vip", 1)
        only_fan = [{"name": "fanclub"}]
        r = self.c.patch_queue(q, {"groups": only_fan})
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json["field"], "groups")
        self.assertEqual(self.config(q)["groups"], GROUPS)
        self.assertError(self.c.put_queue(q, dict(HOLD, groups=only_fan)), 400, "INVALID_CONFIG")
        self.assertIn(self.c.leave(q, "v1").status, (200, 204))
        r = self.c.patch_queue(q, {"groups": only_fan})  # a live code (one use left)
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json["field"], "groups")
        self.assertEqual(self.revoke(q, code).status, 204)
        r = self.c.patch_queue(q, {"groups": only_fan})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.config(q)["groups"], only_fan)
        self.assertCodeRefused(self.join_code(q, "v2", code), "unknown")
        # reordered and added again: the new vip is empty
        self.assertEqual(self.c.patch_queue(q, {"groups": GROUPS[::-1]}).status, 200)
        self.assertEqual(self.counts(q), {"vip": {"issued": 0, "usesSpent": 0, "revoked": 0},
                                          "fanclub": {"issued": 0, "usesSpent": 0,
                                                      "revoked": 0}})

    def test_stats_metrics_and_report(self):
        q = self.group_queue()
        fan = self.create(q, "fanclub", uses=5)[0]
        self.member(self.join_code(q, "f1", fan), "fanclub", 1)
        self.member(self.join_code(q, "f2", fan), "fanclub", 2)
        self.member(self.join_code(q, "f2", fan), "fanclub", 2)  # a repeat
        self.member(self.c.join(q, "s1"), None, 1)
        self.assertEqual(self.stats(q)["groups"],
                         {"standard": {"waiting": 1, "admittedTotal": 0},
                          "fanclub": {"waiting": 2, "admittedTotal": 0},
                          "vip": {"waiting": 0, "admittedTotal": 0}})

        def series(name, group):
            return metric(self.c, name, 'queue="%s",group="%s"' % (q, group))
        self.poll_until(lambda: series("waitroom_queue_group_waiting", "fanclub"),
                        lambda v: v == 2, what="the fanclub gauge")
        self.assertEqual(series("waitroom_queue_group_waiting", "standard"), 1)
        self.assertEqual(series("waitroom_queue_group_waiting", "vip"), 0)
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        self.wait_admitted(q, "s1")
        self.poll_until(lambda: series("waitroom_queue_group_admitted_total", "fanclub"),
                        lambda v: v == 2, what="the fanclub counter")
        # (the counters come from the ticks' stats: s1's admission may be
        # published a tick after the fanclub's, so it is waited for too)
        self.poll_until(lambda: series("waitroom_queue_group_admitted_total", "standard"),
                        lambda v: v == 1, what="the standard counter")
        r = self.c.get("/v1/admin/queues/%s/report" % q, ADMIN)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["totals"]["joined"], 3, r.json["totals"])
        # a group removed: its series go
        self.assertEqual(self.c.patch_queue(q, {"groups": [{"name": "fanclub"}]}).status, 200)
        text = lambda: self.c.get("/metrics").body  # noqa: E731
        self.poll_until(text, lambda t: 'queue="%s",group="vip"' % q not in t,
                        what="the vip series removed")
        self.assertIn('waitroom_queue_group_waiting{queue="%s",group="fanclub"}' % q, text())

    def test_report_counts_a_member_before_the_opening(self):
        """A group member's join before opensAt (answered prequeue, in their
        group's line) is a place the report counts at once, on both stores;
        a repeat is not, nor the opening: a member who leaves before it was
        joined all the same."""
        q = self.group_queue(opensAt=now_ms() + 3600000)
        fan = self.create(q, "fanclub", uses=5)[0]
        for u in ("f1", "f2", "f1"):
            r = self.join_code(q, u, fan)
            self.assertEqual(r.status, 200, r)
            self.assertEqual((r.json["status"], r.json.get("group")), ("prequeue", "fanclub"), r)
        self.assertEqual(self.c.join(q, "s1").json["status"], "prequeue")
        self.assertIn(self.c.leave(q, "f2").status, (200, 204))

        def totals():
            r = self.c.get("/v1/admin/queues/%s/report" % q, ADMIN)
            self.assertEqual(r.status, 200, r)
            return r.json["totals"]
        t = totals()
        self.assertEqual((t["joined"], t["left"]), (3, 1), t)
        self.assertEqual(self.c.patch_queue(q, {"opensAt": None, "paused": False}).status, 200)
        self.wait_admitted(q, "f1")
        self.wait_admitted(q, "s1")
        t = totals()
        self.assertEqual((t["joined"], t["left"], t["admitted"]), (3, 1, 2), t)


class GroupsRestart(GroupsTest):

    def test_memory_restart_keeps_groups(self):
        """The embedded store restarted on its snapshot (--data-dir, format
        12): each group member back at their place in their group's line,
        the standard line's too, a code's remaining uses and the counts per
        group kept (docs/API.md, "Restarts of the embedded store")."""
        if ENV.store != "memory":
            self.skipTest("the embedded store's restart")
        data = tempfile.mkdtemp(prefix="wr-groups-snap-", dir=ENV.tmpdir)
        w = memory_server(self, data)
        c = w.client
        q = self.new_queue(dict(HOLD, groups=GROUPS), client=c)
        fan = self.create(q, "fanclub", uses=3, client=c)[0]
        vip = self.create(q, "vip", uses=1, client=c)[0]
        self.member(c.join(q, "s1"), None, 1)
        self.member(self.join_code(q, "f1", fan, client=c), "fanclub", 1)
        self.member(c.join(q, "s2"), None, 2)
        self.member(self.join_code(q, "f2", fan, client=c), "fanclub", 2)
        self.member(self.join_code(q, "v1", vip, client=c), "vip", 1)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())

        w = memory_server(self, data)
        c = w.client
        self.member(c.me(q, "f2"), "fanclub", 2)
        self.member(c.me(q, "f1"), "fanclub", 1)
        self.member(c.me(q, "s2"), None, 2)
        self.member(c.me(q, "v1"), "vip", 1)
        self.assertEqual(self.counts(q, client=c),
                         {"fanclub": {"issued": 1, "usesSpent": 2, "revoked": 0},
                          "vip": {"issued": 1, "usesSpent": 1, "revoked": 0}})
        # the fan code's last use, then none; the vip code was used up
        self.member(self.join_code(q, "f3", fan, client=c), "fanclub", 3)
        self.assertCodeRefused(self.join_code(q, "f4", fan, client=c), "usedUp")
        self.assertCodeRefused(self.join_code(q, "v2", vip, client=c), "usedUp")
        self.assertEqual(self.stats(q, c)["groups"],
                         {"standard": {"waiting": 2, "admittedTotal": 0},
                          "fanclub": {"waiting": 3, "admittedTotal": 0},
                          "vip": {"waiting": 1, "admittedTotal": 0}})
        self.assertEqual(w.terminate(), 0, w.stderr_tail())


class PageReferrer(WRTest):

    def test_queue_page_sends_no_referrer(self):
        """The page's address may carry ?code= or ?invite=: it is never sent
        on to another origin (the logo's, a CAPTCHA provider's)."""
        q = self.new_queue(HOLD)
        for path in ("/q/%s" % q, "/q/%s?code=7K2QD-M9XWA" % q, "/q/%s?invite=x.y.z" % q,
                     "/q/no%20such"):
            with self.subTest(path=path):
                r = self.c.get(path, {"X-User-Id": "pager"})
                self.assertEqual(r.headers.get("content-type"), "text/html; charset=utf-8", r)
                self.assertEqual(r.headers.get("referrer-policy"), "no-referrer", r)


class CodesNeverLogged(PrivateServer):

    def test_logs_carry_no_code_or_invite(self):
        """The access log and the error log name routes, never a code or an
        invite (in a query, a body or a path), nor the codes issued."""
        acc = os.path.join(ENV.tmpdir, "access-%s.log" % uid())
        w = self.start(["--log-format", "json", "--access-log", acc], log_level="debug")
        c = w.client
        made_up = ["ZQ7XK-C0DE1-SECRT-00001", "ZQ7XK-C0DE2-SECRT-00002"]
        groups = GROUPS
        q = self.new_queue(dict(HOLD, inviteKey=KEY, groups=groups), client=c)
        issued = list(made_up)
        if groups:
            r = c.request("POST", "/v1/admin/queues/%s/codes" % q, ADMIN,
                          {"group": "fanclub", "count": 2, "uses": 1})
            self.assertEqual(r.status, 201, r)
            issued = r.json["codes"]
        invites = [invite(q, "i%d" % i) for i in range(3)]
        c.get("/q/%s?invite=%s&code=%s" % (q, invites[0], made_up[0]), {"X-User-Id": "i0"})
        for i, code in ((1, made_up[1]), (2, issued[0])):
            c.request("POST", "/v1/queues/%s/entries" % q,
                      bearer(invites[i], {"X-User-Id": "i%d" % i}), {"code": code})
        for code in (issued[1], made_up[0]):
            c.request("DELETE", "/v1/admin/queues/%s/codes/%s" % (q, code), ADMIN)
        secrets = made_up + issued + invites
        entries = self.poll_until(lambda: json_lines(acc),
                                  lambda es: any(e.get("route") == "admin_codes_revoke"
                                                 for e in es), what="access log lines")
        routes = {(e["method"], e["route"]) for e in entries}
        for want in (("GET", "queue_page"), ("POST", "join"), ("DELETE", "admin_codes_revoke")):
            self.assertIn(want, routes)
        w.err.flush()
        raw = open(acc).read() + open(w.errpath).read()
        for s in secrets + [inv.split(".")[2] for inv in invites]:
            self.assertNotIn(s.lower(), raw.lower())
        # the audit: one line per change done (the issue, the one revocation
        # of a real code; the made-up code's 404 changed nothing). The error
        # log is written by its own thread: waited for, not read once (a
        # loaded run read it before the lines were there)
        def audit_lines():
            w.err.flush()
            return [e for e in json_lines(w.errpath)
                    if e.get("msg") == "admin change" and e.get("queue") == q]
        audit = self.poll_until(audit_lines,
                                lambda a: sum(e.get("action") in ("codes_create", "codes_revoke")
                                              for e in a) >= (2 if groups else 0),
                                what="the audit lines of the codes")
        made = [e for e in audit if e.get("action") == "codes_create"]
        self.assertEqual(len(made), 1, audit)
        self.assertEqual((made[0]["group"], made[0]["count"], made[0]["uses"],
                          made[0]["expiresAt"], made[0]["client"]),
                         ("fanclub", 2, 1, -1, "127.0.0.1"))
        revoked = [e for e in audit if e.get("action") == "codes_revoke"]
        self.assertEqual(len(revoked), 1, audit)
        self.assertRegex(revoked[0]["codeHash"], r"^[0-9a-f]{12}$")
