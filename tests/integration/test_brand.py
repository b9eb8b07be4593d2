"""The queue page carries the shop (API 1.2, issue 26) over HTTP: the
queue config `page` (each member's rule, 400 naming page.<member>, GET
shows what was set, a PATCH replaces it), the brand in the page escaped,
the CSP's img-src with the logo's origin and nothing else, the language
from Accept-Language (zh-CN/zh-TW, the queue's page.lang as fallback),
GET /q/{queue}?preview=STATE (key, admin listener, states, unknown queue),
and --web-dir (a template used, missing files embedded, a broken file
stopping the start)."""
import html
import os
import re
import shutil
import subprocess
import tempfile

from harness import ADMIN, ENV, HOLD, WRTest, admin_listener_client, uid
from helpers import private_server

STATES = ["waiting", "held", "presale", "prequeue", "challenge", "admitted", "closed",
          "soldout", "reconnecting", "full", "error", "code"]
USER = {"X-User-Id": "brand-user"}


def attr(body, name):
    m = re.search(r'\s%s="([^"]*)"' % re.escape(name), body)
    return html.unescape(m.group(1)) if m else None


class PageConfig(WRTest):

    def test_page_field_rules(self):
        q = self.new_queue(HOLD)
        self.assertIsNone(self.config(q)["page"])
        full = {"title": "Spring drop", "brand": "Tea & Co", "logoUrl": "https://cdn.example/l.svg",
                "accentColor": "#FFD400", "lang": "zh-Hant"}
        r = self.c.patch_queue(q, {"page": full})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.config(q)["page"], full)
        # 100 characters (code points) pass, 101 do not
        self.assertEqual(self.c.patch_queue(q, {"page": {"title": "가" * 100}}).status, 200)
        self.assertEqual(self.config(q)["page"], {"title": "가" * 100})  # replaced whole
        bad = [({"title": "가" * 101}, "page.title"), ({"brand": "b" * 101}, "page.brand"),
               ({"title": 5}, "page.title"), ({"logoUrl": "http://cdn.example/l.png"}, "page.logoUrl"),
               ({"logoUrl": "//cdn.example/l.png"}, "page.logoUrl"),
               ({"logoUrl": "https://cdn.example/" + "a" * 1981}, "page.logoUrl"),
               ({"accentColor": "red"}, "page.accentColor"), ({"accentColor": "#fff"}, "page.accentColor"),
               ({"lang": "zh"}, "page.lang"), ({"lang": "EN"}, "page.lang"),
               ({"colour": "#000000"}, "page.colour"), ("x", "page"), ([], "page")]
        for page, field in bad:
            with self.subTest(page=str(page)[:40]):
                r = self.c.patch_queue(q, {"page": page})
                self.assertError(r, 400, "INVALID_CONFIG")
                self.assertEqual(r.json["field"], field)
        self.assertEqual(self.config(q)["page"], {"title": "가" * 100})  # nothing changed
        ok = "https://cdn.example/" + "a" * 1980  # 2,000 characters
        self.assertEqual(self.c.patch_queue(q, {"page": {"logoUrl": ok}}).status, 200)
        self.assertEqual(self.c.patch_queue(q, {"page": None}).status, 200)
        self.assertIsNone(self.config(q)["page"])

    def test_brand_in_the_page_and_the_csp(self):
        q = self.new_queue(dict(HOLD, page={
            "title": "</title><script>alert(1)</script>", "brand": "Tea & \"Co\" <b>",
            "logoUrl": "https://cdn.example:8443/img/logo.svg?v=2", "accentColor": "#ffd400"}))
        r = self.c.get("/q/" + q, dict(USER, **{"Accept-Language": "en"}))
        self.assertEqual(r.status, 200, r)
        csp = r.headers["content-security-policy"]
        self.assertIn("img-src 'self' data: https://cdn.example:8443;", csp)
        self.assertIn("script-src 'self';", csp)
        self.assertIn("style-src 'self';", csp)
        self.assertNotIn("<script>alert", r.body)
        self.assertNotIn("<b>", r.body)
        self.assertIn("<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt; - Tea &amp; "
                      "&quot;Co&quot; &lt;b&gt;</title>", r.body)
        self.assertEqual(attr(r.body, "data-accent"), "#ffd400")
        self.assertEqual(attr(r.body, "data-accent-ink"), "#000000")
        self.assertIn('src="https://cdn.example:8443/img/logo.svg?v=2"', r.body)
        # a path logo (same origin) and no logo: the plain CSP
        self.c.patch_queue(q, {"page": {"logoUrl": "/static/logo.svg"}})
        r = self.c.get("/q/" + q, USER)
        self.assertIn("img-src 'self' data:;", r.headers["content-security-policy"])

    def test_language_from_accept_language_and_page_lang(self):
        q = self.new_queue(dict(HOLD, page={"lang": "ko"}))
        for al, want in [("zh-CN,zh;q=0.9", "zh-Hans"), ("zh-TW", "zh-Hant"), ("zh-HK", "zh-Hant"),
                         ("ar-EG", "ar"), ("th", "th"), ("nl-NL", "ko"), (None, "ko"),
                         ("en-US,en;q=0.9", "en")]:
            with self.subTest(al=al):
                h = dict(USER)
                if al:
                    h["Accept-Language"] = al
                r = self.c.get("/q/" + q, h)
                self.assertEqual(attr(r.body, "lang"), want, r.body[:200])
                self.assertEqual(attr(r.body, "dir"), "rtl" if want == "ar" else "ltr")

    def test_languages_as_browsers_name_them(self):
        """K40: legacy and region forms (Android's in-ID) pick the page's
        language; ?lang= takes them too; an unknown ?lang= leaves the pick."""
        q = self.new_queue(HOLD)
        for al, want in [("in-ID", "id"), ("in-ID,en-US;q=0.9", "id"), ("pt-PT", "pt"),
                         ("es-419", "es"), ("zh-Hant-HK", "zh-Hant"), ("iw-IL,fr;q=0.5", "fr")]:
            with self.subTest(al=al):
                r = self.c.get("/q/" + q, dict(USER, **{"Accept-Language": al}))
                self.assertEqual(attr(r.body, "lang"), want, r.body[:200])
        for query, want in [("lang=in", "id"), ("lang=zh-TW", "zh-Hant"), ("lang=ko", "ko"),
                            ("lang=xx", "de")]:
            with self.subTest(query=query):
                r = self.c.get("/q/%s?%s" % (q, query), dict(USER, **{"Accept-Language": "de"}))
                self.assertEqual(attr(r.body, "lang"), want, r.body[:200])


