#!/usr/bin/env node
/*
 * groups.mjs - browser tests of priority groups and presale codes on the
 * queue page and the dashboard (docs/API.md 1.3, "Priority groups and
 * presale codes"):
 *   - the page's own logic in every language, the API's answers stood in
 *     for (page.route): the code form of a queue with groups, the confirm
 *     before a person in the standard line leaves it for a code, each
 *     refusal reason (unknown, usedUp, revoked, expired) in plain words
 *     with the form there to try again, the way back into the standard
 *     line, and a presale line's "you are in the X presale line" with its
 *     position explained and no ETA yet;
 *   - the real thing: ?code= on the page joins the code's group and leaves
 *     the address bar (Referrer-Policy no-referrer), every refusal reason
 *     of real codes (the server's render and the script's join), a
 *     standard person switching with a code;
 *   - the dashboard: the lines per group, creating codes (shown once,
 *     copied, downloaded as text), their counts, revoking one;
 *   - axe-core on the code state, the presale line and the codes panel.
 *
 *   node tests/browser/groups.mjs --waitroomd build/waitroomd [--only NAME]
 *                                 [--update-docs]
 *
 * One waitroomd (memory store: groups are the embedded store's in this
 * version), one Chromium; each test makes its own queue. --update-docs
 * copies the README's pictures of the presale line and the codes panel
 * to docs/img/ (scripts/screenshots.sh). Prints "N passed, N failed" and
 * exits 1 on any failure.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';

import {
  axeViolations, finishRun, launchChromium, loadPlaywright, openContext, pageRunnerArgs, runTests, startWaitroomd,
  stopWaitroomd, waitFor
} from './common.mjs';

const { WAITROOMD, ONLY, UPDATE_DOCS, ARTIFACTS, DOCS_IMG } = pageRunnerArgs('groups.mjs');

const LANGS = ['en', 'ko', 'ja', 'zh-Hans', 'zh-Hant', 'es', 'fr', 'de', 'pt', 'it', 'vi', 'th', 'id', 'ar'];
const REASONS = [['unknown', 'status_code_unknown'], ['usedUp', 'status_code_used_up'],
  ['revoked', 'status_code_revoked'], ['expired', 'status_code_expired']];
const CODE_RE = /^[0-9A-Z]{5}(-[0-9A-Z]{5}){3}$/; /* a generated code (core/groups.h) */

let browser, wr, adminKey, i18n;
const problems = [];
const tests = [];
const test = (name, fn) => tests.push({ name, fn });

/* One JSON call to waitroomd: {status, body, headers}. */
async function call(method, p, body, headers = {}) {
  const h = { ...headers };
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const r = await fetch(wr.base + p, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const t = await r.text();
  let json = null;
  try { json = t ? JSON.parse(t) : null; } catch { json = null; }
  return { status: r.status, body: json, headers: r.headers };
}
const admin = (method, p, body) => call(method, p, body, { Authorization: 'Bearer ' + adminKey });

async function newQueue(prefix, cfg) {
  const q = prefix + '-' + crypto.randomBytes(3).toString('hex');
  const r = await admin('PUT', `/v1/admin/queues/${q}`, cfg);
  assert.equal(r.status, 200, `PUT ${q}: ${JSON.stringify(r.body)}`);
  return q;
}

async function stats(q) {
  const r = await admin('GET', `/v1/admin/queues/${q}`);
  assert.equal(r.status, 200);
  return r.body.stats;
}

/* POST .../codes: the new codes */
async function makeCodes(q, body) {
  const r = await admin('POST', `/v1/admin/queues/${q}/codes`, body);
  assert.equal(r.status, 201, `POST codes: ${r.status} ${JSON.stringify(r.body)}`);
  assert.equal(r.body.codes.length, body.count);
  return r.body.codes;
}

/* A new visitor joins (no cookie), with a code when given. */
const joinNew = (q, code) => call('POST', `/v1/queues/${q}/entries`, code === undefined ? undefined : { code });

const newContext = (opts = {}) => openContext(browser, problems, opts);

const text = (page, sel) => page.locator(sel).first().textContent();
const bodyData = (page) => page.evaluate(() => ({ ...document.body.dataset }));
const shown = (page, sel) => page.locator(sel).first().isVisible();
const shot = async (page, name, locator) => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name + '.png');
  if (locator) await locator.screenshot({ path: file });
  else await page.screenshot({ path: file, fullPage: true });
};

