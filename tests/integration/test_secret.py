"""A Redis restarted empty (API 1.2 "Clarifications": "A Redis that lost its
data", "Secret write-back"; case K31).

Every test runs a private redis-server without persistence and instances
whose token secret is shared through the store (no --token-secret), then
restarts that Redis empty on the same port. Instances that hold the secret
write it back (set-if-absent) within 5 s; an instance that finds another
secret there adopts it and keeps its own as the previous secret (and so do
the others, through the store); the queues the config file declares come
back as at start; the log says what was restored.
"""
import json
import os
import secrets
import time

from harness import ENV, RedisServer, WRTest, Waitroomd, uid

WRITE_BACK_S = 5.0


class SecretWriteBack(WRTest):

    def setUp(self):
        super().setUp()
        self.redis_only()
        self.redis = RedisServer(ENV.tmpdir)
        self.addCleanup(lambda: self.redis.stop())
        self.url = "redis://127.0.0.1:%d" % self.redis.port
        self.q = "k31-" + uid()
        self.ini = os.path.join(ENV.tmpdir, "k31-%s.ini" % uid())
        with open(self.ini, "w") as f:
            f.write("[queue %s]\nadmitPerSecond = 1000\ntickMs = 50\nmaxQueueSize = 777\n"
                    % self.q)

    def instance(self):
        w = Waitroomd(ENV.waitroomd, self.url, None, ENV.tmpdir, identity="header:X-User-Id",
                      extra=["--config", self.ini, "--log-format", "json"], log_level="info")
        self.addCleanup(w.kill)
        return w

    def restart_redis_empty(self):
        port = self.redis.port
        self.redis.kill()
        self.redis = RedisServer(ENV.tmpdir, port=port)

    def secret_sha1(self):
        """SHA-1 of the stored token secret (binary: the RESP client reads
        text), or None."""
        r = self.redis.client()
        try:
            return r.cmd("EVAL", "local v = redis.call('GET', KEYS[1]) "
                         "if v then return redis.sha1hex(v) end return false", 1, "wr:secret")
        finally:
            r.close()

    def pass_from(self, w, with_user=False):
        user = uid("p-")
        tok = self.admit(self.q, user, client=w.client)
        return (user, tok) if with_user else tok

    def token_record(self, user):
        """The store's record of user's live pass (what Redis lost)."""
        r = self.redis.client()
        try:
            return (r.cmd("HGET", "wr:{%s}:tokens" % self.q, user),
                    r.cmd("ZSCORE", "wr:{%s}:active" % self.q, user))
        finally:
            r.close()

    def put_back(self, user, rec):
        """Makes user's pass live again in the emptied store, so that only
        its signature decides."""
        r = self.redis.client()
        try:
            r.cmd("HSET", "wr:{%s}:tokens" % self.q, user, rec[0])
            r.cmd("ZADD", "wr:{%s}:active" % self.q, rec[1], user)
        finally:
            r.close()

    def wait_accepts(self, ws, token, what):
        for w in ws:
            self.poll_until(lambda: w.client.verify(self.q, token).status, lambda s: s == 204,
                            timeout=WRITE_BACK_S + 3, what=what)

    def log(self, w):
        w.err.flush()
        with open(w.errpath, "rb") as f:
            return [json.loads(ln) for ln in f.read().decode(errors="replace").splitlines()
                    if ln.startswith("{")]

    def test_k31_secret_written_back(self):
        """K31: after Redis restarts empty, the instances that held the
        token secret write it back (set-if-absent) within 5 s, every
        instance - also one started after the restart - accepts every
        other's passes, the declared queue is back with its config, and
        the log says what was restored."""
        a, b = self.instance(), self.instance()
        secret = self.secret_sha1()
        self.assertIsNotNone(secret)
        user, old = self.pass_from(a, with_user=True)
        rec = self.token_record(user)
        self.assertEqual(b.client.verify(self.q, old).status, 204)

        self.restart_redis_empty()
        t0 = time.monotonic()
        r = self.redis.client()
        self.addCleanup(r.close)
        self.poll_until(self.secret_sha1, lambda v: v is not None,
                        timeout=WRITE_BACK_S, what="the secret written back")
        self.assertEqual(self.secret_sha1(), secret, "the secret held before")
        self.poll_until(lambda: a.client.get_queue(self.q).status, lambda s: s == 200,
                        timeout=WRITE_BACK_S, what="the declared queue written back")
        self.assertLess(time.monotonic() - t0, WRITE_BACK_S + 1)
        self.assertEqual(a.client.get_queue(self.q).json["config"]["maxQueueSize"], 777)

        c = self.instance()  # after the restart: loads the same secret
        # live in the store again (put back before anyone asks: an instance
        # keeps a pass the store answered consumed refused, K33), so that
        # only its signature decides
        self.put_back(user, rec)
        for w in (a, b, c):
            self.assertEqual(w.client.verify(self.q, old).status, 204, "a pass from before")
        for issuer in (a, b, c):
            tok = self.pass_from(issuer)
            self.wait_accepts([a, b, c], tok, "a pass from after the restart")
        logs = self.log(a) + self.log(b)
        msgs = [e["msg"] for e in logs]
        self.assertTrue(any("token secret was written back" in m for m in msgs), msgs[-20:])
        self.assertTrue(any("writing back the 1 queue" in m for m in msgs), msgs[-20:])
        self.assertTrue(any(e.get("msg", "").startswith("queue %s created" % self.q)
                            for e in logs), msgs[-20:])

    def test_k31_another_secret_first_is_adopted(self):
        """K31: an instance that finds another secret in the emptied store
        (written first by an instance started meanwhile) adopts it and
        keeps its own as the previous secret: passes issued before stay
        valid everywhere - also at the new instance, which learns the
        previous secret from the store - and the new ones too."""
        a, b = self.instance(), self.instance()
        user, old_a = self.pass_from(a, with_user=True)
        rec = self.token_record(user)
        self.restart_redis_empty()
        r = self.redis.client()
        self.addCleanup(r.close)
        other = secrets.token_bytes(32)
        # another instance's secret lands first (before a and b reconnect)
        self.assertEqual(r.cmd("SET", "wr:secret", other, "NX"), "OK")
        c = self.instance()  # started on the other secret
        # a's and b's old secret becomes the store's previous one
        self.poll_until(lambda: r.cmd("EXISTS", "wr:secret:previous"), lambda v: v == 1,
                        timeout=WRITE_BACK_S, what="the previous secret in the store")
        self.poll_until(lambda: a.client.get_queue(self.q).status, lambda s: s == 200,
                        timeout=WRITE_BACK_S, what="the declared queue written back")
        # the old pass live in the store again (put back before anyone asks:
        # an instance keeps a pass the store answered consumed refused,
        # K33): valid at every instance, also at c, which never held the
        # old secret (it learns it from the store)
        self.put_back(user, rec)
        self.wait_accepts([a, b, c], old_a, "a pass signed with the secret before")
        # passes issued now, by any instance, are valid at every instance
        for issuer in (a, b, c):
            tok = self.pass_from(issuer)
            self.wait_accepts([a, b, c], tok, "a pass from after the restart")
        msgs = [e["msg"] for e in self.log(a) + self.log(b)]
        self.assertTrue(any("adopted it" in m for m in msgs), msgs[-20:])
        self.assertTrue(any("previous token secret loaded from the store" in m
                            for m in [e["msg"] for e in self.log(c)]), msgs[-20:])
