"""Security (issue 6): 10,000 hostile inputs against a running server.

A dedicated waitroomd (header mode) receives, each on its own connection:
  - 4,000 random byte strings (0..2,000 bytes),
  - 3,000 mutations of valid requests (bytes flipped, inserted, deleted,
    truncated),
  - 3,000 well-formed but wrong requests (wrong methods, bad queue names,
    unknown queues, bad JSON, forged tokens, bad admin keys, odd headers).
Every connection must end in an HTTP answer or a clean close - never a
crash. Well-formed-but-wrong requests must get the documented status and,
where the status is ours, a JSON error body. Afterwards the server is alive,
answers a control queue exactly as before (nothing leaked into it), and
exits 0 on SIGTERM. The random seed is printed so a failure can be replayed
(WR_GARBAGE_SEED).
"""
import json
import os
import random
import socket
import sys
import threading

import jwtutil
from harness import HOLD, WRTest, uid
from helpers import private_server

N_RANDOM, N_MUTATED, N_WRONG = 4000, 3000, 3000


def exchange(port, data, timeout=5.0):
    """Sends data, closes the write side, reads to EOF. Returns the raw answer
    (b"" if the server closed without one) or None on reset/timeout."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may answer and close before reading it all
        buf = b""
        while True:
            try:
                d = s.recv(65536)
            except socket.timeout:
                return None
            except ConnectionResetError:
                return buf if buf.startswith(b"HTTP/1.") else None
            if not d:
                return buf
            buf += d
    finally:
        s.close()


def statuses(raw):
    """Status codes of every response in raw (pipelined answers)."""
    out = []
    for part in raw.split(b"HTTP/1.1 ")[1:]:
        code = part[:3]
        if code.isdigit():
            out.append(int(code))
    return out


def first_body(raw):
    head, _, rest = raw.partition(b"\r\n\r\n")
    n = None
    for ln in head.split(b"\r\n")[1:]:
        k, _, v = ln.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v.strip())
    return head, rest[:n] if n is not None else rest


class Garbage(WRTest):

    def test_ten_thousand_hostile_inputs(self):
        seed = int(os.environ.get("WR_GARBAGE_SEED", random.randrange(1 << 30)))
        print("\n  garbage seed %d (WR_GARBAGE_SEED)" % seed, file=sys.stderr)
        rnd = random.Random(seed)
        srv = private_server(self, identity="header:X-User-Id",
                             extra=("--request-timeout-seconds", "3"))
        c = srv.client
        control = self.new_queue(HOLD, client=c, prefix="control")
        users = [uid() for _ in range(3)]
        for u in users:
            self.assertEqual(c.join(control, u).status, 200)
        target = self.new_queue(HOLD, client=c, prefix="target")
        tok = jwtutil.sign({"alg": "HS256", "typ": "JWT"},
                           jwtutil.claims_for(target, "u1", 1700000000, 300), b"wrong")

        valid = [
            b"GET /v1/queues/%s/entries/me HTTP/1.1\r\nHost: x\r\nX-User-Id: g1\r\n\r\n"
            % target.encode(),
            b"POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: g2\r\n"
            b"Content-Length: 2\r\n\r\n{}" % target.encode(),
            b"POST /v1/queues/%s/tokens/consume HTTP/1.1\r\nHost: x\r\nContent-Type: "
            b"application/json\r\nContent-Length: 16\r\n\r\n{\"token\":\"a.b\"}" % target.encode(),
            b"PATCH /v1/admin/queues/%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bad\r\n"
            b"Content-Length: 17\r\n\r\n{\"paused\":false}" % target.encode(),
            b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
        ]

        def mutate(b):
            b = bytearray(b)
            for _ in range(rnd.randint(1, 8)):
                op = rnd.randrange(4)
                i = rnd.randrange(len(b) + 1)
                if op == 0 and b:
                    b[min(i, len(b) - 1)] = rnd.randrange(256)
                elif op == 1:
                    b[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 20)))
                elif op == 2 and b:
                    del b[i:i + rnd.randint(1, 20)]
                else:
                    b = b[:i]
            return bytes(b)

        bad_names = ["a" * 65, "sp ace", "%00", "..", "q%2Fx", "\u00e9".encode().decode(),
                     "x" * 300, "%", "q;drop", "*"]

        def wrong():
            """(request bytes, allowed statuses, our JSON error expected)"""
            kind = rnd.randrange(9)
            q = target
            if kind == 0:  # unknown queue
                q = "nope-" + uid()
                return (b"GET /v1/queues/%s/entries/me HTTP/1.1\r\nHost: x\r\nX-User-Id: u\r\n"
                        b"\r\n" % q.encode(), {404}, True)
            if kind == 1:  # invalid queue name
                n = rnd.choice(bad_names).replace(" ", "%20").encode("utf-8", "replace")
                return (b"POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: u\r\n"
                        b"Content-Length: 0\r\n\r\n" % n, {400, 404}, True)
            if kind == 2:  # wrong method
                m = rnd.choice([b"PUT", b"PATCH", b"DELETE", b"POST"])
                return (b"%s /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n" % m,
                        {405}, True)
            if kind == 3:  # bad JSON on consume
                body = rnd.choice([b"{", b"[]", b"{\"token\":1}", b"null", b"\xff\xfe",
                                   b"{\"token\":\"a\",\"userId\":[]}"])
                return (b"POST /v1/queues/%s/tokens/consume HTTP/1.1\r\nHost: x\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (q.encode(), len(body), body),
                        {400}, True)
            if kind == 4:  # forged token
                t = rnd.choice([tok, "a.b.c", "x" * 2000, tok[:-3] + "AAA", "..",
                                jwtutil.unsigned({"alg": "none"}, {"aud": q})])
                return (b"GET /v1/queues/%s/tokens/verify HTTP/1.1\r\nHost: x\r\n"
                        b"Authorization: Bearer %s\r\n\r\n" % (q.encode(), t.encode()),
                        {403}, True)
            if kind == 5:  # bad admin key
                k = rnd.choice([b"", b"x", b"test-admin-keY", b"Basic abc"])
                return (b"DELETE /v1/admin/queues/%s HTTP/1.1\r\nHost: x\r\n"
                        b"Authorization: Bearer %s\r\n\r\n" % (control.encode(), k), {401}, True)
            if kind == 6:  # bad user id
                u = rnd.choice([b"", b"a b", b"x" * 129, b"<script>", b"\xc3\xa9"])
                return (b"POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                        b"Content-Length: 0\r\n\r\n" % (q.encode(), u), {400}, True)
            if kind == 7:  # unknown path
                p = "/" + "/".join(uid() for _ in range(rnd.randint(1, 8)))
                return (b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % p.encode(), {404}, True)
            # Content-Length larger than the body: the request never
            # completes; closing our side ends it without an answer
            return (b"POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: u\r\n"
                    b"Content-Length: 100\r\n\r\n{}" % q.encode(), {None}, False)

        cases = []
        for _ in range(N_RANDOM):
            cases.append((bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 2000))),
                          None, False))
        for _ in range(N_MUTATED):
            cases.append((mutate(rnd.choice(valid)), None, False))
        for _ in range(N_WRONG):
            cases.append(wrong())
        rnd.shuffle(cases)

        problems = []
        counts = {"answered": 0, "closed": 0}
        lock = threading.Lock()

        def worker(part):
            for data, allowed, ours in part:
                raw = exchange(srv.port, data)
                with lock:
                    if raw is None:
                        problems.append(("reset or hang", data[:200]))
                        continue
                    counts["answered" if raw else "closed"] += 1
                    if allowed is None:
                        continue
                    st = statuses(raw)
                    got = st[0] if st else None
                    if got not in allowed:
                        problems.append(("status %r not in %r" % (got, allowed), data[:200],
                                         raw[:300]))
                    elif ours and got is not None:
                        head, body = first_body(raw)
                        try:
                            ok = isinstance(json.loads(body).get("error"), str)
                        except ValueError:
                            ok = False
                        if not ok or b"application/json" not in head.lower():
                            problems.append(("not a JSON error", data[:200], raw[:300]))

        threads = [threading.Thread(target=worker, args=(cases[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertIsNone(srv.proc.poll(), "waitroomd died:\n" + srv.stderr_tail())
        self.assertEqual(problems[:5], [], "%d problems (seed %d)" % (len(problems), seed))
        self.assertEqual(counts["answered"] + counts["closed"], len(cases))
        print("  %d answered, %d closed without an answer" % (counts["answered"],
                                                              counts["closed"]), file=sys.stderr)
        # alive and correct: the control queue is exactly as it was
        for i, u in enumerate(users, start=1):
            self.assertWaiting(c.me(control, u), i, 3, eta_null=True, what="control after")
        self.assertEqual(self.stats(control, c)["waiting"], 3)
        self.assertEqual(c.get("/healthz").status, 200)
        self.assertEqual(c.get("/metrics").status, 200)
        self.assertEqual(c.get_queue(target).status, 200, "the target queue still exists")
        self.assertEqual(srv.terminate(), 0, srv.stderr_tail())