async function switchLang(page, l) {
  await page.selectOption('#lang-select', l);
  await page.waitForFunction((x) => document.documentElement.lang === x, l);
}

/* Every language through the select: check(l, got) with the heading, the
 * status and the code form's words as the page shows them; back to en. */
async function eachLanguage(page, check) {
  for (const l of LANGS) {
    await switchLang(page, l);
    const got = await page.evaluate(() => ({
      dir: document.documentElement.dir,
      heading: document.getElementById('heading').textContent,
      status: document.getElementById('status').textContent,
      ask: document.getElementById('code-title').textContent,
      use: document.getElementById('code-submit').textContent,
      standard: document.getElementById('standard').textContent,
      group: document.getElementById('group-line').textContent,
      eta: document.getElementById('eta').textContent,
      body: document.body.innerText,
      wide: document.documentElement.scrollWidth > window.innerWidth
    }));
    assert.equal(got.dir, l === 'ar' ? 'rtl' : 'ltr', l);
    assert.doesNotMatch(got.body, /\{\w+\}|\b[a-z]+_[a-z_]+\b/, l + ': a placeholder or a key shows');
    assert.equal(got.wide, false, l + ': horizontal scrolling');
    check(l, got);
  }
  await switchLang(page, 'en');
}

/* ---------- the page, the API stood in for ---------- */

