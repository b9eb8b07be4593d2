/*
 * test_page.c - the page module: HTML escaping of rendered values (a
 * "<script>" in targetUrl comes out as entities everywhere), the values of
 * the first render, the no-JavaScript refresh, static asset lookup (types,
 * unknown names, traversal), and the sale's edges (1.2): held, the odds
 * with grouped numbers, closed and sold out with their slow re-check, the
 * operator's notice as text. The page's language choice is test_lang.c's.
 */
#define _GNU_SOURCE /* clock_gettime */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "http/page.h"
#include "unit_main.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* count, outside the data-i18n attribute (every string of two
 * languages): what a person reads, or what the template says itself */
static size_t count_text(const char *html, const char *needle)
{
    const char *at = strstr(html, "data-i18n=\"");
    const char *end = at ? strchr(at + 11, '"') : NULL; /* its quotes are &quot; */
    if (!end)
        return count(html, needle);
    size_t n = 0;
    for (const char *p = strstr(html, needle); p; p = strstr(p + 1, needle))
        if (p < at || p > end)
            n++;
    return n;
}

static wr_page_view_t waiting_view(void)
{
    wr_page_view_t v;
    memset(&v, 0, sizeof(v));
    v.queue = "sale-1";
    v.lang = "en";
    v.state = "waiting";
    v.position = 128;
    v.waiting = 5012;
    v.eta_seconds = 45;
    v.retry_after_ms = 3000;
    v.target_url = "https://shop.example/checkout";
    return v;
}

/* A view of queue "q" in English in state, with nothing else set. */
static wr_page_view_t state_view(const char *state)
{
    wr_page_view_t v;
    memset(&v, 0, sizeof(v));
    v.queue = "q";
    v.lang = "en";
    v.state = state;
    v.eta_seconds = -1;
    v.target_url = "";
    return v;
}

/* v rendered as the queue page (caller frees); asserts that it renders
 * and that the length given is the page's. */
static char *render(const wr_page_view_t *v)
{
    size_t len = 0;
    char *html = wr_page_render_queue(v, &len);
    assert_non_null(html);
    assert_int_equal(len, strlen(html));
    return html;
}

/* v renders (render) with every string listed in it (expect_page), or
 * with none of them (expect_page_lacks); the first string that is not as
 * wanted fails the test at the caller's line.
 *   expect_page(&v, "data-state=\"full\"", "data-retry-ms=\"5000\"");
 *   expect_page_lacks(&v, "<script>alert"); */
