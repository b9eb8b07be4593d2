/*
 * codes.js - the dashboard's priority groups and presale codes (docs/API.md
 * 1.3, "Priority groups and presale codes"). A file of its own beside
 * dashboard.js, as report.js, using only what dashboard.js hands it
 * (window.wrDashboard: the API call with the admin key, the element maker,
 * the card hook that runs after each card's fill, the login when the key
 * is refused).
 *
 * A queue whose config has groups gets a panel in its card (removed when
 * its groups go):
 *   - Lines: each line in admission order (the groups in priority order,
 *     then the standard line with its least share, standardShare) with
 *     its people waiting and admitted in all (stats.groups), updated with
 *     the card every second;
 *   - Presale codes: per group the codes issued, the uses spent and the
 *     codes revoked (GET .../codes: when the panel appears, every
 *     CODES_MS, and after each change); a form that creates codes (group,
 *     count, uses per code, an optional expiry in the operator's local
 *     time: POST .../codes) and shows the new codes once - the server
 *     keeps only their hash - with Copy (the clipboard), Download (a .txt,
 *     one code a line) and Hide; and revoking one code after a confirm()
 *     (DELETE .../codes/{code}: 204 says it is revoked, 404 CODE_NOT_FOUND
 *     that there is no such code).
 * Numbers go to the server as typed (a number when they read as one), so
 * bad input is refused there and its error (code, field, message) shown in
 * the panel. Every text goes in through textContent.
 */
