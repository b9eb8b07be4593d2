/*
 * page.c - the queue page and the dashboard, rendered from templates that
 * are embedded at build time (every file of src/http/web/, found as "web/<file>" through
 * embed.h), and the static assets (CSS, JS) beside them.
 *
 * Rendering is plain placeholder substitution: the template is copied byte
 * for byte, and every "{{name}}" is replaced by the HTML-escaped value of
 * `name` (& < > " ' become entities), so a value is safe both in text and
 * inside a double- or single-quoted attribute. Nothing is ever inserted
 * unescaped. The names are:
 *   queue, lang, state, position, ahead, waiting, eta, eta_text, retry_ms,
 *   refresh, target_url, token_in_query, reason, status_text, heading, updated,
 *   position_text, ahead_text, waiting_text (the numbers grouped by
 *   thousands, "5,200", as English and Korean write them; the script then
 *   formats them by the page's language), held ("1" or "0"),
 *   stock_left (stockLeft, "" without a stock), odds ("About 300 left.", ""
 *   without a stock), waiting_for ("stock" while admission waits only on
 *   stock: eta_text is then "when an unused pass comes back"), shop_url
 *   (closed: the target's origin + "/", "/" for a target on this host, ""
 *   without one), notice (the operator's notice,
 *   "" without one; text, escaped like every value) and has_notice ("1"/"0"),
 *   group (the person's priority group, "" for the standard line),
 *   group_text (group_line: "You are in the fanclub presale line.", ""
 *   without a group) and has_groups ("1" when the queue has groups: the
 *   page offers its presale code form),
 *   now_ms (the server's clock at render, epoch ms: the script's countdown
 *   corrects the person's clock by it), opens_at (the opening of a pre-queue,
 *   epoch ms, "" otherwise), opens_at_iso and opens_at_utc (the same in
 *   ISO 8601 and as "YYYY-MM-DD HH:MM:SS UTC" for people without
 *   JavaScript), countdown (time left until the opening, "M:SS", "H:MM:SS"
 *   or "<d> d H:MM:SS" by the i18n string countdown_days),
 *   i18n, and "t:<key>" (the
 *   string <key> of the page's language in web/i18n.json).
 * An unknown name renders as nothing; a "{{" without "}}" is copied as is.
 * i18n is the strings of English and of the page's language (webdir.h,
 * wr_webdir_i18n_for; the whole embedded file without a webdir), which the
 * script reads from a data-* attribute, where the escaping above makes it
 * attribute-safe; langs lists every language there is (the script fetches
 * /static/i18n.json when the person switches to another). The brand's
 * names (dir: "rtl" for a right-to-left language, wr_lang_rtl; brand,
 * brand_name, has_brand, logo_url, logo_alt, has_logo, page_title, title,
 * accent, accent_ink, accent_on_light, accent_on_dark, default_lang,
 * preview) are in examples/page/README.md, the template contract.
 *
 * Output is bounded: rendering runs twice, first only counting bytes, then
 * writing into one buffer of exactly that size; a page over WR_PAGE_MAX
 * bytes is refused (NULL), which a template of ours never reaches.
 *
 * Ownership: wr_page_render_* return a malloc'd document the caller frees;
 * the i18n JSON is parsed per render and freed before returning; assets are
 * borrowed from the static embed table. No global state, no I/O.
 */
#define _GNU_SOURCE /* memmem, strncasecmp */
#include "http/page.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "base/embed.h"
#include "core/origin.h"
#include "core/qconfig.h"
#include "http/lang.h"
#include "http/webdir.h"

#define WR_PAGE_MAX  (512 * 1024) /* bytes of one rendered page */
#define NAME_MAX_LEN 64           /* placeholder names and asset names */
#define TEXT_MAX     512          /* one formatted sentence */
/* "0; url=" + a targetUrl (at most 2048 bytes) + "&wr_token=" + a token */
#define REFRESH_MAX 3200
/* closed / sold out (1.2): the page asks again at most this far apart, so a
 * reopened sale or a restock reaches the people who kept it open */
