#!/usr/bin/env node
/*
 * brand.mjs - browser tests of the queue page as the shop's (docs/API.md,
 * "The queue page carries the shop"): the brand, logo and accent colour;
 * hostile brand text staying text; a --web-dir template (examples/page)
 * used, with missing files falling back and a broken one stopping the
 * start; every preview state (GET /q/{queue}?preview=STATE) in each of the
 * fourteen languages, translated and without horizontal scrolling at
 * 360 px; axe-core finding no WCAG 2.1 AA violation in every preview state
 * in English, Korean and Arabic (and English in the dark theme, and the
 * branded page) and on the dashboard; the status announced once per
 * change, keyboard use, reduced motion, the dark theme and the tab title;
 * the dashboard's key from the URL fragment and its preview links.
 *
 *   node tests/browser/brand.mjs --waitroomd build/waitroomd [--only NAME]
 *                                [--update-docs]
 *
 * One Chromium, one page per test walking many URLs (a preview asks the
 * server nothing, so each load is quick). Two waitroomd: one with the
 * embedded page, one with --web-dir examples/page. --update-docs copies
 * the README's pictures to docs/img/ (scripts/screenshots.sh).
 * Prints "N passed, N failed" and exits 1 on any failure.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';

import {
  ROOT, axeViolations, finishRun, launchChromium, loadPlaywright, openContext, pageRunnerArgs, runTests,
  startWaitroomd, stopWaitroomd, waitFor
} from './common.mjs';

const { WAITROOMD, ONLY, UPDATE_DOCS, ARTIFACTS, DOCS_IMG } = pageRunnerArgs('brand.mjs');

const LANGS = ['en', 'ko', 'ja', 'zh-Hans', 'zh-Hant', 'es', 'fr', 'de', 'pt', 'it', 'vi', 'th', 'id', 'ar'];
const STATES = ['waiting', 'held', 'presale', 'prequeue', 'challenge', 'admitted', 'closed', 'soldout', 'reconnecting',
  'full', 'error', 'code'];
const PHONE = { width: 360, height: 740 };

let browser, wr, shop, adminKey;
const problems = [];
const tests = [];
const test = (name, fn) => tests.push({ name, fn });

async function admin(base, method, p, body) {
  const r = await fetch(base + p, {
    method,
    headers: { Authorization: 'Bearer ' + adminKey, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  const text = await r.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  return { status: r.status, body: json, headers: r.headers };
}

async function createQueue(base, name, cfg) {
  const r = await admin(base, 'PUT', `/v1/admin/queues/${name}`, cfg);
  assert.equal(r.status, 200, `PUT ${name}: ${JSON.stringify(r.body)}`);
  return r.body;
}

const newContext = (opts = {}) => openContext(browser, problems, opts);

/* A context that may open previews (the admin key on every request). */
const previewContext = (opts = {}) => newContext({
  ...opts, extraHTTPHeaders: { Authorization: 'Bearer ' + adminKey, ...(opts.extraHTTPHeaders || {}) }
});

const shot = async (page, name) => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, name + '.png'), fullPage: true });
};

