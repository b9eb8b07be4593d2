#!/usr/bin/env python3
"""waitroom-verify end to end, against logserver.py (a stand-in for the
server's public-log routes written from the contract alone, with its own
tree, proofs and Ed25519 signatures):

- a fair sale (drawn pre-queue, groups, away and held returns, an unseen
  pass, leaves) verifies: exit 0, the statement, the --json fields;
- a corrupted leaf served: exit 2; a checkpoint signed by another key:
  exit 2; a checkpoint of another queue: exit 2;
- an overtake: exit 1, listed with who was first; a draw with a wrong seed:
  exit 3; a beacon error: exit 0, reported as not independent;
- --state: created, then consistent across growth, then a rewritten
  history (a fork) is exit 2 and the saved checkpoint stays;
- --me: a person's join proven included; an unknown log id is exit 2;
- VKEY from a file; usage and network errors are exit 4 (and say why);
- a server that trickles, or never ends, its answer: exit 4 within the
  --timeout deadline or at the body cap.

    test_verify.py --bin build/waitroom-verify
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import logserver  # noqa: E402
from logserver import Log, Sale, fair_sale, serve  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

BIN = None
FAILED = []


def run(srv, log, *args, vkey=None, queue=None):
    url = "http://127.0.0.1:%d" % srv.server_address[1]
    cmd = [BIN] + list(args) + [url, queue or log.queue, vkey or log.vkey()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + detail))
    if not cond:
        FAILED.append(name)


def rich_sale(log):
    """A fair sale touching every rule: draw, groups, away, held, unseen."""
    s = Sale(log)
    s.commit(b"\x07" * 32)
    for i in range(20):
        s.join(s.uid(i), pre=True, grp="fans" if i % 4 == 0 else None)
    s.join(s.uid(100))  # at the opening, before the draw: after the pre-queue
    s.draw()
    for i in range(101, 140):
        s.join(s.uid(i), grp="fans" if i % 5 == 0 else None)
    s.admit_first("fans")
    for _ in range(5):
        s.admit_first()
    u = s.go_away()
    s.admit_first()
    s.admit_held(u)
    s.leave_last()
    s.leave_last(why="abandoned")
    a = s.admit_first()
    s.leaf({"e": "away", "u": a, "unseen": True})  # back in line, away
    s.admit_first()
    s.admit_held(a)
    s.leaf({"e": "failOpen", "n": 3})
    return s


def test_fair(srv, log):
    rc, out, err = run(srv, log)
    check("fair sale: exit 0", rc == 0, out + err)
    check("fair sale: statement", "verdict: fair" in out and "overtakes: 0" in out, out)
    rc, out, err = run(srv, log, "--json")
    check("fair sale --json: exit 0", rc == 0, out + err)
    j = json.loads(out)
    want = {"joined": 60, "admitted": 11, "heldReturns": 2, "overtakes": 0, "drawChecked": True,
            "size": len(log.leaves), "root": logserver.b64(log.mth(0, len(log.leaves)))}
    check("fair sale --json: fields", all(j.get(k) == v for k, v in want.items()),
          json.dumps({k: j.get(k) for k in want}))
    check("fair sale --json: left by reason",
          j["left"] == {"left": 1, "abandoned": 1, "pending": 0, "removed": 0}, str(j["left"]))
    check("fair sale --json: draw not independent (no beacon)",
          j["drawIndependent"] is False and j["draws"] == 1, out)


def test_corrupt_leaf(srv, log):
    i = 30
    log.serve_leaf[i] = log.leaves[i].replace(b'"e":"join"', b'"e":"join" ')
    rc, out, err = run(srv, log)
    del log.serve_leaf[i]
    check("a corrupted leaf: exit 2", rc == 2, out + err)
    other = Ed25519PrivateKey.generate()
    srv.checkpoint = log.checkpoint(key=other)
    rc, out, err = run(srv, log)
    check("a checkpoint signed by another key: exit 2", rc == 2, out + err)
    other_queue = Log(queue="other", key=log.key)  # well signed, another queue's
    for leaf in log.leaves:
        other_queue.append(leaf)
    srv.checkpoint = other_queue.checkpoint()
    rc, out, err = run(srv, log)
    check("a checkpoint of another origin: exit 2", rc == 2 and "another log" in err, out + err)
    srv.checkpoint = None


def test_overtake():
    log = Log()
    s = Sale(log)
    for i in range(5):
        s.join(s.uid(i))
    second = s.line[None].pop(1)
    s.leaf({"e": "admit", "u": second})
    srv = serve(log)
    rc, out, err = run(srv, log, "--json")
    j = json.loads(out) if out else {}
    check("an overtake: exit 1", rc == 1, out + err)
    check("an overtake: listed with who was first",
          j.get("overtakes") == 1 and j["firstOvertakes"][0]["index"] == 5
          and j["firstOvertakes"][0]["expected"] == s.uid(0)
          and j["firstOvertakes"][0]["u"] == second, out)
    rc, out, err = run(srv, log)
    check("an overtake: the statement names it", "NOT FAIR" in out and second in out, out)
    srv.shutdown()


def test_bad_draw():
    log = Log()
    s = Sale(log)
    s.commit(b"\x01" * 32)
    for i in range(4):
        s.join(s.uid(i), pre=True)
    s.draw(seed=b"\x02" * 32)  # not the committed seed
    srv = serve(log)
    rc, out, err = run(srv, log)
    check("a draw with a wrong seed: exit 3", rc == 3, out + err)
    srv.shutdown()
    log = Log()
    s = Sale(log)
    s.leaf({"e": "commit", "seedHash": logserver.sha(b"\x03" * 32).hex(),
            "beacon": "https://drand.example", "round": 5})
    s.seed = b"\x03" * 32
    s.join(s.uid(1), pre=True)
    s.leaf({"e": "draw", "n": 1, "seed": (b"\x03" * 32).hex(), "round": 5,
            "beacon": "https://drand.example", "beaconError": "no answer in 60 s"})
    srv = serve(log)
    rc, out, err = run(srv, log, "--json")
    j = json.loads(out) if out else {}
    check("a beacon error: exit 0, drawChecked, not independent",
          rc == 0 and j.get("drawChecked") is True and j.get("drawIndependent") is False, out + err)
    srv.shutdown()


def test_state(tmp):
    log = Log()
    s = fair_sale(log, 2500)
    srv = serve(log)
    state = os.path.join(tmp, "state.json")
    srv.size = 1234
    rc, out, err = run(srv, log, "--state", state, "--json")
    check("--state: a missing file is created", rc == 0 and os.path.exists(state), out + err)
    for n in range(1300, 2400, 37):
        s.join(s.uid(10 ** 6 + n))  # the log grows between runs
    srv.size = None
    rc, out, err = run(srv, log, "--state", state, "--json")
    j = json.loads(out) if out else {}
    check("--state: consistent across growth",
          rc == 0 and j.get("consistent") is True and j.get("savedSize") == 1234, out + err)
    with open(state) as f:
        check("--state: the new checkpoint is saved", json.load(f)["size"] == len(log.leaves))
    # a rewritten history: leaf 10 changed, re-signed, a longer log
    saved = open(state).read()
    log.leaves[10] = log.leaves[10].replace(b'"at":', b'"at": ')
    lv = Log(key=log.key)
    for leaf in log.leaves:
        lv.append(leaf)
    lv.append(b'{"e":"failOpen","at":1,"n":1}')
    srv.log = lv
    rc, out, err = run(srv, lv, "--state", state, "--json")
    check("--state: a fork is exit 2", rc == 2 and '"consistent":false' in out, out + err)
    check("--state: a broken checkpoint is not saved", open(state).read() == saved)
    srv.shutdown()


def test_me(srv, log, tmp):
    u = Sale.uid(107)
    rc, out, err = run(srv, log, "--me", u, "--json")
    j = json.loads(out) if out else {}
    check("--me: the join is proven included",
          rc == 0 and j.get("me", {}).get("included") is True, out + err)
    rc, out, err = run(srv, log, "--me", "f" * 32)
    check("--me: an unknown log id is exit 2", rc == 2, out + err)
    check("--me: an unknown log id says the log checks, not this place (not BROKEN)",
          "verdict: NOT PROVEN: the log checks" in out and "BROKEN" not in out
          and "problem: --me: no join of this log id" in out, out + err)
    rc, out, err = run(srv, log, "--me", "f" * 32, "--json")
    j = json.loads(out) if out else {}
    check("--me --json: the root checked, the place not found",
          rc == 2 and j.get("rootChecked") is True and j.get("me", {}).get("found") is False
          and "no join" in j.get("broken", ""), out + err)
    rc, out, err = run(srv, log, "--me", "not-hex")
    check("--me: not a log id is exit 4", rc == 4, out + err)
    path = os.path.join(tmp, "vkey.txt")
    with open(path, "w") as f:
        f.write(log.vkey() + "\n")
    rc, out, err = run(srv, log, vkey=path)
    check("VKEY from a file", rc == 0, out + err)


def test_errors(log):
    p = subprocess.run([BIN, "http://127.0.0.1:1", "sale", log.vkey()], capture_output=True,
                       text=True, timeout=60)
    check("no server: exit 4, saying so",
          p.returncode == 4 and "checkpoint: no answer" in p.stderr, p.stdout + p.stderr)
    p = subprocess.run([BIN, "http://127.0.0.1:1", "sale"], capture_output=True, text=True)
    check("usage: exit 4", p.returncode == 4 and "usage:" in p.stderr, p.stderr)
    p = subprocess.run([BIN, "ftp://x", "sale", log.vkey()], capture_output=True, text=True)
    check("not an http URL: exit 4", p.returncode == 4, p.stderr)
    p = subprocess.run([BIN, "http://127.0.0.1:1", "sale", "nokey"], capture_output=True,
                       text=True)
    check("not a verifier key: exit 4", p.returncode == 4, p.stderr)


def test_hostile(srv, log):
    """A server that never finishes an answer: waitroom-verify gives up
    (exit 4, saying why) within its deadline, or at its body cap."""
    for mode, why in (("trickle", "no whole answer within 2 s"), ("endless", "too large"),
                      ("huge", "too large")):
        srv.hostile = mode
        t0 = time.monotonic()
        rc, out, err = run(srv, log, "--timeout", "2")
        took = time.monotonic() - t0
        check("a hostile server (%s): exit 4 in %.1f s" % (mode, took),
              rc == 4 and why in err and took < 30, out + err)
    srv.hostile = None


def main():
    global BIN
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    BIN = os.path.abspath(ap.parse_args().bin)
    log = Log()
    rich_sale(log)
    srv = serve(log)
    with tempfile.TemporaryDirectory() as tmp:
        test_fair(srv, log)
        test_corrupt_leaf(srv, log)
        test_me(srv, log, tmp)
        test_overtake()
        test_bad_draw()
        test_state(tmp)
        test_errors(log)
        test_hostile(srv, log)
    srv.shutdown()
    print("%d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