#define WR_PAGE_RECHECK_MS 60000u

/* ---------- output: counting pass (buf == NULL) and writing pass ---------- */

typedef struct {
    char *buf;  /* NULL while counting */
    size_t len; /* bytes emitted so far */
    bool over;  /* went past WR_PAGE_MAX */
} out_t;

static void emit(out_t *o, const char *s, size_t n)
{
    if (o->over || n > WR_PAGE_MAX - o->len) {
        o->over = true;
        return;
    }
    if (o->buf)
        memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void emit_escaped(out_t *o, const char *s, size_t n)
{
    size_t run = 0; /* start of the current run of plain bytes */
    for (size_t i = 0; i < n; i++) {
        const char *ent = NULL;
        switch (s[i]) {
        case '&':
            ent = "&amp;";
            break;
        case '<':
            ent = "&lt;";
            break;
        case '>':
            ent = "&gt;";
            break;
        case '"':
            ent = "&quot;";
            break;
        case '\'':
            ent = "&#39;";
            break;
        default:
            continue;
        }
        emit(o, s + run, i - run);
        emit(o, ent, strlen(ent));
        run = i + 1;
    }
    emit(o, s + run, n - run);
}

/* ---------- i18n ---------- */

/* The string `key` of language `lang` in the parsed i18n object, or "". */
static const char *tr(const json_t *i18n, const char *lang, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(i18n, lang), key));
    if (!s) /* a string a shop's language lacks: the English one */
        s = json_string_value(json_object_get(json_object_get(i18n, "en"), key));
    return s ? s : "";
}

/*
 * Copies fmt into out (size cap), replacing "{name}" by the value of the
 * matching entry of names/vals (n pairs); other text is copied as is.
 * Truncates at cap - 1 bytes; always NUL-terminates.
 */
static void fill(char *out, size_t cap, const char *fmt, const char *const *names,
                 const char *const *vals, size_t n)
{
    size_t o = 0;
    for (const char *p = fmt; *p && o + 1 < cap;) {
        if (*p == '{') {
            const char *end = strchr(p, '}');
            size_t i = 0;
            for (; end && i < n; i++)
                if (strlen(names[i]) == (size_t)(end - p - 1) &&
                    memcmp(names[i], p + 1, (size_t)(end - p - 1)) == 0)
                    break;
            if (end && i < n) {
                for (const char *v = vals[i]; *v && o + 1 < cap; v++)
                    out[o++] = *v;
                p = end + 1;
                continue;
            }
        }
        out[o++] = *p++;
    }
    out[o] = 0;
}

/* ---------- values of one render ---------- */

typedef struct {
    const char *name;
    const char *value; /* escaped on output */
} var_t;

typedef struct {
    const var_t *vars;
    size_t nvars;
    const json_t *i18n; /* may be NULL */
    const char *lang;
    const char *i18n_raw; /* the JSON text, may be NULL */
    size_t i18n_raw_len;
} render_t;

static void emit_var(out_t *o, const render_t *r, const char *name, size_t n)
{
    if (n > 2 && memcmp(name, "t:", 2) == 0) {
        char key[NAME_MAX_LEN + 1];
        if (n - 2 > NAME_MAX_LEN)
            return;
        memcpy(key, name + 2, n - 2);
        key[n - 2] = 0;
        const char *s = tr(r->i18n, r->lang, key);
        emit_escaped(o, s, strlen(s));
        return;
    }
    if (n == 4 && memcmp(name, "i18n", 4) == 0) {
        if (r->i18n_raw)
            emit_escaped(o, r->i18n_raw, r->i18n_raw_len);
        return;
    }
    for (size_t i = 0; i < r->nvars; i++)
        if (strlen(r->vars[i].name) == n && memcmp(r->vars[i].name, name, n) == 0) {
            emit_escaped(o, r->vars[i].value, strlen(r->vars[i].value));
            return;
        }
}

