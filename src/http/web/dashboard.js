/*
 * dashboard.js - the operator dashboard (GET /admin).
 *
 * Asks for the admin key once per browser session (sessionStorage, sent as
 * Authorization: Bearer). Every second it reads GET /v1/admin/queues, GET
 * /readyz and GET /metrics, and per queue shows the counts, the rates
 * (admitted/s and consumed/s from the change of the totals between two
 * reads) and the time to clear the line (waiting / rate). The charts come
 * from the server's own history, GET /v1/admin/queues/{q}/history (one
 * sample a second, kept by waitroomd: a reload of this page shows the last
 * 15 minutes at once; later reads ask only for the samples after the last
 * one): line length, admitted/s and consumed/s with a dashed line at the
 * configured rate, and active, each with a y axis (0, half, top) and a
 * time axis, drawn as inline SVG. Controls PATCH the queue's config after
 * a confirm() dialog. All text goes in through textContent.
 *
 * The key may also come in the URL's fragment, /admin#key=... (never sent
 * to the server; for screenshots and kiosks): it is kept like a typed one
 * and the fragment is wiped from the address bar and the history.
 *
 * Each queue's card says what its page shows now (off, paused, pre-queue
 * until the opening, closed, sold out, a line, or no line) with its brand,
 * and links the page's previews (GET /q/{queue}?preview=STATE): a click
 * fetches the preview with the key and writes it into a new tab, so the
 * previews work without a separate admin listener; a middle click opens
 * the plain link, which answers on the admin listener.
 *
 * The sale's edges (1.2): per queue the stock left, the time it sold out,
 * the away and held counts, a pill for the sale (open, closed, sold out)
 * and the notice now shown to the line; controls close or reopen the
 * sale, set the stock (what is left now) or lift it (null), and set or
 * clear the notice (its length in code points, as the server counts).
 * What the operator typed goes to the server as typed (a number when it
 * reads as one), so bad input is refused there and its error (code and
 * message) is shown beside the controls.
 *
 * Autotune (1.2): a queue whose config has `autotune` gets two more charts
 * from the history's rateInUse and latencyMs columns, built and drawn by
 * the same code as the others (makeChart, draw): the rate in use with a
 * dashed line where it started (admitPerSecond) and dotted ones at min
 * and max, and the reported latency with a dashed line at the target. A
 * line of text says the rate in use and its last change (when, from, to,
 * why: the history's autotune.lastChange). They are removed when the
 * queue loses autotune; a fixed-rate queue never has them.
 *
 * Web Push (1.3): a queue with `push` on has a line "Notify me: N
 * subscribed" (stats subscribed: the live subscriptions, store-wide) with
 * this instance's pushes by outcome (stats push: delivered, gone, failed,
 * retried since it started); hidden for a queue with push off.
 *
 * Priority groups and presale codes (1.3) are codes.js's, a file of its
 * own: each card's fill hands it the card and the queue's answer
 * (wrDashboard.onCard), and it draws its panel into the card.
 */