class Preview(WRTest):

    def test_preview_states_and_access(self):
        q = self.new_queue(dict(HOLD, page={"brand": "Tea & Co"}))
        before = self.stats(q)
        for s in STATES:
            with self.subTest(state=s):
                r = self.c.get("/q/%s?preview=%s" % (q, s), ADMIN)
                self.assertEqual(r.status, 200, r)
                self.assertEqual(attr(r.body, "data-preview"), "1")
                self.assertIn("Tea &amp; Co", r.body)
                self.assertIsNone(r.headers.get("set-cookie"))
                self.assertIn('http-equiv="refresh" content=""', r.body)
        r = self.c.get("/q/%s?preview=waiting" % q, ADMIN)
        self.assertEqual(attr(r.body, "data-position"), "1234")
        self.assertEqual(attr(r.body, "data-state"), "waiting")
        # 1.3: a priority group's line (a queue without groups: a sample
        # name) and a refused presale code, the form there to try again
        r = self.c.get("/q/%s?preview=presale" % q, ADMIN)
        self.assertEqual(attr(r.body, "data-group"), "fanclub")
        self.assertEqual(attr(r.body, "data-position"), "12")
        self.assertIn("You are in the \u2068fanclub\u2069 presale line.", r.body)
        r = self.c.get("/q/%s?preview=code&lang=ko" % q, ADMIN)
        self.assertEqual(attr(r.body, "data-state"), "code")
        self.assertEqual(attr(r.body, "data-reason"), "unknown")
        self.assertIn('id="code-form"', r.body)
        self.assertIn("이 대기열에 쓸 수 없는 사전 판매 코드입니다.", r.body)
        self.assertEqual(attr(r.body, "data-groups"), "0")
        r = self.c.get("/q/%s?preview=reconnecting&lang=ar" % q, ADMIN)
        self.assertEqual(attr(r.body, "data-state"), "degraded")
        self.assertEqual(attr(r.body, "lang"), "ar")
        self.assertEqual(self.stats(q)["waiting"], before["waiting"], "a preview joins nobody")
        r = self.c.get("/q/%s" % q, USER)
        self.assertEqual(r.headers.get("referrer-policy"), "no-referrer")  # ?code=, ?invite=
        self.assertEqual(attr(r.body, "data-groups"), "0")  # no code form
        if ENV.store == "memory":  # groups: the embedded store's in this version
            # a queue with groups: its first group in the sample, and its
            # page (a person in the standard line) offers the code form
            g = self.new_queue(dict(HOLD, groups=[{"name": "members"}, {"name": "vip"}]))
            r = self.c.get("/q/%s?preview=presale" % g, ADMIN)
            self.assertEqual(attr(r.body, "data-group"), "members")
            self.assertEqual(attr(r.body, "data-groups"), "1")
            r = self.c.get("/q/%s" % g, USER)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(attr(r.body, "data-state"), "waiting")
            self.assertEqual(attr(r.body, "data-groups"), "1")
            self.assertEqual(attr(r.body, "data-group"), "")
        # without the key, a wrong state, an unknown queue
        r = self.c.get("/q/%s?preview=waiting" % q, USER)
        self.assertEqual(r.status, 401)
        self.assertEqual(attr(r.body, "data-error"), "UNAUTHORIZED")
        r = self.c.get("/q/%s?preview=waiting" % q, {"Authorization": "Bearer wrong"})
        self.assertEqual(r.status, 401)
        r = self.c.get("/q/%s?preview=nope" % q, ADMIN)
        self.assertEqual(r.status, 400)
        self.assertEqual(attr(r.body, "data-error"), "BAD_REQUEST")
        # a language the page does not speak: said, not English in silence
        r = self.c.get("/q/%s?preview=waiting&lang=xx" % q, ADMIN)
        self.assertEqual(r.status, 400)
        self.assertEqual(attr(r.body, "data-error"), "BAD_REQUEST")
        r = self.c.get("/q/%s?preview=waiting&lang=in" % q, ADMIN)  # a legacy form: Indonesian
        self.assertEqual(r.status, 200)
        self.assertEqual(attr(r.body, "lang"), "id")
        r = self.c.get("/q/no-such-%s?preview=waiting" % uid(), ADMIN)
        self.assertEqual(r.status, 404)
        self.assertEqual(attr(r.body, "data-error"), "QUEUE_NOT_FOUND")
        # preview= inside another parameter's value is not a preview: a join
        for query in ("ref=/p?preview=waiting", "xpreview=waiting"):
            r = self.c.get("/q/%s?%s" % (q, query), USER)
            self.assertEqual(r.status, 200, r)
            self.assertNotEqual(attr(r.body, "data-preview"), "1", query)

    def test_preview_only_on_the_admin_listener_when_there_is_one(self):
        srv = private_server(self, identity="header:X-User-Id",
                             extra=("--admin-listen", "127.0.0.1:0"))
        admin = admin_listener_client(srv)
        self.assertIsNotNone(admin, srv.stdout_lines)
        q = "prev-" + uid()
        self.assertEqual(admin.put_queue(q, HOLD).status, 200)
        self.assertEqual(srv.client.get("/q/%s?preview=waiting" % q, ADMIN).status, 404)
        r = admin.get("/q/%s?preview=prequeue" % q)  # no key needed there
        self.assertEqual(r.status, 200, r)
        self.assertEqual(attr(r.body, "data-state"), "prequeue")
        admin.delete_queue(q)
        self.assertEqual(srv.terminate(), 0)