#define expect_page(v, ...)                                                                        \
    expect_page_at((v), true, (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)
#define expect_page_lacks(v, ...)                                                                  \
    expect_page_at((v), false, (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)
static void expect_page_at(const wr_page_view_t *v, bool present, const char *const *needles,
                           const char *file, int line)
{
    char *html = render(v);
    for (; *needles; needles++) {
        if (!strstr(html, *needles) == present) {
            print_error("%s \"%s\" in the page\n", present ? "no" : "a", *needles);
            free(html);
            _fail(file, line);
        }
    }
    free(html);
}

static void test_render_waiting_values(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    char *html = render(&v);
    assert_non_null(strstr(html, "<html lang=\"en\" dir=\"ltr\">"));
    assert_non_null(strstr(html, "data-queue=\"sale-1\""));
    assert_non_null(strstr(html, "data-state=\"waiting\""));
    assert_non_null(strstr(html, "data-position=\"128\""));
    assert_non_null(strstr(html, "data-waiting=\"5012\""));
    assert_non_null(strstr(html, "data-eta=\"45\""));
    assert_non_null(strstr(html, "data-retry-ms=\"3000\""));
    assert_non_null(strstr(html, "<strong id=\"position\" class=\"num\">128</strong>"));
    assert_non_null(strstr(html, "<dd id=\"eta\">about 45 s</dd>"));
    /* the position is said once (the big number): not again as people
     * ahead, not in the status, which says to keep the page open */
    assert_null(strstr(html, "id=\"ahead\""));
    /* (as a number of the text: the page's data-server-now, the clock in
     * ms, may hold those digits) */
    assert_null(strstr(html, ">127"));
    assert_null(strstr(html, " 127"));
    assert_int_equal(count(html, ">128<"), 1);
    assert_non_null(strstr(html, "role=\"status\" aria-live=\"polite\" aria-atomic=\"true\">Keep "
                                 "this page open. It updates by itself, and you keep your "
                                 "place.</p>"));
    assert_int_equal(count_text(html, "It updates by itself"), 1);
    assert_non_null(strstr(html, "<div class=\"big\" aria-live=\"polite\" aria-atomic=\"true\">"));
    /* without JavaScript: reload after ceil(3000 ms) = 3 s */
    assert_non_null(
        strstr(html, "<noscript><meta http-equiv=\"refresh\" content=\"3\"></noscript>"));
    /* every placeholder was replaced */
    assert_null(strstr(html, "{{"));
    /* the i18n table travels in an attribute: its quotes are escaped */
    assert_non_null(strstr(html, "data-i18n=\"{\n  &quot;en&quot;: {"));
    free(html);
}

static void test_render_korean_and_eta_minutes(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.lang = "ko";
    v.eta_seconds = 61; /* ceil(61 / 60) = 2 minutes */
    v.retry_after_ms = 250;
    expect_page(&v, "<html lang=\"ko\" dir=\"ltr\">", "<dd id=\"eta\">약 2분</dd>",
                "이 페이지를 열어 두세요. 자동으로 갱신되며 순서는 유지됩니다.",
                /* 250 ms rounds up to 1 s, and the floor is 2 s */
                "http-equiv=\"refresh\" content=\"2\"");
    expect_page_lacks(&v, ">127"); /* (the clock in data-server-now may hold 127) */
    expect_page_lacks(&v, " 127");
}

static void test_render_paused_eta_unknown(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.eta_seconds = -1;
    expect_page(&v, "data-eta=\"-1\"", "<dd id=\"eta\">paused for now</dd>");
}

static void test_escaping_target_url(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.target_url = "/x?a=1&b=\"2\"'<script>alert(1)</script>";
    char *html = render(&v);
    assert_null(strstr(html, "<script>alert"));
    assert_null(strstr(html, "\"2\""));
    const char *esc = "/x?a=1&amp;b=&quot;2&quot;&#39;&lt;script&gt;alert(1)&lt;/script&gt;";
    assert_non_null(strstr(html, esc));
    /* in the data attribute and in the continue link */
    assert_int_equal(count(html, esc), 2);
    free(html);
}

static void test_escaping_state_and_queue(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.state = "<b>\"x\"</b>"; /* not a known state: rendered as unavailable */
    v.queue = "a<b&c";
    expect_page(&v, "data-queue=\"a&lt;b&amp;c\"",
                "<body class=\"page-queue\" data-state=\"unavailable\" ");
    expect_page_lacks(&v, "<b>", "a<b");
}

static void test_admitted_refresh_goes_to_target(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.state = "admitted";
    v.target_url = "/shop?a=1&b=2";
    /* a waiting-only number is not shown for an admitted user */
    expect_page(&v, "content=\"0; url=/shop?a=1&amp;b=2\"", "data-position=\"0\"");

    v.target_url = "";
    expect_page(&v, "http-equiv=\"refresh\" content=\"\"", "You&#39;re in."); /* ' escaped */
}

/* 1.1: tokenInQuery puts the pass in the no-script redirect to another
 * origin (before the fragment); a path target never gets it. */
static void test_admitted_token_in_query(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.state = "admitted";
    v.target_url = "https://shop.example/c?x=1#f";
    v.token_in_query = true;
    v.token = "aaa.bbb.ccc";
    expect_page(&v, "content=\"0; url=https://shop.example/c?x=1&amp;wr_token=aaa.bbb.ccc#f\"",
                "data-token-in-query=\"1\"");
    v.target_url = "/c";
    expect_page(&v, "content=\"0; url=/c\"");
    v.token_in_query = false;
    v.target_url = "https://shop.example/c";
    expect_page(&v, "content=\"0; url=https://shop.example/c\"", "data-token-in-query=\"0\"");
}

/* 1.1: a join refused for its invite says why. */
static void test_invite_state(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.state = "invite";
    v.reason = "expired";
    expect_page(&v, "data-state=\"invite\"", "data-reason=\"expired\"",
                "Your invitation has expired.", "http-equiv=\"refresh\" content=\"\"");
    v.reason = "missing";
    expect_page(&v, "by invitation only");
    v.reason = "signature";
    expect_page(&v, "not valid for this line");
}

/* 1.3: a refused presale code says why, with the form to try again (a
 * GET of the page with ?code=, which works without JavaScript too) and
 * the way into the standard line; nothing refreshes. */
static void test_code_state(void **state)
{
    (void)state;
    wr_page_view_t v = state_view("code");
    v.reason = "unknown";
    expect_page(&v, "data-state=\"code\"", "data-reason=\"unknown\"",
                "<h1 id=\"heading\">This code did not work</h1>",
                ">This presale code is not valid for this line. Check it and try again.</p>",
                "<form id=\"code-form\" method=\"get\" action=\"/q/q\">",
                "<input id=\"code-input\" name=\"code\"",
                "<a id=\"standard\" class=\"button secondary\" href=\"/q/q\"",
                "http-equiv=\"refresh\" content=\"\"");
    v.reason = "usedUp";
    expect_page(&v, ">This presale code has already been used as many times as it allows.</p>");
    v.reason = "revoked";
    expect_page(&v, ">This presale code has been withdrawn.</p>");
    v.reason = "expired";
    expect_page(&v, ">This presale code has expired.</p>");
    v.lang = "ja";
    expect_page(&v, ">この先行販売コードは有効期限が切れています。</p>",
                "<h1 id=\"heading\">このコードは使えませんでした</h1>");
    v.lang = "en";
    v.reason = NULL; /* no reason: the plain "not valid" */
    expect_page(&v, ">This presale code is not valid for this line.");
}

/* 1.3: a person in a priority group is told their line and that the
 * position counts it only; a group not admitted from yet has no ETA
 * ("not known yet", not "paused"); the standard line shows neither. */
static void test_group(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.group = "fanclub";
    v.has_groups = true;
    v.position = 3;
    expect_page(&v, "data-group=\"fanclub\"", "data-groups=\"1\"",
                /* the name isolated (FSI, PDI): its own direction in any page */
                "<p id=\"group-line\" class=\"group-line\">You are in the \xe2\x81\xa8"
                "fanclub\xe2\x81\xa9 presale line.</p>",
                "Presale lines go first; your position counts people in your line.",
                "<strong id=\"position\" class=\"num\">3</strong>");
    v.eta_seconds = -1;
    expect_page(&v, "<dd id=\"eta\">not known yet</dd>");
    v.lang = "ko";
    expect_page(&v, "fanclub\xe2\x81\xa9 사전 판매 대기열에 계십니다.",
                "<dd id=\"eta\">아직 알 수 없음</dd>");
    /* the standard line of a queue with groups: no group, the code form on */
    v = waiting_view();
    v.has_groups = true;
    v.eta_seconds = -1;
    expect_page(&v, "data-group=\"\"", "data-groups=\"1\"", "<dd id=\"eta\">paused for now</dd>",
                "<p id=\"group-line\" class=\"group-line\"></p>");
    /* a group is a waiting person's only: another state names none */
    v = state_view("closed");
    v.group = "fanclub";
    expect_page(&v, "data-group=\"\"", "data-groups=\"0\"");
}

static void test_full_and_unavailable_retry(void **state)
{
    (void)state;
    wr_page_view_t v = state_view("full");
    /* the api sends Retry-After: 5 with a full line */
    expect_page(&v, "data-retry-ms=\"5000\"", "http-equiv=\"refresh\" content=\"5\"",
                "The line is full right now. We will try again in 5 s.");

    v.state = "unavailable";
    expect_page(&v, "data-retry-ms=\"2000\"", "http-equiv=\"refresh\" content=\"2\"");

    v.state = "notfound";
    expect_page(&v, "http-equiv=\"refresh\" content=\"\"", "This waiting room does not exist.");
}

/* Degraded mode: no position, the reconnecting sentence in both languages,
 * and the no-JS page keeps asking at the poll interval. */
static void test_degraded_state(void **state)
{
    (void)state;
    wr_page_view_t v = state_view("degraded");
    v.retry_after_ms = 4800;
    expect_page(&v, "data-state=\"degraded\"", "data-retry-ms=\"4800\"",
                "http-equiv=\"refresh\" content=\"5\"",
                "The line is reconnecting; you may be let in.");
    v.lang = "ko";
    expect_page(&v, "대기열이 다시 연결되는 중입니다.");
}

/* Pre-queue: the opening in UTC and ISO 8601 for people without
 * JavaScript, the countdown (days from a day on), the pre-queue sentence
 * in both languages, a refresh at the poll interval, the epoch ms for the
 * script. */
static void test_prequeue_state(void **state)
{
    (void)state;
    wr_page_view_t v = state_view("prequeue");
    v.retry_after_ms = 4800;
    v.opens_at_ms = 4102444800000; /* 2100-01-01T00:00:00Z */
    char *html = render(&v);
    assert_non_null(strstr(html, "<body class=\"page-queue\" data-state=\"prequeue\" "));
    assert_non_null(strstr(html, "data-opens-at=\"4102444800000\""));
    assert_non_null(strstr(html, "data-server-now=\""));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"5\""));
    assert_non_null(
        strstr(html, "datetime=\"2100-01-01T00:00:00Z\">2100-01-01 00:00:00 UTC</time>"));
    assert_non_null(
        strstr(html, "You are in the pre-queue. The line opens at 2100-01-01 00:00:00 UTC."));
    assert_non_null(strstr(html, "<h1 id=\"heading\">The sale has not opened yet</h1>"));
    /* decades away: "<d> d H:MM:SS" */
    const char *cd = strstr(html, "<strong id=\"countdown\" class=\"num\">");
    assert_non_null(cd);
    assert_non_null(strstr(cd, " d "));
    free(html);

    v.lang = "ko";
    html = render(&v);
    assert_non_null(
        strstr(html, "사전 대기열에 계십니다. 대기열은 2100-01-01 00:00:00 UTC에 열립니다."));
    cd = strstr(html, "<strong id=\"countdown\" class=\"num\">");
    assert_non_null(cd);
    assert_non_null(strstr(cd, "일 "));
    free(html);

    /* 90 s ahead: "1:30" (or "1:31" rounding up a part of a second) */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    v.lang = "en";
    v.opens_at_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 90000;
    html = render(&v);
    assert_true(strstr(html, "class=\"num\">1:30</strong>") ||
                strstr(html, "class=\"num\">1:31</strong>"));
    free(html);

    /* the opening's values only in the pre-queue */
    v.state = "waiting";
    expect_page(&v, "data-opens-at=\"\"", "<time id=\"opens-at\" datetime=\"\"></time>");
}

