#!/usr/bin/env python3
"""Chaos run for waitroomd (Python 3.11 standard library only; loopback only).

Starts one redis-server (AOF on, appendfsync always) and 3 waitroomd
instances on it, drives load through all of them (joins, polls, consumes,
sometimes two consumes of one token at once) and meanwhile, for --duration
seconds, at random every 1.5-4 s: SIGKILLs an instance and restarts it,
SIGSTOPs Redis for 0.5-3 s, or SIGKILLs Redis and restarts it on its AOF.
Then it restores everything, pauses the queue, reads the store directly and
checks the invariants:

  I1 every user whose join was acknowledged is waiting, holds a live token,
     or consumed it (a user that is none of these must have a consume whose
     answer was lost: instance killed or store timeout mid-call);
  I2 order: if A's join was acknowledged before B's first join attempt was
     sent, A is ahead of B in line, and A is not still waiting while B was
     admitted;
  I3 nobody is both waiting and admitted; a user holds at most one token;
  I4 no token was consumed twice (two 200 {"valid":true} for one jti);
  I5 the active count equals the live tokens (ZCARD active == HLEN tokens,
     same members);
  I6 admissions: no admission tick admitted more than WR_CATCHUP_TICKS (3)
     ticks' worth (the most a tick makes up after a gap of 3 ticks; a longer
     gap - an outage - makes up nothing), and no 1 s window more than
     WINDOW_MAX (the calls of 11 ticks + 2 made-up ticks, +1);
     admittedTotal equals the users ever admitted. Admission times come from
     the tokens: users admitted by one tick share one expiry (expiresAt ms
     seen by the clients; the microsecond expiry for tokens still live).

Exit code 0 when every invariant holds, 1 otherwise, 2 when the environment
did not come up. Prints a summary with the numbers.

The processes (redis-server, waitroomd: free ports, readiness, no process
left behind) and the HTTP client are the integration suite's
(tests/integration/harness.py, resp.py, jwtutil.py).

    python3 tests/chaos/chaos.py --waitroomd build/waitroomd --duration 60
"""
import argparse
import http.client
import json
import os
import random
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402
from harness import Client, RedisServer, Waitroomd  # noqa: E402
from jwtutil import decode as jwt_decode  # noqa: E402
from resp import Redis  # noqa: E402

