#!/usr/bin/env python3
"""A stand-in for waitroomd's public-log routes, written independently of
the C code (from docs/API.md and RFC 9162 only), to test waitroom-verify
end to end until the server has the routes.

- Log: leaves (bytes), the RFC 9162 tree (hashlib), inclusion and
  consistency proofs by the RFC's recursive definitions, C2SP checkpoints
  signed with Ed25519 (python3-cryptography).
- serve(log): a ThreadingHTTPServer on 127.0.0.1 answering
  GET /v1/queues/{q}/log/checkpoint, /log/entries?start=&end= (1,000 at
  most), /log/proof/inclusion?index=&size=, /log/proof/consistency?from=&to=,
  /v1/log/key. `log.serve_leaf` can serve other bytes than the tree's
  (a corrupted leaf).
- Sale: builds leaves of a sale as the rules say (pre-queue with the draw,
  joins, away, held returns, leaves), so that a fair log has no overtake.

As a program: `logserver.py --events N [--port P]` builds a fair sale of N
events and serves it until killed, printing "PORT VKEY" on its first line
(the benchmark in docs/BENCHMARKS.md).
"""
import argparse
import base64
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization


def sha(b):
    return hashlib.sha256(b).digest()


def b64(b):
    return base64.b64encode(b).decode()


