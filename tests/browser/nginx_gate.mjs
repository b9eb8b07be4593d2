#!/usr/bin/env node
/*
 * nginx_gate.mjs - the nginx gate of examples/nginx/ end to end: real nginx
 * (Debian's nginx-light) running examples/nginx/waitroom.conf, waitroomd
 * running examples/nginx/waitroom.ini (memory store), a stand-in shop (a
 * python3 http.server answering 200 "protected"), and headless Chromium
 * (playwright-core, as tests/browser/run.mjs) walking the flow a person
 * walks: protected URL -> 302 to the queue page -> admitted -> back at the
 * protected URL with the shop's page.
 *
 *   node tests/browser/nginx_gate.mjs --waitroomd build/waitroomd
 *        [--nginx /usr/sbin/nginx] [--only NAME] [--keep]
 *
 * The nginx file under test is the shipped one with exactly three lines
 * changed: its listen port and its two upstream addresses (three of the
 * lines marked EDIT; server_name stays: this is nginx's only server, so it
 * answers any Host), each replaced once, so what a user copies is what runs
 * here.
 * nginx runs in the foreground with its own prefix, pid, logs and temp dirs
 * in a temporary directory, on a free loopback port. Plain HTTP checks (no
 * pass, unpublished routes, forwarded addresses) use node's http client
 * from chosen loopback addresses (127.0.0.2 and up: Linux routes the whole
 * of 127.0.0.0/8 to lo), so waitroomd's per-address join limit shows
 * whether it takes the client's address from nginx's X-Forwarded-For.
 *
 * Prints "N passed, N failed" and exits 1 on any failure; --keep leaves the
 * temporary directory (nginx's error log) in place.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import assert from 'node:assert/strict';

import {
  CHROMIUM, ROOT, arg, argv, launchChromium, loadPlaywright, runTests, sleep, waitFor, waitroomdArg, watchPage
} from './common.mjs';

const NGINX_CONF = path.join(ROOT, 'examples', 'nginx', 'waitroom.conf');
const WAITROOM_INI = path.join(ROOT, 'examples', 'nginx', 'waitroom.ini');

/* The queue page honours ?return= (docs/API.md, "Returning to where people
 * came from"): landing on targetUrl instead of the deep URL is a failure. */
const RETURN_REQUIRED = true;

/* Join limit given to waitroomd here: a burst of JOIN_BURST per client
 * address, refilled so slowly that it does not refill during the test. */
const JOIN_BURST = 10;

/* ---------- arguments ---------- */

const WAITROOMD = waitroomdArg('nginx_gate.mjs');
const NGINX = arg('--nginx', '/usr/sbin/nginx');
const ONLY = arg('--only');
const KEEP = argv.includes('--keep');
for (const [what, p, pkg] of [['nginx', NGINX, 'nginx-light'], ['chromium', CHROMIUM, 'chromium']]) {
  if (!fs.existsSync(p)) {
    console.error(`nginx gate: ${p} (${what}) is missing; install Debian's ${pkg} (scripts/deps.sh does)`);
    process.exit(1);
  }
}

/* ---------- helpers ---------- */

/* One HTTP request with no redirect following, a fresh connection, from
 * localAddress (default 127.0.0.1). path is sent as given (no
 * normalization). Resolves {status, headers, body}. */
function request(base, p, { method = 'GET', headers = {}, body, localAddress } = {}) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname, port: u.port, method, path: p, headers, agent: false, localAddress,
      timeout: 10000
    }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout: ' + method + ' ' + p)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/* A child process whose first stdout line is matched by re; resolves
 * {proc, match, log()} (log: its stderr, and stdout after the first line). */
