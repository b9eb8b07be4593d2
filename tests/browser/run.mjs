#!/usr/bin/env node
/*
 * run.mjs - browser tests of the queue page (GET /q/{queue}) and the
 * operator dashboard (GET /admin): playwright-core driving Debian's
 * chromium (headless), against a waitroomd this runner starts itself
 * (memory store, cookie identity, a free loopback port).
 *
 *   node tests/browser/run.mjs --waitroomd build/waitroomd [--only NAME]
 *                              [--update-docs]
 *
 * Each test creates its own queue through the admin API, so the tests do not
 * share state. Other people in line are made with fetch() joins without a
 * cookie (each one is a new visitor). The admitted user lands on a tiny
 * target server of ours, which checks the wr_token_{queue} cookie the
 * browser sends with waitroomd's tokens/verify. Waiting is always "until a
 * condition holds, with a deadline"; the one fixed window is the second
 * after a pause in which admittedTotal must not grow.
 *
 * Screenshots go to tests/artifacts/ (gitignored); --update-docs also
 * copies one of each page to docs/img/ for the README (scripts/screenshots.sh
 * runs it and records what the pictures were taken of).
 * Prints "N passed, N failed" and exits 1 on any failure.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

import {
  finishRun, launchChromium, loadPlaywright, openContext, pageRunnerArgs, runTests, sleep, startWaitroomd, stopWaitroomd,
  waitFor
} from './common.mjs';

/* ---------- arguments ---------- */

const { WAITROOMD, ONLY, UPDATE_DOCS, ARTIFACTS, DOCS_IMG } = pageRunnerArgs('run.mjs');

/* ---------- helpers ---------- */

function startServer(adminKey, secret, pushHost) {
  return startWaitroomd(WAITROOMD, ['--listen', '127.0.0.1:0', '--store', 'memory', '--admin-key', adminKey,
    '--token-secret', secret, '--log-level', 'warn',
    '--push-subject', 'mailto:ops@shop.example', '--push-allow-host', pushHost]);
}

/* A stand-in push service: records every POST (path, headers, body) and
 * answers 201, or 410 Gone for a path under /gone/. */
function startPushService() {
  return new Promise((resolve) => {
    const got = [];
    const srv = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        got.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks), at: Date.now() });
        const st = req.method !== 'POST' ? 405 : req.url.startsWith('/gone/') ? 410 : 201;
        res.writeHead(st, { 'Content-Length': '0' });
        res.end();
      });
    });
    srv.listen(0, '127.0.0.1', () => resolve({ srv, got, host: `127.0.0.1:${srv.address().port}`,
      base: `http://127.0.0.1:${srv.address().port}` }));
  });
}

/* RFC 8291's receiver: the plaintext of a one-record aes128gcm body. */
function pushDecrypt(body, ecdh, auth) {
  const salt = body.subarray(0, 16), idlen = body[20], asPub = body.subarray(21, 21 + idlen);
  const ct = body.subarray(21 + idlen);
  const secret = ecdh.computeSecret(asPub);
  const hk = (s, ikm, info, n) => Buffer.from(crypto.hkdfSync('sha256', ikm, s, info, n));
  const ikm = hk(auth, secret, Buffer.concat([Buffer.from('WebPush: info\0'), ecdh.getPublicKey(), asPub]), 32);
  const cek = hk(salt, ikm, Buffer.from('Content-Encoding: aes128gcm\0'), 16);
  const nonce = hk(salt, ikm, Buffer.from('Content-Encoding: nonce\0'), 12);
  const d = crypto.createDecipheriv('aes-128-gcm', cek, nonce);
  d.setAuthTag(ct.subarray(ct.length - 16));
  const plain = Buffer.concat([d.update(ct.subarray(0, ct.length - 16)), d.final()]);
  let end = plain.length - 1;
  while (end > 0 && plain[end] === 0) end--;
  assert.equal(plain[end], 2, 'the last record\'s delimiter');
  return JSON.parse(plain.subarray(0, end).toString());
}

const stopServer = stopWaitroomd;

/* The protected service: GET /landing?q=Q checks the wr_token_Q cookie the
 * browser sent with waitroomd's tokens/verify and shows the verdict. */
function startTarget(wr) {
  return new Promise((resolve) => {
    const srv = http.createServer(async (req, res) => {
      const u = new URL(req.url, 'http://x');
      if (u.pathname !== '/landing') { res.writeHead(404); res.end('no'); return; }
      const q = u.searchParams.get('q') || '';
      let verdict = 'error';
      try {
        const r = await fetch(`${wr.base}/v1/queues/${encodeURIComponent(q)}/tokens/verify`,
          { headers: { cookie: req.headers.cookie || '' } });
        verdict = String(r.status);
      } catch (e) { verdict = 'error ' + e.message; }
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>shop</title><h1 id="landing">shop</h1><p id="verdict">${verdict}</p>`);
    });
    srv.listen(0, '127.0.0.1', () => resolve({ srv, base: `http://127.0.0.1:${srv.address().port}` }));
  });
}

function makeApi(base, adminKey) {
  async function call(method, p, body, headers = {}) {
    const h = { ...headers };
    if (body !== undefined) h['Content-Type'] = 'application/json';
    const r = await fetch(base + p, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = null; }
    return { status: r.status, body: json, headers: r.headers };
  }
  const admin = (method, p, body) => call(method, p, body, { Authorization: 'Bearer ' + adminKey });
  return {
    call,
    admin,
    async createQueue(name, cfg) {
      const r = await admin('PUT', `/v1/admin/queues/${name}`, cfg);
      assert.equal(r.status, 200, `PUT queue ${name}: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async stats(name) {
      const r = await admin('GET', `/v1/admin/queues/${name}`);
      assert.equal(r.status, 200, `GET queue ${name}: ${JSON.stringify(r.body)}`);
      return r.body.stats;
    },
    async config(name) {
      const r = await admin('GET', `/v1/admin/queues/${name}`);
      assert.equal(r.status, 200);
      return r.body.config;
    },
    /* A new visitor joins (no cookie): returns the body and its wr_vid cookie. */
    async joinNew(name) {
      const r = await call('POST', `/v1/queues/${name}/entries`);
      const all = typeof r.headers.getSetCookie === 'function' ? r.headers.getSetCookie()
        : (r.headers.get('set-cookie') || '').split(/,(?=\s*[A-Za-z0-9_]+=)/).map((c) => c.trim());
      const set = all.find((c) => c.startsWith('wr_vid='));
      return { status: r.status, body: r.body, cookie: set ? set.split(';')[0] : null };
    }
  };
}

/* ---------- the tests ---------- */

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

let browser, wr, target, api, adminKey, pushSvc;
const problems = []; /* CSP violations and page errors, per test */

const newContext = (opts = {}) => openContext(browser, problems, opts);

const text = (page, sel) => page.locator(sel).first().textContent();
const shot = async (page, name) => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name + '.png');
  await page.screenshot({ path: file, fullPage: true });
  return file;
};

test('queue page: position N, decreasing, admitted, lands on target with the token cookie', async () => {
  const q = 'sale-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 2, paused: true, targetUrl: `${target.base}/landing?q=${q}` });
  for (let i = 0; i < 5; i++) assert.equal((await api.joinNew(q)).body.position, i + 1);
  const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en-US,en;q=0.9' } });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/q/${q}`);
  assert.equal(await text(page, '#position'), '6');
  assert.equal(await page.locator('#ahead').count(), 0, 'the position is not said again as people ahead');
  assert.equal(await text(page, '#status'), 'Keep this page open. It updates by itself, and you keep your place.');
  assert.equal(await page.getAttribute('#status', 'aria-live'), 'polite');
  assert.equal(await page.getAttribute('.s-waiting .big', 'aria-live'), 'polite', 'the position is what is announced');
  assert.equal(await text(page, '#eta'), 'paused for now');
  assert.equal(await page.locator('#progress').evaluate((e) => e.value), 0);
  await page.waitForFunction(() => /\d/.test(document.getElementById('updated').textContent));
  await shot(page, 'queue-en-phone');

  /* admission starts: record every position the page shows until it leaves */
  const seen = [6];
  const pat = await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false });
  assert.equal(pat.status, 200);
  const landed = page.waitForURL(`${target.base}/landing?q=${q}`, { timeout: 20000 });
  await waitFor(async () => {
    if (page.url().startsWith(target.base)) return true;
    const p = Number(await page.evaluate(() => {
      const e = document.getElementById('position');
      return e ? e.textContent : 'NaN';
    }).catch(() => 'NaN'));
    if (Number.isFinite(p) && p !== seen[seen.length - 1] && page.url().startsWith(wr.base)) {
      seen.push(p);
      const bar = await page.evaluate(() => {
        const e = document.getElementById('progress');
        return e ? e.value : null;
      }).catch(() => null);
      if (bar !== null) assert.ok(bar > 0 && bar <= 100, 'progress moves: ' + bar);
    }
    return false;
  }, 20000, 'the page to reach the target');
  await landed;
  assert.ok(seen.length >= 2, 'saw the position decrease: ' + seen.join(' > '));
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] < seen[i - 1], 'never moves back: ' + seen.join(' > '));
  /* the browser sent a live token: tokens/verify answered 204 */
  assert.equal(await text(page, '#verdict'), '204');
  const cookie = (await ctx.cookies(wr.base)).find((c) => c.name === 'wr_token_' + q);
  assert.ok(cookie, 'cookie wr_token_' + q + ' set');
  assert.match(cookie.value, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  const claims = JSON.parse(Buffer.from(cookie.value.split('.')[1], 'base64url').toString());
  assert.equal(claims.aud, q);
  assert.equal(claims.iss, 'waitroom');
  /* the five ahead were admitted first (FIFO), then this user */
  assert.equal((await api.stats(q)).admittedTotal, 6);
  await ctx.close();
});

test('two tabs of one context show the same position; a second context is behind', async () => {
  const q = 'tabs-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 1, paused: true });
  await api.joinNew(q);
  const a = await newContext();
  const tab1 = await a.newPage();
  await tab1.goto(`${wr.base}/q/${q}`);
  const tab2 = await a.newPage();
  await tab2.goto(`${wr.base}/q/${q}`);
  const b = await newContext();
  const other = await b.newPage();
  await other.goto(`${wr.base}/q/${q}`);
  assert.equal(await text(tab1, '#position'), '2');
  assert.equal(await text(tab2, '#position'), '2');
  assert.equal(await text(other, '#position'), '3');
  /* after each page has polled (retryAfterMs ~1 s) they still agree */
  const polled = (p) => p.waitForResponse((r) => r.url().endsWith(`/v1/queues/${q}/entries/me`) && r.status() === 200, { timeout: 5000 });
  await Promise.all([polled(tab1), polled(tab2), polled(other)]);
  assert.equal(await text(tab1, '#position'), '2');
  assert.equal(await text(tab2, '#position'), '2');
  assert.equal(await text(other, '#position'), '3');
  assert.equal(await text(other, '#waiting'), '3');
  assert.equal((await api.stats(q)).waiting, 3);
  await a.close();
  await b.close();
});

