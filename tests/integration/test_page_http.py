"""The queue page and the routes over HTTP (issue 22): every error on
/q/{queue} is the HTML page (with the JSON code in it) while /v1 stays JSON,
HEAD sends exactly GET's headers, 503 Retry-After is jittered (and the page
agrees with it), and CJK text keeps its words whole."""
import html
import math
import re
import signal

from harness import ADMIN, ENV, HOLD, Client, WRTest, free_port, uid
from helpers import private_server, spawn

CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; frame-ancestors 'none'")


def page_attr(r, name):
    m = re.search(r'\s%s="([^"]*)"' % re.escape(name), r.body)
    return html.unescape(m.group(1)) if m else None


class PageErrors(WRTest):

    def assertPage(self, r, status, code, state="error"):
        self.assertEqual(r.status, status, r)
        self.assertEqual(r.headers.get("content-type"), "text/html; charset=utf-8", r)
        self.assertEqual(r.headers.get("content-security-policy"), CSP)
        self.assertEqual(r.headers.get("x-content-type-options"), "nosniff")
        self.assertEqual(r.headers.get("cache-control"), "no-store")
        self.assertTrue(r.body.startswith("<!doctype html>"), r.body[:100])
        self.assertEqual(page_attr(r, "data-error"), code)
        self.assertEqual(page_attr(r, "data-state"), state)

    def test_errors_on_the_page_route_are_html(self):
        """Issue 22: /q/my%20shop answered a browser raw JSON; every error on
        the /q/ route is the HTML page with the JSON code in it."""
        r = self.c.get("/q/my%20shop")
        self.assertPage(r, 400, "INVALID_QUEUE_NAME")
        self.assertIn("INVALID_QUEUE_NAME", r.body.split('id="status"', 1)[1].split("</p>")[0])
        self.assertEqual(page_attr(r, "data-retry-ms"), "0", "an error without Retry-After "
                         "is not retried")
        self.assertNotIn('http-equiv="refresh" content="1', r.body)
        r = self.c.get("/q/" + "x" * 65)
        self.assertPage(r, 400, "INVALID_QUEUE_NAME")
        # Korean when asked
        r = self.c.get("/q/my%20shop", {"Accept-Language": "ko"})
        self.assertPage(r, 400, "INVALID_QUEUE_NAME")
        self.assertIn('lang="ko"', r.body)
        # header mode: the identity header twice, or missing
        q = self.new_queue(HOLD)
        r = self.c.request("GET", "/q/" + q, {"X-User-Id": "a"})
        self.assertEqual(r.status, 200, r)
        r = self.c.request("GET", "/q/" + q, {})
        self.assertPage(r, 400, "INVALID_USER_ID")
        # the domain answers keep their states, now with the code too
        r = self.c.get("/q/no-such-queue-" + uid(), {"X-User-Id": "a"})
        self.assertPage(r, 404, "QUEUE_NOT_FOUND", state="notfound")
        # the /v1 routes stay JSON
        r = self.c.request("POST", "/v1/queues/my%20shop/entries", {"X-User-Id": "a"})
        self.assertEqual(r.status, 400)
        self.assertEqual(r.headers.get("content-type"), "application/json")
        self.assertEqual(r.json["error"], "INVALID_QUEUE_NAME")

    def test_rate_limited_page_retries_after_retry_after(self):
        """Issue 22: a 429 on the page route is the page, in state error, and
        asks again after the Retry-After it carries."""
        w = private_server(self, identity="header:X-User-Id",
                           extra=["--join-rate", "0.001", "--join-burst", "1"])
        q = self.new_queue(HOLD, client=w.client)
        codes = [w.client.request("GET", "/q/" + q, {"X-User-Id": uid()}) for _ in range(3)]
        limited = [r for r in codes if r.status == 429]
        self.assertTrue(limited, [r.status for r in codes])
        r = limited[0]
        self.assertPage(r, 429, "RATE_LIMITED")
        ra = int(r.headers["retry-after"])
        self.assertGreaterEqual(ra, 1)
        self.assertEqual(page_attr(r, "data-retry-ms"), str(ra * 1000))
        self.assertEqual(w.terminate(), 0)


