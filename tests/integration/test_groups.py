"""Priority groups and presale codes (API 1.3, issue 41), the part this
version serves: the queue config fields `groups` and `standardShare` -
each rule, the error naming the element, GET showing the defaults - and
the refusal of a `groups` other than null with 400 INVALID_CONFIG "not
available yet" (PUT and PATCH), which leaves the config as it was: a
config that is accepted must work, and the stores do not keep per-group
lines yet (docs/API.md "Priority groups and presale codes"). And the
invite's claim `grp`: one the queue does not have is 403 INVITE_REQUIRED
reason malformed, changing nothing; `waitroom-invite --group` writes it.
A join with `{"code": ...}`: no code is valid while no queue can have
groups, so a newcomer gets 403 CODE_INVALID reason unknown, changing
nothing (no place, no challenge spent), and someone with a place or a pass
gets their normal answer whatever code they send."""
import os
import subprocess

import jwtutil
from harness import ENV, FAST, HOLD, WRTest
from helpers import BITS, KEY, bearer, invite, solve


class GroupsConfig(WRTest):

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

    def test_groups_not_available_yet(self):
        q = self.new_queue(HOLD)
        valid = [{"name": "fanclub"}, {"name": "vip-2"}, {"name": "a" * 32}]
        r = self.c.patch_queue(q, {"groups": valid})
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json["field"], "groups")
        self.assertIn("not available yet", r.json["message"])
        self.assertIsNone(self.config(q)["groups"])
        r = self.c.put_queue(q, dict(HOLD, groups=valid))
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json["field"], "groups")
        self.assertIsNone(self.config(q)["groups"])
        # a PUT that creates a queue is refused the same way: no queue
        fresh = q + "-new"
        r = self.c.put_queue(fresh, dict(HOLD, groups=valid))
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertError(self.c.get_queue(fresh), 404, "QUEUE_NOT_FOUND")
        # null is accepted, explicitly
        r = self.c.patch_queue(q, {"groups": None})
        self.assertEqual(r.status, 200, r)
        self.assertIsNone(self.config(q)["groups"])


class GroupInvites(WRTest):

    def test_unknown_group_claim_is_malformed(self):
        q = self.new_queue(dict(HOLD, inviteKey=KEY))
        # the queue has no groups: every grp is unknown
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


class CodeJoins(WRTest):

    def join_code(self, q, user, code, headers=None):
        h = self.c.uh(user, headers)
        return self.c.request("POST", "/v1/queues/%s/entries" % q, h, {"code": code})

    def test_unknown_code_changes_nothing(self):
        q = self.new_queue(HOLD)
        for code in ("7K2QD-M9XWA-0RT4E-HZ3PB", "fanclub", "", "A" * 33, "a b", "\u00e9"):
            with self.subTest(code=code):
                r = self.join_code(q, "u1", code)
                self.assertError(r, 403, "CODE_INVALID")
                self.assertEqual(r.json.get("reason"), "unknown", r)
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
        q = self.new_queue(dict(HOLD, challengeBits=BITS))
        r = self.c.get("/v1/queues/%s/challenge" % q, self.c.uh("c1"))
        self.assertEqual(r.status, 200, r)
        ch = r.json["challenge"]
        body = {"challenge": ch, "nonce": solve(ch, BITS)}
        r = self.c.request("POST", "/v1/queues/%s/entries" % q, self.c.uh("c1"),
                           dict(body, code="NOPE"))
        self.assertError(r, 403, "CODE_INVALID")
        self.assertEqual(self.stats(q)["waiting"], 0)
        # the same solution still buys the place
        r = self.c.request("POST", "/v1/queues/%s/entries" % q, self.c.uh("c1"), body)
        self.assertWaiting(r, 1, 1, eta_null=True)

    def test_a_place_is_answered_whatever_the_code(self):
        q = self.new_queue(HOLD)
        self.assertWaiting(self.c.join(q, "u1"), 1, 1, eta_null=True)
        self.assertWaiting(self.c.join(q, "u2"), 2, 2, eta_null=True)
        r = self.join_code(q, "u2", "7K2QD-M9XWA-0RT4E-HZ3PB")
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