test('dashboard: right counts, pause from it stops admissions, rate and enable controls', async () => {
  const q = 'dash-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 5, paused: true });
  for (let i = 0; i < 20; i++) await api.joinNew(q);
  const ctx = await newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.accept(); });
  await page.goto(`${wr.base}/admin`);
  await page.fill('#key', 'wrong-key');
  await page.click('#login button[type=submit]');
  await waitFor(async () => /refused/.test(await text(page, '#login-error')), 5000, 'a wrong key to be refused');
  await page.fill('#key', adminKey);
  await page.click('#login button[type=submit]');
  const card = page.locator(`article[data-queue="${q}"]`);
  const field = (f) => card.locator(`[data-field="${f}"]`).textContent();
  await waitFor(async () => (await field('waiting')) === '20', 5000, 'waiting = 20 on the dashboard');
  assert.equal(await field('active'), '0');
  assert.equal(await field('admittedTotal'), '0');
  assert.equal(await field('paused'), 'paused');
  assert.equal(await field('enabled'), 'enabled');
  assert.equal(await text(page, '#store-state'), 'ready');
  assert.match(await text(page, '#breaker-state'), /^(closed|open|half-open|n\/a)$/);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('wr_admin_key')), adminKey);

  /* resume from the dashboard: admissions start */
  await card.locator('[data-action="toggle-paused"]').click();
  await waitFor(async () => (await api.stats(q)).admittedTotal >= 5, 10000, 'admissions after resume');
  assert.match(dialogs[dialogs.length - 1], /Resume admission/);
  await waitFor(async () => Number(await field('admittedTotal')) >= 5, 5000, 'the dashboard to show admissions');

  /* pause from the dashboard: admittedTotal stops growing */
  const patched = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/v1/admin/queues/${q}`));
  await card.locator('[data-action="toggle-paused"]').click();
  assert.equal((await patched).status(), 200);
  assert.match(dialogs[dialogs.length - 1], /Pause admission/);
  const a1 = (await api.stats(q)).admittedTotal;
  assert.ok(a1 < 20, 'paused before the line ran out: ' + a1);
  await sleep(1200);
  const st = await api.stats(q);
  assert.equal(st.admittedTotal, a1, 'no admission in the 1.2 s after pause');
  assert.equal(st.waiting + st.admittedTotal, 20);
  /* the dashboard shows the same numbers as the API */
  await waitFor(async () => (await field('paused')) === 'paused' &&
    (await field('waiting')) === String(st.waiting) && (await field('active')) === String(st.active) &&
    (await field('admittedTotal')) === String(st.admittedTotal), 5000, 'dashboard = API after pause');
  await waitFor(async () => (await field('admittedPerSec')) === '0.0', 5000, 'admitted/s back to 0');
  /* the chart has points */
  await waitFor(async () => ((await card.locator('[data-chart="waiting"] polyline').getAttribute('points')) || '').split(' ').length >= 2,
    5000, 'the line-length chart');
  await shot(page, 'dashboard');

  /* a dismissed dialog changes nothing */
  page.removeAllListeners('dialog');
  page.once('dialog', (d) => d.dismiss());
  await card.locator('[data-action="toggle-enabled"]').click();
  await sleep(300); /* a PATCH would have been sent at once */
  assert.equal((await api.config(q)).enabled, true);
  page.on('dialog', (d) => { dialogs.push(d.message()); d.accept(); });

  /* change the rate */
  await card.locator('[data-field="rate-input"]').fill('7.5');
  const rated = page.waitForResponse((r) => r.request().method() === 'PATCH');
  await card.locator('[data-action="set-rate"]').click();
  assert.equal((await rated).status(), 200);
  assert.equal((await api.config(q)).admitPerSecond, 7.5);
  await waitFor(async () => (await field('rate')) === '7.5/s', 5000, 'the rate pill');

  /* the join challenge's difficulty, after a confirmation */
  assert.equal(await card.locator('[data-field="bits-input"]').inputValue(), '0');
  await card.locator('[data-field="bits-input"]').fill('18');
  const bitsSet = page.waitForResponse((r) => r.request().method() === 'PATCH');
  await card.locator('[data-action="set-bits"]').click();
  assert.equal((await bitsSet).status(), 200);
  assert.match(dialogs[dialogs.length - 1], /18-bit challenge/);
  assert.equal((await api.config(q)).challengeBits, 18);
  assert.equal((await api.joinNew(q)).body.error, 'CHALLENGE_REQUIRED');
  await card.locator('[data-field="bits-input"]').fill('0');
  const bitsOff = page.waitForResponse((r) => r.request().method() === 'PATCH');
  await card.locator('[data-action="set-bits"]').click();
  assert.equal((await bitsOff).status(), 200);
  assert.equal((await api.config(q)).challengeBits, 0);

  /* disable the line: joins pass through */
  const disabled = page.waitForResponse((r) => r.request().method() === 'PATCH');
  await card.locator('[data-action="toggle-enabled"]').click();
  assert.equal((await disabled).status(), 200);
  assert.equal((await api.config(q)).enabled, false);
  assert.equal((await api.joinNew(q)).body.status, 'passthrough');
  await waitFor(async () => (await field('enabled')) === 'disabled', 5000, 'the disabled pill');
  await ctx.close();
});

test('dashboard: the report page lists reports, charts a queue\'s minutes, shows its totals as the API does, downloads the CSV', async () => {
  const q = 'report-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 4, maxQueueSize: 10 });
  for (let i = 0; i < 10; i++) assert.equal((await api.joinNew(q)).status, 200);
  assert.equal((await api.joinNew(q)).status, 429); /* the line is full: rejectedFull */
  await waitFor(async () => (await api.stats(q)).admittedTotal >= 6, 10000, 'admissions');
  await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: true });
  const ctx = await newContext({ viewport: { width: 1280, height: 1400 }, acceptDownloads: true });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/admin#key=${adminKey}`);
  const item = page.locator(`#report-list [data-report="${q}"]`);
  await waitFor(async () => (await item.count()) === 1, 10000, 'the queue in the list of reports');
  await item.locator('button[data-open]').click();
  await waitFor(async () => (await page.locator('#report-totals tr').count()) > 0, 5000, 'the totals');
  const rep = (await api.admin('GET', `/v1/admin/queues/${q}/report`)).body;
  const total = (k) => page.locator(`#report-totals [data-total="${k}"] td`).textContent();
  assert.equal(await total('joined'), '10');
  assert.equal(await total('rejectedFull'), '1');
  assert.equal(await total('admitted'), String(rep.totals.admitted));
  assert.ok(rep.totals.admitted >= 6);
  /* one bar a minute that had joins; the waits drawn as lines */
  assert.ok((await page.locator('[data-chart="joined"] rect.bar').count()) >= 1);
  assert.ok((await page.locator('[data-chart="admitted"] rect.bar').count()) >= 1);
  assert.ok(((await page.locator('[data-chart="waitP50Ms"] polyline.series').first().getAttribute('points')) || '').length > 0);
  assert.match(await text(page, '#report-title'), new RegExp('Report of ' + q));
  /* the CSV, fetched with the key */
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#report-csv')]);
  assert.equal(dl.suggestedFilename(), q + '-report.csv');
  const csv = fs.readFileSync(await dl.path(), 'utf8').split('\r\n');
  assert.equal(csv[0], 'at,joined,admitted,consumed,expired,left,abandoned,returned,rejectedFull,' +
    'challengeFailed,failOpen,bypass,pushDelivered,waiting,away,admitRate,waitP50Ms,waitP90Ms,waitP99Ms');
  /* one row a minute: as many as the report asked before the download, or
   * after it when a minute began in between (the default range ends with
   * the current minute) */
  const after = (await api.admin('GET', `/v1/admin/queues/${q}/report`)).body;
  const rows = csv.filter((l) => l).length - 1;
  assert.ok(rows === rep.minutes.length || rows === after.minutes.length,
    `${rows} CSV rows, the report had ${rep.minutes.length} then ${after.minutes.length} minutes`);
  await page.locator('#reports').screenshot({ path: path.join(ARTIFACTS, 'dashboard-report.png') });
  await ctx.close();
});

