#!/usr/bin/env node
/*
 * bench_challenge.mjs - what a join challenge costs a person: solve times
 * of the queue page's Web Worker (src/http/web/challenge.js) in headless
 * Chromium, our own SHA-256 against crypto.subtle.digest, at every even
 * bits from MIN to MAX (docs/SECURITY.md, "Solve times"). Not a test.
 *
 *   node tests/browser/bench_challenge.mjs --waitroomd build/waitroomd
 *        [--min 12] [--max 22] [--runs 5] [--subtle-max 18]
 *
 * Starts waitroomd (memory store) for the page's origin and the worker
 * script, fetches a real challenge per run (GET .../challenge), solves it
 * in a Worker, and prints per bits the median and mean wall time and the
 * digests per second. crypto.subtle runs up to --subtle-max only (it is
 * the slow one).
 */
import { spawn } from 'node:child_process';
import readline from 'node:readline';

import { arg, launchChromium, loadPlaywright, waitroomdArg } from './common.mjs';

const WAITROOMD = waitroomdArg('bench_challenge.mjs');
const MIN = parseInt(arg('--min', '12'), 10);
const MAX = parseInt(arg('--max', '22'), 10);
const RUNS = parseInt(arg('--runs', '5'), 10);
const SUBTLE_MAX = parseInt(arg('--subtle-max', '18'), 10);

function start() {
  return new Promise((resolve, reject) => {
    const proc = spawn(WAITROOMD, ['--listen', '127.0.0.1:0', '--store', 'memory', '--admin-key', 'bench-admin',
      '--token-secret', 'b'.repeat(64), '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] });
    readline.createInterface({ input: proc.stdout }).once('line', (line) => {
      const m = /^listening on (\S+)$/.exec(line);
      if (m) resolve({ proc, base: 'http://' + m[1] }); else reject(new Error(line));
    });
  });
}

const wr = await start();
try {
  await fetch(`${wr.base}/v1/admin/queues/bench`, {
    method: 'PUT', headers: { Authorization: 'Bearer bench-admin', 'Content-Type': 'application/json' },
    body: JSON.stringify({ admitPerSecond: 1, paused: true })
  });
  const { chromium } = await loadPlaywright('bench_challenge.mjs');
  const browser = await launchChromium(chromium);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${wr.base}/q/bench`);
  console.log(`headless Chromium ${browser.version()}, ${RUNS} runs per row`);
  console.log('mode    bits  median ms    mean ms   digests/s');
  for (const mode of ['js', 'subtle']) {
    for (let bits = MIN; bits <= (mode === 'subtle' ? Math.min(MAX, SUBTLE_MAX) : MAX); bits += 2) {
      const res = await page.evaluate(async ({ mode, bits, runs }) => {
        const out = [];
        for (let i = 0; i < runs; i++) {
          const c = await (await fetch('/v1/queues/bench/challenge')).json();
          const w = new Worker('/static/challenge.js');
          const t0 = performance.now();
          const r = await new Promise((resolve) => {
            w.onmessage = (ev) => { if (typeof ev.data.nonce === 'string') resolve(ev.data); };
            w.postMessage({ challenge: c.challenge, bits, mode });
          });
          out.push({ ms: performance.now() - t0, tries: r.tries });
          w.terminate();
        }
        return out;
      }, { mode, bits, runs: RUNS });
      const ms = res.map((r) => r.ms).sort((a, b) => a - b);
      const sum = ms.reduce((a, b) => a + b, 0);
      const tries = res.reduce((a, r) => a + r.tries, 0);
      console.log(`${mode.padEnd(6)}  ${String(bits).padStart(4)}  ${ms[Math.floor(ms.length / 2)].toFixed(0).padStart(9)}  ${(sum / ms.length).toFixed(0).padStart(9)}  ${(tries / (sum / 1000)).toFixed(0).padStart(10)}`);
    }
  }
  await browser.close();
} finally {
  wr.proc.kill('SIGTERM');
}