class WebDir(WRTest):

    def test_a_template_of_the_shop(self):
        d = tempfile.mkdtemp(dir=ENV.tmpdir)
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "queue.html"), "w") as f:
            f.write('<!doctype html><main id="app" data-state="{{state}}">shop {{brand}}: '
                    '{{t:heading}} #{{position}}</main>\n')
        with open(os.path.join(d, "i18n.json"), "w") as f:
            f.write('{"en": {"heading": "In line for tea"}}')
        with open(os.path.join(d, "shop.css"), "w") as f:
            f.write("h1 { color: green }")
        srv = private_server(self, identity="header:X-User-Id", extra=("--web-dir", d))
        q = self.new_queue(dict(HOLD, page={"brand": "Tea <Co>"}), client=srv.client)
        r = srv.client.get("/q/" + q, dict(USER, **{"Accept-Language": "en"}))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.body, '<!doctype html><main id="app" data-state="waiting">shop '
                         'Tea &lt;Co&gt;: In line for tea #1</main>\n')
        r = srv.client.get("/q/" + q, dict(USER, **{"Accept-Language": "ko"}))
        self.assertIn("대기열에 계십니다", r.body)  # Korean was not changed
        self.assertEqual(srv.client.get("/static/shop.css").body, "h1 { color: green }")
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "src", "http", "web",
                               "style.css")) as f:
            self.assertEqual(srv.client.get("/static/style.css").body, f.read())  # embedded
        self.assertEqual(srv.terminate(), 0)

    def test_a_language_of_the_shop(self):
        """K40: a language the web dir's i18n.json adds is offered (data-langs)
        and chosen like a built-in one: Accept-Language (its legacy form
        too), ?lang=, and written right to left when it is (Hebrew)."""
        d = tempfile.mkdtemp(dir=ENV.tmpdir)
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "i18n.json"), "w", encoding="utf-8") as f:
            f.write('{"he": {"heading": "\u05d0\u05ea\u05dd \u05d1\u05ea\u05d5\u05e8"}, '
                    '"nl": {"heading": "U staat in de rij"}}')
        srv = private_server(self, identity="header:X-User-Id", extra=("--web-dir", d))
        q = self.new_queue(HOLD, client=srv.client)
        for h, query, lang, direction in [({"Accept-Language": "iw-IL,en;q=0.5"}, "", "he", "rtl"),
                                          ({"Accept-Language": "nl-BE"}, "", "nl", "ltr"),
                                          ({"Accept-Language": "en"}, "?lang=he", "he", "rtl"),
                                          ({"Accept-Language": "he"}, "?lang=nl", "nl", "ltr")]:
            with self.subTest(h=h, query=query):
                r = srv.client.get("/q/" + q + query, dict(USER, **h))
                self.assertEqual(r.status, 200, r)
                self.assertEqual(attr(r.body, "lang"), lang)
                self.assertEqual(attr(r.body, "dir"), direction)
                self.assertTrue(attr(r.body, "data-langs").endswith(" he nl"),
                                attr(r.body, "data-langs"))
        r = srv.client.get("/q/" + q, dict(USER, **{"Accept-Language": "nl"}))
        self.assertIn("U staat in de rij", r.body)
        self.assertIn('"nl"', srv.client.get("/static/i18n.json").body)
        self.assertEqual(srv.terminate(), 0)

    def test_typos_and_broken_templates_stop_the_start(self):
        """An i18n.json key the page does not know (a typo), a bad language
        code, a template without its required parts: exit 2, named."""
        cases = [
            ("i18n.json", '{"en": {"statsu_waiting": "x"}}',
             b'"en"."statsu_waiting" is not a string of the page'),
            ("i18n.json", '{"Dutch!": {"heading": "x"}}', b'"Dutch!" is not a language code'),
            ("queue.html", '<main id="app">{{queue}}</main>', b"queue.html lacks {{state}}"),
            ("queue.html", '<main id="app" data-state="{{state}}"></main>'
                           '<script src="/static/queue.js"></script>',
             b"queue.html loads /static/queue.js but lacks {{queue}}"),
        ]
        for name, text, message in cases:
            with self.subTest(name=name, text=text):
                d = tempfile.mkdtemp(dir=ENV.tmpdir)
                self.addCleanup(shutil.rmtree, d, True)
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
                p = subprocess.run([ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", "memory",
                                    "--web-dir", d], capture_output=True, timeout=30)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(message, p.stderr)

    def test_a_broken_file_stops_the_start(self):
        d = tempfile.mkdtemp(dir=ENV.tmpdir)
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "i18n.json"), "w") as f:
            f.write('{"en": {"title": 1}}')
        p = subprocess.run([ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", "memory",
                            "--web-dir", d], capture_output=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(b'i18n.json: "en"."title" must be a string', p.stderr)
        p = subprocess.run([ENV.waitroomd, "--listen", "127.0.0.1:0", "--store", "memory",
                            "--web-dir", os.path.join(d, "missing")], capture_output=True,
                           timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(b"--web-dir: cannot open", p.stderr)