static void render_pass(out_t *o, const char *tpl, size_t len, const render_t *r)
{
    size_t i = 0;
    while (i < len && !o->over) {
        const char *open = NULL;
        if (len - i >= 2)
            open = memmem(tpl + i, len - i, "{{", 2);
        if (!open) {
            emit(o, tpl + i, len - i);
            return;
        }
        size_t at = (size_t)(open - tpl);
        const char *close = memmem(open + 2, len - at - 2, "}}", 2);
        if (!close) {
            emit(o, tpl + i, len - i);
            return;
        }
        emit(o, tpl + i, at - i);
        size_t nlen = (size_t)(close - open - 2);
        if (nlen <= NAME_MAX_LEN + 2)
            emit_var(o, r, open + 2, nlen);
        i = (size_t)(close - tpl) + 2;
    }
}

/* Renders template <file> (--web-dir's or the embedded one) with r; NULL
 * when missing, too big or no memory. */
static char *render(const wr_webdir_t *web, const char *file, const render_t *r, size_t *len)
{
    size_t flen = 0;
    const unsigned char *data = wr_webdir_file(web, file, &flen);
    if (!data)
        return NULL;
    out_t o = {NULL, 0, false};
    render_pass(&o, (const char *)data, flen, r);
    if (o.over)
        return NULL;
    char *buf = malloc(o.len + 1);
    if (!buf)
        return NULL;
    size_t want = o.len;
    o = (out_t){buf, 0, false};
    render_pass(&o, (const char *)data, flen, r);
    buf[want] = 0;
    *len = want;
    return buf;
}

/* ---------- the queue page ---------- */

static bool one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(s, *set) == 0)
            return true;
    return false;
}

/* Same rule as the config's targetUrl: absolute http(s) or a "/path". */
static bool target_ok(const char *u)
{
    if (!u || !*u)
        return false;
    if (strncasecmp(u, "https://", 8) == 0 || strncasecmp(u, "http://", 7) == 0)
        return true;
    return u[0] == '/' && u[1] != '/' && u[1] != '\\';
}

/* The status sentence of a refused invite, by its reason. */
static const char *invite_key(const char *reason)
{
    if (!reason || strcmp(reason, "missing") == 0)
        return "status_invite";
    if (strcmp(reason, "expired") == 0)
        return "status_invite_expired";
    if (strcmp(reason, "notYetValid") == 0)
        return "status_invite_not_yet";
    return "status_invite_invalid";
}

/* The status sentence of a refused presale code, by its reason. */
static const char *code_key(const char *reason)
{
    if (reason && strcmp(reason, "usedUp") == 0)
        return "status_code_used_up";
    if (reason && strcmp(reason, "revoked") == 0)
        return "status_code_revoked";
    if (reason && strcmp(reason, "expired") == 0)
        return "status_code_expired";
    return "status_code_unknown";
}

static void eta_text(char *out, size_t cap, const json_t *i18n, const char *lang, int64_t eta)
{
    static const char *const names[] = {"n"};
    char num[24];
    const char *vals[] = {num};
    if (eta < 0) {
        snprintf(out, cap, "%s", tr(i18n, lang, "eta_unknown"));
    } else if (eta < 60) {
        snprintf(num, sizeof(num), "%" PRId64, eta);
        fill(out, cap, tr(i18n, lang, "eta_seconds"), names, vals, 1);
    } else {
        snprintf(num, sizeof(num), "%" PRId64, (eta + 59) / 60);
        fill(out, cap, tr(i18n, lang, "eta_minutes"), names, vals, 1);
    }
}

/* n in decimal with a comma between groups of three digits ("5,200"), as
 * en-US and ko-KR write numbers (queue.js's toLocaleString). */
