/*
 * report.js - the dashboard's report page (GET /admin; docs/API.md 1.3,
 * "The sale's report"). A file of its own beside dashboard.js, sharing
 * only what dashboard.js hands it (window.wrDashboard: the admin key it
 * keeps, its element maker, its chart SVG) and the page's #reports
 * section.
 *
 * Lists the queues with a report (GET /v1/admin/reports: the deleted ones
 * too), every 5 s while the board is shown. "Open" reads the queue's
 * report (GET /v1/admin/queues/{q}/report, the default range: the whole
 * kept report) and draws one chart a minute for joins, admissions, the
 * line at each minute's end and the wait p50 and p99 (p99 dotted), as
 * inline SVG bars/lines with a y axis (0, half, top) and a time axis; the
 * totals in a table; "Download CSV" fetches ?format=csv with the key and
 * saves it through a blob link (a plain link could not send the key).
 * Each queue card of a queue with publicLog also gets a line with its
 * latest signed checkpoint (checkpointLine, a card hook). Every text goes
 * in through textContent.
 */
(function () {
  'use strict';

  var LIST_MS = 5000;
  var SVGNS = 'http://www.w3.org/2000/svg';
  var CHARTS = [
    { field: 'joined', title: 'Joined per minute' },
    { field: 'admitted', title: 'Admitted per minute' },
    { field: 'waiting', title: 'Line at the minute\'s end', gauge: true },
    { field: 'waitP50Ms', second: 'waitP99Ms', title: 'Wait p50, s (p99 dotted)', scale: 1000 }
  ];
  var TOTALS = ['joined', 'admitted', 'consumed', 'expired', 'noShows', 'left', 'abandoned', 'returned',
    'rejectedFull', 'challengeFailed', 'failOpen', 'bypass', 'pushDelivered'];

  var $ = function (id) { return document.getElementById(id); };
  var open = null; /* the queue whose report is shown */
  /* dashboard.js's (loaded first): the admin key it keeps, the element maker */
  var key = window.wrDashboard.key;
  var el = window.wrDashboard.el;

  function get(path) {
    return fetch(path, { headers: { Authorization: 'Bearer ' + key() }, cache: 'no-store' });
  }

  function clock(ms) {
    var d = new Date(ms);
    var p = function (n) { return (n < 10 ? '0' : '') + n; };
    return p(d.getHours()) + ':' + p(d.getMinutes());
  }

  function day(ms) {
    return new Date(ms).toISOString().slice(0, 10);
  }

  function fmt(v) {
    if (v === null || v === undefined) return '-';
    return Math.abs(v) >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10);
  }

  /* The list of reports. */
  var listing = null; /* the list request in flight: one at a time (timer, observer, login) */
  function list() {
    if (!key() || $('board').hidden) return Promise.resolve();
    if (listing) return listing;
    listing = get('/v1/admin/reports').then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (j) {
      if (!j) return;
      var ul = $('report-list');
      ul.textContent = '';
      j.reports.forEach(function (rep) {
        var li = el('li', { 'data-report': rep.queue });
        li.appendChild(el('b', {}, rep.queue));
        li.appendChild(document.createTextNode(' ' + day(rep.from) + ' ' + clock(rep.from) + ' - ' +
          clock(rep.to) + (rep.deleted ? ' (queue deleted)' : '') + ' '));
        var b = el('button', { type: 'button', 'class': 'secondary', 'data-open': rep.queue }, 'Open');
        b.addEventListener('click', function () { show(rep.queue); });
        li.appendChild(b);
        ul.appendChild(li);
      });
      $('no-reports').hidden = j.reports.length > 0;
    }, function () { /* the board says the store's state */ }).then(function () { listing = null; });
    return listing;
  }

  /* One chart: bars (or a line for the waits) of field per minute. */
  function chart(box, ch, minutes) {
    var fig = el('figure', { 'class': 'chart', 'data-chart': ch.field });
    var cap = el('figcaption', { 'class': 'chart-title' });
    cap.appendChild(el('span', {}, ch.title));
    var scale = ch.scale || 1;
    var vals = minutes.map(function (m) { return m[ch.field] === null ? null : m[ch.field] / scale; });
    var vals2 = ch.second ? minutes.map(function (m) { return m[ch.second] === null ? null : m[ch.second] / scale; }) : [];
    var top = 0;
    vals.concat(vals2).forEach(function (v) { if (v !== null && v > top) top = v; });
    var total = 0;
    vals.forEach(function (v) { if (v !== null) total += v; });
    var last = vals.length ? vals[vals.length - 1] : null;
    cap.appendChild(el('span', { 'class': 'chart-now' },
      ch.second ? 'max ' + fmt(top) : ch.gauge ? 'now ' + fmt(last) : 'total ' + fmt(total)));
    fig.appendChild(cap);
    var plot = el('div', { 'class': 'plot' });
    var yaxis = el('div', { 'class': 'yaxis', 'aria-hidden': 'true' });
    yaxis.appendChild(el('span', {}, fmt(top)));
    yaxis.appendChild(el('span', {}, fmt(top / 2)));
    yaxis.appendChild(el('span', {}, '0'));
    plot.appendChild(yaxis);
    var svg = window.wrDashboard.plotSvg(ch.title + ', one value a minute');
    var n = Math.max(minutes.length, 1), w = 600 / n, hi = top > 0 ? top : 1;
    var y = function (v) { return 59 - (v / hi) * 56; };
    [['grid', 2], ['grid', 30], ['axis', 59]].forEach(function (g) {
      var ln = document.createElementNS(SVGNS, 'line');
      ln.setAttribute('class', g[0]);
      ln.setAttribute('x1', '0'); ln.setAttribute('x2', '600');
      ln.setAttribute('y1', String(g[1])); ln.setAttribute('y2', String(g[1]));
      svg.appendChild(ln);
    });
    if (!ch.second) {
      vals.forEach(function (v, i) {
        if (!v) return;
        var r = document.createElementNS(SVGNS, 'rect');
        r.setAttribute('class', 'bar');
        r.setAttribute('x', String(i * w + w * 0.1));
        r.setAttribute('width', String(Math.max(w * 0.8, 0.5)));
        r.setAttribute('y', String(y(v)));
        r.setAttribute('height', String(59 - y(v)));
        svg.appendChild(r);
      });
    } else {
      [[vals, 'series'], [vals2, 'series second']].forEach(function (s) {
        var pts = [];
        s[0].forEach(function (v, i) { if (v !== null) pts.push((i * w + w / 2).toFixed(1) + ',' + y(v).toFixed(1)); });
        var pl = document.createElementNS(SVGNS, 'polyline');
        pl.setAttribute('class', s[1]);
        pl.setAttribute('points', pts.join(' '));
        svg.appendChild(pl);
        pts.forEach(function (p) { /* a dot a minute: a lone minute shows too */
          var xy = p.split(','), d = document.createElementNS(SVGNS, 'rect');
          d.setAttribute('class', 'dot ' + s[1]);
          d.setAttribute('x', String(Number(xy[0]) - 2)); d.setAttribute('width', '4');
          d.setAttribute('y', String(Number(xy[1]) - 2)); d.setAttribute('height', '4');
          svg.appendChild(d);
        });
      });
    }
    plot.appendChild(svg);
    fig.appendChild(plot);
    var xaxis = el('div', { 'class': 'xaxis', 'aria-hidden': 'true' });
    if (minutes.length) {
      xaxis.appendChild(el('span', {}, clock(minutes[0].at)));
      xaxis.appendChild(el('span', {}, clock(minutes[Math.floor(minutes.length / 2)].at)));
      xaxis.appendChild(el('span', {}, clock(minutes[minutes.length - 1].at + 60000)));
    }
    fig.appendChild(xaxis);
    box.appendChild(fig);
  }

  function render(rep) {
    var box = $('report');
    box.hidden = false;
    $('report-title').textContent = 'Report of ' + rep.queue + ', ' + day(rep.from) + ' ' + clock(rep.from) +
      ' - ' + clock(rep.to) + ' (' + rep.minutes.length + (rep.minutes.length === 1 ? ' minute)' : ' minutes)');
    var charts = $('report-charts');
    charts.textContent = '';
    CHARTS.forEach(function (ch) { chart(charts, ch, rep.minutes); });
    var tb = $('report-totals');
    tb.textContent = '';
    TOTALS.forEach(function (k) {
      var tr = el('tr', { 'data-total': k });
      tr.appendChild(el('th', { scope: 'row' }, k));
      tr.appendChild(el('td', {}, String(rep.totals[k])));
      tb.appendChild(tr);
    });
    var f = rep.fairness;
    $('report-fairness').hidden = !f;
    if (f) {
      $('report-fairness').textContent = 'Public log: ' + f.size + ' leaves, ' + f.overtakes +
        ' overtakes, checkpoint ' + String(f.checkpoint).split('\n')[0];
    }
  }

  function show(q) {
    open = q;
    $('report-error').textContent = '';
    return get('/v1/admin/queues/' + encodeURIComponent(q) + '/report').then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error((j && j.error) || String(r.status));
        render(j);
      });
    }).catch(function (e) { $('report-error').textContent = 'Could not read the report: ' + e.message; });
  }

  function downloadCsv() {
    if (!open) return;
    var q = open;
    get('/v1/admin/queues/' + encodeURIComponent(q) + '/report?format=csv').then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return r.blob();
    }).then(function (b) {
      var a = el('a', { href: URL.createObjectURL(b), download: q + '-report.csv' });
      document.body.appendChild(a);
      a.click();
      setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    }).catch(function (e) { $('report-error').textContent = 'Could not download the CSV: ' + e.message; });
  }

  function start() {
    if (!$('reports')) return;
    $('report-csv').addEventListener('click', downloadCsv);
    $('report-refresh').addEventListener('click', function () { if (open) show(open); });
    list();
    setInterval(list, LIST_MS);
    /* the board appears after the login: list at once then */
    new MutationObserver(function () { list(); }).observe($('board'), { attributes: true });
  }

  /* A queue card's public log line (config publicLog): its latest signed
   * checkpoint (GET /v1/queues/{q}/log/checkpoint, public: the tree size
   * and the root hash's start, read every CHECKPOINT_MS), with links to
   * the checkpoint and the log's key for anyone who checks. */
  var CHECKPOINT_MS = 10000;
  function checkpointLine(c, q) {
    var on = !!(c.config && c.config.publicLog);
    if (!on) {
      if (c.logLine) { c.logLine.remove(); c.logLine = null; }
      return;
    }
    if (!c.logLine) {
      var base = '/v1/queues/' + encodeURIComponent(q.name) + '/log';
      c.logLine = el('p', { 'class': 'log-line', 'data-log': q.name });
      c.logText = el('span', {}, 'Public log: no checkpoint yet');
      c.logLine.appendChild(c.logText);
      c.logLine.appendChild(document.createTextNode(' '));
      c.logLine.appendChild(el('a', { href: base + '/checkpoint', target: '_blank', rel: 'noopener' },
        'checkpoint'));
      c.logLine.appendChild(document.createTextNode(' '));
      c.logLine.appendChild(el('a', { href: '/v1/log/key', target: '_blank', rel: 'noopener' }, 'key'));
      c.el.insertBefore(c.logLine, c.el.querySelector('.controls') || null);
      c.logAt = 0;
    }
    if (Date.now() - c.logAt < CHECKPOINT_MS) return;
    c.logAt = Date.now();
    fetch('/v1/queues/' + encodeURIComponent(q.name) + '/log/checkpoint', { cache: 'no-store' })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) {
        if (!t || !c.logText) return;
        var lines = t.split('\n'); /* origin, size, root, blank, signature */
        c.logText.textContent = 'Public log: ' + lines[1] + ' events signed, root ' +
          String(lines[2]).slice(0, 16) + '...';
        c.logLine.setAttribute('data-size', lines[1]);
      }, function () { /* the next fill tries again */ });
  }
  var D = window.wrDashboard;
  if (D && D.onCard) D.onCard(checkpointLine);

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