function startChild(what, cmd, args, re, opts = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let log = '';
    const keep = (d) => { log += d; if (log.length > 65536) log = log.slice(-32768); };
    proc.stderr.on('data', keep);
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`${what} did not start in 10 s: ${log}`)); }, 10000);
    const rl = readline.createInterface({ input: proc.stdout });
    let first = true;
    rl.on('line', (line) => {
      if (!first) { keep(line + '\n'); return; }
      first = false;
      clearTimeout(timer);
      const m = re.exec(line);
      if (!m) { proc.kill('SIGKILL'); reject(new Error(`${what}: unexpected first line: ${line}`)); return; }
      resolve({ proc, match: m, log: () => log });
    });
    proc.once('exit', (code) => { clearTimeout(timer); if (first) reject(new Error(`${what} exited ${code}: ${log}`)); });
  });
}

function stopChild(c, sig = 'SIGTERM') {
  return new Promise((resolve) => {
    if (!c || c.proc.exitCode !== null || c.proc.signalCode !== null) {
      resolve(c ? (c.proc.exitCode ?? c.proc.signalCode) : 0);
      return;
    }
    const t = setTimeout(() => c.proc.kill('SIGKILL'), 5000);
    c.proc.once('exit', (code, s) => { clearTimeout(t); resolve(s || code); });
    c.proc.kill(sig);
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

/* ---------- the three servers ---------- */

/* The protected service: 200 "protected" for every path and method, with
 * the path and the forwarded-address headers it was given. */
const SHOP_PY = String.raw`
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        n = int(self.headers.get('Content-Length') or 0)
        if n: self.rfile.read(n)
        body = ('protected\npath=%s\nx-real-ip=%s\nx-forwarded-for=%s\ncookie=%s\n' % (
            self.path, self.headers.get('X-Real-IP', ''), self.headers.get('X-Forwarded-For', ''),
            'yes' if self.headers.get('Cookie') else 'no')).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain; charset=utf-8')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command != 'HEAD': self.wfile.write(body)
    do_GET = do_POST = do_HEAD = answer
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
print('listening on 127.0.0.1:%d' % s.server_address[1], flush=True)
s.serve_forever()
`;

/* Writes the nginx files into dir: waitroom.conf (the shipped file, its
 * three addresses replaced once each) and nginx.conf (the http {}
 * around it, as Debian's /etc/nginx/nginx.conf would be). */
function writeNginxConf(dir, port, wrPort, shopPort) {
  let conf = fs.readFileSync(NGINX_CONF, 'utf8');
  const edits = [
    [/^(\s*)listen 80;/m, `$1listen 127.0.0.1:${port};`],
    [/^(\s*)server 127\.0\.0\.1:8080;/m, `$1server 127.0.0.1:${wrPort};`],
    [/^(\s*)server 127\.0\.0\.1:3000;/m, `$1server 127.0.0.1:${shopPort};`]
  ];
  for (const [re, to] of edits) {
    const all = new RegExp(re.source, 'gm');
    assert.equal((conf.match(all) || []).length, 1, `examples/nginx/waitroom.conf: exactly one line ${re}`);
    conf = conf.replace(re, to);
  }
  fs.writeFileSync(path.join(dir, 'waitroom.conf'), conf);
  const t = (n) => path.join(dir, n);
  fs.writeFileSync(path.join(dir, 'nginx.conf'), `daemon off;
worker_processes 1;
pid ${t('nginx.pid')};
error_log ${t('error.log')} warn;
events { worker_connections 256; }
http {
    access_log ${t('access.log')};
    client_body_temp_path ${t('tmp-body')};
    proxy_temp_path ${t('tmp-proxy')};
    fastcgi_temp_path ${t('tmp-fastcgi')};
    uwsgi_temp_path ${t('tmp-uwsgi')};
    scgi_temp_path ${t('tmp-scgi')};
    include ${t('waitroom.conf')};
}
`);
}

/* nginx -t, then nginx in the foreground; resolves when its port answers.
 * A port taken between freePort() and the bind is retried on another. */
async function startNginx(dir, wrPort, shopPort) {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    writeNginxConf(dir, port, wrPort, shopPort);
    const args = ['-p', dir + '/', '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')];
    const t = spawnSync(NGINX, [...args, '-t', '-q'], { encoding: 'utf8' });
    if (t.status !== 0) throw new Error('nginx -t refused the config: ' + t.stderr + fs.readFileSync(path.join(dir, 'error.log'), 'utf8'));
    const proc = spawn(NGINX, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    proc.stderr.on('data', (d) => { err += d; });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor(async () => {
        if (proc.exitCode !== null) throw new Error('nginx exited ' + proc.exitCode);
        return (await request(base, '/q/none')).status > 0;
      }, 10000, 'nginx to answer');
      return { proc, base, port, log: () => err + fs.readFileSync(path.join(dir, 'error.log'), 'utf8') };
    } catch (e) {
      const log = err + (fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
      proc.kill('SIGKILL');
      if (attempt < 2 && /Address already in use/.test(log)) continue;
      throw new Error('nginx did not start: ' + e.message + '\n' + log);
    }
  }
}

/* ---------- the tests ---------- */

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

let browser, wr, shop, ngx, adminKey, tmp;
const problems = [];

async function newContext() {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, extraHTTPHeaders: { 'Accept-Language': 'en' } });
  ctx.setDefaultTimeout(10000);
  ctx.on('page', (page) => watchPage(page, problems));
  return ctx;
}