test('dashboard: charts come from the server history, at once and after a reload; axes, rate line, time to clear', async () => {
  const q = 'hist-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 2 });
  for (let i = 0; i < 30; i++) await api.joinNew(q);
  /* the server keeps one sample a second from the queue's first tick on */
  await waitFor(async () => {
    const r = await api.admin('GET', `/v1/admin/queues/${q}/history`);
    return r.status === 200 && r.body.t.length >= 6;
  }, 15000, 'six seconds of server history');
  const ctx = await newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/admin`);
  await page.fill('#key', adminKey);
  await page.click('#login button[type=submit]');
  const card = page.locator(`[data-queue="${q}"]`);
  const points = async (chart) => ((await card.locator(`[data-chart="${chart}"] polyline.series`).first()
    .getAttribute('points')) || '').trim().split(' ').filter(Boolean).length;
  /* a page drawing only its own reads would have one or two points now */
  await waitFor(async () => (await points('waiting')) >= 6, 2500, 'six points of history on the first load');
  await page.reload();
  await waitFor(async () => (await points('waiting')) >= 6, 2500, 'six points of history right after a reload');
  await waitFor(async () => (await points('admittedPerSec')) >= 5, 2500, 'the admissions chart after the reload');
  /* the configured rate (2/s) as a dashed line inside the chart, y axis and time axis labelled */
  const rateY = Number(await card.locator('[data-chart="admittedPerSec"] line.rate-line').getAttribute('y1'));
  assert.ok(rateY > 0 && rateY < 60, 'rate line inside the chart: y ' + rateY);
  const yTop = await card.locator('[data-chart="admittedPerSec"] .yaxis span').first().textContent();
  assert.ok(Number(yTop) >= 2, 'y axis top at or above the rate: ' + yTop);
  const xs = await card.locator('[data-chart="waiting"] .xaxis span').allTextContents();
  assert.equal(xs.length, 3);
  for (const x of xs) assert.match(x, /^\d\d:\d\d:\d\d$/);
  /* time to clear = waiting / rate */
  const st = await api.stats(q);
  await waitFor(async () => {
    const ttc = await card.locator('[data-field="timeToClear"]').textContent();
    return /^\d+ s$|^\d+ min \d+ s$/.test(ttc) || (st.waiting === 0 && ttc === '0 s');
  }, 5000, 'a time to clear');
  await shot(page, 'dashboard-history');
  await ctx.close();
});

test('dashboard: an autotuned queue charts the rate in use and the reported latency against the target, says why the rate changed; a fixed-rate one has neither', async () => {
  const hex = crypto.randomBytes(3).toString('hex');
  const q = 'tune-' + hex, fixed = 'fixed-' + hex;
  /* paused with people waiting: the law runs, nobody is admitted */
  await api.createQueue(q, { tickMs: 50, paused: true, admitPerSecond: 40,
    autotune: { minPerSecond: 10, maxPerSecond: 100, targetMs: 500 } });
  await api.createQueue(fixed, { admitPerSecond: 5, paused: true });
  for (let i = 0; i < 5; i++) await api.joinNew(q);
  await api.joinNew(fixed);
  const report = async (latencyMs) => {
    const r = await api.admin('POST', `/v1/queues/${q}/health`, { latencyMs, errorRate: 0 });
    assert.equal(r.status, 204, 'health report: ' + JSON.stringify(r.body));
  };
  /* the rate starts at 40/s; one slow report (1000 ms against 500) cuts it
   * once: x 0.9 x 500 / 1000 = 0.45, never below 0.5 a step: 20/s */
  await waitFor(async () => (await api.stats(q)).admitRateTarget === 40, 5000, 'the starting rate');
  await report(1000);
  await waitFor(async () => (await api.stats(q)).admitRateTarget === 20, 8000, 'the cut to 20/s');
  /* then reports in the dead band (0.8 x 500 <= 450 <= 500): it holds at 20 */
  await report(450);
  const keep = setInterval(() => { report(450).catch(() => {}); }, 500);
  const ctx = await newContext({ viewport: { width: 1280, height: 1400 } });
  try {
    const hpath = `/v1/admin/queues/${q}/history`;
    await waitFor(async () => {
      const h = (await api.admin('GET', hpath)).body;
      const n = h.t.length;
      return n >= 3 && Array.isArray(h.latencyMs) && h.latencyMs[n - 1] === 450 && h.rateInUse[n - 1] === 20 &&
        h.targetMs[n - 1] === 500;
    }, 8000, 'the server history to carry the rate in use and the latency');
    const fh = (await api.admin('GET', `/v1/admin/queues/${fixed}/history`)).body;
    assert.equal(fh.rateInUse, undefined, 'a fixed-rate queue has no rateInUse column');
    assert.equal(fh.autotune, null);

    const page = await ctx.newPage();
    await page.goto(`${wr.base}/admin#key=${adminKey}`);
    const card = page.locator(`article[data-queue="${q}"]`);
    const fcard = page.locator(`article[data-queue="${fixed}"]`);
    const pts = async (chart) => ((await card.locator(`[data-chart="${chart}"] polyline.series`).first()
      .getAttribute('points')) || '').trim().split(' ').filter(Boolean).map((p) => p.split(',').map(Number));
    const caption = (chart) => card.locator(`[data-chart="${chart}"] figcaption span`).nth(1).textContent();
    const ys = async (chart, cls) => (await card.locator(`[data-chart="${chart}"] line.${cls}`).evaluateAll(
      (ls) => ls.map((l) => Number(l.getAttribute('y1')))));
    await waitFor(async () => (await pts('rateInUse')).length >= 2 && (await pts('latencyMs')).length >= 2 &&
      /^450 /.test(await caption('latencyMs')) && /^20\.0 /.test(await caption('rateInUse')), 5000,
      'the two autotune charts with their newest values');
    /* the captions (the charts' text, beside the SVG's label) carry the values */
    assert.match(await caption('rateInUse'), /^20\.0 \(max \d+\.\d\), start 40\/s, min 10\/s, max 100\/s$/);
    assert.match(await caption('latencyMs'), /^450 \(max \d+\), target 500 ms$/);
    assert.equal(await card.locator('[data-chart="rateInUse"] svg').getAttribute('role'), 'img');
    assert.equal(await card.locator('[data-chart="rateInUse"] svg').getAttribute('aria-label'),
      'Rate in use/s (start dashed, min and max dotted), last 15 minutes');
    assert.equal(await card.locator('[data-chart="latencyMs"] svg').getAttribute('aria-label'),
      'Reported latency, ms (target dashed), last 15 minutes');
    /* the lines where the values are: higher is up (smaller y) */
    const [target] = await ys('latencyMs', 'target-line');
    const lat = await pts('latencyMs');
    assert.ok(target > 0 && target < 60, 'target line inside the chart: ' + target);
    assert.ok(lat[lat.length - 1][1] > target, '450 ms drawn below the 500 ms target: ' + lat[lat.length - 1][1] + ' vs ' + target);
    const [start] = await ys('rateInUse', 'rate-line');
    const [lo, hi] = await ys('rateInUse', 'bound-line');
    const rate = await pts('rateInUse');
    const now = rate[rate.length - 1][1];
    assert.ok(hi > 0 && hi < start && start < now && now < lo && lo < 60,
      `max 100 above start 40 above the rate 20 above min 10: ${hi} ${start} ${now} ${lo}`);
    /* the line of text: the rate in use and why it last changed */
    const atText = await card.locator('[data-field="autotune"]').textContent();
    assert.match(atText, /rate in use 20\.0\/s \(min 10\/s, max 100\/s, target 500 ms; latency 450 ms\)/);
    assert.match(atText, /Last change at \d\d:\d\d:\d\d, from 40\.0\/s to 20\.0\/s: lowered: slower than the target \(latency 1000 ms, errorRate 0\)\./);
    assert.equal(await card.locator('[data-field="rate"]').textContent(), 'auto 20.0/s');
    /* the admissions chart's dashed line is the rate in use there, not where it started */
    await waitFor(async () => /rate in use 20\.0\/s$/.test(await caption('admittedPerSec')) ||
      (await caption('admittedPerSec')) === '-', 3000, 'the admissions chart against the rate in use');
    /* the fixed-rate queue: no autotune chart, no autotune line */
    await waitFor(async () => (await fcard.locator('[data-chart="admittedPerSec"]').count()) === 1, 3000, 'the fixed card');
    assert.equal(await fcard.locator('[data-chart="rateInUse"]').count(), 0);
    assert.equal(await fcard.locator('[data-chart="latencyMs"]').count(), 0);
    assert.equal(await fcard.locator('[data-field="autotune"]').isHidden(), true);
    assert.equal(await fcard.locator('[data-field="rate"]').textContent(), '5/s');
    /* the autotuned queue's card alone (the page holds every test's queues) */
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await card.screenshot({ path: path.join(ARTIFACTS, 'dashboard-autotune.png') });
    /* autotune turned off: its charts and line go */
    const r = await api.admin('PATCH', `/v1/admin/queues/${q}`, { autotune: null });
    assert.equal(r.status, 200);
    await waitFor(async () => (await card.locator('[data-chart="rateInUse"]').count()) === 0 &&
      (await card.locator('[data-chart="latencyMs"]').count()) === 0 &&
      (await card.locator('[data-field="autotune"]').isHidden()), 5000, 'the autotune charts removed');
  } finally {
    clearInterval(keep);
    await ctx.close();
  }
});

test('Korean and English, the language switch, a narrow phone screen', async () => {
  const q = 'lang-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 1, paused: true });
  await api.joinNew(q);
  await api.joinNew(q);
  const ko = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'ko-KR,ko;q=0.9,en;q=0.8' }, viewport: { width: 360, height: 740 } });
  const page = await ko.newPage();
  await page.goto(`${wr.base}/q/${q}`);
  assert.equal(await page.getAttribute('html', 'lang'), 'ko');
  assert.equal(await text(page, '#heading'), '대기열에 계십니다');
  assert.equal(await text(page, '#status'), '이 페이지를 열어 두세요. 자동으로 갱신되며 순서는 유지됩니다.');
  assert.equal(await text(page, '#position'), '3');
  assert.equal(await text(page, '#eta'), '일시 정지됨');
  assert.equal(await text(page, '#leave'), '대기열 나가기');
  /* nothing wider than the phone */
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    'no horizontal scrolling at 360 px');
  await shot(page, 'queue-ko-phone');

  /* the switch re-renders in place and is remembered */
  assert.equal(await page.inputValue('#lang-select'), 'ko'); /* the current choice */
  await page.selectOption('#lang-select', 'en');
  assert.equal(await text(page, '#heading'), 'You are in line');
  assert.equal(await text(page, '#status'), 'Keep this page open. It updates by itself, and you keep your place.');
  assert.equal(await text(page, '#position'), '3');
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  assert.equal(await page.evaluate(() => localStorage.getItem('wr_lang')), 'en');
  await page.reload();
  assert.equal(await text(page, '#heading'), 'You are in line');
  assert.equal(await page.inputValue('#lang-select'), 'en');
  await page.selectOption('#lang-select', 'ko');
  assert.equal(await text(page, '#heading'), '대기열에 계십니다');
  await ko.close();

  const en = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en-US,en;q=0.9,ko;q=0.8' }, viewport: { width: 1024, height: 768 } });
  const p2 = await en.newPage();
  await p2.goto(`${wr.base}/q/${q}`);
  assert.equal(await p2.getAttribute('html', 'lang'), 'en');
  assert.equal(await text(p2, '#heading'), 'You are in line');
  assert.equal(await text(p2, '#position'), '4');
  await shot(p2, 'queue-en-desktop');
  await en.close();
});

test('without JavaScript: server-rendered position and a meta refresh', async () => {
  const q = 'nojs-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 1, paused: true });
  await api.joinNew(q);
  const ctx = await newContext({ javaScriptEnabled: false });
  const page = await ctx.newPage();
  const res = await page.goto(`${wr.base}/q/${q}`);
  assert.equal(res.status(), 200);
  assert.match(res.headers()['content-security-policy'] || '', /script-src 'self'/);
  assert.equal(await text(page, '#position'), '2');
  assert.equal(await text(page, '#status'), 'Keep this page open. It updates by itself, and you keep your place.');
  const refresh = await page.locator('meta[http-equiv="refresh"]').getAttribute('content');
  assert.ok(Number(refresh) >= 2, 'refresh every >= 2 s: ' + refresh);
  /* the reload keeps the place: same visitor cookie */
  await page.reload();
  assert.equal(await text(page, '#position'), '2');
  await ctx.close();
});

test('leave button, rejoin after NOT_IN_QUEUE, line full (429) and store trouble (503)', async () => {
  const q = 'edge-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 1, paused: true, maxQueueSize: 3 });
  const first = await api.joinNew(q);
  const ctx = await newContext();
  const page = await ctx.newPage();
  page.on('dialog', (d) => d.accept());
  await page.goto(`${wr.base}/q/${q}`);
  assert.equal(await text(page, '#position'), '2');

  /* removed behind its back (e.g. a store flush): the next poll's 404
   * NOT_IN_QUEUE makes the page join again, now behind the newcomer. The
   * page's polls are held at a gate meanwhile, so the order is certain. */
  let open;
  const gate = new Promise((r) => { open = r; });
  await page.route(`**/v1/queues/${q}/entries/me`, async (route) => { await gate; await route.continue(); });
  const vid = (await ctx.cookies(wr.base)).find((c) => c.name === 'wr_vid');
  const del = await api.call('DELETE', `/v1/queues/${q}/entries/me`, undefined, { cookie: `wr_vid=${vid.value}` });
  assert.equal(del.status, 204);
  assert.equal((await api.joinNew(q)).body.position, 2);
  open();
  await waitFor(async () => (await text(page, '#position')) === '3', 8000, 'the page to join again at 3');
  await page.unroute(`**/v1/queues/${q}/entries/me`);

  /* 503 on a poll: a clear message, then the place is kept */
  let fail = 1;
  await page.route(`**/v1/queues/${q}/entries/me`, (route) => {
    if (fail-- > 0) return route.fulfill({ status: 503, headers: { 'Retry-After': '1', 'Content-Type': 'application/json' }, body: '{"error":"STORE_UNAVAILABLE","message":"x"}' });
    return route.continue();
  });
  await waitFor(async () => /having trouble.*1 s/.test(await text(page, '#status')), 8000, 'the 503 message');
  await waitFor(async () => /^Keep this page open/.test(await text(page, '#status')) &&
    (await text(page, '#position')) === '3', 8000, 'recovery after 503');
  await page.unroute(`**/v1/queues/${q}/entries/me`);

  /* leave */
  await page.click('#leave');
  await waitFor(async () => (await text(page, '#status')) === 'You left the line.', 5000, 'the left state');
  assert.equal((await api.stats(q)).waiting, 2);

  /* the line is now full for a newcomer: 3 = maxQueueSize */
  await api.joinNew(q);
  const ctx2 = await newContext();
  const p2 = await ctx2.newPage();
  const res = await p2.goto(`${wr.base}/q/${q}`);
  assert.equal(res.status(), 429);
  assert.match(await text(p2, '#status'), /The line is full right now/);
  /* a place frees up; the page's retry (after Retry-After) gets in */
  const d2 = await api.call('DELETE', `/v1/queues/${q}/entries/me`, undefined, { cookie: first.cookie });
  assert.equal(d2.status, 204);
  await waitFor(async () => (await text(p2, '#position')) === '3', 12000, 'the retry after 429 to join');
  assert.equal(await p2.evaluate(() => document.body.dataset.state), 'waiting');
  await ctx.close();
  await ctx2.close();
});

