"""Admin API: auth, config defaults and validation, PATCH, stats, list, delete."""
import time

from harness import ADMIN, ENV, FAST, HOLD, SLOW, STATS_KEYS, WRTest, uid

DEFAULTS = {
    "enabled": True,
    "paused": False,
    "tickMs": 100,
    "maxActive": 0,
    "maxQueueSize": 100000,
    "tokenTtlSeconds": 300,
    "pollBands": [{"upTo": 100, "ms": 1000}, {"upTo": 1000, "ms": 3000}, {"ms": 5000}],
    "pollJitter": 0.1,
    "failPolicy": "limited",
    "failOpenPerSecond": 175,
    "sessionSeconds": 0,
    "idleTimeoutSeconds": 120,
}


def config_of(body):
    """PUT/PATCH answer the config object itself (docs/API.md), not the GET
    shape {"name", "config", "stats"}."""
    assert isinstance(body, dict) and "config" not in body and "stats" not in body, body
    return body


def names_field(r, field):
    """The error names the bad field in its "field" key (docs/API.md)."""
    return (r.json or {}).get("field") == field


class Admin(WRTest):

    def test_unauthorized_on_every_admin_route(self):
        q = self.new_queue(HOLD)
        fresh = "unauth-" + uid("")
        for key_what, headers in [("no key", {}), ("wrong key", {"Authorization": "Bearer nope"}),
                                  ("key without Bearer", {"Authorization": "test-admin-key"}),
                                  ("basic", {"Authorization": "Basic dGVzdC1hZG1pbi1rZXk6"}),
                                  ("key prefix", {"Authorization": "Bearer test-admin-ke"}),
                                  ("key + suffix", {"Authorization": "Bearer test-admin-keyX"})]:
            for what, method, path, body in [
                ("PUT", "PUT", "/v1/admin/queues/" + fresh, {"admitPerSecond": 1}),
                ("PUT existing", "PUT", "/v1/admin/queues/" + q, {"admitPerSecond": 1}),
                ("PATCH", "PATCH", "/v1/admin/queues/" + q, {"paused": False}),
                ("GET", "GET", "/v1/admin/queues/" + q, None),
                ("GET list", "GET", "/v1/admin/queues", None),
                ("DELETE", "DELETE", "/v1/admin/queues/" + q, None),
                # the key is checked before the name: no 400 that tells names apart
                ("GET bad name", "GET", "/v1/admin/queues/caf%C3%A9", None),
                ("PUT bad name", "PUT", "/v1/admin/queues/a%2Fb", {"admitPerSecond": 1}),
            ]:
                with self.subTest(key=key_what, route=what):
                    r = self.c.request(method, path, headers, body)
                    self.assertError(r, 401, "UNAUTHORIZED", "%s %s" % (what, key_what))
        self.assertError(self.c.get_queue(fresh), 404, "QUEUE_NOT_FOUND", "unauth PUT created")
        cfg = self.config(q)
        self.assertEqual((cfg["paused"], cfg["admitPerSecond"]), (True, 1000),
                         "unauthorized PUT/PATCH changed the config")

    def test_put_fills_every_default(self):
        name = "defaults-" + uid("")
        r = self.c.put_queue(name, {"admitPerSecond": 175})
        self.addCleanup(self.c.delete_queue, name)
        self.assertEqual(r.status, 200, repr(r))
        self.assertJsonHeaders(r)
        for what, cfg in [("PUT answer", config_of(r.json)), ("GET", self.config(name))]:
            for k, v in DEFAULTS.items():
                with self.subTest(src=what, field=k):
                    self.assertIn(k, cfg, "%s lacks %s: %r" % (what, k, cfg))
                    self.assertEqual(cfg[k], v, "%s default of %s" % (what, k))
            self.assertEqual(cfg["admitPerSecond"], 175)
        g = self.c.get_queue(name).json
        self.assertEqual(g.get("name"), name)
        self.assertEqual(set(g["stats"]), STATS_KEYS)

    def test_rate_is_required(self):
        name = "norate-" + uid("")
        for body in [{}, {"tickMs": 100}, {"admitPerSecond": None}]:
            with self.subTest(body=body):
                r = self.c.put_queue(name, body)
                self.assertError(r, 400, "INVALID_CONFIG", "PUT %r" % body)
                self.assertTrue(names_field(r, "admitPerSecond"),
                                "error must name admitPerSecond: %r" % r)
        self.assertError(self.c.get_queue(name), 404, "QUEUE_NOT_FOUND", "failed PUT created it")

    def test_rate_derived_from_capacity(self):
        name = "cap-" + uid("")
        r = self.c.put_queue(name, {"capacity": {"connections": 40, "serviceMs": 200,
                                                 "safety": 0.875}})
        self.addCleanup(self.c.delete_queue, name)
        self.assertEqual(r.status, 200, repr(r))
        self.assertAlmostEqual(config_of(r.json)["admitPerSecond"], 175, delta=1e-9)
        cfg = self.config(name)
        self.assertAlmostEqual(cfg["admitPerSecond"], 175, delta=1e-9)
        self.assertEqual(cfg.get("capacity"), {"connections": 40, "serviceMs": 200,
                                               "safety": 0.875})
        # explicit admitPerSecond wins over capacity
        r = self.c.put_queue(name, {"admitPerSecond": 12,
                                    "capacity": {"connections": 40, "serviceMs": 200,
                                                 "safety": 0.875}})
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(self.config(name)["admitPerSecond"], 12)

    def test_validation_errors_name_the_field_and_change_nothing(self):
        q = self.new_queue({"admitPerSecond": 7, "paused": True})
        bad = [
            ("tickMs", {"tickMs": 0}),
            ("pollJitter", {"pollJitter": 2}),
            ("failPolicy", {"failPolicy": "x"}),
            ("bogusField", {"bogusField": 1}),
            ("admitPerSecond", {"admitPerSecond": -1}),
            ("admitPerSecond", {"admitPerSecond": "fast"}),
            ("tokenTtlSeconds", {"tokenTtlSeconds": 0}),
            ("enabled", {"enabled": "yes"}),
            ("maxQueueSize", {"maxQueueSize": -5}),
        ]
        for field, fields in bad:
            for method in ("PUT", "PATCH"):
                with self.subTest(field=field, method=method, body=fields):
                    if method == "PUT":
                        body = dict({"admitPerSecond": 7}, **fields)
                        r = self.c.put_queue(q, body)
                    else:
                        r = self.c.patch_queue(q, fields)
                    self.assertError(r, 400, "INVALID_CONFIG", "%s %r" % (method, fields))
                    self.assertTrue(names_field(r, field), "error must name %s: %r" % (field, r))
        cfg = self.config(q)
        self.assertEqual((cfg["admitPerSecond"], cfg["paused"], cfg["tickMs"]), (7, True, 100),
                         "an error never changes state")

    def test_numbers_beyond_json_doubles_and_int64_name_the_field(self):
        # valid JSON that jansson cannot hold (an integer beyond int64, a
        # real beyond double) is a value out of range: INVALID_CONFIG with
        # the field, as "stock": 2^53 + 1 is (API.md 1.2), not BAD_REQUEST
        q = self.new_queue({"admitPerSecond": 7, "paused": True})
        bad = [
            ("stock", b'{"admitPerSecond":1,"stock":99999999999999999999}'),
            ("maxActive", b'{"admitPerSecond":1,"maxActive":9223372036854775808}'),
            ("opensAt", b'{"admitPerSecond":1, "opensAt" : 99999999999999999999999}'),
            ("admitPerSecond", b'{"admitPerSecond":1e400}'),
            ("autotune.minPerSecond",
             b'{"admitPerSecond":1,"autotune":{"minPerSecond":1e999,"maxPerSecond":5,'
             b'"targetMs":100}}'),
            ("page.x", b'{"page":{"a":[1,{"b":"}"}],"x":-1e400}}'),
            ("tickMs", b'{"admitPerSecond":5,"tickMs":-99999999999999999999}'),
            ("autotune.targetMs", b'{"admitPerSecond":1,"autotune":{"targetMs":-99999999999999999999}}'),
            ("stock", b'{"admitPerSecond":1,"stock":1e400,"maxActive":99999999999999999999}'),
        ]
        for field, raw in bad:
            for method in ("PUT", "PATCH"):
                with self.subTest(field=field, method=method):
                    r = self.c.request(method, "/v1/admin/queues/" + q, ADMIN, raw)
                    self.assertError(r, 400, "INVALID_CONFIG", "%s %r" % (method, raw))
                    self.assertTrue(names_field(r, field), "error must name %s: %r" % (field, r))
        # what is not JSON stays BAD_REQUEST, big numbers or not
        for raw in (b'{"stock":1', b'{"stock":1e400', b"[1e400]", b'{"stock":1e400}}',
                    b'{"stock":99999999999999999999}x', b'{"stock":99999999999999999999,}',
                    b'{"stock":1e400,"stock":1}'):
            for method in ("PUT", "PATCH"):
                r = self.c.request(method, "/v1/admin/queues/" + q, ADMIN, raw)
                self.assertError(r, 400, "BAD_REQUEST", "%s %r" % (method, raw))
        cfg = self.config(q)
        self.assertEqual((cfg["admitPerSecond"], cfg["paused"], cfg["stock"]), (7, True, None),
                         "an error never changes state")

    def test_patch_applies(self):
        q = self.new_queue(dict(SLOW, tokenTtlSeconds=60))
        a, b = uid(), uid()
        self.assertWaiting(self.c.join(q, a), 1, 1, rate=0.125)
        self.assertWaiting(self.c.join(q, b), 2, 2, rate=0.125)
        # paused: visible in GET and in the ETA
        r = self.c.patch_queue(q, {"paused": True})
        self.assertEqual(r.status, 200, repr(r))
        self.assertIs(config_of(r.json)["paused"], True)
        self.assertIs(self.config(q)["paused"], True)
        self.assertWaiting(self.c.me(q, a), 1, 2, eta_null=True, what="paused")
        # enabled=false: a new join is passthrough; the line is kept
        self.assertEqual(self.c.patch_queue(q, {"enabled": False}).status, 200)
        self.assertIs(self.config(q)["enabled"], False)
        r = self.c.join(q, uid())
        self.assertEqual((r.status, r.json.get("status")), (200, "passthrough"), repr(r))
        self.assertEqual(self.c.patch_queue(q, {"enabled": True, "paused": False}).status, 200)
        self.assertWaiting(self.c.me(q, b), 2, 2, rate=0.125, what="line kept")
        # the rate: 0.125 -> 50; both are admitted quickly now
        r = self.c.patch_queue(q, {"admitPerSecond": 50})
        self.assertEqual(r.status, 200, repr(r))
        cfg = self.config(q)
        self.assertEqual(cfg["admitPerSecond"], 50)
        self.assertEqual((cfg["tokenTtlSeconds"], cfg["paused"]), (60, False),
                         "PATCH keeps the other fields")
        self.wait_admitted(q, a, timeout=3)
        self.wait_admitted(q, b, timeout=3)

    def test_stats_after_a_scripted_sequence(self):
        q = self.new_queue(dict(FAST, paused=True, maxQueueSize=5))
        users = [uid() for _ in range(5)]
        for u in users:
            self.join_ok(q, u)
        self.assertError(self.c.join(q, uid()), 429, "QUEUE_FULL")
        self.assertError(self.c.join(q, uid()), 429, "QUEUE_FULL")
        self.assertEqual(self.c.leave(q, users[4]).status, 204)
        r = self.c.get_queue(q)
        self.assertEqual(r.status, 200)
        self.assertJsonHeaders(r)
        st = r.json["stats"]
        self.assertEqual(set(st), STATS_KEYS)
        for k in STATS_KEYS - {"admitRateObserved", "stockLeft", "soldOutAt", "admitRateTarget",
                               "groups"}:
            self.assertInt(st[k], k)
        self.assertIsInstance(st["admitRateObserved"], (int, float))
        # the rate in use: the configured one without autotune
        self.assertEqual(st["admitRateTarget"], self.config(q)["admitPerSecond"])
        self.assertEqual(st, dict(waiting=4, active=0, admittedTotal=0, consumedTotal=0,
                                  expiredTotal=0, leftTotal=1, rejectedFullTotal=2,
                                  admitRateObserved=st["admitRateObserved"],
                                  admitRateTarget=st["admitRateTarget"], sessions=0,
                                  releasedTotal=0, sessionsExpiredTotal=0, abandonedTotal=0,
                                  prequeue=0, away=0, held=0, returnedTotal=0,
                                  unseenExpiredTotal=0, stockLeft=None, soldOutAt=None,
                                  bypassTotal=0, subscribed=0,
                                  groups={"standard": {"waiting": 4, "admittedTotal": 0}}))
        self.assertEqual(st["admitRateObserved"], 0, "nobody admitted yet")
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        tokens = [self.wait_admitted(q, u)["token"] for u in users[:4]]
        self.assertEqual(self.c.consume(q, tokens[0]).status, 200)
        self.assertEqual(self.c.consume(q, tokens[1]).status, 200)
        self.assertEqual(self.c.consume(q, tokens[1]).status, 403)
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["active"], st["admittedTotal"], st["consumedTotal"],
                          st["expiredTotal"], st["rejectedFullTotal"]), (0, 2, 4, 2, 0, 2), st)
        self.poll_until(lambda: self.stats(q)["admitRateObserved"], lambda v: v > 0, timeout=3,
                        what="admitRateObserved > 0 with 4 admitted in the last minute")
        self.assertEqual(self.c.leave(q, users[2]).status, 204)   # revokes a live token
        st = self.stats(q)
        self.assertEqual((st["active"], st["consumedTotal"]), (1, 2), st)
        self.assertEqual(st["leftTotal"], 2, "a leave that revokes a live token counts as a leave")

    def test_list_includes_the_queue_with_stats(self):
        q = self.new_queue(HOLD)
        self.join_ok(q, uid())
        r = self.c.list_queues()
        self.assertEqual(r.status, 200, repr(r))
        self.assertJsonHeaders(r)
        items = r.json["queues"]   # {"queues": [...]}, sorted by name (docs/API.md)
        self.assertIsInstance(items, list, "list shape: %r" % r.body[:300])
        names = [i["name"] for i in items]
        self.assertEqual(names, sorted(names))
        mine = [i for i in items if isinstance(i, dict) and i.get("name") == q]
        self.assertEqual(len(mine), 1, "queue %s listed once" % q)
        self.assertEqual(set(mine[0]["stats"]), STATS_KEYS)
        self.assertEqual(mine[0]["stats"]["waiting"], 1)

    def test_delete_removes_the_queue_and_its_state(self):
        q = self.new_queue(dict(FAST, paused=True))
        a = uid()
        self.join_ok(q, a)
        r = self.c.delete_queue(q)
        self.assertEqual((r.status, r.body), (204, ""), repr(r))
        for what, rr in [("join", self.c.join(q, a)), ("me", self.c.me(q, a)),
                         ("leave", self.c.leave(q, a)), ("consume", self.c.consume(q, "a.b.c")),
                         ("verify", self.c.verify(q, "a.b.c")), ("GET", self.c.get_queue(q)),
                         ("DELETE again", self.c.delete_queue(q))]:
            with self.subTest(what):
                self.assertError(rr, 404, "QUEUE_NOT_FOUND", what)
        listed = self.c.list_queues().json["queues"]
        self.assertNotIn(q, [i["name"] for i in listed])
        # re-created: a fresh queue, nobody in line, zero counters
        self.assertEqual(self.c.put_queue(q, dict(FAST, paused=True)).status, 200)
        self.assertError(self.c.me(q, a), 404, "NOT_IN_QUEUE", "state survived DELETE")
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["admittedTotal"], st["leftTotal"]), (0, 0, 0))

    def test_old_token_dies_with_its_queue(self):
        q = self.new_queue(FAST)
        u = uid()
        tok = self.admit(q, u)
        self.assertEqual(self.c.delete_queue(q).status, 204)
        self.assertEqual(self.c.put_queue(q, FAST).status, 200)
        self.assertTokenRefused(self.c.consume(q, tok), "consumed",
                                "a token of the deleted queue must not pass its successor")
        self.assertEqual(self.stats(q)["consumedTotal"], 0)

    def test_patch_reaches_other_instances_within_a_tick(self):
        self.redis_only()
        other = ENV.cookie.client   # the cookie-mode server shares the Redis
        q = self.new_queue(dict(FAST, tickMs=100))
        self.assertEqual(other.join(q, None).json["status"], "waiting")
        self.assertEqual(self.c.patch_queue(q, {"enabled": False}).status, 200)
        t0 = time.monotonic()
        r = self.poll_until(lambda: other.join(q, None), lambda r: r.json.get("status")
                            == "passthrough", timeout=2, interval=0.01,
                            what="other instance sees enabled=false")
        self.assertLess(time.monotonic() - t0, 0.1 + 0.2, "more than one tick (+ margin)")
        self.assertIs(other.get_queue(q).json["config"]["enabled"], False)
        self.assertEqual(r.status, 200)

    def test_put_replaces_config_but_keeps_the_line(self):
        q = self.new_queue(dict(HOLD, maxQueueSize=50))
        a = uid()
        self.join_ok(q, a)
        r = self.c.put_queue(q, {"admitPerSecond": 3, "paused": True})
        self.assertEqual(r.status, 200)
        cfg = self.config(q)
        self.assertEqual((cfg["admitPerSecond"], cfg["maxQueueSize"]), (3, 100000),
                         "PUT replaces: absent fields go back to defaults")
        self.assertWaiting(self.c.me(q, a), 1, 1, eta_null=True)