test('the page in every language, the API\'s answers stood in for: the code form, a confirm before leaving the standard line, each refusal reason with the form to retry, the standard line again, a presale line with no ETA yet', async () => {
  const q = await newQueue('pgcode', { admitPerSecond: 1, paused: true, groups: [{ name: 'fanclub' }] });
  const ctx = await newContext({ viewport: { width: 360, height: 740 }, extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const page = await ctx.newPage();
  const sent = []; /* the codes the page joined with */
  let answer = null; /* what POST entries with a code answers: [status, body] */
  await page.route(`**/v1/queues/${q}/entries`, async (route) => {
    const req = route.request();
    const body = req.method() === 'POST' ? req.postDataJSON() : null;
    if (!body || typeof body.code !== 'string') { await route.continue(); return; }
    sent.push(body.code);
    await route.fulfill({ status: answer[0], contentType: 'application/json', headers: { 'Cache-Control': 'no-store' },
      body: JSON.stringify(answer[1]) });
  });
  const deletes = [];
  page.on('request', (r) => { if (r.method() === 'DELETE') deletes.push(r.url()); });

  /* the standard line of a queue with groups: the form is there */
  await page.goto(`${wr.base}/q/${q}`);
  let b = await bodyData(page);
  assert.equal(b.state, 'waiting');
  assert.equal(b.groups, '1');
  assert.equal(b.group, '');
  assert.equal(await shown(page, '#code-form'), true, 'the code form in the standard line');
  assert.equal(await shown(page, '#standard'), false);
  assert.equal(await shown(page, '.group-info'), false);
  assert.equal((await stats(q)).waiting, 1);

  /* a dismissed confirm changes nothing */
  answer = [403, { error: 'CODE_INVALID', message: 'no', reason: 'unknown' }];
  await page.fill('#code-input', 'abcde-12345');
  page.once('dialog', (d) => d.dismiss());
  await page.click('#code-submit');
  await page.waitForTimeout(300); /* a leave would have been sent at once */
  assert.deepEqual(deletes, []);
  assert.deepEqual(sent, []);
  assert.equal((await bodyData(page)).state, 'waiting');

  /* accepted: leaves the standard line, joins with the code (white space dropped) */
  let asked = '';
  page.once('dialog', (d) => { asked = d.message(); d.accept(); });
  await page.fill('#code-input', ' abcde 12345 ');
  await page.click('#code-submit');
  await page.waitForFunction(() => document.body.dataset.state === 'code');
  assert.equal(asked, i18n.en.code_confirm);
  assert.equal(deletes.length, 1);
  assert.deepEqual(sent, ['abcde12345']);
  assert.equal((await stats(q)).waiting, 0, 'left the standard line');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'code-input', 'the field, ready to correct');

  /* each reason, in every language; the form stays to try again (no
   * confirm now: the person is in no line) */
  for (const [reason, key] of REASONS) {
    answer = [403, { error: 'CODE_INVALID', message: 'no', reason }];
    await page.fill('#code-input', 'CODE-' + reason);
    await page.click('#code-submit');
    await page.waitForFunction((r) => document.body.dataset.state === 'code' && document.body.dataset.reason === r, reason);
    assert.equal(await shown(page, '#code-form'), true);
    assert.equal(await shown(page, '#standard'), true);
    await eachLanguage(page, (l, got) => {
      assert.equal(got.heading, i18n[l].heading_code, `${reason} ${l}: the heading`);
      assert.equal(got.status, i18n[l][key], `${reason} ${l}: the status`);
      assert.equal(got.ask, i18n[l].code_ask);
      assert.equal(got.use, i18n[l].code_use);
      assert.equal(got.standard, i18n[l].code_standard);
    });
  }
  assert.deepEqual(sent.slice(1), REASONS.map((r) => 'CODE-' + r[0]));
  assert.equal(deletes.length, 1, 'no second leave');

  /* the standard line instead: a join without a code (the real one) */
  await page.click('#standard');
  await page.waitForFunction(() => document.body.dataset.state === 'waiting');
  assert.equal(sent.length, 5, 'joined without a code');
  assert.equal((await stats(q)).waiting, 1);
  assert.equal(await shown(page, '#code-form'), true);

  /* a code that works: the presale line, its position explained, no ETA yet */
  const waitingBody = { status: 'waiting', position: 2, ahead: 1, waiting: 7, etaSeconds: null, retryAfterMs: 60000,
    group: 'fanclub' };
  answer = [200, waitingBody];
  await page.route(`**/v1/queues/${q}/entries/me`, (route) => (route.request().method() === 'GET'
    ? route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(waitingBody) }) : route.continue()));
  page.once('dialog', (d) => d.accept());
  await page.fill('#code-input', 'GOOD-CODE');
  await page.click('#code-submit');
  await page.waitForFunction(() => document.body.dataset.group === 'fanclub');
  b = await bodyData(page);
  assert.equal(b.state, 'waiting');
  assert.equal(await text(page, '#position'), '2');
  assert.equal(await text(page, '#waiting'), '7', 'the whole line');
  assert.equal(await shown(page, '#code-form'), false, 'no code form in a presale line');
  assert.equal(await shown(page, '.group-info'), true);
  await eachLanguage(page, (l, got) => {
    /* the name isolated (FSI, PDI): its own direction on a right-to-left page */
    assert.equal(got.group, i18n[l].group_line.replace('{group}', '\u2068fanclub\u2069'), l + ': the group line');
    assert.equal(got.eta, i18n[l].eta_not_yet, l + ': no ETA yet');
    assert.equal(got.heading, i18n[l].heading);
    assert.ok(got.body.includes(i18n[l].group_note), l + ': the position explained');
  });
  await ctx.close();
  return `${LANGS.length} languages x ${REASONS.length} reasons`;
});

/* ---------- the real thing (the API's codes) ---------- */