class Log:
    def __init__(self, name="waitroom", queue="sale", key=None):
        self.name, self.queue = name, queue
        self.key = key or Ed25519PrivateKey.generate()
        self.leaves = []
        self.levels = [[]]  # levels[k][i]: the complete subtree of 2^k leaves at index i
        self.serve_leaf = {}  # index -> other bytes to serve

    def append(self, leaf):
        if isinstance(leaf, dict):
            leaf = json.dumps(leaf, separators=(",", ":")).encode()
        self.leaves.append(leaf)
        h, k = sha(b"\x00" + leaf), 0
        self.levels[0].append(h)
        while len(self.levels[k]) % 2 == 0:
            h = sha(b"\x01" + self.levels[k][-2] + self.levels[k][-1])
            k += 1
            if len(self.levels) == k:
                self.levels.append([])
            self.levels[k].append(h)

    def mth(self, lo, hi):
        """MTH(D[lo:hi]), RFC 9162 2.1.1, with the complete subtrees stored."""
        n = hi - lo
        if n == 0:
            return sha(b"")
        if n & (n - 1) == 0 and lo % n == 0:
            return self.levels[n.bit_length() - 1][lo // n]
        k = 1 << ((n - 1).bit_length() - 1)
        return sha(b"\x01" + self.mth(lo, lo + k) + self.mth(lo + k, hi))

    def path(self, m, lo, hi):
        """PATH(m, D[lo:hi]), RFC 9162 2.1.3.1."""
        n = hi - lo
        if n <= 1:
            return []
        k = 1 << ((n - 1).bit_length() - 1)
        if m < k:
            return self.path(m, lo, lo + k) + [self.mth(lo + k, hi)]
        return self.path(m - k, lo + k, hi) + [self.mth(lo, lo + k)]

    def subproof(self, m, lo, hi, b):
        """SUBPROOF(m, D[lo:hi], b), RFC 9162 2.1.4.1."""
        n = hi - lo
        if m == n:
            return [] if b else [self.mth(lo, hi)]
        k = 1 << ((n - 1).bit_length() - 1)
        if m <= k:
            return self.subproof(m, lo, lo + k, b) + [self.mth(lo + k, hi)]
        return self.subproof(m - k, lo + k, hi, False) + [self.mth(lo, lo + k)]

    def pub(self):
        return self.key.public_key().public_bytes(serialization.Encoding.Raw,
                                                  serialization.PublicFormat.Raw)

    def key_id(self):
        return sha(self.name.encode() + b"\n" + b"\x01" + self.pub())[:4]

    def vkey(self):
        return "%s+%s+%s" % (self.name, self.key_id().hex(), b64(b"\x01" + self.pub()))

    def checkpoint(self, size=None, key=None):
        size = len(self.leaves) if size is None else size
        body = "%s/%s\n%d\n%s\n" % (self.name, self.queue, size, b64(self.mth(0, size)))
        sig = (key or self.key).sign(body.encode())
        return body + "\n\u2014 %s %s\n" % (self.name, b64(self.key_id() + sig))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, body, ctype="application/json"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def hostile(self, mode):
        """A server that never finishes its answer: "trickle" sends a header
        line every 0.2 s, "endless" a chunked body without end, "huge" a
        Content-Length of 100 GB and its bytes; until the client hangs up."""
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            if mode == "trickle":
                while True:
                    self.wfile.write(b"X-Slow: 1\r\n")
                    self.wfile.flush()
                    time.sleep(0.2)
            if mode == "endless":
                self.wfile.write(b"Transfer-Encoding: chunked\r\n\r\n")
                while True:
                    self.wfile.write(b"4000\r\n" + b"a" * 0x4000 + b"\r\n")
            self.wfile.write(b"Content-Length: 100000000000\r\n\r\n")
            while True:
                self.wfile.write(b"a" * 65536)
        except OSError:
            self.close_connection = True

    def do_GET(self):
        log = self.server.log
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        pre = "/v1/queues/%s/log/" % log.queue
        size = self.server.size if self.server.size is not None else len(log.leaves)
        try:
            if u.path == "/v1/log/key":
                return self.answer(200, log.vkey() + "\n", "text/plain")
            if not u.path.startswith(pre):
                return self.answer(404, '{"error":"NOT_FOUND"}')
            what = u.path[len(pre):]
            if what == "checkpoint":
                return self.answer(200, self.server.checkpoint or log.checkpoint(size), "text/plain")
            if what == "entries" and self.server.hostile:
                return self.hostile(self.server.hostile)
            if what == "entries":
                s, e = int(q["start"]), int(q["end"])
                if s < 0 or s >= size or e > size or s >= e:
                    return self.answer(400, '{"error":"BAD_REQUEST"}')
                e = min(e, s + 1000)
                out = b"".join(log.serve_leaf.get(i, log.leaves[i]) + b"\n" for i in range(s, e))
                return self.answer(200, out, "application/x-ndjson")
            if what == "proof/inclusion":
                i, n = int(q["index"]), int(q["size"])
                if not 0 <= i < n <= size:
                    return self.answer(400, '{"error":"BAD_REQUEST"}')
                return self.answer(200, json.dumps({
                    "index": i, "size": n, "leafHash": b64(log.mth(i, i + 1)),
                    "hashes": [b64(h) for h in log.path(i, 0, n)]}))
            if what == "proof/consistency":
                m, n = int(q["from"]), int(q["to"])
                if not 1 <= m <= n <= size:
                    return self.answer(400, '{"error":"BAD_REQUEST"}')
                return self.answer(200, json.dumps({
                    "from": m, "to": n, "hashes": [b64(h) for h in log.subproof(m, 0, n, True)]}))
        except (KeyError, ValueError):
            return self.answer(400, '{"error":"BAD_REQUEST"}')
        return self.answer(404, '{"error":"NOT_FOUND"}')


def serve(log, port=0):
    """Serves log on 127.0.0.1 in a thread; returns the server (its port:
    server.server_address[1]; stop with server.shutdown()). server.size
    (None: all) caps what the checkpoint covers; server.checkpoint (None:
    made fresh) overrides it; server.hostile (None: off) makes the entries
    route never finish its answer (Handler.hostile's modes)."""
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    srv.log, srv.size, srv.checkpoint, srv.hostile = log, None, None, None
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class Sale:
    """Writes the leaves of a sale into a log, following the line's rules
    (one standard line and any groups), so that it is fair unless told."""

    def __init__(self, log):
        self.log, self.at, self.t = log, 1700000000000000, 1700000000000000
        self.line = {}  # group -> [u in order] (not away)
        self.away = set()
        self.pending = []  # pre-queue joins awaiting the draw
        self.seed = None

    @staticmethod
    def uid(i):
        return hashlib.sha256(b"user %d" % i).hexdigest()[:32]

    def leaf(self, d):
        self.at += 1
        self.log.append(dict({"e": d.pop("e"), "at": self.at}, **d))

    def commit(self, seed):
        self.seed = seed
        self.leaf({"e": "commit", "seedHash": sha(seed).hex()})

    def join(self, u, pre=False, grp=None):
        self.t += 1
        d = {"e": "join", "u": u, "t": self.t}
        if pre:
            d["pre"] = True
        if grp:
            d["grp"] = grp
        self.leaf(d)
        if pre and self.seed is not None:
            self.pending.append((u, grp))
        else:
            self.line.setdefault(grp, []).append(u)

    def draw(self, seed=None, n=None):
        seed = seed or self.seed
        d = sha(self.seed)  # the order is the committed seed's, whatever is revealed
        ranked = sorted(self.pending, key=lambda p: sha(d + bytes.fromhex(p[0])))
        for grp in {g for _, g in ranked}:
            self.line[grp] = [u for u, g in ranked if g == grp] + self.line.get(grp, [])
        self.leaf({"e": "draw", "n": len(self.pending) if n is None else n, "seed": seed.hex()})
        self.pending, self.seed = [], None

    def admit_first(self, grp=None):
        u = self.line[grp].pop(0)
        d = {"e": "admit", "u": u}
        if grp:
            d["grp"] = grp
        self.leaf(d)
        return u

    def go_away(self, grp=None):
        u = self.line[grp].pop(0)
        self.away.add(u)
        self.leaf({"e": "away", "u": u})
        return u

    def admit_held(self, u, grp=None):
        self.away.discard(u)
        d = {"e": "admit", "u": u, "held": True}
        if grp:
            d["grp"] = grp
        self.leaf(d)

    def leave_last(self, why="left", grp=None):
        u = self.line[grp].pop()
        self.leaf({"e": "leave", "u": u, "why": why})
        return u


def fair_sale(log, events, seed=b"\x42" * 32):
    """A fair sale of about `events` leaves: a drawn pre-queue of 100, then
    joins, admissions, people away and back, leaves."""
    s = Sale(log)
    s.commit(seed)
    for i in range(100):
        s.join(s.uid(i), pre=True)
    s.draw()
    i = 100
    while len(log.leaves) < events:
        s.join(s.uid(i))
        i += 1
        k = i % 10
        if k in (1, 4, 7) and s.line[None]:
            s.admit_first()
        elif k == 2 and len(s.line[None]) > 5:
            s.go_away()
        elif k == 5 and s.away:
            s.admit_held(next(iter(s.away)))
        elif k == 8 and len(s.line[None]) > 3:
            s.leave_last()
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    log = Log()
    fair_sale(log, a.events)
    srv = serve(log, a.port)
    print(srv.server_address[1], log.vkey(), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
