/*
 * test_page.c - the page module: HTML escaping of rendered values (a
 * "<script>" in targetUrl comes out as entities everywhere), the values of
 * the first render, the no-JavaScript refresh, Accept-Language choice with
 * q-values, static asset lookup (types, unknown names, traversal), and
 * the sale's edges (1.2): held, the odds with grouped numbers, closed and
 * sold out with their slow re-check, the operator's notice as text.
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

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
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

static void test_render_waiting_values(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_int_equal(len, strlen(html));
    assert_non_null(strstr(html, "<html lang=\"en\">"));
    assert_non_null(strstr(html, "data-queue=\"sale-1\""));
    assert_non_null(strstr(html, "data-state=\"waiting\""));
    assert_non_null(strstr(html, "data-position=\"128\""));
    assert_non_null(strstr(html, "data-waiting=\"5012\""));
    assert_non_null(strstr(html, "data-eta=\"45\""));
    assert_non_null(strstr(html, "data-retry-ms=\"3000\""));
    assert_non_null(strstr(html, "<strong id=\"position\" class=\"num\">128</strong>"));
    assert_non_null(strstr(html, "<dd id=\"ahead\">127</dd>"));
    assert_non_null(strstr(html, "<dd id=\"eta\">about 45 s</dd>"));
    assert_non_null(strstr(html, "You are number 128 in line. People ahead of you: 127."));
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
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "<html lang=\"ko\">"));
    assert_non_null(strstr(html, "<dd id=\"eta\">약 2분</dd>"));
    assert_non_null(strstr(html, "현재 128번째입니다. 앞에 127명이 있습니다."));
    /* 250 ms rounds up to 1 s, and the floor is 2 s */
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"2\""));
    free(html);
}

static void test_render_paused_eta_unknown(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.eta_seconds = -1;
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-eta=\"-1\""));
    assert_non_null(strstr(html, "<dd id=\"eta\">paused for now</dd>"));
    free(html);
}

static void test_escaping_target_url(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.target_url = "/x?a=1&b=\"2\"'<script>alert(1)</script>";
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
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
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_null(strstr(html, "<b>"));
    assert_null(strstr(html, "a<b"));
    assert_non_null(strstr(html, "data-queue=\"a&lt;b&amp;c\""));
    assert_non_null(strstr(html, "<body class=\"page-queue\" data-state=\"unavailable\" "));
    free(html);
}

static void test_admitted_refresh_goes_to_target(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.state = "admitted";
    v.target_url = "/shop?a=1&b=2";
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "content=\"0; url=/shop?a=1&amp;b=2\""));
    /* a waiting-only number is not shown for an admitted user */
    assert_non_null(strstr(html, "data-position=\"0\""));
    free(html);

    v.target_url = "";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"\""));
    assert_non_null(strstr(html, "You&#39;re in.")); /* ' escaped */
    free(html);
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
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(
        strstr(html, "content=\"0; url=https://shop.example/c?x=1&amp;wr_token=aaa.bbb.ccc#f\""));
    assert_non_null(strstr(html, "data-token-in-query=\"1\""));
    free(html);
    v.target_url = "/c";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(strstr(html, "content=\"0; url=/c\""));
    free(html);
    v.token_in_query = false;
    v.target_url = "https://shop.example/c";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(strstr(html, "content=\"0; url=https://shop.example/c\""));
    assert_non_null(strstr(html, "data-token-in-query=\"0\""));
    free(html);
}

/* 1.1: a join refused for its invite says why. */
static void test_invite_state(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.state = "invite";
    v.reason = "expired";
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-state=\"invite\""));
    assert_non_null(strstr(html, "data-reason=\"expired\""));
    assert_non_null(strstr(html, "Your invitation has expired."));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"\""));
    free(html);
    v.reason = "missing";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(strstr(html, "by invitation only"));
    free(html);
    v.reason = "signature";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(strstr(html, "not valid for this line"));
    free(html);
}