test('passthrough (line disabled) goes to the target at once; no target shows "you are in"', async () => {
  const q = 'off-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 1, enabled: false, targetUrl: `${target.base}/landing?q=${q}` });
  const ctx = await newContext();
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/q/${q}`);
  await page.waitForURL(`${target.base}/landing?q=${q}`, { timeout: 5000 });
  assert.equal(await text(page, '#verdict'), '204'); /* disabled queue: verify passes */

  const q2 = 'in-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q2, { admitPerSecond: 20 });
  const p2 = await ctx.newPage();
  await p2.goto(`${wr.base}/q/${q2}`);
  await waitFor(async () => (await p2.evaluate(() => document.body.dataset.state)) === 'admitted', 8000, 'admitted');
  await waitFor(async () => /valid until/.test(await text(p2, '#token-status')), 8000, 'the token status');
  assert.equal(await text(p2, '#status'), "You're in.");
  const cookie = (await ctx.cookies(wr.base)).find((c) => c.name === 'wr_token_' + q2);
  assert.ok(cookie, 'token cookie set without a target too');
  /* once the pass is used, the page says so and does not queue again */
  const used = await api.call('POST', `/v1/queues/${q2}/tokens/consume`, undefined, { Authorization: 'Bearer ' + cookie.value });
  assert.equal(used.status, 200);
  await waitFor(async () => /used or has expired/.test(await text(p2, '#status')), 10000, 'the used-pass message');
  assert.equal((await api.stats(q2)).waiting, 0);
  await ctx.close();
});

/* An HS256 invite (docs/API.md, "Invite-only queues") signed with key. */
function signInvite(key, claims) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = b64({ alg: 'HS256', typ: 'JWT' }) + '.' + b64(claims);
  return input + '.' + crypto.createHmac('sha256', key).update(input).digest('base64url');
}

test('invite-only queue: an invited person joins with ?invite=, one place per invite; no invite is refused', async () => {
  const q = 'inv-' + crypto.randomBytes(3).toString('hex');
  const key = crypto.randomBytes(24).toString('hex');
  await api.createQueue(q, { admitPerSecond: 5, paused: true, inviteKey: key, targetUrl: `${target.base}/landing?q=${q}` });
  const inv = signInvite(key, { sub: 'alice', aud: q, exp: Math.floor(Date.now() / 1000) + 600 });

  /* no invite: the page says so (403), nobody joins */
  const ctx0 = await newContext();
  const p0 = await ctx0.newPage();
  const res0 = await p0.goto(`${wr.base}/q/${q}`);
  assert.equal(res0.status(), 403);
  assert.equal(await p0.evaluate(() => document.body.dataset.state), 'invite');
  assert.match(await text(p0, '#status'), /invitation only/);
  assert.equal((await api.stats(q)).waiting, 0);
  await ctx0.close();

  /* with the invite: in line; a second browser with the same invite shares the place */
  const ctx = await newContext();
  const page = await ctx.newPage();
  const res = await page.goto(`${wr.base}/q/${q}?invite=${inv}&lang=en`);
  assert.equal(res.headers()['referrer-policy'], 'no-referrer');
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'waiting');
  assert.equal(await text(page, '#position'), '1');
  /* 1.3: the invite leaves the address bar (the rest of the query stays);
   * a reload of that address joins with the tab's invite: the same place */
  assert.equal(page.url(), `${wr.base}/q/${q}?lang=en`);
  const rejoined = page.waitForResponse((r) => r.url().endsWith(`/v1/queues/${q}/entries`) &&
    r.request().method() === 'POST' && r.request().headers().authorization === 'Bearer ' + inv);
  assert.equal((await page.reload()).status(), 403); /* the server sees no invite ... */
  assert.equal((await rejoined).status(), 200); /* ... the page joins with it */
  await waitFor(async () => (await page.evaluate(() => document.body.dataset.state)) === 'waiting' &&
    (await text(page, '#position')) === '1', 5000, 'the same place after a reload');
  assert.equal(page.url(), `${wr.base}/q/${q}?lang=en`);
  const ctx2 = await newContext();
  const page2 = await ctx2.newPage();
  await page2.goto(`${wr.base}/q/${q}?invite=${inv}`);
  assert.equal(await text(page2, '#position'), '1');
  assert.equal((await api.stats(q)).waiting, 1);
  /* the page keeps polling as the invited visitor, then goes in */
  await page.waitForTimeout(1200);
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'waiting');
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
  await page.waitForURL(`${target.base}/landing?q=${q}`, { timeout: 15000 });
  assert.equal(await text(page, '#verdict'), '204');
  const pass = (await ctx.cookies(wr.base)).find((c) => c.name === 'wr_token_' + q);
  assert.ok(pass && pass.httpOnly, 'the pass cookie is HttpOnly');
  assert.equal(JSON.parse(Buffer.from(pass.value.split('.')[1], 'base64url').toString()).aud, q);
  await ctx.close();
  await ctx2.close();
});

test('join challenge: the page checks the browser in a Web Worker, joins, never solves again; without JavaScript it says so', async () => {
  const q = 'pow-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 5, paused: true, challengeBits: 10, targetUrl: `${target.base}/landing?q=${q}` });
  const ctx = await newContext();
  const page = await ctx.newPage();
  const seen = [];
  page.on('request', (r) => { if (r.url().endsWith(`/v1/queues/${q}/challenge`)) seen.push(r.url()); });
  const res = await page.goto(`${wr.base}/q/${q}`);
  assert.equal(res.status(), 200);
  /* the server rendered the challenge state and did not join */
  await waitFor(async () => (await page.evaluate(() => document.body.dataset.state)) === 'waiting', 15000, 'solved and joined');
  assert.equal(await text(page, '#position'), '1');
  assert.equal((await api.stats(q)).waiting, 1);
  assert.equal(seen.length, 1, 'one challenge fetched');
  /* a reload and a second tab: in line already, no challenge */
  await page.reload();
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'waiting');
  const tab2 = await ctx.newPage();
  await tab2.goto(`${wr.base}/q/${q}`);
  assert.equal(await tab2.evaluate(() => document.body.dataset.state), 'waiting');
  assert.equal(seen.length, 1, 'no second solve');
  assert.equal((await api.stats(q)).waiting, 1);
  await tab2.close();
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
  await page.waitForURL(`${target.base}/landing?q=${q}`, { timeout: 15000 });
  assert.equal(await text(page, '#verdict'), '204');
  await ctx.close();
  /* no JavaScript: a plain message, no join */
  const ctx2 = await newContext({ javaScriptEnabled: false });
  const p2 = await ctx2.newPage();
  await p2.goto(`${wr.base}/q/${q}`);
  assert.match(await text(p2, '#status'), /needs JavaScript/);
  assert.equal((await api.stats(q)).waiting, 0);
  await ctx2.close();
});

/* A stand-in CAPTCHA provider on a loopback port (never a real one): its
 * widget script (the Turnstile API: render(el, {sitekey, callback}) draws
 * a button whose click hands the page a response; the script calls the
 * page's onload callback as the real one does) and its siteverify, which
 * passes responses starting "ok-" and answers 500 to "down-" ones (a
 * provider that does not answer). Every verification is recorded. */
function startCaptchaStandIn() {
  const verifications = [];
  const widget = `(function () {
  var src = (document.currentScript && document.currentScript.src) || '';
  var m = /[?&]onload=([A-Za-z0-9_]+)/.exec(src);
  window.turnstile = {
    render: function (el, o) {
      var b = document.createElement('button');
      b.type = 'button';
      b.id = 'standin-widget';
      b.textContent = 'I am a person';
      b.addEventListener('click', function () {
        o.callback((o.sitekey === 'down' ? 'down-' : 'ok-') + Date.now());
      });
      el.appendChild(b);
      return 'w1';
    },
    reset: function () {}
  };
  if (m && typeof window[m[1]] === 'function') window[m[1]]();
})();`;
  return new Promise((resolve) => {
    const srv = http.createServer((req, res) => {
      if (req.method === 'GET' && req.url.startsWith('/turnstile/v0/api.js')) {
        res.writeHead(200, { 'Content-Type': 'text/javascript' });
        res.end(widget);
        return;
      }
      if (req.method === 'POST' && req.url === '/siteverify') {
        let body = '';
        req.on('data', (c) => { body += c; });
        req.on('end', () => {
          const form = Object.fromEntries(new URLSearchParams(body));
          verifications.push(form);
          if ((form.response || '').startsWith('down-')) {
            res.writeHead(500, { 'Content-Type': 'text/plain' });
            res.end('down');
            return;
          }
          const ok = (form.response || '').startsWith('ok-');
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ success: ok, 'error-codes': ok ? [] : ['invalid-input-response'] }));
        });
        return;
      }
      res.writeHead(404);
      res.end();
    });
    srv.listen(0, '127.0.0.1', () => resolve({ srv, verifications, base: `http://127.0.0.1:${srv.address().port}` }));
  });
}

test('captcha: the page shows the widget (stand-in), its response joins; a silent provider falls back to the proof of work', async () => {
  const standIn = await startCaptchaStandIn();
  try {
    const q = 'cap-' + crypto.randomBytes(3).toString('hex');
    const captcha = { provider: 'turnstile', siteKey: 'site-key-1', secret: 'stand-in-secret', verifyUrl: `${standIn.base}/siteverify` };
    await api.createQueue(q, { admitPerSecond: 5, paused: true, captcha, targetUrl: `${target.base}/landing?q=${q}` });
    const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
    const page = await ctx.newPage();
    const res = await page.goto(`${wr.base}/q/${q}`);
    assert.equal(res.status(), 200);
    /* the CSP is widened for the stand-in's origin, on this page only */
    const csp = res.headers()['content-security-policy'];
    assert.match(csp, new RegExp(`script-src 'self' ${standIn.base.replace(/[.:/]/g, '\\$&')}(;|$)`), csp);
    assert.match(csp, new RegExp(`frame-src 'self' ${standIn.base.replace(/[.:/]/g, '\\$&')}(;|$)`), csp);
    /* the widget, and a status that says what to do (aria-live) */
    await page.waitForSelector('#standin-widget', { state: 'visible', timeout: 10000 });
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'challenge');
    assert.equal(await page.evaluate(() => document.body.dataset.captcha), '1');
    assert.match(await text(page, '#status'), /confirm below that you are a person/i);
    assert.equal(await page.getAttribute('#status', 'aria-live'), 'polite');
    assert.equal((await api.stats(q)).waiting, 0, 'nobody joined before the widget answered');
    assert.equal(standIn.verifications.length, 0);
    await shot(page, 'queue-captcha');
    await page.click('#standin-widget');
    await waitFor(async () => (await page.evaluate(() => document.body.dataset.state)) === 'waiting', 10000, 'joined with the response');
    assert.equal(await text(page, '#position'), '1');
    assert.equal((await api.stats(q)).waiting, 1);
    assert.equal(standIn.verifications.length, 1, 'one verification');
    assert.equal(standIn.verifications[0].secret, 'stand-in-secret');
    assert.match(standIn.verifications[0].response, /^ok-\d+$/);
    /* in line: a reload shows the place, no widget, no verification */
    await page.reload();
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'waiting');
    assert.equal(await page.locator('#standin-widget').count(), 0);
    assert.equal(standIn.verifications.length, 1);
    assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
    await page.waitForURL(`${target.base}/landing?q=${q}`, { timeout: 15000 });
    assert.equal(await text(page, '#verdict'), '204');
    await ctx.close();

    /* the provider does not answer: the 403 carries a fallback challenge,
     * the page solves it in its worker and joins with it alone */
    const q2 = 'capdown-' + crypto.randomBytes(3).toString('hex');
    await api.createQueue(q2, { admitPerSecond: 5, paused: true,
      captcha: { ...captcha, siteKey: 'down', fallback: 'challenge', fallbackBits: 8 } });
    const ctx2 = await newContext();
    const p2 = await ctx2.newPage();
    await p2.goto(`${wr.base}/q/${q2}`);
    await p2.waitForSelector('#standin-widget', { state: 'visible', timeout: 10000 });
    await p2.click('#standin-widget');
    await waitFor(async () => (await p2.evaluate(() => document.body.dataset.state)) === 'waiting', 15000, 'joined through the fallback');
    assert.equal((await api.stats(q2)).waiting, 1);
    assert.equal(standIn.verifications.filter((v) => /^down-/.test(v.response)).length, 1, 'one try with the provider');
    await ctx2.close();
  } finally {
    standIn.srv.close();
  }
});