const text = (page, sel) => page.locator(sel).first().textContent();
const noScroll = (page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

/* A tiny logo, served for https://cdn.example (the route stands in for a CDN). */
const LOGO_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="80" height="32"><rect width="80" height="32" fill="#123"/></svg>';

test('brand: title, brand, logo and accent colour show; ink keeps 4.5:1; CSP lets images come from the logo origin only', async () => {
  const q = 'brand-' + crypto.randomBytes(3).toString('hex');
  await createQueue(wr.base, q, {
    admitPerSecond: 1, paused: true, targetUrl: '/after',
    page: { title: 'Spring drop', brand: 'Tea & Co', logoUrl: 'https://cdn.example/logo.svg', accentColor: '#FFD400' }
  });
  const ctx = await previewContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
  await ctx.route('https://cdn.example/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: LOGO_SVG }));
  const page = await ctx.newPage();
  const res = await page.goto(`${wr.base}/q/${q}`);
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /img-src 'self' data: https:\/\/cdn\.example;/);
  assert.match(csp, /script-src 'self';/);
  assert.match(csp, /style-src 'self';/);
  assert.match(csp, /default-src 'self';/);
  assert.equal(await text(page, '.brand-name'), 'Tea & Co');
  assert.equal(await text(page, '#event-title'), 'Spring drop');
  await waitFor(() => page.evaluate(() => document.getElementById('logo').naturalWidth > 0), 5000, 'the logo to load');
  assert.equal(await page.locator('#logo').isVisible(), true);
  await waitFor(async () => /^#1 - Spring drop - Tea & Co$/.test(await page.title()), 5000, 'the tab title with the position');
  assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()), '#ffd400');
  /* the progress bar and the admitted page's button in the accent, with black text on yellow */
  assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('progress')).accentColor), 'rgb(255, 212, 0)');
  await page.goto(`${wr.base}/q/${q}?preview=admitted`);
  const btn = await page.evaluate(() => {
    const s = getComputedStyle(document.getElementById('continue'));
    return [s.backgroundColor, s.color];
  });
  assert.deepEqual(btn, ['rgb(255, 212, 0)', 'rgb(0, 0, 0)']);
  await shot(page, 'brand-admitted');

  /* a dark accent gets white text; no brand: the queue's name and no logo */
  await admin(wr.base, 'PATCH', `/v1/admin/queues/${q}`, { page: { accentColor: '#1a1a6e' } });
  await page.goto(`${wr.base}/q/${q}?preview=admitted`);
  assert.deepEqual(await page.evaluate(() => {
    const s = getComputedStyle(document.getElementById('continue'));
    return [s.backgroundColor, s.color];
  }), ['rgb(26, 26, 110)', 'rgb(255, 255, 255)']);
  assert.equal(await text(page, '.brand-name'), q);
  assert.equal(await page.locator('#logo').isVisible(), false);
  assert.doesNotMatch((await page.goto(`${wr.base}/q/${q}?preview=waiting`)).headers()['content-security-policy'], /cdn\.example/);
  await ctx.close();
});

test('hostile brand, title and notice stay text', async () => {
  const q = 'evil-' + crypto.randomBytes(3).toString('hex');
  const brand = '<img src=x onerror="window.__pwned=1">"\'&';
  const title = '</title><script>window.__pwned=2</script>';
  const notice = '</p><script>window.__pwned=3</script><a href="javascript:window.__pwned=4">x</a>';
  await createQueue(wr.base, q, { admitPerSecond: 1, paused: true, notice, page: { brand, title } });
  const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/q/${q}`);
  await waitFor(async () => (await page.title()).startsWith('#1 - '), 5000, 'the position in the title');
  assert.equal(await text(page, '.brand-name'), brand);
  assert.equal(await text(page, '#event-title'), title);
  assert.equal(await page.title(), `#1 - ${title} - ${brand}`);
  assert.equal(await text(page, '#notice'), notice);
  assert.equal(await page.locator('a[href^="javascript"]').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('img').count(), 1); /* the (hidden) logo only */
  /* ours only: captcha.js, push.js and queue.js (no widget script on a queue without a captcha) */
  assert.deepEqual(await page.locator('script').evaluateAll((ss) => ss.map((e) => e.getAttribute('src'))),
    ['/static/captcha.js', '/static/push.js', '/static/queue.js']);
  await ctx.close();
});