static void group_digits(char *out, size_t cap, uint64_t n)
{
    char raw[24];
    int len = snprintf(raw, sizeof(raw), "%" PRIu64, n);
    size_t o = 0;
    for (int i = 0; i < len && o + 1 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0 && o + 2 < cap)
            out[o++] = ',';
        out[o++] = raw[i];
    }
    out[o] = 0;
}

/* The wall clock, ms since the epoch. */
static int64_t wall_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return (int64_t)time(NULL) * 1000;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The time left, ms (rounded up to whole seconds, at least 0), as "M:SS",
 * "H:MM:SS", or the i18n string countdown_days ("{d} d {hms}") from a day
 * on; queue.js formats it the same way. */
static void countdown_text(char *out, size_t cap, const json_t *i18n, const char *lang,
                           int64_t left_ms)
{
    int64_t s = left_ms > 0 ? (left_ms + 999) / 1000 : 0;
    int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
    char hms[48], num[24];
    if (d > 0 || h > 0)
        snprintf(hms, sizeof(hms), "%" PRId64 ":%02" PRId64 ":%02" PRId64, h, m, sec);
    else
        snprintf(hms, sizeof(hms), "%" PRId64 ":%02" PRId64, m, sec);
    if (d == 0) {
        snprintf(out, cap, "%s", hms);
        return;
    }
    snprintf(num, sizeof(num), "%" PRId64, d);
    static const char *const names[] = {"d", "hms"};
    const char *vals[] = {num, hms};
    fill(out, cap, tr(i18n, lang, "countdown_days"), names, vals, 2);
}

/* ---------- the accent colour and its contrast ---------- */

#define ACCENT_DEFAULT  "#2d5bd7"
#define BG_LIGHT        0xf4f5f7 /* style.css --bg: the lighter theme's darkest ground */
#define BG_DARK         0x2a3242 /* style.css --card of the dark theme: its lightest ground */
#define CONTRAST_NEEDED 4.6      /* WCAG AA asks 4.5:1 for text; a little margin */

static double channel(unsigned c)
{
    double x = c / 255.0;
    return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4);
}

/* WCAG 2.1 relative luminance of 0xRRGGBB. */
static double luminance(unsigned rgb)
{
    return 0.2126 * channel(rgb >> 16 & 0xff) + 0.7152 * channel(rgb >> 8 & 0xff) +
           0.0722 * channel(rgb & 0xff);
}

