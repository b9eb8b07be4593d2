"""API.md "Conventions": headers, error shape, names, ids, body limits,
unknown queues."""
import json

from harness import ADMIN, HOLD, FAST, WRTest, raw_request, uid, urlq
from helpers import exchange


class Conventions(WRTest):

    def test_json_headers_on_every_route_success_and_error(self):
        q = self.new_queue(dict(HOLD, maxQueueSize=1))
        off = self.new_queue({"admitPerSecond": 10, "enabled": False})
        c = self.c
        u = uid()
        cases = [
            ("join 200", c.join(q, u), 200, None),
            ("join 429", c.join(q, uid()), 429, "QUEUE_FULL"),
            ("join 404", c.join("nope-" + uid(), u), 404, "QUEUE_NOT_FOUND"),
            ("join 400 user", c.join(q, "a<b"), 400, "INVALID_USER_ID"),
            ("join 400 queue", c.join("x.y", u), 400, "INVALID_QUEUE_NAME"),
            ("me 200", c.me(q, u), 200, None),
            ("me 404", c.me(q, uid()), 404, "NOT_IN_QUEUE"),
            ("leave 404", c.leave(q, uid()), 404, "NOT_IN_QUEUE"),
            ("consume 200 passthrough", c.consume(off), 200, None),
            ("consume 403", c.consume(q, "a.b.c"), 403, "INVALID_TOKEN"),
            ("consume 404", c.consume("nope-" + uid(), "a.b.c"), 404, "QUEUE_NOT_FOUND"),
            ("verify 401", c.verify(q), 401, None),
            ("verify 403", c.verify(q, "a.b.c"), 403, "INVALID_TOKEN"),
            ("verify 404", c.verify("nope-" + uid(), "a.b.c"), 404, "QUEUE_NOT_FOUND"),
            ("admin PUT 400", c.put_queue(q, {"admitPerSecond": 10, "tickMs": 0}), 400,
             "INVALID_CONFIG"),
            ("admin PUT 401", c.put_queue(q, {"admitPerSecond": 10}, key="wrong"), 401,
             "UNAUTHORIZED"),
            ("admin PATCH 200", c.patch_queue(q, {"maxQueueSize": 1}), 200, None),
            ("admin PATCH 400", c.patch_queue(q, {"pollJitter": 2}), 400, "INVALID_CONFIG"),
            ("admin GET 200", c.get_queue(q), 200, None),
            ("admin GET 404", c.get_queue("nope-" + uid()), 404, "QUEUE_NOT_FOUND"),
            ("admin GET 401", c.get_queue(q, key=""), 401, "UNAUTHORIZED"),
            ("admin list 200", c.list_queues(), 200, None),
            ("admin list 401", c.list_queues(key="x"), 401, "UNAUTHORIZED"),
            ("admin DELETE 404", c.delete_queue("nope-" + uid()), 404, "QUEUE_NOT_FOUND"),
        ]
        extra = self.new_queue(FAST)
        cases.append(("admin PUT 200", c.put_queue(extra, {"admitPerSecond": 5}), 200, None))
        r = c.delete_queue(extra)
        self.assertEqual((r.status, r.body), (204, ""), "admin DELETE: %r" % r)
        for what, r, status, code in cases:
            with self.subTest(what):
                if code:
                    self.assertError(r, status, code, what)
                else:
                    self.assertEqual(r.status, status, "%s: %r" % (what, r))
                    self.assertJsonHeaders(r, what)
                    self.assertIsInstance(r.json, (dict, list), what)
        # leave of a waiting user: 204 without a body
        r = c.leave(q, u)
        self.assertEqual(r.status, 204, repr(r))
        self.assertEqual(r.body, "", "204 must have no body")

    def test_keep_alive_connection(self):
        """Browsers and nginx auth_request reuse connections: 30 requests,
        errors included, on one HTTP/1.1 connection."""
        import http.client
        q = self.new_queue(HOLD)
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
        self.addCleanup(conn.close)
        users = [uid() for _ in range(10)]
        plan = [("POST", "/v1/queues/%s/entries" % q, {"X-User-Id": u}, 200) for u in users]
        for i in range(20):
            if i % 3 == 0:
                plan.append(("GET", "/v1/queues/%s/entries/me" % q, {"X-User-Id": uid()}, 404))
            elif i % 3 == 1:
                plan.append(("GET", "/v1/queues/%s/tokens/verify" % q,
                             {"Authorization": "Bearer a.b.c"}, 403))
            else:
                plan.append(("GET", "/v1/queues/%s/entries/me" % q,
                             {"X-User-Id": users[i % 10]}, 200))
        for i, (method, path, headers, want) in enumerate(plan):
            conn.request(method, path, headers=headers)
            r = conn.getresponse()
            body = r.read()
            self.assertEqual(r.status, want, "request #%d on one connection: %r" % (i, body))
            if i < 10:
                self.assertEqual(json.loads(body)["position"], i + 1)
        self.assertEqual(self.stats(q)["waiting"], 10)

    def test_invalid_queue_names(self):
        u = uid()
        for name in ["q" * 65, urlq("a b"), "x.y", urlq("é")]:
            for what, r in [
                ("join", self.c.join(name, u)),
                ("me", self.c.me(name, u)),
                ("leave", self.c.leave(name, u)),
                ("consume", self.c.consume(name, "a.b.c")),
                ("verify", self.c.verify(name, "a.b.c")),
                ("admin PUT", self.c.put_queue(name, {"admitPerSecond": 1})),
                ("admin GET", self.c.get_queue(name)),
            ]:
                with self.subTest(name=name, route=what):
                    self.assertError(r, 400, "INVALID_QUEUE_NAME", "%s %s" % (what, name))
        # 64 characters is fine
        ok = "Q" * 60 + uid("")[:4]
        r = self.c.put_queue(ok, {"admitPerSecond": 1, "paused": True})
        self.addCleanup(self.c.delete_queue, ok)
        self.assertEqual(r.status, 200, repr(r))
        r = self.c.join(ok, u)
        self.assertEqual(r.status, 200, repr(r))

    def test_invalid_user_ids_header_mode(self):
        q = self.new_queue(HOLD)
        bad = [("129 chars", {"X-User-Id": "u" * 129}), ("'<'", {"X-User-Id": "a<b"}),
               ("space", {"X-User-Id": "a b"}), ("slash", {"X-User-Id": "a/b"}),
               ("missing", {}), ("empty", {"X-User-Id": ""})]
        for what, h in bad:
            for route, r in [("join", self.c.join(q, None, h)), ("me", self.c.me(q, None, h)),
                             ("leave", self.c.leave(q, None, h))]:
                with self.subTest(user=what, route=route):
                    self.assertError(r, 400, "INVALID_USER_ID", "%s %s" % (route, what))
        self.assertEqual(self.stats(q)["waiting"], 0, "an error must not change state")
        # the whole allowed alphabet, 128 chars, is accepted
        good = ("aZ09._~:@+-" * 12)[:128]
        self.assertWaiting(self.c.join(q, good), 1, 1, eta_null=True)

    def test_body_over_4k_on_join_and_consume_is_413(self):
        q = self.new_queue(HOLD)
        port = self.srv.port
        big = json.dumps({"pad": "x" * 5000}).encode()
        for what, path, hdrs, chunked in [
            ("join", "/v1/queues/%s/entries" % q, {"X-User-Id": uid()}, False),
            ("consume", "/v1/queues/%s/tokens/consume" % q, {}, False),
            ("join chunked", "/v1/queues/%s/entries" % q, {"X-User-Id": uid()}, True),
            ("consume chunked", "/v1/queues/%s/tokens/consume" % q, {}, True),
        ]:
            with self.subTest(what):
                hdrs = dict(hdrs, **{"Content-Type": "application/json"})
                r = raw_request(port, "POST", path, hdrs, big, chunked=chunked)
                self.assertIsNotNone(r, "%s: connection closed without an answer" % what)
                self.assertError(r, 413, "PAYLOAD_TOO_LARGE", what)
        self.assertEqual(self.stats(q)["waiting"], 0, "a 413 join must not join")
        # 4 KiB itself is within the limit for consume (answer is about the token)
        body = json.dumps({"token": "a.b.c", "pad": ""}).encode()
        body = body[:-2] + b" " * (4096 - len(body)) + body[-2:]
        self.assertEqual(len(body), 4096)
        r = raw_request(port, "POST", "/v1/queues/%s/tokens/consume" % q,
                        {"Content-Type": "application/json"}, body)
        self.assertIsNotNone(r)
        self.assertNotEqual(r.status, 413, "exactly 4096 bytes is allowed: %r" % r)

    def test_body_over_64k_on_admin_put_is_413(self):
        name = "big-" + uid("")
        body = json.dumps({"admitPerSecond": 5,
                           "targetUrl": "https://x.example/" + "a" * 70000}).encode()
        r = raw_request(self.srv.port, "PUT", "/v1/admin/queues/" + name,
                        dict(ADMIN, **{"Content-Type": "application/json"}), body)
        self.assertIsNotNone(r, "connection closed without an answer")
        # status only: docs/API.md says libevent answers this one with its own HTML body
        self.assertEqual(r.status, 413, "admin PUT 70 KB: %r" % r)
        self.assertError(self.c.get_queue(name), 404, "QUEUE_NOT_FOUND",
                         "a 413 PUT must not create the queue")

    def test_non_json_bodies_are_400_bad_request(self):
        q = self.new_queue(HOLD)
        for body in ["not json", "{", "[]"]:
            with self.subTest(consume=body):
                r = self.c.request("POST", "/v1/queues/%s/tokens/consume" % q, {}, body)
                self.assertError(r, 400, "BAD_REQUEST", "consume body %r" % body)
        name = "nj-" + uid("")
        before = self.config(q)
        for body in ["not json", "{\"admitPerSecond\": 5",
                     "{\"admitPerSecond\": -5, \"admitPerSecond\": 3}",
                     "{\"admitPerSecond\": 1\x00}"]:
            with self.subTest(put=body):
                r = self.c.request("PUT", "/v1/admin/queues/" + name, ADMIN, body)
                self.assertError(r, 400, "BAD_REQUEST", "admin PUT body %r" % body)
            with self.subTest(patch=body):
                r = self.c.request("PATCH", "/v1/admin/queues/" + q, ADMIN, body)
                self.assertError(r, 400, "BAD_REQUEST", "admin PATCH body %r" % body)
        # an escaped NUL in a string: refused in the client's words (not
        # the JSON library's flag name), nothing changed
        r = self.c.request("PATCH", "/v1/admin/queues/" + q, ADMIN,
                           '{"message": "a\\u0000b"}')
        self.assertError(r, 400, "BAD_REQUEST", "an escaped NUL")
        self.assertIn("NUL", r.json["message"])
        self.assertNotIn("JSON_ALLOW_NUL", r.json["message"])
        # a key given twice changed nothing
        self.assertEqual(self.config(q), before, "a refused PATCH changed the config")
        self.assertError(self.c.get_queue(name), 404, "QUEUE_NOT_FOUND", "a refused PUT created it")
        self.assertError(self.c.get_queue(name), 404, "QUEUE_NOT_FOUND",
                         "a 400 PUT must not create the queue")

    def test_unknown_queue_on_every_queue_route(self):
        q = "missing-" + uid("")
        u = uid()
        for what, r in [("join", self.c.join(q, u)), ("me", self.c.me(q, u)),
                        ("leave", self.c.leave(q, u)),
                        ("consume bearer", self.c.consume(q, "a.b.c")),
                        ("consume no token", self.c.consume(q)),
                        ("verify", self.c.verify(q, "a.b.c")),
                        ("verify no token", self.c.verify(q)),
                        ("admin PATCH", self.c.patch_queue(q, {"paused": True})),
                        ("admin GET", self.c.get_queue(q)),
                        ("admin DELETE", self.c.delete_queue(q))]:
            with self.subTest(what):
                self.assertError(r, 404, "QUEUE_NOT_FOUND", what)
        self.assertError(self.c.get_queue(q), 404, "QUEUE_NOT_FOUND",
                         "PATCH of a missing queue must not create it")


