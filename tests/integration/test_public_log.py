"""The public log (API 1.3, issue 38: "A line anyone can check", "The
opening draw, fixed in public"): a sale with a shuffled opening, away
people, a held return and a leave, checked end to end by the real
waitroom-verify against the real server (0 overtakes, the draw checked,
every receipt included); the routes' bytes, headers and bounds; publicLog
and draw's rules across the queue's state; a deleted queue's log still
readable; on the embedded store a restart that keeps the log consistent
(--state) and a leaf changed in the snapshot that the verifier catches
(exit 2). On Redis the same sale with its drawn opening and the beacon's
draw, two instances on one Redis writing one log that verifies across a
restart, and a shuffled opening with a beacon drawn once by two
instances."""
import base64
import hashlib
import http.server
import json
import os
import re
import subprocess
import tempfile
import threading
import time

from harness import ENV, FAST, HOLD, Waitroomd, WRTest, now_ms, uid
from helpers import memory_server, metrics, private_server

EMPTY_ROOT = base64.b64encode(hashlib.sha256(b"").digest()).decode()
IMMUTABLE = "public, max-age=31536000, immutable"


def secrets_hex(n):
    return os.urandom(n).hex()


def verifier():
    return os.path.join(os.path.dirname(os.path.abspath(ENV.waitroomd)), "waitroom-verify")


