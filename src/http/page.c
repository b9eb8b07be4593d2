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
 *   thousands, "5,200", as both languages write them), held ("1" or "0"),
 *   stock_left (stockLeft, "" without a stock), odds ("About 300 left; you
 *   are number 5,200.", "" without a stock), notice (the operator's notice,
 *   "" without one; text, escaped like every value) and has_notice ("1"/"0"),
 *   now_ms (the server's clock at render, epoch ms: the script's countdown
 *   corrects the person's clock by it), opens_at (the opening of a pre-queue,
 *   epoch ms, "" otherwise), opens_at_iso and opens_at_utc (the same in
 *   ISO 8601 and as "YYYY-MM-DD HH:MM:SS UTC" for people without
 *   JavaScript), countdown (time left until the opening, "M:SS", "H:MM:SS"
 *   or "<d> d H:MM:SS" by the i18n string countdown_days),
 *   i18n, and "t:<key>" (the
 *   string <key> of the page's language in web/i18n.json).
 * An unknown name renders as nothing; a "{{" without "}}" is copied as is.
 * i18n is the whole of web/i18n.json (both languages), so the JavaScript can
 * switch language without another request: it reads it from a data-*
 * attribute, where the escaping above makes it attribute-safe.
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "base/embed.h"
#include "core/origin.h"

#define WR_PAGE_MAX      (512 * 1024) /* bytes of one rendered page */
#define NAME_MAX_LEN     64           /* placeholder names and asset names */
#define TEXT_MAX         512          /* one formatted sentence */
#define LANG_ENTRIES_MAX 64           /* Accept-Language entries looked at */
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

/* Renders template web/<file> with r; NULL when missing, too big or no memory. */
static char *render(const char *file, const render_t *r, size_t *len)
{
    char path[NAME_MAX_LEN + 8];
    snprintf(path, sizeof(path), "web/%s", file);
    const wr_embed_file_t *f = wr_embed_find(path);
    if (!f)
        return NULL;
    out_t o = {NULL, 0, false};
    render_pass(&o, (const char *)f->data, f->len, r);
    if (o.over)
        return NULL;
    char *buf = malloc(o.len + 1);
    if (!buf)
        return NULL;
    size_t want = o.len;
    o = (out_t){buf, 0, false};
    render_pass(&o, (const char *)f->data, f->len, r);
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

char *wr_page_render_queue(const wr_page_view_t *v, size_t *len)
{
    static const char *const states[] = {
        "waiting", "prequeue", "admitted", "passthrough", "full",   "unavailable", "notfound",
        "invite",  "degraded", "error",    "challenge",   "closed", NULL};
    if (!v || !len)
        return NULL;
    char *html = NULL;
    json_t *i18n = NULL;
    const char *lang = v->lang && strcmp(v->lang, "ko") == 0 ? "ko" : "en";
    const char *state = v->state && one_of(v->state, states) ? v->state : "unavailable";
    bool waiting = strcmp(state, "waiting") == 0;
    bool prequeue = strcmp(state, "prequeue") == 0;
    bool error = strcmp(state, "error") == 0;
    bool closed = strcmp(state, "closed") == 0;
    bool sold_out = closed && v->reason && strcmp(v->reason, "soldOut") == 0;
    bool held = waiting && v->held;
    const char *target = v->target_url ? v->target_url : "";

    const wr_embed_file_t *raw = wr_embed_find("web/i18n.json");
    if (raw)
        i18n = json_loadb((const char *)raw->data, raw->len, 0, NULL);

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
    if (waiting || prequeue || strcmp(state, "full") == 0 || strcmp(state, "unavailable") == 0 ||
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
        snprintf(key, sizeof(key), "status_held");
    else if (closed)
        snprintf(key, sizeof(key), "%s", sold_out ? "status_soldout" : "status_closed");
    else if (strcmp(state, "admitted") == 0 || strcmp(state, "passthrough") == 0)
        snprintf(key, sizeof(key), "status_%s%s", state, target_ok(target) ? "" : "_here");
    else if (strcmp(state, "invite") == 0)
        snprintf(key, sizeof(key), "%s", invite_key(v->reason));
    else
        snprintf(key, sizeof(key), "status_%s", state);
    fill(status, sizeof(status), tr(i18n, lang, key), names, vals, 6);
    const char *heading = tr(i18n, lang,
                             held       ? "heading_held"
                             : waiting  ? "heading"
                             : prequeue ? "heading_prequeue"
                             : closed   ? (sold_out ? "heading_soldout" : "heading_closed")
                                        : "title");
    const char *notice = v->notice ? v->notice : "";

    char updated[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(updated, sizeof(updated), "%H:%M:%S UTC", &tm);

    const var_t vars[] = {
        {"queue", v->queue ? v->queue : ""},
        {"lang", lang},
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
        {"odds", odds},
        {"notice", notice},
        {"has_notice", notice[0] ? "1" : "0"},
        {"updated", updated},
        {"now_ms", s_now},
        {"opens_at", s_opens},
        {"opens_at_iso", opens_iso},
        {"opens_at_utc", opens_utc},
        {"countdown", countdown},
    };
    render_t r = {vars, sizeof(vars) / sizeof(vars[0]),       i18n,
                  lang, raw ? (const char *)raw->data : NULL, raw ? raw->len : 0};
    html = render("queue.html", &r, len);
    json_decref(i18n);
    return html;
}

char *wr_page_render_dashboard(size_t *len)
{
    if (!len)
        return NULL;
    render_t r = {NULL, 0, NULL, "en", NULL, 0};
    return render("dashboard.html", &r, len);
}

/* ---------- Accept-Language ---------- */

/* Parses an RFC 9110 qvalue ("0", "0.5", "1.000") into thousandths; -1 if bad. */
static int parse_q(const char *s, size_t n)
{
    if (n == 0 || (s[0] != '0' && s[0] != '1'))
        return -1;
    int q = (s[0] - '0') * 1000;
    if (n == 1)
        return q;
    if (s[1] != '.' || n > 5)
        return -1;
    int scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        q += (s[i] - '0') * scale;
    }
    return q > 1000 ? -1 : q;
}

static size_t trim(const char **s, size_t n)
{
    while (n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        n--;
    }
    while (n && ((*s)[n - 1] == ' ' || (*s)[n - 1] == '\t'))
        n--;
    return n;
}

const char *wr_page_lang(const char *accept_language)
{
    if (!accept_language)
        return "en";
    int best_q[2] = {0, 0};            /* ko, en: best q in thousandths */
    int first[2] = {1 << 30, 1 << 30}; /* index of the entry that gave it */
    const char *p = accept_language;
    for (int idx = 0; *p && idx < LANG_ENTRIES_MAX; idx++) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        const char *e = p;
        p = comma ? comma + 1 : p + n;
        /* entry = tag *( ";" param ), the q param gives the weight */
        const char *semi = memchr(e, ';', n);
        const char *tag = e;
        size_t tlen = trim(&tag, semi ? (size_t)(semi - e) : n);
        int q = 1000;
        while (semi) {
            const char *par = semi + 1;
            size_t rest = n - (size_t)(par - e);
            semi = memchr(par, ';', rest);
            size_t plen = trim(&par, semi ? (size_t)(semi - par) : rest);
            if (plen >= 2 && (par[0] == 'q' || par[0] == 'Q') && par[1] == '=') {
                const char *qs = par + 2;
                q = parse_q(qs, trim(&qs, plen - 2));
            }
        }
        if (q <= 0)
            continue;
        size_t prim = 0;
        while (prim < tlen && tag[prim] != '-' && tag[prim] != '_')
            prim++;
        int which = -1;
        if (prim == 2 && strncasecmp(tag, "ko", 2) == 0)
            which = 0;
        else if (prim == 2 && strncasecmp(tag, "en", 2) == 0)
            which = 1;
        if (which >= 0 && q > best_q[which]) {
            best_q[which] = q;
            first[which] = idx;
        }
    }
    if (best_q[0] > best_q[1] || (best_q[0] > 0 && best_q[0] == best_q[1] && first[0] < first[1]))
        return "ko";
    return "en";
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
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
};

const unsigned char *wr_page_asset(const char *name, size_t *len, const char **content_type)
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
    char path[NAME_MAX_LEN + 8];
    snprintf(path, sizeof(path), "web/%s", name);
    const wr_embed_file_t *f = wr_embed_find(path);
    if (!f)
        return NULL;
    *len = f->len;
    *content_type = type;
    return f->data;
}