ADMIN_KEY = "chaos-admin-key"
QUEUE = "chaos"
RATE, TICK_MS, TTL_S = 40, 100, 3600
PER_TICK = RATE * TICK_MS / 1000
CATCHUP_TICKS = 3
# Admissions in any 1000 ms of call times: the calls of at most
# 1000/TICK + 1 ticks (a call late in its tick and one early in its tick
# 1000 ms later), plus the 2 ticks a catch-up may bring from before the
# window, plus 1 for the fractional carry.
WINDOW_MAX = int((1000 // TICK_MS + 1 + CATCHUP_TICKS - 1) * PER_TICK + 1)
AOF = ["--appendonly", "yes", "--appendfsync", "always"]
REQUEST_TIMEOUT = 5.0


def log(msg):
    print("[%7.2f] %s" % (time.monotonic() - T0, msg), flush=True)


T0 = time.monotonic()


class RedisProc:
    """The store: a harness.RedisServer with its AOF on (appendfsync
    always), SIGKILLed and restarted on the same port and data directory,
    or paused with SIGSTOP."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.stopped = False
        self.server = RedisServer(tmp, extra=AOF, start_timeout=20)
        self.port, self.dir = self.server.port, self.server.dir

    def start(self):
        self.server = RedisServer(self.tmp, port=self.port, datadir=self.dir, extra=AOF,
                                  start_timeout=20)
        self.stopped = False

    def kill(self):
        if self.stopped:
            self.cont()
        self.server.kill()

    def stop(self):
        os.kill(self.server.proc.pid, signal.SIGSTOP)
        self.stopped = True

    def cont(self):
        os.kill(self.server.proc.pid, signal.SIGCONT)
        self.stopped = False

    def client(self):
        return Redis(self.port, timeout=10)


class Instance:
    """One header-mode waitroomd on the shared store: a harness.Waitroomd,
    SIGKILLed and started again. port is None while it is down."""

    def __init__(self, binary, store, secret, tmp, idx):
        self.binary, self.store, self.secret, self.tmp, self.idx = binary, store, secret, tmp, idx
        self.w = None
        self.port = None
        self.restarts = 0
        self.start()

    def start(self):
        self.w = Waitroomd(self.binary, self.store, self.secret, self.tmp,
                           identity="header:X-User-Id", admin_key=ADMIN_KEY)
        self.port = self.w.port

    def kill(self):
        self.port = None
        self.w.kill()

    def alive(self):
        return self.w.proc.poll() is None and self.port is not None


def call(port, fn):
    """fn(harness.Client of port) -> (status, json-or-None); (None, error)
    on a connection error (an instance killed mid-request)."""
    try:
        r = fn(Client(port, timeout=REQUEST_TIMEOUT))
    except (OSError, http.client.HTTPException) as e:
        return None, e
    return r.status, r.json


class Ledger:
    """What the clients saw. All times monotonic seconds."""

    def __init__(self):
        self.lock = threading.Lock()
        self.users = []            # in creation order
        self.first_send = {}       # user -> first join attempt sent
        self.ack = {}              # user -> first acknowledged join answer received
        self.token = {}            # user -> (jti, expiresAt ms) last seen
        self.adm_exp = {}          # user -> expiresAt ms of their admission
        self.consumed_ok = {}      # jti -> 200 valid answers
        self.consume_unknown = set()  # users with a consume whose answer was lost
        self.consumed_users = set()
        self.tokens_raw = {}       # user -> the token (JWT) last seen
        self.counts = {}

    def count(self, what):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1


def jwt_jti(tok):
    return jwt_decode(tok)[1]["jti"]


def load_worker(stop, inst, led, rng, wid):
    n = 0
    while not stop.is_set():
        live = [i for i in inst if i.alive()]
        if not live:
            time.sleep(0.05)
            continue
        port = rng.choice(live).port
        with led.lock:
            have = len(led.users)
            admitted = [u for u in led.token if u not in led.consumed_users]
        roll = rng.random()
        if roll < 0.35 or have < 20:
            n += 1
            user = "w%d-%d" % (wid, n)
            with led.lock:
                led.users.append(user)
                led.first_send[user] = time.monotonic()
            st, j = call(port, lambda c: c.join(QUEUE, user))
            handle_entry(led, user, st, j, "join")
        elif roll < 0.55 and admitted:
            user = rng.choice(admitted)
            with led.lock:
                jti, _ = led.token[user]
                tok = led.tokens_raw[user]
            twice = rng.random() < 0.2
            res = []

            def one():
                res.append(call(port if not twice else rng.choice(live).port,
                                lambda c: c.consume(QUEUE, token=tok)))
            ts = [threading.Thread(target=one) for _ in range(2 if twice else 1)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            for st, j in res:
                with led.lock:
                    if st == 200 and j and j.get("valid") and not j.get("passthrough"):
                        led.consumed_ok[jti] = led.consumed_ok.get(jti, 0) + 1
                        led.consumed_users.add(user)
                    elif st == 403:
                        led.consumed_users.add(user)  # not live: consumed (by us) before
                    else:
                        led.consume_unknown.add(user)
                led.count("consume_%s" % st)
        else:
            with led.lock:
                if not led.users:
                    continue
                user = led.users[rng.randrange(len(led.users))]
                if user in led.consumed_users:
                    continue
            st, j = call(port, lambda c: c.me(QUEUE, user))
            handle_entry(led, user, st, j, "poll")


def handle_entry(led, user, st, j, what):
    led.count("%s_%s" % (what, st))
    if st != 200 or not j:
        return
    with led.lock:
        if what == "join" and user not in led.ack:
            led.ack[user] = time.monotonic()
        if j.get("status") == "admitted":
            tok = j["token"]
            led.token[user] = (jwt_jti(tok), j["expiresAt"])
            led.tokens_raw[user] = tok
            led.adm_exp.setdefault(user, j["expiresAt"])


def chaos_loop(until, redis, inst, rng, events):
    """Runs in the main thread: children get PR_SET_PDEATHSIG, which fires
    when the *thread* that started them ends."""
    while True:
        time.sleep(rng.uniform(1.5, 4.0))
        if time.monotonic() >= until:
            break
        what = rng.choice(["kill_instance", "kill_instance", "stop_redis", "restart_redis"])
        if what == "kill_instance":
            i = rng.choice(inst)
            i.kill()
            log("SIGKILL waitroomd #%d" % i.idx)
            time.sleep(rng.uniform(0.1, 1.0))
            i.start()
            i.restarts += 1
            log("restarted waitroomd #%d on port %d" % (i.idx, i.port))
        elif what == "stop_redis":
            d = rng.uniform(0.5, 3.0)
            redis.stop()
            log("SIGSTOP redis for %.1f s" % d)
            time.sleep(d)
            redis.cont()
            log("SIGCONT redis")
        else:
            redis.kill()
            log("SIGKILL redis")
            time.sleep(rng.uniform(0.2, 2.0))
            redis.start()
            log("redis restarted on its AOF")
        events[what] = events.get(what, 0) + 1


def inject(kind, led, r):
    """Self-test of the checker: one deliberate violation of one invariant."""
    wkey, akey = "wr:{%s}:waiting" % QUEUE, "wr:{%s}:active" % QUEUE
    waiting = r.cmd("ZRANGE", wkey, "0", "-1", "WITHSCORES")
    acked = [waiting[k] for k in range(0, len(waiting), 2) if waiting[k] in led.ack]
    log("injecting %s" % kind)
    if kind == "lose-user":
        r.cmd("ZREM", wkey, acked[0])
    elif kind == "swap-order":
        a, b = acked[0], acked[-1]
        sa, sb = r.cmd("ZSCORE", wkey, a), r.cmd("ZSCORE", wkey, b)
        r.cmd("ZADD", wkey, sb, a, sa, b)
    elif kind == "active-drift":
        r.cmd("ZADD", akey, "1", "ghost-user")
    elif kind == "double-consume":
        jti = next(iter(led.consumed_ok))
        led.consumed_ok[jti] += 1
    elif kind == "burst":
        for k in range(int(CATCHUP_TICKS * PER_TICK) + 1):
            led.adm_exp["burst-%d" % k] = 1
        r.cmd("HINCRBY", "wr:{%s}:state" % QUEUE, "admittedTotal",
              int(CATCHUP_TICKS * PER_TICK) + 1)


def check(led, r, failures):
    def fail(msg):
        failures.append(msg)
        log("VIOLATION: " + msg)

    waiting = r.cmd("ZRANGE", "wr:{%s}:waiting" % QUEUE, "0", "-1", "WITHSCORES")
    wpos = {}
    for k in range(0, len(waiting), 2):
        wpos[waiting[k]] = k // 2 + 1
    toks = r.cmd("HGETALL", "wr:{%s}:tokens" % QUEUE)
    live = {}
    for k in range(0, len(toks), 2):
        # "jti:iat:exp", and ":u" after it while no answer has carried the
        # pass to its holder (an unseen pass, docs/DESIGN.md)
        jti, iat, exp = toks[k + 1].split(":")[:3]
        live[toks[k]] = (jti, int(iat), int(exp))
    active = r.cmd("ZRANGE", "wr:{%s}:active" % QUEUE, "0", "-1")
    state = r.cmd("HGETALL", "wr:{%s}:state" % QUEUE)
    st = {state[k]: state[k + 1] for k in range(0, len(state), 2)}
    admitted_total = int(st.get("admittedTotal", 0))
    consumed_total = int(st.get("consumedTotal", 0))
    expired_total = int(st.get("expiredTotal", 0))

    # I3
    both = set(wpos) & set(live)
    if both:
        fail("I3: %d users both waiting and admitted, e.g. %s" % (len(both), sorted(both)[:3]))
    # I5
    if len(active) != len(live) or set(active) != set(live):
        fail("I5: active %d != live tokens %d" % (len(active), len(live)))
    # I4
    twice = {j: n for j, n in led.consumed_ok.items() if n > 1}
    if twice:
        fail("I4: %d tokens consumed twice: %s" % (len(twice), list(twice.items())[:3]))
    ok_consumes = sum(led.consumed_ok.values())
    if not (ok_consumes <= consumed_total <= ok_consumes + len(led.consume_unknown)):
        fail("I4: consumedTotal %d outside [%d, %d]" % (consumed_total, ok_consumes,
                                                           ok_consumes + len(led.consume_unknown)))
    if expired_total != 0:
        fail("tokens expired during the run (%d); ttl is %d s" % (expired_total, TTL_S))
    # I1
    consumed_ok_users = {u for u, (jti, _) in led.token.items() if led.consumed_ok.get(jti)}
    missing = []
    for u in led.ack:
        if u in wpos or u in live or u in consumed_ok_users:
            continue
        if u in led.consume_unknown or u in led.consumed_users:
            continue  # its consume went through but the answer was lost
        missing.append(u)
    if missing:
        fail("I1: %d acknowledged users vanished, e.g. %s" % (len(missing), missing[:5]))
    # I2: A acked before B was first sent
    users = [u for u in led.ack]
    by_ack = sorted(users, key=lambda u: led.ack[u])
    by_send = sorted((u for u in led.first_send if u in wpos or u in live or
                      u in consumed_ok_users or u in led.consumed_users), key=lambda u: led.first_send[u])
    # (a) both waiting: position order
    i, best = 0, 0
    order_bad = 0
    for b in by_send:
        while i < len(by_ack) and led.ack[by_ack[i]] < led.first_send[b]:
            a = by_ack[i]
            if a in wpos:
                best = max(best, wpos[a])
            i += 1
        if b in wpos and best and wpos[b] < best:
            order_bad += 1
    if order_bad:
        fail("I2: %d waiting users are ahead of someone acknowledged before they joined"
             % order_bad)
    # (b) nobody admitted while someone acknowledged before them still waits
    waiting_acked = [led.ack[u] for u in led.ack if u in wpos]
    admitted_sends = [led.first_send[u] for u in led.first_send
                      if u in live or u in consumed_ok_users or u in led.consumed_users]
    if waiting_acked and admitted_sends and min(waiting_acked) < max(admitted_sends):
        earliest = min((u for u in led.ack if u in wpos), key=lambda u: led.ack[u])
        jumped = [u for u in led.first_send if (u in live or u in consumed_ok_users)
                  and led.first_send[u] > led.ack[earliest]]
        fail("I2: %s (acknowledged at %.2f) still waits while %d later users were admitted"
             % (earliest, led.ack[earliest] - T0, len(jumped)))
    # I6: admission ticks from expiry times
    exp_ms = {}
    for u, e in led.adm_exp.items():
        exp_ms[u] = e
    for u, (_, _, e_us) in live.items():
        exp_ms[u] = e_us // 1000
    ever = set(exp_ms)
    unknown_adm = admitted_total - len(ever)
    if unknown_adm != 0:
        fail("I6: admittedTotal %d != users seen admitted %d" % (admitted_total, len(ever)))
    groups = {}
    for e in exp_ms.values():
        groups[e] = groups.get(e, 0) + 1
    ticks = sorted(groups.items())
    biggest = max((n for _, n in ticks), default=0)
    if biggest > CATCHUP_TICKS * PER_TICK:
        fail("I6: one admission tick admitted %d (max %g)" % (biggest, CATCHUP_TICKS * PER_TICK))
    worst_window = 0
    j, total = 0, 0
    for k in range(len(ticks)):
        while j < len(ticks) and ticks[j][0] < ticks[k][0] + 1000:
            total += ticks[j][1]
            j += 1
        worst_window = max(worst_window, total)
        total -= ticks[k][1]
    if worst_window > WINDOW_MAX:
        fail("I6: %d admitted within one second (rate %d, bound %d)"
             % (worst_window, RATE, WINDOW_MAX))
    return {
        "joined_acknowledged": len(led.ack), "join_attempts": len(led.first_send),
        "waiting": len(wpos), "live_tokens": len(live), "active": len(active),
        "admitted_total": admitted_total, "consumed_total": consumed_total,
        "consumes_ok": ok_consumes, "consume_answers_lost": len(led.consume_unknown),
        "admission_ticks": len(ticks), "largest_tick": biggest,
        "max_admitted_in_1s": worst_window,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitroomd", required=True)
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--inject", choices=["lose-user", "swap-order", "active-drift",
                                         "double-consume", "burst"],
                    help="self-test: damage the final state; the run must then FAIL")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    log("seed %d, duration %.0f s, %d instances" % (seed, args.duration, args.instances))
    binary = os.path.abspath(args.waitroomd)
    tmp = tempfile.mkdtemp(prefix="wr-chaos-")
    failures = []
    inst = []
    redis = None
    ok = False
    try:
        try:
            redis = RedisProc(tmp)
            store = "redis://127.0.0.1:%d" % redis.port
            secret = secrets.token_hex(32)
            for k in range(args.instances):
                inst.append(Instance(binary, store, secret, tmp, k))
            deadline = time.monotonic() + 15
            while True:
                st, _ = call(inst[0].port, lambda c: c.put_queue(QUEUE, {
                    "admitPerSecond": RATE, "tickMs": TICK_MS, "tokenTtlSeconds": TTL_S,
                    "maxQueueSize": 0, "failPolicy": "closed"}, key=ADMIN_KEY))
                if st == 200:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("PUT queue: %s" % st)
                time.sleep(0.1)
        except Exception as e:
            print("SETUP FAILED: %s" % e)
            return 2
        led = Ledger()
        stop_load = threading.Event()
        events = {}
        workers = [threading.Thread(target=load_worker,
                                    args=(stop_load, inst, led, random.Random(rng.random()), k))
                   for k in range(args.workers)]
        for t in workers:
            t.start()
        chaos_loop(time.monotonic() + args.duration, redis, inst, rng, events)
        log("chaos over: %s; letting the load run 3 s on a healthy system" % events)
        time.sleep(3)
        stop_load.set()
        for t in workers:
            t.join(30)
        # pause admission so the state is still while it is read
        for _ in range(100):
            st, _ = call(inst[0].port,
                         lambda c: c.patch_queue(QUEUE, {"paused": True}, key=ADMIN_KEY))
            if st == 200:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        r = redis.client()
        if args.inject:
            inject(args.inject, led, r)
        summary = check(led, r, failures)
        r.close()
        summary["events"] = events
        summary["requests"] = dict(sorted(led.counts.items()))
        summary["seed"] = seed
        # every instance is still alive and stops cleanly (ASan builds: no report)
        for i in inst:
            if i.w.proc.poll() is not None:
                failures.append("waitroomd #%d died on its own (exit %s)"
                                % (i.idx, i.w.proc.returncode))
                continue
            code = i.w.terminate(timeout=15)
            if code is None:
                code = "timeout"
            if code != 0:
                failures.append("waitroomd #%d exited %s on SIGTERM" % (i.idx, code))
        print(json.dumps(summary, indent=1))
        ok = not failures
        print("chaos: %s (%d violations)" % ("PASS" if ok else "FAIL", len(failures)))
        return 0 if ok else 1
    finally:
        harness.kill_all()  # SIGKILL ends a SIGSTOPped Redis too
        if args.keep or not ok:
            print("logs kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