test('--web-dir: the shop template is used, missing files fall back, a broken file stops the start', async () => {
  const q = 'tea-' + crypto.randomBytes(3).toString('hex');
  await createQueue(shop.base, q, {
    admitPerSecond: 1, paused: true,
    page: { brand: 'Tea & Co', title: 'Tea drop', logoUrl: '/static/logo.svg', accentColor: '#1f5130' }
  });
  const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' }, viewport: PHONE });
  const page = await ctx.newPage();
  await page.goto(`${shop.base}/q/${q}`);
  assert.equal((await text(page, '.shop-footer')).trim(), 'Tea & Co. · Thank you for waiting with us.');
  assert.equal(await text(page, '#heading'), 'You are in the queue for the tea drop'); /* its i18n.json */
  assert.equal(await text(page, '#position'), '1'); /* the embedded queue.js runs */
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('h1')).fontFamily), 'Georgia, "Noto Serif", serif');
  await waitFor(() => page.evaluate(() => document.getElementById('logo').naturalWidth > 0), 5000, 'the shop logo');
  /* words it did not change, and languages it did not touch, are the embedded ones */
  assert.equal(await text(page, '#status'), 'Keep this page open: it moves on by itself, and your place is kept even if your phone locks.');
  assert.equal(await text(page, '[data-t="eta"]'), 'Estimated wait');
  await switchLang(page, 'ar'); /* waits for the strings (fetched on the switch) */
  assert.equal(await text(page, '#heading'), 'أنت في الطابور');
  assert.ok(await noScroll(page), 'no horizontal scrolling at 360 px');
  await switchLang(page, 'en');
  await shot(page, 'shop-template');
  /* style.css is not in examples/page: the embedded one */
  const css = await (await fetch(`${shop.base}/static/style.css`)).text();
  assert.equal(css, fs.readFileSync(path.join(ROOT, 'src/http/web/style.css'), 'utf8'));
  assert.equal((await fetch(`${shop.base}/static/shop.css`)).status, 200);
  assert.equal((await fetch(`${shop.base}/static/README.md`)).status, 404);
  await ctx.close();

  /* a broken i18n.json: exit 2 at start, saying which file */
  const bad = fs.mkdtempSync(path.join(os.tmpdir(), 'wr-web-'));
  fs.writeFileSync(path.join(bad, 'i18n.json'), '{"en": {"title": ');
  const r = await new Promise((resolve) => {
    const p = spawn(WAITROOMD, ['--listen', '127.0.0.1:0', '--store', 'memory', '--web-dir', bad], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => { err += d; });
    const t = setTimeout(() => p.kill('SIGKILL'), 10000);
    p.on('exit', (code) => { clearTimeout(t); resolve({ code, err }); });
  });
  fs.rmSync(bad, { recursive: true, force: true });
  assert.equal(r.code, 2, 'exit status: ' + r.err);
  assert.match(r.err, /--web-dir: .*i18n\.json is not JSON/);
});

/* Right to left, as page.c's wr_lang_rtl. */
const rtl = (l) => /^(ar|he|iw|fa|ur|yi|ji|ps|sd|ckb|dv|ug|syr|arc)(-|$)/i.test(l);

/* Where each operator text starts and ends on screen: the first and the
 * last character's boxes (Range rects), and the element's direction. */
const operatorTexts = (page) => page.evaluate(() => {
  const out = {};
  for (const sel of ['.brand-name', '#event-title', '#notice']) {
    const e = document.querySelector(sel);
    const node = e && e.firstChild;
    if (!node || !node.textContent) continue;
    const box = (i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1); return r.getBoundingClientRect(); };
    const n = node.textContent.length;
    out[sel] = { first: box(0).left, last: box(n - 1).left, dir: getComputedStyle(e).direction, text: node.textContent };
  }
  return out;
});

