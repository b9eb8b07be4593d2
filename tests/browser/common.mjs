/*
 * common.mjs - what the browser runners (run.mjs, brand.mjs, nginx_gate.mjs)
 * share: their arguments, starting and stopping waitroomd, loading
 * playwright-core and axe-core (npm ci when node_modules lacks them),
 * launching Debian's chromium, polling with a deadline, and the test loop
 * that fails a test on any CSP violation or page error.
 */
import { spawn, spawnSync } from 'node:child_process';
import readline from 'node:readline';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '..', '..');
export const CHROMIUM = process.env.WR_CHROMIUM || '/usr/bin/chromium';

/* ---------- arguments ---------- */

export const argv = process.argv.slice(2);

/* The value after the flag name, or dflt. */
export function arg(name, dflt = null) {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
}

/* Exits 2 with the usage line unless --waitroomd names an existing file;
 * returns its path. */
export function waitroomdArg(script) {
  const p = arg('--waitroomd');
  if (!p || !fs.existsSync(p)) {
    console.error(`usage: node tests/browser/${script} --waitroomd PATH/TO/waitroomd (not found: ${p})`);
    process.exit(2);
  }
  return p;
}

/* The page runners' (run.mjs, brand.mjs) arguments: --waitroomd (exits 2
 * without it), --only NAME, --update-docs; exits 1 when Debian's chromium
 * is missing. Also the folders their pictures go to. */
export function pageRunnerArgs(script) {
  const waitroomd = waitroomdArg(script);
  if (!fs.existsSync(CHROMIUM)) {
    console.error(`browser tests: ${CHROMIUM} is missing; install Debian's chromium (scripts/deps.sh does)`);
    process.exit(1);
  }
  return {
    WAITROOMD: waitroomd, ONLY: arg('--only'), UPDATE_DOCS: argv.includes('--update-docs'),
    ARTIFACTS: path.join(ROOT, 'tests', 'artifacts'), DOCS_IMG: path.join(ROOT, 'docs', 'img')
  };
}

/* ---------- waitroomd ---------- */

/* Starts waitroomd (bin) with args (give it --listen 127.0.0.1:0): resolves
 * {proc, base, stderr()} once it prints its address, rejects when it exits
 * first or says nothing in 10 s. */
export function startWaitroomd(bin, args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d) => { stderr += d; if (stderr.length > 65536) stderr = stderr.slice(-32768); });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error('waitroomd did not print its address in 10 s: ' + stderr)); }, 10000);
    const rl = readline.createInterface({ input: proc.stdout });
    rl.once('line', (line) => {
      clearTimeout(timer);
      const m = /^listening on (\S+)$/.exec(line);
      if (!m) { proc.kill('SIGKILL'); reject(new Error('unexpected first line: ' + line)); return; }
      resolve({ proc, base: 'http://' + m[1], stderr: () => stderr });
    });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error('waitroomd exited ' + code + ': ' + stderr)); });
  });
}

/* SIGTERM (SIGKILL after 5 s); resolves the exit status or signal. */
export function stopWaitroomd(s) {
  return new Promise((resolve) => {
    if (!s || s.proc.exitCode !== null) { resolve(s ? s.proc.exitCode : 0); return; }
    const t = setTimeout(() => s.proc.kill('SIGKILL'), 5000);
    s.proc.once('exit', (code, sig) => { clearTimeout(t); resolve(sig ? sig : code); });
    s.proc.kill('SIGTERM');
  });
}

/* ---------- playwright-core and chromium ---------- */

/* Imports playwright-core from tests/browser/node_modules, running npm ci
 * there first when it is missing; exits 1 when that fails. label names
 * the runner in messages. */
export async function loadPlaywright(label) {
  const mod = path.join(HERE, 'node_modules', 'playwright-core');
  if (!fs.existsSync(mod) || !fs.existsSync(AXE)) {
    console.log(`${label}: node_modules missing, running npm ci in tests/browser`);
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: HERE, stdio: 'inherit', timeout: 300000 });
    if (r.status !== 0 || !fs.existsSync(mod)) {
      console.error(`${label}: "npm ci" failed in tests/browser (is the npm registry reachable? ` +
        'offline: copy a node_modules with playwright-core ' +
        JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8')).dependencies['playwright-core'] +
        ' there)');
      process.exit(1);
    }
  }
  return import(path.join(mod, 'index.mjs'));
}