/* 1.2: a held person (turn came while away) is told their place was kept,
 * in both languages, with position 1. */
static void test_held(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.position = 1;
    v.held = true;
    expect_page(&v, "data-held=\"1\"", "<h1 id=\"heading\">Welcome back</h1>",
                ">You stepped away, and your place was kept. You go in at the "
                "next admission.</p>",
                "<strong id=\"position\" class=\"num\">1</strong>");
    v.lang = "ko";
    expect_page(&v, "잠시 자리를 비우셨지만 순서는 그대로 지켜 두었습니다.");
    /* not held: the usual sentence, data-held 0 */
    v = waiting_view();
    expect_page(&v, "data-held=\"0\"", "<h1 id=\"heading\">You are in line</h1>");
    expect_page_lacks(&v, ">You stepped away");
}

/* 1.2: with a stock, the odds with grouped numbers; without, nothing. */
static void test_odds_and_grouping(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.position = 5200;
    v.waiting = 1234567;
    v.has_stock = true;
    v.stock_left = 300;
    char *html = render(&v);
    assert_non_null(strstr(html, "data-stock-left=\"300\""));
    assert_non_null(strstr(html, "data-position=\"5200\""));
    assert_non_null(strstr(html, "<p id=\"odds\" class=\"odds\">About 300 left.</p>"));
    assert_non_null(strstr(html, "<strong id=\"position\" class=\"num\">5,200</strong>"));
    assert_int_equal(count_text(html, "5,200"), 1); /* said once */
    assert_null(strstr(html, "5,199"));
    assert_non_null(strstr(html, "<dd id=\"waiting\">1,234,567</dd>"));
    free(html);
    v.lang = "ko";
    v.stock_left = 12000;
    expect_page(&v, "남은 수량은 약 12,000개입니다.");
    /* none left while passes are live: people keep waiting */
    v.lang = "en";
    v.stock_left = 0;
    expect_page(&v, "data-stock-left=\"0\"",
                "<p id=\"odds\" class=\"odds\">None left right now.</p>");
    v.has_stock = false;
    expect_page(&v, "data-stock-left=\"\"", "<p id=\"odds\" class=\"odds\"></p>");
}