test('K41: operator texts keep their own direction on every right-to-left page (brand, title, notice), and K40: a language a --web-dir adds is offered and chosen', async () => {
  /* the languages the page speaks: the embedded ones and a web dir's Hebrew */
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wr-web-'));
  fs.writeFileSync(path.join(dir, 'i18n.json'), JSON.stringify({
    he: { title: 'חדר המתנה', heading: 'אתם בתור', status_waiting: 'השאירו את הדף פתוח. הוא מתעדכן לבד, ומקומכם נשמר.' }
  }));
  const extra = await startWaitroomd(WAITROOMD, ['--listen', '127.0.0.1:0', '--store', 'memory', '--admin-key', adminKey,
    '--token-secret', crypto.randomBytes(32).toString('hex'), '--log-level', 'warn', '--web-dir', dir]);
  try {
    const langs = Object.keys(await (await fetch(`${extra.base}/static/i18n.json`)).json());
    const rtlLangs = langs.filter(rtl);
    assert.deepEqual(rtlLangs, ['ar', 'he'], 'the right-to-left languages the page speaks');
    const q = 'dir-' + crypto.randomBytes(3).toString('hex');
    await createQueue(extra.base, q, { admitPerSecond: 1, paused: true, notice: 'Doors open at 10:00.',
      page: { brand: 'Acme Store!', title: 'Spring drop (limited).' } });
    const ctx = await newContext({ viewport: PHONE });
    const page = await ctx.newPage();
    for (const l of rtlLangs) {
      await page.goto(`${extra.base}/q/${q}?lang=${l}`);
      assert.equal(await page.getAttribute('html', 'dir'), 'rtl', l);
      const t = await operatorTexts(page);
      for (const sel of ['.brand-name', '#event-title', '#notice']) {
        assert.ok(t[sel], `${l}: ${sel} shown`);
        assert.equal(t[sel].dir, 'ltr', `${l}: ${sel} keeps its own direction`);
        /* "Acme Store!": the "!" ends the text on the right, not before "Acme" */
        assert.ok(t[sel].last > t[sel].first, `${l}: ${sel} "${t[sel].text}" is not mirrored (${t[sel].first} -> ${t[sel].last})`);
      }
      if (l === 'ar') await shot(page, 'operator-texts-ar');
    }
    /* an Arabic notice on an English page keeps its direction too */
    await admin(extra.base, 'PATCH', `/v1/admin/queues/${q}`, { notice: 'تفتح الأبواب الساعة العاشرة.' });
    await page.goto(`${extra.base}/q/${q}?lang=en`);
    const en = await operatorTexts(page);
    assert.equal(en['#notice'].dir, 'rtl');
    assert.ok(en['#notice'].last < en['#notice'].first, 'the Arabic notice reads right to left');
    await ctx.close();

    /* K40: Hebrew from the web dir, chosen by Accept-Language's legacy "iw",
     * named in the menu in its own language, and switched to from it */
    const c2 = await newContext({ viewport: PHONE, extraHTTPHeaders: { 'Accept-Language': 'iw-IL,en;q=0.5' } });
    const p2 = await c2.newPage();
    await p2.goto(`${extra.base}/q/${q}`);
    assert.equal(await p2.getAttribute('html', 'lang'), 'he');
    assert.equal(await text(p2, '#heading'), 'אתם בתור');
    const opt = p2.locator('#lang-select option[value="he"]');
    assert.equal(await opt.textContent(), 'עברית');
    assert.equal(await p2.inputValue('#lang-select'), 'he');
    await switchLang(p2, 'ko');
    assert.equal(await p2.getAttribute('html', 'dir'), 'ltr');
    await switchLang(p2, 'he');
    assert.equal(await p2.getAttribute('html', 'dir'), 'rtl');
    assert.equal(await text(p2, '#heading'), 'אתם בתור');
    await c2.close();
    /* Android's legacy "in-ID": Indonesian */
    const c3 = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'in-ID,en-US;q=0.9' }, locale: 'in-ID' });
    const p3 = await c3.newPage();
    await p3.goto(`${extra.base}/q/${q}`);
    assert.equal(await p3.getAttribute('html', 'lang'), 'id');
    await c3.close();
    return `right to left: ${rtlLangs.join(', ')}`;
  } finally {
    await stopWaitroomd(extra);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/* Switches the page's language with its select, as a person would. */
async function switchLang(page, l) {
  await page.selectOption('#lang-select', l);
  await page.waitForFunction((x) => document.documentElement.lang === x &&
    document.getElementById('lang-select').value === x, l);
}

test('every preview state in each of the fourteen languages: every string translated, no horizontal scroll at 360 px', async () => {
  const i18n = await (await fetch(`${wr.base}/static/i18n.json`)).json();
  const keys = Object.keys(i18n.en).sort();
  const holes = (s) => (s.match(/\{\w+\}/g) || []).sort().join();
  assert.deepEqual(Object.keys(i18n).sort(), [...LANGS].sort(), 'the languages of i18n.json');
  for (const l of LANGS) {
    assert.deepEqual(Object.keys(i18n[l]).sort(), keys, 'the keys of ' + l);
    for (const k of keys) {
      assert.ok(typeof i18n[l][k] === 'string' && i18n[l][k].trim() !== '', `${l}.${k} is empty`);
      assert.equal(holes(i18n[l][k]), holes(i18n.en[k]), `${l}.${k}: the placeholders of en`);
      if (l !== 'en' && !/^(title_prequeue|countdown_days)$/.test(k))
        assert.notEqual(i18n[l][k], i18n.en[k], `${l}.${k} is the English text`);
    }
  }
  const q = 'langs-' + crypto.randomBytes(3).toString('hex');
  await createQueue(wr.base, q, { admitPerSecond: 1, page: { brand: 'Tea & Co', title: 'Spring drop' } });
  /* the server's first render in each language (no script) */
  for (const l of LANGS) {
    const r = await fetch(`${wr.base}/q/${q}?preview=waiting&lang=${l}`, { headers: { Authorization: 'Bearer ' + adminKey } });
    const html = await r.text();
    assert.ok(html.includes(`<html lang="${l}" dir="${rtl(l) ? 'rtl' : 'ltr'}">`), 'server render in ' + l);
    assert.ok(html.includes(`>${i18n[l].heading.replace(/&/g, '&amp;').replace(/'/g, '&#39;')}</h1>`), 'server heading in ' + l);
  }
  /* in the browser: each state once, then every language through the select */
  const ctx = await previewContext({ viewport: PHONE, extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const page = await ctx.newPage();
  for (const s of STATES) {
    assert.equal((await page.goto(`${wr.base}/q/${q}?preview=${s}`)).status(), 200, s);
    let english = null;
    for (const l of LANGS) {
      if (l !== 'en' || english) await switchLang(page, l);
      const got = await page.evaluate(() => ({
        dir: document.documentElement.dir,
        heading: document.getElementById('heading').textContent,
        status: document.getElementById('status').textContent,
        body: document.body.innerText,
        wide: document.documentElement.scrollWidth > window.innerWidth
      }));
      const where = `${s} in ${l}`;
      assert.equal(got.dir, rtl(l) ? 'rtl' : 'ltr', where);
      assert.ok(got.heading.trim() && got.status.trim(), where + ': heading and status');
      assert.doesNotMatch(got.body, /\{\w+\}|\b[a-z]+_[a-z_]+\b/, where + ': a placeholder or a key shows');
      assert.equal(got.wide, false, where + ': horizontal scrolling at 360 px');
      if (l === 'en') english = got;
      else {
        assert.notEqual(got.heading, english.heading, where + ': the English heading');
        assert.notEqual(got.status, english.status, where + ': the English status');
      }
      if (l === 'ar' && (s === 'waiting' || s === 'prequeue')) await shot(page, `preview-${s}-ar`);
    }
    await switchLang(page, 'en');
    if (s === 'waiting' || s === 'prequeue' || s === 'soldout') await shot(page, `preview-${s}-en`);
  }
  await ctx.close();
  return `${LANGS.length} languages x ${STATES.length} states`;
});

test('axe-core: no WCAG 2.1 AA violation in every preview state (en, ko, ar; some in dark and branded), nor on the dashboard', async () => {
  const plain = 'axe-' + crypto.randomBytes(3).toString('hex');
  const branded = 'axeb-' + crypto.randomBytes(3).toString('hex');
  await createQueue(wr.base, plain, { admitPerSecond: 1, targetUrl: '/after' });
  await createQueue(wr.base, branded, {
    admitPerSecond: 1, targetUrl: '/after',
    page: { brand: 'Tea & Co', title: 'Spring drop', accentColor: '#ffd400' }
  });
  /* an autotuned queue: the dashboard's autotune charts and line are checked too */
  const tuned = 'axet-' + crypto.randomBytes(3).toString('hex');
  await createQueue(wr.base, tuned, { admitPerSecond: 5, autotune: { minPerSecond: 1, maxPerSecond: 10, targetMs: 300 } });
  const ctx = await previewContext({ bypassCSP: true, viewport: PHONE, extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const page = await ctx.newPage();
  await page.emulateMedia({ reducedMotion: 'reduce' }); /* no colour mid-transition when the theme flips */
  const found = [];
  let n = 0;
  const check = async (what) => {
    for (const v of await axeViolations(page)) found.push(`${what}: ${v}`);
    n++;
  };
  for (const s of STATES) {
    await page.goto(`${wr.base}/q/${plain}?preview=${s}`);
    for (const l of ['en', 'ko', 'ar']) {
      if (l !== 'en') await switchLang(page, l);
      await check(`${s} ${l}`);
    }
    await switchLang(page, 'en');
  }
  /* the dark theme, and a light accent (yellow) in both themes */
  for (const s of ['waiting', 'prequeue', 'admitted', 'soldout', 'error']) {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${wr.base}/q/${plain}?preview=${s}`);
    await check(`${s} en dark`);
    await page.goto(`${wr.base}/q/${branded}?preview=${s}`);
    await check(`${s} en dark branded`);
    await page.emulateMedia({ colorScheme: 'light' });
    await check(`${s} en light branded`);
  }
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${wr.base}/admin#key=${adminKey}`);
    await waitFor(async () => (await page.locator(`article[data-queue="${branded}"] [data-field="page-state"]`).count()) === 1 &&
      (await text(page, `article[data-queue="${branded}"] [data-field="page-state"]`)) !== '-', 10000, 'the page state');
    await waitFor(async () => (await page.locator(`article[data-queue="${tuned}"] [data-chart="latencyMs"]`).count()) === 1 &&
      /Autotune/.test(await text(page, `article[data-queue="${tuned}"] [data-field="autotune"]`)), 10000, 'the autotune line');
    await check(`dashboard ${scheme}`);
  }
  await ctx.close();
  assert.deepEqual(found, [], 'axe-core violations');
  return `${n} pages checked`;
});

test('by hand: the status is announced once per change, keyboard alone, reduced motion, dark theme, the tab title', async () => {
  const q = 'a11y-' + crypto.randomBytes(3).toString('hex');
  await createQueue(wr.base, q, { admitPerSecond: 1, paused: true, pollBands: [{ ms: 250 }] });
  /* one person ahead, whose cookie lets them leave later */
  const first = await fetch(`${wr.base}/v1/queues/${q}/entries`, { method: 'POST' });
  const cookie = (first.headers.get('set-cookie') || '').split(';')[0];
  const ctx = await newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
  const page = await ctx.newPage();
  let polls = 0;
  page.on('request', (r) => { if (r.url().endsWith('/entries/me')) polls++; });
  await page.goto(`${wr.base}/q/${q}`);
  assert.equal(await text(page, '#position'), '2');
  /* the live regions: the status, and the position (said there, once) */
  await page.evaluate(() => {
    window.__changes = 0;
    window.__status = 0;
    const opts = { childList: true, characterData: true, subtree: true };
    new MutationObserver(() => { window.__changes++; }).observe(document.querySelector('.s-waiting .big'), opts);
    new MutationObserver(() => { window.__status++; }).observe(document.getElementById('status'), opts);
  });
  assert.equal(await page.getAttribute('.s-waiting .big', 'aria-live'), 'polite');
  await waitFor(() => polls >= 4, 10000, 'four polls');
  assert.equal(await page.evaluate(() => window.__changes), 0, 'an unchanged position is not announced again');
  const left = await fetch(`${wr.base}/v1/queues/${q}/entries/me`, { method: 'DELETE', headers: { cookie } });
  assert.equal(left.status, 204);
  await waitFor(async () => (await text(page, '#position')) === '1', 10000, 'position 1');
  const at = polls;
  await waitFor(() => polls >= at + 3, 10000, 'three more polls');
  assert.equal(await page.evaluate(() => window.__changes), 1, 'one change, one announcement');
  assert.equal(await page.evaluate(() => window.__status), 0, 'the status does not repeat the position');
  assert.equal(await page.title(), '#1 - Waiting room - ' + q);

  /* keyboard alone: Tab reaches the language select and the leave button; arrows switch the language */
  const reached = [];
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press('Tab');
    reached.push(await page.evaluate(() => document.activeElement && document.activeElement.id));
  }
  assert.ok(reached.includes('lang-select') && reached.includes('leave'), 'tab order: ' + reached.join(','));
  assert.ok(reached.indexOf('lang-select') < reached.indexOf('leave'), 'the select first');
  await page.focus('#lang-select');
  assert.equal(await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle), 'solid');
  await page.keyboard.press('ArrowDown'); /* en -> ko */
  await waitFor(async () => (await text(page, '#heading')) === '대기열에 계십니다', 5000, 'Korean by keyboard');
  assert.equal(await page.title(), '1번째 - 대기실 - ' + q);
  assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('status')).wordBreak), 'keep-all');

  /* motion and colours as the person asks */
  await page.waitForFunction(() => document.body.classList.contains('ready'));
  assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('leave')).transitionDuration), '0.15s, 0.15s');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('leave')).transitionDuration), '0s');
  await page.emulateMedia({ colorScheme: 'dark' });
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(22, 27, 36)');
  await ctx.close();
});