static void test_full_and_unavailable_retry(void **state)
{
    (void)state;
    wr_page_view_t v = state_view("full");
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    /* the api sends Retry-After: 5 with a full line */
    assert_non_null(strstr(html, "data-retry-ms=\"5000\""));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"5\""));
    assert_non_null(strstr(html, "The line is full right now. We will try again in 5 s."));
    free(html);

    v.state = "unavailable";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-retry-ms=\"2000\""));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"2\""));
    free(html);

    v.state = "notfound";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"\""));
    assert_non_null(strstr(html, "This waiting room does not exist."));
    free(html);
}

/* Degraded mode: no position, the reconnecting sentence in both languages,
 * and the no-JS page keeps asking at the poll interval. */
static void test_degraded_state(void **state)
{
    (void)state;
    wr_page_view_t v = state_view("degraded");
    v.retry_after_ms = 4800;
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-state=\"degraded\""));
    assert_non_null(strstr(html, "data-retry-ms=\"4800\""));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"5\""));
    assert_non_null(strstr(html, "The line is reconnecting; you may be let in."));
    free(html);
    v.lang = "ko";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "대기열이 다시 연결되는 중입니다."));
    free(html);
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
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
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
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
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
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_true(strstr(html, "class=\"num\">1:30</strong>") ||
                strstr(html, "class=\"num\">1:31</strong>"));
    free(html);

    /* the opening's values only in the pre-queue */
    v.state = "waiting";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-opens-at=\"\""));
    assert_non_null(strstr(html, "<time id=\"opens-at\" datetime=\"\"></time>"));
    free(html);
}

/* 1.2: a held person (turn came while away) is told their place was kept,
 * in both languages, with position 1. */
static void test_held(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.position = 1;
    v.held = true;
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-held=\"1\""));
    assert_non_null(strstr(html, "<h1 id=\"heading\">Welcome back</h1>"));
    assert_non_null(strstr(html, ">You stepped away, and your place was kept. You go in at the "
                                 "next admission.</p>"));
    assert_non_null(strstr(html, "<strong id=\"position\" class=\"num\">1</strong>"));
    free(html);
    v.lang = "ko";
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "잠시 자리를 비우셨지만 순서는 그대로 지켜 두었습니다."));
    free(html);
    /* not held: the usual sentence, data-held 0 */
    v = waiting_view();
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-held=\"0\""));
    assert_null(strstr(html, ">You stepped away"));
    assert_non_null(strstr(html, "<h1 id=\"heading\">You are in line</h1>"));
    free(html);
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
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-stock-left=\"300\""));
    assert_non_null(strstr(html, "data-position=\"5200\""));
    assert_non_null(
        strstr(html, "<p id=\"odds\" class=\"odds\">About 300 left; you are number 5,200.</p>"));
    assert_non_null(strstr(html, "<strong id=\"position\" class=\"num\">5,200</strong>"));
    assert_non_null(strstr(html, "<dd id=\"ahead\">5,199</dd>"));
    assert_non_null(strstr(html, "<dd id=\"waiting\">1,234,567</dd>"));
    assert_non_null(strstr(html, "You are number 5,200 in line. People ahead of you: 5,199."));
    free(html);
    v.lang = "ko";
    v.stock_left = 12000;
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "남은 수량 약 12,000개, 내 순서는 5,200번째입니다."));
    free(html);
    /* none left while passes are live: people keep waiting */
    v.lang = "en";
    v.stock_left = 0;
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-stock-left=\"0\""));
    assert_non_null(strstr(html, "None left right now; passes that go unused come back. You are "
                                 "number 5,200."));
    free(html);
    v.has_stock = false;
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-stock-left=\"\""));
    assert_non_null(strstr(html, "<p id=\"odds\" class=\"odds\"></p>"));
    free(html);
}

/* 1.2: closed and sold out, in both languages; the re-check without
 * JavaScript is the server's retry, 60 s at most (and by default). */