/* 1.2: closed and sold out, in both languages; the re-check without
 * JavaScript is the server's retry, 60 s at most (and by default). */
static void test_closed_state(void **state)
{
    (void)state;
    wr_page_view_t v = state_view("closed");
    v.reason = "soldOut";
    v.target_url = "https://shop.example/checkout?x=1";
    char *html = render(&v);
    assert_non_null(strstr(html, "<body class=\"page-queue\" data-state=\"closed\" "
                                 "data-reason=\"soldOut\""));
    assert_non_null(strstr(html, "<h1 id=\"heading\">Sold out</h1>"));
    /* "Sold out" once (the heading); the status says what comes next */
    assert_non_null(strstr(html, ">If more becomes available, this page moves on by itself.</p>"));
    assert_int_equal(count_text(html, "Sold out"), 1); /* the heading */
    assert_int_equal(count(html, ">Sold out<"), 1);
    /* and a way back to the shop: the target's origin */
    assert_non_null(strstr(html, "<a id=\"shop\" class=\"button secondary\" "
                                 "href=\"https://shop.example/\" data-t=\"back_to_shop\">Back to "
                                 "the shop</a>"));
    assert_non_null(strstr(html, "data-retry-ms=\"60000\""));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"60\""));
    free(html);
    v.reason = "closed";
    v.lang = "ko";
    v.retry_after_ms = 600000; /* never slower than 60 s */
    expect_page(&v, "<h1 id=\"heading\">판매가 종료되었습니다</h1>",
                "판매가 다시 열리면 이 페이지가 자동으로 넘어갑니다.", "data-retry-ms=\"60000\"");
    v.lang = "en";
    v.target_url = "/checkout"; /* a target on this host: its root */
    v.retry_after_ms = 30000;   /* the server's, when sooner */
    html = render(&v);
    assert_non_null(strstr(html, "<h1 id=\"heading\">The sale has ended</h1>"));
    assert_int_equal(count_text(html, "The sale has ended"), 1);
    assert_non_null(strstr(html, "<a id=\"shop\" class=\"button secondary\" href=\"/\""));
    assert_non_null(strstr(html, "data-retry-ms=\"30000\""));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"30\""));
    free(html);
}

