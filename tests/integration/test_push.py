"""Web Push (API 1.3, "Your turn, off the page", issue 40): the key and
subscription routes, and one real push per admission to the stand-in push
service (tests/push/pushservice.py: it checks VAPID and decrypts), allowed
through --push-allow-host.

Every rule is tested on both stores (--store memory and --store redis);
the embedded store's snapshot keeps the subscriptions, and on Redis two
instances send exactly one push per admission (the admit call that admits
a person claims their subscription). test_cluster.py has the same on Redis
Cluster."""
import base64
import os
import signal
import sys
import tempfile
import time

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from harness import ENV, HOLD, Waitroomd, WRTest, uid
from helpers import memory_server, metric, private_server

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "push"))
from pushservice import PushService, b64d, b64e  # noqa: E402

SUBJECT = "mailto:ops@shop.example"
TTL = 120  # tokenTtlSeconds of the test queues


def ua_keys():
    """A browser's subscription keys: (private key, p256dh, auth)."""
    priv = ec.generate_private_key(ec.SECP256R1())
    pub = priv.public_key().public_bytes(serialization.Encoding.X962,
                                         serialization.PublicFormat.UncompressedPoint)
    return priv, b64e(pub), b64e(os.urandom(16))


class Push(WRTest):

    def setUp(self):
        super().setUp()
        self.priv, self.p256dh, self.auth = ua_keys()
        self.svc = PushService(self.priv, b64d(self.auth), expect_sub=SUBJECT).start()
        self.addCleanup(self.svc.stop)
        self.w = private_server(self, identity="header:X-User-Id", extra=[
            "--push-subject", SUBJECT, "--push-allow-host", "127.0.0.1:%d" % self.svc.port])
        self.pc = self.w.client

    def memory_only(self, why):
        if ENV.store != "memory":
            self.skipTest(why)

    def sub(self, kind="ok", **extra):
        body = {"endpoint": "http://127.0.0.1:%d/%s/%s" % (self.svc.port, kind, uid()),
                "keys": {"p256dh": self.p256dh, "auth": self.auth}}
        body.update(extra)
        return body

    def put_sub(self, q, u, body):
        return self.pc.request("PUT", "/v1/queues/%s/entries/me/push" % q,
                               headers=self.pc.uh(u), body=body)

    def push_queue(self, **cfg):
        return self.new_queue(dict(dict(HOLD, push=True, tokenTtlSeconds=TTL), **cfg),
                              client=self.pc)

    def pushes(self, q, outcome):
        return metric(self.pc, "waitroom_push_total", 'queue="%s",outcome="%s"' % (q, outcome))

    def records(self, n, timeout=5.0):
        return self.poll_until(lambda: list(self.svc.records), lambda r: len(r) >= n,
                               timeout=timeout, what="%d push(es) at the stand-in" % n)

    # -- config ------------------------------------------------------------
    def test_push_needs_subject_and_store(self):
        # the shared server has no --push-subject
        r = self.c.put_queue("push-" + uid(), dict(HOLD, push=True))
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json.get("field"), "push", repr(r))
        q = self.new_queue(HOLD)
        r = self.c.patch_queue(q, {"push": True})
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json.get("field"), "push", repr(r))
        # with --push-subject, on either store (both keep subscriptions)
        r = self.pc.put_queue("push-" + uid(), dict(HOLD, push=True))
        self.assertIn(r.status, (200, 201), repr(r))

    # -- routes ------------------------------------------------------------
    def test_routes_when_off(self):
        q = self.new_queue(HOLD, client=self.pc)
        u = uid()
        self.assertEqual(self.pc.join(q, u).status, 200)
        r = self.pc.get("/v1/queues/%s/push/key" % q)
        self.assertError(r, 404, "PUSH_NOT_ENABLED")
        self.assertError(self.put_sub(q, u, self.sub()), 404, "PUSH_NOT_ENABLED")
        r = self.pc.request("DELETE", "/v1/queues/%s/entries/me/push" % q, headers=self.pc.uh(u))
        self.assertError(r, 404, "PUSH_NOT_ENABLED")

    def test_key_and_subscription_errors(self):
        q = self.push_queue()
        r = self.pc.get("/v1/queues/%s/push/key" % q)
        self.assertEqual(r.status, 200, repr(r))
        key = b64d(r.json["publicKey"])
        self.assertEqual((len(key), key[0]), (65, 4))
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key)  # on the curve
        self.assertEqual(self.pc.get("/v1/queues/%s/push/key" % q).json, r.json)  # stable
        u = uid()
        self.assertError(self.put_sub(q, u, self.sub()), 404, "NOT_IN_QUEUE")  # not in line
        self.assertEqual(self.pc.join(q, u).status, 200)
        bad_point = b64e(b"\x04" + b"\x01" * 64)
        for body, reason in (
                (dict(self.sub(), endpoint="ftp://x/y"), "endpoint"),
                (dict(self.sub(), endpoint="https://push.example/" + "a" * 1100), "endpoint"),
                (dict(self.sub(), endpoint="http://push.example/x"), "endpoint"),
                ({"endpoint": self.sub()["endpoint"],
                  "keys": {"p256dh": bad_point, "auth": self.auth}}, "p256dh"),
                ({"endpoint": self.sub()["endpoint"],
                  "keys": {"p256dh": self.p256dh, "auth": b64e(b"x" * 15)}}, "auth"),
                (self.sub(lang="xx"), "lang"),
                ("not an object", "endpoint")):
            with self.subTest(reason=reason, body=str(body)[:60]):
                r = self.put_sub(q, u, body)
                self.assertError(r, 400, "INVALID_SUBSCRIPTION")
                self.assertEqual(r.json.get("reason"), reason, repr(r))
        r = self.put_sub(q, u, self.sub(expirationTime=None, lang="ko"))
        self.assertEqual(r.status, 204, repr(r))
        r = self.pc.request("DELETE", "/v1/queues/%s/entries/me/push" % q, headers=self.pc.uh(u))
        self.assertEqual(r.status, 204, repr(r))

    # -- the push ----------------------------------------------------------
    def test_admission_sends_one_decrypted_push(self):
        q = self.push_queue()
        u, other = uid(), uid()
        self.assertEqual(self.pc.join(q, u).status, 200)
        self.assertEqual(self.pc.join(q, other).status, 200)
        self.assertEqual(self.put_sub(q, u, self.sub(lang="ko")).status, 204)
        self.assertEqual(self.put_sub(q, u, self.sub(lang="ko")).status, 204)  # replaces
        key = self.pc.get("/v1/queues/%s/push/key" % q).json["publicKey"]
        t0 = time.time()
        self.assertEqual(self.pc.patch_queue(q, {"paused": False}).status, 200)
        recs = self.records(1)
        time.sleep(0.5)  # a second push would come with the same tick
        self.assertEqual(len(self.svc.records), 1, self.svc.records)
        rec = recs[0]
        self.assertEqual(rec["errors"], [], rec)
        self.assertLess(rec["time"] - t0, 1.5, "push within 1 s of the admission")
        p = rec["payload"]
        self.assertEqual((p["queue"], p["status"], p["url"]), (q, "admitted", "/q/" + q), p)
        self.assertTrue(p["title"].strip() and p["body"].strip(), p)
        self.assertNotEqual(p["title"].isascii(), True, "Korean title: %r" % p)
        me = self.pc.me(q, u).json
        self.assertEqual(me["status"], "admitted", me)
        self.assertEqual(p["expiresAt"], me["expiresAt"], (p, me))
        h = rec["headers"]
        self.assertEqual(h["urgency"], "high")
        self.assertTrue(TTL - 3 <= int(h["ttl"]) <= TTL, h["ttl"])
        self.assertEqual(len(h["topic"]), 32)
        self.assertNotIn(u, h["topic"])
        self.assertEqual(h["authorization"].split("k=")[1], key)
        self.assertEqual(rec["claims"]["sub"], SUBJECT)
        m = self.pushes(q, "delivered")
        self.assertEqual(m, 1)
        # claimed: delivered once, then gone from the store (a DELETE finds an admitted person)
        r = self.pc.request("DELETE", "/v1/queues/%s/entries/me/push" % q, headers=self.pc.uh(u))
        self.assertError(r, 404, "NOT_IN_QUEUE")

    def test_push_off_drops_subscriptions(self):
        """Turning a queue's push off drops its subscriptions: stats
        subscribed 0 at once, and nobody is pushed to at their admission,
        even after push is on again (they must subscribe again)."""
        q = self.push_queue()
        users = [uid() for _ in range(2)]
        for u in users:
            self.assertEqual(self.pc.join(q, u).status, 200)
            self.assertEqual(self.put_sub(q, u, self.sub()).status, 204)
        self.assertEqual(self.stats(q, client=self.pc)["subscribed"], 2)
        self.assertEqual(self.pc.patch_queue(q, {"push": False}).status, 200)
        self.assertEqual(self.stats(q, client=self.pc)["subscribed"], 0)
        self.assertEqual(self.pc.patch_queue(q, {"push": True}).status, 200)
        self.assertEqual(self.stats(q, client=self.pc)["subscribed"], 0)
        n0 = len(self.svc.records)
        self.assertEqual(self.pc.patch_queue(q, {"paused": False}).status, 200)
        for u in users:
            self.wait_admitted(q, u, client=self.pc)
        time.sleep(0.5)  # a push would come with the admitting tick
        self.assertEqual(len(self.svc.records), n0, self.svc.records[n0:])
        self.assertEqual(self.pushes(q, "delivered") + self.pushes(q, "failed"), 0)

    def test_admin_json_subscribed_and_pushes(self):
        """The queue's admin JSON: stats subscribed (the live subscriptions,
        store-wide; also the gauge waitroom_push_subscribed) follows PUT,
        DELETE, leave and the admission's claim; stats push counts this
        instance's pushes by outcome, only for a queue with push on."""
        q = self.push_queue()
        zero = {"delivered": 0, "gone": 0, "failed": 0, "retried": 0}
        st = self.stats(q, client=self.pc)
        self.assertEqual((st["subscribed"], st["push"]), (0, zero), st)
        u1, u2, u3 = uid(), uid(), uid()
        for u in (u1, u2, u3):
            self.assertEqual(self.pc.join(q, u).status, 200)
            self.assertEqual(self.put_sub(q, u, self.sub()).status, 204)
        self.assertEqual(self.put_sub(q, u1, self.sub()).status, 204)  # replaces: still 3
        self.assertEqual(self.stats(q, client=self.pc)["subscribed"], 3)
        self.poll_until(lambda: metric(self.pc, "waitroom_push_subscribed", 'queue="%s"' % q),
                        lambda v: v == 3, timeout=5, what="the gauge at 3")
        r = self.pc.request("DELETE", "/v1/queues/%s/entries/me/push" % q, headers=self.pc.uh(u2))
        self.assertEqual(r.status, 204, repr(r))
        self.assertEqual(self.pc.leave(q, u3).status, 204)
        st = self.stats(q, client=self.pc)
        self.assertEqual((st["subscribed"], st["push"]), (1, zero), st)
        # the list answers the same
        r = self.pc.list_queues()
        mine = [x for x in r.json["queues"] if x["name"] == q]
        self.assertEqual((mine[0]["stats"]["subscribed"], mine[0]["stats"]["push"]), (1, zero))
        self.assertEqual(self.pc.patch_queue(q, {"paused": False}).status, 200)
        self.records(1)
        st = self.poll_until(lambda: self.stats(q, client=self.pc),
                             lambda s: s["push"]["delivered"] == 1, timeout=5,
                             what="one push delivered in the admin JSON")
        self.assertEqual((st["subscribed"], st["push"]), (0, dict(zero, delivered=1)), st)
        self.poll_until(lambda: metric(self.pc, "waitroom_push_subscribed", 'queue="%s"' % q),
                        lambda v: v == 0, timeout=5, what="the gauge back at 0")
        # push off: the count stays (0), no push object
        off = self.new_queue(HOLD, client=self.pc)
        st = self.stats(off, client=self.pc)
        self.assertEqual(st["subscribed"], 0)
        self.assertNotIn("push", st)

    def test_gone_and_retries(self):
        q = self.push_queue()
        users = {}
        for kind in ("gone", "rate", "flaky"):
            u = uid()
            users[kind] = u
            self.assertEqual(self.pc.join(q, u).status, 200)
            self.assertEqual(self.put_sub(q, u, self.sub(kind)).status, 204)
        self.assertEqual(self.pc.patch_queue(q, {"paused": False}).status, 200)
        # gone: 1; rate: 429 then 201 (2); flaky: 500, 500, 201 (3)
        self.records(6, timeout=15)
        by = {}
        for rec in self.svc.records:
            by.setdefault(rec["path"].split("/")[1], []).append(rec)
        self.assertEqual({k: len(v) for k, v in by.items()}, {"gone": 1, "rate": 2, "flaky": 3})
        rate = by["rate"]
        self.assertGreaterEqual(rate[1]["time"] - rate[0]["time"], 0.9, "Retry-After: 1 honoured")
        for outcome, n in (("gone", 1), ("delivered", 2), ("retried", 3)):
            self.poll_until(lambda: self.pushes(q, outcome),
                            lambda v: v == n, timeout=5, what="%s == %d" % (outcome, n))
        # the admin JSON tells the same counts (this instance's)
        self.assertEqual(self.stats(q, client=self.pc)["push"],
                         {"delivered": 2, "gone": 1, "failed": 0, "retried": 3})

    def test_key_follows_a_rotated_token_secret(self):
        """Without --push-key the key is derived from the token secret: after
        a rotation (SIGHUP) the route gives the new key, and a push to a
        subscription made with it is signed with it too (the sender made at
        the first push once kept the old key until a restart)."""
        self.memory_only("a memory server of its own (the rotation is the same on Redis)")
        ini = os.path.join(ENV.tmpdir, "push-%s.ini" % uid())

        def write(secret):
            with open(ini + ".new", "w") as f:
                f.write("[server]\ntoken_secret = %s\n" % secret)
            os.replace(ini + ".new", ini)

        write("first-push-secret-" + "a" * 40)
        w = Waitroomd(ENV.waitroomd, "memory", None, ENV.tmpdir, identity="header:X-User-Id",
                      extra=["--config", ini, "--push-subject", SUBJECT,
                             "--push-allow-host", "127.0.0.1:%d" % self.svc.port])
        self.addCleanup(w.kill)
        c = w.client
        q = self.new_queue(dict(HOLD, push=True, tokenTtlSeconds=TTL), client=c)

        def key():
            r = c.get("/v1/queues/%s/push/key" % q)
            self.assertEqual(r.status, 200, repr(r))
            return r.json["publicKey"]

        def admit_one_pushed():
            u = uid()
            self.assertEqual(c.join(q, u).status, 200)
            r = c.request("PUT", "/v1/queues/%s/entries/me/push" % q, headers=c.uh(u),
                          body=self.sub())
            self.assertEqual(r.status, 204, repr(r))
            n = len(self.svc.records)
            self.assertEqual(c.patch_queue(q, {"paused": False}).status, 200)
            rec = self.records(n + 1)[n]
            self.assertEqual(c.patch_queue(q, {"paused": True}).status, 200)
            return rec["headers"]["authorization"].split("k=")[1]

        k1 = key()
        self.assertEqual(admit_one_pushed(), k1)
        write("second-push-secret-" + "b" * 40)
        w.proc.send_signal(signal.SIGHUP)
        k2 = self.poll_until(key, lambda k: k != k1, what="the key of the new secret")
        self.assertEqual(admit_one_pushed(), k2, "the push signed with the key the route gives")

    def test_down_stops_at_pass_expiry(self):
        q = self.push_queue(tokenTtlSeconds=3)
        u = uid()
        self.assertEqual(self.pc.join(q, u).status, 200)
        self.assertEqual(self.put_sub(q, u, self.sub("down")).status, 204)
        self.assertEqual(self.pc.patch_queue(q, {"paused": False}).status, 200)
        self.poll_until(lambda: self.pushes(q, "failed"),
                        lambda v: v == 1, timeout=10, what="failed at the pass's expiry")
        n = len(self.svc.records)
        self.assertGreaterEqual(n, 2, "retried before the expiry")
        last = max(r["time"] for r in self.svc.records)
        time.sleep(1.5)
        self.assertEqual(len(self.svc.records), n, "no try after the pass expired")
        self.assertLess(last - self.svc.records[0]["time"], 3.5)

    def test_private_address_never_contacted(self):
        # no --push-allow-host for this port's address under another name
        q = self.push_queue()
        u = uid()
        self.assertEqual(self.pc.join(q, u).status, 200)
        # https on a loopback address: a valid subscription, refused by the address rule
        body = self.sub()
        body["endpoint"] = "https://127.0.0.2/ok/x"  # port 443, loopback: the address rule
        self.assertEqual(self.put_sub(q, u, body).status, 204)
        self.assertEqual(self.pc.patch_queue(q, {"paused": False}).status, 200)
        self.poll_until(lambda: self.pushes(q, "failed"),
                        lambda v: v == 1, timeout=5, what="refused")
        self.assertEqual(self.svc.connections, 0)

    def test_subscribed_person_is_never_away(self):
        q = self.push_queue(idleTimeoutSeconds=1)
        sub_u, idle_u = uid(), uid()
        self.assertEqual(self.pc.join(q, sub_u).status, 200)
        self.assertEqual(self.pc.join(q, idle_u).status, 200)
        self.assertEqual(self.put_sub(q, sub_u, self.sub()).status, 204)
        time.sleep(2.2)
        st = self.poll_until(lambda: self.stats(q, client=self.pc), lambda s: s["away"] >= 1,
                             timeout=5, what="the unsubscribed one away")
        self.assertEqual(st["away"], 1, st)
        self.assertEqual(self.pc.leave(q, sub_u).status, 204)
        self.assertEqual(self.pc.patch_queue(q, {"paused": False}).status, 200)
        time.sleep(1.0)
        self.assertEqual(self.svc.records, [], "left: the subscription was deleted")

    def test_subscribed_retry_not_capped_by_idle(self):
        # a 5 s band; idleTimeoutSeconds 2 caps an unsubscribed person's retry at 1 s
        q = self.push_queue(idleTimeoutSeconds=2, pollBands=[{"ms": 5000}], pollJitter=0)
        sub_u, plain_u = uid(), uid()
        for u in (plain_u, sub_u):
            self.assertEqual(self.pc.join(q, u).status, 200)
        self.assertEqual(self.put_sub(q, sub_u, self.sub()).status, 204)
        plain = self.pc.me(q, plain_u).json["retryAfterMs"]
        sub = self.pc.me(q, sub_u).json["retryAfterMs"]
        self.assertLessEqual(plain, 1000, "the idle cap")
        self.assertEqual(sub, 5000, "subscribed: the band, not the idle cap")

    def test_closing_push_once_per_closing(self):
        q = self.push_queue()
        users = [uid(), uid()]
        for u in users:
            self.assertEqual(self.pc.join(q, u).status, 200)
            self.assertEqual(self.put_sub(q, u, self.sub(lang="fr")).status, 204)
        self.assertEqual(self.pc.patch_queue(q, {"closed": True}).status, 200)
        recs = self.records(2)
        time.sleep(1.5)  # later ticks of the same closing push nothing
        self.assertEqual(len(self.svc.records), 2, self.svc.records)
        for rec in recs:
            self.assertEqual(rec["errors"], [], rec)
            p = rec["payload"]
            self.assertEqual((p["queue"], p["status"], p["reason"], p["url"]),
                             (q, "closed", "closed", "/q/" + q), p)
            self.assertNotIn("expiresAt", p)
            self.assertTrue(p["title"].strip() and p["body"].strip(), p)
            self.assertEqual(rec["headers"]["ttl"], "3600")
        # the subscriptions stay: a reopening and a second closing push again
        self.assertEqual(self.pc.patch_queue(q, {"closed": False}).status, 200)
        time.sleep(1.5)  # a tick (at least once a second) sees it open
        self.assertEqual(self.pc.patch_queue(q, {"closed": True}).status, 200)
        self.records(4)
        time.sleep(1.0)
        self.assertEqual(len(self.svc.records), 4, self.svc.records)

    def test_snapshot_keeps_subscriptions(self):
        self.memory_only("the embedded store's snapshot")
        data = tempfile.mkdtemp(prefix="wr-push-snap-", dir=ENV.tmpdir)
        extra = ["--push-subject", SUBJECT, "--push-allow-host", "127.0.0.1:%d" % self.svc.port]
        w = memory_server(self, data, extra)
        self.pc = w.client
        q = self.push_queue()
        u = uid()
        self.assertEqual(self.pc.join(q, u).status, 200)
        self.assertEqual(self.put_sub(q, u, self.sub(lang="de")).status, 204)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())
        w = memory_server(self, data, extra)
        self.pc = w.client
        self.assertEqual(self.pc.patch_queue(q, {"paused": False}).status, 200)
        rec = self.records(1)[0]
        self.assertEqual(rec["errors"], [], rec)
        self.assertEqual(rec["payload"]["status"], "admitted")
        self.assertEqual(rec["payload"]["title"], "Sie sind an der Reihe")  # its lang kept
        self.assertEqual(w.terminate(), 0, w.stderr_tail())

    def test_two_instances_one_push_per_admission(self):
        """Two instances on one Redis both tick the queue; people joined and
        subscribed through either: every admission is pushed exactly once
        (the admit call that admitted them claimed the subscription), by
        one instance or the other."""
        if ENV.store == "memory":
            self.skipTest("one instance per embedded store")
        # (the suite's shared servers tick the queue too, without push: what
        # they admit is handed over by a or b's next tick)
        extra = ["--push-subject", SUBJECT, "--push-allow-host", "127.0.0.1:%d" % self.svc.port]
        a = self.w
        b = private_server(self, identity="header:X-User-Id", extra=extra)
        q = self.new_queue(dict(HOLD, push=True, tokenTtlSeconds=TTL, admitPerSecond=20),
                           client=a.client)
        paths = set()
        for i in range(24):
            w = (a, b)[i % 2]
            u = uid()
            self.assertEqual(w.client.join(q, u).status, 200)
            body = self.sub()
            r = (b, a)[i % 2].client.request("PUT", "/v1/queues/%s/entries/me/push" % q,
                                             headers=w.client.uh(u), body=body)
            self.assertEqual(r.status, 204, repr(r))
            paths.add(body["endpoint"].split(str(self.svc.port), 1)[1])
        self.assertEqual(b.client.patch_queue(q, {"paused": False}).status, 200)
        self.poll_until(lambda: self.stats(q, client=a.client)["waiting"], lambda v: v == 0,
                        timeout=10, what="everyone admitted")
        recs = self.records(24, timeout=10)
        time.sleep(1.0)  # a second push of anyone would come by now
        recs = list(self.svc.records)
        self.assertEqual(sorted(r["path"] for r in recs), sorted(paths), "one push each")
        for rec in recs:
            self.assertEqual(rec["errors"], [], rec)
            self.assertEqual(rec["payload"]["status"], "admitted")
        sent = [metric(w.client, "waitroom_push_total", 'queue="%s",outcome="delivered"' % q)
                for w in (a, b)]
        self.assertEqual(sum(v or 0 for v in sent), 24, sent)