static void test_closed_state(void **state)
{
    (void)state;
    wr_page_view_t v = state_view("closed");
    v.reason = "soldOut";
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "<body class=\"page-queue\" data-state=\"closed\" "
                                 "data-reason=\"soldOut\""));
    assert_non_null(strstr(html, "<h1 id=\"heading\">Sold out</h1>"));
    assert_non_null(strstr(html, ">Sold out. If more becomes available, this page moves on by "
                                 "itself.</p>"));
    assert_non_null(strstr(html, "data-retry-ms=\"60000\""));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"60\""));
    free(html);
    v.reason = "closed";
    v.lang = "ko";
    v.retry_after_ms = 600000; /* never slower than 60 s */
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "<h1 id=\"heading\">판매가 종료되었습니다</h1>"));
    assert_non_null(strstr(html, "판매가 다시 열리면 이 페이지가 자동으로 넘어갑니다."));
    assert_non_null(strstr(html, "data-retry-ms=\"60000\""));
    free(html);
    v.lang = "en";
    v.retry_after_ms = 30000; /* the server's, when sooner */
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "<h1 id=\"heading\">The sale has ended</h1>"));
    assert_non_null(strstr(html, "data-retry-ms=\"30000\""));
    assert_non_null(strstr(html, "http-equiv=\"refresh\" content=\"30\""));
    free(html);
}

/* 1.2: the operator's notice is text: a hostile one comes out as entities,
 * and the box is marked shown only when there is one. */
static void test_notice_escaped(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    v.notice = "<img src=x onerror=alert(1)>\"</p><script>alert('x')</script>&amp;";
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_null(strstr(html, "<img"));
    assert_null(strstr(html, "<script>"));
    assert_non_null(strstr(html, "data-notice=\"1\""));
    assert_non_null(strstr(
        html, "<p id=\"notice\" class=\"notice\" aria-live=\"polite\" aria-atomic=\"true\">"
              "&lt;img src=x onerror=alert(1)&gt;&quot;&lt;/p&gt;&lt;script&gt;alert(&#39;x&#39;)"
              "&lt;/script&gt;&amp;amp;</p>"));
    free(html);
    v.notice = NULL;
    html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "data-notice=\"0\""));
    assert_non_null(strstr(html, "aria-atomic=\"true\"></p>"));
    free(html);
}

static void test_dashboard(void **state)
{
    (void)state;
    size_t len = 0;
    char *html = wr_page_render_dashboard(&len);
    assert_non_null(html);
    assert_int_equal(len, strlen(html));
    assert_non_null(strstr(html, "<script src=\"/static/dashboard.js\" defer></script>"));
    /* no inline script or style: the CSP allows only 'self' */
    assert_int_equal(count(html, "<script"), 1);
    assert_null(strstr(html, "<style"));
    assert_null(strstr(html, "style=\""));
    free(html);
}

static void test_queue_page_has_no_inline_code(void **state)
{
    (void)state;
    wr_page_view_t v = waiting_view();
    size_t len = 0;
    char *html = wr_page_render_queue(&v, &len);
    assert_non_null(html);
    assert_int_equal(count(html, "<script"), 1);
    assert_non_null(strstr(html, "<script src=\"/static/queue.js\" defer></script>"));
    assert_null(strstr(html, "<style"));
    assert_null(strstr(html, " style=\""));
    assert_null(strstr(html, " onclick="));
    free(html);
}