/* v renders with needle in it, and without `absent` (NULL: no check) in
 * what a person reads (count_text). */
static void renders(const wr_page_view_t *v, const char *needle, const char *absent)
{
    char *html = render(v);
    if (!strstr(html, needle))
        fail_msg("no \"%s\" in the page", needle);
    if (absent && count_text(html, absent) != 0)
        fail_msg("\"%s\" in the page", absent);
    free(html);
}

/* K46: while admission waits only on stock (stock 0, passes live) the
 * page gives no time but what it waits for; a held person there is told
 * they go in first when a pass comes back. Admitted and passthrough get
 * their own heading, not the generic "Waiting room". */
static void test_waiting_for_stock(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.has_stock = true;
    v.stock_left = 0;
    v.eta_seconds = -1;
    v.waiting_for = "stock";
    renders(&v, "data-waiting-for=\"stock\"", "about 1 s");
    renders(&v, "<dd id=\"eta\">when an unused pass comes back</dd>", "paused");
    v.held = true;
    v.position = 1;
    v.waiting = 0;
    v.lang = "ar";
    renders(&v, "data-held=\"1\"", NULL);
    renders(&v, "ستدخل أولًا عندما يعود تصريح غير مستخدم.", NULL);
    v = waiting_view();
    renders(&v, "data-waiting-for=\"\"", NULL);
    v = state_view("admitted");
    renders(&v, "<h1 id=\"heading\">It’s your turn</h1>", NULL);
    v = state_view("passthrough");
    v.lang = "de";
    renders(&v, "<h1 id=\"heading\">Gerade keine Schlange</h1>", NULL);
}