(function () {
  'use strict';

  var KEY = 'wr_admin_key';
  var WINDOW_MS = 15 * 60 * 1000; /* history kept and drawn at most */
  var MIN_SPAN_MS = 20 * 1000;     /* a young history is drawn over at least this */
  var POLL_MS = 1000;
  var NOTICE_MAX = 500; /* a notice's code points (docs/API.md, the end of a sale) */
  var SVGNS = 'http://www.w3.org/2000/svg';
  /* refs(cfg, history): the chart's horizontal lines, [{cls, v, text}]
   * (v <= 0 or absent: not drawn) */
  var CHARTS = [
    { field: 'waiting', title: 'Line length' },
    { field: 'admittedPerSec', second: 'consumedPerSec', rate: true, title: 'Admitted/s (consumed/s dotted)',
      refs: function (cfg, history) {
        if (!cfg.autotune) return [{ cls: 'rate-line', v: cfg.admitPerSecond, text: 'rate ' + cfg.admitPerSecond + '/s' }];
        var r = lastOf(history, 'rateInUse'); /* autotune: the rate in use, not where it started */
        return [{ cls: 'rate-line', v: r, text: 'rate in use ' + fmtNum(r, true) + '/s' }];
      } },
    { field: 'active', title: 'Active' }
  ];
  /* an autotuned queue's two more (config autotune) */
  var AUTOTUNE_CHARTS = [
    { field: 'rateInUse', rate: true, title: 'Rate in use/s (start dashed, min and max dotted)',
      refs: function (cfg) {
        var at = cfg.autotune || {};
        return [{ cls: 'rate-line', v: cfg.admitPerSecond, text: 'start ' + cfg.admitPerSecond + '/s' },
          { cls: 'bound-line', v: at.minPerSecond, text: 'min ' + at.minPerSecond + '/s' },
          { cls: 'bound-line', v: at.maxPerSecond, text: 'max ' + at.maxPerSecond + '/s' }];
      } },
    { field: 'latencyMs', title: 'Reported latency, ms (target dashed)',
      refs: function (cfg, history) {
        /* the newest sample's target, else the config's */
        var t = lastOf(history, 'targetMs');
        if (t === null) t = (cfg.autotune || {}).targetMs;
        return [{ cls: 'target-line', v: t, text: 'target ' + t + ' ms' }];
      } }
  ];
  /* the newest number of field in history, else null */
  function lastOf(history, field) {
    for (var i = history.length - 1; i >= 0; i--) {
      if (typeof history[i][field] === 'number') return history[i][field];
    }
    return null;
  }
  var WHY = {
    start: 'started', bounds: 'clamped into new bounds', slow: 'lowered: slower than the target',
    failing: 'lowered: failing (errorRate above 0.05)', healthy: 'raised: well within the target, people waiting'
  };

  var PREVIEWS = [['waiting', 'Waiting'], ['held', 'Held'], ['presale', 'Presale line'], ['prequeue', 'Pre-queue'],
    ['challenge', 'Challenge'], ['admitted', 'Admitted'], ['closed', 'Closed'],
    ['soldout', 'Sold out'], ['reconnecting', 'Reconnecting'], ['full', 'Full'], ['error', 'Error'],
    ['code', 'Code refused']];

  var $ = function (id) { return document.getElementById(id); };
  var PUSH_OUTCOMES = ['delivered', 'gone', 'failed', 'retried']; /* stats push */
  var cards = {};   /* queue name -> {el, fields, charts, buttons, history} */
  var cardHooks = []; /* fn(c, q) run after each card's fill (codes.js) */
  var timer = null;
  var running = false;

  function key() {
    try { return sessionStorage.getItem(KEY) || ''; } catch (e) { return ''; }
  }

  function el(tag, attrs, text) {
    var n = document.createElement(tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) n.setAttribute(k, attrs[k]);
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function showLogin(msg) {
    running = false;
    clearTimeout(timer);
    $('board').hidden = true;
    $('logout').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = msg || '';
    $('key').focus();
  }

  function showBoard() {
    $('login').hidden = true;
    $('board').hidden = false;
    $('logout').hidden = false;
    if (!running) {
      running = true;
      tick();
    }
  }

  function api(method, path, body) {
    var opts = {
      method: method,
      cache: 'no-store',
      credentials: 'same-origin',
      headers: { 'Authorization': 'Bearer ' + key(), 'Accept': 'application/json' }
    };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (res) {
      return res.text().then(function (text) {
        var json = null;
        try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
        return { status: res.status, body: json, text: text };
      });
    });
  }

  /* The breaker gauge: `waitroom_breaker_state{state="open"} 1` style
   * (the label of the series at 1), or a bare number 0/1/2 (closed, open,
   * half-open). "n/a" when the server does not export it. */
  function breakerState(text) {
    if (typeof text !== 'string') return 'n/a';
    var lines = text.split('\n');
    var labelled = null, bare = null;
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      if (line.indexOf('waitroom_breaker_state') !== 0) continue;
      var m = /^waitroom_breaker_state(\{[^}]*\})?\s+([0-9.eE+-]+)/.exec(line);
      if (!m) continue;
      var v = parseFloat(m[2]);
      var st = m[1] ? /state="([^"]*)"/.exec(m[1]) : null;
      if (st) {
        if (v >= 1) labelled = st[1];
      } else if (bare === null) {
        bare = ['closed', 'open', 'half-open'][Math.round(v)] || String(v);
      }
    }
    return labelled || bare || 'n/a';
  }

  function setPill(node, text, cls) {
    node.textContent = text;
    node.className = 'pill ' + (cls || '');
  }

  function tick() {
    if (!running) return;
    var t = Date.now();
    Promise.all([
      api('GET', '/v1/admin/queues'),
      fetch('/readyz', { cache: 'no-store' }).then(function (r) { return r.status; }, function () { return 0; }),
      fetch('/metrics', { cache: 'no-store' }).then(function (r) {
        return r.ok ? r.text() : null;
      }, function () { return null; })
    ]).then(function (r) {
      var list = r[0], ready = r[1], metrics = r[2];
      if (list.status === 401) {
        try { sessionStorage.removeItem(KEY); } catch (e) { /* ignore */ }
        showLogin('The admin key was refused.');
        return;
      }
      setPill($('store-state'), ready === 200 ? 'ready' : (ready ? 'unavailable (' + ready + ')' : 'unreachable'),
        ready === 200 ? 'ok' : 'bad');
      var br = breakerState(metrics);
      setPill($('breaker-state'), br, br === 'closed' ? 'ok' : (br === 'n/a' ? '' : (br === 'open' ? 'bad' : 'warn')));
      var err = $('board-error');
      if (list.status === 200 && list.body && Array.isArray(list.body.queues)) {
        err.hidden = true;
        update(list.body.queues, t);
      } else {
        err.hidden = false;
        err.textContent = 'Could not read the queues: ' + list.status + ' ' +
          (list.body && list.body.error ? list.body.error : '');
      }
      $('updated').textContent = new Date(t).toLocaleTimeString();
    }, function () {
      var err = $('board-error');
      err.hidden = false;
      err.textContent = 'The server does not answer.';
    }).then(function () {
      if (running) {
        clearTimeout(timer);
        timer = setTimeout(tick, Math.max(0, POLL_MS - (Date.now() - t)));
      }
    });
  }

  function update(queues, t) {
    var seen = {};
    queues.sort(function (a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : 0; });
    for (var i = 0; i < queues.length; i++) {
      var q = queues[i];
      if (!q || typeof q.name !== 'string') continue;
      seen[q.name] = true;
      var c = cards[q.name] || (cards[q.name] = makeCard(q.name));
      if (c.el.parentNode !== $('queues') || c.el !== $('queues').children[i])
        $('queues').insertBefore(c.el, $('queues').children[i] || null);
      fill(c, q, t);
    }
    for (var name in cards) {
      if (Object.prototype.hasOwnProperty.call(cards, name) && !seen[name]) {
        cards[name].el.remove();
        delete cards[name];
      }
    }
    $('no-queues').hidden = queues.length > 0;
  }

  function makeCard(name) {
    var card = el('article', { 'class': 'card queue', 'data-queue': name });
    var head = el('div', { 'class': 'q-head' });
    head.appendChild(el('h2', {}, name));
    var pills = el('span', {});
    var pEnabled = el('span', { 'class': 'pill', 'data-field': 'enabled' });
    var pPaused = el('span', { 'class': 'pill', 'data-field': 'paused' });
    var pRate = el('span', { 'class': 'pill', 'data-field': 'rate' });
    var pSale = el('span', { 'class': 'pill', 'data-field': 'sale' });
    pills.appendChild(pEnabled); pills.appendChild(document.createTextNode(' '));
    pills.appendChild(pPaused); pills.appendChild(document.createTextNode(' '));
    pills.appendChild(pRate); pills.appendChild(document.createTextNode(' '));
    pills.appendChild(pSale);
    head.appendChild(pills);
    card.appendChild(head);

    var dl = el('dl', { 'class': 'q-stats' });
    var fields = {};
    [['waiting', 'Waiting'], ['active', 'Active'], ['admittedPerSec', 'Admitted/s'],
      ['consumedPerSec', 'Consumed/s'], ['timeToClear', 'Time to clear'],
      ['admittedTotal', 'Admitted total'],
      ['expiredTotal', 'Expired'], ['rejectedFullTotal', 'Rejected (full)'],
      ['leftTotal', 'Left'], ['away', 'Away'], ['held', 'Held'],
      ['stockLeft', 'Stock left'], ['soldOutAt', 'Sold out at']].forEach(function (f) {
      var div = el('div', {});
      div.appendChild(el('dt', {}, f[1]));
      var dd = el('dd', { 'data-field': f[0] }, '-');
      div.appendChild(dd);
      dl.appendChild(div);
      fields[f[0]] = dd;
    });
    fields.enabled = pEnabled; fields.paused = pPaused; fields.rate = pRate; fields.sale = pSale;
    card.appendChild(dl);
    var noticeNow = el('p', { 'class': 'q-notice', 'data-field': 'notice' });
    card.appendChild(noticeNow);
    fields.notice = noticeNow;
    /* Web Push: subscriptions (store-wide), this instance's pushes */
    var pushLine = el('p', { 'class': 'q-push', 'data-field': 'push' });
    pushLine.hidden = true;
    pushLine.appendChild(document.createTextNode('Notify me: '));
    fields.pushSubscribed = el('b', { 'data-field': 'push-subscribed' }, '0');
    pushLine.appendChild(fields.pushSubscribed);
    pushLine.appendChild(document.createTextNode(' subscribed · pushes from this server: '));
    PUSH_OUTCOMES.forEach(function (o, i) {
      if (i) pushLine.appendChild(document.createTextNode(', '));
      fields['push-' + o] = el('b', { 'data-field': 'push-' + o }, '0');
      pushLine.appendChild(fields['push-' + o]);
      pushLine.appendChild(document.createTextNode(' ' + o));
    });
    card.appendChild(pushLine);
    fields.push = pushLine;

    /* the page: what it shows now, its brand, its previews */
    var pageLine = el('p', { 'class': 'q-page' });
    pageLine.appendChild(el('span', {}, 'Page: '));
    var pState = el('b', { 'data-field': 'page-state' }, '-');
    var pBrand = el('span', { 'data-field': 'page-brand', 'class': 'q-brand' }, '');
    pageLine.appendChild(pState);
    pageLine.appendChild(document.createTextNode(' '));
    pageLine.appendChild(pBrand);
    card.appendChild(pageLine);
    var nav = el('nav', { 'class': 'previews', 'aria-label': 'Previews of the queue page of ' + name });
    nav.appendChild(el('span', {}, 'Previews: '));
    PREVIEWS.forEach(function (pv) {
      var href = '/q/' + encodeURIComponent(name) + '?preview=' + pv[0];
      var a = el('a', { href: href, target: '_blank', rel: 'noopener', 'data-preview': pv[0] }, pv[1]);
      a.addEventListener('click', function (ev) { openPreview(ev, href); });
      nav.appendChild(a);
      nav.appendChild(document.createTextNode(' '));
    });
    card.appendChild(nav);
    fields.pageState = pState; fields.pageBrand = pBrand;

    var charts = {};
    var box = el('div', { 'class': 'charts' });
    CHARTS.forEach(function (ch) { charts[ch.field] = makeChart(ch, box); });
    card.appendChild(box);
    /* autotune: its text line, and its charts (c.atBox) when the config has it */
    var atLine = el('p', { 'class': 'q-autotune', 'data-field': 'autotune' });
    atLine.hidden = true;
    card.appendChild(atLine);

    var controls = el('div', { 'class': 'controls' });
    var bEnable = el('button', { type: 'button', 'data-action': 'toggle-enabled' });
    var bPause = el('button', { type: 'button', 'data-action': 'toggle-paused' });
    var rate = el('input', { type: 'number', min: '0.001', step: 'any', 'aria-label': 'Admissions per second', 'data-field': 'rate-input' });
    var bRate = el('button', { type: 'button', 'data-action': 'set-rate' }, 'Set rate');
    controls.appendChild(bEnable); controls.appendChild(bPause);
    controls.appendChild(rate); controls.appendChild(bRate);
    card.appendChild(controls);

    /* the sale's edges: closed, stock, notice */
    var sale = el('div', { 'class': 'controls sale' });
    var bClosed = el('button', { type: 'button', 'data-action': 'toggle-closed' });
    var stock = el('input', { type: 'text', inputmode: 'numeric', 'aria-label': 'Stock left', 'data-field': 'stock-input',
      placeholder: 'stock' });
    var bStock = el('button', { type: 'button', 'data-action': 'set-stock' }, 'Set stock');
    var bNoStock = el('button', { type: 'button', 'class': 'secondary', 'data-action': 'clear-stock' }, 'No stock limit');
    sale.appendChild(bClosed); sale.appendChild(stock); sale.appendChild(bStock); sale.appendChild(bNoStock);
    card.appendChild(sale);
    var nbox = el('div', { 'class': 'controls notice-edit' });
    /* at most NOTICE_MAX code points, as the server counts (maxlength
     * counts UTF-16 units: twice that bounds it; input() trims the rest) */
    var notice = el('textarea', { rows: '2', 'aria-label': 'Notice to the line', 'data-field': 'notice-input',
      placeholder: 'A message to everyone in line', maxlength: String(2 * NOTICE_MAX) });
    var nCount = el('span', { 'class': 'count', 'data-field': 'notice-count' }, '0/500');
    var bNotice = el('button', { type: 'button', 'data-action': 'set-notice' }, 'Set notice');
    var bNoNotice = el('button', { type: 'button', 'class': 'secondary', 'data-action': 'clear-notice' }, 'Clear notice');
    nbox.appendChild(notice); nbox.appendChild(nCount); nbox.appendChild(bNotice); nbox.appendChild(bNoNotice);
    card.appendChild(nbox);
    var msg = el('p', { 'class': 'error', 'role': 'alert', 'data-field': 'error' });
    card.appendChild(msg);
    var bits = challengeControl(controls, name, msg, function () { return c; });

    var c = { name: name, el: card, fields: fields, charts: charts, history: [], prev: null,
      config: null, rate: rate, bEnable: bEnable, bPause: bPause, msg: msg, bits: bits, rateEdited: false,
      bClosed: bClosed, stock: stock, stockEdited: false, notice: notice, nCount: nCount,
      lastT: 0, loading: false, atLine: atLine, atBox: null, autotune: null, rateInUse: null };
    rate.addEventListener('input', function () { c.rateEdited = true; });
    stock.addEventListener('input', function () { c.stockEdited = true; });
    var noticeInput = function () {
      if (codePoints(notice.value) > NOTICE_MAX) notice.value = firstCodePoints(notice.value, NOTICE_MAX);
      nCount.textContent = codePoints(notice.value) + '/' + NOTICE_MAX;
      bNotice.disabled = notice.value.trim() === ''; /* only white space: the server refuses it */
    };
    bNotice.disabled = true;
    notice.addEventListener('input', noticeInput);
    bClosed.addEventListener('click', function () {
      if (!c.config) return;
      var close = !c.config.closed;
      change(c, { closed: close }, close
        ? 'Close the sale of "' + name + '"? Nobody is admitted; the people in line keep their places ' +
          'and are told the sale has ended.'
        : 'Reopen the sale of "' + name + '"? Admission resumes in order.');
    });
    bStock.addEventListener('click', function () {
      var raw = stock.value.trim();
      var v = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(raw) ? Number(raw) : raw;
      change(c, { stock: v }, 'Set the stock of "' + name + '" to ' + JSON.stringify(v) +
        ' (what is left now)?', function () { c.stockEdited = false; });
    });
    bNoStock.addEventListener('click', function () {
      change(c, { stock: null }, 'Lift the stock limit of "' + name + '"? Admission no longer counts stock.',
        function () { c.stockEdited = false; });
    });
    bNotice.addEventListener('click', function () {
      var text = notice.value;
      change(c, { notice: text }, 'Show this notice to everyone in line of "' + name + '"?\n\n' + text,
        function () { notice.value = ''; noticeInput(); });
    });
    bNoNotice.addEventListener('click', function () {
      change(c, { notice: null }, 'Clear the notice of "' + name + '"?');
    });
    bEnable.addEventListener('click', function () {
      if (!c.config) return;
      var on = !c.config.enabled;
      change(c, { enabled: on }, (on ? 'Enable' : 'Disable') + ' the line of "' + name + '"?' +
        (on ? '' : ' Everybody will pass straight through.'));
    });
    bPause.addEventListener('click', function () {
      if (!c.config) return;
      var p = !c.config.paused;
      change(c, { paused: p }, (p ? 'Pause' : 'Resume') + ' admission for "' + name + '"?');
    });
    bRate.addEventListener('click', function () {
      var v = parseFloat(rate.value);
      if (!(v > 0)) { msg.textContent = 'The rate must be a positive number.'; return; }
      change(c, { admitPerSecond: v }, 'Set the rate of "' + name + '" to ' + v + ' per second?');
    });
    return c;
  }

  /* One chart of ch (CHARTS, AUTOTUNE_CHARTS) appended to box: a figure
   * with its caption (title, the newest value), y axis, SVG (role img,
   * labelled) and time axis. */
  function makeChart(ch, box) {
    var wrap = el('figure', { 'class': 'chart', 'data-chart': ch.field });
    var title = el('figcaption', { 'class': 'chart-title' });
    var label = el('span', {}, ch.title);
    title.appendChild(label);
    var now = el('span', {}, '-');
    title.appendChild(now);
    wrap.appendChild(title);
    var plot = el('div', { 'class': 'plot' });
    var yaxis = el('div', { 'class': 'yaxis', 'aria-hidden': 'true' });
    var yTop = el('span', {}, ''), yMid = el('span', {}, ''), yZero = el('span', {}, '0');
    yaxis.appendChild(yTop); yaxis.appendChild(yMid); yaxis.appendChild(yZero);
    plot.appendChild(yaxis);
    var svg = plotSvg(ch.title + ', last 15 minutes');
    [['grid', 0, 2, 600, 2], ['grid', 0, 30, 600, 30], ['axis', 0, 59, 600, 59],
      ['axis', 0.5, 0, 0.5, 60]].forEach(function (g) {
      var ln = document.createElementNS(SVGNS, 'line');
      ln.setAttribute('class', g[0]);
      ln.setAttribute('x1', String(g[1])); ln.setAttribute('y1', String(g[2]));
      ln.setAttribute('x2', String(g[3])); ln.setAttribute('y2', String(g[4]));
      svg.appendChild(ln);
    });
    var area = document.createElementNS(SVGNS, 'polygon');
    area.setAttribute('class', 'area');
    var line = document.createElementNS(SVGNS, 'polyline');
    line.setAttribute('class', 'series');
    svg.appendChild(area); svg.appendChild(line);
    var line2 = null, refLines = [];
    if (ch.second) {
      line2 = document.createElementNS(SVGNS, 'polyline');
      line2.setAttribute('class', 'series second');
      svg.appendChild(line2);
    }
    (ch.refs ? ch.refs({}, []) : []).forEach(function (r) {
      var rl = document.createElementNS(SVGNS, 'line');
      rl.setAttribute('class', r.cls);
      rl.setAttribute('x1', '0'); rl.setAttribute('x2', '600');
      rl.setAttribute('y1', '-10'); rl.setAttribute('y2', '-10');
      svg.appendChild(rl);
      refLines.push(rl);
    });
    plot.appendChild(svg);
    wrap.appendChild(plot);
    var xaxis = el('div', { 'class': 'xaxis', 'aria-hidden': 'true' });
    var xStart = el('span', {}, ''), xMid = el('span', {}, ''), xEnd = el('span', {}, '');
    xaxis.appendChild(xStart); xaxis.appendChild(xMid); xaxis.appendChild(xEnd);
    wrap.appendChild(xaxis);
    box.appendChild(wrap);
    return { def: ch, wrap: wrap, line: line, line2: line2, refLines: refLines, area: area, now: now,
      label: label, title: ch.title, y: [yTop, yMid], x: [xStart, xMid, xEnd] };
  }

  /* A chart's SVG: 600 x 60 user units stretched to the plot, an image
   * labelled label (report.js draws in the same). */
  function plotSvg(label) {
    var svg = document.createElementNS(SVGNS, 'svg');
    svg.setAttribute('viewBox', '0 0 600 60');
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', label);
    return svg;
  }

  /* Adds or removes an autotuned queue's charts, as its config says. */
  function autotuneCharts(c) {
    var on = !!(c.config && c.config.autotune);
    if (on && !c.atBox) {
      c.atBox = el('div', { 'class': 'charts autotune' });
      AUTOTUNE_CHARTS.forEach(function (ch) { c.charts[ch.field] = makeChart(ch, c.atBox); });
      c.atLine.parentNode.insertBefore(c.atBox, c.atLine.nextSibling);
    } else if (!on && c.atBox) {
      c.atBox.remove();
      c.atBox = null;
      AUTOTUNE_CHARTS.forEach(function (ch) { delete c.charts[ch.field]; });
    }
    c.atLine.hidden = !on;
    if (!on) c.atLine.textContent = '';
  }

  /* The autotune line: the rate in use and its last change (the history's
   * autotune object, this instance's view). */
  function autotuneText(at, rateNow) {
    var rate = typeof rateNow === 'number' ? rateNow : at.rateInUse;
    var s = 'Autotune: rate in use ' + (typeof rate === 'number' ? fmtNum(rate, true) + '/s' : 'not known yet') +
      ' (min ' + at.minPerSecond + '/s, max ' + at.maxPerSecond + '/s, target ' + at.targetMs + ' ms; latency ' +
      (typeof at.latencyMs === 'number' ? fmtNum(at.latencyMs, false) + ' ms' : 'not reported (no fresh report)') + ').';
    var ch = at.lastChange;
    if (!ch) return s + ' No change seen since this instance started.';
    var move = (typeof ch.from === 'number' ? 'from ' + fmtNum(ch.from, true) + '/s ' : '') + 'to ' + fmtNum(ch.to, true) + '/s';
    if (!ch.reason) return s + ' Last change at ' + clock(ch.at) + ', ' + move + ', by another instance (its log says why).';
    var sig = [];
    if (typeof ch.latencyMs === 'number') sig.push('latency ' + fmtNum(ch.latencyMs, false) + ' ms');
    if (typeof ch.errorRate === 'number') sig.push('errorRate ' + ch.errorRate);
    return s + ' Last change at ' + clock(ch.at) + ', ' + move + ': ' + (WHY[ch.reason] || ch.reason) +
      (ch.reason !== 'start' && ch.reason !== 'bounds' && sig.length ? ' (' + sig.join(', ') + ')' : '') + '.';
  }

  /* A preview, fetched with the key and written into a new tab (the tab
   * is opened at the click, so no popup blocker stops it). */
  function openPreview(ev, href) {
    if (ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    var w = window.open('', '_blank');
    if (!w) { window.location.href = href; return; }
    fetch(href, { headers: { 'Authorization': 'Bearer ' + key() }, cache: 'no-store' }).then(function (res) {
      return res.text().then(function (html) {
        if (res.status !== 200) { w.location.href = href; return; }
        w.document.open();
        w.document.write(html);
        w.document.close();
      });
    }, function () { w.location.href = href; });
  }

  /* What the queue page shows now, from the config and the stats. */
  function pageState(cfg, st) {
    if (cfg.enabled === false) return 'off: people pass straight through';
    if (cfg.closed === true) return 'closed: "the sale has ended"';
    if ((typeof st.soldOutAt === 'number' && st.soldOutAt > 0) || st.stockLeft === 0) return 'sold out';
    if (cfg.opensAt && cfg.opensAt > Date.now()) return 'pre-queue until ' + new Date(cfg.opensAt).toLocaleString();
    if (cfg.paused) return 'paused: a line that does not move';
    return (st.waiting || 0) > 0 ? 'a line of ' + (st.waiting || 0) : 'open: no line';
  }

  /* The join challenge's difficulty (challengeBits, 0 = off), for an attack
   * in progress: an input and a button that asks before it changes it. The
   * input shows the queue's setting until someone types (render). */
  function challengeControl(controls, name, msg, card) {
    var input = el('input', { type: 'number', min: '0', max: '32', step: '1',
      'aria-label': 'Join challenge bits (0 = off)', 'data-field': 'bits-input' });
    var button = el('button', { type: 'button', 'data-action': 'set-bits' }, 'Set challenge');
    input.addEventListener('input', function () { input.dataset.edited = '1'; });
    button.addEventListener('click', function () {
      var v = Number(input.value);
      if (!(v >= 0 && v <= 32 && Math.floor(v) === v) || input.value === '') {
        msg.textContent = 'The challenge bits must be a whole number from 0 to 32.';
        return;
      }
      input.dataset.edited = '';
      change(card(), { challengeBits: v }, v === 0
        ? 'Turn join challenges off for "' + name + '"?'
        : 'Ask every new joiner of "' + name + '" to solve a ' + v + '-bit challenge (about ' +
          Math.pow(2, v).toLocaleString('en-US') + ' hashes each)?');
    });
    controls.appendChild(input);
    controls.appendChild(button);
    return input;
  }

  /* s cut to its first n code points (a surrogate pair is never split). */
  function firstCodePoints(s, n) {
    var out = 0;
    for (var i = 0; i < s.length && n > 0; i++, n--) {
      var u = s.charCodeAt(i);
      if (u >= 0xd800 && u <= 0xdbff && i + 1 < s.length) {
        var l = s.charCodeAt(i + 1);
        if (l >= 0xdc00 && l <= 0xdfff) i++;
      }
      out = i + 1;
    }
    return s.slice(0, out);
  }

  /* What the card says of a notice: a string as it is; a notice by
   * language (1.3, an object of language to text) its texts, one per line
   * with their language, read only (the field below sets a string). */
  function noticeText(n) {
    if (typeof n === 'string') return n === '' ? '' : 'Notice: ' + n;
    if (!n || typeof n !== 'object') return '';
    var lines = Object.keys(n).filter(function (k) { return typeof n[k] === 'string'; })
      .map(function (k) { return k + ': ' + n[k]; });
    return lines.length ? 'Notice (set by language through the API):\n' + lines.join('\n') : '';
  }

  /* The length of s in Unicode code points (how the server counts notice). */
  function codePoints(s) {
    var n = 0;
    for (var i = 0; i < s.length; i++) {
      var u = s.charCodeAt(i);
      if (u >= 0xd800 && u <= 0xdbff && i + 1 < s.length) {
        var l = s.charCodeAt(i + 1);
        if (l >= 0xdc00 && l <= 0xdfff) i++;
      }
      n++;
    }
    return n;
  }

  /* After a confirm() with question: PATCH the queue with patch; done()
   * runs once it was taken. A refusal shows the server's code and message. */
  function change(c, patch, question, done) {
    if (!window.confirm(question)) return;
    c.msg.textContent = '';
    api('PATCH', '/v1/admin/queues/' + encodeURIComponent(c.name), patch).then(function (r) {
      if (r.status === 200) {
        c.rateEdited = false;
        if (done) done();
        if (r.body) c.config = r.body;
        render(c);
        clearTimeout(timer);
        tick();
      } else if (r.status === 401) {
        showLogin('The admin key was refused.');
      } else {
        c.msg.textContent = 'Failed: ' + r.status + ' ' +
          (r.body && r.body.error ? r.body.error + (r.body.message ? ': ' +
            (typeof r.body.field === 'string' ? r.body.field + ' ' : '') + r.body.message : '') : '');
      }
    }, function () { c.msg.textContent = 'Failed: no answer'; });
  }

  function fill(c, q, t) {
    var st = q.stats || {};
    c.config = q.config || {};
    c.rateInUse = c.config.autotune && typeof st.admitRateTarget === 'number' ? st.admitRateTarget : null;
    autotuneCharts(c);
    var sample = {
      t: t,
      waiting: st.waiting || 0,
      active: st.active || 0,
      admittedTotal: st.admittedTotal || 0,
      consumedTotal: st.consumedTotal || 0,
      admittedPerSec: 0,
      consumedPerSec: 0
    };
    var prev = c.prev;
    if (prev && t > prev.t) {
      var dt = (t - prev.t) / 1000;
      sample.admittedPerSec = Math.max(0, sample.admittedTotal - prev.admittedTotal) / dt;
      sample.consumedPerSec = Math.max(0, sample.consumedTotal - prev.consumedTotal) / dt;
    }
    c.prev = sample;

    var f = c.fields;
    f.waiting.textContent = String(sample.waiting);
    f.active.textContent = String(sample.active);
    f.admittedPerSec.textContent = prev ? sample.admittedPerSec.toFixed(1) : '-';
    f.consumedPerSec.textContent = prev ? sample.consumedPerSec.toFixed(1) : '-';
    f.timeToClear.textContent = timeToClear(sample.waiting, c.config, st);
    f.admittedTotal.textContent = String(st.admittedTotal || 0);
    f.expiredTotal.textContent = String(st.expiredTotal || 0);
    f.rejectedFullTotal.textContent = String(st.rejectedFullTotal || 0);
    f.leftTotal.textContent = String(st.leftTotal || 0);
    f.pageState.textContent = pageState(c.config, st);
    var pg = c.config.page || null;
    f.pageBrand.textContent = pg ? [pg.brand, pg.title, pg.lang, pg.accentColor].filter(Boolean).join(' · ') : '(no brand)';
    f.away.textContent = String(st.away || 0);
    f.held.textContent = String(st.held || 0);
    f.stockLeft.textContent = typeof st.stockLeft === 'number' ? String(st.stockLeft) : 'no limit';
    f.soldOutAt.textContent = typeof st.soldOutAt === 'number' && st.soldOutAt > 0 ? clock(st.soldOutAt) : '-';
    f.push.hidden = !c.config.push;
    if (c.config.push) {
      f.pushSubscribed.textContent = String(st.subscribed || 0);
      PUSH_OUTCOMES.forEach(function (o) {
        f['push-' + o].textContent = String((st.push && st.push[o]) || 0);
      });
    }
    c.soldOut = typeof st.soldOutAt === 'number' && st.soldOutAt > 0;
    render(c);
    loadHistory(c);
    for (var h = 0; h < cardHooks.length; h++) cardHooks[h](c, q);
  }

  /* waiting / rate: the configured rate (autotune's rate in use), or the
   * observed one while maxActive holds admission below it; '-' while
   * nobody is admitted. */
  function timeToClear(waiting, cfg, st) {
    if (!waiting) return '0 s';
    var rate = cfg.autotune && st.admitRateTarget > 0 ? st.admitRateTarget : (cfg.admitPerSecond || 0);
    if (cfg.maxActive > 0 && st.admitRateObserved >= 0 && st.admitRateObserved < rate) rate = st.admitRateObserved;
    if (cfg.enabled === false || cfg.paused || !(rate > 0)) return '-';
    var s = Math.ceil(waiting / rate);
    if (s < 120) return s + ' s';
    if (s < 7200) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  }

  /* The server's one-second history: all of it the first time, then the
   * samples after the last one we have. */
  function loadHistory(c) {
    if (c.loading) return;
    c.loading = true;
    var path = '/v1/admin/queues/' + encodeURIComponent(c.name) + '/history' +
      (c.lastT ? '?since=' + c.lastT : '');
    api('GET', path).then(function (r) {
      c.loading = false;
      var h = r.body;
      if (r.status !== 200 || !h || !Array.isArray(h.t)) return;
      for (var i = 0; i < h.t.length; i++) {
        if (h.t[i] <= c.lastT) continue;
        c.history.push({ t: h.t[i], waiting: h.waiting[i], active: h.active[i],
          admittedPerSec: h.admittedPerSecond[i], consumedPerSec: h.consumedPerSecond[i],
          /* autotune's columns: absent for a fixed-rate queue */
          rateInUse: h.rateInUse ? h.rateInUse[i] : null, latencyMs: h.latencyMs ? h.latencyMs[i] : null,
          targetMs: h.targetMs ? h.targetMs[i] : null });
        c.lastT = h.t[i];
      }
      var end = c.lastT;
      while (c.history.length && c.history[0].t < end - WINDOW_MS) c.history.shift();
      c.autotune = h.autotune || null;
      if (c.autotune && c.config && c.config.autotune) c.atLine.textContent = autotuneText(c.autotune, c.rateInUse);
      for (var f in c.charts) {
        if (Object.prototype.hasOwnProperty.call(c.charts, f)) draw(c.charts[f], c.history, end, c.config || {});
      }
    }, function () { c.loading = false; });
  }

  function render(c) {
    var cfg = c.config || {};
    var f = c.fields;
    setPill(f.enabled, cfg.enabled === false ? 'disabled' : 'enabled', cfg.enabled === false ? 'warn' : 'ok');
    /* admission as the line lives it: a pre-queue, a closed or sold-out
     * sale or a line turned off admits nobody, paused or not */
    var preq = typeof cfg.opensAt === 'number' && cfg.opensAt > Date.now();
    var stopped = cfg.enabled === false || cfg.closed || c.soldOut || preq;
    setPill(f.paused, cfg.paused ? 'paused' : (stopped ? 'not admitting' : 'admitting'),
      cfg.paused || stopped ? 'warn' : 'ok');
    setPill(f.rate, cfg.autotune ? 'auto ' + (typeof c.rateInUse === 'number' ? fmtNum(c.rateInUse, true) : '?') + '/s'
      : (cfg.admitPerSecond !== undefined ? cfg.admitPerSecond : '?') + '/s', '');
    c.bEnable.textContent = cfg.enabled === false ? 'Enable line' : 'Disable line';
    c.bPause.textContent = cfg.paused ? 'Resume admission' : 'Pause admission';
    setPill(f.sale, cfg.closed ? 'sale closed' : (c.soldOut ? 'sold out' : (preq ? 'opens ' + clock(cfg.opensAt) : 'sale open')),
      cfg.closed || c.soldOut ? 'bad' : (preq ? 'warn' : 'ok'));
    c.bClosed.textContent = cfg.closed ? 'Reopen sale' : 'Close sale';
    f.notice.textContent = noticeText(cfg.notice);
    f.notice.hidden = f.notice.textContent === '';
    if (!c.stockEdited && document.activeElement !== c.stock)
      c.stock.value = typeof cfg.stock === 'number' ? String(cfg.stock) : '';
    if (!c.rateEdited && document.activeElement !== c.rate && cfg.admitPerSecond !== undefined)
      c.rate.value = String(cfg.admitPerSecond);
    if (!c.bits.dataset.edited && document.activeElement !== c.bits && cfg.challengeBits !== undefined)
      c.bits.value = String(cfg.challengeBits);
  }

  function fmtNum(v, rate) {
    if (v === null || v === undefined) return '-';
    return rate ? (Math.round(v * 10) / 10).toFixed(1) : String(Math.round(v));
  }

  function clock(ms) {
    var d = new Date(ms);
    var p = function (n) { return (n < 10 ? '0' : '') + n; };
    return p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds());
  }

  /* Polyline points of field over [now - span, now], y scaled to top;
   * a missing sample (null) or a gap of more than 5 s breaks the line
   * (SVG has no gaps: the parts are drawn as one path of moves). */
  function points(history, field, now, span, top) {
    var pts = [];
    for (var j = 0; j < history.length; j++) {
      var v = history[j][field];
      if (v === null || v === undefined) continue;
      var x = (history[j].t - (now - span)) / span * 600;
      var y = 58 - v / top * 54;
      pts.push(x.toFixed(1) + ',' + y.toFixed(1));
    }
    return pts;
  }

  function draw(ch, history, now, cfg) {
    var def = ch.def, field = def.field, isRate = !!def.rate;
    var max = 0, last = null;
    for (var i = 0; i < history.length; i++) {
      var v = history[i][field];
      if (v !== null && v !== undefined) { max = Math.max(max, v); last = v; }
      if (def.second && history[i][def.second] !== null && history[i][def.second] !== undefined)
        max = Math.max(max, history[i][def.second]);
    }
    /* the horizontal lines (the configured rate, min, max, the target) */
    var refs = def.refs ? def.refs(cfg, history) : [], refMax = 0, texts = [];
    refs.forEach(function (r) {
      if (r.v > 0) { refMax = Math.max(refMax, r.v); texts.push(r.text); }
    });
    ch.now.textContent = last === null ? '-' : fmtNum(last, isRate) + ' (max ' + fmtNum(max, isRate) + ')' +
      (texts.length ? ', ' + texts.join(', ') : '');
    /* the y axis: 0 to a round top above the data (and the lines) */
    var top = Math.max(max, refMax * 1.1, isRate ? 1 : 4);
    var mag = Math.pow(10, Math.floor(Math.log(top) / Math.LN10));
    top = Math.ceil(top / mag * 2) / 2 * mag;
    ch.y[0].textContent = fmtNum(top, isRate && top < 10);
    ch.y[1].textContent = fmtNum(top / 2, isRate && top < 20);
    refs.forEach(function (r, k) {
      var ry = r.v > 0 ? (58 - r.v / top * 54).toFixed(1) : '-10';
      ch.refLines[k].setAttribute('y1', ry); ch.refLines[k].setAttribute('y2', ry);
    });
    /* the x axis spans the history (at least 20 s, at most 15 min) */
    var span = history.length ? Math.min(WINDOW_MS, Math.max(MIN_SPAN_MS, now - history[0].t)) : MIN_SPAN_MS;
    var secs = Math.round(span / 1000);
    ch.label.textContent = ch.title + ', last ' + (secs >= 120 ? Math.round(secs / 60) + ' min' : secs + ' s');
    ch.x[0].textContent = now ? clock(now - span) : '';
    ch.x[1].textContent = now ? clock(now - span / 2) : '';
    ch.x[2].textContent = now ? clock(now) : '';
    var pts = points(history, field, now, span, top);
    if (pts.length < 2) {
      ch.line.setAttribute('points', '');
      ch.area.setAttribute('points', '');
      if (ch.line2) ch.line2.setAttribute('points', '');
      return;
    }
    ch.line.setAttribute('points', pts.join(' '));
    var x0 = pts[0].split(',')[0], x1 = pts[pts.length - 1].split(',')[0];
    ch.area.setAttribute('points', x0 + ',59 ' + pts.join(' ') + ' ' + x1 + ',59');
    if (ch.line2) ch.line2.setAttribute('points', points(history, def.second, now, span, top).join(' '));
  }

  $('login').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var k = $('key').value.trim();
    if (!k) return;
    try { sessionStorage.setItem(KEY, k); } catch (e) { /* ignore */ }
    $('key').value = '';
    showBoard();
  });
  $('logout').addEventListener('click', function () {
    try { sessionStorage.removeItem(KEY); } catch (e) { /* ignore */ }
    for (var name in cards) if (Object.prototype.hasOwnProperty.call(cards, name)) cards[name].el.remove();
    cards = {};
    showLogin('');
  });

  /* /admin#key=...: the key from the fragment, then the fragment wiped */
  (function () {
    var m = /(?:^#|&)key=([^&]*)/.exec(window.location.hash || '');
    if (!m) return;
    var k = '';
    try { k = decodeURIComponent(m[1]).trim(); } catch (e) { k = ''; }
    if (k) { try { sessionStorage.setItem(KEY, k); } catch (e) { /* ignore */ } }
    try { history.replaceState(null, '', window.location.pathname + window.location.search); } catch (e) { window.location.hash = ''; }
  })();

  /* what report.js (the report page) and codes.js (groups and codes),
   * loaded after this file, share: the key, the API call, the element
   * maker, the chart SVG, the card hook, the login when the key is refused */
  window.wrDashboard = { key: key, api: api, el: el, plotSvg: plotSvg,
    onCard: function (fn) { cardHooks.push(fn); },
    refused: function () { showLogin('The admin key was refused.'); } };

  if (key()) showBoard();
  else showLogin('');
})();