test('dashboard: the key from the URL fragment, each queue\'s page state, preview links', async () => {
  const q = 'dash-' + crypto.randomBytes(3).toString('hex');
  await createQueue(wr.base, q, { admitPerSecond: 1, paused: true, page: { brand: 'Tea & Co', lang: 'ko' } });
  await fetch(`${wr.base}/v1/queues/${q}/entries`, { method: 'POST' });
  /* a browser asking for a language the page does not speak: the queue's page.lang */
  const ctx = await newContext({ viewport: { width: 1280, height: 900 }, extraHTTPHeaders: { 'Accept-Language': 'nl-NL' } });
  const page = await ctx.newPage();
  await page.goto(`${wr.base}/admin#key=${encodeURIComponent(adminKey)}`);
  const card = `article[data-queue="${q}"]`;
  await page.waitForSelector(card);
  assert.equal(await page.evaluate(() => window.location.hash), '', 'the key is wiped from the address');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('wr_admin_key')), adminKey);
  await waitFor(async () => (await text(page, `${card} [data-field="page-state"]`)) === 'paused: a line that does not move', 5000, 'the page state');
  assert.equal(await text(page, `${card} [data-field="page-brand"]`), 'Tea & Co · ko');
  assert.equal(await page.locator(`${card} .previews a`).count(), STATES.length);
  const [tab] = await Promise.all([ctx.waitForEvent('page'), page.click(`${card} .previews a[data-preview="prequeue"]`)]);
  await tab.waitForSelector('#app[data-preview="1"]');
  assert.equal(await tab.getAttribute('#app', 'data-state'), 'prequeue');
  assert.equal(await tab.getAttribute('html', 'lang'), 'ko'); /* the queue's page.lang */
  /* without the key, the preview is refused */
  assert.equal((await fetch(`${wr.base}/q/${q}?preview=waiting`)).status, 401);
  await ctx.close();
});