double wr_page_contrast(unsigned a, unsigned b)
{
    double la = luminance(a), lb = luminance(b);
    return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

/* rgb moved toward `to` by t (0..1), per channel. */
static unsigned mix(unsigned rgb, unsigned to, double t)
{
    unsigned out = 0;
    for (int sh = 16; sh >= 0; sh -= 8) {
        double a = rgb >> sh & 0xff, b = to >> sh & 0xff;
        out |= (unsigned)lround(a + (b - a) * t) << sh;
    }
    return out;
}

/* The accent, moved toward `to` in 5 % steps until text in it reads on
 * `ground` at CONTRAST_NEEDED (`to` itself always does: black or white). */
static unsigned readable_on(unsigned accent, unsigned ground, unsigned to)
{
    for (int i = 0; i <= 20; i++) {
        unsigned c = mix(accent, to, i / 20.0);
        if (wr_page_contrast(c, ground) >= CONTRAST_NEEDED)
            return c;
    }
    return to;
}

static bool parse_rgb(const char *hex, unsigned *out)
{
    if (!hex || hex[0] != '#' || strlen(hex) != 7)
        return false;
    unsigned v = 0;
    for (int i = 1; i < 7; i++) {
        int c = hex[i];
        if (!isxdigit(c))
            return false;
        v = v << 4 | (unsigned)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
    }
    *out = v;
    return true;
}

void wr_page_accent(const char *accent, wr_page_colors_t *out)
{
    unsigned a;
    if (!parse_rgb(accent, &a))
        parse_rgb(ACCENT_DEFAULT, &a);
    /* text on the accent: black or white, whichever reads better; one of
     * them always reaches sqrt(21) = 4.58:1 */
    unsigned ink = wr_page_contrast(a, 0xffffff) >= wr_page_contrast(a, 0x000000) ? 0xffffff : 0;
    snprintf(out->accent, sizeof(out->accent), "#%06x", a);
    snprintf(out->ink, sizeof(out->ink), "#%06x", ink);
    snprintf(out->on_light, sizeof(out->on_light), "#%06x", readable_on(a, BG_LIGHT, 0x000000));
    snprintf(out->on_dark, sizeof(out->on_dark), "#%06x", readable_on(a, BG_DARK, 0xffffff));
}

char *wr_page_render_queue(const wr_page_view_t *v, size_t *len)
{
    static const char *const states[] = {
        "waiting", "prequeue", "admitted", "passthrough", "full",   "unavailable", "notfound",
        "invite",  "degraded", "error",    "challenge",   "closed", "code",        NULL};
    if (!v || !len)
        return NULL;
    char *html = NULL;
    json_t *own = NULL; /* the embedded i18n, parsed here when there is no webdir */
    const json_t *i18n = NULL;
    const char *lang = wr_page_lang_tag(v->web, v->lang);
    if (!lang)
        lang = wr_page_lang(v->web, NULL, NULL);
    const char *state = v->state && one_of(v->state, states) ? v->state : "unavailable";
    bool waiting = strcmp(state, "waiting") == 0;
    bool prequeue = strcmp(state, "prequeue") == 0;
    bool error = strcmp(state, "error") == 0;
    bool closed = strcmp(state, "closed") == 0;
    bool sold_out = closed && v->reason && strcmp(v->reason, "soldOut") == 0;
    bool held = waiting && v->held;
    bool code = strcmp(state, "code") == 0;
    /* a priority group's line (1.3): its name, "" for the standard line */
    const char *group = waiting && v->group ? v->group : "";
    const char *target = v->target_url ? v->target_url : "";

    size_t raw_len = 0;
    const char *raw = NULL;
    const char *langs = "";
    if (v->web) {
        i18n = wr_webdir_i18n(v->web);
        raw = wr_webdir_i18n_for(v->web, lang, &raw_len, &langs);
    } else {
        const wr_embed_file_t *e = wr_embed_find("web/i18n.json");
        if (e) {
            i18n = own = json_loadb((const char *)e->data, e->len, 0, NULL);
            raw = (const char *)e->data;
            raw_len = e->len;
        }
    }

    /* Next poll: the server's value; full / unavailable retry after the
     * Retry-After the api sends with them (5 s, 2 s). */
    uint32_t retry = v->retry_after_ms;
    if (closed) /* the slow re-check: the server's, at most 60 s */
        retry = retry == 0 || retry > WR_PAGE_RECHECK_MS ? WR_PAGE_RECHECK_MS : retry;
    else if (retry == 0 && !error) /* an error without Retry-After is not retried */
        retry = strcmp(state, "full") == 0 ? 5000 : 2000;
    uint64_t position = waiting ? v->position : 0;
    uint64_t ahead = position > 0 ? position - 1 : 0;

    char s_pos[24], s_ahead[24], s_waiting[24], s_eta[24], s_retry[24], s_retry_s[24];
    snprintf(s_pos, sizeof(s_pos), "%" PRIu64, position);
    snprintf(s_ahead, sizeof(s_ahead), "%" PRIu64, ahead);
    snprintf(s_waiting, sizeof(s_waiting), "%" PRIu64, waiting ? v->waiting : 0);
    snprintf(s_eta, sizeof(s_eta), "%" PRId64,
             waiting && v->eta_seconds >= 0 ? v->eta_seconds : -1);
    snprintf(s_retry, sizeof(s_retry), "%" PRIu32, retry);
    uint32_t refresh_s = (retry + 999) / 1000;
    if (refresh_s < 2)
        refresh_s = 2;
    snprintf(s_retry_s, sizeof(s_retry_s), "%" PRIu32, refresh_s);

    /* Without JavaScript: reload at the poll interval while waiting or
     * retrying; go to the target once admitted (the api has set the token
     * cookie) or when the line is off; stay put otherwise. */
    char refresh[REFRESH_MAX];
    refresh[0] = 0;
    if (v->preview) /* a preview stays put */
        ;
    else if (waiting || prequeue || strcmp(state, "full") == 0 ||
             strcmp(state, "unavailable") == 0 ||
             strcmp(state, "degraded") == 0 || /* degraded mode: asking again may let them in */
             closed ||                         /* the slow re-check: a reopening or a restock */
             (error && retry > 0))
        snprintf(refresh, sizeof(refresh), "%s", s_retry_s);
    else if ((strcmp(state, "admitted") == 0 || strcmp(state, "passthrough") == 0) &&
             target_ok(target) && strlen(target) + 8 < sizeof(refresh)) {
        /* tokenInQuery: the pass travels to another origin in the URL */
        char with[REFRESH_MAX - 7];
        if (v->token_in_query && v->token && v->token[0] && strcmp(state, "admitted") == 0 &&
            target[0] != '/' &&
            wr_origin_add_param(target, "wr_token", v->token, with, sizeof(with)))
            snprintf(refresh, sizeof(refresh), "0; url=%s", with);
        else
            snprintf(refresh, sizeof(refresh), "0; url=%s", target);
    }

    char eta[TEXT_MAX], status[TEXT_MAX];
    bool on_stock = waiting && v->waiting_for && strcmp(v->waiting_for, "stock") == 0;
    if (on_stock) /* 1.3: nobody moves until a pass comes back; no time to give */
        snprintf(eta, sizeof(eta), "%s", tr(i18n, lang, "eta_stock"));
    else if (group[0] && v->eta_seconds < 0) /* a group not admitted from yet (1.3) */
        snprintf(eta, sizeof(eta), "%s", tr(i18n, lang, "eta_not_yet"));
    else
        eta_text(eta, sizeof(eta), i18n, lang, waiting ? v->eta_seconds : -1);
    /* the opening: epoch ms, ISO 8601 and plain UTC, and the time left */
    char s_now[24], s_opens[24] = "", opens_iso[32] = "", opens_utc[40] = "", countdown[64] = "";
    int64_t now_ms = wall_ms();
    snprintf(s_now, sizeof(s_now), "%" PRId64, now_ms);
    if (prequeue && v->opens_at_ms > 0) {
        snprintf(s_opens, sizeof(s_opens), "%" PRId64, v->opens_at_ms);
        time_t at = (time_t)(v->opens_at_ms / 1000);
        struct tm otm;
        if (gmtime_r(&at, &otm)) {
            strftime(opens_iso, sizeof(opens_iso), "%Y-%m-%dT%H:%M:%SZ", &otm);
            strftime(opens_utc, sizeof(opens_utc), "%Y-%m-%d %H:%M:%S UTC", &otm);
        }
        countdown_text(countdown, sizeof(countdown), i18n, lang, v->opens_at_ms - now_ms);
    }
    /* the numbers people read, grouped ("5,200") */
    char g_pos[32], g_ahead[32], g_waiting[32], g_stock[32] = "", s_stock[24] = "";
    group_digits(g_pos, sizeof(g_pos), position);
    group_digits(g_ahead, sizeof(g_ahead), ahead);
    group_digits(g_waiting, sizeof(g_waiting), waiting ? v->waiting : 0);
    if (waiting && v->has_stock) {
        group_digits(g_stock, sizeof(g_stock), v->stock_left);
        snprintf(s_stock, sizeof(s_stock), "%" PRIu64, v->stock_left);
    }
    static const char *const names[] = {"position", "ahead", "s", "time", "code", "stock"};
    const char *vals[] = {g_pos, g_ahead, s_retry_s, opens_utc, v->error ? v->error : "", g_stock};
    char odds[TEXT_MAX] = "";
    if (waiting && v->has_stock)
        fill(odds, sizeof(odds), tr(i18n, lang, v->stock_left > 0 ? "odds" : "odds_none"), names,
             vals, 6);
    char key[32];
    if (held)
        snprintf(key, sizeof(key), "%s", on_stock ? "status_held_stock" : "status_held");
    else if (closed)
        snprintf(key, sizeof(key), "%s", sold_out ? "status_soldout" : "status_closed");
    else if (strcmp(state, "admitted") == 0 || strcmp(state, "passthrough") == 0)
        snprintf(key, sizeof(key), "status_%s%s", state, target_ok(target) ? "" : "_here");
    else if (strcmp(state, "invite") == 0)
        snprintf(key, sizeof(key), "%s", invite_key(v->reason));
    else if (code)
        snprintf(key, sizeof(key), "%s", code_key(v->reason));
    else
        snprintf(key, sizeof(key), "status_%s", state);
    fill(status, sizeof(status), tr(i18n, lang, key), names, vals, 6);
    char group_text[TEXT_MAX] = "", isolated[WR_GROUP_NAME_MAX + 8];
    if (group[0]) { /* the name in its own direction (FSI ... PDI): Latin in Arabic */
        static const char *const gname[] = {"group"};
        snprintf(isolated, sizeof(isolated), "\xe2\x81\xa8%s\xe2\x81\xa9", group);
        const char *gval[] = {isolated};
        fill(group_text, sizeof(group_text), tr(i18n, lang, "group_line"), gname, gval, 1);
    }
    const char *heading = tr(i18n, lang,
                             held       ? "heading_held"
                             : waiting  ? "heading"
                             : prequeue ? "heading_prequeue"
                             : closed   ? (sold_out ? "heading_soldout" : "heading_closed")
                             : strcmp(state, "admitted") == 0    ? "heading_admitted"
                             : strcmp(state, "passthrough") == 0 ? "heading_passthrough"
                             : code                              ? "heading_code"
                                                                 : "title");
    /* the way back to the shop from a closed sale: the target's origin
     * ("/" for a target on this host) */
    char shop[WR_ORIGIN_MAX + 2] = "";
    if (closed && target[0] == '/')
        snprintf(shop, sizeof(shop), "/");
    else if (closed && target_ok(target) && wr_origin_of_url(target, shop))
        strcat(shop, "/");
    const char *notice = v->notice ? v->notice : "";

    char updated[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(updated, sizeof(updated), "%H:%M:%S UTC", &tm);

    /* the brand (config page); "" where not given */
    const wr_page_config_t *pg = v->page && v->page->set ? v->page : NULL;
    const char *brand = pg ? pg->brand : "";
    const char *logo = pg ? pg->logo_url : "";
    const char *ptitle = pg && pg->title[0] ? pg->title : tr(i18n, lang, "title");
    wr_page_colors_t col;
    wr_page_accent(pg && pg->accent[0] ? pg->accent : NULL, &col);
    /* the logo's alternative text: the brand is written beside it */
    const char *logo_alt = !logo[0] || brand[0] ? "" : (pg && pg->title[0] ? pg->title : v->queue);

    const var_t vars[] = {
        {"queue", v->queue ? v->queue : ""},
        {"lang", lang},
        {"dir", wr_lang_rtl(lang) ? "rtl" : "ltr"},
        {"brand", brand},
        {"brand_name", brand[0] ? brand : (v->queue ? v->queue : "")},
        {"has_brand", brand[0] ? "1" : "0"},
        {"logo_url", logo},
        {"logo_alt", logo_alt ? logo_alt : ""},
        {"has_logo", logo[0] ? "1" : "0"},
        {"page_title", pg ? pg->title : ""},
        {"title", ptitle},
        {"accent", col.accent},
        {"accent_ink", col.ink},
        {"accent_on_light", col.on_light},
        {"accent_on_dark", col.on_dark},
        {"default_lang", pg && pg->lang[0] ? pg->lang : ""},
        {"preview", v->preview ? "1" : "0"},
        {"langs", langs ? langs : ""},
        {"state", state},
        {"position", s_pos},
        {"ahead", s_ahead},
        {"waiting", s_waiting},
        {"eta", s_eta},
        {"eta_text", eta},
        {"retry_ms", s_retry},
        {"refresh", refresh},
        {"target_url", target},
        {"token_in_query", v->token_in_query ? "1" : "0"},
        {"reason", v->reason ? v->reason : ""},
        {"error", v->error ? v->error : ""},
        {"status_text", status},
        {"heading", heading},
        {"position_text", g_pos},
        {"ahead_text", g_ahead},
        {"waiting_text", g_waiting},
        {"held", held ? "1" : "0"},
        {"stock_left", s_stock},
        {"waiting_for", on_stock ? "stock" : ""},
        {"shop_url", shop},
        {"odds", odds},
        {"notice", notice},
        {"has_notice", notice[0] ? "1" : "0"},
        {"group", group},
        {"group_text", group_text},
        {"has_groups", v->has_groups ? "1" : "0"},
        {"updated", updated},
        {"now_ms", s_now},
        {"opens_at", s_opens},
        {"opens_at_iso", opens_iso},
        {"opens_at_utc", opens_utc},
        {"countdown", countdown},
        {"captcha_provider", v->captcha_provider ? v->captcha_provider : ""},
        {"captcha_site_key", v->captcha_site_key ? v->captcha_site_key : ""},
        {"captcha_script", v->captcha_script ? v->captcha_script : ""},
    };
    render_t r = {vars, sizeof(vars) / sizeof(vars[0]), i18n, lang, raw, raw_len};
    html = render(v->web, "queue.html", &r, len);
    json_decref(own);
    return html;
}

char *wr_page_render_dashboard(const wr_webdir_t *web, size_t *len)
{
    if (!len)
        return NULL;
    render_t r = {NULL, 0, NULL, "en", NULL, 0};
    return render(web, "dashboard.html", &r, len);
}

/* ---------- languages ---------- */

/* The languages the page speaks: --web-dir's merged i18n.json's, else the
 * embedded fourteen. */
static const char *const *offered(const wr_webdir_t *web)
{
    const char *const *l = wr_webdir_langs(web);
    return l && l[0] ? l : wr_page_langs;
}

const char *wr_page_lang(const wr_webdir_t *web, const char *accept_language, const char *fallback)
{
    return wr_lang_pick(offered(web), accept_language, fallback);
}

const char *wr_page_lang_tag(const wr_webdir_t *web, const char *tag)
{
    return tag ? wr_lang_match(offered(web), tag, strnlen(tag, WR_LANG_TAG_MAX + 1)) : NULL;
}

/* ---------- static assets ---------- */

static const struct {
    const char *ext;
    const char *type;
} types[] = {
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".json", "application/json; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".webp", "image/webp"},
    {".woff2", "font/woff2"},
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
};

const unsigned char *wr_page_asset(const wr_webdir_t *web, const char *name, size_t *len,
                                   const char **content_type)
{
    if (!name || !len || !content_type)
        return NULL;
    size_t n = strnlen(name, NAME_MAX_LEN + 1);
    if (n == 0 || n > NAME_MAX_LEN || name[0] == '.')
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!isalnum(c) && c != '.' && c != '-' && c != '_')
            return NULL;
    }
    if (strstr(name, ".."))
        return NULL;
    const char *dot = strrchr(name, '.');
    const char *type = NULL;
    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(dot, types[i].ext) == 0)
            type = types[i].type;
    if (!type) /* templates (.html) and unknown kinds are not assets */
        return NULL;
    const unsigned char *data = wr_webdir_file(web, name, len);
    if (data)
        *content_type = type;
    return data;
}