class HeadRequests(WRTest):
    """HEAD answers headers only (a body would put a keep-alive connection
    out of step), and HEAD of the queue page does not join the line."""

    def test_head_has_no_body_and_no_side_effect(self):
        q = self.new_queue(HOLD)
        port = self.c.port
        reqs = ("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                "HEAD /q/%s HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n\r\n"
                "HEAD /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % (q, uid()))
        text = exchange(port, reqs.encode())
        # four status lines, in order; the only body is the GET's
        self.assertEqual(text.count("HTTP/1.1 "), 4, text)
        self.assertEqual(text.count('{"status":"ok"}'), 1, text)
        parts = text.split("HTTP/1.1 ")[1:]
        self.assertTrue(parts[0].startswith("200"), text)
        self.assertTrue(parts[0].endswith("\r\n\r\n"), "HEAD /healthz carried a body: %r" % parts[0])
        self.assertTrue(parts[2].startswith("200") and parts[2].endswith("\r\n\r\n"), text)
        self.assertTrue(parts[3].startswith("404") and parts[3].endswith("\r\n\r\n"), text)
        self.assertEqual(self.stats(q)["waiting"], 0, "HEAD /q/{queue} joined the line")


class AmbiguousFraming(WRTest):
    """Request smuggling (RFC 9112 6.3): a request with two different
    Content-Length values, or Content-Length with Transfer-Encoding, is
    answered 400 and the connection is closed, so bytes that evhttp would
    read as a second request on it are never served."""

    def exchange(self, data):
        return exchange(self.c.port, data)

    def test_conflicting_content_length_and_te(self):
        q = self.new_queue(HOLD)
        smuggled = ("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                    "Content-Length: 0\r\n\r\n" % (q, uid()))
        cases = {
            "two Content-Length": "Content-Length: 0\r\nContent-Length: %d\r\n" % len(smuggled),
            "Content-Length and chunked": "Content-Length: %d\r\nTransfer-Encoding: chunked\r\n"
                                          % len(smuggled),
        }
        for name, framing in cases.items():
            with self.subTest(name):
                body = smuggled if "chunked" not in framing else \
                    "%x\r\n%s\r\n0\r\n\r\n" % (len(smuggled), smuggled)
                req = ("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n%s\r\n%s"
                       % (q, uid(), framing, body))
                text = self.exchange(req.encode())
                self.assertEqual(text.count("HTTP/1.1 "), 1, text)
                self.assertTrue(text.startswith("HTTP/1.1 400"), text)
                self.assertIn("Connection: close", text)
                if "chunked" not in framing:
                    self.assertIn('"error":"BAD_REQUEST"', text)
                # (Content-Length with chunked: libevent 2.1 refuses the
                # chunked body itself, with its own HTML 400, and closes.)
        # neither the outer nor the smuggled join reached the line
        self.assertEqual(self.stats(q)["waiting"], 0)
        # the same Content-Length twice is not ambiguous
        u = uid()
        text = self.exchange(("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                              "Content-Length: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                              % (q, u)).encode())
        self.assertTrue(text.startswith("HTTP/1.1 200"), text)
        self.assertEqual(self.stats(q)["waiting"], 1)