class PublicLog(WRTest):

    def memory_only(self):
        if ENV.store != "memory":
            self.skipTest("the embedded store's own: its data dir")

    def memory_with(self, data, *extra):
        """A header-mode waitroomd on the memory store with --data-dir data
        and extra flags, killed at cleanup."""
        w = Waitroomd(ENV.waitroomd, "memory", ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                      extra=["--data-dir", data] + list(extra))
        self.addCleanup(w.kill)
        return w

    def vkey(self, client=None):
        r = (client or self.c).get("/v1/log/key")
        self.assertEqual(r.status, 200, repr(r))
        return r.body.strip()

    def checkpoint(self, q, client=None):
        r = (client or self.c).get("/v1/queues/%s/log/checkpoint" % q)
        self.assertEqual(r.status, 200, repr(r))
        lines = r.body.split("\n")
        return r, int(lines[1]), lines[2]

    def signed(self, q, size, client=None, timeout=6.0):
        """Waits for a checkpoint of at least size leaves (signed within 2 s)."""
        return self.poll_until(lambda: self.checkpoint(q, client), lambda c: c[1] >= size,
                               timeout=timeout, what="a checkpoint of %d leaves" % size)

    def verify(self, q, server, *extra):
        out = subprocess.run([verifier()] + list(extra) +
                             ["http://127.0.0.1:%d" % server.port, q, self.vkey(server.client)],
                             capture_output=True, timeout=60)
        return out.returncode, out.stdout.decode(), out.stderr.decode()

    def leaves(self, q, size, client=None):
        r = (client or self.c).get("/v1/queues/%s/log/entries?start=0&end=%d" % (q, size))
        self.assertEqual(r.status, 200, repr(r))
        return [json.loads(x) for x in r.body.split("\n") if x]

    # ------------------------------------------------------------ Redis
    def test_shuffled_opening_two_instances(self):
        """Redis: two instances on one Redis, a shuffled opening with a
        beacon: joins through both (one commit, before the first), the
        opening waits for the round (a join meanwhile answered prequeue),
        one draw with the beacon's randomness whichever instance ran it,
        and waitroom-verify replays it: 0 overtakes, the draw checked and
        independent."""
        if ENV.store != "redis":
            self.skipTest("redis: several instances on one store")
        instance = self.private_redis_instances()
        a, b = instance(), instance()
        rnd = secrets_hex(32)
        opens = now_ms() + 2500
        srv, asked = self.beacon(4242, rnd, opens / 1000 + 1.5)
        url = "http://127.0.0.1:%d" % srv.server_address[1]
        q = uid("two-draw")
        r = a.client.put_queue(q, dict(FAST, publicLog=True, opensAt=opens,
                                       draw={"beaconUrl": url, "round": 4242}))
        self.assertEqual(r.status, 200, repr(r))
        early = [uid("early-") for _ in range(8)]
        for i, u in enumerate(early):
            r = (a if i % 2 else b).client.join(q, u)
            self.assertEqual(r.json["status"], "prequeue", repr(r))
            self.assertIn("receipt", r.json)
        while now_ms() < opens + 300:
            time.sleep(0.1)
        late = uid("late-")
        r = a.client.join(q, late)
        self.assertEqual(r.json["status"], "prequeue", repr(r))   # the opening waits
        for i, u in enumerate(early + [late]):
            self.wait_admitted(q, u, client=(a if i % 2 else b).client, timeout=15)
        self.assertIn("/public/4242", asked)
        _, size, _ = self.signed(q, 1 + 9 + 1 + 9, client=b.client)
        leaves = self.leaves(q, size, client=b.client)
        kinds = [x["e"] for x in leaves]
        self.assertEqual((kinds[0], kinds.count("commit"), kinds.count("draw")),
                         ("commit", 1, 1), kinds)
        draw = leaves[kinds.index("draw")]
        self.assertEqual((draw["n"], draw["round"], draw["randomness"], draw["beacon"]),
                         (8, 4242, rnd, url), draw)
        self.assertLess(kinds.index("draw"), kinds.index("admit"))
        rc, out, err = self.verify(q, a, "--json")
        self.assertEqual(rc, 0, out + err)
        s = json.loads(out)
        self.assertEqual((s["joined"], s["admitted"], s["overtakes"], s["draws"],
                          s["drawChecked"], s["drawIndependent"]), (9, 9, 0, 1, True, True), s)

    def test_two_instances_one_log(self):
        """Redis: two instances on one Redis write one log (each event's
        leaf in the script that makes the change, whichever instance sent
        it); the verifier replays it with 0 overtakes; after one instance
        is killed and another started, the next checkpoint is consistent
        with the one saved (--state), and both instances serve the same
        signed checkpoint."""
        if ENV.store != "redis":
            self.skipTest("redis: several instances on one store")
        instance = self.private_redis_instances()
        a, b = instance(), instance()
        q = uid("two")
        self.assertEqual(a.client.put_queue(q, dict(HOLD, publicLog=True)).status, 200)
        first = [uid("t-") for _ in range(10)]
        seen = set()
        for i, u in enumerate(first):
            r = (a if i % 2 else b).client.join(q, u)
            self.assertEqual(r.status, 200, repr(r))
            seen.add(r.json["receipt"]["index"])
        self.assertEqual(seen, set(range(10)))
        self.assertEqual(a.client.patch_queue(q, {"paused": False, "admitPerSecond": 20}).status,
                         200)
        for u in first:
            self.wait_admitted(q, u, client=b.client)
        self.signed(q, 20, client=a.client)
        state = os.path.join(ENV.tmpdir, "state-%s" % uid())
        rc, out, err = self.verify(q, a, "--json", "--state", state)
        self.assertEqual(rc, 0, out + err)
        s = json.loads(out)
        self.assertEqual((s["joined"], s["admitted"], s["overtakes"]), (10, 10, 0), s)
        a.kill()
        c = instance()
        later = [uid("t-") for _ in range(4)]
        for i, u in enumerate(later):
            self.assertEqual((c if i % 2 else b).client.join(q, u).status, 200)
        for u in later:
            self.wait_admitted(q, u, client=c.client)
        self.signed(q, 28, client=c.client)
        rc, out, err = self.verify(q, b, "--json", "--state", state)
        self.assertEqual(rc, 0, out + err)
        s = json.loads(out)
        self.assertEqual((s["joined"], s["admitted"], s["overtakes"], s.get("consistent")),
                         (14, 14, 0, True), s)
        self.assertEqual(self.vkey(b.client), self.vkey(c.client))
        cb = self.poll_until(lambda: (self.checkpoint(q, b.client)[0].body,
                                      self.checkpoint(q, c.client)[0].body),
                             lambda p: p[0] == p[1], what="one checkpoint on both")
        self.assertIn("\n28\n", cb[0])

    def redis_log_of_three(self):
        """Redis only: a private Redis and waitroomd, a queue with its log,
        three joins signed: (the instance, the queue, a Redis client)."""
        if ENV.store != "redis":
            self.skipTest("redis: the leaves in the store's keys")
        instance = self.private_redis_instances()
        w = instance()
        q = uid("rl")
        self.assertEqual(w.client.put_queue(q, dict(HOLD, publicLog=True)).status, 200)
        for _ in range(3):
            self.assertEqual(w.client.join(q, uid("j-")).status, 200)
        self.signed(q, 3, client=w.client)
        r = instance.redis.client()
        self.addCleanup(r.close)
        return w, q, r

    def test_corrupt_leaf_on_redis(self):
        """Redis: a leaf changed in the store after it was signed is caught
        by the verifier (exit 2: the leaves no longer give the signed
        root), and so is a leaf deleted (the log no longer serves it)."""
        w, q, r = self.redis_log_of_three()
        rc, out, err = self.verify(q, w)
        self.assertEqual(rc, 0, out + err)
        key = "wr:{%s}:logl" % q
        leaf = r.cmd("HGET", key, "1")
        self.assertTrue(leaf.startswith('{"e":"join"'), leaf)
        r.cmd("HSET", key, "1", leaf.replace('"e":"join"', '"e":"join" ', 1))
        rc, out, err = self.verify(q, w)
        self.assertEqual(rc, 2, out + err)
        r.cmd("HDEL", key, "1")
        rc, out, err = self.verify(q, w)
        self.assertNotEqual(rc, 0, out + err)

    def test_lost_leaves_on_redis_are_reported(self):
        """Redis: a log that lost leaves its checkpoint covered (a failover
        that lost writes, here by hand) answers 503 LOG_BROKEN on its
        routes, and the instance that found it logs it as an error and
        counts it in waitroom_log_broken_total, once."""
        w, q, r = self.redis_log_of_three()
        r.cmd("HDEL", "wr:{%s}:logl" % q, "2")
        r.cmd("HSET", "wr:{%s}:log" % q, "n", "2", "hs", "2")
        for _ in range(2):
            self.assertError(w.client.get("/v1/queues/%s/log/checkpoint" % q), 503, "LOG_BROKEN")
        self.poll_until(lambda: metrics(w).get(("waitroom_log_broken_total", ""), 0),
                        lambda v: v == 1, what="the broken log counted once")
        self.poll_until(lambda: w.stderr_tail(),
                        lambda t: "public log of queue %s: the log is shorter" % q in t,
                        what="the broken log logged")

    # ------------------------------------------------------------ routes
    def test_routes_bounds_and_headers(self):
        self.assertError(self.c.get("/v1/queues/never-%s/log/checkpoint" % uid()), 404,
                         "QUEUE_NOT_FOUND")
        q = self.new_queue(HOLD)
        self.assertIs(self.config(q)["publicLog"], False)
        self.assertIsNone(self.config(q)["draw"])
        for path in ("checkpoint", "entries?start=0&end=1", "proof/inclusion?index=0&size=1",
                     "proof/consistency?from=1&to=1"):
            self.assertError(self.c.get("/v1/queues/%s/log/%s" % (q, path)), 404,
                             "LOG_NOT_ENABLED", path)
        self.assertEqual(self.c.patch_queue(q, {"publicLog": True}).status, 200)
        # an empty log: size 0, the root of nothing
        r, size, root = self.signed(q, 0)
        self.assertEqual((size, root), (0, EMPTY_ROOT))
        self.assertTrue(r.headers["content-type"].startswith("text/plain"), repr(r))
        self.assertEqual(r.headers["cache-control"], "public, max-age=1")
        text = r.body
        name = self.vkey().split("+")[0]
        self.assertTrue(text.startswith("%s/%s\n0\n%s\n\n\u2014 %s " % (name, q, EMPTY_ROOT, name)),
                        text)
        self.assertTrue(text.endswith("\n"))
        users = [uid("p-") for _ in range(3)]
        for i, u in enumerate(users):
            r = self.c.join(q, u)
            self.assertEqual(r.status, 200, repr(r))
            rc = r.json["receipt"]
            self.assertEqual(rc["index"], i, repr(r))
            self.assertRegex(rc["u"], "^[0-9a-f]{32}$")
        _, size, _ = self.signed(q, 3)
        self.assertEqual(size, 3)
        r = self.c.get("/v1/queues/%s/log/entries?start=0&end=%d" % (q, size))
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(r.headers["content-type"], "application/x-ndjson")
        self.assertEqual(r.headers["cache-control"], IMMUTABLE)
        self.assertTrue(r.body.endswith("\n") and r.body.count("\n") == size, r.body)
        leaves = [x.encode() for x in r.body.split("\n")[:-1]]
        first = json.loads(leaves[0])
        self.assertEqual(list(first)[:4], ["e", "at", "u", "t"], first)
        # the receipt's hash is the leaf's RFC 9162 hash
        rc = self.c.me(q, users[0]).json["receipt"]
        self.assertEqual(rc["leafHash"],
                         base64.b64encode(hashlib.sha256(b"\0" + leaves[0]).digest()).decode())
        r = self.c.get("/v1/queues/%s/log/proof/inclusion?index=1&size=%d" % (q, size))
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(r.headers["cache-control"], IMMUTABLE)
        self.assertEqual((r.json["index"], r.json["size"]), (1, size))
        r = self.c.get("/v1/queues/%s/log/proof/consistency?from=%d&to=%d" % (q, size, size))
        self.assertEqual((r.status, r.json["hashes"]), (200, []), repr(r))
        for bad in ("entries?start=%d&end=%d" % (size, size + 1), "entries?start=1&end=1",
                    "entries?start=0&end=%d" % (size + 1), "entries?start=-1&end=1",
                    "entries?start=0", "proof/inclusion?index=%d&size=%d" % (size, size),
                    "proof/inclusion?index=0&size=%d" % (size + 1),
                    "proof/consistency?from=0&to=1", "proof/consistency?from=2&to=1",
                    "proof/consistency?from=1&to=%d" % (size + 1)):
            self.assertError(self.c.get("/v1/queues/%s/log/%s" % (q, bad)), 400, "BAD_REQUEST",
                             bad)
        # publicLog switches only while nobody is in line
        r = self.c.patch_queue(q, {"publicLog": False})
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json.get("field"), "publicLog", repr(r))
        # an http:// beacon only on loopback
        r = self.c.patch_queue(q, {"draw": {"beaconUrl": "http://beacon.example", "round": 1}})
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json.get("field"), "draw.beaconUrl", repr(r))

    def test_draw_fixed_once_committed(self):
        draw = {"beaconUrl": "https://api.drand.sh", "round": 5}
        q = self.new_queue(dict(HOLD, publicLog=True, opensAt=now_ms() + 60000, draw=draw))
        self.assertEqual(self.c.patch_queue(q, {"draw": dict(draw, round=6)}).status, 200)
        self.assertEqual(self.c.join(q, uid()).json["status"], "prequeue")
        r = self.c.patch_queue(q, {"draw": dict(draw, round=7)})
        self.assertError(r, 400, "INVALID_CONFIG")
        self.assertEqual(r.json.get("field"), "draw", repr(r))
        self.assertEqual(self.c.patch_queue(q, {"notice": "soon"}).status, 200)
        _, size, _ = self.signed(q, 2)
        commit = self.leaves(q, size)[0]
        self.assertEqual((commit["e"], commit["beacon"], commit["round"]),
                         ("commit", draw["beaconUrl"], 6), commit)

    # ------------------------------------------------------------ a sale
    def test_sale_verifies(self):
        """A shuffled opening of 6, 3 later joins, a leave, two people away
        (held), one of whom returns; every admission checked by
        waitroom-verify: 0 overtakes, the draw checked, receipts included;
        the queue deleted: removed leaves, the log still readable."""
        opens = now_ms() + 2500
        q = self.new_queue(dict(HOLD, publicLog=True, opensAt=opens, idleTimeoutSeconds=1,
                                awayHoldSeconds=60, preQueueShuffle=True))
        pre = [uid("pre-") for _ in range(6)]
        for u in pre:
            r = self.c.join(q, u)
            self.assertEqual(r.json["status"], "prequeue", repr(r))
            self.assertIn("receipt", r.json)
        self.poll_until(lambda: self.stats(q), lambda st: st["prequeue"] == 0, timeout=10,
                        what="the opening")
        late = [uid("late-") for _ in range(3)]
        for u in late:
            self.assertEqual(self.c.join(q, u).json["status"], "waiting")
        everyone = pre + late
        order = sorted(everyone, key=lambda u: self.c.me(q, u).json["position"])
        sleepers = order[:2]        # first in line: their turn comes while away
        leaver = order[4]
        self.assertEqual(self.c.leave(q, leaver).status, 204)
        active = [u for u in order if u not in sleepers and u != leaver]
        deadline = time.time() + 1.6
        while time.time() < deadline:   # the sleepers go away, the others keep polling
            for u in active:
                self.c.me(q, u)
            time.sleep(0.2)
        self.assertEqual(self.c.patch_queue(q, {"paused": False, "admitPerSecond": 4,
                                                "tickMs": 100}).status, 200)
        admitted = set()
        deadline = time.time() + 10
        while len(admitted) < len(active) and time.time() < deadline:
            for u in active:
                if u not in admitted and self.c.me(q, u).json["status"] == "admitted":
                    admitted.add(u)
            time.sleep(0.1)
        self.assertEqual(admitted, set(active))
        st = self.stats(q)
        self.assertEqual(st["held"], 2, st)
        r = self.c.me(q, sleepers[0])       # a held return
        self.assertIs(r.json.get("held"), True, repr(r))
        self.assertIn("receipt", r.json)
        me = r.json["receipt"]["u"]
        self.wait_admitted(q, sleepers[0])
        # 9 joins, commit and draw, a leave, 2 away, 7 admissions
        _, size, _ = self.signed(q, 9 + 2 + 1 + 2 + 7)
        rc, out, err = self.verify(q, self.srv, "--json")
        self.assertEqual(rc, 0, out + err)
        s = json.loads(out)
        self.assertEqual((s["joined"], s["admitted"], s["heldReturns"], s["overtakes"],
                          s["draws"]), (9, 7, 1, 0, 1), s)
        self.assertIs(s["drawChecked"], True, s)
        self.assertEqual(s["left"]["left"], 1, s)
        kinds = [x["e"] for x in self.leaves(q, size)]
        self.assertEqual(kinds[0], "commit")
        self.assertEqual(kinds.count("draw"), 1)
        self.assertLess(kinds.index("draw"), kinds.index("admit"))
        self.assertEqual(kinds.count("away"), 2)
        # the receipt of the returned sleeper is in the tree
        rc, out, err = self.verify(q, self.srv, "--me", me)
        self.assertEqual(rc, 0, out + err)
        # the queue deleted: the other sleeper's place is removed, the log stays
        self.assertEqual(self.c.delete_queue(q).status, 204)
        _, size2, _ = self.signed(q, size + 1)
        last = self.leaves(q, size2)[-1]
        self.assertEqual((last["e"], last["why"]), ("leave", "removed"), last)
        rc, out, err = self.verify(q, self.srv, "--json")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(json.loads(out)["left"]["removed"], 1, out)
        # created again: the same log goes on
        self.assertEqual(self.c.put_queue(q, dict(FAST, publicLog=True)).status, 200)
        r = self.c.join(q, uid())
        self.assertEqual(r.json["receipt"]["index"], size2, repr(r))

    def test_rate_limited_per_address(self):
        """The log routes share the user routes' limit per client address."""
        w = private_server(self, identity="header:X-User-Id",
                           extra=["--join-rate", "0.5", "--join-burst", "2"])
        got = [w.client.get("/v1/log/key").status for _ in range(3)]
        self.assertEqual(got[2], 429, got)
        r = w.client.get("/v1/queues/nosuch/log/checkpoint")
        self.assertError(r, 429, "RATE_LIMITED")

    # ------------------------------------------------------------ the beacon
    def beacon(self, round_, randomness, not_before):
        """A drand-compatible stand-in on loopback: /public/<round_> answers
        404 before not_before (epoch s), then the round and randomness."""
        asked = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                asked.append(self.path)
                if self.path != "/public/%d" % round_ or time.time() < not_before:
                    body, code = b'{"error":"not found"}', 404
                else:
                    body, code = json.dumps({"round": round_, "randomness": randomness,
                                             "signature": "00"}).encode(), 200
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return srv, asked

    def test_draw_with_beacon(self):
        """The opening waits for the beacon's round (404: asked again),
        answering prequeue, a join meanwhile is not drawn; the draw mixes
        the round's randomness in and waitroom-verify checks it."""
        rnd = secrets_hex(32)
        opens = now_ms() + 2000
        srv, asked = self.beacon(777, rnd, opens / 1000 + 2.0)
        url = "http://127.0.0.1:%d" % srv.server_address[1]
        q = self.new_queue(dict(FAST, publicLog=True, opensAt=opens,
                                draw={"beaconUrl": url, "round": 777}))
        early = [uid("early-") for _ in range(4)]
        for u in early:
            self.assertEqual(self.c.join(q, u).json["status"], "prequeue")
        while now_ms() < opens + 500:
            time.sleep(0.1)
        late = uid("late-")
        r = self.c.join(q, late)
        self.assertEqual(r.json["status"], "prequeue", repr(r))   # the opening waits
        self.assertEqual(self.stats(q)["admittedTotal"], 0)
        for u in early + [late]:
            self.wait_admitted(q, u, timeout=10)
        self.assertIn("/public/777", asked)
        self.assertGreater(len(asked), 1, asked)    # a 404 first, asked again
        _, size, _ = self.signed(q, 1 + 5 + 1 + 5)
        leaves = self.leaves(q, size)
        draw = [x for x in leaves if x["e"] == "draw"][0]
        self.assertEqual((draw["n"], draw["round"], draw["randomness"], draw["beacon"]),
                         (4, 777, rnd, url), draw)
        self.assertNotIn("beaconError", draw)
        joins = {x["u"]: x for x in leaves if x["e"] == "join"}
        self.assertEqual(sum(1 for x in joins.values() if x.get("pre")), 4, joins)
        rc, out, err = self.verify(q, self.srv, "--json")
        self.assertEqual(rc, 0, out + err)
        s = json.loads(out)
        self.assertEqual((s["overtakes"], s["draws"], s["drawChecked"], s["drawIndependent"]),
                         (0, 1, True, True), s)

    # ------------------------------------------------------------ keys
    def test_log_key_and_name(self):
        """--log-key's key signs and --log-name names key and origin; a
        restart on the same data with another --log-key refuses to start."""
        self.memory_only()
        data = tempfile.mkdtemp(dir=ENV.tmpdir)
        keys = []
        for i in range(2):
            path = os.path.join(data, "key%d.pem" % i)
            subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", path],
                           check=True, capture_output=True)
            keys.append(path)
        pub = subprocess.run(["openssl", "pkey", "-in", keys[0], "-pubout", "-outform", "DER"],
                             check=True, capture_output=True).stdout[-32:]
        w = self.memory_with(data, "--log-key", keys[0], "--log-name", "shop.example")
        vkey = self.vkey(w.client)
        name, kid, b64 = vkey.split("+", 2)
        self.assertEqual(name, "shop.example")
        self.assertEqual(base64.b64decode(b64), b"\x01" + pub)
        q = self.new_queue(dict(HOLD, publicLog=True), client=w.client)
        r, size, _ = self.checkpoint(q, client=w.client)
        self.assertTrue(r.body.startswith("shop.example/%s\n0\n" % q), r.body)
        self.assertIn("\n\n\u2014 shop.example ", r.body)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())
        p = subprocess.run([ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", "memory",
                            "--data-dir", data, "--log-key", keys[1],
                            "--token-secret", ENV.secret], capture_output=True, timeout=30)
        self.assertNotEqual(p.returncode, 0, p)
        self.assertIn(b"is not the public log's key", p.stderr)
        # without --log-key: the store's key goes on
        w = self.memory_with(data, "--log-name", "shop.example")
        self.assertEqual(self.vkey(w.client), vkey)

    # ------------------------------------------------------------ restarts
    def test_broken_log_answers_503(self):
        """A log shorter than its checkpoint (a snapshot whose checkpoint
        size was raised past its leaves) is 503 LOG_BROKEN on every log
        route, the server answering on."""
        self.memory_only()
        data = tempfile.mkdtemp(dir=ENV.tmpdir)
        w = memory_server(self, data)
        q = self.new_queue(dict(FAST, publicLog=True), client=w.client)
        for _ in range(2):
            w.client.join(q, uid())
        r, size, _ = self.signed(q, 4, client=w.client)
        cp = r.body.encode()
        self.assertEqual(w.terminate(), 0, w.stderr_tail())
        path = os.path.join(data, "waitroom.snapshot")
        with open(path, "rb") as f:
            snap = bytearray(f.read())
        at = snap.rfind(cp)
        self.assertGreater(at, 0)
        at += len(cp)
        self.assertEqual(int.from_bytes(snap[at:at + 8], "little"), size)
        snap[at:at + 8] = (size + 100).to_bytes(8, "little")
        snap[-32:] = hashlib.sha256(bytes(snap[:-32])).digest()
        with open(path, "wb") as f:
            f.write(snap)
        w = memory_server(self, data)
        for path in ("checkpoint", "entries?start=0&end=1", "proof/inclusion?index=0&size=1",
                     "proof/consistency?from=1&to=1"):
            self.assertError(w.client.get("/v1/queues/%s/log/%s" % (q, path)), 503,
                             "LOG_BROKEN", path)
        self.assertEqual(w.client.get("/healthz").status, 200)

    def test_restart_and_corrupt_leaf(self):
        self.memory_only()
        data = tempfile.mkdtemp(dir=ENV.tmpdir)
        state = os.path.join(data, "verify.state")
        w = memory_server(self, data)
        q = self.new_queue(dict(FAST, publicLog=True), client=w.client)
        for _ in range(3):
            w.client.join(q, uid())
        self.signed(q, 6, client=w.client)   # 3 joins, 3 admits
        rc, out, err = self.verify(q, w, "--state", state)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())
        w = memory_server(self, data)
        for _ in range(2):
            w.client.join(q, uid())
        self.signed(q, 10, client=w.client)
        rc, out, err = self.verify(q, w, "--state", state)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())
        # one leaf changed in the snapshot (its checksum made good again)
        path = os.path.join(data, "waitroom.snapshot")
        with open(path, "rb") as f:
            snap = bytearray(f.read())
        m = re.search(rb'"e":"join","at":\d+,"u":"[0-9a-f]{32}","t":(\d)', bytes(snap))
        self.assertIsNotNone(m)
        snap[m.start(1)] = ord("1") if snap[m.start(1)] != ord("1") else ord("2")
        snap[-32:] = hashlib.sha256(bytes(snap[:-32])).digest()
        with open(path, "wb") as f:
            f.write(snap)
        w = memory_server(self, data)
        rc, out, err = self.verify(q, w, "--state", state)
        self.assertEqual(rc, 2, out + err)
        # the server notices when it would sign again: no new checkpoint
        w.client.join(q, uid())
        time.sleep(2.5)
        _, size, _ = self.checkpoint(q, client=w.client)
        self.assertEqual(size, 10)