const admin = (method, p, body) => request(wr.base, p, {
  method, headers: { Authorization: 'Bearer ' + adminKey, ...(body ? { 'Content-Type': 'application/json' } : {}) },
  body: body ? JSON.stringify(body) : undefined
});

/* Walks a fresh browser from url to the shop; returns {ctx, page, first, chain}:
 * first = the response to url itself, chain = the main frame's responses. */
async function walk(url) {
  const ctx = await newContext();
  const page = await ctx.newPage();
  const chain = [];
  page.on('response', (r) => { if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) chain.push(r); });
  await page.goto(url);
  await page.waitForURL((u) => u.pathname.startsWith('/checkout/'), { timeout: 20000, waitUntil: 'load' });
  await waitFor(async () => /^protected/.test(await page.locator('body').textContent()), 5000, 'the shop page');
  return { ctx, page, chain };
}

test('the shipped files: nginx -t accepts waitroom.conf, waitroomd runs waitroom.ini with a fast line', async () => {
  /* (nginx -t ran in startNginx.) The queue came from the INI file. */
  const r = await admin('GET', '/v1/admin/queues/shop');
  assert.equal(r.status, 200, r.body);
  const cfg = JSON.parse(r.body).config;
  assert.equal(cfg.targetUrl, '/checkout/', 'targetUrl on the nginx origin');
  assert.ok(cfg.admitPerSecond >= 100, 'a fast line: ' + cfg.admitPerSecond);
});