test('?code= joins the code\'s presale line and leaves the address bar; every refusal reason of real codes, on the server\'s page and the script\'s join; a standard person switches with a code', async () => {
  const q = await newQueue('realcode', { admitPerSecond: 5, paused: true, groups: [{ name: 'fanclub' }] });
  const codes = await makeCodes(q, { group: 'fanclub', count: 5, uses: 1 });
  for (const c of codes) assert.match(c, CODE_RE);
  assert.equal((await admin('DELETE', `/v1/admin/queues/${q}/codes/${codes[1]}`)).status, 204);
  const first = await joinNew(q, codes[2]); /* someone else spends codes[2] */
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.group, 'fanclub');
  assert.equal(first.body.position, 1);
  for (let i = 0; i < 2; i++) assert.equal((await joinNew(q)).status, 200); /* the standard line */
  const soon = Date.now() + 1500;
  const [expiring] = await makeCodes(q, { group: 'fanclub', count: 1, uses: 5, expiresAt: soon });

  /* ?code= (as typed: lower case) joins fanclub behind the first, and leaves the address */
  const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const page = await ctx.newPage();
  const res = await page.goto(`${wr.base}/q/${q}?code=${codes[0].toLowerCase()}&lang=en`);
  assert.equal(res.status(), 200);
  assert.equal(res.headers()['referrer-policy'], 'no-referrer');
  assert.equal(page.url(), `${wr.base}/q/${q}?lang=en`, 'the code left the address bar');
  let b = await bodyData(page);
  assert.equal(b.state, 'waiting');
  assert.equal(b.group, 'fanclub');
  assert.equal(await text(page, '#position'), '2', 'position in the presale line');
  assert.equal(await text(page, '#group-line'), 'You are in the \u2068fanclub\u2069 presale line.');
  assert.equal(await shown(page, '#code-form'), false);
  const poll = await page.waitForResponse((r) => r.url().endsWith(`/v1/queues/${q}/entries/me`));
  assert.equal((await poll.json()).group, 'fanclub');
  await page.reload(); /* the cookie keeps the place and the line */
  assert.equal((await bodyData(page)).group, 'fanclub');
  assert.equal(await text(page, '#position'), '2');
  await shot(page, 'queue-presale');
  const st = await stats(q);
  assert.equal(st.groups.fanclub.waiting, 2);
  assert.equal(st.groups.standard.waiting, 2);

  /* refusals: the server's page for ?code=, then the script's joins */
  const ctx2 = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const p2 = await ctx2.newPage();
  const r2 = await p2.goto(`${wr.base}/q/${q}?code=${codes[1]}&lang=ko`);
  assert.equal(r2.status(), 403);
  b = await bodyData(p2);
  assert.equal(b.state, 'code');
  assert.equal(b.reason, 'revoked');
  assert.equal(await text(p2, '#status'), i18n.ko.status_code_revoked);
  assert.equal(p2.url(), `${wr.base}/q/${q}?lang=ko`);
  assert.equal(await p2.inputValue('#code-input'), codes[1], 'the code there to correct');
  await switchLang(p2, 'en');
  const tryCode = async (code, reason) => {
    await p2.fill('#code-input', code);
    await p2.click('#code-submit');
    await p2.waitForFunction((r) => document.body.dataset.state === 'code' && document.body.dataset.reason === r, reason);
    const key = REASONS.find((x) => x[0] === reason)[1];
    assert.equal(await text(p2, '#status'), i18n.en[key], reason);
  };
  await tryCode(codes[2], 'usedUp');
  await tryCode('NOPE0-NOPE0-NOPE0-NOPE0', 'unknown');
  await waitFor(() => Date.now() > soon + 200, 5000, 'the expiry');
  await tryCode(expiring, 'expired');
  assert.equal((await stats(q)).groups.fanclub.waiting, 2, 'a refused code changes nothing');
  await p2.fill('#code-input', codes[3]);
  await p2.click('#code-submit');
  await p2.waitForFunction(() => document.body.dataset.state === 'waiting' && document.body.dataset.group === 'fanclub');
  assert.equal(await text(p2, '#position'), '3');

  /* a person in the standard line switches with a code (after a confirm) */
  const [more] = await makeCodes(q, { group: 'fanclub', count: 1, uses: 1 });
  const ctx3 = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const p3 = await ctx3.newPage();
  await p3.goto(`${wr.base}/q/${q}`);
  assert.equal(await text(p3, '#position'), '3', 'third in the standard line');
  assert.equal(await shown(p3, '#code-form'), true);
  p3.once('dialog', (d) => d.accept());
  await p3.fill('#code-input', more);
  await p3.click('#code-submit');
  await p3.waitForFunction(() => document.body.dataset.group === 'fanclub');
  assert.equal(await text(p3, '#position'), '4');
  const after = await stats(q);
  assert.equal(after.groups.fanclub.waiting, 4);
  assert.equal(after.groups.standard.waiting, 2);
  /* admission: the presale line goes first, the page goes on */
  const codesNow = (await admin('GET', `/v1/admin/queues/${q}/codes`)).body;
  assert.deepEqual(codesNow.groups.fanclub, { issued: 7, usesSpent: 4, revoked: 1 });
  await ctx.close();
  await ctx2.close();
  await ctx3.close();
});

