"""Queue config fields (src/core/qconfig.c's table): K34 (an "...At" field
in seconds is refused), and on Redis the config hash the scripts read: the
same fields and values as before the table, and a config stored before
K34 (opensAt in seconds) still reads. Both stores unless marked."""
import json

from harness import ENV, HOLD, WRTest, now_ms


class ConfigFields(WRTest):

    def assertSecondsRefused(self, r, what):
        self.assertError(r, 400, "INVALID_CONFIG", what)
        self.assertEqual(r.json.get("field"), "opensAt", "%s: %r" % (what, r))
        self.assertIn("epoch milliseconds", r.json["message"], "%s: %r" % (what, r))

    def test_opens_at_in_seconds_refused(self):
        """K34: {"opensAt": <now + 3600 in seconds>} is 400 INVALID_CONFIG
        naming opensAt and saying "epoch milliseconds", in a PUT and in a
        PATCH, and changes nothing; the same moment in ms is accepted."""
        secs = now_ms() // 1000 + 3600
        r = self.c.put_queue("k34-" + str(secs), dict(HOLD, opensAt=secs))
        self.assertSecondsRefused(r, "PUT")
        self.assertEqual(self.c.get_queue("k34-" + str(secs)).status, 404, "PUT created nothing")
        q = self.new_queue(HOLD)
        for bad in (secs, 0, 1, 99999999999):
            self.assertSecondsRefused(self.c.patch_queue(q, {"opensAt": bad}), "PATCH %d" % bad)
            self.assertIsNone(self.config(q)["opensAt"], "PATCH %d changed nothing" % bad)
        r = self.c.patch_queue(q, {"opensAt": secs * 1000})
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(self.config(q)["opensAt"], secs * 1000)
        self.assertEqual(self.c.patch_queue(q, {"opensAt": 100000000000}).status, 200)
        self.assertEqual(self.config(q)["opensAt"], 100000000000)

    # ---------------------------------------------------------- Redis only
    def test_redis_config_hash_fields(self):
        """The config hash holds the fields the Lua scripts read, under the
        names and in the forms they had before the field table (existing
        data reads on): one PUT, every field checked."""
        self.redis_only()
        at = now_ms() + 3600000
        q = self.new_queue(dict(HOLD, admitPerSecond=33.3, tickMs=250, maxActive=9,
                                maxQueueSize=7, tokenTtlSeconds=60, sessionSeconds=900,
                                idleTimeoutSeconds=0, opensAt=at, preQueueShuffle=False,
                                enabled=True, paused=True))
        r = ENV.redis.client()
        try:
            flat = r.cmd("HGETALL", "wr:{%s}:config" % q)
        finally:
            r.close()
        h = dict(zip(flat[0::2], flat[1::2]))
        # (a new field may add a hash field; these must stay as they are)
        want = {"enabled": "1", "paused": "1", "rate": "33.299999999999997", "tickMs": "250",
                "maxActive": "9", "maxQueueSize": "7", "ttlSec": "60", "sessionSec": "900",
                "idleSec": "0", "opensAt": str(at), "shuffle": "0"}
        self.assertEqual({k: h.get(k) for k in want}, want)
        self.assertIn("version", h)
        self.assertEqual(json.loads(h["json"])["opensAt"], at)
        # null opensAt is the empty string; the tick change is seen
        self.assertEqual(self.c.patch_queue(q, {"opensAt": None, "tickMs": 100}).status, 200)
        r = ENV.redis.client()
        try:
            self.assertEqual(r.cmd("HMGET", "wr:{%s}:config" % q, "opensAt", "tickMs"),
                             ["", "100"])
        finally:
            r.close()

    def test_redis_opens_at_seconds_stored_before_k34_reads(self):
        """A config written before K34 with opensAt in seconds (a moment in
        1970) still reads: GET shows it and a join enters the line (the
        opening is long past), as before."""
        self.redis_only()
        q = self.new_queue(HOLD)
        secs = now_ms() // 1000
        r = ENV.redis.client()
        try:
            key = "wr:{%s}:config" % q
            stored = json.loads(r.cmd("HGET", key, "json"))
            stored["opensAt"] = secs
            r.cmd("HSET", key, "json", json.dumps(stored), "opensAt", str(secs))
            r.cmd("HINCRBY", key, "version", 1)  # caches reload the JSON
        finally:
            r.close()
        got = self.c.get_queue(q)
        self.assertEqual(got.status, 200, repr(got))
        self.assertEqual(got.json["config"]["opensAt"], secs)
        j = self.join_ok(q, "legacy-user")
        self.assertEqual(j["status"], "waiting", j)
