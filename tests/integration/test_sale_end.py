"""The end of a sale: closed, stock, sold out, notices (API 1.2, issue 23).

`closed` answers {"status":"closed","reason":"closed"} to joins and polls
(people in line keep their place, a live pass still answers admitted, a
stranger's poll is 404); `stock` is taken by every admission and given back
by a pass that expires unconsumed or is given back (DELETE entries/me), never
by a consumed one; stock 0 with no pass live is sold out ("reason":"soldOut",
stats soldOutAt) until a PATCH restocks; `notice` rides on every user
answer, and (1.3) may be an object of language to text: answers carry the
visitor's language's text, else en's, else the first key's. Runs on both stores; the crash test (SIGKILL during admission with a
stock) is Redis's (the memory store's crash is its snapshot: RELIABILITY)."""
import html
import re
import time

from harness import ADMIN, FAST, HOLD, WRTest, uid
from helpers import metrics

CLOSED_MAX_MS = 60000


class SaleEnd(WRTest):

    def assertClosed(self, r, reason, notice=None, what=""):
        """The closed form: 200, exactly {"status":"closed","reason":...}
        (plus the notice while set), and the slow re-check in Retry-After
        (whole seconds, at most 60)."""
        self.assertEqual(r.status, 200, "%s: %r" % (what, r))
        self.assertJsonHeaders(r, what)
        want = {"status": "closed", "reason": reason}
        if notice:
            want["notice"] = notice
        self.assertEqual(r.json, want, "%s: %r" % (what, r))
        ra = int(r.headers.get("retry-after", "0"))
        self.assertGreaterEqual(ra, 30, "%s: Retry-After %r" % (what, r))
        self.assertLessEqual(ra, CLOSED_MAX_MS // 1000, "%s: Retry-After %r" % (what, r))
        return r.json

    def patch_ok(self, q, fields):
        r = self.c.patch_queue(q, fields)
        self.assertEqual(r.status, 200, "PATCH %r: %r" % (fields, r))
        return r.json

    def test_config_fields(self):
        q = self.new_queue(HOLD)
        cfg = self.config(q)
        self.assertEqual((cfg["closed"], cfg["stock"], cfg["notice"]), (False, None, None), cfg)
        st = self.stats(q)
        self.assertEqual((st["stockLeft"], st["soldOutAt"]), (None, None), st)
        for f, oks, bads in (
                ("closed", (True, False), (1, 0, "true", None, [])),
                ("stock", (0, 1, 2 ** 53, None), (-1, 2 ** 53 + 1, 1.5, "10", True, [])),
                ("notice", ("x", "\U0001F39F" * 500, "a" * 500, None),
                 # 1.3: empty or only white space (ASCII's, no-break, ideographic)
                 ("a" * 501, "\U0001F39F" * 501, 5, True, ["x"], "", "   ", "\t\n",
                  "\u00a0\u3000"))):
            for ok in oks:
                r = self.c.patch_queue(q, {f: ok})
                self.assertEqual(r.status, 200, "%s=%r: %r" % (f, ok, r))
                self.assertEqual(self.config(q)[f], ok, f)
            for bad in bads:
                r = self.c.patch_queue(q, {f: bad})
                self.assertError(r, 400, "INVALID_CONFIG", "%s=%r" % (f, bad))
                self.assertEqual(r.json.get("field"), f, repr(r))
                bad_put = dict(HOLD, **{f: bad})
                r = self.c.put_queue(q, bad_put)
                self.assertError(r, 400, "INVALID_CONFIG", "PUT %s=%r" % (f, bad))
        # a PUT without them resets them (create or replace)
        self.patch_ok(q, {"closed": True, "stock": 5, "notice": "hi"})
        self.assertEqual(self.c.put_queue(q, HOLD).status, 200)
        cfg = self.config(q)
        self.assertEqual((cfg["closed"], cfg["stock"], cfg["notice"]), (False, None, None), cfg)

    def test_closed(self):
        """closed: joins and polls answer closed; places kept; a live pass
        still admitted and consumable; a stranger's poll 404; enabled=false
        wins; closed=false resumes in order."""
        q = self.new_queue(FAST)
        holder = uid("pass-")
        token = self.admit(q, holder)
        self.patch_ok(q, {"paused": True})
        line = [uid("line-") for _ in range(3)]
        for u in line:
            self.join_ok(q, u)
        self.patch_ok(q, {"closed": True})
        for u in line:
            self.assertClosed(self.c.join(q, u), "closed", what="join " + u)
            self.assertClosed(self.c.me(q, u), "closed", what="poll " + u)
        stranger = uid("new-")
        self.assertClosed(self.c.join(q, stranger), "closed", what="stranger's join")
        self.assertError(self.c.me(q, stranger), 404, "NOT_IN_QUEUE", "stranger's poll")
        st = self.stats(q)
        self.assertEqual((st["waiting"], st["active"]), (3, 1), st)  # the stranger not added
        # the live pass: admitted with its token on join and poll, and it works
        for r in (self.c.join(q, holder), self.c.me(q, holder)):
            b = self.assertAdmitted(r)
            self.assertEqual(b["token"], token)
        self.assertEqual(self.c.verify(q, token).status, 204)
        r = self.c.consume(q, token, holder)
        self.assertEqual((r.status, r.json), (200, {"valid": True, "userId": holder}), repr(r))
        # the queue page says so too
        r = self.c.get("/q/%s" % q, {"X-User-Id": line[0]})
        self.assertEqual(r.status, 200, repr(r))
        self.assertIn('data-state="closed"', r.body)
        # enabled=false still wins
        self.patch_ok(q, {"enabled": False})
        self.assertEqual(self.c.join(q, line[0]).json, {"status": "passthrough"})
        self.patch_ok(q, {"enabled": True})
        # unpaused while closed: nobody admitted
        self.patch_ok(q, {"paused": False})
        time.sleep(0.3)
        self.assertEqual(self.stats(q)["admittedTotal"], 1)
        for u in line:
            self.assertClosed(self.c.me(q, u), "closed", what="still closed " + u)
        # reopened: admitted in order
        self.patch_ok(q, {"closed": False})
        for u in line:
            self.wait_admitted(q, u)
        self.assertEqual(self.stats(q)["admittedTotal"], 4)

    def test_stock_sold_out_and_restock(self):
        """Admission takes the stock; while passes are live people keep
        waiting (stockLeft 0); leave gives one back, consume keeps it; the
        last consume sells out (soldOutAt); a restock resumes in order."""
        q = self.new_queue(dict(HOLD, tickMs=50, stock=2))
        users = [uid("buyer-%d-" % i) for i in range(5)]
        for u in users:
            b = self.join_ok(q, u)
            self.assertEqual(b.get("stockLeft"), 2, b)
        self.assertEqual(self.config(q)["stock"], 2)
        self.patch_ok(q, {"paused": False})
        t0 = self.wait_admitted(q, users[0])["token"]
        t1 = self.wait_admitted(q, users[1])["token"]
        time.sleep(0.3)  # several ticks: nobody beyond the stock
        st = self.stats(q)
        self.assertEqual((st["admittedTotal"], st["stockLeft"], st["soldOutAt"]), (2, 0, None), st)
        self.assertEqual(self.config(q)["stock"], 0)
        b = self.assertWaiting(self.c.me(q, users[2]), 1)
        self.assertEqual(b["stockLeft"], 0, b)  # passes live: still waiting
        # users[1] gives the pass back: one returns, users[2] gets it
        self.assertEqual(self.c.leave(q, users[1]).status, 204)
        self.wait_admitted(q, users[2])
        t2 = None
        for u in users[2:3]:
            t2 = self.c.me(q, u).json["token"]
        time.sleep(0.3)
        st = self.stats(q)
        self.assertEqual((st["admittedTotal"], st["stockLeft"]), (3, 0), st)
        # consumed passes keep their unit; the last one sells out
        self.assertEqual(self.c.consume(q, t0, users[0]).status, 200)
        self.assertWaiting(self.c.me(q, users[3]), 1)
        self.assertEqual(self.c.consume(q, t2, users[2]).status, 200)
        self.assertEqual(self.c.consume(q, t1, users[1]).status, 403)  # given back
        st = self.stats(q)
        self.assertEqual((st["stockLeft"], st["active"]), (0, 0), st)
        self.assertInt(st["soldOutAt"])
        self.assertLessEqual(abs(st["soldOutAt"] - time.time() * 1000), 10000, st)
        for u in users[3:]:
            self.assertClosed(self.c.me(q, u), "soldOut", what="sold out " + u)
            self.assertClosed(self.c.join(q, u), "soldOut", what="sold out join " + u)
        self.assertClosed(self.c.join(q, uid("late-")), "soldOut", what="newcomer")
        self.assertError(self.c.me(q, uid("late-")), 404, "NOT_IN_QUEUE")
        self.assertEqual(self.stats(q)["waiting"], 2)
        # restock one: soldOutAt back to null, users[3] (first in line) admitted
        self.assertEqual(self.patch_ok(q, {"stock": 1})["stock"], 1)
        st = self.stats(q)
        self.assertIsNone(st["soldOutAt"], st)
        self.wait_admitted(q, users[3])
        time.sleep(0.3)
        self.assertWaiting(self.c.me(q, users[4]), 1)
        st = self.stats(q)
        self.assertEqual((st["admittedTotal"], st["stockLeft"]), (4, 0), st)
        # a PATCH of something else keeps what is left
        self.patch_ok(q, {"admitPerSecond": 500})
        self.assertEqual(self.config(q)["stock"], 0)
        # stock null: no limit any more
        self.patch_ok(q, {"stock": None})
        self.wait_admitted(q, users[4])
        st = self.stats(q)
        self.assertEqual((st["stockLeft"], st["soldOutAt"]), (None, None), st)
        self.assertNotIn("stockLeft", self.join_ok(q, uid("nolimit-")))

    def test_expired_pass_returns_its_unit(self):
        """A pass that expires unconsumed gives its unit back: the next in
        line is admitted (exactly one more), and the queue never counts as
        sold out while it was live."""
        q = self.new_queue(dict(HOLD, tickMs=50, stock=1, tokenTtlSeconds=1))
        a, b = uid("a-"), uid("b-")
        self.join_ok(q, a)
        self.join_ok(q, b)
        self.patch_ok(q, {"paused": False})
        self.wait_admitted(q, a)
        self.assertWaiting(self.c.me(q, b), 1)
        self.assertIsNone(self.stats(q)["soldOutAt"])
        self.wait_admitted(q, b, timeout=8)
        st = self.stats(q)
        self.assertEqual((st["admittedTotal"], st["expiredTotal"], st["stockLeft"]), (2, 1, 0), st)

    def test_notice_on_every_answer(self):
        notice = '<b>"Size 42"</b> sold out \u2013 \U0001F39F back at 10:00\n\\'
        opens = int(time.time() * 1000) + 3600 * 1000
        qp = self.new_queue(dict(HOLD, opensAt=opens, notice=notice), prefix="pre")
        r = self.c.join(qp, uid())
        self.assertEqual((r.json["status"], r.json["notice"]), ("prequeue", notice), repr(r))
        q = self.new_queue(dict(FAST, notice=notice))
        u = uid()
        self.admit(q, u)
        r = self.c.me(q, u)
        self.assertEqual((r.json["status"], r.json["notice"]), ("admitted", notice), repr(r))
        self.patch_ok(q, {"paused": True})
        r = self.c.join(q, uid())
        self.assertEqual((r.json["status"], r.json["notice"]), ("waiting", notice), repr(r))
        self.patch_ok(q, {"closed": True})
        self.assertClosed(self.c.join(q, uid()), "closed", notice=notice)
        self.patch_ok(q, {"notice": None, "closed": False})
        self.assertNotIn("notice", self.c.join(q, uid()).json)

    def page_notice(self, body):
        """The queue page's notice paragraph as (its attributes, its text)."""
        m = re.search(r'<p id="notice"([^>]*)>([^<]*)</p>', body)
        self.assertIsNotNone(m, body[:300])
        return m.group(1), html.unescape(m.group(2))

    def test_notice_by_language(self):
        ko, en, pt = "\ud488\uc808 \u2013 10\uc2dc \uc7ac\uc785\uace0", "Sold out <b>&</b>", "Esgotado"
        notice = {"ko": ko, "en": en, "pt-BR": pt}
        q = self.new_queue(dict(HOLD, notice=notice))
        cfg = self.config(q)
        self.assertEqual(cfg["notice"], notice)  # GET shows the object
        self.assertEqual(list(cfg["notice"]), ["ko", "en", "pt-BR"])  # as given
        # answers carry one string: the visitor's language, else en
        u = uid()
        for al, want in (("ko", ko), ("ko-KR,ko;q=0.9,en;q=0.8", ko), ("fr, en;q=0.5", en),
                         ("fr", en), (None, en), ("pt-PT", pt),
                         # the page speaks German: that is the visitor's language
                         ("de;q=0.9, ko;q=0.8", en)):
            with self.subTest(accept_language=al):
                h = {"Accept-Language": al} if al else None
                r = self.c.join(q, u, h)
                self.assertEqual((r.status, r.json["status"], r.json["notice"]),
                                 (200, "waiting", want), repr(r))
                r = self.c.me(q, u, h)
                self.assertEqual(r.json["notice"], want, repr(r))
        # the page shows its language's text (Accept-Language or ?lang=)
        user = {"X-User-Id": u}
        r = self.c.get("/q/" + q, dict(user, **{"Accept-Language": "ko"}))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.page_notice(r.body)[1], ko)
        r = self.c.get("/q/%s?lang=pt" % q, dict(user, **{"Accept-Language": "ko"}))
        self.assertEqual(self.page_notice(r.body)[1], pt)
        r = self.c.get("/q/" + q, dict(user, **{"Accept-Language": "ja"}))
        self.assertEqual(self.page_notice(r.body)[1], en)
        r = self.c.get("/q/%s?preview=closed&lang=ko" % q, ADMIN)
        self.assertEqual(self.page_notice(r.body)[1], ko)
        # without en: the first key
        ja = "\u58f2\u308a\u5207\u308c"
        self.patch_ok(q, {"notice": {"ja": ja, "ko": ko}})
        self.assertEqual(self.config(q)["notice"], {"ja": ja, "ko": ko})
        self.assertEqual(self.c.join(q, u, {"Accept-Language": "fr"}).json["notice"], ja)
        self.assertEqual(self.c.join(q, u).json["notice"], ja)
        self.assertEqual(self.c.join(q, u, {"Accept-Language": "ko"}).json["notice"], ko)
        # the closed answer too
        self.patch_ok(q, {"closed": True})
        self.assertClosed(self.c.join(q, uid(), {"Accept-Language": "ko"}), "closed", notice=ko)
        self.assertClosed(self.c.join(q, uid(), {"Accept-Language": "en"}), "closed", notice=ja)
        # an Arabic page keeps a Latin notice in its own direction
        self.patch_ok(q, {"closed": False, "page": {"lang": "ar"},
                          "notice": {"en": "Sale ends at 18:00 (UTC)"}})
        r = self.c.get("/q/" + q, {"X-User-Id": uid()})
        self.assertRegex(r.body, r'<html[^>]*\slang="ar"[^>]*\sdir="rtl"|<html[^>]*\sdir="rtl"[^>]*\slang="ar"')
        attrs, text = self.page_notice(r.body)
        self.assertEqual(text, "Sale ends at 18:00 (UTC)")
        self.assertIn('dir="auto"', attrs)
        self.assertEqual(self.c.join(q, uid(), {"Accept-Language": "ar"}).json["notice"],
                         "Sale ends at 18:00 (UTC)")
        # the string form still reads back as given
        self.patch_ok(q, {"notice": "One for all"})
        self.assertEqual(self.config(q)["notice"], "One for all")
        self.assertEqual(self.c.join(q, u, {"Accept-Language": "ko"}).json["notice"], "One for all")
        # refused, naming the field, changing nothing
        for bad, field in (({}, "notice"), ({"ko": ""}, "notice.ko"), ({"ko": " \u3000"}, "notice.ko"),
                           ({"en": "x", "ko": "\uac00" * 501}, "notice.ko"), ({"ko": 5}, "notice.ko"),
                           ({"ko": None}, "notice.ko"), ({"ko": ["x"]}, "notice.ko"),
                           ({"english!": "x"}, "notice"), ({"en": "x", "EN": "y"}, "notice.EN")):
            with self.subTest(notice=repr(bad)[:40]):
                r = self.c.patch_queue(q, {"notice": bad})
                self.assertError(r, 400, "INVALID_CONFIG")
                self.assertEqual(r.json.get("field"), field, repr(r))
        self.assertEqual(self.config(q)["notice"], "One for all")
        ok = {"en": "x", "ko": "\uac00" * 500}
        self.patch_ok(q, {"notice": ok})
        self.assertEqual(self.config(q)["notice"], ok)

    def test_metric_stock_left(self):
        w = self.srv
        q = self.new_queue(dict(HOLD, stock=7))
        self.join_ok(q, uid())
        key = ("waitroom_queue_stock_left", 'queue="%s"' % q)
        self.poll_until(lambda: metrics(w).get(key), lambda v: v == 7, timeout=5,
                        what="the stock gauge")
        self.patch_ok(q, {"stock": None})
        self.poll_until(lambda: key in metrics(w), lambda v: not v, timeout=5,
                        what="the gauge gone with the stock")


