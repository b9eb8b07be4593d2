"""Priority groups and presale codes (API 1.3, issue 41), the part this
version serves: the queue config fields `groups` and `standardShare` -
each rule, the error naming the element, GET showing the defaults - and
the refusal of a `groups` other than null with 400 INVALID_CONFIG "not
available yet" (PUT and PATCH), which leaves the config as it was: a
config that is accepted must work, and the stores do not keep per-group
lines yet (docs/API.md "Priority groups and presale codes")."""
from harness import HOLD, WRTest


class GroupsConfig(WRTest):

    def test_defaults(self):
        q = self.new_queue(HOLD)
        cfg = self.config(q)
        self.assertIsNone(cfg["groups"])
        self.assertEqual(cfg["standardShare"], 0.2)

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