/* ---------- the dashboard ---------- */

test('dashboard: the lines per group, creating codes (shown once, copied, downloaded), their counts, revoking one; the server\'s refusals shown', async () => {
  const q = await newQueue('dashcode', { admitPerSecond: 1, paused: true, standardShare: 0.3,
    groups: [{ name: 'fanclub' }, { name: 'press' }] });
  for (let i = 0; i < 3; i++) assert.equal((await joinNew(q)).status, 200);
  const ctx = await newContext({ viewport: { width: 1280, height: 1400 }, acceptDownloads: true });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: wr.base });
  const page = await ctx.newPage();
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.accept(); });
  await page.goto(`${wr.base}/admin#key=${adminKey}`);
  const card = page.locator(`article[data-queue="${q}"]`);
  const panel = card.locator('[data-field="groups"]');
  await panel.waitFor();
  const line = (n, f) => panel.locator(`tr[data-line="${n}"] [data-field="${f}"]`).textContent();
  const count = (g, f) => panel.locator(`tr[data-codes="${g}"] [data-field="${f}"]`).textContent();
  await waitFor(async () => (await line('standard', 'waiting')) === '3', 5000, 'the standard line: 3');
  assert.equal(await line('fanclub', 'waiting'), '0');
  assert.equal(await line('press', 'admittedTotal'), '0');
  assert.deepEqual(await panel.locator('tr[data-line]').evaluateAll((rs) => rs.map((r) => r.dataset.line)),
    ['fanclub', 'press', 'standard'], 'the lines in admission order');
  assert.match(await text(panel, '[data-field="standard-share"]'), /at least 30 %/);
  await waitFor(async () => (await count('press', 'issued')) === '0', 5000, 'the code counts');

  /* a refusal is shown as the server says it */
  await panel.locator('[data-field="code-count"]').fill('0');
  await panel.locator('[data-action="create-codes"]').click();
  await waitFor(async () => /^Could not create the codes: 400 /.test(await text(panel, '[data-field="codes-error"]')),
    5000, 'the refusal');

  /* five codes for press, two uses each: shown once */
  await panel.locator('[data-field="code-group"]').selectOption('press');
  await panel.locator('[data-field="code-count"]').fill('5');
  await panel.locator('[data-field="code-uses"]').fill('2');
  await panel.locator('[data-action="create-codes"]').click();
  const list = panel.locator('[data-field="codes-list"]');
  await waitFor(async () => (await list.inputValue()).split('\n').length === 5, 5000, 'five new codes');
  const made = (await list.inputValue()).split('\n');
  for (const c of made) assert.match(c, CODE_RE);
  assert.equal(await text(panel, '[data-field="codes-error"]'), '');
  assert.match(await text(panel, '[data-field="codes-new-title"]'), /^5 new codes for press\. Shown only now/);
  await waitFor(async () => (await count('press', 'issued')) === '5', 5000, 'issued 5');
  await panel.locator('[data-action="copy-codes"]').click();
  await waitFor(async () => (await text(panel, '[data-field="codes-copied"]')) === 'Copied 5.', 5000, 'copied');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), made.join('\n'));
  const [dl] = await Promise.all([page.waitForEvent('download'), panel.locator('[data-action="download-codes"]').click()]);
  assert.equal(dl.suggestedFilename(), `${q}-press-codes.txt`);
  assert.equal(fs.readFileSync(await dl.path(), 'utf8'), made.join('\n') + '\n');
  await shot(page, 'dashboard-codes', card);

  /* one is used: the press line has one person; one is revoked */
  const joined = await joinNew(q, made[0]);
  assert.equal(joined.status, 200, JSON.stringify(joined.body));
  await waitFor(async () => (await line('press', 'waiting')) === '1', 5000, 'press: 1 waiting');
  await panel.locator('[data-field="revoke-input"]').fill(made[1]);
  await panel.locator('[data-action="revoke-code"]').click();
  await waitFor(async () => (await text(panel, '[data-field="codes-said"]')) === `Revoked ${made[1]}.`, 5000, 'revoked');
  assert.match(dialogs[dialogs.length - 1], new RegExp(`^Revoke the code ${made[1]} of "${q}"\\?`));
  await waitFor(async () => (await count('press', 'revoked')) === '1' && (await count('press', 'usesSpent')) === '1',
    5000, 'revoked 1, uses spent 1');
  assert.equal(await count('press', 'issued'), '5');
  assert.equal(await count('fanclub', 'issued'), '0');
  assert.equal((await joinNew(q, made[1])).body.reason, 'revoked');
  /* an unknown code */
  await panel.locator('[data-field="revoke-input"]').fill('NOPE0-NOPE0-NOPE0-NOPE0');
  await panel.locator('[data-action="revoke-code"]').click();
  await waitFor(async () => (await text(panel, '[data-field="codes-error"]')) === 'No such code: NOPE0-NOPE0-NOPE0-NOPE0.',
    5000, 'no such code');
  /* hidden: gone from the page */
  await panel.locator('[data-action="hide-codes"]').click();
  assert.equal(await list.inputValue(), '');
  assert.equal(await panel.locator('[data-field="codes-new"]').isVisible(), false);
  /* a queue without groups has no panel */
  const plain = await newQueue('dashplain', { admitPerSecond: 1 });
  await page.locator(`article[data-queue="${plain}"]`).waitFor();
  assert.equal(await page.locator(`article[data-queue="${plain}"] [data-field="groups"]`).count(), 0);
  await ctx.close();
});