test('an admitted person returns to the ?return= URL (allowed origin), with wr_token when tokenInQuery', async () => {
  const q = 'ret-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 20, targetUrl: `${target.base}/landing?q=${q}`, tokenInQuery: true });
  const ret = `${target.base}/landing?q=${q}&deep=item-7#size`;
  const ctx = await newContext();
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/q/${q}?return=${encodeURIComponent(ret)}`);
  await page.waitForURL((u) => u.href.startsWith(target.base), { timeout: 15000 });
  const landed = new URL(page.url());
  assert.equal(landed.pathname, '/landing');
  assert.equal(landed.searchParams.get('deep'), 'item-7', 'came back to the return URL: ' + page.url());
  assert.equal(landed.hash, '#size', 'the fragment stays last: ' + page.url());
  const tok = landed.searchParams.get('wr_token');
  assert.match(tok || '', /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'wr_token in the query: ' + page.url());
  assert.equal((await api.call('GET', `/v1/queues/${q}/tokens/verify`, undefined, { Authorization: 'Bearer ' + tok })).status, 204);
  assert.equal(await text(page, '#verdict'), '204');

  /* another origin that is not allowed: ignored, the page goes to targetUrl */
  const p2 = await ctx.newPage();
  await p2.goto(`${wr.base}/q/${q}?return=${encodeURIComponent('https://evil.example/x')}`);
  await p2.waitForURL((u) => u.href.startsWith(target.base), { timeout: 15000 });
  const l2 = new URL(p2.url());
  assert.equal(l2.searchParams.get('deep'), null, p2.url());
  assert.equal(l2.searchParams.get('q'), q);
  await ctx.close();
});

/* "M:SS" / "H:MM:SS" of the countdown, in seconds; NaN otherwise. */
function countdownSeconds(s) {
  const m = /^(?:(\d+):)?(\d+):(\d\d)$/.exec((s || '').trim());
  return m ? Number(m[1] || 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) : NaN;
}

test('pre-queue: a countdown in local time turns into a position at the opening; without JavaScript: UTC and a refresh', async () => {
  const q = 'open-' + crypto.randomBytes(3).toString('hex');
  /* The checks before the opening take 2-3 s, and 13 s once on CI's starved
   * machine (a 10 s opening had passed before the page was first checked). So
   * the queue opens in 60 s, and once the pre-queue page has been checked the
   * opening is moved to 7 s ahead: the page, polling at most every 5 s, learns
   * the new time and turns by itself. */
  let opensAt = Date.now() + 60000;
  await api.createQueue(q, { admitPerSecond: 1, paused: true, opensAt });
  for (let i = 0; i < 2; i++) {
    const j = await api.joinNew(q);
    assert.equal(j.body.status, 'prequeue', JSON.stringify(j.body));
    assert.equal(j.body.opensAt, opensAt);
  }

  /* without JavaScript (Korean): the opening in UTC, a refresh at the poll interval */
  const nojs = await newContext({ javaScriptEnabled: false, extraHTTPHeaders: { 'Accept-Language': 'ko-KR,ko;q=0.9' } });
  const np = await nojs.newPage();
  const res = await np.goto(`${wr.base}/q/${q}`);
  assert.equal(res.status(), 200);
  assert.equal(await np.evaluate(() => document.body.dataset.state), 'prequeue');
  const utc = new Date(opensAt).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  assert.equal(await text(np, '#opens-at'), utc);
  assert.equal(await np.getAttribute('#opens-at', 'datetime'), new Date(opensAt).toISOString().replace(/\.\d+Z$/, 'Z'));
  assert.equal(await text(np, '#status'), `사전 대기열에 계십니다. 대기열은 ${utc}에 열립니다.`);
  assert.ok(countdownSeconds(await text(np, '#countdown')) <= 60, 'server-rendered countdown');
  const refresh = Number(await np.locator('meta[http-equiv="refresh"]').getAttribute('content'));
  assert.ok(refresh >= 2 && refresh <= 6, 'refresh at the poll interval (at most ~5 s): ' + refresh);

  /* with JavaScript, in Seoul: countdown and opening in local time */
  const tz = 'Asia/Seoul';
  const ctx = await newContext({ timezoneId: tz, locale: 'en-US', extraHTTPHeaders: { 'Accept-Language': 'en-US,en;q=0.9' } });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/q/${q}`);
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'prequeue');
  assert.equal(await text(page, '#heading'), 'The sale has not opened yet');
  assert.match(await text(page, '#status'), /^You are in the pre-queue\. The line opens at /);
  const local = new Date(opensAt).toLocaleTimeString('en-US', { timeZone: tz, hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: true });
  const hms = local.replace(/\s*[AP]M$/i, '');
  await waitFor(async () => (await text(page, '#opens-at')).includes(hms), 3000, 'the opening in Seoul time (' + hms + ')');
  assert.match(await text(page, '#opens-at'), /GMT\+9/);
  assert.ok((await text(page, '#status')).includes(hms), 'the status sentence in local time');
  assert.match(await text(page, '.s-prequeue .intro'), /random place in line, ahead of everyone who comes later/);
  /* the countdown ticks down, and the title carries it */
  const c0 = countdownSeconds(await text(page, '#countdown'));
  assert.ok(c0 >= 1 && c0 <= 60, 'countdown starts at the time left: ' + c0);
  await waitFor(async () => countdownSeconds(await text(page, '#countdown')) < c0, 3000, 'the countdown to tick');
  assert.match(await page.title(), /^\d+:\d\d - Waiting room - /);
  await shot(page, 'queue-prequeue-en-phone');

  /* the operator brings the opening forward (API: "setting it to the past opens at once"; a nearer time opens then) */
  opensAt = Date.now() + 7000;
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { opensAt })).status, 200);

  /* the opening: the page turns into the position view by itself */
  await page.waitForFunction(() => document.body.dataset.state === 'waiting', null, { timeout: 15000 });
  const turned = Date.now();
  assert.ok(turned >= opensAt - 50, `position view only after the opening (${turned - opensAt} ms)`);
  assert.ok(turned <= opensAt + 4000, `position view within the first second after the opening, with slack for a loaded machine (${turned - opensAt} ms)`);
  const pos = Number(await text(page, '#position'));
  assert.ok(pos >= 1 && pos <= 4, 'a shuffled place among the 4 of the pre-queue: ' + pos);
  assert.equal(await text(page, '#status'), 'Keep this page open. It updates by itself, and you keep your place.');
  assert.match(await page.title(), new RegExp(`^#${pos} - Waiting room - `));

  /* a later arrival is behind the whole pre-queue; the no-JS page now shows its place */
  const later = await api.joinNew(q);
  assert.equal(later.body.status, 'waiting');
  assert.equal(later.body.position, 5);
  await np.reload();
  assert.equal(await np.evaluate(() => document.body.dataset.state), 'waiting');
  const npos = Number(await text(np, '#position'));
  assert.ok(npos >= 1 && npos <= 4 && npos !== pos, 'the no-JS visitor has its own pre-queue place: ' + npos);
  await nojs.close();
  await ctx.close();
  return `the position view came ${turned - opensAt} ms after the opening`;
});

test('background tab: the title carries the position and the turn; an admission in a hidden tab notifies', async () => {
  const q = 'bg-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 5, paused: true });
  await api.joinNew(q);
  const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en-US,en;q=0.9' } });
  /* a hidden tab whose person allowed notifications: recorded, not shown */
  await ctx.addInitScript(() => {
    window.__notes = [];
    Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => true });
    window.Notification = class {
      constructor(title, opts) { window.__notes.push({ title, body: opts && opts.body, tag: opts && opts.tag }); }
      close() {}
      static get permission() { return 'granted'; }
      static requestPermission() { return Promise.resolve('granted'); }
    };
  });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/q/${q}`);
  assert.equal(await text(page, '#position'), '2');
  assert.equal(await page.title(), `#2 - Waiting room - ${q}`);
  assert.equal(await text(page, '#notify-status'), 'You will get a notification when it is your turn.');
  assert.equal(await page.locator('#notify').isHidden(), true, 'no button once allowed');
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
  await waitFor(async () => (await page.evaluate(() => document.body.dataset.state)) === 'admitted', 10000, 'admitted');
  assert.equal(await page.title(), `Your turn! - Waiting room - ${q}`);
  const notes = await page.evaluate(() => window.__notes);
  assert.equal(notes.length, 1, JSON.stringify(notes));
  assert.equal(notes[0].title, 'It is your turn');
  assert.equal(notes[0].tag, 'wr-' + q);

  /* permission not asked yet: the button asks for it (in a paused line, so
   * that an admission cannot hide the button before the click) */
  const q2 = 'bg2-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q2, { admitPerSecond: 5, paused: true });
  const ctx2 = await newContext();
  await ctx2.addInitScript(() => {
    let perm = 'default';
    window.Notification = class {
      static get permission() { return perm; }
      static requestPermission() { perm = 'granted'; return Promise.resolve(perm); }
    };
  });
  const p2 = await ctx2.newPage();
  await p2.goto(`${wr.base}/q/${q2}`);
  await waitFor(async () => !(await p2.locator('#notify').isHidden()), 10000, 'the notify button');
  assert.equal(await text(p2, '#notify'), 'Notify me when it is my turn');
  await p2.click('#notify');
  await waitFor(async () => (await text(p2, '#notify-status')) === 'You will get a notification when it is your turn.', 10000, 'notifications on');
  assert.equal(await p2.locator('#notify').isHidden(), true);
  await ctx.close();
  await ctx2.close();
});

