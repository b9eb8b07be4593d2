/*
 * queue.js - the queue page (GET /q/{queue}).
 *
 * The server has already joined the user and rendered the first state into
 * data-* attributes of #app (and into the text, for people without
 * JavaScript). From there this script polls GET entries/me exactly at the
 * server's retryAfterMs, updates the page in place (the status sentence is
 * an aria-live region), and:
 *   - admitted: goes to data-target-url, which the server has set to the
 *     ?return= URL when the queue allows it, else to targetUrl (or, without
 *     one, shows "you're in" and the token's expiry, watching it until it is
 *     used or expires). The server's answer has set the pass as the
 *     HttpOnly cookie wr_token_{queue}; with data-token-in-query="1" and a
 *     target on another origin the token also goes as ?wr_token= (before
 *     the fragment, after the existing query: addParam, as origin.c's
 *     wr_origin_add_param);
 *   - passthrough: goes to the targetUrl at once;
 *   - prequeue (before the queue's opensAt): shows a countdown to the
 *     opening and the opening time in the person's local time, ticking
 *     every second; the person's clock is corrected by the server's
 *     (data-server-now at render, the Date header of each answer when it
 *     differs by more than 1.5 s). Polls stay at the server's retryAfterMs,
 *     which lands in the first second after the opening, where the answer
 *     turns the page into the position view;
 *   - 429 / 503 / network error: says so and retries the same request after
 *     Retry-After plus a random 0-1 s of its own (jitter(): the pages an
 *     outage turned away do not all come back in the same instant, case
 *     K13); the place in line is kept by the server (joining again is
 *     idempotent);
 *   - error (any other error of GET /q/{queue}, data-error the API's code):
 *     says so; joins again after data-retry-ms only when the server gave a
 *     Retry-After;
 *   - 404 NOT_IN_QUEUE while waiting: joins again;
 *   - 403 INVITE_REQUIRED: says why (data-reason on the first render) and
 *     stops. Joins carry the page's ?invite= as Authorization: Bearer; the
 *     invite is kept for the tab (sessionStorage), so a reload of the
 *     cleaned address (below) that the server refuses as "missing" joins
 *     with it again;
 *   - priority groups (1.3): a waiting person in a group (data-group, the
 *     answer's "group") is told which presale line they are in and that
 *     their position counts that line only; a group not admitted from yet
 *     has no ETA ("not known yet"). On a queue with groups
 *     (data-groups="1") the code form (#code-form) shows in the standard
 *     line, its pre-queue and after leaving: its code joins as
 *     {"code":"..."} (white space dropped; the server reads any spelling),
 *     leaving the standard line first after a confirm() (a person in line
 *     keeps their line whatever code they send). A 403 CODE_INVALID shows
 *     the state "code": the reason in plain words (unknown, usedUp,
 *     revoked, expired), the form to try again and a link (#standard) to
 *     join the standard line instead. Without JavaScript the form is a GET
 *     of /q/{queue}?code=, which the server reads;
 *   - ?code= and ?invite= are dropped from the address bar once read
 *     (history.replaceState; the server sends Referrer-Policy: no-referrer
 *     as well), so they do not stay in the history or a shared link.
 *   - challenge (the queue asks for a solved join challenge, and the person
 *     is not in line): fetches one, solves it in a Web Worker
 *     (challenge.js) while the status says it is checking the browser,
 *     with a progress bar (#check-progress), then joins with the solution; a 403
 *     CHALLENGE_REQUIRED to any join (a NOT_IN_QUEUE poll joins again)
 *     solves the fresh challenge it carries and joins again
 *     (solveChallenge: the one hook, kept apart from the rest);
 *   - captcha (a queue with a captcha: data-captcha-provider, -site-key,
 *     -script; 1.2): the challenge state shows the provider's widget
 *     (captcha.js) with an accessible status, and its response joins
 *     ({"captchaResponse"}); a 403 CHALLENGE_REQUIRED says what is next:
 *     captchaMissing / captchaInvalid show the widget again,
 *     captchaUnavailable with a challenge solves that fallback proof of
 *     work and joins with it alone (without one: tries again later), a
 *     proof-of-work reason (challengeBits as well) solves it and joins
 *     with both (the widget's response was not spent: the server checks
 *     the proof of work first, and remembers for 300 s a response the
 *     provider accepted, so "used" or a 429 keeps it too);
 *   - waiting with degraded:true (the store is unreachable; no position):
 *     says the line is reconnecting and keeps asking at retryAfterMs; an
 *     admission with failOpen:true goes on like any admission.
 *   - waiting with held:true (1.2: the person's turn came while they were
 *     away): "you stepped away; your place was kept", and no numbers
 *     (not "position 1" beside a line of 0);
 *   - waiting with waitingFor "stock" (1.3: stock 0, passes live): no ETA
 *     but "when an unused pass comes back";
 *   - waiting: the position is said once (the big number, an aria-live
 *     region; the status says to keep the page open);
 *   - waiting with stockLeft (1.2, a queue with a stock): the odds, "about
 *     300 left; you are number 5,200" (every number the page shows is
 *     formatted for its language: fmt());
 *   - closed (1.2, reason "closed" or "soldOut"): "the sale has ended" or
 *     "sold out" (once: the heading; the status says what happens next,
 *     with a link back to the shop, shopUrl()), and from then on only a
 *     slow re-check: the answer's
 *     Retry-After (whole seconds; a retryAfterMs in the body wins), never
 *     more than RECHECK_MS (60 s) apart and never less than 1 s
 *     (recheckMs()), so a reopened sale or a restock reaches a page
 *     left open; a poll that is told NOT_IN_QUEUE joins (a person who came
 *     while it was closed has no place), which answers closed again or a
 *     place in line;
 *   - notice (1.2, any answer may carry the operator's message): shown as
 *     text (textContent, never HTML) in its own aria-live region; an answer
 *     without one clears it (error answers leave it as it was). Requests
 *     name the page's language (Accept-Language), so a notice by language
 *     (1.3) answers in the language the page shows.
 * The first position seen is kept in sessionStorage (per tab) as the start
 * of the progress bar; the language choice in localStorage.
 *
 * Languages: every language of the server's i18n.json (a --web-dir's
 * merged in), listed in data-langs; data-i18n holds English and the first
 * render's language, the server's pick (?lang=, Accept-Language, else the
 * queue's page.lang); the select #lang-select switches (fetching
 * /static/i18n.json for another language), and the choice is kept; a
 * language a --web-dir adds gets an option named by Intl.DisplayNames. A
 * right-to-left language (rtl(): Arabic, Hebrew, Persian...) turns the
 * whole page right to left (dir="rtl"); the operator's texts (brand,
 * title, notice) keep their own direction (dir="auto" in the template).
 * Numbers and times are written by Intl in the language's locale.
 *
 * Brand: data-accent and its inks (the server computed them so text on the
 * accent reads at 4.5:1) become CSS variables of the page; data-title and
 * data-brand name the tab.
 *
 * Preview (data-preview="1", GET /q/{queue}?preview=STATE): the state as
 * rendered, with its sample numbers; the script asks the API nothing and
 * goes nowhere.
 *
 * A background tab: the document title carries the position (or the
 * countdown) and says when it is the person's turn; a button asks for
 * notification permission, and once granted an admission in a hidden tab
 * shows a notification. A tab that becomes visible again asks at once
 * (browsers slow down timers of hidden tabs).
 */