static void test_lang(void **state)
{
    (void)state;
    assert_string_equal(wr_page_lang("ko-KR,ko;q=0.9,en;q=0.8"), "ko");
    assert_string_equal(wr_page_lang("en-US,en;q=0.9,ko;q=0.8"), "en");
    assert_string_equal(wr_page_lang("ko;q=0.1, en;q=0.5"), "en");
    assert_string_equal(wr_page_lang("en;q=0.1, ko;q=0.5"), "ko");
    assert_string_equal(wr_page_lang(NULL), "en");
    assert_string_equal(wr_page_lang(""), "en");
    assert_string_equal(wr_page_lang("garbage"), "en");
    assert_string_equal(wr_page_lang(";;;,,,=q=,ko;q=x"), "en");
    assert_string_equal(wr_page_lang("ko;q=0"), "en");       /* q=0: not acceptable */
    assert_string_equal(wr_page_lang("KO"), "ko");           /* case-insensitive */
    assert_string_equal(wr_page_lang("fr, ko;q=0.3"), "ko"); /* ko over no English */
    assert_string_equal(wr_page_lang("ko, en"), "ko");       /* equal q: first listed */
    assert_string_equal(wr_page_lang("en, ko"), "en");
    assert_string_equal(wr_page_lang("kok, ko-KR ; q=0.7 , en;q=0.6"), "ko");
    assert_string_equal(wr_page_lang("ko;q=1.5"), "en"); /* bad q: entry ignored */
}

static void test_assets(void **state)
{
    (void)state;
    size_t len = 0;
    const char *type = NULL;
    const unsigned char *d = wr_page_asset("style.css", &len, &type);
    assert_non_null(d);
    assert_true(len > 100);
    assert_string_equal(type, "text/css; charset=utf-8");
    d = wr_page_asset("queue.js", &len, &type);
    assert_non_null(d);
    assert_string_equal(type, "text/javascript; charset=utf-8");
    assert_non_null(strstr((const char *)d, "retryAfterMs"));
    d = wr_page_asset("dashboard.js", &len, &type);
    assert_non_null(d);
    assert_string_equal(type, "text/javascript; charset=utf-8");
    d = wr_page_asset("i18n.json", &len, &type);
    assert_non_null(d);
    assert_string_equal(type, "application/json; charset=utf-8");

    type = "unchanged";
    len = 77;
    assert_null(wr_page_asset("nope.css", &len, &type));
    assert_null(wr_page_asset("queue.html", &len, &type)); /* templates are not assets */
    assert_null(wr_page_asset("../page.c", &len, &type));
    assert_null(wr_page_asset("..", &len, &type));
    assert_null(wr_page_asset("../web/style.css", &len, &type));
    assert_null(wr_page_asset("web/style.css", &len, &type));
    assert_null(wr_page_asset("./style.css", &len, &type));
    assert_null(wr_page_asset(".hidden.css", &len, &type));
    assert_null(wr_page_asset("style.css/", &len, &type));
    assert_null(wr_page_asset("style%2ecss", &len, &type));
    assert_null(wr_page_asset("", &len, &type));
    assert_null(wr_page_asset(NULL, &len, &type));
    assert_null(wr_page_asset("../scripts/join.lua", &len, &type));
    assert_string_equal(type, "unchanged");
    assert_int_equal(len, 77);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_waiting_values),
        cmocka_unit_test(test_render_korean_and_eta_minutes),
        cmocka_unit_test(test_render_paused_eta_unknown),
        cmocka_unit_test(test_escaping_target_url),
        cmocka_unit_test(test_escaping_state_and_queue),
        cmocka_unit_test(test_admitted_refresh_goes_to_target),
        cmocka_unit_test(test_full_and_unavailable_retry),
        cmocka_unit_test(test_admitted_token_in_query),
        cmocka_unit_test(test_invite_state),
        cmocka_unit_test(test_degraded_state),
        cmocka_unit_test(test_dashboard),
        cmocka_unit_test(test_prequeue_state),
        cmocka_unit_test(test_held),
        cmocka_unit_test(test_odds_and_grouping),
        cmocka_unit_test(test_closed_state),
        cmocka_unit_test(test_notice_escaped),
        cmocka_unit_test(test_queue_page_has_no_inline_code),
        cmocka_unit_test(test_lang),
        cmocka_unit_test(test_assets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