test('notify me (Web Push): the button subscribes (PushManager stubbed), says so in Korean, the admission is pushed and decrypts; the real service worker registers for /q/; iOS without push: the Home Screen hint', async () => {
  const q = 'push-' + crypto.randomBytes(3).toString('hex');
  assert.equal((await api.admin('PUT', `/v1/admin/queues/${q}`, { admitPerSecond: 5, paused: true, push: true })).status, 200);
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = crypto.randomBytes(16);
  const keys = { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') };
  const endpoint = `${pushSvc.base}/ok/${q}`;
  const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'ko' } });
  await ctx.addInitScript(({ endpoint, keys }) => {
    let perm = 'default';
    const ls = (() => { try { return window.localStorage; } catch { return null; } })(); /* none on about:blank */
    window.Notification = class {
      static get permission() { return perm; }
      static requestPermission() { perm = 'granted'; return Promise.resolve(perm); }
    };
    if (!window.PushManager) window.PushManager = function () {};
    const sub = { toJSON: () => ({ endpoint, expirationTime: null, keys }) };
    const reg = { pushManager: { subscribe: (o) => {
      window.__subOpts = { userVisibleOnly: o.userVisibleOnly, keyLen: o.applicationServerKey.length };
      return Promise.resolve(sub);
    } } };
    if (navigator.serviceWorker) {
      navigator.serviceWorker.register = (url, o) => {
        window.__swReg = { url, scope: o && o.scope };
        if (ls) ls.setItem('__wrSw', '1');
        return Promise.resolve(reg);
      };
      reg.pushManager.getSubscription = () => Promise.resolve(sub);
      navigator.serviceWorker.getRegistration = () => Promise.resolve(ls && ls.getItem('__wrSw') ? reg : undefined);
    }
    if (ls && ls.getItem('__wrSw')) perm = 'granted';
  }, { endpoint, keys });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/q/${q}`);
  await waitFor(async () => !(await page.locator('#notify').isHidden()), 10000, 'the notify button');
  await page.click('#notify');
  await waitFor(async () => (await text(page, '#notify-status')) === '차례가 되면 알려 드립니다. 휴대폰을 잠가도 됩니다.', 10000,
    async () => 'subscribed, in Korean: ' + await text(page, '#notify-status'));
  assert.equal(await page.locator('#notify').isHidden(), true, 'no button once subscribed');
  assert.deepEqual(await page.evaluate(() => window.__swReg), { url: '/static/push-sw.js', scope: '/q/' });
  assert.deepEqual(await page.evaluate(() => window.__subOpts), { userVisibleOnly: true, keyLen: 65 });
  /* a reload: the browser's subscription is sent again and shown, no click */
  await page.reload();
  await waitFor(async () => (await text(page, '#notify-status')) === '차례가 되면 알려 드립니다. 휴대폰을 잠가도 됩니다.', 10000,
    async () => 'subscribed again after a reload: ' + await text(page, '#notify-status'));
  assert.equal(await page.locator('#notify').isHidden(), true, 'no button after the reload');
  const before = pushSvc.got.length;
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
  const t0 = Date.now();
  await waitFor(() => pushSvc.got.length > before, 5000, 'the push at the stand-in');
  const push = pushSvc.got[before];
  assert.ok(push.at - t0 < 1500, 'within about a second of the admission');
  assert.equal(push.path, `/ok/${q}`);
  assert.equal(push.headers.urgency, 'high');
  assert.equal(push.headers['content-encoding'], 'aes128gcm');
  assert.match(push.headers.authorization, /^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=[\w-]{87}$/);
  const msg = pushDecrypt(push.body, ecdh, auth);
  assert.equal(msg.status, 'admitted');
  assert.equal(msg.url, `/q/${q}`);
  assert.match(msg.title, /[가-힣]/, 'the title in Korean');
  await waitFor(async () => (await page.evaluate(() => document.body.dataset.state)) === 'admitted', 10000, 'admitted');
  await ctx.close();

  /* the real worker: served for /q/ (Service-Worker-Allowed), it registers */
  const ctx2 = await newContext();
  const p2 = await ctx2.newPage();
  await p2.goto(`${wr.base}/q/${q}`);
  const scope = await p2.evaluate(async () => (await navigator.serviceWorker.register('/static/push-sw.js', { scope: '/q/' })).scope);
  assert.equal(scope, `${wr.base}/q/`);
  await ctx2.close();

  /* iOS Safari outside the Home Screen: no PushManager, the hint instead */
  const q3 = 'pushios-' + crypto.randomBytes(3).toString('hex');
  assert.equal((await api.admin('PUT', `/v1/admin/queues/${q3}`, { admitPerSecond: 5, paused: true, push: true })).status, 200);
  const ctx3 = await newContext({ userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1' });
  await ctx3.addInitScript(() => { delete window.PushManager; });
  const p3 = await ctx3.newPage();
  await p3.goto(`${wr.base}/q/${q3}`);
  await waitFor(async () => /Home Screen/.test(await text(p3, '#notify-status')), 10000, 'the Home Screen hint');
  await ctx3.close();
});

/* ---------- the sale's edges (1.2) ---------- */

const state = (page) => page.evaluate(() => document.body.dataset.state);

test('held: back after the turn came while away, "your place was kept" (English, then Korean), then in', async () => {
  const q = 'held-' + crypto.randomBytes(3).toString('hex');
  /* away after 1 s of silence (the page asks every <= 0.5 s while it can) */
  await api.createQueue(q, { admitPerSecond: 5, paused: true, idleTimeoutSeconds: 1 });
  const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en-US,en;q=0.9' } });
  const page = await ctx.newPage();
  /* the page's first poll makes its page join an ordinary entry (a page
   * join that never asks again is never away nor held: it just leaves) */
  const polled = page.waitForResponse((r) => r.url().endsWith(`/v1/queues/${q}/entries/me`) && r.status() === 200);
  await page.goto(`${wr.base}/q/${q}`);
  assert.equal(await text(page, '#position'), '1');
  assert.equal(await page.getAttribute('body', 'data-held'), '0');
  await polled;
  /* the phone sleeps: its next poll hangs at a gate, nothing reaches the server */
  let open;
  const gate = new Promise((r) => { open = r; });
  await page.route(`**/v1/queues/${q}/entries/me`, async (route) => { await gate; await route.continue(); });
  await waitFor(async () => (await api.stats(q)).away === 1, 10000, 'the person to count as away');
  /* the turn comes while away: passed over and held, never admitted */
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
  await waitFor(async () => (await api.stats(q)).held === 1, 10000, 'the person to be held');
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: true })).status, 200);
  const st = await api.stats(q);
  assert.equal(st.admittedTotal, 0, 'nobody away is admitted');
  /* the phone wakes: the held answer */
  const held = page.waitForResponse((r) => r.url().endsWith(`/v1/queues/${q}/entries/me`) && r.status() === 200);
  open();
  assert.equal((await (await held).json()).held, true);
  await page.unroute(`**/v1/queues/${q}/entries/me`);
  await waitFor(async () => (await page.getAttribute('body', 'data-held')) === '1', 5000, 'the held view');
  assert.equal(await text(page, '#heading'), 'Welcome back');
  assert.equal(await text(page, '#status'), 'You stepped away, and your place was kept. You go in at the next admission.');
  assert.equal(await page.getAttribute('#status', 'aria-live'), 'polite');
  /* no line numbers beside "your place was kept" (position 1, a line of 0) */
  assert.equal(await page.locator('#position').isHidden(), true, 'no position while held');
  assert.equal(await page.locator('#waiting').isHidden(), true, 'no line count while held');
  assert.equal(await page.locator('#progress').isHidden(), true);
  assert.doesNotMatch(await page.title(), /#1/, 'no position in the tab while held');
  await shot(page, 'queue-held-en');
  await page.selectOption('#lang-select', 'ko'); /* (the strings come with the switch) */
  await page.waitForFunction(() => document.documentElement.lang === 'ko');
  assert.equal(await text(page, '#heading'), '다시 오셨네요');
  assert.equal(await text(page, '#status'), '잠시 자리를 비우셨지만 순서는 그대로 지켜 두었습니다. 다음 입장 때 들어가십니다.');
  /* the server renders it too (a reload is a return as well) */
  await page.reload();
  assert.equal(await page.getAttribute('body', 'data-held'), '1');
  assert.equal(await text(page, '#heading'), '다시 오셨네요');
  /* admission resumes: the held person goes in first */
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
  await waitFor(async () => (await state(page)) === 'admitted', 10000, 'admitted after the return');
  assert.equal(await page.getAttribute('body', 'data-held'), '0');
  assert.equal((await api.stats(q)).returnedTotal, 1);
  await ctx.close();
});

/* Tells the page its tab came back to the front (browsers send
 * visibilitychange; the page asks at once, unless it asked less than a
 * second ago: lastAsked, the time of its last request, is waited out). */
const backToFront = async (page, lastAsked) => {
  await sleep(Math.max(0, lastAsked + 1100 - Date.now()));
  await page.evaluate(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
    document.dispatchEvent(new Event('visibilitychange'));
  });
};

test('a sale\'s edges: odds, a hostile notice as text, sold out, a restock and a reopening picked up by the slow re-check (English and Korean)', async () => {
  const q = 'end-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 5, paused: true, stock: 12000 });
  await api.joinNew(q);
  await api.joinNew(q);
  /* the page's clock is Playwright's: time flows, and fastForward() jumps
   * it as a phone left alone would, firing the page's due timers once */
  const en = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en-US,en;q=0.9' } });
  await en.clock.install();
  const pe = await en.newPage();
  const ko = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'ko-KR,ko;q=0.9' } });
  const pk = await ko.newPage();
  const koLog = []; /* the Korean page's answers, told when a wait fails */
  let koAsked = 0;
  pk.on('request', (r) => { if (r.url().includes(`/v1/queues/${q}/entries`)) koAsked = Date.now(); });
  pk.on('response', (r) => {
    if (r.url().includes(`/v1/queues/${q}/entries`))
      r.text().then((b) => koLog.push(`${Date.now() % 100000} ${r.request().method()} ${r.status()} ${b}`), () => {});
  });
  await pe.goto(`${wr.base}/q/${q}`);
  await pk.goto(`${wr.base}/q/${q}`);

  /* the odds, numbers as each language writes them */
  /* (written by the page script once it has run: waited for, a loaded
   * machine can run it after goto's load event) */
  const odds = [[pe, 'About 12,000 left.'], [pk, '남은 수량은 약 12,000개입니다.']];
  for (const [p, want] of odds) {
    await waitFor(async () => (await text(p, '#odds')) === want, 8000, `the odds: ${want}`);
  }
  assert.equal(await pe.locator('.notice-box').isHidden(), true, 'no notice box without a notice');

  /* a notice that tries to be HTML stays text */
  const hostile = '<img src=x onerror="window.__pwned=1">Sizes S-M</p><script>window.__pwned=2</script> & "more" soon';
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { notice: hostile })).status, 200);
  for (const p of [pe, pk]) {
    await waitFor(async () => (await text(p, '#notice')) === hostile, 8000, 'the notice on the page');
    assert.equal(await p.locator('#notice *').count(), 0, 'no element made from the notice');
    assert.equal(await p.evaluate(() => window.__pwned), undefined);
    assert.equal(await p.locator('.notice-box').isVisible(), true);
    assert.equal(await p.getAttribute('#notice', 'aria-live'), 'polite');
  }
  assert.equal(await text(pe, '#notice-label'), 'Message from the shop');
  assert.equal(await text(pk, '#notice-label'), '판매처 안내');
  /* rendered by the server too, for people without JavaScript */
  const nojs = await newContext({ javaScriptEnabled: false });
  const np = await nojs.newPage();
  await np.goto(`${wr.base}/q/${q}`);
  assert.equal(await text(np, '#notice'), hostile);
  assert.equal(await np.locator('#notice *').count(), 0);
  assert.equal(await text(np, '#odds'), 'About 12,000 left.');
  assert.equal(await text(np, '#position'), '5');
  await np.close(); /* its <meta refresh> (2 s while waiting) must not race a later reload */
  await shot(pe, 'queue-odds-notice-en');

  /* sold out: nothing left and no pass live */
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { stock: 0 })).status, 200);
  await waitFor(async () => (await state(pe)) === 'closed' && (await state(pk)) === 'closed', 10000, 'sold out on both pages');
  assert.equal(await pe.getAttribute('body', 'data-reason'), 'soldOut');
  assert.equal(await text(pe, '#heading'), 'Sold out');
  assert.equal(await text(pe, '#status'), 'If more becomes available, this page moves on by itself.');
  assert.equal(await pe.locator('#shop').isVisible(), false, 'no way back without a target');
  assert.equal(await text(pk, '#heading'), '매진되었습니다');
  assert.equal(await text(pk, '#status'), '수량이 다시 생기면 이 페이지가 자동으로 넘어갑니다.');
  assert.equal(await text(pe, '#notice'), hostile, 'the notice stays with the sold-out view');
  assert.match(await pe.title(), /^Sold out - Waiting room - /);
  const np2 = await nojs.newPage(); /* the same visitor, now sold out: a refresh of up to 60 s */
  await np2.goto(`${wr.base}/q/${q}`);
  assert.equal(await state(np2), 'closed');
  assert.equal(await text(np2, '#heading'), 'Sold out');
  const refresh = Number(await np2.locator('meta[http-equiv="refresh"]').getAttribute('content'));
  assert.ok(refresh >= 1 && refresh <= 60, 'no-JS re-check within 60 s: ' + refresh);
  await shot(pk, 'queue-soldout-ko');
  /* only the slow re-check now: nothing asked for a while */
  const asked = [];
  pe.on('request', (r) => { if (r.url().includes(`/v1/queues/${q}/entries`)) asked.push(Date.now()); });
  const retry = Number(await pe.getAttribute('#app', 'data-retry-ms')); /* the first render's */
  await sleep(1500);
  assert.equal(asked.length, 0, 'no request within 1.5 s of sold out');

  /* a restock while paused: the open pages find the line again at their
   * next check (jumped to, at most 60 s on) */
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { stock: 5000 })).status, 200);
  await pe.clock.fastForward(60000);
  await waitFor(async () => (await state(pe)) === 'waiting', 8000, 'the restock picked up by the re-check');
  assert.equal(await text(pe, '#odds'), 'About 5,000 left.');
  assert.equal(await text(pe, '#position'), '3', 'the same place after the restock');
  await backToFront(pk, koAsked); /* a tab back in front asks at once */
  await waitFor(async () => (await state(pk)) === 'waiting', 8000,
    () => 'the restock picked up by the tab back in front (its answers: ' + koLog.join(' | ') + ')');
  assert.equal(await text(pk, '#position'), '4');

  /* the sale ends, then reopens without the notice */
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { closed: true })).status, 200);
  await waitFor(async () => (await state(pe)) === 'closed' && (await state(pk)) === 'closed', 10000, 'closed on both pages');
  assert.equal(await pe.getAttribute('body', 'data-reason'), 'closed');
  assert.equal(await text(pe, '#heading'), 'The sale has ended');
  assert.equal(await text(pe, '#status'), 'If it reopens, this page moves on by itself.');
  assert.equal(await text(pk, '#heading'), '판매가 종료되었습니다');
  assert.equal(await text(pk, '#status'), '판매가 다시 열리면 이 페이지가 자동으로 넘어갑니다.');
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { closed: false, notice: null })).status, 200);
  await pe.clock.fastForward(60000);
  await waitFor(async () => (await state(pe)) === 'waiting', 8000, 'the reopening picked up by the re-check');
  assert.equal(await text(pe, '#position'), '3');
  assert.equal(await pe.locator('.notice-box').isHidden(), true, 'the notice cleared');
  await backToFront(pk, koAsked);
  await waitFor(async () => (await state(pk)) === 'waiting', 8000,
    () => 'the reopening picked up by the tab back in front (its answers: ' + koLog.join(' | ') + ')');
  await en.close();
  await ko.close();
  await nojs.close();
  return `first sold-out render asked again after ${retry} ms`;
});

test('notice by language: the page shows its language\'s text, and its polls keep to the page\'s language (a ?lang= or a switch, not the browser\'s)', async () => {
  const q = 'nlang-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 5, paused: true, notice: { en: 'Sold out in S', ko: 'S \uc0ac\uc774\uc988 \ud488\uc808' } });
  const ctx = await newContext({ locale: 'en-US' }); /* the browser asks for English */
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/q/${q}?lang=ko`);
  assert.equal(await text(page, '#notice'), 'S \uc0ac\uc774\uc988 \ud488\uc808'); /* the server's render */
  await waitFor(async () => (await state(page)) === 'waiting', 8000, 'the first answer');
  /* a changed notice comes with a poll, still in Korean */
  const next = { en: 'Sold out in S and M', ko: 'S, M \uc0ac\uc774\uc988 \ud488\uc808' };
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { notice: next })).status, 200);
  await waitFor(async () => (await text(page, '#notice')) === next.ko, 15000, 'the Korean notice from a poll');
  /* switched to Japanese (no text of its own): English, the fallback */
  await page.selectOption('#lang-select', 'ja');
  await waitFor(async () => (await text(page, '#notice')) === next.en, 15000, 'the English notice after the switch');
  await ctx.close();
});