/* ---------- main ---------- */

async function main() {
  const { chromium } = await loadPlaywright('brand tests');
  adminKey = crypto.randomBytes(16).toString('hex');
  const base = ['--listen', '127.0.0.1:0', '--store', 'memory', '--admin-key', adminKey,
    '--token-secret', crypto.randomBytes(32).toString('hex'), '--log-level', 'warn'];
  wr = await startWaitroomd(WAITROOMD, base);
  shop = await startWaitroomd(WAITROOMD, [...base, '--web-dir', path.join(ROOT, 'examples', 'page')]);
  browser = await launchChromium(chromium);
  const result = await runTests(tests, ONLY, problems);
  await browser.close();
  await finishRun(result, [wr, shop], { docs: UPDATE_DOCS, artifacts: ARTIFACTS, docsImg: DOCS_IMG,
    pictures: [['preview-waiting-ar', 'queue-ar.png'], ['preview-prequeue-en', 'queue-prequeue.png'],
      ['preview-soldout-en', 'queue-soldout.png'], ['shop-template', 'queue-brand.png']] });
}

main().catch(async (e) => {
  console.error('brand tests: ' + ((e && e.stack) || e));
  try { if (browser) await browser.close(); } catch { /* ignore */ }
  await stopWaitroomd(wr);
  await stopWaitroomd(shop);
  process.exit(1);
});