test('axe-core: no WCAG 2.1 AA violation on the code state, the presale line (en, ar) and the codes panel', async () => {
  const q = await newQueue('axecode', { admitPerSecond: 1, paused: true, groups: [{ name: 'fanclub' }] });
  const ctx = await newContext({ bypassCSP: true, extraHTTPHeaders: { Authorization: 'Bearer ' + adminKey, 'Accept-Language': 'en' } });
  const page = await ctx.newPage();
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const found = [];
  for (const s of ['code', 'presale', 'waiting']) {
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const l of ['en', 'ar']) {
        await page.goto(`${wr.base}/q/${q}?preview=${s}&lang=${l}`);
        for (const v of await axeViolations(page)) found.push(`${s} ${l} ${scheme}: ${v}`);
      }
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(`${wr.base}/admin#key=${adminKey}`);
  await page.locator(`article[data-queue="${q}"] [data-field="groups"]`).waitFor();
  for (const v of await axeViolations(page)) found.push(`dashboard: ${v}`);
  await ctx.close();
  assert.deepEqual(found, [], 'axe-core violations');
});

/* ---------- main ---------- */

async function main() {
  const { chromium } = await loadPlaywright('groups tests');
  adminKey = crypto.randomBytes(16).toString('hex');
  wr = await startWaitroomd(WAITROOMD, ['--listen', '127.0.0.1:0', '--store', 'memory', '--admin-key', adminKey,
    '--token-secret', crypto.randomBytes(32).toString('hex'), '--log-level', 'warn']);
  i18n = await (await fetch(`${wr.base}/static/i18n.json`)).json();
  assert.deepEqual(Object.keys(i18n), LANGS);
  browser = await launchChromium(chromium);
  const result = await runTests(tests, ONLY, problems);
  await browser.close();
  await finishRun(result, [wr], { docs: UPDATE_DOCS, artifacts: ARTIFACTS, docsImg: DOCS_IMG,
    pictures: [['queue-presale', 'queue-presale.png'], ['dashboard-codes', 'dashboard-codes.png']] });
}

main().catch(async (e) => {
  console.error('groups tests: ' + ((e && e.stack) || e));
  try { if (browser) await browser.close(); } catch { /* ignore */ }
  await stopWaitroomd(wr);
  process.exit(1);
});