test('closed: a newcomer\'s page follows the answer\'s Retry-After (short here: idleTimeoutSeconds 2) and joins when the sale reopens', async () => {
  const q = 'reo-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 5, paused: true, closed: true, idleTimeoutSeconds: 2 });
  const ctx = await newContext();
  const page = await ctx.newPage();
  const res = await page.goto(`${wr.base}/q/${q}`);
  assert.equal(res.status(), 200);
  assert.equal(await state(page), 'closed');
  assert.equal(await page.getAttribute('body', 'data-reason'), 'closed');
  assert.equal((await api.stats(q)).waiting, 0, 'nobody joins a closed sale');
  /* it checks again after the server's Retry-After (1 s: half the idle
   * timeout), not 60 s: a poll (404, not in line) and then a join, told
   * closed again */
  const rejoined = await page.waitForResponse((r) => r.request().method() === 'POST' &&
    r.url().endsWith(`/v1/queues/${q}/entries`), { timeout: 8000 });
  assert.equal(rejoined.status(), 200);
  assert.equal(rejoined.headers()['retry-after'], '1');
  assert.equal((await rejoined.json()).status, 'closed');
  assert.equal(await state(page), 'closed');
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { closed: false })).status, 200);
  await waitFor(async () => (await state(page)) === 'waiting', 8000, 'the page in line after the reopening');
  assert.equal(await text(page, '#position'), '1');
  await ctx.close();
});

test('dashboard: stock, sold-out time, away and held; close/reopen, stock and notice controls, each confirmed; the server\'s error shown', async () => {
  const q = 'dsale-' + crypto.randomBytes(3).toString('hex');
  /* two people who never ask again: away after 1 s, held when the paused
   * line resumes (their turn came while away) */
  await api.createQueue(q, { admitPerSecond: 5, paused: true, stock: 3, idleTimeoutSeconds: 1 });
  for (let i = 0; i < 2; i++) await api.joinNew(q);
  await waitFor(async () => (await api.stats(q)).away === 2, 10000, 'two people away');
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
  await waitFor(async () => (await api.stats(q)).held === 2, 10000, 'two people held');
  const ctx = await newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const dialogs = [];
  let answer = true;
  page.on('dialog', (d) => { dialogs.push(d.message()); if (answer) d.accept(); else d.dismiss(); });
  await page.goto(`${wr.base}/admin`);
  await page.fill('#key', adminKey);
  await page.click('#login button[type=submit]');
  const card = page.locator(`article[data-queue="${q}"]`);
  const field = (f) => card.locator(`[data-field="${f}"]`).textContent();
  /* clicks the control and answers its confirmation; the PATCH's status */
  const act = async (action) => {
    const patched = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/v1/admin/queues/${q}`));
    await card.locator(`[data-action="${action}"]`).click();
    return (await patched).status();
  };
  await waitFor(async () => (await field('stockLeft')) === '3', 5000, 'stock left 3');
  assert.equal(await field('soldOutAt'), '-');
  assert.equal(await field('away'), '2');
  assert.equal(await field('held'), '2');
  assert.equal(await field('sale'), 'sale open');

  /* set the notice (confirmed with its text), then clear it */
  /* the box stops at 500 characters, counted as the server counts them
   * (code points: an emoji is one), and white space alone is not sent */
  const box = card.locator('[data-field="notice-input"]');
  await box.fill('\u{1F642}'.repeat(300) + 'x'.repeat(300));
  assert.equal(await field('notice-count'), '500/500');
  assert.equal([...(await box.inputValue())].length, 500);
  assert.equal(await box.getAttribute('maxlength'), '1000');
  await box.fill('   ');
  assert.equal(await card.locator('[data-action="set-notice"]').isDisabled(), true, 'white space only');
  /* the server refuses 501 characters all the same */
  const long = await api.admin('PATCH', `/v1/admin/queues/${q}`, { notice: 'x'.repeat(501) });
  assert.equal(long.status, 400);
  assert.equal(long.body.field, 'notice');
  await box.fill('Back at 18:00 <b>sharp</b>');
  assert.equal(await field('notice-count'), '26/500');
  assert.equal(await act('set-notice'), 200);
  assert.match(dialogs[dialogs.length - 1], /Show this notice to everyone in line[\s\S]*Back at 18:00 <b>sharp<\/b>/);
  assert.equal((await api.config(q)).notice, 'Back at 18:00 <b>sharp</b>');
  await waitFor(async () => (await field('notice')) === 'Notice: Back at 18:00 <b>sharp</b>', 5000, 'the notice on the card');
  assert.equal(await card.locator('[data-field="notice"] b').count(), 0);
  /* a notice by language (1.3, set through the API): its texts, read only */
  const byLang = { en: 'Back at 18:00', ko: '18\uc2dc\uc5d0 \uc7ac\uac1c' };
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { notice: byLang })).status, 200);
  await waitFor(async () => (await field('notice')) ===
    'Notice (set by language through the API):\nen: Back at 18:00\nko: 18\uc2dc\uc5d0 \uc7ac\uac1c', 5000,
  'the notice by language on the card');

  /* bad input: the server's error is shown, nothing changes */
  await card.locator('[data-field="stock-input"]').fill('-5');
  assert.equal(await act('set-stock'), 400);
  await waitFor(async () => /^Failed: 400 INVALID_CONFIG: stock must be an integer from 0 to /.test(await field('error')), 5000, 'the server\'s error');
  assert.equal((await api.config(q)).stock, 3);
  /* a dismissed confirmation sends nothing */
  answer = false;
  await card.locator('[data-field="stock-input"]').fill('0');
  await card.locator('[data-action="set-stock"]').click();
  await sleep(300); /* a PATCH would have gone at once */
  assert.equal((await api.config(q)).stock, 3);
  answer = true;
  /* sold out from the dashboard: stock 0 with no pass live */
  assert.equal(await act('set-stock'), 200);
  assert.match(dialogs[dialogs.length - 1], /Set the stock of .* to 0/);
  assert.equal(await field('error'), '');
  await waitFor(async () => (await field('sale')) === 'sold out', 5000, 'the sold-out pill');
  assert.equal(await field('paused'), 'not admitting'); /* sold out admits nobody, paused or not */
  assert.match(await field('soldOutAt'), /^\d\d:\d\d:\d\d$/);
  assert.equal(await field('stockLeft'), '0');
  /* lift the limit */
  assert.equal(await act('clear-stock'), 200);
  assert.equal((await api.config(q)).stock, null);
  await waitFor(async () => (await field('stockLeft')) === 'no limit' && (await field('sale')) === 'sale open', 5000, 'no stock limit');

  /* close, then reopen */
  assert.equal(await act('toggle-closed'), 200);
  assert.match(dialogs[dialogs.length - 1], /Close the sale of/);
  assert.equal((await api.config(q)).closed, true);
  assert.deepEqual((await api.joinNew(q)).body.status, 'closed');
  await waitFor(async () => (await field('sale')) === 'sale closed', 5000, 'the closed pill');
  assert.equal(await field('paused'), 'not admitting'); /* nor does a closed sale */
  assert.equal(await act('toggle-closed'), 200);
  assert.match(dialogs[dialogs.length - 1], /Reopen the sale of/);
  assert.equal((await api.config(q)).closed, false);
  assert.equal(await act('clear-notice'), 200);
  assert.equal((await api.config(q)).notice, null);
  await waitFor(async () => card.locator('[data-field="notice"]').isHidden(), 5000, 'no notice on the card');
  /* a sale that opens later: the card says so, not "admitting" and "sale open" */
  const opens = Date.now() + 2 * 3600 * 1000;
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { opensAt: opens })).status, 200);
  await waitFor(async () => /^opens \d\d:\d\d:\d\d$/.test(await field('sale')), 5000, 'the pre-queue pill');
  assert.equal(await field('paused'), 'not admitting');
  await ctx.close();
});

test('dashboard: a push queue\'s card says "Notify me: N subscribed" and this server\'s pushes by outcome, as the API does; a queue without push has no such line', async () => {
  const tag = crypto.randomBytes(3).toString('hex');
  const q = 'dpush-' + tag, off = 'dnopush-' + tag;
  await api.createQueue(q, { admitPerSecond: 5, paused: true, push: true });
  await api.createQueue(off, { admitPerSecond: 5, paused: true });
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  const keys = { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
  /* three people subscribe through the API (one answered 410 by the push
   * service); the third takes theirs back: 2 subscribed */
  const subPath = `/v1/queues/${q}/entries/me/push`;
  const people = [];
  for (const kind of ['ok', 'gone', 'ok']) {
    const j = await api.joinNew(q);
    assert.equal(j.status, 200);
    const r = await api.call('PUT', subPath, { endpoint: `${pushSvc.base}/${kind}/${q}-${people.length}`, keys },
      { cookie: j.cookie });
    assert.equal(r.status, 204, JSON.stringify(r.body));
    people.push(j);
  }
  assert.equal((await api.call('DELETE', subPath, undefined, { cookie: people[2].cookie })).status, 204);
  assert.equal((await api.stats(q)).subscribed, 2);
  assert.equal((await api.joinNew(off)).status, 200);

  const ctx = await newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/admin`);
  await page.fill('#key', adminKey);
  await page.click('#login button[type=submit]');
  const card = page.locator(`article[data-queue="${q}"]`);
  const field = (f) => card.locator(`[data-field="${f}"]`).textContent();
  const line = () => card.locator('[data-field="push"]').textContent();
  await waitFor(async () => (await field('push-subscribed')) === '2', 5000, 'Notify me: 2 subscribed');
  assert.equal(await card.locator('[data-field="push"]').isVisible(), true);
  assert.equal(await line(), 'Notify me: 2 subscribed · pushes from this server: 0 delivered, 0 gone, 0 failed, 0 retried');
  /* a queue without push: no push line */
  const offCard = page.locator(`article[data-queue="${off}"]`);
  await waitFor(async () => (await offCard.locator('[data-field="waiting"]').textContent()) === '1', 5000, 'the other card');
  assert.equal(await offCard.locator('[data-field="push"]').isHidden(), true, 'no push line without push');

  /* admission: one push delivered, one gone (410), nobody left subscribed */
  const before = pushSvc.got.length;
  assert.equal((await api.admin('PATCH', `/v1/admin/queues/${q}`, { paused: false })).status, 200);
  await waitFor(() => pushSvc.got.length >= before + 2, 5000, 'two pushes at the stand-in');
  await waitFor(async () => (await line()) ===
    'Notify me: 0 subscribed · pushes from this server: 1 delivered, 1 gone, 0 failed, 0 retried', 5000,
  'the push line after the admissions');
  const st = await api.stats(q);
  assert.equal(st.subscribed, 0);
  assert.deepEqual(st.push, { delivered: 1, gone: 1, failed: 0, retried: 0 });
  await ctx.close();
});