class SaleEndCrash(WRTest):

    def test_sigkill_during_admission_never_admits_beyond_the_stock(self):
        """Redis: 150 people, stock 40, admission at 400/s; SIGKILL of the
        only instance several times mid-admission; after restarts exactly 40
        are admitted (every one with a token), the rest still in line."""
        instance = self.private_redis_instances()
        w = instance()
        q = self.new_queue(dict(HOLD, stock=40, tickMs=20), client=w.client)
        users = ["stock-%03d" % i for i in range(150)]
        for u in users:
            self.join_ok(q, u, client=w.client)
        self.assertEqual(w.client.patch_queue(q, {"paused": False,
                                                  "admitPerSecond": 400}).status, 200)
        for delay in (0.02, 0.03, 0.05):
            time.sleep(delay)
            w.kill()  # SIGKILL, mid-admission
            w = instance()
        self.poll_until(lambda: self.stats(q, w.client)["stockLeft"], lambda v: v == 0,
                        timeout=10, what="the stock used up")
        time.sleep(0.3)
        st = self.stats(q, client=w.client)
        self.assertEqual((st["admittedTotal"], st["active"], st["waiting"]), (40, 40, 110), st)
        admitted = [u for u in users
                    if w.client.me(q, u).json.get("status") == "admitted"]
        self.assertEqual(admitted, users[:40])