/* 1.2: the operator's notice is text: a hostile one comes out as entities,
 * and the box is marked shown only when there is one. */
static void test_notice_escaped(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.notice = "<img src=x onerror=alert(1)>\"</p><script>alert('x')</script>&amp;";
    char *html = render(&v);
    assert_null(strstr(html, "<img src=x")); /* (the template's own <img> is the logo) */
    assert_int_equal(count(html, "<img"), 1);
    assert_null(strstr(html, "<script>"));
    assert_non_null(strstr(html, "data-notice=\"1\""));
    assert_non_null(strstr(
        html, "<p id=\"notice\" class=\"notice\" dir=\"auto\" aria-live=\"polite\" "
              "aria-atomic=\"true\">"
              "&lt;img src=x onerror=alert(1)&gt;&quot;&lt;/p&gt;&lt;script&gt;alert(&#39;x&#39;)"
              "&lt;/script&gt;&amp;amp;</p>"));
    free(html);
    v.notice = NULL;
    expect_page(&v, "data-notice=\"0\"", "aria-atomic=\"true\"></p>");
}

static void test_dashboard(void **state)
{
    (void)state;
    size_t len = 0;
    char *html = wr_page_render_dashboard(NULL, &len);
    assert_non_null(html);
    assert_int_equal(len, strlen(html));
    assert_non_null(strstr(html, "<script src=\"/static/dashboard.js\" defer></script>"));
    assert_non_null(strstr(html, "<script src=\"/static/report.js\" defer></script>"));
    assert_non_null(strstr(html, "<script src=\"/static/codes.js\" defer></script>"));
    /* no inline script or style: the CSP allows only 'self' (the three files) */
    assert_int_equal(count(html, "<script"), 3);
    assert_null(strstr(html, "<style"));
    assert_null(strstr(html, "style=\""));
    free(html);
}

static void test_queue_page_has_no_inline_code(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    char *html = render(&v);
    /* the page's script, the CAPTCHA widget's loader (captcha.js) and Web
     * Push's (push.js, before queue.js), all files of ours, in that order */
    assert_int_equal(count(html, "<script"), 3);
    const char *cap = strstr(html, "<script src=\"/static/captcha.js\" defer></script>");
    const char *q = strstr(html, "<script src=\"/static/queue.js\" defer></script>");
    const char *pj = strstr(html, "<script src=\"/static/push.js\" defer></script>");
    assert_non_null(cap);
    assert_non_null(q);
    assert_non_null(pj);
    assert_true(pj < q);
    assert_true(cap < q);
    assert_null(strstr(html, "<style"));
    assert_null(strstr(html, " style=\""));
    assert_null(strstr(html, " onclick="));
    free(html);
}

/* Text on the accent colour is black or white, whichever reads at 4.5:1
 * (one always does); the accent as text on the page's grounds is darkened
 * or lightened until it reads too. */
