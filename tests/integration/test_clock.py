"""A clock that steps backwards (API 1.2 "Clarifications"): admission never
stops, the line keeps its order, a newcomer joins behind everyone.

What a step back looks like to the store: its last admission tick, the last
arrival score and the scores of the people in line are ahead of its clock.
- Redis (admit.lua reads Redis TIME): the state hash's lastTick and
  lastScore and the line's scores are moved an hour ahead with redis-cli
  style commands (Redis's clock cannot be stepped from a test).
- Embedded store: the snapshot a stopped instance wrote is moved an hour
  ahead (its written time, last tick, last score and the line's scores, the
  checksum recomputed) and the instance is started again on it.
"""
import hashlib
import os
import struct
import tempfile
import time

from harness import ENV, HOLD, WRTest, uid
from helpers import memory_server

HOUR_US = 3600 * 1000000
RATE = {"admitPerSecond": 4, "tickMs": 100}


class ClockStepsBack(WRTest):

    def admitted_in_order(self, q, users, client, timeout=12.0):
        """Polls users (last first, so that an admission between two reads
        can never look out of order) until all are admitted; asserts that
        every round's admitted users are a prefix of users."""
        deadline = time.monotonic() + timeout
        while True:
            states = {}
            for u in reversed(users):
                r = client.me(q, u)
                self.assertEqual(r.status, 200, repr(r))
                states[u] = r.json["status"]
            flags = [states[u] == "admitted" for u in users]
            n = sum(flags)
            self.assertEqual(flags, [True] * n + [False] * (len(users) - n),
                             "admitted out of line order: %s" % states)
            if n == len(users):
                return
            if time.monotonic() > deadline:
                self.fail("admission stopped after the clock stepped back: %s" % states)
            time.sleep(0.05)

    def test_redis_clock_steps_back(self):
        """Clock: Redis's clock an hour behind the queue's state (lastTick,
        lastScore, scores): admission goes on at the rate, in line order,
        and a join after the step goes last (fails before the fix: no tick
        ran until TIME passed lastTick, an hour)."""
        self.redis_only()
        r = ENV.redis.client()
        self.addCleanup(r.close)
        q = self.new_queue(dict(HOLD, **RATE))
        users = [uid("c%d-" % i) for i in range(4)]
        for i, u in enumerate(users):
            self.assertWaiting(self.c.join(q, u), i + 1)
        state, line = "wr:{%s}:state" % q, "wr:{%s}:waiting" % q
        now_us = int(r.cmd("TIME")[0]) * 1000000
        # a paused queue still runs its ticks: lastTick is set
        self.poll_until(lambda: r.cmd("HGET", state, "lastTick"), lambda v: v is not None,
                        what="a first tick")
        # the step: everything the store wrote an hour later than its clock
        flat = r.cmd("ZRANGE", line, 0, -1, "WITHSCORES")
        self.assertEqual(flat[0::2], users)
        for u, s in zip(flat[0::2], flat[1::2]):
            r.cmd("ZADD", line, "XX", str(int(s) + HOUR_US), u)
        r.cmd("HSET", state, "lastTick", str((now_us + HOUR_US) // 100000),
              "lastScore", str(int(flat[-1]) + HOUR_US))
        late = uid("late-")
        self.assertWaiting(self.c.join(q, late), 5)
        self.assertEqual(r.cmd("ZRANGE", line, 0, -1), users + [late])
        t0 = time.monotonic()
        self.assertEqual(self.c.patch_queue(q, {"paused": False}).status, 200)
        self.admitted_in_order(q, users + [late], self.c)
        took = time.monotonic() - t0
        # 5 people at 4/s: about 1.25 s; never an hour, never all at once
        self.assertLess(took, 10.0)
        self.assertGreater(took, 0.5)
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["admittedTotal"]), (0, 5), st)

    def test_memory_snapshot_from_a_later_clock(self):
        """Clock: the embedded store restarted on a snapshot written an hour
        ahead of its clock (the host's clock stepped back while it was
        down): admission goes on at once, in line order, a newcomer last
        (fails before the fix: no tick ran for the step's hour)."""
        if ENV.store != "memory":
            self.skipTest("memory only")
        data = tempfile.mkdtemp(prefix="clock-", dir=ENV.tmpdir)
        w = memory_server(self, data)
        q = "clock-" + uid("")
        self.assertEqual(w.client.put_queue(q, dict(HOLD, **RATE)).status, 200)
        users = [uid("m%d-" % i) for i in range(4)]
        for i, u in enumerate(users):
            self.assertWaiting(w.client.join(q, u), i + 1)
        time.sleep(0.3)  # a few ticks: the snapshot holds a last tick
        self.assertEqual(w.terminate(), 0)
        path = os.path.join(data, "waitroom.snapshot")
        shift_snapshot(path, HOUR_US)

        w = memory_server(self, data)
        self.assertEqual(w.client.get_queue(q).json["stats"]["waiting"], 4)
        for i, u in enumerate(users):
            self.assertWaiting(w.client.me(q, u), i + 1)
        late = uid("late-")
        self.assertWaiting(w.client.join(q, late), 5)
        t0 = time.monotonic()
        self.assertEqual(w.client.patch_queue(q, {"paused": False}).status, 200)
        self.admitted_in_order(q, users + [late], w.client)
        self.assertLess(time.monotonic() - t0, 10.0)
        self.assertEqual(w.terminate(), 0)


def shift_snapshot(path, us):
    """Moves every clock value the embedded store's snapshot (version 4,
    mem_snapshot.c) holds before its first queue's tokens - the written
    time, and per queue the last score, the last tick and the line's
    scores - `us` ahead, and rewrites the checksum."""
    with open(path, "rb") as f:
        b = bytearray(f.read())
    assert b[:8] == b"WRMEMSNP", b[:8]
    (version,) = struct.unpack_from("<I", b, 8)
    # (5: held people at the end, as ages, 6: the stock, 7: the unseen
    # passes, 9: the bypass count, 10: the push subscriptions, 11: the
    # unseen passes' join leaves, 12: the groups' lines - none here: the
    # queue has no groups -, all after the stock, 8: the public logs
    # after the queues: nothing to shift)
    assert version == 12, version
    pos = 12
    (written,) = struct.unpack_from("<q", b, pos)
    struct.pack_into("<q", b, pos, written + us)
    pos += 8
    (slen,) = struct.unpack_from("<I", b, pos)
    pos += 4 + slen
    (nq,) = struct.unpack_from("<I", b, pos)
    assert nq == 1, nq
    pos += 4
    pos += 1 + b[pos]  # name
    (clen,) = struct.unpack_from("<I", b, pos)
    pos += 4 + clen
    cfg_version, last_score, last_tick, carry = struct.unpack_from("<Qqqq", b, pos)
    assert last_tick > 0 and last_score > 0, "no tick or join in the snapshot"
    tick_us = 100000  # RATE's tickMs
    struct.pack_into("<Qqqq", b, pos, cfg_version, last_score + us, last_tick + us // tick_us,
                     carry)
    pos += 32 + 5 * 8  # counters
    pos += 1 + 8 + 8 + 8  # the opening
    (n,) = struct.unpack_from("<Q", b, pos)
    pos += 8
    for _ in range(n):
        (score,) = struct.unpack_from("<q", b, pos)
        struct.pack_into("<q", b, pos, score + us)
        pos += 8
        pos += 1 + b[pos]  # id
        pos += 4 + 1  # idle_cs, flags
    b[-32:] = hashlib.sha256(bytes(b[:-32])).digest()
    with open(path, "wb") as f:
        f.write(b)
    os.chmod(path, 0o600)