(function () {
  'use strict';

  var app = document.getElementById('app');
  if (!app) return;
  var d = app.dataset;
  var queue = d.queue;
  var dict = {};
  try { dict = JSON.parse(d.i18n || '{}'); } catch (e) { dict = {}; }
  var langs = (d.langs || '').split(' ').filter(Boolean);
  if (!langs.length) { /* a template without data-langs: its select's options */
    var opts = document.querySelectorAll('#lang-select option');
    for (var oi = 0; oi < opts.length; oi++) langs.push(opts[oi].value);
    if (!langs.length) langs = Object.keys(dict);
  }
  var target = d.targetUrl || '';
  var tokenInQuery = d.tokenInQuery === '1';
  var params = null;
  try { params = new URLSearchParams(window.location.search); } catch (e) { params = null; }
  var inviteKey = 'wr_invite_' + queue;
  var invite = params ? params.get('invite') : null;
  if (invite && !/^[A-Za-z0-9._-]+$/.test(invite)) invite = null;
  if (invite) {
    try { sessionStorage.setItem(inviteKey, invite); } catch (e) { /* private mode */ }
  } else {
    try { invite = sessionStorage.getItem(inviteKey); } catch (e) { invite = null; }
    if (invite && !/^[A-Za-z0-9._-]+$/.test(invite)) invite = null;
  }
  var urlCode = params ? params.get('code') : null; /* the server joined with it */
  cleanUrl();
  var base = '/v1/queues/' + encodeURIComponent(queue) + '/entries';
  var firstKey = 'wr_first_' + queue;
  var RECHECK_MS = 60000; /* closed / sold out: the slowest re-check */
  var noticeEl = document.getElementById('notice');
  /* the queue's CAPTCHA widget (captcha.js); a 403 may name it too */
  var captcha = d.captchaProvider && d.captchaSiteKey && d.captchaScript
    ? { provider: d.captchaProvider, siteKey: d.captchaSiteKey, script: d.captchaScript } : null;

  var S = {
    state: d.state,
    position: num(d.position),
    waiting: num(d.waiting),
    eta: num(d.eta),
    retryMs: num(d.retryMs) || 2000,
    updated: null,
    alert: null,        /* null | 'full' | 'unavailable' | 'offline' */
    alertSeconds: 0,
    expiresAt: 0,
    token: '',
    reason: d.reason || '',
    held: d.held === '1',
    stockLeft: d.stockLeft === undefined || d.stockLeft === '' ? null : num(d.stockLeft),
    waitingFor: d.waitingFor || '', /* 'stock': admission waits on stock (1.3) */
    notice: noticeEl ? noticeEl.textContent : '',
    tokenGone: false,
    failures: 0,
    opensAt: num(d.opensAt),
    skew: d.serverNow ? num(d.serverNow) - Date.now() : 0, /* server clock - ours, ms */
    lastRequest: Date.now(),
    solution: null,     /* {challenge, nonce}: sent with the next join */
    checking: -1,       /* challenge: progress 0..99 while solving, -1 = not solving */
    captchaToken: null, /* the widget's response: sent with the next join */
    captchaShown: false, /* challenge: the widget is on the page */
    fallback: false,    /* solving the fallback challenge of a silent CAPTCHA provider */
    group: d.group || '', /* the person's priority group, '' = the standard line (1.3) */
    groups: d.groups === '1', /* the queue has groups: the code form is offered */
    code: null          /* a presale code: sent with the next join */
  };
  var preview = d.preview === '1';
  var lang = pickLang();
  var timer = null;
  var ticker = null; /* the countdown's one-second timer */
  var gen = 0; /* only the answer to the latest request counts */

  function num(v) {
    var n = parseInt(v, 10);
    return isNaN(n) ? 0 : n;
  }

  /* ?code= and ?invite= leave the address bar once read (API 1.3); the
   * rest of the query (lang, return) stays */
  function cleanUrl() {
    if (!params || (!params.has('code') && !params.has('invite'))) return;
    params.delete('code');
    params.delete('invite');
    var qs = params.toString();
    try {
      history.replaceState(history.state, '', window.location.pathname + (qs ? '?' + qs : '') + window.location.hash);
    } catch (e) { /* the page works on */ }
  }

  /* the languages there are (data-langs); dict holds English and the
   * first render's until the person switches (then /static/i18n.json) */
  function known(l) { return typeof l === 'string' && l !== '' && langs.indexOf(l) >= 0; }

  function useLang(l) {
    lang = l;
    try { localStorage.setItem('wr_lang', l); } catch (e) { /* ignore */ }
    if (dict[l]) { render(); return; }
    fetch('/static/i18n.json', { credentials: 'same-origin' }).then(function (r) { return r.json(); }).then(function (all) {
      if (all && typeof all === 'object') dict = all;
      render();
    }, function () { render(); /* English meanwhile (t() falls back) */ });
  }

  function pickLang() {
    var saved = null;
    try { saved = localStorage.getItem('wr_lang'); } catch (e) { saved = null; }
    if (known(saved) && dict[saved]) return saved;
    if (known(saved)) setTimeout(function () { useLang(saved); }, 0);
    return known(d.lang) ? d.lang : 'en';
  }

  /* Intl's locale of a page language */
  var LOCALES = { en: 'en-US', ko: 'ko-KR', ja: 'ja-JP', 'zh-Hans': 'zh-CN', 'zh-Hant': 'zh-TW',
    es: 'es-ES', fr: 'fr-FR', de: 'de-DE', pt: 'pt-BR', it: 'it-IT', vi: 'vi-VN', th: 'th-TH',
    id: 'id-ID', ar: 'ar' };

  /* a count in the person's locale ("1,234", "1.234", "١٬٢٣٤") */
  function fmt(n) {
    try { return new Intl.NumberFormat(locale()).format(n); } catch (e) { return String(n); }
  }

  function t(key, params) {
    var table = dict[lang] || dict.en || {};
    var s = table[key];
    if (typeof s !== 'string') s = (dict.en && dict.en[key]) || key;
    return s.replace(/\{(\w+)\}/g, function (m, name) {
      return params && params[name] !== undefined ? String(params[name]) : m;
    });
  }

  function targetOk(u) {
    return /^https?:\/\/./i.test(u) || /^\/(?![\/\\])/.test(u) || u === '/';
  }

  function etaText(eta) {
    if (S.waitingFor === 'stock') return t('eta_stock');
    if (eta === null || eta === undefined || eta < 0) return t(S.group ? 'eta_not_yet' : 'eta_unknown');
    if (eta < 60) return t('eta_seconds', { n: fmt(eta) });
    return t('eta_minutes', { n: fmt(Math.ceil(eta / 60)) });
  }

  function locale() { return LOCALES[lang] || lang; }

  /* right to left, as page.c's wr_lang_rtl: by language or script */
  function rtl(l) {
    return /^(ar|he|iw|fa|ur|yi|ji|ps|sd|ckb|dv|ug|syr|arc)(-|$)/i.test(l) ||
      /-(arab|hebr|syrc|thaa|nkoo|adlm)(-|$)/i.test(l);
  }

  /* the way back to the shop (closed, sold out), as page.c's: the
   * target's origin, or "/" for a target on this host */
  function shopUrl() {
    if (/^\/(?![\/\\])/.test(target) || target === '/') return '/';
    try { return targetOk(target) ? new URL(target).origin + '/' : ''; } catch (e) { return ''; }
  }

  /* closed / sold out: the next check, from the answer's retryAfterMs */
  function recheckMs(ms) {
    return ms > 0 ? Math.min(RECHECK_MS, Math.max(1000, ms)) : RECHECK_MS;
  }

  /* ms left until the opening, by the server's clock */
  function leftMs() { return S.opensAt - (Date.now() + S.skew); }

  /* as page.c's countdown_text: M:SS, H:MM:SS, then days */
  function countdownText(ms) {
    var s = ms > 0 ? Math.ceil(ms / 1000) : 0;
    var dd = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60, sec = s % 60;
    var two = function (x) { return (x < 10 ? '0' : '') + x; };
    var hms = dd > 0 || h > 0 ? h + ':' + two(m) + ':' + two(sec) : m + ':' + two(sec);
    return dd > 0 ? t('countdown_days', { d: dd, hms: hms }) : hms;
  }

  /* the opening in the person's time zone, e.g. "Mon, Nov 30, 09:30:00 PM GMT+9" */
  function openingText() {
    if (!S.opensAt) return '';
    var at = new Date(S.opensAt);
    try {
      return at.toLocaleString(locale(), { weekday: 'short', month: 'short', day: 'numeric',
        hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
    } catch (e) {
      return at.toString();
    }
  }

  function setText(id, text) {
    var el = document.getElementById(id);
    if (el && el.textContent !== text) el.textContent = text;
  }

  function firstPosition(pos) {
    var first = 0;
    try { first = num(sessionStorage.getItem(firstKey)); } catch (e) { first = 0; }
    if (!first || pos > first) {
      first = pos;
      try { sessionStorage.setItem(firstKey, String(first)); } catch (e) { /* private mode */ }
    }
    return first;
  }

  function statusText() {
    if (S.alert === 'full') return t('status_full', { s: S.alertSeconds });
    if (S.alert === 'unavailable') return t('status_unavailable', { s: S.alertSeconds });
    if (S.alert === 'offline') return t('status_offline', { s: S.alertSeconds });
    switch (S.state) {
    case 'waiting':
      if (S.held) return t(S.waitingFor === 'stock' ? 'status_held_stock' : 'status_held');
      return t('status_waiting', { position: fmt(S.position), ahead: fmt(Math.max(0, S.position - 1)) });
    case 'closed':
      return t(S.reason === 'soldOut' ? 'status_soldout' : 'status_closed');
    case 'admitted':
      if (targetOk(target)) return t('status_admitted');
      if (S.tokenGone) return t('token_gone');
      return t('status_admitted_here');
    case 'passthrough':
      return t(targetOk(target) ? 'status_passthrough' : 'status_passthrough_here');
    case 'prequeue': return t('status_prequeue', { time: openingText() });
    case 'full': return t('status_full', { s: S.alertSeconds || 5 });
    case 'unavailable': return t('status_unavailable', { s: S.alertSeconds || 2 });
    case 'notfound': return t('status_notfound');
    case 'error': return t('status_error', { code: d.error || '' });
    case 'degraded': return t('status_degraded');
    case 'challenge':
      if (S.checking >= 0) return t('status_checking', { p: S.checking }); /* the bar shows how far */
      return S.captchaShown ? t('status_captcha') : t('status_challenge');
    case 'left': return t('status_left');
    case 'code':
      return t(S.reason === 'usedUp' ? 'status_code_used_up' : S.reason === 'revoked' ? 'status_code_revoked'
        : S.reason === 'expired' ? 'status_code_expired' : 'status_code_unknown');
    case 'invite':
      if (!S.reason || S.reason === 'missing') return t('status_invite');
      return t(S.reason === 'expired' ? 'status_invite_expired'
        : S.reason === 'notYetValid' ? 'status_invite_not_yet' : 'status_invite_invalid');
    }
    return '';
  }

  function render() {
    document.documentElement.lang = lang;
    document.documentElement.dir = rtl(lang) ? 'rtl' : 'ltr';
    document.body.dataset.state = S.state;
    document.body.dataset.alert = S.alert || '';
    document.body.dataset.reason = S.state === 'closed' || S.state === 'code' ? S.reason : '';
    document.body.dataset.held = S.state === 'waiting' && S.held ? '1' : '0';
    document.body.dataset.group = S.state === 'waiting' ? S.group : '';
    document.body.dataset.groups = S.groups ? '1' : '0';
    document.body.dataset.notice = S.notice ? '1' : '0';
    document.body.dataset.captcha = S.state === 'challenge' && S.captchaShown ? '1' : '0';
    document.body.dataset.checking = S.state === 'challenge' && S.checking >= 0 ? '1' : '0';
    var cp = document.getElementById('check-progress');
    if (cp) { /* indeterminate until the worker says how far */
      if (S.checking > 0) cp.value = S.checking;
      else cp.removeAttribute('value');
    }
    var shop = document.getElementById('shop');
    if (shop && S.state === 'closed' && shop.getAttribute('href') !== shopUrl()) shop.setAttribute('href', shopUrl());
    if (noticeEl && noticeEl.textContent !== S.notice) noticeEl.textContent = S.notice;
    var nodes = document.querySelectorAll('[data-t]');
    for (var i = 0; i < nodes.length; i++) {
      var text = t(nodes[i].getAttribute('data-t'));
      if (nodes[i].textContent !== text) nodes[i].textContent = text;
    }
    var soldOut = S.state === 'closed' && S.reason === 'soldOut';
    setText('heading', t(S.state === 'waiting' ? (S.held ? 'heading_held' : 'heading')
      : S.state === 'prequeue' ? 'heading_prequeue'
        : S.state === 'closed' ? (soldOut ? 'heading_soldout' : 'heading_closed')
          : S.state === 'admitted' && !S.tokenGone ? 'heading_admitted'
            : S.state === 'passthrough' ? 'heading_passthrough'
              : S.state === 'code' ? 'heading_code' : 'title'));
    var title = (d.title || t('title')) + ' - ' + (d.brand || queue);
    if (S.state === 'waiting' && !S.held) title = t('title_position', { position: fmt(S.position), title: title });
    else if (S.state === 'closed') title = t(soldOut ? 'title_soldout' : 'title_closed', { title: title });
    else if (S.state === 'prequeue') title = t('title_prequeue', { countdown: countdownText(leftMs()), title: title });
    else if (S.state === 'admitted' && !S.tokenGone) title = t('title_turn', { title: title });
    if (document.title !== title) document.title = title;
    var sel = document.getElementById('lang-select');
    if (sel && sel.value !== lang) sel.value = lang;

    if (S.state === 'waiting') {
      /* the position is said once: the big number (aria-live), not again
       * as "people ahead" (position - 1) */
      setText('position', fmt(S.position));
      setText('waiting', fmt(S.waiting));
      setText('odds', S.stockLeft === null ? ''
        : t(S.stockLeft > 0 ? 'odds' : 'odds_none', { stock: fmt(S.stockLeft), position: fmt(S.position) }));
      setText('eta', etaText(S.eta));
      /* the name in its own direction (FSI ... PDI): Latin in Arabic */
      setText('group-line', S.group ? t('group_line', { group: '\u2068' + S.group + '\u2069' }) : '');
      var first = firstPosition(S.position);
      var bar = document.getElementById('progress');
      if (bar) bar.value = first > 0 ? Math.round((first - S.position) * 100 / first) : 0;
    }
    if (S.state === 'prequeue') {
      var left = leftMs();
      setText('countdown', left > 0 ? countdownText(left) : t('opening_now'));
      setText('opens-at', openingText());
    }
    var asking = S.state === 'waiting' || S.state === 'prequeue';
    var perm = notifyPermission();
    var nb = document.getElementById('notify');
    /* Web Push (push.js): the button subscribes while push is on and not yet */
    var W = window.wrPush || {};
    var pushable = asking && W.available && !W.subscribed;
    if (nb) nb.hidden = !(asking && (perm === 'default' || pushable));
    setText('notify-status', !asking ? '' : W.subscribed ? t('push_on') : W.failed ? t('push_failed')
      : W.iosHint && !W.available ? t('push_ios_hint') : perm === 'granted' && !pushable ? t('notify_on') : '');
    if (S.updated) {
      setText('updated', S.updated.toLocaleTimeString(locale()));
      setText('checked', S.updated.toLocaleTimeString(locale()));
    }
    var ts = '';
    if (S.state === 'admitted' && !targetOk(target) && !S.tokenGone && S.expiresAt)
      ts = t('token_valid', { time: new Date(S.expiresAt).toLocaleTimeString(locale()) });
    setText('token-status', ts);
    var cont = document.getElementById('continue');
    if (cont) cont.hidden = !targetOk(target);
    var leave = document.getElementById('leave');
    if (leave) leave.hidden = S.state !== 'waiting';
    setText('status', statusText());
  }

  /* ---------- background tab: title, notification, countdown ---------- */

  function notifyPermission() {
    try { return 'Notification' in window ? Notification.permission : 'unsupported'; } catch (e) { return 'unsupported'; }
  }

  /* It is the person's turn: a notification when the tab is hidden and the
   * person allowed them (the title already says so, render). */
  function notifyTurn() {
    if (notifyPermission() !== 'granted' || !document.hidden) return;
    try {
      var n = new Notification(t('notify_title'), { body: t('notify_body', { queue: queue }), tag: 'wr-' + queue });
      n.onclick = function () { try { window.focus(); } catch (e) { /* ignore */ } n.close(); };
    } catch (e) { /* some browsers only notify from a service worker */ }
  }

  /* Re-renders the countdown on each whole second until the state changes. */
  function tick() {
    clearTimeout(ticker);
    if (S.state !== 'prequeue') return;
    render();
    var left = leftMs();
    var next = left > 0 ? (left % 1000 || 1000) + 5 : 1000;
    ticker = setTimeout(tick, next);
  }

  function schedule(ms, what) {
    clearTimeout(timer);
    if (preview) return; /* a preview asks nothing */
    timer = setTimeout(function () { request(what); }, Math.max(0, ms));
  }

  /* url with name=value added before the fragment (value needs no escaping). */
  function addParam(url, name, value) {
    var hash = url.indexOf('#');
    var base = hash < 0 ? url : url.slice(0, hash);
    var frag = hash < 0 ? '' : url.slice(hash);
    var sep = base.indexOf('?') < 0 ? '?' : (/[?&]$/.test(base) ? '' : '&');
    return base + sep + name + '=' + value + frag;
  }

  function otherOrigin(u) {
    try { return new URL(u, window.location.href).origin !== window.location.origin; } catch (e) { return false; }
  }

  function go() {
    clearTimeout(timer);
    render();
    if (!targetOk(target) || preview) return;
    var dest = target;
    if (S.state === 'admitted' && tokenInQuery && S.token && otherOrigin(target))
      dest = addParam(target, 'wr_token', S.token);
    window.location.replace(dest);
  }

  /* res: the answer, for its Retry-After (the closed answer's re-check) */
  function onEntry(body, res) {
    S.alert = null;
    S.failures = 0;
    S.updated = new Date();
    S.notice = typeof body.notice === 'string' ? body.notice : '';
    if (body.status !== 'prequeue') clearTimeout(ticker);
    if (body.status === 'prequeue') {
      S.state = 'prequeue';
      if (num(body.opensAt) > 0) S.opensAt = num(body.opensAt);
      S.retryMs = num(body.retryAfterMs) || 5000;
      tick();
      schedule(S.retryMs, 'poll');
    } else if (body.status === 'waiting' && body.degraded === true) {
      /* degraded mode: no place to show; keep asking */
      S.state = 'degraded';
      S.retryMs = num(body.retryAfterMs) || 2000;
      render();
      schedule(S.retryMs, 'poll');
    } else if (body.status === 'waiting') {
      S.state = 'waiting';
      S.held = body.held === true;
      S.stockLeft = typeof body.stockLeft === 'number' && body.stockLeft >= 0 ? body.stockLeft : null;
      S.waitingFor = body.waitingFor === 'stock' ? 'stock' : '';
      S.group = typeof body.group === 'string' ? body.group : '';
      S.position = num(body.position);
      S.waiting = num(body.waiting);
      S.eta = body.etaSeconds === null || body.etaSeconds === undefined ? -1 : num(body.etaSeconds);
      S.retryMs = num(body.retryAfterMs) || 1000;
      render();
      schedule(S.retryMs, 'poll');
    } else if (body.status === 'admitted') {
      S.state = 'admitted';
      S.expiresAt = num(body.expiresAt);
      if (typeof body.token === 'string' && /^[A-Za-z0-9._-]+$/.test(body.token))
        S.token = body.token; /* the answer has set the cookie (HttpOnly) */
      try { sessionStorage.removeItem(firstKey); } catch (e) { /* ignore */ }
      notifyTurn();
      if (targetOk(target)) {
        go();
      } else {
        render();
        /* no target: keep showing whether the pass is still live */
        schedule(Math.min(5000, Math.max(1000, S.expiresAt - Date.now())), 'poll');
      }
    } else if (body.status === 'passthrough') {
      S.state = 'passthrough';
      go();
    } else if (body.status === 'closed') {
      /* the sale has ended or sold out: only the slow re-check */
      S.state = 'closed';
      S.reason = body.reason === 'soldOut' ? 'soldOut' : 'closed';
      var ra = res ? parseInt(res.headers.get('Retry-After'), 10) : NaN;
      S.retryMs = recheckMs(num(body.retryAfterMs) || (ra > 0 ? ra * 1000 : 0));
      try { sessionStorage.removeItem(firstKey); } catch (e) { /* ignore */ }
      render();
      schedule(S.retryMs, 'poll');
    }
  }

  /* 0-999 ms added to every retry after an error (the server's Retry-After
   * is whole seconds, drawn from 1-3 s for a 503). */
  function jitter() {
    return Math.floor(Math.random() * 1000);
  }

  function retryLater(res, what, kind, fallbackS) {
    var s = res ? parseInt(res.headers.get('Retry-After'), 10) : NaN;
    if (isNaN(s) || s < 1) {
      s = Math.min(30, fallbackS * Math.pow(2, Math.min(S.failures, 4)));
    }
    S.failures++;
    S.alert = kind;
    S.alertSeconds = s;
    if (S.state !== 'waiting' && S.state !== 'admitted' && S.state !== 'prequeue' && S.state !== 'closed')
      S.state = kind === 'full' ? 'full' : 'unavailable'; /* the countdown stays */
    render();
    schedule(s * 1000 + jitter(), what);
  }

  function request(what) {
    if (preview) return;
    if (what === 'captcha') { showCaptcha(); return; }
    if (what !== 'leave' && (S.state === 'left' || S.state === 'notfound' || S.state === 'invite')) return;
    clearTimeout(timer);
    S.lastRequest = Date.now();
    var my = ++gen;
    var opts = {
      method: what === 'join' ? 'POST' : (what === 'leave' ? 'DELETE' : 'GET'),
      credentials: 'same-origin',
      cache: 'no-store',
      /* the page's language, so a notice by language comes in it (1.3) */
      headers: { 'Accept': 'application/json', 'Accept-Language': lang }
    };
    if (what === 'join' && invite) opts.headers.Authorization = 'Bearer ' + invite;
    if (what === 'join' && (S.solution || S.captchaToken || S.code)) {
      var jb = {};
      if (S.solution) { jb.challenge = S.solution.challenge; jb.nonce = S.solution.nonce; }
      if (S.captchaToken) jb.captchaResponse = S.captchaToken;
      if (S.code) jb.code = S.code; /* a presale code (1.3) */
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(jb);
    }
    var url = what === 'join' ? base : base + '/me';
    fetch(url, opts).then(function (res) {
      serverClock(res);
      return res.text().then(function (text) {
        var body = {};
        try { body = text ? JSON.parse(text) : {}; } catch (e) { body = {}; }
        if (my === gen) handle(res, body, what);
      });
    }, function () {
      if (my === gen) retryLater(null, what, 'offline', 2);
    });
  }

  /* The Date header (whole seconds): corrects the clock when ours is off by
   * more than 1.5 s from the server's (a countdown by a wrong clock). */
  function serverClock(res) {
    var at = Date.parse(res.headers.get('Date') || '');
    if (isNaN(at)) return;
    var skew = at + 500 - Date.now();
    if (Math.abs(skew - S.skew) > 1500) S.skew = skew;
  }

  function handle(res, body, what) {
    if (what === 'leave') {
      if (res.status === 204 || res.status === 404) {
        clearTimeout(timer);
        if (S.code) { /* left the standard line for a code's line: join with it */
          S.state = 'joining';
          try { sessionStorage.removeItem(firstKey); } catch (e) { /* ignore */ }
          request('join');
          return;
        }
        S.state = 'left';
        S.alert = null;
        try { sessionStorage.removeItem(firstKey); } catch (e) { /* ignore */ }
        render();
      } else {
        retryLater(res, 'leave', 'unavailable', 2);
      }
      return;
    }
    if (res.status === 200) {
      S.code = null; /* spent, or the person's line answered as it is */
      S.captchaToken = null; /* spent */
      S.captchaShown = false;
      S.fallback = false;
      onEntry(body, res);
    } else if (res.status === 403 && body.error === 'CHALLENGE_REQUIRED' && what === 'join') {
      challengeRequired(res, body);
    } else if (res.status === 403 && body.error === 'CODE_INVALID') {
      /* a presale code refused (1.3): why, and the form to try again */
      clearTimeout(timer);
      S.state = 'code';
      S.reason = /^(unknown|usedUp|revoked|expired)$/.test(body.reason) ? body.reason : 'unknown';
      S.code = null;
      S.alert = null;
      render();
      var ci = document.getElementById('code-input');
      if (ci) { ci.focus(); ci.select(); }
    } else if (res.status === 403 && body.error === 'INVITE_REQUIRED') {
      clearTimeout(timer);
      S.state = 'invite';
      S.reason = typeof body.reason === 'string' ? body.reason : '';
      S.alert = null;
      render();
    } else if (res.status === 404 && body.error === 'QUEUE_NOT_FOUND') {
      clearTimeout(timer);
      S.state = 'notfound';
      S.alert = null;
      render();
    } else if (res.status === 404) {
      if (S.state === 'admitted') {
        /* the pass was used or expired: say so, do not queue again */
        S.tokenGone = true;
        render();
        return;
      }
      if (what === 'join') retryLater(res, what, 'unavailable', 2);
      else request('join'); /* NOT_IN_QUEUE while waiting: join again */
    } else if (res.status === 429) {
      /* a widget response stays: a join the line refuses never spent it,
       * and one the provider accepted is remembered 300 s (API 1.3); past
       * that the server says captchaInvalid and the widget comes back */
      retryLater(res, what, 'full', 5);
    } else {
      retryLater(res, what, 'unavailable', 2);
    }
  }

  /* A join refused 403 CHALLENGE_REQUIRED: the CAPTCHA's reasons, or the
   * proof of work's (solveChallenge). */
  function challengeRequired(res, body) {
    var c = body.captcha;
    if (c && typeof c.siteKey === 'string' && typeof c.scriptUrl === 'string' && /^https?:\/\//.test(c.scriptUrl))
      captcha = { provider: c.provider === 'hcaptcha' ? 'hcaptcha' : 'turnstile', siteKey: c.siteKey, script: c.scriptUrl };
    var r = body.reason;
    if (r === 'captchaUnavailable') {
      /* the provider did not answer: its fallback proof of work, or later */
      S.captchaToken = null;
      if (body.fallback === true && typeof body.challenge === 'string') {
        S.fallback = true;
        S.solution = null;
        solveChallenge(body);
      } else {
        S.captchaShown = false;
        S.state = 'challenge';
        retryLater(res, 'captcha', 'unavailable', 2);
      }
    } else if (r === 'captchaMissing' || r === 'captchaInvalid') {
      /* any proof of work sent was good: it stays for the next join */
      S.captchaToken = null;
      S.fallback = false;
      if (captcha) showCaptcha();
      else retryLater(res, 'join', 'unavailable', 2);
    } else {
      /* the proof of work's reasons: solve it; a widget response that
       * came along was not spent (the server checks the work first) */
      S.solution = null;
      S.fallback = false;
      solveChallenge(body);
    }
  }

  /* ---------- the CAPTCHA widget (captcha.js) ---------- */

  /* Shows the widget (the status says to complete it); its response
   * joins, with a solved proof of work when there is one. */
  function showCaptcha() {
    clearTimeout(timer);
    S.state = 'challenge';
    S.checking = -1;
    S.alert = null;
    S.fallback = false;
    S.captchaShown = true;
    render();
    if (preview) return; /* a preview shows the state, loads nothing */
    var failed = function () {
      S.captchaShown = false;
      retryLater(null, 'captcha', 'unavailable', 2);
    };
    if (!captcha || !window.wrCaptcha) { failed(); return; }
    window.wrCaptcha.show(document.getElementById('captcha'), captcha, function (response) {
      S.captchaToken = response;
      request('join');
    }, failed);
  }

  /* ---------- join challenges (challenge.js) ---------- */

  /* Solves challenge c ({challenge, bits} from GET .../challenge or a 403;
   * null: fetch one) in a Web Worker, showing progress, then joins with the
   * solution. A failure (no Worker, a network error) retries after a while. */
  function solveChallenge(c) {
    clearTimeout(timer);
    S.state = 'challenge';
    S.checking = 0;
    S.alert = null;
    render();
    if (preview) return; /* a preview shows the state, solves nothing */
    var failed = function () {
      S.checking = -1;
      retryLater(null, 'join', 'unavailable', 2);
    };
    if (!c || typeof c.challenge !== 'string') {
      fetch('/v1/queues/' + encodeURIComponent(queue) + '/challenge',
        { credentials: 'same-origin', cache: 'no-store', headers: { 'Accept': 'application/json' } })
        .then(function (res) { return res.ok ? res.json() : null; })
        .then(function (b) { if (b && typeof b.challenge === 'string') solveChallenge(b); else failed(); }, failed);
      return;
    }
    var w;
    try { w = new Worker('/static/challenge.js'); } catch (e) { failed(); return; }
    w.onmessage = function (ev) {
      var m = ev.data || {};
      if (typeof m.progress === 'number') {
        S.checking = Math.floor(m.progress / 10) * 10; /* the live region speaks in tens */
        render();
      } else if (typeof m.nonce === 'string') {
        w.terminate();
        S.checking = 100;
        render();
        S.solution = { challenge: c.challenge, nonce: m.nonce };
        /* a queue with a captcha too: its widget's response goes along
         * (not for the fallback of a silent provider) */
        if (captcha && !S.captchaToken && !S.fallback) showCaptcha();
        else request('join');
      } else {
        w.terminate();
        failed();
      }
    };
    w.onerror = function () { w.terminate(); failed(); };
    w.postMessage({ challenge: c.challenge, bits: c.bits | 0 });
  }

  /* ---------- controls ---------- */

  /* the brand's accent: CSS variables (the server computed the inks) */
  (function () {
    var root = document.documentElement.style;
    var vars = { '--accent': d.accent, '--accent-ink': d.accentInk,
      '--accent-on-light': d.accentOnLight, '--accent-on-dark': d.accentOnDark };
    for (var k in vars)
      if (/^#[0-9a-fA-F]{6}$/.test(vars[k] || '')) root.setProperty(k, vars[k]);
  })();

  var sw = document.getElementById('lang-switch');
  var langSelect = document.getElementById('lang-select');
  if (sw && langSelect) {
    /* only the languages the JSON has; a shop's i18n.json may add more:
     * each gets an option named in its own language (Intl.DisplayNames) */
    for (var o = langSelect.options.length - 1; o >= 0; o--)
      if (!known(langSelect.options[o].value)) langSelect.remove(o);
    for (var li = 0; li < langs.length; li++) {
      var code = langs[li], have = false;
      for (var oj = 0; oj < langSelect.options.length; oj++)
        if (langSelect.options[oj].value === code) have = true;
      if (have) continue;
      var opt = document.createElement('option');
      var name = code;
      try { name = new Intl.DisplayNames([code], { type: 'language' }).of(code) || code; } catch (e) { name = code; }
      opt.value = code;
      opt.lang = code;
      if (rtl(code)) opt.dir = 'rtl';
      opt.textContent = name.charAt(0).toLocaleUpperCase(code) + name.slice(1);
      langSelect.appendChild(opt);
    }
    sw.hidden = false;
    langSelect.addEventListener('change', function () {
      var l = langSelect.value;
      if (known(l)) useLang(l);
    });
  }
  var leaveBtn = document.getElementById('leave');
  if (leaveBtn) {
    leaveBtn.addEventListener('click', function () {
      if (!window.confirm(t('leave_confirm'))) return;
      request('leave');
    });
  }
  var notifyBtn = document.getElementById('notify');
  if (notifyBtn) {
    notifyBtn.addEventListener('click', function () {
      var W = window.wrPush;
      if (W && W.available && !W.subscribed) {
        W.subscribe(lang).then(render, render);
        return;
      }
      try {
        var p = Notification.requestPermission(render);
        if (p && typeof p.then === 'function') p.then(render, render);
      } catch (e) { render(); }
    });
  }
  document.addEventListener('wr-push', function () { render(); });
  /* Hidden tabs get their timers slowed (to once a minute in Chrome after a
   * while): back in view, ask at once rather than at the slowed timer. */
  document.addEventListener('visibilitychange', function () {
    if (document.hidden) return;
    if ((S.state === 'waiting' || S.state === 'prequeue' || S.state === 'degraded' || S.state === 'closed') && !S.alert &&
        Date.now() - S.lastRequest > 1000)
      request('poll');
    if (S.state === 'prequeue') tick();
  });
  var rejoinBtn = document.getElementById('rejoin');
  if (rejoinBtn) {
    rejoinBtn.addEventListener('click', function () {
      S.code = null;
      S.state = 'joining';
      request('join');
    });
  }
  /* a presale code (1.3): joins with it; from the standard line (or its
   * pre-queue), after a confirm(), by leaving it first */
  var codeForm = document.getElementById('code-form');
  var codeInput = document.getElementById('code-input');
  if (codeForm && codeInput) {
    if (urlCode && S.state === 'code') codeInput.value = urlCode; /* to correct it */
    codeForm.addEventListener('submit', function (ev) {
      ev.preventDefault();
      if (preview) return;
      var code = codeInput.value.replace(/\s+/g, '');
      if (!code) { codeInput.focus(); return; }
      var inLine = (S.state === 'waiting' || S.state === 'prequeue') && !S.group;
      if (inLine && !window.confirm(t('code_confirm'))) return;
      S.code = code;
      S.alert = null;
      if (inLine) {
        request('leave');
      } else {
        S.state = 'joining';
        request('join');
      }
    });
  }
  var standardLink = document.getElementById('standard');
  if (standardLink) {
    standardLink.addEventListener('click', function (ev) {
      ev.preventDefault();
      if (preview) return;
      S.code = null;
      S.state = 'joining';
      request('join');
    });
  }

  /* ---------- start from the server-rendered state ---------- */

  S.updated = new Date();
  switch (S.state) {
  case 'waiting':
    render();
    schedule(S.retryMs, 'poll');
    break;
  case 'prequeue':
    tick();
    schedule(S.retryMs, 'poll');
    break;
  case 'admitted':
    render();
    request('poll'); /* fetch the token itself (JSON) */
    break;
  case 'passthrough':
    go();
    break;
  case 'full':
    S.alertSeconds = Math.ceil(S.retryMs / 1000);
    render();
    schedule(S.retryMs + jitter(), 'join');
    break;
  case 'unavailable':
    S.alertSeconds = Math.ceil(S.retryMs / 1000);
    render();
    schedule(S.retryMs + jitter(), 'join');
    break;
  case 'error':
    render();
    if (num(d.retryMs) > 0) schedule(num(d.retryMs) + jitter(), 'join');
    break;
  case 'degraded':
    render();
    schedule(S.retryMs, 'poll');
    break;
  case 'closed':
    S.reason = S.reason === 'soldOut' ? 'soldOut' : 'closed';
    S.retryMs = recheckMs(num(d.retryMs));
    render();
    schedule(S.retryMs, 'poll');
    break;
  case 'challenge':
    if (captcha) showCaptcha(); /* its response joins; a proof of work, if needed, follows */
    else solveChallenge(null);
    break;
  case 'invite':
    /* a reload of the cleaned address: the tab's invite joins again */
    if (invite && !preview && (!S.reason || S.reason === 'missing')) {
      S.state = 'joining';
      request('join');
    } else {
      render();
    }
    break;
  default:
    render();
  }

  /* transitions only from here: the first render (the brand's colours) is
   * in (reading offsetWidth applies the styles), so nothing fades in */
  void document.body.offsetWidth;
  document.body.classList.add('ready');
})();
