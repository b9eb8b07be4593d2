"""The queue page of a sale opening (docs/API.md, "Pages" and "Sale opening:
scheduled start and pre-queue"): the server-rendered pre-queue view that
people without JavaScript see, in English and Korean, and the page turning
into the position view once the line has opened."""
import re
import time

from harness import ENV, HOLD, WRTest
from helpers import page_attr, set_cookies


def utc(ms):
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ms // 1000))


def element_text(r, id_):
    m = re.search(r'id="%s"[^>]*>([^<]*)<' % re.escape(id_), r.body)
    return m.group(1) if m else None


class OpeningPage(WRTest):
    server = "cookie"

    def test_prequeue_page_without_javascript(self):
        opens_at = int(time.time() * 1000) + 120000
        q = self.new_queue(dict(HOLD, opensAt=opens_at))
        r = self.c.get("/q/" + q, {"Accept-Language": "en-US,en;q=0.9"})
        self.assertEqual(r.status, 200, r)
        self.assertIn("text/html", r.headers.get("content-type", ""))
        self.assertEqual(page_attr(r, "data-state"), "prequeue")
        self.assertEqual(page_attr(r, "data-opens-at"), str(opens_at))
        now = int(page_attr(r, "data-server-now"))
        self.assertLess(abs(now - time.time() * 1000), 5000, "data-server-now is the clock")
        self.assertEqual(element_text(r, "opens-at"), utc(opens_at))
        self.assertEqual(page_attr(r, "datetime"),
                         time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(opens_at // 1000)))
        self.assertIn("You are in the pre-queue. The line opens at %s." % utc(opens_at), r.body)
        self.assertIn("ahead of everyone who comes later", r.body)
        m = re.match(r"^(\d+):(\d\d)$", element_text(r, "countdown") or "")
        self.assertTrue(m, element_text(r, "countdown"))
        left = int(m.group(1)) * 60 + int(m.group(2))
        self.assertTrue(110 <= left <= 120, left)
        # no-JS: reload at the poll interval (the countdown's polls: at most ~5 s)
        refresh = re.search(r'http-equiv="refresh" content="(\d+)"', r.body)
        self.assertTrue(refresh, "a meta refresh")
        self.assertTrue(2 <= int(refresh.group(1)) <= 6, refresh.group(1))
        vid = set_cookies(r)["wr_vid"][0]

        # Korean
        rk = self.c.get("/q/" + q, {"Accept-Language": "ko-KR,ko;q=0.9",
                                    "Cookie": "wr_vid=" + vid})
        self.assertEqual(page_attr(rk, "data-state"), "prequeue")
        self.assertIn("사전 대기열에 계십니다. 대기열은 %s에 열립니다." % utc(opens_at), rk.body)
        self.assertIn("아직 판매가 시작되지 않았습니다", rk.body)

        # the opening (opensAt null: at once): the same visitor gets a place
        self.assertEqual(self.c.patch_queue(q, {"opensAt": None}).status, 200)
        deadline = time.time() + 5
        while True:
            r2 = self.c.get("/q/" + q, {"Cookie": "wr_vid=" + vid})
            if page_attr(r2, "data-state") == "waiting" or time.time() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(page_attr(r2, "data-state"), "waiting", r2.body[:300])
        self.assertEqual(page_attr(r2, "data-position"), "1")
        self.assertEqual(page_attr(r2, "data-opens-at"), "")