test('dashboard: a queue with publicLog shows its latest signed checkpoint (size and root as GET .../log/checkpoint serves them), with links to it and to the key; a queue without the log has no such line', async () => {
  const tag = crypto.randomBytes(3).toString('hex');
  const q = 'dlog-' + tag, off = 'dnolog-' + tag;
  await api.createQueue(q, { admitPerSecond: 5, paused: true, publicLog: true });
  await api.createQueue(off, { admitPerSecond: 5, paused: true });
  for (let i = 0; i < 3; i++) assert.equal((await api.joinNew(q)).status, 200);
  assert.equal((await api.joinNew(off)).status, 200);
  /* the signer signs within about a second: the checkpoint with 3 joins */
  let cp = '';
  await waitFor(async () => {
    const r = await fetch(`${wr.base}/v1/queues/${q}/log/checkpoint`);
    cp = r.ok ? await r.text() : '';
    return cp.split('\n')[1] === '3';
  }, 10000, 'a checkpoint of 3 leaves');
  const root = cp.split('\n')[2];
  const ctx = await newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/admin`);
  await page.fill('#key', adminKey);
  await page.click('#login button[type=submit]');
  const line = page.locator(`article[data-queue="${q}"] p.log-line`);
  await waitFor(async () => (await line.count()) === 1 && (await line.getAttribute('data-size')) === '3', 15000,
    'the checkpoint line');
  assert.equal(await line.locator('span').textContent(), `Public log: 3 events signed, root ${root.slice(0, 16)}...`);
  assert.equal(await line.locator('a').nth(0).getAttribute('href'), `/v1/queues/${q}/log/checkpoint`);
  assert.equal(await line.locator('a').nth(1).getAttribute('href'), '/v1/log/key');
  const offCard = page.locator(`article[data-queue="${off}"]`);
  await waitFor(async () => (await offCard.locator('[data-field="waiting"]').textContent()) === '1', 5000, 'the other card');
  assert.equal(await offCard.locator('p.log-line').count(), 0, 'no log line without publicLog');
  await ctx.close();
});

const LANGS = ['en', 'ko', 'ja', 'zh-Hans', 'zh-Hant', 'es', 'fr', 'de', 'pt', 'it', 'vi', 'th', 'id', 'ar'];

test('the shopper\'s screens say each thing once, in every language: position, held, sold out and ended with a way back, the challenge\'s bar, the turn', async () => {
  const i18n = await (await fetch(`${wr.base}/static/i18n.json`)).json();
  assert.deepEqual(Object.keys(i18n), LANGS);
  const q = 'shopper-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(q, { admitPerSecond: 1, paused: true, stock: 500, targetUrl: `${target.base}/landing?q=${q}` });
  const ctx = await newContext({ viewport: { width: 360, height: 740 },
    extraHTTPHeaders: { Authorization: 'Bearer ' + adminKey } });
  const page = await ctx.newPage();
  const look = () => page.evaluate(() => {
    const shown = (id) => { const e = document.getElementById(id); return !!e && e.offsetParent !== null; };
    return {
      body: document.body.innerText, heading: document.getElementById('heading').textContent,
      status: document.getElementById('status').textContent, position: document.getElementById('position').textContent,
      positionShown: shown('position'), waitingShown: shown('waiting'), shopShown: shown('shop'),
      shopHref: document.getElementById('shop').getAttribute('href'), barShown: shown('check-progress')
    };
  });
  const count = (hay, needle) => hay.split(needle).length - 1;
  for (const l of LANGS) {
    const at = (s) => page.goto(`${wr.base}/q/${q}?preview=${s}&lang=${l}`);
    await at('waiting');
    let g = await look();
    assert.equal(count(g.body, g.position), 1, `${l} waiting: the position (${g.position}) said once:\n${g.body}`);
    assert.equal(g.status, i18n[l].status_waiting, `${l} waiting: the status`);
    await at('held');
    g = await look();
    assert.equal(g.heading, i18n[l].heading_held);
    assert.equal(g.positionShown || g.waitingShown, false, `${l} held: no position 1 beside a line of 0`);
    for (const [s, head, status] of [['soldout', 'heading_soldout', 'status_soldout'], ['closed', 'heading_closed', 'status_closed']]) {
      await at(s);
      g = await look();
      assert.equal(g.heading, i18n[l][head]);
      assert.equal(g.status, i18n[l][status]);
      assert.equal(count(g.body, i18n[l][head]), 1, `${l} ${s}: said once:\n${g.body}`);
      assert.equal(g.shopShown, true, `${l} ${s}: a way back to the shop`);
      assert.equal(g.shopHref, target.base + '/');
    }
    await at('challenge');
    g = await look();
    assert.equal(g.barShown, true, `${l} challenge: a progress bar`);
    assert.equal(g.status, i18n[l].status_checking);
    assert.doesNotMatch(g.status, /%/);
    await at('admitted');
    g = await look();
    assert.equal(g.heading, i18n[l].heading_admitted, `${l} admitted: its own heading`);
    assert.notEqual(g.heading, i18n[l].title);
    if (l === 'en') await shot(page, 'queue-admitted-en');
  }
  await ctx.close();

  /* K46: waiting only on stock (stock 0, one pass live): no time, but what for */
  const qs = 'onstock-' + crypto.randomBytes(3).toString('hex');
  await api.createQueue(qs, { admitPerSecond: 20, stock: 1, tokenTtlSeconds: 300 });
  const first = await api.joinNew(qs);
  await waitFor(async () => (await api.stats(qs)).admittedTotal === 1, 5000, 'the one pass issued');
  assert.ok(first.cookie);
  const c2 = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const p2 = await c2.newPage();
  await p2.goto(`${wr.base}/q/${qs}`);
  assert.equal(await text(p2, '#eta'), 'when an unused pass comes back');
  assert.equal(await text(p2, '#odds'), 'None left right now.');
  const polled = await p2.waitForResponse((r) => r.url().endsWith(`/v1/queues/${qs}/entries/me`) && r.status() === 200);
  const b = await polled.json();
  assert.equal(b.waitingFor, 'stock');
  assert.equal(b.etaSeconds, null);
  assert.equal(await text(p2, '#eta'), 'when an unused pass comes back');
  await c2.close();
  return `${LANGS.length} languages`;
});

test('unknown queue: 404 page; static assets: types, no traversal', async () => {
  const ctx = await newContext();
  const page = await ctx.newPage();
  const res = await page.goto(`${wr.base}/q/no-such-queue`);
  assert.equal(res.status(), 404);
  assert.equal(await text(page, '#status'), 'This waiting room does not exist.');
  await ctx.close();
  const css = await fetch(`${wr.base}/static/style.css`);
  assert.equal(css.status, 200);
  assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  const js = await fetch(`${wr.base}/static/queue.js`);
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  for (const bad of ['../page.c', '..%2Fpage.c', 'queue.html', 'nope.js', '%2e%2e%2fCMakeLists.txt']) {
    const r = await fetch(`${wr.base}/static/${bad}`);
    assert.equal(r.status, 404, bad);
  }
});

/* ---------- main ---------- */

async function main() {
  const { chromium } = await loadPlaywright('browser tests');
  adminKey = crypto.randomBytes(16).toString('hex');
  pushSvc = await startPushService();
  wr = await startServer(adminKey, crypto.randomBytes(32).toString('hex'), pushSvc.host);
  target = await startTarget(wr);
  api = makeApi(wr.base, adminKey);
  browser = await launchChromium(chromium);
  const result = await runTests(tests, ONLY, problems);
  await browser.close();
  target.srv.close();
  pushSvc.srv.close();
  await finishRun(result, [wr], { docs: UPDATE_DOCS, artifacts: ARTIFACTS, docsImg: DOCS_IMG, pictures: [
    ['queue-en-phone', 'queue.png'],
    /* the one with the server's history: charts, axes, the time to clear */
    ['dashboard-history', 'dashboard.png'],
    /* an autotuned queue: the rate in use and the reported latency against the target */
    ['dashboard-autotune', 'dashboard-autotune.png'],
    /* after the sale: the report page (charts per minute, totals, the CSV button) */
    ['dashboard-report', 'dashboard-report.png']] });
}

main().catch(async (e) => {
  console.error('browser tests: ' + ((e && e.stack) || e));
  try { if (browser) await browser.close(); } catch { /* ignore */ }
  if (target) target.srv.close();
  await stopServer(wr);
  process.exit(1);
});