(function () {
  'use strict';

  var CODES_MS = 10000; /* the code counts are read again this often */
  var D = window.wrDashboard;
  if (!D || !D.onCard) return;
  var el = D.el;

  function path(c, rest) {
    return '/v1/admin/queues/' + encodeURIComponent(c.name) + '/codes' + (rest || '');
  }

  /* "Failed: 400 BAD_REQUEST: count must be ..." from an API answer */
  function failure(what, r) {
    var b = r.body || {};
    return what + ': ' + r.status + (b.error ? ' ' + b.error : '') +
      (b.message ? ': ' + (typeof b.field === 'string' ? b.field + ' ' : '') + b.message : '');
  }

  /* a whole number as typed: a number when it reads as one, else the text */
  function asNumber(raw) {
    var v = raw.trim();
    return /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(v) ? Number(v) : v;
  }

  function labelled(text, input) {
    var l = el('label', { 'class': 'codes-field' });
    l.appendChild(el('span', {}, text));
    l.appendChild(input);
    return l;
  }

  /* a table with a caption and the given column heads; returns its tbody */
  function table(cls, caption, heads) {
    var t = el('table', { 'class': 'totals ' + cls });
    t.appendChild(el('caption', {}, caption));
    var tr = el('tr', {});
    heads.forEach(function (h, i) { tr.appendChild(el('th', { scope: 'col', 'class': i ? 'n' : '' }, h)); });
    var thead = el('thead', {});
    thead.appendChild(tr);
    t.appendChild(thead);
    var body = el('tbody', {});
    t.appendChild(body);
    return { table: t, body: body };
  }

  /* rows of body, one per name (data-KEY=name), each with the fields'
   * cells; made again only when the names change */
  function rows(body, key, names, fields, label) {
    var have = Array.prototype.map.call(body.children, function (r) { return r.getAttribute('data-' + key); });
    if (have.join('\n') !== names.join('\n')) {
      body.textContent = '';
      names.forEach(function (n) {
        var tr = el('tr', {});
        tr.setAttribute('data-' + key, n);
        tr.appendChild(el('th', { scope: 'row' }, label ? label(n) : n));
        fields.forEach(function (f) { tr.appendChild(el('td', { 'data-field': f }, '-')); });
        body.appendChild(tr);
      });
    }
    return body.children;
  }

  function setCells(tr, values) {
    for (var f in values) {
      if (!Object.prototype.hasOwnProperty.call(values, f)) continue;
      var td = tr.querySelector('[data-field="' + f + '"]');
      var s = typeof values[f] === 'number' ? String(values[f]) : '-';
      if (td && td.textContent !== s) td.textContent = s;
    }
  }

  function makePanel(c) {
    var p = { box: el('section', { 'class': 'q-groups', 'data-field': 'groups', 'aria-label': 'Priority groups of ' + c.name }) };
    p.box.appendChild(el('h3', {}, 'Priority lines'));
    p.lines = table('lines', 'Lines in admission order', ['Line', 'Waiting', 'Admitted']);
    p.box.appendChild(p.lines.table);
    p.share = el('p', { 'class': 'q-share', 'data-field': 'standard-share' });
    p.box.appendChild(p.share);

    p.box.appendChild(el('h3', {}, 'Presale codes'));
    p.codes = table('codes', 'Codes per group', ['Group', 'Issued', 'Uses spent', 'Revoked']);
    p.box.appendChild(p.codes.table);

    var create = el('form', { 'class': 'controls codes-create', 'data-form': 'create-codes', novalidate: '' });
    p.group = el('select', { 'data-field': 'code-group' });
    p.count = el('input', { type: 'number', min: '1', max: '100000', step: '1', value: '10', 'data-field': 'code-count' });
    p.uses = el('input', { type: 'number', min: '1', max: '1000000', step: '1', value: '1', 'data-field': 'code-uses' });
    p.expires = el('input', { type: 'datetime-local', 'data-field': 'code-expires' });
    create.appendChild(labelled('Group', p.group));
    create.appendChild(labelled('Codes', p.count));
    create.appendChild(labelled('Uses each', p.uses));
    create.appendChild(labelled('Expires (optional)', p.expires));
    create.appendChild(el('button', { type: 'submit', 'data-action': 'create-codes' }, 'Create codes'));
    p.box.appendChild(create);

    /* the new codes, shown once */
    p.fresh = el('div', { 'class': 'codes-new', 'data-field': 'codes-new' });
    p.fresh.hidden = true;
    p.freshTitle = el('p', { 'data-field': 'codes-new-title' });
    p.list = el('textarea', { readonly: '', rows: '6', 'aria-label': 'The new codes, one a line', 'data-field': 'codes-list' });
    var actions = el('div', { 'class': 'controls' });
    var bCopy = el('button', { type: 'button', 'data-action': 'copy-codes' }, 'Copy');
    var bSave = el('button', { type: 'button', 'data-action': 'download-codes' }, 'Download .txt');
    var bHide = el('button', { type: 'button', 'class': 'secondary', 'data-action': 'hide-codes' }, 'Hide');
    p.copied = el('span', { 'class': 'count', 'role': 'status', 'data-field': 'codes-copied' });
    actions.appendChild(bCopy); actions.appendChild(bSave); actions.appendChild(bHide); actions.appendChild(p.copied);
    p.fresh.appendChild(p.freshTitle);
    p.fresh.appendChild(p.list);
    p.fresh.appendChild(actions);
    p.box.appendChild(p.fresh);

    var revoke = el('form', { 'class': 'controls codes-revoke', 'data-form': 'revoke-code' });
    p.revoke = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', 'data-field': 'revoke-input' });
    revoke.appendChild(labelled('Code to revoke', p.revoke));
    revoke.appendChild(el('button', { type: 'submit', 'data-action': 'revoke-code' }, 'Revoke code'));
    p.box.appendChild(revoke);
    p.said = el('p', { 'class': 'q-said', 'role': 'status', 'data-field': 'codes-said' });
    p.error = el('p', { 'class': 'error', 'role': 'alert', 'data-field': 'codes-error' });
    p.box.appendChild(p.said);
    p.box.appendChild(p.error);

    p.loading = false;
    p.readAt = 0;
    p.codesNow = [];
    p.fileName = '';

    create.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var body = { group: p.group.value, count: asNumber(p.count.value), uses: asNumber(p.uses.value) };
      if (p.expires.value) {
        var at = new Date(p.expires.value).getTime();
        if (isNaN(at)) { p.error.textContent = 'The expiry is not a date and time.'; return; }
        body.expiresAt = at;
      }
      p.error.textContent = '';
      p.said.textContent = '';
      D.api('POST', path(c), body).then(function (r) {
        if (r.status === 401) { D.refused(); return; }
        if (r.status !== 201 || !r.body || !Array.isArray(r.body.codes)) {
          p.error.textContent = failure('Could not create the codes', r);
          return;
        }
        showFresh(c, p, body.group, r.body.codes);
        readCodes(c, p);
      }, function () { p.error.textContent = 'Could not create the codes: no answer'; });
    });
    bCopy.addEventListener('click', function () {
      var text = p.codesNow.join('\n');
      var done = function () { p.copied.textContent = 'Copied ' + p.codesNow.length + '.'; };
      var fallback = function () {
        p.list.focus();
        p.list.select();
        try { if (document.execCommand('copy')) { done(); return; } } catch (e) { /* below */ }
        p.copied.textContent = 'Select the list and copy it.';
      };
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, fallback);
      else fallback();
    });
    bSave.addEventListener('click', function () {
      var b = new Blob([p.codesNow.join('\n') + '\n'], { type: 'text/plain' });
      var url = URL.createObjectURL(b);
      var a = el('a', { href: url, download: p.fileName, hidden: '' });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
    });
    bHide.addEventListener('click', function () {
      p.codesNow = [];
      p.list.value = '';
      p.fresh.hidden = true;
    });
    revoke.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var code = p.revoke.value.replace(/\s+/g, '');
      p.error.textContent = '';
      p.said.textContent = '';
      if (!code) { p.revoke.focus(); return; }
      if (!window.confirm('Revoke the code ' + code + ' of "' + c.name + '"? Nobody can join with it any more; ' +
        'people already in line with it keep their places.')) return;
      D.api('DELETE', path(c, '/' + encodeURIComponent(code))).then(function (r) {
        if (r.status === 401) { D.refused(); return; }
        if (r.status === 204) {
          p.said.textContent = 'Revoked ' + code + '.';
          p.revoke.value = '';
          readCodes(c, p);
        } else if (r.status === 404 && r.body && r.body.error === 'CODE_NOT_FOUND') {
          p.error.textContent = 'No such code: ' + code + '.';
        } else {
          p.error.textContent = failure('Could not revoke the code', r);
        }
      }, function () { p.error.textContent = 'Could not revoke the code: no answer'; });
    });
    return p;
  }

  /* the codes just created: shown once, with what to do with them */
  function showFresh(c, p, group, codes) {
    p.codesNow = codes.filter(function (x) { return typeof x === 'string'; });
    p.fileName = c.name + '-' + group + '-codes.txt';
    p.freshTitle.textContent = p.codesNow.length + ' new code' + (p.codesNow.length === 1 ? '' : 's') +
      ' for ' + group + '. Shown only now: the server keeps only their hash. Copy or download them before you leave.';
    p.list.value = p.codesNow.join('\n');
    p.copied.textContent = '';
    p.fresh.hidden = false;
  }

  /* GET .../codes: issued, uses spent, revoked per group */
  function readCodes(c, p) {
    if (p.loading) return;
    p.loading = true;
    p.readAt = Date.now();
    D.api('GET', path(c)).then(function (r) {
      p.loading = false;
      if (r.status === 401) { D.refused(); return; }
      var g = r.status === 200 && r.body && r.body.groups && typeof r.body.groups === 'object' ? r.body.groups : null;
      if (!g) {
        p.error.textContent = failure('Could not read the codes', r);
        return;
      }
      if (/^Could not read the codes/.test(p.error.textContent)) p.error.textContent = '';
      var names = groupNames(c).filter(function (n) { return n !== 'standard'; });
      Object.keys(g).forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); });
      var trs = rows(p.codes.body, 'codes', names, ['issued', 'usesSpent', 'revoked']);
      for (var i = 0; i < trs.length; i++) {
        var v = g[names[i]] || {};
        setCells(trs[i], { issued: v.issued || 0, usesSpent: v.usesSpent || 0, revoked: v.revoked || 0 });
      }
    }, function () { p.loading = false; });
  }

  /* the config's groups in priority order */
  function groupNames(c) {
    var gs = c.config && Array.isArray(c.config.groups) ? c.config.groups : [];
    return gs.map(function (g) { return g && typeof g.name === 'string' ? g.name : ''; }).filter(Boolean);
  }

  function fill(c, q) {
    var names = groupNames(c);
    if (!names.length) {
      if (c.groups) { c.groups.box.remove(); c.groups = null; }
      return;
    }
    var p = c.groups;
    if (!p) {
      p = c.groups = makePanel(c);
      var before = c.el.querySelector('.controls');
      c.el.insertBefore(p.box, before || null);
    }
    /* the group select: the config's groups */
    var opts = Array.prototype.map.call(p.group.options, function (o) { return o.value; });
    if (opts.join('\n') !== names.join('\n')) {
      var was = p.group.value;
      p.group.textContent = '';
      names.forEach(function (n) { p.group.appendChild(el('option', { value: n }, n)); });
      if (names.indexOf(was) >= 0) p.group.value = was;
    }
    /* the lines: groups in order, then the standard line */
    var st = (q.stats && q.stats.groups) || {};
    var lines = names.concat(['standard']);
    var trs = rows(p.lines.body, 'line', lines, ['waiting', 'admittedTotal'],
      function (n) { return n === 'standard' ? 'standard (no code)' : n; });
    for (var i = 0; i < trs.length; i++) {
      var v = st[lines[i]] || {};
      setCells(trs[i], { waiting: v.waiting, admittedTotal: v.admittedTotal });
    }
    var share = typeof c.config.standardShare === 'number' ? c.config.standardShare : 0.2;
    p.share.textContent = 'The standard line gets at least ' + Math.round(share * 1000) / 10 +
      ' % of the admissions while anyone waits in it; the groups go first with the rest.';
    if (!p.loading && Date.now() - p.readAt >= CODES_MS) readCodes(c, p);
  }

  D.onCard(fill);
})();