class HeadLikeGet(WRTest):

    IGNORED = {"date", "content-length", "set-cookie"}

    def test_head_sends_gets_headers(self):
        """Issue 22: HEAD /q/{q} lacked GET's Content-Security-Policy and
        nosniff. On every GET route HEAD sends GET's headers (names and
        values; Date, Content-Length and the cookies a GET join sets aside)."""
        q = self.new_queue(HOLD)
        user = {"X-User-Id": "head-" + uid()}
        self.assertEqual(self.c.join(q, user["X-User-Id"]).status, 200)
        routes = [
            ("/q/" + q, user),
            ("/healthz", {}),
            ("/readyz", {}),
            ("/metrics", {}),
            ("/admin", {}),
            ("/static/style.css", {}),
            ("/static/queue.js", {}),
            ("/v1/admin/queues", ADMIN),
            ("/v1/admin/queues/" + q, ADMIN),
            ("/v1/admin/queues/%s/history" % q, ADMIN),
            ("/v1/queues/%s/entries/me" % q, user),
            ("/v1/queues/%s/tokens/verify" % q, {"Authorization": "Bearer x.y.z"}),
            ("/q/bad%20name", {}),
        ]
        for path, headers in routes:
            g = self.c.request("GET", path, headers)
            h = self.c.request("HEAD", path, headers)
            self.assertEqual(h.status, g.status, path)
            self.assertEqual(h.body, "", path)
            want = {k: v for k, v in g.headers.items() if k not in self.IGNORED}
            got = {k: v for k, v in h.headers.items() if k not in self.IGNORED}
            self.assertEqual(got, want, path)


class SaleEdgesPage(WRTest):
    """Issue 23: the page's first render (and the page without JavaScript)
    at a sale's edges: the odds with grouped numbers, the operator's notice
    as text, closed and sold out with a re-check of at most 60 s, and back
    to the line when the sale reopens."""

    HOSTILE = '<img src=x onerror="alert(1)"></p><script>alert(2)</script> & more'

    def page(self, q, user, lang="en"):
        r = self.c.get("/q/" + q, {"X-User-Id": user, "Accept-Language": lang})
        self.assertEqual(r.status, 200, r)
        return r

    def test_odds_notice_closed_sold_out(self):
        q = self.new_queue(dict(HOLD, stock=12000, notice=self.HOSTILE))
        for u in ("a", "b"):
            self.assertEqual(self.c.join(q, u).status, 200)
        r = self.page(q, "c")
        self.assertEqual(page_attr(r, "data-state"), "waiting")
        self.assertEqual(page_attr(r, "data-stock-left"), "12000")
        self.assertIn('<p id="odds" class="odds">About 12,000 left.</p>', r.body)
        self.assertEqual(page_attr(r, "data-notice"), "1")
        notice = r.body.split('<p id="notice"', 1)[1].split(">", 1)[1].split("</p>", 1)[0]
        self.assertEqual(html.unescape(notice), self.HOSTILE)
        self.assertNotIn("<img src=x", r.body)  # (the template's own <img> is the logo)
        self.assertEqual(r.body.count("<img"), 1)
        self.assertNotIn("<script>alert", r.body)
        r = self.page(q, "d", "ko")
        self.assertIn("남은 수량은 약 12,000개입니다.", r.body)

        # sold out: stock 0 and no pass live; someone new is told the same
        self.assertEqual(self.c.patch_queue(q, {"stock": 0}).status, 200)
        for user in ("c", "new-" + uid()):
            r = self.page(q, user)
            self.assertEqual(page_attr(r, "data-state"), "closed")
            self.assertEqual(page_attr(r, "data-reason"), "soldOut")
            self.assertIn('<h1 id="heading">Sold out</h1>', r.body)
            self.assertIn(">If more becomes available, this page moves on by itself.</p>", r.body)
            retry = int(page_attr(r, "data-retry-ms"))
            self.assertTrue(1000 <= retry <= 60000, retry)
            refresh = int(re.search(r'http-equiv="refresh" content="(\d+)"', r.body).group(1))
            self.assertTrue(2 <= refresh <= 60, refresh)
            self.assertEqual(page_attr(r, "data-notice"), "1", "the notice stays")
        r = self.page(q, "c", "ko")
        self.assertIn('<h1 id="heading">매진되었습니다</h1>', r.body)

        # the sale ends; then reopens without the notice: back in line, same place
        self.assertEqual(self.c.patch_queue(q, {"stock": 5, "closed": True}).status, 200)
        r = self.page(q, "c")
        self.assertEqual(page_attr(r, "data-reason"), "closed")
        self.assertIn('<h1 id="heading">The sale has ended</h1>', r.body)
        r = self.page(q, "c", "ko")
        self.assertIn(">판매가 다시 열리면 이 페이지가 자동으로 넘어갑니다.</p>", r.body)
        self.assertEqual(self.c.patch_queue(q, {"closed": False, "notice": None}).status, 200)
        r = self.page(q, "c")
        self.assertEqual(page_attr(r, "data-state"), "waiting")
        self.assertIn('<strong id="position" class="num">3</strong>', r.body)
        self.assertIn('<p id="odds" class="odds">About 5 left.</p>', r.body)
        self.assertEqual(page_attr(r, "data-notice"), "0")