static void test_accent(void **state)
{
    (void)state;
    static const char *const accents[] = {"#ffd400", "#2d5bd7", "#777777", "#000000",
                                          "#ffffff", "#00ff00", "#ff0000", "#0000ff",
                                          "#808080", "#1a1a1a", "#FFD400", NULL};
    for (size_t i = 0; accents[i]; i++) {
        wr_page_colors_t c;
        wr_page_accent(accents[i], &c);
        unsigned a = (unsigned)strtoul(c.accent + 1, NULL, 16);
        unsigned ink = (unsigned)strtoul(c.ink + 1, NULL, 16);
        unsigned light = (unsigned)strtoul(c.on_light + 1, NULL, 16);
        unsigned dark = (unsigned)strtoul(c.on_dark + 1, NULL, 16);
        if (wr_page_contrast(a, ink) < 4.5)
            fail_msg("%s: ink %s only %.2f", accents[i], c.ink, wr_page_contrast(a, ink));
        assert_true(wr_page_contrast(light, 0xffffff) >= 4.5);
        assert_true(wr_page_contrast(light, 0xf4f5f7) >= 4.5);
        assert_true(wr_page_contrast(dark, 0x2a3242) >= 4.5);
        assert_true(wr_page_contrast(dark, 0x161b24) >= 4.5);
    }
    wr_page_colors_t c;
    wr_page_accent("#ffd400", &c); /* yellow: black text on it */
    assert_string_equal(c.ink, "#000000");
    assert_string_equal(c.accent, "#ffd400");
    wr_page_accent("#2d5bd7", &c); /* blue: white */
    assert_string_equal(c.ink, "#ffffff");
    assert_string_equal(c.on_light, "#2d5bd7"); /* already readable: unchanged */
    wr_page_accent(NULL, &c);
    assert_string_equal(c.accent, "#2d5bd7");
    wr_page_accent("red", &c);
    assert_string_equal(c.accent, "#2d5bd7");
    assert_true(wr_page_contrast(0, 0xffffff) > 20.9);
}

/* The queue's brand: escaped everywhere, the accent and its inks as data,
 * the title in the tab, the logo; Arabic right to left; a preview never
 * refreshes. */
static void test_brand(void **state)
{
    (void)state;
    wr_page_config_t pg;
    memset(&pg, 0, sizeof(pg));
    pg.set = true;
    snprintf(pg.title, sizeof(pg.title), "Drop <script>alert(1)</script>");
    snprintf(pg.brand, sizeof(pg.brand), "Tea & \"Co\" <img src=x onerror=alert(1)>");
    snprintf(pg.logo_url, sizeof(pg.logo_url), "https://cdn.example/logo.svg");
    snprintf(pg.accent, sizeof(pg.accent), "#FFD400");
    wr_page_view_t v = waiting_view();
    v.page = &pg;
    char *html = render(&v);
    assert_null(strstr(html, "<script>alert"));
    assert_null(strstr(html, "<img src=x"));
    assert_non_null(
        strstr(html, "<title>Drop &lt;script&gt;alert(1)&lt;/script&gt; - Tea &amp; &quot;Co&quot; "
                     "&lt;img src=x onerror=alert(1)&gt;</title>"));
    assert_non_null(strstr(html, "src=\"https://cdn.example/logo.svg\" alt=\"\""));
    assert_non_null(strstr(html, "data-logo=\"1\""));
    assert_non_null(strstr(html, "data-accent=\"#ffd400\" data-accent-ink=\"#000000\""));
    assert_non_null(strstr(
        html, "<p class=\"event-title\" id=\"event-title\" dir=\"auto\">Drop &lt;script&gt;"));
    assert_non_null(strstr(html, "<html lang=\"en\" dir=\"ltr\">"));
    free(html);

    /* no brand: the queue's name, the default accent, no logo */
    v = waiting_view();
    expect_page(&v, "<title>Waiting room - sale-1</title>", "data-logo=\"0\"",
                "data-accent=\"#2d5bd7\" data-accent-ink=\"#ffffff\"");

    /* Arabic: right to left, its own words; Traditional Chinese */
    v = waiting_view();
    v.lang = "ar";
    expect_page(&v, "<html lang=\"ar\" dir=\"rtl\">", "غرفة الانتظار");
    v.lang = "zh-Hant";
    expect_page(&v, "<html lang=\"zh-Hant\" dir=\"ltr\">", "您正在排隊");
    v.lang = "xx"; /* not one of ours: English */
    expect_page(&v, "<html lang=\"en\"");

    /* a preview stays put: no refresh, the flag for the script */
    v = waiting_view();
    v.preview = true;
    expect_page(&v, "content=\"\"", "data-preview=\"1\"");
}