/* axe-core's browser build (npm axe-core, installed with playwright-core) */
export const AXE = path.join(HERE, 'node_modules', 'axe-core', 'axe.min.js');

/* Runs axe-core in page at WCAG 2.1 A and AA; returns its violations as
 * "rule: target (summary)" lines (none = []). The page's context needs
 * bypassCSP (axe is evaluated as a script). */
export async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object')))
    await page.evaluate(fs.readFileSync(AXE, 'utf8'));
  const res = await page.evaluate(() => window.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    resultTypes: ['violations']
  }));
  const out = [];
  for (const v of res.violations)
    for (const n of v.nodes) out.push(`${v.id}: ${n.target.join(' ')} (${(n.failureSummary || '').split('\n').slice(1).join(' ').trim()})`);
  return out;
}

/* Headless chromium (CHROMIUM) through playwright's chromium launcher. */
export function launchChromium(chromium) {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync']
  });
}

/* A browser context with a phone's viewport (opts may change it and add
 * any of newContext's options), 10 s for each action, and every page of it
 * watched (watchPage) into problems. */
export async function openContext(browser, problems, opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, ...opts });
  ctx.setDefaultTimeout(10000);
  ctx.on('page', (page) => watchPage(page, problems));
  return ctx;
}

/* Records the page's CSP violations and uncaught errors in problems. */
export function watchPage(page, problems) {
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push('CSP: ' + m.text());
  });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
}

/* ---------- waiting ---------- */

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Polls fn() every 50 ms until it returns a truthy value; throws after ms,
 * naming what (a string, or a function giving it then). */
export async function waitFor(fn, ms, what) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${ms} ms waiting for ${typeof what === 'function' ? what() : what} (last: ${last})`);
    await sleep(50);
  }
}

/* ---------- the test loop ---------- */

/*
 * The end of a page runner, after its tests ({passed, failed} of
 * runTests) and browser.close(): stops each waitroomd of servers (an exit
 * status other than 0 after SIGTERM is one more failure, printed with its
 * stderr); with docs (--update-docs) and no failure, copies each picture
 * [artifact name, docs/img file] of pictures from artifacts to docsImg;
 * prints "N passed, N failed" and exits 1 on any failure or when no test
 * ran (an --only that matched nothing), else 0.
 */
export async function finishRun({ passed, failed }, servers, { docs, artifacts, docsImg, pictures }) {
  for (const s of servers) {
    const code = await stopWaitroomd(s);
    if (code !== 0) {
      failed++;
      console.log(`FAIL waitroomd exit status ${code} after SIGTERM\n${s.stderr()}`);
    }
  }
  if (docs && failed === 0) {
    fs.mkdirSync(docsImg, { recursive: true });
    for (const [from, to] of pictures) fs.copyFileSync(path.join(artifacts, from + '.png'), path.join(docsImg, to));
    console.log('copied screenshots to docs/img/');
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed || passed === 0 ? 1 : 0);
}

/*
 * Runs each {name, fn} of tests whose name contains only (all when only is
 * null), printing "ok"/"FAIL" per test; a test fails when fn throws or
 * problems (emptied before each test) is not empty afterwards. A string fn
 * resolves to is printed under its line. Returns {passed, failed}.
 */
export async function runTests(tests, only, problems) {
  let passed = 0, failed = 0;
  for (const t of tests) {
    if (only && !t.name.includes(only)) continue;
    problems.length = 0;
    const t0 = Date.now();
    try {
      const note = await t.fn();
      assert.deepEqual(problems, [], 'no CSP violation or page error');
      passed++;
      console.log(`ok   ${t.name} (${Date.now() - t0} ms)${typeof note === 'string' && note ? '\n     ' + note : ''}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${t.name} (${Date.now() - t0} ms)\n     ${(e && e.stack) || e}`);
      if (problems.length) console.log('     problems: ' + problems.join('\n     '));
    }
  }
  return { passed, failed };
}