test('browser: protected URL -> 302 to the queue page -> admitted -> back at it with the shop page', async () => {
  const { ctx, page, chain } = await walk(`${ngx.base}/checkout/`);
  const urls = chain.map((r) => `${r.status()} ${new URL(r.url()).pathname}${new URL(r.url()).search}`);
  assert.equal(urls[0], '302 /checkout/', urls.join(' > '));
  assert.equal(chain[0].headers()['location'], '/q/shop?return=/checkout/');
  assert.equal(urls[1], '200 /q/shop?return=/checkout/', urls.join(' > '));
  assert.equal(urls[urls.length - 1], '200 /checkout/', urls.join(' > '));
  const body = await page.locator('body').textContent();
  assert.match(body, /^protected\npath=\/checkout\/\n/);
  assert.match(body, /\nx-real-ip=127\.0\.0\.1\n/);
  assert.match(body, /\nx-forwarded-for=127\.0\.0\.1\n/);
  const pass = (await ctx.cookies(ngx.base)).find((c) => c.name === 'wr_token_shop');
  assert.ok(pass, 'the queue page stored the pass as cookie wr_token_shop on the nginx origin');

  /* Another protected page of the same visit passes with the same pass. */
  const again = await page.goto(`${ngx.base}/checkout/pay`);
  assert.equal(again.status(), 200);
  assert.equal(again.request().redirectedFrom(), null);
  assert.match(await page.locator('body').textContent(), /^protected\npath=\/checkout\/pay\n/);

  /* The same pass outside the browser; once the shop burns it, the gate
   * shuts (verify: consumed). */
  const cookie = { Cookie: `wr_token_shop=${pass.value}` };
  assert.equal((await request(ngx.base, '/checkout/x', { headers: cookie })).status, 200);
  /* among the shop's own cookies, and with the shop's own bearer credential
   * (which waitroomd would read before the cookie if nginx passed it on) */
  const busy = await request(ngx.base, '/checkout/x', { headers: {
    Cookie: `session=abc; wr_token_other=x.y.z; wr_token_shop=${pass.value}; cart=${'c'.repeat(3000)}`,
    Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.not-the-pass' } });
  assert.equal(busy.status, 200, busy.body);
  assert.match(busy.body, /\ncookie=yes\n/, 'the shop gets its cookies');
  const burn = await request(wr.base, '/v1/queues/shop/tokens/consume',
    { method: 'POST', headers: { Authorization: 'Bearer ' + pass.value } });
  assert.equal(burn.status, 200, burn.body);
  const shut = await request(ngx.base, '/checkout/x', { headers: cookie });
  assert.equal(shut.status, 302);
  assert.equal(shut.headers.location, '/q/shop?return=/checkout/x');
  await ctx.close();
});

test('?return= brings the person back to the deep URL they came from', async () => {
  const deep = '/checkout/item/7?size=m';
  const { ctx, page, chain } = await walk(`${ngx.base}${deep}`);
  assert.equal(chain[0].status(), 302);
  assert.equal(chain[0].headers()['location'], '/q/shop?return=' + deep);
  const landed = new URL(page.url());
  const at = landed.pathname + landed.search;
  await ctx.close();
  if (at === deep) return 'came back to ' + deep;
  /* Until the page honours return it sends the person to targetUrl. */
  assert.equal(at, '/checkout/', 'lands on the deep URL or on targetUrl');
  if (RETURN_REQUIRED) assert.fail('the queue page ignored ?return=' + deep + ' and went to ' + at);
  return `SKIP: the queue page does not honour ?return= yet (landed on ${at}); set RETURN_REQUIRED once it does`;
});

test('without a pass (curl): 302 to the queue page, whatever the method or a forged cookie', async () => {
  const cases = [
    ['GET', '/checkout/', {}, '/q/shop?return=/checkout/'],
    ['GET', '/checkout/a/b?x=1', {}, '/q/shop?return=/checkout/a/b?x=1'],
    ['HEAD', '/checkout/', {}, '/q/shop?return=/checkout/'],
    ['POST', '/checkout/order', { 'Content-Type': 'text/plain' }, '/q/shop?return=/checkout/order'],
    ['GET', '/checkout/', { Cookie: 'wr_token_shop=not.a.jwt' }, '/q/shop?return=/checkout/'],
    ['GET', '/checkout/', { Cookie: 'wr_token_other=' + 'x'.repeat(20) }, '/q/shop?return=/checkout/'],
    /* a shop's own bearer credential is not taken for the pass */
    ['GET', '/checkout/', { Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x' }, '/q/shop?return=/checkout/']
  ];
  for (const [method, p, headers, loc] of cases) {
    const r = await request(ngx.base, p, { method, headers, body: method === 'POST' ? 'order' : undefined });
    assert.equal(r.status, 302, `${method} ${p} ${JSON.stringify(headers)}`);
    assert.equal(r.headers.location, loc, `${method} ${p}`);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.doesNotMatch(r.body, /protected/);
  }
  /* the rest of the shop is not gated */
  const home = await request(ngx.base, '/');
  assert.equal(home.status, 200);
  assert.match(home.body, /^protected\npath=\/\n/);
});

test('not published through nginx: /v1/admin, /admin, /metrics, /healthz, /readyz (404), also by a detour', async () => {
  /* waitroomd itself answers them, so the 404s are nginx's doing */
  assert.equal((await admin('GET', '/v1/admin/queues')).status, 200);
  assert.equal((await request(wr.base, '/metrics')).status, 200);
  assert.equal((await request(wr.base, '/admin')).status, 200);
  const auth = { Authorization: 'Bearer ' + adminKey };
  const paths = ['/v1/admin/queues', '/v1/admin/queues/shop', '/metrics', '/admin', '/healthz', '/readyz',
    '/v1/queues/../admin/queues', '/v1/queues/%2e%2e/admin/queues', '/v1/queues/shop/../../admin/queues',
    '/v1/queues%2f..%2fadmin/queues', '//v1/admin/queues', '/q/../v1/admin/queues', '/q/../metrics',
    '/static/../metrics', '/v1/healthz'];
  for (const p of paths) {
    for (const method of ['GET', 'PATCH']) {
      const r = await request(ngx.base, p, { method, headers: { ...auth, 'Content-Type': 'application/json' }, body: method === 'PATCH' ? '{"paused":true}' : undefined });
      assert.equal(r.status, 404, `${method} ${p}: ${r.status} ${r.body.slice(0, 200)}`);
      assert.match(r.body, /nginx/, `${method} ${p}: nginx's own 404 page, not waitroomd's`);
    }
  }
  /* nothing above reached the admin API */
  const cfg = JSON.parse((await admin('GET', '/v1/admin/queues/shop')).body).config;
  assert.equal(cfg.paused, false);
  /* the published part does answer */
  /* every file the queue page loads (its scripts, the proof-of-work
   * worker, the translations), each waitroomd's own, not the shop's */
  for (const f of ['queue.js', 'captcha.js', 'challenge.js', 'push.js', 'push-sw.js', 'style.css', 'i18n.json']) {
    const r = await request(ngx.base, '/static/' + f);
    assert.equal(r.status, 200, f);
    assert.equal(r.body, (await request(wr.base, '/static/' + f)).body, f + ': waitroomd\'s file');
  }
  /* the join challenge of the page (the queue has none: waitroomd's JSON
   * answer, not nginx's 404) */
  const ch = await request(ngx.base, '/v1/queues/shop/challenge');
  assert.doesNotMatch(ch.body, /nginx/, `challenge: ${ch.status} ${ch.body.slice(0, 200)}`);
  assert.match(String(ch.headers['content-type']), /application\/json/, 'challenge answered by waitroomd');
  assert.equal(ch.status, (await request(wr.base, '/v1/queues/shop/challenge')).status);
  assert.equal((await request(ngx.base, '/static/dashboard.js')).status, 200, 'the rest of /static/ is the shop\'s');
  assert.match((await request(ngx.base, '/static/dashboard.js')).body, /^protected/);
  const page = await request(ngx.base, '/q/shop');
  assert.equal(page.status, 200);
  assert.match(page.body, /<script src="\/static\/queue\.js"/);
});

test('the token routes (consume, verify, release) are the shop\'s: refused from outside through nginx', async () => {
  /* a live pass: admitted through the user API, which nginx does publish */
  const jar = {};
  const call = async (method, p, headers = {}) => {
    const r = await request(ngx.base, p, { method, localAddress: '127.0.0.6', headers: { ...headers, ...(jar.c ? { Cookie: jar.c } : {}) } });
    const sc = r.headers['set-cookie'];
    if (sc) jar.c = [].concat(sc).map((c) => c.split(';')[0]).join('; ');
    return r;
  };
  assert.equal((await call('POST', '/v1/queues/shop/entries')).status, 200);
  let token = '';
  await waitFor(async () => {
    const r = await call('GET', '/v1/queues/shop/entries/me');
    assert.equal(r.status, 200, r.body);
    token = JSON.parse(r.body).token || '';
    return token !== '';
  }, 10000, 'admission through nginx');
  const bearer = { Authorization: 'Bearer ' + token, 'X-Waitroom-Token': token };
  const tries = [['POST', '/v1/queues/shop/tokens/consume'], ['GET', '/v1/queues/shop/tokens/verify'],
    ['POST', '/v1/queues/shop/tokens/release'], ['POST', '/v1/queues/shop/tokens/consume/'],
    ['POST', '/v1/queues/shop/%74okens/consume'], ['POST', '/v1/queues/shop/entries/../tokens/consume'],
    ['POST', '/v1/queues/shop//tokens/consume'], ['POST', '/v1/queues/shop/tokens%2fconsume'],
    ['GET', '/v1/queues/shop'], ['GET', '/v1/queues/'], ['GET', '/v1/queues/shop/entries/me/x']];
  for (const [method, p] of tries) {
    const r = await request(ngx.base, p, { method, headers: bearer });
    assert.equal(r.status, 404, `${method} ${p}: ${r.status} ${r.body.slice(0, 200)}`);
    assert.match(r.body, /nginx/, `${method} ${p}: nginx's own 404 page, not waitroomd's`);
  }
  /* none of them burnt the pass: the shop, on waitroomd's own address, can */
  const burn = await request(wr.base, '/v1/queues/shop/tokens/consume',
    { method: 'POST', headers: { Authorization: 'Bearer ' + token } });
  assert.equal(burn.status, 200, 'the pass is still unspent: ' + burn.body);
  /* and the person's own routes still reach waitroomd, leave included
   * (after the burn there may be nothing left to leave: 404 NOT_IN_QUEUE) */
  const leave = await call('DELETE', '/v1/queues/shop/entries/me');
  assert.ok(leave.status === 204 || /NOT_IN_QUEUE/.test(leave.body), `${leave.status} ${leave.body}`);
});

test('client addresses: the shop gets X-Real-IP / X-Forwarded-For; waitroomd limits joins per client, not per nginx', async () => {
  /* the shop sees the client, and a client's own X-Forwarded-For stays on the left */
  const home = await request(ngx.base, '/', { localAddress: '127.0.0.5', headers: { 'X-Forwarded-For': '203.0.113.9' } });
  assert.match(home.body, /\nx-real-ip=127\.0\.0\.5\n/);
  assert.match(home.body, /\nx-forwarded-for=203\.0\.113\.9, 127\.0\.0\.5\n/);

  const join = (from, xff) => request(ngx.base, '/v1/queues/shop/entries', {
    method: 'POST', localAddress: from, headers: xff ? { 'X-Forwarded-For': xff } : {}
  });
  /* 127.0.0.2 spends its burst; every join is a new visitor (no cookie) */
  for (let i = 0; i < JOIN_BURST; i++) {
    const r = await join('127.0.0.2');
    assert.equal(r.status, 200, `join ${i + 1} from 127.0.0.2: ${r.body}`);
  }
  const over = await join('127.0.0.2');
  assert.equal(over.status, 429, over.body);
  assert.equal(JSON.parse(over.body).error, 'RATE_LIMITED');
  /* another client behind the same nginx is not affected (without the
   * trusted proxy both would be nginx's 127.0.0.1 and share one bucket) */
  assert.equal((await join('127.0.0.3')).status, 200);
  /* a client cannot dodge the limit by naming itself in X-Forwarded-For */
  for (let i = 0; i < JOIN_BURST; i++) assert.equal((await join('127.0.0.4', `198.51.100.${i + 1}`)).status, 200);
  const spoof = await join('127.0.0.4', '198.51.100.200');
  assert.equal(spoof.status, 429, 'a forged X-Forwarded-For does not make a new client: ' + spoof.body);
});

test('bypass rules through nginx: a path rule sees the protected URI (X-Original-URI), never a forged or traversing one', async () => {
  const staff = crypto.randomBytes(24).toString('hex'); /* 48 characters */
  const rules = [{ name: 'status', path: '/checkout/status/*' },
    { name: 'staff', header: 'X-Staff-Key', secret: staff }];
  const set = await admin('PATCH', '/v1/admin/queues/shop', { bypass: rules });
  assert.equal(set.status, 200, set.body);
  try {
    /* below the prefix, query and all: past the gate without a pass */
    const ok = await request(ngx.base, '/checkout/status/ping?x=1');
    assert.equal(ok.status, 200, ok.body);
    assert.match(ok.body, /^protected\n/);
    /* not below it, or not safe to compare: the queue page (nginx matched
     * the normalized URI, waitroomd sees the raw one and refuses it) */
    for (const u of ['/checkout/status', '/checkout/pay', '/checkout/status/../pay',
      '/checkout/status/%2e%2e/pay', '/checkout//status/x', '/checkout/Status/x',
      '/checkout/status/a%2Fb']) {
      const r = await request(ngx.base, u);
      assert.equal(r.status, 302, `${u}: ${r.status} ${r.body.slice(0, 200)}`);
    }
    /* a client's own X-Original-URI never reaches waitroomd */
    const forged = await request(ngx.base, '/checkout/pay', { headers: { 'X-Original-URI': '/checkout/status/x' } });
    assert.equal(forged.status, 302, 'a forged X-Original-URI is replaced by nginx');
    /* a header rule: the client's own field, exactly the secret */
    assert.equal((await request(ngx.base, '/checkout/pay', { headers: { 'X-Staff-Key': staff } })).status, 200);
    assert.equal((await request(ngx.base, '/checkout/pay', { headers: { 'X-Staff-Key': staff + '0' } })).status, 302);
    /* every bypass counted in the queue's stats */
    const st = JSON.parse((await admin('GET', '/v1/admin/queues/shop')).body).stats;
    assert.equal(st.bypassTotal, 2, JSON.stringify(st));
  } finally {
    await admin('PATCH', '/v1/admin/queues/shop', { bypass: null });
  }
});

/* ---------- main ---------- */

async function main() {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wr-nginx-gate-'));
  fs.chmodSync(tmp, 0o755); /* nginx's workers (nobody when run as root) read and write in here */
  const { chromium } = await loadPlaywright('nginx gate');
  adminKey = crypto.randomBytes(16).toString('hex');
  shop = await startChild('the shop', 'python3', ['-c', SHOP_PY], /^listening on (\S+)$/);
  shop.base = 'http://' + shop.match[1];
  wr = await startChild('waitroomd', WAITROOMD, ['--config', WAITROOM_INI, '--listen', '127.0.0.1:0',
    '--store', 'memory', '--admin-key', adminKey, '--token-secret', crypto.randomBytes(32).toString('hex'),
    '--log-level', 'warn', '--join-rate', '0.001', '--join-burst', String(JOIN_BURST)], /^listening on (\S+)$/);
  wr.base = 'http://' + wr.match[1];
  ngx = await startNginx(tmp, new URL(wr.base).port, new URL(shop.base).port);
  console.log(`nginx ${ngx.base} -> waitroomd ${wr.base}, shop ${shop.base} (files in ${tmp})`);
  browser = await launchChromium(chromium);
  let { passed, failed } = await runTests(tests, ONLY, problems);
  const code = await cleanup();
  if (code !== 0) {
    failed++;
    console.log(`FAIL waitroomd exit status ${code} after SIGTERM\n${wr.log()}`);
  }
  if (failed && ngx) console.log('nginx error log:\n' + ngx.log());
  if (!KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed || passed === 0 ? 1 : 0);
}

/* Stops everything this runner started; resolves waitroomd's exit status. */
async function cleanup() {
  try { if (browser) await browser.close(); } catch { /* ignore */ }
  browser = null;
  await stopChild(ngx, 'SIGQUIT');
  await stopChild(shop);
  return stopChild(wr);
}

main().catch(async (e) => {
  console.error('nginx gate: ' + ((e && e.stack) || e));
  await cleanup();
  if (tmp && !KEEP) fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
});