static void test_assets(void **state)
{
    (void)state;
    size_t len = 0;
    const char *type = NULL;
    const unsigned char *d = wr_page_asset(NULL, "style.css", &len, &type);
    assert_non_null(d);
    assert_true(len > 100);
    assert_string_equal(type, "text/css; charset=utf-8");
    d = wr_page_asset(NULL, "queue.js", &len, &type);
    assert_non_null(d);
    assert_string_equal(type, "text/javascript; charset=utf-8");
    assert_non_null(strstr((const char *)d, "retryAfterMs"));
    d = wr_page_asset(NULL, "dashboard.js", &len, &type);
    assert_non_null(d);
    assert_string_equal(type, "text/javascript; charset=utf-8");
    d = wr_page_asset(NULL, "i18n.json", &len, &type);
    assert_non_null(d);
    assert_string_equal(type, "application/json; charset=utf-8");

    type = "unchanged";
    len = 77;
    assert_null(wr_page_asset(NULL, "nope.css", &len, &type));
    assert_null(wr_page_asset(NULL, "queue.html", &len, &type)); /* templates are not assets */
    assert_null(wr_page_asset(NULL, "../page.c", &len, &type));
    assert_null(wr_page_asset(NULL, "..", &len, &type));
    assert_null(wr_page_asset(NULL, "../web/style.css", &len, &type));
    assert_null(wr_page_asset(NULL, "web/style.css", &len, &type));
    assert_null(wr_page_asset(NULL, "./style.css", &len, &type));
    assert_null(wr_page_asset(NULL, ".hidden.css", &len, &type));
    assert_null(wr_page_asset(NULL, "style.css/", &len, &type));
    assert_null(wr_page_asset(NULL, "style%2ecss", &len, &type));
    assert_null(wr_page_asset(NULL, "", &len, &type));
    assert_null(wr_page_asset(NULL, NULL, &len, &type));
    assert_null(wr_page_asset(NULL, "../scripts/join.lua", &len, &type));
    assert_string_equal(type, "unchanged");
    assert_int_equal(len, 77);
}

#define TESTS(X)                                                                                   \
    X(test_render_waiting_values)                                                                  \
    X(test_render_korean_and_eta_minutes)                                                          \
    X(test_render_paused_eta_unknown)                                                              \
    X(test_escaping_target_url)                                                                    \
    X(test_escaping_state_and_queue)                                                               \
    X(test_admitted_refresh_goes_to_target)                                                        \
    X(test_full_and_unavailable_retry)                                                             \
    X(test_admitted_token_in_query)                                                                \
    X(test_invite_state)                                                                           \
    X(test_code_state)                                                                             \
    X(test_group)                                                                                  \
    X(test_degraded_state)                                                                         \
    X(test_dashboard)                                                                              \
    X(test_prequeue_state)                                                                         \
    X(test_held)                                                                                   \
    X(test_odds_and_grouping)                                                                      \
    X(test_closed_state)                                                                           \
    X(test_notice_escaped)                                                                         \
    X(test_queue_page_has_no_inline_code)                                                          \
    X(test_waiting_for_stock)                                                                      \
    X(test_accent)                                                                                 \
    X(test_brand)                                                                                  \
    X(test_assets)
WR_UNIT_MAIN(NULL, NULL, TESTS)
