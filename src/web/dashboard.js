/*
 * dashboard.js - the operator dashboard (GET /admin).
 *
 * Asks for the admin key once per browser session (sessionStorage, sent as
 * Authorization: Bearer). Every second it reads GET /v1/admin/queues, GET
 * /readyz and GET /metrics, and per queue shows the counts, the rates
 * (admitted/s and consumed/s from the change of the totals between two
 * reads), and three charts of the last 10 minutes (line length,
 * admissions/s, active) drawn as inline SVG. Controls PATCH the queue's
 * config after a confirm() dialog. All text goes in through textContent.
 */
(function () {
  'use strict';

  var KEY = 'wr_admin_key';
  var WINDOW_MS = 10 * 60 * 1000; /* history kept and drawn at most */
  var MIN_SPAN_MS = 20 * 1000;     /* a young history is drawn over at least this */
  var POLL_MS = 1000;
  var SVGNS = 'http://www.w3.org/2000/svg';
  var CHARTS = [
    { field: 'waiting', title: 'Line length' },
    { field: 'admittedPerSec', title: 'Admissions/s' },
    { field: 'active', title: 'Active' }
  ];

  var $ = function (id) { return document.getElementById(id); };
  var cards = {};   /* queue name -> {el, fields, charts, buttons, history} */
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
    pills.appendChild(pEnabled); pills.appendChild(document.createTextNode(' '));
    pills.appendChild(pPaused); pills.appendChild(document.createTextNode(' '));
    pills.appendChild(pRate);
    head.appendChild(pills);
    card.appendChild(head);

    var dl = el('dl', { 'class': 'q-stats' });
    var fields = {};
    [['waiting', 'Waiting'], ['active', 'Active'], ['admittedPerSec', 'Admitted/s'],
      ['consumedPerSec', 'Consumed/s'], ['admittedTotal', 'Admitted total'],
      ['expiredTotal', 'Expired'], ['rejectedFullTotal', 'Rejected (full)'],
      ['leftTotal', 'Left']].forEach(function (f) {
      var div = el('div', {});
      div.appendChild(el('dt', {}, f[1]));
      var dd = el('dd', { 'data-field': f[0] }, '-');
      div.appendChild(dd);
      dl.appendChild(div);
      fields[f[0]] = dd;
    });
    fields.enabled = pEnabled; fields.paused = pPaused; fields.rate = pRate;
    card.appendChild(dl);

    var charts = {};
    var box = el('div', { 'class': 'charts' });
    CHARTS.forEach(function (ch) {
      var wrap = el('figure', { 'class': 'chart', 'data-chart': ch.field });
      var title = el('figcaption', { 'class': 'chart-title' });
      var label = el('span', {}, ch.title);
      title.appendChild(label);
      var now = el('span', {}, '-');
      title.appendChild(now);
      wrap.appendChild(title);
      var svg = document.createElementNS(SVGNS, 'svg');
      svg.setAttribute('viewBox', '0 0 600 60');
      svg.setAttribute('preserveAspectRatio', 'none');
      svg.setAttribute('role', 'img');
      svg.setAttribute('aria-label', ch.title + ', last 10 minutes');
      var grid = document.createElementNS(SVGNS, 'line');
      grid.setAttribute('class', 'grid');
      grid.setAttribute('x1', '0'); grid.setAttribute('x2', '600');
      grid.setAttribute('y1', '59'); grid.setAttribute('y2', '59');
      var area = document.createElementNS(SVGNS, 'polygon');
      area.setAttribute('class', 'area');
      var line = document.createElementNS(SVGNS, 'polyline');
      line.setAttribute('class', 'series');
      svg.appendChild(grid); svg.appendChild(area); svg.appendChild(line);
      wrap.appendChild(svg);
      box.appendChild(wrap);
      charts[ch.field] = { line: line, area: area, now: now, label: label, title: ch.title };
    });
    card.appendChild(box);

    var controls = el('div', { 'class': 'controls' });
    var bEnable = el('button', { type: 'button', 'data-action': 'toggle-enabled' });
    var bPause = el('button', { type: 'button', 'data-action': 'toggle-paused' });
    var rate = el('input', { type: 'number', min: '0.001', step: 'any', 'aria-label': 'Admissions per second', 'data-field': 'rate-input' });
    var bRate = el('button', { type: 'button', 'data-action': 'set-rate' }, 'Set rate');
    controls.appendChild(bEnable); controls.appendChild(bPause);
    controls.appendChild(rate); controls.appendChild(bRate);
    var msg = el('span', { 'class': 'error', 'role': 'alert' });
    controls.appendChild(msg);
    card.appendChild(controls);

    var c = { name: name, el: card, fields: fields, charts: charts, history: [], prev: null,
      config: null, rate: rate, bEnable: bEnable, bPause: bPause, msg: msg, rateEdited: false };
    rate.addEventListener('input', function () { c.rateEdited = true; });
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

  function change(c, patch, question) {
    if (!window.confirm(question)) return;
    c.msg.textContent = '';
    api('PATCH', '/v1/admin/queues/' + encodeURIComponent(c.name), patch).then(function (r) {
      if (r.status === 200) {
        c.rateEdited = false;
        if (r.body) c.config = r.body;
        render(c);
        clearTimeout(timer);
        tick();
      } else if (r.status === 401) {
        showLogin('The admin key was refused.');
      } else {
        c.msg.textContent = 'Failed: ' + r.status + ' ' + (r.body && r.body.message ? r.body.message : '');
      }
    }, function () { c.msg.textContent = 'Failed: no answer'; });
  }

  function fill(c, q, t) {
    var st = q.stats || {};
    c.config = q.config || {};
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
    if (prev) c.history.push(sample);
    while (c.history.length && c.history[0].t < t - WINDOW_MS) c.history.shift();

    var f = c.fields;
    f.waiting.textContent = String(sample.waiting);
    f.active.textContent = String(sample.active);
    f.admittedPerSec.textContent = prev ? sample.admittedPerSec.toFixed(1) : '-';
    f.consumedPerSec.textContent = prev ? sample.consumedPerSec.toFixed(1) : '-';
    f.admittedTotal.textContent = String(st.admittedTotal || 0);
    f.expiredTotal.textContent = String(st.expiredTotal || 0);
    f.rejectedFullTotal.textContent = String(st.rejectedFullTotal || 0);
    f.leftTotal.textContent = String(st.leftTotal || 0);
    render(c);
    CHARTS.forEach(function (ch) { draw(c.charts[ch.field], c.history, ch.field, t); });
  }

  function render(c) {
    var cfg = c.config || {};
    var f = c.fields;
    setPill(f.enabled, cfg.enabled === false ? 'disabled' : 'enabled', cfg.enabled === false ? 'warn' : 'ok');
    setPill(f.paused, cfg.paused ? 'paused' : 'admitting', cfg.paused ? 'warn' : 'ok');
    setPill(f.rate, (cfg.admitPerSecond !== undefined ? cfg.admitPerSecond : '?') + '/s', '');
    c.bEnable.textContent = cfg.enabled === false ? 'Enable line' : 'Disable line';
    c.bPause.textContent = cfg.paused ? 'Resume admission' : 'Pause admission';
    if (!c.rateEdited && document.activeElement !== c.rate && cfg.admitPerSecond !== undefined)
      c.rate.value = String(cfg.admitPerSecond);
  }

  function draw(ch, history, field, now) {
    var max = 0;
    for (var i = 0; i < history.length; i++) max = Math.max(max, history[i][field]);
    var last = history.length ? history[history.length - 1][field] : null;
    ch.now.textContent = last === null ? '-' :
      (field === 'admittedPerSec' ? last.toFixed(1) : String(last)) + ' (max ' +
      (field === 'admittedPerSec' ? max.toFixed(1) : String(max)) + ')';
    if (history.length < 2) {
      ch.line.setAttribute('points', '');
      ch.area.setAttribute('points', '');
      return;
    }
    /* the x axis spans the history (at least 20 s, at most 10 min) */
    var span = Math.min(WINDOW_MS, Math.max(MIN_SPAN_MS, now - history[0].t));
    var secs = Math.round(span / 1000);
    ch.label.textContent = ch.title + ', last ' + (secs >= 120 ? Math.round(secs / 60) + ' min' : secs + ' s');
    var top = max > 0 ? max : 1;
    var pts = [];
    for (var j = 0; j < history.length; j++) {
      var x = (history[j].t - (now - span)) / span * 600;
      var y = 58 - history[j][field] / top * 54;
      pts.push(x.toFixed(1) + ',' + y.toFixed(1));
    }
    ch.line.setAttribute('points', pts.join(' '));
    var x0 = pts[0].split(',')[0], x1 = pts[pts.length - 1].split(',')[0];
    ch.area.setAttribute('points', x0 + ',59 ' + pts.join(' ') + ' ' + x1 + ',59');
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

  if (key()) showBoard();
  else showLogin('');
})();
