"""API.md 1.3 "HTTP, precisely" and its clarifications: pipelining (16
requests in one send, answered in order), every item of the smuggling and
malformed set refused with 400 and a closed connection, HTTP/1.0, chunked
bodies and their limit, 100-continue, the JSON error form with its codes
(400, 405 with Allow, 413, 414, 417, 431, 501, 505), absolute-form targets,
HEAD, and HTTP/1.2 answered as 1.1."""
import json
import socket
import time

from harness import HOLD, WRTest, uid
from helpers import metric, plain_metric


def responses(text):
    """Splits raw answers (Content-Length framed; HEAD answers have none of
    their body) into (status, headers dict, body) triples."""
    out = []
    while text.startswith("HTTP/1.1 "):
        head, sep, rest = text.partition("\r\n\r\n")
        if not sep:
            break
        lines = head.split("\r\n")
        status = int(lines[0].split(" ")[1])
        hd = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            hd[k.strip().lower()] = v.strip()
        n = int(hd.get("content-length", "0")) if status != 100 else 0
        if hd.pop("x-head", None):
            n = 0
        out.append((status, hd, rest[:n]))
        text = rest[n:]
    return out


def talk(port, data, timeout=5.0, head_only=False):
    """Sends data on a new connection and reads until the server closes it
    or timeout seconds pass: (text, closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    out, closed = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            s.settimeout(max(0.05, deadline - time.monotonic()))
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            out += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
    s.close()
    return out.decode(errors="replace"), closed


def sum_requests(client):
    """waitroom_http_requests_total over every route and status."""
    total = 0.0
    for line in client.get("/metrics").body.splitlines():
        if line.startswith("waitroom_http_requests_total{"):
            total += float(line.split()[-1])
    return total


class HttpPrecisely(WRTest):

    def setUp(self):
        super().setUp()
        self.port = self.c.port

    def refused(self, data, status=400, code="BAD_REQUEST"):
        text, closed = talk(self.port, data, timeout=3)
        rs = responses(text)
        self.assertEqual(len(rs), 1, "%r -> %r" % (data[:120], text))
        st, hd, body = rs[0]
        self.assertEqual(st, status, "%r -> %r" % (data[:120], text))
        self.assertEqual(hd.get("content-type"), "application/json", text)
        self.assertEqual(hd.get("connection"), "close", text)
        self.assertEqual(json.loads(body)["error"], code, text)
        self.assertTrue(closed, "%r: the connection is closed" % data[:120])

    def test_pipelining_16_in_one_send_answered_in_order(self):
        q = self.new_queue(HOLD)
        users = [uid() for _ in range(16)]
        data = b"".join(("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                         "Content-Length: 0\r\n\r\n" % (q, u)).encode() for u in users)
        text, closed = talk(self.port, data, timeout=2)
        rs = responses(text)
        self.assertEqual([r[0] for r in rs], [200] * 16, text[-400:])
        self.assertEqual([json.loads(r[2])["position"] for r in rs], list(range(1, 17)))
        self.assertFalse(closed, "keep-alive")
        # 20 at once: the last 4 are read once answers left, all in order
        data = b"".join(("GET /v1/queues/%s/entries/me HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                         "\r\n" % (q, users[i % 16])).encode() for i in range(20))
        rs = responses(talk(self.port, data, timeout=2)[0])
        self.assertEqual([json.loads(r[2])["position"] for r in rs],
                         [i % 16 + 1 for i in range(20)])

    def test_smuggling_set_is_400_and_closed(self):
        q = self.new_queue(HOLD)
        join = "POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n" % (q, uid())
        inner = join + "Content-Length: 0\r\n\r\n"
        cases = [
            join + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            join + "Content-Length: 0\r\nContent-Length: %d\r\n\r\n%s" % (len(inner), inner),
            join + "Transfer-Encoding: gzip\r\n\r\n" + inner,
            join + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            join + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
            join + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            join.replace("HTTP/1.1", "HTTP/1.0") + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            join + "Transfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n",
            join + "Transfer-Encoding: chunked\r\n\r\nz\r\n{}\r\n0\r\n\r\n",
            join + "X-A: 1\r\n folded\r\n\r\n",
            join + "X-A: 1\r\n\tfolded\r\n\r\n",
            join + "X-A : 1\r\n\r\n",
            join + "X-A: a\rb\r\n\r\n",
            join + "X-A: a\x00b\r\n\r\n",
            join + "X-A: a\nb\r\n\r\n",
            join.replace("\r\nHost", "\nHost") + "\r\n",
            join + "Content-Length: 1x\r\n\r\n",
            join + "Content-Length: -1\r\n\r\n",
            join + "Content-Length: 9223372036854775808\r\n\r\n",
            "POST  /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\n\r\n" % q,
            "POST /v1/queues/%s/entries HTTP/1.1 \r\nHost: x\r\n\r\n" % q,
            "POST /v1/queues/%s/entries HTTP/1.1\r\n\r\n" % q,
            "POST /v1/queues/%s/entries HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" % q,
            "POST /v1/queues/%s/entries HTTP/1.1\r\nHost: a/b\r\n\r\n" % q,
            # a fragment is in neither target form (RFC 9112 3.2): no client sends one
            "POST /v1/queues/%s/entries#x HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
            "Content-Length: 0\r\n\r\n" % (q, uid()),
            "POST http://x/v1/queues/%s/entries?a=1#x HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
            "Content-Length: 0\r\n\r\n" % (q, uid()),
            # an empty field name (llhttp 8 accepts it): a front proxy may
            # read ": v" or ":Host: a" otherwise
            join + ": v\r\n\r\n",
            join + ":\r\n\r\n",
            join.replace("Host: x", ":Host: a\r\nHost: x") + "\r\n",
        ]
        refused0 = metric(self.c, "waitroom_http_refused_total", 'reason="bad_request"')
        served0 = sum_requests(self.c)
        for data in cases:
            with self.subTest(data=data[:200]):
                self.refused(data.encode())
        self.assertEqual(self.stats(q)["waiting"], 0, "no join was served")
        # an operator sees them: refused by the layer, never counted as answered requests
        # (at least: other tests of this shard's server may add theirs)
        self.assertGreaterEqual(
            metric(self.c, "waitroom_http_refused_total", 'reason="bad_request"') - refused0,
            len(cases))
        self.assertLess(sum_requests(self.c) - served0, len(cases),
                        "refusals are not in waitroom_http_requests_total")

    def test_other_statuses_are_json(self):
        self.refused(b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505,
                     "HTTP_VERSION_NOT_SUPPORTED")
        self.refused(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED")
        self.refused(b"BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 501, "NOT_IMPLEMENTED")
        # a method is a token of any length: an unknown one is 501 however long
        for m in (b"A" * 16, b"A" * 17, b"GET" * 20, b"get"):
            self.refused(m + b" /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 501, "NOT_IMPLEMENTED")
        self.refused(("GET /healthz?x=%s HTTP/1.1\r\nHost: x\r\n\r\n" % ("a" * 9000)).encode(),
                     414, "URI_TOO_LONG")
        big0 = metric(self.c, "waitroom_http_refused_total", 'reason="headers_too_large"')
        self.refused(("GET /healthz HTTP/1.1\r\nHost: x\r\nX: %s\r\n\r\n" % ("a" * 33000)).encode(),
                     431, "HEADERS_TOO_LARGE")
        self.assertGreaterEqual(
            metric(self.c, "waitroom_http_refused_total", 'reason="headers_too_large"') - big0, 1)
        self.assertGreaterEqual(plain_metric(self.c, "waitroom_http_connections"), 1,
                                "the connection asking is open")
        self.assertGreaterEqual(plain_metric(self.c, "waitroom_http_connections_accepted_total"), 2)
        self.refused(b"POST /v1/admin/queues/x HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n"
                     b"Content-Length: 2\r\n\r\n{}", 417, "EXPECTATION_FAILED")

    def test_a_reset_after_part_of_a_request_frees_its_connection(self):
        # A client that sends part of a request and resets at once (SO_LINGER
        # 0): the bytes and the reset come together, and the connection must
        # close then, not hold its slot until the 10 s request deadline (a
        # client holding no socket could fill --max-connections).
        open0 = plain_metric(self.c, "waitroom_http_connections")
        parts = [b"GET /healthz HTTP/1.1\r\nHo",
                 b"POST /v1/queues/q/entries HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{\"a\""]
        for i in range(20):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=3)
            s.sendall(parts[i % 2])
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01" + b"\x00" * 7)
            s.close()
        deadline = time.monotonic() + 3.0
        now = plain_metric(self.c, "waitroom_http_connections")
        while now > open0 and time.monotonic() < deadline:
            time.sleep(0.05)
            now = plain_metric(self.c, "waitroom_http_connections")
        self.assertLessEqual(now, open0, "20 reset connections still open 3 s later")
        self.assertEqual(self.c.get("/healthz").status, 200)

    def test_consume_with_a_blank_body_reads_the_header(self):
        # white space alone is no body, as a join's: the Bearer token is
        # checked (403), not a 400 for the body
        q = self.new_queue(HOLD)
        for body in ("\n", " \r\n\t"):
            r = self.c.request("POST", "/v1/queues/%s/tokens/consume" % q,
                               {"Authorization": "Bearer a.b.c"}, body)
            self.assertEqual((r.status, json.loads(r.body)["error"]), (403, "INVALID_TOKEN"),
                             repr(body))
        r = self.c.request("POST", "/v1/queues/%s/tokens/consume" % q,
                           {"Authorization": "Bearer a.b.c"}, "[]")
        self.assertEqual(r.status, 400, r.body)

    def test_405_with_allow_before_the_queue_exists(self):
        text, _ = talk(self.port, ("PUT /v1/queues/nope-%s/entries HTTP/1.1\r\nHost: x\r\n"
                                   "Content-Length: 0\r\n\r\n" % uid()).encode(), timeout=1)
        st, hd, body = responses(text)[0]
        self.assertEqual(st, 405, text)
        self.assertEqual(json.loads(body)["error"], "METHOD_NOT_ALLOWED")
        self.assertIn("POST", hd.get("allow", ""), text)

    def test_http10_head_absolute_form_and_minor_versions(self):
        text, closed = talk(self.port, b"GET /healthz HTTP/1.0\r\n\r\n", timeout=2)
        st, hd, body = responses(text)[0]
        self.assertEqual((st, json.loads(body)), (200, {"status": "ok"}))
        self.assertTrue(closed, "HTTP/1.0 without keep-alive closes")
        text, closed = talk(self.port, b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
                            timeout=1)
        self.assertEqual(responses(text)[0][1].get("connection"), "keep-alive", text)
        self.assertFalse(closed)
        text, _ = talk(self.port, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                       b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", timeout=1)
        self.assertTrue(text.startswith("HTTP/1.1 200 OK\r\n"), text)
        head, _, rest = text.partition("\r\n\r\n")
        self.assertIn("Content-Length: 15", head)
        self.assertTrue(rest.startswith("HTTP/1.1 200 OK\r\n"), "HEAD has no body: %r" % text)
        # HEAD /q/{queue} renders no page: no Content-Length (0 would not be
        # GET's length, RFC 9110 8.6), and no body, on a connection kept open
        q = self.new_queue(HOLD)
        text, closed = talk(self.port, ("HEAD /q/%s HTTP/1.1\r\nHost: x\r\n\r\n"
                                        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" % q).encode(),
                            timeout=1)
        head, _, rest = text.partition("\r\n\r\n")
        self.assertTrue(head.startswith("HTTP/1.1 200 OK\r\n"), text)
        self.assertNotIn("content-length", head.lower(), text)
        self.assertTrue(rest.startswith("HTTP/1.1 200 OK\r\n"), "HEAD has no body: %r" % text)
        # the layer's own refusal of a HEAD has no body either
        text, closed = talk(self.port, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n x\r\n\r\n",
                            timeout=2)
        self.assertTrue(text.startswith("HTTP/1.1 400 ") and text.endswith("\r\n\r\n"), text)
        self.assertTrue(closed)
        text, _ = talk(self.port, b"GET http://example.com/healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                       b"GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n", timeout=1)
        self.assertEqual([r[0] for r in responses(text)], [200, 200], text)

    def test_chunked_bodies_and_their_limit(self):
        q = self.new_queue(HOLD)
        head = ("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                "Transfer-Encoding: Chunked\r\n\r\n" % (q, uid())).encode()
        text, closed = talk(self.port, head + b"1;ext=a\r\n{\r\n1\r\n}\r\n0\r\nX-T: 1\r\n\r\n",
                            timeout=1)
        self.assertEqual(responses(text)[0][0], 200, text)
        self.assertFalse(closed)
        # over 4 KiB: 413 as soon as the body passes it (the rest unsent)
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.sendall(head + b"1000\r\n" + b" " * 4096 + b"\r\n" + b"1\r\n ")
        text = s.recv(65536).decode()
        s.close()
        st, hd, body = responses(text)[0]
        self.assertEqual((st, json.loads(body)["error"]), (413, "PAYLOAD_TOO_LARGE"), text)
        self.assertEqual(hd.get("connection"), "close")
        # trailers are ignored but bounded as the head is: 32 KiB of them
        # is served, more is 431 and the connection closed (they were once
        # read without end)
        fill = b"X-T: " + b"a" * 1000 + b"\r\n"
        ok = head + b"2\r\n{}\r\n0\r\n" + fill * 30 + b"\r\n"
        text, closed = talk(self.port, ok, timeout=1)
        self.assertEqual(responses(text)[0][0], 200, text[:200])
        self.assertFalse(closed)
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.sendall(head + b"2\r\n{}\r\n0\r\n" + fill * 40)
        text = s.recv(65536).decode()
        st, hd, body = responses(text)[0]
        self.assertEqual((st, json.loads(body)["error"]), (431, "HEADERS_TOO_LARGE"), text)
        self.assertEqual(hd.get("connection"), "close")
        s.settimeout(5)
        self.assertEqual(s.recv(100), b"", "the connection is closed")
        s.close()

    def test_expect_100_continue(self):
        q = self.new_queue(HOLD)
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.sendall(("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                   "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n" % (q, uid())).encode())
        self.assertEqual(s.recv(100), b"HTTP/1.1 100 Continue\r\n\r\n")
        s.sendall(b"{}")
        self.assertTrue(s.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n"))
        s.close()
        self.refused(("POST /v1/queues/%s/entries HTTP/1.1\r\nHost: x\r\nX-User-Id: %s\r\n"
                      "Expect: 100-continue\r\nContent-Length: 5000\r\n\r\n" % (q, uid())).encode(),
                     413, "PAYLOAD_TOO_LARGE")