class WaitingForStock(WRTest):
    """K46 (API 1.3): while admission waits only on stock (stock 0 with a
    pass live), waiting answers carry etaSeconds null and "waitingFor":
    "stock", and the page says what it waits for instead of a time."""

    def test_stock_zero_with_a_live_pass(self):
        q = self.new_queue({"admitPerSecond": 50, "stock": 1, "tokenTtlSeconds": 300})
        self.assertEqual(self.c.join(q, "first").status, 200)
        self.wait_admitted(q, "first")  # the one pass is live; stock is now 0
        for u in ("second", "third"):
            self.assertEqual(self.c.join(q, u).status, 200)
        r = self.c.me(q, "second")
        self.assertEqual(r.status, 200, r)
        b = r.json
        self.assertEqual((b["status"], b["position"], b["stockLeft"]), ("waiting", 1, 0), r)
        self.assertIsNone(b["etaSeconds"], r)
        self.assertEqual(b.get("waitingFor"), "stock", r)
        r = self.c.get("/q/" + q, {"X-User-Id": "third", "Accept-Language": "en"})
        self.assertEqual(page_attr(r, "data-waiting-for"), "stock")
        self.assertIn('<dd id="eta">when an unused pass comes back</dd>', r.body)
        self.assertIn('<p id="odds" class="odds">None left right now.</p>', r.body)
        # with stock left, no waitingFor and an ETA again: ceil(position /
        # admitPerSecond), at a rate slow enough that "third" still waits
        # (at 50/s it was let in at once and the ETA went unchecked)
        self.assertEqual(self.c.patch_queue(q, {"stock": 5, "admitPerSecond": 0.1}).status, 200)
        r = self.c.me(q, "third")
        b = r.json
        self.assertEqual(b["status"], "waiting", r)
        self.assertNotIn("waitingFor", b)
        self.assertEqual(b["etaSeconds"], math.ceil(b["position"] / 0.1), r)


class RetryAfterJitter(WRTest):
    """Case K13 (thundering herd): the clients a store outage turns away
    must not all come back in the same second."""

    def test_503_retry_after_is_jittered(self):
        """Issue 22: 503 always said Retry-After: 2; now a whole number of
        seconds drawn from 1-3 per answer, on the JSON routes and the page
        (whose own retry, data-retry-ms, is the header's)."""
        dead = free_port()  # nothing listens: the store is unreachable
        proc, port, _ = spawn(self, ["--store", "redis://127.0.0.1:%d" % dead, "--token-secret",
                                     ENV.secret, "--identity", "header:X-User-Id",
                                     "--store-timeout-ms", "50"])
        c = Client(port)
        seen = []
        for i in range(45):
            r = c.join("jit", "u%d" % i)
            self.assertEqual(r.status, 503, r)
            self.assertEqual(r.json["error"], "STORE_UNAVAILABLE")
            seen.append(int(r.headers["retry-after"]))
        for i in range(15):
            r = c.request("GET", "/q/jit", {"X-User-Id": "p%d" % i})
            self.assertEqual(r.status, 503, r)
            self.assertEqual(page_attr(r, "data-state"), "unavailable")
            self.assertEqual(page_attr(r, "data-error"), "STORE_UNAVAILABLE")
            ra = int(r.headers["retry-after"])
            self.assertEqual(page_attr(r, "data-retry-ms"), str(ra * 1000))
            seen.append(ra)
        self.assertTrue(set(seen) <= {1, 2, 3}, sorted(set(seen)))
        # 60 draws from 3 values: each value at least 5 times (P(fail) < 1e-6)
        for v in (1, 2, 3):
            self.assertGreaterEqual(seen.count(v), 5, seen)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=15), 0)


class CjkWords(WRTest):

    def test_keep_all_for_cjk(self):
        """Issue 22: the Korean page broke words inside; ko, ja and zh keep
        words whole (word-break: keep-all by :lang())."""
        r = self.c.get("/static/style.css")
        self.assertEqual(r.status, 200)
        rules = re.findall(r"([^{}]+)\{([^}]*)\}", r.body)
        langs = set()
        for sel, body in rules:
            if re.search(r"word-break\s*:\s*keep-all", body):
                langs |= set(re.findall(r":lang\((\w+)\)", sel))
        self.assertTrue({"ko", "ja", "zh"} <= langs, langs)
