/*
 * challenge.js - the join challenge's solver, run as a Web Worker by the
 * queue page (queue.js, solveChallenge) so the page stays responsive
 * (docs/API.md 1.2, "A place costs work"; docs/SECURITY.md, "Bots").
 *
 * Finds a nonce of [A-Za-z0-9] such that SHA-256 of `challenge ":" nonce`
 * begins with `bits` zero bits (most significant bit of the first byte
 * first). The nonce is a filler of 'a's that completes the first 64-byte
 * block (or blocks) of the message, then a decimal counter: the state after
 * the complete blocks is computed once, and each try costs one SHA-256
 * compression of the last block (the counter and the padding).
 *
 * Why our own SHA-256 and not crypto.subtle.digest: measured in headless
 * Chromium on this project's machine (docs/SECURITY.md, "Solve times"),
 * crypto.subtle costs a promise and a copy per digest, and even with many
 * digests in flight it tried several times fewer nonces per second than
 * this loop; the midstate trick above is out of its reach too. Both are
 * kept: {mode:'subtle'} runs the crypto.subtle solver, for the benchmark.
 *
 * Messages in:  {challenge, bits, mode?}  ('js' default, or 'subtle')
 * Messages out: {progress: p} (0..99, the chance a solution was found by
 *               now, 1 - e^(-tries/2^bits)), then {nonce, tries, ms}.
 */
'use strict';

var K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
]);
var W = new Int32Array(64);

/* One compression of the 16 big-endian words in W[0..15] into state h. */
function compress(h) {
  var i, a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7], t1, t2, x, y;
  for (i = 16; i < 64; i++) {
    x = W[i - 15]; y = W[i - 2];
    W[i] = (((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) + W[i - 16] +
      (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) + W[i - 7] | 0;
  }
  for (i = 0; i < 64; i++) {
    t1 = k + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
      ((e & f) ^ (~e & g)) + K[i] + W[i] | 0;
    t2 = (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
      ((a & b) ^ (a & c) ^ (b & c)) | 0;
    k = g; g = f; f = e; e = d + t1 | 0; d = c; c = b; b = a; a = t1 + t2 | 0;
  }
  h[0] = h[0] + a | 0; h[1] = h[1] + b | 0; h[2] = h[2] + c | 0; h[3] = h[3] + d | 0;
  h[4] = h[4] + e | 0; h[5] = h[5] + f | 0; h[6] = h[6] + g | 0; h[7] = h[7] + k | 0;
}

var IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/* Whether the digest h begins with bits zero bits. */
function enough(h, bits) {
  var i = 0;
  while (bits >= 32) { if (h[i++] !== 0) return false; bits -= 32; }
  return bits === 0 || (h[i] >>> (32 - bits)) === 0;
}

function progress(tries, bits) {
  return Math.min(99, Math.floor(100 * (1 - Math.exp(-tries / Math.pow(2, bits)))));
}

function solveJs(challenge, bits) {
  var prefix = challenge + ':';
  var whole = prefix.length - prefix.length % 64;
  var fill = (64 - prefix.length % 64) % 64;
  if (fill > 40) fill = 0; /* the nonce stays within 64 characters: two blocks a try */
  var nonceHead = new Array(fill + 1).join('a');
  var tail = prefix.slice(whole) + nonceHead;
  if (tail.length === 64) { whole += 64; tail = ''; }
  var mid = new Int32Array(IV), i, j, blk, b;
  var msg = prefix + nonceHead;
  for (blk = 0; blk < whole; blk += 64) {
    for (i = 0; i < 16; i++) {
      j = blk + 4 * i;
      W[i] = (msg.charCodeAt(j) << 24) | (msg.charCodeAt(j + 1) << 16) | (msg.charCodeAt(j + 2) << 8) | msg.charCodeAt(j + 3);
    }
    compress(mid);
  }
  var h = new Int32Array(8), bytes = new Uint8Array(128), tries = 0, n = 0, s, len, total, nblk, bitLen;
  for (i = 0; i < tail.length; i++) bytes[i] = tail.charCodeAt(i);
  var t0 = Date.now(), nextReport = 1 << 16;
  for (;;) {
    s = String(n);
    len = tail.length + s.length;
    for (i = 0; i < s.length; i++) bytes[tail.length + i] = s.charCodeAt(i);
    nblk = len + 9 <= 64 ? 1 : 2;
    total = nblk * 64;
    bytes[len] = 0x80;
    for (i = len + 1; i < total - 4; i++) bytes[i] = 0;
    bitLen = (whole + len) * 8;
    bytes[total - 4] = bitLen >>> 24; bytes[total - 3] = (bitLen >>> 16) & 255;
    bytes[total - 2] = (bitLen >>> 8) & 255; bytes[total - 1] = bitLen & 255;
    h.set(mid);
    for (b = 0; b < total; b += 64) {
      for (i = 0; i < 16; i++) {
        j = b + 4 * i;
        W[i] = (bytes[j] << 24) | (bytes[j + 1] << 16) | (bytes[j + 2] << 8) | bytes[j + 3];
      }
      compress(h);
    }
    tries++;
    if (enough(h, bits)) return { nonce: nonceHead + s, tries: tries, ms: Date.now() - t0 };
    n++;
    if (tries === nextReport) {
      nextReport += 1 << 16;
      postMessage({ progress: progress(tries, bits) });
    }
  }
}

/* crypto.subtle: batches of digests in flight, for the comparison. */
function solveSubtle(challenge, bits) {
  var enc = new TextEncoder(), t0 = Date.now(), n = 0, tries = 0, BATCH = 256;
  function zero(buf) {
    var v = new DataView(buf), w = [v.getInt32(0), v.getInt32(4)];
    return enough(w, Math.min(bits, 64)) && bits <= 64;
  }
  function round() {
    var ps = [], ids = [], i;
    for (i = 0; i < BATCH; i++, n++) {
      ids.push(String(n));
      ps.push(crypto.subtle.digest('SHA-256', enc.encode(challenge + ':' + n)));
    }
    return Promise.all(ps).then(function (ds) {
      for (i = 0; i < ds.length; i++) {
        tries++;
        if (zero(ds[i])) return { nonce: ids[i], tries: tries, ms: Date.now() - t0 };
      }
      if ((tries & 0xffff) < BATCH) postMessage({ progress: progress(tries, bits) });
      return round();
    });
  }
  return round();
}

self.onmessage = function (ev) {
  var m = ev.data || {};
  var bits = m.bits | 0;
  if (typeof m.challenge !== 'string' || bits < 0 || bits > 32) {
    postMessage({ error: 'bad request' });
    return;
  }
  if (m.mode === 'subtle') {
    solveSubtle(m.challenge, bits).then(function (r) { postMessage(r); });
  } else {
    postMessage(solveJs(m.challenge, bits));
  }
};
